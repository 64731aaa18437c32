/* program.c — compiling a graph for the CPU: fusion, one loop IR kernel
 * per group, C for all of them (split over a few translation units so the
 * C compiler runs in parallel), the JIT (cached on disk), and the step
 * list the executor walks (run.c). */
#include "backend/cpu/program.h"

#include "backend/cpu/jit.h"
#include "codegen/cpu/emit.h"
#include "interp/interp.h"
#include "lower/lower.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Kernels, or bytes of their C, per translation unit before another
 * unit is worth a compiler process (gcc -O3 takes ~10 ms per KB of loop
 * kernels, a unit's pasted headers and process ~0.1 s); at most MAX_TU
 * units (the split must not depend on the machine, or the cache key
 * would). */
enum { KERNELS_PER_TU = 24, BYTES_PER_TU = 64 << 10, MAX_TU = 4 };   /* the shared runtime unit comes on top */

void ts_cpu_program_free(ts_cpu_program *p)
{
    if (!p) return;
    for (int i = 0; p->steps && i < p->n_steps; i++) {
        for (int r = 0; r < p->steps[i].n_regions; r++) ts_cpu_program_free(p->steps[i].regions[r]);
        ts_mem_free(p->steps[i].regions);
        ts_mem_free(p->steps[i].region_graphs);
        ts_cpu_packed *pk = p->steps[i].packed;
        if (!pk || p->steps[i].packed_shared) continue;
        ts_mem_free_aligned(atomic_load_explicit(&pk->data, memory_order_relaxed));
        pthread_mutex_destroy(&pk->lock);
        ts_mem_free(pk);
    }
    ts_jit_free(p->mod);
    ts_cpu_sections_free(p);
    ts_plan_free(p->plan);
    ts_mem_free(p->steps);
    ts_mem_free(p->last_use);
    ts_mem_free(p->consts);
    ts_mem_free(p);
}

/* Kernels whose C is the same but for their name compile once: a model
 * repeats its blocks (a transformer's layers, a ResNet stage's blocks),
 * and each repetition's kernels differ only in the buffers bound at run
 * time. Each kernel's text under a common name is compared with the
 * earlier ones' (by hash, then bytes); a repeat takes the first one's
 * symbol and is not emitted (D119). */
static ts_status share_code(ts_cpu_program *p, ts_err *err)
{
    typedef struct seen {
        uint64_t hash;
        char *text;
        const char *sym;
    } seen;
    seen *tab = ts_mem_zalloc(sizeof *tab * (size_t)(p->n_steps + 1));
    if (!tab) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    int n = 0;
    ts_status s = TS_OK;
    for (int i = 0; s == TS_OK && i < p->n_steps; i++) {
        ts_lkernel *k = p->steps[i].kernel;
        if (!k) continue;
        char name[sizeof k->name];
        memcpy(name, k->name, sizeof name);
        snprintf(k->name, sizeof k->name, "ts_kernel");
        ts_buf b = {0};
        s = ts_emit_c_kernel(&b, k, err);
        memcpy(k->name, name, sizeof name);
        if (s == TS_OK && !b.data) s = ts_err_set(err, TS_ERR_OOM, "out of memory");
        if (s != TS_OK) {
            ts_buf_free(&b);
            break;
        }
        p->steps[i].code_bytes = b.len;
        uint64_t h = UINT64_C(1469598103934665603);   /* FNV-1a */
        for (const char *c = b.data; *c; c++) h = (h ^ (unsigned char)*c) * UINT64_C(1099511628211);
        int j = 0;
        while (j < n && (tab[j].hash != h || strcmp(tab[j].text, b.data) != 0)) j++;
        if (j < n) {
            p->steps[i].sym = tab[j].sym;
            p->steps[i].dup = true;
            ts_buf_free(&b);
        } else {
            tab[n++] = (seen){h, b.data, k->name};
        }
    }
    for (int j = 0; j < n; j++) ts_mem_free(tab[j].text);
    ts_mem_free(tab);
    return s;
}

/* A loop kernel's cost per element of its largest output, in units of
 * one simple vector op: what run.c weighs the element count by before it
 * splits the kernel over threads (D160). Each elementwise op counts 1,
 * a division or square root 4, a transcendental 10 (their polynomials and
 * the divisions inside sigmoid and tanh); layout ops nothing; a unit is
 * a quarter of the ops: a kernel of a few adds stays at 1. An LSTM cell
 * (3 sigmoids, 2 tanh) weighs 18: its 2048 values at batch 8 took 6.6 us
 * on one thread, as long as a copy of 32K floats. */
static int64_t op_cost(ts_op op)
{
    if (!(ts_op_get(op)->flags & TS_OPF_EW)) return 0;
    switch (op) {
    case TS_OP_DIV: case TS_OP_SQRT: return 4;
    case TS_OP_EXP: case TS_OP_LOG: case TS_OP_SIN: case TS_OP_COS: case TS_OP_TANH: case TS_OP_ERF:
    case TS_OP_POW: case TS_OP_ATAN2: return 10;
    default: return 1;
    }
}

/* The ops computed inline under v (not stored), each once (seen). */
static int64_t inlined_cost(const ts_fusion *f, const ts_value *v, bool top, bool *seen)
{
    const ts_node *n = v->def;
    if (!n || (!top && f->mat[v->id]) || seen[n->id]) return 0;
    seen[n->id] = true;
    int64_t c = op_cost(n->op);
    for (int i = 0; i < n->n_in; i++) c += inlined_cost(f, n->in[i], false, seen);
    return c;
}

static int64_t elem_cost(const ts_fusion *f, const ts_group *g, bool *seen)
{
    /* a row kernel's ops on its rows' statistics run once a row, not an
     * element: loop kernels only */
    if (!seen || g->kind != TS_G_LOOP) return 1;
    memset(seen, 0, f->g->next_node_id ? f->g->next_node_id : 1);
    int64_t c = 0;
    for (int k = 0; k < g->n_out; k++) c += inlined_cost(f, g->out[k], true, seen);
    return c / 4 > 1 ? c / 4 : 1;
}

/* The target-neutral plan for g (lower/plan.h, fusion asking the C
 * emitter what it generates), and the CPU's steps over it, without code. */
static ts_status plan(const ts_graph *g, ts_cpu_program **out, ts_err *err)
{
    ts_cpu_program *p = ts_mem_zalloc(sizeof *p);
    if (!p) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    p->g = g;
    ts_status s = ts_plan_new(g, ts_emit_c_compiles, &p->plan, err);
    if (s == TS_OK && !(p->steps = ts_mem_zalloc(sizeof *p->steps * (size_t)(p->plan->n_steps + 1))))
        s = ts_err_set(err, TS_ERR_OOM, "out of memory");
    if (s != TS_OK) {
        ts_cpu_program_free(p);
        return s;
    }
    p->fusion = p->plan->fusion;
    p->n_steps = p->plan->n_steps;
    p->n_kernels = p->plan->n_kernels;
    p->n_fallback = p->plan->n_fallback;
    bool *seen = ts_mem_alloc(p->fusion->g->next_node_id ? p->fusion->g->next_node_id : 1);
    for (int i = 0; i < p->n_steps; i++) {
        p->steps[i].group = p->plan->steps[i].group;
        p->steps[i].elem_cost = elem_cost(p->fusion, p->steps[i].group, seen);
        p->steps[i].kernel = p->plan->steps[i].kernel;
        if (p->steps[i].kernel && s == TS_OK) s = ts_lkernel_hoist_offsets(p->plan->lp, p->steps[i].kernel, err);
        if (p->steps[i].kernel) {
            p->steps[i].sym = p->steps[i].kernel->name;
            p->steps[i].n_params = ts_emit_c_params(p->steps[i].kernel, NULL);
        }
    }
    ts_mem_free(seen);
    if (s == TS_OK) s = share_code(p, err);
    if (s != TS_OK) {
        ts_cpu_program_free(p);
        return s;
    }
    *out = p;
    return TS_OK;
}

/* What every run binds before the first step, found once: the stored
 * constants that no step computes (a splat a kernel fills is computed). */
static ts_status run_bindings(ts_cpu_program *p, ts_err *err)
{
    p->collectives = ts_interp_has_collectives(p->g);
    int n = 0;
    for (const ts_node *nd = p->g->body->first; nd; nd = nd->next) n += nd->op == TS_OP_CONST;
    if (n && !(p->consts = ts_mem_alloc(sizeof *p->consts * (size_t)n))) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (const ts_node *nd = p->g->body->first; nd; nd = nd->next) {
        if (nd->op != TS_OP_CONST || !p->fusion->mat[nd->out[0]->id]) continue;
        bool computed = false;
        for (int i = 0; i < p->n_steps && !computed; i++) computed = p->steps[i].group->root == nd;
        if (!computed) p->consts[p->n_consts++] = nd->out[0];
    }
    return TS_OK;
}

/* The values each step reads, for the last-use table. */
static void note_uses(ts_cpu_program *p)
{
    for (int i = 0; i < p->n_steps; i++) {
        const ts_cpu_step *st = &p->steps[i];
        if (st->kernel) {
            for (int b = 0; b < st->kernel->n_bufs; b++) p->last_use[st->kernel->bufs[b].v->id] = i;
        } else {
            const ts_node *n = st->group->root;
            for (int k = 0; k < n->n_in; k++) p->last_use[n->in[k]->id] = i;
        }
    }
    const ts_block *body = p->g->body;
    for (int i = 0; i < body->n_results; i++) p->last_use[body->results[i]->id] = p->n_steps;   /* handed out */
}

/* unit_of[j]: the unit of kernel j of the emitted ones, whose C has
 * bytes[j] (largest first, to the lightest unit; ties to the lower
 * index, so the units, and the cache key, are the same for the same
 * program). */
static void deal(int nk, const size_t *bytes, int n, int *unit_of)
{
    size_t load[MAX_TU] = {0};
    for (int j = 0; j < nk; j++) unit_of[j] = -1;
    for (int done = 0; done < nk; done++) {
        int big = -1;
        size_t bb = 0;
        for (int j = 0; j < nk; j++)
            if (unit_of[j] < 0 && (big < 0 || bytes[j] > bb)) big = j, bb = bytes[j];
        int u = 0;
        for (int v = 1; v < n; v++)
            if (load[v] < load[u]) u = v;
        unit_of[big] = u;
        load[u] += bb;
    }
}

/* The C of the kernels, unit by unit, the kernels dealt largest first
 * to the unit with the least C so far: the units compile in parallel and
 * the largest one decides when the module is ready (densenet121's units
 * were 6k to 12k lines dealt round-robin). When the kernels call the
 * contraction templates, those are one more unit, *shared: every
 * template (GEMM, convolution, sort), the same text for every program,
 * which the JIT compiles once per machine and links into each module
 * (D112). The templates were ~85% of a unit's compile time (ResNet-50:
 * three units of ~5 s, each compiling them again, on two cores; the
 * bundled tinynet 5.0 s cold, of which its kernels ~1 s). */
static ts_status sources(const ts_cpu_program *p, bool exact, int *n_units, ts_buf *units, ts_buf *shared,
                         ts_err *err)
{
    /* all kernels, then one unit's share, in one allocation */
    ts_lkernel **ks = ts_mem_alloc(sizeof *ks * 2 * (size_t)(p->n_steps + 1));
    if (!ks) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    ts_lkernel **mine = ks + p->n_steps + 1;
    int nk = 0;
    size_t total = 0;   /* bytes of their C */
    for (int i = 0; i < p->n_steps; i++)
        if (p->steps[i].kernel && !p->steps[i].dup) ks[nk++] = p->steps[i].kernel, total += p->steps[i].code_bytes;
    const int needs = ts_emit_needs(nk, ks);
    const int by_bytes = (int)((total + BYTES_PER_TU - 1) / BYTES_PER_TU);
    const int by_count = (nk + KERNELS_PER_TU - 1) / KERNELS_PER_TU;
    int n = by_bytes > by_count ? by_bytes : by_count;
    /* three units take two rounds on two cores, as four do: four then,
     * each a quarter (D193) */
    n = n == 3 ? 4 : n;
    n = n > nk ? nk : n;
    n = n < 1 ? 1 : n > MAX_TU ? MAX_TU : n;
    *n_units = n;
    /* the runtime templates read it (tsrt_conv_wg_pre); it is part of the
     * source, so of the cache key too */
    for (int u = 0; exact && u < n; u++) ts_buf_puts(&units[u], "#define TSRT_EXACT 1\n");
    ts_status s = TS_OK;
    if (needs) {
        if (exact) ts_buf_puts(shared, "#define TSRT_EXACT 1\n");
        s = ts_emit_c_runtime(shared, TS_NEEDS_GEMM | TS_NEEDS_CONV | TS_NEEDS_SORT, err);
    }
    int *unit_of = ts_mem_zalloc(sizeof *unit_of * (size_t)(nk + 1));
    size_t *bytes = ts_mem_zalloc(sizeof *bytes * (size_t)(nk + 1));
    if (!unit_of || !bytes) s = ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (int i = 0, j = 0; s == TS_OK && i < p->n_steps; i++)
        if (p->steps[i].kernel && !p->steps[i].dup) bytes[j++] = p->steps[i].code_bytes;
    if (s == TS_OK) deal(nk, bytes, n, unit_of);
    for (int u = 0; s == TS_OK && u < n; u++) {
        int m = 0;
        for (int j = 0; j < nk; j++)
            if (unit_of[j] == u) mine[m++] = ks[j];
        s = ts_emit_c(&units[u], m, mine, needs != 0, err);
    }
    ts_mem_free(unit_of);
    ts_mem_free(bytes);
    ts_mem_free(ks);
    return s;
}

ts_status ts_cpu_source(const ts_graph *g, char **src, ts_err *err)
{
    ts_cpu_program *p = NULL;
    TS_TRY(plan(g, &p, err));
    ts_buf units[MAX_TU], shared = {0};
    memset(units, 0, sizeof units);
    int n = 0;
    ts_status s = sources(p, false, &n, units, &shared, err);
    ts_buf all = {0};
    const int first = shared.data ? 1 : 0;
    if (s == TS_OK && first) {
        ts_buf_printf(&all, "/* ==== translation unit 1 of %d (shared by every program) ==== */\n", n + 1);
        ts_buf_puts(&all, shared.data);
    }
    for (int u = 0; u < n; u++) {
        if (s == TS_OK && n + first > 1)
            ts_buf_printf(&all, "/* ==== translation unit %d of %d ==== */\n", u + 1 + first, n + first);
        if (s == TS_OK && units[u].data) ts_buf_puts(&all, units[u].data);
        ts_buf_free(&units[u]);
    }
    ts_buf_free(&shared);
    ts_cpu_program_free(p);
    if (s == TS_OK && !all.data) s = ts_err_set(err, TS_ERR_OOM, "out of memory");
    if (s != TS_OK) {
        ts_buf_free(&all);
        return s;
    }
    *src = all.data;
    return TS_OK;
}

ts_status ts_cpu_loops_text(const ts_graph *g, char **text, ts_err *err)
{
    ts_cpu_program *p = NULL;
    TS_TRY(plan(g, &p, err));
    ts_status s = ts_plan_text(p->plan, text, err);
    ts_cpu_program_free(p);
    return s;
}

/* The packer of a step whose GEMM reads a constant B (or whose conv reads
 * its weights scaled, D30), and the empty slot its packed copy goes into
 * at the first run. */
static ts_status find_packer(ts_cpu_program *p, ts_cpu_step *st, ts_err *err)
{
    char name[48];
    snprintf(name, sizeof name, "%s_pbsize", st->sym);
    *(void **)&st->pbsize_fn = ts_jit_sym(p->mod, name);
    snprintf(name, sizeof name, "%s_pack", st->sym);
    *(void **)&st->pack_fn = ts_jit_sym(p->mod, name);
    if (!st->pbsize_fn || !st->pack_fn)
        return ts_err_set(err, TS_ERR_INTERNAL, "compiled module lacks %s", name);
    if (!(st->packed = ts_mem_zalloc(sizeof *st->packed))) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    pthread_mutex_init(&st->packed->lock, NULL);
    return TS_OK;
}

/* Whether x is the same at every launch of every kernel: no run-time
 * dim (D[k] is numbered per kernel, so equal nodes may differ there). */
static bool launch_constant(const ts_lx *x)
{
    if (!x) return true;
    if (x->k == TS_LX_DIM || x->k == TS_LX_LOAD || x->k == TS_LX_LOADI || x->k == TS_LX_ACC || x->k == TS_LX_PARAM ||
        x->k == TS_LX_TAB)   /* tables are numbered per kernel, like D[k] */
        return false;
    return launch_constant(x->a[0]) && launch_constant(x->a[1]) && launch_constant(x->a[2]);
}

/* Whether the GEMMs of steps a and b pack their constant B alike: the
 * same constant at the same offset, and the same arguments (expressions
 * are hash-consed in the plan's one loop program, so equal ones are one
 * node). */
static bool same_packing(const ts_cpu_step *a, const ts_cpu_step *b)
{
    const ts_ltmpl *x = a->kernel->tmpl, *y = b->kernel->tmpl;
    if (!x->prepack_b || !y->prepack_b || x->kind != TS_TMPL_GEMM || y->kind != TS_TMPL_GEMM) return false;
    if (a->kernel->bufs[x->b].v != b->kernel->bufs[y->b].v || x->b_off != y->b_off || x->n_args != y->n_args)
        return false;
    for (int i = 0; i < x->n_args; i++)
        if (x->arg[i] != y->arg[i] || !launch_constant(x->arg[i])) return false;
    return true;
}

/* Steps that pack the same constant alike share one packed copy: an
 * unrolled recurrence (an LSTM's steps) multiplies by one weight at
 * every step, and a copy per step made each step read its own megabyte
 * from memory instead of one copy from cache (lstm_lm: 64 packed copies
 * of 1 MiB, D118). */
static void share_packs(ts_cpu_program *p)
{
    for (int i = 0; i < p->n_steps; i++) {
        ts_cpu_step *st = &p->steps[i];
        if (!st->packed || !st->kernel->tmpl->prepack_b) continue;
        for (int j = 0; j < i; j++) {
            ts_cpu_step *e = &p->steps[j];
            if (!e->packed || e->packed_shared || !same_packing(e, st)) continue;
            pthread_mutex_destroy(&st->packed->lock);
            ts_mem_free(st->packed);
            st->packed = e->packed;
            st->packed_shared = true;
            break;
        }
    }
}

/* A CONTROL step's regions, each compiled as a program whose graph views
 * the region as its body (regions see only their parameters, D6, so a
 * region is a graph of its own): the sub-programs are separate modules. */
static ts_status compile_regions(const ts_graph *g, const ts_cpu_opts *o, ts_cpu_step *st, ts_err *err)
{
    const ts_node *n = st->group->root;
    st->regions = ts_mem_zalloc(sizeof *st->regions * (size_t)n->n_regions);
    st->region_graphs = ts_mem_zalloc(sizeof *st->region_graphs * (size_t)n->n_regions);
    if (!st->regions || !st->region_graphs) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (int r = 0; r < n->n_regions; r++) {
        ts_graph *rg = &st->region_graphs[r];
        *rg = *g;
        rg->body = n->regions[r];
        rg->n_pins = 0;
        rg->pins = NULL;
        TS_TRY(ts_cpu_compile(rg, o, &st->regions[r], err));
        st->n_regions = r + 1;
    }
    return TS_OK;
}

/* Whether every kernel of the program is tiny (D145): sizes known when
 * compiling, and no buffer it reads or writes over TINY_ELEMS elements
 * (a reduction's input counts, and a constant operand, weights
 * included). Such a program is compiled at -O1: the ONNX node tests'
 * units took ~110 ms each at -O3, most of it the vectorizer's, to run
 * kernels of a few microseconds. */
enum { TINY_ELEMS = 1024 };

static bool tiny_program(const ts_cpu_program *p)
{
    for (int i = 0; i < p->n_steps; i++) {
        const ts_lkernel *k = p->steps[i].kernel;
        if (!k) continue;
        if (k->n_dims) return false;
        for (int b = 0; b < k->n_bufs; b++) {
            const ts_value *v = k->bufs[b].v;
            int64_t n = 1;
            for (int d = 0; v && d < v->type.rank && n <= TINY_ELEMS; d++) {
                if (!ts_dim_is_const(v->type.dims[d]) || v->type.dims[d].c > TINY_ELEMS) return false;
                n *= v->type.dims[d].c;   /* both factors <= TINY_ELEMS: no overflow */
            }
            if (n > TINY_ELEMS) return false;
        }
    }
    return true;
}

ts_status ts_cpu_compile(const ts_graph *g, const ts_cpu_opts *o, ts_cpu_program **out, ts_err *err)
{
    ts_cpu_program *p = NULL;
    TS_TRY(plan(g, &p, err));
    size_t nv = g->next_value_id ? g->next_value_id : 1;
    ts_status s = TS_OK;
    if (!(p->last_use = ts_mem_zalloc(sizeof *p->last_use * nv))) s = ts_err_set(err, TS_ERR_OOM, "out of memory");
    if (s == TS_OK) {
        for (size_t i = 0; i < nv; i++) p->last_use[i] = -1;
        s = run_bindings(p, err);
    }
    if (s == TS_OK) {
        ts_cpu_hoist_steps(p);
        note_uses(p);
    }
    if (s == TS_OK) s = ts_cpu_find_sections(p, err);

    if (s == TS_OK && p->n_kernels) {
        ts_buf units[MAX_TU], shared = {0};
        memset(units, 0, sizeof units);
        int n = 0;
        s = sources(p, o && o->exact, &n, units, &shared, err);
        const char *texts[MAX_TU];
        for (int u = 0; u < n; u++) texts[u] = units[u].data ? units[u].data : "";
        ts_jit_opts jo = {.cc = o ? o->cc : NULL, .flags = o ? o->cflags : NULL, .cache_dir = o ? o->cache_dir : NULL,
                          .light = tiny_program(p)};
        if (s == TS_OK)
            s = ts_jit_compile_shared(&jo, shared.data, n, texts, &p->mod, &p->cache_hit, &p->compile_ms, err);
        for (int u = 0; u < n; u++) ts_buf_free(&units[u]);
        ts_buf_free(&shared);
        for (int i = 0; s == TS_OK && i < p->n_steps; i++) {
            ts_cpu_step *st = &p->steps[i];
            if (!st->kernel) continue;
            *(void **)&st->fn = ts_jit_sym(p->mod, st->sym);
            if (!st->fn) s = ts_err_set(err, TS_ERR_INTERNAL, "compiled module lacks kernel %s", st->sym);
            if (s == TS_OK && st->kernel->tmpl) {
                char ws[48];
                snprintf(ws, sizeof ws, "%s_ws", st->sym);
                *(void **)&st->ws_fn = ts_jit_sym(p->mod, ws);
                if (!st->ws_fn) s = ts_err_set(err, TS_ERR_INTERNAL, "compiled module lacks %s", ws);
            }
            const ts_ltmpl *t = st->kernel->tmpl;
            if (s == TS_OK && t && (t->prepack_b || t->prepack_w || t->prepack_pre)) s = find_packer(p, st, err);
        }
        if (s == TS_OK) share_packs(p);
    }
    /* what the regions hold counts as the program's: a hit when every
     * module that was built came from the cache */
    bool built = p->n_kernels > 0, hit = !built || p->cache_hit;
    for (int i = 0; s == TS_OK && i < p->n_steps; i++)
        if (p->steps[i].group->kind == TS_G_CONTROL) {
            s = compile_regions(g, o, &p->steps[i], err);
            for (int r = 0; r < p->steps[i].n_regions; r++) {
                const ts_cpu_program *sub = p->steps[i].regions[r];
                p->n_kernels += sub->n_kernels;
                p->n_fallback += sub->n_fallback;
                p->compile_ms += sub->compile_ms;
                built |= sub->n_kernels > 0;
                hit = hit && (sub->n_kernels == 0 || sub->cache_hit);
            }
        }
    if (built) p->cache_hit = hit;
    if (s != TS_OK) {
        ts_cpu_program_free(p);
        return s;
    }
    *out = p;
    return TS_OK;
}

ts_status ts_cpu_probe(const ts_cpu_opts *o, ts_err *err)
{
    ts_jit_opts jo = {.cc = o ? o->cc : NULL, .flags = o ? o->cflags : NULL, .cache_dir = o ? o->cache_dir : NULL};
    return ts_jit_probe(&jo, err);
}

void ts_cpu_program_stats(const ts_cpu_program *p, double *compile_ms, bool *cache_hit, int *n_kernels,
                          int *n_fallback)
{
    if (compile_ms) *compile_ms = p->compile_ms;
    if (cache_hit) *cache_hit = p->cache_hit;
    if (n_kernels) *n_kernels = p->n_kernels;
    if (n_fallback) *n_fallback = p->n_fallback;
}
