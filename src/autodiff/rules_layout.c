/* rules_layout.c — the layout primitives move elements, so each one's
 * reverse rule moves the cotangent back (reshape back, transpose by the
 * inverse permutation, sum over broadcast axes, pad a slice back out,
 * slice a pad out, split a concat), and its forward rule is the primitive
 * applied to the tangent (ad_jvp_linear, here). */
#include "autodiff/ad_int.h"

#include <string.h>

void ad_jvp_linear(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy)
{
    ts_value **in = ts_arena_alloc(ts_builder_graph(b)->arena, sizeof *in * (size_t)(n->n_in + 1));
    bool any = false;
    if (!in) {
        ts_builder_fail(b, TS_ERR_OOM, "out of memory");
        return;
    }
    /* float operands: their tangents, zero where none; others (indices,
     * start positions) as they are */
    for (int i = 0; i < n->n_in; i++) {
        any |= t[i] != NULL;
        in[i] = !ad_is_float(n->in[i]) ? n->in[i] : t[i] ? t[i] : ad_zeros_like(b, n->in[i]);
    }
    if (any && ad_is_float(n->out[0])) dy[0] = ad_rebuild(b, n, n->n_in, in);
}

/* i64[rank] of the dims d (run-time values where symbolic). */
static ts_value *dims_vector(ts_builder *b, int r, const ts_dim *d)
{
    ts_value *parts[TS_MAX_RANK];
    ts_dim one = ts_dim_const(1);
    for (int i = 0; i < r; i++) parts[i] = ts_b_reshape(b, ad_dim_value(b, d[i]), 1, &one);
    return ts_b_concat(b, r, parts, 0);
}

static ts_value *broadcast_back(ts_builder *b, const ts_node *n, ts_value *ct)
{
    const ts_type *x = &n->in[0]->type, *y = &n->out[0]->type;
    int na = 0, nsum = 0;
    const int64_t *axes = ts_node_ints(n, "axes", &na);
    int64_t sum[TS_MAX_RANK];
    for (int j = 0, i = 0; j < y->rank; j++) {
        bool from_x = i < na && axes[i] == j;
        /* a new axis, or a 1 stretched: summed */
        if (!from_x || (ts_dim_eq(x->dims[i], ts_dim_const(1)) && !ts_dim_eq(y->dims[j], ts_dim_const(1))))
            sum[nsum++] = j;
        i += from_x;
    }
    return ts_b_reshape(b, ts_b_reduce(b, TS_OP_REDUCE_SUM, ct, nsum, sum, false), x->rank, x->dims);
}

static ts_value *slice_back(ts_builder *b, const ts_node *n, ts_value *ct)
{
    const ts_type *x = &n->in[0]->type, *y = &n->out[0]->type;
    int r = x->rank, c = 0;
    const ts_dim *start = ts_node_dims(n, "start", &c);
    const int64_t *stride = ts_node_ints(n, "stride", &c);
    int64_t lo[TS_MAX_RANK], hi[TS_MAX_RANK], in[TS_MAX_RANK];
    bool consts = true, unit = true;
    for (int i = 0; i < r; i++) {
        if (ts_dim_eq(y->dims[i], ts_dim_const(0))) return ad_zeros_like(b, n->in[0]);
        /* hi = n - start - (m - 1) stride - 1 */
        ts_dim span = ad_dim(b, ts_dim_mul, ad_dim(b, ts_dim_sub, y->dims[i], ts_dim_const(1)),
                             ts_dim_const(stride[i]));
        ts_dim h = ad_dim(b, ts_dim_sub, ad_dim(b, ts_dim_sub, x->dims[i], start[i]),
                          ad_dim(b, ts_dim_add, span, ts_dim_const(1)));
        consts &= ts_dim_is_const(start[i]) && ts_dim_is_const(h);
        unit &= stride[i] == 1;
        lo[i] = start[i].c, hi[i] = h.c, in[i] = stride[i] - 1;
    }
    if (consts) return ad_pad(b, ct, NULL, lo, hi, in);
    if (unit) {   /* symbolic bounds: written into zeros where it came from */
        ts_value *ops[3] = {ad_zeros_like(b, n->in[0]), ct, dims_vector(b, r, start)};
        return ts_b_node(b, TS_OP_DYNAMIC_UPDATE_SLICE, 3, ops, NULL);
    }
    ts_builder_fail(b, TS_ERR_UNSUPPORTED, "autodiff: slice with strides and symbolic bounds has no gradient yet");
    return NULL;
}

