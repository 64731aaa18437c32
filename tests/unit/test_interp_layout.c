/* test_interp_layout.c — the leaf and layout kernels against hand-computed
 * results: const, iota, rng_uniform (Philox known answers), reshape,
 * broadcast, transpose, slice, pad, concat, reverse, and symbolic shapes. */
#include "interp_case.h"
#include "interp/k_layout.h"

/* Run c on n_in inputs and compare its single result. */
static void expect1(tcase *c, int n_in, ts_tensor **ins, ts_dtype dt, int rank, const int64_t *shape,
                    const void *want, int line)
{
    ts_tensor *y = NULL;
    ts_status s = tc_run(c, ins, 1, &y);
    CHECK_MSG(s == TS_OK, "line %d: %s", line, c->err.msg);
    CHECK_MSG(s == TS_OK && tc_same(y, dt, rank, shape, want), "line %d", line);
    ts_tensor_release(y);
    tc_release(n_in, ins);
    tc_free(c);
}
#define EXPECT1(c, n_in, ins, dt, rank, shape, want) expect1(c, n_in, ins, dt, rank, shape, want, __LINE__)

/* ---- leaves ---------------------------------------------------------------- */

static void test_const(void)
{
    tcase c = tc_new(TS_OP_CONST);
    ts_tensor *v = tc_tensor(TS_DTYPE_F32, 2, SHAPE(2, 2), F32(1, 2, 3, 4));
    ts_attr_set_tensor(c.g, c.op, c.a, "value", v);
    ts_tensor_release(v);
    EXPECT1(&c, 0, NULL, TS_DTYPE_F32, 2, SHAPE(2, 2), F32(1, 2, 3, 4));

    c = tc_new(TS_OP_CONST);
    v = tc_tensor(TS_DTYPE_I64, 2, SHAPE(0, 3), NULL);
    ts_attr_set_tensor(c.g, c.op, c.a, "value", v);
    ts_tensor_release(v);
    EXPECT1(&c, 0, NULL, TS_DTYPE_I64, 2, SHAPE(0, 3), NULL);
}

static void iota_case(ts_dtype dt, int rank, const int64_t *shape, int64_t axis, const void *want, int line)
{
    tcase c = tc_new(TS_OP_IOTA);
    ts_attr_set_dtype(c.g, c.op, c.a, "dtype", dt);
    tc_dims(&c, "shape", rank, shape);
    ts_attr_set_int(c.g, c.op, c.a, "axis", axis);
    expect1(&c, 0, NULL, dt, rank, shape, want, line);
}

static void test_iota(void)
{
    iota_case(TS_DTYPE_I32, 2, SHAPE(2, 3), 1, I32(0, 1, 2, 0, 1, 2), __LINE__);
    iota_case(TS_DTYPE_I32, 2, SHAPE(2, 3), 0, I32(0, 0, 0, 1, 1, 1), __LINE__);
    iota_case(TS_DTYPE_U8, 2, SHAPE(2, 2), 0, U8(0, 0, 1, 1), __LINE__);
    iota_case(TS_DTYPE_F64, 1, SHAPE(3), 0, F64(0, 1, 2), __LINE__);
    iota_case(TS_DTYPE_F16, 1, SHAPE(3), 0, U16(0x0000, 0x3C00, 0x4000), __LINE__);
    iota_case(TS_DTYPE_I64, 2, SHAPE(0, 4), 1, NULL, __LINE__);
}

/* ---- Philox and rng_uniform ------------------------------------------------- */

static bool philox_is(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1,
                      const uint32_t want[4])
{
    uint32_t ctr[4] = {c0, c1, c2, c3}, key[2] = {k0, k1}, out[4];
    ts_interp_philox4x32_10(ctr, key, out);
    return memcmp(out, want, sizeof out) == 0;
}

