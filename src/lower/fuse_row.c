/* fuse_row.c — row fusion: reductions over the trailing axes of an
 * iteration space, and the elementwise values around them, become one
 * kernel with an outer loop over rows (softmax, layer norm, RMS norm, log
 * softmax: one pass over each row while it is in L1, instead of one pass
 * over the whole tensor per reduction).
 *
 * It works on the groups ts_fuse made: a run of consecutive groups that
 * are each a reduction over the trailing axes of a value of shape S = O+I,
 * or a loop over S or over O (the per-row scalars), merges when everything
 * each group reads from the others is read in the same row: at identity
 * coordinates of S, or at the row's coordinates of O (a broadcast back
 * along the trailing axes). Values of the run that only the run reads are
 * then recomputed where they are needed rather than stored; the
 * reductions become per-row accumulators (and are still stored, one
 * element per row, for readers outside the run).
 */
#include "lower/fuse.h"

#include <string.h>

typedef struct rowkey {
    int rank, inner;        /* S's rank, and how many trailing axes are I */
    const ts_dim *dims;     /* S's dims */
} rowkey;

static bool same_dims(int n, const ts_dim *a, const ts_dim *b)
{
    for (int i = 0; i < n; i++)
        if (!ts_dim_eq(a[i], b[i])) return false;
    return true;
}

static bool is_s(const rowkey *k, const ts_value *v)
{
    return v->type.rank == k->rank && same_dims(k->rank, v->type.dims, k->dims);
}

/* O, or O with trailing 1s (a reduction's result with keepdims): the same
 * elements in the same order, one per row. */
static bool is_o1(const rowkey *k, const ts_value *v)
{
    int no = k->rank - k->inner, r = v->type.rank;
    if (r < no || r > k->rank || !same_dims(no, v->type.dims, k->dims)) return false;
    for (int i = no; i < r; i++)
        if (!ts_dim_eq(v->type.dims[i], ts_dim_const(1))) return false;
    return true;
}

static bool row_reduce(const ts_node *n)
{
    return n->op == TS_OP_REDUCE_SUM || n->op == TS_OP_REDUCE_PROD || n->op == TS_OP_REDUCE_MAX ||
           n->op == TS_OP_REDUCE_MIN;
}

/* The key of a reduction over exactly the trailing axes of its input. */
static bool reduce_key(const ts_node *n, rowkey *k)
{
    if (!row_reduce(n)) return false;
    int cnt = 0, r = n->in[0]->type.rank;
    const int64_t *axes = ts_node_ints(n, "axes", &cnt);
    if (cnt < 1 || cnt >= r) return false;
    bool trailing[TS_MAX_RANK] = {false};
    for (int i = 0; i < cnt; i++) trailing[axes[i]] = true;
    for (int i = r - cnt; i < r; i++)
        if (!trailing[i]) return false;
    *k = (rowkey){r, cnt, n->in[0]->type.dims};
    return true;
}

/* ---- reads inside the run are row-local ------------------------------------------- */

typedef struct run {
    const ts_fusion *f;
    rowkey key;
    bool *in_run;            /* by value id: an output of a group of the run */
} run;

static bool reaches_run(const run *r, const ts_value *v, int depth)
{
    if (r->in_run[v->id]) return true;
    if (r->f->mat[v->id] || !v->def || depth > 64) return false;
    for (int i = 0; i < v->def->n_in; i++)
        if (reaches_run(r, v->def->in[i], depth + 1)) return true;
    return false;
}

/* Whether reading v at the row's coordinates (row_o: of O; else of S)
 * reads the run's values only in that row. */
static bool row_local(const run *r, const ts_value *v, bool row_o, int depth)
{
    if (r->in_run[v->id]) return row_o ? is_o1(&r->key, v) : is_s(&r->key, v);
    if (r->f->mat[v->id] || !v->def) return true;
    if (depth > 64) return false;
    const ts_node *d = v->def;
    if ((ts_op_get(d->op)->flags & TS_OPF_EW) && d->op != TS_OP_BITCAST) {
        for (int i = 0; i < d->n_in; i++)
            if (!row_local(r, d->in[i], row_o, depth + 1)) return false;
        return true;
    }
    if (d->op == TS_OP_RESHAPE && row_o && is_o1(&r->key, v) && is_o1(&r->key, d->in[0]))
        return row_local(r, d->in[0], true, depth + 1);   /* adding or dropping the trailing 1s */
    if (d->op == TS_OP_BROADCAST && !row_o && is_o1(&r->key, d->in[0])) {
        int cnt = 0;   /* O (+1s) -> S along the trailing axes: O's coordinates are the row's */
        const int64_t *axes = ts_node_ints(d, "axes", &cnt);
        bool ident = true;
        for (int i = 0; i < cnt; i++) ident &= axes[i] == i;
        if (ident) return row_local(r, d->in[0], true, depth + 1);
    }
    return !reaches_run(r, v, depth + 1);
}

