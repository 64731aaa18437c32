/* ops_quant.c — ONNX quantization operators, assembled from primitives.
 *
 * Quantizing is round-half-even of x/scale, plus the zero point, then a
 * cast: the `cast` primitive saturates floats to the integer range, which
 * is exactly ONNX's saturation to u8/i8/u16/i16 (NaN gives 0). Integer
 * matmul and conv cast to i32 first (the contraction primitives wrap in
 * their dtype, and the sums of 8-bit products fit). The requantizing
 * products follow the ONNX reference: the multiplier in the scale's dtype,
 * the product with the i32 accumulator in f64.
 *
 * The 4- and 2-bit integers quantize the same way (the cast saturates to
 * their width too). float8 targets take the saturating conversion of
 * x/scale with no rounding to integers, f4e2m1 the plain cast of
 * x/scale + zp, as the reference does; dequantizing any of them is the
 * same (x - zp) * scale after a cast.
 */
#include "frontend/onnx/ops_util.h"

#include <string.h>

/* ---- small helpers ------------------------------------------------------------ */

static ts_value *opt_input(onnx_node *n, int i) { return onnx_has_input(n, i) ? onnx_input(n, i) : NULL; }

static ts_value *bin(ts_builder *b, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(b, op, x, y); }

static ts_value *as(ts_builder *b, ts_value *x, ts_dtype dt)
{
    return !x ? NULL : x->type.dtype == dt ? x : ts_b_cast(b, x, dt);
}

static bool numel_is_one(const ts_value *v)
{
    for (int i = 0; i < v->type.rank; i++)
        if (!ts_dim_eq(v->type.dims[i], ts_dim_const(1))) return false;
    return true;
}

/* The wider float type of a and b (f16 with bf16 gives f32). */
static ts_dtype wider(ts_dtype a, ts_dtype b)
{
    if (a == b) return a;
    if (a == TS_DTYPE_F64 || b == TS_DTYPE_F64) return TS_DTYPE_F64;
    return TS_DTYPE_F32;
}

static bool quant_int(ts_dtype dt)
{
    switch (dt) {
    case TS_DTYPE_U8: case TS_DTYPE_I8: case TS_DTYPE_U16: case TS_DTYPE_I16:
    case TS_DTYPE_U4: case TS_DTYPE_I4: case TS_DTYPE_U2: case TS_DTYPE_I2:
        return true;
    default:
        return false;
    }
}

/* ---- scale and zero-point layout ------------------------------------------------------ */

/* v repeated `block` times along axis and cut to `size`: blocked
 * quantization's parameters, made to x's shape. */
static ts_value *repeat_blocks(ts_builder *b, ts_value *v, int axis, int64_t block, ts_dim size)
{
    int r = v->type.rank;
    ts_dim d[TS_MAX_RANK], e[TS_MAX_RANK];
    if (r >= TS_MAX_RANK || !ts_dim_is_const(v->type.dims[axis])) return NULL;
    for (int i = 0, k = 0; i < r; i++) {
        d[k] = v->type.dims[i];
        e[k++] = v->type.dims[i];
        if (i == axis) {
            d[k] = ts_dim_const(1);
            e[k++] = ts_dim_const(block);
        }
    }
    ts_value *x = ts_b_broadcast_to(b, ts_b_reshape(b, v, r + 1, d), r + 1, e);
    ts_dim m[TS_MAX_RANK], st[TS_MAX_RANK];
    memcpy(m, v->type.dims, sizeof(ts_dim) * (size_t)r);
    m[axis] = ts_dim_const(m[axis].c * block);
    x = ts_b_reshape(b, x, r, m);
    for (int i = 0; i < r; i++) st[i] = ts_dim_const(0);
    m[axis] = size;
    return ts_b_slice(b, x, st, m, NULL);
}

/* A scale or zero point made broadcastable against x: a scalar (or one
 * element) as is, a 1-D per-axis vector along `axis`, a blocked tensor
 * repeated along `axis`. */
