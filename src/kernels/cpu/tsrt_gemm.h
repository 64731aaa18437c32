/* tsrt_gemm.h — fp32 GEMM, C = A·B (+ C), BLIS-style, with a fused
 * epilogue callback and (ith, nth) threading.
 *
 *   tsrt_sgemm_args g = { .m = M, .n = N, .k = K,
 *                         .a = A, .a_rs = K, .a_cs = 1,     // A[i][p] = a[i*a_rs + p*a_cs]
 *                         .b = B, .b_rs = N, .b_cs = 1,     // B[p][j] = b[p*b_rs + j*b_cs]
 *                         .c = C, .c_rs = N, .c_cs = 1,     // C[i][j] = c[i*c_rs + j*c_cs]
 *                         .epi = my_bias_relu, .epi_ctx = &bias };
 *   size_t per_thread = tsrt_sgemm_workspace(M, N, K);
 *   // on each of nth threads, with its own per_thread bytes of workspace:
 *   tsrt_sgemm(&g, ith, nth, ws[ith]);
 *
 * Strides are in elements and may be anything (a transposed operand is just
 * swapped strides; no copy is made by the caller). Threads need no barrier:
 * each computes a disjoint rectangle of C, packing its own panels.
 *
 * Loop nest (Goto / BLIS), per thread rectangle:
 *   for jc in N step NC:            B panel KC x NC  -> L3
 *     for pc in K step KC:
 *       for ic in M step MC:        A block MC x KC -> L2
 *         for jr in NC step NR:     B micro-panel KC x NR -> L1 (packed when ic is the first)
 *           for ir in MC step MR:   (A micro-panel packed when jr is the first)
 *             micro-kernel: MR x NR tile of C in registers
 *           (last pc: epilogue on finished strips of <= MC x TSRT_EPI_COLS)
 */
#ifndef TSRT_GEMM_H
#define TSRT_GEMM_H

#ifndef TSRT_GEMM_API_H
#include "tsrt_gemm_api.h"
#endif
#ifndef TSRT_UKERNEL_H
#include "tsrt_ukernel.h"
#endif
#ifndef TSRT_GEMM_AMX_H
#include "tsrt_gemm_amx.h"
#endif
#ifndef TSRT_GEMM_PACK_H
#include "tsrt_gemm_pack.h"
#endif

/* Columns of C handed to one epilogue call: 4 micro-panels. The strip
 * (<= MC x 64 floats = 36 KiB) is still in L1/L2 when the callback runs,
 * and a call per 64 columns keeps the callback's own loop overhead small. */
#ifndef TSRT_EPI_COLS
#define TSRT_EPI_COLS (4 * TSRT_NR)
#endif

/* ---- the driver ------------------------------------------------------------------ */

/* The epilogue on C[i0.., j0..] (mb x nb), in the caller's orientation. */
static inline void tsrt__epi(const tsrt__gop *op, int64_t i0, int64_t j0, int64_t mb, int64_t nb)
{
    float *c = op->c + i0 * op->c_rs + j0 * op->c_cs;
    if (!op->swapped)
        op->epi(op->epi_ctx, c, op->c_rs, op->c_cs, op->epi_m0 + i0, op->epi_n0 + j0, mb, nb);
    else
        op->epi(op->epi_ctx, c, op->c_cs, op->c_rs, op->epi_m0 + j0, op->epi_n0 + i0, nb, mb);
}

/* K == 0: C = beta ? C : 0, then the epilogue, block by block. */
static void tsrt__gemm_k0(const tsrt__gop *op, int64_t i0, int64_t i1, int64_t j0, int64_t j1)
{
    for (int64_t ic = i0; ic < i1; ic += TSRT_MC)
        for (int64_t jc = j0; jc < j1; jc += TSRT_EPI_COLS) {
            const int64_t mb = tsrt__min(TSRT_MC, i1 - ic), nb = tsrt__min(TSRT_EPI_COLS, j1 - jc);
            if (!op->beta)
                for (int64_t i = 0; i < mb; i++)
                    for (int64_t j = 0; j < nb; j++) op->c[(ic + i) * op->c_rs + (jc + j) * op->c_cs] = 0.0f;
            if (op->te) {
                const tsrt_tepi te = tsrt__te_at(op->te, op->epi_m0 + ic, op->epi_n0 + jc);
                tsrt__te_tile(&te, op->c + ic * op->c_rs + jc, op->c_rs, mb, nb);
            }
            if (op->epi) tsrt__epi(op, ic, jc, mb, nb);
        }
}

/* Packs B[pc .. pc+kc)[jc .. jc+nc) (micro-panels) at pb. */
static inline void tsrt__pack_b_op(const tsrt__gop *op, int64_t pc, int64_t kc, int64_t jc, int64_t nc, float *pb)
{
    if (op->pack_b)
        op->pack_b(op->pack_b_ctx, pc, kc, jc, nc, pb);
    else
        tsrt__pack_b(op->b + pc * op->b_rs + jc * op->b_cs, op->b_rs, op->b_cs, kc, nc, pb);
}

/* Prefetches rows [p0, p0+np) of the strided B's micro-panel at column
 * j0: the next panel's, while the micro-kernel works on this one. With few
 * rows of A there is too little work per panel to hide np cache misses,
 * and rows far apart (a 56x56 image: 12.5 KiB) defeat the hardware
 * prefetcher (GEMM M = 64, N = 3136, K = 256: 50 -> 62-69 GFLOP/s). (The
 * same for the PHASED packer's source measured nothing: it is in cache.) */
static inline void tsrt__prefetch_b_op(const tsrt__gop *op, int64_t p0, int64_t np, int64_t j0)
{
    const float *b = op->b + p0 * op->b_rs + j0 * op->b_cs;
    for (int64_t p = 0; p < np; p++) {
        __builtin_prefetch(b + p * op->b_rs, 0, 3);
        __builtin_prefetch(b + p * op->b_rs + (TSRT_NR - 1) * op->b_cs, 0, 3);
    }
}

/* Columns up to which A is read in place (op->a_direct). */
#ifndef TSRT_UA_COLS
#define TSRT_UA_COLS 256
#endif

/* Where a pre-packed B's next micro-panel is prefetched to: L2 (2, that
 * is prefetcht1), not L1. The current micro-panel (24 KiB at KC 192) and
 * the next one do not fit a 32 KiB L1 together, so prefetching into L1
 * evicted the panel the tiles were still reading: on Zen 4, GPT-2 1 thread
 * 248 -> 232 ms, 2 threads 135 -> 122, BERT -3% (D69). */
#ifndef TSRT_PFN_LOC
#define TSRT_PFN_LOC 2
#endif
/* Lines of a pre-packed B's next micro-panel one tile prefetches (see
 * pfn in tsrt__gemm_range). */
