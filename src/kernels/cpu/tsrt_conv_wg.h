/* tsrt_conv_wg.h — Winograd F(2x2, 3x3) and F(4x4, 3x3) convolution
 * (WINOGRAD, WINOGRAD4): transforms, the per-panel GEMMs, the output
 * transform with the epilogue. The padded input copy is the PHASED one
 * (tsrt_conv_gemm.h) with column stride m. See tsrt_conv.h. */
#ifndef TSRT_CONV_WG_H
#define TSRT_CONV_WG_H

#ifndef TSRT_CONV_GEMM_H
#include "tsrt_conv_gemm.h"
#endif

/* ==== Winograd F(m x m, 3x3), m = 2 (WINOGRAD) or 4 (WINOGRAD4) ============== *
 *
 * 3x3, stride 1, no dilation: each m x m output tile is
 *   Y = A^T [ sum_c (G g_c G^T) . (B^T d_c B) ] A
 * with d_c the a x a input patch (a = m + 2) of channel c and g_c its 3x3
 * filter. The a^2 elementwise sums over c are a^2 GEMMs of O x C by C x
 * tiles: per output, 16/4 = 4 multiply-adds (m = 2) or 36/16 = 2.25
 * (m = 4) instead of 9. F(2x2): A, B have entries 0, +-1 and G 0, +-1/2, 1,
 * so the result is the direct one up to a few roundings; F(4x4) (Lavin's
 * points 0, +-1, +-2) has entries up to 8 and 1/24 and loses about one
 * more decimal digit (error bounds in docs/kernels.md).
 *
 * Layouts (all in the workspace; NR = the micro-kernel's width):
 *   xp  the input, zero-padded and split by column phase mod m (the phase
 *       images of tsrt__phx with column stride m): column m*tx + k of the
 *       padded input is phase k % m, index tx + k / m, so for 8 consecutive
 *       tiles each of the a columns of a patch row is one unaligned vector
 *       load, no shuffles;
 *   V   transformed input, per panel of NR tiles (tiles numbered row by
 *       row, ty*TW + tx): V[xi][c][NR], a packed B micro-panel per xi;
 *   U   transformed weights of a block of output channels: U[xi][o][c],
 *       rows read in place by tsrt__ukr_full_ua;
 *   M   the a^2 products of one panel: M[xi][o][NR].
 * Tiles are numbered over the batch (image, tile row, tile column); the
 * padded copies of the images a panel reads sit in a ring of slots.
 * Loop: chunks of about one image's panels > output-channel blocks (U of
 * one block within a budget, in L2) > panels > xi > channel blocks (KC) >
 * MR-row micro-tiles; then the output transform of the panel and the
 * epilogue on its runs of output positions. V is computed per panel when
 * there is one channel block, else once per chunk and re-read per
 * block. */
/* Output positions from which F(2x2) with weights transformed once beats
 * PHASED (tsrt_conv_wg_pre). */
#ifndef TSRT__WG_PRE_MIN
#define TSRT__WG_PRE_MIN 49
#endif
/* Lane groups of 8 tiles the transforms take at once, at most: a panel
 * of NR tiles, or a chunk of tsrt_conv_wgt.h's. */
#define TSRT__WG_GROUPS 8
#ifndef TSRT__WG_U_FLOATS
#define TSRT__WG_U_FLOATS 65536 /* U block budget: 256 KiB */
#endif

typedef struct tsrt__wg {
    const tsrt_conv_args *v;
    int m, a, xi;                  /* tile m x m, patch a x a, xi = a*a */
    int64_t CG, OG, TH, TW, T;     /* tiles of one image: TH x TW = T */
    int64_t NT, NP;                /* tiles of the batch, n*T; NP panels of NR */
    int64_t obcap;                 /* output channels per block, at most */
    tsrt__phx xp;                  /* the padded copy of one image, m column phases */
    int64_t slots, slot;           /* images copied at once (a ring), floats apart */
} tsrt__wg;

/* Image copies a panel of nr tiles may read at once: the images its tiles
 * span (tiles run on from one image into the next, D141). */
static inline int64_t tsrt__wg_slots(const tsrt__wg *g, int64_t nr)
{
    return tsrt__min(g->v->n, tsrt__cdiv(nr - 1, g->T) + 1);
}

static void tsrt__wg_geom(const tsrt_conv_args *v, int m, tsrt__wg *g)
{
    g->v = v;
    g->m = m, g->a = m + 2, g->xi = (m + 2) * (m + 2);
    g->CG = v->c / v->groups, g->OG = v->o / v->groups;
    g->TH = tsrt__cdiv(v->oh, m), g->TW = tsrt__cdiv(v->ow, m), g->T = g->TH * g->TW;
    g->NT = v->n * g->T, g->NP = tsrt__cdiv(g->NT, TSRT_NR);
    g->obcap = tsrt__max(TSRT_MR, TSRT__WG_U_FLOATS / (g->xi * tsrt__max(g->CG, 1)));
    tsrt__phx *x = &g->xp;
    x->v = v, x->sh = 1, x->sw = m, x->PH = 1, x->PW = m, x->copy = 1;
    x->Hq = m * g->TH + 2, x->Wq = g->TW + 1;
    /* 32 floats of slack before and after each plane: the vector loads of
     * lanes outside a tile row read there (and throw the values away). */
    int64_t pl = tsrt__rup(x->Hq * x->Wq + 64, 16);
    if (pl / 16 % 2 == 0) pl += 16;
    x->plane = pl;
    g->slots = tsrt__max(1, tsrt__wg_slots(g, TSRT_NR));
    g->slot = g->CG * m * pl + 64;
}

