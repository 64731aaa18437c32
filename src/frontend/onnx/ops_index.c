/* ops_index.c — ONNX operators of the index family, assembled from primitives.
 *
 * The primitives index one axis (gather) or flat positions (scatter), and
 * take indices as given: ONNX's negative indices are wrapped here
 * (select(i < 0, i + n, i)). Element-wise indexing (GatherElements,
 * ScatterElements, ScatterND, ReverseSequence) computes each element's
 * flat row-major position with iota arithmetic and gathers from, or
 * scatters into, a flattened view. Resize, Upsample and GridSample live
 * in ops_resize.c. */
#include "frontend/onnx/onnx.h"
#include "frontend/onnx/ops_util.h"

#include <string.h>

/* ---- small helpers -------------------------------------------------------------- */

static ts_dim dmul(onnx_node *n, ts_dim a, ts_dim b) { return onnx_util_darith(n, ts_dim_mul, a, b); }
static ts_dim dconst(int64_t c) { return ts_dim_const(c); }
static bool is_const(ts_dim d, int64_t c) { return ts_dim_is_const(d) && d.c == c; }

static ts_value *scatter(onnx_node *n, ts_value *x, ts_value *idx, ts_value *upd, const char *combine)
{
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_SCATTER);
    if (!x || !idx || !upd || !a ||
        !onnx_util_set_ok(n, ts_attr_set_enum(onnx_graph(n), TS_OP_SCATTER, a, "combine", combine)))
        return NULL;
    ts_value *in[3] = {x, idx, upd};
    return ts_b_node(onnx_b(n), TS_OP_SCATTER, 3, in, a);
}

/* sort along axis: values and i64 positions (stable). */
static bool sort(onnx_node *n, ts_value *x, int64_t axis, bool descending, ts_value **v, ts_value **ix)
{
    ts_graph *g = onnx_graph(n);
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_SORT);
    ts_value *out[2] = {NULL, NULL};
    int cnt = 0;
    if (!x || !a || !onnx_util_set_ok(n, ts_attr_set_int(g, TS_OP_SORT, a, "axis", axis)) ||
        !onnx_util_set_ok(n, ts_attr_set_int(g, TS_OP_SORT, a, "descending", descending)) ||
        ts_b_op(onnx_b(n), TS_OP_SORT, 1, &x, a, 0, NULL, 2, out, &cnt) != TS_OK)
        return false;
    if (v) *v = out[0];
    if (ix) *ix = out[1];
    return true;
}

/* Indices counted from the end when negative (ONNX) made plain for an
 * axis of size d: select(i < 0, i + d, i). Unsigned indices pass. */
static ts_value *wrap_index(onnx_node *n, ts_value *idx, ts_dim d)
{
    if (!idx) return NULL;
    ts_dtype dt = idx->type.dtype;
    if (!ts_dtype_is_int(dt)) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "indices must be integers, not %s", ts_dtype_name(dt));
        return NULL;
    }
    if (!ts_dtype_is_signed(dt)) return idx;
    ts_builder *b = onnx_b(n);
    ts_value *size = ts_dim_is_const(d) ? ts_b_scalar(b, dt, (double)d.c) : ts_b_cast(b, onnx_dim_scalar(n, d), dt);
    ts_value *neg = ts_b_binary(b, TS_OP_LT, idx, ts_b_scalar(b, dt, 0));
    return ts_b_select(b, neg, ts_b_binary(b, TS_OP_ADD, idx, size), idx);
}

/* Index vectors [..., k] wrapped per component against dims (k of them). */
static ts_value *wrap_index_rows(onnx_node *n, ts_value *idx, int k, const ts_dim *dims)
{
    ts_builder *b = onnx_b(n);
    ts_value *size = onnx_dims_vector(n, k, dims);
    ts_value *neg = ts_b_binary(b, TS_OP_LT, idx, ts_b_scalar(b, TS_DTYPE_I64, 0));
    return ts_b_select(b, neg, ts_b_binary(b, TS_OP_ADD, idx, size), idx);
}

/* The flat row-major position, in a tensor of dims xd (rank r), of each
 * element of idx (i64, rank r): its own coordinates, except along axis,
 * where idx holds the coordinate. Result: i64, idx's shape. */
