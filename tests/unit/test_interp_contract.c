/* test_interp_contract.c — dot (dot_general) and conv against hand-computed
 * results: batch dims, several contracted dims, accumulation precision,
 * integer wrap, and conv with groups, stride, padding (negative too),
 * kernel and input dilation. */
#include "interp_case.h"

static void expect2(tcase *c, ts_dtype dt, int ra, const int64_t *sa, const void *a, int rb, const int64_t *sb,
                    const void *b, int ry, const int64_t *sy, const void *want, int line)
{
    tc_param(c, dt, ra, sa);
    tc_param(c, dt, rb, sb);
    ts_tensor *x[2] = {tc_tensor(dt, ra, sa, a), tc_tensor(dt, rb, sb, b)}, *y = NULL;
    ts_status s = tc_run(c, x, 1, &y);
    CHECK_MSG(s == TS_OK, "line %d: %s", line, c->err.msg);
    CHECK_MSG(s == TS_OK && tc_same(y, dt, ry, sy, want), "line %d", line);
    ts_tensor_release(y);
    tc_release(2, x);
    tc_free(c);
}

/* ---- dot ------------------------------------------------------------------ */

typedef struct dims4 {
    int nb, nc;
    const int64_t *lb, *rb, *lc, *rc;
} dims4;

static tcase dot_case(dims4 d)
{
    tcase c = tc_new(TS_OP_DOT);
    ts_attr_set_ints(c.g, c.op, c.a, "lhs_batch", d.nb, d.lb);
    ts_attr_set_ints(c.g, c.op, c.a, "rhs_batch", d.nb, d.rb);
    ts_attr_set_ints(c.g, c.op, c.a, "lhs_contract", d.nc, d.lc);
    ts_attr_set_ints(c.g, c.op, c.a, "rhs_contract", d.nc, d.rc);
    return c;
}

static const dims4 matmul = {0, 1, NULL, NULL, SHAPE(1), SHAPE(0)};
static const dims4 vecdot = {0, 1, NULL, NULL, SHAPE(0), SHAPE(0)};
static const dims4 outer = {0, 0, NULL, NULL, NULL, NULL};

static void test_dot(void)
{
    tcase c = dot_case(matmul);
    expect2(&c, TS_DTYPE_F32, 2, SHAPE(2, 3), F32(1, 2, 3, 4, 5, 6), 2, SHAPE(3, 2), F32(7, 8, 9, 10, 11, 12), 2,
            SHAPE(2, 2), F32(58, 64, 139, 154), __LINE__);

    /* batched matrix-vector: [17] and [53] */
    c = dot_case((dims4){1, 1, SHAPE(0), SHAPE(0), SHAPE(2), SHAPE(1)});
    expect2(&c, TS_DTYPE_F64, 3, SHAPE(2, 1, 2), F64(1, 2, 3, 4), 3, SHAPE(2, 2, 1), F64(5, 6, 7, 8), 3,
            SHAPE(2, 1, 1), F64(17, 53), __LINE__);

    /* batch dim last in lhs, nothing contracted: out[b, i, j] = a[i, b] * r[b, j] */
    c = dot_case((dims4){1, 0, SHAPE(1), SHAPE(0), NULL, NULL});
    expect2(&c, TS_DTYPE_I32, 2, SHAPE(3, 2), I32(1, 2, 3, 4, 5, 6), 2, SHAPE(2, 2), I32(1, 10, 100, 1000), 3,
            SHAPE(2, 3, 2), I32(1, 10, 3, 30, 5, 50, 200, 2000, 400, 4000, 600, 6000), __LINE__);

    c = dot_case(outer);
    expect2(&c, TS_DTYPE_I64, 1, SHAPE(2), I64(1, 2), 1, SHAPE(3), I64(3, 4, 5), 2, SHAPE(2, 3),
            I64(3, 4, 5, 6, 8, 10), __LINE__);

    c = dot_case(vecdot);
    expect2(&c, TS_DTYPE_F64, 1, SHAPE(3), F64(1, 2, 3), 1, SHAPE(3), F64(4, 5, 6), 0, NULL, F64(32), __LINE__);

    /* two contracted dims paired crosswise: sum a[i,j] * r[j,i] = trace(a r) */
    c = dot_case((dims4){0, 2, NULL, NULL, SHAPE(1, 0), SHAPE(0, 1)});
    expect2(&c, TS_DTYPE_F32, 2, SHAPE(2, 3), F32(1, 2, 3, 4, 5, 6), 2, SHAPE(3, 2), F32(7, 8, 9, 10, 11, 12), 0,
            NULL, F32(212), __LINE__);

    /* empty contraction gives zeros */
    c = dot_case(matmul);
    expect2(&c, TS_DTYPE_F32, 2, SHAPE(2, 0), NULL, 2, SHAPE(0, 3), NULL, 2, SHAPE(2, 3), F32(0, 0, 0, 0, 0, 0),
            __LINE__);
}

