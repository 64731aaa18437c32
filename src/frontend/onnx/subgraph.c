/* subgraph.c — graph attributes (If, Loop, Scan bodies). Regions are
 * isolated (D6): a subgraph's free names — used inside, defined outside —
 * become explicit operands (captures), and inside the region they resolve
 * to the region's parameters. A subgraph is built with its own builder in a
 * scope that is a barrier, so a name never resolves to a value the region
 * cannot see. */
#include "frontend/onnx/seq.h"

#include <string.h>

/* ---- free names ------------------------------------------------------------------------- */

typedef struct frame {
    onnx_map defined;
    const struct frame *up;
} frame;

/* Names in first-use order, each once. */
typedef struct name_list {
    onnx_map seen;
    const char **names;
    size_t n, cap;
} name_list;

static bool defined_in(const frame *f, const char *name)
{
    for (; f; f = f->up)
        if (onnx_map_get(&f->defined, name)) return true;
    return false;
}

static bool use(name_list *l, const frame *f, const char *name)
{
    if (!name || !name[0] || defined_in(f, name) || onnx_map_get(&l->seen, name)) return true;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        const char **p = ts_mem_realloc(l->names, cap * sizeof *p);
        if (!p) return false;
        l->names = p;
        l->cap = cap;
    }
    l->names[l->n++] = name;
    return onnx_map_put(&l->seen, name, (void *)name);
}

static void name_list_free(name_list *l)
{
    onnx_map_free(&l->seen);
    ts_mem_free(l->names);
}

static bool define_all(frame *f, const Onnx__GraphProto *gp)
{
    bool ok = true;
    for (size_t i = 0; i < gp->n_input; i++)
        if (gp->input[i]) ok = ok && onnx_map_put(&f->defined, gp->input[i]->name, (void *)1);
    for (size_t i = 0; i < gp->n_initializer; i++)
        if (gp->initializer[i]) ok = ok && onnx_map_put(&f->defined, gp->initializer[i]->name, (void *)1);
    for (size_t i = 0; i < gp->n_node; i++)
        for (size_t k = 0; gp->node[i] && k < gp->node[i]->n_output; k++)
            if (gp->node[i]->output[k][0]) ok = ok && onnx_map_put(&f->defined, gp->node[i]->output[k], (void *)1);
    return ok;
}

static bool collect(const Onnx__GraphProto *gp, const frame *up, name_list *l, int depth);

static bool collect_node(const Onnx__NodeProto *np, const frame *f, name_list *l, int depth)
{
    for (size_t k = 0; k < np->n_input; k++)
        if (!use(l, f, np->input[k])) return false;
    for (size_t a = 0; a < np->n_attribute; a++) {
        const Onnx__AttributeProto *at = np->attribute[a];
        if (!at) continue;
        if (at->g && !collect(at->g, f, l, depth + 1)) return false;
        for (size_t j = 0; j < at->n_graphs; j++)
            if (at->graphs[j] && !collect(at->graphs[j], f, l, depth + 1)) return false;
    }
    return true;
}

/* Add to l the names gp uses that neither gp nor the frames above define.
 * Nesting is bounded by the wire pre-scan (ONNX_MAX_DEPTH). */
static bool collect(const Onnx__GraphProto *gp, const frame *up, name_list *l, int depth)
{
    if (depth > ONNX_MAX_DEPTH) return false;
    frame f = {{.str = true}, up};
    bool ok = define_all(&f, gp);
    for (size_t i = 0; ok && i < gp->n_node; i++)
        if (gp->node[i]) ok = collect_node(gp->node[i], &f, l, depth);
    for (size_t i = 0; ok && i < gp->n_output; i++)
        if (gp->output[i]) ok = use(l, &f, gp->output[i]->name);
    onnx_map_free(&f.defined);
    return ok;
}

/* ---- captures ------------------------------------------------------------------------------ */

static ts_status add_value(onnx_node *n, ts_value *v, ts_value ***caps, int *count)
{
    const onnx_comp *k = onnx_comp_of(v);
    for (int i = 0; k && i < k->count; i++) TS_TRY(add_value(n, k->elems[i], caps, count));   /* its leaves */
    if (k || !v || (v->def && v->def->op == TS_OP_CONST)) return TS_OK;   /* constants are rebuilt inside */
    for (int i = 0; i < *count; i++)
        if ((*caps)[i] == v) return TS_OK;
    ts_value **p = ts_arena_array(onnx_graph(n)->arena, (size_t)*count + 1, sizeof *p);
    if (!p) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    if (*count) memcpy(p, *caps, sizeof *p * (size_t)*count);
    p[(*count)++] = v;
    *caps = p;
    return TS_OK;
}

