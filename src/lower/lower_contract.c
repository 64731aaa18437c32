/* lower_contract.c — contractions as plain loop nests: dot and conv for
 * a code generator without the CPU's contraction templates (the device
 * dialects, ts_plan_new_loops), and the CPU's dots whose axes do not merge
 * into strides or that are not f32. One output element per iteration of
 * the output's loops, its sum a reduction over the contracted axes (conv:
 * input channels, then taps), accumulated as reduce_sum accumulates. */
#include "lower/lower_int.h"

void ts_lw_dot(lctx *c, const ts_node *n)
{
    const ts_value *l = n->in[0], *r = n->in[1], *y = n->out[0];
    int nlb = 0, nrb = 0, nlc = 0, nrc = 0, acc = 0;
    const int64_t *lb = ts_node_ints(n, "lhs_batch", &nlb), *rb = ts_node_ints(n, "rhs_batch", &nrb);
    const int64_t *lc = ts_node_ints(n, "lhs_contract", &nlc), *rc = ts_node_ints(n, "rhs_contract", &nrc);
    nest ns = {.tail = &c->k->body};
    ts_lx *yc[TS_MAX_RANK], *lx[TS_MAX_RANK], *rx[TS_MAX_RANK], *ext[TS_MAX_RANK], *kv[TS_MAX_RANK];
    for (int i = 0; i < y->type.rank; i++) yc[i] = ts_lw_open_loop(c, &ns, ts_lw_dim(c, y->type.dims[i]));
    for (int i = 0; i < nlc; i++) ext[i] = ts_lw_dim(c, l->type.dims[lc[i]]);
    ts_ls **inner = NULL;
    ts_dtype dt = y->type.dtype, adt = ts_lw_acc_dtype(TS_OP_REDUCE_SUM, dt);
    ts_lx *a = ts_lw_open_reduction(c, &ns, TS_OP_REDUCE_SUM, adt, nlc, ext, kv, &inner, &acc);
    if (!a) return;
    /* operand coords: batch dims from the output's leading coords, contract
     * dims from the reduced vars, the free dims in order after the batch */
    bool used_l[TS_MAX_RANK] = {false}, used_r[TS_MAX_RANK] = {false};
    for (int i = 0; i < nlb; i++) lx[lb[i]] = yc[i], used_l[lb[i]] = true;
    for (int i = 0; i < nrb; i++) rx[rb[i]] = yc[i], used_r[rb[i]] = true;
    for (int i = 0; i < nlc; i++) lx[lc[i]] = kv[i], used_l[lc[i]] = true;
    for (int i = 0; i < nrc; i++) rx[rc[i]] = kv[i], used_r[rc[i]] = true;
    int o = nlb;
    for (int i = 0; i < l->type.rank; i++)
        if (!used_l[i]) lx[i] = yc[o++];
    for (int i = 0; i < r->type.rank; i++)
        if (!used_r[i]) rx[i] = yc[o++];
    ts_lx *lv = ts_lx_cast(c->p, ts_lw_value_at(c, l, lx, false), adt), *rv = ts_lx_cast(c->p, ts_lw_value_at(c, r, rx, false), adt);
    ts_lw_update(c, inner, acc, TS_OP_ADD, ts_lx_op(c->p, TS_OP_MUL, adt, lv, rv, NULL));
    ts_lw_to_end(&ns);
    ts_lw_store(c, &ns, y, yc, ts_lx_cast(c->p, a, dt));
}

/* y[n, o, p..] = sum over the group's input channels ci (outer) and the
 * taps t.. (inner) of x[n, g*cg + ci, q..] * w[o, ci, t..], the order of
 * the interpreter's k_conv; q_d = p_d*stride + t_d*rhs_dilation - pad_lo,
 * read where it falls on an input element (0 <= q_d <= ld*(in_d - 1) and
 * ld divides q_d: input dilation), padding elsewhere. */
void ts_lw_conv(lctx *c, const ts_node *n)
{
    ts_lprog *p = c->p;
    const ts_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
    const int sp = y->type.rank - 2;
    int cnt = 0;
    const int64_t *stride = ts_node_ints(n, "strides", &cnt), *lo = ts_node_ints(n, "pad_lo", &cnt);
    const int64_t *ld = ts_node_ints(n, "lhs_dilation", &cnt), *rd = ts_node_ints(n, "rhs_dilation", &cnt);
    const int64_t groups = ts_node_int(n, "groups");
    nest ns = {.tail = &c->k->body};
    ts_lx *yc[TS_MAX_RANK], *xc[TS_MAX_RANK], *wc[TS_MAX_RANK], *ext[TS_MAX_RANK], *kv[TS_MAX_RANK];
    for (int i = 0; i < y->type.rank; i++) yc[i] = ts_lw_open_loop(c, &ns, ts_lw_dim(c, y->type.dims[i]));
    ts_lx *cg = ts_lw_dim(c, w->type.dims[1]);
    ext[0] = cg;
    for (int d = 0; d < sp; d++) ext[1 + d] = ts_lw_dim(c, w->type.dims[2 + d]);
    ts_ls **inner = NULL;
    int acc = 0;
    const ts_dtype dt = y->type.dtype, adt = ts_lw_acc_dtype(TS_OP_REDUCE_SUM, dt);
    ts_lx *a = ts_lw_open_reduction(c, &ns, TS_OP_REDUCE_SUM, adt, 1 + sp, ext, kv, &inner, &acc);
    if (!a) return;
    ts_lx *per_group = ts_lx_idiv(p, ts_lw_dim(c, w->type.dims[0]), ts_lx_int(p, groups));
    xc[0] = yc[0];
    xc[1] = ts_lx_add(p, ts_lx_mul(p, ts_lx_idiv(p, yc[1], per_group), cg), kv[0]);
    wc[0] = yc[1], wc[1] = kv[0];
    ts_lx *inside = ts_lx_const(p, TS_DTYPE_BOOL, 1);
    for (int d = 0; d < sp; d++) {
        ts_lx *q = ts_lx_sub(p, ts_lx_add(p, ts_lx_mul(p, yc[2 + d], ts_lx_int(p, stride[d])),
                                          ts_lx_mul(p, kv[1 + d], ts_lx_int(p, rd[d]))),
                             ts_lx_int(p, lo[d]));
        ts_lx *in = ts_lw_dim(c, x->type.dims[2 + d]);
        inside = ts_lx_and(p, inside, ts_lx_lt(p, ts_lx_int(p, -1), q));
        xc[2 + d] = q;
        if (ld[d] != 1) {   /* q >= 0 here, so C's % is the remainder */
            inside = ts_lx_and(p, inside, ts_lx_lt(p, ts_lx_imod(p, q, ts_lx_int(p, ld[d])), ts_lx_int(p, 1)));
            xc[2 + d] = ts_lx_idiv(p, q, ts_lx_int(p, ld[d]));
        }
        inside = ts_lx_and(p, inside, ts_lx_lt(p, xc[2 + d], in));
        wc[2 + d] = kv[1 + d];
    }
    ts_lx *xv = ts_lx_cast(p, ts_lw_value_at(c, x, xc, false), adt), *wv = ts_lx_cast(p, ts_lw_value_at(c, w, wc, false), adt);
    ts_lx *prod = ts_lx_op(p, TS_OP_MUL, adt, xv, wv, NULL);
    ts_lw_update(c, inner, acc, TS_OP_ADD, ts_lx_guard(p, inside, prod, ts_lw_identity(c, TS_OP_REDUCE_SUM, adt)));
    ts_lw_to_end(&ns);
    ts_lw_store(c, &ns, y, yc, ts_lx_cast(p, a, dt));
}
