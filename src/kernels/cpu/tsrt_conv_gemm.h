/* tsrt_conv_gemm.h — convolution as an implicit GEMM (IM2COL, PHASED,
 * GEMM_1X1): the packers that build the GEMM's B micro-panels straight
 * from the image or from a padded copy split by stride phase, and the
 * driver that runs the GEMM per (image, group). See tsrt_conv.h. */
#ifndef TSRT_CONV_GEMM_H
#define TSRT_CONV_GEMM_H

#ifndef TSRT_CONV_ARGS_H
#include "tsrt_conv_args.h"
#endif
#ifndef TSRT_GEMM_H
#include "tsrt_gemm.h"
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

/* ==== GEMM_1X1 with few input channels: the whole K in one pass ============= *
 *
 * A pointwise conv with small K (MobileNetV2: 16 to 192 input channels on
 * maps of 112x112 to 7x7) does few multiply-adds per element of C, so what
 * the BLIS loop nest spends around the micro-kernel shows: C strips of
 * MC x 64 whose rows are H*W floats apart (50176 bytes at 112x112: the
 * rows of a strip fall on 16 of L1's 64 sets) no longer fit in L1 when the
 * epilogue re-reads them, a short last row tile (O = 16, 24, 32, 64...
 * leave 4 or 2 rows) goes through a scalar copy, and the epilogue runs on
 * strips that are being evicted. Here, per column block of NB positions:
 *   - B = X[0..K)[block] is packed once (K x NB, contiguous panels, in
 *     L2), read by every row tile; with few output channels read in place
 *     instead (TSRT_PW_INPLACE_OMAX);
 *   - row tiles outer, panels inner: the weights' MR x K micro-panel is
 *     read in place (tsrt__ukr_ua, lda = K) and stays in L1, and each
 *     MR x NB tile of C is stored once, then handed to the epilogue while
 *     it is still in L1;
 *   - the last row tile (O % MR rows) runs the packed-A kernel into a
 *     stack tile copied out a vector at a time;
 *   - the next block's lines of X are prefetched into L2 over the
 *     micro-kernel calls of this one (without: project layers, K = 96 to
 *     192 with O = 16 to 32, 1.15-1.28x slower with the input in L3), and
 *     the next row tile's weights on the first block.
 * No K blocking, so C is written once (beta only on that write). Taken
 * for K <= TSRT_PW_KMAX when W is at most TSRT_PW_AFLOATS floats (it is
 * read again by every column block) or there is one block. Measured in
 * D29 (docs/decisions.md) with bench/conv_1x1_mobilenetv2.c. */

/* Input channels up to which a 1x1 conv takes this path (larger K: the
 * BLIS loop nest, tsrt__gemm_range, whose blocking pays off there): the
 * GEMM's KC when the path was measured (D29, D59), 384 on AVX-512, where
 * it stayed when KC went down to 192 (D66). The workspace holds it:
 * TSRT_WS_KC. */
#ifndef TSRT_PW_KMAX
#if TSRT_ISA == TSRT_ISA_AVX512
#define TSRT_PW_KMAX 384
#else
#define TSRT_PW_KMAX TSRT_KC
#endif
#endif
#if TSRT_PW_KMAX > TSRT_WS_KC
#error "tsrt: TSRT_PW_KMAX exceeds the workspace's TSRT_WS_KC"
#endif
/* Bytes of packed B per column block: NB = this / (4K), whole panels,
 * at most TSRT_PW_NBMAX. Half of a 1 MiB L2: a row tile then sweeps long
 * runs of C's (and the residual's) rows, which the hardware prefetcher
 * follows; 48 KiB blocks (B in L1) left runs of 12 lines per row and tile
 * (D59: 64 -> 256 at 56x56 with its residual 0.93-0.98 -> 0.91-0.93 ms on
 * an Intel core, 2 threads 0.49-0.52 -> 0.43-0.46). */
