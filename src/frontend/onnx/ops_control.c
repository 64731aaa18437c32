/* ops_control.c — ONNX operators of the control family, assembled from
 * primitives: Constant, If, Loop, Scan. A Loop that carries a sequence or
 * an optional is unrolled instead (unroll.c, D17). */
#include "frontend/onnx/seq.h"

#include <string.h>

/* ---- Constant ---------------------------------------------------------------------------- */

static ts_status const_list(onnx_node *n, ts_dtype dt, int count, const void *src, bool scalar)
{
    ts_tensor *t = NULL;
    ts_err err = {0};
    int64_t len = count;
    if (ts_tensor_new(dt, scalar ? 0 : 1, &len, &t, &err) != TS_OK) return onnx_fail(n, err.code, "%s", err.msg);
    if (count) memcpy(t->data, src, t->nbytes);
    n->out[0] = ts_b_const(onnx_b(n), t);
    ts_tensor_release(t);
    return onnx_status(n);
}

static ts_status onnx_constant(onnx_node *n)
{
    static const char *const unsupported[] = {"sparse_value", "value_string", "value_strings"};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++)
        if (onnx_has_attr(n, unsupported[i]))
            return onnx_unsupported(n, "a constant given as '%s' is not supported (tessera has no %s tensors)",
                                    unsupported[i], i ? "string" : "sparse");
    if (onnx_has_attr(n, "value")) {
        ts_tensor *t = NULL;
        TS_TRY(onnx_attr_tensor(n, "value", &t));
        n->out[0] = ts_b_const(onnx_b(n), t);
        ts_tensor_release(t);
        return onnx_status(n);
    }
    if (onnx_has_attr(n, "value_float")) {
        float f = (float)onnx_attr_float(n, "value_float", 0);
        return onnx_status(n) != TS_OK ? onnx_status(n) : const_list(n, TS_DTYPE_F32, 1, &f, true);
    }
    if (onnx_has_attr(n, "value_int")) {
        int64_t i = onnx_attr_int(n, "value_int", 0);
        return onnx_status(n) != TS_OK ? onnx_status(n) : const_list(n, TS_DTYPE_I64, 1, &i, true);
    }
    if (onnx_has_attr(n, "value_floats")) {
        const float *v;
        int k = onnx_attr_floats(n, "value_floats", &v);
        return k < 0 ? onnx_status(n) : const_list(n, TS_DTYPE_F32, k, v, false);
    }
    if (onnx_has_attr(n, "value_ints")) {
        const int64_t *v;
        int k = onnx_attr_ints(n, "value_ints", &v);
        return k < 0 ? onnx_status(n) : const_list(n, TS_DTYPE_I64, k, v, false);
    }
    return onnx_fail(n, TS_ERR_INVALID_MODEL, "a Constant needs one of value, value_float(s), value_int(s)");
}

/* ---- helpers ------------------------------------------------------------------------------ */

/* x as a scalar: a one-element tensor reshaped to []; a failure otherwise. */
static ts_value *scalar_of(onnx_node *n, ts_builder *b, ts_value *x, const char *what)
{
    if (!x) return NULL;
    for (int i = 0; i < x->type.rank; i++)
        if (!ts_dim_is_const(x->type.dims[i]) || x->type.dims[i].c != 1) {
            onnx_fail(n, TS_ERR_INVALID_MODEL, "%s must hold one element", what);
            return NULL;
        }
    return x->type.rank ? ts_b_reshape(b, x, 0, NULL) : x;
}

static ts_status type_text_fail(onnx_node *n, ts_status code, const char *fmt, const ts_type *a, const ts_type *b,
                                int k)
{
    ts_buf ta = {0}, tb = {0};
    ts_type_print(&ta, a);
    ts_type_print(&tb, b);
    ts_status s = onnx_fail(n, code, fmt, k, ta.data ? ta.data : "?", tb.data ? tb.data : "?");
    ts_buf_free(&ta);
    ts_buf_free(&tb);
    return s;
}

/* A region's builder failed: report it on the node. */
static ts_status region_fail(onnx_node *n, ts_builder *rb)
{
    ts_err err = {0};
    ts_status s = ts_builder_status(rb, &err);
    return s == TS_OK ? onnx_status(n) : onnx_fail(n, s, "%s", err.msg);
}

/* The i64 vector [0, .., pos, .., 0] (pos at `axis`, rank entries): where
 * a dynamic slice starts. */
static ts_value *start_at(ts_builder *b, ts_value *pos, int rank, int axis)
{
    ts_value *parts[TS_MAX_RANK];
    ts_dim one = ts_dim_const(1);
    ts_value *zero = ts_b_reshape(b, onnx_i64_scalar(b, 0), 1, &one);
    for (int i = 0; i < rank; i++) parts[i] = i == axis ? ts_b_reshape(b, pos, 1, &one) : zero;
    return ts_b_concat(b, rank, parts, 0);
}

