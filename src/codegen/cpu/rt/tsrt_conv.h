/* tsrt_conv.h — fp32 2-D convolution (cross-correlation), NCHW input and
 * output, OIHW weights, groups, strides, padding (any sign), kernel and
 * input dilation, with the GEMM epilogue callback and (ith, nth) threading.
 *
 *   tsrt_conv_args cv = { .n = 1, .c = 64, .h = 56, .w = 56, .o = 64, .kh = 3, .kw = 3,
 *                         .oh = 56, .ow = 56, .pad_h = 1, .pad_w = 1,
 *                         .x = x, .wt = wt, .y = y, .epi = bias_relu, .epi_ctx = &b };
 *   int algo = tsrt_conv_choose(&cv);           // once per shape (compile time)
 *   size_t per_thread = tsrt_conv_workspace(&cv);
 *   tsrt_conv(&cv, algo, ith, nth, ws[ith]);    // on each of nth threads
 *
 * Meaning (as the conv primitive, docs/primitives.md, in 2-D):
 *   y[n][o][i][j] = (beta ? y : 0) + sum over c < C/G, u < KH, v < KW of
 *       w[o][c][u][v] * X[n][g*C/G + c][i*sh - ph + u*dh][j*sw - pw + v*dw]
 *   with g = o / (O/G), X the input dilated by (lh, lw) (lh-1 zeros between
 *   rows) and zero outside. pad_h/pad_w are the low pads; the high pads
 *   follow from oh/ow, which the caller computes. A 1-D conv is h = kh = 1.
 *
 * Three algorithms, all reporting to the epilogue in GEMM coordinates:
 * m0 = image * O + output channel, n0 = i * OW + j, rs = OH*OW, cs = 1.
 *   IM2COL     implicit GEMM per (image, group): C[o][i*OW+j] = W[o][(c,u,v)]
 *              · X'[(c,u,v)][i*OW+j]; the packed-B micro-panels of X' are
 *              built straight from the image (no im2col buffer).
 *   GEMM_1X1   1x1, stride 1, no padding: X' is the image itself, a
 *              (C/G) x (H*W) row-major matrix: plain GEMM packing.
 *   DEPTHWISE  one input channel per group: a direct kernel, 9 vector FMAs
 *              per 8 outputs for 3x3 stride 1 in the interior. */
#ifndef TSRT_CONV_H
#define TSRT_CONV_H

#ifndef TSRT_COMMON_H
#include "tsrt_common.h"
#endif
#ifndef TSRT_GEMM_H
#include "tsrt_gemm.h"
#endif

typedef struct tsrt_conv_args {
    int64_t n, c, h, w;    /* input x[n][c][h][w] */
    int64_t o, kh, kw;     /* weights w[o][c/groups][kh][kw] */
    int64_t oh, ow;        /* output y[n][o][oh][ow] */
    int64_t groups;        /* 0 means 1 */
    int64_t stride_h, stride_w; /* 0 means 1 */
    int64_t pad_h, pad_w;  /* low (top, left) padding, may be negative */
    int64_t dil_h, dil_w;  /* kernel dilation, 0 means 1 */
    int64_t ldil_h, ldil_w; /* input dilation (transposed conv), 0 means 1 */
    const float *x, *wt;  /* input, weights */
    float *y;
    ptrdiff_t x_bs, y_bs;  /* image strides; 0: dense (c*h*w, o*oh*ow) */
    int beta;              /* 0: y = conv; 1: y += conv */
    tsrt_epilogue_fn epi;  /* NULL: none */
    void *epi_ctx;
} tsrt_conv_args;

enum {
    TSRT_CONV_AUTO = 0, /* tsrt_conv_choose's pick */
    TSRT_CONV_IM2COL = 1,
    TSRT_CONV_GEMM_1X1 = 2,
    TSRT_CONV_DEPTHWISE = 3
};

TSRT_FN const char *tsrt_conv_algo_name(int algo)
{
    static const char *const names[] = {"auto", "im2col", "gemm_1x1", "depthwise"};
    return algo >= 0 && algo <= 3 ? names[algo] : "?";
}

