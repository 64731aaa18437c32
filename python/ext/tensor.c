/* tensor.c — tessera.Tensor, and tensors in and out of Python: numpy
 * arrays without a copy where their memory can be read as it is, DLPack
 * both ways (torch, numpy, any producer on host memory). */
#include "ext.h"

#include "dlpack.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    ts_tensor *t;
    PyObject *keep;           /* keeps borrowed memory alive (an ndarray), or NULL */
    void *dl;                 /* an imported DLPack tensor, given back on dealloc */
    bool dl_versioned;
    bool readonly;            /* its memory came from a read-only source */
} TsxTensor;

static void dl_give_back(void *dl, bool versioned)
{
    if (!dl) return;
    if (versioned) {
        DLManagedTensorVersioned *m = dl;
        if (m->deleter) m->deleter(m);
    } else {
        DLManagedTensor *m = dl;
        if (m->deleter) m->deleter(m);
    }
}

static void tensor_dealloc(TsxTensor *self)
{
    ts_tensor_release(self->t);   /* before the memory it wraps goes */
    dl_give_back(self->dl, self->dl_versioned);
    Py_XDECREF(self->keep);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyObject *tsx_tensor_new(ts_tensor *t, PyObject *keep)
{
    TsxTensor *self = PyObject_New(TsxTensor, &TsxTensor_Type);
    if (!self) {
        ts_tensor_release(t);
        return NULL;
    }
    self->t = t;
    self->keep = keep;
    Py_XINCREF(keep);
    self->dl = NULL;
    self->dl_versioned = false;
    self->readonly = false;
    return (PyObject *)self;
}

ts_tensor *tsx_tensor_get(PyObject *o) { return ((TsxTensor *)o)->t; }

/* ---- numpy in ------------------------------------------------------------------------ */

static ts_tensor *wrap_array(PyArrayObject *a, const char *what)
{
    ts_dtype dt;
    if (!tsx_dtype_from_descr(PyArray_DESCR(a), &dt)) {
        PyObject *r = PyObject_Str((PyObject *)PyArray_DESCR(a));
        tsx_raise_msg(TS_ERR_INVALID_ARG, "%s: numpy dtype %s has no tessera dtype", what,
                      r ? PyUnicode_AsUTF8(r) : "?");
        Py_XDECREF(r);
        return NULL;
    }
    if (PyArray_NDIM(a) > TS_MAX_RANK)
        return (void *)tsx_raise_msg(TS_ERR_INVALID_ARG, "%s: rank %d is over tessera's %d", what, PyArray_NDIM(a),
                                     TS_MAX_RANK);
    int64_t shape[TS_MAX_RANK];
    for (int i = 0; i < PyArray_NDIM(a); i++) shape[i] = (int64_t)PyArray_DIM(a, i);
    ts_tensor *t = NULL;
    ts_err e = {0};
    ts_status st = PyArray_SIZE(a) == 0 ? ts_tensor_new(dt, PyArray_NDIM(a), shape, &t, &e)
                                        : ts_tensor_wrap(dt, PyArray_NDIM(a), shape, PyArray_DATA(a), &t, &e);
    if (st != TS_OK) return (void *)tsx_raise(&e);
    return t;
}

/* a as tessera can read it in place: itself, or a C-contiguous, aligned,
 * native-endian copy. A new reference. */
static PyArrayObject *readable(PyArrayObject *a)
{
    int flags = PyArray_FLAGS(a);
    if ((flags & NPY_ARRAY_C_CONTIGUOUS) && (flags & NPY_ARRAY_ALIGNED) && PyArray_ISNOTSWAPPED(a)) {
        Py_INCREF(a);
        return a;
    }
    PyArray_Descr *native = PyArray_DescrNewByteorder(PyArray_DESCR(a), NPY_NATIVE);
    if (!native) return NULL;
    return (PyArrayObject *)PyArray_FromArray(a, native, NPY_ARRAY_CARRAY_RO | NPY_ARRAY_ENSURECOPY);
}

ts_tensor *tsx_tensor_borrow(PyObject *o, const char *what, PyObject **keep)
{
    *keep = NULL;
    if (PyObject_TypeCheck(o, &TsxTensor_Type)) {
        ts_tensor *t = tsx_tensor_get(o);
        ts_tensor_retain(t);
        Py_INCREF(o);
        *keep = o;
        return t;
    }
    PyArrayObject *a = NULL;
    if (PyArray_Check(o)) {
        a = readable((PyArrayObject *)o);
    } else if (PyCapsule_CheckExact(o) || PyObject_HasAttrString(o, "__dlpack__")) {
        PyObject *to = tsx_from_dlpack(NULL, o);
        if (!to) return NULL;
        ts_tensor *t = tsx_tensor_get(to);
        ts_tensor_retain(t);
        *keep = to;
        return t;
    } else {
        a = (PyArrayObject *)PyArray_FromAny(o, NULL, 0, 0, NPY_ARRAY_CARRAY_RO, NULL);
        if (!a) {
            PyObject *type = PyObject_Str((PyObject *)Py_TYPE(o));
            PyErr_Clear();
            tsx_raise_msg(TS_ERR_INVALID_ARG, "%s: a %s is not an array", what, type ? PyUnicode_AsUTF8(type) : "?");
            Py_XDECREF(type);
            return NULL;
        }
    }
    if (!a) return NULL;
    ts_tensor *t = wrap_array(a, what);
    if (!t) {
        Py_DECREF(a);
        return NULL;
    }
    *keep = (PyObject *)a;
    return t;
}

/* ---- numpy out ------------------------------------------------------------------------ */

PyObject *tsx_tensor_numpy(PyObject *to, bool fall_back_to_tensor)
{
    TsxTensor *self = (TsxTensor *)to;
    ts_dtype dt = ts_tensor_dtype(self->t);
    int npy = tsx_numpy_type(dt);
    if (npy < 0) {
        if (fall_back_to_tensor) {
            Py_INCREF(to);
            return to;
        }
        return tsx_raise_msg(TS_ERR_UNSUPPORTED,
                             "numpy has no %s type: pass the tensor on by DLPack (torch.from_dlpack(t)) instead",
                             ts_dtype_name(dt));
    }
    int rank = ts_tensor_rank(self->t);
    npy_intp dims[TS_MAX_RANK];
    for (int i = 0; i < rank; i++) dims[i] = (npy_intp)ts_tensor_shape(self->t)[i];
    PyArray_Descr *d = PyArray_DescrFromType(npy);
    if (!d) return NULL;
    void *data = ts_tensor_nbytes(self->t) ? ts_tensor_data(self->t) : NULL;
    int flags = self->readonly ? NPY_ARRAY_CARRAY_RO : NPY_ARRAY_CARRAY;
    PyObject *a = PyArray_NewFromDescr(&PyArray_Type, d, rank, dims, NULL, data, data ? flags : 0, NULL);
    if (!a || !data) return a;
    Py_INCREF(to);
    if (PyArray_SetBaseObject((PyArrayObject *)a, to) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* ---- DLPack out ------------------------------------------------------------------------ */

/* One export: the managed tensor first (the deleter gets its address),
 * then what its DLTensor points at. */
typedef struct dl_export {
    union {
        DLManagedTensorVersioned v;
        DLManagedTensor l;
    } m;
    int64_t shape[TS_MAX_RANK], strides[TS_MAX_RANK];
    PyObject *owner;
} dl_export;

static void export_free(dl_export *e)
{
    PyGILState_STATE g = PyGILState_Ensure();   /* consumers may drop it from any thread */
    Py_XDECREF(e->owner);
    PyMem_RawFree(e);
    PyGILState_Release(g);
}

static void deleter_v(DLManagedTensorVersioned *m) { export_free((dl_export *)m); }
static void deleter_l(DLManagedTensor *m) { export_free((dl_export *)m); }

/* A capsule nobody consumed frees its tensor. */
static void capsule_free(PyObject *cap)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (m && m->deleter) m->deleter(m);
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
        if (m && m->deleter) m->deleter(m);
    }
    PyErr_Restore(type, value, tb);
}

static bool dl_type_of(ts_dtype dt, DLDataType *out)
{
    out->lanes = 1;
    out->bits = (uint8_t)(8 * ts_dtype_size(dt));
    switch (dt) {
    case TS_DTYPE_BOOL: out->code = TSX_DL_BOOL; return true;
    case TS_DTYPE_I8: case TS_DTYPE_I16: case TS_DTYPE_I32: case TS_DTYPE_I64: out->code = TSX_DL_INT; return true;
    case TS_DTYPE_U8: case TS_DTYPE_U16: case TS_DTYPE_U32: case TS_DTYPE_U64: out->code = TSX_DL_UINT; return true;
    case TS_DTYPE_F16: case TS_DTYPE_F32: case TS_DTYPE_F64: out->code = TSX_DL_FLOAT; return true;
    case TS_DTYPE_BF16: out->code = TSX_DL_BFLOAT; return true;
    default: return false;
    }
}

static bool ts_type_of(DLDataType d, ts_dtype *out)
{
    static const struct {
        uint8_t code, bits;
        ts_dtype dt;
    } MAP[] = {
        {TSX_DL_BOOL, 8, TS_DTYPE_BOOL},  {TSX_DL_INT, 8, TS_DTYPE_I8},       {TSX_DL_INT, 16, TS_DTYPE_I16},
        {TSX_DL_INT, 32, TS_DTYPE_I32},   {TSX_DL_INT, 64, TS_DTYPE_I64},     {TSX_DL_UINT, 8, TS_DTYPE_U8},
        {TSX_DL_UINT, 16, TS_DTYPE_U16},  {TSX_DL_UINT, 32, TS_DTYPE_U32},    {TSX_DL_UINT, 64, TS_DTYPE_U64},
        {TSX_DL_FLOAT, 16, TS_DTYPE_F16}, {TSX_DL_FLOAT, 32, TS_DTYPE_F32},   {TSX_DL_FLOAT, 64, TS_DTYPE_F64},
        {TSX_DL_BFLOAT, 16, TS_DTYPE_BF16},
    };
    if (d.lanes != 1) return false;
    for (size_t i = 0; i < sizeof MAP / sizeof MAP[0]; i++)
        if (MAP[i].code == d.code && MAP[i].bits == d.bits) {
            *out = MAP[i].dt;
            return true;
        }
    return false;
}

static PyObject *tensor_dlpack(TsxTensor *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO:__dlpack__", kwlist, &stream, &max_version, &device, &copy))
        return NULL;
    (void)stream;   /* host memory: no stream to order against */
    if (device != Py_None) {
        int type = -1, id = -1;
        if (!PyArg_ParseTuple(device, "ii", &type, &id)) return NULL;
        if (type != TSX_DL_CPU) {
            PyErr_SetString(PyExc_BufferError, "a tessera.Tensor lives in host memory (DLPack device (1, 0))");
            return NULL;
        }
    }
    if (copy == Py_True) {
        PyErr_SetString(PyExc_BufferError, "__dlpack__(copy=True): tessera exports its memory, not copies");
        return NULL;
    }
    bool versioned = false;
    if (max_version != Py_None) {
        unsigned major = 0, minor = 0;
        if (!PyArg_ParseTuple(max_version, "II", &major, &minor)) return NULL;
        versioned = major >= 1;
    }
    ts_dtype dt = ts_tensor_dtype(self->t);
    DLDataType dl_type;
    if (!dl_type_of(dt, &dl_type)) {
        PyErr_Format(PyExc_BufferError, "DLPack has no %s type", ts_dtype_name(dt));
        return NULL;
    }
    dl_export *e = PyMem_RawCalloc(1, sizeof *e);
    if (!e) return PyErr_NoMemory();
    int rank = ts_tensor_rank(self->t);
    memcpy(e->shape, ts_tensor_shape(self->t), sizeof(int64_t) * (size_t)rank);
    int64_t stride = 1;
    for (int i = rank - 1; i >= 0; i--) {
        e->strides[i] = stride;
        stride *= e->shape[i] > 0 ? e->shape[i] : 1;
    }
    Py_INCREF(self);
    e->owner = (PyObject *)self;
    DLTensor dl = {ts_tensor_data(self->t), {TSX_DL_CPU, 0}, rank, dl_type, e->shape, e->strides, 0};
    PyObject *cap;
    if (versioned) {
        e->m.v.version.major = TSX_DLPACK_MAJOR;
        e->m.v.version.minor = TSX_DLPACK_MINOR;
        e->m.v.deleter = deleter_v;
        e->m.v.flags = self->readonly ? TSX_DLPACK_FLAG_READ_ONLY : 0;
        e->m.v.dl_tensor = dl;
        cap = PyCapsule_New(&e->m.v, "dltensor_versioned", capsule_free);
    } else {
        e->m.l.deleter = deleter_l;
        e->m.l.dl_tensor = dl;
        cap = PyCapsule_New(&e->m.l, "dltensor", capsule_free);
    }
    if (!cap) export_free(e);
    return cap;
}

static PyObject *tensor_dlpack_device(PyObject *self, PyObject *unused) { return Py_BuildValue("(ii)", TSX_DL_CPU, 0); }

/* ---- DLPack in -------------------------------------------------------------------------- */

/* Copy a strided view (strides in elements, any sign) into dense dst. */
static void gather(char *dst, const char *src, int nd, const int64_t *shape, const int64_t *strides, size_t es)
{
    int64_t idx[TS_MAX_RANK] = {0}, n = 1;
    for (int d = 0; d < nd; d++) n *= shape[d];
    for (int64_t i = 0; i < n; i++) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) off += idx[d] * strides[d];
        memcpy(dst + (size_t)i * es, src + off * (int64_t)es, es);
        for (int d = nd - 1; d >= 0 && ++idx[d] == shape[d]; d--) idx[d] = 0;
    }
}

