/* builder.c — the builder's core: sticky errors, operand checks, and the
 * one path every node takes (hash-cons lookup, create, fold, simplify,
 * remember). The convenience calls are in build_ops.c. */
#include "builder/builder.h"

#include <stdio.h>
#include <string.h>

#include "passes/passes.h"

struct ts_builder {
    ts_graph *g;
    ts_block *blk;
    unsigned flags;
    const char *origin;       /* in the graph arena */
    ts_pass_nodeset set;      /* mergeable nodes of blk, for hash-consing */
    ts_err err;               /* the first failure */
    bool prefixed;            /* err already names the origin */
};

/* ---- lifetime and state ------------------------------------------------------- */

ts_builder *ts_builder_new(ts_graph *g, ts_block *blk)
{
    if (!g) return NULL;
    ts_builder *b = ts_mem_zalloc(sizeof *b);
    if (!b) return NULL;
    b->g = g;
    b->blk = blk ? blk : g->body;
    b->flags = TS_BUILD_ALL;
    for (ts_node *n = b->blk->first; n; n = n->next) {
        if (!ts_pass_mergeable(n)) continue;
        uint64_t k = ts_pass_node_key(n);
        if (ts_pass_nodeset_find(&b->set, n, k)) continue;
        if (ts_pass_nodeset_add(&b->set, n, k, NULL) != TS_OK) {
            ts_builder_free(b);
            return NULL;
        }
    }
    return b;
}

void ts_builder_free(ts_builder *b)
{
    if (!b) return;
    ts_pass_nodeset_free(&b->set);
    ts_mem_free(b);
}

ts_status ts_builder_status(const ts_builder *b, ts_err *err)
{
    if (!b) return ts_err_set(err, TS_ERR_OOM, "out of memory creating a builder");
    if (b->err.code != TS_OK) ts_err_set(err, b->err.code, "%s", b->err.msg);
    return b->err.code;
}

ts_graph *ts_builder_graph(const ts_builder *b) { return b->g; }
ts_block *ts_builder_block(const ts_builder *b) { return b->blk; }
void ts_builder_set_flags(ts_builder *b, unsigned flags) { b->flags = flags; }

void ts_builder_set_origin(ts_builder *b, const char *origin)
{
    b->origin = origin ? ts_arena_strdup(b->g->arena, origin) : NULL;
    if (origin && !b->origin) ts_builder_fail(b, TS_ERR_OOM, "out of memory");
}

const char *ts_builder_origin(const ts_builder *b) { return b->origin; }

/* After a callee failed with s: make sure the builder holds an error (some
 * callees return a code without a message) and name the origin once. */
static ts_status failed(ts_builder *b, ts_status s)
{
    if (b->err.code == TS_OK) ts_err_set(&b->err, s, "%s", ts_status_name(s));
    if (!b->prefixed && b->origin) ts_err_prefix(&b->err, "%s: ", b->origin);
    b->prefixed = true;
    return b->err.code;
}

ts_status ts_builder_fail(ts_builder *b, ts_status code, const char *fmt, ...)
{
    if (b->err.code != TS_OK) return b->err.code;
    va_list ap;
    va_start(ap, fmt);
    ts_err_vset(&b->err, code, fmt, ap);
    va_end(ap);
    return failed(b, code);
}

#define TRY_B(b, expr) do { ts_status s_ = (expr); if (s_ != TS_OK) return failed(b, s_); } while (0)

/* ---- operands ------------------------------------------------------------------- */

/* Regions are isolated: a value is usable only in the block defining it. */
static bool visible(const ts_builder *b, const ts_value *v)
{
    return v->def ? v->def->block == b->blk : v->param_of == b->blk;
}

static ts_status check_operands(ts_builder *b, const char *what, int n, ts_value *const *in)
{
    if (n && !in) return ts_builder_fail(b, TS_ERR_INVALID_ARG, "%s: operands are NULL", what);
    for (int i = 0; i < n; i++) {
        if (!in[i]) return ts_builder_fail(b, TS_ERR_INVALID_ARG, "%s: operand %d is NULL", what, i);
        if (!visible(b, in[i]))
            return ts_builder_fail(b, TS_ERR_INVALID_ARG,
                                   "%s: operand %d is not defined in this block (regions see only their parameters)",
                                   what, i);
    }
    return TS_OK;
}

