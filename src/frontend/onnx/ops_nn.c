/* ops_nn.c — ONNX normalisations, Dropout, Gemm and MatMul, assembled
 * from reductions, dot and elementwise primitives. Convolution and
 * pooling live in ops_conv.c, Einsum in ops_einsum.c.
 *
 * The normalisations share one shape: statistics are reductions with the
 * reduced axes kept as 1s, so they broadcast back against the input, and
 * per-channel parameters ([C]) are reshaped to [1, C, 1, ..., 1]. */
#include "frontend/onnx/onnx.h"

/* ---- helpers --------------------------------------------------------------- */

static bool wants(const onnx_node *n, int k) { return k < n->n_out && n->out_used[k]; }

static ts_value *scalar(onnx_node *n, ts_dtype dt, double v) { return ts_b_scalar(onnx_b(n), dt, v); }

static ts_value *bin(onnx_node *n, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(onnx_b(n), op, x, y); }

static ts_value *un(onnx_node *n, ts_op op, ts_value *x) { return ts_b_unary(onnx_b(n), op, x); }

static ts_value *cast_to(onnx_node *n, ts_value *v, ts_dtype dt)
{
    return v && v->type.dtype != dt ? ts_b_cast(onnx_b(n), v, dt) : v;
}

/* Input i converted to dtype dt (mixed-precision parameters, opset 15+). */
static ts_value *input_as(onnx_node *n, int i, ts_dtype dt) { return cast_to(n, onnx_input(n, i), dt); }

static ts_status dim_fail(onnx_node *n, const ts_err *err) { return onnx_fail(n, err->code, "%s", err->msg); }

/* A parameter of shape [C, ...] laid along axis 1 of a rank-r tensor:
 * [1, C, ..., 1, ...] (a vector gets trailing 1s; an older non-spatial
 * BatchNormalization parameter [C, D1, ...] just gains the leading 1). */
static ts_value *per_channel(onnx_node *n, ts_value *p, int r)
{
    if (!p) return NULL;
    ts_dim dims[TS_MAX_RANK];
    int pr = p->type.rank;
    if (pr + 1 > r) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "a per-channel parameter of rank %d does not fit an input of rank %d", pr, r);
        return NULL;
    }
    dims[0] = ts_dim_const(1);
    for (int i = 0; i < r - 1; i++) dims[i + 1] = i < pr ? p->type.dims[i] : ts_dim_const(1);
    return ts_b_reshape(onnx_b(n), p, r, dims);
}

/* The product of x's dims over [from, to). */
static ts_status dims_prod(onnx_node *n, const ts_value *x, int from, int to, ts_dim *out)
{
    ts_err err = {0};
    *out = ts_dim_const(1);
    for (int i = from; i < to; i++)
        if (ts_dim_mul(onnx_graph(n)->syms, *out, x->type.dims[i], out, &err) != TS_OK) return dim_fail(n, &err);
    return TS_OK;
}

/* The mean over the axes, kept as 1s. */
static ts_value *mean_of(onnx_node *n, ts_value *x, int na, const int64_t *axes)
{
    if (!x) return NULL;
    ts_dim cnt = ts_dim_const(1);
    ts_err err = {0};
    for (int i = 0; i < na; i++)
        if (ts_dim_mul(onnx_graph(n)->syms, cnt, x->type.dims[axes[i]], &cnt, &err) != TS_OK) {
            dim_fail(n, &err);
            return NULL;
        }
    ts_dtype dt = x->type.dtype;
    ts_value *c = ts_dim_is_const(cnt) ? scalar(n, dt, (double)cnt.c) : cast_to(n, onnx_dim_scalar(n, cnt), dt);
    return bin(n, TS_OP_DIV, ts_b_reduce(onnx_b(n), TS_OP_REDUCE_SUM, x, na, axes, true), c);
}

/* Mean and population variance (of the deviations, which is the stabler
 * form) over the axes, both with the axes kept. */
static void moments(onnx_node *n, ts_value *x, int na, const int64_t *axes, ts_value **mean, ts_value **var)
{
    *mean = mean_of(n, x, na, axes);
    ts_value *d = bin(n, TS_OP_SUB, x, *mean);
    *var = mean_of(n, bin(n, TS_OP_MUL, d, d), na, axes);
}

/* (x - mean) / sqrt(var + eps), with the reciprocal square root kept for
 * callers that output it. */
