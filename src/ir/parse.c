/* parse.c — reading the IR text form (docs/ir.md) into a graph.
 *
 * Recursive descent straight over the bytes: every read is checked against
 * len, and the only recursion is through regions, capped at MAX_DEPTH (dim
 * expressions carry their own cap in sym.c). Line breaks are blanks; the
 * structure of the grammar alone separates statements. Nodes are made by
 * the ordinary builder (ts_ir_node_new runs the shape rules), so a graph
 * read from text is checked exactly like one built in C. Every error reads
 * "NAME:LINE:COL: message"; a failed parse frees everything it made.
 *
 * This file holds the grammar (graph, regions, nodes, value names, types)
 * and the entry points; tokens, numbers and error reporting are in
 * parse_lex.c, attribute values and constant tensors in parse_attr.c, and
 * what they share in parse.h. */
#include "ir/parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dims and types ------------------------------------------------------------ */

/* sym.c reports "offset N: reason"; the position goes into our prefix. */
static const char *dim_reason(const char *msg)
{
    if (strncmp(msg, "offset ", 7) != 0) return msg;
    const char *colon = strstr(msg, ": ");
    return colon ? colon + 2 : msg;
}

ts_status ts_parse_dim(parser *p, ts_dim *out)
{
    ts_parse_skip_blank(p);
    size_t at = p->pos, used = 0;
    ts_err inner = {0};
    ts_status s = ts_dim_parse(p->g->syms, p->s + at, p->len - at, out, &used, &inner);
    if (s != TS_OK)
        return ts_parse_fail(p, at + used, s == TS_ERR_OOM ? s : TS_ERR_PARSE, "%s",
                    inner.msg[0] ? dim_reason(inner.msg) : "malformed dim");
    if (used == 0) return ts_parse_expected(p, "a dim");
    p->pos = at + used;
    return TS_OK;
}

static ts_status parse_type(parser *p, ts_dtype *dt, int *rank, ts_dim *dims)
{
    const char *w;
    size_t n;
    ts_parse_skip_blank(p);
    size_t at = p->pos;
    TS_TRY(ts_parse_word(p, "a type such as f32[2, 3]", &w, &n));
    if (!ts_parse_dtype_named(w, n, dt)) return PERR(p, at, "unknown dtype '%.*s'", SHOWN(n), w);
    TS_TRY(ts_parse_expect(p, '['));
    *rank = 0;
    if (ts_parse_accept(p, ']')) return TS_OK;
    do {
        ts_parse_skip_blank(p);
        if (*rank == TS_MAX_RANK) return PERR(p, p->pos, "a type has at most %d dims", TS_MAX_RANK);
        size_t dim_at = p->pos;
        TS_TRY(ts_parse_dim(p, &dims[*rank]));
        if (ts_dim_is_const(dims[*rank]) && dims[*rank].c < 0)
            return PERR(p, dim_at, "negative dimension %" PRId64, dims[*rank].c);
        (*rank)++;
    } while (ts_parse_accept(p, ','));
    return ts_parse_expect(p, ']');
}

void ts_parse_type_text(char *buf, size_t cap, const ts_type *t)
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
    if (p->names_count + 1 > p->names_cap / 2 && !grow_names(p)) return ts_parse_oom(p);
    v->name = ts_arena_strndup(p->g->arena, w, n);
    if (!v->name) return ts_parse_oom(p);
    *name_slot(p->names, p->names_cap, w, n) = v;
    p->names_count++;
    return TS_OK;
}

/* `%name` or `%123`, no blank after '%'. *at is the offset of the '%'. */
static ts_status parse_value_name(parser *p, const char **w, size_t *n, size_t *at)
{
    ts_parse_skip_blank(p);
    *at = p->pos;
    if (ts_parse_peek(p) != '%') return ts_parse_expected(p, "a value (%name)");
    p->pos++;
    size_t len = ts_parse_word_len(p);
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
    const char *w = NULL;     /* set on success; GCC cannot see that across files */
    size_t n = 0, at;
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
        ts_value **slot = vals->n < MAX_LIST ? ts_parse_vec_push(vals, sizeof *slot) : NULL;
        if (!slot && vals->n >= MAX_LIST) return PERR(p, p->pos, "more than %d values in one list", MAX_LIST);
        if (!slot) return ts_parse_oom(p);
        TS_TRY(parse_use(p, slot));
    } while (ts_parse_accept(p, ','));
    return TS_OK;
}

/* `(%x: type, ...)`: parameters of block b. */
static ts_status parse_params(parser *p, ts_block *b)
{
    TS_TRY(ts_parse_expect(p, '('));
    if (ts_parse_accept(p, ')')) return TS_OK;
    do {
        const char *w;
        size_t n, at;
        ts_dim dims[TS_MAX_RANK];
        ts_type t = {TS_DTYPE_F32, 0, dims};
        ts_value *v;
        ts_err inner = {0};
        TS_TRY(parse_value_name(p, &w, &n, &at));
        TS_TRY(ts_parse_expect(p, ':'));
        TS_TRY(parse_type(p, &t.dtype, &t.rank, dims));
        ts_status s = ts_ir_block_add_param(p->g, b, &t, &v, &inner);
        if (s != TS_OK) return ts_parse_fail_from(p, at, s, &inner);
        TS_TRY(define(p, v, w, n, at));
    } while (ts_parse_accept(p, ','));
    return ts_parse_expect(p, ')');
}

