/* load.c — ts_onnx_load: a ModelProto becomes a graph. The file is read
 * whole and unpacked with the ts_mem allocator; the unpacked model lives as
 * long as the graph (its free is deferred on the graph arena), so
 * initializers point into its raw_data instead of being copied. Then:
 * opset, initializers (constants), graph inputs (parameters), nodes in
 * order (node.c), outputs checked against their declared types. */
#include "frontend/onnx/seq.h"

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
    ts_mem_free_aligned(data);
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

static const onnx_given *given_for(const char *name, int n_given, const onnx_given *given)
{
    for (int i = 0; i < n_given; i++)
        if (name && strcmp(given[i].name, name) == 0) return &given[i];
    return NULL;
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

ts_status onnx_emit_initializers(onnx_ctx *c, const Onnx__GraphProto *gp, int n_given, const onnx_given *given)
{
    if (gp->n_sparse_initializer)
        return ts_builder_fail(c->b, TS_ERR_UNSUPPORTED, "sparse initializers are not supported");
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp) continue;
        const onnx_given *g = given_for(tp->name, n_given, given);
        if (g && g->form)
            return ts_builder_fail(c->b, TS_ERR_INVALID_ARG, "the value given for initializer '%s' must be a tensor",
                                   tp->name);
        TS_TRY(one_initializer(c, tp, g ? g->t[0] : NULL));
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

/* A known value must fit the input it stands for; the message shows both
 * types as IR text: "input 'x': expected f32[batch, 3, 224, 224], got
 * f32[1, 3, 64, 64]". */
static ts_status check_known(onnx_ctx *c, const char *name, const ts_type *t, const ts_tensor *k)
{
    bool fits = k->dtype == t->dtype && k->rank == t->rank;
    for (int i = 0; fits && i < t->rank; i++)
        fits = !ts_dim_is_const(t->dims[i]) || t->dims[i].c == k->shape[i];
    if (fits) return TS_OK;
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0; i < k->rank; i++) dims[i] = ts_dim_const(k->shape[i]);
    ts_type got = {.dtype = k->dtype, .rank = k->rank, .dims = dims};
    ts_buf want_text = {0}, got_text = {0};
    ts_type_print(&want_text, t);
    ts_type_print(&got_text, &got);
    ts_status st = ts_builder_fail(c->b, TS_ERR_INVALID_ARG, "input '%s': expected %s, got %s", name,
                                   want_text.data ? want_text.data : "?", got_text.data ? got_text.data : "?");
    ts_buf_free(&want_text);
    ts_buf_free(&got_text);
    return st;
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

static bool composite_type(const Onnx__TypeProto *tp)
{
    return tp && (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ||
                  tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE);
}

/* A sequence or optional input becomes one graph input per tensor of the
 * value given for it (seq_io.c), at its place in the order. */
static ts_status comp_input(onnx_ctx *c, const Onnx__ValueInfoProto *vi, int *index, const onnx_given *g)
{
    ts_value *v;
    const char *name = vi->name ? vi->name : "";
    TS_TRY(onnx_comp_input(c, name, vi->type, g, *index, &v));
    *index += onnx_comp_leaves(v, NULL);
    if (!onnx_bind(c, name, v)) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
    return TS_OK;
}

static ts_status emit_inputs(onnx_ctx *c, const Onnx__GraphProto *gp, onnx_map *inits, int n_given,
                             const onnx_given *given)
{
    int index = 0;
    bool oom = false;
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi || is_initializer(inits, gp, vi->name, &oom)) continue;
        if (oom) break;
        const onnx_given *g = given_for(vi->name, n_given, given);
        if (composite_type(vi->type) || (g && g->form)) TS_TRY(comp_input(c, vi, &index, g));
        else TS_TRY(one_input(c, vi, index++, g ? g->t[0] : NULL));
    }
    return oom ? ts_builder_fail(c->b, TS_ERR_OOM, "out of memory") : TS_OK;
}

