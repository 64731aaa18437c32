/* parse.h — what the three files of the IR text parser share: parse.c (the
 * grammar: graph, regions, nodes, value names, types; the entry points),
 * parse_lex.c (errors with line:col, scratch vectors, tokens, numbers) and
 * parse_attr.c (attribute values, constant tensor literals). Not for use
 * outside src/ir/parse*.c. */
#ifndef TS_IR_PARSE_H
#define TS_IR_PARSE_H

#include "ir/ir.h"

enum {
    MAX_DEPTH = 64,           /* regions inside regions */
    MAX_LIST = 1 << 16,       /* operands of one node, entries of an ints list */
    MAX_RESULTS = 64,         /* the most results a shape rule produces */
    MAX_NUMBER = 127          /* bytes of one number literal */
};

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

/* Scratch vectors (heap, freed by their owner). */
typedef struct vec {
    void *data;
    size_t n, cap;
} vec;

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

static inline ts_type ts_parse_decl_type(decl *d)
{
    ts_type t = {d->dtype, d->rank, d->dims};
    return t;
}

/* The value of attribute k of a node of op, by its declared kind. */
typedef struct attr_ctx {
    ts_op op;
    ts_attr *attrs;
    decl *res;                /* the first declared result, or NULL */
} attr_ctx;

/* ---- errors (parse_lex.c) ------------------------------------------------ */

#define SHOWN(n) ((int)((n) > 40 ? 40 : (n)))   /* cap quoted text in messages */

/* Set p->err to "NAME:LINE:COL: message" for byte pos; returns code. */
ts_status ts_parse_fail(parser *p, size_t pos, ts_status code, const char *fmt, ...) TS_PRINTF(4, 5);
#define PERR(p, pos, ...) ts_parse_fail(p, pos, TS_ERR_PARSE, __VA_ARGS__)
ts_status ts_parse_oom(parser *p);
ts_status ts_parse_fail_from(parser *p, size_t pos, ts_status code, const ts_err *inner);

/* ---- scratch vectors (parse_lex.c) ---------------------------------------- */

void *ts_parse_vec_push(vec *v, size_t elem);
void ts_parse_vec_free(vec *v);

/* ---- lexing (parse_lex.c) ------------------------------------------------- */

static inline bool ts_parse_is_digit(int c) { return c >= '0' && c <= '9'; }
static inline bool ts_parse_name_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static inline bool ts_parse_name_char(int c) { return ts_parse_name_start(c) || ts_parse_is_digit(c) || c == '.'; }

/* The byte at pos, or -1 at the end. */
static inline int ts_parse_peek(const parser *p) { return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1; }

void ts_parse_skip_blank(parser *p);
size_t ts_parse_word_len(const parser *p);
bool ts_parse_word_is(const char *w, size_t n, const char *kw);
const char *ts_parse_found(const parser *p, char *buf, size_t cap);
ts_status ts_parse_expected(parser *p, const char *what);
bool ts_parse_accept(parser *p, char c);
ts_status ts_parse_expect(parser *p, char c);
ts_status ts_parse_word(parser *p, const char *what, const char **w, size_t *n);
bool ts_parse_dtype_named(const char *w, size_t n, ts_dtype *out);

/* ---- numbers (parse_lex.c) ------------------------------------------------ */

ts_status ts_parse_int64(parser *p, const char *what, int64_t *out);
ts_status ts_parse_double(parser *p, double *out);
ts_status ts_parse_elem(parser *p, ts_dtype dt, void *base, int64_t i);

/* ---- dims and types (parse.c) --------------------------------------------- */

ts_status ts_parse_dim(parser *p, ts_dim *out);
void ts_parse_type_text(char *buf, size_t cap, const ts_type *t);

/* ---- attributes (parse_attr.c) -------------------------------------------- */

ts_status ts_parse_attrs(parser *p, attr_ctx *c, size_t op_at);

#endif
