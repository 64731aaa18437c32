/* tsrt_ukernel.h — the register-blocked SGEMM micro-kernels.
 *
 * One kernel per instruction set, selected by TSRT_ISA (tsrt_common.h);
 * the AVX-512 ones are in tsrt_ukernel_avx512.h:
 *
 *   tsrt__ukr_full(k, a, b, c, rs, beta)
 *     C[i][j] = (beta ? C[i][j] : 0) + sum_p A[p][i] * B[p][j]
 *     for the full MR x NR tile, C[i][j] = c[i*rs + j] (unit column stride);
 *     a is a packed A micro-panel (a[p*MR + i]), b a packed B micro-panel
 *     (b[p*NR + j], 64-byte aligned). With beta == 0, C is not read (NaN or
 *     garbage there is overwritten, as BLAS does for beta = 0).
 *
 *   tsrt__ukr(k, a, b, c, rs, cs, beta, mr, nr)
 *     the same for an mr x nr corner (mr <= MR, nr <= NR) and any strides:
 *     edge tiles go through a tile on the stack.
 *
 * All kernels add the products of one tile in the same order (p ascending,
 * one running sum per element) so they differ only by FMA vs. separate
 * multiply/add rounding. */
#ifndef TSRT_UKERNEL_H
#define TSRT_UKERNEL_H

#ifndef TSRT_COMMON_H
#include "tsrt_common.h"
#endif

/* ==== AVX2 + FMA: 6 x 16 ================================================== */
#if TSRT_ISA == TSRT_ISA_AVX2

/* The k loop is GNU inline asm (gcc and clang both take it): from
 * intrinsics gcc 12 folds B loads into FMA memory operands, reloading each B
 * vector up to six times, and rotates accumulators through extra moves —
 * 76 GFLOP/s against clang's 95 on the same source (Zen 3, panels in L1).
 * The asm pins the schedule; the compiler still picks the registers (the
 * 12 accumulators are "=x" operands, so loads and stores of C stay C).
 *
 * One k step: two B vectors, six broadcasts of A, twelve FMAs. Two
 * broadcast registers alternate so a broadcast never waits for the FMAs of
 * the previous row. a0..a5 are the memory operands of the six A elements
 * (rows 0..5 of column p), b0/b1 the byte offsets of the two B vectors
 * (B advances 64 bytes per step). */
#define TSRT__AVX2_ASM_STEP(a0, a1, a2, a3, a4, a5, b0, b1)                   \
    "vmovaps " b0 "(%[b]), %[v0]\n\t"                                        \
    "vmovaps " b1 "(%[b]), %[v1]\n\t"                                        \
    TSRT__AVX2_ASM_FMA6(a0, a1, a2, a3, a4, a5)
/* The same step with the two B vectors at any memory operands m0, m1
 * (B read in place: unaligned, rows ldb apart). */
#define TSRT__AVX2_ASM_STEPM(a0, a1, a2, a3, a4, a5, m0, m1)                  \
    "vmovups " m0 ", %[v0]\n\t"                                              \
    "vmovups " m1 ", %[v1]\n\t"                                              \
    TSRT__AVX2_ASM_FMA6(a0, a1, a2, a3, a4, a5)
/* A step's broadcasts of A and its twelve FMAs, B in v0 and v1. */
#define TSRT__AVX2_ASM_FMA6(a0, a1, a2, a3, a4, a5)                           \
    "vbroadcastss " a0 ", %[x]\n\t"                                          \
    "vbroadcastss " a1 ", %[y]\n\t"                                          \
    "vfmadd231ps %[v0], %[x], %[c00]\n\t"                                    \
    "vfmadd231ps %[v1], %[x], %[c01]\n\t"                                    \
    "vbroadcastss " a2 ", %[x]\n\t"                                          \
    "vfmadd231ps %[v0], %[y], %[c10]\n\t"                                    \
    "vfmadd231ps %[v1], %[y], %[c11]\n\t"                                    \
    "vbroadcastss " a3 ", %[y]\n\t"                                          \
    "vfmadd231ps %[v0], %[x], %[c20]\n\t"                                    \
    "vfmadd231ps %[v1], %[x], %[c21]\n\t"                                    \
    "vbroadcastss " a4 ", %[x]\n\t"                                          \
    "vfmadd231ps %[v0], %[y], %[c30]\n\t"                                    \
    "vfmadd231ps %[v1], %[y], %[c31]\n\t"                                    \
    "vbroadcastss " a5 ", %[y]\n\t"                                          \
    "vfmadd231ps %[v0], %[x], %[c40]\n\t"                                    \
    "vfmadd231ps %[v1], %[x], %[c41]\n\t"                                    \
    "vfmadd231ps %[v0], %[y], %[c50]\n\t"                                    \
    "vfmadd231ps %[v1], %[y], %[c51]\n\t"

/* Expands the address-list macros below before TSRT__AVX2_ASM_STEP
 * splits its arguments. */
#define TSRT__AVX2_STEP(...) TSRT__AVX2_ASM_STEP(__VA_ARGS__)
#define TSRT__AVX2_STEPM(...) TSRT__AVX2_ASM_STEPM(__VA_ARGS__)

/* Packed A (a[p*6 + i], 24 bytes per step): the six byte offsets. */
/* The 12 accumulators c00..c51 of a 6x16 tile set to 0. */
#define TSRT__AVX2_ZERO_C                                                     \
    "vxorps %[c00], %[c00], %[c00]\n\t"                                       \
    "vxorps %[c01], %[c01], %[c01]\n\t"                                       \
    "vxorps %[c10], %[c10], %[c10]\n\t"                                       \
    "vxorps %[c11], %[c11], %[c11]\n\t"                                       \
    "vxorps %[c20], %[c20], %[c20]\n\t"                                       \
    "vxorps %[c21], %[c21], %[c21]\n\t"                                       \
    "vxorps %[c30], %[c30], %[c30]\n\t"                                       \
    "vxorps %[c31], %[c31], %[c31]\n\t"                                       \
    "vxorps %[c40], %[c40], %[c40]\n\t"                                       \
    "vxorps %[c41], %[c41], %[c41]\n\t"                                       \
    "vxorps %[c50], %[c50], %[c50]\n\t"                                       \
    "vxorps %[c51], %[c51], %[c51]\n\t"

