/* k_layout.h — the pieces of k_layout.c that other kernel files reuse:
 * the strided box copy every layout kernel is built on, and the Philox
 * generator behind rng_uniform (exported so tests can check it against
 * the published known-answer vectors). Internal to src/interp. */
#ifndef TS_K_LAYOUT_H
#define TS_K_LAYOUT_H

#include "core/tensor.h"

/* Where a box lives inside a dense buffer: the element offset of its first
 * element and, per axis, the step in elements. Steps may be zero
 * (broadcast) or negative (reverse). */
typedef struct ts_interp_view {
    int64_t off;
    int64_t st[TS_MAX_RANK];
} ts_interp_view;

/* The row-major view of a whole dense tensor. */
ts_interp_view ts_interp_view_dense(const ts_tensor *t);

/* Copy the box `shape` (rank axes) of esz-byte elements from src seen
 * through sv to dst seen through dv, in row-major order of the box. The
 * caller guarantees that every addressed element lies inside its buffer. */
void ts_interp_copy_box(int rank, const int64_t *shape, size_t esz, void *dst,
                        const ts_interp_view *dv, const void *src, const ts_interp_view *sv);

/* Philox4x32-10 (Salmon et al., SC'11; Random123): out = the 4 words of
 * block ctr under key. */
void ts_interp_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

#endif
