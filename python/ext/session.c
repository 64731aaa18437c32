/* session.c — tessera.Session: a graph compiled for a target and run
 * from Python, onnxruntime-shaped (run(output_names, feeds) -> numpy
 * arrays) and tensor-shaped (run_tensors(inputs) -> tessera.Tensors).
 * Inputs are read in place where their memory allows; the GIL is let go
 * for the run, so several Python threads may run one session at once. */
#include "ext.h"

#include <string.h>
#include <time.h>

typedef struct {
    PyObject_HEAD
    ts_session *s;
    PyObject *graph;          /* the tessera.Graph, frozen while we hold it */
    const ts_graph *g;
    int n_in, n_out;
    PyObject *in_names;       /* tuple of str */
    PyObject *out_names;      /* tuple of str */
    PyObject *out_index;      /* {name: index} */
    int active;               /* runs in flight; counted under the GIL */
    bool closed;
} TsxSession;

/* Free the compiled session; the graph is kept (messages read it) but
 * no longer frozen. */
static void release_session(TsxSession *self)
{
    if (!self->s) return;
    ts_session_free(self->s);
    self->s = NULL;
    tsx_graph_freeze(self->graph, -1);
}

static void session_dealloc(TsxSession *self)
{
    release_session(self);
    Py_XDECREF(self->graph);
    Py_XDECREF(self->in_names);
    Py_XDECREF(self->out_names);
    Py_XDECREF(self->out_index);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *name_or_index(const char *name, const char *kind, int i)
{
    return name ? PyUnicode_FromString(name) : PyUnicode_FromFormat("%s%d", kind, i);
}

static int session_init(TsxSession *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"graph", "target", "threads", "cache_dir", "exact", NULL};
    PyObject *graph;
    const char *target = NULL, *cache_dir = NULL;
    PyObject *threads = Py_None;
    int exact = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|zOz$p:Session", kwlist, &graph, &target, &threads, &cache_dir,
                                     &exact))
        return -1;
    if (self->s || self->closed) {
        tsx_raise_msg(TS_ERR_INVALID_ARG, "a Session is initialised once");
        return -1;
    }
    ts_graph *g = tsx_graph_get(graph);
    if (!g) return -1;
    ts_session_opts o = {0};
    if (threads != Py_None) {
        long n = PyLong_AsLong(threads);
        if (n == -1 && PyErr_Occurred()) return -1;
        if (n <= 0 || n > 4096) {
            tsx_raise_msg(TS_ERR_INVALID_ARG, "threads must be between 1 and 4096, got %ld", n);
            return -1;
        }
        o.threads = (int)n;
    }
    o.cache_dir = cache_dir;
    o.exact = exact;
    ts_session *s = NULL;
    ts_err e = {0};
    ts_status st;
    tsx_graph_freeze(graph, +1);   /* from now: no other thread edits it while it compiles */
    Py_BEGIN_ALLOW_THREADS
    st = ts_session_new_opts(g, target, &o, &s, &e);
    Py_END_ALLOW_THREADS
    if (st != TS_OK) {
        tsx_graph_freeze(graph, -1);
        tsx_raise(&e);
        return -1;
    }
    self->s = s;
    self->g = g;
    Py_INCREF(graph);
    self->graph = graph;
    self->n_in = ts_graph_num_inputs(g);
    self->n_out = ts_graph_num_outputs(g);
    self->in_names = PyTuple_New(self->n_in);
    self->out_names = PyTuple_New(self->n_out);
    self->out_index = PyDict_New();
    if (!self->in_names || !self->out_names || !self->out_index) return -1;
    for (int i = 0; i < self->n_in; i++) {
        PyObject *n = name_or_index(ts_graph_input_name(g, i), "input", i);
        if (!n) return -1;
        PyTuple_SET_ITEM(self->in_names, i, n);
    }
    for (int k = 0; k < self->n_out; k++) {
        PyObject *n = name_or_index(ts_graph_output_name(g, k), "output", k);
        PyObject *idx = n ? PyLong_FromLong(k) : NULL;
        if (!idx) {
            Py_XDECREF(n);
            return -1;
        }
        PyTuple_SET_ITEM(self->out_names, k, n);
        int r = PyDict_SetItem(self->out_index, n, idx);
        Py_DECREF(idx);
        if (r < 0) return -1;
    }
    return 0;
}

