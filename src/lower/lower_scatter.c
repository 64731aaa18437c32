/* lower_scatter.c — scatter as a kernel (D123): y is a copy of x, then
 * each update is combined into y at its flat position, in idx's
 * row-major order, as the primitive says (the last of duplicate `set`s
 * wins; `add` rounds after each update). The order makes the second part
 * serial: the whole kernel runs on one thread. The indices are checked by
 * the runtime before the kernel starts, with the interpreter's message
 * (D113), so every store stays in y. */
#include "lower/lower_int.h"

static const ts_op combines[] = {TS_OP_SELECT, TS_OP_ADD, TS_OP_MUL, TS_OP_MAX, TS_OP_MIN};

void ts_lw_scatter(lctx *c, const ts_node *n)
{
    ts_lprog *p = c->p;
    const ts_value *x = n->in[0], *idx = n->in[1], *upd = n->in[2], *y = n->out[0];
    const ts_dtype dt = y->type.dtype;
    int64_t numel = 1;
    for (int i = 0; i < x->type.rank; i++) numel *= x->type.dims[i].c;   /* static: emit_ops.c */
    nest ns = {.tail = &c->k->body};
    ts_lx *coords[TS_MAX_RANK];
    for (int i = 0; i < y->type.rank; i++) coords[i] = ts_lw_open_loop(c, &ns, ts_lw_dim(c, y->type.dims[i]));
    ts_lw_store(c, &ns, y, coords, ts_lw_value_at(c, x, coords, false));
    ns.tail = &c->k->body, ns.depth = 0;
    ts_lw_to_end(&ns);
    const int ib = ts_lkernel_buf(p, c->k, idx, false), yb = ts_lkernel_buf(p, c->k, y, true);
    ts_lkernel_check(p, c->k, ib, ts_lx_int(p, numel), n);
    for (int i = 0; i < idx->type.rank; i++) coords[i] = ts_lw_open_loop(c, &ns, ts_lw_dim(c, idx->type.dims[i]));
    ts_lx *at = ts_lx_cast(p, ts_lw_value_at(c, idx, coords, false), TS_DTYPE_I64);
    ts_lx *u = ts_lw_value_at(c, upd, coords, false);
    const ts_op op = combines[ts_node_int(n, "combine")];
    ts_ls *s = ts_ls_new(p, TS_LS_STORE);
    if (!s) return;
    s->buf = yb;
    s->index = at;
    s->value = op == TS_OP_SELECT ? u : ts_lx_op(p, op, dt, ts_lx_load(p, dt, yb, at), u, NULL);
    ts_lw_append(&ns, s);
    c->k->serial = true;
}
