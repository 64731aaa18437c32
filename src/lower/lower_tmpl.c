/* lower_tmpl.c — a dot or conv group becomes a runtime template call
 * (tsrt_sgemm, tsrt_conv): its operands' geometry (each role's extent and
 * stride, read in place through layout views where they merge, D26) and
 * the epilogue cone evaluated on each finished block. */
#include "lower/lower_int.h"

#include <string.h>

/* ---- operand geometry ---------------------------------------------------------------- */

/* The extent of a merged role of v and the stride of its innermost axis
 * (an empty role: extent 1, stride 0). */
static void role_geom(lctx *c, const ts_value *v, const ts_role *r, ts_lx **ext, ts_lx **stride)
{
    *ext = ts_lx_int(c->p, 1);
    *stride = ts_lx_int(c->p, r->n ? 1 : 0);
    for (int i = 0; i < r->n; i++) *ext = ts_lx_mul(c->p, *ext, ts_lw_dim(c, v->type.dims[r->ax[i]]));
    if (r->n)
        for (int i = (int)r->ax[r->n - 1] + 1; i < v->type.rank; i++)
            *stride = ts_lx_mul(c->p, *stride, ts_lw_dim(c, v->type.dims[i]));
}

/* role_geom for an operand read through a strided view (fusion checked
 * that the role merges). */
static void sview_geom(lctx *c, const ts_value *v, const ts_sview *sv, const ts_role *r, ts_lx **ext, ts_lx **stride)
{
    int64_t e = 1, s = 0;
    if (!ts_view_role(v, sv, r, &e, &s)) ts_lprog_fail(c->p, TS_ERR_INTERNAL, "a dot operand's view does not merge");
    *ext = ts_lx_int(c->p, e);
    *stride = ts_lx_int(c->p, s);
}

ts_ltmpl *ts_lw_tmpl_new(lctx *c, ts_tmpl_kind kind)
{
    ts_ltmpl *t = ts_arena_alloc(ts_lprog_arena(c->p), sizeof *t);
    if (!t) {
        ts_lprog_fail(c->p, TS_ERR_OOM, "out of memory building loops");
        return NULL;
    }
    memset(t, 0, sizeof *t);
    t->kind = kind;
    c->k->tmpl = t;
    c->k->needs |= kind == TS_TMPL_GEMM ? TS_NEEDS_GEMM
                 : kind == TS_TMPL_CONV ? TS_NEEDS_GEMM | TS_NEEDS_CONV
                                        : TS_NEEDS_SORT;
    return t;
}

static ts_ltmpl *new_tmpl(lctx *c, ts_tmpl_kind kind, const ts_node *n, const ts_value *out)
{
    ts_ltmpl *t = ts_lw_tmpl_new(c, kind);
    if (!t) return NULL;
    /* an unstored dot operand (a strided view) binds its base instead (lower_gemm) */
    if (c->f->mat[n->in[0]->id]) t->a = ts_lkernel_buf(c->p, c->k, n->in[0], false);
    if (c->f->mat[n->in[1]->id]) t->b = ts_lkernel_buf(c->p, c->k, n->in[1], false);
    t->c = ts_lkernel_buf(c->p, c->k, out, true);
    return t;
}