/* The arguments with defaults applied (0 -> 1, 0 -> dense strides). */
static tsrt_conv_args tsrt__conv_norm(const tsrt_conv_args *a)
{
    tsrt_conv_args v = *a;
#define TSRT__ONE(f) if (v.f < 1) v.f = 1
    TSRT__ONE(groups);
    TSRT__ONE(stride_h);
    TSRT__ONE(stride_w);
    TSRT__ONE(dil_h);
    TSRT__ONE(dil_w);
    TSRT__ONE(ldil_h);
    TSRT__ONE(ldil_w);
#undef TSRT__ONE
    if (!v.x_bs) v.x_bs = v.c * v.h * v.w;
    if (!v.y_bs) v.y_bs = v.o * v.oh * v.ow;
    return v;
}

static int tsrt__conv_is_1x1(const tsrt_conv_args *v)
{
    return v->kh == 1 && v->kw == 1 && v->stride_h == 1 && v->stride_w == 1 && v->pad_h == 0 && v->pad_w == 0 &&
           v->ldil_h == 1 && v->ldil_w == 1 && v->oh == v->h && v->ow == v->w;
}

/* Which algorithm, and why:
 *  - one input channel per group and at most 4 outputs per group
 *    (depthwise, MobileNet): as a GEMM, M = O/G would fill at most 4 of the
 *    MR = 6 (14) rows of the micro-kernel and the im2col packing (K = 9 per
 *    output column) would cost as much as the multiply; the direct kernel
 *    reads each input once per tap from L1 and is memory-bound instead;
 *  - 1x1, stride 1, no padding, no input dilation: the image already is the
 *    GEMM's B matrix (C/G x H*W, row-major), so the plain GEMM packing (two
 *    vector moves per 16 floats) replaces the im2col index arithmetic;
 *  - everything else: implicit GEMM (im2col into the packed-B panels). With
 *    M = 64 output channels a packed float feeds only 64 multiply-adds and
 *    packing takes ~30% of a ResNet 3x3 conv (50-60% of peak, 0.7x MLAS).
 *    Not here (yet): Winograd F(4,3) for 3x3 stride 1 (2-2.5x fewer
 *    multiplies), direct NCHWc kernels (need a blocked layout kept across
 *    ops). */
TSRT_FN int tsrt_conv_choose(const tsrt_conv_args *args)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    if (v.c / v.groups == 1 && v.o / v.groups <= 4 && v.groups > 1) return TSRT_CONV_DEPTHWISE;
    if (tsrt__conv_is_1x1(&v)) return TSRT_CONV_GEMM_1X1;
    return TSRT_CONV_IM2COL;
}

/* Bytes of workspace per thread, valid for every algorithm. */
TSRT_FN size_t tsrt_conv_workspace(const tsrt_conv_args *args)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    return tsrt_sgemm_workspace(v.o / v.groups, v.oh * v.ow, v.c / v.groups * v.kh * v.kw);
}

/* ==== implicit GEMM: im2col packing ========================================== */

typedef struct tsrt__im2col {
    const tsrt_conv_args *v; /* normalised */
    const float *x;          /* first channel of the group in the image */
} tsrt__im2col;

/* One run of output positions within one output row: columns [off, off+len)
 * of the micro-panel are positions (oi, oj0 .. oj0+len). */
typedef struct { int64_t off, len, oi, oj0; } tsrt__seg;

/* X'[p][j] for one position: p = (c, u, v), output position (i, j). */
static inline float tsrt__im2col_at(const tsrt_conv_args *v, const float *xc, int64_t iy, int64_t ix)
{
    if (v->ldil_h > 1) {
        if (iy < 0 || iy % v->ldil_h) return 0.0f;
        iy /= v->ldil_h;
    }
    if (v->ldil_w > 1) {
        if (ix < 0 || ix % v->ldil_w) return 0.0f;
        ix /= v->ldil_w;
    }
    return iy >= 0 && iy < v->h && ix >= 0 && ix < v->w ? xc[iy * v->w + ix] : 0.0f;
}

