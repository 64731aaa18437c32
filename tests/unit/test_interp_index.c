/* test_interp_index.c — gather, scatter, dynamic_slice and
 * dynamic_update_slice against hand-computed results, with index dtypes,
 * duplicates under every combine, clamping, and out-of-range errors. */
#include "interp_case.h"

typedef struct arg {
    ts_dtype dt;
    int rank;
    const int64_t *shape;
    const void *data;
} arg;

#define ARG(dt, rank, shape, data) ((arg){dt, rank, shape, data})

/* Run op over the given operands (attributes already in c); the status,
 * and the result when it succeeded. */
static ts_status run_args(tcase *c, int n, const arg *args, ts_tensor **y)
{
    ts_tensor *x[4] = {0};
    for (int i = 0; i < n; i++) {
        tc_param(c, args[i].dt, args[i].rank, args[i].shape);
        x[i] = tc_tensor(args[i].dt, args[i].rank, args[i].shape, args[i].data);
    }
    ts_status s = tc_run(c, x, 1, y);
    tc_release(n, x);
    return s;
}

static void expect(tcase *c, int n, const arg *args, ts_dtype dt, int rank, const int64_t *shape, const void *want,
                   int line)
{
    ts_tensor *y = NULL;
    ts_status s = run_args(c, n, args, &y);
    CHECK_MSG(s == TS_OK, "line %d: %s", line, c->err.msg);
    CHECK_MSG(s == TS_OK && tc_same(y, dt, rank, shape, want), "line %d", line);
    ts_tensor_release(y);
    tc_free(c);
}

/* Expect a run-time error whose message contains `text`. */
static void expect_fail(tcase *c, int n, const arg *args, const char *text, int line)
{
    ts_tensor *y = NULL;
    ts_status s = run_args(c, n, args, &y);
    CHECK_MSG(s == TS_ERR_RUNTIME, "line %d: status %s", line, ts_status_name(s));
    CHECK_MSG(strstr(c->err.msg, text) != NULL, "line %d: '%s' lacks '%s'", line, c->err.msg, text);
    CHECK(y == NULL);
    ts_tensor_release(y);
    tc_free(c);
}

/* ---- gather ---------------------------------------------------------------- */

static tcase gather_case(int64_t axis)
{
    tcase c = tc_new(TS_OP_GATHER);
    ts_attr_set_int(c.g, c.op, c.a, "axis", axis);
    return c;
}

static void test_gather(void)
{
    /* 2-D indices along axis 0: out[i, j, :] = x[idx[i, j], :] */
    tcase c = gather_case(0);
    arg a1[] = {ARG(TS_DTYPE_F32, 2, SHAPE(3, 2), F32(1, 2, 3, 4, 5, 6)),
                ARG(TS_DTYPE_I32, 2, SHAPE(2, 2), I32(2, 0, 1, 1))};
    expect(&c, 2, a1, TS_DTYPE_F32, 3, SHAPE(2, 2, 2), F32(5, 6, 1, 2, 3, 4, 3, 4), __LINE__);

    c = gather_case(1);
    arg a2[] = {ARG(TS_DTYPE_F64, 2, SHAPE(2, 3), F64(1, 2, 3, 4, 5, 6)), ARG(TS_DTYPE_I64, 1, SHAPE(2), I64(2, 0))};
    expect(&c, 2, a2, TS_DTYPE_F64, 2, SHAPE(2, 2), F64(3, 1, 6, 4), __LINE__);

    /* a middle axis keeps the trailing rows whole */
    c = gather_case(1);
    arg a3[] = {ARG(TS_DTYPE_I32, 3, SHAPE(2, 3, 2), I32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)),
                ARG(TS_DTYPE_I32, 1, SHAPE(2), I32(2, 0))};
    expect(&c, 2, a3, TS_DTYPE_I32, 3, SHAPE(2, 2, 2), I32(4, 5, 0, 1, 10, 11, 6, 7), __LINE__);

    c = gather_case(0);
    arg a4[] = {ARG(TS_DTYPE_I64, 1, SHAPE(4), I64(10, 20, 30, 40)), ARG(TS_DTYPE_U8, 1, SHAPE(3), U8(3, 3, 0))};
    expect(&c, 2, a4, TS_DTYPE_I64, 1, SHAPE(3), I64(40, 40, 10), __LINE__);

    c = gather_case(0);
    arg a5[] = {ARG(TS_DTYPE_BOOL, 1, SHAPE(3), U8(1, 0, 1)), ARG(TS_DTYPE_I32, 0, NULL, I32(1))};
    expect(&c, 2, a5, TS_DTYPE_BOOL, 0, NULL, U8(0), __LINE__);

    c = gather_case(1);
    arg a6[] = {ARG(TS_DTYPE_U8, 2, SHAPE(2, 3), U8(1, 2, 3, 4, 5, 6)), ARG(TS_DTYPE_I32, 1, SHAPE(0), NULL)};
    expect(&c, 2, a6, TS_DTYPE_U8, 2, SHAPE(2, 0), NULL, __LINE__);
}

