/* k_misc.c — the data-dependent primitives (sort, nonzero), the custom-op
 * escape hatch, and the collectives with their single-process meaning
 * (world = 1, bound by the driver). Contracts in docs/primitives.md. */
#include "interp/interp.h"

#include <math.h>
#include <string.h>

static int64_t prod(const int64_t *shape, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= shape[i];
    return p;
}

/* ---- sort ---------------------------------------------------------------- */

/* One lane of the sort axis: element k lives at base + k*step. */
typedef struct lane {
    ts_dtype dt;
    const void *data;
    int64_t base, step;
    bool desc;
} lane;

/* Ascending comparison of lane elements i and j: NaN above +inf and every
 * NaN equal to every other; -0 equals +0 (plain float compare). */
static int cmp_at(const lane *l, int64_t i, int64_t j)
{
    int64_t pi = l->base + i * l->step, pj = l->base + j * l->step;
    if (ts_dtype_is_float(l->dt)) {
        double a = ts_elem_get_f64(l->dt, l->data, pi), b = ts_elem_get_f64(l->dt, l->data, pj);
        if (isnan(a) || isnan(b)) return (isnan(a) != 0) - (isnan(b) != 0);
        return (a > b) - (a < b);
    }
    if (ts_dtype_is_signed(l->dt)) {
        int64_t a = ts_elem_get_i64(l->dt, l->data, pi), b = ts_elem_get_i64(l->dt, l->data, pj);
        return (a > b) - (a < b);
    }
    uint64_t a = ts_elem_get_u64(l->dt, l->data, pi), b = ts_elem_get_u64(l->dt, l->data, pj);
    return (a > b) - (a < b);
}

/* Strictly before in the requested direction: equal elements are never
 * "before" each other, which is what keeps the merge stable both ways. */
static bool before(const lane *l, int64_t i, int64_t j)
{
    int c = cmp_at(l, i, j);
    return l->desc ? c > 0 : c < 0;
}

/* Merge the sorted runs src[lo, mid) and src[mid, hi) into dst; on a tie
 * the left (earlier) element goes first. */
static void merge(const lane *l, const int64_t *src, int64_t *dst, int64_t lo, int64_t mid, int64_t hi)
{
    int64_t i = lo, j = mid;
    for (int64_t k = lo; k < hi; k++) {
        if (i < mid && (j >= hi || !before(l, src[j], src[i]))) dst[k] = src[i++];
        else dst[k] = src[j++];
    }
}

/* Bottom-up merge sort of the permutation p (len entries) by lane order. */
static void merge_sort(const lane *l, int64_t *p, int64_t *tmp, int64_t len)
{
    for (int64_t width = 1; width < len; width *= 2) {
        for (int64_t lo = 0; lo < len; lo += 2 * width) {
            int64_t mid = lo + width < len ? lo + width : len;
            int64_t hi = lo + 2 * width < len ? lo + 2 * width : len;
            merge(l, p, tmp, lo, mid, hi);
        }
        memcpy(p, tmp, sizeof *p * (size_t)len);
    }
}

/* Sort one lane and write its values and original positions. */
static void sort_lane(const lane *l, int64_t *perm, int64_t *tmp, int64_t len, ts_tensor *vals, ts_tensor *idx)
{
    size_t esz = ts_dtype_size(l->dt);
    for (int64_t k = 0; k < len; k++) perm[k] = k;
    merge_sort(l, perm, tmp, len);
    for (int64_t k = 0; k < len; k++) {
        int64_t dst = l->base + k * l->step, src = l->base + perm[k] * l->step;
        memcpy((char *)vals->data + dst * (int64_t)esz, (const char *)l->data + src * (int64_t)esz, esz);
        ((int64_t *)idx->data)[dst] = perm[k];
    }
}