#define TSRT__AVX2_PA(o0, o1, o2, o3, o4, o5)                                 \
    o0 "(%[a])", o1 "(%[a])", o2 "(%[a])", o3 "(%[a])", o4 "(%[a])", o5 "(%[a])"
/* Unpacked A (row i at a + i*lda, contiguous in p, 4 bytes per step): rows
 * 0-2 from %[a], rows 3-5 from %[a3] = a + 3*lda, %[r] = lda in bytes;
 * d is the byte offset of the step within each row. */
#define TSRT__AVX2_UA(d)                                                      \
    d "(%[a])", d "(%[a],%[r],1)", d "(%[a],%[r],2)", d "(%[a3])", d "(%[a3],%[r],1)", d "(%[a3],%[r],2)"
/* The k loop of a kernel reading A in place: S(d, m0, m1) is one step,
 * d the byte offset of its A column within the rows, m0/m1 the memory
 * operands of its two B vectors (Pi, Qi for step i of four per branch);
 * ADV4 and ADV1 move B on by four steps and by one (the k % 4 left). */
#define TSRT__AVX2_LOOP_AB(S, P0, Q0, P1, Q1, P2, Q2, P3, Q3, ADV4, ADV1)    \
    "test %[k4], %[k4]\n\t"                                                   \
    "je 2f\n\t"                                                               \
    ".p2align 5\n"                                                            \
    "1:\n\t"                                                                  \
    S("0", P0, Q0) S("4", P1, Q1) S("8", P2, Q2) S("12", P3, Q3)              \
    "add $16, %[a]\n\t"                                                       \
    "add $16, %[a3]\n\t"                                                      \
    ADV4                                                                      \
    "dec %[k4]\n\t"                                                           \
    "jne 1b\n"                                                                \
    "2:\n\t"                                                                  \
    "test %[k1], %[k1]\n\t"                                                   \
    "je 4f\n"                                                                 \
    "3:\n\t"                                                                  \
    S("0", P0, Q0)                                                            \
    "add $4, %[a]\n\t"                                                        \
    "add $4, %[a3]\n\t"                                                       \
    ADV1                                                                      \
    "dec %[k1]\n\t"                                                           \
    "jne 3b\n"                                                                \
    "4:\n\t"
/* B a packed micro-panel (64 bytes per step) */
#define TSRT__AVX2_LOOP_UA(S)                                                 \
    TSRT__AVX2_LOOP_AB(S, "0(%[b])", "32(%[b])", "64(%[b])", "96(%[b])", "128(%[b])", "160(%[b])", \
                       "192(%[b])", "224(%[b])", "add $256, %[b]\n\t", "add $64, %[b]\n\t")
/* B read in place too (row p of its 16 columns at b + p*ldb: a 1x1
 * conv's input, D191): %[lb] = ldb in bytes, %[b3] = b + 3*ldb. */
#define TSRT__AVX2_LOOP_UAB(S)                                                \
    TSRT__AVX2_LOOP_AB(S, "(%[b])", "32(%[b])", "(%[b],%[lb],1)", "32(%[b],%[lb],1)", "(%[b],%[lb],2)", \
                       "32(%[b],%[lb],2)", "(%[b3])", "32(%[b3])",                                     \
                       "lea (%[b],%[lb],4), %[b]\n\t" "lea (%[b3],%[lb],4), %[b3]\n\t", "add %[lb], %[b]\n\t")
#define TSRT__AVX2_S16UA(d, m0, m1) TSRT__AVX2_STEPM(TSRT__AVX2_UA(d), m0, m1)

/* The end of a 6 x 16 tile, on the accumulators c00..c51 (row i: ci0 =
 * columns 0-7, ci1 = 8-15): the old C added when accumulating, then the
 * tile epilogue in registers, each of its terms tested once per tile (as
 * tsrt__te_tile computes it: vmaxps/vminps with the constant first keep a
 * NaN second operand), then the stores. Macros over the twelve named
 * variables: gcc kept an array of them (or pointers to them) on the stack. */
/* F on every row; a list of blocks: brace it under an if */
#define TSRT__AVX2_ALL(F) F(0, c00, c01) F(1, c10, c11) F(2, c20, c21) F(3, c30, c31) F(4, c40, c41) F(5, c50, c51)
/* one row: the M = 1 kernel (tsrt__ukr_row, tsrt_gemm.h) */
#define TSRT__AVX2_ALL1(F) F(0, c00, c01)
#define TSRT__AVX2_ADD2(i, r0, r1, p)                                         \
    {                                                                         \
        tsrt__v8 u0_, u1_;                                                    \
        TSRT__V8_LOAD(u0_, (p));                                              \
        TSRT__V8_LOAD(u1_, (p) + 8);                                          \
        r0 += u0_;                                                            \
        r1 += u1_;                                                            \
    }
