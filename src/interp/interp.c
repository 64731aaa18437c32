/* interp.c — the interpreter's driver: environments, symbol binding,
 * running blocks, and the control primitives (if, while) that need it. */
#include "interp/interp.h"

#include <string.h>

struct ts_interp_run {
    const ts_graph *g;
    ts_symbind binds;
    ts_err *err;
    int depth;                /* region nesting, to bound recursion */
};

static const ts_interp_kernel *const families[] = {
    ts_interp_elementwise, ts_interp_reduce, ts_interp_layout, ts_interp_index,
    ts_interp_contract, ts_interp_misc, ts_interp_control,
};

ts_interp_kernel ts_interp_kernel_of(ts_op op)
{
    if ((unsigned)op >= TS_OP_COUNT) return NULL;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        if (families[f][op]) return families[f][op];
    return NULL;
}

ts_err *ts_interp_err(ts_interp_run *r) { return r->err; }

ts_status ts_interp_dim(ts_interp_run *r, ts_dim d, int64_t *out)
{
    return ts_dim_eval(d, &r->binds, out, r->err);
}

ts_status ts_interp_out_shape(ts_interp_run *r, const ts_node *n, int k, int rank,
                              const int64_t *shape, ts_tensor **out)
{
    if (!TS_ALWAYS(k < n->n_out)) return ts_err_set(r->err, TS_ERR_INTERNAL, "no result %d", k);
    return ts_tensor_new(n->out[k]->type.dtype, rank, shape, out, r->err);
}

ts_status ts_interp_out(ts_interp_run *r, const ts_node *n, int k, ts_tensor **out)
{
    if (!TS_ALWAYS(k < n->n_out)) return ts_err_set(r->err, TS_ERR_INTERNAL, "no result %d", k);
    const ts_type *t = &n->out[k]->type;
    int64_t shape[TS_MAX_RANK];
    for (int i = 0; i < t->rank; i++) TS_TRY(ts_dim_eval(t->dims[i], &r->binds, &shape[i], r->err));
    return ts_tensor_new(t->dtype, t->rank, shape, out, r->err);
}

/* Check a tensor against a declared type, binding lone symbols. Symbols
 * that a FRESH op invents are rebound on every execution (a loop body may
 * find a different count each time). */
static ts_status match_type(ts_interp_run *r, const ts_type *t, const ts_tensor *x, bool rebind,
                            const char *what, int index)
{
    if (x->dtype != t->dtype || x->rank != t->rank)
        return ts_err_set(r->err, TS_ERR_SHAPE, "%s %d: expected %s of rank %d, got %s of rank %d", what, index,
                          ts_dtype_name(t->dtype), t->rank, ts_dtype_name(x->dtype), x->rank);
    for (int i = 0; i < t->rank; i++) {
        if (rebind && ts_dim_sym_name(t->dims[i])) {
            for (int j = 0; j < r->binds.n; j++)
                if (r->binds.syms[j] == t->dims[i].x) r->binds.vals[j] = x->shape[i];
        }
        ts_status s = ts_dim_match(t->dims[i], x->shape[i], &r->binds, r->err);
        if (s != TS_OK) {
            ts_err_prefix(r->err, "%s %d, dim %d: ", what, index, i);
            return s;
        }
    }
    return TS_OK;
}

static ts_status node_error(ts_interp_run *r, const ts_node *n, ts_status s)
{
    ts_buf b = {0};
    ts_ir_node_label(&b, n);
    ts_err_prefix(r->err, "%s: ", b.data ? b.data : "node");
    ts_buf_free(&b);
    return s;
}

static ts_status run_node(ts_interp_run *r, const ts_node *n, ts_tensor **env)
{
    ts_interp_kernel k = ts_interp_kernel_of(n->op);
    if (!k) return ts_err_set(r->err, TS_ERR_UNSUPPORTED, "the interpreter has no kernel for %s",
                              ts_op_get(n->op)->name);
    ts_tensor *in[256];
    ts_tensor *out[256] = {0};
    if (n->n_in > 256 || n->n_out > 256) return ts_err_set(r->err, TS_ERR_UNSUPPORTED, "over 256 operands");
    for (int i = 0; i < n->n_in; i++) in[i] = env[n->in[i]->id];
    ts_status s = k(r, n, in, out);
    bool fresh = ts_op_get(n->op)->flags & TS_OPF_FRESH;
    for (int i = 0; s == TS_OK && i < n->n_out; i++) {
        if (!out[i]) s = ts_err_set(r->err, TS_ERR_INTERNAL, "kernel left result %d unset", i);
        else s = match_type(r, &n->out[i]->type, out[i], fresh, "result", i);
    }
    for (int i = 0; i < n->n_out; i++) {
        if (s == TS_OK) env[n->out[i]->id] = out[i];
        else ts_tensor_release(out[i]);
    }
    return s;
}

