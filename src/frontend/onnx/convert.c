/* convert.c — ONNX's conversion rules (Cast, CastLike, QuantizeLinear to
 * float8) on top of the `cast` primitive, which rounds once to nearest
 * even and does not saturate floats (docs/primitives.md):
 *
 * - float8 with saturate=1 (the default): clamp to the format's largest
 *   finite value first; NaN passes the clamp (max/min keep NaN), inf
 *   becomes the largest value, as the ONNX reference's clip does.
 * - f8e8m0: the reference works on the f32 bits (exponent field, rounding
 *   by the mantissa field); so does this, with integer primitives, for each
 *   round_mode.
 * - 4- and 2-bit integers from floats: truncate to i64, then wrap to the
 *   width (the reference's astype gives -9.0 -> 7 for int4).
 */
#include "frontend/onnx/ops_util.h"

#include <string.h>

static double f8_max(ts_dtype dt)
{
    switch (dt) {
    case TS_DTYPE_F8E4M3FN: return 448.0;
    case TS_DTYPE_F8E4M3FNUZ: return 240.0;
    default: return 57344.0;   /* e5m2 and e5m2fnuz */
    }
}

ts_value *onnx_util_bitcast(onnx_node *n, ts_value *x, ts_dtype dt)
{
    if (!x) return NULL;
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_BITCAST);
    if (!a || !onnx_util_set_ok(n, ts_attr_set_dtype(onnx_graph(n), TS_OP_BITCAST, a, "dtype", dt))) return NULL;
    return ts_b_node(onnx_b(n), TS_OP_BITCAST, 1, &x, a);
}

static ts_value *u32c(ts_builder *b, double v) { return ts_b_scalar(b, TS_DTYPE_U32, v); }
static ts_value *bin(ts_builder *b, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(b, op, x, y); }

/* f8e8m0 the way onnx.numpy_helper.to_float8e8m0 computes it. */
static ts_value *to_e8m0(onnx_node *n, ts_value *x, bool saturate, const char *mode)
{
    ts_builder *b = onnx_b(n);
    ts_value *bits = onnx_util_bitcast(n, ts_b_cast(b, x, TS_DTYPE_F32), TS_DTYPE_U32);
    ts_value *ex = bin(b, TS_OP_AND, bin(b, TS_OP_SHR, bits, u32c(b, 23)), u32c(b, 0xff));
    ts_value *special = bin(b, TS_OP_EQ, ex, u32c(b, 0xff));
    ts_value *up;
    if (strcmp(mode, "up") == 0) {
        up = bin(b, TS_OP_NE, bin(b, TS_OP_AND, bits, u32c(b, 0x7fffff)), u32c(b, 0));
    } else if (strcmp(mode, "nearest") == 0) {
        /* guard bit set, and round, sticky or "lsb" (a normal exponent) set */
        ts_value *g = bin(b, TS_OP_NE, bin(b, TS_OP_AND, bits, u32c(b, 0x400000)), u32c(b, 0));
        ts_value *rest = bin(b, TS_OP_NE, bin(b, TS_OP_AND, bits, u32c(b, 0x3fffff)), u32c(b, 0));
        up = bin(b, TS_OP_AND, g, bin(b, TS_OP_OR, rest, bin(b, TS_OP_NE, ex, u32c(b, 0))));
    } else if (strcmp(mode, "down") == 0) {
        up = NULL;
    } else {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "round_mode \"%s\" is not up, down or nearest", mode);
        return NULL;
    }
    if (up && saturate) up = bin(b, TS_OP_AND, up, bin(b, TS_OP_NE, ex, u32c(b, 0xfe)));
    if (up) ex = bin(b, TS_OP_ADD, ex, ts_b_cast(b, up, TS_DTYPE_U32));
    ex = ts_b_select(b, special, u32c(b, 0xff), ex);
    return onnx_util_bitcast(n, ts_b_cast(b, ex, TS_DTYPE_U8), TS_DTYPE_F8E8M0);
}

ts_value *onnx_util_convert(onnx_node *n, ts_value *x, ts_dtype to, bool saturate, const char *round_mode)
{
    ts_builder *b = onnx_b(n);
    if (!x || x->type.dtype == to) return x;
    ts_dtype from = x->type.dtype;
    if (to == TS_DTYPE_F8E8M0) return to_e8m0(n, x, saturate, round_mode ? round_mode : "up");
    bool f8 = ts_dtype_is_small_float(to) && to != TS_DTYPE_F4E2M1;
    if (f8 && saturate && from != TS_DTYPE_BOOL) {
        /* integers are clamped as f32: every value in the range is exact there */
        ts_value *v = ts_dtype_is_fp(from) ? x : ts_b_cast(b, x, TS_DTYPE_F32);
        if (v && ts_dtype_is_storage(v->type.dtype)) v = ts_b_cast(b, v, TS_DTYPE_F32);
        if (!v) return NULL;   /* the builder has failed: its error stands */
        ts_dtype vd = v->type.dtype;
        v = bin(b, TS_OP_MIN, bin(b, TS_OP_MAX, v, ts_b_scalar(b, vd, -f8_max(to))), ts_b_scalar(b, vd, f8_max(to)));
        return ts_b_cast(b, v, to);
    }
    bool narrow_int = ts_dtype_is_storage(to) && !ts_dtype_is_small_float(to);
    if (narrow_int && ts_dtype_is_fp(from)) return ts_b_cast(b, ts_b_cast(b, x, TS_DTYPE_I64), to);
    return ts_b_cast(b, x, to);
}
