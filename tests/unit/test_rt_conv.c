/* test_rt_conv.c — tsrt_conv (src/kernels/cpu) against a naive loop (conv_check.h)
 * accumulating in double: every combination of padding (0, 1, 2, negative,
 * asymmetric), stride, kernel dilation, input dilation and groups (1, 2,
 * depthwise with channel multiplier 1 and 2) on small images with several
 * kernel shapes, each with every algorithm that applies (im2col always,
 * 1x1 and depthwise where their shape rules hold) and nth = 1..3 run one ith
 * after another; an epilogue adding bias and a residual and applying relu
 * that must see each output element exactly once; accumulation (beta = 1);
 * image strides wider than dense (outputs into a concat buffer); sizes that
 * cross the GEMM blocks. tsrt_conv_choose's picks are checked too, and
 * Winograd weights transformed once against the per-call transform, and
 * GEMM_T (AVX-512, native or emulated) against a double product.
 * Tolerance: (K + 3) * FLT_EPSILON * sum |terms|, K = C/G*KH*KW. */
#include "check.h"
#ifdef TSRT_TEST_AVX512_EMU
#include "avx512_emu.h" /* the AVX-512 kernel, emulated */
#endif
#include "kernels/cpu/tsrt_conv.h"
#include "conv_check.h"
#include "te_ref.h"
#include "wino_ref.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frand.h"

/* Every pad x stride x dilation x input dilation x groups combination. */
static void test_combinations(void)
{
    static const int64_t pads[] = {0, 1, 2, -1}, strides[] = {1, 2, 3}, dils[] = {1, 2}, ldils[] = {1, 2};
    static const int64_t kshape[][2] = {{3, 3}, {1, 1}, {2, 3}, {3, 1}, {5, 5}};
    int v = 0, ran = 0;
    for (int pi = 0; pi < 4; pi++)
        for (int si = 0; si < 3; si++)
            for (int di = 0; di < 2; di++)
                for (int li = 0; li < 2; li++)
                    for (int gi = 0; gi < 4; gi++, v++) {
                        /* groups: 1, 2, depthwise (C), depthwise x2 (O = 2C) */
                        const int64_t C = 4, G = gi == 0 ? 1 : gi == 1 ? 2 : C, O = gi == 3 ? 2 * C : gi == 1 ? 6 : C;
                        const int64_t *ks = kshape[v % 5];
                        const int64_t p = pads[pi], hi = p + (v % 3 == 0); /* some asymmetric pads */
                        ccase t = {1 + v % 2, C, 7 + v % 3, 9 - v % 4, O, ks[0], ks[1], G,
                                   strides[si], strides[(si + v) % 3], p, p, hi, p, dils[di], dils[(di + v) % 2],
                                   ldils[li], ldils[(li + v / 3) % 2], v % 5 == 1, v % 2 == 0, v % 7 == 3};
                        if (out_size(t.h, t.kh, t.sh, t.ph, t.ph_hi, t.dh, t.lh) <= 0 ||
                            out_size(t.w, t.kw, t.sw, t.pw, t.pw_hi, t.dw, t.lw) <= 0)
                            continue;
                        check_conv(&t);
                        ran++;
                    }
    CHECK_MSG(ran > 150, "only %d combinations had an output", ran);
}

/* Depthwise kernels larger than their maps (D135): the channel-vector
 * path sums only the taps that read input, and runs a block's images
 * one after another. 5x5 on 3x3 and 6x6 maps (MobileNetV3), stride 2,
 * a 7x7 kernel on a 3x3 map, dilation 2 reaching past the map,
 * asymmetric and negative pads, 3 images, a partial last block of
 * channels, beta and the epilogue. */
