/* run.c — running a compiled CPU program.
 *
 * The interpreter's run state checks the inputs and holds the symbol
 * bindings; kernels get their dims evaluated under it before each launch.
 * Values that kernels write live in one arena per run, placed by the
 * static memory plan (runtime/plan.c: lifetimes are step indices, sizes
 * are evaluated when the run starts, so a new input size needs a new plan,
 * not new code). Graph results get their own tensors (they are handed
 * out), and so does a value whose size depends on data produced during
 * the run (after a nonzero): its dims are unknown when the plan is made.
 * Fallback nodes run the interpreter's kernel on tensors that wrap the
 * arena; their results are the interpreter's own tensors.
 */
#include "backend/cpu/program.h"
#include "codegen/cpu/emit.h"

#include "interp/interp.h"
#include "runtime/plan.h"
#include "runtime/pool.h"
#include "runtime/trace.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

/* Elements per thread below which a kernel runs on fewer threads: waking
 * a thread costs microseconds, a kernel over 32K floats about as much. */
enum { GRAIN = 1 << 15 };

typedef struct run {
    const ts_cpu_program *p;
    ts_interp_run *ir;
    ts_tensor **vals;       /* by value id; NULL when not (yet) there */
    ts_err *err;
    uint8_t *arena;
    int64_t *offset;        /* by value id: arena offset, or -1 */
    int64_t *dyn_bytes;     /* by value id: bytes of a kernel output allocated outside the arena */
    int64_t arena_bytes, live_bytes, dyn_peak;
    ts_cpu_scratch *scratch; /* the arena and the template workspace (nth slices) */
    ts_cpu_scratch own;      /* used when the caller gives none */   /* peak: the arena plus the most dynamic bytes at once */
} run;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static bool is_result(const ts_graph *g, const ts_value *v)
{
    for (int i = 0; i < g->body->n_results; i++)
        if (g->body->results[i] == v) return true;
    return false;
}

/* The shape of v under the run's bindings; false if a dim is unbound. */
static bool shape_of(const run *r, const ts_value *v, int64_t *shape)
{
    const ts_symbind *b = ts_interp_run_binds(r->ir);
    for (int i = 0; i < v->type.rank; i++) {
        if (!ts_dim_is_bound(v->type.dims[i], b)) return false;
        if (ts_dim_eval(v->type.dims[i], b, &shape[i], NULL) != TS_OK) return false;
    }
    return true;
}

/* ---- the memory plan ------------------------------------------------------------------ */

/* The first step that writes a part of concat c, placed in place (D114). */
static int first_part_step(const ts_cpu_program *p, const ts_value *c)
{
    for (int i = 0; i < p->n_steps; i++)
        for (int k = 0; k < p->steps[i].group->n_out; k++)
            if (p->fusion->into[p->steps[i].group->out[k]->id] == c) return i;
    return p->n_steps;
}

/* A buffer for v in the plan, live from step `first` to its last use:
 * unless its size is not known yet, it is a graph result (its own
 * tensor) or a part of a concat written in place (D114). A step inside a
 * section (D139) stands for the whole section: its chains run side by
 * side, so what one writes or reads is live while any of them runs. */
static void plan_value(const run *r, const ts_value *v, int first, ts_plan_buf *bufs, const ts_value **who, int *n)
{
    const ts_cpu_program *p = r->p;
    int64_t shape[TS_MAX_RANK], numel;
    if (p->fusion->into[v->id] || is_result(p->g, v) || !shape_of(r, v, shape) || first >= p->n_steps) return;
    if (ts_shape_numel(v->type.rank, shape, &numel, NULL) != TS_OK) return;
    int last = p->last_use[v->id] < first ? first : p->last_use[v->id];
    if (p->section_of[first] >= 0) first = p->sections[p->section_of[first]].first;
    if (last < p->n_steps && p->section_of[last] >= 0) last = p->sections[p->section_of[last]].last;
    bufs[*n] = (ts_plan_buf){.size = numel * (int64_t)ts_dtype_size(v->type.dtype), .first = first, .last = last,
                             .reuse = -1};
    who[(*n)++] = v;
}

