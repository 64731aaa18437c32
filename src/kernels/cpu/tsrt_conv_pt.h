/* tsrt_conv_pt.h — GEMM_T: a convolution as an implicit GEMM with the
 * output positions as the rows of the micro-kernel's tile (AVX-512 only).
 *
 * The other GEMM paths compute Y[o][p] = sum_k W[o][k] X'[k][p] with
 * output channels as the tile's 14 rows and positions as its 32 columns.
 * On maps of 7x7 and 14x14 the positions (49, 196) leave the last 32-wide
 * column panel mostly empty (49 = 32 + 17: 77% of the multiply-adds
 * useful), and the weights, read once per column block, are the larger
 * operand. Here the roles swap, Y^T = X'^T W^T:
 *   - the tile is 14 positions x 32 output channels (28 zmm accumulators);
 *     X'[k][p] for k = (c, u, v) is read in place from the image (1x1,
 *     stride 1) or from its zero-padded stride-phase copy (tsrt__phx, the
 *     PHASED algorithm's, made once per image and thread), where every tap
 *     is a fixed offset off[k] from the position: the 14 broadcasts of a k
 *     step read x[off[k] + pos[i]], nothing is packed per call;
 *   - W^T is packed once per program (tsrt_conv_pre_pack, made from the
 *     model's constant weights like Winograd's transform, D38) into panels
 *     of 32 output channels, K x 32 floats each; every output channel count
 *     divisible by 32 (ResNet's, most of MobileNetV2's) fills every panel;
 *   - the whole K in one pass (a panel of K = 4608 is 576 KiB: it stays in
 *     L2 while the position tiles sweep past it), so each tile of Y is
 *     written once: transposed in registers (two 16x16 shuffle
 *     transposes), through the tile epilogue, with masked stores.
 * Measured on Zen 4 (docs/kernels.md, D41): ResNet-50's 1x1 convs on
 * 14x14 and 7x7 maps 1.2-1.6x faster than GEMM_1X1; with few input
 * channels the transposed store costs more than the layout saves, so
 * tsrt_conv_pre prepares the weights for this path only where its tiles
 * are fuller, or as full with many input channels (tsrt__pt_worth), and
 * leaves 3x3 stride-1 convs to Winograd on maps of 14x14 and more.
 * Without AVX-512 (or its emulation in the tests) the path does not
 * exist: tsrt_conv_pre never picks it and tsrt_conv refuses it. */
#ifndef TSRT_CONV_PT_H
#define TSRT_CONV_PT_H

#ifndef TSRT_CONV_ARGS_H
#include "tsrt_conv_args.h"
#endif
#ifndef TSRT_CONV_GEMM_H
#include "tsrt_conv_gemm.h"
#endif

/* GEMM_T exists on every ISA: AVX-512's 14 x 32 tiles reading X' in
 * place (here), or the plain GEMM's 6 x 16 micro-kernel on packed
 * position tiles (tsrt_conv_ptp.h, D184). The Winograd forms that run
 * on GEMM_T's tile kernels (tsrt_conv_wgt.h) are AVX-512 only. */
#define TSRT_HAVE_PT 1
#if TSRT_ISA == TSRT_ISA_AVX512
#define TSRT_HAVE_WGT 1
enum { TSRT__PT_MR = 14, TSRT__PT_NR = 32 };
#else
#define TSRT_HAVE_WGT 0
enum { TSRT__PT_MR = TSRT_MR, TSRT__PT_NR = TSRT_NR };
#endif

/* The GEMM's K: input channels x kernel taps. */
static inline int64_t tsrt__pt_k(const tsrt_conv_args *v)
{
    return v->c * v->kh * v->kw;
}

/* Whether a shape is worth the path, against the other GEMM paths (MR x
 * NR = 14 x 32 tiles of channels x positions): the fraction of each one's
 * tiles that holds outputs, channels x positions against positions x
 * channels, must be at least 10% higher here (5% where the alternative
 * is PHASED, D63), with at least TSRT_PT_KMIN inputs per output
 * (channels x taps) to spread a tile's fixed cost over (the transposed
 * store, ~0.25 cycle per output float, against 28 FMA cycles per input
 * of a tile). Measured on Zen 4 (D41,
 * bench/conv_resnet50.c with TE=1, GEMM_T's time over the other path's):
 * 9.4% fuller: 256 -> 64 and 256 -> 128 at 56x56 1.05-1.06, the 7x7/2
 * stem 1.01; 3-6% fuller: 0.99-1.01; 12-19% fuller: 0.86-0.91 (3x3
 * stride 2, 512 -> 128 at 28x28); 14x14 and 7x7 maps (16-31% fuller):
 * 0.51-0.91; same fill, 64 -> 256 at 56x56 (not taken): 1.12-1.29. */
