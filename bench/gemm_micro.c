/* gemm_micro.c — how close the tsrt kernels (src/kernels/cpu) come to
 * this machine's fp32 FMA peak.
 *
 *   cc -O3 -march=native -Isrc bench/gemm_micro.c -o gemm_micro -lpthread -lm
 *   ./gemm_micro [reps [filter]]  (or: cmake --build build --target gemm_micro)
 * filter: run only the cases whose name contains it (the peak always runs).
 *
 * 1. Peak: a loop of independent FMA chains (enough to cover latency x
 *    pipes) per thread, on 1 and on 2 threads at once.
 * 2. sgemm 1024^3, 4096x4096x256, 256^3 (and the transformer shape
 *    128x768x3072), on 1 and 2 threads: GFLOP/s and fraction of peak;
 *    and the cost of the 2-thread split itself (both shares run on one
 *    thread, against the 1-thread time).
 * 3. conv: ResNet-50 3x3 64->64 at 56x56, 1x1 256->64 at 56x56, depthwise
 *    3x3 on 32 channels at 112x112.
 * Every figure is the median of `reps` (default 21) timed runs after two
 * warm-up runs; min and max are printed beside it to show the noise.
 * Percentages are of the 1-thread peak times the thread count. "wall" is
 * elapsed time; "cpu" the slowest thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
 * which excludes time the thread was descheduled on a shared machine: both
 * the peak and the kernels are measured each way.
 * Threads are pthreads here only: the kernels take (ith, nth) and the
 * threads meet at a barrier before and after each run.
 * The OpenBLAS peer figure comes from bench/gemm_numpy.py (same shapes). */
#include "bench_clock.h"
#include "kernels/cpu/tsrt_conv.h"
#include "kernels/cpu/tsrt_gemm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__AVX512F__) || defined(__AVX2__) || defined(__AVX__)
#include <immintrin.h>
#endif

/* ---- a tiny team: nth threads run job(ith) between two barriers ---------- */

typedef struct team team;
typedef void (*job_fn)(void *arg, int ith, int nth);
struct team {
    int nth;
    pthread_t th[8];
    pthread_barrier_t start, done;
    job_fn job;
    void *arg;
    int quit;
    double cpu[8]; /* CPU seconds of each thread's last job */
};
typedef struct { team *t; int ith; } worker_arg;
static worker_arg wargs[8];

static void *worker(void *p)
{
    worker_arg *w = p;
    team *t = w->t;
    for (;;) {
        pthread_barrier_wait(&t->start);
        if (t->quit) return NULL;
        double c0 = cpu_now();
        t->job(t->arg, w->ith, t->nth);
        t->cpu[w->ith] = cpu_now() - c0;
        pthread_barrier_wait(&t->done);
    }
}

static void team_init(team *t, int nth)
{
    memset(t, 0, sizeof *t);
    t->nth = nth;
    pthread_barrier_init(&t->start, NULL, (unsigned)nth);
    pthread_barrier_init(&t->done, NULL, (unsigned)nth);
    for (int i = 1; i < nth; i++) {
        wargs[i] = (worker_arg){t, i};
        pthread_create(&t->th[i], NULL, worker, &wargs[i]);
    }
}

/* Runs job on all threads (the caller is thread 0); returns wall seconds,
 * and in *cpu the largest CPU time of one thread. */
static double team_run(team *t, job_fn job, void *arg, double *cpu)
{
    t->job = job, t->arg = arg;
    double t0 = now();
    if (t->nth > 1) pthread_barrier_wait(&t->start);
    double c0 = cpu_now();
    job(arg, 0, t->nth);
    t->cpu[0] = cpu_now() - c0;
    if (t->nth > 1) pthread_barrier_wait(&t->done);
    double w = now() - t0;
    *cpu = 0;
    for (int i = 0; i < t->nth; i++)
        if (t->cpu[i] > *cpu) *cpu = t->cpu[i];
    return w;
}

static void team_free(team *t)
{
    t->quit = 1;
    if (t->nth > 1) pthread_barrier_wait(&t->start);
    for (int i = 1; i < t->nth; i++) pthread_join(t->th[i], NULL);
    pthread_barrier_destroy(&t->start);
    pthread_barrier_destroy(&t->done);
}

/* Median, min and max of wall time, and median of (slowest thread's) CPU time. */
typedef struct { double med, lo, hi, cpu; } stats;

static stats measure(team *t, job_fn job, void *arg, int reps)
{
    double *v = malloc(sizeof(double) * (size_t)reps), *c = malloc(sizeof(double) * (size_t)reps), dummy;
    team_run(t, job, arg, &dummy);
    team_run(t, job, arg, &dummy);
    for (int r = 0; r < reps; r++) v[r] = team_run(t, job, arg, &c[r]);
    qsort(v, (size_t)reps, sizeof(double), cmp_double);
    qsort(c, (size_t)reps, sizeof(double), cmp_double);
    stats s = {v[reps / 2], v[0], v[reps - 1], c[reps / 2]};
    free(v), free(c);
    return s;
}