/* Field by field: the structs' padding bytes are not set. */
static bool same_requests(const ts_plan_buf *a, const ts_plan_buf *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i].size != b[i].size || a[i].first != b[i].first || a[i].last != b[i].last || a[i].reuse != b[i].reuse)
            return false;
    return true;
}

static ts_status make_plan(run *r)
{
    const ts_cpu_program *p = r->p;
    const ts_fusion *f = p->fusion;
    int n = 0, cap = f->n_placed + 1;
    for (int i = 0; i < p->n_steps; i++) cap += p->steps[i].group->n_out;
    ts_plan_buf *bufs = ts_mem_alloc(sizeof *bufs * (size_t)cap);
    const ts_value **who = ts_mem_alloc(sizeof *who * (size_t)cap);
    int64_t *offs = ts_mem_alloc(sizeof *offs * (size_t)cap);
    ts_status s = bufs && who && offs ? TS_OK : ts_err_set(r->err, TS_ERR_OOM, "out of memory");
    /* every output of a kernel step; a concat its parts' kernels write,
     * from the first of them on */
    for (int i = 0; s == TS_OK && i < p->n_steps; i++)
        for (int k = 0; p->steps[i].kernel && k < p->steps[i].group->n_out; k++)
            plan_value(r, p->steps[i].group->out[k], i, bufs, who, &n);
    for (int i = 0; s == TS_OK && i < f->n_placed; i++)
        plan_value(r, f->placed[i], first_part_step(p, f->placed[i]), bufs, who, &n);
    int64_t total = 0;
    ts_cpu_scratch *sc = r->scratch;
    if (s == TS_OK && sc->plan_bufs && sc->plan_n == n && same_requests(sc->plan_bufs, bufs, n)) {
        memcpy(offs, sc->plan_offs, sizeof *offs * (size_t)n);   /* the same requests: the same plan */
        total = sc->plan_total;
    } else if (s == TS_OK) {
        s = ts_plan_assign(n, bufs, offs, &total, r->err);
        ts_mem_free(sc->plan_bufs);
        ts_mem_free(sc->plan_offs);
        sc->plan_bufs = NULL, sc->plan_offs = NULL, sc->plan_n = 0;
        if (s == TS_OK && (sc->plan_bufs = ts_mem_alloc(sizeof *bufs * (size_t)(n ? n : 1))) &&
            (sc->plan_offs = ts_mem_alloc(sizeof *offs * (size_t)(n ? n : 1)))) {
            memcpy(sc->plan_bufs, bufs, sizeof *bufs * (size_t)n);
            memcpy(sc->plan_offs, offs, sizeof *offs * (size_t)n);
            sc->plan_n = n, sc->plan_total = total;
        } else {   /* not kept: the next run plans again */
            ts_mem_free(sc->plan_bufs);
            sc->plan_bufs = NULL;
        }
    }
    if (s == TS_OK && (size_t)total > sc->arena_cap) {
        ts_mem_free_aligned(sc->arena);
        sc->arena_cap = 0;
        if (!(sc->arena = ts_mem_alloc_huge((size_t)total)))
            s = ts_err_set(r->err, TS_ERR_OOM, "out of memory for a %lld-byte arena", (long long)total);
        else sc->arena_cap = (size_t)total;
    }
    r->arena = sc->arena;
    for (int i = 0; s == TS_OK && i < n; i++) r->offset[who[i]->id] = offs[i];
    r->arena_bytes = total;
    /* a placed concat is there from the start; its parts are views of it */
    for (int i = 0; s == TS_OK && i < f->n_placed; i++) {
        const ts_value *c = f->placed[i];
        int64_t shape[TS_MAX_RANK];
        if (r->offset[c->id] < 0 || !shape_of(r, c, shape))
            s = ts_err_set(r->err, TS_ERR_INTERNAL, "a concat written in place has no place in the arena");
        else s = ts_tensor_wrap(c->type.dtype, c->type.rank, shape, r->arena + r->offset[c->id], &r->vals[c->id], r->err);
    }
    ts_mem_free(bufs);
    ts_mem_free(who);
    ts_mem_free(offs);
    return s;
}