#ifndef TSRT_PF_BURST
#define TSRT_PF_BURST 16
#endif
/* The same for a block of at least MR rows (D61): its tiles do MR x NR x
 * kc multiply-adds each (~2700 cycles at kc = 384 on two FMA pipes), so
 * 80 lines is one request per ~34 cycles. */
#ifndef TSRT_PF_BURST_FULL
#define TSRT_PF_BURST_FULL 80
#endif
/* No such prefetch for a block of at most TSRT_PF_QUIET_ROWS rows (two
 * tiles a panel, so a panel's prefetches are a large share of its
 * instructions) whose share of the packed B is at most
 * TSRT_PF_HOT_BYTES: a recurrent step's weights (128 x 512 in a
 * bidirectional LSTM's step, 256 KiB) stay in L2 from one step to the
 * next, and a share this small read from L3 arrives in time for so few
 * rows. Zen 3, 8 x 512 x 128 with B in L2: 13.3 -> 12.0 us; 8 x 1024 x
 * 256 from L3 (16 weight sets cycled) 0.956. With 32 rows from L3 the
 * prefetch still paid (32 x 256 x 1024: 1.04 without it), and larger
 * weights that stream from DRAM need it (D43, D194). */
#ifndef TSRT_PF_HOT_BYTES
#define TSRT_PF_HOT_BYTES (1 << 20)
#endif
#ifndef TSRT_PF_QUIET_ROWS
#define TSRT_PF_QUIET_ROWS 8
#endif

/* The K block of the driver: equal blocks rather than full ones and a
 * remainder (see tsrt__gemm_range); a function of K alone, so that a B
 * packed ahead of time (tsrt_sgemm_pack_b) is cut the same way. */
static inline int64_t tsrt__kb(int64_t K)
{
    return tsrt__min(TSRT_KC, tsrt__rup(tsrt__cdiv(K, tsrt__cdiv(K, TSRT_KC)), 8));
}

/* The pre-packed micro-panel of B holding rows [pc, pc+kc) (a K block)
 * and columns [j, j+NR): K blocks one after another, each all of B's
 * panels in column order, so that a K block's sweep over the columns reads
 * one contiguous run (panels of all K rows, 196 KiB apart for K = 3072,
 * cost TLB misses: 128x768x3072 ran 3-10% slower that way). */
static inline const float *tsrt__bp_at(const float *bp, int64_t n, int64_t pc, int64_t kc, int64_t j)
{
    return bp + pc * tsrt__rup(n, TSRT_NR) + j / TSRT_NR * kc * TSRT_NR;
}

/* Rows [0, rows) x NR columns at p (row stride rs) into L1 ahead of use:
 * the residual of the tile after the current one. The residual is an older
 * activation (a ResNet block's input), out of L1 and L2, read NR floats
 * per row per tile: too many short streams for the hardware prefetcher.
 * Without this the 1x1 convs that add it ran 14-25% slower than those
 * that do not (D38). */
static inline void tsrt__pf_rows(const float *p, ptrdiff_t rs, int64_t rows)
{
    for (int64_t q = 0; q < rows; q++) {
        __builtin_prefetch(p + q * rs, 0, 3);
        __builtin_prefetch(p + q * rs + TSRT_NR - 1, 0, 3);
    }
}

/* One row of C (M = 1: a classifier, a decoder's step) from a packed B
 * micro-panel, A's row read in place (column stride a_cs), C with unit
 * column stride: the MR-row kernel would do MR times the multiply-adds
 * (MobileNetV2's classifier, 1 x 1280 x 1000, took 1.6x ORT's time that
 * way). Four partial sums (k mod 4) keep four FMA chains per vector in
 * flight; they are added at the end (another summation order than the
 * MR-row kernel's, within the same error bound). With AVX-512 the sums
 * are zmm registers and every step one fused multiply-add (the vector
 * extensions' `s += x * q` is a multiply and an add under -std=c11,
 * which turns contraction off): a hot 1 x 1024 x 256 product 10.1 -> 9.3
 * us (D148); the partial sums and their order are the same. */
static void tsrt__ukr_row(int64_t k, const float *restrict a, ptrdiff_t a_cs, const float *restrict b,
                          float *restrict c, int beta, int64_t nr, const tsrt_tepi *te)
{
#if TSRT_ISA == TSRT_ISA_AVX512
    _Static_assert(TSRT_NR == 32, "two zmm per micro-panel row");
    __m512 s[4][2];
    for (int u = 0; u < 4; u++) s[u][0] = s[u][1] = _mm512_setzero_ps();
    int64_t p = 0;
    for (; p + 4 <= k; p += 4)
        for (int u = 0; u < 4; u++) {
            const __m512 x = _mm512_set1_ps(a[(p + u) * a_cs]);
            s[u][0] = _mm512_fmadd_ps(x, _mm512_loadu_ps(b + (p + u) * TSRT_NR), s[u][0]);
            s[u][1] = _mm512_fmadd_ps(x, _mm512_loadu_ps(b + (p + u) * TSRT_NR + 16), s[u][1]);
        }
    for (; p < k; p++) {
        const __m512 x = _mm512_set1_ps(a[p * a_cs]);
        s[0][0] = _mm512_fmadd_ps(x, _mm512_loadu_ps(b + p * TSRT_NR), s[0][0]);
        s[0][1] = _mm512_fmadd_ps(x, _mm512_loadu_ps(b + p * TSRT_NR + 16), s[0][1]);
    }
    /* straight into C, masked past nr: through a stack copy gcc made the
     * 32-float copy a `rep movsq`, 20% of a 1 x 512 x 16 product (D156) */
    for (int v = 0; v < 2 && 16 * v < nr; v++) {
        const __mmask16 m = nr - 16 * v >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (nr - 16 * v)) - 1);
        __m512 q = _mm512_add_ps(_mm512_add_ps(s[0][v], s[1][v]), _mm512_add_ps(s[2][v], s[3][v]));
        if (beta) q = _mm512_add_ps(_mm512_maskz_loadu_ps(m, c + 16 * v), q);
        _mm512_mask_storeu_ps(c + 16 * v, m, q);
    }
