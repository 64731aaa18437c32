/* fuse.c — the fusion pass (fuse.h): decide what is stored, then cut the
 * body into kernels around the stored values.
 *
 * What gets stored, and why:
 * - graph inputs and results, and constants that are not one repeated
 *   value (they are buffers already);
 * - results of reductions and contractions (their loops differ from their
 *   consumers'), and of every node the generator does not handle;
 * - operands of contractions and of fallback nodes (those read memory),
 *   and a gather's indices (checked in memory before its kernel runs);
 * - a computed value used twice or more, unless it is a pure view (layout
 *   ops over something stored, iota, a splat): recomputing a view costs
 *   index arithmetic only, recomputing an exp per use costs an exp, and
 *   storing costs a write and a read per element, which for the memory-
 *   bound kernels this targets is the larger cost.
 * Everything else is inlined into each kernel that reads it.
 */
#include "lower/fuse.h"

#include "lower/view.h"

#include <string.h>

static bool is_splat_const(const ts_node *n)
{
    if (n->op != TS_OP_CONST) return false;
    const ts_tensor *t = n->attrs[0].t;
    size_t sz = ts_dtype_size(t->dtype);
    for (int64_t i = 1; i < t->numel; i++)
        if (memcmp((const char *)t->data + (size_t)i * sz, t->data, sz)) return false;
    return true;
}

static bool reduce_op(ts_op op)
{
    return op == TS_OP_REDUCE_SUM || op == TS_OP_REDUCE_PROD || op == TS_OP_REDUCE_MAX || op == TS_OP_REDUCE_MIN ||
           op == TS_OP_REDUCE_WINDOW || op == TS_OP_ARGMAX || op == TS_OP_ARGMIN || op == TS_OP_CUMULATIVE;
}

/* Computed inline as an expression of its operands at an index. */
static bool inlinable(const ts_node *n)
{
    const ts_op_info *info = ts_op_get(n->op);
    if (n->op == TS_OP_BITCAST) return false;
    return (info->flags & TS_OPF_EW) || ts_view_op(n) || n->op == TS_OP_IOTA || n->op == TS_OP_CONST ||
           n->op == TS_OP_GATHER;
}

/* Whether the backend generates code for n (else it is a FALLBACK group):
 * the backend's answer, for nodes of the body being fused (a region's
 * nodes are fused as a body of their own when the backend compiles the
 * if/while holding them, D115). */
static bool compiled(const ts_fusion *f, const ts_node *n)
{
    return n->block == f->g->body && f->compiles(n);
}

/* A view: recomputing it is index arithmetic over stored or constant data. */
static bool cheap(const ts_fusion *f, const ts_value *v)
{
    if (f->mat[v->id] || !v->def) return true;
    const ts_node *n = v->def;
    if (n->op == TS_OP_IOTA || is_splat_const(n)) return true;
    if (n->op == TS_OP_GATHER) return cheap(f, n->in[0]);   /* its indices are stored: one more load */
    if (!ts_view_op(n) || n->op == TS_OP_PAD || n->op == TS_OP_CONCAT) return false;
    return cheap(f, n->in[0]);
}

bool ts_fuse_template(const ts_fusion *f, const ts_node *n)
{
    return f->templates && ts_contract_template(n);
}

/* A template dot's operand that is a layout chain (not stored yet): read
 * in place if the chain ends at stored data and each role merges, decided
 * once every other value's storage is known. */
static bool deferred_operand(const ts_fusion *f, const ts_node *n, int i)
{
    if (n->op != TS_OP_DOT || !ts_fuse_template(f, n)) return false;
    const ts_node *d = n->in[i]->def;
    return d && (d->op == TS_OP_TRANSPOSE || d->op == TS_OP_RESHAPE || d->op == TS_OP_SLICE);
}

static bool needs_memory_operands(const ts_fusion *f, const ts_node *n)
{
    return !compiled(f, n) || n->op == TS_OP_DOT || n->op == TS_OP_CONV || n->op == TS_OP_SORT || n->n_regions;
}

