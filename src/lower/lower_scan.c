/* lower_scan.c — the ops that walk the lanes along one axis and keep
 * more than a fold: argmax/argmin (the position of the extreme) and
 * cumulative (every prefix), as loop kernels with their input inlined
 * like a reduction's; sort, as a call of the runtime's lane sort
 * (tsrt_sort.h) over its stored input (D117). All follow
 * docs/primitives.md to the bit: the interpreter is the oracle. */
#include "lower/lower_int.h"

/* Loops over every axis of x but `axis`, in order; coords[axis] is left
 * for the caller. */
static void open_others(lctx *c, nest *ns, const ts_value *x, int axis, ts_lx **coords)
{
    for (int i = 0; i < x->type.rank; i++)
        if (i != axis) coords[i] = ts_lw_open_loop(c, ns, ts_lw_dim(c, x->type.dims[i]));
}

/* Two passes over each lane (it is in cache for the second): the extreme
 * m by the reduction's own max/min, which lets NaN through and so is NaN
 * when the lane holds one; then the first (select_last: the last) index
 * whose element equals m, a NaN matching a NaN. -0 and +0 compare equal,
 * as the primitive wants. The extreme pass runs in vector lanes like any
 * max; the index pass is a min (max) over `equal ? k : n` (-1). */
void ts_lw_arg_extreme(lctx *c, const ts_node *n)
{
    ts_lprog *p = c->p;
    const ts_value *x = n->in[0], *y = n->out[0];
    const int axis = (int)ts_node_int(n, "axis");
    const bool last = ts_node_int(n, "select_last") != 0;
    const ts_op red = n->op == TS_OP_ARGMAX ? TS_OP_REDUCE_MAX : TS_OP_REDUCE_MIN;
    const ts_dtype dt = x->type.dtype;
    nest ns = {.tail = &c->k->body};
    ts_lx *xc[TS_MAX_RANK], *yc[TS_MAX_RANK], *len = ts_lw_dim(c, x->type.dims[axis]);
    open_others(c, &ns, x, axis, xc);
    for (int i = 0, j = 0; i < x->type.rank; i++)
        if (i != axis) yc[j++] = xc[i];

    ts_ls **inner = NULL;
    int acc_m = 0, acc_i = 0;
    ts_lx *kv = NULL;
    ts_lx *m = ts_lw_open_reduction(c, &ns, red, dt, 1, &len, &kv, &inner, &acc_m);
    if (!m) return;
    xc[axis] = kv;
    ts_lw_update(c, inner, acc_m, ts_lw_combine_op(red), ts_lw_value_at(c, x, xc, false));
    ts_lw_to_end(&ns);

    /* the index pass: an i64 min from n (first) or max from -1 (last) */
    ts_ls *a = ts_ls_new(p, TS_LS_ACC);
    if (!a) return;
    a->var = acc_i = c->k->n_accs++;
    a->dt = TS_DTYPE_I64;
    a->value = last ? ts_lx_int(p, -1) : len;
    ts_lw_append(&ns, a);
    const int d0 = ns.depth;
    ts_ls **after = ns.tail;
    xc[axis] = ts_lw_open_loop(c, &ns, len);
    ts_lx *v = ts_lw_value_at(c, x, xc, false);
    ts_lx *hit = ts_lx_op(p, TS_OP_EQ, TS_DTYPE_BOOL, v, m, NULL);
    if (ts_dtype_is_fp(dt)) {
        ts_lx *both_nan = ts_lx_op(p, TS_OP_AND, TS_DTYPE_BOOL, ts_lx_op(p, TS_OP_NE, TS_DTYPE_BOOL, v, v, NULL),
                                   ts_lx_op(p, TS_OP_NE, TS_DTYPE_BOOL, m, m, NULL), NULL);
        hit = ts_lx_op(p, TS_OP_OR, TS_DTYPE_BOOL, hit, both_nan, NULL);
    }
    ts_lx *pick = ts_lx_op(p, TS_OP_SELECT, TS_DTYPE_I64, hit, xc[axis], a->value);
    ts_lw_update(c, ns.tail, acc_i, last ? TS_OP_MAX : TS_OP_MIN, pick);
    ns.depth = d0;
    ns.tail = after;
    ts_lw_to_end(&ns);
    ts_lw_store(c, &ns, y, yc, ts_lx_acc(p, TS_DTYPE_I64, acc_i, d0));
}

