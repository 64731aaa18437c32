/* ops_elementwise.c — ONNX operators of the elementwise family, assembled
 * from primitives: arithmetic, math functions, activations, comparisons and
 * logic, casts. Binary operators broadcast numpy-style through the builder.
 *
 * Integer Add/Sub/Mul/Div/Max/Min, Cast and Identity also carry shape
 * values (onnx.h): when their operands' contents are known as dims, the
 * result's dims are recorded too, so shape arithmetic on a dynamic axis
 * stays symbolic.
 *
 * Opsets before 6 are served too: their `consumed_inputs` attribute was an
 * in-place hint with no effect on the result, so it is ignored. */
#include "frontend/onnx/ops_util.h"

#include <math.h>
#include <string.h>

/* Spelled out: M_PI and friends are POSIX, not C11. */
#define LN2 0.69314718055994530942
#define SQRT1_2 0.70710678118654752440
#define SQRT_2_OVER_PI 0.79788456080286535588

/* ==== helpers ============================================================= */

static ts_value *un(onnx_node *n, ts_op op, ts_value *x) { return ts_b_unary(onnx_b(n), op, x); }

static ts_value *bin(onnx_node *n, ts_op op, ts_value *x, ts_value *y)
{
    return ts_b_binary(onnx_b(n), op, x, y);
}

static ts_value *sel(onnx_node *n, ts_value *p, ts_value *x, ts_value *y)
{
    return ts_b_select(onnx_b(n), p, x, y);
}

/* A scalar constant of like's dtype (NULL after an earlier error). */
static ts_value *k(onnx_node *n, ts_value *like, double v)
{
    return like ? ts_b_scalar(onnx_b(n), like->type.dtype, v) : NULL;
}

static ts_value *cast(onnx_node *n, ts_value *x, ts_dtype dt)
{
    if (x && x->type.dtype == dt) return x;
    return ts_b_cast(onnx_b(n), x, dt);
}

/* Set the node's only output and report the builder's status. */
static ts_status out1(onnx_node *n, ts_value *y)
{
    n->out[0] = y;
    return onnx_status(n);
}

static ts_value *x0(onnx_node *n) { return onnx_input(n, 0); }

static bool is_float(ts_value *x) { return x && ts_dtype_is_float(x->type.dtype); }

static bool is_unsigned(ts_value *x)
{
    return x && ts_dtype_is_int(x->type.dtype) && !ts_dtype_is_signed(x->type.dtype);
}

/* log(1 + u) without losing u's low bits when u is small: log(w) corrected
 * by the rounding error of w = 1 + u. Huge, infinite or NaN u take log(w)
 * as it is (the correction would be inf/inf there). */
static ts_value *log1p_(onnx_node *n, ts_value *u)
{
    ts_value *w = bin(n, TS_OP_ADD, u, k(n, u, 1));
    ts_value *lw = un(n, TS_OP_LOG, w);
    ts_value *err = bin(n, TS_OP_SUB, bin(n, TS_OP_SUB, w, k(n, u, 1)), u);
    ts_value *fixed = bin(n, TS_OP_SUB, lw, bin(n, TS_OP_DIV, err, w));
    ts_value *small = bin(n, TS_OP_LT, un(n, TS_OP_ABS, u), k(n, u, 1e4));
    return sel(n, small, fixed, lw);
}

/* exp(x) - 1 without the cancellation near 0 (Kahan): (u-1) * x / log(u).
 * Only used where x <= 0 matters (the other side is selected away). */
static ts_value *expm1_(onnx_node *n, ts_value *x)
{
    ts_value *u = un(n, TS_OP_EXP, x);
    ts_value *um1 = bin(n, TS_OP_SUB, u, k(n, x, 1));
    ts_value *q = bin(n, TS_OP_MUL, um1, bin(n, TS_OP_DIV, x, un(n, TS_OP_LOG, u)));
    ts_value *r = sel(n, bin(n, TS_OP_EQ, um1, k(n, x, -1)), um1, q);
    return sel(n, bin(n, TS_OP_EQ, u, k(n, x, 1)), x, r);
}

/* x + c[0]*x^3 + c[1]*x^5 + ... (an odd Taylor series), for the
 * small-argument branch of functions whose closed form cancels. The
 * correction is added to x last, so its rounding stays small. */
static ts_value *odd_poly(onnx_node *n, ts_value *x, int nc, const double *c)
{
    ts_value *x2 = bin(n, TS_OP_MUL, x, x);
    ts_value *acc = k(n, x, c[nc - 1]);
    for (int i = nc - 2; i >= 0; i--) acc = bin(n, TS_OP_ADD, bin(n, TS_OP_MUL, acc, x2), k(n, x, c[i]));
    return bin(n, TS_OP_ADD, x, bin(n, TS_OP_MUL, bin(n, TS_OP_MUL, acc, x2), x));
}

typedef ts_value *(*ew_fn)(onnx_node *n, ts_value *x);

/* fn(x), computed in f32 when x is f16 or bf16 and rounded once at the
 * end: a formula of many primitives rounded to half precision after each
 * would be several ulps off (the ONNX reference rounds once). */
static ts_value *in_f32(onnx_node *n, ts_value *x, ew_fn fn)
{
    if (!x) return NULL;
    ts_dtype dt = x->type.dtype;
    if (dt != TS_DTYPE_F16 && dt != TS_DTYPE_BF16) return fn(n, x);
    return cast(n, fn(n, cast(n, x, TS_DTYPE_F32)), dt);
}

/* The node's result: fn of input 0, via in_f32. */
static ts_status unary_f32(onnx_node *n, ew_fn fn) { return out1(n, in_f32(n, x0(n), fn)); }

