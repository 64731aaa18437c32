/* test_interp_elementwise.c — the elementwise kernels against hand-computed
 * results, for every dtype each op accepts: wrap-around at the integer
 * limits, u64 above 2^63, division by zero, shift counts out of range,
 * NaN, ±inf, -0.0, and f16/bf16 rounding ties. A row applies to every dtype
 * of its mask; the values are text (see interp_vals.h). */
#include "interp_vals.h"


/* op(a[, b]) == want, element by element, for every dtype in mask. */
typedef struct ew_row {
    ts_op op;
    unsigned mask;
    const char *a, *b, *want;
    int ulps;                  /* 0: exact */
    int line;
} ew_row;

#define U(op, mask, a, want) {TS_OP_##op, mask, a, NULL, want, 0, __LINE__}
#define B(op, mask, a, b, want) {TS_OP_##op, mask, a, b, want, 0, __LINE__}
/* within 2 units of the dtype's precision: the C library's math */
#define UA(op, mask, a, want) {TS_OP_##op, mask, a, NULL, want, 2, __LINE__}
#define BA(op, mask, a, b, want) {TS_OP_##op, mask, a, b, want, 2, __LINE__}

static const ew_row rows[] = {
    /* ---- neg */
    U(NEG, M_SINTS | M_FLOATS, "1 -2 0 100", "-1 2 -0 -100"),
    U(NEG, M_FLOATS, "0 -0 inf -inf 1.5 nan", "-0 0 -inf inf -1.5 nan"),
    U(NEG, M_I8, "-128 127", "-128 -127"),
    U(NEG, M_I16, "-32768", "-32768"),
    U(NEG, M_I32, "-2147483648", "-2147483648"),
    U(NEG, M_I64, "-9223372036854775808 9223372036854775807", "-9223372036854775808 -9223372036854775807"),
    U(NEG, M_U8, "1 0 255", "255 0 1"),
    U(NEG, M_U16, "1", "65535"),
    U(NEG, M_U32, "1", "4294967295"),
    U(NEG, M_U64, "1 9223372036854775808", "18446744073709551615 9223372036854775808"),
    /* ---- abs */
    U(ABS, M_SINTS | M_FLOATS, "-3 3 0", "3 3 0"),
    U(ABS, M_UINTS, "0 3 200", "0 3 200"),
    U(ABS, M_FLOATS, "-0 -inf nan -1.5", "0 inf nan 1.5"),
    U(ABS, M_I8, "-128 -127", "-128 127"),
    U(ABS, M_I16, "-32768", "-32768"),
    U(ABS, M_I32, "-2147483648", "-2147483648"),
    U(ABS, M_I64, "-9223372036854775808", "-9223372036854775808"),
    U(ABS, M_U64, "18446744073709551615", "18446744073709551615"),
    /* ---- sign: ±0 keeps its sign, NaN stays NaN */
    U(SIGN, M_SINTS | M_FLOATS, "-5 0 7", "-1 0 1"),
    U(SIGN, M_UINTS, "0 7 200", "0 1 1"),
    U(SIGN, M_FLOATS, "-0 nan -inf inf 0.001", "-0 nan -1 1 1"),
    U(SIGN, M_I8, "-128 127", "-1 1"),
    U(SIGN, M_I64, "-9223372036854775808", "-1"),
    U(SIGN, M_U64, "18446744073709551615", "1"),
    /* ---- not: logical for bool, bitwise for integers */
    U(NOT, M_BOOL, "0 1", "1 0"),
    U(NOT, M_I8, "0 -1 5 127", "-1 0 -6 -128"),
    U(NOT, M_U8, "0 255 5", "255 0 250"),
    U(NOT, M_I16, "0 -32768", "-1 32767"),
    U(NOT, M_U16, "0 1", "65535 65534"),
    U(NOT, M_I32, "5", "-6"),
    U(NOT, M_U32, "0", "4294967295"),
    U(NOT, M_I64, "0 -9223372036854775808", "-1 9223372036854775807"),
    U(NOT, M_U64, "0 1", "18446744073709551615 18446744073709551614"),
    /* ---- float math: exact special values, then approximate values */
    U(EXP, M_FLOATS, "0 -0 -inf inf nan", "1 1 0 inf nan"),
    UA(EXP, M_FLOATS, "1 -1 2", "2.718281828459045 0.36787944117144233 7.38905609893065"),
    U(EXP, M_F16, "12", "inf"),
    UA(EXP, M_BF16 | M_F32 | M_F64, "12", "162754.79141900392"),
    U(LOG, M_FLOATS, "1 0 -0 inf -1 nan", "0 -inf -inf inf nan nan"),
    UA(LOG, M_FLOATS, "2 10 0.5", "0.6931471805599453 2.302585092994046 -0.6931471805599453"),
    U(SQRT, M_FLOATS, "4 0 -0 inf -1 nan 2.25", "2 0 -0 inf nan nan 1.5"),
    UA(SQRT, M_FLOATS, "2", "1.4142135623730951"),
    U(SIN, M_FLOATS, "0 -0 inf nan", "0 -0 nan nan"),
    UA(SIN, M_FLOATS, "1 0.5 -2", "0.8414709848078965 0.479425538604203 -0.9092974268256817"),
    U(COS, M_FLOATS, "0 -0 inf nan", "1 1 nan nan"),
    UA(COS, M_FLOATS, "1 -0.5 3", "0.5403023058681398 0.8775825618903728 -0.9899924966004454"),
    U(TAN, M_FLOATS, "0 -0 inf nan", "0 -0 nan nan"),
    UA(TAN, M_FLOATS, "1 -0.5", "1.5574077246549023 -0.5463024898437905"),
    U(TANH, M_FLOATS, "0 -0 inf -inf nan 20", "0 -0 1 -1 nan 1"),
    UA(TANH, M_FLOATS, "0.5 -1", "0.46211715726000974 -0.7615941559557649"),
    U(ERF, M_FLOATS, "0 -0 inf -inf nan", "0 -0 1 -1 nan"),
    UA(ERF, M_FLOATS, "0.5 1 -2", "0.5204998778130465 0.8427007929497149 -0.9953222650189527"),
    U(FLOOR, M_FLOATS, "1.5 -1.5 0 -0 2 inf -inf nan -0.25", "1 -2 0 -0 2 inf -inf nan -1"),
    U(FLOOR, M_F64, "4503599627370495.5", "4503599627370495"),
    U(CEIL, M_FLOATS, "1.5 -1.5 0 -0 -0.25 inf nan", "2 -1 0 -0 -0 inf nan"),
    U(ROUND, M_FLOATS, "0.5 1.5 2.5 -0.5 -1.5 -2.5 0.25 0.75 -0 inf nan 3",
      "0 2 2 -0 -2 -2 0 1 -0 inf nan 3"),
    U(ROUND, M_F64, "4503599627370495.5 4503599627370494.5", "4503599627370496 4503599627370494"),

    /* ---- add */
    B(ADD, M_NUM, "1 2 0", "2 3 0", "3 5 0"),
    B(ADD, M_SINTS | M_FLOATS, "-1 5", "-2 -7", "-3 -2"),
    B(ADD, M_I8, "127 -128", "1 -1", "-128 127"),
    B(ADD, M_I16, "32767", "1", "-32768"),
    B(ADD, M_I32, "2147483647", "1", "-2147483648"),
    B(ADD, M_I64, "9223372036854775807 -9223372036854775808", "1 -1", "-9223372036854775808 9223372036854775807"),
    B(ADD, M_U8, "255 200", "1 100", "0 44"),
    B(ADD, M_U16, "65535", "2", "1"),
    B(ADD, M_U32, "4294967295", "1", "0"),
    B(ADD, M_U64, "18446744073709551615 9223372036854775808", "1 9223372036854775808", "0 0"),
    B(ADD, M_FLOATS, "inf inf nan 0 -0 -0", "1 -inf 1 -0 -0 0", "inf nan nan 0 -0 0"),
    /* f16: 2049 and 2051 are ties; 65520 rounds to inf, 65519 does not */
    B(ADD, M_F16, "2048 2050 1 65504 65504", "1 1 0.0009765625 16 15", "2048 2052 1.0009765625 inf 65504"),
    B(ADD, M_BF16, "256 258", "1 1", "256 260"),
    B(ADD, M_F32, "16777216 16777218", "1 1", "16777216 16777220"),
    B(ADD, M_F64, "9007199254740992 0.1", "1 0.2", "9007199254740992 0.30000000000000004"),
    /* ---- sub */
    B(SUB, M_NUM, "5 3", "2 3", "3 0"),
    B(SUB, M_SINTS | M_FLOATS, "-1 2", "4 -3", "-5 5"),
    B(SUB, M_I8, "-128 127", "1 -1", "127 -128"),
    B(SUB, M_I64, "-9223372036854775808", "1", "9223372036854775807"),
    B(SUB, M_U8, "0 3", "1 5", "255 254"),
    B(SUB, M_U16, "0", "1", "65535"),
    B(SUB, M_U32, "0", "1", "4294967295"),
    B(SUB, M_U64, "0", "1", "18446744073709551615"),
    B(SUB, M_FLOATS, "inf 0 0 -0", "inf 0 -0 0", "nan 0 0 -0"),
    /* ---- mul */
    B(MUL, M_NUM, "2 3 0", "3 4 7", "6 12 0"),
    B(MUL, M_SINTS | M_FLOATS, "-2 -3", "3 -4", "-6 12"),
    B(MUL, M_I8, "16 -128 64", "16 -1 -3", "0 -128 64"),
    B(MUL, M_I16, "256 -32768", "256 -1", "0 -32768"),
    B(MUL, M_I32, "65536 -2147483648", "65536 -1", "0 -2147483648"),
    B(MUL, M_I64, "4294967296 -9223372036854775808 3037000500", "4294967296 -1 3037000500",
      "0 -9223372036854775808 -9223372036709301616"),
    B(MUL, M_U8, "16 255", "16 255", "0 1"),
    B(MUL, M_U64, "4294967296 18446744073709551615", "4294967296 18446744073709551615", "0 1"),
    B(MUL, M_FLOATS, "inf 0 -0 -2 nan", "0 -1 -0 0 1", "nan -0 0 -0 nan"),
    B(MUL, M_F16, "1.0009765625 300 256", "1.0009765625 300 256", "1.001953125 inf inf"),
    B(MUL, M_F32, "3e38", "10", "inf"),
    B(MUL, M_F64, "1e300", "1e10", "inf"),
    /* ---- div: integers truncate, x/0 = 0, INT_MIN/-1 wraps */
    B(DIV, M_INTS, "6 7 0 9", "3 2 5 10", "2 3 0 0"),
    B(DIV, M_FLOATS, "6 7 1", "3 2 4", "2 3.5 0.25"),
    B(DIV, M_SINTS, "-7 7 -7 5 -5 0", "2 -2 -2 0 0 0", "-3 -3 3 0 0 0"),
    B(DIV, M_UINTS, "5 0", "0 0", "0 0"),
    B(DIV, M_I8, "-128 -128", "-1 2", "-128 -64"),
    B(DIV, M_I16, "-32768", "-1", "-32768"),
    B(DIV, M_I32, "-2147483648", "-1", "-2147483648"),
    B(DIV, M_I64, "-9223372036854775808 -9223372036854775808", "-1 1", "-9223372036854775808 -9223372036854775808"),
    B(DIV, M_U8, "255", "16", "15"),
    B(DIV, M_U64, "18446744073709551615 18446744073709551615", "2 18446744073709551615", "9223372036854775807 1"),
    B(DIV, M_FLOATS, "1 -1 0 inf nan -1", "0 0 0 inf 1 -0", "inf -inf nan nan nan inf"),
    B(DIV, M_F16, "1", "3", "0.333251953125"),
    B(DIV, M_BF16, "1", "3", "0.333984375"),
    B(DIV, M_F32, "1", "3", "0.3333333432674408"),
    B(DIV, M_F64, "1", "3", "0.3333333333333333"),
    /* ---- rem: sign of the dividend, x%0 = x, INT_MIN%-1 = 0 */
    B(REM, M_INTS, "7 9 0", "3 3 5", "1 0 0"),
    B(REM, M_SINTS, "-7 7 -7 5 -5", "3 -3 -3 0 0", "-1 1 -1 5 -5"),
    B(REM, M_UINTS, "5", "0", "5"),
    B(REM, M_I8, "-128 -128", "-1 3", "0 -2"),
    B(REM, M_I16, "-32768", "-1", "0"),
    B(REM, M_I32, "-2147483648", "-1", "0"),
    B(REM, M_I64, "-9223372036854775808", "-1", "0"),
    B(REM, M_U8, "255", "16", "15"),
    B(REM, M_U64, "18446744073709551615", "10", "5"),
    B(REM, M_FLOATS, "7 -7 7 5.5 -0 1 inf nan 1", "3 3 -3 2 1 0 1 1 inf", "1 -1 1 1.5 -0 nan nan nan 1"),
    /* ---- pow: integer wrap; b<0 leaves 0 except for |a| = 1 */
    B(POW, M_NUM, "2 3 5 0 1", "3 2 0 0 5", "8 9 1 1 1"),
    B(POW, M_SINTS, "-2 -2 1 -1 -1 2 0 -3", "3 2 -5 -3 -4 -1 -2 -1", "-8 4 1 -1 1 0 0 0"),
    B(POW, M_I8, "2 3 2 -2", "7 5 8 7", "-128 -13 0 -128"),
    B(POW, M_I64, "2 3 2", "63 40 64", "-9223372036854775808 -6289078614652622815 0"),
    B(POW, M_U8, "2 3 255 255", "8 5 255 2", "0 243 255 1"),
    B(POW, M_U64, "2 3", "63 41", "9223372036854775808 18026252303461234787"),
    B(POW, M_FLOATS, "2 4 0 -2 nan 1 -1 2 -8", "-1 0.5 -1 3 0 nan inf 10 0.5", "0.5 2 inf -8 1 1 1 1024 nan"),
    B(POW, M_F16, "2", "16", "inf"),
    /* ---- max/min: NaN wins; max(-0, 0) = 0, min(-0, 0) = -0 */
    B(MAX, M_NUM, "1 5 3", "4 2 3", "4 5 3"),
    B(MAX, M_SINTS | M_FLOATS, "-1 -5", "-2 3", "-1 3"),
    B(MAX, M_I8, "-128", "127", "127"),
    B(MAX, M_I64, "-9223372036854775808", "9223372036854775807", "9223372036854775807"),
    B(MAX, M_U8, "200", "100", "200"),
    B(MAX, M_U64, "9223372036854775808 18446744073709551615", "1 9223372036854775807",
      "9223372036854775808 18446744073709551615"),
    B(MAX, M_FLOATS, "nan 1 -0 0 -inf inf", "1 nan 0 -0 -1 nan", "nan nan 0 0 -1 nan"),
    B(MIN, M_NUM, "1 5 3", "4 2 3", "1 2 3"),
    B(MIN, M_I8, "-128", "127", "-128"),
    B(MIN, M_U8, "200", "100", "100"),
    B(MIN, M_U64, "9223372036854775808 18446744073709551615", "1 9223372036854775809",
      "1 9223372036854775809"),
    B(MIN, M_FLOATS, "nan 1 -0 0 -inf", "1 nan 0 -0 -1", "nan nan -0 -0 -inf"),
    /* ---- atan2(y, x) */
    B(ATAN2, M_FLOATS, "0 -0 0 -0 nan 1 1", "1 1 0 0 1 nan inf", "0 -0 0 -0 nan nan 0"),
    BA(ATAN2, M_FLOATS, "1 1 -1 0 -0 1", "0 1 -1 -1 -1 -inf",
       "1.5707963267948966 0.7853981633974483 -2.356194490192345 3.141592653589793 -3.141592653589793 "
       "3.141592653589793"),

    /* ---- and/or/xor: logical for bool, bitwise for integers */
    B(AND, M_BOOL, "0 0 1 1", "0 1 0 1", "0 0 0 1"),
    B(OR, M_BOOL, "0 0 1 1", "0 1 0 1", "0 1 1 1"),
    B(XOR, M_BOOL, "0 0 1 1", "0 1 0 1", "0 1 1 0"),
    B(AND, M_INTS, "12 10", "10 7", "8 2"),
    B(OR, M_INTS, "12 10", "10 7", "14 15"),
    B(XOR, M_INTS, "12 10", "10 7", "6 13"),
    B(AND, M_SINTS, "-1 -8", "5 -3", "5 -8"),
    B(OR, M_SINTS, "-1 -8", "5 -3", "-1 -3"),
    B(XOR, M_SINTS, "-1 -8", "5 -3", "-6 5"),
    B(AND, M_U64, "18446744073709551615", "9223372036854775808", "9223372036854775808"),
    B(OR, M_U64, "0", "9223372036854775808", "9223372036854775808"),
    B(XOR, M_U64, "18446744073709551615", "1", "18446744073709551614"),
    /* ---- shl: counts outside [0, bits) give 0 */
    B(SHL, M_INTS, "1 3 5", "0 2 1", "1 12 10"),
    B(SHL, M_I8, "1 1 1 1 -1", "7 8 -1 100 1", "-128 0 0 0 -2"),
    B(SHL, M_U8, "1 255 1 1", "7 1 8 255", "128 254 0 0"),
    B(SHL, M_I16, "1 1", "15 16", "-32768 0"),
    B(SHL, M_U16, "1 3", "15 16", "32768 0"),
    B(SHL, M_I32, "1 1 1", "31 32 -32", "-2147483648 0 0"),
    B(SHL, M_U32, "3 1", "31 32", "2147483648 0"),
    B(SHL, M_I64, "1 1 1 -1", "63 64 -1 63", "-9223372036854775808 0 0 -9223372036854775808"),
    B(SHL, M_U64, "1 1 3", "63 64 18446744073709551615", "9223372036854775808 0 0"),
    /* ---- shr: arithmetic for signed (out of range fills with the sign) */
    B(SHR, M_INTS, "8 12 5", "1 2 0", "4 3 5"),
    B(SHR, M_SINTS, "-8 -1 -7", "1 5 1", "-4 -1 -4"),
    B(SHR, M_I8, "-128 -128 -128 127 127 -1", "7 8 -1 7 8 100", "-1 -1 -1 0 0 -1"),
    B(SHR, M_U8, "128 255 255", "7 8 255", "1 0 0"),
    B(SHR, M_I16, "-32768 32767 -2", "15 16 -5", "-1 0 -1"),
    B(SHR, M_U16, "32768 65535", "15 16", "1 0"),
    B(SHR, M_I32, "-2147483648 2147483647", "31 32", "-1 0"),
    B(SHR, M_U32, "2147483648 4294967295", "31 32", "1 0"),
    B(SHR, M_I64, "-9223372036854775808 9223372036854775807 -9223372036854775808", "63 64 62", "-1 0 -2"),
    B(SHR, M_U64, "9223372036854775808 18446744073709551615 18446744073709551615", "63 64 1",
      "1 0 9223372036854775807"),

    /* ---- comparisons (bool results) */
    B(EQ, M_ALL, "0 1 1 0", "0 1 0 1", "1 1 0 0"),
    B(NE, M_ALL, "0 1 1 0", "0 1 0 1", "0 0 1 1"),
    B(LT, M_ALL, "0 1 1 0", "0 1 0 1", "0 0 0 1"),
    B(LE, M_ALL, "0 1 1 0", "0 1 0 1", "1 1 0 1"),
    B(EQ, M_NUM, "1 2 3", "2 2 1", "0 1 0"),
    B(NE, M_NUM, "1 2 3", "2 2 1", "1 0 1"),
    B(LT, M_NUM, "1 2 3", "2 2 1", "1 0 0"),
    B(LE, M_NUM, "1 2 3", "2 2 1", "1 1 0"),
    B(LT, M_SINTS | M_FLOATS, "-1 -2", "1 -3", "1 0"),
    B(LE, M_SINTS | M_FLOATS, "-1 -2 -2", "1 -3 -2", "1 0 1"),
    B(LT, M_U8, "200 100", "100 200", "0 1"),
    /* exact 64-bit comparison: through double these would all be equal */
    B(EQ, M_U64, "18446744073709551615 9223372036854775808 18446744073709551614",
      "18446744073709551614 9223372036854775809 18446744073709551614", "0 0 1"),
    B(NE, M_U64, "18446744073709551615 9223372036854775808 18446744073709551614",
      "18446744073709551614 9223372036854775809 18446744073709551614", "1 1 0"),
    B(LT, M_U64, "18446744073709551615 9223372036854775808 18446744073709551614",
      "18446744073709551614 9223372036854775809 18446744073709551614", "0 1 0"),
    B(LE, M_U64, "18446744073709551615 9223372036854775808 18446744073709551614",
      "18446744073709551614 9223372036854775809 18446744073709551614", "0 1 1"),
    B(EQ, M_I64, "9223372036854775807 -9223372036854775808", "9223372036854775806 -9223372036854775807", "0 0"),
    B(LT, M_I64, "9223372036854775807 -9223372036854775808", "9223372036854775806 -9223372036854775807", "0 1"),
    B(LE, M_I64, "9223372036854775807 -9223372036854775808", "9223372036854775806 -9223372036854775807", "0 1"),
    B(NE, M_I64, "9223372036854775807 -9223372036854775808", "9223372036854775806 -9223372036854775807", "1 1"),
    B(EQ, M_FLOATS, "nan nan 1 -0 inf -inf", "nan 1 nan 0 inf inf", "0 0 0 1 1 0"),
    B(NE, M_FLOATS, "nan nan 1 -0 inf -inf", "nan 1 nan 0 inf inf", "1 1 1 0 0 1"),
    B(LT, M_FLOATS, "nan nan 1 -0 inf -inf", "nan 1 nan 0 inf inf", "0 0 0 0 0 1"),
    B(LE, M_FLOATS, "nan nan 1 -0 inf -inf", "nan 1 nan 0 inf inf", "0 0 0 1 1 1"),
};

