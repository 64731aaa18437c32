/* ops_sequence.c — ONNX operators on sequences and optionals (D17). A
 * sequence is a list of tensor values whose length is known when the
 * model is built, an optional a value or none (seq.h); these operators
 * rebuild lists at load time and emit primitives only for the tensor work
 * (ConcatFromSequence is a concat, SplitToSequence slices, SequenceMap the
 * body once per element). A position or a split that is only known at run
 * time is refused with a message naming the input. */
#include "frontend/onnx/seq.h"

#include <string.h>

/* ---- helpers --------------------------------------------------------------------------------- */

/* Input i as a sequence; a failure naming it otherwise. */
static const onnx_comp *seq_in(onnx_node *n, int i)
{
    ts_value *v = onnx_input(n, i);
    const onnx_comp *k = onnx_comp_of(v);
    if (v && (!k || k->kind != ONNX_COMP_SEQ)) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d must be a sequence, not %s", i, onnx_comp_what(v));
        return NULL;
    }
    return k;
}

/* Input i as a tensor; a failure naming it otherwise. */
static ts_value *tensor_in(onnx_node *n, int i)
{
    ts_value *v = onnx_input(n, i);
    if (v && onnx_comp_of(v)) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d must be a tensor, not %s", i, onnx_comp_what(v));
        return NULL;
    }
    return v;
}

static ts_status set_seq(onnx_node *n, int k, int count, ts_value *const *elems, ts_dtype dt)
{
    ts_value *s = onnx_comp_new(n->ctx, ONNX_COMP_SEQ, count, elems, dt);
    return s ? onnx_set_out(n, k, s) : onnx_status(n);
}

/* An arena array for `count` values. */
static ts_value **values(onnx_node *n, int count)
{
    ts_value **v = ts_arena_array(onnx_graph(n)->arena, (size_t)count + 1, sizeof *v);
    if (!v) onnx_fail(n, TS_ERR_OOM, "out of memory");
    return v;
}

/* Input i as a build-time integer scalar (a constant, or computed from
 * known inputs). */
static ts_status const_scalar(onnx_node *n, int i, const char *what, int64_t *out)
{
    ts_value *v = tensor_in(n, i);
    if (!v) return onnx_status(n);
    const ts_tensor *t = onnx_const(n, v);
    if (!t) {
        TS_TRY(onnx_status(n));
        return onnx_unsupported(n, "input %d (%s) must be known when the model is built (a constant or a given input): "
                                   "tessera fixes a sequence's structure at load time", i, what);
    }
    if (!ts_dtype_is_int(t->dtype) || t->numel != 1)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d (%s) must be one integer", i, what);
    *out = ts_elem_get_i64(t->dtype, t->data, 0);
    return TS_OK;
}

/* Input i as a position in a sequence of len elements (negative counts
 * from the end); `end` allows len itself (an insertion at the back). When
 * the input is omitted, def (already normalised). */
static ts_status position(onnx_node *n, int i, int len, bool end, int def, int *out)
{
    int64_t p = def;
    *out = def;
    if (!onnx_has_input(n, i)) return TS_OK;
    TS_TRY(const_scalar(n, i, "position", &p));
    int64_t hi = end ? len : len - 1;
    if (p < -(int64_t)len || p > hi)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "position %lld is out of range for a sequence of %d", (long long)p,
                         len);
    *out = (int)(p < 0 ? p + len : p);
    return TS_OK;
}

/* ---- SequenceEmpty, SequenceConstruct, SequenceLength, SequenceAt ----------------------------- */

static ts_status onnx_sequence_empty(onnx_node *n)
{
    ts_dtype dt;
    ts_err err = {0};
    if (onnx_dtype((int)onnx_attr_int(n, "dtype", 1), &dt, &err) != TS_OK) return onnx_fail(n, err.code, "%s", err.msg);
    return set_seq(n, 0, 0, NULL, dt);
}

static ts_status onnx_sequence_construct(onnx_node *n)
{
    if (n->n_in < 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "SequenceConstruct takes at least one input");
    for (int i = 0; i < n->n_in; i++) {
        ts_value *x = tensor_in(n, i);
        if (!x) return onnx_status(n);
        if (x->type.dtype != n->in[0]->type.dtype)
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d is %s, input 0 %s: a sequence has one dtype", i,
                             ts_dtype_name(x->type.dtype), ts_dtype_name(n->in[0]->type.dtype));
    }
    return set_seq(n, 0, n->n_in, n->in, n->in[0]->type.dtype);
}

