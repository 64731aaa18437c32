/* graph.c — building and editing graphs: values, blocks, attributes, nodes. */
#include "ir/ir.h"

#include <string.h>

static void release_tensor(void *p) { ts_tensor_release(p); }

ts_status ts_ir_graph_new(const char *name, ts_graph **out, ts_err *err)
{
    ts_arena *a = ts_arena_new();
    ts_symtab *syms = ts_symtab_new();
    ts_graph *g = a ? ts_arena_alloc(a, sizeof *g) : NULL;
    if (g) g->name = ts_arena_strdup(a, name ? name : "main");
    if (g) g->body = ts_arena_alloc(a, sizeof *g->body);
    if (!g || !syms || !g->name || !g->body) {
        ts_arena_free(a);
        ts_symtab_free(syms);
        return ts_err_set(err, TS_ERR_OOM, "out of memory creating a graph");
    }
    g->arena = a;
    g->syms = syms;
    *out = g;
    return TS_OK;
}

void ts_graph_free(ts_graph *g)
{
    if (!g) return;
    ts_symtab *syms = g->syms;
    ts_arena_free(g->arena);  /* g itself lives in the arena */
    ts_symtab_free(syms);
}

#define OOM(err) ts_err_set(err, TS_ERR_OOM, "out of memory building the graph")

ts_status ts_ir_value_new(ts_graph *g, const ts_type *type, ts_value **out, ts_err *err)
{
    if (type->rank < 0 || type->rank > TS_MAX_RANK)
        return ts_err_set(err, TS_ERR_SHAPE, "rank %d is outside 0..%d", type->rank, TS_MAX_RANK);
    ts_value *v = ts_arena_alloc(g->arena, sizeof *v);
    ts_dim *dims = ts_arena_array(g->arena, (size_t)type->rank, sizeof(ts_dim));
    if (!v || !dims) return OOM(err);
    if (type->rank) memcpy(dims, type->dims, sizeof(ts_dim) * (size_t)type->rank);
    v->type = *type;
    v->type.dims = dims;
    v->id = g->next_value_id++;
    *out = v;
    return TS_OK;
}

/* Grow an arena array of pointers by one (arena memory is not reused). */
static bool push_ptr(ts_graph *g, void ***arr, int *n, void *p)
{
    void **bigger = ts_arena_array(g->arena, (size_t)*n + 1, sizeof(void *));
    if (!bigger) return false;
    if (*n) memcpy(bigger, *arr, sizeof(void *) * (size_t)*n);
    bigger[(*n)++] = p;
    *arr = bigger;
    return true;
}

ts_status ts_ir_block_add_param(ts_graph *g, ts_block *b, const ts_type *type,
                                ts_value **out, ts_err *err)
{
    ts_value *v;
    TS_TRY(ts_ir_value_new(g, type, &v, err));
    v->param_of = b;
    v->index = b->n_params;
    if (!push_ptr(g, (void ***)&b->params, &b->n_params, v)) return OOM(err);
    *out = v;
    return TS_OK;
}

ts_status ts_ir_block_set_results(ts_graph *g, ts_block *b, int n, ts_value *const *vals,
                                  ts_err *err)
{
    ts_value **r = ts_arena_array(g->arena, (size_t)n, sizeof *r);
    if (!r && n) return OOM(err);
    if (n) memcpy(r, vals, sizeof *r * (size_t)n);
    b->results = r;
    b->n_results = n;
    return TS_OK;
}

ts_status ts_ir_block_new(ts_graph *g, ts_block **out, ts_err *err)
{
    *out = ts_arena_alloc(g->arena, sizeof **out);
    return *out ? TS_OK : OOM(err);
}