/* Graph result k's tensor of the last run, if its caller let it go and it
 * has this shape: writing it again spares faulting in fresh pages (a
 * large allocation is a fresh mmap every time). */
static ts_tensor *recycled(run *r, const ts_value *v, const int64_t *shape)
{
    const ts_block *body = r->p->g->body;
    ts_cpu_scratch *sc = r->scratch;
    for (int k = 0; k < body->n_results && k < sc->n_outs; k++) {
        ts_tensor *t = sc->outs[k];
        if (body->results[k] != v || !t || t->refs != 1 || t->dtype != v->type.dtype || t->rank != v->type.rank ||
            memcmp(t->shape, shape, sizeof *shape * (size_t)t->rank) != 0)
            continue;
        sc->outs[k] = NULL;   /* handed out again: the run's reference now */
        return t;
    }
    return NULL;
}

/* The tensor that kernel output v is written into. */
static ts_status output_tensor(run *r, const ts_value *v, ts_tensor **out)
{
    int64_t shape[TS_MAX_RANK];
    if (!shape_of(r, v, shape))
        return ts_err_set(r->err, TS_ERR_INTERNAL, "a kernel's output size is unknown when it runs");
    const ts_value *c = r->p->fusion->into[v->id];
    if (c)   /* its part of a concat written in place (D114) */
        return ts_tensor_wrap(v->type.dtype, v->type.rank, shape,
                              r->arena + r->offset[c->id] + r->p->fusion->into_off[v->id] * (int64_t)ts_dtype_size(v->type.dtype),
                              out, r->err);
    if (r->offset[v->id] >= 0)
        return ts_tensor_wrap(v->type.dtype, v->type.rank, shape, r->arena + r->offset[v->id], out, r->err);
    if ((*out = recycled(r, v, shape)) != NULL) return TS_OK;
    TS_TRY(ts_tensor_new(v->type.dtype, v->type.rank, shape, out, r->err));
    if (!is_result(r->p->g, v)) {
        r->dyn_bytes[v->id] = (int64_t)(*out)->nbytes;
        r->live_bytes += (int64_t)(*out)->nbytes;
        if (r->live_bytes > r->dyn_peak) r->dyn_peak = r->live_bytes;
    }
    return TS_OK;
}

/* ---- steps ----------------------------------------------------------------------------- */

typedef struct launch {
    ts_kernel_fn fn;
    void *const *bufs;
    const int64_t *D;
    uint8_t *ws;
    size_t ws_each;
} launch;

static void tramp(void *ctx, int ith, int nth)
{
    const launch *l = ctx;
    l->fn(l->bufs, l->D, ith, nth, l->ws ? l->ws + (size_t)ith * l->ws_each : NULL);
}

/* Per-thread workspace for a template: one block of nth slices, kept for
 * the run and grown when a kernel needs more. */
static ts_status workspace(run *r, size_t each, int nth, uint8_t **out)
{
    size_t need = each * (size_t)nth;
    ts_cpu_scratch *sc = r->scratch;
    if (need > sc->ws_cap) {
        ts_mem_free_aligned(sc->ws);
        sc->ws_cap = 0;
        if (!(sc->ws = ts_mem_alloc_huge(need)))
            return ts_err_set(r->err, TS_ERR_OOM, "out of memory for a %zu-byte workspace", need);
        sc->ws_cap = need;
    }
    *out = sc->ws;
    return TS_OK;
}

typedef struct pack_job {
    ts_kernel_pack_fn fn;
    void *const *bufs;
    const int64_t *D;
    float *dst;
} pack_job;

static void pack_tramp(void *ctx, int ith, int nth)
{
    const pack_job *j = ctx;
    j->fn(j->bufs, j->D, j->dst, ith, nth);
}

/* The packed copy of step st's constant B (D26): made by the first run
 * that gets here, on its pool, while any other run wanting it waits on the
 * lock; afterwards one atomic load. Its size never changes: B is a
 * constant, so its shape has no symbols. */
