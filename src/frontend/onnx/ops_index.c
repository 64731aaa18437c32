/* ops_index.c — ONNX operators of the index family, assembled from primitives.
 *
 * The primitives index one axis (gather) or flat positions (scatter), and
 * take indices as given: ONNX's negative indices are wrapped here
 * (select(i < 0, i + n, i)). Element-wise indexing (GatherElements,
 * ScatterElements, ScatterND, ReverseSequence) computes each element's
 * flat row-major position with iota arithmetic and gathers from, or
 * scatters into, a flattened view. Resize computes its taps and weights
 * here, at build time, from constant sizes: gathers with constant indices
 * and a weighted sum per resized axis. */
#include "frontend/onnx/onnx.h"

#include <math.h>
#include <string.h>

/* ---- small helpers -------------------------------------------------------------- */

typedef ts_status (*dim_fn)(ts_symtab *t, ts_dim a, ts_dim b, ts_dim *out, ts_err *err);

/* f(a, b) on dims; a failure is recorded on the node (every later
 * builder call then does nothing, so the 0 returned is never used). */
static ts_dim darith(onnx_node *n, dim_fn f, ts_dim a, ts_dim b)
{
    ts_dim r = ts_dim_const(0);
    ts_err e = {0};
    if (onnx_status(n) == TS_OK && f(onnx_graph(n)->syms, a, b, &r, &e) != TS_OK) onnx_fail(n, e.code, "%s", e.msg);
    return r;
}
static ts_dim dmul(onnx_node *n, ts_dim a, ts_dim b) { return darith(n, ts_dim_mul, a, b); }
static ts_dim dconst(int64_t c) { return ts_dim_const(c); }
static bool is_const(ts_dim d, int64_t c) { return ts_dim_is_const(d) && d.c == c; }

static ts_dim numel(onnx_node *n, int rank, const ts_dim *dims)
{
    ts_dim r = dconst(1);
    for (int i = 0; i < rank; i++) r = dmul(n, r, dims[i]);
    return r;
}

static bool set_ok(onnx_node *n, ts_status s)
{
    if (s == TS_OK) return true;
    onnx_fail(n, s, "could not set a primitive's attribute");
    return false;
}

static ts_value *iota(onnx_node *n, ts_dtype dt, int rank, const ts_dim *dims, int axis)
{
    ts_graph *g = onnx_graph(n);
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_IOTA);
    if (!a || !set_ok(n, ts_attr_set_dtype(g, TS_OP_IOTA, a, "dtype", dt)) ||
        !set_ok(n, ts_attr_set_dims(g, TS_OP_IOTA, a, "shape", rank, dims)) ||
        !set_ok(n, ts_attr_set_int(g, TS_OP_IOTA, a, "axis", axis)))
        return NULL;
    return ts_b_node(onnx_b(n), TS_OP_IOTA, 0, NULL, a);
}

static ts_value *gather(onnx_node *n, ts_value *x, ts_value *idx, int64_t axis)
{
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_GATHER);
    if (!x || !idx || !a || !set_ok(n, ts_attr_set_int(onnx_graph(n), TS_OP_GATHER, a, "axis", axis))) return NULL;
    ts_value *in[2] = {x, idx};
    return ts_b_node(onnx_b(n), TS_OP_GATHER, 2, in, a);
}

static ts_value *scatter(onnx_node *n, ts_value *x, ts_value *idx, ts_value *upd, const char *combine)
{
    ts_attr *a = ts_b_attrs(onnx_b(n), TS_OP_SCATTER);
    if (!x || !idx || !upd || !a || !set_ok(n, ts_attr_set_enum(onnx_graph(n), TS_OP_SCATTER, a, "combine", combine)))
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
    if (!x || !a || !set_ok(n, ts_attr_set_int(g, TS_OP_SORT, a, "axis", axis)) ||
        !set_ok(n, ts_attr_set_int(g, TS_OP_SORT, a, "descending", descending)) ||
        ts_b_op(onnx_b(n), TS_OP_SORT, 1, &x, a, 0, NULL, 2, out, &cnt) != TS_OK)
        return false;
    if (v) *v = out[0];
    if (ix) *ix = out[1];
    return true;
}

static ts_value *flatten(onnx_node *n, ts_value *x)
{
    if (!x) return NULL;
    ts_dim all = numel(n, x->type.rank, x->type.dims);
    return ts_b_reshape(onnx_b(n), x, 1, &all);
}

/* x reshaped to rank r: its dims at `at`, 1 elsewhere (x's rank is 1 or
 * its dims are 1 but there). */
static ts_value *place(onnx_node *n, ts_value *x, int r, int at, ts_dim d)
{
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0; i < r; i++) dims[i] = i == at ? d : dconst(1);
    return x ? ts_b_reshape(onnx_b(n), x, r, dims) : NULL;
}

/* An i64 scalar holding d (constant or symbolic). */
static ts_value *dim_value(onnx_node *n, ts_dim d)
{
    return ts_dim_is_const(d) ? ts_b_scalar(onnx_b(n), TS_DTYPE_I64, (double)d.c) : onnx_dim_scalar(n, d);
}

