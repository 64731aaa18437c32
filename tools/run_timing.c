/* run_timing.c — what `tessera run --repeat N` measures: compile (load)
 * time, the session's peak memory, and the latency of N timed runs after
 * the warm-up. cmd_run.c calls in at four places (COMPILE_TIMED around
 * the load and the passes, timing_count_memory at the start, open_session
 * and timing_report); everything else about timing lives here so that the
 * command's main file stays about binding inputs and writing outputs.
 *
 * The lines it prints, in order, after the outputs of the warm-up run:
 *
 *     compile_ms=12.345 cache=none
 *     arena_peak_bytes=1048576
 *     latency median_ms=0.362 min_ms=0.359 runs=5
 *
 * The latency line is always the last line of stdout (bench/run.py and
 * scripts read it by position). */
#include "cli.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* ---- clock ------------------------------------------------------------------------ */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* compile_ms is the sum of the timed phases (the model load, the passes,
 * ts_session_new): reading input files is left out, since a 64 MiB input
 * would otherwise dominate a warm compile time. */
static double compile_acc_ms, compile_t0;

void timing_compile_start(void) { compile_t0 = now_ms(); }

ts_status timing_compile_stop(ts_status s)
{
    compile_acc_ms += now_ms() - compile_t0;
    return s;
}

/* ---- the counting allocation hook --------------------------------------------------
 * The library's hook has the shape (ud, ptr, nsize): it is not told the
 * old size, so each block carries its size in a header of one max_align_t
 * (which keeps the alignment malloc gives). Counters are atomic: a
 * threaded target may allocate from several threads. */
#define HDR sizeof(max_align_t)

static atomic_size_t live_bytes, peak_bytes;
static bool counting;

static void note_peak(size_t now)
{
    size_t p = atomic_load(&peak_bytes);
    while (now > p && !atomic_compare_exchange_weak(&peak_bytes, &p, now)) {
    }
}

static void *counting_alloc(void *ud, void *ptr, size_t n)
{
    (void)ud;
    char *base = ptr ? (char *)ptr - HDR : NULL;
    size_t old = base ? *(size_t *)base : 0;
    if (n == 0) {
        free(base);
        atomic_fetch_sub(&live_bytes, old);
        return NULL;
    }
    if (n > SIZE_MAX - HDR) return NULL;
    char *q = realloc(base, n + HDR);
    if (!q) return NULL;   /* realloc failed: the old block is intact and still counted */
    *(size_t *)q = n;
    if (n >= old) note_peak(atomic_fetch_add(&live_bytes, n - old) + (n - old));
    else atomic_fetch_sub(&live_bytes, old - n);
    return q + HDR;
}

/* Installed before the library allocates anything and never removed: a
 * block allocated with the header must be freed by this hook, and blocks
 * live until the command returns. */
void timing_count_memory(void)
{
    ts_set_allocator(counting_alloc, NULL);
    counting = true;
}

/* ---- the session -------------------------------------------------------------------- */

static size_t session_base;  /* live bytes before ts_session_new: the graph and the inputs */

/* --threads: 0 (not given) means every online core. */
static int thread_count(const cli *c)
{
    if (c->threads > 0) return (int)c->threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

ts_status open_session(const ts_graph *g, const cli *c, ts_session **s, ts_err *err)
{
    session_base = atomic_load(&live_bytes);
    /* the interpreter is single-threaded: the count matters to cpu only */
    ts_session_opts o = {.threads = thread_count(c)};
    ts_status st = COMPILE_TIMED(ts_session_new_opts(g, c->target, &o, s, err));
    if (st == TS_OK && c->profile) st = ts_session_profile(*s, 1, err);
    return st;
}

/* --profile FILE: the kernel times of every run, as a Chrome trace. */
int timing_write_profile(ts_session *s, const cli *c)
{
    ts_err err = {0};
    if (!c->profile || !s) return 0;
    return ts_session_write_profile(s, c->profile, &err) == TS_OK ? 0 : fail_err(&err);
}

/* ---- timed runs ---------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *ms, long n)
{
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    return n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}

/* One timed run; *peak grows to this run's peak above session_base. */
static int timed_run(ts_session *s, int n_in, ts_tensor **in, int n_out, ts_tensor **out, double *ms,
                     size_t *peak)
{
    ts_err err = {0};
    atomic_store(&peak_bytes, atomic_load(&live_bytes));
    double t0 = now_ms();
    ts_status st = ts_session_run(s, n_in, in, n_out, out, &err);
    *ms = now_ms() - t0;
    size_t p = atomic_load(&peak_bytes);
    if (p > session_base && p - session_base > *peak) *peak = p - session_base;
    for (int i = 0; i < n_out; i++) {
        ts_tensor_release(out[i]);
        out[i] = NULL;
    }
    return st == TS_OK ? 0 : fail_err(&err);
}

/* --repeat N: N timed runs (the warm-up already happened), then the three
 * report lines. The cache field is "none" for the interpreter, which
 * compiles nothing; the cpu target says whether its code came from the
 * on-disk cache (hit) or the C compiler ran (miss). */
int timing_report(ts_session *s, int n_in, ts_tensor **in, int n_out, ts_tensor **out, const cli *c)
{
    double *ms = malloc(sizeof *ms * (size_t)c->repeat);
    if (!ms) return fail("out of memory");
    size_t peak = 0;
    int r = 0;
    for (long i = 0; i < c->repeat && !r; i++) r = timed_run(s, n_in, in, n_out, out, &ms[i], &peak);
    if (!r) {
        double med = median(ms, c->repeat);   /* sorts ms: ms[0] is the minimum after it */
        int hit = -1;
        ts_session_compile_info(s, NULL, &hit, NULL, NULL);
        printf("compile_ms=%.3f cache=%s\n", compile_acc_ms, hit < 0 ? "none" : hit ? "hit" : "miss");
        if (counting) printf("arena_peak_bytes=%zu\n", peak);
        printf("latency median_ms=%.3f min_ms=%.3f runs=%ld\n", med, ms[0], c->repeat);
    }
    free(ms);
    return r;
}