static ts_status packed_b(run *r, const ts_cpu_step *st, void *const *bufs, const int64_t *D, ts_pool *pool,
                          float **out)
{
    ts_cpu_packed *pk = st->packed;
    if ((*out = atomic_load_explicit(&pk->data, memory_order_acquire)) != NULL) return TS_OK;
    pthread_mutex_lock(&pk->lock);
    ts_status s = TS_OK;
    float *d = atomic_load_explicit(&pk->data, memory_order_relaxed);
    if (!d) {
        /* the kernel's threads: a conv's prepared form is timed for them */
        const int nth = pool ? ts_pool_size(pool) : 1;
        size_t bytes = st->pbsize_fn(bufs, D, nth);
        d = ts_mem_alloc_huge(bytes);
        if (!d) s = ts_err_set(r->err, TS_ERR_OOM, "out of memory packing a %zu-byte weight", bytes);
        if (d) {
            pack_job j = {st->pack_fn, bufs, D, d};
            if (nth > 1) ts_pool_run(pool, pack_tramp, &j, nth);
            else pack_tramp(&j, 0, 1);
            atomic_store_explicit(&pk->data, d, memory_order_release);
        }
    }
    pthread_mutex_unlock(&pk->lock);
    *out = d;
    return s;
}

/* Everything a launch of step st needs but its workspace: its buffers
 * (bufs: n_bufs + 1 entries, one for a packed constant B), its dims (D:
 * n_dims), its outputs allocated, its index operands checked; *work, its
 * largest output's size. */
static ts_status prepare(run *r, const ts_cpu_step *st, ts_pool *pool, void **bufs, int64_t *D, int64_t *work_out)
{
    const ts_lkernel *k = st->kernel;
    if (k->n_bufs > 256 || k->n_dims + st->n_params > TS_CPU_MAX_D)
        return ts_err_set(r->err, TS_ERR_UNSUPPORTED, "kernel %s: over 256 buffers or %d dims and parameters", k->name,
                          TS_CPU_MAX_D);
    const ts_symbind *b = ts_interp_run_binds(r->ir);
    for (int i = 0; i < k->n_dims; i++) TS_TRY(ts_dim_eval(k->dims[i], b, &D[i], r->err));
    ts_emit_c_params(k, D + k->n_dims);   /* the template's constant arguments (D186) */
    int64_t work = 1;
    for (int i = 0; i < k->n_bufs; i++) {
        const ts_value *v = k->bufs[i].v;
        if (k->bufs[i].written && !r->vals[v->id]) TS_TRY(output_tensor(r, v, &r->vals[v->id]));
        if (!r->vals[v->id]) return ts_err_set(r->err, TS_ERR_INTERNAL, "kernel %s: an operand was not computed", k->name);
        bufs[i] = (char *)r->vals[v->id]->data + k->bufs[i].off * (int64_t)ts_dtype_size(k->bufs[i].dt);
        /* the largest output measures the work (a row kernel also writes
         * per-row statistics: those are not its size); a reduction's, the
         * largest operand too (a global pool's output is a value per
         * plane: it ran on one thread, D140). Not every kernel's: a loop
         * kernel may read a slice of a large value (an LSTM step's of the
         * input projection). */
        if ((k->bufs[i].written || st->group->kind == TS_G_REDUCE) && r->vals[v->id]->numel > work)
            work = r->vals[v->id]->numel;
    }
    /* the index buffers it reads through, before any thread starts (D113) */
    for (int i = 0; i < k->n_checks; i++) {
        const ts_lcheck *c = &k->checks[i];
        int64_t bound = c->bound->k == TS_LX_DIM ? D[c->bound->var] : c->bound->ci;
        ts_status s = ts_interp_check_indices(ts_op_get(c->node->op)->name, r->vals[k->bufs[c->buf].v->id], bound,
                                              r->err);
        if (s != TS_OK) {   /* named as the interpreter names it */
            ts_buf lb = {0};
            ts_ir_node_label(&lb, c->node);
            ts_err_prefix(r->err, "%s: ", lb.data ? lb.data : "node");
            ts_buf_free(&lb);
            return s;
        }
    }
    if (st->packed) {
        float *pb = NULL;
        TS_TRY(packed_b(r, st, bufs, D, pool, &pb));
        bufs[k->n_bufs] = pb;
    }
    *work_out = work;
    return TS_OK;
}

