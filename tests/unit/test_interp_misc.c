/* test_interp_misc.c — sort (stability, NaN, signed zeros, both
 * directions), nonzero (data-dependent size, all zeros), custom ops
 * registered here, and the single-process collectives. */
#include "interp_case.h"

/* Run c on n inputs; expect its n_out results to be want[k]. */
typedef struct res {
    ts_dtype dt;
    int rank;
    const int64_t *shape;
    const void *data;
} res;

static void expect_n(tcase *c, int n_in, ts_tensor **x, int n_out, const res *want, int line)
{
    ts_tensor *y[4] = {0};
    ts_status s = tc_run(c, x, n_out, y);
    CHECK_MSG(s == TS_OK, "line %d: %s", line, c->err.msg);
    for (int k = 0; s == TS_OK && k < n_out; k++)
        CHECK_MSG(tc_same(y[k], want[k].dt, want[k].rank, want[k].shape, want[k].data), "line %d, result %d", line, k);
    tc_release(n_out, y);
    tc_release(n_in, x);
    tc_free(c);
}

/* ---- sort ---------------------------------------------------------------- */

static void sort_case(ts_dtype dt, int rank, const int64_t *shape, const void *data, int64_t axis, int desc,
                      const void *vals, const int64_t *idx, int line)
{
    tcase c = tc_new(TS_OP_SORT);
    tc_param(&c, dt, rank, shape);
    ts_attr_set_int(c.g, c.op, c.a, "axis", axis);
    ts_attr_set_int(c.g, c.op, c.a, "descending", desc);
    ts_tensor *x = tc_tensor(dt, rank, shape, data);
    res want[2] = {{dt, rank, shape, vals}, {TS_DTYPE_I64, rank, shape, idx}};
    expect_n(&c, 1, &x, 2, want, line);
}

static void test_sort_float(void)
{
    /* NaN above +inf; -0 and +0 tie and keep their order; so do the 1s */
    const float *x = F32(3, NAN, 1, -0.0f, INFINITY, 0.0f, 1, NAN, -INFINITY);
    sort_case(TS_DTYPE_F32, 1, SHAPE(9), x, 0, 0, F32(-INFINITY, -0.0f, 0.0f, 1, 1, 3, INFINITY, NAN, NAN),
              I64(8, 3, 5, 2, 6, 0, 4, 1, 7), __LINE__);
    sort_case(TS_DTYPE_F32, 1, SHAPE(9), x, 0, 1, F32(NAN, NAN, INFINITY, 3, 1, 1, -0.0f, 0.0f, -INFINITY),
              I64(1, 7, 4, 0, 2, 6, 3, 5, 8), __LINE__);
    sort_case(TS_DTYPE_F16, 1, SHAPE(4), U16(0x4000, 0x3C00, 0x7E00, 0xBC00), 0, 0, U16(0xBC00, 0x3C00, 0x4000, 0x7E00),
              I64(3, 1, 0, 2), __LINE__);
    sort_case(TS_DTYPE_F64, 2, SHAPE(2, 2), F64(2, 1, -1, -2), 1, 0, F64(1, 2, -2, -1), I64(1, 0, 1, 0), __LINE__);
}

static void test_sort_int(void)
{
    /* along axis 0: columns [3 1 2] and [1 2 1] */
    const int32_t *x = I32(3, 1, 1, 2, 2, 1);
    sort_case(TS_DTYPE_I32, 2, SHAPE(3, 2), x, 0, 0, I32(1, 1, 2, 1, 3, 2), I64(1, 0, 2, 2, 0, 1), __LINE__);
    sort_case(TS_DTYPE_I32, 2, SHAPE(3, 2), x, 0, 1, I32(3, 2, 2, 1, 1, 1), I64(0, 1, 2, 0, 1, 2), __LINE__);
    /* unsigned order: 200 and 255 are large, not negative */
    sort_case(TS_DTYPE_U8, 2, SHAPE(2, 3), U8(200, 5, 100, 0, 255, 0), 1, 0, U8(5, 100, 200, 0, 0, 255),
              I64(1, 2, 0, 0, 2, 1), __LINE__);
    sort_case(TS_DTYPE_I64, 1, SHAPE(4), I64(-5, 3, -5, INT64_MIN), 0, 1, I64(3, -5, -5, INT64_MIN), I64(1, 0, 2, 3),
              __LINE__);
    sort_case(TS_DTYPE_I32, 1, SHAPE(0), NULL, 0, 0, NULL, NULL, __LINE__);
    sort_case(TS_DTYPE_F32, 2, SHAPE(2, 0), NULL, 1, 1, NULL, NULL, __LINE__);
    sort_case(TS_DTYPE_I32, 2, SHAPE(0, 3), NULL, 1, 0, NULL, NULL, __LINE__);
}