static ts_status onnx_sequence_length(onnx_node *n)
{
    const onnx_comp *s = seq_in(n, 0);
    if (!s) return onnx_status(n);
    return onnx_set_out(n, 0, onnx_i64_scalar(onnx_b(n), s->count));
}

static ts_status onnx_sequence_at(onnx_node *n)
{
    const onnx_comp *s = seq_in(n, 0);
    int p;
    if (!s) return onnx_status(n);
    if (!onnx_has_input(n, 1)) return onnx_fail(n, TS_ERR_INVALID_MODEL, "input 1 (position) is required");
    TS_TRY(position(n, 1, s->count, false, 0, &p));
    return onnx_set_out(n, 0, s->elems[p]);
}

/* ---- SequenceInsert, SequenceErase ------------------------------------------------------------- */

static ts_status onnx_sequence_insert(onnx_node *n)
{
    const onnx_comp *s = seq_in(n, 0);
    ts_value *x = s ? tensor_in(n, 1) : NULL;
    int p;
    if (!x) return onnx_status(n);
    if (s->dtype != TS_DTYPE_COUNT && x->type.dtype != s->dtype)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "inserting %s into a sequence of %s", ts_dtype_name(x->type.dtype),
                         ts_dtype_name(s->dtype));
    TS_TRY(position(n, 2, s->count, true, s->count, &p));
    ts_value **e = values(n, s->count + 1);
    if (!e) return onnx_status(n);
    for (int i = 0, k = 0; i <= s->count; i++) e[i] = i == p ? x : s->elems[k++];
    return set_seq(n, 0, s->count + 1, e, x->type.dtype);
}

static ts_status onnx_sequence_erase(onnx_node *n)
{
    const onnx_comp *s = seq_in(n, 0);
    int p;
    if (!s) return onnx_status(n);
    if (!s->count) return onnx_fail(n, TS_ERR_INVALID_MODEL, "erasing from an empty sequence");
    TS_TRY(position(n, 1, s->count, false, s->count - 1, &p));
    ts_value **e = values(n, s->count);
    if (!e) return onnx_status(n);
    for (int i = 0, k = 0; i < s->count; i++)
        if (i != p) e[k++] = s->elems[i];
    return set_seq(n, 0, s->count - 1, e, s->dtype);
}

/* ---- ConcatFromSequence, SplitToSequence --------------------------------------------------------- */

/* x with a 1 inserted at axis. */
static ts_value *unsqueeze(ts_builder *b, ts_value *x, int axis)
{
    ts_dim d[TS_MAX_RANK];
    if (!x || x->type.rank + 1 > TS_MAX_RANK) return NULL;
    for (int i = 0, k = 0; i <= x->type.rank; i++) d[i] = i == axis ? ts_dim_const(1) : x->type.dims[k++];
    return ts_b_reshape(b, x, x->type.rank + 1, d);
}

static ts_status onnx_concat_from_sequence(onnx_node *n)
{
    const onnx_comp *s = seq_in(n, 0);
    if (!s) return onnx_status(n);
    if (!onnx_has_attr(n, "axis")) return onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute 'axis' is required");
    int64_t axis = onnx_attr_int(n, "axis", 0), new_axis = onnx_attr_int(n, "new_axis", 0);
    if (!s->count) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the sequence is empty: there is nothing to concatenate");
    ts_value **xs = values(n, s->count);
    if (!xs) return onnx_status(n);
    for (int i = 0; i < s->count; i++)
        if (onnx_comp_of(xs[i] = s->elems[i]))
            return onnx_unsupported(n, "element %d is %s: only tensors are concatenated", i, onnx_comp_what(xs[i]));
    int r = xs[0]->type.rank;
    TS_TRY(onnx_axis(n, axis, r + (new_axis ? 1 : 0), &axis));
    if (new_axis && r + 1 > TS_MAX_RANK) return onnx_unsupported(n, "rank %d is too deep", r + 1);
    for (int i = 0; new_axis && i < s->count; i++) xs[i] = unsqueeze(onnx_b(n), xs[i], (int)axis);
    return onnx_set_out(n, 0, s->count == 1 ? xs[0] : ts_b_concat(onnx_b(n), s->count, xs, axis));
}

/* The split sizes: from input 1 (a scalar chunk size or a list of sizes),
 * or 1s; the axis length must be known unless a list is given. */
