/* ops_tree.c — TreeEnsemble (ai.onnx.ml 5), assembled from gather,
 * comparisons, reductions and one dot; no loop runs at inference.
 *
 * The trees are attributes, so their shape is known at load time. Each tree
 * is unfolded into its root-to-leaf paths: a path is the list of decisions
 * (node m must be true / false) that lead to one leaf. At run time
 *   1. every interior node's decision is computed for every sample at once:
 *      D [N, M] = compare(X[:, feature[m]], split[m]) by the node's mode;
 *   2. a path is taken when all its decisions hold: the decisions are
 *      gathered along a padded [P, depth] index table and compared with
 *      the wanted outcomes, reach [N, P] = all(...);
 *   3. the leaves reached are aggregated per target: a dot with the [P, T]
 *      matrix of leaf weights (SUM, AVERAGE), or a masked min/max.
 * Comparisons are made in f64, where every input and every split is exact,
 * so they decide as the reference's Python comparisons do. */
#include "frontend/onnx/onnx.h"
#include "frontend/onnx/ops_util.h"

#include "core/tensor.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Decisions the unfolded paths may hold in all (paths x longest path): a
 * forest whose nodes are shared by many paths (a DAG) could unfold to
 * exponentially many. */
#define MAX_CONDS ((int64_t)1 << 22)

enum { LEQ, LT, GTE, GT, EQ, NEQ, MEMBER, N_MODES };
enum { AVERAGE, SUM, MIN, MAX };
enum { NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT };

typedef struct forest {
    int64_t m;                                 /* interior nodes */
    const int64_t *feat, *tid, *fid, *tleaf, *fleaf;
    const int64_t *mtt;                        /* nodes_missing_value_tracks_true, or NULL */
    int64_t *modes;                            /* [m] */
    double *splits;                            /* [m] */
    int64_t n_leaves;
    const int64_t *target;                     /* leaf_targetids */
    double *weights;                           /* leaf_weights */
    double *members;                           /* membership_values, or NULL */
    int64_t n_members;
    const int64_t *roots;
    int64_t n_roots, n_targets;
    int agg, post;
} forest;

/* The unfolded paths: path p ends at leaf[p] and holds the decisions
 * node[start[p] .. start[p+1]) with outcomes want[...]. Storage through
 * ts_mem (paths_free). */
typedef struct paths {
    int64_t count, n_conds, depth;             /* depth: the longest path */
    int64_t *leaf, *start, *node;
    bool *want;
    int64_t cap_leaf, cap_start, cap_node, cap_want;
} paths;

/* ---- helpers ------------------------------------------------------------------- */

static ts_value *bin(onnx_node *n, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(onnx_b(n), op, x, y); }

static ts_value *cast(onnx_node *n, ts_value *x, ts_dtype dt)
{
    return x && x->type.dtype != dt ? ts_b_cast(onnx_b(n), x, dt) : x;
}

static ts_value *sel(onnx_node *n, ts_value *p, ts_value *x, ts_value *y) { return ts_b_select(onnx_b(n), p, x, y); }

static ts_value *reduce(onnx_node *n, ts_op op, ts_value *x, int64_t axis, bool keep)
{
    return ts_b_reduce(onnx_b(n), op, x, 1, &axis, keep);
}

/* all(x) over axis of a bool tensor. */
static ts_value *all_of(onnx_node *n, ts_value *x, int64_t axis)
{
    ts_value *m = reduce(n, TS_OP_REDUCE_MIN, cast(n, x, TS_DTYPE_I8), axis, false);
    return bin(n, TS_OP_NE, m, ts_b_scalar(onnx_b(n), TS_DTYPE_I8, 0));
}

static ts_value *any_of(onnx_node *n, ts_value *x, int64_t axis)
{
    ts_value *m = reduce(n, TS_OP_REDUCE_MAX, cast(n, x, TS_DTYPE_I8), axis, false);
    return bin(n, TS_OP_NE, m, ts_b_scalar(onnx_b(n), TS_DTYPE_I8, 0));
}

