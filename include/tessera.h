/*
 * tessera.h — the one public header of tessera, an AI compiler in C.
 *
 * A short tour:
 *
 *     ts_err err = {0};
 *     ts_graph *g = NULL;
 *     if (ts_graph_load_file("mlp.ir", &g, &err) != TS_OK) {
 *         fprintf(stderr, "%s\n", err.msg);
 *         return 1;
 *     }
 *     ts_session *s = NULL;
 *     ts_session_new(g, NULL, &s, &err);          // compiled for this CPU; "interp": the reference
 *
 *     ts_tensor *x = NULL;                        // wrap caller memory, no copy
 *     int64_t shape[2] = {1, 4};
 *     ts_tensor_wrap(TS_DTYPE_F32, 2, shape, my_floats, &x, &err);
 *
 *     ts_tensor *y = NULL;
 *     ts_session_run(s, 1, &x, 1, &y, &err);     // inputs/outputs in graph order
 *     const float *out = ts_tensor_data(y);
 *
 *     ts_tensor_release(y); ts_tensor_release(x);
 *     ts_session_free(s); ts_graph_free(g);
 *
 * Every function that can fail returns a ts_status and, when it is not
 * TS_OK, writes a one-line message into the caller's ts_err (which may be
 * NULL when the caller does not want the message). No function aborts or
 * exits on bad input.
 *
 * Handles are opaque and come in create/free pairs. Tensors are
 * reference-counted: every function that hands out a tensor hands out one
 * reference, which the caller drops with ts_tensor_release.
 */
#ifndef TESSERA_H
#define TESSERA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TESSERA_VERSION "0.1.0"

/* The largest tensor rank tessera handles; deeper tensors are a clear error. */
#define TS_MAX_RANK 16

typedef enum ts_status {
    TS_OK = 0,
    TS_ERR_INVALID_ARG,     /* a caller passed something that cannot be right */
    TS_ERR_INVALID_MODEL,   /* a model/IR file that is malformed */
    TS_ERR_PARSE,           /* IR text that does not parse (message has line:col) */
    TS_ERR_SHAPE,           /* shapes or dtypes that do not fit an op */
    TS_ERR_UNSUPPORTED,     /* well-formed but not (yet) handled */
    TS_ERR_OOM,             /* an allocation failed, or a size overflowed */
    TS_ERR_IO,              /* a file could not be read or written */
    TS_ERR_RUNTIME,         /* a run-time failure: index out of range, ... */
    TS_ERR_TOOLCHAIN,       /* a missing or failing external compiler */
    TS_ERR_INTERNAL         /* a broken invariant of tessera itself */
} ts_status;

/* Element types. The order is part of the text form and the ABI. */
typedef enum ts_dtype {
    TS_DTYPE_BOOL = 0,
    TS_DTYPE_I8, TS_DTYPE_U8, TS_DTYPE_I16, TS_DTYPE_U16,
    TS_DTYPE_I32, TS_DTYPE_U32, TS_DTYPE_I64, TS_DTYPE_U64,
    TS_DTYPE_F16, TS_DTYPE_BF16, TS_DTYPE_F32, TS_DTYPE_F64,
    /* Storage types: kept, moved and converted, never computed on (cast to
     * a compute type first). One element per byte in memory, sub-byte
     * types sign- or zero-extended; packed only in files (docs/primitives.md). */
    TS_DTYPE_F8E4M3FN, TS_DTYPE_F8E4M3FNUZ, TS_DTYPE_F8E5M2, TS_DTYPE_F8E5M2FNUZ, TS_DTYPE_F8E8M0,
    TS_DTYPE_F4E2M1, TS_DTYPE_I4, TS_DTYPE_U4, TS_DTYPE_I2, TS_DTYPE_U2,
    TS_DTYPE_COUNT
} ts_dtype;

/* The error record. Plain C, owned by the caller, usually on its stack. */
typedef struct ts_err {
    ts_status code;
    char msg[512];
} ts_err;

typedef struct ts_graph ts_graph;
typedef struct ts_tensor ts_tensor;
typedef struct ts_session ts_session;
typedef struct ts_value ts_value;       /* a value of a graph (building graphs, below) */

/* ---- status -------------------------------------------------------- */

