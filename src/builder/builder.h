/* builder.h — the C builder API every frontend uses (ONNX, Python tracing,
 * text-free tests): one call per node, with the bookkeeping done here.
 *
 *     ts_builder *b = ts_builder_new(g, NULL);        // build into g's body
 *     ts_dim shape[2] = {batch, ts_dim_const(4)};
 *     ts_value *x = ts_b_input(b, TS_DTYPE_F32, 2, shape);
 *     ts_value *y = ts_b_binary(b, TS_OP_MUL, x, ts_b_scalar(b, TS_DTYPE_F32, 2));
 *     ts_b_return(b, 1, &y);
 *     ts_err err = {0};
 *     if (ts_builder_status(b, &err) != TS_OK) ...    // one check at the end
 *     ts_builder_free(b);
 *
 * Every node built is
 *   - typed: shapes are inferred (ts_ir_node_new) and checked;
 *   - folded: when all operands are constants it becomes a constant, under
 *     the size rule of the fold pass (ts_pass_fold_node: the same code);
 *   - simplified: the identities of the simplify pass apply (x*1 is x);
 *   - hash-consed: building a node identical to one already in the block
 *     (commutative operands in either order) returns the existing value.
 * Binary operations broadcast numpy-style, inserting `broadcast` nodes.
 *
 * Errors stick: the first failure is kept in the builder, every later
 * ts_b_* call returns NULL (or does nothing), and ts_builder_status reports
 * the failure. So callers chain calls and check once. NULL operands after
 * an error are expected; a NULL operand without an earlier error is
 * TS_ERR_INVALID_ARG.
 *
 * A builder appends to one block. Regions are isolated: every operand must
 * be a parameter of that block or a value defined in it. Do not run passes
 * over the block while a builder on it is alive (its hash table would point
 * at removed nodes); make a new builder afterwards. */
#ifndef TS_BUILDER_H
#define TS_BUILDER_H

#include "ir/ir.h"

typedef struct ts_builder ts_builder;

/* What a builder does beyond creating nodes; all on by default. */
enum {
    TS_BUILD_FOLD = 1 << 0,
    TS_BUILD_SIMPLIFY = 1 << 1,
    TS_BUILD_MERGE = 1 << 2,
    TS_BUILD_ALL = TS_BUILD_FOLD | TS_BUILD_SIMPLIFY | TS_BUILD_MERGE
};

/* A builder appending to block b of g (g's body when b is NULL). Nodes
 * already in b take part in hash-consing. NULL when out of memory. */
ts_builder *ts_builder_new(ts_graph *g, ts_block *b);
/* ts_builder_free and ts_builder_status are public (tessera.h). */
ts_graph *ts_builder_graph(const ts_builder *b);
ts_block *ts_builder_block(const ts_builder *b);
void ts_builder_set_flags(ts_builder *b, unsigned flags);
/* Record a failure (first one wins; prefixed with the origin); returns
 * code. For frontends that find a problem of their own. */
ts_status ts_builder_fail(ts_builder *b, ts_status code, const char *fmt, ...) TS_PRINTF(3, 4);
/* Label nodes built from now on (an ONNX node name), for messages; NULL
 * clears it. Errors are prefixed with it too. */
void ts_builder_set_origin(ts_builder *b, const char *origin);
/* The current label (in the graph arena), or NULL. */
const char *ts_builder_origin(const ts_builder *b);

/* ---- block signature -------------------------------------------------------- */

/* A new parameter of the block (a graph input for the body). */
ts_value *ts_b_input(ts_builder *b, ts_dtype dt, int rank, const ts_dim *dims);
/* Set the block's results (graph outputs, or what a region yields). */
ts_status ts_b_return(ts_builder *b, int n, ts_value *const *vals);

/* ---- leaves ----------------------------------------------------------------- */

/* A constant holding t (the graph takes a reference; a tensor over
 * borrowed memory is copied). */
ts_value *ts_b_const(ts_builder *b, ts_tensor *t);
/* A scalar constant of dtype dt, v converted as ts_elem_set_f64 does. */
ts_value *ts_b_scalar(ts_builder *b, ts_dtype dt, double v);
/* v broadcast to a shape (symbolic dims allowed). */
ts_value *ts_b_full(ts_builder *b, ts_dtype dt, double v, int rank, const ts_dim *dims);
/* An iota of dtype dt and shape dims (symbolic dims allowed): each element
 * is its index along axis (0 <= axis < rank). */
