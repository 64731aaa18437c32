/* ops_signal.c — ONNX signal-processing operators: the window functions
 * (HannWindow, HammingWindow, BlackmanWindow), DFT, STFT and
 * MelWeightMatrix, assembled from primitives. Transforms are dots with
 * cos/sin matrices built from iota (the builder folds them to constants);
 * the angle 2*pi*((k*n) mod N)/N is reduced in integers first, so large
 * k*n lose no precision. Lengths that size a result (window size,
 * dft_length, frame_step) must be constants. Split from ops_misc.c.
 */
#include "frontend/onnx/onnx.h"
#include "frontend/onnx/ops_util.h"

#include <math.h>

#define PI 3.14159265358979323846

/* ---- small helpers ------------------------------------------------------------ */

static ts_value *bin(ts_builder *b, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(b, op, x, y); }

static ts_value *un(ts_builder *b, ts_op op, ts_value *x) { return ts_b_unary(b, op, x); }

static ts_value *f64(ts_builder *b, double v) { return ts_b_scalar(b, TS_DTYPE_F64, v); }

static ts_value *i64(ts_builder *b, int64_t v) { return ts_b_scalar(b, TS_DTYPE_I64, (double)v); }

static ts_value *as(ts_builder *b, ts_value *x, ts_dtype dt)
{
    return !x ? NULL : x->type.dtype == dt ? x : ts_b_cast(b, x, dt);
}

static ts_value *opt_input(onnx_node *n, int i) { return onnx_has_input(n, i) ? onnx_input(n, i) : NULL; }

