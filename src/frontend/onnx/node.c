/* node.c — one ONNX node at a time: resolve its inputs by name, find its
 * decomposition (or inline a model-local function), call it, check and
 * bind its outputs; and the onnx_node helpers operators use (inputs,
 * attributes, failures). */
#include "frontend/onnx/seq.h"

#include <stdio.h>
#include <string.h>

#define MAX_NODE_ARITY 100000   /* inputs or outputs of one node */

/* ---- what operators use ---------------------------------------------------------------- */

ts_builder *onnx_b(onnx_node *n) { return n->ctx->b; }
ts_graph *onnx_graph(onnx_node *n) { return n->ctx->g; }
ts_status onnx_status(onnx_node *n) { return ts_builder_status(n->ctx->b, NULL); }

ts_status onnx_fail(onnx_node *n, ts_status code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ts_builder_fail(n->ctx->b, code, "%s", msg);
}

ts_status onnx_unsupported(onnx_node *n, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ts_builder_fail(n->ctx->b, TS_ERR_UNSUPPORTED, "%s", msg);
}

bool onnx_has_input(const onnx_node *n, int i) { return i >= 0 && i < n->n_in && n->in[i]; }

ts_value *onnx_input(onnx_node *n, int i)
{
    if (onnx_has_input(n, i)) return n->in[i];
    onnx_fail(n, TS_ERR_INVALID_MODEL, "input %d is required", i);
    return NULL;
}

ts_value *onnx_float_input(onnx_node *n, int i)
{
    ts_value *x = onnx_input(n, i);
    if (x && !ts_dtype_is_float(x->type.dtype)) {
        onnx_unsupported(n, "input %d is %s: only float types are defined", i, ts_dtype_name(x->type.dtype));
        return NULL;
    }
    return x;
}

ts_status onnx_set_out(onnx_node *n, int k, ts_value *v)
{
    if (k >= 0 && k < n->n_out && n->out_used[k]) n->out[k] = v;
    return onnx_status(n);
}

ts_status onnx_ctx_status(onnx_ctx *c, ts_err *err) { return ts_builder_status(c->b, err); }

/* ---- attributes -------------------------------------------------------------------------- */

const Onnx__AttributeProto *onnx_find_attr(const Onnx__NodeProto *np, const char *name)
{
    if (!np || !name) return NULL;
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        if (a && a->name && strcmp(a->name, name) == 0) return a;
    }
    return NULL;
}

