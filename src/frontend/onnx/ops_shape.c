/* ops_shape.c — ONNX operators of the shape family, assembled from primitives.
 *
 * Most of these only move elements (reshape, transpose, slice, concat,
 * reverse, broadcast); Pad and CenterCropPad live in ops_pad.c. Sizes
 * may be symbolic: dims are computed with the symbol table's arithmetic,
 * and vectors that hold shapes (Shape, Gather, Slice, Concat, ...) keep
 * their content recorded as dims (onnx_set_dims_value) so that a Reshape
 * or Expand downstream reads a symbolic shape instead of failing on "not
 * a constant". */
#include "frontend/onnx/onnx.h"
#include "frontend/onnx/ops_util.h"

#include <math.h>
#include <string.h>

/* ---- small helpers -------------------------------------------------------------- */

static ts_dim dadd(onnx_node *n, ts_dim a, ts_dim b) { return onnx_util_darith(n, ts_dim_add, a, b); }
static ts_dim dsub(onnx_node *n, ts_dim a, ts_dim b) { return onnx_util_darith(n, ts_dim_sub, a, b); }
static ts_dim dmul(onnx_node *n, ts_dim a, ts_dim b) { return onnx_util_darith(n, ts_dim_mul, a, b); }
static ts_dim dconst(int64_t c) { return ts_dim_const(c); }
static bool is_const(ts_dim d, int64_t c) { return ts_dim_is_const(d) && d.c == c; }

/* a / b when it is exact (b divides a as a polynomial, or both are
 * constants that divide); false otherwise. */
static bool dexact_div(onnx_node *n, ts_dim a, ts_dim b, ts_dim *q)
{
    if (is_const(b, 0)) return false;
    *q = onnx_util_darith(n, ts_dim_div, a, b);
    return onnx_status(n) == TS_OK && ts_dim_eq(dmul(n, *q, b), a);
}

/* Normalise a list of ONNX axes for rank r into out (sorted ascending);
 * false (failure recorded) on an out-of-range or repeated axis. */
static bool norm_axes(onnx_node *n, int count, const int64_t *axes, int r, int64_t *out)
{
    for (int i = 0; i < count; i++) {
        int64_t a;
        if (onnx_axis(n, axes[i], r, &a) != TS_OK) return false;
        int j = i;
        for (; j > 0 && out[j - 1] > a; j--) out[j] = out[j - 1];
        out[j] = a;
    }
    for (int i = 1; i < count; i++)
        if (out[i] == out[i - 1]) {
            onnx_fail(n, TS_ERR_INVALID_MODEL, "axis %lld is listed twice", (long long)out[i]);
            return false;
        }
    return true;
}

/* When x holds a recorded shape vector and y has the same elements in the
 * same order (a reshape of it), y records them too. */
static void pass_dims_value(onnx_node *n, ts_value *x, ts_value *y)
{
    const ts_dim *d;
    int c;
    if (x && y && y->type.rank <= 1 && onnx_dims_value(n, x, &d, &c)) onnx_set_dims_value(n, y, c, d);
}

/* ---- Shape, Size ------------------------------------------------------------------ */

static int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Shape-1..: the input's dims as an i64 vector (symbolic dims stay
 * symbolic: the vector is assembled and its content recorded). */
static ts_status onnx_shape(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    if (!x) return onnx_status(n);
    int64_t r = x->type.rank;
    int64_t s = onnx_attr_int(n, "start", 0), e = onnx_attr_int(n, "end", r);
    s = clamp_i64(s < 0 ? s + r : s, 0, r);
    e = clamp_i64(e < 0 ? e + r : e, 0, r);
    if (e < s) e = s;
    n->out[0] = onnx_dims_vector(n, (int)(e - s), x->type.dims + s);
    return onnx_status(n);
}

static ts_status onnx_size(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    if (!x) return onnx_status(n);
    n->out[0] = onnx_dim_scalar(n, onnx_util_numel(n, x->type.rank, x->type.dims));
    return onnx_status(n);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze --------------------------------------- */

/* The dim that -1 stands for: numel(x) / numel(the other requested dims).
 * Equal dims on both sides cancel first, so symbolic sizes divide
 * ([batch, seq, 768] into [batch, -1, 12, 64] gives seq). */
static bool infer_dim(onnx_node *n, const ts_type *x, int count, const ts_dim *dims, int skip, ts_dim *out)
{
    bool used[TS_MAX_RANK] = {false};
    ts_dim known = dconst(1);
    for (int i = 0; i < count; i++) {
        if (i == skip) continue;
        int j = 0;
        while (j < x->rank && (used[j] || !ts_dim_eq(x->dims[j], dims[i]))) j++;
        if (j < x->rank) used[j] = true;
        else known = dmul(n, known, dims[i]);
    }
    ts_dim total = dconst(1);
    for (int j = 0; j < x->rank; j++)
        if (!used[j]) total = dmul(n, total, x->dims[j]);
    return dexact_div(n, total, known, out);
}

/* Reshape-5..: shape from input 1 (constant or recorded dims): 0 copies
 * the input's dim (unless allowzero=1, 14+), -1 is inferred. */
static ts_status onnx_reshape(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    const ts_dim *req;
    int cnt;
    if (!x || onnx_dims_input(n, 1, &req, &cnt) != TS_OK) return onnx_status(n);
    if (cnt > TS_MAX_RANK) return onnx_unsupported(n, "a rank-%d result (tessera allows %d)", cnt, TS_MAX_RANK);
    bool allowzero = onnx_attr_int(n, "allowzero", 0) != 0;
    ts_dim dims[TS_MAX_RANK];
    int infer = -1;
    for (int i = 0; i < cnt; i++) {
        dims[i] = req[i];
        if (is_const(req[i], 0) && !allowzero) {
            if (i >= x->type.rank)
                return onnx_fail(n, TS_ERR_INVALID_MODEL, "shape entry %d is 0 (copy) but the input has rank %d", i,
                                 x->type.rank);
            dims[i] = x->type.dims[i];
        } else if (is_const(req[i], -1)) {
            if (infer >= 0) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the shape has more than one -1");
            infer = i;
        } else if (ts_dim_is_const(req[i]) && req[i].c < 0) {
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "shape entry %d is %lld", i, (long long)req[i].c);
        }
    }
    if (infer >= 0 && !infer_dim(n, &x->type, cnt, dims, infer, &dims[infer]))
        return onnx_status(n) != TS_OK ? onnx_status(n)
                                       : onnx_fail(n, TS_ERR_SHAPE, "cannot infer the -1 entry: the element count "
                                                                    "does not divide by the other entries");
    n->out[0] = ts_b_reshape(onnx_b(n), x, cnt, dims);
    pass_dims_value(n, x, n->out[0]);
    return onnx_status(n);
}