static void test_gather_errors(void)
{
    tcase c = gather_case(0);
    arg a1[] = {ARG(TS_DTYPE_F32, 1, SHAPE(3), F32(1, 2, 3)), ARG(TS_DTYPE_I32, 2, SHAPE(1, 2), I32(0, 3))};
    expect_fail(&c, 2, a1, "index 3 (at position 1) is out of range [0, 3)", __LINE__);

    c = gather_case(0);
    arg a2[] = {ARG(TS_DTYPE_F32, 1, SHAPE(3), F32(1, 2, 3)), ARG(TS_DTYPE_I64, 1, SHAPE(1), I64(-1))};
    expect_fail(&c, 2, a2, "index -1", __LINE__);

    c = gather_case(0);
    arg a3[] = {ARG(TS_DTYPE_F32, 1, SHAPE(3), F32(1, 2, 3)),
                ARG(TS_DTYPE_U64, 1, SHAPE(1), ((const uint64_t[]){UINT64_MAX}))};
    expect_fail(&c, 2, a3, "index 18446744073709551615", __LINE__);

    /* checked even when the result is empty */
    c = gather_case(1);
    arg a4[] = {ARG(TS_DTYPE_F32, 2, SHAPE(0, 2), NULL), ARG(TS_DTYPE_I32, 1, SHAPE(1), I32(2))};
    expect_fail(&c, 2, a4, "[0, 2)", __LINE__);
}

/* ---- scatter ---------------------------------------------------------------------- */

static tcase scatter_case(const char *combine)
{
    tcase c = tc_new(TS_OP_SCATTER);
    ts_attr_set_enum(c.g, c.op, c.a, "combine", combine);
    return c;
}

/* x = [[1, 2], [3, 4]], idx = [1, 1, 3], upd = [10, 5, 1]: position 1
 * sees 10 then 5, position 3 sees 1. */
static void scatter_dups(ts_dtype dt, const void *x, const void *upd, const char *combine, const void *want,
                         int line)
{
    tcase c = scatter_case(combine);
    arg a[] = {ARG(dt, 2, SHAPE(2, 2), x), ARG(TS_DTYPE_I32, 1, SHAPE(3), I32(1, 1, 3)), ARG(dt, 1, SHAPE(3), upd)};
    expect(&c, 3, a, dt, 2, SHAPE(2, 2), want, line);
}