static void test_dw_small_maps(void)
{
    const ccase cases[] = {
        /* n  c    h   w   o    kh kw g   sh sw ph pw phh pwh dh dw lh lw beta epi bs */
        {3, 20, 3, 3, 20, 5, 5, 20, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 0, 1, 0},
        {3, 12, 6, 6, 12, 5, 5, 12, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1},
        {2, 9, 6, 6, 9, 5, 5, 9, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 0, 1, 0},
        {2, 8, 3, 3, 8, 7, 7, 8, 1, 1, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0},
        {1, 16, 4, 5, 16, 5, 5, 16, 1, 1, 4, 4, 4, 4, 2, 2, 1, 1, 0, 1, 0},
        {2, 10, 5, 4, 10, 5, 3, 10, 1, 2, 3, 0, 1, 2, 1, 1, 1, 1, 0, 1, 0},
        {1, 8, 7, 6, 8, 5, 5, 8, 1, 1, -1, 2, 3, -1, 1, 1, 1, 1, 1, 0, 0},
        /* D137's whole-plane loads: 8 lanes of 3x3 planes (9 positions,
         * the last 8 overlapping), a channel multiplier, input rows and
         * columns no output reads (6x6 at stride 2 without padding: row
         * and column 5 lie outside the tile), a 2x2 map (4 positions:
         * the row path), a partial block after whole ones */
        {2, 16, 3, 3, 16, 5, 5, 16, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 0, 1, 0},
        {2, 16, 3, 3, 32, 5, 5, 16, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 0},
        {2, 8, 6, 6, 8, 3, 3, 8, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1},
        {3, 24, 6, 6, 24, 5, 5, 24, 2, 2, 2, 1, 1, 2, 1, 1, 1, 1, 0, 1, 0},
        {2, 8, 2, 2, 8, 5, 5, 8, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 0, 1, 0},
        {2, 12, 4, 4, 12, 3, 3, 12, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_conv(&cases[i]);
}

/* Maps smaller than a micro-panel (tsrt__ib_*): several images' positions
 * in one product, groups of them with a short last group (40 images of
 * 16 positions: 16 + 16 + 8), the padded staging copy (unit column
 * stride) and the general packer (stride 2, input dilation), beta, the
 * epilogue, image strides with gaps. */
static void test_ib_small_maps(void)
{
    const ccase cases[] = {
        /* n  c    h   w   o    kh kw g   sh sw ph pw phh pwh dh dw lh lw beta epi bs */
        {40, 16, 4, 4, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},
        {40, 8, 4, 4, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {17, 5, 3, 5, 7, 2, 3, 1, 1, 1, 0, 2, 1, 0, 2, 1, 1, 1, 0, 0, 0},
        {9, 6, 8, 8, 10, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},
        {6, 4, 3, 3, 5, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, 2, 2, 1, 1, 0},
        {33, 64, 4, 4, 8, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_conv(&cases[i]);
}

/* Shapes of real networks, shrunk, and sizes crossing the GEMM blocks
 * (K = C/G*KH*KW > KC, O > MC, OH*OW not a multiple of NR). */
static void test_shapes(void)
{
    const ccase cases[] = {
        /* n  c    h   w   o    kh kw g   sh sw ph pw phh pwh dh dw lh lw beta epi bs */
        {1, 64, 10, 10, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},   /* ResNet 3x3, K = 576 */
        {2, 300, 6, 5, 20, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1},    /* 1x1, K > KC */
        {1, 3, 23, 23, 170, 7, 7, 1, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 0, 1, 0},   /* stem 7x7/2, O > MC */
        {1, 16, 17, 17, 32, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0},   /* 1x1 stride 2 */
        {1, 32, 19, 21, 32, 3, 3, 32, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},  /* depthwise 3x3 */
        {1, 32, 20, 20, 32, 3, 3, 32, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},  /* depthwise 3x3/2 */
        {1, 8, 30, 40, 8, 3, 3, 8, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 0, 1, 1},     /* depthwise dilated */
        {1, 8, 9, 9, 8, 5, 5, 8, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 0, 1, 0},       /* depthwise 5x5 */
        {2, 12, 9, 9, 24, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},     /* grouped (ResNeXt) */
        {1, 4, 1, 50, 6, 1, 5, 1, 1, 2, 0, 2, 0, 1, 1, 1, 1, 1, 0, 1, 0},      /* 1-D */
        {1, 6, 5, 5, 4, 3, 3, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 0, 1, 0},       /* transposed-conv form */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_conv(&cases[i]);
}

/* The paths added for speed, at sizes that reach their edges:
 *  - Winograd: tile counts TH*TW = 1, 2, 17, 18, 21, 24 (the last panel of
 *    NR = 16 tiles holds 1, 2, 5 or 8: dot products, the 6x8 kernel),
 *    channels per group > KC (channel blocks), 16*O*C > the U budget
 *    (several output-channel blocks, V kept for all panels), groups,
 *    every pad (asymmetric, negative), n = 2 images, beta, epilogue;
 *  - PHASED: strides 2 and 3 with pads 0..3, the 7x7/2 stem, strided 1x1,
 *    dilation with stride, outputs narrower than a micro-panel;
 *  - A read in place (few output positions, N <= 256): N = 49, 50, 56,
 *    81, 18, 25 (last column panels of 1, 2, 8, 1, 2, 9 columns) with
 *    K > KC and O not a multiple of MR; a 1x1 conv whose K lies between
 *    KC and the pointwise path's limit with one short row tile (its
 *    whole-K packed A in the workspace, tsrt__ws_split); 1x1 convs with
 *    few output channels, whose input is read in place (D67 on
 *    AVX-512: several column blocks with beta, a last panel of 2 columns,
 *    packed; D191 on AVX2, K >= 64: 6- and 4-row tiles, K % 4 of 0 and 3);
 *  - depthwise in channel vectors (tsrt_conv_dw.h): 3x3 stride 1 and 2
 *    on odd maps (7x7, 15x13), planes of several row chunks (the tile's
 *    rows moved up between chunks, threads starting mid-plane), a row
 *    wider than the tile budget, 5x5/2, channel multipliers of 2 and 3
 *    with blocks straddling input channels, asymmetric and negative pads,
 *    beta; full blocks of 8 channels with a partial last block (20, 12
 *    channels), rows of 1, 3, 7 (narrower than a vector: loads running
 *    into the next row, but not past the plane), 14 (an overlapping last
 *    vector of columns) and 115 columns, output chunks not a multiple of
 *    8 positions (the overlapping last transpose), 1x1 depthwise, dilation
 *    (the generic tap loop); for AVX-512's 16 lanes: maps of fewer than 16
 *    positions (masked loads and stores), 40 and 17 channels, rows of
 *    8 + 8 + 5 positions, chunks of rows narrower than 16. */
static void test_fast_paths(void)
{
    const ccase cases[] = {
        /* n  c    h   w   o    kh kw g  sh sw ph pw phh pwh dh dw lh lw beta epi bs */
        {1, 5, 1, 1, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},     /* one tile, 1x1 output */
        {1, 6, 2, 3, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},     /* 2 tiles */
        {2, 8, 9, 16, 13, 3, 3, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1},   /* 4x8 + ... tiles */
        {1, 7, 33, 2, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},    /* 17 tiles */
        {1, 7, 6, 12, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},    /* 18 tiles */
        {1, 9, 13, 11, 20, 3, 3, 1, 1, 1, 2, 0, 1, 3, 1, 1, 1, 1, 0, 1, 0},  /* 7x6 tiles, uneven pads */
        {1, 10, 14, 14, 12, 3, 3, 1, 1, 1, -1, 2, 0, 1, 1, 1, 1, 1, 0, 1, 0}, /* negative pad */
        {1, 300, 5, 6, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},   /* C > KC: channel blocks */
        {1, 70, 8, 8, 200, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},  /* several output blocks */
        {2, 12, 10, 9, 18, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},  /* groups */
        {1, 3, 23, 21, 20, 7, 7, 1, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 0, 1, 0},  /* stem 7x7/2 */
        {1, 20, 15, 15, 14, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0}, /* 3x3/2 */
        {1, 20, 16, 13, 14, 3, 3, 2, 3, 2, 0, 2, 3, 1, 1, 1, 1, 1, 1, 1, 1}, /* stride 3x2, groups */
        {1, 24, 14, 14, 30, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0}, /* 1x1/2 */
        {1, 8, 17, 17, 10, 3, 3, 1, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 0, 1, 0},  /* dilation 2, stride 2 */
        {1, 4, 6, 40, 5, 5, 3, 1, 2, 3, 2, 1, 2, 1, 1, 2, 1, 1, 0, 1, 0},    /* 5x3, stride 2x3 */
        {1, 300, 7, 7, 20, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0},  /* N = 49 */
        {1, 260, 5, 10, 21, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0}, /* N = 50 */
        {1, 40, 7, 8, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},   /* N = 56, K = 360 */
        {1, 300, 9, 9, 19, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1},  /* N = 81 */
        {1, 300, 5, 6, 6, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0},   /* KC < K <= PW_KMAX, one short tile */
        {1, 32, 70, 70, 16, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0}, /* X in place (AVX-512): 2 column blocks, beta */
        {1, 40, 10, 13, 24, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0}, /* X in place (AVX-512), a last panel of 2 */
        {1, 96, 11, 13, 16, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0}, /* X in place (any): 6 + 6 + 4 rows, K % 4 = 0, beta */
        {2, 67, 9, 9, 30, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1}, /* X in place (any): 5 x 6 rows, K % 4 = 3 */
        {2, 270, 6, 3, 25, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0},  /* N = 18 */
        {1, 30, 10, 10, 12, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0}, /* N = 25, K = 270 */
        {2, 5, 7, 7, 5, 3, 3, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1},     /* dw 7x7 */
        {1, 6, 15, 13, 6, 3, 3, 6, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},   /* dw 3x3/2, odd */
        {1, 3, 140, 140, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0}, /* dw, chunks */
        {1, 3, 70, 70, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},   /* dw 3x3/1, chunks of 3 rows */
        {1, 2, 3, 5000, 2, 3, 3, 2, 1, 2, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 0},  /* dw, a row wider than the tile budget */
        {1, 4, 17, 19, 4, 5, 5, 4, 2, 2, 2, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1},   /* dw 5x5/2 */
        {1, 3, 61, 66, 6, 3, 3, 3, 2, 2, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 0},   /* dw x2, mid-plane */
        {2, 4, 9, 180, 4, 3, 3, 4, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* dw 90 wide: 4-position steps + 2, beta */
        {1, 3, 20, 90, 3, 5, 5, 3, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 0},   /* dw 5x5/1 */
        {2, 20, 14, 14, 20, 3, 3, 20, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1}, /* dw 8+8+4 lanes, 14 wide */
        {1, 16, 7, 7, 16, 3, 3, 16, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},  /* dw 7 wide, beta */
        {1, 8, 5, 1, 8, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},     /* dw 1 wide */
        {1, 16, 12, 3, 16, 5, 5, 16, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 0, 1, 0}, /* dw 5x5, 3 wide */
        {1, 24, 29, 30, 24, 3, 3, 24, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0}, /* dw 3x3/2, 8 lanes */
        {1, 8, 40, 115, 8, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},  /* dw chunks of 2 rows, beta */
        {1, 8, 40, 115, 8, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1},  /* the same, no beta */
        {1, 16, 11, 13, 16, 3, 3, 16, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 0, 1, 0}, /* dw dilated, 8 lanes */
        {1, 8, 9, 10, 8, 3, 3, 8, 1, 1, -1, 0, 0, 2, 1, 1, 1, 1, 0, 1, 0},    /* dw negative pads */
        {1, 4, 13, 17, 12, 3, 3, 4, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},   /* dw multiplier 3 */
        {1, 12, 10, 11, 12, 1, 1, 12, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0}, /* dw 1x1 */
        {2, 40, 3, 3, 40, 3, 3, 40, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},  /* dw 3x3 map: 9 positions, 16+16+8 lanes, beta */
        {1, 24, 6, 6, 24, 3, 3, 24, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1},  /* dw 6x6/2 onto 3x3 */
        {1, 17, 20, 21, 17, 7, 7, 17, 1, 1, 3, 3, 3, 3, 1, 1, 1, 1, 0, 1, 0}, /* dw 7x7, rows of 8 + 8 + 5 positions */
        {1, 20, 300, 5, 20, 5, 5, 20, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 0}, /* dw chunks of rows narrower than a vector */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_conv(&cases[i]);
}

/* GEMM_1X1 with few input channels (tsrt__pw_range, K <= TSRT_PW_KMAX):
 * K = 1, 3, 5, 17, 96, 144, 200 and KMAX itself (256; 257 takes the BLIS
 * loop nest); O below, at and around MR (1, 4, 5, 6, 7, 13, 16, 20, 24)
 * so the last row tile has 1..5 rows or none; positions not multiples of 8
 * or 16 (1, 42, 50, 63, 81, 100, 182, 361, 529), several column blocks
 * (K = 144: blocks of 80; K = 200: of 48, the last one 4 wide; 529 > the
 * 512-position cap, its last block one column: the dot-product tail);
 * beta, wide image strides, 2 images, 2 groups; every case with nth = 1..3
 * (check_conv), the epilogue seeing each element once. */
static void test_pointwise(void)
{
    const ccase cases[] = {
        /* n  c    h   w   o    kh kw g  sh sw ph pw phh pwh dh dw lh lw beta epi bs */
        {1, 1, 9, 9, 7, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0},     /* K = 1 */
        {1, 5, 7, 9, 5, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0},     /* O < MR, beta */
        {1, 17, 23, 23, 16, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0}, /* 2 blocks, 1-column tail */
        {1, 16, 1, 1, 4, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0},    /* one position */
        {1, 3, 1, 50, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0},    /* O = 1, 2-column tail */
        {1, 200, 10, 10, 13, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1}, /* blocks of 48 + 4 */
        {1, 256, 6, 7, 6, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0},   /* K = KMAX */
        {1, 257, 6, 7, 6, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0},   /* K = KMAX + 1 */
        {2, 192, 13, 14, 48, 1, 1, 2, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1}, /* 2 images x 2 groups */
        {1, 144, 19, 19, 20, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0}, /* 5 blocks, beta */
        {1, 24, 9, 9, 24, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0},    /* no epilogue */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_conv(&cases[i]);
}

static void test_choose(void)
{
    tsrt_conv_args a = {.n = 1, .c = 64, .h = 56, .w = 56, .o = 64, .kh = 3, .kw = 3, .oh = 56, .ow = 56, .pad_h = 1,
                        .pad_w = 1};
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_WINOGRAD4);
    a.h = a.w = a.oh = a.ow = 14;
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_WINOGRAD);
    a.h = a.w = a.oh = a.ow = 7;
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_PHASED);
    a.h = a.w = a.oh = a.ow = 56;
    a.stride_h = 2, a.oh = 28;
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_PHASED);
    CHECK(tsrt_conv(&a, TSRT_CONV_WINOGRAD, 0, 1, NULL) == -1);
    a.stride_h = 1, a.oh = 56;
    a.ldil_h = 2, a.oh = 111; /* input dilation: only im2col */
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_IM2COL);
    CHECK(tsrt_conv(&a, TSRT_CONV_PHASED, 0, 1, NULL) == -1);
    a.ldil_h = 1, a.oh = 56;
    a.kh = a.kw = 1, a.pad_h = a.pad_w = 0;
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_GEMM_1X1);
    a.stride_h = a.stride_w = 2, a.oh = a.ow = 28;
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_PHASED);
    tsrt_conv_args d = {.n = 1, .c = 32, .h = 112, .w = 112, .o = 32, .kh = 3, .kw = 3, .oh = 112, .ow = 112,
                        .groups = 32, .pad_h = 1, .pad_w = 1};
    CHECK(tsrt_conv_choose(&d) == TSRT_CONV_DEPTHWISE);
    /* A forced algorithm that does not apply computes nothing and says so. */
    CHECK(tsrt_conv(&a, TSRT_CONV_DEPTHWISE, 0, 1, NULL) == -1);
    CHECK(tsrt_conv(&a, TSRT_CONV_GEMM_1X1, 0, 1, NULL) == -1);
    a.groups = 3; /* 64 channels do not split into 3 groups */
    CHECK(tsrt_conv(&a, TSRT_CONV_AUTO, 0, 1, NULL) == -1);
}

/* ---- the tile epilogue (tsrt_tepi) ------------------------------------------ */

/* A conv (n c h w -> o, k x k, stride s, pad p, groups g) with a bias per
 * channel, a dense residual and ReLU6, through te and through the callback
 * alone: bit for bit equal, and the callback silent beside te. */
static int te_conv(int64_t n, int64_t c, int64_t h, int64_t o, int64_t k, int64_t st, int64_t p, int64_t g, int algo,
                   int nth, int beta, int split)
{
    const int64_t oh = (h + 2 * p - k) / st + 1, plane = oh * oh, ny = n * o * plane;
    float *x = malloc(sizeof(float) * (size_t)(n * c * h * h)), *w = malloc(sizeof(float) * (size_t)(o * c / g * k * k));
    float *y1 = malloc(sizeof(float) * (size_t)ny), *y2 = malloc(sizeof(float) * (size_t)ny);
    float *row = malloc(sizeof(float) * (size_t)(n * o)), *res = malloc(sizeof(float) * (size_t)ny);
    float *col = malloc(sizeof(float) * (size_t)plane);
    for (int64_t i = 0; i < n * c * h * h; i++) x[i] = frand();
    for (int64_t i = 0; i < o * c / g * k * k; i++) w[i] = frand();
    for (int64_t i = 0; i < ny; i++) y1[i] = y2[i] = beta ? frand() : NAN, res[i] = 3 * frand();
    for (int64_t i = 0; i < n * o; i++) row[i] = i % o == 2 ? NAN : frand();
    for (int64_t i = 0; i < plane; i++) col[i] = 0.5f * frand();
    /* clamped by -0 on 3 threads: the +0 of MAX_PZ then changes bits; a
     * position term (col) on the single-thread runs */
    tsrt_tepi te = {.row = row, .col = nth == 1 ? col : NULL, .res = res, .res_rs = plane,
                    .lo = nth == 3 ? -0.0f : 0.0f, .hi = 0.75f, .clamp = TSRT_TE_MAX | TSRT_TE_MAX_PZ | TSRT_TE_MIN};
    /* split: the terms, then te.rest (D138), against the whole callback */
    te_ctx e1 = {&te, 0, split}, e2 = e1;
    tsrt_conv_args cv = {.n = n, .c = c, .h = h, .w = h, .o = o, .kh = k, .kw = k, .oh = oh, .ow = oh, .groups = g,
                         .stride_h = st, .stride_w = st, .pad_h = p, .pad_w = p, .x = x, .wt = w, .y = y1,
                         .beta = beta, .epi = epi_te, .epi_ctx = &e1};
    unsigned char *ws = malloc(tsrt_conv_workspace(&cv) + 3);
    int ok = 1;
    for (int ith = 0; ith < nth; ith++) ok &= tsrt_conv(&cv, algo, ith, nth, ws + 3) == 0;
    te_ctx er = {&te, 0, 0};
    if (split) te.rest = epi_rest, te.rest_ctx = &er;
    cv.y = y2, cv.epi_ctx = &e2, cv.te = &te;
    for (int ith = 0; ith < nth; ith++) ok &= tsrt_conv(&cv, algo, ith, nth, ws + 3) == 0;
    ok &= memcmp(y1, y2, sizeof(float) * (size_t)ny) == 0;
    if (e2.calls) ok = 0, fprintf(stderr, "  the callback ran %d times beside te\n", e2.calls);
    if (split && !er.calls) ok = 0, fprintf(stderr, "  te.rest never ran\n");
    free(x), free(w), free(y1), free(y2), free(row), free(res), free(col), free(ws);
    return ok;
}

static void test_tile_epilogue(void)
{
    static const struct { int64_t n, c, h, o, k, s, p, g; int algo; } cases[] = {
        {1, 16, 23, 96, 1, 1, 0, 1, TSRT_CONV_GEMM_1X1},   /* few input channels: one pass, 7-column tail */
        {2, 24, 9, 13, 1, 1, 0, 1, TSRT_CONV_GEMM_1X1},    /* 2 images, rows past MR */
        {1, 300, 7, 20, 1, 1, 0, 1, TSRT_CONV_GEMM_1X1},   /* K blocks: te on the last only */
        {1, 3, 1, 50, 1, 1, 0, 1, TSRT_CONV_GEMM_1X1},     /* one position */
        {1, 32, 15, 16, 1, 1, 0, 1, TSRT_CONV_GEMM_1X1},   /* tiles 6 6 4 */
        {2, 17, 7, 32, 1, 1, 0, 1, TSRT_CONV_GEMM_1X1},    /* tiles 6 6 6 4 4, a 1-column panel */
        {1, 40, 10, 45, 1, 1, 0, 1, TSRT_CONV_GEMM_1X1},   /* a 3-row tile, a 4-column panel */
        {2, 8, 11, 12, 3, 2, 1, 2, TSRT_CONV_PHASED},      /* groups */
        {2, 8, 11, 12, 3, 2, 1, 2, TSRT_CONV_GROUPED},
        {3, 16, 6, 16, 3, 1, 1, 2, TSRT_CONV_GROUPED},     /* a 6x6 map: rows shorter than their line */
        {1, 5, 9, 7, 3, 1, 1, 1, TSRT_CONV_IM2COL},
        {1, 8, 12, 8, 3, 1, 1, 8, TSRT_CONV_DEPTHWISE},    /* channel vectors: whole planes (D137) */
        {1, 8, 13, 8, 3, 1, 1, 8, TSRT_CONV_DEPTHWISE},    /* AVX-512: positions in lanes */
        {2, 5, 15, 5, 3, 1, 1, 5, TSRT_CONV_DEPTHWISE},    /* AVX-512: lanes across rows */
        {2, 5, 7, 5, 3, 1, 1, 5, TSRT_CONV_DEPTHWISE},     /* 7x7: whole planes, a partial block */
        {1, 3, 37, 3, 3, 2, 1, 3, TSRT_CONV_DEPTHWISE},    /* stride 2, 19 outputs a row: 16 + 3 */
        {1, 4, 20, 4, 3, 2, 1, 4, TSRT_CONV_DEPTHWISE},    /* stride 2, even side */
        {2, 6, 12, 12, 3, 2, 1, 6, TSRT_CONV_DEPTHWISE},   /* multiplier 2: the per-channel path */
        {1, 8, 12, 8, 3, 1, 1, 1, TSRT_CONV_WINOGRAD},
        {1, 8, 17, 8, 3, 1, 1, 1, TSRT_CONV_WINOGRAD4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int nth = 1; nth <= 3; nth++)
            for (int split = 0; split < 2; split++)
                CHECK_MSG(te_conv(cases[i].n, cases[i].c, cases[i].h, cases[i].o, cases[i].k, cases[i].s, cases[i].p,
                                  cases[i].g, cases[i].algo, nth, nth == 2, split),
                          "te conv case %zu (%s) nth %d split %d", i, tsrt_conv_algo_name(cases[i].algo), nth, split);
}

/* ---- Winograd weights transformed once (D38) --------------------------------- */

/* Case (n, c, h, o, groups) with F(m x m) forced: the weights transformed
 * once (tsrt_conv_wg_pack in three uneven pieces of the output channels,
 * crossing groups) give the bits of the per-call transform, on nth
 * threads, with the tile epilogue; the copy's padding rows are written
 * (the buffer starts as NaN). */
static int wg_pre_case(int64_t n, int64_t c, int64_t h, int64_t o, int64_t g, int m, int nth)
{
    const int64_t plane = h * h, ny = n * o * plane, nw = o * c / g * 9;
    float *x = malloc(sizeof(float) * (size_t)(n * c * plane)), *w = malloc(sizeof(float) * (size_t)nw);
    float *y1 = malloc(sizeof(float) * (size_t)ny), *y2 = malloc(sizeof(float) * (size_t)ny);
    float *row = malloc(sizeof(float) * (size_t)(n * o)), *res = malloc(sizeof(float) * (size_t)ny);
    for (int64_t i = 0; i < n * c * plane; i++) x[i] = frand();
    for (int64_t i = 0; i < nw; i++) w[i] = frand();
    for (int64_t i = 0; i < ny; i++) y1[i] = y2[i] = NAN, res[i] = frand();
    for (int64_t i = 0; i < n * o; i++) row[i] = frand();
    tsrt_tepi te = {.row = row, .res = res, .res_rs = plane, .clamp = TSRT_TE_MAX | TSRT_TE_MAX_PZ};
    tsrt_conv_args cv = {.n = n, .c = c, .h = h, .w = h, .o = o, .kh = 3, .kw = 3, .oh = h, .ow = h, .groups = g,
                         .pad_h = 1, .pad_w = 1, .x = x, .wt = w, .y = y1, .te = &te};
    const size_t ub = tsrt_conv_wg_size(&cv, m);
    float *u = malloc(ub);
    for (size_t i = 0; i < ub / sizeof(float); i++) u[i] = NAN;
    const int64_t cut[] = {0, o / 3, o / 3 + 1 + o / 4, o};
    for (int q = 0; q < 3; q++) tsrt_conv_wg_pack(&cv, m, cut[q], cut[q + 1], u);
    int ok = 1;
    for (size_t i = 0; i < ub / sizeof(float); i++) ok &= !isnan(u[i]);
    const int algo = m == 2 ? TSRT_CONV_WINOGRAD : TSRT_CONV_WINOGRAD4;
    unsigned char *ws = malloc(tsrt_conv_workspace(&cv));
    for (int ith = 0; ith < nth; ith++) ok &= tsrt_conv(&cv, algo, ith, nth, ws) == 0;
    cv.y = y2, cv.wu = u, cv.wu_m = m;
    for (int ith = 0; ith < nth; ith++) ok &= tsrt_conv(&cv, algo, ith, nth, ws) == 0;
    ok &= memcmp(y1, y2, sizeof(float) * (size_t)ny) == 0;
    free(x), free(w), free(y1), free(y2), free(row), free(res), free(u), free(ws);
    return ok;
}

static void test_wg_pretransformed(void)
{
    static const struct { int64_t n, c, h, o, g; } cases[] = {
        {1, 16, 14, 16, 1}, /* one block of rows */
        {2, 24, 9, 20, 2},  /* groups; 10 outputs per group: padding rows */
        {1, 40, 11, 70, 1}, /* rows past several micro-tiles */
        {1, 8, 7, 3, 1},    /* fewer outputs than a micro-tile */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int m = 2; m <= 4; m += 2)
            for (int nth = 1; nth <= 3; nth++)
                CHECK_MSG(wg_pre_case(cases[i].n, cases[i].c, cases[i].h, cases[i].o, cases[i].g, m, nth),
                          "pre-transformed case %zu F(%d) nth %d", i, m, nth);
    /* A per-channel scale after the transform (tsrt_conv_wg_scale) against
     * the transform of the scaled weights: equal up to rounding, every
     * group's rows, padding rows untouched (zero). */
    for (int m = 2; m <= 4; m += 2) {
        const int64_t O = 20, C = 24, G = 2;
        float *w = malloc(sizeof(float) * (size_t)(O * C / G * 9)), *ws_ = malloc(sizeof(float) * (size_t)(O * C / G * 9));
        float sc[20];
        for (int64_t o = 0; o < O; o++) {
            sc[o] = 0.5f + 0.1f * (float)(o % 7);
            for (int64_t q = 0; q < C / G * 9; q++) w[o * C / G * 9 + q] = frand(), ws_[o * C / G * 9 + q] = w[o * C / G * 9 + q] * sc[o];
        }
        tsrt_conv_args b = {.n = 1, .c = C, .h = 9, .w = 9, .o = O, .kh = 3, .kw = 3, .oh = 9, .ow = 9, .groups = G,
                            .pad_h = 1, .pad_w = 1, .wt = w};
        const size_t n = tsrt_conv_wg_size(&b, m) / sizeof(float);
        float *u1 = malloc(n * sizeof(float)), *u2 = malloc(n * sizeof(float));
        tsrt_conv_wg_pack(&b, m, 0, O, u1);
        for (int64_t o = 0; o < O; o++) tsrt_conv_wg_scale(&b, m, o, sc[o], u1);
        b.wt = ws_;
        tsrt_conv_wg_pack(&b, m, 0, O, u2);
        int ok = 1;
        for (size_t i = 0; i < n; i++) ok &= fabsf(u1[i] - u2[i]) <= 4e-6f * (1.0f + fabsf(u2[i]));
        CHECK_MSG(ok, "F(%d): scaling the transformed weights differs from transforming the scaled ones", m);
        free(w), free(ws_), free(u1), free(u2);
    }
    /* Which F(m) is worth transforming once, and what AUTO then takes: on
     * 7x7 maps Winograd only with the weights transformed; weights for
     * another m are not used. */
    tsrt_conv_args a = {.n = 1, .c = 16, .h = 56, .w = 56, .o = 16, .kh = 3, .kw = 3, .oh = 56, .ow = 56, .pad_h = 1,
                        .pad_w = 1};
    CHECK(tsrt_conv_wg_pre(&a) == 4);
    a.h = a.w = a.oh = a.ow = 14;
    CHECK(tsrt_conv_wg_pre(&a) == 2);
    a.h = a.w = a.oh = a.ow = 7;
    CHECK(tsrt_conv_wg_pre(&a) == 2);
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_PHASED);
    static float dummy[1];
    a.wu = dummy, a.wu_m = 2;
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_WINOGRAD);
    a.wu_m = 4; /* prepared weights name their algorithm (D126) */
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_WINOGRAD4);
    a.wu_m = TSRT_CONV_PRE_PLAIN;
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_PHASED);
    a.wu = NULL, a.wu_m = 0;
    a.h = a.w = a.oh = a.ow = 6; /* 36 positions: 9 tiles */
    CHECK(tsrt_conv_wg_pre(&a) == 0);
    a.h = a.w = a.oh = a.ow = 14, a.c = 8;
    CHECK(tsrt_conv_wg_pre(&a) == 0);
    a.c = 16, a.stride_h = 2, a.oh = 7;
    CHECK(tsrt_conv_wg_pre(&a) == 0);
}

