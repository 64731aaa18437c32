/* tsrt_conv_dw.h — direct depthwise convolution (DEPTHWISE: one input
 * channel per group), any kernel, stride and dilation. See tsrt_conv.h.
 *
 * The fast path (no input dilation, not 1x1, not 3x3/1 on a wide map:
 * tsrt__dw_fast) copies each input plane,
 * zero-padded and split by stride phase, into the workspace (the PHASED
 * copy of tsrt_conv_gemm.h with one channel), a chunk of rows at a time:
 * every tap of output (i, j) is then at a fixed offset off[t] from i*Wq + j
 * in the phase images, so an output row is KH*KW unaligned vector loads
 * and multiply-adds per 8 outputs, with no border tests and no strided
 * loads at stride 2. Narrow maps (14x14, 7x7) run a chunk as one flat loop
 * over positions instead (tsrt__dw_chunk). The epilogue runs on each chunk
 * while it is in L1. */
#ifndef TSRT_CONV_DW_H
#define TSRT_CONV_DW_H

#ifndef TSRT_CONV_GEMM_H
#include "tsrt_conv_gemm.h"
#endif

/* ==== depthwise: phase-split copy, flat loop ================================== */

/* Output positions per chunk: the chunk's output (8 KiB) and its input
 * rows (8 KiB at stride 1, 32 at stride 2) stay in L1 (32 KiB here)
 * between the loop, the copy to y and the epilogue. (4096 measured the
 * same within this machine's noise.) */
#define TSRT__DW_CHUNK 2048
/* Positions per step of the loops of tsrt__dw_chunk: 8 vectors. */
#define TSRT__DW_STEP 64
/* Floats past the phase images that the flat loop's last vectors may read
 * (4 vectors past the last position, plus the largest tap offset within
 * a row, added where it is known). */
#define TSRT__DW_SLACK (2 * TSRT__DW_STEP)

/* 3x3 stride 1 on maps at least this wide keeps the direct row kernel
 * (tsrt__dw_rows), which reads the input in place: there the copy costs
 * more than the border code it removes (MobileNetV2, per layer, direct
 * against the copy: 112x112 0.40 vs 0.46 ms, 56x56 0.54 vs 0.54, 28x28
 * 0.21 vs 0.24; 14x14 0.30 vs 0.26, 7x7 0.25 vs 0.20). */
#define TSRT__DW_DIRECT_MIN_OW 24

/* The phase-split path applies: no input dilation, not 1x1, and not a
 * wide 3x3 stride-1 map. */
static int tsrt__dw_fast(const tsrt_conv_args *v)
{
    const int direct = v->kh == 3 && v->kw == 3 && v->stride_h == 1 && v->stride_w == 1 &&
                       v->ow >= TSRT__DW_DIRECT_MIN_OW;
    return v->ldil_h == 1 && v->ldil_w == 1 && !tsrt__conv_is_1x1(v) && !direct;
}

/* Workspace of the fast path, in floats: off (KH*KW ptrdiff_t), the phase
 * images of one plane, the chunk. Each part starts aligned. */
static void tsrt__dw_ws(const tsrt_conv_args *v, const tsrt__phx *g, int64_t *off, int64_t *img, int64_t *tmp)
{
    *off = tsrt__rup(v->kh * v->kw * (int64_t)(sizeof(ptrdiff_t) / sizeof(float)), 16);
    *img = g->PH * g->PW * g->plane + (v->kw - 1) * v->dil_w + TSRT__DW_SLACK;
    *tmp = TSRT__DW_CHUNK + g->Wq + TSRT__DW_STEP;
}

static size_t tsrt__dw_ws_bytes(const tsrt_conv_args *v)
{
    if (!tsrt__dw_fast(v)) return 0;
    tsrt__phx g;
    tsrt__phx_geom(v, &g);
    int64_t a, b, c;
    tsrt__dw_ws(v, &g, &a, &b, &c);
    return (size_t)(a + b + c) * sizeof(float) + 3 * TSRT_ALIGN;
}

