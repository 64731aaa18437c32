/* ops_conv.c — ONNX convolutions and pooling: Conv, ConvTranspose, Col2Im,
 * MaxPool, AveragePool, LpPool and their Global forms, assembled from the
 * conv and reduce_window primitives.
 *
 * All of them slide a window over the spatial axes of x[N, C, D1, ...].
 * win_read turns the ONNX attributes (kernel_shape, strides, dilations,
 * pads, auto_pad, ceil_mode) into explicit per-axis numbers; everything
 * after that is one primitive plus elementwise arithmetic. */
#include "frontend/onnx/onnx.h"

#include <math.h>
#include <string.h>

/* ---- helpers --------------------------------------------------------------- */

static ts_value *scalar(onnx_node *n, ts_dtype dt, double v) { return ts_b_scalar(onnx_b(n), dt, v); }

static ts_value *bin(onnx_node *n, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(onnx_b(n), op, x, y); }

static ts_value *un(onnx_node *n, ts_op op, ts_value *x) { return ts_b_unary(onnx_b(n), op, x); }

static bool set_failed(onnx_node *n, ts_status s)
{
    if (s == TS_OK) return false;
    onnx_fail(n, TS_ERR_INTERNAL, "cannot set a primitive attribute (%s)", ts_status_name(s));
    return true;
}

/* A [C] vector laid along axis 1 of a rank-r tensor: [1, C, 1, ..., 1]. */
static ts_value *per_channel(onnx_node *n, ts_value *p, int r)
{
    if (!p) return NULL;
    if (p->type.rank != 1) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "the bias must be a vector (rank %d)", p->type.rank);
        return NULL;
    }
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0; i < r; i++) dims[i] = i == 1 ? p->type.dims[0] : ts_dim_const(1);
    return ts_b_reshape(onnx_b(n), p, r, dims);
}

static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/* ---- window geometry ------------------------------------------------------- */

/* The explicit geometry of a sliding window over the k spatial axes:
 * lo/hi are the model's padding; extra is the additional high padding
 * that ceil_mode needs (kept apart: AveragePool must not count it). */
typedef struct win {
    int k;
    int64_t kernel[TS_MAX_RANK], strides[TS_MAX_RANK], dil[TS_MAX_RANK];
    int64_t lo[TS_MAX_RANK], hi[TS_MAX_RANK], extra[TS_MAX_RANK];
} win;

/* An ints attribute of exactly k entries, or k copies of def when absent. */
static ts_status ints_k(onnx_node *n, const char *name, int k, int64_t def, int64_t *out)
{
    const int64_t *v;
    int cnt = onnx_attr_ints(n, name, &v);
    TS_TRY(onnx_status(n));
    if (cnt >= 0 && cnt != k)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "%s has %d entries, expected %d", name, cnt, k);
    for (int i = 0; i < k; i++) out[i] = cnt < 0 ? def : v[i];
    return TS_OK;
}

/* A spatial size that must be known to lay out the padding. */
static ts_status const_size(onnx_node *n, const ts_value *x, int i, const char *why, int64_t *out)
{
    ts_dim d = x->type.dims[i + 2];
    if (!ts_dim_is_const(d))
        return onnx_unsupported(n, "spatial axis %d has a symbolic size: %s needs it to be known", i, why);
    *out = d.c;
    return TS_OK;
}

/* SAME_UPPER/SAME_LOWER: pad so that out = ceil(n / stride); the odd
 * element goes at the end (UPPER) or the beginning (LOWER). */
static ts_status same_pads(onnx_node *n, const ts_value *x, bool upper, win *w)
{
    for (int i = 0; i < w->k; i++) {
        int64_t sz = 0;
        TS_TRY(const_size(n, x, i, "auto_pad SAME", &sz));
        int64_t out = ceil_div(sz, w->strides[i]), span = w->dil[i] * (w->kernel[i] - 1) + 1;
        int64_t total = (out - 1) * w->strides[i] + span - sz;
        if (total < 0) total = 0;
        w->lo[i] = upper ? total / 2 : total - total / 2;
        w->hi[i] = total - w->lo[i];
    }
    return TS_OK;
}

/* ceil_mode: one more output where a partial window remains, except a
 * window that would start in the high padding; the overhang is `extra`. */
static ts_status ceil_pads(onnx_node *n, const ts_value *x, win *w)
{
    for (int i = 0; i < w->k; i++) {
        int64_t sz = 0;
        TS_TRY(const_size(n, x, i, "ceil_mode", &sz));
        int64_t span = w->dil[i] * (w->kernel[i] - 1) + 1, padded = sz + w->lo[i] + w->hi[i];
        int64_t out = ceil_div(padded - span, w->strides[i]) + 1;
        if ((out - 1) * w->strides[i] >= sz + w->lo[i]) out--;
        int64_t extra = (out - 1) * w->strides[i] + span - padded;
        w->extra[i] = extra > 0 ? extra : 0;
    }
    return TS_OK;
}

