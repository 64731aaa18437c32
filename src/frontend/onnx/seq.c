/* seq.c — composites (ONNX sequences and optionals as lists of tensor
 * values known at build time, seq.h) and their forms, the text that spells
 * their structure at the public boundary. */
#include "frontend/onnx/seq.h"

#include <string.h>

/* ---- composites ------------------------------------------------------------------------ */

onnx_comp *onnx_comp_of(const ts_value *v)
{
    if (!v || v->def || v->param_of || v->type.dtype != TS_DTYPE_COUNT) return NULL;
    return (onnx_comp *)v;
}

ts_value *onnx_comp_new(onnx_ctx *c, onnx_comp_kind kind, int count, ts_value *const *elems, ts_dtype dtype)
{
    if (count < 0 || count > ONNX_MAX_SEQ || (kind == ONNX_COMP_OPT && count > 1)) {
        ts_builder_fail(c->b, TS_ERR_UNSUPPORTED, "a sequence of %d elements is longer than tessera builds (%d)", count,
                        ONNX_MAX_SEQ);
        return NULL;
    }
    c->listed += count;
    if (c->listed > ONNX_MAX_LISTED) {
        ts_builder_fail(c->b, TS_ERR_UNSUPPORTED, "the model's sequences hold more than %d elements in all, more than "
                        "tessera builds", ONNX_MAX_LISTED);
        return NULL;
    }
    onnx_comp *k = ts_arena_alloc(c->g->arena, sizeof *k);
    ts_value **e = ts_arena_array(c->g->arena, (size_t)count + 1, sizeof *e);
    if (!k || !e) {
        ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
        return NULL;
    }
    memset(k, 0, sizeof *k);
    k->v.type.dtype = TS_DTYPE_COUNT;
    k->kind = kind;
    k->count = count;
    if (count) memcpy(e, elems, sizeof *e * (size_t)count);
    k->elems = e;
    k->dtype = dtype;
    for (int i = 0; i < count && k->dtype == TS_DTYPE_COUNT; i++)
        if (!onnx_comp_of(e[i])) k->dtype = e[i]->type.dtype;
    return &k->v;
}

int onnx_comp_leaves(const ts_value *v, ts_value **out)
{
    const onnx_comp *k = onnx_comp_of(v);
    if (!k) {
        if (out) out[0] = (ts_value *)v;
        return 1;
    }
    int n = 0;
    for (int i = 0; i < k->count; i++) n += onnx_comp_leaves(k->elems[i], out ? out + n : NULL);
    return n;
}

void onnx_comp_form(const ts_value *v, ts_buf *b)
{
    const onnx_comp *k = onnx_comp_of(v);
    if (!k) {
        ts_buf_puts(b, "t");
        return;
    }
    ts_buf_puts(b, k->kind == ONNX_COMP_SEQ ? "[" : "?");
    for (int i = 0; i < k->count; i++) {
        if (i) ts_buf_puts(b, ",");
        onnx_comp_form(k->elems[i], b);
    }
    if (k->kind == ONNX_COMP_SEQ) ts_buf_puts(b, "]");
}

ts_value *onnx_comp_rebuild(onnx_ctx *c, const ts_value *v, ts_value *const *leaves, int *pos)
{
    const onnx_comp *k = onnx_comp_of(v);
    if (!k) return leaves[(*pos)++];
    ts_value **e = ts_arena_array(c->g->arena, (size_t)k->count + 1, sizeof *e);
    if (!e) {
        ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < k->count; i++)
        if (!(e[i] = onnx_comp_rebuild(c, k->elems[i], leaves, pos))) return NULL;
    return onnx_comp_new(c, k->kind, k->count, e, k->dtype);
}

const char *onnx_comp_what(const ts_value *v)
{
    const onnx_comp *k = onnx_comp_of(v);
    return !k ? "a tensor" : k->kind == ONNX_COMP_SEQ ? "a sequence" : "an optional";
}

