/* emit_expr.c — the C emitter's literals and operators (emit_c.c writes
 * the expressions and statements around them): constants spelt exactly
 * (hex floats, NaN and infinity per dialect), each primitive's C with its
 * exact integer, NaN and signed-zero rules (the tsrt_ helpers), casts
 * that saturate. */
#include "codegen/cpu/emit_int.h"

#include <inttypes.h>
#include <math.h>

void ts_em_put_const(const em *e, ts_buf *b, const ts_lx *x)
{
    const char *t = ts_emit_ctype(x->dt);
    if (x->dt == TS_DTYPE_F32 || x->dt == TS_DTYPE_F64) {
        bool f = x->dt == TS_DTYPE_F32;
        const char *nan = e->device ? (f ? "NAN" : "((double)NAN)") : f ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
        const char *inf = e->device ? (f ? "INFINITY" : "((double)INFINITY)") : f ? "__builtin_inff()" : "__builtin_inf()";
        if (isnan(x->c)) ts_buf_puts(b, nan);
        else if (isinf(x->c)) ts_buf_printf(b, "%s%s", x->c < 0 ? "-" : "", inf);
        else if (f) ts_buf_printf(b, "%af", (double)(float)x->c);
        else ts_buf_printf(b, "%a", x->c);
        return;
    }
    if (x->dt == TS_DTYPE_I64 && x->ci != INT64_MIN) {
        ts_buf_printf(b, "INT64_C(%" PRId64 ")", x->ci);
        return;
    }
    ts_buf_printf(b, "((%s)UINT64_C(0x%" PRIx64 "))", t ? t : "int64_t", (uint64_t)x->ci);
}

static bool is_float(ts_dtype dt) { return dt == TS_DTYPE_F32 || dt == TS_DTYPE_F64; }
static bool is_signed_int(ts_dtype dt) { return !is_float(dt) && dt != TS_DTYPE_BOOL && ts_dtype_is_signed(dt); }

/* max/min of a float and a constant that is not NaN (ReLU, ReLU6, clip)
 * as the comparison x86's maxps/minps compute, one instruction where
 * tsrt_maxf's general NaN and signed-zero rule costs ~6 (the rule holds:
 * a NaN x is kept because the comparison with it is false; max(-0, +0)
 * must be +0, hence the + 0.0 after max(x, +0), which turns -0 into +0
 * and nothing else and which C may not drop; min(x, -0) keeps the general
 * rule). Either operand may be the constant (max and min are symmetric
 * under the rule). */
bool ts_em_clamp_by_const(ts_buf *b, const ts_lx *x, const char *a, const char *bb)
{
    if ((x->op != TS_OP_MAX && x->op != TS_OP_MIN) || !is_float(x->a[0]->dt)) return false;
    const int k = x->a[1]->k == TS_LX_CONST ? 1 : x->a[0]->k == TS_LX_CONST ? 0 : -1;
    if (k < 0 || isnan(x->a[k]->c)) return false;
    const char *v = k ? a : bb, *c = k ? bb : a, *z = x->a[0]->dt == TS_DTYPE_F32 ? "0.0f" : "0.0";
    const bool mx = x->op == TS_OP_MAX, zero = x->a[k]->c == 0, neg = signbit(x->a[k]->c);
    if (!mx && zero && neg) return false;   /* min(+0, -0) is -0: the general rule */
    ts_buf_printf(b, "%s%s %s %s ? %s : %s)", mx && zero && !neg ? "((" : "(", v, mx ? "<" : ">", c, c, v);
    if (mx && zero && !neg) ts_buf_printf(b, " + %s)", z);
    return true;
}

/* The C for `op` on operand texts a, b, c; adt is the operands' dtype,
 * rdt the result's. */