const char *ts_status_name(ts_status s);

/* ---- memory hook ----------------------------------------------------
 * All host allocation goes through one function: alloc(ud, NULL, n) allocates,
 * alloc(ud, p, n) reallocates, alloc(ud, p, 0) frees and returns NULL.
 * Returning NULL for n > 0 is an allocation failure that tessera reports as
 * TS_ERR_OOM. Passing NULL restores the default (the C library's). Set it
 * before creating any object; objects must be freed under the hook that
 * allocated them. */
typedef void *(*ts_alloc_fn)(void *ud, void *ptr, size_t nsize);
void ts_set_allocator(ts_alloc_fn fn, void *ud);

/* ---- dtypes --------------------------------------------------------- */

const char *ts_dtype_name(ts_dtype dt);        /* "f32"; NULL if out of range */
size_t ts_dtype_size(ts_dtype dt);             /* bytes per element; 0 if invalid */
ts_status ts_dtype_from_name(const char *name, ts_dtype *out);

/* ---- tensors -------------------------------------------------------- */

/* A new tensor that owns zeroed memory, starting on a 64-byte boundary. */
ts_status ts_tensor_new(ts_dtype dt, int rank, const int64_t *shape,
                        ts_tensor **out, ts_err *err);
/* A tensor over caller memory (dense, row-major). tessera never frees data;
 * it must outlive the tensor. Any alignment of the element type works;
 * data on a 64-byte boundary is faster to read and write with vectors (a
 * softmax over misaligned input and output ran 40% slower on Zen 4). */
ts_status ts_tensor_wrap(ts_dtype dt, int rank, const int64_t *shape,
                         void *data, ts_tensor **out, ts_err *err);
void ts_tensor_retain(ts_tensor *t);
void ts_tensor_release(ts_tensor *t);          /* NULL is fine */
ts_dtype ts_tensor_dtype(const ts_tensor *t);
int ts_tensor_rank(const ts_tensor *t);
const int64_t *ts_tensor_shape(const ts_tensor *t);
int64_t ts_tensor_numel(const ts_tensor *t);
void *ts_tensor_data(const ts_tensor *t);
size_t ts_tensor_nbytes(const ts_tensor *t);
/* Element i of t (row-major, 0 <= i < numel) converted as C converts
 * (bool 0/1, f16 and bf16 widened); 0 (NaN for f64) when t is NULL or i
 * out of range. ts_tensor_set_f64 stores v converted to t's dtype (bf16
 * and f16 rounded to nearest even); out of range does nothing. */
double ts_tensor_get_f64(const ts_tensor *t, int64_t i);
int64_t ts_tensor_get_i64(const ts_tensor *t, int64_t i);
uint64_t ts_tensor_get_u64(const ts_tensor *t, int64_t i);
void ts_tensor_set_f64(ts_tensor *t, int64_t i, double v);
/* Whether dt is a floating-point format (f16, bf16, f32, f64 and the 8-
 * and 4-bit float storage types). */
bool ts_dtype_is_fp(ts_dtype dt);

/* NumPy .npy files (format 1.0-3.0, little or big endian, C order). */
ts_status ts_npy_read(const char *path, ts_tensor **out, ts_err *err);
ts_status ts_npy_read_mem(const void *buf, size_t len, ts_tensor **out, ts_err *err);
ts_status ts_npy_write(const char *path, const ts_tensor *t, ts_err *err);

/* ---- graphs --------------------------------------------------------- */

/* Parse IR text; `name` labels error messages ("file.ir:3:14: ..."). */
ts_status ts_graph_parse(const char *text, size_t len, const char *name,
                         ts_graph **out, ts_err *err);
ts_status ts_graph_load_file(const char *path, ts_graph **out, ts_err *err);
void ts_graph_free(ts_graph *g);
/* The canonical text form; the caller frees *out with ts_free_string. */
ts_status ts_graph_to_text(const ts_graph *g, char **out, ts_err *err);
void ts_free_string(char *s);
/* The graph as Graphviz dot text (`tessera ir --dot`); free with
 * ts_free_string. */
