/* ops_reduce.c — ONNX reductions, arg-reductions, CumSum and the softmax
 * family, assembled from reduce_*, argmax/argmin, cumulative and
 * elementwise primitives.
 *
 * Every Reduce* operator is "map, reduce, map": ReduceL2 is sqrt(sum(x*x)),
 * ReduceLogSumExp is m + log(sum(exp(x - m))) with m the (finite) max, and
 * so on. The reduce_* primitives start from the identity, so reducing an
 * empty set gives what the spec asks (0 for sums, 1 for products, -inf or
 * the dtype's minimum for max, ...) without special cases. */
#include "frontend/onnx/onnx.h"

/* ---- helpers --------------------------------------------------------------- */

static ts_value *scalar(onnx_node *n, ts_dtype dt, double v) { return ts_b_scalar(onnx_b(n), dt, v); }

static ts_value *bin(onnx_node *n, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(onnx_b(n), op, x, y); }

static ts_value *un(onnx_node *n, ts_op op, ts_value *x) { return ts_b_unary(onnx_b(n), op, x); }

/* The number of elements the axes of x select, as a scalar of dtype dt (a
 * constant unless a reduced dim is symbolic). */
static ts_value *axes_count(onnx_node *n, ts_value *x, int naxes, const int64_t *axes, ts_dtype dt)
{
    ts_dim c = ts_dim_const(1);
    ts_err err = {0};
    for (int i = 0; i < naxes; i++)
        if (ts_dim_mul(onnx_graph(n)->syms, c, x->type.dims[axes[i]], &c, &err) != TS_OK) {
            onnx_fail(n, err.code, "%s", err.msg);
            return NULL;
        }
    if (ts_dim_is_const(c)) return scalar(n, dt, (double)c.c);
    return ts_b_cast(onnx_b(n), onnx_dim_scalar(n, c), dt);
}

/* ---- Reduce* ----------------------------------------------------------------- */

/* What a Reduce* node reduces: its input, the normalised axes, keepdims,
 * and whether it is the identity (empty axes with noop_with_empty_axes). */
typedef struct red {
    ts_value *x;
    int naxes;
    int64_t axes[TS_MAX_RANK];
    bool keep, noop;
} red;

static ts_status red_all(red *r)
{
    r->naxes = r->x->type.rank;
    for (int i = 0; i < r->naxes; i++) r->axes[i] = i;
    return TS_OK;
}

/* Reads x, keepdims and the axes: the `axes` attribute before opset
 * axes_input_since, input 1 from then on. No axes means all axes, or the
 * identity when noop_with_empty_axes is set (only the input form has it). */
static ts_status red_begin(onnx_node *n, int axes_input_since, red *r)
{
    r->x = onnx_input(n, 0);
    r->keep = onnx_attr_int(n, "keepdims", 1) != 0;
    bool noop_attr = n->opset >= axes_input_since && onnx_attr_int(n, "noop_with_empty_axes", 0) != 0;
    r->noop = false;
    TS_TRY(onnx_status(n));
    const int64_t *ax = NULL;
    int cnt = 0;
    if (n->opset < axes_input_since) {
        cnt = onnx_attr_ints(n, "axes", &ax);
    } else if (onnx_has_input(n, 1)) {
        TS_TRY(onnx_const_ints(n, 1, &ax, &cnt));
    }
    if (cnt <= 0) {
        r->noop = noop_attr;
        r->naxes = 0;
        return r->noop ? onnx_status(n) : red_all(r);
    }
    int rank = r->x->type.rank;
    if (cnt > rank) return onnx_fail(n, TS_ERR_INVALID_MODEL, "%d axes for an input of rank %d", cnt, rank);
    for (int i = 0; i < cnt; i++) TS_TRY(onnx_axis(n, ax[i], rank, &r->axes[i]));
    for (int i = 0; i < cnt; i++)
        for (int j = 0; j < i; j++)
            if (r->axes[i] == r->axes[j])
                return onnx_fail(n, TS_ERR_INVALID_MODEL, "axis %lld is listed twice", (long long)ax[i]);
    r->naxes = cnt;
    return TS_OK;
}