static void test_dot_precision(void)
{
    /* f16: 2048 + 1 + 1 rounds once to 2050; step by step it would stay 2048 */
    tcase c = dot_case(vecdot);
    expect2(&c, TS_DTYPE_F16, 1, SHAPE(3), U16(0x6800, 0x3C00, 0x3C00), 1, SHAPE(3), U16(0x3C00, 0x3C00, 0x3C00), 0,
            NULL, U16(0x6801), __LINE__);
    c = dot_case(vecdot);
    expect2(&c, TS_DTYPE_BF16, 1, SHAPE(2), U16(0x3F80, 0x4000), 1, SHAPE(2), U16(0x4040, 0x4080), 0, NULL,
            U16(0x4130), __LINE__);
    /* f32: 2^24 + 1 - 2^24 is 1 in double, 0 in f32 */
    c = dot_case(vecdot);
    expect2(&c, TS_DTYPE_F32, 1, SHAPE(3), F32(16777216, 1, -16777216), 1, SHAPE(3), F32(1, 1, 1), 0, NULL, F32(1),
            __LINE__);
    /* integers wrap */
    c = dot_case(vecdot);
    expect2(&c, TS_DTYPE_U8, 1, SHAPE(2), U8(200, 100), 1, SHAPE(2), U8(2, 1), 0, NULL, U8(244), __LINE__);
    c = dot_case(vecdot);
    expect2(&c, TS_DTYPE_I32, 1, SHAPE(2), I32(INT32_MAX, -3), 1, SHAPE(2), I32(2, 1), 0, NULL, I32(-5), __LINE__);
}

/* ---- conv ------------------------------------------------------------------------ */

typedef struct convp {
    const int64_t *stride, *lo, *hi, *ld, *rd;
    int64_t groups;
} convp;

static tcase conv_case(int sp, convp p)
{
    tcase c = tc_new(TS_OP_CONV);
    const int64_t ones[TS_MAX_RANK] = {1, 1, 1, 1}, zeros[TS_MAX_RANK] = {0};
    ts_attr_set_ints(c.g, c.op, c.a, "strides", sp, p.stride ? p.stride : ones);
    ts_attr_set_ints(c.g, c.op, c.a, "pad_lo", sp, p.lo ? p.lo : zeros);
    ts_attr_set_ints(c.g, c.op, c.a, "pad_hi", sp, p.hi ? p.hi : zeros);
    ts_attr_set_ints(c.g, c.op, c.a, "lhs_dilation", sp, p.ld ? p.ld : ones);
    ts_attr_set_ints(c.g, c.op, c.a, "rhs_dilation", sp, p.rd ? p.rd : ones);
    ts_attr_set_int(c.g, c.op, c.a, "groups", p.groups ? p.groups : 1);
    return c;
}

/* x = [1 2 3 4 5], w = [1 2 3], one batch, one channel. */
static void conv1(convp p, ts_dtype dt, const void *x, const void *w, int64_t out, const void *want, int line)
{
    tcase c = conv_case(1, p);
    expect2(&c, dt, 3, SHAPE(1, 1, 5), x, 3, SHAPE(1, 1, 3), w, 3, SHAPE(1, 1, out), want, line);
}

