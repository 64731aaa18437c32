/* parse_lex.c — the tokens of the IR text parser (parse.c): error
 * reporting with NAME:LINE:COL, the scratch vectors, blanks and comments,
 * punctuation, names, dtype names and number literals, down to one checked
 * element of a constant. Everything here reads at p->pos and either advances
 * past what it read or reports where it stopped; the shared declarations are
 * in parse.h. */
#include "ir/parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------- */

static void line_col(const parser *p, size_t pos, size_t *line, size_t *col)
{
    size_t l = 1, start = 0;
    for (size_t i = 0; i < pos && i < p->len; i++)
        if (p->s[i] == '\n') {
            l++;
            start = i + 1;
        }
    *line = l;
    *col = pos - start + 1;
}

ts_status ts_parse_fail(parser *p, size_t pos, ts_status code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t line, col;
    line_col(p, pos, &line, &col);
    return ts_err_set(p->err, code, "%s:%zu:%zu: %s", p->name, line, col, msg);
}

ts_status ts_parse_oom(parser *p) { return ts_parse_fail(p, p->pos, TS_ERR_OOM, "out of memory"); }

/* Re-issue an error of a callee (builder, shape rule) at a text position,
 * keeping its code. */
ts_status ts_parse_fail_from(parser *p, size_t pos, ts_status code, const ts_err *inner)
{
    return ts_parse_fail(p, pos, code, "%s", inner->msg[0] ? inner->msg : ts_status_name(code));
}

/* ---- scratch vectors (heap, freed by their owner) ------------------------ */

/* A zeroed new last element, or NULL when memory runs out. */
void *ts_parse_vec_push(vec *v, size_t elem)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8, bytes;
        if (!ts_size_mul(cap, elem, &bytes)) return NULL;
        void *d = ts_mem_realloc(v->data, bytes);
        if (!d) return NULL;
        v->data = d;
        v->cap = cap;
    }
    void *slot = (char *)v->data + v->n++ * elem;
    memset(slot, 0, elem);
    return slot;
}

void ts_parse_vec_free(vec *v)
{
    ts_mem_free(v->data);
    memset(v, 0, sizeof *v);
}

/* ---- lexing ---------------------------------------------------------------- */

/* Blanks are spaces, tabs, line breaks and `#` comments. */
void ts_parse_skip_blank(parser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            p->pos++;
        } else if (c == '#') {
            while (p->pos < p->len && p->s[p->pos] != '\n') p->pos++;
        } else {
            break;
        }
    }
}

/* The length of the run of name characters at pos (not consumed). */
size_t ts_parse_word_len(const parser *p)
{
    size_t n = 0;
    while (p->pos + n < p->len && ts_parse_name_char((unsigned char)p->s[p->pos + n])) n++;
    return n;
}

bool ts_parse_word_is(const char *w, size_t n, const char *kw)
{
    return strlen(kw) == n && memcmp(w, kw, n) == 0;
}

/* What stands at pos, for "expected X but found Y". */
const char *ts_parse_found(const parser *p, char *buf, size_t cap)
{
    int c = ts_parse_peek(p);
    size_t n = ts_parse_word_len(p);
    if (c < 0) return "end of input";
    if (n) snprintf(buf, cap, "'%.*s'", SHOWN(n), p->s + p->pos);
    else if (c >= 0x20 && c < 0x7f) snprintf(buf, cap, "'%c'", c);
    else snprintf(buf, cap, "byte 0x%02x", (unsigned)c);
    return buf;
}

ts_status ts_parse_expected(parser *p, const char *what)
{
    char buf[64];
    return PERR(p, p->pos, "expected %s but found %s", what, ts_parse_found(p, buf, sizeof buf));
}

bool ts_parse_accept(parser *p, char c)
{
    ts_parse_skip_blank(p);
    if (ts_parse_peek(p) != (unsigned char)c) return false;
    p->pos++;
    return true;
}

ts_status ts_parse_expect(parser *p, char c)
{
    if (ts_parse_accept(p, c)) return TS_OK;
    char what[8];
    snprintf(what, sizeof what, "'%c'", c);
    return ts_parse_expected(p, what);
}

/* A NAME ([A-Za-z_][A-Za-z0-9_.]*); `what` describes it in the message. */
ts_status ts_parse_word(parser *p, const char *what, const char **w, size_t *n)
{
    ts_parse_skip_blank(p);
    size_t len = ts_parse_word_len(p);
    if (!len || !ts_parse_name_start(ts_parse_peek(p))) return ts_parse_expected(p, what);
    *w = p->s + p->pos;
    *n = len;
    p->pos += len;
    return TS_OK;
}

bool ts_parse_dtype_named(const char *w, size_t n, ts_dtype *out)
{
    for (int i = 0; i < TS_DTYPE_COUNT; i++)
        if (ts_parse_word_is(w, n, ts_dtype_name((ts_dtype)i))) {
            *out = (ts_dtype)i;
            return true;
        }
    return false;
}

/* ---- numbers ---------------------------------------------------------------- */

typedef struct number {
    size_t at, len;           /* the literal, sign included */
    bool neg;
    bool integer;             /* digits only (after an optional '-') */
} number;

