/* rules_reduce.c — derivatives of the reductions: sum (a broadcast back),
 * max/min (to the elements equal to the result, ties sharing equally, as
 * JAX), prod (the product of the other elements, from two exclusive running
 * products, so zeros are exact). Running folds are in rules_scan.c, windows
 * in rules_window.c. */
#include "autodiff/ad_int.h"

#include <string.h>

/* x's axes that n (a reduction over "axes") keeps, in order; returns count. */
static int kept_axes(const ts_node *n, int64_t *kept)
{
    int na = 0, r = n->in[0]->type.rank, k = 0;
    const int64_t *axes = ts_node_ints(n, "axes", &na);
    for (int i = 0; i < r; i++) {
        bool red = false;
        for (int j = 0; j < na; j++) red |= axes[j] == i;
        if (!red) kept[k++] = i;
    }
    return k;
}

static ts_value *back(ts_builder *b, const ts_node *n, ts_value *v)
{
    int64_t kept[TS_MAX_RANK];
    kept_axes(n, kept);
    const ts_type *x = &n->in[0]->type;
    return ad_broadcast(b, v, x->rank, x->dims, kept);
}

static ts_value *sum_axes(ts_builder *b, const ts_node *n, ts_value *v)
{
    int na = 0;
    const int64_t *axes = ts_node_ints(n, "axes", &na);
    return ts_b_reduce(b, TS_OP_REDUCE_SUM, v, na, axes, false);
}

/* max/min: 1 where x equals the result, as x's dtype. */
static ts_value *hits(ts_builder *b, const ts_node *n) { return ad_eq(b, n->in[0], back(b, n, n->out[0])); }

/* prod: for every element of x, the product of the other elements of its
 * reduction group: reduced axes moved last and flattened, then the
 * exclusive running products from both ends multiplied. */
static ts_value *prod_others(ts_builder *b, const ts_node *n)
{
    ts_value *x = n->in[0];
    const ts_type *t = &x->type;
    int na = 0;
    const int64_t *axes = ts_node_ints(n, "axes", &na);
    int64_t perm[TS_MAX_RANK], inv[TS_MAX_RANK];
    int k = kept_axes(n, perm);
    memcpy(perm + k, axes, sizeof *axes * (size_t)na);
    for (int i = 0; i < k + na; i++)
        for (int j = i + 1; j < k + na; j++)   /* reduced axes in x's order */
            if (i >= k && perm[j] < perm[i]) {
                int64_t q = perm[i];
                perm[i] = perm[j];
                perm[j] = q;
            }
    ts_dim tdims[TS_MAX_RANK], flat[TS_MAX_RANK];
    for (int i = 0; i < t->rank; i++) tdims[i] = t->dims[perm[i]], inv[perm[i]] = i;
    memcpy(flat, tdims, sizeof *flat * (size_t)k);
    flat[k] = ad_dims_prod(b, tdims, k, t->rank);
    ts_value *xr = ts_b_reshape(b, ts_b_transpose(b, x, perm), k + 1, flat);
    ts_value *o = ad_mul(b, ad_cumulative(b, xr, "prod", k, true, false), ad_cumulative(b, xr, "prod", k, true, true));
    return ts_b_transpose(b, ts_b_reshape(b, o, t->rank, tdims), inv);
}

void ad_vjp_reduce(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx)
{
    ts_value *c = ct[0];
    if (!c) return;
    switch (n->op) {
    case TS_OP_REDUCE_SUM: dx[0] = back(b, n, c); return;
    case TS_OP_REDUCE_MAX:
    case TS_OP_REDUCE_MIN: {
        ts_value *h = hits(b, n);
        dx[0] = ad_mul(b, h, back(b, n, ad_div(b, c, sum_axes(b, n, h))));
        return;
    }
    case TS_OP_REDUCE_PROD: dx[0] = ad_mul(b, prod_others(b, n), back(b, n, c)); return;
    default:
        ts_builder_fail(b, TS_ERR_INTERNAL, "autodiff: %s is not a reduction rule", ts_op_get(n->op)->name);
    }
}

void ad_jvp_reduce(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy)
{
    if (!t[0]) return;
    switch (n->op) {
    case TS_OP_REDUCE_MAX:
    case TS_OP_REDUCE_MIN: {
        ts_value *h = hits(b, n);
        dy[0] = ad_div(b, sum_axes(b, n, ad_mul(b, h, t[0])), sum_axes(b, n, h));
        return;
    }
    case TS_OP_REDUCE_PROD: dy[0] = sum_axes(b, n, ad_mul(b, prod_others(b, n), t[0])); return;
    default: ad_jvp_linear(b, n, t, dy);
    }
}
