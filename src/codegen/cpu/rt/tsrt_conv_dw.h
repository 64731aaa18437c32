/* tsrt_conv_dw.h — depthwise convolution (DEPTHWISE: one input channel per
 * group, any channel multiplier), any kernel, stride and dilation. See
 * tsrt_conv.h.
 *
 * Without input dilation (every depthwise layer of MobileNet-like
 * networks) 8 output channels run at a time with the channels in the
 * vector lanes, as NCHWc layouts do: a chunk of input rows of the 8
 * channels' input planes is transposed into a zero-padded tile
 * T[row][column][8], every output position is then KH*KW multiply-adds of
 * whole vectors (no border tests, no strided loads at stride 2, no lanes
 * wasted on 7x7 or 14x14 maps), and the [position][8] results are
 * transposed back into the 8 output planes, where the epilogue finds them
 * in L1. The transposes cost ~0.6 instructions per element against
 * KH*KW/8 * 2 for the arithmetic. Input dilation (the transposed-conv
 * form) runs a direct loop per output row and tap. Measurements: D28. */
#ifndef TSRT_CONV_DW_H
#define TSRT_CONV_DW_H

#ifndef TSRT_CONV_ARGS_H
#include "tsrt_conv_args.h"
#endif

/* ==== depthwise: channel vectors ============================================== */

/* Output positions per chunk (8 KiB of results: they and the output
 * planes they are transposed into stay in L1), and the tile budget in
 * floats (64 KiB, in L2): at 112 wide a chunk is 2 output rows, whose
 * tile is 4 rows (stride 1) or 5 (stride 2) of 113-114 positions; with
 * 16 KiB stride 2 fell to one output row per chunk and re-transposed a
 * third of its input (10-20% slower, D28). */
#define TSRT__DWC_POS 256
#define TSRT__DWC_TILE 16384

static int tsrt__dwc_applies(const tsrt_conv_args *v)
{
    return v->c == v->groups && v->ldil_h == 1 && v->ldil_w == 1;
}

/* GCC compiles the units without FMA contraction (-std=c11); the FMA
 * builtin, not <immintrin.h>, whose parsing costs ~0.3 s per unit. Clang
 * contracts `a += w * b` itself. */
#if defined(__FMA__) && defined(__GNUC__) && !defined(__clang__)
#define TSRT__FMA8(acc, w, b) ((acc) = __builtin_ia32_vfmaddps256((w), (b), (acc)))
#else
#define TSRT__FMA8(acc, w, b) ((acc) += (w) * (b))
#endif

/* An 8x8 transpose of r[0..7] in place: r[k][j] <-> r[j][k]. Its own
 * inverse, so it interleaves planes into [position][8] and back. */
#define TSRT__T8(r)                                                                                          \
    do {                                                                                                     \
        tsrt__v8 t_[8], s_[8];                                                                               \
        for (int k_ = 0; k_ < 8; k_ += 2) {                                                                  \
            t_[k_] = __builtin_shufflevector(r[k_], r[k_ + 1], 0, 8, 1, 9, 4, 12, 5, 13);                    \
            t_[k_ + 1] = __builtin_shufflevector(r[k_], r[k_ + 1], 2, 10, 3, 11, 6, 14, 7, 15);              \
        }                                                                                                    \
        for (int k_ = 0; k_ < 8; k_ += 4)                                                                    \
            for (int h_ = 0; h_ < 2; h_++) {                                                                 \
                s_[k_ + 2 * h_] = __builtin_shufflevector(t_[k_ + h_], t_[k_ + h_ + 2], 0, 1, 8, 9, 4, 5, 12, 13); \
                s_[k_ + 2 * h_ + 1] =                                                                        \
                    __builtin_shufflevector(t_[k_ + h_], t_[k_ + h_ + 2], 2, 3, 10, 11, 6, 7, 14, 15);       \
            }                                                                                                \
        for (int k_ = 0; k_ < 4; k_++) {                                                                     \
            r[k_] = __builtin_shufflevector(s_[k_], s_[k_ + 4], 0, 1, 2, 3, 8, 9, 10, 11);                   \
            r[k_ + 4] = __builtin_shufflevector(s_[k_], s_[k_ + 4], 4, 5, 6, 7, 12, 13, 14, 15);             \
        }                                                                                                    \
    } while (0)