static ts_value *vec_i64(onnx_node *n, int64_t k, const int64_t *v) { return onnx_util_const(n, TS_DTYPE_I64, 1, &k, v); }

static ts_value *vec_bool(onnx_node *n, int64_t k, const bool *v) { return onnx_util_const(n, TS_DTYPE_BOOL, 1, &k, v); }

/* ---- reading the attributes ----------------------------------------------------------- */

/* A required INTS attribute of `count` entries (count < 0: any; *count
 * then receives it). */
static ts_status req_ints(onnx_node *n, const char *name, const int64_t **v, int64_t *count)
{
    if (!onnx_has_attr(n, name)) return onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute '%s' is required", name);
    int k = onnx_attr_ints(n, name, v);
    TS_TRY(onnx_status(n));
    if (*count >= 0 && k != *count)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute '%s' has %d entries; %lld expected", name, k,
                         (long long)*count);
    *count = k;
    return TS_OK;
}

/* A TENSOR attribute as doubles in the arena (floats; integers for
 * nodes_modes), `count` entries as req_ints. Absent: required fails, else
 * *v is NULL. */
static ts_status tensor_f64(onnx_node *n, const char *name, bool required, bool integer, double **v, int64_t *count)
{
    *v = NULL;
    if (!onnx_has_attr(n, name))
        return required ? onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute '%s' is required", name) : TS_OK;
    ts_tensor *t = NULL;
    TS_TRY(onnx_attr_tensor(n, name, &t));
    ts_status s = TS_OK;
    if (integer ? !ts_dtype_is_int(t->dtype) : !ts_dtype_is_float(t->dtype))
        s = onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute '%s' is a tensor of %s; %s expected", name,
                      ts_dtype_name(t->dtype), integer ? "integers (u8)" : "floats");
    else if (*count >= 0 && t->numel != *count)
        s = onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute '%s' has %lld entries; %lld expected", name,
                      (long long)t->numel, (long long)*count);
    else if (!(*v = ts_arena_array(onnx_graph(n)->arena, (size_t)t->numel + 1, sizeof **v)))
        s = onnx_fail(n, TS_ERR_OOM, "out of memory");
    for (int64_t i = 0; s == TS_OK && i < t->numel; i++) (*v)[i] = ts_elem_get_f64(t->dtype, t->data, i);
    *count = t->numel;
    ts_tensor_release(t);
    return s;
}

/* Every index in range: node ids point at nodes or leaves, leaves at
 * targets, roots at nodes, modes known. */
static ts_status check_forest(onnx_node *n, forest *f)
{
    for (int64_t i = 0; i < f->m; i++) {
        if (f->modes[i] < 0 || f->modes[i] >= N_MODES)
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "node %lld has mode %lld (0..6)", (long long)i, (long long)f->modes[i]);
        if (f->feat[i] < 0)
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "node %lld reads feature %lld", (long long)i, (long long)f->feat[i]);
        int64_t t = f->tleaf[i] ? f->n_leaves : f->m, e = f->fleaf[i] ? f->n_leaves : f->m;
        if (f->tid[i] < 0 || f->tid[i] >= t || f->fid[i] < 0 || f->fid[i] >= e)
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "node %lld branches to %lld / %lld, out of range", (long long)i,
                             (long long)f->tid[i], (long long)f->fid[i]);
    }
    for (int64_t i = 0; i < f->n_leaves; i++)
        if (f->target[i] < 0 || f->target[i] >= f->n_targets)
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "leaf %lld adds to target %lld of %lld", (long long)i,
                             (long long)f->target[i], (long long)f->n_targets);
    for (int64_t i = 0; i < f->n_roots; i++)
        if (f->roots[i] < 0 || f->roots[i] >= f->m)
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "tree root %lld is not a node", (long long)f->roots[i]);
    return TS_OK;
}