#ifndef TSRT_PW_BBYTES
#define TSRT_PW_BBYTES (512 * 1024)
#endif
#ifndef TSRT_PW_PREFETCH
#define TSRT_PW_PREFETCH 1
#endif
/* Output channels up to which the path reads X in place instead of
 * packing it (AVX-512: the kernels take B's row stride, D67): with few
 * row tiles to reuse each packed panel, the packing cost as much as the
 * multiply-adds (MobileNetV2's project layers, 16 to 32 outputs: 20-28%
 * faster in place; ResNet-50's 256 -> 64 at 56x56 10%, 256 -> 128 4%;
 * 144 and 256 outputs alike, the in-place rows straddling cache lines for
 * every row tile). */
#ifndef TSRT_PW_INPLACE_OMAX
#if TSRT_ISA == TSRT_ISA_AVX2
#define TSRT_PW_INPLACE_OMAX 32
#else
#define TSRT_PW_INPLACE_OMAX 128
#endif
#endif
/* On AVX2 (Zen 3, D191) only from this many input channels, and not when
 * X's rows are a multiple of 4 KiB apart: K = 32 convs on 48x48 and
 * 112x112 maps ran 1.3-1.5x slower in place, 96 channels of 32x32 (rows
 * 4 KiB apart, every channel's line in the same L1 set) 1.4x. */
#if TSRT_ISA == TSRT_ISA_AVX2
#define TSRT_PW_INPLACE_KMIN 64
#else
#define TSRT_PW_INPLACE_KMIN 0
#endif
static inline int tsrt__pw_inplace_shape(const tsrt__gop *op)
{
    return op->m <= TSRT_PW_INPLACE_OMAX && op->k >= TSRT_PW_INPLACE_KMIN &&
           (TSRT_ISA != TSRT_ISA_AVX2 || op->b_rs % 1024 != 0);
}
/* Bytes of X up to which the small-K path splits rows between threads. */
#ifndef TSRT_PW_SPLIT_BYTES
#define TSRT_PW_SPLIT_BYTES (256 * 1024)
#endif
/* Floats of W up to which it is read from L2 by every column block. */
#ifndef TSRT_PW_AFLOATS
#define TSRT_PW_AFLOATS (32 * 1024)
#endif
#ifndef TSRT_PW_NBMAX
#define TSRT_PW_NBMAX TSRT_NC /* the workspace holds K x NC floats of B */
#endif

static inline int64_t tsrt__pw_nb(int64_t k)
{
    const int64_t nb = TSRT_PW_BBYTES / (int64_t)sizeof(float) / tsrt__max(k, 1) / TSRT_NR * TSRT_NR;
    return tsrt__max(TSRT_NR, tsrt__min(TSRT_PW_NBMAX, nb));
}

/* X[0..K)[0..nc) (row stride rs, unit column stride) into NR-wide
 * micro-panels, the last one zero-filled past nc (tsrt__pack_b's layout;
 * 8-float vector moves where gcc made its memcpy four 16-byte ones). */
static void tsrt__pw_pack(const float *restrict x, ptrdiff_t rs, int64_t k, int64_t nc, float *restrict dst)
{
    const int64_t nf = nc / TSRT_NR * TSRT_NR;
    for (int64_t jr = 0; jr < nf; jr += TSRT_NR, dst += TSRT_NR * k)
        for (int64_t p = 0; p < k; p++) tsrt__copy_nr(dst + p * TSRT_NR, x + p * rs + jr);
    if (nf < nc) tsrt__pack_b(x + nf, rs, 1, k, nc - nf, dst);
}

/* mr < MR rows of C (c, row stride rs, unit column stride) from the packed
 * A micro-panel pa and a packed B micro-panel pb: the full kernel into a
 * stack tile, then whole vectors out when the panel is full. */
