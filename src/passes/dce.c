/* dce.c — dead code elimination: drop nodes none of whose results is used,
 * unless they (or their regions) have effects. Graph inputs and region
 * parameters stay: they are signatures, not code. */
#include "passes/passes.h"

static intptr_t uses(const ts_value *v) { return (intptr_t)v->aux; }

static bool dead(const ts_node *n)
{
    for (int i = 0; i < n->n_out; i++)
        if (uses(n->out[i]) > 0) return false;
    return !ts_pass_has_effects(n);
}

/* Walk b backwards so that removing a node can free its producers, which
 * come earlier, in the same sweep. Operands of a region's nodes are the
 * region's own values (isolation), so the counts of b are all that a
 * removal changes. */
static void dce_block(ts_block *b, bool *changed)
{
    for (ts_node *n = b->last, *prev; n; n = prev) {
        prev = n->prev;
        if (!dead(n)) {
            for (int r = 0; r < n->n_regions; r++) dce_block(n->regions[r], changed);
            continue;
        }
        for (int i = 0; i < n->n_in; i++) n->in[i]->aux = (void *)(uses(n->in[i]) - 1);
        ts_ir_node_unlink(n);
        *changed = true;
    }
}

ts_status ts_pass_dce(ts_graph *g, bool *changed, ts_err *err)
{
    ts_ir_count_uses(g);
    dce_block(g->body, changed);
    return TS_OK;
}
