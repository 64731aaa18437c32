/* fuse_multi.c — two loop kernels in a row become one (fuse.h, D116): a
 * loop group that stores w, followed at once by a loop group over w's
 * shape whose value reads w only at its own coordinates (through
 * elementwise nodes of that shape), are one loop nest that computes w,
 * stores it, and goes on to the second value with w's element at hand.
 * w stays stored (others read it later); what goes is one launch and one
 * pass over w. An LSTM step's new cell state and the hidden state made
 * from it are the pattern: stored because the next step reads the cell,
 * and read elementwise right away. */
#include "lower/fuse.h"

#include <string.h>

static bool same_shape(const ts_value *a, const ts_value *b)
{
    if (a->type.rank != b->type.rank) return false;
    for (int i = 0; i < a->type.rank; i++)
        if (!ts_dim_eq(a->type.dims[i], b->type.dims[i])) return false;
    return true;
}

/* Whether v's inlined expression reads stored w only at v's coordinates:
 * through elementwise nodes of v's shape (*hit: it reads w at all); any
 * other node on the way must not lead to w. seen: per node, 1 when walked
 * aligned, 2 when walked not (the stricter walk). */
static bool aligned_reads(const ts_fusion *f, const ts_value *v, const ts_value *top, const ts_value *w, bool *hit,
                          bool aligned, unsigned char *seen)
{
    if (v == w) {
        *hit = true;
        return aligned;
    }
    const ts_node *n = v->def;
    if (!n || (v != top && f->mat[v->id])) return true;
    if ((seen[n->id] & 2) || (aligned && seen[n->id])) return true;   /* walked at least as strictly */
    seen[n->id] |= aligned ? 1 : 2;
    bool ew = (ts_op_get(n->op)->flags & TS_OPF_EW) && n->op != TS_OP_BITCAST && same_shape(v, top);
    for (int i = 0; i < n->n_in; i++)
        if (!aligned_reads(f, n->in[i], top, w, hit, aligned && ew, seen)) return false;
    return true;
}

ts_status ts_fuse_multi(ts_fusion *f, ts_err *err)
{
    size_t nn = f->g->next_node_id ? f->g->next_node_id : 1;
    unsigned char *seen = ts_arena_array(f->arena, nn, sizeof *seen);
    if (!seen) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (int i = 0; i + 1 < f->n_groups; i++) {
        ts_group *a = &f->groups[i], *b = &f->groups[i + 1];
        if (a->kind != TS_G_LOOP || b->kind != TS_G_LOOP || a->n_out != 1 || b->n_out != 1) continue;
        const ts_value *w = a->out[0], *v = b->out[0];
        if (!same_shape(w, v) || f->into[w->id] || f->into[v->id]) continue;
        bool hit = false;
        memset(seen, 0, nn * sizeof *seen);
        if (!aligned_reads(f, v, v, w, &hit, true, seen) || !hit) continue;
        const ts_value **out = ts_arena_array(f->arena, 2, sizeof *out);
        if (!out) return ts_err_set(err, TS_ERR_OOM, "out of memory");
        out[0] = w;
        out[1] = v;
        b->out = out;
        b->n_out = 2;
        memmove(a, b, sizeof *a * (size_t)(f->n_groups - i - 1));
        f->n_groups--;
    }
    return TS_OK;
}
