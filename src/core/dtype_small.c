/* dtype_small.c — the 8- and 4-bit float formats of ONNX (and of the OCP
 * MX specification): decoding to double and one correct rounding back.
 *
 * All of them are "sign, exponent, mantissa" with a bias, and differ only in
 * what the top of the range means: e5m2 is IEEE-like (inf and NaNs), e4m3fn
 * keeps only S.1111.111 for NaN and has no inf, the "fnuz" variants have no
 * inf, no negative zero and use 0x80 for NaN, f4e2m1 has neither inf nor
 * NaN, and e8m0 is an unsigned power of two with 0xff for NaN. Working in
 * double is exact throughout: every value of these formats, and every
 * scaling by a power of two below, is representable. */
#include "dtype.h"

#include <math.h>

typedef enum top { TOP_IEEE, TOP_FN, TOP_FNUZ, TOP_NONE } top;

typedef struct fmt {
    int e, m, bias;
    top top;
    double max;   /* largest finite value */
} fmt;

static const fmt *fmt_of(ts_dtype dt)
{
    static const fmt f8e4m3fn = {4, 3, 7, TOP_FN, 448.0};
    static const fmt f8e4m3fnuz = {4, 3, 8, TOP_FNUZ, 240.0};
    static const fmt f8e5m2 = {5, 2, 15, TOP_IEEE, 57344.0};
    static const fmt f8e5m2fnuz = {5, 2, 16, TOP_FNUZ, 57344.0};
    static const fmt f4e2m1 = {2, 1, 1, TOP_NONE, 6.0};
    switch (dt) {
    case TS_DTYPE_F8E4M3FN: return &f8e4m3fn;
    case TS_DTYPE_F8E4M3FNUZ: return &f8e4m3fnuz;
    case TS_DTYPE_F8E5M2: return &f8e5m2;
    case TS_DTYPE_F8E5M2FNUZ: return &f8e5m2fnuz;
    case TS_DTYPE_F4E2M1: return &f4e2m1;
    default: return NULL;
    }
}

double ts_small_float_decode(ts_dtype dt, uint8_t b)
{
    if (dt == TS_DTYPE_F8E8M0) return b == 0xff ? NAN : ldexp(1.0, (int)b - 127);
    const fmt *f = fmt_of(dt);
    if (!f) return 0;
    int width = 1 + f->e + f->m;
    b &= (uint8_t)((1u << width) - 1);
    int sign = b >> (width - 1), e = (b >> f->m) & ((1 << f->e) - 1), m = b & ((1 << f->m) - 1);
    int emax = (1 << f->e) - 1;
    if (f->top == TOP_FNUZ && b == 0x80) return NAN;
    if (f->top == TOP_FN && e == emax && m == (1 << f->m) - 1) return NAN;
    if (f->top == TOP_IEEE && e == emax) return m ? NAN : sign ? -INFINITY : INFINITY;
    double v = e ? ldexp((double)(m | (1 << f->m)), e - f->bias - f->m) : ldexp((double)m, 1 - f->bias - f->m);
    return sign ? -v : v;
}

/* e8m0: the magnitude rounded up to a power of two (ONNX's default
 * round_mode); 2^-127 stands for everything at or below it, zero included;
 * above 2^127, inf and NaN give NaN. */
static uint8_t e8m0_encode(double v)
{
    double a = fabs(v);
    if (isnan(a) || isinf(a)) return 0xff;
    if (a <= ldexp(1.0, -127)) return 0;
    int ex;
    double fr = frexp(a, &ex);   /* a = fr * 2^ex, fr in [0.5, 1) */
    int k = fr == 0.5 ? ex - 1 : ex;
    return k > 127 ? 0xff : (uint8_t)(k + 127);
}

static uint8_t nan_of(const fmt *f, int sign)
{
    int width = 1 + f->e + f->m;
    switch (f->top) {
    case TOP_IEEE: return (uint8_t)((sign << (width - 1)) | (((1 << f->e) - 1) << f->m) | (1 << (f->m - 1)));
    case TOP_FN: return (uint8_t)((sign << (width - 1)) | ((1 << (width - 1)) - 1));
    case TOP_FNUZ: return 0x80;
    default: return (uint8_t)(1u << (width - 1));   /* no NaN: -0, as ml_dtypes gives */
    }
}

uint8_t ts_small_float_encode(ts_dtype dt, double v)
{
    if (dt == TS_DTYPE_F8E8M0) return e8m0_encode(v);
    const fmt *f = fmt_of(dt);
    if (!f) return 0;
    int width = 1 + f->e + f->m, sign = signbit(v) ? 1 : 0;
    uint8_t sbit = (uint8_t)(sign << (width - 1));
    if (isnan(v)) return nan_of(f, sign);
    double a = fabs(v);
    if (!isinf(a)) {
        int ex, emin = 1 - f->bias;
        frexp(a, &ex);
        int q = (ex - 1 < emin ? emin : ex - 1) - f->m;   /* exponent of one unit in the last place */
        a = ldexp(rint(ldexp(a, -q)), q);                 /* rint: to nearest even */
    }
    if (a > f->max) {
        if (f->top == TOP_IEEE) return (uint8_t)(sbit | (((1 << f->e) - 1) << f->m));
        if (f->top == TOP_NONE) a = f->max;   /* f4e2m1 saturates: it has no other answer */
        else return nan_of(f, sign);
    }
    if (a == 0) return f->top == TOP_FNUZ ? 0 : sbit;   /* fnuz has no -0 */
    int ex, emin = 1 - f->bias;
    frexp(a, &ex);
    if (ex - 1 < emin) return (uint8_t)(sbit | (int)ldexp(a, f->m - emin));   /* subnormal */
    int mant = (int)ldexp(a, f->m - (ex - 1)) - (1 << f->m);
    return (uint8_t)(sbit | ((ex - 1 + f->bias) << f->m) | mant);
}
