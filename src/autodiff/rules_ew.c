/* rules_ew.c — derivatives of the elementwise primitives. An elementwise
 * op's Jacobian is diagonal, so one function per op gives "t times the
 * partial derivative with respect to operand i" and serves both modes:
 * reverse multiplies the cotangent (the diagonal is its own transpose),
 * forward multiplies each operand's tangent and adds. Formulas as JAX's
 * where they have choices (pow at 0, max/min ties split in half). */
#include "autodiff/ad_int.h"


static ts_value *unary(ts_builder *b, ts_op op, ts_value *x) { return ts_b_unary(b, op, x); }
static ts_value *cmp(ts_builder *b, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(b, op, x, y); }

/* t * d(out)/d(operand i) of elementwise node n. */
static ts_value *partial(ts_builder *b, const ts_node *n, int i, ts_value *t)
{
    ts_value *x = n->in[0], *y = n->out[0];
    ts_value *a = n->in[0], *c = n->n_in > 1 ? n->in[1] : NULL;
    switch (n->op) {
    case TS_OP_NEG: return ad_neg(b, t);
    case TS_OP_ABS: return ad_mul(b, t, unary(b, TS_OP_SIGN, x));
    case TS_OP_EXP: return ad_mul(b, t, y);
    case TS_OP_LOG: return ad_div(b, t, x);
    case TS_OP_SQRT: return ad_div(b, ad_mulc(b, t, 0.5), y);
    case TS_OP_SIN: return ad_mul(b, t, unary(b, TS_OP_COS, x));
    case TS_OP_COS: return ad_neg(b, ad_mul(b, t, unary(b, TS_OP_SIN, x)));
    case TS_OP_TAN: return ad_mul(b, t, ad_add(b, ad_scalar(b, y, 1.0), ad_mul(b, y, y)));
    case TS_OP_TANH: return ad_mul(b, t, ts_b_binary(b, TS_OP_SUB, ad_scalar(b, y, 1.0), ad_mul(b, y, y)));
    case TS_OP_ERF: /* 2/sqrt(pi) e^(-x^2) */
        return ad_mul(b, ad_mulc(b, t, 1.1283791670955126 /* 2/sqrt(pi) */), unary(b, TS_OP_EXP, ad_neg(b, ad_mul(b, x, x))));
    case TS_OP_ADD: return t;
    case TS_OP_SUB: return i == 0 ? t : ad_neg(b, t);
    case TS_OP_MUL: return ad_mul(b, t, i == 0 ? c : a);
    case TS_OP_DIV: return i == 0 ? ad_div(b, t, c) : ad_neg(b, ad_div(b, ad_mul(b, t, y), c));
    case TS_OP_REM: /* a - trunc(a/b) b; trunc(q) = q - fmod(q, 1) */
        if (i == 0) return t;
        else {
            ts_value *q = ad_div(b, a, c);
            ts_value *tr = ts_b_binary(b, TS_OP_SUB, q, ts_b_binary(b, TS_OP_REM, q, ad_scalar(b, q, 1.0)));
            return ad_neg(b, ad_mul(b, t, tr));
        }
    case TS_OP_POW:
        if (i == 0) { /* b a^(b-1), and 0 where b == 0 (0^-1 would make 0 * inf) */
            ts_value *d = ad_mul(b, c, ts_b_binary(b, TS_OP_POW, a, ts_b_binary(b, TS_OP_SUB, c, ad_scalar(b, c, 1.0))));
            ts_value *z = cmp(b, TS_OP_EQ, c, ad_scalar(b, c, 0.0));
            return ad_mul(b, t, ts_b_select(b, z, ad_zeros_like(b, y), d));
        } else { /* y log a, with log 1 where a == 0 (0^b is flat in b there, for b > 0) */
            ts_value *z = cmp(b, TS_OP_EQ, a, ad_scalar(b, a, 0.0));
            ts_value *la = unary(b, TS_OP_LOG, ts_b_select(b, z, ts_b_full(b, a->type.dtype, 1.0, y->type.rank,
                                                                           y->type.dims), a));
            return ad_mul(b, t, ad_mul(b, y, la));
        }
    case TS_OP_MAX:
    case TS_OP_MIN: { /* to the larger (smaller) operand; a tie splits it in half */
        ts_value *me = i == 0 ? a : c, *other = i == 0 ? c : a;
        ts_value *wins = n->op == TS_OP_MAX ? cmp(b, TS_OP_LT, other, me) : cmp(b, TS_OP_LT, me, other);
        ts_value *half = ts_b_select(b, cmp(b, TS_OP_EQ, me, other), ts_b_full(b, y->type.dtype, 0.5, y->type.rank,
                                                                              y->type.dims), ad_zeros_like(b, y));
        return ad_mul(b, t, ts_b_select(b, wins, ts_b_full(b, y->type.dtype, 1.0, y->type.rank, y->type.dims), half));
    }
    case TS_OP_ATAN2: { /* atan2(a, c): d/da = c / (a^2 + c^2), d/dc = -a / (a^2 + c^2) */
        ts_value *r2 = ad_add(b, ad_mul(b, a, a), ad_mul(b, c, c));
        return i == 0 ? ad_div(b, ad_mul(b, t, c), r2) : ad_neg(b, ad_div(b, ad_mul(b, t, a), r2));
    }
    default:
        ts_builder_fail(b, TS_ERR_INTERNAL, "autodiff: %s is not an elementwise rule", ts_op_get(n->op)->name);
        return NULL;
    }
}

void ad_vjp_ew(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx)
{
    if (!ct[0]) return;
    switch (n->op) {
    case TS_OP_SELECT: { /* select(p, a, c): the cotangent goes to the chosen side */
        ts_value *z = ad_zeros_like(b, ct[0]);
        if (want[1]) dx[1] = ts_b_select(b, n->in[0], ct[0], z);
        if (want[2]) dx[2] = ts_b_select(b, n->in[0], z, ct[0]);
        return;
    }
    case TS_OP_CAST: /* float -> float only: the drivers stop integers */
        if (ad_is_float(n->in[0])) dx[0] = ts_b_cast(b, ct[0], n->in[0]->type.dtype);
        return;
    default:
        for (int i = 0; i < n->n_in; i++)
            if (want[i]) dx[i] = partial(b, n, i, ct[0]);
    }
}

void ad_jvp_ew(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy)
{
    switch (n->op) {
    case TS_OP_SELECT:
        if (t[1] || t[2])
            dy[0] = ts_b_select(b, n->in[0], t[1] ? t[1] : ad_zeros_like(b, n->out[0]),
                                t[2] ? t[2] : ad_zeros_like(b, n->out[0]));
        return;
    case TS_OP_CAST:
        if (t[0] && ad_is_float(n->out[0])) dy[0] = ts_b_cast(b, t[0], n->out[0]->type.dtype);
        return;
    default:
        for (int i = 0; i < n->n_in; i++)
            if (t[i]) dy[0] = ad_add(b, dy[0], partial(b, n, i, t[i]));
    }
}