/* The largest K whose next panel a panel's last tiles prefetch into L2
 * (tsrt__conv_pt, D71); 0 turns it off (for A/B runs). */
#ifndef TSRT_PT_PFN_KMAX
#define TSRT_PT_PFN_KMAX 1000000
#endif
/* How many k steps ahead a tile prefetches its rows of X' (D74); 0 turns
 * it off (for A/B runs). */
#ifndef TSRT_PT_XPF
#define TSRT_PT_XPF 16
#endif
/* Positions per call of the epilogue callback (32 channels x 256: 32 KiB,
 * in L1). */
#ifndef TSRT_PT_EPI_COLS
#define TSRT_PT_EPI_COLS 256
#endif
#ifndef TSRT_PT_KMIN
#define TSRT_PT_KMIN 96
#endif

static inline int64_t tsrt__pt_rows(int64_t P);

/* Whether this path's tiles hold at least `slack` percent more outputs
 * than the plain GEMM paths' (tile area per output, up to the common
 * factor O*P). Without AVX-512 both sides count 6-row tiles with a last
 * one of 4 (tsrt__pt_rows), and the tuner times GEMM_T only where this
 * holds with 5%: on larger maps it cannot win (48x48: 2-3x the plain
 * time) and timing it cost the compile (D184). */
static inline int tsrt__pt_fuller(const tsrt_conv_args *v, int slack)
{
    const int64_t P = v->oh * v->ow, O = v->o;
    const int64_t gemm = (TSRT_HAVE_WGT ? tsrt__rup(O, TSRT_MR) : tsrt__pt_rows(O)) * tsrt__rup(P, TSRT_NR);
    const int64_t pt = tsrt__rup(O, TSRT__PT_NR) * (TSRT_HAVE_WGT ? tsrt__rup(P, TSRT__PT_MR) : tsrt__pt_rows(P));
    return 100 * gemm >= (100 + slack) * pt;
}

static inline int tsrt__pt_worth(const tsrt_conv_args *v)
{
    /* Against PHASED (any conv but a stride-1 1x1) 5% fuller is enough:
     * that path also pays an im2col pack of every panel of B, which this
     * one does not (the 7x7/2 stem, 9.4% fuller: 2.16-2.34 -> 1.85-1.90
     * ms on an Intel core, D63; 1.01 on Zen 4, D41) */
    const int slack = tsrt__conv_is_1x1(v) ? 10 : 5;
    return tsrt__pt_k(v) >= TSRT_PT_KMIN && tsrt__pt_fuller(v, slack);
}

/* A conv this path computes: one group, no input dilation. */
static inline int tsrt__pt_applies(const tsrt_conv_args *v)
{
    return TSRT_HAVE_PT && v->groups == 1 && v->ldil_h == 1 && v->ldil_w == 1;
}

/* Bytes of the packed W^T: rup(O, 32) x K. */
static inline size_t tsrt__pt_size(const tsrt_conv_args *v)
{
    return (size_t)(tsrt__rup(v->o, TSRT__PT_NR) * tsrt__pt_k(v)) * sizeof(float);
}

/* W^T of output channels [o0, o1) into dst (tsrt__pt_size bytes):
 * dst[(q*K + k)*32 + j] = W[q*32 + j][k], k = (c*KH + u)*KW + v. The share
 * that ends at O also zeroes the last panel's padding columns. */
static void tsrt__pt_pack(const tsrt_conv_args *v, int64_t o0, int64_t o1, float *dst)
{
    const int64_t K = tsrt__pt_k(v), Op = tsrt__rup(v->o, TSRT__PT_NR);
    for (int64_t o = o0; o < (o1 == v->o ? Op : o1); o++) {
        float *d = dst + (o / TSRT__PT_NR) * K * TSRT__PT_NR + o % TSRT__PT_NR;
        if (o < v->o)
            for (int64_t k = 0; k < K; k++) d[k * TSRT__PT_NR] = v->wt[o * K + k];
        else
            for (int64_t k = 0; k < K; k++) d[k * TSRT__PT_NR] = 0.0f;
    }
}

/* Output channel o's packed weights times s (a folded batch norm's scale). */
static void tsrt__pt_scale(const tsrt_conv_args *v, int64_t o, float s, float *u)
{
    const int64_t K = tsrt__pt_k(v);
    float *d = u + (o / TSRT__PT_NR) * K * TSRT__PT_NR + o % TSRT__PT_NR;
    for (int64_t k = 0; k < K; k++) d[k * TSRT__PT_NR] *= s;
}

