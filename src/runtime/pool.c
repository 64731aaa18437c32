/* pool.c — the thread pool: one published job word, spin-then-sleep waits.
 *
 * A launch is one store: `job` = (sequence << 32) | nth. Workers compare it
 * with the last word they saw. The parts (ith) are claimed, in order, from
 * `claim` = (sequence << 32) | next part, by whichever thread gets there
 * first, the caller included: a worker that has not run yet (its CPU taken
 * by another job) leaves its part to the others instead of holding up the
 * launch, and the caller waits only for the parts claimed (`pending`
 * counts parts, not workers). A worker claims with a compare-and-swap that
 * fails once the sequence moved on, so it never reads fn/ctx of a launch
 * it has no part in: the caller may already be overwriting them for the
 * next one (D81).
 *
 * Both waits (a worker for a job, the caller for the last part) spin for
 * spin_ns and then sleep on a condition variable. Wake-ups are not lost:
 * the sleeper announces itself (sleepers++ or caller_waits = 1) and then
 * re-reads the condition, the waker writes the condition and then reads the
 * announcement, all sequentially consistent — so at least one of the two
 * sees the other's write (the Dekker pattern). The sleeper holds the mutex
 * from its announcement until pthread_cond_wait releases it, and the waker
 * signals under the mutex, so a signal cannot slip in before the wait. */
#include "runtime/pool.h"
#include "core/clock.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_SPIN_US 100

/* Fields written by different parties sit on different cache lines (padding,
 * not _Alignas: the hook's memory is only max_align_t aligned). */
struct ts_pool {
    int size;                 /* threads, the caller included */
    int nworkers;             /* workers actually started */
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t wake;      /* workers wait here for a job */
    pthread_cond_t done;      /* the caller waits here for the last part */
    _Atomic int64_t spin_ns;
    _Atomic int stop;
    /* written by the caller once per launch */
    char pad0[64];
    void (*fn)(void *ctx, int ith, int nth);
    void *ctx;
    uint64_t seq;
    _Atomic int busy;         /* a run is in progress */
    char pad1[64];
    _Atomic uint64_t job;     /* what workers spin on */
    _Atomic int sleepers;     /* workers asleep (or about to be) on `wake` */
    char pad2[64];
    _Atomic int pending;      /* parts of the job not finished */
    _Atomic uint64_t claim;   /* (sequence << 32) | the next part to claim */
    _Atomic int caller_waits; /* the caller is asleep (or about to be) on `done` */
    char pad3[64];
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ---- waiting ------------------------------------------------------------ */

/* One round of spinning, k counting from 1 since t0; false when the budget
 * is spent. The clock is read every 64 rounds (a pause is ~10-140 cycles).
 * After 2 us the spinner also yields every 64 rounds: when the thread it
 * waits for shares its core (an oversubscribed machine, or a pool pinned
 * to fewer cores than threads), sched_yield lets that thread run instead
 * of spending the whole budget in its way; with a core to itself the
 * call returns at once. */
static bool spin_round(unsigned k, int64_t t0, int64_t budget)
{
    cpu_relax();
    if ((k & 63) != 0) return true;
    int64_t spent = ts_now_ns() - t0;
    if (spent > budget) return false;
    if (spent > 2000) sched_yield();
    return true;
}

/* Spin until the job word differs from `seen`, for at most spin_ns; true if
 * it did. */
static bool spin_for_job(ts_pool *p, uint64_t seen, uint64_t *job)
{
    int64_t budget = atomic_load_explicit(&p->spin_ns, memory_order_relaxed);
    if (budget <= 0) return false;
    int64_t t0 = ts_now_ns();
    for (unsigned k = 1;; k++) {
        uint64_t j = atomic_load_explicit(&p->job, memory_order_acquire);
        if (j != seen) {
            *job = j;
            return true;
        }
        if (!spin_round(k, t0, budget)) return false;
    }
}

static uint64_t wait_job(ts_pool *p, uint64_t seen)
{
    uint64_t j;
    if (spin_for_job(p, seen, &j)) return j;
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->sleepers, 1);
    while ((j = atomic_load(&p->job)) == seen) pthread_cond_wait(&p->wake, &p->mu);
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->mu);
    return j;
}

static void wait_done(ts_pool *p)
{
    int64_t budget = atomic_load_explicit(&p->spin_ns, memory_order_relaxed);
    if (budget > 0) {
        int64_t t0 = ts_now_ns();
        for (unsigned k = 1;; k++) {
            if (atomic_load_explicit(&p->pending, memory_order_acquire) == 0) return;
            if (!spin_round(k, t0, budget)) break;
        }
    }
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->caller_waits, 1);
    while (atomic_load(&p->pending) != 0) pthread_cond_wait(&p->done, &p->mu);
    atomic_store(&p->caller_waits, 0);
    pthread_mutex_unlock(&p->mu);
}

/* ---- parts ---------------------------------------------------------------- */

/* Claim the next part of the launch whose job word is `job`: its ith, or
 * -1 when the launch has none left (or is over). */