/* A constant tensor of dtype dt and shape dims (rank r) from f64 values. */
static ts_value *const_f64(onnx_node *n, ts_dtype dt, int r, const int64_t *shape, const double *v)
{
    ts_tensor *t = NULL;
    ts_err e = {0};
    if (onnx_status(n) != TS_OK) return NULL;
    if (ts_tensor_new(dt, r, shape, &t, &e) != TS_OK) {
        onnx_fail(n, e.code, "%s", e.msg);
        return NULL;
    }
    for (int64_t i = 0; i < ts_tensor_numel(t); i++) ts_elem_set_f64(dt, ts_tensor_data(t), i, v[i]);
    ts_value *c = ts_b_const(onnx_b(n), t);
    ts_tensor_release(t);
    return c;
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
        ts_value *c = i == axis ? idx : iota(n, TS_DTYPE_I64, t->rank, t->dims, i);
        if (!is_const(stride, 1)) c = ts_b_binary(b, TS_OP_MUL, c, dim_value(n, stride));
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

/* Input i as constant integers: a constant, or recorded dims that are
 * all constants (a shape computed from static dims); arena array. */
static ts_status const_ints(onnx_node *n, int i, const int64_t **v, int *count)
{
    const ts_dim *d;
    if (onnx_dims_input(n, i, &d, count) != TS_OK) return onnx_status(n);
    int64_t *a = ts_arena_array(onnx_graph(n)->arena, (size_t)*count + 1, sizeof *a);
    if (!a) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    for (int k = 0; k < *count; k++) {
        if (!ts_dim_is_const(d[k]))
            return onnx_unsupported(n, "input %d holds symbolic sizes, but tessera needs constants here", i);
        a[k] = d[k].c;
    }
    *v = a;
    return TS_OK;
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
    n->out[0] = gather(n, x, idx, axis);
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
    n->out[0] = gather(n, flatten(n, x), pos, 0);
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
    ts_dim unit = numel(n, k, xd + B);
    for (int i = B - 1; i >= 0 && flat; i--) {
        ts_value *bi = iota(n, TS_DTYPE_I64, q - 1, flat->type.dims, i);
        flat = ts_b_binary(b, TS_OP_ADD, flat, ts_b_binary(b, TS_OP_MUL, bi, dim_value(n, unit)));
        unit = dmul(n, unit, xd[i]);
    }
    ts_dim view[TS_MAX_RANK];
    view[0] = numel(n, B + k, xd);
    for (int i = B + k; i < r; i++) view[1 + i - B - k] = xd[i];
    n->out[0] = gather(n, ts_b_reshape(b, x, 1 + r - B - k, view), flat, 0);
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
    ts_dim slab = numel(n, r - k, xd + k);
    idx = wrap_index_rows(n, ts_b_cast(b, idx, TS_DTYPE_I64), k, xd);
    ts_value *start = row_offsets(n, idx, k, xd, slab);
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0; i < q - 1; i++) dims[i] = idx->type.dims[i];
    for (int i = 0; i < r - k; i++) dims[q - 1 + i] = dconst(1);
    start = start ? ts_b_reshape(b, start, q - 1 + r - k, dims) : NULL;
    ts_value *within = ts_b_reshape(b, iota(n, TS_DTYPE_I64, 1, &slab, 0), r - k, xd + k);
    ts_value *pos = ts_b_binary(b, TS_OP_ADD, start, within);
    ts_value *y = scatter(n, flatten(n, x), pos, upd, comb);
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
    ts_value *y = scatter(n, flatten(n, x), pos, upd, comb);
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
    ts_value *d = dim_value(n, depth);
    i = ts_b_select(b, ts_b_binary(b, TS_OP_LT, i, ts_b_scalar(b, TS_DTYPE_I64, 0)), ts_b_binary(b, TS_OP_ADD, i, d), i);
    ts_dim dims[TS_MAX_RANK];
    for (int k = 0, j = 0; k < r; k++) dims[k] = k == axis ? dconst(1) : idx->type.dims[j++];
    i = i ? ts_b_reshape(b, i, r, dims) : NULL;
    ts_value *pos = place(n, iota(n, TS_DTYPE_I64, 1, &depth, 0), r, (int)axis, depth);
    ts_value *v = flatten(n, vals);
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
        x = flatten(n, x);
    }
    if (c->type.dtype != TS_DTYPE_BOOL) c = ts_b_binary(onnx_b(n), TS_OP_NE, c, ts_b_scalar(onnx_b(n), c->type.dtype, 0));
    n->out[0] = gather(n, x, true_positions(n, flatten(n, c)), axis);
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
    ts_value *t = iota(n, TS_DTYPE_I64, r, x->type.dims, (int)ta);
    ts_value *l = place(n, ts_b_cast(b, len, TS_DTYPE_I64), r, (int)ba, x->type.dims[ba]);
    ts_value *rev = ts_b_binary(b, TS_OP_SUB, ts_b_binary(b, TS_OP_SUB, l, ts_b_scalar(b, TS_DTYPE_I64, 1)), t);
    ts_value *idx = ts_b_select(b, ts_b_binary(b, TS_OP_LT, t, l), rev, t);
    ts_value *pos = flat_positions(n, r, x->type.dims, idx, (int)ta);
    ts_value *y = gather(n, flatten(n, x), pos, 0);
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
    ts_dim rows[2] = {x->type.dims[axis], t ? numel(n, r - 1, t->type.dims + 1) : dconst(0)};
    return t ? ts_b_reshape(onnx_b(n), t, 2, rows) : NULL;
}

/* The permutation sorting rows [A, C] lexicographically, stable: one
 * stable sort per column, last column first (a radix sort). */
