/* tsrt_conv_pt.h — GEMM_1X1T: a 1x1 convolution with the output positions
 * as the rows of the micro-kernel's tile (AVX-512 only).
 *
 * GEMM_1X1 computes Y[o][p] = sum_c W[o][c] X[c][p] with output channels
 * as the tile's 14 rows and positions as its 32 columns. On maps of 7x7
 * and 14x14 the positions (49, 196) leave the last 32-wide column panel
 * mostly empty (49 = 32 + 17: 77% of the multiply-adds useful), and the
 * weights, read once per column block, are the larger operand. Here the
 * roles swap, Y^T = X^T W^T:
 *   - the tile is 14 positions x 32 output channels (28 zmm accumulators);
 *     the 14 positions of input channel c are X[c][p0 .. p0+14): the
 *     broadcasts read the image in place, nothing is packed per call;
 *   - W^T is packed once per program (tsrt_conv_pre_pack, made from the
 *     model's constant weights like Winograd's transform, D38) into panels
 *     of 32 output channels, C x 32 floats each; every output channel count
 *     divisible by 32 (ResNet's, most of MobileNetV2's) fills every panel;
 *   - the whole K in one pass (a panel is at most 256 KiB for C = 2048:
 *     it stays in L2 while the position tiles sweep past it), so each tile
 *     of Y is written once, transposed (16x16 in registers), and handed to
 *     the epilogue while in L1.
 * Measured on Zen 4 (docs/kernels.md, D41): ResNet-50's 1x1 convs on
 * 14x14 and 7x7 maps 1.2-1.6x faster than GEMM_1X1; with few input
 * channels the transposed store costs more than the layout saves, so
 * tsrt_conv_pre prepares the weights for this path only where its tiles
 * are fuller, or as full with many input channels (tsrt__pt_worth).
 * Without AVX-512 (or under its emulation in the tests) the path does not
 * apply: tsrt_conv_pre never picks it and tsrt_conv refuses it. */
#ifndef TSRT_CONV_PT_H
#define TSRT_CONV_PT_H

#ifndef TSRT_CONV_ARGS_H
#include "tsrt_conv_args.h"
#endif
#ifndef TSRT_UKERNEL_H
#include "tsrt_ukernel.h"
#endif

#if TSRT_ISA == TSRT_ISA_AVX512
#define TSRT_HAVE_PT 1
#else
#define TSRT_HAVE_PT 0
#endif

enum { TSRT__PT_MR = 14, TSRT__PT_NR = 32 };

/* Whether a shape is worth the path, against GEMM_1X1 (MR x NR = 14 x 32
 * tiles of channels x positions): the fraction of each one's tiles that
 * holds outputs, channels x positions against positions x channels, and
 * the input channels K that a tile's fixed cost (the transposed store,
 * ~0.25 cycle per output float, against 28 FMA cycles per input channel)
 * is spread over. From TSRT_PT_KMIN channels the path is taken unless its
 * tiles are emptier, from TSRT_PT_KMIN_EDGE only when they are at least
 * 5% fuller. Measured on Zen 4 (D41): 64 -> 256 at 56x56 (same
 * fill) 1.12-1.29x GEMM_1X1's time, 128 -> 512 at 28x28 (3% fuller)
 * 1.01-1.02x; from 256 channels every ResNet-50 layer 0.83-0.94x;
 * MobileNetV2's 144 -> 32 at 28x28 (34% fuller) 0.68x, 96 -> 24 at 56x56
 * (12% emptier) 1.04x. */
#ifndef TSRT_PT_KMIN
#define TSRT_PT_KMIN 256
#endif
#ifndef TSRT_PT_KMIN_EDGE
#define TSRT_PT_KMIN_EDGE 96
#endif

static inline int tsrt__pt_worth(const tsrt_conv_args *v)
{
    const int64_t P = v->h * v->w, O = v->o;
    /* tile area per output, up to the common factor O*P */
    const int64_t gemm = tsrt__rup(O, TSRT_MR) * tsrt__rup(P, TSRT_NR);
    const int64_t pt = tsrt__rup(O, TSRT__PT_NR) * tsrt__rup(P, TSRT__PT_MR);
    if (v->c >= TSRT_PT_KMIN) return gemm >= pt;
    return v->c >= TSRT_PT_KMIN_EDGE && 20 * gemm >= 21 * pt;
}

/* A 1x1 conv this path computes (the image read as a C x H*W matrix). */
static inline int tsrt__pt_applies(const tsrt_conv_args *v)
{
    return TSRT_HAVE_PT && tsrt__conv_is_1x1(v) && v->groups == 1;
}