/* Flatten-1..: [prod(dims[:axis]), prod(dims[axis:])]; axis may be negative from 11. */
static ts_status onnx_flatten(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    if (!x) return onnx_status(n);
    int r = x->type.rank;
    int64_t axis = onnx_attr_int(n, "axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r) return onnx_fail(n, TS_ERR_INVALID_MODEL, "axis is out of range for rank %d", r);
    ts_dim dims[2] = {onnx_util_numel(n, (int)axis, x->type.dims), onnx_util_numel(n, r - (int)axis, x->type.dims + axis)};
    n->out[0] = ts_b_reshape(onnx_b(n), x, 2, dims);
    return onnx_status(n);
}

/* The axes of Squeeze/Unsqueeze: attribute before opset 13, input after. */
static bool axes_arg(onnx_node *n, const int64_t **axes, int *count)
{
    *count = -1;
    if (n->opset < 13) {
        *count = onnx_attr_ints(n, "axes", axes);
        return onnx_status(n) == TS_OK;
    }
    if (!onnx_has_input(n, 1)) return true;
    return onnx_util_const_ints(n, 1, axes, count) == TS_OK;
}

/* Squeeze-1..: drop the listed axes (which must be 1), or every constant-1
 * axis when none are listed (a symbolic dim is kept: it may not be 1). */
static ts_status onnx_squeeze(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    const int64_t *axes;
    int cnt;
    if (!x || !axes_arg(n, &axes, &cnt)) return onnx_status(n);
    int r = x->type.rank, k = 0;
    bool drop[TS_MAX_RANK] = {false};
    int64_t ax[TS_MAX_RANK];
    if (cnt > r) return onnx_fail(n, TS_ERR_INVALID_MODEL, "more axes than the rank %d", r);
    if (cnt >= 0 && !norm_axes(n, cnt, axes, r, ax)) return onnx_status(n);
    for (int i = 0; i < cnt; i++) {
        if (!is_const(x->type.dims[ax[i]], 1))
            return onnx_fail(n, TS_ERR_SHAPE, "axis %lld is not of size 1%s", (long long)ax[i],
                             ts_dim_is_const(x->type.dims[ax[i]]) ? "" : " (it is symbolic)");
        drop[ax[i]] = true;
    }
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0; i < r; i++)
        if (!(cnt >= 0 ? drop[i] : is_const(x->type.dims[i], 1))) dims[k++] = x->type.dims[i];
    n->out[0] = ts_b_reshape(onnx_b(n), x, k, dims);
    pass_dims_value(n, x, n->out[0]);
    return onnx_status(n);
}

/* Unsqueeze-1..: insert 1s at the listed axes of the result. */
static ts_status onnx_unsqueeze(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    const int64_t *axes;
    int cnt;
    if (!x || !axes_arg(n, &axes, &cnt)) return onnx_status(n);
    if (cnt < 0) return onnx_fail(n, TS_ERR_INVALID_MODEL, "axes are required");
    int r = x->type.rank + cnt;
    if (r > TS_MAX_RANK) return onnx_unsupported(n, "a rank-%d result (tessera allows %d)", r, TS_MAX_RANK);
    int64_t ax[TS_MAX_RANK];
    if (!norm_axes(n, cnt, axes, r, ax)) return onnx_status(n);
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0, k = 0, j = 0; i < r; i++) {
        bool one = k < cnt && ax[k] == i;
        dims[i] = one ? dconst(1) : x->type.dims[j++];
        k += one;
    }
    n->out[0] = ts_b_reshape(onnx_b(n), x, r, dims);
    pass_dims_value(n, x, n->out[0]);
    return onnx_status(n);
}

/* ---- Transpose, Concat, Split ----------------------------------------------------- */

static ts_status onnx_transpose(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    if (!x) return onnx_status(n);
    int r = x->type.rank;
    const int64_t *perm;
    int cnt = onnx_attr_ints(n, "perm", &perm);
    int64_t rev[TS_MAX_RANK];
    if (cnt < 0) {
        for (int i = 0; i < r; i++) rev[i] = r - 1 - i;
        perm = rev;
    } else if (cnt != r) {
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "perm has %d entries for rank %d", cnt, r);
    }
    n->out[0] = ts_b_transpose(onnx_b(n), x, perm);
    return onnx_status(n);
}

