/* tsrt_cl.h — what OpenCL C kernels emitted from the loop IR start with
 * (codegen/opencl/emit_cl.c pastes it): the C names the shared emitter
 * writes (stdint types, INT64_C, libm's f-suffixed functions, the tsrt_
 * scalar helpers of kernels/cpu/scalar.h) spelt in OpenCL C, with the
 * primitives' exact meanings (docs/primitives.md) kept: integer division
 * by zero, saturating float-to-int casts, NaN and signed-zero max/min.
 * The f32 exp/log/tanh/erf map to OpenCL's built-ins (within the
 * interpreter's tolerance, not its bits). */
#ifndef TSRT_CL_H
#define TSRT_CL_H

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

typedef char int8_t;
typedef uchar uint8_t;
typedef short int16_t;
typedef ushort uint16_t;
typedef int int32_t;
typedef uint uint32_t;
typedef long int64_t;
typedef ulong uint64_t;
#define INT64_C(x) ((long)(x##L))
#define UINT64_C(x) ((ulong)(x##UL))

/* libm's names: OpenCL's built-ins are overloaded by argument type */
#define expf exp
#define logf log
#define sqrtf sqrt
#define sinf sin
#define cosf cos
#define tanf tan
#define tanhf tanh
#define erff erf
#define floorf floor
#define ceilf ceil
#define rintf rint
#define fabsf fabs
#define fmodf fmod
#define powf pow
#define atan2f atan2
#define tsrt_expf exp
#define tsrt_expf_np exp
#define tsrt_logf log
#define tsrt_tanhf tanh
#define tsrt_erff erf

/* a streamed row (D50) is a plain copy here; no fence needed */
#define tsrt_stream_row(dst, src, n)                                   \
    for (long tsrt_q_ = 0; tsrt_q_ < (n); tsrt_q_++) (dst)[tsrt_q_] = (src)[tsrt_q_]
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
#ifdef cl_khr_fp64
static inline double tsrt_max(double a, double b)
{
    return (a < b || b != b || (a == b && signbit(a))) ? b : a;
}
static inline double tsrt_min(double a, double b)
{
    return (a > b || b != b || (a == b && signbit(b))) ? b : a;
}
static inline double tsrt_sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }
#endif
static inline float tsrt_signf(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : x; }

/* the integer helpers (division, powers, shifts) follow this file:
 * kernels/cpu/tsrt_int.h, pasted after it */

/* float -> integer: truncate, saturate to [lo, hi], NaN -> 0 (through
 * double where the device has it, else float: the same saturation) */
#ifdef cl_khr_fp64
typedef double tsrt_wide;
#else
typedef float tsrt_wide;
#endif
static inline long tsrt_f2s(tsrt_wide v, long lo, long hi)
{
    if (v != v) return 0;
    if (v >= (tsrt_wide)9223372036854775807.0) return hi;
    if (v <= (tsrt_wide)-9223372036854775808.0) return lo;
    long x = (long)v;
    return x > hi ? hi : x < lo ? lo : x;
}
static inline ulong tsrt_f2u(tsrt_wide v, ulong hi)
{
    if (v != v || v <= 0) return 0;
    if (v >= (tsrt_wide)18446744073709551615.0) return hi;
    ulong x = (ulong)v;
    return x > hi ? hi : x;
}

#endif