static const char *opname(ts_op op) { return ts_op_get(op)->name; }

/* Run one row on dtype dt. */
static void run_row(const ew_row *r, ts_dtype dt)
{
    int n = tv_count(r->a);
    int n_in = r->b ? 2 : 1;
    char what[96];
    snprintf(what, sizeof what, "line %d: %s %s", r->line, opname(r->op), ts_dtype_name(dt));
    CHECK_MSG(!r->b || tv_count(r->b) == n, "%s: operand lengths differ", what);
    tcase c = tc_new(r->op);
    ts_tensor *x[2] = {tv_tensor(dt, 1, SHAPE(n), r->a), r->b ? tv_tensor(dt, 1, SHAPE(n), r->b) : NULL};
    for (int i = 0; i < n_in; i++) tc_param(&c, dt, 1, SHAPE(n));
    ts_tensor *y = NULL;
    ts_status s = tc_run(&c, x, 1, &y);
    CHECK_MSG(s == TS_OK, "%s: %s", what, c.err.msg);
    bool cmp = ts_op_get(r->op)->flags & TS_OPF_CMP;
    if (s == TS_OK) tv_check(y, cmp ? TS_DTYPE_BOOL : dt, r->want, r->ulps, what);
    ts_tensor_release(y);
    tc_release(n_in, x);
    tc_free(&c);
}