/* Tile t's first position out of nt tiles over P: equal tiles rather
 * than full ones and a remainder (the 7x7 maps' 49 positions as 12 + 12 +
 * 12 + 13 rows of FMAs, not 4 x 14 = 56, a seventh of them wasted: D70).
 * Heights stay within one of each other, at most 14; a tile of fewer
 * than 12 rows (P not much above a multiple of 14, or P < 12) runs the
 * 14-row kernel masked, as every last tile did before. */
static inline int64_t tsrt__pt_p0(int64_t P, int64_t nt, int64_t t)
{
    return P * t / nt;
}

/* Rows of FMAs the tiles of P positions run (a tile under 12 rows runs
 * the 14-row kernel; without AVX-512, tiles of 6 and a last one of 4 or
 * 6, tsrt__ptp_h). */
static inline int64_t tsrt__pt_rows(int64_t P)
{
#if !TSRT_HAVE_WGT
#ifdef TSRT_HAVE_UKRH
    const int64_t r = P % TSRT_MR;
    if (r && r <= 4) return P - r + 4;
#endif
    return tsrt__rup(P, TSRT_MR);
#else
    const int64_t nt = tsrt__cdiv(P, TSRT__PT_MR);
    int64_t rows = 0;
    for (int64_t t = 0; t < nt; t++) {
        const int64_t h = tsrt__pt_p0(P, nt, t + 1) - tsrt__pt_p0(P, nt, t);
        rows += h >= 12 ? h : TSRT__PT_MR;
    }
    return rows;
#endif
}

/* Images whose positions one run of tiles spans (D150), 1 for none: on a
 * small map the tiles of one image leave rows of the 14-row kernel empty
 * (a 3x3 map's 9 positions: 9 of 14 rows, and each packed weight then
 * serves 9 multiply-adds), while the batch's positions together fill
 * them (8 images: 72 positions, 6 tiles of 12). Up to TSRT_PT_FOLD
 * images, where that runs at least 10% fewer rows of FMAs. */
#ifndef TSRT_PT_FOLD
#define TSRT_PT_FOLD 8
#endif
/* Floats from one image's input to the next in a folded run: the phase
 * copies one after another, or the images read in place. */
static inline int64_t tsrt__pt_fold_stride(const tsrt_conv_args *v, const tsrt__phx *g)
{
    return g->copy ? tsrt__rup(tsrt__phx_floats(g), 16) : v->x_bs;
}

static inline int64_t tsrt__pt_fold(const tsrt_conv_args *v)
{
    const int64_t P = v->oh * v->ow, G = tsrt__min(v->n, TSRT_PT_FOLD);
    if (G < 2 || P >= 4 * TSRT__PT_MR || 10 * tsrt__pt_rows(G * P) > 9 * G * tsrt__pt_rows(P)) return 1;
    /* a row's offset into the run is an int (the tile kernels' pos) */
    tsrt__phx g;
    tsrt__phx_geom(v, &g);
    if ((double)G * (double)tsrt__pt_fold_stride(v, &g) > (double)(1 << 30)) return 1;
    return G;
}

/* Workspace of a folded run: off, then one phase copy per image. */
static inline size_t tsrt__pt_fold_ws(const tsrt_conv_args *v)
{
    const int64_t G = tsrt__pt_fold(v);
    if (G < 2) return 0;
    tsrt__phx g;
    tsrt__phx_geom(v, &g);
    size_t off_bytes, phx_bytes;
    tsrt__conv_gemm_ws(v, &off_bytes, &phx_bytes);
    const size_t copies = g.copy ? (size_t)(G * tsrt__pt_fold_stride(v, &g)) * sizeof(float) : 0;
    return off_bytes + copies + 2 * TSRT_ALIGN;
}

/* Whether GEMM_T's threads split a batch by whole images: in equal
 * shares, or at least four per thread (D147). */
static inline int tsrt__pt_by_images(const tsrt_conv_args *v, int nth)
{
    return v->n >= nth && (v->n % nth == 0 || v->n >= 4 * nth);
}

/* Thread ith's share of GEMM_T's images n[0..1), panels q[0..1) and
 * tiles t[0..1) (each set to the whole range by the caller): whole
 * images where tsrt__pt_by_images; else the tiles where the input (x_big)
 * outweighs the weights or there are fewer panels than threads and the
 * tiles may be split (tiles_ok); else the panels; else the images; else
 * the tiles (D60, D147). */
static inline void tsrt__pt_share(const tsrt_conv_args *v, int64_t np, int64_t nt, int x_big, int tiles_ok, int ith,
                                  int nth, int64_t *n, int64_t *q, int64_t *t)
{
    if (tsrt__pt_by_images(v, nth))
        n[0] = v->n * ith / nth, n[1] = v->n * (ith + 1) / nth;
    else if (tiles_ok && (x_big || np < nth) && nt >= nth)
        t[0] = nt * ith / nth, t[1] = nt * (ith + 1) / nth;
    else if (np >= nth)
        q[0] = np * ith / nth, q[1] = np * (ith + 1) / nth;
    else if (v->n >= nth)
        n[0] = v->n * ith / nth, n[1] = v->n * (ith + 1) / nth;
    else
        t[0] = nt * ith / nth, t[1] = nt * (ith + 1) / nth;
}