ts_status ts_graph_to_dot(const ts_graph *g, char **out, ts_err *err);
/* Run a comma-separated pass list ("dce,cse,fold,simplify" or "default"). */
ts_status ts_graph_run_passes(ts_graph *g, const char *passes, ts_err *err);
/* The same, and after every run of the pass named dump_after ("all": of
 * every pass) the graph as IR text under a "# after NAME" line, all of it
 * in *dump (free with ts_free_string). */
ts_status ts_graph_run_passes_dump(ts_graph *g, const char *passes, const char *dump_after, char **dump,
                                   ts_err *err);
/* Automatic differentiation, in place (docs/autodiff.md): the graph gains
 * primitives, inputs and outputs, stays an ordinary graph (print it,
 * compile it, differentiate it again) and keeps its own outputs first.
 * wrt lists n_wrt input indices; NULL means every floating-point input.
 * On error g is left as it was and err names the primitive without a rule.
 *
 * Reverse mode: one input per floating-point output k, its cotangent
 * ct_<output> (same type); one output per input i of wrt, grad_<input>,
 * the gradient of sum_k <ct_k, output_k> with respect to input i. */
ts_status ts_graph_grad(ts_graph *g, int n_wrt, const int *wrt, ts_err *err);
/* Forward mode: one input per input of wrt, its tangent tan_<input>; one
 * output per floating-point output, its tangent tan_<output>. */
ts_status ts_graph_jvp(ts_graph *g, int n_wrt, const int *wrt, ts_err *err);
/* The passes, in pipeline order: i from 0; NULL past the last. */
const char *ts_pass_name(int i);
/* What a target makes of a graph, as text, without running it: what "c"
 * (the generated source) or "loops" (the fusion listing, then each
 * kernel's loop IR). TS_ERR_UNSUPPORTED for a target that generates no
 * code (interp) or an unknown what. Free *text with ts_free_string. */
ts_status ts_graph_describe(const ts_graph *g, const char *target, const char *what, char **text, ts_err *err);

/* Whether in[0..n_in) fit the graph's inputs (dtype, rank, constant dims,
 * and symbolic dims bound consistently across inputs, in order). TS_OK;
 * or TS_ERR_SHAPE with *bad (may be NULL) the first input that does not
 * fit and a message without its name, so the caller can say how it
 * named it: "expected f32[seq, 16], got f32[4, 8]" (then ": why" for a
 * symbol bound otherwise by an earlier input). */
ts_status ts_graph_check_inputs(const ts_graph *g, int n_in, ts_tensor *const *in, int *bad, ts_err *err);
/* Whether s (len bytes) can be spelt as a value name in IR text
 * ([A-Za-z_][A-Za-z0-9_.]*, or a run of digits). */
bool ts_ir_name_valid(const char *s, size_t len);

int ts_graph_num_inputs(const ts_graph *g);
int ts_graph_num_outputs(const ts_graph *g);
const char *ts_graph_input_name(const ts_graph *g, int i);
const char *ts_graph_output_name(const ts_graph *g, int i);
/* Graph input i (output k) as a value: its type by ts_value_type, and an
 * operand for a builder on g (tessera.h's building section); NULL out of
 * range. */
ts_value *ts_graph_input(const ts_graph *g, int i);
ts_value *ts_graph_output(const ts_graph *g, int k);

/* ---- building graphs ------------------------------------------------
 * A graph can be built node by node instead of parsed from text, the way
 * every frontend builds it (docs/api.md has a complete example):
 *
 *     ts_graph *g = NULL;
 *     ts_builder *b = NULL;
 *     ts_graph_new("scale", &g, &err);
 *     ts_graph_builder(g, &b, &err);
 *     ts_value *x = ts_build_input(b, "x", "f32[batch, 4]");   // a symbolic batch
 *     ts_value *two = ts_build_scalar(b, TS_DTYPE_F32, 2.0);
 *     ts_value *y = ts_build2(b, "mul", x, two);                // broadcasts
 *     ts_value *t = ts_build1(b, "transpose", y, "perm=[1, 0]");
 *     ts_build_outputs(b, 1, &t, (const char *[]){"y"});
 *     if (ts_builder_status(b, &err) != TS_OK) ...             // one check at the end
 *     ts_builder_free(b);                                      // g keeps the nodes
 *
 * Every node is checked and typed as it is built (its shape rule, as the
 * text parser does), folded when its operands are constants, simplified
 * (x*1 is x) and merged with an identical node built before. Elementwise
 * operations broadcast their operands numpy-style; dtypes must match
 * (casts are explicit: ts_build1(b, "cast", x, "dtype=f16")). Operations
 * are the primitives of docs/primitives.md (`tessera prims`), named as in
 * the text form, their attributes written as the text form writes them.
 *
 * Errors stick: the first failure is kept in the builder, every later call
 * returns NULL (or does nothing), and ts_builder_status reports it with
 * its message ("transpose: perm has 3 entries for a rank-2 operand"). A
 * NULL operand after an error is expected; callers chain calls and check
 * once. A ts_value lives as long as its graph. Do not run passes on a
 * graph while a builder on it is alive; a new builder after them is fine
 * (it sees the nodes already there). */