#define TSRT__AVX2_OLD(i, r0, r1) TSRT__AVX2_ADD2(i, r0, r1, c + (i) * rs)
#define TSRT__AVX2_RES(i, r0, r1) TSRT__AVX2_ADD2(i, r0, r1, te->res + (i) * te->res_rs)
#define TSRT__AVX2_ROWB(i, r0, r1) { const float b_ = te->row[i]; r0 += b_; r1 += b_; }
#define TSRT__AVX2_COLB(i, r0, r1) { r0 += q0_; r1 += q1_; }
#define TSRT__AVX2_MAX(i, r0, r1) { r0 = __builtin_ia32_maxps256(k_, r0); r1 = __builtin_ia32_maxps256(k_, r1); }
#define TSRT__AVX2_PZ(i, r0, r1) { r0 += 0.0f; r1 += 0.0f; }
#define TSRT__AVX2_MIN(i, r0, r1) { r0 = __builtin_ia32_minps256(k_, r0); r1 = __builtin_ia32_minps256(k_, r1); }
#define TSRT__AVX2_PUT(i, r0, r1) { TSRT__V8_STORE(c + (i) * rs, r0); TSRT__V8_STORE(c + (i) * rs + 8, r1); }
#define TSRT__AVX2_FINISH_ROWS(ALL)                                           \
    do {                                                                      \
        if (beta) { ALL(TSRT__AVX2_OLD) }                          \
        if (te) {                                                             \
            if (te->row) { ALL(TSRT__AVX2_ROWB) }                  \
            if (te->col) {                                                    \
                tsrt__v8 q0_, q1_;                                            \
                TSRT__V8_LOAD(q0_, te->col);                                  \
                TSRT__V8_LOAD(q1_, te->col + 8);                              \
                ALL(TSRT__AVX2_COLB)                               \
            }                                                                 \
            if (te->res) { ALL(TSRT__AVX2_RES) }                   \
            if (te->clamp & TSRT_TE_MAX) {                                    \
                const tsrt__v8 k_ = (tsrt__v8){0} + te->lo;                   \
                ALL(TSRT__AVX2_MAX)                                \
                if (te->clamp & TSRT_TE_MAX_PZ) { ALL(TSRT__AVX2_PZ) } \
            }                                                                 \
            if (te->clamp & TSRT_TE_MIN) {                                    \
                const tsrt__v8 k_ = (tsrt__v8){0} + te->hi;                   \
                ALL(TSRT__AVX2_MIN)                                \
            }                                                                 \
        }                                                                     \
        ALL(TSRT__AVX2_PUT)                                        \
    } while (0)
#define TSRT__AVX2_FINISH TSRT__AVX2_FINISH_ROWS(TSRT__AVX2_ALL)

TSRT__OUTLINE void tsrt__ukr_full(int64_t k, const float *restrict a, const float *restrict b,
                                  float *restrict c, ptrdiff_t rs, int beta, const tsrt_tepi *te)
{
    /* tsrt__v8 is 32 bytes: with AVX the "x" constraint gives it a ymm. */
    tsrt__v8 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
    /* C is touched only after the k loop: start bringing its rows in now so
     * the final loads/stores do not miss (the rows are 64 bytes: one or two
     * lines each). */
    for (int i = 0; i < 6; i++) {
        __builtin_prefetch(c + i * rs, 1, 3);
        __builtin_prefetch(c + i * rs + 15, 1, 3);
    }
    int64_t k4 = k / 4, k1 = k % 4;
    tsrt__v8 v0, v1, x, y; /* scratch registers of the asm */
    /* The accumulators are zeroed inside the asm: as "=x" outputs they
     * count once against gcc's limit of 30 operands, as "+x" twice. */
    __asm__ volatile(
        TSRT__AVX2_ZERO_C
        "test %[k4], %[k4]\n\t"
        "je 2f\n\t"
        ".p2align 5\n"
        "1:\n\t" /* unrolled by 4: one branch per 48 FMAs */
        TSRT__AVX2_STEP(TSRT__AVX2_PA("0", "4", "8", "12", "16", "20"), "0", "32")
        TSRT__AVX2_STEP(TSRT__AVX2_PA("24", "28", "32", "36", "40", "44"), "64", "96")
        TSRT__AVX2_STEP(TSRT__AVX2_PA("48", "52", "56", "60", "64", "68"), "128", "160")
        TSRT__AVX2_STEP(TSRT__AVX2_PA("72", "76", "80", "84", "88", "92"), "192", "224")
        "add $96, %[a]\n\t"
        "add $256, %[b]\n\t"
        "dec %[k4]\n\t"
        "jne 1b\n"
        "2:\n\t"
        "test %[k1], %[k1]\n\t"
        "je 4f\n"
        "3:\n\t"
        TSRT__AVX2_STEP(TSRT__AVX2_PA("0", "4", "8", "12", "16", "20"), "0", "32")
        "add $24, %[a]\n\t"
        "add $64, %[b]\n\t"
        "dec %[k1]\n\t"
        "jne 3b\n"
        "4:\n\t"
        : [a] "+r"(a), [b] "+r"(b), [k4] "+r"(k4), [k1] "+r"(k1),
          [c00] "=&x"(c00), [c01] "=&x"(c01), [c10] "=&x"(c10), [c11] "=&x"(c11),
          [c20] "=&x"(c20), [c21] "=&x"(c21), [c30] "=&x"(c30), [c31] "=&x"(c31),
          [c40] "=&x"(c40), [c41] "=&x"(c41), [c50] "=&x"(c50), [c51] "=&x"(c51),
          [v0] "=&x"(v0), [v1] "=&x"(v1), [x] "=&x"(x), [y] "=&x"(y)
        :
        : "cc", "memory");
    TSRT__AVX2_FINISH;
}

/* The same tile with A unpacked: row i of the micro-panel at a + i*lda,
 * contiguous in p (a row-major weight matrix read in place). For products
 * whose other dimension is small, packing A would cost as much as using it.
 * Six read streams instead of one; the broadcasts take the addressing
 * modes base + index*{1,2}. */
