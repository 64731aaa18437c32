/* ops_misc.c — ONNX operators that fit no other family: Det, AffineGrid,
 * NonMaxSuppression, RoiAlign, TfIdfVectorizer, and the string and image
 * operators that tessera refuses with a clear reason. The signal operators
 * (windows, DFT, STFT, MelWeightMatrix) live in ops_signal.c; sequences and
 * optionals in ops_sequence.c.
 */
#include "frontend/onnx/onnx.h"
#include "frontend/onnx/ops_util.h"

#include <math.h>
#include <string.h>

/* ---- small helpers ------------------------------------------------------------ */

static ts_value *bin(ts_builder *b, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(b, op, x, y); }

static ts_value *un(ts_builder *b, ts_op op, ts_value *x) { return ts_b_unary(b, op, x); }

static ts_value *f64(ts_builder *b, double v) { return ts_b_scalar(b, TS_DTYPE_F64, v); }

static ts_value *i64(ts_builder *b, int64_t v) { return ts_b_scalar(b, TS_DTYPE_I64, (double)v); }

static ts_value *as(ts_builder *b, ts_value *x, ts_dtype dt)
{
    return !x ? NULL : x->type.dtype == dt ? x : ts_b_cast(b, x, dt);
}

static ts_value *opt_input(onnx_node *n, int i) { return onnx_has_input(n, i) ? onnx_input(n, i) : NULL; }

/* Short names for the shared builder helpers of ops_util.h. */
static ts_value *iota(ts_builder *b, ts_dtype dt, int rank, const ts_dim *dims, int axis)
{
    return onnx_util_iota_b(b, dt, rank, dims, axis);
}
static ts_value *take(ts_builder *b, ts_value *x, ts_value *idx, int axis) { return onnx_util_take_b(b, x, idx, axis); }
static ts_value *cut(ts_builder *b, ts_value *x, int axis, int64_t lo, int64_t hi)
{
    return onnx_util_cut_b(b, x, axis, lo, hi);
}
static ts_value *unsq(ts_builder *b, ts_value *x, int at) { return onnx_util_unsq_b(b, x, at); }

/* x with the size-1 axis `at` removed. */
static ts_value *sq(ts_builder *b, ts_value *x, int at)
{
    if (!x) return NULL;
    ts_dim d[TS_MAX_RANK];
    int r = x->type.rank;
    for (int i = 0, k = 0; i < r; i++)
        if (i != at) d[k++] = x->type.dims[i];
    return ts_b_reshape(b, x, r - 1, d);
}

/* ---- Det -------------------------------------------------------------------------------------- */

/* One elimination step at column k of a [..., N, N]: swap the row with the
 * largest |a[i, k]| (i >= k) into row k (as a rank-1 update with one-hot
 * rows, since every batch entry picks its own pivot), flip *sign when it
 * moved, and clear column k below the diagonal. A zero pivot means a zero
 * column: its factors are 0 and the diagonal carries the 0. */
static ts_value *eliminate(ts_builder *b, ts_value *a, int64_t N, int64_t k, ts_value **sign)
{
    int r = a->type.rank;
    ts_dtype dt = a->type.dtype;
    ts_dim nd = ts_dim_const(N);
    ts_value *col = sq(b, cut(b, cut(b, a, r - 2, k, N), r - 1, k, k + 1), r - 1);
    ts_value *p = bin(b, TS_OP_ADD, ts_b_reduce(b, TS_OP_ARGMAX, un(b, TS_OP_ABS, col), 1, (int64_t[]){-1}, false), i64(b, k));
    ts_value *ri = iota(b, TS_DTYPE_I64, 1, &nd, 0);
    ts_value *ep = as(b, bin(b, TS_OP_EQ, ri, unsq(b, p, r - 2)), dt), *ek = as(b, bin(b, TS_OP_EQ, ri, i64(b, k)), dt);
    ts_value *rowp = ts_b_reduce(b, TS_OP_REDUCE_SUM, bin(b, TS_OP_MUL, a, unsq(b, ep, r - 1)), 1, (int64_t[]){-2}, false);
    ts_value *rowk = sq(b, cut(b, a, r - 2, k, k + 1), r - 2);
    a = bin(b, TS_OP_ADD, a, bin(b, TS_OP_MUL, unsq(b, bin(b, TS_OP_SUB, ek, ep), r - 1), unsq(b, bin(b, TS_OP_SUB, rowp, rowk), r - 2)));
    *sign = bin(b, TS_OP_MUL, *sign, ts_b_select(b, bin(b, TS_OP_EQ, p, i64(b, k)), ts_b_scalar(b, dt, 1), ts_b_scalar(b, dt, -1)));
    ts_value *piv = sq(b, sq(b, cut(b, cut(b, a, r - 2, k, k + 1), r - 1, k, k + 1), r - 1), r - 2);
    piv = ts_b_select(b, bin(b, TS_OP_EQ, piv, ts_b_scalar(b, dt, 0)), ts_b_scalar(b, dt, 1), piv);
    ts_value *below = as(b, bin(b, TS_OP_LT, i64(b, k), ri), dt);
    ts_value *f = bin(b, TS_OP_MUL, bin(b, TS_OP_DIV, sq(b, cut(b, a, r - 1, k, k + 1), r - 1), unsq(b, piv, r - 2)), below);
    rowk = sq(b, cut(b, a, r - 2, k, k + 1), r - 2);
    return bin(b, TS_OP_SUB, a, bin(b, TS_OP_MUL, unsq(b, f, r - 1), unsq(b, rowk, r - 2)));
}