static bool open_or_raise(TsxSession *self)
{
    if (self->s) return true;
    tsx_raise_msg(TS_ERR_INVALID_ARG, self->closed ? "the session is closed" : "the session was not initialised");
    return false;
}

/* ---- running ------------------------------------------------------------------------------ */

enum { MAX_IO = 1024 };

typedef struct io {
    ts_tensor *in[MAX_IO];
    PyObject *keep[MAX_IO];
    ts_tensor *out[MAX_IO];
    int n_in, n_out;
} io;

static void io_free(io *x)
{
    for (int i = 0; i < x->n_in; i++) {
        ts_tensor_release(x->in[i]);
        Py_XDECREF(x->keep[i]);
    }
    for (int k = 0; k < x->n_out; k++) ts_tensor_release(x->out[k]);
    x->n_in = x->n_out = 0;
}

/* Bind input i from o. */
static bool bind(TsxSession *self, io *x, int i, PyObject *o)
{
    char what[160];
    PyOS_snprintf(what, sizeof what, "input '%.100s'", PyUnicode_AsUTF8(PyTuple_GET_ITEM(self->in_names, i)));
    x->in[i] = tsx_tensor_borrow(o, what, &x->keep[i]);
    x->n_in = i + 1;
    return x->in[i] != NULL;
}

/* The run itself, without the GIL; the session outlives it even if
 * another thread closes it meanwhile. */
static bool run(TsxSession *self, io *x)
{
    ts_err e = {0};
    ts_status st;
    ts_session *s = self->s;
    self->active++;
    Py_BEGIN_ALLOW_THREADS
    st = ts_session_run(s, self->n_in, x->in, self->n_out, x->out, &e);
    Py_END_ALLOW_THREADS
    self->active--;
    if (self->closed && !self->active) release_session(self);
    x->n_out = st == TS_OK ? self->n_out : 0;
    if (st == TS_OK) return true;
    int bad = -1;
    ts_err why = {0};
    if ((st == TS_ERR_SHAPE || st == TS_ERR_INVALID_ARG) &&
        ts_graph_check_inputs(self->g, self->n_in, x->in, &bad, &why) != TS_OK && bad >= 0) {
        tsx_raise_msg(why.code, "input '%s': %s", PyUnicode_AsUTF8(PyTuple_GET_ITEM(self->in_names, bad)), why.msg);
        return false;
    }
    tsx_raise(&e);
    return false;
}

static PyObject *names_list(PyObject *names)
{
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *r = sep ? PyUnicode_Join(sep, names) : NULL;
    Py_XDECREF(sep);
    return r;
}

/* Which outputs: all for None, else their indexes by name. */
static int pick_outputs(TsxSession *self, PyObject *names, int *pick)
{
    if (names == Py_None) {
        for (int k = 0; k < self->n_out; k++) pick[k] = k;
        return self->n_out;
    }
    PyObject *seq = PySequence_Fast(names, "output_names must be a list of str or None");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_IO) {
        Py_DECREF(seq);
        return tsx_raise_msg(TS_ERR_INVALID_ARG, "over %d output names", MAX_IO), -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *idx = PyDict_GetItemWithError(self->out_index, PySequence_Fast_GET_ITEM(seq, i));
        if (!idx) {
            if (!PyErr_Occurred()) {
                PyObject *all = names_list(self->out_names);
                PyObject *r = PyObject_Repr(PySequence_Fast_GET_ITEM(seq, i));
                tsx_raise_msg(TS_ERR_INVALID_ARG, "no output named %s (the outputs: %s)", r ? PyUnicode_AsUTF8(r) : "?",
                              all ? PyUnicode_AsUTF8(all) : "?");
                Py_XDECREF(all);
                Py_XDECREF(r);
            }
            Py_DECREF(seq);
            return -1;
        }
        pick[i] = (int)PyLong_AsLong(idx);
    }
    Py_DECREF(seq);
    return (int)n;
}