int onnx_attr_type(const Onnx__AttributeProto *a)
{
    if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) return (int)a->type;
    if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (a->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (a->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (a->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    if (a->n_tensors) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS;
    if (a->n_graphs) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

static const char *attr_type_name(int t)
{
    static const char *const names[] = {"undefined", "a float", "an int", "a string", "a tensor", "a graph",
                                        "floats", "ints", "strings", "tensors", "graphs", "a sparse tensor",
                                        "sparse tensors", "a type", "types"};
    return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "of an unknown type";
}

/* Attribute `name` of n's node, marked as asked for (see unread_attr). */
const Onnx__AttributeProto *onnx_node_attr(onnx_node *n, const char *name)
{
    const Onnx__NodeProto *np = n->proto;
    if (!np || !name) return NULL;
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        if (!a || !a->name || strcmp(a->name, name) != 0) continue;
        if (i < 64) n->attrs_asked |= UINT64_C(1) << i;
        return a;
    }
    return NULL;
}

/* The attribute `name` if present and of type `want`; absent: NULL; of
 * another type: NULL and a failure on n. */
static const Onnx__AttributeProto *typed_attr(onnx_node *n, const char *name, int want)
{
    const Onnx__AttributeProto *a = onnx_node_attr(n, name);
    if (!a) return NULL;
    int t = onnx_attr_type(a);
    if (t == want) return a;
    onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute '%s' must be %s, not %s", name, attr_type_name(want),
              attr_type_name(t));
    return NULL;
}

bool onnx_has_attr(onnx_node *n, const char *name) { return onnx_node_attr(n, name) != NULL; }

void onnx_attr_ignore(onnx_node *n, const char *name) { onnx_node_attr(n, name); }

int64_t onnx_attr_int(onnx_node *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    return a ? a->i : def;
}

double onnx_attr_float(onnx_node *n, const char *name, double def)
{
    const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    return a ? a->f : def;
}

const char *onnx_attr_string(onnx_node *n, const char *name, const char *def)
{
    const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    if (!a) return def;
    char *s = ts_arena_strndup(onnx_graph(n)->arena, a->s.data ? (const char *)a->s.data : "", a->s.len);
    if (!s) onnx_fail(n, TS_ERR_OOM, "out of memory");
    return s ? s : def;
}

int onnx_attr_strings(onnx_node *n, const char *name, const char ***out)
{
    *out = NULL;
    const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
    if (!a) return -1;
    if (a->n_strings > INT_MAX / (int)sizeof(char *))
        return onnx_fail(n, TS_ERR_UNSUPPORTED, "attribute '%s' is too long", name), -1;
    ts_arena *ar = onnx_graph(n)->arena;
    const char **l = ts_arena_alloc(ar, sizeof *l * (a->n_strings + 1));
    for (size_t i = 0; l && i < a->n_strings; i++) {
        const ProtobufCBinaryData *d = &a->strings[i];
        if (!(l[i] = ts_arena_strndup(ar, d->data ? (const char *)d->data : "", d->len))) l = NULL;
    }
    if (!l) return onnx_fail(n, TS_ERR_OOM, "out of memory"), -1;
    *out = l;
    return (int)a->n_strings;
}

ts_value *onnx_value_named(onnx_node *n, const char *name)
{
    bool found = false;
    ts_value *v = onnx_lookup(n->ctx, name, &found);
    if (!v) onnx_fail(n, TS_ERR_INVALID_MODEL, "no tensor named '%.100s' is computed before this node", name);
    return v;
}

int onnx_attr_enum(onnx_node *n, const char *name, const char *def, const char *const *choices)
{
    const char *v = onnx_attr_string(n, name, def);
    if (onnx_status(n) != TS_OK) return -1;
    for (int i = 0; choices[i]; i++)
        if (v && strcmp(v, choices[i]) == 0) return i;
    char list[400];
    size_t len = 0;
    list[0] = 0;
    for (int i = 0; choices[i] && len + 1 < sizeof list; i++) {
        int w = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", choices[i]);
        if (w > 0) len += (size_t)w;
    }
    onnx_unsupported(n, "attribute %s='%s' is not supported at opset %d (tessera assembles: %s)", name, v ? v : "",
                     n->opset, list);
    return -1;
}

int onnx_attr_ints(onnx_node *n, const char *name, const int64_t **v)
{
    *v = NULL;
    const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    if (!a) return -1;
    if (a->n_ints > INT_MAX) return onnx_fail(n, TS_ERR_UNSUPPORTED, "attribute '%s' is too long", name), -1;
    *v = a->ints;
    return (int)a->n_ints;
}

int onnx_attr_floats(onnx_node *n, const char *name, const float **v)
{
    *v = NULL;
    const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    if (!a) return -1;
    if (a->n_floats > INT_MAX) return onnx_fail(n, TS_ERR_UNSUPPORTED, "attribute '%s' is too long", name), -1;
    *v = a->floats;
    return (int)a->n_floats;
}

ts_status onnx_attr_tensor(onnx_node *n, const char *name, ts_tensor **out)
{
    *out = NULL;
    const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    if (!a) {
        if (onnx_status(n) != TS_OK) return onnx_status(n);
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute '%s' is required", name);
    }
    if (!a->t) return onnx_fail(n, TS_ERR_INVALID_MODEL, "attribute '%s' holds no tensor", name);
    char what[160];
    snprintf(what, sizeof what, "attribute '%.100s'", name);
    ts_err err = {0};
    if (onnx_tensor_from_proto(a->t, true, n->ctx->dir, what, out, &err) != TS_OK)
        return onnx_fail(n, err.code, "%s", err.msg);
    return TS_OK;
}

const Onnx__GraphProto *onnx_attr_graph(onnx_node *n, const char *name)
{
    const Onnx__AttributeProto *a = typed_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    if (a && a->g) return a->g;
    if (onnx_status(n) == TS_OK) onnx_fail(n, TS_ERR_INVALID_MODEL, "graph attribute '%s' is required", name);
    return NULL;
}

/* ---- model-local functions ------------------------------------------------------------------ */

static bool same_domain(const char *a, const char *b)
{
    return (onnx_default_domain(a) && onnx_default_domain(b)) || (a && b && strcmp(a, b) == 0);
}

static const Onnx__FunctionProto *find_function(onnx_ctx *c, const Onnx__NodeProto *np)
{
    const Onnx__ModelProto *m = c->model;
    for (size_t i = 0; i < m->n_functions; i++) {
        const Onnx__FunctionProto *f = m->functions[i];
        if (f && f->name && np->op_type && strcmp(f->name, np->op_type) == 0 && same_domain(f->domain, np->domain))
            return f;
    }
    return NULL;
}

/* A copy of body node np whose attributes that refer to the caller's
 * (ref_attr_name) are replaced by the caller's, renamed. */
static Onnx__NodeProto *resolve_attrs(onnx_ctx *c, const Onnx__NodeProto *np, const Onnx__NodeProto *call)
{
    ts_arena *a = c->g->arena;
    Onnx__NodeProto *r = ts_arena_alloc(a, sizeof *r);
    Onnx__AttributeProto **attrs = ts_arena_array(a, np->n_attribute + 1, sizeof *attrs);
    if (!r || !attrs) return NULL;
    *r = *np;
    size_t k = 0;
    for (size_t i = 0; i < np->n_attribute; i++) {
        Onnx__AttributeProto *at = np->attribute[i];
        if (!at) continue;
        if (!at->ref_attr_name || !at->ref_attr_name[0]) {
            attrs[k++] = at;
            continue;
        }
        const Onnx__AttributeProto *src = onnx_find_attr(call, at->ref_attr_name);
        if (!src) continue;   /* not given by the caller: the default applies */
        Onnx__AttributeProto *cp = ts_arena_alloc(a, sizeof *cp);
        if (!cp) return NULL;
        *cp = *src;
        cp->name = at->name;
        attrs[k++] = cp;
    }
    r->attribute = attrs;
    r->n_attribute = k;
    return r;
}

static int function_opset(const Onnx__FunctionProto *f, int dflt)
{
    for (size_t i = 0; i < f->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = f->opset_import[i];
        if (o && onnx_default_domain(o->domain) && o->has_version && o->version > 0 && o->version < INT_MAX)
            return (int)o->version;
    }
    return dflt;
}

static ts_status emit_node(onnx_ctx *c, const Onnx__NodeProto *np, int index);

/* The function's body in a scope of its own: formals bound to the call's
 * inputs, nodes built in order, the call's outputs read back. */
static ts_status function_body(onnx_ctx *c, const Onnx__FunctionProto *f, const Onnx__NodeProto *call,
                               int n_in, ts_value **in, int n_out, ts_value **out, const bool *used)
{
    const char *fname = f->name;
    if ((size_t)n_in > f->n_input)
        return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL, "function %s takes %zu inputs, the node gives %d", fname,
                               f->n_input, n_in);
    if ((size_t)n_out > f->n_output)
        return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL, "function %s has %zu outputs, the node lists %d", fname,
                               f->n_output, n_out);
    for (size_t i = 0; i < f->n_input; i++)
        if (!onnx_bind(c, f->input[i], (int)i < n_in ? in[i] : NULL))
            return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
    for (size_t i = 0; i < f->n_node; i++) {
        Onnx__NodeProto *r = f->node[i] ? resolve_attrs(c, f->node[i], call) : NULL;
        if (!r) return ts_builder_fail(c->b, f->node[i] ? TS_ERR_OOM : TS_ERR_INVALID_MODEL, "function %s: bad node", fname);
        TS_TRY(emit_node(c, r, (int)i));
    }
    for (int k = 0; k < n_out; k++) {
        bool found;
        if (!used[k]) continue;
        out[k] = onnx_lookup(c, f->output[k], &found);
        if (!out[k])
            return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL, "function %s does not compute its output '%s'", fname,
                                   f->output[k] ? f->output[k] : "");
    }
    return TS_OK;
}

