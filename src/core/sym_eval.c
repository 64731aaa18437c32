/* sym_eval.c — symbol bindings and the evaluation of dims for one run. */
#include "sym_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- bindings and evaluation -------------------------------------------- */

void ts_symbind_free(ts_symbind *b)
{
    if (!b) return;
    ts_mem_free(b->syms);
    ts_mem_free(b->vals);
    b->syms = NULL;
    b->vals = NULL;
    b->n = b->cap = 0;
}

void ts_symbind_clear(ts_symbind *b)
{
    if (b) b->n = 0;
}

static int bind_find(const ts_symbind *b, const ts_symx *x)
{
    for (int i = 0; b && i < b->n; i++)
        if (b->syms[i] == x) return i;
    return -1;
}

/* Each array is committed as soon as it grows, so a failure half way
 * leaves a consistent (if roomier) map. */
static bool bind_grow(ts_symbind *b)
{
    if (b->n < b->cap) return true;
    if (b->cap > INT_MAX / 2) return false;
    int cap = b->cap ? b->cap * 2 : 8;
    const ts_symx **s = ts_mem_realloc((void *)b->syms, (size_t)cap * sizeof *s);
    if (!s) return false;
    b->syms = s;
    int64_t *v = ts_mem_realloc(b->vals, (size_t)cap * sizeof *v);
    if (!v) return false;
    b->vals = v;
    b->cap = cap;
    return true;
}

ts_status ts_symbind_set(ts_symbind *b, ts_dim sym, int64_t v, ts_err *err)
{
    if (!b || !sym.x || sym.x->kind != K_SYM)
        return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_symbind_set: not a symbol");
    int i = bind_find(b, sym.x);
    if (i >= 0) {
        if (b->vals[i] == v) return TS_OK;
        return ts_err_set(err, TS_ERR_SHAPE, "symbol '%s' is %" PRId64 " here but %" PRId64 " elsewhere",
                          sym.x->u.sym.name, v, b->vals[i]);
    }
    if (!bind_grow(b)) return ts_err_set(err, TS_ERR_OOM, "out of memory binding a symbol");
    b->syms[b->n] = sym.x;
    b->vals[b->n] = v;
    b->n++;
    return TS_OK;
}

bool ts_symbind_get(const ts_symbind *b, ts_dim sym, int64_t *v)
{
    int i = sym.x ? bind_find(b, sym.x) : -1;
    if (i < 0) return false;
    if (v) *v = b->vals[i];
    return true;
}

static ts_status eval_fail(ts_err *err, const char *what, const ts_symx *x)
{
    char buf[256];
    return ts_err_set(err, TS_ERR_SHAPE, "%s evaluating %s", what, ts_sym_dim_text(ts_sym_node_dim(x), buf, sizeof buf));
}

static ts_status eval_dim(ts_dim d, const ts_symbind *b, int64_t *v, ts_err *err);

static ts_status eval_bin(const ts_symx *x, const ts_symbind *b, int64_t *v, ts_err *err)
{
    int64_t l, r;
    TS_TRY(eval_dim(x->u.bin.a, b, &l, err));
    TS_TRY(eval_dim(x->u.bin.b, b, &r, err));
    switch (x->kind) {
    case K_MAX: *v = l > r ? l : r; return TS_OK;
    case K_MIN: *v = l < r ? l : r; return TS_OK;
    default: break;
    }
    if (r == 0) return eval_fail(err, "division by zero", x);
    if (x->kind == K_MOD) *v = ts_sym_floor_mod(l, r);
    else if (!ts_sym_floor_div(l, r, v)) return eval_fail(err, "int64 ts_sym_overflow", x);
    return TS_OK;
}

/* Square-and-multiply. A square is only taken when a higher bit of e will
 * use it, so it is no larger in magnitude than the result and a failed
 * check means the result itself overflows. */
