/* ad_util.c — small builder helpers the autodiff rules share: zeros, sums
 * that read NULL as zero, scalars in an operand's dtype, a node rebuilt on
 * new operands, dims as run-time values. */
#include "autodiff/ad_int.h"

#include <stdio.h>
#include <string.h>

bool ad_is_float(const ts_value *v) { return v && ts_dtype_is_float(v->type.dtype); }

ts_value *ad_zeros_like(ts_builder *b, const ts_value *v)
{
    return ts_b_full(b, v->type.dtype, 0.0, v->type.rank, v->type.dims);
}

ts_value *ad_add(ts_builder *b, ts_value *x, ts_value *y)
{
    if (!x) return y;
    if (!y) return x;
    return ts_b_binary(b, TS_OP_ADD, x, y);
}

ts_value *ad_scalar(ts_builder *b, const ts_value *x, double v) { return ts_b_scalar(b, x->type.dtype, v); }

ts_value *ad_mul(ts_builder *b, ts_value *x, ts_value *y) { return ts_b_binary(b, TS_OP_MUL, x, y); }
ts_value *ad_mulc(ts_builder *b, ts_value *x, double v) { return ad_mul(b, x, ad_scalar(b, x, v)); }
ts_value *ad_div(ts_builder *b, ts_value *x, ts_value *y) { return ts_b_binary(b, TS_OP_DIV, x, y); }
ts_value *ad_neg(ts_builder *b, ts_value *x) { return ts_b_unary(b, TS_OP_NEG, x); }

ts_attr *ad_attrs_copy(ts_builder *b, const ts_node *n)
{
    const ts_op_info *info = ts_op_get(n->op);
    if (!info->n_attrs) return NULL;
    ts_attr *a = ts_b_attrs(b, n->op);
    /* same graph, same arena: the payloads can be shared */
    if (a) memcpy(a, n->attrs, sizeof *a * (size_t)info->n_attrs);
    return a;
}

ts_value *ad_rebuild(ts_builder *b, const ts_node *n, int n_in, ts_value *const *in)
{
    ts_attr *a = ad_attrs_copy(b, n);
    if (!a && ts_op_get(n->op)->n_attrs) return NULL;
    return ts_b_node(b, n->op, n_in, in, a);
}

ts_value *ad_broadcast(ts_builder *b, ts_value *x, int r, const ts_dim *dims, const int64_t *axes)
{
    if (!x) return NULL;
    ts_graph *g = ts_builder_graph(b);
    ts_attr *a = ts_b_attrs(b, TS_OP_BROADCAST);
    if (!a) return NULL;
    ts_status s = ts_attr_set_dims(g, TS_OP_BROADCAST, a, "shape", r, dims);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_BROADCAST, a, "axes", x->type.rank, axes);
    if (s != TS_OK) return ts_builder_fail(b, s, "broadcast: bad attributes"), NULL;
    return ts_b_node(b, TS_OP_BROADCAST, 1, &x, a);
}

ts_value *ad_dim_value(ts_builder *b, ts_dim d)
{
    if (ts_dim_is_const(d)) return ts_b_scalar(b, TS_DTYPE_I64, (double)d.c);
    /* sum of d ones: the one primitive way to read a symbolic size */
    const int64_t axis = 0;
    return ts_b_reduce(b, TS_OP_REDUCE_SUM, ts_b_full(b, TS_DTYPE_I64, 1.0, 1, &d), 1, &axis, false);
}

ts_dim ad_dim(ts_builder *b, ts_status (*f)(ts_symtab *, ts_dim, ts_dim, ts_dim *, ts_err *), ts_dim x, ts_dim y)
{
    ts_err e = {0};
    ts_dim r = ts_dim_const(0);
    if (f(ts_builder_graph(b)->syms, x, y, &r, &e) != TS_OK) ts_builder_fail(b, e.code, "%s", e.msg);
    return r;
}

ts_value *ad_pad(ts_builder *b, ts_value *x, ts_value *v, const int64_t *lo, const int64_t *hi,
                 const int64_t *interior)
{
    if (!x) return NULL;
    ts_graph *g = ts_builder_graph(b);
    int r = x->type.rank;
    ts_attr *a = ts_b_attrs(b, TS_OP_PAD);
    if (!a) return NULL;
    ts_status s = ts_attr_set_ints(g, TS_OP_PAD, a, "lo", r, lo);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_PAD, a, "hi", r, hi);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_PAD, a, "interior", r, interior);
    if (s != TS_OK) return ts_builder_fail(b, s, "pad: bad attributes"), NULL;
    ts_value *in[2] = {x, v ? v : ad_scalar(b, x, 0.0)};
    return ts_b_node(b, TS_OP_PAD, 2, in, a);
}

