/* values.c — what decomposition functions ask of values: their constant
 * content (known inputs included), integer and float vectors, axes, input
 * types from TypeProto, and the shape-value side table (symbolic content of
 * small int64 vectors). */
#include "frontend/onnx/load.h"

#include <stdio.h>
#include <string.h>

/* ---- input types -------------------------------------------------------------------- */

/* A dim_param as a C identifier: other characters become '_', a leading
 * digit gets a '_' in front. */
static char *sym_name(ts_arena *a, const char *p)
{
    size_t n = strlen(p);
    char *s = ts_arena_alloc(a, n + 2);
    if (!s) return NULL;
    size_t k = 0;
    if (n == 0 || (p[0] >= '0' && p[0] <= '9')) s[k++] = '_';
    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
        s[k++] = ok ? ch : '_';
    }
    s[k] = 0;
    return s;
}

static ts_status dim_from_proto(onnx_ctx *c, const Onnx__TensorShapeProto__Dimension *d, const char *what,
                                ts_dim *out, ts_err *err)
{
    if (d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
        if (d->dim_value < 0)
            return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: negative dimension %lld", what, (long long)d->dim_value);
        *out = ts_dim_const(d->dim_value);
        return TS_OK;
    }
    if (d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param &&
        d->dim_param[0]) {
        char *name = sym_name(c->g->arena, d->dim_param);
        if (!name) return ts_err_set(err, TS_ERR_OOM, "out of memory");
        return ts_dim_sym(c->g->syms, name, out, err);
    }
    return ts_dim_fresh(c->g->syms, "unk", out, err);
}

static const char *kind_name(const Onnx__TypeProto *tp)
{
    switch (tp ? tp->value_case : 0) {
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return "a sequence";
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: return "a map";
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return "an optional";
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: return "a sparse tensor";
    default: return "of no known type";
    }
}

ts_status onnx_type_from_proto(onnx_ctx *c, const Onnx__TypeProto *tp, const char *what, ts_type *out,
                               ts_err *err)
{
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return ts_err_set(err, tp && tp->value_case ? TS_ERR_UNSUPPORTED : TS_ERR_INVALID_MODEL,
                          "%s is %s; tessera supports tensors only", what, kind_name(tp));
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    ts_status s = onnx_dtype(tt->has_elem_type ? tt->elem_type : 0, &out->dtype, err);
    if (s != TS_OK) {
        ts_err_prefix(err, "%s: ", what);
        return s;
    }
    if (!tt->shape)
        return ts_err_set(err, TS_ERR_UNSUPPORTED, "%s has no declared shape (not even a rank); tessera needs the rank",
                          what);
    if (tt->shape->n_dim > TS_MAX_RANK)
        return ts_err_set(err, TS_ERR_UNSUPPORTED, "%s: rank %zu is more than tessera's %d", what, tt->shape->n_dim,
                          TS_MAX_RANK);
    out->rank = (int)tt->shape->n_dim;
    out->dims = ts_arena_array(c->g->arena, (size_t)out->rank + 1, sizeof(ts_dim));
    if (!out->dims) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (int i = 0; i < out->rank; i++) TS_TRY(dim_from_proto(c, tt->shape->dim[i], what, &out->dims[i], err));
    return TS_OK;
}

/* ---- constants ----------------------------------------------------------------------- */

/* ---- constants through known inputs ----------------------------------------------------
 * A value computed from known inputs (and constants) is a constant too:
 * its producers are rebuilt on the known values, and the builder folds
 * them. Bounded: small values, small cones; the first producer that does
 * not fold ends the attempt. The known inputs reached are pinned only when
 * it succeeds. */

#define FOLD_MAX_NODES 256
#define FOLD_MAX_NUMEL 65536

typedef struct refold {
    onnx_node *n;
    onnx_map memo;            /* value -> its constant */
    onnx_known *used[FOLD_MAX_NODES];
    int n_used, budget;
} refold;

