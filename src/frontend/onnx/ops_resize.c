/* ops_resize.c — ONNX operators that resample a tensor: Resize (10, and
 * 11 onwards), Upsample and GridSample, assembled from primitives. Resize
 * and Upsample compute their taps and weights here, at build time, from
 * constant sizes: gathers with constant indices and a weighted sum per
 * resized axis, interpolating in f32 (f64 for f64 data) as the ONNX
 * reference does. GridSample reads its taps from the grid at run time:
 * per spatial axis the tap indices and weights are computed with
 * element-wise arithmetic under the padding mode, then combined into
 * gathers from the flattened input. Split from ops_index.c. */
#include "frontend/onnx/onnx.h"
#include "frontend/onnx/ops_util.h"

#include <math.h>
#include <string.h>

/* ---- small helpers -------------------------------------------------------------- */

static ts_dim dconst(int64_t c) { return ts_dim_const(c); }
static bool is_const(ts_dim d, int64_t c) { return ts_dim_is_const(d) && d.c == c; }

/* A constant tensor of dtype dt and shape dims (rank r) from f64 values. */
static ts_value *const_f64(onnx_node *n, ts_dtype dt, int r, const int64_t *shape, const double *v)
{
    ts_tensor *t = NULL;
    ts_err e = {0};
    if (onnx_status(n) != TS_OK) return NULL;
    if (ts_tensor_new(dt, r, shape, &t, &e) != TS_OK) {
        onnx_fail(n, e.code, "%s", e.msg);
        return NULL;
    }
    for (int64_t i = 0; i < ts_tensor_numel(t); i++) ts_elem_set_f64(dt, ts_tensor_data(t), i, v[i]);
    ts_value *c = ts_b_const(onnx_b(n), t);
    ts_tensor_release(t);
    return c;
}

/* ---- Resize, Upsample -------------------------------------------------------------------- */

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };
#define RS_MAX_TAPS 64

typedef struct resize_opts {
    int mode;
    const char *ctm, *nearest;
    double a, extrap;
    bool exclude, antialias;
} resize_opts;

/* Where output position y reads in the input (the ONNX reference's
 * _compute_x_ori, operation for operation, so the taps match); *outside
 * when tf_crop_and_resize falls off the input. */
static double source_coord(const resize_opts *o, double y, double scale, int64_t in, int64_t out,
                           const double *roi, bool *outside)
{
    double ow = scale * (double)in, x, last = (double)(in - 1);
    const char *m = o->ctm;
    *outside = false;
    if (strcmp(m, "align_corners") == 0) return ow == 1 ? 0 : y * last / (ow - 1);
    if (strcmp(m, "asymmetric") == 0) return y / scale;
    if (strcmp(m, "pytorch_half_pixel") == 0) return ow == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
    if (strcmp(m, "tf_half_pixel_for_nn") == 0) return (y + 0.5) / scale;   /* opsets 11-12 only */
    if (strcmp(m, "half_pixel_symmetric") == 0) {
        double adj = (double)out / ow, center = (double)in / 2;
        return center * (1 - adj) + (y + 0.5) / scale - 0.5;
    }
    if (strcmp(m, "tf_crop_and_resize") == 0) {
        x = ow == 1 ? (roi[1] - roi[0]) * last / 2 : y * (roi[1] - roi[0]) * last / (ow - 1);
        x += roi[0] * last;
        *outside = x < 0 || x > last;
        return x;
    }
    return (y + 0.5) / scale - 0.5;
}

static double cubic_w(double x, double A)
{
    x = fabs(x);
    if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0;
}

/* The weights of the taps around a source point at fraction `ratio`
 * (in (0, 1]) past the tap before it; returns their count. */