typedef struct ts_builder ts_builder;

/* A new graph with no inputs, nodes or outputs. */
ts_status ts_graph_new(const char *name, ts_graph **out, ts_err *err);
/* A builder appending to g's body: its inputs, nodes and outputs. */
ts_status ts_graph_builder(ts_graph *g, ts_builder **out, ts_err *err);
void ts_builder_free(ts_builder *b);                  /* NULL is fine */
/* TS_OK, or the first error (its message copied into err). */
ts_status ts_builder_status(const ts_builder *b, ts_err *err);

/* A new graph input (or region parameter) named name (NULL: unnamed;
 * else [A-Za-z_][A-Za-z0-9_.]*, unique in the graph) of a type in the
 * text form's spelling: "f32[2, 3]", "i64[]", "f16[batch, seq, 64]" (a
 * name is a symbolic dim: every input dim with that name has one size in
 * a run). */
ts_value *ts_build_input(ts_builder *b, const char *name, const char *type);
/* A constant holding t's values (the graph takes a reference; a tensor
 * over caller memory is copied). */
ts_value *ts_build_const(ts_builder *b, ts_tensor *t);
/* A rank-0 constant of dtype dt holding v, converted as ts_tensor_set_f64 does. */
ts_value *ts_build_scalar(ts_builder *b, ts_dtype dt, double v);
/* A node of primitive op ("add", "dot", "reduce_sum", ...) over in[0..n_in)
 * with attributes in the text form's spelling ("axes=[1]", NULL or "" for
 * the defaults); its result (its first one if it has several). */
ts_value *ts_build(ts_builder *b, const char *op, int n_in, ts_value *const *in, const char *attrs);
static inline ts_value *ts_build1(ts_builder *b, const char *op, ts_value *x, const char *attrs)
{
    return ts_build(b, op, 1, &x, attrs);
}
static inline ts_value *ts_build2(ts_builder *b, const char *op, ts_value *x, ts_value *y)
{
    ts_value *in[2] = {x, y};
    return ts_build(b, op, 2, in, NULL);
}
/* numpy's matmul over dot: rank-1 operands promoted and the added dim
 * dropped again, leading (batch) dims broadcast. */
ts_value *ts_build_matmul(ts_builder *b, ts_value *x, ts_value *y);
/* A builder for one region of a control node ("if": then, else; "while":
 * cond, body) built inside b's graph. Its ts_build_input calls declare the
 * region's parameters, its ts_build_outputs what the region yields. A
 * region sees only its own parameters: pass what it needs as operands. */
ts_status ts_builder_region(ts_builder *b, ts_builder **out, ts_err *err);
/* Any node, control nodes and several results included: regions[0 ..
 * n_regions) are region builders (the node takes their blocks; free the
 * builders afterwards), out (cap entries) receives the results and *n_out
 * their count. Returns the builder's status. */
ts_status ts_build_node(ts_builder *b, const char *op, int n_in, ts_value *const *in, const char *attrs,
                        int n_regions, ts_builder *const *regions, int cap, ts_value **out, int *n_out);
/* callee's nodes built into b's graph (a call, inlined): its inputs bound
 * to in[0..n_in), which must have exactly its input types (symbolic dims
 * by name); out (cap entries) receives its outputs, *n_out their count.
 * callee is only read. Returns the builder's status. */
ts_status ts_build_inline(ts_builder *b, const ts_graph *callee, int n_in, ts_value *const *in, int cap,
                          ts_value **out, int *n_out);
