/* grad.c — reverse mode: the cotangents flow from the outputs back to the
 * inputs, one node at a time in reverse order, each node's VJP rule
 * appending primitives to the body. Only nodes on a path from a value
 * differentiated for to a seeded value do work: an "active" value depends
 * on one differentiated for, and a node runs its rule only when a result
 * has a cotangent. */
#include "autodiff/ad_int.h"

#include <string.h>

/* The operands' cotangents of node n, added into adj. */
static void step(ts_builder *b, ts_node *n, ts_value **adj, const bool *active)
{
    ts_value *ct_small[8], *dx_small[8];
    bool want_small[8];
    ts_value **ct = n->n_out <= 8 ? ct_small : ts_arena_alloc(ts_builder_graph(b)->arena, sizeof *ct * (size_t)n->n_out);
    ts_value **dx = n->n_in <= 8 ? dx_small : ts_arena_alloc(ts_builder_graph(b)->arena, sizeof *dx * (size_t)n->n_in);
    bool *want = n->n_in <= 8 ? want_small : ts_arena_alloc(ts_builder_graph(b)->arena, sizeof *want * (size_t)n->n_in);
    if (!ct || !dx || !want) {
        ts_builder_fail(b, TS_ERR_OOM, "out of memory");
        return;
    }
    bool any_ct = false, any_in = false;
    for (int k = 0; k < n->n_out; k++) any_ct |= (ct[k] = adj[n->out[k]->id]) != NULL;
    for (int i = 0; i < n->n_in; i++) any_in |= want[i] = active[n->in[i]->id], dx[i] = NULL;
    if (!any_ct || !any_in) return;
    const ad_rule *r = ad_rule_for(b, n);
    if (!r) return;
    r->vjp(b, n, ct, want, dx);
    for (int i = 0; i < n->n_in; i++) {
        ts_value *x = n->in[i];
        if (!dx[i] || !active[x->id]) continue;
        if (!ts_type_eq(&dx[i]->type, &x->type)) {
            ts_builder_fail(b, TS_ERR_INTERNAL, "autodiff: the %s rule gave operand %d a cotangent of another type",
                            ts_op_get(n->op)->name, i);
            return;
        }
        adj[x->id] = ad_add(b, adj[x->id], dx[i]);
    }
}

/* Values that depend on one already marked, through nodes that pass
 * derivatives on. */
static void mark_active(const ts_block *blk, bool *active)
{
    for (const ts_node *n = blk->first; n; n = n->next) {
        ts_ad_kind k = ad_rule_of(n->op)->kind;
        if (k == TS_AD_STOP || k == TS_AD_LEAF) continue;
        bool any = false;
        for (int i = 0; i < n->n_in; i++) any |= active[n->in[i]->id];
        if (any)
            for (int o = 0; o < n->n_out; o++) active[n->out[o]->id] = ad_is_float(n->out[o]);
    }
}

void ts_ad_vjp_values(ts_builder *b, int n_y, ts_value *const *ys, ts_value *const *seeds, int n_x,
                      ts_value *const *xs, ts_value **grads)
{
    ts_graph *g = ts_builder_graph(b);
    ts_block *blk = ts_builder_block(b);
    uint32_t nv = g->next_value_id;
    bool *active = ts_mem_zalloc(sizeof *active * nv);
    ts_value **adj = ts_mem_zalloc(sizeof *adj * nv);
    if (!active || !adj) {
        ts_builder_fail(b, TS_ERR_OOM, "out of memory");
        goto done;
    }
    for (int j = 0; j < n_x; j++) active[xs[j]->id] = ad_is_float(xs[j]);
    mark_active(blk, active);
    ts_node *last = blk->last;
    for (int k = 0; k < n_y; k++)
        if (seeds[k] && active[ys[k]->id]) adj[ys[k]->id] = ad_add(b, adj[ys[k]->id], seeds[k]);
    for (ts_node *n = last; n; n = n->prev) step(b, n, adj, active);
    for (int j = 0; j < n_x; j++)
        grads[j] = !ad_is_float(xs[j]) ? NULL : adj[xs[j]->id] ? adj[xs[j]->id] : ad_zeros_like(b, xs[j]);
done:
    ts_mem_free(active), ts_mem_free(adj);
}

ts_status ts_graph_grad(ts_graph *g, int n_wrt, const int *wrt, ts_err *err)
{
    int *list = NULL, nl = 0;
    TS_TRY(ad_wrt(g, n_wrt, wrt, &list, &nl, err));
    ts_block *body = g->body;
    int n_out = body->n_results;
    ts_value **res = ts_mem_zalloc(sizeof *res * (size_t)(n_out + nl + 1));
    ts_value **ys = ts_mem_zalloc(sizeof *ys * (size_t)(n_out + 1));
    ts_value **seeds = ts_mem_zalloc(sizeof *seeds * (size_t)(n_out + 1));
    ts_value **xs = ts_mem_zalloc(sizeof *xs * (size_t)(nl + 1));
    ts_builder *b = ts_builder_new(g, NULL);
    ad_mark mark = ad_mark_body(g);
    ts_status s = TS_ERR_OOM;
    if (!res || !ys || !seeds || !xs || !b) {
        ts_err_set(err, TS_ERR_OOM, "out of memory");
        goto done;
    }
    /* one cotangent input per float output */
    int ny = 0;
    for (int k = 0; k < n_out; k++) {
        ts_value *y = body->results[k];
        res[k] = y;
        if (!ad_is_float(y)) continue;
        ts_value *ct = ts_b_input(b, y->type.dtype, y->type.rank, y->type.dims);
        ad_name(b, ct, "ct_", y, k);
        ys[ny] = y, seeds[ny++] = ct;
    }
    for (int j = 0; j < nl; j++) xs[j] = body->params[list[j]];
    ts_ad_vjp_values(b, ny, ys, seeds, nl, xs, res + n_out);
    for (int j = 0; j < nl; j++) ad_name(b, res[n_out + j], "grad_", xs[j], list[j]);
    ts_b_return(b, n_out + nl, res);
    s = ts_builder_status(b, err);
    if (s != TS_OK) ad_restore(g, mark);
done:
    ts_builder_free(b);
    ts_mem_free(res), ts_mem_free(ys), ts_mem_free(seeds), ts_mem_free(xs), ts_mem_free(list);
    return s;
}
