/* tsrt_conv.h — fp32 2-D convolution (cross-correlation), NCHW input and
 * output, OIHW weights, groups, strides, padding (any sign), kernel and
 * input dilation, with the GEMM epilogue callback and (ith, nth) threading.
 *
 *   tsrt_conv_args cv = { .n = 1, .c = 64, .h = 56, .w = 56, .o = 64, .kh = 3, .kw = 3,
 *                         .oh = 56, .ow = 56, .pad_h = 1, .pad_w = 1,
 *                         .x = x, .wt = wt, .y = y, .epi = bias_relu, .epi_ctx = &b };
 *   int algo = tsrt_conv_choose(&cv);           // once per shape (compile time)
 *   size_t per_thread = tsrt_conv_workspace(&cv);
 *   tsrt_conv(&cv, algo, ith, nth, ws[ith]);    // on each of nth threads
 *
 * Meaning (as the conv primitive, docs/primitives.md, in 2-D):
 *   y[n][o][i][j] = (beta ? y : 0) + sum over c < C/G, u < KH, v < KW of
 *       w[o][c][u][v] * X[n][g*C/G + c][i*sh - ph + u*dh][j*sw - pw + v*dw]
 *   with g = o / (O/G), X the input dilated by (lh, lw) (lh-1 zeros between
 *   rows) and zero outside. pad_h/pad_w are the low pads; the high pads
 *   follow from oh/ow, which the caller computes. A 1-D conv is h = kh = 1.
 *
 * Ten algorithms, all reporting to the epilogue in GEMM coordinates:
 * m0 = image * O + output channel, n0 = i * OW + j, rs = OH*OW, cs = 1.
 *   IM2COL     implicit GEMM per (image, group): C[o][i*OW+j] = W[o][(c,u,v)]
 *              · X'[(c,u,v)][i*OW+j]; the packed-B micro-panels of X' are
 *              built straight from the image (no im2col buffer).
 *   PHASED     the same GEMM, X' packed from a zero-padded copy of the
 *              input split by stride phase: two vector moves per row of a
 *              micro-panel, no border tests (any stride, pad, dilation).
 *   GEMM_1X1   1x1, stride 1, no padding: X' is the image itself, a
 *              (C/G) x (H*W) row-major matrix: plain GEMM packing; with
 *              K <= KC, a loop nest of its own (the whole K in one pass,
 *              the epilogue per tile while in L1: D29, tsrt_conv_gemm.h).
 *   WINOGRAD   3x3 stride 1: Winograd F(2x2, 3x3), 16 GEMMs over 2x2 tiles.
 *   WINOGRAD4  3x3 stride 1: Winograd F(4x4, 3x3), 36 GEMMs over 4x4 tiles.
 *   GEMM_T     implicit GEMM with positions as the tile's rows, X' read in
 *              place or from PHASED's copy, W^T packed once per program
 *              (AVX-512, one group; tsrt_conv_pt.h).
 *   WINOGRAD4_T, WINOGRAD_T  F(4x4) and F(2x2) whose GEMMs run GEMM_T's
 *              tile kernel with the tiles as rows, U^T packed once per
 *              program (AVX-512, one group; tsrt_conv_wgt.h; only where
 *              tuning picks them).
 *   GROUPED    few output channels per group: direct, the positions of
 *              PHASED's copy in the vector lanes, W as given
 *              (tsrt_conv_grp.h).
 *   DEPTHWISE  one input channel per group: 8 channels at a time in the
 *              vector lanes, on a transposed, zero-padded tile of input
 *              rows (KH*KW vector multiply-adds per output position, any
 *              stride, dilation, multiplier); input dilation: a direct
 *              loop per row and tap (tsrt_conv_dw.h).
 * For few output positions (N <= 256: 14x14, 7x7 maps) the GEMMs read the
 * weights in place instead of packing them (tsrt_gemm.h). */
#ifndef TSRT_CONV_H
#define TSRT_CONV_H