static void lower_gemm(lctx *c, const ts_node *n, const ts_value *out)
{
    ts_role lb, rb, lc, rc, lf, rf;
    ts_dot_roles(n, &lb, &rb, &lc, &rc, &lf, &rf);
    ts_ltmpl *t = new_tmpl(c, TS_TMPL_GEMM, n, out);
    if (!t) return;
    const ts_value *l = n->in[0], *r = n->in[1];
    ts_lx *m, *nn, *k, *a_rs, *a_cs, *b_rs, *b_cs, *batch, *a_bs, *b_bs, *unused;
    role_geom(c, l, &lf, &m, &a_rs);
    role_geom(c, l, &lc, &k, &a_cs);
    role_geom(c, r, &rc, &unused, &b_rs);
    role_geom(c, r, &rf, &nn, &b_cs);
    role_geom(c, l, &lb, &batch, &a_bs);
    role_geom(c, r, &rb, &unused, &b_bs);
    /* an operand left unstored by fusion is read in place through its
     * layout ops: the stored base, an offset, the view's strides (static) */
    ts_sview sv;
    if (!c->f->mat[l->id] && ts_view_strided(c->f->mat, l, &sv)) {
        t->a = ts_lkernel_buf(c->p, c->k, sv.base, false);
        t->a_off = sv.off;
        sview_geom(c, l, &sv, &lf, &m, &a_rs);
        sview_geom(c, l, &sv, &lc, &k, &a_cs);
        sview_geom(c, l, &sv, &lb, &batch, &a_bs);
    }
    if (!c->f->mat[r->id] && ts_view_strided(c->f->mat, r, &sv)) {
        t->b = ts_lkernel_buf(c->p, c->k, sv.base, false);
        t->b_off = sv.off;
        sview_geom(c, r, &sv, &rc, &unused, &b_rs);
        sview_geom(c, r, &sv, &rf, &nn, &b_cs);
        sview_geom(c, r, &sv, &rb, &unused, &b_bs);
    }
    ts_lx *args[] = {m, nn, k, a_rs, a_cs, b_rs, b_cs, nn, batch, a_bs, b_bs, ts_lx_mul(c->p, m, nn)};
    /* A constant weight (the graph's own data, the same in every run) is
     * worth packing once: the runtime keeps the packed copy per program. */
    t->prepack_b = r->def && r->def->op == TS_OP_CONST && rb.n == 0;
    t->n_args = (int)(sizeof args / sizeof args[0]);
    memcpy(t->arg, args, sizeof args);
}

static void lower_conv(lctx *c, const ts_node *n, const ts_value *out)
{
    ts_ltmpl *t = new_tmpl(c, TS_TMPL_CONV, n, out);
    if (!t) return;
    const ts_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
    bool one = x->type.rank == 3;   /* 1-D: h = kh = oh = 1 */
    int cnt;
    const int64_t *st = ts_node_ints(n, "strides", &cnt), *lo = ts_node_ints(n, "pad_lo", &cnt);
    const int64_t *ld = ts_node_ints(n, "lhs_dilation", &cnt), *rd = ts_node_ints(n, "rhs_dilation", &cnt);
    ts_lprog *p = c->p;
    ts_lx *i1 = ts_lx_int(p, 1);
    ts_lx *args[] = {
        ts_lw_dim(c, x->type.dims[0]), ts_lw_dim(c, x->type.dims[1]), one ? i1 : ts_lw_dim(c, x->type.dims[2]),
        ts_lw_dim(c, x->type.dims[one ? 2 : 3]), ts_lw_dim(c, w->type.dims[0]), one ? i1 : ts_lw_dim(c, w->type.dims[2]),
        ts_lw_dim(c, w->type.dims[one ? 2 : 3]), one ? i1 : ts_lw_dim(c, y->type.dims[2]), ts_lw_dim(c, y->type.dims[one ? 2 : 3]),
        ts_lx_int(p, ts_node_int(n, "groups")),
        one ? i1 : ts_lx_int(p, st[0]), ts_lx_int(p, st[one ? 0 : 1]),
        one ? ts_lx_int(p, 0) : ts_lx_int(p, lo[0]), ts_lx_int(p, lo[one ? 0 : 1]),
        one ? i1 : ts_lx_int(p, rd[0]), ts_lx_int(p, rd[one ? 0 : 1]),
        one ? i1 : ts_lx_int(p, ld[0]), ts_lx_int(p, ld[one ? 0 : 1]),
    };
    t->n_args = (int)(sizeof args / sizeof args[0]);
    memcpy(t->arg, args, sizeof args);
    /* a part of a channel concat: images at the concat's stride (D125) */
    const ts_value *to = c->f->into[out->id];
    if (to) {
        int64_t bs = 1;
        for (int i = 1; i < to->type.rank; i++) bs *= to->type.dims[i].c;
        t->arg[t->n_args++] = ts_lx_int(p, bs);
    }
    /* Constant (stored) weights of a 3x3 stride-1 conv or of any conv with
     * one group and no input dilation: Winograd's transform (D38) or the
     * W^T panels of GEMM_T (D41) can be made once per program; the runtime
     * decides from the sizes (and its instruction set) whether the shape
     * takes one (tsrt_conv_pre). */
    const int64_t kh = one ? 0 : w->type.dims[2].c, kw = one ? 0 : w->type.dims[3].c;
    const bool wg = kh == 3 && kw == 3 && st[0] == 1 && st[1] == 1 && rd[0] == 1 && rd[1] == 1 && ld[0] == 1 &&
                    ld[1] == 1;
    const bool pt = ts_node_int(n, "groups") == 1 && ld[0] == 1 && ld[1] == 1;
    t->prepack_pre = !one && w->def && w->def->op == TS_OP_CONST && c->f->mat[w->id] &&
                     ts_dim_is_const(w->type.dims[2]) && ts_dim_is_const(w->type.dims[3]) && (wg || pt);
}

