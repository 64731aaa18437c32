/* sections.c — runs of small kernels in independent chains (D139).
 *
 * A compiled program is a list of kernel launches, each split over the
 * pool's threads and ended by a barrier. A kernel too small to split
 * (a bidirectional LSTM's step: an 8 x 512 x 128 product and an
 * elementwise kernel of 1K values) then costs a barrier and leaves the
 * other threads idle, while the other direction's steps, which depend
 * on none of these, wait their turn. A section is a run of consecutive
 * small kernel steps whose dependences inside the run fall into two or
 * more chains (connected parts); the executor (run.c) gives each thread
 * whole chains, one launch and one barrier for the section, and the
 * memory plan keeps every value the section writes or reads live for all
 * of it, so that chains running side by side never share memory. */
#include "backend/cpu/program.h"

#include <string.h>

/* A small kernel's static work: a product's or a conv's multiply-adds,
 * a loop kernel's largest output. Above these the kernel is worth splitting
 * over the threads itself: about 10 µs on one core. */
enum { SMALL_MACS = 1 << 20, SMALL_ELEMS = 1 << 16 };

/* Product of a value's dims, or -1 when one is symbolic. */
static int64_t numel_of(const ts_value *v)
{
    int64_t n = 1;
    for (int i = 0; i < v->type.rank; i++) {
        if (!ts_dim_is_const(v->type.dims[i])) return -1;
        n *= v->type.dims[i].c;
    }
    return n;
}

/* The step's work if it is a small kernel, else -1. */
static int64_t small_work(const ts_cpu_program *p, const ts_cpu_step *st)
{
    const ts_lkernel *k = st->kernel;
    /* the executor prepares a section's launches before any runs: no
     * index operand to check (it may come from the section), no run-time
     * dims */
    if (!k || k->serial || k->n_checks || k->n_dims) return -1;
    /* parts of two concats written in place: the dependences keep one
     * chain of part writers per step (sections' window) */
    const ts_value *part = NULL;
    for (int i = 0; i < k->n_bufs; i++) {
        const ts_value *c = k->bufs[i].written ? p->fusion->into[k->bufs[i].v->id] : NULL;
        if (c && part && c != part) return -1;
        if (c) part = c;
    }
    if (k->tmpl) {
        /* a product: m n k and the batch; a conv: n c . . o kh kw oh ow groups */
        const ts_ltmpl *t = k->tmpl;
        static const int gemm[] = {0, 1, 2, 8}, conv[] = {0, 1, 4, 5, 6, 7, 8, 9};
        const int *a = t->kind == TS_TMPL_GEMM ? gemm : t->kind == TS_TMPL_CONV ? conv : NULL;
        const int na = t->kind == TS_TMPL_GEMM ? 4 : 8;
        if (!a) return -1;
        int64_t v[8];
        for (int i = 0; i < na; i++) {
            if (t->arg[a[i]]->k != TS_LX_CONST) return -1;
            v[i] = t->arg[a[i]]->ci > 1 ? t->arg[a[i]]->ci : 1;   /* a batch of 0: one product */
        }
        const int64_t macs = t->kind == TS_TMPL_GEMM ? v[0] * v[1] * v[2] * v[3]
                                                     : v[0] * v[2] * v[5] * v[6] * (v[1] / v[7]) * v[3] * v[4];
        return macs <= SMALL_MACS ? (macs > 0 ? macs : 1) : -1;
    }
    int64_t most = 1;
    for (int i = 0; i < k->n_bufs; i++) {
        if (!k->bufs[i].written) continue;
        const int64_t n = numel_of(k->bufs[i].v);
        if (n < 0) return -1;
        if (n > most) most = n;
    }
    /* a loop element costs about what a few multiply-adds do */
    return most <= SMALL_ELEMS ? 16 * most : -1;
}

static int find(int *up, int i)
{
    while (up[i] != i) i = up[i] = up[up[i]];
    return i;
}

/* The value a step's buffer stands for in the dependences: a part of a
 * concat written in place is the concat (its readers read that). */
static const ts_value *dep_value(const ts_cpu_program *p, const ts_value *v)
{
    const ts_value *c = p->fusion->into[v->id];
    return c ? c : v;
}

/* The steps of a run of small ones seen so far, from `start`: a
 * union-find over them (up, by step - start) with each root's work, and
 * the steps that wrote each value (writer[value id], -1: none; the parts
 * of one concat, written side by side, chained by next_part). */
typedef struct window {
    int start;
    int *up, *next_part, *writer;
    int64_t *sum;
    const ts_value **touched;   /* the value ids writer holds, to clear */
    int n_touched;
} window;

/* The section [w->start, end) with the chains of the window (a trial
 * that found it worth one). */