/* 100 elements i % 3: ascending, the positions of the 0s in order, then
 * the 1s, then the 2s; descending, the 2s first, still in order. */
static void test_sort_stable_long(void)
{
    int32_t x[100], vals[100];
    int64_t idx[100], k = 0;
    for (int i = 0; i < 100; i++) x[i] = i % 3;
    for (int v = 0; v < 3; v++)
        for (int i = v; i < 100; i += 3, k++) {
            vals[k] = v;
            idx[k] = i;
        }
    sort_case(TS_DTYPE_I32, 1, SHAPE(100), x, 0, 0, vals, idx, __LINE__);
    k = 0;
    for (int v = 2; v >= 0; v--)
        for (int i = v; i < 100; i += 3, k++) {
            vals[k] = v;
            idx[k] = i;
        }
    sort_case(TS_DTYPE_I32, 1, SHAPE(100), x, 0, 1, vals, idx, __LINE__);
}

/* ---- nonzero ------------------------------------------------------------------ */

static void nonzero_case(ts_dtype dt, int rank, const int64_t *shape, const void *data, int64_t nnz,
                         const int64_t *want, int line)
{
    tcase c = tc_new(TS_OP_NONZERO);
    tc_param(&c, dt, rank, shape);
    ts_tensor *x = tc_tensor(dt, rank, shape, data);
    res r = {TS_DTYPE_I64, 2, SHAPE(rank, nnz), want};
    expect_n(&c, 1, &x, 1, &r, line);
}

static void test_nonzero(void)
{
    /* NaN counts, -0 does not: (0,1), (1,0), (1,2) */
    nonzero_case(TS_DTYPE_F32, 2, SHAPE(2, 3), F32(0, 1, 0, NAN, -0.0f, 2), 3, I64(0, 1, 1, 1, 0, 2), __LINE__);
    nonzero_case(TS_DTYPE_I32, 2, SHAPE(2, 2), I32(0, 0, 0, 0), 0, NULL, __LINE__);
    nonzero_case(TS_DTYPE_BOOL, 1, SHAPE(3), U8(1, 0, 1), 2, I64(0, 2), __LINE__);
    nonzero_case(TS_DTYPE_U8, 3, SHAPE(2, 1, 2), U8(0, 7, 9, 0), 2, I64(0, 1, 0, 0, 1, 0), __LINE__);
    nonzero_case(TS_DTYPE_F64, 0, NULL, F64(5), 1, NULL, __LINE__);
    nonzero_case(TS_DTYPE_F64, 0, NULL, F64(0), 0, NULL, __LINE__);
    nonzero_case(TS_DTYPE_F16, 1, SHAPE(0), NULL, 0, NULL, __LINE__);
}

/* One graph run twice: the fresh nnz symbol takes a new value each time. */
static void test_nonzero_rerun(void)
{
    tcase c = tc_new(TS_OP_NONZERO);
    tc_param(&c, TS_DTYPE_I64, 1, SHAPE(4));
    ts_tensor *x = tc_tensor(TS_DTYPE_I64, 1, SHAPE(4), I64(0, 5, 0, 6)), *y = NULL;
    CHECK_MSG(tc_run(&c, &x, 1, &y) == TS_OK, "%s", c.err.msg);
    CHECK(tc_same(y, TS_DTYPE_I64, 2, SHAPE(1, 2), I64(1, 3)));
    tc_release(1, &y);
    ts_tensor_release(x);
    x = tc_tensor(TS_DTYPE_I64, 1, SHAPE(4), I64(1, 1, 1, 0));
    CHECK_MSG(tc_run(&c, &x, 1, &y) == TS_OK, "%s", c.err.msg);
    CHECK(tc_same(y, TS_DTYPE_I64, 2, SHAPE(1, 3), I64(0, 1, 2)));
    tc_release(1, &y);
    ts_tensor_release(x);
    tc_free(&c);
}

/* ---- custom ---------------------------------------------------------------------- */

/* "test.plus_sum": (x + params[0], sum of x as an f32 scalar). */
static ts_status plus_sum_shape(ts_graph *g, const ts_node *n, ts_type *outs, int cap, int *count, ts_err *err)
{
    if (cap < 2 || n->n_in != 1 || n->in[0]->type.dtype != TS_DTYPE_F32)
        return ts_err_set(err, TS_ERR_SHAPE, "test.plus_sum takes one f32 operand");
    outs[0] = n->in[0]->type;
    outs[1] = (ts_type){TS_DTYPE_F32, 0, NULL};
    *count = 2;
    return TS_OK;
}