/* The concatenation of recorded shape vectors is recorded too. */
static void concat_dims_value(onnx_node *n, ts_value *y)
{
    ts_dim all[TS_MAX_RANK];
    int total = 0;
    for (int i = 0; i < n->n_in; i++) {
        const ts_dim *d;
        int c;
        if (!onnx_dims_value(n, n->in[i], &d, &c) || total + c > TS_MAX_RANK) return;
        memcpy(all + total, d, sizeof(ts_dim) * (size_t)c);
        total += c;
    }
    onnx_set_dims_value(n, y, total, all);
}

/* Concat-4..: join along axis (negative from 11). */
static ts_status onnx_concat(onnx_node *n)
{
    if (n->n_in < 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "no inputs");
    ts_value *xs[64];
    if (n->n_in > 64) return onnx_unsupported(n, "%d inputs (at most 64)", n->n_in);
    for (int i = 0; i < n->n_in; i++)
        if (!(xs[i] = onnx_input(n, i))) return onnx_status(n);
    int64_t axis;
    if (onnx_axis(n, onnx_attr_int(n, "axis", 0), xs[0]->type.rank, &axis) != TS_OK) return onnx_status(n);
    n->out[0] = n->n_in == 1 ? xs[0] : ts_b_concat(onnx_b(n), n->n_in, xs, axis);
    if (n->out[0] && n->out[0]->type.rank == 1) concat_dims_value(n, n->out[0]);
    return onnx_status(n);
}

/* Equal parts of size d/k; from opset 18 (num_outputs) the last part may
 * be smaller: ceil(d/k) each, the rest last. */
static bool split_even(onnx_node *n, ts_dim d, int k, ts_dim *sizes)
{
    ts_dim part;
    if (n->opset >= 18 && ts_dim_is_const(d) && d.c % k != 0) {
        int64_t c = (d.c + k - 1) / k;
        for (int i = 0; i < k; i++) sizes[i] = dconst(clamp_i64(d.c - c * i, 0, c));
        return true;
    }
    if (!dexact_div(n, d, dconst(k), &part)) {
        if (onnx_status(n) == TS_OK) onnx_fail(n, TS_ERR_SHAPE, "the axis does not split into %d equal parts", k);
        return false;
    }
    for (int i = 0; i < k; i++) sizes[i] = part;
    return true;
}

/* The sizes of Split's parts: the `split` attribute (< 13) or input
 * (13+), else equal parts, one per output (or num_outputs, 18+). */
static bool split_sizes(onnx_node *n, ts_dim d, ts_dim *sizes)
{
    const int64_t *sv;
    const ts_dim *sd;
    int cnt = -1;
    if (n->opset < 13 && (cnt = onnx_attr_ints(n, "split", &sv)) >= 0) {
        for (int i = 0; i < cnt && i < n->n_out; i++) sizes[i] = dconst(sv[i]);
    } else if (n->opset >= 13 && onnx_has_input(n, 1)) {
        if (onnx_dims_input(n, 1, &sd, &cnt) != TS_OK) return false;
        for (int i = 0; i < cnt && i < n->n_out; i++) sizes[i] = sd[i];
    } else {
        int64_t parts = n->opset >= 18 ? onnx_attr_int(n, "num_outputs", n->n_out) : n->n_out;
        if (parts != n->n_out)
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "num_outputs is %lld but the node lists %d outputs",
                             (long long)parts, n->n_out),
                   false;
        return split_even(n, d, n->n_out, sizes);
    }
    if (n->opset >= 18 && onnx_has_attr(n, "num_outputs"))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "split and num_outputs are both given (one of them, not both)"), false;
    if (cnt != n->n_out)
        onnx_fail(n, TS_ERR_INVALID_MODEL, "split lists %d sizes for %d outputs", cnt, n->n_out);
    return onnx_status(n) == TS_OK;
}

/* Split-2..: consecutive slices along axis. */
static ts_status onnx_split(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    if (!x) return onnx_status(n);
    int64_t axis;
    if (onnx_axis(n, onnx_attr_int(n, "axis", 0), x->type.rank, &axis) != TS_OK) return onnx_status(n);
    ts_dim sizes[256];
    if (n->n_out > 256) return onnx_unsupported(n, "%d outputs (at most 256)", n->n_out);
    if (!split_sizes(n, x->type.dims[axis], sizes)) return onnx_status(n);
    const ts_dim *rec;
    int rc;
    bool recorded = x->type.rank == 1 && onnx_dims_value(n, x, &rec, &rc);
    ts_dim at = dconst(0);
    for (int k = 0; k < n->n_out; k++) {
        ts_dim end = dadd(n, at, sizes[k]);
        n->out[k] = onnx_util_slice_axis(n, x, (int)axis, at, end, 1);
        if (recorded && ts_dim_is_const(at) && ts_dim_is_const(end) && end.c <= rc && n->out[k])
            onnx_set_dims_value(n, n->out[k], (int)(end.c - at.c), rec + at.c);
        at = end;
    }
    return onnx_status(n);
}

/* ---- Slice ---------------------------------------------------------------------------- */

/* Beyond this an index means "to the end" (INT_MAX / INT64_MAX in models). */
#define FAR ((INT64_C(1) << 31) - 1)