/* Every known name must be an input or an initializer. */
static ts_status check_known_names(onnx_ctx *c, const Onnx__GraphProto *gp, onnx_map *inits, int n_given,
                                   const onnx_given *given)
{
    bool oom = false;
    for (int i = 0; i < n_given; i++) {
        const char *name = given[i].name;
        bool hit = is_initializer(inits, gp, name, &oom);
        if (oom) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
        for (size_t j = 0; !hit && j < gp->n_input; j++)
            hit = gp->input[j] && gp->input[j]->name && strcmp(gp->input[j]->name, name) == 0;
        if (!hit)
            return ts_builder_fail(c->b, TS_ERR_INVALID_ARG, "a value was given for '%s', which is no input of the model",
                                   name);
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

/* Output i's form, kept for ts_onnx_load_forms (an arena string). */
static ts_status keep_form(onnx_ctx *c, size_t i, const ts_value *v)
{
    ts_buf b = {0};
    onnx_comp_form(v, &b);
    c->out_forms[i] = b.data && !b.oom ? ts_arena_strdup(c->g->arena, b.data) : NULL;
    ts_buf_free(&b);
    return c->out_forms[i] ? TS_OK : ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
}

/* Each output's tensors in order: a tensor is one graph output, a sequence
 * or optional its leaves (none for an empty one). */
static ts_status emit_outputs(onnx_ctx *c, const Onnx__GraphProto *gp)
{
    ts_value **vals = ts_arena_array(c->g->arena, gp->n_output + 1, sizeof *vals);
    c->out_forms = ts_arena_array(c->g->arena, gp->n_output + 1, sizeof *c->out_forms);
    if (!vals || !c->out_forms) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
    size_t n_leaves = 0;
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        const char *name = vi && vi->name ? vi->name : "";
        bool found;
        ts_value *v = vals[i] = onnx_lookup(c, name, &found);
        if (!v) return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL, "output '%s' is not computed by the graph", name);
        TS_TRY(onnx_comp_check_output(c, name, vi->type, v));
        if (!onnx_comp_of(v)) TS_TRY(check_output(c, name, vi->type, v));
        if (!onnx_comp_of(v)) name_value(v, name);
        TS_TRY(keep_form(c, i, v));
        n_leaves += (size_t)onnx_comp_leaves(v, NULL);
    }
    if (n_leaves > INT_MAX) return ts_builder_fail(c->b, TS_ERR_UNSUPPORTED, "too many outputs");
    ts_value **outs = ts_arena_array(c->g->arena, n_leaves + 1, sizeof *outs);
    if (!outs) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
    int k = 0;
    for (size_t i = 0; i < gp->n_output; i++) k += onnx_comp_leaves(vals[i], outs + k);
    return ts_b_return(c->b, k, outs);
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

static ts_status build(onnx_ctx *c, const Onnx__GraphProto *gp, int n_given, const onnx_given *given)
{
    onnx_scope top;
    onnx_map inits = {.str = true};
    onnx_scope_push(c, &top, true);
    ts_status s = check_known_names(c, gp, &inits, n_given, given);
    if (s == TS_OK) s = onnx_emit_initializers(c, gp, n_given, given);
    if (s == TS_OK) s = emit_inputs(c, gp, &inits, n_given, given);
    onnx_map_free(&inits);
    if (s == TS_OK) s = onnx_emit_nodes(c, gp->n_node, gp->node);
    ts_builder_set_origin(c->b, NULL);
    if (s == TS_OK) s = emit_outputs(c, gp);
    onnx_scope_pop(c);
    return s;
}

/* The outputs' forms, copied out of the graph arena for the caller (free
 * with ts_onnx_forms_free). */
static ts_status copy_forms(const onnx_ctx *c, int *n_out, char ***out, ts_err *err)
{
    size_t n = c->model->graph->n_output;
    char **f = ts_mem_zalloc((n + 1) * sizeof *f);
    if (!f) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (!(f[i] = ts_mem_strdup(c->out_forms[i]))) {
            ts_onnx_forms_free(f, (int)n);
            return ts_err_set(err, TS_ERR_OOM, "out of memory");
        }
    *n_out = (int)n;
    *out = f;
    return TS_OK;
}

void ts_onnx_forms_free(char **forms, int n)
{
    for (int i = 0; forms && i < n; i++) ts_mem_free(forms[i]);
    ts_mem_free(forms);
}

/* The graph for model m (already checked), which the graph takes over;
 * the outputs' forms too when forms is not NULL. */
static ts_status load_graph(Onnx__ModelProto *m, const char *path, int opset, int n_given, const onnx_given *given,
                            ts_graph **out, int *n_forms, char ***forms, ts_err *err)
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
        build(&c, m->graph, n_given, given);
        s = onnx_ctx_status(&c, err);
    }
    if (s == TS_OK && forms) s = copy_forms(&c, n_forms, forms, err);
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