/* Packs rows [p0, p0+kc) x columns [j0, j0+nc) of X' (the tsrt__pack_b_fn
 * contract). Per micro-panel, the NR output positions are cut into runs
 * within one output row; then for each p a run is one contiguous copy (stride
 * 1) with zeros at the borders, or a strided gather. The common case — a
 * whole micro-panel in one output row, all inside the image — is a 64-byte
 * copy per p. */
static void tsrt__im2col_pack(const void *vctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float *dst)
{
    const tsrt__im2col *ctx = vctx;
    const tsrt_conv_args *v = ctx->v;
    const int64_t KK = v->kh * v->kw, sh = v->stride_h, sw = v->stride_w;
    const int plain = v->ldil_h == 1 && v->ldil_w == 1;
    tsrt__seg seg[TSRT_NR];
    for (int64_t jr = 0; jr < nc; jr += TSRT_NR, dst += TSRT_NR * kc) {
        const int64_t nr = tsrt__min(TSRT_NR, nc - jr);
        int ns = 0;
        for (int64_t t = 0; t < nr; ns++) {
            const int64_t j = j0 + jr + t, oi = j / v->ow, oj = j % v->ow;
            const int64_t len = tsrt__min(v->ow - oj, nr - t);
            seg[ns] = (tsrt__seg){t, len, oi, oj};
            t += len;
        }
        int64_t c = p0 / KK, u = p0 % KK / v->kw, w = p0 % v->kw; /* p = (c, u, w) */
        for (int64_t p = 0; p < kc; p++) {
            float *d = dst + p * TSRT_NR;
            const float *xc = ctx->x + c * v->h * v->w;
            const int64_t dy = u * v->dil_h - v->pad_h, dx = w * v->dil_w - v->pad_w;
            for (int s = 0; s < ns; s++) {
                const tsrt__seg *g = &seg[s];
                float *ds = d + g->off;
                const int64_t iy = g->oi * sh + dy, ix0 = g->oj0 * sw + dx;
                if (plain && (iy < 0 || iy >= v->h)) {
                    for (int64_t t = 0; t < g->len; t++) ds[t] = 0.0f;
                } else if (plain && sw == 1) {
                    const float *row = xc + iy * v->w;
                    if (g->len == TSRT_NR && ix0 >= 0 && ix0 + TSRT_NR <= v->w) {
                        memcpy(ds, row + ix0, sizeof(float) * TSRT_NR); /* the common case */
                    } else {
                        /* A run cut by the row's end or the image border:
                         * zeros, then 8-float copies, then zeros. */
                        const int64_t lo = tsrt__min(g->len, tsrt__max(0, -ix0));
                        const int64_t hi = tsrt__max(lo, tsrt__min(g->len, v->w - ix0));
                        int64_t t = 0;
                        for (; t < lo; t++) ds[t] = 0.0f;
                        for (; t + 8 <= hi; t += 8) {
                            tsrt__v8 q;
                            TSRT__V8_LOAD(q, row + ix0 + t);
                            TSRT__V8_STORE(ds + t, q);
                        }
                        for (; t < hi; t++) ds[t] = row[ix0 + t];
                        for (; t < g->len; t++) ds[t] = 0.0f;
                    }
                } else if (plain) {
                    const float *row = xc + iy * v->w;
                    for (int64_t t = 0; t < g->len; t++) {
                        const int64_t ix = ix0 + t * sw;
                        ds[t] = ix >= 0 && ix < v->w ? row[ix] : 0.0f;
                    }
                } else {
                    for (int64_t t = 0; t < g->len; t++) ds[t] = tsrt__im2col_at(v, xc, iy, ix0 + t * sw);
                }
            }
            for (int64_t t = nr; t < TSRT_NR; t++) d[t] = 0.0f;
            if (++w == v->kw) {
                w = 0;
                if (++u == v->kh) u = 0, c++;
            }
        }
    }
}