/* One bound of Slice made effective for an axis of size d: negative
 * counts from the end, then clamped to [lo, hi] (lo, hi relative: hi is
 * d + hi_off). With a symbolic d, a constant bound in range is trusted as
 * it is (a clamp would give min/max expressions that match no other dim;
 * slice checks the bounds when it runs), and one at or beyond FAR is the
 * clamp itself. A symbolic bound (a recorded shape value) is used as is. */
static ts_dim slice_bound(onnx_node *n, ts_dim v, ts_dim d, int64_t lo, int64_t hi_off)
{
    if (!ts_dim_is_const(v)) return v;
    int64_t c = v.c;
    if (ts_dim_is_const(d)) {
        if (c < 0) c += d.c;
        return dconst(clamp_i64(c, lo, d.c + hi_off));
    }
    if (c >= FAR) return dadd(n, d, dconst(hi_off));
    if (c <= -FAR) return dconst(lo);
    return c < 0 ? dadd(n, d, dconst(c)) : dconst(c);
}

/* y = x[start:end:step] along one axis, any nonzero step: a negative step
 * walks the reversed axis forward. */
static ts_value *slice_one(onnx_node *n, ts_value *x, int axis, ts_dim st, ts_dim en, int64_t step)
{
    ts_dim d = x->type.dims[axis];
    if (step > 0) {
        ts_dim s = slice_bound(n, st, d, 0, 0), e = slice_bound(n, en, d, 0, 0);
        if (ts_dim_is_const(s) && ts_dim_is_const(e) && e.c < s.c) e = s;
        return onnx_util_slice_axis(n, x, axis, s, e, step);
    }
    /* elements s, s+step, ... > e; reversed, index i is d-1-i */
    ts_dim s = slice_bound(n, st, d, 0, -1), e = slice_bound(n, en, d, -1, -1);
    ts_dim last = dsub(n, d, dconst(1));
    ts_dim lo = dsub(n, last, s), hi = dsub(n, last, e);
    if (ts_dim_is_const(lo) && ts_dim_is_const(hi) && hi.c < lo.c) hi = lo;
    if (is_const(d, 0)) lo = hi = dconst(0);
    int64_t ax = axis;
    return onnx_util_slice_axis(n, onnx_util_reverse_axes(n, x, 1, &ax), axis, lo, hi, step == INT64_MIN ? INT64_MAX : -step);
}

/* The slice of a recorded shape vector is recorded (constant bounds). */
static void slice_dims_value(onnx_node *n, ts_value *x, ts_value *y, ts_dim st, ts_dim en, int64_t step)
{
    const ts_dim *d;
    int c;
    if (!y || x->type.rank != 1 || !onnx_dims_value(n, x, &d, &c) || !ts_dim_is_const(st) || !ts_dim_is_const(en))
        return;
    ts_dim s = slice_bound(n, st, dconst(c), 0, step > 0 ? 0 : -1);
    ts_dim e = slice_bound(n, en, dconst(c), step > 0 ? 0 : -1, step > 0 ? 0 : -1);
    ts_dim out[TS_MAX_RANK];
    int k = 0;
    for (int64_t i = s.c; (step > 0 ? i < e.c : i > e.c) && k < TS_MAX_RANK; i += step) out[k++] = d[i];
    onnx_set_dims_value(n, y, k, out);
}

/* Slice's arguments: attributes before opset 10, inputs from 10. */
typedef struct slice_args {
    int count;
    ts_dim starts[TS_MAX_RANK], ends[TS_MAX_RANK];
    int64_t axes[TS_MAX_RANK], steps[TS_MAX_RANK];
} slice_args;

static bool slice_lists(onnx_node *n, int r, slice_args *a)
{
    const int64_t *st, *en, *ax = NULL, *sp = NULL;
    const ts_dim *ds, *de;
    int ns, ne, na = -1, np = -1;
    if (n->opset < 10) {
        ns = onnx_attr_ints(n, "starts", &st);
        ne = onnx_attr_ints(n, "ends", &en);
        na = onnx_attr_ints(n, "axes", &ax);
    } else if (onnx_dims_input(n, 1, &ds, &ns) != TS_OK || onnx_dims_input(n, 2, &de, &ne) != TS_OK ||
               (onnx_has_input(n, 3) && onnx_util_const_ints(n, 3, &ax, &na) != TS_OK) ||
               (onnx_has_input(n, 4) && onnx_util_const_ints(n, 4, &sp, &np) != TS_OK)) {
        return false;
    }
    if (ns < 0 || ns != ne || (na >= 0 && na != ns) || (np >= 0 && np != ns) || ns > r) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "starts, ends, axes and steps must have equal lengths (<= rank %d)", r);
        return false;
    }
    a->count = ns;
    for (int i = 0; i < ns; i++) {
        a->starts[i] = n->opset < 10 ? dconst(st[i]) : ds[i];
        a->ends[i] = n->opset < 10 ? dconst(en[i]) : de[i];
        a->steps[i] = sp ? sp[i] : 1;
        if (onnx_axis(n, ax ? ax[i] : i, r, &a->axes[i]) != TS_OK) return false;
        if (a->steps[i] == 0) {
            onnx_fail(n, TS_ERR_INVALID_MODEL, "step 0");
            return false;
        }
    }
    return true;
}

/* v with the reshapes that produced it stripped (Unsqueeze of a scalar). */
static ts_value *strip_reshapes(ts_value *v)
{
    while (v && v->def && v->def->op == TS_OP_RESHAPE) v = v->def->in[0];
    return v;
}

