/* tsrt_int.h — the integer primitives' exact meanings (docs/primitives.md)
 * for generated code: division and remainder by zero and by -1, powers
 * modulo 2^64, shifts by any count. Written in the subset of C that is
 * also OpenCL C and CUDA C: the CPU's units paste it before scalar.h,
 * OpenCL and CUDA programs after their preambles (kernels/opencl/tsrt_cl.h,
 * kernels/cuda/tsrt_cuda.h), which typedef int64_t and uint64_t. */
#ifndef TSRT_INT_H
#define TSRT_INT_H

#if !defined(__OPENCL_C_VERSION__) && !defined(__CUDACC_RTC__)   /* the device preambles spell them */
#include <stdint.h>
#endif

/* Integer division truncates; x/0 = 0; INT_MIN/-1 wraps. x%0 = x, x%-1 = 0. */
static inline int64_t tsrt_div_s(int64_t a, int64_t b)
{
    return b == 0 ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}
static inline uint64_t tsrt_div_u(uint64_t a, uint64_t b) { return b == 0 ? 0 : a / b; }
static inline int64_t tsrt_rem_s(int64_t a, int64_t b) { return b == 0 ? a : b == -1 ? 0 : a % b; }
static inline uint64_t tsrt_rem_u(uint64_t a, uint64_t b) { return b == 0 ? a : a % b; }
/* Powers modulo 2^64; a negative exponent truncates the fraction to 0
 * unless the base is 1 or -1. */
static inline uint64_t tsrt_ipow(uint64_t a, uint64_t e)
{
    uint64_t r = 1;
    for (; e; e >>= 1, a *= a)
        if (e & 1) r *= a;
    return r;
}
static inline int64_t tsrt_pow_s(int64_t a, int64_t e)
{
    if (e >= 0) return (int64_t)tsrt_ipow((uint64_t)a, (uint64_t)e);
    if (a == 1) return 1;
    if (a == -1) return (e & 1) ? -1 : 1;
    return 0;
}
/* Shift counts outside [0, bits) shift every bit out (arithmetic right
 * shift fills with the sign). */
static inline int64_t tsrt_shl_s(int64_t a, int64_t b, int bits)
{
    return b < 0 || b >= bits ? 0 : (int64_t)((uint64_t)a << b);
}
static inline uint64_t tsrt_shl_u(uint64_t a, uint64_t b, int bits) { return b >= (uint64_t)bits ? 0 : a << b; }
static inline int64_t tsrt_shr_s(int64_t a, int64_t b, int bits)
{
    if (b < 0 || b >= bits) return a < 0 ? -1 : 0;
    return a < 0 ? ~(~a >> b) : a >> b;
}
static inline uint64_t tsrt_shr_u(uint64_t a, uint64_t b, int bits) { return b >= (uint64_t)bits ? 0 : a >> b; }

#endif