/* Whether v can be read when node n runs: computed before it, or made of
 * constants (a const, iota, views of them and arithmetic on them, wherever
 * they sit). */
static bool available(const ts_fusion *f, const ts_value *v, const ts_node *n, const int *pos)
{
    const ts_node *d = v->def;
    if (!d || pos[d->id] < pos[n->id] || d->op == TS_OP_CONST) return true;
    /* stored by a kernel of its own, which runs after n; or used twice,
     * which may make it stored later */
    if (f->mat[v->id] || (f->uses[v->id] >= 2 && !cheap(f, v))) return false;
    if (d->op == TS_OP_IOTA) return true;
    /* views of it, or arithmetic on such values (sqrt(2) written out) */
    if (!ts_view_op(d) && !((ts_op_get(d->op)->flags & TS_OPF_EW) && inlinable(d))) return false;
    for (int i = 0; i < d->n_in; i++)
        if (!available(f, d->in[i], n, pos)) return false;
    return true;
}


/* Every user of each value, for the epilogue cone. */
typedef struct users {
    int *off;                  /* by value id: its users are list[off[id] .. off[id + 1]) */
    const ts_node **list;
} users;

/* Whether u can run in the epilogue of a contraction with result d: an
 * elementwise f32 node, or a reshape that only adds or drops dims of 1
 * (a 1x1 conv over a 1x1 map made a dot, its bias added after the
 * reshape back), its result in d's element order (D124). */
static bool epilogue_node(const ts_node *u, const ts_value *d)
{
    const ts_value *w = u->out[0];
    if (w->type.dtype != TS_DTYPE_F32 || !ts_view_same_layout(w, d)) return false;
    if (u->op == TS_OP_RESHAPE) return true;
    return (ts_op_get(u->op)->flags & TS_OPF_EW) && u->op != TS_OP_BITCAST;
}

static bool joinable(const ts_fusion *f, const ts_node *u, const ts_value *d)
{
    if (u->n_out != 1 || !compiled(f, u) || !inlinable(u)) return false;
    return epilogue_node(u, d);
}

/* The epilogue as a cone rather than a chain: elementwise nodes that read
 * only the contraction's result, values already in the cone, or what is
 * available when it runs, grown until nothing more joins; it is taken when
 * exactly one of its values is read outside it (GELU reads its input
 * three times: a chain stops there, the cone takes it whole). Returns that
 * value, or NULL. */
static const ts_value *epilogue_cone(ts_fusion *f, const ts_node *n, const users *us, bool *covered, bool *in_cone,
                                     const int *pos, const ts_block *body)
{
    const ts_value *d = n->out[0];
    const ts_node *nodes[64];
    const ts_value *vals[65];
    int nn = 0, nvals = 0;
    vals[nvals++] = d;
    for (bool grew = true; grew && nn < 64;) {
        grew = false;
        for (int k = 0; k < nvals && nn < 64; k++)
            for (int i = us->off[vals[k]->id]; i < us->off[vals[k]->id + 1] && nn < 64; i++) {
                const ts_node *u = us->list[i];
                bool seen = covered[u->id];
                for (int j = 0; j < nn && !seen; j++) seen = nodes[j] == u;
                if (seen || !joinable(f, u, d)) continue;
                bool ready = true;
                for (int a = 0; a < u->n_in && ready; a++) {
                    bool inside = false;
                    for (int j = 0; j < nvals && !inside; j++) inside = vals[j] == u->in[a];
                    ready = inside || available(f, u->in[a], n, pos);
                }
                if (!ready) continue;
                nodes[nn++] = u;
                vals[nvals++] = u->out[0];
                grew = true;
            }
    }
    /* the values read outside the cone (or returned) */
    const ts_value *exit = NULL;
    int exits = 0;
    for (int k = 0; k < nvals; k++) {
        bool out = false;
        for (int i = 0; i < body->n_results; i++) out |= body->results[i] == vals[k];
        for (int i = us->off[vals[k]->id]; i < us->off[vals[k]->id + 1] && !out; i++) {
            bool inside = false;
            for (int j = 0; j < nn && !inside; j++) inside = nodes[j] == us->list[i];
            out = !inside;
        }
        if (out) exits++, exit = vals[k];
    }
    if (exits != 1 || exit == d) return NULL;
    for (int j = 0; j < nn; j++) covered[nodes[j]->id] = true;
    for (int k = 0; k < nvals; k++) in_cone[vals[k]->id] = true;
    return exit;
}

