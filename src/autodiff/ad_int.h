/* ad_int.h — what the autodiff drivers (grad.c, jvp.c) and the rule files
 * (rules_*.c) share: the rule signatures, the table lookup and small
 * builder helpers that accept NULL for "zero". */
#ifndef TS_AD_INT_H
#define TS_AD_INT_H

#include "autodiff/autodiff.h"
#include "builder/builder.h"

/* Reverse rule of node n: ct[k] is the cotangent of result k (NULL: zero,
 * or not a float); dx[i] receives the cotangent of operand i, of its type,
 * where want[i] (left NULL: nothing flows to it). Failures go to the
 * builder. */
typedef void (*ad_vjp_fn)(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx);
/* Forward rule: t[i] is the tangent of operand i (NULL: zero); dy[k]
 * receives the tangent of result k (left NULL: zero). */
typedef void (*ad_jvp_fn)(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy);

typedef struct ad_rule {
    ts_ad_kind kind;
    ad_vjp_fn vjp;
    ad_jvp_fn jvp;
} ad_rule;

const ad_rule *ad_rule_of(ts_op op);
/* n's rule when derivatives flow through it; NULL when they stop there
 * (and the builder failed, naming n, when n's op has no rule yet). */
const ad_rule *ad_rule_for(ts_builder *b, const ts_node *n);

/* The rules, one pair per family (rules_*.c). */
void ad_vjp_ew(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx);
void ad_jvp_ew(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy);
void ad_vjp_reduce(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx);
void ad_jvp_reduce(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy);
void ad_vjp_layout(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx);
void ad_vjp_index(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx);
void ad_jvp_index(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy);
void ad_vjp_contract(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx);
void ad_jvp_contract(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy);
void ad_vjp_window(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx);
void ad_jvp_window(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy);
void ad_vjp_control(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx);
void ad_jvp_control(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy);
void ad_vjp_scan(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx);
void ad_jvp_scan(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy);
void ad_vjp_collective(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx);
void ad_jvp_collective(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy);
/* A linear node's tangent: the node itself applied to the tangents, a zero
 * tangent standing for a zero operand (layout ops, reduce_sum, collectives). */
void ad_jvp_linear(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy);

/* ---- helpers (ad_util.c) ---------------------------------------------------------- */

bool ad_is_float(const ts_value *v);
/* Zeros of v's type. */
ts_value *ad_zeros_like(ts_builder *b, const ts_value *v);
/* x + y where NULL is zero (NULL + NULL is NULL). */
ts_value *ad_add(ts_builder *b, ts_value *x, ts_value *y);
/* The scalar v in x's dtype. */
ts_value *ad_scalar(ts_builder *b, const ts_value *x, double v);
/* x * y, x * (scalar v), x / y, -x. */
ts_value *ad_mul(ts_builder *b, ts_value *x, ts_value *y);
ts_value *ad_mulc(ts_builder *b, ts_value *x, double v);
ts_value *ad_div(ts_builder *b, ts_value *x, ts_value *y);
ts_value *ad_neg(ts_builder *b, ts_value *x);
/* A fresh copy of n's attributes, to edit before building (NULL when n's
 * op has none, or out of memory: the builder failed then). */
ts_attr *ad_attrs_copy(ts_builder *b, const ts_node *n);
/* x with attributes copied from n (same op): n's node rebuilt on new
 * operands, for the linear ops' tangents. */
ts_value *ad_rebuild(ts_builder *b, const ts_node *n, int n_in, ts_value *const *in);
/* broadcast(x) to the shape dims (rank r), x's axis i going to axes[i]. */
ts_value *ad_broadcast(ts_builder *b, ts_value *x, int r, const ts_dim *dims, const int64_t *axes);
/* The i64 scalar holding dim d (a constant, or a reduction of a broadcast
 * one for a symbolic d, which the run evaluates). */
ts_value *ad_dim_value(ts_builder *b, ts_dim d);
/* f(x, y) over g's symbols (ts_dim_add, ts_dim_sub, ...); fails into the
 * builder. */
ts_dim ad_dim(ts_builder *b, ts_status (*f)(ts_symtab *, ts_dim, ts_dim, ts_dim *, ts_err *), ts_dim x, ts_dim y);
/* pad(x, v) (v NULL: zero) by constant amounts. */
ts_value *ad_pad(ts_builder *b, ts_value *x, ts_value *v, const int64_t *lo, const int64_t *hi,
                 const int64_t *interior);
/* The product of dims[lo..hi) (symbolic allowed); fails into the builder. */
ts_dim ad_dims_prod(ts_builder *b, const ts_dim *dims, int lo, int hi);

/* Indexing along one axis (x viewed as [P, D, Q] around it): the flat
 * positions (p D + i) Q + q in x of i3, an integer [P, J, Q] tensor of
 * indices along axis (i64 [P, J, Q]); d3 receives [P, J, Q] with J the
 * element count of idx; scatter/gather as the primitives; v as one axis. */
ts_value *ad_flat_pos(ts_builder *b, const ts_type *x, int64_t axis, ts_value *i3);
void ad_pjq(ts_builder *b, const ts_type *x, int64_t axis, const ts_type *idx, ts_dim *d3);
ts_value *ad_scatter(ts_builder *b, ts_value *x, ts_value *idx, ts_value *upd, const char *combine);
ts_value *ad_gather(ts_builder *b, ts_value *x, ts_value *idx, int64_t axis);
ts_value *ad_flat(ts_builder *b, ts_value *v);
/* cumulative(x) {kind, axis, exclusive, reverse}; reverse(x) along axis. */
ts_value *ad_cumulative(ts_builder *b, ts_value *x, const char *kind, int64_t axis, bool exclusive, bool reverse);
ts_value *ad_reverse(ts_builder *b, ts_value *x, int64_t axis);
/* The product of the other factors of a product that x (made xs: its
 * zeros as ones; z: where x is zero) enters, exactly with zeros, from
 * zeros (how many factors of x's product are zero, as x's dtype) and rest
 * (the product with zeros made ones). */
ts_value *ad_prod_others(ts_builder *b, ts_value *z, ts_value *xs, ts_value *zeros, ts_value *rest);
/* x == y as x's dtype (1 or 0). */
ts_value *ad_eq(ts_builder *b, ts_value *x, ts_value *y);

/* ---- the drivers' shared steps (ad_util.c) ------------------------------------------ */

/* The body as it was before a transformation, to restore on failure. */
typedef struct ad_mark {
    ts_node *last;
    int n_params;
} ad_mark;
ad_mark ad_mark_body(const ts_graph *g);
void ad_restore(ts_graph *g, ad_mark m);
/* The inputs to differentiate: wrt (checked, no repeats), or every float
 * input when wrt is NULL. *out is ts_mem_alloc'd (free it); count in *n. */
ts_status ad_wrt(const ts_graph *g, int n_wrt, const int *wrt, int **out, int *n, ts_err *err);
/* Name v prefix + base (base: v's own name... or "k"), made unique in g;
 * values already named keep their name. */
void ad_name(ts_builder *b, ts_value *v, const char *prefix, const ts_value *base, int k);

#endif
