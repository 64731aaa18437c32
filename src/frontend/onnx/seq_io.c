/* seq_io.c — composites at the graph's boundary: an ONNX input of sequence
 * or optional type takes its structure from the value the caller gave and
 * becomes one graph input per tensor; an output's composite is checked
 * against its declared type (its leaves become graph outputs in load.c). */
#include "frontend/onnx/seq.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- inputs ----------------------------------------------------------------------------- */

typedef struct in_walk {
    onnx_ctx *c;
    const char *name;
    const onnx_given *g;
    int pos;                  /* next tensor of g */
    int index;                /* next graph input index */
} in_walk;

static const char *form_what(char kind)
{
    return kind == '[' ? "a sequence" : kind == '?' ? "an optional" : "a tensor";
}

static const char *type_what(const Onnx__TypeProto *tp)
{
    switch (tp ? tp->value_case : ONNX__TYPE_PROTO__VALUE__NOT_SET) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: return "a tensor";
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return "a sequence";
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return "an optional";
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: return "a map";
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: return "a sparse tensor";
    default: return "of no known type";
    }
}

static ts_status in_fail(in_walk *w, const char *fmt, ...) TS_PRINTF(2, 3);
static ts_status in_fail(in_walk *w, const char *fmt, ...)
{
    char why[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return ts_builder_fail(w->c->b, TS_ERR_INVALID_ARG, "the value given for input '%s' does not fit its type: %s",
                           w->name, why);
}

/* The declared tensor type must agree with the given tensor t where it
 * says something: dtype, rank, dim_values. */
static ts_status leaf_fits(in_walk *w, const Onnx__TypeProto__Tensor *tt, const ts_tensor *t)
{
    ts_dtype dt = t->dtype;
    if (tt && tt->has_elem_type && tt->elem_type) {
        ts_err err = {0};
        if (onnx_dtype(tt->elem_type, &dt, &err) != TS_OK)
            return ts_builder_fail(w->c->b, err.code, "input '%s': %s", w->name, err.msg);
        if (dt != t->dtype)
            return in_fail(w, "a tensor is %s, the model declares %s", ts_dtype_name(t->dtype), ts_dtype_name(dt));
    }
    const Onnx__TensorShapeProto *sp = tt ? tt->shape : NULL;
    if (!sp) return TS_OK;
    if ((int)sp->n_dim != t->rank)
        return in_fail(w, "a tensor has rank %d, the model declares rank %zu", t->rank, sp->n_dim);
    for (int i = 0; i < t->rank; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sp->dim[i];
        if (d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value != t->shape[i])
            return in_fail(w, "a tensor has dim %d of %lld where the model declares %lld", i, (long long)t->shape[i],
                           (long long)d->dim_value);
    }
    return TS_OK;
}

/* The declared dims of tt when it has a shape (dim_params as symbols),
 * else NULL. */
static ts_status declared_dims(in_walk *w, const Onnx__TypeProto__Tensor *tt, const ts_dim **out)
{
    *out = NULL;
    if (!tt || !tt->shape) return TS_OK;
    Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
    tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp.tensor_type = (Onnx__TypeProto__Tensor *)tt;
    ts_type t;
    ts_err err = {0};
    if (onnx_type_from_proto(w->c, &tp, w->name, &t, &err) != TS_OK)
        return ts_builder_fail(w->c->b, err.code, "%s", err.msg);
    *out = t.dims;
    return TS_OK;
}

/* A graph input for the next given tensor. Its dims are the tensor's, as
 * constants, except where the element type names a dim_param and every
 * tensor of the sequence (uniform[i]; NULL: a lone tensor) has that size:
 * then the symbol, which may tie it to another input (x1: f32[N] beside
 * seq(f32[N])). Elements of one sequence may differ in shape, and a
 * sequence's structure is fixed at load time anyway. */
static ts_status in_leaf(in_walk *w, const Onnx__TypeProto__Tensor *tt, const bool *uniform, ts_value **out)
{
    onnx_ctx *c = w->c;
    const ts_dim *decl;
    if (w->pos >= w->g->n) return in_fail(w, "the form takes more tensors than were given");
    ts_tensor *t = w->g->t[w->pos++];
    TS_TRY(leaf_fits(w, tt, t));
    TS_TRY(declared_dims(w, tt, &decl));
    ts_dim *dims = ts_arena_array(c->g->arena, (size_t)t->rank + 1, sizeof *dims);
    onnx_known *k = ts_arena_alloc(c->g->arena, sizeof *k);
    if (!dims || !k) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
    for (int i = 0; i < t->rank; i++) {
        const Onnx__TensorShapeProto__Dimension *d = decl ? tt->shape->dim[i] : NULL;
        bool param = d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        dims[i] = param && (!uniform || uniform[i]) ? decl[i] : ts_dim_const(t->shape[i]);
    }
    ts_value *v = ts_b_input(c->b, t->dtype, t->rank, dims);
    if (!v) return onnx_ctx_status(c, NULL);
    k->input = w->index++;
    k->value = t;
    if (!onnx_map_put(&c->known, v, k)) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
    *out = v;
    return TS_OK;
}

static ts_status in_value(in_walk *w, const Onnx__TypeProto *tp, const onnx_form *f, const bool *uniform,
                          ts_value **out);

/* For a sequence of tensors (the next f->count given tensors): which dims
 * all of them share. NULL for anything else. */
static bool *uniform_dims(in_walk *w, const onnx_form *f, bool *buf)
{
    if (f->kind != '[' || !f->count || w->g->n - w->pos < f->count) return NULL;
    ts_tensor *const *t = w->g->t + w->pos;
    for (int i = 0; i < f->count; i++)
        if (f->elems[i]->kind != 't' || t[i]->rank != t[0]->rank) return NULL;
    for (int d = 0; d < t[0]->rank; d++) {
        buf[d] = true;
        for (int i = 1; i < f->count; i++) buf[d] = buf[d] && t[i]->shape[d] == t[0]->shape[d];
    }
    return buf;
}

static ts_status in_comp(in_walk *w, const Onnx__TypeProto *elem, const onnx_form *f, ts_value **out)
{
    bool buf[TS_MAX_RANK];
    const bool *uniform = uniform_dims(w, f, buf);
    ts_value **e = ts_arena_array(w->c->g->arena, (size_t)f->count + 1, sizeof *e);
    if (!e) return ts_builder_fail(w->c->b, TS_ERR_OOM, "out of memory");
    for (int i = 0; i < f->count; i++) TS_TRY(in_value(w, elem, f->elems[i], uniform, &e[i]));
    ts_dtype dt = TS_DTYPE_COUNT;
    if (elem && elem->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && elem->tensor_type &&
        elem->tensor_type->has_elem_type && onnx_dtype(elem->tensor_type->elem_type, &dt, NULL) != TS_OK)
        dt = TS_DTYPE_COUNT;
    *out = onnx_comp_new(w->c, f->kind == '[' ? ONNX_COMP_SEQ : ONNX_COMP_OPT, f->count, e, dt);
    return *out ? TS_OK : onnx_ctx_status(w->c, NULL);
}

/* The value of form f for type tp (NULL: untyped, the form decides). */
static ts_status in_value(in_walk *w, const Onnx__TypeProto *tp, const onnx_form *f, const bool *uniform,
                          ts_value **out)
{
    char want = f->kind;
    const Onnx__TypeProto *elem = NULL;
    if (tp && tp->value_case) {
        switch (tp->value_case) {
        case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: want = 't'; break;
        case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
            want = '[';
            elem = tp->sequence_type ? tp->sequence_type->elem_type : NULL;
            break;
        case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
            want = '?';
            elem = tp->optional_type ? tp->optional_type->elem_type : NULL;
            break;
        default:
            return ts_builder_fail(w->c->b, TS_ERR_UNSUPPORTED, "input '%s' holds %s; tessera supports tensors, "
                                   "sequences and optionals", w->name, type_what(tp));
        }
    }
    if (want != f->kind)
        return in_fail(w, "the value is %s, the model declares %s", form_what(f->kind), form_what(want));
    if (f->kind == 't')
        return in_leaf(w, tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? tp->tensor_type : NULL, uniform,
                       out);
    return in_comp(w, elem, f, out);
}

ts_status onnx_comp_input(onnx_ctx *c, const char *name, const Onnx__TypeProto *tp, const onnx_given *g,
                          int index, ts_value **out)
{
    in_walk w = {c, name, g, 0, index};
    *out = NULL;
    if (!g || !g->form) {
        return ts_builder_fail(c->b, g ? TS_ERR_INVALID_ARG : TS_ERR_UNSUPPORTED,
                               "input '%s' is %s: tessera needs its value (its structure) when the model is loaded%s",
                               name, type_what(tp), g ? ", given as a form with its tensors (ts_onnx_load_forms)" : "");
    }
    TS_TRY(in_value(&w, tp, g->form, NULL, out));
    if (w.pos != g->n) return in_fail(&w, "more tensors were given than the form takes");
    return TS_OK;
}

/* ---- outputs ------------------------------------------------------------------------------- */

static ts_status out_fail(onnx_ctx *c, const char *name, const char *declared, const char *computed)
{
    return ts_builder_fail(c->b, TS_ERR_SHAPE, "output %s: the model declares %s but the graph computes %s", name,
                           declared, computed);
}

static ts_status out_value(onnx_ctx *c, const char *name, const Onnx__TypeProto *tp, const ts_value *v, int depth)
{
    if (!tp || !tp->value_case || depth > ONNX_MAX_DEPTH) return TS_OK;
    const onnx_comp *k = onnx_comp_of(v);
    const Onnx__TypeProto *elem = NULL;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: {
        if (k) return out_fail(c, name, "a tensor", onnx_comp_what(v));
        ts_dtype dt;
        const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
        if (!tt || !tt->has_elem_type || !tt->elem_type || onnx_dtype(tt->elem_type, &dt, NULL) != TS_OK ||
            dt == v->type.dtype || depth == 0)   /* a top-level tensor is load.c's to check */
            return TS_OK;
        return ts_builder_fail(c->b, TS_ERR_SHAPE, "output %s: the model declares %s elements but the graph computes %s",
                               name, ts_dtype_name(dt), ts_dtype_name(v->type.dtype));
    }
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        if (!k || k->kind != ONNX_COMP_SEQ) return out_fail(c, name, "a sequence", onnx_comp_what(v));
        elem = tp->sequence_type ? tp->sequence_type->elem_type : NULL;
        break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        if (!k || k->kind != ONNX_COMP_OPT) return out_fail(c, name, "an optional", onnx_comp_what(v));
        elem = tp->optional_type ? tp->optional_type->elem_type : NULL;
        break;
    default: return out_fail(c, name, type_what(tp), onnx_comp_what(v));
    }
    for (int i = 0; i < k->count; i++) TS_TRY(out_value(c, name, elem, k->elems[i], depth + 1));
    return TS_OK;
}

ts_status onnx_comp_check_output(onnx_ctx *c, const char *name, const Onnx__TypeProto *tp, const ts_value *v)
{
    return out_value(c, name, tp, v, 0);
}