static ts_value *standardize(onnx_node *n, ts_value *x, ts_value *mean, ts_value *var, double eps, ts_value **inv)
{
    if (!x) return NULL;
    ts_dtype dt = x->type.dtype;
    ts_value *sd = un(n, TS_OP_SQRT, bin(n, TS_OP_ADD, var, scalar(n, dt, eps)));
    ts_value *iv = bin(n, TS_OP_DIV, scalar(n, dt, 1), sd);
    if (inv) *inv = iv;
    return bin(n, TS_OP_MUL, bin(n, TS_OP_SUB, x, mean), iv);
}

/* The ONNX stash_type attribute as a dtype (1 = float32 by default). */
static ts_status stash_dtype(onnx_node *n, ts_dtype *dt)
{
    ts_err err = {0};
    int64_t t = onnx_attr_int(n, "stash_type", 1);
    if (onnx_dtype((int)t, dt, &err) != TS_OK || !ts_dtype_is_float(*dt))
        return onnx_unsupported(n, "stash_type %lld is not a float type", (long long)t);
    return onnx_status(n);
}

/* ---- BatchNormalization, InstanceNormalization ---------------------------- */

/* f16 and bf16 inputs are normalised in f32 and rounded once at the end
 * (the spec asks it for BatchNormalization's statistics; the arithmetic
 * chain would otherwise round at every step). */
static ts_dtype compute_dtype(ts_dtype dt)
{
    return dt == TS_DTYPE_F16 || dt == TS_DTYPE_BF16 ? TS_DTYPE_F32 : dt;
}

/* y * scale + B with [C] parameters, for a rank-r result. */
static ts_value *scale_shift(onnx_node *n, ts_value *y, ts_value *s, ts_value *bias, int r)
{
    return bin(n, TS_OP_ADD, bin(n, TS_OP_MUL, y, per_channel(n, s, r)), per_channel(n, bias, r));
}

/* Training form (opset 14+): normalise with the batch statistics and
 * update the running ones (outputs in the running statistics' dtype). */
static ts_value *batch_norm_train(onnx_node *n, ts_value *x, ts_value *const p[4], double eps)
{
    double mom = onnx_attr_float(n, "momentum", 0.9);
    int r = x->type.rank;
    ts_dtype ct = x->type.dtype;
    int64_t axes[TS_MAX_RANK];
    int na = 0;
    for (int i = 0; i < r; i++)
        if (i != 1) axes[na++] = i;
    ts_value *mean, *var;
    moments(n, x, na, axes, &mean, &var);
    ts_value *y = scale_shift(n, standardize(n, x, mean, var, eps, NULL), p[0], p[1], r);
    ts_dim c = x->type.dims[1];
    ts_value *m = ts_b_reshape(onnx_b(n), mean, 1, &c), *v = ts_b_reshape(onnx_b(n), var, 1, &c);
    ts_value *k = scalar(n, ct, mom), *k1 = scalar(n, ct, 1 - mom);
    ts_value *rm = bin(n, TS_OP_ADD, bin(n, TS_OP_MUL, p[2], k), bin(n, TS_OP_MUL, m, k1));
    ts_value *rv = bin(n, TS_OP_ADD, bin(n, TS_OP_MUL, p[3], k), bin(n, TS_OP_MUL, v, k1));
    onnx_set_out(n, 1, cast_to(n, rm, onnx_input(n, 3)->type.dtype));
    onnx_set_out(n, 2, cast_to(n, rv, onnx_input(n, 4)->type.dtype));
    return y;
}

static ts_status onnx_batch_norm(onnx_node *n)
{
    ts_value *x = onnx_float_input(n, 0);
    TS_TRY(onnx_status(n));
    ts_dtype dt = x->type.dtype, ct = compute_dtype(dt);
    ts_value *p[4];            /* scale, B, mean, var */
    for (int i = 0; i < 4; i++) p[i] = input_as(n, i + 1, ct);
    double eps = onnx_attr_float(n, "epsilon", 1e-5);
    /* before opset 14, asking for the statistics outputs means training */
    bool train = n->opset >= 14 ? onnx_attr_int(n, "training_mode", 0) != 0 : false;
    /* opsets 1-6 train unless is_test is set (the default is 0) */
    if (n->opset < 7 && !onnx_attr_int(n, "is_test", 0))
        return onnx_unsupported(n, "training mode (is_test=0, the default before opset 7) is not assembled; "
                                   "export for inference (is_test=1)");
    /* momentum only moves the running statistics, which inference does
     * not output (batch_norm_train reads it); spatial=0 (opsets 7-8)
     * comes with parameters of shape [C, D1, ...], which per_channel
     * lays out as they are: the shapes already say what it says */
    if (!train) onnx_attr_ignore(n, "momentum");
    if (n->opset < 9) onnx_attr_ignore(n, "spatial");
    TS_TRY(onnx_status(n));
    int r = x->type.rank;
    if (r < 2) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the input must have rank >= 2");
    for (int k = 1; n->opset < 14 && k < n->n_out; k++)
        if (wants(n, k)) return onnx_unsupported(n, "training outputs (mean, var, saved_mean, saved_var) before opset 14");
    x = cast_to(n, x, ct);
    ts_value *y = train ? batch_norm_train(n, x, p, eps)
                        : scale_shift(n, standardize(n, x, per_channel(n, p[2], r), per_channel(n, p[3], r), eps, NULL),
                                      p[0], p[1], r);
    return onnx_set_out(n, 0, cast_to(n, y, dt));
}

