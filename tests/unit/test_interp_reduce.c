/* test_interp_reduce.c — the reduction kernels against hand-computed
 * results, for every dtype: reduce_sum/prod/max/min (wrap-around, f64
 * accumulation, NaN, empty reductions), argmax/argmin (ties, select_last,
 * NaN, the empty-axis error), cumulative (exclusive, reverse) and
 * reduce_window (strides, dilation, padding). A row applies to every dtype
 * of its mask; the values are text (see interp_vals.h). */
#include "interp_vals.h"


/* A short list of integers: a shape, axes, window sizes. */
typedef struct ilist {
    int n;
    int64_t v[4];
} ilist;
#define L(...) {NARGS(int64_t, __VA_ARGS__), {__VA_ARGS__}}
#define L0 {0, {0}}

static const char *opname(ts_op op) { return ts_op_get(op)->name; }

/* Run c (already given its attributes) on one input and check the result
 * against want in dtype out_dt; returns the run's status. */
static ts_status run_check(tcase *c, ts_dtype dt, const ilist *shape, const char *in, ts_dtype out_dt,
                           const char *want, const char *what)
{
    tc_param(c, dt, shape->n, shape->v);
    ts_tensor *x = tv_tensor(dt, shape->n, shape->v, in);
    ts_tensor *y = NULL;
    ts_status s = tc_run(c, &x, 1, &y);
    if (want) {
        CHECK_MSG(s == TS_OK, "%s: %s", what, c->err.msg);
        if (s == TS_OK) tv_check(y, out_dt, want, 0, what);
    }
    ts_tensor_release(y);
    ts_tensor_release(x);
    return s;
}

/* ==== reduce_sum, reduce_prod, reduce_max, reduce_min ===================== */

typedef struct red_row {
    ts_op op;
    unsigned mask;
    ilist shape, axes;
    const char *in, *want;
    int line;
} red_row;

#define R(op, mask, shape, axes, in, want) {TS_OP_REDUCE_##op, mask, shape, axes, in, want, __LINE__}