#ifndef TSRT_CONV_ARGS_H
#include "tsrt_conv_args.h"
#endif
#ifndef TSRT_CONV_GEMM_H
#include "tsrt_conv_gemm.h"
#endif
#ifndef TSRT_CONV_WG_H
#include "tsrt_conv_wg.h"
#endif
#ifndef TSRT_CONV_DW_H
#include "tsrt_conv_dw.h"
#endif
#ifndef TSRT_CONV_GRP_H
#include "tsrt_conv_grp.h"
#endif
#ifndef TSRT_CONV_PT_H
#include "tsrt_conv_pt.h"
#endif
#ifndef TSRT_CONV_PTP_H
#include "tsrt_conv_ptp.h"
#endif
#ifndef TSRT_CONV_WGT_H
#include "tsrt_conv_wgt.h"
#endif

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Which algorithm, and why (times: bench/conv_resnet50.c, docs/kernels.md):
 *  - one input channel per group and at most 4 outputs per group
 *    (depthwise, MobileNet): as a GEMM, M = O/G would fill at most 4 of the
 *    MR = 6 (14) rows of the micro-kernel and the im2col packing (K = 9 per
 *    output column) would cost as much as the multiply; the direct kernel
 *    reads each input once per tap from L1 and is memory-bound instead;
 *  - a conv whose weights were packed for GEMM_T (tsrt_conv_pre == 1:
 *    AVX-512, one group, its tiles 10% fuller than the other paths' (5%
 *    against PHASED, D63), not a 3x3 stride-1 conv that Winograd takes
 *    unaided) runs GEMM_T;
 *  - several input channels per group and at most TSRT__GRP_OG_MAX outputs
 *    (RegNet, ResNeXt): GROUPED, unless weights were prepared for Winograd
 *    (as a GEMM per group, M = O/G rows fill few micro-kernel tiles and
 *    every packed panel of X' serves only those rows: D181);
 *  - 1x1, stride 1, no padding, no input dilation: the image already is the
 *    GEMM's B matrix (C/G x H*W, row-major), so the plain GEMM packing (two
 *    vector moves per 16 floats) replaces the im2col index arithmetic;
 *  - 3x3, stride 1, no dilation, >= 16 channels in and out per group:
 *    Winograd, F(4x4) when both output sides are >= 24 (ResNet's 56x56 and
 *    28x28: 0.35-0.4x the direct time), F(2x2) from 128 output positions
 *    (14x14: 0.53x, F(4x4) has only 16 tiles there); below that (7x7) the
 *    filter transform is not paid back (5.8 ms against 3.9 direct);
 *  - everything else without input dilation: PHASED (im2col's per-element
 *    index arithmetic and border tests were ~30% of a 3x3 conv with 64
 *    output channels; stride-2 convs 0.56-0.76x the im2col time);
 *  - with input dilation (transposed conv): IM2COL.
 * Not here: direct NCHWc kernels (they need a blocked layout kept across
 * ops). */
/* Whether F(2x2) pays on this map even with the weights transformed per
 * call (from 128 positions: 14x14). */
static inline int tsrt__wg2_unaided(const tsrt_conv_args *v)
{
    return v->oh * v->ow >= 128;
}

/* The GEMM path without Winograd or prepared weights. */
static inline int tsrt__conv_plain(const tsrt_conv_args *v)
{
    if (tsrt__grp_chosen(v)) return TSRT_CONV_GROUPED;
    if (tsrt__conv_is_1x1(v)) return TSRT_CONV_GEMM_1X1;
    return v->ldil_h == 1 && v->ldil_w == 1 ? TSRT_CONV_PHASED : TSRT_CONV_IM2COL;
}