static ts_value *layout(onnx_node *n, ts_value *v, const ts_value *x, int64_t axis, int64_t block)
{
    ts_builder *b = onnx_b(n);
    if (!v || v->type.rank == 0) return v;
    if (numel_is_one(v)) return ts_b_reshape(b, v, 0, NULL);
    int64_t ax;
    if (onnx_axis(n, axis, x->type.rank, &ax) != TS_OK) return NULL;
    if (block > 0) {
        if (v->type.rank != x->type.rank) {
            onnx_fail(n, TS_ERR_SHAPE, "blocked quantization needs scale of x's rank");
            return NULL;
        }
        ts_value *r = repeat_blocks(b, v, (int)ax, block, x->type.dims[ax]);
        if (!r) onnx_unsupported(n, "blocked quantization along a symbolic axis (or of rank %d)", x->type.rank);
        return r;
    }
    if (v->type.rank != 1) {
        onnx_fail(n, TS_ERR_SHAPE, "a per-axis scale or zero point must be 1-D");
        return NULL;
    }
    ts_dim d[TS_MAX_RANK];
    for (int i = 0; i < x->type.rank; i++) d[i] = i == ax ? v->type.dims[0] : ts_dim_const(1);
    return ts_b_reshape(b, v, x->type.rank, d);
}

/* ---- QuantizeLinear, DequantizeLinear ------------------------------------------------- */

/* cast_to(round(x / scale) + zp): the division in `prec`, the sum in f32
 * (f64 when prec is), where the rounded quotient and every zero point are
 * exact. */
static ts_value *quantize(ts_builder *b, ts_value *x, ts_value *scale, ts_value *zp, ts_dtype prec, ts_dtype to)
{
    ts_dtype acc = prec == TS_DTYPE_F64 ? TS_DTYPE_F64 : TS_DTYPE_F32;
    ts_value *q = ts_b_unary(b, TS_OP_ROUND, bin(b, TS_OP_DIV, as(b, x, prec), as(b, scale, prec)));
    q = as(b, q, acc);
    if (zp) q = bin(b, TS_OP_ADD, q, as(b, zp, acc));
    return as(b, q, to);
}

/* The output dtype: y_zero_point's, else output_dtype, else u8. */
static ts_status quant_dtype(onnx_node *n, ts_value *zp, ts_dtype *to)
{
    *to = TS_DTYPE_U8;
    int64_t od = onnx_attr_int(n, "output_dtype", 0);
    if (zp) *to = zp->type.dtype;
    else if (od) {
        ts_err err = {0};
        if (onnx_dtype((int)od, to, &err) != TS_OK) return onnx_unsupported(n, "output_dtype: %s", err.msg);
    }
    if (!quant_int(*to) && !ts_dtype_is_small_float(*to))
        return onnx_unsupported(n, "quantizing to %s", ts_dtype_name(*to));
    return onnx_status(n);
}

/* QuantizeLinear-10..25: per-tensor, per-axis and blocked (21+). */
static ts_status onnx_quantize_linear(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *scale = onnx_input(n, 1), *zp = opt_input(n, 2);
    TS_TRY(onnx_status(n));
    /* an i32 x (opset 10+) is divided in f64, as the reference's numpy does */
    ts_dtype xd = ts_dtype_is_float(x->type.dtype) ? x->type.dtype : TS_DTYPE_F64;
    ts_dtype to, prec = wider(xd, scale->type.dtype);
    TS_TRY(quant_dtype(n, zp, &to));
    int64_t p = onnx_attr_int(n, "precision", 0), axis = onnx_attr_int(n, "axis", 1);
    int64_t block = onnx_attr_int(n, "block_size", 0);
    ts_err err = {0};
    if (p && onnx_dtype((int)p, &prec, &err) != TS_OK) return onnx_unsupported(n, "precision: %s", err.msg);
    if ((!ts_dtype_is_float(x->type.dtype) && x->type.dtype != TS_DTYPE_I32) || !ts_dtype_is_float(prec))
        return onnx_unsupported(n, "quantizing %s in %s (float or i32 x, float precision)", ts_dtype_name(x->type.dtype),
                                ts_dtype_name(prec));
    scale = layout(n, scale, x, axis, block);
    if (zp) zp = layout(n, zp, x, axis, block);
    TS_TRY(onnx_status(n));
    if (ts_dtype_is_small_float(to)) {
        ts_builder *b = onnx_b(n);
        ts_value *q = bin(b, TS_OP_DIV, as(b, x, prec), as(b, scale, prec));
        if (to == TS_DTYPE_F4E2M1) {
            if (zp) q = bin(b, TS_OP_ADD, q, as(b, zp, prec));
            n->out[0] = as(b, q, to);
        } else {   /* the zero point of a float8 type must be 0: the reference ignores it */
            n->out[0] = onnx_util_convert(n, q, to, onnx_attr_int(n, "saturate", 1) != 0, NULL);
        }
        return onnx_status(n);
    }
    onnx_attr_ignore(n, "saturate");   /* "only applies for float 8 quantization" */
    n->out[0] = quantize(onnx_b(n), x, scale, zp, prec, to);
    return onnx_status(n);
}