void ts_em_put_op(ts_buf *o, ts_op op, ts_dtype rdt, ts_dtype adt, const char *a, const char *b, const char *c)
{
    const char *T = ts_emit_ctype(rdt);
    bool f32 = adt == TS_DTYPE_F32, fl = is_float(adt), sg = is_signed_int(adt);
    int bits = ts_dtype_bits(adt);
    const char *sfx = f32 ? "f" : "";
    switch (op) {
    case TS_OP_ADD: case TS_OP_SUB: case TS_OP_MUL: {
        const char *sym = op == TS_OP_ADD ? "+" : op == TS_OP_SUB ? "-" : "*";
        if (fl) ts_buf_printf(o, "(%s %s %s)", a, sym, b);
        else ts_buf_printf(o, "((%s)((uint64_t)(%s) %s (uint64_t)(%s)))", T, a, sym, b);
        return;
    }
    case TS_OP_DIV:
        if (fl) ts_buf_printf(o, "(%s / %s)", a, b);
        else ts_buf_printf(o, "((%s)tsrt_div_%s(%s, %s))", T, sg ? "s" : "u", a, b);
        return;
    case TS_OP_REM:
        if (fl) ts_buf_printf(o, "fmod%s(%s, %s)", sfx, a, b);
        else ts_buf_printf(o, "((%s)tsrt_rem_%s(%s, %s))", T, sg ? "s" : "u", a, b);
        return;
    case TS_OP_POW:
        if (fl) ts_buf_printf(o, "pow%s(%s, %s)", sfx, a, b);
        else if (sg) ts_buf_printf(o, "((%s)tsrt_pow_s(%s, %s))", T, a, b);
        else ts_buf_printf(o, "((%s)tsrt_ipow(%s, %s))", T, a, b);
        return;
    case TS_OP_MAX: case TS_OP_MIN: {
        bool mx = op == TS_OP_MAX;
        if (fl) ts_buf_printf(o, "tsrt_%s%s(%s, %s)", mx ? "max" : "min", sfx, a, b);
        else ts_buf_printf(o, "(%s %s %s ? %s : %s)", a, mx ? ">" : "<", b, a, b);
        return;
    }
    case TS_OP_ATAN2: ts_buf_printf(o, "atan2%s(%s, %s)", sfx, a, b); return;
    case TS_OP_AND: case TS_OP_OR: case TS_OP_XOR: {
        const char *sym = op == TS_OP_AND ? "&" : op == TS_OP_OR ? "|" : "^";
        ts_buf_printf(o, "((%s)(%s %s %s))", T, a, sym, b);
        return;
    }
    case TS_OP_SHL: case TS_OP_SHR:
        ts_buf_printf(o, "((%s)tsrt_%s_%s(%s, %s, %d))", T, op == TS_OP_SHL ? "shl" : "shr", sg ? "s" : "u", a, b, bits);
        return;
    case TS_OP_EQ: ts_buf_printf(o, "((uint8_t)(%s == %s))", a, b); return;
    case TS_OP_NE: ts_buf_printf(o, "((uint8_t)(%s != %s))", a, b); return;
    case TS_OP_LT: ts_buf_printf(o, "((uint8_t)(%s < %s))", a, b); return;
    case TS_OP_LE: ts_buf_printf(o, "((uint8_t)(%s <= %s))", a, b); return;
    case TS_OP_SELECT: ts_buf_printf(o, "(%s ? %s : %s)", a, b, c); return;
    case TS_OP_NEG:
        if (fl) ts_buf_printf(o, "(-%s)", a);
        else ts_buf_printf(o, "((%s)(0 - (uint64_t)(%s)))", T, a);
        return;
    case TS_OP_ABS:
        if (fl) ts_buf_printf(o, "fabs%s(%s)", sfx, a);
        else if (sg) ts_buf_printf(o, "(%s < 0 ? (%s)(0 - (uint64_t)(%s)) : %s)", a, T, a, a);
        else ts_buf_printf(o, "%s", a);
        return;
    case TS_OP_SIGN:
        if (fl) ts_buf_printf(o, "tsrt_sign%s(%s)", sfx, a);
        else if (sg) ts_buf_printf(o, "((%s)((%s > 0) - (%s < 0)))", T, a, a);
        else ts_buf_printf(o, "((%s)(%s != 0))", T, a);
        return;
    case TS_OP_NOT:
        if (adt == TS_DTYPE_BOOL) ts_buf_printf(o, "((uint8_t)!%s)", a);
        else ts_buf_printf(o, "((%s)~%s)", T, a);
        return;
    default: break;
    }
    static const struct { ts_op op; const char *fn; } fns[] = {
        {TS_OP_EXP, "exp"}, {TS_OP_LOG, "log"}, {TS_OP_SQRT, "sqrt"}, {TS_OP_SIN, "sin"}, {TS_OP_COS, "cos"},
        {TS_OP_TAN, "tan"}, {TS_OP_TANH, "tanh"}, {TS_OP_ERF, "erf"}, {TS_OP_FLOOR, "floor"}, {TS_OP_CEIL, "ceil"},
        {TS_OP_ROUND, "rint"},
    };
    /* f32 exp, log, tanh, erf: rt/scalar.h's vectorizable versions (within
     * 1 ulp for exp and log, 2 for tanh and erf; docs/primitives.md, D24),
     * since libm's calls keep a loop from vectorizing. The rest (and every
     * f64 function) call libm: sqrt, floor, ceil and rint are single
     * instructions already; sin, cos, tan, pow, atan2 and fmod are rare in
     * models' hot loops. */
    bool own = f32 && (op == TS_OP_EXP || op == TS_OP_LOG || op == TS_OP_TANH || op == TS_OP_ERF);
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (fns[i].op == op) {
            ts_buf_printf(o, "%s%s%s(%s)", own ? "tsrt_" : "", fns[i].fn, sfx, a);
            return;
        }
    ts_buf_printf(o, "/* no C for %s */ 0", ts_op_get(op)->name);
}

/* The cast primitive's rules (docs/primitives.md). */
void ts_em_put_cast(ts_buf *o, ts_dtype from, ts_dtype to, const char *a)
{
    const char *T = ts_emit_ctype(to);
    if (to == TS_DTYPE_BOOL) {
        ts_buf_printf(o, "((uint8_t)(%s != 0))", a);
    } else if (is_float(from) && !is_float(to)) {
        int bits = ts_dtype_bits(to);
        if (ts_dtype_is_signed(to)) {
            int64_t hi = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
            ts_buf_printf(o, "((%s)tsrt_f2s((double)%s, INT64_C(%" PRId64 ") - 1, INT64_C(%" PRId64 ")))", T, a,
                          -hi, hi);
        } else {
            uint64_t hi = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
            ts_buf_printf(o, "((%s)tsrt_f2u((double)%s, UINT64_C(%" PRIu64 ")))", T, a, hi);
        }
    } else {
        ts_buf_printf(o, "((%s)%s)", T, a);   /* C's conversions: one rounding, integers wrap */
    }
}