static ts_status close_section(ts_cpu_program *p, const window *w, int end, const int64_t *work, ts_err *err)
{
    const int a = w->start, n = end - a;
    int n_chains = 0;
    for (int i = 0; i < n; i++) n_chains += find(w->up, i) == i;
    ts_cpu_section *sec = &p->sections[p->n_sections];
    sec->first = a, sec->last = end - 1, sec->n_chains = 0;
    sec->chain_of = ts_mem_alloc(sizeof *sec->chain_of * (size_t)n);
    sec->chain_work = ts_mem_zalloc(sizeof *sec->chain_work * (size_t)n_chains);
    if (!sec->chain_of || !sec->chain_work) {
        ts_mem_free(sec->chain_of);
        ts_mem_free(sec->chain_work);
        sec->chain_of = NULL, sec->chain_work = NULL;
        return ts_err_set(err, TS_ERR_OOM, "out of memory");
    }
    /* chains numbered by their first step; a root comes first in its chain */
    for (int i = 0; i < n; i++) {
        const int r = find(w->up, i);
        sec->chain_of[i] = r == i ? sec->n_chains++ : sec->chain_of[r];
        sec->chain_work[sec->chain_of[i]] += (double)work[a + i];
    }
    for (int i = a; i < end; i++) p->section_of[i] = p->n_sections;
    p->n_sections++;
    return TS_OK;
}

/* The roots of the chains step i reads from, distinct, into roots (at
 * most cap; the count). */
static int read_roots(const ts_cpu_program *p, const window *w, int i, int *roots, int cap)
{
    const ts_lkernel *k = p->steps[i].kernel;
    int n = 0;
    for (int q = 0; q < k->n_bufs; q++) {
        if (k->bufs[q].written) continue;
        for (int s = w->writer[dep_value(p, k->bufs[q].v)->id]; s >= 0; s = w->next_part[s - w->start]) {
            const int r = find(w->up, s - w->start);
            bool seen = false;
            for (int x = 0; x < n && !seen; x++) seen = roots[x] == r;
            if (!seen && n < cap) roots[n++] = r;
        }
    }
    return n;
}

/* Step i's writes into the window's map. A concat's parts are chained
 * (the writes are independent; a reader of the concat reads them all). */
static void note_writes(const ts_cpu_program *p, window *w, int i)
{
    const ts_lkernel *k = p->steps[i].kernel;
    w->next_part[i - w->start] = -1;
    for (int q = 0; q < k->n_bufs; q++) {
        if (!k->bufs[q].written) continue;
        const ts_value *v = dep_value(p, k->bufs[q].v);
        if (w->writer[v->id] == i) continue;   /* two parts of one concat */
        if (w->writer[v->id] < 0) w->touched[w->n_touched++] = v;
        else if (v != k->bufs[q].v) w->next_part[i - w->start] = w->writer[v->id];
        w->writer[v->id] = i;
    }
}

static void clear_window(window *w, int start)
{
    for (int t = 0; t < w->n_touched; t++) w->writer[w->touched[t]->id] = -1;
    w->n_touched = 0;
    w->start = start;
}

/* The chains from step s on: steps joined along their dependences on
 * steps >= s (what they read from before s is there already), until a
 * step that joins two chains which both hold work (*end: that step, or
 * b). Returns the work the chains but the largest would take off the
 * critical path, or 0 when [s, *end) would not be a section (fewer than
 * two chains, or the largest over 3/4 of the work). */
static int64_t trial(const ts_cpu_program *p, window *w, int s, int b, const int64_t *work, int *end)
{
    int roots[64];
    clear_window(w, s);
    *end = b;
    for (int i = s; i < b; i++) {
        const int n = read_roots(p, w, i, roots, 64);
        int busy = 0;
        for (int x = 0; x < n; x++) busy += w->sum[roots[x]] > 0;
        if (busy >= 2 && i > s) {
            *end = i;
            break;
        }
        const int me = i - s;
        w->up[me] = me;
        w->sum[me] = work[i];
        for (int x = 0; x < n; x++) {
            const int r = find(w->up, roots[x]), m = find(w->up, me);
            if (r == m) continue;
            /* the lower index stays the root: a chain's root is its first step */
            const int lo = r < m ? r : m, hi = r < m ? m : r;
            w->up[hi] = lo;
            w->sum[lo] += w->sum[hi];
        }
        note_writes(p, w, i);
    }
    int n_chains = 0;
    int64_t total = 0, most = 0;
    for (int i = 0; i < *end - s; i++) {
        total += work[s + i];
        if (find(w->up, i) != i) continue;
        n_chains++;
        if (w->sum[i] > most) most = w->sum[i];
    }
    return n_chains >= 2 && 4 * most <= 3 * total ? total - most : 0;
}

/* Sections in the run of small steps [a, b). A section ends where two
 * chains that hold work meet (a bidirectional LSTM's directions, at the
 * kernel that joins their outputs); it begins at whichever of the next
 * few steps leaves the most work off the critical path: from the run's
 * first step, the two directions descend from one embedding kernel and
 * are one chain, from the step after it two. */
