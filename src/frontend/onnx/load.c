/* load.c — ts_onnx_load: a ModelProto becomes a graph. The file is read
 * whole and unpacked with the ts_mem allocator; the unpacked model lives as
 * long as the graph (its free is deferred on the graph arena), so
 * initializers point into its raw_data instead of being copied. Then:
 * opset, initializers (constants), graph inputs (parameters), nodes in
 * order (node.c), outputs checked against their declared types. */
#include "frontend/onnx/load.h"

#include <stdio.h>
#include <string.h>

/* ---- the model ------------------------------------------------------------------------ */

static void free_model(void *m) { onnx_pb_free(m); }

static bool little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

static ts_status read_model(const char *path, Onnx__ModelProto **out, ts_err *err)
{
    uint8_t *data;
    size_t len;
    if (!little_endian()) return ts_err_set(err, TS_ERR_UNSUPPORTED, "ONNX models load on little-endian hosts only");
    TS_TRY(onnx_read_file(path, &data, &len, err));
    ProtobufCMessage *m = NULL;
    ts_status s = onnx_unpack(&onnx__model_proto__descriptor, data, len, path, &m, err);
    ts_mem_free(data);
    *out = (Onnx__ModelProto *)m;
    return s;
}

static ts_status check_model(const Onnx__ModelProto *m, const char *path, int *opset, ts_err *err)
{
    if (!m->graph) return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: the model has no graph", path);
    if (!m->has_ir_version || m->ir_version < 3)
        return ts_err_set(err, TS_ERR_UNSUPPORTED, "%s: IR version %lld is older than tessera reads (3 and later)",
                          path, (long long)(m->has_ir_version ? m->ir_version : 0));
    if (m->ir_version > ONNX_MAX_IR_VERSION)
        return ts_err_set(err, TS_ERR_UNSUPPORTED, "%s: IR version %lld is newer than tessera knows (3 to %d)", path,
                          (long long)m->ir_version, ONNX_MAX_IR_VERSION);
    *opset = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        if (!o || (o->domain && o->domain[0] && strcmp(o->domain, "ai.onnx") != 0)) continue;
        if (!o->has_version || o->version < 1 || o->version > 100000)
            return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: opset version %lld of the default domain is invalid",
                              path, (long long)o->version);
        *opset = (int)o->version;
    }
    return TS_OK;   /* none (-1): fine for a model whose nodes are all in other domains */
}

/* The graph's name as an IR name: characters outside [A-Za-z0-9_.]
 * become '_'; a name that does not start with a letter gets "g_". */
static char *graph_name(ts_arena *a, const char *name)
{
    if (!name || !name[0]) name = "main";
    size_t n = strlen(name);
    char *s = ts_arena_alloc(a, n + 3);
    if (!s) return NULL;
    size_t k = 0;
    bool alpha = (name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') || name[0] == '_';
    if (!alpha) s[k++] = 'g', s[k++] = '_';
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                  ch == '.';
        s[k++] = ok ? ch : '_';
    }
    s[k] = 0;
    return s;
}

/* ---- initializers -------------------------------------------------------------------------- */

static int known_index(const char *name, int n_known, const char *const *names)
{
    for (int i = 0; i < n_known; i++)
        if (names[i] && name && strcmp(names[i], name) == 0) return i;
    return -1;
}

static ts_status one_initializer(onnx_ctx *c, const Onnx__TensorProto *tp, ts_tensor *known)
{
    if (!tp->name || !tp->name[0])
        return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL, "an initializer has no name");
    ts_tensor *t = known;
    char what[240];
    snprintf(what, sizeof what, "initializer '%.200s'", tp->name);
    ts_err err = {0};
    if (!t && onnx_tensor_from_proto(tp, true, c->dir, what, &t, &err) != TS_OK)
        return ts_builder_fail(c->b, err.code, "%s", err.msg);
    ts_value *v = ts_b_const(c->b, t);
    if (!known) ts_tensor_release(t);
    if (!v) return onnx_ctx_status(c, NULL);
    if (!onnx_bind(c, tp->name, v)) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
    return TS_OK;
}

ts_status onnx_emit_initializers(onnx_ctx *c, const Onnx__GraphProto *gp, int n_known, const char *const *names,
                                 ts_tensor *const *values)
{
    if (gp->n_sparse_initializer)
        return ts_builder_fail(c->b, TS_ERR_UNSUPPORTED, "sparse initializers are not supported");
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp) continue;
        int k = known_index(tp->name, n_known, names);
        TS_TRY(one_initializer(c, tp, k >= 0 ? values[k] : NULL));
    }
    return TS_OK;
}

/* ---- inputs ---------------------------------------------------------------------------------- */

/* Whether name is an initializer's; inits maps the graph's initializer
 * names (filled on first use: IR 3 lists every initializer as an input,
 * and a model may have thousands). */