static bool ipow(int64_t base, int64_t e, int64_t *out)
{
    int64_t r = 1;
    if (base == 0 || base == 1) {
        *out = base;
        return true;
    }
    if (base == -1) {
        *out = (e & 1) ? -1 : 1;
        return true;
    }
    while (e) {
        if ((e & 1) && !ts_i64_mul(r, base, &r)) return false;
        e >>= 1;
        if (e && !ts_i64_mul(base, base, &base)) return false;
    }
    *out = r;
    return true;
}

static ts_status eval_mono(const ts_symx *m, const ts_symbind *b, int64_t *v, ts_err *err)
{
    const factor *f;
    factor one;
    int n = ts_sym_factors(m, &f, &one);
    int64_t acc = 1;
    for (int i = 0; i < n; i++) {
        int64_t a, p;
        TS_TRY(eval_dim(ts_sym_node_dim(f[i].atom), b, &a, err));
        if (!ipow(a, f[i].pow, &p) || !ts_i64_mul(acc, p, &acc)) return eval_fail(err, "int64 ts_sym_overflow", m);
    }
    *v = acc;
    return TS_OK;
}

static ts_status eval_sum(const ts_symx *x, const ts_symbind *b, int64_t *v, ts_err *err)
{
    int64_t acc = x->u.sum.c;
    for (int i = 0; i < x->u.sum.n; i++) {
        int64_t m;
        TS_TRY(eval_mono(x->u.sum.t[i].mono, b, &m, err));
        if (!ts_i64_mul(m, x->u.sum.t[i].coef, &m) || !ts_i64_add(acc, m, &acc))
            return eval_fail(err, "int64 ts_sym_overflow", x);
    }
    *v = acc;
    return TS_OK;
}

static ts_status eval_dim(ts_dim d, const ts_symbind *b, int64_t *v, ts_err *err)
{
    const ts_symx *x = d.x;
    if (!x) {
        *v = d.c;
        return TS_OK;
    }
    switch (x->kind) {
    case K_SYM: {
        int i = bind_find(b, x);
        if (i < 0) return ts_err_set(err, TS_ERR_SHAPE, "unbound symbol '%s'", x->u.sym.name);
        *v = b->vals[i];
        return TS_OK;
    }
    case K_MONO: return eval_mono(x, b, v, err);
    case K_SUM: return eval_sum(x, b, v, err);
    default: return eval_bin(x, b, v, err);
    }
}

ts_status ts_dim_eval(ts_dim d, const ts_symbind *b, int64_t *out, ts_err *err)
{
    if (!out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_dim_eval: NULL result");
    return eval_dim(d, b, out, err);
}

bool ts_dim_is_bound(ts_dim d, const ts_symbind *b)
{
    const ts_symx *x = d.x;
    if (!x) return true;
    switch (x->kind) {
    case K_SYM:
        return bind_find(b, x) >= 0;
    case K_MONO:
        for (int i = 0; i < x->u.mono.n; i++)
            if (!ts_dim_is_bound(ts_sym_node_dim(x->u.mono.f[i].atom), b)) return false;
        return true;
    case K_SUM:
        for (int i = 0; i < x->u.sum.n; i++)
            if (!ts_dim_is_bound(ts_sym_node_dim(x->u.sum.t[i].mono), b)) return false;
        return true;
    default:
        return ts_dim_is_bound(x->u.bin.a, b) && ts_dim_is_bound(x->u.bin.b, b);
    }
}

ts_status ts_dim_match(ts_dim d, int64_t v, ts_symbind *b, ts_err *err)
{
    if (!b) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_dim_match: NULL bindings");
    int64_t want;
    if (d.x && d.x->kind == K_SYM && !ts_symbind_get(b, d, &want)) return ts_symbind_set(b, d, v, err);
    TS_TRY(ts_dim_eval(d, b, &want, err));
    if (want == v) return TS_OK;
    char buf[256];
    return ts_err_set(err, TS_ERR_SHAPE, "dim %s: expected %" PRId64 ", got %" PRId64,
                      ts_sym_dim_text(d, buf, sizeof buf), want, v);
}