/* Workspace floats of each part, bounded over the instruction sets (MR
 * and NR differ: obcap and the rounding of a block to MR rows). */
static void tsrt__wg_ws(const tsrt__wg *g, int64_t *xp, int64_t *u, int64_t *vv, int64_t *m)
{
    const int64_t b = TSRT__WG_U_FLOATS / (g->xi * tsrt__max(g->CG, 1));
    const int64_t ob = tsrt__min(g->OG, tsrt__max(TSRT_WS_MR, b)) + TSRT_WS_MR;
    const int vall = g->OG > tsrt__max(TSRT_AVX2_MR, b);
    *xp = tsrt__max(1, tsrt__wg_slots(g, TSRT_WS_NR)) * g->slot;
    *u = g->xi * ob * g->CG;
    *vv = g->xi * (g->CG * (vall ? g->T + TSRT_WS_NR : TSRT_WS_NR) + 16);
    *m = g->xi * ob * TSRT_WS_NR;
}

/* A run of the 8 lanes of a lane group within one tile row: lanes
 * [l0, l1) are tiles (ty, tx0 + l) of image img; tx0 may be outside
 * [0, TW). Tiles are numbered over the batch, img*T + ty*TW + tx. The
 * group's tiles t0 .. t0 + 7, those before te. */
typedef struct { int64_t img, ty, tx0; int l0, l1; } tsrt__wg_seg;

static int tsrt__wg_segs(const tsrt__wg *g, int64_t t0, int64_t te, tsrt__wg_seg *sg)
{
    int n = 0;
    for (int l = 0; l < 8 && t0 + l < te; n++) {
        const int64_t t = t0 + l, img = t / g->T, ty = t % g->T / g->TW, tx = t % g->TW;
        /* within the group, the tile row and the run (a run of tiles
         * that ends inside a group: the next lanes are another thread's) */
        const int len = (int)tsrt__min(tsrt__min(8 - l, g->TW - tx), te - t);
        sg[n] = (tsrt__wg_seg){img, ty, tx - l, l, l + len};
        l += len;
    }
    return n;
}

/* r = lanes [l0, l1) of a, the others of r (a macro: vectors passed by
 * value change the ABI without AVX, -Wpsabi). */
#define TSRT__BLEND(r, a, l0, l1)                                                        \
    do {                                                                                 \
        const tsrt__v8i lane_ = {0, 1, 2, 3, 4, 5, 6, 7};                               \
        const tsrt__v8i m_ = (lane_ >= (l0)) & (lane_ < (l1));                           \
        (r) = (tsrt__v8)(((tsrt__v8i)(a) & m_) | ((tsrt__v8i)(r) & ~m_));               \
    } while (0)

/* F(4x4)'s B^T on a 6-vector:
 * [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]. */
#define TSRT__WG4_BT(d0, d1, d2, d3, d4, d5, o0, o1, o2, o3, o4, o5)                        \
    do {                                                                                    \
        const tsrt__v8 s12_ = (d1) + (d2), s34_ = (d3) + (d4), t12_ = (d1) - (d2);          \
        const tsrt__v8 t43_ = (d4) - (d3), u13_ = (d1) - (d3), u42_ = (d4) - (d2);          \
        o0 = 4.0f * (d0) - 5.0f * (d2) + (d4);                                              \
        o1 = s34_ - 4.0f * s12_;                                                            \
        o2 = t43_ + 4.0f * t12_;                                                            \
        o3 = u42_ - 2.0f * u13_;                                                            \
        o4 = u42_ + 2.0f * u13_;                                                            \
        o5 = 4.0f * (d1) - 5.0f * (d3) + (d5);                                              \
    } while (0)

/* Row k of the a x a patches of channel c for 8 tiles (lane l: segment
 * q's tile (ty, tx0 + l) for l in [l0, l1)): d[j] = patch column j,
 * column m*tx + j being phase j % m, index tx + j / m. A group of lanes
 * spanning several tile rows loads once per row and blends the loads.
 * Inlined with m a constant (M). */
static inline __attribute__((always_inline)) void tsrt__wg_load_row(const tsrt__wg *g, const int M, int64_t c, int k,
                                                                    const tsrt__wg_seg *sg, int ns, tsrt__v8 *d)
{
    const int64_t Wq = g->xp.Wq, pl = g->xp.plane;
    for (int q = 0; q < ns; q++) {
        const float *r = g->xp.buf + sg[q].img % g->slots * g->slot + c * M * pl + (M * sg[q].ty + k) * Wq + sg[q].tx0;
        for (int j = 0; j < M + 2; j++) {
            tsrt__v8 t;
            TSRT__V8_LOAD(t, r + j % M * pl + j / M);
            if (q == 0)
                d[j] = t;
            else
                TSRT__BLEND(d[j], t, sg[q].l0, sg[q].l1);
        }
    }
}

/* F(2x2)'s B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1] on a 4-vector. */
#define TSRT__WG2_BT(d0, d1, d2, d3, o0, o1, o2, o3) \
    do {                                            \
        o0 = (d0) - (d2), o1 = (d1) + (d2);         \
        o2 = (d2) - (d1), o3 = (d1) - (d3);         \
    } while (0)

/* V of the nt tiles from t0 (all channels; lanes past nt, to a multiple
 * of 8, hold whatever their loads read, and groups past NT zero: the
 * GEMMs' rows or columns there are not stored) into vp:
 * V[xi][c][tile] at vp + xi*xs + c*cs + tile - t0,
 * xi = i*a + j, the input transform B^T d B of each loaded patch: along
 * each patch row as it is loaded, then down the columns into the stores.
 * Channels outermost: the patch rows of one channel serve every lane
 * group while they are in L1. Inlined with m a constant (M): with g->m
 * the loads computed j % m by a division each and the patch, its
 * transform and the stores went through the stack (perf: the input
 * transform 26% of F(4x4) on 64 channels at 24x24, its hot spots the
 * division and the spills). */