/* ---- GEMM_T: positions as rows, W^T packed once (D41) ------------------- */

#if TSRT_HAVE_PT
/* Case (n, c, h x w, o, k x k kernel, stride st, pad p) on nth threads:
 * the packed W^T (three uneven thread shares into a NaN-filled buffer:
 * every float written) through GEMM_T against the double-precision
 * product with the epilogue applied after it, within (K + 3) eps sum
 * |terms|; te (row with a NaN channel, col, residual, clamp: the PT_*
 * bits of terms; 0: no te) or, with te_cb, the same epilogue as a
 * callback; beta adds to y. */
enum { PT_ROW = 1, PT_COL = 2, PT_RES = 4, PT_CLAMP = 8, PT_ALL = 15 };
static int pt_case_terms(int64_t n, int64_t c, int64_t h, int64_t wd, int64_t o, int64_t k, int64_t st, int64_t p,
                         int nth, int beta, int te_cb, int terms)
{
    const int64_t oh = (h + 2 * p - k) / st + 1, ow = (wd + 2 * p - k) / st + 1, P = oh * ow, ny = n * o * P;
    const int64_t K = c * k * k;
    float *x = malloc(sizeof(float) * (size_t)(n * c * h * wd)), *w = malloc(sizeof(float) * (size_t)(o * K));
    float *y = malloc(sizeof(float) * (size_t)ny), *y0 = malloc(sizeof(float) * (size_t)ny);
    float *row = malloc(sizeof(float) * (size_t)(n * o)), *col = malloc(sizeof(float) * (size_t)P);
    float *res = malloc(sizeof(float) * (size_t)ny);
    for (int64_t i = 0; i < n * c * h * wd; i++) x[i] = frand();
    for (int64_t i = 0; i < o * K; i++) w[i] = frand();
    for (int64_t i = 0; i < ny; i++) y[i] = y0[i] = beta ? frand() : NAN, res[i] = 3 * frand();
    for (int64_t i = 0; i < n * o; i++) row[i] = i % o == 2 ? NAN : frand();
    for (int64_t i = 0; i < P; i++) col[i] = frand();
    tsrt_tepi te = {.row = terms & PT_ROW ? row : NULL, .col = terms & PT_COL ? col : NULL,
                    .res = terms & PT_RES ? res : NULL, .res_rs = P, .lo = 0.0f, .hi = 0.75f,
                    .clamp = terms & PT_CLAMP ? TSRT_TE_MAX | TSRT_TE_MAX_PZ | TSRT_TE_MIN : 0};
    te_ctx e = {&te, 0, 0};
    tsrt_conv_args cv = {.n = n, .c = c, .h = h, .w = wd, .o = o, .kh = k, .kw = k, .oh = oh, .ow = ow,
                         .stride_h = st, .stride_w = st, .pad_h = p, .pad_w = p, .x = x, .wt = w, .y = y,
                         .beta = beta};
    if (te_cb) cv.epi = epi_te, cv.epi_ctx = &e;
    else if (terms) cv.te = &te;
    int ok = 1; /* the path applies to any channel count; tsrt_conv_pre says where it pays */
    const size_t ub = tsrt_conv_pre_size(&cv, 1);
    float *u = aligned_alloc(64, (ub + 63) / 64 * 64); /* a program's prepared weights are aligned */
    for (size_t i = 0; i < ub / sizeof(float); i++) u[i] = NAN;
    const int64_t cut[] = {0, o / 3, o / 3 + 1 + o / 4, o};
    for (int q = 0; q < 3; q++) tsrt_conv_pre_pack(&cv, 1, cut[q], cut[q + 1], u);
    for (size_t i = 0; i < ub / sizeof(float); i++) ok &= !isnan(u[i]);
    cv.wu = u, cv.wu_m = 1;
    ok &= tsrt_conv_choose(&cv) == TSRT_CONV_GEMM_T;
    unsigned char *ws = malloc(tsrt_conv_workspace(&cv));
    for (int ith = 0; ith < nth; ith++) ok &= tsrt_conv(&cv, TSRT_CONV_AUTO, ith, nth, ws) == 0;
    if (te_cb && e.calls == 0) ok = 0;
    for (int64_t img = 0; img < n; img++)
        for (int64_t oc = 0; oc < o; oc++)
            for (int64_t q = 0; q < P; q++) {
                double d = 0, mag = 0;
                for (int64_t ci = 0; ci < c; ci++)
                    for (int64_t uu = 0; uu < k; uu++)
                        for (int64_t vv = 0; vv < k; vv++) {
                            const int64_t iy = q / ow * st - p + uu, ix = q % ow * st - p + vv;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                            const double t = (double)w[((oc * c + ci) * k + uu) * k + vv] *
                                             x[((img * c + ci) * h + iy) * wd + ix];
                            d += t, mag += fabs(t);
                        }
                const int64_t yi = (img * o + oc) * P + q;
                if (beta) d += y0[yi], mag += fabs(y0[yi]);
                float v = (float)d;
                te_ctx e2 = {&te, 0, 0};
                if (terms || te_cb) epi_te(&e2, &v, 0, 1, img * o + oc, q, 1, 1);
                const double tol = (double)(K + 3) * FLT_EPSILON * mag + 1e-6;
                if (isnan(v) ? !isnan(y[yi]) : !(fabs((double)y[yi] - v) <= tol)) {
                    if (ok) fprintf(stderr, "  pt: y[%lld][%lld][%lld] = %g, want %g\n", (long long)img,
                                    (long long)oc, (long long)q, (double)y[yi], (double)v);
                    ok = 0;
                }
            }
    free(x), free(w), free(y), free(y0), free(row), free(col), free(res), free(u), free(ws);
    return ok;
}