ts_status ts_ir_pin_input(ts_graph *g, int input, ts_tensor *value, ts_err *err)
{
    for (int i = 0; i < g->n_pins; i++)
        if (g->pins[i].input == input) return TS_OK;  /* pinned once is enough */
    ts_pin *p = ts_arena_array(g->arena, (size_t)g->n_pins + 1, sizeof *p);
    if (!p || !ts_arena_defer(g->arena, release_tensor, value)) return OOM(err);
    if (g->n_pins) memcpy(p, g->pins, sizeof *p * (size_t)g->n_pins);
    ts_tensor_retain(value);
    p[g->n_pins].input = input;
    p[g->n_pins].value = value;
    g->pins = p;
    g->n_pins++;
    return TS_OK;
}

/* ---- attributes -------------------------------------------------------- */

ts_attr *ts_ir_attrs_new(ts_graph *g, ts_op op)
{
    const ts_op_info *info = ts_op_get(op);
    ts_attr *a = ts_arena_array(g->arena, (size_t)(info->n_attrs ? info->n_attrs : 1), sizeof *a);
    if (!a) return NULL;
    for (int i = 0; i < info->n_attrs; i++) {
        const ts_attr_schema *s = &info->attrs[i];
        a[i].kind = s->kind;
        a[i].i = -1;   /* "not set" for ENUM/DTYPE/INT without default */
        if (!s->has_default) continue;
        a[i].i = s->def_i;
        a[i].f = s->def_f;
        a[i].s = s->def_s;
        if (s->kind == TS_ATTR_INTS && s->def_n) {
            a[i].ints = ts_arena_array(g->arena, (size_t)s->def_n, sizeof(int64_t));
            if (!a[i].ints) return NULL;
            memcpy(a[i].ints, s->def_ints, sizeof(int64_t) * (size_t)s->def_n);
            a[i].n = s->def_n;
        }
    }
    return a;
}

static ts_attr *find_attr(ts_op op, ts_attr *a, const char *name, ts_attr_kind kind)
{
    int k = ts_op_attr_index(op, name);
    if (!TS_ALWAYS(k >= 0) || !TS_ALWAYS(ts_op_get(op)->attrs[k].kind == kind)) return NULL;
    return &a[k];
}

#define BADNAME() TS_ERR_INTERNAL

ts_status ts_attr_set_int(ts_graph *g, ts_op op, ts_attr *a, const char *name, int64_t v)
{
    ts_attr *x = find_attr(op, a, name, TS_ATTR_INT);
    if (!x) return BADNAME();
    x->i = v;
    return TS_OK;
}

ts_status ts_attr_set_float(ts_graph *g, ts_op op, ts_attr *a, const char *name, double v)
{
    ts_attr *x = find_attr(op, a, name, TS_ATTR_FLOAT);
    if (!x) return BADNAME();
    x->f = v;
    return TS_OK;
}

ts_status ts_attr_set_dtype(ts_graph *g, ts_op op, ts_attr *a, const char *name, ts_dtype v)
{
    ts_attr *x = find_attr(op, a, name, TS_ATTR_DTYPE);
    if (!x) return BADNAME();
    x->i = v;
    return TS_OK;
}

ts_status ts_attr_set_str(ts_graph *g, ts_op op, ts_attr *a, const char *name, const char *v)
{
    ts_attr *x = find_attr(op, a, name, TS_ATTR_STR);
    if (!x) return BADNAME();
    x->s = ts_arena_strdup(g->arena, v);
    return x->s ? TS_OK : TS_ERR_OOM;
}

ts_status ts_attr_set_enum(ts_graph *g, ts_op op, ts_attr *a, const char *name, const char *v)
{
    ts_attr *x = find_attr(op, a, name, TS_ATTR_ENUM);
    if (!x) return BADNAME();
    const ts_attr_schema *s = &ts_op_get(op)->attrs[x - a];
    for (int k = 0; k < s->n_enum; k++)
        if (strcmp(s->enum_names[k], v) == 0) {
            x->i = k;
            return TS_OK;
        }
    return TS_ERR_INVALID_ARG;
}

ts_status ts_attr_set_ints(ts_graph *g, ts_op op, ts_attr *a, const char *name, int n, const int64_t *v)
{
    ts_attr *x = find_attr(op, a, name, TS_ATTR_INTS);
    if (!x) return BADNAME();
    x->ints = ts_arena_array(g->arena, (size_t)(n ? n : 1), sizeof(int64_t));
    if (!x->ints) return TS_ERR_OOM;
    if (n) memcpy(x->ints, v, sizeof(int64_t) * (size_t)n);
    x->n = n;
    return TS_OK;
}