static int64_t tsrt__dwc_ws_floats(const tsrt_conv_args *v);

/* Workspace bytes of the DEPTHWISE algorithm. */
static size_t tsrt__dw_ws_bytes(const tsrt_conv_args *v)
{
    return tsrt__dwc_applies(v) ? (size_t)tsrt__dwc_ws_floats(v) * sizeof(float) : 0;
}

/* The chunking: wp tile columns (padded input columns an output row
 * reads), rows output rows per chunk, trows tile rows they read. */
typedef struct tsrt__dwc {
    int64_t wp, rows, trows;
} tsrt__dwc;

static void tsrt__dwc_geom(const tsrt_conv_args *v, tsrt__dwc *g)
{
    const int64_t span_h = (v->kh - 1) * v->dil_h + 1;
    g->wp = (v->ow - 1) * v->stride_w + (v->kw - 1) * v->dil_w + 1;
    int64_t r = tsrt__min(v->oh, tsrt__max(1, TSRT__DWC_POS / v->ow));
    while (r > 1 && ((r - 1) * v->stride_h + span_h) * g->wp * 8 > TSRT__DWC_TILE) r--;
    g->rows = r;
    g->trows = (r - 1) * v->stride_h + span_h;
}

/* Workspace in floats: the tile, the results, the weight vectors. */
static int64_t tsrt__dwc_ws_floats(const tsrt_conv_args *v)
{
    tsrt__dwc g;
    tsrt__dwc_geom(v, &g);
    return g.trows * g.wp * 8 + g.rows * v->ow * 8 + v->kh * v->kw * 8 + 2 * TSRT_ALIGN / 4;
}

/* Tile rows t < trows <- input rows r0 + t of the planes at xc + poff[k]
 * for lanes k < nc (lanes >= nc zero); tile column jx holds input column
 * jx - pad_w. When
 * the tile holds the previous chunk of the same planes (shift > 0: its
 * rows start shift rows above r0), the rows both share are moved up
 * rather than transposed again (at 112x112, 2 of the 4 rows of a chunk). */
static void tsrt__dwc_load(const tsrt_conv_args *v, const float *xc, const int64_t *poff, int64_t nc, int64_t r0,
                           int64_t shift, const tsrt__dwc *g, float *T)
{
    const int64_t H = v->h, W = v->w, HW = H * W, wp = g->wp, pw = v->pad_w;
    const int64_t lo = tsrt__min(wp, tsrt__max(0, pw)), hi = tsrt__max(lo, tsrt__min(wp, W + pw));
    const int64_t kept = shift > 0 ? tsrt__max(0, g->trows - shift) : 0;
    if (kept) memmove(T, T + shift * wp * 8, sizeof(float) * 8 * (size_t)(kept * wp));
    for (int64_t t = kept; t < g->trows; t++) {
        float *d = T + t * wp * 8;
        const int64_t iy = r0 + t;
        if (iy < 0 || iy >= H) {
            memset(d, 0, sizeof(float) * 8 * (size_t)wp);
            continue;
        }
        memset(d, 0, sizeof(float) * 8 * (size_t)lo);
        memset(d + hi * 8, 0, sizeof(float) * 8 * (size_t)(wp - hi));
        const float *s = xc + iy * W - pw; /* s[jx] is column jx of channel 0 */
        int64_t jx = lo;
        /* 8 columns at a time, the last 8 ending at hi over some done
         * already (14- and 7-wide rows would otherwise be half scalar) */
        if (nc == 8 && hi - lo >= 8)
            for (;; jx += 8) {
                if (jx + 8 > hi) jx = hi - 8;
                tsrt__v8 r[8];
                for (int k = 0; k < 8; k++) TSRT__V8_LOAD(r[k], s + poff[k] + jx);
                TSRT__T8(r);
                for (int k = 0; k < 8; k++) TSRT__V8_STORE(d + (jx + k) * 8, r[k]);
                if (jx + 8 == hi) break;
            }
        else if (nc == 8 && hi > lo && iy * W + lo - pw + 8 <= HW) {
            /* a row narrower than 8 (7x7 maps): the 8 loads run on into
             * the plane's next row, and only the columns < hi are kept */
            tsrt__v8 r[8];
            for (int k = 0; k < 8; k++) TSRT__V8_LOAD(r[k], s + poff[k] + lo);
            TSRT__T8(r);
            for (int k = 0; k < hi - lo; k++) TSRT__V8_STORE(d + (lo + k) * 8, r[k]);
            jx = hi;
        }
        for (jx = nc == 8 && hi - lo >= 8 ? hi : jx; jx < hi; jx++)
            for (int64_t k = 0; k < 8; k++) d[jx * 8 + k] = k < nc ? s[poff[k] + jx] : 0.0f;
    }
}