static int pt_case(int64_t n, int64_t c, int64_t h, int64_t wd, int64_t o, int64_t k, int64_t st, int64_t p,
                   int nth, int beta, int te_cb)
{
    return pt_case_terms(n, c, h, wd, o, k, st, p, nth, beta, te_cb, PT_ALL);
}
#endif

/* The form the shape's rules pick, without timing (D126). */
static int pre_rules(const tsrt_conv_args *a)
{
    const tsrt_conv_args v = tsrt__conv_norm(a);
    return tsrt__conv_pre_rules(&v);
}

/* A prepared form tuning may pick (the Winograd tiles-as-rows ones only
 * where AVX-512's GEMM_T tile kernel exists). */
static int valid_form(int m)
{
    return m == TSRT_CONV_PRE_PLAIN || m == 1 || m == 2 || m == 4 ||
           (TSRT_HAVE_WGT && (m == TSRT_CONV_PRE_WGT2 || m == TSRT_CONV_PRE_WGT4));
}

/* tsrt_conv_pre times the candidate forms once per shape (D126): its
 * answer is one of them, the same at every later call (the packer's
 * threads and the kernel ask again), and a conv run with weights prepared
 * in that form computes the conv. */
static void test_tuned_form(void)
{
    tsrt_conv_args a = {.n = 2, .c = 32, .h = 12, .w = 12, .o = 32, .kh = 3, .kw = 3, .oh = 12, .ow = 12,
                        .pad_h = 1, .pad_w = 1};
    const int m = tsrt_conv_pre(&a);
    CHECK_MSG(valid_form(m), "form %d", m);
    for (int i = 0; i < 3; i++) CHECK(tsrt_conv_pre(&a) == m);
    a.n = 5; /* on one thread the batch is not part of the shape's key */
    CHECK(tsrt_conv_pre(&a) == m);
    /* timed split over 2 threads (D130): one image, then two; each a
     * valid form, the same at every call */
    for (int64_t n = 1; n <= 2; n++) {
        tsrt_conv_args t = a;
        t.n = n, t.threads = 2;
        const int mt = tsrt_conv_pre(&t);
        CHECK_MSG(valid_form(mt), "form %d on 2 threads", mt);
        for (int i = 0; i < 2; i++) CHECK(tsrt_conv_pre(&t) == mt);
    }
    a.n = 2;
    /* every form's result against the plain path */
    const int forms[] = {TSRT_CONV_PRE_PLAIN, 1, 2, 4, TSRT_CONV_PRE_WGT2, TSRT_CONV_PRE_WGT4};
    const size_t nx = 2 * 32 * 144, nw = 32 * 32 * 9, ny = 2 * 32 * 144;
    float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw);
    float *y0 = malloc(sizeof(float) * ny), *y1 = malloc(sizeof(float) * ny);
    for (size_t i = 0; i < nx; i++) x[i] = frand();
    for (size_t i = 0; i < nw; i++) w[i] = frand();
    a.x = x, a.wt = w;
    for (int f = 0; f < 6; f++) {
        if (!TSRT_HAVE_WGT && (forms[f] == TSRT_CONV_PRE_WGT2 || forms[f] == TSRT_CONV_PRE_WGT4))
            continue; /* AVX-512's GEMM_T tile kernel */
        tsrt_conv_args b = a;
        const size_t pre = tsrt_conv_pre_size(&b, forms[f]);
        float *u = aligned_alloc(64, (pre + 127) / 64 * 64);
        tsrt_conv_pre_pack(&b, forms[f], 0, b.o, u);
        b.wu = u, b.wu_m = forms[f], b.y = f ? y1 : y0;
        void *ws = malloc(tsrt_conv_workspace(&b) + 128);
        CHECK(tsrt_conv(&b, TSRT_CONV_AUTO, 0, 1, ws) == 0);
        double worst = 0, big = 0; /* Winograd's transforms lose about a digit: relative to the largest */
        for (size_t i = 0; f && i < ny; i++) worst = fmax(worst, fabs((double)y1[i] - y0[i])), big = fmax(big, fabs(y0[i]));
        CHECK_MSG(worst <= 1e-5 * big, "form %d: max difference %g of %g", forms[f], worst, big);
        free(u), free(ws);
    }
    free(x), free(w), free(y0), free(y1);
}