/* Reads the window attributes of node n over x[N, C, ...]; kernel is the
 * kernel size (from kernel_shape or the weights). */
static ts_status win_read(onnx_node *n, const ts_value *x, const int64_t *kernel, win *w)
{
    memset(w, 0, sizeof *w);
    w->k = x->type.rank - 2;
    if (w->k < 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the input must have rank >= 3, got %d", x->type.rank);
    memcpy(w->kernel, kernel, sizeof(int64_t) * (size_t)w->k);
    int64_t pads[2 * TS_MAX_RANK];
    TS_TRY(ints_k(n, "strides", w->k, 1, w->strides));
    TS_TRY(ints_k(n, "dilations", w->k, 1, w->dil));
    TS_TRY(ints_k(n, "pads", 2 * w->k, 0, pads));
    for (int i = 0; i < w->k; i++) {
        if (w->strides[i] < 1 || w->dil[i] < 1 || w->kernel[i] < 1)
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "kernel, strides and dilations must be >= 1");
        w->lo[i] = pads[i];
        w->hi[i] = pads[w->k + i];
    }
    const char *ap = onnx_attr_string(n, "auto_pad", "NOTSET");
    TS_TRY(onnx_status(n));
    if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
        TS_TRY(same_pads(n, x, ap[5] == 'U', w));
    } else if (strcmp(ap, "VALID") == 0) {
        memset(w->lo, 0, sizeof w->lo);
        memset(w->hi, 0, sizeof w->hi);
    } else if (strcmp(ap, "NOTSET") != 0) {
        return onnx_unsupported(n, "auto_pad '%s'", ap);
    }
    if (onnx_attr_int(n, "ceil_mode", 0)) TS_TRY(ceil_pads(n, x, w));
    return onnx_status(n);
}

/* kernel_shape of a pooling node (required, k entries). */
static ts_status pool_kernel(onnx_node *n, const ts_value *x, int64_t *kernel)
{
    const int64_t *v;
    int cnt = onnx_attr_ints(n, "kernel_shape", &v);
    TS_TRY(onnx_status(n));
    if (cnt < 0) return onnx_fail(n, TS_ERR_INVALID_MODEL, "kernel_shape is required");
    if (cnt != x->type.rank - 2)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "kernel_shape has %d entries for %d spatial axes", cnt, x->type.rank - 2);
    if (cnt > 0) memcpy(kernel, v, sizeof(int64_t) * (size_t)cnt); /* no spatial axes: v may be NULL */
    return TS_OK;
}

/* reduce_window over x's spatial axes (N and C untouched); lo/hi are the
 * spatial pads. */
static ts_value *window(onnx_node *n, ts_value *x, const char *kind, const win *w, const int64_t *lo, const int64_t *hi)
{
    if (!x) return NULL;
    int r = w->k + 2;
    int64_t wi[TS_MAX_RANK], st[TS_MAX_RANK], dl[TS_MAX_RANK], pl[TS_MAX_RANK], ph[TS_MAX_RANK];
    for (int i = 0; i < r; i++) {
        bool sp = i >= 2;
        wi[i] = sp ? w->kernel[i - 2] : 1;
        st[i] = sp ? w->strides[i - 2] : 1;
        dl[i] = sp ? w->dil[i - 2] : 1;
        pl[i] = sp ? lo[i - 2] : 0;
        ph[i] = sp ? hi[i - 2] : 0;
    }
    ts_graph *g = onnx_graph(n);
    ts_op op = TS_OP_REDUCE_WINDOW;
    ts_attr *a = ts_b_attrs(onnx_b(n), op);
    if (!a || set_failed(n, ts_attr_set_enum(g, op, a, "kind", kind)) ||
        set_failed(n, ts_attr_set_ints(g, op, a, "window", r, wi)) ||
        set_failed(n, ts_attr_set_ints(g, op, a, "strides", r, st)) ||
        set_failed(n, ts_attr_set_ints(g, op, a, "dilations", r, dl)) ||
        set_failed(n, ts_attr_set_ints(g, op, a, "pad_lo", r, pl)) ||
        set_failed(n, ts_attr_set_ints(g, op, a, "pad_hi", r, ph)))
        return NULL;
    return ts_b_node(onnx_b(n), op, 1, &x, a);
}

/* The window over all padding: model pads plus the ceil_mode overhang. */
static ts_value *window_all(onnx_node *n, ts_value *x, const char *kind, const win *w)
{
    int64_t hi[TS_MAX_RANK];
    for (int i = 0; i < w->k; i++) hi[i] = w->hi[i] + w->extra[i];
    return window(n, x, kind, w, w->lo, hi);
}