static int tap_weights(const resize_opts *o, double ratio, double scale, double *c)
{
    if (o->mode == RS_NEAREST) {
        bool up;
        if (ratio == 1) up = true;
        else if (strcmp(o->nearest, "round_prefer_ceil") == 0) up = ratio >= 0.5;
        else if (strcmp(o->nearest, "floor") == 0) up = false;
        else if (strcmp(o->nearest, "ceil") == 0) up = true;
        else up = ratio > 0.5;
        c[0] = !up;
        c[1] = up;
        return 2;
    }
    if (!o->antialias || scale >= 1) {
        if (o->mode == RS_LINEAR) {
            c[0] = 1 - ratio;
            c[1] = ratio;
            return 2;
        }
        for (int i = 0; i < 4; i++) c[i] = cubic_w((double)(i - 1) - ratio, o->a);
        return 4;
    }
    /* antialias: the filter stretched by 1/scale, normalised */
    double reach = o->mode == RS_LINEAR ? 1 : 2, sum = 0;
    int start = (int)floor(-reach / scale) + 1, cnt = 2 - 2 * start;
    if (cnt > RS_MAX_TAPS) return -1;
    for (int i = 0; i < cnt; i++) {
        double v = scale * ((double)(start + i) - ratio);
        c[i] = o->mode == RS_LINEAR ? fmax(0, fmin(1, 1 - fabs(v))) : cubic_w(v, o->a);
        sum += c[i];
    }
    for (int i = 0; i < cnt; i++) c[i] /= sum;
    return cnt;
}

/* Taps of output position y: indices (clamped into the input, as edge
 * padding does) and weights (exclude_outside renormalises without the
 * taps that fell outside). Returns the tap count, -1 when too many. */
static int taps_of(const resize_opts *o, double x, double scale, int64_t in, int64_t *idx, double *w)
{
    double fl = floor(x), ratio = x == fl ? 1 : x - fl;
    int t = tap_weights(o, ratio, scale, w);
    if (t < 0) return -1;
    int pad = (t + 1) / 2;
    double xp = x + pad, pp = floor(xp), frac = xp - pp;
    int64_t off = t % 2 == 0 ? (frac == 0 ? -(t / 2) : -(t / 2) + 1) : (frac <= 0.5 ? -((t - 1) / 2) : -((t - 1) / 2) + 1);
    int64_t first = (int64_t)pp + off - pad;
    double sum = 0;
    for (int j = 0; j < t; j++) {
        int64_t k = first + j;
        if (o->exclude && (k < 0 || k >= in)) w[j] = 0;
        sum += w[j];
        idx[j] = k < 0 ? 0 : k >= in ? in - 1 : k;
    }
    if (o->exclude && sum != 0)
        for (int j = 0; j < t; j++) w[j] /= sum;
    return t;
}

/* x resized along axis with the taps computed by resize_axis: idx and w
 * hold `t` taps per output position (near: the one nearest tap), mask
 * the positions that read the extrapolation value (or NULL). */
static ts_value *resize_apply(onnx_node *n, const resize_opts *o, ts_value *x, int axis, int64_t out, int t,
                              const double *idx, const double *w, const double *near, const double *mask)
{
    ts_builder *b = onnx_b(n);
    int r = x->type.rank;
    ts_value *y;
    if (o->mode == RS_NEAREST) {
        y = onnx_util_gather(n, x, const_f64(n, TS_DTYPE_I64, 1, &out, near), axis);
    } else {
        int64_t shp[2] = {out, t}, sum_axis = axis + 1;
        ts_dim wd[TS_MAX_RANK];
        if (r + 1 > TS_MAX_RANK) {
            onnx_unsupported(n, "rank %d (the taps need one more axis)", r);
            return NULL;
        }
        for (int i = 0; i <= r; i++) wd[i] = dconst(1);
        wd[axis] = dconst(out);
        wd[axis + 1] = dconst(t);
        ts_value *g = onnx_util_gather(n, x, const_f64(n, TS_DTYPE_I64, 2, shp, idx), axis);
        ts_value *wt = ts_b_reshape(b, const_f64(n, x->type.dtype, 2, shp, w), r + 1, wd);
        y = ts_b_reduce(b, TS_OP_REDUCE_SUM, ts_b_binary(b, TS_OP_MUL, g, wt), 1, &sum_axis, false);
    }
    if (!mask) return y;
    ts_value *m = onnx_util_place(n, const_f64(n, TS_DTYPE_BOOL, 1, &out, mask), r, axis, dconst(out));
    return ts_b_select(b, m, ts_b_scalar(b, x->type.dtype, o->extrap), y);
}

