/* verify.c — the structural checker run after every pass in debug builds. */
#include "ir/ir.h"

#include <string.h>

typedef struct vctx {
    ts_graph *g;
    uint32_t *scope;          /* by value id: serial of the defining block, 0 = none */
    uint32_t serial;          /* last block serial handed out */
    ts_err *err;
} vctx;

static ts_status fail_at(vctx *v, const ts_node *n, const char *what)
{
    ts_buf b = {0};
    if (n) ts_ir_node_label(&b, n);
    ts_status s = ts_err_set(v->err, TS_ERR_INVALID_MODEL, "verify: %s%s%s", b.data ? b.data : "",
                             n ? ": " : "", what);
    ts_buf_free(&b);
    return s;
}

/* Regions are isolated from above, so a value is visible only in the very
 * block (visit) that defines it. */
static bool visible(vctx *v, const ts_value *x, uint32_t blk)
{
    return x && x->id < v->g->next_value_id && v->scope[x->id] == blk;
}

/* Types may differ from the rule only where the rule invents a fresh
 * symbol (data-dependent sizes): there any lone symbol is accepted. */
static bool types_agree(const ts_node *n, const ts_type *want, const ts_type *got)
{
    if (!(ts_op_get(n->op)->flags & TS_OPF_FRESH)) return ts_type_eq(want, got);
    if (want->dtype != got->dtype || want->rank != got->rank) return false;
    for (int i = 0; i < want->rank; i++) {
        bool fresh = ts_dim_sym_name(want->dims[i]) != NULL;
        if (fresh ? ts_dim_sym_name(got->dims[i]) == NULL : !ts_dim_eq(want->dims[i], got->dims[i])) return false;
    }
    return true;
}

static ts_status verify_block(vctx *v, ts_block *b);

static ts_status verify_node(vctx *v, ts_block *b, uint32_t blk, ts_node *n)
{
    if (n->block != b) return fail_at(v, n, "node is linked into the wrong block");
    for (int i = 0; i < n->n_in; i++)
        if (!visible(v, n->in[i], blk)) return fail_at(v, n, "an operand is not defined before use in this block");
    for (int r = 0; r < n->n_regions; r++) {
        if (n->regions[r]->parent != n) return fail_at(v, n, "region has the wrong parent");
        TS_TRY(verify_block(v, n->regions[r]));
    }
    ts_type types[64];
    int count = 0;
    ts_err inner = {0};
    if (ts_ir_infer(v->g, n, types, 64, &count, &inner) != TS_OK) return fail_at(v, n, inner.msg);
    if (count != n->n_out) return fail_at(v, n, "result count differs from the shape rule");
    for (int i = 0; i < count; i++) {
        ts_value *o = n->out[i];
        if (o->def != n || o->index != i) return fail_at(v, n, "result does not point back at its node");
        if (!types_agree(n, &types[i], &o->type)) return fail_at(v, n, "result type differs from the shape rule");
        if (o->id >= v->g->next_value_id || v->scope[o->id]) return fail_at(v, n, "value defined twice");
        v->scope[o->id] = blk;
    }
    return TS_OK;
}

static ts_status verify_block(vctx *v, ts_block *b)
{
    uint32_t blk = ++v->serial;
    for (int i = 0; i < b->n_params; i++) {
        ts_value *p = b->params[i];
        if (p->id >= v->g->next_value_id || p->param_of != b || p->index != i || v->scope[p->id])
            return fail_at(v, NULL, "a block parameter is malformed");
        v->scope[p->id] = blk;
    }
    for (ts_node *n = b->first; n; n = n->next) TS_TRY(verify_node(v, b, blk, n));
    for (int i = 0; i < b->n_results; i++)
        if (!visible(v, b->results[i], blk)) return fail_at(v, NULL, "a block result is not defined in its block");
    return TS_OK;
}

ts_status ts_ir_verify(ts_graph *g, ts_err *err)
{
    vctx v = {g, ts_mem_zalloc(sizeof(uint32_t) * (g->next_value_id + 1)), 0, err};
    if (!v.scope) return ts_err_set(err, TS_ERR_OOM, "verify: out of memory");
    ts_status s = verify_block(&v, g->body);
    ts_mem_free(v.scope);
    return s;
}