/* dims with d inserted at axis (rank r -> r+1). */
static void insert_dim(const ts_type *t, int axis, ts_dim d, ts_dim *out)
{
    for (int i = 0, k = 0; i <= t->rank; i++) out[i] = i == axis ? d : t->dims[k++];
}

/* buf with y written as slice `pos` of axis: dynamic_update_slice of y
 * reshaped to have a 1 there. */
static ts_value *write_slice(ts_builder *b, ts_value *buf, ts_value *y, ts_value *pos, int axis)
{
    ts_dim d[TS_MAX_RANK];
    if (!buf || !y) return NULL;
    insert_dim(&y->type, axis, ts_dim_const(1), d);
    ts_value *in[3] = {buf, ts_b_reshape(b, y, y->type.rank + 1, d), start_at(b, pos, y->type.rank + 1, axis)};
    return ts_b_node(b, TS_OP_DYNAMIC_UPDATE_SLICE, 3, in, NULL);
}

/* Slice `pos` of axis of x, with the axis removed. */
static ts_value *read_slice(ts_builder *b, ts_value *x, ts_value *pos, int axis)
{
    ts_graph *g = ts_builder_graph(b);
    ts_dim sz[TS_MAX_RANK], out[TS_MAX_RANK];
    int r = x->type.rank;
    for (int i = 0, k = 0; i < r; i++) {
        sz[i] = i == axis ? ts_dim_const(1) : x->type.dims[i];
        if (i != axis) out[k++] = x->type.dims[i];
    }
    ts_attr *a = ts_b_attrs(b, TS_OP_DYNAMIC_SLICE);
    if (a && ts_attr_set_dims(g, TS_OP_DYNAMIC_SLICE, a, "sizes", r, sz) != TS_OK) {
        ts_builder_fail(b, TS_ERR_OOM, "out of memory");
        return NULL;
    }
    ts_value *in[2] = {x, start_at(b, pos, r, axis)};
    return ts_b_reshape(b, ts_b_node(b, TS_OP_DYNAMIC_SLICE, 2, in, a), r - 1, out);
}

/* ---- If ------------------------------------------------------------------------------------- */

static const char *const if_branches[2] = {"then_branch", "else_branch"};

/* A constant condition: only the branch taken is built, inline (its shapes
 * then need not match the other's). */
static ts_status if_inline(onnx_node *n, bool taken)
{
    ts_value **res;
    TS_TRY(onnx_inline_subgraph(n, if_branches[taken ? 0 : 1], &res));
    if (onnx_region_outputs(n, if_branches[taken ? 0 : 1]) < n->n_out)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "the branch yields fewer values than the node's %d outputs", n->n_out);
    for (int k = 0; k < n->n_out; k++) n->out[k] = res[k];
    return TS_OK;
}

/* The branches' results (composites with their structure, shape[b][k])
 * must be alike: the same count, and each result of one form (seq.h). The
 * blocks return their leaves. */
static ts_status if_same_forms(onnx_node *n, ts_value **const shape[2])
{
    int n_res[2] = {onnx_region_outputs(n, if_branches[0]), onnx_region_outputs(n, if_branches[1])};
    if (n_res[0] != n_res[1] || n_res[0] < n->n_out)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "the branches yield %d and %d values for %d outputs", n_res[0],
                         n_res[1], n->n_out);
    ts_status s = TS_OK;
    for (int k = 0; k < n_res[0] && s == TS_OK; k++) {
        ts_buf f[2] = {{0}, {0}};
        for (int b = 0; b < 2; b++) onnx_comp_form(shape[b][k], &f[b]);
        if (f[0].oom || f[1].oom) s = onnx_fail(n, TS_ERR_OOM, "out of memory");
        else if (strcmp(f[0].data, f[1].data) != 0)
            s = onnx_unsupported(n, "output %d: the branches yield %s and %s (forms); with a condition known only at "
                                    "run time, tessera needs one structure for both", k, f[0].data, f[1].data);
        ts_buf_free(&f[0]);
        ts_buf_free(&f[1]);
    }
    return s;
}

