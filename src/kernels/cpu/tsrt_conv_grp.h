/* tsrt_conv_grp.h — GROUPED: a convolution with few output channels per
 * group (RegNet's and ResNeXt's grouped 3x3 convs: 8 in and 8 out per
 * group), computed directly with the output positions in the vector
 * lanes. See tsrt_conv.h.
 *
 * As a GEMM per (image, group) such a conv has M = O/G rows: 8 rows fill
 * one and a third of AVX2's 6-row micro-tiles, and every packed panel of
 * X' (K = 72 rows) then serves 8 output rows, so packing costs as much as
 * the product; on the 3x3 maps of RegNet's last stage the 9 positions of
 * an image fill 9 of a panel's 16 columns besides. Here nothing is
 * packed: each (image, group) input is copied once into PHASED's
 * zero-padded stride-phase images (tsrt__phx), where tap k of output
 * position i*Wq + j is the float at a fixed offset off[k] from it. The
 * positions i*Wq + j of all output rows, run together as one line
 * (columns j >= OW of each row included: they are computed and dropped),
 * are then a GEMM's columns read in place: a tile of R output channels x
 * 24 positions (three vectors; the line's last tile 8 or 16) is, per k,
 * three unaligned vector loads, R broadcasts of W[o][k] from the weights
 * as given, and 3R FMAs. The
 * tile goes to a scratch copy of the group's outputs on that line, and
 * each output row is copied from it to Y, then the epilogue runs on the
 * group's planes while they are in L1/L2.
 *
 * R = 4 (12 accumulators of 16 registers) on AVX2 and generic targets,
 * 8 (24 of 32) on AVX-512. The columns past OW cost (Wq - OW)/Wq of the
 * multiply-adds: a 3x3 stride-1 conv on a 3x3 map computes 5 columns a
 * row for 3. Measured against PHASED: D181. */
#ifndef TSRT_CONV_GRP_H
#define TSRT_CONV_GRP_H

#ifndef TSRT_CONV_ARGS_H
#include "tsrt_conv_args.h"
#endif
#ifndef TSRT_CONV_GEMM_H
#include "tsrt_conv_gemm.h"
#endif
#ifndef TSRT_CONV_DW_H
#include "tsrt_conv_dw.h" /* TSRT__FMA8 */
#endif

#if TSRT_ISA == TSRT_ISA_AVX512
#define TSRT__GRP_R 8
#else
#define TSRT__GRP_R 4
#endif
/* Positions per tile: three vectors of 8. */
#define TSRT__GRP_Q 24

/* The most output channels per group tsrt_conv_choose gives this path.
 * AVX2 (Zen 3, 1 thread, against PHASED): 4 and 8 per group 0.4-0.9x the
 * time, 16 0.82x, 32 0.88-0.98x, 64 1.08-1.39x (D181). AVX-512 not
 * measured: there PHASED's 14-row tiles are fuller and this path's
 * vectors half the width, so only where PHASED fills at most 8 of 14 rows. */
#if TSRT_ISA == TSRT_ISA_AVX512
#define TSRT__GRP_OG_MAX 8
#else
#define TSRT__GRP_OG_MAX 32
#endif

/* Whether GROUPED computes the conv: several groups, no input dilation. */
static inline int tsrt__grp_applies(const tsrt_conv_args *v)
{
    return v->groups > 1 && v->ldil_h == 1 && v->ldil_w == 1;
}

/* Whether tsrt_conv_choose picks it: few outputs per group, and not
 * DEPTHWISE's shape. */
static inline int tsrt__grp_chosen(const tsrt_conv_args *v)
{
    const int64_t cg = v->c / v->groups, og = v->o / v->groups;
    return tsrt__grp_applies(v) && og <= TSRT__GRP_OG_MAX && !(cg == 1 && og <= 4);
}

/* PHASED's geometry, with a copy also where PHASED reads a 1x1 stride-1
 * conv's image in place: the tiles read whole vectors past the last
 * position, which in place would run past the input. */
static void tsrt__grp_geom(const tsrt_conv_args *v, tsrt__phx *g)
{
    tsrt__phx_geom(v, g);
    if (g->copy) return;
    g->copy = 1;
    g->PH = g->PW = 1, g->Hq = v->h, g->Wq = v->w;
    int64_t pl = tsrt__rup(g->Hq * g->Wq + 16, 16);
    if (pl / 16 % 2 == 0) pl += 16;
    g->plane = pl;
}

/* The line of positions i*Wq + j the tiles cover: up to the last output
 * position, rounded up to whole vectors (tiles of 24, the last of 8 or
 * 16: a 3x3 map's line of 13 positions is two vectors, not three). */
static inline int64_t tsrt__grp_line(const tsrt_conv_args *v, const tsrt__phx *g)
{
    return tsrt__rup((v->oh - 1) * g->Wq + v->ow, 8);
}

/* Workspace: off (K entries), the phase copy of one group, and the
 * group's outputs on the line. */