/* ---- hash-consing ------------------------------------------------------------------ */

/* An identical node already in the block, looked up before building. */
static ts_node *lookup(ts_builder *b, ts_op op, int n_in, ts_value *const *in, ts_attr *attrs)
{
    if (!(b->flags & TS_BUILD_MERGE)) return NULL;
    ts_node key = {.op = op, .n_in = n_in, .in = (ts_value **)in, .attrs = attrs};
    if (!ts_pass_mergeable(&key)) return NULL;
    ts_node *hit = ts_pass_nodeset_find(&b->set, &key, ts_pass_node_key(&key));
    return hit && hit->block == b->blk ? hit : NULL;
}

/* v is what a new node stands for. If v's node was made by this call
 * (id >= mark) and an identical node exists, drop the new one and use the
 * old; otherwise remember v's node. */
static ts_status intern(ts_builder *b, ts_value **v, uint32_t mark)
{
    ts_node *d = (*v)->def;
    if (!d || d->id < mark || !(b->flags & TS_BUILD_MERGE) || !ts_pass_mergeable(d)) return TS_OK;
    uint64_t k = ts_pass_node_key(d);
    ts_node *hit = ts_pass_nodeset_find(&b->set, d, k);
    if (hit && hit != d && hit->block == b->blk) {
        *v = hit->out[(*v)->index];
        ts_ir_node_unlink(d);
        return TS_OK;
    }
    if (hit == d) return TS_OK;
    TRY_B(b, ts_pass_nodeset_add(&b->set, d, k, &b->err));
    return TS_OK;
}

/* ---- the path of every node ------------------------------------------------------- */

/* n was just appended: fold it, or simplify it, or keep it. out receives
 * what stands for its results. */
static ts_status finish(ts_builder *b, ts_node *n, uint32_t mark, ts_value **out)
{
    bool folded = false;
    if (b->flags & TS_BUILD_FOLD) TRY_B(b, ts_pass_fold_node(b->g, n, out, &folded, &b->err));
    ts_value *r = NULL;
    if (!folded && (b->flags & TS_BUILD_SIMPLIFY)) TRY_B(b, ts_pass_simplify_node(b->g, n, &r, &b->err));
    if (r) out[0] = r;
    if (!folded && !r) {
        for (int k = 0; k < n->n_out; k++) out[k] = n->out[k];
        return intern(b, &out[0], mark);
    }
    ts_ir_node_unlink(n);   /* brand new: nothing uses it */
    for (int k = 0; k < n->n_out; k++) TS_TRY(intern(b, &out[k], mark));
    return TS_OK;
}

static ts_status reuse(ts_builder *b, ts_node *hit, int cap, ts_value **out, int *n_out)
{
    if (hit->n_out > cap)
        return ts_builder_fail(b, TS_ERR_INVALID_ARG, "%s has %d results, room for %d",
                               ts_op_get(hit->op)->name, hit->n_out, cap);
    for (int k = 0; k < hit->n_out; k++) out[k] = hit->out[k];
    *n_out = hit->n_out;
    return TS_OK;
}

