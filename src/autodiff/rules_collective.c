/* rules_collective.c — derivatives of the collectives. all_gather and
 * all_to_all move elements: their transposes swap gathering and scattering.
 * all_reduce and reduce_scatter fold across ranks; with F the fold (all of
 * x for all_reduce, each rank's slice for reduce_scatter), G its way back
 * to x's shape (nothing, or all_gather) and T the transpose of "every rank
 * receives it" (all_reduce(sum), or nothing):
 *
 * - sum:     dx = G(T(c))                   dy = F_sum(t)
 * - max/min: dx = h * G(T(c) / n)           dy = F_sum(h t) / n
 *            with h = [x == G(y)], n = F_sum(h): ties share, as reduce_max
 * - prod:    dx = o * G(T(c))               dy = F_sum(o t)
 *            with o the product of the other ranks' elements, exact with
 *            zeros: from F_sum of the zero count and F_prod of x with its
 *            zeros made ones.
 *
 * With one process (world = 1) every collective is the identity, which is
 * what the finite-difference table can check here. */
#include "autodiff/ad_int.h"

#include <string.h>

/* op(x) with kind (all_reduce, reduce_scatter) and the axis of n. */
static ts_value *coll(ts_builder *b, ts_op op, const ts_node *n, ts_value *x, const char *kind)
{
    if (!x) return NULL;
    ts_graph *g = ts_builder_graph(b);
    ts_attr *a = ts_b_attrs(b, op);
    if (!a) return NULL;
    ts_status s = TS_OK;
    if (op != TS_OP_ALL_GATHER) s = ts_attr_set_enum(g, op, a, "kind", kind);
    if (s == TS_OK && op != TS_OP_ALL_REDUCE) s = ts_attr_set_int(g, op, a, "axis", ts_node_int(n, "axis"));
    if (s != TS_OK) return ts_builder_fail(b, s, "%s: bad attributes", ts_op_get(op)->name), NULL;
    return ts_b_node(b, op, 1, &x, a);
}

/* F (the fold as n does it, of kind), G (back to x's shape), T. */
static ts_value *fold(ts_builder *b, const ts_node *n, ts_value *v, const char *kind)
{
    return coll(b, n->op, n, v, kind);
}
static ts_value *back(ts_builder *b, const ts_node *n, ts_value *v)
{
    return n->op == TS_OP_REDUCE_SCATTER ? coll(b, TS_OP_ALL_GATHER, n, v, NULL) : v;
}
static ts_value *to_ranks(ts_builder *b, const ts_node *n, ts_value *v)
{
    return n->op == TS_OP_ALL_REDUCE ? coll(b, TS_OP_ALL_REDUCE, n, v, "sum") : v;
}

/* max/min: h = [x == G(y)] and n = F_sum(h). */
static ts_value *hits(ts_builder *b, const ts_node *n, ts_value **count)
{
    ts_value *h = ad_eq(b, n->in[0], back(b, n, n->out[0]));
    *count = fold(b, n, h, "sum");
    return h;
}

/* prod: every element's product over the other ranks. */
static ts_value *others(ts_builder *b, const ts_node *n)
{
    ts_value *x = n->in[0];
    ts_value *z = ts_b_binary(b, TS_OP_EQ, x, ad_scalar(b, x, 0.0));
    ts_value *xs = ts_b_select(b, z, ad_scalar(b, x, 1.0), x);
    ts_value *zeros = back(b, n, fold(b, n, ts_b_cast(b, z, x->type.dtype), "sum"));
    return ad_prod_others(b, z, xs, zeros, back(b, n, fold(b, n, xs, "prod")));
}

void ad_vjp_collective(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx)
{
    (void)want;
    ts_value *c = ct[0];
    if (!c) return;
    ts_graph *g = ts_builder_graph(b);
    ts_attr *a = NULL;
    ts_status s = TS_OK;
    switch (n->op) {
    case TS_OP_ALL_REDUCE:
    case TS_OP_REDUCE_SCATTER: {
        const char *kind = ts_node_enum_name(n, "kind");
        if (strcmp(kind, "sum") == 0) dx[0] = back(b, n, to_ranks(b, n, c));
        else if (strcmp(kind, "prod") == 0) dx[0] = ad_mul(b, others(b, n), back(b, n, to_ranks(b, n, c)));
        else {
            ts_value *cnt = NULL, *h = hits(b, n, &cnt);
            dx[0] = ad_mul(b, h, back(b, n, ad_div(b, to_ranks(b, n, c), cnt)));
        }
        return;
    }
    case TS_OP_ALL_GATHER: /* -> reduce_scatter(sum) along the same axis */
        dx[0] = coll(b, TS_OP_REDUCE_SCATTER, n, c, "sum");
        return;
    case TS_OP_ALL_TO_ALL:
        if ((a = ts_b_attrs(b, n->op))) {
            s = ts_attr_set_int(g, n->op, a, "split_axis", ts_node_int(n, "concat_axis"));
            if (s == TS_OK) s = ts_attr_set_int(g, n->op, a, "concat_axis", ts_node_int(n, "split_axis"));
            if (s != TS_OK) ts_builder_fail(b, s, "all_to_all: bad attributes");
            else dx[0] = ts_b_node(b, n->op, 1, &c, a);
        }
        return;
    default: ts_builder_fail(b, TS_ERR_INTERNAL, "autodiff: %s is not a collective", ts_op_get(n->op)->name);
    }
}

void ad_jvp_collective(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy)
{
    if (!t[0]) return;
    const char *kind = n->op == TS_OP_ALL_REDUCE || n->op == TS_OP_REDUCE_SCATTER ? ts_node_enum_name(n, "kind") : "sum";
    if (strcmp(kind, "sum") == 0) ad_jvp_linear(b, n, t, dy);
    else if (strcmp(kind, "prod") == 0) dy[0] = fold(b, n, ad_mul(b, others(b, n), t[0]), "sum");
    else {
        ts_value *cnt = NULL, *h = hits(b, n, &cnt);
        dy[0] = ad_div(b, fold(b, n, ad_mul(b, h, t[0]), "sum"), cnt);
    }
}