/* DequantizeLinear-10..25: (x - zp) * scale, in f32 as the reference does
 * (f64 when the scale or output is f64). */
static ts_status onnx_dequantize_linear(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    ts_value *x = onnx_input(n, 0), *scale = onnx_input(n, 1), *zp = opt_input(n, 2);
    TS_TRY(onnx_status(n));
    ts_dtype to = scale->type.dtype;
    int64_t od = onnx_attr_int(n, "output_dtype", 0), axis = onnx_attr_int(n, "axis", 1);
    int64_t block = onnx_attr_int(n, "block_size", 0);
    ts_err err = {0};
    if (od && onnx_dtype((int)od, &to, &err) != TS_OK) return onnx_unsupported(n, "output_dtype: %s", err.msg);
    if (!ts_dtype_is_float(to)) return onnx_unsupported(n, "dequantizing to %s", ts_dtype_name(to));
    ts_dtype acc = to == TS_DTYPE_F64 || scale->type.dtype == TS_DTYPE_F64 ? TS_DTYPE_F64 : TS_DTYPE_F32;
    scale = layout(n, scale, x, axis, block);
    if (zp) zp = layout(n, zp, x, axis, block);
    TS_TRY(onnx_status(n));
    ts_value *dx = as(b, x, acc);
    if (zp) dx = bin(b, TS_OP_SUB, dx, as(b, zp, acc));
    n->out[0] = as(b, bin(b, TS_OP_MUL, dx, as(b, scale, acc)), to);
    return onnx_status(n);
}

/* DynamicQuantizeLinear-11: u8 over the range of x widened to hold 0. */
static ts_status onnx_dynamic_quantize_linear(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    ts_value *x = onnx_input(n, 0);
    TS_TRY(onnx_status(n));
    if (x->type.dtype != TS_DTYPE_F32) return onnx_unsupported(n, "x of dtype %s (f32 only)", ts_dtype_name(x->type.dtype));
    int64_t axes[TS_MAX_RANK];
    for (int i = 0; i < x->type.rank; i++) axes[i] = i;
    ts_value *zero = ts_b_scalar(b, TS_DTYPE_F32, 0), *qmax = ts_b_scalar(b, TS_DTYPE_F32, 255);
    ts_value *lo = bin(b, TS_OP_MIN, ts_b_reduce(b, TS_OP_REDUCE_MIN, x, x->type.rank, axes, false), zero);
    ts_value *hi = bin(b, TS_OP_MAX, ts_b_reduce(b, TS_OP_REDUCE_MAX, x, x->type.rank, axes, false), zero);
    ts_value *scale = bin(b, TS_OP_DIV, bin(b, TS_OP_SUB, hi, lo), qmax);
    ts_value *zpf = bin(b, TS_OP_SUB, zero, bin(b, TS_OP_DIV, lo, scale));
    zpf = ts_b_unary(b, TS_OP_ROUND, bin(b, TS_OP_MIN, bin(b, TS_OP_MAX, zpf, zero), qmax));
    ts_value *zp = as(b, zpf, TS_DTYPE_U8);
    ts_value *res[3] = {quantize(b, x, scale, zp, TS_DTYPE_F32, TS_DTYPE_U8), scale, zp};
    for (int k = 0; k < n->n_out && k < 3; k++) n->out[k] = res[k];
    return onnx_status(n);
}

/* ---- integer matmul ------------------------------------------------------------------------ */

/* cast_i32(a) - zp, zp a scalar, or 1-D along `axis` counted from the end
 * (per row of A: -2; per column of B: -1). */
static ts_value *centered(onnx_node *n, ts_value *a, ts_value *zp, int from_end)
{
    ts_builder *b = onnx_b(n);
    ts_value *a32 = as(b, a, TS_DTYPE_I32);
    if (!zp || !a32) return a32;
    if (!numel_is_one(zp) && zp->type.rank == 1 && from_end == -2 && a->type.rank >= 2) {
        ts_dim d[2] = {zp->type.dims[0], ts_dim_const(1)};
        zp = ts_b_reshape(b, zp, 2, d);
    } else if (numel_is_one(zp)) {
        zp = ts_b_reshape(b, zp, 0, NULL);
    }
    return bin(b, TS_OP_SUB, a32, as(b, zp, TS_DTYPE_I32));
}

