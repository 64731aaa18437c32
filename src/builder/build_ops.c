/* build_ops.c — the builder's convenience calls: numpy-style broadcasting,
 * layout helpers, reductions with keepdims, dot and matmul. Each one only
 * prepares operands and attributes and goes through ts_b_node. */
#include "builder/builder.h"

#include <stdio.h>
#include <string.h>

/* ---- small helpers ------------------------------------------------------------ */

static bool live(ts_builder *b) { return ts_builder_status(b, NULL) == TS_OK; }

/* Record a failure in b; gives the NULL that a failed ts_b_* call returns. */
static ts_value *fail(ts_builder *b, ts_status code, const char *fmt, ...) TS_PRINTF(3, 4);
static ts_value *fail(ts_builder *b, ts_status code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ts_builder_fail(b, code, "%s", msg);
    return NULL;
}

static bool rank_ok(ts_builder *b, const char *what, int rank, const void *dims)
{
    if (rank >= 0 && rank <= TS_MAX_RANK && (rank == 0 || dims)) return true;
    fail(b, TS_ERR_INVALID_ARG, "%s: rank %d is outside 0..%d or its list is NULL", what, rank, TS_MAX_RANK);
    return false;
}

/* The builder is healthy and none of the n values is NULL (a NULL after an
 * earlier failure is expected; one without is the caller's bug). */
static bool args_ok(ts_builder *b, const char *what, int n, ts_value *const *v)
{
    if (!live(b)) return false;
    for (int i = 0; i < n; i++)
        if (!v[i]) {
            fail(b, TS_ERR_INVALID_ARG, "%s: operand %d is NULL", what, i);
            return false;
        }
    return true;
}

static bool set_ok(ts_builder *b, ts_status s)
{
    if (s == TS_OK) return true;
    ts_builder_fail(b, s, "could not set an attribute (%s)", ts_status_name(s));
    return false;
}

static ts_value *node1(ts_builder *b, ts_op op, ts_value *x, ts_attr *a)
{
    return a ? ts_b_node(b, op, 1, &x, a) : NULL;
}

static bool is_one(ts_dim d) { return ts_dim_eq(d, ts_dim_const(1)); }

static ts_value *shape_fail(ts_builder *b, const char *what, const ts_type *x, int rank, const ts_dim *dims)
{
    ts_buf s = {0};
    ts_type t = {x->dtype, rank, (ts_dim *)dims};
    ts_type_print(&s, x);
    ts_buf_puts(&s, " and ");
    ts_type_print(&s, &t);
    fail(b, TS_ERR_SHAPE, "%s: cannot broadcast %s", what, s.data ? s.data : "?");
    ts_buf_free(&s);
    return NULL;
}

/* ---- broadcasting ------------------------------------------------------------------ */

/* numpy's rule: dims aligned from the right must be equal or one of them
 * the constant 1. Symbolic dims broadcast only against equal dims or 1. */
static bool common_shape(ts_builder *b, const char *what, const ts_type *x, int *rank, ts_dim *dims)
{
    int r = x->rank > *rank ? x->rank : *rank;
    ts_dim res[TS_MAX_RANK];
    for (int i = 1; i <= r; i++) {
        ts_dim dx = i <= x->rank ? x->dims[x->rank - i] : ts_dim_const(1);
        ts_dim dy = i <= *rank ? dims[*rank - i] : ts_dim_const(1);
        if (ts_dim_eq(dx, dy) || is_one(dy)) {
            res[r - i] = dx;
        } else if (is_one(dx)) {
            res[r - i] = dy;
        } else {
            shape_fail(b, what, x, *rank, dims);
            return false;
        }
    }
    memcpy(dims, res, sizeof(ts_dim) * (size_t)r);
    *rank = r;
    return true;
}

ts_value *ts_b_broadcast_to(ts_builder *b, ts_value *x, int rank, const ts_dim *dims)
{
    if (!args_ok(b, "broadcast_to", 1, &x)) return NULL;
    const ts_type *t = &x->type;
    if (!rank_ok(b, "broadcast_to", rank, dims)) return NULL;
    if (t->rank > rank) return shape_fail(b, "broadcast_to", t, rank, dims);
    ts_type want = {t->dtype, rank, (ts_dim *)dims};
    if (ts_type_eq(t, &want)) return x;
    int64_t axes[TS_MAX_RANK];
    for (int i = 0; i < t->rank; i++) {
        axes[i] = rank - t->rank + i;
        if (!is_one(t->dims[i]) && !ts_dim_eq(t->dims[i], dims[axes[i]]))
            return shape_fail(b, "broadcast_to", t, rank, dims);
    }
    ts_attr *a = ts_b_attrs(b, TS_OP_BROADCAST);
    if (!a || !set_ok(b, ts_attr_set_dims(ts_builder_graph(b), TS_OP_BROADCAST, a, "shape", rank, dims)) ||
        !set_ok(b, ts_attr_set_ints(ts_builder_graph(b), TS_OP_BROADCAST, a, "axes", t->rank, axes)))
        return NULL;
    return node1(b, TS_OP_BROADCAST, x, a);
}