TSRT__OUTLINE void tsrt__ukr_full_ua(int64_t k, const float *restrict a, ptrdiff_t lda, const float *restrict b,
                                     float *restrict c, ptrdiff_t rs, int beta, const tsrt_tepi *te)
{
    tsrt__v8 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
    for (int i = 0; i < 6; i++) {
        __builtin_prefetch(c + i * rs, 1, 3);
        __builtin_prefetch(c + i * rs + 15, 1, 3);
    }
    int64_t k4 = k / 4, k1 = k % 4;
    const float *a3 = a + 3 * lda;
    const ptrdiff_t r = lda * (ptrdiff_t)sizeof(float);
    tsrt__v8 v0, v1, x, y;
    __asm__ volatile(
        TSRT__AVX2_ZERO_C
        TSRT__AVX2_LOOP_UA(TSRT__AVX2_S16UA)
        : [a] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [k4] "+r"(k4), [k1] "+r"(k1),
          [c00] "=&x"(c00), [c01] "=&x"(c01), [c10] "=&x"(c10), [c11] "=&x"(c11),
          [c20] "=&x"(c20), [c21] "=&x"(c21), [c30] "=&x"(c30), [c31] "=&x"(c31),
          [c40] "=&x"(c40), [c41] "=&x"(c41), [c50] "=&x"(c50), [c51] "=&x"(c51),
          [v0] "=&x"(v0), [v1] "=&x"(v1), [x] "=&x"(x), [y] "=&x"(y)
        : [r] "r"(r)
        : "cc", "memory");
    TSRT__AVX2_FINISH;
}

/* 6 x 8 with A read in place: the left half of a packed B micro-panel
 * (B still advances 64 bytes per step), for a last column panel of at
 * most 8 columns (N = 196 = 12*16 + 4). Two sets of six accumulators, for
 * even and odd p, keep 12 FMA chains in flight; they are added at the end
 * (a different summation order than the 6x16 kernel's, within the same
 * error bound). */
#define TSRT__AVX2_ASM_STEP8(a0, a1, a2, a3, a4, a5, b0, s)                   \
    "vmovaps " b0 "(%[b]), %[v0]\n\t"                                        \
    "vbroadcastss " a0 ", %[x]\n\t"                                          \
    "vbroadcastss " a1 ", %[y]\n\t"                                          \
    "vfmadd231ps %[v0], %[x], %[c0" s "]\n\t"                                \
    "vbroadcastss " a2 ", %[x]\n\t"                                          \
    "vfmadd231ps %[v0], %[y], %[c1" s "]\n\t"                                \
    "vbroadcastss " a3 ", %[y]\n\t"                                          \
    "vfmadd231ps %[v0], %[x], %[c2" s "]\n\t"                                \
    "vbroadcastss " a4 ", %[x]\n\t"                                          \
    "vfmadd231ps %[v0], %[y], %[c3" s "]\n\t"                                \
    "vbroadcastss " a5 ", %[y]\n\t"                                          \
    "vfmadd231ps %[v0], %[x], %[c4" s "]\n\t"                                \
    "vfmadd231ps %[v0], %[y], %[c5" s "]\n\t"
#define TSRT__AVX2_STEP8(...) TSRT__AVX2_ASM_STEP8(__VA_ARGS__)

#define TSRT__AVX2_ROW8(i, r)                                                 \
    do {                                                                      \
        float *ci_ = c + (i) * rs;                                            \
        if (beta) {                                                           \
            tsrt__v8 o_;                                                      \
            TSRT__V8_LOAD(o_, ci_);                                           \
            r += o_;                                                          \
        }                                                                     \
        TSRT__V8_STORE(ci_, r);                                               \
    } while (0)

#define TSRT_HAVE_UKR8 1
TSRT__OUTLINE void tsrt__ukr_full_ua8(int64_t k, const float *restrict a, ptrdiff_t lda, const float *restrict b,
                                      float *restrict c, ptrdiff_t rs, int beta)
{
    tsrt__v8 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
    int64_t k4 = k / 4, k1 = k % 4;
    const float *a3 = a + 3 * lda;
    const ptrdiff_t r = lda * (ptrdiff_t)sizeof(float);
    tsrt__v8 v0, v1, x, y;
    __asm__ volatile(
        TSRT__AVX2_ZERO_C
        "test %[k4], %[k4]\n\t"
        "je 2f\n\t"
        ".p2align 5\n"
        "1:\n\t"
        TSRT__AVX2_STEP8(TSRT__AVX2_UA("0"), "0", "0")
        TSRT__AVX2_STEP8(TSRT__AVX2_UA("4"), "64", "1")
        TSRT__AVX2_STEP8(TSRT__AVX2_UA("8"), "128", "0")
        TSRT__AVX2_STEP8(TSRT__AVX2_UA("12"), "192", "1")
        "add $16, %[a]\n\t"
        "add $16, %[a3]\n\t"
        "add $256, %[b]\n\t"
        "dec %[k4]\n\t"
        "jne 1b\n"
        "2:\n\t"
        "test %[k1], %[k1]\n\t"
        "je 4f\n"
        "3:\n\t"
        TSRT__AVX2_STEP8(TSRT__AVX2_UA("0"), "0", "0")
        "add $4, %[a]\n\t"
        "add $4, %[a3]\n\t"
        "add $64, %[b]\n\t"
        "dec %[k1]\n\t"
        "jne 3b\n"
        "4:\n\t"
        : [a] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [k4] "+r"(k4), [k1] "+r"(k1),
          [c00] "=&x"(c00), [c01] "=&x"(c01), [c10] "=&x"(c10), [c11] "=&x"(c11),
          [c20] "=&x"(c20), [c21] "=&x"(c21), [c30] "=&x"(c30), [c31] "=&x"(c31),
          [c40] "=&x"(c40), [c41] "=&x"(c41), [c50] "=&x"(c50), [c51] "=&x"(c51),
          [v0] "=&x"(v0), [v1] "=&x"(v1), [x] "=&x"(x), [y] "=&x"(y)
        : [r] "r"(r)
        : "cc", "memory");
    c00 += c01, c10 += c11, c20 += c21, c30 += c31, c40 += c41, c50 += c51;
    TSRT__AVX2_ROW8(0, c00);
    TSRT__AVX2_ROW8(1, c10);
    TSRT__AVX2_ROW8(2, c20);
    TSRT__AVX2_ROW8(3, c30);
    TSRT__AVX2_ROW8(4, c40);
    TSRT__AVX2_ROW8(5, c50);
}

