/* session.c — the public session and graph-accessor API over the layers
 * below: a session binds a graph to a target, "cpu" (backend/cpu: compiled
 * kernels, a thread pool; the default) or "interp" (the reference
 * interpreter). */
#include "backend/cpu/cpu.h"
#include "interp/interp.h"
#include "runtime/pool.h"
#include "runtime/trace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

typedef enum target { T_INTERP, T_CPU } target;

struct ts_session {
    const ts_graph *g;
    target t;
    ts_cpu_program *prog;
    ts_pool *pool;
    pthread_mutex_t pool_lock;   /* the pool serves one run at a time; others run on one thread */
    ts_trace *trace;
    ts_cpu_scratch scratch;      /* kept between the runs that hold pool_lock */
    _Atomic int64_t peak;
};

ts_status ts_session_new(const ts_graph *g, const char *target, ts_session **out, ts_err *err)
{
    return ts_session_new_opts(g, target, NULL, out, err);
}

/* The default target falls back to the interpreter when the C toolchain
 * does not work at all, saying so once per process on stderr (a silent
 * slow path would be worse than the warning). A toolchain that compiles
 * the probe but rejects this graph's code is an error, not a fallback:
 * that is a bug to see, not to hide. */
static _Atomic int warned_fallback;

static bool fall_back(const ts_cpu_opts *co, const ts_err *why)
{
    ts_err probe = {0};
    if (ts_cpu_probe(co, &probe) != TS_ERR_TOOLCHAIN) return false;
    if (!atomic_exchange(&warned_fallback, 1))
        fprintf(stderr, "tessera: warning: the cpu target cannot compile here (%s); running on the reference "
                "interpreter instead, much slower (target \"interp\" chooses it without this warning)\n",
                why->msg);
    return true;
}

ts_status ts_session_new_opts(const ts_graph *g, const char *target, const ts_session_opts *o, ts_session **out,
                              ts_err *err)
{
    if (!g || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_session_new: NULL argument");
    enum target t;
    if (!target || strcmp(target, "cpu") == 0) t = T_CPU;
    else if (strcmp(target, "interp") == 0) t = T_INTERP;
    else return ts_err_set(err, TS_ERR_UNSUPPORTED, "unknown target '%s' (available: cpu, interp)", target);
    if (o && o->threads < 0) return ts_err_set(err, TS_ERR_INVALID_ARG, "threads must be positive, got %d", o->threads);
    ts_session *s = ts_mem_zalloc(sizeof *s);
    if (!s) return ts_err_set(err, TS_ERR_OOM, "out of memory creating a session");
    s->g = g;
    s->t = t;
    pthread_mutex_init(&s->pool_lock, NULL);
    ts_status st = TS_OK;
    if (t == T_CPU) {
        ts_cpu_opts co = {0};
        if (o) co = (ts_cpu_opts){.cc = o->cc, .cflags = o->cflags, .cache_dir = o->cache_dir};
        ts_err why = {0};
        st = ts_cpu_compile(g, &co, &s->prog, &why);
        if (st == TS_ERR_TOOLCHAIN && !target && fall_back(&co, &why)) {
            s->t = T_INTERP;
            st = TS_OK;
        } else if (st != TS_OK && err) {
            *err = why;
        }
        if (st == TS_OK && s->t == T_CPU) st = ts_pool_new(o ? o->threads : 0, &s->pool, err);
    }
    if (st != TS_OK) {
        ts_session_free(s);
        return st;
    }
    *out = s;
    return TS_OK;
}

const char *ts_session_target(const ts_session *s)
{
    return !s ? NULL : s->t == T_CPU ? "cpu" : "interp";
}

void ts_session_free(ts_session *s)
{
    if (!s) return;
    ts_pool_free(s->pool);
    ts_cpu_program_free(s->prog);
    ts_trace_free(s->trace);
    ts_cpu_scratch_free(&s->scratch);
    pthread_mutex_destroy(&s->pool_lock);
    ts_mem_free(s);
}

ts_status ts_session_run(ts_session *s, int n_in, ts_tensor *const *inputs, int n_out, ts_tensor **outputs,
                         ts_err *err)
{
    if (!s || (n_in && !inputs) || (n_out && !outputs))
        return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_session_run: NULL argument");
    if (s->t == T_INTERP) return ts_interp_run_graph(s->g, n_in, inputs, n_out, outputs, err);
    bool own = pthread_mutex_trylock(&s->pool_lock) == 0;
    int64_t peak = 0;
    ts_status st = ts_cpu_run(s->prog, own ? s->pool : NULL, own ? &s->scratch : NULL, n_in, inputs, n_out,
                              outputs, own ? s->trace : NULL, &peak, err);
    if (own) pthread_mutex_unlock(&s->pool_lock);
    atomic_store(&s->peak, peak);
    return st;
}

void ts_session_compile_info(const ts_session *s, double *compile_ms, int *cache_hit, int *kernels, int *fallbacks)
{
    double ms = 0;
    bool hit = false;
    int k = 0, f = 0;
    if (s && s->prog) ts_cpu_program_stats(s->prog, &ms, &hit, &k, &f);
    if (compile_ms) *compile_ms = ms;
    if (cache_hit) *cache_hit = s && s->prog ? (hit ? 1 : 0) : -1;
    if (kernels) *kernels = k;
    if (fallbacks) *fallbacks = f;
}

int64_t ts_session_peak_bytes(const ts_session *s) { return s ? atomic_load(&s->peak) : 0; }

ts_status ts_session_profile(ts_session *s, int enable, ts_err *err)
{
    if (!s) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_session_profile: NULL session");
    if (s->t != T_CPU) return ts_err_set(err, TS_ERR_UNSUPPORTED, "profiles are recorded for the cpu target only");
    pthread_mutex_lock(&s->pool_lock);
    ts_status st = TS_OK;
    if (enable && !s->trace) st = ts_trace_new(&s->trace, err);
    if (!enable) {
        ts_trace_free(s->trace);
        s->trace = NULL;
    }
    pthread_mutex_unlock(&s->pool_lock);
    return st;
}

ts_status ts_session_write_profile(ts_session *s, const char *path, ts_err *err)
{
    if (!s || !path) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_session_write_profile: NULL argument");
    if (!s->trace) return ts_err_set(err, TS_ERR_INVALID_ARG, "profiling is not enabled on this session");
    pthread_mutex_lock(&s->pool_lock);
    ts_status st = ts_trace_write(s->trace, path, err);
    pthread_mutex_unlock(&s->pool_lock);
    return st;
}

int ts_graph_num_inputs(const ts_graph *g) { return g->body->n_params; }
int ts_graph_num_outputs(const ts_graph *g) { return g->body->n_results; }

const char *ts_graph_input_name(const ts_graph *g, int i)
{
    if (i < 0 || i >= g->body->n_params) return NULL;
    return g->body->params[i]->name;
}

const char *ts_graph_output_name(const ts_graph *g, int i)
{
    if (i < 0 || i >= g->body->n_results) return NULL;
    return g->body->results[i]->name;
}