static inline __attribute__((always_inline)) void tsrt__wg_input_m(const tsrt__wg *g, const int M, int64_t t0,
                                                                   int64_t nt, float *vp, ptrdiff_t xs, ptrdiff_t cs)
{
    const int a = M + 2, nh = (int)tsrt__cdiv(nt, 8);
    tsrt__wg_seg sg[TSRT__WG_GROUPS][9];
    int ns[TSRT__WG_GROUPS];
    for (int h = 0; h < nh; h++) ns[h] = tsrt__wg_segs(g, t0 + 8 * h, tsrt__min(g->NT, t0 + nt), sg[h]);
    for (int64_t c = 0; c < g->CG; c++)
        for (int h = 0; h < nh; h++) {
            float *vc = vp + c * cs + 8 * h;
            tsrt__v8 w[6][6]; /* B^T along each patch row */
            for (int k = 0; k < a; k++) {
                tsrt__v8 d[6] = {{0}};
                tsrt__wg_load_row(g, M, c, k, sg[h], ns[h], d);
                if (M == 2)
                    TSRT__WG2_BT(d[0], d[1], d[2], d[3], w[k][0], w[k][1], w[k][2], w[k][3]);
                else
                    TSRT__WG4_BT(d[0], d[1], d[2], d[3], d[4], d[5], w[k][0], w[k][1], w[k][2], w[k][3], w[k][4],
                                 w[k][5]);
            }
            for (int j = 0; j < a; j++) {
                tsrt__v8 o[6];
                if (M == 2)
                    TSRT__WG2_BT(w[0][j], w[1][j], w[2][j], w[3][j], o[0], o[1], o[2], o[3]);
                else
                    TSRT__WG4_BT(w[0][j], w[1][j], w[2][j], w[3][j], w[4][j], w[5][j], o[0], o[1], o[2], o[3], o[4],
                                 o[5]);
                for (int i = 0; i < a; i++) TSRT__V8_STORE(vc + (i * a + j) * xs, o[i]);
            }
        }
}

static void tsrt__wg_input(const tsrt__wg *g, int64_t t0, int64_t nt, float *vp, ptrdiff_t xs, ptrdiff_t cs)
{
    if (g->m == 2)
        tsrt__wg_input_m(g, 2, t0, nt, vp, xs, cs);
    else
        tsrt__wg_input_m(g, 4, t0, nt, vp, xs, cs);
}

/* o0..o7 = the transpose of the 8x8 matrix with rows r0..r7 (unpack,
 * shuffle, then swap of 128-bit halves: 24 shuffles). */
#define TSRT__TRANSPOSE8(r0, r1, r2, r3, r4, r5, r6, r7, o0, o1, o2, o3, o4, o5, o6, o7)             \
    do {                                                                                        \
        const tsrt__v8 t0_ = __builtin_shufflevector(r0, r1, 0, 8, 1, 9, 4, 12, 5, 13);          \
        const tsrt__v8 t1_ = __builtin_shufflevector(r0, r1, 2, 10, 3, 11, 6, 14, 7, 15);        \
        const tsrt__v8 t2_ = __builtin_shufflevector(r2, r3, 0, 8, 1, 9, 4, 12, 5, 13);          \
        const tsrt__v8 t3_ = __builtin_shufflevector(r2, r3, 2, 10, 3, 11, 6, 14, 7, 15);        \
        const tsrt__v8 t4_ = __builtin_shufflevector(r4, r5, 0, 8, 1, 9, 4, 12, 5, 13);          \
        const tsrt__v8 t5_ = __builtin_shufflevector(r4, r5, 2, 10, 3, 11, 6, 14, 7, 15);        \
        const tsrt__v8 t6_ = __builtin_shufflevector(r6, r7, 0, 8, 1, 9, 4, 12, 5, 13);          \
        const tsrt__v8 t7_ = __builtin_shufflevector(r6, r7, 2, 10, 3, 11, 6, 14, 7, 15);        \
        const tsrt__v8 u0_ = __builtin_shufflevector(t0_, t2_, 0, 1, 8, 9, 4, 5, 12, 13);        \
        const tsrt__v8 u1_ = __builtin_shufflevector(t0_, t2_, 2, 3, 10, 11, 6, 7, 14, 15);      \
        const tsrt__v8 u2_ = __builtin_shufflevector(t1_, t3_, 0, 1, 8, 9, 4, 5, 12, 13);        \
        const tsrt__v8 u3_ = __builtin_shufflevector(t1_, t3_, 2, 3, 10, 11, 6, 7, 14, 15);      \
        const tsrt__v8 u4_ = __builtin_shufflevector(t4_, t6_, 0, 1, 8, 9, 4, 5, 12, 13);        \
        const tsrt__v8 u5_ = __builtin_shufflevector(t4_, t6_, 2, 3, 10, 11, 6, 7, 14, 15);      \
        const tsrt__v8 u6_ = __builtin_shufflevector(t5_, t7_, 0, 1, 8, 9, 4, 5, 12, 13);        \
        const tsrt__v8 u7_ = __builtin_shufflevector(t5_, t7_, 2, 3, 10, 11, 6, 7, 14, 15);      \
        o0 = __builtin_shufflevector(u0_, u4_, 0, 1, 2, 3, 8, 9, 10, 11);                        \
        o1 = __builtin_shufflevector(u1_, u5_, 0, 1, 2, 3, 8, 9, 10, 11);                        \
        o2 = __builtin_shufflevector(u2_, u6_, 0, 1, 2, 3, 8, 9, 10, 11);                        \
        o3 = __builtin_shufflevector(u3_, u7_, 0, 1, 2, 3, 8, 9, 10, 11);                        \
        o4 = __builtin_shufflevector(u0_, u4_, 4, 5, 6, 7, 12, 13, 14, 15);                      \
        o5 = __builtin_shufflevector(u1_, u5_, 4, 5, 6, 7, 12, 13, 14, 15);                      \
        o6 = __builtin_shufflevector(u2_, u6_, 4, 5, 6, 7, 12, 13, 14, 15);                      \
        o7 = __builtin_shufflevector(u3_, u7_, 4, 5, 6, 7, 12, 13, 14, 15);                      \
    } while (0)