/* Binding of product bi = image * G + group for both GEMM algorithms. */
typedef struct tsrt__conv_bind_ctx {
    const tsrt_conv_args *v;
    tsrt__im2col *im; /* NULL for GEMM_1X1 */
} tsrt__conv_bind_ctx;

static void tsrt__conv_bind(const void *vctx, int64_t bi, tsrt__gop *op)
{
    const tsrt__conv_bind_ctx *ctx = vctx;
    const tsrt_conv_args *v = ctx->v;
    const int64_t img = bi / v->groups, g = bi % v->groups, og = v->o / v->groups, cg = v->c / v->groups;
    const float *x = v->x + img * v->x_bs + g * cg * v->h * v->w;
    op->a = v->wt + g * og * op->k;
    if (ctx->im)
        ctx->im->x = x;
    else
        op->b = x;
    op->c = v->y + img * v->y_bs + g * og * v->oh * v->ow;
    op->epi_m0 = img * v->o + g * og;
}

static void tsrt__conv_gemm(const tsrt_conv_args *v, int im2col, int ith, int nth, void *ws)
{
    tsrt__im2col im = {v, NULL};
    tsrt__conv_bind_ctx bctx = {v, im2col ? &im : NULL};
    tsrt__gop op = {0};
    op.m = v->o / v->groups;
    op.n = v->oh * v->ow;
    op.k = v->c / v->groups * v->kh * v->kw;
    op.a_rs = op.k, op.a_cs = 1;
    op.b_rs = v->h * v->w, op.b_cs = 1;
    op.pack_b = im2col ? tsrt__im2col_pack : NULL;
    op.pack_b_ctx = &im;
    op.c_rs = v->oh * v->ow, op.c_cs = 1;
    op.beta = v->beta;
    op.epi = v->epi;
    op.epi_ctx = v->epi_ctx;
    /* im2col packing costs about twice the plain copy per float. */
    tsrt__gemm_batched(&op, v->n * v->groups, tsrt__conv_bind, &bctx, 16, im2col ? 32 : 16, ith, nth, ws);
}

/* ==== depthwise: direct ======================================================= */

/* The j with 0 <= j*s + off < n, as [lo, hi) within [0, m). */
static inline void tsrt__tap_range(int64_t off, int64_t s, int64_t n, int64_t m, int64_t *lo, int64_t *hi)
{
    *lo = off >= 0 ? 0 : (-off + s - 1) / s;
    *hi = n - 1 - off < 0 ? 0 : tsrt__min(m, (n - 1 - off) / s + 1);
    if (*lo > *hi) *lo = *hi;
}

/* Output columns [j0, j1) of row i, tap by tap: for each tap inside the
 * image, one pass over the contiguous range of columns it reaches (a loop
 * the compiler vectorises when the stride is 1). The general path: any
 * kernel, stride, dilation, and the border rows and columns of 3x3. */
static void tsrt__dw_row_taps(const tsrt_conv_args *v, const float *xp, const float *wp, float *yr, int64_t i,
                              int64_t j0, int64_t j1)
{
    const int64_t W = v->w, sw = v->stride_w, lh = v->ldil_h, lw = v->ldil_w;
    for (int64_t j = j0; j < j1; j++) yr[j] = v->beta ? yr[j] : 0.0f;
    for (int64_t u = 0; u < v->kh; u++) {
        int64_t iy = i * v->stride_h - v->pad_h + u * v->dil_h;
        if (iy < 0 || iy % lh || iy / lh >= v->h) continue;
        const float *xr = xp + iy / lh * W;
        for (int64_t t = 0; t < v->kw; t++) {
            const float wv = wp[u * v->kw + t];
            const int64_t off = t * v->dil_w - v->pad_w; /* dilated column = j*sw + off */
            if (lw == 1) {
                int64_t lo, hi;
                tsrt__tap_range(off, sw, W, j1, &lo, &hi);
                lo = tsrt__max(lo, j0);
                /* Constant strides let the compiler vectorise (stride 2:
                 * loads and permutes); a variable one it leaves scalar. */
                const float *xo = xr + off;
                if (sw == 1)
                    for (int64_t j = lo; j < hi; j++) yr[j] += wv * xo[j];
                else if (sw == 2)
                    for (int64_t j = lo; j < hi; j++) yr[j] += wv * xo[2 * j];
                else
                    for (int64_t j = lo; j < hi; j++) yr[j] += wv * xo[j * sw];
            } else {
                for (int64_t j = j0; j < j1; j++) {
                    const int64_t ix = j * sw + off;
                    if (ix >= 0 && ix % lw == 0 && ix / lw < W) yr[j] += wv * xr[ix / lw];
                }
            }
        }
    }
}

