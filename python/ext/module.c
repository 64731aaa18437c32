/* module.c — tessera._tessera: its exceptions, the dtype correspondence
 * with numpy, and the module-level functions. */
#define TSX_MODULE_MAIN
#include "ext.h"

#include <stdarg.h>

/* ---- errors ------------------------------------------------------------------------ */

static PyObject *Error;
static PyObject *by_status[TS_ERR_INTERNAL + 1];

/* (name, status codes, extra Python base or NULL, doc) */
static const struct {
    const char *name;
    ts_status codes[2];
    const char *doc;
} KINDS[] = {
    {"InvalidArgument", {TS_ERR_INVALID_ARG, TS_ERR_SHAPE},
     "A bad argument: a missing or unknown input, a wrong dtype, rank or size, a bad operand."},
    {"InvalidModel", {TS_ERR_INVALID_MODEL, TS_ERR_PARSE}, "A malformed model file or IR text."},
    {"Unsupported", {TS_ERR_UNSUPPORTED, TS_ERR_UNSUPPORTED}, "Well-formed, but not (yet) handled by tessera."},
    {"OutOfMemory", {TS_ERR_OOM, TS_ERR_OOM}, "An allocation failed or a size overflowed."},
    {"FileError", {TS_ERR_IO, TS_ERR_IO}, "A file could not be read or written."},
    {"ExecutionError", {TS_ERR_RUNTIME, TS_ERR_RUNTIME}, "A failure while running: an index out of range, ..."},
    {"ToolchainError", {TS_ERR_TOOLCHAIN, TS_ERR_TOOLCHAIN}, "The C compiler the cpu target uses is missing or failed."},
    {"InternalError", {TS_ERR_INTERNAL, TS_ERR_INTERNAL}, "A broken invariant of tessera itself (please report it)."},
};

static PyObject *python_base(ts_status code)
{
    switch (code) {
    case TS_ERR_INVALID_ARG:
    case TS_ERR_SHAPE: return PyExc_ValueError;
    case TS_ERR_OOM: return PyExc_MemoryError;
    case TS_ERR_IO: return PyExc_OSError;
    default: return NULL;
    }
}

/* The status codes by their C names, the Error's .status. */
static const char *const STATUS_NAMES[] = {
    "TS_OK", "TS_ERR_INVALID_ARG", "TS_ERR_INVALID_MODEL", "TS_ERR_PARSE", "TS_ERR_SHAPE", "TS_ERR_UNSUPPORTED",
    "TS_ERR_OOM", "TS_ERR_IO", "TS_ERR_RUNTIME", "TS_ERR_TOOLCHAIN", "TS_ERR_INTERNAL",
};

_Static_assert(sizeof STATUS_NAMES / sizeof STATUS_NAMES[0] == TS_ERR_INTERNAL + 1, "a name per status");

PyObject *tsx_raise(const ts_err *e)
{
    ts_status code = e->code > TS_OK && e->code <= TS_ERR_INTERNAL ? e->code : TS_ERR_INTERNAL;
    PyObject *cls = by_status[code] ? by_status[code] : Error;
    PyObject *exc = PyObject_CallFunction(cls, "s", e->msg[0] ? e->msg : ts_status_name(code));
    if (!exc) return NULL;
    PyObject *name = PyUnicode_FromString(STATUS_NAMES[code]);
    if (name) {
        PyObject_SetAttrString(exc, "status", name);
        Py_DECREF(name);
    }
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject *tsx_raise_msg(ts_status code, const char *fmt, ...)
{
    ts_err e = {code, {0}};
    va_list ap;
    va_start(ap, fmt);
    PyOS_vsnprintf(e.msg, sizeof e.msg, fmt, ap);
    va_end(ap);
    return tsx_raise(&e);
}

static int add_errors(PyObject *m)
{
    Error = PyErr_NewExceptionWithDoc("tessera.Error",
                                      "Every failure tessera reports; .status is the C status name "
                                      "(TS_ERR_...) and str() its message.",
                                      NULL, NULL);
    if (!Error || PyModule_AddObjectRef(m, "Error", Error) < 0) return -1;
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++) {
        char full[64];
        PyOS_snprintf(full, sizeof full, "tessera.%s", KINDS[i].name);
        PyObject *extra = python_base(KINDS[i].codes[0]);
        PyObject *bases = extra ? PyTuple_Pack(2, Error, extra) : PyTuple_Pack(1, Error);
        PyObject *cls = bases ? PyErr_NewExceptionWithDoc(full, KINDS[i].doc, bases, NULL) : NULL;
        Py_XDECREF(bases);
        if (!cls || PyModule_AddObjectRef(m, KINDS[i].name, cls) < 0) {
            Py_XDECREF(cls);
            return -1;
        }
        for (int k = 0; k < 2; k++) by_status[KINDS[i].codes[k]] = cls;
        Py_DECREF(cls);   /* the module and by_status hold it */
    }
    return 0;
}

