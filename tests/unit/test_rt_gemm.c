/* test_rt_gemm.c — tsrt_sgemm (src/kernels/cpu) against a naive loop
 * that accumulates in double: many shapes (1, odd, primes, sizes that cross
 * the MR/NR/KC/MC/NC blocks), every operand layout (row-major, transposed,
 * padded, fully strided), beta 0 and 1, batches, the epilogue (bias + relu,
 * called exactly once per element, on the block it claims), and nth = 1..3
 * run one ith after another. Which micro-kernel runs depends on the flags:
 * the default build tests the portable one, the -march=native build
 * (test_rt_gemm_native, when the compiler has it) the AVX2 or AVX-512 one.
 *
 * Tolerance: |got - ref| <= (k + 2) * FLT_EPSILON * sum_p |a_p b_p| (+ the
 * same for the bias and the old C): the classic bound for a k-term float
 * sum, tight enough that one missing or doubled term shows. */
#include "check.h"
#ifdef TSRT_TEST_AVX512_EMU
#include "avx512_emu.h" /* the AVX-512 kernel, emulated */
#endif
#include "kernels/cpu/tsrt_gemm.h"
#include "te_ref.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

#define TS_FRAND_SEED 88172645463325252ull
#include "frand.h"

/* A matrix layout: element (i, j) of batch b at off + b*bs + i*rs + j*cs. */
typedef struct { ptrdiff_t rs, cs, bs, size; } layout;

enum { ROW, COL, PADDED, STRIDED };

/* rows x cols in one of four layouts, batch copies (bs = 0 if shared). */
static layout make_layout(int kind, int64_t rows, int64_t cols, int64_t batch, int shared)
{
    layout l;
    switch (kind) {
    case ROW: l.rs = cols, l.cs = 1; break;
    case COL: l.rs = 1, l.cs = rows; break;
    case PADDED: l.rs = cols + 3, l.cs = 1; break;
    default: l.rs = 2, l.cs = 2 * rows + 1; break; /* neither stride is 1 */
    }
    ptrdiff_t one = (rows - 1) * l.rs + (cols - 1) * l.cs + 1;
    if (rows == 0 || cols == 0) one = 1;
    l.bs = shared ? 0 : one + 5;
    l.size = (batch - 1) * l.bs + one;
    return l;
}

typedef struct {
    const float *bias; /* per column of C */
    int relu;
    int64_t m, n;      /* of one product: the epilogue's m0 is b*m + row */
    const float *c0;   /* base of C, to check the pointer the callback gets */
    layout lc;
    int *count;        /* per logical element (b*m + i)*n + j */
    int bad;           /* blocks whose pointer or bounds were wrong */
} epi_ctx;

static void epi_bias_relu(void *vctx, float *c, ptrdiff_t rs, ptrdiff_t cs, int64_t m0, int64_t n0,
                          int64_t mb, int64_t nb)
{
    epi_ctx *e = vctx;
    const int64_t b = m0 / e->m, i0 = m0 % e->m;
    if (i0 + mb > e->m || n0 + nb > e->n || mb <= 0 || nb <= 0 || rs != e->lc.rs || cs != e->lc.cs ||
        c != e->c0 + b * e->lc.bs + i0 * e->lc.rs + n0 * e->lc.cs) {
        e->bad++;
        return;
    }
    for (int64_t i = 0; i < mb; i++)
        for (int64_t j = 0; j < nb; j++) {
            float *x = c + i * rs + j * cs;
            *x += e->bias[n0 + j];
            if (e->relu && *x < 0) *x = 0;
            e->count[((b * e->m) + i0 + i) * e->n + n0 + j]++;
        }
}

typedef struct {
    int64_t m, n, k, batch;
    int la, lb, lc;     /* layout kinds */
    int beta, epi, nth; /* epi: 0 none, 1 bias+relu */
    int b_shared;       /* batch stride 0 for B (one weight for all) */
} gcase;

/* Set while test_prepacked runs: B is packed first by tsrt_sgemm_pack_b
 * and passed as g.bp. */
static int prepack;

/* Runs one case; 1 when every element is within tolerance. `perturb` adds
 * an error to one element before checking (the checker's own test). */
