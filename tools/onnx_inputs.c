/* onnx_inputs.c — the inputs and outputs an ONNX model declares
 * (ts_onnx_signature), read before the model is loaded (cli.h says why),
 * in the shape the commands use. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* One value of the signature into the tool's struct (name and dims
 * copied; kind points into the signature, which m keeps). */
static ts_status copy_value(model_input *in, const char *name, const char *kind, int elem_type, int rank,
                            const int64_t *dims, ts_err *err)
{
    in->name = strdup(name);
    in->kind = kind;
    in->elem_type = elem_type;
    in->rank = rank;
    if (rank > 0) {
        in->dims = calloc((size_t)rank + 1, sizeof *in->dims);
        if (in->dims) memcpy(in->dims, dims, sizeof *dims * (size_t)rank);
    }
    return in->name && (rank <= 0 || in->dims) ? TS_OK : cli_err(err, TS_ERR_OOM, "out of memory");
}

static ts_status collect(const ts_onnx_sig *sig, model_inputs *m, ts_err *err)
{
    int n = ts_onnx_sig_inputs(sig), n_out = ts_onnx_sig_outputs(sig);
    m->in = calloc((size_t)n + 1, sizeof *m->in);
    m->graph = calloc((size_t)n + 1, sizeof *m->graph);
    m->out_name = calloc((size_t)n_out + 1, sizeof *m->out_name);
    m->out_kind = calloc((size_t)n_out + 1, sizeof *m->out_kind);
    m->out_elem_type = calloc((size_t)n_out + 1, sizeof *m->out_elem_type);
    if (!m->in || !m->graph || !m->out_name || !m->out_kind || !m->out_elem_type)
        return cli_err(err, TS_ERR_OOM, "out of memory");
    for (int i = 0; i < n; i++) {
        const char *name, *kind;
        bool init;
        int et, rank;
        const int64_t *dims;
        CLI_TRY(ts_onnx_sig_input(sig, i, &name, &init, &kind, &et, &rank, &dims, err));
        model_input *in = &m->in[m->n++];
        CLI_TRY(copy_value(in, name, kind, et, rank, dims, err));
        in->initializer = init;
        if (!init) m->graph[m->n_graph++] = i;
    }
    for (int k = 0; k < n_out; k++) {
        const char *name, *kind;
        CLI_TRY(ts_onnx_sig_output(sig, k, &name, &kind, &m->out_elem_type[k], NULL, NULL, err));
        m->out_kind[k] = kind;
        if (!(m->out_name[m->n_out++] = strdup(name))) return cli_err(err, TS_ERR_OOM, "out of memory");
    }
    return TS_OK;
}

ts_status model_inputs_read(const char *path, model_inputs *out, ts_err *err)
{
    memset(out, 0, sizeof *out);
    CLI_TRY(ts_onnx_signature(path, &out->sig, err));
    ts_status s = collect(out->sig, out, err);
    if (s != TS_OK) model_inputs_free(out);
    return s;
}

void model_inputs_free(model_inputs *m)
{
    for (int i = 0; i < m->n; i++) {
        free(m->in[i].name);
        free(m->in[i].dims);
    }
    for (int k = 0; k < m->n_out; k++) free(m->out_name[k]);
    free(m->in);
    free(m->graph);
    free(m->out_name);
    free((void *)m->out_kind);
    free(m->out_elem_type);
    ts_onnx_signature_free(m->sig);
    memset(m, 0, sizeof *m);
}
