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

ts_status ts_fuse_multi(ts_fusion *f, ts_err *err)
{
    size_t nn = f->g->next_node_id ? f->g->next_node_id : 1;
    unsigned char *seen = ts_arena_array(f->arena, nn, sizeof *seen);
    if (!seen) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (int i = 0; i + 1 < f->n_groups; i++) {
        ts_group *a = &f->groups[i], *b = &f->groups[i + 1];
        if (a->kind != TS_G_LOOP || b->kind != TS_G_LOOP || a->n_out != 1 || b->n_out != 1) continue;
        if (a->root->op == TS_OP_SCATTER || b->root->op == TS_OP_SCATTER) continue;   /* not a value per element */
        const ts_value *w = a->out[0], *v = b->out[0];
        if (!ts_view_same_shape(w, v) || f->into[w->id] || f->into[v->id]) continue;
        bool hit = false;
        memset(seen, 0, nn * sizeof *seen);
        if (!ts_view_reads_aligned(f->mat, v, w, seen, &hit) || !hit) continue;
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
