/* tsrt_ukernel_avx512.h — the AVX-512 SGEMM micro-kernels (TSRT_ISA ==
 * TSRT_ISA_AVX512): 14 x 32 tiles, the 12/10/8/4-row tiles, A and B read
 * in place, the 14 x 16 last-panel kernel, and the helpers GEMM_T and the
 * depthwise conv share (clamps as vectors, the 16x16 transpose). The
 * contract of every kernel is tsrt_ukernel.h's, which includes this file
 * for AVX-512 (and the emitter pastes it just before tsrt_ukernel.h). */
#ifndef TSRT_UKERNEL_AVX512_H
#define TSRT_UKERNEL_AVX512_H

#ifndef TSRT_COMMON_H
#include "tsrt_common.h"
#endif

#if TSRT_ISA == TSRT_ISA_AVX512
/* Only the AVX-512 kernels include <immintrin.h>: parsing it costs gcc 12
 * about 0.4 s per translation unit (measured, -O3 -march=native), more
 * than compiling the whole GEMM. The AVX2 kernel is asm plus vector
 * extensions and needs none of it. */
#ifndef TSRT_AVX512_EMULATED
#include <immintrin.h>
#endif

/* Written without an AVX-512 machine; compiled with -mavx512f (gcc and
 * clang) by the build, its logic run in the *_avx512emu tests through
 * tests/unit/avx512_emu.h (the intrinsics as vector extensions). Measured
 * on Zen 4 (2026-12-01): 1024^3 at 104 GFLOP/s, 87% of the FMA peak, so
 * gcc's allocation of the 28 accumulators from intrinsics holds up here
 * (it did not for AVX2, see above). */

/* A tile epilogue's clamps as vectors, for the kernels that apply te one
 * vector at a time (GEMM_T, depthwise): an absent clamp is an operation
 * that changes nothing (max by -inf, + -0, min by +inf), and the order is
 * tsrt__te_tile's (the constant first keeps a NaN second operand). */
typedef struct tsrt__zclamp {
    __m512 lo, z, hi;
} tsrt__zclamp;
static inline void tsrt__zclamp_set(tsrt__zclamp *k, const tsrt_tepi *te)
{
    k->lo = _mm512_set1_ps(te && te->clamp & TSRT_TE_MAX ? te->lo : -INFINITY);
    k->z = _mm512_set1_ps(te && te->clamp & TSRT_TE_MAX_PZ ? 0.0f : -0.0f);
    k->hi = _mm512_set1_ps(te && te->clamp & TSRT_TE_MIN ? te->hi : INFINITY);
}
/* a macro: a function returning a vector warns (-Wpsabi) where AVX-512 is
 * emulated */
#define TSRT__ZCLAMP(k, q) _mm512_min_ps((k)->hi, _mm512_add_ps(_mm512_max_ps((k)->lo, (q)), (k)->z))

/* 16x16 transpose of r[0..16) (row i lane j -> row j lane i): four rounds
 * of two-source shuffles, 64 in all. (GEMM_T's tiles, packing A.) */
static inline void tsrt__t16(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4)
        for (int h = 0; h < 2; h++) {
            r[i + 2 * h] = _mm512_shuffle_ps(t[i + h], t[i + 2 + h], 0x44);
            r[i + 2 * h + 1] = _mm512_shuffle_ps(t[i + h], t[i + 2 + h], 0xee);
        }
    for (int i = 0; i < 16; i += 8)
        for (int h = 0; h < 4; h++) {
            t[i + h] = _mm512_shuffle_f32x4(r[i + h], r[i + 4 + h], 0x88);
            t[i + 4 + h] = _mm512_shuffle_f32x4(r[i + h], r[i + 4 + h], 0xdd);
        }
    for (int h = 0; h < 8; h++) {
        r[h] = _mm512_shuffle_f32x4(t[h], t[h + 8], 0x88);
        r[h + 8] = _mm512_shuffle_f32x4(t[h], t[h + 8], 0xdd);
    }
}

#define TSRT__Z_DECL(i) __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = c##i##0
#define TSRT__Z_FMA(i, u)                                                     \
    do {                                                                      \
        __m512 x_ = _mm512_set1_ps(a[(i) * as_ + (u) * ps_]);                      \
        c##i##0 = _mm512_fmadd_ps(x_, b0_, c##i##0);                          \
        c##i##1 = _mm512_fmadd_ps(x_, b1_, c##i##1);                          \
    } while (0)
