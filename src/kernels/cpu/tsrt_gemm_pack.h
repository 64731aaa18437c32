/* tsrt_gemm_pack.h — the GEMM driver's view of one product (tsrt__gop)
 * and the packing of its operands: A into MR-tall micro-panels, B into
 * NR-wide ones (the layouts the micro-kernels of tsrt_ukernel*.h read).
 * The driver, threading and entry points are tsrt_gemm.h's. */
#ifndef TSRT_GEMM_PACK_H
#define TSRT_GEMM_PACK_H

#ifndef TSRT_GEMM_API_H
#include "tsrt_gemm_api.h"
#endif
#ifndef TSRT_UKERNEL_H
#include "tsrt_ukernel.h"
#endif

/* ---- internal operation ------------------------------------------------------ */

/* Packs B[p0 .. p0+kc)[j0 .. j0+nc) into NR-wide micro-panels at dst
 * (dst[(j/NR)*kc*NR + p*NR + j%NR]), zero-filling columns past nc up to a
 * multiple of NR. Used by convolution to build im2col panels on the fly. */
typedef void (*tsrt__pack_b_fn)(const void *ctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                                float *dst);


/* One product C = A·B as the driver sees it (after the optional transpose
 * of the whole problem). epi_m0/epi_n0 are added to the epilogue's
 * coordinates; `swapped` says the driver computes C^T = B^T·A^T and the
 * epilogue must be told the original orientation. */
typedef struct tsrt__gop {
    int64_t m, n, k;
    const float *a;
    ptrdiff_t a_rs, a_cs;
    const float *b;
    ptrdiff_t b_rs, b_cs;
    tsrt__pack_b_fn pack_b; /* NULL: B is the strided matrix b */
    const void *pack_b_ctx;
    float *c;
    ptrdiff_t c_rs, c_cs;
    int beta, swapped;
    int a_direct; /* A may be read in place (a_cs == 1) by the small-N loop nest */
    const float *bp; /* B pre-packed: cdiv(n, NR) panels of k x NR (tsrt_sgemm_pack_b), or NULL */
    tsrt_epilogue_fn epi;
    void *epi_ctx;
    int64_t epi_m0, epi_n0;
    const tsrt_tepi *te; /* replaces epi where set (never with `swapped`) */
} tsrt__gop;

/* ---- packing ------------------------------------------------------------------ */

/* A[0..mc)[0..kc) (a points at the block's first element) into w-tall
 * micro-panels (w = MR, or 4 for the 4-row kernel's tiles, w >= mc when
 * 4): dst[(i/w)*kc*w + p*w + i%w], rows past mc zeroed. */
static inline __attribute__((always_inline)) void tsrt__pack_a_w(const float *restrict a, ptrdiff_t rs, ptrdiff_t cs,
                                                                int64_t mc, int64_t kc, float *restrict dst,
                                                                const int64_t w)
{
    for (int64_t ir = 0; ir < mc; ir += w, dst += w * kc) {
        const int64_t mr = tsrt__min(w, mc - ir);
        const float *s = a + ir * rs;
        if (mr == w && cs == 1) {
            /* Row-major A: w read streams, one contiguous write stream;
             * the fixed inner trip count is unrolled. (Rows outer, p inner
             * was 5 cycles per float on Zen 3: stride-w stores.) */
            int64_t p = 0;
#if TSRT_ISA == TSRT_ISA_AVX512
            /* 16 columns of the w rows at a time, transposed in registers:
             * gcc gathers the loop below one float at a time (a load and
             * an insert each), half of GEMM 1024^3's packing (D49). */
            if (w <= 16) {
                const __mmask16 m = (__mmask16)((1u << w) - 1);
                for (; p + 16 <= kc; p += 16) {
                    __m512 r[16];
                    for (int i = 0; i < 16; i++) {
                        if (i < w) r[i] = _mm512_loadu_ps(s + i * rs + p);
                        else r[i] = _mm512_setzero_ps();
                    }
                    tsrt__t16(r);
                    for (int j = 0; j < 16; j++) _mm512_mask_storeu_ps(dst + (p + j) * w, m, r[j]);
                }
            }
#endif
            for (; p < kc; p++)
                for (int64_t i = 0; i < w; i++) dst[p * w + i] = s[i * rs + p];
        } else if (mr == w && rs == 1) {
            /* Column-major A (a transposed operand): w contiguous floats per p. */
            for (int64_t p = 0; p < kc; p++) memcpy(dst + p * w, s + p * cs, sizeof(float) * (size_t)w);
        } else {
            for (int64_t p = 0; p < kc; p++) {
                int64_t i = 0;
                for (; i < mr; i++) dst[p * w + i] = s[i * rs + p * cs];
                for (; i < w; i++) dst[p * w + i] = 0.0f;
            }
        }
    }
}

static void tsrt__pack_a(const float *restrict a, ptrdiff_t rs, ptrdiff_t cs, int64_t mc, int64_t kc,
                         float *restrict dst)
{
    tsrt__pack_a_w(a, rs, cs, mc, kc, dst, TSRT_MR);
}

#ifdef TSRT_HAVE_UKRH
/* h rows (tsrt__is_tileh) packed h wide, for tsrt__ukrh. */
static void tsrt__pack_ah(const float *restrict a, ptrdiff_t rs, ptrdiff_t cs, int64_t h, int64_t kc,
                          float *restrict dst)
{
    switch (h) { /* the width a constant in each copy of the loops */
    case 12: tsrt__pack_a_w(a, rs, cs, 12, kc, dst, 12); break;
    case 10: tsrt__pack_a_w(a, rs, cs, 10, kc, dst, 10); break;
    case 8: tsrt__pack_a_w(a, rs, cs, 8, kc, dst, 8); break;
    default: tsrt__pack_a_w(a, rs, cs, 4, kc, dst, 4); break;
    }
}
#endif

/* B[0..kc)[0..nc) (b points at the block's first element) into NR-wide
 * micro-panels, columns past nc zeroed (the tsrt__pack_b_fn contract). */
static void tsrt__pack_b(const float *restrict b, ptrdiff_t rs, ptrdiff_t cs, int64_t kc,
                         int64_t nc, float *restrict dst)
{
    for (int64_t jr = 0; jr < nc; jr += TSRT_NR, dst += TSRT_NR * kc) {
        const int64_t nr = tsrt__min(TSRT_NR, nc - jr);
        const float *s = b + jr * cs;
        if (nr == TSRT_NR && cs == 1) {
            /* Row-major B: one NR-float row per p (two ymm moves on AVX2). */
            for (int64_t p = 0; p < kc; p++) memcpy(dst + p * TSRT_NR, s + p * rs, sizeof(float) * TSRT_NR);
        } else if (nr == TSRT_NR && rs == 1) {
            /* Column-major B: NR contiguous read streams. */
            for (int64_t j = 0; j < TSRT_NR; j++) {
                const float *sj = s + j * cs;
                for (int64_t p = 0; p < kc; p++) dst[p * TSRT_NR + j] = sj[p];
            }
        } else {
            for (int64_t p = 0; p < kc; p++) {
                int64_t j = 0;
                for (; j < nr; j++) dst[p * TSRT_NR + j] = s[p * rs + j * cs];
                for (; j < TSRT_NR; j++) dst[p * TSRT_NR + j] = 0.0f;
            }
        }
    }
}

#endif /* TSRT_GEMM_PACK_H */
