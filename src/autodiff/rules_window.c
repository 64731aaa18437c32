/* rules_window.c — derivatives of reduce_window. sum: the cotangent spread
 * back over each window, as a windowed sum of the cotangent dilated by the
 * strides (the transposed window). max/min: one window tap at a time: the
 * tap's elements (a strided slice of the padded input) that equal the
 * result share its cotangent (ties equally, as reduce_max), padded back to
 * where they came from. Pad amounts are constants, so sizes may be symbolic
 * only where they cancel (a batch axis the window does not cover). */
#include "autodiff/ad_int.h"

#include <math.h>
#include <string.h>

#define MAX_TAPS 256

typedef struct win {
    int r;
    const int64_t *w, *st, *dil, *lo, *hi;
} win;

static win win_read(const ts_node *n)
{
    win a;
    a.w = ts_node_ints(n, "window", &a.r);
    a.st = ts_node_ints(n, "strides", &a.r);
    a.dil = ts_node_ints(n, "dilations", &a.r);
    a.lo = ts_node_ints(n, "pad_lo", &a.r);
    a.hi = ts_node_ints(n, "pad_hi", &a.r);
    return a;
}

static bool constant(ts_builder *b, ts_dim d, int64_t *out)
{
    if (ts_dim_is_const(d)) return *out = d.c, true;
    ts_builder_fail(b, TS_ERR_UNSUPPORTED, "autodiff: reduce_window: the gradient needs the sizes along the "
                    "window's axes to be known");
    return false;
}

/* (no - 1) s + 1 + off: where the last output of a window dim lands. */
static ts_dim reach(ts_builder *b, ts_dim no, int64_t s, int64_t off)
{
    return ad_dim(b, ts_dim_add, ad_dim(b, ts_dim_mul, ad_dim(b, ts_dim_sub, no, ts_dim_const(1)), ts_dim_const(s)),
                  ts_dim_const(1 + off));
}

static ts_value *sum_back(ts_builder *b, const ts_node *n, ts_value *ct)
{
    win a = win_read(n);
    const ts_type *x = &n->in[0]->type, *y = &n->out[0]->type;
    int64_t plo[TS_MAX_RANK], phi[TS_MAX_RANK], pin[TS_MAX_RANK], ones[TS_MAX_RANK], zeros[TS_MAX_RANK];
    for (int i = 0; i < a.r; i++) {
        if (ts_dim_eq(y->dims[i], ts_dim_const(0))) return ad_zeros_like(b, n->in[0]);
        int64_t span = (a.w[i] - 1) * a.dil[i];
        plo[i] = span - a.lo[i];
        /* hi = n + span - plo - ((no - 1) s + 1) */
        ts_dim h = ad_dim(b, ts_dim_sub, ad_dim(b, ts_dim_add, x->dims[i], ts_dim_const(span - plo[i])),
                          reach(b, y->dims[i], a.st[i], 0));
        if (!constant(b, h, &phi[i])) return NULL;
        pin[i] = a.st[i] - 1, ones[i] = 1, zeros[i] = 0;
    }
    ts_graph *g = ts_builder_graph(b);
    ts_attr *wa = ts_b_attrs(b, TS_OP_REDUCE_WINDOW);
    if (!wa) return NULL;
    ts_status s = ts_attr_set_enum(g, TS_OP_REDUCE_WINDOW, wa, "kind", "sum");
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_REDUCE_WINDOW, wa, "window", a.r, a.w);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_REDUCE_WINDOW, wa, "strides", a.r, ones);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_REDUCE_WINDOW, wa, "dilations", a.r, a.dil);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_REDUCE_WINDOW, wa, "pad_lo", a.r, zeros);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_REDUCE_WINDOW, wa, "pad_hi", a.r, zeros);
    if (s != TS_OK) return ts_builder_fail(b, s, "reduce_window: bad attributes"), NULL;
    ts_value *p = ad_pad(b, ct, NULL, plo, phi, pin);
    return p ? ts_b_node(b, TS_OP_REDUCE_WINDOW, 1, &p, wa) : NULL;
}

/* The taps of a max/min window: where each starts in the padded input,
 * and which outputs chose it (1 where the tap's element equals the result),
 * with their count. */
typedef struct taps {
    int n;
    ts_dim start[MAX_TAPS][TS_MAX_RANK], limit[MAX_TAPS][TS_MAX_RANK];
    ts_value *hit[MAX_TAPS];
    ts_value *count;
} taps;