static ts_value *row_order(onnx_node *n, ts_value *rows)
{
    ts_builder *b = onnx_b(n);
    ts_dim A = rows->type.dims[0];
    int64_t C = rows->type.dims[1].c;
    ts_value *perm = iota(n, TS_DTYPE_I64, 1, &A, 0);
    for (int64_t c = C - 1; c >= 0 && perm; c--) {
        ts_dim s[2] = {dconst(0), dconst(c)}, l[2] = {A, dconst(c + 1)};
        ts_value *col = ts_b_reshape(b, ts_b_slice(b, rows, s, l, NULL), 1, &A);
        if (col && col->type.dtype == TS_DTYPE_BOOL) col = ts_b_cast(b, col, TS_DTYPE_U8);
        ts_value *ix;
        if (!sort(n, gather(n, col, perm, 0), 0, false, NULL, &ix)) return NULL;
        perm = gather(n, perm, ix, 0);
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
    ts_dim l0[2] = {darith(n, ts_dim_sub, A, dconst(1)), C}, l1[2] = {A, C};
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
    if (!x || !a || !set_ok(n, ts_attr_set_enum(g, TS_OP_CUMULATIVE, a, "kind", "sum")) ||
        !set_ok(n, ts_attr_set_int(g, TS_OP_CUMULATIVE, a, "axis", 0)))
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
    u->first = gather(n, perm, pos, 0);
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
    ts_value *rank = scatter(n, ts_b_full(onnx_b(n), TS_DTYPE_I64, 0, 1, &U), order, iota(n, TS_DTYPE_I64, 1, &U, 0), "set");
    u->inverse = gather(n, rank, u->inverse, 0);
    u->counts = gather(n, u->counts, order, 0);
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
    ts_value *src = has_axis ? x : flatten(n, x);
    ts_value *rows = src ? as_rows(n, src, (int)axis) : NULL;
    if (!rows) return onnx_status(n);
    if (!ts_dim_is_const(rows->type.dims[1]) || rows->type.dims[1].c > 64 || is_const(rows->type.dims[0], 0))
        return onnx_unsupported(n, "slices of more than 64 (or symbolic) elements, or an empty input: "
                                   "the lexicographic sort takes one pass per element");
    unique_parts u;
    ts_value *perm = row_order(n, rows);
    if (!perm || !unique_sorted(n, perm, group_starts(n, gather(n, rows, perm, 0)), &u)) return onnx_status(n);
    if (onnx_attr_int(n, "sorted", 1) == 0) unique_by_occurrence(n, &u);
    ts_value *outs[4] = {gather(n, src, u.first, axis), u.first, u.inverse, u.counts};
    for (int k = 0; k < n->n_out && k < 4; k++) n->out[k] = outs[k];
    return onnx_status(n);
}

/* ---- Resize, Upsample -------------------------------------------------------------------- */

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };
#define RS_MAX_TAPS 64

typedef struct resize_opts {
    int mode;
    const char *ctm, *nearest;
    double a, extrap;
    bool exclude, antialias;
} resize_opts;

/* Where output position y reads in the input (the ONNX reference's
 * _compute_x_ori, operation for operation, so the taps match); *outside
 * when tf_crop_and_resize falls off the input. */
static double source_coord(const resize_opts *o, double y, double scale, int64_t in, int64_t out,
                           const double *roi, bool *outside)
{
    double ow = scale * (double)in, x, last = (double)(in - 1);
    const char *m = o->ctm;
    *outside = false;
    if (strcmp(m, "align_corners") == 0) return ow == 1 ? 0 : y * last / (ow - 1);
    if (strcmp(m, "asymmetric") == 0) return y / scale;
    if (strcmp(m, "pytorch_half_pixel") == 0) return ow == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
    if (strcmp(m, "half_pixel_symmetric") == 0) {
        double adj = (double)out / ow, center = (double)in / 2;
        return center * (1 - adj) + (y + 0.5) / scale - 0.5;
    }
    if (strcmp(m, "tf_crop_and_resize") == 0) {
        x = ow == 1 ? (roi[1] - roi[0]) * last / 2 : y * (roi[1] - roi[0]) * last / (ow - 1);
        x += roi[0] * last;
        *outside = x < 0 || x > last;
        return x;
    }
    return (y + 0.5) / scale - 0.5;
}

static double cubic_w(double x, double A)
{
    x = fabs(x);
    if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0;
}

/* The weights of the taps around a source point at fraction `ratio`
 * (in (0, 1]) past the tap before it; returns their count. */
static int tap_weights(const resize_opts *o, double ratio, double scale, double *c)
{
    if (o->mode == RS_NEAREST) {
        bool up;
        if (ratio == 1) up = true;
        else if (strcmp(o->nearest, "round_prefer_ceil") == 0) up = ratio >= 0.5;
        else if (strcmp(o->nearest, "floor") == 0) up = false;
        else if (strcmp(o->nearest, "ceil") == 0) up = true;
        else up = ratio > 0.5;
        c[0] = !up;
        c[1] = up;
        return 2;
    }
    if (!o->antialias || scale >= 1) {
        if (o->mode == RS_LINEAR) {
            c[0] = 1 - ratio;
            c[1] = ratio;
            return 2;
        }
        for (int i = 0; i < 4; i++) c[i] = cubic_w((double)(i - 1) - ratio, o->a);
        return 4;
    }
    /* antialias: the filter stretched by 1/scale, normalised */
    double reach = o->mode == RS_LINEAR ? 1 : 2, sum = 0;
    int start = (int)floor(-reach / scale) + 1, cnt = 2 - 2 * start;
    if (cnt > RS_MAX_TAPS) return -1;
    for (int i = 0; i < cnt; i++) {
        double v = scale * ((double)(start + i) - ratio);
        c[i] = o->mode == RS_LINEAR ? fmax(0, fmin(1, 1 - fabs(v))) : cubic_w(v, o->a);
        sum += c[i];
    }
    for (int i = 0; i < cnt; i++) c[i] /= sum;
    return cnt;
}

