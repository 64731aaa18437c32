/* lower_loop.c — LOOP groups as loop nests (lower.h): one stored value
 * per element of its shape; one nest per part of a concat the value
 * reads at its own coordinates (D114); two values in one nest for a
 * merged group (D116). Split from lower.c, whose value_at builds the
 * expressions. */
#include "lower/lower_int.h"

#include <string.h>

/* The first concat that v's inlined expression reaches through
 * elementwise nodes of v's shape, or NULL. */
static const ts_node *concat_along(const lctx *c, const ts_value *v, const ts_value *top)
{
    const ts_node *n = v->def;
    if (!n || (v != top && c->f->mat[v->id]) || !ts_view_same_shape(v, top)) return NULL;
    if (n->op == TS_OP_CONCAT) return n;
    if (!(ts_op_get(n->op)->flags & TS_OPF_EW) || n->op == TS_OP_BITCAST) return NULL;
    for (int i = 0; i < n->n_in; i++) {
        const ts_node *cat = concat_along(c, n->in[i], top);
        if (cat) return cat;
    }
    return NULL;
}

/* A concat v reads at its own coordinates only (see ts_view_reads_aligned),
 * or NULL. */
static const ts_node *aligned_concat(lctx *c, const ts_value *v)
{
    const ts_node *cat = concat_along(c, v, v);
    if (!cat) return NULL;
    size_t nn = c->f->g->next_node_id + 1;
    unsigned char *seen = ts_arena_array(ts_lprog_arena(c->p), nn, sizeof *seen);
    bool hit;
    if (!seen) return NULL;
    memset(seen, 0, nn);
    return ts_view_reads_aligned(c->f->mat, v, cat->out[0], seen, &hit) ? cat : NULL;
}

/* Whether the last m dims of a equal those of b. */
static bool tail_eq(const ts_value *a, const ts_value *b, int m)
{
    if (a->type.rank < m || b->type.rank < m) return false;
    for (int j = 1; j <= m; j++)
        if (!ts_dim_eq(a->type.dims[a->type.rank - j], b->type.dims[b->type.rank - j])) return false;
    return true;
}

/* Whether view op n passes its result's last m coordinates to the same
 * last m of its operand: a reshape whose last m dims are its operand's
 * (its coordinate runs then close at that boundary: lower.c's
 * reshape_coords maps them one to one), a transpose that keeps those
 * axes in place, a slice that takes them whole. A channel shuffle
 * (reshape, transpose of the channel axes, reshape, and the split's
 * slices) then runs over each 6x6 plane as one loop of 36 instead of
 * rows of 6 (D182). */
static bool view_keeps_tail(const ts_node *n, int m)
{
    const ts_value *x = n->in[0], *y = n->out[0];
    const int r = y->type.rank;
    if (!tail_eq(x, y, m)) return false;
    int cnt = 0;
    if (n->op == TS_OP_RESHAPE) return true;
    if (n->op == TS_OP_TRANSPOSE) {
        const int64_t *perm = ts_node_ints(n, "perm", &cnt);
        for (int i = r - m; i < r; i++)
            if (perm[i] != i) return false;
        return true;
    }
    const ts_dim *start = ts_node_dims(n, "start", &cnt);
    const int64_t *stride = ts_node_ints(n, "stride", &cnt);
    for (int i = r - m; i < r; i++)
        if (!ts_dim_eq(start[i], ts_dim_const(0)) || stride[i] != 1) return false;
    return true;
}

/* Whether x, a value of top's inlined expression whose last m coordinates
 * are top's last m, passes them on unchanged to every value it reads
 * through them: elementwise nodes, a concat along an earlier axis, a
 * broadcast that keeps those axes as its operand's last or none of them;
 * stored values are loaded at them (laid out as top's last m axes, also
 * when placed in a concat). Then one loop can run over those axes and
 * every load re-linearizes its coordinates to that loop's variable. */
static bool merge_ok(const lctx *c, const ts_value *x, const ts_value *top, int m, unsigned char *seen)
{
    const ts_node *n = x->def;
    if (x != top && (c->f->mat[x->id] || !n)) {
        const ts_value *to = c->f->into[x->id];
        return !to || tail_eq(to, top, m);
    }
    if (!n) return false;
    if (seen[n->id]) return true;
    seen[n->id] = 1;
    const int r = x->type.rank;
    if (n->op == TS_OP_BROADCAST) {
        const ts_value *in = n->in[0];
        int cnt = 0, used = 0;
        const int64_t *axes = ts_node_ints(n, "axes", &cnt);
        for (int i = 0; i < in->type.rank; i++) {
            const bool kept = !ts_dim_eq(in->type.dims[i], ts_dim_const(1)) ||
                              ts_dim_eq(x->type.dims[axes[i]], in->type.dims[i]);
            if (axes[i] >= r - m && kept) {
                if (axes[i] != r - in->type.rank + i) return false;   /* not its operand's last axes in order */
                used++;
            }
        }
        if (!used) return true;   /* reads none of the merged coordinates */
        return used == m && tail_eq(in, x, m) && merge_ok(c, in, top, m, seen);
    }
    if (n->op == TS_OP_RESHAPE || n->op == TS_OP_TRANSPOSE || n->op == TS_OP_SLICE)
        return view_keeps_tail(n, m) && merge_ok(c, n->in[0], top, m, seen);
    const bool ew = (ts_op_get(n->op)->flags & TS_OPF_EW) && n->op != TS_OP_BITCAST;
    if (!ew && !(n->op == TS_OP_CONCAT && ts_node_int(n, "axis") < r - m)) return false;
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i]->type.rank != r || !tail_eq(n->in[i], x, m) || !merge_ok(c, n->in[i], top, m, seen))
            return false;
    return true;
}

