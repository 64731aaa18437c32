/* tsrt_gemm_amx.h — fp32 GEMM on Intel AMX: against a pre-packed B (D76), or a B split per call (D77).
 *
 * AMX multiplies bf16 tiles into fp32 accumulators, 16 times the
 * multiply-adds per cycle of AVX-512's two FMA pipes. An fp32 value splits
 * exactly into three bf16 pieces, x = hi + mid + lo (8 significand bits
 * each, every piece rounded to nearest, so |mid| <= 2^-8 |x| and |lo| <=
 * 2^-16 |x|). A product a·b is then the sum of the six piece products
 * whose order is at most 2^-16:
 *   hi·hi + (hi·mid + mid·hi) + (hi·lo + lo·hi + mid·mid)
 * the three dropped ones (mid·lo, lo·mid, lo·lo) are at most ~2^-23 |a·b|,
 * the size of fp32's own rounding of the product. Each bf16 product is
 * exact in fp32 and AMX adds it to the fp32 accumulator rounded to
 * nearest, so the result carries fp32's error, not bf16's: six roundings
 * per product instead of the FMA's one, about twice the FMA kernels'
 * error (128 x 768 x 3072 against a double reference: max |err| 5.5e-5
 * against 2.6e-5, on sums up to 72), within the (K + 2) eps sum|a b|
 * bound test_rt_gemm holds every path to. Six tile products for one:
 * 2.7 times the FMA peak, on paper; 530 GFLOP/s (fp32 products) measured
 * from cache on one core, against the FMA peak's 250.
 *
 * What differs from the fp32 kernels: AMX flushes denormal inputs and
 * results to zero (so do the pieces of values below 2^-110, whose lo is
 * then lost); a product within 2^-7 of FLT_MAX may overflow where fp32
 * does not. A non-finite value must not be split (inf - inf), so an A with
 * one is computed by the fp32 path, and a B with one is packed for it.
 *
 * Used for a B packed ahead of time (tsrt_sgemm_pack_b: constant weights)
 * whose product has 16 rows or more when packed: B's pieces are split
 * once, into a copy 1.5 times the fp32 one; A's on every call, a chunk
 * of rows at a time (M x K splits against M x N x K multiply-adds).
 * Splitting B's panels on every call instead, from the fp32 copy, cost
 * more than the smaller stream saved: about one vector operation per
 * element, not overlapped with the tiles' work (128 x 3072 x 768, weights
 * in DRAM: 200 against 237 GFLOP/s). A B that is not constant is split
 * per call where the product is large enough to pay for it (D77,
 * tsrt__amx_worth in tsrt_gemm.h); smaller ones stay on the FMA kernels. */
#ifndef TSRT_GEMM_AMX_H
#define TSRT_GEMM_AMX_H

#ifndef TSRT_GEMM_API_H
#include "tsrt_gemm_api.h"
#endif

/* Rows and K of the A chunk split per step: its pieces (128 x 768 x 3
 * bf16 = 576 KiB) stay in L2 while every panel of B passes them. */
#define TSRT_AMX_MA 128
#define TSRT_AMX_KA 768
/* 0: no software prefetch of the next panel (tsrt__amx_range) */
#ifndef TSRT_AMX_PF
#define TSRT_AMX_PF 1
#endif

/* Rows and K of the A chunk for an m x k product. */
static inline int64_t tsrt__amx_chunk(int64_t m, int64_t k, int64_t *kk)
{
    *kk = tsrt__min(tsrt__rup(tsrt__max(k, 1), 32), TSRT_AMX_KA);
    return tsrt__min(tsrt__rup(tsrt__max(m, 1), 32), TSRT_AMX_MA);
}

/* Panels of B split per call at a time (a B not packed ahead): its
 * K chunk's pieces, at most TSRT_AMX_BBYTES, so that A's are split once
 * for all columns of most products (1024^3: all 32 panels). */
#define TSRT_AMX_BBYTES (6 << 20)
static inline int64_t tsrt__amx_qc(int64_t k)
{
    const int64_t nk = tsrt__min(tsrt__cdiv(tsrt__max(k, 1), 32), TSRT_AMX_KA / 32);
    return tsrt__max(1, TSRT_AMX_BBYTES / (nk * 6144));
}