/* Output rows [i0, i1) of one plane: input plane xp (one channel), weights
 * wp (KH*KW), output plane yp. */
static void tsrt__dw_rows(const tsrt_conv_args *v, const float *xp, const float *wp, float *yp, int64_t i0,
                          int64_t i1)
{
    const int64_t H = v->h, W = v->w, OW = v->ow, dh = v->dil_h, dw = v->dil_w;
    const int fast = v->kh == 3 && v->kw == 3 && v->stride_w == 1 && v->ldil_h == 1 && v->ldil_w == 1;
    /* Columns whose three taps are all inside the image. */
    const int64_t jlo = tsrt__min(OW, tsrt__max(0, v->pad_w));
    const int64_t jhi = tsrt__max(jlo, tsrt__min(OW, W - 2 * dw + v->pad_w));
    for (int64_t i = i0; i < i1; i++) {
        float *yr = yp + i * OW;
        const int64_t iy0 = i * v->stride_h - v->pad_h;
        if (!fast || iy0 < 0 || iy0 + 2 * dh >= H || jhi <= jlo) {
            tsrt__dw_row_taps(v, xp, wp, yr, i, 0, OW);
            continue;
        }
        /* 3x3 with stride 1 along the row and all three rows inside: nine
         * taps in registers, one store per 8 outputs, in the interior. */
        const float w00 = wp[0], w01 = wp[1], w02 = wp[2], w10 = wp[3], w11 = wp[4], w12 = wp[5];
        const float w20 = wp[6], w21 = wp[7], w22 = wp[8];
        const float *x0 = xp + iy0 * W, *x1 = x0 + dh * W, *x2 = x1 + dh * W;
        /* The border columns, where a tap column may be outside. */
        for (int64_t j = 0; j < OW; j++) {
            if (j == jlo) j = jhi;
            if (j >= OW) break;
            float s = v->beta ? yr[j] : 0.0f;
            const int64_t ix = j - v->pad_w;
            if (ix >= 0 && ix < W) s += w00 * x0[ix] + w10 * x1[ix] + w20 * x2[ix];
            if (ix + dw >= 0 && ix + dw < W) s += w01 * x0[ix + dw] + w11 * x1[ix + dw] + w21 * x2[ix + dw];
            if (ix + 2 * dw >= 0 && ix + 2 * dw < W)
                s += w02 * x0[ix + 2 * dw] + w12 * x1[ix + 2 * dw] + w22 * x2[ix + 2 * dw];
            yr[j] = s;
        }
        const float *r0 = x0 + jlo - v->pad_w, *r1 = x1 + jlo - v->pad_w, *r2 = x2 + jlo - v->pad_w;
        const int64_t d1 = dw, d2 = 2 * dw, n = jhi - jlo;
        float *yo = yr + jlo;
        int64_t j = 0;
        for (; j + 8 <= n; j += 8) {
            tsrt__v8 acc = {0}, a, b, c;
            if (v->beta) TSRT__V8_LOAD(acc, yo + j);
#define TSRT__DW_ROW(r, wa, wb, wc)                                                    \
    TSRT__V8_LOAD(a, r + j), TSRT__V8_LOAD(b, r + j + d1), TSRT__V8_LOAD(c, r + j + d2); \
    acc += wa * a + wb * b + wc * c
            TSRT__DW_ROW(r0, w00, w01, w02);
            TSRT__DW_ROW(r1, w10, w11, w12);
            TSRT__DW_ROW(r2, w20, w21, w22);
#undef TSRT__DW_ROW
            TSRT__V8_STORE(yo + j, acc);
        }
        for (; j < n; j++) {
            float s = v->beta ? yo[j] : 0.0f;
            s += w00 * r0[j] + w01 * r0[j + d1] + w02 * r0[j + d2];
            s += w10 * r1[j] + w11 * r1[j + d1] + w12 * r1[j + d2];
            s += w20 * r2[j] + w21 * r2[j + d1] + w22 * r2[j + d2];
            yo[j] = s;
        }
    }
}

