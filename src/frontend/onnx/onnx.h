/* onnx.h — the ONNX frontend's internal interface: what an operator's
 * decomposition function sees.
 *
 * The loader (load.c) walks a ModelProto's graph in order. For each node it
 * finds the decomposition function registered for (op_type, opset) in the
 * operator table (ops_table.c, which joins the family tables of the
 * ops_*.c files), fills an onnx_node, and calls it. The function builds
 * primitives with the builder (onnx_b(n)) — never anything else — and sets
 * n->out[k] for every output the node lists. The builder folds constants,
 * so a shape computed from constants (Shape -> Gather -> Concat -> Reshape)
 * is a constant again by the time a consumer asks for it (onnx_const).
 *
 * Errors: return onnx_fail/onnx_unsupported (they record the message with
 * the node's name and op type through the builder and return the code).
 * Builder errors stick, so a function may chain builder calls and return
 * onnx_status(n) at the end.
 */
#ifndef TS_ONNX_H
#define TS_ONNX_H

#include "builder/builder.h"

#include <limits.h>

typedef struct onnx_ctx onnx_ctx;

typedef struct onnx_node {
    const char *op_type;
    const char *name;         /* "" when the model gives none */
    int opset;                /* the opset version of the node's domain in effect */
    int n_in;                 /* inputs listed; in[i] is NULL for an omitted ("") one */
    ts_value **in;
    int n_out;                /* outputs listed; out[k] must be set unless out_used[k] is false */
    ts_value **out;
    const bool *out_used;     /* false for an output named "" (optional, not wanted) */
    const void *proto;        /* const Onnx__NodeProto * */
    onnx_ctx *ctx;
    uint64_t attrs_asked;     /* bit i: attribute i of the proto was asked for (node.c) */
} onnx_node;

typedef ts_status (*onnx_op_fn)(onnx_node *n);

/* One row of the operator table: the function handles op_type for model
 * opsets since..until (inclusive; INT_MAX for "to the latest"). */
typedef struct onnx_op_entry {
    const char *op_type;
    int since, until;
    onnx_op_fn fn;
} onnx_op_entry;

/* Family tables, each terminated by a row with op_type NULL. */
extern const onnx_op_entry onnx_ops_elementwise[];
extern const onnx_op_entry onnx_ops_reduce[];
extern const onnx_op_entry onnx_ops_nn[];
extern const onnx_op_entry onnx_ops_conv[];
extern const onnx_op_entry onnx_ops_einsum[];
extern const onnx_op_entry onnx_ops_deform[];
extern const onnx_op_entry onnx_ops_shape[];
extern const onnx_op_entry onnx_ops_pad[];
extern const onnx_op_entry onnx_ops_index[];
extern const onnx_op_entry onnx_ops_resize[];
extern const onnx_op_entry onnx_ops_rnn[];
extern const onnx_op_entry onnx_ops_control[];
extern const onnx_op_entry onnx_ops_quant[];
extern const onnx_op_entry onnx_ops_random[];
extern const onnx_op_entry onnx_ops_misc[];
extern const onnx_op_entry onnx_ops_signal[];
extern const onnx_op_entry onnx_ops_loss[];
extern const onnx_op_entry onnx_ops_attention[];
extern const onnx_op_entry onnx_ops_newer[];
/* Other domains (D18): ai.onnx.ml, ai.onnx.preview, ai.onnx.preview.training. */
extern const onnx_op_entry onnx_ops_ml[];
extern const onnx_op_entry onnx_ops_tree[];
extern const onnx_op_entry onnx_ops_preview[];
extern const onnx_op_entry onnx_ops_training[];
extern const onnx_op_entry onnx_ops_sequence[];

/* True for the default domain's spellings: NULL, "" and "ai.onnx". */
bool onnx_default_domain(const char *domain);
/* True when the table has families for domain. */
bool onnx_known_domain(const char *domain);
/* The function for op_type of domain at opset (the model's import of that
 * domain), or NULL. */
onnx_op_fn onnx_find_op(const char *domain, const char *op_type, int opset);
/* Every row of the table, for coverage reports: calls fn once per row with
 * its domain ("" for the default one). */