static void test_rows(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (int dt = 0; dt < TS_DTYPE_COUNT; dt++)
            if (rows[i].mask & TV_M(dt)) run_row(&rows[i], (ts_dtype)dt);
}

/* ---- select ---------------------------------------------------------------- */

static void select_case(ts_dtype dt, const char *p, const char *a, const char *b, const char *want, int line)
{
    int n = tv_count(p);
    char what[96];
    snprintf(what, sizeof what, "line %d: select %s", line, ts_dtype_name(dt));
    tcase c = tc_new(TS_OP_SELECT);
    tc_param(&c, TS_DTYPE_BOOL, 1, SHAPE(n));
    tc_param(&c, dt, 1, SHAPE(n));
    tc_param(&c, dt, 1, SHAPE(n));
    ts_tensor *x[3] = {tv_tensor(TS_DTYPE_BOOL, 1, SHAPE(n), p), tv_tensor(dt, 1, SHAPE(n), a),
                       tv_tensor(dt, 1, SHAPE(n), b)};
    ts_tensor *y = NULL;
    ts_status s = tc_run(&c, x, 1, &y);
    CHECK_MSG(s == TS_OK, "%s: %s", what, c.err.msg);
    if (s == TS_OK) tv_check(y, dt, want, 0, what);
    ts_tensor_release(y);
    tc_release(3, x);
    tc_free(&c);
}