/* ---- dtypes -------------------------------------------------------------------------- */

static const struct {
    ts_dtype dt;
    int npy;
} NPY_OF[] = {
    {TS_DTYPE_BOOL, NPY_BOOL},   {TS_DTYPE_I8, NPY_INT8},       {TS_DTYPE_U8, NPY_UINT8},
    {TS_DTYPE_I16, NPY_INT16},   {TS_DTYPE_U16, NPY_UINT16},    {TS_DTYPE_I32, NPY_INT32},
    {TS_DTYPE_U32, NPY_UINT32},  {TS_DTYPE_I64, NPY_INT64},     {TS_DTYPE_U64, NPY_UINT64},
    {TS_DTYPE_F16, NPY_FLOAT16}, {TS_DTYPE_F32, NPY_FLOAT32},   {TS_DTYPE_F64, NPY_FLOAT64},
};

int tsx_numpy_type(ts_dtype dt)
{
    for (size_t i = 0; i < sizeof NPY_OF / sizeof NPY_OF[0]; i++)
        if (NPY_OF[i].dt == dt) return NPY_OF[i].npy;
    return -1;
}

bool tsx_dtype_from_descr(const PyArray_Descr *d, ts_dtype *dt)
{
    /* by kind and size, so that long and long long (both int64) agree */
    int n = (int)PyDataType_ELSIZE(d);
    for (size_t i = 0; i < sizeof NPY_OF / sizeof NPY_OF[0]; i++) {
        PyArray_Descr *want = PyArray_DescrFromType(NPY_OF[i].npy);
        bool same = want && want->kind == d->kind && PyDataType_ELSIZE(want) == n;
        Py_XDECREF(want);
        if (same) {
            *dt = NPY_OF[i].dt;
            return true;
        }
    }
    return false;
}

bool tsx_dtype_arg(PyObject *o, ts_dtype *dt)
{
    if (PyUnicode_Check(o)) {
        const char *s = PyUnicode_AsUTF8(o);
        if (!s) return false;
        if (ts_dtype_from_name(s, dt) == TS_OK) return true;
    }
    PyArray_Descr *d = NULL;
    if (PyArray_DescrConverter2(o, &d) && d) {
        bool ok = tsx_dtype_from_descr(d, dt);
        Py_DECREF(d);
        if (ok) return true;
    }
    PyErr_Clear();
    PyObject *r = PyObject_Repr(o);
    tsx_raise_msg(TS_ERR_INVALID_ARG, "%s is not a dtype tessera has (f32, \"float32\", numpy.float32, ...)",
                  r ? PyUnicode_AsUTF8(r) : "?");
    Py_XDECREF(r);
    return false;
}

/* ---- module functions ---------------------------------------------------------------- */

static PyObject *m_targets(PyObject *self, PyObject *unused)
{
    PyObject *l = PyList_New(0);
    for (int i = 0; l && ts_target_name(i); i++) {
        PyObject *s = PyUnicode_FromString(ts_target_name(i));
        if (!s || PyList_Append(l, s) < 0) Py_CLEAR(l);
        Py_XDECREF(s);
    }
    return l;
}

static PyObject *m_prims(PyObject *self, PyObject *unused)
{
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < ts_prim_count(); i++) {
        ts_prim_desc d;
        ts_err e = {0};
        if (ts_prim_describe(i, &d, &e) != TS_OK) {
            Py_DECREF(l);
            return tsx_raise(&e);
        }
        PyObject *row = Py_BuildValue("(siiis)", d.name, d.min_in, d.max_in, d.n_out, d.attrs);
        if (!row || PyList_Append(l, row) < 0) Py_CLEAR(l);
        Py_XDECREF(row);
    }
    return l;
}

static PyObject *m_dtypes(PyObject *self, PyObject *unused)
{
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < TS_DTYPE_COUNT; i++) {
        PyObject *s = PyUnicode_FromString(ts_dtype_name((ts_dtype)i));
        if (!s || PyList_Append(l, s) < 0) Py_CLEAR(l);
        Py_XDECREF(s);
    }
    return l;
}

/* load_onnx(path, known=None): known maps input names to values the
 * loader may read (a shape, a trip count); the graph is pinned to them. */