ts_status ts_attr_set_dims(ts_graph *g, ts_op op, ts_attr *a, const char *name, int n, const ts_dim *v)
{
    ts_attr *x = find_attr(op, a, name, TS_ATTR_DIMS);
    if (!x) return BADNAME();
    x->dims = ts_arena_array(g->arena, (size_t)(n ? n : 1), sizeof(ts_dim));
    if (!x->dims) return TS_ERR_OOM;
    if (n) memcpy(x->dims, v, sizeof(ts_dim) * (size_t)n);
    x->n = n;
    return TS_OK;
}

ts_status ts_attr_set_tensor(ts_graph *g, ts_op op, ts_attr *a, const char *name, ts_tensor *t)
{
    ts_attr *x = find_attr(op, a, name, TS_ATTR_TENSOR);
    if (!x) return BADNAME();
    if (!ts_arena_defer(g->arena, release_tensor, t)) return TS_ERR_OOM;
    ts_tensor_retain(t);
    x->t = t;
    return TS_OK;
}

/* ---- nodes ------------------------------------------------------------- */

static bool dtype_in_class(ts_dtype dt, ts_typeclass c)
{
    switch (c) {
    case TS_TY_ALL: return true;
    case TS_TY_ANY: return !ts_dtype_is_storage(dt);
    case TS_TY_NUM: return dt != TS_DTYPE_BOOL && !ts_dtype_is_storage(dt);
    case TS_TY_FLOAT: return ts_dtype_is_float(dt);
    case TS_TY_INT: return ts_dtype_is_int(dt);
    case TS_TY_INTBOOL: return dt == TS_DTYPE_BOOL || ts_dtype_is_int(dt);
    }
    return false;
}

static const char *class_name(ts_typeclass c)
{
    static const char *const n[] = {"any", "a compute type", "a number type", "a float type", "an integer type",
                                    "an integer or bool type"};
    return n[c];
}

/* Every attribute without a default must have been set. */
static ts_status check_attrs(ts_op op, const ts_attr *a, ts_err *err)
{
    const ts_op_info *info = ts_op_get(op);
    for (int i = 0; i < info->n_attrs; i++) {
        const ts_attr_schema *s = &info->attrs[i];
        bool missing = false;
        switch (s->kind) {
        case TS_ATTR_INT: missing = false; break;  /* any value is meaningful */
        case TS_ATTR_ENUM: missing = a[i].i < 0 || a[i].i >= s->n_enum; break;
        case TS_ATTR_DTYPE: missing = !ts_dtype_valid((ts_dtype)a[i].i); break;
        case TS_ATTR_STR: missing = a[i].s == NULL; break;
        case TS_ATTR_TENSOR: missing = a[i].t == NULL; break;
        case TS_ATTR_INTS: case TS_ATTR_DIMS: case TS_ATTR_FLOAT: break;
        }
        if (missing)
            return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s: attribute '%s' is missing or invalid",
                              info->name, s->name);
    }
    return TS_OK;
}

static ts_status check_operands(ts_op op, int n_in, ts_value *const *in, ts_err *err)
{
    const ts_op_info *info = ts_op_get(op);
    if (n_in < info->min_in || (info->max_in >= 0 && n_in > info->max_in)) {
        if (info->min_in == info->max_in)
            return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s takes %d operand%s, got %d", info->name,
                              info->min_in, info->min_in == 1 ? "" : "s", n_in);
        return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s takes at least %d operands, got %d",
                          info->name, info->min_in, n_in);
    }
    for (int i = 0; i < n_in; i++) {
        if (!in[i]) return ts_err_set(err, TS_ERR_INVALID_ARG, "%s: operand %d is NULL", info->name, i);
        /* control ops and select carry operands of any type; their rules
         * check what matters */
        if (info->flags & TS_OPF_CONTROL || op == TS_OP_SELECT || op == TS_OP_CUSTOM) continue;
        if (!dtype_in_class(in[i]->type.dtype, info->types))
            return ts_err_set(err, TS_ERR_SHAPE, "%s: operand %d is %s, expected %s", info->name, i,
                              ts_dtype_name(in[i]->type.dtype), class_name(info->types));
    }
    return TS_OK;
}

