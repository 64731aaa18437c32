/* tsrt_conv_pw.h — a pointwise (1x1) conv with few input channels as one
 * pass over the whole K per block of positions (tsrt__pw_range, GEMM_1X1's
 * loop nest of its own: D29, D59, D67, D191), called by the implicit-GEMM
 * driver (tsrt_conv_gemm.h). See tsrt_conv.h. */
#ifndef TSRT_CONV_PW_H
#define TSRT_CONV_PW_H

#ifndef TSRT_GEMM_H
#include "tsrt_gemm.h"
#endif

/* NR floats from s to d (unaligned), in 8-float vectors. */
static inline void tsrt__copy_nr(float *d, const float *s)
{
    for (int t = 0; t < TSRT_NR; t += 8) {
        tsrt__v8 q;
        TSRT__V8_LOAD(q, s + t);
        TSRT__V8_STORE(d + t, q);
    }
}

/* ==== GEMM_1X1 with few input channels: the whole K in one pass ============= *
 *
 * A pointwise conv with small K (MobileNetV2: 16 to 192 input channels on
 * maps of 112x112 to 7x7) does few multiply-adds per element of C, so what
 * the BLIS loop nest spends around the micro-kernel shows: C strips of
 * MC x 64 whose rows are H*W floats apart (50176 bytes at 112x112: the
 * rows of a strip fall on 16 of L1's 64 sets) no longer fit in L1 when the
 * epilogue re-reads them, a short last row tile (O = 16, 24, 32, 64...
 * leave 4 or 2 rows) goes through a scalar copy, and the epilogue runs on
 * strips that are being evicted. Here, per column block of NB positions:
 *   - B = X[0..K)[block] is packed once (K x NB, contiguous panels, in
 *     L2), read by every row tile; with few output channels read in place
 *     instead (TSRT_PW_INPLACE_OMAX);
 *   - row tiles outer, panels inner: the weights' MR x K micro-panel is
 *     read in place (tsrt__ukr_ua, lda = K) and stays in L1, and each
 *     MR x NB tile of C is stored once, then handed to the epilogue while
 *     it is still in L1;
 *   - the last row tile (O % MR rows) runs the packed-A kernel into a
 *     stack tile copied out a vector at a time;
 *   - the next block's lines of X are prefetched into L2 over the
 *     micro-kernel calls of this one (without: project layers, K = 96 to
 *     192 with O = 16 to 32, 1.15-1.28x slower with the input in L3), and
 *     the next row tile's weights on the first block.
 * No K blocking, so C is written once (beta only on that write). Taken
 * for K <= TSRT_PW_KMAX when W is at most TSRT_PW_AFLOATS floats (it is
 * read again by every column block) or there is one block. Measured in
 * D29 (docs/decisions.md) with bench/conv_1x1_mobilenetv2.c. */

/* Input channels up to which a 1x1 conv takes this path (larger K: the
 * BLIS loop nest, tsrt__gemm_range, whose blocking pays off there): the
 * GEMM's KC when the path was measured (D29, D59), 384 on AVX-512, where
 * it stayed when KC went down to 192 (D66). The workspace holds it:
 * TSRT_WS_KC. */
#ifndef TSRT_PW_KMAX
#if TSRT_ISA == TSRT_ISA_AVX512
#define TSRT_PW_KMAX 384
#else
#define TSRT_PW_KMAX TSRT_KC
#endif
#endif
#if TSRT_PW_KMAX > TSRT_WS_KC
#error "tsrt: TSRT_PW_KMAX exceeds the workspace's TSRT_WS_KC"
#endif
/* Bytes of packed B per column block: NB = this / (4K), whole panels,
 * at most TSRT_PW_NBMAX. Half of a 1 MiB L2: a row tile then sweeps long
 * runs of C's (and the residual's) rows, which the hardware prefetcher
 * follows; 48 KiB blocks (B in L1) left runs of 12 lines per row and tile
 * (D59: 64 -> 256 at 56x56 with its residual 0.93-0.98 -> 0.91-0.93 ms on
 * an Intel core, 2 threads 0.49-0.52 -> 0.43-0.46). */