static bool int8ish(ts_dtype dt) { return dt == TS_DTYPE_U8 || dt == TS_DTYPE_I8; }

/* MatMulInteger-10: i32 matmul of the centred operands. */
static ts_status onnx_matmul_integer(onnx_node *n)
{
    ts_value *a = onnx_input(n, 0), *bm = onnx_input(n, 1);
    TS_TRY(onnx_status(n));
    if (!int8ish(a->type.dtype) || !int8ish(bm->type.dtype))
        return onnx_unsupported(n, "MatMulInteger of %s and %s (u8/i8 only)", ts_dtype_name(a->type.dtype),
                                ts_dtype_name(bm->type.dtype));
    ts_value *a32 = centered(n, a, opt_input(n, 2), -2), *b32 = centered(n, bm, opt_input(n, 3), -1);
    n->out[0] = ts_b_matmul(onnx_b(n), a32, b32);
    return onnx_status(n);
}

/* round(acc * multiplier + zp), saturated to `to`: acc i32, multiplier a
 * float in the scales' dtype; the product in f64 as the reference's numpy. */
static ts_value *requantize(ts_builder *b, ts_value *acc, ts_value *mult, ts_value *zp, ts_dtype to)
{
    ts_value *r = bin(b, TS_OP_MUL, as(b, acc, TS_DTYPE_F64), as(b, mult, TS_DTYPE_F64));
    if (zp) r = bin(b, TS_OP_ADD, r, as(b, zp, TS_DTYPE_F64));
    return as(b, ts_b_unary(b, TS_OP_ROUND, r), to);
}

/* A per-row (A) or per-column (B) scale, shaped to broadcast like the zero point. */
static ts_value *scale_for(onnx_node *n, ts_value *s, int from_end)
{
    ts_builder *b = onnx_b(n);
    if (!s || numel_is_one(s)) return s ? ts_b_reshape(b, s, 0, NULL) : NULL;
    if (s->type.rank == 1 && from_end == -2) {
        ts_dim d[2] = {s->type.dims[0], ts_dim_const(1)};
        return ts_b_reshape(b, s, 2, d);
    }
    return s;
}

/* QLinearMatMul-10/21. */
static ts_status onnx_qlinear_matmul(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    ts_value *in[8];
    for (int i = 0; i < 8; i++) in[i] = i == 2 || i == 5 || i == 7 ? opt_input(n, i) : onnx_input(n, i);
    TS_TRY(onnx_status(n));
    ts_dtype to = in[7] ? in[7]->type.dtype : in[0]->type.dtype;
    if (!int8ish(in[0]->type.dtype) || !int8ish(in[3]->type.dtype) || !int8ish(to))
        return onnx_unsupported(n, "QLinearMatMul on %s and %s (u8/i8 only)", ts_dtype_name(in[0]->type.dtype),
                                ts_dtype_name(in[3]->type.dtype));
    ts_value *acc = ts_b_matmul(b, centered(n, in[0], in[2], -2), centered(n, in[3], in[5], -1));
    ts_value *sa = scale_for(n, in[1], -2), *sb = scale_for(n, in[4], -1);
    ts_dtype sd = in[1]->type.dtype;
    ts_value *mult = bin(b, TS_OP_DIV, bin(b, TS_OP_MUL, sa, as(b, sb, sd)), as(b, scale_for(n, in[6], -1), sd));
    n->out[0] = requantize(b, acc, mult, scale_for(n, in[7], -1), to);
    return onnx_status(n);
}

/* ---- integer conv -------------------------------------------------------------------------- */

/* The conv attributes of ONNX's Conv family, resolved against x and w
 * (auto_pad included, which needs constant spatial sizes). */
typedef struct convp {
    int k;
    int64_t strides[TS_MAX_RANK], dil[TS_MAX_RANK], lo[TS_MAX_RANK], hi[TS_MAX_RANK], group;
} convp;

