/* tsrt_sort_api.h — the interface of tsrt_sort.h: a stable sort of every
 * lane along one axis, values and original positions, for each element
 * type with a C type (the sort primitive, docs/primitives.md). A unit
 * that only calls it pastes this header; the runtime unit pastes
 * tsrt_sort.h, which defines the functions. */
#ifndef TSRT_SORT_API_H
#define TSRT_SORT_API_H

#ifndef TSRT_COMMON_H
#include "tsrt_common.h"
#endif

/* Bytes of workspace one thread needs for lanes of len elements. */
TSRT_FN size_t tsrt_sort_workspace(int64_t len);

/* x, v, ix: [outer, len, inner] row-major; lane (o, i) is x[o][.][i].
 * v gets each lane sorted (ascending, or descending with desc), ix the
 * position along the lane each value came from; equal values keep their
 * order in both directions. Floats: NaN above +inf, NaNs equal to each
 * other, -0 equal to +0. Thread ith of nth sorts its share of the lanes;
 * ws: tsrt_sort_workspace(len) bytes, aligned to 8. */
#define TSRT_SORT_DECL(SFX, T)                                                                                  \
    TSRT_FN void tsrt_sort_##SFX(const T *x, T *v, int64_t *ix, int64_t outer, int64_t len, int64_t inner, int desc, \
                                 int ith, int nth, void *ws);
TSRT_SORT_DECL(f32, float)
TSRT_SORT_DECL(f64, double)
TSRT_SORT_DECL(i8, int8_t)
TSRT_SORT_DECL(i16, int16_t)
TSRT_SORT_DECL(i32, int32_t)
TSRT_SORT_DECL(i64, int64_t)
TSRT_SORT_DECL(u8, uint8_t)
TSRT_SORT_DECL(u16, uint16_t)
TSRT_SORT_DECL(u32, uint32_t)
TSRT_SORT_DECL(u64, uint64_t)

#endif