/* op over r's axes (keeping them as 1s under keepdims); v itself when the
 * node is the identity. */
static ts_value *red_apply(onnx_node *n, const red *r, ts_op op, ts_value *v)
{
    if (r->noop) return v;
    return ts_b_reduce(onnx_b(n), op, v, r->naxes, r->axes, r->keep);
}

/* reduce_sqrt/log need a float: integer inputs are computed in f64 and
 * converted back (truncating), as numpy's astype does in the reference. */
static ts_value *as_float(onnx_node *n, ts_value *v)
{
    return v && !ts_dtype_is_float(v->type.dtype) ? ts_b_cast(onnx_b(n), v, TS_DTYPE_F64) : v;
}

static ts_value *back_to(onnx_node *n, ts_value *v, ts_dtype dt)
{
    return v && v->type.dtype != dt ? ts_b_cast(onnx_b(n), v, dt) : v;
}

static ts_status reduce_simple(onnx_node *n, int since, ts_op op)
{
    red r;
    TS_TRY(red_begin(n, since, &r));
    return onnx_set_out(n, 0, red_apply(n, &r, op, r.x));
}

static ts_status onnx_reduce_sum(onnx_node *n) { return reduce_simple(n, 13, TS_OP_REDUCE_SUM); }
static ts_status onnx_reduce_prod(onnx_node *n) { return reduce_simple(n, 18, TS_OP_REDUCE_PROD); }

/* bool inputs (opset 20) have no max/min primitive: go through u8. */
static ts_status reduce_extreme(onnx_node *n, ts_op op)
{
    red r;
    TS_TRY(red_begin(n, 18, &r));
    ts_dtype dt = r.x->type.dtype;
    ts_value *x = dt == TS_DTYPE_BOOL ? ts_b_cast(onnx_b(n), r.x, TS_DTYPE_U8) : r.x;
    return onnx_set_out(n, 0, back_to(n, red_apply(n, &r, op, x), dt));
}

static ts_status onnx_reduce_max(onnx_node *n) { return reduce_extreme(n, TS_OP_REDUCE_MAX); }
static ts_status onnx_reduce_min(onnx_node *n) { return reduce_extreme(n, TS_OP_REDUCE_MIN); }

/* An empty set gives 0/0 = NaN for floats, as numpy's mean does. */
static ts_status onnx_reduce_mean(onnx_node *n)
{
    red r;
    TS_TRY(red_begin(n, 18, &r));
    ts_value *s = red_apply(n, &r, TS_OP_REDUCE_SUM, r.x);
    if (r.noop) return onnx_set_out(n, 0, s);
    return onnx_set_out(n, 0, bin(n, TS_OP_DIV, s, axes_count(n, r.x, r.naxes, r.axes, r.x->type.dtype)));
}

static ts_status onnx_reduce_l1(onnx_node *n)
{
    red r;
    TS_TRY(red_begin(n, 18, &r));
    return onnx_set_out(n, 0, red_apply(n, &r, TS_OP_REDUCE_SUM, un(n, TS_OP_ABS, r.x)));
}

static ts_status onnx_reduce_sum_square(onnx_node *n)
{
    red r;
    TS_TRY(red_begin(n, 18, &r));
    return onnx_set_out(n, 0, red_apply(n, &r, TS_OP_REDUCE_SUM, bin(n, TS_OP_MUL, r.x, r.x)));
}

static ts_status onnx_reduce_l2(onnx_node *n)
{
    red r;
    TS_TRY(red_begin(n, 18, &r));
    ts_value *x = as_float(n, r.x);
    ts_value *s = red_apply(n, &r, TS_OP_REDUCE_SUM, bin(n, TS_OP_MUL, x, x));
    return onnx_set_out(n, 0, back_to(n, un(n, TS_OP_SQRT, s), r.x->type.dtype));
}

/* log(0) = -inf for the empty set, as the spec asks. */
static ts_status onnx_reduce_log_sum(onnx_node *n)
{
    red r;
    TS_TRY(red_begin(n, 18, &r));
    ts_value *s = red_apply(n, &r, TS_OP_REDUCE_SUM, as_float(n, r.x));
    return onnx_set_out(n, 0, back_to(n, un(n, TS_OP_LOG, s), r.x->type.dtype));
}