/* Det-11/22: Gaussian elimination with partial pivoting, unrolled over the
 * constant matrix size, in f64 (elimination loses digits that a
 * determinant near zero needs), rounded once to x's dtype. */
static ts_status onnx_det(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    ts_value *x = onnx_input(n, 0);
    TS_TRY(onnx_status(n));
    int r = x->type.rank;
    if (r < 2 || !ts_dtype_is_float(x->type.dtype)) return onnx_fail(n, TS_ERR_SHAPE, "Det needs a float tensor [..., M, M]");
    ts_dim N = x->type.dims[r - 1];
    if (!ts_dim_is_const(N) || !ts_dim_eq(N, x->type.dims[r - 2]))
        return onnx_unsupported(n, "Det of a matrix whose size is symbolic or not square");
    ts_dtype w = TS_DTYPE_F64;
    ts_value *a = as(b, x, w), *sign = ts_b_scalar(b, w, 1);
    for (int64_t k = 0; k + 1 < N.c && a; k++) a = eliminate(b, a, N.c, k, &sign);
    ts_dim sd[2] = {N, N};
    ts_value *eye = as(b, bin(b, TS_OP_EQ, iota(b, TS_DTYPE_I64, 2, sd, 0), iota(b, TS_DTYPE_I64, 2, sd, 1)), w);
    ts_value *diag = ts_b_reduce(b, TS_OP_REDUCE_SUM, bin(b, TS_OP_MUL, a, eye), 1, (int64_t[]){-1}, false);
    ts_value *det = bin(b, TS_OP_MUL, ts_b_reduce(b, TS_OP_REDUCE_PROD, diag, 1, (int64_t[]){-1}, false), sign);
    n->out[0] = as(b, det, x->type.dtype);
    return onnx_status(n);
}

/* ---- AffineGrid ------------------------------------------------------------------------------- */

/* Normalised coordinates along spatial axis s of dims (k of them), f64:
 * pixel centres (align_corners 0) or corners (1). */
static ts_value *grid_axis(ts_builder *b, int k, const ts_dim *dims, int s, bool corners)
{
    int64_t S = dims[s].c;
    ts_value *i = iota(b, TS_DTYPE_F64, k, dims, s);
    if (corners) return S == 1 ? ts_b_full(b, TS_DTYPE_F64, -1, k, dims) : bin(b, TS_OP_SUB, bin(b, TS_OP_MUL, i, f64(b, 2.0 / (double)(S - 1))), f64(b, 1));
    return bin(b, TS_OP_SUB, bin(b, TS_OP_MUL, bin(b, TS_OP_ADD, i, f64(b, 0.5)), f64(b, 2.0 / (double)S)), f64(b, 1));
}

/* AffineGrid-20: grid[n, ..., :] = theta[n] @ (x, y[, z], 1). */
static ts_status onnx_affine_grid(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    ts_value *theta = onnx_input(n, 0);
    const int64_t *size = NULL;
    int cnt = 0;
    TS_TRY(onnx_status(n));
    TS_TRY(onnx_const_ints(n, 1, &size, &cnt));
    int k = cnt - 2;
    if ((k != 2 && k != 3) || theta->type.rank != 3 || !ts_dtype_is_float(theta->type.dtype))
        return onnx_fail(n, TS_ERR_SHAPE, "AffineGrid needs size of 4 or 5 entries and theta [N, %d, %d]", k, k + 1);
    bool corners = onnx_attr_int(n, "align_corners", 0) != 0;
    ts_dim dims[3];
    for (int i = 0; i < k; i++) dims[i] = ts_dim_const(size[2 + i]);
    ts_value *parts[4];
    for (int i = 0; i < k; i++) parts[i] = unsq(b, grid_axis(b, k, dims, k - 1 - i, corners), k);
    parts[k] = unsq(b, ts_b_full(b, TS_DTYPE_F64, 1, k, dims), k);
    ts_value *base = ts_b_concat(b, k + 1, parts, k);
    int64_t lc = k, rc = 2, perm[5];
    ts_value *g = ts_b_dot(b, base, as(b, theta, TS_DTYPE_F64), 0, NULL, NULL, 1, &lc, &rc);   /* [sp..., N, k] */
    perm[0] = k;
    for (int i = 0; i < k; i++) perm[1 + i] = i;
    perm[k + 1] = k + 1;
    n->out[0] = g ? as(b, ts_b_transpose(b, g, perm), theta->type.dtype) : NULL;
    return onnx_status(n);
}

/* ---- NonMaxSuppression ------------------------------------------------------------------------- */


/* Coordinate i of boxes [..., 4], as [...]. */
static ts_value *coord(ts_builder *b, ts_value *bx, int i)
{
    int r = bx ? bx->type.rank : 1;
    return sq(b, cut(b, bx, r - 1, i, i + 1), r - 1);
}

/* Box extents lo/hi on x and y of boxes [B, C, N, 4]: corners [y1, x1, y2,
 * x2] in either order, or centres [xc, yc, w, h]. */
