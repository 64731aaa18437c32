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
 * Six algorithms, all reporting to the epilogue in GEMM coordinates:
 * m0 = image * O + output channel, n0 = i * OW + j, rs = OH*OW, cs = 1.
 *   IM2COL     implicit GEMM per (image, group): C[o][i*OW+j] = W[o][(c,u,v)]
 *              · X'[(c,u,v)][i*OW+j]; the packed-B micro-panels of X' are
 *              built straight from the image (no im2col buffer).
 *   PHASED     the same GEMM, X' packed from a zero-padded copy of the
 *              input split by stride phase: two vector moves per row of a
 *              micro-panel, no border tests (any stride, pad, dilation).
 *   GEMM_1X1   1x1, stride 1, no padding: X' is the image itself, a
 *              (C/G) x (H*W) row-major matrix: plain GEMM packing.
 *   WINOGRAD   3x3 stride 1: Winograd F(2x2, 3x3), 16 GEMMs over 2x2 tiles.
 *   WINOGRAD4  3x3 stride 1: Winograd F(4x4, 3x3), 36 GEMMs over 4x4 tiles.
 *   DEPTHWISE  one input channel per group: a direct kernel, 9 vector FMAs
 *              per 8 outputs for 3x3 stride 1 in the interior.
 * For few output positions (N <= 256: 14x14, 7x7 maps) the GEMMs read the
 * weights in place instead of packing them (tsrt_gemm.h). */
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
    TSRT_CONV_DEPTHWISE = 3,
    TSRT_CONV_PHASED = 4,
    TSRT_CONV_WINOGRAD = 5,
    TSRT_CONV_WINOGRAD4 = 6
};

TSRT_FN const char *tsrt_conv_algo_name(int algo)
{
    static const char *const names[] = {"auto", "im2col", "gemm_1x1", "depthwise", "phased", "winograd", "winograd4"};
    return algo >= 0 && algo <= 6 ? names[algo] : "?";
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

/* 3x3, stride 1, no dilation of either kind: Winograd F(2x2, 3x3) applies. */
static int tsrt__conv_wg_applies(const tsrt_conv_args *v)
{
    return v->kh == 3 && v->kw == 3 && v->stride_h == 1 && v->stride_w == 1 && v->dil_h == 1 && v->dil_w == 1 &&
           v->ldil_h == 1 && v->ldil_w == 1;
}

static int tsrt__conv_is_1x1(const tsrt_conv_args *v)
{
    return v->kh == 1 && v->kw == 1 && v->stride_h == 1 && v->stride_w == 1 && v->pad_h == 0 && v->pad_w == 0 &&
           v->ldil_h == 1 && v->ldil_w == 1 && v->oh == v->h && v->ow == v->w;
}

/* Which algorithm, and why (times: bench/conv_resnet50.c, docs/kernels.md):
 *  - one input channel per group and at most 4 outputs per group
 *    (depthwise, MobileNet): as a GEMM, M = O/G would fill at most 4 of the
 *    MR = 6 (14) rows of the micro-kernel and the im2col packing (K = 9 per
 *    output column) would cost as much as the multiply; the direct kernel
 *    reads each input once per tap from L1 and is memory-bound instead;
 *  - 1x1, stride 1, no padding, no input dilation: the image already is the
 *    GEMM's B matrix (C/G x H*W, row-major), so the plain GEMM packing (two
 *    vector moves per 16 floats) replaces the im2col index arithmetic;
 *  - 3x3, stride 1, no dilation, >= 16 channels in and out per group:
 *    Winograd, F(4x4) when both output sides are >= 24 (ResNet's 56x56 and
 *    28x28: 0.35-0.4x the direct time), F(2x2) from 128 output positions
 *    (14x14: 0.53x, F(4x4) has only 16 tiles there); below that (7x7) the
 *    filter transform is not paid back (5.8 ms against 3.9 direct);
 *  - everything else without input dilation: PHASED (im2col's per-element
 *    index arithmetic and border tests were ~30% of a 3x3 conv with 64
 *    output channels; stride-2 convs 0.56-0.76x the im2col time);
 *  - with input dilation (transposed conv): IM2COL.
 * Not here: direct NCHWc kernels (they need a blocked layout kept across
 * ops). */
TSRT_FN int tsrt_conv_choose(const tsrt_conv_args *args)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    if (v.c / v.groups == 1 && v.o / v.groups <= 4 && v.groups > 1) return TSRT_CONV_DEPTHWISE;
    if (tsrt__conv_is_1x1(&v)) return TSRT_CONV_GEMM_1X1;
    if (tsrt__conv_wg_applies(&v) && v.c / v.groups >= 16 && v.o / v.groups >= 16) {
        if (v.oh >= 24 && v.ow >= 24) return TSRT_CONV_WINOGRAD4;
        if (v.oh * v.ow >= 128) return TSRT_CONV_WINOGRAD;
    }
    if (v.ldil_h == 1 && v.ldil_w == 1) return TSRT_CONV_PHASED;
    return TSRT_CONV_IM2COL;
}