/* y[q] = (beta ? y[q] : 0) + sum over taps k < kk of w[k] * x[off[k] + q]
 * for the nv <= 8 vectors q < 8*nv (nv a constant where this is inlined).
 * The units are compiled without FMA contraction (-std=c11), so a tap is
 * a multiply and a dependent add: 8 independent sums keep the adds
 * (latency 3) from limiting the loop below the loads' pace (4 sums: 27
 * cycles of add chain per 36 loads). */
static inline __attribute__((always_inline)) void tsrt__dw_vecs(const float *restrict x, const ptrdiff_t *off,
                                                                 const float *w, int64_t kk, float *restrict y,
                                                                 int nv, int beta)
{
    tsrt__v8 a[8];
    for (int r = 0; r < nv; r++) {
        a[r] = (tsrt__v8){0};
        if (beta) TSRT__V8_LOAD(a[r], y + 8 * r);
    }
    for (int64_t k = 0; k < kk; k++) {
        const float *s = x + off[k];
        const float wk = w[k];
        for (int r = 0; r < nv; r++) {
            tsrt__v8 b;
            TSRT__V8_LOAD(b, s + 8 * r);
            a[r] += wk * b;
        }
    }
    for (int r = 0; r < nv; r++) TSRT__V8_STORE(y + 8 * r, a[r]);
}

/* Output rows [i0, i1) of one plane into y (row i at y + i*ow) from the
 * phase images at x (output (i, j) at x[i*wq + j]). Rows of at least
 * TSRT__DW_ROW_MIN outputs are computed in place, 64 then 8 outputs at a
 * time, the last partial vector through t. Narrower rows (14x14, 7x7)
 * would leave most of the 8 sums idle: their chunk is one flat loop over
 * positions i*wq + j, the wq - ow extra ones per row computed in t and
 * dropped when the rows are copied to y. Inlined with kk = 9 (3x3) so that
 * the tap loop unrolls. */
#define TSRT__DW_ROW_MIN 32
static inline __attribute__((always_inline)) void tsrt__dw_chunk(const float *x, const ptrdiff_t *off,
                                                                  const float *w, int64_t kk, float *y,
                                                                  int64_t i0, int64_t i1, int64_t wq, int64_t ow,
                                                                  int beta, float *t)
{
    if (ow >= TSRT__DW_ROW_MIN) {
        for (int64_t i = i0; i < i1; i++) {
            const float *xr = x + i * wq;
            float *yr = y + i * ow;
            int64_t j = 0;
            for (; j + TSRT__DW_STEP <= ow; j += TSRT__DW_STEP) tsrt__dw_vecs(xr + j, off, w, kk, yr + j, 8, beta);
            for (; j + 8 <= ow; j += 8) tsrt__dw_vecs(xr + j, off, w, kk, yr + j, 1, beta);
            if (j < ow) {
                tsrt__dw_vecs(xr + j, off, w, kk, t, 1, 0);
                for (int64_t q = 0; q < ow - j; q++) yr[j + q] = beta ? yr[j + q] + t[q] : t[q];
            }
        }
        return;
    }
    const int64_t n = (i1 - i0) * wq;
    for (int64_t q = 0; q < n; q += TSRT__DW_STEP) tsrt__dw_vecs(x + i0 * wq + q, off, w, kk, t + q, 8, 0);
    for (int64_t i = i0; i < i1; i++) {
        float *yr = y + i * ow;
        const float *tr = t + (i - i0) * wq;
        if (beta)
            for (int64_t j = 0; j < ow; j++) yr[j] += tr[j];
        else
            memcpy(yr, tr, sizeof(float) * (size_t)ow);
    }
}