/* Taps of output position y: indices (clamped into the input, as edge
 * padding does) and weights (exclude_outside renormalises without the
 * taps that fell outside). Returns the tap count, -1 when too many. */
static int taps_of(const resize_opts *o, double x, double scale, int64_t in, int64_t *idx, double *w)
{
    double fl = floor(x), ratio = x == fl ? 1 : x - fl;
    int t = tap_weights(o, ratio, scale, w);
    if (t < 0) return -1;
    int pad = (t + 1) / 2;
    double xp = x + pad, pp = floor(xp), frac = xp - pp;
    int64_t off = t % 2 == 0 ? (frac == 0 ? -(t / 2) : -(t / 2) + 1) : (frac <= 0.5 ? -((t - 1) / 2) : -((t - 1) / 2) + 1);
    int64_t first = (int64_t)pp + off - pad;
    double sum = 0;
    for (int j = 0; j < t; j++) {
        int64_t k = first + j;
        if (o->exclude && (k < 0 || k >= in)) w[j] = 0;
        sum += w[j];
        idx[j] = k < 0 ? 0 : k >= in ? in - 1 : k;
    }
    if (o->exclude && sum != 0)
        for (int j = 0; j < t; j++) w[j] /= sum;
    return t;
}

/* x resized along axis with the taps computed by resize_axis: idx and w
 * hold `t` taps per output position (near: the one nearest tap), mask
 * the positions that read the extrapolation value (or NULL). */
static ts_value *resize_apply(onnx_node *n, const resize_opts *o, ts_value *x, int axis, int64_t out, int t,
                              const double *idx, const double *w, const double *near, const double *mask)
{
    ts_builder *b = onnx_b(n);
    int r = x->type.rank;
    ts_value *y;
    if (o->mode == RS_NEAREST) {
        y = gather(n, x, const_f64(n, TS_DTYPE_I64, 1, &out, near), axis);
    } else {
        int64_t shp[2] = {out, t}, sum_axis = axis + 1;
        ts_dim wd[TS_MAX_RANK];
        if (r + 1 > TS_MAX_RANK) {
            onnx_unsupported(n, "rank %d (the taps need one more axis)", r);
            return NULL;
        }
        for (int i = 0; i <= r; i++) wd[i] = dconst(1);
        wd[axis] = dconst(out);
        wd[axis + 1] = dconst(t);
        ts_value *g = gather(n, x, const_f64(n, TS_DTYPE_I64, 2, shp, idx), axis);
        ts_value *wt = ts_b_reshape(b, const_f64(n, x->type.dtype, 2, shp, w), r + 1, wd);
        y = ts_b_reduce(b, TS_OP_REDUCE_SUM, ts_b_binary(b, TS_OP_MUL, g, wt), 1, &sum_axis, false);
    }
    if (!mask) return y;
    ts_value *m = place(n, const_f64(n, TS_DTYPE_BOOL, 1, &out, mask), r, axis, dconst(out));
    return ts_b_select(b, m, ts_b_scalar(b, x->type.dtype, o->extrap), y);
}

/* Resize one axis to `out` positions: the taps of every position are
 * computed here (the sizes are constants) and applied by resize_apply. */
static ts_value *resize_axis(onnx_node *n, const resize_opts *o, ts_value *x, int axis, int64_t out, double scale,
                             const double *roi)
{
    int64_t in = x->type.dims[axis].c, ti[RS_MAX_TAPS];
    double tw[RS_MAX_TAPS];
    size_t cells = (size_t)(out ? out : 1);
    double *idx = ts_mem_alloc(sizeof(double) * cells * RS_MAX_TAPS);
    double *w = ts_mem_alloc(sizeof(double) * cells * RS_MAX_TAPS);
    double *near = ts_mem_alloc(sizeof(double) * cells), *mask = ts_mem_alloc(sizeof(double) * cells);
    bool any_out = false;
    int t = 2;
    ts_value *y = NULL;
    if (!idx || !w || !near || !mask) {
        onnx_fail(n, TS_ERR_OOM, "out of memory");
        goto done;
    }
    for (int64_t p = 0; p < out; p++) {
        bool outside;
        double src = source_coord(o, (double)p, scale, in, out, roi, &outside);
        if ((t = taps_of(o, src, scale, in, ti, tw)) < 0) {
            onnx_unsupported(n, "antialiasing at scale %g needs more than %d taps", scale, RS_MAX_TAPS);
            goto done;
        }
        mask[p] = outside;
        any_out |= outside;
        near[p] = (double)ti[tw[1] > tw[0]];
        for (int j = 0; j < t; j++) {
            idx[p * t + j] = (double)ti[j];
            w[p * t + j] = tw[j];
        }
    }
    y = resize_apply(n, o, x, axis, out, t, idx, w, near, any_out ? mask : NULL);
done:
    ts_mem_free(idx);
    ts_mem_free(w);
    ts_mem_free(near);
    ts_mem_free(mask);
    return y;
}

/* Output size, scale and roi of every axis (the reference's
 * _interpolate_nd): from scales, or from sizes with
 * keep_aspect_ratio_policy. */
typedef struct resize_plan {
    int n_axes;
    int64_t axes[TS_MAX_RANK], out[TS_MAX_RANK];
    double scale[TS_MAX_RANK], roi[2 * TS_MAX_RANK];
} resize_plan;