/* The j with 0 <= j*s + off < n, as [lo, hi) within [0, m). */
static inline void tsrt__tap_range(int64_t off, int64_t s, int64_t n, int64_t m, int64_t *lo, int64_t *hi)
{
    *lo = off >= 0 ? 0 : (-off + s - 1) / s;
    *hi = n - 1 - off < 0 ? 0 : tsrt__min(m, (n - 1 - off) / s + 1);
    if (*lo > *hi) *lo = *hi;
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

/* ==== implicit GEMM from a padded copy split by stride phase (PHASED) ======== *
 *
 * The input of one (image, group) is copied once into "phase images": for
 * strides (sh, sw), phase (a, b) holds the padded input's rows a, a + sh,
 * a + 2sh... and columns b, b + sw..., zeros where the padding is. Tap
 * (u, v) of output (i, j) then reads phase ((u*dh) % sh, (v*dw) % sw) at
 * row i + (u*dh)/sh, column j + (v*dw)/sw: for every row k = (c, u, v) of
 * X', a run of output positions within one output row is a run of
 * consecutive floats at a fixed offset off[k] from the position's own
 * index i*Wq + j. A B micro-panel is then packed with two vector moves per
 * k (16 positions in one output row) or one pair per row segment, with no
 * border tests: the im2col index arithmetic and the zero tests happen once
 * per input element (in the copy) instead of once per element of X'
 * (KH*KW times as many). Stride 2 is a stride-1 problem on 4 phase images;
 * a strided 1x1 conv is a plain GEMM on the subsampled copy; the 7x7/2
 * stem is 4 phases of 3 channels. With no padding, stride 1 and a 1x1
 * kernel the input itself is the only phase (GEMM_1X1) and nothing is
 * copied. */
typedef struct tsrt__phx {
    const tsrt_conv_args *v;  /* normalised */
    int64_t sh, sw;           /* strides of the phase split */
    int64_t PH, PW;           /* phases kept: row phases a < PH, column phases b < PW */
    int64_t Hq, Wq;           /* rows and columns of one phase image */
    int64_t plane;            /* floats from one (channel, phase) image to the next */
    int copy;                 /* 0: the input is read in place */
    const float *xq;          /* phase images of the current product */
    float *buf;               /* where they are copied */
    const ptrdiff_t *off;     /* off[k], k = (c*KH + u)*KW + v: row k of X' at xq + off[k] + i*Wq + j */
} tsrt__phx;

static void tsrt__phx_geom(const tsrt_conv_args *v, tsrt__phx *g)
{
    const int64_t eh = (v->kh - 1) * v->dil_h, ew = (v->kw - 1) * v->dil_w;
    g->v = v;
    g->sh = v->stride_h, g->sw = v->stride_w;
    g->copy = !tsrt__conv_is_1x1(v);
    if (!g->copy) {
        g->PH = g->PW = 1, g->Hq = v->h, g->Wq = v->w, g->plane = v->h * v->w;
        return;
    }
    g->PH = tsrt__min(v->stride_h, eh + 1), g->PW = tsrt__min(v->stride_w, ew + 1);
    g->Hq = v->oh + eh / v->stride_h, g->Wq = v->ow + ew / v->stride_w;
    /* 16 floats of slack for the packer's whole-vector reads past a row's
     * end; an odd number of cache lines per plane, so that the rows of one
     * micro-panel (one per channel, a plane apart) spread over the L1 sets. */
    int64_t pl = tsrt__rup(g->Hq * g->Wq + 16, 16);
    if (pl / 16 % 2 == 0) pl += 16;
    g->plane = pl;
}

/* Floats of the copy (0 when the input is read in place), and of off. */
static int64_t tsrt__phx_floats(const tsrt__phx *g)
{
    return g->copy ? g->v->c / g->v->groups * g->PH * g->PW * g->plane + 16 : 0;
}

static void tsrt__phx_offsets(const tsrt__phx *g, ptrdiff_t *off)
{
    const tsrt_conv_args *v = g->v;
    const int64_t cg = v->c / v->groups;
    ptrdiff_t *o = off;
    for (int64_t c = 0; c < cg; c++)
        for (int64_t u = 0; u < v->kh; u++)
            for (int64_t w = 0; w < v->kw; w++) {
                const int64_t uu = u * v->dil_h, ww = w * v->dil_w;
                const int64_t ph = ((c * g->PH + uu % v->stride_h) * g->PW + ww % v->stride_w);
                *o++ = ph * g->plane + uu / v->stride_h * g->Wq + ww / v->stride_w;
            }
}

/* Copies phase rows [r0, r1) of every channel and phase of the group whose
 * first input channel is at x into g->buf. */
#define TSRT__PHX_ROWBUF 1024
static void tsrt__phx_copy(const tsrt__phx *g, const float *x, int64_t r0, int64_t r1)
{
    const tsrt_conv_args *v = g->v;
    const int64_t cg = v->c / v->groups, H = v->h, W = v->w, sh = g->sh, sw = g->sw, Wq = g->Wq;
    /* Column strides 2 and 4 (stride-2 convs, the stem, Winograd): the
     * padded input row is built once in rb (zeros, one memcpy), then every
     * column phase is cut from it 8 columns at a time by shuffles, with no
     * border tests (a phase row is 15-30 floats: per-column bounds handling
     * was 12-16% of a Winograd conv). Whole vectors run past Wq into the
     * next row of the plane (written later) or the plane's slack. */
    const int64_t Lp = tsrt__rup(Wq, 8) * sw;
    const int fast = (sw == 2 || sw == 4) && Lp + 32 <= TSRT__PHX_ROWBUF;
    float rb[TSRT__PHX_ROWBUF] __attribute__((aligned(TSRT_ALIGN)));
    int64_t lo = 0, hi = 0; /* the image's columns in rb: [lo, hi) */
    if (fast) {
        lo = tsrt__min(Lp, tsrt__max(0, v->pad_w)), hi = tsrt__max(lo, tsrt__min(Lp, W + v->pad_w));
        for (int64_t q = 0; q < lo; q++) rb[q] = 0.0f;
        for (int64_t q = hi; q < Lp + 32; q++) rb[q] = 0.0f;
    }
    /* Input rows in order (phase row r, then row phase a: input row
     * r*sh + a - pad), the column phases of one input row while it is in
     * L1. */
    for (int64_t c = 0; c < cg; c++)
        for (int64_t r = r0; r < r1; r++)
            for (int64_t a = 0; a < g->PH; a++) {
                float *d0 = g->buf + (c * g->PH + a) * g->PW * g->plane + r * Wq; /* phase b at d0 + b*plane */
                const int64_t iy = r * sh + a - v->pad_h;
                if (iy < 0 || iy >= H) {
                    for (int64_t b = 0; b < g->PW; b++) memset(d0 + b * g->plane, 0, sizeof(float) * (size_t)Wq);
                    continue;
                }
                const float *xr = x + (c * H + iy) * W;
                if (fast) {
                    memcpy(rb + lo, xr + lo - v->pad_w, sizeof(float) * (size_t)(hi - lo));
                    for (int64_t q = 0; q < Wq; q += 8) {
                        const float *s = rb + q * sw;
                        tsrt__v8 a0, a1;
                        TSRT__V8_LOAD(a0, s), TSRT__V8_LOAD(a1, s + 8);
                        if (sw == 2) {
                            TSRT__V8_STORE(d0 + q, __builtin_shufflevector(a0, a1, 0, 2, 4, 6, 8, 10, 12, 14));
                            if (g->PW > 1)
                                TSRT__V8_STORE(d0 + g->plane + q,
                                               __builtin_shufflevector(a0, a1, 1, 3, 5, 7, 9, 11, 13, 15));
                            continue;
                        }
                        tsrt__v8 a2, a3;
                        TSRT__V8_LOAD(a2, s + 16), TSRT__V8_LOAD(a3, s + 24);
#define TSRT__PHX_CUT4(b)                                                                           \
    do {                                                                                            \
        const tsrt__v8 l_ = __builtin_shufflevector(a0, a1, b, b + 4, b + 8, b + 12, b, b + 4, b + 8, b + 12); \
        const tsrt__v8 h_ = __builtin_shufflevector(a2, a3, b, b + 4, b + 8, b + 12, b, b + 4, b + 8, b + 12); \
        TSRT__V8_STORE(d0 + (b) * g->plane + q, __builtin_shufflevector(l_, h_, 0, 1, 2, 3, 8, 9, 10, 11)); \
    } while (0)
                        TSRT__PHX_CUT4(0);
                        if (g->PW > 1) TSRT__PHX_CUT4(1);
                        if (g->PW > 2) TSRT__PHX_CUT4(2);
                        if (g->PW > 3) TSRT__PHX_CUT4(3);
#undef TSRT__PHX_CUT4
                    }
                    continue;
                }
                for (int64_t b = 0; b < g->PW; b++) {
                    float *d = d0 + b * g->plane;
                    int64_t qlo, qhi; /* columns inside the image */
                    tsrt__tap_range(b - v->pad_w, sw, W, Wq, &qlo, &qhi);
                    const float *row = xr + b - v->pad_w; /* column q at row[q*sw] */
                    for (int64_t q = 0; q < qlo; q++) d[q] = 0.0f;
                    if (sw == 1)
                        memcpy(d + qlo, row + qlo, sizeof(float) * (size_t)(qhi - qlo));
                    else
                        for (int64_t q = qlo; q < qhi; q++) d[q] = row[sw * q];
                    for (int64_t q = qhi; q < Wq; q++) d[q] = 0.0f;
                }
            }
}

/* NR floats from s to d (unaligned), in 8-float vectors. */
static inline void tsrt__copy_nr(float *d, const float *s)
{
    for (int t = 0; t < TSRT_NR; t += 8) {
        tsrt__v8 q;
        TSRT__V8_LOAD(q, s + t);
        TSRT__V8_STORE(d + t, q);
    }
}

/* Packs rows [p0, p0+kc) x columns [j0, j0+nc) of X' from the phase images
 * (the tsrt__pack_b_fn contract). The NR positions of a micro-panel are cut
 * into runs within one output row (one run unless it crosses a row end);
 * a run is NR consecutive floats of its phase row, copied whole: the next
 * run, or the zeros past nc, overwrite what a short run copied too much
 * (into the same row of the panel or the start of the next, packed after
 * it; the workspace has NR floats of slack past the panel). Reading past a
 * run stays inside the copy's slack; the input read in place (no copy) is
 * read exactly. */
static void tsrt__phx_pack(const void *vctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float *dst)
{
    const tsrt__phx *g = vctx;
    const int64_t OW = g->v->ow, Wq = g->Wq;
    const ptrdiff_t *off = g->off + p0;
    for (int64_t jr = 0; jr < nc; jr += TSRT_NR, dst += TSRT_NR * kc) {
        const int64_t nr = tsrt__min(TSRT_NR, nc - jr);
        int64_t st[TSRT_NR], sl[TSRT_NR];
        ptrdiff_t sq[TSRT_NR];
        int ns = 0;
        for (int64_t t = 0; t < nr; ns++) {
            const int64_t n = j0 + jr + t, i = n / OW, j = n % OW, len = tsrt__min(OW - j, nr - t);
            st[ns] = t, sl[ns] = len, sq[ns] = i * Wq + j;
            t += len;
        }
        const float *xq = g->xq;
        if (ns == 1 && nr == TSRT_NR) {
            const float *s = xq + sq[0];
            for (int64_t p = 0; p < kc; p++) tsrt__copy_nr(dst + p * TSRT_NR, s + off[p]);
        } else if (g->copy) {
            for (int64_t p = 0; p < kc; p++) {
                float *d = dst + p * TSRT_NR;
                const float *s = xq + off[p];
                for (int q = 0; q < ns; q++) tsrt__copy_nr(d + st[q], s + sq[q]);
                for (int64_t t = nr; t < TSRT_NR; t++) d[t] = 0.0f;
            }
        } else {
            for (int64_t p = 0; p < kc; p++) {
                float *d = dst + p * TSRT_NR;
                const float *s = xq + off[p];
                for (int q = 0; q < ns; q++)
                    for (int64_t t = 0; t < sl[q]; t++) d[st[q] + t] = s[sq[q] + t];
                for (int64_t t = nr; t < TSRT_NR; t++) d[t] = 0.0f;
            }
        }
    }
}

/* ==== the GEMM algorithms: binding, threads, workspace ======================== */

enum { TSRT__CG_IM2COL, TSRT__CG_1X1, TSRT__CG_PHASED };

typedef struct tsrt__conv_gemm_ctx {
    const tsrt_conv_args *v;
    int mode;
    tsrt__im2col im;
    tsrt__phx phx;
} tsrt__conv_gemm_ctx;

/* Workspace of the GEMM algorithms, in order: off (phased), the phase
 * images (phased), the GEMM's packed panels, NR floats of slack (the
 * phased packer's overrun). Each part starts aligned. */
static size_t tsrt__conv_gemm_ws(const tsrt_conv_args *v, size_t *off_bytes, size_t *phx_bytes)
{
    tsrt__phx g;
    tsrt__phx_geom(v, &g);
    const int64_t K = v->c / v->groups * v->kh * v->kw;
    *off_bytes = (size_t)tsrt__rup(K * (int64_t)sizeof(ptrdiff_t), TSRT_ALIGN) + TSRT_ALIGN;
    *phx_bytes = (size_t)tsrt__rup(tsrt__phx_floats(&g) * (int64_t)sizeof(float), TSRT_ALIGN) + TSRT_ALIGN;
    return *off_bytes + *phx_bytes + tsrt_sgemm_workspace(v->o / v->groups, v->oh * v->ow, K) +
           TSRT_WS_NR * sizeof(float);
}

/* Product bi = image * G + group: operands, and the copy of the input rows
 * that columns [j0, j1) need. */
static void tsrt__conv_gemm_bind(tsrt__conv_gemm_ctx *ctx, int64_t bi, int64_t j0, int64_t j1, tsrt__gop *op)
{
    const tsrt_conv_args *v = ctx->v;
    const int64_t img = bi / v->groups, g = bi % v->groups, og = v->o / v->groups, cg = v->c / v->groups;
    const float *x = v->x + img * v->x_bs + g * cg * v->h * v->w;
    op->a = v->wt + g * og * op->k;
    op->c = v->y + img * v->y_bs + g * og * v->oh * v->ow;
    op->epi_m0 = img * v->o + g * og;
    if (ctx->mode == TSRT__CG_IM2COL)
        ctx->im.x = x;
    else if (ctx->mode == TSRT__CG_1X1 || !ctx->phx.copy)
        op->b = x, ctx->phx.xq = x;
    else {
        const int64_t r0 = j0 / v->ow, r1 = (j1 - 1) / v->ow + 1 + (v->kh - 1) * v->dil_h / v->stride_h;
        tsrt__phx_copy(&ctx->phx, x, r0, tsrt__min(r1, ctx->phx.Hq));
        ctx->phx.xq = ctx->phx.buf;
    }
}

static void tsrt__conv_gemm(const tsrt_conv_args *v, int mode, int ith, int nth, void *ws)
{
    tsrt__conv_gemm_ctx ctx = {.v = v, .mode = mode};
    ctx.im.v = v;
    tsrt__gop op = {0};
    op.m = v->o / v->groups;
    op.n = v->oh * v->ow;
    op.k = v->c / v->groups * v->kh * v->kw;
    op.a_rs = op.k, op.a_cs = 1;
    op.b_rs = v->h * v->w, op.b_cs = 1;
    op.c_rs = v->oh * v->ow, op.c_cs = 1;
    op.beta = v->beta;
    op.a_direct = 1;
    op.epi = v->epi;
    op.epi_ctx = v->epi_ctx;
    size_t off_bytes, phx_bytes;
    tsrt__conv_gemm_ws(v, &off_bytes, &phx_bytes);
    char *w = (char *)ws;
    int64_t wb = 16;
    if (mode == TSRT__CG_IM2COL) {
        op.pack_b = tsrt__im2col_pack, op.pack_b_ctx = &ctx.im;
        wb = 32; /* im2col packing costs about twice the plain copy per float */
    } else if (mode == TSRT__CG_PHASED) {
        tsrt__phx_geom(v, &ctx.phx);
        ptrdiff_t *off = (ptrdiff_t *)(void *)tsrt__align(w);
        tsrt__phx_offsets(&ctx.phx, off);
        ctx.phx.off = off;
        ctx.phx.buf = tsrt__align(w + off_bytes);
        op.pack_b = tsrt__phx_pack, op.pack_b_ctx = &ctx.phx;
        wb = 20; /* the copy, then a plain copy per float */
    }
    w += off_bytes + phx_bytes;
    /* As tsrt__gemm_batched, with the copy of each product's input. */
    if (op.m <= 0 || op.n <= 0) return;
    const int64_t batch = v->n * v->groups;
    float *pa, *pb;
    tsrt__ws_split(w, op.m, op.k, &pa, &pb);
    const tsrt__share s = tsrt__split(batch, op.m, op.n, op.k, 16, wb, ith, nth);
    const int64_t U = tsrt__cdiv(op.m, TSRT_MR);
    const int64_t j0 = s.c0 * TSRT_NR, j1 = tsrt__min(s.c1 * TSRT_NR, op.n);
    if (j0 >= j1) return;
    for (int64_t bi = s.r0 / U; bi < batch && bi * U < s.r1; bi++) {
        const int64_t lo = tsrt__max(s.r0, bi * U) - bi * U, hi = tsrt__min(s.r1, (bi + 1) * U) - bi * U;
        tsrt__conv_gemm_bind(&ctx, bi, j0, j1, &op);
        tsrt__gemm_range(&op, lo * TSRT_MR, tsrt__min(hi * TSRT_MR, op.m), j0, j1, pa, pb);
    }
}

/* ==== Winograd F(m x m, 3x3), m = 2 (WINOGRAD) or 4 (WINOGRAD4) ============== *
 *
 * 3x3, stride 1, no dilation: each m x m output tile is
 *   Y = A^T [ sum_c (G g_c G^T) . (B^T d_c B) ] A
 * with d_c the a x a input patch (a = m + 2) of channel c and g_c its 3x3
 * filter. The a^2 elementwise sums over c are a^2 GEMMs of O x C by C x
 * tiles: per output, 16/4 = 4 multiply-adds (m = 2) or 36/16 = 2.25
 * (m = 4) instead of 9. F(2x2): A, B have entries 0, +-1 and G 0, +-1/2, 1,
 * so the result is the direct one up to a few roundings; F(4x4) (Lavin's
 * points 0, +-1, +-2) has entries up to 8 and 1/24 and loses about one
 * more decimal digit (error bounds in docs/kernels.md).
 *
 * Layouts (all in the workspace; NR = the micro-kernel's width):
 *   xp  the input, zero-padded and split by column phase mod m (the phase
 *       images of tsrt__phx with column stride m): column m*tx + k of the
 *       padded input is phase k % m, index tx + k / m, so for 8 consecutive
 *       tiles each of the a columns of a patch row is one unaligned vector
 *       load, no shuffles;
 *   V   transformed input, per panel of NR tiles (tiles numbered row by
 *       row, ty*TW + tx): V[xi][c][NR], a packed B micro-panel per xi;
 *   U   transformed weights of a block of output channels: U[xi][o][c],
 *       rows read in place by tsrt__ukr_full_ua;
 *   M   the a^2 products of one panel: M[xi][o][NR].
 * Loop: output-channel blocks (U of one block within a budget, in L2) >
 * panels > xi > channel blocks (KC) > MR-row micro-tiles; then the output
 * transform of the panel and the epilogue on its runs of output positions.
 * V is computed per panel when there is one channel block, else once for
 * all the thread's panels and re-read per block. */
#ifndef TSRT__WG_U_FLOATS
#define TSRT__WG_U_FLOATS 65536 /* U block budget: 256 KiB */
#endif

typedef struct tsrt__wg {
    const tsrt_conv_args *v;
    int m, a, xi;                  /* tile m x m, patch a x a, xi = a*a */
    int64_t CG, OG, TH, TW, T, NP; /* tiles: TH x TW = T, NP panels of NR */
    int64_t obcap;                 /* output channels per block, at most */
    tsrt__phx xp;                  /* the padded copy, m column phases */
} tsrt__wg;

static void tsrt__wg_geom(const tsrt_conv_args *v, int m, tsrt__wg *g)
{
    g->v = v;
    g->m = m, g->a = m + 2, g->xi = (m + 2) * (m + 2);
    g->CG = v->c / v->groups, g->OG = v->o / v->groups;
    g->TH = tsrt__cdiv(v->oh, m), g->TW = tsrt__cdiv(v->ow, m), g->T = g->TH * g->TW;
    g->NP = tsrt__cdiv(g->T, TSRT_NR);
    g->obcap = tsrt__max(TSRT_MR, TSRT__WG_U_FLOATS / (g->xi * tsrt__max(g->CG, 1)));
    tsrt__phx *x = &g->xp;
    x->v = v, x->sh = 1, x->sw = m, x->PH = 1, x->PW = m, x->copy = 1;
    x->Hq = m * g->TH + 2, x->Wq = g->TW + 1;
    /* 32 floats of slack before and after each plane: the vector loads of
     * lanes outside a tile row read there (and throw the values away). */
    int64_t pl = tsrt__rup(x->Hq * x->Wq + 64, 16);
    if (pl / 16 % 2 == 0) pl += 16;
    x->plane = pl;
}

/* Workspace floats of each part, bounded over the instruction sets (MR
 * and NR differ: obcap and the rounding of a block to MR rows). */
static void tsrt__wg_ws(const tsrt__wg *g, int64_t *xp, int64_t *u, int64_t *vv, int64_t *m)
{
    const int64_t b = TSRT__WG_U_FLOATS / (g->xi * tsrt__max(g->CG, 1));
    const int64_t ob = tsrt__min(g->OG, tsrt__max(TSRT_WS_MR, b)) + TSRT_WS_MR;
    const int vall = g->OG > tsrt__max(TSRT_AVX2_MR, b);
    *xp = g->CG * g->m * g->xp.plane + 64;
    *u = g->xi * ob * g->CG;
    *vv = g->xi * (g->CG * (vall ? g->T + TSRT_WS_NR : TSRT_WS_NR) + 16);
    *m = g->xi * ob * TSRT_WS_NR;
}

/* A run of the 8 lanes of a lane group within one tile row: lanes
 * [l0, l1) are tiles (ty, tx0 + l); tx0 may be outside [0, TW). */
typedef struct { int64_t ty, tx0; int l0, l1; } tsrt__wg_seg;

static int tsrt__wg_segs(const tsrt__wg *g, int64_t t0, tsrt__wg_seg *sg)
{
    int n = 0;
    for (int l = 0; l < 8 && t0 + l < g->T; n++) {
        const int64_t t = t0 + l, ty = t / g->TW, tx = t % g->TW;
        const int len = (int)tsrt__min(8 - l, g->TW - tx);
        sg[n] = (tsrt__wg_seg){ty, tx - l, l, l + len};
        l += len;
    }
    return n;
}

typedef int32_t tsrt__v8i __attribute__((vector_size(32)));

/* r = lanes [l0, l1) of a, the others of r (a macro: vectors passed by
 * value change the ABI without AVX, -Wpsabi). */
#define TSRT__BLEND(r, a, l0, l1)                                                        \
    do {                                                                                 \
        const tsrt__v8i lane_ = {0, 1, 2, 3, 4, 5, 6, 7};                               \
        const tsrt__v8i m_ = (lane_ >= (l0)) & (lane_ < (l1));                           \
        (r) = (tsrt__v8)(((tsrt__v8i)(a) & m_) | ((tsrt__v8i)(r) & ~m_));               \
    } while (0)

/* F(4x4)'s B^T on a 6-vector:
 * [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]. */
#define TSRT__WG4_BT(d0, d1, d2, d3, d4, d5, o0, o1, o2, o3, o4, o5)                        \
    do {                                                                                    \
        const tsrt__v8 s12_ = (d1) + (d2), s34_ = (d3) + (d4), t12_ = (d1) - (d2);          \
        const tsrt__v8 t43_ = (d4) - (d3), u13_ = (d1) - (d3), u42_ = (d4) - (d2);          \
        o0 = 4.0f * (d0) - 5.0f * (d2) + (d4);                                              \
        o1 = s34_ - 4.0f * s12_;                                                            \
        o2 = t43_ + 4.0f * t12_;                                                            \
        o3 = u42_ - 2.0f * u13_;                                                            \
        o4 = u42_ + 2.0f * u13_;                                                            \
        o5 = 4.0f * (d1) - 5.0f * (d3) + (d5);                                              \
    } while (0)

/* The a x a patches of channel c for 8 tiles (lane l: segment q's tile
 * (ty, tx0 + l) for l in [l0, l1)): d[k*a + j] = patch row k, column j,
 * column m*tx + j being phase j % m, index tx + j / m. A group of lanes
 * spanning several tile rows loads once per row and blends the loads. */
static inline void tsrt__wg_load(const tsrt__wg *g, int64_t c, const tsrt__wg_seg *sg, int ns, tsrt__v8 *d)
{
    const int m = g->m, a = g->a;
    const int64_t Wq = g->xp.Wq, pl = g->xp.plane;
    for (int q = 0; q < ns; q++) {
        const float *r = g->xp.buf + c * m * pl + m * sg[q].ty * Wq + sg[q].tx0;
        const int whole = ns == 1 && sg[0].l0 == 0 && sg[0].l1 == 8;
        for (int k = 0; k < a; k++, r += Wq)
            for (int j = 0; j < a; j++) {
                tsrt__v8 t;
                TSRT__V8_LOAD(t, r + j % m * pl + j / m);
                if (whole || q == 0)
                    d[k * a + j] = t;
                else
                    TSRT__BLEND(d[k * a + j], t, sg[q].l0, sg[q].l1);
            }
    }
}

/* The input transforms B^T d B on loaded patches (d as tsrt__wg_load), into
 * t[xi], xi = i*a + j. F(2x2)'s B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]. */
static inline void tsrt__wg2_bt(const tsrt__v8 *d, tsrt__v8 *t)
{
    tsrt__v8 w[4][4]; /* along the columns of each row */
    for (int k = 0; k < 4; k++) {
        const tsrt__v8 *r = d + 4 * k;
        w[k][0] = r[0] - r[2], w[k][1] = r[1] + r[2], w[k][2] = r[2] - r[1], w[k][3] = r[1] - r[3];
    }
    for (int j = 0; j < 4; j++) {
        t[j] = w[0][j] - w[2][j], t[4 + j] = w[1][j] + w[2][j];
        t[8 + j] = w[2][j] - w[1][j], t[12 + j] = w[1][j] - w[3][j];
    }
}

static inline void tsrt__wg4_bt(const tsrt__v8 *d, tsrt__v8 *t)
{
    tsrt__v8 w[6][6];
    for (int k = 0; k < 6; k++) {
        const tsrt__v8 *r = d + 6 * k;
        TSRT__WG4_BT(r[0], r[1], r[2], r[3], r[4], r[5], w[k][0], w[k][1], w[k][2], w[k][3], w[k][4], w[k][5]);
    }
    for (int j = 0; j < 6; j++)
        TSRT__WG4_BT(w[0][j], w[1][j], w[2][j], w[3][j], w[4][j], w[5][j], t[j], t[6 + j], t[12 + j], t[18 + j],
                     t[24 + j], t[30 + j]);
}

/* V of panel p (all channels) into vp: V[xi][c][NR] at vp + xi*xs + c*NR.
 * Channels outermost: the patch rows of one channel serve every lane
 * group while they are in L1. */
static void tsrt__wg_input(const tsrt__wg *g, int64_t p, float *vp, ptrdiff_t xs)
{
    tsrt__wg_seg sg[TSRT_NR / 8][9];
    int ns[TSRT_NR / 8];
    for (int h = 0; h < TSRT_NR / 8; h++) ns[h] = tsrt__wg_segs(g, p * TSRT_NR + 8 * h, sg[h]);
    for (int64_t c = 0; c < g->CG; c++)
        for (int h = 0; h < TSRT_NR / 8; h++) {
            float *vc = vp + c * TSRT_NR + 8 * h;
            tsrt__v8 d[36], t[36];
            if (ns[h]) tsrt__wg_load(g, c, sg[h], ns[h], d);
            else
                for (int i = 0; i < g->xi; i++) d[i] = (tsrt__v8){0};
            if (g->m == 2)
                tsrt__wg2_bt(d, t);
            else
                tsrt__wg4_bt(d, t);
            for (int i = 0; i < g->xi; i++) TSRT__V8_STORE(vc + i * xs, t[i]);
        }
}

/* o0..o7 = the transpose of the 8x8 matrix with rows r0..r7 (unpack,
 * shuffle, then swap of 128-bit halves: 24 shuffles). */
#define TSRT__TRANSPOSE8(r0, r1, r2, r3, r4, r5, r6, r7, o0, o1, o2, o3, o4, o5, o6, o7)             \
    do {                                                                                        \
        const tsrt__v8 t0_ = __builtin_shufflevector(r0, r1, 0, 8, 1, 9, 4, 12, 5, 13);          \
        const tsrt__v8 t1_ = __builtin_shufflevector(r0, r1, 2, 10, 3, 11, 6, 14, 7, 15);        \
        const tsrt__v8 t2_ = __builtin_shufflevector(r2, r3, 0, 8, 1, 9, 4, 12, 5, 13);          \
        const tsrt__v8 t3_ = __builtin_shufflevector(r2, r3, 2, 10, 3, 11, 6, 14, 7, 15);        \
        const tsrt__v8 t4_ = __builtin_shufflevector(r4, r5, 0, 8, 1, 9, 4, 12, 5, 13);          \
        const tsrt__v8 t5_ = __builtin_shufflevector(r4, r5, 2, 10, 3, 11, 6, 14, 7, 15);        \
        const tsrt__v8 t6_ = __builtin_shufflevector(r6, r7, 0, 8, 1, 9, 4, 12, 5, 13);          \
        const tsrt__v8 t7_ = __builtin_shufflevector(r6, r7, 2, 10, 3, 11, 6, 14, 7, 15);        \
        const tsrt__v8 u0_ = __builtin_shufflevector(t0_, t2_, 0, 1, 8, 9, 4, 5, 12, 13);        \
        const tsrt__v8 u1_ = __builtin_shufflevector(t0_, t2_, 2, 3, 10, 11, 6, 7, 14, 15);      \
        const tsrt__v8 u2_ = __builtin_shufflevector(t1_, t3_, 0, 1, 8, 9, 4, 5, 12, 13);        \
        const tsrt__v8 u3_ = __builtin_shufflevector(t1_, t3_, 2, 3, 10, 11, 6, 7, 14, 15);      \
        const tsrt__v8 u4_ = __builtin_shufflevector(t4_, t6_, 0, 1, 8, 9, 4, 5, 12, 13);        \
        const tsrt__v8 u5_ = __builtin_shufflevector(t4_, t6_, 2, 3, 10, 11, 6, 7, 14, 15);      \
        const tsrt__v8 u6_ = __builtin_shufflevector(t5_, t7_, 0, 1, 8, 9, 4, 5, 12, 13);        \
        const tsrt__v8 u7_ = __builtin_shufflevector(t5_, t7_, 2, 3, 10, 11, 6, 7, 14, 15);      \
        o0 = __builtin_shufflevector(u0_, u4_, 0, 1, 2, 3, 8, 9, 10, 11);                        \
        o1 = __builtin_shufflevector(u1_, u5_, 0, 1, 2, 3, 8, 9, 10, 11);                        \
        o2 = __builtin_shufflevector(u2_, u6_, 0, 1, 2, 3, 8, 9, 10, 11);                        \
        o3 = __builtin_shufflevector(u3_, u7_, 0, 1, 2, 3, 8, 9, 10, 11);                        \
        o4 = __builtin_shufflevector(u0_, u4_, 4, 5, 6, 7, 12, 13, 14, 15);                      \
        o5 = __builtin_shufflevector(u1_, u5_, 4, 5, 6, 7, 12, 13, 14, 15);                      \
        o6 = __builtin_shufflevector(u2_, u6_, 4, 5, 6, 7, 12, 13, 14, 15);                      \
        o7 = __builtin_shufflevector(u3_, u7_, 4, 5, 6, 7, 12, 13, 14, 15);                      \
    } while (0)

/* G g on a 3-vector: F(2x2) G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1];
 * F(4x4) G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6;
 * 1/24 -1/12 1/6; 0 0 1]. o: m + 2 outputs. */
#define TSRT__WG_G(m, g0, g1, g2, o)                                                         \
    do {                                                                                     \
        if ((m) == 2) {                                                                      \
            const tsrt__v8 s_ = (g0) + (g2);                                                 \
            o[0] = (g0), o[1] = 0.5f * (s_ + (g1)), o[2] = 0.5f * (s_ - (g1)), o[3] = (g2);   \
        } else {                                                                             \
            const tsrt__v8 s_ = (g0) + (g2), q_ = (1.0f / 24) * (g0) + (1.0f / 6) * (g2);    \
            o[0] = 0.25f * (g0), o[1] = (-1.0f / 6) * (s_ + (g1)), o[2] = (-1.0f / 6) * (s_ - (g1)); \
            o[3] = q_ + (1.0f / 12) * (g1), o[4] = q_ - (1.0f / 12) * (g1), o[5] = (g2);     \
        }                                                                                    \
    } while (0)

/* U of output channels [o0, o0+on) into u: U[xi][oo][c] at
 * u + (xi*obp + oo)*CG + c; rows on .. obp-1 zero. */
static void tsrt__wg_weights(const tsrt__wg *g, const float *wt, int64_t o0, int64_t on, int64_t obp, float *u)
{
    const int64_t CG = g->CG;
    const int m = g->m, a = g->a;
    for (int64_t oo = 0; oo < obp; oo++) {
        float *uo = u + oo * CG;
        if (oo >= on) {
            for (int i = 0; i < g->xi; i++) memset(uo + i * obp * CG, 0, sizeof(float) * (size_t)CG);
            continue;
        }
        const float *w = wt + (o0 + oo) * CG * 9;
        for (int64_t c = 0; c < CG; c += 8) {
            const int n = (int)tsrt__min(8, CG - c);
            tsrt__v8 k[9]; /* k[t]: tap t of channels c .. c+7 */
            if (n == 8) {
                /* Rows of 9 taps, 8 channels: taps 0-7 by an 8x8 transpose
                 * of unaligned row loads, tap 8 element by element. (A
                 * gather through a stack array stalled on store-to-load
                 * forwarding: a third of a 14x14 conv's time.) */
                const float *wc = w + c * 9;
                tsrt__v8 r0, r1, r2, r3, r4, r5, r6, r7;
                TSRT__V8_LOAD(r0, wc), TSRT__V8_LOAD(r1, wc + 9), TSRT__V8_LOAD(r2, wc + 18);
                TSRT__V8_LOAD(r3, wc + 27), TSRT__V8_LOAD(r4, wc + 36), TSRT__V8_LOAD(r5, wc + 45);
                TSRT__V8_LOAD(r6, wc + 54), TSRT__V8_LOAD(r7, wc + 63);
                TSRT__TRANSPOSE8(r0, r1, r2, r3, r4, r5, r6, r7, k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7]);
                k[8] = (tsrt__v8){wc[8], wc[17], wc[26], wc[35], wc[44], wc[53], wc[62], wc[71]};
            } else {
                for (int t = 0; t < 9; t++) {
                    float tmp[8] = {0};
                    for (int l = 0; l < n; l++) tmp[l] = w[(c + l) * 9 + t];
                    TSRT__V8_LOAD(k[t], tmp);
                }
            }
            tsrt__v8 r[6][3], z[6]; /* G g (rows), then (G g) G^T row by row */
            for (int t = 0; t < 3; t++) {
                tsrt__v8 col[6];
                TSRT__WG_G(m, k[t], k[3 + t], k[6 + t], col);
                for (int i = 0; i < a; i++) r[i][t] = col[i];
            }
            for (int i = 0; i < a; i++) {
                TSRT__WG_G(m, r[i][0], r[i][1], r[i][2], z);
                for (int j = 0; j < a; j++) {
                    float *d = uo + (i * a + j) * obp * CG + c;
                    if (n == 8) {
                        TSRT__V8_STORE(d, z[j]);
                    } else {
                        float tmp[8];
                        TSRT__V8_STORE(tmp, z[j]);
                        memcpy(d, tmp, sizeof(float) * (size_t)n);
                    }
                }
            }
        }
    }
}

