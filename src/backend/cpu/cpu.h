/* cpu.h — the CPU backend: a graph compiled to kernels (fusion, loop IR,
 * generated C, JIT) and run with fallback nodes on the interpreter's
 * kernels, over a thread pool (docs/compiler.md).
 *
 * A program is immutable once compiled: several threads may run it at
 * once, each with its own ts_cpu_run state (the session keeps one per
 * call). Sizes are evaluated per run, so a program compiled once serves
 * every binding of the graph's symbols. */
#ifndef TS_BACKEND_CPU_H
#define TS_BACKEND_CPU_H

#include "ir/ir.h"
#include "lower/fuse.h"
#include "lower/loop.h"

typedef struct ts_pool ts_pool;
typedef struct ts_trace ts_trace;

typedef struct ts_cpu_opts {
    const char *cc, *cflags, *cache_dir;   /* NULL: the JIT's defaults (docs/runtime.md) */
    bool exact;                            /* ts_session_opts.exact */
} ts_cpu_opts;

typedef struct ts_cpu_program ts_cpu_program;

/* The generated C of g (no compilation): `tessera ir --emit c`. */
ts_status ts_cpu_source(const ts_graph *g, char **src, ts_err *err);
/* The loop IR of g's kernels as text: `tessera ir --loops`. */
ts_status ts_cpu_loops_text(const ts_graph *g, char **text, ts_err *err);

ts_status ts_cpu_compile(const ts_graph *g, const ts_cpu_opts *o, ts_cpu_program **out, ts_err *err);
void ts_cpu_program_free(ts_cpu_program *p);
/* Whether these options' C compiler works here (a one-function module
 * compiled, loaded and called): TS_OK, or TS_ERR_TOOLCHAIN and why. */
ts_status ts_cpu_probe(const ts_cpu_opts *o, ts_err *err);

/* How the last compile went: wall time and whether the cache served it. */
void ts_cpu_program_stats(const ts_cpu_program *p, double *compile_ms, bool *cache_hit, int *n_kernels,
                          int *n_fallback);

/* Memory a run may keep for the next one (the arena and the template
 * workspace), so that repeated runs do not fault fresh pages in: one per
 * session, used by one run at a time; zero-initialise it, free it with
 * ts_cpu_scratch_free. */
typedef struct ts_cpu_scratch {
    uint8_t *arena, *ws;
    size_t arena_cap, ws_cap;
    /* the last run's outputs: a result tensor its caller has released
     * (only this reference left) is written again instead of allocated */
    ts_tensor **outs;
    int n_outs;
    /* the last run's memory plan: its requests and the offsets they got,
     * reused while the next run asks the same (the sizes of a static
     * program never change; planning was ~20% of a small model's run) */
    int plan_n;
    void *plan_bufs;
    int64_t *plan_offs, plan_total;
} ts_cpu_scratch;
void ts_cpu_scratch_free(ts_cpu_scratch *s);

/* One run: inputs bound and checked, outputs new references. pool,
 * scratch and trace may be NULL. *peak_bytes (may be NULL) receives the
 * most intermediate bytes alive at once. */
ts_status ts_cpu_run(const ts_cpu_program *p, ts_pool *pool, ts_cpu_scratch *scratch, int n_in,
                     ts_tensor *const *in, int n_out, ts_tensor **out, ts_trace *trace, int64_t *peak_bytes,
                     ts_err *err);

#endif