ts_status ts_ir_node_new(ts_graph *g, ts_block *b, ts_node *before, ts_op op,
                         int n_in, ts_value *const *in, ts_attr *attrs,
                         int n_regions, ts_block *const *regions,
                         ts_node **out, ts_err *err)
{
    const ts_op_info *info = ts_op_get(op);
    if (n_regions != info->n_regions)
        return ts_err_set(err, TS_ERR_INVALID_MODEL, "%s takes %d regions, got %d", info->name,
                          info->n_regions, n_regions);
    TS_TRY(check_operands(op, n_in, in, err));
    if (!attrs && !(attrs = ts_ir_attrs_new(g, op))) return OOM(err);
    TS_TRY(check_attrs(op, attrs, err));

    ts_node *n = ts_arena_alloc(g->arena, sizeof *n);
    if (!n) return OOM(err);
    n->op = op;
    n->attrs = attrs;
    n->n_in = n_in;
    n->in = ts_arena_array(g->arena, (size_t)(n_in ? n_in : 1), sizeof *n->in);
    n->n_regions = n_regions;
    n->regions = ts_arena_array(g->arena, TS_MAX_REGIONS, sizeof *n->regions);
    if (!n->in || !n->regions) return OOM(err);
    if (n_in) memcpy(n->in, in, sizeof *n->in * (size_t)n_in);
    for (int i = 0; i < n_regions; i++) {
        n->regions[i] = regions[i];
        regions[i]->parent = n;
    }
    ts_type types[64];
    int count = 0;
    TS_TRY(ts_ir_infer(g, n, types, 64, &count, err));
    TS_TRY(ts_ir_node_set_outputs(g, n, count, types, err));

    n->id = g->next_node_id++;
    n->block = b;
    if (before) {
        n->next = before;
        n->prev = before->prev;
        if (before->prev) before->prev->next = n; else b->first = n;
        before->prev = n;
    } else {
        n->prev = b->last;
        if (b->last) b->last->next = n; else b->first = n;
        b->last = n;
    }
    *out = n;
    return TS_OK;
}

ts_status ts_ir_node_set_outputs(ts_graph *g, ts_node *n, int count, const ts_type *types,
                                 ts_err *err)
{
    n->out = ts_arena_array(g->arena, (size_t)(count ? count : 1), sizeof *n->out);
    if (!n->out) return OOM(err);
    for (int i = 0; i < count; i++) {
        TS_TRY(ts_ir_value_new(g, &types[i], &n->out[i], err));
        n->out[i]->def = n;
        n->out[i]->index = i;
    }
    n->n_out = count;
    return TS_OK;
}

void ts_ir_node_unlink(ts_node *n)
{
    ts_block *b = n->block;
    if (!b) return;
    if (n->prev) n->prev->next = n->next; else b->first = n->next;
    if (n->next) n->next->prev = n->prev; else b->last = n->prev;
    n->prev = n->next = NULL;
    n->block = NULL;
}

static void replace_in_block(ts_block *b, ts_value *from, ts_value *to)
{
    for (ts_node *n = b->first; n; n = n->next) {
        for (int i = 0; i < n->n_in; i++)
            if (n->in[i] == from) n->in[i] = to;
        for (int r = 0; r < n->n_regions; r++) replace_in_block(n->regions[r], from, to);
    }
    for (int i = 0; i < b->n_results; i++)
        if (b->results[i] == from) b->results[i] = to;
}

void ts_ir_replace_uses(ts_graph *g, ts_value *from, ts_value *to)
{
    replace_in_block(g->body, from, to);
}

