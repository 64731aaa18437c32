/* k_reduce.c — interpreter kernels of the reductions: reduce_sum/prod/
 * max/min, argmax/argmin, cumulative and reduce_window.
 * docs/primitives.md is the contract these functions spell out.
 *
 * Every reduction is a fold: acc = identity, then acc = combine(acc, x)
 * for each element, in row-major order. Accumulators live in one of three
 * domains: floats in double (f16, bf16 and f32 are rounded to their dtype
 * once, when the result is stored), signed integers in int64 and unsigned
 * in uint64. Integer sums and products wrap: they are computed modulo 2^64
 * and truncated to the dtype's width on store. */
#include "interp/interp.h"

#include <math.h>
#include <string.h>

typedef enum domain { D_F, D_S, D_U } domain;
typedef enum kind { K_SUM, K_PROD, K_MAX, K_MIN } kind;

typedef union val {
    double f;
    int64_t s;
    uint64_t u;
} val;

static domain domain_of(ts_dtype dt)
{
    if (ts_dtype_is_float(dt)) return D_F;
    return ts_dtype_is_signed(dt) ? D_S : D_U;
}

static val load(domain d, ts_dtype dt, const void *p, int64_t i)
{
    val v;
    if (d == D_F) v.f = ts_elem_get_f64(dt, p, i);
    else if (d == D_S) v.s = ts_elem_get_i64(dt, p, i);
    else v.u = ts_elem_get_u64(dt, p, i);
    return v;
}

static void store(domain d, ts_dtype dt, void *p, int64_t i, val v)
{
    if (d == D_F) ts_elem_set_f64(dt, p, i, v.f);
    else if (d == D_S) ts_elem_set_i64(dt, p, i, v.s);
    else ts_elem_set_u64(dt, p, i, v.u);
}

/* ---- the four folds ------------------------------------------------------ */

/* The dtype's own integer range, so an empty max/min is representable. */
static int64_t smax_of(ts_dtype dt) { return (int64_t)(UINT64_MAX >> (65 - ts_dtype_bits(dt))); }
static uint64_t umax_of(ts_dtype dt) { return UINT64_MAX >> (64 - ts_dtype_bits(dt)); }

/* The value that leaves every element unchanged under combine. */
static val identity(kind k, domain d, ts_dtype dt)
{
    val v = {0};
    bool hi = k == K_MIN;  /* max starts from the bottom, min from the top */
    if (k == K_SUM) return v;
    if (k == K_PROD) {
        if (d == D_F) v.f = 1;
        else v.u = 1;  /* the same bits as int64 1 */
    } else if (d == D_F) {
        v.f = hi ? INFINITY : -INFINITY;
    } else if (d == D_S) {
        v.s = hi ? smax_of(dt) : -smax_of(dt) - 1;
    } else {
        v.u = hi ? umax_of(dt) : 0;
    }
    return v;
}

/* NaN wins (the first one met); -0.0 against +0.0 is +0.0 for max and -0.0
 * for min, as for the elementwise ops, so the order of the fold never
 * shows in the result. */
static double fmax_nan(double a, double b, bool want_max)
{
    if (isnan(a)) return a;
    if (isnan(b)) return b;
    if (a == b) return (signbit(a) != 0) == want_max ? b : a;
    return (a > b) == want_max ? a : b;
}

static val extreme(domain d, val a, val b, bool want_max)
{
    if (d == D_F) a.f = fmax_nan(a.f, b.f, want_max);
    else if (d == D_S) a.s = (want_max ? a.s >= b.s : a.s <= b.s) ? a.s : b.s;
    else a.u = (want_max ? a.u >= b.u : a.u <= b.u) ? a.u : b.u;
    return a;
}

static val combine(kind k, domain d, val a, val b)
{
    switch (k) {
    case K_SUM:
        if (d == D_F) a.f += b.f;
        else a.u += b.u;  /* wraps; for signed values too, same bits */
        return a;
    case K_PROD:
        if (d == D_F) a.f *= b.f;
        else a.u *= b.u;
        return a;
    case K_MAX: return extreme(d, a, b, true);
    default: return extreme(d, a, b, false);
    }
}

/* ---- index iteration ------------------------------------------------------ */

/* An odometer: a multi-index over n dims of the given sizes, carrying the
 * element offset sum(idx[k] * stride[k]). odo_next steps the last dim
 * fastest (row-major) and wraps to all zeros after the last position. */
typedef struct odo {
    int n;
    int64_t size[TS_MAX_RANK], stride[TS_MAX_RANK], idx[TS_MAX_RANK];
    int64_t off;
} odo;

static void odo_add(odo *o, int64_t size, int64_t stride)
{
    o->size[o->n] = size;
    o->stride[o->n] = stride;
    o->idx[o->n++] = 0;
}

static void odo_next(odo *o)
{
    for (int k = o->n - 1; k >= 0; k--) {
        o->off += o->stride[k];
        if (++o->idx[k] < o->size[k]) return;
        o->off -= o->stride[k] * o->size[k];
        o->idx[k] = 0;
    }
}