static inline void tsrt__pw_edge_rows(int64_t k, const float *pa, const float *pb, float *c, ptrdiff_t rs, int beta,
                                      int64_t mr, int64_t nr, const tsrt_tepi *te)
{
    if (nr < TSRT_NR) {
        tsrt__ukr(k, pa, pb, c, rs, 1, beta, mr, nr, te);
        return;
    }
    float t[TSRT_MR * TSRT_NR] __attribute__((aligned(TSRT_ALIGN)));
    tsrt__ukr_full(k, pa, pb, t, TSRT_NR, 0, NULL);
    for (int64_t i = 0; i < mr; i++)
        for (int j = 0; j < TSRT_NR; j += 8) {
            tsrt__v8 q, o;
            TSRT__V8_LOAD(q, t + i * TSRT_NR + j);
            if (beta) {
                TSRT__V8_LOAD(o, c + i * rs + j);
                q += o;
            }
            TSRT__V8_STORE(c + i * rs + j, q);
        }
    if (te) tsrt__te_tile(te, c, rs, mr, nr);
}

/* Whether an h-row tile has a kernel of its own (else: pw_edge_rows). */
static inline int tsrt__pw_own_h(int64_t h)
{
#ifdef TSRT_HAVE_UKRH
    return h == TSRT_MR || tsrt__is_tileh(h);
#else
    return h == TSRT_MR;
#endif
}

/* Rows [i0, i1) x columns [j0, j1) of one product C = W·X (op: a = W
 * row-major with a_rs = K, b = X with row stride b_rs and unit column
 * stride, c with unit column stride), K <= TSRT_PW_KMAX. pa: room for one
 * packed MR x K micro-panel; pb: K x rup(min(NB, j1 - j0), NR) floats,
 * aligned. */
