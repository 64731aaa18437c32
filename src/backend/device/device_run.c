/* device_run.c — an accelerator target's module and runs over its
 * ts_devapi (device_run.h, D177).
 *
 * compile plans the graph with the dialect's answer to fusion, emits one
 * program of all its kernels and builds it. A run binds the inputs' sizes
 * (the interpreter's run state), then walks the steps in order on the
 * target's one queue: a kernel gets a device buffer and an element offset
 * per operand (its outputs in one arena placed by the static memory plan
 * and kept by the module; a part of a concat written in place at its
 * concat's place plus the part's offset) and its dims. A value lives on
 * the device, on the host, or both: inputs and constants are uploaded the
 * first time a kernel reads them (constants once per module), kernel
 * results are read back only when a fallback node (run by the
 * interpreter's kernels: what the dialect does not generate) or the
 * caller needs them. An if or while runs its regions as modules of their
 * own, compiled with the module, on the values where they are: a
 * while's carried values stay on the device across rounds, and only its
 * condition is read on the host. Runs of one module are serialised. */
#include "backend/device/device_run.h"

#include "core/clock.h"
#include "interp/interp.h"
#include "lower/plan.h"
#include "runtime/plan.h"

#include <pthread.h>
#include <string.h>

/* ---- the module ---------------------------------------------------------------------- */

struct ts_module {
    const ts_devapi *api;
    const ts_graph *g;
    ts_plan *plan;
    void *prog;
    void **kern;              /* by kernel, in step order */
    int *kern_of;             /* by step: its index in kern, or -1 (fallback) */
    int n_kern;
    ts_module ***regions;     /* by step: a control step's regions as modules, or NULL */
    ts_graph **region_graphs; /* by step: the graphs those modules compile (views of the regions) */
    void **consts;            /* by value id: a constant uploaded once, or NULL */
    int *last_use;            /* by value id: the last step reading it (-1: none) */
    void *arena;              /* the runs' intermediate values (kept between runs) */
    size_t arena_cap;
    bool collectives;
    pthread_mutex_t lock;     /* one run at a time */
    double compile_ms;
};

void ts_dev_free(ts_module *m)
{
    if (!m) return;
    const ts_devapi *api = m->api;
    for (int i = 0; m->regions && i < m->plan->n_steps; i++) {
        for (int r = 0; m->regions[i] && r < m->plan->steps[i].group->root->n_regions; r++)
            ts_dev_free(m->regions[i][r]);
        ts_mem_free(m->regions[i]);
        if (m->region_graphs) ts_mem_free(m->region_graphs[i]);
    }
    ts_mem_free(m->regions);
    ts_mem_free(m->region_graphs);
    if (m->prog) api->free_program(m->prog, m->n_kern, m->kern);
    for (uint32_t i = 0; m->consts && i < m->g->next_value_id; i++)
        if (m->consts[i]) api->release(m->consts[i]);
    if (m->arena) api->release(m->arena);
    ts_mem_free(m->last_use);
    ts_plan_free(m->plan);
    ts_mem_free(m->kern);
    ts_mem_free(m->kern_of);
    ts_mem_free(m->consts);
    pthread_mutex_destroy(&m->lock);
    ts_mem_free(m);
}

/* The program's source: the kernels of p's steps. */
static ts_status source(const ts_devapi *api, const ts_plan *p, ts_buf *out, ts_err *err)
{
    ts_lkernel **ks = ts_mem_alloc(sizeof *ks * (size_t)(p->n_steps + 1));
    if (!ks) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    int n = 0;
    for (int i = 0; i < p->n_steps; i++)
        if (p->steps[i].kernel) ks[n++] = p->steps[i].kernel;
    ts_status s = api->emit(out, n, ks, err);
    ts_mem_free(ks);
    return s;
}

static ts_status build(ts_module *m, ts_err *err)
{
    const ts_plan *p = m->plan;
    const char **names = ts_mem_alloc(sizeof *names * (size_t)(p->n_steps + 1));
    if (!names) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (int i = 0; i < p->n_steps; i++) {
        m->kern_of[i] = p->steps[i].kernel ? m->n_kern : -1;
        if (p->steps[i].kernel) names[m->n_kern++] = p->steps[i].kernel->name;
    }
    ts_buf src = {0};
    ts_status s = source(m->api, p, &src, err);
    if (s == TS_OK) s = m->api->build(src.data ? src.data : "", m->n_kern, names, &m->prog, m->kern, err);
    ts_buf_free(&src);
    ts_mem_free(names);
    return s;
}