/* Results O[p][8] for output rows [0, nrows) of the chunk from the tile:
 * 4 positions at a time (4 sums, 9 weight vectors in registers for 3x3).
 * Inlined with the geometry constant for the common cases. */
static inline __attribute__((always_inline)) void tsrt__dwc_rows(const float *T, int64_t wp, const tsrt__v8 *wv,
                                                                  int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                                                                  int64_t dh, int64_t dw, int64_t nrows, int64_t ow,
                                                                  float *O)
{
    for (int64_t i = 0; i < nrows; i++) {
        const float *tr = T + i * sh * wp * 8;
        float *o = O + i * ow * 8;
        int64_t j = 0;
        for (; j + 4 <= ow; j += 4) {
            tsrt__v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, b;
            for (int64_t u = 0; u < kh; u++)
                for (int64_t t = 0; t < kw; t++) {
                    const tsrt__v8 w = wv[u * kw + t];
                    const float *p = tr + (u * dh * wp + j * sw + t * dw) * 8;
                    TSRT__V8_LOAD(b, p);
                    TSRT__FMA8(a0, w, b);
                    TSRT__V8_LOAD(b, p + sw * 8);
                    TSRT__FMA8(a1, w, b);
                    TSRT__V8_LOAD(b, p + 2 * sw * 8);
                    TSRT__FMA8(a2, w, b);
                    TSRT__V8_LOAD(b, p + 3 * sw * 8);
                    TSRT__FMA8(a3, w, b);
                }
            TSRT__V8_STORE(o + j * 8, a0);
            TSRT__V8_STORE(o + j * 8 + 8, a1);
            TSRT__V8_STORE(o + j * 8 + 16, a2);
            TSRT__V8_STORE(o + j * 8 + 24, a3);
        }
        for (; j < ow; j++) {
            tsrt__v8 a = {0}, b;
            for (int64_t u = 0; u < kh; u++)
                for (int64_t t = 0; t < kw; t++) {
                    TSRT__V8_LOAD(b, tr + (u * dh * wp + j * sw + t * dw) * 8);
                    TSRT__FMA8(a, wv[u * kw + t], b);
                }
            TSRT__V8_STORE(o + j * 8, a);
        }
    }
}

/* The n results O[p][8] into the nc planes at y (plane stride `plane`),
 * added to what is there when beta. */
static void tsrt__dwc_store(const float *O, int64_t n, int64_t nc, float *y, int64_t plane, int beta)
{
    int64_t p = 0;
    /* without beta the last 8 may overlap the previous ones */
    const int over = nc == 8 && !beta && n >= 8;
    if (nc == 8)
        for (; p + 8 <= n || (over && p < n); p += 8) {
            if (p + 8 > n) p = n - 8;
            tsrt__v8 r[8];
            for (int k = 0; k < 8; k++) TSRT__V8_LOAD(r[k], O + (p + k) * 8);
            TSRT__T8(r);
            for (int k = 0; k < 8; k++) {
                float *d = y + k * plane + p;
                if (beta) {
                    tsrt__v8 old;
                    TSRT__V8_LOAD(old, d);
                    r[k] += old;
                }
                TSRT__V8_STORE(d, r[k]);
            }
        }
    for (p = over ? n : p; p < n; p++)
        for (int64_t k = 0; k < nc; k++) y[k * plane + p] = beta ? y[k * plane + p] + O[p * 8 + k] : O[p * 8 + k];
}

/* Threads split the (image, block of 8 output channels, chunk of rows)
 * units. With a channel multiplier m, lane k of the block starting at c0
 * reads input plane (c0 + k) / m. */