static bool is_initializer(onnx_map *inits, const Onnx__GraphProto *gp, const char *name, bool *oom)
{
    if (!inits->cap)
        for (size_t i = 0; i < gp->n_initializer; i++)
            if (gp->initializer[i] && gp->initializer[i]->name && !onnx_map_put(inits, gp->initializer[i]->name, (void *)1))
                *oom = true;
    return name && onnx_map_get(inits, name) != NULL;
}

static void name_value(ts_value *v, const char *name)
{
    if (!v->name && name && ts_ir_name_ok(name, strlen(name), true)) v->name = name;
}

/* A known value must fit the input it stands for. */
static ts_status check_known(onnx_ctx *c, const char *name, const ts_type *t, const ts_tensor *k)
{
    bool fits = k->dtype == t->dtype && k->rank == t->rank;
    for (int i = 0; fits && i < t->rank; i++)
        fits = !ts_dim_is_const(t->dims[i]) || t->dims[i].c == k->shape[i];
    if (fits) return TS_OK;
    return ts_builder_fail(c->b, TS_ERR_INVALID_ARG, "the value given for input '%s' (%s, rank %d) does not fit its type",
                           name, ts_dtype_name(k->dtype), k->rank);
}

static ts_status one_input(onnx_ctx *c, const Onnx__ValueInfoProto *vi, int index, ts_tensor *known)
{
    const char *name = vi->name ? vi->name : "";
    char what[240];
    snprintf(what, sizeof what, "input '%.200s'", name);
    if (!name[0]) return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL, "graph input %d has no name", index);
    ts_type t;
    ts_err err = {0};
    if (onnx_type_from_proto(c, vi->type, what, &t, &err) != TS_OK) return ts_builder_fail(c->b, err.code, "%s", err.msg);
    ts_value *v = ts_b_input(c->b, t.dtype, t.rank, t.dims);
    if (!v) return onnx_ctx_status(c, NULL);
    name_value(v, name);
    if (known) {
        TS_TRY(check_known(c, name, &t, known));
        onnx_known *k = ts_arena_alloc(c->g->arena, sizeof *k);
        if (!k || !onnx_map_put(&c->known, v, k)) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
        k->input = index;
        k->value = known;
    }
    if (!onnx_bind(c, name, v)) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
    return TS_OK;
}

static ts_status emit_inputs(onnx_ctx *c, const Onnx__GraphProto *gp, onnx_map *inits, int n_known,
                             const char *const *names, ts_tensor *const *values)
{
    int index = 0;
    bool oom = false;
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi || is_initializer(inits, gp, vi->name, &oom)) continue;
        if (oom) break;
        int k = known_index(vi->name, n_known, names);
        TS_TRY(one_input(c, vi, index++, k >= 0 ? values[k] : NULL));
    }
    return oom ? ts_builder_fail(c->b, TS_ERR_OOM, "out of memory") : TS_OK;
}

/* Every known name must be an input or an initializer. */
static ts_status check_known_names(onnx_ctx *c, const Onnx__GraphProto *gp, onnx_map *inits, int n_known,
                                   const char *const *names)
{
    bool oom = false;
    for (int i = 0; i < n_known; i++) {
        bool hit = is_initializer(inits, gp, names[i], &oom);
        if (oom) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
        for (size_t j = 0; !hit && j < gp->n_input; j++)
            hit = gp->input[j] && gp->input[j]->name && names[i] && strcmp(gp->input[j]->name, names[i]) == 0;
        if (!hit)
            return ts_builder_fail(c->b, TS_ERR_INVALID_ARG, "a value was given for '%s', which is no input of the model",
                                   names[i] ? names[i] : "(null)");
    }
    return TS_OK;
}

/* ---- outputs --------------------------------------------------------------------------------- */

static void type_text(ts_buf *b, ts_dtype dt, int rank, const ts_dim *dims)
{
    ts_type t = {dt, rank, (ts_dim *)dims};
    ts_type_print(b, &t);
}

/* The declared type of an output must agree with what the graph computes:
 * same dtype, same rank, equal constant dims (symbolic ones agree with
 * anything). A declaration without a type or shape checks nothing. */
static ts_status check_output(onnx_ctx *c, const char *name, const Onnx__TypeProto *tp, const ts_value *v)
{
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) return TS_OK;
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    ts_dtype dt = v->type.dtype;
    if (tt->has_elem_type && tt->elem_type && onnx_dtype(tt->elem_type, &dt, NULL) != TS_OK) dt = (ts_dtype)-1;
    bool ok = dt == v->type.dtype;
    const Onnx__TensorShapeProto *sp = tt->shape;
    if (sp && (int)sp->n_dim != v->type.rank) ok = false;
    ts_dim decl[TS_MAX_RANK];
    for (int i = 0; sp && i < v->type.rank && (size_t)i < sp->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sp->dim[i];
        bool given = d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        decl[i] = given ? ts_dim_const(d->dim_value) : v->type.dims[i];
        if (given && ts_dim_is_const(v->type.dims[i]) && v->type.dims[i].c != d->dim_value) ok = false;
    }
    if (ok) return TS_OK;
    ts_buf want = {0}, got = {0};
    if (sp && sp->n_dim <= TS_MAX_RANK && (int)sp->n_dim == v->type.rank) type_text(&want, dt, v->type.rank, decl);
    else ts_buf_printf(&want, "%s of rank %d", dt == (ts_dtype)-1 ? "?" : ts_dtype_name(dt), sp ? (int)sp->n_dim : -1);
    ts_type_print(&got, &v->type);
    ts_status s = ts_builder_fail(c->b, TS_ERR_SHAPE, "output %s: the model declares %s but the graph computes %s", name,
                                  want.data ? want.data : "?", got.data ? got.data : "?");
    ts_buf_free(&want);
    ts_buf_free(&got);
    return s;
}

