/* tsrt_conv_ptp.h — GEMM_T without AVX-512: positions as the rows of
 * the plain GEMM's 6 x 16 micro-kernel, their X' packed once per run.
 *
 * On a map of few positions the plain GEMM paths waste the columns of
 * their 16-position panels (a 3x3 map: 9 of 16; 6x6: 36 of 48) and, with
 * A read in place, stream the weights as six rows a K apart. Here, as in
 * AVX-512's GEMM_T (tsrt_conv_pt.h), Y^T = X'^T W^T:
 *   - W^T is packed once per program into panels of 16 output channels,
 *     K x 16 floats each (tsrt__pt_pack, NR = 16): the micro-kernel's
 *     packed-B layout, one contiguous stream;
 *   - the rows of a tile are 6 positions (a last one of up to 4 runs the
 *     4-row kernel: 9 positions are 6 + 4 rows, not 16 columns); their
 *     X'^T rows are packed once per run of tiles (the kernel's packed-A
 *     layout, X'[k][pos] gathered through the phase copy's offsets off[k],
 *     D41) and read by every panel: a pack costs about 8/O of the
 *     multiply-adds, where AVX2 cannot keep 6 positions' offsets in
 *     registers to read X' in place as the 14-row AVX-512 kernel does;
 *   - panels outer, tiles inner: a panel (61 KiB at K = 960) stays in L2
 *     while the run's tiles pass it;
 *   - a tile is computed into a stack tile and stored transposed (channel
 *     o's positions are a row of Y), with beta, then the tile epilogue on
 *     the stored block (tsrt__te_tile, the same order of operations);
 *   - on small maps a run's tiles span several images (tsrt__pt_fold: a
 *     3x3 map at batch 8 is 72 positions, 12 full tiles).
 * The micro-kernels read B with aligned loads: W^T (args->wu) must be
 * TSRT_ALIGN-aligned, as a program's prepared weights are (the header of
 * 16 floats after a page-aligned buffer); tsrt_conv refuses it otherwise.
 * Measured and bounded in D184 (docs/decisions.md). */
#ifndef TSRT_CONV_PTP_H
#define TSRT_CONV_PTP_H

#ifndef TSRT_CONV_PT_H
#include "tsrt_conv_pt.h"
#endif

#if TSRT_ISA != TSRT_ISA_AVX512

/* Bytes of packed X'^T per run of tiles (a chunk's tiles are read by
 * every panel: in L2 with the panel). */
#ifndef TSRT_PTP_PACK_BYTES
#define TSRT_PTP_PACK_BYTES (192 * 1024)
#endif

/* Rows of the kernel that runs a last tile of r < 6 positions: the 4-row
 * one where it exists and they fit, else the 6-row one (rows past r
 * repeat the last position and are not stored). */
static inline int64_t tsrt__ptp_h(int64_t r)
{
#ifdef TSRT_HAVE_UKRH
    if (r <= 4) return 4;
#endif
    (void)r;
    return TSRT_MR;
}

/* Tiles of a run of PT positions: full tiles of MR, then the remainder. */
static inline int64_t tsrt__ptp_tiles(int64_t PT)
{
    return tsrt__cdiv(PT, TSRT_MR);
}

/* Tiles of the run packed at once. */
static inline int64_t tsrt__ptp_chunk(int64_t K)
{
    return tsrt__max(1, TSRT_PTP_PACK_BYTES / (TSRT_MR * tsrt__max(K, 1) * (int64_t)sizeof(float)));
}

/* Floats from one image's input to the next in the run (its phase copy
 * or the image read in place). */
typedef struct tsrt__ptp_run {
    const tsrt_conv_args *v;
    const ptrdiff_t *off;
    const float *xq; /* the run's first image (copy or in place) */
    int64_t F, P, OW, Wq, K;
} tsrt__ptp_run;

/* Position gi of the run (image gi / P) in its phase image, relative to xq. */
static inline int64_t tsrt__ptp_at(const tsrt__ptp_run *r, int64_t gi)
{
    const int64_t p = gi % r->P;
    return gi / r->P * r->F + p / r->OW * r->Wq + p % r->OW;
}