/* ---- Conv ---------------------------------------------------------------------- */

/* The spatial kernel size of weights w[O, I, k1, ...], which must be known. */
/* The kernel size is the weights'; kernel_shape, when given, must say
 * the same (as onnxruntime requires): it only restates it. */
static ts_status weight_kernel(onnx_node *n, const ts_value *w, int k, int64_t *kernel)
{
    if (w->type.rank != k + 2)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "weights of rank %d for %d spatial axes", w->type.rank, k);
    for (int i = 0; i < k; i++) {
        ts_dim d = w->type.dims[i + 2];
        if (!ts_dim_is_const(d)) return onnx_unsupported(n, "the kernel size must be known (weights with symbolic dims)");
        kernel[i] = d.c;
    }
    const int64_t *ks;
    int cnt = onnx_attr_ints(n, "kernel_shape", &ks);
    TS_TRY(onnx_status(n));
    if (cnt >= 0 && cnt != k)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "kernel_shape has %d entries for %d spatial axes", cnt, k);
    for (int i = 0; cnt >= 0 && i < k; i++)
        if (ks[i] != kernel[i])
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "kernel_shape[%d] is %lld but the weights' kernel is %lld", i,
                             (long long)ks[i], (long long)kernel[i]);
    return TS_OK;
}

static ts_value *conv_node(onnx_node *n, ts_value *x, ts_value *w, const win *g, const int64_t *lhs_dil,
                           const int64_t *lo, const int64_t *hi, int64_t groups)
{
    ts_graph *gr = onnx_graph(n);
    ts_op op = TS_OP_CONV;
    int k = g->k;
    ts_attr *a = ts_b_attrs(onnx_b(n), op);
    if (!a || set_failed(n, ts_attr_set_ints(gr, op, a, "strides", k, g->strides)) ||
        set_failed(n, ts_attr_set_ints(gr, op, a, "pad_lo", k, lo)) ||
        set_failed(n, ts_attr_set_ints(gr, op, a, "pad_hi", k, hi)) ||
        set_failed(n, ts_attr_set_ints(gr, op, a, "lhs_dilation", k, lhs_dil)) ||
        set_failed(n, ts_attr_set_ints(gr, op, a, "rhs_dilation", k, g->dil)) ||
        set_failed(n, ts_attr_set_int(gr, op, a, "groups", groups)))
        return NULL;
    ts_value *in[2] = {x, w};
    return ts_b_node(onnx_b(n), op, 2, in, a);
}

static ts_status onnx_conv(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *w = onnx_input(n, 1);
    int64_t groups = onnx_attr_int(n, "group", 1);
    TS_TRY(onnx_status(n));
    int k = x->type.rank - 2;
    int64_t kernel[TS_MAX_RANK], ones[TS_MAX_RANK];
    win g;
    TS_TRY(weight_kernel(n, w, k, kernel));
    TS_TRY(win_read(n, x, kernel, &g));
    for (int i = 0; i < k; i++) ones[i] = 1;
    ts_value *y = conv_node(n, x, w, &g, ones, g.lo, g.hi, groups);
    if (onnx_has_input(n, 2)) y = bin(n, TS_OP_ADD, y, per_channel(n, onnx_input(n, 2), x->type.rank));
    return onnx_set_out(n, 0, y);
}

/* ---- ConvTranspose --------------------------------------------------------------------- */

/* ConvTranspose's weights w[C, M/g, k...] as a conv kernel [M, C/g, k...]:
 * in and out channels swapped within each group, spatial axes flipped. */
static ts_value *transpose_kernel(onnx_node *n, ts_value *w, int64_t groups)
{
    ts_builder *b = onnx_b(n);
    int r = w->type.rank;
    ts_dim c = w->type.dims[0], mg = w->type.dims[1], cg, m, v[TS_MAX_RANK];
    ts_err err = {0};
    if (ts_dim_div(onnx_graph(n)->syms, c, ts_dim_const(groups), &cg, &err) != TS_OK ||
        ts_dim_mul(onnx_graph(n)->syms, mg, ts_dim_const(groups), &m, &err) != TS_OK) {
        onnx_fail(n, err.code, "%s", err.msg);
        return NULL;
    }
    int64_t perm[TS_MAX_RANK + 1], flip[TS_MAX_RANK];
    v[0] = ts_dim_const(groups);
    v[1] = cg;
    perm[0] = 0;
    perm[1] = 2;
    perm[2] = 1;
    for (int i = 1; i < r; i++) v[i + 1] = w->type.dims[i];
    for (int i = 3; i <= r; i++) perm[i] = i;
    ts_value *t = ts_b_transpose(b, ts_b_reshape(b, w, r + 1, v), perm);
    v[0] = m;
    v[1] = cg;
    for (int i = 2; i < r; i++) v[i] = w->type.dims[i];
    t = ts_b_reshape(b, t, r, v);
    for (int i = 2; i < r; i++) flip[i - 2] = i;
    ts_attr *a = ts_b_attrs(b, TS_OP_REVERSE);
    if (!a || set_failed(n, ts_attr_set_ints(onnx_graph(n), TS_OP_REVERSE, a, "axes", r - 2, flip))) return NULL;
    return t ? ts_b_node(b, TS_OP_REVERSE, 1, &t, a) : NULL;
}