static void test_scatter(void)
{
    const float *xf = F32(1, 2, 3, 4), *uf = F32(10, 5, 1);
    scatter_dups(TS_DTYPE_F32, xf, uf, "set", F32(1, 5, 3, 1), __LINE__);
    scatter_dups(TS_DTYPE_F32, xf, uf, "add", F32(1, 17, 3, 5), __LINE__);
    scatter_dups(TS_DTYPE_F32, xf, uf, "mul", F32(1, 100, 3, 4), __LINE__);
    scatter_dups(TS_DTYPE_F32, xf, uf, "max", F32(1, 10, 3, 4), __LINE__);
    scatter_dups(TS_DTYPE_F32, xf, uf, "min", F32(1, 2, 3, 1), __LINE__);
    const int32_t *xi = I32(1, 2, 3, 4), *ui = I32(10, 5, 1);
    scatter_dups(TS_DTYPE_I32, xi, ui, "set", I32(1, 5, 3, 1), __LINE__);
    scatter_dups(TS_DTYPE_I32, xi, ui, "add", I32(1, 17, 3, 5), __LINE__);
    scatter_dups(TS_DTYPE_I32, xi, ui, "mul", I32(1, 100, 3, 4), __LINE__);
    scatter_dups(TS_DTYPE_I32, xi, ui, "max", I32(1, 10, 3, 4), __LINE__);
    scatter_dups(TS_DTYPE_I32, xi, ui, "min", I32(1, 2, 3, 1), __LINE__);
    scatter_dups(TS_DTYPE_F64, F64(1, 2, 3, 4), F64(-1, 0.5, 1), "add", F64(1, 1.5, 3, 5), __LINE__);
    /* signedness matters for max/min, not for wrapping add */
    scatter_dups(TS_DTYPE_I64, I64(-1, -1, -1, -1), I64(-7, -3, 5), "max", I64(-1, -1, -1, 5), __LINE__);
    scatter_dups(TS_DTYPE_I64, I64(-1, -1, -1, -1), I64(-7, -3, 5), "min", I64(-1, -7, -1, -1), __LINE__);
    scatter_dups(TS_DTYPE_U8, U8(1, 250, 3, 4), U8(5, 10, 200), "add", U8(1, 9, 3, 204), __LINE__);
    scatter_dups(TS_DTYPE_U8, U8(1, 100, 3, 4), U8(200, 150, 255), "max", U8(1, 200, 3, 255), __LINE__);
    /* f16 sums round in f16 each step: 2048 + 1 = 2048 (ties to even), twice */
    scatter_dups(TS_DTYPE_F16, U16(0x3C00, 0x6800, 0, 0), U16(0x3C00, 0x3C00, 0x3C00), "add",
                 U16(0x3C00, 0x6800, 0, 0x3C00), __LINE__);
    /* the last write in row-major order of 2-D indices wins */
    tcase c = scatter_case("set");
    arg a[] = {ARG(TS_DTYPE_I32, 1, SHAPE(4), I32(0, 0, 0, 0)), ARG(TS_DTYPE_I64, 2, SHAPE(2, 2), I64(0, 3, 3, 0)),
               ARG(TS_DTYPE_I32, 2, SHAPE(2, 2), I32(1, 2, 3, 4))};
    expect(&c, 3, a, TS_DTYPE_I32, 1, SHAPE(4), I32(4, 0, 0, 3), __LINE__);
    c = scatter_case("set");
    arg b[] = {ARG(TS_DTYPE_BOOL, 1, SHAPE(3), U8(0, 0, 0)), ARG(TS_DTYPE_U16, 1, SHAPE(2), U16(2, 0)),
               ARG(TS_DTYPE_BOOL, 1, SHAPE(2), U8(1, 1))};
    expect(&c, 3, b, TS_DTYPE_BOOL, 1, SHAPE(3), U8(1, 0, 1), __LINE__);
    c = scatter_case("add");
    arg e[] = {ARG(TS_DTYPE_F32, 1, SHAPE(2), F32(1, 2)), ARG(TS_DTYPE_I32, 1, SHAPE(0), NULL),
               ARG(TS_DTYPE_F32, 1, SHAPE(0), NULL)};
    expect(&c, 3, e, TS_DTYPE_F32, 1, SHAPE(2), F32(1, 2), __LINE__);
}

/* NaN wins max and min, whichever side it comes from. */
static void test_scatter_nan(void)
{
    const char *kinds[] = {"max", "min"};
    for (int k = 0; k < 2; k++) {
        tcase c = scatter_case(kinds[k]);
        arg a[] = {ARG(TS_DTYPE_F32, 1, SHAPE(2), F32(1, NAN)), ARG(TS_DTYPE_I32, 1, SHAPE(3), I32(0, 0, 1)),
                   ARG(TS_DTYPE_F32, 1, SHAPE(3), F32(NAN, 5, -INFINITY))};
        ts_tensor *y = NULL;
        CHECK_MSG(run_args(&c, 3, a, &y) == TS_OK, "%s", c.err.msg);
        CHECK(y && isnan(((float *)y->data)[0]) && isnan(((float *)y->data)[1]));
        ts_tensor_release(y);
        tc_free(&c);
    }
}

/* Signed zeros as the max/min primitives order them: max gives +0, min -0,
 * whichever side each comes from. */
static void test_scatter_zeros(void)
{
    const float *x = F32(-0.0f, 0.0f), *u = F32(0.0f, -0.0f);
    tcase c = scatter_case("max");
    arg a[] = {ARG(TS_DTYPE_F32, 1, SHAPE(2), x), ARG(TS_DTYPE_I32, 1, SHAPE(2), I32(0, 1)),
               ARG(TS_DTYPE_F32, 1, SHAPE(2), u)};
    expect(&c, 3, a, TS_DTYPE_F32, 1, SHAPE(2), F32(0.0f, 0.0f), __LINE__);
    c = scatter_case("min");
    expect(&c, 3, a, TS_DTYPE_F32, 1, SHAPE(2), F32(-0.0f, -0.0f), __LINE__);
}

static void test_scatter_errors(void)
{
    tcase c = scatter_case("add");
    arg a[] = {ARG(TS_DTYPE_F32, 2, SHAPE(2, 2), F32(1, 2, 3, 4)), ARG(TS_DTYPE_I32, 1, SHAPE(2), I32(0, 4)),
               ARG(TS_DTYPE_F32, 1, SHAPE(2), F32(1, 1))};
    expect_fail(&c, 3, a, "index 4 (at position 1) is out of range [0, 4)", __LINE__);
    c = scatter_case("set");
    arg b[] = {ARG(TS_DTYPE_I32, 1, SHAPE(2), I32(1, 2)), ARG(TS_DTYPE_I8, 1, SHAPE(1), ((const int8_t[]){-2})),
               ARG(TS_DTYPE_I32, 1, SHAPE(1), I32(1))};
    expect_fail(&c, 3, b, "index -2", __LINE__);
}

