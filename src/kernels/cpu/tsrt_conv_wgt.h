/* tsrt_conv_wgt.h — Winograd F(4x4, 3x3) and F(2x2, 3x3) with the tiles
 * as the rows of GEMM_T's tile (WINOGRAD4_T, WINOGRAD_T; AVX-512 only).
 *
 * WINOGRAD4 (tsrt_conv_wg.h) computes each of its 36 products as
 * M[xi] = U[xi] V[xi] with output channels as the micro-kernel's 14 rows
 * and tiles as its 32 columns. On a small map or a few output channels
 * most of those tiles are empty: a 24x24 map has 36 tiles, a panel of 32
 * and one of 4 that the 16-column kernel computes at the cost of 16; 32
 * output channels fill three row tiles of 14 (42 rows). Here the roles
 * swap, M[xi]^T = V[xi]^T U[xi]^T, as GEMM_T swaps them for the direct
 * conv (tsrt_conv_pt.h, whose tile kernel this path calls); F(2x2)'s 16
 * products alike:
 *   - the rows are tiles, in row tiles of 12 to 14 (tsrt__pt_p0: 36
 *     tiles are three of 12), the columns 32 output channels (every
 *     count divisible by 32 fills its panels);
 *   - V[xi] is [c][tile] (tsrt__wg_input with the chunk's tiles as one
 *     run), so a k step's 14 broadcasts are 14 consecutive floats, the
 *     tile kernel's consecutive case;
 *   - U^T is packed once per program (tsrt_conv_pre_pack, form
 *     TSRT_CONV_PRE_WGT4 or WGT2) into panels of 32 output channels per
 *     xi, C x 32 floats each, as GEMM_T's W^T;
 *   - the tile kernel stores M[xi][o][tile] (its transposed store), the
 *     layout tsrt__wg_output reads.
 * Tiles are numbered over the batch (D141) and taken in chunks of up to 4
 * row tiles whose V stays in L2; per chunk: the input transform, then per
 * panel of 32 output channels the 36 products and the output transform
 * with the epilogue. One group only. */
#ifndef TSRT_CONV_WGT_H
#define TSRT_CONV_WGT_H

#ifndef TSRT_CONV_WG_H
#include "tsrt_conv_wg.h"
#endif
#ifndef TSRT_CONV_PT_H
#include "tsrt_conv_pt.h"
#endif

/* V of a chunk, at most (floats: 512 KiB), and the chunk's row tiles. */
#ifndef TSRT__WGT_V_FLOATS
#define TSRT__WGT_V_FLOATS 131072
#endif
enum { TSRT__WGT_RC = 4 };

/* F(m x m) of a prepared form (TSRT_CONV_PRE_WGT2 or WGT4), and its
 * number of products. */
static inline int tsrt__wgt_m(int form) { return form == TSRT_CONV_PRE_WGT2 ? 2 : 4; }
static inline int64_t tsrt__wgt_xi(int m) { return (m + 2) * (m + 2); }

/* A conv this path computes: Winograd's shapes, one group, AVX-512. */
static inline int tsrt__wgt_applies(const tsrt_conv_args *v)
{
    return TSRT_HAVE_WGT && v->groups == 1 && tsrt__conv_wg_applies(v);
}

/* Bytes of the packed U^T of form f: xi x rup(O, 32) x C. */
static inline size_t tsrt__wgt_size(const tsrt_conv_args *v, int f)
{
    return (size_t)(tsrt__wgt_xi(tsrt__wgt_m(f)) * tsrt__rup(v->o, TSRT__PT_NR) * v->c) * sizeof(float);
}

/* F(m x m)'s G on (g0, g1, g2) into o[0 .. m+1], in TSRT__WG_G's order
 * of operations. */
static inline void tsrt__wgt_g(int m, float g0, float g1, float g2, float *o)
{
    const float s = g0 + g2;
    if (m == 2) {
        o[0] = g0, o[1] = 0.5f * (s + g1), o[2] = 0.5f * (s - g1), o[3] = g2;
        return;
    }
    const float q = (1.0f / 24) * g0 + (1.0f / 6) * g2;
    o[0] = 0.25f * g0, o[1] = (-1.0f / 6) * (s + g1), o[2] = (-1.0f / 6) * (s - g1);
    o[3] = q + (1.0f / 12) * g1, o[4] = q - (1.0f / 12) * g1, o[5] = g2;
}

/* U^T of form f of output channels [o0, o1) into dst (tsrt__wgt_size
 * bytes): dst[((xi*NQ + q)*C + c)*32 + j] = (G g G^T)[xi] of output
 * channel q*32 + j, input channel c. The share that ends at O also
 * zeroes the last panel's padding columns. Once per program: scalar. */