static void extents(ts_builder *b, ts_value *bx, bool center, ts_value *e[4])
{
    ts_value *c[4] = {coord(b, bx, 0), coord(b, bx, 1), coord(b, bx, 2), coord(b, bx, 3)};
    if (center) {
        ts_value *hw = bin(b, TS_OP_DIV, c[2], ts_b_scalar(b, bx->type.dtype, 2));
        ts_value *hh = bin(b, TS_OP_DIV, c[3], ts_b_scalar(b, bx->type.dtype, 2));
        e[0] = bin(b, TS_OP_SUB, c[0], hw), e[1] = bin(b, TS_OP_ADD, c[0], hw);
        e[2] = bin(b, TS_OP_SUB, c[1], hh), e[3] = bin(b, TS_OP_ADD, c[1], hh);
        return;
    }
    e[0] = bin(b, TS_OP_MIN, c[1], c[3]), e[1] = bin(b, TS_OP_MAX, c[1], c[3]);
    e[2] = bin(b, TS_OP_MIN, c[0], c[2]), e[3] = bin(b, TS_OP_MAX, c[0], c[2]);
}

static ts_value *and3(ts_builder *b, ts_value *x, ts_value *y, ts_value *z)
{
    return ts_b_binary(b, TS_OP_AND, ts_b_binary(b, TS_OP_AND, x, y), z);
}

/* sup[..., j, k]: box j suppresses box k — IoU above thr, with a positive
 * intersection and positive areas (the reference's conditions). */
static ts_value *suppression(ts_builder *b, ts_value *bx, bool center, ts_value *thr)
{
    ts_value *e[4], *a[4], *c[4];
    extents(b, bx, center, e);
    for (int i = 0; i < 4; i++) a[i] = unsq(b, e[i], 3), c[i] = unsq(b, e[i], 2);
    ts_value *x0 = bin(b, TS_OP_MAX, a[0], c[0]), *x1 = bin(b, TS_OP_MIN, a[1], c[1]);
    ts_value *y0 = bin(b, TS_OP_MAX, a[2], c[2]), *y1 = bin(b, TS_OP_MIN, a[3], c[3]);
    ts_value *inter = bin(b, TS_OP_MUL, bin(b, TS_OP_SUB, x1, x0), bin(b, TS_OP_SUB, y1, y0));
    ts_value *area = bin(b, TS_OP_MUL, bin(b, TS_OP_SUB, e[1], e[0]), bin(b, TS_OP_SUB, e[3], e[2]));
    ts_value *aj = unsq(b, area, 3), *ak = unsq(b, area, 2), *zero = ts_b_scalar(b, bx->type.dtype, 0);
    ts_value *uni = bin(b, TS_OP_SUB, bin(b, TS_OP_ADD, aj, ak), inter);
    ts_value *ok = and3(b, bin(b, TS_OP_LT, x0, x1), bin(b, TS_OP_LT, y0, y1), bin(b, TS_OP_LT, zero, inter));
    ok = and3(b, ok, bin(b, TS_OP_LT, zero, aj), bin(b, TS_OP_LT, zero, ak));
    ok = ts_b_binary(b, TS_OP_AND, ok, bin(b, TS_OP_LT, zero, uni));
    return ts_b_binary(b, TS_OP_AND, ok, bin(b, TS_OP_LT, thr, bin(b, TS_OP_DIV, inter, uni)));
}

/* x[..., k, ...] along axis (k an i64 scalar of b's block), the axis kept as 1. */
static ts_value *dyn_at(ts_builder *b, ts_value *x, int axis, ts_value *k)
{
    int r = x->type.rank;
    ts_dim one = ts_dim_const(1), sz[TS_MAX_RANK];
    ts_value *parts[TS_MAX_RANK];
    for (int i = 0; i < r; i++) {
        parts[i] = i == axis ? ts_b_reshape(b, k, 1, &one) : ts_b_full(b, TS_DTYPE_I64, 0, 1, &one);
        sz[i] = i == axis ? one : x->type.dims[i];
    }
    ts_value *start = ts_b_concat(b, r, parts, 0);
    ts_attr *a = ts_b_attrs(b, TS_OP_DYNAMIC_SLICE);
    if (!a || !start) return NULL;
    if (ts_attr_set_dims(ts_builder_graph(b), TS_OP_DYNAMIC_SLICE, a, "sizes", r, sz) != TS_OK) {
        ts_builder_fail(b, TS_ERR_OOM, "dynamic_slice: could not set sizes");
        return NULL;
    }
    return ts_b_node(b, TS_OP_DYNAMIC_SLICE, 2, (ts_value *[]){x, start}, a);
}

/* Loop state of the greedy selection. */
enum { S_K, S_N, S_KEEP, S_COUNT, S_SUP, S_VALID, S_MAX, S_COUNT_ };

/* Body: candidate k (in score order) is kept when valid, not suppressed by
 * a box kept before it, and its class has room left. */