/* Without AVX-512: tsrt_conv_ptp.h. */
#if TSRT_ISA == TSRT_ISA_AVX512

#define TSRT__PT_FMA(i)                                                       \
    do {                                                                      \
        const __m512 x_ = _mm512_set1_ps(a[o##i]);                            \
        c[i][0] = _mm512_fmadd_ps(x_, b0, c[i][0]);                           \
        c[i][1] = _mm512_fmadd_ps(x_, b1, c[i][1]);                           \
    } while (0)

/* Y[j][i] (= y[j*P + i]) for the mr x nr corner of an R x 32 tile (R a
 * constant, 12 to 14, once inlined: the rows past R do no FMAs): X'
 * times the packed panel b over the whole K, where X'[k][i] =
 * x[off[k] + pos[i]] (the tile's 14 positions in the phase images,
 * tsrt__phx; rows past mr repeat row mr - 1, so nothing is read past the
 * image, and are not stored); beta adds Y's old values; then te (at the
 * tile's origin, tsrt__te_at), if given, on each channel's vector of
 * positions before it is stored, in tsrt__te_tile's order of operations. */
static inline __attribute__((always_inline)) void tsrt__pt_tile_s(int R, int64_t K, const float *restrict x,
                                                                   const ptrdiff_t *restrict off, const int *pos,
                                                                   int contig, const float *restrict b,
                                                                   float *restrict y, ptrdiff_t P, int mr, int nr,
                                                                   int beta, const tsrt_tepi *te, const char *pn,
                                                                   ptrdiff_t pns)
{
    __m512 c[16][2];
    for (int i = 0; i < 16; i++) c[i][0] = c[i][1] = _mm512_setzero_ps();
    /* contig (pos[i] = i): the offsets are the broadcasts' displacements;
     * else 14 registers, more than are free, and gcc reloads about ten of
     * them from the stack at every k */
    const int o0 = contig ? 0 : pos[0], o1 = contig ? 1 : pos[1], o2 = contig ? 2 : pos[2],
              o3 = contig ? 3 : pos[3], o4 = contig ? 4 : pos[4], o5 = contig ? 5 : pos[5],
              o6 = contig ? 6 : pos[6], o7 = contig ? 7 : pos[7], o8 = contig ? 8 : pos[8],
              o9 = contig ? 9 : pos[9], o10 = contig ? 10 : pos[10], o11 = contig ? 11 : pos[11],
              o12 = contig ? 12 : pos[12], o13 = contig ? 13 : pos[13];
    for (int64_t k = 0; k < K; k++) {
        const float *a = x + off[k];
        const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
        /* The panel's rows 16 ahead (2 KiB): each packed weight serves
         * only 14 positions, and the first tile of a panel reads it from
         * L3 or memory faster than the hardware prefetcher fetches it.
         * Cold weights, 1 thread: 512 -> 2048 at 7x7 1.52-1.55 -> 1.29-
         * 1.32 ms, 2048 -> 512 1.46-1.51 -> 1.29-1.34, 960 -> 160
         * 0.18-0.21 -> 0.17-0.18 (8 to 32 rows ahead alike). Past the
         * panel's end it reads the next panel or past the copy: a
         * prefetch never faults. */
        _mm_prefetch((const char *)(b + 16 * TSRT__PT_NR), _MM_HINT_T0);
        _mm_prefetch((const char *)(b + 16 * TSRT__PT_NR + 16), _MM_HINT_T0);
        /* X' 16 k steps ahead, the tile's first and last position (its
         * 14 floats span at most two lines): the rows of X' are P floats
         * apart, and past 2 KiB (28x28 maps and up) the core's stride
         * prefetcher does not follow them, so every k step waited on L2.
         * Intel core, 1 thread: 512 -> 128 at 28x28 0.79-0.80 -> 0.60 ms,
         * the 3x3 stride-2 convs 4-12% faster, ResNet-50's convs 53.5-55.0
         * -> 50.6-53.2 ms (2 threads 29.9-30.9 -> 27.7-28.4; D74) */
        if (TSRT_PT_XPF) {
            const float *ax = x + off[k + TSRT_PT_XPF < K ? k + TSRT_PT_XPF : K - 1];
            _mm_prefetch((const char *)(ax + o0), _MM_HINT_T0);
            _mm_prefetch((const char *)(ax + o13), _MM_HINT_T0);
        }
        if (pns) {
            _mm_prefetch(pn + k * pns, _MM_HINT_T1);
            if (pns > 64) _mm_prefetch(pn + k * pns + 64, _MM_HINT_T1);
        }
        TSRT__PT_FMA(0); TSRT__PT_FMA(1); TSRT__PT_FMA(2); TSRT__PT_FMA(3); TSRT__PT_FMA(4);
        TSRT__PT_FMA(5); TSRT__PT_FMA(6); TSRT__PT_FMA(7); TSRT__PT_FMA(8); TSRT__PT_FMA(9);
        TSRT__PT_FMA(10); TSRT__PT_FMA(11);
        if (R > 12) TSRT__PT_FMA(12);
        if (R > 13) TSRT__PT_FMA(13);
        b += TSRT__PT_NR;
    }
    const __mmask16 mask = (__mmask16)((1u << mr) - 1);
    /* an absent term changes nothing (x + -0 = x) */
    tsrt__zclamp k;
    tsrt__zclamp_set(&k, te);
    const __m512 col = te && te->col ? _mm512_maskz_loadu_ps(mask, te->col) : _mm512_set1_ps(-0.0f);
    for (int h = 0; h < 2; h++) {
        __m512 r[16];
        for (int i = 0; i < 16; i++) r[i] = c[i][h];
        tsrt__t16(r);
        for (int j = 0; j < 16 && 16 * h + j < nr; j++) {
            const int o = 16 * h + j;
            float *yj = y + o * P;
            __m512 q = r[j];
            if (beta) q = _mm512_add_ps(q, _mm512_maskz_loadu_ps(mask, yj));
            if (te) {
                q = _mm512_add_ps(q, _mm512_set1_ps(te->row ? te->row[o] : -0.0f));
                q = _mm512_add_ps(q, col);
                if (te->res) q = _mm512_add_ps(q, _mm512_maskz_loadu_ps(mask, te->res + o * te->res_rs));
                q = TSRT__ZCLAMP(&k, q);
            }
            _mm512_mask_storeu_ps(yj, mask, q);
        }
    }
}
#undef TSRT__PT_FMA

/* The tile with its positions consecutive (a 1x1 stride-1 conv read in
 * place; a tile within one row of a phase image), and any; of R = 14, 13
 * or 12 rows (tsrt__pt_p0). */
#define TSRT__PT_TILE_FNS(R)                                                                                      \
    static void tsrt__pt_tile_c##R(int64_t K, const float *restrict x, const ptrdiff_t *restrict off,             \
                                   const float *restrict b, float *restrict y, ptrdiff_t P, int mr, int nr,       \
                                   int beta, const tsrt_tepi *te, const char *pn, ptrdiff_t pns)                  \
    {                                                                                                             \
        tsrt__pt_tile_s(R, K, x, off, NULL, 1, b, y, P, mr, nr, beta, te, pn, pns);                               \
    }                                                                                                             \
    static void tsrt__pt_tile##R(int64_t K, const float *restrict x, const ptrdiff_t *restrict off,               \
                                 const int *pos, const float *restrict b, float *restrict y, ptrdiff_t P, int mr, \
                                 int nr, int beta, const tsrt_tepi *te, const char *pn, ptrdiff_t pns)            \
    {                                                                                                             \
        tsrt__pt_tile_s(R, K, x, off, pos, 0, b, y, P, mr, nr, beta, te, pn, pns);                                \
    }