/* The constant widths k when ends = starts + k: a window that moves at
 * run time, as a loop body slicing x[i:i+1] builds. */
static bool window_widths(onnx_node *n, ts_value *starts, ts_value *ends, int count, int64_t *k)
{
    ts_value *s = strip_reshapes(starts), *e = strip_reshapes(ends);
    if (!s || !e || !e->def || e->def->op != TS_OP_ADD) return false;
    for (int j = 0; j < 2; j++) {
        if (strip_reshapes(e->def->in[j]) != s) continue;
        const ts_tensor *t = onnx_const(n, e->def->in[1 - j]);
        if (!t || (t->numel != 1 && t->numel != count)) return false;
        for (int i = 0; i < count; i++) k[i] = ts_elem_get_i64(t->dtype, ts_tensor_data(t), t->numel == 1 ? 0 : i);
        return true;
    }
    return false;
}

/* The start vector of a moving window: per axis 0, or the run-time start
 * (wrapped when negative) for the sliced axes. */
static ts_value *window_start(onnx_node *n, ts_value *x, ts_value *starts, int cnt, const int64_t *axes)
{
    ts_builder *b = onnx_b(n);
    ts_dim len = dconst(cnt), one = dconst(1);
    ts_value *sv = ts_b_cast(b, ts_b_reshape(b, starts, 1, &len), TS_DTYPE_I64), *parts[TS_MAX_RANK];
    for (int i = 0; i < x->type.rank; i++) parts[i] = ts_b_full(b, TS_DTYPE_I64, 0, 1, &one);
    for (int i = 0; i < cnt; i++) {
        ts_dim at = dconst(i), next = dconst(i + 1);
        ts_value *si = ts_b_slice(b, sv, &at, &next, NULL);
        ts_value *neg = ts_b_binary(b, TS_OP_LT, si, ts_b_scalar(b, TS_DTYPE_I64, 0));
        ts_value *d = onnx_dim_scalar(n, x->type.dims[axes[i]]);
        parts[axes[i]] = ts_b_select(b, neg, ts_b_binary(b, TS_OP_ADD, si, d), si);
    }
    return onnx_status(n) == TS_OK ? ts_b_concat(b, x->type.rank, parts, 0) : NULL;
}

/* Slice-10.. whose starts are known only when it runs, with ends =
 * starts + k (constant k, steps 1): a dynamic_slice of width k. Exact
 * while the window fits; at the end of an axis dynamic_slice shifts the
 * window back inside where ONNX would shorten it. */
static ts_status slice_window(onnx_node *n, ts_value *x)
{
    ts_value *st = onnx_input(n, 1), *en = onnx_input(n, 2);
    if (!st || !en) return onnx_status(n);
    int r = x->type.rank, cnt = st->type.rank == 0 ? 1 : -1, na = -1, np = -1;
    if (st->type.rank == 1 && ts_dim_is_const(st->type.dims[0])) cnt = (int)st->type.dims[0].c;
    int64_t k[TS_MAX_RANK], axes[TS_MAX_RANK];
    const int64_t *ax = NULL, *sp = NULL;
    if (cnt < 0 || cnt > r || !window_widths(n, st, en, cnt, k))
        return onnx_unsupported(n, "starts and ends known only at run time, and not of the form ends = starts + "
                                   "constant: the result's shape would depend on data");
    if ((onnx_has_input(n, 3) && onnx_util_const_ints(n, 3, &ax, &na) != TS_OK) ||
        (onnx_has_input(n, 4) && onnx_util_const_ints(n, 4, &sp, &np) != TS_OK))
        return onnx_status(n);
    if ((na >= 0 && na != cnt) || (np >= 0 && np != cnt))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "starts, ends, axes and steps must have equal lengths");
    ts_dim sizes[TS_MAX_RANK];
    memcpy(sizes, x->type.dims, sizeof(ts_dim) * (size_t)r);
    for (int i = 0; i < cnt; i++) {
        if (onnx_axis(n, ax ? ax[i] : i, r, &axes[i]) != TS_OK) return onnx_status(n);
        if (sp && sp[i] != 1) return onnx_unsupported(n, "a run-time window with step %lld", (long long)sp[i]);
        ts_dim d = x->type.dims[axes[i]];
        int64_t w = k[i] < 0 ? 0 : k[i];
        sizes[axes[i]] = dconst(ts_dim_is_const(d) && w > d.c ? d.c : w);
    }
    ts_value *in[2] = {x, window_start(n, x, st, cnt, axes)};
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_DYNAMIC_SLICE);
    if (!in[1] || !a || !onnx_util_set_ok(n, ts_attr_set_dims(onnx_graph(n), TS_OP_DYNAMIC_SLICE, a, "sizes", r, sizes)))
        return onnx_status(n);
    n->out[0] = ts_b_node(onnx_b(n), TS_OP_DYNAMIC_SLICE, 2, in, a);
    return onnx_status(n);
}

/* Slice-1..: per listed axis, numpy-style start:end:step with ONNX's
 * clamping. */