static ts_status nms_body(onnx_node *n, ts_value *const *st, ts_block **body)
{
    ts_value *p[S_COUNT_], *r[S_COUNT_];
    TS_TRY(onnx_util_region(n, S_COUNT_, st, body, p));
    ts_builder *b = ts_builder_new(onnx_graph(n), *body);
    if (!b) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    memcpy(r, p, sizeof r);
    ts_value *k = p[S_K];
    ts_value *supk = sq(b, dyn_at(b, p[S_SUP], 3, k), 3);
    ts_value *hits = as(b, ts_b_binary(b, TS_OP_AND, p[S_KEEP], supk), TS_DTYPE_I64);
    ts_value *hit = bin(b, TS_OP_LT, i64(b, 0), ts_b_reduce(b, TS_OP_REDUCE_SUM, hits, 1, (int64_t[]){2}, false));
    ts_value *valid = sq(b, dyn_at(b, p[S_VALID], 2, k), 2);
    ts_value *take = and3(b, valid, un(b, TS_OP_NOT, hit), bin(b, TS_OP_LT, p[S_COUNT], p[S_MAX]));
    ts_dim nd = p[S_KEEP]->type.dims[2];
    ts_value *at = bin(b, TS_OP_EQ, iota(b, TS_DTYPE_I64, 1, &nd, 0), k);
    r[S_KEEP] = ts_b_binary(b, TS_OP_OR, p[S_KEEP], ts_b_binary(b, TS_OP_AND, at, unsq(b, take, 2)));
    r[S_COUNT] = bin(b, TS_OP_ADD, p[S_COUNT], as(b, take, TS_DTYPE_I64));
    r[S_K] = bin(b, TS_OP_ADD, k, i64(b, 1));
    if (ts_builder_status(b, NULL) == TS_OK) ts_b_return(b, S_COUNT_, r);
    return onnx_util_close_region(n, b);
}

static ts_status nms_cond(onnx_node *n, ts_value *const *st, ts_block **cond)
{
    ts_value *p[S_COUNT_];
    TS_TRY(onnx_util_region(n, S_COUNT_, st, cond, p));
    ts_builder *b = ts_builder_new(onnx_graph(n), *cond);
    if (!b) return onnx_fail(n, TS_ERR_OOM, "out of memory");
    ts_value *go = bin(b, TS_OP_LT, p[S_K], p[S_N]);
    ts_b_return(b, 1, &go);
    return onnx_util_close_region(n, b);
}

/* One optional scalar input (a scalar or [1]) as dtype dt, or def. */
static ts_value *scalar_input(onnx_node *n, int i, ts_dtype dt, double def)
{
    ts_builder *b = onnx_b(n);
    ts_value *v = opt_input(n, i);
    return v ? as(b, ts_b_reshape(b, v, 0, NULL), dt) : ts_b_scalar(b, dt, def);
}

static ts_dim dmul(onnx_node *n, ts_dim a, ts_dim c)
{
    ts_dim r = ts_dim_const(0);
    ts_err err = {0};
    if (ts_dim_mul(onnx_graph(n)->syms, a, c, &r, &err) != TS_OK) onnx_fail(n, err.code, "%s", err.msg);
    return r;
}

/* [nnz, 3] (batch, class, box) from the kept mask [B, C, N] in score order
 * and the sort's indices: nonzero walks (b, c, rank) in row-major order,
 * which is the output order. */
static ts_value *nms_indices(onnx_node *n, ts_value *keep, ts_value *order)
{
    ts_builder *b = onnx_b(n);
    const ts_dim *d = keep->type.dims;
    ts_value *nz = ts_b_node(b, TS_OP_NONZERO, 1, &keep, NULL), *rows[3];
    for (int i = 0; i < 3; i++) rows[i] = sq(b, cut(b, nz, 0, i, i + 1), 0);
    ts_value *flat = bin(b, TS_OP_ADD, bin(b, TS_OP_MUL, rows[0], onnx_dim_scalar(n, d[1])), rows[1]);
    flat = bin(b, TS_OP_ADD, bin(b, TS_OP_MUL, flat, onnx_dim_scalar(n, d[2])), rows[2]);
    ts_dim all = dmul(n, dmul(n, d[0], d[1]), d[2]);
    ts_value *ord = ts_b_reshape(b, order, 1, &all);
    ts_value *box = take(b, ord, flat, 0);
    ts_value *cols[3] = {unsq(b, rows[0], 1), unsq(b, rows[1], 1), unsq(b, box, 1)};
    return ts_b_concat(b, 3, cols, 1);
}

/* Boxes [B, N, 4] reordered per class by `order` [B, C, N]: [B, C, N, 4]. */
static ts_value *sorted_boxes(onnx_node *n, ts_value *boxes, ts_value *order)
{
    ts_builder *b = onnx_b(n);
    const ts_dim *d = order->type.dims;
    ts_dim fd[2] = {dmul(n, d[0], d[2]), ts_dim_const(4)};
    ts_value *bi = iota(b, TS_DTYPE_I64, 3, d, 0);
    ts_value *flat = bin(b, TS_OP_ADD, bin(b, TS_OP_MUL, bi, onnx_dim_scalar(n, d[2])), order);
    ts_value *fb = ts_b_reshape(b, boxes, 2, fd);
    return take(b, fb, flat, 0);
}

/* NonMaxSuppression-10/11: per batch and class, candidates in descending
 * score order (stable: ties by box index), greedily kept by a while loop. */
