/* jvp.c — forward mode: tangents flow with the values, one node at a time
 * in order, each node's JVP rule appending primitives to the body. A value
 * without a tangent has a zero one, and rules build nothing for it. */
#include "autodiff/ad_int.h"

static void step(ts_builder *b, ts_node *n, ts_value **tan)
{
    ts_value *t_small[8], *dy_small[8];
    ts_value **t = n->n_in <= 8 ? t_small : ts_arena_alloc(ts_builder_graph(b)->arena, sizeof *t * (size_t)n->n_in);
    ts_value **dy = n->n_out <= 8 ? dy_small : ts_arena_alloc(ts_builder_graph(b)->arena, sizeof *dy * (size_t)n->n_out);
    if (!t || !dy) {
        ts_builder_fail(b, TS_ERR_OOM, "out of memory");
        return;
    }
    bool any = false;
    for (int i = 0; i < n->n_in; i++) any |= (t[i] = tan[n->in[i]->id]) != NULL;
    for (int k = 0; k < n->n_out; k++) dy[k] = NULL;
    const ad_rule *r = any ? ad_rule_for(b, n) : NULL;
    if (!r) return;
    r->jvp(b, n, t, dy);
    for (int k = 0; k < n->n_out; k++) {
        if (!dy[k] || !ad_is_float(n->out[k])) continue;
        if (!ts_type_eq(&dy[k]->type, &n->out[k]->type)) {
            ts_builder_fail(b, TS_ERR_INTERNAL, "autodiff: the %s rule gave result %d a tangent of another type",
                            ts_op_get(n->op)->name, k);
            return;
        }
        tan[n->out[k]->id] = dy[k];
    }
}

void ts_ad_jvp_values(ts_builder *b, int n_x, ts_value *const *xs, ts_value *const *tx, int n_y,
                      ts_value *const *ys, ts_value **ty)
{
    ts_graph *g = ts_builder_graph(b);
    ts_block *blk = ts_builder_block(b);
    ts_value **tan = ts_mem_zalloc(sizeof *tan * g->next_value_id);
    if (!tan) {
        ts_builder_fail(b, TS_ERR_OOM, "out of memory");
        return;
    }
    for (int j = 0; j < n_x; j++)
        if (tx[j] && ad_is_float(xs[j])) tan[xs[j]->id] = tx[j];
    ts_node *last = blk->last;
    for (ts_node *n = blk->first; n; n = n == last ? NULL : n->next) step(b, n, tan);
    for (int k = 0; k < n_y; k++)
        ty[k] = !ad_is_float(ys[k]) ? NULL : tan[ys[k]->id] ? tan[ys[k]->id] : ad_zeros_like(b, ys[k]);
    ts_mem_free(tan);
}

ts_status ts_graph_jvp(ts_graph *g, int n_wrt, const int *wrt, ts_err *err)
{
    int *list = NULL, nl = 0;
    TS_TRY(ad_wrt(g, n_wrt, wrt, &list, &nl, err));
    ts_block *body = g->body;
    int n_out = body->n_results;
    ts_value **res = ts_mem_zalloc(sizeof *res * (size_t)(3 * n_out + 2 * nl + 1));
    ts_builder *b = ts_builder_new(g, NULL);
    ad_mark mark = ad_mark_body(g);
    ts_status s = TS_ERR_OOM;
    if (!res || !b) {
        ts_err_set(err, TS_ERR_OOM, "out of memory");
        goto done;
    }
    ts_value **xs = res + 2 * n_out, **tx = xs + nl, **ty = tx + nl;
    for (int j = 0; j < nl; j++) {
        xs[j] = body->params[list[j]];
        tx[j] = ts_b_input(b, xs[j]->type.dtype, xs[j]->type.rank, xs[j]->type.dims);
        ad_name(b, tx[j], "tan_", xs[j], list[j]);
    }
    ts_ad_jvp_values(b, nl, xs, tx, n_out, body->results, ty);
    int k2 = n_out;
    for (int k = 0; k < n_out; k++) {
        res[k] = body->results[k];
        if (!ad_is_float(res[k])) continue;
        ad_name(b, ty[k], "tan_", res[k], k);
        res[k2++] = ty[k];
    }
    ts_b_return(b, k2, res);
    s = ts_builder_status(b, err);
    if (s != TS_OK) ad_restore(g, mark);
done:
    ts_builder_free(b);
    ts_mem_free(res), ts_mem_free(list);
    return s;
}