/* The elementwise chain a contraction's epilogue can take: from its
 * result, while the value has one use, that use is an elementwise f32
 * node of the same shape, and the value is not a graph result. Returns the
 * last value of the chain (the result itself when there is none) and
 * marks the chain's nodes covered. A node already covered by another
 * chain, or reading a value computed after n, ends the chain. The epilogue runs on blocks of the
 * result while they are in cache: bias, activation, residual add, scale. */
static const ts_value *epilogue_chain(ts_fusion *f, const ts_node *n, const ts_node **user, bool *covered,
                                      const int *pos)
{
    const ts_value *d = n->out[0], *v = d;
    for (;;) {
        const ts_node *u = user[v->id];
        if (!u || covered[u->id] || f->uses[v->id] != 1 || u->n_out != 1 || !compiled(f, u) || !inlinable(u))
            break;
        /* the epilogue runs with the contraction: what else it reads must be
         * computed by then (a residual add joins the later of two convs) */
        bool ready = true;
        for (int i = 0; i < u->n_in; i++)
            if (u->in[i] != v && !available(f, u->in[i], n, pos)) ready = false;
        if (!ready) break;
        if (!epilogue_node(u, d)) break;
        covered[u->id] = true;
        v = u->out[0];
    }
    return v;
}

/* A template dot with no epilogue whose result only feeds a chain of
 * transpose and reshape into a stored value w (attention's head merge)
 * writes w directly, through C strides: the chain costs no copy (D26). */
static void result_layout(ts_fusion *f, const ts_node *n, const ts_node **user, bool *covered)
{
    const ts_value *d = n->out[0];
    if (n->op != TS_OP_DOT || !ts_fuse_template(f, n) || f->epi[n->id] != d || f->uses[d->id] != 1) return;
    const ts_value *y = d;
    for (;;) {
        const ts_node *u = user[y->id];
        if (f->uses[y->id] != 1 || !u || (u->op != TS_OP_TRANSPOSE && u->op != TS_OP_RESHAPE)) return;
        y = u->out[0];
        if (f->mat[y->id]) break;
    }
    ts_sview sv;
    if (!ts_view_into(d, y, &sv) || !ts_dot_result_strided(n, &sv)) return;
    f->cout[n->id] = y;
    f->mat[d->id] = false;
    for (const ts_value *v = d; v != y; v = user[v->id]->out[0]) covered[user[v->id]->id] = true;
}

/* Whether concat n's parts are contiguous in it (static shapes, every
 * axis before its axis of size 1) and each is a stored value that a
 * generated node computes and nothing else reads: the shape that
 * fuse_concat.c places without a copy. */
static bool concat_parts_stored(const ts_fusion *f, const ts_node *n)
{
    const ts_value *c = n->out[0];
    const int axis = (int)ts_node_int(n, "axis");
    bool contiguous = true;
    for (int i = 0; i < c->type.rank; i++) {
        if (!ts_dim_is_const(c->type.dims[i])) return false;
        contiguous &= i >= axis || c->type.dims[i].c == 1;
    }
    for (int j = 0; j < n->n_in; j++) {
        const ts_value *x = n->in[j];
        if (!f->mat[x->id] || !x->def || x->def->op == TS_OP_CONST || !compiled(f, x->def) || f->uses[x->id] != 1)
            return false;
        if (!contiguous && !ts_concat_part_strided(f, n, x)) return false;
        for (int i = 0; i < x->type.rank; i++)
            if (!ts_dim_is_const(x->type.dims[i])) return false;
    }
    return true;
}

