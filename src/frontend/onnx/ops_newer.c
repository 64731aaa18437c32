/* ops_newer.c — ONNX CumProd, BitCast (opset 26) and TensorScatter
 * (opset 24), assembled from cumulative, bitcast/cast and scatter. */
#include "frontend/onnx/ops_util.h"

#include <string.h>

/* ---- helpers --------------------------------------------------------------- */

static ts_value *bin(onnx_node *n, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(onnx_b(n), op, x, y); }

/* ---- CumProd ------------------------------------------------------------------ */

/* As CumSum, with the running product: cumulative {kind=prod}. */
static ts_status onnx_cumprod(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    const int64_t *ax;
    int cnt;
    TS_TRY(onnx_status(n));
    TS_TRY(onnx_const_ints(n, 1, &ax, &cnt));
    if (cnt != 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "axis must be a scalar, got %d values", cnt);
    int64_t axis;
    TS_TRY(onnx_axis(n, ax[0], x->type.rank, &axis));
    ts_op op = TS_OP_CUMULATIVE;
    ts_graph *g = onnx_graph(n);
    ts_attr *a = ts_b_attrs(onnx_b(n), op);
    if (!a) return onnx_status(n);
    if (ts_attr_set_enum(g, op, a, "kind", "prod") != TS_OK || ts_attr_set_int(g, op, a, "axis", axis) != TS_OK ||
        ts_attr_set_int(g, op, a, "exclusive", onnx_attr_int(n, "exclusive", 0) != 0) != TS_OK ||
        ts_attr_set_int(g, op, a, "reverse", onnx_attr_int(n, "reverse", 0) != 0) != TS_OK)
        return onnx_fail(n, TS_ERR_INTERNAL, "cannot set the attributes of cumulative");
    return onnx_set_out(n, 0, ts_b_node(onnx_b(n), op, 1, &x, a));
}

/* ---- BitCast ---------------------------------------------------------------------- */

/* The bits of x read as `to`. bool's bits are the values 0 and 1, so to
 * or from bool (which the bitcast primitive excludes) a value cast says
 * the same; a byte other than 0 or 1 read as bool is true either way. */
static ts_status onnx_bitcast(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    int64_t to = onnx_attr_int(n, "to", 0);
    TS_TRY(onnx_status(n));
    ts_dtype dt;
    ts_err err = {0};
    if (onnx_dtype((int)to, &dt, &err) != TS_OK) return onnx_unsupported(n, "target type: %s", err.msg);
    ts_dtype from = x->type.dtype;
    if (ts_dtype_bits(from) != ts_dtype_bits(dt))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "%s (%d bits) and %s (%d bits) differ in width", ts_dtype_name(from),
                         ts_dtype_bits(from), ts_dtype_name(dt), ts_dtype_bits(dt));
    if (from == dt) return onnx_set_out(n, 0, x);
    if (from == TS_DTYPE_BOOL || dt == TS_DTYPE_BOOL) return onnx_set_out(n, 0, ts_b_cast(onnx_b(n), x, dt));
    return onnx_set_out(n, 0, onnx_util_bitcast(n, x, dt));
}

/* ---- TensorScatter ---------------------------------------------------------------- */

/* An i64 scalar holding dim d. */
static ts_value *dim_value(onnx_node *n, ts_dim d)
{
    return ts_dim_is_const(d) ? ts_b_scalar(onnx_b(n), TS_DTYPE_I64, (double)d.c) : onnx_dim_scalar(n, d);
}

/* The cache position along `axis` of each update element: write index
 * of its batch entry + its own position, wrapped (circular) or marked -1
 * when it falls off the end (linear) so that the scatter fails loudly
 * instead of spilling into the next row. */