/* x when |x| < lim, else big. NaN takes big (so NaN stays NaN there). */
static ts_value *if_small(onnx_node *n, ts_value *x, double lim, ts_value *small, ts_value *big)
{
    return sel(n, bin(n, TS_OP_LT, un(n, TS_OP_ABS, x), k(n, x, lim)), small, big);
}

/* clamp(x) to [lo, hi] where given (NULL = no bound). */
static ts_value *clamp(onnx_node *n, ts_value *x, ts_value *lo, ts_value *hi)
{
    if (lo) x = bin(n, TS_OP_MAX, x, lo);
    if (hi) x = bin(n, TS_OP_MIN, x, hi);
    return x;
}

/* Input 1 of a binary operator. Before opset 7, B broadcast onto A only
 * with broadcast=1, its dims aligned at `axis` (absent: the trailing dims,
 * as numpy does); B reshaped to A's rank with 1s around its dims turns
 * that into numpy broadcasting. */
static ts_value *rhs(onnx_node *n)
{
    ts_value *a = onnx_input(n, 0), *b = onnx_input(n, 1);
    if (n->opset >= 7 || !a || !b || onnx_attr_int(n, "broadcast", 0) == 0 || !onnx_has_attr(n, "axis"))
        return b;
    int ra = a->type.rank, rb = b->type.rank;
    int64_t axis;
    if (onnx_axis(n, onnx_attr_int(n, "axis", 0), ra, &axis) != TS_OK) return NULL;
    if (axis + rb > ra) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "B (rank %d) does not fit into A (rank %d) at axis %lld", rb, ra,
                  (long long)axis);
        return NULL;
    }
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0; i < ra; i++)
        dims[i] = i >= axis && i < axis + rb ? b->type.dims[i - axis] : ts_dim_const(1);
    return ts_b_reshape(onnx_b(n), b, ra, dims);
}

/* ==== shape values ======================================================== */

#define MAX_DIMS_VALUE 64

typedef ts_status (*dim_fn)(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);

/* ONNX integer Div truncates; ts_dim_div floors. They agree when the
 * quotient is non-negative: sizes are, so a symbolic operand is taken as
 * non-negative and a constant one must be (positive, for the divisor). */
static ts_status dim_div_trunc(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    if (ts_dim_is_const(b) && b.c <= 0) return TS_ERR_UNSUPPORTED;
    if (ts_dim_is_const(a) && a.c < 0) return TS_ERR_UNSUPPORTED;
    return ts_dim_div(t, a, b, out, err);
}

/* Number of elements of an integer value that may hold dims, or -1. */
static int dims_count(ts_value *y)
{
    if (!y || !ts_dtype_is_int(y->type.dtype)) return -1;
    if (y->type.rank == 0) return 1;
    if (y->type.rank == 1 && ts_dim_is_const(y->type.dims[0])) return (int)y->type.dims[0].c;
    return -1;
}

/* y = a f b elementwise on recorded dims (numpy broadcasting of vectors);
 * records nothing when an operand has no dims or a dim cannot be formed. */
static void record_dims2(onnx_node *n, ts_value *a, ts_value *b, ts_value *y, dim_fn f)
{
    const ts_dim *da, *db;
    int na, nb, cnt = dims_count(y);
    if (cnt < 0 || cnt > MAX_DIMS_VALUE || onnx_const(n, y)) return;
    if (!onnx_dims_value(n, a, &da, &na) || !onnx_dims_value(n, b, &db, &nb)) return;
    if ((na != cnt && na != 1) || (nb != cnt && nb != 1)) return;
    ts_dim r[MAX_DIMS_VALUE];
    ts_symtab *syms = onnx_graph(n)->syms;
    for (int i = 0; i < cnt; i++)
        if (f(syms, da[na == 1 ? 0 : i], db[nb == 1 ? 0 : i], &r[i], NULL) != TS_OK) return;
    onnx_set_dims_value(n, y, cnt, r);
}

/* y holds the same integers as x (Cast between integer types). */
static void record_dims_copy(onnx_node *n, ts_value *x, ts_value *y)
{
    const ts_dim *d;
    int c;
    if (y == x || dims_count(y) < 0 || onnx_const(n, y) || !onnx_dims_value(n, x, &d, &c)) return;
    if (c == dims_count(y)) onnx_set_dims_value(n, y, c, d);
}

/* ==== arithmetic ========================================================== */

/* Add, Sub, Mul, Div (1+; legacy broadcasting before 7): one primitive
 * each; integer Div truncates, as the primitive does. f records the shape
 * values of integer operands. */
static ts_status arith(onnx_node *n, ts_op op, dim_fn f)
{
    ts_value *a = onnx_input(n, 0), *b = rhs(n);
    ts_value *y = bin(n, op, a, b);
    if (y) record_dims2(n, a, b, y, f);
    return out1(n, y);
}

static ts_status onnx_add(onnx_node *n) { return arith(n, TS_OP_ADD, ts_dim_add); }
static ts_status onnx_sub(onnx_node *n) { return arith(n, TS_OP_SUB, ts_dim_sub); }
static ts_status onnx_mul(onnx_node *n) { return arith(n, TS_OP_MUL, ts_dim_mul); }
static ts_status onnx_div(onnx_node *n) { return arith(n, TS_OP_DIV, dim_div_trunc); }

/* Pow (1+; legacy broadcasting before 7): ONNX computes pow(a, b) and
 * converts to a's type. A float exponent on an integer base is computed in
 * f64 (so 2^0.5 truncates as the reference does); otherwise the exponent
 * is cast to the base's type. */