/* Resize one axis to `out` positions: the taps of every position are
 * computed here (the sizes are constants) and applied by resize_apply. */
static ts_value *resize_axis(onnx_node *n, const resize_opts *o, ts_value *x, int axis, int64_t out, double scale,
                             const double *roi)
{
    int64_t in = x->type.dims[axis].c, ti[RS_MAX_TAPS];
    double tw[RS_MAX_TAPS];
    size_t cells = (size_t)(out ? out : 1);
    double *idx = ts_mem_alloc(sizeof(double) * cells * RS_MAX_TAPS);
    double *w = ts_mem_alloc(sizeof(double) * cells * RS_MAX_TAPS);
    double *near = ts_mem_alloc(sizeof(double) * cells), *mask = ts_mem_alloc(sizeof(double) * cells);
    bool any_out = false;
    int t = 2;
    ts_value *y = NULL;
    if (!idx || !w || !near || !mask) {
        onnx_fail(n, TS_ERR_OOM, "out of memory");
        goto done;
    }
    for (int64_t p = 0; p < out; p++) {
        bool outside;
        double src = source_coord(o, (double)p, scale, in, out, roi, &outside);
        if ((t = taps_of(o, src, scale, in, ti, tw)) < 0) {
            onnx_unsupported(n, "antialiasing at scale %g needs more than %d taps", scale, RS_MAX_TAPS);
            goto done;
        }
        mask[p] = outside;
        any_out |= outside;
        near[p] = (double)ti[tw[1] > tw[0]];
        for (int j = 0; j < t; j++) {
            idx[p * t + j] = (double)ti[j];
            w[p * t + j] = tw[j];
        }
    }
    y = resize_apply(n, o, x, axis, out, t, idx, w, near, any_out ? mask : NULL);
done:
    ts_mem_free(idx);
    ts_mem_free(w);
    ts_mem_free(near);
    ts_mem_free(mask);
    return y;
}

/* Output size, scale and roi of every axis (the reference's
 * _interpolate_nd): from scales, or from sizes with
 * keep_aspect_ratio_policy. */
typedef struct resize_plan {
    int n_axes;
    int64_t axes[TS_MAX_RANK], out[TS_MAX_RANK];
    double scale[TS_MAX_RANK], roi[2 * TS_MAX_RANK];
} resize_plan;

typedef struct resize_args {
    const double *scales, *roi;
    const int64_t *sizes;
    int n_scales, n_roi, n_sizes;
} resize_args;

static bool near_eq(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

/* Axis i of the plan. A symbolic size is allowed only where the axis
 * stays as it is (scale 1, the whole roi): out is then -1. */
static bool plan_axis(onnx_node *n, const ts_type *x, const resize_args *a, int i, resize_plan *p)
{
    int64_t ax = p->axes[i];
    int k = p->n_axes, r = x->rank;
    ts_dim d = x->dims[ax];
    if (a->n_roi == 2 * k) {
        p->roi[ax] = a->roi[i];
        p->roi[r + ax] = a->roi[k + i];
    }
    if (ts_dim_is_const(d)) {
        p->scale[ax] = a->n_scales > 0 ? a->scales[i] : (double)a->sizes[i] / (double)d.c;
        p->out[ax] = a->n_scales > 0 ? (int64_t)(p->scale[ax] * (double)d.c) : a->sizes[i];
        return true;
    }
    if (a->n_scales > 0 && near_eq(a->scales[i], 1) && near_eq(p->roi[ax], 0) && near_eq(p->roi[r + ax], 1)) {
        p->out[ax] = -1;
        return true;
    }
    onnx_unsupported(n, "resizing axis %lld of symbolic size: the taps are computed from constant sizes",
                     (long long)ax);
    return false;
}

static bool resize_plan_sizes(onnx_node *n, const ts_type *x, const resize_args *a, resize_plan *p)
{
    int k = p->n_axes, r = x->rank;
    if ((a->n_scales > 0 ? a->n_scales : a->n_sizes) != k) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "scales or sizes must have %d entries", k);
        return false;
    }
    for (int i = 0; i < r; i++) {
        p->scale[i] = 1;
        p->roi[i] = 0;
        p->roi[r + i] = 1;
    }
    for (int i = 0; i < k; i++)
        if (!plan_axis(n, x, a, i, p)) return false;
    static const char *const policies[] = {"stretch", "not_larger", "not_smaller", NULL};
    int policy = n->opset >= 18 ? onnx_attr_enum(n, "keep_aspect_ratio_policy", "stretch", policies) : 0;
    if (policy < 0) return false;
    if (a->n_scales > 0 || policy == 0) return true;
    bool larger = policy == 1;
    double pick = larger ? INFINITY : -INFINITY;
    for (int i = 0; i < k; i++) pick = larger ? fmin(pick, p->scale[p->axes[i]]) : fmax(pick, p->scale[p->axes[i]]);
    for (int i = 0; i < k; i++) {
        int64_t ax = p->axes[i];
        p->scale[ax] = pick;
        p->out[ax] = (int64_t)(pick * (double)x->dims[ax].c + 0.5);
    }
    return true;
}