TSRT_FN int tsrt_conv_choose(const tsrt_conv_args *args)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    if (v.c / v.groups == 1 && v.o / v.groups <= 4 && v.groups > 1) return TSRT_CONV_DEPTHWISE;
    /* prepared weights say which algorithm they were prepared for */
    if (v.wu && v.wu_m == TSRT_CONV_PRE_PLAIN) return tsrt__conv_plain(&v);
    if (v.wu && v.wu_m == 1 && tsrt__pt_applies(&v)) return TSRT_CONV_GEMM_T;
    if (v.wu && (v.wu_m == TSRT_CONV_PRE_WGT4 || v.wu_m == TSRT_CONV_PRE_WGT2) && tsrt__wgt_applies(&v))
        return v.wu_m == TSRT_CONV_PRE_WGT4 ? TSRT_CONV_WINOGRAD4_T : TSRT_CONV_WINOGRAD_T;
    if (v.wu && (v.wu_m == 2 || v.wu_m == 4) && tsrt__conv_wg_applies(&v))
        return v.wu_m == 2 ? TSRT_CONV_WINOGRAD : TSRT_CONV_WINOGRAD4;
    if (tsrt__grp_chosen(&v)) return TSRT_CONV_GROUPED;
    if (tsrt__conv_is_1x1(&v)) return TSRT_CONV_GEMM_1X1;
    /* Winograd's F(m) for the shape (tsrt_conv_wg_pre); F(2x2) below 128
     * positions only with the weights transformed once (D38) */
    const int wm = tsrt_conv_wg_pre(&v);
    if (wm == 4) return TSRT_CONV_WINOGRAD4;
    if (wm == 2 && (tsrt__wg2_unaided(&v) || (v.wu && v.wu_m == 2))) return TSRT_CONV_WINOGRAD;
    if (v.ldil_h == 1 && v.ldil_w == 1) return TSRT_CONV_PHASED;
    return TSRT_CONV_IM2COL;
}


/* ==== weights prepared once per program ======================================= */

/* The form the shape's rules pick (below: tuning may pick another). */
static inline int tsrt__conv_pre_rules(const tsrt_conv_args *v)
{
    /* F(4x4) where it has enough tiles, else GEMM_T where it pays, else
     * F(2x2) or nothing. F(2x2) ahead of GEMM_T made the tuner keep it
     * where the two time alike alone (ResNet-18's 128-channel 12x12: 282
     * and 276 us) though in the model, its 16/9 larger weights cold,
     * F(2x2) ran 450 us and GEMM_T 305 (D136) */
    const int wm = tsrt_conv_wg_pre(v);
    if (wm == 4) return wm;
    if (tsrt__pt_applies(v) && tsrt__pt_worth(v)) return 1;
    return wm;
}

static int tsrt__conv_tuned(const tsrt_conv_args *v, int rules);

/* The form in which a program prepares a conv's constant weights once
 * (emit_tmpl.c conv_pack_fns): 4 or 2, Winograd F(m x m) (D38); 1, W^T
 * panels for GEMM_T (D41); 0 or TSRT_CONV_PRE_PLAIN, none. Timed on this
 * machine the first time a unit asks for a shape (D126), else from the
 * shape's rules; either way the same answer for the same shape within a
 * unit, so that the packer and the kernel agree. */
TSRT_FN int tsrt_conv_pre(const tsrt_conv_args *args)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    return tsrt__conv_tuned(&v, tsrt__conv_pre_rules(&v));
}

/* Bytes of the prepared weights of form m. */
TSRT_FN size_t tsrt_conv_pre_size(const tsrt_conv_args *args, int m)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    if (m <= 0) return 0;
    if (m == TSRT_CONV_PRE_WGT4 || m == TSRT_CONV_PRE_WGT2) return tsrt__wgt_size(&v, m);
    return m == 1 ? tsrt__pt_size(&v) : tsrt_conv_wg_size(&v, m);
}

/* The prepared weights of output channels [o0, o1) into dst (calls on
 * disjoint ranges covering [0, O) may run on different threads). */
TSRT_FN void tsrt_conv_pre_pack(const tsrt_conv_args *args, int m, int64_t o0, int64_t o1, float *dst)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    if (m == 1) tsrt__pt_pack(&v, o0, o1, dst);
    else if (m == TSRT_CONV_PRE_WGT4 || m == TSRT_CONV_PRE_WGT2) tsrt__wgt_pack(&v, m, o0, o1, dst);
    else if (m > 1) tsrt_conv_wg_pack(&v, m, o0, o1, dst);
}

