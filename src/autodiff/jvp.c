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
    const ad_rule *r = ad_rule_of(n->op);
    if (!any || r->kind == TS_AD_STOP || r->kind == TS_AD_LEAF) return;
    if (r->kind == TS_AD_MISSING) {
        ts_buf lb = {0};
        ts_ir_node_label(&lb, n);
        ts_builder_fail(b, TS_ERR_UNSUPPORTED, "autodiff: %s has no derivative rule yet (%s)", ts_op_get(n->op)->name,
                        lb.data ? lb.data : "?");
        ts_buf_free(&lb);
        return;
    }
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

ts_status ts_graph_jvp(ts_graph *g, int n_wrt, const int *wrt, ts_err *err)
{
    int *list = NULL, nl = 0;
    TS_TRY(ad_wrt(g, n_wrt, wrt, &list, &nl, err));
    ts_block *body = g->body;
    ts_value **tan = ts_mem_zalloc(sizeof *tan * g->next_value_id);
    int n_out = body->n_results;
    ts_value **res = ts_mem_zalloc(sizeof *res * (size_t)(2 * n_out + 1));
    ts_builder *b = ts_builder_new(g, NULL);
    ad_mark mark = ad_mark_body(g);
    if (!tan || !res || !b) {
        ts_builder_free(b);
        ts_mem_free(tan), ts_mem_free(res), ts_mem_free(list);
        return ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    for (int j = 0; j < nl; j++) {
        ts_value *x = body->params[list[j]];
        ts_value *t = ts_b_input(b, x->type.dtype, x->type.rank, x->type.dims);
        ad_name(b, t, "tan_", x, list[j]);
        if (t) tan[x->id] = t;
    }
    for (ts_node *n = body->first; n; n = n == mark.last ? NULL : n->next) step(b, n, tan);
    int k2 = n_out;
    for (int k = 0; k < n_out; k++) {
        ts_value *y = body->results[k];
        res[k] = y;
        if (!ad_is_float(y)) continue;
        ts_value *ty = tan[y->id] ? tan[y->id] : ad_zeros_like(b, y);
        ad_name(b, ty, "tan_", y, k);
        res[k2++] = ty;
    }
    ts_b_return(b, k2, res);
    ts_status s = ts_builder_status(b, err);
    if (s != TS_OK) ad_restore(g, mark);
    ts_builder_free(b);
    ts_mem_free(tan), ts_mem_free(res), ts_mem_free(list);
    return s;
}