static const red_row reds[] = {
    /* ---- reduce_sum */
    R(SUM, M_NUM, L(2, 3), L(1), "1 2 3 4 5 6", "6 15"),
    R(SUM, M_NUM, L(2, 3), L(0), "1 2 3 4 5 6", "5 7 9"),
    R(SUM, M_NUM, L(2, 3), L(0, 1), "1 2 3 4 5 6", "21"),
    R(SUM, M_NUM, L(2, 3), L(1, 0), "1 2 3 4 5 6", "21"),
    R(SUM, M_NUM, L(2, 3), L0, "1 2 3 4 5 6", "1 2 3 4 5 6"),
    R(SUM, M_NUM, L(2, 3, 2), L(0, 2), "0 1 2 3 4 5 6 7 8 9 10 11", "14 22 30"),
    R(SUM, M_NUM, L(2, 3, 2), L(1), "0 1 2 3 4 5 6 7 8 9 10 11", "6 9 24 27"),
    R(SUM, M_SINTS | M_FLOATS, L(2, 2), L(1), "-1 -2 3 -4", "-3 -1"),
    R(SUM, M_NUM, L(3, 0), L(1), "", "0 0 0"),
    R(SUM, M_NUM, L(0), L(0), "", "0"),
    R(SUM, M_NUM, L(0, 3), L(1), "", ""),
    R(SUM, M_I8, L(3), L(0), "100 100 100", "44"),
    R(SUM, M_U8, L(2), L(0), "200 100", "44"),
    R(SUM, M_I16, L(2), L(0), "-32768 -1", "32767"),
    R(SUM, M_I64, L(2), L(0), "9223372036854775807 1", "-9223372036854775808"),
    R(SUM, M_U64, L(2), L(0), "18446744073709551615 2", "1"),
    /* accumulated in f64: an f16/bf16/f32 accumulator would lose the ones
     * or overflow */
    R(SUM, M_F16, L(3), L(0), "2048 1 1", "2050"),
    R(SUM, M_F16, L(3), L(0), "60000 60000 -60000", "60000"),
    R(SUM, M_BF16, L(3), L(0), "256 1 1", "258"),
    R(SUM, M_F32, L(3), L(0), "16777216 1 1", "16777218"),
    R(SUM, M_F32, L(3), L(0), "3e38 3e38 -3e38", "3e38"),
    R(SUM, M_FLOATS, L(2, 2), L(1), "1 nan inf -inf", "nan nan"),
    R(SUM, M_FLOATS, L(2, 2), L(1), "inf 1 -0 -0", "inf 0"),
    /* ---- reduce_prod */
    R(PROD, M_NUM, L(2, 3), L(1), "1 2 3 4 5 6", "6 120"),
    R(PROD, M_NUM, L(2, 3), L(0), "1 2 3 4 5 6", "4 10 18"),
    R(PROD, M_SINTS | M_FLOATS, L(3), L(0), "-2 3 -4", "24"),
    R(PROD, M_NUM, L(3, 0), L(1), "", "1 1 1"),
    R(PROD, M_NUM, L(0), L(0), "", "1"),
    R(PROD, M_I8, L(2, 2), L(1), "16 16 -128 -1", "0 -128"),
    R(PROD, M_I32, L(2), L(0), "65536 65536", "0"),
    R(PROD, M_I64, L(2), L(0), "3037000500 3037000500", "-9223372036709301616"),
    R(PROD, M_U64, L(2, 2), L(1), "4294967296 4294967296 18446744073709551615 18446744073709551615", "0 1"),
    R(PROD, M_F16, L(2, 3), L(1), "256 256 0.0009765625 256 256 1", "64 inf"),
    R(PROD, M_FLOATS, L(4, 2), L(1), "0 inf -1 -0 -1 0 nan 0", "nan 0 -0 nan"),
    /* ---- reduce_max: NaN wins; max(-0, 0) = 0; empty gives the bottom */
    R(MAX, M_NUM, L(2, 3), L(1), "1 5 3 4 2 6", "5 6"),
    R(MAX, M_NUM, L(2, 3), L(0), "1 5 3 4 2 6", "4 5 6"),
    R(MAX, M_SINTS | M_FLOATS, L(3), L(0), "-3 -1 -2", "-1"),
    R(MAX, M_FLOATS, L(3), L(0), "1 nan 3", "nan"),
    R(MAX, M_FLOATS, L(5, 2), L(1), "nan 1 -inf -inf -0 0 0 -0 -0 -0", "nan -inf 0 0 -0"),
    R(MAX, M_U64, L(3), L(0), "1 18446744073709551615 9223372036854775808", "18446744073709551615"),
    R(MAX, M_I64, L(2), L(0), "-9223372036854775808 -1", "-1"),
    R(MAX, M_U8, L(2), L(0), "200 100", "200"),
    R(MAX, M_FLOATS, L(2, 0), L(1), "", "-inf -inf"),
    R(MAX, M_I8, L(2, 0), L(1), "", "-128 -128"),
    R(MAX, M_I16, L(2, 0), L(1), "", "-32768 -32768"),
    R(MAX, M_I32, L(2, 0), L(1), "", "-2147483648 -2147483648"),
    R(MAX, M_I64, L(2, 0), L(1), "", "-9223372036854775808 -9223372036854775808"),
    R(MAX, M_UINTS, L(2, 0), L(1), "", "0 0"),
    /* ---- reduce_min: NaN wins; min(-0, 0) = -0; empty gives the top */
    R(MIN, M_NUM, L(2, 3), L(1), "1 5 3 4 2 6", "1 2"),
    R(MIN, M_NUM, L(2, 3), L(0), "1 5 3 4 2 6", "1 2 3"),
    R(MIN, M_FLOATS, L(3), L(0), "1 nan 3", "nan"),
    R(MIN, M_FLOATS, L(3, 2), L(1), "-0 0 0 -0 inf inf", "-0 -0 inf"),
    R(MIN, M_U64, L(2), L(0), "18446744073709551615 9223372036854775808", "9223372036854775808"),
    R(MIN, M_I8, L(2), L(0), "127 -128", "-128"),
    R(MIN, M_FLOATS, L(0), L(0), "", "inf"),
    R(MIN, M_I8, L(0), L(0), "", "127"),
    R(MIN, M_U8, L(0), L(0), "", "255"),
    R(MIN, M_I16, L(0), L(0), "", "32767"),
    R(MIN, M_U16, L(0), L(0), "", "65535"),
    R(MIN, M_I32, L(0), L(0), "", "2147483647"),
    R(MIN, M_U32, L(0), L(0), "", "4294967295"),
    R(MIN, M_I64, L(0), L(0), "", "9223372036854775807"),
    R(MIN, M_U64, L(0), L(0), "", "18446744073709551615"),
};