/* Floats of the packed W^T: rup(O, 32) x C. */
static inline size_t tsrt__pt_size(const tsrt_conv_args *v)
{
    return (size_t)(tsrt__rup(v->o, TSRT__PT_NR) * v->c) * sizeof(float);
}

/* W^T of output channels [o0, o1) into dst (tsrt__pt_size bytes):
 * dst[(q*C + c)*32 + j] = W[q*32 + j][c]. The share that ends at O also
 * zeroes the last panel's padding columns. */
static void tsrt__pt_pack(const tsrt_conv_args *v, int64_t o0, int64_t o1, float *dst)
{
    const int64_t C = v->c;
    for (int64_t o = o0; o < o1; o++) {
        float *d = dst + (o / TSRT__PT_NR) * C * TSRT__PT_NR + o % TSRT__PT_NR;
        const float *w = v->wt + o * C;
        for (int64_t c = 0; c < C; c++) d[c * TSRT__PT_NR] = w[c];
    }
    if (o1 == v->o)
        for (int64_t o = v->o; o < tsrt__rup(v->o, TSRT__PT_NR); o++) {
            float *d = dst + (o / TSRT__PT_NR) * C * TSRT__PT_NR + o % TSRT__PT_NR;
            for (int64_t c = 0; c < C; c++) d[c * TSRT__PT_NR] = 0.0f;
        }
}

/* Output channel o's packed weights times s (a folded batch norm's scale). */
static void tsrt__pt_scale(const tsrt_conv_args *v, int64_t o, float s, float *u)
{
    float *d = u + (o / TSRT__PT_NR) * v->c * TSRT__PT_NR + o % TSRT__PT_NR;
    for (int64_t c = 0; c < v->c; c++) d[c * TSRT__PT_NR] *= s;
}

#if TSRT_HAVE_PT

/* 16x16 transpose of r[0..16) (row i lane j -> row j lane i): four rounds
 * of two-source shuffles, 64 in all. */
static inline void tsrt__pt_t16(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4)
        for (int h = 0; h < 2; h++) {
            r[i + 2 * h] = _mm512_shuffle_ps(t[i + h], t[i + 2 + h], 0x44);
            r[i + 2 * h + 1] = _mm512_shuffle_ps(t[i + h], t[i + 2 + h], 0xee);
        }
    for (int i = 0; i < 16; i += 8)
        for (int h = 0; h < 4; h++) {
            t[i + h] = _mm512_shuffle_f32x4(r[i + h], r[i + 4 + h], 0x88);
            t[i + 4 + h] = _mm512_shuffle_f32x4(r[i + h], r[i + 4 + h], 0xdd);
        }
    for (int h = 0; h < 8; h++) {
        r[h] = _mm512_shuffle_f32x4(t[h], t[h + 8], 0x88);
        r[h + 8] = _mm512_shuffle_f32x4(t[h], t[h + 8], 0xdd);
    }
}