static bool small(const ts_value *v)
{
    int64_t numel = 1;
    for (int i = 0; i < v->type.rank; i++)
        if (!ts_dim_is_const(v->type.dims[i]) || !ts_i64_mul(numel, v->type.dims[i].c, &numel)) return false;
    return numel <= FOLD_MAX_NUMEL;
}

static ts_value *refold_value(refold *r, ts_value *v);

static ts_value *refold_node(refold *r, ts_value *v)
{
    ts_node *d = v->def;
    ts_builder *b = onnx_b(r->n);
    if (d->n_regions || d->n_in > 64 || (ts_op_get(d->op)->flags & (TS_OPF_SIDE | TS_OPF_FRESH | TS_OPF_CONTROL)) ||
        d->block != ts_builder_block(b) || --r->budget < 0)
        return NULL;
    ts_value *in[64];
    for (int i = 0; i < d->n_in; i++)
        if (!(in[i] = refold_value(r, d->in[i]))) return NULL;
    ts_attr *a = ts_b_attrs(b, d->op);
    int na = ts_op_get(d->op)->n_attrs;
    if (!a) return NULL;
    if (na) memcpy(a, d->attrs, sizeof *a * (size_t)na);   /* payloads are immutable arena data */
    ts_value *out[8];
    int n_out = 0;
    if (d->n_out > 8 || ts_b_op(b, d->op, d->n_in, in, a, 0, NULL, 8, out, &n_out) != TS_OK || v->index >= n_out)
        return NULL;
    ts_value *c = out[v->index];
    return c && c->def && c->def->op == TS_OP_CONST ? c : NULL;
}

static ts_value *refold_value(refold *r, ts_value *v)
{
    if (v->def && v->def->op == TS_OP_CONST) return v;
    ts_value *m = onnx_map_get(&r->memo, v);
    if (m || !small(v)) return m;
    ts_value *c = NULL;
    onnx_known *k = v->def ? NULL : onnx_map_get(&r->n->ctx->known, v);
    if (k && r->n_used < FOLD_MAX_NODES) {
        r->used[r->n_used++] = k;
        c = ts_b_const(onnx_b(r->n), k->value);
    } else if (v->def) {
        c = refold_node(r, v);
    }
    if (c && !onnx_map_put(&r->memo, v, c)) c = NULL;
    return c;
}

/* v as a constant computed from known inputs, or NULL. */
static const ts_tensor *const_via_known(onnx_node *n, ts_value *v)
{
    onnx_ctx *c = n->ctx;
    if (!c->known.count || !small(v)) return NULL;
    refold r = {.n = n, .budget = FOLD_MAX_NODES};
    ts_value *k = refold_value(&r, v);
    onnx_map_free(&r.memo);
    if (!k || onnx_status(n) != TS_OK) return NULL;
    ts_err err = {0};
    for (int i = 0; i < r.n_used; i++)
        if (ts_ir_pin_input(c->g, r.used[i]->input, r.used[i]->value, &err) != TS_OK) {
            ts_builder_fail(onnx_b(n), err.code, "%s", err.msg);
            return NULL;
        }
    return ts_node_tensor(k->def, "value");
}

const ts_tensor *onnx_const(onnx_node *n, ts_value *v)
{
    if (!v) return NULL;
    if (v->def && v->def->op == TS_OP_CONST) return ts_node_tensor(v->def, "value");
    onnx_known *k = onnx_map_get(&n->ctx->known, v);
    if (!k) return const_via_known(n, v);
    ts_err err = {0};
    if (ts_ir_pin_input(n->ctx->g, k->input, k->value, &err) != TS_OK) {
        ts_builder_fail(onnx_b(n), err.code, "%s", err.msg);
        return NULL;
    }
    return k->value;
}

/* Input i's name for messages: "1 (shape_name)". */
static const char *input_label(onnx_node *n, int i, char *buf, size_t cap)
{
    const Onnx__NodeProto *np = n->proto;
    const char *nm = np && (size_t)i < np->n_input && np->input[i] ? np->input[i] : "";
    snprintf(buf, cap, "%d (%.200s)", i, nm);
    return buf;
}

