/* tsrt_conv_gemm.h — convolution as an implicit GEMM (IM2COL, PHASED,
 * GEMM_1X1): the packers that build the GEMM's B micro-panels straight
 * from the image or from a padded copy split by stride phase, and the
 * driver that runs the GEMM per (image, group); the 1x1 path with few
 * input channels is tsrt_conv_pw.h. See tsrt_conv.h. */
#ifndef TSRT_CONV_GEMM_H
#define TSRT_CONV_GEMM_H

#ifndef TSRT_CONV_ARGS_H
#include "tsrt_conv_args.h"
#endif
#ifndef TSRT_GEMM_H
#include "tsrt_gemm.h"
#endif
#ifndef TSRT_CONV_PW_H
#include "tsrt_conv_pw.h"
#endif

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

/* The offset of every k = (c, u, w) in the phase copy: the kh x kw taps'
 * offsets within a channel (four divisions each), then one channel's
 * phases further per c. Every part of every call builds it (GEMM_T too):
 * with four divisions per k it took 3 us for a 576-channel 1x1, 0.3 us
 * now (D83). */
static void tsrt__phx_offsets(const tsrt__phx *g, ptrdiff_t *off)
{
    const tsrt_conv_args *v = g->v;
    const int64_t cg = v->c / v->groups, taps = v->kh * v->kw, step = g->PH * g->PW * g->plane;
    for (int64_t u = 0; u < v->kh; u++)
        for (int64_t w = 0; w < v->kw; w++) {
            const int64_t uu = u * v->dil_h, ww = w * v->dil_w;
            const int64_t ph = (uu % v->stride_h) * g->PW + ww % v->stride_w;
            off[u * v->kw + w] = ph * g->plane + uu / v->stride_h * g->Wq + ww / v->stride_w;
        }
    for (int64_t c = 1; c < cg; c++)
        for (int64_t t = 0; t < taps; t++) off[c * taps + t] = off[t] + c * step;
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
#if TSRT_ISA != TSRT_ISA_AVX2
    float rb[TSRT__PHX_ROWBUF] __attribute__((aligned(TSRT_ALIGN)));
#endif
    int64_t lo = 0, hi = 0; /* the image's columns in the padded row (rb): [lo, hi) */
    if (fast) {
        lo = tsrt__min(Lp, tsrt__max(0, v->pad_w)), hi = tsrt__max(lo, tsrt__min(Lp, W + v->pad_w));
#if TSRT_ISA != TSRT_ISA_AVX2
        for (int64_t q = 0; q < lo; q++) rb[q] = 0.0f;
        for (int64_t q = hi; q < Lp + 32; q++) rb[q] = 0.0f;
#endif
    }
#if TSRT_ISA == TSRT_ISA_AVX512
    /* AVX-512: the padded row's 16-float chunks straight from the image by
     * masked loads (lanes [lo, hi) of rb's columns), stride 2 cut from
     * them in registers. The scalar work of a memcpy call and its bounds
     * per row, with rb's stores and reloads, was the copy's time: 30 us
     * for a 32-channel 48x48 image with both in L2 (D158). */
    __mmask16 mk[TSRT__PHX_ROWBUF / 16];
    if (fast)
        for (int64_t j = 0; j < Lp + 32; j += 16) {
            const int64_t ml = tsrt__max(0, lo - j), mh = tsrt__min(16, hi - j);
            mk[j / 16] = mh <= ml ? 0 : (__mmask16)(((1u << mh) - 1) & ~((1u << ml) - 1));
        }
#endif
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
#if TSRT_ISA == TSRT_ISA_AVX512
                    if (sw == 2) {
                        for (int64_t q = 0; q < Wq; q += 8) {
                            const __m512 r = _mm512_maskz_loadu_ps(mk[q / 8], xr + 2 * q - v->pad_w);
                            TSRT__V8_STORE(d0 + q, __builtin_shufflevector(r, r, 0, 2, 4, 6, 8, 10, 12, 14));
                            if (g->PW > 1)
                                TSRT__V8_STORE(d0 + g->plane + q,
                                               __builtin_shufflevector(r, r, 1, 3, 5, 7, 9, 11, 13, 15));
                        }
                        continue;
                    }
                    for (int64_t j = 0; j < Lp + 32; j += 16)
                        _mm512_store_ps(rb + j, _mm512_maskz_loadu_ps(mk[j / 16], xr + j - v->pad_w));
#elif TSRT_ISA != TSRT_ISA_AVX2
                    memcpy(rb + lo, xr + lo - v->pad_w, sizeof(float) * (size_t)(hi - lo));
#endif
                    for (int64_t q = 0; q < Wq; q += 8) {
#if TSRT_ISA == TSRT_ISA_AVX2
/* AVX2: the padded row's chunks by masked loads from the image, not from
 * rb: a memcpy into rb read back by 32-byte loads stalled on store
 * forwarding, ~50 cycles a row (a 64-channel 24x24 stride-2 conv: the
 * copy 19% of 154 us, 141 us without) */
#define TSRT__PHX_LD(r, o) TSRT__V8_LOAD_IN(r, xr + q * sw + (o) - v->pad_w, q * sw + (o), lo, hi)
#else
#define TSRT__PHX_LD(r, o) TSRT__V8_LOAD(r, rb + q * sw + (o))
#endif
                        tsrt__v8 a0, a1;
                        TSRT__PHX_LD(a0, 0);
                        TSRT__PHX_LD(a1, 8);
                        if (sw == 2) {
                            TSRT__V8_STORE(d0 + q, __builtin_shufflevector(a0, a1, 0, 2, 4, 6, 8, 10, 12, 14));
                            if (g->PW > 1)
                                TSRT__V8_STORE(d0 + g->plane + q,
                                               __builtin_shufflevector(a0, a1, 1, 3, 5, 7, 9, 11, 13, 15));
                            continue;
                        }
                        tsrt__v8 a2, a3;
                        TSRT__PHX_LD(a2, 16);
                        TSRT__PHX_LD(a3, 24);
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
#undef TSRT__PHX_LD
                    continue;
                }
                for (int64_t b = 0; b < g->PW; b++) {
                    float *d = d0 + b * g->plane;
                    const float *row = xr + b - v->pad_w; /* column q at row[q*sw] */
                    int64_t qlo, qhi; /* columns inside the image */
                    if (sw == 1) {
                        /* Stride 1 (depthwise, 3x3/1 PHASED): a row copy
                         * of a few dozen to a few hundred bytes, inline,
                         * without tap_range's divisions or a memcpy call;
                         * the last vector overlaps the one before. */
                        const int64_t off = b - v->pad_w;
                        qhi = tsrt__max(0, tsrt__min(Wq, W - off)), qlo = tsrt__min(qhi, tsrt__max(0, -off));
                        int64_t q = 0;
                        for (; q < qlo; q++) d[q] = 0.0f;
                        if (qhi - qlo >= 8) {
                            tsrt__v8 t;
                            for (; q + 8 < qhi; q += 8) {
                                TSRT__V8_LOAD(t, row + q);
                                TSRT__V8_STORE(d + q, t);
                            }
                            TSRT__V8_LOAD(t, row + qhi - 8);
                            TSRT__V8_STORE(d + qhi - 8, t);
                            q = qhi;
                        }
                        for (; q < qhi; q++) d[q] = row[q];
                        for (; q < Wq; q++) d[q] = 0.0f;
                        continue;
                    }
                    tsrt__tap_range(b - v->pad_w, sw, W, Wq, &qlo, &qhi);
                    for (int64_t q = 0; q < qlo; q++) d[q] = 0.0f;
                    for (int64_t q = qlo; q < qhi; q++) d[q] = row[sw * q];
                    for (int64_t q = qhi; q < Wq; q++) d[q] = 0.0f;
                }
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

/* ==== small maps: several images' columns in one product ===================== */

/* A map of fewer positions than a micro-panel has columns (a 4x4 map: 16
 * of 32) leaves most of each tile empty and pays a product's fixed costs
 * per image: a training step's 16 -> 32 conv at 4x4, batch 64, ran at
 * about 22 GFLOP/s. Then a product takes the columns (image, position) of
 * up to TSRT__IB_COLS / P images, computes into the workspace, and copies
 * its block out image by image, the epilogue on each image's part. */
enum { TSRT__IB_COLS = 256 };

static int tsrt__ib_applies(const tsrt_conv_args *v) { return v->groups == 1 && v->oh * v->ow < TSRT_NR; }

static int64_t tsrt__ib_imgs(const tsrt_conv_args *v) { return tsrt__max(1, TSRT__IB_COLS / (v->oh * v->ow)); }

typedef struct tsrt__ib {
    const tsrt_conv_args *v;
    int64_t img0;             /* the group's first image */
    float *xp;                /* its images zero-padded (hp x wp maps), or NULL */
    int64_t hp, wp;
} tsrt__ib;

/* The padded staging copy applies to unit column strides without input
 * dilation: then each output row's positions read one contiguous run. */
static int tsrt__ib_staged(const tsrt_conv_args *v) { return v->stride_w == 1 && v->ldil_h == 1 && v->ldil_w == 1; }

static void tsrt__ib_dims(const tsrt_conv_args *v, int64_t *hp, int64_t *wp)
{
    *hp = (v->oh - 1) * v->stride_h + (v->kh - 1) * v->dil_h + 1;
    *wp = (v->ow - 1) * v->stride_w + (v->kw - 1) * v->dil_w + 1;
}

/* Images [img0, img0 + nimg) into ib->xp, padded: row r of a map is input
 * row r - pad_h, column q input column q - pad_w, zero outside. */
static void tsrt__ib_stage(tsrt__ib *ib, int64_t nimg)
{
    const tsrt_conv_args *v = ib->v;
    for (int64_t i = 0; i < nimg; i++)
        for (int64_t c = 0; c < v->c; c++) {
            const float *xc = v->x + (ib->img0 + i) * v->x_bs + c * v->h * v->w;
            float *m = ib->xp + (i * v->c + c) * ib->hp * ib->wp;
            for (int64_t r = 0; r < ib->hp; r++) {
                const int64_t iy = r - v->pad_h;
                float *row = m + r * ib->wp;
                for (int64_t q = 0; q < ib->wp; q++) {
                    const int64_t ix = q - v->pad_w;
                    row[q] = iy >= 0 && iy < v->h && ix >= 0 && ix < v->w ? xc[iy * v->w + ix] : 0.0f;
                }
            }
        }
}

/* Rows [p0, p0+kc) x columns [j0, j0+nc) of the group's X' (the
 * tsrt__pack_b_fn contract): column j is position j % P of image
 * img0 + j / P. */
static void tsrt__ib_pack(const void *vctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float *dst)
{
    const tsrt__ib *ctx = vctx;
    const tsrt_conv_args *v = ctx->v;
    const int64_t P = v->oh * v->ow, KK = v->kh * v->kw, HW = v->h * v->w;
    const float *base[TSRT_NR];
    int64_t by[TSRT_NR], bx[TSRT_NR];
    for (int64_t jr = 0; jr < nc; jr += TSRT_NR, dst += TSRT_NR * kc) {
        const int64_t nr = tsrt__min(TSRT_NR, nc - jr);
        for (int64_t t = 0; t < nr; t++) {
            const int64_t j = j0 + jr + t, pos = j % P;
            base[t] = v->x + (ctx->img0 + j / P) * v->x_bs;
            by[t] = pos / v->ow * v->stride_h - v->pad_h;
            bx[t] = pos % v->ow * v->stride_w - v->pad_w;
        }
        int64_t c = p0 / KK, u = p0 % KK / v->kw, w = p0 % v->kw;
        if (ctx->xp) {
            /* runs of one output row of one image: contiguous in the
             * padded copy (by and bx are padded coordinates there) */
            tsrt__seg seg[TSRT_NR];
            const float *src[TSRT_NR];
            int ns = 0;
            for (int64_t t = 0; t < nr; ns++) {
                const int64_t j = j0 + jr + t, pos = j % P, oj = pos % v->ow;
                const int64_t len = tsrt__min(v->ow - oj, nr - t);
                seg[ns] = (tsrt__seg){t, len, pos / v->ow, oj};
                src[ns] = ctx->xp + (j / P) * v->c * ctx->hp * ctx->wp + seg[ns].oi * v->stride_h * ctx->wp + oj;
                t += len;
            }
            for (int64_t p = 0; p < kc; p++) {
                float *d = dst + p * TSRT_NR;
                const int64_t off = c * ctx->hp * ctx->wp + u * v->dil_h * ctx->wp + w * v->dil_w;
                for (int g = 0; g < ns; g++) {
                    float *dd = d + seg[g].off;
                    const float *ss = src[g] + off;
                    if (seg[g].len == 4) memcpy(dd, ss, 4 * sizeof(float));   /* 4x4 maps: one 16-byte move */
                    else
                        for (int64_t q = 0; q < seg[g].len; q++) dd[q] = ss[q];
                }
                if (++w == v->kw) w = 0, ++u == v->kh ? (u = 0, c++) : 0;
            }
            continue;
        }
        for (int64_t p = 0; p < kc; p++) {
            float *d = dst + p * TSRT_NR;
            const int64_t dy = u * v->dil_h, dx = w * v->dil_w, co = c * HW;
            for (int64_t t = 0; t < nr; t++) d[t] = tsrt__im2col_at(v, base[t] + co, by[t] + dy, bx[t] + dx);
            if (++w == v->kw) w = 0, ++u == v->kh ? (u = 0, c++) : 0;
        }
    }
}

/* Rows [r0, r1) x columns [j0, j1) of the group's result cw (row stride
 * cs) into y, image by image, then the epilogue on each image's part. */
static void tsrt__ib_out(const tsrt_conv_args *v, int64_t img0, const float *cw, int64_t cs, int64_t r0, int64_t r1,
                         int64_t j0, int64_t j1)
{
    const int64_t P = v->oh * v->ow;
    for (int64_t j = j0; j < j1;) {
        const int64_t img = img0 + j / P, pa = j % P, pb = tsrt__min(P, pa + (j1 - j));
        float *yi = v->y + img * v->y_bs;
        for (int64_t o = r0; o < r1; o++) {
            const float *src = cw + o * cs + j;
            float *dst = yi + o * P + pa;
            for (int64_t q = 0; q < pb - pa; q++) dst[q] = v->beta ? dst[q] + src[q] : src[q];
        }
        tsrt__conv_epi(v, yi + r0 * P + pa, P, img * v->o + r0, pa, r1 - r0, pb - pa);
        j += pb - pa;
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
    size_t gemm = tsrt_sgemm_workspace(v->o / v->groups, v->oh * v->ow, K);
    if (tsrt__ib_applies(v)) {   /* the group's product, and its result */
        const int64_t cols = tsrt__ib_imgs(v) * v->oh * v->ow;
        int64_t hp, wp;
        tsrt__ib_dims(v, &hp, &wp);
        const int64_t staged = tsrt__ib_staged(v) ? tsrt__ib_imgs(v) * v->c * hp * wp : 0;
        const size_t ib = tsrt_sgemm_workspace(v->o, cols, K) + (size_t)tsrt__rup(v->o * cols * 4, TSRT_ALIGN) +
                          (size_t)tsrt__rup(staged * 4, TSRT_ALIGN) + 2 * TSRT_ALIGN;
        gemm = gemm > ib ? gemm : ib;
    }
    return *off_bytes + *phx_bytes + gemm + TSRT_WS_NR * sizeof(float);
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

/* The products of groups of images (tsrt__ib_*); op as tsrt__conv_gemm
 * set it up, w the workspace after its first parts. */
static void tsrt__conv_ib(const tsrt_conv_args *v, tsrt__gop *op, char *w, int ith, int nth)
{
    const int64_t P = v->oh * v->ow, per = tsrt__ib_imgs(v), cols = per * P;
    tsrt__ib ib = {.v = v};
    op->n = cols;
    op->pack_b = tsrt__ib_pack, op->pack_b_ctx = &ib;
    op->c_rs = cols, op->beta = 0, op->te = NULL, op->epi = NULL;
    op->epi_m0 = op->epi_n0 = 0;
    op->a = v->wt;
    float *pa, *pb;
    tsrt__ws_split(w, op->m, op->k, &pa, &pb);
    float *cw = tsrt__align(w + tsrt_sgemm_workspace(op->m, cols, op->k));
    op->c = cw;
    tsrt__ib_dims(v, &ib.hp, &ib.wp);
    float *xp = tsrt__ib_staged(v) ? tsrt__align(cw + tsrt__rup(op->m * cols, TSRT_ALIGN / 4)) : NULL;
    const int64_t batch = tsrt__cdiv(v->n, per);
    const tsrt__share s = tsrt__split(batch, op->m, cols, op->k, 16, 32, ith, nth);
    const int64_t U = tsrt__cdiv(op->m, TSRT_MR);
    for (int64_t bi = s.r0 / U; bi < batch && bi * U < s.r1; bi++) {
        const int64_t lo = tsrt__max(s.r0, bi * U) - bi * U, hi = tsrt__min(s.r1, (bi + 1) * U) - bi * U;
        const int64_t valid = tsrt__min(per, v->n - bi * per) * P;   /* the last group may be short */
        const int64_t j0 = s.c0 * TSRT_NR, j1 = tsrt__min(tsrt__min(s.c1 * TSRT_NR, cols), valid);
        if (j0 >= j1) continue;
        ib.img0 = bi * per;
        if ((ib.xp = xp)) tsrt__ib_stage(&ib, valid / P);
        const int64_t r0 = lo * TSRT_MR, r1 = tsrt__min(hi * TSRT_MR, op->m);
        tsrt__gemm_range(op, r0, r1, j0, j1, pa, pb);
        tsrt__ib_out(v, ib.img0, cw, cols, r0, r1, j0, j1);
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
    op.te = v->te;
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
    /* Few input channels: the whole K in one pass (tsrt__pw_range), when
     * the weights stay in L2 from one column block to the next or there
     * is only one block (it reads all of W per block: ResNet-50's
     * 256 -> 1024 at 14x14, 1 MiB of W, was 7% slower that way). */
    const int pw = mode == TSRT__CG_1X1 && op.k >= 1 && op.k <= TSRT_PW_KMAX &&
                   (op.m * op.k <= TSRT_PW_AFLOATS || op.n <= tsrt__pw_nb(op.k));
    /* As tsrt__gemm_batched, with the copy of each product's input. */
    if (op.m <= 0 || op.n <= 0) return;
    if (v->n > 1 && tsrt__ib_applies(v)) {   /* any of the three forms: the group's packer is im2col's */
        tsrt__conv_ib(v, &op, w, ith, nth);
        return;
    }
    const int64_t batch = v->n * v->groups;
    float *pa, *pb;
    tsrt__ws_split(w, op.m, op.k, &pa, &pb);
    /* The small-K path splits rows (output channels) between threads,
     * each packing all of X, wherever X is small (in L2) and every thread
     * gets at least 4 row tiles: the split by columns that the packing
     * cost favours was up to 1.5x slower at 2 threads on MobileNetV2's
     * 32 -> 192 at 28x28 (each thread then reads the other core's half of
     * the input, and the next kernel, split by channels, the other half of
     * the output). */
    const int rows_pw = pw && op.k * op.n * (int64_t)sizeof(float) <= TSRT_PW_SPLIT_BYTES &&
                        op.m >= (int64_t)nth * 4 * TSRT_MR;
    const tsrt__share s = tsrt__split(batch, op.m, op.n, op.k, 16, rows_pw ? 0 : wb, ith, nth);
    const int64_t U = tsrt__cdiv(op.m, TSRT_MR);
    const int64_t j0 = s.c0 * TSRT_NR, j1 = tsrt__min(s.c1 * TSRT_NR, op.n);
    if (j0 >= j1) return;
    for (int64_t bi = s.r0 / U; bi < batch && bi * U < s.r1; bi++) {
        const int64_t lo = tsrt__max(s.r0, bi * U) - bi * U, hi = tsrt__min(s.r1, (bi + 1) * U) - bi * U;
        tsrt__conv_gemm_bind(&ctx, bi, j0, j1, &op);
        if (pw)
            tsrt__pw_range(&op, lo * TSRT_MR, tsrt__min(hi * TSRT_MR, op.m), j0, j1, pa, pb);
        else
            tsrt__gemm_range(&op, lo * TSRT_MR, tsrt__min(hi * TSRT_MR, op.m), j0, j1, pa, pb);
    }
}

#endif /* TSRT_CONV_GEMM_H */
