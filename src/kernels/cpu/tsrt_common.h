/* tsrt_common.h — shared definitions of the tessera CPU runtime kernels
 * (tsrt_*): the epilogue callback type, the instruction-set selection and
 * the blocking constants of each instruction set.
 *
 * The tsrt headers are pasted, in the order tsrt_common.h,
 * tsrt_gemm_api.h, tsrt_ukernel_avx512.h, tsrt_ukernel.h, tsrt_gemm_amx.h, tsrt_gemm.h,
 * then (for convolutions) tsrt_conv_args.h, tsrt_conv_gemm.h,
 * tsrt_conv_wg.h, tsrt_conv_dw.h, tsrt_conv_grp.h, tsrt_conv_pt.h, tsrt_conv_wgt.h, tsrt_conv.h, into every C translation
 * unit the CPU emitter generates (docs/kernels.md; the design is D19 in
 * docs/decisions.md), and unit tests #include them. Hence the rules every
 * tsrt header keeps:
 *   - C11 plus GNU attributes/vector extensions (gcc and clang); only the
 *     standard headers <stdint.h> <stddef.h> <string.h> <math.h>, and the
 *     compiler's own <immintrin.h> under an x86 feature macro (one
 *     exception: tsrt_gemm_amx.h's arch_prctl system call, D76);
 *   - every function `static` (unused ones must not warn), names `tsrt_`
 *     (API) or `tsrt__` (internal); no global state (but the AMX
 *     permission's cached answer, D76), no malloc: callers
 *     pass workspace;
 *   - include guards, and a dependency is #included only when its guard is
 *     not yet defined, so the pasted concatenation needs no include path. */
#ifndef TSRT_COMMON_H
#define TSRT_COMMON_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* API functions are `static` so that every generated unit has its own copy
 * and nothing clashes at dlopen time; `unused` keeps -Wall quiet in units
 * that call only some of them. A unit may define TSRT_FN before the headers
 * (e.g. as `__attribute__((visibility("hidden")))`) to compile the API once
 * with external linkage for other units of the same .so to call. */
#ifndef TSRT_FN
#define TSRT_FN static __attribute__((unused))
#endif

/* Internal functions kept out of line: the micro-kernels are called from
 * several places (full tiles, edges, the Winograd loops) and inlining each
 * copy doubled a unit's compile time for no speed (a call costs a few
 * cycles per micro-kernel call of ~1500). `unused`: a unit may include a
 * header without calling everything in it. */
#if defined(__GNUC__) && !defined(__clang__)
#define TSRT__OUTLINE static __attribute__((noinline, noclone, unused))
#else
#define TSRT__OUTLINE static __attribute__((noinline, unused))
#endif

/* ---- the epilogue callback ----------------------------------------------- */

/* Called once for every block of C whose final value (A·B, plus the old C
 * when accumulating) has just been stored, while the block is still in L1/L2.
 * `c` points at element (m0, n0) of the block; element (i, j) of the block,
 * 0 <= i < mb, 0 <= j < nb, is c[i*rs + j*cs]. The blocks of one call (all
 * threads together) are disjoint and cover C exactly once. The callback may
 * rewrite the block in place (bias, activation, residual add, scale, cast
 * into another buffer...) but must not touch C outside it, since other
 * threads may be writing there. m0/n0 are logical coordinates: for batched
 * GEMM, m0 = batch * M + row (a block never straddles two batches); for
 * convolution, m0 = image * O + output channel and n0 = oh * OW + ow. */
typedef void (*tsrt_epilogue_fn)(void *ctx, float *c, ptrdiff_t rs, ptrdiff_t cs,
                                 int64_t m0, int64_t n0, int64_t mb, int64_t nb);