/* The known-answer vectors of Random123 (kat_vectors, philox4x32_10). */
static void test_philox_kat(void)
{
    CHECK(philox_is(0, 0, 0, 0, 0, 0, (const uint32_t[]){0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
    CHECK(philox_is(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
                    (const uint32_t[]){0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
    CHECK(philox_is(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
                    (const uint32_t[]){0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

static ts_status rng_run(ts_dtype dt, int64_t count, int64_t seed, ts_tensor **y, ts_err *err)
{
    tcase c = tc_new(TS_OP_RNG_UNIFORM);
    ts_attr_set_dtype(c.g, c.op, c.a, "dtype", dt);
    tc_dims(&c, "shape", 1, &count);
    ts_attr_set_int(c.g, c.op, c.a, "seed", seed);
    ts_status s = tc_run(&c, NULL, 1, y);
    if (err) *err = c.err;
    tc_free(&c);
    return s;
}

/* Seed 0, f32: elements 0..3 are the top 24 bits of the first KAT block
 * (counter 0, key 0); element 4 starts the block of counter 1. */
static void test_rng_mapping(void)
{
    ts_tensor *y = NULL;
    CHECK(rng_run(TS_DTYPE_F32, 5, 0, &y, NULL) == TS_OK);
    float want[4] = {0x6627e8 * 0x1p-24f, 0xe169c5 * 0x1p-24f, 0xbc57ac * 0x1p-24f, 0x9b00db * 0x1p-24f};
    CHECK(y && memcmp(y->data, want, sizeof want) == 0);
    uint32_t ctr[4] = {1, 0, 0, 0}, key[2] = {0, 0}, w[4];
    ts_interp_philox4x32_10(ctr, key, w);
    CHECK(y && ((float *)y->data)[4] == (float)((w[0] >> 8) * 0x1p-24));
    ts_tensor_release(y);

    /* f64 element i: counter {i, 0, 1, 0}, 53 bits of words 0:1; the key is
     * the seed split low word first */
    int64_t seed = INT64_C(0x123456789abcdef0);
    CHECK(rng_run(TS_DTYPE_F64, 3, seed, &y, NULL) == TS_OK);
    for (uint32_t i = 0; y && i < 3; i++) {
        uint32_t c2[4] = {i, 0, 1, 0}, k2[2] = {0x9abcdef0u, 0x12345678u};
        ts_interp_philox4x32_10(c2, k2, w);
        double want64 = (double)(((uint64_t)w[0] << 32 | w[1]) >> 11) * 0x1p-53;
        CHECK(((double *)y->data)[i] == want64);
    }
    ts_tensor_release(y);
}

static void rng_stats(ts_dtype dt)
{
    const int64_t count = 100000;
    ts_tensor *a = NULL, *b = NULL, *d = NULL;
    CHECK(rng_run(dt, count, 42, &a, NULL) == TS_OK);
    CHECK(rng_run(dt, count, 42, &b, NULL) == TS_OK);
    CHECK(rng_run(dt, count, 43, &d, NULL) == TS_OK);
    if (!a || !b || !d) goto done;
    CHECK_MSG(ts_tensor_equal(a, b), "%s: same seed, same numbers", ts_dtype_name(dt));
    CHECK_MSG(!ts_tensor_equal(a, d), "%s: different seeds differ", ts_dtype_name(dt));
    double sum = 0, lo = 1, hi = 0;
    for (int64_t i = 0; i < count; i++) {
        double v = ts_elem_get_f64(dt, a->data, i);
        sum += v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    CHECK_MSG(lo >= 0 && hi < 1, "%s: values in [%g, %g]", ts_dtype_name(dt), lo, hi);
    CHECK_MSG(fabs(sum / count - 0.5) < 0.01, "%s: mean %g", ts_dtype_name(dt), sum / count);
done:
    ts_tensor_release(a);
    ts_tensor_release(b);
    ts_tensor_release(d);
}

/* The i64 operand adds to the seed (wrapping): attribute 40 plus operand 2
 * is seed 42's stream, and -3 wraps below zero. */
static void test_rng_seed_operand(void)
{
    const int64_t count = 9;
    const int64_t attr[] = {40, 5, INT64_MAX}, plus[] = {2, -8, 1};
    for (int k = 0; k < 3; k++) {
        ts_tensor *want = NULL, *got = NULL;
        CHECK(rng_run(TS_DTYPE_F32, count, (int64_t)((uint64_t)attr[k] + (uint64_t)plus[k]), &want, NULL) == TS_OK);
        tcase c = tc_new(TS_OP_RNG_UNIFORM);
        tc_param(&c, TS_DTYPE_I64, 0, NULL);
        ts_attr_set_dtype(c.g, c.op, c.a, "dtype", TS_DTYPE_F32);
        tc_dims(&c, "shape", 1, &count);
        ts_attr_set_int(c.g, c.op, c.a, "seed", attr[k]);
        ts_tensor *s = tc_tensor(TS_DTYPE_I64, 0, NULL, I64(plus[k]));
        CHECK(tc_run(&c, &s, 1, &got) == TS_OK);
        CHECK_MSG(want && got && ts_tensor_equal(want, got), "seed %lld + operand %lld", (long long)attr[k],
                  (long long)plus[k]);
        ts_tensor_release(s);
        ts_tensor_release(want);
        ts_tensor_release(got);
        tc_free(&c);
    }
    /* a seed tensor (not one integer) is refused by the shape rule */
    tcase c = tc_new(TS_OP_RNG_UNIFORM);
    tc_param(&c, TS_DTYPE_I64, 1, &count);
    ts_attr_set_dtype(c.g, c.op, c.a, "dtype", TS_DTYPE_F32);
    tc_dims(&c, "shape", 1, &count);
    ts_attr_set_int(c.g, c.op, c.a, "seed", 1);
    CHECK(tc_build(&c, NULL) == TS_ERR_SHAPE && strstr(c.err.msg, "i64 scalar"));
    tc_free(&c);
}

static void test_rng(void)
{
    test_rng_mapping();
    test_rng_seed_operand();
    rng_stats(TS_DTYPE_F32);
    rng_stats(TS_DTYPE_F64);
    rng_stats(TS_DTYPE_F16);   /* ~24 of these round up to 1 and are clamped */
    rng_stats(TS_DTYPE_BF16);
    ts_tensor *y = NULL;
    CHECK(rng_run(TS_DTYPE_F32, 0, 1, &y, NULL) == TS_OK);
    CHECK(y && y->numel == 0);
    ts_tensor_release(y);
}

/* ---- movers ------------------------------------------------------------------ */

static void reshape_case(ts_dtype dt, int ri, const int64_t *si, int ro, const int64_t *so, const void *data,
                         int line)
{
    tcase c = tc_new(TS_OP_RESHAPE);
    tc_param(&c, dt, ri, si);
    tc_dims(&c, "shape", ro, so);
    ts_tensor *x = tc_tensor(dt, ri, si, data);
    expect1(&c, 1, &x, dt, ro, so, data, line);
}

static void test_reshape(void)
{
    reshape_case(TS_DTYPE_F32, 2, SHAPE(2, 3), 2, SHAPE(3, 2), F32(1, 2, 3, 4, 5, 6), __LINE__);
    reshape_case(TS_DTYPE_I64, 1, SHAPE(6), 3, SHAPE(1, 2, 3), I64(1, 2, 3, 4, 5, 6), __LINE__);
    reshape_case(TS_DTYPE_U8, 2, SHAPE(0, 3), 2, SHAPE(3, 0), NULL, __LINE__);
    reshape_case(TS_DTYPE_F64, 1, SHAPE(1), 0, NULL, F64(2.5), __LINE__);
}

static void broadcast_case(ts_dtype dt, int ri, const int64_t *si, const void *data, int na, const int64_t *axes,
                           int ro, const int64_t *so, const void *want, int line)
{
    tcase c = tc_new(TS_OP_BROADCAST);
    tc_param(&c, dt, ri, si);
    tc_dims(&c, "shape", ro, so);
    ts_attr_set_ints(c.g, c.op, c.a, "axes", na, axes);
    ts_tensor *x = tc_tensor(dt, ri, si, data);
    expect1(&c, 1, &x, dt, ro, so, want, line);
}

static void test_broadcast(void)
{
    broadcast_case(TS_DTYPE_F32, 1, SHAPE(3), F32(1, 2, 3), 1, SHAPE(1), 2, SHAPE(2, 3), F32(1, 2, 3, 1, 2, 3),
                   __LINE__);
    broadcast_case(TS_DTYPE_F32, 1, SHAPE(2), F32(1, 2), 1, SHAPE(0), 2, SHAPE(2, 3), F32(1, 1, 1, 2, 2, 2),
                   __LINE__);
    /* size-1 dims stretch; the others map through */
    broadcast_case(TS_DTYPE_I32, 2, SHAPE(2, 1), I32(1, 2), 2, SHAPE(0, 1), 2, SHAPE(2, 3), I32(1, 1, 1, 2, 2, 2),
                   __LINE__);
    broadcast_case(TS_DTYPE_BOOL, 2, SHAPE(1, 2), U8(1, 0), 2, SHAPE(0, 1), 2, SHAPE(3, 2),
                   U8(1, 0, 1, 0, 1, 0), __LINE__);
    broadcast_case(TS_DTYPE_F64, 0, NULL, F64(7), 0, NULL, 2, SHAPE(2, 2), F64(7, 7, 7, 7), __LINE__);
    broadcast_case(TS_DTYPE_I64, 3, SHAPE(1, 2, 1), I64(5, 6), 3, SHAPE(0, 1, 2), 3, SHAPE(2, 2, 2),
                   I64(5, 5, 6, 6, 5, 5, 6, 6), __LINE__);
    broadcast_case(TS_DTYPE_F32, 1, SHAPE(1), F32(1), 1, SHAPE(1), 2, SHAPE(2, 0), NULL, __LINE__);
}

static void transpose_case(ts_dtype dt, int rank, const int64_t *si, const void *data, const int64_t *perm,
                           const int64_t *so, const void *want, int line)
{
    tcase c = tc_new(TS_OP_TRANSPOSE);
    tc_param(&c, dt, rank, si);
    ts_attr_set_ints(c.g, c.op, c.a, "perm", rank, perm);
    ts_tensor *x = tc_tensor(dt, rank, si, data);
    expect1(&c, 1, &x, dt, rank, so, want, line);
}

static void test_transpose(void)
{
    transpose_case(TS_DTYPE_F64, 2, SHAPE(2, 3), F64(1, 2, 3, 4, 5, 6), SHAPE(1, 0), SHAPE(3, 2),
                   F64(1, 4, 2, 5, 3, 6), __LINE__);
    /* x[a,0,c,d] = 6a + 2c + d; out[i,j,k,0] = x[j,0,i,k] = 6j + 2i + k */
    transpose_case(TS_DTYPE_I32, 4, SHAPE(2, 1, 3, 2), I32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11),
                   SHAPE(2, 0, 3, 1), SHAPE(3, 2, 2, 1), I32(0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11), __LINE__);
    transpose_case(TS_DTYPE_U8, 3, SHAPE(2, 0, 3), NULL, SHAPE(2, 0, 1), SHAPE(3, 2, 0), NULL, __LINE__);
}

static void slice_case(ts_dtype dt, int rank, const int64_t *si, const void *data, const int64_t *start,
                       const int64_t *limit, const int64_t *stride, const int64_t *so, const void *want, int line)
{
    tcase c = tc_new(TS_OP_SLICE);
    tc_param(&c, dt, rank, si);
    tc_dims(&c, "start", rank, start);
    tc_dims(&c, "limit", rank, limit);
    ts_attr_set_ints(c.g, c.op, c.a, "stride", rank, stride);
    ts_tensor *x = tc_tensor(dt, rank, si, data);
    expect1(&c, 1, &x, dt, rank, so, want, line);
}

static void test_slice(void)
{
    slice_case(TS_DTYPE_F32, 2, SHAPE(3, 4), F32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), SHAPE(0, 1), SHAPE(3, 4),
               SHAPE(2, 2), SHAPE(2, 2), F32(1, 3, 9, 11), __LINE__);
    slice_case(TS_DTYPE_U8, 1, SHAPE(5), U8(10, 11, 12, 13, 14), SHAPE(1), SHAPE(5), SHAPE(3), SHAPE(2), U8(11, 14),
               __LINE__);
    slice_case(TS_DTYPE_I64, 2, SHAPE(2, 3), I64(1, 2, 3, 4, 5, 6), SHAPE(1, 0), SHAPE(2, 2), SHAPE(1, 1),
               SHAPE(1, 2), I64(4, 5), __LINE__);
    slice_case(TS_DTYPE_F32, 1, SHAPE(4), F32(1, 2, 3, 4), SHAPE(2), SHAPE(2), SHAPE(1), SHAPE(0), NULL, __LINE__);
}

static void pad_case(ts_dtype dt, int rank, const int64_t *si, const void *data, const void *value,
                     const int64_t *lo, const int64_t *hi, const int64_t *interior, const int64_t *so,
                     const void *want, int line)
{
    tcase c = tc_new(TS_OP_PAD);
    tc_param(&c, dt, rank, si);
    tc_param(&c, dt, 0, NULL);
    ts_attr_set_ints(c.g, c.op, c.a, "lo", rank, lo);
    ts_attr_set_ints(c.g, c.op, c.a, "hi", rank, hi);
    ts_attr_set_ints(c.g, c.op, c.a, "interior", rank, interior);
    ts_tensor *x[2] = {tc_tensor(dt, rank, si, data), tc_tensor(dt, 0, NULL, value)};
    expect1(&c, 2, x, dt, rank, so, want, line);
}

static void pad_refused(const int64_t *lo, const int64_t *hi, const int64_t *interior, int line)
{
    tcase c = tc_new(TS_OP_PAD);
    tc_param(&c, TS_DTYPE_F32, 1, SHAPE(2));
    tc_param(&c, TS_DTYPE_F32, 0, NULL);
    ts_attr_set_ints(c.g, c.op, c.a, "lo", 1, lo);
    ts_attr_set_ints(c.g, c.op, c.a, "hi", 1, hi);
    ts_attr_set_ints(c.g, c.op, c.a, "interior", 1, interior);
    ts_node *n = NULL;
    CHECK_MSG(tc_build(&c, &n) == TS_ERR_SHAPE, "line %d", line);
    tc_free(&c);
}

static void test_pad(void)
{
    /* interior first: 1 0 2 0 3, then one in front and two behind */
    pad_case(TS_DTYPE_F32, 1, SHAPE(3), F32(1, 2, 3), F32(0), SHAPE(1), SHAPE(2), SHAPE(1), SHAPE(8),
             F32(0, 1, 0, 2, 0, 3, 0, 0), __LINE__);
    /* negative lo/hi crop */
    pad_case(TS_DTYPE_I32, 1, SHAPE(4), I32(1, 2, 3, 4), I32(9), SHAPE(-1), SHAPE(-1), SHAPE(0), SHAPE(2),
             I32(2, 3), __LINE__);
    /* crop after interior: 1 7 2 7 3 loses its first 3 */
    pad_case(TS_DTYPE_I32, 1, SHAPE(3), I32(1, 2, 3), I32(7), SHAPE(-3), SHAPE(0), SHAPE(1), SHAPE(2), I32(7, 3),
             __LINE__);
    pad_case(TS_DTYPE_I32, 1, SHAPE(3), I32(1, 2, 3), I32(7), SHAPE(-2), SHAPE(-1), SHAPE(1), SHAPE(2), I32(2, 7),
             __LINE__);
    /* crop on one axis, grow on the other */
    pad_case(TS_DTYPE_I64, 2, SHAPE(2, 2), I64(1, 2, 3, 4), I64(9), SHAPE(-1, 1), SHAPE(1, 0), SHAPE(0, 0),
             SHAPE(2, 3), I64(9, 3, 4, 9, 9, 9), __LINE__);
    pad_case(TS_DTYPE_U8, 2, SHAPE(2, 2), U8(1, 2, 3, 4), U8(0), SHAPE(0, 0), SHAPE(0, 0), SHAPE(1, 2),
             SHAPE(3, 4), U8(1, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 4), __LINE__);
    /* everything cropped; an empty operand padded */
    pad_case(TS_DTYPE_F64, 1, SHAPE(2), F64(1, 2), F64(5), SHAPE(-2), SHAPE(0), SHAPE(0), SHAPE(0), NULL,
             __LINE__);
    pad_case(TS_DTYPE_F64, 1, SHAPE(0), NULL, F64(5), SHAPE(1), SHAPE(1), SHAPE(2), SHAPE(2), F64(5, 5), __LINE__);
    pad_case(TS_DTYPE_BOOL, 0, NULL, U8(1), U8(0), NULL, NULL, NULL, NULL, U8(1), __LINE__);
    /* extreme attributes are refused by the shape rule (|v| > 2^31), even
     * when they would cancel out, so no size arithmetic can overflow */
    pad_refused(SHAPE(0), SHAPE(1), SHAPE(INT64_MAX), __LINE__);
    pad_refused(SHAPE(-(INT64_C(1) << 62)), SHAPE(INT64_C(1) << 62), SHAPE(0), __LINE__);
    pad_case(TS_DTYPE_F16, 1, SHAPE(2), U16(0x3C00, 0x4000), U16(0xBC00), SHAPE(1), SHAPE(0), SHAPE(0), SHAPE(3),
             U16(0xBC00, 0x3C00, 0x4000), __LINE__);
}

static void test_concat(void)
{
    tcase c = tc_new(TS_OP_CONCAT);
    tc_param(&c, TS_DTYPE_F32, 2, SHAPE(1, 2));
    tc_param(&c, TS_DTYPE_F32, 2, SHAPE(2, 2));
    ts_attr_set_int(c.g, c.op, c.a, "axis", 0);
    ts_tensor *x[3] = {tc_tensor(TS_DTYPE_F32, 2, SHAPE(1, 2), F32(1, 2)),
                       tc_tensor(TS_DTYPE_F32, 2, SHAPE(2, 2), F32(3, 4, 5, 6))};
    EXPECT1(&c, 2, x, TS_DTYPE_F32, 2, SHAPE(3, 2), F32(1, 2, 3, 4, 5, 6));

    c = tc_new(TS_OP_CONCAT);
    tc_param(&c, TS_DTYPE_I32, 2, SHAPE(2, 1));
    tc_param(&c, TS_DTYPE_I32, 2, SHAPE(2, 0));
    tc_param(&c, TS_DTYPE_I32, 2, SHAPE(2, 2));
    ts_attr_set_int(c.g, c.op, c.a, "axis", 1);
    x[0] = tc_tensor(TS_DTYPE_I32, 2, SHAPE(2, 1), I32(1, 2));
    x[1] = tc_tensor(TS_DTYPE_I32, 2, SHAPE(2, 0), NULL);
    x[2] = tc_tensor(TS_DTYPE_I32, 2, SHAPE(2, 2), I32(3, 4, 5, 6));
    EXPECT1(&c, 3, x, TS_DTYPE_I32, 2, SHAPE(2, 3), I32(1, 3, 4, 2, 5, 6));

    c = tc_new(TS_OP_CONCAT);
    tc_param(&c, TS_DTYPE_BOOL, 1, SHAPE(1));
    ts_attr_set_int(c.g, c.op, c.a, "axis", 0);
    x[0] = tc_tensor(TS_DTYPE_BOOL, 1, SHAPE(1), U8(1));
    EXPECT1(&c, 1, x, TS_DTYPE_BOOL, 1, SHAPE(1), U8(1));
}

static void reverse_case(ts_dtype dt, int rank, const int64_t *si, const void *data, int na, const int64_t *axes,
                         const void *want, int line)
{
    tcase c = tc_new(TS_OP_REVERSE);
    tc_param(&c, dt, rank, si);
    ts_attr_set_ints(c.g, c.op, c.a, "axes", na, axes);
    ts_tensor *x = tc_tensor(dt, rank, si, data);
    expect1(&c, 1, &x, dt, rank, si, want, line);
}

static void test_reverse(void)
{
    reverse_case(TS_DTYPE_I32, 2, SHAPE(2, 3), I32(1, 2, 3, 4, 5, 6), 1, SHAPE(1), I32(3, 2, 1, 6, 5, 4), __LINE__);
    reverse_case(TS_DTYPE_I32, 2, SHAPE(2, 3), I32(1, 2, 3, 4, 5, 6), 1, SHAPE(0), I32(4, 5, 6, 1, 2, 3), __LINE__);
    reverse_case(TS_DTYPE_F64, 2, SHAPE(2, 3), F64(1, 2, 3, 4, 5, 6), 2, SHAPE(0, 1), F64(6, 5, 4, 3, 2, 1),
                 __LINE__);
    reverse_case(TS_DTYPE_U8, 2, SHAPE(0, 2), NULL, 1, SHAPE(0), NULL, __LINE__);
    reverse_case(TS_DTYPE_F32, 1, SHAPE(3), F32(1, 2, 3), 0, NULL, F32(1, 2, 3), __LINE__);
}

/* ---- symbolic shapes ------------------------------------------------------------ */

typedef struct symg {
    ts_graph *g;
    ts_dim n;
    ts_err err;
} symg;

static ts_value *add_node(symg *s, ts_op op, ts_value *x, ts_attr *a)
{
    ts_node *node = NULL;
    if (ts_ir_node_new(s->g, s->g->body, NULL, op, 1, &x, a, 0, NULL, &node, &s->err) != TS_OK) return NULL;
    return node->out[0];
}

/* x: f32[n, 3] -> reshape [3n], broadcast [2, n, 3], slice [1:n, 0:3:2]. */
static bool build_sym(symg *s)
{
    if (ts_ir_graph_new("sym", &s->g, &s->err) != TS_OK) return false;
    ts_symtab *t = s->g->syms;
    ts_dim n3, dx[2];
    if (ts_dim_sym(t, "n", &s->n, &s->err) != TS_OK || ts_dim_mul(t, s->n, ts_dim_const(3), &n3, &s->err) != TS_OK)
        return false;
    dx[0] = s->n;
    dx[1] = ts_dim_const(3);
    ts_type tx = {TS_DTYPE_F32, 2, dx};
    ts_value *x = NULL, *res[3];
    if (ts_ir_block_add_param(s->g, s->g->body, &tx, &x, &s->err) != TS_OK) return false;

    ts_attr *a = ts_ir_attrs_new(s->g, TS_OP_RESHAPE);
    ts_attr_set_dims(s->g, TS_OP_RESHAPE, a, "shape", 1, &n3);
    res[0] = add_node(s, TS_OP_RESHAPE, x, a);

    ts_dim bshape[3] = {ts_dim_const(2), s->n, ts_dim_const(3)};
    a = ts_ir_attrs_new(s->g, TS_OP_BROADCAST);
    ts_attr_set_dims(s->g, TS_OP_BROADCAST, a, "shape", 3, bshape);
    ts_attr_set_ints(s->g, TS_OP_BROADCAST, a, "axes", 2, SHAPE(1, 2));
    res[1] = res[0] ? add_node(s, TS_OP_BROADCAST, x, a) : NULL;

    ts_dim st[2] = {ts_dim_const(1), ts_dim_const(0)}, li[2] = {s->n, ts_dim_const(3)};
    a = ts_ir_attrs_new(s->g, TS_OP_SLICE);
    ts_attr_set_dims(s->g, TS_OP_SLICE, a, "start", 2, st);
    ts_attr_set_dims(s->g, TS_OP_SLICE, a, "limit", 2, li);
    ts_attr_set_ints(s->g, TS_OP_SLICE, a, "stride", 2, SHAPE(1, 2));
    res[2] = res[1] ? add_node(s, TS_OP_SLICE, x, a) : NULL;
    return res[2] && ts_ir_block_set_results(s->g, s->g->body, 3, res, &s->err) == TS_OK;
}

static void sym_run(symg *s, int64_t n, const float *want_slice)
{
    float data[15];
    for (int i = 0; i < 15; i++) data[i] = (float)i;
    ts_tensor *x = tc_tensor(TS_DTYPE_F32, 2, SHAPE(n, 3), data), *y[3] = {0};
    CHECK_MSG(ts_interp_run_graph(s->g, 1, &x, 3, y, &s->err) == TS_OK, "n=%lld: %s", (long long)n, s->err.msg);
    float twice[30];
    memcpy(twice, data, sizeof(float) * 3 * (size_t)n);
    memcpy(twice + 3 * n, data, sizeof(float) * 3 * (size_t)n);
    CHECK(tc_same(y[0], TS_DTYPE_F32, 1, SHAPE(3 * n), data));
    CHECK(tc_same(y[1], TS_DTYPE_F32, 3, SHAPE(2, n, 3), twice));
    CHECK(tc_same(y[2], TS_DTYPE_F32, 2, SHAPE(n - 1, 2), want_slice));
    tc_release(3, y);
    ts_tensor_release(x);
}

static void test_symbolic(void)
{
    symg s = {0};
    CHECK_MSG(build_sym(&s), "%s", s.err.msg);
    if (s.g && s.g->body->n_results == 3) {
        sym_run(&s, 2, F32(3, 5));
        sym_run(&s, 5, F32(3, 5, 6, 8, 9, 11, 12, 14));
        /* n = 0: the slice start 1 exceeds its limit n, known only now */
        ts_tensor *x = tc_tensor(TS_DTYPE_F32, 2, SHAPE(0, 3), NULL), *y[3] = {0};
        ts_err_clear(&s.err);
        CHECK(ts_interp_run_graph(s.g, 1, &x, 3, y, &s.err) == TS_ERR_RUNTIME);
        CHECK_MSG(strstr(s.err.msg, "start 1, limit 0") != NULL, "%s", s.err.msg);
        tc_release(3, y);
        ts_tensor_release(x);
    }
    ts_graph_free(s.g);
}

int main(void)
{
    test_const();
    test_iota();
    test_philox_kat();
    test_rng();
    test_reshape();
    test_broadcast();
    test_transpose();
    test_slice();
    test_pad();
    test_concat();
    test_reverse();
    test_symbolic();
    return check_report();
}