static void test_select(void)
{
    for (int dt = 0; dt < TS_DTYPE_COUNT; dt++) {
        if (dt == TS_DTYPE_BOOL) select_case(dt, "1 0 1 0", "1 1 0 0", "0 0 1 1", "1 0 0 1", __LINE__);
        else select_case(dt, "1 0 1 0", "1 2 3 4", "5 6 7 0", "1 6 3 0", __LINE__);
    }
    select_case(TS_DTYPE_F32, "1 0 0", "nan -0 1", "1 2 -0", "nan 2 -0", __LINE__);
    select_case(TS_DTYPE_U64, "0 1", "1 18446744073709551615", "9223372036854775809 0",
                "9223372036854775809 18446744073709551615", __LINE__);
    select_case(TS_DTYPE_F16, "1", "65504", "0", "65504", __LINE__);
}

/* ---- cast ------------------------------------------------------------------ */

typedef struct cast_row {
    unsigned from, to;
    const char *in, *want;
    int line;
} cast_row;

#define C(from, to, in, want) {from, to, in, want, __LINE__}

static const cast_row casts[] = {
    C(M_ALL, M_ALL, "0 1", "0 1"),
    C(M_NUM, M_NUM, "5 100", "5 100"),
    C(M_SINTS | M_FLOATS, M_SINTS | M_FLOATS, "-1 -100", "-1 -100"),
    /* to bool: x != 0, NaN is true; never a truncation to the low byte */
    C(M_NUM, M_BOOL, "0 2 16", "0 1 1"),
    C(M_FLOATS, M_BOOL, "nan -0 0.001 -inf", "1 0 1 1"),
    C(M_I16 | M_U16 | M_I32 | M_U32 | M_I64 | M_U64, M_BOOL, "256", "1"),
    C(M_I32 | M_U32 | M_I64 | M_U64, M_BOOL, "65536", "1"),
    C(M_U64, M_BOOL, "9223372036854775808 4294967296", "1 1"),
    C(M_I64, M_BOOL, "-9223372036854775808", "1"),
    /* float -> int: truncate toward zero, saturate, NaN -> 0 */
    C(M_FLOATS, M_SINTS, "1.75 -1.75 0.5 -0.5 nan -0", "1 -1 0 0 0 0"),
    C(M_FLOATS, M_UINTS, "1.75 -1.75 nan -0 -inf", "1 0 0 0 0"),
    C(M_FLOATS, M_I8, "inf -inf 300 -300", "127 -128 127 -128"),
    C(M_FLOATS, M_U8, "inf -inf 300 255.5", "255 0 255 255"),
    C(M_FLOATS, M_I16, "inf -inf 40000 -40000", "32767 -32768 32767 -32768"),
    C(M_FLOATS, M_U16, "inf 70000 -5", "65535 65535 0"),
    C(M_FLOATS, M_I32, "inf -inf nan", "2147483647 -2147483648 0"),
    C(M_F32 | M_F64, M_I32, "3e9 -3e9", "2147483647 -2147483648"),
    C(M_F64, M_I32, "2147483647.9 -2147483648.9", "2147483647 -2147483648"),
    C(M_FLOATS, M_U32, "inf -1", "4294967295 0"),
    C(M_F64, M_U32, "4294967295.5 4294967296", "4294967295 4294967295"),
    C(M_FLOATS, M_I64, "inf -inf nan 1e19 -1e19", "9223372036854775807 -9223372036854775808 0 9223372036854775807 "
                                              "-9223372036854775808"),
    C(M_F64, M_I64, "9223372036854774784", "9223372036854774784"),
    C(M_FLOATS, M_U64, "inf -inf nan", "18446744073709551615 0 0"),
    C(M_F64, M_U64, "1e19 1.8446744073709552e19", "10000000000000000000 18446744073709551615"),
    C(M_F32, M_U64, "9223372036854775808", "9223372036854775808"),
    /* int -> float: nearest, ties to even, one rounding */
    C(M_I64, M_F64, "9007199254740993 9007199254740995", "9007199254740992 9007199254740996"),
    C(M_U64, M_F64, "18446744073709551615", "18446744073709551616"),
    C(M_I32 | M_I64 | M_U32 | M_U64, M_F32, "16777217 16777219", "16777216 16777220"),
    C(M_I64 | M_U64, M_F32, "1152921573326323713", "1152921642045800448"),
    C(M_I64 | M_U64, M_BF16, "1157425104234217473", "1161928703861587968"),
    C(M_U64 | M_I64 | M_U32 | M_I32, M_F16, "65519 65520 100000", "65504 inf inf"),
    C(M_I16 | M_I32 | M_I64, M_F16, "2049 2051 -2051", "2048 2052 -2052"),
    C(M_I8, M_F16 | M_BF16, "-128", "-128"),
    C(M_U16 | M_I32, M_BF16, "257 259", "256 260"),
    C(M_I64, M_F16, "-9223372036854775808", "-inf"),
    C(M_I64, M_FLOATS, "-9223372036854775808", "-9223372036854775808"),
    C(M_U64, M_F32 | M_BF16, "18446744073709551615", "18446744073709551616"),
    /* int -> int: two's complement truncation */
    C(M_I64, M_I8, "300 -129 255 256", "44 127 -1 0"),
    C(M_I64, M_U8, "-1 256 257", "255 0 1"),
    C(M_U64, M_I64, "18446744073709551615 9223372036854775808", "-1 -9223372036854775808"),
    C(M_I64, M_U64, "-1", "18446744073709551615"),
    C(M_U64, M_I32, "4294967297", "1"),
    C(M_I32, M_U16, "-2", "65534"),
    C(M_I8, M_U64, "-1", "18446744073709551615"),
    C(M_I8 | M_I16 | M_I32, M_I64, "-128", "-128"),
    C(M_U8, M_I8, "200", "-56"),
    C(M_I64, M_I32, "9223372036854775807", "-1"),
    C(M_U64, M_U64, "18446744073709551615", "18446744073709551615"),
    C(M_I64, M_U32, "4294967296", "0"),
    C(M_U32, M_I64, "4294967295", "4294967295"),
    /* float -> float: one rounding to nearest even */
    C(M_F64, M_F16, "0x1.0020000001p+0 0x1.002p+0 0x1.006p+0", "0x1.004p+0 1 0x1.008p+0"),
    C(M_F32 | M_F64, M_F16, "0x1.002p+0 0x1.006p+0 65520 65519 1e-8 -1e-8",
      "1 0x1.008p+0 inf 65504 0 -0"),
    C(M_F32 | M_F64, M_F16, "0x1p-24 0x1.8p-24 0x1p-25 0x1.000002p-25", "0x1p-24 0x1p-23 0 0x1p-24"),
    C(M_F32 | M_F64, M_BF16, "0x1.01p+0 0x1.03p+0 0x1.0101p+0", "1 0x1.04p+0 0x1.02p+0"),
    C(M_F64, M_BF16, "0x1.0100000001p+0", "0x1.02p+0"),
    C(M_F16, M_F32 | M_F64, "0x1.ffcp+15 0x1p-24 -0 inf", "0x1.ffcp+15 0x1p-24 -0 inf"),
    C(M_F16, M_BF16, "65504 0x1p-24", "65536 0x1p-24"),
    C(M_BF16, M_F16, "0x1p+16 0x1p-30 1.5", "inf 0 1.5"),
    C(M_F64, M_F32, "0x1.000001p+0 0x1.0000011p+0 1e39 1e-46", "1 0x1.000002p+0 inf 0"),
    C(M_FLOATS, M_FLOATS, "nan -0 inf -inf 0.5 -2.25", "nan -0 inf -inf 0.5 -2.25"),
};