/* `-`? (digits (`.` digits*)? ([eE] [+-]? digits)? | `nan` | `inf`) */
static ts_status scan_number(parser *p, number *num)
{
    ts_parse_skip_blank(p);
    const char *s = p->s;
    size_t at = p->pos, i = at, len = p->len;
    num->neg = i < len && s[i] == '-';
    if (num->neg) i++;
    num->integer = false;
    if (i < len && ts_parse_name_start((unsigned char)s[i])) {
        size_t w = i;
        while (i < len && ts_parse_name_char((unsigned char)s[i])) i++;
        if (!ts_parse_word_is(s + w, i - w, "nan") && !ts_parse_word_is(s + w, i - w, "inf")) return ts_parse_expected(p, "a number");
    } else {
        if (i >= len || !ts_parse_is_digit((unsigned char)s[i])) return ts_parse_expected(p, "a number");
        while (i < len && ts_parse_is_digit((unsigned char)s[i])) i++;
        num->integer = true;
        if (i < len && s[i] == '.') {
            num->integer = false;
            for (i++; i < len && ts_parse_is_digit((unsigned char)s[i]);) i++;
        }
        if (i < len && (s[i] == 'e' || s[i] == 'E')) {
            num->integer = false;
            i++;
            if (i < len && (s[i] == '+' || s[i] == '-')) i++;
            if (i >= len || !ts_parse_is_digit((unsigned char)s[i])) return PERR(p, at, "malformed number");
            while (i < len && ts_parse_is_digit((unsigned char)s[i])) i++;
        }
    }
    if (i < len && ts_parse_name_char((unsigned char)s[i])) {
        while (i < len && ts_parse_name_char((unsigned char)s[i])) i++;
        return PERR(p, at, "malformed number '%.*s'", SHOWN(i - at), s + at);
    }
    num->at = at;
    num->len = i - at;
    p->pos = i;
    return TS_OK;
}

/* The integer literal as sign and magnitude, so that both INT64_MIN and
 * UINT64_MAX are readable; it must lie in [-neg_max, pos_max]. */
static ts_status read_int(parser *p, const number *num, uint64_t neg_max, uint64_t pos_max,
                          const char *what, uint64_t *mag)
{
    const char *t = p->s + num->at;
    if (!num->integer) return PERR(p, num->at, "expected an integer for %s but found '%.*s'", what, SHOWN(num->len), t);
    uint64_t v = 0;
    bool over = false;
    for (size_t i = num->neg; i < num->len && !over; i++) {
        unsigned d = (unsigned)(t[i] - '0');
        over = v > (UINT64_MAX - d) / 10;
        v = v * 10 + d;
    }
    if (over || v > (num->neg ? neg_max : pos_max))
        return PERR(p, num->at, "%.*s is out of range for %s", SHOWN(num->len), t, what);
    *mag = v;
    return TS_OK;
}

static int64_t signed_of(bool neg, uint64_t mag)
{
    if (!neg) return (int64_t)mag;
    return mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
}

ts_status ts_parse_int64(parser *p, const char *what, int64_t *out)
{
    number num;
    uint64_t mag = 0;
    TS_TRY(scan_number(p, &num));
    TS_TRY(read_int(p, &num, (uint64_t)INT64_MAX + 1, INT64_MAX, what, &mag));
    *out = signed_of(num.neg, mag);
    return TS_OK;
}

/* A float literal through strtod (decimal, `nan`, `inf`, integers). */
ts_status ts_parse_double(parser *p, double *out)
{
    number num;
    TS_TRY(scan_number(p, &num));
    if (num.len > MAX_NUMBER) return PERR(p, num.at, "number literal longer than %d bytes", MAX_NUMBER);
    char text[MAX_NUMBER + 1];
    memcpy(text, p->s + num.at, num.len);
    text[num.len] = 0;
    *out = strtod(text, NULL);  /* the scanner admitted only what strtod reads whole */
    return TS_OK;
}

/* One element of dtype dt, written to base[i]. Floats round to dt as IEEE
 * 754 does; integers must be in dt's range; bool is 0, 1, false or true. */
ts_status ts_parse_elem(parser *p, ts_dtype dt, void *base, int64_t i)
{
    if (ts_dtype_is_fp(dt)) {
        double v = 0;
        TS_TRY(ts_parse_double(p, &v));
        ts_elem_set_f64(dt, base, i, v);
        return TS_OK;
    }
    ts_parse_skip_blank(p);
    size_t n = ts_parse_word_len(p);
    if (dt == TS_DTYPE_BOOL && (ts_parse_word_is(p->s + p->pos, n, "true") || ts_parse_word_is(p->s + p->pos, n, "false"))) {
        ts_elem_set_i64(dt, base, i, p->s[p->pos] == 't');
        p->pos += n;
        return TS_OK;
    }
    int bits = ts_dtype_bits(dt);
    bool sign = ts_dtype_is_signed(dt);
    uint64_t pos_max = dt == TS_DTYPE_BOOL ? 1 : bits == 64 ? (sign ? INT64_MAX : UINT64_MAX)
                     : (UINT64_C(1) << (bits - sign)) - 1;
    uint64_t neg_max = sign ? pos_max + 1 : 0, mag = 0;
    number num;
    TS_TRY(scan_number(p, &num));
    TS_TRY(read_int(p, &num, neg_max, pos_max, ts_dtype_name(dt), &mag));
    if (sign) ts_elem_set_i64(dt, base, i, signed_of(num.neg, mag));
    else ts_elem_set_u64(dt, base, i, mag);
    return TS_OK;
}