static ts_status onnx_pow(onnx_node *n)
{
    ts_value *a = onnx_input(n, 0), *b = rhs(n);
    if (!a || !b) return onnx_status(n);
    ts_dtype dt = a->type.dtype;
    if (!is_float(a) && is_float(b)) {
        ts_value *p = bin(n, TS_OP_POW, cast(n, a, TS_DTYPE_F64), cast(n, b, TS_DTYPE_F64));
        return out1(n, cast(n, p, dt));
    }
    return out1(n, bin(n, TS_OP_POW, a, cast(n, b, dt)));
}

/* Mod (10+): fmod=1 is C fmod (rem). fmod=0 takes the divisor's sign, as
 * Python's %: a nonzero remainder whose sign differs from b's moves by b.
 * (ONNX requires fmod=1 for floats; fmod=0 on floats gets the same
 * Python meaning.) */
static ts_status onnx_mod(onnx_node *n)
{
    ts_value *a = onnx_input(n, 0), *b = onnx_input(n, 1);
    int64_t fmod_ = onnx_attr_int(n, "fmod", 0);
    if (fmod_ != 0 && fmod_ != 1) return onnx_unsupported(n, "fmod=%lld (must be 0 or 1)", (long long)fmod_);
    ts_value *r = bin(n, TS_OP_REM, a, b);
    if (fmod_ == 1 || is_unsigned(a)) return out1(n, r);
    ts_value *zero = k(n, r, 0);
    ts_value *flip = bin(n, TS_OP_XOR, bin(n, TS_OP_LT, r, zero), bin(n, TS_OP_LT, b, zero));
    ts_value *fix = bin(n, TS_OP_AND, bin(n, TS_OP_NE, r, zero), flip);
    return out1(n, sel(n, fix, bin(n, TS_OP_ADD, r, b), r));
}

/* Reciprocal (1+): 1 / x. */
static ts_status onnx_reciprocal(onnx_node *n)
{
    ts_value *x = x0(n);
    return out1(n, bin(n, TS_OP_DIV, k(n, x, 1), x));
}

/* Operators that are exactly one unary primitive. */
#define UNARY(fn, op) \
    static ts_status fn(onnx_node *n) { return out1(n, un(n, op, x0(n))); }

UNARY(onnx_neg, TS_OP_NEG)
UNARY(onnx_abs, TS_OP_ABS)
UNARY(onnx_sign, TS_OP_SIGN)
UNARY(onnx_floor, TS_OP_FLOOR)
UNARY(onnx_ceil, TS_OP_CEIL)
UNARY(onnx_round, TS_OP_ROUND)
UNARY(onnx_sqrt, TS_OP_SQRT)
UNARY(onnx_exp, TS_OP_EXP)
UNARY(onnx_log, TS_OP_LOG)
UNARY(onnx_sin, TS_OP_SIN)
UNARY(onnx_cos, TS_OP_COS)
UNARY(onnx_tan, TS_OP_TAN)
UNARY(onnx_tanh, TS_OP_TANH)
UNARY(onnx_erf, TS_OP_ERF)
UNARY(onnx_not, TS_OP_NOT)
UNARY(onnx_bitwise_not, TS_OP_NOT)

/* ==== inverse trigonometric and hyperbolic ================================ */

/* sqrt(1 - x^2) as sqrt((1-x)(1+x)), which keeps its precision near |x|=1;
 * NaN for |x| > 1, so asin/acos are NaN there as ONNX wants. */
static ts_value *cos_of_asin(onnx_node *n, ts_value *x)
{
    ts_value *one = k(n, x, 1);
    return un(n, TS_OP_SQRT, bin(n, TS_OP_MUL, bin(n, TS_OP_SUB, one, x), bin(n, TS_OP_ADD, one, x)));
}

/* Asin (7+): atan2(x, sqrt(1 - x^2)). */
static ts_value *asin_f(onnx_node *n, ts_value *x) { return bin(n, TS_OP_ATAN2, x, cos_of_asin(n, x)); }
static ts_status onnx_asin(onnx_node *n) { return unary_f32(n, asin_f); }

/* Acos (7+): atan2(sqrt(1 - x^2), x). */
static ts_value *acos_f(onnx_node *n, ts_value *x) { return bin(n, TS_OP_ATAN2, cos_of_asin(n, x), x); }
static ts_status onnx_acos(onnx_node *n) { return unary_f32(n, acos_f); }

/* Atan (7+): atan2(x, 1). */
static ts_status onnx_atan(onnx_node *n)
{
    ts_value *x = x0(n);
    return out1(n, bin(n, TS_OP_ATAN2, x, k(n, x, 1)));
}

/* Sinh (9+): (e^x - e^-x) / 2, which cancels for small x: there the
 * Taylor series (exact to f64 precision below 0.1) takes over. */
static ts_value *sinh_f(onnx_node *n, ts_value *x)
{
    static const double c[] = {1.0 / 6, 1.0 / 120, 1.0 / 5040};
    ts_value *d = bin(n, TS_OP_SUB, un(n, TS_OP_EXP, x), un(n, TS_OP_EXP, un(n, TS_OP_NEG, x)));
    ts_value *big = bin(n, TS_OP_MUL, d, k(n, x, 0.5));
    return if_small(n, x, 0.1, odd_poly(n, x, 3, c), big);
}

static ts_status onnx_sinh(onnx_node *n) { return unary_f32(n, sinh_f); }