static ts_status emit_outputs(onnx_ctx *c, const Onnx__GraphProto *gp)
{
    ts_value **outs = ts_arena_array(c->g->arena, gp->n_output + 1, sizeof *outs);
    if (!outs) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        const char *name = vi && vi->name ? vi->name : "";
        bool found;
        outs[i] = onnx_lookup(c, name, &found);
        if (!outs[i])
            return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL, "output '%s' is not computed by the graph", name);
        TS_TRY(check_output(c, name, vi->type, outs[i]));
        name_value(outs[i], name);
    }
    return ts_b_return(c->b, (int)gp->n_output, outs);
}

/* ---- the load -------------------------------------------------------------------------------- */

/* The folder of path, in the graph arena ("." when it has none). */
static const char *folder_of(ts_arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return ts_arena_strdup(a, ".");
    if (slash == path) return ts_arena_strdup(a, "/");
    return ts_arena_strndup(a, path, (size_t)(slash - path));
}

static ts_status build(onnx_ctx *c, const Onnx__GraphProto *gp, int n_known, const char *const *names,
                       ts_tensor *const *values)
{
    onnx_scope top;
    onnx_map inits = {.str = true};
    onnx_scope_push(c, &top, true);
    ts_status s = check_known_names(c, gp, &inits, n_known, names);
    if (s == TS_OK) s = onnx_emit_initializers(c, gp, n_known, names, values);
    if (s == TS_OK) s = emit_inputs(c, gp, &inits, n_known, names, values);
    onnx_map_free(&inits);
    if (s == TS_OK) s = onnx_emit_nodes(c, gp->n_node, gp->node);
    ts_builder_set_origin(c->b, NULL);
    if (s == TS_OK) s = emit_outputs(c, gp);
    onnx_scope_pop(c);
    return s;
}

/* The graph for model m (already checked), which the graph takes over. */
static ts_status load_graph(Onnx__ModelProto *m, const char *path, int opset, int n_known, const char *const *names,
                            ts_tensor *const *values, ts_graph **out, ts_err *err)
{
    ts_graph *g = NULL;
    ts_status s = ts_ir_graph_new("main", &g, err);
    if (s != TS_OK) {
        onnx_pb_free(&m->base);
        return s;
    }
    if (!ts_arena_defer(g->arena, free_model, m)) {
        onnx_pb_free(&m->base);
        ts_graph_free(g);
        return ts_err_set(err, TS_ERR_OOM, "out of memory loading %s", path);
    }
    onnx_ctx c = {.g = g, .model = m, .opset = opset};
    c.known.str = false;
    c.dims.str = false;
    c.b = ts_builder_new(g, NULL);
    c.dir = folder_of(g->arena, path);
    const char *gname = graph_name(g->arena, m->graph->name);
    if (!c.b || !c.dir || !gname) s = ts_err_set(err, TS_ERR_OOM, "out of memory loading %s", path);
    if (s == TS_OK) {
        g->name = gname;
        build(&c, m->graph, n_known, names, values);
        s = onnx_ctx_status(&c, err);
    }
    ts_builder_free(c.b);
    onnx_map_free(&c.known);
    onnx_map_free(&c.dims);
    if (s != TS_OK) {
        ts_graph_free(g);
        return s;
    }
    *out = g;
    return TS_OK;
}

ts_status ts_onnx_load(const char *path, int n_known, const char *const *known_names,
                       ts_tensor *const *known_values, ts_graph **out, ts_err *err)
{
    if (!path || !out || n_known < 0 || (n_known && (!known_names || !known_values)))
        return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_load: bad arguments");
    *out = NULL;
    for (int i = 0; i < n_known; i++)
        if (!known_names[i] || !known_values[i])
            return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_load: known value %d is NULL", i);
    Onnx__ModelProto *m = NULL;
    int opset = -1;
    TS_TRY(read_model(path, &m, err));
    ts_status s = check_model(m, path, &opset, err);
    if (s != TS_OK) {
        onnx_pb_free(&m->base);
        return s;
    }
    return load_graph(m, path, opset, n_known, known_names, known_values, out, err);
}