static ts_status kernel_step(run *r, const ts_cpu_step *st, ts_pool *pool)
{
    const ts_lkernel *k = st->kernel;
    void *bufs[257];   /* one more: a packed constant B */
    int64_t D[TS_CPU_MAX_D], work = 1;
    TS_TRY(prepare(r, st, pool, bufs, D, &work));
    int nth = pool ? ts_pool_size(pool) : 1;
    /* templates split work themselves; loop kernels by their elements
     * weighted by the ops each costs (D160) */
    if (!k->tmpl) work = work > INT64_MAX / st->elem_cost ? INT64_MAX : work * st->elem_cost;
    if (!k->tmpl && work / GRAIN + 1 < nth) nth = (int)(work / GRAIN + 1);
    launch l = {st->fn, bufs, D, NULL, 0};
    if (st->ws_fn) {
        l.ws_each = (st->ws_fn(D) + 63) & ~(size_t)63;
        if (l.ws_each) TS_TRY(workspace(r, l.ws_each, nth, &l.ws));
    }
    if (nth > 1) ts_pool_run(pool, tramp, &l, nth);
    else tramp(&l, 0, 1);
    return TS_OK;
}

static bool overlaps(const ts_tensor *a, const ts_tensor *b)
{
    const char *pa = a->data, *pb = b->data;
    return a->nbytes && b->nbytes && pa < pb + b->nbytes && pb < pa + a->nbytes;
}

/* A CONTROL step (D115): the regions are programs, run with this run's
 * pool and trace; a while's state passes from round to round as tensors
 * (the body's results become the next round's operands, no copies), and
 * the body alternates between two scratches, so each round writes into
 * the results of the round before last (recycled, ts_cpu_run) and reuses
 * its arena instead of allocating. */
static ts_status control_step(run *r, const ts_cpu_step *st, ts_tensor *const *in, ts_tensor **out, ts_pool *pool,
                              ts_trace *trace)
{
    const ts_node *n = st->group->root;
    if (n->op == TS_OP_IF) {
        const ts_cpu_program *b = st->regions[((const uint8_t *)in[0]->data)[0] ? 0 : 1];
        ts_cpu_scratch sc = {0};
        ts_status s = ts_cpu_run(b, pool, &sc, n->n_in - 1, in + 1, n->n_out, out, trace, NULL, r->err);
        ts_cpu_scratch_free(&sc);
        return s;
    }
    const int ns = n->n_in;
    ts_tensor **state = ts_mem_zalloc(sizeof *state * 2 * (size_t)(ns ? ns : 1)), **next = state + ns;
    if (!state) return ts_err_set(r->err, TS_ERR_OOM, "out of memory");
    for (int i = 0; i < ns; i++) ts_tensor_retain(state[i] = in[i]);
    ts_cpu_scratch cond = {0}, body[2] = {{0}, {0}};
    ts_status s = TS_OK;
    for (int64_t round = 0;; round++) {
        ts_tensor *c = NULL;
        s = ts_cpu_run(st->regions[0], pool, &cond, ns, state, 1, &c, trace, NULL, r->err);
        if (s != TS_OK) break;
        const bool go = ((const uint8_t *)c->data)[0] != 0;
        ts_tensor_release(c);
        if (!go) break;
        s = ts_cpu_run(st->regions[1], pool, &body[round & 1], ns, state, ns, next, trace, NULL, r->err);
        if (s != TS_OK) break;
        for (int i = 0; i < ns; i++) {
            ts_tensor_release(state[i]);
            state[i] = next[i];
            next[i] = NULL;
        }
    }
    for (int i = 0; i < ns; i++) {
        if (s == TS_OK) out[i] = state[i];
        else ts_tensor_release(state[i]);
    }
    ts_mem_free(state);
    ts_cpu_scratch_free(&cond);
    ts_cpu_scratch_free(&body[0]);
    ts_cpu_scratch_free(&body[1]);
    return s;
}

