/* backend_opencl.c — the OpenCL target: device, program, memory, launch.
 *
 * compile plans the graph with the OpenCL dialect's answer to fusion
 * (ts_emit_cl_compiles), emits one program of all its kernels
 * (codegen/opencl) and builds it on the process's device: the first
 * OpenCL platform's first device, found once (PoCL in CI; the driver
 * caches built programs). A run binds the inputs' sizes (the
 * interpreter's run state), then walks the steps in order on one in-order
 * queue: a kernel gets a device buffer and an element offset per operand
 * (its outputs in one arena placed by the static memory plan and kept by
 * the module; a part of a concat written in place at its concat's
 * place plus the part's offset) and its dims as scalars, and runs as min(work / 256,
 * 1024) work-items, each its share of the parallel loop. A value lives on
 * the device, on the host, or both: inputs and constants are uploaded the
 * first time a kernel reads them (constants once per module), kernel
 * results are read back only when a fallback node (run by the
 * interpreter's kernels: contractions and sort for now, control flow,
 * f16) or the caller needs them. Runs of one module are serialised: its
 * kernels' arguments are set per launch.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "backend/backend.h"
#include "codegen/opencl/emit_cl.h"
#include "interp/interp.h"
#include "lower/plan.h"
#include "runtime/plan.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- the device ---------------------------------------------------------------------- */

static struct {
    pthread_once_t once;
    cl_int code;              /* CL_SUCCESS, or why there is no device */
    const char *step;         /* the call that failed */
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    char name[128];
} dev = {PTHREAD_ONCE_INIT, 0, NULL, NULL, NULL, NULL, {0}};

static void dev_init(void)
{
    cl_platform_id plat;
    cl_uint n = 0;
    dev.step = "clGetPlatformIDs";
    if ((dev.code = clGetPlatformIDs(1, &plat, &n)) != CL_SUCCESS) return;
    if (!n) {
        dev.code = CL_DEVICE_NOT_FOUND;
        return;
    }
    dev.step = "clGetDeviceIDs";
    if ((dev.code = clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev.dev, NULL)) != CL_SUCCESS) return;
    clGetDeviceInfo(dev.dev, CL_DEVICE_NAME, sizeof dev.name - 1, dev.name, NULL);
    dev.step = "clCreateContext";
    dev.ctx = clCreateContext(NULL, 1, &dev.dev, NULL, NULL, &dev.code);
    if (dev.code != CL_SUCCESS) return;
    dev.step = "clCreateCommandQueue";
    dev.q = clCreateCommandQueue(dev.ctx, dev.dev, 0, &dev.code);
}

static ts_status cl_fail(ts_err *err, const char *call, cl_int code)
{
    return ts_err_set(err, TS_ERR_RUNTIME, "opencl: %s failed (error %d)", call, (int)code);
}

static ts_status device(ts_err *err)
{
    pthread_once(&dev.once, dev_init);
    if (dev.code == CL_SUCCESS) return TS_OK;
    return ts_err_set(err, TS_ERR_TOOLCHAIN,
                      "opencl: no usable OpenCL device (%s: error %d); install an OpenCL driver, e.g. Debian's "
                      "pocl-opencl-icd",
                      dev.step, (int)dev.code);
}

/* ---- the module ---------------------------------------------------------------------- */

