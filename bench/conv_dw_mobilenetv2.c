/* conv_dw_mobilenetv2.c — the 10 distinct depthwise convolutions of
 * MobileNetV2 (3x3, 1x<C>x<H>x<H>, stride 1 or 2, pad 1) through
 * tsrt_conv, one thread, with a batch-norm + ReLU6 epilogue like the one
 * the CPU emitter fuses. Prints, per shape, the best CPU time of one call
 * (best of 9 rounds of 10 calls: the thread's CPU time, so time the
 * thread was descheduled by other jobs does not count; the input is warm
 * in cache after the first call, unlike in the model). COLD=1: before each
 * call (timed alone; the median of 41), 64 MiB of other memory are
 * written and then the input, which is thus dirty and mostly out of L2,
 * as the conv producing it leaves it in the model.
 *
 *   cmake --build build --target conv_dw_mobilenetv2 && build/conv_dw_mobilenetv2
 *   COLD=1 build/conv_dw_mobilenetv2
 *   cc -O3 -march=native -I OLD/src bench/conv_dw_mobilenetv2.c -o old   # other kernels
 *
 * Run two builds alternately to compare them (docs/kernels.md, D25). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#endif
#include "bench_clock.h"
#include "kernels/cpu/tsrt_conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* (y - mean) * inv_std * gamma + beta, clamped to [0, 6], per channel
 * constants all alike: the arithmetic of the fused BatchNorm + ReLU6. */
static void epi_bn_relu6(void *ctx, float *c, ptrdiff_t rs, ptrdiff_t cs, int64_t m0, int64_t n0, int64_t mb,
                         int64_t nb)
{
    const float *p = ctx;
    (void)cs, (void)m0, (void)n0;
    for (int64_t i = 0; i < mb; i++)
        for (int64_t j = 0; j < nb; j++) {
            float v = (c[i * rs + j] - p[0]) * p[1] * p[2] + p[3];
            v = v > 0 ? v : 0;
            c[i * rs + j] = v < 6 ? v : 6;
        }
}

int main(void)
{
    /* channels, input side, stride: model order, repeats dropped */
    static const int S[][3] = {{32, 112, 1}, {96, 112, 2}, {144, 56, 1}, {144, 56, 2}, {192, 28, 1},
                               {192, 28, 2}, {384, 14, 1}, {576, 14, 1}, {576, 14, 2}, {960, 7, 1}};
    static float prm[4] = {0.1f, 1.1f, 0.9f, 0.2f};
    double total = 0;
    const int cold = getenv("COLD") && atoi(getenv("COLD"));
    const size_t flush_n = cold ? (64u << 20) / sizeof(float) : 0;
    float *flush = cold ? calloc(flush_n, sizeof(float)) : NULL;
    for (size_t s = 0; s < sizeof S / sizeof S[0]; s++) {
        const int C = S[s][0], H = S[s][1], st = S[s][2], OH = (H - 1) / st + 1;
        float *x = malloc(sizeof(float) * (size_t)(C * H * H)), *w = malloc(sizeof(float) * (size_t)(C * 9));
        float *y = malloc(sizeof(float) * (size_t)(C * OH * OH));
        for (int i = 0; i < C * H * H; i++) x[i] = (float)(i % 17) * 0.1f;
        for (int i = 0; i < C * 9; i++) w[i] = 0.01f * (float)(i % 13);
        tsrt_conv_args a = {.n = 1, .c = C, .h = H, .w = H, .o = C, .kh = 3, .kw = 3, .oh = OH, .ow = OH,
                            .groups = C, .stride_h = st, .stride_w = st, .pad_h = 1, .pad_w = 1,
                            .x = x, .wt = w, .y = y, .epi = epi_bn_relu6, .epi_ctx = prm};
        void *ws = malloc(tsrt_conv_workspace(&a));
        double best = 1e30;
        if (cold) {
            double t[41];
            for (int r = 0; r < 41; r++) {
                for (size_t i = 0; i < flush_n; i += 16) flush[i] += 1.0f;
                for (int i = 0; i < C * H * H; i += 16) x[i] += 0.0f * flush[i];
                const double t0 = cpu_now();
                tsrt_conv(&a, TSRT_CONV_AUTO, 0, 1, ws);
                t[r] = cpu_now() - t0;
            }
            qsort(t, 41, sizeof t[0], cmp_double);
            best = t[20];
        }
        for (int r = 0; r < 9 && !cold; r++) {
            const double t0 = cpu_now();
            for (int k = 0; k < 10; k++) tsrt_conv(&a, TSRT_CONV_AUTO, 0, 1, ws);
            const double d = (cpu_now() - t0) / 10;
            if (d < best) best = d;
        }
        printf("%4d ch %3dx%-3d stride %d  %s  %.3f ms\n", C, H, H, st,
               tsrt_conv_algo_name(tsrt_conv_choose(&a)), best * 1e3);
        total += best * 1e3;
        free(x), free(w), free(y), free(ws);
    }
    printf("total %.3f ms (each distinct shape once%s)\n", total, cold ? ", median, input cold" : "");
    free(flush);
    return 0;
}