/* Whether a product of this shape whose B is not packed ahead pays for
 * splitting B on every call (tsrt__amx_worth, D77): each element of A is
 * split once per thread and B's once per thread, against tile work at
 * about twice the FMA kernels' rate. One core, against them: 1024^3 163
 * -> 257 GFLOP/s, 128 x 128 x 768 173 -> 210, 192^3 185 -> 202; 64 x 512
 * x 512 165 -> 143 and 128 x 128 x 64 167 -> 150 lose (the splits, C's
 * loads and stores per 32 x 32 block): from 1/m + 1/n <= 1/64, K >= 128. */
static inline int tsrt__amx_per_call_shape(int64_t m, int64_t n, int64_t k)
{
    return m >= 32 && n >= 32 && k >= 128 && m * n >= 64 * (m + n);
}

/* Workspace of the AMX path (A's chunk split, the edge buffer, B's chunk
 * split where the shape may take it): part of tsrt_sgemm_workspace's
 * bound on every target, so that the host, which does not know whether
 * the kernels use AMX, sizes it. */
static inline size_t tsrt__amx_ws_bytes(int64_t m, int64_t n, int64_t k)
{
    int64_t kk;
    const int64_t rows = tsrt__amx_chunk(m, k, &kk);
    const int64_t panels =
        tsrt__amx_per_call_shape(m, n, k) ? tsrt__min(tsrt__cdiv(tsrt__max(n, 1), 32), tsrt__amx_qc(k)) : 0;
    return (size_t)(rows * kk * 3) * 2 + 32 * 32 * sizeof(float) + (size_t)(panels * (kk / 32)) * 6144 +
           3 * TSRT_ALIGN;
}

#if TSRT_ISA == TSRT_ISA_AVX512 && defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AVX512BW__) && defined(__AVX512BF16__) && \
    defined(__linux__) && defined(__x86_64__) && !defined(TSRT_AVX512_EMULATED) && !defined(TSRT_NO_AMX)
#define TSRT_AMX 1
#else
#define TSRT_AMX 0
#endif

#if TSRT_AMX
#include <immintrin.h>

/* The process's permission to use the tile registers: Linux grants it on
 * request (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), once per
 * process; without it a tile instruction raises SIGILL. TESSERA_NO_AMX in
 * the environment declines it: valgrind, for one, passes the request on
 * but cannot run tile instructions (scripts/test.sh sets it there). The
 * one exception to the tsrt headers' standard-headers-only rule: the
 * system call is declared here rather than through <unistd.h>, which
 * needs a feature macro the generated units do not set. The answer is
 * kept (1 granted, -1 refused); asking again is harmless, so racing
 * threads are too. */
long syscall(long number, ...);
char *getenv(const char *name);
static int tsrt__amx_ready(void)
{
    static int state;
    int s = __atomic_load_n(&state, __ATOMIC_RELAXED);
    if (!s) {
        const char *off = getenv("TESSERA_NO_AMX");
        s = (!off || !*off) && syscall(158 /* SYS_arch_prctl */, 0x1023 /* ARCH_REQ_XCOMP_PERM */,
                                       18 /* XTILEDATA */) == 0 ? 1 : -1;
        __atomic_store_n(&state, s, __ATOMIC_RELAXED);
    }
    return s > 0;
}

/* Tile registers as this file uses them: all eight 16 rows x 64 bytes;
 * 0-3 the 2 x 2 accumulators of a 32 x 32 block of C, 4-5 two A tiles
 * (16 rows x 32 k), 6-7 two B tiles (16 k pairs x 16 columns, each
 * column's pair adjacent: the layout TDPBF16PS reads). */
static inline void tsrt__amx_config(void)
{
    /* constant data: gcc 12 does not treat LDTILECFG as reading its
     * operand, and once sank the stores of a local configuration past it
     * (SIGILL at the first tile instruction) */
    static const struct {
        uint8_t palette, start;
        uint8_t reserved[14];
        uint16_t colsb[16];
        uint8_t rows[16];
    } cfg = {1, 0, {0}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};
    _tile_loadconfig(&cfg);
}

/* x0 and x1 (16 fp32 each) as three vectors of 32 bf16 pieces, x0's 16
 * first: p[0] hi, p[1] mid, p[2] lo, each rounded to nearest even
 * (VCVTNE2PS2BF16, which also flushes denormals: the pieces of values
 * below 2^-110 lose their lo, as AMX would flush it). Returns the lanes
 * (of 32) whose hi is not finite (x not finite, or rounded up past
 * FLT_MAX). */
