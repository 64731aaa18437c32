/* rules_control.c — derivatives through if and while. Regions are
 * isolated, so each rule builds new regions: the original region cloned
 * (ts_b_clone) on new parameters, then differentiated inside with the
 * block-level sweeps (ts_ad_vjp_values, ts_ad_jvp_values).
 *
 * - if, both modes: an if on the same predicate whose branches return the
 *   derivatives of the branches.
 * - while, forward mode: a while whose state carries the tangents along.
 * - while, reverse mode: the trip count is known only at run time and the
 *   IR has no growing buffer, so nothing is stored: a loop counts the trips
 *   N, then a loop from k = N-1 down to 0 recomputes state k from the
 *   initial state (an inner loop of k trips) and applies the body's VJP
 *   there. Memory stays that of a few states; time is O(N^2) body runs
 *   (D173). */
#include "autodiff/ad_int.h"

/* A new region: parameters of the given types, a builder on it. */
static ts_block *region(ts_builder *b, int n, ts_value *const *like, ts_value **params, ts_builder **rb)
{
    ts_graph *g = ts_builder_graph(b);
    ts_err e = {0};
    ts_block *blk = NULL;
    *rb = NULL;
    if (ts_ir_block_new(g, &blk, &e) != TS_OK) return ts_builder_fail(b, e.code, "%s", e.msg), NULL;
    for (int i = 0; i < n; i++)
        if (ts_ir_block_add_param(g, blk, &like[i]->type, &params[i], &e) != TS_OK)
            return ts_builder_fail(b, e.code, "%s", e.msg), NULL;
    if (!(*rb = ts_builder_new(g, blk))) return ts_builder_fail(b, TS_ERR_OOM, "out of memory"), NULL;
    return blk;
}

/* Finish region rb yielding n values; its failure becomes b's. */
static bool yield(ts_builder *b, ts_builder *rb, int n, ts_value *const *vals)
{
    ts_err e = {0};
    ts_b_return(rb, n, vals);
    ts_status s = ts_builder_status(rb, &e);
    ts_builder_free(rb);
    if (s != TS_OK) ts_builder_fail(b, s, "%s", e.msg);
    return s == TS_OK;
}

/* Scratch: n_in + n_out + extra value pointers in the graph arena. */
static ts_value **scratch(ts_builder *b, size_t n)
{
    ts_value **v = ts_arena_alloc(ts_builder_graph(b)->arena, sizeof *v * (n + 1));
    if (!v) ts_builder_fail(b, TS_ERR_OOM, "out of memory");
    return v;
}

static ts_value *zeros_or(ts_builder *b, ts_value *v, const ts_value *like) { return v ? v : ad_zeros_like(b, like); }

/* ---- if --------------------------------------------------------------------------------- */

/* Reverse: if(p, a..., ct...) whose branches give the operands' cotangents
 * (those wanted, in order). */
static void vjp_if(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx)
{
    int m = n->n_in - 1, q = n->n_out, nf = 0, nw = 0;
    ts_value **v = scratch(b, (size_t)(3 * (m + q) + 8));
    if (!v) return;
    ts_value **ops = v, **like = v + m + q + 1, **outs = like + m + q;
    ops[0] = n->in[0];
    for (int i = 0; i < m; i++) ops[1 + i] = like[i] = n->in[1 + i], nw += want[1 + i];
    for (int k = 0; k < q; k++)
        if (ad_is_float(n->out[k])) like[m + nf] = n->out[k], ops[1 + m + nf++] = zeros_or(b, ct[k], n->out[k]);
    ts_block *regs[2];
    for (int br = 0; br < 2; br++) {
        ts_value **prm = scratch(b, (size_t)(2 * (m + nf + q) + 2));
        if (!prm) return;
        ts_value **res = prm + m + nf, **ys = res + q, **gr = ys + q;
        ts_builder *rb = NULL;
        if (!(regs[br] = region(b, m + nf, like, prm, &rb))) return;
        int ny = 0;
        if (ts_b_clone(rb, ts_builder_graph(b), n->regions[br], prm, res))
            for (int k = 0; k < q; k++)
                if (ad_is_float(n->out[k])) ys[ny++] = res[k];
        ts_ad_vjp_values(rb, ny, ys, prm + m, m, prm, gr);
        int w = 0;
        for (int i = 0; i < m; i++)
            if (want[1 + i]) gr[w++] = gr[i];
        if (!yield(b, rb, w, gr)) return;
    }
    int got = 0;
    if (ts_b_op(b, TS_OP_IF, 1 + m + nf, ops, NULL, 2, regs, nw, outs, &got) != TS_OK) return;
    for (int i = 0, w = 0; i < m; i++)
        if (want[1 + i]) dx[1 + i] = outs[w++];
}

