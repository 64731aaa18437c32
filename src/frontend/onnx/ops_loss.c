/* ops_loss.c — ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss,
 * assembled from iota, comparisons, select and reductions.
 *
 * Both pick x[n, target[n, d...], d...] out of an input [N, C, d1, ...]:
 * a one-hot mask (iota along the class axis == target) selects the entry
 * and a sum over the class axis collects it. Unlike gather, the mask needs
 * no index in range, so an ignore_index outside [0, C) (negative, or past
 * the last class) costs nothing special: its row of the mask is empty. */
#include "frontend/onnx/onnx.h"

#include <string.h>

/* ---- helpers --------------------------------------------------------------- */

static ts_value *scalar(onnx_node *n, ts_dtype dt, double v) { return ts_b_scalar(onnx_b(n), dt, v); }

static ts_value *bin(onnx_node *n, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(onnx_b(n), op, x, y); }

static ts_value *sel(onnx_node *n, ts_value *p, ts_value *x, ts_value *y) { return ts_b_select(onnx_b(n), p, x, y); }

static ts_value *cast_to(onnx_node *n, ts_value *v, ts_dtype dt)
{
    return v && v->type.dtype != dt ? ts_b_cast(onnx_b(n), v, dt) : v;
}

/* f16 and bf16 are computed in f32 and rounded once at the end. */
static ts_dtype compute_dtype(ts_dtype dt)
{
    return dt == TS_DTYPE_F16 || dt == TS_DTYPE_BF16 ? TS_DTYPE_F32 : dt;
}

/* Sum over every axis of v. */
static ts_value *sum_all(onnx_node *n, ts_value *v)
{
    int64_t axes[TS_MAX_RANK];
    if (!v) return NULL;
    for (int i = 0; i < v->type.rank; i++) axes[i] = i;
    return ts_b_reduce(onnx_b(n), TS_OP_REDUCE_SUM, v, v->type.rank, axes, false);
}

/* The element count of v as a scalar of dtype dt (a constant unless a dim
 * is symbolic). */
static ts_value *count_of(onnx_node *n, ts_value *v, ts_dtype dt)
{
    ts_dim c = ts_dim_const(1);
    ts_err err = {0};
    for (int i = 0; i < v->type.rank; i++)
        if (ts_dim_mul(onnx_graph(n)->syms, c, v->type.dims[i], &c, &err) != TS_OK) {
            onnx_fail(n, err.code, "%s", err.msg);
            return NULL;
        }
    return ts_dim_is_const(c) ? scalar(n, dt, (double)c.c) : cast_to(n, onnx_dim_scalar(n, c), dt);
}

/* ---- the shared loss --------------------------------------------------------- */

/* What a loss node asks for beyond its log-probabilities. */
typedef struct loss_spec {
    ts_value *target;          /* [N, d1, ...], integer */
    ts_value *weight;          /* [C] or NULL */
    const char *reduction;     /* none, sum, mean */
    bool has_ii;
    int64_t ii;                /* ignore_index, when has_ii */
} loss_spec;

static ts_status loss_read(onnx_node *n, ts_value *x, loss_spec *s)
{
    s->target = onnx_input(n, 1);
    s->weight = onnx_has_input(n, 2) ? onnx_input(n, 2) : NULL;
    s->reduction = onnx_attr_string(n, "reduction", "mean");
    s->has_ii = onnx_has_attr(n, "ignore_index");
    s->ii = onnx_attr_int(n, "ignore_index", 0);
    TS_TRY(onnx_status(n));
    if (strcmp(s->reduction, "none") != 0 && strcmp(s->reduction, "sum") != 0 && strcmp(s->reduction, "mean") != 0)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "reduction '%s' is not one of none, sum, mean", s->reduction);
    if (x->type.rank < 2 || s->target->type.rank != x->type.rank - 1)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "input of rank %d needs rank >= 2 and a target of rank %d (got %d)",
                         x->type.rank, x->type.rank - 1, s->target->type.rank);
    if (!ts_dtype_is_int(s->target->type.dtype))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "target must be an integer tensor, got %s", ts_dtype_name(s->target->type.dtype));
    if (s->weight && s->weight->type.rank != 1)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "weight must be a vector [C], got rank %d", s->weight->type.rank);
    return TS_OK;
}

/* The class axis of a one-hot mask [N, C, d1, ...]: true where the class
 * index equals the target. */
static ts_value *one_hot(onnx_node *n, ts_value *x, ts_value *target)
{
    ts_dim dims[TS_MAX_RANK];
    int r = x->type.rank;
    dims[0] = target->type.dims[0];
    dims[1] = ts_dim_const(1);
    for (int i = 2; i < r; i++) dims[i] = target->type.dims[i - 1];
    ts_value *t = ts_b_reshape(onnx_b(n), target, r, dims);
    return bin(n, TS_OP_EQ, ts_b_iota(onnx_b(n), target->type.dtype, r, x->type.dims, 1), t);
}