typedef struct resize_args {
    const double *scales, *roi;
    const int64_t *sizes;
    int n_scales, n_roi, n_sizes;
} resize_args;

static bool near_eq(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

/* Axis i of the plan. A symbolic size is allowed only where the axis
 * stays as it is (scale 1, the whole roi): out is then -1. */
static bool plan_axis(onnx_node *n, const ts_type *x, const resize_args *a, int i, resize_plan *p)
{
    int64_t ax = p->axes[i];
    int k = p->n_axes, r = x->rank;
    ts_dim d = x->dims[ax];
    if (a->n_roi == 2 * k) {
        p->roi[ax] = a->roi[i];
        p->roi[r + ax] = a->roi[k + i];
    }
    if (ts_dim_is_const(d)) {
        p->scale[ax] = a->n_scales > 0 ? a->scales[i] : (double)a->sizes[i] / (double)d.c;
        p->out[ax] = a->n_scales > 0 ? (int64_t)(p->scale[ax] * (double)d.c) : a->sizes[i];
        return true;
    }
    if (a->n_scales > 0 && near_eq(a->scales[i], 1) && near_eq(p->roi[ax], 0) && near_eq(p->roi[r + ax], 1)) {
        p->out[ax] = -1;
        return true;
    }
    onnx_unsupported(n, "resizing axis %lld of symbolic size: the taps are computed from constant sizes",
                     (long long)ax);
    return false;
}

static bool resize_plan_sizes(onnx_node *n, const ts_type *x, const resize_args *a, resize_plan *p)
{
    int k = p->n_axes, r = x->rank;
    if ((a->n_scales > 0 ? a->n_scales : a->n_sizes) != k) {
        onnx_fail(n, TS_ERR_INVALID_MODEL, "scales or sizes must have %d entries", k);
        return false;
    }
    for (int i = 0; i < r; i++) {
        p->scale[i] = 1;
        p->roi[i] = 0;
        p->roi[r + i] = 1;
    }
    for (int i = 0; i < k; i++)
        if (!plan_axis(n, x, a, i, p)) return false;
    const char *policy = n->opset >= 18 ? onnx_attr_string(n, "keep_aspect_ratio_policy", "stretch") : "stretch";
    if (a->n_scales > 0 || strcmp(policy, "stretch") == 0) return true;
    bool larger = strcmp(policy, "not_larger") == 0;
    double pick = larger ? INFINITY : -INFINITY;
    for (int i = 0; i < k; i++) pick = larger ? fmin(pick, p->scale[p->axes[i]]) : fmax(pick, p->scale[p->axes[i]]);
    for (int i = 0; i < k; i++) {
        int64_t ax = p->axes[i];
        p->scale[ax] = pick;
        p->out[ax] = (int64_t)(pick * (double)x->dims[ax].c + 0.5);
    }
    return true;
}

/* Resize x by the plan, one axis at a time; interpolation runs in f32
 * (f64 for f64 data) and rounds back once at the end, as the reference
 * computes in float and saturate-casts. */
static ts_value *resize_run(onnx_node *n, const resize_opts *o, ts_value *x, const resize_plan *p)
{
    ts_builder *b = onnx_b(n);
    ts_dtype dt = x->type.dtype, w = dt == TS_DTYPE_F64 ? TS_DTYPE_F64 : TS_DTYPE_F32;
    int r = x->type.rank;
    ts_value *y = o->mode == RS_NEAREST ? x : ts_b_cast(b, x, w);
    for (int i = 0; i < p->n_axes && y; i++) {
        int64_t ax = p->axes[i];
        const double roi[2] = {p->roi[ax], p->roi[r + ax]};
        if (p->out[ax] < 0 ||
            (near_eq(p->scale[ax], 1) && p->out[ax] == x->type.dims[ax].c && near_eq(roi[0], 0) && near_eq(roi[1], 1)))
            continue;
        y = resize_axis(n, o, y, (int)ax, p->out[ax], p->scale[ax], roi);
    }
    if (o->mode == RS_NEAREST || !y) return y;
    if (!ts_dtype_is_float(dt)) y = ts_b_unary(b, TS_OP_ROUND, y);
    return ts_b_cast(b, y, dt);
}

static bool resize_mode(onnx_node *n, resize_opts *o)
{
    const char *m = onnx_attr_string(n, "mode", "nearest");
    if (strcmp(m, "nearest") == 0) o->mode = RS_NEAREST;
    else if (strcmp(m, "linear") == 0 || strcmp(m, "bilinear") == 0) o->mode = RS_LINEAR;
    else if (strcmp(m, "cubic") == 0 && n->opset >= 11 && strcmp(n->op_type, "Resize") == 0) o->mode = RS_CUBIC;
    else onnx_unsupported(n, "mode '%s'", m);
    return onnx_status(n) == TS_OK;
}

/* Upsample-7.. and Resize-10: scales only, asymmetric coordinates and
 * nearest rounding down (np.repeat for integer scales). */
static ts_status onnx_upsample(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    resize_opts o = {0, "asymmetric", "floor", -0.75, 0, false, false};
    resize_args a = {0};
    resize_plan p = {0};
    const float *fs;
    double attr[TS_MAX_RANK];
    if (!x || !resize_mode(n, &o)) return onnx_status(n);
    if (n->opset < 9 && strcmp(n->op_type, "Upsample") == 0) {
        a.n_scales = onnx_attr_floats(n, "scales", &fs);
        for (int i = 0; i < a.n_scales && i < TS_MAX_RANK; i++) attr[i] = fs[i];
        a.scales = attr;
    } else if (onnx_const_floats(n, 1, &a.scales, &a.n_scales) != TS_OK) {
        return onnx_status(n);
    }
    p.n_axes = x->type.rank;
    for (int i = 0; i < p.n_axes; i++) p.axes[i] = i;
    if (resize_plan_sizes(n, &x->type, &a, &p)) n->out[0] = resize_run(n, &o, x, &p);
    return onnx_status(n);
}

/* Resize-11..: roi, scales, sizes inputs; every coordinate mode, nearest
 * mode, linear, cubic, exclude_outside, axes and keep_aspect_ratio_policy
 * (18+), antialias for linear and cubic. */
static ts_status onnx_resize(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0);
    resize_opts o = {0};
    resize_args a = {0};
    resize_plan p = {0};
    if (!x || !resize_mode(n, &o)) return onnx_status(n);
    o.ctm = onnx_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    o.nearest = onnx_attr_string(n, "nearest_mode", "round_prefer_floor");
    o.a = onnx_attr_float(n, "cubic_coeff_a", -0.75);
    o.extrap = onnx_attr_float(n, "extrapolation_value", 0);
    o.exclude = onnx_attr_int(n, "exclude_outside", 0) != 0;
    o.antialias = n->opset >= 18 && onnx_attr_int(n, "antialias", 0) != 0;
    if (o.antialias && o.mode == RS_NEAREST) return onnx_unsupported(n, "antialias with mode nearest");
    if (strcmp(o.ctm, "tf_crop_and_resize") == 0 && onnx_has_input(n, 1) &&
        onnx_const_floats(n, 1, &a.roi, &a.n_roi) != TS_OK)
        return onnx_status(n);
    if (onnx_has_input(n, 2) && onnx_const_floats(n, 2, &a.scales, &a.n_scales) != TS_OK) return onnx_status(n);
    if (a.n_scales <= 0 && const_ints(n, 3, &a.sizes, &a.n_sizes) != TS_OK) return onnx_status(n);
    const int64_t *axes;
    int na = n->opset >= 18 ? onnx_attr_ints(n, "axes", &axes) : -1;
    p.n_axes = na >= 0 ? na : x->type.rank;
    for (int i = 0; i < p.n_axes; i++)
        if (onnx_axis(n, na >= 0 ? axes[i] : i, x->type.rank, &p.axes[i]) != TS_OK) return onnx_status(n);
    if (!resize_plan_sizes(n, &x->type, &a, &p)) return onnx_status(n);
    n->out[0] = resize_run(n, &o, x, &p);
    return onnx_status(n);
}

