/* conv_1x1_mobilenetv2.c — the 19 distinct pointwise (1x1) convolutions
 * of MobileNetV2 (1x<C>x<H>x<H> -> <O> channels) through tsrt_conv, one
 * thread, with the epilogue the CPU emitter fuses: batch-norm with four
 * per-channel constants ((y - mean) * inv_std * gamma + beta), then ReLU6
 * (expand layers) or the residual add (project layers inside a block).
 *
 * Per shape, the best and the median CPU time of one call (the calling
 * thread's CPU time, so time it was descheduled by other jobs does not
 * count) in two settings:
 *   warm  the same input and output every call (best of 9 rounds of 10);
 *   model 15 calls, each after streaming a 48 MiB buffer through the
 *         caches and reading the input once: the input in L2/L3, the
 *         output not cached, as when the layer runs in the model after
 *         the depthwise conv that produced its input.
 * "split" is the sum of the two shares of a 2-thread split run one after
 * the other on this thread, over the 1-thread time (warm): what the split
 * itself costs.
 *
 *   cmake --build build --target conv_1x1_mobilenetv2 && build/conv_1x1_mobilenetv2 [filter] [side] [form]
 *   cc -O3 -march=native -std=c11 -fno-math-errno -fno-trapping-math -I OLD/src \
 *      bench/conv_1x1_mobilenetv2.c -o old -lm                 # other kernels
 *
 * filter: only the shapes whose "CxH->O" name contains it ("" for all);
 * side: the network's input side, 224 by default (96: bench/broad.py's
 * mobilenet_v2, whose last maps are 3x3); form: "plain" (default, the
 * weights as given), "gemm_t" (W^T prepared for GEMM_T, D41/D184) or
 * "tuned" (the form tsrt_conv_pre times and picks, as a program does).
 * Run two builds
 * alternately to compare them (docs/kernels.md, D29). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#endif
#include "bench_clock.h"
#include "kernels/cpu/scalar.h"
#include "kernels/cpu/tsrt_conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const float *mean, *inv_std, *gamma, *beta; /* per output channel */
    const float *res;                           /* residual, y's layout, or NULL */
    int relu6;
    int64_t plane; /* OH*OW */
} bn_ctx;

/* The emitter's fused BatchNorm (+ ReLU6 | + residual), as it writes it
 * (per element, tsrt_maxf/tsrt_minf with their NaN and signed-zero rules;
 * the generated epilogue of ts_k3 in the model, one loop per kind). */
static void epi_bn(void *vctx, float *restrict c, ptrdiff_t rs, ptrdiff_t cs, int64_t m0, int64_t n0, int64_t mb,
                   int64_t nb)
{
    const bn_ctx *e = vctx;
    const float *restrict mean = e->mean, *restrict is = e->inv_std, *restrict g = e->gamma, *restrict b = e->beta;
    const float *restrict res = e->res;
    (void)cs;
    for (int64_t i = 0; i < mb; i++) {
        const int64_t o = m0 + i;
        if (res)
            for (int64_t j = 0; j < nb; j++)
                c[i * rs + j] = (c[i * rs + j] - mean[o]) * is[o] * g[o] + b[o] + res[o * e->plane + n0 + j];
        else if (e->relu6)
            for (int64_t j = 0; j < nb; j++)
                c[i * rs + j] = tsrt_minf(tsrt_maxf((c[i * rs + j] - mean[o]) * is[o] * g[o] + b[o], 0.0f), 6.0f);
        else
            for (int64_t j = 0; j < nb; j++) c[i * rs + j] = (c[i * rs + j] - mean[o]) * is[o] * g[o] + b[o];
    }
}

/* Evicts the caches: streams a buffer larger than L3 through them. */
static float *flush_buf;
#define FLUSH_FLOATS (12u << 20) /* 48 MiB */
static float flush(void)
{
    float s = 0;
    for (size_t i = 0; i < FLUSH_FLOATS; i += 16) flush_buf[i] += 1.0f, s += flush_buf[i];
    return s;
}