static ts_status load_given(const char *path, int n_given, const onnx_given *given, ts_graph **out, int *n_forms,
                            char ***forms, ts_err *err)
{
    Onnx__ModelProto *m = NULL;
    int opset = -1;
    TS_TRY(read_model(path, &m, err));
    ts_status s = check_model(m, path, &opset, err);
    if (s != TS_OK) {
        onnx_pb_free(&m->base);
        return s;
    }
    return load_graph(m, path, opset, n_given, given, out, n_forms, forms, err);
}

/* given[i] for known value i: its parsed form (in arena a) and its run of
 * the tensors; every tensor must be taken. */
static ts_status parse_given(ts_arena *a, int n_known, const char *const *names, const char *const *forms,
                             int n_values, ts_tensor *const *values, onnx_given *given, ts_err *err)
{
    int next = 0;
    for (int i = 0; i < n_known; i++) {
        const char *f = forms ? forms[i] : NULL;
        int n = 1;
        if (!names[i])
            return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_load: the name of known value %d is NULL", i);
        given[i].name = names[i];
        given[i].form = NULL;
        if (f && strcmp(f, "t") != 0) {
            onnx_form *pf;
            char what[240];
            snprintf(what, sizeof what, "the value given for '%.200s'", names[i]);
            TS_TRY(onnx_form_parse(a, f, what, &pf, &n, err));
            given[i].form = pf;
        }
        if (n > n_values - next)
            return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_load: the forms take more than the %d tensors given",
                              n_values);
        given[i].n = n;
        given[i].t = values + next;
        for (int k = 0; k < n; k++)
            if (!values[next + k])
                return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_load: tensor %d is NULL", next + k);
        next += n;
    }
    if (next != n_values)
        return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_load: %d tensors were given, the forms take %d", n_values,
                          next);
    return TS_OK;
}

ts_status ts_onnx_load_forms(const char *path, int n_known, const char *const *known_names,
                             const char *const *known_forms, int n_values, ts_tensor *const *known_values,
                             ts_graph **out, int *n_outputs, char ***output_forms, ts_err *err)
{
    if (!path || !out || n_known < 0 || n_values < 0 || (n_known && !known_names) || (n_values && !known_values) ||
        (!n_outputs != !output_forms))
        return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_onnx_load: bad arguments");
    *out = NULL;
    if (output_forms) *output_forms = NULL, *n_outputs = 0;
    ts_arena *a = ts_arena_new();
    onnx_given *given = ts_mem_zalloc(sizeof *given * ((size_t)n_known + 1));
    ts_status s = a && given ? TS_OK : ts_err_set(err, TS_ERR_OOM, "out of memory");
    if (s == TS_OK) s = parse_given(a, n_known, known_names, known_forms, n_values, known_values, given, err);
    if (s == TS_OK) s = load_given(path, n_known, given, out, n_outputs, output_forms, err);
    ts_mem_free(given);
    ts_arena_free(a);
    return s;
}

ts_status ts_onnx_load(const char *path, int n_known, const char *const *known_names,
                       ts_tensor *const *known_values, ts_graph **out, ts_err *err)
{
    return ts_onnx_load_forms(path, n_known, known_names, NULL, n_known, known_values, out, NULL, NULL, err);
}