#ifndef TSRT_PW_BBYTES
#define TSRT_PW_BBYTES (512 * 1024)
#endif
#ifndef TSRT_PW_PREFETCH
#define TSRT_PW_PREFETCH 1
#endif
/* Output channels up to which the path reads X in place instead of
 * packing it (AVX-512: the kernels take B's row stride, D67): with few
 * row tiles to reuse each packed panel, the packing cost as much as the
 * multiply-adds (MobileNetV2's project layers, 16 to 32 outputs: 20-28%
 * faster in place; ResNet-50's 256 -> 64 at 56x56 10%, 256 -> 128 4%;
 * 144 and 256 outputs alike, the in-place rows straddling cache lines for
 * every row tile). */
#ifndef TSRT_PW_INPLACE_OMAX
#if TSRT_ISA == TSRT_ISA_AVX2
#define TSRT_PW_INPLACE_OMAX 32
#else
#define TSRT_PW_INPLACE_OMAX 128
#endif
#endif
/* On AVX2 (Zen 3, D191) only from this many input channels, and not when
 * X's rows are a multiple of 4 KiB apart: K = 32 convs on 48x48 and
 * 112x112 maps ran 1.3-1.5x slower in place, 96 channels of 32x32 (rows
 * 4 KiB apart, every channel's line in the same L1 set) 1.4x. */
#if TSRT_ISA == TSRT_ISA_AVX2
#define TSRT_PW_INPLACE_KMIN 64
#else
#define TSRT_PW_INPLACE_KMIN 0
#endif
static inline int tsrt__pw_inplace_shape(const tsrt__gop *op)
{
    return op->m <= TSRT_PW_INPLACE_OMAX && op->k >= TSRT_PW_INPLACE_KMIN &&
           (TSRT_ISA != TSRT_ISA_AVX2 || op->b_rs % 1024 != 0);
}
/* Bytes of X up to which the small-K path splits rows between threads. */
#ifndef TSRT_PW_SPLIT_BYTES
#define TSRT_PW_SPLIT_BYTES (256 * 1024)
#endif
/* Floats of W up to which it is read from L2 by every column block. */
#ifndef TSRT_PW_AFLOATS
#define TSRT_PW_AFLOATS (32 * 1024)
#endif
#ifndef TSRT_PW_NBMAX
#define TSRT_PW_NBMAX TSRT_NC /* the workspace holds K x NC floats of B */
#endif

static inline int64_t tsrt__pw_nb(int64_t k)
{
    const int64_t nb = TSRT_PW_BBYTES / (int64_t)sizeof(float) / tsrt__max(k, 1) / TSRT_NR * TSRT_NR;
    return tsrt__max(TSRT_NR, tsrt__min(TSRT_PW_NBMAX, nb));
}

/* X[0..K)[0..nc) (row stride rs, unit column stride) into NR-wide
 * micro-panels, the last one zero-filled past nc (tsrt__pack_b's layout;
 * 8-float vector moves where gcc made its memcpy four 16-byte ones). */
static void tsrt__pw_pack(const float *restrict x, ptrdiff_t rs, int64_t k, int64_t nc, float *restrict dst)
{
    const int64_t nf = nc / TSRT_NR * TSRT_NR;
    for (int64_t jr = 0; jr < nf; jr += TSRT_NR, dst += TSRT_NR * k)
        for (int64_t p = 0; p < k; p++) tsrt__copy_nr(dst + p * TSRT_NR, x + p * rs + jr);
    if (nf < nc) tsrt__pack_b(x + nf, rs, 1, k, nc - nf, dst);
}

/* mr < MR rows of C (c, row stride rs, unit column stride) from the packed
 * A micro-panel pa and a packed B micro-panel pb: the full kernel into a
 * stack tile, then whole vectors out when the panel is full. */