static inline __mmask32 tsrt__amx_split32(__m512 x0, __m512 x1, __m512i p[3])
{
    for (int s = 0; s < 3; s++) {
        const __m512i h = (__m512i)_mm512_cvtne2ps_pbh(x1, x0);
        p[s] = h;
        if (s == 2) break;
        /* the piece back in fp32 (bf16 is fp32's upper half), subtracted:
         * exact, the residual has at most 16 significant bits */
        const __m512i h0 = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(h)), 16);
        const __m512i h1 = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(h, 1)), 16);
        x0 = _mm512_sub_ps(x0, _mm512_castsi512_ps(h0));
        x1 = _mm512_sub_ps(x1, _mm512_castsi512_ps(h1));
    }
    const __m512i e = _mm512_set1_epi16(0x7f80);
    return _mm512_cmpeq_epi16_mask(_mm512_and_si512(p[0], e), e);
}

/* Rows [i0, i0+rows) of A, k blocks [kb0, kb0+nkb) of 32 (K past k is
 * zero), split into dst: per 32-row block and k block six tiles of 512
 * bf16 (hi of rows 0-15, hi of 16-31, mid, mid, lo, lo), rows past `rows`
 * zero. Returns nonzero when an element is not finite (dst then partly
 * written). */
static int tsrt__amx_split_a(const tsrt_sgemm_args *g, int64_t i0, int64_t rows, int64_t kb0, int64_t nkb,
                             uint16_t *restrict dst)
{
    __mmask32 bad = 0;
    const int64_t mbs = tsrt__cdiv(rows, 32);
    for (int64_t r = 0; r < mbs * 32; r++) {
        const float *a = g->a + (i0 + r) * g->a_rs;
        for (int64_t kb = 0; kb < nkb; kb++) {
            const int64_t p0 = (kb0 + kb) * 32, np = tsrt__min(32, g->k - p0);
            __m512 x0, x1;
            if (r >= rows)
                x0 = x1 = _mm512_setzero_ps();
            else if (g->a_cs == 1) {
                const __mmask16 m0 = np >= 16 ? 0xffff : (__mmask16)((1u << np) - 1);
                const __mmask16 m1 = np >= 32 ? 0xffff : np > 16 ? (__mmask16)((1u << (np - 16)) - 1) : 0;
                x0 = _mm512_maskz_loadu_ps(m0, a + p0);
                x1 = _mm512_maskz_loadu_ps(m1, a + p0 + 16);
            } else {
                float t[32];
                for (int64_t p = 0; p < 32; p++) t[p] = p < np ? a[(p0 + p) * g->a_cs] : 0.0f;
                x0 = _mm512_loadu_ps(t), x1 = _mm512_loadu_ps(t + 16);
            }
            __m512i q[3];
            bad |= tsrt__amx_split32(x0, x1, q);
            uint16_t *t = dst + ((r / 32) * nkb + kb) * 3072 + (r % 32 / 16) * 512 + (r % 16) * 32;
            for (int s = 0; s < 3; s++) _mm512_storeu_si512(t + s * 1024, q[s]);
        }
    }
    return bad != 0;
}

/* C (32 x 32 at c, row stride rs floats) (+)= the split A block's by B's
 * panel over nkb k blocks: a (6 tiles per k block, tsrt__amx_split_a),
 * b (the same per k block: hi of columns 0-15, hi of 16-31, mid, mid, lo,
 * lo). The small products first, each k block: lo·hi, mid·hi, hi·hi,
 * hi·lo, hi·mid, mid·mid (B's piece second). */
#define TSRT__AMX_DP4()                                                       \
    do {                                                                      \
        _tile_dpbf16ps(0, 4, 6);                                              \
        _tile_dpbf16ps(1, 4, 7);                                              \
        _tile_dpbf16ps(2, 5, 6);                                              \
        _tile_dpbf16ps(3, 5, 7);                                              \
    } while (0)