static ts_status onnx_instance_norm(onnx_node *n)
{
    ts_value *x = onnx_float_input(n, 0);
    TS_TRY(onnx_status(n));
    int r = x->type.rank;
    if (r < 2) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the input must have rank >= 2");
    ts_dtype dt = x->type.dtype, ct = compute_dtype(dt);
    int64_t axes[TS_MAX_RANK];
    for (int i = 2; i < r; i++) axes[i - 2] = i;
    ts_value *mean, *var;
    x = cast_to(n, x, ct);
    moments(n, x, r - 2, axes, &mean, &var);
    ts_value *y = standardize(n, x, mean, var, onnx_attr_float(n, "epsilon", 1e-5), NULL);
    return onnx_set_out(n, 0, cast_to(n, scale_shift(n, y, input_as(n, 1, ct), input_as(n, 2, ct), r), dt));
}

/* ---- LayerNormalization, RMSNormalization, GroupNormalization --------------------- */

/* What LayerNormalization and RMSNormalization share: the float input, its
 * epsilon, the stash dtype, and the axes from `axis` to the last. */
static ts_status trailing_norm(onnx_node *n, ts_value **x, double *eps, ts_dtype *st, int64_t *axes, int *naxes)
{
    *x = onnx_float_input(n, 0);
    int64_t axis = onnx_attr_int(n, "axis", -1);
    *eps = onnx_attr_float(n, "epsilon", 1e-5);
    TS_TRY(onnx_status(n));
    TS_TRY(stash_dtype(n, st));
    int r = (*x)->type.rank;
    TS_TRY(onnx_axis(n, axis, r, &axis));
    for (int i = (int)axis; i < r; i++) axes[i - axis] = i;
    *naxes = r - (int)axis;
    return TS_OK;
}

/* Stage one in the stash type; Mean and InvStdDev are outputs in it too. */
static ts_status onnx_layer_norm(onnx_node *n)
{
    ts_value *x;
    double eps;
    ts_dtype st;
    int64_t axes[TS_MAX_RANK];
    int naxes;
    TS_TRY(trailing_norm(n, &x, &eps, &st, axes, &naxes));
    ts_value *mean, *var, *inv;
    ts_value *xs = cast_to(n, x, st);
    moments(n, xs, naxes, axes, &mean, &var);
    ts_value *y = cast_to(n, standardize(n, xs, mean, var, eps, &inv), x->type.dtype);
    y = bin(n, TS_OP_MUL, y, input_as(n, 1, x->type.dtype));
    if (onnx_has_input(n, 2)) y = bin(n, TS_OP_ADD, y, input_as(n, 2, x->type.dtype));
    onnx_set_out(n, 1, mean);
    onnx_set_out(n, 2, inv);
    return onnx_set_out(n, 0, y);
}

/* x / sqrt(mean(x^2) + eps) * scale over the axes from `axis` on. */
static ts_status onnx_rms_norm(onnx_node *n)
{
    ts_value *x;
    double eps;
    ts_dtype st;
    int64_t axes[TS_MAX_RANK];
    int naxes;
    TS_TRY(trailing_norm(n, &x, &eps, &st, axes, &naxes));
    ts_value *xs = cast_to(n, x, st);
    ts_value *ms = mean_of(n, bin(n, TS_OP_MUL, xs, xs), naxes, axes);
    ts_value *rms = un(n, TS_OP_SQRT, bin(n, TS_OP_ADD, ms, scalar(n, st, eps)));
    ts_value *y = cast_to(n, bin(n, TS_OP_DIV, xs, rms), x->type.dtype);
    return onnx_set_out(n, 0, bin(n, TS_OP_MUL, y, input_as(n, 1, x->type.dtype)));
}

