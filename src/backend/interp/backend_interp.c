/* backend_interp.c — the reference interpreter as a target: nothing is
 * compiled; a module is the graph, and a run walks it (src/interp/). */
#include "backend/backend.h"
#include "interp/interp.h"

struct ts_module {
    const ts_graph *g;
};

static ts_status compile(const ts_graph *g, const ts_session_opts *o, ts_module **out, ts_err *err)
{
    ts_module *m = ts_mem_zalloc(sizeof *m);
    if (!m) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    m->g = g;
    *out = m;
    return TS_OK;
}

static ts_status run(ts_module *m, int n_in, ts_tensor *const *in, int n_out, ts_tensor **out, int64_t *peak,
                     ts_err *err)
{
    if (peak) *peak = 0;   /* not measured */
    return ts_interp_run_graph(m->g, n_in, in, n_out, out, err);
}

static void module_free(ts_module *m) { ts_mem_free(m); }

const ts_backend ts_backend_interp = {
    .name = "interp",
    .compile = compile,
    .run = run,
    .free = module_free,
};