/* Input i as one constant integer. */
static ts_status const_int(onnx_node *n, int i, int64_t *v)
{
    const int64_t *p = NULL;
    int cnt = 0;
    TS_TRY(onnx_const_ints(n, i, &p, &cnt));
    if (cnt != 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d must hold one integer (it has %d)", i, cnt);
    *v = p[0];
    return TS_OK;
}

static ts_status const_float(onnx_node *n, int i, double *v)
{
    const double *p = NULL;
    int cnt = 0;
    TS_TRY(onnx_const_floats(n, i, &p, &cnt));
    if (cnt != 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d must hold one number (it has %d)", i, cnt);
    *v = p[0];
    return TS_OK;
}

/* The float dtype named by attribute `name` (ONNX code, default f32). */
static ts_status out_dtype(onnx_node *n, const char *name, ts_dtype *dt)
{
    ts_err err = {0};
    if (onnx_dtype((int)onnx_attr_int(n, name, 1), dt, &err) != TS_OK) return onnx_unsupported(n, "%s: %s", name, err.msg);
    if (!ts_dtype_is_float(*dt)) return onnx_unsupported(n, "%s %s (a float type is needed)", name, ts_dtype_name(*dt));
    return onnx_status(n);
}

/* ---- windows ---------------------------------------------------------------------- */

/* w[i] = sum_k coef[k] * cos(2 pi k i / N'), N' = size (periodic) or
 * size - 1 (symmetric); computed in f64, rounded once to output_datatype. */
static ts_status cosine_window(onnx_node *n, int ncoef, const double *coef)
{
    ts_builder *b = onnx_b(n);
    int64_t size = 0;
    ts_dtype dt;
    TS_TRY(const_int(n, 0, &size));
    TS_TRY(out_dtype(n, "output_datatype", &dt));
    if (size < 0) return onnx_fail(n, TS_ERR_INVALID_MODEL, "window size %lld is negative", (long long)size);
    double den = onnx_attr_int(n, "periodic", 1) ? (double)size : (double)(size - 1);
    ts_dim d = ts_dim_const(size);
    ts_value *i = onnx_util_iota_b(b, TS_DTYPE_F64, 1, &d, 0), *w = f64(b, coef[0]);
    for (int k = 1; k < ncoef; k++) {
        ts_value *c = un(b, TS_OP_COS, bin(b, TS_OP_MUL, i, f64(b, 2 * PI * k / den)));
        w = bin(b, TS_OP_ADD, w, bin(b, TS_OP_MUL, c, f64(b, coef[k])));
    }
    n->out[0] = as(b, ts_b_broadcast_to(b, w, 1, &d), dt);
    return onnx_status(n);
}

/* HannWindow-17: sin^2(pi i / N') = 0.5 - 0.5 cos(2 pi i / N'). */
static ts_status onnx_hann_window(onnx_node *n) { return cosine_window(n, 2, (const double[]){0.5, -0.5}); }

/* HammingWindow-17: alpha = 25/46. */
static ts_status onnx_hamming_window(onnx_node *n)
{
    return cosine_window(n, 2, (const double[]){25.0 / 46.0, -21.0 / 46.0});
}

/* BlackmanWindow-17. */
static ts_status onnx_blackman_window(onnx_node *n) { return cosine_window(n, 3, (const double[]){0.42, -0.5, 0.08}); }

/* ---- DFT, STFT ---------------------------------------------------------------------------- */

/* f(2 pi ((r * c) mod N) / N) over [R, C], f64, f cos or sin. */
static ts_value *trig(ts_builder *b, ts_op f, int64_t R, int64_t C, int64_t N)
{
    ts_dim d[2] = {ts_dim_const(R), ts_dim_const(C)};
    ts_value *rc = bin(b, TS_OP_MUL, onnx_util_iota_b(b, TS_DTYPE_I64, 2, d, 0), onnx_util_iota_b(b, TS_DTYPE_I64, 2, d, 1));
    ts_value *ang = bin(b, TS_OP_MUL, as(b, bin(b, TS_OP_REM, rc, i64(b, N)), TS_DTYPE_F64), f64(b, 2 * PI / (double)N));
    return un(b, f, ang);
}

/* The [rows, cin, cols, cout] matrix from a table of [rows, cols] entries
 * e[c][c'] (NULL for zero). */
static ts_value *assemble(ts_builder *b, int cin, int cout, ts_value *e[2][2])
{
    ts_value *part[2], *out[2];
    for (int c = 0; c < cin; c++) {
        for (int k = 0; k < cout; k++) part[k] = onnx_util_unsq_b(b, onnx_util_unsq_b(b, e[c][k], 1), 3);
        out[c] = cout == 1 ? part[0] : ts_b_concat(b, 2, part, 3);
    }
    return cin == 1 ? out[0] : ts_b_concat(b, 2, out, 1);
}

/* The complex DFT of length N as [N, cin, K, 2] (the first K bins):
 * forward e^{-i theta}, inverse e^{+i theta} / N. */
static ts_value *dft_matrix(ts_builder *b, int64_t N, int cin, int64_t K, bool inverse)
{
    double sg = inverse ? -1 : 1, s = inverse ? 1.0 / (double)N : 1;
    ts_value *c = bin(b, TS_OP_MUL, trig(b, TS_OP_COS, N, K, N), f64(b, s));
    ts_value *sn = bin(b, TS_OP_MUL, trig(b, TS_OP_SIN, N, K, N), f64(b, sg * s));
    ts_value *e[2][2] = {{c, un(b, TS_OP_NEG, sn)}, {sn, c}};
    return assemble(b, cin, 2, e);
}

/* The inverse of a one-sided spectrum (numpy irfft) as [N/2+1, cin, N, 1]:
 * bins other than 0 and N/2 count twice (their conjugate mirror); the sine
 * vanishes at those two, so their imaginary parts are ignored. */
static ts_value *irfft_matrix(ts_builder *b, int64_t N, int cin)
{
    int64_t K = N / 2 + 1;
    ts_dim d[2] = {ts_dim_const(K), ts_dim_const(1)};
    ts_value *k = onnx_util_iota_b(b, TS_DTYPE_I64, 2, d, 0);
    ts_value *edge = ts_b_binary(b, TS_OP_OR, bin(b, TS_OP_EQ, k, i64(b, 0)), bin(b, TS_OP_EQ, bin(b, TS_OP_MUL, k, i64(b, 2)), i64(b, N)));
    ts_value *w = bin(b, TS_OP_DIV, ts_b_select(b, edge, f64(b, 1), f64(b, 2)), f64(b, (double)N));
    ts_value *c = bin(b, TS_OP_MUL, trig(b, TS_OP_COS, K, N, N), w);
    ts_value *s = bin(b, TS_OP_MUL, trig(b, TS_OP_SIN, K, N, N), un(b, TS_OP_NEG, w));
    ts_value *e[2][2] = {{c, NULL}, {s, NULL}};
    return assemble(b, cin, 1, e);
}

/* x [..., L (at axis), ..., cin] zero-padded or cut to len along axis. */
static ts_value *fit(ts_builder *b, ts_value *x, int axis, int64_t len)
{
    int64_t L = x->type.dims[axis].c;
    if (L >= len) return L == len ? x : onnx_util_cut_b(b, x, axis, 0, len);
    int64_t lo[TS_MAX_RANK] = {0}, hi[TS_MAX_RANK] = {0}, in[TS_MAX_RANK] = {0};
    hi[axis] = len - L;
    ts_graph *g = ts_builder_graph(b);
    ts_attr *a = ts_b_attrs(b, TS_OP_PAD);
    int r = x->type.rank;
    if (!a || ts_attr_set_ints(g, TS_OP_PAD, a, "lo", r, lo) != TS_OK || ts_attr_set_ints(g, TS_OP_PAD, a, "hi", r, hi) != TS_OK ||
        ts_attr_set_ints(g, TS_OP_PAD, a, "interior", r, in) != TS_OK) {
        ts_builder_fail(b, TS_ERR_OOM, "pad: could not set its attributes");
        return NULL;
    }
    return ts_b_node(b, TS_OP_PAD, 2, (ts_value *[]){x, ts_b_scalar(b, x->type.dtype, 0)}, a);
}

/* Contract x's axis and its last (complex) axis with m [L, cin, K, cout];
 * the K axis takes axis's place, cout is last. */
static ts_value *transform(ts_builder *b, ts_value *x, int axis, ts_value *m)
{
    if (!x || !m) return NULL;
    int r = x->type.rank;
    int64_t lc[2] = {axis, r - 1}, rc[2] = {0, 1}, perm[TS_MAX_RANK];
    ts_value *y = ts_b_dot(b, x, as(b, m, x->type.dtype), 0, NULL, NULL, 2, lc, rc);
    for (int i = 0; i < r; i++) perm[i] = i < axis ? i : i == axis ? r - 2 : i < r - 1 ? i - 1 : r - 1;
    return y ? ts_b_transpose(b, y, perm) : NULL;
}

/* The DFT axis: attribute (17-19, default 1) or input 2 (20+, default -2). */
static ts_status dft_axis(onnx_node *n, int r, int *axis)
{
    int64_t a = n->opset >= 20 ? -2 : onnx_attr_int(n, "axis", 1), ax;
    if (n->opset >= 20 && onnx_has_input(n, 2)) TS_TRY(const_int(n, 2, &a));
    TS_TRY(onnx_axis(n, a, r, &ax));
    if (ax == r - 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "axis %lld is the complex axis", (long long)a);
    *axis = (int)ax;
    return TS_OK;
}

/* DFT-17/20: forward, inverse, one-sided (rfft), inverse one-sided (irfft). */
static ts_status onnx_dft(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    ts_value *x = onnx_input(n, 0);
    TS_TRY(onnx_status(n));
    int r = x->type.rank, axis = 0;
    if (r < 2 || !ts_dtype_is_float(x->type.dtype)) return onnx_fail(n, TS_ERR_SHAPE, "input must be a float tensor [..., 1 or 2]");
    TS_TRY(dft_axis(n, r, &axis));
    ts_dim L = x->type.dims[axis], C = x->type.dims[r - 1];
    if (!ts_dim_is_const(L) || !ts_dim_is_const(C) || (C.c != 1 && C.c != 2))
        return onnx_unsupported(n, "a symbolic DFT axis, or a last axis that is not 1 or 2");
    bool inv = onnx_attr_int(n, "inverse", 0) != 0, one = onnx_attr_int(n, "onesided", 0) != 0;
    int64_t N = inv && one ? 2 * (L.c - 1) : L.c;
    if (onnx_has_input(n, 1)) TS_TRY(const_int(n, 1, &N));
    if (N < 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "dft_length %lld is not positive", (long long)N);
    if (inv && one)
        n->out[0] = transform(b, fit(b, x, axis, N / 2 + 1), axis, irfft_matrix(b, N, (int)C.c));
    else
        n->out[0] = transform(b, fit(b, x, axis, N), axis, dft_matrix(b, N, (int)C.c, one ? N / 2 + 1 : N, inv));
    return onnx_status(n);
}

/* STFT-17: frames gathered by an iota index, windowed, then one DFT. */
static ts_status onnx_stft(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    ts_value *x = onnx_input(n, 0), *win = opt_input(n, 2);
    int64_t step = 0, fl = 0;
    TS_TRY(onnx_status(n));
    TS_TRY(const_int(n, 1, &step));
    if (x->type.rank != 3 || !ts_dim_is_const(x->type.dims[1]) || !ts_dim_is_const(x->type.dims[2]))
        return onnx_unsupported(n, "signal must be [batch, constant length, 1 or 2]");
    int64_t L = x->type.dims[1].c, cin = x->type.dims[2].c;
    fl = win && win->type.rank == 1 && ts_dim_is_const(win->type.dims[0]) ? win->type.dims[0].c : L;
    if (onnx_has_input(n, 3)) TS_TRY(const_int(n, 3, &fl));
    if (step < 1 || fl < 1 || fl > L || (cin != 1 && cin != 2))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "frame_step %lld, frame_length %lld for a signal of %lld", (long long)step,
                         (long long)fl, (long long)L);
    int64_t F = 1 + (L - fl) / step;
    ts_dim d[2] = {ts_dim_const(F), ts_dim_const(fl)};
    ts_value *idx = bin(b, TS_OP_ADD, bin(b, TS_OP_MUL, onnx_util_iota_b(b, TS_DTYPE_I64, 2, d, 0), i64(b, step)),
                        onnx_util_iota_b(b, TS_DTYPE_I64, 2, d, 1));
    ts_value *fr = onnx_util_take_b(b, x, idx, 1);
    if (win) {
        ts_dim wd[4] = {ts_dim_const(1), ts_dim_const(1), win->type.dims[0], ts_dim_const(1)};
        fr = bin(b, TS_OP_MUL, fr, ts_b_reshape(b, as(b, win, x->type.dtype), 4, wd));
    }
    bool one = onnx_attr_int(n, "onesided", 1) != 0;
    n->out[0] = transform(b, fr, 2, dft_matrix(b, fl, (int)cin, one ? fl / 2 + 1 : fl, false));
    return onnx_status(n);
}

/* ---- MelWeightMatrix ------------------------------------------------------------------------ */

/* The M+2 filter edges as spectrogram bins, as the ONNX reference: mel
 * points evenly spaced over [lo, hi] mel in steps (hi - lo) / (M + 2),
 * back to Hz, then (dft_length + 1) * f // sample_rate. */
static ts_value *mel_edges(ts_builder *b, int64_t M, int64_t dft, int64_t sr, double lo_hz, double hi_hz)
{
    double lo = 2595 * log10(1 + lo_hz / 700), hi = 2595 * log10(1 + hi_hz / 700);
    ts_dim d = ts_dim_const(M + 2);
    ts_value *mel = bin(b, TS_OP_ADD, bin(b, TS_OP_MUL, onnx_util_iota_b(b, TS_DTYPE_F64, 1, &d, 0), f64(b, (hi - lo) / (double)(M + 2))),
                        f64(b, lo));
    ts_value *hz = bin(b, TS_OP_POW, f64(b, 10), bin(b, TS_OP_DIV, mel, f64(b, 2595)));
    hz = bin(b, TS_OP_MUL, f64(b, 700), bin(b, TS_OP_SUB, hz, f64(b, 1)));
    ts_value *num = bin(b, TS_OP_MUL, hz, f64(b, (double)(dft + 1))), *den = f64(b, (double)sr);
    /* numpy's float floor division: (a - fmod(a, b)) / b, rounded */
    ts_value *q = un(b, TS_OP_ROUND, bin(b, TS_OP_DIV, bin(b, TS_OP_SUB, num, bin(b, TS_OP_REM, num, den)), den));
    return as(b, as(b, q, TS_DTYPE_I64), TS_DTYPE_F64);
}

/* MelWeightMatrix-17: [dft_length/2 + 1, num_mel_bins] triangular filters. */
static ts_status onnx_mel_weight_matrix(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    int64_t M = 0, dft = 0, sr = 0;
    double lo = 0, hi = 0;
    ts_dtype dt;
    TS_TRY(const_int(n, 0, &M));
    TS_TRY(const_int(n, 1, &dft));
    TS_TRY(const_int(n, 2, &sr));
    TS_TRY(const_float(n, 3, &lo));
    TS_TRY(const_float(n, 4, &hi));
    TS_TRY(out_dtype(n, "output_datatype", &dt));
    if (M < 1 || dft < 1 || sr < 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "num_mel_bins, dft_length and sample_rate must be positive");
    ts_value *e = onnx_util_unsq_b(b, mel_edges(b, M, dft, sr, lo, hi), 0);
    ts_value *l = onnx_util_cut_b(b, e, 1, 0, M), *c = onnx_util_cut_b(b, e, 1, 1, M + 1);
    ts_value *h = onnx_util_cut_b(b, e, 1, 2, M + 2);
    ts_dim d[2] = {ts_dim_const(dft / 2 + 1), ts_dim_const(M)};
    ts_value *j = onnx_util_iota_b(b, TS_DTYPE_F64, 2, d, 0);
    ts_value *up = ts_b_binary(b, TS_OP_AND, bin(b, TS_OP_LE, l, j), bin(b, TS_OP_LE, j, c));
    up = ts_b_binary(b, TS_OP_AND, up, bin(b, TS_OP_LT, l, c));
    ts_value *down = ts_b_binary(b, TS_OP_AND, bin(b, TS_OP_LE, c, j), bin(b, TS_OP_LT, j, h));
    ts_value *peak = ts_b_binary(b, TS_OP_AND, bin(b, TS_OP_EQ, l, c), bin(b, TS_OP_EQ, j, c));
    ts_value *rise = bin(b, TS_OP_DIV, bin(b, TS_OP_SUB, j, l), bin(b, TS_OP_SUB, c, l));
    ts_value *fall = bin(b, TS_OP_DIV, bin(b, TS_OP_SUB, h, j), bin(b, TS_OP_SUB, h, c));
    ts_value *w = ts_b_select(b, peak, f64(b, 1), f64(b, 0));
    w = ts_b_select(b, down, fall, ts_b_select(b, up, rise, w));
    n->out[0] = as(b, w, dt);
    return onnx_status(n);
}
const onnx_op_entry onnx_ops_signal[] = {
    {"BlackmanWindow", 17, INT_MAX, onnx_blackman_window},
    {"DFT", 17, INT_MAX, onnx_dft},
    {"HammingWindow", 17, INT_MAX, onnx_hamming_window},
    {"HannWindow", 17, INT_MAX, onnx_hann_window},
    {"MelWeightMatrix", 17, INT_MAX, onnx_mel_weight_matrix},
    {"STFT", 17, INT_MAX, onnx_stft},
    {NULL, 0, 0, NULL},
};