/* A per-group parameter [G] (opset 18) repeated for each channel: [C]. */
static ts_value *group_to_channels(onnx_node *n, ts_value *p, ts_dim c, ts_dim cpg)
{
    ts_builder *b = onnx_b(n);
    ts_dim g = p ? p->type.dims[0] : ts_dim_const(0);
    ts_dim col[2] = {g, ts_dim_const(1)}, full[2] = {g, cpg};
    return ts_b_reshape(b, ts_b_broadcast_to(b, ts_b_reshape(b, p, 2, col), 2, full), 1, &c);
}

/* Statistics per (instance, group): x viewed as [N, G, C/G * D1 * ...]. */
static ts_status onnx_group_norm(onnx_node *n)
{
    ts_value *x = onnx_float_input(n, 0);
    int64_t groups = onnx_attr_int(n, "num_groups", 0);
    double eps = onnx_attr_float(n, "epsilon", 1e-5);
    ts_dtype st = compute_dtype(x ? x->type.dtype : TS_DTYPE_F32);
    TS_TRY(onnx_status(n));
    if (n->opset >= 21) TS_TRY(stash_dtype(n, &st));
    int r = x->type.rank;
    if (r < 2 || groups < 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "needs rank >= 2 and num_groups >= 1");
    ts_dim c = x->type.dims[1], cpg, rest, view[3];
    ts_err err = {0};
    if (ts_dim_is_const(c) && c.c % groups != 0)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "%lld channels do not split into %lld groups", (long long)c.c, (long long)groups);
    if (ts_dim_div(onnx_graph(n)->syms, c, ts_dim_const(groups), &cpg, &err) != TS_OK) return dim_fail(n, &err);
    TS_TRY(dims_prod(n, x, 2, r, &rest));
    if (ts_dim_mul(onnx_graph(n)->syms, cpg, rest, &view[2], &err) != TS_OK) return dim_fail(n, &err);
    view[0] = x->type.dims[0];
    view[1] = ts_dim_const(groups);
    int64_t last = 2;
    ts_value *xv = ts_b_reshape(onnx_b(n), cast_to(n, x, st), 3, view), *mean, *var;
    moments(n, xv, 1, &last, &mean, &var);
    ts_value *y = standardize(n, xv, mean, var, eps, NULL);
    y = cast_to(n, ts_b_reshape(onnx_b(n), y, r, x->type.dims), x->type.dtype);
    ts_value *s = input_as(n, 1, x->type.dtype), *bias = input_as(n, 2, x->type.dtype);
    if (n->opset < 21) {
        s = group_to_channels(n, s, c, cpg);
        bias = group_to_channels(n, bias, c, cpg);
    }
    return onnx_set_out(n, 0, bin(n, TS_OP_ADD, bin(n, TS_OP_MUL, y, per_channel(n, s, r)), per_channel(n, bias, r)));
}

/* ---- LpNormalization, MeanVarianceNormalization, LRN ---------------------------- */

static ts_status onnx_lp_norm(onnx_node *n)
{
    ts_value *x = onnx_float_input(n, 0);
    int64_t axis = onnx_attr_int(n, "axis", -1), p = onnx_attr_int(n, "p", 2);
    TS_TRY(onnx_status(n));
    TS_TRY(onnx_axis(n, axis, x->type.rank, &axis));
    if (p != 1 && p != 2) return onnx_unsupported(n, "p = %lld: the spec allows only 1 and 2", (long long)p);
    ts_dtype dt = x->type.dtype;
    x = cast_to(n, x, compute_dtype(dt));
    ts_value *v = p == 1 ? un(n, TS_OP_ABS, x) : bin(n, TS_OP_MUL, x, x);
    ts_value *norm = ts_b_reduce(onnx_b(n), TS_OP_REDUCE_SUM, v, 1, &axis, true);
    if (p == 2) norm = un(n, TS_OP_SQRT, norm);
    /* a zero norm gives 0, not 0/0 (as the reference does) */
    ts_value *zero = scalar(n, x->type.dtype, 0);
    ts_value *y = ts_b_select(onnx_b(n), bin(n, TS_OP_EQ, norm, zero), zero, bin(n, TS_OP_DIV, x, norm));
    return onnx_set_out(n, 0, cast_to(n, y, dt));
}