static ts_status if_check_branches(onnx_node *n, const ts_block *th, const ts_block *el)
{
    if (th->n_results != el->n_results)
        return onnx_fail(n, TS_ERR_INTERNAL, "the branches return %d and %d tensors", th->n_results, el->n_results);
    for (int k = 0; k < th->n_results; k++) {
        const ts_type *a = &th->results[k]->type, *b = &el->results[k]->type;
        if (a->dtype != b->dtype)
            return type_text_fail(n, TS_ERR_INVALID_MODEL, "output %d: the branches yield %s and %s", a, b, k);
        if (!ts_type_eq(a, b))
            return type_text_fail(n, TS_ERR_UNSUPPORTED,
                                  "output %d: the branches yield %s and %s; tessera needs one type for both", a, b, k);
    }
    return TS_OK;
}

static ts_status onnx_if(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    ts_value *c = onnx_input(n, 0);
    if (onnx_comp_of(c)) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the condition must be a tensor");
    if (c && c->type.dtype != TS_DTYPE_BOOL)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "the condition must be bool, not %s", ts_dtype_name(c->type.dtype));
    c = scalar_of(n, b, c, "the condition");
    if (!c) return onnx_status(n);
    const ts_tensor *ct = onnx_const(n, c);
    if (ct) {   /* a known condition: the branch not taken never runs */
        onnx_attr_ignore(n, if_branches[0]);
        onnx_attr_ignore(n, if_branches[1]);
        return if_inline(n, *(const uint8_t *)ct->data != 0);
    }
    int n_caps;
    ts_value **caps, **shape[2];
    ts_block *regions[2];
    TS_TRY(onnx_captures(n, 2, if_branches, &n_caps, &caps));
    TS_TRY(onnx_region_flat(n, if_branches[0], 0, NULL, n_caps, caps, &regions[0], &shape[0]));
    TS_TRY(onnx_region_flat(n, if_branches[1], 0, NULL, n_caps, caps, &regions[1], &shape[1]));
    TS_TRY(if_same_forms(n, shape));
    TS_TRY(if_check_branches(n, regions[0], regions[1]));
    ts_value **in = ts_arena_array(onnx_graph(n)->arena, (size_t)n_caps + 1, sizeof *in);
    ts_value **out = ts_arena_array(onnx_graph(n)->arena, (size_t)regions[0]->n_results + 1, sizeof *out);
    if (!in || !out) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    in[0] = c;
    for (int i = 0; i < n_caps; i++) in[i + 1] = caps[i];
    int n_res;
    if (regions[0]->n_results)   /* (branches yielding only empty sequences need no if) */
        TS_TRY(ts_b_op(b, TS_OP_IF, n_caps + 1, in, NULL, 2, regions, regions[0]->n_results, out, &n_res));
    int pos = 0;   /* sequences and optionals take their structure from the then branch's */
    for (int k = 0; k < n->n_out; k++)
        if (!(n->out[k] = onnx_comp_rebuild(n->ctx, shape[0][k], out, &pos))) return onnx_status(n);
    return TS_OK;
}

/* A while body yields tensors only: a Loop carrying a sequence is unrolled
 * instead (unroll.c), so a sequence here is a value whose type changes. */
static ts_status body_tensors(onnx_node *n, int count, ts_value *const *res)
{
    for (int k = 0; k < count; k++)
        if (onnx_comp_of(res[k]))
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "the body's output %d is %s where a tensor is carried or scanned",
                             k, onnx_comp_what(res[k]));
    return TS_OK;
}

/* ---- loops as `while` ------------------------------------------------------------------------
 * Loop and Scan both become one while whose state is
 *     (counter i, limit, [Loop: cond], carried..., [Scan: scanned inputs...], captures..., buffers...)
 * cond: i < limit [&& cond]; body: the ONNX body, i + 1, and each scan
 * output written into its preallocated buffer with dynamic_update_slice. */

typedef struct wloop {
    onnx_node *n;
    ts_builder *rb;            /* the body region's builder */
    ts_block *body;
    int n_state;               /* state values before the buffers */
    ts_type *types;            /* state types (all, buffers included) */
    ts_value **init;           /* initial state */
    ts_value **params;         /* the body's parameters */
    ts_value **next;           /* what the body yields */
    int n_total, cap;
} wloop;

static bool wl_add(wloop *w, ts_value *init, const ts_type *t)
{
    if (w->n_total == w->cap) {
        ts_arena *a = onnx_graph(w->n)->arena;
        int cap = w->cap ? w->cap * 2 : 16;
        ts_type *ty = ts_arena_array(a, (size_t)cap, sizeof *ty);
        ts_value **in = ts_arena_array(a, (size_t)cap, sizeof *in), **p = ts_arena_array(a, (size_t)cap, sizeof *p),
                 **nx = ts_arena_array(a, (size_t)cap, sizeof *nx);
        if (!ty || !in || !p || !nx) return false;
        if (w->n_total) {
            memcpy(ty, w->types, sizeof *ty * (size_t)w->n_total);
            memcpy(in, w->init, sizeof *in * (size_t)w->n_total);
            memcpy(p, w->params, sizeof *p * (size_t)w->n_total);
            memcpy(nx, w->next, sizeof *nx * (size_t)w->n_total);
        }
        w->types = ty, w->init = in, w->params = p, w->next = nx, w->cap = cap;
    }
    w->types[w->n_total] = t ? *t : init->type;
    w->init[w->n_total] = init;
    w->params[w->n_total] = ts_b_input(w->rb, w->types[w->n_total].dtype, w->types[w->n_total].rank,
                                       w->types[w->n_total].dims);
    w->next[w->n_total] = w->params[w->n_total];   /* unchanged unless set */
    w->n_total++;
    return w->params[w->n_total - 1] != NULL;
}