static size_t tsrt__grp_ws(const tsrt_conv_args *v)
{
    if (!tsrt__grp_applies(v)) return 0;
    tsrt__phx g;
    tsrt__grp_geom(v, &g);
    const int64_t K = v->c / v->groups * v->kh * v->kw, og = v->o / v->groups;
    return (size_t)K * sizeof(ptrdiff_t) + (size_t)(tsrt__phx_floats(&g) + og * tsrt__grp_line(v, &g)) * sizeof(float) +
           3 * TSRT_ALIGN;
}

/* Positions [q, q + 8*NV) of rows [o, o + R) of the group's outputs on
 * the line, s[r*L + q]: x the phase images, w the first row's weights (K
 * apart). The last tile's loads reach at most 7 floats past the last
 * position's taps, inside the last phase plane's slack. */
static inline __attribute__((always_inline)) void tsrt__grp_tile(int R, int NV, int64_t K, const float *restrict x,
                                                                  const ptrdiff_t *restrict off,
                                                                  const float *restrict w, float *restrict s,
                                                                  int64_t L)
{
    tsrt__v8 acc[TSRT__GRP_R][3];
    for (int r = 0; r < R; r++)
        for (int j = 0; j < NV; j++) acc[r][j] = (tsrt__v8){0};
    for (int64_t k = 0; k < K; k++) {
        const float *a = x + off[k];
        tsrt__v8 xv[3];
        for (int j = 0; j < NV; j++) TSRT__V8_LOAD(xv[j], a + 8 * j);
        for (int r = 0; r < R; r++) {
            /* a broadcast from memory ({0} + w would add: -0 + 0 is +0) */
            const float wk = w[r * K + k];
            const tsrt__v8 b = {wk, wk, wk, wk, wk, wk, wk, wk};
            for (int j = 0; j < NV; j++) TSRT__FMA8(acc[r][j], b, xv[j]);
        }
    }
    for (int r = 0; r < R; r++)
        for (int j = 0; j < NV; j++) TSRT__V8_STORE(s + r * L + 8 * j, acc[r][j]);
}

/* Rows [o, o + R) on the whole line (L a multiple of 8): tiles of 24
 * positions, the last of 8 or 16. */
static inline __attribute__((always_inline)) void tsrt__grp_rows(int R, int64_t K, const float *restrict x,
                                                                  const ptrdiff_t *restrict off,
                                                                  const float *restrict w, float *restrict s,
                                                                  int64_t L)
{
    int64_t q = 0;
    for (; q + TSRT__GRP_Q <= L; q += TSRT__GRP_Q) tsrt__grp_tile(R, 3, K, x + q, off, w, s + q, L);
    if (L - q == 16) tsrt__grp_tile(R, 2, K, x + q, off, w, s + q, L);
    else if (L - q == 8) tsrt__grp_tile(R, 1, K, x + q, off, w, s + q, L);
}

/* One R per function, so that each inlined copy keeps its accumulators
 * in registers. */
#define TSRT__GRP_ROWS_FN(R)                                                                                       \
    static void tsrt__grp_rows##R(int64_t K, const float *restrict x, const ptrdiff_t *restrict off,             \
                                  const float *restrict w, float *restrict s, int64_t L)                          \
    {                                                                                                             \
        tsrt__grp_rows(R, K, x, off, w, s, L);                                                                    \
    }
TSRT__GRP_ROWS_FN(1)
TSRT__GRP_ROWS_FN(2)
TSRT__GRP_ROWS_FN(3)
TSRT__GRP_ROWS_FN(4)
#if TSRT__GRP_R == 8
TSRT__GRP_ROWS_FN(5)
TSRT__GRP_ROWS_FN(6)
TSRT__GRP_ROWS_FN(7)
TSRT__GRP_ROWS_FN(8)
#endif
#undef TSRT__GRP_ROWS_FN

static void tsrt__grp_block(int rows, int64_t K, const float *x, const ptrdiff_t *off, const float *w, float *s,
                            int64_t L)
{
    switch (rows) {
    case 1: tsrt__grp_rows1(K, x, off, w, s, L); break;
    case 2: tsrt__grp_rows2(K, x, off, w, s, L); break;
    case 3: tsrt__grp_rows3(K, x, off, w, s, L); break;
#if TSRT__GRP_R == 8
    case 4: tsrt__grp_rows4(K, x, off, w, s, L); break;
    case 5: tsrt__grp_rows5(K, x, off, w, s, L); break;
    case 6: tsrt__grp_rows6(K, x, off, w, s, L); break;
    case 7: tsrt__grp_rows7(K, x, off, w, s, L); break;
    default: tsrt__grp_rows8(K, x, off, w, s, L); break;
#else
    default: tsrt__grp_rows4(K, x, off, w, s, L); break;
#endif
    }
}

/* The phase images of the group whose first input channel is at x, in
 * g->buf (tsrt__phx's layout, its slack zeroed): the whole copy zeroed,
 * then each input row's columns inside the padding stored into its
 * phase rows. tsrt__phx_copy writes every float of every phase row, the
 * zeros too, row by row: on the small maps grouped convs run on (3x3 to
 * 12x12, rows of 5 to 14 floats) its per-row work was half the conv's
 * time (a 3x3 map with 55 groups of 8: copy 42%, its memsets 11%). */