static ts_status plus_sum_kernel(const ts_node *n, ts_tensor *const *in, ts_tensor **out, ts_err *err)
{
    int np;
    const int64_t *params = ts_node_ints(n, "params", &np);
    const float *x = in[0]->data;
    float *y = out[0]->data, *sum = out[1]->data;
    for (int64_t i = 0; i < in[0]->numel; i++) {
        y[i] = x[i] + (float)(np ? params[0] : 0);
        *sum += x[i];
    }
    return TS_OK;
}

static ts_status no_shape(ts_graph *g, const ts_node *n, ts_type *outs, int cap, int *count, ts_err *err)
{
    outs[0] = n->in[0]->type;
    *count = 1;
    return TS_OK;
}

static tcase custom_case(const char *name)
{
    tcase c = tc_new(TS_OP_CUSTOM);
    ts_attr_set_str(c.g, c.op, c.a, "name", name);
    ts_attr_set_ints(c.g, c.op, c.a, "params", 1, SHAPE(10));
    tc_param(&c, TS_DTYPE_F32, 1, SHAPE(3));
    return c;
}

static void test_custom(void)
{
    ts_custom_op op = {"test.plus_sum", plus_sum_shape, (void *)plus_sum_kernel};
    CHECK(ts_custom_register(&op, NULL) == TS_OK);
    ts_custom_op bare = {"test.no_kernel", no_shape, NULL};
    CHECK(ts_custom_register(&bare, NULL) == TS_OK);

    tcase c = custom_case("test.plus_sum");
    ts_tensor *x = tc_tensor(TS_DTYPE_F32, 1, SHAPE(3), F32(1, 2, 3.5f));
    res want[2] = {{TS_DTYPE_F32, 1, SHAPE(3), F32(11, 12, 13.5f)}, {TS_DTYPE_F32, 0, NULL, F32(6.5f)}};
    expect_n(&c, 1, &x, 2, want, __LINE__);

    c = custom_case("test.no_kernel");
    x = tc_tensor(TS_DTYPE_F32, 1, SHAPE(3), F32(1, 2, 3));
    ts_tensor *y = NULL;
    CHECK(tc_run(&c, &x, 1, &y) == TS_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(c.err.msg, "test.no_kernel") != NULL, "%s", c.err.msg);
    CHECK(y == NULL);
    ts_tensor_release(x);
    tc_free(&c);
}

/* ---- collectives -------------------------------------------------------------------- */

static void identity_case(ts_op op, const char *kind, const char *axis_name, int64_t axis)
{
    tcase c = tc_new(op);
    if (kind) ts_attr_set_enum(c.g, c.op, c.a, "kind", kind);
    if (axis_name) ts_attr_set_int(c.g, c.op, c.a, axis_name, axis);
    if (op == TS_OP_ALL_TO_ALL) ts_attr_set_int(c.g, c.op, c.a, "concat_axis", 0);
    tc_param(&c, TS_DTYPE_F32, 2, SHAPE(2, 2));
    ts_tensor *x = tc_tensor(TS_DTYPE_F32, 2, SHAPE(2, 2), F32(1, 2, 3, 4));
    res want = {TS_DTYPE_F32, 2, SHAPE(2, 2), F32(1, 2, 3, 4)};
    expect_n(&c, 1, &x, 1, &want, __LINE__);
}

static void test_collectives(void)
{
    identity_case(TS_OP_ALL_REDUCE, "sum", NULL, 0);
    identity_case(TS_OP_ALL_GATHER, NULL, "axis", 1);
    identity_case(TS_OP_REDUCE_SCATTER, "max", "axis", 0);
    identity_case(TS_OP_ALL_TO_ALL, NULL, "split_axis", 1);

    tcase c = tc_new(TS_OP_SEND);
    ts_attr_set_int(c.g, c.op, c.a, "peer", 1);
    tc_param(&c, TS_DTYPE_F32, 1, SHAPE(1));
    ts_tensor *x = tc_tensor(TS_DTYPE_F32, 1, SHAPE(1), F32(1)), *y = NULL;
    CHECK(tc_run(&c, &x, 0, NULL) == TS_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(c.err.msg, "multi-process runtime (world = 1 here)") != NULL, "%s", c.err.msg);
    ts_tensor_release(x);
    tc_free(&c);

    c = tc_new(TS_OP_RECV);
    ts_attr_set_int(c.g, c.op, c.a, "peer", 0);
    ts_attr_set_dtype(c.g, c.op, c.a, "dtype", TS_DTYPE_I32);
    tc_dims(&c, "shape", 1, SHAPE(2));
    CHECK(tc_run(&c, NULL, 1, &y) == TS_ERR_UNSUPPORTED);
    CHECK(y == NULL);
    tc_free(&c);
}

int main(void)
{
    test_sort_float();
    test_sort_int();
    test_sort_stable_long();
    test_nonzero();
    test_nonzero_rerun();
    test_custom();
    test_collectives();
    return check_report();
}