static ts_status wl_begin(wloop *w, onnx_node *n)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    ts_err err = {0};
    if (ts_ir_block_new(onnx_graph(n), &w->body, &err) != TS_OK) return onnx_fail(n, err.code, "%s", err.msg);
    w->rb = ts_builder_new(onnx_graph(n), w->body);
    return w->rb ? TS_OK : onnx_fail(n, TS_ERR_OOM, "out of memory");
}

/* Append state entries for init values (types from the values). */
static ts_status wl_add_all(wloop *w, int k, ts_value *const *vals)
{
    for (int i = 0; i < k; i++)
        if (!wl_add(w, vals[i], NULL)) return ts_builder_status(w->rb, NULL) ? region_fail(w->n, w->rb)
                                                                             : onnx_fail(w->n, TS_ERR_OOM, "out of memory");
    return TS_OK;
}

/* A scan output: a zero buffer of type t (made outside) as a new state
 * entry, written at pos along axis with y each iteration. */
static ts_status wl_buffer(wloop *w, ts_value *y, ts_dim len, int axis, ts_value *pos)
{
    ts_dim d[TS_MAX_RANK];
    if (y->type.rank + 1 > TS_MAX_RANK) return onnx_unsupported(w->n, "a scan output of rank %d is too deep", y->type.rank);
    insert_dim(&y->type, axis, len, d);
    ts_value *zero = ts_b_full(onnx_b(w->n), y->type.dtype, 0, y->type.rank + 1, d);
    if (!zero) return onnx_status(w->n);
    int k = w->n_total;
    TS_TRY(wl_add_all(w, 1, &zero));
    w->next[k] = write_slice(w->rb, w->params[k], y, pos, axis);
    return TS_OK;
}

/* The cond region: counter < limit, and'ed with the cond entry if any. */
static ts_status wl_cond(wloop *w, int cond_index, ts_block **out)
{
    ts_graph *g = onnx_graph(w->n);
    ts_block *blk = NULL;
    ts_err err = {0};
    if (ts_ir_block_new(g, &blk, &err) != TS_OK) return onnx_fail(w->n, err.code, "%s", err.msg);
    ts_builder *cb = ts_builder_new(g, blk);
    if (!cb) return onnx_fail(w->n, TS_ERR_OOM, "out of memory");
    ts_value *p[3] = {NULL, NULL, NULL};
    for (int i = 0; i < w->n_total; i++) {
        ts_value *v = ts_b_input(cb, w->types[i].dtype, w->types[i].rank, w->types[i].dims);
        if (i < 3) p[i] = v;
    }
    ts_value *go = ts_b_binary(cb, TS_OP_LT, p[0], p[1]);
    if (cond_index >= 0) go = ts_b_binary(cb, TS_OP_AND, go, p[cond_index]);
    ts_b_return(cb, 1, &go);
    ts_status s = region_fail(w->n, cb);
    ts_builder_free(cb);
    *out = blk;
    return s;
}

/* Build the while; *res receives its results (arena array). */
static ts_status wl_finish(wloop *w, int cond_index, ts_value ***res)
{
    ts_block *regions[2] = {NULL, w->body};
    ts_b_return(w->rb, w->n_total, w->next);
    ts_status s = region_fail(w->n, w->rb);
    ts_builder_free(w->rb);
    w->rb = NULL;
    TS_TRY(s);
    TS_TRY(wl_cond(w, cond_index, &regions[0]));
    ts_value **out = ts_arena_array(onnx_graph(w->n)->arena, (size_t)w->n_total + 1, sizeof *out);
    if (!out) return onnx_fail(w->n, TS_ERR_OOM, "out of memory");
    int n_out;
    TS_TRY(ts_b_op(onnx_b(w->n), TS_OP_WHILE, w->n_total, w->init, NULL, 2, regions, w->n_total, out, &n_out));
    *res = out;
    return TS_OK;
}

