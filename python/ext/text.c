/* text.c — Python values spelt as the IR text spells them (docs/ir.md):
 * a type from a dtype and a shape, and a node's attributes from keyword
 * arguments, for the Graph builder (graph.c), which takes the text form. */
#include "ext.h"

#include <string.h>

/* "f32[batch, 4]" from a dtype-like and a shape of ints and names. */
PyObject *tsx_type_text(PyObject *dtype, PyObject *shape)
{
    ts_dtype dt;
    if (!tsx_dtype_arg(dtype, &dt)) return NULL;
    PyObject *seq = PySequence_Fast(shape, "shape must be a sequence of ints and dim names");
    if (!seq) return NULL;
    PyObject *parts = PyList_New(0);
    for (Py_ssize_t i = 0; parts && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *d = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *s = PyLong_Check(d) || PyUnicode_Check(d) ? PyObject_Str(d) : NULL;
        if (!s && !PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "shape entries are ints or dim names, not %.100s", Py_TYPE(d)->tp_name);
        if (!s || PyList_Append(parts, s) < 0) Py_CLEAR(parts);
        Py_XDECREF(s);
    }
    Py_DECREF(seq);
    if (!parts) return NULL;
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *dims = sep ? PyUnicode_Join(sep, parts) : NULL;
    Py_XDECREF(sep);
    Py_DECREF(parts);
    if (!dims) return NULL;
    PyObject *r = PyUnicode_FromFormat("%s[%U]", ts_dtype_name(dt), dims);
    Py_DECREF(dims);
    return r;
}

/* The kind of attribute key of primitive op, from its schema ("perm:ints
 * axis:int=0"); NULL when op or key is unknown (the builder says which). */
static const char *attr_kind(const char *op, const char *key, char *buf, size_t cap)
{
    for (int i = 0; i < ts_prim_count(); i++) {
        ts_prim_desc d;
        if (ts_prim_describe(i, &d, NULL) != TS_OK || strcmp(d.name, op) != 0) continue;
        size_t kl = strlen(key);
        for (const char *s = d.attrs; *s;) {
            const char *end = strchr(s, ' ');
            size_t n = end ? (size_t)(end - s) : strlen(s);
            if (n > kl && strncmp(s, key, kl) == 0 && s[kl] == ':') {
                size_t m = strcspn(s + kl + 1, " =(");
                PyOS_snprintf(buf, cap, "%.*s", (int)m, s + kl + 1);
                return buf;
            }
            s += n;
            while (*s == ' ') s++;
        }
        return NULL;
    }
    return NULL;
}

/* One attribute value in the text form: ints, floats, names (dims,
 * enums, dtypes), quoted strings, lists of those. */
static int append_attr(PyObject *parts, PyObject *v, bool quote)
{
    PyObject *s = NULL;
    if (PyBool_Check(v)) {
        s = PyUnicode_FromString(v == Py_True ? "1" : "0");
    } else if (PyLong_Check(v)) {
        s = PyObject_Str(v);
    } else if (PyFloat_Check(v)) {
        s = PyObject_Repr(v);
    } else if (PyUnicode_Check(v)) {
        if (quote) {
            PyObject *json = PyImport_ImportModule("json");
            s = json ? PyObject_CallMethod(json, "dumps", "O", v) : NULL;
            Py_XDECREF(json);
        } else {
            Py_INCREF(v);
            s = v;
        }
    } else if (PyList_Check(v) || PyTuple_Check(v)) {
        PyObject *inner = PyList_New(0);
        Py_ssize_t n = PySequence_Size(v);
        for (Py_ssize_t i = 0; inner && i < n; i++) {
            PyObject *item = PySequence_GetItem(v, i);
            if (!item || append_attr(inner, item, quote) < 0) Py_CLEAR(inner);
            Py_XDECREF(item);
        }
        PyObject *sep = inner ? PyUnicode_FromString(", ") : NULL;
        PyObject *body = sep ? PyUnicode_Join(sep, inner) : NULL;
        s = body ? PyUnicode_FromFormat("[%U]", body) : NULL;
        Py_XDECREF(sep);
        Py_XDECREF(body);
        Py_XDECREF(inner);
    } else {
        ts_dtype dt;
        if (tsx_dtype_arg(v, &dt)) s = PyUnicode_FromString(ts_dtype_name(dt));
    }
    if (!s) return -1;
    int r = PyList_Append(parts, s);
    Py_DECREF(s);
    return r;
}

/* "key=value, ..." for op from keyword arguments. */
PyObject *tsx_attrs_text(const char *op, PyObject *kw)
{
    if (!kw || !PyDict_Size(kw)) return PyUnicode_FromString("");
    PyObject *items = PyList_New(0), *key, *val;
    Py_ssize_t pos = 0;
    while (items && PyDict_Next(kw, &pos, &key, &val)) {
        char kind[32];
        const char *k = PyUnicode_AsUTF8(key);
        const char *kd = k ? attr_kind(op, k, kind, sizeof kind) : NULL;
        PyObject *one = PyList_New(0);
        if (!one || append_attr(one, val, kd && strcmp(kd, "str") == 0) < 0) {
            Py_XDECREF(one);
            Py_CLEAR(items);
            break;
        }
        PyObject *s = PyUnicode_FromFormat("%U=%U", key, PyList_GET_ITEM(one, 0));
        Py_DECREF(one);
        if (!s || PyList_Append(items, s) < 0) Py_CLEAR(items);
        Py_XDECREF(s);
    }
    if (!items) return NULL;
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *r = sep ? PyUnicode_Join(sep, items) : NULL;
    Py_XDECREF(sep);
    Py_DECREF(items);
    return r;
}
