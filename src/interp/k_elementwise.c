/* k_elementwise.c — interpreter kernels of the elementwise primitives:
 * unary and binary arithmetic, logic, shifts, comparisons, select, cast
 * and bitcast. docs/primitives.md is the contract these
 * functions spell out.
 *
 * Every dtype falls into one computing domain:
 *   F32  f16, bf16, f32: computed in float, rounded once to the storage type
 *        (a half-precision unit that computes in f32)
 *   F64  f64, computed in double
 *   S    signed integers, sign-extended to int64; U unsigned, zero-extended
 *        to uint64. Both wrap: the arithmetic is done modulo 2^64 in uint64
 *        (no signed overflow, so no undefined behaviour) and the store
 *        truncates to the dtype's width, which is arithmetic modulo 2^bits.
 *   B    bool, read as 0/1.
 * An op is a table of one scalar function per domain it accepts; a NULL
 * slot is a domain the op's type class excludes. */
#include "interp/interp.h"

#include <math.h>
#include <string.h>

typedef enum domain { D_F32, D_F64, D_S, D_U, D_B } domain;

static domain domain_of(ts_dtype dt)
{
    if (dt == TS_DTYPE_BOOL) return D_B;
    if (dt == TS_DTYPE_F64) return D_F64;
    if (ts_dtype_is_fp(dt)) return D_F32;   /* the storage floats reach only cast */
    return ts_dtype_is_signed(dt) ? D_S : D_U;
}

static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static int64_t wrap_neg(int64_t a) { return (int64_t)(0 - (uint64_t)a); }

static ts_status no_domain(ts_interp_run *r, const ts_node *n, ts_dtype dt)
{
    return ts_err_set(ts_interp_err(r), TS_ERR_UNSUPPORTED, "%s has no kernel for %s",
                      ts_op_get(n->op)->name, ts_dtype_name(dt));
}

/* ==== unary ============================================================= */

typedef struct unary_fns {
    float (*f32)(float);
    double (*f64)(double);
    int64_t (*s)(int64_t);
    uint64_t (*u)(uint64_t);
    uint64_t (*b)(uint64_t);
} unary_fns;

static bool unary_has(const unary_fns *f, domain d)
{
    switch (d) {
    case D_F32: return f->f32;
    case D_F64: return f->f64;
    case D_S: return f->s;
    case D_U: return f->u;
    default: return f->b;
    }
}

static void unary_at(const unary_fns *f, ts_dtype dt, const void *x, void *y, int64_t i)
{
    switch (domain_of(dt)) {
    case D_F32: ts_elem_set_f64(dt, y, i, f->f32((float)ts_elem_get_f64(dt, x, i))); break;
    case D_F64: ts_elem_set_f64(dt, y, i, f->f64(ts_elem_get_f64(dt, x, i))); break;
    case D_S: ts_elem_set_i64(dt, y, i, f->s(ts_elem_get_i64(dt, x, i))); break;
    case D_U: ts_elem_set_u64(dt, y, i, f->u(ts_elem_get_u64(dt, x, i))); break;
    case D_B: ts_elem_set_u64(dt, y, i, f->b(ts_elem_get_u64(dt, x, i))); break;
    }
}

/* y[i] = f(x[i]) over the whole tensor, in x's domain. */
static ts_status unary(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out,
                       const unary_fns *f)
{
    ts_dtype dt = in[0]->dtype;
    if (!unary_has(f, domain_of(dt))) return no_domain(r, n, dt);
    TS_TRY(ts_interp_out(r, n, 0, out));
    for (int64_t i = 0; i < (*out)->numel; i++) unary_at(f, dt, in[0]->data, (*out)->data, i);
    return TS_OK;
}

static float neg_f32(float x) { return -x; }
static double neg_f64(double x) { return -x; }
static uint64_t neg_u(uint64_t x) { return 0 - x; }

/* |INT_MIN| wraps back to INT_MIN (after truncation to the dtype). */
static int64_t abs_s(int64_t x) { return x < 0 ? wrap_neg(x) : x; }
static uint64_t ident_u(uint64_t x) { return x; }