static void cast_case(const cast_row *r, ts_dtype from, ts_dtype to)
{
    int n = tv_count(r->in);
    char what[96];
    snprintf(what, sizeof what, "line %d: cast %s -> %s", r->line, ts_dtype_name(from), ts_dtype_name(to));
    tcase c = tc_new(TS_OP_CAST);
    ts_attr_set_dtype(c.g, c.op, c.a, "dtype", to);
    tc_param(&c, from, 1, SHAPE(n));
    ts_tensor *x = tv_tensor(from, 1, SHAPE(n), r->in);
    ts_tensor *y = NULL;
    ts_status s = tc_run(&c, &x, 1, &y);
    CHECK_MSG(s == TS_OK, "%s: %s", what, c.err.msg);
    if (s == TS_OK) tv_check(y, to, r->want, 0, what);
    ts_tensor_release(y);
    ts_tensor_release(x);
    tc_free(&c);
}

static void test_cast(void)
{
    for (size_t i = 0; i < sizeof casts / sizeof casts[0]; i++)
        for (int from = 0; from < TS_DTYPE_COUNT; from++)
            for (int to = 0; to < TS_DTYPE_COUNT; to++)
                if ((casts[i].from & TV_M(from)) && (casts[i].to & TV_M(to)))
                    cast_case(&casts[i], (ts_dtype)from, (ts_dtype)to);
}

