/* ops_pad.c — ONNX operators that pad or crop a tensor: Pad (2 onwards;
 * modes constant, reflect, edge and wrap, negative pads cropping) and
 * CenterCropPad. Constant padding is one pad primitive; the modes that
 * copy data slice the copies out of the input (reversed for reflect) and
 * concatenate them, axis by axis. Pad amounts must be constants. Split
 * from ops_shape.c. */
#include "frontend/onnx/onnx.h"
#include "frontend/onnx/ops_util.h"

#include <string.h>

/* ---- small helpers -------------------------------------------------------------- */

static ts_dim dadd(onnx_node *n, ts_dim a, ts_dim b) { return onnx_util_darith(n, ts_dim_add, a, b); }
static ts_dim dsub(onnx_node *n, ts_dim a, ts_dim b) { return onnx_util_darith(n, ts_dim_sub, a, b); }
static ts_dim dconst(int64_t c) { return ts_dim_const(c); }
static bool is_const(ts_dim d, int64_t c) { return ts_dim_is_const(d) && d.c == c; }

/* x padded with the scalar v: lo/hi per axis (negative crops). */
static ts_value *pad_value(onnx_node *n, ts_value *x, ts_value *v, const int64_t *lo, const int64_t *hi)
{
    if (!x || !v) return NULL;
    int64_t zero[TS_MAX_RANK] = {0};
    int r = x->type.rank;
    ts_graph *g = onnx_graph(n);
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_PAD);
    if (!a || !onnx_util_set_ok(n, ts_attr_set_ints(g, TS_OP_PAD, a, "lo", r, lo)) ||
        !onnx_util_set_ok(n, ts_attr_set_ints(g, TS_OP_PAD, a, "hi", r, hi)) ||
        !onnx_util_set_ok(n, ts_attr_set_ints(g, TS_OP_PAD, a, "interior", r, zero)))
        return NULL;
    ts_value *in[2] = {x, v};
    return ts_b_node(onnx_b(n), TS_OP_PAD, 2, in, a);
}

/* A scalar value of x's dtype from an optional ONNX input (a scalar or a
 * one-element tensor), or `def` when the input is omitted. */
static ts_value *scalar_input(onnx_node *n, int i, ts_dtype dt, double def)
{
    if (!onnx_has_input(n, i)) return ts_b_scalar(onnx_b(n), dt, def);
    ts_value *v = onnx_input(n, i);
    if (!v) return NULL;
    if (v->type.dtype != dt) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d has dtype %s, the data %s", i, ts_dtype_name(v->type.dtype),
                  ts_dtype_name(dt));
        return NULL;
    }
    return ts_b_reshape(onnx_b(n), v, 0, NULL);
}

/* ---- Pad, CenterCropPad ---------------------------------------------------------------- */

/* Pad's pads as lo/hi per axis: the attribute before opset 11, the input
 * from 11, for the axes of input 3 (18+) or all. */
static bool pad_amounts(onnx_node *n, int r, int64_t *lo, int64_t *hi)
{
    const int64_t *p, *ax = NULL;
    int cnt, na = -1;
    if (n->opset < 11) cnt = onnx_attr_ints(n, "pads", &p);
    else if (onnx_util_const_ints(n, 1, &p, &cnt) != TS_OK) return false;
    if (n->opset >= 18 && onnx_has_input(n, 3) && onnx_util_const_ints(n, 3, &ax, &na) != TS_OK) return false;
    int k = na >= 0 ? na : r;
    if (cnt != 2 * k) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "pads has %d entries, expected %d", cnt, 2 * k);
        return false;
    }
    for (int i = 0; i < r; i++) lo[i] = hi[i] = 0;
    for (int i = 0; i < k; i++) {
        int64_t a = i;
        if (ax && onnx_axis(n, ax[i], r, &a) != TS_OK) return false;
        lo[a] = p[i];
        hi[a] = p[k + i];
    }
    return true;
}

/* The copies of x in front of (front) or behind one axis for the modes
 * that copy data: reflect mirrors without the edge element, edge repeats
 * it, wrap continues from the other end. */
static ts_value *pad_piece(onnx_node *n, ts_value *x, int axis, int64_t p, bool front, const char *mode)
{
    ts_dim d = x->type.dims[axis];
    int64_t ax = axis;
    bool cd = ts_dim_is_const(d);
    if (strcmp(mode, "edge") == 0) {
        if (is_const(d, 0)) {
            onnx_fail(n, TS_ERR_SHAPE, "edge padding of an empty axis");
            return NULL;
        }
        ts_dim at = front ? dconst(0) : dsub(n, d, dconst(1));
        ts_value *e = onnx_util_slice_axis(n, x, axis, at, dadd(n, at, dconst(1)), 1);
        ts_dim dims[TS_MAX_RANK];
        memcpy(dims, x->type.dims, sizeof(ts_dim) * (size_t)x->type.rank);
        dims[axis] = dconst(p);
        return e ? ts_b_broadcast_to(onnx_b(n), e, x->type.rank, dims) : NULL;
    }
    bool reflect = strcmp(mode, "reflect") == 0;
    if (cd && p > d.c - (reflect ? 1 : 0)) {
        onnx_unsupported(n, "%s padding of %lld on an axis of size %lld (more than one period)", mode, (long long)p,
                         (long long)d.c);
        return NULL;
    }
    if (reflect) {
        ts_dim s = front ? dconst(1) : dsub(n, d, dconst(p + 1));
        return onnx_util_reverse_axes(n, onnx_util_slice_axis(n, x, axis, s, dadd(n, s, dconst(p)), 1), 1, &ax);
    }
    ts_dim s = front ? dsub(n, d, dconst(p)) : dconst(0);
    return onnx_util_slice_axis(n, x, axis, s, dadd(n, s, dconst(p)), 1);
}