/* Broadcast every operand to their common shape, in place. */
static bool broadcast_all(ts_builder *b, const char *what, int n, ts_value **v)
{
    int rank = 0;
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0; i < n; i++)
        if (!common_shape(b, what, &v[i]->type, &rank, dims)) return false;
    for (int i = 0; i < n; i++)
        if (!(v[i] = ts_b_broadcast_to(b, v[i], rank, dims))) return false;
    return true;
}

/* ---- elementwise ----------------------------------------------------------------- */

ts_value *ts_b_unary(ts_builder *b, ts_op op, ts_value *x)
{
    return args_ok(b, "unary", 1, &x) ? ts_b_node(b, op, 1, &x, NULL) : NULL;
}

ts_value *ts_b_binary(ts_builder *b, ts_op op, ts_value *x, ts_value *y)
{
    ts_value *v[2] = {x, y};
    if (!args_ok(b, "binary", 2, v)) return NULL;
    const ts_op_info *info = (unsigned)op < TS_OP_COUNT ? ts_op_get(op) : NULL;
    if (!info || !(info->flags & TS_OPF_EW) || info->min_in != 2 || info->max_in != 2)
        return fail(b, TS_ERR_INVALID_ARG, "binary: %s is not a binary elementwise op", info ? info->name : "?");
    if (x->type.dtype != y->type.dtype)
        return fail(b, TS_ERR_SHAPE, "%s: operand dtypes %s and %s differ (casts are explicit)", info->name,
                    ts_dtype_name(x->type.dtype), ts_dtype_name(y->type.dtype));
    if (!broadcast_all(b, info->name, 2, v)) return NULL;
    return ts_b_node(b, op, 2, v, NULL);
}

ts_value *ts_b_select(ts_builder *b, ts_value *p, ts_value *x, ts_value *y)
{
    ts_value *v[3] = {p, x, y};
    if (!args_ok(b, "select", 3, v) || !broadcast_all(b, "select", 3, v)) return NULL;
    return ts_b_node(b, TS_OP_SELECT, 3, v, NULL);
}

ts_value *ts_b_cast(ts_builder *b, ts_value *x, ts_dtype dt)
{
    if (!args_ok(b, "cast", 1, &x)) return NULL;
    ts_attr *a = ts_b_attrs(b, TS_OP_CAST);
    if (!a || !set_ok(b, ts_attr_set_dtype(ts_builder_graph(b), TS_OP_CAST, a, "dtype", dt))) return NULL;
    return node1(b, TS_OP_CAST, x, a);
}

/* ---- leaves and layout ------------------------------------------------------------ */

ts_value *ts_b_full(ts_builder *b, ts_dtype dt, double v, int rank, const ts_dim *dims)
{
    return ts_b_broadcast_to(b, ts_b_scalar(b, dt, v), rank, dims);
}

ts_value *ts_b_iota(ts_builder *b, ts_dtype dt, int rank, const ts_dim *dims, int64_t axis)
{
    if (!live(b) || !rank_ok(b, "iota", rank, dims)) return NULL;
    ts_graph *g = ts_builder_graph(b);
    ts_attr *a = ts_b_attrs(b, TS_OP_IOTA);
    if (!a || !set_ok(b, ts_attr_set_dtype(g, TS_OP_IOTA, a, "dtype", dt)) ||
        !set_ok(b, ts_attr_set_dims(g, TS_OP_IOTA, a, "shape", rank, dims)) ||
        !set_ok(b, ts_attr_set_int(g, TS_OP_IOTA, a, "axis", axis)))
        return NULL;
    return ts_b_node(b, TS_OP_IOTA, 0, NULL, a);
}

ts_value *ts_b_reshape(ts_builder *b, ts_value *x, int rank, const ts_dim *dims)
{
    if (!args_ok(b, "reshape", 1, &x) || !rank_ok(b, "reshape", rank, dims)) return NULL;
    ts_attr *a = ts_b_attrs(b, TS_OP_RESHAPE);
    if (!a || !set_ok(b, ts_attr_set_dims(ts_builder_graph(b), TS_OP_RESHAPE, a, "shape", rank, dims))) return NULL;
    return node1(b, TS_OP_RESHAPE, x, a);
}