/* Output channel o's prepared weights times s. */
TSRT_FN void tsrt_conv_pre_scale(const tsrt_conv_args *args, int m, int64_t o, float s, float *u)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    if (m == 1) tsrt__pt_scale(&v, o, s, u);
    else if (m == TSRT_CONV_PRE_WGT4 || m == TSRT_CONV_PRE_WGT2) tsrt__wgt_scale(&v, m, o, s, u);
    else if (m > 1) tsrt_conv_wg_scale(&v, m, o, s, u);
}

/* ==== workspace =============================================================== */

/* Bytes of workspace per thread, valid for every algorithm. */
TSRT_FN size_t tsrt_conv_workspace(const tsrt_conv_args *args)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    size_t off_bytes, phx_bytes;
    size_t gw = tsrt__conv_gemm_ws(&v, &off_bytes, &phx_bytes);
    if (v.c / v.groups == 1) {
        const size_t dw = tsrt__dw_ws_bytes(&v);
        gw = gw > dw ? gw : dw;
    }
    if (tsrt__grp_applies(&v)) {
        const size_t gr = tsrt__grp_ws(&v);
        gw = gw > gr ? gw : gr;
    }
    if (tsrt__pt_applies(&v)) {
#if TSRT_HAVE_WGT
        const size_t fw = tsrt__pt_fold_ws(&v);
#else
        const size_t fw = tsrt__ptp_ws(&v, tsrt__pt_fold(&v));
#endif
        gw = gw > fw ? gw : fw;
    }
    if (!tsrt__conv_wg_applies(&v)) return gw;
    const size_t w2 = tsrt__wg_ws_bytes(&v, 2), w4 = tsrt__wg_ws_bytes(&v, 4);
    const size_t t2 = tsrt__wgt_ws_bytes(&v, 2), t4 = tsrt__wgt_ws_bytes(&v, 4);
    size_t ww = w2 > w4 ? w2 : w4;
    ww = ww > t2 ? ww : t2;
    ww = ww > t4 ? ww : t4;
    return gw > ww ? gw : ww;
}

/* ==== entry point ============================================================== */

/* y = conv(x, w) (+ y), then the epilogue on every element once: the part
 * of thread ith of nth (all nth calls together do everything; no barrier
 * between them). algo: TSRT_CONV_AUTO or one tsrt_conv_choose may return;
 * returns 0, or -1 when the algorithm does not apply to the shape
 * (DEPTHWISE with several input channels per group, GEMM_1X1 on a
 * non-1x1 conv, GEMM_T without its packed weights, 32-byte aligned
 * without AVX-512, or with several groups, the _T Winograds without
 * AVX-512) or
 * the shape is inconsistent (C or O not divisible by the groups, output
 * size not positive), and then computes nothing. ws:
 * tsrt_conv_workspace bytes, private to the call. */
