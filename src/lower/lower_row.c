/* lower_row.c — a row group (softmax, layer norm: reductions over a row
 * and the elementwise ops on it) as one kernel: one nest per row, its
 * passes in stages over the row, a costly value kept in a row scratch
 * rather than recomputed, the next row prefetched, a written row streamed
 * past the caches. Split from lower.c, whose ts_lower_group calls
 * ts_lw_row. */
#include "lower/lower_int.h"

#include <string.h>

/* Worth keeping rather than recomputing: a transcendental or a division
 * per element (a store and a load in L1 cost less than an exp, not less
 * than a sub); parts the same for the whole row (depth <= rdepth: the
 * mean's division in layer norm) do not count. */
static bool costly(const ts_lx *x, int rdepth, int depth)
{
    if (!x || depth > 16 || x->depth <= rdepth) return false;
    if (x->k == TS_LX_OP) switch (x->op) {
        case TS_OP_EXP: case TS_OP_LOG: case TS_OP_TANH: case TS_OP_ERF: case TS_OP_SQRT: case TS_OP_DIV:
        case TS_OP_POW: case TS_OP_SIN: case TS_OP_COS: return true;
        default: break;
        }
    for (int i = 0; i < 3; i++)
        if (costly(x->a[i], rdepth, depth + 1)) return true;
    return false;
}

/* Whether computing v (stored) inlines a read of u. */
static bool reads(const lctx *c, const ts_value *v, const ts_value *u, int depth)
{
    if (!v->def || depth > 12) return false;
    for (int i = 0; i < v->def->n_in; i++) {
        const ts_value *a = v->def->in[i];
        if (a == u || (!c->f->mat[a->id] && reads(c, a, u, depth + 1))) return true;
    }
    return false;
}

static bool row_shaped(const ts_group *g, const ts_value *v)
{
    const ts_type *t = &g->row_space->type;
    if (v->type.rank != t->rank || !g->row_inner) return false;
    for (int i = 0; i < t->rank; i++)
        if (!ts_dim_eq(v->type.dims[i], t->dims[i])) return false;
    return true;
}

/* Softmax computes exp(x - max) in the sum's pass and again for the
 * output. The reduction at phase p can instead store its input u (an
 * expression, not a stored value) into the row of the first later output
 * of the same shape and dtype that reads u; the phases up to that one load
 * it while the row is still in L1/L2, and the output overwrites it last.
 * Returns that output's phase, or -1. */
static int stage_pick(const lctx *c, const ts_group *g, int p)
{
    const ts_value *u = g->out[p]->def->in[0];
    if (!u->def || c->f->mat[u->id] || !row_shaped(g, u)) return -1;
    for (int q = p + 1; q < g->n_out; q++) {
        const ts_value *w = g->out[q];
        if (row_shaped(g, w) && w->type.dtype == u->type.dtype && reads(c, w, u, 0)) return q;
    }
    return -1;
}

/* x / d with d the same for the whole row (a row's sum in softmax, a
 * norm) becomes x * (1 / d): one division per row instead of one per
 * element (a vector division costs about four multiplies, a quarter of
 * softmax's output pass). Two roundings instead of one: within 1.5 ulp
 * of the quotient; 1/d overflows for |d| < 2^-128, where x/d may not
 * (docs/decisions.md D27). */
static ts_lx *row_recip(lctx *c, ts_lx *x, int rdepth, int depth)
{
    if (!x || depth > 32 || (x->k != TS_LX_OP && x->k != TS_LX_CAST) || x->depth <= rdepth) return x;
    ts_lx *a[3] = {NULL, NULL, NULL};
    bool same = true;
    for (int i = 0; i < 3; i++) {
        a[i] = row_recip(c, x->a[i], rdepth, depth + 1);
        same &= a[i] == x->a[i];
    }
    if (x->k == TS_LX_OP && x->op == TS_OP_DIV && ts_dtype_is_fp(x->dt) && x->a[1]->depth <= rdepth)
        return ts_lx_op(c->p, TS_OP_MUL, x->dt, a[0],
                        ts_lx_op(c->p, TS_OP_DIV, x->dt, ts_lx_const(c->p, x->dt, 1), a[1], NULL), NULL);
    if (same) return x;
    if (x->k == TS_LX_CAST) return ts_lx_cast(c->p, a[0], x->dt);
    return ts_lx_op_hint(c->p, x->op, x->dt, a[0], a[1], a[2], x->var);
}