TSRT__PT_TILE_FNS(14)
TSRT__PT_TILE_FNS(13)
TSRT__PT_TILE_FNS(12)
#undef TSRT__PT_TILE_FNS

/* Where tile t of a panel's n tiles (panel b, K rows) prefetches the
 * next panel, if one follows (more), and *pns its bytes per k step; NULL
 * for none. The panel's last two tiles (one, if it has only two)
 * prefetch the next panel into L2, each its share of it: the next
 * panel's first tile then reads it from L2, not from memory, where the
 * prefetch 16 rows ahead left a 7x7 map's 1x1 convs waiting on the
 * weights (each weight serves 49 positions). Only the last two: spread
 * over 13 tiles (14x14), each line was asked for ~6 times and the
 * stride-2 3x3 convs at 2 threads lost 4-6% (D71). */
static inline const char *tsrt__pt_next_panel(const float *b, int64_t K, int64_t t, int64_t n, int more,
                                              ptrdiff_t *pns)
{
    const int64_t pft = tsrt__min(n - 1, 2);
    *pns = 0;
    if (t < n - pft || !more || K > TSRT_PT_PFN_KMAX) return NULL;
    const int64_t bytes = K * TSRT__PT_NR * (int64_t)sizeof(float);
    *pns = (ptrdiff_t)(TSRT__PT_NR * (int64_t)sizeof(float) / pft);
    return (const char *)(b + K * TSRT__PT_NR) + bytes * (t - (n - pft)) / pft;
}