static ts_status fallback_step(run *r, const ts_cpu_step *st, ts_pool *pool, ts_trace *trace)
{
    const ts_node *n = st->group->root;
    ts_tensor *in[256], *out[256];
    if (n->n_in > 256 || n->n_out > 256) return ts_err_set(r->err, TS_ERR_UNSUPPORTED, "over 256 operands");
    for (int i = 0; i < n->n_in; i++) {
        in[i] = r->vals[n->in[i]->id];
        if (!in[i]) return ts_err_set(r->err, TS_ERR_INTERNAL, "fallback %s: an operand was not computed",
                                      ts_op_get(n->op)->name);
    }
    if (st->n_regions) TS_TRY(control_step(r, st, in, out, pool, trace));
    else TS_TRY(ts_interp_run_node(r->ir, n, in, out));
    ts_status s = TS_OK;
    for (int i = 0; i < n->n_out; i++) {
        /* A control node hands an operand back as a result (a loop of zero
         * rounds, a region yielding its parameter); the memory plan gives
         * the operand's arena slot to a later value after this step, so
         * such a result gets memory of its own. */
        for (int j = 0; s == TS_OK && j < n->n_in; j++)
            if (overlaps(out[i], in[j])) {
                ts_tensor *own = NULL;
                s = ts_tensor_clone(out[i], &own, r->err);
                ts_tensor_release(out[i]);
                out[i] = own;
            }
        r->vals[n->out[i]->id] = out[i];
    }
    return s;
}

/* Drop what step i was the last to read. */
static void release_after(run *r, int i)
{
    const ts_cpu_step *st = &r->p->steps[i];
    const ts_node *n = st->group->root;
    int count = st->kernel ? st->kernel->n_bufs : n->n_in;
    for (int j = 0; j < count; j++) {
        const ts_value *v = st->kernel ? st->kernel->bufs[j].v : n->in[j];
        if (r->p->last_use[v->id] != i || !r->vals[v->id]) continue;
        r->live_bytes -= r->dyn_bytes[v->id];
        r->dyn_bytes[v->id] = 0;
        ts_tensor_release(r->vals[v->id]);
        r->vals[v->id] = NULL;
    }
}

/* A section (D139) on nl threads: each thread its lane's launches in
 * step order, one thread each, timed for the trace. */
typedef struct section_run {
    const launch *l;
    const int *lane;   /* by step of the section */
    int n;
    double *t0, *dur;  /* NULL: not traced */
} section_run;

static void section_tramp(void *ctx, int ith, int nth)
{
    const section_run *sr = ctx;
    (void)nth;
    for (int j = 0; j < sr->n; j++) {
        if (sr->lane[j] != ith) continue;
        const double t0 = sr->t0 ? now_us() : 0;
        tramp((void *)&sr->l[j], 0, 1);
        if (sr->t0) sr->t0[j] = t0, sr->dur[j] = now_us() - t0;
    }
}

/* Steps [sec->first, sec->last]: all prepared here in order, then the
 * chains dealt to the threads (largest first, each to the least loaded
 * thread) and run side by side, each launch on one thread. */