static int run_case(const gcase *t, int perturb)
{
    const int64_t M = t->m, N = t->n, K = t->k, B = t->batch;
    layout la = make_layout(t->la, M, K, B, 0), lb = make_layout(t->lb, K, N, B, t->b_shared);
    layout lc = make_layout(t->lc, M, N, B, 0);
    float *a = malloc(sizeof(float) * (size_t)la.size), *b = malloc(sizeof(float) * (size_t)lb.size);
    float *c = malloc(sizeof(float) * (size_t)lc.size), *c_old = malloc(sizeof(float) * (size_t)lc.size);
    float *bias = malloc(sizeof(float) * (size_t)(N + 1));
    int *count = calloc((size_t)(B * M * N + 1), sizeof(int));
    for (ptrdiff_t i = 0; i < la.size; i++) a[i] = frand();
    for (ptrdiff_t i = 0; i < lb.size; i++) b[i] = frand();
    for (ptrdiff_t i = 0; i < lc.size; i++) c[i] = t->beta ? frand() : NAN;
    for (int64_t j = 0; j < N; j++) bias[j] = frand();
    memcpy(c_old, c, sizeof(float) * (size_t)lc.size);

    epi_ctx e = {bias, 1, M, N, c, lc, count, 0};
    tsrt_sgemm_args g = {.m = M, .n = N, .k = K, .a = a, .a_rs = la.rs, .a_cs = la.cs,
                         .b = b, .b_rs = lb.rs, .b_cs = lb.cs, .c = c, .c_rs = lc.rs, .c_cs = lc.cs,
                         .beta = t->beta, .epi = t->epi ? epi_bias_relu : NULL, .epi_ctx = &e,
                         .batch = B, .a_bs = la.bs, .b_bs = lb.bs, .c_bs = lc.bs};
    /* B packed by nth threads' shares; where the driver reads the packed
     * copy, the source is then poisoned (the reference reads a copy). */
    float *packed = NULL, *b_src = b;
    if (prepack) {
        const size_t psz = tsrt_sgemm_packed_b_size(&g);
        packed = aligned_alloc(64, (psz + 64) / 64 * 64);
        memset(packed, 0xFF, (psz + 64) / 64 * 64);   /* NaN: every float must be written */
        for (int ith = 0; ith < t->nth; ith++) tsrt_sgemm_pack_b(&g, packed, ith, t->nth);
        g.bp = packed;
        if (tsrt__bp_usable(&g, g.c_cs != 1 && g.c_rs == 1)) {
            b = malloc(sizeof(float) * (size_t)lb.size);
            memcpy(b, b_src, sizeof(float) * (size_t)lb.size);
            for (ptrdiff_t i = 0; i < lb.size; i++) b_src[i] = NAN;
        }
    }
    /* Exactly the advertised workspace, at an odd address, with a canary. */
    const size_t wsz = tsrt_sgemm_workspace(M, N, K);
    unsigned char *wbuf = malloc(wsz + 4 + 64);
    memset(wbuf + 4 + wsz, 0xA5, 64);
    for (int ith = 0; ith < t->nth; ith++) tsrt_sgemm(&g, ith, t->nth, wbuf + 4);
    int ok = 1;
    for (int i = 0; i < 64; i++) ok &= wbuf[4 + wsz + i] == 0xA5;
    if (!ok) fprintf(stderr, "  workspace overrun\n");
    if (perturb && B * M * N > 0) c[(B - 1) * lc.bs + (M - 1) * lc.rs + (N - 1) * lc.cs] += 1e-2f;

    int printed = 0;
    for (int64_t bi = 0; bi < B; bi++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0, abs_s = 0;
                for (int64_t p = 0; p < K; p++) {
                    double x = (double)a[bi * la.bs + i * la.rs + p * la.cs] *
                               (double)b[bi * lb.bs + p * lb.rs + j * lb.cs];
                    s += x, abs_s += fabs(x);
                }
                const ptrdiff_t ci = bi * lc.bs + i * lc.rs + j * lc.cs;
                if (t->beta) s += c_old[ci], abs_s += fabs(c_old[ci]);
                if (t->epi) {
                    s += bias[j], abs_s += fabs(bias[j]);
                    if (s < 0) s = 0;
                    if (count[(bi * M + i) * N + j] != 1) ok = 0;
                }
                const double err = fabs((double)c[ci] - s), tol = (double)(K + 2) * FLT_EPSILON * abs_s;
                if (!(err <= tol)) { /* NaN fails too */
                    ok = 0;
                    if (!perturb && !printed++)
                        fprintf(stderr, "  b=%lld i=%lld j=%lld got %g want %g (tol %g)\n", (long long)bi,
                                (long long)i, (long long)j, c[ci], s, tol);
                }
            }
    if (e.bad) ok = 0, fprintf(stderr, "  %d epilogue blocks with wrong pointer/bounds\n", e.bad);
    if (b != b_src) free(b_src);
    free(a), free(b), free(c), free(c_old), free(bias), free(count), free(wbuf), free(packed);
    return ok;
}

static void check_case(const gcase *t)
{
    int ok = run_case(t, 0);
    CHECK_MSG(ok, "m=%lld n=%lld k=%lld batch=%lld layouts %d%d%d beta=%d epi=%d nth=%d", (long long)t->m,
              (long long)t->n, (long long)t->k, (long long)t->batch, t->la, t->lb, t->lc, t->beta, t->epi,
              t->nth);
}