/* Resize x by the plan, one axis at a time; interpolation runs in f32
 * (f64 for f64 data) and rounds back once at the end, as the reference
 * computes in float and saturate-casts. */
static ts_value *resize_run(onnx_node *n, const resize_opts *o, ts_value *x, const resize_plan *p)
{
    ts_builder *b = onnx_b(n);
    ts_dtype dt = x->type.dtype, w = dt == TS_DTYPE_F64 ? TS_DTYPE_F64 : TS_DTYPE_F32;
    int r = x->type.rank;
    ts_value *y = o->mode == RS_NEAREST ? x : ts_b_cast(b, x, w);
    for (int i = 0; i < p->n_axes && y; i++) {
        int64_t ax = p->axes[i];
        const double roi[2] = {p->roi[ax], p->roi[r + ax]};
        if (p->out[ax] < 0 ||
            (near_eq(p->scale[ax], 1) && p->out[ax] == x->type.dims[ax].c && near_eq(roi[0], 0) && near_eq(roi[1], 1)))
            continue;
        y = resize_axis(n, o, y, (int)ax, p->out[ax], p->scale[ax], roi);
    }
    if (o->mode == RS_NEAREST || !y) return y;
    if (!ts_dtype_is_float(dt)) y = ts_b_unary(b, TS_OP_ROUND, y);
    return ts_b_cast(b, y, dt);
}

/* Resize-11.. interpolates three ways; Resize-10 and Upsample two (whose
 * "bilinear", from Upsample-1, still reads as linear). */
static bool resize_mode(onnx_node *n, resize_opts *o)
{
    static const char *const three[] = {"nearest", "linear", "cubic", NULL};
    static const char *const two[] = {"nearest", "linear", "bilinear", NULL};
    bool cubic = n->opset >= 11 && strcmp(n->op_type, "Resize") == 0;
    int m = onnx_attr_enum(n, "mode", "nearest", cubic ? three : two);
    o->mode = m == 0 ? RS_NEAREST : m == 2 && cubic ? RS_CUBIC : RS_LINEAR;
    return m >= 0;
}

/* Resize-11..'s coordinate modes, as each opset lists them. */
static bool resize_coords(onnx_node *n, resize_opts *o)
{
    static const char *const ctm_11[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                         "tf_half_pixel_for_nn", "tf_crop_and_resize", NULL};
    static const char *const ctm_13[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                         "tf_crop_and_resize", NULL};
    static const char *const ctm_19[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                         "asymmetric", "tf_crop_and_resize", NULL};
    static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL};
    const char *const *ctms = n->opset >= 19 ? ctm_19 : n->opset >= 13 ? ctm_13 : ctm_11;
    int c = onnx_attr_enum(n, "coordinate_transformation_mode", "half_pixel", ctms);
    int m = onnx_attr_enum(n, "nearest_mode", "round_prefer_floor", nearest);
    if (c < 0 || m < 0) return false;
    o->ctm = ctms[c];
    o->nearest = nearest[m];
    return true;
}

/* Upsample-7.. and Resize-10: scales only, asymmetric coordinates and
 * nearest rounding down (np.repeat for integer scales). */