/* ---- the tile epilogue ------------------------------------------------------
 *
 * The epilogues most contractions end with, as data rather than a callback,
 * so that the micro-kernel applies them to a finished tile while it is
 * still in registers: conv + bias + ReLU(6), conv + bias + residual + ReLU,
 * dot + bias (+ residual). Going back over each finished block through the
 * callback cost MobileNetV2's 16 -> 96 channel 1x1 conv 40% more than the
 * product alone (D32). For element (r, q) of the epilogue's coordinates
 * (the callback's m0 + i, n0 + j) the result is, in this order,
 *   v = C[r][q]  (A·B, plus the old C when accumulating)
 *   v += row[r]; v += col[q]; v += res[r*res_rs + q]   (each if not NULL)
 *   v = max(v, lo) (+ 0.0 when lo is +0); v = min(v, hi)   (each if flagged)
 * with max/min by a non-NaN constant as maxps/minps compute them: a NaN v
 * is kept; max(-0, +0) = +0 through the + 0.0 (the primitives' rule;
 * min(x, -0) is not expressible and never flagged). A template given one
 * uses it wherever it computes a tile with unit column stride and calls
 * the callback, which must mean the same, everywhere else.
 *
 * An epilogue that only begins with such terms (a bias, then SiLU) is
 * split (D138): the descriptor holds the terms, and `rest` the callback
 * of what follows, which the template calls on each finished block after
 * the terms, where it would have called the callback; the full callback
 * still runs where the descriptor cannot. */
enum { TSRT_TE_MAX = 1, TSRT_TE_MIN = 2, TSRT_TE_MAX_PZ = 4 };

typedef struct tsrt_tepi {
    const float *row, *col, *res; /* NULL: no such term */
    ptrdiff_t res_rs;
    float lo, hi;
    int clamp; /* TSRT_TE_* */
    tsrt_epilogue_fn rest; /* NULL: nothing after the terms */
    void *rest_ctx;
} tsrt_tepi;

/* The descriptor of the tile whose element (0, 0) is (r, q). */
static inline tsrt_tepi tsrt__te_at(const tsrt_tepi *e, int64_t r, int64_t q)
{
    tsrt_tepi t = *e;
    if (t.row) t.row += r;
    if (t.col) t.col += q;
    if (t.res) t.res += r * t.res_rs + q;
    return t;
}

/* An mr x nr tile of C already stored (c[i*rs + j]) through te (from
 * tsrt__te_at) in place: the kernels that do not apply it in registers
 * (edges, depthwise, Winograd, generic). One vectorized pass per
 * row; an absent term is an operation that changes nothing (x + -0 = x
 * for every x, -0 included; max(x, -inf) and min(x, +inf) keep x, NaN
 * included), so the bits are those of the registers' version. */
#define TSRT__TE_ROW(EXTRA)                                                   \
    for (int64_t j = 0; j < nr; j++) {                                        \
        float x = ci[j] + b EXTRA;                                            \
        x = lo > x ? lo : x;                                                  \
        x += z;                                                               \
        ci[j] = hi < x ? hi : x;                                              \
    }
TSRT__OUTLINE void tsrt__te_tile(const tsrt_tepi *te, float *c, ptrdiff_t rs, int64_t mr, int64_t nr)
{
    const float lo = te->clamp & TSRT_TE_MAX ? te->lo : -INFINITY, hi = te->clamp & TSRT_TE_MIN ? te->hi : INFINITY;
    const float z = te->clamp & TSRT_TE_MAX_PZ ? 0.0f : -0.0f;
    const float *restrict col = te->col;
    for (int64_t i = 0; i < mr; i++) {
        float *restrict ci = c + i * rs;
        const float *restrict ri = te->res ? te->res + i * te->res_rs : NULL;
        const float b = te->row ? te->row[i] : -0.0f;
        if (col && ri) TSRT__TE_ROW(+ col[j] + ri[j])
        else if (col) TSRT__TE_ROW(+ col[j])
        else if (ri) TSRT__TE_ROW(+ ri[j])
        else TSRT__TE_ROW()
    }
}
#undef TSRT__TE_ROW

