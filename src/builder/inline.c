/* inline.c — another graph's body built into this builder's block, its
 * inputs bound to given values: how a function traced on its own (then
 * differentiated) is called from inside another trace. Attributes and
 * types move into this graph (dims imported into its symbol table by
 * name, constant tensors shared by reference); regions are copied whole.
 * The bound values must have the callee's input types exactly (symbolic
 * dims by name), so its shape attributes mean the same here. */
#include "builder/builder.h"

#include <string.h>

static bool import_dims(ts_builder *b, int n, const ts_dim *src, ts_dim *dst)
{
    ts_err e = {0};
    for (int i = 0; i < n; i++)
        if (ts_dim_import(ts_builder_graph(b)->syms, src[i], &dst[i], &e) != TS_OK) {
            ts_builder_fail(b, e.code, "inline: %s", e.msg);
            return false;
        }
    return true;
}

static ts_attr *copy_attrs(ts_builder *b, const ts_node *n)
{
    const ts_op_info *info = ts_op_get(n->op);
    if (!info->n_attrs) return NULL;
    ts_graph *g = ts_builder_graph(b);
    ts_attr *a = ts_b_attrs(b, n->op);
    for (int k = 0; a && k < info->n_attrs; k++) {
        const ts_attr *s = &n->attrs[k];
        const char *name = info->attrs[k].name;
        ts_status st = TS_OK;
        ts_dim dims[TS_MAX_RANK * 4];
        switch (info->attrs[k].kind) {
        case TS_ATTR_STR: st = ts_attr_set_str(g, n->op, a, name, s->s); break;
        case TS_ATTR_INTS: st = ts_attr_set_ints(g, n->op, a, name, s->n, s->ints); break;
        case TS_ATTR_TENSOR: st = ts_attr_set_tensor(g, n->op, a, name, s->t); break;
        case TS_ATTR_DIMS:
            if (s->n > (int)(sizeof dims / sizeof *dims)) {
                ts_builder_fail(b, TS_ERR_UNSUPPORTED, "inline: %s with %d dims", info->name, s->n);
                return NULL;
            }
            if (!import_dims(b, s->n, s->dims, dims)) return NULL;
            st = ts_attr_set_dims(g, n->op, a, name, s->n, dims);
            break;
        default: a[k] = *s;   /* int, float, dtype, enum: no payload */
        }
        if (st != TS_OK) {
            ts_builder_fail(b, st, "inline: %s: attribute %s", info->name, name);
            return NULL;
        }
    }
    return a;
}

/* A copy of region src in b's graph. */
static ts_block *clone_region(ts_builder *b, const ts_graph *callee, const ts_block *src)
{
    ts_graph *g = ts_builder_graph(b);
    ts_err e = {0};
    ts_block *nb = NULL;
    ts_value **io = ts_arena_alloc(g->arena, sizeof *io * (size_t)(src->n_params + src->n_results + 1));
    if (!io || ts_ir_block_new(g, &nb, &e) != TS_OK) return ts_builder_fail(b, TS_ERR_OOM, "out of memory"), NULL;
    for (int i = 0; i < src->n_params; i++) {
        ts_type t = src->params[i]->type;
        ts_dim dims[TS_MAX_RANK];
        if (t.rank > TS_MAX_RANK || !import_dims(b, t.rank, t.dims, dims)) return NULL;
        t.dims = dims;
        if (ts_ir_block_add_param(g, nb, &t, &io[i], &e) != TS_OK) return ts_builder_fail(b, e.code, "%s", e.msg), NULL;
    }
    ts_builder *rb = ts_builder_new(g, nb);
    if (!rb) return ts_builder_fail(b, TS_ERR_OOM, "out of memory"), NULL;
    ts_value **res = io + src->n_params;
    if (ts_b_clone(rb, callee, src, io, res)) ts_b_return(rb, src->n_results, res);
    ts_status st = ts_builder_status(rb, &e);
    ts_builder_free(rb);
    if (st != TS_OK) return ts_builder_fail(b, st, "%s", e.msg), NULL;
    return nb;
}

bool ts_b_clone(ts_builder *b, const ts_graph *callee, const ts_block *src, ts_value *const *params,
                ts_value **results)
{
    ts_graph *g = ts_builder_graph(b);
    ts_value **map = ts_mem_zalloc(sizeof *map * (callee->next_value_id + 1));
    if (!map) return ts_builder_fail(b, TS_ERR_OOM, "out of memory"), false;
    for (int i = 0; i < src->n_params; i++) map[src->params[i]->id] = params[i];
    for (const ts_node *n = src->first; n; n = n->next) {
        ts_value **in = ts_arena_alloc(g->arena, sizeof *in * (size_t)(n->n_in + n->n_out + 1));
        ts_block *regs[TS_MAX_REGIONS] = {0};
        if (!in) {
            ts_builder_fail(b, TS_ERR_OOM, "out of memory");
            break;
        }
        ts_value **out = in + n->n_in;
        for (int i = 0; i < n->n_in; i++) in[i] = map[n->in[i]->id];
        for (int r = 0; r < n->n_regions; r++) regs[r] = clone_region(b, callee, n->regions[r]);
        ts_attr *a = copy_attrs(b, n);
        int got = 0;
        if (ts_b_op(b, n->op, n->n_in, in, a, n->n_regions, regs, n->n_out, out, &got) != TS_OK) break;
        for (int k = 0; k < got && k < n->n_out; k++) map[n->out[k]->id] = out[k];
    }
    bool ok = ts_builder_status(b, NULL) == TS_OK;
    for (int k = 0; ok && k < src->n_results; k++) results[k] = map[src->results[k]->id];
    ts_mem_free(map);
    return ok;
}

ts_status ts_b_inline(ts_builder *b, const ts_graph *callee, int n_in, ts_value *const *in, int cap, ts_value **out,
                      int *n_out)
{
    if (n_out) *n_out = 0;
    if (!callee || (n_in && !in) || (cap && !out))
        return ts_builder_fail(b, TS_ERR_INVALID_ARG, "inline: NULL graph or array");
    const ts_block *body = callee->body;
    if (n_in != body->n_params)
        return ts_builder_fail(b, TS_ERR_INVALID_ARG, "inline @%s: %d values for %d inputs", callee->name, n_in,
                               body->n_params);
    if (cap < body->n_results)
        return ts_builder_fail(b, TS_ERR_INVALID_ARG, "inline @%s: room for %d of its %d outputs", callee->name, cap,
                               body->n_results);
    for (int i = 0; i < n_in; i++) {
        if (!in[i]) return ts_builder_fail(b, TS_ERR_INVALID_ARG, "inline @%s: input %d is NULL", callee->name, i);
        ts_type t = body->params[i]->type;
        ts_dim dims[TS_MAX_RANK];
        if (t.rank > TS_MAX_RANK || !import_dims(b, t.rank, t.dims, dims)) return ts_builder_status(b, NULL);
        t.dims = dims;
        if (!ts_type_eq(&t, &in[i]->type)) {
            ts_buf want = {0}, got = {0};
            ts_type_print(&want, &t);
            ts_type_print(&got, &in[i]->type);
            ts_builder_fail(b, TS_ERR_INVALID_ARG, "inline @%s: input %d is %s, the value bound to it %s", callee->name,
                            i, want.data ? want.data : "?", got.data ? got.data : "?");
            ts_buf_free(&want), ts_buf_free(&got);
            return ts_builder_status(b, NULL);
        }
    }
    if (ts_b_clone(b, callee, body, in, out) && n_out) *n_out = body->n_results;
    return ts_builder_status(b, NULL);
}