/* One k step (u: 0 or 1, the step within the unrolled pair) on the rows
 * that ALL lists. */
#define TSRT__Z_FMA_0(i) TSRT__Z_FMA(i, 0);
#define TSRT__Z_FMA_1(i) TSRT__Z_FMA(i, 1);
#define TSRT__Z_STEP(u, ALL)                                                  \
    do {                                                                      \
        __m512 b0_ = _mm512_loadu_ps(b + ldb_ * (u));                         \
        __m512 b1_ = _mm512_loadu_ps(b + ldb_ * (u) + 16);                    \
        ALL(TSRT__Z_FMA_##u)                                                  \
    } while (0)
/* The end of a tile, on the accumulators ci0/ci1 of rows i: the old C
 * added when accumulating, then the tile epilogue in registers, each term
 * tested once per tile, in tsrt__te_tile's order of operations (so its
 * bits; _mm512_max_ps/_min_ps with the constant first keep a NaN second
 * operand, as `lo > x ? lo : x` does), then the stores. Applying te in a
 * second pass over the stored tile cost 15% of the MobileNetV2 stem
 * (K = 27), the pass re-reading and re-writing every row (D44). */
#define TSRT__Z_ADD2(i, p)                                                    \
    {                                                                         \
        c##i##0 = _mm512_add_ps(c##i##0, _mm512_loadu_ps(p));                 \
        c##i##1 = _mm512_add_ps(c##i##1, _mm512_loadu_ps((p) + 16));          \
    }
#define TSRT__Z_OLD(i) TSRT__Z_ADD2(i, c + (i) * rs)
#define TSRT__Z_RES(i) TSRT__Z_ADD2(i, te->res + (i) * te->res_rs)
#define TSRT__Z_ROWB(i)                                                       \
    {                                                                         \
        const __m512 b_ = _mm512_set1_ps(te->row[i]);                         \
        c##i##0 = _mm512_add_ps(c##i##0, b_);                                 \
        c##i##1 = _mm512_add_ps(c##i##1, b_);                                 \
    }
#define TSRT__Z_COLB(i) { c##i##0 = _mm512_add_ps(c##i##0, q0_); c##i##1 = _mm512_add_ps(c##i##1, q1_); }
#define TSRT__Z_MAX(i) { c##i##0 = _mm512_max_ps(k_, c##i##0); c##i##1 = _mm512_max_ps(k_, c##i##1); }
#define TSRT__Z_PZ(i) { c##i##0 = _mm512_add_ps(c##i##0, z_); c##i##1 = _mm512_add_ps(c##i##1, z_); }
#define TSRT__Z_MIN(i) { c##i##0 = _mm512_min_ps(k_, c##i##0); c##i##1 = _mm512_min_ps(k_, c##i##1); }
#define TSRT__Z_PUT(i) { _mm512_storeu_ps(c + (i) * rs, c##i##0); _mm512_storeu_ps(c + (i) * rs + 16, c##i##1); }
#define TSRT__Z_FINISH(ALL)                                                   \
    do {                                                                      \
        if (beta) { ALL(TSRT__Z_OLD) }                                        \
        if (te) {                                                             \
            if (te->row) { ALL(TSRT__Z_ROWB) }                                \
            if (te->col) {                                                    \
                const __m512 q0_ = _mm512_loadu_ps(te->col);                  \
                const __m512 q1_ = _mm512_loadu_ps(te->col + 16);             \
                ALL(TSRT__Z_COLB)                                             \
            }                                                                 \
            if (te->res) { ALL(TSRT__Z_RES) }                                 \
            if (te->clamp & TSRT_TE_MAX) {                                    \
                const __m512 k_ = _mm512_set1_ps(te->lo);                     \
                ALL(TSRT__Z_MAX)                                              \
                if (te->clamp & TSRT_TE_MAX_PZ) {                             \
                    const __m512 z_ = _mm512_setzero_ps();                    \
                    ALL(TSRT__Z_PZ)                                           \
                }                                                             \
            }                                                                 \
            if (te->clamp & TSRT_TE_MIN) {                                    \
                const __m512 k_ = _mm512_set1_ps(te->hi);                     \
                ALL(TSRT__Z_MIN)                                              \
            }                                                                 \
        }                                                                     \
        ALL(TSRT__Z_PUT)                                                      \
    } while (0)
#define TSRT__Z_ALL4(F) F(0) F(1) F(2) F(3)
#define TSRT__Z_ALL8(F) TSRT__Z_ALL4(F) F(4) F(5) F(6) F(7)
#define TSRT__Z_ALL10(F) TSRT__Z_ALL8(F) F(8) F(9)
#define TSRT__Z_ALL12(F) TSRT__Z_ALL10(F) F(10) F(11)
#define TSRT__Z_ALL14(F) TSRT__Z_ALL12(F) F(12) F(13)
#define TSRT__Z_DECL_(i) TSRT__Z_DECL(i);
#define TSRT__Z_PF_C(i)                                                       \
    {                                                                         \
        _mm_prefetch((const char *)(c + (i) * rs), _MM_HINT_T0);              \
        _mm_prefetch((const char *)(c + (i) * rs + 31), _MM_HINT_T0);         \
    }

/* An H x 32 tile (ALL lists its H rows), A element (i, p) at
 * a[i*as_ + p*ps_]: packed H wide (1, H) or a row-major matrix read in
 * place (lda, 1); B row p at b + p*ldb_: 32 for a packed micro-panel, an
 * image's row stride when read in place (D67). Every height accumulates
 * each element of C in the same order (p ascending, one FMA chain), so a
 * row's bits do not depend on the height of the tile it falls in. C is touched only after the k loop:
 * its lines come in meanwhile. */
#define TSRT__Z_KERNEL(NAME, ALL)                                             \
    static inline void NAME(int64_t k, const float *restrict a, ptrdiff_t as_, ptrdiff_t ps_,      \
                            const float *restrict b, ptrdiff_t ldb_, float *restrict c, ptrdiff_t rs, \
                            int beta, const tsrt_tepi *te)                                        \
    {                                                                         \
        ALL(TSRT__Z_DECL_)                                                    \
        ALL(TSRT__Z_PF_C)                                                     \
        int64_t p = 0;                                                        \
        for (; p + 2 <= k; p += 2) {                                          \
            TSRT__Z_STEP(0, ALL);                                             \
            TSRT__Z_STEP(1, ALL);                                             \
            a += 2 * ps_;                                                     \
            b += 2 * ldb_;                                                    \
        }                                                                     \
        for (; p < k; p++) {                                                  \
            TSRT__Z_STEP(0, ALL);                                             \
            a += ps_;                                                         \
            b += ldb_;                                                        \
        }                                                                     \
        TSRT__Z_FINISH(ALL);                                                  \
    }
TSRT__Z_KERNEL(tsrt__ukr_full_s, TSRT__Z_ALL14)
TSRT__Z_KERNEL(tsrt__ukr12_s, TSRT__Z_ALL12)
TSRT__Z_KERNEL(tsrt__ukr10_s, TSRT__Z_ALL10)
TSRT__Z_KERNEL(tsrt__ukr8_s, TSRT__Z_ALL8)
TSRT__Z_KERNEL(tsrt__ukr4_s, TSRT__Z_ALL4)

/* TSRT__ZA: the packed kernels' k loops in asm (below); off where the
 * intrinsics are emulated (the tests' *_avx512emu builds) and with
 * -DTSRT_NO_ZA (the intrinsics kernels, for A/B runs). */
#if !defined(TSRT_AVX512_EMULATED) && !defined(TSRT_NO_ZA)
#define TSRT__ZA 1
#else
#define TSRT__ZA 0
#endif

#if TSRT__ZA
/* The k loop of an H x 32 tile with both panels packed (A H wide, B 32
 * wide), in GNU asm. From the intrinsics above gcc 12 keeps the 28
 * accumulators but rotates them through extra register moves and
 * vfmadd132ps forms; the asm pins one schedule: two B vectors, then per
 * row one broadcast (two registers alternating) and its two FMAs, two
 * steps per branch. Panels in L1, K = 512, Intel AVX-512 with two FMA
 * pipes: 185 -> 192 GFLOP/s of a 213 peak; broadcasting inside the FMAs
 * instead ({1to16} operands, one load per FMA): 172. The accumulators are
 * "=v" outputs zeroed in the asm, so the tile epilogue (TSRT__Z_FINISH)
 * still runs on them in registers; a, b and the step counts come in
 * through one struct pointer because gcc allows 30 operands and 14 rows
 * take 28. zmm28-31 are the asm's own (B and the broadcasts), which
 * leaves zmm0-27 to the accumulators. */
#define TSRT__ZA_ROW(H, u, i, x)                                              \
    "vbroadcastss (4*" #i "+4*" #H "*" #u ")(%%rax), %%" x "\n\t"             \
    "vfmadd231ps %%zmm28, %%" x ", %[c" #i "0]\n\t"                           \
    "vfmadd231ps %%zmm29, %%" x ", %[c" #i "1]\n\t"
/* consecutive rows alternate between the two broadcast registers */
#define TSRT__ZA_RR(H, u, i, j) TSRT__ZA_ROW(H, u, i, "zmm30") TSRT__ZA_ROW(H, u, j, "zmm31")
#define TSRT__ZA_ROWS4(H, u) TSRT__ZA_RR(H, u, 0, 1) TSRT__ZA_RR(H, u, 2, 3)
#define TSRT__ZA_ROWS8(H, u) TSRT__ZA_ROWS4(H, u) TSRT__ZA_RR(H, u, 4, 5) TSRT__ZA_RR(H, u, 6, 7)
#define TSRT__ZA_ROWS10(H, u) TSRT__ZA_ROWS8(H, u) TSRT__ZA_RR(H, u, 8, 9)
#define TSRT__ZA_ROWS12(H, u) TSRT__ZA_ROWS10(H, u) TSRT__ZA_RR(H, u, 10, 11)
#define TSRT__ZA_ROWS14(H, u) TSRT__ZA_ROWS12(H, u) TSRT__ZA_RR(H, u, 12, 13)
/* Bytes ahead of the B row in use that each k step prefetches into L1
 * (its two lines); 0 turns it off (for A/B runs). With few rows a tile
 * does few multiply-adds per weight (9 rows: 18 FMAs per 128-byte row),
 * so a pre-packed B is read from memory about as fast as it is used, and
 * the hardware prefetcher, which stops at every 4 KiB page, runs behind:
 * 9 x 3072 x 768 (ConvNeXt-T's 3x3 map, weights cycled through 12
 * copies) 1.36-1.38 -> 0.99-1.00 ms, 16 x 1536 x 384 330 -> 285 us; 2, 4
 * and 8 KiB ahead, into L1 or L2, alike; a hot 196 x 512 x 512 unchanged
 * (D149). Where B is already in L1 (the later row tiles of a panel) the
 * prefetch hits and costs a load slot, of which the loop leaves some. */
#ifndef TSRT_ZA_PFD
#define TSRT_ZA_PFD 2048
#endif
#define TSRT__ZA_S2(x) #x
#define TSRT__ZA_S(x) TSRT__ZA_S2(x)
#if TSRT_ZA_PFD
#define TSRT__ZA_PF(u)                                                        \
    "prefetcht0 (" TSRT__ZA_S(TSRT_ZA_PFD) "+128*" #u ")(%%rcx)\n\t"           \
    "prefetcht0 (" TSRT__ZA_S(TSRT_ZA_PFD) "+128*" #u "+64)(%%rcx)\n\t"
#else
#define TSRT__ZA_PF(u)
#endif
/* k step u of an unrolled pair: its B row (128 bytes; unaligned loads,
 * as the intrinsics': no caller promises a 64-byte B), the prefetch,
 * then the rows */
#define TSRT__ZA_STEP(H, u)                                                   \
    "vmovups (128*" #u ")(%%rcx), %%zmm28\n\t"                                \
    "vmovups (128*" #u "+64)(%%rcx), %%zmm29\n\t"                             \
    TSRT__ZA_PF(u)                                                            \
    TSRT__ZA_ROWS##H(H, u)
#define TSRT__ZA_ZERO(i)                                                      \
    "vpxord %[c" #i "0], %[c" #i "0], %[c" #i "0]\n\t"                        \
    "vpxord %[c" #i "1], %[c" #i "1], %[c" #i "1]\n\t"
#define TSRT__ZA_DECL(i) __m512 c##i##0, c##i##1;
#define TSRT__ZA_OUT(i) [c##i##0] "=&v"(c##i##0), [c##i##1] "=&v"(c##i##1),
#define TSRT__ZA_KERNEL(NAME, H, ALL)                                         \
    static inline void NAME(int64_t k, const float *restrict a, const float *restrict b, float *restrict c, \
                            ptrdiff_t rs, int beta, const tsrt_tepi *te)      \
    {                                                                         \
        ALL(TSRT__ZA_DECL)                                                    \
        ALL(TSRT__Z_PF_C)                                                     \
        const struct { const float *a, *b; int64_t k2, k1; } s_ = {a, b, k / 2, k % 2}; \
        int64_t n_;                                                           \
        __asm__ volatile(                                                     \
            "mov (%[s]), %%rax\n\t"                                           \
            "mov 8(%[s]), %%rcx\n\t"                                          \
            "mov 16(%[s]), %[n]\n\t"                                          \
            ALL(TSRT__ZA_ZERO)                                                \
            "test %[n], %[n]\n\t"                                             \
            "je 2f\n\t"                                                       \
            ".p2align 5\n"                                                    \
            "1:\n\t"                                                          \
            TSRT__ZA_STEP(H, 0)                                               \
            TSRT__ZA_STEP(H, 1)                                               \
            "add $(8*" #H "), %%rax\n\t"                                      \
            "add $256, %%rcx\n\t"                                             \
            "dec %[n]\n\t"                                                    \
            "jne 1b\n"                                                        \
            "2:\n\t"                                                          \
            "cmpq $0, 24(%[s])\n\t"                                           \
            "je 3f\n\t"                                                       \
            TSRT__ZA_STEP(H, 0)                                               \
            "3:\n\t"                                                          \
            : ALL(TSRT__ZA_OUT)[n] "=&r"(n_)                                  \
            : [s] "r"(&s_)                                                    \
            : "rax", "rcx", "zmm28", "zmm29", "zmm30", "zmm31", "memory", "cc"); \
        TSRT__Z_FINISH(ALL);                                                  \
    }
TSRT__ZA_KERNEL(tsrt__ukrp14, 14, TSRT__Z_ALL14)
TSRT__ZA_KERNEL(tsrt__ukrp12, 12, TSRT__Z_ALL12)
TSRT__ZA_KERNEL(tsrt__ukrp10, 10, TSRT__Z_ALL10)
TSRT__ZA_KERNEL(tsrt__ukrp8, 8, TSRT__Z_ALL8)
TSRT__ZA_KERNEL(tsrt__ukrp4, 4, TSRT__Z_ALL4)
#endif

TSRT__OUTLINE void tsrt__ukr_full(int64_t k, const float *restrict a, const float *restrict b,
                                  float *restrict c, ptrdiff_t rs, int beta, const tsrt_tepi *te)
{
#if TSRT__ZA
    tsrt__ukrp14(k, a, b, c, rs, beta, te);
#else
    tsrt__ukr_full_s(k, a, 1, 14, b, 32, c, rs, beta, te);
#endif
}

TSRT__OUTLINE void tsrt__ukr_full_ua(int64_t k, const float *restrict a, ptrdiff_t lda, const float *restrict b,
                                     float *restrict c, ptrdiff_t rs, int beta, const tsrt_tepi *te)
{
    tsrt__ukr_full_s(k, a, lda, 1, b, 32, c, rs, beta, te);
}

/* A read in place (lda) and B too: row p of the 32 columns at b + p*ldb
 * (the pointwise path's input read without packing, D67). */
#define TSRT_HAVE_UKR_UAB 1
TSRT__OUTLINE void tsrt__ukr_full_uab(int64_t k, const float *restrict a, ptrdiff_t lda, const float *restrict b,
                                      ptrdiff_t ldb, float *restrict c, ptrdiff_t rs, int beta, const tsrt_tepi *te)
{
    tsrt__ukr_full_s(k, a, lda, 1, b, ldb, c, rs, beta, te);
}

/* 14 x 16 with A read in place (lda), B the first 16 columns of a packed
 * 32-wide micro-panel, C not read when beta == 0: a last column panel of
 * at most 16 columns (18 with tsrt__ukr_col's two) in half the FMAs of
 * the 32-wide kernel. Winograd F(2x2) on a 14x14 map has 49 tiles, a
 * panel of 32 and one of 17; pointwise convs at 28x28 leave 16 positions. */
#define TSRT_HAVE_UKR16 1
TSRT__OUTLINE void tsrt__ukr_full_ua16(int64_t k, const float *restrict a, ptrdiff_t lda, const float *restrict b,
                                       float *restrict c, ptrdiff_t rs, int beta)
{
    __m512 acc[14];
    for (int i = 0; i < 14; i++) acc[i] = _mm512_setzero_ps();
    for (int64_t p = 0; p < k; p++) {
        const __m512 bv = _mm512_loadu_ps(b + p * 32);
        for (int i = 0; i < 14; i++) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * lda + p]), bv, acc[i]);
    }
    for (int i = 0; i < 14; i++) {
        if (beta) acc[i] = _mm512_add_ps(acc[i], _mm512_loadu_ps(c + i * rs));
        _mm512_storeu_ps(c + i * rs, acc[i]);
    }
}