static ts_status add_capture(onnx_node *n, const char *attr, const char *name, ts_value ***caps, int *count)
{
    bool found;
    ts_value *v = onnx_lookup(n->ctx, name, &found);
    if (!found)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "subgraph '%s' uses '%s', which is not defined before the node",
                         attr, name);
    return add_value(n, v, caps, count);
}

ts_status onnx_captures(onnx_node *n, int n_attrs, const char *const *attrs, int *n_caps, ts_value ***caps)
{
    *n_caps = 0;
    *caps = NULL;
    for (int a = 0; a < n_attrs; a++) {
        const Onnx__GraphProto *gp = onnx_attr_graph(n, attrs[a]);
        if (!gp) return onnx_status(n);
        name_list l = {.seen = {.str = true}};
        ts_status s = collect(gp, NULL, &l, n->ctx->depth) ? TS_OK : onnx_fail(n, TS_ERR_OOM, "out of memory");
        for (size_t i = 0; s == TS_OK && i < l.n; i++) s = add_capture(n, attrs[a], l.names[i], caps, n_caps);
        name_list_free(&l);
        TS_TRY(s);
    }
    return TS_OK;
}

/* ---- building a subgraph --------------------------------------------------------------------- */

/* What stands for outer value v inside the region: a copy of a constant,
 * or the parameter of its capture (which inherits v's recorded shape value
 * and known-input status, so constant-needing operators still work). */
static ts_value *inner_value(onnx_ctx *c, ts_builder *rb, ts_value *v, int n_caps, ts_value *const *outer,
                             ts_value *const *inner_vals);

/* A composite inside: the same structure over the inner leaves. */
static ts_value *inner_comp(onnx_ctx *c, ts_builder *rb, const onnx_comp *k, int n_caps, ts_value *const *outer,
                            ts_value *const *inner_vals)
{
    ts_value **e = ts_arena_array(c->g->arena, (size_t)k->count + 1, sizeof *e);
    if (!e) {
        ts_builder_fail(rb, TS_ERR_OOM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < k->count; i++)
        if (!(e[i] = inner_value(c, rb, k->elems[i], n_caps, outer, inner_vals))) return NULL;
    return onnx_comp_new(c, k->kind, k->count, e, k->dtype);
}

static ts_value *inner_value(onnx_ctx *c, ts_builder *rb, ts_value *v, int n_caps, ts_value *const *outer,
                             ts_value *const *inner_vals)
{
    const onnx_comp *k = onnx_comp_of(v);
    if (k) return inner_comp(c, rb, k, n_caps, outer, inner_vals);
    if (v->def && v->def->op == TS_OP_CONST) return ts_b_const(rb, ts_node_tensor(v->def, "value"));
    for (int j = 0; j < n_caps; j++) {
        if (outer[j] != v) continue;
        void *d = onnx_map_get(&c->dims, v), *k = onnx_map_get(&c->known, v);
        if ((d && !onnx_map_put(&c->dims, inner_vals[j], d)) || (k && !onnx_map_put(&c->known, inner_vals[j], k)))
            ts_builder_fail(rb, TS_ERR_OOM, "out of memory");
        return inner_vals[j];
    }
    return NULL;
}

/* Bind each free name of gp (resolved in the enclosing scope, which is
 * still current) to the inner value standing for its capture. */
static ts_status bind_captures(onnx_node *n, const Onnx__GraphProto *gp, ts_builder *rb, onnx_scope *inner,
                               int n_caps, ts_value *const *outer, ts_value *const *inner_vals)
{
    name_list l = {.seen = {.str = true}};
    ts_status s = collect(gp, NULL, &l, n->ctx->depth) ? TS_OK : onnx_fail(n, TS_ERR_OOM, "out of memory");
    for (size_t i = 0; s == TS_OK && i < l.n; i++) {
        bool found;
        ts_value *v = onnx_lookup(n->ctx, l.names[i], &found), *in = NULL;
        if (v) in = inner_value(n->ctx, rb, v, n_caps, outer, inner_vals);
        if (ts_builder_status(rb, NULL) != TS_OK) break;
        if (!found || (v && !in))
            s = onnx_fail(n, found ? TS_ERR_INTERNAL : TS_ERR_INVALID_MODEL,
                          "a subgraph uses '%s', which is %s", l.names[i],
                          found ? "not among the captured values" : "not defined before the node");
        else if (!onnx_map_put(&inner->names, l.names[i], in ? (void *)in : NULL))
            s = onnx_fail(n, TS_ERR_OOM, "out of memory");
    }
    name_list_free(&l);
    return s;
}

static ts_status collect_results(onnx_ctx *c, const Onnx__GraphProto *gp, ts_value ***results)
{
    ts_value **r = ts_arena_array(c->g->arena, gp->n_output + 1, sizeof *r);
    if (!r) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *name = gp->output[i] && gp->output[i]->name ? gp->output[i]->name : "";
        bool found;
        r[i] = onnx_lookup(c, name, &found);
        if (!r[i])
            return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL, "subgraph output '%s' is not computed by the subgraph",
                                   name);
    }
    *results = r;
    return TS_OK;
}