/* Forward: if(p, a..., t...) whose branches give the results' tangents. */
static void jvp_if(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy)
{
    int m = n->n_in - 1, q = n->n_out, nf = 0, nq = 0;
    ts_value **v = scratch(b, (size_t)(4 * (m + q) + 8));
    if (!v) return;
    ts_value **ops = v, **like = v + 2 * m + 1, **outs = like + 2 * m + 1;
    ops[0] = n->in[0];
    for (int i = 0; i < m; i++) ops[1 + i] = like[i] = n->in[1 + i];
    for (int i = 0; i < m; i++)
        if (ad_is_float(n->in[1 + i])) like[m + nf] = n->in[1 + i], ops[1 + m + nf++] = zeros_or(b, t[1 + i], n->in[1 + i]);
    for (int k = 0; k < q; k++) nq += ad_is_float(n->out[k]);
    ts_block *regs[2];
    for (int br = 0; br < 2; br++) {
        ts_value **prm = scratch(b, (size_t)(2 * (m + nf + q) + 2));
        if (!prm) return;
        ts_value **res = prm + m + nf, **xs = res + q, **ty = xs + m;
        ts_builder *rb = NULL;
        if (!(regs[br] = region(b, m + nf, like, prm, &rb))) return;
        int nx = 0;
        for (int i = 0; i < m; i++)
            if (ad_is_float(n->in[1 + i])) xs[nx++] = prm[i];
        if (ts_b_clone(rb, ts_builder_graph(b), n->regions[br], prm, res))
            ts_ad_jvp_values(rb, nx, xs, prm + m, q, res, ty);
        int w = 0;
        for (int k = 0; k < q; k++)
            if (ad_is_float(n->out[k])) ty[w++] = ty[k];
        if (!yield(b, rb, w, ty)) return;
    }
    int got = 0;
    if (ts_b_op(b, TS_OP_IF, 1 + m + nf, ops, NULL, 2, regs, nq, outs, &got) != TS_OK) return;
    for (int k = 0, w = 0; k < q; k++)
        if (ad_is_float(n->out[k])) dy[k] = outs[w++];
}

/* ---- while ------------------------------------------------------------------------------- */

/* A cond region over params (the state first, extra parameters after,
 * which it ignores): n's cond cloned on the state, plus `and` extra test. */
static ts_block *cond_region(ts_builder *b, ts_node *n, int np, ts_value *const *like,
                             ts_value *(*extra)(ts_builder *, ts_value *const *, void *), void *ud)
{
    ts_value **prm = scratch(b, (size_t)np + 2);
    ts_builder *rb = NULL;
    ts_block *blk = prm ? region(b, np, like, prm, &rb) : NULL;
    if (!blk) return NULL;
    ts_value *c = NULL;
    if (n && ts_b_clone(rb, ts_builder_graph(b), n->regions[0], prm, &c) && extra)
        c = ts_b_binary(rb, TS_OP_AND, c, extra(rb, prm, ud));
    else if (!n)
        c = extra(rb, prm, ud);
    return yield(b, rb, 1, &c) ? blk : NULL;
}