/* As the spec's function body: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9). */
static ts_status onnx_mvn(onnx_node *n)
{
    static const int64_t def_axes[3] = {0, 2, 3};
    ts_value *x = onnx_float_input(n, 0);
    const int64_t *ax;
    int cnt = onnx_attr_ints(n, "axes", &ax);
    TS_TRY(onnx_status(n));
    if (cnt < 0) {
        ax = def_axes;
        cnt = 3;
    }
    int64_t axes[TS_MAX_RANK];
    if (cnt > x->type.rank) return onnx_fail(n, TS_ERR_INVALID_MODEL, "%d axes for rank %d", cnt, x->type.rank);
    for (int i = 0; i < cnt; i++) TS_TRY(onnx_axis(n, ax[i], x->type.rank, &axes[i]));
    ts_dtype dt = x->type.dtype, ct = compute_dtype(dt);
    x = cast_to(n, x, ct);
    ts_value *mean = mean_of(n, x, cnt, axes), *mean_sq = mean_of(n, bin(n, TS_OP_MUL, x, x), cnt, axes);
    ts_value *sd = un(n, TS_OP_SQRT, bin(n, TS_OP_SUB, mean_sq, bin(n, TS_OP_MUL, mean, mean)));
    ts_value *y = bin(n, TS_OP_DIV, bin(n, TS_OP_SUB, x, mean), bin(n, TS_OP_ADD, sd, scalar(n, ct, 1e-9)));
    return onnx_set_out(n, 0, cast_to(n, y, dt));
}

/* The square sum over a channel window is a reduce_window of x^2 whose
 * window spans `size` channels, floor((size-1)/2) of them before c. */
static ts_status onnx_lrn(onnx_node *n)
{
    ts_value *x = onnx_float_input(n, 0);
    int64_t size = onnx_attr_int(n, "size", 0);
    double alpha = onnx_attr_float(n, "alpha", 1e-4), beta = onnx_attr_float(n, "beta", 0.75);
    double bias = onnx_attr_float(n, "bias", 1.0);
    TS_TRY(onnx_status(n));
    int r = x->type.rank;
    if (size < 1 || r < 2) return onnx_fail(n, TS_ERR_INVALID_MODEL, "needs size >= 1 and rank >= 2");
    int64_t win[TS_MAX_RANK], one[TS_MAX_RANK], lo[TS_MAX_RANK], hi[TS_MAX_RANK];
    for (int i = 0; i < r; i++) {
        win[i] = i == 1 ? size : 1;
        one[i] = 1;
        lo[i] = i == 1 ? (size - 1) / 2 : 0;
        hi[i] = i == 1 ? size - 1 - lo[i] : 0;
    }
    ts_graph *g = onnx_graph(n);
    ts_op op = TS_OP_REDUCE_WINDOW;
    ts_attr *a = ts_b_attrs(onnx_b(n), op);
    if (!a) return onnx_status(n);
    if (ts_attr_set_enum(g, op, a, "kind", "sum") != TS_OK || ts_attr_set_ints(g, op, a, "window", r, win) != TS_OK ||
        ts_attr_set_ints(g, op, a, "strides", r, one) != TS_OK || ts_attr_set_ints(g, op, a, "dilations", r, one) != TS_OK ||
        ts_attr_set_ints(g, op, a, "pad_lo", r, lo) != TS_OK || ts_attr_set_ints(g, op, a, "pad_hi", r, hi) != TS_OK)
        return onnx_fail(n, TS_ERR_INTERNAL, "cannot set the attributes of reduce_window");
    ts_dtype dt = x->type.dtype, ct = compute_dtype(dt);
    x = cast_to(n, x, ct);
    ts_value *sq = bin(n, TS_OP_MUL, x, x);
    ts_value *ss = ts_b_node(onnx_b(n), op, 1, &sq, a);
    ts_value *base = bin(n, TS_OP_ADD, scalar(n, ct, bias), bin(n, TS_OP_MUL, ss, scalar(n, ct, alpha / (double)size)));
    return onnx_set_out(n, 0, cast_to(n, bin(n, TS_OP_DIV, x, bin(n, TS_OP_POW, base, scalar(n, ct, beta))), dt));
}

/* ---- Dropout ------------------------------------------------------------------- */

/* Whether a Dropout node drops anything: training mode (input 2 since
 * opset 12) with a non-zero ratio. Before opset 12 it is inference: the
 * is_test attribute of opsets 1-6 is ignored, as inference runtimes do. */