ts_value *ts_b_transpose(ts_builder *b, ts_value *x, const int64_t *perm)
{
    if (!args_ok(b, "transpose", 1, &x)) return NULL;
    ts_attr *a = ts_b_attrs(b, TS_OP_TRANSPOSE);
    if (!a || !set_ok(b, ts_attr_set_ints(ts_builder_graph(b), TS_OP_TRANSPOSE, a, "perm", x->type.rank, perm)))
        return NULL;
    return node1(b, TS_OP_TRANSPOSE, x, a);
}

ts_value *ts_b_slice(ts_builder *b, ts_value *x, const ts_dim *start, const ts_dim *limit,
                     const int64_t *stride)
{
    if (!args_ok(b, "slice", 1, &x)) return NULL;
    int r = x->type.rank;
    int64_t ones[TS_MAX_RANK];
    for (int i = 0; i < r; i++) ones[i] = 1;
    ts_graph *g = ts_builder_graph(b);
    ts_attr *a = ts_b_attrs(b, TS_OP_SLICE);
    if (!a || !set_ok(b, ts_attr_set_dims(g, TS_OP_SLICE, a, "start", r, start)) ||
        !set_ok(b, ts_attr_set_dims(g, TS_OP_SLICE, a, "limit", r, limit)) ||
        !set_ok(b, ts_attr_set_ints(g, TS_OP_SLICE, a, "stride", r, stride ? stride : ones)))
        return NULL;
    return node1(b, TS_OP_SLICE, x, a);
}

ts_value *ts_b_concat(ts_builder *b, int n, ts_value *const *xs, int64_t axis)
{
    if (!args_ok(b, "concat", n, xs)) return NULL;
    if (n < 1) return fail(b, TS_ERR_INVALID_ARG, "concat: no operands");
    if (axis < 0) axis += xs[0]->type.rank;
    ts_attr *a = ts_b_attrs(b, TS_OP_CONCAT);
    if (!a || !set_ok(b, ts_attr_set_int(ts_builder_graph(b), TS_OP_CONCAT, a, "axis", axis))) return NULL;
    return ts_b_node(b, TS_OP_CONCAT, n, xs, a);
}

/* ---- reductions -------------------------------------------------------------------- */

/* Axes into [0, rank), sorted (the order of a reduction's axes does not
 * matter, and one spelling merges better). */
static bool norm_axes(ts_builder *b, int rank, int n, const int64_t *in, int64_t *out)
{
    if (!rank_ok(b, "reduce", n, in)) return false;
    for (int i = 0; i < n; i++) {
        int64_t a = in[i] < 0 ? in[i] + rank : in[i];
        if (a < 0 || a >= rank) {
            fail(b, TS_ERR_SHAPE, "reduce: axis %lld is out of range for rank %d", (long long)in[i], rank);
            return false;
        }
        int j = i;
        for (; j > 0 && out[j - 1] > a; j--) out[j] = out[j - 1];
        out[j] = a;
    }
    return true;
}

static ts_value *keep_dims(ts_builder *b, ts_value *r, const ts_type *x, int n, const int64_t *axes)
{
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = x->dims[i];
    for (int i = 0; i < n; i++) dims[axes[i]] = ts_dim_const(1);
    return ts_b_reshape(b, r, x->rank, dims);
}

ts_value *ts_b_reduce(ts_builder *b, ts_op op, ts_value *x, int naxes, const int64_t *axes, bool keepdims)
{
    if (!args_ok(b, "reduce", 1, &x)) return NULL;
    int64_t ax[TS_MAX_RANK];
    if (!norm_axes(b, x->type.rank, naxes, axes, ax)) return NULL;
    bool arg = op == TS_OP_ARGMAX || op == TS_OP_ARGMIN;
    bool red = op == TS_OP_REDUCE_SUM || op == TS_OP_REDUCE_PROD || op == TS_OP_REDUCE_MAX || op == TS_OP_REDUCE_MIN;
    if ((!arg && !red) || (arg && naxes != 1))
        return fail(b, TS_ERR_INVALID_ARG, "reduce: needs a reduce_* op, or argmax/argmin with one axis");
    ts_graph *g = ts_builder_graph(b);
    ts_attr *a = ts_b_attrs(b, op);
    ts_status s = !a ? TS_ERR_OOM
                     : arg ? ts_attr_set_int(g, op, a, "axis", ax[0]) : ts_attr_set_ints(g, op, a, "axes", naxes, ax);
    if (!set_ok(b, s)) return NULL;
    ts_value *r = node1(b, op, x, a);
    return keepdims && r ? keep_dims(b, r, &x->type, naxes, ax) : r;
}

/* ---- contractions ------------------------------------------------------------------- */