static void tsrt__amx_block(const uint16_t *a, const uint16_t *b, int64_t nkb, float *c, ptrdiff_t rs, int load,
                            const char *pf, int64_t pfl /* pfl lines at pf into L2 per k block */)
{
    const size_t st = (size_t)rs * sizeof(float);
    if (load) {
        _tile_loadd(0, c, st);
        _tile_loadd(1, c + 16, st);
        _tile_loadd(2, c + 16 * rs, st);
        _tile_loadd(3, c + 16 * rs + 16, st);
    } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    }
    for (int64_t kb = 0; kb < nkb; kb++, a += 3072, b += 3072) {
        if (pf) {
            for (int64_t l = 0; l < pfl; l++) _mm_prefetch(pf + l * 64, _MM_HINT_T1);
            pf += pfl * 64;
        }
        _tile_loadd(6, b, 64);
        _tile_loadd(7, b + 512, 64);
        _tile_loadd(4, a + 2048, 64);
        _tile_loadd(5, a + 2560, 64);
        TSRT__AMX_DP4(); /* lo·hi */
        _tile_loadd(4, a + 1024, 64);
        _tile_loadd(5, a + 1536, 64);
        TSRT__AMX_DP4(); /* mid·hi */
        _tile_loadd(4, a, 64);
        _tile_loadd(5, a + 512, 64);
        TSRT__AMX_DP4(); /* hi·hi */
        _tile_loadd(6, b + 2048, 64);
        _tile_loadd(7, b + 2560, 64);
        TSRT__AMX_DP4(); /* hi·lo */
        _tile_loadd(6, b + 1024, 64);
        _tile_loadd(7, b + 1536, 64);
        TSRT__AMX_DP4(); /* hi·mid */
        _tile_loadd(4, a + 1024, 64);
        _tile_loadd(5, a + 1536, 64);
        TSRT__AMX_DP4(); /* mid·mid */
    }
    _tile_stored(0, c, st);
    _tile_stored(1, c + 16, st);
    _tile_stored(2, c + 16 * rs, st);
    _tile_stored(3, c + 16 * rs + 16, st);
}
#undef TSRT__AMX_DP4

/* Row p of g's B, the 32 columns from j (nb of them real): in place, or
 * gathered into t (zero past nb). */
static inline const float *tsrt__amx_brow(const tsrt_sgemm_args *g, int64_t p, int64_t j, int64_t nb, float *t)
{
    if (g->b_cs == 1 && nb == 32) return g->b + p * g->b_rs + j;
    for (int64_t q = 0; q < 32; q++) t[q] = q < nb ? g->b[p * g->b_rs + (j + q) * g->b_cs] : 0.0f;
    return t;
}

/* K blocks [kb0, kb0+nkb) of g's B, the panel at column j (nb columns;
 * rows past k zero), split into dst: per k block six tiles (hi of columns
 * 0-15, hi of 16-31, mid, mid, lo, lo), row r of a tile holding k 2r and
 * 2r+1 of each column side by side. Returns nonzero when an element is
 * not finite. */
static int tsrt__amx_split_b(const tsrt_sgemm_args *s, int64_t j, int64_t nb, int64_t kb0, int64_t nkb,
                             uint16_t *restrict dst)
{
    /* [k 2r: columns 0-15 | k 2r+1: 0-15] -> the pairs interleaved */
    const __m512i zip = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                                         21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    __mmask32 bad = 0;
    float t[2][32];
    for (int64_t kb = 0; kb < nkb; kb++)
        for (int64_t r = 0; r < 16; r++) {
            const float *x[2];
            for (int e = 0; e < 2; e++) {
                const int64_t p = (kb0 + kb) * 32 + 2 * r + e;
                if (p < s->k) x[e] = tsrt__amx_brow(s, p, j, nb, t[e]);
                else memset(t[e], 0, sizeof t[e]), x[e] = t[e];
            }
            uint16_t *d = dst + kb * 3072 + r * 32;
            for (int h = 0; h < 2; h++) {
                __m512i q[3];
                bad |= tsrt__amx_split32(_mm512_loadu_ps(x[0] + h * 16), _mm512_loadu_ps(x[1] + h * 16), q);
                for (int c = 0; c < 3; c++) _mm512_storeu_si512(d + c * 1024 + h * 512, _mm512_permutexvar_epi16(zip, q[c]));
            }
        }
    return bad != 0;
}

/* The lanes of x whose hi piece would not be finite: x not finite, or
 * within half a bf16 unit of FLT_MAX (rounds up to inf): |x| >=
 * 0x7f7f8000. The checks ahead of a split use the split's criterion. */
static inline __mmask16 tsrt__amx_unsplittable(__m512 x)
{
    const __m512i u = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
    return _mm512_cmpge_epu32_mask(u, _mm512_set1_epi32(0x7f7f8000));
}