/* G g on a 3-vector: F(2x2) G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1];
 * F(4x4) G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6;
 * 1/24 -1/12 1/6; 0 0 1]. o: m + 2 outputs. */
#define TSRT__WG_G(m, g0, g1, g2, o)                                                         \
    do {                                                                                     \
        if ((m) == 2) {                                                                      \
            const tsrt__v8 s_ = (g0) + (g2);                                                 \
            o[0] = (g0), o[1] = 0.5f * (s_ + (g1)), o[2] = 0.5f * (s_ - (g1)), o[3] = (g2);   \
        } else {                                                                             \
            const tsrt__v8 s_ = (g0) + (g2), q_ = (1.0f / 24) * (g0) + (1.0f / 6) * (g2);    \
            o[0] = 0.25f * (g0), o[1] = (-1.0f / 6) * (s_ + (g1)), o[2] = (-1.0f / 6) * (s_ - (g1)); \
            o[3] = q_ + (1.0f / 12) * (g1), o[4] = q_ - (1.0f / 12) * (g1), o[5] = (g2);     \
        }                                                                                    \
    } while (0)

/* U of output channels [o0, o0+on) into u: U[xi][oo][c] at
 * u + xi*plane + oo*CG + c; rows on .. obp-1 zero. */
static void tsrt__wg_weights(const tsrt__wg *g, const float *wt, int64_t o0, int64_t on, int64_t obp, ptrdiff_t plane,
                             float *u)
{
    const int64_t CG = g->CG;
    const int m = g->m, a = g->a;
    for (int64_t oo = 0; oo < obp; oo++) {
        float *uo = u + oo * CG;
        if (oo >= on) {
            for (int i = 0; i < g->xi; i++) memset(uo + i * plane, 0, sizeof(float) * (size_t)CG);
            continue;
        }
        const float *w = wt + (o0 + oo) * CG * 9;
        for (int64_t c = 0; c < CG; c += 8) {
            const int n = (int)tsrt__min(8, CG - c);
            tsrt__v8 k[9]; /* k[t]: tap t of channels c .. c+7 */
            if (n == 8) {
                /* Rows of 9 taps, 8 channels: taps 0-7 by an 8x8 transpose
                 * of unaligned row loads, tap 8 element by element. (A
                 * gather through a stack array stalled on store-to-load
                 * forwarding: a third of a 14x14 conv's time.) */
                const float *wc = w + c * 9;
                tsrt__v8 r0, r1, r2, r3, r4, r5, r6, r7;
                TSRT__V8_LOAD(r0, wc), TSRT__V8_LOAD(r1, wc + 9), TSRT__V8_LOAD(r2, wc + 18);
                TSRT__V8_LOAD(r3, wc + 27), TSRT__V8_LOAD(r4, wc + 36), TSRT__V8_LOAD(r5, wc + 45);
                TSRT__V8_LOAD(r6, wc + 54), TSRT__V8_LOAD(r7, wc + 63);
                TSRT__TRANSPOSE8(r0, r1, r2, r3, r4, r5, r6, r7, k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7]);
                k[8] = (tsrt__v8){wc[8], wc[17], wc[26], wc[35], wc[44], wc[53], wc[62], wc[71]};
            } else {
                for (int t = 0; t < 9; t++) {
                    float tmp[8] = {0};
                    for (int l = 0; l < n; l++) tmp[l] = w[(c + l) * 9 + t];
                    TSRT__V8_LOAD(k[t], tmp);
                }
            }
            tsrt__v8 r[6][3], z[6]; /* G g (rows), then (G g) G^T row by row */
            for (int t = 0; t < 3; t++) {
                tsrt__v8 col[6];
                TSRT__WG_G(m, k[t], k[3 + t], k[6 + t], col);
                for (int i = 0; i < a; i++) r[i][t] = col[i];
            }
            for (int i = 0; i < a; i++) {
                TSRT__WG_G(m, r[i][0], r[i][1], r[i][2], z);
                for (int j = 0; j < a; j++) {
                    float *d = uo + (i * a + j) * plane + c;
                    if (n == 8) {
                        TSRT__V8_STORE(d, z[j]);
                    } else {
                        float tmp[8];
                        TSRT__V8_STORE(tmp, z[j]);
                        memcpy(d, tmp, sizeof(float) * (size_t)n);
                    }
                }
            }
        }
    }
}

/* F(4x4)'s A^T on a 6-vector: [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0;
 * 0 1 -1 8 -8 1]. */
