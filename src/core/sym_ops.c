/* sym_ops.c — the public dim arithmetic (ts_dim_add, ... over sym.c's
 * canonical operations): argument checks, and errors that name their
 * operands ("n / 0: division by zero"). */
#include "sym_internal.h"

#include <stdio.h>

const char *ts_sym_dim_text(ts_dim d, char *buf, size_t n)
{
    ts_buf b = {0};
    ts_dim_print(&b, d);
    snprintf(buf, n, "%s", b.data && !b.oom ? b.data : "?");
    ts_buf_free(&b);
    return buf;
}

static ts_status check_args(const ts_symtab *t, ts_dim a, ts_dim b, const ts_dim *out, ts_err *err)
{
    if (!t || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "dim arithmetic: NULL table or result");
    if ((a.x && a.x->tab != t) || (b.x && b.x->tab != t))
        return ts_err_set(err, TS_ERR_INVALID_ARG, "dim from another symbol table");
    return TS_OK;
}

/* Runs an operation and, when it fails for a reason of its own, puts the
 * operands in front of the message ("n / 0: division by zero"). */
static ts_status run_op(ts_symtab *t, binop_fn fn, const char *op, ts_dim a, ts_dim b, ts_dim *out,
                        ts_err *err)
{
    TS_TRY(check_args(t, a, b, out, err));
    bool fresh = err && err->code == TS_OK;
    ts_dim r;
    ts_status s = fn(t, a, b, &r, err);
    if (s == TS_OK) {
        *out = r;
    } else if (fresh && s == TS_ERR_SHAPE) {
        char ta[128], tb[128];
        ts_sym_dim_text(a, ta, sizeof ta);
        ts_sym_dim_text(b, tb, sizeof tb);
        if (op[0] == 'm') ts_err_prefix(err, "%s(%s, %s): ", op, ta, tb);
        else ts_err_prefix(err, "%s %s %s: ", ta, op, tb);
    }
    return s;
}

ts_status ts_dim_add(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, ts_sym_d_add, "+", a, b, out, err);
}

ts_status ts_dim_sub(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, ts_sym_d_sub, "-", a, b, out, err);
}

ts_status ts_dim_mul(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, ts_sym_d_mul, "*", a, b, out, err);
}

ts_status ts_dim_div(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, ts_sym_d_div, "/", a, b, out, err);
}

ts_status ts_dim_mod(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, ts_sym_d_mod, "%", a, b, out, err);
}

ts_status ts_dim_max(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, ts_sym_d_max, "max", a, b, out, err);
}

ts_status ts_dim_min(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err)
{
    return run_op(t, ts_sym_d_min, "min", a, b, out, err);
}