static ts_status read_forest(onnx_node *n, forest *f)
{
    memset(f, 0, sizeof *f);
    f->m = -1;
    TS_TRY(req_ints(n, "nodes_featureids", &f->feat, &f->m));
    TS_TRY(req_ints(n, "nodes_truenodeids", &f->tid, &f->m));
    TS_TRY(req_ints(n, "nodes_falsenodeids", &f->fid, &f->m));
    TS_TRY(req_ints(n, "nodes_trueleafs", &f->tleaf, &f->m));
    TS_TRY(req_ints(n, "nodes_falseleafs", &f->fleaf, &f->m));
    const char *mtt = "nodes_missing_value_tracks_true";
    if (onnx_has_attr(n, mtt)) TS_TRY(req_ints(n, mtt, &f->mtt, &f->m));
    double *modes;
    int64_t m = f->m;
    TS_TRY(tensor_f64(n, "nodes_modes", true, true, &modes, &m));
    TS_TRY(tensor_f64(n, "nodes_splits", true, false, &f->splits, &m));
    f->n_leaves = -1;
    TS_TRY(req_ints(n, "leaf_targetids", &f->target, &f->n_leaves));
    TS_TRY(tensor_f64(n, "leaf_weights", true, false, &f->weights, &f->n_leaves));
    f->n_members = -1;
    TS_TRY(tensor_f64(n, "membership_values", false, false, &f->members, &f->n_members));
    f->n_roots = -1;
    TS_TRY(req_ints(n, "tree_roots", &f->roots, &f->n_roots));
    if (!onnx_has_attr(n, "n_targets")) return onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute 'n_targets' is required");
    f->n_targets = onnx_attr_int(n, "n_targets", 0);
    f->agg = (int)onnx_attr_int(n, "aggregate_function", SUM);
    f->post = (int)onnx_attr_int(n, "post_transform", NONE);
    TS_TRY(onnx_status(n));
    if (f->m < 1 || f->n_roots < 1 || f->n_leaves < 1 || f->n_targets < 1)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "a forest needs nodes, leaves, tree roots and n_targets >= 1");
    if (f->agg < AVERAGE || f->agg > MAX)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "aggregate_function %d (0..3)", f->agg);
    if (f->post == PROBIT) return onnx_unsupported(n, "post_transform PROBIT (an inverse erf) is not assembled");
    if (f->post < NONE || f->post > PROBIT) return onnx_fail(n, TS_ERR_INVALID_MODEL, "post_transform %d (0..4)", f->post);
    f->modes = ts_arena_array(onnx_graph(n)->arena, (size_t)f->m, sizeof *f->modes);
    if (!f->modes) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    for (int64_t i = 0; i < f->m; i++) f->modes[i] = isfinite(modes[i]) ? (int64_t)modes[i] : -1;
    return check_forest(n, f);
}

/* ---- unfolding the trees into paths ---------------------------------------------------------- */

static void paths_free(paths *p)
{
    ts_mem_free(p->leaf);
    ts_mem_free(p->start);
    ts_mem_free(p->node);
    ts_mem_free(p->want);
}

/* a, grown (doubling) to hold `need` elements of size sz: a itself when
 * it does, NULL when out of memory (a is then unchanged). */
static void *grow(void *a, int64_t *cap, int64_t need, size_t sz)
{
    if (need <= *cap) return a;
    int64_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = ts_mem_realloc(a, (size_t)c * sz);
    if (q) *cap = c;
    return q;
}

/* Room for one more path of len decisions. */
static bool reserve(paths *p, int64_t len)
{
    int64_t *leaf = grow(p->leaf, &p->cap_leaf, p->count + 1, sizeof *leaf);
    if (leaf) p->leaf = leaf;
    int64_t *start = grow(p->start, &p->cap_start, p->count + 2, sizeof *start);
    if (start) p->start = start;
    int64_t *node = grow(p->node, &p->cap_node, p->n_conds + len, sizeof *node);
    if (node) p->node = node;
    bool *want = grow(p->want, &p->cap_want, p->n_conds + len, sizeof *want);
    if (want) p->want = want;
    return leaf && start && node && want;
}

/* Append the path made of the decisions node[0..len), want[0..len) to
 * leaf `leaf`. */