#define TSRT__PT_FMA(i)                                                       \
    do {                                                                      \
        const __m512 x_ = _mm512_set1_ps(a[o##i]);                            \
        c[i][0] = _mm512_fmadd_ps(x_, b0, c[i][0]);                           \
        c[i][1] = _mm512_fmadd_ps(x_, b1, c[i][1]);                           \
    } while (0)

/* Y[j][i] (= y[j*P + i]) for the mr x nr corner of a 14 x 32 tile: the
 * positions p0 + i (a = X + p0, row stride P) times the packed panel b
 * over the whole K; beta adds Y's old values; then te (at the tile's
 * origin, tsrt__te_at), if given, on each channel's vector of positions
 * before it is stored, in tsrt__te_tile's order of operations. Rows past
 * mr repeat row mr - 1 (no read past the image) and are not stored. */
static void tsrt__pt_tile(int64_t K, const float *restrict a, ptrdiff_t P, const float *restrict b,
                          float *restrict y, int mr, int nr, int beta, const tsrt_tepi *te)
{
    __m512 c[16][2];
    for (int i = 0; i < 16; i++) c[i][0] = c[i][1] = _mm512_setzero_ps();
    const int m1 = mr - 1;
    const int o0 = 0, o1 = 1 < m1 ? 1 : m1, o2 = 2 < m1 ? 2 : m1, o3 = 3 < m1 ? 3 : m1, o4 = 4 < m1 ? 4 : m1,
              o5 = 5 < m1 ? 5 : m1, o6 = 6 < m1 ? 6 : m1, o7 = 7 < m1 ? 7 : m1, o8 = 8 < m1 ? 8 : m1,
              o9 = 9 < m1 ? 9 : m1, o10 = 10 < m1 ? 10 : m1, o11 = 11 < m1 ? 11 : m1, o12 = 12 < m1 ? 12 : m1,
              o13 = 13 < m1 ? 13 : m1;
    for (int64_t k = 0; k < K; k++) {
        const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
        TSRT__PT_FMA(0); TSRT__PT_FMA(1); TSRT__PT_FMA(2); TSRT__PT_FMA(3); TSRT__PT_FMA(4);
        TSRT__PT_FMA(5); TSRT__PT_FMA(6); TSRT__PT_FMA(7); TSRT__PT_FMA(8); TSRT__PT_FMA(9);
        TSRT__PT_FMA(10); TSRT__PT_FMA(11); TSRT__PT_FMA(12); TSRT__PT_FMA(13);
        a += P;
        b += TSRT__PT_NR;
    }
    const __mmask16 mask = (__mmask16)((1u << mr) - 1);
    /* an absent term changes nothing (x + -0 = x; max by -inf, min by +inf) */
    const __m512 lo = _mm512_set1_ps(te && te->clamp & TSRT_TE_MAX ? te->lo : -INFINITY);
    const __m512 hi = _mm512_set1_ps(te && te->clamp & TSRT_TE_MIN ? te->hi : INFINITY);
    const __m512 z = _mm512_set1_ps(te && te->clamp & TSRT_TE_MAX_PZ ? 0.0f : -0.0f);
    const __m512 col = te && te->col ? _mm512_maskz_loadu_ps(mask, te->col) : _mm512_set1_ps(-0.0f);
    for (int h = 0; h < 2; h++) {
        __m512 r[16];
        for (int i = 0; i < 16; i++) r[i] = c[i][h];
        tsrt__pt_t16(r);
        for (int j = 0; j < 16 && 16 * h + j < nr; j++) {
            const int o = 16 * h + j;
            float *yj = y + o * P;
            __m512 q = r[j];
            if (beta) q = _mm512_add_ps(q, _mm512_maskz_loadu_ps(mask, yj));
            if (te) {
                q = _mm512_add_ps(q, _mm512_set1_ps(te->row ? te->row[o] : -0.0f));
                q = _mm512_add_ps(q, col);
                if (te->res) q = _mm512_add_ps(q, _mm512_maskz_loadu_ps(mask, te->res + o * te->res_rs));
                q = _mm512_add_ps(_mm512_max_ps(lo, q), z);
                q = _mm512_min_ps(hi, q);
            }
            _mm512_mask_storeu_ps(yj, mask, q);
        }
    }
}
#undef TSRT__PT_FMA

/* The conv: per image, panels of 32 output channels outer, tiles of 14
 * positions inner (the panel stays in L2, the image's rows of one tile in
 * L1); thread ith takes a contiguous share of the (image, panel, tile)
 * units. v->wu: the packed W^T. */
static void tsrt__conv_pt(const tsrt_conv_args *v, int ith, int nth)
{
    const int64_t C = v->c, O = v->o, P = v->h * v->w;
    const int64_t np = tsrt__cdiv(O, TSRT__PT_NR), nt = tsrt__cdiv(P, TSRT__PT_MR), units = v->n * np * nt;
    const int64_t u0 = units * ith / nth, u1 = units * (ith + 1) / nth;
    for (int64_t u = u0; u < u1; u++) {
        const int64_t img = u / (np * nt), q = u / nt % np, t = u % nt;
        const int64_t p0 = t * TSRT__PT_MR, o0 = q * TSRT__PT_NR;
        const int mr = (int)tsrt__min(TSRT__PT_MR, P - p0), nr = (int)tsrt__min(TSRT__PT_NR, O - o0);
        float *y = v->y + img * v->y_bs + o0 * P + p0;
        tsrt_tepi te;
        if (v->te) te = tsrt__te_at(v->te, img * O + o0, p0);
        tsrt__pt_tile(C, v->x + img * v->x_bs + p0, P, v->wu + q * C * TSRT__PT_NR, y, mr, nr, v->beta,
                      v->te ? &te : NULL);
        if (!v->te && v->epi) v->epi(v->epi_ctx, y, P, 1, img * O + o0, p0, nr, mr);
    }
}

#endif /* TSRT_HAVE_PT */

#endif /* TSRT_CONV_PT_H */