#define TSRT__WG4_AT(m0, m1, m2, m3, m4, m5, y0, y1, y2, y3)                                \
    do {                                                                                    \
        const tsrt__v8 s1_ = (m1) + (m2), d1_ = (m1) - (m2), s2_ = (m3) + (m4), d2_ = (m3) - (m4); \
        y0 = (m0) + s1_ + s2_;                                                              \
        y1 = d1_ + 2.0f * d2_;                                                              \
        y2 = s1_ + 4.0f * s2_;                                                              \
        y3 = d1_ + 8.0f * d2_ + (m5);                                                       \
    } while (0)

/* The output transform of the nt tiles from t0 for output channels
 * [o0, o0+on) of the group whose output plane 0 of image 0 is y (channel
 * stride OH*OW, image stride y_bs) and whose first channel is ch0, from
 * the products M[xi][oo][tile] at m + xi*ms + oo*mo + tile - t0; then the
 * epilogue on the runs of positions it finished. F(2x2)'s A^T =
 * [1 1 1 0; 0 1 -1 -1]. */
static void tsrt__wg_output(const tsrt__wg *g, int64_t t0, int64_t nt, const float *m, ptrdiff_t ms, ptrdiff_t mo,
                            int64_t o0, int64_t on, float *y, int64_t ch0)
{
    const tsrt_conv_args *v = g->v;
    const int64_t OH = v->oh, OW = v->ow, HW = OH * OW;
    const int tm = g->m, nh = (int)tsrt__cdiv(nt, 8);
    tsrt__wg_seg sgs[TSRT__WG_GROUPS][9];
    int nss[TSRT__WG_GROUPS];
    for (int hh = 0; hh < nh; hh++) nss[hh] = tsrt__wg_segs(g, t0 + 8 * hh, tsrt__min(g->NT, t0 + nt), sgs[hh]);
    for (int64_t oo = 0; oo < on; oo++) {
        float *yo = y + (o0 + oo) * HW;
        for (int64_t h = 0; h < 8 * nh; h += 8) {
            const tsrt__wg_seg *sg = sgs[h / 8];
            const int ns = nss[h / 8];
            if (!ns) break;
            /* z[a][.]: output row m*ty + a, columns m*tx .. m*tx + 8m - 1 of
             * the 8 lanes (tile by tile). */
            tsrt__v8 z[4][4];
            if (tm == 2) {
                tsrt__v8 q[16];
                for (int i = 0; i < 16; i++) TSRT__V8_LOAD(q[i], m + i * ms + oo * mo + h);
                tsrt__v8 s0[4], s1[4];
                for (int j = 0; j < 4; j++)
                    s0[j] = q[j] + q[4 + j] + q[8 + j], s1[j] = q[4 + j] - q[8 + j] - q[12 + j];
                const tsrt__v8 y00 = s0[0] + s0[1] + s0[2], y01 = s0[1] - s0[2] - s0[3];
                const tsrt__v8 y10 = s1[0] + s1[1] + s1[2], y11 = s1[1] - s1[2] - s1[3];
                z[0][0] = __builtin_shufflevector(y00, y01, 0, 8, 1, 9, 2, 10, 3, 11);
                z[0][1] = __builtin_shufflevector(y00, y01, 4, 12, 5, 13, 6, 14, 7, 15);
                z[1][0] = __builtin_shufflevector(y10, y11, 0, 8, 1, 9, 2, 10, 3, 11);
                z[1][1] = __builtin_shufflevector(y10, y11, 4, 12, 5, 13, 6, 14, 7, 15);
            } else {
                tsrt__v8 s[4][6]; /* A^T along the rows of M, per column j */
                for (int j = 0; j < 6; j++) {
                    tsrt__v8 q0, q1, q2, q3, q4, q5;
                    const float *mj = m + j * ms + oo * mo + h;
                    const ptrdiff_t st = 6 * ms;
                    TSRT__V8_LOAD(q0, mj), TSRT__V8_LOAD(q1, mj + st), TSRT__V8_LOAD(q2, mj + 2 * st);
                    TSRT__V8_LOAD(q3, mj + 3 * st), TSRT__V8_LOAD(q4, mj + 4 * st), TSRT__V8_LOAD(q5, mj + 5 * st);
                    TSRT__WG4_AT(q0, q1, q2, q3, q4, q5, s[0][j], s[1][j], s[2][j], s[3][j]);
                }
                for (int a = 0; a < 4; a++) {
                    tsrt__v8 y0, y1, y2, y3; /* columns 4tx + 0..3, lane = tile */
                    TSRT__WG4_AT(s[a][0], s[a][1], s[a][2], s[a][3], s[a][4], s[a][5], y0, y1, y2, y3);
                    /* Interleave: tile by tile, 4 columns each. */
                    const tsrt__v8 t0 = __builtin_shufflevector(y0, y1, 0, 8, 1, 9, 4, 12, 5, 13);
                    const tsrt__v8 t1 = __builtin_shufflevector(y0, y1, 2, 10, 3, 11, 6, 14, 7, 15);
                    const tsrt__v8 t2 = __builtin_shufflevector(y2, y3, 0, 8, 1, 9, 4, 12, 5, 13);
                    const tsrt__v8 t3 = __builtin_shufflevector(y2, y3, 2, 10, 3, 11, 6, 14, 7, 15);
                    const tsrt__v8 u0 = __builtin_shufflevector(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13);
                    const tsrt__v8 u1 = __builtin_shufflevector(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
                    const tsrt__v8 u2 = __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13);
                    const tsrt__v8 u3 = __builtin_shufflevector(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
                    z[a][0] = __builtin_shufflevector(u0, u1, 0, 1, 2, 3, 8, 9, 10, 11);
                    z[a][1] = __builtin_shufflevector(u2, u3, 0, 1, 2, 3, 8, 9, 10, 11);
                    z[a][2] = __builtin_shufflevector(u0, u1, 4, 5, 6, 7, 12, 13, 14, 15);
                    z[a][3] = __builtin_shufflevector(u2, u3, 4, 5, 6, 7, 12, 13, 14, 15);
                }
            }
            for (int k = 0; k < ns; k++)
                for (int a = 0; a < tm; a++) {
                    const int64_t oy = tm * sg[k].ty + a;
                    if (oy >= OH) break;
                    const int64_t x0 = tm * (sg[k].tx0 + sg[k].l0), x1 = tsrt__min(OW, tm * (sg[k].tx0 + sg[k].l1));
                    float *yr = yo + sg[k].img * v->y_bs + oy * OW + x0;
                    if (x1 - x0 == 8 * tm) { /* 8 whole tiles inside the row */
                        for (int q = 0; q < tm; q++) {
                            if (v->beta) {
                                tsrt__v8 o;
                                TSRT__V8_LOAD(o, yr + 8 * q);
                                TSRT__V8_STORE(yr + 8 * q, z[a][q] + o);
                            } else {
                                TSRT__V8_STORE(yr + 8 * q, z[a][q]);
                            }
                        }
                        continue;
                    }
#if TSRT_ISA == TSRT_ISA_AVX512
                    /* columns [tm*l0, tm*l0 + x1 - x0) of the row, each
                     * vector by a masked store (through a stack copy and
                     * a memcpy, on rows of 6 tiles or fewer where no
                     * segment is 8 whole tiles, the memcpy calls were a
                     * tenth of a Winograd conv, D154) */
                    const int64_t c0 = tm * sg[k].l0, c1 = c0 + x1 - x0;
                    for (int q = 0; q < tm; q += 2) { /* 16 columns at a time */
                        const int64_t lo = tsrt__max(c0 - 8 * q, 0), hi = tsrt__min(c1 - 8 * q, 16);
                        if (lo >= hi) continue;
                        const __mmask16 mk = (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
                        float *yq = yr + 8 * q - c0; /* lane l at column 8q + l of the row */
                        __m512 zq = (__m512)__builtin_shufflevector(z[a][q], z[a][q + 1], 0, 1, 2, 3, 4, 5, 6, 7, 8,
                                                                    9, 10, 11, 12, 13, 14, 15);
                        if (v->beta) zq = _mm512_add_ps(zq, _mm512_maskz_loadu_ps(mk, yq));
                        _mm512_mask_storeu_ps(yq, mk, zq);
                    }
#else
                    float zz[32];
                    for (int q = 0; q < tm; q++) TSRT__V8_STORE(zz + 8 * q, z[a][q]);
                    const float *zr = zz + tm * sg[k].l0;
                    if (v->beta)
                        for (int64_t xx = 0; xx < x1 - x0; xx++) yr[xx] += zr[xx];
                    else
                        for (int64_t xx = 0; xx < x1 - x0; xx++) yr[xx] = zr[xx];
#endif
                }
        }
    }
    if (!v->epi && !v->te) return;
    /* The panel's tiles cover, per tile row, output rows m*ty .. m*ty+m-1
     * and columns [m*tx0, m*tx1): runs of positions of one image, merged
     * when contiguous. */
    const int64_t t1 = tsrt__min(g->NT, t0 + nt);
    int64_t ri = -1, r0 = -1, r1 = -1; /* the pending run, in image ri */
#define TSRT__WG_RUN()                                                                                           \
    tsrt__conv_epi(v, y + ri * v->y_bs + o0 * HW + r0, HW, ri * v->o + ch0 + o0, r0, on, r1 - r0)
    for (int64_t t = t0; t < t1;) {
        const int64_t img = t / g->T, ty = t % g->T / g->TW, tx = t % g->TW;
        const int64_t tx1 = tsrt__min(g->TW, tx + (t1 - t));
        for (int64_t oy = tm * ty; oy < tsrt__min(OH, tm * ty + tm); oy++) {
            const int64_t a = oy * OW + tm * tx, b = oy * OW + tsrt__min(OW, tm * tx1);
            if (a == r1 && img == ri)
                r1 = b;
            else {
                if (r0 >= 0) TSRT__WG_RUN();
                ri = img, r0 = a, r1 = b;
            }
        }
        t += tx1 - tx;
    }
    if (r0 >= 0) TSRT__WG_RUN();
#undef TSRT__WG_RUN
}

static size_t tsrt__wg_ws_bytes(const tsrt_conv_args *v, int m)
{
    tsrt__wg g;
    tsrt__wg_geom(v, m, &g);
    int64_t xp, u, vv, mm;
    tsrt__wg_ws(&g, &xp, &u, &vv, &mm);
    return (size_t)(xp + u + vv + mm) * sizeof(float) + 5 * TSRT_ALIGN;
}

/* ==== weights transformed once (D38) ========================================== *
 *
 * Constant weights (a model's) can be transformed once per program instead
 * of once per call, which also stops every thread of a call from
 * transforming the output channels it shares with the others. Layout, per
 * group: U[xi][OGp][CG], OGp = OG rounded up to MR (rows past OG zero), so
 * that a block of output channels [o0, o0+obp) of every xi plane is rows
 * o0.. of the plane, read in place as the per-call U is. */
static int64_t tsrt__wg_ogp(const tsrt__wg *g) { return tsrt__rup(g->OG, TSRT_MR); }

/* Which F(m x m) tsrt_conv will use for this shape when given transformed
 * weights (0: none). Without the per-call filter transform Winograd also
 * pays on 7x7 maps: F(2x2) there is 16 tiles of 4 positions for 49. */
TSRT_FN int tsrt_conv_wg_pre(const tsrt_conv_args *args)
{
#ifdef TSRT_EXACT
    /* the program asked for direct summation's accuracy (ts_session_opts
     * .exact): Winograd's transforms lose about a decimal digit */
    (void)args;
    return 0;
#else
    const tsrt_conv_args v = tsrt__conv_norm(args);
    if (!tsrt__conv_wg_applies(&v) || v.c / v.groups < 16 || v.o / v.groups < 16) return 0;
    if (v.oh >= 24 && v.ow >= 24) return 4;
    if (v.oh * v.ow >= TSRT__WG_PRE_MIN) return 2;
    return 0;
#endif
}

/* Bytes of the transformed weights for F(m x m), every group. */
TSRT_FN size_t tsrt_conv_wg_size(const tsrt_conv_args *args, int m)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    tsrt__wg g;
    tsrt__wg_geom(&v, m, &g);
    return (size_t)(v.groups * g.xi * tsrt__wg_ogp(&g) * g.CG) * sizeof(float);
}

/* The transformed weights of output channels [o0, o1) (of all groups)
 * into dst (tsrt_conv_wg_size bytes; calls on disjoint ranges covering
 * [0, O) may run on different threads); args->wt is read. */
TSRT_FN void tsrt_conv_wg_pack(const tsrt_conv_args *args, int m, int64_t o0, int64_t o1, float *dst)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    tsrt__wg g;
    tsrt__wg_geom(&v, m, &g);
    const int64_t OGp = tsrt__wg_ogp(&g), CG = g.CG;
    for (int64_t gr = o0 / g.OG; gr < v.groups && gr * g.OG < o1; gr++) {
        const int64_t lo = tsrt__max(o0 - gr * g.OG, 0), hi = tsrt__min(o1 - gr * g.OG, g.OG);
        if (lo >= hi) continue;
        /* the share ending the group also zeroes its padding rows */
        const int64_t obp = hi == g.OG ? OGp - lo : hi - lo;
        tsrt__wg_weights(&g, v.wt + gr * g.OG * CG * 9, lo, hi - lo, obp, OGp * CG,
                         dst + gr * g.xi * OGp * CG + lo * CG);
    }
}

