/* fuse_concat.c — concat without a copy (fuse.h, D114, D125): a stored
 * concat whose inputs are each written by a kernel and read by nothing
 * else gets no kernel of its own; each input's kernel writes straight
 * into its part of the concat's buffer, and the runtime hands it that
 * part (the address of its first element) as its output.
 *
 * Where every axis before the concat's is of size 1 (a channel concat at
 * batch 1 in NCHW, any concat along the first axis) the parts are
 * contiguous, laid out as the inputs themselves are, and any kernel can
 * write one. Otherwise (a channel concat at batch 8) a part is strided:
 * its kernel must index its output with the concat's strides
 * (ts_lw_out_linear) or, for a conv, with the concat's image stride
 * (tsrt_conv_args.y_bs); kernels that address their output some other
 * way (GEMM results, scatter, sort) keep the copy. Static shapes only:
 * the offsets are known here. */
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

/* The template contraction whose epilogue ends at x, or NULL. */
static const ts_node *contraction_of(const ts_fusion *f, const ts_value *x)
{
    if (x->def && (x->def->op == TS_OP_DOT || x->def->op == TS_OP_CONV) && !f->epi[x->def->id]) return x->def;
    for (const ts_node *k = f->g->body->first; k; k = k->next)
        if ((k->op == TS_OP_DOT || k->op == TS_OP_CONV) && f->epi[k->id] == x) return k;
    return NULL;
}

bool ts_concat_part_strided(const ts_fusion *f, const ts_node *n, const ts_value *x)
{
    const ts_node *d = x->def, *k = contraction_of(f, x);
    if (!d || d->n_regions || d->op == TS_OP_SCATTER || d->op == TS_OP_SORT) return false;
    if (!k) return d->op != TS_OP_DOT;
    /* a conv writes images at a stride of its choosing, channels and
     * positions dense: a channel concat of x in the conv's own shape */
    if (k->op != TS_OP_CONV || ts_node_int(n, "axis") != 1 || !ts_fuse_template(f, k)) return false;
    const ts_value *y = k->out[0];
    if (y->type.rank != x->type.rank) return false;
    for (int i = 0; i < y->type.rank; i++)
        if (!ts_dim_is_const(y->type.dims[i]) || y->type.dims[i].c != x->type.dims[i].c) return false;
    return true;
}

/* Whether the kernel of group g indexes its output as ts_lw_out_linear
 * or the conv template does. */
static bool writes_strided(const ts_group *g)
{
    switch (g->kind) {
    case TS_G_LOOP: return g->root->op != TS_OP_SCATTER;
    case TS_G_REDUCE:
    case TS_G_ROW:
    case TS_G_CONV: return true;
    default: return false;
    }
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
    bool contiguous = true;
    for (int i = 0; i < axis; i++) contiguous &= c->type.dims[i].c == 1;
    for (int j = 0; j < n->n_in; j++) {
        const ts_value *x = n->in[j];
        int w = x->def ? writer(f, x) : -1;
        if (w < 0 || f->groups[w].kind == TS_G_FALLBACK || f->uses[x->id] != 1 || is_result(body, x) || f->into[x->id])
            return false;
        if (!contiguous && (!writes_strided(&f->groups[w]) || !ts_concat_part_strided(f, n, x))) return false;
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
        /* part j starts at its first index along the axis */
        const ts_value *c = n->out[0];
        const int axis = (int)ts_node_int(n, "axis");
        int64_t inner = 1, off = 0;
        for (int i = axis + 1; i < c->type.rank; i++) inner *= c->type.dims[i].c;
        for (int j = 0; j < n->n_in; j++) {
            f->into[n->in[j]->id] = c;
            f->into_off[n->in[j]->id] = off * inner;
            off += n->in[j]->type.dims[axis].c;
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