/* The graph's outputs (a region's results), named names[i] when names is
 * not NULL and names[i] is not NULL (rules as for inputs; a value named
 * already, an input, keeps its name: another is an error). Returns the
 * builder's status. */
ts_status ts_build_outputs(ts_builder *b, int n, ts_value *const *vals, const char *const *names);

/* A built value's dtype, rank, and type as text ("f32[batch, 4]") into buf
 * (cap bytes, truncated and NUL-terminated); the text's full length. */
ts_dtype ts_value_dtype(const ts_value *v);
int ts_value_rank(const ts_value *v);
size_t ts_value_type(const ts_value *v, char *buf, size_t cap);

/* ---- ONNX ------------------------------------------------------------
 * ts_onnx_load reads an ONNX model (protobuf; external data files are
 * resolved relative to the model's folder and never outside it) and
 * assembles it from primitives. The graph's inputs are the model's graph
 * inputs that are not initializers, in order.
 *
 * known: values the caller already has for some inputs (by name). A known
 * input that an operator needs as a constant (a shape, axes, a count) lets
 * the model build; the graph is then pinned to that value and a run with
 * another value fails with a clear error. A known name that is an
 * initializer replaces the initializer's value. n_known may be 0. */
ts_status ts_onnx_load(const char *path, int n_known, const char *const *known_names,
                       ts_tensor *const *known_values, ts_graph **out, ts_err *err);
/* An ONNX TensorProto file (.pb, as the ONNX test data uses). *name, if
 * name is not NULL, receives the tensor's name (free with ts_free_string). */
ts_status ts_onnx_read_tensor(const char *path, ts_tensor **out, char **name, ts_err *err);
ts_status ts_onnx_write_tensor(const char *path, const ts_tensor *t, const char *name, ts_err *err);
/* A description of the model for people: inputs, outputs, opsets, and an
 * operator histogram marking operators tessera cannot assemble. */
ts_status ts_onnx_info(const char *path, char **text, ts_err *err);
/* What an ONNX model declares at its edges, read without building it:
 * every graph input in order (initializers a model also lists as inputs
 * among them, marked: a value given for one replaces the default) and
 * every output. Free with ts_onnx_signature_free. Errors as
 * ts_onnx_load's for a file that does not parse. */
typedef struct ts_onnx_sig ts_onnx_sig;
ts_status ts_onnx_signature(const char *path, ts_onnx_sig **out, ts_err *err);
void ts_onnx_signature_free(ts_onnx_sig *s);
int ts_onnx_sig_inputs(const ts_onnx_sig *s);
int ts_onnx_sig_outputs(const ts_onnx_sig *s);
/* Input i (output k): its name; whether an initializer gives it a
 * default; its kind (NULL for a tensor, else "sequence", "optional",
 * "map", "sparse tensor"); its element type (TensorProto.DataType, 0 when
 * not a tensor); its rank (-1 when no shape is declared) and dims (rank
 * entries, -1 for a symbolic or missing one). Every out pointer may be
 * NULL; strings and dims live as long as s. */
ts_status ts_onnx_sig_input(const ts_onnx_sig *s, int i, const char **name, bool *initializer, const char **kind,
                            int *elem_type, int *rank, const int64_t **dims, ts_err *err);
ts_status ts_onnx_sig_output(const ts_onnx_sig *s, int k, const char **name, const char **kind, int *elem_type,
                             int *rank, const int64_t **dims, ts_err *err);

/* The ONNX operator table, one row per decomposition: row i's domain (""
 * for the default one), op type and the model opsets it serves, since ..
 * until (-1: to the latest). TS_ERR_INVALID_ARG past the last row
 * (ts_onnx_op_count). The strings are static. */
int ts_onnx_op_count(void);
ts_status ts_onnx_op_at(int i, const char **domain, const char **op_type, int *since, int *until, ts_err *err);