static ts_value *flat_positions(onnx_node *n, int r, const ts_dim *xd, ts_value *idx, int axis)
{
    if (!idx) return NULL;
    ts_builder *b = onnx_b(n);
    const ts_type *t = &idx->type;
    ts_value *pos = NULL;
    ts_dim stride = dconst(1);
    for (int i = r - 1; i >= 0; i--) {
        ts_value *c = i == axis ? idx : onnx_util_iota(n, TS_DTYPE_I64, t->rank, t->dims, i);
        if (!is_const(stride, 1)) c = ts_b_binary(b, TS_OP_MUL, c, onnx_util_dim_value(n, stride));
        pos = pos ? ts_b_binary(b, TS_OP_ADD, pos, c) : c;
        stride = dmul(n, stride, xd[i]);
    }
    return pos;
}

/* Dot of index vectors [..., k] with the row-major strides of dims (k of
 * them) scaled by `unit`: the flat offset each vector addresses. */
static ts_value *row_offsets(onnx_node *n, ts_value *idx, int k, const ts_dim *dims, ts_dim unit)
{
    ts_dim st[TS_MAX_RANK];
    ts_dim s = unit;
    for (int j = k - 1; j >= 0; j--) {
        st[j] = s;
        s = dmul(n, s, dims[j]);
    }
    ts_value *sv = onnx_dims_vector(n, k, st);
    if (!idx || !sv) return NULL;
    int64_t lc = idx->type.rank - 1, rc = 0;
    return ts_b_dot(onnx_b(n), idx, sv, 0, NULL, NULL, 1, &lc, &rc);
}

/* ---- Gather, GatherElements, GatherND ---------------------------------------------------- */

/* Gather of a recorded shape vector at constant indices is recorded. */
static void gather_dims_value(onnx_node *n, ts_value *x, ts_value *idx, ts_value *y)
{
    const ts_dim *d;
    int c;
    const ts_tensor *t = idx ? onnx_const(n, idx) : NULL;
    if (!y || !t || x->type.rank != 1 || idx->type.rank > 1 || !onnx_dims_value(n, x, &d, &c)) return;
    ts_dim out[TS_MAX_RANK];
    int64_t m = ts_tensor_numel(t);
    if (m > TS_MAX_RANK) return;
    for (int64_t i = 0; i < m; i++) {
        int64_t k = ts_elem_get_i64(t->dtype, ts_tensor_data(t), i);
        if (k < 0 || k >= c) return;
        out[i] = d[k];
    }
    onnx_set_dims_value(n, y, (int)m, out);
}

/* Gather-1..: numpy take along axis, negative indices wrapped. */
static ts_status onnx_gather(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *idx = onnx_input(n, 1);
    int64_t axis;
    if (!x || !idx || onnx_axis(n, onnx_attr_int(n, "axis", 0), x->type.rank, &axis) != TS_OK) return onnx_status(n);
    idx = wrap_index(n, idx, x->type.dims[axis]);
    n->out[0] = onnx_util_gather(n, x, idx, axis);
    gather_dims_value(n, x, idx, n->out[0]);
    return onnx_status(n);
}

/* GatherElements-11..: y[p] = x[p with p[axis] = idx[p]]. */
static ts_status onnx_gather_elements(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *idx = onnx_input(n, 1);
    int64_t axis;
    if (!x || !idx || onnx_axis(n, onnx_attr_int(n, "axis", 0), x->type.rank, &axis) != TS_OK) return onnx_status(n);
    if (idx->type.rank != x->type.rank) return onnx_fail(n, TS_ERR_INVALID_MODEL, "indices and data differ in rank");
    idx = wrap_index(n, idx, x->type.dims[axis]);
    idx = idx ? ts_b_cast(onnx_b(n), idx, TS_DTYPE_I64) : NULL;
    ts_value *pos = flat_positions(n, x->type.rank, x->type.dims, idx, (int)axis);
    n->out[0] = onnx_util_gather(n, onnx_util_flatten(n, x), pos, 0);
    return onnx_status(n);
}

/* The last dim of ScatterND/GatherND indices: how many leading data dims
 * one index vector addresses. */
static bool index_depth(onnx_node *n, ts_value *idx, int limit, int *k)
{
    int q = idx->type.rank;
    ts_dim last = q ? idx->type.dims[q - 1] : dconst(0);
    if (q < 1 || !ts_dim_is_const(last) || last.c > limit) {
        onnx_fail(n, q < 1 || ts_dim_is_const(last) ? TS_ERR_INVALID_MODEL : TS_ERR_UNSUPPORTED,
                  "the indices' last dim must be a constant <= %d", limit);
        return false;
    }
    *k = (int)last.c;
    return true;
}