/* The region's contents, with c->b = rb and the region's scope current. */
static ts_status region_body(onnx_ctx *c, const Onnx__GraphProto *gp, int n_formal, ts_value *const *formal,
                             ts_value ***results)
{
    for (int i = 0; i < n_formal; i++)
        if (!onnx_bind(c, gp->input[i] ? gp->input[i]->name : NULL, formal[i]))
            return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
    TS_TRY(onnx_emit_initializers(c, gp, 0, NULL));
    TS_TRY(onnx_emit_nodes(c, gp->n_node, gp->node));
    ts_builder_set_origin(c->b, NULL);
    return collect_results(c, gp, results);
}

ts_status onnx_emit_subgraph(onnx_node *n, const Onnx__GraphProto *gp, ts_builder *rb, int n_formal,
                             ts_value *const *formal, int n_caps, ts_value *const *outer_caps,
                             ts_value *const *inner_caps, ts_value ***results)
{
    onnx_ctx *c = n->ctx;
    *results = NULL;
    if (c->depth >= ONNX_MAX_DEPTH)
        return onnx_unsupported(n, "subgraphs nest more than %d deep", ONNX_MAX_DEPTH);
    if (gp->n_input != (size_t)n_formal)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "subgraph '%s' has %zu inputs; %d expected",
                         gp->name ? gp->name : "", gp->n_input, n_formal);
    onnx_scope s;
    onnx_scope_push(c, &s, true);
    c->scope = s.parent;   /* resolve the captures outside, bind them inside */
    ts_status st = bind_captures(n, gp, rb, &s, n_caps, outer_caps, inner_caps);
    c->scope = &s;
    ts_builder *outer = c->b;
    if (st == TS_OK) {
        c->b = rb;
        c->depth++;
        region_body(c, gp, n_formal, formal, results);
        c->depth--;
        c->b = outer;
        ts_err err = {0};
        if (ts_builder_status(rb, &err) != TS_OK) st = ts_builder_fail(outer, err.code, "%s", err.msg);
    }
    onnx_scope_pop(c);
    return st;
}

ts_status onnx_inline_body(onnx_node *n, const Onnx__GraphProto *gp, int n_formal, ts_value *const *formal,
                           ts_value ***results)
{
    onnx_ctx *c = n->ctx;
    *results = NULL;
    if (gp->n_input != (size_t)n_formal)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "subgraph '%s' has %zu inputs; %d expected", gp->name ? gp->name : "",
                         gp->n_input, n_formal);
    if (c->depth >= ONNX_MAX_DEPTH) return onnx_unsupported(n, "subgraphs nest more than %d deep", ONNX_MAX_DEPTH);
    c->inlined += (int64_t)gp->n_node;
    if (c->inlined > ONNX_MAX_INLINED)
        return onnx_unsupported(n, "unrolling builds more than %d nodes in all, more than tessera unrolls",
                                ONNX_MAX_INLINED);
    onnx_scope s;
    const Onnx__NodeProto *np = c->origin_np;
    int index = c->origin_index;
    onnx_scope_push(c, &s, false);
    c->depth++;
    ts_status st = region_body(c, gp, n_formal, formal, results);
    c->depth--;
    onnx_scope_pop(c);
    if (np) onnx_set_origin(c, np, index);   /* failures after this name the node again */
    return st;
}

ts_status onnx_inline_subgraph(onnx_node *n, const char *attr, ts_value ***results)
{
    *results = NULL;
    const Onnx__GraphProto *gp = onnx_attr_graph(n, attr);
    if (!gp) return onnx_status(n);
    if (gp->n_input) return onnx_fail(n, TS_ERR_INVALID_MODEL, "subgraph '%s' must have no inputs", attr);
    return onnx_inline_body(n, gp, 0, NULL, results);
}

bool onnx_uses_composites(onnx_node *n, const char *attr)
{
    const Onnx__AttributeProto *a = onnx_node_attr(n, attr);
    if (!a || !a->g) return false;
    name_list l = {.seen = {.str = true}};
    bool any = false;
    if (collect(a->g, NULL, &l, n->ctx->depth)) {
        for (size_t i = 0; !any && i < l.n; i++) {
            bool found;
            any = onnx_comp_of(onnx_lookup(n->ctx, l.names[i], &found)) != NULL;
        }
    }
    name_list_free(&l);
    return any;
}