/* Row heights with a kernel of their own besides MR (tsrt__tile_h): 12,
 * 10 and 8 for blocks whose rows are not a multiple of 14 (128 rows, a
 * transformer's sequence, run as 4 tiles of 14 and 6 of 12 instead of 8
 * of 14 and 4 of 4: the 4-row tiles ran at about half the 14-row ones'
 * rate, eight accumulators and a B micro-panel re-read from L2 for 4
 * rows' FMAs, D51), 4 for what odd blocks leave over (D42). */
#define TSRT_HAVE_UKRH 1
#define TSRT_UKRH_EVEN 1 /* every even height from 8 to MR */
static inline int tsrt__is_tileh(int64_t h)
{
    return h == 4 || h == 8 || h == 10 || h == 12;
}

/* The h-row kernel (tsrt__is_tileh) for A at a[i*as_ + p*ps_], B row p at
 * b + p*ldb. */
static inline void tsrt__ukrh_s(int64_t h, int64_t k, const float *restrict a, ptrdiff_t as_, ptrdiff_t ps_,
                                const float *restrict b, ptrdiff_t ldb, float *restrict c, ptrdiff_t rs, int beta,
                                const tsrt_tepi *te)
{
    switch (h) {
    case 12: tsrt__ukr12_s(k, a, as_, ps_, b, ldb, c, rs, beta, te); break;
    case 10: tsrt__ukr10_s(k, a, as_, ps_, b, ldb, c, rs, beta, te); break;
    case 8: tsrt__ukr8_s(k, a, as_, ps_, b, ldb, c, rs, beta, te); break;
    default: tsrt__ukr4_s(k, a, as_, ps_, b, ldb, c, rs, beta, te); break;
    }
}