static void zero_block(ts_block *b)
{
    for (int i = 0; i < b->n_params; i++) b->params[i]->aux = NULL;
    for (ts_node *n = b->first; n; n = n->next) {
        for (int i = 0; i < n->n_out; i++) n->out[i]->aux = NULL;
        for (int r = 0; r < n->n_regions; r++) zero_block(n->regions[r]);
    }
}

static void count_block(ts_block *b)
{
    for (ts_node *n = b->first; n; n = n->next) {
        for (int i = 0; i < n->n_in; i++) n->in[i]->aux = (void *)((intptr_t)n->in[i]->aux + 1);
        for (int r = 0; r < n->n_regions; r++) count_block(n->regions[r]);
    }
    for (int i = 0; i < b->n_results; i++)
        b->results[i]->aux = (void *)((intptr_t)b->results[i]->aux + 1);
}

void ts_ir_count_uses(ts_graph *g)
{
    zero_block(g->body);
    count_block(g->body);
}

void ts_ir_walk(ts_block *b, ts_node_visit fn, void *ud)
{
    for (ts_node *n = b->first, *next; n; n = next) {
        next = n->next;  /* fn may unlink n */
        fn(n, ud);
        for (int r = 0; r < n->n_regions; r++) ts_ir_walk(n->regions[r], fn, ud);
    }
}

/* ---- getters ----------------------------------------------------------- */

static const ts_attr *get(const ts_node *n, const char *name, ts_attr_kind k1, ts_attr_kind k2)
{
    int k = ts_op_attr_index(n->op, name);
    if (!TS_ALWAYS(k >= 0)) return NULL;
    ts_attr_kind kind = ts_op_get(n->op)->attrs[k].kind;
    if (!TS_ALWAYS(kind == k1 || kind == k2)) return NULL;
    return &n->attrs[k];
}

int64_t ts_node_int(const ts_node *n, const char *name)
{
    int k = ts_op_attr_index(n->op, name);
    if (!TS_ALWAYS(k >= 0)) return 0;
    ts_attr_kind kind = ts_op_get(n->op)->attrs[k].kind;
    if (!TS_ALWAYS(kind == TS_ATTR_INT || kind == TS_ATTR_ENUM || kind == TS_ATTR_DTYPE)) return 0;
    return n->attrs[k].i;
}

double ts_node_float(const ts_node *n, const char *name)
{
    const ts_attr *a = get(n, name, TS_ATTR_FLOAT, TS_ATTR_FLOAT);
    return a ? a->f : 0;
}

const char *ts_node_str(const ts_node *n, const char *name)
{
    const ts_attr *a = get(n, name, TS_ATTR_STR, TS_ATTR_STR);
    return a ? a->s : NULL;
}

const int64_t *ts_node_ints(const ts_node *n, const char *name, int *count)
{
    const ts_attr *a = get(n, name, TS_ATTR_INTS, TS_ATTR_INTS);
    *count = a ? a->n : 0;
    return a ? a->ints : NULL;
}

const ts_dim *ts_node_dims(const ts_node *n, const char *name, int *count)
{
    const ts_attr *a = get(n, name, TS_ATTR_DIMS, TS_ATTR_DIMS);
    *count = a ? a->n : 0;
    return a ? a->dims : NULL;
}

ts_tensor *ts_node_tensor(const ts_node *n, const char *name)
{
    const ts_attr *a = get(n, name, TS_ATTR_TENSOR, TS_ATTR_TENSOR);
    return a ? a->t : NULL;
}

const char *ts_node_enum_name(const ts_node *n, const char *name)
{
    int k = ts_op_attr_index(n->op, name);
    if (!TS_ALWAYS(k >= 0)) return "";
    const ts_attr_schema *s = &ts_op_get(n->op)->attrs[k];
    if (!TS_ALWAYS(s->kind == TS_ATTR_ENUM) || n->attrs[k].i < 0 || n->attrs[k].i >= s->n_enum) return "";
    return s->enum_names[n->attrs[k].i];
}

/* ---- types, identity, labels -------------------------------------------- */