ts_dim ad_dims_prod(ts_builder *b, const ts_dim *dims, int lo, int hi)
{
    ts_dim p = ts_dim_const(1);
    ts_graph *g = ts_builder_graph(b);
    for (int i = lo; i < hi; i++) {
        ts_err e = {0};
        if (ts_dim_mul(g->syms, p, dims[i], &p, &e) != TS_OK) {
            ts_builder_fail(b, e.code, "%s", e.msg);
            return ts_dim_const(0);
        }
    }
    return p;
}

/* ---- indexing along one axis ------------------------------------------------------- */

/* Flat positions in x (shape P.. x D x Q.., D at axis) of i3, an integer
 * [P, J, Q] tensor of indices along axis; i64 [P, J, Q]. */
ts_value *ad_flat_pos(ts_builder *b, const ts_type *x, int64_t axis, ts_value *i3)
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
void ad_pjq(ts_builder *b, const ts_type *x, int64_t axis, const ts_type *idx, ts_dim *d3)
{
    d3[0] = ad_dims_prod(b, x->dims, 0, (int)axis);
    d3[1] = ad_dims_prod(b, idx->dims, 0, idx->rank);
    d3[2] = ad_dims_prod(b, x->dims, (int)axis + 1, x->rank);
}

ts_value *ad_scatter(ts_builder *b, ts_value *x, ts_value *idx, ts_value *upd, const char *combine)
{
    ts_attr *a = ts_b_attrs(b, TS_OP_SCATTER);
    if (!a) return NULL;
    ts_status s = ts_attr_set_enum(ts_builder_graph(b), TS_OP_SCATTER, a, "combine", combine);
    if (s != TS_OK) return ts_builder_fail(b, s, "scatter: bad attributes"), NULL;
    ts_value *in[3] = {x, idx, upd};
    return ts_b_node(b, TS_OP_SCATTER, 3, in, a);
}

ts_value *ad_gather(ts_builder *b, ts_value *x, ts_value *idx, int64_t axis)
{
    ts_attr *a = ts_b_attrs(b, TS_OP_GATHER);
    if (!a) return NULL;
    ts_status s = ts_attr_set_int(ts_builder_graph(b), TS_OP_GATHER, a, "axis", axis);
    if (s != TS_OK) return ts_builder_fail(b, s, "gather: bad attributes"), NULL;
    ts_value *in[2] = {x, idx};
    return ts_b_node(b, TS_OP_GATHER, 2, in, a);
}

/* v viewed as one axis. */
ts_value *ad_flat(ts_builder *b, ts_value *v)
{
    ts_dim n = ad_dims_prod(b, v->type.dims, 0, v->type.rank);
    return ts_b_reshape(b, v, 1, &n);
}

ts_value *ad_cumulative(ts_builder *b, ts_value *x, const char *kind, int64_t axis, bool exclusive, bool reverse)
{
    ts_graph *g = ts_builder_graph(b);
    ts_attr *a = ts_b_attrs(b, TS_OP_CUMULATIVE);
    if (!a) return NULL;
    ts_status s = ts_attr_set_enum(g, TS_OP_CUMULATIVE, a, "kind", kind);
    if (s == TS_OK) s = ts_attr_set_int(g, TS_OP_CUMULATIVE, a, "axis", axis);
    if (s == TS_OK) s = ts_attr_set_int(g, TS_OP_CUMULATIVE, a, "exclusive", exclusive);
    if (s == TS_OK) s = ts_attr_set_int(g, TS_OP_CUMULATIVE, a, "reverse", reverse);
    if (s != TS_OK) return ts_builder_fail(b, s, "cumulative: bad attributes"), NULL;
    return ts_b_node(b, TS_OP_CUMULATIVE, 1, &x, a);
}

ts_value *ad_reverse(ts_builder *b, ts_value *x, int64_t axis)
{
    if (!x) return NULL;
    ts_attr *a = ts_b_attrs(b, TS_OP_REVERSE);
    if (!a) return NULL;
    ts_status s = ts_attr_set_ints(ts_builder_graph(b), TS_OP_REVERSE, a, "axes", 1, &axis);
    if (s != TS_OK) return ts_builder_fail(b, s, "reverse: bad attributes"), NULL;
    return ts_b_node(b, TS_OP_REVERSE, 1, &x, a);
}

