/* onnx_inputs.c — the inputs an ONNX model declares, read from the
 * protobuf before the model is loaded (cli.h says why). Only the graph's
 * input list and initializer names are kept; the rest of the message is
 * freed at once. */
#include "cli.h"

#include "onnx.pb-c.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The whole file in memory; the caller frees *data. */
static ts_status slurp(const char *path, uint8_t **data, size_t *len, ts_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return ts_err_set(err, TS_ERR_IO, "%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        uint8_t *grown = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
        if (!grown) free(buf);
        buf = grown;
        cap *= 2;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf) return ts_err_set(err, TS_ERR_OOM, "%s: out of memory reading the file", path);
    if (bad) {
        free(buf);
        return ts_err_set(err, TS_ERR_IO, "%s: read error", path);
    }
    *data = buf;
    *len = n;
    return TS_OK;
}

static bool is_initializer(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name && strcmp(g->initializer[i]->name, name) == 0) return true;
    for (size_t i = 0; i < g->n_sparse_initializer; i++) {
        const Onnx__SparseTensorProto *s = g->sparse_initializer[i];
        if (s->values && s->values->name && strcmp(s->values->name, name) == 0) return true;
    }
    return false;
}

/* NULL for a tensor (or no type given), else what the value is. */
static const char *kind_of(const Onnx__ValueInfoProto *v)
{
    switch (v->type ? v->type->value_case : ONNX__TYPE_PROTO__VALUE__NOT_SET) {
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return "sequence";
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: return "map";
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return "optional";
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: return "sparse tensor";
    default: return NULL;
    }
}

static ts_status copy_type(model_input *in, const Onnx__ValueInfoProto *v, ts_err *err)
{
    in->rank = -1;
    in->kind = kind_of(v);
    const Onnx__TypeProto *t = v->type;
    if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type) return TS_OK;
    in->elem_type = t->tensor_type->elem_type;
    const Onnx__TensorShapeProto *s = t->tensor_type->shape;
    if (!s) return TS_OK;
    in->dims = calloc(s->n_dim + 1, sizeof *in->dims);
    if (!in->dims) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    in->rank = (int)s->n_dim;
    for (size_t d = 0; d < s->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = s->dim[d];
        bool known = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value >= 0;
        in->dims[d] = known ? dim->dim_value : -1;
    }
    return TS_OK;
}

static ts_status collect(const Onnx__GraphProto *g, model_inputs *m, ts_err *err)
{
    m->in = calloc(g->n_input + 1, sizeof *m->in);
    m->graph = calloc(g->n_input + 1, sizeof *m->graph);
    if (!m->in || !m->graph) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (size_t i = 0; i < g->n_input; i++) {
        model_input *in = &m->in[m->n++];
        const char *name = g->input[i]->name ? g->input[i]->name : "";
        in->name = strdup(name);
        if (!in->name) return ts_err_set(err, TS_ERR_OOM, "out of memory");
        in->initializer = is_initializer(g, name);
        if (!in->initializer) m->graph[m->n_graph++] = (int)i;
        TS_TRY(copy_type(in, g->input[i], err));
    }
    m->out_name = calloc(g->n_output + 1, sizeof *m->out_name);
    m->out_kind = calloc(g->n_output + 1, sizeof *m->out_kind);
    m->out_elem_type = calloc(g->n_output + 1, sizeof *m->out_elem_type);
    if (!m->out_name || !m->out_kind || !m->out_elem_type) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (size_t k = 0; k < g->n_output; k++) {
        const Onnx__TypeProto *t = g->output[k]->type;
        if (t && t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && t->tensor_type)
            m->out_elem_type[m->n_out] = t->tensor_type->elem_type;
        m->out_kind[m->n_out] = kind_of(g->output[k]);
        if (!(m->out_name[m->n_out++] = strdup(g->output[k]->name ? g->output[k]->name : "")))
            return ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    return TS_OK;
}

ts_status model_inputs_read(const char *path, model_inputs *out, ts_err *err)
{
    memset(out, 0, sizeof *out);
    uint8_t *data = NULL;
    size_t len = 0;
    TS_TRY(slurp(path, &data, &len, err));
    Onnx__ModelProto *model = onnx__model_proto__unpack(NULL, len, data);
    free(data);
    if (!model) return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: not an ONNX model (the protobuf does not parse)", path);
    ts_status s = model->graph ? collect(model->graph, out, err)
                               : ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: the model has no graph", path);
    onnx__model_proto__free_unpacked(model, NULL);
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
    memset(m, 0, sizeof *m);
}
