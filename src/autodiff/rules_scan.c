/* rules_scan.c — derivatives of the running folds (cumulative). Every
 * direction is brought to the inclusive forward fold: reverse=1 reverses x
 * along the axis first, and exclusive=1 is the inclusive fold shifted one
 * place (its cotangent shifted back, its tangent shifted on).
 *
 * - sum: linear; its transpose is the same fold the other way.
 * - max/min: each y[k] is one element of x, the last one at or before k
 *   that attains it (the index torch.cummax returns); its cotangent goes
 *   there (a scatter-add), its tangent comes from there (a gather). Ties
 *   go to that one element, not split as reduce_max's (D175).
 * - prod: dy[k]/dx[j] = P[j] * x[j+1] * ... * x[k] with P the exclusive
 *   running product, so zeros stay exact. Summed over k this is a linear
 *   recurrence, G[j] = c[j] + x[j+1] G[j+1], solved in log2(n) doubling
 *   steps of shifted multiply-adds (Hillis-Steele); n must be a constant
 *   along the axis. */
#include "autodiff/ad_int.h"

#include <string.h>

typedef struct scan {
    const char *kind;
    int64_t axis;
    bool excl, rev;
    ts_value *x;   /* x, reversed when rev */
    ts_value *y;   /* the inclusive fold of that x */
} scan;

/* v moved `by` places along axis (by > 0: towards the end), zeros in. */
static ts_value *shift(ts_builder *b, ts_value *v, int64_t axis, int64_t by)
{
    if (!v) return NULL;
    const ts_type *t = &v->type;
    ts_dim n = t->dims[axis], start[TS_MAX_RANK], limit[TS_MAX_RANK];
    int64_t k = by > 0 ? by : -by, lo[TS_MAX_RANK] = {0}, hi[TS_MAX_RANK] = {0}, in[TS_MAX_RANK] = {0};
    if (ts_dim_is_const(n) && n.c <= k) return ad_zeros_like(b, v);
    for (int i = 0; i < t->rank; i++) start[i] = ts_dim_const(0), limit[i] = t->dims[i];
    if (by > 0) limit[axis] = ad_dim(b, ts_dim_sub, n, ts_dim_const(k)), lo[axis] = k;
    else start[axis] = ts_dim_const(k), hi[axis] = k;
    return ad_pad(b, ts_b_slice(b, v, start, limit, NULL), NULL, lo, hi, in);
}

static ts_value *flip(ts_builder *b, const scan *s, ts_value *v) { return s->rev ? ad_reverse(b, v, s->axis) : v; }

static scan scan_of(ts_builder *b, const ts_node *n)
{
    scan s = {ts_node_enum_name(n, "kind"), ts_node_int(n, "axis"), ts_node_int(n, "exclusive") != 0,
              ts_node_int(n, "reverse") != 0, NULL, NULL};
    s.x = flip(b, &s, n->in[0]);
    s.y = s.excl ? ad_cumulative(b, s.x, s.kind, s.axis, false, false) : flip(b, &s, n->out[0]);
    return s;
}

/* max/min: the flat position in x of the element each y[k] equals. */
static ts_value *source_pos(ts_builder *b, const scan *s)
{
    const ts_type *t = &s->x->type;
    ts_value *k = ts_b_iota(b, TS_DTYPE_I64, t->rank, t->dims, s->axis);
    /* x[0] is always its own fold, so 0 is a safe "not here" */
    ts_value *at = ts_b_select(b, ts_b_binary(b, TS_OP_EQ, s->x, s->y), k, ad_zeros_like(b, k));
    ts_value *src = ad_cumulative(b, at, "max", s->axis, false, false);
    ts_dim d3[3];
    ts_type one = *t;
    one.rank = 1, one.dims = &t->dims[s->axis];
    ad_pjq(b, t, s->axis, &one, d3);
    return ad_flat_pos(b, t, s->axis, ts_b_reshape(b, src, 3, d3));
}

/* The solution G of G[j] = bv[j] + av[j] G[j-1] (G[-1] = 0) along axis:
 * doubling, each step folding in the terms 2^i places back. */
static ts_value *linear_recurrence(ts_builder *b, ts_value *av, ts_value *bv, int64_t axis)
{
    ts_dim n = bv->type.dims[axis];
    if (!ts_dim_is_const(n)) {
        ts_builder_fail(b, TS_ERR_UNSUPPORTED,
                        "autodiff: cumulative with kind=prod along a symbolic axis has no derivative rule");
        return NULL;
    }
    for (int64_t k = 1; k < n.c && bv; k *= 2) {
        bv = ad_add(b, bv, ad_mul(b, av, shift(b, bv, axis, k)));
        if (k * 2 < n.c) av = ad_mul(b, av, shift(b, av, axis, k));
    }
    return bv;
}

/* The inclusive forward fold's cotangent rule on s. */
static ts_value *vjp_inclusive(ts_builder *b, const scan *s, ts_value *c)
{
    if (strcmp(s->kind, "prod") == 0) {
        /* G[j] = c[j] + x[j+1] G[j+1], run backwards as a forward recurrence */
        ts_value *next = ad_reverse(b, shift(b, s->x, s->axis, -1), s->axis);
        ts_value *g = ad_reverse(b, linear_recurrence(b, next, ad_reverse(b, c, s->axis), s->axis), s->axis);
        return ad_mul(b, ad_cumulative(b, s->x, "prod", s->axis, true, false), g);
    }
    ts_value *pos = source_pos(b, s);
    return pos ? ad_scatter(b, ad_zeros_like(b, s->x), pos, ts_b_reshape(b, c, 3, pos->type.dims), "add") : NULL;
}

static ts_value *jvp_inclusive(ts_builder *b, const scan *s, ts_value *t)
{
    if (strcmp(s->kind, "prod") == 0) /* H[k] = t[k] P[k] + x[k] H[k-1] */
        return linear_recurrence(b, s->x, ad_mul(b, t, ad_cumulative(b, s->x, "prod", s->axis, true, false)), s->axis);
    const ts_type *xt = &s->x->type;
    return ts_b_reshape(b, ad_gather(b, ad_flat(b, t), source_pos(b, s), 0), xt->rank, xt->dims);
}

void ad_vjp_scan(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx)
{
    (void)want;
    if (!ct[0]) return;
    if (strcmp(ts_node_enum_name(n, "kind"), "sum") == 0) {
        ts_attr *a = ad_attrs_copy(b, n);   /* the same, the other way */
        if (a) a[ts_op_attr_index(TS_OP_CUMULATIVE, "reverse")].i ^= 1, dx[0] = ts_b_node(b, n->op, 1, ct, a);
        return;
    }
    scan s = scan_of(b, n);
    ts_value *c = flip(b, &s, ct[0]);
    if (s.excl) c = shift(b, c, s.axis, -1);   /* y[k] is the inclusive y[k-1] */
    dx[0] = flip(b, &s, vjp_inclusive(b, &s, c));
}

void ad_jvp_scan(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy)
{
    if (!t[0]) return;
    if (strcmp(ts_node_enum_name(n, "kind"), "sum") == 0) {
        dy[0] = ad_rebuild(b, n, 1, t);
        return;
    }
    scan s = scan_of(b, n);
    ts_value *d = jvp_inclusive(b, &s, flip(b, &s, t[0]));
    if (s.excl) d = shift(b, d, s.axis, 1);
    dy[0] = flip(b, &s, d);
}