/* ---- ONNX sequences and optionals --------------------------------------
 * tessera's graphs hold tensors only. An ONNX input or output that is a
 * sequence or an optional stands for a structure of tensors fixed when the
 * model is loaded, spelled at the boundary as a *form* with its tensors in
 * order:
 *     "t"          a tensor
 *     "[F,F,...]"  a sequence of values of the forms F ("[]" is empty)
 *     "?"          an empty optional; "?F" an optional holding a value of form F
 * No spaces. A sequence of three tensors is "[t,t,t]" with three tensors,
 * an optional sequence of two "?[t,t]" with two, an empty optional "?"
 * with none. Wherever a form is taken, NULL means "t".
 *
 * ts_onnx_load_forms is ts_onnx_load with each known value given a form:
 * known value i has the form known_forms[i] (known_forms may be NULL: all
 * tensors) and takes the next ts_onnx_form_tensors(form) tensors of
 * known_values (n_values in all, every one taken). An input of sequence or
 * optional type must be given this way: the value fixes its structure
 * (a sequence's length, an optional's presence), and each of its tensors
 * becomes one graph input, at the input's place among the graph inputs.
 * Those inputs' shapes are the given tensors' shapes.
 *
 * output_forms (with n_outputs; both NULL or neither) receives the form of
 * each of the model's outputs, in order; graph output k is then the k-th
 * tensor of that list (an empty sequence or optional has none). Free with
 * ts_onnx_forms_free. ts_onnx_load loads such a model too; only the
 * mapping is not reported. */
ts_status ts_onnx_load_forms(const char *path, int n_known, const char *const *known_names,
                             const char *const *known_forms, int n_values,
                             ts_tensor *const *known_values, ts_graph **out,
                             int *n_outputs, char ***output_forms, ts_err *err);
void ts_onnx_forms_free(char **forms, int n);
/* The number of tensors a form takes; -1 when it is malformed. */
int ts_onnx_form_tensors(const char *form);
/* An ONNX value file (.pb) of the given kind: 't' a TensorProto, '[' a
 * SequenceProto, '?' an OptionalProto (the first character of a form: the
 * file itself does not say which message it holds; the model's declared
 * type does). *form receives the value's form and *tensors an array of *n
 * tensor references: free both with ts_onnx_value_free. *name, if name is
 * not NULL, receives the message's name (free with ts_free_string).
 * Sequences of maps or sparse tensors are TS_ERR_UNSUPPORTED. */
ts_status ts_onnx_read_value(const char *path, char kind, char **form, int *n, ts_tensor ***tensors,
                             char **name, ts_err *err);
/* Write a value of the given form and tensors (n of them) as the message
 * its form's first character names. */
ts_status ts_onnx_write_value(const char *path, const char *form, int n, ts_tensor *const *tensors,
                              const char *name, ts_err *err);
void ts_onnx_value_free(char *form, int n, ts_tensor **tensors);

/* ---- sessions ------------------------------------------------------- */

/* target: "cpu" (compiled: fused kernels generated as C, compiled by the
 * system C compiler and cached on disk; nodes it does not compile run on
 * the interpreter's kernels), "interp" (the reference interpreter),
 * "opencl" (the first OpenCL device) or "cuda" (NVIDIA GPU 0; where there
 * is none, TS_ERR_TOOLCHAIN with one line saying what is missing).
 * ts_target_name lists them. NULL is the default, "cpu", except that
 * where no working C compiler is found (missing, or failing on a one-line
 * probe) it runs on "interp" and writes one warning line on stderr, once
 * per process; an explicit "cpu" is then TS_ERR_TOOLCHAIN.
 * ts_session_target tells which one a session got. The graph must outlive
 * the session. A session may be run from several threads at once. */
ts_status ts_session_new(const ts_graph *g, const char *target,
                         ts_session **out, ts_err *err);
/* The name of the target the session runs on ("cpu", "interp"): a
 * static string, valid after the session is freed. */
const char *ts_session_target(const ts_session *s);
/* The targets this build has, by index (0 is the default); NULL past the
 * last. */
const char *ts_target_name(int i);

/* Options for ts_session_new_opts; zero means the default. */
typedef struct ts_session_opts {
    int threads;             /* cpu: threads per run (default: all cores) */
    const char *cache_dir;   /* cpu: compiled-code cache ($TESSERA_CACHE_DIR, ~/.cache/tessera) */
    const char *cc;          /* cpu: the C compiler ($TESSERA_CC, "cc") */
    const char *cflags;      /* cpu: its flags ($TESSERA_CFLAGS, "-O3 -march=native ...") */
    int exact;               /* cpu: nonzero: no algorithm less accurate than direct summation (no
                              * Winograd convolutions, which lose about a decimal digit; training
                              * through batch norm amplifies that) */
} ts_session_opts;
ts_status ts_session_new_opts(const ts_graph *g, const char *target, const ts_session_opts *opts,
                              ts_session **out, ts_err *err);