static bool dense(const DLTensor *dl)
{
    if (!dl->strides) return true;
    int64_t want = 1;
    for (int d = dl->ndim - 1; d >= 0; d--) {
        if (dl->shape[d] != 1 && dl->strides[d] != want) return false;
        want *= dl->shape[d];
    }
    return true;
}

PyObject *tsx_from_dlpack(PyObject *unused, PyObject *x)
{
    if (PyObject_TypeCheck(x, &TsxTensor_Type)) {
        Py_INCREF(x);
        return x;
    }
    PyObject *cap = NULL;
    if (PyCapsule_CheckExact(x)) {
        /* a capsule itself (torch.utils.dlpack.to_dlpack's), consumed as
         * from __dlpack__: the torch backend's way past the Python-level
         * protocol methods on every region call */
        Py_INCREF(x);
        cap = x;
    } else {
        PyObject *dev = PyObject_CallMethod(x, "__dlpack_device__", NULL);
        if (!dev) return NULL;
        int type = 0, id = 0;
        int ok = PyArg_ParseTuple(dev, "ii", &type, &id);
        Py_DECREF(dev);
        if (!ok) return NULL;
        if (type != TSX_DL_CPU && type != TSX_DL_CUDA_HOST)
            return tsx_raise_msg(TS_ERR_INVALID_ARG, "from_dlpack: the tensor is on DLPack device (%d, %d), not in "
                                 "host memory (copy it to the CPU first)", type, id);
        PyObject *kw = Py_BuildValue("{s(ii)}", "max_version", TSX_DLPACK_MAJOR, TSX_DLPACK_MINOR);
        PyObject *meth = PyObject_GetAttrString(x, "__dlpack__");
        PyObject *empty = PyTuple_New(0);
        cap = kw && meth && empty ? PyObject_Call(meth, empty, kw) : NULL;
        if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {   /* a producer before DLPack 1.0 */
            PyErr_Clear();
            cap = PyObject_CallNoArgs(meth);
        }
        Py_XDECREF(kw);
        Py_XDECREF(meth);
        Py_XDECREF(empty);
        if (!cap) return NULL;
    }
    void *m = NULL;
    DLTensor *dl = NULL;
    bool versioned = PyCapsule_IsValid(cap, "dltensor_versioned"), readonly = false;
    if (versioned) {
        DLManagedTensorVersioned *mv = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (mv && mv->version.major > TSX_DLPACK_MAJOR) {
            Py_DECREF(cap);
            return tsx_raise_msg(TS_ERR_UNSUPPORTED, "from_dlpack: DLPack %u.%u is newer than tessera's %d.%d",
                                 mv->version.major, mv->version.minor, TSX_DLPACK_MAJOR, TSX_DLPACK_MINOR);
        }
        m = mv;
        dl = mv ? &mv->dl_tensor : NULL;
        readonly = mv && (mv->flags & TSX_DLPACK_FLAG_READ_ONLY);
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor *ml = PyCapsule_GetPointer(cap, "dltensor");
        m = ml;
        dl = ml ? &ml->dl_tensor : NULL;
    }
    if (!dl) {
        Py_DECREF(cap);
        return tsx_raise_msg(TS_ERR_INVALID_ARG, "from_dlpack: no unused DLPack capsule");
    }
    if (dl->device.device_type != TSX_DL_CPU && dl->device.device_type != TSX_DL_CUDA_HOST) {
        int type = (int)dl->device.device_type, id = (int)dl->device.device_id;
        Py_DECREF(cap);
        return tsx_raise_msg(TS_ERR_INVALID_ARG, "from_dlpack: the tensor is on DLPack device (%d, %d), not in host "
                             "memory (copy it to the CPU first)", type, id);
    }
    /* ours from here: the capsule must not free it too */
    PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor");
    Py_DECREF(cap);
    ts_dtype dt;
    if (!ts_type_of(dl->dtype, &dt) || dl->ndim < 0 || dl->ndim > TS_MAX_RANK) {
        int code = dl->dtype.code, bits = dl->dtype.bits, lanes = dl->dtype.lanes, nd = dl->ndim;
        dl_give_back(m, versioned);
        return tsx_raise_msg(TS_ERR_UNSUPPORTED, "from_dlpack: DLPack type (code %d, %d bits, %d lanes) of rank %d "
                             "has no tessera tensor", code, bits, lanes, nd);
    }
    char *data = (char *)dl->data + dl->byte_offset;
    ts_tensor *t = NULL;
    ts_err e = {0};
    int64_t numel = 1;
    for (int d = 0; d < dl->ndim; d++) numel *= dl->shape[d];
    bool in_place = numel > 0 && dense(dl);
    ts_status st = in_place ? ts_tensor_wrap(dt, dl->ndim, dl->shape, data, &t, &e)
                            : ts_tensor_new(dt, dl->ndim, dl->shape, &t, &e);
    if (st == TS_OK && !in_place && numel > 0)
        gather(ts_tensor_data(t), data, dl->ndim, dl->shape, dl->strides, ts_dtype_size(dt));
    if (st != TS_OK || !in_place) dl_give_back(m, versioned);
    if (st != TS_OK) return tsx_raise(&e);
    TsxTensor *r = (TsxTensor *)tsx_tensor_new(t, NULL);
    if (!r) {
        if (in_place) dl_give_back(m, versioned);
        return NULL;
    }
    if (in_place) {
        r->dl = m;
        r->dl_versioned = versioned;
        r->readonly = readonly;
    }
    return (PyObject *)r;
}