/* 4 x 16: a last row tile of 4 rows (M = 64 = 10*6 + 4), or two of them
 * instead of a 6-row tile and a 2-row one (M = 128 = 20*6 + 2*4): the
 * 6-row kernel on a zero-padded panel spends 6 rows of multiply-adds on
 * 2 (3% of a 128-row product, 11% of a 16- or 32-row one). Eight
 * accumulators: two FMA pipes of latency 4 just kept busy. A is packed
 * 4 rows wide (a[p*4 + i], tsrt__pack_ah) or read in place (_ua). */
#define TSRT__AVX2_ASM_STEP4(a0, a1, a2, a3, b0, b1)                           \
    "vmovaps " b0 "(%[b]), %[v0]\n\t"                                        \
    "vmovaps " b1 "(%[b]), %[v1]\n\t"                                        \
    TSRT__AVX2_ASM_FMA4(a0, a1, a2, a3)
#define TSRT__AVX2_ASM_STEP4M(a0, a1, a2, a3, m0, m1)                          \
    "vmovups " m0 ", %[v0]\n\t"                                              \
    "vmovups " m1 ", %[v1]\n\t"                                              \
    TSRT__AVX2_ASM_FMA4(a0, a1, a2, a3)
#define TSRT__AVX2_ASM_FMA4(a0, a1, a2, a3)                                   \
    "vbroadcastss " a0 ", %[x]\n\t"                                          \
    "vbroadcastss " a1 ", %[y]\n\t"                                          \
    "vfmadd231ps %[v0], %[x], %[c00]\n\t"                                    \
    "vfmadd231ps %[v1], %[x], %[c01]\n\t"                                    \
    "vbroadcastss " a2 ", %[x]\n\t"                                          \
    "vfmadd231ps %[v0], %[y], %[c10]\n\t"                                    \
    "vfmadd231ps %[v1], %[y], %[c11]\n\t"                                    \
    "vbroadcastss " a3 ", %[y]\n\t"                                          \
    "vfmadd231ps %[v0], %[x], %[c20]\n\t"                                    \
    "vfmadd231ps %[v1], %[x], %[c21]\n\t"                                    \
    "vfmadd231ps %[v0], %[y], %[c30]\n\t"                                    \
    "vfmadd231ps %[v1], %[y], %[c31]\n\t"
#define TSRT__AVX2_STEP4(...) TSRT__AVX2_ASM_STEP4(__VA_ARGS__)
#define TSRT__AVX2_PA4(o0, o1, o2, o3) o0 "(%[a])", o1 "(%[a])", o2 "(%[a])", o3 "(%[a])"
#define TSRT__AVX2_UA4(d) d "(%[a])", d "(%[a],%[r],1)", d "(%[a],%[r],2)", d "(%[a3])"
#define TSRT__AVX2_STEP4M(...) TSRT__AVX2_ASM_STEP4M(__VA_ARGS__)
#define TSRT__AVX2_S4UA(d, m0, m1) TSRT__AVX2_STEP4M(TSRT__AVX2_UA4(d), m0, m1)
#define TSRT__AVX2_ZERO_C4                                                    \
    "vxorps %[c00], %[c00], %[c00]\n\t"                                       \
    "vxorps %[c01], %[c01], %[c01]\n\t"                                       \
    "vxorps %[c10], %[c10], %[c10]\n\t"                                       \
    "vxorps %[c11], %[c11], %[c11]\n\t"                                       \
    "vxorps %[c20], %[c20], %[c20]\n\t"                                       \
    "vxorps %[c21], %[c21], %[c21]\n\t"                                       \
    "vxorps %[c30], %[c30], %[c30]\n\t"                                       \
    "vxorps %[c31], %[c31], %[c31]\n\t"
#define TSRT__AVX2_ALL4(F) F(0, c00, c01) F(1, c10, c11) F(2, c20, c21) F(3, c30, c31)
#define TSRT__AVX2_OUT4                                                       \
    [c00] "=&x"(c00), [c01] "=&x"(c01), [c10] "=&x"(c10), [c11] "=&x"(c11),  \
    [c20] "=&x"(c20), [c21] "=&x"(c21), [c30] "=&x"(c30), [c31] "=&x"(c31),  \
    [v0] "=&x"(v0), [v1] "=&x"(v1), [x] "=&x"(x), [y] "=&x"(y)

TSRT__OUTLINE void tsrt__ukr4(int64_t k, const float *restrict a, const float *restrict b, float *restrict c,
                              ptrdiff_t rs, int beta, const tsrt_tepi *te)
{
    tsrt__v8 c00, c01, c10, c11, c20, c21, c30, c31, v0, v1, x, y;
    int64_t k4 = k / 4, k1 = k % 4;
    __asm__ volatile(
        TSRT__AVX2_ZERO_C4
        "test %[k4], %[k4]\n\t"
        "je 2f\n\t"
        ".p2align 5\n"
        "1:\n\t"
        TSRT__AVX2_STEP4(TSRT__AVX2_PA4("0", "4", "8", "12"), "0", "32")
        TSRT__AVX2_STEP4(TSRT__AVX2_PA4("16", "20", "24", "28"), "64", "96")
        TSRT__AVX2_STEP4(TSRT__AVX2_PA4("32", "36", "40", "44"), "128", "160")
        TSRT__AVX2_STEP4(TSRT__AVX2_PA4("48", "52", "56", "60"), "192", "224")
        "add $64, %[a]\n\t"
        "add $256, %[b]\n\t"
        "dec %[k4]\n\t"
        "jne 1b\n"
        "2:\n\t"
        "test %[k1], %[k1]\n\t"
        "je 4f\n"
        "3:\n\t"
        TSRT__AVX2_STEP4(TSRT__AVX2_PA4("0", "4", "8", "12"), "0", "32")
        "add $16, %[a]\n\t"
        "add $64, %[b]\n\t"
        "dec %[k1]\n\t"
        "jne 3b\n"
        "4:\n\t"
        : [a] "+r"(a), [b] "+r"(b), [k4] "+r"(k4), [k1] "+r"(k1), TSRT__AVX2_OUT4
        :
        : "cc", "memory");
    TSRT__AVX2_FINISH_ROWS(TSRT__AVX2_ALL4);
}

