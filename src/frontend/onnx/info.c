/* info.c — ts_onnx_info: a description of a model for people (inputs,
 * outputs, versions, initializers, and an operator histogram that marks
 * the operators tessera cannot assemble). Reads the model without building
 * it, so it also describes models that do not load. */
#include "frontend/onnx/load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- types ---------------------------------------------------------------------------- */

static void elem_text(ts_buf *b, int t)
{
    ts_dtype dt;
    char buf[16];
    if (onnx_dtype(t, &dt, NULL) == TS_OK) ts_buf_puts(b, ts_dtype_name(dt));
    else ts_buf_puts(b, onnx_type_name(t, buf));
}

static void type_text(ts_buf *b, const Onnx__TypeProto *tp, int depth)
{
    if (!tp || depth > 8) {
        ts_buf_puts(b, "?");
        return;
    }
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: {
        const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
        elem_text(b, tt && tt->has_elem_type ? tt->elem_type : 0);
        if (!tt || !tt->shape) {
            ts_buf_puts(b, "[...]");
            return;
        }
        ts_buf_puts(b, "[");
        for (size_t i = 0; i < tt->shape->n_dim; i++) {
            const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
            if (i) ts_buf_puts(b, ", ");
            if (d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
                ts_buf_printf(b, "%lld", (long long)d->dim_value);
            else if (d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param)
                ts_buf_printf(b, "%.100s", d->dim_param);
            else
                ts_buf_puts(b, "?");
        }
        ts_buf_puts(b, "]");
        return;
    }
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        ts_buf_puts(b, "sequence<");
        type_text(b, tp->sequence_type ? tp->sequence_type->elem_type : NULL, depth + 1);
        ts_buf_puts(b, ">");
        return;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        ts_buf_puts(b, "optional<");
        type_text(b, tp->optional_type ? tp->optional_type->elem_type : NULL, depth + 1);
        ts_buf_puts(b, ">");
        return;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: ts_buf_puts(b, "map (unsupported)"); return;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: ts_buf_puts(b, "sparse tensor (unsupported)"); return;
    default: ts_buf_puts(b, "?"); return;
    }
}

static bool is_init(const Onnx__GraphProto *gp, const char *name)
{
    for (size_t i = 0; gp && name && i < gp->n_initializer; i++)
        if (gp->initializer[i] && gp->initializer[i]->name && strcmp(gp->initializer[i]->name, name) == 0) return true;
    return false;
}

/* The values listed; with gp, those that are initializers (IR 3 lists
 * them among the inputs) are counted, not listed. */
static void values_text(ts_buf *b, const char *title, size_t n, Onnx__ValueInfoProto *const *v,
                        const Onnx__GraphProto *gp)
{
    size_t inits = 0;
    for (size_t i = 0; i < n; i++) inits += v[i] && is_init(gp, v[i]->name);
    if (inits) ts_buf_printf(b, "%s (%zu, and %zu initializers)\n", title, n - inits, inits);
    else ts_buf_printf(b, "%s (%zu)\n", title, n);
    for (size_t i = 0; i < n; i++) {
        if (!v[i] || is_init(gp, v[i]->name)) continue;
        ts_buf_printf(b, "  %-24.200s ", v[i]->name ? v[i]->name : "");
        type_text(b, v[i]->type, 0);
        ts_buf_puts(b, "\n");
    }
}

/* ---- the operator histogram ---------------------------------------------------------------- */

typedef struct op_count {
    const char *domain, *op;
    long count;
} op_count;

typedef struct histo {
    op_count *v;
    size_t n, cap;
    long nodes;
    bool oom;
} histo;

static bool is_default(const char *d) { return !d || !d[0] || strcmp(d, "ai.onnx") == 0; }

static void count_op(histo *h, const char *domain, const char *op)
{
    h->nodes++;
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->v[i].op, op) == 0 && (is_default(domain) ? is_default(h->v[i].domain)
                                                                : h->v[i].domain && strcmp(h->v[i].domain, domain) == 0)) {
            h->v[i].count++;
            return;
        }
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 32;
        op_count *p = ts_mem_realloc(h->v, cap * sizeof *p);
        if (!p) {
            h->oom = true;
            return;
        }
        h->v = p;
        h->cap = cap;
    }
    h->v[h->n++] = (op_count){domain, op, 1};
}

static void count_nodes(histo *h, size_t n, Onnx__NodeProto *const *nodes, int depth)
{
    if (depth > ONNX_MAX_DEPTH) return;
    for (size_t i = 0; i < n; i++) {
        const Onnx__NodeProto *np = nodes[i];
        if (!np) continue;
        count_op(h, np->domain, np->op_type ? np->op_type : "?");
        for (size_t a = 0; a < np->n_attribute; a++) {
            const Onnx__AttributeProto *at = np->attribute[a];
            if (at && at->g) count_nodes(h, at->g->n_node, at->g->node, depth + 1);
            for (size_t k = 0; at && k < at->n_graphs; k++)
                if (at->graphs[k]) count_nodes(h, at->graphs[k]->n_node, at->graphs[k]->node, depth + 1);
        }
    }
}

static int by_count(const void *pa, const void *pb)
{
    const op_count *a = pa, *b = pb;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return strcmp(a->op, b->op);
}

static bool is_function(const Onnx__ModelProto *m, const op_count *e)
{
    for (size_t i = 0; i < m->n_functions; i++) {
        const Onnx__FunctionProto *f = m->functions[i];
        if (f && f->name && strcmp(f->name, e->op) == 0 &&
            (is_default(f->domain) ? is_default(e->domain) : e->domain && strcmp(f->domain, e->domain) == 0))
            return true;
    }
    return false;
}