static ts_status add_path(onnx_node *n, paths *p, int64_t leaf, int64_t len, const int64_t *node, const bool *want)
{
    int64_t depth = len > p->depth ? len : p->depth;
    if ((p->count + 1) * depth > MAX_CONDS)
        return onnx_unsupported(n, "the trees unfold to more than %lld path decisions", (long long)MAX_CONDS);
    if (!reserve(p, len)) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    p->start[p->count] = p->n_conds;
    p->leaf[p->count++] = leaf;
    if (len) {
        memcpy(p->node + p->n_conds, node, sizeof *node * (size_t)len);
        memcpy(p->want + p->n_conds, want, sizeof *want * (size_t)len);
    }
    p->n_conds += len;
    p->start[p->count] = p->n_conds;
    p->depth = depth;
    return TS_OK;
}

/* Depth-first from root, without recursion: stack[d] is the node at depth
 * d and state[d] its next branch (0 true, 1 false, 2 done). A path longer
 * than the node count repeats a node: the "trees" have a cycle. */
static ts_status unfold_tree(onnx_node *n, const forest *f, int64_t root, int64_t *stack, bool *state_want,
                             int *state, paths *p)
{
    int64_t d = 0;
    stack[0] = root;
    state[0] = 0;
    while (d >= 0) {
        int64_t at = stack[d];
        if (state[d] == 2) {
            d--;
            continue;
        }
        bool want = state[d]++ == 0;
        state_want[d] = want;
        bool leaf = want ? f->tleaf[at] : f->fleaf[at];
        int64_t next = want ? f->tid[at] : f->fid[at];
        if (leaf) {
            TS_TRY(add_path(n, p, next, d + 1, stack, state_want));
            continue;
        }
        if (d + 1 >= f->m)
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "the tree at root %lld has a cycle through node %lld",
                             (long long)root, (long long)next);
        stack[++d] = next;
        state[d] = 0;
    }
    return TS_OK;
}

static ts_status unfold(onnx_node *n, const forest *f, paths *p)
{
    ts_arena *a = onnx_graph(n)->arena;
    int64_t *stack = ts_arena_array(a, (size_t)f->m + 1, sizeof *stack);
    bool *want = ts_arena_array(a, (size_t)f->m + 1, sizeof *want);
    int *state = ts_arena_array(a, (size_t)f->m + 1, sizeof *state);
    if (!stack || !want || !state) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    for (int64_t t = 0; t < f->n_roots; t++) {
        int64_t r = f->roots[t];
        /* a tree that is one leaf: both branches of its root name it */
        if (f->tleaf[r] && f->fleaf[r] && f->tid[r] == f->fid[r]) TS_TRY(add_path(n, p, f->tid[r], 0, NULL, NULL));
        else TS_TRY(unfold_tree(n, f, r, stack, want, state, p));
    }
    return TS_OK;
}

/* ---- decisions ---------------------------------------------------------------------------------- */

/* x (f64 [N, M]) against split s (f64 [M]) by mode. */
static ts_value *compare(onnx_node *n, int mode, ts_value *x, ts_value *s)
{
    switch (mode) {
    case LEQ: return bin(n, TS_OP_LE, x, s);
    case LT: return bin(n, TS_OP_LT, x, s);
    case GTE: return bin(n, TS_OP_LE, s, x);
    case GT: return bin(n, TS_OP_LT, s, x);
    case EQ: return bin(n, TS_OP_EQ, x, s);
    default: return bin(n, TS_OP_NE, x, s);
    }
}

/* The decisions of the BRANCH_MEMBER nodes, placed in their columns of an
 * [N, M] bool (other columns false): each member node's set padded with
 * NaN (equal to nothing) to the largest set, compared, any(). Sets follow
 * membership_values in node order, each ended by a NaN. */