/* Thread ith's share of the (plane, output row) pairs by the fast path. */
static void tsrt__conv_dw_fast(const tsrt_conv_args *v, int ith, int nth, void *ws)
{
    tsrt__phx g;
    tsrt__phx_geom(v, &g);
    int64_t noff, nimg, ntmp;
    tsrt__dw_ws(v, &g, &noff, &nimg, &ntmp);
    ptrdiff_t *off = (ptrdiff_t *)(void *)tsrt__align(ws);
    float *img = tsrt__align((float *)(void *)off + noff), *tmp = tsrt__align(img + nimg);
    tsrt__phx_offsets(&g, off);
    g.buf = img;
    /* The flat loop reads past the rows copied so far (the values are
     * dropped): zeros there rather than stale bits that may be NaNs or
     * denormals (slow on some cores). */
    memset(img, 0, sizeof(float) * (size_t)nimg);
    const int64_t OH = v->oh, OW = v->ow, Wq = g.Wq, KK = v->kh * v->kw, mult = v->o / v->groups;
    const int64_t eh = (v->kh - 1) * v->dil_h / v->stride_h; /* extra phase rows below an output row */
    const int64_t units = v->n * v->o * OH, u0 = units * ith / nth, u1 = units * (ith + 1) / nth;
    const int64_t chunk = tsrt__max(1, TSRT__DW_CHUNK / Wq);
    int64_t cur = -1, lo = 0, hi = 0; /* the plane in img, and its phase rows copied: [lo, hi) */
    for (int64_t u = u0; u < u1;) {
        const int64_t pl = u / OH, im = pl / v->o, oc = pl % v->o, i0 = u % OH;
        const int64_t i1 = tsrt__min(OH, tsrt__min(i0 + chunk, i0 + (u1 - u)));
        const float *xp = v->x + im * v->x_bs + (oc / mult) * v->h * v->w;
        float *yp = v->y + im * v->y_bs + oc * OH * OW;
        const int64_t src = im * v->c + oc / mult; /* input plane */
        /* A new plane, or one seen before from a later row (a channel
         * multiplier: the next output channel reads the same input) */
        if (src != cur || i0 < lo) cur = src, lo = hi = i0;
        const int64_t r1 = tsrt__min(g.Hq, i1 + eh);
        if (hi < r1) tsrt__phx_copy(&g, xp, hi, r1);
        hi = tsrt__max(hi, r1);
        const float *wk = v->wt + oc * KK;
        if (KK == 9)
            tsrt__dw_chunk(img, off, wk, 9, yp, i0, i1, Wq, OW, v->beta, tmp);
        else
            tsrt__dw_chunk(img, off, wk, KK, yp, i0, i1, Wq, OW, v->beta, tmp);
        if (v->epi) v->epi(v->epi_ctx, yp + i0 * OW, OH * OW, 1, im * v->o + oc, i0 * OW, 1, (i1 - i0) * OW);
        u += i1 - i0;
    }
}

/* ==== depthwise: direct, general ============================================== */

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
        /* Without beta a short tail is one more vector ending at n, over
         * the last one (recomputing the same values) instead of up to 7
         * scalar outputs (CPU time of one call, no epilogue: 32ch 112x112
         * 0.31-0.37 -> 0.26-0.28 ms, 144ch 56x56 0.44-0.58 -> 0.35-0.36,
         * 192ch 28x28 unchanged). */
        const int64_t nv = n / 8, tail = !v->beta && nv > 0 && n % 8;
        for (int64_t t = 0; t < nv + tail; t++) {
            const int64_t j = t < nv ? 8 * t : n - 8;
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
        for (int64_t j = tail ? n : 8 * nv; j < n; j++) {
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

static void tsrt__conv_dw(const tsrt_conv_args *v, int ith, int nth, void *ws)
{
    if (tsrt__dw_fast(v)) {
        tsrt__conv_dw_fast(v, ith, nth, ws);
        return;
    }
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

#endif /* TSRT_CONV_DW_H */
