/* parse.c — reading the IR text form (docs/ir.md) into a graph.
 *
 * Recursive descent straight over the bytes: every read is checked against
 * len, and the only recursion is through regions, capped at MAX_DEPTH (dim
 * expressions carry their own cap in sym.c). Line breaks are blanks; the
 * structure of the grammar alone separates statements. Nodes are made by
 * the ordinary builder (ts_ir_node_new runs the shape rules), so a graph
 * read from text is checked exactly like one built in C. Every error reads
 * "NAME:LINE:COL: message"; a failed parse frees everything it made. */
#include "ir/ir.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_DEPTH = 64,           /* regions inside regions */
    MAX_LIST = 1 << 16,       /* operands of one node, entries of an ints list */
    MAX_RESULTS = 64,         /* the most results a shape rule produces */
    MAX_NUMBER = 127          /* bytes of one number literal */
};
/* A splat constant is filled in memory; this keeps a typo in its type from
 * asking for terabytes. Listed constants are bounded by the text itself. */
#define MAX_SPLAT (INT64_C(1) << 26)

typedef struct parser {
    const char *s;
    size_t len, pos;
    const char *name;          /* labels messages */
    ts_graph *g;
    ts_err *err;
    ts_value **names;          /* open addressing on value->name; cap a power of 2 */
    size_t names_cap, names_count;
    ts_block *open[MAX_DEPTH + 1];  /* the blocks being read, outermost first */
    int n_open;
} parser;

/* ---- errors ------------------------------------------------------------- */

#define SHOWN(n) ((int)((n) > 40 ? 40 : (n)))   /* cap quoted text in messages */

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

static ts_status fail(parser *p, size_t pos, ts_status code, const char *fmt, ...) TS_PRINTF(4, 5);
static ts_status fail(parser *p, size_t pos, ts_status code, const char *fmt, ...)
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

#define PERR(p, pos, ...) fail(p, pos, TS_ERR_PARSE, __VA_ARGS__)

static ts_status oom(parser *p) { return fail(p, p->pos, TS_ERR_OOM, "out of memory"); }

/* Re-issue an error of a callee (builder, shape rule) at a text position,
 * keeping its code. */
static ts_status fail_from(parser *p, size_t pos, ts_status code, const ts_err *inner)
{
    return fail(p, pos, code, "%s", inner->msg[0] ? inner->msg : ts_status_name(code));
}

/* ---- scratch vectors (heap, freed by their owner) ------------------------ */

typedef struct vec {
    void *data;
    size_t n, cap;
} vec;

/* A zeroed new last element, or NULL when memory runs out. */
static void *vec_push(vec *v, size_t elem)
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

static void vec_free(vec *v)
{
    ts_mem_free(v->data);
    memset(v, 0, sizeof *v);
}

/* ---- lexing ---------------------------------------------------------------- */

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool name_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool name_char(int c) { return name_start(c) || is_digit(c) || c == '.'; }

static int peek(const parser *p) { return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1; }

/* Blanks are spaces, tabs, line breaks and `#` comments. */
static void skip_blank(parser *p)
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
static size_t word_len(const parser *p)
{
    size_t n = 0;
    while (p->pos + n < p->len && name_char((unsigned char)p->s[p->pos + n])) n++;
    return n;
}

static bool word_is(const char *w, size_t n, const char *kw)
{
    return strlen(kw) == n && memcmp(w, kw, n) == 0;
}

/* What stands at pos, for "expected X but found Y". */
static const char *found(const parser *p, char *buf, size_t cap)
{
    int c = peek(p);
    size_t n = word_len(p);
    if (c < 0) return "end of input";
    if (n) snprintf(buf, cap, "'%.*s'", SHOWN(n), p->s + p->pos);
    else if (c >= 0x20 && c < 0x7f) snprintf(buf, cap, "'%c'", c);
    else snprintf(buf, cap, "byte 0x%02x", (unsigned)c);
    return buf;
}

static ts_status expected(parser *p, const char *what)
{
    char buf[64];
    return PERR(p, p->pos, "expected %s but found %s", what, found(p, buf, sizeof buf));
}

static bool accept(parser *p, char c)
{
    skip_blank(p);
    if (peek(p) != (unsigned char)c) return false;
    p->pos++;
    return true;
}

static ts_status expect(parser *p, char c)
{
    if (accept(p, c)) return TS_OK;
    char what[8];
    snprintf(what, sizeof what, "'%c'", c);
    return expected(p, what);
}

/* A NAME ([A-Za-z_][A-Za-z0-9_.]*); `what` describes it in the message. */
static ts_status parse_word(parser *p, const char *what, const char **w, size_t *n)
{
    skip_blank(p);
    size_t len = word_len(p);
    if (!len || !name_start(peek(p))) return expected(p, what);
    *w = p->s + p->pos;
    *n = len;
    p->pos += len;
    return TS_OK;
}