/* ---- bitcast --------------------------------------------------------------- */

static void bitcast_case(ts_dtype from, ts_dtype to, const char *in, const char *want, int line)
{
    cast_row r = {0, 0, in, want, line};
    int n = tv_count(in);
    char what[96];
    snprintf(what, sizeof what, "line %d: bitcast %s -> %s", r.line, ts_dtype_name(from), ts_dtype_name(to));
    tcase c = tc_new(TS_OP_BITCAST);
    ts_attr_set_dtype(c.g, c.op, c.a, "dtype", to);
    tc_param(&c, from, 1, SHAPE(n));
    ts_tensor *x = tv_tensor(from, 1, SHAPE(n), in);
    ts_tensor *y = NULL;
    ts_status s = tc_run(&c, &x, 1, &y);
    CHECK_MSG(s == TS_OK, "%s: %s", what, c.err.msg);
    if (s == TS_OK) tv_check(y, to, want, 0, what);
    ts_tensor_release(y);
    ts_tensor_release(x);
    tc_free(&c);
}

static void test_bitcast(void)
{
    bitcast_case(TS_DTYPE_F32, TS_DTYPE_I32, "1 -2", "1065353216 -1073741824", __LINE__);
    bitcast_case(TS_DTYPE_F32, TS_DTYPE_U32, "-0 inf", "2147483648 2139095040", __LINE__);
    bitcast_case(TS_DTYPE_I32, TS_DTYPE_F32, "1065353216 0", "1 0", __LINE__);
    bitcast_case(TS_DTYPE_U32, TS_DTYPE_F32, "2139095040 2143289344", "inf nan", __LINE__);
    bitcast_case(TS_DTYPE_U16, TS_DTYPE_F16, "15360 31744 1", "1 inf 0x1p-24", __LINE__);
    bitcast_case(TS_DTYPE_F16, TS_DTYPE_I16, "-2 65504", "-16384 31743", __LINE__);
    bitcast_case(TS_DTYPE_BF16, TS_DTYPE_U16, "1 -1", "16256 49024", __LINE__);
    bitcast_case(TS_DTYPE_F16, TS_DTYPE_BF16, "1", "0.0078125", __LINE__);
    bitcast_case(TS_DTYPE_F64, TS_DTYPE_U64, "1 -0", "4607182418800017408 9223372036854775808", __LINE__);
    bitcast_case(TS_DTYPE_I64, TS_DTYPE_F64, "-9223372036854775808 4607182418800017408", "-0 1", __LINE__);
    bitcast_case(TS_DTYPE_U8, TS_DTYPE_I8, "255 128 127", "-1 -128 127", __LINE__);
    bitcast_case(TS_DTYPE_I8, TS_DTYPE_U8, "-128 -1", "128 255", __LINE__);
    bitcast_case(TS_DTYPE_U64, TS_DTYPE_I64, "18446744073709551615", "-1", __LINE__);
    bitcast_case(TS_DTYPE_I16, TS_DTYPE_U16, "-1", "65535", __LINE__);
    bitcast_case(TS_DTYPE_F32, TS_DTYPE_F32, "nan -0", "nan -0", __LINE__);
}

