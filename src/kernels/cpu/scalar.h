/* scalar.h — the scalar semantics of tessera's primitives in plain C, for
 * generated kernels (pasted at the top of every generated translation
 * unit; it must stay self-contained: standard headers only). Each function
 * states the primitive rule it implements (docs/primitives.md); the
 * reference interpreter implements the same rules, and the differential
 * tests run both. Integer arithmetic happens in 64 bits and is truncated
 * by the caller's cast, which wraps, as the interpreter's stores do.
 * Guarded like the other runtime headers, so the units of one program
 * (`tessera ir --emit c` prints them one after another) also compile as
 * one file. */
#ifndef TSRT_SCALAR_H
#define TSRT_SCALAR_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* max/min: NaN if either is NaN (the first); +0 beats -0 in max, -0 in min. */
/* One select over comparisons, no branches, so loops around them
 * vectorize (a branchy version kept ReLU6 epilogues scalar: 14% of
 * MobileNetV2). max picks b when a < b, b is NaN, or a == b with a = -0. */
static inline double tsrt_max(double a, double b)
{
    return (a < b || b != b || (a == b && signbit(a))) ? b : a;
}
static inline double tsrt_min(double a, double b)
{
    return (a > b || b != b || (a == b && signbit(b))) ? b : a;
}
/* tsrt_maxf, tsrt_minf: below, after the bit helpers. */
/* Before a max/min lane loop of the generated kernels (emit_lanes.c): gcc
 * unrolled the 16-lane loop before vectorizing it when the row loop around
 * it had few trips (rows of 128, attention's softmax), and SLP then left
 * the compare, select and NaN note scalar: 16 vmaxss per 16 floats
 * instead of one vmaxps. Kept as a loop, the vectorizer takes it whole. */
#if defined(__GNUC__) && (__GNUC__ >= 8 || defined(__clang__))
#define TSRT_LANE_LOOP _Pragma("GCC unroll 1")
#else
#define TSRT_LANE_LOOP
#endif
/* sign(±0) = ±0, NaN stays NaN */
static inline float tsrt_signf(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : x; }
static inline double tsrt_sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }

/* the integer helpers (division, powers, shifts): tsrt_int.h, pasted
 * before this file into generated units (the OpenCL preamble pastes it
 * too), included from disk where this file is compiled alone */
#ifndef TSRT_INT_H
#include "tsrt_int.h"
#endif

/* float -> integer: truncate, saturate to [lo, hi], NaN -> 0 */
static inline int64_t tsrt_f2s(double v, int64_t lo, int64_t hi)
{
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return hi;
    if (v <= -9223372036854775808.0) return lo;
    int64_t x = (int64_t)v;
    return x > hi ? hi : x < lo ? lo : x;
}
static inline uint64_t tsrt_f2u(double v, uint64_t hi)
{
    if (v != v || v <= 0) return 0;
    if (v >= 18446744073709551615.0) return hi;
    uint64_t x = (uint64_t)v;
    return x > hi ? hi : x;
}

/* The f32 block partials of a generated sum, added to its f64 lanes
 * (emit_lanes.c): as vectors the conversion and adds are a few
 * instructions; as arrays gcc splits the f64 lanes into 16 scalars and the
 * flush took ~50 per block (D49). GCC/Clang vector extensions; the C
 * compiler splits them to the machine's width. The 16 f64 lanes are two
 * vectors of 8 (lanes 0-7, 8-15), each one AVX-512 register: as one
 * 128-byte vector gcc carried them from block to block through the stack
 * in 32-byte pieces and reloaded them whole, a store that cannot forward
 * at every flush (D85). */
typedef float tsrt_f32x8 __attribute__((vector_size(32)));
typedef double tsrt_f64x8 __attribute__((vector_size(64)));
static inline void tsrt_lanes_add16(tsrt_f64x8 *lo, tsrt_f64x8 *hi, const float *f)
{
    tsrt_f32x8 a, b;
    memcpy(&a, f, sizeof a);
    memcpy(&b, f + 8, sizeof b);
    *lo += __builtin_convertvector(a, tsrt_f64x8);
    *hi += __builtin_convertvector(b, tsrt_f64x8);
}