static ts_status onnx_slice(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    slice_args a;
    const ts_dim *d;
    int c;
    if (x && n->opset >= 10 && n->n_in > 2 &&
        (!onnx_dims_value(n, n->in[1], &d, &c) || !onnx_dims_value(n, n->in[2], &d, &c)))
        return slice_window(n, x);
    if (!x || !slice_lists(n, x->type.rank, &a)) return onnx_status(n);
    ts_value *y = x;
    for (int i = 0; i < a.count; i++) y = y ? slice_one(n, y, (int)a.axes[i], a.starts[i], a.ends[i], a.steps[i]) : NULL;
    n->out[0] = y;
    if (a.count == 1) slice_dims_value(n, x, y, a.starts[0], a.ends[0], a.steps[0]);
    return onnx_status(n);
}

/* ---- Expand, Tile ---------------------------------------------------------------------- */

/* Expand-8..: bidirectional broadcast of x against the shape input. */
static ts_status onnx_expand(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    const ts_dim *s;
    int cnt;
    if (!x || onnx_dims_input(n, 1, &s, &cnt) != TS_OK) return onnx_status(n);
    int xr = x->type.rank, r = xr > cnt ? xr : cnt;
    if (r > TS_MAX_RANK) return onnx_unsupported(n, "a rank-%d result (tessera allows %d)", r, TS_MAX_RANK);
    ts_dim dims[TS_MAX_RANK];
    for (int i = 1; i <= r; i++) {
        ts_dim dx = i <= xr ? x->type.dims[xr - i] : dconst(1), ds = i <= cnt ? s[cnt - i] : dconst(1);
        if (is_const(ds, 1) || ts_dim_eq(dx, ds)) dims[r - i] = dx;
        else if (is_const(dx, 1)) dims[r - i] = ds;
        else
            return onnx_fail(n, TS_ERR_SHAPE, "dim %d of the input does not broadcast to the requested shape%s",
                             xr - i, ts_dim_is_const(dx) && ts_dim_is_const(ds) ? "" : " (symbolic sizes differ)");
    }
    n->out[0] = ts_b_broadcast_to(onnx_b(n), x, r, dims);
    return onnx_status(n);
}

/* Tile-6..: each axis [d] becomes [r, d] by broadcast, then [r*d]. */
static ts_status onnx_tile(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    const ts_dim *rep;
    int cnt;
    if (!x || onnx_dims_input(n, 1, &rep, &cnt) != TS_OK) return onnx_status(n);
    int r = x->type.rank;
    if (cnt != r) return onnx_fail(n, TS_ERR_INVALID_MODEL, "repeats has %d entries for rank %d", cnt, r);
    if (2 * r > TS_MAX_RANK) return onnx_unsupported(n, "rank %d (tiling needs twice the rank)", r);
    ts_dim ones[TS_MAX_RANK], wide[TS_MAX_RANK], out[TS_MAX_RANK];
    for (int i = 0; i < r; i++) {
        ones[2 * i] = dconst(1);
        wide[2 * i] = rep[i];
        ones[2 * i + 1] = wide[2 * i + 1] = x->type.dims[i];
        out[i] = dmul(n, rep[i], x->type.dims[i]);
    }
    ts_value *y = ts_b_reshape(onnx_b(n), x, 2 * r, ones);
    y = y ? ts_b_broadcast_to(onnx_b(n), y, 2 * r, wide) : NULL;
    n->out[0] = y ? ts_b_reshape(onnx_b(n), y, r, out) : NULL;
    return onnx_status(n);
}

/* ---- ConstantOfShape, Range, EyeLike, Trilu ------------------------------------------- */

/* ConstantOfShape-9..: the one-element `value` (default f32 0) broadcast. */
static ts_status onnx_constant_of_shape(onnx_node *n)
{
    const ts_dim *s;
    int cnt;
    if (onnx_dims_input(n, 0, &s, &cnt) != TS_OK) return onnx_status(n);
    ts_value *v;
    if (onnx_has_attr(n, "value")) {
        ts_tensor *t = NULL, *sc = NULL;
        ts_err e = {0};
        if (onnx_attr_tensor(n, "value", &t) != TS_OK) return onnx_status(n);
        ts_status st = ts_tensor_numel(t) == 1 ? ts_tensor_reshaped(t, 0, NULL, &sc, &e)
                                               : ts_err_set(&e, TS_ERR_INVALID_MODEL, "value must have one element");
        ts_tensor_release(t);
        if (st != TS_OK) return onnx_fail(n, st, "%s", e.msg);
        v = ts_b_const(onnx_b(n), sc);
        ts_tensor_release(sc);
    } else {
        v = ts_b_scalar(onnx_b(n), TS_DTYPE_F32, 0);
    }
    n->out[0] = v ? ts_b_broadcast_to(onnx_b(n), v, cnt, s) : NULL;
    return onnx_status(n);
}

/* Range with constant operands: count computed here, values as
 * iota * delta + start, in f64 for floats (cast once, as the reference's
 * np.arange), or f32 for f16/bf16 with stash_type=1 (opset 27). */
static ts_status range_const(onnx_node *n, ts_dtype dt, double s, double l, double d)
{
    double c = ceil((l - s) / d);
    if (!(c < 1e12)) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the range has too many elements");
    int64_t count = c > 0 ? (int64_t)c : 0;
    ts_dtype w = ts_dtype_is_float(dt) ? TS_DTYPE_F64 : TS_DTYPE_I64;
    if (n->opset >= 27 && (dt == TS_DTYPE_F16 || dt == TS_DTYPE_BF16) && onnx_attr_int(n, "stash_type", 1) == 1)
        w = TS_DTYPE_F32;
    ts_builder *b = onnx_b(n);
    ts_dim cd = dconst(count);
    ts_value *y = ts_b_binary(b, TS_OP_MUL, onnx_util_iota(n, w, 1, &cd, 0), ts_b_scalar(b, w, d));
    y = ts_b_binary(b, TS_OP_ADD, y, ts_b_scalar(b, w, s));
    n->out[0] = ts_b_cast(b, y, dt);
    return onnx_status(n);
}