#elif TSRT_ISA == TSRT_ISA_AVX2
    /* The same partial sums by FMAs (`s += x * q` is a multiply and an add
     * under -std=c11), and a full panel finished as the 6 x 16 kernel
     * finishes a row: old C, the tile epilogue and the store in registers.
     * The general end (a stack copy stored element by element, then
     * tsrt__te_tile) was a third of the instructions per panel: 1 x 128 x
     * 512 plus a residual (an LSTM step at batch 1), B in L2, 4.09 -> 3.54
     * us (D190). */
    tsrt__v8 s00 = {0}, s01 = {0}, s10 = {0}, s11 = {0}, s20 = {0}, s21 = {0}, s30 = {0}, s31 = {0}, q;
    int64_t p = 0;
    for (; p + 4 <= k; p += 4) {
        const float *restrict bq = b + p * TSRT_NR;
        const tsrt__v8 x0 = (tsrt__v8){0} + a[p * a_cs], x1 = (tsrt__v8){0} + a[(p + 1) * a_cs];
        const tsrt__v8 x2 = (tsrt__v8){0} + a[(p + 2) * a_cs], x3 = (tsrt__v8){0} + a[(p + 3) * a_cs];
        TSRT__V8_LOAD(q, bq), TSRT__FMA8(s00, x0, q);
        TSRT__V8_LOAD(q, bq + 8), TSRT__FMA8(s01, x0, q);
        TSRT__V8_LOAD(q, bq + 16), TSRT__FMA8(s10, x1, q);
        TSRT__V8_LOAD(q, bq + 24), TSRT__FMA8(s11, x1, q);
        TSRT__V8_LOAD(q, bq + 32), TSRT__FMA8(s20, x2, q);
        TSRT__V8_LOAD(q, bq + 40), TSRT__FMA8(s21, x2, q);
        TSRT__V8_LOAD(q, bq + 48), TSRT__FMA8(s30, x3, q);
        TSRT__V8_LOAD(q, bq + 56), TSRT__FMA8(s31, x3, q);
    }
    for (; p < k; p++) {
        const tsrt__v8 x0 = (tsrt__v8){0} + a[p * a_cs];
        TSRT__V8_LOAD(q, b + p * TSRT_NR), TSRT__FMA8(s00, x0, q);
        TSRT__V8_LOAD(q, b + p * TSRT_NR + 8), TSRT__FMA8(s01, x0, q);
    }
    tsrt__v8 c00 = (s00 + s10) + (s20 + s30), c01 = (s01 + s11) + (s21 + s31);
    if (nr == TSRT_NR) {
        const ptrdiff_t rs = 0;
        TSRT__AVX2_FINISH_ROWS(TSRT__AVX2_ALL1);
        return;
    }
    float t[TSRT_NR] __attribute__((aligned(TSRT_ALIGN)));
    TSRT__V8_STORE(t, c00);
    TSRT__V8_STORE(t + 8, c01);
    for (int64_t j = 0; j < nr; j++) c[j] = beta ? c[j] + t[j] : t[j];
#else
    enum { V = TSRT_NR / 8 };
    tsrt__v8 s[4][V];
    for (int u = 0; u < 4; u++)
        for (int v = 0; v < V; v++) s[u][v] = (tsrt__v8){0};
    int64_t p = 0;
    for (; p + 4 <= k; p += 4)
        for (int u = 0; u < 4; u++) {
            const float x = a[(p + u) * a_cs];
            for (int v = 0; v < V; v++) {
                tsrt__v8 q;
                TSRT__V8_LOAD(q, b + (p + u) * TSRT_NR + 8 * v);
                s[u][v] += x * q;
            }
        }
    for (; p < k; p++)
        for (int v = 0; v < V; v++) {
            tsrt__v8 q;
            TSRT__V8_LOAD(q, b + p * TSRT_NR + 8 * v);
            s[0][v] += a[p * a_cs] * q;
        }
    float t[TSRT_NR] __attribute__((aligned(TSRT_ALIGN)));
    for (int v = 0; v < V; v++) TSRT__V8_STORE(t + 8 * v, (s[0][v] + s[1][v]) + (s[2][v] + s[3][v]));
    for (int64_t j = 0; j < nr; j++) c[j] = beta ? c[j] + t[j] : t[j];
#endif
    if (te) tsrt__te_tile(te, c, 0, 1, nr);
}