/* Whether cumulative n scans along an axis with more elements after it
 * and its input is computed elementwise: the scan's loop is innermost,
 * one lane at a time, so an input inlined there (a sigmoid's exp per
 * element) would run scalar; stored, a vector loop kernel computes it
 * first and the scan only loads (D134). */
static bool scan_strided_ew(const ts_node *n)
{
    const ts_value *x = n->in[0];
    const int axis = (int)ts_node_int(n, "axis");
    bool inner = false;
    for (int i = axis + 1; i < x->type.rank; i++) inner |= !ts_dim_is_const(x->type.dims[i]) || x->type.dims[i].c > 1;
    return inner && x->def && x->def->op != TS_OP_BITCAST && (ts_op_get(x->def->op)->flags & TS_OPF_EW);
}

static void decide(ts_fusion *f, const ts_block *body, const ts_node **user, bool *covered, const int *pos,
                   const users *us, bool *in_cone)
{
    for (int i = 0; i < body->n_params; i++) f->mat[body->params[i]->id] = true;
    for (int i = 0; i < body->n_results; i++) f->mat[body->results[i]->id] = true;
    for (const ts_node *n = body->first; n; n = n->next) {
        bool gen = compiled(f, n);
        for (int k = 0; k < n->n_out; k++) {
            const ts_value *v = n->out[k];
            if (!gen || !inlinable(n) || (n->op == TS_OP_CONST && !is_splat_const(n))) f->mat[v->id] = true;
        }
        if (needs_memory_operands(f, n))
            for (int i = 0; i < n->n_in; i++)
                if (!gen || !deferred_operand(f, n, i)) f->mat[n->in[i]->id] = true;
        /* a gather's indices are checked in memory before its kernel runs */
        const ts_node *d = n->op == TS_OP_GATHER ? n->in[1]->def : NULL;
        if (gen && n->op == TS_OP_GATHER && (!d || d->op != TS_OP_CONST)) f->mat[n->in[1]->id] = true;
        if (gen && n->op == TS_OP_SCATTER) f->mat[n->in[1]->id] = true;   /* D123: checked the same way */
        if (gen && n->op == TS_OP_CUMULATIVE && scan_strided_ew(n)) f->mat[n->in[0]->id] = true;
    }
    /* contraction templates take their elementwise consumers as epilogues */
    for (const ts_node *n = body->first; n; n = n->next) {
        /* (a contraction the backend leaves to the interpreter has none) */
        if ((n->op != TS_OP_DOT && n->op != TS_OP_CONV) || !ts_fuse_template(f, n) || !compiled(f, n)) continue;
        const ts_value *v = epilogue_cone(f, n, us, covered, in_cone, pos, body);
        if (!v) v = epilogue_chain(f, n, user, covered, pos);
        f->epi[n->id] = v;
        if (v == n->out[0]) continue;
        bool result = false;
        for (int i = 0; i < body->n_results; i++) result |= body->results[i] == n->out[0];
        if (!result) f->mat[n->out[0]->id] = false;
        f->mat[v->id] = true;
    }
    /* a concat of stored single-use parts is stored too: it will cost no
     * copy (fuse_concat.c), and its readers then load it directly instead
     * of choosing a part per element (a max pool reading a concat ran
     * 9 selects per output; D114) */
    for (const ts_node *n = body->first; n; n = n->next)
        if (n->op == TS_OP_CONCAT && compiled(f, n) && concat_parts_stored(f, n)) f->mat[n->out[0]->id] = true;
    /* shared values: in graph order, so each value's operands are decided */
    for (const ts_node *n = body->first; n; n = n->next)
        for (int k = 0; k < n->n_out; k++) {
            const ts_value *v = n->out[k];
            if (!f->mat[v->id] && !in_cone[v->id] && f->uses[v->id] >= 2 && !cheap(f, v)) f->mat[v->id] = true;
        }
    /* dot operands left as layout chains: read in place, or stored after all */
    for (const ts_node *n = body->first; n; n = n->next)
        for (int i = 0; i < n->n_in; i++) {
            ts_sview sv;
            if (!deferred_operand(f, n, i) || f->mat[n->in[i]->id]) continue;
            if (!ts_view_strided(f->mat, n->in[i], &sv) || !ts_dot_operand_strided(n, i, &sv)) f->mat[n->in[i]->id] = true;
        }
    for (const ts_node *n = body->first; n; n = n->next) result_layout(f, n, user, covered);
}