static void test_positions_as_rows(void)
{
    tsrt_conv_args a = {.n = 1, .c = TSRT_PT_KMIN, .h = 7, .w = 7, .o = 64, .kh = 1, .kw = 1, .oh = 7, .ow = 7};
    static float dummy[16] __attribute__((aligned(64)));
    static const struct { int64_t n, c, h, w, o, k, s, p; } cases[] = {
        {1, 64, 7, 7, 64, 1, 1, 0},   /* tiles 12 12 12 13 rows (tsrt__pt_p0) */
        {2, 70, 5, 3, 45, 1, 1, 0},   /* 2 images; tiles 7 8 (14-row kernel masked); panels 32 13 */
        {1, 16, 1, 26, 40, 3, 1, 1},  /* tiles 13 13 within a phase row: consecutive */
        {1, 16, 1, 24, 40, 3, 1, 1},  /* tiles 12 12 within a phase row */
        {1, 20, 2, 26, 33, 1, 1, 0},  /* 1x1 in place, 4 x 13 consecutive */
        {1, 16, 14, 14, 40, 3, 2, 1}, /* 7x7 output, stride 2: 12 and 13 across rows */
        {1, 12, 3, 14, 40, 1, 1, 0},  /* 42 = 3 x 14: every tile full */
        {1, 400, 4, 4, 33, 1, 1, 0},  /* K past a GEMM block; a 1-channel panel */
        {3, 96, 1, 1, 40, 1, 1, 0},   /* one position per image */
        {1, 16, 7, 7, 40, 3, 1, 1},   /* 3x3: tiles across output rows of 7 */
        {2, 9, 11, 13, 20, 3, 2, 1},  /* stride 2: 4 phase images; rows of 7 */
        {1, 3, 23, 23, 35, 7, 2, 3},  /* the stem's shape, smaller */
        {1, 24, 12, 12, 32, 1, 2, 0}, /* a strided 1x1: one subsampled phase */
        {1, 5, 9, 9, 17, 3, 1, 0},    /* no padding */
        /* tiles across images (tsrt__pt_fold, D150) */
        {8, 40, 3, 3, 70, 1, 1, 0},   /* 1x1 in place, 72 positions; 3 threads split the panels */
        {4, 20, 3, 3, 33, 3, 1, 1},   /* 3x3 on a 3x3 map: four phase copies */
        {5, 16, 6, 6, 40, 3, 2, 1},   /* stride 2 to 3x3, 5 images: 2 threads split the panels */
        {10, 24, 2, 2, 32, 1, 1, 0},  /* 2x2 maps: runs of 8 + 2 images, or 5 per thread */
        /* 6 x 16 tiles (D184): last tiles of 1 to 5 positions, packed
         * tiles in chunks of one (K = 4608) */
        {1, 100, 3, 3, 40, 1, 1, 0},  /* 9 = 6 + 3 (4-row kernel) */
        {1, 30, 1, 11, 17, 1, 1, 0},  /* 11 = 6 + 5 (6-row kernel, one row repeated) */
        {1, 30, 1, 7, 17, 1, 1, 0},   /* 7 = 6 + 1 */
        {1, 30, 2, 4, 17, 1, 1, 0},   /* 8 = 6 + 2 */
        {1, 512, 5, 5, 20, 3, 1, 1},  /* 25 positions, K = 4608 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int nth = 1; nth <= 3; nth++)
            CHECK_MSG(pt_case(cases[i].n, cases[i].c, cases[i].h, cases[i].w, cases[i].o, cases[i].k, cases[i].s,
                              cases[i].p, nth, nth == 2, nth == 3),
                      "positions-as-rows case %zu nth %d", i, nth);
    /* without beta or a position term the channel term and the clamp run
     * in the tile kernel, the residual in the store of a full tile (D188):
     * each mix of terms, on 6x6 maps (whole tiles; panels 16 16 8) and a
     * 3x3 map folded across images (tiles that span two) */
    static const int terms[] = {0, PT_ROW, PT_CLAMP, PT_ROW | PT_CLAMP, PT_RES, PT_ROW | PT_RES,
                                PT_ROW | PT_RES | PT_CLAMP, PT_ROW | PT_COL | PT_CLAMP};
    for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++)
        for (int nth = 1; nth <= 2; nth++) {
            CHECK_MSG(pt_case_terms(3, 64, 6, 6, 40, 1, 1, 0, nth, 0, 0, terms[i]), "terms %d nth %d", terms[i], nth);
            CHECK_MSG(pt_case_terms(4, 20, 3, 3, 33, 1, 1, 0, nth, 0, 0, terms[i]), "terms %d (3x3) nth %d", terms[i],
                      nth);
        }
    /* the scale folded into the packed copy is the packed copy of the
     * scaled weights, bit for bit */
    {
        enum { O = 40, C = 64 };
        float *w = malloc(sizeof(float) * O * C), *w2 = malloc(sizeof(float) * O * C);
        for (int i = 0; i < O * C; i++) w[i] = frand(), w2[i] = w[i] * (0.5f + 0.125f * (float)(i / C % 5));
        tsrt_conv_args b = a;
        b.o = O, b.c = C, b.wt = w;
        const size_t nb = tsrt_conv_pre_size(&b, 1);
        float *u1 = malloc(nb), *u2 = malloc(nb);
        tsrt_conv_pre_pack(&b, 1, 0, O, u1);
        for (int o = 0; o < O; o++) tsrt_conv_pre_scale(&b, 1, o, 0.5f + 0.125f * (float)(o % 5), u1);
        b.wt = w2;
        tsrt_conv_pre_pack(&b, 1, 0, O, u2);
        CHECK(memcmp(u1, u2, nb) == 0);
        free(w), free(w2), free(u1), free(u2);
    }
    CHECK(pre_rules(&a) == 1);
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_GEMM_1X1); /* no packed weights */
    CHECK(tsrt_conv(&a, TSRT_CONV_GEMM_T, 0, 1, NULL) == -1);
    a.wu = dummy, a.wu_m = 1;
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_GEMM_T);
    a.wu_m = 2;
    CHECK(tsrt_conv_choose(&a) == TSRT_CONV_GEMM_1X1);
    /* 6 x 16 tiles: W^T not aligned for their loads is refused */
    if (!TSRT_HAVE_WGT) {
        a.wu = (float *)(void *)((char *)dummy + 4);
        CHECK(tsrt_conv(&a, TSRT_CONV_GEMM_T, 0, 1, NULL) == -1);
        a.wu = dummy;
    }
    a.wu = NULL, a.wu_m = 0;
    a.c = TSRT_PT_KMIN - 1;
    CHECK(pre_rules(&a) == 0); /* few inputs per output: GEMM_1X1 */