static void test_conv_1d(void)
{
    const float *x = F32(1, 2, 3, 4, 5), *w = F32(1, 2, 3);
    /* no kernel flip: 1*1 + 2*2 + 3*3 = 14 */
    conv1((convp){0}, TS_DTYPE_F32, x, w, 3, F32(14, 20, 26), __LINE__);
    /* padded 0 1 2 3 4 5 0, stride 2 */
    conv1((convp){.stride = SHAPE(2), .lo = SHAPE(1), .hi = SHAPE(1)}, TS_DTYPE_F32, x, w, 3, F32(8, 20, 14),
          __LINE__);
    /* negative padding crops: 2 3 4 5 */
    conv1((convp){.lo = SHAPE(-1)}, TS_DTYPE_F32, x, w, 2, F32(20, 26), __LINE__);
    /* kernel dilation 2: taps 1, 3, 5 */
    conv1((convp){.rd = SHAPE(2)}, TS_DTYPE_F32, x, w, 1, F32(22), __LINE__);
    /* input dilation 2: 1 0 2 0 3 0 4 0 5 */
    conv1((convp){.ld = SHAPE(2)}, TS_DTYPE_F32, x, w, 7, F32(7, 4, 11, 6, 15, 8, 19), __LINE__);
    conv1((convp){0}, TS_DTYPE_I32, I32(1, 2, 3, 4, 5), I32(1, 2, 3), 3, I32(14, 20, 26), __LINE__);

    /* transposed conv: dilated 1 0 2, padded by 2 each side: 0 0 1 0 2 0 0 */
    tcase c = conv_case(1, (convp){.ld = SHAPE(2), .lo = SHAPE(2), .hi = SHAPE(2)});
    expect2(&c, TS_DTYPE_I64, 3, SHAPE(1, 1, 2), I64(1, 2), 3, SHAPE(1, 1, 3), I64(1, 2, 3), 3, SHAPE(1, 1, 5),
            I64(3, 2, 7, 4, 2), __LINE__);
    /* stride and input dilation together: positions 0 2 4 of the above */
    c = conv_case(1, (convp){.ld = SHAPE(2), .lo = SHAPE(2), .hi = SHAPE(2), .stride = SHAPE(2)});
    expect2(&c, TS_DTYPE_I64, 3, SHAPE(1, 1, 2), I64(1, 2), 3, SHAPE(1, 1, 3), I64(1, 2, 3), 3, SHAPE(1, 1, 3),
            I64(3, 7, 2), __LINE__);
    c = conv_case(1, (convp){0});
    expect2(&c, TS_DTYPE_U8, 3, SHAPE(1, 1, 2), U8(200, 200), 3, SHAPE(1, 1, 2), U8(1, 1), 3, SHAPE(1, 1, 1), U8(144),
            __LINE__);
    c = conv_case(1, (convp){0});
    expect2(&c, TS_DTYPE_F32, 3, SHAPE(0, 1, 3), NULL, 3, SHAPE(1, 1, 2), F32(1, 1), 3, SHAPE(0, 1, 2), NULL,
            __LINE__);
}

static void test_conv_groups(void)
{
    /* channels 1 2 | 3 4 | 5 6 | 7 8; group 0 = channels 0-1 -> out 0,
     * group 1 = channels 2-3 -> out 1 */
    tcase c = conv_case(1, (convp){.groups = 2});
    expect2(&c, TS_DTYPE_I32, 3, SHAPE(1, 4, 2), I32(1, 2, 3, 4, 5, 6, 7, 8), 3, SHAPE(2, 2, 1),
            I32(1, 10, 100, 1000), 3, SHAPE(1, 2, 2), I32(31, 42, 7500, 8600), __LINE__);
    /* depthwise: groups = channels, two outputs per channel */
    c = conv_case(1, (convp){.groups = 2});
    expect2(&c, TS_DTYPE_F64, 3, SHAPE(1, 2, 2), F64(1, 2, 3, 4), 3, SHAPE(4, 1, 1), F64(1, -1, 2, 10), 3,
            SHAPE(1, 4, 2), F64(1, 2, -1, -2, 6, 8, 30, 40), __LINE__);
}

static void test_conv_2d(void)
{
    /* batch 0 = 1..9, batch 1 = ones; w0 = diagonal pair, w1 = 2x2 box */
    tcase c = conv_case(2, (convp){0});
    expect2(&c, TS_DTYPE_F32, 4, SHAPE(2, 1, 3, 3), F32(1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1), 4,
            SHAPE(2, 1, 2, 2), F32(1, 0, 0, 1, 1, 1, 1, 1), 4, SHAPE(2, 2, 2, 2),
            F32(6, 8, 12, 14, 12, 16, 24, 28, 2, 2, 2, 2, 4, 4, 4, 4), __LINE__);
    /* rows 0 and 2 (stride 2); columns padded in front, taps 2 apart */
    c = conv_case(2, (convp){.stride = SHAPE(2, 1), .lo = SHAPE(0, 1), .rd = SHAPE(1, 2)});
    expect2(&c, TS_DTYPE_F32, 4, SHAPE(1, 1, 3, 3), F32(1, 2, 3, 4, 5, 6, 7, 8, 9), 4, SHAPE(1, 1, 1, 2),
            F32(1, 10), 4, SHAPE(1, 1, 2, 2), F32(20, 31, 80, 97), __LINE__);
}

int main(void)
{
    test_dot();
    test_dot_precision();
    test_conv_1d();
    test_conv_groups();
    test_conv_2d();
    return check_report();
}