struct ts_module {
    const ts_graph *g;
    ts_plan *plan;
    cl_program prog;
    cl_kernel *kern;          /* by step; NULL for fallback steps */
    cl_mem *consts;           /* by value id: a constant uploaded once, or NULL */
    int *last_use;            /* by value id: the last step reading it (-1: none) */
    cl_mem arena;             /* the runs' intermediate values (kept between runs) */
    size_t arena_cap;
    bool collectives;
    pthread_mutex_t lock;     /* one run at a time */
    double compile_ms;
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void module_free(ts_module *m)
{
    if (!m) return;
    for (int i = 0; m->kern && m->plan && i < m->plan->n_steps; i++)
        if (m->kern[i]) clReleaseKernel(m->kern[i]);
    for (uint32_t i = 0; m->consts && i < m->g->next_value_id; i++)
        if (m->consts[i]) clReleaseMemObject(m->consts[i]);
    if (m->prog) clReleaseProgram(m->prog);
    if (m->arena) clReleaseMemObject(m->arena);
    ts_mem_free(m->last_use);
    ts_plan_free(m->plan);
    ts_mem_free(m->kern);
    ts_mem_free(m->consts);
    pthread_mutex_destroy(&m->lock);
    ts_mem_free(m);
}

/* The program's source: the kernels of p's steps. */
static ts_status source(const ts_plan *p, ts_buf *out, ts_err *err)
{
    ts_lkernel **ks = ts_mem_alloc(sizeof *ks * (size_t)(p->n_steps + 1));
    if (!ks) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    int n = 0;
    for (int i = 0; i < p->n_steps; i++)
        if (p->steps[i].kernel) ks[n++] = p->steps[i].kernel;
    ts_status s = ts_emit_cl(out, n, ks, err);
    ts_mem_free(ks);
    return s;
}

static ts_status build(ts_module *m, ts_err *err)
{
    ts_buf src = {0};
    TS_TRY(source(m->plan, &src, err));
    const char *text = src.data ? src.data : "";
    cl_int e;
    m->prog = clCreateProgramWithSource(dev.ctx, 1, &text, NULL, &e);
    ts_status s = e == CL_SUCCESS ? TS_OK : cl_fail(err, "clCreateProgramWithSource", e);
    if (s == TS_OK && (e = clBuildProgram(m->prog, 1, &dev.dev, getenv("TS_CLFLAGS") ? getenv("TS_CLFLAGS") : "-cl-std=CL1.2", NULL, NULL)) != CL_SUCCESS) {
        char log[2048] = {0};
        clGetProgramBuildInfo(m->prog, dev.dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        s = ts_err_set(err, TS_ERR_INTERNAL, "opencl: the generated program does not build (error %d): %.1500s", (int)e,
                       log);
    }
    for (int i = 0; s == TS_OK && i < m->plan->n_steps; i++) {
        const ts_lkernel *k = m->plan->steps[i].kernel;
        if (!k) continue;
        m->kern[i] = clCreateKernel(m->prog, k->name, &e);
        if (e != CL_SUCCESS) s = cl_fail(err, "clCreateKernel", e);
    }
    ts_buf_free(&src);
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

static ts_status compile(const ts_graph *g, const ts_session_opts *o, ts_module **out, ts_err *err)
{
    (void)o;
    TS_TRY(device(err));
    double t0 = now_ms();
    ts_module *m = ts_mem_zalloc(sizeof *m);
    if (!m) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    pthread_mutex_init(&m->lock, NULL);
    m->g = g;
    m->collectives = ts_interp_has_collectives(g);
    ts_status s = ts_plan_new(g, ts_emit_cl_compiles, &m->plan, err);
    if (s == TS_OK) {
        m->kern = ts_mem_zalloc(sizeof *m->kern * (size_t)(m->plan->n_steps + 1));
        m->consts = ts_mem_zalloc(sizeof *m->consts * (size_t)(g->next_value_id + 1));
        if (!m->kern || !m->consts) s = ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    if (s == TS_OK) s = build(m, err);
    if (s == TS_OK) s = last_uses(m, err);
    if (s != TS_OK) {
        module_free(m);
        return s;
    }
    m->compile_ms = now_ms() - t0;
    *out = m;
    return TS_OK;
}

/* ---- a run --------------------------------------------------------------------------- */

/* Where a value is: a device buffer at an element offset, a host tensor,
 * or both. */
typedef struct dval {
    cl_mem mem;
    int64_t off;
    bool own;         /* mem is this run's to release */
    ts_tensor *host;  /* a reference */
} dval;

typedef struct run {
    ts_module *m;
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
        return ts_err_set(r->err, TS_ERR_INTERNAL, "opencl: a value's size is unknown when it is needed");
    *bytes = (size_t)numel * ts_dtype_size(v->type.dtype);
    return TS_OK;
}

static ts_status new_buffer(run *r, size_t bytes, void *host, cl_mem *out)
{
    cl_int e;
    /* a zero-byte buffer is invalid in OpenCL: empty values get one byte */
    *out = clCreateBuffer(dev.ctx, CL_MEM_READ_WRITE | (host && bytes ? CL_MEM_COPY_HOST_PTR : 0), bytes ? bytes : 1,
                          bytes ? host : NULL, &e);
    if (e != CL_SUCCESS) return cl_fail(r->err, "clCreateBuffer", e);
    r->dev_bytes += (int64_t)bytes;
    return TS_OK;
}

static ts_status not_computed(run *r, const ts_value *v)
{
    return ts_err_set(r->err, TS_ERR_INTERNAL, "opencl: value %%%s%.0u (of %s) was used before it was computed",
                      v->name ? v->name : "", v->name ? 0u : (unsigned)v->id, v->def ? ts_op_get(v->def->op)->name : "input");
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
    cl_int e = bytes ? clEnqueueReadBuffer(dev.q, d->mem, CL_TRUE, (size_t)d->off * ts_dtype_size(v->type.dtype), bytes,
                                           d->host->data, 0, NULL, NULL)
                     : CL_SUCCESS;
    return e == CL_SUCCESS ? TS_OK : cl_fail(r->err, "clEnqueueReadBuffer", e);
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
    const ts_module *m = r->m;
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
            if (!bytes) continue;   /* an empty value: a buffer of its own (OpenCL has none of 0 bytes) */
            int last = m->last_use[v->id] < i ? i : m->last_use[v->id];
            bufs[n] = (ts_plan_buf){.size = (int64_t)bytes, .first = i, .last = last, .reuse = -1};
            who[n++] = v;
            r->at[v->id] = -2;
        }
    if (s == TS_OK) s = ts_plan_assign(n, bufs, offs, &total, r->err);
    if (s == TS_OK && (size_t)total > r->m->arena_cap) {
        if (r->m->arena) clReleaseMemObject(r->m->arena);
        r->m->arena = NULL, r->m->arena_cap = 0;
        cl_int e;
        r->m->arena = clCreateBuffer(dev.ctx, CL_MEM_READ_WRITE, (size_t)total, NULL, &e);
        if (e != CL_SUCCESS) s = cl_fail(r->err, "clCreateBuffer", e);
        else r->m->arena_cap = (size_t)total;
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

static ts_status kernel_step(run *r, int i)
{
    const ts_lkernel *k = r->m->plan->steps[i].kernel;
    cl_kernel kern = r->m->kern[i];
    const ts_symbind *b = ts_interp_run_binds(r->ir);
    int64_t work = 1;
    for (int j = 0; j < k->n_bufs; j++) {
        const ts_value *v = k->bufs[j].v;
        TS_TRY(k->bufs[j].written ? output_buffer(r, v) : on_device(r, v));
        int64_t shape[TS_MAX_RANK], numel = 1;
        if (k->bufs[j].written && shape_of(r, v, shape) && ts_shape_numel(v->type.rank, shape, &numel, NULL) == TS_OK &&
            numel > work)
            work = numel;
        cl_long off = r->v[v->id].off;
        cl_int e = clSetKernelArg(kern, (cl_uint)(2 * j), sizeof(cl_mem), &r->v[v->id].mem);
        if (e == CL_SUCCESS) e = clSetKernelArg(kern, (cl_uint)(2 * j + 1), sizeof off, &off);
        if (e != CL_SUCCESS) return cl_fail(r->err, "clSetKernelArg", e);
    }
    for (int j = 0; j < k->n_dims; j++) {
        int64_t dv = 0;
        TS_TRY(ts_dim_eval(k->dims[j], b, &dv, r->err));
        cl_long d = dv;
        cl_int e = clSetKernelArg(kern, (cl_uint)(2 * k->n_bufs + j), sizeof d, &d);
        if (e != CL_SUCCESS) return cl_fail(r->err, "clSetKernelArg", e);
    }
    /* the index buffers it reads through, checked before it runs (D113) */
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
    size_t g = (size_t)(work / 256 < 1 ? 1 : work / 256 > 1024 ? 1024 : work / 256);
    cl_int e = clEnqueueNDRangeKernel(dev.q, kern, 1, NULL, &g, NULL, 0, NULL, NULL);
    return e == CL_SUCCESS ? TS_OK : cl_fail(r->err, "clEnqueueNDRangeKernel", e);
}

/* A node the dialect does not generate (and control flow): the
 * interpreter's kernel on host copies. */
static ts_status fallback_step(run *r, int i)
{
    const ts_node *n = r->m->plan->steps[i].group->root;
    ts_tensor *in[256], *out[256];
    if (n->n_in > 256 || n->n_out > 256) return ts_err_set(r->err, TS_ERR_UNSUPPORTED, "over 256 operands");
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

static ts_status run_module(ts_module *m, int n_in, ts_tensor *const *in, int n_out, ts_tensor **out, int64_t *peak,
                            ts_err *err)
{
    const ts_graph *g = m->g;
    if (n_out != g->body->n_results)
        return ts_err_set(err, TS_ERR_INVALID_ARG, "the graph has %d outputs, asked for %d", g->body->n_results, n_out);
    for (int k = 0; k < n_out; k++) out[k] = NULL;
    pthread_mutex_lock(&m->lock);
    run r = {.m = m, .err = err};
    ts_status s = ts_interp_run_new_known(g, m->collectives, n_in, in, err, &r.ir);
    size_t nv = g->next_value_id ? g->next_value_id : 1;
    if (s == TS_OK && (!(r.v = ts_mem_zalloc(sizeof *r.v * nv)) || !(r.at = ts_mem_alloc(sizeof *r.at * nv))))
        s = ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (size_t i = 0; s == TS_OK && i < nv; i++) r.at[i] = -1;
    if (s == TS_OK) s = plan_arena(&r);
    for (int i = 0; s == TS_OK && i < n_in; i++) ts_tensor_retain(r.v[g->body->params[i]->id].host = in[i]);
    for (const ts_node *nd = g->body->first; s == TS_OK && nd; nd = nd->next)
        if (nd->op == TS_OP_CONST) ts_tensor_retain(r.v[nd->out[0]->id].host = nd->attrs[0].t);
    for (int i = 0; s == TS_OK && i < m->plan->n_steps; i++)
        s = m->plan->steps[i].kernel ? kernel_step(&r, i) : fallback_step(&r, i);
    for (int k = 0; s == TS_OK && k < n_out; k++) {
        const ts_value *v = g->body->results[k];
        s = on_host(&r, v);
        if (s == TS_OK) ts_tensor_retain(out[k] = r.v[v->id].host);
    }
    clFinish(dev.q);
    for (size_t i = 0; r.v && i < nv; i++) {
        if (r.v[i].own) clReleaseMemObject(r.v[i].mem);
        ts_tensor_release(r.v[i].host);
    }
    if (peak) *peak = r.dev_bytes;
    ts_mem_free(r.v);
    ts_mem_free(r.at);
    ts_interp_run_free(r.ir);
    pthread_mutex_unlock(&m->lock);
    if (s != TS_OK)
        for (int k = 0; k < n_out; k++) ts_tensor_release(out[k]), out[k] = NULL;
    return s;
}

/* ---- the optional slots -------------------------------------------------------------- */

static void stats(const ts_module *m, ts_module_stats *out)
{
    *out = (ts_module_stats){m->compile_ms, -1, m->plan->n_kernels, m->plan->n_fallback};
}

static ts_status describe(const ts_graph *g, const char *what, char **text, ts_err *err)
{
    bool cl = strcmp(what, "opencl") == 0 || strcmp(what, "c") == 0;
    if (!cl && strcmp(what, "loops") != 0)
        return ts_err_set(err, TS_ERR_UNSUPPORTED, "the opencl target describes \"opencl\" or \"loops\", not \"%s\"",
                          what);
    ts_plan *p = NULL;
    TS_TRY(ts_plan_new(g, ts_emit_cl_compiles, &p, err));
    ts_status s;
    if (cl) {
        ts_buf b = {0};
        s = source(p, &b, err);
        if (s == TS_OK && !(*text = ts_mem_alloc(b.len + 1))) s = ts_err_set(err, TS_ERR_OOM, "out of memory");
        if (s == TS_OK) memcpy(*text, b.data ? b.data : "", b.len), (*text)[b.len] = 0;
        ts_buf_free(&b);
    } else {
        s = ts_plan_text(p, text, err);
    }
    ts_plan_free(p);
    return s;
}

static ts_status probe(const ts_session_opts *o, ts_err *err)
{
    (void)o;
    return device(err);
}

const ts_backend ts_backend_opencl = {
    .name = "opencl",
    .compile = compile,
    .run = run_module,
    .free = module_free,
    .compiles = ts_emit_cl_compiles,
    .stats = stats,
    .describe = describe,
    .probe = probe,
};