/* An attribute's graph inlined on in (FlexAttention's score_mod and
 * prob_mod): the body of onnx_inline_body, with the output count. */
ts_status onnx_inline_graph(onnx_node *n, const char *attr, int n_in, ts_value *const *in, int *n_out,
                            ts_value ***results)
{
    *results = NULL;
    *n_out = 0;
    const Onnx__GraphProto *gp = onnx_attr_graph(n, attr);
    if (!gp) return onnx_status(n);
    if (gp->n_output > INT_MAX) return onnx_fail(n, TS_ERR_INVALID_MODEL, "subgraph '%s' has too many outputs", attr);
    if (gp->n_input != (size_t)n_in)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "subgraph '%s' has %zu inputs; %d expected", attr, gp->n_input, n_in);
    TS_TRY(onnx_inline_body(n, gp, n_in, in, results));
    *n_out = (int)gp->n_output;
    return TS_OK;
}

/* ---- regions ------------------------------------------------------------------------------------ */

int onnx_region_outputs(onnx_node *n, const char *attr)
{
    const Onnx__AttributeProto *a = onnx_node_attr(n, attr);
    return a && a->g && a->g->n_output <= INT_MAX ? (int)a->g->n_output : -1;
}

static ts_value **add_params(ts_builder *rb, ts_arena *a, int n, const ts_type *types, ts_value *const *like)
{
    ts_value **p = ts_arena_array(a, (size_t)n + 1, sizeof *p);
    if (!p) {
        ts_builder_fail(rb, TS_ERR_OOM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        const ts_type *t = types ? &types[i] : &like[i]->type;
        p[i] = ts_b_input(rb, t->dtype, t->rank, t->dims);
        if (!p[i]) return NULL;
    }
    return p;
}

/* The leaves of results[0..n) (composites flattened), in an arena array. */
static ts_value **leaves_of(onnx_node *n, int count, ts_value *const *results, int *n_leaves)
{
    size_t total = 0;
    for (int i = 0; i < count; i++) total += (size_t)onnx_comp_leaves(results[i], NULL);
    ts_value **l = total <= INT_MAX ? ts_arena_array(onnx_graph(n)->arena, total + 1, sizeof *l) : NULL;
    if (!l) {
        onnx_fail(n, TS_ERR_OOM, "out of memory");
        return NULL;
    }
    int k = 0;
    for (int i = 0; i < count; i++) k += onnx_comp_leaves(results[i], l + k);
    *n_leaves = k;
    return l;
}

ts_status onnx_region(onnx_node *n, const char *attr, int n_formal, const ts_type *formal, int n_caps,
                      ts_value *const *caps, ts_block **out)
{
    ts_value **shape;
    return onnx_region_flat(n, attr, n_formal, formal, n_caps, caps, out, &shape);
}

ts_status onnx_region_flat(onnx_node *n, const char *attr, int n_formal, const ts_type *formal, int n_caps,
                           ts_value *const *caps, ts_block **out, ts_value ***shape)
{
    *out = NULL;
    *shape = NULL;
    const Onnx__GraphProto *gp = onnx_attr_graph(n, attr);
    if (!gp) return onnx_status(n);
    ts_graph *g = onnx_graph(n);
    ts_block *blk = NULL;
    ts_err err = {0};
    if (ts_ir_block_new(g, &blk, &err) != TS_OK) return onnx_fail(n, err.code, "%s", err.msg);
    ts_builder *rb = ts_builder_new(g, blk);
    if (!rb) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    ts_value **fv = add_params(rb, g->arena, n_formal, formal, NULL);
    ts_value **cv = fv ? add_params(rb, g->arena, n_caps, NULL, caps) : NULL;
    ts_value **results = NULL;
    ts_status s = ts_builder_status(rb, &err);
    if (s != TS_OK) s = onnx_fail(n, err.code, "%s", err.msg);
    if (s == TS_OK) s = onnx_emit_subgraph(n, gp, rb, n_formal, fv, n_caps, caps, cv, &results);
    int n_leaves = 0;
    ts_value **leaves = s == TS_OK ? leaves_of(n, (int)gp->n_output, results, &n_leaves) : NULL;
    if (!leaves && s == TS_OK) s = onnx_status(n);
    if (s == TS_OK && ts_b_return(rb, n_leaves, leaves) != TS_OK) {
        ts_builder_status(rb, &err);
        s = onnx_fail(n, err.code, "subgraph '%s': %s", attr, err.msg);
    }
    ts_builder_free(rb);
    if (s == TS_OK) *out = blk, *shape = results;
    return s;
}