/* ---- the type ------------------------------------------------------------------------------ */

static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"data", NULL};
    PyObject *o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O:Tensor", kwlist, &o)) return NULL;
    PyObject *keep = NULL;
    ts_tensor *t = tsx_tensor_borrow(o, "Tensor", &keep);
    if (!t) return NULL;
    if (keep && PyObject_TypeCheck(keep, &TsxTensor_Type)) {   /* already a tessera.Tensor */
        ts_tensor_release(t);
        return keep;
    }
    PyObject *r = tsx_tensor_new(t, keep);
    if (r && keep && PyArray_Check(keep)) ((TsxTensor *)r)->readonly = !PyArray_ISWRITEABLE((PyArrayObject *)keep);
    Py_XDECREF(keep);
    return r;
}

static PyObject *tensor_shape(TsxTensor *self, void *unused)
{
    int rank = ts_tensor_rank(self->t);
    PyObject *s = PyTuple_New(rank);
    for (int i = 0; s && i < rank; i++) {
        PyObject *d = PyLong_FromLongLong(ts_tensor_shape(self->t)[i]);
        if (!d) Py_CLEAR(s);
        else PyTuple_SET_ITEM(s, i, d);
    }
    return s;
}

static PyObject *tensor_dtype(TsxTensor *self, void *unused)
{
    return PyUnicode_FromString(ts_dtype_name(ts_tensor_dtype(self->t)));
}

