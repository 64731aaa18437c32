/* scalar.h — the scalar semantics of tessera's primitives in plain C, for
 * generated kernels (pasted at the top of every generated translation
 * unit; it must stay self-contained: standard headers only). Each function
 * states the primitive rule it implements (docs/primitives.md); the
 * reference interpreter implements the same rules, and the differential
 * tests run both. Integer arithmetic happens in 64 bits and is truncated
 * by the caller's cast, which wraps, as the interpreter's stores do. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* max/min: NaN if either is NaN (the first); +0 beats -0 in max, -0 in min. */
static inline double tsrt_max(double a, double b)
{
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}
static inline double tsrt_min(double a, double b)
{
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}
static inline float tsrt_maxf(float a, float b)
{
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}
static inline float tsrt_minf(float a, float b)
{
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}
/* sign(±0) = ±0, NaN stays NaN */
static inline float tsrt_signf(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : x; }
static inline double tsrt_sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }

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