static ts_status inline_function(onnx_ctx *c, const Onnx__FunctionProto *f, const Onnx__NodeProto *call,
                                 int n_in, ts_value **in, int n_out, ts_value **out, const bool *used)
{
    if (c->depth >= ONNX_MAX_DEPTH)
        return ts_builder_fail(c->b, TS_ERR_UNSUPPORTED, "functions and subgraphs nest more than %d deep",
                               ONNX_MAX_DEPTH);
    onnx_scope s;
    int opset = c->opset;
    const Onnx__FunctionProto *outer = c->func;
    onnx_scope_push(c, &s, true);
    c->opset = function_opset(f, opset);
    c->func = f;
    c->depth++;
    ts_status st = function_body(c, f, call, n_in, in, n_out, out, used);
    c->depth--;
    c->func = outer;
    c->opset = opset;
    onnx_scope_pop(c);
    return st;
}

/* ---- one node ---------------------------------------------------------------------------- */

void onnx_set_origin(onnx_ctx *c, const Onnx__NodeProto *np, int index)
{
    c->origin_np = np;
    c->origin_index = index;
    char label[300];
    const char *op = np->op_type ? np->op_type : "?";
    if (np->name && np->name[0]) snprintf(label, sizeof label, "node '%.200s' (%.64s)", np->name, op);
    else snprintf(label, sizeof label, "node #%d (%.64s)", index, op);
    ts_builder_set_origin(c->b, label);
}