/* Peak of one thread, GFLOP/s: by wall time and by CPU time. */
static double peak_wall = 1, peak_cpu = 1;

static void report(const char *what, int nth, double flops, stats s, const char *extra)
{
    const double gw = flops / s.med * 1e-9, gc = flops / s.cpu * 1e-9;
    printf("%-34s %d thr  wall %6.1f GFLOP/s %5.1f%%  cpu %6.1f GFLOP/s %5.1f%%  (ms: median %.3f min %.3f max %.3f)%s\n",
           what, nth, gw, 100 * gw / (peak_wall * nth), gc, 100 * gc / (peak_cpu * nth), s.med * 1e3, s.lo * 1e3,
           s.hi * 1e3, extra);
}

/* Two jobs alternated run by run, so that both see the same load; the
 * median of the per-run ratios of CPU time (b / a). */
static double measure_ratio(team *t, job_fn a, job_fn b, void *arg, int reps)
{
    double *r = malloc(sizeof(double) * (size_t)reps), ca, cb;
    team_run(t, a, arg, &ca);
    team_run(t, b, arg, &cb);
    for (int i = 0; i < reps; i++) {
        team_run(t, a, arg, &ca);
        team_run(t, b, arg, &cb);
        r[i] = cb / ca;
    }
    qsort(r, (size_t)reps, sizeof(double), cmp_double);
    const double med = r[reps / 2];
    free(r);
    return med;
}

/* ---- 1. FMA peak ------------------------------------------------------------ */

#define PEAK_ITERS 4000000L
static volatile float peak_sink;

/* 12 independent accumulators: FMA latency 4 x 2 pipes = 8 in flight needed
 * on Zen 3 / Skylake; 12 leaves slack and fits in 16 ymm registers. */
static void job_peak(void *arg, int ith, int nth)
{
    (void)arg, (void)ith, (void)nth;
#if defined(__AVX512F__)
    __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-7f), a[24];
    for (int i = 0; i < 24; i++) a[i] = _mm512_set1_ps((float)i);
    /* unrolled, so the accumulators are registers: gcc -O3 interchanged
     * the loops instead, each accumulator going through memory (70 of
     * 120 GFLOP/s on Zen 4) */
    for (long it = 0; it < PEAK_ITERS / 2; it++) {
#pragma GCC unroll 24
        for (int i = 0; i < 24; i++) a[i] = _mm512_fmadd_ps(a[i], x, y);
    }
    float s = 0;
    for (int i = 0; i < 24; i++) s += _mm512_reduce_add_ps(a[i]);
#elif defined(__AVX2__) && defined(__FMA__)
    __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-7f), a[12];
    for (int i = 0; i < 12; i++) a[i] = _mm256_set1_ps((float)i);
    for (long it = 0; it < PEAK_ITERS; it++)
        for (int i = 0; i < 12; i++) a[i] = _mm256_fmadd_ps(a[i], x, y);
    float s = 0;
    for (int i = 0; i < 12; i++) s += a[i][0];
#else
    float s = 0;
    (void)PEAK_ITERS;
#endif
    peak_sink = s;
}

/* flops of one job_peak call on one thread */
static double peak_flops(void)
{
#if defined(__AVX512F__)
    return (double)PEAK_ITERS / 2 * 24 * 16 * 2;
#else
    return (double)PEAK_ITERS * 12 * 8 * 2;
#endif
}

/* Whether the case named `name` runs: every case without a filter. */
static const char *filter;
static int selected(const char *name) { return !filter || strstr(name, filter); }

/* ---- 2. sgemm ----------------------------------------------------------------- */

typedef struct {
    tsrt_sgemm_args g;
    void *ws[8];
} gemm_job;

static void job_gemm(void *arg, int ith, int nth)
{
    gemm_job *j = arg;
    tsrt_sgemm(&j->g, ith, nth, j->ws[ith]);
}

/* Both shares of a 2-thread split, one after the other on this thread:
 * the split's own cost (duplicate packing, smaller blocks) without the
 * other core, whose availability on a shared machine is not ours. */
static void job_gemm_shares2(void *arg, int ith, int nth)
{
    gemm_job *j = arg;
    (void)ith, (void)nth;
    tsrt_sgemm(&j->g, 0, 2, j->ws[0]);
    tsrt_sgemm(&j->g, 1, 2, j->ws[0]);
}