/* ---- the cases ------------------------------------------------------------ */

static const int64_t small_sizes[] = {1, 2, 3, 5, 6, 7, 8, 11, 13, 15, 16, 17, 23, 31, 32, 33, 47, 48, 61, 67};
#define NSMALL (int)(sizeof small_sizes / sizeof small_sizes[0])

/* Every small size on every axis, varying one axis at a time around a
 * random base; layouts, beta, epilogue and threads rotate through. */
static void test_small_shapes(void)
{
    int v = 0;
    for (int axis = 0; axis < 3; axis++)
        for (int s = 0; s < NSMALL; s++, v++) {
            int64_t d[3] = {small_sizes[(s * 7 + 3) % NSMALL], small_sizes[(s * 5 + 1) % NSMALL],
                            small_sizes[(s * 3 + 2) % NSMALL]};
            d[axis] = small_sizes[s];
            gcase t = {d[0], d[1], d[2], 1, v % 4, (v / 4) % 4, (v / 16) % 4, v % 2, (v / 2) % 2, 1 + v % 3, 0};
            check_case(&t);
        }
}

/* Every layout combination at one odd shape, each beta/epilogue/nth. */
static void test_layouts(void)
{
    for (int la = 0; la < 4; la++)
        for (int lb = 0; lb < 4; lb++)
            for (int lc = 0; lc < 4; lc++) {
                gcase t = {19, 37, 29, 1, la, lb, lc, (la + lb) % 2, (lb + lc) % 2, 1 + (la + lb + lc) % 3, 0};
                check_case(&t);
            }
}

/* Sizes that cross the cache blocks (KC = 256/192, MC = 144/168,
 * NC = 3072) and split unevenly over threads. */