ts_status ts_interp_block(ts_interp_run *r, const ts_block *b, int n_args,
                          ts_tensor *const *args, ts_tensor **results)
{
    if (n_args != b->n_params)
        return ts_err_set(r->err, TS_ERR_INVALID_ARG, "block takes %d values, got %d", b->n_params, n_args);
    if (r->depth > 64) return ts_err_set(r->err, TS_ERR_UNSUPPORTED, "regions nested over 64 deep");
    /* values are indexed by id; ids are graph-wide, so one array fits all
     * blocks (a region's slots are simply unused by its parent) */
    size_t nv = r->g->next_value_id;
    ts_tensor **env = ts_mem_zalloc(sizeof *env * (nv ? nv : 1));
    if (!env) return ts_err_set(r->err, TS_ERR_OOM, "out of memory");
    ts_status s = TS_OK;
    for (int i = 0; i < n_args; i++) {
        s = match_type(r, &b->params[i]->type, args[i], false, "input", i);
        if (s != TS_OK) break;
        ts_tensor_retain(args[i]);
        env[b->params[i]->id] = args[i];
    }
    r->depth++;
    for (const ts_node *n = b->first; s == TS_OK && n; n = n->next) {
        s = run_node(r, n, env);
        if (s != TS_OK) s = node_error(r, n, s);
    }
    r->depth--;
    for (int i = 0; s == TS_OK && i < b->n_results; i++) {
        results[i] = env[b->results[i]->id];
        ts_tensor_retain(results[i]);
    }
    for (size_t i = 0; i < nv; i++) ts_tensor_release(env[i]);
    ts_mem_free(env);
    return s;
}

/* The world size of a single process is 1: bind it if the graph names it. */
bool ts_interp_has_collectives(const ts_graph *g)
{
    for (const ts_node *n = g->body->first; n; n = n->next)
        if (n->op >= TS_OP_ALL_REDUCE && n->op <= TS_OP_RECV) return true;
    return false;
}

static ts_status bind_world(ts_interp_run *r, bool collectives)
{
    if (!collectives) return TS_OK;
    ts_dim world;
    TS_TRY(ts_dim_sym(r->g->syms, "world", &world, r->err));
    return ts_symbind_set(&r->binds, world, 1, r->err);
}

/* The inputs against the graph: count, pins, and each one's type (binding
 * the symbols of its dims). */
static ts_status bind_inputs(ts_interp_run *r, int n_in, ts_tensor *const *in)
{
    const ts_graph *g = r->g;
    if (n_in != g->body->n_params)
        return ts_err_set(r->err, TS_ERR_INVALID_ARG, "the graph takes %d inputs, got %d", g->body->n_params, n_in);
    for (int i = 0; i < n_in; i++)
        if (!in[i]) return ts_err_set(r->err, TS_ERR_INVALID_ARG, "input %d is NULL", i);
    for (int i = 0; i < g->n_pins; i++)
        if (!ts_tensor_equal(in[g->pins[i].input], g->pins[i].value)) {
            const char *name = g->body->params[g->pins[i].input]->name;
            return ts_err_set(r->err, TS_ERR_INVALID_ARG,
                              "input %d (%s) must equal the value the model was specialised on "
                              "(it gives a shape); load the model again with the new value",
                              g->pins[i].input, name ? name : "?");
        }
    return TS_OK;
}

ts_status ts_interp_run_graph(const ts_graph *g, int n_in, ts_tensor *const *in,
                              int n_out, ts_tensor **out, ts_err *err)
{
    if (n_out != g->body->n_results)
        return ts_err_set(err, TS_ERR_INVALID_ARG, "the graph has %d outputs, asked for %d", g->body->n_results, n_out);
    ts_interp_run r = {.g = g, .err = err};
    ts_status s = bind_inputs(&r, n_in, in);
    if (s == TS_OK) s = bind_world(&r, ts_interp_has_collectives(g));
    if (s == TS_OK) s = ts_interp_block(&r, g->body, n_in, in, out);
    ts_symbind_free(&r.binds);
    return s;
}

/* ---- stepping ------------------------------------------------------------ */

ts_status ts_interp_run_new(const ts_graph *g, int n_in, ts_tensor *const *in, ts_err *err, ts_interp_run **out)
{
    return ts_interp_run_new_known(g, ts_interp_has_collectives(g), n_in, in, err, out);
}

ts_status ts_interp_run_new_known(const ts_graph *g, bool collectives, int n_in, ts_tensor *const *in, ts_err *err,
                                  ts_interp_run **out)
{
    ts_interp_run *r = ts_mem_zalloc(sizeof *r);
    if (!r) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    r->g = g;
    r->err = err;
    ts_status s = bind_inputs(r, n_in, in);
    if (s == TS_OK) s = bind_world(r, collectives);
    for (int i = 0; s == TS_OK && i < n_in; i++) s = match_type(r, &g->body->params[i]->type, in[i], false, "input", i);
    if (s != TS_OK) {
        ts_interp_run_free(r);
        return s;
    }
    *out = r;
    return TS_OK;
}

