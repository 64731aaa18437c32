/* builder.c — the public graph builder (tessera.h) over the one every
 * frontend uses (src/builder/): operations named as the text form names
 * them, types and attributes spelt as the text form spells them (parsed
 * by the IR parser's own code), elementwise operations broadcast. */
#include "builder/builder.h"

#include <stdio.h>
#include <string.h>

ts_status ts_graph_new(const char *name, ts_graph **out, ts_err *err)
{
    if (!out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_graph_new: NULL argument");
    *out = NULL;
    const char *n = name ? name : "main";
    if (!ts_ir_name_ok(n, strlen(n), false))
        return ts_err_set(err, TS_ERR_INVALID_ARG, "'%.60s' cannot be a graph name ([A-Za-z_][A-Za-z0-9_.]*)", n);
    return ts_ir_graph_new(n, out, err);
}

ts_status ts_graph_builder(ts_graph *g, ts_builder **out, ts_err *err)
{
    if (!g || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_graph_builder: NULL argument");
    *out = ts_builder_new(g, NULL);
    return *out ? TS_OK : ts_err_set(err, TS_ERR_OOM, "out of memory creating a builder");
}

ts_status ts_builder_region(ts_builder *b, ts_builder **out, ts_err *err)
{
    if (!b || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_builder_region: NULL argument");
    *out = NULL;
    ts_block *blk = NULL;
    TS_TRY(ts_ir_block_new(ts_builder_graph(b), &blk, err));
    *out = ts_builder_new(ts_builder_graph(b), blk);
    return *out ? TS_OK : ts_err_set(err, TS_ERR_OOM, "out of memory creating a builder");
}

/* ---- names ------------------------------------------------------------------------- */

static bool named_in(const ts_block *blk, const char *name);

static bool named(const ts_value *v, const char *name) { return v->name && strcmp(v->name, name) == 0; }

static bool named_in(const ts_block *blk, const char *name)
{
    for (int i = 0; i < blk->n_params; i++)
        if (named(blk->params[i], name)) return true;
    for (const ts_node *n = blk->first; n; n = n->next) {
        for (int i = 0; i < n->n_out; i++)
            if (named(n->out[i], name)) return true;
        for (int r = 0; r < n->n_regions; r++)
            if (named_in(n->regions[r], name)) return true;
    }
    return false;
}

/* Whether name may name a new value: spellable in the text form (not a
 * run of digits, which the printer gives unnamed values) and unused in
 * the graph (inputs are found by name). */
static ts_status name_free(ts_builder *b, const char *name)
{
    ts_graph *g = ts_builder_graph(b);
    if (!ts_ir_name_ok(name, strlen(name), false))
        return ts_builder_fail(b, TS_ERR_INVALID_ARG, "'%.60s' cannot be a value name ([A-Za-z_][A-Za-z0-9_.]*)", name);
    if (named_in(g->body, name))
        return ts_builder_fail(b, TS_ERR_INVALID_ARG, "the name '%.60s' is already used in graph @%s", name, g->name);
    return TS_OK;
}

static ts_status give_name(ts_builder *b, ts_value *v, const char *name)
{
    if (v->name && strcmp(v->name, name) == 0) return TS_OK;
    if (v->name)
        return ts_builder_fail(b, TS_ERR_INVALID_ARG, "cannot name a value '%.60s': it is named '%.60s'", name,
                               v->name);
    TS_TRY(name_free(b, name));
    v->name = ts_arena_strndup(ts_builder_graph(b)->arena, name, strlen(name));
    return v->name ? TS_OK : ts_builder_fail(b, TS_ERR_OOM, "out of memory");
}

/* ---- leaves ------------------------------------------------------------------------ */

ts_value *ts_build_input(ts_builder *b, const char *name, const char *type)
{
    if (!b || ts_builder_status(b, NULL) != TS_OK) return NULL;
    if (!type) {
        ts_builder_fail(b, TS_ERR_INVALID_ARG, "input: the type is NULL");
        return NULL;
    }
    ts_err e = {0};
    ts_type t;
    if (ts_ir_parse_type(ts_builder_graph(b), type, &t, &e) != TS_OK) {
        ts_builder_fail(b, e.code, "input %s: %s", name ? name : "", e.msg);
        return NULL;
    }
    /* the name first: a refused one leaves no parameter behind */
    if (name && name_free(b, name) != TS_OK) return NULL;
    ts_value *v = ts_b_input(b, t.dtype, t.rank, t.dims);
    if (v && name && give_name(b, v, name) != TS_OK) return NULL;
    return v;
}

ts_value *ts_build_const(ts_builder *b, ts_tensor *t) { return b ? ts_b_const(b, t) : NULL; }

ts_value *ts_build_scalar(ts_builder *b, ts_dtype dt, double v)
{
    if (!b || ts_builder_status(b, NULL) != TS_OK) return NULL;
    if (!ts_dtype_valid(dt)) {
        ts_builder_fail(b, TS_ERR_INVALID_ARG, "scalar: invalid dtype %d", (int)dt);
        return NULL;
    }
    return ts_b_scalar(b, dt, v);
}

/* ---- nodes ------------------------------------------------------------------------- */

/* op by name, and its attributes parsed; false (the builder failed) if not. */
static bool op_and_attrs(ts_builder *b, const char *name, const char *text, ts_op *op, ts_attr **attrs)
{
    if (ts_builder_status(b, NULL) != TS_OK) return false;
    if (!name || !ts_op_from_name(name, strlen(name), op)) {
        ts_builder_fail(b, TS_ERR_INVALID_ARG, "unknown primitive '%.60s' (`tessera prims` lists them)",
                        name ? name : "(null)");
        return false;
    }
    ts_err e = {0};
    if (ts_ir_parse_attrs(ts_builder_graph(b), *op, text, attrs, &e) != TS_OK) {
        ts_builder_fail(b, e.code, "%s: %s", name, e.msg);
        return false;
    }
    return true;
}

/* The elementwise operations broadcast (ts_b_binary, ts_b_select); the
 * rest take their operands as they are. */
static ts_status elementwise(ts_builder *b, ts_op op, int n_in, ts_value *const *in, int cap, ts_value **out,
                             int *n_out)
{
    ts_value *v = n_in == 2 ? ts_b_binary(b, op, in[0], in[1]) : ts_b_select(b, in[0], in[1], in[2]);
    TS_TRY(ts_builder_status(b, NULL));
    if (cap > 0) out[0] = v;
    *n_out = 1;
    return TS_OK;
}

ts_status ts_build_node(ts_builder *b, const char *name, int n_in, ts_value *const *in, const char *attrs,
                        int n_regions, ts_builder *const *regions, int cap, ts_value **out, int *n_out)
{
    if (!b) return TS_ERR_INVALID_ARG;
    if (n_out) *n_out = 0;
    ts_op op;
    ts_attr *a = NULL;
    if (!op_and_attrs(b, name, attrs, &op, &a)) return ts_builder_status(b, NULL);
    if (n_in < 0 || (n_in && !in) || n_regions < 0 || n_regions > TS_MAX_REGIONS || (n_regions && !regions) ||
        cap < 0 || (cap && !out) || !n_out)
        return ts_builder_fail(b, TS_ERR_INVALID_ARG, "%s: NULL or negative arguments", name);
    const ts_op_info *info = ts_op_get(op);
    if ((info->flags & TS_OPF_EW) && n_regions == 0 &&
        ((n_in == 2 && info->min_in == 2) || (n_in == 3 && op == TS_OP_SELECT)))
        return elementwise(b, op, n_in, in, cap, out, n_out);
    ts_block *blocks[TS_MAX_REGIONS];
    for (int r = 0; r < n_regions; r++) {
        ts_err e = {0};
        if (!regions[r] || ts_builder_graph(regions[r]) != ts_builder_graph(b))
            return ts_builder_fail(b, TS_ERR_INVALID_ARG, "%s: region %d is not a region builder of this graph",
                                   name, r);
        if (ts_builder_status(regions[r], &e) != TS_OK)
            return ts_builder_fail(b, e.code, "%s region %d: %s", name, r, e.msg);
        blocks[r] = ts_builder_block(regions[r]);
        if (blocks[r] == ts_builder_graph(b)->body || blocks[r]->parent)
            return ts_builder_fail(b, TS_ERR_INVALID_ARG, "%s: region %d is the body or already another node's",
                                   name, r);
    }
    return ts_b_op(b, op, n_in, in, a, n_regions, blocks, cap, out, n_out);
}

ts_value *ts_build(ts_builder *b, const char *name, int n_in, ts_value *const *in, const char *attrs)
{
    ts_value *out[64];
    int n = 0;
    if (ts_build_node(b, name, n_in, in, attrs, 0, NULL, 64, out, &n) != TS_OK || n == 0) return NULL;
    return out[0];
}

ts_value *ts_build_matmul(ts_builder *b, ts_value *x, ts_value *y) { return b ? ts_b_matmul(b, x, y) : NULL; }

ts_status ts_build_outputs(ts_builder *b, int n, ts_value *const *vals, const char *const *names)
{
    if (!b) return TS_ERR_INVALID_ARG;
    TS_TRY(ts_builder_status(b, NULL));
    if (n < 0 || (n && !vals)) return ts_builder_fail(b, TS_ERR_INVALID_ARG, "outputs: NULL or negative arguments");
    for (int i = 0; names && i < n; i++)
        if (names[i] && vals[i]) TS_TRY(give_name(b, vals[i], names[i]));
    return ts_b_return(b, n, vals);
}

/* ---- values ------------------------------------------------------------------------ */

ts_dtype ts_value_dtype(const ts_value *v) { return v ? v->type.dtype : TS_DTYPE_COUNT; }
int ts_value_rank(const ts_value *v) { return v ? v->type.rank : -1; }

size_t ts_value_type(const ts_value *v, char *buf, size_t cap)
{
    if (!v) {
        if (cap) buf[0] = 0;
        return 0;
    }
    ts_buf t = {0};
    ts_type_print(&t, &v->type);
    size_t len = t.data ? t.len : 0;
    if (cap) snprintf(buf, cap, "%s", t.data ? t.data : "");
    ts_buf_free(&t);
    return len;
}

ts_status ts_build_inline(ts_builder *b, const ts_graph *callee, int n_in, ts_value *const *in, int cap,
                          ts_value **out, int *n_out)
{
    if (!b) return TS_ERR_INVALID_ARG;
    if (n_in < 0 || cap < 0) return ts_builder_fail(b, TS_ERR_INVALID_ARG, "inline: negative counts");
    return ts_b_inline(b, callee, n_in, in, cap, out, n_out);
}
