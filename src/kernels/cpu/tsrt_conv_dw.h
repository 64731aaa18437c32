/* tsrt_conv_dw.h — depthwise convolution (DEPTHWISE: one input channel per
 * group, any channel multiplier), any kernel, stride and dilation. See
 * tsrt_conv.h.
 *
 * Without input dilation (every depthwise layer of MobileNet-like
 * networks) L output channels run at a time with the channels in the
 * vector lanes, as NCHWc layouts do (L = 16 on AVX-512, else 8): a chunk
 * of input rows of the L channels' input planes is transposed into a
 * zero-padded tile T[row][column][L], every output position is then
 * KH*KW multiply-adds of whole vectors (no border tests, no strided loads
 * at stride 2, no lanes wasted on 7x7 or 14x14 maps), and the
 * [position][L] results are transposed back into the L output planes,
 * where the epilogue finds them in L1. The transposes cost ~0.6
 * instructions per element against KH*KW/8 * 2 for the arithmetic. Input
 * dilation (the transposed-conv form) runs a direct loop per output row
 * and tap. Measurements: D28, D155. */
#ifndef TSRT_CONV_DW_H
#define TSRT_CONV_DW_H

#ifndef TSRT_CONV_ARGS_H
#include "tsrt_conv_args.h"
#endif

/* ==== depthwise: channel vectors ============================================== */

/* Positions per call of the epilogue callback (16 KiB: it finds them in L1). */
#define TSRT__DW_EPI_FLOATS 4096

/* Output positions per chunk (8-16 KiB of results: they and the output
 * planes they are transposed into stay in L1), and the tile budget in
 * positions (64 KiB of 8 lanes, in L2): at 112 wide a chunk is 2 output
 * rows, whose tile is 4 rows (stride 1) or 5 (stride 2) of 113-114
 * positions; with half the budget stride 2 fell to one output row per
 * chunk and re-transposed a third of its input (10-20% slower, D28). The
 * chunking does not depend on L, so the workspace the host sizes fits the
 * kernel whatever instruction set each was compiled for. */
#define TSRT__DWC_POS 256
#define TSRT__DWC_TILE 2048

static int tsrt__dwc_applies(const tsrt_conv_args *v)
{
    return v->c == v->groups && v->ldil_h == 1 && v->ldil_w == 1;
}

/* The channel vector: L lanes, its loads, stores, multiply-add and LxL
 * transpose. 16 lanes on AVX-512: half the multiply-adds, loads and
 * transposes per element of 8 (D155). The workspace is sized for the
 * widest (TSRT__DWL_MAX). */
#define TSRT__DWL_MAX 16
#if TSRT_ISA == TSRT_ISA_AVX512
#define TSRT__DWL 16
typedef __m512 tsrt__vdw;
#define TSRT__VDW_LOAD(v, p) ((v) = _mm512_loadu_ps(p))
#define TSRT__VDW_STORE(p, v) _mm512_storeu_ps((p), (v))
#define TSRT__FMADW(acc, w, b) ((acc) = _mm512_fmadd_ps((w), (b), (acc)))
#define TSRT__TDW(r) tsrt__t16(r)
#else
#define TSRT__DWL 8
typedef tsrt__v8 tsrt__vdw;
#define TSRT__VDW_LOAD TSRT__V8_LOAD
#define TSRT__VDW_STORE TSRT__V8_STORE
#define TSRT__FMADW TSRT__FMA8
#define TSRT__TDW TSRT__T8
#endif

static int64_t tsrt__dwc_ws_floats(const tsrt_conv_args *v);
static size_t tsrt__dwz_ws_bytes(const tsrt_conv_args *v);

/* Workspace bytes of the DEPTHWISE algorithm. */
static size_t tsrt__dw_ws_bytes(const tsrt_conv_args *v)
{
    const size_t z = tsrt__dwz_ws_bytes(v);
    if (z) return z;
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
    while (r > 1 && ((r - 1) * v->stride_h + span_h) * g->wp > TSRT__DWC_TILE) r--;
    g->rows = r;
    g->trows = (r - 1) * v->stride_h + span_h;
}

/* Workspace in floats: the tile, the results, the weight vectors and,
 * with one chunk per plane, the tile offsets of the input positions. */
static int64_t tsrt__dwc_ws_floats(const tsrt_conv_args *v)
{
    tsrt__dwc g;
    tsrt__dwc_geom(v, &g);
    const int64_t tab = g.rows >= v->oh ? v->h * v->w : 0;
    return (g.trows * g.wp + g.rows * v->ow + v->kh * v->kw) * TSRT__DWL_MAX + tab + 2 * TSRT_ALIGN / 4;
}

/* tab[y * W + x] <- the tile offset (floats) of input position (y, x) in
 * a tile of the whole plane (rows from -pad_h), or -1 when the tile does
 * not hold it. */
