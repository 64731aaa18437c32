/* tensor.h — dense, row-major, reference-counted host tensors.
 *
 * A tensor owns its data (allocated through the hook), borrows caller memory
 * (ts_tensor_wrap), or holds it for an owner that frees it through a release
 * callback (memory-mapped weights). The struct is internal; the public API
 * sees an opaque handle. */
#ifndef TS_TENSOR_H
#define TS_TENSOR_H

#include "dtype.h"

struct ts_tensor {
    int refs;                 /* atomically updated: tensors cross threads */
    ts_dtype dtype;
    int rank;
    int64_t shape[TS_MAX_RANK];
    int64_t numel;
    size_t nbytes;
    void *data;
    /* who frees data: NULL for borrowed memory; otherwise called with ctx
     * when the last reference goes */
    void (*release)(void *ctx, void *data);
    void *release_ctx;
};

/* Element count and byte size for a shape, overflow-checked. Negative dims
 * and rank > TS_MAX_RANK are TS_ERR_SHAPE; overflow is TS_ERR_OOM. */
ts_status ts_shape_numel(int rank, const int64_t *shape, int64_t *numel, ts_err *err);

/* A tensor over data owned by someone who frees it with release(ctx, data). */
ts_status ts_tensor_adopt(ts_dtype dt, int rank, const int64_t *shape, void *data,
                          void (*release)(void *, void *), void *ctx,
                          ts_tensor **out, ts_err *err);
/* Copy with its own storage. */
ts_status ts_tensor_clone(const ts_tensor *t, ts_tensor **out, ts_err *err);
/* Same element count and dtype, another shape, sharing the data. */
ts_status ts_tensor_reshaped(ts_tensor *t, int rank, const int64_t *shape,
                             ts_tensor **out, ts_err *err);
/* Bitwise equality of dtype, shape and bytes. */
bool ts_tensor_equal(const ts_tensor *a, const ts_tensor *b);
/* Row-major strides (in elements) of a shape. */
void ts_shape_strides(int rank, const int64_t *shape, int64_t *strides);
/* A 64-bit FNV-1a hash of dtype, shape and bytes (for hash-consing). */
uint64_t ts_tensor_hash(const ts_tensor *t);

#endif