/* Group g joins a run with key k: its kind and shapes fit, and its reads
 * of the run are row-local. */
static bool joins(run *r, const ts_group *g)
{
    if (g->n_out != 1) return false;
    const ts_value *v = g->out[0];
    const ts_node *n = g->root;
    if (g->kind == TS_G_REDUCE) {
        rowkey k;
        if (!reduce_key(n, &k) || !is_s(&r->key, n->in[0]) || k.inner != r->key.inner) return false;
        return row_local(r, n->in[0], false, 0);
    }
    if (g->kind != TS_G_LOOP || n->op == TS_OP_CONST || n->op == TS_OP_IOTA) return false;
    bool s = is_s(&r->key, v), o = !s && is_o1(&r->key, v);
    if (!s && !o) return false;
    if (!(ts_op_get(n->op)->flags & TS_OPF_EW) || n->op == TS_OP_BITCAST) return false;
    for (int i = 0; i < n->n_in; i++)
        if (!row_local(r, n->in[i], o, 0)) return false;
    return true;
}

/* ---- merging ------------------------------------------------------------------------ */

/* Nodes of the run: the groups' roots and everything they inline. */
static void mark_nodes(const ts_fusion *f, const ts_value *v, bool root, bool *node_in, int depth)
{
    if (!v->def || (!root && f->mat[v->id]) || node_in[v->def->id] || depth > 256) return;
    node_in[v->def->id] = true;
    for (int i = 0; i < v->def->n_in; i++) mark_nodes(f, v->def->in[i], false, node_in, depth + 1);
}

/* Merge groups [a, b) into one ROW group at a; values only the run reads
 * stop being stored. Returns the number of groups removed. */
static int merge(ts_fusion *f, int a, int b, const rowkey *key, bool *node_in, int *cnt)
{
    const ts_graph *g = f->g;
    memset(node_in, 0, g->next_node_id ? g->next_node_id : 1);
    for (int i = a; i < b; i++) mark_nodes(f, f->groups[i].out[0], true, node_in, 0);
    memset(cnt, 0, sizeof *cnt * (g->next_value_id ? g->next_value_id : 1));
    for (const ts_node *n = g->body->first; n; n = n->next)
        if (node_in[n->id])
            for (int i = 0; i < n->n_in; i++) cnt[n->in[i]->id]++;
    ts_group *row = &f->groups[a];
    const ts_value **outs = ts_arena_array(f->arena, (size_t)(b - a), sizeof *outs);
    if (!outs) return -1;
    int n_out = 0;
    for (int i = a; i < b; i++) {
        const ts_value *v = f->groups[i].out[0];
        bool loop = f->groups[i].kind == TS_G_LOOP;
        if (loop && cnt[v->id] == f->uses[v->id]) f->mat[v->id] = false;   /* recomputed where read */
        else outs[n_out++] = v;
    }
    const ts_value *space = NULL;
    for (int i = a; i < b && !space; i++)
        if (f->groups[i].kind == TS_G_REDUCE) space = f->groups[i].root->in[0];
    row->kind = TS_G_ROW;
    row->root = f->groups[a].root;
    row->out = outs;
    row->n_out = n_out;
    row->row_space = space;
    row->row_inner = key->inner;
    memmove(&f->groups[a + 1], &f->groups[b], sizeof *f->groups * (size_t)(f->n_groups - b));
    f->n_groups -= b - a - 1;
    return b - a - 1;
}

ts_status ts_fuse_rows(ts_fusion *f, ts_err *err)
{
    const ts_graph *g = f->g;
    size_t nv = g->next_value_id ? g->next_value_id : 1, nn = g->next_node_id ? g->next_node_id : 1;
    bool *in_run = ts_mem_zalloc(nv), *node_in = ts_mem_zalloc(nn);
    int *cnt = ts_mem_alloc(sizeof *cnt * nv);
    ts_status s = in_run && node_in && cnt ? TS_OK : ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (int a = 0; s == TS_OK && a < f->n_groups; a++) {
        rowkey key;
        if (f->groups[a].kind != TS_G_REDUCE || !reduce_key(f->groups[a].root, &key)) continue;
        run r = {.f = f, .key = key, .in_run = in_run};
        memset(in_run, 0, nv);
        int b = a;
        while (b < f->n_groups && joins(&r, &f->groups[b])) in_run[f->groups[b++].out[0]->id] = true;
        if (b - a < 2) continue;
        if (merge(f, a, b, &key, node_in, cnt) < 0) s = ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    ts_mem_free(in_run);
    ts_mem_free(node_in);
    ts_mem_free(cnt);
    return s;
}