/* Images [n0, n1), panels [q0, q1), with the tiles of each run of up to
 * G images spanning their positions (tsrt__pt_fold): the images' phase
 * copies (or the images in place) one after another, a tile's rows at
 * any image's positions (pos), its 32 x mr block stored to a scratch
 * tile and then copied, image by image, to Y through the tile epilogue
 * (as the tile kernel applies it); the callback on each image's map
 * after a panel's last tile. */
static void tsrt__conv_pt_fold(const tsrt_conv_args *v, int64_t G, int64_t n0, int64_t n1, int64_t q0, int64_t q1,
                               void *ws)
{
    const int64_t K = tsrt__pt_k(v), O = v->o, OW = v->ow, P = v->oh * OW;
    tsrt__phx g;
    tsrt__phx_geom(v, &g);
    size_t off_bytes, phx_bytes;
    tsrt__conv_gemm_ws(v, &off_bytes, &phx_bytes);
    ptrdiff_t *off = (ptrdiff_t *)(void *)tsrt__align(ws);
    tsrt__phx_offsets(&g, off);
    float *buf = tsrt__align((char *)ws + off_bytes);
    const int64_t F = tsrt__pt_fold_stride(v, &g);
    float tb[TSRT__PT_NR * 16] __attribute__((aligned(TSRT_ALIGN)));
    for (int64_t i0 = n0; i0 < n1; i0 += G) {
        const int64_t gn = tsrt__min(G, n1 - i0), PT = gn * P, nt = tsrt__cdiv(PT, TSRT__PT_MR);
        const float *xq = v->x + i0 * v->x_bs;
        if (g.copy) {
            for (int64_t b = 0; b < gn; b++) {
                g.buf = buf + b * F;
                tsrt__phx_copy(&g, v->x + (i0 + b) * v->x_bs, 0, g.Hq);
            }
            xq = buf;
        }
        for (int64_t q = q0; q < q1; q++)
            for (int64_t t = 0; t < nt; t++) {
                const int64_t p0 = tsrt__pt_p0(PT, nt, t), o0 = q * TSRT__PT_NR;
                const int mr = (int)(tsrt__pt_p0(PT, nt, t + 1) - p0), nr = (int)tsrt__min(TSRT__PT_NR, O - o0);
                /* row i at image (p0 + i) / P, position (p0 + i) % P; rows
                 * past mr repeat the last */
                const int64_t base = p0 / P * F + p0 % P / OW * g.Wq + p0 % P % OW;
                int pos[TSRT__PT_MR];
                for (int i = 0; i < TSRT__PT_MR; i++) {
                    const int64_t gi = p0 + (i < mr ? i : mr - 1), p = gi % P;
                    pos[i] = (int)(gi / P * F + p / OW * g.Wq + p % OW - base);
                }
                const float *b = v->wu + q * K * TSRT__PT_NR;
                ptrdiff_t pns;
                const char *pn = tsrt__pt_next_panel(b, K, t, nt, q + 1 < q1, &pns);
                if (mr == 13) tsrt__pt_tile13(K, xq + base, off, pos, b, tb, 16, mr, nr, 0, NULL, pn, pns);
                else if (mr == 12) tsrt__pt_tile12(K, xq + base, off, pos, b, tb, 16, mr, nr, 0, NULL, pn, pns);
                else tsrt__pt_tile14(K, xq + base, off, pos, b, tb, 16, mr, nr, 0, NULL, pn, pns);
                for (int64_t s = 0; s < mr;) {
                    const int64_t gi = p0 + s, img = i0 + gi / P, p = gi % P, len = tsrt__min(mr - s, P - p);
                    float *y = v->y + img * v->y_bs + o0 * P + p;
                    /* each channel's len positions as one masked vector,
                     * through the tile epilogue in the tile kernel's order
                     * of operations (the same bits) */
                    const __mmask16 mk = (__mmask16)((1u << len) - 1);
                    const tsrt_tepi te = v->te ? tsrt__te_at(v->te, img * O + o0, p) : (tsrt_tepi){0};
                    tsrt__zclamp zk;
                    tsrt__zclamp_set(&zk, v->te ? &te : NULL);
                    const __m512 col = te.col ? _mm512_maskz_loadu_ps(mk, te.col) : _mm512_set1_ps(-0.0f);
                    for (int o = 0; o < nr; o++) {
                        float *yo = y + o * P;
                        __m512 q = _mm512_maskz_loadu_ps(mk, tb + o * 16 + s);
                        if (v->beta) q = _mm512_add_ps(q, _mm512_maskz_loadu_ps(mk, yo));
                        if (v->te) {
                            q = _mm512_add_ps(q, _mm512_set1_ps(te.row ? te.row[o] : -0.0f));
                            q = _mm512_add_ps(q, col);
                            if (te.res) q = _mm512_add_ps(q, _mm512_maskz_loadu_ps(mk, te.res + o * te.res_rs));
                            q = TSRT__ZCLAMP(&zk, q);
                        }
                        _mm512_mask_storeu_ps(yo, mk, q);
                    }
                    s += len;
                }
                /* the callback on each image's whole map once its last
                 * tile is stored: one dense block (see tsrt__conv_pt) */
                if (v->epi && t + 1 == nt)
                    for (int64_t bi = 0; bi < gn; bi++)
                        v->epi(v->epi_ctx, v->y + (i0 + bi) * v->y_bs + o0 * P, P, 1, (i0 + bi) * O + o0, 0, nr,
                               P);
            }
    }
}