static ts_status resolve_inputs(onnx_ctx *c, const Onnx__NodeProto *np, ts_value **in)
{
    for (size_t i = 0; i < np->n_input; i++) {
        const char *name = np->input[i];
        bool found;
        in[i] = NULL;
        if (!name || !name[0]) continue;
        in[i] = onnx_lookup(c, name, &found);
        if (!found)
            return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL,
                                   "input '%s' is not defined before this node (ONNX nodes must be in topological order)",
                                   name);
    }
    return TS_OK;
}

/* The version of domain (not the default one) among imports[0..n), or -1. */
static int import_version(size_t n, Onnx__OperatorSetIdProto *const *imports, const char *domain)
{
    for (size_t i = 0; i < n; i++) {
        const Onnx__OperatorSetIdProto *o = imports[i];
        if (o && o->domain && strcmp(o->domain, domain) == 0 && o->has_version && o->version > 0 &&
            o->version < INT_MAX)
            return (int)o->version;
    }
    return -1;
}

/* The opset of domain in effect: the inlined function's import first,
 * then the model's; -1 when neither imports it. */
static int domain_opset(onnx_ctx *c, const char *domain)
{
    if (onnx_default_domain(domain)) return c->opset;
    int v = c->func ? import_version(c->func->n_opset_import, c->func->opset_import, domain) : -1;
    return v >= 0 ? v : import_version(c->model->n_opset_import, c->model->opset_import, domain);
}

/* Why no operator was found (a local function was not either). */
static ts_status no_op(onnx_ctx *c, const char *op, const char *domain, int opset)
{
    if (!onnx_known_domain(domain))
        return ts_builder_fail(c->b, TS_ERR_UNSUPPORTED,
                               "operator %s of domain '%s' is not supported: tessera assembles the default ONNX "
                               "domain, ai.onnx.ml, ai.onnx.preview and ai.onnx.preview.training", op, domain);
    if (opset < 0 && onnx_default_domain(domain))
        return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL, "the model imports no opset of the default ONNX domain");
    if (opset < 0)
        return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL, "the model imports no opset of domain '%s'", domain);
    if (onnx_default_domain(domain))
        return ts_builder_fail(c->b, TS_ERR_UNSUPPORTED, "operator %s (opset %d) is not supported", op, opset);
    return ts_builder_fail(c->b, TS_ERR_UNSUPPORTED, "operator %s of domain '%s' (opset %d) is not supported", op,
                           domain, opset);
}

/* A sequence or optional reaches only the operators that take one (seq.h). */
static ts_status refuse_composites(onnx_ctx *c, const Onnx__NodeProto *np, int n_in, ts_value *const *in)
{
    for (int i = 0; i < n_in; i++)
        if (onnx_comp_of(in[i]))
            return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL, "input %d ('%s') is %s; %s takes tensors", i,
                                   np->input[i], onnx_comp_what(in[i]), np->op_type);
    return TS_OK;
}