static bool find_taps(ts_builder *b, const ts_node *n, taps *t)
{
    win a = win_read(n);
    ts_value *x = n->in[0], *y = n->out[0];
    int64_t total = 1, zeros[TS_MAX_RANK], k[TS_MAX_RANK];
    for (int i = 0; i < a.r; i++) total *= a.w[i], zeros[i] = 0, k[i] = 0;
    if (total > MAX_TAPS) {
        ts_builder_fail(b, TS_ERR_UNSUPPORTED, "autodiff: reduce_window max/min over %lld elements: the gradient "
                        "takes at most %d", (long long)total, MAX_TAPS);
        return false;
    }
    bool max = strcmp(ts_node_enum_name(n, "kind"), "max") == 0;
    ts_value *xp = ad_pad(b, x, ad_scalar(b, x, max ? -INFINITY : INFINITY), a.lo, a.hi, zeros);
    t->n = (int)total, t->count = NULL;
    for (int q = 0; q < t->n; q++) {
        for (int i = 0; i < a.r; i++) {
            t->start[q][i] = ts_dim_const(k[i] * a.dil[i]);
            t->limit[q][i] = reach(b, y->type.dims[i], a.st[i], k[i] * a.dil[i]);
        }
        ts_value *h = ts_b_binary(b, TS_OP_EQ, ts_b_slice(b, xp, t->start[q], t->limit[q], a.st), y);
        t->hit[q] = ts_b_cast(b, h, y->type.dtype);
        t->count = ad_add(b, t->count, t->hit[q]);
        for (int i = a.r - 1; i >= 0 && ++k[i] == a.w[i]; i--) k[i] = 0;
    }
    return ts_builder_status(b, NULL) == TS_OK;
}

static ts_value *chooser_back(ts_builder *b, const ts_node *n, ts_value *ct, taps *tp)
{
    const taps *t = tp;
    win a = win_read(n);
    const ts_type *x = &n->in[0]->type;
    ts_value *share = ad_div(b, ct, t->count), *dxp = NULL;
    ts_dim plen[TS_MAX_RANK], start[TS_MAX_RANK], limit[TS_MAX_RANK];
    int64_t lo[TS_MAX_RANK], hi[TS_MAX_RANK], in[TS_MAX_RANK];
    for (int i = 0; i < a.r; i++) {
        plen[i] = ad_dim(b, ts_dim_add, x->dims[i], ts_dim_const(a.lo[i] + a.hi[i]));
        start[i] = ts_dim_const(a.lo[i]);
        limit[i] = ad_dim(b, ts_dim_add, x->dims[i], start[i]);
        in[i] = a.st[i] - 1;
    }
    for (int q = 0; q < t->n; q++) {
        for (int i = 0; i < a.r; i++) {
            lo[i] = t->start[q][i].c;
            if (!constant(b, ad_dim(b, ts_dim_sub, plen[i], t->limit[q][i]), &hi[i])) return NULL;
        }
        dxp = ad_add(b, dxp, ad_pad(b, ad_mul(b, t->hit[q], share), NULL, lo, hi, in));
    }
    return ts_b_slice(b, dxp, start, limit, NULL);
}

static ts_value *chooser_tangent(ts_builder *b, const ts_node *n, ts_value *tx, const taps *tq)
{
    const taps *t = tq;
    win a = win_read(n);
    int64_t zeros[TS_MAX_RANK];
    for (int i = 0; i < a.r; i++) zeros[i] = 0;
    ts_value *tp = ad_pad(b, tx, NULL, a.lo, a.hi, zeros), *sum = NULL;
    for (int q = 0; q < t->n; q++)
        sum = ad_add(b, sum, ad_mul(b, t->hit[q], ts_b_slice(b, tp, t->start[q], t->limit[q], a.st)));
    return ad_div(b, sum, t->count);
}

/* max/min: the taps (too big for the stack), then the rule. */
static ts_value *chooser(ts_builder *b, const ts_node *n, ts_value *v, bool reverse)
{
    taps *t = ts_mem_alloc(sizeof *t);
    ts_value *r = NULL;
    if (!t) ts_builder_fail(b, TS_ERR_OOM, "out of memory");
    else if (find_taps(b, n, t)) r = reverse ? chooser_back(b, n, v, t) : chooser_tangent(b, n, v, t);
    ts_mem_free(t);
    return r;
}

void ad_vjp_window(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx)
{
    (void)want;
    if (!ct[0]) return;
    dx[0] = strcmp(ts_node_enum_name(n, "kind"), "sum") == 0 ? sum_back(b, n, ct[0]) : chooser(b, n, ct[0], true);
}

void ad_jvp_window(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy)
{
    if (!t[0]) return;
    dy[0] = strcmp(ts_node_enum_name(n, "kind"), "sum") == 0 ? ad_rebuild(b, n, 1, t) : chooser(b, n, t[0], false);
}