static ts_status onnx_non_max_suppression(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    ts_value *boxes = onnx_input(n, 0), *scores = onnx_input(n, 1), *sorted[2], *st[S_COUNT_], *out[S_COUNT_];
    int ns = 0;
    TS_TRY(onnx_status(n));
    ts_dtype dt = boxes->type.dtype;
    if (boxes->type.rank != 3 || scores->type.rank != 3 || !ts_dtype_is_float(dt) || scores->type.dtype != dt)
        return onnx_fail(n, TS_ERR_SHAPE, "NonMaxSuppression needs boxes [B, N, 4] and scores [B, C, N] of one float type");
    ts_attr *sa = ts_b_attrs(b, TS_OP_SORT);
    if (sa && ts_attr_set_int(onnx_graph(n), TS_OP_SORT, sa, "axis", 2) == TS_OK)
        ts_attr_set_int(onnx_graph(n), TS_OP_SORT, sa, "descending", 1);
    TS_TRY(ts_b_op(b, TS_OP_SORT, 1, &scores, sa, 0, NULL, 2, sorted, &ns));
    bool center = onnx_attr_int(n, "center_point_box", 0) != 0;
    const ts_dim *d = scores->type.dims;
    ts_value *sb = sorted_boxes(n, boxes, sorted[1]);
    TS_TRY(onnx_status(n));
    ts_value *sup = suppression(b, sb, center, scalar_input(n, 3, dt, 0));
    ts_value *valid = onnx_has_input(n, 4) ? bin(b, TS_OP_LT, scalar_input(n, 4, dt, 0), sorted[0])
                                           : ts_b_full(b, TS_DTYPE_BOOL, 1, 3, d);
    st[S_K] = i64(b, 0);
    st[S_N] = onnx_dim_scalar(n, d[2]);
    st[S_KEEP] = ts_b_full(b, TS_DTYPE_BOOL, 0, 3, d);
    st[S_COUNT] = ts_b_full(b, TS_DTYPE_I64, 0, 2, d);
    st[S_SUP] = sup;
    st[S_VALID] = valid;
    st[S_MAX] = bin(b, TS_OP_MAX, scalar_input(n, 2, TS_DTYPE_I64, 0), i64(b, 0));
    TS_TRY(onnx_status(n));
    ts_block *rg[2] = {NULL, NULL};
    TS_TRY(nms_cond(n, st, &rg[0]));
    TS_TRY(nms_body(n, st, &rg[1]));
    TS_TRY(ts_b_op(b, TS_OP_WHILE, S_COUNT_, st, NULL, 2, rg, S_COUNT_, out, &ns));
    n->out[0] = nms_indices(n, out[S_KEEP], sorted[1]);
    return onnx_status(n);
}

/* ---- RoiAlign ----------------------------------------------------------------------------------- */

/* Bilinear sample positions along one axis of a feature map of `size`, for
 * every roi: bins of width `bw` from `start` ([R, 1] each), s samples per
 * bin at start + bin * (p + (i + 0.5) / s), giving [R, PB*s]. Out: the
 * low/high source index (i64) and their weights; a sample outside
 * [-1, size] gets index 0 and weight 0, as in the reference. */
static void roi_axis(ts_builder *b, ts_value *start, ts_value *bw, int64_t PB, int64_t s, int64_t size, ts_value **idx,
                     ts_value **wt)
{
    ts_dtype w = start->type.dtype;
    ts_dim qd = ts_dim_const(PB * s);
    ts_value *q = iota(b, TS_DTYPE_I64, 1, &qd, 0), *sv = i64(b, s);
    ts_value *t = bin(b, TS_OP_ADD, as(b, bin(b, TS_OP_DIV, q, sv), w),
                      bin(b, TS_OP_DIV, bin(b, TS_OP_ADD, as(b, bin(b, TS_OP_REM, q, sv), w), ts_b_scalar(b, w, 0.5)), ts_b_scalar(b, w, (double)s)));
    ts_value *y = bin(b, TS_OP_ADD, start, bin(b, TS_OP_MUL, bw, t));
    ts_value *zero = ts_b_scalar(b, w, 0), *top = ts_b_scalar(b, w, (double)(size - 1));
    ts_value *valid = ts_b_binary(b, TS_OP_AND, bin(b, TS_OP_LE, ts_b_scalar(b, w, -1), y), bin(b, TS_OP_LE, y, ts_b_scalar(b, w, (double)size)));
    y = bin(b, TS_OP_MAX, y, zero);
    ts_value *lo = un(b, TS_OP_FLOOR, y), *clamp = bin(b, TS_OP_LE, top, lo);
    lo = ts_b_select(b, clamp, top, lo);
    y = ts_b_select(b, clamp, lo, y);
    ts_value *hi = ts_b_select(b, clamp, lo, bin(b, TS_OP_ADD, lo, ts_b_scalar(b, w, 1)));
    ts_value *l = bin(b, TS_OP_SUB, y, lo);
    idx[0] = as(b, ts_b_select(b, valid, lo, zero), TS_DTYPE_I64);
    idx[1] = as(b, ts_b_select(b, valid, hi, zero), TS_DTYPE_I64);
    wt[0] = ts_b_select(b, valid, bin(b, TS_OP_SUB, ts_b_scalar(b, w, 1), l), zero);
    wt[1] = ts_b_select(b, valid, l, zero);
}

/* Roi column k of rois [R, 4] as [R, 1], scaled and shifted. */
static ts_value *roi_col(ts_builder *b, ts_value *rois, int k, double scale, double off)
{
    ts_dtype w = rois->type.dtype;
    ts_value *c = bin(b, TS_OP_MUL, cut(b, rois, 1, k, k + 1), ts_b_scalar(b, w, scale));
    return bin(b, TS_OP_SUB, c, ts_b_scalar(b, w, off));
}