static ts_status add_group(ts_fusion *f, ts_gkind kind, const ts_node *n, int *cap, ts_err *err)
{
    if (f->n_groups == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        ts_group *g = ts_arena_array(f->arena, (size_t)nc, sizeof *g);
        if (!g) return ts_err_set(err, TS_ERR_OOM, "out of memory");
        if (f->n_groups) memcpy(g, f->groups, sizeof *g * (size_t)f->n_groups);
        f->groups = g;
        *cap = nc;
    }
    ts_group *g = &f->groups[f->n_groups++];
    memset(g, 0, sizeof *g);
    g->kind = kind;
    g->root = n;
    g->out = ts_arena_array(f->arena, (size_t)(n->n_out ? n->n_out : 1), sizeof *g->out);
    if (!g->out) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (int k = 0; k < n->n_out; k++) g->out[g->n_out++] = n->out[k];
    return TS_OK;
}

/* The kernel n starts, if any: a fallback, a contraction with its
 * epilogue, or a stored value with what is inlined into it. */
static ts_status group_node(ts_fusion *f, const ts_node *n, const bool *covered, int *cap, ts_err *err)
{
    if (!compiled(f, n)) return add_group(f, TS_G_FALLBACK, n, cap, err);
    if (n->n_regions) return add_group(f, TS_G_CONTROL, n, cap, err);
    if (n->op == TS_OP_SORT) return add_group(f, TS_G_CALL, n, cap, err);
    if (covered[n->id]) return TS_OK;   /* in a contraction's epilogue */
    if ((n->op == TS_OP_DOT || n->op == TS_OP_CONV) && f->epi[n->id]) {
        TS_TRY(add_group(f, n->op == TS_OP_DOT ? TS_G_DOT : TS_G_CONV, n, cap, err));
        if (f->epi[n->id] != n->out[0]) {
            f->groups[f->n_groups - 1].out[0] = f->epi[n->id];
            f->groups[f->n_groups - 1].epilogue = f->epi[n->id];
        }
        if (f->cout[n->id]) f->groups[f->n_groups - 1].out[0] = f->cout[n->id];
        return TS_OK;
    }
    if (n->n_out != 1 || !f->mat[n->out[0]->id]) return TS_OK;   /* inlined into its users */
    if (n->op == TS_OP_CONST && !is_splat_const(n)) return TS_OK; /* a buffer already */
    ts_gkind kind = n->op == TS_OP_DOT    ? TS_G_DOT
                    : n->op == TS_OP_CONV ? TS_G_CONV   /* as loops: a target without templates */
                    : reduce_op(n->op)    ? TS_G_REDUCE
                                          : TS_G_LOOP;
    return add_group(f, kind, n, cap, err);
}

/* Values of at most this many elements computed from parameters and
 * constants alone run first (see mark_early). */
#define EARLY_MAX_ELEMS 65536

/* Whether n computes a small value from the graph's parameters and
 * constants only (through other such nodes): elementwise or view nodes
 * that the backend generates. Those run before everything else, so a
 * contraction's epilogue can read them: a torch graph computes batch
 * norm's per-channel scale (rsqrt(var + eps) * weight, its weights being
 * inputs) after the convolution it scales, which left the scale, shift
 * and ReLU as a pass of their own over the convolution's result. Small,
 * so keeping them alive from the start costs little memory. */