/* ---- GridSample -------------------------------------------------------------------------- */

enum { GS_ZEROS, GS_BORDER, GS_REFLECT };

typedef struct gs_opts {
    int mode, pad;          /* RS_* and GS_* */
    bool align;
    ts_dtype ft;            /* the float type the coordinates are computed in */
} gs_opts;

/* One tap along one spatial axis: an index inside the axis and its
 * weight (0 where the tap reads zero padding). */
typedef struct gs_tap {
    ts_value *idx, *w;
} gs_tap;

static ts_value *fconst(onnx_node *n, const gs_opts *o, double v) { return ts_b_scalar(onnx_b(n), o->ft, v); }
static ts_value *fbin(onnx_node *n, ts_op op, ts_value *a, ts_value *b) { return ts_b_binary(onnx_b(n), op, a, b); }

static ts_value *clampf(onnx_node *n, const gs_opts *o, ts_value *x, double lo, double hi)
{
    return fbin(n, TS_OP_MAX, fbin(n, TS_OP_MIN, x, fconst(n, o, hi)), fconst(n, o, lo));
}

/* x reflected at the borders [lo, hi] until inside (the reference's
 * _gs_reflect): the distance past a border folds back, the parity of
 * the number of folds choosing the border it runs from. */
static ts_value *reflect(onnx_node *n, const gs_opts *o, ts_value *x, double lo, double hi)
{
    ts_builder *b = onnx_b(n);
    ts_value *below = fbin(n, TS_OP_LT, x, fconst(n, o, lo)), *above = fbin(n, TS_OP_LT, fconst(n, o, hi), x);
    ts_value *dx = ts_b_select(b, below, fbin(n, TS_OP_SUB, fconst(n, o, lo), x), fbin(n, TS_OP_SUB, x, fconst(n, o, hi)));
    ts_value *folds = ts_b_unary(b, TS_OP_FLOOR, fbin(n, TS_OP_DIV, dx, fconst(n, o, hi - lo)));
    ts_value *r = fbin(n, TS_OP_SUB, dx, fbin(n, TS_OP_MUL, folds, fconst(n, o, hi - lo)));
    ts_value *even = fbin(n, TS_OP_EQ, fbin(n, TS_OP_REM, folds, fconst(n, o, 2)), fconst(n, o, 0));
    ts_value *from_lo = fbin(n, TS_OP_ADD, fconst(n, o, lo), r), *from_hi = fbin(n, TS_OP_SUB, fconst(n, o, hi), r);
    ts_value *low = ts_b_select(b, even, from_lo, from_hi), *high = ts_b_select(b, even, from_hi, from_lo);
    return ts_b_select(b, below, low, ts_b_select(b, above, high, x));
}

/* The tap at (float, integral) position fi with weight w, read under
 * the padding mode. */