/* The model's import of domain (the default one for NULL, "" or
 * "ai.onnx"), or -1. */
static int import_version(const Onnx__ModelProto *m, const char *domain)
{
    int v = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        bool same = o && (is_default(domain) ? is_default(o->domain) : o->domain && strcmp(o->domain, domain) == 0);
        if (same && o->version > 0 && o->version < INT_MAX) v = (int)o->version;
    }
    return v;
}

static void histo_text(ts_buf *b, const Onnx__ModelProto *m, histo *h)
{
    int missing = 0;
    if (h->n) qsort(h->v, h->n, sizeof *h->v, by_count);
    ts_buf_printf(b, "operators (%ld nodes, %zu kinds)\n", h->nodes, h->n);
    for (size_t i = 0; i < h->n; i++) {
        const op_count *e = &h->v[i];
        const char *status = is_function(m, e) ? "function"
                             : onnx_find_op(e->domain, e->op, import_version(m, e->domain)) ? "ok" : "MISSING";
        missing += strcmp(status, "MISSING") == 0;
        char name[128];
        if (is_default(e->domain)) snprintf(name, sizeof name, "%.100s", e->op);
        else snprintf(name, sizeof name, "%.60s.%.60s", e->domain, e->op);
        ts_buf_printf(b, "  %6ld  %-32s %s\n", e->count, name, status);
    }
    ts_buf_printf(b, "missing operators: %d\n", missing);
}

/* ---- the rest ------------------------------------------------------------------------------- */

static void header_text(ts_buf *b, const char *path, const Onnx__ModelProto *m)
{
    ts_buf_printf(b, "model        %s\n", path);
    ts_buf_printf(b, "ir_version   %lld\n", (long long)(m->has_ir_version ? m->ir_version : 0));
    ts_buf_printf(b, "producer     %.100s %.100s\n", m->producer_name ? m->producer_name : "",
                  m->producer_version ? m->producer_version : "");
    ts_buf_puts(b, "opsets       ");
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        if (!o) continue;
        ts_buf_printf(b, "%s%.100s %lld", i ? ", " : "", is_default(o->domain) ? "ai.onnx" : o->domain,
                      (long long)o->version);
    }
    ts_buf_puts(b, "\n");
    ts_buf_printf(b, "graph        %.200s\n", m->graph && m->graph->name ? m->graph->name : "");
}

static void initializers_text(ts_buf *b, const Onnx__GraphProto *gp)
{
    double params = 0, bytes = 0;
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp) continue;
        double n = 1;
        for (size_t k = 0; k < tp->n_dims; k++) n *= (double)tp->dims[k];
        ts_dtype dt;
        params += n;
        if (tp->has_data_type && onnx_dtype(tp->data_type, &dt, NULL) == TS_OK) bytes += n * (double)ts_dtype_size(dt);
    }
    ts_buf_printf(b, "initializers %zu (%.0f parameters, %.1f MB)\n", gp->n_initializer, params, bytes / 1e6);
}

static void functions_text(ts_buf *b, const Onnx__ModelProto *m)
{
    if (!m->n_functions) return;
    ts_buf_printf(b, "functions    %zu:", m->n_functions);
    for (size_t i = 0; i < m->n_functions; i++)
        if (m->functions[i])
            ts_buf_printf(b, " %.100s%s%.100s", m->functions[i]->domain ? m->functions[i]->domain : "",
                          m->functions[i]->domain && m->functions[i]->domain[0] ? "." : "",
                          m->functions[i]->name ? m->functions[i]->name : "?");
    ts_buf_puts(b, "\n");
}

static ts_status describe(ts_buf *b, const char *path, const Onnx__ModelProto *m)
{
    header_text(b, path, m);
    if (!m->graph) return TS_OK;
    const Onnx__GraphProto *gp = m->graph;
    values_text(b, "inputs", gp->n_input, gp->input, gp);
    values_text(b, "outputs", gp->n_output, gp->output, NULL);
    initializers_text(b, gp);
    functions_text(b, m);
    histo h = {0};
    count_nodes(&h, gp->n_node, gp->node, 0);
    for (size_t i = 0; i < m->n_functions; i++)
        if (m->functions[i]) count_nodes(&h, m->functions[i]->n_node, m->functions[i]->node, 1);
    if (!h.oom) histo_text(b, m, &h);
    ts_mem_free(h.v);
    return h.oom ? TS_ERR_OOM : TS_OK;
}

ts_status ts_onnx_info(const char *path, char **text, ts_err *err)
{
    if (!path || !text) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_info: NULL argument");
    *text = NULL;
    uint8_t *data;
    size_t len;
    TS_TRY(onnx_read_file(path, &data, &len, err));
    ProtobufCMessage *m = NULL;
    ts_status s = onnx_unpack(&onnx__model_proto__descriptor, data, len, path, &m, err);
    ts_mem_free_aligned(data);
    if (s != TS_OK) return s;
    ts_buf b = {0};
    s = describe(&b, path, (const Onnx__ModelProto *)m);
    onnx_pb_free(m);
    if (s != TS_OK || b.oom || !b.data) {
        ts_buf_free(&b);
        return ts_err_set(err, TS_ERR_OOM, "out of memory describing %s", path);
    }
    *text = b.data;
    return TS_OK;
}