void onnx_each_op(void (*fn)(const char *domain, const onnx_op_entry *e, void *ud), void *ud);

/* ---- what a decomposition function uses -------------------------------- */

ts_builder *onnx_b(onnx_node *n);
ts_graph *onnx_graph(onnx_node *n);
/* The builder's status (the first error, if any). */
ts_status onnx_status(onnx_node *n);
ts_status onnx_fail(onnx_node *n, ts_status code, const char *fmt, ...) TS_PRINTF(3, 4);
/* TS_ERR_UNSUPPORTED with "<reason>". */
ts_status onnx_unsupported(onnx_node *n, const char *fmt, ...) TS_PRINTF(2, 3);
/* Input i, or a failure (TS_ERR_INVALID_MODEL "input i is required") when
 * it is missing or omitted. */
ts_value *onnx_input(onnx_node *n, int i);
/* True when input i is listed and not "". */
bool onnx_has_input(const onnx_node *n, int i);
/* Input i when its dtype is a float type; otherwise NULL with
 * TS_ERR_UNSUPPORTED ("input i is <dtype>: only float types are defined"),
 * or onnx_input's failure when it is missing. */
ts_value *onnx_float_input(onnx_node *n, int i);
/* Set out[k] to v when the node lists output k and it is wanted
 * (out_used[k]); returns onnx_status(n), so `return onnx_set_out(n, 0, y);`
 * ends a decomposition. */
ts_status onnx_set_out(onnx_node *n, int k, ts_value *v);

/* Attributes. A getter with a default returns the default when the
 * attribute is absent; one of the wrong type is a failure recorded on the
 * node (and the default is returned). */
bool onnx_has_attr(onnx_node *n, const char *name);
int64_t onnx_attr_int(onnx_node *n, const char *name, int64_t def);
double onnx_attr_float(onnx_node *n, const char *name, double def);
/* The string, or def; the pointer lives as long as the model. */
const char *onnx_attr_string(onnx_node *n, const char *name, const char *def);
/* Enumerated string attributes: the index of the value (def when absent)
 * in choices, a NULL-terminated list of what the decomposition assembles;
 * a value outside it is -1 and TS_ERR_UNSUPPORTED naming the attribute,
 * the value, the opset and the choices. Choose per opset where the
 * allowed values differ. */
int onnx_attr_enum(onnx_node *n, const char *name, const char *def, const char *const *choices);
/* Every attribute of the node must be asked for by its decomposition (a
 * getter, or onnx_has_attr): one never asked for is refused after the
 * decomposition returns, since ignoring it could change the result
 * silently. onnx_attr_ignore marks one the decomposition deliberately
 * does not use (say why where it is called). */
void onnx_attr_ignore(onnx_node *n, const char *name);
/* The raw attribute (const Onnx__AttributeProto *, or NULL), marked as
 * asked for: for the few readers the typed getters do not serve
 * (subgraphs, string lists). */
const struct Onnx__AttributeProto *onnx_node_attr(onnx_node *n, const char *name);
/* Count of the list (-1 when absent); *v points into the model. */
/* A strings attribute as C strings (arena array); its length, or -1 when
 * absent. */
int onnx_attr_strings(onnx_node *n, const char *name, const char ***out);
/* The value a tensor name stands for at this node (an input, an
 * initializer or an earlier node's output); NULL, and the node failed,
 * when there is none. */
ts_value *onnx_value_named(onnx_node *n, const char *name);
int onnx_attr_ints(onnx_node *n, const char *name, const int64_t **v);
int onnx_attr_floats(onnx_node *n, const char *name, const float **v);
/* A TensorProto attribute as a new tensor reference (caller releases). */
ts_status onnx_attr_tensor(onnx_node *n, const char *name, ts_tensor **out);

/* The constant behind v (a `const` node's tensor, borrowed), or NULL. A
 * graph input whose value the caller supplied at load time counts as
 * constant: the graph is then pinned to that value (ts_ir_pin_input). */
const ts_tensor *onnx_const(onnx_node *n, ts_value *v);
/* Input i as a constant integer vector (or scalar), converted to int64 and
 * stored in the graph's arena; a failure naming the input when it is not
 * constant ("input 1 (shape) must be a constant: tessera needs it to know
 * the result's shape"). */
