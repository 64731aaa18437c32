/* graph.c — tessera.Graph (IR text in and out, passes, and the builder of
 * tessera.h: inputs, constants, one node per primitive, outputs) and
 * tessera.Value (a value being built, with Python's arithmetic). */
#include "ext.h"

#include <limits.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    ts_graph *g;
    ts_builder *b;            /* made on first use, let go before passes and sessions */
    int sessions;             /* sessions (and readers without the GIL) using it: no edits meanwhile */
    unsigned long gen;        /* bumped by passes: older Values are gone */
    int regions;              /* regions being built (b is the innermost one's builder) */
} TsxGraph;

typedef struct {
    PyObject_HEAD
    TsxGraph *graph;
    ts_value *v;
    unsigned long gen;
} TsxValue;

static void graph_dealloc(TsxGraph *self)
{
    ts_builder_free(self->b);
    ts_graph_free(self->g);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyObject *tsx_graph_new(ts_graph *g)
{
    TsxGraph *self = PyObject_New(TsxGraph, &TsxGraph_Type);
    if (!self) return NULL;
    self->g = g;
    self->b = NULL;
    self->sessions = 0;
    self->gen = 0;
    self->regions = 0;
    return (PyObject *)self;
}

PyObject *tsx_graph_made(ts_status st, ts_graph *g, const ts_err *e)
{
    if (st != TS_OK) return tsx_raise(e);
    PyObject *r = tsx_graph_new(g);
    if (!r) ts_graph_free(g);
    return r;
}

ts_graph *tsx_graph_get(PyObject *o)
{
    if (!PyObject_TypeCheck(o, &TsxGraph_Type)) {
        PyErr_Format(PyExc_TypeError, "expected a tessera.Graph, got %.100s", Py_TYPE(o)->tp_name);
        return NULL;
    }
    TsxGraph *self = (TsxGraph *)o;
    if (self->regions)
        return (void *)tsx_raise_msg(TS_ERR_INVALID_ARG, "the graph is building a region: finish the control "
                                     "node first");
    ts_builder_free(self->b);
    self->b = NULL;
    return self->g;
}

void tsx_graph_freeze(PyObject *o, int delta) { ((TsxGraph *)o)->sessions += delta; }

static bool editable(TsxGraph *self)
{
    if (!self->sessions) return true;
    tsx_raise_msg(TS_ERR_INVALID_ARG, "the graph is in use by %d session%s: close them (or build another graph) "
                  "before changing it", self->sessions, self->sessions == 1 ? "" : "s");
    return false;
}

/* The builder, made on demand. */
static ts_builder *builder(TsxGraph *self)
{
    if (!editable(self)) return NULL;
    if (!self->b) {
        ts_err e = {0};
        if (ts_graph_builder(self->g, &self->b, &e) != TS_OK) return (void *)tsx_raise(&e);
    }
    return self->b;
}

/* After a build call: raise the builder's error, if any, and start over
 * with a fresh builder next time (errors stick in a builder). */
static bool built(TsxGraph *self)
{
    ts_err e = {0};
    if (ts_builder_status(self->b, &e) == TS_OK) return true;
    ts_builder_free(self->b);
    self->b = NULL;
    tsx_raise(&e);
    return false;
}

static PyObject *value_new(TsxGraph *g, ts_value *v)
{
    TsxValue *self = PyObject_New(TsxValue, &TsxValue_Type);
    if (!self) return NULL;
    Py_INCREF(g);
    self->graph = g;
    self->v = v;
    self->gen = g->gen;
    return (PyObject *)self;
}

/* o's ts_value, if it is a current Value of this graph. */
static ts_value *value_of(TsxGraph *self, PyObject *o, const char *what)
{
    if (!PyObject_TypeCheck(o, &TsxValue_Type)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a tessera.Value, got %.100s", what, Py_TYPE(o)->tp_name);
        return NULL;
    }
    TsxValue *v = (TsxValue *)o;
    if (v->graph != self) return (void *)tsx_raise_msg(TS_ERR_INVALID_ARG, "%s: the value is of another graph", what);
    if (v->gen != self->gen)
        return (void *)tsx_raise_msg(TS_ERR_INVALID_ARG, "%s: the value is from before run_passes, which may have "
                                     "removed it", what);
    return v->v;
}

/* ---- construction and text ------------------------------------------------------------- */

static PyObject *graph_tp_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"name", NULL};
    const char *name = "main";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|s:Graph", kwlist, &name)) return NULL;
    ts_graph *g = NULL;
    ts_err e = {0};
    ts_status st = ts_graph_new(name, &g, &e);
    return tsx_graph_made(st, g, &e);
}