static int claim_part(ts_pool *p, uint64_t job)
{
    const uint32_t seq = (uint32_t)(job >> 32), nth = (uint32_t)job;
    uint64_t c = atomic_load_explicit(&p->claim, memory_order_acquire);
    for (;;) {
        if ((uint32_t)(c >> 32) != seq || (uint32_t)c >= nth) return -1;
        if (atomic_compare_exchange_weak_explicit(&p->claim, &c, c + 1, memory_order_acq_rel,
                                                  memory_order_acquire))
            return (int)(uint32_t)c;
    }
}

/* A part finished: the last one wakes the caller if it sleeps. */
static void part_done(ts_pool *p)
{
    if (atomic_fetch_sub(&p->pending, 1) == 1 && atomic_load(&p->caller_waits)) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

/* ---- workers -------------------------------------------------------------- */

static void *worker_main(void *arg)
{
    ts_pool *p = arg;
    uint64_t seen = 0;
    for (;;) {
        seen = wait_job(p, seen);
        if (atomic_load(&p->stop)) break;
        int nth = (int)(uint32_t)seen;
        /* fn and ctx are read only with a part claimed: until it is done
         * the caller cannot return and publish another launch */
        for (int i; (i = claim_part(p, seen)) >= 0;) {
            p->fn(p->ctx, i, nth);
            part_done(p);
        }
    }
    return NULL;
}

/* ---- lifetime -------------------------------------------------------------- */

static int online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) return 1;
    return n > TS_POOL_MAX_THREADS ? TS_POOL_MAX_THREADS : (int)n;
}

static int64_t spin_from_env(void)
{
    const char *s = getenv("TESSERA_POOL_SPIN_US");
    if (s && *s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (*end == 0 && v >= 0 && v <= 1000000) return (int64_t)v * 1000;
    }
    return (int64_t)DEFAULT_SPIN_US * 1000;
}

/* Start the workers with every signal blocked, so that a program's signal
 * handlers keep running on its own threads. */
static ts_status start_workers(ts_pool *p, ts_err *err)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = 0;
    for (int i = 1; i < p->size && rc == 0; i++) {
        rc = pthread_create(&p->threads[i - 1], NULL, worker_main, p);
        if (rc == 0) p->nworkers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return ts_err_set(err, TS_ERR_RUNTIME, "thread pool: cannot start thread %d of %d: %s",
                          p->nworkers + 1, p->size, strerror(rc));
    return TS_OK;
}

ts_status ts_pool_new(int nthreads, ts_pool **out, ts_err *err)
{
    *out = NULL;
    if (nthreads > TS_POOL_MAX_THREADS)
        return ts_err_set(err, TS_ERR_INVALID_ARG, "thread pool: %d threads requested, at most %d",
                          nthreads, TS_POOL_MAX_THREADS);
    int size = nthreads > 0 ? nthreads : online_cores();
    ts_pool *p = ts_mem_zalloc(sizeof *p);
    if (!p) return ts_err_set(err, TS_ERR_OOM, "thread pool: out of memory");
    p->size = size;
    atomic_init(&p->spin_ns, spin_from_env());
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    if (size > 1) {
        p->threads = ts_mem_zalloc(sizeof *p->threads * (size_t)(size - 1));
        if (!p->threads) {
            ts_pool_free(p);
            return ts_err_set(err, TS_ERR_OOM, "thread pool: out of memory");
        }
        ts_status s = start_workers(p, err);
        if (s != TS_OK) {
            ts_pool_free(p);
            return s;
        }
    }
    *out = p;
    return TS_OK;
}

void ts_pool_free(ts_pool *p)
{
    if (!p) return;
    if (p->nworkers > 0) {
        atomic_store(&p->stop, 1);
        atomic_store(&p->job, ++p->seq << 32);
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < p->nworkers; i++) pthread_join(p->threads[i], NULL);
    }
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    ts_mem_free(p->threads);
    ts_mem_free(p);
}

int ts_pool_size(const ts_pool *p) { return p ? p->size : 1; }

void ts_pool_set_spin_us(ts_pool *p, int us)
{
    if (p) atomic_store_explicit(&p->spin_ns, us > 0 ? (int64_t)us * 1000 : 0, memory_order_relaxed);
}

/* ---- running ------------------------------------------------------------- */

static void run_serial(void (*fn)(void *, int, int), void *ctx, int nth)
{
    for (int i = 0; i < nth; i++) fn(ctx, i, nth);
}

void ts_pool_run(ts_pool *p, void (*fn)(void *ctx, int ith, int nth), void *ctx, int nth)
{
    if (nth <= 0) return;
    /* serial: no pool, one thread, one part, or the pool is busy (another
     * thread's run, or a job calling back into its own pool) */
    if (!p || p->size == 1 || nth == 1 || atomic_exchange(&p->busy, 1)) {
        run_serial(fn, ctx, nth);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    const uint64_t job = (++p->seq << 32) | (uint32_t)nth;
    atomic_store_explicit(&p->pending, nth, memory_order_relaxed);
    atomic_store_explicit(&p->claim, job & ~(uint64_t)0xffffffffu, memory_order_relaxed);
    /* seq_cst store: publishes fn/ctx/pending/claim and orders before the
     * load of sleepers (see the top of the file) */
    atomic_store(&p->job, job);
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
    for (int i; (i = claim_part(p, job)) >= 0;) {
        fn(ctx, i, nth);
        atomic_fetch_sub(&p->pending, 1);
    }
    wait_done(p);
    atomic_store_explicit(&p->busy, 0, memory_order_release);
}