/* GatherND-11..: data viewed as [prod(dims[:B+k])] + rest; each index
 * vector (plus its batch position) becomes one flat leading index. */
static ts_status onnx_gather_nd(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *idx = onnx_input(n, 1);
    if (!x || !idx) return onnx_status(n);
    int r = x->type.rank, q = idx->type.rank, B = (int)onnx_attr_int(n, "batch_dims", 0), k;
    if (B < 0 || B >= q || B > r) return onnx_fail(n, TS_ERR_INVALID_MODEL, "batch_dims %d is out of range", B);
    if (!index_depth(n, idx, r - B, &k)) return onnx_status(n);
    const ts_dim *xd = x->type.dims;
    ts_builder *b = onnx_b(n);
    idx = wrap_index_rows(n, ts_b_cast(b, idx, TS_DTYPE_I64), k, xd + B);
    ts_value *flat = row_offsets(n, idx, k, xd + B, dconst(1));
    ts_dim unit = onnx_util_numel(n, k, xd + B);
    for (int i = B - 1; i >= 0 && flat; i--) {
        ts_value *bi = onnx_util_iota(n, TS_DTYPE_I64, q - 1, flat->type.dims, i);
        flat = ts_b_binary(b, TS_OP_ADD, flat, ts_b_binary(b, TS_OP_MUL, bi, onnx_util_dim_value(n, unit)));
        unit = dmul(n, unit, xd[i]);
    }
    ts_dim view[TS_MAX_RANK];
    view[0] = onnx_util_numel(n, B + k, xd);
    for (int i = B + k; i < r; i++) view[1 + i - B - k] = xd[i];
    n->out[0] = onnx_util_gather(n, ts_b_reshape(b, x, 1 + r - B - k, view), flat, 0);
    return onnx_status(n);
}

/* ---- ScatterND, ScatterElements ---------------------------------------------------------- */

/* The scatter combine for ONNX's reduction attribute (opset 16+). */
static const char *combine_of(onnx_node *n)
{
    const char *r = n->opset >= 16 ? onnx_attr_string(n, "reduction", "none") : "none";
    if (strcmp(r, "none") == 0) return "set";
    if (strcmp(r, "add") == 0 || strcmp(r, "mul") == 0) return r;
    if ((strcmp(r, "max") == 0 || strcmp(r, "min") == 0) && n->opset >= 18) return r;
    onnx_unsupported(n, "reduction '%s'", r);
    return NULL;
}

/* ScatterND-11..: updates [idx[:-1], dims[k:]] land at flat positions
 * offset(idx) * R + (position within the slab of R elements). */
static ts_status onnx_scatter_nd(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *idx = onnx_input(n, 1), *upd = onnx_input(n, 2);
    const char *comb = combine_of(n);
    int k;
    if (!x || !idx || !upd || !comb || !index_depth(n, idx, x->type.rank, &k)) return onnx_status(n);
    int r = x->type.rank, q = idx->type.rank;
    const ts_dim *xd = x->type.dims;
    ts_builder *b = onnx_b(n);
    if (q - 1 + r - k > TS_MAX_RANK) return onnx_unsupported(n, "updates of rank over %d", TS_MAX_RANK);
    ts_dim slab = onnx_util_numel(n, r - k, xd + k);
    idx = wrap_index_rows(n, ts_b_cast(b, idx, TS_DTYPE_I64), k, xd);
    ts_value *start = row_offsets(n, idx, k, xd, slab);
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0; i < q - 1; i++) dims[i] = idx->type.dims[i];
    for (int i = 0; i < r - k; i++) dims[q - 1 + i] = dconst(1);
    start = start ? ts_b_reshape(b, start, q - 1 + r - k, dims) : NULL;
    ts_value *within = ts_b_reshape(b, onnx_util_iota(n, TS_DTYPE_I64, 1, &slab, 0), r - k, xd + k);
    ts_value *pos = ts_b_binary(b, TS_OP_ADD, start, within);
    ts_value *y = scatter(n, onnx_util_flatten(n, x), pos, upd, comb);
    n->out[0] = y ? ts_b_reshape(b, y, r, xd) : NULL;
    return onnx_status(n);
}

