/* tensor.c — host tensors. */
#include "tensor.h"

#include "dtype.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

ts_status ts_shape_numel(int rank, const int64_t *shape, int64_t *numel, ts_err *err)
{
    if (rank < 0 || rank > TS_MAX_RANK)
        return ts_err_set(err, TS_ERR_SHAPE, "rank %d is outside 0..%d", rank, TS_MAX_RANK);
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0)
            return ts_err_set(err, TS_ERR_SHAPE, "negative dimension %lld", (long long)shape[i]);
        if (!ts_i64_mul(n, shape[i], &n))
            return ts_err_set(err, TS_ERR_OOM, "tensor size overflows");
    }
    *numel = n;
    return TS_OK;
}

static void free_owned(void *ctx, void *data) { (void)ctx; ts_mem_free_aligned(data); }

/* The header: validated shape, sizes, one reference; no data yet. */
static ts_status tensor_header(ts_dtype dt, int rank, const int64_t *shape,
                               ts_tensor **out, ts_err *err)
{
    if (!ts_dtype_valid(dt)) return ts_err_set(err, TS_ERR_INVALID_ARG, "invalid dtype %d", (int)dt);
    int64_t numel;
    TS_TRY(ts_shape_numel(rank, shape, &numel, err));
    size_t nbytes;
    if (!ts_size_mul((size_t)numel, ts_dtype_size(dt), &nbytes))
        return ts_err_set(err, TS_ERR_OOM, "tensor size overflows");
    ts_tensor *t = ts_mem_zalloc(sizeof *t);
    if (!t) return ts_err_set(err, TS_ERR_OOM, "out of memory allocating a tensor");
    t->refs = 1;
    t->dtype = dt;
    t->rank = rank;
    if (rank) memcpy(t->shape, shape, sizeof(int64_t) * (size_t)rank);
    t->numel = numel;
    t->nbytes = nbytes;
    *out = t;
    return TS_OK;
}

ts_status ts_tensor_new(ts_dtype dt, int rank, const int64_t *shape, ts_tensor **out, ts_err *err)
{
    ts_tensor *t = NULL;
    TS_TRY(tensor_header(dt, rank, shape, &t, err));
    /* huge pages for large data, as for the arena: a model's input or
     * output streamed by a row kernel crosses a 4 KiB page every row of
     * 1024 floats (softmax 8192 x 1024 -4%, D82) */
    t->data = ts_mem_alloc_huge(t->nbytes);
    if (t->data) memset(t->data, 0, t->nbytes);
    if (!t->data) {
        size_t nbytes = t->nbytes;  /* read before t is freed */
        ts_mem_free(t);
        return ts_err_set(err, TS_ERR_OOM, "out of memory allocating %zu bytes", nbytes);
    }
    t->release = free_owned;
    *out = t;
    return TS_OK;
}

ts_status ts_tensor_wrap(ts_dtype dt, int rank, const int64_t *shape, void *data,
                         ts_tensor **out, ts_err *err)
{
    return ts_tensor_adopt(dt, rank, shape, data, NULL, NULL, out, err);
}

ts_status ts_tensor_adopt(ts_dtype dt, int rank, const int64_t *shape, void *data,
                          void (*release)(void *, void *), void *ctx,
                          ts_tensor **out, ts_err *err)
{
    ts_tensor *t = NULL;
    if (!data && rank >= 0) {
        /* only an empty tensor may have no data */
        int64_t n;
        TS_TRY(ts_shape_numel(rank, shape, &n, err));
        if (n && ts_dtype_valid(dt)) return ts_err_set(err, TS_ERR_INVALID_ARG, "tensor data is NULL");
    }
    TS_TRY(tensor_header(dt, rank, shape, &t, err));
    t->data = data;
    t->release = release;
    t->release_ctx = ctx;
    *out = t;
    return TS_OK;
}

void ts_tensor_retain(ts_tensor *t)
{
    if (t) atomic_fetch_add((_Atomic int *)&t->refs, 1);
}

void ts_tensor_release(ts_tensor *t)
{
    if (!t) return;
    if (atomic_fetch_sub((_Atomic int *)&t->refs, 1) != 1) return;
    if (t->release) t->release(t->release_ctx, t->data);
    ts_mem_free(t);
}

ts_dtype ts_tensor_dtype(const ts_tensor *t) { return t->dtype; }
int ts_tensor_rank(const ts_tensor *t) { return t->rank; }
const int64_t *ts_tensor_shape(const ts_tensor *t) { return t->shape; }
int64_t ts_tensor_numel(const ts_tensor *t) { return t->numel; }
void *ts_tensor_data(const ts_tensor *t) { return t->data; }
size_t ts_tensor_nbytes(const ts_tensor *t) { return t->nbytes; }

static bool in_range(const ts_tensor *t, int64_t i) { return t && i >= 0 && i < t->numel; }

double ts_tensor_get_f64(const ts_tensor *t, int64_t i)
{
    if (!in_range(t, i)) return t && t->dtype == TS_DTYPE_F64 ? NAN : 0;
    return ts_elem_get_f64(t->dtype, t->data, i);
}

int64_t ts_tensor_get_i64(const ts_tensor *t, int64_t i)
{
    return in_range(t, i) ? ts_elem_get_i64(t->dtype, t->data, i) : 0;
}

uint64_t ts_tensor_get_u64(const ts_tensor *t, int64_t i)
{
    return in_range(t, i) ? ts_elem_get_u64(t->dtype, t->data, i) : 0;
}

void ts_tensor_set_f64(ts_tensor *t, int64_t i, double v)
{
    if (in_range(t, i)) ts_elem_set_f64(t->dtype, t->data, i, v);
}

ts_status ts_tensor_clone(const ts_tensor *t, ts_tensor **out, ts_err *err)
{
    TS_TRY(ts_tensor_new(t->dtype, t->rank, t->shape, out, err));
    if (t->nbytes) memcpy((*out)->data, t->data, t->nbytes);
    return TS_OK;
}

/* The view keeps the source alive through its release callback. */
static void release_view(void *ctx, void *data) { (void)data; ts_tensor_release(ctx); }

ts_status ts_tensor_reshaped(ts_tensor *t, int rank, const int64_t *shape,
                             ts_tensor **out, ts_err *err)
{
    int64_t n;
    TS_TRY(ts_shape_numel(rank, shape, &n, err));
    if (n != t->numel)
        return ts_err_set(err, TS_ERR_SHAPE, "reshape of %lld elements to %lld",
                          (long long)t->numel, (long long)n);
    ts_tensor *v = NULL;
    TS_TRY(tensor_header(t->dtype, rank, shape, &v, err));
    ts_tensor_retain(t);
    v->data = t->data;
    v->release = release_view;
    v->release_ctx = t;
    *out = v;
    return TS_OK;
}

bool ts_tensor_equal(const ts_tensor *a, const ts_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

void ts_shape_strides(int rank, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i];
    }
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * UINT64_C(1099511628211);
    return h;
}

uint64_t ts_tensor_hash(const ts_tensor *t)
{
    uint64_t h = UINT64_C(14695981039346656037);
    h = fnv(h, &t->dtype, sizeof t->dtype);
    h = fnv(h, t->shape, sizeof(int64_t) * (size_t)t->rank);
    return fnv(h, t->data, t->nbytes);
}