/* m + log(sum(exp(x - m))) with m the max over the axes, replaced by 0
 * where it is not finite (all -inf, or inf): shifting by an infinite max
 * would give inf - inf = NaN. An empty set gives -inf + log(0) = -inf. */
static ts_status onnx_reduce_log_sum_exp(onnx_node *n)
{
    red r;
    TS_TRY(red_begin(n, 18, &r));
    if (r.noop) return onnx_set_out(n, 0, r.x);
    ts_value *x = as_float(n, r.x);
    ts_dtype dt = x ? x->type.dtype : TS_DTYPE_F32;
    ts_builder *b = onnx_b(n);
    ts_value *m = ts_b_reduce(b, TS_OP_REDUCE_MAX, x, r.naxes, r.axes, true);
    ts_value *finite = bin(n, TS_OP_EQ, bin(n, TS_OP_SUB, m, m), scalar(n, dt, 0));
    m = ts_b_select(b, finite, m, scalar(n, dt, 0));
    ts_value *s = ts_b_reduce(b, TS_OP_REDUCE_SUM, un(n, TS_OP_EXP, bin(n, TS_OP_SUB, x, m)), r.naxes, r.axes, true);
    ts_value *y = bin(n, TS_OP_ADD, un(n, TS_OP_LOG, s), m);
    if (!r.keep && y) {        /* drop the kept 1s */
        ts_dim dims[TS_MAX_RANK];
        int k = 0;
        for (int i = 0; i < y->type.rank; i++) {
            bool red_axis = false;
            for (int j = 0; j < r.naxes; j++) red_axis |= r.axes[j] == i;
            if (!red_axis) dims[k++] = y->type.dims[i];
        }
        y = ts_b_reshape(b, y, k, dims);
    }
    return onnx_set_out(n, 0, back_to(n, y, r.x->type.dtype));
}

/* ---- ArgMax, ArgMin ---------------------------------------------------------- */

static ts_status arg_reduce(onnx_node *n, ts_op op)
{
    ts_value *x = onnx_input(n, 0);
    int64_t axis = onnx_attr_int(n, "axis", 0);
    bool keep = onnx_attr_int(n, "keepdims", 1) != 0;
    int64_t last = onnx_attr_int(n, "select_last_index", 0);
    TS_TRY(onnx_status(n));
    TS_TRY(onnx_axis(n, axis, x->type.rank, &axis));
    ts_builder *b = onnx_b(n);
    ts_attr *a = ts_b_attrs(b, op);
    if (!a) return onnx_status(n);
    ts_graph *g = onnx_graph(n);
    if (ts_attr_set_int(g, op, a, "axis", axis) != TS_OK || ts_attr_set_int(g, op, a, "select_last", last != 0) != TS_OK)
        return onnx_fail(n, TS_ERR_INTERNAL, "cannot set the attributes of %s", ts_op_get(op)->name);
    ts_value *y = ts_b_node(b, op, 1, &x, a);
    if (keep && y) {
        ts_dim dims[TS_MAX_RANK];
        for (int i = 0; i < x->type.rank; i++) dims[i] = i == axis ? ts_dim_const(1) : x->type.dims[i];
        y = ts_b_reshape(b, y, x->type.rank, dims);
    }
    return onnx_set_out(n, 0, y);
}

static ts_status onnx_argmax(onnx_node *n) { return arg_reduce(n, TS_OP_ARGMAX); }
static ts_status onnx_argmin(onnx_node *n) { return arg_reduce(n, TS_OP_ARGMIN); }

/* ---- CumSum ------------------------------------------------------------------------ */