static PyObject *unknown_feed(TsxSession *self, PyObject *feed)
{
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    while (PyDict_Next(feed, &pos, &key, &val)) {
        int found = PySequence_Contains(self->in_names, key);
        if (found < 0) return NULL;
        if (!found) {
            PyObject *all = names_list(self->in_names);
            PyObject *r = PyObject_Repr(key);
            tsx_raise_msg(TS_ERR_INVALID_ARG, "no input named %s (the inputs: %s)", r ? PyUnicode_AsUTF8(r) : "?",
                          all ? PyUnicode_AsUTF8(all) : "?");
            Py_XDECREF(all);
            Py_XDECREF(r);
            return NULL;
        }
    }
    return NULL;
}

static PyObject *session_run(TsxSession *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"output_names", "input_feed", "run_options", NULL};
    PyObject *names, *feed, *options = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:run", kwlist, &names, &feed, &options)) return NULL;
    if (!open_or_raise(self)) return NULL;
    if (!PyDict_Check(feed)) return tsx_raise_msg(TS_ERR_INVALID_ARG, "input_feed must be a dict {name: array}");
    if (self->n_in > MAX_IO || self->n_out > MAX_IO)
        return tsx_raise_msg(TS_ERR_UNSUPPORTED, "over %d inputs or outputs", MAX_IO);
    int pick[MAX_IO];
    int n_pick = pick_outputs(self, names, pick);
    if (n_pick < 0) return NULL;
    if (PyDict_GET_SIZE(feed) > self->n_in) return unknown_feed(self, feed);
    io x;
    x.n_in = x.n_out = 0;
    for (int i = 0; i < self->n_in; i++) {
        PyObject *name = PyTuple_GET_ITEM(self->in_names, i);
        PyObject *o = PyDict_GetItemWithError(feed, name);
        if (!o) {
            if (!PyErr_Occurred()) {
                PyObject *all = names_list(self->in_names);
                tsx_raise_msg(TS_ERR_INVALID_ARG, "missing input '%s' (the inputs: %s)", PyUnicode_AsUTF8(name),
                              all ? PyUnicode_AsUTF8(all) : "?");
                Py_XDECREF(all);
            }
            io_free(&x);
            return NULL;
        }
        if (!bind(self, &x, i, o)) {
            io_free(&x);
            return NULL;
        }
    }
    if (!run(self, &x)) {
        io_free(&x);
        return NULL;
    }
    PyObject *res = PyList_New(n_pick);
    for (int j = 0; res && j < n_pick; j++) {
        ts_tensor_retain(x.out[pick[j]]);
        PyObject *to = tsx_tensor_new(x.out[pick[j]], NULL);
        PyObject *a = to ? tsx_tensor_numpy(to, true) : NULL;
        Py_XDECREF(to);
        if (!a) Py_CLEAR(res);
        else PyList_SET_ITEM(res, j, a);
    }
    io_free(&x);
    return res;
}