typedef struct roi_spec {
    int64_t PH, PW, s, H, W;
    double scale, off;
    bool half, max;
} roi_spec;

/* Per roi: the sample indices and weights along y ([R, PH*s]) and x. */
static void roi_samples(ts_builder *b, const roi_spec *sp, ts_value *rois, ts_value *iy[2], ts_value *wy[2],
                        ts_value *ix[2], ts_value *wx[2])
{
    ts_dtype w = rois->type.dtype;
    ts_value *x0 = roi_col(b, rois, 0, sp->scale, sp->off), *y0 = roi_col(b, rois, 1, sp->scale, sp->off);
    ts_value *rw = bin(b, TS_OP_SUB, roi_col(b, rois, 2, sp->scale, sp->off), x0);
    ts_value *rh = bin(b, TS_OP_SUB, roi_col(b, rois, 3, sp->scale, sp->off), y0);
    if (!sp->half) {
        rw = bin(b, TS_OP_MAX, rw, ts_b_scalar(b, w, 1));
        rh = bin(b, TS_OP_MAX, rh, ts_b_scalar(b, w, 1));
    }
    roi_axis(b, y0, bin(b, TS_OP_DIV, rh, ts_b_scalar(b, w, (double)sp->PH)), sp->PH, sp->s, sp->H, iy, wy);
    roi_axis(b, x0, bin(b, TS_OP_DIV, rw, ts_b_scalar(b, w, (double)sp->PW)), sp->PW, sp->s, sp->W, ix, wx);
}

/* The four bilinear corners of every sample as [R, 1, Qy, Qx, 4]: flat
 * positions y*W + x and weights. */
static void roi_corners(ts_builder *b, const roi_spec *sp, ts_value *iy[2], ts_value *wy[2], ts_value *ix[2],
                        ts_value *wx[2], ts_value **pos, ts_value **wt)
{
    ts_value *p[4], *w[4];
    for (int k = 0; k < 4; k++) {
        ts_value *ya = unsq(b, iy[k >> 1], 2), *xb = unsq(b, ix[k & 1], 1);
        p[k] = unsq(b, unsq(b, bin(b, TS_OP_ADD, bin(b, TS_OP_MUL, ya, i64(b, sp->W)), xb), 3), 1);
        w[k] = unsq(b, unsq(b, bin(b, TS_OP_MUL, unsq(b, wy[k >> 1], 2), unsq(b, wx[k & 1], 1)), 3), 1);
    }
    *pos = ts_b_concat(b, 4, p, 4);
    *wt = ts_b_concat(b, 4, w, 4);
}

/* RoiAlign-10/16/22 with a fixed sampling_ratio: bilinear samples gathered
 * from X flattened, weighted, then averaged (or maxed) per bin. */
static ts_status roi_align(onnx_node *n, const roi_spec *sp, ts_value *x, ts_value *rois, ts_value *bidx)
{
    ts_builder *b = onnx_b(n);
    ts_dtype w = x->type.dtype == TS_DTYPE_F64 ? TS_DTYPE_F64 : TS_DTYPE_F32;
    ts_value *iy[2], *wy[2], *ix[2], *wx[2], *pos, *wt;
    rois = as(b, rois, w);
    roi_samples(b, sp, rois, iy, wy, ix, wx);
    roi_corners(b, sp, iy, wy, ix, wx, &pos, &wt);
    const ts_dim *xd = x->type.dims;
    ts_dim R = rois->type.dims[0], one = ts_dim_const(1), cd[2] = {one, xd[1]};
    ts_dim bd[5] = {R, xd[1], one, one, one};
    ts_value *plane = bin(b, TS_OP_ADD, bin(b, TS_OP_MUL, unsq(b, as(b, bidx, TS_DTYPE_I64), 1), onnx_dim_scalar(n, xd[1])),
                          iota(b, TS_DTYPE_I64, 2, cd, 1));
    ts_value *base = ts_b_reshape(b, bin(b, TS_OP_MUL, plane, i64(b, sp->H * sp->W)), 5, bd);
    ts_dim all = dmul(n, dmul(n, xd[0], xd[1]), ts_dim_const(sp->H * sp->W));
    ts_value *g = as(b, take(b, ts_b_reshape(b, x, 1, &all), bin(b, TS_OP_ADD, base, pos), 0), w);
    g = bin(b, TS_OP_MUL, g, wt);
    ts_op red = sp->max ? TS_OP_REDUCE_MAX : TS_OP_REDUCE_SUM;
    g = ts_b_reduce(b, red, g, 1, (int64_t[]){4}, false);
    ts_dim gd[6] = {R, xd[1], ts_dim_const(sp->PH), ts_dim_const(sp->s), ts_dim_const(sp->PW), ts_dim_const(sp->s)};
    g = ts_b_reduce(b, red, ts_b_reshape(b, g, 6, gd), 2, (int64_t[]){3, 5}, false);
    if (!sp->max) g = bin(b, TS_OP_DIV, g, ts_b_scalar(b, w, (double)(sp->s * sp->s)));
    n->out[0] = as(b, g, x->type.dtype);
    return onnx_status(n);
}