static inline void tsrt__pw_edge_rows(int64_t k, const float *pa, const float *pb, float *c, ptrdiff_t rs, int beta,
                                      int64_t mr, int64_t nr, const tsrt_tepi *te)
{
    if (nr < TSRT_NR) {
        tsrt__ukr(k, pa, pb, c, rs, 1, beta, mr, nr, te);
        return;
    }
    float t[TSRT_MR * TSRT_NR] __attribute__((aligned(TSRT_ALIGN)));
    tsrt__ukr_full(k, pa, pb, t, TSRT_NR, 0, NULL);
    for (int64_t i = 0; i < mr; i++)
        for (int j = 0; j < TSRT_NR; j += 8) {
            tsrt__v8 q, o;
            TSRT__V8_LOAD(q, t + i * TSRT_NR + j);
            if (beta) {
                TSRT__V8_LOAD(o, c + i * rs + j);
                q += o;
            }
            TSRT__V8_STORE(c + i * rs + j, q);
        }
    if (te) tsrt__te_tile(te, c, rs, mr, nr);
}

/* Whether an h-row tile has a kernel of its own (else: pw_edge_rows). */
static inline int tsrt__pw_own_h(int64_t h)
{
#ifdef TSRT_HAVE_UKRH
    return h == TSRT_MR || tsrt__is_tileh(h);
#else
    return h == TSRT_MR;
#endif
}

/* Rows [i0, i1) x columns [j0, j1) of one product C = W·X (op: a = W
 * row-major with a_rs = K, b = X with row stride b_rs and unit column
 * stride, c with unit column stride), K <= TSRT_PW_KMAX. pa: room for one
 * packed MR x K micro-panel; pb: K x rup(min(NB, j1 - j0), NR) floats,
 * aligned. */