/* A finished row of n floats from src (a row scratch in L1) to dst,
 * bypassing the caches where the machine has non-temporal vector stores
 * and dst is aligned to them: no read of the lines first, no eviction of
 * what later kernels read (D50). Compiler builtins, not intrinsics headers:
 * this file includes standard headers only. Elsewhere a plain copy.
 * The load of a chunk must be as wide as the vector that stored it, or
 * store forwarding fails and the load waits for the stores to retire: a
 * chunk stored as two 32-byte vectors and loaded as one 64-byte vector
 * cost 40% of softmax on an Intel core (D57); with -mprefer-vector-width=512
 * (the default flags, D58) the generated loops store a chunk as one
 * 64-byte vector, and 32-byte loads of it cost 6-9% of softmax and layer
 * norm on a Zen 5 core (D68). So 64-byte stores with AVX-512 (a build
 * preferring 256-bit vectors on an AVX-512 machine would want 32). */
#if defined(__AVX512F__)
typedef float tsrt_ntv_ __attribute__((vector_size(64)));
#define TSRT_NT_STORE_(p, v) __builtin_ia32_movntps512((p), (v))
#elif defined(__AVX__)
typedef float tsrt_ntv_ __attribute__((vector_size(32)));
#define TSRT_NT_STORE_(p, v) __builtin_ia32_movntps256((p), (v))
#endif
#if defined(__clang__) && (defined(__AVX512F__) || defined(__AVX__))
#undef TSRT_NT_STORE_
#define TSRT_NT_STORE_(p, v) __builtin_nontemporal_store((v), (tsrt_ntv_ *)(p))
#endif
/* 16 floats of such a row: non-temporal when dst is aligned to the
 * vector stores (a row's chunks share its alignment, so the choice is the
 * row's), a plain copy otherwise. */
static inline void tsrt_stream16(float *restrict dst, const float *restrict src)
{
#if defined(__AVX512F__) || defined(__AVX__)
    if (((uintptr_t)dst & (sizeof(tsrt_ntv_) - 1)) == 0) {
        for (int i = 0; i < 16; i += (int)(sizeof(tsrt_ntv_) / sizeof(float))) {
            tsrt_ntv_ v;
            memcpy(&v, src + i, sizeof v);
            TSRT_NT_STORE_(dst + i, v);
        }
        return;
    }
#endif
    memcpy(dst, src, sizeof(float) * 16);
}
/* A whole row of n floats from a scratch row: by chunks of 16 when n is
 * a multiple of 16. The emitter streams a row's last pass chunk by chunk
 * (emit_c.c, D55); this is the stream statement's general form. */
static inline void tsrt_stream_row(float *restrict dst, const float *restrict src, int64_t n)
{
    if (n % 16 == 0) {
        for (int64_t i = 0; i < n; i += 16) tsrt_stream16(dst + i, src + i);
        return;
    }
    memcpy(dst, src, sizeof(float) * (size_t)n);
}
/* Non-temporal stores are weakly ordered: a thread fences its own before
 * the pool's barrier hands the output to the next kernel. */
static inline void tsrt_stream_fence(void)
{
#if defined(__AVX512F__) || defined(__AVX__)
    __builtin_ia32_sfence();
#endif
}

/* ---- f32 exp, log, tanh, erf: branch-free, vectorizable ----------------
 * Generated kernels are compiled without -ffast-math, where gcc and clang
 * call libm's expf/logf/tanhf/erff once per element and vectorize nothing
 * around them. These versions are straight-line arithmetic (selects, no
 * branches, no tables) on float and 32-bit integer lanes, so a loop
 * `y[i] = tsrt_expf(x[i])` vectorizes at -O3 -march=native (8 lanes with
 * AVX2, 16 with AVX-512). Accuracy, checked over every f32 input against
 * the exact value (libm's f64 result; `test_rt_math --all`, CI samples
 * every 211th): at most 1 ulp for exp and log, 2 ulp for tanh and erf
 * (docs/primitives.md; measured 0.90, 0.88, 1.42, 1.42 with FMA, 0.91,
 * 0.92, 1.42, 1.49 without), subnormal results included. Special values as
 * C99: NaN -> NaN, exp(-inf) = 0, exp overflow = inf, exp underflow to
 * subnormals and 0 rounded once, log(±0) = -inf, log(x < 0) = NaN,
 * log(inf) = inf, tanh/erf(±inf) = ±1, tanh/erf(±0) = ±0.
 * Polynomials: minimax fits (Lawson's algorithm) of the reduced functions,
 * coefficients rounded to float. f64 keeps libm (docs/decisions.md D24). */
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA) || defined(FP_FAST_FMAF)
#define TSRT_FMAF(a, b, c) fmaf((a), (b), (c))
#else
#define TSRT_FMAF(a, b, c) ((a) * (b) + (c))
#endif