ts_value *ad_prod_others(ts_builder *b, ts_value *z, ts_value *xs, ts_value *zeros, ts_value *rest)
{
    if (!z || !xs || !zeros || !rest) return NULL;
    ts_value *one = ad_scalar(b, xs, 1.0), *zero = ad_scalar(b, xs, 0.0);
    /* a zero here: the rest if it is the only one; else the rest over this
     * factor if there is no zero at all (xs: no division by zero even in
     * the branch not taken, whose derivative would be NaN times 0) */
    ts_value *if_zero = ts_b_select(b, ts_b_binary(b, TS_OP_EQ, zeros, one), rest, zero);
    ts_value *if_not = ts_b_select(b, ts_b_binary(b, TS_OP_EQ, zeros, zero), ad_div(b, rest, xs), zero);
    return ts_b_select(b, z, if_zero, if_not);
}

ts_value *ad_eq(ts_builder *b, ts_value *x, ts_value *y)
{
    return ts_b_cast(b, ts_b_binary(b, TS_OP_EQ, x, y), x->type.dtype);
}

/* ---- the drivers' shared steps ------------------------------------------------------- */

ad_mark ad_mark_body(const ts_graph *g)
{
    ad_mark m = {g->body->last, g->body->n_params};
    return m;
}

void ad_restore(ts_graph *g, ad_mark m)
{
    /* everything built since m was appended after m.last, and nothing
     * before it refers to it: cut the list there (the arena keeps the
     * bytes until the graph goes) */
    ts_block *body = g->body;
    if (m.last) m.last->next = NULL;
    else body->first = NULL;
    body->last = m.last;
    body->n_params = m.n_params;
}

ts_status ad_wrt(const ts_graph *g, int n_wrt, const int *wrt, int **out, int *n, ts_err *err)
{
    if (!g) return ts_err_set(err, TS_ERR_INVALID_ARG, "autodiff: NULL graph");
    if (wrt && n_wrt < 0) return ts_err_set(err, TS_ERR_INVALID_ARG, "autodiff: %d inputs to differentiate", n_wrt);
    const ts_block *body = g->body;
    int cap = wrt ? n_wrt : body->n_params;
    int *l = ts_mem_alloc(sizeof *l * (size_t)(cap > 0 ? cap : 1));
    if (!l) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    int k = 0;
    if (!wrt) {
        for (int i = 0; i < body->n_params; i++)
            if (ad_is_float(body->params[i])) l[k++] = i;
    } else {
        for (int j = 0; j < n_wrt; j++) {
            int i = wrt[j];
            const char *why = i < 0 || i >= body->n_params ? "is not an input"
                              : !ad_is_float(body->params[i]) ? "is not a floating-point input"
                                                                : NULL;
            for (int q = 0; q < k && !why; q++)
                if (l[q] == i) why = "is listed twice";
            if (why) {
                ts_mem_free(l);
                return ts_err_set(err, TS_ERR_INVALID_ARG, "autodiff: input %d of @%s %s", i, g->name, why);
            }
            l[k++] = i;
        }
    }
    *out = l, *n = k;
    return TS_OK;
}

static bool taken(const ts_block *blk, const char *s)
{
    for (int i = 0; i < blk->n_params; i++)
        if (blk->params[i]->name && strcmp(blk->params[i]->name, s) == 0) return true;
    for (const ts_node *n = blk->first; n; n = n->next) {
        for (int i = 0; i < n->n_out; i++)
            if (n->out[i]->name && strcmp(n->out[i]->name, s) == 0) return true;
        for (int r = 0; r < n->n_regions; r++)
            if (taken(n->regions[r], s)) return true;
    }
    return false;
}

void ad_name(ts_builder *b, ts_value *v, const char *prefix, const ts_value *base, int k)
{
    if (!v || v->name) return;
    ts_graph *g = ts_builder_graph(b);
    char s[160];
    if (base->name && ts_ir_name_ok(base->name, strlen(base->name), false))
        snprintf(s, sizeof s, "%s%.100s", prefix, base->name);
    else snprintf(s, sizeof s, "%s%d", prefix, k);
    size_t len = strlen(s);
    for (int q = 2; taken(g->body, s); q++) snprintf(s + len, sizeof s - len, "_%d", q);
    if (!(v->name = ts_arena_strdup(g->arena, s))) ts_builder_fail(b, TS_ERR_OOM, "out of memory");
}