ts_value *ts_b_dot(ts_builder *b, ts_value *x, ts_value *y, int n_batch, const int64_t *lhs_batch,
                   const int64_t *rhs_batch, int n_contract, const int64_t *lhs_contract,
                   const int64_t *rhs_contract)
{
    ts_value *v[2] = {x, y};
    if (!args_ok(b, "dot", 2, v)) return NULL;
    ts_graph *g = ts_builder_graph(b);
    ts_attr *a = ts_b_attrs(b, TS_OP_DOT);
    if (!a || !set_ok(b, ts_attr_set_ints(g, TS_OP_DOT, a, "lhs_batch", n_batch, lhs_batch)) ||
        !set_ok(b, ts_attr_set_ints(g, TS_OP_DOT, a, "rhs_batch", n_batch, rhs_batch)) ||
        !set_ok(b, ts_attr_set_ints(g, TS_OP_DOT, a, "lhs_contract", n_contract, lhs_contract)) ||
        !set_ok(b, ts_attr_set_ints(g, TS_OP_DOT, a, "rhs_contract", n_contract, rhs_contract)))
        return NULL;
    return ts_b_node(b, TS_OP_DOT, 2, v, a);
}

/* x with one more axis of size 1 at `at`. */
static ts_value *insert_one(ts_builder *b, ts_value *x, int at)
{
    ts_dim dims[TS_MAX_RANK];
    int r = x->type.rank;
    if (r + 1 > TS_MAX_RANK) return fail(b, TS_ERR_SHAPE, "matmul: rank over %d", TS_MAX_RANK);
    for (int i = 0, k = 0; i <= r; i++) dims[i] = i == at ? ts_dim_const(1) : x->type.dims[k++];
    return ts_b_reshape(b, x, r + 1, dims);
}

/* x broadcast so that its leading (batch) dims are `batch` (nb of them). */
static ts_value *expand_batch(ts_builder *b, ts_value *x, int nb, const ts_dim *batch)
{
    ts_dim dims[TS_MAX_RANK];
    int r = x->type.rank;
    memcpy(dims, batch, sizeof(ts_dim) * (size_t)nb);
    dims[nb] = x->type.dims[r - 2];
    dims[nb + 1] = x->type.dims[r - 1];
    return ts_b_broadcast_to(b, x, nb + 2, dims);
}

/* The common batch dims of x[..., m, k] and y[..., k, n]. */
static bool batch_dims(ts_builder *b, const ts_value *x, const ts_value *y, int *nb, ts_dim *batch)
{
    ts_type bx = x->type, by = y->type;
    bx.rank -= 2;
    by.rank -= 2;
    *nb = 0;
    if (!common_shape(b, "matmul", &bx, nb, batch)) return false;
    return common_shape(b, "matmul", &by, nb, batch);
}

ts_value *ts_b_matmul(ts_builder *b, ts_value *x, ts_value *y)
{
    ts_value *v[2] = {x, y};
    if (!args_ok(b, "matmul", 2, v)) return NULL;
    int rx = x->type.rank, ry = y->type.rank;
    if (rx < 1 || ry < 1) return fail(b, TS_ERR_SHAPE, "matmul: operands must have rank >= 1");
    if (ry == 2 && rx >= 2) {
        /* a matrix on the right: x's leading dims stay free dims of the dot,
         * so no batch copy of y is made (a weight times activations) */
        int64_t lc = rx - 1, rc = 0;
        return ts_b_dot(b, x, y, 0, NULL, NULL, 1, &lc, &rc);
    }
    if (rx == 1) x = insert_one(b, x, 0);
    if (ry == 1) y = insert_one(b, y, 1);
    if (!x || !y) return NULL;
    int nb;
    ts_dim batch[TS_MAX_RANK];
    if (!batch_dims(b, x, y, &nb, batch)) return NULL;
    x = expand_batch(b, x, nb, batch);
    y = expand_batch(b, y, nb, batch);
    int64_t bat[TS_MAX_RANK], lc = nb + 1, rc = nb;
    for (int i = 0; i < nb; i++) bat[i] = i;
    ts_value *r = x && y ? ts_b_dot(b, x, y, nb, bat, bat, 1, &lc, &rc) : NULL;
    if (!r || (rx > 1 && ry > 1)) return r;
    /* drop the dims that promotion added: m when x was a vector, n for y */
    ts_dim dims[TS_MAX_RANK];
    int k = 0;
    for (int i = 0; i < r->type.rank; i++)
        if (!((rx == 1 && i == nb) || (ry == 1 && i == r->type.rank - 1))) dims[k++] = r->type.dims[i];
    return ts_b_reshape(b, r, k, dims);
}