ts_status onnx_const_ints(onnx_node *n, int i, const int64_t **v, int *count);
/* Same for a float scalar/vector. */
ts_status onnx_const_floats(onnx_node *n, int i, const double **v, int *count);

/* ONNX TensorProto.DataType -> tessera dtype; TS_ERR_UNSUPPORTED for
 * strings, complex, float8 and 4-bit types. */
ts_status onnx_dtype(int onnx_type, ts_dtype *out, ts_err *err);

/* Normalise an ONNX axis (negative counts from the end) for rank r; a
 * failure on the node when out of range. */
ts_status onnx_axis(onnx_node *n, int64_t axis, int r, int64_t *out);

/* ---- shape values ------------------------------------------------------------
 * Models compute shapes (Shape -> Gather -> Concat -> Reshape), and with a
 * dynamic axis those shapes hold symbols. Beside each small int64 vector
 * value the loader can keep its content as dims (ts_dim: constant or
 * symbolic). Operators that move or combine such vectors (Shape, Gather,
 * Slice, Concat, Unsqueeze, Squeeze, Cast, Identity, Add, Sub, Mul, Div on
 * integers, ...) record their result's dims with onnx_set_dims_value, and
 * operators that need a shape (Reshape, Expand, ConstantOfShape, Tile,
 * Range, ...) read it with onnx_dims_input, so the model builds with
 * symbolic sizes instead of failing on "not a constant". */

/* Input i as dims: a constant integer tensor (each element a constant dim)
 * or a value whose dims were recorded; a failure naming the input
 * otherwise. A scalar counts as one element. */
ts_status onnx_dims_input(onnx_node *n, int i, const ts_dim **dims, int *count);
/* The dims recorded for v (or v's constant content), if any. */
bool onnx_dims_value(onnx_node *n, ts_value *v, const ts_dim **dims, int *count);
/* Record v's content as dims (copied). v must be an integer vector of
 * `count` elements (or a scalar, count 1). */
void onnx_set_dims_value(onnx_node *n, ts_value *v, int count, const ts_dim *dims);
/* An i64 scalar value holding d: a constant, or for a symbolic d a
 * reduction over a broadcast of ones (assembled from primitives; the
 * result's dims are recorded so consumers see d itself). */
ts_value *onnx_dim_scalar(onnx_node *n, ts_dim d);
/* An i64 vector value [d0, d1, ...] (recorded, as above). */
ts_value *onnx_dims_vector(onnx_node *n, int count, const ts_dim *dims);

/* ---- subgraphs (If, Loop, Scan) ------------------------------------------ */

/* The outer values that the graph attributes `attrs` (count n_attrs) of
 * node n reference by name, recursively through nested subgraphs, in a
 * stable order; arena arrays. Regions are isolated (D6), so control-flow
 * ops pass these as extra operands. Constants are left out: onnx_region
 * rebuilds them inside the region, where operators still see them as
 * constants. */
ts_status onnx_captures(onnx_node *n, int n_attrs, const char *const *attrs,
                        int *n_caps, ts_value ***caps);
/* Build the region for graph attribute `attr`: its parameters are the
 * formal inputs (types given, n_formal of them; may differ from the
 * subgraph's declared input types only in symbolic dims) followed by one
 * parameter per capture (caps from onnx_captures); its results are the
 * subgraph's outputs. */
ts_status onnx_region(onnx_node *n, const char *attr, int n_formal, const ts_type *formal,
                      int n_caps, ts_value *const *caps, ts_block **out);
/* Build graph attribute `attr` inline, in the current block, with its
 * inputs bound to in[0..n_in): for an operator that applies a graph to
 * tensors once (FlexAttention's score_mod). The graph sees the enclosing
 * scope's names. *results (arena array) receives its *n_out outputs. */
ts_status onnx_inline_graph(onnx_node *n, const char *attr, int n_in, ts_value *const *in, int *n_out,
                            ts_value ***results);
/* Number of outputs of graph attribute `attr` (-1 if absent). */
int onnx_region_outputs(onnx_node *n, const char *attr);

#endif