/* ---- shapes other than 1-D ------------------------------------------------ */

static void test_shapes(void)
{
    /* rank 0 */
    tcase c = tc_new(TS_OP_ADD);
    tc_param(&c, TS_DTYPE_I32, 0, NULL);
    tc_param(&c, TS_DTYPE_I32, 0, NULL);
    ts_tensor *x[2] = {tv_tensor(TS_DTYPE_I32, 0, NULL, "7"), tv_tensor(TS_DTYPE_I32, 0, NULL, "-9")};
    ts_tensor *y = NULL;
    CHECK(tc_run(&c, x, 1, &y) == TS_OK);
    tv_check(y, TS_DTYPE_I32, "-2", 0, "rank-0 add");
    CHECK(y && y->rank == 0);
    ts_tensor_release(y);
    tc_release(2, x);
    tc_free(&c);

    /* empty, rank 2 */
    c = tc_new(TS_OP_MUL);
    tc_param(&c, TS_DTYPE_F32, 2, SHAPE(3, 0));
    tc_param(&c, TS_DTYPE_F32, 2, SHAPE(3, 0));
    x[0] = tv_tensor(TS_DTYPE_F32, 2, SHAPE(3, 0), "");
    x[1] = tv_tensor(TS_DTYPE_F32, 2, SHAPE(3, 0), "");
    CHECK(tc_run(&c, x, 1, &y) == TS_OK);
    CHECK(y && y->numel == 0 && y->rank == 2 && y->shape[0] == 3);
    ts_tensor_release(y);
    tc_release(2, x);
    tc_free(&c);

    /* rank 3, row-major */
    c = tc_new(TS_OP_SUB);
    tc_param(&c, TS_DTYPE_I16, 3, SHAPE(2, 1, 2));
    tc_param(&c, TS_DTYPE_I16, 3, SHAPE(2, 1, 2));
    x[0] = tv_tensor(TS_DTYPE_I16, 3, SHAPE(2, 1, 2), "10 20 30 40");
    x[1] = tv_tensor(TS_DTYPE_I16, 3, SHAPE(2, 1, 2), "1 2 3 4");
    CHECK(tc_run(&c, x, 1, &y) == TS_OK);
    tv_check(y, TS_DTYPE_I16, "9 18 27 36", 0, "rank-3 sub");
    ts_tensor_release(y);
    tc_release(2, x);
    tc_free(&c);
}

/* ---- coverage: every kernel slot filled, every admitted dtype tested -------- */

static void test_coverage(void)
{
    unsigned seen[TS_OP_COUNT] = {0};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) seen[rows[i].op] |= rows[i].mask;
    seen[TS_OP_SELECT] = seen[TS_OP_CAST] = seen[TS_OP_BITCAST] = TV_ALL;  /* own tests */
    for (int op = 0; op < TS_OP_COUNT; op++) {
        const ts_op_info *info = ts_op_get((ts_op)op);
        if (!(info->flags & TS_OPF_EW)) continue;
        CHECK_MSG(ts_interp_elementwise[op] != NULL, "%s has no elementwise kernel", info->name);
        unsigned want = tv_class_mask(info->types);
        CHECK_MSG((seen[op] & want) == want, "%s: dtypes 0x%x untested", info->name, want & ~seen[op]);
    }
}

int main(void)
{
    test_rows();
    test_select();
    test_cast();
    test_bitcast();
    test_shapes();
    test_coverage();
    return check_report();
}