static void tsrt__wgt_pack(const tsrt_conv_args *v, int f, int64_t o0, int64_t o1, float *dst)
{
    const int m = tsrt__wgt_m(f), a = m + 2;
    const int64_t C = v->c, NQ = tsrt__cdiv(v->o, TSRT__PT_NR), XI = tsrt__wgt_xi(m);
    for (int64_t o = o0; o < (o1 == v->o ? NQ * TSRT__PT_NR : o1); o++)
        for (int64_t c = 0; c < C; c++) {
            float u[36] = {0};
            if (o < v->o) {
                const float *w = v->wt + (o * C + c) * 9;
                float r[6][3], col[6] = {0};
                for (int t = 0; t < 3; t++) {
                    tsrt__wgt_g(m, w[t], w[3 + t], w[6 + t], col);
                    for (int i = 0; i < a; i++) r[i][t] = col[i];
                }
                for (int i = 0; i < a; i++) tsrt__wgt_g(m, r[i][0], r[i][1], r[i][2], u + a * i);
            }
            float *d = dst + ((o / TSRT__PT_NR) * C + c) * TSRT__PT_NR + o % TSRT__PT_NR;
            for (int64_t xi = 0; xi < XI; xi++) d[xi * NQ * C * TSRT__PT_NR] = u[xi];
        }
}

/* Output channel o's U^T of form f (from tsrt__wgt_pack) times s. */
static void tsrt__wgt_scale(const tsrt_conv_args *v, int f, int64_t o, float s, float *u)
{
    const int64_t C = v->c, NQ = tsrt__cdiv(v->o, TSRT__PT_NR), XI = tsrt__wgt_xi(tsrt__wgt_m(f));
    float *d = u + (o / TSRT__PT_NR) * C * TSRT__PT_NR + o % TSRT__PT_NR;
    for (int64_t xi = 0; xi < XI; xi++)
        for (int64_t c = 0; c < C; c++) d[(xi * NQ * C + c) * TSRT__PT_NR] *= s;
}

/* Row tiles per chunk: V of RC row tiles (up to 14 tiles each) within
 * TSRT__WGT_V_FLOATS, at least one, at most TSRT__WGT_RC (the transforms
 * take up to TSRT__WG_GROUPS lane groups). */
static inline int64_t tsrt__wgt_rc(const tsrt_conv_args *v, int m)
{
    const int64_t rc = TSRT__WGT_V_FLOATS / (tsrt__wgt_xi(m) * tsrt__max(v->c, 1) * TSRT__PT_MR);
    return tsrt__max(1, tsrt__min(TSRT__WGT_RC, rc));
}

/* The workspace's parts (floats): the tap offsets (C of them, as
 * ptrdiff_t), the ring of image copies, V (36 planes of xs), M (36 of
 * ms); tcs: V's and M's floats per channel (the chunk's tiles, rounded
 * up to 8). */
typedef struct tsrt__wgt_ws {
    int64_t off, ring, vv, mm, tcs;
    ptrdiff_t xs, ms;
} tsrt__wgt_ws;

static void tsrt__wgt_layout(const tsrt_conv_args *v, const tsrt__wg *g, tsrt__wgt_ws *l)
{
    const int64_t rc = tsrt__wgt_rc(v, g->m);
    l->tcs = tsrt__rup(rc * TSRT__PT_MR, 8);
    l->off = tsrt__cdiv(v->c * (int64_t)sizeof(ptrdiff_t), sizeof(float));
    l->ring = tsrt__max(1, tsrt__wg_slots(g, rc * TSRT__PT_MR)) * g->slot;
    /* a cache line between planes (a power-of-two distance puts one
     * channel's stores in one L1 set), 32 floats of slack after the last:
     * the tile kernel reads up to 14 rows from a tile's first */
    l->xs = v->c * l->tcs + 16, l->ms = TSRT__PT_NR * l->tcs + 16;
    l->vv = g->xi * l->xs + 32, l->mm = g->xi * l->ms + 32;
}

static size_t tsrt__wgt_ws_bytes(const tsrt_conv_args *v, int m)
{
    if (!tsrt__wgt_applies(v)) return 0;
    tsrt__wg g;
    tsrt__wg_geom(v, m, &g);
    tsrt__wgt_ws l;
    tsrt__wgt_layout(v, &g, &l);
    return (size_t)(l.off + l.ring + l.vv + l.mm) * sizeof(float) + 5 * TSRT_ALIGN;
}

