/* backend_cpu.c — the CPU compiler as a target: a module is the compiled
 * program (program.c: fusion, loop IR, C, JIT) with its thread pool and
 * the state one run at a time may keep (scratch memory, the trace).
 * Concurrent runs: the one that takes the pool lock runs on the pool with
 * the kept scratch; the others run on their caller's thread alone. */
#include "backend/backend.h"
#include "backend/cpu/cpu.h"
#include "codegen/cpu/emit.h"
#include "runtime/pool.h"
#include "runtime/trace.h"

#include <pthread.h>
#include <string.h>

struct ts_module {
    ts_cpu_program *prog;
    ts_pool *pool;
    pthread_mutex_t pool_lock;   /* the pool, scratch and trace serve one run at a time */
    ts_cpu_scratch scratch;      /* kept between the runs that hold pool_lock */
    ts_trace *trace;
};

static ts_cpu_opts cpu_opts(const ts_session_opts *o)
{
    ts_cpu_opts co = {0};
    if (o) co = (ts_cpu_opts){.cc = o->cc, .cflags = o->cflags, .cache_dir = o->cache_dir, .exact = o->exact != 0};
    return co;
}

static void module_free(ts_module *m)
{
    if (!m) return;
    ts_pool_free(m->pool);
    ts_cpu_program_free(m->prog);
    ts_trace_free(m->trace);
    ts_cpu_scratch_free(&m->scratch);
    pthread_mutex_destroy(&m->pool_lock);
    ts_mem_free(m);
}

static ts_status compile(const ts_graph *g, const ts_session_opts *o, ts_module **out, ts_err *err)
{
    ts_module *m = ts_mem_zalloc(sizeof *m);
    if (!m) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    pthread_mutex_init(&m->pool_lock, NULL);
    ts_cpu_opts co = cpu_opts(o);
    ts_status st = ts_cpu_compile(g, &co, &m->prog, err);
    if (st == TS_OK) st = ts_pool_new(o ? o->threads : 0, &m->pool, err);
    if (st != TS_OK) {
        module_free(m);
        return st;
    }
    *out = m;
    return TS_OK;
}

static ts_status run(ts_module *m, int n_in, ts_tensor *const *in, int n_out, ts_tensor **out, int64_t *peak,
                     ts_err *err)
{
    bool own = pthread_mutex_trylock(&m->pool_lock) == 0;
    ts_status st = ts_cpu_run(m->prog, own ? m->pool : NULL, own ? &m->scratch : NULL, n_in, in, n_out, out,
                              own ? m->trace : NULL, peak, err);
    if (own) pthread_mutex_unlock(&m->pool_lock);
    return st;
}

static void stats(const ts_module *m, ts_module_stats *out)
{
    bool hit = false;
    ts_cpu_program_stats(m->prog, &out->compile_ms, &hit, &out->kernels, &out->fallbacks);
    out->cache_hit = hit ? 1 : 0;
}

static ts_status profile(ts_module *m, int enable, ts_err *err)
{
    pthread_mutex_lock(&m->pool_lock);
    ts_status st = TS_OK;
    if (enable && !m->trace) st = ts_trace_new(&m->trace, err);
    if (!enable) {
        ts_trace_free(m->trace);
        m->trace = NULL;
    }
    pthread_mutex_unlock(&m->pool_lock);
    return st;
}

static ts_status write_profile(ts_module *m, const char *path, ts_err *err)
{
    if (!m->trace) return ts_err_set(err, TS_ERR_INVALID_ARG, "profiling is not enabled on this session");
    pthread_mutex_lock(&m->pool_lock);
    ts_status st = ts_trace_write(m->trace, path, err);
    pthread_mutex_unlock(&m->pool_lock);
    return st;
}

static ts_status describe(const ts_graph *g, const char *what, char **text, ts_err *err)
{
    if (strcmp(what, "c") == 0) return ts_cpu_source(g, text, err);
    if (strcmp(what, "loops") == 0) return ts_cpu_loops_text(g, text, err);
    return ts_err_set(err, TS_ERR_UNSUPPORTED, "the cpu target describes \"c\" or \"loops\", not \"%s\"", what);
}

static ts_status probe(const ts_session_opts *o, ts_err *err)
{
    ts_cpu_opts co = cpu_opts(o);
    return ts_cpu_probe(&co, err);
}

const ts_backend ts_backend_cpu = {
    .name = "cpu",
    .compile = compile,
    .run = run,
    .free = module_free,
    .compiles = ts_emit_c_compiles,
    .stats = stats,
    .profile = profile,
    .write_profile = write_profile,
    .describe = describe,
    .probe = probe,
};