/* ---- instruction-set selection ------------------------------------------- */

/* One micro-kernel is compiled per unit, picked by the target the unit is
 * compiled for (the emitter compiles with -march=native). TSRT_FORCE_GENERIC
 * selects the portable kernel on any target; TSRT_AVX512_EMULATED (set by
 * tests/unit/avx512_emu.h, which supplies the intrinsics) the AVX-512 one
 * on a machine without it, for testing. */
#define TSRT_ISA_GENERIC 0
#define TSRT_ISA_AVX2 1
#define TSRT_ISA_AVX512 2

#if defined(TSRT_FORCE_GENERIC)
#define TSRT_ISA TSRT_ISA_GENERIC
#elif defined(__AVX512F__) || defined(TSRT_AVX512_EMULATED)
#define TSRT_ISA TSRT_ISA_AVX512
#elif defined(__AVX2__) && defined(__FMA__)
#define TSRT_ISA TSRT_ISA_AVX2
#else
#define TSRT_ISA TSRT_ISA_GENERIC
#endif

/* ---- blocking constants ---------------------------------------------------
 *
 * MR x NR is the register tile of the micro-kernel; KC, MC, NC the cache
 * blocks of the BLIS loop nest (tsrt_gemm.h):
 *   - a KC x NR micro-panel of packed B stays in L1 while the micro-kernel
 *     sweeps the MC rows of packed A past it;
 *   - the MC x KC block of packed A stays in L2 (it is re-read once per NR
 *     columns);
 *   - the KC x NC panel of packed B stays in L3 (re-read once per MC rows).
 *
 * AVX2+FMA, tuned on AMD Zen 3 (32 KiB L1d 8-way, 512 KiB L2 per core, L3
 * shared; 2 FMA pipes of 8 floats, latency 4, so >= 8 independent
 * accumulators are needed and 12 are used): 6x16 uses 12 ymm accumulators,
 * 2 for B and 2 for broadcasts of A = all 16 registers. Per k step: 12 FMAs
 * (6 cycles at 2/cycle) against 2 vector loads + 6 broadcasts (8 loads,
 * within the 2-3 loads/cycle of Zen 3 and Intel cores).
 * KC = 256: the B micro-panel is 256*16*4 = 16 KiB, half of L1, leaving the
 * other half for the A micro-panel (6 KiB) streaming in and the C tile.
 * MC = 144: the A block is 144 KiB, a bit over a quarter of L2, so the part
 * of the B panel in flight and C strips fit beside it without evicting it.
 * NC = 3072: the B panel is 3 MiB per thread; two threads' panels stay in
 * the L3 slice. NC is large so that A is packed once per 3072 columns.
 * A sweep of KC 192-512 x MC 72-240 (TSRT_KC/MC/NC can be overridden)
 * stayed within the machine's noise for 1024^3 and 256^3.
 * Row tiles of 4 (tsrt__ukr4, 8 accumulators) end blocks whose rows leave
 * a remainder of 4 or 2 (D33). Tiles of 4 everywhere were measured too:
 * 1024^3 87-94 against 95-96 GFLOP/s, 4096x4096x256 95 against 97, so 6
 * stays the tile.
 *
 * AVX-512 (written before any AVX-512 machine was at hand, its logic run
 * through tests/unit/avx512_emu.h; first measured on Zen 4, 2026-12-01:
 * 1024^3 at 87% of the FMA peak, KC 192/256 within noise of 384; MC and
 * NC untuned): 14x32 uses 28
 * zmm accumulators, 2 for B and 1 broadcast = 31 of 32 registers; 28 FMAs
 * per 16 loads. KC = 192: the 24 KiB B micro-panel and the 10.5 KiB A
 * micro-panel fit a 48 KiB L1 together. KC = 384 (BLIS's Skylake-X
 * blocking, a 48 KiB B micro-panel streaming from L2) had been the
 * choice until the transformer products, M = 128 against pre-packed
 * weights, measured 6-8% faster at 192 on a Zen 5 core (GPT-2 and BERT,
 * D66); 1024^3 and the convolutions alike. MC = 168, NC = 3072.
 *
 * Generic: 6x16 in GCC/Clang vector extensions (8-wide vectors, which the
 * compiler maps to the target's registers); the AVX2 sizes. */