ts_status ts_b_op(ts_builder *b, ts_op op, int n_in, ts_value *const *in, ts_attr *attrs,
                  int n_regions, ts_block *const *regions, int cap, ts_value **out, int *n_out)
{
    *n_out = 0;
    if (b->err.code != TS_OK) return b->err.code;
    if ((unsigned)op >= TS_OP_COUNT) return ts_builder_fail(b, TS_ERR_INVALID_ARG, "op %d does not exist", (int)op);
    TS_TRY(check_operands(b, ts_op_get(op)->name, n_in, in));
    if (!attrs && !(attrs = ts_b_attrs(b, op))) return b->err.code;
    ts_node *hit = n_regions ? NULL : lookup(b, op, n_in, in, attrs);
    if (hit) return reuse(b, hit, cap, out, n_out);
    uint32_t mark = b->g->next_node_id;
    ts_node *n;
    TRY_B(b, ts_ir_node_new(b->g, b->blk, NULL, op, n_in, in, attrs, n_regions, regions, &n, &b->err));
    n->origin = b->origin;
    if (n->n_out > cap) {
        ts_ir_node_unlink(n);
        return ts_builder_fail(b, TS_ERR_INVALID_ARG, "%s has %d results, room for %d",
                               ts_op_get(op)->name, n->n_out, cap);
    }
    TS_TRY(finish(b, n, mark, out));
    *n_out = n->n_out;
    return TS_OK;
}

ts_attr *ts_b_attrs(ts_builder *b, ts_op op)
{
    if (b->err.code != TS_OK) return NULL;
    ts_attr *a = ts_ir_attrs_new(b->g, op);
    if (!a) ts_builder_fail(b, TS_ERR_OOM, "out of memory");
    return a;
}

ts_value *ts_b_node(ts_builder *b, ts_op op, int n_in, ts_value *const *in, ts_attr *attrs)
{
    ts_value *out[8];
    int n = 0;
    if (ts_b_op(b, op, n_in, in, attrs, 0, NULL, 8, out, &n) != TS_OK || n == 0) return NULL;
    return out[0];
}

/* ---- block signature and constants ---------------------------------------------- */

ts_value *ts_b_input(ts_builder *b, ts_dtype dt, int rank, const ts_dim *dims)
{
    if (b->err.code != TS_OK) return NULL;
    if (!ts_dtype_valid(dt) || (rank && !dims)) {
        ts_builder_fail(b, TS_ERR_INVALID_ARG, "input: invalid dtype %d or NULL dims", (int)dt);
        return NULL;
    }
    ts_type t = {dt, rank, (ts_dim *)dims};
    ts_value *v = NULL;
    if (ts_ir_block_add_param(b->g, b->blk, &t, &v, &b->err) != TS_OK) {
        failed(b, b->err.code);
        return NULL;
    }
    return v;
}

ts_status ts_b_return(ts_builder *b, int n, ts_value *const *vals)
{
    if (b->err.code != TS_OK) return b->err.code;
    TS_TRY(check_operands(b, "return", n, vals));
    TRY_B(b, ts_ir_block_set_results(b->g, b->blk, n, vals, &b->err));
    return TS_OK;
}

ts_value *ts_b_const(ts_builder *b, ts_tensor *t)
{
    if (b->err.code != TS_OK) return NULL;
    if (!t) {
        ts_builder_fail(b, TS_ERR_INVALID_ARG, "const: the tensor is NULL");
        return NULL;
    }
    ts_tensor *own = NULL;
    /* borrowed memory may die before the graph does */
    if (!t->release && t->nbytes && ts_tensor_clone(t, &own, &b->err) != TS_OK) {
        failed(b, b->err.code);
        return NULL;
    }
    ts_attr *a = ts_b_attrs(b, TS_OP_CONST);
    ts_status s = a ? ts_attr_set_tensor(b->g, TS_OP_CONST, a, "value", own ? own : t) : b->err.code;
    ts_tensor_release(own);
    if (s != TS_OK) {
        failed(b, s);
        return NULL;
    }
    return ts_b_node(b, TS_OP_CONST, 0, NULL, a);
}

ts_value *ts_b_scalar(ts_builder *b, ts_dtype dt, double v)
{
    if (b->err.code != TS_OK) return NULL;
    ts_tensor *t = NULL;
    if (ts_tensor_new(dt, 0, NULL, &t, &b->err) != TS_OK) {
        failed(b, b->err.code);
        return NULL;
    }
    ts_elem_set_f64(dt, t->data, 0, v);
    ts_value *r = ts_b_const(b, t);
    ts_tensor_release(t);
    return r;
}