static ts_status split_sizes(onnx_node *n, ts_dim len, int64_t **sizes, int *count)
{
    const int64_t *v = NULL;
    int k = 0;
    bool list = false;
    if (onnx_has_input(n, 1)) {
        ts_value *sp = tensor_in(n, 1);
        if (!sp) return onnx_status(n);
        list = sp->type.rank == 1;
        if (!onnx_const(n, sp) && onnx_status(n) == TS_OK)
            return onnx_unsupported(n, "input 1 (split) must be known when the model is built (a constant or a given "
                                       "input): it fixes the sequence's length");
        TS_TRY(onnx_const_ints(n, 1, &v, &k));
        if (sp->type.rank > 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "input 1 (split) must be a scalar or a list");
    }
    if (!list && !ts_dim_is_const(len))
        return onnx_unsupported(n, "the split axis has a length known only at run time; the sequence's length must be "
                                   "known when the model is built");
    int64_t chunk = v ? v[0] : 1;
    if (!list && chunk < 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "split %lld must be positive", (long long)chunk);
    int64_t total = list ? k : len.c / chunk + (len.c % chunk != 0);
    if (total > ONNX_MAX_SEQ)
        return onnx_unsupported(n, "the split makes %lld pieces, more than tessera builds (%d)", (long long)total,
                                ONNX_MAX_SEQ);
    int64_t *s = ts_arena_array(onnx_graph(n)->arena, (size_t)total + 1, sizeof *s);
    if (!s) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    int64_t sum = 0;
    for (int64_t i = 0; i < total; i++) {
        s[i] = list ? v[i] : i + 1 < total ? chunk : len.c - chunk * (total - 1);
        if (s[i] < 0 || !ts_i64_add(sum, s[i], &sum))
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "split sizes must be >= 0");
    }
    if (list && ts_dim_is_const(len) && sum != len.c)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "the split sizes add up to %lld, the axis has %lld", (long long)sum,
                         (long long)len.c);
    *sizes = s;
    *count = (int)total;
    return TS_OK;
}

static ts_status onnx_split_to_sequence(onnx_node *n)
{
    ts_value *x = tensor_in(n, 0);
    if (!x) return onnx_status(n);
    int64_t axis, *sizes = NULL;
    int r = x->type.rank, count = 0;
    TS_TRY(onnx_axis(n, onnx_attr_int(n, "axis", 0), r, &axis));
    bool squeeze = !onnx_has_input(n, 1) && onnx_attr_int(n, "keepdims", 1) == 0;
    TS_TRY(split_sizes(n, x->type.dims[axis], &sizes, &count));
    ts_value **e = values(n, count);
    if (!e) return onnx_status(n);
    ts_dim start[TS_MAX_RANK], limit[TS_MAX_RANK], kept[TS_MAX_RANK];
    for (int i = 0; i < r; i++) start[i] = ts_dim_const(0), limit[i] = x->type.dims[i];
    for (int i = 0, k = 0; i < r; i++)
        if (i != axis) kept[k++] = x->type.dims[i];
    int64_t at = 0;
    for (int j = 0; j < count; j++) {
        start[axis] = ts_dim_const(at);
        limit[axis] = ts_dim_const(at += sizes[j]);
        e[j] = ts_b_slice(onnx_b(n), x, start, limit, NULL);
        if (squeeze) e[j] = ts_b_reshape(onnx_b(n), e[j], r - 1, kept);
        if (!e[j]) return onnx_status(n);
    }
    return set_seq(n, 0, count, e, x->type.dtype);
}

/* ---- SequenceMap ------------------------------------------------------------------------------------ */

/* The body is built once per element, inline: its inputs are element i of
 * each sequence input and the other inputs as they are. */