/* Pads from an explicit output_shape (or SAME's in*stride): the total is
 * what the full transposed conv overshoots; SAME_UPPER puts the odd one
 * at the end, everything else at the beginning. */
static ts_status transpose_pads(onnx_node *n, const ts_value *x, const int64_t *outpad, bool upper,
                                const int64_t *want, win *g)
{
    for (int i = 0; i < g->k; i++) {
        int64_t sz = 0;
        TS_TRY(const_size(n, x, i, "output_shape/auto_pad", &sz));
        int64_t out = want ? want[i] : sz * g->strides[i];
        int64_t total = g->strides[i] * (sz - 1) + outpad[i] + (g->kernel[i] - 1) * g->dil[i] + 1 - out;
        /* floor division: a negative total (a larger output) extends the
         * end, as the reference does */
        int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
        g->lo[i] = upper ? half : total - half;
        g->hi[i] = total - g->lo[i];
    }
    return TS_OK;
}

/* The transposed conv as a conv: x dilated by the strides (lhs_dilation),
 * the flipped kernel, and pads dil*(k-1) - pad (output_padding extends
 * the high side). */
static ts_status onnx_conv_transpose(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *w = onnx_input(n, 1);
    int64_t groups = onnx_attr_int(n, "group", 1);
    const char *ap = onnx_attr_string(n, "auto_pad", "NOTSET");
    const int64_t *oshape;
    int ocnt = onnx_attr_ints(n, "output_shape", &oshape);
    TS_TRY(onnx_status(n));
    int k = x->type.rank - 2;
    int64_t kernel[TS_MAX_RANK], outpad[TS_MAX_RANK], lo[TS_MAX_RANK], hi[TS_MAX_RANK];
    win g;
    TS_TRY(weight_kernel(n, w, k, kernel));
    TS_TRY(ints_k(n, "output_padding", k, 0, outpad));
    bool same = strncmp(ap, "SAME_", 5) == 0;
    TS_TRY(win_read(n, x, kernel, &g)); /* SAME pads are redone below: they differ from Conv's */
    if (ocnt >= 0) {
        if (ocnt != k && ocnt != k + 2)
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "output_shape has %d entries for %d spatial axes", ocnt, k);
        TS_TRY(transpose_pads(n, x, outpad, strcmp(ap, "SAME_UPPER") == 0, oshape + (ocnt - k), &g));
    } else if (same) {
        TS_TRY(transpose_pads(n, x, outpad, strcmp(ap, "SAME_UPPER") == 0, NULL, &g));
    }
    for (int i = 0; i < k; i++) {
        lo[i] = g.dil[i] * (g.kernel[i] - 1) - g.lo[i];
        hi[i] = g.dil[i] * (g.kernel[i] - 1) - g.hi[i] + outpad[i];
    }
    win unit = g;              /* the conv itself runs with stride 1 */
    for (int i = 0; i < k; i++) unit.strides[i] = 1;
    ts_value *y = conv_node(n, x, transpose_kernel(n, w, groups), &unit, g.strides, lo, hi, groups);
    if (onnx_has_input(n, 2)) y = bin(n, TS_OP_ADD, y, per_channel(n, onnx_input(n, 2), x->type.rank));
    return onnx_set_out(n, 0, y);
}

/* ---- MaxPool ------------------------------------------------------------------------- */

/* pad(x, v) with per-axis lo/hi/interior (rank entries each). */
static ts_value *pad_node(onnx_node *n, ts_value *x, ts_value *v, const int64_t *lo, const int64_t *hi,
                          const int64_t *interior)
{
    if (!x || !v) return NULL;
    ts_graph *g = onnx_graph(n);
    int r = x->type.rank;
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_PAD);
    if (!a || set_failed(n, ts_attr_set_ints(g, TS_OP_PAD, a, "lo", r, lo)) ||
        set_failed(n, ts_attr_set_ints(g, TS_OP_PAD, a, "hi", r, hi)) ||
        set_failed(n, ts_attr_set_ints(g, TS_OP_PAD, a, "interior", r, interior)))
        return NULL;
    ts_value *in[2] = {x, v};
    return ts_b_node(onnx_b(n), TS_OP_PAD, 2, in, a);
}