static void wl_abort(wloop *w)
{
    ts_builder_free(w->rb);
    w->rb = NULL;
}

/* The body's new value for a carried entry must keep its type. */
static ts_status wl_carry(wloop *w, int k, ts_value *v, int index)
{
    if (!v) return region_fail(w->n, w->rb);
    if (!ts_type_eq(&v->type, &w->types[k]))
        return type_text_fail(w->n, TS_ERR_UNSUPPORTED,
                              "loop-carried value %d changes type from %s to %s; tessera needs it to keep one type",
                              &w->types[k], &v->type, index);
    w->next[k] = v;
    return TS_OK;
}

/* ---- Loop ------------------------------------------------------------------------------------- */

/* May the loop stop before its trip count? Not when the body's condition
 * is the constant true, or passes on a condition that starts true. */
static bool runs_full(onnx_node *n, ts_value *cond0, ts_value *p_cond, ts_value *cond_out)
{
    const ts_tensor *t = onnx_const(n, cond_out);
    if (t) return *(const uint8_t *)t->data != 0;
    t = cond_out == p_cond ? onnx_const(n, cond0) : NULL;
    return t && *(const uint8_t *)t->data != 0;
}

static ts_status loop_scan_outputs(onnx_node *n, wloop *w, ts_value *const *res, int n_carried, int n_scan,
                                   ts_value *limit, ts_value *cond0)
{
    if (!n_scan) return TS_OK;
    const ts_tensor *mt = onnx_const(n, limit);
    int64_t m = mt ? ts_elem_get_i64(mt->dtype, mt->data, 0) : -1;
    if (m < 0 || m == INT64_MAX)
        return onnx_unsupported(n, "scan outputs need a constant trip count M");
    if (!runs_full(n, cond0, w->params[2], w->next[2]))
        return onnx_unsupported(n, "scan outputs of a Loop that may stop before its trip count are not supported");
    for (int k = 0; k < n_scan; k++)
        TS_TRY(wl_buffer(w, res[1 + n_carried + k], ts_dim_const(m), 0, w->params[0]));
    return TS_OK;
}

/* The Loop's state before the buffers: (i, M, cond, carried..., captures...). */
static ts_status loop_state(onnx_node *n, wloop *w, ts_value **limit, ts_value **cond0, int n_carried, int n_caps,
                            ts_value **caps)
{
    ts_builder *b = onnx_b(n);
    *limit = onnx_has_input(n, 0) ? scalar_of(n, b, n->in[0], "the trip count M") : onnx_i64_scalar(b, INT64_MAX);
    if (*limit && (*limit)->type.dtype != TS_DTYPE_I64) *limit = ts_b_cast(b, *limit, TS_DTYPE_I64);
    *cond0 = onnx_has_input(n, 1) ? scalar_of(n, b, n->in[1], "the condition") : NULL;
    if (!onnx_has_input(n, 1)) *cond0 = ts_b_cast(b, onnx_i64_scalar(b, 1), TS_DTYPE_BOOL);
    if (*cond0 && (*cond0)->type.dtype != TS_DTYPE_BOOL)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "the condition must be bool");
    ts_value *head[3] = {onnx_i64_scalar(b, 0), *limit, *cond0};
    if (!head[0] || !head[1] || !head[2]) return onnx_status(n);
    TS_TRY(wl_add_all(w, 3, head));
    TS_TRY(wl_add_all(w, n_carried, n->in + 2));
    return wl_add_all(w, n_caps, caps);
}

static ts_status loop_body(onnx_node *n, wloop *w, int n_carried, int n_caps, ts_value **caps)
{
    const Onnx__GraphProto *gp = onnx_attr_graph(n, "body");
    if (!gp) return onnx_status(n);
    int n_scan = (int)gp->n_output - 1 - n_carried;
    if (gp->n_output > INT_MAX || n_scan < 0 || n->n_out > n_carried + n_scan)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "the body has %zu outputs for %d carried values and %d outputs",
                         gp->n_output, n_carried, n->n_out);
    ts_value *limit, *cond0, **res;
    TS_TRY(loop_state(n, w, &limit, &cond0, n_carried, n_caps, caps));
    /* the body's formals are (i, cond, carried...): the state without M */
    ts_value **f = ts_arena_array(onnx_graph(n)->arena, (size_t)n_carried + 2, sizeof *f);
    if (!f) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    f[0] = w->params[0];
    f[1] = w->params[2];
    for (int k = 0; k < n_carried; k++) f[2 + k] = w->params[3 + k];
    TS_TRY(onnx_emit_subgraph(n, gp, w->rb, 2 + n_carried, f, n_caps, caps, w->params + 3 + n_carried, &res));
    TS_TRY(body_tensors(n, (int)gp->n_output, res));
    ts_value *c = res[0]->type.dtype == TS_DTYPE_BOOL ? scalar_of(n, w->rb, res[0], "the body's condition") : NULL;
    if (!c) return onnx_status(n) ? onnx_status(n) : onnx_fail(n, TS_ERR_INVALID_MODEL, "the body's condition must be bool");
    w->next[2] = c;
    for (int k = 0; k < n_carried; k++) TS_TRY(wl_carry(w, 3 + k, res[1 + k], k));
    w->next[0] = ts_b_binary(w->rb, TS_OP_ADD, w->params[0], onnx_i64_scalar(w->rb, 1));
    w->n_state = w->n_total;
    TS_TRY(loop_scan_outputs(n, w, res, n_carried, n_scan, limit, cond0));
    ts_value **out = NULL;
    TS_TRY(wl_finish(w, 2, &out));
    for (int k = 0; k < n->n_out; k++)
        n->out[k] = k < n_carried ? out[3 + k] : out[w->n_state + (k - n_carried)];
    return TS_OK;
}

