/* ext.h — what the files of the CPython extension tessera._tessera share.
 * The extension is a thin layer over the public C API (include/tessera.h)
 * and nothing else: module.c (errors, dtypes, module functions), tensor.c
 * (tessera.Tensor, numpy and DLPack in and out), graph.c (tessera.Graph
 * and tessera.Value over the builder), session.c (tessera.Session). */
#ifndef TSX_EXT_H
#define TSX_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tessera_ARRAY_API
#ifndef TSX_MODULE_MAIN
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "tessera.h"

/* ---- errors (module.c) ---------------------------------------------------
 * tessera.Error and one subclass per kind of failure a caller would catch
 * apart; each instance carries .status, the C status name. */
PyObject *tsx_raise(const ts_err *e);
PyObject *tsx_raise_msg(ts_status code, const char *fmt, ...);

/* ---- dtypes (module.c) ------------------------------------------------------ */

/* numpy's type number for dt, or -1 where numpy has none (bf16, f8, ...). */
int tsx_numpy_type(ts_dtype dt);
/* dt for a numpy dtype; false (nothing raised) where tessera has none. */
bool tsx_dtype_from_descr(const PyArray_Descr *d, ts_dtype *dt);
/* dt for a dtype-like argument: "f32", "float32", np.float32, np.dtype;
 * false with an exception set otherwise. */
bool tsx_dtype_arg(PyObject *o, ts_dtype *dt);

/* ---- tensors (tensor.c) ------------------------------------------------------ */

extern PyTypeObject TsxTensor_Type;
/* A tessera.Tensor owning one reference to t (stolen); keep (may be NULL)
 * is what keeps t's memory alive when t borrows it. */
PyObject *tsx_tensor_new(ts_tensor *t, PyObject *keep);
ts_tensor *tsx_tensor_get(PyObject *o);   /* borrowed; o must be a Tensor */
/* A tensor over o's memory for the length of a call: a tessera.Tensor, a
 * numpy array (no copy when C-contiguous, aligned and native-endian; a
 * copy otherwise), anything with __dlpack__ (torch), or an array-like
 * (converted by numpy). *keep receives a new reference that keeps the
 * memory alive; release the tensor and drop *keep afterwards. what names
 * the argument in messages. NULL with an exception set on failure. */
ts_tensor *tsx_tensor_borrow(PyObject *o, const char *what, PyObject **keep);
/* An ndarray over tensor object to's memory (its base keeps it alive),
 * or to itself when numpy has no type for its dtype. */
PyObject *tsx_tensor_numpy(PyObject *to, bool fall_back_to_tensor);
/* tessera.from_dlpack(x) */
PyObject *tsx_from_dlpack(PyObject *self, PyObject *x);

/* ---- graphs (graph.c) ---------------------------------------------------------- */

extern PyTypeObject TsxGraph_Type;
extern PyTypeObject TsxValue_Type;
/* A tessera.Graph owning g. */
PyObject *tsx_graph_new(ts_graph *g);
/* The Graph for a call that returned st and made g (its error if st is
 * not TS_OK); g is freed if the Graph cannot be made. */
PyObject *tsx_graph_made(ts_status st, ts_graph *g, const ts_err *e);
/* The graph of a tessera.Graph, ready to compile or run (its builder let
 * go); NULL with an exception set if o is not a Graph. */
ts_graph *tsx_graph_get(PyObject *o);
/* A session holds its graph frozen: building on it or running passes
 * would change what the session runs. */
void tsx_graph_freeze(PyObject *o, int delta);

/* ---- IR text from Python values (text.c) ------------------------------------------- */

/* "f32[batch, 4]" from a dtype-like and a shape of ints and names. */
PyObject *tsx_type_text(PyObject *dtype, PyObject *shape);
/* "key=value, ..." for primitive op from keyword arguments. */
PyObject *tsx_attrs_text(const char *op, PyObject *kw);

/* ---- sessions (session.c) --------------------------------------------------------- */

extern PyTypeObject TsxSession_Type;

#endif
