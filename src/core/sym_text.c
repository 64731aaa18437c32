/* sym_text.c — the canonical text of symbolic dims: printer and parser. */
#include "sym_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- printing ----------------------------------------------------------- *
 * Precedence of the natural text of a dim: a sum ("a+b"), a term ("a*b",
 * "a/b", "2*n") or a unary ("n", "-n", "max(a, b)", "-3"). A context asks
 * for a least precedence and says whether the text may begin with '-';
 * when it may not, or the precedence is too low, the dim gets parentheses.
 * A leading '-' is only allowed at the start of the text, of a parenthesis
 * or of a max/min argument: "y+(-n/s)" rather than the legal "y+-n/s". */

enum { P_SUM, P_TERM, P_UNARY };

static bool is_single_term(const ts_symx *x)
{
    return x->kind == K_SUM && x->u.sum.n == 1 && x->u.sum.c == 0;
}

static int nat_prec(ts_dim d)
{
    if (!d.x) return P_UNARY;
    switch (d.x->kind) {
    case K_SYM: case K_MAX: case K_MIN: return P_UNARY;
    case K_DIV: case K_MOD: case K_MONO: return P_TERM;
    default: break;
    }
    if (!is_single_term(d.x)) return P_SUM;
    const term *tm = &d.x->u.sum.t[0];
    return tm->coef == -1 && tm->mono->kind != K_MONO ? P_UNARY : P_TERM;
}

/* Positive terms print first, so a sum leads with '-' only when all its
 * terms are negative. */
static const term *first_printed(const ts_symx *x)
{
    for (int i = 0; i < x->u.sum.n; i++)
        if (x->u.sum.t[i].coef > 0) return &x->u.sum.t[i];
    return &x->u.sum.t[0];
}

static bool nat_neg(ts_dim d)
{
    if (!d.x) return d.c < 0;
    const ts_symx *x = d.x;
    switch (x->kind) {
    case K_DIV: case K_MOD:
        return nat_prec(x->u.bin.a) >= P_TERM && nat_neg(x->u.bin.a);
    case K_MONO:
        return nat_neg(ts_sym_node_dim(x->u.mono.f[0].atom));
    case K_SUM: {
        const term *f = first_printed(x);
        return f->coef < 0 || (f->coef == 1 && nat_neg(ts_sym_node_dim(f->mono)));
    }
    default:
        return false;
    }
}

static void print_nat(ts_buf *b, ts_dim d);

static void print_in(ts_buf *b, ts_dim d, int need, bool lead)
{
    if (nat_prec(d) < need || (!lead && nat_neg(d))) {
        ts_buf_puts(b, "(");
        print_nat(b, d);
        ts_buf_puts(b, ")");
    } else {
        print_nat(b, d);
    }
}

/* Powers print as repeated factors (n*n); the grammar has no '^'. */
static void print_mono(ts_buf *b, const ts_symx *m, int need, bool lead)
{
    const factor *f;
    factor one;
    int n = ts_sym_factors(m, &f, &one);
    bool first = true;
    for (int i = 0; i < n; i++) {
        for (int64_t k = 0; k < f[i].pow && !b->oom; k++) {
            if (!first) ts_buf_puts(b, "*");
            print_in(b, ts_sym_node_dim(f[i].atom), first ? need : P_UNARY, first && lead);
            first = false;
        }
    }
}

/* INT64_MIN has no positive magnitude to subtract, so it is added as a
 * parenthesised negative literal. */
static void print_term(ts_buf *b, int64_t coef, const ts_symx *mono, bool first)
{
    if (first) {
        if (coef == 1) {
            print_mono(b, mono, P_TERM, true);
            return;
        }
        if (coef == -1) ts_buf_puts(b, "-");
        else ts_buf_printf(b, "%" PRId64 "*", coef);
        print_mono(b, mono, P_UNARY, false);
        return;
    }
    if (coef == INT64_MIN) {
        ts_buf_printf(b, "+(%" PRId64 ")*", coef);
        print_mono(b, mono, P_UNARY, false);
        return;
    }
    ts_buf_puts(b, coef > 0 ? "+" : "-");
    int64_t mag = coef > 0 ? coef : -coef;
    if (mag == 1) {
        print_mono(b, mono, P_TERM, false);
        return;
    }
    ts_buf_printf(b, "%" PRId64 "*", mag);
    print_mono(b, mono, P_UNARY, false);
}

