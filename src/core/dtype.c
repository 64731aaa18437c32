/* dtype.c — element types and the half-precision conversions. */
#include "dtype.h"

#include <math.h>
#include <string.h>

static const struct {
    const char *name;
    int bits;   /* value bits; every type takes at least one byte in memory */
} info[TS_DTYPE_COUNT] = {
    [TS_DTYPE_BOOL] = {"bool", 8}, [TS_DTYPE_I8] = {"i8", 8},
    [TS_DTYPE_U8] = {"u8", 8},     [TS_DTYPE_I16] = {"i16", 16},
    [TS_DTYPE_U16] = {"u16", 16},  [TS_DTYPE_I32] = {"i32", 32},
    [TS_DTYPE_U32] = {"u32", 32},  [TS_DTYPE_I64] = {"i64", 64},
    [TS_DTYPE_U64] = {"u64", 64},  [TS_DTYPE_F16] = {"f16", 16},
    [TS_DTYPE_BF16] = {"bf16", 16}, [TS_DTYPE_F32] = {"f32", 32},
    [TS_DTYPE_F64] = {"f64", 64},
    [TS_DTYPE_F8E4M3FN] = {"f8e4m3fn", 8}, [TS_DTYPE_F8E4M3FNUZ] = {"f8e4m3fnuz", 8},
    [TS_DTYPE_F8E5M2] = {"f8e5m2", 8},     [TS_DTYPE_F8E5M2FNUZ] = {"f8e5m2fnuz", 8},
    [TS_DTYPE_F8E8M0] = {"f8e8m0", 8},     [TS_DTYPE_F4E2M1] = {"f4e2m1", 4},
    [TS_DTYPE_I4] = {"i4", 4}, [TS_DTYPE_U4] = {"u4", 4},
    [TS_DTYPE_I2] = {"i2", 2}, [TS_DTYPE_U2] = {"u2", 2},
};

const char *ts_dtype_name(ts_dtype dt) { return ts_dtype_valid(dt) ? info[dt].name : NULL; }
size_t ts_dtype_size(ts_dtype dt)
{
    if (!ts_dtype_valid(dt)) return 0;
    return info[dt].bits < 8 ? 1 : (size_t)info[dt].bits / 8;
}
int ts_dtype_bits(ts_dtype dt) { return ts_dtype_valid(dt) ? info[dt].bits : 0; }

ts_status ts_dtype_from_name(const char *name, ts_dtype *out)
{
    for (int i = 0; i < TS_DTYPE_COUNT; i++)
        if (name && strcmp(name, info[i].name) == 0) {
            *out = (ts_dtype)i;
            return TS_OK;
        }
    return TS_ERR_INVALID_ARG;
}

bool ts_dtype_is_float(ts_dtype dt) { return dt >= TS_DTYPE_F16 && dt <= TS_DTYPE_F64; }
bool ts_dtype_is_int(ts_dtype dt) { return dt >= TS_DTYPE_I8 && dt <= TS_DTYPE_U64; }
bool ts_dtype_is_storage(ts_dtype dt) { return dt >= TS_DTYPE_F8E4M3FN && dt < TS_DTYPE_COUNT; }
bool ts_dtype_is_small_float(ts_dtype dt) { return dt >= TS_DTYPE_F8E4M3FN && dt <= TS_DTYPE_F4E2M1; }
bool ts_dtype_is_fp(ts_dtype dt) { return ts_dtype_is_float(dt) || ts_dtype_is_small_float(dt); }

bool ts_dtype_is_signed(ts_dtype dt)
{
    switch (dt) {
    case TS_DTYPE_I8: case TS_DTYPE_I16: case TS_DTYPE_I32: case TS_DTYPE_I64: case TS_DTYPE_I4: case TS_DTYPE_I2:
        return true;
    case TS_DTYPE_F8E8M0:   /* powers of two only: no sign bit */
        return false;
    default:
        return ts_dtype_is_fp(dt);
    }
}

/* ---- half precision ----------------------------------------------------
 * Both conversions work on the bit pattern of the wider type so that the
 * rounding is one correct round-to-nearest-even, subnormals included. */

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint64_t f64_bits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }

/* Round the wide significand `mant` (with `shift` low bits to drop) to
 * nearest even. */
static uint64_t rne_shift(uint64_t mant, int shift)
{
    if (shift <= 0) return mant << -shift;
    if (shift >= 64) return 0;
    uint64_t kept = mant >> shift;
    uint64_t rest = mant & ((UINT64_C(1) << shift) - 1);
    uint64_t half = UINT64_C(1) << (shift - 1);
    if (rest > half || (rest == half && (kept & 1))) kept++;
    return kept;
}