static ts_value *member_decisions(onnx_node *n, const forest *f, ts_value *xf)
{
    ts_arena *a = onnx_graph(n)->arena;
    int64_t mm = 0, widest = 1, at = 0, nan = 0, len = 0;
    for (int64_t i = 0; i < f->m; i++) mm += f->modes[i] == MEMBER;
    for (int64_t i = 0; i < f->n_members; i++) {
        if (!isnan(f->members[i])) {
            len++;
            continue;
        }
        if (len > widest) widest = len;
        len = 0;
        nan++;
    }
    if (nan != mm) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "%lld set-membership nodes but membership_values holds %lld NaN-ended sets",
                  (long long)mm, (long long)nan);
        return NULL;
    }
    int64_t *cols = ts_arena_array(a, (size_t)mm, sizeof *cols), *place = ts_arena_array(a, (size_t)f->m, sizeof *place);
    double *sets = ts_arena_array(a, (size_t)(mm * widest), sizeof *sets);
    if (!cols || !place || !sets || !xf) {
        if (xf) onnx_fail(n, TS_ERR_OOM, "out of memory");
        return NULL;
    }
    for (int64_t i = 0, k = 0; i < f->m; i++) {
        place[i] = mm;   /* the false column */
        if (f->modes[i] != MEMBER) continue;
        cols[k] = i;
        place[i] = k;
        int64_t j = 0;
        for (; !isnan(f->members[at]); at++) sets[k * widest + j++] = f->members[at];
        for (at++; j < widest; j++) sets[k * widest + j] = NAN;
        k++;
    }
    int64_t shape[2] = {mm, widest};
    ts_value *xm = onnx_util_unsq_b(onnx_b(n), onnx_util_gather(n, xf, vec_i64(n, mm, cols), 1), 2);
    ts_value *hit = any_of(n, bin(n, TS_OP_EQ, xm, onnx_util_const(n, TS_DTYPE_F64, 2, shape, sets)), 2);
    ts_dim d[2] = {xf->type.dims[0], ts_dim_const(1)};
    ts_value *no = ts_b_full(onnx_b(n), TS_DTYPE_BOOL, 0, 2, d);
    ts_value *with_false = ts_b_concat(onnx_b(n), 2, (ts_value *[]){hit, no}, 1);
    return onnx_util_gather(n, with_false, vec_i64(n, f->m, place), 1);
}