static ts_status onnx_roi_align(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *rois = onnx_input(n, 1), *bidx = onnx_input(n, 2);
    TS_TRY(onnx_status(n));
    roi_spec sp;
    sp.PH = onnx_attr_int(n, "output_height", 1);
    sp.PW = onnx_attr_int(n, "output_width", 1);
    sp.s = onnx_attr_int(n, "sampling_ratio", 0);
    sp.scale = onnx_attr_float(n, "spatial_scale", 1.0);
    /* before opset 16 there is no choice: output_half_pixel */
    static const char *const ctms[] = {"half_pixel", "output_half_pixel", NULL}, *const modes[] = {"avg", "max", NULL};
    int ct = n->opset >= 16 ? onnx_attr_enum(n, "coordinate_transformation_mode", "half_pixel", ctms) : 1;
    int mode = onnx_attr_enum(n, "mode", "avg", modes);
    TS_TRY(onnx_status(n));
    sp.half = ct == 0;
    sp.off = sp.half ? 0.5 : 0;
    sp.max = mode == 1;
    if (sp.s <= 0) return onnx_unsupported(n, "RoiAlign with sampling_ratio 0 (adaptive: the sample count depends on each roi's size)");
    if (x->type.rank != 4 || rois->type.rank != 2 || !ts_dtype_is_float(x->type.dtype) || !ts_dtype_is_float(rois->type.dtype))
        return onnx_fail(n, TS_ERR_SHAPE, "RoiAlign needs X [N, C, H, W] and rois [R, 4] of float types");
    if (!ts_dim_is_const(x->type.dims[2]) || !ts_dim_is_const(x->type.dims[3]))
        return onnx_unsupported(n, "RoiAlign over a feature map of symbolic height or width");
    sp.H = x->type.dims[2].c;
    sp.W = x->type.dims[3].c;
    return roi_align(n, &sp, x, rois, bidx);
}

static ts_status onnx_strings(onnx_node *n);

/* ---- TfIdfVectorizer (integer tokens) ------------------------------------------------------------ */

/* The pool's n-grams of size n ([G, n] i64 constant), from pool_int64s
 * starting at `from`. */
static ts_value *pool_grams(onnx_node *n, const int64_t *pool, int64_t from, int64_t G, int64_t size)
{
    ts_tensor *t = NULL;
    ts_err err = {0};
    int64_t shape[2] = {G, size};
    if (ts_tensor_new(TS_DTYPE_I64, 2, shape, &t, &err) != TS_OK) {
        onnx_fail(n, err.code, "%s", err.msg);
        return NULL;
    }
    memcpy(ts_tensor_data(t), pool + from, sizeof(int64_t) * (size_t)(G * size));
    ts_value *v = ts_b_const(onnx_b(n), t);
    ts_tensor_release(t);
    return v;
}

/* Occurrences in x [B, L] of each of the G n-grams p [G, size] with skip
 * distance d (tokens d apart): [B, G] f32. */
static ts_value *gram_counts(ts_builder *b, ts_value *x, ts_value *p, int64_t size, int64_t d)
{
    int64_t L = x->type.dims[1].c, W = L - d * (size - 1);
    ts_value *all = NULL;
    for (int64_t m = 0; m < size; m++) {
        ts_value *tok = unsq(b, cut(b, x, 1, m * d, m * d + W), 2);
        ts_value *eq = bin(b, TS_OP_EQ, tok, unsq(b, sq(b, cut(b, p, 1, m, m + 1), 1), 0));
        all = all ? ts_b_binary(b, TS_OP_AND, all, eq) : eq;
    }
    return ts_b_reduce(b, TS_OP_REDUCE_SUM, as(b, all, TS_DTYPE_F32), 1, (int64_t[]){1}, false);
}

/* Counts [B, G] of the pool's n-grams of one size, over every skip
 * distance (unigrams once: skipping does not change them). */
static ts_value *size_counts(onnx_node *n, ts_value *x, ts_value *p, int64_t size, int64_t max_skip)
{
    ts_builder *b = onnx_b(n);
    int64_t L = x->type.dims[1].c;
    ts_dim zd[2] = {x->type.dims[0], p->type.dims[0]};
    ts_value *c = ts_b_full(b, TS_DTYPE_F32, 0, 2, zd);
    for (int64_t d = 1; d <= (size == 1 ? 1 : max_skip + 1); d++)
        if (L - d * (size - 1) > 0) c = bin(b, TS_OP_ADD, c, gram_counts(b, x, p, size, d));
    return c;
}

/* Per-pool-n-gram counts [B, total], in pool order; sizes outside
 * [min_gram, max_gram] count nothing. */
static ts_value *pool_counts(onnx_node *n, ts_value *x, int *total)
{
    ts_builder *b = onnx_b(n);
    const int64_t *cnt = NULL, *pool = NULL;
    int nc = onnx_attr_ints(n, "ngram_counts", &cnt), np = onnx_attr_ints(n, "pool_int64s", &pool);
    int64_t lo = onnx_attr_int(n, "min_gram_length", 1), hi = onnx_attr_int(n, "max_gram_length", 1);
    int64_t skip = onnx_attr_int(n, "max_skip_count", 0);
    ts_value *parts[64];
    int k = 0;
    *total = 0;
    for (int i = 0; i < nc && k < 64; i++) {
        int64_t from = cnt[i], to = i + 1 < nc ? cnt[i + 1] : np, size = i + 1, G = (to - from) / size;
        if (G <= 0) continue;
        ts_value *p = pool_grams(n, pool, from, G, size);
        ts_dim zd[2] = {x->type.dims[0], ts_dim_const(G)};
        parts[k++] = size >= lo && size <= hi ? size_counts(n, x, p, size, skip) : ts_b_full(b, TS_DTYPE_F32, 0, 2, zd);
        *total += (int)G;
    }
    if (k == 0) return NULL;
    return k == 1 ? parts[0] : ts_b_concat(b, k, parts, 1);
}