static PyObject *graph_parse(PyObject *cls, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"text", "name", NULL};
    const char *text, *name = "<string>";
    Py_ssize_t len;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s#|s:parse", kwlist, &text, &len, &name)) return NULL;
    ts_graph *g = NULL;
    ts_err e = {0};
    ts_status st = ts_graph_parse(text, (size_t)len, name, &g, &e);
    return tsx_graph_made(st, g, &e);
}

static PyObject *graph_load(PyObject *cls, PyObject *args)
{
    PyObject *path = NULL;
    if (!PyArg_ParseTuple(args, "O&:load", PyUnicode_FSConverter, &path)) return NULL;
    ts_graph *g = NULL;
    ts_err e = {0};
    ts_status st = ts_graph_load_file(PyBytes_AS_STRING(path), &g, &e);
    Py_DECREF(path);
    return tsx_graph_made(st, g, &e);
}

/* Call as text_result(st, text, &e) only after the call that set text:
 * C does not order the evaluation of arguments. */
static PyObject *text_result(ts_status st, char *text, const ts_err *e)
{
    if (st != TS_OK) return tsx_raise(e);
    PyObject *r = PyUnicode_FromString(text ? text : "");
    ts_free_string(text);
    return r;
}

static PyObject *graph_str(TsxGraph *self)
{
    char *text = NULL;
    ts_err e = {0};
    ts_status st = ts_graph_to_text(self->g, &text, &e);
    return text_result(st, text, &e);
}

static PyObject *graph_to_dot(TsxGraph *self, PyObject *unused)
{
    char *text = NULL;
    ts_err e = {0};
    ts_status st = ts_graph_to_dot(self->g, &text, &e);
    return text_result(st, text, &e);
}

static PyObject *graph_run_passes(TsxGraph *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"passes", "dump_after", NULL};
    const char *passes = "default", *dump_after = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|sz:run_passes", kwlist, &passes, &dump_after)) return NULL;
    if (!editable(self)) return NULL;
    ts_builder_free(self->b);   /* a builder must not outlive the nodes passes remove */
    self->b = NULL;
    self->gen++;
    ts_err e = {0};
    char *dump = NULL;
    ts_status st = dump_after ? ts_graph_run_passes_dump(self->g, passes, dump_after, &dump, &e)
                              : ts_graph_run_passes(self->g, passes, &e);
    if (!dump_after) {
        if (st != TS_OK) return tsx_raise(&e);
        Py_RETURN_NONE;
    }
    return text_result(st, dump, &e);
}

/* wrt: None, or a sequence of input indices or names -> *n indices (-1: all). */
static bool wrt_indices(TsxGraph *self, PyObject *wrt, int *idx, int cap, int *n)
{
    *n = -1;
    if (wrt == Py_None) return true;
    PyObject *seq = PySequence_Fast(wrt, "wrt: expected a sequence of input indices or names");
    if (!seq) return false;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (len > cap) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "wrt: over %d inputs", cap);
        return false;
    }
    *n = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, i);
        long k = -1;
        if (PyUnicode_Check(o)) {
            const char *name = PyUnicode_AsUTF8(o);
            for (int j = 0; name && j < ts_graph_num_inputs(self->g) && k < 0; j++) {
                const char *in = ts_graph_input_name(self->g, j);
                if (in && strcmp(in, name) == 0) k = j;
            }
            if (name && k < 0) PyErr_Format(PyExc_ValueError, "wrt: the graph has no input '%.100s'", name);
        } else {
            k = PyLong_AsLong(o);
        }
        if (PyErr_Occurred()) {
            Py_DECREF(seq);
            return false;
        }
        idx[(*n)++] = k < INT_MIN || k > INT_MAX ? -1 : (int)k;
    }
    Py_DECREF(seq);
    return true;
}

/* grad and jvp: the transformation in place; earlier Values stay valid
 * (nodes are only added). */