static ts_status scan_run(ts_cpu_program *p, window *w, int a, int b, const int64_t *work, ts_err *err)
{
    enum { STARTS = 8 };
    int pos = a, end;
    while (b - pos >= 2) {
        int best = -1;
        int64_t gain = 0;
        for (int s = pos; s < b - 1 && s < pos + STARTS; s++) {
            const int64_t g = trial(p, w, s, b, work, &end);
            if (g > gain) gain = g, best = s;
        }
        if (best < 0) {   /* none here: on past the first meeting */
            trial(p, w, pos, b, work, &end);
            pos = end;
            continue;
        }
        trial(p, w, best, b, work, &end);
        TS_TRY(close_section(p, w, end, work, err));
        pos = end;
    }
    return TS_OK;
}

/* Whether step j reads what step k writes. */
static bool reads_from(const ts_cpu_program *p, const ts_cpu_step *j, const ts_cpu_step *k)
{
    for (int a = 0; a < k->kernel->n_bufs; a++) {
        if (!k->kernel->bufs[a].written) continue;
        const ts_value *w = dep_value(p, k->kernel->bufs[a].v);
        for (int b = 0; b < j->kernel->n_bufs; b++)
            if (dep_value(p, j->kernel->bufs[b].v) == w) return true;
    }
    return false;
}

/* A kernel step too large for a section that splits a run of small ones
 * and reads nothing the run before it writes moves up ahead of that run,
 * so that the two runs become one: a bidirectional LSTM's backward
 * input projection sat between the forward steps and the backward ones.
 * Before the last-use table is made; not with collectives, whose order
 * is the program's. */
void ts_cpu_hoist_steps(ts_cpu_program *p)
{
    if (p->collectives) return;
    for (int j = 1; j + 1 < p->n_steps; j++) {
        const ts_cpu_step *sj = &p->steps[j];
        if (!sj->kernel || small_work(p, sj) >= 0 || small_work(p, &p->steps[j - 1]) < 0 ||
            small_work(p, &p->steps[j + 1]) < 0)
            continue;
        int to = j;
        while (to > 0 && small_work(p, &p->steps[to - 1]) >= 0 && !reads_from(p, sj, &p->steps[to - 1])) to--;
        if (to == j) continue;
        const ts_cpu_step moved = *sj;
        memmove(&p->steps[to + 1], &p->steps[to], sizeof *p->steps * (size_t)(j - to));
        p->steps[to] = moved;
    }
}

ts_status ts_cpu_find_sections(ts_cpu_program *p, ts_err *err)
{
    p->n_sections = 0;
    const size_t nv = p->g->next_value_id ? p->g->next_value_id : 1, ns = (size_t)p->n_steps + 1;
    int64_t *work = ts_mem_alloc(sizeof *work * ns);
    window w = {0};
    w.up = ts_mem_alloc(sizeof *w.up * ns);
    w.next_part = ts_mem_alloc(sizeof *w.next_part * ns);
    w.writer = ts_mem_alloc(sizeof *w.writer * nv);
    w.sum = ts_mem_alloc(sizeof *w.sum * ns);
    w.touched = ts_mem_alloc(sizeof *w.touched * nv);
    p->section_of = ts_mem_alloc(sizeof *p->section_of * ns);
    p->sections = ts_mem_zalloc(sizeof *p->sections * (ns / 2 + 1));
    ts_status s = work && w.up && w.next_part && w.writer && w.sum && w.touched && p->section_of && p->sections
                      ? TS_OK
                      : ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (size_t i = 0; s == TS_OK && i < nv; i++) w.writer[i] = -1;
    for (int i = 0; s == TS_OK && i < p->n_steps; i++) {
        work[i] = small_work(p, &p->steps[i]);
        p->section_of[i] = -1;
    }
    for (int i = 0; s == TS_OK && i < p->n_steps;) {
        int j = i;
        while (j < p->n_steps && work[j] >= 0) j++;
        if (j - i >= 2) s = scan_run(p, &w, i, j, work, err);
        i = j > i ? j : i + 1;
    }
    ts_mem_free(work);
    ts_mem_free(w.up);
    ts_mem_free(w.next_part);
    ts_mem_free(w.writer);
    ts_mem_free(w.sum);
    ts_mem_free(w.touched);
    return s;
}

void ts_cpu_sections_free(ts_cpu_program *p)
{
    for (int i = 0; p->sections && i < p->n_sections; i++) {
        ts_mem_free(p->sections[i].chain_of);
        ts_mem_free(p->sections[i].chain_work);
    }
    ts_mem_free(p->sections);
    ts_mem_free(p->section_of);
    p->sections = NULL;
    p->section_of = NULL;
    p->n_sections = 0;
}
