/* rules_index.c — derivatives of the indexing primitives. A gather's
 * cotangent is scattered back with combine=add (repeated indices add up);
 * a scatter's update receives the gathered cotangent; the dynamic slices
 * swap roles (slice <-> update into zeros); sort's values send their
 * cotangent back through the permutation it returns. Gathers and sorts
 * address x flat, position (p D + i) Q + q, which needs the sizes only as
 * run-time values, so symbolic dims stay symbolic. */
#include "autodiff/ad_int.h"

#include <string.h>

/* Flat positions in x (shape P.. x D x Q.., D at axis) of i3, an integer
 * [P, J, Q] tensor of indices along axis; i64 [P, J, Q]. */
static ts_value *flat_pos(ts_builder *b, const ts_type *x, int64_t axis, ts_value *i3)
{
    if (!i3) return NULL;
    const ts_dim *d3 = i3->type.dims;
    ts_value *p = ts_b_iota(b, TS_DTYPE_I64, 3, d3, 0), *q = ts_b_iota(b, TS_DTYPE_I64, 3, d3, 2);
    ts_value *qn = ad_dim_value(b, ad_dims_prod(b, x->dims, (int)axis + 1, x->rank));
    ts_value *row = ts_b_binary(b, TS_OP_ADD, ts_b_binary(b, TS_OP_MUL, p, ad_dim_value(b, x->dims[axis])),
                                ts_b_cast(b, i3, TS_DTYPE_I64));
    return ts_b_binary(b, TS_OP_ADD, ts_b_binary(b, TS_OP_MUL, row, qn), q);
}

/* The [P, J, Q] shape around axis of x, with J the element count of idx. */
static void pjq(ts_builder *b, const ts_type *x, int64_t axis, const ts_type *idx, ts_dim *d3)
{
    d3[0] = ad_dims_prod(b, x->dims, 0, (int)axis);
    d3[1] = ad_dims_prod(b, idx->dims, 0, idx->rank);
    d3[2] = ad_dims_prod(b, x->dims, (int)axis + 1, x->rank);
}

static ts_value *scatter(ts_builder *b, ts_value *x, ts_value *idx, ts_value *upd, const char *combine)
{
    ts_attr *a = ts_b_attrs(b, TS_OP_SCATTER);
    if (!a) return NULL;
    ts_status s = ts_attr_set_enum(ts_builder_graph(b), TS_OP_SCATTER, a, "combine", combine);
    if (s != TS_OK) return ts_builder_fail(b, s, "scatter: bad attributes"), NULL;
    ts_value *in[3] = {x, idx, upd};
    return ts_b_node(b, TS_OP_SCATTER, 3, in, a);
}

static ts_value *gather(ts_builder *b, ts_value *x, ts_value *idx, int64_t axis)
{
    ts_attr *a = ts_b_attrs(b, TS_OP_GATHER);
    if (!a) return NULL;
    ts_status s = ts_attr_set_int(ts_builder_graph(b), TS_OP_GATHER, a, "axis", axis);
    if (s != TS_OK) return ts_builder_fail(b, s, "gather: bad attributes"), NULL;
    ts_value *in[2] = {x, idx};
    return ts_b_node(b, TS_OP_GATHER, 2, in, a);
}

/* v viewed as one axis. */
static ts_value *flat(ts_builder *b, ts_value *v)
{
    ts_dim n = ad_dims_prod(b, v->type.dims, 0, v->type.rank);
    return ts_b_reshape(b, v, 1, &n);
}

static ts_value *dyn_slice(ts_builder *b, ts_value *x, ts_value *start, const ts_type *like)
{
    ts_attr *a = ts_b_attrs(b, TS_OP_DYNAMIC_SLICE);
    if (!a) return NULL;
    ts_status s = ts_attr_set_dims(ts_builder_graph(b), TS_OP_DYNAMIC_SLICE, a, "sizes", like->rank, like->dims);
    if (s != TS_OK) return ts_builder_fail(b, s, "dynamic_slice: bad attributes"), NULL;
    ts_value *in[2] = {x, start};
    return ts_b_node(b, TS_OP_DYNAMIC_SLICE, 2, in, a);
}