static PyObject *graph_differentiate(TsxGraph *self, PyObject *args, PyObject *kw, bool reverse)
{
    static char *kwlist[] = {"wrt", NULL};
    PyObject *wrt = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, reverse ? "|O:grad" : "|O:jvp", kwlist, &wrt)) return NULL;
    if (!tsx_graph_get((PyObject *)self) || !editable(self)) return NULL;
    int idx[1024], n = -1;
    if (!wrt_indices(self, wrt, idx, 1024, &n)) return NULL;
    ts_err e = {0};
    ts_status st = reverse ? ts_graph_grad(self->g, n, n < 0 ? NULL : idx, &e)
                           : ts_graph_jvp(self->g, n, n < 0 ? NULL : idx, &e);
    if (st != TS_OK) return tsx_raise(&e);
    Py_RETURN_NONE;
}

static PyObject *graph_grad(TsxGraph *self, PyObject *args, PyObject *kw) { return graph_differentiate(self, args, kw, true); }
static PyObject *graph_jvp(TsxGraph *self, PyObject *args, PyObject *kw) { return graph_differentiate(self, args, kw, false); }

static PyObject *graph_describe(TsxGraph *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"what", "target", NULL};
    const char *what = "c", *target = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|sz:describe", kwlist, &what, &target)) return NULL;
    char *text = NULL;
    ts_err e = {0};
    ts_graph *g = tsx_graph_get((PyObject *)self);
    ts_status st;
    self->sessions++;   /* frozen while it is read without the GIL */
    Py_BEGIN_ALLOW_THREADS
    st = ts_graph_describe(g, target, what, &text, &e);
    Py_END_ALLOW_THREADS
    self->sessions--;
    return text_result(st, text, &e);
}

/* ---- building ----------------------------------------------------------------------------- */

static PyObject *graph_input(TsxGraph *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"name", "type", "shape", NULL};
    const char *name;
    PyObject *type, *shape = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "zO|O:input", kwlist, &name, &type, &shape)) return NULL;
    ts_builder *b = builder(self);
    if (!b) return NULL;
    PyObject *text = shape == Py_None ? (Py_INCREF(type), type) : tsx_type_text(type, shape);
    if (!text) return NULL;
    const char *t = PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : NULL;
    if (!t) {
        Py_DECREF(text);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "input(name, type): type is text such as 'f32[batch, 4]', or a dtype "
                            "followed by a shape");
        return NULL;
    }
    ts_value *v = ts_build_input(b, name, t);
    Py_DECREF(text);
    return built(self) ? value_new(self, v) : NULL;
}

static PyObject *graph_const(TsxGraph *self, PyObject *arg)
{
    ts_builder *b = builder(self);
    if (!b) return NULL;
    PyObject *keep = NULL;
    ts_tensor *t = tsx_tensor_borrow(arg, "const", &keep);
    if (!t) return NULL;
    ts_value *v = ts_build_const(b, t);   /* copies borrowed memory */
    ts_tensor_release(t);
    Py_XDECREF(keep);
    return built(self) ? value_new(self, v) : NULL;
}

static PyObject *graph_scalar(TsxGraph *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"value", "dtype", NULL};
    double value;
    PyObject *dtype = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "d|O:scalar", kwlist, &value, &dtype)) return NULL;
    ts_dtype dt = TS_DTYPE_F32;
    if (dtype && !tsx_dtype_arg(dtype, &dt)) return NULL;
    ts_builder *b = builder(self);
    if (!b) return NULL;
    ts_value *v = ts_build_scalar(b, dt, value);
    return built(self) ? value_new(self, v) : NULL;
}

#define MAX_OPERANDS 256
#define MAX_RESULTS 64

/* Operands: Values of this graph, and Python numbers, which become
 * scalars of the first Value's dtype (f32 if there is none). */
static int operands(TsxGraph *self, const char *op, PyObject *args, Py_ssize_t from, ts_value **in)
{
    Py_ssize_t n = PyTuple_GET_SIZE(args) - from;
    if (n > MAX_OPERANDS) return tsx_raise_msg(TS_ERR_INVALID_ARG, "%s: over %d operands", op, MAX_OPERANDS), -1;
    ts_dtype dt = TS_DTYPE_F32;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(args, from + i);
        if (PyObject_TypeCheck(o, &TsxValue_Type)) {
            dt = ts_value_dtype(((TsxValue *)o)->v);
            break;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(args, from + i);
        if (PyLong_Check(o) || PyFloat_Check(o)) {
            double x = PyFloat_AsDouble(o);
            if (x == -1.0 && PyErr_Occurred()) return -1;
            in[i] = ts_build_scalar(self->b, dt, x);
        } else if (!(in[i] = value_of(self, o, op))) {
            return -1;
        }
    }
    return (int)n;
}