/* Cosh (9+): (e^x + e^-x) / 2 (no cancellation). */
static ts_value *cosh_f(onnx_node *n, ts_value *x)
{
    ts_value *s = bin(n, TS_OP_ADD, un(n, TS_OP_EXP, x), un(n, TS_OP_EXP, un(n, TS_OP_NEG, x)));
    return bin(n, TS_OP_MUL, s, k(n, x, 0.5));
}

static ts_status onnx_cosh(onnx_node *n) { return unary_f32(n, cosh_f); }

/* Beyond 2^28, x^2 + 1 is x^2 (and soon overflows), and asinh/acosh are
 * log(2|x|) to f32/f64 precision. */
#define BIG_ARG 268435456.0

static ts_value *log_2x(onnx_node *n, ts_value *a)
{
    return bin(n, TS_OP_ADD, un(n, TS_OP_LOG, a), k(n, a, LN2));
}

/* Asinh (9+): sign(x) * log1p(a + a^2 / (1 + sqrt(1 + a^2))), a = |x|: odd
 * by construction and accurate near 0, unlike log(x + sqrt(x^2 + 1)). */
static ts_value *asinh_abs(onnx_node *n, ts_value *a)
{
    ts_value *one = k(n, a, 1);
    ts_value *a2 = bin(n, TS_OP_MUL, a, a);
    ts_value *den = bin(n, TS_OP_ADD, one, un(n, TS_OP_SQRT, bin(n, TS_OP_ADD, one, a2)));
    ts_value *r = log1p_(n, bin(n, TS_OP_ADD, a, bin(n, TS_OP_DIV, a2, den)));
    return if_small(n, a, BIG_ARG, r, log_2x(n, a));
}

static ts_value *asinh_f(onnx_node *n, ts_value *x)
{
    return bin(n, TS_OP_MUL, un(n, TS_OP_SIGN, x), asinh_abs(n, un(n, TS_OP_ABS, x)));
}

static ts_status onnx_asinh(onnx_node *n) { return unary_f32(n, asinh_f); }

/* Acosh (9+): log1p(t + sqrt(2t + t^2)), t = x - 1: accurate near 1; NaN
 * below 1. */
static ts_value *acosh_f(onnx_node *n, ts_value *x)
{
    ts_value *t = bin(n, TS_OP_SUB, x, k(n, x, 1));
    ts_value *q = bin(n, TS_OP_MUL, t, bin(n, TS_OP_ADD, t, k(n, x, 2)));
    ts_value *r = log1p_(n, bin(n, TS_OP_ADD, t, un(n, TS_OP_SQRT, q)));
    return if_small(n, x, BIG_ARG, r, log_2x(n, x));
}

static ts_status onnx_acosh(onnx_node *n) { return unary_f32(n, acosh_f); }

/* Atanh (9+): 0.5 * log((1+x)/(1-x)) = 0.5 * log1p(2x / (1-x)); ±1 gives
 * ±inf, |x| > 1 NaN. Small x takes the Taylor series. */
static ts_value *atanh_f(onnx_node *n, ts_value *x)
{
    static const double c[] = {1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9};
    ts_value *a = un(n, TS_OP_ABS, x);
    ts_value *u = bin(n, TS_OP_DIV, bin(n, TS_OP_ADD, a, a), bin(n, TS_OP_SUB, k(n, x, 1), a));
    ts_value *r = bin(n, TS_OP_MUL, log1p_(n, u), k(n, x, 0.5));
    ts_value *big = bin(n, TS_OP_MUL, un(n, TS_OP_SIGN, x), r);
    return if_small(n, x, 0.1, odd_poly(n, x, 4, c), big);
}

static ts_status onnx_atanh(onnx_node *n) { return unary_f32(n, atanh_f); }

/* ==== activations ========================================================= */

/* 1 / (1 + e^-x): e^-x overflows to inf for very negative x, giving 0. */
static ts_value *sigmoid(onnx_node *n, ts_value *x)
{
    ts_value *one = k(n, x, 1);
    ts_value *e = un(n, TS_OP_EXP, un(n, TS_OP_NEG, x));
    return bin(n, TS_OP_DIV, one, bin(n, TS_OP_ADD, one, e));
}

/* log(1 + e^x) as max(x, 0) + log1p(e^-|x|): no overflow for large x. */
static ts_value *softplus(onnx_node *n, ts_value *x)
{
    ts_value *e = un(n, TS_OP_EXP, un(n, TS_OP_NEG, un(n, TS_OP_ABS, x)));
    return bin(n, TS_OP_ADD, bin(n, TS_OP_MAX, x, k(n, x, 0)), log1p_(n, e));
}

/* Sigmoid (1+). */
static ts_status onnx_sigmoid(onnx_node *n) { return unary_f32(n, sigmoid); }

/* HardSigmoid (1+): clamp(alpha*x + beta, 0, 1). */
static ts_status onnx_hard_sigmoid(onnx_node *n)
{
    ts_value *x = x0(n);
    double alpha = onnx_attr_float(n, "alpha", 0.2), beta = onnx_attr_float(n, "beta", 0.5);
    ts_value *y = bin(n, TS_OP_ADD, bin(n, TS_OP_MUL, x, k(n, x, alpha)), k(n, x, beta));
    return out1(n, clamp(n, y, k(n, x, 0), k(n, x, 1)));
}

/* HardSwish (14+): x * clamp(x/6 + 1/2, 0, 1). */
static ts_status onnx_hard_swish(onnx_node *n)
{
    ts_value *x = x0(n);
    ts_value *y = bin(n, TS_OP_ADD, bin(n, TS_OP_MUL, x, k(n, x, 1.0 / 6)), k(n, x, 0.5));
    return out1(n, bin(n, TS_OP_MUL, x, clamp(n, y, k(n, x, 0), k(n, x, 1))));
}