static void red_case(const red_row *r, ts_dtype dt)
{
    char what[96];
    snprintf(what, sizeof what, "line %d: %s %s", r->line, opname(r->op), ts_dtype_name(dt));
    tcase c = tc_new(r->op);
    ts_attr_set_ints(c.g, c.op, c.a, "axes", r->axes.n, r->axes.v);
    run_check(&c, dt, &r->shape, r->in, dt, r->want, what);
    tc_free(&c);
}

/* ==== argmax, argmin ====================================================== */

typedef struct arg_row {
    ts_op op;
    unsigned mask;
    ilist shape;
    int64_t axis, last;
    const char *in, *want;
    int line;
} arg_row;

#define A(op, mask, shape, axis, last, in, want) {TS_OP_ARG##op, mask, shape, axis, last, in, want, __LINE__}

static const arg_row args[] = {
    A(MAX, M_NUM, L(2, 3), 1, 0, "1 5 3 6 2 6", "1 0"),
    A(MAX, M_NUM, L(2, 3), 1, 1, "1 5 3 6 2 6", "1 2"),
    A(MAX, M_NUM, L(2, 3), 0, 0, "1 5 3 6 2 6", "1 0 1"),
    A(MAX, M_NUM, L(3), 0, 0, "2 2 2", "0"),
    A(MAX, M_NUM, L(3), 0, 1, "2 2 2", "2"),
    A(MAX, M_NUM, L(1), 0, 0, "7", "0"),
    A(MAX, M_NUM, L(2, 2, 2), 0, 0, "1 8 3 4 9 2 5 0", "1 0 1 0"),
    A(MAX, M_NUM, L(2, 2, 2), 1, 0, "1 8 3 4 9 2 5 0", "1 0 0 0"),
    A(MAX, M_NUM, L(2, 2, 2), 2, 0, "1 8 3 4 9 2 5 0", "1 1 0 0"),
    A(MAX, M_NUM, L(0, 3), 1, 0, "", ""),
    A(MAX, M_FLOATS, L(4), 0, 0, "1 nan 3 nan", "1"),
    A(MAX, M_FLOATS, L(4), 0, 1, "1 nan 3 nan", "3"),
    A(MAX, M_FLOATS, L(2), 0, 0, "nan 5", "0"),
    A(MAX, M_FLOATS, L(2), 0, 1, "nan 5", "0"),
    A(MAX, M_FLOATS, L(2), 0, 0, "-inf -inf", "0"),
    A(MAX, M_FLOATS, L(2), 0, 1, "-inf -inf", "1"),
    A(MAX, M_FLOATS, L(2), 0, 0, "-0 0", "0"),
    A(MAX, M_FLOATS, L(2), 0, 1, "-0 0", "1"),
    A(MAX, M_FLOATS, L(3), 0, 0, "-inf inf 1", "1"),
    A(MAX, M_U64, L(3), 0, 0, "1 18446744073709551615 9223372036854775808", "1"),
    A(MAX, M_U8, L(2), 0, 0, "100 200", "1"),
    A(MAX, M_I8, L(3), 0, 0, "-128 127 -1", "1"),
    A(MAX, M_I64, L(2), 0, 0, "-9223372036854775808 9223372036854775807", "1"),
    A(MIN, M_NUM, L(2, 3), 1, 0, "1 5 1 6 2 2", "0 1"),
    A(MIN, M_NUM, L(2, 3), 1, 1, "1 5 1 6 2 2", "2 2"),
    A(MIN, M_NUM, L(2, 2, 2), 1, 0, "1 8 3 4 9 2 5 0", "0 1 1 1"),
    A(MIN, M_FLOATS, L(4), 0, 0, "3 nan 1 nan", "1"),
    A(MIN, M_FLOATS, L(4), 0, 1, "3 nan 1 nan", "3"),
    A(MIN, M_FLOATS, L(2), 0, 0, "-0 0", "0"),
    A(MIN, M_FLOATS, L(2), 0, 1, "-0 0", "1"),
    A(MIN, M_FLOATS, L(3), 0, 0, "inf -inf -inf", "1"),
    A(MIN, M_FLOATS, L(3), 0, 1, "inf -inf -inf", "2"),
    A(MIN, M_U64, L(3), 0, 0, "18446744073709551615 9223372036854775808 9223372036854775809", "1"),
    A(MIN, M_I8, L(3), 0, 0, "5 -128 -128", "1"),
    A(MIN, M_I8, L(3), 0, 1, "5 -128 -128", "2"),
    A(MIN, M_U8, L(2), 0, 0, "200 100", "1"),
};