static ts_status dropout_trains(onnx_node *n, bool *train)
{
    *train = false;
    if (n->opset < 12 || !onnx_has_input(n, 2)) return TS_OK;
    const int64_t *t;
    int cnt;
    TS_TRY(onnx_const_ints(n, 2, &t, &cnt));
    if (cnt != 1 || !t[0]) return TS_OK;
    double ratio = 0.5;
    if (onnx_has_input(n, 1)) {
        const double *r;
        TS_TRY(onnx_const_floats(n, 1, &r, &cnt));
        ratio = cnt == 1 ? r[0] : ratio;
    }
    *train = ratio != 0;
    return TS_OK;
}

/* Inference: the identity, and a mask of all true (of x's type before
 * opset 10, when the mask was T). */
static ts_status onnx_dropout(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    bool train;
    TS_TRY(onnx_status(n));
    TS_TRY(dropout_trains(n, &train));
    /* Inference drops nothing: ratio (an attribute before opset 12),
     * seed (12+) and is_test (before 7) change nothing here; training
     * with a non-zero ratio is refused below. */
    onnx_attr_ignore(n, "ratio");
    onnx_attr_ignore(n, "seed");
    onnx_attr_ignore(n, "is_test");
    if (train)
        return onnx_unsupported(n, "training mode with a non-zero ratio: random masks are not assembled (export for inference)");
    if (wants(n, 1)) {
        ts_dtype mt = n->opset < 10 ? x->type.dtype : TS_DTYPE_BOOL;
        onnx_set_out(n, 1, ts_b_full(onnx_b(n), mt, 1, x->type.rank, x->type.dims));
    }
    return onnx_set_out(n, 0, x);
}

/* ---- Gemm, MatMul ------------------------------------------------------------------ */

/* alpha * A' B' + beta * C, one dot contracting the right axes of A and B
 * (so the transposes cost nothing). */
static ts_status onnx_gemm(onnx_node *n)
{
    ts_value *a = onnx_input(n, 0), *bm = onnx_input(n, 1);
    int64_t ta = onnx_attr_int(n, "transA", 0), tb = onnx_attr_int(n, "transB", 0);
    double alpha = onnx_attr_float(n, "alpha", 1.0), beta = onnx_attr_float(n, "beta", 1.0);
    /* broadcast (opsets 1-6) only permits C's broadcast, which is always
     * assembled; a model with broadcast=0 gives C in full, the same sum */
    if (n->opset < 7) onnx_attr_ignore(n, "broadcast");
    TS_TRY(onnx_status(n));
    if (a->type.rank != 2 || bm->type.rank != 2)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "A and B must be matrices (ranks %d and %d)", a->type.rank, bm->type.rank);
    ts_dtype dt = a->type.dtype;
    int64_t lc = ta ? 0 : 1, rc = tb ? 1 : 0;
    ts_value *y = ts_b_dot(onnx_b(n), a, bm, 0, NULL, NULL, 1, &lc, &rc);
    if (alpha != 1.0) y = bin(n, TS_OP_MUL, y, scalar(n, dt, alpha));
    if (onnx_has_input(n, 2) && beta != 0.0) {
        ts_value *c = onnx_input(n, 2);
        if (beta != 1.0) c = bin(n, TS_OP_MUL, c, scalar(n, dt, beta));
        y = bin(n, TS_OP_ADD, y, c);
    }
    return onnx_set_out(n, 0, y);
}

static ts_status onnx_matmul(onnx_node *n)
{
    ts_value *a = onnx_input(n, 0), *b = onnx_input(n, 1);
    TS_TRY(onnx_status(n));
    return onnx_set_out(n, 0, ts_b_matmul(onnx_b(n), a, b));
}

const onnx_op_entry onnx_ops_nn[] = {
    {"BatchNormalization", 1, INT_MAX, onnx_batch_norm},
    {"Dropout", 1, INT_MAX, onnx_dropout},
    {"Gemm", 1, INT_MAX, onnx_gemm},
    {"GroupNormalization", 18, INT_MAX, onnx_group_norm},
    {"InstanceNormalization", 1, INT_MAX, onnx_instance_norm},
    {"LayerNormalization", 17, INT_MAX, onnx_layer_norm},
    {"LpNormalization", 1, INT_MAX, onnx_lp_norm},
    {"LRN", 1, INT_MAX, onnx_lrn},
    {"MatMul", 1, INT_MAX, onnx_matmul},
    {"MeanVarianceNormalization", 9, INT_MAX, onnx_mvn},
    {"RMSNormalization", 23, INT_MAX, onnx_rms_norm},
    {NULL, 0, 0, NULL},
};