static void tsrt__dwc_tab(const tsrt_conv_args *v, const tsrt__dwc *g, int32_t *tab)
{
    const int64_t lo = tsrt__min(g->wp, tsrt__max(0, v->pad_w)), hi = tsrt__max(lo, tsrt__min(g->wp, v->w + v->pad_w));
    for (int64_t y = 0; y < v->h; y++)
        for (int64_t x = 0; x < v->w; x++) {
            const int64_t t = y + v->pad_h, jx = x + v->pad_w;
            tab[y * v->w + x] =
                t >= 0 && t < g->trows && jx >= lo && jx < hi ? (int32_t)((t * g->wp + jx) * TSRT__DWL) : -1;
        }
}

/* Tile rows t < trows <- input rows r0 + t of the planes at xc + poff[k]
 * (lanes k >= nc repeat the last plane: poff is clamped, so every lane's
 * loads read the input, and the zero weights of those lanes make their
 * sums unread garbage); tile column jx holds input column jx - pad_w.
 * When the tile holds the previous chunk of the same planes (shift > 0:
 * its rows start shift rows above r0), the rows both share are moved up
 * rather than transposed again (at 112x112, 2 of the 4 rows of a chunk). */
static void tsrt__dwc_load(const tsrt_conv_args *v, const float *xc, const int64_t *poff, int64_t r0, int64_t shift,
                           int zeroed, const int32_t *tab, const tsrt__dwc *g, float *T)
{
    enum { L = TSRT__DWL };
    const int64_t H = v->h, W = v->w, HW = H * W, wp = g->wp, pw = v->pad_w;
    if (tab && HW >= L) {
        /* the whole planes, L positions at a time across the ends of
         * rows, each put where tab says: rows narrower than L (3x3 and
         * 6x6 maps) went through the tile mostly element by element */
        for (int64_t p = 0;; p += L) {
            if (p + L > HW) p = HW - L;
            tsrt__vdw r[L];
            for (int k = 0; k < L; k++) TSRT__VDW_LOAD(r[k], xc + poff[k] + p);
            TSRT__TDW(r);
            for (int k = 0; k < L; k++)
                if (tab[p + k] >= 0) TSRT__VDW_STORE(T + tab[p + k], r[k]);
            if (p + L == HW) break;
        }
        return;
    }
#if TSRT_ISA == TSRT_ISA_AVX512
    if (tab) { /* planes of fewer than 16 positions (3x3 maps): one masked transpose */
        const __mmask16 m = (__mmask16)((1u << HW) - 1);
        tsrt__vdw r[L];
        for (int k = 0; k < L; k++) r[k] = _mm512_maskz_loadu_ps(m, xc + poff[k]);
        TSRT__TDW(r);
        for (int k = 0; k < HW; k++)
            if (tab[k] >= 0) TSRT__VDW_STORE(T + tab[k], r[k]);
        return;
    }
#endif
    const int64_t lo = tsrt__min(wp, tsrt__max(0, pw)), hi = tsrt__max(lo, tsrt__min(wp, W + pw));
    const int64_t kept = shift > 0 ? tsrt__max(0, g->trows - shift) : 0;
    if (kept) memmove(T, T + shift * wp * L, sizeof(float) * L * (size_t)(kept * wp));
    for (int64_t t = kept; t < g->trows; t++) {
        float *d = T + t * wp * L;
        const int64_t iy = r0 + t;
        if (iy < 0 || iy >= H) {
            if (!zeroed) memset(d, 0, sizeof(float) * L * (size_t)wp);
            continue;
        }
        if (!zeroed) {
            memset(d, 0, sizeof(float) * L * (size_t)lo);
            memset(d + hi * L, 0, sizeof(float) * L * (size_t)(wp - hi));
        }
        const float *s = xc + iy * W - pw; /* s[jx] is column jx of channel 0 */
        int64_t jx = lo;
        /* L columns at a time, the last L ending at hi over some done
         * already (14- and 7-wide rows would otherwise be half scalar) */
        if (hi - lo >= L)
            for (;; jx += L) {
                if (jx + L > hi) jx = hi - L;
                tsrt__vdw r[L];
                for (int k = 0; k < L; k++) TSRT__VDW_LOAD(r[k], s + poff[k] + jx);
                TSRT__TDW(r);
                for (int k = 0; k < L; k++) TSRT__VDW_STORE(d + (jx + k) * L, r[k]);
                if (jx + L == hi) break;
            }
#if TSRT_ISA == TSRT_ISA_AVX512
        else if (hi > lo) { /* a row narrower than 16: masked loads of its columns */
            const __mmask16 m = (__mmask16)((1u << (hi - lo)) - 1);
            tsrt__vdw r[L];
            for (int k = 0; k < L; k++) r[k] = _mm512_maskz_loadu_ps(m, s + poff[k] + lo);
            TSRT__TDW(r);
            for (int k = 0; k < hi - lo; k++) TSRT__VDW_STORE(d + (lo + k) * L, r[k]);
            jx = hi;
        }
#else
        else if (hi > lo && iy * W + lo - pw + L <= HW) {
            /* a row narrower than 8 (7x7 maps): the 8 loads run on into
             * the plane's next row, and only the columns < hi are kept */
            tsrt__vdw r[L];
            for (int k = 0; k < L; k++) TSRT__VDW_LOAD(r[k], s + poff[k] + lo);
            TSRT__TDW(r);
            for (int k = 0; k < hi - lo; k++) TSRT__VDW_STORE(d + (lo + k) * L, r[k]);
            jx = hi;
        }
#endif
        for (jx = hi - lo >= L ? hi : jx; jx < hi; jx++)
            for (int64_t k = 0; k < L; k++) d[jx * L + k] = s[poff[k] + jx];
    }
}