static float *rand_buf(size_t n)
{
    float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    uint32_t s = 12345;
    for (size_t i = 0; i < n; i++) s = s * 1664525u + 1013904223u, p[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
    return p;
}

static void bench_gemm(int64_t m, int64_t n, int64_t k, int nth, int reps)
{
    char name[64];
    snprintf(name, sizeof name, "sgemm %lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
    if (!selected(name)) return;
    float *a = rand_buf((size_t)(m * k)), *b = rand_buf((size_t)(k * n)), *c = rand_buf((size_t)(m * n));
    gemm_job j = {.g = {.m = m, .n = n, .k = k, .a = a, .a_rs = k, .a_cs = 1, .b = b, .b_rs = n, .b_cs = 1,
                        .c = c, .c_rs = n, .c_cs = 1}};
    size_t ws = tsrt_sgemm_workspace(m, n, k);
    for (int i = 0; i < nth; i++) j.ws[i] = aligned_alloc(64, (ws + 63) / 64 * 64);
    team t;
    team_init(&t, nth);
    stats s = measure(&t, job_gemm, &j, reps);
    team_free(&t);
    report(name, nth, 2.0 * (double)m * (double)n * (double)k, s, "");
    if (nth == 1) {
        team_init(&t, 1);
        const double r = measure_ratio(&t, job_gemm, job_gemm_shares2, &j, reps);
        team_free(&t);
        printf("%-34s        both 2-thread shares on 1 thread: cpu %+.1f%% vs 1 thread (median of alternated runs)\n",
               name, 100.0 * (r - 1.0));
    }
    for (int i = 0; i < nth; i++) free(j.ws[i]);
    free(a), free(b), free(c);
}

/* ---- 3. conv -------------------------------------------------------------------- */

typedef struct {
    tsrt_conv_args cv;
    int algo;
    void *ws[8];
} conv_job;

static void job_conv(void *arg, int ith, int nth)
{
    conv_job *j = arg;
    tsrt_conv(&j->cv, j->algo, ith, nth, j->ws[ith]);
}

static void bench_conv(const char *name, int64_t c, int64_t h, int64_t o, int64_t kh, int64_t groups, int64_t stride,
                       int64_t pad, int nth, int reps)
{
    if (!selected(name)) return;
    tsrt_conv_args cv = {.n = 1, .c = c, .h = h, .w = h, .o = o, .kh = kh, .kw = kh, .groups = groups,
                         .stride_h = stride, .stride_w = stride, .pad_h = pad, .pad_w = pad};
    cv.oh = cv.ow = (h + 2 * pad - kh) / stride + 1;
    cv.x = rand_buf((size_t)(c * h * h));
    cv.wt = rand_buf((size_t)(o * (c / groups) * kh * kh));
    cv.y = rand_buf((size_t)(o * cv.oh * cv.ow));
    conv_job j = {.cv = cv, .algo = tsrt_conv_choose(&cv)};
    size_t ws = tsrt_conv_workspace(&cv);
    for (int i = 0; i < nth; i++) j.ws[i] = aligned_alloc(64, (ws + 63) / 64 * 64 + 64);
    team t;
    team_init(&t, nth);
    stats s = measure(&t, job_conv, &j, reps);
    team_free(&t);
    char extra[64];
    snprintf(extra, sizeof extra, " [%s]", tsrt_conv_algo_name(j.algo));
    report(name, nth, 2.0 * (double)o * (double)(cv.oh * cv.ow) * (double)(c / groups * kh * kh), s, extra);
    for (int i = 0; i < nth; i++) free(j.ws[i]);
    free((void *)cv.x), free((void *)cv.wt), free(cv.y);
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 21;
    filter = argc > 2 ? argv[2] : NULL;
    printf("tsrt ISA %d (0 generic, 1 AVX2, 2 AVX-512)  MR=%d NR=%d KC=%d MC=%d NC=%d  reps=%d\n", TSRT_ISA,
           TSRT_MR, TSRT_NR, TSRT_KC, TSRT_MC, TSRT_NC, reps);
    for (int nth = 1; nth <= 2; nth++) {
        team t;
        team_init(&t, nth);
        stats s = measure(&t, job_peak, NULL, reps);
        team_free(&t);
        if (nth == 1) peak_wall = peak_flops() / s.med * 1e-9, peak_cpu = peak_flops() / s.cpu * 1e-9;
        report("peak (FMA loop)", nth, peak_flops() * nth, s, "");
    }
    const int64_t shapes[][3] = {{1024, 1024, 1024}, {4096, 4096, 256}, {256, 256, 256}, {128, 768, 3072}};
    for (int nth = 1; nth <= 2; nth++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            bench_gemm(shapes[i][0], shapes[i][1], shapes[i][2], nth, reps);
    for (int nth = 1; nth <= 2; nth++) {
        bench_conv("conv 3x3 64->64 56x56 pad 1", 64, 56, 64, 3, 1, 1, 1, nth, reps);
        bench_conv("conv 1x1 256->64 56x56", 256, 56, 64, 1, 1, 1, 0, nth, reps);
        bench_conv("conv dw 3x3 32ch 112x112 pad 1", 32, 112, 32, 3, 32, 1, 1, nth, reps);
    }
    return 0;
}
