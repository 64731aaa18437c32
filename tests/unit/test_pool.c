/* test_pool.c — the thread pool: every ith runs exactly once for nth below,
 * at and above the pool size; many launches through the spin path and the
 * sleep path (no lost wake-ups); NULL pools, nested and concurrent runs run
 * serially; parts claimed by whichever thread comes first, so a sleeping
 * worker does not hold up a launch; allocation failures; and the
 * round-trip latency of an empty launch, printed. */
#include "check.h"
#include "core/clock.h"
#include "core/core.h"
#include "runtime/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- helpers ------------------------------------------------------------- */

#define MAX_ITH 64

typedef struct hits {
    _Atomic int count[MAX_ITH];
    _Atomic int bad_nth;
    int want_nth;
} hits;

static void count_fn(void *ctx, int ith, int nth)
{
    hits *h = ctx;
    if (nth != h->want_nth || ith < 0 || ith >= MAX_ITH) atomic_fetch_add(&h->bad_nth, 1);
    else atomic_fetch_add(&h->count[ith], 1);
}

/* Run nth parts on p and check each ran once. */
static bool run_once_each(ts_pool *p, int nth)
{
    hits h;
    memset(&h, 0, sizeof h);
    h.want_nth = nth;
    ts_pool_run(p, count_fn, &h, nth);
    bool ok = atomic_load(&h.bad_nth) == 0;
    for (int i = 0; i < MAX_ITH; i++) ok = ok && atomic_load(&h.count[i]) == (i < nth ? 1 : 0);
    return ok;
}

static void empty_fn(void *ctx, int ith, int nth) { (void)ctx, (void)ith, (void)nth; }

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* ---- correctness ------------------------------------------------------------ */

static void test_shapes(void)
{
    ts_err err = {0};
    ts_pool *p = NULL;
    CHECK(ts_pool_new(4, &p, &err) == TS_OK);
    CHECK(ts_pool_size(p) == 4);
    for (int nth = 0; nth <= 13; nth++) CHECK_MSG(run_once_each(p, nth), "nth %d", nth);
    ts_pool_free(p);

    CHECK(ts_pool_size(NULL) == 1);
    CHECK(run_once_each(NULL, 5));

    CHECK(ts_pool_new(1, &p, &err) == TS_OK);
    CHECK(run_once_each(p, 3));
    ts_pool_free(p);

    CHECK(ts_pool_new(0, &p, &err) == TS_OK);
    CHECK(ts_pool_size(p) >= 1);
    CHECK(run_once_each(p, ts_pool_size(p) < MAX_ITH ? ts_pool_size(p) : MAX_ITH));
    ts_pool_free(p);
    ts_pool_free(NULL);

    CHECK(ts_pool_new(TS_POOL_MAX_THREADS + 1, &p, &err) == TS_ERR_INVALID_ARG);
    CHECK(p == NULL && strstr(err.msg, "at most") != NULL);
}

typedef struct sum_ctx {
    _Atomic long total;
} sum_ctx;

static void add_fn(void *ctx, int ith, int nth)
{
    sum_ctx *s = ctx;
    atomic_fetch_add(&s->total, ith + 1);
}

/* Many launches with spin_us; every `pause_every` launches the caller
 * sleeps longer than the spin, so workers go to sleep and must be woken. */
static void stress(int threads, int spin_us, int launches, int pause_every)
{
    ts_pool *p = NULL;
    CHECK(ts_pool_new(threads, &p, NULL) == TS_OK);
    if (!p) return;
    ts_pool_set_spin_us(p, spin_us);
    sum_ctx s = {0};
    long want = 0;
    for (int i = 0; i < launches; i++) {
        int nth = 1 + i % (threads + 1);
        ts_pool_run(p, add_fn, &s, nth);
        want += (long)nth * (nth + 1) / 2;
        if (atomic_load(&s.total) != want) break;
        if (pause_every && i % pause_every == 0) sleep_us(spin_us + 50);
    }
    CHECK_MSG(atomic_load(&s.total) == want, "threads %d spin %d: total %ld want %ld", threads, spin_us,
              atomic_load(&s.total), want);
    ts_pool_free(p);
}