/* Threads split the (plane, output row) pairs, planes = images x channels,
 * into nth contiguous ranges; the epilogue gets every finished run of rows
 * of a plane, at most TSRT__DW_EPI_ROWS rows (a few KiB) at a time so it
 * finds them in L1. */
#define TSRT__DW_EPI_FLOATS 4096

static void tsrt__conv_dw(const tsrt_conv_args *v, int ith, int nth)
{
    const int64_t OH = v->oh, planes = v->n * v->o, units = planes * OH, mult = v->o / v->groups;
    const int64_t u0 = units * ith / nth, u1 = units * (ith + 1) / nth;
    const int64_t chunk = tsrt__max(1, TSRT__DW_EPI_FLOATS / tsrt__max(1, v->ow));
    for (int64_t u = u0; u < u1;) {
        const int64_t pl = u / OH, img = pl / v->o, oc = pl % v->o, i0 = u % OH;
        const int64_t i1 = tsrt__min(OH, tsrt__min(i0 + chunk, i0 + (u1 - u)));
        const float *xp = v->x + img * v->x_bs + (oc / mult) * v->h * v->w;
        float *yp = v->y + img * v->y_bs + oc * OH * v->ow;
        tsrt__dw_rows(v, xp, v->wt + oc * v->kh * v->kw, yp, i0, i1);
        if (v->epi)
            v->epi(v->epi_ctx, yp + i0 * v->ow, OH * v->ow, 1, img * v->o + oc, i0 * v->ow, 1, (i1 - i0) * v->ow);
        u += i1 - i0;
    }
}

/* ==== entry point ============================================================== */

/* y = conv(x, w) (+ y), then the epilogue on every element once: the part
 * of thread ith of nth (all nth calls together do everything; no barrier
 * between them). algo: TSRT_CONV_AUTO or one tsrt_conv_choose may return;
 * returns 0, or -1 when the algorithm does not apply to the shape
 * (DEPTHWISE with several input channels per group, GEMM_1X1 on a
 * non-1x1 conv) or the shape is inconsistent (C or O not divisible by the
 * groups, output size not positive), and then computes nothing. ws:
 * tsrt_conv_workspace bytes, private to the call. */
TSRT_FN int tsrt_conv(const tsrt_conv_args *args, int algo, int ith, int nth, void *ws)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    if (v.c % v.groups || v.o % v.groups || v.n < 0 || v.oh < 0 || v.ow < 0) return -1;
    if (algo == TSRT_CONV_AUTO) algo = tsrt_conv_choose(&v);
    if (v.n == 0 || v.o == 0 || v.oh == 0 || v.ow == 0) return 0;
    switch (algo) {
    case TSRT_CONV_DEPTHWISE:
        if (v.c / v.groups != 1) return -1;
        tsrt__conv_dw(&v, ith, nth);
        return 0;
    case TSRT_CONV_GEMM_1X1:
        if (!tsrt__conv_is_1x1(&v)) return -1;
        tsrt__conv_gemm(&v, 0, ith, nth, ws);
        return 0;
    case TSRT_CONV_IM2COL:
        tsrt__conv_gemm(&v, 1, ith, nth, ws);
        return 0;
    default:
        return -1;
    }
}

#endif /* TSRT_CONV_H */