/* Whether n floats at x, stride s, all split. */
static int tsrt__amx_ok(const float *x, int64_t n, ptrdiff_t s)
{
    __mmask16 bad = 0;
    if (s != 1) {
        for (int64_t i = 0; i < n; i++) bad |= tsrt__amx_unsplittable(_mm512_set1_ps(x[i * s]));
        return !bad;
    }
    for (int64_t i = 0; i < n; i += 16) {
        const int64_t r = tsrt__min(16, n - i);
        bad |= tsrt__amx_unsplittable(_mm512_maskz_loadu_ps((__mmask16)((1u << r) - 1), x + i));
    }
    return !bad;
}

/* Whether rows [i0, i1) of A all split (a check ahead of a split in
 * several chunks, vectorized: a scalar loop cost 4% of 128 x 768 x
 * 3072). */
static int tsrt__amx_a_ok(const tsrt_sgemm_args *g, int64_t i0, int64_t i1)
{
    for (int64_t i = i0; i < i1; i++)
        if (!tsrt__amx_ok(g->a + i * g->a_rs, g->k, g->a_cs)) return 0;
    return 1;
}

/* Whether columns [j0, j1) of B all split. */
static int tsrt__amx_b_ok(const tsrt_sgemm_args *g, int64_t j0, int64_t j1)
{
    for (int64_t p = 0; p < g->k; p++)
        if (!tsrt__amx_ok(g->b + p * g->b_rs + j0 * g->b_cs, j1 - j0, g->b_cs)) return 0;
    return 1;
}

/* The finished block of C at (i, j), mb x nb (c its first element; m0
 * the product's first row in the epilogue's coordinates): the tile
 * epilogue or the callback. */
static void tsrt__amx_epi(const tsrt_sgemm_args *g, float *c, int64_t m0, int64_t i, int64_t j, int64_t mb,
                          int64_t nb)
{
    if (g->te) {
        const tsrt_tepi te = tsrt__te_at(g->te, m0 + i, j);
        tsrt__te_tile(&te, c, g->c_rs, mb, nb);
        if (g->te->rest) g->te->rest(g->te->rest_ctx, c, g->c_rs, 1, m0 + i, j, mb, nb);
    } else if (g->epi)
        g->epi(g->epi_ctx, c, g->c_rs, 1, m0 + i, j, mb, nb);
}

/* Bytes of B's AMX copy: per 32 columns and 32 k, six 1 KiB tiles. */
static inline size_t tsrt__amx_bp_bytes(int64_t n, int64_t k)
{
    return (size_t)(tsrt__cdiv(n, 32) * tsrt__cdiv(k, 32)) * 6144;
}

/* Panels [p0, p1) of g's B split into bp, B's AMX copy: panel after
 * panel, each its k blocks in order (tsrt__amx_split_b). B is all finite
 * (tsrt__amx_b_bad, which every packing thread runs first, so that all
 * choose the same layout). */
static void tsrt__amx_pack_b(const tsrt_sgemm_args *g, uint16_t *restrict bp, int64_t p0, int64_t p1)
{
    const int64_t nkb = tsrt__cdiv(g->k, 32);
    for (int64_t jp = p0; jp < p1; jp++)
        (void)tsrt__amx_split_b(g, jp * 32, tsrt__min(32, g->n - jp * 32), 0, nkb, bp + jp * nkb * 3072);
}

/* Whether some element of g's B does not split (such a B is packed for
 * the fp32 kernels: its pieces would meet inf - inf). */
static int tsrt__amx_b_bad(const tsrt_sgemm_args *g)
{
    return !tsrt__amx_b_ok(g, 0, g->n);
}

/* Rows [r0, r1) x panels [q0, q1) of one product C = A·B (+ C) (a, b, c:
 * the product's; m0: its first row in the epilogue's coordinates), with
 * B's AMX copy bp, or (bp NULL) B split here, TSRT_AMX_BBYTES of panels
 * at a time. Per K chunk of TSRT_AMX_KA: B's chunk split (unless bp),
 * then per TSRT_AMX_MA rows A's pieces split into ws and every panel
 * passed over the rows' 32-row blocks (a panel's chunk, 144 KiB, stays in
 * L2 across them). A block at C's edge goes through a 32 x 32 buffer.
 * Returns nonzero, having written nothing, when A or B does not split in
 * these rows and columns. */