#if !TSRT_HAVE_WGT
    /* 6 x 16 tiles (D184): 960 -> 160 on a 3x3 map, 160 channels x 10
     * rows (6 + 4) against 162 x 16 columns; 64 -> 64 on 12x12, 64 x 144
     * against 66 x 144: 3% fuller, not taken */
    a.c = 960, a.o = 160;
    a.h = a.w = a.oh = a.ow = 3;
    CHECK(pre_rules(&a) == 1);
    a.c = a.o = 64;
    a.h = a.w = a.oh = a.ow = 12;
    CHECK(pre_rules(&a) == 0);
#else
    /* 28x28, 56 channels: 56 of 64 columns of this path's tiles hold
     * outputs, GEMM_1X1's 784 of 800 positions and all 56 channels */
    a.c = 2048, a.o = 56;
    a.h = a.w = a.oh = a.ow = 28;
    CHECK(pre_rules(&a) == 0);
    a.o = 128; /* 128 of 140 rows: 11.6% fuller */
    CHECK(pre_rules(&a) == 1);
    a.o = 256; /* 256 of 266: 6% */
    CHECK(pre_rules(&a) == 0);
    a.o = 128, a.groups = 2;
    CHECK(pre_rules(&a) == 0); /* groups */
    /* 3x3 stride 1: F(4x4) where it has the tiles, else GEMM_T when its
     * tiles are fuller (512 channels on 7x7: 64 of 70 rows, 49 of 64
     * columns for GEMM_1X1's layout; on 14x14 too, D136), else F(2x2) */
    tsrt_conv_args b = {.n = 1, .c = 512, .h = 7, .w = 7, .o = 512, .kh = 3, .kw = 3, .oh = 7, .ow = 7,
                        .pad_h = 1, .pad_w = 1};
    CHECK(pre_rules(&b) == 1);
    b.c = b.o = 16; /* 16 of 28 rows against 16 of 32 columns: not fuller */
    CHECK(pre_rules(&b) == 2);
    b.c = b.o = 512, b.h = b.w = b.oh = b.ow = 14;
    CHECK(pre_rules(&b) == 1);
    b.h = b.w = b.oh = b.ow = 28;
    CHECK(pre_rules(&b) == 4);
    b.stride_h = b.stride_w = 2, b.oh = b.ow = 14; /* stride 2: no Winograd */
    CHECK(pre_rules(&b) == 1);