static PyObject *m_load_onnx(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "known", NULL};
    PyObject *path = NULL, *known = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|O:load_onnx", kwlist, PyUnicode_FSConverter, &path, &known))
        return NULL;
    if (known != Py_None && !PyDict_Check(known)) {
        Py_DECREF(path);
        return tsx_raise_msg(TS_ERR_INVALID_ARG, "load_onnx: known must be a dict {input name: array}");
    }
    Py_ssize_t n = known == Py_None ? 0 : PyDict_Size(known);
    const char **names = PyMem_Calloc((size_t)n + 1, sizeof *names);
    ts_tensor **values = PyMem_Calloc((size_t)n + 1, sizeof *values);
    PyObject **keep = PyMem_Calloc((size_t)n + 1, sizeof *keep);
    PyObject *key, *val, *r = NULL;
    Py_ssize_t pos = 0, i = 0;
    bool ok = names && values && keep;
    if (!ok) PyErr_NoMemory();
    while (ok && PyDict_Next(known, &pos, &key, &val)) {
        names[i] = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (!names[i]) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "load_onnx: known's keys are input names (str)");
            ok = false;
            break;
        }
        char what[160];
        PyOS_snprintf(what, sizeof what, "known value '%.100s'", names[i]);
        values[i] = tsx_tensor_borrow(val, what, &keep[i]);
        ok = values[i] != NULL;
        i++;
    }
    if (ok) {
        ts_graph *g = NULL;
        ts_err e = {0};
        ts_status st;
        Py_BEGIN_ALLOW_THREADS
        st = ts_onnx_load(PyBytes_AS_STRING(path), (int)n, names, values, &g, &e);
        Py_END_ALLOW_THREADS
        r = tsx_graph_made(st, g, &e);
    }
    for (Py_ssize_t k = 0; k < i; k++) {
        ts_tensor_release(values[k]);
        Py_XDECREF(keep[k]);
    }
    PyMem_Free(names);
    PyMem_Free(values);
    PyMem_Free(keep);
    Py_DECREF(path);
    return r;
}

static PyObject *m_onnx_info(PyObject *self, PyObject *args)
{
    PyObject *path = NULL;
    if (!PyArg_ParseTuple(args, "O&:onnx_info", PyUnicode_FSConverter, &path)) return NULL;
    char *text = NULL;
    ts_err e = {0};
    ts_status st = ts_onnx_info(PyBytes_AS_STRING(path), &text, &e);
    Py_DECREF(path);
    if (st != TS_OK) return tsx_raise(&e);
    PyObject *r = PyUnicode_FromString(text);
    ts_free_string(text);
    return r;
}

static PyMethodDef METHODS[] = {
    {"targets", m_targets, METH_NOARGS, "targets() -> list[str]\n\nThe targets this build has; the first is the default."},
    {"prims", m_prims, METH_NOARGS,
     "prims() -> list[tuple[str, int, int, int, str]]\n\n"
     "The primitive table: (name, min operands, max operands (-1: any), results (-1: as the node says), "
     "attribute schema such as 'perm:ints')."},
    {"dtypes", m_dtypes, METH_NOARGS, "dtypes() -> list[str]\n\nEvery dtype name, in tessera's order."},
    {"load_onnx", (PyCFunction)(void (*)(void))m_load_onnx, METH_VARARGS | METH_KEYWORDS,
     "load_onnx(path, known=None) -> Graph\n\nRead an ONNX model and assemble it from primitives. known: "
     "{input name: array} for inputs whose values the model needs to build (a Reshape's shape, a Loop's "
     "trip count); the graph is pinned to them (a run with other values is an error) and still takes them "
     "as inputs."},
    {"onnx_info", m_onnx_info, METH_VARARGS,
     "onnx_info(path) -> str\n\nA description of an ONNX model for people: inputs, outputs, opsets, operators."},
    {"from_dlpack", tsx_from_dlpack, METH_O,
     "from_dlpack(x) -> Tensor\n\nA tessera.Tensor over the memory of x (anything with __dlpack__: a torch "
     "tensor, a numpy array), without a copy when x is dense and row-major."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "tessera._tessera",
    "The C core of the tessera package (use `import tessera`).", -1, METHODS,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__tessera(void)
{
    import_array();
    PyObject *m = PyModule_Create(&MODULE);
    if (!m) return NULL;
    PyTypeObject *types[] = {&TsxTensor_Type, &TsxGraph_Type, &TsxValue_Type, &TsxSession_Type};
    const char *names[] = {"Tensor", "Graph", "Value", "Session"};
    for (int i = 0; i < 4; i++)
        if (PyType_Ready(types[i]) < 0 || PyModule_AddObjectRef(m, names[i], (PyObject *)types[i]) < 0) goto fail;
    if (add_errors(m) < 0 || PyModule_AddStringConstant(m, "__version__", TESSERA_VERSION) < 0) goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