static ts_status onnx_loop(onnx_node *n)
{
    static const char *const body_attr[1] = {"body"};
    int n_carried = n->n_in - 2;
    bool composites = onnx_uses_composites(n, "body");
    if (n_carried < 0) return onnx_fail(n, TS_ERR_INVALID_MODEL, "Loop takes M and cond (each may be \"\")");
    if (onnx_comp_of(n->in[0]) || onnx_comp_of(n->in[1]))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "the trip count and the condition must be tensors");
    for (int k = 0; k < n_carried; k++) {
        if (!onnx_input(n, 2 + k)) return onnx_status(n);
        composites = composites || onnx_comp_of(n->in[2 + k]);
    }
    if (composites) return onnx_loop_unrolled(n);
    int n_caps;
    ts_value **caps;
    TS_TRY(onnx_captures(n, 1, body_attr, &n_caps, &caps));
    wloop w;
    TS_TRY(wl_begin(&w, n));
    ts_status s = loop_body(n, &w, n_carried, n_caps, caps);
    wl_abort(&w);
    return s;
}

/* ---- Scan (opset 9+) ------------------------------------------------------------------------- */

typedef struct scan_spec {
    int n_state, n_in, n_out;          /* carried states, scan inputs, scan outputs */
    const int64_t *in_axes, *in_dirs, *out_axes, *out_dirs;
    int n_in_axes, n_in_dirs, n_out_axes, n_out_dirs;
    ts_dim len;                        /* the sequence length */
} scan_spec;

static int64_t list_at(const int64_t *v, int n, int i) { return v && i < n ? v[i] : 0; }

static ts_status scan_spec_read(onnx_node *n, const Onnx__GraphProto *gp, scan_spec *sp)
{
    int64_t m = onnx_attr_int(n, "num_scan_inputs", -1);
    if (m < 1 || m > n->n_in) return onnx_fail(n, TS_ERR_INVALID_MODEL, "num_scan_inputs must be in 1..%d", n->n_in);
    sp->n_in = (int)m;
    sp->n_state = n->n_in - sp->n_in;
    sp->n_out = (int)gp->n_output - sp->n_state;
    if (gp->n_output > INT_MAX || sp->n_out < 0 || n->n_out > sp->n_state + sp->n_out)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "the body's outputs do not match the node's");
    sp->n_in_axes = onnx_attr_ints(n, "scan_input_axes", &sp->in_axes);
    sp->n_in_dirs = onnx_attr_ints(n, n->opset < 9 ? "directions" : "scan_input_directions", &sp->in_dirs);
    sp->n_out_axes = onnx_attr_ints(n, "scan_output_axes", &sp->out_axes);
    sp->n_out_dirs = onnx_attr_ints(n, "scan_output_directions", &sp->out_dirs);
    for (int k = 0; k < sp->n_state + sp->n_in; k++)
        if (!onnx_input(n, k)) return onnx_status(n);
    return onnx_status(n);
}

/* The scanned axis of input k (normalised), checking that every scan
 * input has the same length along it. */
static ts_status scan_in_axis(onnx_node *n, scan_spec *sp, int k, int64_t *axis)
{
    ts_value *x = n->in[sp->n_state + k];
    TS_TRY(onnx_axis(n, list_at(sp->in_axes, sp->n_in_axes, k), x->type.rank, axis));
    ts_dim d = x->type.dims[*axis];
    if (k == 0) sp->len = d;
    else if (!ts_dim_eq(d, sp->len))
        return onnx_fail(n, TS_ERR_SHAPE, "scan input %d has a different sequence length", k);
    return TS_OK;
}