/* reflect/edge/wrap: crop the negative pads, then concat the copies. */
static ts_value *pad_copying(onnx_node *n, ts_value *x, const int64_t *lo, const int64_t *hi, const char *mode)
{
    for (int i = 0; x && i < x->type.rank; i++) {
        if (lo[i] < 0 || hi[i] < 0) {
            ts_dim d = x->type.dims[i];
            x = onnx_util_slice_axis(n, x, i, dconst(lo[i] < 0 ? -lo[i] : 0), dadd(n, d, dconst(hi[i] < 0 ? hi[i] : 0)), 1);
        }
        ts_value *parts[3];
        int k = 0;
        if (x && lo[i] > 0) parts[k++] = pad_piece(n, x, i, lo[i], true, mode);
        parts[k++] = x;
        if (x && hi[i] > 0) parts[k++] = pad_piece(n, x, i, hi[i], false, mode);
        x = k > 1 && onnx_status(n) == TS_OK ? ts_b_concat(onnx_b(n), k, parts, i) : x;
    }
    return onnx_status(n) == TS_OK ? x : NULL;
}

/* Pad-2..: modes constant, reflect, edge, wrap (19+); negative pads crop. */
static ts_status onnx_pad(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    int64_t lo[TS_MAX_RANK], hi[TS_MAX_RANK];
    if (!x || !pad_amounts(n, x->type.rank, lo, hi)) return onnx_status(n);
    const char *mode = onnx_attr_string(n, "mode", "constant");
    if (n->opset < 11) onnx_attr_ignore(n, "value");   /* the constant mode's fill: unused by the others */
    if (strcmp(mode, "constant") == 0) {
        ts_dtype dt = x->type.dtype;
        ts_value *v = n->opset < 11 ? ts_b_scalar(onnx_b(n), dt, onnx_attr_float(n, "value", 0.0))
                                    : scalar_input(n, 2, dt, 0.0);
        n->out[0] = pad_value(n, x, v, lo, hi);
    } else if (strcmp(mode, "reflect") == 0 || strcmp(mode, "edge") == 0 ||
               (strcmp(mode, "wrap") == 0 && n->opset >= 19)) {
        n->out[0] = pad_copying(n, x, lo, hi, mode);
    } else {
        return onnx_unsupported(n, "mode '%s'", mode);
    }
    return onnx_status(n);
}

/* CenterCropPad-18: per listed axis, a centred window of the requested
 * size: crop (start rounded down) or zero-pad (extra element at the end). */
static ts_status onnx_center_crop_pad(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    const ts_dim *s;
    int cnt;
    if (!x || onnx_dims_input(n, 1, &s, &cnt) != TS_OK) return onnx_status(n);
    int r = x->type.rank;
    const int64_t *axes;
    int na = onnx_attr_ints(n, "axes", &axes);
    if ((na >= 0 ? na : r) != cnt) return onnx_fail(n, TS_ERR_INVALID_MODEL, "shape has %d entries, expected %d", cnt, na >= 0 ? na : r);
    int64_t lo[TS_MAX_RANK] = {0}, hi[TS_MAX_RANK] = {0};
    for (int i = 0; i < cnt; i++) {
        int64_t a = i;
        if (na >= 0 && onnx_axis(n, axes[i], r, &a) != TS_OK) return onnx_status(n);
        ts_dim d = x->type.dims[a];
        if (!ts_dim_is_const(d) || !ts_dim_is_const(s[i]))
            return onnx_unsupported(n, "symbolic sizes (axis %lld): the crop offsets need constants", (long long)a);
        int64_t diff = s[i].c - d.c;
        lo[a] = diff >= 0 ? diff / 2 : -((-diff) / 2);
        hi[a] = diff - lo[a];
    }
    n->out[0] = pad_value(n, x, ts_b_scalar(onnx_b(n), x->type.dtype, 0), lo, hi);
    return onnx_status(n);
}
const onnx_op_entry onnx_ops_pad[] = {
    {"CenterCropPad", 18, INT_MAX, onnx_center_crop_pad},
    {"Pad", 2, INT_MAX, onnx_pad},
    {NULL, 0, 0, NULL},
};