#if TSRT_HAVE_WGT
/* The conv in F(m x m), v->wu the packed U^T. Threads split the row tiles of the
 * batch's tiles (tsrt__pt_p0 over cdiv(NT, 14) of them), each running the
 * transforms of its own; where that is uneven (3 row tiles on 2 threads,
 * a 24x24 map's 36 tiles) and there are enough panels, the panels
 * instead, every thread transforming the input of all tiles. */
static void tsrt__conv_wgt(const tsrt_conv_args *v, int m, int ith, int nth, void *ws)
{
    tsrt__wg g;
    tsrt__wg_geom(v, m, &g);
    tsrt__wgt_ws l;
    tsrt__wgt_layout(v, &g, &l);
    const int64_t C = v->c, O = v->o, NQ = tsrt__cdiv(O, TSRT__PT_NR), NT = g.NT, XI = g.xi;
    const int64_t R = tsrt__cdiv(NT, TSRT__PT_MR), rc = tsrt__wgt_rc(v, m);
    int64_t r0 = 0, r1 = R, q0 = 0, q1 = NQ;
    if (R % nth == 0 || R >= 4 * nth || NQ < nth)
        r0 = R * ith / nth, r1 = R * (ith + 1) / nth;
    else
        q0 = NQ * ith / nth, q1 = NQ * (ith + 1) / nth;
    if (r0 >= r1 || q0 >= q1) return;
    ptrdiff_t *off = (ptrdiff_t *)(void *)tsrt__align(ws);
    float *ring = tsrt__align((float *)(void *)off + l.off), *V = tsrt__align(ring + l.ring);
    float *M = tsrt__align(V + l.vv);
    for (int64_t c = 0; c < C; c++) off[c] = c * l.tcs;
    g.xp.buf = ring + 32;
    g.slots = tsrt__max(1, tsrt__wg_slots(&g, rc * TSRT__PT_MR));
    const int64_t tA = tsrt__pt_p0(NT, R, r0), tB = tsrt__pt_p0(NT, R, r1) - 1;
    int64_t have = -1; /* the last image copied */
    for (int64_t cr = r0; cr < r1; cr += rc) {
        const int64_t cr1 = tsrt__min(r1, cr + rc), c0 = tsrt__pt_p0(NT, R, cr), nt = tsrt__pt_p0(NT, R, cr1) - c0;
        for (int64_t im = c0 / g.T; im <= (c0 + nt - 1) / g.T; im++) tsrt__wg_copy(&g, v->x, im, tA, tB, &have);
        tsrt__wg_input(&g, c0, nt, V, l.xs, l.tcs);
        /* the lanes past the chunk's tiles, which the output transform
         * reads in its last lane group and the tile kernel never writes:
         * zero, not whatever the workspace held (denormals, NaN) */
        for (int64_t xi = 0; xi < XI; xi++)
            for (int j = 0; j < TSRT__PT_NR; j++)
                for (int64_t t = nt; t < tsrt__rup(nt, 8); t++) M[xi * l.ms + j * l.tcs + t] = 0.0f;
        for (int64_t q = q0; q < q1; q++) {
            const int nr = (int)tsrt__min(TSRT__PT_NR, O - q * TSRT__PT_NR);
            for (int64_t xi = 0; xi < XI; xi++) {
                const float *b = v->wu + (xi * NQ + q) * C * TSRT__PT_NR;
                for (int64_t r = cr; r < cr1; r++) {
                    const int64_t p0 = tsrt__pt_p0(NT, R, r) - c0;
                    const int mr = (int)(tsrt__pt_p0(NT, R, r + 1) - c0 - p0);
                    const float *x = V + xi * l.xs + p0;
                    float *y = M + xi * l.ms + p0;
                    /* rows past mr read the next tiles' (or the slack)
                     * and are not stored */
                    if (mr == 13) tsrt__pt_tile_c13(C, x, off, b, y, l.tcs, mr, nr, 0, NULL, NULL, 0);
                    else if (mr == 12) tsrt__pt_tile_c12(C, x, off, b, y, l.tcs, mr, nr, 0, NULL, NULL, 0);
                    else tsrt__pt_tile_c14(C, x, off, b, y, l.tcs, mr, nr, 0, NULL, NULL, 0);
                }
            }
            tsrt__wg_output(&g, c0, nt, M, l.ms, l.tcs, q * TSRT__PT_NR, nr, v->y, 0);
        }
    }
}
#endif /* TSRT_HAVE_WGT */

#endif /* TSRT_CONV_WGT_H */