static ts_status k_sort(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *x = in[0];
    int axis = (int)ts_node_int(n, "axis");
    TS_TRY(ts_interp_out(r, n, 0, &out[0]));
    TS_TRY(ts_interp_out(r, n, 1, &out[1]));
    int64_t len = x->shape[axis], outer = prod(x->shape, 0, axis), inner = prod(x->shape, axis + 1, x->rank);
    size_t bytes = sizeof(int64_t) * (size_t)(len ? len : 1);
    int64_t *perm = ts_mem_alloc(bytes), *tmp = ts_mem_alloc(bytes);
    if (!perm || !tmp) {
        ts_mem_free(perm);
        ts_mem_free(tmp);
        return ts_err_set(ts_interp_err(r), TS_ERR_OOM, "sort: out of memory");
    }
    lane l = {x->dtype, x->data, 0, inner, ts_node_int(n, "descending") != 0};
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            l.base = o * len * inner + i;
            sort_lane(&l, perm, tmp, len, out[0], out[1]);
        }
    ts_mem_free(perm);
    ts_mem_free(tmp);
    return TS_OK;
}

/* ---- nonzero ---------------------------------------------------------------- */

/* NaN is not zero; -0 is. */
static bool nonzero_at(const ts_tensor *x, int64_t i)
{
    if (ts_dtype_is_float(x->dtype)) return ts_elem_get_f64(x->dtype, x->data, i) != 0;
    return ts_elem_get_u64(x->dtype, x->data, i) != 0;
}

/* out[d, k] = coordinate d of the k-th non-zero element in row-major order;
 * the count is only known after a pass over the data. */
static ts_status k_nonzero(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_tensor *x = in[0];
    int64_t nnz = 0;
    for (int64_t i = 0; i < x->numel; i++) nnz += nonzero_at(x, i);
    int64_t shape[2] = {x->rank, nnz};
    TS_TRY(ts_interp_out_shape(r, n, 0, 2, shape, out));
    int64_t *y = out[0]->data, k = 0;
    for (int64_t i = 0; i < x->numel; i++) {
        if (!nonzero_at(x, i)) continue;
        int64_t flat = i;
        for (int d = x->rank - 1; d >= 0; d--) {
            y[d * nnz + k] = flat % x->shape[d];
            flat /= x->shape[d];
        }
        k++;
    }
    return TS_OK;
}

/* ---- custom ----------------------------------------------------------------- */

static ts_status k_custom(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const char *name = ts_node_str(n, "name");
    const ts_custom_op *op = ts_custom_find(name);
    if (!op || !op->kernel)
        return ts_err_set(ts_interp_err(r), TS_ERR_UNSUPPORTED, "custom: '%s' has no interpreter kernel",
                          name ? name : "?");
    for (int k = 0; k < n->n_out; k++) TS_TRY(ts_interp_out(r, n, k, &out[k]));
    /* the registry keeps kernels as void * (the IR does not know their
     * type); POSIX guarantees the round trip to a function pointer */
    ts_interp_custom_fn fn = (ts_interp_custom_fn)op->kernel;
    return fn(n, in, out, ts_interp_err(r));
}

/* ---- collectives ---------------------------------------------------------------- */

/* With one rank, reducing, gathering, scattering or exchanging across
 * ranks leaves the operand as it is. */
static ts_status k_identity(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    return ts_tensor_clone(in[0], out, ts_interp_err(r));
}

static ts_status k_point_to_point(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    return ts_err_set(ts_interp_err(r), TS_ERR_UNSUPPORTED, "send/recv need a multi-process runtime (world = 1 here)");
}

const ts_interp_kernel ts_interp_misc[TS_OP_COUNT] = {
    [TS_OP_SORT] = k_sort,
    [TS_OP_NONZERO] = k_nonzero,
    [TS_OP_CUSTOM] = k_custom,
    [TS_OP_ALL_REDUCE] = k_identity,
    [TS_OP_ALL_GATHER] = k_identity,
    [TS_OP_REDUCE_SCATTER] = k_identity,
    [TS_OP_ALL_TO_ALL] = k_identity,
    [TS_OP_SEND] = k_point_to_point,
    [TS_OP_RECV] = k_point_to_point,
};

bool ts_interp_declared_only(ts_op op) { return op == TS_OP_SEND || op == TS_OP_RECV; }
