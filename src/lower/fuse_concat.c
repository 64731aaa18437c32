/* fuse_concat.c — concat without a copy (fuse.h, D114): a stored concat
 * whose inputs are each written by a kernel and read by nothing else gets
 * no kernel of its own; each input's kernel writes straight into its part
 * of the concat's buffer, and the runtime hands it that part as its
 * output.
 *
 * Only where the parts are contiguous: every axis before the concat's is
 * of size 1 (a channel concat at batch 1 in NCHW, any concat along the
 * first axis), so part j is the `off_j` elements after the buffer's
 * start, laid out as the input itself is. Static shapes only: the offsets
 * are known here. */
#include "lower/fuse.h"

#include <string.h>

static bool is_result(const ts_block *body, const ts_value *v)
{
    for (int i = 0; i < body->n_results; i++)
        if (body->results[i] == v) return true;
    return false;
}

static bool static_numel(const ts_value *v, int64_t *numel)
{
    int64_t n = 1;
    for (int i = 0; i < v->type.rank; i++) {
        if (!ts_dim_is_const(v->type.dims[i])) return false;
        n *= v->type.dims[i].c;
    }
    *numel = n;
    return true;
}

/* The index of the group that writes v, or -1. */
static int writer(const ts_fusion *f, const ts_value *v)
{
    for (int i = 0; i < f->n_groups; i++)
        for (int k = 0; k < f->groups[i].n_out; k++)
            if (f->groups[i].out[k] == v) return i;
    return -1;
}

/* Whether concat n can be written in place by its inputs' kernels (its
 * own kernel, if it has one, is then *own). */
static bool placeable(const ts_fusion *f, const ts_node *n, int *own)
{
    const ts_block *body = f->g->body;
    const ts_value *c = n->out[0];
    int64_t numel;
    *own = writer(f, c);
    if (*own < 0 || f->groups[*own].kind != TS_G_LOOP || f->groups[*own].root != n || f->groups[*own].n_out != 1)
        return false;
    if (is_result(body, c) || !static_numel(c, &numel)) return false;
    const int axis = (int)ts_node_int(n, "axis");
    for (int i = 0; i < axis; i++)
        if (c->type.dims[i].c != 1) return false;
    for (int j = 0; j < n->n_in; j++) {
        const ts_value *x = n->in[j];
        int w = x->def ? writer(f, x) : -1;
        if (w < 0 || f->groups[w].kind == TS_G_FALLBACK || f->uses[x->id] != 1 || is_result(body, x) || f->into[x->id])
            return false;
        for (int k = 0; k < j; k++)
            if (n->in[k] == x) return false;   /* one buffer cannot sit in two places */
    }
    return true;
}

ts_status ts_fuse_concats(ts_fusion *f, ts_err *err)
{
    for (const ts_node *n = f->g->body->first; n; n = n->next) {
        int own;
        if (n->op != TS_OP_CONCAT || !f->mat[n->out[0]->id] || !placeable(f, n, &own)) continue;
        int64_t off = 0;
        for (int j = 0; j < n->n_in; j++) {
            int64_t numel = 0;
            static_numel(n->in[j], &numel);
            f->into[n->in[j]->id] = n->out[0];
            f->into_off[n->in[j]->id] = off;
            off += numel;
        }
        if (f->n_placed % 16 == 0) {
            const ts_value **pl = ts_arena_array(f->arena, (size_t)f->n_placed + 16, sizeof *pl);
            if (!pl) return ts_err_set(err, TS_ERR_OOM, "out of memory");
            if (f->n_placed) memcpy(pl, f->placed, sizeof *pl * (size_t)f->n_placed);
            f->placed = pl;
        }
        f->placed[f->n_placed++] = n->out[0];
        /* its copy kernel goes: later groups move up one */
        memmove(&f->groups[own], &f->groups[own + 1], sizeof *f->groups * (size_t)(f->n_groups - own - 1));
        f->n_groups--;
    }
    return TS_OK;
}