static ts_op cumulative_reduce(const char *kind)
{
    if (kind && kind[0] == 'p') return TS_OP_REDUCE_PROD;
    if (kind && kind[0] == 'm') return kind[1] == 'a' ? TS_OP_REDUCE_MAX : TS_OP_REDUCE_MIN;
    return TS_OP_REDUCE_SUM;
}

/* One accumulator per lane, carried along the axis loop (innermost, so a
 * lane's elements are read in order; for an axis that is not the last
 * this walks with a stride, which the lanes this serves, short and few,
 * afford). Floats fold in f64 and round each output once; exclusive
 * stores before folding the element in, inclusive after. */
void ts_lw_cumulative(lctx *c, const ts_node *n)
{
    ts_lprog *p = c->p;
    const ts_value *x = n->in[0], *y = n->out[0];
    const int axis = (int)ts_node_int(n, "axis");
    const bool excl = ts_node_int(n, "exclusive") != 0, rev = ts_node_int(n, "reverse") != 0;
    const ts_op red = cumulative_reduce(ts_node_enum_name(n, "kind"));
    const ts_dtype dt = x->type.dtype, adt = ts_dtype_is_fp(dt) ? TS_DTYPE_F64 : dt;
    nest ns = {.tail = &c->k->body};
    ts_lx *xc[TS_MAX_RANK], *len = ts_lw_dim(c, x->type.dims[axis]);
    open_others(c, &ns, x, axis, xc);
    ts_ls *a = ts_ls_new(p, TS_LS_ACC);
    if (!a) return;
    a->var = c->k->n_accs++;
    a->dt = adt;
    a->value = ts_lw_identity(c, red, adt);
    ts_lw_append(&ns, a);
    ts_lx *acc = ts_lx_acc(p, adt, a->var, ns.depth);
    ts_lx *k = ts_lw_open_loop(c, &ns, len);
    xc[axis] = rev ? ts_lx_sub(p, ts_lx_sub(p, len, ts_lx_int(p, 1)), k) : k;
    ts_lx *v = ts_lx_cast(p, ts_lw_value_at(c, x, xc, false), adt);
    if (excl) ts_lw_store(c, &ns, y, xc, ts_lx_cast(p, acc, dt));
    ts_ls *u = ts_ls_new(p, TS_LS_UPDATE);
    if (!u) return;
    u->var = a->var;
    u->op = ts_lw_combine_op(red);
    u->value = v;
    ts_lw_append(&ns, u);
    if (!excl) ts_lw_store(c, &ns, y, xc, ts_lx_cast(p, acc, dt));
}

/* The sort as a call: x, values, positions and [outer, len, inner]
 * around the axis, plus the direction. */
void ts_lw_sort(lctx *c, const ts_node *n)
{
    ts_lprog *p = c->p;
    const ts_value *x = n->in[0];
    const int axis = (int)ts_node_int(n, "axis");
    ts_ltmpl *t = ts_lw_tmpl_new(c, TS_TMPL_SORT);
    if (!t) return;
    t->a = ts_lkernel_buf(p, c->k, x, false);
    t->b = ts_lkernel_buf(p, c->k, n->out[0], true);
    t->c = ts_lkernel_buf(p, c->k, n->out[1], true);
    ts_lx *outer = ts_lx_int(p, 1), *inner = ts_lx_int(p, 1);
    for (int i = 0; i < x->type.rank; i++) {
        ts_lx *d = ts_lw_dim(c, x->type.dims[i]);
        if (i < axis) outer = ts_lx_mul(p, outer, d);
        if (i > axis) inner = ts_lx_mul(p, inner, d);
    }
    t->n_args = 4;
    t->arg[0] = outer;
    t->arg[1] = ts_lw_dim(c, x->type.dims[axis]);
    t->arg[2] = inner;
    t->arg[3] = ts_lx_int(p, ts_node_int(n, "descending") != 0);
}