static void test_blocking(void)
{
    const gcase cases[] = {
        {150, 70, 300, 1, ROW, ROW, ROW, 0, 1, 1, 0},
        {300, 45, 530, 1, ROW, ROW, ROW, 1, 1, 2, 0},
        {173, 129, 777, 1, COL, ROW, ROW, 0, 1, 3, 0},
        {45, 300, 400, 1, ROW, COL, COL, 1, 1, 2, 0},
        {7, 3100, 9, 1, ROW, ROW, ROW, 0, 1, 2, 0},
        {3100, 5, 9, 1, ROW, ROW, COL, 0, 1, 3, 0},
        {200, 200, 1, 1, ROW, ROW, ROW, 1, 1, 3, 0},
        {64, 64, 64, 1, ROW, ROW, ROW, 0, 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

/* K = 0 (C = 0 or unchanged, epilogue still runs), empty M or N. */
static void test_degenerate(void)
{
    const gcase cases[] = {
        {5, 7, 0, 1, ROW, ROW, ROW, 0, 1, 2, 0},
        {5, 7, 0, 1, ROW, ROW, COL, 1, 1, 3, 0},
        {0, 7, 5, 1, ROW, ROW, ROW, 0, 1, 2, 0},
        {5, 0, 5, 1, ROW, ROW, ROW, 0, 1, 2, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

/* Batches: separate and shared B, transposed C, threads splitting the
 * batch and the rows of one product. */
static void test_batched(void)
{
    const gcase cases[] = {
        {13, 17, 11, 3, ROW, ROW, ROW, 0, 1, 2, 0},
        {13, 17, 11, 4, ROW, COL, ROW, 1, 1, 3, 1},
        {6, 16, 8, 5, COL, ROW, COL, 0, 1, 2, 0},
        {33, 9, 40, 2, PADDED, STRIDED, PADDED, 1, 1, 3, 1},
        {1, 1, 1, 7, ROW, ROW, ROW, 0, 1, 3, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

/* One row times a column-major B (a linear layer at batch 1, weight as
 * PyTorch passes it: dot products read straight from B, D104): columns
 * in fours and a remainder, k in vectors of 8 and a remainder, across
 * the epilogue's column chunks, shared and separate B in a batch. */
static void test_row_times_cols(void)
{
    const int64_t ns[] = {1, 3, 4, 5, 63, 64, 65, 257, 1000};
    const int64_t ks[] = {1, 7, 8, 9, 300, 1283};
    /* one row, and the few rows of tsrt__rows_cols in pairs with an odd
     * last one; 17 rows are past it (the packed path) */
    const int64_t ms[] = {1, 2, 3, 16, 17};
    int v = 0;
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++, v++) {
            gcase t = {ms[v % 5], ns[i], ks[j], 1 + (v % 5 == 3) * 2, ROW, COL, ROW, v % 2, (v / 2) % 2,
                       1 + v % 3, v % 5 == 3 && v % 2};
            check_case(&t);
        }
}

/* B packed once (a constant weight): odd n and k, k across KC blocks,
 * a shared B in a batch, a transposed B, threads splitting rows and
 * columns; a separate B per product and a column-major C (the driver
 * swaps) ignore the packed copy. */
static void test_prepacked(void)
{
    const gcase cases[] = {
        {128, 768, 300, 1, ROW, ROW, ROW, 0, 1, 2, 0},
        {19, 37, 29, 1, ROW, COL, ROW, 1, 1, 3, 0},
        {150, 70, 777, 1, PADDED, STRIDED, ROW, 0, 1, 1, 0},
        {7, 3100, 9, 1, ROW, ROW, ROW, 0, 1, 2, 0},
        {13, 17, 11, 4, ROW, ROW, ROW, 1, 1, 3, 1},
        {13, 17, 11, 3, ROW, ROW, ROW, 0, 1, 2, 0},
        {45, 33, 40, 1, ROW, ROW, COL, 0, 1, 2, 0},
        {5, 7, 0, 1, ROW, ROW, ROW, 0, 1, 2, 0},
        {9, 2, 20, 1, ROW, ROW, ROW, 0, 1, 1, 0},
        /* one row (a classifier): the one-row kernel, K over several
         * blocks with a remainder mod 4, strided A, batches, threads */
        {1, 1000, 1283, 1, ROW, ROW, ROW, 0, 1, 2, 0},
        {1, 37, 29, 1, STRIDED, COL, ROW, 1, 1, 3, 0},
        {1, 17, 11, 3, PADDED, ROW, ROW, 1, 0, 2, 0},
        {1, 5, 2, 1, ROW, ROW, ROW, 0, 1, 1, 0},
        /* the AMX path where the machine has it (tsrt_gemm_amx.h): 32-row
         * blocks and 32-column panels with edges, K over its 768 chunks
         * with a tail, rows over its 128-row chunks, fewer panels than
         * threads (rows split), a strided A, a shared B in a batch */
        {45, 40, 800, 1, ROW, ROW, ROW, 1, 1, 2, 0},
        {70, 20, 64, 1, ROW, ROW, ROW, 0, 0, 3, 0},
        {300, 100, 1600, 1, STRIDED, ROW, ROW, 0, 1, 2, 0},
        {40, 33, 70, 3, ROW, ROW, ROW, 0, 1, 2, 1},
        {16, 16, 32, 1, PADDED, COL, PADDED, 1, 0, 1, 0},
    };
    prepack = 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
    prepack = 0;
}

/* A B not packed ahead on the AMX path (tsrt__amx_worth: large enough
 * products), split on every call: edges of blocks and panels, K over its
 * 768 chunks, rows over 128-row chunks, a gathered (column-major) and a
 * strided B, separate B per product in a batch, several column chunks of
 * B (70 x 1400 x 800: 44 panels, 42 per chunk), threads splitting
 * columns and (a taller A) rows. */
static void test_amx_per_call(void)
{
    const gcase cases[] = {
        {128, 128, 128, 1, ROW, ROW, ROW, 0, 1, 1, 0},
        {150, 200, 800, 1, ROW, ROW, ROW, 1, 1, 2, 0},
        {130, 140, 300, 1, PADDED, COL, PADDED, 0, 1, 3, 0},
        {140, 150, 140, 1, STRIDED, STRIDED, ROW, 1, 0, 2, 0},
        {130, 130, 160, 3, ROW, ROW, ROW, 1, 1, 2, 0},
        {70, 1400, 800, 1, ROW, ROW, ROW, 0, 1, 1, 0},
        {300, 140, 300, 1, ROW, ROW, ROW, 0, 1, 2, 0}, /* more rows than columns: threads split rows */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
#if TSRT_AMX
        const tsrt_sgemm_args g = {.m = cases[i].m, .n = cases[i].n, .k = cases[i].k};
        if (tsrt__amx_ready()) CHECK_MSG(tsrt__amx_worth(&g), "case %zu does not reach the AMX path", i);
#endif
        check_case(&cases[i]);
    }
}

/* Which pre-packed B gets an AMX copy (tsrt__amx_want, D149, D161): a B
 * over 1 MiB only with 48 rows or more, a smaller one from 24, and under
 * 64 rows only with a last 32-row block of 12 rows or more (or none);
 * both paths against the reference. */
static void test_amx_big_b(void)
{
    const gcase cases[] = {
        {36, 1536, 384, 1, ROW, ROW, ROW, 0, 1, 2, 0}, /* 2.25 MiB, 36 rows: the FMA kernels */
        {48, 1100, 300, 1, ROW, ROW, ROW, 1, 1, 1, 0}, /* 1.26 MiB, 48 rows: AMX */
        {32, 512, 512, 1, ROW, ROW, ROW, 0, 1, 2, 0},  /* 1 MiB, not over: AMX */
        {20, 576, 192, 1, ROW, ROW, ROW, 0, 1, 2, 0},  /* 20 rows: the FMA kernels */
        {24, 576, 192, 1, ROW, ROW, ROW, 1, 1, 1, 0},  /* 24 rows: AMX */
        {37, 768, 192, 1, ROW, ROW, ROW, 0, 1, 2, 0},  /* a last block of 5 rows: the FMA kernels */
        {44, 192, 768, 1, ROW, ROW, ROW, 0, 1, 1, 0},  /* a last block of 12: AMX */
        {70, 576, 192, 1, ROW, ROW, ROW, 1, 1, 2, 0},  /* two full blocks and 6 rows: AMX */
    };
    const int want[] = {0, 1, 1, 0, 1, 0, 1, 1};
    prepack = 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
#if TSRT_AMX
        const tsrt_sgemm_args g = {.m = cases[i].m, .n = cases[i].n, .k = cases[i].k};
        if (tsrt__amx_ready())
            CHECK_MSG(tsrt__amx_want(&g) == want[i], "case %zu: AMX copy %d, want %d", i, tsrt__amx_want(&g), want[i]);
#else
        (void)want;
#endif
        check_case(&cases[i]);
    }
    prepack = 0;
}

/* A non-finite operand on the AMX path (tsrt_gemm_amx.h): its pieces
 * cannot carry inf (inf - inf), so an A with one goes through the FMA
 * kernels (K in one chunk: found by the split; in several: by the check
 * ahead), a B packed ahead with one is packed for them, and a B split per
 * call (packed = 0, shapes large enough for AMX) sends the share to them
 * too. Either way the result is the plain product's, computed here in
 * double: the same infinities and NaNs, the finite elements within
 * tolerance. */
static int nonfinite_case(int64_t M, int64_t N, int64_t K, int where, int packed)
{
    float *a = malloc(sizeof(float) * (size_t)(M * K)), *b = malloc(sizeof(float) * (size_t)(K * N));
    float *c = malloc(sizeof(float) * (size_t)(M * N));
    for (int64_t i = 0; i < M * K; i++) a[i] = frand();
    for (int64_t i = 0; i < K * N; i++) b[i] = frand();
    if (where == 0) a[5 * K + 7] = INFINITY, a[M * K - 1] = NAN;
    else b[3 * N + 2] = -INFINITY;
    tsrt_sgemm_args g = {.m = M, .n = N, .k = K, .a = a, .a_rs = K, .a_cs = 1, .b = b, .b_rs = N, .b_cs = 1,
                         .c = c, .c_rs = N, .c_cs = 1};
    unsigned char *ws = malloc(tsrt_sgemm_workspace(M, N, K));
    float *bp = NULL;
    int ok = 1;
    if (packed) {
        bp = aligned_alloc(64, (tsrt_sgemm_packed_b_size(&g) + 64) / 64 * 64);
        for (int ith = 0; ith < 2; ith++) tsrt_sgemm_pack_b(&g, bp, ith, 2);
        int layout;
        memcpy(&layout, bp, sizeof layout);
        ok = where == 0 || layout == TSRT__BP_F32;
        g.bp = bp;
    }
    for (int ith = 0; ith < 2; ith++) tsrt_sgemm(&g, ith, 2, ws);
    int nonfinite = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double r = 0;
            for (int64_t p = 0; p < K; p++) r += (double)a[i * K + p] * (double)b[p * N + j];
            const float x = c[i * N + j];
            if (isnan(r) || isinf(r)) {
                nonfinite++;
                if (!(isnan(r) ? isnan(x) : (double)x == r)) ok = 0;
            } else if (!(fabs((double)x - r) <= 1e-4 * (double)K)) ok = 0;
        }
    if (!nonfinite) ok = 0; /* the case must reach the non-finite values */
    free(a), free(b), free(c), free(ws), free(bp);
    return ok;
}

static void test_nonfinite(void)
{
    /* packed ahead; then not: the last two large enough for AMX (one
     * chunk: the splits find the value; several: the checks ahead) */
    const int64_t shapes[][4] = {{40, 40, 100, 1}, {40, 70, 800, 1}, {200, 40, 64, 1},
                                 {130, 140, 200, 0}, {300, 140, 900, 0}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int where = 0; where < 2; where++)
            CHECK_MSG(nonfinite_case(shapes[s][0], shapes[s][1], shapes[s][2], where, (int)shapes[s][3]),
                      "%lldx%lldx%lld inf in %s, B %s", (long long)shapes[s][0], (long long)shapes[s][1],
                      (long long)shapes[s][2], where ? "B" : "A", shapes[s][3] ? "packed" : "per call");
}

/* A finite value within half a bf16 unit of FLT_MAX has a hi piece of
 * inf: the AMX path must treat it as one that does not split (found
 * before anything is written: with beta = 1 a second pass over rows
 * already accumulated would add C twice), in A split per call over
 * several chunks and in a B packed ahead. The result: the plain
 * product's, within tolerance (|b| < 1 keeps every sum finite). */
static int near_max_case(int64_t M, int64_t N, int64_t K, int in_b, int packed)
{
    float *a = malloc(sizeof(float) * (size_t)(M * K)), *b = malloc(sizeof(float) * (size_t)(K * N));
    float *c = malloc(sizeof(float) * (size_t)(M * N)), *c0 = malloc(sizeof(float) * (size_t)(M * N));
    for (int64_t i = 0; i < M * K; i++) a[i] = frand();
    for (int64_t i = 0; i < K * N; i++) b[i] = frand() * 0.5f;
    for (int64_t i = 0; i < M * N; i++) c[i] = c0[i] = frand();
    if (in_b) b[5 * N + 3] = 0.9999f * FLT_MAX, a[(M - 1) * K + 5] = 0.5f;
    else a[(M - 1) * K + 3] = 0.9999f * FLT_MAX;
    tsrt_sgemm_args g = {.m = M, .n = N, .k = K, .a = a, .a_rs = K, .a_cs = 1, .b = b, .b_rs = N, .b_cs = 1,
                         .c = c, .c_rs = N, .c_cs = 1, .beta = 1};
    unsigned char *ws = malloc(tsrt_sgemm_workspace(M, N, K));
    float *bp = NULL;
    if (packed) {
        bp = aligned_alloc(64, (tsrt_sgemm_packed_b_size(&g) + 64) / 64 * 64);
        for (int ith = 0; ith < 2; ith++) tsrt_sgemm_pack_b(&g, bp, ith, 2);
        g.bp = bp;
    }
    for (int ith = 0; ith < 2; ith++) tsrt_sgemm(&g, ith, 2, ws);
    int ok = 1;
    for (int64_t i = 0; i < M && ok; i++)
        for (int64_t j = 0; j < N; j++) {
            double r = c0[i * N + j], abs_r = fabs(r);
            for (int64_t p = 0; p < K; p++) {
                const double x = (double)a[i * K + p] * (double)b[p * N + j];
                r += x, abs_r += fabs(x);
            }
            if (!(fabs((double)c[i * N + j] - r) <= (double)(K + 2) * FLT_EPSILON * abs_r)) {
                fprintf(stderr, "  (%lld, %lld): got %g want %g\n", (long long)i, (long long)j, c[i * N + j], r);
                ok = 0;
                break;
            }
        }
    free(a), free(b), free(c), free(c0), free(ws), free(bp);
    return ok;
}

static void test_near_max(void)
{
    CHECK_MSG(near_max_case(300, 140, 900, 0, 0), "FLT_MAX-ish in A, B per call");
    CHECK_MSG(near_max_case(300, 140, 900, 1, 0), "FLT_MAX-ish in B, B per call");
    CHECK_MSG(near_max_case(300, 140, 900, 0, 1), "FLT_MAX-ish in A, B packed");
    CHECK_MSG(near_max_case(64, 70, 200, 1, 1), "FLT_MAX-ish in B, B packed");
}

/* The checker itself must fail on a wrong result. */
static void test_checker_fails(void)
{
    gcase t = {9, 10, 300, 1, ROW, ROW, ROW, 0, 0, 1, 0};
    CHECK(run_case(&t, 0) == 1);
    CHECK(run_case(&t, 1) == 0);
}

/* Every thread gets work for the shapes the brief names (1024^3,
 * 4096x4096x256, 128x768x3072), and the shares tile the index space. */
static void test_split(void)
{
    const int64_t shapes[][3] = {{1024, 1024, 1024}, {4096, 4096, 256}, {128, 768, 3072}, {67, 5, 9}};
    for (size_t s = 0; s < 4; s++)
        for (int nth = 1; nth <= 4; nth++) {
            const int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
            const int64_t RU = tsrt__cdiv(m, TSRT_MR), CU = tsrt__cdiv(n, TSRT_NR);
            int64_t area = 0, maxa = 0;
            for (int i = 0; i < nth; i++) {
                tsrt__share sh = tsrt__split(1, m, n, k, 16, 16, i, nth);
                int64_t a = (sh.r1 - sh.r0) * (sh.c1 - sh.c0);
                area += a;
                if (a > maxa) maxa = a;
                if (m > 64) CHECK_MSG(a > 0, "thread %d of %d idle for %lldx%lldx%lld", i, nth, (long long)m,
                                      (long long)n, (long long)k);
            }
            CHECK(area == RU * CU);
            /* Within 10% of even for the large shapes (67 x 5 is a few tiles). */
            if (s < 3) CHECK_MSG(maxa * nth <= RU * CU * 11 / 10, "imbalance %lld/%lld", (long long)maxa,
                                 (long long)(RU * CU));
        }
}

/* The split weighs the rows and columns that exist, not whole units: 64
 * rows x 36 columns (a Winograd conv's 36 tiles of a 24x24 map, 64
 * channels) on 2 threads is not cut into 32 + 4 columns, which leaves
 * one thread 89% of the multiply-adds. */
static void test_split_partial_units(void)
{
    const int64_t m = 64, n = 36, k = 36 * 64, U = tsrt__cdiv(m, TSRT_MR);
    int64_t busiest = 0, total = 0;
    for (int i = 0; i < 2; i++) {
        const tsrt__share sh = tsrt__split(1, m, n, k, 1, 8, i, 2);
        const int64_t rows = tsrt__unit_rows(sh.r0, sh.r1, U, m);
        const int64_t cols = tsrt__min(sh.c1 * TSRT_NR, n) - tsrt__min(sh.c0 * TSRT_NR, n);
        total += rows * cols;
        if (rows * cols > busiest) busiest = rows * cols;
    }
    CHECK(total == m * n);
    CHECK_MSG(busiest * 10 <= m * n * 6, "busiest thread %lld of %lld", (long long)busiest, (long long)(m * n));
    /* the row count of a range of units: product ends hold m - (U-1)*MR */
    CHECK(tsrt__unit_rows(0, U, U, m) == m);
    CHECK(tsrt__unit_rows(0, 3 * U, U, m) == 3 * m);
    CHECK(tsrt__unit_rows(U - 1, U + 1, U, m) == m - (U - 1) * TSRT_MR + TSRT_MR);
}

/* ---- the tile epilogue (tsrt_tepi) ------------------------------------------ */

/* One product with each subset of the terms (`terms` bits: row, col,
 * residual, max, min; max by +0, -0 or -1.5; by -0 the +0 of MAX_PZ
 * turns every clamped result's -0 into +0): through te and through the
 * callback alone, the results compared bit for bit. The terms carry a NaN
 * (row 1) and values around the clamp bounds; with te set the callback
 * must not run, except for a column-major C (the driver transposes and
 * te does not apply). */
static int te_case(int64_t M, int64_t N, int64_t K, int64_t B, int lb_kind, int lc_kind, int beta, int terms, int nth,
                   int packed)
{
    layout la = make_layout(ROW, M, K, B, 0), lb = make_layout(lb_kind, K, N, B, packed);
    layout lc = make_layout(lc_kind, M, N, B, 0);
    const int64_t R = B * M, Q = N;
    float *a = malloc(sizeof(float) * (size_t)la.size), *b = malloc(sizeof(float) * (size_t)lb.size);
    float *c1 = malloc(sizeof(float) * (size_t)lc.size), *c2 = malloc(sizeof(float) * (size_t)lc.size);
    float *row = malloc(sizeof(float) * (size_t)(R + 1)), *col = malloc(sizeof(float) * (size_t)(Q + 1));
    float *res = malloc(sizeof(float) * (size_t)(R * Q + 1));
    for (ptrdiff_t i = 0; i < la.size; i++) a[i] = frand();
    for (ptrdiff_t i = 0; i < lb.size; i++) b[i] = frand();
    for (ptrdiff_t i = 0; i < lc.size; i++) c1[i] = c2[i] = beta ? 3 * frand() : NAN;
    for (int64_t i = 0; i < R; i++) row[i] = i == 1 ? NAN : 2 * frand();
    for (int64_t j = 0; j < Q; j++) col[j] = 2 * frand();
    for (int64_t i = 0; i < R * Q; i++) res[i] = 4 * frand();
    tsrt_tepi te = {.row = terms & 1 ? row : NULL, .col = terms & 2 ? col : NULL, .res = terms & 4 ? res : NULL,
                    .res_rs = Q, .lo = terms & 32 ? -1.5f : terms & 1 ? 0.0f : -0.0f, .hi = 1.0f};
    te.clamp = (terms & 8 ? TSRT_TE_MAX | (terms & 32 ? 0 : TSRT_TE_MAX_PZ) : 0) | (terms & 16 ? TSRT_TE_MIN : 0);
    /* terms & 64: split, the terms then te.rest (D138) */
    te_ctx e1 = {&te, 0, terms & 64 ? 1 : 0}, e2 = e1, er = {&te, 0, 0};
    if (terms & 64) te.rest = epi_rest, te.rest_ctx = &er;
    tsrt_sgemm_args g = {.m = M, .n = N, .k = K, .a = a, .a_rs = la.rs, .a_cs = la.cs, .b = b, .b_rs = lb.rs,
                         .b_cs = lb.cs, .c = c1, .c_rs = lc.rs, .c_cs = lc.cs, .beta = beta, .epi = epi_te,
                         .epi_ctx = &e1, .batch = B, .a_bs = la.bs, .b_bs = lb.bs, .c_bs = lc.bs};
    unsigned char *ws = malloc(tsrt_sgemm_workspace(M, N, K) + 4);
    float *bp = NULL;
    if (packed) {
        bp = aligned_alloc(64, (tsrt_sgemm_packed_b_size(&g) + 64) / 64 * 64);
        tsrt_sgemm_pack_b(&g, bp, 0, 1);
        g.bp = bp; /* both runs: the product's bits depend on the path (AMX) */
    }
    for (int ith = 0; ith < nth; ith++) tsrt_sgemm(&g, ith, nth, ws + 4);   /* the callback alone */
    g.c = c2, g.epi_ctx = &e2, g.te = &te;
    for (int ith = 0; ith < nth; ith++) tsrt_sgemm(&g, ith, nth, ws + 4);   /* te */
    int ok = memcmp(c1, c2, sizeof(float) * (size_t)lc.size) == 0;
    const int swapped = lc.cs != 1 && lc.rs == 1;
    if (!swapped && M * N > 0 && e2.calls) ok = 0, fprintf(stderr, "  the callback ran %d times beside te\n", e2.calls);
    if (!swapped && M * N > 0 && (terms & 64) && !er.calls) ok = 0, fprintf(stderr, "  te.rest never ran\n");
    for (ptrdiff_t i = 0; !ok && i < lc.size; i++)
        if (memcmp(&c1[i], &c2[i], sizeof(float))) {
            fprintf(stderr, "  element %lld: callback %a, te %a\n", (long long)i, c1[i], c2[i]);
            break;
        }
    free(a), free(b), free(c1), free(c2), free(row), free(col), free(res), free(ws), free(bp);
    return ok;
}

static void test_tile_epilogue(void)
{
    /* edges in every direction, K across KC blocks (te only on the last),
     * K = 0, batches, column-major C, 1-3 threads, a pre-packed B; row
     * counts that end in 4-row tiles (M % 6 = 4, or 2 with M >= 8; with
     * MR 14, M % 14 = 4 or 8, or 2, 6, 10 with M >= 14 + that) */
    const int64_t shapes[][4] = {{6, 16, 8, 1},    {7, 17, 5, 1},   {13, 33, 300, 1}, {1, 2, 3, 1},
                                 {150, 70, 530, 1}, {5, 7, 0, 1},    {13, 17, 11, 3},  {128, 48, 64, 1},
                                 {16, 40, 20, 1},   {32, 17, 9, 2},  {10, 16, 300, 1}, {4, 33, 7, 1},
                                 {1, 45, 301, 1},   {24, 40, 30, 1}, {20, 33, 5, 2},   {36, 31, 400, 1},
                                 {130, 64, 16, 1}, {130, 140, 200, 1}, {1, 70, 9, 1}, {1, 300, 77, 2}};
    int v = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int terms = 1; terms < 64; terms += 1 + (int)(s % 3), v++) {
            const int lc = v % 5 == 4 ? COL : v % 5 == 3 ? PADDED : ROW, beta = v % 2, nth = 1 + v % 3;
            const int packed = v % 4 == 1 && shapes[s][3] == 1;
            const int lb = !packed && v % 3 == 2 ? COL : ROW;   /* COL: a row times columns (m = 1) */
            const int tt = terms | (v % 4 == 2 ? 64 : 0);       /* a quarter split (D138) */
            CHECK_MSG(te_case(shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], lb, lc, beta, tt, nth,
                              packed),
                      "te %lldx%lldx%lld batch %lld B layout %d C layout %d beta %d terms %d nth %d packed %d",
                      (long long)shapes[s][0], (long long)shapes[s][1], (long long)shapes[s][2],
                      (long long)shapes[s][3], lb, lc, beta, tt, nth, packed);
        }
}

int main(void)
{
    printf("tsrt ISA %d (0 generic, 1 AVX2, 2 AVX-512), MR=%d NR=%d\n", TSRT_ISA, TSRT_MR, TSRT_NR);
#if TSRT_AMX
    printf("AMX: compiled in, %s\n", tsrt__amx_ready() ? "usable (pre-packed and large products run on it)" : "declined (TESSERA_NO_AMX, or the OS refused)");
#else
    printf("AMX: not compiled in\n");
#endif
    test_checker_fails();
    test_small_shapes();
    test_layouts();
    test_blocking();
    test_degenerate();
    test_batched();
    test_row_times_cols();
    test_prepacked();
    test_amx_per_call();
    test_amx_big_b();
    test_nonfinite();
    test_near_max();
    test_split();
    test_split_partial_units();
    test_tile_epilogue();
    return check_report();
}