/* ---- dynamic slices ------------------------------------------------------------------ */

static const int32_t *grid = I32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);   /* i32[3, 4] */

static void dslice(arg start, const int32_t *want, int line)
{
    tcase c = tc_new(TS_OP_DYNAMIC_SLICE);
    tc_dims(&c, "sizes", 2, SHAPE(2, 2));
    arg a[] = {ARG(TS_DTYPE_I32, 2, SHAPE(3, 4), grid), start};
    expect(&c, 2, a, TS_DTYPE_I32, 2, SHAPE(2, 2), want, line);
}

static void test_dynamic_slice(void)
{
    dslice(ARG(TS_DTYPE_I32, 1, SHAPE(2), I32(1, 1)), I32(5, 6, 9, 10), __LINE__);
    /* starts clamp to [0, size - window]: (5, -3) -> (1, 0), (2, 3) -> (1, 2) */
    dslice(ARG(TS_DTYPE_I32, 1, SHAPE(2), I32(5, -3)), I32(4, 5, 8, 9), __LINE__);
    dslice(ARG(TS_DTYPE_I64, 1, SHAPE(2), I64(2, 3)), I32(6, 7, 10, 11), __LINE__);
    dslice(ARG(TS_DTYPE_U64, 1, SHAPE(2), ((const uint64_t[]){0, UINT64_MAX})), I32(2, 3, 6, 7), __LINE__);

    tcase c = tc_new(TS_OP_DYNAMIC_SLICE);
    tc_dims(&c, "sizes", 1, SHAPE(3));
    arg a[] = {ARG(TS_DTYPE_F32, 1, SHAPE(5), F32(1, 2, 3, 4, 5)), ARG(TS_DTYPE_U8, 1, SHAPE(1), U8(4))};
    expect(&c, 2, a, TS_DTYPE_F32, 1, SHAPE(3), F32(3, 4, 5), __LINE__);

    c = tc_new(TS_OP_DYNAMIC_SLICE);
    tc_dims(&c, "sizes", 1, SHAPE(0));
    arg b[] = {ARG(TS_DTYPE_F32, 1, SHAPE(2), F32(1, 2)), ARG(TS_DTYPE_I32, 1, SHAPE(1), I32(7))};
    expect(&c, 2, b, TS_DTYPE_F32, 1, SHAPE(0), NULL, __LINE__);
}

static void dupdate(arg start, const float *want, int line)
{
    tcase c = tc_new(TS_OP_DYNAMIC_UPDATE_SLICE);
    arg a[] = {ARG(TS_DTYPE_F32, 2, SHAPE(3, 3), F32(0, 0, 0, 0, 0, 0, 0, 0, 0)),
               ARG(TS_DTYPE_F32, 2, SHAPE(2, 2), F32(1, 2, 3, 4)), start};
    expect(&c, 3, a, TS_DTYPE_F32, 2, SHAPE(3, 3), want, line);
}

static void test_dynamic_update_slice(void)
{
    dupdate(ARG(TS_DTYPE_I64, 1, SHAPE(2), I64(0, 1)), F32(0, 1, 2, 0, 3, 4, 0, 0, 0), __LINE__);
    /* (2, -1) clamps to (1, 0) */
    dupdate(ARG(TS_DTYPE_I32, 1, SHAPE(2), I32(2, -1)), F32(0, 0, 0, 1, 2, 0, 3, 4, 0), __LINE__);
    dupdate(ARG(TS_DTYPE_U8, 1, SHAPE(2), U8(9, 9)), F32(0, 0, 0, 0, 1, 2, 0, 3, 4), __LINE__);

    tcase c = tc_new(TS_OP_DYNAMIC_UPDATE_SLICE);
    arg a[] = {ARG(TS_DTYPE_I64, 1, SHAPE(3), I64(1, 2, 3)), ARG(TS_DTYPE_I64, 1, SHAPE(0), NULL),
               ARG(TS_DTYPE_I32, 1, SHAPE(1), I32(2))};
    expect(&c, 3, a, TS_DTYPE_I64, 1, SHAPE(3), I64(1, 2, 3), __LINE__);
}

int main(void)
{
    test_gather();
    test_gather_errors();
    test_scatter();
    test_scatter_nan();
    test_scatter_zeros();
    test_scatter_errors();
    test_dynamic_slice();
    test_dynamic_update_slice();
    return check_report();
}