static PyObject *tensor_ndim(TsxTensor *self, void *u) { return PyLong_FromLong(ts_tensor_rank(self->t)); }
static PyObject *tensor_size(TsxTensor *self, void *u) { return PyLong_FromLongLong(ts_tensor_numel(self->t)); }
static PyObject *tensor_nbytes(TsxTensor *self, void *u) { return PyLong_FromSize_t(ts_tensor_nbytes(self->t)); }
static PyObject *tensor_ptr(TsxTensor *self, void *u) { return PyLong_FromVoidPtr(ts_tensor_data(self->t)); }

static PyObject *tensor_numpy(PyObject *self, PyObject *unused) { return tsx_tensor_numpy(self, false); }

static PyObject *tensor_array(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:__array__", kwlist, &dtype, &copy)) return NULL;
    PyObject *a = tsx_tensor_numpy(self, false);
    if (!a || (dtype == Py_None && copy != Py_True)) return a;
    PyObject *r = dtype == Py_None ? PyObject_CallMethod(a, "copy", NULL)
                                   : PyObject_CallMethod(a, "astype", "O", dtype);
    Py_DECREF(a);
    return r;
}

static PyObject *tensor_repr(TsxTensor *self)
{
    char buf[256];
    int rank = ts_tensor_rank(self->t), n = 0;
    n += PyOS_snprintf(buf + n, sizeof buf - (size_t)n, "tessera.Tensor(%s[", ts_dtype_name(ts_tensor_dtype(self->t)));
    for (int i = 0; i < rank && n < (int)sizeof buf - 32; i++)
        n += PyOS_snprintf(buf + n, sizeof buf - (size_t)n, "%s%lld", i ? ", " : "",
                           (long long)ts_tensor_shape(self->t)[i]);
    PyOS_snprintf(buf + n, sizeof buf - (size_t)n, "])");
    return PyUnicode_FromString(buf);
}