/* The conv: per image, its phase copy (tsrt__phx: none for a 1x1
 * stride-1 conv, which reads the image in place) in this thread's
 * workspace, then panels of 32 output channels outer, tiles of 14
 * positions inner (the panel stays in L2, the rows of one tile in L1).
 * A batch of at least as many images as threads, in equal shares or at
 * least four per thread, is split by whole images: nothing is copied or
 * read twice, no thread waits on another's rows (batch 8, 2 threads, the
 * 2-thread time against 1 thread: 3x3/2 32 -> 64 at 48x48 1.80 -> 2.06x,
 * 3x3 64 -> 32 at 12x12 1.66 -> 1.94x, 16 -> 64 at 23x23 1.80 -> 1.97x;
 * D147). Else threads split the panels, each reading its share of the
 * weights, except where the input (its phase copy, or the image a 1x1
 * conv reads in place) is larger than the weights (or there are fewer
 * panels than threads) and there are enough tiles: then they split the
 * tiles, each copying or reading only the rows its tiles read and
 * reading all the weights (every
 * thread copying the whole image took the gain of the 3x3 stride-2 conv
 * at 56x56 at 2 threads; splitting tiles where the weights are the larger
 * cost 7% on 1024 -> 2048 stride 2, D41; each thread reading all of a 1x1
 * conv's input held 512 -> 128 at 28x28 to 1.3x at 2 threads, D60); else
 * the images. On small maps the tiles span images instead
 * (tsrt__pt_fold, tsrt__conv_pt_fold), the batch split by images or
 * else by panels.
 * v->wu: the packed W^T; ws: tsrt__conv_gemm_ws's offsets and copy. */