static ts_status same_pads(onnx_node *n, convp *c, const ts_value *x, const int64_t *ks, bool upper)
{
    for (int i = 0; i < c->k; i++) {
        ts_dim in = x->type.dims[2 + i];
        if (!ts_dim_is_const(in)) return onnx_unsupported(n, "auto_pad SAME with a symbolic spatial size");
        int64_t out = (in.c + c->strides[i] - 1) / c->strides[i];
        int64_t total = (out - 1) * c->strides[i] + (ks[i] - 1) * c->dil[i] + 1 - in.c;
        if (total < 0) total = 0;
        c->lo[i] = upper ? total / 2 : total - total / 2;
        c->hi[i] = total - c->lo[i];
    }
    return TS_OK;
}

static ts_status conv_params(onnx_node *n, const ts_value *x, const ts_value *w, convp *c)
{
    c->k = x->type.rank - 2;
    if (c->k < 1 || w->type.rank != x->type.rank) return onnx_fail(n, TS_ERR_SHAPE, "conv needs x and w of one rank >= 3");
    const int64_t *v = NULL;
    int64_t ks[TS_MAX_RANK];
    for (int i = 0; i < c->k; i++) {
        if (!ts_dim_is_const(w->type.dims[2 + i])) return onnx_unsupported(n, "a symbolic kernel size");
        ks[i] = w->type.dims[2 + i].c;
        c->strides[i] = c->dil[i] = 1;
        c->lo[i] = c->hi[i] = 0;
    }
    int cnt = onnx_attr_ints(n, "kernel_shape", &v);   /* restates the weights' kernel */
    for (int i = 0; cnt >= 0 && i < c->k; i++)
        if (cnt != c->k || v[i] != ks[i])
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "kernel_shape does not match the weights' kernel");
    cnt = onnx_attr_ints(n, "strides", &v);
    for (int i = 0; i < cnt && i < c->k; i++) c->strides[i] = v[i];
    cnt = onnx_attr_ints(n, "dilations", &v);
    for (int i = 0; i < cnt && i < c->k; i++) c->dil[i] = v[i];
    c->group = onnx_attr_int(n, "group", 1);
    const char *ap = onnx_attr_string(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0)
        return same_pads(n, c, x, ks, strcmp(ap, "SAME_UPPER") == 0);
    /* pads goes with NOTSET; beside another auto_pad it is not used */
    if (strcmp(ap, "NOTSET") != 0) onnx_attr_ignore(n, "pads");
    if (strcmp(ap, "NOTSET") == 0 && (cnt = onnx_attr_ints(n, "pads", &v)) >= 0) {
        if (cnt != 2 * c->k) return onnx_fail(n, TS_ERR_INVALID_MODEL, "pads has %d entries, expected %d", cnt, 2 * c->k);
        for (int i = 0; i < c->k; i++) {
            c->lo[i] = v[i];
            c->hi[i] = v[c->k + i];
        }
    } else if (strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0) {
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);
    }
    return onnx_status(n);
}

static ts_value *conv(onnx_node *n, ts_value *x, ts_value *w, const convp *c)
{
    ts_builder *b = onnx_b(n);
    ts_graph *g = onnx_graph(n);
    int64_t ones[TS_MAX_RANK];
    for (int i = 0; i < c->k; i++) ones[i] = 1;
    ts_attr *a = ts_b_attrs(b, TS_OP_CONV);
    if (!a || !x || !w) return NULL;
    ts_status s = ts_attr_set_ints(g, TS_OP_CONV, a, "strides", c->k, c->strides);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_CONV, a, "pad_lo", c->k, c->lo);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_CONV, a, "pad_hi", c->k, c->hi);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_CONV, a, "lhs_dilation", c->k, ones);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_CONV, a, "rhs_dilation", c->k, c->dil);
    if (s == TS_OK) s = ts_attr_set_int(g, TS_OP_CONV, a, "groups", c->group);
    if (s != TS_OK) {
        onnx_fail(n, s, "conv: could not set its attributes");
        return NULL;
    }
    return ts_b_node(b, TS_OP_CONV, 2, (ts_value *[]){x, w}, a);
}

/* A per-output-channel vector [M] shaped [M, 1, ...] against w; a scalar
 * (or one element) as a scalar. */
static ts_value *per_channel(ts_builder *b, ts_value *v, const ts_value *w)
{
    if (!v || numel_is_one(v)) return v ? ts_b_reshape(b, v, 0, NULL) : NULL;
    ts_dim d[TS_MAX_RANK];
    for (int i = 0; i < w->type.rank; i++) d[i] = i == 0 ? v->type.dims[0] : ts_dim_const(1);
    return ts_b_reshape(b, v, w->type.rank, d);
}