/* Swish (24+): x * sigmoid(alpha * x). */
static ts_value *swish_f(onnx_node *n, ts_value *x)
{
    ts_value *ax = bin(n, TS_OP_MUL, x, k(n, x, onnx_attr_float(n, "alpha", 1.0)));
    return bin(n, TS_OP_MUL, x, sigmoid(n, ax));
}

static ts_status onnx_swish(onnx_node *n) { return out1(n, in_f32(n, onnx_float_input(n, 0), swish_f)); }

/* Relu (1+): max(x, 0); NaN stays NaN. */
static ts_status onnx_relu(onnx_node *n)
{
    ts_value *x = x0(n);
    return out1(n, bin(n, TS_OP_MAX, x, k(n, x, 0)));
}

/* x < 0 ? neg : x — the shape of every leaky activation. */
static ts_value *where_neg(onnx_node *n, ts_value *x, ts_value *neg)
{
    return sel(n, bin(n, TS_OP_LT, x, k(n, x, 0)), neg, x);
}

/* LeakyRelu (1+): x < 0 ? alpha*x : x. */
static ts_status onnx_leaky_relu(onnx_node *n)
{
    ts_value *x = x0(n);
    double alpha = onnx_attr_float(n, "alpha", 0.01);
    return out1(n, where_neg(n, x, bin(n, TS_OP_MUL, x, k(n, x, alpha))));
}

/* PRelu (7+): x < 0 ? slope*x : x, slope broadcast to x (unidirectional:
 * the result must keep x's shape). */
static ts_status onnx_prelu(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *slope = onnx_input(n, 1);
    ts_value *y = where_neg(n, x, bin(n, TS_OP_MUL, x, slope));
    if (!y) return onnx_status(n);
    bool same = y->type.rank == x->type.rank;
    for (int i = 0; same && i < x->type.rank; i++) same = ts_dim_eq(y->type.dims[i], x->type.dims[i]);
    if (!same)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "slope does not broadcast to X's shape (unidirectionally)");
    return out1(n, y);
}

/* PRelu 1-6: a rank-1 slope of X's channel count (dim 1) is per channel,
 * as in Caffe2; anything else broadcasts numpy-style. */
static ts_status onnx_prelu_1(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *slope = onnx_input(n, 1);
    if (!x || !slope) return onnx_status(n);
    int r = x->type.rank;
    if (r >= 2 && slope->type.rank == 1 && ts_dim_eq(slope->type.dims[0], x->type.dims[1])) {
        ts_dim dims[TS_MAX_RANK];
        for (int i = 0; i < r - 1; i++) dims[i] = i == 0 ? x->type.dims[1] : ts_dim_const(1);
        slope = ts_b_reshape(onnx_b(n), slope, r - 1, dims);
    }
    return out1(n, where_neg(n, x, bin(n, TS_OP_MUL, x, slope)));
}

/* Elu (1+): x < 0 ? alpha*(e^x - 1) : x. */
static ts_value *elu_f(onnx_node *n, ts_value *x)
{
    double alpha = onnx_attr_float(n, "alpha", 1.0);
    return where_neg(n, x, bin(n, TS_OP_MUL, expm1_(n, x), k(n, x, alpha)));
}

static ts_status onnx_elu(onnx_node *n) { return unary_f32(n, elu_f); }

/* Selu (1+): gamma * (x <= 0 ? alpha*(e^x - 1) : x). */
static ts_value *selu_f(onnx_node *n, ts_value *x)
{
    double alpha = onnx_attr_float(n, "alpha", 1.67326319217681884765625);
    double gamma = onnx_attr_float(n, "gamma", 1.05070102214813232421875);
    ts_value *neg = bin(n, TS_OP_MUL, expm1_(n, x), k(n, x, alpha));
    ts_value *y = sel(n, bin(n, TS_OP_LE, x, k(n, x, 0)), neg, x);
    return bin(n, TS_OP_MUL, y, k(n, x, gamma));
}

static ts_status onnx_selu(onnx_node *n) { return unary_f32(n, selu_f); }

/* Celu (12+): max(0,x) + min(0, alpha*(e^(x/alpha) - 1)), i.e.
 * x < 0 ? alpha*(e^(x/alpha) - 1) : x. */
static ts_value *celu_f(onnx_node *n, ts_value *x)
{
    double alpha = onnx_attr_float(n, "alpha", 1.0);
    ts_value *e = expm1_(n, bin(n, TS_OP_DIV, x, k(n, x, alpha)));
    return where_neg(n, x, bin(n, TS_OP_MUL, e, k(n, x, alpha)));
}

static ts_status onnx_celu(onnx_node *n)
{
    if (onnx_attr_float(n, "alpha", 1.0) == 0) return onnx_unsupported(n, "alpha=0 (Celu divides by alpha)");
    return unary_f32(n, celu_f);
}

/* ThresholdedRelu (10+): x > alpha ? x : 0. */
static ts_status onnx_thresholded_relu(onnx_node *n)
{
    ts_value *x = x0(n);
    double alpha = onnx_attr_float(n, "alpha", 1.0);
    return out1(n, sel(n, bin(n, TS_OP_LT, k(n, x, alpha), x), x, k(n, x, 0)));
}

/* Softplus (1+). */
static ts_status onnx_softplus(onnx_node *n) { return unary_f32(n, softplus); }

