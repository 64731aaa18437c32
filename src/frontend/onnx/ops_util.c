/* ops_util.c — small builder helpers shared by the ONNX family files
 * (ops_*.c): dim arithmetic that records failures on the node, and thin
 * wrappers around the primitives that take attributes (iota, gather,
 * reverse, slice) or reshape. Declared in ops_util.h; each was a static
 * helper of one family file before that file was split by job. */
#include "frontend/onnx/ops_util.h"

#include "core/tensor.h"

#include <string.h>

/* ---- node-based: failures recorded on the onnx_node ------------------------------------- */

ts_dim onnx_util_darith(onnx_node *n, onnx_util_dim_fn f, ts_dim a, ts_dim b)
{
    ts_dim r = ts_dim_const(0);
    ts_err e = {0};
    if (onnx_status(n) == TS_OK && f(onnx_graph(n)->syms, a, b, &r, &e) != TS_OK) onnx_fail(n, e.code, "%s", e.msg);
    return r;
}

ts_dim onnx_util_numel(onnx_node *n, int rank, const ts_dim *dims)
{
    ts_dim r = ts_dim_const(1);
    for (int i = 0; i < rank; i++) r = onnx_util_darith(n, ts_dim_mul, r, dims[i]);
    return r;
}

bool onnx_util_set_ok(onnx_node *n, ts_status s)
{
    if (s == TS_OK) return true;
    onnx_fail(n, s, "could not set a primitive's attribute");
    return false;
}

ts_value *onnx_util_iota(onnx_node *n, ts_dtype dt, int rank, const ts_dim *dims, int axis)
{
    return ts_b_iota(onnx_b(n), dt, rank, dims, axis);
}

ts_value *onnx_util_gather(onnx_node *n, ts_value *x, ts_value *idx, int64_t axis)
{
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_GATHER);
    if (!x || !idx || !a || !onnx_util_set_ok(n, ts_attr_set_int(onnx_graph(n), TS_OP_GATHER, a, "axis", axis)))
        return NULL;
    ts_value *in[2] = {x, idx};
    return ts_b_node(onnx_b(n), TS_OP_GATHER, 2, in, a);
}

ts_value *onnx_util_flatten(onnx_node *n, ts_value *x)
{
    if (!x) return NULL;
    ts_dim all = onnx_util_numel(n, x->type.rank, x->type.dims);
    return ts_b_reshape(onnx_b(n), x, 1, &all);
}

ts_value *onnx_util_place(onnx_node *n, ts_value *x, int r, int at, ts_dim d)
{
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0; i < r; i++) dims[i] = i == at ? d : ts_dim_const(1);
    return x ? ts_b_reshape(onnx_b(n), x, r, dims) : NULL;
}

ts_value *onnx_util_dim_value(onnx_node *n, ts_dim d)
{
    return ts_dim_is_const(d) ? ts_b_scalar(onnx_b(n), TS_DTYPE_I64, (double)d.c) : onnx_dim_scalar(n, d);
}

ts_value *onnx_util_slice_axis(onnx_node *n, ts_value *x, int axis, ts_dim lo, ts_dim hi, int64_t st)
{
    if (!x) return NULL;
    ts_dim start[TS_MAX_RANK], limit[TS_MAX_RANK];
    int64_t stride[TS_MAX_RANK];
    for (int i = 0; i < x->type.rank; i++) {
        start[i] = ts_dim_const(0);
        limit[i] = x->type.dims[i];
        stride[i] = 1;
    }
    start[axis] = lo;
    limit[axis] = hi;
    stride[axis] = st;
    return ts_b_slice(onnx_b(n), x, start, limit, stride);
}

ts_value *onnx_util_reverse_axes(onnx_node *n, ts_value *x, int count, const int64_t *axes)
{
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_REVERSE);
    if (!x || !a || !onnx_util_set_ok(n, ts_attr_set_ints(onnx_graph(n), TS_OP_REVERSE, a, "axes", count, axes)))
        return NULL;
    return ts_b_node(onnx_b(n), TS_OP_REVERSE, 1, &x, a);
}

ts_status onnx_util_const_ints(onnx_node *n, int i, const int64_t **v, int *count)
{
    const ts_dim *d;
    if (onnx_dims_input(n, i, &d, count) != TS_OK) return onnx_status(n);
    int64_t *a = ts_arena_array(onnx_graph(n)->arena, (size_t)*count + 1, sizeof *a);
    if (!a) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    for (int k = 0; k < *count; k++) {
        if (!ts_dim_is_const(d[k]))
            return onnx_unsupported(n, "input %d holds symbolic sizes, but tessera needs constants here", i);
        a[k] = d[k].c;
    }
    *v = a;
    return TS_OK;
}

ts_value *onnx_util_const(onnx_node *n, ts_dtype dt, int rank, const int64_t *shape, const void *data)
{
    ts_tensor *t = NULL;
    ts_err err = {0};
    if (onnx_status(n) != TS_OK) return NULL;
    if (ts_tensor_new(dt, rank, shape, &t, &err) != TS_OK) {
        onnx_fail(n, err.code, "%s", err.msg);
        return NULL;
    }
    if (t->nbytes) memcpy(t->data, data, t->nbytes);
    ts_value *v = ts_b_const(onnx_b(n), t);
    ts_tensor_release(t);
    return v;
}