/* Tiles [t0, t1) of a run of PT positions packed at pa: tile t at
 * pa + (t - t0) * MR * K, h rows wide (tsrt__ptp_h), pa[k*h + i] =
 * X'[k][position 6t + i], rows past the run's end repeating its last. */
static void tsrt__ptp_pack(const tsrt__ptp_run *r, int64_t PT, int64_t t0, int64_t t1, float *restrict pa)
{
    const int64_t K = r->K;
    const ptrdiff_t *restrict off = r->off;
    for (int64_t t = t0; t < t1; t++, pa += TSRT_MR * K) {
        const int64_t p0 = t * TSRT_MR, mr = tsrt__min(TSRT_MR, PT - p0);
        const int64_t h = mr == TSRT_MR ? TSRT_MR : tsrt__ptp_h(mr);
        const float *s[TSRT_MR];
        for (int64_t i = 0; i < h; i++) s[i] = r->xq + tsrt__ptp_at(r, p0 + tsrt__min(i, mr - 1));
        if (h == TSRT_MR)
            for (int64_t k = 0; k < K; k++)
                for (int i = 0; i < TSRT_MR; i++) pa[k * TSRT_MR + i] = s[i][off[k]];
        else
            for (int64_t k = 0; k < K; k++)
                for (int i = 0; i < 4; i++) pa[k * 4 + i] = s[i][off[k]];
    }
}

/* The first n (1 to 8) lanes of a vector to or from memory; the rest
 * of a loaded vector zero (through pointers: a vector passed by value
 * changes the ABI without AVX, -Wpsabi). A switch of constant-size copies: a tile's
 * segments are 6 positions but at a run's or an image's end. */
#define TSRT__PTP_N(C) C(1) C(2) C(3) C(4) C(5) C(6) C(7) C(8)
static inline void tsrt__ptp_mv(void *d, const void *s, int64_t n)
{
    switch (n) {
#define TSRT__C(k)                                                                                                   \
    case k: memcpy(d, s, k * sizeof(float)); break;
        TSRT__PTP_N(TSRT__C)
#undef TSRT__C
    default: break;
    }
}
static inline void tsrt__ptp_st(float *p, const tsrt__v8 *v, int64_t n) { tsrt__ptp_mv(p, v, n); }
static inline void tsrt__ptp_ld(tsrt__v8 *v, const float *p, int64_t n)
{
#if TSRT_ISA == TSRT_ISA_AVX2
    /* a masked load: the copy's two pieces, read back as one vector, do
     * not forward */
    TSRT__V8_LOAD_IN(*v, p, 0, 0, n);
#else
    *v = (tsrt__v8){0};
    tsrt__ptp_mv(v, p, n);
#endif
}
#undef TSRT__PTP_N

/* Halves and quarters of a vector (tsrt__ptp_put6's 6-float stores). */
typedef float tsrt__v4f __attribute__((vector_size(16)));
typedef float tsrt__v2f __attribute__((vector_size(8)));

/* Rows [s, s + len) of stack tile t (positions x 16 channels) into Y at
 * y (channel 0 of the panel, the segment's first position; channel o's
 * row at y + o*P), nr channels: per 8 channels an 8x8 transpose, then
 * per channel beta's old values and te (at the segment's origin, or
 * NULL) in tsrt__te_tile's order of operations, the same bits (max and
 * min as tsrt__v8_clamp's). */