/* ---- forms ----------------------------------------------------------------------------------
 *     form := 't' | '[' [form {',' form}] ']' | '?' [form]
 * No spaces. A '?' followed by nothing, ',' or ']' is the empty optional. */

typedef struct form_parser {
    ts_arena *a;
    const char *p;
    int tensors;
    const char *what;
    ts_err *err;
} form_parser;

static ts_status form_fail(form_parser *fp, const char *why)
{
    return ts_err_set(fp->err, TS_ERR_INVALID_ARG, "%s: the form is malformed (%s)", fp->what, why);
}

static ts_status form_node(form_parser *fp, int depth, onnx_form **out);

/* Append child to f's elements (grown by doubling in the arena). */
static bool form_push(form_parser *fp, onnx_form *f, onnx_form *child, int *cap)
{
    if (f->count == *cap) {
        int ncap = *cap ? *cap * 2 : 4;
        onnx_form **e = ts_arena_array(fp->a, (size_t)ncap, sizeof *e);
        if (!e) return false;
        if (f->count) memcpy(e, f->elems, sizeof *e * (size_t)f->count);
        f->elems = e;
        *cap = ncap;
    }
    f->elems[f->count++] = child;
    return true;
}

static ts_status form_seq(form_parser *fp, onnx_form *f, int depth)
{
    int cap = 0;
    if (*fp->p == ']') {
        fp->p++;
        return TS_OK;
    }
    for (;;) {
        onnx_form *child;
        TS_TRY(form_node(fp, depth + 1, &child));
        if (f->count >= ONNX_MAX_SEQ) return form_fail(fp, "a sequence is too long");
        if (!form_push(fp, f, child, &cap)) return ts_err_set(fp->err, TS_ERR_OOM, "out of memory");
        if (*fp->p == ']') {
            fp->p++;
            return TS_OK;
        }
        if (*fp->p != ',') return form_fail(fp, "expected ',' or ']'");
        fp->p++;
    }
}

static ts_status form_node(form_parser *fp, int depth, onnx_form **out)
{
    if (depth > ONNX_MAX_DEPTH) return form_fail(fp, "nested too deep");
    onnx_form *f = ts_arena_alloc(fp->a, sizeof *f);
    if (!f) return ts_err_set(fp->err, TS_ERR_OOM, "out of memory");
    memset(f, 0, sizeof *f);
    f->kind = *fp->p;
    *out = f;
    switch (*fp->p++) {
    case 't':
        if (fp->tensors == INT_MAX) return form_fail(fp, "too many tensors");
        fp->tensors++;
        return TS_OK;
    case '[': return form_seq(fp, f, depth);
    case '?': {
        if (!*fp->p || *fp->p == ',' || *fp->p == ']') return TS_OK;
        int cap = 0;
        onnx_form *child;
        TS_TRY(form_node(fp, depth + 1, &child));
        return form_push(fp, f, child, &cap) ? TS_OK : ts_err_set(fp->err, TS_ERR_OOM, "out of memory");
    }
    default: return form_fail(fp, "expected 't', '[' or '?'");
    }
}

ts_status onnx_form_parse(ts_arena *a, const char *text, const char *what, onnx_form **out, int *n_tensors,
                          ts_err *err)
{
    form_parser fp = {a, text ? text : "", 0, what, err};
    *out = NULL;
    *n_tensors = 0;
    TS_TRY(form_node(&fp, 0, out));
    if (*fp.p) return form_fail(&fp, "text after the form");
    *n_tensors = fp.tensors;
    return TS_OK;
}

int ts_onnx_form_tensors(const char *form)
{
    if (!form) return 1;   /* NULL stands for "t" wherever a form is taken */
    ts_arena *a = ts_arena_new();
    onnx_form *f;
    int n = -1;
    if (a && onnx_form_parse(a, form, "form", &f, &n, NULL) != TS_OK) n = -1;
    ts_arena_free(a);
    return n;
}