static int tsrt__amx_range(const tsrt_sgemm_args *g, const uint16_t *bp, const float *a, const float *b, float *c,
                           int64_t m0, int64_t r0, int64_t r1, int64_t q0, int64_t q1, void *ws)
{
    const int64_t nkb = tsrt__cdiv(g->k, 32), KAB = TSRT_AMX_KA / 32;
    const int64_t QC = bp ? q1 - q0 : tsrt__amx_qc(g->k);
    tsrt_sgemm_args ga = *g;
    ga.a = a, ga.b = b;
    /* With one chunk of each the splits are the checks (they come before
     * any write); else check first */
    if (r1 - r0 > TSRT_AMX_MA || nkb > KAB || q1 - q0 > QC) {
        if (!tsrt__amx_a_ok(&ga, r0, r1)) return 1;
        if (!bp && !tsrt__amx_b_ok(&ga, q0 * 32, tsrt__min(q1 * 32, g->n))) return 1;
    }
    int64_t kk;
    const int64_t crows = tsrt__amx_chunk(g->m, g->k, &kk);
    uint16_t *as = (uint16_t *)tsrt__align(ws);
    float *edge = tsrt__align(as + crows * kk * 3);
    uint16_t *bs = (uint16_t *)tsrt__align(edge + 32 * 32);
    for (int64_t qc = q0; qc < q1; qc += QC) {
        const int64_t qe = tsrt__min(q1, qc + QC);
        for (int64_t kc = 0; kc < nkb; kc += KAB) {
            const int64_t nk = tsrt__min(KAB, nkb - kc);
            const int load = kc > 0 || g->beta, last = kc + nk == nkb;
            /* the chunk's panels: in bp, nkb blocks apart, or split into bs */
            const uint16_t *bc = bp ? bp + (qc * nkb + kc) * 3072 : bs;
            const int64_t pst = (bp ? nkb : nk) * 3072;
            if (!bp)
                for (int64_t jp = qc; jp < qe; jp++)
                    if (tsrt__amx_split_b(&ga, jp * 32, tsrt__min(32, g->n - jp * 32), kc, nk, bs + (jp - qc) * pst))
                        return 1;
            for (int64_t ic = r0; ic < r1; ic += TSRT_AMX_MA) {
                const int64_t rows = tsrt__min(TSRT_AMX_MA, r1 - ic);
                if (tsrt__amx_split_a(&ga, ic, rows, kc, nk, as)) return 1;
                for (int64_t jp = qc; jp < qe; jp++) {
                    const int64_t j = jp * 32, nb = tsrt__min(32, g->n - j);
                    const uint16_t *bb = bc + (jp - qc) * pst;
                    /* The next panel's chunk into L2, 96 lines per k block
                     * spread over this panel's row blocks and k steps: the
                     * weights come from memory once, and the hardware
                     * prefetcher, which sees each panel restart per row
                     * block, ran behind (128 x 3072 x 768 from DRAM 249 ->
                     * 285 GFLOP/s; all at the start of a row block: no
                     * gain). */
                    const char *nx = (const char *)(TSRT_AMX_PF && jp + 1 < qe ? bb + pst : NULL);
                    const int64_t nblk = tsrt__cdiv(rows, 32), pfl = tsrt__cdiv(96, nblk);
                    for (int64_t ib = 0; ib < rows; ib += 32) {
                        const int64_t mb = tsrt__min(32, rows - ib);
                        const uint16_t *ab = as + ib / 32 * nk * 3072;
                        float *cb = c + (ic + ib) * g->c_rs + j;
                        const char *pf = nx ? nx + ib / 32 * pfl * nk * 64 : NULL;
                        if (mb == 32 && nb == 32)
                            tsrt__amx_block(ab, bb, nk, cb, g->c_rs, load, pf, pfl);
                        else {
                            for (int64_t i = 0; i < 32; i++)
                                for (int64_t q = 0; q < 32; q++)
                                    edge[i * 32 + q] = load && i < mb && q < nb ? cb[i * g->c_rs + q] : 0.0f;
                            tsrt__amx_block(ab, bb, nk, edge, 32, 1, pf, pfl);
                            for (int64_t i = 0; i < mb; i++) memcpy(cb + i * g->c_rs, edge + i * 32, sizeof(float) * nb);
                        }
                        if (last) tsrt__amx_epi(g, cb, m0, ic + ib, j, mb, nb);
                    }
                }
            }
        }
    }
    return 0;
}
#endif /* TSRT_AMX */

#endif /* TSRT_GEMM_AMX_H */