static ts_status onnx_upsample(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    resize_opts o = {0, "asymmetric", "floor", -0.75, 0, false, false};
    resize_args a = {0};
    resize_plan p = {0};
    const float *fs;
    double attr[TS_MAX_RANK];
    if (!x || !resize_mode(n, &o)) return onnx_status(n);
    if (n->opset < 9 && strcmp(n->op_type, "Upsample") == 0) {
        a.n_scales = onnx_attr_floats(n, "scales", &fs);
        for (int i = 0; i < a.n_scales && i < TS_MAX_RANK; i++) attr[i] = fs[i];
        a.scales = attr;
    } else if (onnx_const_floats(n, 1, &a.scales, &a.n_scales) != TS_OK) {
        return onnx_status(n);
    }
    p.n_axes = x->type.rank;
    for (int i = 0; i < p.n_axes; i++) p.axes[i] = i;
    if (resize_plan_sizes(n, &x->type, &a, &p)) n->out[0] = resize_run(n, &o, x, &p);
    return onnx_status(n);
}

/* Resize-11..: roi, scales, sizes inputs; every coordinate mode, nearest
 * mode, linear, cubic, exclude_outside, axes and keep_aspect_ratio_policy
 * (18+), antialias for linear and cubic. */
static ts_status onnx_resize(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    resize_opts o = {0};
    resize_args a = {0};
    resize_plan p = {0};
    if (!x || !resize_mode(n, &o) || !resize_coords(n, &o)) return onnx_status(n);
    o.a = onnx_attr_float(n, "cubic_coeff_a", -0.75);
    o.extrap = onnx_attr_float(n, "extrapolation_value", 0);
    o.exclude = onnx_attr_int(n, "exclude_outside", 0) != 0;
    o.antialias = n->opset >= 18 && onnx_attr_int(n, "antialias", 0) != 0;
    if (o.antialias && o.mode == RS_NEAREST) return onnx_unsupported(n, "antialias with mode nearest");
    if (strcmp(o.ctm, "tf_crop_and_resize") == 0 && onnx_has_input(n, 1) &&
        onnx_const_floats(n, 1, &a.roi, &a.n_roi) != TS_OK)
        return onnx_status(n);
    if (onnx_has_input(n, 2) && onnx_const_floats(n, 2, &a.scales, &a.n_scales) != TS_OK) return onnx_status(n);
    if (a.n_scales <= 0 && onnx_util_const_ints(n, 3, &a.sizes, &a.n_sizes) != TS_OK) return onnx_status(n);
    const int64_t *axes;
    int na = n->opset >= 18 ? onnx_attr_ints(n, "axes", &axes) : -1;
    p.n_axes = na >= 0 ? na : x->type.rank;
    for (int i = 0; i < p.n_axes; i++)
        if (onnx_axis(n, na >= 0 ? axes[i] : i, x->type.rank, &p.axes[i]) != TS_OK) return onnx_status(n);
    if (!resize_plan_sizes(n, &x->type, &a, &p)) return onnx_status(n);
    n->out[0] = resize_run(n, &o, x, &p);
    return onnx_status(n);
}

/* ---- GridSample -------------------------------------------------------------------------- */

enum { GS_ZEROS, GS_BORDER, GS_REFLECT };

typedef struct gs_opts {
    int mode, pad;          /* RS_* and GS_* */
    bool align;
    ts_dtype ft;            /* the float type the coordinates are computed in */
} gs_opts;

/* One tap along one spatial axis: an index inside the axis and its
 * weight (0 where the tap reads zero padding). */
typedef struct gs_tap {
    ts_value *idx, *w;
} gs_tap;

static ts_value *fconst(onnx_node *n, const gs_opts *o, double v) { return ts_b_scalar(onnx_b(n), o->ft, v); }
static ts_value *fbin(onnx_node *n, ts_op op, ts_value *a, ts_value *b) { return ts_b_binary(onnx_b(n), op, a, b); }

static ts_value *clampf(onnx_node *n, const gs_opts *o, ts_value *x, double lo, double hi)
{
    return fbin(n, TS_OP_MAX, fbin(n, TS_OP_MIN, x, fconst(n, o, hi)), fconst(n, o, lo));
}