/* The flat index of every element of x, as MaxPool's Indices count:
 * row-major, or with storage_order 1 the spatial axes column-major (N and
 * C still outermost). Only the batch size may be symbolic. */
static ts_value *flat_index(onnx_node *n, const ts_value *x, bool col_major)
{
    int r = x->type.rank;
    const ts_dim *d = x->type.dims;
    int64_t stride[TS_MAX_RANK], s = 1;
    for (int i = 1; i < r; i++)
        if (!ts_dim_is_const(d[i])) {
            onnx_unsupported(n, "the Indices output needs known channel and spatial sizes");
            return NULL;
        }
    for (int i = r - 1; i >= 2; i--) s *= d[i].c;
    stride[1] = s;
    stride[0] = s * d[1].c;
    s = 1;
    for (int i = 0; i < r - 2; i++) {
        int ax = col_major ? 2 + i : r - 1 - i;
        stride[ax] = s;
        s *= d[ax].c;
    }
    ts_value *idx = NULL;
    for (int i = 0; i < r; i++) {
        ts_value *t = bin(n, TS_OP_MUL, ts_b_iota(onnx_b(n), TS_DTYPE_I64, r, d, i), scalar(n, TS_DTYPE_I64, (double)stride[i]));
        idx = idx ? bin(n, TS_OP_ADD, idx, t) : t;
    }
    return idx;
}

/* The lowest value of dt: the padding of a max window. */
static double lowest(ts_dtype dt)
{
    if (ts_dtype_is_float(dt)) return -INFINITY;
    return ts_dtype_is_signed(dt) ? -ldexp(1.0, ts_dtype_bits(dt) - 1) : 0;
}

/* Indices of MaxPool: for each window, the flat index of its first
 * maximum (taps in row-major order). Each tap is a strided slice of the
 * padded input and of the padded index tensor; walking the taps from the
 * last to the first, a select keeps the index of every tap equal to the
 * max, so the first such tap has the last word. */
static ts_value *max_pool_indices(onnx_node *n, ts_value *x, const win *w, ts_value *y)
{
    enum { MAX_TAPS = 4096 };
    int r = w->k + 2;
    int64_t taps = 1, lo[TS_MAX_RANK] = {0}, hi[TS_MAX_RANK] = {0}, zero[TS_MAX_RANK] = {0};
    for (int i = 0; i < w->k; i++) {
        taps *= w->kernel[i];
        lo[i + 2] = w->lo[i];
        hi[i + 2] = w->hi[i] + w->extra[i];
    }
    if (taps > MAX_TAPS) {
        onnx_unsupported(n, "the Indices output of a window of %lld taps (at most %d)", (long long)taps, MAX_TAPS);
        return NULL;
    }
    ts_value *fi = flat_index(n, x, onnx_attr_int(n, "storage_order", 0) == 1);
    if (!fi || !y) return NULL;
    ts_builder *b = onnx_b(n);
    ts_dtype dt = x->type.dtype;
    ts_value *xp = pad_node(n, x, scalar(n, dt, lowest(dt)), lo, hi, zero);
    ts_value *ip = pad_node(n, fi, scalar(n, TS_DTYPE_I64, -1), lo, hi, zero);
    ts_value *idx = ts_b_full(b, TS_DTYPE_I64, -1, r, y->type.dims);
    int64_t st[TS_MAX_RANK] = {1, 1};
    ts_dim start[TS_MAX_RANK], limit[TS_MAX_RANK];
    start[0] = start[1] = ts_dim_const(0);
    limit[0] = y->type.dims[0];
    limit[1] = y->type.dims[1];
    for (int64_t t = taps - 1; t >= 0; t--) {
        int64_t rem = t;
        for (int i = w->k - 1; i >= 0; i--) {
            int64_t off = rem % w->kernel[i];
            rem /= w->kernel[i];
            st[i + 2] = w->strides[i];
            start[i + 2] = ts_dim_const(off * w->dil[i]);
            limit[i + 2] = ts_dim_const(start[i + 2].c + (y->type.dims[i + 2].c - 1) * st[i + 2] + 1);
        }
        ts_value *hit = bin(n, TS_OP_EQ, ts_b_slice(b, xp, start, limit, st), y);
        idx = ts_b_select(b, hit, ts_b_slice(b, ip, start, limit, st), idx);
    }
    return idx;
}