static void tsrt__grp_copy(const tsrt__phx *g, const float *x, int64_t floats)
{
    const tsrt_conv_args *v = g->v;
    const int64_t cg = v->c / v->groups, H = v->h, W = v->w, sh = g->sh, sw = g->sw, Wq = g->Wq;
    memset(g->buf, 0, sizeof(float) * (size_t)floats);
    for (int64_t a = 0; a < g->PH; a++)
        for (int64_t b = 0; b < g->PW; b++) {
            /* phase (a, b): its row r is input row r*sh + a - pad_h, its
             * column q input column q*sw + b - pad_w; the rows and columns
             * inside the input, found once per phase (their divisions
             * per channel cost a 3x3 map's unit as much as its FMAs) */
            int64_t rlo, rhi, qlo, qhi;
            tsrt__tap_range(a - v->pad_h, sh, H, g->Hq, &rlo, &rhi);
            tsrt__tap_range(b - v->pad_w, sw, W, Wq, &qlo, &qhi);
            for (int64_t c = 0; c < cg; c++) {
                float *d = g->buf + ((c * g->PH + a) * g->PW + b) * g->plane;
                const float *xc = x + c * H * W + (a - v->pad_h) * W + b - v->pad_w;
                for (int64_t r = rlo; r < rhi; r++) {
                    const float *xr = xc + r * sh * W;
                    float *dr = d + r * Wq;
                    int64_t q = qlo;
                    if (sw == 1) {
                        /* rows of a few floats: a loop, not a libc call each */
                        if (qhi - qlo <= 16)
                            for (; q < qhi; q++) dr[q] = xr[q];
                        else
                            memcpy(dr + qlo, xr + qlo, sizeof(float) * (size_t)(qhi - qlo));
                        continue;
                    }
                    /* stride 2: 8 columns from 16 floats while they lie in the row */
                    if (sw == 2)
                        for (; q + 8 <= qhi && 2 * q + 15 + b - v->pad_w < W; q += 8) {
                            tsrt__v8 a0, a1;
                            TSRT__V8_LOAD(a0, xr + 2 * q), TSRT__V8_LOAD(a1, xr + 2 * q + 8);
                            TSRT__V8_STORE(dr + q, __builtin_shufflevector(a0, a1, 0, 2, 4, 6, 8, 10, 12, 14));
                        }
                    for (; q < qhi; q++) dr[q] = xr[q * sw];
                }
            }
        }
}

/* This thread's share of the (image, group) pairs, each: its input
 * copied into phase images, its og output channels computed on the line
 * R at a time, each output row copied to Y (added to it with beta), and
 * the epilogue on the group's planes. */
static void tsrt__conv_grp(const tsrt_conv_args *v, int ith, int nth, void *ws)
{
    const int64_t G = v->groups, cg = v->c / G, og = v->o / G, K = cg * v->kh * v->kw;
    const int64_t OH = v->oh, OW = v->ow, P = OH * OW, units = v->n * G;
    const int64_t u0 = units * ith / nth, u1 = units * (ith + 1) / nth;
    if (u0 >= u1) return;
    tsrt__phx g;
    tsrt__grp_geom(v, &g);
    const int64_t L = tsrt__grp_line(v, &g), Wq = g.Wq, copy = tsrt__phx_floats(&g);
    ptrdiff_t *off = (ptrdiff_t *)(void *)tsrt__align(ws);
    tsrt__phx_offsets(&g, off);
    g.buf = tsrt__align((char *)ws + (size_t)K * sizeof(ptrdiff_t) + TSRT_ALIGN);
    float *s = tsrt__align(g.buf + copy);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t img = u / G, gr = u % G;
        tsrt__grp_copy(&g, v->x + img * v->x_bs + gr * cg * v->h * v->w, copy);
        const float *wg = v->wt + gr * og * K;
        for (int64_t o = 0; o < og; o += TSRT__GRP_R) {
            const int rows = (int)tsrt__min(TSRT__GRP_R, og - o);
            tsrt__grp_block(rows, K, g.buf, off, wg + o * K, s + o * L, L);
        }
        float *y = v->y + img * v->y_bs + gr * og * P;
        for (int64_t o = 0; o < og; o++)
            for (int64_t i = 0; i < OH; i++) {
                const float *src = s + o * L + i * Wq;
                float *dst = y + o * P + i * OW;
                if (v->beta)
                    for (int64_t j = 0; j < OW; j++) dst[j] += src[j];
                else if (OW <= 16)
                    for (int64_t j = 0; j < OW; j++) dst[j] = src[j];
                else
                    memcpy(dst, src, sizeof(float) * (size_t)OW);
            }
        tsrt__conv_epi(v, y, P, img * v->o + gr * og, 0, og, P);
    }
}

#endif /* TSRT_CONV_GRP_H */