/* Forward: while(s..., t_F...) carrying the float state's tangents. */
static void jvp_while(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy)
{
    int m = n->n_in, nf = 0;
    ts_value **v = scratch(b, (size_t)(8 * m + 8));
    if (!v) return;
    ts_value **ops = v, **like = v + 2 * m, **outs = like + 2 * m, **prm = outs + 2 * m;
    for (int i = 0; i < m; i++) ops[i] = like[i] = n->in[i];
    for (int i = 0; i < m; i++)
        if (ad_is_float(n->in[i])) like[m + nf] = n->in[i], ops[m + nf++] = zeros_or(b, t[i], n->in[i]);
    ts_block *regs[2];
    if (!(regs[0] = cond_region(b, n, m + nf, like, NULL, NULL))) return;
    ts_builder *rb = NULL;
    if (!(regs[1] = region(b, m + nf, like, prm, &rb))) return;
    ts_value **res = scratch(b, (size_t)(4 * m + 2));
    if (!res) return;
    ts_value **xs = res + 2 * m, **ty = xs + m;
    int nx = 0;
    for (int i = 0; i < m; i++)
        if (ad_is_float(n->in[i])) xs[nx++] = prm[i];
    if (ts_b_clone(rb, ts_builder_graph(b), n->regions[1], prm, res)) ts_ad_jvp_values(rb, nx, xs, prm + m, m, res, ty);
    for (int i = 0, w = 0; i < m; i++)
        if (ad_is_float(n->in[i])) res[m + w++] = ty[i];
    if (!yield(b, rb, m + nf, res)) return;
    int got = 0;
    if (ts_b_op(b, TS_OP_WHILE, m + nf, ops, NULL, 2, regs, m + nf, outs, &got) != TS_OK) return;
    for (int i = 0, w = 0; i < m; i++)
        if (ad_is_float(n->in[i])) dy[i] = outs[m + w++];
}

/* lt(j, k): the counter (param at index ((int *)ud)[0]) below the bound
 * (param ((int *)ud)[1]). */
static ts_value *below(ts_builder *rb, ts_value *const *prm, void *ud)
{
    const int *at = ud;
    return ts_b_binary(rb, TS_OP_LT, prm[at[0]], prm[at[1]]);
}

/* 0 <= k: the first parameter. */
static ts_value *nonneg(ts_builder *rb, ts_value *const *prm, void *ud)
{
    (void)ud;
    return ts_b_binary(rb, TS_OP_LT, ts_b_scalar(rb, TS_DTYPE_I64, -1), prm[0]);
}

/* while(s..., i) counting the trips of n from its operands: the count. */
static ts_value *trips(ts_builder *b, ts_node *n)
{
    int m = n->n_in;
    ts_value **v = scratch(b, (size_t)(6 * m + 6));
    if (!v) return NULL;
    ts_value **ops = v, **prm = v + m + 1, **res = prm + m + 1, **outs = res + 2 * m + 2;
    for (int i = 0; i < m; i++) ops[i] = n->in[i];
    ops[m] = ts_b_scalar(b, TS_DTYPE_I64, 0);
    ts_block *regs[2];
    if (!(regs[0] = cond_region(b, n, m + 1, ops, NULL, NULL))) return NULL;
    ts_builder *rb = NULL;
    if (!(regs[1] = region(b, m + 1, ops, prm, &rb))) return NULL;
    ts_b_clone(rb, ts_builder_graph(b), n->regions[1], prm, res);
    res[m] = ts_b_binary(rb, TS_OP_ADD, prm[m], ts_b_scalar(rb, TS_DTYPE_I64, 1));
    if (!yield(b, rb, m + 1, res)) return NULL;
    int got = 0;
    if (ts_b_op(b, TS_OP_WHILE, m + 1, ops, NULL, 2, regs, m + 1, outs, &got) != TS_OK) return NULL;
    return outs[m];
}

/* Inside rb: the state after k trips of n's body from s0 (a loop of k
 * trips; n's cond is not consulted: k is below the trip count). */