#endif
}

static void test_checker_fails(void)
{
    ccase t = {1, 4, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0};
    CHECK(run_conv(&t, TSRT_CONV_IM2COL, 1, 0) == 1);
    CHECK(run_conv(&t, TSRT_CONV_IM2COL, 1, 1) == 0);
}

/* Winograd tiles numbered over the batch (D141): a panel runs on from
 * one image into the next, so the images it spans are copied into a ring
 * of slots. F(4x4) on a 6x6 map (4 tiles: a panel spans 8 images), F(2x2)
 * on 10x10 (25 tiles: a panel spans two, a thread's share starts inside
 * an image), F(4x4) on 13x13 (16 tiles, partial tiles at the edges),
 * several blocks of output channels (V of a chunk re-read per block),
 * groups, beta, the epilogue and images a gap apart. */
static void test_wg_batch(void)
{
    const ccase cases[] = {
        /* n  c   h   w   o   kh kw g  sh sw ph pw phh pwh dh dw lh lw beta epi bs */
        {9, 16, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},
        {5, 16, 10, 10, 18, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {3, 32, 13, 13, 20, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1},
        {4, 64, 6, 6, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_conv(&cases[i]);
}

/* GROUPED (tsrt_conv_grp.h): RegNet's groups of 8 in and 8 out, 3x3 at
 * stride 1 and 2 on 3x3, 6x6 and odd maps (a line of positions shorter
 * than one 24-wide tile, and several tiles); 13 outputs per group (R-row
 * blocks and a remainder of each size on AVX2 and AVX-512); one input
 * channel with 6 outputs (a depthwise multiplier DEPTHWISE does not
 * take); a grouped 1x1 at stride 1 (copied, not read in place), 5x3
 * kernels with dilation, negative pads, beta, wide image strides. */
static void test_grouped(void)
{
    const ccase cases[] = {
        /* n  c    h   w   o    kh kw g  sh sw ph pw phh pwh dh dw lh lw beta epi bs */
        {2, 16, 3, 3, 16, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},   /* 3x3 map: a short line */
        {3, 24, 6, 6, 24, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* 6x6, beta, wide strides */
        {1, 16, 13, 12, 16, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0}, /* stride 2, odd map */
        {2, 12, 9, 10, 39, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},  /* 13 outputs per group */
        {1, 4, 8, 7, 24, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},    /* one input, 6 outputs */
        {2, 18, 5, 11, 12, 1, 1, 6, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0},  /* 1x1 stride 1 */
        {1, 10, 12, 14, 10, 5, 3, 5, 1, 2, 2, 1, 2, 1, 2, 1, 1, 1, 0, 1, 1}, /* 5x3, dilation, stride 1x2 */
        {1, 8, 10, 9, 16, 3, 3, 2, 2, 1, -1, 2, 0, 1, 1, 1, 1, 1, 1, 0, 0},  /* negative pad, no epilogue */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_conv(&cases[i]);
    /* chosen for RegNet's groups of 8, not for 64 outputs per group nor for depthwise */
    tsrt_conv_args r = {.n = 1, .c = 48, .h = 24, .w = 24, .o = 48, .kh = 3, .kw = 3, .oh = 24, .ow = 24,
                        .groups = 6, .pad_h = 1, .pad_w = 1};
    CHECK(tsrt_conv_choose(&r) == TSRT_CONV_GROUPED);
    r.c = r.o = 128, r.groups = 2;
    CHECK(tsrt_conv_choose(&r) != TSRT_CONV_GROUPED);
    r.groups = 128;
    CHECK(tsrt_conv_choose(&r) == TSRT_CONV_DEPTHWISE);
    /* only where it applies: one group, or input dilation, refused */
    tsrt_conv_args a = {.n = 1, .c = 8, .h = 5, .w = 5, .o = 8, .kh = 3, .kw = 3, .oh = 3, .ow = 3};
    CHECK(tsrt_conv(&a, TSRT_CONV_GROUPED, 0, 1, NULL) == -1);
    a.groups = 2, a.ldil_h = 2, a.oh = 7;
    CHECK(tsrt_conv(&a, TSRT_CONV_GROUPED, 0, 1, NULL) == -1);
}

int main(void)
{
    printf("tsrt ISA %d (0 generic, 1 AVX2, 2 AVX-512)\n", TSRT_ISA);
    test_checker_fails();
    test_choose();
    test_combinations();
    test_shapes();
    test_fast_paths();
    test_pointwise();
    test_tile_epilogue();
    test_wg_pretransformed();
    test_positions_as_rows();
    test_tuned_form();
    test_dw_small_maps();
    test_ib_small_maps();
    test_wg_batch();
    test_grouped();
    return check_report();
}