/* Input i's constant with a numeric check; a failure names the input. */
static const ts_tensor *const_input(onnx_node *n, int i, bool ints, int *count)
{
    char lab[240];
    ts_value *v = onnx_input(n, i);
    if (!v) return NULL;
    const ts_tensor *t = onnx_const(n, v);
    if (!t) {
        if (onnx_status(n) == TS_OK)
            onnx_unsupported(n, "input %s must be a constant: tessera needs it to know the result's shape",
                             input_label(n, i, lab, sizeof lab));
        return NULL;
    }
    if (ints && !ts_dtype_is_int(t->dtype) && t->dtype != TS_DTYPE_BOOL) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "input %s must hold integers, not %s", input_label(n, i, lab, sizeof lab),
                  ts_dtype_name(t->dtype));
        return NULL;
    }
    if (t->numel > INT_MAX) {
        onnx_fail(n, TS_ERR_UNSUPPORTED, "input %s has too many elements", input_label(n, i, lab, sizeof lab));
        return NULL;
    }
    *count = (int)t->numel;
    return t;
}

ts_status onnx_const_ints(onnx_node *n, int i, const int64_t **v, int *count)
{
    *v = NULL;
    *count = 0;
    int k;
    const ts_tensor *t = const_input(n, i, true, &k);
    if (!t) return onnx_status(n);
    int64_t *a = ts_arena_array(onnx_graph(n)->arena, (size_t)k + 1, sizeof *a);
    if (!a) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    for (int j = 0; j < k; j++) a[j] = ts_elem_get_i64(t->dtype, t->data, j);
    *v = a;
    *count = k;
    return TS_OK;
}

ts_status onnx_const_floats(onnx_node *n, int i, const double **v, int *count)
{
    *v = NULL;
    *count = 0;
    int k;
    const ts_tensor *t = const_input(n, i, false, &k);
    if (!t) return onnx_status(n);
    double *a = ts_arena_array(onnx_graph(n)->arena, (size_t)k + 1, sizeof *a);
    if (!a) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    for (int j = 0; j < k; j++) a[j] = ts_elem_get_f64(t->dtype, t->data, j);
    *v = a;
    *count = k;
    return TS_OK;
}

ts_status onnx_axis(onnx_node *n, int64_t axis, int r, int64_t *out)
{
    if (axis < -(int64_t)r || axis >= (int64_t)r) {
        *out = 0;
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "axis %lld is out of range for rank %d", (long long)axis, r);
    }
    *out = axis < 0 ? axis + r : axis;
    return TS_OK;
}

ts_value *onnx_i64_scalar(ts_builder *b, int64_t v)
{
    ts_tensor *t = NULL;
    ts_err err = {0};
    if (ts_builder_status(b, NULL) != TS_OK) return NULL;
    if (ts_tensor_new(TS_DTYPE_I64, 0, NULL, &t, &err) != TS_OK) {
        ts_builder_fail(b, err.code, "%s", err.msg);
        return NULL;
    }
    *(int64_t *)t->data = v;
    ts_value *r = ts_b_const(b, t);
    ts_tensor_release(t);
    return r;
}

/* ---- shape values --------------------------------------------------------------------- */

void onnx_set_dims_value(onnx_node *n, ts_value *v, int count, const ts_dim *dims)
{
    if (!v || count < 0 || (count && !dims)) return;
    ts_arena *a = onnx_graph(n)->arena;
    onnx_dims *d = ts_arena_alloc(a, sizeof *d);
    ts_dim *copy = ts_arena_array(a, (size_t)count + 1, sizeof *copy);
    if (!d || !copy || !onnx_map_put(&n->ctx->dims, v, d)) {
        onnx_fail(n, TS_ERR_OOM, "out of memory");
        return;
    }
    if (count) memcpy(copy, dims, sizeof *copy * (size_t)count);
    d->count = count;
    d->dims = copy;
}