/* The last step reading each value: a kernel's operand, a fallback node's. */
static ts_status last_uses(ts_module *m, ts_err *err)
{
    const ts_plan *p = m->plan;
    if (!(m->last_use = ts_mem_alloc(sizeof *m->last_use * (size_t)(m->g->next_value_id + 1))))
        return ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (uint32_t i = 0; i <= m->g->next_value_id; i++) m->last_use[i] = -1;
    for (int i = 0; i < p->n_steps; i++) {
        const ts_lkernel *k = p->steps[i].kernel;
        const ts_node *n = p->steps[i].group->root;
        if (k)
            for (int j = 0; j < k->n_bufs; j++) m->last_use[k->bufs[j].v->id] = i;
        else
            for (int j = 0; j < n->n_in; j++) m->last_use[n->in[j]->id] = i;
    }
    return TS_OK;
}

/* A control step's regions, each a module whose graph views the region
 * as its body (regions see only their parameters, D6). */
static ts_status compile_regions(ts_module *m, int i, ts_err *err)
{
    const ts_node *n = m->plan->steps[i].group->root;
    if (!(m->regions[i] = ts_mem_zalloc(sizeof **m->regions * (size_t)n->n_regions)) ||
        !(m->region_graphs[i] = ts_mem_zalloc(sizeof **m->region_graphs * (size_t)n->n_regions)))
        return ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (int r = 0; r < n->n_regions; r++) {
        ts_graph *rg = &m->region_graphs[i][r];
        *rg = *m->g;
        rg->body = n->regions[r];
        rg->n_pins = 0;
        rg->pins = NULL;
        TS_TRY(ts_dev_compile(m->api, rg, &m->regions[i][r], err));
    }
    return TS_OK;
}