/* The sum of v's 8 lanes. */
static inline float tsrt__hsum8(tsrt__v8 v)
{
    return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

/* Up to this many rows times a column-major B not packed ahead run as
 * direct dot products (tsrt__rows_cols): packing B costs a read and a
 * write of all of it per call, which few rows do not pay back. */
#ifndef TSRT_FEW_ROWS
#define TSRT_FEW_ROWS 16
#endif

/* Whether a product is a few rows times a column-major B (each column
 * contiguous over k: a linear layer's weight as PyTorch passes it) not
 * packed ahead: tsrt__rows_cols computes it. The test is on the shape
 * alone, so a row's bits never depend on how threads split the product. */
static inline int tsrt__is_rows_cols(const tsrt__gop *op)
{
    return op->m <= TSRT_FEW_ROWS && op->b_rs == 1 && op->a_cs == 1 && op->c_cs == 1 && !op->swapped &&
           !op->bp && !op->pack_b;
}

/* Rows [i0, i1) x columns [j0, j1) of such a product: each element one
 * dot product read straight from A's row and B's column, two rows by four
 * columns at a time (B's four columns stay in L1 across the rows), then
 * the epilogue. Packing B first read and wrote all of it on every call
 * for m uses of each float: a classifier's 1024 x 1000 layer at batch 1
 * took 0.8 ms (D104), mobilenet_v3's 576 x 1024 at batch 8 1.4 ms (D108).
 * A row's sum runs in the same order whether it is paired or not. */
static void tsrt__rows_cols(const tsrt__gop *op, int64_t i0, int64_t i1, int64_t j0, int64_t j1)
{
    const int64_t K = op->k;
    for (int64_t jc = j0; jc < j1; jc += TSRT_EPI_COLS) {
        const int64_t nb = tsrt__min(TSRT_EPI_COLS, j1 - jc);
        for (int64_t j = 0; j < nb; j += 4) {
            const int w = (int)tsrt__min(4, nb - j);
            const float *restrict b[4];
            for (int u = 0; u < 4; u++) b[u] = op->b + (jc + j + (u < w ? u : 0)) * op->b_cs;
            const float *restrict b0 = b[0], *restrict b1 = b[1], *restrict b2 = b[2], *restrict b3 = b[3];
            for (int64_t i = i0; i < i1; i += 2) {
                const int rows = i + 1 < i1 ? 2 : 1;
                const float *restrict a0 = op->a + i * op->a_rs, *restrict a1 = a0 + (rows - 1) * op->a_rs;
                /* named accumulators: an array of them stays in memory at -O2 */
                tsrt__v8 s00 = {0}, s01 = {0}, s02 = {0}, s03 = {0}, s10 = {0}, s11 = {0}, s12 = {0}, s13 = {0};
                int64_t p = 0;
                if (rows == 2)
                    for (; p + 8 <= K; p += 8) {
                        tsrt__v8 x0, x1, q;
                        TSRT__V8_LOAD(x0, a0 + p);
                        TSRT__V8_LOAD(x1, a1 + p);
                        TSRT__V8_LOAD(q, b0 + p);
                        s00 += x0 * q, s10 += x1 * q;
                        TSRT__V8_LOAD(q, b1 + p);
                        s01 += x0 * q, s11 += x1 * q;
                        TSRT__V8_LOAD(q, b2 + p);
                        s02 += x0 * q, s12 += x1 * q;
                        TSRT__V8_LOAD(q, b3 + p);
                        s03 += x0 * q, s13 += x1 * q;
                    }
                else   /* a last odd row: no second row's FMAs */
                    for (; p + 8 <= K; p += 8) {
                        tsrt__v8 x0, q;
                        TSRT__V8_LOAD(x0, a0 + p);
                        TSRT__V8_LOAD(q, b0 + p);
                        s00 += x0 * q;
                        TSRT__V8_LOAD(q, b1 + p);
                        s01 += x0 * q;
                        TSRT__V8_LOAD(q, b2 + p);
                        s02 += x0 * q;
                        TSRT__V8_LOAD(q, b3 + p);
                        s03 += x0 * q;
                    }
                const tsrt__v8 acc[2][4] = {{s00, s01, s02, s03}, {s10, s11, s12, s13}};
                for (int r = 0; r < rows; r++) {
                    const float *restrict a = r ? a1 : a0;
                    float *restrict c = op->c + (i + r) * op->c_rs + jc + j;
                    for (int u = 0; u < w; u++) {
                        float t = tsrt__hsum8(acc[r][u]);
                        for (int64_t q = p; q < K; q++) t += a[q] * b[u][q];
                        c[u] = op->beta ? c[u] + t : t;
                    }
                }
            }
        }
        if (op->te) {
            const tsrt_tepi te = tsrt__te_at(op->te, op->epi_m0 + i0, op->epi_n0 + jc);
            tsrt__te_tile(&te, op->c + i0 * op->c_rs + jc, op->c_rs, i1 - i0, nb);
        }
        if (op->epi) tsrt__epi(op, i0, jc, i1 - i0, nb);
    }
}

/* Rows [i0, i1) x columns [j0, j1) of one product; pa/pb are the packed-A
 * and packed-B buffers (aligned, sized by tsrt_sgemm_workspace). */
TSRT__OUTLINE void tsrt__gemm_range(const tsrt__gop *op, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                             float *restrict pa, float *restrict pb)
{
    const int64_t K = op->k;
    if (i0 >= i1 || j0 >= j1) return;
    if (K <= 0) {
        tsrt__gemm_k0(op, i0, i1, j0, j1);
        return;
    }
    if (tsrt__is_rows_cols(op)) {
        tsrt__rows_cols(op, i0, i1, j0, j1);
        return;
    }
    float bt[2 * TSRT_KC] __attribute__((aligned(TSRT_ALIGN))); /* see tsrt__ukr_col */
    /* A read in place only for few columns (see tsrt__ukr_full_ua): with
     * many, each packed float serves enough multiply-adds, and one packed
     * stream reads better from L2 than six rows. */
    const int ua = op->a_direct && op->a_cs == 1 && j1 - j0 <= TSRT_UA_COLS;
    /* Equal blocks rather than full ones and a remainder: K = 576 runs as
     * 3 x 192, not 256 + 256 + 64 (a short block pays the C tile's load and
     * store for few FMAs), N = 3136 as 2 x 1568, not 3072 + 64. Never
     * larger than KC/NC, so the workspace bound holds. */
    const int64_t KB = tsrt__kb(K);
    const int64_t NB = tsrt__min(TSRT_NC, tsrt__rup(tsrt__cdiv(j1 - j0, tsrt__cdiv(j1 - j0, TSRT_NC)), TSRT_NR));
    /* no next-panel prefetch (TSRT_PF_QUIET_ROWS) */
    const int quiet = i1 - i0 <= TSRT_PF_QUIET_ROWS && K * (j1 - j0) * (int64_t)sizeof(float) <= TSRT_PF_HOT_BYTES;
    for (int64_t jc = j0; jc < j1; jc += NB) {
        const int64_t nc = tsrt__min(NB, j1 - jc);
        for (int64_t pc = 0; pc < K; pc += KB) {
            const int64_t kc = tsrt__min(KB, K - pc);
            const int beta = pc ? 1 : op->beta, last = pc + kc == K;
            for (int64_t ic = i0; ic < i1; ic += TSRT_MC) {
                const int64_t mc = tsrt__min(TSRT_MC, i1 - ic);
                int64_t je = 0; /* first column not yet given to the epilogue */
                for (int64_t jr = 0; jr < nc; jr += TSRT_NR) {
                    const int64_t nr = tsrt__min(TSRT_NR, nc - jr);
                    float *cj = op->c + ic * op->c_rs + (jc + jr) * op->c_cs;
                    /* this micro-panel of B: pre-packed (jc + jr is a
                     * multiple of NR), or packed here into pb */
                    float *bj = op->bp ? (float *)tsrt__bp_at(op->bp, op->n, pc, kc, jc + jr) : pb + jr * kc;
                    /* Panels are packed on first use: B's micro-panel in the
                     * first row block, A's in the first column strip, so
                     * the micro-kernel reads them back from L1. (Measured
                     * against packing the whole B panel first, against
                     * packing 4 or 16 micro-panels at a time and against
                     * software prefetch of the next micro-panel's source:
                     * all within the noise of this machine.) */
                    if (ic == i0 && !op->bp) tsrt__pack_b_op(op, pc, kc, jc + jr, nr, bj);
                    /* With A read in place, a last panel's columns that
                     * tsrt__ukr_ua takes as dot products (tsrt__ukr_col: a
                     * panel of 1 or 2, the 1 or 2 past 16, tsrt__ua_col0)
                     * made contiguous, once per row block. */
                    const int64_t bc0 = tsrt__ua_col0(nr);
                    const int cols = ua && bc0 >= 0;
                    if (cols && ic == i0) tsrt__b_cols(kc, bj + bc0, nr - bc0, bt);
                    /* The next micro-panel's source rows of a strided B,
                     * spread over this panel's micro-kernel calls. */
                    const int pfb = ic == i0 && jr + TSRT_NR < nc && !op->pack_b && !op->bp;
                    const int64_t pstep = tsrt__cdiv(kc, tsrt__cdiv(mc, TSRT_MR));
                    int64_t pf = 0;
                    /* The next micro-panel of a pre-packed B, likewise:
                     * it lies right after this one (tsrt__bp_at; after a
                     * K block's last panel, the next block's first). Each
                     * packed weight serves only M multiply-adds (128 in
                     * the transformers), so the weights stream from memory
                     * about as fast as the FMAs use them, and the hardware
                     * prefetcher, which sees each panel's lines once, runs
                     * too little ahead: 128 x 768 x 3072 with the weights
                     * in DRAM 87-91 -> 92-96 GFLOP/s (D35). A prefetch
                     * past the copy's end is harmless: it never faults.
                     * At most TSRT_PF_BURST lines per tile: with few rows
                     * (a classifier's M = 1) one tile would otherwise ask
                     * for a whole panel at once (up to 768 lines, far more
                     * than the misses a core keeps in flight), and the
                     * queue stalls the very loads the tile needs: 1 x 1000
                     * x 1280 with the weights in DRAM 0.31-0.38 -> 0.23-
                     * 0.27 ms on Zen 4, 128 x 768 x 3072 unchanged (D43).
                     * Blocks of MR rows or more may ask for more: at 16
                     * lines per tile only 160 of a 768-line panel were
                     * asked for over M = 128's ten tiles, and on a core
                     * with two FMA pipes the weights then arrived late
                     * (128 x 768 x 3072, 12 weight sets cycled: 4.63 ->
                     * 4.39-4.43 ms, D61). */
                    const char *pfn = op->bp && !quiet ? (const char *)(bj + kc * TSRT_NR) : NULL;
                    const int64_t pfn_lines = kc * TSRT_NR * (int64_t)sizeof(float) / 64;
                    const int64_t pfn_cap = mc >= TSRT_MR ? TSRT_PF_BURST_FULL : TSRT_PF_BURST;
                    const int64_t pfn_step = tsrt__min(pfn_cap, tsrt__cdiv(pfn_lines, tsrt__cdiv(mc, TSRT_MR)));
                    int64_t pfl = 0;
                    for (int64_t ir = 0, mr; ir < mc; ir += mr) {
                        mr = tsrt__tile_h(mc, ir);
                        const float *a = op->a + (ic + ir) * op->a_rs + pc * op->a_cs;
                        tsrt_tepi tt;
                        const tsrt_tepi *te = NULL;
                        if (last && op->te)
                            tt = tsrt__te_at(op->te, op->epi_m0 + ic + ir, op->epi_n0 + jc + jr), te = &tt;
                        /* the next tile: the next row tile of this panel */
                        if (te && te->res && ir + mr < mc)
                            tsrt__pf_rows(te->res + mr * te->res_rs, te->res_rs, tsrt__min(TSRT_MR, mc - ir - mr));
                        if (pfn && pfl < pfn_lines) {
                            const int64_t nl = tsrt__min(pfn_step, pfn_lines - pfl);
                            for (int64_t l = 0; l < nl; l++) __builtin_prefetch(pfn + (pfl + l) * 64, 0, TSRT_PFN_LOC);
                            pfl += nl;
                        }
                        if (pfb && pf < kc) {
                            const int64_t np = tsrt__min(pstep, kc - pf);
                            tsrt__prefetch_b_op(op, pc + pf, np, jc + jr + TSRT_NR);
                            pf += np;
                        }
                        if (ua && mr == TSRT_MR) {
                            /* A read in place; on the first column strip,
                             * the next micro-panel's rows come in meanwhile.
                             * (Prefetching the whole next block of A into L2
                             * over the later strips instead: 5-10% slower on
                             * 7x7 maps.) */
                            if (jr == 0 && ir + TSRT_MR < mc)
                                for (int64_t i = 0; i < tsrt__min(TSRT_MR, mc - ir - TSRT_MR); i++)
                                    for (int64_t p = 0; p < kc; p += 16)
                                        __builtin_prefetch(a + (TSRT_MR + i) * op->a_rs + p, 0, 3);
                            tsrt__ukr_ua(kc, a, op->a_rs, bj, cj + ir * op->c_rs, op->c_rs, op->c_cs, beta,
                                         nr, cols ? bt : NULL, te);
                            continue;
                        }
#ifdef TSRT_HAVE_UKRH
                        if (tsrt__is_tileh(mr)) {
                            if (ua)
                                tsrt__ukrh_any(mr, kc, a, op->a_rs, bj, cj + ir * op->c_rs, op->c_rs, op->c_cs, beta,
                                               nr, te);
                            else {
                                if (jr == 0) tsrt__pack_ah(a, op->a_rs, op->a_cs, mr, kc, pa + ir * kc);
                                tsrt__ukrh_any(mr, kc, pa + ir * kc, 0, bj, cj + ir * op->c_rs, op->c_rs, op->c_cs,
                                               beta, nr, te);
                            }
                            continue;
                        }
#endif
                        /* A product of one row: no MR-row tile. (Only then, so that
                         * a row's bits never depend on how threads split the rows.) */
                        if (op->m == 1 && op->c_cs == 1) {
                            tsrt__ukr_row(kc, a, op->a_cs, bj, cj + ir * op->c_rs, beta, nr, te);
                            continue;
                        }
                        if (jr == 0) tsrt__pack_a(a, op->a_rs, op->a_cs, mr, kc, pa + ir * kc);
                        tsrt__ukr(kc, pa + ir * kc, bj, cj + ir * op->c_rs, op->c_rs, op->c_cs, beta, mr,
                                  nr, te);
                    }
                    if (last && op->epi && (jr + nr == nc || jr + nr - je >= TSRT_EPI_COLS)) {
                        tsrt__epi(op, ic, jc + je, mc, jr + nr - je);
                        je = jr + nr;
                    }
                }
            }
        }
    }
}

/* ---- threading ------------------------------------------------------------------- */

/* A thread's share: row units [r0, r1) out of batch*cdiv(m, MR) (units
 * never straddle two products) and column units [c0, c1) out of
 * cdiv(n, NR). Every thread computes the same grid tm x tn = nth from the
 * shape alone, so no communication is needed.
 *
 * The grid minimises the cost of its busiest thread: the multiply-adds of
 * its rectangle plus the packing it causes, a packed float counted as `wa`
 * (A) or `wb` (B) multiply-adds (packing moves ~1 float per cycle, the
 * micro-kernel does 16 multiply-adds per cycle). A is packed once per NC
 * columns of the rectangle, B once per product the rectangle touches. The
 * rectangle counts the rows and columns that exist: a last unit of 4 of 32
 * columns is not a whole unit's work (a Winograd conv's 36 tiles split as
 * 32 + 4 columns ran 1.4x faster on 2 threads, not 2x). For 1024^3 and
 * 128x768x3072 on 2 threads this picks 1x2 (split N: each thread packs
 * half of B and all of A); with many small batched products it splits the
 * batch. */
typedef struct tsrt__share {
    int64_t r0, r1, c0, c1;
} tsrt__share;

/* Rows in row units [u0, u1) of `batch` products of m rows, U units each:
 * each product's last unit holds m - (U-1)*MR. */
static inline int64_t tsrt__unit_rows(int64_t u0, int64_t u1, int64_t U, int64_t m)
{
    return (u1 - u0) * TSRT_MR - (u1 / U - u0 / U) * (U * TSRT_MR - m);
}

static tsrt__share tsrt__split(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t wa, int64_t wb,
                               int ith, int nth)
{
    const int64_t U = tsrt__cdiv(m, TSRT_MR), RU = batch * U, CU = tsrt__cdiv(n, TSRT_NR);
    const int64_t kk = tsrt__max(k, 1);
    int64_t best_tm = 1;
    double best = -1.0;
    for (int tm = 1; tm <= nth; tm++) {
        if (nth % tm) continue;
        const int tn = nth / tm;
        /* the busiest thread's rows and columns, and the products its
         * rows touch */
        int64_t rmax = 0, cmax = 0, pmax = 0;
        for (int i = 0; i < tm; i++) {
            const int64_t u0 = RU * i / tm, u1 = RU * (i + 1) / tm;
            rmax = tsrt__max(rmax, tsrt__unit_rows(u0, u1, U, m));
            if (u1 > u0) pmax = tsrt__max(pmax, (u1 - 1) / U - u0 / U + 1);
        }
        for (int j = 0; j < tn; j++)
            cmax = tsrt__max(cmax, tsrt__min(CU * (j + 1) / tn * TSRT_NR, n) - CU * j / tn * TSRT_NR);
        const double rows = (double)rmax, cols = (double)cmax;
        const double cost = rows * cols * (double)kk +
                            (double)wa * rows * (double)kk * (double)tsrt__cdiv(cmax, TSRT_NC) +
                            (double)wb * cols * (double)kk * (double)pmax;
        if (best < 0 || cost < best) best = cost, best_tm = tm;
    }
    const int64_t tm = best_tm, tn = nth / best_tm, ti = ith / tn, tj = ith % tn;
    tsrt__share s = {RU * ti / tm, RU * (ti + 1) / tm, CU * tj / tn, CU * (tj + 1) / tn};
    return s;
}

/* ---- public entry points ----------------------------------------------------------- */

static size_t tsrt__ws_bytes(int64_t rows, int64_t cols, int64_t k, int64_t mr, int64_t nr, int64_t kc,
                             int64_t mcb, int64_t ncb)
{
    const int64_t kk = tsrt__max(1, tsrt__min(kc, k));
    const int64_t mc = tsrt__min(mcb, tsrt__rup(tsrt__max(rows, 1), mr));
    const int64_t nc = tsrt__min(ncb, tsrt__rup(tsrt__max(cols, 1), nr));
    /* Both panels start aligned: one TSRT_ALIGN of slack for the base and
     * one between them. */
    return (size_t)(mc * kk + nc * kk) * sizeof(float) + 2 * TSRT_ALIGN;
}

/* Bytes of workspace each thread needs for an m x n x k product (any
 * strides, any batch, any nth). The bound holds for every instruction set
 * the headers support, so it may be computed by code compiled with other
 * flags than the kernels' (the host's memory planner). At most about
 * 4.6 MiB; small products need little. */
TSRT_FN size_t tsrt_sgemm_workspace(int64_t m, int64_t n, int64_t k)
{
    /* The driver may transpose the problem (column-major C), so rows and
     * columns are bounded by the larger of m and n. */
    const int64_t d = tsrt__max(m, n);
    size_t s1 = tsrt__ws_bytes(d, d, k, TSRT_AVX2_MR, TSRT_AVX2_NR, TSRT_WS_KC, TSRT_WS_MC, TSRT_WS_NC);
    size_t s2 = tsrt__ws_bytes(d, d, k, TSRT_WS_MR, TSRT_WS_NR, TSRT_WS_KC, TSRT_WS_MC, TSRT_WS_NC);
    const size_t s3 = tsrt__amx_ws_bytes(m, n, k);
    s1 = s1 > s2 ? s1 : s2;
    return s1 > s3 ? s1 : s3;
}

/* Splits the aligned workspace into the packed-A and packed-B buffers for
 * products of at most rows x cols x k (the layout tsrt__ws_bytes sized). */
static void tsrt__ws_split(void *ws, int64_t rows, int64_t k, float **pa, float **pb)
{
    /* tsrt__ws_bytes's layout with TSRT_WS_KC, not this ISA's KC: packed
     * A then holds MR x K for any K <= TSRT_WS_KC (the pointwise path,
     * tsrt__pw_range, packs a whole-K micro-panel). */
    const int64_t kk = tsrt__max(1, tsrt__min(TSRT_WS_KC, k));
    const int64_t mc = tsrt__min(TSRT_MC, tsrt__rup(tsrt__max(rows, 1), TSRT_MR));
    *pa = tsrt__align(ws);
    *pb = tsrt__align(*pa + mc * kk);
}

/* Sets the operands of product `bi` (a, b or pack_b_ctx, c, epi_m0...) in
 * op; everything else in op is the same for every product. */
typedef void (*tsrt__bind_fn)(const void *ctx, int64_t bi, tsrt__gop *op);

/* Thread ith's share of `batch` products of op's shape (m x n x k, the
 * same for all): splits, then runs each product its share touches. wa/wb
 * weigh packing in the split (tsrt__split). ws: tsrt_sgemm_workspace. */
static void tsrt__gemm_batched(tsrt__gop *op, int64_t batch, tsrt__bind_fn bind, const void *ctx, int64_t wa,
                               int64_t wb, int ith, int nth, void *ws)
{
    if (op->m <= 0 || op->n <= 0 || batch <= 0) return;
    if (batch == 1) {
        bind(ctx, 0, op);
        if (tsrt__is_rows_cols(op)) {   /* no packing to share: each thread reads its own columns of B */
            const int64_t CU = tsrt__cdiv(op->n, TSRT_NR);
            const int64_t j0 = CU * ith / nth * TSRT_NR, j1 = tsrt__min(CU * (ith + 1) / nth * TSRT_NR, op->n);
            tsrt__rows_cols(op, 0, op->m, j0, j1);
            return;
        }
    }
    float *pa, *pb;
    tsrt__ws_split(ws, op->m, op->k, &pa, &pb);
    const tsrt__share s = tsrt__split(batch, op->m, op->n, op->k, wa, wb, ith, nth);
    const int64_t U = tsrt__cdiv(op->m, TSRT_MR);
    const int64_t j0 = s.c0 * TSRT_NR, j1 = tsrt__min(s.c1 * TSRT_NR, op->n);
    for (int64_t bi = s.r0 / U; bi < batch && bi * U < s.r1; bi++) {
        /* Rows of this product in the share: units [lo, hi) of MR rows. */
        const int64_t lo = tsrt__max(s.r0, bi * U) - bi * U, hi = tsrt__min(s.r1, (bi + 1) * U) - bi * U;
        bind(ctx, bi, op);
        tsrt__gemm_range(op, lo * TSRT_MR, tsrt__min(hi * TSRT_MR, op->m), j0, j1, pa, pb);
    }
}

/* Whether g->bp serves the driver: one B for every product, not swapped
 * (the same rule tsrt_sgemm_pack_b's caller relies on). */
static inline int tsrt__bp_usable(const tsrt_sgemm_args *g, int swapped)
{
    return g->bp && !swapped && (g->batch <= 1 || g->b_bs == 0);
}

/* tsrt_sgemm's binding: product bi of the batch, maybe transposed. */
static void tsrt__sgemm_bind(const void *ctx, int64_t bi, tsrt__gop *op)
{
    const tsrt_sgemm_args *g = ctx;
    const int batched = g->batch > 1;
    const float *a = g->a + (batched ? bi * g->a_bs : 0), *b = g->b + (batched ? bi * g->b_bs : 0);
    op->a = op->swapped ? b : a;
    op->b = op->swapped ? a : b;
    op->c = g->c + (batched ? bi * g->c_bs : 0);
    op->epi_m0 = bi * g->m;
    op->bp = tsrt__bp_usable(g, op->swapped) ? g->bp : NULL;
}


/* The header of every pre-packed B (tsrt_sgemm_pack_b): which layout
 * follows, TSRT__BP_HEAD bytes on (the fp32 micro-panels, or B's AMX
 * copy, tsrt_gemm_amx.h). */
enum { TSRT__BP_F32 = 1, TSRT__BP_AMX = 2 };
#define TSRT__BP_HEAD 64

#if TSRT_AMX
/* Rows from which a B over TSRT_AMX_BIG_B bytes gets an AMX copy. */
#ifndef TSRT_AMX_BIG_B_ROWS
#define TSRT_AMX_BIG_B_ROWS 48
#endif
#define TSRT_AMX_BIG_B (1 << 20)
/* Rows from which a smaller B gets one (D161). */
#ifndef TSRT_AMX_MIN_ROWS
#define TSRT_AMX_MIN_ROWS 24
#endif

/* Whether g's B gets an AMX copy when packed: products of at least 24
 * rows (M as packed: AMX computes 32-row blocks, so fewer rows waste most
 * of its work; a classifier's M = 1 stays on the FMA kernels; 16 to 23
 * rows ran 1.3-1.8x slower on AMX than on the FMA kernels, 16 x 768 x 192
 * 41 against 23 us, 20 x 576 x 192 36 against 25, D161), K of a whole k
 * block. A later run with fewer rows still reads the copy.
 * A B over 1 MiB (more than half of L2: in a model whose layers have such
 * weights, each is read from L3 or memory on every run) needs 48 rows: the
 * copy is 1.5 times the fp32 one, and with few rows the product waits on
 * the weights' stream, not on the multiply-adds. ConvNeXt-T's 36 x 1536 x
 * 384 and 36 x 384 x 1536 (a 6x6 map, 2.4 MiB weights, 1 thread) 0.52-0.71
 * -> 0.40-0.46 ms each; weights cycled through 12 copies, 768 x 3072: 24
 * rows AMX 1.46-1.58 ms, fp32 1.33; 32 and 48 alike; 64 AMX 2.04-2.08, fp32
 * 2.41-2.46 (D149). The transformers' weights of at most 1 MiB keep the
 * copy from 16 rows: warm in cache, AMX at 32 rows 190 us against 250. */
static int tsrt__amx_want(const tsrt_sgemm_args *g)
{
    const int big = g->n * g->k * (int64_t)sizeof(float) > TSRT_AMX_BIG_B;
    /* under 64 rows, a last 32-row block with fewer than 12 rows costs
     * AMX as much as a full one: 37 x 768 x 192 75 against 69 us, 40 rows
     * 57-76 against 51-60 on the FMA kernels; from 44 AMX wins again (56
     * rows 54-70 against 62-97), and with two full blocks or more it
     * wins whatever the last one holds (66 rows 60-90 against 77-102) */
    const int64_t last = g->m % 32;
    const int fill = g->m >= 64 || last == 0 || last >= 12;
    return g->m >= (big ? TSRT_AMX_BIG_B_ROWS : TSRT_AMX_MIN_ROWS) && fill && g->n >= 16 && g->k >= 32 &&
           tsrt__amx_ready();
}

/* Whether a product whose B is not packed ahead runs on AMX, B split on
 * every call (tsrt__amx_range): its shape pays for the splits
 * (tsrt__amx_per_call_shape) and Linux grants the tiles. */
static int tsrt__amx_worth(const tsrt_sgemm_args *g)
{
    return tsrt__amx_per_call_shape(g->m, g->n, g->k) && tsrt__amx_ready();
}

/* Thread ith's share of a product on AMX, with B's AMX copy bp or (NULL)
 * B split per call: panels of 32 columns, or 32-row blocks when there are
 * fewer panels than threads. Each thread splits the A of its rows and the
 * B of its panels, so the larger operand is the one divided: rows when A
 * is (4096 x 4096 x 256 at 2 threads, B split per call, split by panels:
 * 29.2 ms, A split by both threads, against 26.4 on the FMA kernels). With
 * B's copy made ahead too (D157): ConvNeXt's 576 x 96 x 384 took its
 * slower thread 148 us split as 1 + 2 of 3 panels, each thread splitting
 * all of A, against 92 us split by rows. A share whose A or B is not all finite goes through the fp32
 * driver (op, B packed per call). */
static void tsrt__amx_sgemm(const tsrt_sgemm_args *g, tsrt__gop *op, const uint16_t *bp, int ith, int nth,
                            void *ws)
{
    const int64_t P = tsrt__cdiv(g->n, 32), U = tsrt__cdiv(g->m, 32), batch = tsrt__max(g->batch, 1);
    int64_t r0 = 0, r1 = g->m, q0 = 0, q1 = P;
    if (P >= nth && (g->m <= g->n || U < nth))
        q0 = P * ith / nth, q1 = P * (ith + 1) / nth;
    else
        r0 = tsrt__min(g->m, U * ith / nth * 32), r1 = tsrt__min(g->m, U * (ith + 1) / nth * 32);
    if (r0 >= r1 || q0 >= q1) return;
    tsrt__amx_config();
    for (int64_t bi = 0; bi < batch; bi++) {
        tsrt__sgemm_bind(g, bi, op);
        if (tsrt__amx_range(g, bp, op->a, op->b, op->c, bi * g->m, r0, r1, q0, q1, ws)) {
            float *pa, *pb;
            tsrt__ws_split(ws, op->m, op->k, &pa, &pb);
            op->bp = NULL;
            tsrt__gemm_range(op, r0, r1, q0 * 32, tsrt__min(q1 * 32, g->n), pa, pb);
        }
    }
    _tile_release();
}
#endif

/* C = A·B (+ C) as described by g0, the part of thread ith of nth
 * (0 <= ith < nth). All nth calls together compute all of C and run the
 * epilogue exactly once on every element; they may run concurrently or one
 * after another. ws: tsrt_sgemm_workspace(m, n, k) bytes, private to the
 * call, any alignment. */
TSRT_FN void tsrt_sgemm(const tsrt_sgemm_args *g0, int ith, int nth, void *ws)
{
    /* A pre-packed B: its header says which layout follows; the fp32
     * driver reads only its own (without one it packs B per call). */
    tsrt_sgemm_args gl = *g0;
    const tsrt_sgemm_args *g = &gl;
    int layout = 0;
    if (gl.bp) {
        memcpy(&layout, gl.bp, sizeof layout);
        gl.bp = layout == TSRT__BP_F32 ? gl.bp + TSRT__BP_HEAD / sizeof(float) : NULL;
    }
    /* Column-major C: compute C^T = B^T A^T instead, so the micro-kernel
     * always stores rows of unit stride. */
    const int swap = g->c_cs != 1 && g->c_rs == 1;
    tsrt__gop op = {0};
    op.k = g->k;
    op.beta = g->beta;
    op.swapped = swap;
    op.te = swap ? NULL : g->te;
    /* the callback: what follows the tile epilogue, or all of it */
    op.epi = op.te ? op.te->rest : g->epi;
    op.epi_ctx = op.te ? op.te->rest_ctx : g->epi_ctx;
    if (!swap) {
        op.m = g->m, op.n = g->n;
        op.a_rs = g->a_rs, op.a_cs = g->a_cs, op.b_rs = g->b_rs, op.b_cs = g->b_cs;
        op.c_rs = g->c_rs, op.c_cs = g->c_cs;
    } else {
        op.m = g->n, op.n = g->m;
        op.a_rs = g->b_cs, op.a_cs = g->b_rs, op.b_rs = g->a_cs, op.b_cs = g->a_rs;
        op.c_rs = g->c_cs, op.c_cs = g->c_rs;
    }
#if TSRT_AMX
    /* B's AMX copy serves a row-major C and one B for every product */
    if (layout == TSRT__BP_AMX && g->k > 0 && g->c_cs == 1 && (g->batch <= 1 || g->b_bs == 0)) {
        tsrt__amx_sgemm(g, &op, (const uint16_t *)((const char *)g0->bp + TSRT__BP_HEAD), ith, nth, ws);
        return;
    }
    /* and a B not packed ahead, split per call, where the product is large */
    if (!layout && !swap && g->c_cs == 1 && tsrt__amx_worth(g)) {
        tsrt__amx_sgemm(g, &op, NULL, ith, nth, ws);
        return;
    }
#endif
    /* A pre-packed B is only read: its weight in the split is that of a
     * load, not of a copy. */
    const int64_t wb = tsrt__bp_usable(g, swap) ? 1 : 16;
    tsrt__gemm_batched(&op, g->batch > 1 ? g->batch : 1, tsrt__sgemm_bind, g, 16, wb, ith, nth, ws);
}

/* Bytes tsrt_sgemm_pack_b writes for g (its n and k): a header of
 * TSRT__BP_HEAD bytes, then cdiv(n, NR) panels of k x NR floats, the last
 * one zero-filled past n, or B's AMX copy (tsrt__amx_want), whichever is
 * larger. Depends on the instruction set (NR, AMX), so it is computed by
 * code compiled with the kernels' flags, not by the host. */
TSRT_FN size_t tsrt_sgemm_packed_b_size(const tsrt_sgemm_args *g)
{
    const int64_t n = tsrt__max(g->n, 0), k = tsrt__max(g->k, 0);
    size_t s = (size_t)(tsrt__cdiv(n, TSRT_NR) * TSRT_NR * k) * sizeof(float);
#if TSRT_AMX
    if (tsrt__amx_want(g) && tsrt__amx_bp_bytes(n, k) > s) s = tsrt__amx_bp_bytes(n, k);
#endif
    return TSRT__BP_HEAD + s;
}

/* Packs g's B (the first product's: a pre-packed B is one B for all) into
 * dst, tsrt_sgemm_packed_b_size(g) bytes aligned to 64 (what the
 * micro-kernel's aligned loads need): the header (thread 0 writes it),
 * then the micro-panels tsrt_sgemm reads through g->bp (tsrt__bp_at: per K
 * block of tsrt__kb(k) rows, every NR-column panel), or B's AMX copy
 * where tsrt__amx_want and every element is finite. The layout depends
 * on k, n, NR and B's values only, so every thread split reads it in
 * place. Panels [P*ith/nth, P*(ith+1)/nth) of each K block are the share
 * of thread ith of nth (P panels). */
TSRT_FN void tsrt_sgemm_pack_b(const tsrt_sgemm_args *g, float *dst, int ith, int nth)
{
    const int64_t n = g->n, K = g->k;
    if (nth <= 0) return;
    int layout = TSRT__BP_F32;
#if TSRT_AMX
    /* every thread scans all of B, so that all decide alike */
    if (tsrt__amx_want(g) && !tsrt__amx_b_bad(g)) layout = TSRT__BP_AMX;
#endif
    if (ith == 0) memcpy(dst, &layout, sizeof layout);
    if (K <= 0) return;
    float *bp = dst + TSRT__BP_HEAD / sizeof(float);
#if TSRT_AMX
    if (layout == TSRT__BP_AMX) {
        const int64_t P = tsrt__cdiv(n, 32);
        tsrt__amx_pack_b(g, (uint16_t *)bp, P * ith / nth, P * (ith + 1) / nth);
        return;
    }
#endif
    const int64_t P = tsrt__cdiv(tsrt__max(n, 0), TSRT_NR);
    const int64_t KB = tsrt__kb(K), p0 = P * ith / nth, p1 = P * (ith + 1) / nth;
    for (int64_t pc = 0; pc < K; pc += KB) {
        const int64_t kc = tsrt__min(KB, K - pc);
        for (int64_t j = p0; j < p1; j++)
            tsrt__pack_b(g->b + pc * g->b_rs + j * TSRT_NR * g->b_cs, g->b_rs, g->b_cs, kc,
                         tsrt__min(TSRT_NR, n - j * TSRT_NR), (float *)tsrt__bp_at(bp, n, pc, kc, j * TSRT_NR));
    }
}

#endif /* TSRT_GEMM_H */