TSRT__OUTLINE void tsrt__pw_range(const tsrt__gop *op, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                                  float *restrict pa, float *restrict pb)
{
    const int64_t K = op->k, NB = tsrt__pw_nb(K);
    const ptrdiff_t rs = op->c_rs;
    float bt[2 * TSRT_PW_KMAX] __attribute__((aligned(TSRT_ALIGN))); /* a last panel of <= 2 columns */
    /* the last row tile, packed when it is a partial one for the MR-row
     * kernel (tiles of a height with a kernel of its own read W in place) */
    const int64_t mc = i1 - i0;
    int64_t il = i0;
    while (il + tsrt__tile_h(mc, il - i0) < i1) il += tsrt__tile_h(mc, il - i0);
    if (!tsrt__pw_own_h(i1 - il)) tsrt__pack_a(op->a + il * op->a_rs, op->a_rs, 1, i1 - il, K, pa);
    /* X read in place (see TSRT_PW_INPLACE_OMAX) when every row tile has
     * a kernel of its own: no packed A, whose edge kernel wants packed B */
#ifdef TSRT_HAVE_UKR_UAB
    int inplace = tsrt__pw_inplace_shape(op);
    for (int64_t ir = i0; ir < i1 && inplace; ir += tsrt__tile_h(mc, ir - i0))
        if (!tsrt__pw_own_h(tsrt__tile_h(mc, ir - i0))) inplace = 0;
#else
    const int inplace = 0;
#endif
    for (int64_t jc = j0; jc < j1; jc += NB) {
        const int64_t nc = tsrt__min(NB, j1 - jc), nl = nc % TSRT_NR;
        if (!inplace) tsrt__pw_pack(op->b + jc, op->b_rs, K, nc, pb);
        else if (nl) /* only the last, partial panel: a read past it would leave the image */
            tsrt__pack_b(op->b + jc + (nc - nl), op->b_rs, 1, K, nl, pb + (nc - nl) * K);
        const int64_t bc0 = nl ? tsrt__ua_col0(nl) : -1;
        if (bc0 >= 0) tsrt__b_cols(K, pb + (nc - nl) * K + bc0, nl - bc0, bt);
        /* The next block's lines of X (K rows of 64-byte lines), a share
         * per micro-kernel call: K short runs of a few lines each are too
         * many streams for the hardware prefetcher. Line l of row p is
         * at pf + p*b_rs + l*16. */
        const int64_t jn = jc + NB, lpr = tsrt__cdiv(tsrt__max(tsrt__min(NB, j1 - jn), 0), 16);
        const int64_t calls = tsrt__cdiv(i1 - i0, TSRT_MR) * tsrt__cdiv(nc, TSRT_NR);
        const int64_t pstep = TSRT_PW_PREFETCH ? tsrt__cdiv(K * lpr, calls) : 0;
        const float *pf = op->b + jn;
        int64_t pp = lpr ? 0 : K, pl = 0; /* the next line to prefetch */
        for (int64_t ir = i0, mr; ir < i1; ir += mr) {
            mr = tsrt__tile_h(mc, ir - i0);
            const float *a = op->a + ir * op->a_rs;
            float *c = op->c + ir * rs + jc;
            /* The next tile's rows of W, on the first column block (the
             * weights are read once per call: in the model they are not
             * in cache). */
            if (TSRT_PW_PREFETCH && jc == j0 && ir + TSRT_MR < i1)
                for (int64_t l = 0, n = tsrt__min(TSRT_MR, i1 - ir - TSRT_MR) * K; l < n; l += 16)
                    __builtin_prefetch(a + TSRT_MR * op->a_rs + l, 0, 3);
            for (int64_t jr = 0; jr < nc; jr += TSRT_NR) {
                const int64_t nr = tsrt__min(TSRT_NR, nc - jr);
                for (int64_t e = 0; e < pstep && pp < K; e++) {
                    __builtin_prefetch(pf + pl * 16, 0, 2);
                    if (++pl == lpr) pl = 0, pp++, pf += op->b_rs;
                }
                tsrt_tepi tt;
                const tsrt_tepi *te = NULL;
                if (op->te) tt = tsrt__te_at(op->te, op->epi_m0 + ir, op->epi_n0 + jc + jr), te = &tt;
                /* The next tile's residual rows, into L2: a tile's rows
                 * are H*W floats apart, short runs the hardware prefetcher
                 * does not follow, and the epilogue's loads of them missed
                 * L2 at every tile (ResNet-50's 64 -> 256 at 56x56 with its
                 * residual 1.68-1.84 ms, without 1.19-1.27; with this
                 * 1.26-1.33; into L1 instead 1.60-1.77). Past the block it
                 * is the next rows' or harmless. */
                if (te && te->res)
                    for (int64_t i = 0; i < mr; i++) {
                        __builtin_prefetch(te->res + i * te->res_rs + TSRT_NR, 0, 2);
                        __builtin_prefetch(te->res + i * te->res_rs + 2 * TSRT_NR - 1, 0, 2);
                    }
#ifdef TSRT_HAVE_UKR_UAB
                if (inplace && nr == TSRT_NR) {
                    if (mr == TSRT_MR)
                        tsrt__ukr_full_uab(K, a, op->a_rs, op->b + jc + jr, op->b_rs, c + jr, rs, op->beta, te);
                    else
                        tsrt__ukrh_uab(mr, K, a, op->a_rs, op->b + jc + jr, op->b_rs, c + jr, rs, op->beta, te);
                } else
#endif
                if (mr == TSRT_MR)
                    tsrt__ukr_ua(K, a, op->a_rs, pb + jr * K, c + jr, rs, 1, op->beta, nr, bt, te);
#ifdef TSRT_HAVE_UKRH
                else if (tsrt__is_tileh(mr))
                    tsrt__ukrh_any(mr, K, a, op->a_rs, pb + jr * K, c + jr, rs, 1, op->beta, nr, te);
#endif
                else
                    tsrt__pw_edge_rows(K, pa, pb + jr * K, c + jr, rs, op->beta, mr, nr, te);
            }
            if (op->epi) tsrt__epi(op, ir, jc, mr, nc);
        }
    }
}

#endif /* TSRT_CONV_PW_H */