static void tsrt__ptp_put(const float *restrict t, int64_t s, int64_t len, float *restrict y, int64_t P, int64_t nr,
                          int beta, const tsrt_tepi *te)
{
    tsrt__v8 col = (tsrt__v8){0} - 0.0f, lo, hi, z;
    tsrt__te_bounds(te, &lo, &hi, &z);
    if (te && te->col) tsrt__ptp_ld(&col, te->col, len);
    for (int64_t h = 0; 8 * h < nr; h++) {
        tsrt__v8 r[8];
        for (int64_t i = 0; i < 8; i++) TSRT__V8_LOAD(r[i], t + tsrt__min(s + i, TSRT_MR - 1) * TSRT_NR + 8 * h);
        TSRT__T8(r);
        for (int64_t j = 0; j < 8 && 8 * h + j < nr; j++) {
            const int64_t o = 8 * h + j;
            float *yo = y + o * P;
            tsrt__v8 q = r[j], u;
            if (beta) tsrt__ptp_ld(&u, yo, len), q += u;
            if (te) {
                q += te->row ? te->row[o] : -0.0f;
                q += col;
                if (te->res) tsrt__ptp_ld(&u, te->res + o * te->res_rs, len), q += u;
                tsrt__v8_clamp(&q, &lo, &hi, &z);
            }
            tsrt__ptp_st(yo, &q, len);
        }
    }
}

/* A full tile of one image, with no beta and no position term: the
 * channel term is the tile's column term (a last panel's padded to 16 on
 * the stack: the kernel reads all 16), so the micro-kernel applies it
 * (and the clamp, without a residual) in registers, in tsrt__te_tile's
 * order (the absent row term adds -0, which changes nothing); the store
 * is two transposes and 16 rows of 6 positions, the residual and then
 * the clamp added there. The general store (tsrt__ptp_put: its epilogue
 * per channel, partial stores of any length) ran ~960 instructions per
 * tile against the kernel's ~1450 at K = 64 (callgrind): 38% of a 1x1
 * conv's time on 6x6 maps (D188). */
static inline int tsrt__ptp_fast(const tsrt_conv_args *v, int64_t mr, int64_t len)
{
    return mr == TSRT_MR && len == TSRT_MR && !v->beta && (!v->te || !v->te->col);
}

/* nr channels of the 6 x 16 stack tile t into Y at y (channel o's 6
 * positions at y + o*P), with res (channel o's at res + o*res_rs, or
 * NULL) added and then te's clamp (NULL: none). */
static void tsrt__ptp_put6(const float *restrict t, float *restrict y, int64_t P, int64_t nr, const float *res,
                           ptrdiff_t res_rs, const tsrt_tepi *te)
{
    tsrt__v8 lo, hi, z;
    tsrt__te_bounds(te, &lo, &hi, &z);
    for (int h = 0; 8 * h < nr; h++) {
        tsrt__v8 r[8];
        for (int i = 0; i < 8; i++) TSRT__V8_LOAD(r[i], t + (i < TSRT_MR ? i : TSRT_MR - 1) * TSRT_NR + 8 * h);
        TSRT__T8(r);
        for (int j = 0; j < 8 && 8 * h + j < nr; j++) {
            const int64_t o = 8 * h + j;
            float *yo = y + o * P;
            if (res) {
                tsrt__v8 u;
                tsrt__ptp_ld(&u, res + o * res_rs, TSRT_MR);
                r[j] += u;
            }
            if (te) tsrt__v8_clamp(&r[j], &lo, &hi, &z);
            const tsrt__v4f l4 = __builtin_shufflevector(r[j], r[j], 0, 1, 2, 3);
            const tsrt__v2f h2 = __builtin_shufflevector(r[j], r[j], 4, 5);
            memcpy(yo, &l4, sizeof l4);
            memcpy(yo + 4, &h2, sizeof h2);
        }
    }
}

/* Tile t of the run (packed at pa) times panel q into Y: stored per
 * image it spans, then the tile epilogue on each stored block. */
