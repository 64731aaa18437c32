/* avx512_emu.h — lets the AVX-512 micro-kernel of src/kernels/cpu run on
 * a machine without AVX-512: the few intrinsics it uses, as GCC/Clang
 * 64-byte vector extensions. Included (before the tsrt headers) by
 * test_rt_gemm.c and test_rt_conv.c when built with -DTSRT_TEST_AVX512_EMU
 * (the *_avx512emu ctest entries). It checks the kernel's indexing, edge
 * handling and blocking (MR 14, NR 32, KC 192, MC 168), not its speed or
 * its instruction selection; _mm512_load_ps also checks the 64-byte
 * alignment the real instruction requires. Macros, not functions: passing
 * 64-byte vectors by value warns (-Wpsabi) without AVX-512. */
#ifndef TS_AVX512_EMU_H
#define TS_AVX512_EMU_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define TSRT_AVX512_EMULATED 1

typedef float __m512 __attribute__((vector_size(64)));
typedef float emu_m512u __attribute__((vector_size(64), aligned(4), may_alias));

static inline const void *emu_aligned64(const void *p)
{
    if ((uintptr_t)p % 64) {
        fprintf(stderr, "avx512_emu: _mm512_load_ps on unaligned %p\n", p);
        abort();
    }
    return p;
}

#define _mm512_setzero_ps() ((__m512){0})
/* -0 + x is x for every x (+0 + -0 would give +0): set1(-0) keeps its sign */
#define _mm512_set1_ps(x) (-(__m512){0} + (float)(x))
#define _mm512_load_ps(p) (*(const __m512 *)emu_aligned64(p))
#define _mm512_loadu_ps(p) (*(const emu_m512u *)(const void *)(p))
#define _mm512_storeu_ps(p, v) (*(emu_m512u *)(void *)(p) = (v))
#define _mm512_fmadd_ps(a, b, c) ((a) * (b) + (c))
#define _mm512_add_ps(a, b) ((a) + (b))
#define _mm512_mul_ps(a, b) ((a) * (b))
#define _mm512_store_ps(p, v) (*(__m512 *)emu_aligned64(p) = (v))
#define _mm_prefetch(p, hint) __builtin_prefetch(p)
/* GEMM_T's transposed store (tsrt_conv_pt.h): the 16x16 transpose's
 * shuffles (per 128-bit lane as the instructions work) and masked
 * loads/stores, which touch no memory in masked-off lanes. */
typedef uint16_t __mmask16;
#define _mm512_unpacklo_ps(a, b)                                                                    \
    __builtin_shufflevector((a), (b), 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29)
#define _mm512_unpackhi_ps(a, b)                                                                    \
    __builtin_shufflevector((a), (b), 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31)
#define EMU_SPS(l, imm) (4 * (l) + ((imm) & 3)), (4 * (l) + (((imm) >> 2) & 3)), \
    (16 + 4 * (l) + (((imm) >> 4) & 3)), (16 + 4 * (l) + (((imm) >> 6) & 3))
#define _mm512_shuffle_ps(a, b, imm)                                                                \
    __builtin_shufflevector((a), (b), EMU_SPS(0, imm), EMU_SPS(1, imm), EMU_SPS(2, imm), EMU_SPS(3, imm))
#define EMU_SF4(c) (4 * (c)), (4 * (c) + 1), (4 * (c) + 2), (4 * (c) + 3)
#define _mm512_shuffle_f32x4(a, b, imm)                                                             \
    __builtin_shufflevector((a), (b), EMU_SF4((imm) & 3), EMU_SF4(((imm) >> 2) & 3),                \
                            EMU_SF4(4 + (((imm) >> 4) & 3)), EMU_SF4(4 + (((imm) >> 6) & 3)))
/* a > b ? a : b and a < b ? a : b per lane (NaN: b), as maxps/minps */
typedef int32_t emu_m512i __attribute__((vector_size(64)));
#define EMU_SEL(m, a, b) ((__m512)(((m) & (emu_m512i)(a)) | (~(m) & (emu_m512i)(b))))
#define _mm512_max_ps(a, b) __extension__({ __m512 a_ = (a), b_ = (b); EMU_SEL(a_ > b_, a_, b_); })
#define _mm512_min_ps(a, b) __extension__({ __m512 a_ = (a), b_ = (b); EMU_SEL(a_ < b_, a_, b_); })
#define _mm512_maskz_loadu_ps(k, p)                                                                 \
    __extension__({                                                                                 \
        __m512 r_ = {0};                                                                            \
        for (int l_ = 0; l_ < 16; l_++)                                                             \
            if (((k) >> l_) & 1) r_[l_] = ((const float *)(p))[l_];                                 \
        r_;                                                                                         \
    })
#define _mm512_mask_storeu_ps(p, k, v)                                                              \
    do {                                                                                            \
        __m512 v_ = (v);                                                                            \
        for (int l_ = 0; l_ < 16; l_++)                                                             \
            if (((k) >> l_) & 1) ((float *)(p))[l_] = v_[l_];                                       \
    } while (0)
/* a * b + c in the lanes of k, c elsewhere (the depthwise kernel's left
 * and right taps) */
#define _mm512_mask3_fmadd_ps(a, b, c, k)                                                           \
    __extension__({                                                                                 \
        __m512 r_ = (c), p_ = (a) * (b) + r_;                                                       \
        for (int l_ = 0; l_ < 16; l_++)                                                             \
            if (((k) >> l_) & 1) r_[l_] = p_[l_];                                                   \
        r_;                                                                                         \
    })
#define _MM_HINT_T0 3

#endif