bool onnx_dims_value(onnx_node *n, ts_value *v, const ts_dim **dims, int *count)
{
    *dims = NULL;
    *count = 0;
    if (!v) return false;
    onnx_dims *d = onnx_map_get(&n->ctx->dims, v);
    if (d) {
        *dims = d->dims;
        *count = d->count;
        return true;
    }
    if (!ts_dtype_is_int(v->type.dtype) || v->type.rank > 1) return false;
    const ts_tensor *t = onnx_const(n, v);
    if (!t || t->numel > INT_MAX) return false;
    ts_dim *a = ts_arena_array(onnx_graph(n)->arena, (size_t)t->numel + 1, sizeof *a);
    if (!a) {
        onnx_fail(n, TS_ERR_OOM, "out of memory");
        return false;
    }
    for (int64_t j = 0; j < t->numel; j++) a[j] = ts_dim_const(ts_elem_get_i64(t->dtype, t->data, j));
    *dims = a;
    *count = (int)t->numel;
    return true;
}

ts_status onnx_dims_input(onnx_node *n, int i, const ts_dim **dims, int *count)
{
    char lab[240];
    ts_value *v = onnx_input(n, i);
    if (!v) return onnx_status(n);
    if (onnx_dims_value(n, v, dims, count)) return TS_OK;
    if (onnx_status(n) != TS_OK) return onnx_status(n);
    return onnx_unsupported(n,
                            "input %s must be a constant or a shape computed from the inputs' dims: tessera needs it "
                            "to know the result's shape",
                            input_label(n, i, lab, sizeof lab));
}

ts_value *onnx_dim_scalar(onnx_node *n, ts_dim d)
{
    ts_builder *b = onnx_b(n);
    ts_value *r;
    if (ts_dim_is_const(d)) {
        r = onnx_i64_scalar(b, d.c);
    } else {
        int64_t axis = 0;
        r = ts_b_reduce(b, TS_OP_REDUCE_SUM, ts_b_full(b, TS_DTYPE_I64, 1, 1, &d), 1, &axis, false);
    }
    if (r) onnx_set_dims_value(n, r, 1, &d);
    return r;
}

static ts_value *const_vector(onnx_node *n, int count, const ts_dim *dims)
{
    ts_tensor *t = NULL;
    ts_err err = {0};
    int64_t len = count;
    if (ts_tensor_new(TS_DTYPE_I64, 1, &len, &t, &err) != TS_OK) {
        onnx_fail(n, err.code, "%s", err.msg);
        return NULL;
    }
    for (int i = 0; i < count; i++) ((int64_t *)t->data)[i] = dims[i].c;
    ts_value *r = ts_b_const(onnx_b(n), t);
    ts_tensor_release(t);
    return r;
}

ts_value *onnx_dims_vector(onnx_node *n, int count, const ts_dim *dims)
{
    if (count < 0 || (count && !dims)) {
        onnx_fail(n, TS_ERR_INTERNAL, "onnx_dims_vector: bad arguments");
        return NULL;
    }
    bool all_const = true;
    for (int i = 0; i < count; i++) all_const = all_const && ts_dim_is_const(dims[i]);
    ts_value *r;
    if (all_const) {
        r = const_vector(n, count, dims);
    } else {
        ts_value **parts = ts_arena_array(onnx_graph(n)->arena, (size_t)count, sizeof *parts);
        if (!parts) {
            onnx_fail(n, TS_ERR_OOM, "out of memory");
            return NULL;
        }
        ts_dim one = ts_dim_const(1);
        for (int i = 0; i < count; i++) parts[i] = ts_b_reshape(onnx_b(n), onnx_dim_scalar(n, dims[i]), 1, &one);
        r = ts_b_concat(onnx_b(n), count, parts, 0);
    }
    if (r) onnx_set_dims_value(n, r, count, dims);
    return r;
}