/* ceil(a / b) for b > 0 and any a. */
static inline int64_t tsrt__cdiv_any(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); }

/* The taps [*lo, *hi) of kernel extent k (dilation d) that read tile
 * index o + tap * d inside [vlo, vhi): the others read the zero padding. */
static inline void tsrt__dw_taps(int64_t o, int64_t k, int64_t d, int64_t vlo, int64_t vhi, int64_t *lo, int64_t *hi)
{
    if (d == 1) { /* no division: called per position (D137) */
        *lo = tsrt__max(0, vlo - o);
        *hi = tsrt__min(k, vhi - o);
        return;
    }
    *lo = tsrt__max(0, tsrt__cdiv_any(vlo - o, d));
    *hi = tsrt__min(k, tsrt__cdiv_any(vhi - o, d));
}

/* Results O[p][L] for output rows [0, nrows) of the chunk from the tile:
 * 4 positions at a time (4 sums, 9 weight vectors in registers for 3x3).
 * Inlined with the geometry constant for the common cases. With skip,
 * only the taps that read the input, not the tile's zero padding, are
 * summed: tile rows [rlo, rhi) and columns [clo, chi) hold input (a
 * zero times a finite weight adds nothing to a sum that starts at +0).
 * A 5x5 kernel on a 3x3 map reads padding at 16 of its 25 taps, and one
 * position per row is one dependent chain of FMAs (D135). */
static inline __attribute__((always_inline)) void tsrt__dwc_pos(const float *tr, int64_t wp, const tsrt__vdw *wv,
                                                                 int64_t kw, int64_t sw, int64_t dh, int64_t dw,
                                                                 int64_t j, int np, int64_t ulo, int64_t uhi,
                                                                 int64_t tlo, int64_t thi, float *o)
{
    enum { L = TSRT__DWL };
    tsrt__vdw a[8] = {{0}}, b;
    for (int64_t u = ulo; u < uhi; u++)
        for (int64_t t = tlo; t < thi; t++) {
            const tsrt__vdw w = wv[u * kw + t];
            const float *p = tr + (u * dh * wp + j * sw + t * dw) * L;
            for (int k = 0; k < np; k++) {
                TSRT__VDW_LOAD(b, p + k * sw * L);
                TSRT__FMADW(a[k], w, b);
            }
        }
    for (int k = 0; k < np; k++) TSRT__VDW_STORE(o + (j + k) * L, a[k]);
}

static inline __attribute__((always_inline)) void tsrt__dwc_rows(const float *T, int64_t wp, const tsrt__vdw *wv,
                                                                  int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                                                                  int64_t dh, int64_t dw, int64_t nrows, int64_t ow,
                                                                  float *O, int skip, int64_t rlo, int64_t rhi,
                                                                  int64_t clo, int64_t chi)
{
    for (int64_t i = 0; i < nrows; i++) {
        const float *tr = T + i * sh * wp * TSRT__DWL;
        float *o = O + i * ow * TSRT__DWL;
        int64_t ulo = 0, uhi = kh;
        if (skip) tsrt__dw_taps(i * sh, kh, dh, rlo, rhi, &ulo, &uhi);
        /* up to 4 positions at a time, each its own sum: the remainder
         * of a row too (a 3x3 map's rows are all remainder, and one
         * position at a time was one dependent chain of FMAs, D137) */
        for (int64_t j = 0; j < ow;) {
            const int np = (int)tsrt__min(ow - j >= 8 ? 8 : 4, ow - j);
            /* the columns any of the positions reads inside the input */
            int64_t tlo = 0, thi = kw, tllo = 0, tlhi = kw;
            if (skip) {
                tsrt__dw_taps((j + np - 1) * sw, kw, dw, clo, chi, &tllo, &tlhi);
                tsrt__dw_taps(j * sw, kw, dw, clo, chi, &tlo, &thi);
                tlo = tllo;
            }
            switch (np) {
            case 8: tsrt__dwc_pos(tr, wp, wv, kw, sw, dh, dw, j, 8, ulo, uhi, tlo, thi, o); break;
            case 4: tsrt__dwc_pos(tr, wp, wv, kw, sw, dh, dw, j, 4, ulo, uhi, tlo, thi, o); break;
            case 3: tsrt__dwc_pos(tr, wp, wv, kw, sw, dh, dw, j, 3, ulo, uhi, tlo, thi, o); break;
            case 2: tsrt__dwc_pos(tr, wp, wv, kw, sw, dh, dw, j, 2, ulo, uhi, tlo, thi, o); break;
            default: tsrt__dwc_pos(tr, wp, wv, kw, sw, dh, dw, j, 1, ulo, uhi, tlo, thi, o); break;
            }
            j += np;
        }
    }
}