/* Softsign (1+): x / (1 + |x|). */
static ts_status onnx_softsign(onnx_node *n)
{
    ts_value *x = x0(n);
    return out1(n, bin(n, TS_OP_DIV, x, bin(n, TS_OP_ADD, k(n, x, 1), un(n, TS_OP_ABS, x))));
}

/* Mish (18+): x * tanh(softplus(x)). */
static ts_value *mish_f(onnx_node *n, ts_value *x)
{
    return bin(n, TS_OP_MUL, x, un(n, TS_OP_TANH, softplus(n, x)));
}

static ts_status onnx_mish(onnx_node *n) { return unary_f32(n, mish_f); }

/* Gelu (20+): x/2 * (1 + erf(x/sqrt 2)), or with approximate="tanh"
 * x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))). */
static ts_value *gelu_f(onnx_node *n, ts_value *x)
{
    ts_value *t;
    if (strcmp(onnx_attr_string(n, "approximate", "none"), "tanh") == 0) {
        ts_value *x3 = bin(n, TS_OP_MUL, bin(n, TS_OP_MUL, x, x), x);
        ts_value *in = bin(n, TS_OP_ADD, x, bin(n, TS_OP_MUL, x3, k(n, x, 0.044715)));
        t = un(n, TS_OP_TANH, bin(n, TS_OP_MUL, in, k(n, x, SQRT_2_OVER_PI)));
    } else {
        t = un(n, TS_OP_ERF, bin(n, TS_OP_MUL, x, k(n, x, SQRT1_2)));
    }
    ts_value *half_x = bin(n, TS_OP_MUL, x, k(n, x, 0.5));
    return bin(n, TS_OP_MUL, half_x, bin(n, TS_OP_ADD, t, k(n, x, 1)));
}

static ts_status onnx_gelu(onnx_node *n)
{
    const char *approx = onnx_attr_string(n, "approximate", "none");
    if (strcmp(approx, "none") != 0 && strcmp(approx, "tanh") != 0)
        return onnx_unsupported(n, "approximate=\"%s\" (expected \"none\" or \"tanh\")", approx);
    return unary_f32(n, gelu_f);
}

/* Shrink (9+): x < -lambd ? x + bias : x > lambd ? x - bias : 0. */
static ts_status onnx_shrink(onnx_node *n)
{
    ts_value *x = x0(n);
    double lambd = onnx_attr_float(n, "lambd", 0.5), bias = onnx_attr_float(n, "bias", 0.0);
    ts_value *hi = sel(n, bin(n, TS_OP_LT, k(n, x, lambd), x), bin(n, TS_OP_SUB, x, k(n, x, bias)), k(n, x, 0));
    return out1(n, sel(n, bin(n, TS_OP_LT, x, k(n, x, -lambd)), bin(n, TS_OP_ADD, x, k(n, x, bias)), hi));
}

/* ==== Clip ================================================================ */

/* Clip 1-10: bounds are float attributes; an absent one is no bound. */
static ts_status onnx_clip_6(onnx_node *n)
{
    ts_value *x = x0(n);
    ts_value *lo = onnx_has_attr(n, "min") ? k(n, x, onnx_attr_float(n, "min", 0)) : NULL;
    ts_value *hi = onnx_has_attr(n, "max") ? k(n, x, onnx_attr_float(n, "max", 0)) : NULL;
    return out1(n, clamp(n, x, lo, hi));
}

/* Bound input i as a scalar (exporters also write shape [1]); NULL if
 * omitted. */
static ts_value *clip_bound(onnx_node *n, int i)
{
    if (!onnx_has_input(n, i)) return NULL;
    ts_value *v = onnx_input(n, i);
    if (!v || v->type.rank == 0) return v;
    for (int d = 0; d < v->type.rank; d++)
        if (!ts_dim_eq(v->type.dims[d], ts_dim_const(1))) {
            onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d (bound) must be a scalar", i);
            return NULL;
        }
    return ts_b_reshape(onnx_b(n), v, 0, NULL);
}

/* Clip 11+: optional min/max inputs; min > max gives max everywhere, which
 * min(max(x, lo), hi) does. */
static ts_status onnx_clip_11(onnx_node *n)
{
    ts_value *x = x0(n), *lo = clip_bound(n, 1), *hi = clip_bound(n, 2);
    return out1(n, clamp(n, x, lo, hi));
}

/* ==== variadic ============================================================ */

/* Left fold of every input with op (numpy broadcasting). */
static ts_value *fold_inputs(onnx_node *n, ts_op op)
{
    if (n->n_in < 1) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "needs at least one input");
        return NULL;
    }
    ts_value *acc = onnx_input(n, 0);
    for (int i = 1; i < n->n_in; i++) acc = bin(n, op, acc, onnx_input(n, i));
    return acc;
}

/* Max, Min (1+): two inputs of integer shape values carry their dims. */
static ts_status variadic_minmax(onnx_node *n, ts_op op, dim_fn f)
{
    ts_value *y = fold_inputs(n, op);
    if (y && n->n_in == 2) record_dims2(n, n->in[0], n->in[1], y, f);
    return out1(n, y);
}

static ts_status onnx_max(onnx_node *n) { return variadic_minmax(n, TS_OP_MAX, ts_dim_max); }
static ts_status onnx_min(onnx_node *n) { return variadic_minmax(n, TS_OP_MIN, ts_dim_min); }

/* Sum (1+). */
static ts_status onnx_sum(onnx_node *n) { return out1(n, fold_inputs(n, TS_OP_ADD)); }

/* Mean (1+): the sum divided by the input count. */
static ts_status onnx_mean(onnx_node *n)
{
    ts_value *s = fold_inputs(n, TS_OP_ADD);
    return out1(n, bin(n, TS_OP_DIV, s, k(n, s, n->n_in)));
}