static ts_status section_steps(run *r, const ts_cpu_section *sec, ts_pool *pool, ts_trace *trace)
{
    const ts_cpu_program *p = r->p;
    const int n = sec->last - sec->first + 1, nl = ts_pool_size(pool) < sec->n_chains ? ts_pool_size(pool)
                                                                                       : sec->n_chains;
    int nb = 0, nd = 0;
    for (int j = 0; j < n; j++) {
        const ts_lkernel *k = p->steps[sec->first + j].kernel;
        nb += k->n_bufs + 1;
        nd += k->n_dims + p->steps[sec->first + j].n_params;
    }
    launch *l = ts_mem_zalloc(sizeof *l * (size_t)n);
    void **bufs = ts_mem_alloc(sizeof *bufs * (size_t)nb);
    int64_t *D = ts_mem_alloc(sizeof *D * (size_t)(nd ? nd : 1));
    int *lane = ts_mem_alloc(sizeof *lane * (size_t)n), *chain_lane = ts_mem_alloc(sizeof *chain_lane * (size_t)sec->n_chains);
    for (int c = 0; chain_lane && c < sec->n_chains; c++) chain_lane[c] = -1;
    double *load = ts_mem_zalloc(sizeof *load * (size_t)nl), *t = ts_mem_zalloc(sizeof *t * 2 * (size_t)n);
    size_t *ws_off = ts_mem_alloc(sizeof *ws_off * (size_t)n);
    ts_status s = l && bufs && D && lane && chain_lane && load && t && ws_off ? TS_OK
                                                                                : ts_err_set(r->err, TS_ERR_OOM, "out of memory");
    /* chains to lanes: largest first (ties to the earlier chain), each
     * to the least loaded lane */
    for (int done = 0; s == TS_OK && done < sec->n_chains; done++) {
        int best = -1, to = 0;
        for (int c = 0; c < sec->n_chains; c++)
            if (chain_lane[c] < 0 && (best < 0 || sec->chain_work[c] > sec->chain_work[best])) best = c;
        for (int q = 1; q < nl; q++)
            if (load[q] < load[to]) to = q;
        load[to] += sec->chain_work[best];
        chain_lane[best] = to;
    }
    for (int j = 0; s == TS_OK && j < n; j++) lane[j] = chain_lane[sec->chain_of[j]];
    size_t ws_total = 0;
    for (int j = 0, ob = 0, od = 0; s == TS_OK && j < n; j++) {
        const ts_cpu_step *st = &p->steps[sec->first + j];
        int64_t work = 1;
        s = prepare(r, st, pool, bufs + ob, D + od, &work);
        l[j] = (launch){st->fn, bufs + ob, D + od, NULL, 0};
        ws_off[j] = ws_total;
        if (s == TS_OK && st->ws_fn) ws_total += l[j].ws_each = (st->ws_fn(D + od) + 63) & ~(size_t)63;
        ob += st->kernel->n_bufs + 1;
        od += st->kernel->n_dims + st->n_params;
    }
    uint8_t *ws = NULL;
    if (s == TS_OK && ws_total) s = workspace(r, ws_total, 1, &ws);
    for (int j = 0; s == TS_OK && j < n; j++)
        if (l[j].ws_each) l[j].ws = ws + ws_off[j];
    if (s == TS_OK) {
        section_run sr = {l, lane, n, trace ? t : NULL, trace ? t + n : NULL};
        ts_pool_run(pool, section_tramp, &sr, nl);
        for (int j = 0; trace && j < n; j++) {
            const ts_lkernel *k = p->steps[sec->first + j].kernel;
            ts_trace_add(trace, k->name, k->what, t[j], t[n + j], lane[j]);
        }
        for (int j = 0; j < n; j++) release_after(r, sec->first + j);
    }
    ts_mem_free(l);
    ts_mem_free(bufs);
    ts_mem_free(D);
    ts_mem_free(lane);
    ts_mem_free(chain_lane);
    ts_mem_free(load);
    ts_mem_free(t);
    ts_mem_free(ws_off);
    return s;
}

static ts_status steps(run *r, ts_pool *pool, ts_trace *trace)
{
    const ts_cpu_program *p = r->p;
    for (int i = 0; i < p->n_steps; i++) {
        const ts_cpu_step *st = &p->steps[i];
        if (p->section_of[i] >= 0 && pool && ts_pool_size(pool) > 1) {
            const ts_cpu_section *sec = &p->sections[p->section_of[i]];
            TS_TRY(section_steps(r, sec, pool, trace));
            i = sec->last;
            continue;
        }
        double t0 = trace ? now_us() : 0;
        TS_TRY(st->kernel ? kernel_step(r, st, pool) : fallback_step(r, st, pool, trace));
        if (trace) {
            /* the kernel's name and what it computes; a fallback, its primitive; a compiled
             * if/while, its primitive as "control" (its regions' kernels are traced inside it) */
            const char *name = st->kernel ? st->kernel->name : ts_op_get(st->group->root->op)->name;
            ts_trace_add(trace, name, st->kernel ? st->kernel->what : st->n_regions ? "control" : "fallback", t0,
                         now_us() - t0, 0);
        }
        release_after(r, i);
    }
    return TS_OK;
}

void ts_cpu_scratch_free(ts_cpu_scratch *s)
{
    if (!s) return;
    ts_mem_free_aligned(s->arena);
    ts_mem_free_aligned(s->ws);
    ts_mem_free(s->plan_bufs);
    ts_mem_free(s->plan_offs);
    for (int k = 0; k < s->n_outs; k++) ts_tensor_release(s->outs[k]);
    ts_mem_free(s->outs);
    memset(s, 0, sizeof *s);
}