static inline uint32_t tsrt_f2bits_(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static inline float tsrt_bits2f_(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}
/* c ? a : b on bits. A plain ?: between two computed floats lets gcc sink
 * each computation into its own branch, and then (-ftrapping-math, the
 * default) it will not speculate them back: the loop stops vectorizing. */
static inline float tsrt_self_(int c, float a, float b)
{
    const uint32_t m = 0u - (uint32_t)(c != 0);
    return tsrt_bits2f_((tsrt_f2bits_(a) & m) | (tsrt_f2bits_(b) & ~m));
}

/* tsrt_max's meaning in float, in operations a vector unit has: the two
 * compare-and-selects `b > a ? b : a` and `a > b ? a : b` (one vmaxps
 * each: the larger where they differ, a resp. b where equal or
 * unordered), ANDed bit by bit (±0: +0 unless both are -0; equal
 * numbers, or a number and the other's max: itself), then a where a is
 * NaN, then b where b is NaN. gcc makes it six vector operations (two
 * max, two compares, a masked AND and a masked move); the earlier form,
 * `a < b ? b : a` then an AND only where a == b through bit selects,
 * took eleven, and a 3x3/2 max pool over rows of 47 ran 22% slower
 * (D146). Plain ?: is safe here: the flags the JIT passes include
 * -fno-trapping-math, under which gcc speculates both arms; the form
 * through bit selects is kept for tsrt_self_'s other users. Bit for bit
 * the same as tsrt_max on every pair (test_rt_math: the special values
 * and random bit patterns, NaN payloads and signs included). */
static inline float tsrt_maxf(float a, float b)
{
    const float m = b > a ? b : a, m2 = a > b ? a : b;
    const float r = tsrt_bits2f_(tsrt_f2bits_(m) & tsrt_f2bits_(m2));
    const float s = a != a ? a : r;
    return b != b ? b : s;
}
/* The mirror image: the two minima ORed (-0 unless both are +0). */
static inline float tsrt_minf(float a, float b)
{
    const float m = b < a ? b : a, m2 = a < b ? a : b;
    const float r = tsrt_bits2f_(tsrt_f2bits_(m) | tsrt_f2bits_(m2));
    const float s = a != a ? a : r;
    return b != b ? b : s;
}

/* e^(rh + rl) - 1 for |rh + rl| <= ln2/2 (+ a little), rl the small
 * part: rh + (rl + r^2 Q(r)), Q's relative error 3.8e-9. Keeping rl apart
 * saves the rounding of r = rh + rl (up to 1/4 ulp of the result). The
 * callers scale it by 2^n as fma(t, 2^n, 2^n): one rounding of
 * (1 + t) 2^n, the same bits as rounding 1 + t and scaling it exactly,
 * in one operation instead of two.
 * Q by Estrin's scheme, (c4 + c3 r) + r^2 ((c2 + c1 r) + c0 r^2): the
 * same five operations as Horner's (r^2 is needed anyway) in three
 * dependent steps instead of four. In softmax's exp pass the chain from
 * load to store, not the operation count, bounds a row (D85). */
static inline float tsrt_expm1f_poly_(float rh, float rl)
{
    const float r = rh + rl;
    const float r2 = r * r;
    const float lo = TSRT_FMAF(0x1.555492p-3f, r, 0x1.fffffcp-2f);
    const float hi = TSRT_FMAF(0x1.6a243ap-10f, r2, TSRT_FMAF(0x1.1239e0p-7f, r, 0x1.5558f2p-5f));
    const float q = TSRT_FMAF(hi, r2, lo);
    return rh + TSRT_FMAF(r2, q, rl);
}

/* x = n ln2 + rh + rl: n = round(x / ln2) by the shifter 1.5*2^23 + bias
 * (no float->int conversion, so NaN is no undefined behaviour), whose
 * bits are kb = 0x4b400000 + bias + n: for 0 <= n + bias < 256, kb << 23
 * is 2^(n + bias - 127) as float bits in one shift. The bias is odd in
 * every caller, so n rounds alike in all of them (ties cannot occur in
 * range anyway: x / ln2 is a half-integer only for |x| >= 2^22). Cody and
 * Waite with ln2 = C1 + C2, C1 of 9 significant bits: rh = x - n C1 is
 * exact for |n| < 2^15, rl = -n C2 (|rl| < 0.032). */
#define TSRT_EXPF_REDUCE_(x, bias, kb, rh, rl) \
    const float kf_ = TSRT_FMAF((x), 0x1.715476p+0f, 0x1.8p23f + (float)(bias)); \
    const uint32_t kb = tsrt_f2bits_(kf_); \
    const float nf_ = kf_ - (0x1.8p23f + (float)(bias)); \
    const float rh = TSRT_FMAF(nf_, -0x1.63p-1f, (x)); \
    const float rl = nf_ * 0x1.bd0106p-13f

/* exp for |x| <= 80 (no overflow, no underflow): the helpers' exp. */
static inline float tsrt_expf_core_(float x)
{
    TSRT_EXPF_REDUCE_(x, 127, kb, rh, rl);
    const float s = tsrt_bits2f_(kb << 23);
    return TSRT_FMAF(tsrt_expm1f_poly_(rh, rl), s, s);
}

/* exp(x) < 2^-150 rounds to +0 for x < -103.972: below -104 the result
 * is selected as +0 and the lane computes exp(0) meanwhile. Clamping such
 * x to -104 gave the same bits, but through a product that underflows,
 * which Intel cores finish in a microcode assist (~150 cycles per vector
 * op): a causal mask's -FLT_MAX entries made GPT-2's attention softmax 4x
 * slower than BERT's (D79). */
static inline float tsrt_expf(float x)
{
    /* exp(x) > FLT_MAX for x > 88.7228. Clamping keeps n in [-150, 128]
     * and the result right. */
    const int zero = x < -104.0f;   /* NaN: no */
    float xc = tsrt_self_(x > 88.8f, 88.8f, x);
    xc = tsrt_self_(zero, 0.0f, xc);
    TSRT_EXPF_REDUCE_(xc, 127, kb, rh, rl);
    const uint32_t n = kb - (0x4b400000u + 127u);
    /* 2^n as two normal factors, so that a subnormal result is rounded
     * once ((1 + t) 2^n1 is normal) and 2^128 overflows to inf as it
     * should. */
    const uint32_t n1 = (uint32_t)((int32_t)n >> 1), n2 = n - n1;
    const float s1 = tsrt_bits2f_((n1 + 127u) << 23);
    const float p = TSRT_FMAF(tsrt_expm1f_poly_(rh, rl), s1, s1);
    return tsrt_self_(zero, 0.0f, p * tsrt_bits2f_((n2 + 127u) << 23));
}

/* tsrt_expf for x <= 0 or NaN, bit for bit (the lowering proves the sign:
 * softmax's exp(x - max x), D37): no overflow clamp, and 2^n for
 * n in [-150, 0] as 2^(n+24), normal, times 2^-24, which rounds the exact
 * (1 + t) 2^n once as the two factors do. Below -104 the lane computes on
 * x itself (no select in front of the chain, D85) and its scale is made 0
 * instead: t is then normal (large when x < -2^15 ln2), inf or NaN, so
 * fma(t, 0, 0) * 2^-24 passes no underflow to a microcode assist (D79),
 * and the last select gives +0. */
static inline float tsrt_expf_np(float x)
{
    const int zero = x < -104.0f;   /* NaN: no */
    TSRT_EXPF_REDUCE_(x, 151, kb, rh, rl);
    const float s = tsrt_bits2f_(zero ? 0u : kb << 23);
    return tsrt_self_(zero, 0.0f, TSRT_FMAF(tsrt_expm1f_poly_(rh, rl), s, s) * 0x1p-24f);
}

static inline float tsrt_logf(float x)
{
    /* x = 2^e m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact);
     * log(1 + f) = f - f^2/2 + f^3 R(f), relative error 6.5e-9;
     * log x = (e C1 + f) + (f^2 (f R - 1/2) + e C2), C1 + C2 = ln 2. */
    /* subnormal x (or x <= 0, replaced below) is scaled by 2^23; masks,
     * not ?:, for the reason tsrt_self_ gives */
    const uint32_t sub = 0u - (uint32_t)(x < 0x1p-126f);
    const float xs = x * tsrt_bits2f_(0x3f800000u + (sub & (23u << 23)));
    const uint32_t k = tsrt_f2bits_(xs) - 0x3f3504f3u;
    const float e = (float)(((int32_t)k >> 23) - (int32_t)(sub & 23u));
    const float f = tsrt_bits2f_((k & 0x7fffffu) + 0x3f3504f3u) - 1.0f;
    float q = TSRT_FMAF(-0x1.38b586p-4f, f, 0x1.055b6cp-3f);
    q = TSRT_FMAF(q, f, -0x1.0d8542p-3f);
    q = TSRT_FMAF(q, f, 0x1.22da1cp-3f);
    q = TSRT_FMAF(q, f, -0x1.547244p-3f);
    q = TSRT_FMAF(q, f, 0x1.99a008p-3f);
    q = TSRT_FMAF(q, f, -0x1.000226p-2f);
    q = TSRT_FMAF(q, f, 0x1.555554p-2f);
    q = TSRT_FMAF(q, f, -0.5f);
    const float lo = TSRT_FMAF(f * f, q, e * -0x1.bd0106p-13f);
    /* e C1 + f as hi + err exactly (Fast2Sum: |e C1| >= |f| unless e = 0,
     * where hi = f): the sum then rounds once, not twice */
    const float ec = e * 0x1.63p-1f, hi = ec + f, err = (ec - hi) + f;
    float y = hi + (lo + err);
    y = tsrt_self_(x == INFINITY, x, y);
    y = tsrt_self_(x == 0.0f, -INFINITY, y);
    return tsrt_self_(x >= 0.0f, y, NAN);   /* x < 0 or NaN */
}

static inline float tsrt_tanhf(float x)
{
    /* |x| < 0.55: |x| + |x|^3 T(x^2) (relative error 4.4e-9); above, where
     * tanh >= 1/2: 1 - 2 / (e^2|x| + 1), |x| clamped to 9.5 (tanh rounds
     * to 1 from 9.01 on). Both are computed; a select picks one. */
    const float t = fabsf(x), s = x * x;
    float q = TSRT_FMAF(-0x1.9b3046p-8f, s, 0x1.593d08p-6f);
    q = TSRT_FMAF(q, s, -0x1.b9287ap-5f);
    q = TSRT_FMAF(q, s, 0x1.110d26p-3f);
    q = TSRT_FMAF(q, s, -0x1.55554ap-2f);
    const float small = TSRT_FMAF(t * s, q, t);
    const float tc = tsrt_self_(t > 9.5f, 9.5f, t);   /* NaN passes */
    const float big = 1.0f - 2.0f / (tsrt_expf_core_(tc + tc) + 1.0f);
    return copysignf(tsrt_self_(t < 0.55f, small, big), x);
}

static inline float tsrt_erff(float x)
{
    /* |x| < 0.75: |x| + |x| E(x^2) (relative error 7.4e-9); above:
     * 1 - exp(-P(|x|)), P fitting -log(erfc), |x| clamped to 4 (erf
     * rounds to 1 from 3.92 on). Both computed, a select picks one. */
    const float t = fabsf(x), s = x * x;
    float q = TSRT_FMAF(-0x1.61de90p-11f, s, 0x1.4f2c82p-8f);
    q = TSRT_FMAF(q, s, -0x1.b7a894p-6f);
    q = TSRT_FMAF(q, s, 0x1.ce2ac8p-4f);
    q = TSRT_FMAF(q, s, -0x1.81273ap-2f);
    q = TSRT_FMAF(q, s, 0x1.06eba8p-3f);
    const float small = TSRT_FMAF(t, q, t);
    const float tc = tsrt_self_(t > 4.0f, 4.0f, t);   /* NaN passes */
    float p = TSRT_FMAF(-0x1.bf10bep-13f, tc, 0x1.a43176p-9f);
    p = TSRT_FMAF(p, tc, -0x1.76596ep-6f);
    p = TSRT_FMAF(p, tc, 0x1.aec154p-4f);
    p = TSRT_FMAF(p, tc, 0x1.458d08p-1f);
    p = TSRT_FMAF(p, tc, 0x1.20e104p+0f);
    p = TSRT_FMAF(p, tc, 0x1.67267ap-16f);
    const float big = 1.0f - tsrt_expf_core_(-p);
    return copysignf(tsrt_self_(t < 0.75f, small, big), x);
}

#endif /* TSRT_SCALAR_H */