static void test_stress(void)
{
    stress(2, 100, 20000, 0);   /* workers hot */
    stress(3, 0, 2000, 0);      /* always through the condition variables */
    stress(2, 2, 2000, 7);      /* both, switching often */
    stress(4, 20, 2000, 3);
}

/* A job that launches on its own pool: must run serially, not deadlock. */
typedef struct nest_ctx {
    ts_pool *p;
    hits inner[MAX_ITH];
} nest_ctx;

static void nest_fn(void *ctx, int ith, int nth)
{
    nest_ctx *n = ctx;
    n->inner[ith].want_nth = 3;
    ts_pool_run(n->p, count_fn, &n->inner[ith], 3);
}

static void test_nested(void)
{
    static nest_ctx n;
    memset(&n, 0, sizeof n);
    CHECK(ts_pool_new(2, &n.p, NULL) == TS_OK);
    ts_pool_run(n.p, nest_fn, &n, 2);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) CHECK(atomic_load(&n.inner[i].count[j]) == 1);
    ts_pool_free(n.p);
}

/* Two threads launching on one pool at once: each call completes all of
 * its parts (one of them serially when it finds the pool busy). */
typedef struct conc_ctx {
    ts_pool *p;
    sum_ctx s;
    long want;
} conc_ctx;

static void *launcher(void *arg)
{
    conc_ctx *c = arg;
    for (int i = 0; i < 1000; i++) ts_pool_run(c->p, add_fn, &c->s, 3);
    c->want = 1000L * 6;
    return NULL;
}

static void test_concurrent_callers(void)
{
    ts_pool *p = NULL;
    CHECK(ts_pool_new(3, &p, NULL) == TS_OK);
    conc_ctx c[2];
    memset(c, 0, sizeof c);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        c[i].p = p;
        pthread_create(&t[i], NULL, launcher, &c[i]);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        CHECK(atomic_load(&c[i].s.total) == c[i].want);
    }
    /* and from this thread afterwards */
    CHECK(run_once_each(p, 3));
    ts_pool_free(p);
}

/* ---- parts go to whoever claims them (D81) -------------------------------- */

typedef struct owner_ctx {
    pthread_t caller;
    _Atomic int by_caller, by_worker, bad;
} owner_ctx;

static void owner_fn(void *ctx, int ith, int nth)
{
    owner_ctx *o = ctx;
    if (ith < 0 || ith >= nth) atomic_fetch_add(&o->bad, 1);
    if (pthread_equal(pthread_self(), o->caller)) atomic_fetch_add(&o->by_caller, 1);
    else atomic_fetch_add(&o->by_worker, 1);
}

/* A worker that has not run yet must not hold up a launch: the caller
 * claims the parts it finds unclaimed. With the workers asleep (no spin),
 * an empty part takes nanoseconds and a wake-up microseconds, so the
 * caller runs both parts of a 2-part launch nearly every time; the pool
 * before D81 gave part 1 to worker 1 always and waited for it. Every part
 * still runs once (run_once_each, and the counts here). */
static void test_parts_claimed(void)
{
    ts_pool *p = NULL;
    CHECK(ts_pool_new(2, &p, NULL) == TS_OK);
    ts_pool_set_spin_us(p, 0);
    owner_ctx o;
    memset(&o, 0, sizeof o);
    o.caller = pthread_self();
    int launches = 200, both_by_caller = 0;
    for (int i = 0; i < launches; i++) {
        int before = atomic_load(&o.by_caller);
        ts_pool_run(p, owner_fn, &o, 2);
        if (atomic_load(&o.by_caller) - before == 2) both_by_caller++;
    }
    CHECK(atomic_load(&o.bad) == 0);
    CHECK_MSG(atomic_load(&o.by_caller) + atomic_load(&o.by_worker) == 2 * launches, "%d + %d parts",
              atomic_load(&o.by_caller), atomic_load(&o.by_worker));
    CHECK_MSG(both_by_caller > 0, "the caller never ran a sleeping worker's part in %d launches", launches);
    CHECK(run_once_each(p, 2) && run_once_each(p, 5));
    ts_pool_free(p);
}