/* ---- attention: shared by ops_attention.c and ops_flex.c ------------------------------------ */

ts_status onnx_util_heads_ratio(onnx_node *n, ts_dim hq, ts_dim hkv, int64_t *rep)
{
    *rep = 1;
    if (ts_dim_eq(hq, hkv)) return TS_OK;
    if (!ts_dim_is_const(hq) || !ts_dim_is_const(hkv))
        return onnx_unsupported(n, "symbolic head counts that may differ: tessera needs the query/kv head ratio");
    if (hkv.c < 1 || hq.c % hkv.c != 0)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "%lld query heads are not a multiple of %lld kv heads", (long long)hq.c,
                         (long long)hkv.c);
    *rep = hq.c / hkv.c;
    return TS_OK;
}

/* Query heads are viewed as [B, H_kv, rep, L, X] and both operands batch
 * over (B, H_kv): K and V are never copied per query head. */
ts_value *onnx_util_gqa_dot(onnx_node *n, ts_value *x, ts_value *kv, int64_t rep, int64_t kv_axis)
{
    static const int64_t batch[2] = {0, 1};
    const int64_t xc = 4;
    if (!x || !kv) return NULL;
    ts_dim d5[5] = {x->type.dims[0], kv->type.dims[1], ts_dim_const(rep), x->type.dims[2], x->type.dims[3]};
    ts_builder *b = onnx_b(n);
    ts_value *y = ts_b_dot(b, ts_b_reshape(b, x, 5, d5), kv, 2, batch, batch, 1, &xc, &kv_axis);
    if (!y) return NULL;
    ts_dim d4[4] = {x->type.dims[0], x->type.dims[1], x->type.dims[2], y->type.dims[4]};
    return ts_b_reshape(b, y, 4, d4);
}

ts_value *onnx_util_softmax_last(onnx_node *n, ts_value *x)
{
    if (!x) return NULL;
    int64_t last = x->type.rank - 1;
    ts_builder *b = onnx_b(n);
    ts_value *e = ts_b_unary(b, TS_OP_EXP, ts_b_binary(b, TS_OP_SUB, x, ts_b_reduce(b, TS_OP_REDUCE_MAX, x, 1, &last, true)));
    return ts_b_binary(b, TS_OP_DIV, e, ts_b_reduce(b, TS_OP_REDUCE_SUM, e, 1, &last, true));
}

/* ---- builder-based: failures recorded on the builder --------------------------------------- */

ts_value *onnx_util_iota_b(ts_builder *b, ts_dtype dt, int rank, const ts_dim *dims, int axis)
{
    return ts_b_iota(b, dt, rank, dims, axis);
}

ts_value *onnx_util_take_b(ts_builder *b, ts_value *x, ts_value *idx, int axis)
{
    ts_attr *a = ts_b_attrs(b, TS_OP_GATHER);
    if (!a || !x || !idx) return NULL;
    if (ts_attr_set_int(ts_builder_graph(b), TS_OP_GATHER, a, "axis", axis) != TS_OK) {
        ts_builder_fail(b, TS_ERR_OOM, "gather: could not set axis");
        return NULL;
    }
    return ts_b_node(b, TS_OP_GATHER, 2, (ts_value *[]){x, idx}, a);
}

ts_value *onnx_util_cut_b(ts_builder *b, ts_value *x, int axis, int64_t lo, int64_t hi)
{
    if (!x) return NULL;
    ts_dim st[TS_MAX_RANK], li[TS_MAX_RANK];
    for (int i = 0; i < x->type.rank; i++) {
        st[i] = ts_dim_const(0);
        li[i] = x->type.dims[i];
    }
    st[axis] = ts_dim_const(lo);
    li[axis] = ts_dim_const(hi);
    return ts_b_slice(b, x, st, li, NULL);
}

ts_value *onnx_util_unsq_b(ts_builder *b, ts_value *x, int at)
{
    if (!x) return NULL;
    ts_dim d[TS_MAX_RANK];
    int r = x->type.rank;
    if (r >= TS_MAX_RANK) {
        ts_builder_fail(b, TS_ERR_UNSUPPORTED, "rank %d: one more axis exceeds %d", r, TS_MAX_RANK);
        return NULL;
    }
    for (int i = 0, k = 0; i <= r; i++) d[i] = i == at ? ts_dim_const(1) : x->type.dims[k++];
    return ts_b_reshape(b, x, r + 1, d);
}

ts_status onnx_util_region(onnx_node *n, int count, ts_value *const *vals, ts_block **blk, ts_value **params)
{
    ts_graph *g = onnx_graph(n);
    ts_err err = {0};
    if (ts_ir_block_new(g, blk, &err) != TS_OK) return onnx_fail(n, err.code, "%s", err.msg);
    for (int i = 0; i < count; i++)
        if (ts_ir_block_add_param(g, *blk, &vals[i]->type, &params[i], &err) != TS_OK)
            return onnx_fail(n, err.code, "%s", err.msg);
    return TS_OK;
}

ts_status onnx_util_close_region(onnx_node *n, ts_builder *rb)
{
    ts_err err = {0};
    ts_status st = ts_builder_status(rb, &err);
    ts_builder_free(rb);
    return st == TS_OK ? TS_OK : onnx_fail(n, st, "%s", err.msg);
}
