/* tsrt_sort.h — the stable lane sort of tsrt_sort_api.h.
 *
 * Each lane is gathered into a contiguous (key, position) pair of arrays,
 * sorted there and scattered back: a lane along a non-last axis is read
 * with a stride once, not at every comparison. The sort is a bottom-up
 * merge sort over runs that insertion sort makes (16 elements): stable by
 * construction (a merge takes from the left run on ties), n log n in the
 * worst case, no recursion. Keys are compared with `less`, which for
 * floats orders NaN above everything and keeps -0 equal to +0; a
 * descending sort compares the other way round, so ties still keep
 * their order (it is not the ascending order reversed). */
#ifndef TSRT_SORT_H
#define TSRT_SORT_H

#ifndef TSRT_SORT_API_H
#include "tsrt_sort_api.h"
#endif

enum { TSRT__SORT_RUN = 16 };

TSRT_FN size_t tsrt_sort_workspace(int64_t len)
{
    /* two (key, position) arrays of len; keys at most 8 bytes */
    return (size_t)(len > 0 ? len : 1) * 2 * (sizeof(int64_t) + 8) + 64;
}

#define TSRT__LESS_INT(a, b) ((a) < (b))
#define TSRT__LESS_FP(a, b) ((a) < (b) || ((b) != (b) && (a) == (a)))

#define TSRT__SORT_DEF(SFX, T, LESS)                                                                              \
    static inline int tsrt__sort_lt_##SFX(T a, T b, int desc) { return desc ? LESS(b, a) : LESS(a, b); }        \
                                                                                                                 \
    TSRT_FN void tsrt_sort_##SFX(const T *x, T *v, int64_t *ix, int64_t outer, int64_t len, int64_t inner, int desc, \
                                 int ith, int nth, void *ws)                                                     \
    {                                                                                                            \
        const int64_t lanes = outer * inner;                                                                     \
        const int64_t lo = lanes * ith / nth, hi = lanes * (ith + 1) / nth;                                      \
        int64_t *p0 = (int64_t *)ws, *p1 = p0 + len;                                                              \
        T *k0 = (T *)(p1 + len), *k1 = k0 + len;                                                                 \
        for (int64_t lane = lo; lane < hi; lane++) {                                                             \
            const int64_t base = lane / inner * len * inner + lane % inner;                                      \
            for (int64_t j = 0; j < len; j++) {                                                                  \
                k0[j] = x[base + j * inner];                                                                     \
                p0[j] = j;                                                                                       \
            }                                                                                                    \
            for (int64_t r = 0; r < len; r += TSRT__SORT_RUN) { /* insertion sort of each run */                \
                const int64_t e = r + TSRT__SORT_RUN < len ? r + TSRT__SORT_RUN : len;                            \
                for (int64_t j = r + 1; j < e; j++) {                                                            \
                    const T key = k0[j];                                                                         \
                    const int64_t pos = p0[j];                                                                   \
                    int64_t q = j;                                                                               \
                    for (; q > r && tsrt__sort_lt_##SFX(key, k0[q - 1], desc); q--) {                            \
                        k0[q] = k0[q - 1];                                                                       \
                        p0[q] = p0[q - 1];                                                                       \
                    }                                                                                            \
                    k0[q] = key;                                                                                 \
                    p0[q] = pos;                                                                                 \
                }                                                                                                \
            }                                                                                                    \
            T *ka = k0, *kb = k1;                                                                                \
            int64_t *pa = p0, *pb = p1;                                                                          \
            for (int64_t w = TSRT__SORT_RUN; w < len; w *= 2) { /* merge pairs of runs of w */                  \
                for (int64_t s = 0; s < len; s += 2 * w) {                                                       \
                    const int64_t m = s + w < len ? s + w : len, e = s + 2 * w < len ? s + 2 * w : len;          \
                    int64_t i = s, j = m, o = s;                                                                 \
                    while (i < m && j < e) {                                                                     \
                        const int right = tsrt__sort_lt_##SFX(ka[j], ka[i], desc);                               \
                        kb[o] = right ? ka[j] : ka[i];                                                           \
                        pb[o++] = right ? pa[j++] : pa[i++];                                                     \
                    }                                                                                            \
                    for (; i < m; i++, o++) kb[o] = ka[i], pb[o] = pa[i];                                        \
                    for (; j < e; j++, o++) kb[o] = ka[j], pb[o] = pa[j];                                        \
                }                                                                                                \
                T *kt = ka; ka = kb; kb = kt;                                                                    \
                int64_t *pt = pa; pa = pb; pb = pt;                                                              \
            }                                                                                                    \
            for (int64_t j = 0; j < len; j++) {                                                                  \
                v[base + j * inner] = ka[j];                                                                     \
                ix[base + j * inner] = pa[j];                                                                    \
            }                                                                                                    \
        }                                                                                                        \
    }

TSRT__SORT_DEF(f32, float, TSRT__LESS_FP)
TSRT__SORT_DEF(f64, double, TSRT__LESS_FP)
TSRT__SORT_DEF(i8, int8_t, TSRT__LESS_INT)
TSRT__SORT_DEF(i16, int16_t, TSRT__LESS_INT)
TSRT__SORT_DEF(i32, int32_t, TSRT__LESS_INT)
TSRT__SORT_DEF(i64, int64_t, TSRT__LESS_INT)
TSRT__SORT_DEF(u8, uint8_t, TSRT__LESS_INT)
TSRT__SORT_DEF(u16, uint16_t, TSRT__LESS_INT)
TSRT__SORT_DEF(u32, uint32_t, TSRT__LESS_INT)
TSRT__SORT_DEF(u64, uint64_t, TSRT__LESS_INT)

#endif
