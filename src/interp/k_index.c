/* k_index.c — data-addressed reads and writes: gather, scatter,
 * dynamic_slice, dynamic_update_slice. Out-of-range gather/scatter indices
 * are run-time errors (the frontend has already normalised negative
 * ones); dynamic starts are clamped, as in XLA. Contracts in
 * docs/primitives.md. */
#include "interp/interp.h"
#include "interp/k_layout.h"

#include <math.h>
#include <string.h>

/* ---- indices ------------------------------------------------------------- */

/* Element j of the integer tensor t, when it lies in [0, bound); otherwise
 * a run-time error naming the value and the bound. u64 is read unsigned so
 * that huge values are not mistaken for negative ones. */
static ts_status index_in(ts_err *err, const char *op, const ts_tensor *t, int64_t j, int64_t bound, int64_t *out)
{
    if (t->dtype == TS_DTYPE_U64) {
        uint64_t u = ts_elem_get_u64(t->dtype, t->data, j);
        if (u < (uint64_t)bound) {
            *out = (int64_t)u;
            return TS_OK;
        }
        return ts_err_set(err, TS_ERR_RUNTIME, "%s: index %llu (at position %lld) is out of range [0, %lld)", op,
                          (unsigned long long)u, (long long)j, (long long)bound);
    }
    int64_t v = ts_elem_get_i64(t->dtype, t->data, j);
    if (v >= 0 && v < bound) {
        *out = v;
        return TS_OK;
    }
    return ts_err_set(err, TS_ERR_RUNTIME, "%s: index %lld (at position %lld) is out of range [0, %lld)", op,
                      (long long)v, (long long)j, (long long)bound);
}

static ts_status index_at(ts_interp_run *r, const char *op, const ts_tensor *t, int64_t j, int64_t bound,
                          int64_t *out)
{
    return index_in(ts_interp_err(r), op, t, j, bound, out);
}

ts_status ts_interp_check_indices(const char *op, const ts_tensor *t, int64_t bound, ts_err *err)
{
    int64_t v;
    for (int64_t j = 0; j < t->numel; j++) TS_TRY(index_in(err, op, t, j, bound, &v));
    return TS_OK;
}

static int64_t prod(const int64_t *shape, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= shape[i];
    return p;
}

/* ---- gather ------------------------------------------------------------------ */

/* out[pre, j..., post] = x[pre, idx[j...], post]: each index selects one
 * contiguous row of `post` elements. Every index is checked before any is
 * used, even when the result is empty. */
static ts_status k_gather(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *x = in[0], *idx = in[1];
    int axis = (int)ts_node_int(n, "axis");
    int64_t size = x->shape[axis], v;
    for (int64_t j = 0; j < idx->numel; j++) TS_TRY(index_at(r, "gather", idx, j, size, &v));
    TS_TRY(ts_interp_out(r, n, 0, out));
    int64_t pre = prod(x->shape, 0, axis), post = prod(x->shape, axis + 1, x->rank);
    size_t row = (size_t)post * ts_dtype_size(x->dtype);
    char *dst = out[0]->data;
    const char *src = x->data;
    for (int64_t p = 0; p < pre; p++)
        for (int64_t j = 0; j < idx->numel; j++) {
            v = ts_elem_get_i64(idx->dtype, idx->data, j);
            memcpy(dst, src + (size_t)(p * size + v) * row, row);
            dst += row;
        }
    return TS_OK;
}

/* ---- scatter ------------------------------------------------------------------ */

enum { SET, ADD, MUL, MAX, MIN };  /* the order of the combine enum in ops.def */

/* max and min exactly as the max/min primitives with the current value as
 * first operand: a NaN wins (the current one first), and between -0 and
 * +0 max picks +0 and min -0. */
static double fmax_nan(double a, double b)
{
    if (isnan(a)) return a;
    if (isnan(b)) return b;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}

static double fmin_nan(double a, double b)
{
    if (isnan(a)) return a;
    if (isnan(b)) return b;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}

static double fcombine(int kind, double a, double b)
{
    switch (kind) {
    case ADD: return a + b;
    case MUL: return a * b;
    case MAX: return fmax_nan(a, b);
    default: return fmin_nan(a, b);
    }
}

/* Integers wrap: add and mul in uint64 give the same low bits for signed
 * and unsigned types; only the comparisons need the signedness. */
static void icombine(int kind, ts_tensor *y, int64_t p, const ts_tensor *u, int64_t j)
{
    ts_dtype dt = y->dtype;
    uint64_t a = ts_elem_get_u64(dt, y->data, p), b = ts_elem_get_u64(dt, u->data, j), v;
    bool sgn = ts_dtype_is_signed(dt);
    bool lt = sgn ? (int64_t)b < (int64_t)a : b < a;  /* the update is below */
    bool gt = sgn ? (int64_t)b > (int64_t)a : b > a;
    switch (kind) {
    case ADD: v = a + b; break;
    case MUL: v = a * b; break;
    case MAX: v = gt ? b : a; break;
    default: v = lt ? b : a; break;
    }
    ts_elem_set_u64(dt, y->data, p, v);
}