static ts_value *dyn_update(ts_builder *b, ts_value *x, ts_value *upd, ts_value *start)
{
    ts_value *in[3] = {x, upd, start};
    return ts_b_node(b, TS_OP_DYNAMIC_UPDATE_SLICE, 3, in, NULL);
}

/* sort: the positions in x of the sorted elements, flat, of x's shape. */
static ts_value *sort_pos(ts_builder *b, const ts_node *n)
{
    const ts_type *x = &n->in[0]->type;
    int64_t axis = ts_node_int(n, "axis");
    ts_dim d3[3];
    ts_type one = *x;
    one.rank = 1, one.dims = &x->dims[axis];
    pjq(b, x, axis, &one, d3);
    return ts_b_reshape(b, flat_pos(b, x, axis, ts_b_reshape(b, n->out[1], 3, d3)), x->rank, x->dims);
}

static bool combine_ok(ts_builder *b, const ts_node *n)
{
    const char *k = ts_node_enum_name(n, "combine");
    if (strcmp(k, "set") == 0 || strcmp(k, "add") == 0) return true;
    ts_builder_fail(b, TS_ERR_UNSUPPORTED, "autodiff: scatter with combine=%s has no derivative rule yet", k);
    return false;
}

void ad_vjp_index(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx)
{
    ts_value *c = ct[0];
    if (!c) return;
    ts_value *x = n->in[0];
    switch (n->op) {
    case TS_OP_GATHER: {
        int64_t axis = ts_node_int(n, "axis");
        ts_dim d3[3];
        pjq(b, &x->type, axis, &n->in[1]->type, d3);
        /* the indices, broadcast over P and Q */
        ts_value *iv = ad_broadcast(b, flat(b, n->in[1]), 3, d3, (const int64_t[]){1});
        dx[0] = scatter(b, ad_zeros_like(b, x), flat_pos(b, &x->type, axis, iv), ts_b_reshape(b, c, 3, d3), "add");
        return;
    }
    case TS_OP_SCATTER:
        if (!combine_ok(b, n)) return;
        if (want[0] && strcmp(ts_node_enum_name(n, "combine"), "set") == 0)
            dx[0] = scatter(b, c, n->in[1], ad_zeros_like(b, n->in[2]), "set");
        else if (want[0])
            dx[0] = c;
        if (want[2]) dx[2] = gather(b, flat(b, c), n->in[1], 0);
        return;
    case TS_OP_DYNAMIC_SLICE: dx[0] = dyn_update(b, ad_zeros_like(b, x), c, n->in[1]); return;
    case TS_OP_DYNAMIC_UPDATE_SLICE:
        if (want[0]) dx[0] = dyn_update(b, c, ad_zeros_like(b, n->in[1]), n->in[2]);
        if (want[1]) dx[1] = dyn_slice(b, c, n->in[2], &n->in[1]->type);
        return;
    case TS_OP_SORT: dx[0] = scatter(b, ad_zeros_like(b, x), sort_pos(b, n), c, "add"); return;
    default:
        ts_builder_fail(b, TS_ERR_INTERNAL, "autodiff: %s is not an indexing rule", ts_op_get(n->op)->name);
    }
}

void ad_jvp_index(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy)
{
    switch (n->op) {
    case TS_OP_SCATTER:
        if (combine_ok(b, n)) ad_jvp_linear(b, n, t, dy);
        return;
    case TS_OP_SORT: /* the tangent, permuted as the values were */
        if (t[0])
            dy[0] = gather(b, flat(b, t[0]), sort_pos(b, n), 0);
        return;
    default: ad_jvp_linear(b, n, t, dy);
    }
}