/* A full-width tile of h rows (tsrt__is_tileh): A packed h wide
 * (lda == 0, a[p*h + i], tsrt__pack_ah) or h rows read in place at row
 * stride lda; B a packed micro-panel. */
TSRT__OUTLINE void tsrt__ukrh(int64_t h, int64_t k, const float *restrict a, ptrdiff_t lda, const float *restrict b,
                              float *restrict c, ptrdiff_t rs, int beta, const tsrt_tepi *te)
{
#if TSRT__ZA
    if (!lda) {
        switch (h) {
        case 12: tsrt__ukrp12(k, a, b, c, rs, beta, te); return;
        case 10: tsrt__ukrp10(k, a, b, c, rs, beta, te); return;
        case 8: tsrt__ukrp8(k, a, b, c, rs, beta, te); return;
        default: tsrt__ukrp4(k, a, b, c, rs, beta, te); return;
        }
    }
#endif
    tsrt__ukrh_s(h, k, a, lda ? lda : 1, lda ? 1 : (ptrdiff_t)h, b, 32, c, rs, beta, te);
}

/* The same with A h rows read in place (lda) and B read in place too (row
 * p at b + p*ldb, D67). */
TSRT__OUTLINE void tsrt__ukrh_uab(int64_t h, int64_t k, const float *restrict a, ptrdiff_t lda,
                                  const float *restrict b, ptrdiff_t ldb, float *restrict c, ptrdiff_t rs, int beta,
                                  const tsrt_tepi *te)
{
    tsrt__ukrh_s(h, k, a, lda, 1, b, ldb, c, rs, beta, te);
}

#endif /* TSRT_ISA == TSRT_ISA_AVX512 */
#endif /* TSRT_UKERNEL_AVX512_H */