/* An attribute the decomposition never asked for would be silently
 * ignored: a value the model relies on, or one that only some opsets
 * allow (a renamed or removed attribute), must not change the result
 * without a word. Every decomposition asks for each attribute it honours
 * (or deliberately ignores, with onnx_attr_ignore and a reason), so one
 * left over is refused, naming it. */
static ts_status unread_attr(onnx_node *n)
{
    const Onnx__NodeProto *np = n->proto;
    for (size_t i = 0; i < np->n_attribute && i < 64; i++) {
        if (n->attrs_asked & (UINT64_C(1) << i)) continue;
        const char *name = np->attribute[i] && np->attribute[i]->name ? np->attribute[i]->name : "";
        return onnx_unsupported(n, "attribute '%s' is not supported at opset %d (tessera's %s does not use it)", name,
                                n->opset, n->op_type);
    }
    return TS_OK;
}

static ts_status call_op(onnx_ctx *c, const Onnx__NodeProto *np, int n_in, ts_value **in, int n_out,
                         ts_value **out, bool *used)
{
    const char *op = np->op_type;
    int opset = domain_opset(c, np->domain);
    onnx_op_fn fn = opset >= 0 ? onnx_find_op(np->domain, op, opset) : NULL;
    const Onnx__FunctionProto *f = fn ? NULL : find_function(c, np);
    if (f) return inline_function(c, f, np, n_in, in, n_out, out, used);
    if (!fn) return no_op(c, op, np->domain, opset);
    if (!onnx_takes_composites(op)) TS_TRY(refuse_composites(c, np, n_in, in));
    onnx_node nd = {op, np->name ? np->name : "", opset, n_in, in, n_out, out, used, np, c, 0};
    ts_status s = fn(&nd);
    if (s == TS_OK) s = onnx_ctx_status(c, NULL);
    if (s == TS_OK) s = unread_attr(&nd);
    if (s != TS_OK && onnx_ctx_status(c, NULL) == TS_OK)   /* a code without a message */
        return ts_builder_fail(c->b, s, "failed (%s)", ts_status_name(s));
    return s;
}

static ts_status bind_outputs(onnx_ctx *c, const Onnx__NodeProto *np, ts_value **out, const bool *used)
{
    for (size_t k = 0; k < np->n_output; k++) {
        if (!used[k]) continue;
        if (!out[k])
            return ts_builder_fail(c->b, TS_ERR_INTERNAL, "output %zu ('%s') was not produced", k, np->output[k]);
        if (!onnx_bind(c, np->output[k], out[k])) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
    }
    return TS_OK;
}

static ts_status emit_node(onnx_ctx *c, const Onnx__NodeProto *np, int index)
{
    onnx_set_origin(c, np, index);
    TS_TRY(onnx_ctx_status(c, NULL));
    if (!np->op_type || !np->op_type[0]) return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL, "the node has no op_type");
    if (np->n_input > MAX_NODE_ARITY || np->n_output > MAX_NODE_ARITY)
        return ts_builder_fail(c->b, TS_ERR_UNSUPPORTED, "too many inputs or outputs");
    ts_arena *a = c->g->arena;
    ts_value **in = ts_arena_array(a, np->n_input + 1, sizeof *in);
    ts_value **out = ts_arena_array(a, np->n_output + 1, sizeof *out);
    bool *used = ts_arena_array(a, np->n_output + 1, sizeof *used);
    if (!in || !out || !used) return ts_builder_fail(c->b, TS_ERR_OOM, "out of memory");
    for (size_t k = 0; k < np->n_output; k++) used[k] = np->output[k] && np->output[k][0];
    TS_TRY(resolve_inputs(c, np, in));
    TS_TRY(call_op(c, np, (int)np->n_input, in, (int)np->n_output, out, used));
    onnx_set_origin(c, np, index);   /* an inlined function labelled its own nodes */
    return bind_outputs(c, np, out, used);
}

ts_status onnx_emit_nodes(onnx_ctx *c, size_t n, Onnx__NodeProto *const *nodes)
{
    for (size_t i = 0; i < n; i++) {
        if (!nodes[i]) return ts_builder_fail(c->b, TS_ERR_INVALID_MODEL, "node %zu is empty", i);
        TS_TRY(emit_node(c, nodes[i], (int)i));
    }
    return TS_OK;
}
