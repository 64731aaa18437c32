/* peak.c — the machine's measured ceilings, for bench/run.py to divide by:
 *
 *     cc -O2 -march=native -pthread bench/peak.c -o peak && ./peak THREADS
 *
 * prints two lines:
 *
 *     fma threads=2 gflops=412.3 vector_bits=512 accumulators=16
 *     copy threads=2 gbs=24.1 bytes=536870912 convention=read+write
 *
 * fma: every thread runs independent chains of vector FMAs (acc = acc * m + a)
 * whose accumulators stay in registers; 2 flops per lane per FMA. Enough
 * chains to cover the FMA latency times the number of FMA pipes (4-cycle
 * latency x 2 pipes = 8 needed on current x86), not so many that they spill:
 * 16 with AVX-512's 32 registers, 12 with AVX2's 16 (two more hold m and a).
 * A loop whose accumulators live in memory runs 3-4x slower
 * (docs/PERFORMANCE.md): that would not be a peak.
 *
 * copy: memcpy of a buffer much larger than the last-level cache, split
 * into one slice per thread; GB/s counts bytes read plus bytes written
 * (2 x size per copy, STREAM's convention), so a kernel that reads X bytes
 * and writes Y bytes compares (X + Y) / time with it. glibc's memcpy uses
 * non-temporal stores at this size, so no read-for-ownership traffic is
 * counted or paid: the best a streaming kernel can do.
 *
 * Each figure is the best of several repetitions (a peak is a maximum; the
 * machine is shared). Threads are pinned to CPUs 0..T-1 when possible. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#define VBITS 512
#define NACC 16
typedef __m512 vec;
#define VSET(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VSUM(v) _mm512_reduce_add_ps(v)
#elif defined(__AVX__) && defined(__FMA__)
#include <immintrin.h>
#define VBITS 256
#define NACC 12
typedef __m256 vec;
#define VSET(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
static float VSUM(vec v)
{
    float f[8];
    _mm256_storeu_ps(f, v);
    return f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
}
#else
/* No x86 FMA: a plain scalar chain, so the program still builds; the
 * figure is then a lower bound that run.py prints as measured. */
#define VBITS 32
#define NACC 8
typedef float vec;
#define VSET(x) (x)
#define VFMA(a, b, c) ((a) * (b) + (c))
#define VSUM(v) (v)
#endif

#define LANES (VBITS / 32)
#define FMA_ITERS 30000000L   /* per thread: 30M x NACC FMAs, about 0.05 s */
#define REPS 10  /* short and many: on a shared machine some land on an idle core */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu % CPU_SETSIZE, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);  /* best effort */
}

typedef struct job {
    int id;
    pthread_barrier_t *start;
    char *dst, *src;
    size_t bytes;
    double t_end;
    float sink;       /* keeps the FMA results alive */
} job;

/* ---- fma --------------------------------------------------------------------- */

static void *fma_thread(void *p)
{
    job *j = p;
    pin(j->id);
    vec m = VSET(0.9999999f), a = VSET(1e-7f);
    vec acc[NACC];
    for (int k = 0; k < NACC; k++) acc[k] = VSET(1.0f + (float)k * 1e-3f);
    pthread_barrier_wait(j->start);
    for (long i = 0; i < FMA_ITERS; i++) {
        /* the NACC chains are independent: each FMA waits only on its own
         * accumulator from the previous iteration */
#pragma GCC unroll 16
        for (int k = 0; k < NACC; k++) acc[k] = VFMA(acc[k], m, a);
    }
    j->t_end = now_s();
    float s = 0;
    for (int k = 0; k < NACC; k++) s += VSUM(acc[k]);
    j->sink = s;
    return NULL;
}

/* ---- copy -------------------------------------------------------------------- */

static void *copy_thread(void *p)
{
    job *j = p;
    pin(j->id);
    pthread_barrier_wait(j->start);
    memcpy(j->dst, j->src, j->bytes);
    j->t_end = now_s();
    return NULL;
}

/* One timed round of fn on T threads: wall time from the barrier to the
 * last thread's end. */
static double round_s(int t, void *(*fn)(void *), job *jobs)
{
    pthread_t th[256];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)t + 1);
    for (int i = 0; i < t; i++) {
        jobs[i].id = i;
        jobs[i].start = &start;
        pthread_create(&th[i], NULL, fn, &jobs[i]);
    }
    pthread_barrier_wait(&start);
    double t0 = now_s(), t1 = t0;
    for (int i = 0; i < t; i++) {
        pthread_join(th[i], NULL);
        if (jobs[i].t_end > t1) t1 = jobs[i].t_end;
    }
    pthread_barrier_destroy(&start);
    return t1 - t0;
}

/* 8x the last-level cache, at least 256 MiB, at most 512 MiB (the machine
 * is shared; some VMs report an LLC far larger than the real one). */
static size_t copy_bytes(void)
{
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    size_t n = llc > 0 ? (size_t)llc * 8 : 0;
    if (n < ((size_t)256 << 20)) n = (size_t)256 << 20;
    if (n > ((size_t)512 << 20)) n = (size_t)512 << 20;
    return n;
}

int main(int argc, char **argv)
{
    int t = argc > 1 ? atoi(argv[1]) : 1;
    if (t < 1 || t > 256) {
        fprintf(stderr, "usage: peak THREADS (1 to 256)\n");
        return 1;
    }
    job jobs[256];
    memset(jobs, 0, sizeof jobs);

    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        double s = round_s(t, fma_thread, jobs);
        if (s < best) best = s;
    }
    double flops = 2.0 * LANES * NACC * (double)FMA_ITERS * t;
    printf("fma threads=%d gflops=%.1f vector_bits=%d accumulators=%d\n", t, flops / best / 1e9, VBITS, NACC);

    size_t bytes = copy_bytes(), slice = bytes / (size_t)t / 64 * 64;
    char *src = malloc(bytes), *dst = malloc(bytes);
    if (!src || !dst) {
        fprintf(stderr, "peak: cannot allocate 2 x %zu bytes\n", bytes);
        return 1;
    }
    memset(src, 1, bytes);  /* touch every page before timing */
    memset(dst, 2, bytes);
    for (int i = 0; i < t; i++) {
        jobs[i].src = src + (size_t)i * slice;
        jobs[i].dst = dst + (size_t)i * slice;
        jobs[i].bytes = slice;
    }
    best = 1e30;
    for (int r = 0; r < REPS; r++) {
        double s = round_s(t, copy_thread, jobs);
        if (s < best) best = s;
    }
    double moved = 2.0 * (double)slice * t;
    printf("copy threads=%d gbs=%.1f bytes=%zu convention=read+write\n", t, moved / best / 1e9, slice * (size_t)t);
    free(src);
    free(dst);
    return 0;
}