TSRT__OUTLINE void tsrt__pw_range(const tsrt__gop *op, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                                  float *restrict pa, float *restrict pb)
{
    const int64_t K = op->k, NB = tsrt__pw_nb(K);
    const ptrdiff_t rs = op->c_rs;
    float bt[2 * TSRT_PW_KMAX] __attribute__((aligned(TSRT_ALIGN))); /* a last panel of <= 2 columns */
    /* the last row tile, packed when it is a partial one for the MR-row
     * kernel (tiles of a height with a kernel of its own read W in place) */
    const int64_t mc = i1 - i0;
    int64_t il = i0;
    while (il + tsrt__tile_h(mc, il - i0) < i1) il += tsrt__tile_h(mc, il - i0);
    if (!tsrt__pw_own_h(i1 - il)) tsrt__pack_a(op->a + il * op->a_rs, op->a_rs, 1, i1 - il, K, pa);
    /* X read in place (see TSRT_PW_INPLACE_OMAX) when every row tile has
     * a kernel of its own: no packed A, whose edge kernel wants packed B */
#ifdef TSRT_HAVE_UKR_UAB
    int inplace = tsrt__pw_inplace_shape(op);
    for (int64_t ir = i0; ir < i1 && inplace; ir += tsrt__tile_h(mc, ir - i0))
        if (!tsrt__pw_own_h(tsrt__tile_h(mc, ir - i0))) inplace = 0;
#else
    const int inplace = 0;
#endif
    for (int64_t jc = j0; jc < j1; jc += NB) {
        const int64_t nc = tsrt__min(NB, j1 - jc), nl = nc % TSRT_NR;
        if (!inplace) tsrt__pw_pack(op->b + jc, op->b_rs, K, nc, pb);
        else if (nl) /* only the last, partial panel: a read past it would leave the image */
            tsrt__pack_b(op->b + jc + (nc - nl), op->b_rs, 1, K, nl, pb + (nc - nl) * K);
        const int64_t bc0 = nl ? tsrt__ua_col0(nl) : -1;
        if (bc0 >= 0) tsrt__b_cols(K, pb + (nc - nl) * K + bc0, nl - bc0, bt);
        /* The next block's lines of X (K rows of 64-byte lines), a share
         * per micro-kernel call: K short runs of a few lines each are too
         * many streams for the hardware prefetcher. Line l of row p is
         * at pf + p*b_rs + l*16. */
        const int64_t jn = jc + NB, lpr = tsrt__cdiv(tsrt__max(tsrt__min(NB, j1 - jn), 0), 16);
        const int64_t calls = tsrt__cdiv(i1 - i0, TSRT_MR) * tsrt__cdiv(nc, TSRT_NR);
        const int64_t pstep = TSRT_PW_PREFETCH ? tsrt__cdiv(K * lpr, calls) : 0;
        const float *pf = op->b + jn;
        int64_t pp = lpr ? 0 : K, pl = 0; /* the next line to prefetch */
        for (int64_t ir = i0, mr; ir < i1; ir += mr) {
            mr = tsrt__tile_h(mc, ir - i0);
            const float *a = op->a + ir * op->a_rs;
            float *c = op->c + ir * rs + jc;
            /* The next tile's rows of W, on the first column block (the
             * weights are read once per call: in the model they are not
             * in cache). */
            if (TSRT_PW_PREFETCH && jc == j0 && ir + TSRT_MR < i1)
                for (int64_t l = 0, n = tsrt__min(TSRT_MR, i1 - ir - TSRT_MR) * K; l < n; l += 16)
                    __builtin_prefetch(a + TSRT_MR * op->a_rs + l, 0, 3);
            for (int64_t jr = 0; jr < nc; jr += TSRT_NR) {
                const int64_t nr = tsrt__min(TSRT_NR, nc - jr);
                for (int64_t e = 0; e < pstep && pp < K; e++) {
                    __builtin_prefetch(pf + pl * 16, 0, 2);
                    if (++pl == lpr) pl = 0, pp++, pf += op->b_rs;
                }
                tsrt_tepi tt;
                const tsrt_tepi *te = NULL;
                if (op->te) tt = tsrt__te_at(op->te, op->epi_m0 + ir, op->epi_n0 + jc + jr), te = &tt;
                /* The next tile's residual rows, into L2: a tile's rows
                 * are H*W floats apart, short runs the hardware prefetcher
                 * does not follow, and the epilogue's loads of them missed
                 * L2 at every tile (ResNet-50's 64 -> 256 at 56x56 with its
                 * residual 1.68-1.84 ms, without 1.19-1.27; with this
                 * 1.26-1.33; into L1 instead 1.60-1.77). Past the block it
                 * is the next rows' or harmless. */
                if (te && te->res)
                    for (int64_t i = 0; i < mr; i++) {
                        __builtin_prefetch(te->res + i * te->res_rs + TSRT_NR, 0, 2);
                        __builtin_prefetch(te->res + i * te->res_rs + 2 * TSRT_NR - 1, 0, 2);
                    }
#ifdef TSRT_HAVE_UKR_UAB
                if (inplace && nr == TSRT_NR) {
                    if (mr == TSRT_MR)
                        tsrt__ukr_full_uab(K, a, op->a_rs, op->b + jc + jr, op->b_rs, c + jr, rs, op->beta, te);
                    else
                        tsrt__ukrh_uab(mr, K, a, op->a_rs, op->b + jc + jr, op->b_rs, c + jr, rs, op->beta, te);
                } else
#endif
                if (mr == TSRT_MR)
                    tsrt__ukr_ua(K, a, op->a_rs, pb + jr * K, c + jr, rs, 1, op->beta, nr, bt, te);
#ifdef TSRT_HAVE_UKRH
                else if (tsrt__is_tileh(mr))
                    tsrt__ukrh_any(mr, K, a, op->a_rs, pb + jr * K, c + jr, rs, 1, op->beta, nr, te);
#endif
                else
                    tsrt__pw_edge_rows(K, pa, pb + jr * K, c + jr, rs, op->beta, mr, nr, te);
            }
            if (op->epi) tsrt__epi(op, ir, jc, mr, nc);
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