static void tsrt__conv_pt(const tsrt_conv_args *v, int ith, int nth, void *ws)
{
    const int64_t K = tsrt__pt_k(v), O = v->o, OW = v->ow, P = v->oh * OW;
    const int64_t np = tsrt__cdiv(O, TSRT__PT_NR), nt = tsrt__cdiv(P, TSRT__PT_MR);
    tsrt__phx g;
    tsrt__phx_geom(v, &g);
    /* this thread's images x panels [q0, q1) x tiles [t0, t1) */
    int64_t n[2] = {0, v->n}, q[2] = {0, np}, t[2] = {0, nt};
    /* more of X to copy, or to read in place, than of W to read */
    const int x_big = (g.copy ? tsrt__phx_floats(&g) : v->c * v->h * v->w) > K * O;
    const int by_images = tsrt__pt_by_images(v, nth);
    const int64_t G = tsrt__pt_fold(v);
    if (G > 1 && (by_images || np >= nth)) {
        if (by_images) n[0] = v->n * ith / nth, n[1] = v->n * (ith + 1) / nth;
        else q[0] = np * ith / nth, q[1] = np * (ith + 1) / nth;
        if (n[0] < n[1] && q[0] < q[1]) tsrt__conv_pt_fold(v, G, n[0], n[1], q[0], q[1], ws);
        return;
    }
    tsrt__pt_share(v, np, nt, x_big, 1, ith, nth, n, q, t);
    const int64_t n0 = n[0], n1 = n[1], q0 = q[0], q1 = q[1], t0 = t[0], t1 = t[1];
    if (n0 >= n1 || q0 >= q1 || t0 >= t1) return;
    size_t off_bytes, phx_bytes;
    tsrt__conv_gemm_ws(v, &off_bytes, &phx_bytes);
    ptrdiff_t *off = (ptrdiff_t *)(void *)tsrt__align(ws);
    tsrt__phx_offsets(&g, off);
    g.buf = tsrt__align((char *)ws + off_bytes);
    /* the phase rows the tiles read: their output rows, and the taps below */
    const int64_t r0 = tsrt__pt_p0(P, nt, t0) / OW;
    const int64_t r1 =
        tsrt__min((tsrt__pt_p0(P, nt, t1) - 1) / OW + 1 + (v->kh - 1) * v->dil_h / v->stride_h, g.Hq);
    for (int64_t img = n0; img < n1; img++) {
        const float *x = v->x + img * v->x_bs;
        if (g.copy) tsrt__phx_copy(&g, x, r0, r1);
        g.xq = g.copy ? g.buf : x;
        int64_t ep = -1; /* the first position the callback has not seen */
        for (int64_t q = q0; q < q1; q++)
            for (int64_t t = t0; t < t1; t++) {
                const int64_t p0 = tsrt__pt_p0(P, nt, t), o0 = q * TSRT__PT_NR;
                const int mr = (int)(tsrt__pt_p0(P, nt, t + 1) - p0), nr = (int)tsrt__min(TSRT__PT_NR, O - o0);
                /* position p = (i, j) of the output at i*Wq + j of a phase
                 * image; the tile's positions relative to its first, stepping
                 * along the row and wrapping to the next (no divisions) */
                const int64_t base = p0 / OW * g.Wq + p0 % OW;
                int pos[TSRT__PT_MR];
                for (int i = 0, rel = 0, last = 0, j = (int)(p0 % OW); i < TSRT__PT_MR; i++) {
                    if (i < mr) last = rel;
                    pos[i] = last;
                    if (++j == OW) j = 0, rel += (int)(g.Wq - OW);
                    rel++;
                }
                float *y = v->y + img * v->y_bs + o0 * P + p0;
                tsrt_tepi te;
                if (v->te) te = tsrt__te_at(v->te, img * O + o0, p0);
                /* the next tile's residual, into L2 (as tsrt__pw_range:
                 * 256 -> 1024 at 14x14 with its residual 1.39-1.41 ->
                 * 1.25-1.26 ms, 1.19-1.25 without) */
                if (v->te && te.res && t + 1 < t1) {
                    const int64_t end = tsrt__pt_p0(P, nt, t + 2) - p0 - 1; /* the next tile's last */
                    for (int o = 0; o < nr; o++) {
                        _mm_prefetch((const char *)(te.res + o * te.res_rs + mr), _MM_HINT_T1);
                        _mm_prefetch((const char *)(te.res + o * te.res_rs + end), _MM_HINT_T1);
                    }
                }
                const float *b = v->wu + q * K * TSRT__PT_NR;
                const tsrt_tepi *tp = v->te ? &te : NULL;
                ptrdiff_t pns;
                const char *pn = tsrt__pt_next_panel(b, K, t - t0, t1 - t0, q + 1 < q1, &pns);
                /* pos rises by >= 1 per row: consecutive iff the last is
                 * mr - 1 (the 14-row kernel reads all 14 rows, so a masked
                 * tile of it takes the repeated rows of pos) */
                const int c = pos[mr - 1] == mr - 1;
                if (mr == 13 && c) tsrt__pt_tile_c13(K, g.xq + base, off, b, y, P, mr, nr, v->beta, tp, pn, pns);
                else if (mr == 13) tsrt__pt_tile13(K, g.xq + base, off, pos, b, y, P, mr, nr, v->beta, tp, pn, pns);
                else if (mr == 12 && c) tsrt__pt_tile_c12(K, g.xq + base, off, b, y, P, mr, nr, v->beta, tp, pn, pns);
                else if (mr == 12) tsrt__pt_tile12(K, g.xq + base, off, pos, b, y, P, mr, nr, v->beta, tp, pn, pns);
                else if (c && mr == 14) tsrt__pt_tile_c14(K, g.xq + base, off, b, y, P, mr, nr, v->beta, tp, pn, pns);
                else tsrt__pt_tile14(K, g.xq + base, off, pos, b, y, P, mr, nr, v->beta, tp, pn, pns);
                /* The callback (what the tile epilogue cannot do: a
                 * SiLU's exp and division) on runs of TSRT_PT_EPI_COLS
                 * positions or to the share's end, not per tile: on a
                 * tile's 32 x 14 block its loop of 14 columns ran as
                 * scalar code (the vector loop needs 16), EfficientNet-B0
                 * b8's SiLUs a fifth of its time (D151). */
                if (v->epi) {
                    if (ep < 0) ep = p0;
                    if (p0 + mr - ep >= TSRT_PT_EPI_COLS || t + 1 == t1) {
                        v->epi(v->epi_ctx, v->y + img * v->y_bs + o0 * P + ep, P, 1, img * O + o0, ep, nr,
                               p0 + mr - ep);
                        ep = -1;
                    }
                }
            }
    }
}

#endif /* TSRT_ISA == TSRT_ISA_AVX512 */

#endif /* TSRT_CONV_PT_H */