/* Keep a reference to this run's outputs for the next run to recycle. */
static void keep_outputs(ts_cpu_scratch *sc, int n, ts_tensor **out)
{
    if (sc->n_outs < n) {
        ts_tensor **o = ts_mem_realloc(sc->outs, sizeof *o * (size_t)n);
        if (!o) return;   /* nothing kept: the next run allocates */
        for (int k = sc->n_outs; k < n; k++) o[k] = NULL;
        sc->outs = o;
        sc->n_outs = n;
    }
    for (int k = 0; k < n; k++) {
        ts_tensor_release(sc->outs[k]);
        sc->outs[k] = out[k];
        if (out[k]) ts_tensor_retain(out[k]);
    }
}

ts_status ts_cpu_run(const ts_cpu_program *p, ts_pool *pool, ts_cpu_scratch *scratch, int n_in,
                     ts_tensor *const *in, int n_out, ts_tensor **out, ts_trace *trace, int64_t *peak_bytes,
                     ts_err *err)
{
    const ts_graph *g = p->g;
    if (n_out != g->body->n_results)
        return ts_err_set(err, TS_ERR_INVALID_ARG, "the graph has %d outputs, asked for %d", g->body->n_results, n_out);
    run r = {.p = p, .err = err};
    r.scratch = scratch ? scratch : &r.own;
    TS_TRY(ts_interp_run_new_known(g, p->collectives, n_in, in, err, &r.ir));
    size_t nv = g->next_value_id ? g->next_value_id : 1;
    r.vals = ts_mem_zalloc(sizeof *r.vals * nv);
    r.offset = ts_mem_alloc(sizeof *r.offset * nv);
    r.dyn_bytes = ts_mem_zalloc(sizeof *r.dyn_bytes * nv);
    ts_status s = r.vals && r.offset && r.dyn_bytes ? TS_OK : ts_err_set(err, TS_ERR_OOM, "out of memory");
    if (s == TS_OK) {
        for (size_t i = 0; i < nv; i++) r.offset[i] = -1;
        for (int i = 0; i < n_in; i++) {
            ts_tensor_retain(in[i]);
            r.vals[g->body->params[i]->id] = in[i];
        }
        for (int i = 0; i < p->n_consts; i++) {
            const ts_value *v = p->consts[i];
            if (r.vals[v->id]) continue;
            ts_tensor_retain(v->def->attrs[0].t);
            r.vals[v->id] = v->def->attrs[0].t;
        }
        s = make_plan(&r);
    }
    if (s == TS_OK) s = steps(&r, pool, trace);
    for (int k = 0; s == TS_OK && k < n_out; k++) {
        ts_tensor *t = r.vals[g->body->results[k]->id];
        if (!t) s = ts_err_set(err, TS_ERR_INTERNAL, "output %d was not computed", k);
    }
    for (int k = 0; k < n_out; k++) out[k] = NULL;
    if (s == TS_OK)
        for (int k = 0; k < n_out; k++) {
            ts_tensor *t = r.vals[g->body->results[k]->id];
            /* a result in the arena or borrowed must be copied out */
            if (r.offset[g->body->results[k]->id] >= 0) s = ts_tensor_clone(t, &out[k], err);
            else {
                ts_tensor_retain(t);
                out[k] = t;
            }
        }
    if (peak_bytes) *peak_bytes = r.arena_bytes + r.dyn_peak;
    if (s == TS_OK && scratch) keep_outputs(scratch, n_out, out);
    if (r.vals)
        for (size_t i = 0; i < nv; i++) ts_tensor_release(r.vals[i]);
    ts_mem_free(r.vals);
    ts_mem_free(r.offset);
    ts_mem_free(r.dyn_bytes);
    ts_cpu_scratch_free(&r.own);
    ts_interp_run_free(r.ir);
    if (s != TS_OK)
        for (int k = 0; k < n_out; k++) {
            ts_tensor_release(out[k]);
            out[k] = NULL;
        }
    return s;
}