/* ---- blocks and nodes ---------------------------------------------------------------- */

static ts_status parse_body(parser *p, ts_block *b, const char *end);

/* `name(%p: type, ...) { body yield ... }`: region r of op. */
static ts_status parse_region(parser *p, ts_op op, int r, ts_block **out)
{
    const char *want = ts_op_get(op)->region_names[r];
    ts_parse_skip_blank(p);
    size_t at = p->pos, n = ts_parse_word_len(p);
    if (!ts_parse_word_is(p->s + at, n, want)) {
        char buf[64];
        return PERR(p, at, "expected region '%s' of %s but found %s", want, ts_op_get(op)->name,
                    ts_parse_found(p, buf, sizeof buf));
    }
    p->pos += n;
    if (p->n_open > MAX_DEPTH) return PERR(p, at, "regions nest more than %d deep", MAX_DEPTH);
    ts_err inner = {0};
    ts_status s = ts_ir_block_new(p->g, out, &inner);
    if (s != TS_OK) return ts_parse_fail_from(p, at, s, &inner);
    p->open[p->n_open++] = *out;
    s = parse_params(p, *out);
    if (s == TS_OK) s = ts_parse_expect(p, '{');
    if (s == TS_OK) s = parse_body(p, *out, "yield");
    p->n_open--;
    return s;
}

/* A declared result type must be the inferred one, except that an op
 * inventing sizes (TS_OPF_FRESH) takes the written symbol for its fresh
 * one, so that round trips keep the names. */