static ts_status onnx_cumsum(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    const int64_t *ax;
    int cnt;
    TS_TRY(onnx_status(n));
    TS_TRY(onnx_const_ints(n, 1, &ax, &cnt));
    if (cnt != 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "axis must be a scalar, got %d values", cnt);
    int64_t axis;
    TS_TRY(onnx_axis(n, ax[0], x->type.rank, &axis));
    ts_graph *g = onnx_graph(n);
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_CUMULATIVE);
    if (!a) return onnx_status(n);
    if (ts_attr_set_enum(g, TS_OP_CUMULATIVE, a, "kind", "sum") != TS_OK ||
        ts_attr_set_int(g, TS_OP_CUMULATIVE, a, "axis", axis) != TS_OK ||
        ts_attr_set_int(g, TS_OP_CUMULATIVE, a, "exclusive", onnx_attr_int(n, "exclusive", 0) != 0) != TS_OK ||
        ts_attr_set_int(g, TS_OP_CUMULATIVE, a, "reverse", onnx_attr_int(n, "reverse", 0) != 0) != TS_OK)
        return onnx_fail(n, TS_ERR_INTERNAL, "cannot set the attributes of cumulative");
    return onnx_set_out(n, 0, ts_b_node(onnx_b(n), TS_OP_CUMULATIVE, 1, &x, a));
}

/* ---- Softmax, LogSoftmax, Hardmax -------------------------------------------------- */

/* The axes a softmax-like node normalises over. Since opset 13 that is the
 * one axis `axis` (default -1). Before, the input is coerced to 2-D at
 * `axis` (default 1): normalising over the flattened trailing block is the
 * same as normalising over every axis from `axis` on. Returns the count. */
static int softmax_axes(onnx_node *n, ts_value *x, int64_t *axes)
{
    bool single = n->opset >= 13;
    int64_t axis = onnx_attr_int(n, "axis", single ? -1 : 1);
    int rank = x->type.rank;
    if (rank == 0) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "the input must have rank >= 1");
        return 0;
    }
    /* before opset 13, axis may equal rank (an empty trailing block) */
    if (!single && axis == rank) return 0;
    if (onnx_axis(n, axis, rank, &axis) != TS_OK) return 0;
    int k = 0;
    for (int64_t i = axis; i < (single ? axis + 1 : rank); i++) axes[k++] = i;
    return k;
}

static ts_value *float_input(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    if (x && !ts_dtype_is_float(x->type.dtype)) {
        onnx_unsupported(n, "%s input: only float inputs are defined", ts_dtype_name(x->type.dtype));
        return NULL;
    }
    return x;
}

/* f16 and bf16 are computed in f32 and rounded once at the end: the
 * exp/sum/div chain would otherwise round at every step. */
static ts_value *widened(onnx_node *n, ts_value *x)
{
    ts_dtype dt = x ? x->type.dtype : TS_DTYPE_F32;
    return dt == TS_DTYPE_F16 || dt == TS_DTYPE_BF16 ? ts_b_cast(onnx_b(n), x, TS_DTYPE_F32) : x;
}

/* x - max(x) over the axes: the shift that keeps exp from overflowing. */
static ts_value *shifted(onnx_node *n, ts_value *x, int na, const int64_t *axes)
{
    return bin(n, TS_OP_SUB, x, ts_b_reduce(onnx_b(n), TS_OP_REDUCE_MAX, x, na, axes, true));
}

static ts_status onnx_softmax(onnx_node *n)
{
    ts_value *x = float_input(n);
    int64_t axes[TS_MAX_RANK];
    int na = x ? softmax_axes(n, x, axes) : 0;
    TS_TRY(onnx_status(n));
    ts_value *e = un(n, TS_OP_EXP, shifted(n, widened(n, x), na, axes));
    ts_value *y = bin(n, TS_OP_DIV, e, ts_b_reduce(onnx_b(n), TS_OP_REDUCE_SUM, e, na, axes, true));
    return onnx_set_out(n, 0, back_to(n, y, x->type.dtype));
}

static ts_status onnx_log_softmax(onnx_node *n)
{
    ts_value *x = float_input(n);
    int64_t axes[TS_MAX_RANK];
    int na = x ? softmax_axes(n, x, axes) : 0;
    TS_TRY(onnx_status(n));
    ts_value *s = shifted(n, widened(n, x), na, axes);
    ts_value *lse = un(n, TS_OP_LOG, ts_b_reduce(onnx_b(n), TS_OP_REDUCE_SUM, un(n, TS_OP_EXP, s), na, axes, true));
    return onnx_set_out(n, 0, back_to(n, bin(n, TS_OP_SUB, s, lse), x->type.dtype));
}