/* i32 conv of x - x_zp and w - w_zp (per output channel). */
static ts_value *int_conv(onnx_node *n, ts_value *x, ts_value *xzp, ts_value *w, ts_value *wzp)
{
    ts_builder *b = onnx_b(n);
    convp c;
    if (conv_params(n, x, w, &c) != TS_OK) return NULL;
    ts_value *x32 = as(b, x, TS_DTYPE_I32), *w32 = as(b, w, TS_DTYPE_I32);
    if (xzp) x32 = bin(b, TS_OP_SUB, x32, as(b, ts_b_reshape(b, xzp, 0, NULL), TS_DTYPE_I32));
    if (wzp) w32 = bin(b, TS_OP_SUB, w32, as(b, per_channel(b, wzp, w), TS_DTYPE_I32));
    return conv(n, x32, w32, &c);
}

/* ConvInteger-10. */
static ts_status onnx_conv_integer(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *w = onnx_input(n, 1);
    TS_TRY(onnx_status(n));
    if (!int8ish(x->type.dtype) || !int8ish(w->type.dtype))
        return onnx_unsupported(n, "ConvInteger of %s and %s (u8/i8 only)", ts_dtype_name(x->type.dtype),
                                ts_dtype_name(w->type.dtype));
    n->out[0] = int_conv(n, x, opt_input(n, 2), w, opt_input(n, 3));
    return onnx_status(n);
}

/* QLinearConv-10: inputs x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B (i32). */
static ts_status onnx_qlinear_conv(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    ts_value *in[9];
    for (int i = 0; i < 9; i++) in[i] = i == 2 || i == 5 || i == 7 || i == 8 ? opt_input(n, i) : onnx_input(n, i);
    TS_TRY(onnx_status(n));
    ts_dtype to = in[7] ? in[7]->type.dtype : in[0]->type.dtype;
    if (!int8ish(in[0]->type.dtype) || !int8ish(in[3]->type.dtype) || !int8ish(to))
        return onnx_unsupported(n, "QLinearConv on %s and %s (u8/i8 only)", ts_dtype_name(in[0]->type.dtype),
                                ts_dtype_name(in[3]->type.dtype));
    ts_value *acc = int_conv(n, in[0], in[2], in[3], in[5]);
    if (in[8] && acc) {
        ts_dim d[TS_MAX_RANK];
        for (int i = 0; i < acc->type.rank; i++) d[i] = i == 1 ? in[8]->type.dims[0] : ts_dim_const(1);
        acc = bin(b, TS_OP_ADD, acc, ts_b_reshape(b, as(b, in[8], TS_DTYPE_I32), acc->type.rank, d));
    }
    ts_dtype sd = in[1]->type.dtype;
    ts_value *ws = per_channel(b, in[4], in[3]);
    if (ws && ws->type.rank > 0) {   /* [M,1,..] -> [1,M,1,..] against y */
        ts_dim d[TS_MAX_RANK];
        for (int i = 0; i < ws->type.rank; i++) d[i] = i == 1 ? ws->type.dims[0] : ts_dim_const(1);
        ws = ts_b_reshape(b, ws, ws->type.rank, d);
    }
    ts_value *xs = ts_b_reshape(b, in[1], 0, NULL), *ys = ts_b_reshape(b, in[6], 0, NULL);
    ts_value *mult = bin(b, TS_OP_DIV, bin(b, TS_OP_MUL, xs, as(b, ws, sd)), as(b, ys, sd));
    n->out[0] = requantize(b, acc, mult, in[7] ? ts_b_reshape(b, in[7], 0, NULL) : NULL, to);
    return onnx_status(n);
}

const onnx_op_entry onnx_ops_quant[] = {
    {"ConvInteger", 10, INT_MAX, onnx_conv_integer},
    {"DequantizeLinear", 10, INT_MAX, onnx_dequantize_linear},
    {"DynamicQuantizeLinear", 11, INT_MAX, onnx_dynamic_quantize_linear},
    {"MatMulInteger", 10, INT_MAX, onnx_matmul_integer},
    {"QLinearConv", 10, INT_MAX, onnx_qlinear_conv},
    {"QLinearMatMul", 10, INT_MAX, onnx_qlinear_matmul},
    {"QuantizeLinear", 10, INT_MAX, onnx_quantize_linear},
    {NULL, 0, 0, NULL},
};