TSRT__OUTLINE void tsrt__ukr4_ua(int64_t k, const float *restrict a, ptrdiff_t lda, const float *restrict b,
                                 float *restrict c, ptrdiff_t rs, int beta, const tsrt_tepi *te)
{
    tsrt__v8 c00, c01, c10, c11, c20, c21, c30, c31, v0, v1, x, y;
    int64_t k4 = k / 4, k1 = k % 4;
    const float *a3 = a + 3 * lda;
    const ptrdiff_t r = lda * (ptrdiff_t)sizeof(float);
    __asm__ volatile(
        TSRT__AVX2_ZERO_C4
        TSRT__AVX2_LOOP_UA(TSRT__AVX2_S4UA)
        : [a] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [k4] "+r"(k4), [k1] "+r"(k1), TSRT__AVX2_OUT4
        : [r] "r"(r)
        : "cc", "memory");
    TSRT__AVX2_FINISH_ROWS(TSRT__AVX2_ALL4);
}

/* A read in place (lda) and B too: row p of the 16 columns at b + p*ldb
 * (the pointwise path's input read without packing, D67 on AVX-512,
 * D191 here): 6 x 16, and 4 x 16 (tsrt__ukrh_uab, h == 4). */
#define TSRT_HAVE_UKR_UAB 1
TSRT__OUTLINE void tsrt__ukr_full_uab(int64_t k, const float *restrict a, ptrdiff_t lda, const float *restrict b,
                                      ptrdiff_t ldb, float *restrict c, ptrdiff_t rs, int beta, const tsrt_tepi *te)
{
    tsrt__v8 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
    for (int i = 0; i < 6; i++) {
        __builtin_prefetch(c + i * rs, 1, 3);
        __builtin_prefetch(c + i * rs + 15, 1, 3);
    }
    int64_t k4 = k / 4, k1 = k % 4;
    const float *a3 = a + 3 * lda, *b3 = b + 3 * ldb;
    const ptrdiff_t r = lda * (ptrdiff_t)sizeof(float), lb = ldb * (ptrdiff_t)sizeof(float);
    tsrt__v8 v0, v1, x, y;
    __asm__ volatile(
        TSRT__AVX2_ZERO_C
        TSRT__AVX2_LOOP_UAB(TSRT__AVX2_S16UA)
        : [a] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [b3] "+r"(b3), [k4] "+r"(k4), [k1] "+r"(k1),
          [c00] "=&x"(c00), [c01] "=&x"(c01), [c10] "=&x"(c10), [c11] "=&x"(c11),
          [c20] "=&x"(c20), [c21] "=&x"(c21), [c30] "=&x"(c30), [c31] "=&x"(c31),
          [c40] "=&x"(c40), [c41] "=&x"(c41), [c50] "=&x"(c50), [c51] "=&x"(c51),
          [v0] "=&x"(v0), [v1] "=&x"(v1), [x] "=&x"(x), [y] "=&x"(y)
        : [r] "r"(r), [lb] "r"(lb)
        : "cc", "memory");
    TSRT__AVX2_FINISH;
}

TSRT__OUTLINE void tsrt__ukrh_uab(int64_t h, int64_t k, const float *restrict a, ptrdiff_t lda,
                                  const float *restrict b, ptrdiff_t ldb, float *restrict c, ptrdiff_t rs, int beta,
                                  const tsrt_tepi *te)
{
    (void)h; /* 4: tsrt__is_tileh */
    tsrt__v8 c00, c01, c10, c11, c20, c21, c30, c31, v0, v1, x, y;
    int64_t k4 = k / 4, k1 = k % 4;
    const float *a3 = a + 3 * lda, *b3 = b + 3 * ldb;
    const ptrdiff_t r = lda * (ptrdiff_t)sizeof(float), lb = ldb * (ptrdiff_t)sizeof(float);
    __asm__ volatile(
        TSRT__AVX2_ZERO_C4
        TSRT__AVX2_LOOP_UAB(TSRT__AVX2_S4UA)
        : [a] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [b3] "+r"(b3), [k4] "+r"(k4), [k1] "+r"(k1), TSRT__AVX2_OUT4
        : [r] "r"(r), [lb] "r"(lb)
        : "cc", "memory");
    TSRT__AVX2_FINISH_ROWS(TSRT__AVX2_ALL4);
}

/* Row heights with a kernel of their own besides MR (tsrt__tile_h). */
#define TSRT_HAVE_UKRH 1
#define TSRT_UKRH_EVEN 0
static inline int tsrt__is_tileh(int64_t h)
{
    return h == 4;
}

/* A full-width 4-row tile: A packed 4 wide (lda == 0) or read in place. */
static inline void tsrt__ukrh(int64_t h, int64_t k, const float *restrict a, ptrdiff_t lda, const float *restrict b,
                              float *restrict c, ptrdiff_t rs, int beta, const tsrt_tepi *te)
{
    (void)h;
    if (lda) tsrt__ukr4_ua(k, a, lda, b, c, rs, beta, te);
    else tsrt__ukr4(k, a, b, c, rs, beta, te);
}

/* ==== AVX-512: 14 x 32 (tsrt_ukernel_avx512.h) ============================== */
#elif TSRT_ISA == TSRT_ISA_AVX512
#ifndef TSRT_UKERNEL_AVX512_H
#include "tsrt_ukernel_avx512.h"
#endif