/* The n results O[p][L] into the nc planes at y (plane stride `plane`),
 * added to what is there when beta. */
static void tsrt__dwc_store(const float *O, int64_t n, int64_t nc, float *y, int64_t plane, int beta)
{
    enum { L = TSRT__DWL };
#if TSRT_ISA == TSRT_ISA_AVX512
    /* L positions at a time, the last ones masked (a 3x3 map's 9) */
    for (int64_t p = 0; p < n; p += L) {
        const int64_t m = tsrt__min(L, n - p);
        const __mmask16 mk = (__mmask16)((1u << m) - 1);
        tsrt__vdw r[L];
        for (int k = 0; k < L; k++) {
            r[k] = _mm512_setzero_ps();
            if (k < m) TSRT__VDW_LOAD(r[k], O + (p + k) * L);
        }
        TSRT__TDW(r);
        for (int k = 0; k < nc; k++) {
            float *d = y + k * plane + p;
            if (beta) r[k] = _mm512_add_ps(r[k], _mm512_maskz_loadu_ps(mk, d));
            _mm512_mask_storeu_ps(d, mk, r[k]);
        }
    }
#else
    int64_t p = 0;
    /* without beta the last 8 may overlap the previous ones */
    const int over = !beta && n >= L;
    for (; p + L <= n || (over && p < n); p += L) {
        if (p + L > n) p = n - L;
        tsrt__vdw r[L];
        for (int k = 0; k < L; k++) TSRT__VDW_LOAD(r[k], O + (p + k) * L);
        TSRT__TDW(r);
        for (int k = 0; k < nc; k++) {
            float *d = y + k * plane + p;
            if (beta) {
                tsrt__vdw old;
                TSRT__VDW_LOAD(old, d);
                r[k] += old;
            }
            TSRT__VDW_STORE(d, r[k]);
        }
    }
    for (p = over ? n : p; p < n; p++)
        for (int64_t k = 0; k < nc; k++) y[k * plane + p] = beta ? y[k * plane + p] + O[p * L + k] : O[p * L + k];
#endif
}

/* Threads split the (block of L output channels, image, chunk of rows)
 * units, images inside blocks so that a block's weight vectors (KH*KW*L
 * scalar loads) are built once for all images: on small maps they cost
 * as much as the sums (D135). With a channel multiplier m, lane k of the
 * block starting at c0 reads input plane (c0 + k) / m. */
