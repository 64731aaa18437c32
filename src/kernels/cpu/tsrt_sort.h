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

/* Short lanes of keys of at most 32 bits sort by rank (D133): each
 * element becomes one u64, its key mapped to a u32 whose unsigned order
 * is `less`'s (inverted for descending) above its position, so the u64s
 * are distinct and their order is the stable order; an element's place
 * is the count of smaller u64s, a branch-free loop the compiler runs in
 * vectors (len^2 compares: ~3x faster than the merge sort's mispredicted
 * branches at 64, no faster past ~128). Values are read back from x by
 * position, so -0 and NaN payloads come out as they went in. */
enum { TSRT__SORT_RANK_MAX = 96 };

static inline uint32_t tsrt__sort_key_f32(float a)
{
    uint32_t b;
    if (a != a) return 0xFFFFFFFFu;   /* every NaN above +inf, equal to each other */
    if (a == 0) a = 0;                /* -0 equal to +0 */
    memcpy(&b, &a, sizeof b);
    return b & 0x80000000u ? ~b : b | 0x80000000u;
}
#define TSRT__KEY_SIGNED(a) ((uint32_t)(int32_t)(a) ^ 0x80000000u)
#define TSRT__KEY_UNSIGNED(a) ((uint32_t)(a))
#define TSRT__KEY_F32(a) tsrt__sort_key_f32(a)
#define TSRT__KEY_NONE(a) ((void)(a), 0u) /* 64-bit keys: never ranked */

/* Lanes [lo, hi) of tsrt_sort by rank; KEY maps a T to its u32. */
#define TSRT__SORT_RANK(T, KEY)                                                                                  \
    do {                                                                                                         \
        uint64_t *c = (uint64_t *)ws;                                                                            \
        int64_t *rk = (int64_t *)(c + len);                                                                      \
        const uint32_t flip = desc ? 0xFFFFFFFFu : 0;                                                            \
        for (int64_t lane = lo; lane < hi; lane++) {                                                             \
            const int64_t base = lane / inner * len * inner + lane % inner;                                      \
            for (int64_t j = 0; j < len; j++)                                                                    \
                c[j] = (uint64_t)(KEY(x[base + j * inner]) ^ flip) << 32 | (uint64_t)j;                         \
            for (int64_t j = 0; j < len; j++) {                                                                  \
                const uint64_t cj = c[j];                                                                        \
                int64_t r = 0;                                                                                   \
                for (int64_t q = 0; q < len; q++) r += c[q] < cj;                                                \
                rk[r] = j;                                                                                       \
            }                                                                                                    \
            for (int64_t j = 0; j < len; j++) {                                                                  \
                v[base + j * inner] = x[base + rk[j] * inner];                                                   \
                ix[base + j * inner] = rk[j];                                                                    \
            }                                                                                                    \
        }                                                                                                        \
    } while (0)

#define TSRT__SORT_DEF(SFX, T, LESS, KEY)                                                                         \
    static inline int tsrt__sort_lt_##SFX(T a, T b, int desc) { return desc ? LESS(b, a) : LESS(a, b); }        \
                                                                                                                 \
    TSRT_FN void tsrt_sort_##SFX(const T *x, T *v, int64_t *ix, int64_t outer, int64_t len, int64_t inner, int desc, \
                                 int ith, int nth, void *ws)                                                     \
    {                                                                                                            \
        const int64_t lanes = outer * inner;                                                                     \
        const int64_t lo = lanes * ith / nth, hi = lanes * (ith + 1) / nth;                                      \
        if (sizeof(T) <= 4 && len > 1 && len <= TSRT__SORT_RANK_MAX) {                                          \
            TSRT__SORT_RANK(T, KEY);                                                                             \
            return;                                                                                              \
        }                                                                                                        \
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

/* 64-bit keys take the merge sort */
TSRT__SORT_DEF(f32, float, TSRT__LESS_FP, TSRT__KEY_F32)
TSRT__SORT_DEF(f64, double, TSRT__LESS_FP, TSRT__KEY_NONE)
TSRT__SORT_DEF(i8, int8_t, TSRT__LESS_INT, TSRT__KEY_SIGNED)
TSRT__SORT_DEF(i16, int16_t, TSRT__LESS_INT, TSRT__KEY_SIGNED)
TSRT__SORT_DEF(i32, int32_t, TSRT__LESS_INT, TSRT__KEY_SIGNED)
TSRT__SORT_DEF(i64, int64_t, TSRT__LESS_INT, TSRT__KEY_NONE)
TSRT__SORT_DEF(u8, uint8_t, TSRT__LESS_INT, TSRT__KEY_UNSIGNED)
TSRT__SORT_DEF(u16, uint16_t, TSRT__LESS_INT, TSRT__KEY_UNSIGNED)
TSRT__SORT_DEF(u32, uint32_t, TSRT__LESS_INT, TSRT__KEY_UNSIGNED)
TSRT__SORT_DEF(u64, uint64_t, TSRT__LESS_INT, TSRT__KEY_NONE)

#endif