/* ScatterElements-11.. and Scatter-9..: x with x[p with p[axis] = idx[p]]
 * combined with upd[p]. */
static ts_status onnx_scatter_elements(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *idx = onnx_input(n, 1), *upd = onnx_input(n, 2);
    const char *comb = combine_of(n);
    int64_t axis;
    if (!x || !idx || !upd || !comb || onnx_axis(n, onnx_attr_int(n, "axis", 0), x->type.rank, &axis) != TS_OK)
        return onnx_status(n);
    if (idx->type.rank != x->type.rank) return onnx_fail(n, TS_ERR_INVALID_MODEL, "indices and data differ in rank");
    idx = wrap_index(n, idx, x->type.dims[axis]);
    idx = idx ? ts_b_cast(onnx_b(n), idx, TS_DTYPE_I64) : NULL;
    ts_value *pos = flat_positions(n, x->type.rank, x->type.dims, idx, (int)axis);
    ts_value *y = scatter(n, onnx_util_flatten(n, x), pos, upd, comb);
    n->out[0] = y ? ts_b_reshape(onnx_b(n), y, x->type.rank, x->type.dims) : NULL;
    return onnx_status(n);
}

/* ---- OneHot, TopK, NonZero, Compress, ReverseSequence -------------------------------------- */

/* OneHot's depth: a constant of any numeric type, or recorded dims. */
static bool onehot_depth(onnx_node *n, ts_dim *depth)
{
    ts_value *v = onnx_input(n, 1);
    const ts_tensor *t = v ? onnx_const(n, v) : NULL;
    if (t && ts_tensor_numel(t) == 1) {
        *depth = dconst((int64_t)ts_elem_get_f64(t->dtype, ts_tensor_data(t), 0));
        return true;
    }
    const ts_dim *d;
    int cnt;
    if (!v || onnx_dims_input(n, 1, &d, &cnt) != TS_OK) return false;
    if (cnt != 1) onnx_fail(n, TS_ERR_INVALID_MODEL, "depth must have one element");
    *depth = d[0];
    return onnx_status(n) == TS_OK;
}

/* OneHot-9..: values[1] where the (wrapped) index equals the position
 * along the new axis, values[0] elsewhere; out-of-range indices match
 * nothing. */
static ts_status onnx_one_hot(onnx_node *n)
{
    ts_value *idx = onnx_input(n, 0), *vals = onnx_input(n, 2);
    ts_dim depth;
    if (!idx || !vals || !onehot_depth(n, &depth)) return onnx_status(n);
    int r = idx->type.rank + 1;
    int64_t axis;
    if (r > TS_MAX_RANK) return onnx_unsupported(n, "a result of rank over %d", TS_MAX_RANK);
    if (onnx_axis(n, onnx_attr_int(n, "axis", -1), r, &axis) != TS_OK) return onnx_status(n);
    ts_builder *b = onnx_b(n);
    ts_value *i = ts_b_cast(b, idx, TS_DTYPE_I64);
    ts_value *d = onnx_util_dim_value(n, depth);
    i = ts_b_select(b, ts_b_binary(b, TS_OP_LT, i, ts_b_scalar(b, TS_DTYPE_I64, 0)), ts_b_binary(b, TS_OP_ADD, i, d), i);
    ts_dim dims[TS_MAX_RANK];
    for (int k = 0, j = 0; k < r; k++) dims[k] = k == axis ? dconst(1) : idx->type.dims[j++];
    i = i ? ts_b_reshape(b, i, r, dims) : NULL;
    ts_value *pos = onnx_util_place(n, onnx_util_iota(n, TS_DTYPE_I64, 1, &depth, 0), r, (int)axis, depth);
    ts_value *v = onnx_util_flatten(n, vals);
    ts_dim z = dconst(0), one = dconst(1), two = dconst(2);
    ts_value *off = v ? ts_b_reshape(b, ts_b_slice(b, v, &z, &one, NULL), 0, NULL) : NULL;
    ts_value *on = v ? ts_b_reshape(b, ts_b_slice(b, v, &one, &two, NULL), 0, NULL) : NULL;
    n->out[0] = ts_b_select(b, ts_b_binary(b, TS_OP_EQ, i, pos), on, off);
    return onnx_status(n);
}

/* TopK-1..: a stable sort (descending when largest) cut to k; equal
 * values keep the lower index first, as ONNX asks. */