static void tsrt__conv_dwc(const tsrt_conv_args *v, int ith, int nth, void *ws)
{
    enum { L = TSRT__DWL };
    tsrt__dwc g;
    tsrt__dwc_geom(v, &g);
    const int64_t KK = v->kh * v->kw, OH = v->oh, OW = v->ow, plane = OH * OW, mult = v->o / v->groups;
    float *T = tsrt__align(ws), *O = tsrt__align(T + g.trows * g.wp * L);
    tsrt__vdw *wv = (tsrt__vdw *)(void *)(O + g.rows * OW * L);
    const int64_t nblk = tsrt__cdiv(v->o, L), nchunk = tsrt__cdiv(OH, g.rows), units = v->n * nblk * nchunk;
    const int64_t u0 = units * ith / nth, u1 = units * (ith + 1) / nth;
    int64_t cur = -1, prev = -1; /* the weights' block; the unit in the tile */
    /* One chunk per plane (maps of <= 256 outputs): every unit's tile has
     * its padding in the same places, so it is zeroed once here and the
     * loads write only the input (on a 3x3 map the ten memsets a tile
     * took cost as much as its sums, D137). */
    const int zeroed = nchunk == 1;
    int32_t *tab = zeroed ? (int32_t *)(void *)(wv + KK) : NULL;
    if (zeroed && u0 < u1) {
        memset(T, 0, sizeof(float) * L * (size_t)(g.trows * g.wp));
        tsrt__dwc_tab(v, &g, tab);
    }
    /* unit u's chunk, image and block, stepped rather than divided */
    int64_t ch = u0 % nchunk, im = u0 / nchunk % v->n, blk = u0 / nchunk / v->n;
    for (int64_t u = u0; u < u1; u++, ch++) {
        if (ch == nchunk) ch = 0, im++;
        if (im == v->n) im = 0, blk++;
        const int64_t c0 = blk * L, nc = tsrt__min(L, v->o - c0);
        int64_t poff[L];
        for (int64_t k = 0; k < L; k++) {
            const int64_t cl = tsrt__min(c0 + k, v->o - 1);
            poff[k] = (mult == 1 ? cl - c0 : cl / mult - c0 / mult) * v->h * v->w;
        }
        if (blk != cur) {
            cur = blk;
            for (int64_t k = 0; k < KK; k++)
                for (int q = 0; q < L; q++) wv[k][q] = q < nc ? v->wt[(c0 + q) * KK + k] : 0.0f;
        }
        const int64_t i0 = ch * g.rows, nr = tsrt__min(g.rows, OH - i0);
        const int64_t shift = prev == u - 1 && ch > 0 ? g.rows * v->stride_h : 0;
        tsrt__dwc_load(v, v->x + im * v->x_bs + c0 / mult * v->h * v->w, poff, i0 * v->stride_h - v->pad_h, shift,
                       zeroed, tab, &g, T);
        prev = u;
        const int64_t kh = v->kh, kw = v->kw, sh = v->stride_h, sw = v->stride_w, dh = v->dil_h, dw = v->dil_w;
        /* 3x3: the weights in a local copy, which the compiler keeps in
         * registers (wv itself might alias the results as far as it knows) */
        tsrt__vdw w9[9];
        const int k33 = kh == 3 && kw == 3 && dh == 1 && dw == 1;
        if (k33) memcpy(w9, wv, sizeof w9);
        else memset(w9, 0, sizeof w9);   /* unread, but the compiler cannot tell */
        /* the tile's rows and columns that hold input, not padding */
        const int64_t r0 = i0 * sh - v->pad_h, pw = v->pad_w;
        const int64_t rlo = tsrt__max(0, -r0), rhi = tsrt__min(g.trows, v->h - r0);
        const int64_t clo = tsrt__min(g.wp, tsrt__max(0, pw)), chi = tsrt__max(clo, tsrt__min(g.wp, v->w + pw));
        if (k33 && sh == 1 && sw == 1)
            tsrt__dwc_rows(T, g.wp, w9, 3, 3, 1, 1, 1, 1, nr, OW, O, 0, 0, 0, 0, 0);
        else if (k33 && sh == 2 && sw == 2)
            tsrt__dwc_rows(T, g.wp, w9, 3, 3, 2, 2, 1, 1, nr, OW, O, 0, 0, 0, 0, 0);
        else
            tsrt__dwc_rows(T, g.wp, wv, kh, kw, sh, sw, dh, dw, nr, OW, O, 1, rlo, rhi, clo, chi);
        float *y = v->y + im * v->y_bs + c0 * plane + i0 * OW;
        tsrt__dwc_store(O, nr * OW, nc, y, plane, v->beta);
        tsrt__conv_epi(v, y, plane, im * v->o + c0, i0 * OW, nc, nr * OW);
    }
}

/* ==== depthwise 3x3, AVX-512: positions in the lanes ========================== */

/* With 16 lanes, the channel-vector scheme above (8 channels, transposed
 * in and out) costs more than the multiply-adds on MobileNet's maps; this
 * one needs no transposes. Plane by plane, 16 output positions per vector:
 *   - stride 1 (output = input size): the positions of the flattened
 *     plane, p .. p+15, across row ends; tap (u, t) is the vector at
 *     p + (u-1)*W + (t-1), loaded with a mask that drops the lanes whose
 *     tap is padding (row 0 above, row H-1 below, column 0 left, column
 *     W-1 right): every lane is used on 7x7 and 14x14 maps too. The masks
 *     depend on p only: a table per call (tsrt__dwz_tab), shared by the
 *     planes;
 *   - stride 2: per output row, 16 outputs at a time; for each tap row
 *     and column the 32 input columns they span, in two masked loads,
 *     their even lanes taken by one shuffle.
 * Masked-off lanes read no memory (AVX-512 masked loads do not fault),
 * so nothing is read outside the plane, though a load's first lane may lie
 * up to W + 1 floats before it (the taps above and left of position 0).
 * The tile epilogue is applied in registers before the one (masked)
 * store; the callback gets the plane afterwards. Only 3x3, pad 1 at the
 * top and left, no dilation, channel multiplier 1 and the outputs of pad
 * 1 (every depthwise layer of MobileNet-like networks), stride 2 only onto
 * rows of 12 or more; others take the channel vectors. */
#if TSRT_ISA == TSRT_ISA_AVX512

static int tsrt__dwz_applies(const tsrt_conv_args *v)
{
#ifdef TSRT_NO_DWZ /* for comparisons: the channel vectors everywhere */
    return 0;
#endif
    if (v->c != v->groups || v->o != v->c || v->kh != 3 || v->kw != 3 || v->dil_h != 1 || v->dil_w != 1 ||
        v->ldil_h != 1 || v->ldil_w != 1 || v->pad_h != 1 || v->pad_w != 1 || v->stride_h != v->stride_w)
        return 0;
    /* stride 1 onto maps of <= 144 positions (12x12): the channel vectors
     * load whole planes (D137) and are faster (1152 channels 3x3 on 3x3,
     * 8 images: 59 against 88 us; 576 on 7x7: 95 against 126; 12x12
     * even; 14x14 142 against 211) */
    if (v->stride_h == 1) return v->oh == v->h && v->ow == v->w && v->h > 0 && v->w > 0 && v->h * v->w > 144;
    /* stride 2 onto rows of fewer than 12 (7x7 maps): most lanes of the one
     * vector per row idle, the channel vectors are faster (0.050 against
     * 0.065 ms for MobileNetV2's 576 channels 14x14 -> 7x7) */
    return v->stride_h == 2 && v->oh == (v->h - 1) / 2 + 1 && v->ow == (v->w - 1) / 2 + 1 && v->h > 0 &&
           v->ow >= 12;
}