static bool mark_early(const ts_fusion *f, const ts_node *n, bool *early)
{
    if (n->n_out != 1 || n->n_regions || !compiled(f, n) || !inlinable(n)) return false;
    const ts_type *t = &n->out[0]->type;
    int64_t numel = 1;
    for (int i = 0; i < t->rank; i++) {
        if (!ts_dim_is_const(t->dims[i])) return false;
        numel *= t->dims[i].c;
        if (numel > EARLY_MAX_ELEMS) return false;
    }
    for (int i = 0; i < n->n_in; i++) {
        const ts_node *d = n->in[i]->def;
        if (d && !early[d->id]) return false;
    }
    return early[n->id] = true;
}

ts_status ts_fuse(const ts_graph *g, ts_fuse_compiles_fn compiles, bool templates, ts_fusion **out, ts_err *err)
{
    ts_fusion *f = ts_mem_zalloc(sizeof *f);
    if (!f || !(f->arena = ts_arena_new())) {
        ts_mem_free(f);
        return ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    f->g = g;
    f->compiles = compiles;
    f->templates = templates;
    size_t nv = g->next_value_id ? g->next_value_id : 1;
    f->mat = ts_arena_array(f->arena, nv, sizeof *f->mat);
    f->uses = ts_arena_array(f->arena, nv, sizeof *f->uses);
    f->into = ts_arena_array(f->arena, nv, sizeof *f->into);
    f->into_off = ts_arena_array(f->arena, nv, sizeof *f->into_off);
    if (!f->mat || !f->uses || !f->into || !f->into_off) {
        ts_fusion_free(f);
        return ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    memset(f->mat, 0, nv * sizeof *f->mat);
    memset(f->uses, 0, nv * sizeof *f->uses);
    memset(f->into, 0, nv * sizeof *f->into);
    memset(f->into_off, 0, nv * sizeof *f->into_off);
    const ts_block *body = g->body;
    size_t nn = g->next_node_id ? g->next_node_id : 1;
    const ts_node **user = ts_arena_array(f->arena, nv, sizeof *user);
    bool *covered = ts_arena_array(f->arena, nn, sizeof *covered);
    int *pos = ts_arena_array(f->arena, nn, sizeof *pos);
    f->epi = ts_arena_array(f->arena, nn, sizeof *f->epi);
    f->cout = ts_arena_array(f->arena, nn, sizeof *f->cout);
    if (!user || !covered || !pos || !f->epi || !f->cout) {
        ts_fusion_free(f);
        return ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    memset(user, 0, nv * sizeof *user);
    memset(covered, 0, nn * sizeof *covered);
    memset(f->epi, 0, nn * sizeof *f->epi);
    memset(f->cout, 0, nn * sizeof *f->cout);
    bool *early = ts_arena_array(f->arena, nn, sizeof *early);
    if (!early) {
        ts_fusion_free(f);
        return ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    memset(early, 0, nn * sizeof *early);
    /* positions: the early nodes first, in their order, then the rest */
    int at = 0;
    for (const ts_node *n = body->first; n; n = n->next)
        if (mark_early(f, n, early)) pos[n->id] = at++;
    for (const ts_node *n = body->first; n; n = n->next) {
        if (!early[n->id]) pos[n->id] = at++;
        for (int i = 0; i < n->n_in; i++) {
            f->uses[n->in[i]->id]++;
            user[n->in[i]->id] = n;
        }
    }
    for (int i = 0; i < body->n_results; i++) f->uses[body->results[i]->id]++;
    users us = {ts_arena_array(f->arena, nv + 1, sizeof *us.off), NULL};
    bool *in_cone = ts_arena_array(f->arena, nv, sizeof *in_cone);
    int total = 0;
    for (const ts_node *n = body->first; n; n = n->next) total += n->n_in;
    us.list = ts_arena_array(f->arena, (size_t)(total ? total : 1), sizeof *us.list);
    if (!us.off || !us.list || !in_cone) {
        ts_fusion_free(f);
        return ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    memset(in_cone, 0, nv * sizeof *in_cone);
    memset(us.off, 0, (nv + 1) * sizeof *us.off);
    for (const ts_node *n = body->first; n; n = n->next)
        for (int i = 0; i < n->n_in; i++) us.off[n->in[i]->id + 1]++;
    for (size_t i = 0; i < nv; i++) us.off[i + 1] += us.off[i];
    int *fill = ts_arena_array(f->arena, nv, sizeof *fill);
    if (!fill) {
        ts_fusion_free(f);
        return ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    memcpy(fill, us.off, nv * sizeof *fill);
    for (const ts_node *n = body->first; n; n = n->next)
        for (int i = 0; i < n->n_in; i++) us.list[fill[n->in[i]->id]++] = n;
    decide(f, body, user, covered, pos, &us, in_cone);

    int cap = 0;
    ts_status s = TS_OK;
    /* the early nodes' kernels first (their positions), then the rest */
    for (int pass = 0; pass < 2; pass++)
        for (const ts_node *n = body->first; s == TS_OK && n; n = n->next)
            if (early[n->id] == (pass == 0)) s = group_node(f, n, covered, &cap, err);
    if (s == TS_OK) s = ts_fuse_rows(f, err);
    if (s == TS_OK) s = ts_fuse_concats(f, err);
    if (s == TS_OK) s = ts_fuse_multi(f, err);
    if (s != TS_OK) {
        ts_fusion_free(f);
        return s;
    }
    *out = f;
    return TS_OK;
}

void ts_fusion_free(ts_fusion *f)
{
    if (!f) return;
    ts_arena_free(f->arena);
    ts_mem_free(f);
}

static void put_value(ts_buf *b, const ts_value *v)
{
    if (v->name) ts_buf_printf(b, "%%%s", v->name);
    else ts_buf_printf(b, "%%v%u", v->id);
}

/* The inlined nodes under value v (not stored), listed once, operands first. */
static void put_inlined(ts_buf *b, const ts_fusion *f, const ts_value *v, bool top, bool *seen)
{
    const ts_node *n = v->def;
    if (!n || (!top && f->mat[v->id]) || seen[n->id]) return;
    seen[n->id] = true;
    for (int i = 0; i < n->n_in; i++) put_inlined(b, f, n->in[i], false, seen);
    ts_buf_printf(b, " %s", ts_op_get(n->op)->name);
}

void ts_fusion_print(ts_buf *b, const ts_fusion *f)
{
    static const char *const kinds[] = {"loop", "reduce", "row", "dot", "conv", "fallback", "control", "call"};
    bool *seen = ts_mem_zalloc(f->g->next_node_id ? f->g->next_node_id : 1);
    int stored = 0;
    for (uint32_t i = 0; i < f->g->next_value_id; i++) stored += f->mat[i];
    ts_buf_printf(b, "fusion of @%s: %d kernels, %d stored values\n", f->g->name ? f->g->name : "", f->n_groups,
                  stored);
    for (int i = 0; i < f->n_groups; i++) {
        const ts_group *g = &f->groups[i];
        ts_buf_printf(b, "  k%d %-8s ", i, kinds[g->kind]);
        for (int k = 0; k < g->n_out; k++) {
            if (k) ts_buf_puts(b, ", ");
            put_value(b, g->out[k]);
        }
        ts_buf_puts(b, " <-");
        if (seen) {
            memset(seen, 0, f->g->next_node_id ? f->g->next_node_id : 1);
            for (int k = 0; k < g->n_out; k++) put_inlined(b, f, g->out[k], true, seen);
        }
        ts_buf_puts(b, "\n");
    }
    for (int i = 0; i < f->n_placed; i++) {
        ts_buf_puts(b, "  in place ");
        put_value(b, f->placed[i]);
        ts_buf_puts(b, " <- concat of");
        const ts_node *n = f->placed[i]->def;
        for (int k = 0; k < n->n_in; k++) {
            ts_buf_puts(b, " ");
            put_value(b, n->in[k]);
        }
        ts_buf_puts(b, ", written there by their kernels\n");
    }
    ts_mem_free(seen);
}