TSRT_FN int tsrt_conv(const tsrt_conv_args *args, int algo, int ith, int nth, void *ws)
{
    const tsrt_conv_args v = tsrt__conv_norm(args);
    if (v.c % v.groups || v.o % v.groups || v.n < 0 || v.oh < 0 || v.ow < 0) return -1;
    if (algo == TSRT_CONV_AUTO) algo = tsrt_conv_choose(&v);
    if (v.n == 0 || v.o == 0 || v.oh == 0 || v.ow == 0) return 0;
    switch (algo) {
    case TSRT_CONV_DEPTHWISE:
        if (v.c / v.groups != 1) return -1;
        tsrt__conv_dw(&v, ith, nth, ws);
        return 0;
    case TSRT_CONV_GEMM_1X1:
        if (!tsrt__conv_is_1x1(&v)) return -1;
        tsrt__conv_gemm(&v, TSRT__CG_1X1, ith, nth, ws);
        return 0;
    case TSRT_CONV_GEMM_T:
        if (!tsrt__pt_applies(&v) || !v.wu || v.wu_m != 1) return -1;
        /* the 6 x 16 micro-kernels' aligned loads of the panels */
        if (!TSRT_HAVE_WGT && (uintptr_t)v.wu % 32) return -1;
        tsrt__conv_pt(&v, ith, nth, ws);
        return 0;
    case TSRT_CONV_WINOGRAD4_T:
    case TSRT_CONV_WINOGRAD_T:
#if TSRT_HAVE_WGT
    {
        const int f = algo == TSRT_CONV_WINOGRAD_T ? TSRT_CONV_PRE_WGT2 : TSRT_CONV_PRE_WGT4;
        if (!tsrt__wgt_applies(&v) || !v.wu || v.wu_m != f) return -1;
        tsrt__conv_wgt(&v, tsrt__wgt_m(f), ith, nth, ws);
        return 0;
    }
#else
        return -1;
#endif
    case TSRT_CONV_IM2COL:
        tsrt__conv_gemm(&v, TSRT__CG_IM2COL, ith, nth, ws);
        return 0;
    case TSRT_CONV_WINOGRAD:
    case TSRT_CONV_WINOGRAD4:
        if (!tsrt__conv_wg_applies(&v)) return -1;
        tsrt__conv_wg(&v, algo == TSRT_CONV_WINOGRAD ? 2 : 4, ith, nth, ws);
        return 0;
    case TSRT_CONV_PHASED:
        if (v.ldil_h != 1 || v.ldil_w != 1) return -1;
        tsrt__conv_gemm(&v, TSRT__CG_PHASED, ith, nth, ws);
        return 0;
    case TSRT_CONV_GROUPED:
        if (!tsrt__grp_applies(&v)) return -1;
        tsrt__conv_grp(&v, ith, nth, ws);
        return 0;
    default:
        return -1;
    }
}

/* ==== the prepared form, timed (D126) ========================================== */

/* The rules above were measured on a few machines and models; on another
 * core or shape they miss by up to 1.8x (a 3x3 conv with 32 output
 * channels on a 12x12 map: Winograd F(2x2) 72 us, GEMM_T 42 us, on a
 * Sapphire Rapids core). So the first time a unit asks for the form of a
 * shape it runs each candidate form on that shape, split as the calls
 * will be over args->threads (tsrt__tune_times), on this thread, with
 * scratch operands, and keeps the fastest (the rules' form
 * unless another is 5% faster: the timing is noisy). Once per shape per
 * unit: the answers are kept here, in the unit, for every later call
 * (the packer's threads and the kernel ask again). Timed with the
 * caller's epilogue callback when it gives one (a SiLU per element
 * weighs more in a block of few positions). TESSERA_CONV_TUNE in the
 * environment turns it off or forces a form (tsrt__tune_mode). */
enum { TSRT__TUNE_CAP = 512, TSRT__TUNE_KEY = 18, TSRT__TUNE_REPS = 3 };

typedef struct tsrt__tune_ent {
    int64_t key[TSRT__TUNE_KEY];
    int form;
} tsrt__tune_ent;

static tsrt__tune_ent tsrt__tune_tab[TSRT__TUNE_CAP];
static int tsrt__tune_n;
static atomic_flag tsrt__tune_lock = ATOMIC_FLAG_INIT;

/* The threads a form is timed on, and the images: one per thread, as
 * many as the batch has (a batch of 8 on 2 threads times like 2); for
 * Winograd, whose panels of tiles run across images (D141), enough
 * images for 128 tiles, as many as the batch has (one 12x12 image is 9
 * F(4x4) tiles, a quarter of a panel: timed alone F(4x4) lost to forms
 * it beats on the batch). Forms are compared per image. */
