/* parse_attr.c — attribute values for the IR text parser (parse.c): the
 * `{name=value, ...}` list of a node, checked against the op's schema
 * (ints, floats, dtypes, enums, strings, int lists, dims lists), and
 * constant tensor literals (`splat(x)` or `[e, e, ...]`), which take dtype and
 * shape from the node's declared result type. The shared declarations are
 * in parse.h. */
#include "ir/parse.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* A splat constant is filled in memory; this keeps a typo in its type from
 * asking for terabytes. Listed constants are bounded by the text itself. */
#define MAX_SPLAT (INT64_C(1) << 26)

/* ---- attributes -------------------------------------------------------------------- */

static ts_status parse_string(parser *p, vec *chars)
{
    ts_parse_skip_blank(p);
    size_t at = p->pos;
    if (ts_parse_peek(p) != '"') return ts_parse_expected(p, "a string");
    for (p->pos++;;) {
        if (p->pos >= p->len) return PERR(p, at, "unterminated string");
        size_t here = p->pos;
        unsigned char c = (unsigned char)p->s[p->pos++];
        if (c == '"') break;
        if (c == '\n') return PERR(p, here, "line break inside a string (write \\n)");
        if (c < 0x20 || c == 0x7f) return PERR(p, here, "control byte 0x%02x inside a string (write \\x%02x)", c, c);
        if (c == '\\') {
            int e = ts_parse_peek(p);
            p->pos++;
            if (e == 'n') c = '\n';
            else if (e == 't') c = '\t';
            else if (e == '"' || e == '\\') c = (unsigned char)e;
            else if (e == 'x') {
                unsigned v = 0;
                for (int k = 0; k < 2; k++, p->pos++) {
                    int h = ts_parse_peek(p);
                    int d = ts_parse_is_digit(h) ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                    if (d < 0) return PERR(p, here, "\\x takes two hex digits");
                    v = v * 16 + (unsigned)d;
                }
                if (v == 0) return PERR(p, here, "a string cannot hold a NUL byte");
                c = (unsigned char)v;
            } else {
                return PERR(p, here, "unknown escape in a string (use \\\" \\\\ \\n \\t \\xHH)");
            }
        }
        char *slot = ts_parse_vec_push(chars, 1);
        if (!slot) return ts_parse_oom(p);
        *slot = (char)c;
    }
    char *end = ts_parse_vec_push(chars, 1);
    return end ? TS_OK : ts_parse_oom(p);
}

static ts_status parse_ints(parser *p, vec *ints)
{
    TS_TRY(ts_parse_expect(p, '['));
    if (ts_parse_accept(p, ']')) return TS_OK;
    do {
        if (ints->n == MAX_LIST) return PERR(p, p->pos, "more than %d entries in one list", MAX_LIST);
        int64_t *slot = ts_parse_vec_push(ints, sizeof *slot);
        if (!slot) return ts_parse_oom(p);
        TS_TRY(ts_parse_int64(p, "an int64", slot));
    } while (ts_parse_accept(p, ','));
    return ts_parse_expect(p, ']');
}

static ts_status parse_dims(parser *p, ts_dim *dims, int *n)
{
    TS_TRY(ts_parse_expect(p, '['));
    *n = 0;
    if (ts_parse_accept(p, ']')) return TS_OK;
    do {
        ts_parse_skip_blank(p);
        if (*n == TS_MAX_RANK) return PERR(p, p->pos, "a dims list has at most %d entries", TS_MAX_RANK);
        TS_TRY(ts_parse_dim(p, &dims[(*n)++]));
    } while (ts_parse_accept(p, ','));
    return ts_parse_expect(p, ']');
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
            ts_type ty = ts_parse_decl_type(res);
            ts_parse_type_text(t, sizeof t, &ty);
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
    return s == TS_OK ? s : ts_parse_fail_from(p, at, s, &inner);
}

