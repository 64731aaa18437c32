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

/* The nest of stored value v, once per part of the concat it reads at
 * its own coordinates: in part j's nest the concat's axis runs over the
 * part alone and the concat is the part itself, so no element chooses
 * its part (a BatchNorm + ReLU over a DenseNet block's 32-way concat
 * chose among 32 per element). Else one nest. */
void ts_lw_loop(lctx *c, const ts_value *v)
{
    const ts_node *cat = aligned_concat(c, v);
    ts_lx *coords[TS_MAX_RANK];
    if (!cat) {
        nest ns = {.tail = &c->k->body};
        for (int i = 0; i < v->type.rank; i++) coords[i] = ts_lw_open_loop(c, &ns, ts_lw_dim(c, v->type.dims[i]));
        ts_lw_store(c, &ns, v, coords, ts_lw_value_at(c, v, coords, true));
        return;
    }
    const int axis = (int)ts_node_int(cat, "axis");
    ts_ls **top = &c->k->body;
    ts_lx *off = ts_lx_int(c->p, 0);
    for (int j = 0; j < cat->n_in; j++) {
        const ts_value *part = cat->in[j];
        nest ns = {.tail = top};
        ts_lx *pc[TS_MAX_RANK];
        for (int i = 0; i < v->type.rank; i++) {
            pc[i] = ts_lw_open_loop(c, &ns, ts_lw_dim(c, (i == axis ? part : v)->type.dims[i]));
            coords[i] = i == axis ? ts_lx_add(c->p, pc[i], off) : pc[i];
        }
        c->subst_v = cat->out[0];
        c->subst_x = ts_lw_value_at(c, part, pc, false);
        ts_lw_store(c, &ns, v, coords, ts_lw_value_at(c, v, coords, true));
        c->subst_v = NULL;
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