bool ts_type_eq(const ts_type *a, const ts_type *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (!ts_dim_eq(a->dims[i], b->dims[i])) return false;
    return true;
}

void ts_type_print(ts_buf *b, const ts_type *t)
{
    ts_buf_puts(b, ts_dtype_name(t->dtype) ? ts_dtype_name(t->dtype) : "?");
    ts_buf_puts(b, "[");
    for (int i = 0; i < t->rank; i++) {
        if (i) ts_buf_puts(b, ", ");
        ts_dim_print(b, t->dims[i]);
    }
    ts_buf_puts(b, "]");
}

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * UINT64_C(0x100000001b3); }

static uint64_t attr_hash(uint64_t h, const ts_attr *a)
{
    h = mix(h, (uint64_t)a->i);
    uint64_t fb;
    memcpy(&fb, &a->f, sizeof fb);
    h = mix(h, fb);
    for (const char *s = a->s; s && *s; s++) h = mix(h, (unsigned char)*s);
    h = mix(h, (uint64_t)a->n);
    for (int i = 0; i < a->n; i++) {
        if (a->ints) h = mix(h, (uint64_t)a->ints[i]);
        if (a->dims) h = mix(mix(h, (uint64_t)a->dims[i].c), (uint64_t)(uintptr_t)a->dims[i].x);
    }
    if (a->t) h = mix(h, ts_tensor_hash(a->t));
    return h;
}

uint64_t ts_ir_node_hash(const ts_node *n)
{
    uint64_t h = mix(UINT64_C(0xcbf29ce484222325), (uint64_t)n->op);
    for (int i = 0; i < n->n_in; i++) h = mix(h, (uint64_t)(uintptr_t)n->in[i]);
    for (int i = 0; i < ts_op_get(n->op)->n_attrs; i++) h = attr_hash(h, &n->attrs[i]);
    for (int i = 0; i < n->n_regions; i++) h = mix(h, (uint64_t)(uintptr_t)n->regions[i]);
    return h;
}

static bool attr_same(const ts_attr *a, const ts_attr *b)
{
    if (a->i != b->i || a->n != b->n) return false;
    if (memcmp(&a->f, &b->f, sizeof a->f) != 0) return false;  /* bitwise: NaN == NaN */
    if ((a->s == NULL) != (b->s == NULL) || (a->s && strcmp(a->s, b->s) != 0)) return false;
    for (int i = 0; i < a->n; i++) {
        if (a->ints && a->ints[i] != b->ints[i]) return false;
        if (a->dims && !ts_dim_eq(a->dims[i], b->dims[i])) return false;
    }
    if ((a->t == NULL) != (b->t == NULL)) return false;
    return !a->t || a->t == b->t || ts_tensor_equal(a->t, b->t);
}

bool ts_ir_node_same(const ts_node *a, const ts_node *b)
{
    if (a->op != b->op || a->n_in != b->n_in || a->n_regions != b->n_regions) return false;
    if (ts_op_get(a->op)->flags & TS_OPF_SIDE) return a == b;
    for (int i = 0; i < a->n_in; i++)
        if (a->in[i] != b->in[i]) return false;
    for (int i = 0; i < ts_op_get(a->op)->n_attrs; i++)
        if (!attr_same(&a->attrs[i], &b->attrs[i])) return false;
    for (int i = 0; i < a->n_regions; i++)
        if (a->regions[i] != b->regions[i]) return false;
    return true;
}

void ts_ir_node_label(ts_buf *b, const ts_node *n)
{
    if (n->n_out && n->out[0]->name)
        ts_buf_printf(b, "%%%s (%s)", n->out[0]->name, ts_op_get(n->op)->name);
    else if (n->n_out)
        ts_buf_printf(b, "%%%u (%s)", n->out[0]->id, ts_op_get(n->op)->name);
    else
        ts_buf_printf(b, "node %u (%s)", n->id, ts_op_get(n->op)->name);
    if (n->origin) ts_buf_printf(b, " from '%s'", n->origin);
}