/* ---- allocation failures --------------------------------------------------- */

static long alloc_count, alloc_fail_at;

static void *failing_alloc(void *ud, void *ptr, size_t n)
{
    (void)ud;
    if (n == 0) {
        free(ptr);
        return NULL;
    }
    if (++alloc_count == alloc_fail_at) return NULL;
    return realloc(ptr, n);
}

static void test_oom(void)
{
    for (long k = 1; k < 10; k++) {
        ts_set_allocator(failing_alloc, NULL);
        alloc_count = 0;
        alloc_fail_at = k;
        ts_pool *p = NULL;
        ts_err err = {0};
        ts_status s = ts_pool_new(3, &p, &err);
        bool hit = alloc_count >= k;
        if (p) CHECK(run_once_each(p, 3));
        ts_pool_free(p);
        ts_set_allocator(NULL, NULL);
        CHECK_MSG(hit ? s == TS_ERR_OOM && !p : s == TS_OK, "allocation %ld: %s", k, err.msg);
        if (!hit) break;
    }
}

/* ---- latency ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median and 90th percentile of `reps` empty launches of nth = 2 (one
 * worker), in µs; `gap_us` of idle time before each launch. */
static void latency(ts_pool *p, int reps, long gap_us, double *med, double *p90)
{
    double *t = malloc(sizeof *t * (size_t)reps);
    for (int i = 0; i < 200; i++) ts_pool_run(p, empty_fn, NULL, 2);  /* warm-up */
    for (int i = 0; i < reps; i++) {
        if (gap_us) sleep_us(gap_us);
        double t0 = ts_now_us();
        ts_pool_run(p, empty_fn, NULL, 2);
        t[i] = ts_now_us() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    *med = t[reps / 2];
    *p90 = t[reps * 9 / 10];
    free(t);
}

static void *empty_thread(void *arg) { return arg; }

/* The peer: what a launch costs without a pool (create and join a thread). */
static double create_join_us(int reps)
{
    double *t = malloc(sizeof *t * (size_t)reps);
    for (int i = 0; i < reps; i++) {
        double t0 = ts_now_us();
        pthread_t th;
        pthread_create(&th, NULL, empty_thread, NULL);
        pthread_join(th, NULL);
        t[i] = ts_now_us() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    double med = t[reps / 2];
    free(t);
    return med;
}

static void test_latency(void)
{
    ts_pool *p = NULL;
    CHECK(ts_pool_new(2, &p, NULL) == TS_OK);
    if (!p) return;
    double hot, hot90, cold, cold90;
    latency(p, 20000, 0, &hot, &hot90);    /* back to back: the worker spins */
    ts_pool_set_spin_us(p, 0);
    latency(p, 500, 200, &cold, &cold90);  /* the worker is asleep every time */
    printf("pool latency, empty ts_pool_run, 2 threads: spinning worker median %.2f us (p90 %.2f), "
           "sleeping worker median %.2f us (p90 %.2f); peer: pthread_create + join median %.2f us\n",
           hot, hot90, cold, cold90, create_join_us(500));
    /* generous: a shared, loaded machine; sanitizers */
    CHECK_MSG(hot < 1000, "median %.2f us", hot);
    ts_pool_free(p);
}

int main(void)
{
    test_shapes();
    test_stress();
    test_nested();
    test_concurrent_callers();
    test_parts_claimed();
    test_oom();
    test_latency();
    return check_report();
}
