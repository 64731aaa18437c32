/* test_dtype_small.c — the 8/4-bit float codecs and the sub-byte integers
 * (src/core/dtype_small.c, dtype.c), checked against a brute-force oracle:
 * the nearest value in the format's decoded table, ties to the even code. */
#include "check.h"
#include "core/dtype.h"

#include <math.h>
#include <string.h>

static const ts_dtype floats[] = {TS_DTYPE_F8E4M3FN, TS_DTYPE_F8E4M3FNUZ, TS_DTYPE_F8E5M2, TS_DTYPE_F8E5M2FNUZ,
                                  TS_DTYPE_F4E2M1};

static int codes(ts_dtype dt) { return dt == TS_DTYPE_F4E2M1 ? 16 : 256; }

static bool same(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

/* Every code decodes to a value that encodes back to that code; NaN codes
 * decode to NaN, and encoding NaN gives a NaN code. */
static void test_round_trip(void)
{
    for (size_t f = 0; f < sizeof floats / sizeof floats[0]; f++) {
        ts_dtype dt = floats[f];
        int bad = 0, nans = 0;
        for (int c = 0; c < codes(dt); c++) {
            double v = ts_small_float_decode(dt, (uint8_t)c);
            if (isnan(v)) {
                nans++;
                continue;
            }
            if (ts_small_float_encode(dt, v) != c) bad++;
        }
        CHECK_MSG(bad == 0, "%s: %d codes do not round-trip", ts_dtype_name(dt), bad);
        int want_nans = dt == TS_DTYPE_F8E5M2 ? 6 : dt == TS_DTYPE_F8E4M3FN ? 2 : dt == TS_DTYPE_F4E2M1 ? 0 : 1;
        CHECK_MSG(nans == want_nans, "%s: %d NaN codes, want %d", ts_dtype_name(dt), nans, want_nans);
        if (want_nans) CHECK(isnan(ts_small_float_decode(dt, ts_small_float_encode(dt, NAN))));
    }
}

/* The oracle: nearest finite value by search; a tie goes to the code whose
 * lowest bit is 0; beyond the largest value (by more than half a step, as
 * the search sees it) the format's overflow rule. */
static uint8_t oracle(ts_dtype dt, double v, double max)
{
    int best = -1;
    double best_d = INFINITY;
    for (int c = 0; c < codes(dt); c++) {
        double x = ts_small_float_decode(dt, (uint8_t)c);
        if (isnan(x) || isinf(x)) continue;
        if (x == 0 && signbit(x) != signbit(v) && dt != TS_DTYPE_F8E4M3FNUZ && dt != TS_DTYPE_F8E5M2FNUZ) continue;
        double d = fabs(x - v);
        if (d < best_d || (d == best_d && (c & 1) == 0)) best = c, best_d = d;
    }
    (void)max;
    return (uint8_t)best;
}

/* The step above the largest value: where rounding to nearest would land
 * if the format went on. */
static double next_step(ts_dtype dt, double max)
{
    int m = dt == TS_DTYPE_F8E5M2 || dt == TS_DTYPE_F8E5M2FNUZ ? 2 : dt == TS_DTYPE_F4E2M1 ? 1 : 3;
    int e;
    frexp(max, &e);
    return ldexp(1.0, e - 1 - m);
}

static void test_rounding_every_f16(void)
{
    for (size_t f = 0; f < sizeof floats / sizeof floats[0]; f++) {
        ts_dtype dt = floats[f];
        double max = 0;
        for (int c = 0; c < codes(dt); c++) {
            double x = ts_small_float_decode(dt, (uint8_t)c);
            if (isfinite(x) && x > max) max = x;
        }
        double limit = max + next_step(dt, max) / 2;   /* a tie here rounds to the odd max: away */
        int bad = 0, first = -1;
        for (int h = 0; h < 65536; h++) {
            double v = ts_f16_to_f32((uint16_t)h);
            uint8_t got = ts_small_float_encode(dt, v);
            double g = ts_small_float_decode(dt, got);
            double want;
            if (isnan(v)) want = dt == TS_DTYPE_F4E2M1 ? -0.0 : NAN;
            else if (fabs(v) >= limit && !(fabs(v) == limit && ((ts_small_float_encode(dt, max) & 1) == 0)))
                want = dt == TS_DTYPE_F8E5M2 ? copysign(INFINITY, v) : dt == TS_DTYPE_F4E2M1 ? copysign(max, v) : NAN;
            else want = ts_small_float_decode(dt, oracle(dt, v, max));
            if (!same(g, want)) {
                bad++;
                if (first < 0) first = h;
            }
        }
        CHECK_MSG(bad == 0, "%s: %d of 65536 f16 values round wrongly (first f16 0x%04x)", ts_dtype_name(dt), bad,
                  first);
    }
}

static void test_known_values(void)
{
    CHECK(ts_small_float_decode(TS_DTYPE_F8E4M3FN, 0x7e) == 448);
    CHECK(ts_small_float_decode(TS_DTYPE_F8E4M3FN, 0x01) == ldexp(1, -9));
    CHECK(ts_small_float_encode(TS_DTYPE_F8E4M3FN, 464) == 0x7e);   /* tie: to the even 448 */
    CHECK(ts_small_float_encode(TS_DTYPE_F8E4M3FN, 465) == 0x7f);   /* overflow: NaN */
    CHECK(ts_small_float_encode(TS_DTYPE_F8E4M3FN, -INFINITY) == 0xff);
    CHECK(ts_small_float_encode(TS_DTYPE_F8E4M3FNUZ, -0.0) == 0x00);  /* no -0 */
    CHECK(ts_small_float_encode(TS_DTYPE_F8E4M3FNUZ, -1e-9) == 0x00);
    CHECK(ts_small_float_decode(TS_DTYPE_F8E4M3FNUZ, 0x7f) == 240);
    CHECK(ts_small_float_decode(TS_DTYPE_F8E5M2FNUZ, 0x7f) == 57344);
    CHECK(ts_small_float_encode(TS_DTYPE_F8E5M2, 61440) == 0x7c);     /* tie with inf: to the even inf */
    CHECK(ts_small_float_encode(TS_DTYPE_F8E5M2, 61439) == 0x7b);
    CHECK(ts_small_float_encode(TS_DTYPE_F8E5M2FNUZ, INFINITY) == 0x80);
    CHECK(ts_small_float_encode(TS_DTYPE_F4E2M1, 1e6) == 0x7);
    CHECK(ts_small_float_encode(TS_DTYPE_F4E2M1, -INFINITY) == 0xf);
    CHECK(ts_small_float_encode(TS_DTYPE_F4E2M1, 0.25) == 0x0);
    CHECK(ts_small_float_encode(TS_DTYPE_F4E2M1, 0.75) == 0x2);
    CHECK(ts_small_float_encode(TS_DTYPE_F4E2M1, -3.5) == 0xe);   /* -4 */
    /* e8m0 rounds the magnitude up to a power of two */
    CHECK(ts_small_float_decode(TS_DTYPE_F8E8M0, 127) == 1);
    CHECK(ts_small_float_decode(TS_DTYPE_F8E8M0, 0) == ldexp(1, -127));
    CHECK(isnan(ts_small_float_decode(TS_DTYPE_F8E8M0, 255)));
    CHECK(ts_small_float_encode(TS_DTYPE_F8E8M0, 1.1) == 128);
    CHECK(ts_small_float_encode(TS_DTYPE_F8E8M0, 2.0) == 128);
    CHECK(ts_small_float_encode(TS_DTYPE_F8E8M0, -3.0) == 129);
    CHECK(ts_small_float_encode(TS_DTYPE_F8E8M0, 0.0) == 0);
    CHECK(ts_small_float_encode(TS_DTYPE_F8E8M0, ldexp(1, 127)) == 254);
    CHECK(ts_small_float_encode(TS_DTYPE_F8E8M0, ldexp(1.5, 127)) == 255);
    CHECK(ts_small_float_encode(TS_DTYPE_F8E8M0, INFINITY) == 255);
}

static void test_sub_byte_ints(void)
{
    int8_t s[1];
    uint8_t u[1];
    const struct { ts_dtype dt; int64_t in, want; } wraps[] = {
        {TS_DTYPE_I4, 8, -8}, {TS_DTYPE_I4, -9, 7}, {TS_DTYPE_I4, 15, -1}, {TS_DTYPE_I4, -8, -8},
        {TS_DTYPE_U4, 16, 0}, {TS_DTYPE_U4, -1, 15}, {TS_DTYPE_I2, 2, -2}, {TS_DTYPE_I2, -3, 1},
        {TS_DTYPE_U2, 5, 1}, {TS_DTYPE_U2, -1, 3},
    };
    for (size_t i = 0; i < sizeof wraps / sizeof wraps[0]; i++) {
        void *p = ts_dtype_is_signed(wraps[i].dt) ? (void *)s : (void *)u;
        ts_elem_set_i64(wraps[i].dt, p, 0, wraps[i].in);
        CHECK_MSG(ts_elem_get_i64(wraps[i].dt, p, 0) == wraps[i].want, "%s %lld", ts_dtype_name(wraps[i].dt),
                  (long long)wraps[i].in);
    }
    /* from floats: truncate, then saturate to the width, NaN -> 0 */
    const struct { ts_dtype dt; double in; int64_t want; } sats[] = {
        {TS_DTYPE_I4, 100.0, 7}, {TS_DTYPE_I4, -100.0, -8}, {TS_DTYPE_I4, -7.9, -7}, {TS_DTYPE_U4, 15.9, 15},
        {TS_DTYPE_U4, -3.0, 0}, {TS_DTYPE_I2, 1.5, 1}, {TS_DTYPE_I2, -2.5, -2}, {TS_DTYPE_U2, 5.0, 3},
        {TS_DTYPE_U2, NAN, 0},
    };
    for (size_t i = 0; i < sizeof sats / sizeof sats[0]; i++) {
        void *p = ts_dtype_is_signed(sats[i].dt) ? (void *)s : (void *)u;
        ts_elem_set_f64(sats[i].dt, p, 0, sats[i].in);
        CHECK_MSG(ts_elem_get_i64(sats[i].dt, p, 0) == sats[i].want, "%s %g", ts_dtype_name(sats[i].dt), sats[i].in);
    }
    CHECK(ts_dtype_size(TS_DTYPE_I4) == 1 && ts_dtype_bits(TS_DTYPE_I4) == 4 && ts_dtype_bits(TS_DTYPE_U2) == 2);
    CHECK(ts_dtype_is_storage(TS_DTYPE_F8E8M0) && !ts_dtype_is_storage(TS_DTYPE_F64));
    CHECK(!ts_dtype_is_signed(TS_DTYPE_F8E8M0) && ts_dtype_is_signed(TS_DTYPE_F4E2M1));
    /* f8 values read as integers: NaN is 0, inf saturates */
    uint8_t nan_code = 0x7f, inf_code = 0x7c;
    CHECK(ts_elem_get_i64(TS_DTYPE_F8E4M3FN, &nan_code, 0) == 0);
    CHECK(ts_elem_get_i64(TS_DTYPE_F8E5M2, &inf_code, 0) == INT64_MAX);
}

int main(void)
{
    test_round_trip();
    test_rounding_every_f16();
    test_known_values();
    test_sub_byte_ints();
    return check_report();
}
