/* tsrt_pool_api.h — the interface of tsrt_pool.h: 2-D max pooling over
 * NCHW f32 (reduce_window max with a window, strides and padding on the
 * last two axes only), without the definition. A generated unit that only
 * calls it pastes this header; the runtime unit pastes tsrt_pool.h. */
#ifndef TSRT_POOL_API_H
#define TSRT_POOL_API_H

#ifndef TSRT_COMMON_H
#include "tsrt_common.h"
#endif

/* y[i][c][oy][ox] = max over (u, t) of x[i][c][oy*sh - ph + u][ox*sw - pw + t]
 * for u < kh, t < kw, positions outside the image left out (the identity,
 * -inf, where none is inside), tsrt_max's meaning of max (NaN wins, +0
 * over -0). x and y do not overlap. */
typedef struct tsrt_pool_args {
    int64_t n, c, h, w;    /* x: n x c x h x w */
    int64_t oh, ow;        /* y: n x c x oh x ow */
    int64_t kh, kw;        /* window */
    int64_t stride_h, stride_w;
    int64_t pad_h, pad_w;  /* padding before row 0 and column 0 (after: implied by oh, ow) */
    const float *x;
    float *y;
} tsrt_pool_args;

/* Thread ith's share of nth: contiguous runs of output rows. */
TSRT_FN void tsrt_maxpool(const tsrt_pool_args *a, int ith, int nth);

#endif /* TSRT_POOL_API_H */
