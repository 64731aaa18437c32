/* ops_util.h — small builder helpers shared by more than one family file
 * (ops_*.c) of the ONNX frontend: dim arithmetic that records failures on
 * the node, and thin wrappers around primitives that take attributes
 * (iota, gather, reverse, slice). Internal to src/frontend/onnx. Two
 * flavours exist: node-based helpers record failures on the onnx_node;
 * the _b ones take a bare builder and fail it, as ops_misc.c and
 * ops_signal.c build. */
#ifndef TESSERA_FRONTEND_ONNX_OPS_UTIL_H
#define TESSERA_FRONTEND_ONNX_OPS_UTIL_H

#include "frontend/onnx/onnx.h"

typedef ts_status (*onnx_util_dim_fn)(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);

/* f(a, b) on dims. A failure (overflow, division by zero) is recorded on
 * the node; the 0 returned then is never used, since every later builder
 * call does nothing. */
ts_dim onnx_util_darith(onnx_node *n, onnx_util_dim_fn f, ts_dim a, ts_dim b);
/* The product of dims[0..rank). */
ts_dim onnx_util_numel(onnx_node *n, int rank, const ts_dim *dims);
/* True when s is TS_OK; otherwise records "could not set a primitive's
 * attribute" on the node. */
bool onnx_util_set_ok(onnx_node *n, ts_status s);

/* iota of dtype dt and shape dims (rank), counting along axis. */
ts_value *onnx_util_iota(onnx_node *n, ts_dtype dt, int rank, const ts_dim *dims, int axis);
/* gather(x, idx) along axis. */
ts_value *onnx_util_gather(onnx_node *n, ts_value *x, ts_value *idx, int64_t axis);
/* x reshaped to one axis. */
ts_value *onnx_util_flatten(onnx_node *n, ts_value *x);
/* x reshaped to rank r: its dims at `at`, 1 elsewhere (x's rank is 1 or
 * its dims are 1 but there). */
ts_value *onnx_util_place(onnx_node *n, ts_value *x, int r, int at, ts_dim d);
/* An i64 scalar holding d (constant or symbolic). */
ts_value *onnx_util_dim_value(onnx_node *n, ts_dim d);
/* x with axis `axis` sliced to [lo, hi) with stride st. */
ts_value *onnx_util_slice_axis(onnx_node *n, ts_value *x, int axis, ts_dim lo, ts_dim hi, int64_t st);
/* x reversed along the count axes listed. */
ts_value *onnx_util_reverse_axes(onnx_node *n, ts_value *x, int count, const int64_t *axes);
/* Input i as constant integers: a constant, or recorded dims that are
 * all constants (a shape computed from static dims); arena array. */
ts_status onnx_util_const_ints(onnx_node *n, int i, const int64_t **v, int *count);

/* A constant of dtype dt and shape (rank, shape) holding a copy of data
 * (row-major, ts_tensor layout). */
ts_value *onnx_util_const(onnx_node *n, ts_dtype dt, int rank, const int64_t *shape, const void *data);

/* Query heads per kv head: h_q / h_kv, which must divide (constant unless
 * equal). */
ts_status onnx_util_heads_ratio(onnx_node *n, ts_dim hq, ts_dim hkv, int64_t *rep);
/* x [B, H_q, L, X] times kv [B, H_kv, ...] contracting x's last axis with
 * kv axis kv_axis, query head h paired with kv head h / rep (grouped-query
 * attention): the result is [B, H_q, L, Y] with Y the free axis of kv. */
ts_value *onnx_util_gqa_dot(onnx_node *n, ts_value *x, ts_value *kv, int64_t rep, int64_t kv_axis);
/* exp(x - max) / sum over the last axis. A row that is all -inf gives
 * NaN, as the reference's softmax does. */
ts_value *onnx_util_softmax_last(onnx_node *n, ts_value *x);

/* iota of dtype dt and shape dims, counting along axis (fails b). */
ts_value *onnx_util_iota_b(ts_builder *b, ts_dtype dt, int rank, const ts_dim *dims, int axis);
/* gather(x, idx) along axis (fails b). */
ts_value *onnx_util_take_b(ts_builder *b, ts_value *x, ts_value *idx, int axis);
/* x[lo:hi] along axis. */
ts_value *onnx_util_cut_b(ts_builder *b, ts_value *x, int axis, int64_t lo, int64_t hi);
/* x with a size-1 axis inserted at `at` (at may equal the rank). */
ts_value *onnx_util_unsq_b(ts_builder *b, ts_value *x, int at);

/* x's bits read as dt (the widths must agree). */
ts_value *onnx_util_bitcast(onnx_node *n, ts_value *x, ts_dtype dt);
/* x converted to `to` as ONNX Cast does: float8 targets clamp first when
 * saturate is set, f8e8m0 rounds by round_mode ("up" when NULL), 4- and
 * 2-bit integers wrap (convert.c). */
ts_value *onnx_util_convert(onnx_node *n, ts_value *x, ts_dtype to, bool saturate, const char *round_mode);

/* A new region block whose parameters have the types of vals[0..count)
 * (params receive them), for while/if bodies built by an operator. */
ts_status onnx_util_region(onnx_node *n, int count, ts_value *const *vals, ts_block **blk, ts_value **params);
/* Free a region's builder; its error, if any, becomes the node's. */
ts_status onnx_util_close_region(onnx_node *n, ts_builder *rb);

#endif