/* The entries of v [N, C, ...] (or of a [C] vector laid along axis 1)
 * that the mask selects, summed over the class axis: [N, d1, ...]. */
static ts_value *pick(onnx_node *n, ts_value *hot, ts_value *v)
{
    int64_t axis = 1;
    if (!hot || !v) return NULL;
    if (v->type.rank == 1) {   /* a weight [C]: lay it along axis 1 */
        ts_dim dims[TS_MAX_RANK];
        for (int i = 0; i < hot->type.rank; i++) dims[i] = i == 1 ? v->type.dims[0] : ts_dim_const(1);
        v = ts_b_reshape(onnx_b(n), v, hot->type.rank, dims);
    }
    ts_value *zero = scalar(n, v ? v->type.dtype : TS_DTYPE_F32, 0);
    return ts_b_reduce(onnx_b(n), TS_OP_REDUCE_SUM, sel(n, hot, v, zero), 1, &axis, false);
}

/* -lp[n, target, d...] * weight[target], 0 where target == ignore_index,
 * then reduced: mean divides by the sum of the weights applied (the
 * element count when there are no weights and nothing is ignored). */
static ts_value *nll(onnx_node *n, ts_value *lp, const loss_spec *s)
{
    ts_dtype dt = lp->type.dtype;
    ts_value *hot = one_hot(n, lp, s->target);
    ts_value *loss = ts_b_unary(onnx_b(n), TS_OP_NEG, pick(n, hot, lp));
    ts_value *w = s->weight ? pick(n, hot, cast_to(n, s->weight, dt)) : NULL;
    if (w) loss = bin(n, TS_OP_MUL, loss, w);
    if (s->has_ii) {
        /* a select, not a product: an ignored -inf log-probability times 0 would be NaN */
        ts_value *keep = bin(n, TS_OP_NE, s->target, scalar(n, s->target->type.dtype, (double)s->ii));
        loss = sel(n, keep, loss, scalar(n, dt, 0));
        w = sel(n, keep, w ? w : scalar(n, dt, 1), scalar(n, dt, 0));
    }
    if (strcmp(s->reduction, "none") == 0) return loss;
    if (strcmp(s->reduction, "sum") == 0) return sum_all(n, loss);
    return bin(n, TS_OP_DIV, sum_all(n, loss), w ? sum_all(n, w) : count_of(n, s->target, dt));
}

/* ---- operators ------------------------------------------------------------------ */

static ts_value *float_input(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    if (x && !ts_dtype_is_float(x->type.dtype)) {
        onnx_unsupported(n, "%s input: only float inputs are defined", ts_dtype_name(x->type.dtype));
        return NULL;
    }
    return x;
}

static ts_status onnx_nll_loss(onnx_node *n)
{
    ts_value *x = float_input(n);
    loss_spec s;
    TS_TRY(onnx_status(n));
    TS_TRY(loss_read(n, x, &s));
    ts_dtype dt = x->type.dtype;
    return onnx_set_out(n, 0, cast_to(n, nll(n, cast_to(n, x, compute_dtype(dt)), &s), dt));
}

/* log_softmax over the class axis, then the NLL loss of it; output 1 is
 * the log-probabilities. */
static ts_status onnx_softmax_ce_loss(onnx_node *n)
{
    ts_value *x = float_input(n);
    loss_spec s;
    TS_TRY(onnx_status(n));
    TS_TRY(loss_read(n, x, &s));
    ts_dtype dt = x->type.dtype;
    ts_builder *b = onnx_b(n);
    int64_t axis = 1;
    ts_value *xc = cast_to(n, x, compute_dtype(dt));
    ts_value *sh = bin(n, TS_OP_SUB, xc, ts_b_reduce(b, TS_OP_REDUCE_MAX, xc, 1, &axis, true));
    ts_value *lse = ts_b_unary(b, TS_OP_LOG, ts_b_reduce(b, TS_OP_REDUCE_SUM, ts_b_unary(b, TS_OP_EXP, sh), 1, &axis, true));
    ts_value *lp = bin(n, TS_OP_SUB, sh, lse);
    TS_TRY(onnx_status(n));
    onnx_set_out(n, 1, cast_to(n, lp, dt));
    return onnx_set_out(n, 0, cast_to(n, nll(n, lp, &s), dt));
}

const onnx_op_entry onnx_ops_loss[] = {
    {"NegativeLogLikelihoodLoss", 12, INT_MAX, onnx_nll_loss},
    {"SoftmaxCrossEntropyLoss", 12, INT_MAX, onnx_softmax_ce_loss},
    {NULL, 0, 0, NULL},
};