/* The first pass over a row reads it from memory, the later ones from
 * L1/L2. A second pass that is a costly reduction (softmax's exp and sum)
 * prefetches the next row of the stored row inputs the first pass read,
 * so that the DRAM reads overlap the exps instead of stalling the next
 * row's first pass (softmax 8192x1024, one thread: -10%; layer norm's
 * cheap variance pass measured 10% slower with it, so it is left out).
 * A row with no such pass prefetches in its streamed last pass instead
 * (layer norm's affine pass, D78), whose non-temporal stores leave the
 * load ports free. Inserted at `inner`, before what is there; xc the
 * pass's coords. */
static void prefetch_next_row(lctx *c, const ts_group *g, ts_ls **inner, ts_lx **xc)
{
    const ts_value *sp = g->row_space;
    int r = sp->type.rank, no = r - g->row_inner;
    ts_lx *isize = ts_lx_int(c->p, 1);
    for (int i = no; i < r; i++) isize = ts_lx_mul(c->p, isize, ts_lw_dim(c, sp->type.dims[i]));
    ts_lx *next = ts_lx_add(c->p, ts_lw_linear(c, r, sp->type.dims, xc), isize);
    for (int b = 0; b < c->k->n_bufs; b++) {
        if (c->k->bufs[b].written || !row_shaped(g, c->k->bufs[b].v)) continue;
        ts_ls *s = ts_ls_new(c->p, TS_LS_PREFETCH);
        if (!s) return;
        s->buf = b;
        s->index = next;
        s->next = *inner;
        *inner = s;
    }
}

static bool is_reduce(const ts_node *n)
{
    return n->op == TS_OP_REDUCE_SUM || n->op == TS_OP_REDUCE_PROD || n->op == TS_OP_REDUCE_MAX ||
           n->op == TS_OP_REDUCE_MIN;
}

/* An f32 output this large is written past the caches: no later kernel
 * finds it there, and plain stores would first read every line they
 * write (a third of softmax's traffic). Its rows are built in a scratch
 * row of at most ROWTMP_MAX floats, which the passes also use in place of
 * the output's row (softmax's staged exps), and each finished row is
 * streamed out (softmax 8192x1024 in a harness: -5% at 1 thread, -15% at
 * 2, D50). Rows of constant length, a multiple of 16, of the last phase. */
enum { STREAM_MIN_BYTES = 16 << 20, ROWTMP_MAX = 4096 };

static const ts_value *stream_pick(const ts_group *g)
{
    const ts_value *sp = g->row_space, *v = g->out[g->n_out - 1];
    const int r = sp->type.rank;
    if (g->row_inner != 1 || !v->def || is_reduce(v->def) || v->type.dtype != TS_DTYPE_F32 || !row_shaped(g, v))
        return NULL;
    int64_t bytes = 4;
    for (int i = 0; i < r; i++) {
        if (!ts_dim_is_const(v->type.dims[i])) return NULL;
        if (!ts_i64_mul(bytes, v->type.dims[i].c, &bytes)) return NULL;
    }
    const int64_t e = v->type.dims[r - 1].c;
    if (e < 16 || e > ROWTMP_MAX || e % 16 || bytes < STREAM_MIN_BYTES) return NULL;
    return v;
}

/* The finished row of v (in the row scratch) to its place in v's buffer,
 * at the end of the row's statements; oc the row's outer coords. */
static void stream_row(lctx *c, nest *ns, const ts_value *v, ts_lx **oc)
{
    const int r = v->type.rank;
    ts_lx *xc[TS_MAX_RANK];
    memcpy(xc, oc, sizeof *xc * (size_t)(r - 1));
    xc[r - 1] = ts_lx_int(c->p, 0);
    ts_ls *s = ts_ls_new(c->p, TS_LS_STREAM);
    if (!s) return;
    s->buf = ts_lkernel_buf(c->p, c->k, v, true);
    s->index = ts_lw_out_linear(c, v, xc);
    s->extent = ts_lx_int(c->p, v->type.dims[r - 1].c);
    ts_lw_append(ns, s);
}

/* A ROW group: loops over the rows (O), then per phase either a reduction
 * over the row (I) into an accumulator that later phases read directly,
 * or a loop writing a stored value of the row (over I) or of O. */