/* 1 at the first maximum along the last axis of x, 0 elsewhere. */
static ts_value *one_hot_max(onnx_node *n, ts_value *x)
{
    ts_builder *b = onnx_b(n);
    int64_t last = x->type.rank - 1;
    ts_value *am = ts_b_reduce(b, TS_OP_ARGMAX, x, 1, &last, true);
    ts_value *pos = ts_b_iota(b, TS_DTYPE_I64, x->type.rank, x->type.dims, last);
    return ts_b_cast(b, bin(n, TS_OP_EQ, pos, am), x->type.dtype);
}

/* Hardmax's flattened form (before opset 13) needs one argmax over the
 * whole trailing block: the trailing axes are merged into one. */
static ts_status onnx_hardmax(onnx_node *n)
{
    ts_value *x = float_input(n);
    int64_t axes[TS_MAX_RANK];
    int na = x ? softmax_axes(n, x, axes) : 0;
    TS_TRY(onnx_status(n));
    int rank = x->type.rank;
    if (na == 0) return onnx_set_out(n, 0, ts_b_full(onnx_b(n), x->type.dtype, 1, rank, x->type.dims));
    int64_t axis = axes[0];
    int64_t perm[TS_MAX_RANK];
    for (int i = 0; i < rank; i++) perm[i] = i;
    if (na == 1) {             /* move the axis last and back */
        perm[axis] = rank - 1;
        perm[rank - 1] = axis;
        ts_value *t = ts_b_transpose(onnx_b(n), x, perm);
        return onnx_set_out(n, 0, t ? ts_b_transpose(onnx_b(n), one_hot_max(n, t), perm) : NULL);
    }
    ts_dim dims[TS_MAX_RANK], c = ts_dim_const(1);
    ts_err err = {0};
    for (int i = (int)axis; i < rank; i++)
        if (ts_dim_mul(onnx_graph(n)->syms, c, x->type.dims[i], &c, &err) != TS_OK)
            return onnx_fail(n, err.code, "%s", err.msg);
    for (int i = 0; i < axis; i++) dims[i] = x->type.dims[i];
    dims[axis] = c;
    ts_value *flat = ts_b_reshape(onnx_b(n), x, (int)axis + 1, dims);
    ts_value *y = flat ? one_hot_max(n, flat) : NULL;
    return onnx_set_out(n, 0, ts_b_reshape(onnx_b(n), y, rank, x->type.dims));
}

const onnx_op_entry onnx_ops_reduce[] = {
    {"ArgMax", 1, INT_MAX, onnx_argmax},
    {"ArgMin", 1, INT_MAX, onnx_argmin},
    {"CumSum", 11, INT_MAX, onnx_cumsum},
    {"Hardmax", 1, INT_MAX, onnx_hardmax},
    {"LogSoftmax", 1, INT_MAX, onnx_log_softmax},
    {"ReduceL1", 1, INT_MAX, onnx_reduce_l1},
    {"ReduceL2", 1, INT_MAX, onnx_reduce_l2},
    {"ReduceLogSum", 1, INT_MAX, onnx_reduce_log_sum},
    {"ReduceLogSumExp", 1, INT_MAX, onnx_reduce_log_sum_exp},
    {"ReduceMax", 1, INT_MAX, onnx_reduce_max},
    {"ReduceMean", 1, INT_MAX, onnx_reduce_mean},
    {"ReduceMin", 1, INT_MAX, onnx_reduce_min},
    {"ReduceProd", 1, INT_MAX, onnx_reduce_prod},
    {"ReduceSum", 1, INT_MAX, onnx_reduce_sum},
    {"ReduceSumSquare", 1, INT_MAX, onnx_reduce_sum_square},
    {"Softmax", 1, INT_MAX, onnx_softmax},
    {NULL, 0, 0, NULL},
};