static void state_at(ts_builder *b, ts_builder *rb, ts_node *n, ts_value *const *s0, ts_value *k, ts_value **sk)
{
    int m = n->n_in;
    ts_value **v = scratch(b, (size_t)(6 * m + 8));
    if (!v) return;
    ts_value **ops = v, **prm = v + m + 2, **res = prm + m + 2, **outs = res + m + 2;
    for (int i = 0; i < m; i++) ops[i] = s0[i];
    ops[m] = ts_b_scalar(rb, TS_DTYPE_I64, 0), ops[m + 1] = k;
    int at[2] = {m, m + 1};
    ts_block *regs[2];
    if (!(regs[0] = cond_region(b, NULL, m + 2, ops, below, at))) return;
    ts_builder *ib = NULL;
    if (!(regs[1] = region(b, m + 2, ops, prm, &ib))) return;
    ts_b_clone(ib, ts_builder_graph(b), n->regions[1], prm, res);
    res[m] = ts_b_binary(ib, TS_OP_ADD, prm[m], ts_b_scalar(ib, TS_DTYPE_I64, 1)), res[m + 1] = prm[m + 1];
    if (!yield(b, ib, m + 2, res)) return;
    int got = 0;
    if (ts_b_op(rb, TS_OP_WHILE, m + 2, ops, NULL, 2, regs, m + 2, outs, &got) != TS_OK) return;
    for (int i = 0; i < m; i++) sk[i] = outs[i];
}

/* Reverse: count the trips, then walk them backwards recomputing each
 * state (state: k, the float state's cotangents, the initial state). */
static void vjp_while(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx)
{
    int m = n->n_in, nf = 0;
    ts_value **v = scratch(b, (size_t)(12 * m + 12));
    if (!v) return;
    int *fl = ts_arena_alloc(ts_builder_graph(b)->arena, sizeof *fl * (size_t)(m + 1));
    if (!fl) return;
    ts_value **ops = v, **prm = ops + 2 * m + 2, **res = prm + 2 * m + 2, **outs = res + 2 * m + 2;
    ts_value **sk = outs + 2 * m + 2, **gr = sk + m + 1;
    for (int i = 0; i < m; i++)
        if (ad_is_float(n->in[i])) fl[nf++] = i;
    ts_value *count = trips(b, n);
    if (!count) return;
    ops[0] = ts_b_binary(b, TS_OP_SUB, count, ts_b_scalar(b, TS_DTYPE_I64, 1));
    for (int j = 0; j < nf; j++) ops[1 + j] = zeros_or(b, ct[fl[j]], n->out[fl[j]]);
    for (int i = 0; i < m; i++) ops[1 + nf + i] = n->in[i];
    int np = 1 + nf + m;
    ts_block *regs[2];
    if (!(regs[0] = cond_region(b, NULL, np, ops, nonneg, NULL))) return;
    ts_builder *rb = NULL;
    if (!(regs[1] = region(b, np, ops, prm, &rb))) return;
    state_at(b, rb, n, prm + 1 + nf, prm[0], sk);
    ts_value **body_res = res;
    ts_value **ys = outs;
    if (ts_b_clone(rb, ts_builder_graph(b), n->regions[1], sk, body_res)) {
        for (int j = 0; j < nf; j++) ys[j] = body_res[fl[j]];
        ts_ad_vjp_values(rb, nf, ys, prm + 1, m, sk, gr);
    }
    ts_value **next = scratch(b, (size_t)np + 1);
    if (!next) return;
    next[0] = ts_b_binary(rb, TS_OP_SUB, prm[0], ts_b_scalar(rb, TS_DTYPE_I64, 1));
    for (int j = 0; j < nf; j++) next[1 + j] = gr[fl[j]];
    for (int i = 0; i < m; i++) next[1 + nf + i] = prm[1 + nf + i];
    if (!yield(b, rb, np, next)) return;
    ts_value **fin = scratch(b, (size_t)np + 1);
    int got = 0;
    if (!fin || ts_b_op(b, TS_OP_WHILE, np, ops, NULL, 2, regs, np, fin, &got) != TS_OK) return;
    for (int j = 0; j < nf; j++)
        if (want[fl[j]]) dx[fl[j]] = fin[1 + j];
}

void ad_vjp_control(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx)
{
    if (n->op == TS_OP_IF) vjp_if(b, n, ct, want, dx);
    else vjp_while(b, n, ct, want, dx);
}

void ad_jvp_control(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy)
{
    if (n->op == TS_OP_IF) jvp_if(b, n, t, dy);
    else jvp_while(b, n, t, dy);
}