static void tsrt__conv_dwc(const tsrt_conv_args *v, int ith, int nth, void *ws)
{
    tsrt__dwc g;
    tsrt__dwc_geom(v, &g);
    const int64_t KK = v->kh * v->kw, OH = v->oh, OW = v->ow, plane = OH * OW, mult = v->o / v->groups;
    float *T = tsrt__align(ws), *O = tsrt__align(T + g.trows * g.wp * 8);
    tsrt__v8 *wv = (tsrt__v8 *)(void *)(O + g.rows * OW * 8);
    const int64_t nblk = tsrt__cdiv(v->o, 8), nchunk = tsrt__cdiv(OH, g.rows), units = v->n * nblk * nchunk;
    const int64_t u0 = units * ith / nth, u1 = units * (ith + 1) / nth;
    int64_t cur = -1, prev = -1; /* the weights' block; the unit in the tile */
    for (int64_t u = u0; u < u1; u++) {
        const int64_t ch = u % nchunk, blk = u / nchunk % nblk, im = u / nchunk / nblk;
        const int64_t c0 = blk * 8, nc = tsrt__min(8, v->o - c0);
        int64_t poff[8];
        for (int64_t k = 0; k < 8; k++) poff[k] = (tsrt__min(c0 + k, v->o - 1) / mult - c0 / mult) * v->h * v->w;
        if (blk != cur) {
            cur = blk;
            for (int64_t k = 0; k < KK; k++)
                for (int q = 0; q < 8; q++) wv[k][q] = q < nc ? v->wt[(c0 + q) * KK + k] : 0.0f;
        }
        const int64_t i0 = ch * g.rows, nr = tsrt__min(g.rows, OH - i0);
        const int64_t shift = prev == u - 1 && ch > 0 ? g.rows * v->stride_h : 0;
        tsrt__dwc_load(v, v->x + im * v->x_bs + c0 / mult * v->h * v->w, poff, nc, i0 * v->stride_h - v->pad_h, shift,
                       &g, T);
        prev = u;
        const int64_t kh = v->kh, kw = v->kw, sh = v->stride_h, sw = v->stride_w, dh = v->dil_h, dw = v->dil_w;
        /* 3x3: the weights in a local copy, which the compiler keeps in
         * registers (wv itself might alias the results as far as it knows) */
        tsrt__v8 w9[9];
        const int k33 = kh == 3 && kw == 3 && dh == 1 && dw == 1;
        if (k33) memcpy(w9, wv, sizeof w9);
        if (k33 && sh == 1 && sw == 1)
            tsrt__dwc_rows(T, g.wp, w9, 3, 3, 1, 1, 1, 1, nr, OW, O);
        else if (k33 && sh == 2 && sw == 2)
            tsrt__dwc_rows(T, g.wp, w9, 3, 3, 2, 2, 1, 1, nr, OW, O);
        else
            tsrt__dwc_rows(T, g.wp, wv, kh, kw, sh, sw, dh, dw, nr, OW, O);
        float *y = v->y + im * v->y_bs + c0 * plane + i0 * OW;
        tsrt__dwc_store(O, nr * OW, nc, y, plane, v->beta);
        tsrt__conv_epi(v, y, plane, im * v->o + c0, i0 * OW, nc, nr * OW);
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

/* The entry (tsrt_conv's DEPTHWISE). In the direct path threads split the
 * (plane, output row) pairs, planes = images x channels, into nth
 * contiguous ranges; the epilogue gets every finished run of rows of a
 * plane, at most TSRT__DW_EPI_FLOATS (16 KiB) at a time so it finds them
 * in L1. */
#define TSRT__DW_EPI_FLOATS 4096

static void tsrt__conv_dw(const tsrt_conv_args *v, int ith, int nth, void *ws)
{
    if (tsrt__dwc_applies(v)) {
        tsrt__conv_dwc(v, ith, nth, ws);
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
        const float *wp = v->wt + oc * v->kh * v->kw;
        for (int64_t i = i0; i < i1; i++) tsrt__dw_row_taps(v, xp, wp, yp + i * v->ow, i, 0, v->ow);
        tsrt__conv_epi(v, yp + i0 * v->ow, OH * v->ow, img * v->o + oc, i0 * v->ow, 1, (i1 - i0) * v->ow);
        u += i1 - i0;
    }
}

#endif /* TSRT_CONV_DW_H */