#define MAX_REGIONS 4

/* The region of a control node that fn builds: a builder for it becomes
 * the graph's current one, its parameters (the types of in[0..n)) are
 * passed to fn as Values, and what fn returns (a Value or a sequence of
 * them) is what the region yields. *rb is the region's builder, NULL
 * when a build error inside the region already let it go. */
static int build_region(TsxGraph *self, PyObject *fn, int n, ts_value *const *in, ts_builder **rb)
{
    ts_err e = {0};
    if (!PyCallable_Check(fn)) return PyErr_SetString(PyExc_TypeError, "regions: each region is a callable"), -1;
    if (ts_builder_region(self->b, rb, &e) != TS_OK) return tsx_raise(&e), -1;
    ts_builder *outer = self->b;
    self->b = *rb;
    self->regions++;
    PyObject *params = PyTuple_New(n), *res = NULL;
    for (int i = 0; params && i < n; i++) {
        char type[256];
        ts_value_type(in[i], type, sizeof type);
        PyObject *v = value_new(self, ts_build_input(*rb, NULL, type));
        if (!v) Py_CLEAR(params);
        else PyTuple_SET_ITEM(params, i, v);
    }
    if (params && ts_builder_status(*rb, &e) != TS_OK) {
        tsx_raise(&e);
        Py_CLEAR(params);
    }
    if (params) res = PyObject_CallObject(fn, params);
    Py_XDECREF(params);
    if (self->b != *rb) *rb = NULL;   /* an error in fn's build calls let it go */
    int ok = res != NULL && *rb != NULL;
    if (ok) {
        PyObject *seq = PyObject_TypeCheck(res, &TsxValue_Type) ? PyTuple_Pack(1, res)
                                                                  : PySequence_Tuple(res);
        ts_value *outs[MAX_OPERANDS];
        Py_ssize_t k = seq ? PyTuple_GET_SIZE(seq) : 0;
        if (seq && k > MAX_OPERANDS) {
            tsx_raise_msg(TS_ERR_INVALID_ARG, "a region yields over %d values", MAX_OPERANDS);
            ok = 0;
        }
        for (Py_ssize_t i = 0; ok && seq && i < k; i++)
            ok = (outs[i] = value_of(self, PyTuple_GET_ITEM(seq, i), "a region's result")) != NULL;
        ok = ok && seq != NULL;
        if (ok && ts_build_outputs(*rb, (int)k, outs, NULL) != TS_OK) {
            ts_builder_status(*rb, &e);
            tsx_raise(&e);
            ok = 0;
        }
        Py_XDECREF(seq);
    }
    Py_XDECREF(res);
    self->regions--;
    self->b = outer;
    return ok ? 0 : -1;
}