/* ==== portable: 6 x 16 in vector extensions ================================= */
#else

/* tsrt__v8 and its load/store macros are in tsrt_common.h. */
/* A element (i, p) at a[i*as_ + p*ps_]: packed (1, 6) or a row-major
 * matrix read in place (lda, 1). */
static inline void tsrt__ukr_full_s(int64_t k, const float *restrict a, ptrdiff_t as_, ptrdiff_t ps_,
                                    const float *restrict b, float *restrict c, ptrdiff_t rs, int beta)
{
    tsrt__v8 acc[6][2];
    for (int i = 0; i < 6; i++) acc[i][0] = acc[i][1] = (tsrt__v8){0};
    for (int64_t p = 0; p < k; p++) {
        tsrt__v8 b0, b1;
        TSRT__V8_LOAD(b0, b);
        TSRT__V8_LOAD(b1, b + 8);
        for (int i = 0; i < 6; i++) {
            /* Mixed scalar/vector arithmetic broadcasts the scalar (GCC and
             * Clang). Not fused: the result is the FMA kernels' up to
             * rounding. */
            acc[i][0] += a[i * as_] * b0;
            acc[i][1] += a[i * as_] * b1;
        }
        a += ps_;
        b += 16;
    }
    for (int i = 0; i < 6; i++) {
        float *ci = c + i * rs;
        if (beta) {
            tsrt__v8 o0, o1;
            TSRT__V8_LOAD(o0, ci);
            TSRT__V8_LOAD(o1, ci + 8);
            acc[i][0] += o0;
            acc[i][1] += o1;
        }
        TSRT__V8_STORE(ci, acc[i][0]);
        TSRT__V8_STORE(ci + 8, acc[i][1]);
    }
}

TSRT__OUTLINE void tsrt__ukr_full(int64_t k, const float *restrict a, const float *restrict b,
                                  float *restrict c, ptrdiff_t rs, int beta, const tsrt_tepi *te)
{
    tsrt__ukr_full_s(k, a, 1, 6, b, c, rs, beta);
    if (te) tsrt__te_tile(te, c, rs, 6, 16);
}

TSRT__OUTLINE void tsrt__ukr_full_ua(int64_t k, const float *restrict a, ptrdiff_t lda, const float *restrict b,
                                     float *restrict c, ptrdiff_t rs, int beta, const tsrt_tepi *te)
{
    tsrt__ukr_full_s(k, a, lda, 1, b, c, rs, beta);
    if (te) tsrt__te_tile(te, c, rs, 6, 16);
}

#endif /* TSRT_ISA */

/* ==== edge tiles and general strides ======================================== */

/* An mr x nr tile (mr <= MR, nr <= NR) of C with any strides. The packed
 * panels are zero-padded to MR x NR, so the full kernel runs into an aligned
 * stack tile and the wanted corner is copied out: at most one row and one
 * column of tiles per matrix take this path, so its cost does not matter. */
/* te: the tile epilogue at this tile (tsrt__te_at), or NULL; only with
 * cs == 1. */
static inline void tsrt__ukr(int64_t k, const float *restrict a, const float *restrict b,
                             float *restrict c, ptrdiff_t rs, ptrdiff_t cs, int beta,
                             int64_t mr, int64_t nr, const tsrt_tepi *te)
{
    if (mr == TSRT_MR && nr == TSRT_NR && cs == 1) {
        tsrt__ukr_full(k, a, b, c, rs, beta, te);
        return;
    }
    float t[TSRT_MR * TSRT_NR] __attribute__((aligned(TSRT_ALIGN)));
    tsrt__ukr_full(k, a, b, t, TSRT_NR, 0, NULL);
    for (int64_t i = 0; i < mr; i++)
        for (int64_t j = 0; j < nr; j++) {
            float *e = c + i * rs + j * cs;
            *e = beta ? *e + t[i * TSRT_NR + j] : t[i * TSRT_NR + j];
        }
    if (te) tsrt__te_tile(te, c, rs, mr, nr);
}

/* Column j (< nr) of C's MR rows for a last column panel of nr <= 2
 * columns: dot products along k of the MR rows of A (read in place) with
 * the column, 8 k at a time (packing-free, about a twelfth of a full
 * micro-kernel call per column); bcol: the column, contiguous. */
TSRT__OUTLINE void tsrt__ukr_col(int64_t k, const float *restrict a, ptrdiff_t lda, const float *restrict bcol,
                                 float *restrict c, ptrdiff_t rs, int beta)
{
    tsrt__v8 acc[TSRT_MR];
    for (int i = 0; i < TSRT_MR; i++) acc[i] = (tsrt__v8){0};
    int64_t p = 0;
    for (; p + 8 <= k; p += 8) {
        tsrt__v8 bv;
        TSRT__V8_LOAD(bv, bcol + p);
        for (int i = 0; i < TSRT_MR; i++) {
            tsrt__v8 av;
            TSRT__V8_LOAD(av, a + i * lda + p);
            acc[i] += av * bv;
        }
    }
    for (int i = 0; i < TSRT_MR; i++) {
        const tsrt__v8 q = acc[i];
        float s = ((q[0] + q[4]) + (q[1] + q[5])) + ((q[2] + q[6]) + (q[3] + q[7]));
        for (int64_t t = p; t < k; t++) s += a[i * lda + t] * bcol[t];
        c[i * rs] = beta ? c[i * rs] + s : s;
    }
}

/* The first column of an nr-column B micro-panel that tsrt__ukr_ua takes
 * as dot products (tsrt__ukr_col) when given the columns from it on
 * (tsrt__b_cols), or -1: all of a panel of 1 or 2, the 1 or 2 past 16
 * where a 16-column kernel takes the rest. */
static inline int64_t tsrt__ua_col0(int64_t nr)
{
    if (nr <= 2) return 0;
#ifdef TSRT_HAVE_UKR16
    if (nr > 16 && nr <= 18) return 16;
#endif
    return -1;
}