static gs_tap gs_fetch(onnx_node *n, const gs_opts *o, ts_value *fi, ts_value *w, int64_t d)
{
    ts_builder *b = onnx_b(n);
    gs_tap t = {NULL, w};
    double lo = o->align ? 0 : -0.5, hi = o->align ? (double)d - 1 : (double)d - 0.5;
    if (o->pad == GS_ZEROS) {
        ts_value *in = ts_b_binary(b, TS_OP_AND, fbin(n, TS_OP_LE, fconst(n, o, 0), fi),
                                   fbin(n, TS_OP_LE, fi, fconst(n, o, (double)d - 1)));
        t.w = ts_b_select(b, in, w, fconst(n, o, 0));
    } else if (o->pad == GS_REFLECT) {
        fi = reflect(n, o, fi, lo, hi);
    }
    t.idx = ts_b_cast(b, clampf(n, o, fi, 0, (double)d - 1), TS_DTYPE_I64);
    return t;
}

/* Keys' cubic weight at distance s in [0, 1] (near) or [1, 2] (far). */
static ts_value *cubic_near(onnx_node *n, const gs_opts *o, ts_value *s)
{
    const double A = -0.75;
    ts_value *p = fbin(n, TS_OP_SUB, fbin(n, TS_OP_MUL, fconst(n, o, A + 2), s), fconst(n, o, A + 3));
    return fbin(n, TS_OP_ADD, fbin(n, TS_OP_MUL, fbin(n, TS_OP_MUL, p, s), s), fconst(n, o, 1));
}

static ts_value *cubic_far(onnx_node *n, const gs_opts *o, ts_value *s)
{
    const double A = -0.75;
    ts_value *p = fbin(n, TS_OP_SUB, fbin(n, TS_OP_MUL, fconst(n, o, A), s), fconst(n, o, 5 * A));
    p = fbin(n, TS_OP_ADD, fbin(n, TS_OP_MUL, p, s), fconst(n, o, 8 * A));
    return fbin(n, TS_OP_SUB, fbin(n, TS_OP_MUL, p, s), fconst(n, o, 4 * A));
}

/* The taps of one spatial axis of size d for normalised coordinates g:
 * 1 (nearest), 2 (linear) or 4 (cubic). */
static int gs_axis_taps(onnx_node *n, const gs_opts *o, ts_value *g, int64_t d, gs_tap *taps)
{
    ts_builder *b = onnx_b(n);
    double lo = o->align ? 0 : -0.5, hi = o->align ? (double)d - 1 : (double)d - 0.5;
    ts_value *one = fconst(n, o, 1), *x;
    if (o->align) x = fbin(n, TS_OP_MUL, fbin(n, TS_OP_DIV, fbin(n, TS_OP_ADD, g, one), fconst(n, o, 2)), fconst(n, o, (double)d - 1));
    else x = fbin(n, TS_OP_DIV, fbin(n, TS_OP_SUB, fbin(n, TS_OP_MUL, fbin(n, TS_OP_ADD, g, one), fconst(n, o, (double)d)), one), fconst(n, o, 2));
    if (o->mode == RS_NEAREST) x = ts_b_unary(b, TS_OP_ROUND, x);
    if (o->pad == GS_BORDER) x = clampf(n, o, x, 0, (double)d - 1);
    else if (o->pad == GS_REFLECT) x = reflect(n, o, x, lo, hi);
    if (o->mode == RS_NEAREST) {
        /* the reference truncates the rounded coordinate (astype int32) */
        taps[0] = gs_fetch(n, o, ts_b_cast(b, ts_b_cast(b, x, TS_DTYPE_I64), o->ft), one, d);
        return 1;
    }
    ts_value *x0 = ts_b_unary(b, TS_OP_FLOOR, x), *t = fbin(n, TS_OP_SUB, x, x0);
    if (o->mode == RS_LINEAR) {
        taps[0] = gs_fetch(n, o, x0, fbin(n, TS_OP_SUB, one, t), d);
        taps[1] = gs_fetch(n, o, fbin(n, TS_OP_ADD, x0, one), t, d);
        return 2;
    }
    ts_value *u = fbin(n, TS_OP_SUB, one, t);
    ts_value *w[4] = {cubic_far(n, o, fbin(n, TS_OP_ADD, t, one)), cubic_near(n, o, t), cubic_near(n, o, u),
                      cubic_far(n, o, fbin(n, TS_OP_ADD, u, one))};
    for (int k = 0; k < 4; k++) taps[k] = gs_fetch(n, o, fbin(n, TS_OP_ADD, x0, fconst(n, o, k - 1)), w[k], d);
    return 4;
}

static bool gs_options(onnx_node *n, ts_value *x, gs_opts *o)
{
    const char *m = onnx_attr_string(n, "mode", n->opset >= 20 ? "linear" : "bilinear");
    const char *p = onnx_attr_string(n, "padding_mode", "zeros");
    o->mode = strcmp(m, "nearest") == 0 ? RS_NEAREST
            : strcmp(m, "linear") == 0 || strcmp(m, "bilinear") == 0 ? RS_LINEAR
            : strcmp(m, "cubic") == 0 || strcmp(m, "bicubic") == 0 ? RS_CUBIC : -1;
    o->pad = strcmp(p, "zeros") == 0 ? GS_ZEROS : strcmp(p, "border") == 0 ? GS_BORDER
           : strcmp(p, "reflection") == 0 ? GS_REFLECT : -1;
    o->align = onnx_attr_int(n, "align_corners", 0) != 0;
    o->ft = x->type.dtype == TS_DTYPE_F64 ? TS_DTYPE_F64 : TS_DTYPE_F32;
    if (o->mode < 0 || o->pad < 0) onnx_unsupported(n, "mode '%s' with padding_mode '%s'", m, p);
    return onnx_status(n) == TS_OK;
}