/* Generic binary64 -> small IEEE format (exp_bits, man_bits) with RNE. */
static uint16_t f64_to_small(double d, int exp_bits, int man_bits)
{
    uint64_t u = f64_bits(d);
    uint16_t sign = (uint16_t)((u >> 63) << (exp_bits + man_bits));
    int e = (int)((u >> 52) & 0x7ff);
    uint64_t m = u & ((UINT64_C(1) << 52) - 1);
    int bias = (1 << (exp_bits - 1)) - 1;
    uint16_t inf = (uint16_t)(((1u << exp_bits) - 1) << man_bits);
    if (e == 0x7ff) {
        if (m == 0) return sign | inf;
        /* keep the top payload bits, and make sure it stays a NaN */
        return sign | inf | (uint16_t)(1u << (man_bits - 1)) | (uint16_t)(m >> (52 - man_bits));
    }
    if (e == 0 && m == 0) return sign;
    /* value = 1.m * 2^(e-1023) (normal) or 0.m * 2^-1022 (subnormal) */
    int exp = e ? e - 1023 : -1022;
    uint64_t mant = e ? (m | (UINT64_C(1) << 52)) : m;  /* 53-bit significand */
    int target_exp = exp + bias;
    if (target_exp >= (1 << exp_bits) - 1) return sign | inf;
    uint64_t r;
    if (target_exp > 0) {
        r = rne_shift(mant, 52 - man_bits);  /* includes the hidden bit */
        /* rounding may carry into the next binade */
        if (r >> (man_bits + 1)) {
            r >>= 1;
            target_exp++;
            if (target_exp >= (1 << exp_bits) - 1) return sign | inf;
        }
        return sign | (uint16_t)((uint64_t)target_exp << man_bits) |
               (uint16_t)(r & ((UINT64_C(1) << man_bits) - 1));
    }
    /* subnormal in the target: shift further; a carry gives the smallest
     * normal, which the plain bit pattern already spells */
    r = rne_shift(mant, 52 - man_bits + (1 - target_exp));
    return sign | (uint16_t)r;
}

static double small_to_f64(uint16_t h, int exp_bits, int man_bits)
{
    int sign = (h >> (exp_bits + man_bits)) & 1;
    int e = (h >> man_bits) & ((1 << exp_bits) - 1);
    int m = h & ((1 << man_bits) - 1);
    int bias = (1 << (exp_bits - 1)) - 1;
    double v;
    if (e == (1 << exp_bits) - 1)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, 1 - bias - man_bits);
    else
        v = ldexp((double)(m | (1 << man_bits)), e - bias - man_bits);
    return sign ? -v : v;
}

uint16_t ts_f64_to_f16(double d) { return f64_to_small(d, 5, 10); }
uint16_t ts_f64_to_bf16(double d) { return f64_to_small(d, 8, 7); }
/* f32 -> f64 is exact, so one rounding happens either way. */
uint16_t ts_f32_to_f16(float f) { return f64_to_small((double)f, 5, 10); }
float ts_f16_to_f32(uint16_t h) { return (float)small_to_f64(h, 5, 10); }

uint16_t ts_f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40);  /* quiet NaN */
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

float ts_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

/* ---- element access ---------------------------------------------------- */

double ts_elem_get_f64(ts_dtype dt, const void *p, int64_t i)
{
    switch (dt) {
    case TS_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
    case TS_DTYPE_I8: return ((const int8_t *)p)[i];
    case TS_DTYPE_U8: return ((const uint8_t *)p)[i];
    case TS_DTYPE_I16: return ((const int16_t *)p)[i];
    case TS_DTYPE_U16: return ((const uint16_t *)p)[i];
    case TS_DTYPE_I32: return ((const int32_t *)p)[i];
    case TS_DTYPE_U32: return ((const uint32_t *)p)[i];
    case TS_DTYPE_I64: return (double)((const int64_t *)p)[i];
    case TS_DTYPE_U64: return (double)((const uint64_t *)p)[i];
    case TS_DTYPE_F16: return ts_f16_to_f32(((const uint16_t *)p)[i]);
    case TS_DTYPE_BF16: return ts_bf16_to_f32(((const uint16_t *)p)[i]);
    case TS_DTYPE_F32: return ((const float *)p)[i];
    case TS_DTYPE_F64: return ((const double *)p)[i];
    case TS_DTYPE_I4: case TS_DTYPE_I2: return ((const int8_t *)p)[i];
    case TS_DTYPE_U4: case TS_DTYPE_U2: return ((const uint8_t *)p)[i];
    default: return ts_small_float_decode(dt, ((const uint8_t *)p)[i]);
    }
}

