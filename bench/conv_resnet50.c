/* conv_resnet50.c — the 53 convolutions of ResNet-50 (bench/models.py's
 * resnet50, 1x3x224x224) through tsrt_conv, one after another as the
 * compiled model runs them, with a batch-norm + relu epilogue like the one
 * the CPU emitter fuses.
 *
 *   cmake --build build --target conv_resnet50
 *   build/conv_resnet50 [reps [nth [algo]]]      (defaults 11, 1, 0 = AUTO)
 *   build/conv_resnet50 11 -2     (nth < 0: the -nth shares run one after another on this thread)
 *   TE=1 build/conv_resnet50      (the epilogue as a folded bias + relu descriptor, as the model has it)
 *   TE=1 RES=1 build/conv_resnet50 (and the expand convs add a residual, as the model's)
 *   PRE=0 build/conv_resnet50     (no weights prepared once: Winograd's transformed per call, as before D38,
 *                                  no GEMM_T (D41); by default they are prepared once, as the compiled
 *                                  model does)
 *   LAYER=i build/conv_resnet50  (only layer i, 0..52, of each pass: for perf record)
 *   cc -O3 -march=native -Isrc bench/conv_resnet50.c -o conv_resnet50 -lpthread -lm
 *
 * Each layer has its own weights (94 MB in all, more than the L3), so
 * weights come from memory as in the model; activations ping-pong between
 * two buffers, as the model's arena reuses them. Every layer of a pass is
 * timed (wall clock, threads released by a spinning barrier as the
 * runtime's pool does); a pass is repeated `reps` times after one warm-up
 * and the table gives, per distinct shape, the count, the median time of
 * one conv, GFLOP/s, and the sum over the 53 layers. "total" is the median
 * over passes of the sum of the 53 layer times; "cpu" the same in the
 * calling thread's CPU time (time the thread was descheduled by other jobs
 * does not count). To compare two versions of the kernels, build this file
 * against each (-I) and run them alternately.
 * On a machine shared with other jobs a spinning 2-thread run measures the
 * other jobs (a descheduled thread holds up the whole layer). nth = -2
 * runs the 2 threads' shares one after the other on one thread and takes,
 * per layer, the larger share's CPU time ("ms/conv" then is what 2 free
 * cores would take, less the start and the join; "cpu ms" is both shares:
 * the split's total work). */
#include "bench_clock.h"
#include "kernels/cpu/tsrt_conv.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* c, h (= w), o, k (= kh = kw), oh (= ow), stride, pad: model order. */
static const int L[][7] = {
    {3, 224, 64, 7, 112, 2, 3},   {64, 56, 64, 1, 56, 1, 0},    {64, 56, 64, 3, 56, 1, 1},
    {64, 56, 256, 1, 56, 1, 0},   {64, 56, 256, 1, 56, 1, 0},   {256, 56, 64, 1, 56, 1, 0},
    {64, 56, 64, 3, 56, 1, 1},    {64, 56, 256, 1, 56, 1, 0},   {256, 56, 64, 1, 56, 1, 0},
    {64, 56, 64, 3, 56, 1, 1},    {64, 56, 256, 1, 56, 1, 0},   {256, 56, 128, 1, 56, 1, 0},
    {128, 56, 128, 3, 28, 2, 1},  {128, 28, 512, 1, 28, 1, 0},  {256, 56, 512, 1, 28, 2, 0},
    {512, 28, 128, 1, 28, 1, 0},  {128, 28, 128, 3, 28, 1, 1},  {128, 28, 512, 1, 28, 1, 0},
    {512, 28, 128, 1, 28, 1, 0},  {128, 28, 128, 3, 28, 1, 1},  {128, 28, 512, 1, 28, 1, 0},
    {512, 28, 128, 1, 28, 1, 0},  {128, 28, 128, 3, 28, 1, 1},  {128, 28, 512, 1, 28, 1, 0},
    {512, 28, 256, 1, 28, 1, 0},  {256, 28, 256, 3, 14, 2, 1},  {256, 14, 1024, 1, 14, 1, 0},
    {512, 28, 1024, 1, 14, 2, 0}, {1024, 14, 256, 1, 14, 1, 0}, {256, 14, 256, 3, 14, 1, 1},
    {256, 14, 1024, 1, 14, 1, 0}, {1024, 14, 256, 1, 14, 1, 0}, {256, 14, 256, 3, 14, 1, 1},
    {256, 14, 1024, 1, 14, 1, 0}, {1024, 14, 256, 1, 14, 1, 0}, {256, 14, 256, 3, 14, 1, 1},
    {256, 14, 1024, 1, 14, 1, 0}, {1024, 14, 256, 1, 14, 1, 0}, {256, 14, 256, 3, 14, 1, 1},
    {256, 14, 1024, 1, 14, 1, 0}, {1024, 14, 256, 1, 14, 1, 0}, {256, 14, 256, 3, 14, 1, 1},
    {256, 14, 1024, 1, 14, 1, 0}, {1024, 14, 512, 1, 14, 1, 0}, {512, 14, 512, 3, 7, 2, 1},
    {512, 7, 2048, 1, 7, 1, 0},   {1024, 14, 2048, 1, 7, 2, 0}, {2048, 7, 512, 1, 7, 1, 0},
    {512, 7, 512, 3, 7, 1, 1},    {512, 7, 2048, 1, 7, 1, 0},   {2048, 7, 512, 1, 7, 1, 0},
    {512, 7, 512, 3, 7, 1, 1},    {512, 7, 2048, 1, 7, 1, 0},
};
#define NL ((int)(sizeof L / sizeof L[0]))