/* x reflected at the borders [lo, hi] until inside (the reference's
 * _gs_reflect): the distance past a border folds back, the parity of
 * the number of folds choosing the border it runs from. */
static ts_value *reflect(onnx_node *n, const gs_opts *o, ts_value *x, double lo, double hi)
{
    ts_builder *b = onnx_b(n);
    ts_value *below = fbin(n, TS_OP_LT, x, fconst(n, o, lo)), *above = fbin(n, TS_OP_LT, fconst(n, o, hi), x);
    ts_value *dx = ts_b_select(b, below, fbin(n, TS_OP_SUB, fconst(n, o, lo), x), fbin(n, TS_OP_SUB, x, fconst(n, o, hi)));
    ts_value *folds = ts_b_unary(b, TS_OP_FLOOR, fbin(n, TS_OP_DIV, dx, fconst(n, o, hi - lo)));
    ts_value *r = fbin(n, TS_OP_SUB, dx, fbin(n, TS_OP_MUL, folds, fconst(n, o, hi - lo)));
    ts_value *even = fbin(n, TS_OP_EQ, fbin(n, TS_OP_REM, folds, fconst(n, o, 2)), fconst(n, o, 0));
    ts_value *from_lo = fbin(n, TS_OP_ADD, fconst(n, o, lo), r), *from_hi = fbin(n, TS_OP_SUB, fconst(n, o, hi), r);
    ts_value *low = ts_b_select(b, even, from_lo, from_hi), *high = ts_b_select(b, even, from_hi, from_lo);
    return ts_b_select(b, below, low, ts_b_select(b, above, high, x));
}

/* The tap at (float, integral) position fi with weight w, read under
 * the padding mode. */
static gs_tap gs_fetch(onnx_node *n, const gs_opts *o, ts_value *fi, ts_value *w, int64_t d)
{
    ts_builder *b = onnx_b(n);
    gs_tap t = {NULL, w};
    double lo = o->align ? 0 : -0.5, hi = o->align ? (double)d - 1 : (double)d - 0.5;
    if (o->pad == GS_ZEROS) {
        ts_value *in = ts_b_binary(b, TS_OP_AND, fbin(n, TS_OP_LE, fconst(n, o, 0), fi),
                                   fbin(n, TS_OP_LE, fi, fconst(n, o, (double)d - 1)));
        t.w = ts_b_select(b, in, w, fconst(n, o, 0));
    } else if (o->pad == GS_REFLECT) {
        fi = reflect(n, o, fi, lo, hi);
    }
    t.idx = ts_b_cast(b, clampf(n, o, fi, 0, (double)d - 1), TS_DTYPE_I64);
    return t;
}

/* Keys' cubic weight at distance s in [0, 1] (near) or [1, 2] (far). */
static ts_value *cubic_near(onnx_node *n, const gs_opts *o, ts_value *s)
{
    const double A = -0.75;
    ts_value *p = fbin(n, TS_OP_SUB, fbin(n, TS_OP_MUL, fconst(n, o, A + 2), s), fconst(n, o, A + 3));
    return fbin(n, TS_OP_ADD, fbin(n, TS_OP_MUL, fbin(n, TS_OP_MUL, p, s), s), fconst(n, o, 1));
}

static ts_value *cubic_far(onnx_node *n, const gs_opts *o, ts_value *s)
{
    const double A = -0.75;
    ts_value *p = fbin(n, TS_OP_SUB, fbin(n, TS_OP_MUL, fconst(n, o, A), s), fconst(n, o, 5 * A));
    p = fbin(n, TS_OP_ADD, fbin(n, TS_OP_MUL, p, s), fconst(n, o, 8 * A));
    return fbin(n, TS_OP_SUB, fbin(n, TS_OP_MUL, p, s), fconst(n, o, 4 * A));
}

/* The taps of one spatial axis of size d for normalised coordinates g:
 * 1 (nearest), 2 (linear) or 4 (cubic). */