/* ---- a conv's batch norm folded into its weights (D30) ------------------------------ */

/* A conv's epilogue usually starts with a batch norm: (y - mean) * inv_std
 * * gamma + beta, four operations per element with per-channel constants.
 * Its scale goes into a copy of the (constant) weights, its shift stays in
 * the epilogue as one add. The chain is found bottom-up from the conv's
 * result, one elementwise node at a time, while the other operand is a
 * per-channel constant and the value below has no other use. */
enum { AFFINE_MAX = 8, CONE_MAX = 64 };

typedef struct affine {
    int n;
    const ts_node *node[AFFINE_MAX];   /* from the conv's result up */
    int spine[AFFINE_MAX];             /* the operand that carries the chain */
    const ts_value *other[AFFINE_MAX]; /* the constant behind the other operand */
    bool chan[AFFINE_MAX];             /* ... one per channel (else a scalar) */
    const ts_value *top;               /* the chain's result */
} affine;

/* Whether v depends on d within the kernel (looking at most *budget nodes
 * deep): a stored value other than d is another kernel's result, where
 * the search stops. Stopping there (or at the budget) reads as
 * "independent", which cannot fold wrongly: an operand that does read the
 * chain makes a chain value used twice, and affine_prefix stops at a value
 * with another use. Without the stop a residual operand's ancestry (the
 * whole network above it) used up the budget before the chain was found,
 * and ResNet's residual convs kept their batch norms unfolded. */
static bool depends(const ts_fusion *f, const ts_value *v, const ts_value *d, int *budget)
{
    if (v == d) return true;
    if (!v->def || f->mat[v->id] || --*budget < 0) return false;
    for (int i = 0; i < v->def->n_in; i++)
        if (depends(f, v->def->in[i], d, budget)) return true;
    return false;
}

/* The f32 constant behind operand o of an elementwise node over a conv's
 * result (channels on axis 1) when it varies along axis 1 at most: one
 * element, or O elements on the axis a broadcast maps to 1 (a batch
 * norm's [C] parameter reshaped to [1, C, 1, 1] and broadcast). */
static const ts_value *chan_const(const ts_value *o, int64_t O, bool *chan)
{
    int cnt = 0;
    const int64_t *axes = NULL;
    if (o->def && o->def->op == TS_OP_BROADCAST) axes = ts_node_ints(o->def, "axes", &cnt), o = o->def->in[0];
    if (!o->def || o->def->op != TS_OP_CONST || o->type.dtype != TS_DTYPE_F32) return NULL;
    const int64_t numel = ts_node_tensor(o->def, "value")->numel;
    *chan = numel != 1;
    if (numel != 1 && numel != O) return NULL;
    for (int i = 0; *chan && i < o->type.rank; i++)
        if (o->type.dims[i].c != 1 && (axes ? axes[i] : i) != 1) return NULL;
    return o;
}

/* The affine chain at the bottom of conv n's epilogue cone ending at v;
 * false when there is none with a scale to fold. */