static PyMethodDef TENSOR_METHODS[] = {
    {"numpy", tensor_numpy, METH_NOARGS,
     "numpy() -> numpy.ndarray\n\nAn array over the tensor's memory, no copy (the array keeps the tensor alive)."},
    {"__array__", (PyCFunction)(void (*)(void))tensor_array, METH_VARARGS | METH_KEYWORDS,
     "__array__(dtype=None, copy=None): numpy.asarray(t) without a copy."},
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) -> PyCapsule\n\n"
     "Export the tensor's memory by DLPack (torch.from_dlpack(t), numpy.from_dlpack(t)), no copy."},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS, "__dlpack_device__() -> (1, 0): host memory."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef TENSOR_GETSET[] = {
    {"shape", (getter)tensor_shape, NULL, "The shape, a tuple of ints.", NULL},
    {"dtype", (getter)tensor_dtype, NULL, "The dtype's name: 'f32', 'bf16', 'i64', ...", NULL},
    {"ndim", (getter)tensor_ndim, NULL, "The rank.", NULL},
    {"size", (getter)tensor_size, NULL, "The number of elements.", NULL},
    {"nbytes", (getter)tensor_nbytes, NULL, "The bytes of its elements.", NULL},
    {"data_ptr", (getter)tensor_ptr, NULL, "The address of its first element (to check for copies).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject TsxTensor_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tessera.Tensor",
    .tp_basicsize = sizeof(TsxTensor),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_repr = (reprfunc)tensor_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Tensor(data)\n--\n\n"
              "A dense, row-major tensor in host memory: what a Session takes and gives. Tensor(x) views a "
              "C-contiguous numpy array (or anything with __dlpack__) without a copy and copies anything else. "
              "Passes on without a copy by numpy.asarray(t), t.numpy() and DLPack (torch.from_dlpack(t)).",
    .tp_methods = TENSOR_METHODS,
    .tp_getset = TENSOR_GETSET,
    .tp_new = tensor_new,
};