/* `splat(x)`: every element x. */
static ts_status parse_splat(parser *p, size_t at, decl *res, const int64_t *shape, int64_t numel,
                             ts_tensor **out)
{
    unsigned char one[8];
    size_t size = ts_dtype_size(res->dtype);
    TS_TRY(ts_parse_expect(p, '('));
    TS_TRY(ts_parse_elem(p, res->dtype, one, 0));
    TS_TRY(ts_parse_expect(p, ')'));
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
    ts_type ty = ts_parse_decl_type(res);
    TS_TRY(ts_parse_expect(p, '['));
    if (!ts_parse_accept(p, ']')) {
        do {
            ts_parse_skip_blank(p);
            if (count == numel) {
                ts_parse_type_text(t, sizeof t, &ty);
                return PERR(p, p->pos, "more than %" PRId64 " elements for %s", numel, t);
            }
            for (size_t k = 0; k < size; k++)
                if (!ts_parse_vec_push(bytes, 1)) return ts_parse_oom(p);
            TS_TRY(ts_parse_elem(p, res->dtype, bytes->data, count++));
        } while (ts_parse_accept(p, ','));
        TS_TRY(ts_parse_expect(p, ']'));
    }
    if (count != numel) {
        ts_parse_type_text(t, sizeof t, &ty);
        return PERR(p, at, "%" PRId64 " elements for %s, which holds %" PRId64, count, t, numel);
    }
    TS_TRY(new_tensor(p, at, res, shape, out));
    if (count) memcpy((*out)->data, bytes->data, (size_t)count * size);
    return TS_OK;
}

static ts_status parse_tensor(parser *p, decl *res, ts_tensor **out)
{
    ts_parse_skip_blank(p);
    size_t at = p->pos;
    int64_t shape[TS_MAX_RANK], numel;
    TS_TRY(const_shape(p, at, res, shape, &numel));
    if (ts_parse_word_is(p->s + p->pos, ts_parse_word_len(p), "splat")) {
        p->pos += 5;
        return parse_splat(p, at, res, shape, numel, out);
    }
    vec bytes = {0};
    ts_status s = parse_elems(p, at, res, shape, numel, &bytes, out);
    ts_parse_vec_free(&bytes);
    return s;
}

static ts_status set_failed(parser *p, size_t at, ts_status s)
{
    return s == TS_OK ? s : ts_parse_fail(p, at, s, "%s", s == TS_ERR_OOM ? "out of memory" : "cannot set the attribute");
}

static ts_status parse_word_attr(parser *p, const ts_attr_schema *s, ts_attr *a)
{
    const char *w;
    size_t n;
    ts_parse_skip_blank(p);
    size_t at = p->pos;
    TS_TRY(ts_parse_word(p, s->kind == TS_ATTR_DTYPE ? "a dtype" : "a word", &w, &n));
    if (s->kind == TS_ATTR_DTYPE) {
        ts_dtype dt;
        if (!ts_parse_dtype_named(w, n, &dt)) return PERR(p, at, "unknown dtype '%.*s'", SHOWN(n), w);
        a->i = dt;
        return TS_OK;
    }
    for (int k = 0; k < s->n_enum; k++)
        if (ts_parse_word_is(w, n, s->enum_names[k])) {
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
    ts_parse_skip_blank(p);
    size_t at = p->pos;
    vec buf = {0};
    ts_status st = TS_OK;
    switch (s->kind) {
    case TS_ATTR_INT:
        return ts_parse_int64(p, s->name, &a->i);
    case TS_ATTR_FLOAT:
        return ts_parse_double(p, &a->f);
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
    ts_parse_vec_free(&buf);
    return st;
}

static int attr_named(const ts_op_info *info, const char *w, size_t n)
{
    for (int k = 0; k < info->n_attrs; k++)
        if (ts_parse_word_is(w, n, info->attrs[k].name)) return k;
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
ts_status ts_parse_attrs(parser *p, attr_ctx *c, size_t op_at)
{
    const ts_op_info *info = ts_op_get(c->op);
    bool seen[TS_MAX_ATTRS] = {0};
    if (ts_parse_accept(p, '{') && !ts_parse_accept(p, '}')) {
        do {
            const char *w;
            size_t n;
            ts_parse_skip_blank(p);
            size_t at = p->pos;
            TS_TRY(ts_parse_word(p, "an attribute name", &w, &n));
            int k = attr_named(info, w, n);
            if (k < 0) return unknown_attr(p, at, info, w, n);
            if (seen[k]) return PERR(p, at, "attribute '%s' is given twice", info->attrs[k].name);
            seen[k] = true;
            TS_TRY(ts_parse_expect(p, '='));
            TS_TRY(parse_attr_value(p, c, k));
        } while (ts_parse_accept(p, ','));
        TS_TRY(ts_parse_expect(p, '}'));
    }
    for (int k = 0; k < info->n_attrs; k++)
        if (!seen[k] && !info->attrs[k].has_default)
            return PERR(p, op_at, "%s needs attribute '%s'", info->name, info->attrs[k].name);
    return TS_OK;
}