/* The epilogue: y = relu((y - mean) * scale + shift), per output channel. */
typedef struct { const float *mean, *scale, *shift; int64_t o; } bn_ctx;

static void epi_bn(void *vctx, float *c, ptrdiff_t rs, ptrdiff_t cs, int64_t m0, int64_t n0, int64_t mb, int64_t nb)
{
    const bn_ctx *e = vctx;
    (void)cs, (void)n0;
    for (int64_t i = 0; i < mb; i++) {
        const int64_t oc = (m0 + i) % e->o;
        const float mu = e->mean[oc], s = e->scale[oc], b = e->shift[oc];
        float *ci = c + i * rs;
        for (int64_t j = 0; j < nb; j++) {
            const float v = (ci[j] - mu) * s + b;
            ci[j] = v > 0 ? v : 0;
        }
    }
}

typedef struct {
    tsrt_conv_args cv;
    tsrt_tepi te; /* the folded form: bias + relu as data (TE=1) */
    bn_ctx bn;
} layer;

static layer lay[NL];
static int algo_forced;
static void *ws[8];

/* ---- a spinning team ---------------------------------------------------- */

static int nth_g = 1, nsim = 0; /* nsim > 0: shares run in turn */
static atomic_int go_gen, done_count, quit_flag;
static atomic_int cur_layer;

static void run_layer(int li, int ith, int nth)
{
    tsrt_conv(&lay[li].cv, algo_forced, ith, nth, ws[ith]);
}

static void *worker(void *p)
{
    const int ith = (int)(intptr_t)p;
    int seen = 0;
    for (;;) {
        int g;
        while ((g = atomic_load_explicit(&go_gen, memory_order_acquire)) == seen)
            if (atomic_load_explicit(&quit_flag, memory_order_relaxed)) return NULL;
        seen = g;
        run_layer(atomic_load(&cur_layer), ith, nth_g);
        atomic_fetch_add_explicit(&done_count, 1, memory_order_acq_rel);
    }
}

static void team_layer(int li)
{
    atomic_store(&cur_layer, li);
    atomic_store(&done_count, 0);
    atomic_fetch_add_explicit(&go_gen, 1, memory_order_release);
    run_layer(li, 0, nth_g);
    while (atomic_load_explicit(&done_count, memory_order_acquire) < nth_g - 1) {
    }
}

