/* interp_vals.h — tensor elements written as text, for the table-driven
 * kernel tests (test_interp_elementwise.c, test_interp_reduce.c).
 *
 * A value list is space-separated tokens read in the tensor's dtype:
 * integers in decimal (or 0x hex), exact to 64 bits; floats as strtod reads
 * them ("-0", "nan", "inf", "0x1.002p+0"), then rounded once to the dtype;
 * bool as 0/1. Comparison is exact on the stored bits (so -0.0 differs from
 * +0.0) except that any NaN equals any NaN; with ulps > 0 a float may be off
 * by ulps * 2^-precision relative to the expected value (for the C
 * library's transcendental functions). */
#ifndef TS_INTERP_VALS_H
#define TS_INTERP_VALS_H

#include "interp_case.h"

#include <inttypes.h>
#include <stdlib.h>

static TS_UNUSED int tv_count(const char *s)
{
    int n = 0;
    while (s && *s) {
        while (*s == ' ') s++;
        if (!*s) break;
        n++;
        while (*s && *s != ' ') s++;
    }
    return n;
}

/* Parse one token at *s into element i of p; advance *s. */
static TS_UNUSED void tv_parse(ts_dtype dt, void *p, int64_t i, const char **s)
{
    char *end;
    while (**s == ' ') (*s)++;
    if (ts_dtype_is_float(dt)) ts_elem_set_f64(dt, p, i, strtod(*s, &end));
    else if (ts_dtype_is_signed(dt)) ts_elem_set_i64(dt, p, i, strtoll(*s, &end, 0));
    else ts_elem_set_u64(dt, p, i, strtoull(*s, &end, 0));
    *s = end;
}

/* A new tensor of the given shape holding the listed values. */
static TS_UNUSED ts_tensor *tv_tensor(ts_dtype dt, int rank, const int64_t *shape, const char *vals)
{
    ts_tensor *t = NULL;
    if (ts_tensor_new(dt, rank, shape, &t, NULL) != TS_OK) return NULL;
    const char *s = vals;
    for (int64_t i = 0; i < t->numel; i++) tv_parse(dt, t->data, i, &s);
    return t;
}

/* 2^-precision: the spacing of the dtype's floats just above 1. */
static TS_UNUSED double tv_eps(ts_dtype dt)
{
    switch (dt) {
    case TS_DTYPE_F16: return ldexp(1, -10);
    case TS_DTYPE_BF16: return ldexp(1, -7);
    case TS_DTYPE_F32: return ldexp(1, -23);
    default: return ldexp(1, -52);
    }
}

static TS_UNUSED bool tv_same_elem(ts_dtype dt, const void *got, const void *want, int64_t i, int ulps)
{
    size_t sz = ts_dtype_size(dt);
    if (ts_dtype_is_float(dt)) {
        double g = ts_elem_get_f64(dt, got, i), w = ts_elem_get_f64(dt, want, i);
        if (isnan(g) || isnan(w)) return isnan(g) && isnan(w);
        if (ulps > 0 && isfinite(w)) return fabs(g - w) <= ulps * tv_eps(dt) * fmax(fabs(w), 1e-300);
    }
    return memcmp((const char *)got + (size_t)i * sz, (const char *)want + (size_t)i * sz, sz) == 0;
}

static TS_UNUSED void tv_print(char *buf, size_t n, ts_dtype dt, const void *p, int64_t i)
{
    if (ts_dtype_is_float(dt)) snprintf(buf, n, "%.17g", ts_elem_get_f64(dt, p, i));
    else if (ts_dtype_is_signed(dt)) snprintf(buf, n, "%" PRId64, ts_elem_get_i64(dt, p, i));
    else snprintf(buf, n, "%" PRIu64, ts_elem_get_u64(dt, p, i));
}

/* One CHECK per element of got against the listed values (dtype dt); what
 * names the case in failure messages. */
static TS_UNUSED void tv_check(const ts_tensor *got, ts_dtype dt, const char *want, int ulps, const char *what)
{
    int n = tv_count(want);
    CHECK_MSG(got && got->dtype == dt && got->numel == n, "%s: got %s with %lld elements, expected %s with %d",
              what, got ? ts_dtype_name(got->dtype) : "nothing", got ? (long long)got->numel : 0LL,
              ts_dtype_name(dt), n);
    if (!got || got->dtype != dt || got->numel != n) return;
    ts_tensor *w = tv_tensor(dt, 1, SHAPE(n), want);
    for (int64_t i = 0; w && i < n; i++) {
        char g[64], e[64];
        tv_print(g, sizeof g, dt, got->data, i);
        tv_print(e, sizeof e, dt, w->data, i);
        CHECK_MSG(tv_same_elem(dt, got->data, w->data, i, ulps), "%s: element %lld is %s, expected %s", what,
                  (long long)i, g, e);
    }
    ts_tensor_release(w);
}

/* ---- dtype sets, as bit masks over ts_dtype ---- */

#define TV_M(dt) (1u << (dt))
#define TV_FLOATS (TV_M(TS_DTYPE_F16) | TV_M(TS_DTYPE_BF16) | TV_M(TS_DTYPE_F32) | TV_M(TS_DTYPE_F64))
#define TV_SINTS (TV_M(TS_DTYPE_I8) | TV_M(TS_DTYPE_I16) | TV_M(TS_DTYPE_I32) | TV_M(TS_DTYPE_I64))
#define TV_UINTS (TV_M(TS_DTYPE_U8) | TV_M(TS_DTYPE_U16) | TV_M(TS_DTYPE_U32) | TV_M(TS_DTYPE_U64))
#define TV_INTS (TV_SINTS | TV_UINTS)
#define TV_NUM (TV_INTS | TV_FLOATS)
#define TV_ALL (TV_NUM | TV_M(TS_DTYPE_BOOL))

/* The dtypes an op's type class admits. */
static TS_UNUSED unsigned tv_class_mask(ts_typeclass c)
{
    switch (c) {
    case TS_TY_NUM: return TV_NUM;
    case TS_TY_FLOAT: return TV_FLOATS;
    case TS_TY_INT: return TV_INTS;
    case TS_TY_INTBOOL: return TV_INTS | TV_M(TS_DTYPE_BOOL);
    default: return TV_ALL;
    }
}

/* Shorthands for the dtype masks of test rows. */
#define M_I8 TV_M(TS_DTYPE_I8)
#define M_U8 TV_M(TS_DTYPE_U8)
#define M_I16 TV_M(TS_DTYPE_I16)
#define M_U16 TV_M(TS_DTYPE_U16)
#define M_I32 TV_M(TS_DTYPE_I32)
#define M_U32 TV_M(TS_DTYPE_U32)
#define M_I64 TV_M(TS_DTYPE_I64)
#define M_U64 TV_M(TS_DTYPE_U64)
#define M_F16 TV_M(TS_DTYPE_F16)
#define M_BF16 TV_M(TS_DTYPE_BF16)
#define M_F32 TV_M(TS_DTYPE_F32)
#define M_F64 TV_M(TS_DTYPE_F64)
#define M_BOOL TV_M(TS_DTYPE_BOOL)
#define M_FLOATS TV_FLOATS
#define M_SINTS TV_SINTS
#define M_UINTS TV_UINTS
#define M_INTS TV_INTS
#define M_NUM TV_NUM
#define M_ALL TV_ALL

#endif