static int gs_axis_taps(onnx_node *n, const gs_opts *o, ts_value *g, int64_t d, gs_tap *taps)
{
    ts_builder *b = onnx_b(n);
    double lo = o->align ? 0 : -0.5, hi = o->align ? (double)d - 1 : (double)d - 0.5;
    ts_value *one = fconst(n, o, 1), *x;
    if (o->align) x = fbin(n, TS_OP_MUL, fbin(n, TS_OP_DIV, fbin(n, TS_OP_ADD, g, one), fconst(n, o, 2)), fconst(n, o, (double)d - 1));
    else x = fbin(n, TS_OP_DIV, fbin(n, TS_OP_SUB, fbin(n, TS_OP_MUL, fbin(n, TS_OP_ADD, g, one), fconst(n, o, (double)d)), one), fconst(n, o, 2));
    if (o->mode == RS_NEAREST) x = ts_b_unary(b, TS_OP_ROUND, x);
    if (o->pad == GS_BORDER) x = clampf(n, o, x, 0, (double)d - 1);
    else if (o->pad == GS_REFLECT) x = reflect(n, o, x, lo, hi);
    if (o->mode == RS_NEAREST) {
        /* the reference truncates the rounded coordinate (astype int32) */
        taps[0] = gs_fetch(n, o, ts_b_cast(b, ts_b_cast(b, x, TS_DTYPE_I64), o->ft), one, d);
        return 1;
    }
    ts_value *x0 = ts_b_unary(b, TS_OP_FLOOR, x), *t = fbin(n, TS_OP_SUB, x, x0);
    if (o->mode == RS_LINEAR) {
        taps[0] = gs_fetch(n, o, x0, fbin(n, TS_OP_SUB, one, t), d);
        taps[1] = gs_fetch(n, o, fbin(n, TS_OP_ADD, x0, one), t, d);
        return 2;
    }
    ts_value *u = fbin(n, TS_OP_SUB, one, t);
    ts_value *w[4] = {cubic_far(n, o, fbin(n, TS_OP_ADD, t, one)), cubic_near(n, o, t), cubic_near(n, o, u),
                      cubic_far(n, o, fbin(n, TS_OP_ADD, u, one))};
    for (int k = 0; k < 4; k++) taps[k] = gs_fetch(n, o, fbin(n, TS_OP_ADD, x0, fconst(n, o, k - 1)), w[k], d);
    return 4;
}

static bool gs_options(onnx_node *n, ts_value *x, gs_opts *o)
{
    const char *m = onnx_attr_string(n, "mode", n->opset >= 20 ? "linear" : "bilinear");
    const char *p = onnx_attr_string(n, "padding_mode", "zeros");
    o->mode = strcmp(m, "nearest") == 0 ? RS_NEAREST
            : strcmp(m, "linear") == 0 || strcmp(m, "bilinear") == 0 ? RS_LINEAR
            : strcmp(m, "cubic") == 0 || strcmp(m, "bicubic") == 0 ? RS_CUBIC : -1;
    o->pad = strcmp(p, "zeros") == 0 ? GS_ZEROS : strcmp(p, "border") == 0 ? GS_BORDER
           : strcmp(p, "reflection") == 0 ? GS_REFLECT : -1;
    o->align = onnx_attr_int(n, "align_corners", 0) != 0;
    o->ft = x->type.dtype == TS_DTYPE_F64 ? TS_DTYPE_F64 : TS_DTYPE_F32;
    if (o->mode < 0 || o->pad < 0) onnx_unsupported(n, "mode '%s' with padding_mode '%s'", m, p);
    return onnx_status(n) == TS_OK;
}

/* The flat offset of each output element's batch and channel in X
 * viewed as [N * C * S]: (n * C + c) * S, shaped [N, C, 1, ...]. */
static ts_value *gs_base(onnx_node *n, const ts_type *x, ts_dim S)
{
    ts_builder *b = onnx_b(n);
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->dims[i] : dconst(1);
    ts_value *bn = onnx_util_iota(n, TS_DTYPE_I64, x->rank, dims, 0);
    ts_value *nc = ts_b_binary(b, TS_OP_ADD, ts_b_binary(b, TS_OP_MUL, bn, onnx_util_dim_value(n, x->dims[1])),
                               onnx_util_iota(n, TS_DTYPE_I64, x->rank, dims, 1));
    return ts_b_binary(b, TS_OP_MUL, nc, onnx_util_dim_value(n, S));
}