static bool bind_all(TsxSession *self, io *x, PyObject *inputs)
{
    PyObject *seq = PySequence_Fast(inputs, "inputs must be a sequence of arrays or tensors");
    if (!seq) return false;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    bool ok = n == self->n_in && n <= MAX_IO;
    if (!ok) tsx_raise_msg(TS_ERR_INVALID_ARG, "%zd inputs given, the graph takes %d", n, self->n_in);
    for (Py_ssize_t i = 0; ok && i < n; i++) ok = bind(self, x, (int)i, PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    return ok;
}

static PyObject *session_run_tensors(TsxSession *self, PyObject *inputs)
{
    if (!open_or_raise(self)) return NULL;
    io x;
    x.n_in = x.n_out = 0;
    if (!bind_all(self, &x, inputs) || !run(self, &x)) {
        io_free(&x);
        return NULL;
    }
    PyObject *res = PyList_New(self->n_out);
    for (int k = 0; res && k < self->n_out; k++) {
        PyObject *to = tsx_tensor_new(x.out[k], NULL);   /* takes the reference */
        x.out[k] = NULL;
        if (!to) Py_CLEAR(res);
        else PyList_SET_ITEM(res, k, to);
    }
    io_free(&x);
    return res;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The C API's own cost, for bench/python_overhead.py: `runs` calls of
 * ts_session_run on tensors bound once, as a C program makes them (its
 * outputs released each time), timed one by one in C. */
static PyObject *session_time_c(TsxSession *self, PyObject *args)
{
    PyObject *inputs;
    int runs;
    if (!PyArg_ParseTuple(args, "Oi:_time_c_api", &inputs, &runs) || !open_or_raise(self)) return NULL;
    io x;
    x.n_in = x.n_out = 0;
    if (runs <= 0 || runs > 10000000) return tsx_raise_msg(TS_ERR_INVALID_ARG, "runs must be in 1..10^7");
    if (!bind_all(self, &x, inputs)) {
        io_free(&x);
        return NULL;
    }
    double *t = PyMem_RawMalloc(sizeof *t * (size_t)runs);
    if (!t) {
        io_free(&x);
        return PyErr_NoMemory();
    }
    ts_err e = {0};
    ts_status st = TS_OK;
    self->active++;
    Py_BEGIN_ALLOW_THREADS
    for (int r = 0; r < runs && st == TS_OK; r++) {
        double t0 = now_s();
        st = ts_session_run(self->s, self->n_in, x.in, self->n_out, x.out, &e);
        for (int k = 0; st == TS_OK && k < self->n_out; k++) {
            ts_tensor_release(x.out[k]);
            x.out[k] = NULL;
        }
        t[r] = now_s() - t0;
    }
    Py_END_ALLOW_THREADS
    self->active--;
    if (self->closed && !self->active) release_session(self);
    io_free(&x);
    PyObject *l = st == TS_OK ? PyList_New(runs) : tsx_raise(&e);
    for (int r = 0; l && r < runs; r++) {
        PyObject *f = PyFloat_FromDouble(t[r]);
        if (!f) Py_CLEAR(l);
        else PyList_SET_ITEM(l, r, f);
    }
    PyMem_RawFree(t);
    return l;
}

/* ---- what it is ----------------------------------------------------------------------------- */

static PyObject *signature(TsxSession *self, bool inputs)
{
    int n = inputs ? self->n_in : self->n_out;
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        char type[512];
        ts_value_type(inputs ? ts_graph_input(self->g, i) : ts_graph_output(self->g, i), type, sizeof type);
        PyObject *row = Py_BuildValue("(Os)", PyTuple_GET_ITEM(inputs ? self->in_names : self->out_names, i), type);
        if (!row) Py_CLEAR(l);
        else PyList_SET_ITEM(l, i, row);
    }
    return l;
}

static PyObject *session_signature(TsxSession *self, PyObject *unused)
{
    if (!self->g) return tsx_raise_msg(TS_ERR_INVALID_ARG, "the session was not initialised");
    PyObject *i = signature(self, true), *o = i ? signature(self, false) : NULL;
    PyObject *r = o ? PyTuple_Pack(2, i, o) : NULL;
    Py_XDECREF(i);
    Py_XDECREF(o);
    return r;
}

static PyObject *session_close(TsxSession *self, PyObject *unused)
{
    self->closed = true;
    if (!self->active) release_session(self);   /* else the last run in flight does */
    Py_RETURN_NONE;
}

static PyObject *session_enter(PyObject *self, PyObject *unused) { return Py_NewRef(self); }
static PyObject *session_exit(TsxSession *self, PyObject *args) { return session_close(self, NULL); }

static PyObject *session_target(TsxSession *self, void *u)
{
    if (!open_or_raise(self)) return NULL;
    return PyUnicode_FromString(ts_session_target(self->s));
}

static PyObject *session_compile_info(TsxSession *self, void *u)
{
    if (!open_or_raise(self)) return NULL;
    double ms;
    int hit, kernels, fallbacks;
    ts_session_compile_info(self->s, &ms, &hit, &kernels, &fallbacks);
    return Py_BuildValue("{s:d,s:O,s:i,s:i}", "compile_ms", ms, "cache_hit",
                         hit < 0 ? Py_None : hit ? Py_True : Py_False, "kernels", kernels, "fallbacks", fallbacks);
}

static PyObject *session_peak(TsxSession *self, void *u)
{
    if (!open_or_raise(self)) return NULL;
    return PyLong_FromLongLong(ts_session_peak_bytes(self->s));
}

static PyObject *session_graph(TsxSession *self, void *u)
{
    if (!self->graph) return tsx_raise_msg(TS_ERR_INVALID_ARG, "the session was not initialised");
    return Py_NewRef(self->graph);
}

static PyObject *session_profile(TsxSession *self, PyObject *arg)
{
    int enable = PyObject_IsTrue(arg);
    if (enable < 0 || !open_or_raise(self)) return NULL;
    ts_err e = {0};
    if (ts_session_profile(self->s, enable, &e) != TS_OK) return tsx_raise(&e);
    Py_RETURN_NONE;
}

static PyObject *session_write_profile(TsxSession *self, PyObject *args)
{
    PyObject *path = NULL;
    if (!PyArg_ParseTuple(args, "O&:write_profile", PyUnicode_FSConverter, &path)) return NULL;
    if (!open_or_raise(self)) {
        Py_DECREF(path);
        return NULL;
    }
    ts_err e = {0};
    ts_status st = ts_session_write_profile(self->s, PyBytes_AS_STRING(path), &e);
    Py_DECREF(path);
    if (st != TS_OK) return tsx_raise(&e);
    Py_RETURN_NONE;
}

static PyMethodDef SESSION_METHODS[] = {
    {"run", (PyCFunction)(void (*)(void))session_run, METH_VARARGS | METH_KEYWORDS,
     "run(output_names, input_feed, run_options=None) -> list[numpy.ndarray]\n\n"
     "As onnxruntime's: input_feed maps every input's name to an array (numpy, torch, anything array-like); "
     "output_names picks outputs by name, None for all. Arrays are read in place when C-contiguous, aligned "
     "and of the input's dtype; outputs come back without a copy (a dtype numpy lacks, bf16, as a "
     "tessera.Tensor). The GIL is released while it runs."},
    {"run_tensors", (PyCFunction)session_run_tensors, METH_O,
     "run_tensors(inputs) -> list[Tensor]\n\nInputs in graph order (arrays, tessera.Tensors, anything with "
     "__dlpack__); every output as a tessera.Tensor, to pass on by DLPack without a copy."},
    {"_time_c_api", (PyCFunction)session_time_c, METH_VARARGS,
     "_time_c_api(inputs, runs) -> list[float]\n\nSeconds of each of `runs` ts_session_run calls made from C "
     "(bench/python_overhead.py)."},
    {"_signature", (PyCFunction)session_signature, METH_NOARGS,
     "_signature() -> (inputs, outputs): lists of (name, type text)."},
    {"profile", (PyCFunction)session_profile, METH_O,
     "profile(enable) -> None\n\nRecord each kernel's time in later runs (cpu target)."},
    {"write_profile", (PyCFunction)session_write_profile, METH_VARARGS,
     "write_profile(path) -> None\n\nWrite the recorded times as a Chrome trace (chrome://tracing, Perfetto)."},
    {"close", (PyCFunction)session_close, METH_NOARGS,
     "close() -> None\n\nFree the compiled code now (runs in flight finish first); later calls raise."},
    {"__enter__", session_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)session_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef SESSION_GETSET[] = {
    {"target", (getter)session_target, NULL, "The target it runs on: 'cpu' or 'interp'.", NULL},
    {"compile_info", (getter)session_compile_info, NULL,
     "{'compile_ms', 'cache_hit' (None: nothing compiled), 'kernels', 'fallbacks'}", NULL},
    {"peak_bytes", (getter)session_peak, NULL, "Bytes of intermediate values alive at once in the last run.", NULL},
    {"graph", (getter)session_graph, NULL, "The Graph it runs (frozen while the session is open).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject TsxSession_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tessera.Session",
    .tp_basicsize = sizeof(TsxSession),
    .tp_dealloc = (destructor)session_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Session(graph, target=None, threads=None, cache_dir=None, *, exact=False)\n--\n\n"
              "A Graph compiled for a target: 'cpu' (the default: generated C, cached on disk) or 'interp' "
              "(the reference interpreter). threads: per run on cpu (default: all cores). exact: no "
              "algorithm less accurate than direct summation (no Winograd convolutions; for training). "
              "One session may be run from several threads at once.",
    .tp_methods = SESSION_METHODS,
    .tp_getset = SESSION_GETSET,
    .tp_init = (initproc)session_init,
    .tp_new = PyType_GenericNew,
};