static bool affine_prefix(const lctx *c, const ts_node *n, const ts_value *v, affine *af)
{
    const ts_value *d = n->out[0], *w = n->in[1];
    if (!w->def || w->def->op != TS_OP_CONST || !c->f->mat[w->id] || !ts_dim_is_const(w->type.dims[0])) return false;
    const ts_node *path[CONE_MAX];
    int spine[CONE_MAX], np = 0;
    for (const ts_value *x = v; x != d;) {   /* v down to d, through the one operand that reads d */
        const ts_node *m = x->def;
        if (!m || np == CONE_MAX || !(ts_op_get(m->op)->flags & TS_OPF_EW)) return false;
        int k = -1;
        for (int i = 0, budget = 4 * CONE_MAX; i < m->n_in; i++, budget = 4 * CONE_MAX)
            if (depends(c->f, m->in[i], d, &budget)) {
                if (k >= 0) return false;
                k = i;
            }
        if (k < 0) return false;
        path[np] = m, spine[np++] = k, x = m->in[k];
    }
    bool scaled = false;
    const ts_value *below = d;
    af->n = 0;
    for (int q = np - 1; q >= 0 && af->n < AFFINE_MAX; q--) {
        const ts_node *m = path[q];
        const int k = spine[q];
        const bool comm = m->op == TS_OP_ADD || m->op == TS_OP_MUL;
        if (m->n_in != 2 || m->out[0]->type.dtype != TS_DTYPE_F32) break;
        if (!comm && !((m->op == TS_OP_SUB || m->op == TS_OP_DIV) && k == 0)) break;
        if (c->f->uses[below->id] != 1) break;   /* the value below changes meaning */
        bool chan;
        const ts_value *o = chan_const(m->in[1 - k], w->type.dims[0].c, &chan);
        if (!o) break;
        af->node[af->n] = m, af->spine[af->n] = k, af->other[af->n] = o, af->chan[af->n] = chan;
        af->n++;
        scaled |= m->op == TS_OP_MUL || m->op == TS_OP_DIV;
        below = m->out[0];
    }
    af->top = below;
    return scaled;
}

/* The template's weight scaling (its mul/div operands) and, for the
 * epilogue, the chain's result as block + shift: the shift is the chain
 * run on 0, per row (the compiler hoists it out of the column loop). */
static void fold_affine(lctx *c, const ts_node *n, const affine *af, ts_lx **coords)
{
    ts_lprog *p = c->p;
    ts_ltmpl *t = c->k->tmpl;
    const ts_value *w = n->in[1];
    ts_lx *shift = ts_lx_const(p, TS_DTYPE_F32, 0);
    t->n_wscale = 0;
    for (int q = 0; q < af->n; q++) {
        const ts_node *m = af->node[q];
        shift = ts_lx_op(p, m->op, TS_DTYPE_F32, shift, ts_lw_value_at(c, m->in[1 - af->spine[q]], coords, false), NULL);
        if (m->op != TS_OP_MUL && m->op != TS_OP_DIV) continue;
        /* a splat constant is not stored (fusion inlines it): its value */
        const ts_value *o = af->other[q];
        const bool stored = c->f->mat[o->id];
        t->wscale[t->n_wscale].op = m->op;
        t->wscale[t->n_wscale].buf = stored ? ts_lkernel_buf(p, c->k, o, false) : -1;
        t->wscale[t->n_wscale].lit = ((const float *)ts_node_tensor(o->def, "value")->data)[0];
        t->wscale[t->n_wscale++].chan = stored && af->chan[q];
    }
    t->prepack_w = true;
    t->w_rows = w->type.dims[0].c;
    t->w_cols = ts_node_tensor(w->def, "value")->numel / t->w_rows;
    c->subst_v = af->top;
    c->subst_x = ts_lx_op(p, TS_OP_ADD, TS_DTYPE_F32, ts_lx_load(p, TS_DTYPE_F32, TS_LBUF_BLOCK, c->block_index), shift,
                          NULL);
}

/* For a and b of the same layout (ts_view_same_layout): b's coordinates
 * of a's element at ac, `zero` along b's dims of 1. Only where the shapes
 * differ: the coordinates of d's own shape come from a recorded
 * delinearization that re-linearizes without div/mod (the tile
 * epilogue's residual recognition needs that). */
static void layout_coords(const ts_value *a, ts_lx *const *ac, const ts_value *b, ts_lx *zero, ts_lx **bc)
{
    int i = 0;
    for (int j = 0; j < b->type.rank; j++) {
        const ts_dim e = b->type.dims[j];
        if (ts_dim_is_const(e) && e.c == 1) {
            bc[j] = zero;
            continue;
        }
        while (i < a->type.rank && ts_dim_is_const(a->type.dims[i]) && a->type.dims[i].c == 1) i++;
        bc[j] = ac[i++];
    }
}