/* pad(x, v): x's elements sit at lo + j (interior + 1) once the crops
 * (negative lo/hi) are padded back; the rest of the cotangent is v's. */
static void pad_back(ts_builder *b, const ts_node *n, ts_value *ct, const bool *want, ts_value **dx)
{
    const ts_type *x = &n->in[0]->type;
    int r = x->rank, c = 0;
    const int64_t *lo = ts_node_ints(n, "lo", &c), *hi = ts_node_ints(n, "hi", &c);
    const int64_t *interior = ts_node_ints(n, "interior", &c);
    int64_t ulo[TS_MAX_RANK], uhi[TS_MAX_RANK], zero[TS_MAX_RANK], stride[TS_MAX_RANK];
    ts_dim start[TS_MAX_RANK], limit[TS_MAX_RANK];
    bool crop = false;
    for (int i = 0; i < r; i++) {
        ulo[i] = lo[i] < 0 ? -lo[i] : 0, uhi[i] = hi[i] < 0 ? -hi[i] : 0, zero[i] = 0;
        crop |= lo[i] < 0 || hi[i] < 0;
        stride[i] = interior[i] + 1;
        start[i] = ts_dim_const(lo[i] > 0 ? lo[i] : 0);
        ts_dim last = ad_dim(b, ts_dim_mul, ad_dim(b, ts_dim_sub, x->dims[i], ts_dim_const(1)), ts_dim_const(stride[i]));
        limit[i] = ad_dim(b, ts_dim_add, start[i], ad_dim(b, ts_dim_add, last, ts_dim_const(1)));
    }
    ts_value *whole = crop ? ad_pad(b, ct, NULL, ulo, uhi, zero) : ct;
    dx[0] = ts_b_slice(b, whole, start, limit, stride);
    if (want[1] && dx[0]) {
        int64_t all[TS_MAX_RANK];
        for (int i = 0; i < r; i++) all[i] = i;
        dx[1] = ts_b_binary(b, TS_OP_SUB, ts_b_reduce(b, TS_OP_REDUCE_SUM, ct, r, all, false),
                            ts_b_reduce(b, TS_OP_REDUCE_SUM, dx[0], r, all, false));
    }
}

void ad_vjp_layout(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx)
{
    ts_value *c = ct[0];
    if (!c) return;
    const ts_type *x = &n->in[0]->type;
    int cnt = 0;
    switch (n->op) {
    case TS_OP_RESHAPE: dx[0] = ts_b_reshape(b, c, x->rank, x->dims); return;
    case TS_OP_BROADCAST: dx[0] = broadcast_back(b, n, c); return;
    case TS_OP_TRANSPOSE: {
        const int64_t *perm = ts_node_ints(n, "perm", &cnt);
        int64_t inv[TS_MAX_RANK];
        for (int i = 0; i < cnt; i++) inv[perm[i]] = i;
        dx[0] = ts_b_transpose(b, c, inv);
        return;
    }
    case TS_OP_REVERSE: dx[0] = ad_rebuild(b, n, 1, &c); return;
    case TS_OP_SLICE: dx[0] = slice_back(b, n, c); return;
    case TS_OP_PAD:
        pad_back(b, n, c, want, dx);
        if (!want[0]) dx[0] = NULL;
        return;
    case TS_OP_CONCAT: {
        int64_t axis = ts_node_int(n, "axis");
        ts_dim start[TS_MAX_RANK], limit[TS_MAX_RANK];
        memcpy(limit, c->type.dims, sizeof *limit * (size_t)c->type.rank);
        for (int i = 0; i < c->type.rank; i++) start[i] = ts_dim_const(0);
        for (int k = 0; k < n->n_in; k++) {
            limit[axis] = ad_dim(b, ts_dim_add, start[axis], n->in[k]->type.dims[axis]);
            if (want[k]) dx[k] = ts_b_slice(b, c, start, limit, NULL);
            start[axis] = limit[axis];
        }
        return;
    }
    default:
        ts_builder_fail(b, TS_ERR_INTERNAL, "autodiff: %s is not a layout rule", ts_op_get(n->op)->name);
    }
}