static PyObject *build_op(TsxGraph *self, const char *op, PyObject *args, Py_ssize_t from, PyObject *kw)
{
    if (!builder(self)) return NULL;
    ts_value *in[MAX_OPERANDS], *out[MAX_RESULTS];
    int n_in = operands(self, op, args, from, in);
    if (n_in < 0) return NULL;
    /* regions=(fn, ...): "if" passes its operands after the predicate to
     * each region, "while" all of them (docs/primitives.md) */
    PyObject *fns = kw ? PyDict_GetItemString(kw, "regions") : NULL;
    ts_builder *rb[MAX_REGIONS] = {0};
    Py_ssize_t n_regions = 0;
    int failed = 0;
    if (fns) {
        PyObject *seq = PySequence_Tuple(fns);
        if (!seq) return NULL;
        n_regions = PyTuple_GET_SIZE(seq);
        if (n_regions > MAX_REGIONS) {
            Py_DECREF(seq);
            return tsx_raise_msg(TS_ERR_INVALID_ARG, "%s: over %d regions", op, MAX_REGIONS);
        }
        const int skip = strcmp(op, "if") == 0 && n_in > 0;
        for (Py_ssize_t i = 0; !failed && i < n_regions; i++)
            failed = build_region(self, PyTuple_GET_ITEM(seq, i), n_in - skip, in + skip, &rb[i]) < 0;
        Py_DECREF(seq);
    }
    PyObject *attrs = NULL;
    if (!failed && !fns) {
        attrs = tsx_attrs_text(op, kw);
    } else if (!failed) {   /* the attributes are the other keywords */
        PyObject *rest = PyDict_Copy(kw);
        if (rest && PyDict_DelItemString(rest, "regions") == 0) attrs = tsx_attrs_text(op, rest);
        Py_XDECREF(rest);
    }
    int n_out = 0;
    if (attrs)
        ts_build_node(self->b, op, n_in, in, PyUnicode_AsUTF8(attrs), (int)n_regions, rb, MAX_RESULTS, out, &n_out);
    for (Py_ssize_t i = 0; i < n_regions; i++) ts_builder_free(rb[i]);
    if (!attrs) return NULL;
    Py_DECREF(attrs);
    if (!built(self)) return NULL;
    if (n_out == 0) Py_RETURN_NONE;
    if (n_out == 1) return value_new(self, out[0]);
    PyObject *r = PyTuple_New(n_out);
    for (int i = 0; r && i < n_out; i++) {
        PyObject *v = value_new(self, out[i]);
        if (!v) Py_CLEAR(r);
        else PyTuple_SET_ITEM(r, i, v);
    }
    return r;
}

static PyObject *graph_op(TsxGraph *self, PyObject *args, PyObject *kw)
{
    if (PyTuple_GET_SIZE(args) < 1 || !PyUnicode_Check(PyTuple_GET_ITEM(args, 0))) {
        PyErr_SetString(PyExc_TypeError, "op(name, *operands, **attributes): name is a primitive's name");
        return NULL;
    }
    const char *op = PyUnicode_AsUTF8(PyTuple_GET_ITEM(args, 0));
    return op ? build_op(self, op, args, 1, kw) : NULL;
}

static PyObject *graph_matmul(TsxGraph *self, PyObject *args)
{
    PyObject *x, *y;
    if (!PyArg_ParseTuple(args, "OO:matmul", &x, &y) || !builder(self)) return NULL;
    ts_value *a = value_of(self, x, "matmul"), *b = a ? value_of(self, y, "matmul") : NULL;
    if (!b) return NULL;
    ts_value *v = ts_build_matmul(self->b, a, b);
    return built(self) ? value_new(self, v) : NULL;
}

/* A graph's outputs are not bounded (a training forward returns every
 * activation its backward keeps): the arrays live on the heap. */
static PyObject *graph_output(TsxGraph *self, PyObject *args, PyObject *kw)
{
    PyObject *names = kw ? PyDict_GetItemString(kw, "names") : NULL;
    if (kw && PyDict_Size(kw) != (names ? 1 : 0)) {
        PyErr_SetString(PyExc_TypeError, "output(*values, names=None) takes no other keyword");
        return NULL;
    }
    if (!builder(self)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n > INT_MAX / 2) return tsx_raise_msg(TS_ERR_INVALID_ARG, "output: %zd values", n);
    ts_value **vals = PyMem_Calloc((size_t)n + 1, sizeof *vals);
    const char **cnames = PyMem_Calloc((size_t)n + 1, sizeof *cnames);
    PyObject *seq = NULL, *ret = NULL;
    if (!vals || !cnames) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!(vals[i] = value_of(self, PyTuple_GET_ITEM(args, i), "output"))) goto done;
    if (names && names != Py_None) {
        seq = PySequence_Fast(names, "names must be a sequence of str or None");
        if (!seq) goto done;
        if (PySequence_Fast_GET_SIZE(seq) != n) {
            tsx_raise_msg(TS_ERR_INVALID_ARG, "output: %zd values but %zd names", n, PySequence_Fast_GET_SIZE(seq));
            goto done;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *s = PySequence_Fast_GET_ITEM(seq, i);
            cnames[i] = s == Py_None ? NULL : PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
            if (s != Py_None && !cnames[i]) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "names must be str or None");
                goto done;
            }
        }
    }
    ts_build_outputs(self->b, (int)n, vals, seq ? cnames : NULL);
    if (built(self)) ret = Py_NewRef(Py_None);