/* The epilogue: for each element (i, j) of a finished block, v computed
 * with the template's output d read from the block. Rows are d's first
 * `split` axes (flattened), columns the rest, as the templates define.
 * af: a conv's affine chain to fold into its weights, or NULL. */
static void lower_epilogue(lctx *c, const ts_node *n, const ts_value *v, int split, const affine *af)
{
    const ts_value *d = n->out[0];
    ts_lprog *p = c->p;
    nest ns = {.tail = &c->k->tmpl->epi};
    ts_lx *i = ts_lw_open_loop(c, &ns, ts_lx_param(p, 2));
    ts_ls *jl = NULL;
    ts_lx *j = ts_lw_open_loop(c, &ns, ts_lx_param(p, 3));
    for (ts_ls *s = c->k->tmpl->epi; s; s = s->body) jl = s;
    if (jl) jl->flags |= TS_LOOP_VECTOR;
    ts_lx *coords[TS_MAX_RANK];
    int r = d->type.rank;
    ts_lw_delinear_rec(c, split, d->type.dims, ts_lx_add(p, ts_lx_param(p, 0), i), coords);
    ts_lw_delinear_rec(c, r - split, d->type.dims + split, ts_lx_add(p, ts_lx_param(p, 1), j), coords + split);
    c->block_src = d;
    c->block_index = ts_lx_add(p, ts_lx_mul(p, i, ts_lx_param(p, 4)), j);
    if (af) fold_affine(c, n, af, coords);
    ts_ls *s = ts_ls_new(p, TS_LS_STORE);
    if (s) {
        s->buf = TS_LBUF_BLOCK;
        s->index = c->block_index;
        ts_lx *vc[TS_MAX_RANK];   /* v: d's elements in d's order, maybe with dims of 1 more or less (D124) */
        if (!ts_view_same_shape(d, v)) layout_coords(d, coords, v, ts_lx_int(p, 0), vc);
        s->value = ts_lw_value_at(c, v, ts_view_same_shape(d, v) ? coords : vc, true);
        ts_lw_append(&ns, s);
    }
    c->subst_v = NULL;
}

/* C's row and batch strides (template arguments c_rs, c_bs) for a result
 * stored through a transpose/reshape chain (fusion's cout). */
static void result_strides(lctx *c, const ts_node *n)
{
    ts_sview sv;
    ts_role b, r, cl;
    int64_t e, bs = 0, rs = 0;
    ts_dot_result_roles(n, &b, &r, &cl);
    if (!c->k->tmpl || !ts_view_into(n->out[0], c->f->cout[n->id], &sv) || !ts_view_role(n->out[0], &sv, &b, &e, &bs) ||
        !ts_view_role(n->out[0], &sv, &r, &e, &rs)) {
        ts_lprog_fail(c->p, TS_ERR_INTERNAL, "a dot's stored layout does not merge");
        return;
    }
    c->k->tmpl->arg[7] = ts_lx_int(c->p, rs);
    c->k->tmpl->arg[11] = ts_lx_int(c->p, bs);
}

void ts_lw_template(lctx *c, const ts_group *g)
{
    const ts_node *n = g->root;
    const ts_value *d = n->out[0], *v = g->epilogue ? g->epilogue : d;
    const ts_value *w = n->op == TS_OP_DOT ? c->f->cout[n->id] : NULL;
    if (w) {   /* the result written straight into w's layout (fusion checked it merges) */
        lower_gemm(c, n, w);
        result_strides(c, n);
        return;
    }
    if (n->op == TS_OP_DOT) lower_gemm(c, n, v);
    else lower_conv(c, n, v);
    if (v != d && c->k->tmpl) {
        int split = n->op == TS_OP_CONV ? 2 : d->type.rank;
        if (n->op == TS_OP_DOT) {   /* rows: batch and lhs free axes; columns: rhs free axes */
            ts_role lb, rb, lc, rc, lf, rf;
            ts_dot_roles(n, &lb, &rb, &lc, &rc, &lf, &rf);
            split = d->type.rank - rf.n;
        }
        affine af;
        const bool fold = n->op == TS_OP_CONV && affine_prefix(c, n, v, &af);
        lower_epilogue(c, n, v, split, fold ? &af : NULL);
        ts_lw_tile_epilogue(c);
    }
}