/* Output channel o's transformed weights (in u, from tsrt_conv_wg_pack)
 * times s: a per-channel scale folded in after the transform (D38), the
 * same up to rounding as transforming the scaled weights. */
TSRT_FN void tsrt_conv_wg_scale(const tsrt_conv_args *args, int m, int64_t o, float s, float *u)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    tsrt__wg g;
    tsrt__wg_geom(&v, m, &g);
    const int64_t OGp = tsrt__wg_ogp(&g), gr = o / g.OG;
    float *r = u + (gr * g.xi * OGp + o % g.OG) * g.CG;
    for (int xi = 0; xi < g.xi; xi++, r += OGp * g.CG)
        for (int64_t c = 0; c < g.CG; c++) r[c] *= s;
}

/* Copies image img's phase rows that the tiles [tA, tB] read into its
 * slot of the ring, unless it is there already (*have: the last image
 * copied; images come in order). */
static void tsrt__wg_copy(tsrt__wg *g, const float *x, int64_t img, int64_t tA, int64_t tB, int64_t *have)
{
    if (img <= *have) return;
    const int64_t lo = tsrt__max(tA, img * g->T) - img * g->T, hi = tsrt__min(tB, img * g->T + g->T - 1) - img * g->T;
    float *buf = g->xp.buf;
    g->xp.buf += img % g->slots * g->slot;
    tsrt__phx_copy(&g->xp, x + img * g->v->x_bs, g->m * (lo / g->TW),
                   tsrt__min(g->xp.Hq, g->m * (hi / g->TW) + g->m + 2));
    g->xp.buf = buf;
    *have = img;
}