static ts_value *write_pos(onnx_node *n, ts_value *past, ts_value *upd, int axis, bool circular)
{
    const ts_type *t = &upd->type;
    ts_dim one = ts_dim_const(1), bd[TS_MAX_RANK];
    ts_value *pos = ts_b_iota(onnx_b(n), TS_DTYPE_I64, t->rank, t->dims, axis);
    if (onnx_has_input(n, 2)) {
        for (int i = 0; i < t->rank; i++) bd[i] = i == 0 ? t->dims[0] : one;
        ts_value *w = ts_b_cast(onnx_b(n), onnx_input(n, 2), TS_DTYPE_I64);
        pos = bin(n, TS_OP_ADD, pos, ts_b_reshape(onnx_b(n), w, t->rank, bd));
    }
    ts_value *max = dim_value(n, past->type.dims[axis]);
    if (circular) {            /* a floor modulo: rem, then shift negatives up */
        ts_value *r = bin(n, TS_OP_REM, pos, max);
        ts_value *neg = bin(n, TS_OP_LT, r, ts_b_scalar(onnx_b(n), TS_DTYPE_I64, 0));
        return ts_b_select(onnx_b(n), neg, bin(n, TS_OP_ADD, r, max), r);
    }
    ts_value *ok = bin(n, TS_OP_LT, pos, max);
    return ts_b_select(onnx_b(n), ok, pos, ts_b_scalar(onnx_b(n), TS_DTYPE_I64, -1));
}

/* Row-major flat positions in past of the update elements: the update's
 * own coordinates, with `pos` on the sequence axis. A -1 in pos stays
 * negative (out of range). */
static ts_value *flat_index(onnx_node *n, ts_value *past, ts_value *upd, int axis, ts_value *pos)
{
    const ts_type *t = &upd->type;
    ts_value *flat = NULL;
    for (int i = 0; i < t->rank; i++) {
        ts_value *c = i == axis ? pos : ts_b_iota(onnx_b(n), TS_DTYPE_I64, t->rank, t->dims, i);
        flat = flat ? bin(n, TS_OP_ADD, bin(n, TS_OP_MUL, flat, dim_value(n, past->type.dims[i])), c) : c;
    }
    if (pos && flat) {
        ts_value *bad = bin(n, TS_OP_LT, pos, ts_b_scalar(onnx_b(n), TS_DTYPE_I64, 0));
        flat = ts_b_select(onnx_b(n), bad, pos, flat);
    }
    return flat;
}

/* past_cache with update written along `axis` at each batch entry's write
 * index: one scatter {set} at computed flat positions. */
static ts_status onnx_tensor_scatter(onnx_node *n)
{
    ts_value *past = onnx_input(n, 0), *upd = onnx_input(n, 1);
    const char *mode = onnx_attr_string(n, "mode", "linear");
    int64_t axis = onnx_attr_int(n, "axis", -2);
    TS_TRY(onnx_status(n));
    int r = past->type.rank;
    if (upd->type.rank != r || upd->type.dtype != past->type.dtype)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "update must have past_cache's rank and type");
    TS_TRY(onnx_axis(n, axis, r, &axis));
    if (axis == 0) return onnx_fail(n, TS_ERR_INVALID_MODEL, "axis cannot be 0 (the batch axis)");
    bool circular = strcmp(mode, "circular") == 0;
    if (!circular && strcmp(mode, "linear") != 0)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "mode '%s' is not linear or circular", mode);
    ts_value *pos = write_pos(n, past, upd, (int)axis, circular);
    ts_value *in[3] = {past, flat_index(n, past, upd, (int)axis, pos), upd};
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_SCATTER);
    if (!a || ts_attr_set_enum(onnx_graph(n), TS_OP_SCATTER, a, "combine", "set") != TS_OK)
        return onnx_fail(n, TS_ERR_INTERNAL, "cannot set the attributes of scatter");
    return onnx_set_out(n, 0, ts_b_node(onnx_b(n), TS_OP_SCATTER, 3, in, a));
}

const onnx_op_entry onnx_ops_newer[] = {
    {"BitCast", 26, INT_MAX, onnx_bitcast},
    {"CumProd", 26, INT_MAX, onnx_cumprod},
    {"TensorScatter", 24, INT_MAX, onnx_tensor_scatter},
    {NULL, 0, 0, NULL},
};