/* sign(±0) is ±0: the zero passes through with its sign, as NaN does. */
static float sign_f32(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : x; }
static double sign_f64(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }
static int64_t sign_s(int64_t x) { return (x > 0) - (x < 0); }
static uint64_t sign_u(uint64_t x) { return x != 0; }

static int64_t not_s(int64_t x) { return ~x; }
static uint64_t not_u(uint64_t x) { return ~x; }
static uint64_t not_b(uint64_t x) { return !x; }

static const unary_fns neg_fns = {neg_f32, neg_f64, wrap_neg, neg_u, NULL};
static const unary_fns abs_fns = {fabsf, fabs, abs_s, ident_u, NULL};
static const unary_fns sign_fns = {sign_f32, sign_f64, sign_s, sign_u, NULL};
static const unary_fns not_fns = {NULL, NULL, not_s, not_u, not_b};
/* The C library's functions in each precision; rint rounds half to even in
 * the default rounding mode, which tessera never changes. */
static const unary_fns exp_fns = {expf, exp, NULL, NULL, NULL};
static const unary_fns log_fns = {logf, log, NULL, NULL, NULL};
static const unary_fns sqrt_fns = {sqrtf, sqrt, NULL, NULL, NULL};
static const unary_fns sin_fns = {sinf, sin, NULL, NULL, NULL};
static const unary_fns cos_fns = {cosf, cos, NULL, NULL, NULL};
static const unary_fns tan_fns = {tanf, tan, NULL, NULL, NULL};
static const unary_fns tanh_fns = {tanhf, tanh, NULL, NULL, NULL};
static const unary_fns erf_fns = {erff, erf, NULL, NULL, NULL};
static const unary_fns floor_fns = {floorf, floor, NULL, NULL, NULL};
static const unary_fns ceil_fns = {ceilf, ceil, NULL, NULL, NULL};
static const unary_fns round_fns = {rintf, rint, NULL, NULL, NULL};