static float *rand_buf(size_t n, float scale, uint32_t seed)
{
    float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    uint32_t s = seed * 2654435761u + 12345;
    for (size_t i = 0; i < n; i++) s = s * 1664525u + 1013904223u, p[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * scale;
    return p;
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 11;
    nth_g = argc > 2 ? atoi(argv[2]) : 1;
    algo_forced = argc > 3 ? atoi(argv[3]) : TSRT_CONV_AUTO;
    if (nth_g < 0) nsim = -nth_g, nth_g = 1;
    if (nth_g < 1 || nth_g > 8 || nsim > 8 || reps < 1) return 2;
    size_t act = 0, wsz = 0;
    for (int i = 0; i < NL; i++) {
        const size_t in = (size_t)L[i][0] * L[i][1] * L[i][1], out = (size_t)L[i][2] * L[i][4] * L[i][4];
        act = in > act ? in : act, act = out > act ? out : act;
    }
    float *buf[3] = {rand_buf(act, 2.0f, 1), rand_buf(act, 2.0f, 2), rand_buf(act, 2.0f, 3)};
    for (int i = 0; i < NL; i++) {
        const int c = L[i][0], h = L[i][1], o = L[i][2], k = L[i][3], oh = L[i][4], s = L[i][5], p = L[i][6];
        const int64_t K = (int64_t)c * k * k;
        layer *l = &lay[i];
        l->bn = (bn_ctx){rand_buf((size_t)o, 0.1f, 100 + i), rand_buf((size_t)o, 0.5f, 200 + i),
                         rand_buf((size_t)o, 0.2f, 300 + i), o};
        for (int j = 0; j < o; j++) ((float *)l->bn.scale)[j] += 1.0f;
        l->cv = (tsrt_conv_args){.n = 1, .c = c, .h = h, .w = h, .o = o, .kh = k, .kw = k, .oh = oh, .ow = oh,
                                 .stride_h = s, .stride_w = s, .pad_h = p, .pad_w = p,
                                 .wt = rand_buf((size_t)(o * K), 2.0f * sqrtf(3.0f / (float)K), 400 + i),
                                 .x = buf[i % 2], .y = buf[(i + 1) % 2], .epi = epi_bn, .epi_ctx = &l->bn};
        /* TE=1: the epilogue as the compiled model has it, the batch norm
         * folded (D30) into a per-channel bias + relu given as data (D32),
         * which the kernels apply in registers; the scale is not applied */
        if (getenv("TE") && atoi(getenv("TE"))) {
            l->te = (tsrt_tepi){.row = l->bn.shift, .clamp = TSRT_TE_MAX | TSRT_TE_MAX_PZ};
            /* RES=1: the expand convs (1x1, O = 4C) add the block's input
             * as the model's do (a buffer of their own, like the model's
             * residual, which other layers' data evicts from L2) */
            if (getenv("RES") && atoi(getenv("RES")) && k == 1 && s == 1 && o == 4 * c)
                l->te.res = buf[2], l->te.res_rs = (ptrdiff_t)oh * oh;
            l->cv.te = &l->te;
        }
        /* weights prepared once as the compiled model does (Winograd's
         * transform, D38; GEMM_T's panels, D41) unless PRE=0 */
        const int pm = getenv("PRE") && !atoi(getenv("PRE")) ? 0 : tsrt_conv_pre(&l->cv);
        if (pm) {
            float *u = aligned_alloc(64, (tsrt_conv_pre_size(&l->cv, pm) + 63) / 64 * 64);
            tsrt_conv_pre_pack(&l->cv, pm, 0, o, u);
            l->cv.wu = u, l->cv.wu_m = pm;
        }
        const size_t w = tsrt_conv_workspace(&l->cv);
        wsz = w > wsz ? w : wsz;
    }
    for (int t = 0; t < nth_g; t++) ws[t] = aligned_alloc(64, (wsz + 63) / 64 * 64 + 64);
    pthread_t th[8];
    for (int t = 1; t < nth_g; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);

    double *tl = malloc(sizeof(double) * (size_t)(reps * NL)), *tot = malloc(sizeof(double) * (size_t)reps);
    double *ctot = malloc(sizeof(double) * (size_t)reps), *cl = malloc(sizeof(double) * (size_t)(reps * NL));
    const int only = getenv("LAYER") ? atoi(getenv("LAYER")) : -1;
    for (int r = -1; r < reps; r++) {
        double sum = 0, csum = 0;
        for (int i = 0; i < NL; i++) {
            double t, c;
            if (only >= 0 && i != only) {
                if (r >= 0) tl[r * NL + i] = cl[r * NL + i] = 0;
                continue;
            }
            if (nsim) {
                c = t = 0;
                for (int k = 0; k < nsim; k++) {
                    const double c0 = cpu_now();
                    tsrt_conv(&lay[i].cv, algo_forced, k, nsim, ws[0]);
                    const double d = cpu_now() - c0;
                    c += d, t = d > t ? d : t;
                }
            } else {
                const double c0 = cpu_now(), t0 = now();
                team_layer(i);
                t = now() - t0, c = cpu_now() - c0;
            }
            csum += c;
            if (r >= 0) tl[r * NL + i] = t, cl[r * NL + i] = c;
            sum += t;
        }
        if (r >= 0) tot[r] = sum, ctot[r] = csum;
    }
    atomic_store(&quit_flag, 1);
    for (int t = 1; t < nth_g; t++) pthread_join(th[t], NULL);

    /* Per distinct shape, in order of first appearance. */
    if (nsim) printf("simulated: the %d shares of each layer in turn, ms/conv = the larger one's CPU time\n", nsim);
    printf("tsrt ISA %d, %d thread(s), %d passes, algo %s, workspace %.2f MiB/thread\n", TSRT_ISA, nth_g, reps,
           tsrt_conv_algo_name(algo_forced), (double)wsz / 1048576.0);
    printf("%5s %5s %5s %2s %4s %2s %-10s %3s %9s %8s %9s %8s %8s\n", "c", "h", "o", "k", "oh", "s", "algo", "n",
           "ms/conv", "GFLOP/s", "ms total", "cpu ms", "cpu GF/s");
    int done[NL] = {0};
    double flop_all = 0, med_sum = 0, cmed_sum = 0;
    double *v = malloc(sizeof(double) * (size_t)(reps * NL));
    for (int i = 0; i < NL; i++) {
        if (done[i]) continue;
        int cnt = 0, nv = 0;
        for (int j = i; j < NL; j++)
            if (!memcmp(L[i], L[j], sizeof L[i])) {
                done[j] = 1, cnt++;
                for (int r = 0; r < reps; r++) v[nv] = cl[r * NL + j], v[reps * NL - 1 - nv++] = tl[r * NL + j];
            }
        qsort(v, (size_t)nv, sizeof(double), cmp_double);
        const double cmed = v[nv / 2];
        qsort(v + reps * NL - nv, (size_t)nv, sizeof(double), cmp_double);
        const double med = v[reps * NL - nv + nv / 2];
        cmed_sum += cmed * cnt;
        const double flop = 2.0 * L[i][2] * L[i][4] * L[i][4] * (double)L[i][0] * L[i][3] * L[i][3];
        flop_all += flop * cnt, med_sum += med * cnt;
        printf("%5d %5d %5d %2d %4d %2d %-10s %3d %9.3f %8.1f %9.2f %8.3f %8.1f\n", L[i][0], L[i][1], L[i][2],
               L[i][3], L[i][4], L[i][5],
               tsrt_conv_algo_name(algo_forced ? algo_forced : tsrt_conv_choose(&lay[i].cv)), cnt, med * 1e3,
               flop / med * 1e-9, med * cnt * 1e3, cmed * 1e3, flop / cmed * 1e-9);
    }
    qsort(tot, (size_t)reps, sizeof(double), cmp_double);
    qsort(ctot, (size_t)reps, sizeof(double), cmp_double);
    printf("total: median %.2f ms (min %.2f max %.2f), cpu %.2f ms; sums of shape medians: %.2f ms, cpu %.2f ms; "
           "%.1f GFLOP/s\n",
           tot[reps / 2] * 1e3, tot[0] * 1e3, tot[reps - 1] * 1e3, ctot[reps / 2] * 1e3, med_sum * 1e3,
           cmed_sum * 1e3, flop_all / tot[reps / 2] * 1e-9);
    return 0;
}
