/* subst.c — a part of a block recomputed on other values: what ONNX's
 * Gradient operator needs when it asks for derivatives at points other
 * than the values the graph computed. */
#include "autodiff/ad_int.h"

ts_value *ts_ad_substitute(ts_builder *b, ts_value *y, int n, ts_value *const *from, ts_value *const *to)
{
    ts_graph *g = ts_builder_graph(b);
    ts_block *blk = ts_builder_block(b);
    uint32_t nv = g->next_value_id;
    ts_value **map = ts_mem_zalloc(sizeof *map * nv);
    if (!map) return ts_builder_fail(b, TS_ERR_OOM, "out of memory"), NULL;
    for (int i = 0; i < n; i++)
        if (from[i] != to[i]) map[from[i]->id] = to[i];
    ts_node *last = blk->last;
    for (ts_node *nd = blk->first; nd; nd = nd == last ? NULL : nd->next) {
        bool any = false;
        for (int i = 0; i < nd->n_in; i++) any |= map[nd->in[i]->id] != NULL;
        if (!any) continue;
        if (nd->n_regions) {
            ts_builder_fail(b, TS_ERR_UNSUPPORTED, "autodiff: recomputing through %s is not supported",
                            ts_op_get(nd->op)->name);
            break;
        }
        ts_value *in_small[8], *out_small[8];
        ts_value **in = nd->n_in <= 8 ? in_small : ts_arena_alloc(g->arena, sizeof *in * (size_t)nd->n_in);
        ts_value **out = nd->n_out <= 8 ? out_small : ts_arena_alloc(g->arena, sizeof *out * (size_t)nd->n_out);
        if (!in || !out) {
            ts_builder_fail(b, TS_ERR_OOM, "out of memory");
            break;
        }
        for (int i = 0; i < nd->n_in; i++) in[i] = map[nd->in[i]->id] ? map[nd->in[i]->id] : nd->in[i];
        int got = 0;
        if (ts_b_op(b, nd->op, nd->n_in, in, ad_attrs_copy(b, nd), 0, NULL, nd->n_out, out, &got) != TS_OK) break;
        for (int k = 0; k < got && k < nd->n_out; k++) map[nd->out[k]->id] = out[k];
    }
    ts_value *r = y->id < nv && map[y->id] ? map[y->id] : y;
    ts_mem_free(map);
    return r;
}
