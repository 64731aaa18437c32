/* rewrite.c — what every rewriting pass needs: forwarding replaced values
 * through value->aux, carrying names over, and the effect test. */
#include "passes/passes.h"

void ts_pass_forget(ts_block *b)
{
    for (int i = 0; i < b->n_params; i++) b->params[i]->aux = NULL;
    for (ts_node *n = b->first; n; n = n->next) {
        for (int i = 0; i < n->n_out; i++) n->out[i]->aux = NULL;
        for (int r = 0; r < n->n_regions; r++) ts_pass_forget(n->regions[r]);
    }
}

ts_value *ts_pass_resolve(ts_value *v)
{
    while (v && v->aux) v = v->aux;
    return v;
}

void ts_pass_resolve_operands(ts_node *n)
{
    for (int i = 0; i < n->n_in; i++) n->in[i] = ts_pass_resolve(n->in[i]);
}

void ts_pass_resolve_results(ts_block *b)
{
    for (int i = 0; i < b->n_results; i++) b->results[i] = ts_pass_resolve(b->results[i]);
}

void ts_pass_replace(ts_node *n, ts_value *const *repl)
{
    for (int k = 0; k < n->n_out; k++)
        if (repl[k] != n->out[k]) n->out[k]->aux = repl[k];
    ts_ir_node_unlink(n);
}

void ts_pass_take_name(ts_value *nv, ts_value *old)
{
    if (nv->name || !old->name) return;
    nv->name = old->name;
    old->name = NULL;
}

static bool block_has_effects(const ts_block *b)
{
    for (const ts_node *n = b->first; n; n = n->next)
        if (ts_pass_has_effects(n)) return true;
    return false;
}

bool ts_pass_has_effects(const ts_node *n)
{
    if (ts_op_get(n->op)->flags & TS_OPF_SIDE) return true;
    for (int r = 0; r < n->n_regions; r++)
        if (block_has_effects(n->regions[r])) return true;
    return false;
}