/* tsrt__ukr with A read in place (row i at a + i*lda): a full MR-row
 * micro-panel (there are no zero rows to pad a short one with: the caller
 * packs those), any nr <= NR and column stride. bt: NULL, or (where
 * tsrt__ua_col0(nr) >= 0) the B micro-panel's columns from
 * tsrt__ua_col0(nr) on, each contiguous (stride k), for tsrt__ukr_col. */
static inline void tsrt__ukr_ua(int64_t k, const float *restrict a, ptrdiff_t lda, const float *restrict b,
                                float *restrict c, ptrdiff_t rs, ptrdiff_t cs, int beta, int64_t nr,
                                const float *restrict bt, const tsrt_tepi *te)
{
    if (nr == TSRT_NR && cs == 1) {
        tsrt__ukr_full_ua(k, a, lda, b, c, rs, beta, te);
        return;
    }
    if (bt && nr <= 2) {
        for (int64_t j = 0; j < nr; j++) tsrt__ukr_col(k, a, lda, bt + j * k, c + j * cs, rs, beta);
        if (te) tsrt__te_tile(te, c, rs, TSRT_MR, nr);
        return;
    }
    float t[TSRT_MR * TSRT_NR] __attribute__((aligned(TSRT_ALIGN)));
#ifdef TSRT_HAVE_UKR8
    if (nr <= 8)
        tsrt__ukr_full_ua8(k, a, lda, b, t, TSRT_NR, 0);
    else
#endif
#ifdef TSRT_HAVE_UKR16
    if (nr <= 16 || (bt && nr <= 18)) {
        tsrt__ukr_full_ua16(k, a, lda, b, t, TSRT_NR, 0);
        for (int64_t j = 16; j < nr; j++) tsrt__ukr_col(k, a, lda, bt + (j - 16) * k, t + j, TSRT_NR, 0);
    } else
#endif
        tsrt__ukr_full_ua(k, a, lda, b, t, TSRT_NR, 0, NULL);
    for (int64_t i = 0; i < TSRT_MR; i++)
        for (int64_t j = 0; j < nr; j++) {
            float *e = c + i * rs + j * cs;
            *e = beta ? *e + t[i * TSRT_NR + j] : t[i * TSRT_NR + j];
        }
    if (te) tsrt__te_tile(te, c, rs, TSRT_MR, nr);
}

/* The rows of the row tile starting at ir of an mc-row block: MR, or
 * fewer at the end, or a height with a kernel of its own where that
 * fills the block exactly. With every even height (AVX-512, MR = 14), an
 * even mc that is not a multiple of 14 is ceil(mc/14) tiles of 14, 12,
 * 10 or 8 rows. Otherwise, with the 4-row kernel, a remainder divisible
 * by 4 is 4-row tiles, and one of 4q + 2 makes the last full tile and it
 * 4-row tiles (MR is 2 mod 4). */
static inline int64_t tsrt__tile_h(int64_t mc, int64_t ir)
{
#ifdef TSRT_HAVE_UKRH
    const int64_t t = mc % TSRT_MR;
    if (TSRT_UKRH_EVEN && t % 2 == 0 && t && mc > TSRT_MR) {
        /* n tiles, s rows short of n full ones, taken 2 at a time: the
         * first n - r tiles are h rows high, the last r h - 2 (s <= 6 and
         * n >= 2, so h - 2 >= 8 wherever r > 0) */
        const int64_t n = tsrt__cdiv(mc, TSRT_MR), s = (n * TSRT_MR - mc) / 2, r = s % n;
        const int64_t h = TSRT_MR - 2 * (s / n);
        return ir < (n - r) * h ? h : h - 2;
    }
    if (mc < TSRT_MR && tsrt__is_tileh(mc)) return mc;
    if (t && t % 4 == 0 && ir >= mc - t) return 4;
    if (t % 4 == 2 && mc >= TSRT_MR + t && ir >= mc - TSRT_MR - t) return 4;
#endif
    return tsrt__min(TSRT_MR, mc - ir);
}

#ifdef TSRT_HAVE_UKRH
/* An h-row tile of C (tsrt__is_tileh), nr <= NR columns: A packed h wide
 * (lda == 0) or h rows read in place at row stride lda; a partial tile
 * through a stack tile, then te on the stored corner. */
TSRT__OUTLINE void tsrt__ukrh_any(int64_t h, int64_t k, const float *restrict a, ptrdiff_t lda,
                                  const float *restrict b, float *restrict c, ptrdiff_t rs, ptrdiff_t cs, int beta,
                                  int64_t nr, const tsrt_tepi *te)
{
    if (nr == TSRT_NR && cs == 1) {
        tsrt__ukrh(h, k, a, lda, b, c, rs, beta, te);
        return;
    }
    float t[TSRT_MR * TSRT_NR] __attribute__((aligned(TSRT_ALIGN)));
    tsrt__ukrh(h, k, a, lda, b, t, TSRT_NR, 0, NULL);
    for (int64_t i = 0; i < h; i++)
        for (int64_t j = 0; j < nr; j++) {
            float *e = c + i * rs + j * cs;
            *e = beta ? *e + t[i * TSRT_NR + j] : t[i * TSRT_NR + j];
        }
    if (te) tsrt__te_tile(te, c, rs, h, nr);
}
#endif

/* Copies columns [0, nr) of a packed kc x NR B micro-panel into bt, each
 * contiguous (bt[j*kc + p]), for tsrt__ukr_col. */
static inline void tsrt__b_cols(int64_t kc, const float *restrict b, int64_t nr, float *restrict bt)
{
    for (int64_t j = 0; j < nr; j++)
        for (int64_t p = 0; p < kc; p++) bt[j * kc + p] = b[p * TSRT_NR + j];
}

#endif /* TSRT_UKERNEL_H */
