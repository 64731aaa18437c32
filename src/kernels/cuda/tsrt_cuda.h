/* tsrt_cuda.h — what CUDA C kernels emitted from the loop IR start with
 * (codegen/cuda/emit_cuda.c pastes it): the C names the shared emitter
 * writes (stdint types, INT64_C, NAN, the tsrt_ scalar helpers of
 * kernels/cpu/scalar.h) for NVRTC, which has no system headers, with the
 * primitives' exact meanings (docs/primitives.md) kept: integer division
 * by zero, saturating float-to-int casts, NaN and signed-zero max/min.
 * The program is compiled with -default-device, so the plain functions
 * here and in tsrt_int.h are device functions. libm's f-suffixed names
 * are CUDA's own device functions (within the interpreter's tolerance,
 * not its bits). */
#ifndef TSRT_CUDA_H
#define TSRT_CUDA_H

typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define INT64_C(x) ((long long)(x##LL))
#define UINT64_C(x) ((unsigned long long)(x##ULL))
#ifndef NAN
#define NAN __int_as_float(0x7fc00000)
#endif
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

#define tsrt_expf expf
#define tsrt_expf_np expf
#define tsrt_logf logf
#define tsrt_tanhf tanhf
#define tsrt_erff erff

/* a streamed row (D50) is a plain copy here; no fence needed */
#define tsrt_stream_row(dst, src, n)                                        \
    for (long long tsrt_q_ = 0; tsrt_q_ < (n); tsrt_q_++) (dst)[tsrt_q_] = (src)[tsrt_q_]
#define tsrt_stream_fence()

/* max/min: NaN if either is NaN (the first); +0 beats -0 in max, -0 in min */
static inline float tsrt_maxf(float a, float b)
{
    return (a < b || b != b || (a == b && signbit(a))) ? b : a;
}
static inline float tsrt_minf(float a, float b)
{
    return (a > b || b != b || (a == b && signbit(b))) ? b : a;
}
static inline double tsrt_max(double a, double b)
{
    return (a < b || b != b || (a == b && signbit(a))) ? b : a;
}
static inline double tsrt_min(double a, double b)
{
    return (a > b || b != b || (a == b && signbit(b))) ? b : a;
}
static inline double tsrt_sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }
static inline float tsrt_signf(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : x; }

/* the integer helpers (division, powers, shifts) follow this file:
 * kernels/cpu/tsrt_int.h, pasted after it */

/* float -> integer: truncate, saturate to [lo, hi], NaN -> 0 */
static inline long long tsrt_f2s(double v, long long lo, long long hi)
{
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return hi;
    if (v <= -9223372036854775808.0) return lo;
    long long x = (long long)v;
    return x > hi ? hi : x < lo ? lo : x;
}
static inline unsigned long long tsrt_f2u(double v, unsigned long long hi)
{
    if (v != v || v <= 0) return 0;
    if (v >= 18446744073709551615.0) return hi;
    unsigned long long x = (unsigned long long)v;
    return x > hi ? hi : x;
}

#endif