/* TfIdfVectorizer-9 over integer tokens: n-gram counts of a constant-length
 * [C] or [B, C] input, weighted by mode (weights per pool n-gram, as the
 * spec and onnxruntime read them), placed by ngram_indexes (a dot with a
 * one-hot matrix). */
static ts_status onnx_tfidf_vectorizer(onnx_node *n)
{
    ts_builder *b = onnx_b(n);
    ts_value *x = onnx_input(n, 0);
    TS_TRY(onnx_status(n));
    const int64_t *idx = NULL, *pool = NULL, *cnt = NULL;
    const float *wts = NULL;
    int ni = onnx_attr_ints(n, "ngram_indexes", &idx), nw = onnx_attr_floats(n, "weights", &wts);
    if (!ts_dtype_is_int(x->type.dtype) || onnx_attr_ints(n, "pool_int64s", &pool) < 0)
        return onnx_strings(n);
    int r = x->type.rank;
    if ((r != 1 && r != 2) || !ts_dim_is_const(x->type.dims[r - 1]) || ni < 1 || onnx_attr_ints(n, "ngram_counts", &cnt) < 1)
        return onnx_unsupported(n, "TfIdfVectorizer needs x [C] or [B, C] with a constant C, and ngram_counts/ngram_indexes");
    ts_value *x2 = as(b, r == 1 ? unsq(b, x, 0) : x, TS_DTYPE_I64);
    int total = 0;
    int64_t O = 0;
    for (int i = 0; i < ni; i++) O = idx[i] + 1 > O ? idx[i] + 1 : O;
    ts_value *c = pool_counts(n, x2, &total);
    TS_TRY(onnx_status(n));
    if (!c || total != ni) return onnx_fail(n, TS_ERR_INVALID_MODEL, "ngram_indexes has %d entries for %d pool n-grams", ni, total);
    const char *mode = onnx_attr_string(n, "mode", "TF");
    if (strcmp(mode, "IDF") == 0) c = as(b, bin(b, TS_OP_LT, ts_b_scalar(b, TS_DTYPE_F32, 0), c), TS_DTYPE_F32);
    else if (strcmp(mode, "TF") != 0 && strcmp(mode, "TFIDF") != 0) return onnx_fail(n, TS_ERR_INVALID_MODEL, "mode '%s'", mode);
    if (strcmp(mode, "TF") != 0 && nw > 0) {
        if (nw != total) return onnx_fail(n, TS_ERR_INVALID_MODEL, "weights has %d entries for %d pool n-grams", nw, total);
        ts_tensor *t = NULL;
        ts_err err = {0};
        int64_t wn = nw;
        if (ts_tensor_new(TS_DTYPE_F32, 1, &wn, &t, &err) != TS_OK) return onnx_fail(n, err.code, "%s", err.msg);
        memcpy(ts_tensor_data(t), wts, sizeof(float) * (size_t)nw);
        c = bin(b, TS_OP_MUL, c, ts_b_const(b, t));
        ts_tensor_release(t);
    }
    ts_value *place = pool_grams(n, idx, 0, ni, 1);
    ts_dim od = ts_dim_const(O);
    ts_value *onehot = as(b, bin(b, TS_OP_EQ, place, unsq(b, iota(b, TS_DTYPE_I64, 1, &od, 0), 0)), TS_DTYPE_F32);
    int64_t lc = 1, rc = 0;
    ts_value *y = ts_b_dot(b, c, onehot, 0, NULL, NULL, 1, &lc, &rc);   /* [B, O] */
    n->out[0] = r == 1 ? sq(b, y, 0) : y;
    return onnx_status(n);
}

/* ---- refused: strings, images ------------------------------------------ */

static ts_status onnx_strings(onnx_node *n)
{
    return onnx_unsupported(n, "%s: string tensors are not supported (docs/onnx.md)", n->op_type);
}

static ts_status onnx_image_decoder(onnx_node *n)
{
    return onnx_unsupported(n, "ImageDecoder: decoding encoded image bytes is not supported (docs/onnx.md)");
}

const onnx_op_entry onnx_ops_misc[] = {
    {"AffineGrid", 20, INT_MAX, onnx_affine_grid},
    {"Det", 11, INT_MAX, onnx_det},
    {"ImageDecoder", 20, INT_MAX, onnx_image_decoder},
    {"NonMaxSuppression", 10, INT_MAX, onnx_non_max_suppression},
    {"RegexFullMatch", 20, INT_MAX, onnx_strings},
    {"RoiAlign", 10, INT_MAX, onnx_roi_align},
    {"StringConcat", 20, INT_MAX, onnx_strings},
    {"StringNormalizer", 10, INT_MAX, onnx_strings},
    {"StringSplit", 20, INT_MAX, onnx_strings},
    {"TfIdfVectorizer", 9, INT_MAX, onnx_tfidf_vectorizer},
    {NULL, 0, 0, NULL},
};
