/* bench_clock.h — the clocks and the sort order the C timing harnesses
 * (conv_resnet50.c, gemm_micro.c, conv_dw_mobilenetv2.c) share.
 * Header-only, so each harness still builds with one cc command. */
#ifndef TS_BENCH_CLOCK_H
#define TS_BENCH_CLOCK_H

#include <time.h>

/* Wall clock, seconds. */
static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU time of the calling thread: it stops while the thread is descheduled,
 * so on a machine shared with other jobs it shows what the kernel does
 * while it runs (wall time is printed beside it). */
static inline double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* qsort order of doubles, for medians. */
static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