static inline int tsrt__tune_nth(const tsrt_conv_args *v) { return v->threads > 1 ? v->threads : 1; }
static inline int64_t tsrt__tune_images(const tsrt_conv_args *v) { return tsrt__min(v->n, tsrt__tune_nth(v)); }
static inline int64_t tsrt__tune_images_of(const tsrt_conv_args *v, int m)
{
    /* GEMM_T with its tiles across images (tsrt__pt_fold): each thread's run */
    if (m == 1) return tsrt__min(v->n, tsrt__tune_nth(v) * tsrt__pt_fold(v));
    const int64_t f = m == TSRT_CONV_PRE_WGT4 || m == TSRT_CONV_PRE_WGT2 ? tsrt__wgt_m(m) : m;
    if (f != 2 && f != 4) return tsrt__tune_images(v);
    const int64_t t = tsrt__cdiv(v->oh, f) * tsrt__cdiv(v->ow, f);
    return tsrt__min(v->n, tsrt__max(tsrt__tune_nth(v), tsrt__cdiv(128, t)));
}

static void tsrt__tune_key(const tsrt_conv_args *v, int64_t *k)
{
    const int64_t f[TSRT__TUNE_KEY] = {v->c,      v->h,      v->w,           v->o,       v->kh,      v->kw,
                                       v->oh,     v->ow,     v->groups,      v->stride_h, v->stride_w, v->pad_h,
                                       v->pad_w,  v->dil_h,  v->dil_w,       v->epi != NULL, tsrt__tune_nth(v),
                                       tsrt__tune_images(v)};
    memcpy(k, f, sizeof f);
}