/* Combine update j into y[p]. A float combine is done in double and
 * rounded to the dtype, which equals doing it in the dtype (double holds
 * every exact sum and product of two f32 values). */
static void combine(int kind, ts_tensor *y, int64_t p, const ts_tensor *u, int64_t j)
{
    ts_dtype dt = y->dtype;
    if (kind == SET) {
        size_t esz = ts_dtype_size(dt);
        memcpy((char *)y->data + (size_t)p * esz, (const char *)u->data + (size_t)j * esz, esz);
    } else if (ts_dtype_is_float(dt)) {
        double a = ts_elem_get_f64(dt, y->data, p), b = ts_elem_get_f64(dt, u->data, j);
        ts_elem_set_f64(dt, y->data, p, fcombine(kind, a, b));
    } else {
        icombine(kind, y, p, u, j);
    }
}

/* y = copy of x; update j (row-major) combines into flat position idx[j]. */
static ts_status k_scatter(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *x = in[0], *idx = in[1], *upd = in[2];
    int kind = (int)ts_node_int(n, "combine");
    TS_TRY(ts_tensor_clone(x, out, ts_interp_err(r)));
    for (int64_t j = 0; j < idx->numel; j++) {
        int64_t p = 0;
        TS_TRY(index_at(r, "scatter", idx, j, x->numel, &p));
        combine(kind, out[0], p, upd, j);
    }
    return TS_OK;
}

/* ---- dynamic slices ---------------------------------------------------------- */

/* Start i of an integer vector, clamped to [0, hi]. */
static int64_t clamped_start(const ts_tensor *start, int i, int64_t hi)
{
    int64_t v;
    if (start->dtype == TS_DTYPE_U64) {
        uint64_t u = ts_elem_get_u64(start->dtype, start->data, i);
        v = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
    } else {
        v = ts_elem_get_i64(start->dtype, start->data, i);
    }
    return v < 0 ? 0 : v > hi ? hi : v;
}

static ts_status window_fits(ts_interp_run *r, const char *op, int axis, int64_t window, int64_t size)
{
    if (window >= 0 && window <= size) return TS_OK;
    return ts_err_set(ts_interp_err(r), TS_ERR_RUNTIME, "%s: axis %d: window %lld does not fit size %lld", op, axis,
                      (long long)window, (long long)size);
}

static ts_status k_dynamic_slice(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *x = in[0], *start = in[1];
    int ns;
    const ts_dim *sizes = ts_node_dims(n, "sizes", &ns);
    int64_t win[TS_MAX_RANK];
    ts_interp_view xv = ts_interp_view_dense(x), sv = xv;
    for (int i = 0; i < x->rank; i++) {
        TS_TRY(ts_interp_dim(r, sizes[i], &win[i]));
        TS_TRY(window_fits(r, "dynamic_slice", i, win[i], x->shape[i]));
        sv.off += clamped_start(start, i, x->shape[i] - win[i]) * xv.st[i];
    }
    TS_TRY(ts_interp_out_shape(r, n, 0, x->rank, win, out));
    ts_interp_view yv = ts_interp_view_dense(out[0]);
    ts_interp_copy_box(x->rank, win, ts_dtype_size(x->dtype), out[0]->data, &yv, x->data, &sv);
    return TS_OK;
}

static ts_status k_dynamic_update_slice(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *x = in[0], *upd = in[1], *start = in[2];
    for (int i = 0; i < x->rank; i++) TS_TRY(window_fits(r, "dynamic_update_slice", i, upd->shape[i], x->shape[i]));
    TS_TRY(ts_tensor_clone(x, out, ts_interp_err(r)));
    ts_interp_view dv = ts_interp_view_dense(out[0]), uv = ts_interp_view_dense(upd);
    for (int i = 0; i < x->rank; i++) dv.off += clamped_start(start, i, x->shape[i] - upd->shape[i]) * dv.st[i];
    ts_interp_copy_box(upd->rank, upd->shape, ts_dtype_size(x->dtype), out[0]->data, &dv, upd->data, &uv);
    return TS_OK;
}

const ts_interp_kernel ts_interp_index[TS_OP_COUNT] = {
    [TS_OP_GATHER] = k_gather,
    [TS_OP_SCATTER] = k_scatter,
    [TS_OP_DYNAMIC_SLICE] = k_dynamic_slice,
    [TS_OP_DYNAMIC_UPDATE_SLICE] = k_dynamic_update_slice,
};