static ts_status check_declared(parser *p, const ts_node *n, decl *d, ts_value *v)
{
    ts_type want = ts_parse_decl_type(d);
    bool fresh = ts_op_get(n->op)->flags & TS_OPF_FRESH;
    bool ok = want.dtype == v->type.dtype && want.rank == v->type.rank;
    for (int i = 0; ok && i < want.rank; i++)
        ok = ts_dim_eq(want.dims[i], v->type.dims[i]) ||
             (fresh && ts_dim_sym_name(v->type.dims[i]) && ts_dim_sym_name(want.dims[i]));
    if (!ok) {
        char a[160], b[160];
        ts_parse_type_text(a, sizeof a, &want);
        ts_parse_type_text(b, sizeof b, &v->type);
        return ts_parse_fail(p, d->at, TS_ERR_SHAPE, "%%%.*s is declared %s but %s yields %s%s", SHOWN(d->len), d->name, a,
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
    ts_parse_skip_blank(p);
    if (ts_parse_peek(p) != '%') return TS_OK;  /* a node without results (send) */
    do {
        if (l->decls.n == MAX_RESULTS) return PERR(p, p->pos, "more than %d results on one line", MAX_RESULTS);
        decl *d = ts_parse_vec_push(&l->decls, sizeof *d);
        if (!d) return ts_parse_oom(p);
        TS_TRY(parse_value_name(p, &d->name, &d->len, &d->at));
        d->typed = ts_parse_accept(p, ':');
        if (d->typed) TS_TRY(parse_type(p, &d->dtype, &d->rank, d->dims));
    } while (ts_parse_accept(p, ','));
    return ts_parse_expect(p, '=');
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
    ts_parse_skip_blank(p);
    l->op_at = p->pos;
    TS_TRY(ts_parse_word(p, "an op name", &w, &n));
    if (!ts_op_from_name(w, n, &l->op)) return PERR(p, l->op_at, "unknown op '%.*s'", SHOWN(n), w);
    const ts_op_info *info = ts_op_get(l->op);
    TS_TRY(ts_parse_expect(p, '('));
    if (!ts_parse_accept(p, ')')) {
        TS_TRY(parse_uses(p, &l->ins));
        TS_TRY(ts_parse_expect(p, ')'));
    }
    attr_ctx c = {l->op, ts_ir_attrs_new(p->g, l->op), l->decls.n ? l->decls.data : NULL};
    if (!c.attrs) return ts_parse_oom(p);
    TS_TRY(ts_parse_attrs(p, &c, l->op_at));
    for (int r = 0; r < info->n_regions; r++) TS_TRY(parse_region(p, l->op, r, &l->regions[r]));
    ts_node *node;
    ts_err inner = {0};
    ts_status s = ts_ir_node_new(p->g, b, NULL, l->op, (int)l->ins.n, l->ins.data, c.attrs, info->n_regions,
                                 l->regions, &node, &inner);
    if (s != TS_OK) return ts_parse_fail_from(p, l->op_at, s, &inner);
    return bind_results(p, l, node);
}

static ts_status parse_node(parser *p, ts_block *b)
{
    line l = {0};
    ts_status s = parse_line(p, b, &l);
    ts_parse_vec_free(&l.decls);
    ts_parse_vec_free(&l.ins);
    return s;
}

/* Nodes up to the `end` keyword (return/yield), its values, and '}'. */
static ts_status parse_body(parser *p, ts_block *b, const char *end)
{
    for (;;) {
        ts_parse_skip_blank(p);
        size_t at = p->pos, n = ts_parse_word_len(p);
        const char *w = p->s + at;
        if (ts_parse_word_is(w, n, end)) {
            p->pos += n;
            break;
        }
        if (ts_parse_word_is(w, n, "return") || ts_parse_word_is(w, n, "yield"))
            return PERR(p, at, "'%.*s' here: the graph body ends with 'return' and a region with 'yield'",
                        (int)n, w);
        if (ts_parse_peek(p) < 0 || ts_parse_peek(p) == '}') {
            char what[40];
            snprintf(what, sizeof what, "a node or '%s'", end);
            return ts_parse_expected(p, what);
        }
        TS_TRY(parse_node(p, b));
    }
    vec vals = {0};
    ts_err inner = {0};
    ts_parse_skip_blank(p);
    size_t at = p->pos;
    ts_status s = ts_parse_peek(p) == '%' ? parse_uses(p, &vals) : TS_OK;
    if (s == TS_OK) {
        s = ts_ir_block_set_results(p->g, b, (int)vals.n, vals.data, &inner);
        if (s != TS_OK) s = ts_parse_fail_from(p, at, s, &inner);
    }
    ts_parse_vec_free(&vals);
    TS_TRY(s);
    return ts_parse_expect(p, '}');
}

/* `graph @name(params) { body return ... }` and nothing after it. */
static ts_status parse_graph(parser *p)
{
    const char *w;
    size_t n;
    ts_parse_skip_blank(p);
    if (!ts_parse_word_is(p->s + p->pos, ts_parse_word_len(p), "graph")) return ts_parse_expected(p, "'graph'");
    p->pos += 5;
    TS_TRY(ts_parse_expect(p, '@'));
    if (p->pos >= p->len || !ts_parse_name_start(ts_parse_peek(p))) return ts_parse_expected(p, "a graph name right after '@'");
    TS_TRY(ts_parse_word(p, "a graph name", &w, &n));
    p->g->name = ts_arena_strndup(p->g->arena, w, n);
    if (!p->g->name) return ts_parse_oom(p);
    p->open[0] = p->g->body;
    p->n_open = 1;
    TS_TRY(parse_params(p, p->g->body));
    TS_TRY(ts_parse_expect(p, '{'));
    TS_TRY(parse_body(p, p->g->body, "return"));
    ts_parse_skip_blank(p);
    if (p->pos < p->len) return ts_parse_expected(p, "the end of the text after the graph");
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

/* ---- pieces of the text form, for the public builder ---------------------------- */

/* A parser over a whole string that must be used up; name labels messages. */
static ts_status piece_done(parser *p)
{
    ts_parse_skip_blank(p);
    if (p->pos < p->len) {
        char buf[48];
        return PERR(p, p->pos, "unexpected %s after the end", ts_parse_found(p, buf, sizeof buf));
    }
    return TS_OK;
}

ts_status ts_ir_parse_type(ts_graph *g, const char *text, ts_type *out, ts_err *err)
{
    if (!g || !text || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_ir_parse_type: NULL argument");
    parser p = {.s = text, .len = strlen(text), .name = "type", .g = g, .err = err};
    ts_dim dims[TS_MAX_RANK];
    TS_TRY(parse_type(&p, &out->dtype, &out->rank, dims));
    TS_TRY(piece_done(&p));
    out->dims = ts_arena_alloc(g->arena, sizeof *dims * (size_t)(out->rank ? out->rank : 1));
    if (!out->dims) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    memcpy(out->dims, dims, sizeof *dims * (size_t)out->rank);
    return TS_OK;
}

ts_status ts_ir_parse_attrs(ts_graph *g, ts_op op, const char *text, ts_attr **out, ts_err *err)
{
    if (!g || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_ir_parse_attrs: NULL argument");
    const char *s = text ? text : "";
    /* the braces are optional: "perm=[1, 0]" and "{perm=[1, 0]}" alike */
    size_t len = strlen(s), lead = strspn(s, " \t\n");
    ts_buf braced = {0};
    if (s[lead] != '{') {
        ts_buf_printf(&braced, "{%s}", s);
        if (!braced.data) return ts_err_set(err, TS_ERR_OOM, "out of memory");
        s = braced.data;
        len = braced.len;
    }
    parser p = {.s = s, .len = len, .name = "attributes", .g = g, .err = err};
    attr_ctx c = {op, ts_ir_attrs_new(g, op), NULL};
    ts_status st = c.attrs ? TS_OK : ts_err_set(err, TS_ERR_OOM, "out of memory");
    if (st == TS_OK) st = ts_parse_attrs(&p, &c, 0);
    if (st == TS_OK) st = piece_done(&p);
    ts_buf_free(&braced);
    if (st == TS_OK) *out = c.attrs;
    return st;
}