ts_status ts_dev_compile(const ts_devapi *api, const ts_graph *g, ts_module **out, ts_err *err)
{
    double t0 = ts_now_ms();
    ts_module *m = ts_mem_zalloc(sizeof *m);
    if (!m) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    pthread_mutex_init(&m->lock, NULL);
    m->api = api;
    m->g = g;
    m->collectives = ts_interp_has_collectives(g);
    ts_status s = ts_plan_new_loops(g, api->compiles, &m->plan, err);
    if (s == TS_OK) {
        size_t ns = (size_t)(m->plan->n_steps + 1);
        m->kern = ts_mem_zalloc(sizeof *m->kern * ns);
        m->kern_of = ts_mem_zalloc(sizeof *m->kern_of * ns);
        m->consts = ts_mem_zalloc(sizeof *m->consts * (size_t)(g->next_value_id + 1));
        m->regions = ts_mem_zalloc(sizeof *m->regions * ns);
        m->region_graphs = ts_mem_zalloc(sizeof *m->region_graphs * ns);
        if (!m->kern || !m->kern_of || !m->consts || !m->regions || !m->region_graphs)
            s = ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    if (s == TS_OK) s = build(m, err);
    if (s == TS_OK) s = last_uses(m, err);
    for (int i = 0; s == TS_OK && i < m->plan->n_steps; i++)
        if (m->plan->steps[i].group->kind == TS_G_CONTROL) s = compile_regions(m, i, err);
    if (s != TS_OK) {
        ts_dev_free(m);
        return s;
    }
    m->compile_ms = ts_now_ms() - t0;
    *out = m;
    return TS_OK;
}

/* ---- a run --------------------------------------------------------------------------- */

/* Where a value is: a device buffer at an element offset, a host tensor,
 * or both. */
typedef struct dval {
    void *mem;
    int64_t off;
    bool own;         /* mem is this run's to release */
    ts_tensor *host;  /* a reference */
} dval;

typedef struct run {
    ts_module *m;
    const ts_devapi *api;
    ts_interp_run *ir;
    dval *v;          /* by value id */
    int64_t *at;      /* by value id: its byte offset in the module's arena, or -1 */
    ts_err *err;
    int64_t dev_bytes;
} run;

static bool shape_of(const run *r, const ts_value *v, int64_t *shape)
{
    const ts_symbind *b = ts_interp_run_binds(r->ir);
    for (int i = 0; i < v->type.rank; i++)
        if (!ts_dim_is_bound(v->type.dims[i], b) || ts_dim_eval(v->type.dims[i], b, &shape[i], NULL) != TS_OK)
            return false;
    return true;
}

static ts_status value_bytes(const run *r, const ts_value *v, int64_t *shape, size_t *bytes)
{
    int64_t numel = 0;
    if (!shape_of(r, v, shape) || ts_shape_numel(v->type.rank, shape, &numel, NULL) != TS_OK)
        return ts_err_set(r->err, TS_ERR_INTERNAL, "%s: a value's size is unknown when it is needed", r->api->name);
    *bytes = (size_t)numel * ts_dtype_size(v->type.dtype);
    return TS_OK;
}

static ts_status new_buffer(run *r, size_t bytes, const void *host, void **out)
{
    TS_TRY(r->api->alloc(bytes, host, out, r->err));
    r->dev_bytes += (int64_t)bytes;
    return TS_OK;
}

static ts_status not_computed(run *r, const ts_value *v)
{
    return ts_err_set(r->err, TS_ERR_INTERNAL, "%s: value %%%s%.0u (of %s) was used before it was computed",
                      r->api->name, v->name ? v->name : "", v->name ? 0u : (unsigned)v->id,
                      v->def ? ts_op_get(v->def->op)->name : "input");
}

/* v on the device: uploaded from its host tensor if it is not there (a
 * constant once per module). */
static ts_status on_device(run *r, const ts_value *v)
{
    dval *d = &r->v[v->id];
    if (d->mem) return TS_OK;
    const bool is_const = v->def && v->def->op == TS_OP_CONST;
    if (is_const && r->m->consts[v->id]) {
        d->mem = r->m->consts[v->id], d->off = 0;
        return TS_OK;
    }
    if (!d->host) return not_computed(r, v);
    TS_TRY(new_buffer(r, d->host->nbytes, d->host->data, &d->mem));
    d->off = 0;
    if (is_const) r->m->consts[v->id] = d->mem;   /* the module's from now on */
    else d->own = true;
    return TS_OK;
}

/* v on the host: read back if it is not there. */
static ts_status on_host(run *r, const ts_value *v)
{
    dval *d = &r->v[v->id];
    if (d->host) return TS_OK;
    if (!d->mem) return not_computed(r, v);
    int64_t shape[TS_MAX_RANK];
    size_t bytes = 0;
    TS_TRY(value_bytes(r, v, shape, &bytes));
    TS_TRY(ts_tensor_new(v->type.dtype, v->type.rank, shape, &d->host, r->err));
    if (!bytes) return TS_OK;
    return r->api->download(d->host->data, d->mem, (size_t)d->off * ts_dtype_size(v->type.dtype), bytes, r->err);
}

static bool is_result(const ts_graph *g, const ts_value *v)
{
    for (int i = 0; i < g->body->n_results; i++)
        if (g->body->results[i] == v) return true;
    return false;
}

/* The static memory plan (runtime/plan.h) over the run's sizes: every
 * kernel output but the graph's results, and the concats their parts are
 * written into, from the step that first writes them to the last that
 * reads them, in one device buffer the module keeps. */
static ts_status plan_arena(run *r)
{
    ts_module *m = r->m;
    const ts_plan *p = m->plan;
    const ts_fusion *f = p->fusion;
    int n = 0, cap = 1;
    for (int i = 0; i < p->n_steps; i++) cap += p->steps[i].group->n_out;
    ts_plan_buf *bufs = ts_mem_alloc(sizeof *bufs * (size_t)cap);
    const ts_value **who = ts_mem_alloc(sizeof *who * (size_t)cap);
    int64_t *offs = ts_mem_alloc(sizeof *offs * (size_t)cap), total = 0;
    ts_status s = bufs && who && offs ? TS_OK : ts_err_set(r->err, TS_ERR_OOM, "out of memory");
    for (int i = 0; s == TS_OK && i < p->n_steps; i++)
        for (int k = 0; p->steps[i].kernel && k < p->steps[i].group->n_out; k++) {
            const ts_value *v = p->steps[i].group->out[k];
            if (f->into[v->id]) v = f->into[v->id];   /* its concat, from its first part on */
            int64_t shape[TS_MAX_RANK];
            size_t bytes = 0;
            /* a concat is asked for once (-2: asked, until its offset is known) */
            if (r->at[v->id] != -1 || is_result(m->g, v) || !shape_of(r, v, shape)) continue;
            if ((s = value_bytes(r, v, shape, &bytes)) != TS_OK) break;
            if (!bytes) continue;   /* an empty value: a buffer of its own */
            int last = m->last_use[v->id] < i ? i : m->last_use[v->id];
            bufs[n] = (ts_plan_buf){.size = (int64_t)bytes, .first = i, .last = last, .reuse = -1};
            who[n++] = v;
            r->at[v->id] = -2;
        }
    if (s == TS_OK) s = ts_plan_assign(n, bufs, offs, &total, r->err);
    if (s == TS_OK && (size_t)total > m->arena_cap) {
        if (m->arena) r->api->release(m->arena);
        m->arena = NULL, m->arena_cap = 0;
        s = r->api->alloc((size_t)total, NULL, &m->arena, r->err);
        if (s == TS_OK) m->arena_cap = (size_t)total;
    }
    for (int i = 0; s == TS_OK && i < n; i++) r->at[who[i]->id] = offs[i];
    r->dev_bytes += total;
    ts_mem_free(bufs);
    ts_mem_free(who);
    ts_mem_free(offs);
    return s;
}

/* Value v in the arena, if the plan placed it there. */
static bool in_arena(run *r, const ts_value *v)
{
    dval *d = &r->v[v->id];
    if (r->at[v->id] < 0) return false;
    d->mem = r->m->arena;
    d->off = r->at[v->id] / (int64_t)ts_dtype_size(v->type.dtype);
    return true;
}

/* A buffer for kernel output v: in the arena, or its own; a part of a
 * concat written in place, its concat's at the part's offset (D114). */
static ts_status output_buffer(run *r, const ts_value *v)
{
    dval *d = &r->v[v->id];
    if (d->mem || in_arena(r, v)) return TS_OK;
    const ts_fusion *f = r->m->plan->fusion;
    const ts_value *c = f->into[v->id];
    int64_t shape[TS_MAX_RANK];
    size_t bytes = 0;
    if (c) {
        dval *dc = &r->v[c->id];
        if (!dc->mem && !in_arena(r, c)) {
            TS_TRY(value_bytes(r, c, shape, &bytes));
            TS_TRY(new_buffer(r, bytes, NULL, &dc->mem));
            dc->own = true;
        }
        d->mem = dc->mem, d->off = dc->off + f->into_off[v->id];
        return TS_OK;
    }
    TS_TRY(value_bytes(r, v, shape, &bytes));
    TS_TRY(new_buffer(r, bytes, NULL, &d->mem));
    d->own = true, d->off = 0;
    return TS_OK;
}

/* The index buffers kernel k reads through, checked on the host before it
 * runs (D113). */
static ts_status check_indices(run *r, const ts_lkernel *k)
{
    const ts_symbind *b = ts_interp_run_binds(r->ir);
    for (int j = 0; j < k->n_checks; j++) {
        const ts_lcheck *c = &k->checks[j];
        int64_t bound = 0;
        if (c->bound->k == TS_LX_DIM) TS_TRY(ts_dim_eval(k->dims[c->bound->var], b, &bound, r->err));
        else bound = c->bound->ci;
        const ts_value *iv = k->bufs[c->buf].v;
        TS_TRY(on_host(r, iv));
        ts_status s = ts_interp_check_indices(ts_op_get(c->node->op)->name, r->v[iv->id].host, bound, r->err);
        if (s != TS_OK) {
            ts_buf lb = {0};
            ts_ir_node_label(&lb, c->node);
            ts_err_prefix(r->err, "%s: ", lb.data ? lb.data : "node");
            ts_buf_free(&lb);
            return s;
        }
    }
    return TS_OK;
}

static ts_status kernel_step(run *r, int i)
{
    const ts_lkernel *k = r->m->plan->steps[i].kernel;
    const ts_symbind *b = ts_interp_run_binds(r->ir);
    if (k->n_bufs > 256 || k->n_dims > 256) return ts_err_set(r->err, TS_ERR_UNSUPPORTED, "over 256 operands");
    void *mems[256];
    int64_t offs[256], dims[256], work = 1;
    for (int j = 0; j < k->n_bufs; j++) {
        const ts_value *v = k->bufs[j].v;
        TS_TRY(k->bufs[j].written ? output_buffer(r, v) : on_device(r, v));
        int64_t shape[TS_MAX_RANK], numel = 1;
        if (k->bufs[j].written && shape_of(r, v, shape) && ts_shape_numel(v->type.rank, shape, &numel, NULL) == TS_OK &&
            numel > work)
            work = numel;
        mems[j] = r->v[v->id].mem, offs[j] = r->v[v->id].off;
    }
    for (int j = 0; j < k->n_dims; j++) TS_TRY(ts_dim_eval(k->dims[j], b, &dims[j], r->err));
    TS_TRY(check_indices(r, k));
    return r->api->launch(r->m->kern[r->m->kern_of[i]], k->n_bufs, mems, offs, k->n_dims, dims, work, r->err);
}

/* A value crossing into or out of a region's run: where it is (a host
 * reference held by the port; the device buffer owned when own) and its
 * shape. */
typedef struct port {
    dval d;
    ts_dtype dt;
    int rank;
    int64_t shape[TS_MAX_RANK];
} port;

static void port_release(const ts_devapi *api, port *p)
{
    if (p->d.own) api->release(p->d.mem);
    ts_tensor_release(p->d.host);
    p->d = (dval){0};
}

static ts_status run_graph(ts_module *m, int n_in, const port *in, int n_out, port *out, bool host_results,
                           int64_t *peak, ts_err *err);

/* Port p owning what it holds: a device buffer it does not own becomes a
 * copy (it may be a parameter of the region, a constant, a place in an
 * arena that later kernels reuse); a host tensor stays as it is. */
static ts_status port_own(run *r, port *p)
{
    if (!p->d.mem || p->d.own) return TS_OK;
    if (p->d.host) {
        p->d.mem = NULL;
        return TS_OK;
    }
    int64_t numel = 0;
    TS_TRY(ts_shape_numel(p->rank, p->shape, &numel, r->err));
    size_t bytes = (size_t)numel * ts_dtype_size(p->dt);
    void *mem = NULL;
    TS_TRY(new_buffer(r, bytes, NULL, &mem));
    ts_status s = bytes ? r->api->copy(mem, 0, p->d.mem, (size_t)p->d.off * ts_dtype_size(p->dt), bytes, r->err) : TS_OK;
    if (s != TS_OK) return r->api->release(mem), s;
    p->d = (dval){.mem = mem, .own = true};
    return TS_OK;
}

/* An if or a while: its regions' modules, run on the values where they
 * are: the carried values stay on the device from round to round (the
 * body's results become the next round's operands); a condition is read
 * on the host. out[j]: the node's results, owning what they hold. */
static ts_status control(run *r, ts_module *const *regions, const ts_node *n, port *out)
{
    const int ns = n->n_in;
    port *state = ts_mem_zalloc(sizeof *state * 2 * (size_t)(ns ? ns : 1)), *next = state + ns;
    if (!state) return ts_err_set(r->err, TS_ERR_OOM, "out of memory");
    ts_status s = TS_OK;
    for (int i = 0; s == TS_OK && i < ns; i++) {   /* the operands, borrowed */
        const ts_value *v = n->in[i];
        state[i] = (port){.d = r->v[v->id], .dt = v->type.dtype, .rank = v->type.rank};
        state[i].d.own = false;
        ts_tensor_retain(state[i].d.host);
        if (!state[i].d.mem && !state[i].d.host) s = not_computed(r, v);
        else if (!shape_of(r, v, state[i].shape)) s = ts_err_set(r->err, TS_ERR_INTERNAL, "a size is unknown");
    }
    if (s == TS_OK && n->op == TS_OP_IF) {
        s = on_host(r, n->in[0]);
        const bool then = s == TS_OK && ((const uint8_t *)r->v[n->in[0]->id].host->data)[0];
        if (s == TS_OK) s = run_graph(regions[then ? 0 : 1], ns - 1, state + 1, n->n_out, out, false, NULL, r->err);
    } else if (s == TS_OK) {
        for (;;) {
            port c = {0};
            if ((s = run_graph(regions[0], ns, state, 1, &c, true, NULL, r->err)) != TS_OK) break;
            const bool go = ((const uint8_t *)c.d.host->data)[0] != 0;
            port_release(r->api, &c);
            if (!go || (s = run_graph(regions[1], ns, state, ns, next, false, NULL, r->err)) != TS_OK) break;
            for (int i = 0; i < ns; i++) {
                port_release(r->api, &state[i]);
                state[i] = next[i], next[i] = (port){0};
            }
        }
        for (int i = 0; s == TS_OK && i < ns; i++) s = port_own(r, &state[i]);   /* no round ran: the operands */
        for (int i = 0; s == TS_OK && i < ns; i++) out[i] = state[i], state[i] = (port){0};
    }
    for (int i = 0; i < ns; i++) port_release(r->api, &state[i]);
    ts_mem_free(state);
    return s;
}

/* A node the dialect does not generate: the interpreter's kernel on host
 * copies; a control node: its regions' modules. */
static ts_status fallback_step(run *r, int i)
{
    const ts_node *n = r->m->plan->steps[i].group->root;
    if (n->n_in > 256 || n->n_out > 256) return ts_err_set(r->err, TS_ERR_UNSUPPORTED, "over 256 operands");
    if (r->m->regions[i]) {
        port out[256];
        memset(out, 0, sizeof(port) * (size_t)n->n_out);
        ts_status s = control(r, r->m->regions[i], n, out);
        for (int j = 0; j < n->n_out; j++) {
            if (s == TS_OK) r->v[n->out[j]->id] = out[j].d;
            else port_release(r->api, &out[j]);
        }
        return s;
    }
    ts_tensor *in[256], *out[256];
    for (int j = 0; j < n->n_in; j++) {
        TS_TRY(on_host(r, n->in[j]));
        in[j] = r->v[n->in[j]->id].host;
    }
    TS_TRY(ts_interp_run_node(r->ir, n, in, out));
    for (int j = 0; j < n->n_out; j++) {   /* (a constant's own tensor was there: replaced) */
        ts_tensor_release(r->v[n->out[j]->id].host);
        r->v[n->out[j]->id].host = out[j];
    }
    return TS_OK;
}

/* Result v of run r into port p: on the host (host_results), or where it
 * is, owning it (a buffer of the run's own is handed over, anything else
 * copied: port_own). */
static ts_status take_result(run *r, const ts_value *v, bool host_results, port *p)
{
    dval *d = &r->v[v->id];
    *p = (port){.dt = v->type.dtype, .rank = v->type.rank};
    if (!shape_of(r, v, p->shape)) return ts_err_set(r->err, TS_ERR_INTERNAL, "a result's size is unknown");
    if (host_results) TS_TRY(on_host(r, v));
    if (!d->mem && !d->host) return not_computed(r, v);
    ts_tensor_retain(p->d.host = d->host);
    if (host_results || !d->mem) return TS_OK;
    p->d.mem = d->mem, p->d.off = d->off;
    if (d->own && !r->m->plan->fusion->into[v->id]) {   /* its own buffer: handed over */
        p->d.own = true;
        d->own = false;
        return TS_OK;
    }
    return port_own(r, p);
}

/* One run of m on in[] (where they are; borrowed), its results into
 * out[] (owned): on the host, or host_results false, where they are. */
static ts_status run_graph(ts_module *m, int n_in, const port *in, int n_out, port *out, bool host_results,
                           int64_t *peak, ts_err *err)
{
    const ts_graph *g = m->g;
    if (n_out != g->body->n_results)
        return ts_err_set(err, TS_ERR_INVALID_ARG, "the graph has %d outputs, asked for %d", g->body->n_results, n_out);
    if (n_in > 256) return ts_err_set(err, TS_ERR_UNSUPPORTED, "over 256 inputs");
    /* the inputs' shapes bind the graph's dims: a value on the device only
     * lends its shape through a tensor without data */
    ts_tensor shapes[256], *bind[256];
    for (int i = 0; i < n_in; i++) {
        bind[i] = in[i].d.host;
        if (bind[i]) continue;
        shapes[i] = (ts_tensor){.refs = 1, .dtype = in[i].dt, .rank = in[i].rank};
        memcpy(shapes[i].shape, in[i].shape, sizeof(int64_t) * (size_t)in[i].rank);
        bind[i] = &shapes[i];
    }
    pthread_mutex_lock(&m->lock);
    run r = {.m = m, .api = m->api, .err = err};
    ts_status s = ts_interp_run_new_known(g, m->collectives, n_in, bind, err, &r.ir);
    size_t nv = g->next_value_id ? g->next_value_id : 1;
    if (s == TS_OK && (!(r.v = ts_mem_zalloc(sizeof *r.v * nv)) || !(r.at = ts_mem_alloc(sizeof *r.at * nv))))
        s = ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (size_t i = 0; s == TS_OK && i < nv; i++) r.at[i] = -1;
    if (s == TS_OK) s = plan_arena(&r);
    for (int i = 0; s == TS_OK && i < n_in; i++) {   /* borrowed: never released by this run */
        dval *d = &r.v[g->body->params[i]->id];
        *d = (dval){.mem = in[i].d.mem, .off = in[i].d.off};
        ts_tensor_retain(d->host = in[i].d.host);
    }
    for (const ts_node *nd = g->body->first; s == TS_OK && nd; nd = nd->next)
        if (nd->op == TS_OP_CONST) ts_tensor_retain(r.v[nd->out[0]->id].host = nd->attrs[0].t);
    for (int i = 0; s == TS_OK && i < m->plan->n_steps; i++)
        s = m->plan->steps[i].kernel ? kernel_step(&r, i) : fallback_step(&r, i);
    for (int k = 0; k < n_out; k++) out[k] = (port){0};
    for (int k = 0; s == TS_OK && k < n_out; k++) s = take_result(&r, g->body->results[k], host_results, &out[k]);
    m->api->finish();
    for (size_t i = 0; r.v && i < nv; i++) {
        if (r.v[i].own) m->api->release(r.v[i].mem);
        ts_tensor_release(r.v[i].host);
    }
    if (peak) *peak = r.dev_bytes;
    ts_mem_free(r.v);
    ts_mem_free(r.at);
    ts_interp_run_free(r.ir);
    pthread_mutex_unlock(&m->lock);
    if (s != TS_OK)
        for (int k = 0; k < n_out; k++) port_release(m->api, &out[k]);
    return s;
}

ts_status ts_dev_run(ts_module *m, int n_in, ts_tensor *const *in, int n_out, ts_tensor **out, int64_t *peak,
                     ts_err *err)
{
    for (int k = 0; k < n_out; k++) out[k] = NULL;
    if (n_in > 256 || n_out > 256) return ts_err_set(err, TS_ERR_UNSUPPORTED, "over 256 inputs or outputs");
    port pin[256], pout[256];
    for (int i = 0; i < n_in; i++) {
        if (!in[i]) return ts_err_set(err, TS_ERR_INVALID_ARG, "input %d is NULL", i);
        pin[i] = (port){.d = {.host = in[i]}, .dt = in[i]->dtype, .rank = in[i]->rank};
    }
    TS_TRY(run_graph(m, n_in, pin, n_out, pout, true, peak, err));
    for (int k = 0; k < n_out; k++) out[k] = pout[k].d.host;   /* the ports' references */
    return TS_OK;
}

/* ---- the optional slots -------------------------------------------------------------- */

/* What the regions hold counts as the module's. */
void ts_dev_stats(const ts_module *m, ts_module_stats *out)
{
    *out = (ts_module_stats){m->compile_ms, -1, m->plan->n_kernels, m->plan->n_fallback};
    for (int i = 0; i < m->plan->n_steps; i++)
        for (int r = 0; m->regions[i] && r < m->plan->steps[i].group->root->n_regions; r++) {
            ts_module_stats s;
            ts_dev_stats(m->regions[i][r], &s);
            out->kernels += s.kernels, out->fallbacks += s.fallbacks;
        }
}

ts_status ts_dev_describe(const ts_devapi *api, const char *lang, const ts_graph *g, const char *what, char **text,
                          ts_err *err)
{
    bool src = strcmp(what, lang) == 0 || strcmp(what, "c") == 0;
    if (!src && strcmp(what, "loops") != 0)
        return ts_err_set(err, TS_ERR_UNSUPPORTED, "the %s target describes \"%s\" or \"loops\", not \"%s\"", api->name,
                          lang, what);
    ts_plan *p = NULL;
    TS_TRY(ts_plan_new_loops(g, api->compiles, &p, err));
    ts_status s;
    if (src) {
        ts_buf b = {0};
        s = source(api, p, &b, err);
        if (s == TS_OK && !(*text = ts_mem_alloc(b.len + 1))) s = ts_err_set(err, TS_ERR_OOM, "out of memory");
        if (s == TS_OK) memcpy(*text, b.data ? b.data : "", b.len), (*text)[b.len] = 0;
        ts_buf_free(&b);
    } else {
        s = ts_plan_text(p, text, err);
    }
    ts_plan_free(p);
    return s;
}