static ts_status onnx_max_pool(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    TS_TRY(onnx_status(n));
    if (x->type.dtype == TS_DTYPE_BOOL) return onnx_unsupported(n, "bool input");
    int64_t kernel[TS_MAX_RANK];
    win w;
    TS_TRY(pool_kernel(n, x, kernel));
    TS_TRY(win_read(n, x, kernel, &w));
    ts_value *y = window_all(n, x, "max", &w);
    if (n->n_out > 1 && n->out_used[1]) onnx_set_out(n, 1, max_pool_indices(n, x, &w, y));
    return onnx_set_out(n, 0, y);
}

/* MaxUnpool: zeros of the unpooled shape (in - 1) * stride + kernel - pads
 * with X written at the flat positions I (MaxPool's Indices): one
 * scatter. An output_shape input then pads (or crops) that result at the
 * high end, as the reference and the spec's test do: the indices keep
 * counting in the inferred shape. */
static ts_status onnx_max_unpool(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *idx = onnx_input(n, 1);
    TS_TRY(onnx_status(n));
    int r = x->type.rank, k = r - 2;
    int64_t kernel[TS_MAX_RANK], strides[TS_MAX_RANK], pads[2 * TS_MAX_RANK];
    ts_dim dims[TS_MAX_RANK];
    TS_TRY(pool_kernel(n, x, kernel));
    TS_TRY(ints_k(n, "strides", k, 1, strides));
    TS_TRY(ints_k(n, "pads", 2 * k, 0, pads));
    dims[0] = x->type.dims[0];
    dims[1] = x->type.dims[1];
    for (int i = 0; i < k; i++) {
        int64_t sz = 0;
        TS_TRY(const_size(n, x, i, "MaxUnpool", &sz));
        dims[i + 2] = ts_dim_const((sz - 1) * strides[i] + kernel[i] - pads[i] - pads[k + i]);
    }
    ts_graph *g = onnx_graph(n);
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_SCATTER);
    if (!a || set_failed(n, ts_attr_set_enum(g, TS_OP_SCATTER, a, "combine", "set"))) return onnx_status(n);
    ts_value *in[3] = {ts_b_full(onnx_b(n), x->type.dtype, 0, r, dims), idx, x};
    ts_value *y = in[0] ? ts_b_node(onnx_b(n), TS_OP_SCATTER, 3, in, a) : NULL;
    if (!onnx_has_input(n, 2) || !y) return onnx_set_out(n, 0, y);
    const int64_t *want;
    int cnt;
    TS_TRY(onnx_const_ints(n, 2, &want, &cnt));
    if (cnt != r) return onnx_fail(n, TS_ERR_INVALID_MODEL, "output_shape has %d entries for rank %d", cnt, r);
    int64_t zero[TS_MAX_RANK] = {0}, hi[TS_MAX_RANK] = {0};
    for (int i = 2; i < r; i++) hi[i] = want[i] - dims[i].c;
    return onnx_set_out(n, 0, pad_node(n, y, scalar(n, x->type.dtype, 0), zero, hi, zero));
}

/* ---- AveragePool, LpPool ----------------------------------------------------------------- */

/* How many elements each window averages: a window sum over ones. With
 * count_include_pad the model's pads count (the ones span them) but the
 * ceil_mode overhang does not. A constant once folded, for known sizes. */
static ts_value *window_count(onnx_node *n, const ts_value *x, const win *w, bool include_pad)
{
    ts_dim dims[TS_MAX_RANK];
    int64_t lo[TS_MAX_RANK], hi[TS_MAX_RANK];
    ts_err err = {0};
    dims[0] = dims[1] = ts_dim_const(1);
    for (int i = 0; i < w->k; i++) {
        dims[i + 2] = x->type.dims[i + 2];
        if (include_pad &&
            ts_dim_add(onnx_graph(n)->syms, dims[i + 2], ts_dim_const(w->lo[i] + w->hi[i]), &dims[i + 2], &err) != TS_OK) {
            onnx_fail(n, err.code, "%s", err.msg);
            return NULL;
        }
        lo[i] = include_pad ? 0 : w->lo[i];
        hi[i] = include_pad ? w->extra[i] : w->hi[i] + w->extra[i];
    }
    ts_value *ones = ts_b_full(onnx_b(n), x->type.dtype, 1, w->k + 2, dims);
    return window(n, ones, "sum", w, lo, hi);
}

static ts_value *float_input(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    if (x && !ts_dtype_is_float(x->type.dtype)) {
        onnx_unsupported(n, "%s input: only float types are defined", ts_dtype_name(x->type.dtype));
        return NULL;
    }
    return x;
}