static ts_status onnx_top_k(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    int64_t axis;
    if (!x || onnx_axis(n, onnx_attr_int(n, "axis", -1), x->type.rank, &axis) != TS_OK) return onnx_status(n);
    ts_dim k;
    if (n->opset < 10) {
        k = dconst(onnx_attr_int(n, "k", 0));
    } else {
        const ts_dim *d;
        int cnt;
        if (onnx_dims_input(n, 1, &d, &cnt) != TS_OK) return onnx_status(n);
        if (cnt != 1) return onnx_fail(n, TS_ERR_INVALID_MODEL, "K must have one element");
        k = d[0];
    }
    bool largest = n->opset < 11 || onnx_attr_int(n, "largest", 1) != 0;
    /* sorted=0 leaves the order of the k results unspecified: sorted is
     * one of the orders it allows */
    if (n->opset >= 11) onnx_attr_ignore(n, "sorted");
    ts_value *v, *ix;
    if (!sort(n, x, axis, largest, &v, &ix)) return onnx_status(n);
    ts_dim start[TS_MAX_RANK], limit[TS_MAX_RANK];
    for (int i = 0; i < x->type.rank; i++) {
        start[i] = dconst(0);
        limit[i] = i == axis ? k : x->type.dims[i];
    }
    n->out[0] = ts_b_slice(onnx_b(n), v, start, limit, NULL);
    if (n->n_out > 1) n->out[1] = ts_b_slice(onnx_b(n), ix, start, limit, NULL);
    return onnx_status(n);
}

static ts_status onnx_non_zero(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    n->out[0] = x ? ts_b_node(onnx_b(n), TS_OP_NONZERO, 1, &x, NULL) : NULL;
    return onnx_status(n);
}

/* The positions where a bool vector is true: i64 [nnz]. */
static ts_value *true_positions(onnx_node *n, ts_value *mask)
{
    ts_value *nz = mask ? ts_b_node(onnx_b(n), TS_OP_NONZERO, 1, &mask, NULL) : NULL;
    return nz ? ts_b_reshape(onnx_b(n), nz, 1, &nz->type.dims[1]) : NULL;
}

/* Compress-9..: gather the slices whose condition is true (of the
 * flattened input when there is no axis). */
static ts_status onnx_compress(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *c = onnx_input(n, 1);
    if (!x || !c) return onnx_status(n);
    int64_t axis = 0;
    if (onnx_has_attr(n, "axis")) {
        if (onnx_axis(n, onnx_attr_int(n, "axis", 0), x->type.rank, &axis) != TS_OK) return onnx_status(n);
    } else {
        x = onnx_util_flatten(n, x);
    }
    if (c->type.dtype != TS_DTYPE_BOOL) c = ts_b_binary(onnx_b(n), TS_OP_NE, c, ts_b_scalar(onnx_b(n), c->type.dtype, 0));
    n->out[0] = onnx_util_gather(n, x, true_positions(n, onnx_util_flatten(n, c)), axis);
    return onnx_status(n);
}

/* ReverseSequence-10: along time, the first len[b] elements reversed:
 * index t < len ? len - 1 - t : t, gathered element-wise. */
static ts_status onnx_reverse_sequence(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *len = onnx_input(n, 1);
    if (!x || !len) return onnx_status(n);
    int r = x->type.rank;
    int64_t ba, ta;
    if (onnx_axis(n, onnx_attr_int(n, "batch_axis", 1), r, &ba) != TS_OK ||
        onnx_axis(n, onnx_attr_int(n, "time_axis", 0), r, &ta) != TS_OK)
        return onnx_status(n);
    if (ba == ta) return onnx_fail(n, TS_ERR_INVALID_MODEL, "batch_axis and time_axis are equal");
    ts_builder *b = onnx_b(n);
    ts_value *t = onnx_util_iota(n, TS_DTYPE_I64, r, x->type.dims, (int)ta);
    ts_value *l = onnx_util_place(n, ts_b_cast(b, len, TS_DTYPE_I64), r, (int)ba, x->type.dims[ba]);
    ts_value *rev = ts_b_binary(b, TS_OP_SUB, ts_b_binary(b, TS_OP_SUB, l, ts_b_scalar(b, TS_DTYPE_I64, 1)), t);
    ts_value *idx = ts_b_select(b, ts_b_binary(b, TS_OP_LT, t, l), rev, t);
    ts_value *pos = flat_positions(n, r, x->type.dims, idx, (int)ta);
    ts_value *y = onnx_util_gather(n, onnx_util_flatten(n, x), pos, 0);
    n->out[0] = y ? ts_b_reshape(b, y, r, x->type.dims) : NULL;
    return onnx_status(n);
}