/* v's value as a dim when it is a whole number: a constant, recorded
 * dims, or either seen through casts from integers (window functions
 * compute Range(0, Cast(size), 1)). */
static bool whole_value(onnx_node *n, ts_value *v, ts_dim *out)
{
    while (v) {
        const ts_tensor *t = onnx_const(n, v);
        const ts_dim *d;
        int c;
        if (t && ts_tensor_numel(t) == 1) {
            double f = ts_elem_get_f64(t->dtype, ts_tensor_data(t), 0);
            if (f != floor(f) || fabs(f) > 9007199254740992.0) return false;
            *out = dconst((int64_t)f);
            return true;
        }
        if (ts_dtype_is_int(v->type.dtype) && onnx_dims_value(n, v, &d, &c) && c == 1) {
            *out = d[0];
            return true;
        }
        bool cast = v->def && v->def->op == TS_OP_CAST && ts_dtype_is_int(v->def->in[0]->type.dtype);
        v = cast ? v->def->in[0] : NULL;
    }
    return false;
}

/* Range-11..: start, limit, delta scalars. Constants give the count
 * directly; whole-number operands with symbolic content (recorded dims,
 * like Range(0, Shape(x)[1], 1)) give a symbolic count when delta is a
 * constant, assuming the range is not empty. */
static ts_status onnx_range(onnx_node *n)
{
    ts_value *in[3];
    ts_dim v[3];
    const ts_tensor *c[3];
    for (int i = 0; i < 3; i++)
        if (!(in[i] = onnx_input(n, i))) return onnx_status(n);
    ts_dtype dt = in[0]->type.dtype;
    for (int i = 0; i < 3; i++) c[i] = onnx_const(n, in[i]);
    if (c[0] && c[1] && c[2])
        return range_const(n, dt, ts_elem_get_f64(dt, ts_tensor_data(c[0]), 0),
                           ts_elem_get_f64(dt, ts_tensor_data(c[1]), 0), ts_elem_get_f64(dt, ts_tensor_data(c[2]), 0));
    for (int i = 0; i < 3; i++)
        if (!whole_value(n, in[i], &v[i]))
            return onnx_status(n) != TS_OK ? onnx_status(n)
                                           : onnx_unsupported(n, "operand %d is neither a constant nor a size: the "
                                                                 "result's length would depend on data", i);
    if (ts_dim_is_const(v[0]) && ts_dim_is_const(v[1]) && ts_dim_is_const(v[2]))
        return range_const(n, dt, (double)v[0].c, (double)v[1].c, (double)v[2].c);
    if (!ts_dim_is_const(v[2]) || v[2].c == 0) return onnx_unsupported(n, "a non-constant or zero delta");
    int64_t d = v[2].c, ad = d > 0 ? d : -d;
    ts_dim span = d > 0 ? dsub(n, v[1], v[0]) : dsub(n, v[0], v[1]);
    ts_dim count = onnx_util_darith(n, ts_dim_div, dadd(n, span, dconst(ad - 1)), dconst(ad));
    ts_dtype w = ts_dtype_is_float(dt) ? TS_DTYPE_F64 : TS_DTYPE_I64;
    ts_builder *b = onnx_b(n);
    ts_value *start = ts_b_cast(b, ts_b_reshape(b, in[0], 0, NULL), w);
    ts_value *y = ts_b_binary(b, TS_OP_MUL, onnx_util_iota(n, w, 1, &count, 0), ts_b_scalar(b, w, (double)d));
    n->out[0] = ts_b_cast(b, ts_b_binary(b, TS_OP_ADD, y, start), dt);
    return onnx_status(n);
}

/* i64 [rows, cols] holding col - row: which diagonal each element is on. */
static ts_value *diag_offset(onnx_node *n, ts_dim rows, ts_dim cols)
{
    ts_dim dims[2] = {rows, cols};
    return ts_b_binary(onnx_b(n), TS_OP_SUB, onnx_util_iota(n, TS_DTYPE_I64, 2, dims, 1), onnx_util_iota(n, TS_DTYPE_I64, 2, dims, 0));
}

/* EyeLike-9..: ones where col - row == k. */
static ts_status onnx_eye_like(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    if (!x) return onnx_status(n);
    if (x->type.rank != 2) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the input must have rank 2");
    ts_dtype dt = x->type.dtype;
    ts_err e = {0};
    if (onnx_has_attr(n, "dtype") && onnx_dtype((int)onnx_attr_int(n, "dtype", 1), &dt, &e) != TS_OK)
        return onnx_fail(n, e.code, "%s", e.msg);
    ts_builder *b = onnx_b(n);
    ts_value *off = diag_offset(n, x->type.dims[0], x->type.dims[1]);
    ts_value *m = ts_b_binary(b, TS_OP_EQ, off, ts_b_scalar(b, TS_DTYPE_I64, (double)onnx_attr_int(n, "k", 0)));
    n->out[0] = dt == TS_DTYPE_BOOL ? m : ts_b_select(b, m, ts_b_scalar(b, dt, 1), ts_b_scalar(b, dt, 0));
    return onnx_status(n);
}