static void tsrt__ptp_tile(const tsrt__ptp_run *r, int64_t i0, int64_t PT, int64_t t, const float *pa, int64_t q)
{
    const tsrt_conv_args *v = r->v;
    const int64_t K = r->K, P = r->P, O = v->o, o0 = q * TSRT_NR, nr = tsrt__min(TSRT_NR, O - o0);
    const int64_t p0 = t * TSRT_MR, mr = tsrt__min(TSRT_MR, PT - p0);
    const float *b = v->wu + q * K * TSRT_NR;
    float tb[TSRT_MR * TSRT_NR] __attribute__((aligned(TSRT_ALIGN)));
#ifdef TSRT_HAVE_UKRH
    if (mr < TSRT_MR && tsrt__ptp_h(mr) == 4) tsrt__ukrh(4, K, pa, 0, b, tb, TSRT_NR, 0, NULL);
    else
#endif
    if (tsrt__ptp_fast(v, mr, tsrt__min(mr, P - p0 % P))) {
        const int64_t img = i0 + p0 / P;
        const int64_t p = p0 % P;
        const float *res = v->te && v->te->res ? v->te->res + (img * O + o0) * v->te->res_rs + p : NULL;
        tsrt_tepi tt;
        float cb[TSRT_NR] __attribute__((aligned(TSRT_ALIGN))); /* a last panel's channel terms, padded */
        if (v->te) {
            tt = *v->te;
            tt.col = tt.row ? tt.row + img * O + o0 : NULL;
            if (tt.col && nr < TSRT_NR) {
                for (int64_t j = 0; j < TSRT_NR; j++) cb[j] = j < nr ? tt.col[j] : 0.0f;
                tt.col = cb;
            }
            tt.row = NULL, tt.res = NULL;
            if (res) tt.clamp = 0; /* after the residual, in the store */
        }
        tsrt__ukr_full(K, pa, b, tb, TSRT_NR, 0, v->te ? &tt : NULL);
        tsrt__ptp_put6(tb, v->y + img * v->y_bs + o0 * P + p, P, nr, res, res ? v->te->res_rs : 0,
                       res && v->te->clamp ? v->te : NULL);
        return;
    } else
        tsrt__ukr_full(K, pa, b, tb, TSRT_NR, 0, NULL);
    for (int64_t s = 0; s < mr;) {
        const int64_t gi = p0 + s, img = i0 + gi / P, p = gi % P, len = tsrt__min(mr - s, P - p);
        float *y = v->y + img * v->y_bs + o0 * P + p;
        tsrt_tepi te;
        if (v->te) te = tsrt__te_at(v->te, img * O + o0, p);
        tsrt__ptp_put(tb, s, len, y, P, nr, v->beta, v->te ? &te : NULL);
        s += len;
    }
}

/* The callback on positions [g0, g1) of the run, panel q: one block per
 * image. */
static void tsrt__ptp_epi(const tsrt__ptp_run *r, int64_t i0, int64_t g0, int64_t g1, int64_t q)
{
    const tsrt_conv_args *v = r->v;
    const int64_t P = r->P, O = v->o, o0 = q * TSRT_NR, nr = tsrt__min(TSRT_NR, O - o0);
    for (int64_t gi = g0; gi < g1;) {
        const int64_t img = i0 + gi / P, p = gi % P, len = tsrt__min(g1 - gi, P - p);
        v->epi(v->epi_ctx, v->y + img * v->y_bs + o0 * P + p, P, 1, img * O + o0, p, nr, len);
        gi += len;
    }
}

/* Workspace: off, the phase copies of a run (one per image), the packed
 * tiles; each part aligned. */
static size_t tsrt__ptp_ws(const tsrt_conv_args *v, int64_t G)
{
    tsrt__phx g;
    tsrt__phx_geom(v, &g);
    size_t off_bytes, phx_bytes;
    tsrt__conv_gemm_ws(v, &off_bytes, &phx_bytes);
    const int64_t F = tsrt__rup(tsrt__phx_floats(&g), 16);
    const size_t copies = g.copy ? (size_t)(G * F) * sizeof(float) : 0;
    const int64_t K = tsrt__pt_k(v);
    const size_t pack = (size_t)(tsrt__min(tsrt__ptp_chunk(K), tsrt__ptp_tiles(G * v->oh * v->ow)) * TSRT_MR * K) *
                        sizeof(float);
    return off_bytes + copies + pack + 3 * TSRT_ALIGN;
}