ts_value *ts_b_iota(ts_builder *b, ts_dtype dt, int rank, const ts_dim *dims, int64_t axis);

/* ---- elementwise --------------------------------------------------------------- */

ts_value *ts_b_unary(ts_builder *b, ts_op op, ts_value *x);
/* x op y after numpy broadcasting (dims aligned from the right; each pair
 * equal or one of them 1; symbolic dims must be equal). dtypes must match:
 * casts are explicit. */
ts_value *ts_b_binary(ts_builder *b, ts_op op, ts_value *x, ts_value *y);
/* p ? x : y, the three broadcast to one shape. */
ts_value *ts_b_select(ts_builder *b, ts_value *p, ts_value *x, ts_value *y);
ts_value *ts_b_cast(ts_builder *b, ts_value *x, ts_dtype dt);

/* ---- layout ------------------------------------------------------------------------ */

ts_value *ts_b_reshape(ts_builder *b, ts_value *x, int rank, const ts_dim *dims);
/* perm has rank(x) entries: out dim i = x dim perm[i]. */
ts_value *ts_b_transpose(ts_builder *b, ts_value *x, const int64_t *perm);
/* numpy broadcast_to: x's dims, aligned right, are 1 or equal to dims. */
ts_value *ts_b_broadcast_to(ts_builder *b, ts_value *x, int rank, const ts_dim *dims);
/* x[start:limit:stride] (rank(x) entries each; stride NULL means 1s). */
ts_value *ts_b_slice(ts_builder *b, ts_value *x, const ts_dim *start, const ts_dim *limit,
                     const int64_t *stride);
ts_value *ts_b_concat(ts_builder *b, int n, ts_value *const *xs, int64_t axis);

/* ---- reductions and contractions --------------------------------------------------- */

/* reduce_sum/prod/max/min over axes (negative counts from the end; order
 * does not matter), or argmax/argmin over exactly one axis. keepdims keeps
 * the reduced axes as 1s (a reshape). */
ts_value *ts_b_reduce(ts_builder *b, ts_op op, ts_value *x, int naxes, const int64_t *axes, bool keepdims);
/* dot_general: n_batch paired batch dims, n_contract paired contracting
 * dims; result dims are batch, lhs free, rhs free. */
ts_value *ts_b_dot(ts_builder *b, ts_value *x, ts_value *y, int n_batch, const int64_t *lhs_batch,
                   const int64_t *rhs_batch, int n_contract, const int64_t *lhs_contract,
                   const int64_t *rhs_contract);
/* numpy matmul: rank-1 operands are promoted and the added dim dropped
 * again; leading (batch) dims broadcast. */
ts_value *ts_b_matmul(ts_builder *b, ts_value *x, ts_value *y);

/* ---- any node ---------------------------------------------------------------------- */

/* Attributes of op with their defaults, to fill with ts_attr_set_*; NULL
 * (and the builder failed) when out of memory. */
ts_attr *ts_b_attrs(ts_builder *b, ts_op op);
/* A node's first result (NULL, without an error, for an op that has no
 * results); attrs from ts_b_attrs, or NULL for all defaults. */
ts_value *ts_b_node(ts_builder *b, ts_op op, int n_in, ts_value *const *in, ts_attr *attrs);
/* Any node, regions and several results included: out (cap entries)
 * receives the results, *n_out their count. Control ops take ownership of
 * the regions (built with their own builders). Returns the builder's
 * status. */
ts_status ts_b_op(ts_builder *b, ts_op op, int n_in, ts_value *const *in, ts_attr *attrs,
                  int n_regions, ts_block *const *regions, int cap, ts_value **out, int *n_out);

/* Block src of graph callee (b's own graph or another) built into b's
 * block, its parameters bound to params and its results into results;
 * regions copied whole. False (the builder failed) on error. */
bool ts_b_clone(ts_builder *b, const ts_graph *callee, const ts_block *src, ts_value *const *params,
                ts_value **results);
/* callee's body built into b's block with its inputs bound to in[0..n_in)
 * (exactly its input types, symbolic dims by name); out (cap entries)
 * receives its outputs, *n_out their count. Returns the builder's status. */
ts_status ts_b_inline(ts_builder *b, const ts_graph *callee, int n_in, ts_value *const *in, int cap, ts_value **out,
                      int *n_out);

#endif