static int64_t odo_count(const odo *o)
{
    int64_t c = 1;
    for (int k = 0; k < o->n; k++) c *= o->size[k];
    return c;
}

/* The shape rule keeps attributes in range; a node that escaped it is a
 * bug, reported rather than read out of bounds. */
static ts_status bad_attr(ts_interp_run *r, const ts_node *n)
{
    return ts_err_set(ts_interp_err(r), TS_ERR_INTERNAL, "%s: attributes do not fit the operand",
                      ts_op_get(n->op)->name);
}

static bool axis_ok(int64_t axis, int rank) { return TS_ALWAYS(axis >= 0 && axis < rank); }

/* Sizes of the dims before axis, of axis, and after it: element
 * (o, k, i) is at (o * len + k) * inner + i. */
static void split_at(const ts_tensor *x, int axis, int64_t *outer, int64_t *len, int64_t *inner)
{
    *outer = *inner = 1;
    for (int i = 0; i < axis; i++) *outer *= x->shape[i];
    for (int i = axis + 1; i < x->rank; i++) *inner *= x->shape[i];
    *len = x->shape[axis];
}

/* ==== reduce_sum, reduce_prod, reduce_max, reduce_min ===================== */

/* Fold the listed axes of in[0] away: `kept` walks the output positions
 * (the kept dims, in order) and `red` the reduced elements of each. */
static ts_status reduce(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out, kind k)
{
    const ts_tensor *x = in[0];
    int na;
    const int64_t *axes = ts_node_ints(n, "axes", &na);
    bool drop[TS_MAX_RANK] = {0};
    for (int i = 0; i < na; i++) {
        if (!axis_ok(axes[i], x->rank)) return bad_attr(r, n);
        drop[axes[i]] = true;
    }
    int64_t strides[TS_MAX_RANK];
    ts_shape_strides(x->rank, x->shape, strides);
    odo kept = {0}, red = {0};
    for (int i = 0; i < x->rank; i++) odo_add(drop[i] ? &red : &kept, x->shape[i], strides[i]);

    TS_TRY(ts_interp_out(r, n, 0, out));
    domain d = domain_of(x->dtype);
    int64_t nred = odo_count(&red), nout = (*out)->numel;
    for (int64_t o = 0; o < nout; o++, odo_next(&kept)) {
        val acc = identity(k, d, x->dtype);
        for (int64_t j = 0; j < nred; j++, odo_next(&red))
            acc = combine(k, d, acc, load(d, x->dtype, x->data, kept.off + red.off));
        store(d, x->dtype, (*out)->data, o, acc);
    }
    return TS_OK;
}

static ts_status k_reduce_sum(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    return reduce(r, n, in, out, K_SUM);
}
static ts_status k_reduce_prod(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    return reduce(r, n, in, out, K_PROD);
}
static ts_status k_reduce_max(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    return reduce(r, n, in, out, K_MAX);
}
static ts_status k_reduce_min(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    return reduce(r, n, in, out, K_MIN);
}

/* ==== argmax, argmin ====================================================== */

/* Does x replace best? NaN is the most extreme value of all; among equals
 * (-0.0 equals +0.0 here) the first wins, or the last with select_last. */
static bool beats(domain d, val x, val best, bool want_max, bool last)
{
    if (d == D_F) {
        if (isnan(best.f)) return last && isnan(x.f);
        if (isnan(x.f)) return true;
        if (x.f == best.f) return last;
        return (x.f > best.f) == want_max;
    }
    if (d == D_S) return x.s == best.s ? last : (x.s > best.s) == want_max;
    return x.u == best.u ? last : (x.u > best.u) == want_max;
}

static ts_status arg_extreme(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out,
                             bool want_max)
{
    const ts_tensor *x = in[0];
    int64_t axis = ts_node_int(n, "axis");
    bool last = ts_node_int(n, "select_last") != 0;
    if (!axis_ok(axis, x->rank)) return bad_attr(r, n);
    int64_t outer, len, inner;
    split_at(x, (int)axis, &outer, &len, &inner);
    if (len == 0)
        return ts_err_set(ts_interp_err(r), TS_ERR_RUNTIME, "%s of an empty axis", want_max ? "argmax" : "argmin");
    TS_TRY(ts_interp_out(r, n, 0, out));
    domain d = domain_of(x->dtype);
    int64_t *y = (*out)->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * len * inner + i, at = 0;
            val best = load(d, x->dtype, x->data, base);
            for (int64_t k = 1; k < len; k++) {
                val v = load(d, x->dtype, x->data, base + k * inner);
                if (beats(d, v, best, want_max, last)) best = v, at = k;
            }
            y[o * inner + i] = at;
        }
    return TS_OK;
}

static ts_status k_argmax(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    return arg_extreme(r, n, in, out, true);
}
static ts_status k_argmin(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    return arg_extreme(r, n, in, out, false);
}