void ts_lw_row(lctx *c, const ts_group *g)
{
    const ts_value *sp = g->row_space;
    int r = sp->type.rank, ni = g->row_inner, no = r - ni, stage_end = -1;
    bool prefetched = false;
    nest ns = {.tail = &c->k->body};
    ts_lx *oc[TS_MAX_RANK], *xc[TS_MAX_RANK];
    for (int i = 0; i < no; i++) oc[i] = ts_lw_open_loop(c, &ns, ts_lw_dim(c, sp->type.dims[i]));
    int depth = ns.depth;
    ts_ls **row_body = ns.tail;   /* the statements of one row */
    c->rowtmp_v = stream_pick(g);
    if (c->rowtmp_v) c->k->rowtmp = c->rowtmp_v->type.dims[r - 1].c;
    for (int p = 0; p < g->n_out; p++) {
        const ts_value *v = g->out[p];
        const ts_node *n = v->def;
        ns.tail = row_body;
        ts_lw_to_end(&ns);
        ns.depth = depth;
        c->stage_xc = p <= stage_end ? xc : NULL;
        if (is_reduce(n)) {
            ts_lx *ext[TS_MAX_RANK], *rv[TS_MAX_RANK];
            int64_t terms = 1;
            for (int i = 0; i < ni; i++) {
                ext[i] = ts_lw_dim(c, sp->type.dims[no + i]);
                terms = terms >= 0 && ts_dim_is_const(sp->type.dims[no + i]) && sp->type.dims[no + i].c <= 2
                            ? terms * sp->type.dims[no + i].c : -1;
            }
            ts_dtype dt = v->type.dtype, adt = ts_lw_acc_dtype_n(n->op, dt, terms);
            ts_ls **inner = NULL;
            int acc = 0;
            ts_lx *a = ts_lw_open_reduction(c, &ns, n->op, adt, ni, ext, rv, &inner, &acc);
            if (!a) return;
            memcpy(xc, oc, sizeof *xc * (size_t)no);
            memcpy(xc + no, rv, sizeof *xc * (size_t)ni);
            ts_lx *ux = ts_lw_value_at(c, n->in[0], xc, false);
            ts_lw_update(c, inner, acc, ts_lw_combine_op(n->op), ts_lx_cast(c->p, ux, adt));
            if (p == 1 && costly(ux, depth, 0)) {
                prefetch_next_row(c, g, inner, xc);
                prefetched = true;
            }
            int q = stage_end < p ? stage_pick(c, g, p) : -1;
            if (q > p && costly(ux, depth, 0)) {   /* u's row goes into out[q]'s, before the update */
                ts_ls *u = *inner;
                ns.tail = inner;
                ts_lw_store(c, &ns, g->out[q], xc, ux);
                if (*inner) (*inner)->next = u;
                c->stage_v = n->in[0];
                c->stage_buf = g->out[q];
                stage_end = q;
            }
            ns.tail = row_body;
            ts_lw_to_end(&ns);
            ts_lx *val = ts_lx_cast(c->p, a, dt);
            if (c->n_row < 64) {
                c->row_val[c->n_row] = v;
                c->row_acc[c->n_row++] = val;
            }
            ts_lw_store(c, &ns, v, oc, val);
        } else if (v->type.rank < r || !ts_dim_eq(v->type.dims[r - 1], sp->type.dims[r - 1]) || ni == 0) {
            /* a per-row scalar: O, or O with trailing 1s */
            memcpy(xc, oc, sizeof *xc * (size_t)no);
            for (int i = no; i < v->type.rank; i++) xc[i] = ts_lx_int(c->p, 0);
            ts_lw_store(c, &ns, v, xc, ts_lw_value_at(c, v, xc, true));
        } else {
            memcpy(xc, oc, sizeof *xc * (size_t)no);
            for (int i = 0; i < ni; i++) xc[no + i] = ts_lw_open_loop(c, &ns, ts_lw_dim(c, sp->type.dims[no + i]));
            ts_ls **pass = ns.tail;
            ts_lw_store(c, &ns, v, xc, row_recip(c, ts_lw_value_at(c, v, xc, true), depth, 0));
            if (v == c->rowtmp_v) {
                if (!prefetched) prefetch_next_row(c, g, pass, xc);
                ns.tail = row_body;
                ts_lw_to_end(&ns);
                ns.depth = depth;
                stream_row(c, &ns, v, oc);
            }
        }
    }
    c->stage_xc = NULL;
    c->rowtmp_v = NULL;
}