/* ---- Unique ------------------------------------------------------------------------------ */

/* x as rows [A, C]: the slices along axis, each flattened. */
static ts_value *as_rows(onnx_node *n, ts_value *x, int axis)
{
    int r = x->type.rank;
    int64_t perm[TS_MAX_RANK];
    perm[0] = axis;
    for (int i = 0, k = 1; i < r; i++)
        if (i != axis) perm[k++] = i;
    ts_value *t = ts_b_transpose(onnx_b(n), x, perm);
    ts_dim rows[2] = {x->type.dims[axis], t ? onnx_util_numel(n, r - 1, t->type.dims + 1) : dconst(0)};
    return t ? ts_b_reshape(onnx_b(n), t, 2, rows) : NULL;
}

/* The permutation sorting rows [A, C] lexicographically, stable: one
 * stable sort per column, last column first (a radix sort). */
static ts_value *row_order(onnx_node *n, ts_value *rows)
{
    ts_builder *b = onnx_b(n);
    ts_dim A = rows->type.dims[0];
    int64_t C = rows->type.dims[1].c;
    ts_value *perm = onnx_util_iota(n, TS_DTYPE_I64, 1, &A, 0);
    for (int64_t c = C - 1; c >= 0 && perm; c--) {
        ts_dim s[2] = {dconst(0), dconst(c)}, l[2] = {A, dconst(c + 1)};
        ts_value *col = ts_b_reshape(b, ts_b_slice(b, rows, s, l, NULL), 1, &A);
        if (col && col->type.dtype == TS_DTYPE_BOOL) col = ts_b_cast(b, col, TS_DTYPE_U8);
        ts_value *ix;
        if (!sort(n, onnx_util_gather(n, col, perm, 0), 0, false, NULL, &ix)) return NULL;
        perm = onnx_util_gather(n, perm, ix, 0);
    }
    return perm;
}

/* Which sorted rows start a new group: bool [A], true for row 0 and for
 * every row that differs from the one before. */
static ts_value *group_starts(onnx_node *n, ts_value *sorted)
{
    ts_builder *b = onnx_b(n);
    ts_dim A = sorted->type.dims[0], C = sorted->type.dims[1];
    ts_dim s0[2] = {dconst(0), dconst(0)}, s1[2] = {dconst(1), dconst(0)};
    ts_dim l0[2] = {onnx_util_darith(n, ts_dim_sub, A, dconst(1)), C}, l1[2] = {A, C};
    ts_value *ne = ts_b_binary(b, TS_OP_NE, ts_b_slice(b, sorted, s1, l1, NULL), ts_b_slice(b, sorted, s0, l0, NULL));
    int64_t ax = 1;
    ts_value *any = ts_b_reduce(b, TS_OP_REDUCE_MAX, ts_b_cast(b, ne, TS_DTYPE_U8), 1, &ax, false);
    any = ts_b_cast(b, any, TS_DTYPE_BOOL);
    ts_dim one = dconst(1);
    ts_value *first = ts_b_full(b, TS_DTYPE_BOOL, 1, 1, &one);
    ts_value *parts[2] = {first, any};
    return any ? ts_b_concat(b, 2, parts, 0) : NULL;
}

static ts_value *cumsum(onnx_node *n, ts_value *x)
{
    ts_graph *g = onnx_graph(n);
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_CUMULATIVE);
    if (!x || !a || !onnx_util_set_ok(n, ts_attr_set_enum(g, TS_OP_CUMULATIVE, a, "kind", "sum")) ||
        !onnx_util_set_ok(n, ts_attr_set_int(g, TS_OP_CUMULATIVE, a, "axis", 0)))
        return NULL;
    return ts_b_node(onnx_b(n), TS_OP_CUMULATIVE, 1, &x, a);
}

/* Unique's results but Y, in sorted order: `first`, the row of each
 * group's first occurrence (the stable sort puts it first in its group);
 * `inverse`, each row's group; `counts`, the group sizes. */