static double tsrt__tune_now(void)
{
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One candidate form m of v, ready to time: scratch operands, weights
 * prepared in m, one warm-up call made (ok: it ran). */
typedef struct tsrt__tune_run {
    tsrt_conv_args a;
    float *x, *y, *wt, *u;
    void *ws;
    int algo, ok;
} tsrt__tune_run;

static void tsrt__tune_setup(tsrt__tune_run *r, const tsrt_conv_args *v, int m)
{
    tsrt_conv_args *a = &r->a;
    *a = *v;
    const size_t pre = tsrt_conv_pre_size(v, m), wsb = tsrt_conv_workspace(v);
    const size_t xn = (size_t)(a->n * a->c * a->h * a->w), yn = (size_t)(a->n * a->o * a->oh * a->ow);
    const size_t wn = (size_t)(a->o * (a->c / a->groups) * a->kh * a->kw);
    r->x = calloc(xn + 16, sizeof(float)), r->y = calloc(yn + 16, sizeof(float));
    r->wt = calloc(wn + 16, sizeof(float));
    r->u = pre ? calloc(pre / sizeof(float) + 16 + TSRT_ALIGN / sizeof(float), sizeof(float)) : NULL;
    r->ws = malloc(wsb + 2 * TSRT_ALIGN);
    r->ok = 0;
    if (!r->x || !r->y || !r->wt || !r->ws || (pre && !r->u)) return;
    /* the caller's epilogue callback, if any, reads its operands at the
     * coordinates of the first images (the batch has at least as many)
     * and writes the scratch block only */
    a->x = r->x, a->y = r->y, a->wt = r->wt, a->x_bs = 0, a->y_bs = 0, a->beta = 0, a->te = NULL;
    float *u = r->u ? tsrt__align(r->u) : NULL; /* as a program's (GEMM_T's aligned loads) */
    if (u) tsrt_conv_pre_pack(a, m, 0, a->o, u);
    a->wu = m ? (u ? u : r->x) : NULL, a->wu_m = m;
    r->algo = tsrt_conv_choose(a);
    r->ok = tsrt_conv(a, r->algo, 0, 1, tsrt__align(r->ws)) == 0;
}

/* Seconds of thread ith's part of one call split over nth threads. */
static double tsrt__tune_part(tsrt__tune_run *r, int ith, int nth)
{
    const double t0 = tsrt__tune_now();
    tsrt_conv(&r->a, r->algo, ith, nth, tsrt__align(r->ws));
    return tsrt__tune_now() - t0;
}

static void tsrt__tune_free(tsrt__tune_run *r)
{
    free(r->x), free(r->y), free(r->wt), free(r->u), free(r->ws);
}

/* Seconds per image of one call of each candidate form cand[0..nc) of
 * v, split over tsrt__tune_nth(v) threads: each thread's part run here
 * in turn, the slowest part the call's time (so a form whose split
 * leaves one thread most of the work, or makes every thread repeat a
 * transform, loses to one that splits evenly: a 64-channel 3x3 conv on
 * a 24x24 map, F(4x4) 236 us and GEMM_T 263 us on one thread, 175 and
 * 138 on two). Each part is the fastest of TSRT__TUNE_REPS rounds that
 * run every candidate in turn: a burst of another tenant's work then
 * slows one round of every form instead of all of one form's runs (a
 * stem conv timed 95 us against 59 in the next process, D180). A
 * large value for a form that fails. */
static void tsrt__tune_times(const tsrt_conv_args *v, const int *cand, int nc, double *times)
{
    enum { NT = 64 };
    tsrt__tune_run run[7];
    double part[7][NT];
    const int nth = tsrt__tune_nth(v), parts = nth < NT ? nth : NT;   /* past 64 threads: the first 64 parts */
    for (int i = 0; i < nc; i++) {
        tsrt_conv_args one = *v;
        one.n = tsrt__tune_images_of(v, cand[i]);
        tsrt__tune_setup(&run[i], &one, cand[i]);
        for (int ith = 0; ith < parts; ith++) part[i][ith] = 1e30;
    }
    for (int rep = 0; rep < TSRT__TUNE_REPS; rep++)
        for (int i = 0; i < nc; i++)
            for (int ith = 0; run[i].ok && ith < parts; ith++) {
                const double t = tsrt__tune_part(&run[i], ith, nth);
                if (t < part[i][ith]) part[i][ith] = t;
            }
    for (int i = 0; i < nc; i++) {
        double slowest = run[i].ok ? 0 : 1e30;
        for (int ith = 0; run[i].ok && ith < parts; ith++)
            if (part[i][ith] > slowest) slowest = part[i][ith];
        times[i] = slowest / (double)run[i].a.n;
        tsrt__tune_free(&run[i]);
    }
}

/* TESSERA_CONV_TUNE: unset or "1", time the forms; "0", the rules;
 * "plain", "gemm_t", "wg2", "wg4", "wg4t", "wg2t", that form wherever it applies
 * (the rules' elsewhere): for tests and for comparing by hand. */
enum { TSRT__TUNE_TIME = 100, TSRT__TUNE_RULES = 101 };

/* A prepared form's name, as TESSERA_CONV_TUNE and the tune log spell it. */
static const char *tsrt__form_name(int m)
{
    switch (m) {
    case TSRT_CONV_PRE_PLAIN: return "plain";
    case 1: return "gemm_t";
    case 2: return "wg2";
    case 4: return "wg4";
    case TSRT_CONV_PRE_WGT4: return "wg4t";
    case TSRT_CONV_PRE_WGT2: return "wg2t";
    default: return "none";
    }
}

static int tsrt__tune_mode(void)
{
    static atomic_int mode = 0;   /* 0: not read yet */
    int m = atomic_load(&mode);
    if (!m) {
        const char *e = getenv("TESSERA_CONV_TUNE");
        static const int forms[] = {TSRT_CONV_PRE_PLAIN, 1, 2, 4, TSRT_CONV_PRE_WGT4, TSRT_CONV_PRE_WGT2};
        m = e && !strcmp(e, "0") ? TSRT__TUNE_RULES : TSRT__TUNE_TIME;
        for (int i = 0; e && i < 6; i++)
            if (!strcmp(e, tsrt__form_name(forms[i]))) m = forms[i];
        atomic_store(&mode, m);
    }
    return m;
}

/* TESSERA_CONV_TUNE_LOG set: each timed shape's forms, their times per
 * image and the pick, one line on stderr (the names TESSERA_CONV_TUNE
 * takes). */
static int tsrt__tune_log(void)
{
    static atomic_int on = -1;
    int o = atomic_load(&on);
    if (o < 0) {
        const char *e = getenv("TESSERA_CONV_TUNE_LOG");
        o = e && *e && strcmp(e, "0") != 0;
        atomic_store(&on, o);
    }
    return o;
}

static int tsrt__conv_tuned(const tsrt_conv_args *v, int rules)
{
    /* the candidates: the rules' form, the plain GEMM path, GEMM_T and
     * both Winograds where they apply */
    int cand[7], nc = 0;
    cand[nc++] = rules;
    if (rules > 0) cand[nc++] = TSRT_CONV_PRE_PLAIN;
    if (rules != 1 && tsrt__pt_applies(v) && (TSRT_HAVE_WGT || tsrt__pt_fuller(v, 5))) cand[nc++] = 1;
#ifndef TSRT_EXACT
    const int wg = tsrt__conv_wg_applies(v) && v->c / v->groups >= 16 && v->o / v->groups >= 16;
    if (wg && rules != 2) cand[nc++] = 2;
    if (wg && rules != 4) cand[nc++] = 4;
    /* tiles as rows: where the batch fills two row tiles (at batch 1 on a
     * 12x12 map F(4x4)'s 9 tiles fill one row tile 9/14, and its U^T,
     * 4x the weights, streams from L3 in a model: D153) */
    for (int m = 2; m <= 4; m += 2)
        if (wg && tsrt__wgt_applies(v) && v->n * tsrt__cdiv(v->oh, m) * tsrt__cdiv(v->ow, m) >= 24)
            cand[nc++] = m == 2 ? TSRT_CONV_PRE_WGT2 : TSRT_CONV_PRE_WGT4;
#endif
    const int mode = tsrt__tune_mode();
    if (nc == 1 || (v->c / v->groups == 1 && v->groups > 1) || mode == TSRT__TUNE_RULES) return rules;
    if (mode != TSRT__TUNE_TIME) {
        for (int i = 0; i < nc; i++)
            if (cand[i] == mode) return mode;
        return rules;
    }
    int64_t key[TSRT__TUNE_KEY];
    tsrt__tune_key(v, key);
    while (atomic_flag_test_and_set_explicit(&tsrt__tune_lock, memory_order_acquire)) {
    }
    int form = rules, found = 0;
    for (int i = 0; i < tsrt__tune_n && !found; i++)
        if (!memcmp(tsrt__tune_tab[i].key, key, sizeof key)) form = tsrt__tune_tab[i].form, found = 1;
    if (!found && tsrt__tune_n < TSRT__TUNE_CAP) {
        /* timed under the lock: a second thread asking for the same shape
         * waits for the answer instead of timing it as well */
        double base = 0, best = 0, times[7];
        tsrt__tune_times(v, cand, nc, times);
        for (int i = 0; i < nc; i++) {
            const double t = times[i];
            if (!i) base = best = t;
            else if (t < best && t < 0.95 * base) best = t, form = cand[i];
        }
        if (tsrt__tune_log()) {
            fprintf(stderr, "tessera conv tune: n%lld c%lld %lldx%lld o%lld k%lldx%lld s%lld g%lld, %d thread(s):",
                    (long long)v->n, (long long)v->c, (long long)v->h, (long long)v->w, (long long)v->o,
                    (long long)v->kh, (long long)v->kw, (long long)v->stride_h, (long long)v->groups,
                    tsrt__tune_nth(v));
            for (int i = 0; i < nc; i++) fprintf(stderr, " %s %.1f us", tsrt__form_name(cand[i]), 1e6 * times[i]);
            fprintf(stderr, " -> %s\n", tsrt__form_name(form));
        }
        memcpy(tsrt__tune_tab[tsrt__tune_n].key, key, sizeof key);
        tsrt__tune_tab[tsrt__tune_n++].form = form;
    }
    atomic_flag_clear_explicit(&tsrt__tune_lock, memory_order_release);
    return form;
}

#endif /* TSRT_CONV_H */