done:
    Py_XDECREF(seq);
    PyMem_Free(vals);
    PyMem_Free(cnames);
    return ret;
}

static PyObject *values_list(TsxGraph *self, bool inputs)
{
    int n = inputs ? ts_graph_num_inputs(self->g) : ts_graph_num_outputs(self->g);
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *v = value_new(self, inputs ? ts_graph_input(self->g, i) : ts_graph_output(self->g, i));
        if (!v) Py_CLEAR(l);
        else PyList_SET_ITEM(l, i, v);
    }
    return l;
}

static PyObject *graph_inputs(TsxGraph *self, void *u) { return values_list(self, true); }
/* inline(callee, *values): callee's nodes built here on values. */
static PyObject *graph_inline(TsxGraph *self, PyObject *args)
{
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n < 1 || !PyObject_TypeCheck(PyTuple_GET_ITEM(args, 0), &TsxGraph_Type)) {
        PyErr_SetString(PyExc_TypeError, "inline(callee: Graph, *values)");
        return NULL;
    }
    TsxGraph *callee = (TsxGraph *)PyTuple_GET_ITEM(args, 0);
    if (callee == self) return tsx_raise_msg(TS_ERR_INVALID_ARG, "inline: a graph cannot inline itself");
    if (n - 1 > INT_MAX / 2) return tsx_raise_msg(TS_ERR_INVALID_ARG, "inline: %zd values", n - 1);
    if (!builder(self)) return NULL;
    int cap = ts_graph_num_outputs(callee->g);
    ts_value **vals = PyMem_Calloc((size_t)n + (size_t)cap + 1, sizeof *vals);
    PyObject *ret = NULL;
    if (!vals) return PyErr_NoMemory();
    ts_value **outs = vals + n;
    for (Py_ssize_t i = 1; i < n; i++)
        if (!(vals[i - 1] = value_of(self, PyTuple_GET_ITEM(args, i), "inline"))) goto done;
    int got = 0;
    ts_build_inline(self->b, callee->g, (int)n - 1, vals, cap, outs, &got);
    if (!built(self) || !(ret = PyList_New(got))) goto done;
    for (int k = 0; k < got; k++) {
        PyObject *v = value_new(self, outs[k]);
        if (!v) {
            Py_CLEAR(ret);
            goto done;
        }
        PyList_SET_ITEM(ret, k, v);
    }
done:
    PyMem_Free(vals);
    return ret;
}

static PyObject *graph_outputs(TsxGraph *self, void *u) { return values_list(self, false); }