/* Constant bool [M]: modes[i] == mode; *count receives how many. */
static ts_value *mode_mask(onnx_node *n, const forest *f, int mode, int64_t *count)
{
    bool *v = ts_arena_array(onnx_graph(n)->arena, (size_t)f->m, sizeof *v);
    *count = 0;
    if (!v) {
        onnx_fail(n, TS_ERR_OOM, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < f->m; i++) *count += v[i] = f->modes[i] == mode;
    return vec_bool(n, f->m, v);
}

/* D [N, M]: every node's decision for every sample. */
static ts_value *decisions(onnx_node *n, const forest *f, ts_value *x)
{
    ts_value *xf = cast(n, onnx_util_gather(n, x, vec_i64(n, f->m, f->feat), 1), TS_DTYPE_F64);
    ts_value *s = onnx_util_const(n, TS_DTYPE_F64, 1, &f->m, f->splits), *d = NULL;
    if (!xf || !s) return NULL;
    for (int mode = 0; mode < N_MODES; mode++) {
        int64_t count;
        ts_value *mask = mode_mask(n, f, mode, &count);
        if (!count || !mask) continue;
        ts_value *c = mode == MEMBER ? member_decisions(n, f, xf) : compare(n, mode, xf, s);
        d = !d || count == f->m ? c : sel(n, mask, c, d);   /* the first mode fills every column */
    }
    bool any = false;
    for (int64_t i = 0; f->mtt && i < f->m; i++) any = any || f->mtt[i];
    if (any) {
        bool *v = ts_arena_array(onnx_graph(n)->arena, (size_t)f->m, sizeof *v);
        if (!v) {
            onnx_fail(n, TS_ERR_OOM, "out of memory");
            return NULL;
        }
        for (int64_t i = 0; i < f->m; i++) v[i] = f->mtt[i] != 0;
        d = bin(n, TS_OP_OR, d, bin(n, TS_OP_AND, bin(n, TS_OP_NE, xf, xf), vec_bool(n, f->m, v)));
    }
    return d;
}

/* reach [N, P]: path p is taken by sample i. Decisions are gathered along
 * a [P, depth] table; short paths are padded with a column that is always
 * true and wanted true. */
static ts_value *reach(onnx_node *n, const paths *p, ts_value *d)
{
    if (!d) return NULL;
    ts_dim nd = d->type.dims[0], dd[3] = {nd, ts_dim_const(p->count), ts_dim_const(p->depth)};
    if (p->depth == 0) return ts_b_full(onnx_b(n), TS_DTYPE_BOOL, 1, 2, dd);
    ts_arena *a = onnx_graph(n)->arena;
    int64_t m = d->type.dims[1].c, total = p->count * p->depth;
    int64_t *idx = ts_arena_array(a, (size_t)total, sizeof *idx);
    bool *want = ts_arena_array(a, (size_t)total, sizeof *want);
    if (!idx || !want) {
        onnx_fail(n, TS_ERR_OOM, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < p->count; i++)
        for (int64_t j = 0, k = p->start[i]; j < p->depth; j++, k++) {
            bool real = k < p->start[i + 1];
            idx[i * p->depth + j] = real ? p->node[k] : m;
            want[i * p->depth + j] = real ? p->want[k] : true;
        }
    ts_dim one[2] = {nd, ts_dim_const(1)};
    ts_value *dx = ts_b_concat(onnx_b(n), 2, (ts_value *[]){d, ts_b_full(onnx_b(n), TS_DTYPE_BOOL, 1, 2, one)}, 1);
    ts_value *g = ts_b_reshape(onnx_b(n), onnx_util_gather(n, dx, vec_i64(n, total, idx), 1), 3, dd);
    int64_t shape[2] = {p->count, p->depth};
    return all_of(n, bin(n, TS_OP_EQ, g, onnx_util_const(n, TS_DTYPE_BOOL, 2, shape, want)), 2);
}

/* ---- aggregation and post-transform ------------------------------------------------------------- */

/* [N, T] in dtype ct from reach [N, P]. SUM and AVERAGE: a dot with the
 * [P, T] weights (divided by the tree count for AVERAGE, as the reference
 * adds w / trees); MIN and MAX: the reached weights of each target reduced,
 * starting from the dtype's largest / lowest finite value (the
 * reference's initial value, kept when no leaf adds to a target). */
static ts_value *aggregate(onnx_node *n, const forest *f, const paths *p, ts_value *r, ts_dtype ct, double big)
{
    int64_t P = p->count, T = f->n_targets, shape[2] = {P, T};
    if (!r) return NULL;
    if (T > MAX_CONDS / P) {
        onnx_unsupported(n, "%lld paths times %lld targets: more than %lld leaf weights", (long long)P, (long long)T,
                         (long long)MAX_CONDS);
        return NULL;
    }
    ts_arena *a = onnx_graph(n)->arena;
    double *w = ts_arena_array(a, (size_t)(P * T), sizeof *w);
    bool *hit = ts_arena_array(a, (size_t)(P * T), sizeof *hit);
    if (!w || !hit) {
        onnx_fail(n, TS_ERR_OOM, "out of memory");
        return NULL;
    }
    double div = f->agg == AVERAGE ? (double)f->n_roots : 1;
    for (int64_t i = 0; i < P; i++)
        for (int64_t t = 0; t < T; t++) {
            hit[i * T + t] = f->target[p->leaf[i]] == t;
            w[i * T + t] = hit[i * T + t] ? f->weights[p->leaf[i]] / div : 0;
        }
    ts_value *wv = cast(n, onnx_util_const(n, TS_DTYPE_F64, 2, shape, w), ct);
    if (f->agg == SUM || f->agg == AVERAGE) {
        int64_t lc = 1, rc = 0;
        return ts_b_dot(onnx_b(n), cast(n, r, ct), wv, 0, NULL, NULL, 1, &lc, &rc);
    }
    ts_value *take = bin(n, TS_OP_AND, onnx_util_unsq_b(onnx_b(n), r, 2), onnx_util_const(n, TS_DTYPE_BOOL, 2, shape, hit));
    ts_value *fill = ts_b_scalar(onnx_b(n), ct, f->agg == MIN ? big : -big);
    return reduce(n, f->agg == MIN ? TS_OP_REDUCE_MIN : TS_OP_REDUCE_MAX, sel(n, take, wv, fill), 1, false);
}

/* post_transform over the targets (axis 1), as onnxruntime computes it:
 * SOFTMAX; LOGISTIC as 1 / (1 + e^-|y|) mirrored for y < 0; SOFTMAX_ZERO
 * leaves (near-)zero scores out of the exponentials and the sum. */
static ts_value *post_transform(onnx_node *n, int post, ts_value *y)
{
    if (!y || post == NONE) return y;
    ts_builder *b = onnx_b(n);
    ts_dtype dt = y->type.dtype;
    ts_value *one = ts_b_scalar(b, dt, 1);
    if (post == LOGISTIC) {
        ts_value *e = ts_b_unary(b, TS_OP_EXP, ts_b_unary(b, TS_OP_NEG, ts_b_unary(b, TS_OP_ABS, y)));
        ts_value *v = bin(n, TS_OP_DIV, one, bin(n, TS_OP_ADD, one, e));
        return sel(n, bin(n, TS_OP_LT, y, ts_b_scalar(b, dt, 0)), bin(n, TS_OP_SUB, one, v), v);
    }
    ts_value *mx = reduce(n, TS_OP_REDUCE_MAX, y, 1, true);
    ts_value *e = ts_b_unary(b, TS_OP_EXP, bin(n, TS_OP_SUB, y, mx));
    if (post == SOFTMAX) return bin(n, TS_OP_DIV, e, reduce(n, TS_OP_REDUCE_SUM, e, 1, true));
    ts_value *nz = bin(n, TS_OP_LT, ts_b_scalar(b, dt, 1e-7), ts_b_unary(b, TS_OP_ABS, y));
    ts_value *tiny = bin(n, TS_OP_MUL, y, ts_b_unary(b, TS_OP_EXP, ts_b_unary(b, TS_OP_NEG, mx)));
    ts_value *sum = reduce(n, TS_OP_REDUCE_SUM, sel(n, nz, e, ts_b_scalar(b, dt, 0)), 1, true);
    return bin(n, TS_OP_DIV, sel(n, nz, e, tiny), sum);
}

/* ---- TreeEnsemble --------------------------------------------------------------------------------- */

/* TreeEnsemble (5): X [N, F] -> Y [N, n_targets], of X's dtype (f16 is
 * aggregated in f32). */
static ts_status onnx_tree_ensemble(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    TS_TRY(onnx_status(n));
    ts_dtype dt = x->type.dtype;
    if (dt != TS_DTYPE_F16 && dt != TS_DTYPE_F32 && dt != TS_DTYPE_F64)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "X is %s: TreeEnsemble takes f16, f32 or f64", ts_dtype_name(dt));
    if (x->type.rank != 2) return onnx_fail(n, TS_ERR_SHAPE, "X must be [N, F], got rank %d", x->type.rank);
    forest f;
    TS_TRY(read_forest(n, &f));
    ts_dim nf = x->type.dims[1];
    for (int64_t i = 0; ts_dim_is_const(nf) && i < f.m; i++)
        if (f.feat[i] >= nf.c)
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "node %lld reads feature %lld of %lld", (long long)i,
                             (long long)f.feat[i], (long long)nf.c);
    paths p = {0};
    ts_status s = unfold(n, &f, &p);
    ts_dtype ct = dt == TS_DTYPE_F16 ? TS_DTYPE_F32 : dt;
    double big = dt == TS_DTYPE_F16 ? 65504.0 : dt == TS_DTYPE_F32 ? FLT_MAX : DBL_MAX;
    if (s == TS_OK) {
        ts_value *y = aggregate(n, &f, &p, reach(n, &p, decisions(n, &f, x)), ct, big);
        onnx_set_out(n, 0, cast(n, post_transform(n, f.post, y), dt));
    }
    paths_free(&p);
    return onnx_status(n);
}

const onnx_op_entry onnx_ops_tree[] = {
    {"TreeEnsemble", 5, INT_MAX, onnx_tree_ensemble},
    {NULL, 0, 0, NULL},
};