static void print_sum(ts_buf *b, const ts_symx *x)
{
    bool first = true;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < x->u.sum.n; i++) {
            const term *tm = &x->u.sum.t[i];
            if ((tm->coef > 0) != (pass == 0)) continue;
            print_term(b, tm->coef, tm->mono, first);
            first = false;
        }
    }
    int64_t c = x->u.sum.c;
    if (c > 0) ts_buf_printf(b, "+%" PRId64, c);
    else if (c == INT64_MIN) ts_buf_printf(b, "+(%" PRId64 ")", c);
    else if (c < 0) ts_buf_printf(b, "-%" PRId64, -c);
}

static void print_nat(ts_buf *b, ts_dim d)
{
    const ts_symx *x = d.x;
    if (!x) {
        ts_buf_printf(b, "%" PRId64, d.c);
        return;
    }
    switch (x->kind) {
    case K_SYM:
        ts_buf_puts(b, x->u.sym.name);
        return;
    case K_DIV: case K_MOD:
        print_in(b, x->u.bin.a, P_TERM, true);
        ts_buf_puts(b, x->kind == K_DIV ? "/" : "%");
        print_in(b, x->u.bin.b, P_UNARY, false);
        return;
    case K_MAX: case K_MIN:
        ts_buf_puts(b, x->kind == K_MAX ? "max(" : "min(");
        print_in(b, x->u.bin.a, P_SUM, true);
        ts_buf_puts(b, ", ");
        print_in(b, x->u.bin.b, P_SUM, true);
        ts_buf_puts(b, ")");
        return;
    case K_MONO:
        print_mono(b, x, P_TERM, true);
        return;
    default:
        print_sum(b, x);
        return;
    }
}

void ts_dim_print(ts_buf *b, ts_dim d)
{
    if (b) print_nat(b, d);
}

/* ---- parsing ------------------------------------------------------------ */