/* ==== logic and comparisons =============================================== */

/* Operators that are exactly one binary primitive, a and b in order or
 * swapped (Greater(a, b) = lt(b, a)); legacy broadcasting before opset 7. */
#define BINARY(fn, op) \
    static ts_status fn(onnx_node *n) { return out1(n, bin(n, op, onnx_input(n, 0), rhs(n))); }
#define BINARY_SWAP(fn, op) \
    static ts_status fn(onnx_node *n) { return out1(n, bin(n, op, rhs(n), onnx_input(n, 0))); }

BINARY(onnx_and, TS_OP_AND)
BINARY(onnx_or, TS_OP_OR)
BINARY(onnx_xor, TS_OP_XOR)
BINARY(onnx_bitwise_and, TS_OP_AND)
BINARY(onnx_bitwise_or, TS_OP_OR)
BINARY(onnx_bitwise_xor, TS_OP_XOR)
BINARY(onnx_equal, TS_OP_EQ)
BINARY(onnx_less, TS_OP_LT)
BINARY(onnx_less_or_equal, TS_OP_LE)
BINARY_SWAP(onnx_greater, TS_OP_LT)
BINARY_SWAP(onnx_greater_or_equal, TS_OP_LE)

/* BitShift (11+): unsigned integers only; counts >= bits give 0. */
static ts_status onnx_bitshift(onnx_node *n)
{
    ts_value *a = onnx_input(n, 0), *b = onnx_input(n, 1);
    const char *dir = onnx_attr_string(n, "direction", "");
    if (a && !is_unsigned(a)) return onnx_unsupported(n, "%s operands (BitShift takes unsigned integers)",
                                                      ts_dtype_name(a->type.dtype));
    if (strcmp(dir, "LEFT") == 0) return out1(n, bin(n, TS_OP_SHL, a, b));
    if (strcmp(dir, "RIGHT") == 0) return out1(n, bin(n, TS_OP_SHR, a, b));
    return onnx_fail(n, TS_ERR_INVALID_MODEL, "direction=\"%s\" (expected LEFT or RIGHT)", dir);
}

/* Where (9+): select, the three broadcast together. */
static ts_status onnx_where(onnx_node *n)
{
    return out1(n, sel(n, onnx_input(n, 0), onnx_input(n, 1), onnx_input(n, 2)));
}

/* IsNaN (9+): x != x. */
static ts_status onnx_isnan(onnx_node *n)
{
    ts_value *x = x0(n);
    return out1(n, bin(n, TS_OP_NE, x, x));
}

/* IsInf (10+): x == +inf and/or x == -inf as the detect_* flags ask. */
static ts_status onnx_isinf(onnx_node *n)
{
    ts_value *x = x0(n);
    bool pos = onnx_attr_int(n, "detect_positive", 1) != 0;
    bool neg = onnx_attr_int(n, "detect_negative", 1) != 0;
    if (!x) return onnx_status(n);
    ts_value *p = pos ? bin(n, TS_OP_EQ, x, k(n, x, INFINITY)) : NULL;
    ts_value *q = neg ? bin(n, TS_OP_EQ, x, k(n, x, -INFINITY)) : NULL;
    if (p && q) return out1(n, bin(n, TS_OP_OR, p, q));
    if (p || q) return out1(n, p ? p : q);
    return out1(n, ts_b_full(onnx_b(n), TS_DTYPE_BOOL, 0, x->type.rank, x->type.dims));
}

/* ==== casts and identity ================================================== */

/* x cast to dt by ONNX's rules (saturate: 'saturate', default 1, and
 * 'round_mode' concern float8 targets; convert.c), carrying x's shape
 * values between integer types. */
static ts_status cast_to(onnx_node *n, ts_value *x, ts_dtype dt)
{
    ts_value *y = onnx_util_convert(n, x, dt, onnx_attr_int(n, "saturate", 1) != 0, onnx_attr_string(n, "round_mode", "up"));
    if (y && ts_dtype_is_int(x->type.dtype)) record_dims_copy(n, x, y);
    return out1(n, y);
}

/* x cast to the ONNX DataType `to`; strings and complex types are
 * unsupported. */
static ts_status cast_onnx(onnx_node *n, int64_t to)
{
    ts_value *x = x0(n);
    ts_dtype dt;
    ts_err err = {0};
    if (onnx_dtype((int)to, &dt, &err) != TS_OK) return onnx_unsupported(n, "cast to %s", err.msg);
    return x ? cast_to(n, x, dt) : onnx_status(n);
}

/* Cast (6+): to any tessera dtype. */
static ts_status onnx_cast(onnx_node *n)
{
    if (!onnx_has_attr(n, "to")) return onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute 'to' is required");
    return cast_onnx(n, onnx_attr_int(n, "to", 0));
}

/* Cast 1-5: 'to' names the DataType ("FLOAT"). */
static ts_status onnx_cast_1(onnx_node *n)
{
    static const char *const names[] = {
        [1] = "FLOAT", [2] = "UINT8", [3] = "INT8", [4] = "UINT16", [5] = "INT16", [6] = "INT32",
        [7] = "INT64", [8] = "STRING", [9] = "BOOL", [10] = "FLOAT16", [11] = "DOUBLE",
        [12] = "UINT32", [13] = "UINT64", [16] = "BFLOAT16",
    };
    const char *to = onnx_attr_string(n, "to", "");
    for (int64_t i = 0; i < (int64_t)(sizeof names / sizeof names[0]); i++)
        if (names[i] && strcmp(names[i], to) == 0) return cast_onnx(n, i);
    return onnx_fail(n, TS_ERR_INVALID_MODEL, "to=\"%s\" is not a DataType name", to);
}