static ts_status onnx_sequence_map(onnx_node *n)
{
    const Onnx__GraphProto *gp = onnx_attr_graph(n, "body");
    const onnx_comp *s0 = gp ? seq_in(n, 0) : NULL;
    if (!s0) return onnx_status(n);
    int len = s0->count;
    for (int j = 1; j < n->n_in; j++) {
        const onnx_comp *k = onnx_comp_of(onnx_input(n, j));
        if (k && k->kind == ONNX_COMP_SEQ && k->count != len)
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d has %d elements, input 0 has %d", j, k->count, len);
        if (!n->in[j]) return onnx_status(n);
    }
    if (gp->n_output < (size_t)n->n_out)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "the body has %zu outputs for %d", gp->n_output, n->n_out);
    ts_value **formal = values(n, n->n_in), **outs[64];
    if (n->n_out > 64) return onnx_unsupported(n, "more than 64 outputs");
    for (int k = 0; k < n->n_out; k++)
        if (!(outs[k] = values(n, len))) return onnx_status(n);
    for (int i = 0; formal && i < len; i++) {
        for (int j = 0; j < n->n_in; j++) {
            const onnx_comp *k = onnx_comp_of(n->in[j]);
            formal[j] = k && k->kind == ONNX_COMP_SEQ ? k->elems[i] : n->in[j];
        }
        ts_value **res;
        TS_TRY(onnx_inline_body(n, gp, n->n_in, formal, &res));
        for (int k = 0; k < n->n_out; k++) outs[k][i] = res[k];
    }
    for (int k = 0; formal && k < n->n_out; k++) TS_TRY(set_seq(n, k, len, outs[k], TS_DTYPE_COUNT));
    return onnx_status(n);
}

/* ---- Optional, OptionalHasElement, OptionalGetElement ------------------------------------------------ */

static ts_status onnx_optional(onnx_node *n)
{
    /* `type` names the element type of an empty optional: it holds no
     * tensor here, and a present element brings its own type */
    onnx_attr_ignore(n, "type");
    bool has = onnx_has_input(n, 0);
    ts_value *v = has ? n->in[0] : NULL;
    ts_value *o = onnx_comp_new(n->ctx, ONNX_COMP_OPT, has ? 1 : 0, &v, TS_DTYPE_COUNT);
    return o ? onnx_set_out(n, 0, o) : onnx_status(n);
}

/* A tensor or sequence (opset 18 accepts them) has its element; a missing
 * input is the empty optional. */
static ts_status onnx_optional_has_element(onnx_node *n)
{
    const onnx_comp *k = onnx_has_input(n, 0) ? onnx_comp_of(n->in[0]) : NULL;
    bool has = onnx_has_input(n, 0) && (!k || k->kind != ONNX_COMP_OPT || k->count > 0);
    return onnx_set_out(n, 0, ts_b_scalar(onnx_b(n), TS_DTYPE_BOOL, has ? 1 : 0));
}

/* An optional's value; a tensor or sequence is itself. Presence is known
 * at build time, so an empty optional is an error here rather than at run
 * time. */
static ts_status onnx_optional_get_element(onnx_node *n)
{
    ts_value *v = onnx_input(n, 0);
    const onnx_comp *k = onnx_comp_of(v);
    if (!k || k->kind != ONNX_COMP_OPT) return onnx_set_out(n, 0, v);
    if (!k->count) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the optional is empty: it has no element to get");
    return onnx_set_out(n, 0, k->elems[0]);
}

/* ---- the table ------------------------------------------------------------------------------------------- */

const onnx_op_entry onnx_ops_sequence[] = {
    {"ConcatFromSequence", 11, INT_MAX, onnx_concat_from_sequence},
    {"Optional", 15, INT_MAX, onnx_optional},
    {"OptionalGetElement", 15, INT_MAX, onnx_optional_get_element},
    {"OptionalHasElement", 15, INT_MAX, onnx_optional_has_element},
    {"SequenceAt", 11, INT_MAX, onnx_sequence_at},
    {"SequenceConstruct", 11, INT_MAX, onnx_sequence_construct},
    {"SequenceEmpty", 11, INT_MAX, onnx_sequence_empty},
    {"SequenceErase", 11, INT_MAX, onnx_sequence_erase},
    {"SequenceInsert", 11, INT_MAX, onnx_sequence_insert},
    {"SequenceLength", 11, INT_MAX, onnx_sequence_length},
    {"SequenceMap", 17, INT_MAX, onnx_sequence_map},
    {"SplitToSequence", 11, INT_MAX, onnx_split_to_sequence},
    {NULL, 0, 0, NULL},
};

bool onnx_takes_composites(const char *op_type)
{
    static const char *const control[] = {"Identity", "If", "Loop"};
    for (size_t i = 0; i < sizeof control / sizeof control[0]; i++)
        if (strcmp(op_type, control[i]) == 0) return true;
    for (const onnx_op_entry *e = onnx_ops_sequence; e->op_type; e++)
        if (strcmp(op_type, e->op_type) == 0) return true;
    return false;
}