/* GridSample-16..: per output point, the taps of every spatial axis
 * (from the grid, read in reverse axis order), combined: each product of
 * taps is one gather from the flattened X, weighted and summed. */
static ts_status onnx_grid_sample(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *grid = onnx_input(n, 1);
    gs_opts o;
    if (!x || !grid || !gs_options(n, x, &o)) return onnx_status(n);
    int r = x->type.rank - 2, q = grid->type.rank;
    if (r < 1 || q != r + 2 || !is_const(grid->type.dims[q - 1], r))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "X must be [N, C, D1..Dr] and grid [N, O1..Or, r]");
    for (int i = 0; i < r; i++)
        if (!ts_dim_is_const(x->type.dims[2 + i])) return onnx_unsupported(n, "symbolic spatial sizes of X");
    ts_builder *b = onnx_b(n);
    ts_value *g = ts_b_cast(b, grid, o.ft);
    gs_tap taps[TS_MAX_RANK][4];
    int cnt[TS_MAX_RANK], total = 1;
    for (int i = 0; i < r && g; i++) {
        ts_dim s[TS_MAX_RANK], l[TS_MAX_RANK];
        for (int k = 0; k < q; k++) {
            s[k] = k == q - 1 ? dconst(r - 1 - i) : dconst(0);
            l[k] = k == q - 1 ? dconst(r - i) : grid->type.dims[k];
        }
        ts_value *gi = ts_b_reshape(b, ts_b_slice(b, g, s, l, NULL), q - 1, grid->type.dims);
        cnt[i] = gs_axis_taps(n, &o, gi, x->type.dims[2 + i].c, taps[i]);
        total *= cnt[i];
    }
    if (onnx_status(n) != TS_OK) return onnx_status(n);
    ts_dim S = onnx_util_numel(n, r, x->type.dims + 2), yd[TS_MAX_RANK], pd[TS_MAX_RANK];
    yd[0] = pd[0] = x->type.dims[0];
    yd[1] = x->type.dims[1];
    pd[1] = dconst(1);
    for (int i = 0; i < r; i++) yd[2 + i] = pd[2 + i] = grid->type.dims[1 + i];
    ts_value *base = gs_base(n, &x->type, S), *flat = onnx_util_flatten(n, ts_b_cast(b, x, o.ft)), *sum = NULL;
    for (int c = 0; c < total && onnx_status(n) == TS_OK; c++) {
        ts_value *pos = NULL, *w = NULL;
        int64_t stride = 1;
        for (int i = r - 1, rest = c; i >= 0; rest /= cnt[i], i--) {
            gs_tap *t = &taps[i][rest % cnt[i]];
            ts_value *p = ts_b_binary(b, TS_OP_MUL, t->idx, ts_b_scalar(b, TS_DTYPE_I64, (double)stride));
            pos = pos ? ts_b_binary(b, TS_OP_ADD, pos, p) : p;
            w = w ? ts_b_binary(b, TS_OP_MUL, w, t->w) : t->w;
            stride *= x->type.dims[2 + i].c;
        }
        pos = ts_b_binary(b, TS_OP_ADD, ts_b_reshape(b, pos, r + 2, pd), base);
        ts_value *v = ts_b_binary(b, TS_OP_MUL, onnx_util_gather(n, flat, pos, 0), ts_b_reshape(b, w, r + 2, pd));
        sum = sum ? ts_b_binary(b, TS_OP_ADD, sum, v) : v;
    }
    n->out[0] = sum ? ts_b_cast(b, ts_b_broadcast_to(b, sum, r + 2, yd), x->type.dtype) : NULL;
    return onnx_status(n);
}
const onnx_op_entry onnx_ops_resize[] = {
    {"GridSample", 16, INT_MAX, onnx_grid_sample},
    {"Resize", 10, 10, onnx_upsample},
    {"Resize", 11, INT_MAX, onnx_resize},
    {"Upsample", 7, INT_MAX, onnx_upsample},
    {NULL, 0, 0, NULL},
};