typedef struct parser {
    ts_symtab *t;
    const char *s;
    size_t len, pos, errpos;
    int depth;
    ts_err *err;
} parser;

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_name_start(int c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_name_char(int c) { return is_name_start(c) || is_digit(c); }

/* The next significant character, or -1 at the end (len or NUL). */
static int peek(parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t')) p->pos++;
    if (p->pos >= p->len || p->s[p->pos] == '\0') return -1;
    return (unsigned char)p->s[p->pos];
}

static ts_status fail(parser *p, size_t at, const char *msg)
{
    p->errpos = at;
    return ts_err_set(p->err, TS_ERR_PARSE, "offset %zu: %s", at, msg);
}

static ts_status fail_here(parser *p)
{
    int c = peek(p);
    if (c < 0) return fail(p, p->pos, "unexpected end of expression");
    char msg[64];
    if (c >= 0x20 && c < 0x7f) snprintf(msg, sizeof msg, "unexpected '%c'", c);
    else snprintf(msg, sizeof msg, "unexpected byte 0x%02x", (unsigned)c);
    return fail(p, p->pos, msg);
}

/* Arithmetic errors in the text ("3/0", overflowing folds) are parse errors
 * at the operator; running out of memory stays what it is. */
static ts_status apply(parser *p, size_t at, binop_fn fn, ts_dim a, ts_dim b, ts_dim *out)
{
    ts_err le = {0};
    ts_status s = fn(p->t, a, b, out, &le);
    if (s == TS_OK) return s;
    p->errpos = at;
    if (s == TS_ERR_OOM) return ts_err_set(p->err, s, "%s", le.msg);
    return ts_err_set(p->err, TS_ERR_PARSE, "offset %zu: %s", at, le.msg);
}

static ts_status enter(parser *p)
{
    if (++p->depth > MAX_PARSE_DEPTH) return fail(p, p->pos, "expression nested too deeply");
    return TS_OK;
}

static ts_status expect(parser *p, int c)
{
    if (peek(p) != c) {
        char msg[32];
        snprintf(msg, sizeof msg, "expected '%c'", c);
        return fail(p, p->pos, msg);
    }
    p->pos++;
    return TS_OK;
}

/* A literal negated in place, so that -9223372036854775808 is readable. */
static ts_status parse_int(parser *p, bool neg, ts_dim *out)
{
    size_t start = p->pos;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, v = 0;
    while (p->pos < p->len && is_digit(p->s[p->pos])) {
        unsigned d = (unsigned)(p->s[p->pos] - '0');
        if (v > (limit - d) / 10) return fail(p, start, "integer literal out of range");
        v = v * 10 + d;
        p->pos++;
    }
    if (!neg) *out = ts_dim_const((int64_t)v);
    else *out = ts_dim_const(v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v);
    return TS_OK;
}

static ts_status parse_expr(parser *p, ts_dim *out);

static ts_status parse_call(parser *p, size_t at, binop_fn fn, ts_dim *out)
{
    ts_dim a, b;
    TS_TRY(expect(p, '('));
    TS_TRY(parse_expr(p, &a));
    TS_TRY(expect(p, ','));
    TS_TRY(parse_expr(p, &b));
    TS_TRY(expect(p, ')'));
    return apply(p, at, fn, a, b, out);
}

/* "max"/"min" are functions only when a '(' follows; otherwise names. */
static ts_status parse_name(parser *p, ts_dim *out)
{
    size_t start = p->pos;
    while (p->pos < p->len && is_name_char((unsigned char)p->s[p->pos])) p->pos++;
    size_t len = p->pos - start;
    const char *name = p->s + start;
    bool fn = len == 3 && (!memcmp(name, "max", 3) || !memcmp(name, "min", 3));
    if (fn && peek(p) == '(') return parse_call(p, start, name[1] == 'a' ? ts_sym_d_max : ts_sym_d_min, out);
    ts_err le = {0};
    ts_status s = ts_sym_node(p->t, name, len, out, &le);
    if (s != TS_OK) {
        p->errpos = start;
        return ts_err_set(p->err, s, "offset %zu: %s", start, le.msg);
    }
    return TS_OK;
}

static ts_status parse_atom(parser *p, ts_dim *out)
{
    int c = peek(p);
    if (is_digit(c)) return parse_int(p, false, out);
    if (is_name_start(c)) return parse_name(p, out);
    if (c != '(') return fail_here(p);
    p->pos++;
    TS_TRY(parse_expr(p, out));
    return expect(p, ')');
}

static ts_status parse_unary(parser *p, ts_dim *out)
{
    if (peek(p) != '-') return parse_atom(p, out);
    size_t at = p->pos++;
    TS_TRY(enter(p));
    if (is_digit(peek(p))) {
        TS_TRY(parse_int(p, true, out));
    } else {
        ts_dim v;
        TS_TRY(parse_unary(p, &v));
        TS_TRY(apply(p, at, ts_sym_d_sub, ts_dim_const(0), v, out));
    }
    p->depth--;
    return TS_OK;
}

static binop_fn mulop(int c)
{
    return c == '*' ? ts_sym_d_mul : c == '/' ? ts_sym_d_div : c == '%' ? ts_sym_d_mod : NULL;
}

static ts_status parse_term(parser *p, ts_dim *out)
{
    ts_dim acc, rhs;
    TS_TRY(parse_unary(p, &acc));
    for (binop_fn fn; (fn = mulop(peek(p)));) {
        size_t at = p->pos++;
        TS_TRY(parse_unary(p, &rhs));
        TS_TRY(apply(p, at, fn, acc, rhs, &acc));
    }
    *out = acc;
    return TS_OK;
}

static ts_status parse_expr(parser *p, ts_dim *out)
{
    ts_dim acc, rhs;
    TS_TRY(enter(p));
    TS_TRY(parse_term(p, &acc));
    for (int c; (c = peek(p)) == '+' || c == '-';) {
        size_t at = p->pos++;
        TS_TRY(parse_term(p, &rhs));
        TS_TRY(apply(p, at, c == '+' ? ts_sym_d_add : ts_sym_d_sub, acc, rhs, &acc));
    }
    p->depth--;
    *out = acc;
    return TS_OK;
}

ts_status ts_dim_parse(ts_symtab *t, const char *s, size_t len, ts_dim *out, size_t *used,
                       ts_err *err)
{
    if (!t || !s || !out) {
        if (used) *used = 0;
        return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_dim_parse: NULL argument");
    }
    parser p = {.t = t, .s = s, .len = len, .err = err};
    ts_dim d;
    ts_status st = parse_expr(&p, &d);
    if (st == TS_OK) *out = d;
    if (used) *used = st == TS_OK ? p.pos : p.errpos;
    return st;
}