int main(int argc, char **argv)
{
    /* C, side, O, kind (0: project, BN only; 1: expand, BN + ReLU6;
     * 2: project with the residual add); model order, repeats dropped. */
    static const int S[][4] = {
        {32, 112, 16, 0},  {16, 112, 96, 1},  {96, 56, 24, 0},   {24, 56, 144, 1},  {144, 56, 24, 2},
        {144, 28, 32, 0},  {32, 28, 192, 1},  {192, 28, 32, 2},  {192, 14, 64, 0},  {64, 14, 384, 1},
        {384, 14, 64, 2},  {384, 14, 96, 0},  {96, 14, 576, 1},  {576, 14, 96, 2},  {576, 7, 160, 0},
        {160, 7, 960, 1},  {960, 7, 160, 2},  {960, 7, 320, 0},  {320, 7, 1280, 1},
    };
    const char *filter = argc > 1 && argv[1][0] ? argv[1] : NULL;
    const int side = argc > 2 ? atoi(argv[2]) : 224;
    const char *form = argc > 3 ? argv[3] : "plain";
    if (strcmp(form, "plain") && strcmp(form, "gemm_t") && strcmp(form, "tuned")) {
        fprintf(stderr, "form: plain, gemm_t or tuned\n");
        return 2;
    }
    if (side < 32 || side > 1024) {
        fprintf(stderr, "side: 32 to 1024\n");
        return 2;
    }
    flush_buf = calloc(FLUSH_FLOATS, sizeof(float));
    float sink = 0;
    double tot_warm = 0, tot_model = 0;
    printf("%-14s %-9s %8s %8s %8s %8s %6s  (us, CPU time of one call, 1 thread)\n", "shape", "algo", "warm",
           "model", "model-md", "GFLOP/s", "split");
    for (size_t s = 0; s < sizeof S / sizeof S[0]; s++) {
        const int C = S[s][0], H = (side + 224 / S[s][1] - 1) / (224 / S[s][1]), O = S[s][2], kind = S[s][3], P = H * H;
        char name[32];
        snprintf(name, sizeof name, "%dx%d->%d", C, H, O);
        if (filter && !strstr(name, filter)) continue;
        float *x = malloc(sizeof(float) * (size_t)(C * P)), *w = malloc(sizeof(float) * (size_t)(C * O));
        float *y = malloc(sizeof(float) * (size_t)(O * P)), *res = malloc(sizeof(float) * (size_t)(O * P));
        float *prm = malloc(sizeof(float) * (size_t)(4 * O));
        for (int i = 0; i < C * P; i++) x[i] = (float)(i % 17) * 0.1f;
        for (int i = 0; i < C * O; i++) w[i] = 0.01f * (float)(i % 13) - 0.05f;
        for (int i = 0; i < O * P; i++) res[i] = (float)(i % 7) * 0.01f;
        for (int i = 0; i < 4 * O; i++) prm[i] = 0.5f + 0.01f * (float)(i % 11);
        bn_ctx e = {prm, prm + O, prm + 2 * O, prm + 3 * O, kind == 2 ? res : NULL, kind == 1, P};
        tsrt_conv_args a = {.n = 1, .c = C, .h = H, .w = H, .o = O, .kh = 1, .kw = 1, .oh = H, .ow = H,
                            .x = x, .wt = w, .y = y, .epi = epi_bn, .epi_ctx = &e};
        const int m = !strcmp(form, "gemm_t") ? 1 : !strcmp(form, "tuned") ? tsrt_conv_pre(&a) : 0;
        const size_t ub = m > 0 ? (tsrt_conv_pre_size(&a, m) + 63) / 64 * 64 : 0;
        float *u = ub ? aligned_alloc(64, ub) : NULL;
        if (u) tsrt_conv_pre_pack(&a, m, 0, O, u), a.wu = u, a.wu_m = m;
        void *ws = malloc(tsrt_conv_workspace(&a));
        double warm = 1e30;
        for (int r = 0; r < 9; r++) {
            const double t0 = cpu_now();
            for (int k = 0; k < 10; k++) tsrt_conv(&a, TSRT_CONV_AUTO, 0, 1, ws);
            const double d = (cpu_now() - t0) / 10;
            if (d < warm) warm = d;
        }
        double split = 1e30;
        for (int r = 0; r < 9; r++) {
            const double t0 = cpu_now();
            for (int k = 0; k < 10; k++) {
                tsrt_conv(&a, TSRT_CONV_AUTO, 0, 2, ws);
                tsrt_conv(&a, TSRT_CONV_AUTO, 1, 2, ws);
            }
            const double d = (cpu_now() - t0) / 10;
            if (d < split) split = d;
        }
        double model[15];
        for (int r = 0; r < 15; r++) {
            sink += flush();
            for (int i = 0; i < C * P; i += 16) sink += x[i];
            const double t0 = cpu_now();
            tsrt_conv(&a, TSRT_CONV_AUTO, 0, 1, ws);
            model[r] = cpu_now() - t0;
        }
        qsort(model, 15, sizeof(double), cmp_double);
        const double flops = 2.0 * C * O * P;
        printf("%-14s %-9s %8.1f %8.1f %8.1f %8.1f %6.2f\n", name, tsrt_conv_algo_name(tsrt_conv_choose(&a)),
               warm * 1e6, model[0] * 1e6, model[7] * 1e6, flops / warm * 1e-9, split / warm);
        tot_warm += warm * 1e6, tot_model += model[7] * 1e6;
        free(x), free(w), free(y), free(res), free(prm), free(ws), free(u);
    }
    printf("total          warm %.0f us, model (medians) %.0f us (each distinct shape once)%s\n", tot_warm, tot_model,
           sink == 12345.f ? " " : "");
    free(flush_buf);
    return 0;
}