/* Where step t reads or writes: t, or len-1-t in reverse. */
static ts_value *scan_pos(ts_builder *b, ts_value *t, ts_value *len, int64_t reverse)
{
    if (!reverse) return t;
    return ts_b_binary(b, TS_OP_SUB, ts_b_binary(b, TS_OP_SUB, len, onnx_i64_scalar(b, 1)), t);
}

static ts_status scan_outputs(onnx_node *n, wloop *w, const scan_spec *sp, ts_value *const *res)
{
    for (int k = 0; k < sp->n_out; k++) {
        ts_value *y = res[sp->n_state + k];
        int64_t axis;
        TS_TRY(onnx_axis(n, list_at(sp->out_axes, sp->n_out_axes, k), y->type.rank + 1, &axis));
        ts_value *pos = scan_pos(w->rb, w->params[0], w->params[1], list_at(sp->out_dirs, sp->n_out_dirs, k));
        TS_TRY(wl_buffer(w, y, sp->len, (int)axis, pos));
    }
    return TS_OK;
}

static ts_status scan_body(onnx_node *n, wloop *w, const Onnx__GraphProto *gp, scan_spec *sp, int n_caps,
                           ts_value **caps)
{
    ts_arena *a = onnx_graph(n)->arena;
    int64_t *axes = ts_arena_array(a, (size_t)sp->n_in + 1, sizeof *axes);
    ts_value **f = ts_arena_array(a, (size_t)(sp->n_state + sp->n_in) + 1, sizeof *f), **res;
    if (!axes || !f) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    for (int k = 0; k < sp->n_in; k++) TS_TRY(scan_in_axis(n, sp, k, &axes[k]));
    ts_value *head[2] = {onnx_i64_scalar(onnx_b(n), 0), onnx_dim_scalar(n, sp->len)};
    if (!head[0] || !head[1]) return onnx_status(n);
    TS_TRY(wl_add_all(w, 2, head));
    TS_TRY(wl_add_all(w, sp->n_state + sp->n_in, n->in));
    TS_TRY(wl_add_all(w, n_caps, caps));
    for (int k = 0; k < sp->n_state; k++) f[k] = w->params[2 + k];
    for (int k = 0; k < sp->n_in; k++) {
        ts_value *pos = scan_pos(w->rb, w->params[0], w->params[1], list_at(sp->in_dirs, sp->n_in_dirs, k));
        f[sp->n_state + k] = read_slice(w->rb, w->params[2 + sp->n_state + k], pos, (int)axes[k]);
        if (!f[sp->n_state + k]) return region_fail(n, w->rb);
    }
    TS_TRY(onnx_emit_subgraph(n, gp, w->rb, sp->n_state + sp->n_in, f, n_caps, caps,
                              w->params + 2 + sp->n_state + sp->n_in, &res));
    TS_TRY(body_tensors(n, (int)gp->n_output, res));
    for (int k = 0; k < sp->n_state; k++) TS_TRY(wl_carry(w, 2 + k, res[k], k));
    w->next[0] = ts_b_binary(w->rb, TS_OP_ADD, w->params[0], onnx_i64_scalar(w->rb, 1));
    w->n_state = w->n_total;
    TS_TRY(scan_outputs(n, w, sp, res));
    ts_value **out = NULL;
    TS_TRY(wl_finish(w, -1, &out));
    for (int k = 0; k < n->n_out; k++)
        n->out[k] = k < sp->n_state ? out[2 + k] : out[w->n_state + (k - sp->n_state)];
    return TS_OK;
}

/* Scan, opset 9 and later (and each batch entry of Scan-8). */
static ts_status onnx_scan(onnx_node *n)
{
    static const char *const body_attr[1] = {"body"};
    const Onnx__GraphProto *gp = onnx_attr_graph(n, "body");
    scan_spec sp = {0};
    if (!gp) return onnx_status(n);
    TS_TRY(scan_spec_read(n, gp, &sp));
    int n_caps;
    ts_value **caps;
    TS_TRY(onnx_captures(n, 1, body_attr, &n_caps, &caps));
    wloop w;
    TS_TRY(wl_begin(&w, n));
    ts_status s = scan_body(n, &w, gp, &sp, n_caps, caps);
    wl_abort(&w);
    return s;
}

/* ---- Scan-8 -------------------------------------------------------------------------------
 * Batched: input 0 is sequence_lens (may be omitted), then the states
 * [B, ...] and the scan inputs [B, T, ...]; the outputs carry the batch
 * axis too. Each batch entry is one Scan-9 over its slices (time on axis 0,
 * where Scan-9's defaults put it), and the results are stacked on axis 0.
 * B must be known at build time; sequence_lens, when given, must be known
 * and equal T for every entry (shorter sequences are not supported). */