#define TSRT_AVX2_MR 6
#define TSRT_AVX2_NR 16
#define TSRT_AVX2_KC 256
#define TSRT_AVX2_MC 144
#define TSRT_AVX2_NC 3072

#define TSRT_AVX512_MR 14
#define TSRT_AVX512_NR 32
#define TSRT_AVX512_KC 192
#define TSRT_AVX512_MC 168
#define TSRT_AVX512_NC 3072

#if TSRT_ISA == TSRT_ISA_AVX512
#define TSRT_MR TSRT_AVX512_MR
#define TSRT_NR TSRT_AVX512_NR
#define TSRT_KC_DEFAULT TSRT_AVX512_KC
#define TSRT_MC_DEFAULT TSRT_AVX512_MC
#define TSRT_NC_DEFAULT TSRT_AVX512_NC
#else
#define TSRT_MR TSRT_AVX2_MR
#define TSRT_NR TSRT_AVX2_NR
#define TSRT_KC_DEFAULT TSRT_AVX2_KC
#define TSRT_MC_DEFAULT TSRT_AVX2_MC
#define TSRT_NC_DEFAULT TSRT_AVX2_NC
#endif

/* Overrides exist for tuning runs. Workspace sizes
 * (tsrt_sgemm_workspace) are computed from the largest constants of all
 * instruction sets, so the host planner and the generated code agree
 * whatever flags each was compiled with; an override larger than those
 * needs TSRT_WS_* raised too. */
#ifndef TSRT_KC
#define TSRT_KC TSRT_KC_DEFAULT
#endif
#ifndef TSRT_MC
#define TSRT_MC TSRT_MC_DEFAULT
#endif
#ifndef TSRT_NC
#define TSRT_NC TSRT_NC_DEFAULT
#endif
#if TSRT_MC % TSRT_MR != 0 || TSRT_NC % TSRT_NR != 0
#error "tsrt: MC must be a multiple of MR and NC a multiple of NR"
#endif

/* Upper bounds over every ISA's constants, for workspace sizing. */
#define TSRT_WS_MR 14
#define TSRT_WS_NR 32
#define TSRT_WS_KC 384
#define TSRT_WS_MC 168
#define TSRT_WS_NC 3072
#if TSRT_KC > TSRT_WS_KC || TSRT_MC > TSRT_WS_MC || TSRT_NC > TSRT_WS_NC
#error "tsrt: a blocking override exceeds the TSRT_WS_* bounds; raise them too"
#endif

/* Packed panels start on a cache line (and a zmm) boundary. */
#define TSRT_ALIGN 64

/* ---- portable vectors -------------------------------------------------------
 *
 * 8 floats in GCC/Clang vector extensions: one ymm with AVX, two xmm with
 * SSE or NEON (the compiler splits it). Variables have the natural type;
 * memory is accessed through the unaligned, may_alias type. (memcpy into a
 * variable declared aligned(4) made gcc 12 bounce every load through the
 * stack as two 16-byte stores and a 32-byte reload: 10x slower.) Macros, not
 * functions: passing a 32-byte vector by value changes the ABI on targets
 * without AVX (-Wpsabi). */
typedef float tsrt__v8 __attribute__((vector_size(32)));
typedef float tsrt__v8u __attribute__((vector_size(32), aligned(4), may_alias));
#define TSRT__V8_LOAD(v, p) ((v) = *(const tsrt__v8u *)(const void *)(p))
#define TSRT__V8_STORE(p, v) (*(tsrt__v8u *)(void *)(p) = (v))
/* acc += w * b on 8 floats. GCC compiles the units without FMA
 * contraction (-std=c11): the FMA builtin, not <immintrin.h>, whose
 * parsing costs ~0.3 s per unit. Clang contracts `a += w * b` itself. */