/* F(4x4)'s A^T on a 6-vector: [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0;
 * 0 1 -1 8 -8 1]. */
#define TSRT__WG4_AT(m0, m1, m2, m3, m4, m5, y0, y1, y2, y3)                                \
    do {                                                                                    \
        const tsrt__v8 s1_ = (m1) + (m2), d1_ = (m1) - (m2), s2_ = (m3) + (m4), d2_ = (m3) - (m4); \
        y0 = (m0) + s1_ + s2_;                                                              \
        y1 = d1_ + 2.0f * d2_;                                                              \
        y2 = s1_ + 4.0f * s2_;                                                              \
        y3 = d1_ + 8.0f * d2_ + (m5);                                                       \
    } while (0)

/* The output transform of panel p for output channels [o0, o0+on) of the
 * product whose output plane 0 is y (channel stride OH*OW), then the
 * epilogue on the runs of positions it finished. F(2x2)'s A^T =
 * [1 1 1 0; 0 1 -1 -1]. */
static void tsrt__wg_output(const tsrt__wg *g, int64_t p, const float *m, int64_t obp, int64_t o0, int64_t on,
                            float *y, int64_t epi_m0)
{
    const tsrt_conv_args *v = g->v;
    const int64_t OH = v->oh, OW = v->ow, HW = OH * OW;
    const int tm = g->m;
    tsrt__wg_seg sgs[TSRT_NR / 8][9];
    int nss[TSRT_NR / 8];
    for (int hh = 0; hh < TSRT_NR / 8; hh++) nss[hh] = tsrt__wg_segs(g, p * TSRT_NR + 8 * hh, sgs[hh]);
    for (int64_t oo = 0; oo < on; oo++) {
        float *yo = y + (o0 + oo) * HW;
        for (int64_t h = 0; h < TSRT_NR; h += 8) {
            const tsrt__wg_seg *sg = sgs[h / 8];
            const int ns = nss[h / 8];
            if (!ns) break;
            /* z[a][.]: output row m*ty + a, columns m*tx .. m*tx + 8m - 1 of
             * the 8 lanes (tile by tile). */
            tsrt__v8 z[4][4];
            if (tm == 2) {
                tsrt__v8 q[16];
                for (int i = 0; i < 16; i++) TSRT__V8_LOAD(q[i], m + (i * obp + oo) * TSRT_NR + h);
                tsrt__v8 s0[4], s1[4];
                for (int j = 0; j < 4; j++)
                    s0[j] = q[j] + q[4 + j] + q[8 + j], s1[j] = q[4 + j] - q[8 + j] - q[12 + j];
                const tsrt__v8 y00 = s0[0] + s0[1] + s0[2], y01 = s0[1] - s0[2] - s0[3];
                const tsrt__v8 y10 = s1[0] + s1[1] + s1[2], y11 = s1[1] - s1[2] - s1[3];
                z[0][0] = __builtin_shufflevector(y00, y01, 0, 8, 1, 9, 2, 10, 3, 11);
                z[0][1] = __builtin_shufflevector(y00, y01, 4, 12, 5, 13, 6, 14, 7, 15);
                z[1][0] = __builtin_shufflevector(y10, y11, 0, 8, 1, 9, 2, 10, 3, 11);
                z[1][1] = __builtin_shufflevector(y10, y11, 4, 12, 5, 13, 6, 14, 7, 15);
            } else {
                tsrt__v8 s[4][6]; /* A^T along the rows of M, per column j */
                for (int j = 0; j < 6; j++) {
                    tsrt__v8 q0, q1, q2, q3, q4, q5;
                    const float *mj = m + (j * obp + oo) * TSRT_NR + h;
                    const ptrdiff_t st = 6 * obp * TSRT_NR;
                    TSRT__V8_LOAD(q0, mj), TSRT__V8_LOAD(q1, mj + st), TSRT__V8_LOAD(q2, mj + 2 * st);
                    TSRT__V8_LOAD(q3, mj + 3 * st), TSRT__V8_LOAD(q4, mj + 4 * st), TSRT__V8_LOAD(q5, mj + 5 * st);
                    TSRT__WG4_AT(q0, q1, q2, q3, q4, q5, s[0][j], s[1][j], s[2][j], s[3][j]);
                }
                for (int a = 0; a < 4; a++) {
                    tsrt__v8 y0, y1, y2, y3; /* columns 4tx + 0..3, lane = tile */
                    TSRT__WG4_AT(s[a][0], s[a][1], s[a][2], s[a][3], s[a][4], s[a][5], y0, y1, y2, y3);
                    /* Interleave: tile by tile, 4 columns each. */
                    const tsrt__v8 t0 = __builtin_shufflevector(y0, y1, 0, 8, 1, 9, 4, 12, 5, 13);
                    const tsrt__v8 t1 = __builtin_shufflevector(y0, y1, 2, 10, 3, 11, 6, 14, 7, 15);
                    const tsrt__v8 t2 = __builtin_shufflevector(y2, y3, 0, 8, 1, 9, 4, 12, 5, 13);
                    const tsrt__v8 t3 = __builtin_shufflevector(y2, y3, 2, 10, 3, 11, 6, 14, 7, 15);
                    const tsrt__v8 u0 = __builtin_shufflevector(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13);
                    const tsrt__v8 u1 = __builtin_shufflevector(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
                    const tsrt__v8 u2 = __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13);
                    const tsrt__v8 u3 = __builtin_shufflevector(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
                    z[a][0] = __builtin_shufflevector(u0, u1, 0, 1, 2, 3, 8, 9, 10, 11);
                    z[a][1] = __builtin_shufflevector(u2, u3, 0, 1, 2, 3, 8, 9, 10, 11);
                    z[a][2] = __builtin_shufflevector(u0, u1, 4, 5, 6, 7, 12, 13, 14, 15);
                    z[a][3] = __builtin_shufflevector(u2, u3, 4, 5, 6, 7, 12, 13, 14, 15);
                }
            }
            for (int k = 0; k < ns; k++)
                for (int a = 0; a < tm; a++) {
                    const int64_t oy = tm * sg[k].ty + a;
                    if (oy >= OH) break;
                    const int64_t x0 = tm * (sg[k].tx0 + sg[k].l0), x1 = tsrt__min(OW, tm * (sg[k].tx0 + sg[k].l1));
                    float *yr = yo + oy * OW + x0;
                    if (x1 - x0 == 8 * tm) { /* 8 whole tiles inside the row */
                        for (int q = 0; q < tm; q++) {
                            if (v->beta) {
                                tsrt__v8 o;
                                TSRT__V8_LOAD(o, yr + 8 * q);
                                TSRT__V8_STORE(yr + 8 * q, z[a][q] + o);
                            } else {
                                TSRT__V8_STORE(yr + 8 * q, z[a][q]);
                            }
                        }
                        continue;
                    }
                    float zz[32];
                    for (int q = 0; q < tm; q++) TSRT__V8_STORE(zz + 8 * q, z[a][q]);
                    const float *zr = zz + tm * sg[k].l0;
                    if (v->beta)
                        for (int64_t xx = 0; xx < x1 - x0; xx++) yr[xx] += zr[xx];
                    else
                        for (int64_t xx = 0; xx < x1 - x0; xx++) yr[xx] = zr[xx];
                }
        }
    }
    if (!v->epi) return;
    /* The panel's tiles cover, per tile row, output rows m*ty .. m*ty+m-1
     * and columns [m*tx0, m*tx1): runs of positions, merged when
     * contiguous. */
    const int64_t t0 = p * TSRT_NR, t1 = tsrt__min(g->T, t0 + TSRT_NR);
    int64_t r0 = -1, r1 = -1; /* the pending run */
    for (int64_t t = t0; t < t1;) {
        const int64_t ty = t / g->TW, tx = t % g->TW, tx1 = tsrt__min(g->TW, tx + (t1 - t));
        for (int64_t oy = tm * ty; oy < tsrt__min(OH, tm * ty + tm); oy++) {
            const int64_t a = oy * OW + tm * tx, b = oy * OW + tsrt__min(OW, tm * tx1);
            if (a == r1)
                r1 = b;
            else {
                if (r0 >= 0) v->epi(v->epi_ctx, y + o0 * HW + r0, HW, 1, epi_m0 + o0, r0, on, r1 - r0);
                r0 = a, r1 = b;
            }
        }
        t += tx1 - tx;
    }
    if (r0 >= 0) v->epi(v->epi_ctx, y + o0 * HW + r0, HW, 1, epi_m0 + o0, r0, on, r1 - r0);
}

static size_t tsrt__wg_ws_bytes(const tsrt_conv_args *v, int m)
{
    tsrt__wg g;
    tsrt__wg_geom(v, m, &g);
    int64_t xp, u, vv, mm;
    tsrt__wg_ws(&g, &xp, &u, &vv, &mm);
    return (size_t)(xp + u + vv + mm) * sizeof(float) + 5 * TSRT_ALIGN;
}

static void tsrt__conv_wg(const tsrt_conv_args *v, int m, int ith, int nth, void *ws)
{
    tsrt__wg g;
    tsrt__wg_geom(v, m, &g);
    int64_t nxp, nu, nv, nm;
    tsrt__wg_ws(&g, &nxp, &nu, &nv, &nm);
    float *xpb = tsrt__align(ws), *ub = tsrt__align(xpb + nxp), *vb = tsrt__align(ub + nu), *mb = tsrt__align(vb + nv);
    g.xp.buf = xpb + 32;
    /* Threads split output channels (MR units) x panels, as a GEMM of
     * OG x (NP*NR) x xi*CG whose A and B each cost a transform. */
    const int64_t batch = v->n * v->groups, CG = g.CG, XI = g.xi;
    const tsrt__share s = tsrt__split(batch, g.OG, g.NP * TSRT_NR, XI * CG, 8, 8, ith, nth);
    const int64_t Uu = tsrt__cdiv(g.OG, TSRT_MR), p0 = s.c0, p1 = tsrt__min(s.c1, g.NP);
    if (p0 >= p1) return;
    const int64_t KB = tsrt__min(TSRT_KC, tsrt__rup(tsrt__cdiv(CG, tsrt__cdiv(CG, TSRT_KC)), 8));
    float bt[2 * TSRT_KC] __attribute__((aligned(TSRT_ALIGN)));
    const int64_t tA = p0 * TSRT_NR, tB = tsrt__min(g.T, p1 * TSRT_NR) - 1;
    for (int64_t bi = s.r0 / Uu; bi < batch && bi * Uu < s.r1; bi++) {
        const int64_t img = bi / v->groups, gr = bi % v->groups;
        const int64_t o_lo = (tsrt__max(s.r0, bi * Uu) - bi * Uu) * TSRT_MR;
        const int64_t o_hi = tsrt__min(g.OG, (tsrt__min(s.r1, (bi + 1) * Uu) - bi * Uu) * TSRT_MR);
        const float *x = v->x + img * v->x_bs + gr * CG * v->h * v->w, *wt = v->wt + gr * g.OG * CG * 9;
        float *y = v->y + img * v->y_bs + gr * g.OG * v->oh * v->ow;
        const int64_t epi_m0 = img * v->o + gr * g.OG;
        tsrt__phx_copy(&g.xp, x, m * (tA / g.TW), tsrt__min(g.xp.Hq, m * (tB / g.TW) + m + 2));
        const int64_t ogt = o_hi - o_lo, nob = tsrt__cdiv(ogt, g.obcap);
        const int64_t ob = tsrt__rup(tsrt__cdiv(ogt, nob), TSRT_MR);
        const int vall = nob > 1;
        /* One cache line between the xi planes of V: a power-of-two
         * distance would put the stores of one channel in one L1 set. */
        const ptrdiff_t xs = (vall ? p1 - p0 : 1) * CG * TSRT_NR + 16;
        if (vall)
            for (int64_t p = p0; p < p1; p++) tsrt__wg_input(&g, p, vb + (p - p0) * CG * TSRT_NR, xs);
        for (int64_t o0 = o_lo; o0 < o_hi; o0 += ob) {
            const int64_t on = tsrt__min(ob, o_hi - o0), obp = tsrt__rup(on, TSRT_MR);
            tsrt__wg_weights(&g, wt, o0, on, obp, ub);
            for (int64_t p = p0; p < p1; p++) {
                const float *vp = vb + (vall ? (p - p0) * CG * TSRT_NR : 0);
                if (!vall) tsrt__wg_input(&g, p, vb, xs);
                /* Tiles in this panel: a short last panel takes the 6x8
                 * kernel or dot products (tsrt__ukr_ua's tails). */
                const int64_t nt = tsrt__min(TSRT_NR, g.T - p * TSRT_NR);
                for (int xi = 0; xi < XI; xi++)
                    for (int64_t c0 = 0; c0 < CG; c0 += KB) {
                        const int64_t kc = tsrt__min(KB, CG - c0);
                        const float *vx = vp + xi * xs + c0 * TSRT_NR;
                        if (nt <= 2) tsrt__b_cols(kc, vx, nt, bt);
                        for (int64_t ir = 0; ir < obp; ir += TSRT_MR) {
                            const float *ua = ub + (xi * obp + ir) * CG + c0;
                            float *mo = mb + (xi * obp + ir) * TSRT_NR;
                            if (nt == TSRT_NR)
                                tsrt__ukr_full_ua(kc, ua, CG, vx, mo, TSRT_NR, c0 > 0);
                            else
                                tsrt__ukr_ua(kc, ua, CG, vx, mo, TSRT_NR, 1, c0 > 0, nt, bt);
                        }
                    }
                tsrt__wg_output(&g, p, mb, obp, o0, on, y, epi_m0);
            }
        }
    }
}

/* Bytes of workspace per thread, valid for every algorithm. */
TSRT_FN size_t tsrt_conv_workspace(const tsrt_conv_args *args)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    size_t off_bytes, phx_bytes;
    const size_t gw = tsrt__conv_gemm_ws(&v, &off_bytes, &phx_bytes);
    if (!tsrt__conv_wg_applies(&v)) return gw;
    const size_t w2 = tsrt__wg_ws_bytes(&v, 2), w4 = tsrt__wg_ws_bytes(&v, 4);
    const size_t ww = w2 > w4 ? w2 : w4;
    return gw > ww ? gw : ww;
}

/* ==== depthwise: direct ======================================================= */

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
        tsrt__conv_gemm(&v, TSRT__CG_1X1, ith, nth, ws);
        return 0;
    case TSRT_CONV_IM2COL:
        tsrt__conv_gemm(&v, TSRT__CG_IM2COL, ith, nth, ws);
        return 0;
    case TSRT_CONV_WINOGRAD:
    case TSRT_CONV_WINOGRAD4:
        if (!tsrt__conv_wg_applies(&v)) return -1;
        tsrt__conv_wg(&v, algo == TSRT_CONV_WINOGRAD ? 2 : 4, ith, nth, ws);
        return 0;
    case TSRT_CONV_PHASED:
        if (v.ldil_h != 1 || v.ldil_w != 1) return -1;
        tsrt__conv_gemm(&v, TSRT__CG_PHASED, ith, nth, ws);
        return 0;
    default:
        return -1;
    }
}

#endif /* TSRT_CONV_H */