void ts_session_free(ts_session *s);
/* inputs[i] binds graph input i (read during the run, never kept);
 * outputs[k] receives a new reference to graph output k, in memory the
 * caller owns: it shares bytes with no input, no constant of the graph
 * and no other output (one that would is copied), so it may be written
 * and kept after the inputs are gone. */
ts_status ts_session_run(ts_session *s, int n_in, ts_tensor *const *inputs,
                         int n_out, ts_tensor **outputs, ts_err *err);
/* What building the session cost: compile wall time in ms, 1 if the code
 * came from the cache (0 if compiled, -1 for the interpreter), the number
 * of generated kernels and of nodes left to the interpreter. */
void ts_session_compile_info(const ts_session *s, double *compile_ms, int *cache_hit, int *kernels,
                             int *fallbacks);
/* Bytes of intermediate values alive at once in the last run (cpu: the
 * arena plus anything sized during the run; interp: 0, not measured). */
int64_t ts_session_peak_bytes(const ts_session *s);
/* Write a Chrome-trace JSON of kernel times of the runs since the last
 * call (cpu only; enable with ts_session_profile(s, 1) first). */
ts_status ts_session_profile(ts_session *s, int enable, ts_err *err);
ts_status ts_session_write_profile(ts_session *s, const char *path, ts_err *err);

/* ---- the primitive table --------------------------------------------------
 * The closed set every operator is assembled from (docs/primitives.md),
 * as `tessera prims` lists it. */
typedef struct ts_prim_desc {
    const char *name;         /* "add" */
    int min_in, max_in;       /* operands; max_in -1: any number */
    int n_out;                /* results; -1: as many as the node says */
    unsigned flags;           /* bit i set: ts_prim_flag_name(i) holds */
    const char *attrs;        /* the attribute schema as the table writes it ("" for none) */
    int n_regions;            /* if/while bodies */
    const char *const *region_names;
    int interp;               /* 1: the interpreter has a kernel; 2: declared only (needs a
                               * multi-process runtime); 0: none */
} ts_prim_desc;
int ts_prim_count(void);
/* Primitive i (0 <= i < ts_prim_count()) into *out (static strings). */
ts_status ts_prim_describe(int i, ts_prim_desc *out, ts_err *err);
/* The name of flag bit `bit` ("ew", "comm", "cmp", "reduce", "layout",
 * "control", "side", "fresh"), or NULL. */
const char *ts_prim_flag_name(int bit);
/* Add to counts[i] (ts_prim_count() entries) the test cases under dir
 * (IR text files, recursively) that use primitive i. Returns the number
 * of files read, or -1 with err set. */
int ts_prim_count_tests(const char *dir, int *counts, ts_err *err);

/* ---- the compiled-code cache -------------------------------------------
 * Where the cpu target keeps the modules it compiled ($TESSERA_CACHE_DIR,
 * else $XDG_CACHE_HOME/tessera, else ~/.cache/tessera; opts->cache_dir
 * when opts is not NULL and sets it), trimmed to a size after each
 * build, least recently used first (docs/runtime.md). */
ts_status ts_cache_dir(const ts_session_opts *opts, char *buf, size_t cap, ts_err *err);
/* The entries (compiled modules) and their bytes, sources included; a
 * cache directory that does not exist yet is empty. */
ts_status ts_cache_usage(const ts_session_opts *opts, int64_t *entries, int64_t *bytes, ts_err *err);
/* The size the cache is trimmed to: $TESSERA_CACHE_MAX_MB, else 1 GiB. */
int64_t ts_cache_limit_bytes(void);
/* Remove least recently used entries until at most max_bytes remain (0:
 * all); *removed (may be NULL) counts them. */
ts_status ts_cache_trim(const ts_session_opts *opts, int64_t max_bytes, int64_t *removed, ts_err *err);

#ifdef __cplusplus
}
#endif
#endif