static bool dtype_named(const char *w, size_t n, ts_dtype *out)
{
    for (int i = 0; i < TS_DTYPE_COUNT; i++)
        if (word_is(w, n, ts_dtype_name((ts_dtype)i))) {
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
    skip_blank(p);
    const char *s = p->s;
    size_t at = p->pos, i = at, len = p->len;
    num->neg = i < len && s[i] == '-';
    if (num->neg) i++;
    num->integer = false;
    if (i < len && name_start((unsigned char)s[i])) {
        size_t w = i;
        while (i < len && name_char((unsigned char)s[i])) i++;
        if (!word_is(s + w, i - w, "nan") && !word_is(s + w, i - w, "inf")) return expected(p, "a number");
    } else {
        if (i >= len || !is_digit((unsigned char)s[i])) return expected(p, "a number");
        while (i < len && is_digit((unsigned char)s[i])) i++;
        num->integer = true;
        if (i < len && s[i] == '.') {
            num->integer = false;
            for (i++; i < len && is_digit((unsigned char)s[i]);) i++;
        }
        if (i < len && (s[i] == 'e' || s[i] == 'E')) {
            num->integer = false;
            i++;
            if (i < len && (s[i] == '+' || s[i] == '-')) i++;
            if (i >= len || !is_digit((unsigned char)s[i])) return PERR(p, at, "malformed number");
            while (i < len && is_digit((unsigned char)s[i])) i++;
        }
    }
    if (i < len && name_char((unsigned char)s[i])) {
        while (i < len && name_char((unsigned char)s[i])) i++;
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

static ts_status parse_int64(parser *p, const char *what, int64_t *out)
{
    number num;
    uint64_t mag = 0;
    TS_TRY(scan_number(p, &num));
    TS_TRY(read_int(p, &num, (uint64_t)INT64_MAX + 1, INT64_MAX, what, &mag));
    *out = signed_of(num.neg, mag);
    return TS_OK;
}

/* A float literal through strtod (decimal, `nan`, `inf`, integers). */
static ts_status parse_double(parser *p, double *out)
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
static ts_status parse_elem(parser *p, ts_dtype dt, void *base, int64_t i)
{
    if (ts_dtype_is_float(dt)) {
        double v = 0;
        TS_TRY(parse_double(p, &v));
        ts_elem_set_f64(dt, base, i, v);
        return TS_OK;
    }
    skip_blank(p);
    size_t n = word_len(p);
    if (dt == TS_DTYPE_BOOL && (word_is(p->s + p->pos, n, "true") || word_is(p->s + p->pos, n, "false"))) {
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

/* ---- dims and types ------------------------------------------------------------ */

/* sym.c reports "offset N: reason"; the position goes into our prefix. */
static const char *dim_reason(const char *msg)
{
    if (strncmp(msg, "offset ", 7) != 0) return msg;
    const char *colon = strstr(msg, ": ");
    return colon ? colon + 2 : msg;
}

static ts_status parse_dim(parser *p, ts_dim *out)
{
    skip_blank(p);
    size_t at = p->pos, used = 0;
    ts_err inner = {0};
    ts_status s = ts_dim_parse(p->g->syms, p->s + at, p->len - at, out, &used, &inner);
    if (s != TS_OK)
        return fail(p, at + used, s == TS_ERR_OOM ? s : TS_ERR_PARSE, "%s",
                    inner.msg[0] ? dim_reason(inner.msg) : "malformed dim");
    if (used == 0) return expected(p, "a dim");
    p->pos = at + used;
    return TS_OK;
}

static ts_status parse_type(parser *p, ts_dtype *dt, int *rank, ts_dim *dims)
{
    const char *w;
    size_t n;
    skip_blank(p);
    size_t at = p->pos;
    TS_TRY(parse_word(p, "a type such as f32[2, 3]", &w, &n));
    if (!dtype_named(w, n, dt)) return PERR(p, at, "unknown dtype '%.*s'", SHOWN(n), w);
    TS_TRY(expect(p, '['));
    *rank = 0;
    if (accept(p, ']')) return TS_OK;
    do {
        skip_blank(p);
        if (*rank == TS_MAX_RANK) return PERR(p, p->pos, "a type has at most %d dims", TS_MAX_RANK);
        size_t dim_at = p->pos;
        TS_TRY(parse_dim(p, &dims[*rank]));
        if (ts_dim_is_const(dims[*rank]) && dims[*rank].c < 0)
            return PERR(p, dim_at, "negative dimension %" PRId64, dims[*rank].c);
        (*rank)++;
    } while (accept(p, ','));
    return expect(p, ']');
}

static void type_text(char *buf, size_t cap, const ts_type *t)
{
    ts_buf b = {0};
    ts_type_print(&b, t);
    snprintf(buf, cap, "%s", b.data ? b.data : "?");
    ts_buf_free(&b);
}

/* ---- value names ----------------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001b3);
    return h;
}

static ts_value **name_slot(ts_value **tab, size_t cap, const char *w, size_t n)
{
    size_t i = (size_t)hash_bytes(w, n) & (cap - 1);
    while (tab[i] && !(strncmp(tab[i]->name, w, n) == 0 && tab[i]->name[n] == 0)) i = (i + 1) & (cap - 1);
    return &tab[i];
}

static ts_value *lookup(parser *p, const char *w, size_t n)
{
    return p->names_cap ? *name_slot(p->names, p->names_cap, w, n) : NULL;
}

static bool grow_names(parser *p)
{
    size_t cap = p->names_cap ? p->names_cap * 2 : 64, bytes;
    if (!ts_size_mul(cap, sizeof(ts_value *), &bytes)) return false;
    ts_value **tab = ts_mem_zalloc(bytes);
    if (!tab) return false;
    for (size_t i = 0; i < p->names_cap; i++) {
        ts_value *v = p->names[i];
        if (v) *name_slot(tab, cap, v->name, strlen(v->name)) = v;
    }
    ts_mem_free(p->names);
    p->names = tab;
    p->names_cap = cap;
    return true;
}

/* Name v and make it findable. Names are unique in the whole graph. */
static ts_status define(parser *p, ts_value *v, const char *w, size_t n, size_t at)
{
    if (lookup(p, w, n)) return PERR(p, at, "value %%%.*s is defined twice", SHOWN(n), w);
    if (p->names_count + 1 > p->names_cap / 2 && !grow_names(p)) return oom(p);
    v->name = ts_arena_strndup(p->g->arena, w, n);
    if (!v->name) return oom(p);
    *name_slot(p->names, p->names_cap, w, n) = v;
    p->names_count++;
    return TS_OK;
}

/* `%name` or `%123`, no blank after '%'. *at is the offset of the '%'. */
static ts_status parse_value_name(parser *p, const char **w, size_t *n, size_t *at)
{
    skip_blank(p);
    *at = p->pos;
    if (peek(p) != '%') return expected(p, "a value (%name)");
    p->pos++;
    size_t len = word_len(p);
    if (!ts_ir_name_ok(p->s + p->pos, len, true))
        return PERR(p, *at, "'%%%.*s' is not a value name: after '%%' comes a letter or '_' and then "
                    "letters, digits, '_' or '.', or only digits", SHOWN(len), p->s + p->pos);
    *w = p->s + p->pos;
    *n = len;
    p->pos += len;
    return TS_OK;
}

static ts_block *block_of(const ts_value *v)
{
    return v->param_of ? v->param_of : v->def ? v->def->block : NULL;
}

/* A use of a value: defined earlier, in the very block being read. */
static ts_status parse_use(parser *p, ts_value **out)
{
    const char *w;
    size_t n, at;
    TS_TRY(parse_value_name(p, &w, &n, &at));
    ts_value *v = lookup(p, w, n);
    if (!v) return PERR(p, at, "use of undefined value %%%.*s", SHOWN(n), w);
    ts_block *b = block_of(v);
    if (b != p->open[p->n_open - 1]) {
        for (int i = 0; i < p->n_open; i++)
            if (p->open[i] == b)
                return PERR(p, at, "%%%.*s is defined outside this region; regions are isolated from "
                            "above, so pass it in as an operand", SHOWN(n), w);
        return PERR(p, at, "%%%.*s is defined inside another region and is not visible here", SHOWN(n), w);
    }
    *out = v;
    return TS_OK;
}

/* `%a, %b, ...` into vals (ts_value *), at most MAX_LIST. */
static ts_status parse_uses(parser *p, vec *vals)
{
    do {
        ts_value **slot = vals->n < MAX_LIST ? vec_push(vals, sizeof *slot) : NULL;
        if (!slot && vals->n >= MAX_LIST) return PERR(p, p->pos, "more than %d values in one list", MAX_LIST);
        if (!slot) return oom(p);
        TS_TRY(parse_use(p, slot));
    } while (accept(p, ','));
    return TS_OK;
}

/* `(%x: type, ...)`: parameters of block b. */
static ts_status parse_params(parser *p, ts_block *b)
{
    TS_TRY(expect(p, '('));
    if (accept(p, ')')) return TS_OK;
    do {
        const char *w;
        size_t n, at;
        ts_dim dims[TS_MAX_RANK];
        ts_type t = {TS_DTYPE_F32, 0, dims};
        ts_value *v;
        ts_err inner = {0};
        TS_TRY(parse_value_name(p, &w, &n, &at));
        TS_TRY(expect(p, ':'));
        TS_TRY(parse_type(p, &t.dtype, &t.rank, dims));
        ts_status s = ts_ir_block_add_param(p->g, b, &t, &v, &inner);
        if (s != TS_OK) return fail_from(p, at, s, &inner);
        TS_TRY(define(p, v, w, n, at));
    } while (accept(p, ','));
    return expect(p, ')');
}

/* ---- attributes -------------------------------------------------------------------- */

/* A node's results as written: `%name` and, if given, `: type`. */
typedef struct decl {
    size_t at;
    const char *name;
    size_t len;
    bool typed;
    ts_dtype dtype;
    int rank;
    ts_dim dims[TS_MAX_RANK];
} decl;

static ts_type decl_type(decl *d)
{
    ts_type t = {d->dtype, d->rank, d->dims};
    return t;
}

static ts_status parse_string(parser *p, vec *chars)
{
    skip_blank(p);
    size_t at = p->pos;
    if (peek(p) != '"') return expected(p, "a string");
    for (p->pos++;;) {
        if (p->pos >= p->len) return PERR(p, at, "unterminated string");
        size_t here = p->pos;
        unsigned char c = (unsigned char)p->s[p->pos++];
        if (c == '"') break;
        if (c == '\n') return PERR(p, here, "line break inside a string (write \\n)");
        if (c < 0x20 || c == 0x7f) return PERR(p, here, "control byte 0x%02x inside a string (write \\x%02x)", c, c);
        if (c == '\\') {
            int e = peek(p);
            p->pos++;
            if (e == 'n') c = '\n';
            else if (e == 't') c = '\t';
            else if (e == '"' || e == '\\') c = (unsigned char)e;
            else if (e == 'x') {
                unsigned v = 0;
                for (int k = 0; k < 2; k++, p->pos++) {
                    int h = peek(p);
                    int d = is_digit(h) ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                    if (d < 0) return PERR(p, here, "\\x takes two hex digits");
                    v = v * 16 + (unsigned)d;
                }
                if (v == 0) return PERR(p, here, "a string cannot hold a NUL byte");
                c = (unsigned char)v;
            } else {
                return PERR(p, here, "unknown escape in a string (use \\\" \\\\ \\n \\t \\xHH)");
            }
        }
        char *slot = vec_push(chars, 1);
        if (!slot) return oom(p);
        *slot = (char)c;
    }
    char *end = vec_push(chars, 1);
    return end ? TS_OK : oom(p);
}

static ts_status parse_ints(parser *p, vec *ints)
{
    TS_TRY(expect(p, '['));
    if (accept(p, ']')) return TS_OK;
    do {
        if (ints->n == MAX_LIST) return PERR(p, p->pos, "more than %d entries in one list", MAX_LIST);
        int64_t *slot = vec_push(ints, sizeof *slot);
        if (!slot) return oom(p);
        TS_TRY(parse_int64(p, "an int64", slot));
    } while (accept(p, ','));
    return expect(p, ']');
}

static ts_status parse_dims(parser *p, ts_dim *dims, int *n)
{
    TS_TRY(expect(p, '['));
    *n = 0;
    if (accept(p, ']')) return TS_OK;
    do {
        skip_blank(p);
        if (*n == TS_MAX_RANK) return PERR(p, p->pos, "a dims list has at most %d entries", TS_MAX_RANK);
        TS_TRY(parse_dim(p, &dims[(*n)++]));
    } while (accept(p, ','));
    return expect(p, ']');
}

/* The constant's shape from the declared type; it must be constant. */
static ts_status const_shape(parser *p, size_t at, decl *res, int64_t *shape, int64_t *numel)
{
    if (!res || !res->typed)
        return PERR(p, at, "a tensor attribute takes its dtype and shape from the node's declared "
                    "result type, and none is declared");
    *numel = 1;
    for (int i = 0; i < res->rank; i++) {
        if (!ts_dim_is_const(res->dims[i])) {
            char t[160];
            ts_type ty = decl_type(res);
            type_text(t, sizeof t, &ty);
            return PERR(p, at, "a constant needs a constant shape, not %s", t);
        }
        shape[i] = res->dims[i].c;
        if (!ts_i64_mul(*numel, shape[i], numel)) return PERR(p, at, "the constant's element count overflows");
    }
    return TS_OK;
}

static ts_status new_tensor(parser *p, size_t at, decl *res, const int64_t *shape, ts_tensor **out)
{
    ts_err inner = {0};
    ts_status s = ts_tensor_new(res->dtype, res->rank, shape, out, &inner);
    return s == TS_OK ? s : fail_from(p, at, s, &inner);
}

/* `splat(x)`: every element x. */
static ts_status parse_splat(parser *p, size_t at, decl *res, const int64_t *shape, int64_t numel,
                             ts_tensor **out)
{
    unsigned char one[8];
    size_t size = ts_dtype_size(res->dtype);
    TS_TRY(expect(p, '('));
    TS_TRY(parse_elem(p, res->dtype, one, 0));
    TS_TRY(expect(p, ')'));
    if (numel > MAX_SPLAT)
        return PERR(p, at, "a splat constant of %" PRId64 " elements is over the text form's limit of %" PRId64,
                    numel, MAX_SPLAT);
    TS_TRY(new_tensor(p, at, res, shape, out));
    for (int64_t i = 0; i < numel; i++) memcpy((char *)(*out)->data + (size_t)i * size, one, size);
    return TS_OK;
}

/* `[e, e, ...]`: exactly numel elements, row-major. The elements are read
 * before the tensor is made, so a wrong count never allocates numel. */
static ts_status parse_elems(parser *p, size_t at, decl *res, const int64_t *shape, int64_t numel,
                             vec *bytes, ts_tensor **out)
{
    size_t size = ts_dtype_size(res->dtype);
    int64_t count = 0;
    char t[160];
    ts_type ty = decl_type(res);
    TS_TRY(expect(p, '['));
    if (!accept(p, ']')) {
        do {
            skip_blank(p);
            if (count == numel) {
                type_text(t, sizeof t, &ty);
                return PERR(p, p->pos, "more than %" PRId64 " elements for %s", numel, t);
            }
            for (size_t k = 0; k < size; k++)
                if (!vec_push(bytes, 1)) return oom(p);
            TS_TRY(parse_elem(p, res->dtype, bytes->data, count++));
        } while (accept(p, ','));
        TS_TRY(expect(p, ']'));
    }
    if (count != numel) {
        type_text(t, sizeof t, &ty);
        return PERR(p, at, "%" PRId64 " elements for %s, which holds %" PRId64, count, t, numel);
    }
    TS_TRY(new_tensor(p, at, res, shape, out));
    if (count) memcpy((*out)->data, bytes->data, (size_t)count * size);
    return TS_OK;
}

static ts_status parse_tensor(parser *p, decl *res, ts_tensor **out)
{
    skip_blank(p);
    size_t at = p->pos;
    int64_t shape[TS_MAX_RANK], numel;
    TS_TRY(const_shape(p, at, res, shape, &numel));
    if (word_is(p->s + p->pos, word_len(p), "splat")) {
        p->pos += 5;
        return parse_splat(p, at, res, shape, numel, out);
    }
    vec bytes = {0};
    ts_status s = parse_elems(p, at, res, shape, numel, &bytes, out);
    vec_free(&bytes);
    return s;
}

/* The value of attribute k of a node of op, by its declared kind. */
typedef struct attr_ctx {
    ts_op op;
    ts_attr *attrs;
    decl *res;                /* the first declared result, or NULL */
} attr_ctx;

static ts_status set_failed(parser *p, size_t at, ts_status s)
{
    return s == TS_OK ? s : fail(p, at, s, "%s", s == TS_ERR_OOM ? "out of memory" : "cannot set the attribute");
}

static ts_status parse_word_attr(parser *p, const ts_attr_schema *s, ts_attr *a)
{
    const char *w;
    size_t n;
    skip_blank(p);
    size_t at = p->pos;
    TS_TRY(parse_word(p, s->kind == TS_ATTR_DTYPE ? "a dtype" : "a word", &w, &n));
    if (s->kind == TS_ATTR_DTYPE) {
        ts_dtype dt;
        if (!dtype_named(w, n, &dt)) return PERR(p, at, "unknown dtype '%.*s'", SHOWN(n), w);
        a->i = dt;
        return TS_OK;
    }
    for (int k = 0; k < s->n_enum; k++)
        if (word_is(w, n, s->enum_names[k])) {
            a->i = k;
            return TS_OK;
        }
    char opts[200] = "";
    for (int k = 0; k < s->n_enum; k++)
        snprintf(opts + strlen(opts), sizeof opts - strlen(opts), "%s%s", k ? ", " : "", s->enum_names[k]);
    return PERR(p, at, "'%.*s' is not a value of %s (one of: %s)", SHOWN(n), w, s->name, opts);
}

static ts_status parse_attr_value(parser *p, attr_ctx *c, int k)
{
    const ts_attr_schema *s = &ts_op_get(c->op)->attrs[k];
    ts_attr *a = &c->attrs[k];
    skip_blank(p);
    size_t at = p->pos;
    vec buf = {0};
    ts_status st = TS_OK;
    switch (s->kind) {
    case TS_ATTR_INT:
        return parse_int64(p, s->name, &a->i);
    case TS_ATTR_FLOAT:
        return parse_double(p, &a->f);
    case TS_ATTR_DTYPE: case TS_ATTR_ENUM:
        return parse_word_attr(p, s, a);
    case TS_ATTR_STR:
        st = parse_string(p, &buf);
        if (st == TS_OK) st = set_failed(p, at, ts_attr_set_str(p->g, c->op, c->attrs, s->name, buf.data));
        break;
    case TS_ATTR_INTS:
        st = parse_ints(p, &buf);
        if (st == TS_OK)
            st = set_failed(p, at, ts_attr_set_ints(p->g, c->op, c->attrs, s->name, (int)buf.n, buf.data));
        break;
    case TS_ATTR_DIMS: {
        ts_dim dims[TS_MAX_RANK];
        int n = 0;
        st = parse_dims(p, dims, &n);
        if (st == TS_OK) st = set_failed(p, at, ts_attr_set_dims(p->g, c->op, c->attrs, s->name, n, dims));
        break;
    }
    case TS_ATTR_TENSOR: {
        ts_tensor *t = NULL;
        st = parse_tensor(p, c->res, &t);
        if (st == TS_OK) st = set_failed(p, at, ts_attr_set_tensor(p->g, c->op, c->attrs, s->name, t));
        ts_tensor_release(t);  /* the graph holds its own reference */
        break;
    }
    }
    vec_free(&buf);
    return st;
}

static int attr_named(const ts_op_info *info, const char *w, size_t n)
{
    for (int k = 0; k < info->n_attrs; k++)
        if (word_is(w, n, info->attrs[k].name)) return k;
    return -1;
}

static ts_status unknown_attr(parser *p, size_t at, const ts_op_info *info, const char *w, size_t n)
{
    char names[200] = "";
    for (int k = 0; k < info->n_attrs; k++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "", info->attrs[k].name);
    if (!info->n_attrs) return PERR(p, at, "%s has no attributes, but '%.*s' is given", info->name, SHOWN(n), w);
    return PERR(p, at, "%s has no attribute '%.*s' (it has: %s)", info->name, SHOWN(n), w, names);
}

/* ` {name=value, ...}` in any order; then every attribute without a
 * default must have been given. */
static ts_status parse_attrs(parser *p, attr_ctx *c, size_t op_at)
{
    const ts_op_info *info = ts_op_get(c->op);
    bool seen[TS_MAX_ATTRS] = {0};
    if (accept(p, '{') && !accept(p, '}')) {
        do {
            const char *w;
            size_t n;
            skip_blank(p);
            size_t at = p->pos;
            TS_TRY(parse_word(p, "an attribute name", &w, &n));
            int k = attr_named(info, w, n);
            if (k < 0) return unknown_attr(p, at, info, w, n);
            if (seen[k]) return PERR(p, at, "attribute '%s' is given twice", info->attrs[k].name);
            seen[k] = true;
            TS_TRY(expect(p, '='));
            TS_TRY(parse_attr_value(p, c, k));
        } while (accept(p, ','));
        TS_TRY(expect(p, '}'));
    }
    for (int k = 0; k < info->n_attrs; k++)
        if (!seen[k] && !info->attrs[k].has_default)
            return PERR(p, op_at, "%s needs attribute '%s'", info->name, info->attrs[k].name);
    return TS_OK;
}

/* ---- blocks and nodes ---------------------------------------------------------------- */

static ts_status parse_body(parser *p, ts_block *b, const char *end);

/* `name(%p: type, ...) { body yield ... }`: region r of op. */
static ts_status parse_region(parser *p, ts_op op, int r, ts_block **out)
{
    const char *want = ts_op_get(op)->region_names[r];
    skip_blank(p);
    size_t at = p->pos, n = word_len(p);
    if (!word_is(p->s + at, n, want)) {
        char buf[64];
        return PERR(p, at, "expected region '%s' of %s but found %s", want, ts_op_get(op)->name,
                    found(p, buf, sizeof buf));
    }
    p->pos += n;
    if (p->n_open > MAX_DEPTH) return PERR(p, at, "regions nest more than %d deep", MAX_DEPTH);
    ts_err inner = {0};
    ts_status s = ts_ir_block_new(p->g, out, &inner);
    if (s != TS_OK) return fail_from(p, at, s, &inner);
    p->open[p->n_open++] = *out;
    s = parse_params(p, *out);
    if (s == TS_OK) s = expect(p, '{');
    if (s == TS_OK) s = parse_body(p, *out, "yield");
    p->n_open--;
    return s;
}

/* A declared result type must be the inferred one, except that an op
 * inventing sizes (TS_OPF_FRESH) takes the written symbol for its fresh
 * one, so that round trips keep the names. */
static ts_status check_declared(parser *p, const ts_node *n, decl *d, ts_value *v)
{
    ts_type want = decl_type(d);
    bool fresh = ts_op_get(n->op)->flags & TS_OPF_FRESH;
    bool ok = want.dtype == v->type.dtype && want.rank == v->type.rank;
    for (int i = 0; ok && i < want.rank; i++)
        ok = ts_dim_eq(want.dims[i], v->type.dims[i]) ||
             (fresh && ts_dim_sym_name(v->type.dims[i]) && ts_dim_sym_name(want.dims[i]));
    if (!ok) {
        char a[160], b[160];
        type_text(a, sizeof a, &want);
        type_text(b, sizeof b, &v->type);
        return fail(p, d->at, TS_ERR_SHAPE, "%%%.*s is declared %s but %s yields %s%s", SHOWN(d->len), d->name, a,
                    ts_op_get(n->op)->name, b, fresh ? " (a data-dependent size is written as a symbol)" : "");
    }
    if (fresh && want.rank) memcpy(v->type.dims, want.dims, sizeof(ts_dim) * (size_t)want.rank);
    return TS_OK;
}

/* What one node line collects before the node can be made. */
typedef struct line {
    vec decls;                /* decl */
    vec ins;                  /* ts_value * */
    ts_op op;
    size_t op_at;
    ts_block *regions[TS_MAX_REGIONS];
} line;

static ts_status parse_results(parser *p, line *l)
{
    skip_blank(p);
    if (peek(p) != '%') return TS_OK;  /* a node without results (send) */
    do {
        if (l->decls.n == MAX_RESULTS) return PERR(p, p->pos, "more than %d results on one line", MAX_RESULTS);
        decl *d = vec_push(&l->decls, sizeof *d);
        if (!d) return oom(p);
        TS_TRY(parse_value_name(p, &d->name, &d->len, &d->at));
        d->typed = accept(p, ':');
        if (d->typed) TS_TRY(parse_type(p, &d->dtype, &d->rank, d->dims));
    } while (accept(p, ','));
    return expect(p, '=');
}

/* Give the new node's results their written names and types. */
static ts_status bind_results(parser *p, line *l, ts_node *n)
{
    decl *d = l->decls.data;
    if ((int)l->decls.n != n->n_out)
        return PERR(p, l->op_at, "%s yields %d result%s but the line names %zu", ts_op_get(l->op)->name, n->n_out,
                    n->n_out == 1 ? "" : "s", l->decls.n);
    for (int i = 0; i < n->n_out; i++) {
        if (d[i].typed) TS_TRY(check_declared(p, n, &d[i], n->out[i]));
        TS_TRY(define(p, n->out[i], d[i].name, d[i].len, d[i].at));
    }
    return TS_OK;
}

static ts_status parse_line(parser *p, ts_block *b, line *l)
{
    const char *w;
    size_t n;
    TS_TRY(parse_results(p, l));
    skip_blank(p);
    l->op_at = p->pos;
    TS_TRY(parse_word(p, "an op name", &w, &n));
    if (!ts_op_from_name(w, n, &l->op)) return PERR(p, l->op_at, "unknown op '%.*s'", SHOWN(n), w);
    const ts_op_info *info = ts_op_get(l->op);
    TS_TRY(expect(p, '('));
    if (!accept(p, ')')) {
        TS_TRY(parse_uses(p, &l->ins));
        TS_TRY(expect(p, ')'));
    }
    attr_ctx c = {l->op, ts_ir_attrs_new(p->g, l->op), l->decls.n ? l->decls.data : NULL};
    if (!c.attrs) return oom(p);
    TS_TRY(parse_attrs(p, &c, l->op_at));
    for (int r = 0; r < info->n_regions; r++) TS_TRY(parse_region(p, l->op, r, &l->regions[r]));
    ts_node *node;
    ts_err inner = {0};
    ts_status s = ts_ir_node_new(p->g, b, NULL, l->op, (int)l->ins.n, l->ins.data, c.attrs, info->n_regions,
                                 l->regions, &node, &inner);
    if (s != TS_OK) return fail_from(p, l->op_at, s, &inner);
    return bind_results(p, l, node);
}

static ts_status parse_node(parser *p, ts_block *b)
{
    line l = {0};
    ts_status s = parse_line(p, b, &l);
    vec_free(&l.decls);
    vec_free(&l.ins);
    return s;
}

/* Nodes up to the `end` keyword (return/yield), its values, and '}'. */
static ts_status parse_body(parser *p, ts_block *b, const char *end)
{
    for (;;) {
        skip_blank(p);
        size_t at = p->pos, n = word_len(p);
        const char *w = p->s + at;
        if (word_is(w, n, end)) {
            p->pos += n;
            break;
        }
        if (word_is(w, n, "return") || word_is(w, n, "yield"))
            return PERR(p, at, "'%.*s' here: the graph body ends with 'return' and a region with 'yield'",
                        (int)n, w);
        if (peek(p) < 0 || peek(p) == '}') {
            char what[40];
            snprintf(what, sizeof what, "a node or '%s'", end);
            return expected(p, what);
        }
        TS_TRY(parse_node(p, b));
    }
    vec vals = {0};
    ts_err inner = {0};
    skip_blank(p);
    size_t at = p->pos;
    ts_status s = peek(p) == '%' ? parse_uses(p, &vals) : TS_OK;
    if (s == TS_OK) {
        s = ts_ir_block_set_results(p->g, b, (int)vals.n, vals.data, &inner);
        if (s != TS_OK) s = fail_from(p, at, s, &inner);
    }
    vec_free(&vals);
    TS_TRY(s);
    return expect(p, '}');
}

/* `graph @name(params) { body return ... }` and nothing after it. */
static ts_status parse_graph(parser *p)
{
    const char *w;
    size_t n;
    skip_blank(p);
    if (!word_is(p->s + p->pos, word_len(p), "graph")) return expected(p, "'graph'");
    p->pos += 5;
    TS_TRY(expect(p, '@'));
    if (p->pos >= p->len || !name_start(peek(p))) return expected(p, "a graph name right after '@'");
    TS_TRY(parse_word(p, "a graph name", &w, &n));
    p->g->name = ts_arena_strndup(p->g->arena, w, n);
    if (!p->g->name) return oom(p);
    p->open[0] = p->g->body;
    p->n_open = 1;
    TS_TRY(parse_params(p, p->g->body));
    TS_TRY(expect(p, '{'));
    TS_TRY(parse_body(p, p->g->body, "return"));
    skip_blank(p);
    if (p->pos < p->len) return expected(p, "the end of the text after the graph");
    return TS_OK;
}

/* ---- entry points ---------------------------------------------------------------------- */

ts_status ts_graph_parse(const char *text, size_t len, const char *name, ts_graph **out, ts_err *err)
{
    if (!out || (!text && len)) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_graph_parse: NULL argument");
    *out = NULL;
    parser p = {.s = text ? text : "", .len = len, .name = name ? name : "<input>", .err = err};
    const char *nul = memchr(p.s, 0, len);
    if (nul) return PERR(&p, (size_t)(nul - p.s), "NUL byte in the text");
    TS_TRY(ts_ir_graph_new("main", &p.g, err));
    ts_status s = parse_graph(&p);
    if (s == TS_OK) {
        /* the safety net: a graph the builder accepted should always verify */
        ts_err inner = {0};
        s = ts_ir_verify(p.g, &inner);
        if (s != TS_OK) ts_err_set(err, s, "%s: %s", p.name, inner.msg);
    }
    ts_mem_free(p.names);
    if (s != TS_OK) {
        ts_graph_free(p.g);
        return s;
    }
    *out = p.g;
    return TS_OK;
}

/* The whole of f in one ts_mem buffer (not NUL-terminated). */
static ts_status read_all(FILE *f, const char *path, char **data, size_t *len, ts_err *err)
{
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (n == cap) {
            size_t bigger = cap ? cap * 2 : 65536;
            char *b = bigger > cap ? ts_mem_realloc(buf, bigger) : NULL;
            if (!b) {
                ts_mem_free(buf);
                return ts_err_set(err, TS_ERR_OOM, "out of memory reading '%s'", path);
            }
            buf = b;
            cap = bigger;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        int e = errno;
        ts_mem_free(buf);
        return ts_err_set(err, TS_ERR_IO, "cannot read '%s': %s", path, e ? strerror(e) : "read error");
    }
    *data = buf;
    *len = n;
    return TS_OK;
}

ts_status ts_graph_load_file(const char *path, ts_graph **out, ts_err *err)
{
    if (!path || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_graph_load_file: NULL argument");
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return ts_err_set(err, TS_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    char *data = NULL;
    size_t len = 0;
    errno = 0;
    ts_status s = read_all(f, path, &data, &len, err);
    fclose(f);
    if (s != TS_OK) return s;
    s = ts_graph_parse(data, len, path, out, err);
    ts_mem_free(data);
    return s;
}