/* Lanes [lo, hi) of 16 (none when hi <= lo). */
static inline __mmask16 tsrt__m16(int64_t lo, int64_t hi)
{
    lo = tsrt__max(lo, 0), hi = tsrt__min(hi, 16);
    return hi <= lo ? 0 : (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
}

/* The lanes of positions p .. p+15 (stride 1): in the plane, and of those
 * the ones whose left, right, upper, lower taps are inside it. */
typedef struct tsrt__dwz_m {
    __mmask16 in, l, r, t, b;
} tsrt__dwz_m;

static size_t tsrt__dwz_ws_bytes(const tsrt_conv_args *v)
{
    if (!tsrt__dwz_applies(v)) return 0;
    return (v->stride_h == 1 ? (size_t)tsrt__cdiv(v->h * v->w, 16) * sizeof(tsrt__dwz_m)
                             : (size_t)tsrt__cdiv(v->ow, 16) * 6 * sizeof(__mmask16)) +
           TSRT_ALIGN;
}

/* Built once per call by every part, so per vector, not per lane: a
 * lane loop with five tests per position took 14 us at 112x112, against
 * ~100 us for the whole 2-thread conv (D83). The lanes of row starts
 * (j = 0) and row ends (j = W - 1) follow from the first lane's column. */
static void tsrt__dwz_tab(int64_t H, int64_t W, tsrt__dwz_m *tab)
{
    const int64_t P = H * W;
    int64_t j0 = 0; /* the column of the vector's first position */
    for (int64_t c = 0; c < tsrt__cdiv(P, 16); c++) {
        const int64_t p0 = 16 * c;
        tsrt__dwz_m m;
        m.in = tsrt__m16(-p0, P - p0);
        m.t = tsrt__m16(W - p0, P - p0);
        m.b = tsrt__m16(-p0, P - W - p0);
        m.l = m.r = m.in;
        for (int64_t s = j0 ? W - j0 : 0; s < 16; s += W) m.l &= (__mmask16)~(1u << s);
        for (int64_t s = W - 1 - j0; s < 16; s += W) m.r &= (__mmask16)~(1u << s);
        tab[c] = m;
        for (j0 += 16; j0 >= W;) j0 -= W; /* no division (one subtraction when W >= 16) */
    }
}

/* The end of 16 positions at y (lanes `in`): the old values (beta), the
 * tile epilogue te (at this plane's row and these positions: tsrt__te_at)
 * in tsrt__te_tile's order of operations, the masked store. */
static inline __attribute__((always_inline)) void tsrt__dwz_put(__m512 q, float *y, __mmask16 in, int beta,
                                                                 const tsrt_tepi *te, __m512 rowb,
                                                                 const tsrt__zclamp *k, int64_t p)
{
    if (beta) q = _mm512_add_ps(q, _mm512_maskz_loadu_ps(in, y));
    if (te) {
        q = _mm512_add_ps(q, rowb);
        if (te->col) q = _mm512_add_ps(q, _mm512_maskz_loadu_ps(in, te->col + p));
        if (te->res) q = _mm512_add_ps(q, _mm512_maskz_loadu_ps(in, te->res + p));
        q = TSRT__ZCLAMP(k, q);
    }
    _mm512_mask_storeu_ps(y, in, q);
}

/* Software prefetch of the input, ahead of the masked loads, which the
 * hardware prefetcher did not follow on a Zen 5 core when the input had
 * just been written by the producing conv (`COLD=1
 * bench/conv_dw_mobilenetv2`: the input made dirty and evicted from L2
 * before each call; one thread):
 * MobileNetV2's 96 channels 112 -> 56 0.56-1.25 -> 0.19-0.21 ms, 32
 * channels at 112 stride 1 0.20-0.24 -> 0.17-0.18, 144 at 56 0.22-0.31
 * -> 0.18-0.20 (D64). Stride 1: the line 128 floats past the lowest tap
 * row's load; stride 2: at each output row, the two input rows that the
 * row after next starts on (past the plane: the next plane's). */
#define TSRT__DWZ_PF1 128

/* The 9 weights of a plane, tap (u, t) at w[3u + t]. */
typedef struct tsrt__dwz_w {
    __m512 w[9];
} tsrt__dwz_w;

/* Stride 1, the 16 positions at xp near the plane's first or last row:
 * every tap a masked load, which reads nothing outside the plane. */
static inline __attribute__((always_inline)) void tsrt__dwz_s1_edge(const float *xp, int64_t W, tsrt__dwz_m m,
                                                                     const tsrt__dwz_w *w, __m512 *out)
{
#define TSRT__DWZ_TAP(i, dx, mk)                                                                     \
    acc = _mm512_fmadd_ps(w->w[i], _mm512_maskz_loadu_ps((__mmask16)(mk), xp + (dx)), acc)
    __m512 acc = _mm512_setzero_ps();
    TSRT__DWZ_TAP(0, -W - 1, m.t & m.l);
    TSRT__DWZ_TAP(1, -W, m.t);
    TSRT__DWZ_TAP(2, -W + 1, m.t & m.r);
    TSRT__DWZ_TAP(3, -1, m.l);
    TSRT__DWZ_TAP(4, 0, m.in);
    TSRT__DWZ_TAP(5, 1, m.r);
    TSRT__DWZ_TAP(6, W - 1, m.b & m.l);
    TSRT__DWZ_TAP(7, W, m.b);
    TSRT__DWZ_TAP(8, W + 1, m.b & m.r);
#undef TSRT__DWZ_TAP
    *out = acc;
}

/* Stride 1, 16 positions whose taps all lie inside the plane: plain loads
 * (masked ones cost 27% of the kernel on a Zen 5 core with the input in
 * L2, D65), the left and right taps added only in the lanes whose column
 * has them (merge-masked multiply-adds), one partial sum per tap row (one
 * chain of 9 dependent multiply-adds held each vector 36 cycles). */
static inline __attribute__((always_inline)) void tsrt__dwz_s1_inner(const float *xp, int64_t W, tsrt__dwz_m m,
                                                                      const tsrt__dwz_w *w, __m512 *out)
{
    __m512 a0 = _mm512_mul_ps(w->w[1], _mm512_loadu_ps(xp - W));
    __m512 a1 = _mm512_mul_ps(w->w[4], _mm512_loadu_ps(xp));
    __m512 a2 = _mm512_mul_ps(w->w[7], _mm512_loadu_ps(xp + W));
    a0 = _mm512_mask3_fmadd_ps(w->w[0], _mm512_loadu_ps(xp - W - 1), a0, m.l);
    a1 = _mm512_mask3_fmadd_ps(w->w[3], _mm512_loadu_ps(xp - 1), a1, m.l);
    a2 = _mm512_mask3_fmadd_ps(w->w[6], _mm512_loadu_ps(xp + W - 1), a2, m.l);
    a0 = _mm512_mask3_fmadd_ps(w->w[2], _mm512_loadu_ps(xp - W + 1), a0, m.r);
    a1 = _mm512_mask3_fmadd_ps(w->w[5], _mm512_loadu_ps(xp + 1), a1, m.r);
    a2 = _mm512_mask3_fmadd_ps(w->w[8], _mm512_loadu_ps(xp + W + 1), a2, m.r);
    *out = _mm512_add_ps(_mm512_add_ps(a0, a1), a2);
}

/* Stride 2, one input row xr: tap t reads columns 2*j0 + t - 1 + 2l, the
 * even lanes of the 32 columns from 2*j0 + t - 1 (masks mk[2t], mk[2t+1]:
 * the columns inside the row). */
#define TSRT__DWZ_S2(xr, t, wt_)                                                                     \
    do {                                                                                             \
        const float *xt_ = (xr) + 2 * j0 + (t) - 1;                                                  \
        const __m512 a0_ = _mm512_maskz_loadu_ps(mk[2 * (t)], xt_);                                  \
        const __m512 a1_ = _mm512_maskz_loadu_ps(mk[2 * (t) + 1], xt_ + 16);                         \
        acc = _mm512_fmadd_ps(wt_,                                                                   \
                              __builtin_shufflevector(a0_, a1_, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, \
                                                      22, 24, 26, 28, 30),                           \
                              acc);                                                                  \
    } while (0)
#define TSRT__DWZ_ROW2(xr, wa, wb, wc)                                                               \
    do {                                                                                             \
        TSRT__DWZ_S2(xr, 0, wa);                                                                     \
        TSRT__DWZ_S2(xr, 1, wb);                                                                     \
        TSRT__DWZ_S2(xr, 2, wc);                                                                     \
    } while (0)

static void tsrt__conv_dwz(const tsrt_conv_args *v, int ith, int nth, void *ws)
{
    const int64_t H = v->h, W = v->w, OH = v->oh, OW = v->ow, P = OH * OW, O = v->o;
    const int64_t planes = v->n * O, pl0 = planes * ith / nth, pl1 = planes * (ith + 1) / nth;
    if (pl0 >= pl1) return;
    tsrt__dwz_m *tab = (tsrt__dwz_m *)tsrt__align(ws);
    __mmask16 *tab2 = (__mmask16 *)tsrt__align(ws);
    if (v->stride_h == 1)
        tsrt__dwz_tab(H, W, tab);
    else /* per 16 outputs of a row and tap column: the masks of its two loads */
        for (int64_t c = 0; c < tsrt__cdiv(OW, 16); c++)
            for (int t = 0; t < 3; t++) {
                const int64_t b = 32 * c + t - 1;
                tab2[6 * c + 2 * t] = tsrt__m16(-b, W - b);
                tab2[6 * c + 2 * t + 1] = tsrt__m16(-b - 16, W - b - 16);
            }
    /* an absent term changes nothing (x + -0 = x) */
    const tsrt_tepi *te0 = v->te;
    tsrt__zclamp k;
    tsrt__zclamp_set(&k, te0);
    for (int64_t pl = pl0; pl < pl1; pl++) {
        const int64_t img = pl / O, o = pl % O;
        const float *x = v->x + img * v->x_bs + o * H * W;
        float *y = v->y + img * v->y_bs + o * P;
        const float *wt = v->wt + o * 9;
        const __m512 w00 = _mm512_set1_ps(wt[0]), w01 = _mm512_set1_ps(wt[1]), w02 = _mm512_set1_ps(wt[2]);
        const __m512 w10 = _mm512_set1_ps(wt[3]), w11 = _mm512_set1_ps(wt[4]), w12 = _mm512_set1_ps(wt[5]);
        const __m512 w20 = _mm512_set1_ps(wt[6]), w21 = _mm512_set1_ps(wt[7]), w22 = _mm512_set1_ps(wt[8]);
        tsrt_tepi te;
        if (te0) te = tsrt__te_at(te0, img * O + o, 0);
        const __m512 rowb = _mm512_set1_ps(te0 && te.row ? te.row[0] : -0.0f);
        if (v->stride_h == 1) {
            const tsrt__dwz_w wz = {{w00, w01, w02, w10, w11, w12, w20, w21, w22}};
            /* the vectors whose taps all lie inside the plane: [c_lo, c_hi) */
            const int64_t nv = tsrt__cdiv(P, 16), c_lo = tsrt__min(nv, tsrt__cdiv(W + 1, 16));
            const int64_t c_hi = tsrt__max(c_lo, P - W - 17 >= 0 ? tsrt__min(nv, (P - W - 17) / 16 + 1) : 0);
#define TSRT__DWZ_S1_RUN(c0, c1, inner)                                                              \
    for (int64_t c = (c0); c < (c1); c++) {                                                          \
        const tsrt__dwz_m m = tab[c];                                                                \
        const float *xp = x + c * 16;                                                                \
        __builtin_prefetch(xp + W + TSRT__DWZ_PF1, 0, 3);                                            \
        __m512 acc;                                                                                  \
        if (inner) tsrt__dwz_s1_inner(xp, W, m, &wz, &acc);                                          \
        else tsrt__dwz_s1_edge(xp, W, m, &wz, &acc);                                                 \
        tsrt__dwz_put(acc, y + c * 16, m.in, v->beta, te0 ? &te : NULL, rowb, &k, c * 16);           \
    }
            TSRT__DWZ_S1_RUN(0, c_lo, 0)
            TSRT__DWZ_S1_RUN(c_lo, c_hi, 1)
            TSRT__DWZ_S1_RUN(c_hi, nv, 0)
#undef TSRT__DWZ_S1_RUN
        } else {
            for (int64_t i = 0; i < OH; i++) {
                /* input rows 2i-1 (padding for i = 0), 2i, 2i+1 (padding past H) */
                const float *x1 = x + 2 * i * W, *x0 = i > 0 ? x1 - W : NULL, *x2 = 2 * i + 1 < H ? x1 + W : NULL;
                for (int64_t l = 0; l < 2 * W; l += 16) __builtin_prefetch(x1 + 4 * W + l, 0, 3);
                for (int64_t c = 0; c < tsrt__cdiv(OW, 16); c++) {
                    const __mmask16 *mk = tab2 + 6 * c;
                    const int64_t j0 = 16 * c;
                    __m512 acc = _mm512_setzero_ps();
                    if (x0) TSRT__DWZ_ROW2(x0, w00, w01, w02);
                    TSRT__DWZ_ROW2(x1, w10, w11, w12);
                    if (x2) TSRT__DWZ_ROW2(x2, w20, w21, w22);
                    const int64_t p = i * OW + j0;
                    tsrt__dwz_put(acc, y + p, tsrt__m16(0, OW - j0), v->beta, te0 ? &te : NULL, rowb, &k, p);
                }
            }
        }
        if (v->epi)
            for (int64_t p = 0; p < P; p += TSRT__DW_EPI_FLOATS)
                v->epi(v->epi_ctx, y + p, P, 1, img * O + o, p, 1, tsrt__min(TSRT__DW_EPI_FLOATS, P - p));
    }
}
#undef TSRT__DWZ_S2
#undef TSRT__DWZ_ROW2

#else
static size_t tsrt__dwz_ws_bytes(const tsrt_conv_args *v)
{
    (void)v;
    return 0;
}
#endif

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
static void tsrt__conv_dw(const tsrt_conv_args *v, int ith, int nth, void *ws)
{
#if TSRT_ISA == TSRT_ISA_AVX512
    if (tsrt__dwz_applies(v)) {
        tsrt__conv_dwz(v, ith, nth, ws);
        return;
    }
#endif
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