#if defined(__FMA__) && defined(__GNUC__) && !defined(__clang__)
#define TSRT__FMA8(acc, w, b) ((acc) = __builtin_ia32_vfmaddps256((w), (b), (acc)))
#else
#define TSRT__FMA8(acc, w, b) ((acc) += (w) * (b))
#endif
#if TSRT_ISA == TSRT_ISA_AVX2
/* The 8 floats at p, lanes i with j + i in [lo, hi); zero in the others,
 * which are not read (vmaskmovps, through the builtin that gcc and clang
 * share: no <immintrin.h>). */
typedef int tsrt__i8 __attribute__((vector_size(32)));
#define TSRT__V8_LOAD_IN(v, p, j, lo, hi)                                                                    \
    do {                                                                                                     \
        const tsrt__i8 l_ = (int)(j) + (tsrt__i8){0, 1, 2, 3, 4, 5, 6, 7};                                   \
        (v) = __builtin_ia32_maskloadps256((const tsrt__v8 *)(const void *)(p), (l_ >= (int)(lo)) & (l_ < (int)(hi))); \
    } while (0)
#endif

typedef int32_t tsrt__v8i __attribute__((vector_size(32)));

/* The tile epilogue's clamp as vectors (NULL te: none): max by lo, then
 * + z, then min by hi (tsrt__v8_clamp). */
static inline void tsrt__te_bounds(const tsrt_tepi *te, tsrt__v8 *lo, tsrt__v8 *hi, tsrt__v8 *z)
{
    *lo = *hi = *z = (tsrt__v8){0} - 0.0f;
    if (!te) return;
    *lo = (tsrt__v8){0} + (te->clamp & TSRT_TE_MAX ? te->lo : -INFINITY);
    *hi = (tsrt__v8){0} + (te->clamp & TSRT_TE_MIN ? te->hi : INFINITY);
    *z = (tsrt__v8){0} + (te->clamp & TSRT_TE_MAX_PZ ? 0.0f : -0.0f);
}

/* max(q, lo), + z, min(., hi): tsrt__te_tile's clamp, as a compare and
 * a select (lo > x ? lo : x keeps a NaN x). Pointers, not values: a
 * vector passed by value changes the ABI without AVX (-Wpsabi). */
static inline void tsrt__v8_clamp(tsrt__v8 *q, const tsrt__v8 *lo, const tsrt__v8 *hi, const tsrt__v8 *z)
{
#ifdef __AVX__
    /* vmaxps/vminps return the second operand unless the first is larger
     * (smaller): the same bits, two instructions instead of eight */
    *q = __builtin_ia32_maxps256(*lo, *q);
    *q += *z;
    *q = __builtin_ia32_minps256(*hi, *q);
    return;
#endif
    tsrt__v8i m = *lo > *q;
    *q = (tsrt__v8)((m & (tsrt__v8i)*lo) | (~m & (tsrt__v8i)*q));
    *q += *z;
    m = *hi < *q;
    *q = (tsrt__v8)((m & (tsrt__v8i)*hi) | (~m & (tsrt__v8i)*q));
}

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

/* ---- small helpers -------------------------------------------------------- */

static inline int64_t tsrt__min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t tsrt__max(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t tsrt__cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t tsrt__rup(int64_t a, int64_t b) { return tsrt__cdiv(a, b) * b; }

/* The first TSRT_ALIGN-aligned address at or after p. */
static inline float *tsrt__align(void *p)
{
    uintptr_t u = (uintptr_t)p;
    return (float *)((u + (TSRT_ALIGN - 1)) & ~(uintptr_t)(TSRT_ALIGN - 1));
}

#endif /* TSRT_COMMON_H */