/* float -> integer: truncate toward zero; NaN gives 0; out of range
 * saturates. C leaves these undefined; tessera defines them. */
static int64_t f64_to_i64_sat(double v)
{
    if (isnan(v)) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

static uint64_t f64_to_u64_sat(double v)
{
    if (isnan(v) || v <= 0) return 0;
    if (v >= 18446744073709551615.0) return UINT64_MAX;
    return (uint64_t)v;
}

int64_t ts_elem_get_i64(ts_dtype dt, const void *p, int64_t i)
{
    switch (dt) {
    case TS_DTYPE_U64: return (int64_t)((const uint64_t *)p)[i];
    case TS_DTYPE_I64: return ((const int64_t *)p)[i];
    default:
        if (ts_dtype_is_fp(dt)) return f64_to_i64_sat(ts_elem_get_f64(dt, p, i));
        return (int64_t)ts_elem_get_f64(dt, p, i);  /* exact for <= 32 bits */
    }
}

uint64_t ts_elem_get_u64(ts_dtype dt, const void *p, int64_t i)
{
    switch (dt) {
    case TS_DTYPE_U64: return ((const uint64_t *)p)[i];
    default:
        if (ts_dtype_is_fp(dt)) return f64_to_u64_sat(ts_elem_get_f64(dt, p, i));
        return (uint64_t)ts_elem_get_i64(dt, p, i);
    }
}

void ts_elem_set_i64(ts_dtype dt, void *p, int64_t i, int64_t v)
{
    switch (dt) {
    case TS_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case TS_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case TS_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case TS_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case TS_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case TS_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case TS_DTYPE_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case TS_DTYPE_I64: ((int64_t *)p)[i] = v; break;
    case TS_DTYPE_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    /* sub-byte integers wrap to their own width and are kept extended */
    case TS_DTYPE_I4: ((int8_t *)p)[i] = (int8_t)((int)((v & 0xf) ^ 0x8) - 0x8); break;
    case TS_DTYPE_U4: ((uint8_t *)p)[i] = (uint8_t)(v & 0xf); break;
    case TS_DTYPE_I2: ((int8_t *)p)[i] = (int8_t)((int)((v & 0x3) ^ 0x2) - 0x2); break;
    case TS_DTYPE_U2: ((uint8_t *)p)[i] = (uint8_t)(v & 0x3); break;
    default: ts_elem_set_f64(dt, p, i, (double)v); break;
    }
}

void ts_elem_set_u64(ts_dtype dt, void *p, int64_t i, uint64_t v)
{
    if (ts_dtype_is_fp(dt))
        ts_elem_set_f64(dt, p, i, (double)v);
    else
        ts_elem_set_i64(dt, p, i, (int64_t)v);
}

void ts_elem_set_f64(ts_dtype dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case TS_DTYPE_F16: ((uint16_t *)p)[i] = ts_f64_to_f16(v); break;
    case TS_DTYPE_BF16: ((uint16_t *)p)[i] = ts_f64_to_bf16(v); break;
    case TS_DTYPE_F32: ((float *)p)[i] = (float)v; break;
    case TS_DTYPE_F64: ((double *)p)[i] = v; break;
    case TS_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;  /* NaN is true, as in C */
    case TS_DTYPE_U64: ((uint64_t *)p)[i] = f64_to_u64_sat(v); break;
    default: {
        if (ts_dtype_is_small_float(dt)) {
            ((uint8_t *)p)[i] = ts_small_float_encode(dt, v);
            break;
        }
        /* saturate to the target's own range, so a float -> int cast never
         * wraps (C leaves it undefined; tessera defines it) */
        int bits = ts_dtype_bits(dt);
        if (ts_dtype_is_signed(dt)) {
            int64_t hi = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
            int64_t x = f64_to_i64_sat(v);
            ts_elem_set_i64(dt, p, i, x > hi ? hi : x < -hi - 1 ? -hi - 1 : x);
        } else {
            uint64_t hi = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
            uint64_t x = f64_to_u64_sat(v);
            ts_elem_set_i64(dt, p, i, (int64_t)(x > hi ? hi : x));
        }
        break;
    }
    }
}