/* x[b] (axis 0 dropped). */
static ts_value *batch_entry(ts_builder *b, ts_value *x, int64_t i)
{
    ts_dim start[TS_MAX_RANK], limit[TS_MAX_RANK];
    int r = x->type.rank;
    for (int d = 0; d < r; d++) start[d] = ts_dim_const(0), limit[d] = x->type.dims[d];
    start[0] = ts_dim_const(i);
    limit[0] = ts_dim_const(i + 1);
    return ts_b_reshape(b, ts_b_slice(b, x, start, limit, NULL), r - 1, x->type.dims + 1);
}

static ts_status scan8_check(onnx_node *n, int64_t *batch)
{
    if (n->n_in < 2) return onnx_fail(n, TS_ERR_INVALID_MODEL, "Scan-8 takes sequence_lens and at least one input");
    for (int k = 1; k < n->n_in; k++) {
        ts_value *x = onnx_input(n, k);
        if (!x) return onnx_status(n);
        if (x->type.rank < 1 || !ts_dim_is_const(x->type.dims[0]))
            return onnx_unsupported(n, "input %d: Scan-8's batch axis must have a size known at build time", k);
        if (k == 1) *batch = x->type.dims[0].c;
        else if (x->type.dims[0].c != *batch)
            return onnx_fail(n, TS_ERR_SHAPE, "input %d has a batch of %lld, input 1 of %lld", k,
                             (long long)x->type.dims[0].c, (long long)*batch);
    }
    if (*batch < 1) return onnx_unsupported(n, "Scan-8 with an empty batch is not supported");
    if (*batch > ONNX_MAX_SEQ)
        return onnx_unsupported(n, "a batch of %lld is more than tessera unrolls", (long long)*batch);
    if (!onnx_has_input(n, 0)) return TS_OK;
    ts_value *last = n->in[n->n_in - 1];   /* a scan input: [B, T, ...] */
    const int64_t *lens;
    int count;
    TS_TRY(onnx_const_ints(n, 0, &lens, &count));
    for (int i = 0; i < count; i++)
        if (last->type.rank < 2 || !ts_dim_is_const(last->type.dims[1]) || lens[i] != last->type.dims[1].c)
            return onnx_unsupported(n, "sequence_lens[%d] differs from the sequence length: Scan-8 with shorter "
                                       "sequences is not supported", i);
    return TS_OK;
}

static ts_status onnx_scan8(onnx_node *n)
{
    int64_t batch = 0;
    TS_TRY(scan8_check(n, &batch));
    ts_arena *a = onnx_graph(n)->arena;
    ts_value **stack = ts_arena_array(a, (size_t)(batch * n->n_out) + 1, sizeof *stack);
    onnx_node nb = *n;
    nb.n_in = n->n_in - 1;
    nb.in = ts_arena_array(a, (size_t)nb.n_in + 1, sizeof *nb.in);
    if (!stack || !nb.in) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    for (int64_t i = 0; i < batch; i++) {
        for (int k = 0; k < nb.n_in; k++) nb.in[k] = batch_entry(onnx_b(n), n->in[k + 1], i);
        nb.out = stack + i * n->n_out;
        TS_TRY(onnx_status(n));
        TS_TRY(onnx_scan(&nb));
        n->attrs_asked |= nb.attrs_asked;   /* the body's reads count for the node */
    }
    ts_value **parts = ts_arena_array(a, (size_t)batch + 1, sizeof *parts);
    if (!parts) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    for (int k = 0; k < n->n_out; k++) {
        for (int64_t i = 0; i < batch; i++) {
            ts_value *y = stack[i * n->n_out + k];
            ts_dim d[TS_MAX_RANK];
            if (!y || y->type.rank + 1 > TS_MAX_RANK) return onnx_unsupported(n, "output %d is too deep", k);
            d[0] = ts_dim_const(1);
            if (y->type.rank) memcpy(d + 1, y->type.dims, sizeof *d * (size_t)y->type.rank);
            parts[i] = ts_b_reshape(onnx_b(n), y, y->type.rank + 1, d);
        }
        n->out[k] = batch == 1 ? parts[0] : ts_b_concat(onnx_b(n), (int)batch, parts, 0);
    }
    return onnx_status(n);
}

const onnx_op_entry onnx_ops_control[] = {
    {"Constant", 1, INT_MAX, onnx_constant},
    {"If", 1, INT_MAX, onnx_if},
    {"Loop", 1, INT_MAX, onnx_loop},
    {"Scan", 8, 8, onnx_scan8},
    {"Scan", 9, INT_MAX, onnx_scan},
    {NULL, 0, 0, NULL},
};