static ts_status onnx_average_pool(onnx_node *n)
{
    ts_value *x = float_input(n);
    bool include = onnx_attr_int(n, "count_include_pad", 0) != 0;
    TS_TRY(onnx_status(n));
    int64_t kernel[TS_MAX_RANK];
    win w;
    TS_TRY(pool_kernel(n, x, kernel));
    TS_TRY(win_read(n, x, kernel, &w));
    return onnx_set_out(n, 0, bin(n, TS_OP_DIV, window_all(n, x, "sum", &w), window_count(n, x, &w, include)));
}

/* LpPool's p: a float before opset 2, an int since. */
static double lp_p(onnx_node *n)
{
    return n->opset < 2 ? onnx_attr_float(n, "p", 2.0) : (double)onnx_attr_int(n, "p", 2);
}

/* |x|^p, with the common p = 1 and 2 exact. */
static ts_value *abs_pow(onnx_node *n, ts_value *x, double p)
{
    if (p == 2) return bin(n, TS_OP_MUL, x, x);
    ts_value *a = un(n, TS_OP_ABS, x);
    return p == 1 ? a : bin(n, TS_OP_POW, a, scalar(n, x->type.dtype, p));
}

static ts_value *root(onnx_node *n, ts_value *s, double p)
{
    if (!s || p == 1) return s;
    if (p == 2) return un(n, TS_OP_SQRT, s);
    return bin(n, TS_OP_POW, s, scalar(n, s->type.dtype, 1.0 / p));
}

static ts_status onnx_lp_pool(onnx_node *n)
{
    ts_value *x = float_input(n);
    double p = lp_p(n);
    TS_TRY(onnx_status(n));
    int64_t kernel[TS_MAX_RANK];
    win w;
    TS_TRY(pool_kernel(n, x, kernel));
    TS_TRY(win_read(n, x, kernel, &w));
    return onnx_set_out(n, 0, root(n, window_all(n, abs_pow(n, x, p), "sum", &w), p));
}

/* ---- Global pools ------------------------------------------------------------------------- */

/* The spatial axes 2..r-1 of x (at least one). */
static int spatial_axes(onnx_node *n, const ts_value *x, int64_t *axes)
{
    int r = x->type.rank;
    if (r < 3) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "the input must have rank >= 3, got %d", r);
        return 0;
    }
    for (int i = 2; i < r; i++) axes[i - 2] = i;
    return r - 2;
}

static ts_status onnx_global_average_pool(onnx_node *n)
{
    ts_value *x = float_input(n);
    int64_t axes[TS_MAX_RANK];
    int na = x ? spatial_axes(n, x, axes) : 0;
    TS_TRY(onnx_status(n));
    ts_dim c = ts_dim_const(1);
    ts_err err = {0};
    for (int i = 0; i < na; i++)
        if (ts_dim_mul(onnx_graph(n)->syms, c, x->type.dims[axes[i]], &c, &err) != TS_OK)
            return onnx_fail(n, err.code, "%s", err.msg);
    ts_dtype dt = x->type.dtype;
    ts_value *cnt = ts_dim_is_const(c) ? scalar(n, dt, (double)c.c) : ts_b_cast(onnx_b(n), onnx_dim_scalar(n, c), dt);
    ts_value *s = ts_b_reduce(onnx_b(n), TS_OP_REDUCE_SUM, x, na, axes, true);
    return onnx_set_out(n, 0, bin(n, TS_OP_DIV, s, cnt));
}

static ts_status onnx_global_max_pool(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    int64_t axes[TS_MAX_RANK];
    int na = x ? spatial_axes(n, x, axes) : 0;
    TS_TRY(onnx_status(n));
    return onnx_set_out(n, 0, ts_b_reduce(onnx_b(n), TS_OP_REDUCE_MAX, x, na, axes, true));
}

static ts_status onnx_global_lp_pool(onnx_node *n)
{
    ts_value *x = float_input(n);
    double p = lp_p(n);
    int64_t axes[TS_MAX_RANK];
    int na = x ? spatial_axes(n, x, axes) : 0;
    TS_TRY(onnx_status(n));
    return onnx_set_out(n, 0, root(n, ts_b_reduce(onnx_b(n), TS_OP_REDUCE_SUM, abs_pow(n, x, p), na, axes, true), p));
}

/* ---- Col2Im ----------------------------------------------------------------------------------- */

/* A constant int vector input of exactly k entries. */
static ts_status const_k(onnx_node *n, int i, int k, const int64_t **v)
{
    int cnt;
    TS_TRY(onnx_const_ints(n, i, v, &cnt));
    if (cnt != k) return onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d has %d entries, expected %d", i, cnt, k);
    return TS_OK;
}

/* Block tap t of xr[N, C, B, L1, ...] placed in the image: the blocks'
 * values for tap t land at o*stride + off*dil - pad_lo, which is a pad
 * with interior stride-1 (negative lo/hi crop what falls outside). */
