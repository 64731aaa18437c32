/* fold.c — constant folding: a node whose operands are all constants is
 * evaluated by the interpreter (the oracle, so folding means exactly what
 * running means) and replaced by constants. The core is shared with the
 * builder, which folds as it builds. */
#include "passes/passes.h"

#include "interp/interp.h"

/* Elements of a fully constant type; false when a dim is symbolic or the
 * count overflows. */
static bool const_numel(const ts_type *t, int64_t *numel)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        if (!ts_dim_is_const(t->dims[i]) || !ts_i64_mul(n, t->dims[i].c, &n)) return false;
    *numel = n;
    return true;
}

/* The `const` behind operand v: its definition, or, for an elementwise
 * node, the constant a `broadcast` widens (a broadcast of more than
 * TS_FOLD_FREE_ELEMS is left unfolded by the size rule, and would
 * otherwise stop every elementwise chain over it, e.g. a batch norm's
 * var + broadcast(eps) over 1280 channels). NULL when not constant. */
static const ts_node *const_behind(const ts_node *n, const ts_value *v)
{
    const ts_node *d = v->def;
    if (d && d->op == TS_OP_BROADCAST && (ts_op_get(n->op)->flags & TS_OPF_EW)) d = d->in[0]->def;
    return d && d->op == TS_OP_CONST ? d : NULL;
}

/* Whether every operand is constant; *in_total counts the constants'
 * elements as stored (before any broadcast). */
static bool operands_const(const ts_node *n, int64_t *in_total)
{
    *in_total = 0;
    for (int i = 0; i < n->n_in; i++) {
        const ts_node *d = const_behind(n, n->in[i]);
        if (!d) return false;
        if (!ts_i64_add(*in_total, ts_node_tensor(d, "value")->numel, in_total)) *in_total = INT64_MAX;
    }
    return true;
}

/* The size rule of passes.h: bounded results that do not inflate data. */
static bool size_ok(const ts_node *n, int64_t in_total)
{
    int64_t total = 0, k;
    for (int i = 0; i < n->n_out; i++)
        if (!const_numel(&n->out[i]->type, &k) || !ts_i64_add(total, k, &total)) return false;
    return total <= TS_FOLD_MAX_ELEMS && (total <= TS_FOLD_FREE_ELEMS || total <= in_total);
}

#define MAX_FOLD_OUT 8

static bool foldable(const ts_node *n)
{
    int64_t in_total;
    if (n->op == TS_OP_CONST || n->n_regions || n->n_out < 1 || n->n_out > MAX_FOLD_OUT) return false;
    if (ts_op_get(n->op)->flags & (TS_OPF_SIDE | TS_OPF_CONTROL | TS_OPF_FRESH)) return false;
    return operands_const(n, &in_total) && size_ok(n, in_total) && ts_interp_kernel_of(n->op);
}

/* One `const` per tensor, before n, named after what it replaces. */
static ts_status make_consts(ts_graph *g, ts_node *n, ts_tensor **vals, ts_value **repl, ts_err *err)
{
    for (int k = 0; k < n->n_out; k++) {
        ts_attr *a = ts_ir_attrs_new(g, TS_OP_CONST);
        if (!a || ts_attr_set_tensor(g, TS_OP_CONST, a, "value", vals[k]) != TS_OK)
            return ts_err_set(err, TS_ERR_OOM, "fold: out of memory");
        ts_node *c;
        TS_TRY(ts_ir_node_new(g, n->block, n, TS_OP_CONST, 0, NULL, a, 0, NULL, &c, err));
        c->origin = n->origin;
        repl[k] = c->out[0];
        ts_pass_take_name(repl[k], n->out[k]);
    }
    return TS_OK;
}

/* n's result from its constant operands; a broadcast operand is widened
 * first, into `wide` (released by the caller). */
static ts_status eval(ts_graph *g, ts_node *n, ts_tensor **in, ts_tensor **wide, ts_tensor **out, bool *ok,
                      ts_err *err)
{
    ts_err local = {0};
    ts_status s = TS_OK;
    for (int i = 0; i < n->n_in && s == TS_OK; i++) {
        const ts_node *d = n->in[i]->def;
        if (d->op == TS_OP_CONST) {
            in[i] = ts_node_tensor(d, "value");
            continue;
        }
        ts_tensor *src = ts_node_tensor(d->in[0]->def, "value");
        s = ts_interp_eval_node(g, d, &src, &wide[i], &local);
        in[i] = wide[i];
    }
    if (s == TS_OK) s = ts_interp_eval_node(g, n, in, out, &local);
    *ok = s == TS_OK;
    /* run-time failures stay in the graph, to be reported when it runs */
    if (s == TS_ERR_OOM) return ts_err_set(err, s, "fold: %s", local.msg);
    return TS_OK;
}

ts_status ts_pass_fold_node(ts_graph *g, ts_node *n, ts_value **repl, bool *folded, ts_err *err)
{
    *folded = false;
    if (!foldable(n)) return TS_OK;
    ts_tensor *out[MAX_FOLD_OUT] = {0};
    const size_t nin = (size_t)(n->n_in ? n->n_in : 1);
    ts_tensor **in = ts_mem_zalloc(sizeof *in * 2 * nin);
    if (!in) return ts_err_set(err, TS_ERR_OOM, "fold: out of memory");
    bool ok = false;
    ts_status s = eval(g, n, in, in + nin, out, &ok, err);
    for (size_t i = 0; i < nin; i++) ts_tensor_release(in[nin + i]);
    ts_mem_free(in);
    if (s == TS_OK && ok) s = make_consts(g, n, out, repl, err);
    for (int k = 0; k < n->n_out; k++) ts_tensor_release(out[k]);
    *folded = s == TS_OK && ok;
    return s;
}

/* ---- the pass --------------------------------------------------------------- */

/* One forward sweep folds whole chains: a folded node's users see its
 * constants when the sweep reaches them. */
static ts_status fold_block(ts_graph *g, ts_block *b, bool *changed, ts_err *err)
{
    ts_status s = TS_OK;
    for (ts_node *n = b->first, *next; n; n = next) {
        next = n->next;
        ts_pass_resolve_operands(n);
        if (s != TS_OK) continue;   /* still resolve, so nothing dangles */
        for (int r = 0; r < n->n_regions && s == TS_OK; r++) s = fold_block(g, n->regions[r], changed, err);
        ts_value *repl[MAX_FOLD_OUT];
        bool folded = false;
        if (s == TS_OK) s = ts_pass_fold_node(g, n, repl, &folded, err);
        if (!folded) continue;
        ts_pass_replace(n, repl);
        *changed = true;
    }
    ts_pass_resolve_results(b);
    return s;
}

ts_status ts_pass_fold(ts_graph *g, bool *changed, ts_err *err)
{
    ts_pass_forget(g->body);
    return fold_block(g, g->body, changed, err);
}