/* The flat offset of each output element's batch and channel in X
 * viewed as [N * C * S]: (n * C + c) * S, shaped [N, C, 1, ...]. */
static ts_value *gs_base(onnx_node *n, const ts_type *x, ts_dim S)
{
    ts_builder *b = onnx_b(n);
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->dims[i] : dconst(1);
    ts_value *nc = ts_b_binary(b, TS_OP_ADD, ts_b_binary(b, TS_OP_MUL, iota(n, TS_DTYPE_I64, x->rank, dims, 0),
                                                         dim_value(n, x->dims[1])),
                               iota(n, TS_DTYPE_I64, x->rank, dims, 1));
    return ts_b_binary(b, TS_OP_MUL, nc, dim_value(n, S));
}

/* GridSample-16..: per output point, the taps of every spatial axis
 * (from the grid, read in reverse axis order), combined: each product of
 * taps is one gather from the flattened X, weighted and summed. */
static ts_status onnx_grid_sample(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *grid = onnx_input(n, 1);
    gs_opts o;
    if (!x || !grid || !gs_options(n, x, &o)) return onnx_status(n);
    int r = x->type.rank - 2, q = grid->type.rank;
    if (r < 1 || q != r + 2 || !is_const(grid->type.dims[q - 1], r))
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "X must be [N, C, D1..Dr] and grid [N, O1..Or, r]");
    for (int i = 0; i < r; i++)
        if (!ts_dim_is_const(x->type.dims[2 + i])) return onnx_unsupported(n, "symbolic spatial sizes of X");
    ts_builder *b = onnx_b(n);
    ts_value *g = ts_b_cast(b, grid, o.ft);
    gs_tap taps[TS_MAX_RANK][4];
    int cnt[TS_MAX_RANK], total = 1;
    for (int i = 0; i < r && g; i++) {
        ts_dim s[TS_MAX_RANK], l[TS_MAX_RANK];
        for (int k = 0; k < q; k++) {
            s[k] = k == q - 1 ? dconst(r - 1 - i) : dconst(0);
            l[k] = k == q - 1 ? dconst(r - i) : grid->type.dims[k];
        }
        ts_value *gi = ts_b_reshape(b, ts_b_slice(b, g, s, l, NULL), q - 1, grid->type.dims);
        cnt[i] = gs_axis_taps(n, &o, gi, x->type.dims[2 + i].c, taps[i]);
        total *= cnt[i];
    }
    if (onnx_status(n) != TS_OK) return onnx_status(n);
    ts_dim S = numel(n, r, x->type.dims + 2), yd[TS_MAX_RANK], pd[TS_MAX_RANK];
    yd[0] = pd[0] = x->type.dims[0];
    yd[1] = x->type.dims[1];
    pd[1] = dconst(1);
    for (int i = 0; i < r; i++) yd[2 + i] = pd[2 + i] = grid->type.dims[1 + i];
    ts_value *base = gs_base(n, &x->type, S), *flat = flatten(n, ts_b_cast(b, x, o.ft)), *sum = NULL;
    for (int c = 0; c < total && onnx_status(n) == TS_OK; c++) {
        ts_value *pos = NULL, *w = NULL;
        int64_t stride = 1;
        for (int i = r - 1, rest = c; i >= 0; rest /= cnt[i], i--) {
            gs_tap *t = &taps[i][rest % cnt[i]];
            ts_value *p = ts_b_binary(b, TS_OP_MUL, t->idx, ts_b_scalar(b, TS_DTYPE_I64, (double)stride));
            pos = pos ? ts_b_binary(b, TS_OP_ADD, pos, p) : p;
            w = w ? ts_b_binary(b, TS_OP_MUL, w, t->w) : t->w;
            stride *= x->type.dims[2 + i].c;
        }
        pos = ts_b_binary(b, TS_OP_ADD, ts_b_reshape(b, pos, r + 2, pd), base);
        ts_value *v = ts_b_binary(b, TS_OP_MUL, gather(n, flat, pos, 0), ts_b_reshape(b, w, r + 2, pd));
        sum = sum ? ts_b_binary(b, TS_OP_ADD, sum, v) : v;
    }
    n->out[0] = sum ? ts_b_cast(b, ts_b_broadcast_to(b, sum, r + 2, yd), x->type.dtype) : NULL;
    return onnx_status(n);
}

const onnx_op_entry onnx_ops_index[] = {
    {"Compress", 9, INT_MAX, onnx_compress},
    {"Gather", 1, INT_MAX, onnx_gather},
    {"GatherElements", 11, INT_MAX, onnx_gather_elements},
    {"GatherND", 11, INT_MAX, onnx_gather_nd},
    {"GridSample", 16, INT_MAX, onnx_grid_sample},
    {"NonZero", 9, INT_MAX, onnx_non_zero},
    {"OneHot", 9, INT_MAX, onnx_one_hot},
    {"Resize", 10, 10, onnx_upsample},
    {"Resize", 11, INT_MAX, onnx_resize},
    {"ReverseSequence", 10, INT_MAX, onnx_reverse_sequence},
    {"Scatter", 9, INT_MAX, onnx_scatter_elements},
    {"ScatterElements", 11, INT_MAX, onnx_scatter_elements},
    {"ScatterND", 11, INT_MAX, onnx_scatter_nd},
    {"TopK", 1, INT_MAX, onnx_top_k},
    {"Unique", 11, INT_MAX, onnx_unique},
    {"Upsample", 7, INT_MAX, onnx_upsample},
    {NULL, 0, 0, NULL},
};
