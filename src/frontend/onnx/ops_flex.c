/* ops_flex.c — operators of domain ai.onnx.preview: FlexAttention,
 * assembled from dot, reductions and elementwise primitives, with its
 * score_mod and prob_mod graphs built inline on the whole score / probability
 * tensor (they are functions of one tensor, applied once).
 *
 * As the reference: Q and K are each multiplied by sqrt(scale) (rounded to
 * the input dtype), the product is taken in the input dtype, then scores,
 * softmax, the modifiers and the product with V are in the softmax
 * precision (f32 for f16/bf16/f32 inputs, f64 for f64 unless
 * softmax_precision says otherwise), and Y is rounded to V's dtype. */
#include "frontend/onnx/onnx.h"
#include "frontend/onnx/ops_util.h"

#include <math.h>

/* ---- helpers ------------------------------------------------------------------- */

static ts_value *cast(onnx_node *n, ts_value *x, ts_dtype dt)
{
    return x && x->type.dtype != dt ? ts_b_cast(onnx_b(n), x, dt) : x;
}

/* a and b are constants that differ (symbolic dims meet in the dots, which
 * check them). */
static bool dims_clash(ts_dim a, ts_dim b) { return ts_dim_is_const(a) && ts_dim_is_const(b) && a.c != b.c; }

/* Q, K, V: rank 4, one float dtype, matching batch, heads, lengths and
 * head sizes; *rep: query heads per kv head. */
static ts_status flex_read(onnx_node *n, ts_value **q, ts_value **k, ts_value **v, int64_t *rep)
{
    *q = onnx_float_input(n, 0);
    *k = onnx_float_input(n, 1);
    *v = onnx_float_input(n, 2);
    TS_TRY(onnx_status(n));
    const ts_type *tq = &(*q)->type, *tk = &(*k)->type, *tv = &(*v)->type;
    if (tq->rank != 4 || tk->rank != 4 || tv->rank != 4)
        return onnx_fail(n, TS_ERR_SHAPE, "Q, K and V must be 4-D [batch, heads, sequence, head size] (ranks %d, %d, %d)",
                         tq->rank, tk->rank, tv->rank);
    if (tk->dtype != tq->dtype || tv->dtype != tq->dtype)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "Q, K and V must have one dtype (%s, %s, %s)", ts_dtype_name(tq->dtype),
                         ts_dtype_name(tk->dtype), ts_dtype_name(tv->dtype));
    if (dims_clash(tq->dims[0], tk->dims[0]) || dims_clash(tq->dims[0], tv->dims[0]))
        return onnx_fail(n, TS_ERR_SHAPE, "Q, K and V must have the same batch size");
    if (dims_clash(tk->dims[1], tv->dims[1]) || dims_clash(tk->dims[2], tv->dims[2]))
        return onnx_fail(n, TS_ERR_SHAPE, "K and V must have the same heads and sequence length");
    if (dims_clash(tq->dims[3], tk->dims[3]))
        return onnx_fail(n, TS_ERR_SHAPE, "Q and K must have the same head size (%lld, %lld)", (long long)tq->dims[3].c,
                         (long long)tk->dims[3].c);
    return onnx_util_heads_ratio(n, tq->dims[1], tk->dims[1], rep);
}

/* sqrt(scale) in Q's dtype; scale defaults to 1/sqrt(head size). The
 * reference takes the root of scale rounded to f32. */
static ts_value *root_scale(onnx_node *n, ts_value *q)
{
    double scale;
    ts_dim e = q->type.dims[3];
    if (onnx_has_attr(n, "scale")) {
        scale = onnx_attr_float(n, "scale", 1.0);
    } else if (ts_dim_is_const(e) && e.c > 0) {
        scale = 1.0 / sqrt((double)e.c);
    } else {
        onnx_unsupported(n, "a symbolic head size without the scale attribute");
        return NULL;
    }
    return ts_b_scalar(onnx_b(n), q->type.dtype, sqrtf((float)scale));
}

/* softmax_precision, or f32 for inputs narrower than f32. */
static ts_status softmax_dtype(onnx_node *n, ts_dtype dt, ts_dtype *out)
{
    *out = dt == TS_DTYPE_F64 ? TS_DTYPE_F64 : TS_DTYPE_F32;
    if (!onnx_has_attr(n, "softmax_precision")) return onnx_status(n);
    ts_err err = {0};
    int64_t t = onnx_attr_int(n, "softmax_precision", 1);
    TS_TRY(onnx_status(n));
    if (t < 0 || t > INT_MAX || onnx_dtype((int)t, out, &err) != TS_OK || !ts_dtype_is_float(*out))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "softmax_precision %lld is not a float type", (long long)t);
    return TS_OK;
}

/* The graph attribute `attr` applied to x (when the node has it): one
 * input, one output of x's shape; the result in x's dtype, as the
 * reference converts it. */
static ts_value *modifier(onnx_node *n, const char *attr, ts_value *x)
{
    if (!x || !onnx_has_attr(n, attr)) return x;
    int count;
    ts_value **res;
    if (onnx_inline_graph(n, attr, 1, &x, &count, &res) != TS_OK) return NULL;
    if (count != 1) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "%s must have one output, it has %d", attr, count);
        return NULL;
    }
    ts_value *y = res[0];
    bool same = y->type.rank == x->type.rank;
    for (int i = 0; same && i < x->type.rank; i++) same = ts_dim_eq(y->type.dims[i], x->type.dims[i]);
    if (!same) {
        onnx_fail(n, TS_ERR_SHAPE, "%s must keep the shape of its input (rank %d in, rank %d out)", attr, x->type.rank,
                  y->type.rank);
        return NULL;
    }
    if (!ts_dtype_is_float(y->type.dtype)) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "%s returns %s; a float type is expected", attr, ts_dtype_name(y->type.dtype));
        return NULL;
    }
    return cast(n, y, x->type.dtype);
}

/* ---- FlexAttention ----------------------------------------------------------------------- */

/* FlexAttention (1): Y = prob_mod(softmax(score_mod(Q K^T * scale))) V. */
static ts_status onnx_flex_attention(onnx_node *n)
{
    ts_value *q, *k, *v;
    int64_t rep;
    ts_dtype sdt;
    TS_TRY(flex_read(n, &q, &k, &v, &rep));
    TS_TRY(softmax_dtype(n, q->type.dtype, &sdt));
    ts_value *s = root_scale(n, q);
    ts_builder *b = onnx_b(n);
    ts_value *qk = onnx_util_gqa_dot(n, ts_b_binary(b, TS_OP_MUL, q, s), ts_b_binary(b, TS_OP_MUL, k, s), rep, 3);
    ts_value *scores = modifier(n, "score_mod", cast(n, qk, sdt));
    ts_value *probs = modifier(n, "prob_mod", onnx_util_softmax_last(n, scores));
    ts_value *y = onnx_util_gqa_dot(n, probs, cast(n, v, sdt), rep, 2);
    return onnx_set_out(n, 0, cast(n, y, v->type.dtype));
}

const onnx_op_entry onnx_ops_preview[] = {
    {"FlexAttention", 1, INT_MAX, onnx_flex_attention},
    {NULL, 0, 0, NULL},
};