/* How many of v's last axes (beyond the concat axis, when cat) one loop
 * runs over: 0 or 1 when none merge. A BatchNorm + ReLU over a 12x12
 * map was rows of 12 (a vector of 8 and a scalar tail each, and the
 * index arithmetic of every row); as one run of 144 it is nine vectors of
 * 16 (D142). */
static int merged_tail(lctx *c, const ts_value *v, const ts_node *cat)
{
    const int r = v->type.rank, lim = cat ? r - 1 - (int)ts_node_int(cat, "axis") : r;
    size_t nn = c->f->g->next_node_id + 1;
    unsigned char *seen = ts_arena_array(ts_lprog_arena(c->p), nn, sizeof *seen);
    if (!seen || c->n_delins == (int)(sizeof c->delins / sizeof c->delins[0])) return 0;
    for (int m = lim; m >= 2; m--) {
        memset(seen, 0, nn);
        if (merge_ok(c, v, v, m, seen)) return m;
    }
    return 0;
}

/* The loops of one nest of v: over dims d[i] (the concat part's along
 * its axis), the last m as one loop whose coordinates are a recorded
 * delinearization (popped by the caller). */
static void open_nest(lctx *c, nest *ns, const ts_value *v, const ts_dim *d, int m, ts_lx **coords)
{
    const int r = v->type.rank;
    if (m < 2) m = 0;
    for (int i = 0; i < r - m; i++) coords[i] = ts_lw_open_loop(c, ns, ts_lw_dim(c, d[i]));
    if (!m) return;
    ts_lx *ext = ts_lw_dim(c, d[r - m]);
    for (int i = r - m + 1; i < r; i++) ext = ts_lx_mul(c->p, ext, ts_lw_dim(c, d[i]));
    ts_lw_delinear_rec(c, m, v->type.dims + r - m, ts_lw_open_loop(c, ns, ext), coords + r - m);
}

/* The nest of stored value v, once per part of the concat it reads at
 * its own coordinates: in part j's nest the concat's axis runs over the
 * part alone and the concat is the part itself, so no element chooses
 * its part (a BatchNorm + ReLU over a DenseNet block's 32-way concat
 * chose among 32 per element). Else one nest. Trailing axes that every
 * load reads alike run as one loop (merged_tail). */
void ts_lw_loop(lctx *c, const ts_value *v)
{
    const ts_node *cat = aligned_concat(c, v);
    const int m = merged_tail(c, v, cat), nd = c->n_delins;
    ts_lx *coords[TS_MAX_RANK];
    if (!cat) {
        nest ns = {.tail = &c->k->body};
        open_nest(c, &ns, v, v->type.dims, m, coords);
        ts_lw_store(c, &ns, v, coords, ts_lw_value_at(c, v, coords, true));
        c->n_delins = nd;
        return;
    }
    const int axis = (int)ts_node_int(cat, "axis");
    ts_ls **top = &c->k->body;
    ts_lx *off = ts_lx_int(c->p, 0);
    for (int j = 0; j < cat->n_in; j++) {
        const ts_value *part = cat->in[j];
        nest ns = {.tail = top};
        ts_lx *pc[TS_MAX_RANK];
        ts_dim d[TS_MAX_RANK];
        for (int i = 0; i < v->type.rank; i++) d[i] = (i == axis ? part : v)->type.dims[i];
        open_nest(c, &ns, v, d, m, pc);
        for (int i = 0; i < v->type.rank; i++) coords[i] = i == axis ? ts_lx_add(c->p, pc[i], off) : pc[i];
        c->subst_v = cat->out[0];
        c->subst_x = ts_lw_value_at(c, part, pc, false);
        ts_lw_store(c, &ns, v, coords, ts_lw_value_at(c, v, coords, true));
        c->subst_v = NULL;
        c->n_delins = nd;
        if (*top) top = &(*top)->next;
        off = ts_lx_add(c->p, off, ts_lw_dim(c, part->type.dims[axis]));
    }
}

void ts_lw_loop2(lctx *c, const ts_value *w, const ts_value *v)
{
    nest ns = {.tail = &c->k->body};
    ts_lx *coords[TS_MAX_RANK];
    for (int i = 0; i < v->type.rank; i++) coords[i] = ts_lw_open_loop(c, &ns, ts_lw_dim(c, v->type.dims[i]));
    ts_lx *xw = ts_lw_value_at(c, w, coords, true);
    ts_lw_store(c, &ns, w, coords, xw);
    c->subst_v = w;
    c->subst_x = xw;
    ts_lw_store(c, &ns, v, coords, ts_lw_value_at(c, v, coords, true));
    c->subst_v = NULL;
}
