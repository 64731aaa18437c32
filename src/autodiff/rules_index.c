/* rules_index.c — derivatives of the indexing primitives. A gather's
 * cotangent is scattered back with combine=add (repeated indices add up);
 * a scatter's update receives the gathered cotangent (times the other
 * factors of its position for mul, shared among the elements attaining
 * the result for max/min); the dynamic slices
 * swap roles (slice <-> update into zeros); sort's values send their
 * cotangent back through the permutation it returns. Gathers and sorts
 * address x flat, position (p D + i) Q + q, which needs the sizes only as
 * run-time values, so symbolic dims stay symbolic. */
#include "autodiff/ad_int.h"

#include <string.h>

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
    ad_pjq(b, x, axis, &one, d3);
    return ts_b_reshape(b, ad_flat_pos(b, x, axis, ts_b_reshape(b, n->out[1], 3, d3)), x->rank, x->dims);
}

/* scatter mul: M, the product of the updates at each position (x's
 * factor), and for each update the product of the other factors of its
 * position (x's element included), exact with zeros. */
static ts_value *mul_factor(ts_builder *b, const ts_node *n)
{
    return ad_scatter(b, ts_b_full(b, n->in[0]->type.dtype, 1.0, n->in[0]->type.rank, n->in[0]->type.dims),
                      n->in[1], n->in[2], "mul");
}

static ts_value *mul_others(ts_builder *b, const ts_node *n)
{
    ts_value *x = n->in[0], *idx = n->in[1], *u = n->in[2];
    ts_value *z = ts_b_binary(b, TS_OP_EQ, u, ad_scalar(b, u, 0.0));
    ts_value *us = ts_b_select(b, z, ad_scalar(b, u, 1.0), u);
    ts_value *zeros = ad_scatter(b, ad_zeros_like(b, x), idx, ts_b_cast(b, z, u->type.dtype), "add");
    ts_value *rest = ad_scatter(b, x, idx, us, "mul");
    return ad_prod_others(b, z, us, ad_gather(b, ad_flat(b, zeros), idx, 0), ad_gather(b, ad_flat(b, rest), idx, 0));
}

/* scatter max/min: where x and each update attain the result, and how many
 * share each position (ties share equally, as reduce_max). */
typedef struct hits {
    ts_value *x, *upd, *count;
} hits;

static hits max_hits(ts_builder *b, const ts_node *n)
{
    ts_value *idx = n->in[1];
    hits h = {ad_eq(b, n->in[0], n->out[0]), ad_eq(b, n->in[2], ad_gather(b, ad_flat(b, n->out[0]), idx, 0)), NULL};
    h.count = ad_add(b, h.x, ad_scatter(b, ad_zeros_like(b, n->in[0]), idx, h.upd, "add"));
    return h;
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
        ad_pjq(b, &x->type, axis, &n->in[1]->type, d3);
        /* the indices, broadcast over P and Q */
        ts_value *iv = ad_broadcast(b, ad_flat(b, n->in[1]), 3, d3, (const int64_t[]){1});
        dx[0] = ad_scatter(b, ad_zeros_like(b, x), ad_flat_pos(b, &x->type, axis, iv), ts_b_reshape(b, c, 3, d3), "add");
        return;
    }
    case TS_OP_SCATTER: {
        const char *k = ts_node_enum_name(n, "combine");
        ts_value *idx = n->in[1];
        if (strcmp(k, "mul") == 0) {
            if (want[0]) dx[0] = ad_mul(b, c, mul_factor(b, n));
            if (want[2]) dx[2] = ad_mul(b, ad_gather(b, ad_flat(b, c), idx, 0), mul_others(b, n));
        } else if (strcmp(k, "max") == 0 || strcmp(k, "min") == 0) {
            hits h = max_hits(b, n);
            ts_value *share = ad_div(b, c, h.count);
            if (want[0]) dx[0] = ad_mul(b, share, h.x);
            if (want[2]) dx[2] = ad_mul(b, ad_gather(b, ad_flat(b, share), idx, 0), h.upd);
        } else {
            if (want[0]) dx[0] = strcmp(k, "set") == 0 ? ad_scatter(b, c, idx, ad_zeros_like(b, n->in[2]), "set") : c;
            if (want[2]) dx[2] = ad_gather(b, ad_flat(b, c), idx, 0);
        }
        return;
    }
    case TS_OP_DYNAMIC_SLICE: dx[0] = dyn_update(b, ad_zeros_like(b, x), c, n->in[1]); return;
    case TS_OP_DYNAMIC_UPDATE_SLICE:
        if (want[0]) dx[0] = dyn_update(b, c, ad_zeros_like(b, n->in[1]), n->in[2]);
        if (want[1]) dx[1] = dyn_slice(b, c, n->in[2], &n->in[1]->type);
        return;
    case TS_OP_SORT: dx[0] = ad_scatter(b, ad_zeros_like(b, x), sort_pos(b, n), c, "add"); return;
    default:
        ts_builder_fail(b, TS_ERR_INTERNAL, "autodiff: %s is not an indexing rule", ts_op_get(n->op)->name);
    }
}

void ad_jvp_index(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy)
{
    switch (n->op) {
    case TS_OP_SCATTER: {
        const char *k = ts_node_enum_name(n, "combine");
        ts_value *x = n->in[0], *idx = n->in[1];
        if (!t[0] && !t[2]) return;
        if (strcmp(k, "mul") == 0) {
            ts_value *dx = t[0] ? ad_mul(b, t[0], mul_factor(b, n)) : NULL;
            ts_value *du = t[2] ? ad_scatter(b, ad_zeros_like(b, x), idx, ad_mul(b, t[2], mul_others(b, n)), "add") : NULL;
            dy[0] = ad_add(b, dx, du);
        } else if (strcmp(k, "max") == 0 || strcmp(k, "min") == 0) {
            hits h = max_hits(b, n);
            ts_value *dx = t[0] ? ad_mul(b, t[0], h.x) : NULL;
            ts_value *du = t[2] ? ad_scatter(b, ad_zeros_like(b, x), idx, ad_mul(b, t[2], h.upd), "add") : NULL;
            dy[0] = ad_div(b, ad_add(b, dx, du), h.count);
        } else
            ad_jvp_linear(b, n, t, dy);
        return;
    }
    case TS_OP_SORT: /* the tangent, permuted as the values were */
        if (t[0])
            dy[0] = ad_gather(b, ad_flat(b, t[0]), sort_pos(b, n), 0);
        return;
    default: ad_jvp_linear(b, n, t, dy);
    }
}