/* Trilu-14: keep col - row >= k (upper) or <= k (lower), zero elsewhere;
 * k may be a run-time value. */
static ts_status onnx_trilu(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    if (!x) return onnx_status(n);
    int r = x->type.rank;
    if (r < 2) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the input must have rank >= 2");
    ts_builder *b = onnx_b(n);
    ts_value *k = onnx_has_input(n, 1) ? onnx_input(n, 1) : ts_b_scalar(b, TS_DTYPE_I64, 0);
    k = k ? ts_b_cast(b, ts_b_reshape(b, k, 0, NULL), TS_DTYPE_I64) : NULL;
    ts_value *off = diag_offset(n, x->type.dims[r - 2], x->type.dims[r - 1]);
    ts_value *m = onnx_attr_int(n, "upper", 1) ? ts_b_binary(b, TS_OP_LE, k, off) : ts_b_binary(b, TS_OP_LE, off, k);
    n->out[0] = ts_b_select(b, m, x, ts_b_scalar(b, x->type.dtype, 0));
    return onnx_status(n);
}

/* ---- DepthToSpace, SpaceToDepth ------------------------------------------------------- */

/* reshape -> transpose -> reshape, the three shapes given. */
static ts_value *shuffle(onnx_node *n, ts_value *x, const ts_dim *mid, const int64_t *perm, const ts_dim *out)
{
    ts_value *y = ts_b_reshape(onnx_b(n), x, 6, mid);
    y = y ? ts_b_transpose(onnx_b(n), y, perm) : NULL;
    return y ? ts_b_reshape(onnx_b(n), y, 4, out) : NULL;
}

static bool block_arg(onnx_node *n, ts_value *x, int64_t *bs)
{
    *bs = onnx_attr_int(n, "blocksize", 0);
    if (x->type.rank != 4 || *bs < 1) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "needs a rank-4 input and blocksize >= 1");
        return false;
    }
    return onnx_status(n) == TS_OK;
}

/* DepthToSpace-1..: DCR (default) or CRD (11+). */
static ts_status onnx_depth_to_space(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    int64_t bs;
    if (!x || !block_arg(n, x, &bs)) return onnx_status(n);
    const ts_dim *d = x->type.dims;
    ts_dim B = dconst(bs), c;
    if (!dexact_div(n, d[1], dconst(bs * bs), &c))
        return onnx_fail(n, TS_ERR_SHAPE, "channels do not divide by blocksize^2");
    static const char *const modes[] = {"DCR", "CRD", NULL};
    int mode = n->opset >= 11 ? onnx_attr_enum(n, "mode", "DCR", modes) : 0;
    if (mode < 0) return onnx_status(n);
    bool crd = mode == 1;
    ts_dim mid_dcr[6] = {d[0], B, B, c, d[2], d[3]}, mid_crd[6] = {d[0], c, B, B, d[2], d[3]};
    static const int64_t p_dcr[6] = {0, 3, 4, 1, 5, 2}, p_crd[6] = {0, 1, 4, 2, 5, 3};
    ts_dim out[4] = {d[0], c, dmul(n, d[2], B), dmul(n, d[3], B)};
    n->out[0] = shuffle(n, x, crd ? mid_crd : mid_dcr, crd ? p_crd : p_dcr, out);
    return onnx_status(n);
}

/* SpaceToDepth-1..: the inverse of DepthToSpace DCR. */
static ts_status onnx_space_to_depth(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    int64_t bs;
    if (!x || !block_arg(n, x, &bs)) return onnx_status(n);
    const ts_dim *d = x->type.dims;
    ts_dim B = dconst(bs), h, w;
    if (!dexact_div(n, d[2], B, &h) || !dexact_div(n, d[3], B, &w))
        return onnx_fail(n, TS_ERR_SHAPE, "height and width must divide by blocksize");
    ts_dim mid[6] = {d[0], d[1], h, B, w, B};
    static const int64_t perm[6] = {0, 3, 5, 1, 2, 4};
    ts_dim out[4] = {d[0], dmul(n, d[1], dconst(bs * bs)), h, w};
    n->out[0] = shuffle(n, x, mid, perm, out);
    return onnx_status(n);
}

const onnx_op_entry onnx_ops_shape[] = {
    {"Concat", 4, INT_MAX, onnx_concat},
    {"ConstantOfShape", 9, INT_MAX, onnx_constant_of_shape},
    {"DepthToSpace", 1, INT_MAX, onnx_depth_to_space},
    {"Expand", 8, INT_MAX, onnx_expand},
    {"EyeLike", 9, INT_MAX, onnx_eye_like},
    {"Flatten", 1, INT_MAX, onnx_flatten},
    {"Range", 11, INT_MAX, onnx_range},
    {"Reshape", 5, INT_MAX, onnx_reshape},
    {"Shape", 1, INT_MAX, onnx_shape},
    {"Size", 1, INT_MAX, onnx_size},
    {"Slice", 1, INT_MAX, onnx_slice},
    {"SpaceToDepth", 1, INT_MAX, onnx_space_to_depth},
    {"Split", 2, INT_MAX, onnx_split},
    {"Squeeze", 1, INT_MAX, onnx_squeeze},
    {"Tile", 6, INT_MAX, onnx_tile},
    {"Transpose", 1, INT_MAX, onnx_transpose},
    {"Trilu", 14, INT_MAX, onnx_trilu},
    {"Unsqueeze", 1, INT_MAX, onnx_unsqueeze},
    {NULL, 0, 0, NULL},
};
