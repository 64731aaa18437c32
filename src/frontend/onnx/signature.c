/* signature.c — what an ONNX model declares at its edges, read without
 * building it (ts_onnx_signature, tessera.h): every graph input in order
 * (initializers listed among them marked), every output, each with its
 * kind, element type and dims. Read through the loader's bounded reader
 * (pb_io.c), so a hostile file fails here as it would in ts_onnx_load;
 * the weights are skipped on the wire (pb_skim.c). */
#include "frontend/onnx/load.h"

#include <string.h>

typedef struct sig_value {
    char *name;
    bool initializer;
    const char *kind;        /* NULL: a tensor */
    int elem_type, rank;     /* rank -1: no shape given */
    int64_t *dims;           /* -1: symbolic or missing */
} sig_value;

struct ts_onnx_sig {
    int n_in, n_out;
    sig_value *in, *out;
};

static bool is_initializer(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i] && g->initializer[i]->name && strcmp(g->initializer[i]->name, name) == 0) return true;
    for (size_t i = 0; i < g->n_sparse_initializer; i++) {
        const Onnx__SparseTensorProto *s = g->sparse_initializer[i];
        if (s && s->values && s->values->name && strcmp(s->values->name, name) == 0) return true;
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

static ts_status read_value(sig_value *sv, const Onnx__ValueInfoProto *v, ts_err *err)
{
    sv->rank = -1;
    sv->kind = kind_of(v);
    if (!(sv->name = ts_mem_strdup(v->name ? v->name : ""))) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    const Onnx__TypeProto *t = v->type;
    if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type) return TS_OK;
    sv->elem_type = t->tensor_type->elem_type;
    const Onnx__TensorShapeProto *s = t->tensor_type->shape;
    if (!s) return TS_OK;
    if (s->n_dim > 64) return ts_err_set(err, TS_ERR_UNSUPPORTED, "value '%s' has rank %zu", sv->name, s->n_dim);
    if (!(sv->dims = ts_mem_zalloc(sizeof *sv->dims * (s->n_dim + 1)))) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    sv->rank = (int)s->n_dim;
    for (size_t d = 0; d < s->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = s->dim[d];
        bool known = dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value >= 0;
        sv->dims[d] = known ? dim->dim_value : -1;
    }
    return TS_OK;
}

void ts_onnx_signature_free(ts_onnx_sig *s)
{
    if (!s) return;
    for (int i = 0; i < s->n_in; i++) ts_mem_free(s->in[i].name), ts_mem_free(s->in[i].dims);
    for (int k = 0; k < s->n_out; k++) ts_mem_free(s->out[k].name), ts_mem_free(s->out[k].dims);
    ts_mem_free(s->in);
    ts_mem_free(s->out);
    ts_mem_free(s);
}

static ts_status collect(const Onnx__GraphProto *g, ts_onnx_sig *s, ts_err *err)
{
    if (g->n_input > INT32_MAX || g->n_output > INT32_MAX) return ts_err_set(err, TS_ERR_UNSUPPORTED, "too many inputs");
    s->in = ts_mem_zalloc(sizeof *s->in * (g->n_input + 1));
    s->out = ts_mem_zalloc(sizeof *s->out * (g->n_output + 1));
    if (!s->in || !s->out) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (size_t i = 0; i < g->n_input; i++) {
        sig_value *v = &s->in[s->n_in++];
        TS_TRY(read_value(v, g->input[i], err));
        v->initializer = is_initializer(g, v->name);
    }
    for (size_t k = 0; k < g->n_output; k++) TS_TRY(read_value(&s->out[s->n_out++], g->output[k], err));
    return TS_OK;
}

/* The model's graph as far as the signature reads it: skimmed from the
 * wire without the weights (D197); where the skim finds the file
 * malformed, the whole file, whose reader names the fault as
 * ts_onnx_load would. */
static ts_status unpack_edges(const char *path, ProtobufCMessage **m, ts_err *err)
{
    uint8_t *data = NULL;
    size_t len = 0;
    ts_err skim_err = {0};
    ts_status st = onnx_skim_model(path, &data, &len, &skim_err);
    if (st == TS_OK) {
        st = onnx_unpack(&onnx__model_proto__descriptor, data, len, path, m, err);
        ts_mem_free(data);
        return st;
    }
    if (st != TS_ERR_INVALID_MODEL) return ts_err_set(err, st, "%s", skim_err.msg);
    TS_TRY(onnx_read_file(path, &data, &len, err));
    st = onnx_unpack(&onnx__model_proto__descriptor, data, len, path, m, err);
    ts_mem_free_aligned(data);
    return st;
}

ts_status ts_onnx_signature(const char *path, ts_onnx_sig **out, ts_err *err)
{
    if (!path || !out) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_signature: NULL argument");
    *out = NULL;
    ProtobufCMessage *m = NULL;
    TS_TRY(unpack_edges(path, &m, err));
    const Onnx__ModelProto *model = (const Onnx__ModelProto *)m;
    ts_onnx_sig *s = ts_mem_zalloc(sizeof *s);
    ts_status st;
    if (!s) st = ts_err_set(err, TS_ERR_OOM, "out of memory");
    else if (!model->graph) st = ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: the model has no graph", path);
    else st = collect(model->graph, s, err);
    onnx_pb_free(m);
    if (st != TS_OK) {
        ts_onnx_signature_free(s);
        return st;
    }
    *out = s;
    return TS_OK;
}

int ts_onnx_sig_inputs(const ts_onnx_sig *s) { return s ? s->n_in : 0; }
int ts_onnx_sig_outputs(const ts_onnx_sig *s) { return s ? s->n_out : 0; }

static ts_status get(const sig_value *v, const char **name, const char **kind, int *elem_type, int *rank,
                     const int64_t **dims)
{
    if (name) *name = v->name;
    if (kind) *kind = v->kind;
    if (elem_type) *elem_type = v->elem_type;
    if (rank) *rank = v->rank;
    if (dims) *dims = v->dims;
    return TS_OK;
}

ts_status ts_onnx_sig_input(const ts_onnx_sig *s, int i, const char **name, bool *initializer, const char **kind,
                            int *elem_type, int *rank, const int64_t **dims, ts_err *err)
{
    if (!s || i < 0 || i >= s->n_in) return ts_err_set(err, TS_ERR_INVALID_ARG, "no input %d", i);
    if (initializer) *initializer = s->in[i].initializer;
    return get(&s->in[i], name, kind, elem_type, rank, dims);
}

ts_status ts_onnx_sig_output(const ts_onnx_sig *s, int k, const char **name, const char **kind, int *elem_type,
                             int *rank, const int64_t **dims, ts_err *err)
{
    if (!s || k < 0 || k >= s->n_out) return ts_err_set(err, TS_ERR_INVALID_ARG, "no output %d", k);
    return get(&s->out[k], name, kind, elem_type, rank, dims);
}