/* The copies of every image panel p's tiles span. */
static void tsrt__wg_copy_panel(tsrt__wg *g, const float *x, int64_t p, int64_t tA, int64_t tB, int64_t *have)
{
    const int64_t t1 = tsrt__min(g->NT, (p + 1) * TSRT_NR) - 1;
    for (int64_t im = p * TSRT_NR / g->T; im <= t1 / g->T; im++) tsrt__wg_copy(g, x, im, tA, tB, have);
}

static void tsrt__conv_wg(const tsrt_conv_args *v, int m, int ith, int nth, void *ws)
{
    tsrt__wg g;
    tsrt__wg_geom(v, m, &g);
    int64_t nxp, nu, nv, nm;
    tsrt__wg_ws(&g, &nxp, &nu, &nv, &nm);
    float *xpb = tsrt__align(ws), *ub = tsrt__align(xpb + nxp), *vb = tsrt__align(ub + nu), *mb = tsrt__align(vb + nv);
    g.xp.buf = xpb + 32;
    /* Threads split output channels (MR units) x panels, as a GEMM of
     * OG x (NP*NR) x xi*CG whose A and B each cost a transform. The tiles
     * of the batch are one sequence, a panel running on from one image's
     * last tiles into the next image's first: a 24x24 map has 36 F(4x4)
     * tiles, per image a panel of 32 and one of 4, which cost as much as
     * 16 in the kernel for 16 columns, and a 12x12 map 9 tiles in a panel
     * of 32 (D141). */
    const int64_t CG = g.CG, XI = g.xi;
    const int pre = v->wu && v->wu_m == m;
    const int64_t OGp = tsrt__wg_ogp(&g);
    const tsrt__share s = tsrt__split(v->groups, g.OG, g.NT, XI * CG, pre ? 1 : 8, 8, ith, nth);
    const int64_t Uu = tsrt__cdiv(g.OG, TSRT_MR), p0 = s.c0, p1 = tsrt__min(s.c1, g.NP);
    if (p0 >= p1) return;
    const int64_t KB = tsrt__min(TSRT_KC, tsrt__rup(tsrt__cdiv(CG, tsrt__cdiv(CG, TSRT_KC)), 8));
    float bt[2 * TSRT_KC] __attribute__((aligned(TSRT_ALIGN)));
    const int64_t tA = p0 * TSRT_NR, tB = tsrt__min(g.NT, p1 * TSRT_NR) - 1;
    /* panels in chunks of about an image's tiles: where there are several
     * blocks of output channels, V of a chunk is made once and re-read per
     * block, as V of an image was */
    const int64_t CP = tsrt__cdiv(g.T, TSRT_NR);
    for (int64_t gr = s.r0 / Uu; gr < v->groups && gr * Uu < s.r1; gr++) {
        const int64_t o_lo = (tsrt__max(s.r0, gr * Uu) - gr * Uu) * TSRT_MR;
        const int64_t o_hi = tsrt__min(g.OG, (tsrt__min(s.r1, (gr + 1) * Uu) - gr * Uu) * TSRT_MR);
        const float *x = v->x + gr * CG * v->h * v->w, *wt = v->wt + gr * g.OG * CG * 9;
        float *y = v->y + gr * g.OG * v->oh * v->ow;
        const int64_t ogt = o_hi - o_lo, nob = tsrt__cdiv(ogt, g.obcap);
        const int64_t ob = tsrt__rup(tsrt__cdiv(ogt, nob), TSRT_MR);
        const int vall = nob > 1;
        int64_t have = -1; /* the last image copied */
        for (int64_t pc = p0; pc < p1; pc += CP) {
            const int64_t pe = tsrt__min(p1, pc + CP);
            /* One cache line between the xi planes of V: a power-of-two
             * distance would put the stores of one channel in one L1 set. */
            const ptrdiff_t xs = (vall ? pe - pc : 1) * CG * TSRT_NR + 16;
            if (vall)
                for (int64_t p = pc; p < pe; p++) {
                    tsrt__wg_copy_panel(&g, x, p, tA, tB, &have);
                    tsrt__wg_input(&g, p * TSRT_NR, TSRT_NR, vb + (p - pc) * CG * TSRT_NR, xs, TSRT_NR);
                }
            for (int64_t o0 = o_lo; o0 < o_hi; o0 += ob) {
                const int64_t on = tsrt__min(ob, o_hi - o0), obp = tsrt__rup(on, TSRT_MR);
                const float *uk = ub;
                ptrdiff_t ups = obp * CG; /* floats from one xi plane of U to the next */
                if (pre)
                    uk = v->wu + (gr * XI * OGp + o0) * CG, ups = OGp * CG;
                else
                    tsrt__wg_weights(&g, wt, o0, on, obp, ups, ub);
                for (int64_t p = pc; p < pe; p++) {
                    const float *vp = vb + (vall ? (p - pc) * CG * TSRT_NR : 0);
                    const int64_t nt = tsrt__min(TSRT_NR, g.NT - p * TSRT_NR);
                    if (!vall) {
                        tsrt__wg_copy_panel(&g, x, p, tA, tB, &have);
                        tsrt__wg_input(&g, p * TSRT_NR, TSRT_NR, vb, xs, TSRT_NR);
                    }
                    /* Tiles in this panel: a short last panel takes the
                     * 6x8 kernel, the 16-column one or dot products
                     * (tsrt__ukr_ua's tails). */
                    for (int xi = 0; xi < XI; xi++)
                        for (int64_t c0 = 0; c0 < CG; c0 += KB) {
                            const int64_t kc = tsrt__min(KB, CG - c0);
                            const float *vx = vp + xi * xs + c0 * TSRT_NR;
                            const int64_t bc0 = tsrt__ua_col0(nt);
                            if (bc0 >= 0) tsrt__b_cols(kc, vx + bc0, nt - bc0, bt);
                            for (int64_t ir = 0; ir < obp; ir += TSRT_MR) {
                                const float *ua = uk + xi * ups + ir * CG + c0;
                                /* The next call's 14 rows of U, into L2 (D62):
                                 * short runs 1 KiB apart (CG = 256) that the
                                 * hardware prefetcher barely starts on, from L3
                                 * or memory for the first panel (the prepared
                                 * weights are cold) and evicted to L2 for the
                                 * next. */
                                const float *un = ir + TSRT_MR < obp ? ua + TSRT_MR * CG
                                                  : xi + 1 < XI ? uk + (xi + 1) * ups + c0 : NULL;
                                if (un)
                                    for (int64_t i = 0; i < TSRT_MR; i++)
                                        for (int64_t q = 0; q < kc; q += 16) __builtin_prefetch(un + i * CG + q, 0, 2);
                                float *mo = mb + (xi * obp + ir) * TSRT_NR;
                                if (nt == TSRT_NR)
                                    tsrt__ukr_full_ua(kc, ua, CG, vx, mo, TSRT_NR, c0 > 0, NULL);
                                else
                                    tsrt__ukr_ua(kc, ua, CG, vx, mo, TSRT_NR, 1, c0 > 0, nt, bt, NULL);
                            }
                        }
                    tsrt__wg_output(&g, p * TSRT_NR, TSRT_NR, mb, obp * TSRT_NR, TSRT_NR, o0, on, y, gr * g.OG);
                }
            }
        }
    }
}

#endif /* TSRT_CONV_WG_H */
