/* session.c — the public session and graph-accessor API over the layers
 * below: a session binds a graph to a target (for now the interpreter). */
#include "interp/interp.h"

#include <string.h>

struct ts_session {
    const ts_graph *g;
};

ts_status ts_session_new(const ts_graph *g, const char *target, ts_session **out, ts_err *err)
{
    if (!g || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_session_new: NULL argument");
    if (target && strcmp(target, "interp") != 0)
        return ts_err_set(err, TS_ERR_UNSUPPORTED, "unknown target '%s' (available: interp)", target);
    ts_session *s = ts_mem_zalloc(sizeof *s);
    if (!s) return ts_err_set(err, TS_ERR_OOM, "out of memory creating a session");
    s->g = g;
    *out = s;
    return TS_OK;
}

void ts_session_free(ts_session *s) { ts_mem_free(s); }

ts_status ts_session_run(ts_session *s, int n_in, ts_tensor *const *inputs,
                         int n_out, ts_tensor **outputs, ts_err *err)
{
    if (!s || (n_in && !inputs) || (n_out && !outputs))
        return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_session_run: NULL argument");
    return ts_interp_run_graph(s->g, n_in, inputs, n_out, outputs, err);
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