/* The conv: this thread's images (in runs of G, tsrt__pt_fold), panels
 * [q0, q1) and tiles [t0, t1) of each run (split as tsrt__conv_pt on
 * AVX-512 splits them: whole images where the batch allows, else the
 * panels, or the tiles where the input outweighs the weights); per run
 * its phase copies, then chunks of tiles packed and swept by the panels. */
static void tsrt__conv_pt(const tsrt_conv_args *v, int ith, int nth, void *ws)
{
    const int64_t K = tsrt__pt_k(v), O = v->o, OW = v->ow, P = v->oh * OW;
    const int64_t np = tsrt__cdiv(O, TSRT_NR), G = tsrt__pt_fold(v);
    tsrt__phx g;
    tsrt__phx_geom(v, &g);
    const int64_t F = g.copy ? tsrt__rup(tsrt__phx_floats(&g), 16) : v->x_bs;
    const int64_t ntr = tsrt__ptp_tiles(G * P); /* tiles of a full run */
    int64_t n[2] = {0, v->n}, q[2] = {0, np}, t[2] = {0, ntr};
    const int x_big = (g.copy ? tsrt__phx_floats(&g) : v->c * v->h * v->w) > K * O;
    tsrt__pt_share(v, np, ntr, x_big, G == 1, ith, nth, n, q, t); /* tiles first only in runs of one image */
    const int64_t n0 = n[0], n1 = n[1], q0 = q[0], q1 = q[1], t0 = t[0], t1 = t[1];
    if (n0 >= n1 || q0 >= q1 || t0 >= t1) return;
    size_t off_bytes, phx_bytes;
    tsrt__conv_gemm_ws(v, &off_bytes, &phx_bytes);
    ptrdiff_t *off = (ptrdiff_t *)(void *)tsrt__align(ws);
    tsrt__phx_offsets(&g, off);
    float *copies = tsrt__align((char *)ws + off_bytes);
    float *pa = tsrt__align((char *)copies + (g.copy ? (size_t)(G * F) * sizeof(float) : 0));
    const int64_t TC = tsrt__ptp_chunk(K);
    tsrt__ptp_run r = {v, off, NULL, F, P, OW, g.Wq, K};
    for (int64_t i0 = n0; i0 < n1; i0 += G) {
        const int64_t gn = tsrt__min(G, n1 - i0), PT = gn * P;
        const int64_t ta = t0, tb = tsrt__min(t1, tsrt__ptp_tiles(PT));
        if (ta >= tb) continue;
        if (g.copy) {
            /* the phase rows the tiles read: a thread's share of one
             * image's tiles, its output rows and the taps below */
            int64_t r0 = 0, r1 = g.Hq;
            if (gn == 1) {
                r0 = ta * TSRT_MR / OW;
                r1 = tsrt__min((tsrt__min(tb * TSRT_MR, P) - 1) / OW + 1 + (v->kh - 1) * v->dil_h / v->stride_h,
                               g.Hq);
            }
            for (int64_t b = 0; b < gn; b++) {
                g.buf = copies + b * F;
                tsrt__phx_copy(&g, v->x + (i0 + b) * v->x_bs, r0, r1);
            }
            r.xq = copies;
        } else
            r.xq = v->x + i0 * v->x_bs;
        for (int64_t c0 = ta; c0 < tb; c0 += TC) {
            const int64_t c1 = tsrt__min(tb, c0 + TC);
            tsrt__ptp_pack(&r, PT, c0, c1, pa);
            for (int64_t q = q0; q < q1; q++) {
                for (int64_t t = c0; t < c1; t++) tsrt__ptp_tile(&r, i0, PT, t, pa + (t - c0) * TSRT_MR * K, q);
                if (v->epi) tsrt__ptp_epi(&r, i0, c0 * TSRT_MR, tsrt__min(c1 * TSRT_MR, PT), q);
            }
        }
    }
}

#endif /* TSRT_ISA != TSRT_ISA_AVX512 */

#endif /* TSRT_CONV_PTP_H */