static void arg_case(const arg_row *r, ts_dtype dt)
{
    char what[96];
    snprintf(what, sizeof what, "line %d: %s %s", r->line, opname(r->op), ts_dtype_name(dt));
    tcase c = tc_new(r->op);
    ts_attr_set_int(c.g, c.op, c.a, "axis", r->axis);
    ts_attr_set_int(c.g, c.op, c.a, "select_last", r->last);
    run_check(&c, dt, &r->shape, r->in, TS_DTYPE_I64, r->want, what);
    tc_free(&c);
}

/* An empty axis has no extreme: a runtime error naming the op. */
static void test_arg_empty(void)
{
    static const struct { ts_op op; ilist shape; int64_t axis; } cases[] = {
        {TS_OP_ARGMAX, L(0), 0}, {TS_OP_ARGMIN, L(0), 0}, {TS_OP_ARGMAX, L(2, 0), 1},
        {TS_OP_ARGMIN, L(3, 0, 2), 1}, {TS_OP_ARGMAX, L(0, 0), 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tcase c = tc_new(cases[i].op);
        ts_attr_set_int(c.g, c.op, c.a, "axis", cases[i].axis);
        ts_status s = run_check(&c, TS_DTYPE_F32, &cases[i].shape, "", TS_DTYPE_I64, NULL, NULL);
        CHECK_MSG(s == TS_ERR_RUNTIME, "case %zu: status %d", i, (int)s);
        CHECK_MSG(strstr(c.err.msg, "of an empty axis") && strstr(c.err.msg, opname(cases[i].op)),
                  "case %zu: %s", i, c.err.msg);
        tc_free(&c);
    }
}

/* ==== cumulative ========================================================== */

typedef struct cum_row {
    const char *kind;
    unsigned mask;
    ilist shape;
    int64_t axis, exclusive, reverse;
    const char *in, *want;
    int line;
} cum_row;

#define K(kind, mask, shape, axis, excl, rev, in, want) {kind, mask, shape, axis, excl, rev, in, want, __LINE__}

static const cum_row cums[] = {
    K("sum", M_NUM, L(4), 0, 0, 0, "1 2 3 4", "1 3 6 10"),
    K("sum", M_NUM, L(4), 0, 1, 0, "1 2 3 4", "0 1 3 6"),
    K("sum", M_NUM, L(4), 0, 0, 1, "1 2 3 4", "10 9 7 4"),
    K("sum", M_NUM, L(4), 0, 1, 1, "1 2 3 4", "9 7 4 0"),
    K("prod", M_NUM, L(4), 0, 0, 0, "1 2 3 4", "1 2 6 24"),
    K("prod", M_NUM, L(4), 0, 1, 0, "1 2 3 4", "1 1 2 6"),
    K("prod", M_NUM, L(4), 0, 0, 1, "1 2 3 4", "24 24 12 4"),
    K("prod", M_NUM, L(4), 0, 1, 1, "1 2 3 4", "24 12 4 1"),
    K("max", M_NUM, L(4), 0, 0, 0, "1 3 2 0", "1 3 3 3"),
    K("max", M_NUM, L(4), 0, 0, 1, "1 3 2 0", "3 3 2 0"),
    K("max", M_FLOATS, L(4), 0, 1, 0, "1 3 2 0", "-inf 1 3 3"),
    K("max", M_FLOATS, L(4), 0, 1, 1, "1 3 2 0", "3 2 0 -inf"),
    K("max", M_I8, L(4), 0, 1, 0, "1 3 2 0", "-128 1 3 3"),
    K("max", M_I16, L(4), 0, 1, 0, "1 3 2 0", "-32768 1 3 3"),
    K("max", M_I32, L(4), 0, 1, 0, "1 3 2 0", "-2147483648 1 3 3"),
    K("max", M_I64, L(4), 0, 1, 0, "1 3 2 0", "-9223372036854775808 1 3 3"),
    K("max", M_UINTS, L(4), 0, 1, 0, "1 3 2 0", "0 1 3 3"),
    K("min", M_NUM, L(4), 0, 0, 0, "3 1 2 4", "3 1 1 1"),
    K("min", M_NUM, L(4), 0, 0, 1, "3 1 2 4", "1 1 2 4"),
    K("min", M_FLOATS, L(4), 0, 1, 0, "3 1 2 4", "inf 3 1 1"),
    K("min", M_FLOATS, L(4), 0, 1, 1, "3 1 2 4", "1 2 4 inf"),
    K("min", M_I8, L(4), 0, 1, 0, "3 1 2 4", "127 3 1 1"),
    K("min", M_U8, L(4), 0, 1, 0, "3 1 2 4", "255 3 1 1"),
    K("min", M_I16, L(4), 0, 1, 0, "3 1 2 4", "32767 3 1 1"),
    K("min", M_U16, L(4), 0, 1, 0, "3 1 2 4", "65535 3 1 1"),
    K("min", M_I32, L(4), 0, 1, 0, "3 1 2 4", "2147483647 3 1 1"),
    K("min", M_U32, L(4), 0, 1, 0, "3 1 2 4", "4294967295 3 1 1"),
    K("min", M_I64, L(4), 0, 1, 0, "3 1 2 4", "9223372036854775807 3 1 1"),
    K("min", M_U64, L(4), 0, 1, 0, "3 1 2 4", "18446744073709551615 3 1 1"),
    K("sum", M_NUM, L(2, 3), 1, 0, 0, "1 2 3 4 5 6", "1 3 6 4 9 15"),
    K("sum", M_NUM, L(2, 3), 0, 0, 0, "1 2 3 4 5 6", "1 2 3 5 7 9"),
    K("sum", M_NUM, L(2, 3), 0, 1, 0, "1 2 3 4 5 6", "0 0 0 1 2 3"),
    K("sum", M_NUM, L(2, 3), 1, 0, 1, "1 2 3 4 5 6", "6 5 3 15 11 6"),
    K("sum", M_NUM, L(2, 2, 2), 1, 0, 0, "1 2 3 4 5 6 7 8", "1 2 4 6 5 6 12 14"),
    K("max", M_NUM, L(2, 2, 2), 2, 0, 1, "1 8 3 4 9 2 5 0", "8 8 4 4 9 2 5 0"),
    K("sum", M_I8, L(3), 0, 0, 0, "100 100 100", "100 -56 44"),
    K("sum", M_U8, L(3), 0, 0, 0, "100 100 100", "100 200 44"),
    K("prod", M_I8, L(3), 0, 0, 0, "16 16 3", "16 0 0"),
    K("max", M_U64, L(3), 0, 0, 0, "1 18446744073709551615 5", "1 18446744073709551615 18446744073709551615"),
    K("min", M_I64, L(3), 0, 0, 0, "5 -9223372036854775808 0", "5 -9223372036854775808 -9223372036854775808"),
    /* the running sum stays in f64; each output is rounded once */
    K("sum", M_F16, L(4), 0, 0, 0, "2048 1 1 1", "2048 2048 2050 2052"),
    K("sum", M_BF16, L(4), 0, 0, 0, "256 1 1 1", "256 256 258 260"),
    K("sum", M_F32, L(3), 0, 0, 0, "16777216 1 1", "16777216 16777216 16777218"),
    K("sum", M_FLOATS, L(3), 0, 0, 0, "1 nan 2", "1 nan nan"),
    K("max", M_FLOATS, L(3), 0, 0, 0, "1 nan 3", "1 nan nan"),
    K("min", M_FLOATS, L(3), 0, 0, 0, "1 nan 0", "1 nan nan"),
    K("max", M_FLOATS, L(3), 0, 0, 0, "-0 0 -0", "-0 0 0"),
    K("sum", M_FLOATS, L(2), 0, 0, 0, "-0 -0", "0 0"),
    K("sum", M_NUM, L(0), 0, 0, 0, "", ""),
    K("prod", M_NUM, L(2, 0), 1, 1, 1, "", ""),
};

static void cum_case(const cum_row *r, ts_dtype dt)
{
    char what[96];
    snprintf(what, sizeof what, "line %d: cumulative %s %s", r->line, r->kind, ts_dtype_name(dt));
    tcase c = tc_new(TS_OP_CUMULATIVE);
    ts_attr_set_enum(c.g, c.op, c.a, "kind", r->kind);
    ts_attr_set_int(c.g, c.op, c.a, "axis", r->axis);
    ts_attr_set_int(c.g, c.op, c.a, "exclusive", r->exclusive);
    ts_attr_set_int(c.g, c.op, c.a, "reverse", r->reverse);
    run_check(&c, dt, &r->shape, r->in, dt, r->want, what);
    tc_free(&c);
}

/* ==== reduce_window ======================================================= */

typedef struct win_row {
    const char *kind;
    unsigned mask;
    ilist shape, window, strides, dilations, lo, hi;
    const char *in, *want;
    int line;
} win_row;

#define W(kind, mask, shape, w, s, d, lo, hi, in, want) {kind, mask, shape, w, s, d, lo, hi, in, want, __LINE__}

static const win_row wins[] = {
    W("sum", M_NUM, L(5), L(2), L(1), L(1), L(0), L(0), "1 2 3 4 5", "3 5 7 9"),
    W("sum", M_NUM, L(5), L(2), L(2), L(1), L(0), L(0), "1 2 3 4 5", "3 7"),
    W("sum", M_NUM, L(5), L(3), L(2), L(1), L(1), L(1), "1 2 3 4 5", "3 9 9"),
    W("sum", M_NUM, L(5), L(2), L(1), L(2), L(0), L(0), "1 2 3 4 5", "4 6 8"),
    W("sum", M_NUM, L(4), L(2), L(3), L(1), L(0), L(0), "1 2 3 4", "3"),
    W("sum", M_NUM, L(4), L(2), L(3), L(1), L(0), L(1), "1 2 3 4", "3 4"),
    /* padding never wins: with a zero there, these would differ */
    W("max", M_SINTS | M_FLOATS, L(3), L(3), L(1), L(1), L(1), L(1), "-1 -5 -3", "-1 -1 -3"),
    W("min", M_NUM, L(3), L(3), L(1), L(1), L(1), L(1), "5 9 7", "5 5 7"),
    W("max", M_NUM, L(3), L(3), L(1), L(1), L(1), L(1), "5 9 7", "9 9 9"),
    /* windows entirely in the padding give the identity */
    W("sum", M_NUM, L(2), L(1), L(1), L(1), L(2), L(0), "4 6", "0 0 4 6"),
    W("max", M_FLOATS, L(2), L(1), L(1), L(1), L(2), L(0), "4 6", "-inf -inf 4 6"),
    W("max", M_I8, L(2), L(1), L(1), L(1), L(2), L(0), "4 6", "-128 -128 4 6"),
    W("max", M_I64, L(2), L(1), L(1), L(1), L(2), L(0), "4 6", "-9223372036854775808 -9223372036854775808 4 6"),
    W("max", M_UINTS, L(2), L(1), L(1), L(1), L(2), L(0), "4 6", "0 0 4 6"),
    W("min", M_FLOATS, L(2), L(1), L(1), L(1), L(2), L(0), "4 6", "inf inf 4 6"),
    W("min", M_U16, L(2), L(1), L(1), L(1), L(2), L(0), "4 6", "65535 65535 4 6"),
    W("min", M_I32, L(2), L(1), L(1), L(1), L(2), L(0), "4 6", "2147483647 2147483647 4 6"),
    W("min", M_U64, L(2), L(1), L(1), L(1), L(0), L(1), "4 6", "4 6 18446744073709551615"),
    /* two dims */
    W("sum", M_NUM, L(3, 3), L(2, 2), L(1, 1), L(1, 1), L(0, 0), L(0, 0), "1 2 3 4 5 6 7 8 9", "12 16 24 28"),
    W("max", M_NUM, L(3, 3), L(2, 2), L(1, 1), L(1, 1), L(0, 0), L(0, 0), "1 2 3 4 5 6 7 8 9", "5 6 8 9"),
    W("min", M_NUM, L(3, 3), L(2, 2), L(1, 1), L(1, 1), L(0, 0), L(0, 0), "1 2 3 4 5 6 7 8 9", "1 2 4 5"),
    W("sum", M_NUM, L(3, 3), L(3, 3), L(2, 2), L(1, 1), L(1, 1), L(1, 1), "1 2 3 4 5 6 7 8 9", "12 16 24 28"),
    W("sum", M_NUM, L(3, 3), L(2, 2), L(1, 1), L(2, 2), L(0, 0), L(0, 0), "1 2 3 4 5 6 7 8 9", "20"),
    W("max", M_NUM, L(3, 3), L(2, 2), L(1, 1), L(2, 2), L(0, 0), L(0, 0), "1 2 3 4 5 6 7 8 9", "9"),
    W("min", M_NUM, L(3, 3), L(2, 2), L(1, 1), L(2, 2), L(0, 0), L(0, 0), "1 2 3 4 5 6 7 8 9", "1"),
    W("sum", M_NUM, L(2, 3), L(1, 2), L(1, 1), L(1, 2), L(0, 1), L(0, 0), "1 2 3 4 5 6", "2 4 5 10"),
    W("max", M_NUM, L(2, 3), L(1, 2), L(1, 1), L(1, 2), L(0, 1), L(0, 0), "1 2 3 4 5 6", "2 3 5 6"),
    /* precision, wrap, NaN, zeros */
    W("sum", M_F16, L(3), L(3), L(1), L(1), L(0), L(0), "2048 1 1", "2050"),
    W("sum", M_I8, L(2), L(2), L(1), L(1), L(0), L(0), "100 100", "-56"),
    W("sum", M_U64, L(2), L(2), L(1), L(1), L(0), L(0), "18446744073709551615 3", "2"),
    W("max", M_FLOATS, L(3), L(2), L(1), L(1), L(0), L(0), "1 nan 2", "nan nan"),
    W("min", M_FLOATS, L(3), L(2), L(1), L(1), L(0), L(0), "-0 0 -0", "-0 -0"),
    /* empty input, rank 0 */
    W("sum", M_NUM, L(0), L(1), L(1), L(1), L(0), L(0), "", ""),
    W("sum", M_NUM, L(0), L(1), L(1), L(1), L(1), L(0), "", "0"),
    W("max", M_FLOATS, L(0), L(1), L(1), L(1), L(1), L(0), "", "-inf"),
    W("sum", M_NUM, L0, L0, L0, L0, L0, L0, "7", "7"),
};

static void win_case(const win_row *r, ts_dtype dt)
{
    char what[96];
    snprintf(what, sizeof what, "line %d: reduce_window %s %s", r->line, r->kind, ts_dtype_name(dt));
    tcase c = tc_new(TS_OP_REDUCE_WINDOW);
    ts_attr_set_enum(c.g, c.op, c.a, "kind", r->kind);
    ts_attr_set_ints(c.g, c.op, c.a, "window", r->window.n, r->window.v);
    ts_attr_set_ints(c.g, c.op, c.a, "strides", r->strides.n, r->strides.v);
    ts_attr_set_ints(c.g, c.op, c.a, "dilations", r->dilations.n, r->dilations.v);
    ts_attr_set_ints(c.g, c.op, c.a, "pad_lo", r->lo.n, r->lo.v);
    ts_attr_set_ints(c.g, c.op, c.a, "pad_hi", r->hi.n, r->hi.v);
    run_check(&c, dt, &r->shape, r->in, dt, r->want, what);
    tc_free(&c);
}

/* ==== driver ============================================================== */

#define EACH_DTYPE(rows, fn, seen_op)                                                 \
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {                       \
        seen[seen_op] |= rows[i].mask;                                                \
        for (int dt = 0; dt < TS_DTYPE_COUNT; dt++)                                   \
            if (rows[i].mask & TV_M(dt)) fn(&rows[i], (ts_dtype)dt);                  \
    }

static unsigned seen[TS_OP_COUNT];

static void test_rows(void)
{
    EACH_DTYPE(reds, red_case, reds[i].op);
    EACH_DTYPE(args, arg_case, args[i].op);
    EACH_DTYPE(cums, cum_case, TS_OP_CUMULATIVE);
    EACH_DTYPE(wins, win_case, TS_OP_REDUCE_WINDOW);
}

/* Every op of the family has a kernel and a test row for each dtype it
 * admits. */
static void test_coverage(void)
{
    static const ts_op ops[] = {TS_OP_REDUCE_SUM, TS_OP_REDUCE_PROD, TS_OP_REDUCE_MAX, TS_OP_REDUCE_MIN,
                                TS_OP_ARGMAX, TS_OP_ARGMIN, TS_OP_CUMULATIVE, TS_OP_REDUCE_WINDOW};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const ts_op_info *info = ts_op_get(ops[i]);
        CHECK_MSG(ts_interp_reduce[ops[i]] != NULL, "%s has no kernel", info->name);
        unsigned want = tv_class_mask(info->types);
        CHECK_MSG((seen[ops[i]] & want) == want, "%s: dtypes 0x%x untested", info->name, want & ~seen[ops[i]]);
    }
}

int main(void)
{
    test_rows();
    test_arg_empty();
    test_coverage();
    return check_report();
}