void ts_interp_run_free(ts_interp_run *r)
{
    if (!r) return;
    ts_symbind_free(&r->binds);
    ts_mem_free(r);
}

const ts_symbind *ts_interp_run_binds(const ts_interp_run *r) { return &r->binds; }

ts_status ts_interp_run_node(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    ts_tensor *env_in[256];
    if (n->n_in > 256 || n->n_out > 256) return ts_err_set(r->err, TS_ERR_UNSUPPORTED, "over 256 operands");
    ts_interp_kernel k = ts_interp_kernel_of(n->op);
    if (!k) return node_error(r, n, ts_err_set(r->err, TS_ERR_UNSUPPORTED, "the interpreter has no kernel for %s",
                                               ts_op_get(n->op)->name));
    for (int i = 0; i < n->n_in; i++) env_in[i] = in[i];
    for (int i = 0; i < n->n_out; i++) out[i] = NULL;
    ts_status s = k(r, n, env_in, out);
    bool fresh = ts_op_get(n->op)->flags & TS_OPF_FRESH;
    for (int i = 0; s == TS_OK && i < n->n_out; i++) {
        if (!out[i]) s = ts_err_set(r->err, TS_ERR_INTERNAL, "kernel left result %d unset", i);
        else s = match_type(r, &n->out[i]->type, out[i], fresh, "result", i);
    }
    if (s != TS_OK) {
        for (int i = 0; i < n->n_out; i++) {
            ts_tensor_release(out[i]);
            out[i] = NULL;
        }
        return node_error(r, n, s);
    }
    return TS_OK;
}

ts_status ts_interp_eval_node(ts_graph *g, const ts_node *n, ts_tensor *const *in,
                              ts_tensor **out, ts_err *err)
{
    ts_interp_kernel k = ts_interp_kernel_of(n->op);
    if (!k) return ts_err_set(err, TS_ERR_UNSUPPORTED, "no kernel for %s", ts_op_get(n->op)->name);
    ts_interp_run r = {.g = g, .err = err};
    for (int i = 0; i < n->n_out; i++) out[i] = NULL;
    ts_status s = k(&r, n, in, out);
    for (int i = 0; s == TS_OK && i < n->n_out; i++) {
        if (!out[i]) s = ts_err_set(err, TS_ERR_INTERNAL, "kernel left result %d unset", i);
        else s = match_type(&r, &n->out[i]->type, out[i], true, "result", i);
    }
    if (s != TS_OK)
        for (int i = 0; i < n->n_out; i++) {
            ts_tensor_release(out[i]);
            out[i] = NULL;
        }
    ts_symbind_free(&r.binds);
    return s;
}

/* ---- control ------------------------------------------------------------- */

static bool scalar_true(const ts_tensor *t) { return ((const uint8_t *)t->data)[0] != 0; }

/* if: operand 0 picks the region; the rest are its arguments. */
static ts_status k_if(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    const ts_block *b = n->regions[scalar_true(in[0]) ? 0 : 1];
    return ts_interp_block(r, b, n->n_in - 1, in + 1, out);
}

static void release_all(ts_tensor **t, int n)
{
    for (int i = 0; i < n; i++) {
        ts_tensor_release(t[i]);
        t[i] = NULL;
    }
}

/* while: state starts as the operands; each round runs cond on the state
 * and, while it yields true, replaces the state with body's results. */
static ts_status k_while(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out)
{
    int ns = n->n_in;
    ts_tensor **state = ts_mem_zalloc(sizeof *state * (size_t)(ns ? ns : 1));
    ts_tensor **next = ts_mem_zalloc(sizeof *next * (size_t)(ns ? ns : 1));
    if (!state || !next) {
        ts_mem_free(state);
        ts_mem_free(next);
        return ts_err_set(r->err, TS_ERR_OOM, "out of memory");
    }
    for (int i = 0; i < ns; i++) {
        state[i] = in[i];
        ts_tensor_retain(in[i]);
    }
    ts_status s = TS_OK;
    for (;;) {
        ts_tensor *c = NULL;
        s = ts_interp_block(r, n->regions[0], ns, state, &c);
        if (s != TS_OK) break;
        bool go = scalar_true(c);
        ts_tensor_release(c);
        if (!go) break;
        s = ts_interp_block(r, n->regions[1], ns, state, next);
        if (s != TS_OK) break;
        release_all(state, ns);
        memcpy(state, next, sizeof *state * (size_t)ns);
        memset(next, 0, sizeof *next * (size_t)ns);
    }
    if (s == TS_OK) memcpy(out, state, sizeof *state * (size_t)ns);
    else release_all(state, ns);
    ts_mem_free(state);
    ts_mem_free(next);
    return s;
}

const ts_interp_kernel ts_interp_control[TS_OP_COUNT] = {
    [TS_OP_IF] = k_if,
    [TS_OP_WHILE] = k_while,
};