static PyMethodDef GRAPH_METHODS[] = {
    {"parse", (PyCFunction)(void (*)(void))graph_parse, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Graph.parse(text, name='<string>') -> Graph\n\nA graph from IR text (docs/ir.md); errors say line:col."},
    {"load", (PyCFunction)graph_load, METH_VARARGS | METH_CLASS, "Graph.load(path) -> Graph\n\nA graph from an IR file."},
    {"to_dot", (PyCFunction)graph_to_dot, METH_NOARGS, "to_dot() -> str\n\nThe graph as Graphviz dot text."},
    {"run_passes", (PyCFunction)(void (*)(void))graph_run_passes, METH_VARARGS | METH_KEYWORDS,
     "run_passes(passes='default', dump_after=None) -> None | str\n\n"
     "Run a comma-separated pass list in place. With dump_after (a pass name, or 'all'), return the graph's "
     "text after each run of it. Values built before are no longer usable."},
    {"inline", (PyCFunction)graph_inline, METH_VARARGS,
     "inline(callee, *values) -> list[Value]\n\ncallee's nodes built into this graph on values (exactly its input "
     "types, symbolic dims by name): a call, inlined. Returns its outputs."},
    {"grad", (PyCFunction)(void (*)(void))graph_grad, METH_VARARGS | METH_KEYWORDS,
     "grad(wrt=None) -> None\n\nReverse-mode autodiff in place (docs/autodiff.md): one cotangent input ct_<output> per "
     "floating-point output, one output grad_<input> per input of wrt (indices or names; every floating-point "
     "input when None), after the graph's own."},
    {"jvp", (PyCFunction)(void (*)(void))graph_jvp, METH_VARARGS | METH_KEYWORDS,
     "jvp(wrt=None) -> None\n\nForward-mode autodiff in place: one tangent input tan_<input> per input of wrt, one "
     "output tan_<output> per floating-point output, after the graph's own."},
    {"describe", (PyCFunction)(void (*)(void))graph_describe, METH_VARARGS | METH_KEYWORDS,
     "describe(what='c', target=None) -> str\n\nWhat a target makes of the graph: 'c' (generated source) or "
     "'loops' (fusion and loop IR)."},
    {"input", (PyCFunction)(void (*)(void))graph_input, METH_VARARGS | METH_KEYWORDS,
     "input(name, type, shape=None) -> Value\n\nA new graph input: input('x', 'f32[batch, 4]') or "
     "input('x', 'f32', ('batch', 4)); a name in a shape is a symbolic dim. name may be None."},
    {"const", (PyCFunction)graph_const, METH_O, "const(array) -> Value\n\nA constant holding a copy of array."},
    {"scalar", (PyCFunction)(void (*)(void))graph_scalar, METH_VARARGS | METH_KEYWORDS,
     "scalar(value, dtype='f32') -> Value\n\nA rank-0 constant."},
    {"op", (PyCFunction)(void (*)(void))graph_op, METH_VARARGS | METH_KEYWORDS,
     "op(name, *operands, **attributes) -> Value | tuple[Value, ...]\n\n"
     "A node of primitive `name` (tessera.prims()): op('transpose', x, perm=[1, 0]). Elementwise operations "
     "broadcast; Python numbers become scalars of the first Value's dtype. Shapes are inferred and checked "
     "as the node is built; a bad one raises InvalidArgument."},
    {"matmul", (PyCFunction)graph_matmul, METH_VARARGS, "matmul(a, b) -> Value\n\nnumpy's matmul, over dot."},
    {"output", (PyCFunction)(void (*)(void))graph_output, METH_VARARGS | METH_KEYWORDS,
     "output(*values, names=None) -> None\n\nSet the graph's outputs (replacing any), optionally naming them."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef GRAPH_GETSET[] = {
    {"inputs", (getter)graph_inputs, NULL, "The graph inputs, as Values.", NULL},
    {"outputs", (getter)graph_outputs, NULL, "The graph outputs, as Values.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject TsxGraph_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tessera.Graph",
    .tp_basicsize = sizeof(TsxGraph),
    .tp_dealloc = (destructor)graph_dealloc,
    .tp_str = (reprfunc)graph_str,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Graph(name='main')\n--\n\n"
              "A graph of tessera primitives: built node by node (input, const, op, output), parsed from IR "
              "text (Graph.parse), or loaded from ONNX (tessera.load_onnx). str(g) is its IR text.",
    .tp_methods = GRAPH_METHODS,
    .tp_getset = GRAPH_GETSET,
    .tp_new = graph_tp_new,
};

/* ---- values ---------------------------------------------------------------------------------- */

static void value_dealloc(TsxValue *self)
{
    Py_XDECREF(self->graph);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *value_type(TsxValue *self, void *u)
{
    char buf[512];
    ts_value_type(self->v, buf, sizeof buf);
    return PyUnicode_FromString(buf);
}

static PyObject *value_dtype(TsxValue *self, void *u)
{
    return PyUnicode_FromString(ts_dtype_name(ts_value_dtype(self->v)));
}

/* The dims of the type text, split at top-level commas: ints, or the
 * symbolic dim's text. */
static PyObject *value_shape(TsxValue *self, void *u)
{
    char buf[1024];
    ts_value_type(self->v, buf, sizeof buf);
    char *p = strchr(buf, '[');
    PyObject *l = PyList_New(0);
    if (!p || !l) return l;
    int depth = 0;
    char *start = ++p;
    for (; l && *p; p++) {
        if (*p == '(') depth++;
        if (*p == ')') depth--;
        if ((*p == ',' && depth == 0) || (*p == ']' && depth == 0)) {
            char *s = start, *e = p;
            while (*s == ' ') s++;
            if (e > s) {
                PyObject *text = PyUnicode_FromStringAndSize(s, e - s);
                PyObject *d = text && strspn(s, "0123456789") == (size_t)(e - s) ? PyLong_FromUnicodeObject(text, 10)
                                                                                : (Py_XINCREF(text), text);
                Py_XDECREF(text);
                if (!d || PyList_Append(l, d) < 0) Py_CLEAR(l);
                Py_XDECREF(d);
            }
            start = p + 1;
            if (*p == ']') break;
        }
    }
    if (!l) return NULL;
    PyObject *t = PyList_AsTuple(l);
    Py_DECREF(l);
    return t;
}

static PyObject *value_ndim(TsxValue *self, void *u) { return PyLong_FromLong(ts_value_rank(self->v)); }
static PyObject *value_graph(TsxValue *self, void *u) { return Py_NewRef((PyObject *)self->graph); }

static PyObject *value_repr(TsxValue *self)
{
    char buf[512];
    ts_value_type(self->v, buf, sizeof buf);
    return PyUnicode_FromFormat("tessera.Value(%s)", buf);
}

/* a OP b with either side a Value (the other a Value of the same graph,
 * or a Python number). */
static PyObject *binop(PyObject *a, PyObject *b, const char *op)
{
    PyObject *v = PyObject_TypeCheck(a, &TsxValue_Type) ? a : b;
    if (!PyObject_TypeCheck(a, &TsxValue_Type) && !PyLong_Check(a) && !PyFloat_Check(a)) Py_RETURN_NOTIMPLEMENTED;
    if (!PyObject_TypeCheck(b, &TsxValue_Type) && !PyLong_Check(b) && !PyFloat_Check(b)) Py_RETURN_NOTIMPLEMENTED;
    TsxGraph *g = ((TsxValue *)v)->graph;
    PyObject *args = Py_BuildValue("(sOO)", op, a, b);
    PyObject *r = args ? graph_op(g, args, NULL) : NULL;
    Py_XDECREF(args);
    return r;
}

static PyObject *v_add(PyObject *a, PyObject *b) { return binop(a, b, "add"); }
static PyObject *v_sub(PyObject *a, PyObject *b) { return binop(a, b, "sub"); }
static PyObject *v_mul(PyObject *a, PyObject *b) { return binop(a, b, "mul"); }
static PyObject *v_div(PyObject *a, PyObject *b) { return binop(a, b, "div"); }
static PyObject *v_pow(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
    return binop(a, b, "pow");
}

static PyObject *v_neg(PyObject *a)
{
    PyObject *args = Py_BuildValue("(sO)", "neg", a);
    PyObject *r = args ? graph_op(((TsxValue *)a)->graph, args, NULL) : NULL;
    Py_XDECREF(args);
    return r;
}

static PyObject *v_matmul(PyObject *a, PyObject *b)
{
    if (!PyObject_TypeCheck(a, &TsxValue_Type) || !PyObject_TypeCheck(b, &TsxValue_Type)) Py_RETURN_NOTIMPLEMENTED;
    PyObject *args = Py_BuildValue("(OO)", a, b);
    PyObject *r = args ? graph_matmul(((TsxValue *)a)->graph, args) : NULL;
    Py_XDECREF(args);
    return r;
}

static PyNumberMethods VALUE_NUMBER = {
    .nb_add = v_add,
    .nb_subtract = v_sub,
    .nb_multiply = v_mul,
    .nb_true_divide = v_div,
    .nb_power = v_pow,
    .nb_negative = v_neg,
    .nb_matrix_multiply = v_matmul,
};

static PyGetSetDef VALUE_GETSET[] = {
    {"type", (getter)value_type, NULL, "The type as IR text: 'f32[batch, 4]'.", NULL},
    {"dtype", (getter)value_dtype, NULL, "The dtype's name.", NULL},
    {"shape", (getter)value_shape, NULL, "The dims: ints, and symbolic dims as their text ('batch').", NULL},
    {"ndim", (getter)value_ndim, NULL, "The rank.", NULL},
    {"graph", (getter)value_graph, NULL, "The Graph it belongs to.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject TsxValue_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tessera.Value",
    .tp_basicsize = sizeof(TsxValue),
    .tp_dealloc = (destructor)value_dealloc,
    .tp_repr = (reprfunc)value_repr,
    .tp_as_number = &VALUE_NUMBER,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A value of a Graph being built (made by Graph.input, const, op): its type, and + - * / ** @ "
              "and unary - as graph nodes.",
    .tp_getset = VALUE_GETSET,
};