static ts_value *col2im_tap(onnx_node *n, ts_value *xr, int64_t t, const win *w, const int64_t *img,
                            const int64_t *nblk)
{
    int k = w->k, r = k + 2;
    ts_dim start[TS_MAX_RANK + 1], limit[TS_MAX_RANK + 1], dims[TS_MAX_RANK];
    for (int i = 0; i < r + 1; i++) {
        start[i] = ts_dim_const(i == 2 ? t : 0);
        limit[i] = i == 2 ? ts_dim_const(t + 1) : xr->type.dims[i];
    }
    for (int i = 0; i < r; i++) dims[i] = i < 2 ? xr->type.dims[i] : ts_dim_const(nblk[i - 2]);
    ts_value *v = ts_b_reshape(onnx_b(n), ts_b_slice(onnx_b(n), xr, start, limit, NULL), r, dims);
    int64_t lo[TS_MAX_RANK] = {0}, hi[TS_MAX_RANK] = {0}, in[TS_MAX_RANK] = {0}, rem = t;
    for (int i = k - 1; i >= 0; i--) {
        int64_t off = rem % w->kernel[i];
        rem /= w->kernel[i];
        lo[i + 2] = off * w->dil[i] - w->lo[i];
        in[i + 2] = w->strides[i] - 1;
        hi[i + 2] = img[i] - lo[i + 2] - ((nblk[i] - 1) * w->strides[i] + 1);
    }
    return pad_node(n, v, scalar(n, xr->type.dtype, 0), lo, hi, in);
}

/* The sum over block taps of each tap's values placed in the image. */
static ts_status onnx_col2im(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    TS_TRY(onnx_status(n));
    int k = -1;
    const int64_t *img, *blk;
    int64_t pads[2 * TS_MAX_RANK], nblk[TS_MAX_RANK], taps = 1;
    TS_TRY(onnx_const_ints(n, 1, &img, &k));
    if (x->type.rank != 3 || k < 1 || k > TS_MAX_RANK - 3)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "needs input [N, C*prod(block), L] and 1..%d image axes", TS_MAX_RANK - 3);
    TS_TRY(const_k(n, 2, k, &blk));
    win w = {.k = k};
    TS_TRY(ints_k(n, "strides", k, 1, w.strides));
    TS_TRY(ints_k(n, "dilations", k, 1, w.dil));
    TS_TRY(ints_k(n, "pads", 2 * k, 0, pads));
    for (int i = 0; i < k; i++) {
        w.kernel[i] = blk[i];
        w.lo[i] = pads[i];
        if (blk[i] < 1 || w.strides[i] < 1 || w.dil[i] < 1)
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "block_shape, strides and dilations must be >= 1");
        nblk[i] = (img[i] + pads[i] + pads[k + i] - w.dil[i] * (blk[i] - 1) - 1) / w.strides[i] + 1;
        taps *= blk[i];
    }
    ts_dim c, v[TS_MAX_RANK];
    ts_err err = {0};
    if (ts_dim_div(onnx_graph(n)->syms, x->type.dims[1], ts_dim_const(taps), &c, &err) != TS_OK)
        return onnx_fail(n, err.code, "%s", err.msg);
    v[0] = x->type.dims[0];
    v[1] = c;
    v[2] = ts_dim_const(taps);
    for (int i = 0; i < k; i++) v[i + 3] = ts_dim_const(nblk[i]);
    ts_value *xr = ts_b_reshape(onnx_b(n), x, k + 3, v), *y = NULL;
    if (!xr) return onnx_status(n);
    for (int64_t t = 0; t < taps; t++) {
        ts_value *p = col2im_tap(n, xr, t, &w, img, nblk);
        y = y ? bin(n, TS_OP_ADD, y, p) : p;
    }
    return onnx_set_out(n, 0, y);
}

const onnx_op_entry onnx_ops_conv[] = {
    {"AveragePool", 1, INT_MAX, onnx_average_pool},
    {"Col2Im", 18, INT_MAX, onnx_col2im},
    {"Conv", 1, INT_MAX, onnx_conv},
    {"ConvTranspose", 1, INT_MAX, onnx_conv_transpose},
    {"GlobalAveragePool", 1, INT_MAX, onnx_global_average_pool},
    {"GlobalLpPool", 1, INT_MAX, onnx_global_lp_pool},
    {"GlobalMaxPool", 1, INT_MAX, onnx_global_max_pool},
    {"LpPool", 1, INT_MAX, onnx_lp_pool},
    {"MaxPool", 1, INT_MAX, onnx_max_pool},
    {"MaxUnpool", 9, INT_MAX, onnx_max_unpool},
    {NULL, 0, 0, NULL},
};
