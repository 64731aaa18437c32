/* pool.h — a thread pool for kernels of the shape fn(ctx, ith, nth).
 *
 * A pool of size N is the calling thread plus N-1 workers. ts_pool_run
 * publishes one job, claims parts (ith) on the caller alongside the
 * workers and returns when every ith is done. Workers spin for a short
 * while after each job (launches come in quick succession: a compiled
 * program is a list of kernel launches) and then sleep on a condition
 * variable, so an idle pool costs no CPU.
 *
 * One pool runs one job at a time. ts_pool_run may be called from any
 * thread, one call at a time per pool (a session owns its pool). A call that
 * finds the pool busy — another thread's run, or a kernel that calls
 * ts_pool_run from inside a job — does not corrupt or deadlock anything: it
 * runs all of its ith serially on its own thread. */
#ifndef TS_POOL_H
#define TS_POOL_H

#include "core/core.h"

typedef struct ts_pool ts_pool;

/* The most threads a pool holds (ith and nth travel packed in one word). */
#define TS_POOL_MAX_THREADS 4096

/* A pool of nthreads threads (the caller counts as one: nthreads - 1
 * workers are started); nthreads <= 0: one per online core. Errors:
 * TS_ERR_INVALID_ARG above TS_POOL_MAX_THREADS, TS_ERR_OOM, TS_ERR_RUNTIME
 * when the system refuses a thread. */
ts_status ts_pool_new(int nthreads, ts_pool **out, ts_err *err);
/* Stops and joins the workers. NULL is a no-op. Not while a run is active. */
void ts_pool_free(ts_pool *p);
/* The number of threads, the caller included (1 for NULL). */
int ts_pool_size(const ts_pool *p);
/* Calls fn(ctx, ith, nth) once for every ith in [0, nth) and returns when
 * all calls have returned. Each ith goes to whichever thread claims it
 * first, the caller included (a worker that has not run yet holds nothing
 * up); no ith is tied to a thread. nth <= 0 does nothing; p == NULL runs
 * everything on the caller. fn must not block waiting for another ith
 * of the same job (they may run one after another on one thread). */
void ts_pool_run(ts_pool *p, void (*fn)(void *ctx, int ith, int nth), void *ctx, int nth);

/* How long (µs) workers and the caller spin before sleeping; the default
 * is 100 µs, TESSERA_POOL_SPIN_US overrides it at ts_pool_new, and 0 makes
 * them sleep at once (for oversubscribed machines). */
void ts_pool_set_spin_us(ts_pool *p, int us);

#endif