#define UNARY_KERNEL(name)                                                                  \
    static ts_status k_##name(ts_interp_run *r, const ts_node *n, ts_tensor *const *in,     \
                              ts_tensor **out)                                              \
    {                                                                                       \
        return unary(r, n, in, out, &name##_fns);                                           \
    }
UNARY_KERNEL(neg)
UNARY_KERNEL(abs)
UNARY_KERNEL(sign)
UNARY_KERNEL(not)
UNARY_KERNEL(exp)
UNARY_KERNEL(log)
UNARY_KERNEL(sqrt)
UNARY_KERNEL(sin)
UNARY_KERNEL(cos)
UNARY_KERNEL(tan)
UNARY_KERNEL(tanh)
UNARY_KERNEL(erf)
UNARY_KERNEL(floor)
UNARY_KERNEL(ceil)
UNARY_KERNEL(round)

/* ==== binary ============================================================ */

/* Integer slots get the dtype's width for the shifts, which depend on it. */
typedef struct binary_fns {
    float (*f32)(float, float);
    double (*f64)(double, double);
    int64_t (*s)(int64_t, int64_t, int bits);
    uint64_t (*u)(uint64_t, uint64_t, int bits);
    uint64_t (*b)(uint64_t, uint64_t, int bits);
} binary_fns;

static bool binary_has(const binary_fns *f, domain d)
{
    switch (d) {
    case D_F32: return f->f32;
    case D_F64: return f->f64;
    case D_S: return f->s;
    case D_U: return f->u;
    default: return f->b;
    }
}

static void binary_at(const binary_fns *f, ts_dtype dt, const void *a, const void *b, void *y,
                      int64_t i)
{
    int bits = ts_dtype_bits(dt);
    switch (domain_of(dt)) {
    case D_F32:
        ts_elem_set_f64(dt, y, i, f->f32((float)ts_elem_get_f64(dt, a, i), (float)ts_elem_get_f64(dt, b, i)));
        break;
    case D_F64: ts_elem_set_f64(dt, y, i, f->f64(ts_elem_get_f64(dt, a, i), ts_elem_get_f64(dt, b, i))); break;
    case D_S: ts_elem_set_i64(dt, y, i, f->s(ts_elem_get_i64(dt, a, i), ts_elem_get_i64(dt, b, i), bits)); break;
    case D_U: ts_elem_set_u64(dt, y, i, f->u(ts_elem_get_u64(dt, a, i), ts_elem_get_u64(dt, b, i), bits)); break;
    case D_B: ts_elem_set_u64(dt, y, i, f->b(ts_elem_get_u64(dt, a, i), ts_elem_get_u64(dt, b, i), bits)); break;
    }
}

/* y[i] = f(a[i], b[i]); the shape rule made a and b the same type. */
static ts_status binary(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out,
                        const binary_fns *f)
{
    ts_dtype dt = in[0]->dtype;
    if (!binary_has(f, domain_of(dt))) return no_domain(r, n, dt);
    TS_TRY(ts_interp_out(r, n, 0, out));
    for (int64_t i = 0; i < (*out)->numel; i++) binary_at(f, dt, in[0]->data, in[1]->data, (*out)->data, i);
    return TS_OK;
}

/* ---- arithmetic */

static float add_f32(float a, float b) { return a + b; }
static double add_f64(double a, double b) { return a + b; }
static int64_t add_s(int64_t a, int64_t b, int bits) { return wrap_add(a, b); }
static uint64_t add_u(uint64_t a, uint64_t b, int bits) { return a + b; }

static float sub_f32(float a, float b) { return a - b; }
static double sub_f64(double a, double b) { return a - b; }
static int64_t sub_s(int64_t a, int64_t b, int bits) { return wrap_sub(a, b); }
static uint64_t sub_u(uint64_t a, uint64_t b, int bits) { return a - b; }

static float mul_f32(float a, float b) { return a * b; }
static double mul_f64(double a, double b) { return a * b; }
static int64_t mul_s(int64_t a, int64_t b, int bits) { return wrap_mul(a, b); }
static uint64_t mul_u(uint64_t a, uint64_t b, int bits) { return a * b; }

/* Integer division truncates; x/0 = 0 and INT_MIN/-1 wraps to INT_MIN,
 * where C would trap. */
static float div_f32(float a, float b) { return a / b; }
static double div_f64(double a, double b) { return a / b; }
static int64_t div_s(int64_t a, int64_t b, int bits) { return b == 0 ? 0 : b == -1 ? wrap_neg(a) : a / b; }
static uint64_t div_u(uint64_t a, uint64_t b, int bits) { return b == 0 ? 0 : a / b; }

/* The remainder has the sign of the dividend; x%0 = x, x%-1 = 0. */
static int64_t rem_s(int64_t a, int64_t b, int bits) { return b == 0 ? a : b == -1 ? 0 : a % b; }
static uint64_t rem_u(uint64_t a, uint64_t b, int bits) { return b == 0 ? a : a % b; }

/* Exponentiation by squaring modulo 2^64; the store's truncation then
 * gives the power modulo 2^bits. */
static uint64_t ipow(uint64_t a, uint64_t e)
{
    uint64_t r = 1;
    for (; e; e >>= 1, a *= a)
        if (e & 1) r *= a;
    return r;
}

/* A negative exponent makes a fraction, truncated toward zero: only
 * bases 1 and -1 keep a non-zero value (0^negative is 0 too). */
static int64_t pow_s(int64_t a, int64_t e, int bits)
{
    if (e >= 0) return (int64_t)ipow((uint64_t)a, (uint64_t)e);
    if (a == 1) return 1;
    if (a == -1) return (e & 1) ? -1 : 1;
    return 0;
}
static uint64_t pow_u(uint64_t a, uint64_t e, int bits) { return ipow(a, e); }

/* NaN if either is NaN (the first one, keeping its payload); between -0.0
 * and +0.0, max picks +0.0 and min -0.0, so the result never depends on
 * operand order. */
static double max_f64(double a, double b)
{
    if (isnan(a)) return a;
    if (isnan(b)) return b;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}
static double min_f64(double a, double b)
{
    if (isnan(a)) return a;
    if (isnan(b)) return b;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}
/* float -> double -> float is exact, so the double versions serve f32. */
static float max_f32(float a, float b) { return (float)max_f64(a, b); }
static float min_f32(float a, float b) { return (float)min_f64(a, b); }
static int64_t max_s(int64_t a, int64_t b, int bits) { return a > b ? a : b; }
static uint64_t max_u(uint64_t a, uint64_t b, int bits) { return a > b ? a : b; }
static int64_t min_s(int64_t a, int64_t b, int bits) { return a < b ? a : b; }
static uint64_t min_u(uint64_t a, uint64_t b, int bits) { return a < b ? a : b; }

/* ---- logic and shifts (bool operands are 0/1, so bitwise is logical) */

static int64_t and_s(int64_t a, int64_t b, int bits) { return a & b; }
static uint64_t and_u(uint64_t a, uint64_t b, int bits) { return a & b; }
static int64_t or_s(int64_t a, int64_t b, int bits) { return a | b; }
static uint64_t or_u(uint64_t a, uint64_t b, int bits) { return a | b; }
static int64_t xor_s(int64_t a, int64_t b, int bits) { return a ^ b; }
static uint64_t xor_u(uint64_t a, uint64_t b, int bits) { return a ^ b; }

/* Counts outside [0, bits) shift every bit out; C leaves them undefined.
 * A signed count is read as signed, so a negative one is out of range;
 * an unsigned count can only be too large. */
static int64_t shl_s(int64_t a, int64_t b, int bits)
{
    return b < 0 || b >= bits ? 0 : (int64_t)((uint64_t)a << b);
}
static uint64_t shl_u(uint64_t a, uint64_t b, int bits) { return b >= (uint64_t)bits ? 0 : a << b; }

/* Arithmetic: the sign fills in, so an out-of-range count leaves 0 or -1.
 * Written with ~ because >> of a negative value is implementation-defined. */
static int64_t shr_s(int64_t a, int64_t b, int bits)
{
    if (b < 0 || b >= bits) return a < 0 ? -1 : 0;
    return a < 0 ? ~(~a >> b) : a >> b;
}
static uint64_t shr_u(uint64_t a, uint64_t b, int bits) { return b >= (uint64_t)bits ? 0 : a >> b; }

static const binary_fns add_fns = {add_f32, add_f64, add_s, add_u, NULL};
static const binary_fns sub_fns = {sub_f32, sub_f64, sub_s, sub_u, NULL};
static const binary_fns mul_fns = {mul_f32, mul_f64, mul_s, mul_u, NULL};
static const binary_fns div_fns = {div_f32, div_f64, div_s, div_u, NULL};
static const binary_fns rem_fns = {fmodf, fmod, rem_s, rem_u, NULL};
static const binary_fns pow_fns = {powf, pow, pow_s, pow_u, NULL};
static const binary_fns max_fns = {max_f32, max_f64, max_s, max_u, NULL};
static const binary_fns min_fns = {min_f32, min_f64, min_s, min_u, NULL};
static const binary_fns atan2_fns = {atan2f, atan2, NULL, NULL, NULL};
static const binary_fns and_fns = {NULL, NULL, and_s, and_u, and_u};
static const binary_fns or_fns = {NULL, NULL, or_s, or_u, or_u};
static const binary_fns xor_fns = {NULL, NULL, xor_s, xor_u, xor_u};
static const binary_fns shl_fns = {NULL, NULL, shl_s, shl_u, NULL};
static const binary_fns shr_fns = {NULL, NULL, shr_s, shr_u, NULL};

#define BINARY_KERNEL(name)                                                                 \
    static ts_status k_##name(ts_interp_run *r, const ts_node *n, ts_tensor *const *in,     \
                              ts_tensor **out)                                              \
    {                                                                                       \
        return binary(r, n, in, out, &name##_fns);                                          \
    }
BINARY_KERNEL(add)
BINARY_KERNEL(sub)
BINARY_KERNEL(mul)
BINARY_KERNEL(div)
BINARY_KERNEL(rem)
BINARY_KERNEL(pow)
BINARY_KERNEL(max)
BINARY_KERNEL(min)
BINARY_KERNEL(atan2)
BINARY_KERNEL(and)
BINARY_KERNEL(or)
BINARY_KERNEL(xor)
BINARY_KERNEL(shl)
BINARY_KERNEL(shr)

/* ==== comparisons ========================================================
 * Floats compare as doubles (every float dtype converts exactly); integers
 * compare in their own signedness, u64 against u64, never through double.
 * C's operators already give false for every ordered comparison with NaN
 * and true for NaN != x. */

typedef enum cmp_kind { CMP_EQ, CMP_NE, CMP_LT, CMP_LE } cmp_kind;

static bool cmp_f64(cmp_kind k, double a, double b)
{
    switch (k) {
    case CMP_EQ: return a == b;
    case CMP_NE: return a != b;
    case CMP_LT: return a < b;
    default: return a <= b;
    }
}

static bool cmp_s(cmp_kind k, int64_t a, int64_t b)
{
    switch (k) {
    case CMP_EQ: return a == b;
    case CMP_NE: return a != b;
    case CMP_LT: return a < b;
    default: return a <= b;
    }
}

static bool cmp_u(cmp_kind k, uint64_t a, uint64_t b)
{
    switch (k) {
    case CMP_EQ: return a == b;
    case CMP_NE: return a != b;
    case CMP_LT: return a < b;
    default: return a <= b;
    }
}

static bool cmp_at(cmp_kind k, ts_dtype dt, const void *a, const void *b, int64_t i)
{
    switch (domain_of(dt)) {
    case D_F32: case D_F64: return cmp_f64(k, ts_elem_get_f64(dt, a, i), ts_elem_get_f64(dt, b, i));
    case D_S: return cmp_s(k, ts_elem_get_i64(dt, a, i), ts_elem_get_i64(dt, b, i));
    default: return cmp_u(k, ts_elem_get_u64(dt, a, i), ts_elem_get_u64(dt, b, i));
    }
}

static ts_status compare(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out,
                         cmp_kind k)
{
    TS_TRY(ts_interp_out(r, n, 0, out));
    uint8_t *y = (*out)->data;
    for (int64_t i = 0; i < (*out)->numel; i++) y[i] = cmp_at(k, in[0]->dtype, in[0]->data, in[1]->data, i);
    return TS_OK;
}

static ts_status k_eq(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    return compare(r, n, in, out, CMP_EQ);
}
static ts_status k_ne(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    return compare(r, n, in, out, CMP_NE);
}
static ts_status k_lt(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    return compare(r, n, in, out, CMP_LT);
}
static ts_status k_le(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    return compare(r, n, in, out, CMP_LE);
}

/* ==== select, cast, bitcast ============================================= */

/* p ? a : b, element by element: a byte copy, so every dtype (and every
 * NaN payload) passes through unchanged. */
static ts_status k_select(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    TS_TRY(ts_interp_out(r, n, 0, out));
    const uint8_t *p = in[0]->data;
    size_t sz = ts_dtype_size((*out)->dtype);
    char *y = (*out)->data;
    for (int64_t i = 0; i < (*out)->numel; i++) {
        const char *src = p[i] ? in[1]->data : in[2]->data;
        memcpy(y + (size_t)i * sz, src + (size_t)i * sz, sz);
    }
    return TS_OK;
}

/* The magnitude m as a double rounded to odd: exact below 2^53, otherwise
 * the bits that do not fit are folded into a sticky lowest bit. A second
 * rounding to 24 bits or fewer is then a correct single rounding of m,
 * which (double)m followed by (float) is not. */
static double u64_to_f64_odd(uint64_t m)
{
    int shift = 0;
    while ((m >> shift) >= (UINT64_C(1) << 53)) shift++;
    uint64_t kept = m >> shift;
    if (shift && (m & ((UINT64_C(1) << shift) - 1))) kept |= 1;
    return ldexp((double)kept, shift);
}

/* An integer to a float dtype, rounded once to nearest even. */
static void set_int_as_float(ts_dtype dt, void *y, int64_t i, bool neg, uint64_t mag)
{
    double v = dt == TS_DTYPE_F64 ? (double)mag : u64_to_f64_odd(mag);
    ts_elem_set_f64(dt, y, i, neg ? -v : v);
}

static void cast_at(ts_dtype from, ts_dtype to, const void *x, void *y, int64_t i)
{
    switch (domain_of(from)) {
    case D_F32: case D_F64:
        /* exact read; ts_elem_set_f64 rounds once (RNE), truncates and
         * saturates to integers with NaN -> 0, and gives x != 0 for bool */
        ts_elem_set_f64(to, y, i, ts_elem_get_f64(from, x, i));
        break;
    case D_S: {
        int64_t v = ts_elem_get_i64(from, x, i);
        if (ts_dtype_is_fp(to)) set_int_as_float(to, y, i, v < 0, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
        else ts_elem_set_i64(to, y, i, v);  /* wraps; bool: v != 0 */
        break;
    }
    default: {
        uint64_t v = ts_elem_get_u64(from, x, i);
        if (ts_dtype_is_fp(to)) set_int_as_float(to, y, i, false, v);
        else ts_elem_set_u64(to, y, i, v);
        break;
    }
    }
}

static ts_status k_cast(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    TS_TRY(ts_interp_out(r, n, 0, out));
    for (int64_t i = 0; i < (*out)->numel; i++) cast_at(in[0]->dtype, (*out)->dtype, in[0]->data, (*out)->data, i);
    return TS_OK;
}

/* The shape rule guarantees equal widths, hence equal byte counts. */
static ts_status k_bitcast(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    TS_TRY(ts_interp_out(r, n, 0, out));
    if (!TS_ALWAYS((*out)->nbytes == in[0]->nbytes))
        return ts_err_set(ts_interp_err(r), TS_ERR_INTERNAL, "bitcast: byte counts differ");
    if (in[0]->nbytes) memcpy((*out)->data, in[0]->data, in[0]->nbytes);
    /* sub-byte types keep one value per byte: the bits are the low ones,
     * and an integer result is re-extended from them */
    ts_dtype dt = (*out)->dtype;
    if (ts_dtype_is_storage(dt) && !ts_dtype_is_small_float(dt))
        for (int64_t i = 0; i < (*out)->numel; i++) ts_elem_set_i64(dt, (*out)->data, i, ((uint8_t *)(*out)->data)[i]);
    return TS_OK;
}

const ts_interp_kernel ts_interp_elementwise[TS_OP_COUNT] = {
    [TS_OP_NEG] = k_neg,       [TS_OP_ABS] = k_abs,       [TS_OP_SIGN] = k_sign,
    [TS_OP_NOT] = k_not,       [TS_OP_EXP] = k_exp,       [TS_OP_LOG] = k_log,
    [TS_OP_SQRT] = k_sqrt,     [TS_OP_SIN] = k_sin,       [TS_OP_COS] = k_cos,
    [TS_OP_TAN] = k_tan,       [TS_OP_TANH] = k_tanh,     [TS_OP_ERF] = k_erf,
    [TS_OP_FLOOR] = k_floor,   [TS_OP_CEIL] = k_ceil,     [TS_OP_ROUND] = k_round,
    [TS_OP_ADD] = k_add,       [TS_OP_SUB] = k_sub,       [TS_OP_MUL] = k_mul,
    [TS_OP_DIV] = k_div,       [TS_OP_REM] = k_rem,       [TS_OP_POW] = k_pow,
    [TS_OP_MAX] = k_max,       [TS_OP_MIN] = k_min,       [TS_OP_ATAN2] = k_atan2,
    [TS_OP_AND] = k_and,       [TS_OP_OR] = k_or,         [TS_OP_XOR] = k_xor,
    [TS_OP_SHL] = k_shl,       [TS_OP_SHR] = k_shr,       [TS_OP_EQ] = k_eq,
    [TS_OP_NE] = k_ne,         [TS_OP_LT] = k_lt,         [TS_OP_LE] = k_le,
    [TS_OP_SELECT] = k_select, [TS_OP_CAST] = k_cast,     [TS_OP_BITCAST] = k_bitcast,
};