/* ==== cumulative ========================================================== */

/* The kind named by an enum attribute; the enums of cumulative and
 * reduce_window list different words, so match by name. */
static kind kind_named(const char *s)
{
    if (s && strcmp(s, "prod") == 0) return K_PROD;
    if (s && strcmp(s, "max") == 0) return K_MAX;
    if (s && strcmp(s, "min") == 0) return K_MIN;
    return K_SUM;
}

/* A running fold along axis. Output k holds the fold of the elements up
 * to and including k (exclusive: up to k, not including it, so the first
 * is the identity); reverse runs from the end. Float accumulators stay in
 * double across the whole run; each output is rounded once. */
static ts_status k_cumulative(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *x = in[0];
    kind k = kind_named(ts_node_enum_name(n, "kind"));
    bool excl = ts_node_int(n, "exclusive") != 0, rev = ts_node_int(n, "reverse") != 0;
    int64_t axis = ts_node_int(n, "axis");
    if (!axis_ok(axis, x->rank)) return bad_attr(r, n);
    int64_t outer, len, inner;
    split_at(x, (int)axis, &outer, &len, &inner);
    TS_TRY(ts_interp_out(r, n, 0, out));
    domain d = domain_of(x->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            val acc = identity(k, d, x->dtype);
            for (int64_t step = 0; step < len; step++) {
                int64_t at = (o * len + (rev ? len - 1 - step : step)) * inner + i;
                val v = load(d, x->dtype, x->data, at);
                if (excl) store(d, x->dtype, (*out)->data, at, acc);
                acc = combine(k, d, acc, v);
                if (!excl) store(d, x->dtype, (*out)->data, at, acc);
            }
        }
    return TS_OK;
}

/* ==== reduce_window ======================================================= */

typedef struct window {
    int rank;
    const int64_t *size, *stride, *dil, *lo;
    int64_t in_shape[TS_MAX_RANK], in_stride[TS_MAX_RANK];
} window;

/* The offset of the element that window position w reads for output
 * position o, or -1 when it falls in the padding. */
static int64_t window_offset(const window *win, const int64_t *o, const int64_t *w)
{
    int64_t off = 0;
    for (int i = 0; i < win->rank; i++) {
        int64_t c = o[i] * win->stride[i] + w[i] * win->dil[i] - win->lo[i];
        if (c < 0 || c >= win->in_shape[i]) return -1;
        off += c * win->in_stride[i];
    }
    return off;
}

/* Pooling: each output folds the window of elements it covers. Padding
 * holds the identity of the fold, so it contributes nothing and a window
 * entirely in the padding yields the identity. */
static ts_status k_reduce_window(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *x = in[0];
    kind k = kind_named(ts_node_enum_name(n, "kind"));
    window win = {.rank = x->rank};
    int nw, ns, nd, nl;
    win.size = ts_node_ints(n, "window", &nw);
    win.stride = ts_node_ints(n, "strides", &ns);
    win.dil = ts_node_ints(n, "dilations", &nd);
    win.lo = ts_node_ints(n, "pad_lo", &nl);
    if (!TS_ALWAYS(nw == x->rank && ns == x->rank && nd == x->rank && nl == x->rank)) return bad_attr(r, n);
    memcpy(win.in_shape, x->shape, sizeof(int64_t) * (size_t)x->rank);
    ts_shape_strides(x->rank, x->shape, win.in_stride);
    TS_TRY(ts_interp_out(r, n, 0, out));

    odo opos = {0}, wpos = {0};
    for (int i = 0; i < x->rank; i++) {
        odo_add(&opos, (*out)->shape[i], 0);
        odo_add(&wpos, win.size[i], 0);
    }
    domain d = domain_of(x->dtype);
    int64_t nwin = odo_count(&wpos);
    for (int64_t o = 0; o < (*out)->numel; o++, odo_next(&opos)) {
        val acc = identity(k, d, x->dtype);
        for (int64_t j = 0; j < nwin; j++, odo_next(&wpos)) {
            int64_t at = window_offset(&win, opos.idx, wpos.idx);
            if (at >= 0) acc = combine(k, d, acc, load(d, x->dtype, x->data, at));
        }
        store(d, x->dtype, (*out)->data, o, acc);
    }
    return TS_OK;
}

const ts_interp_kernel ts_interp_reduce[TS_OP_COUNT] = {
    [TS_OP_REDUCE_SUM] = k_reduce_sum, [TS_OP_REDUCE_PROD] = k_reduce_prod,
    [TS_OP_REDUCE_MAX] = k_reduce_max, [TS_OP_REDUCE_MIN] = k_reduce_min,
    [TS_OP_ARGMAX] = k_argmax,         [TS_OP_ARGMIN] = k_argmin,
    [TS_OP_CUMULATIVE] = k_cumulative, [TS_OP_REDUCE_WINDOW] = k_reduce_window,
};