/* CastLike (15+): cast to the second input's dtype. */
static ts_status onnx_cast_like(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *like = onnx_input(n, 1);
    return x && like ? cast_to(n, x, like->type.dtype) : onnx_status(n);
}

/* Identity (1+): the same value (its shape values come along); a sequence
 * or optional passes through as it is (D17). */
static ts_status onnx_identity(onnx_node *n) { return out1(n, x0(n)); }

/* ==== the table =========================================================== */

const onnx_op_entry onnx_ops_elementwise[] = {
    {"Abs", 1, INT_MAX, onnx_abs},
    {"Acos", 7, INT_MAX, onnx_acos},
    {"Acosh", 9, INT_MAX, onnx_acosh},
    {"Add", 1, INT_MAX, onnx_add},
    {"And", 1, INT_MAX, onnx_and},
    {"Asin", 7, INT_MAX, onnx_asin},
    {"Asinh", 9, INT_MAX, onnx_asinh},
    {"Atan", 7, INT_MAX, onnx_atan},
    {"Atanh", 9, INT_MAX, onnx_atanh},
    {"BitShift", 11, INT_MAX, onnx_bitshift},
    {"BitwiseAnd", 18, INT_MAX, onnx_bitwise_and},
    {"BitwiseNot", 18, INT_MAX, onnx_bitwise_not},
    {"BitwiseOr", 18, INT_MAX, onnx_bitwise_or},
    {"BitwiseXor", 18, INT_MAX, onnx_bitwise_xor},
    {"Cast", 1, 5, onnx_cast_1},
    {"Cast", 6, INT_MAX, onnx_cast},
    {"CastLike", 15, INT_MAX, onnx_cast_like},
    {"Ceil", 1, INT_MAX, onnx_ceil},
    {"Celu", 12, INT_MAX, onnx_celu},
    {"Clip", 1, 10, onnx_clip_6},
    {"Clip", 11, INT_MAX, onnx_clip_11},
    {"Cos", 7, INT_MAX, onnx_cos},
    {"Cosh", 9, INT_MAX, onnx_cosh},
    {"Div", 1, INT_MAX, onnx_div},
    {"Elu", 1, INT_MAX, onnx_elu},
    {"Equal", 1, INT_MAX, onnx_equal},
    {"Erf", 9, INT_MAX, onnx_erf},
    {"Exp", 1, INT_MAX, onnx_exp},
    {"Floor", 1, INT_MAX, onnx_floor},
    {"Gelu", 20, INT_MAX, onnx_gelu},
    {"Greater", 1, INT_MAX, onnx_greater},
    {"GreaterOrEqual", 12, INT_MAX, onnx_greater_or_equal},
    {"HardSigmoid", 1, INT_MAX, onnx_hard_sigmoid},
    {"HardSwish", 14, INT_MAX, onnx_hard_swish},
    {"Identity", 1, INT_MAX, onnx_identity},
    {"IsInf", 10, INT_MAX, onnx_isinf},
    {"IsNaN", 9, INT_MAX, onnx_isnan},
    {"LeakyRelu", 1, INT_MAX, onnx_leaky_relu},
    {"Less", 1, INT_MAX, onnx_less},
    {"LessOrEqual", 12, INT_MAX, onnx_less_or_equal},
    {"Log", 1, INT_MAX, onnx_log},
    {"Max", 1, INT_MAX, onnx_max},
    {"Mean", 1, INT_MAX, onnx_mean},
    {"Min", 1, INT_MAX, onnx_min},
    {"Mish", 18, INT_MAX, onnx_mish},
    {"Mod", 10, INT_MAX, onnx_mod},
    {"Mul", 1, INT_MAX, onnx_mul},
    {"Neg", 1, INT_MAX, onnx_neg},
    {"Not", 1, INT_MAX, onnx_not},
    {"Or", 1, INT_MAX, onnx_or},
    {"Pow", 1, INT_MAX, onnx_pow},
    {"PRelu", 1, 6, onnx_prelu_1},
    {"PRelu", 7, INT_MAX, onnx_prelu},
    {"Reciprocal", 1, INT_MAX, onnx_reciprocal},
    {"Relu", 1, INT_MAX, onnx_relu},
    {"Round", 11, INT_MAX, onnx_round},
    {"Selu", 1, INT_MAX, onnx_selu},
    {"Shrink", 9, INT_MAX, onnx_shrink},
    {"Sigmoid", 1, INT_MAX, onnx_sigmoid},
    {"Sign", 9, INT_MAX, onnx_sign},
    {"Sin", 7, INT_MAX, onnx_sin},
    {"Sinh", 9, INT_MAX, onnx_sinh},
    {"Softplus", 1, INT_MAX, onnx_softplus},
    {"Softsign", 1, INT_MAX, onnx_softsign},
    {"Sqrt", 1, INT_MAX, onnx_sqrt},
    {"Sub", 1, INT_MAX, onnx_sub},
    {"Sum", 1, INT_MAX, onnx_sum},
    {"Swish", 24, INT_MAX, onnx_swish},
    {"Tan", 7, INT_MAX, onnx_tan},
    {"Tanh", 1, INT_MAX, onnx_tanh},
    {"ThresholdedRelu", 10, INT_MAX, onnx_thresholded_relu},
    {"Where", 9, INT_MAX, onnx_where},
    {"Xor", 1, INT_MAX, onnx_xor},
    {NULL, 0, 0, NULL},
};