typedef struct unique_parts {
    ts_value *first, *inverse, *counts;
} unique_parts;

static bool unique_sorted(onnx_node *n, ts_value *perm, ts_value *starts, unique_parts *u)
{
    ts_builder *b = onnx_b(n);
    ts_dim A = perm->type.dims[0];
    ts_value *pos = true_positions(n, starts);
    if (!pos) return false;
    ts_dim U = pos->type.dims[0], one = dconst(1);
    u->first = onnx_util_gather(n, perm, pos, 0);
    ts_value *ends[2] = {ts_b_slice(b, pos, &one, &U, NULL), onnx_dims_vector(n, 1, &A)};
    u->counts = ts_b_binary(b, TS_OP_SUB, ts_b_concat(b, 2, ends, 0), pos);
    ts_value *group = ts_b_binary(b, TS_OP_SUB, cumsum(n, ts_b_cast(b, starts, TS_DTYPE_I64)), ts_b_scalar(b, TS_DTYPE_I64, 1));
    u->inverse = scatter(n, ts_b_full(b, TS_DTYPE_I64, 0, 1, &A), perm, group, "set");
    return onnx_status(n) == TS_OK;
}

/* sorted=0: groups in order of first occurrence. */
static void unique_by_occurrence(onnx_node *n, unique_parts *u)
{
    ts_value *order, *first;
    if (!sort(n, u->first, 0, false, &first, &order)) return;
    ts_dim U = order->type.dims[0];
    ts_value *rank = scatter(n, ts_b_full(onnx_b(n), TS_DTYPE_I64, 0, 1, &U), order,
                             onnx_util_iota(n, TS_DTYPE_I64, 1, &U, 0), "set");
    u->inverse = onnx_util_gather(n, rank, u->inverse, 0);
    u->counts = onnx_util_gather(n, u->counts, order, 0);
    u->first = first;
}

/* Unique-11: sort the rows (elements, or slices along axis)
 * lexicographically, mark where a new value starts, and read the groups
 * off the marks. */
static ts_status onnx_unique(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    if (!x) return onnx_status(n);
    bool has_axis = onnx_has_attr(n, "axis");
    int64_t axis = 0;
    if (has_axis && onnx_axis(n, onnx_attr_int(n, "axis", 0), x->type.rank, &axis) != TS_OK) return onnx_status(n);
    ts_value *src = has_axis ? x : onnx_util_flatten(n, x);
    ts_value *rows = src ? as_rows(n, src, (int)axis) : NULL;
    if (!rows) return onnx_status(n);
    if (!ts_dim_is_const(rows->type.dims[1]) || rows->type.dims[1].c > 64 || is_const(rows->type.dims[0], 0))
        return onnx_unsupported(n, "slices of more than 64 (or symbolic) elements, or an empty input: "
                                   "the lexicographic sort takes one pass per element");
    unique_parts u;
    ts_value *perm = row_order(n, rows);
    if (!perm || !unique_sorted(n, perm, group_starts(n, onnx_util_gather(n, rows, perm, 0)), &u)) return onnx_status(n);
    if (onnx_attr_int(n, "sorted", 1) == 0) unique_by_occurrence(n, &u);
    ts_value *outs[4] = {onnx_util_gather(n, src, u.first, axis), u.first, u.inverse, u.counts};
    for (int k = 0; k < n->n_out && k < 4; k++) n->out[k] = outs[k];
    return onnx_status(n);
}

const onnx_op_entry onnx_ops_index[] = {
    {"Compress", 9, INT_MAX, onnx_compress},
    {"Gather", 1, INT_MAX, onnx_gather},
    {"GatherElements", 11, INT_MAX, onnx_gather_elements},
    {"GatherND", 11, INT_MAX, onnx_gather_nd},
    {"NonZero", 9, INT_MAX, onnx_non_zero},
    {"OneHot", 9, INT_MAX, onnx_one_hot},
    {"ReverseSequence", 10, INT_MAX, onnx_reverse_sequence},
    {"Scatter", 9, INT_MAX, onnx_scatter_elements},
    {"ScatterElements", 11, INT_MAX, onnx_scatter_elements},
    {"ScatterND", 11, INT_MAX, onnx_scatter_nd},
    {"TopK", 1, INT_MAX, onnx_top_k},
    {"Unique", 11, INT_MAX, onnx_unique},
    {NULL, 0, 0, NULL},
};
