/* avx512_emu.h — lets the AVX-512 micro-kernel of src/codegen/cpu/rt run on
 * a machine without AVX-512: the few intrinsics it uses, as GCC/Clang
 * 64-byte vector extensions. Included (before the tsrt headers) by
 * test_rt_gemm.c and test_rt_conv.c when built with -DTSRT_TEST_AVX512_EMU
 * (the *_avx512emu ctest entries). It checks the kernel's indexing, edge
 * handling and blocking (MR 14, NR 32, KC 384, MC 168), not its speed or
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
#define _mm512_set1_ps(x) ((__m512){0} + (float)(x))
#define _mm512_load_ps(p) (*(const __m512 *)emu_aligned64(p))
#define _mm512_loadu_ps(p) (*(const emu_m512u *)(const void *)(p))
#define _mm512_storeu_ps(p, v) (*(emu_m512u *)(void *)(p) = (v))
#define _mm512_fmadd_ps(a, b, c) ((a) * (b) + (c))
#define _mm512_add_ps(a, b) ((a) + (b))
#define _mm_prefetch(p, hint) __builtin_prefetch(p)
#define _MM_HINT_T0 3

#endif
