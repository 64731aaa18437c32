/* plan.c — the static memory plan: greedy by size over lifetime intervals.
 *
 * 1. In-place requests that hold merge buffers into groups (chains a -> b
 *    -> c): a group lives from its first member's first step to its last
 *    member's last step and needs its largest member's bytes.
 * 2. Groups are placed largest first. For each, the groups already placed
 *    whose lifetimes overlap its own are found with a max-segment-tree over
 *    the groups sorted by first step (each node keeps the latest `last`
 *    among the placed groups below it; a query visits only subtrees that
 *    can hold an overlap), sorted by offset, and scanned for the smallest
 *    gap that fits (best fit, as TFLite's SimpleMemoryArena does); with no
 *    gap, the group goes above the highest of them.
 *
 * Cost: O(n log n + sum over groups of k log n), k the number of groups
 * already placed that overlap it — a few dozen in inference programs,
 * whose live sets are small. Wide programs (most of everything live at
 * once) switch to a linear scan in offset order: O(n^2) with a constant of
 * about a nanosecond, below. */
#include "runtime/plan.h"

#include <stdlib.h>
#include <string.h>

/* ---- validation and in-place groups ---------------------------------------- */

static ts_status validate(int n, const ts_plan_buf *b, ts_err *err)
{
    if (n < 0) return ts_err_set(err, TS_ERR_INVALID_ARG, "memory plan: %d buffers", n);
    for (int i = 0; i < n; i++) {
        if (b[i].size < 0)
            return ts_err_set(err, TS_ERR_INVALID_ARG, "memory plan: buffer %d has size %lld", i,
                              (long long)b[i].size);
        if (b[i].size > INT64_MAX - TS_PLAN_ALIGN)
            return ts_err_set(err, TS_ERR_OOM, "memory plan: buffer %d of %lld bytes is too large", i,
                              (long long)b[i].size);
        if (b[i].first < 0 || b[i].first > b[i].last)
            return ts_err_set(err, TS_ERR_INVALID_ARG, "memory plan: buffer %d lives from step %d to %d",
                              i, b[i].first, b[i].last);
        if (b[i].reuse < -1 || b[i].reuse >= n)
            return ts_err_set(err, TS_ERR_INVALID_ARG, "memory plan: buffer %d reuses buffer %d of %d", i,
                              b[i].reuse, n);
    }
    return TS_OK;
}

static int64_t aligned(int64_t size) { return (size + TS_PLAN_ALIGN - 1) / TS_PLAN_ALIGN * TS_PLAN_ALIGN; }

static int find(int *rep, int i)
{
    while (rep[i] != i) {
        rep[i] = rep[rep[i]];
        i = rep[i];
    }
    return i;
}

/* Take up buffer b's in-place request if it holds (see plan.h); rep is a
 * union-find forest over buffers, taken[a] marks buffers taken over. The
 * find check keeps chains from closing into cycles (possible only when
 * every step involved is the same). */
static bool accept(const ts_plan_buf *bufs, int b, int *rep, unsigned char *taken)
{
    int a = bufs[b].reuse;
    if (a < 0 || taken[a] || bufs[a].last != bufs[b].first || bufs[b].size > bufs[a].size) return false;
    int ra = find(rep, a), rb = find(rep, b);
    if (ra == rb) return false;
    taken[a] = 1;
    rep[rb] = ra;
    return true;
}

bool ts_plan_in_place(int n, const ts_plan_buf *bufs, int b)
{
    if (b < 0 || b >= n || validate(n, bufs, NULL) != TS_OK) return false;
    int *rep = ts_mem_alloc(sizeof *rep * (size_t)n);
    unsigned char *taken = ts_mem_zalloc((size_t)n);
    bool yes = false;
    if (rep && taken) {
        for (int i = 0; i < n; i++) rep[i] = i;
        for (int i = 0; i <= b; i++) yes = accept(bufs, i, rep, taken);
    }
    ts_mem_free(rep);
    ts_mem_free(taken);
    return yes;
}

/* ---- sorting keys ---------------------------------------------------------- */

typedef struct by_size { int64_t size; int first, g; } by_size;
typedef struct by_first { int first, g; } by_first;
typedef struct span { int64_t off, end; } span;

static int cmp_size(const void *x, const void *y)
{
    const by_size *a = x, *b = y;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    return (a->g > b->g) - (a->g < b->g);
}

static int cmp_first(const void *x, const void *y)
{
    const by_first *a = x, *b = y;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    return (a->g > b->g) - (a->g < b->g);
}

static int cmp_span(const void *x, const void *y)
{
    const span *a = x, *b = y;
    if (a->off != b->off) return a->off < b->off ? -1 : 1;
    return (a->end > b->end) - (a->end < b->end);
}

/* ---- the planner's state ------------------------------------------------- */

typedef struct planner {
    int m;                 /* groups */
    int64_t *gsize;        /* per group, indexed by its position in bf */
    int *gfirst, *glast;
    int64_t *goff;
    by_first *bf;          /* groups sorted by first step */
    by_size *bs;           /* groups sorted by size, largest first */
    int leaves;            /* a power of two >= m */
    int *tree;             /* max last over placed groups; -1: none */
    span *hits;            /* the overlapping placed groups of one query */
    int nhits;
    int *order;            /* placed groups by (offset, position), once have_order */
    int norder;
    bool have_order;
} planner;

/* Collect placed groups among positions [0, below) whose last >= first. */
static void query(planner *pl, int node, int lo, int hi, int below, int first)
{
    if (lo >= below || pl->tree[node] < first) return;
    if (node >= pl->leaves) {
        pl->hits[pl->nhits++] = (span){pl->goff[lo], pl->goff[lo] + pl->gsize[lo]};
        return;
    }
    int mid = (lo + hi) / 2;
    query(pl, 2 * node, lo, mid, below, first);
    query(pl, 2 * node + 1, mid, hi, below, first);
}

static void mark_placed(planner *pl, int pos)
{
    int node = pl->leaves + pos;
    pl->tree[node] = pl->glast[pos];
    for (node /= 2; node >= 1; node /= 2) {
        int l = pl->tree[2 * node], r = pl->tree[2 * node + 1];
        pl->tree[node] = l > r ? l : r;
    }
}

/* Positions [0, result) of bf have first <= step. */
static int count_first_le(const planner *pl, int step)
{
    int lo = 0, hi = pl->m;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (pl->bf[mid].first <= step) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Best fit among the gaps between the spans (sorted by offset). */
static int64_t best_fit(const span *s, int k, int64_t size)
{
    int64_t best = -1, best_gap = INT64_MAX, cur = 0;
    for (int i = 0; i < k; i++) {
        int64_t gap = s[i].off - cur;
        if (gap >= size && gap < best_gap) {
            best = cur;
            best_gap = gap;
        }
        if (s[i].end > cur) cur = s[i].end;
    }
    return best >= 0 ? best : cur;
}

/* ---- wide programs: a scan in offset order ---------------------------------
 *
 * When most placed groups overlap the one being placed (training graphs:
 * every saved activation is live at the peak), sorting k hits per query
 * costs k log k and the whole plan n^2 log n. Then it is cheaper to keep
 * all placed groups in offset order and scan them, as TFLite does: O(n)
 * per query with a tiny constant. The order array is built on first need
 * and kept by insertion afterwards (a memmove of 4-byte positions). Which
 * way a query goes is predicted from the previous query's hit count; both
 * ways find the same spans in the same order, so the plan does not depend
 * on the prediction. */

static int ilog2(int k)
{
    int l = 0;
    while (k > 1) {
        k >>= 1;
        l++;
    }
    return l;
}

static void order_insert(planner *pl, int pos)
{
    int64_t off = pl->goff[pos];
    int lo = 0, hi = pl->norder;
    while (lo < hi) {  /* after every entry with (offset, position) below (off, pos) */
        int mid = lo + (hi - lo) / 2, q = pl->order[mid];
        if (pl->goff[q] < off || (pl->goff[q] == off && q < pos)) lo = mid + 1;
        else hi = mid;
    }
    memmove(pl->order + lo + 1, pl->order + lo, sizeof *pl->order * (size_t)(pl->norder - lo));
    pl->order[lo] = pos;
    pl->norder++;
}

/* The first `placed` entries of bs (nonzero sizes) into offset order. */
static void build_order(planner *pl, int placed)
{
    pl->norder = 0;
    for (int i = 0; i < placed; i++)
        if (pl->gsize[pl->bs[i].g] > 0) order_insert(pl, pl->bs[i].g);
    pl->have_order = true;
}

static void scan_order(planner *pl, int first, int last)
{
    pl->nhits = 0;
    for (int j = 0; j < pl->norder; j++) {
        int q = pl->order[j];
        if (pl->gfirst[q] <= last && pl->glast[q] >= first)
            pl->hits[pl->nhits++] = (span){pl->goff[q], pl->goff[q] + pl->gsize[q]};
    }
}

/* ---- placing --------------------------------------------------------------- */

static ts_status place_all(planner *pl, int64_t *arena, ts_err *err)
{
    *arena = 0;
    int prev_k = 0, placed = 0;
    for (int i = 0; i < pl->m; i++) {
        int pos = pl->bs[i].g;  /* bs holds positions in bf order */
        int64_t size = pl->gsize[pos];
        if (size == 0) {
            pl->goff[pos] = 0;
            continue;
        }
        if (prev_k >= 32 && (int64_t)prev_k * ilog2(prev_k) > placed / 4) {
            if (!pl->have_order) build_order(pl, i);
            scan_order(pl, pl->gfirst[pos], pl->glast[pos]);
        } else {
            pl->nhits = 0;
            query(pl, 1, 0, pl->leaves, count_first_le(pl, pl->glast[pos]), pl->gfirst[pos]);
            qsort(pl->hits, (size_t)pl->nhits, sizeof *pl->hits, cmp_span);
        }
        prev_k = pl->nhits;
        int64_t off = best_fit(pl->hits, pl->nhits, size);
        if (off > INT64_MAX - size)
            return ts_err_set(err, TS_ERR_OOM, "memory plan: the arena exceeds 2^63 bytes");
        pl->goff[pos] = off;
        if (off + size > *arena) *arena = off + size;
        mark_placed(pl, pos);
        if (pl->have_order) order_insert(pl, pos);
        placed++;
    }
    return TS_OK;
}

/* ---- the entry point ----------------------------------------------------- */

typedef struct scratch {
    int *rep, *gpos;           /* union-find over buffers; a root's group position */
    unsigned char *taken;
    int64_t *rsize;            /* group extents, indexed by root buffer */
    int *rfirst, *rlast;
    planner pl;
} scratch;

static void scratch_free(scratch *s)
{
    void *ps[] = {s->rep, s->gpos, s->taken, s->rsize, s->rfirst, s->rlast, s->pl.gsize, s->pl.gfirst,
                  s->pl.glast, s->pl.goff, s->pl.bf, s->pl.bs, s->pl.tree, s->pl.hits, s->pl.order};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) ts_mem_free(ps[i]);
}

static bool scratch_alloc(scratch *s, int n)
{
    size_t un = (size_t)n;
    int leaves = 1;
    while (leaves < n) leaves *= 2;
    s->pl.leaves = leaves;
    s->rep = ts_mem_alloc(sizeof(int) * un);
    s->gpos = ts_mem_alloc(sizeof(int) * un);
    s->taken = ts_mem_zalloc(un);
    s->rsize = ts_mem_alloc(sizeof(int64_t) * un);
    s->rfirst = ts_mem_alloc(sizeof(int) * un);
    s->rlast = ts_mem_alloc(sizeof(int) * un);
    s->pl.gsize = ts_mem_alloc(sizeof(int64_t) * un);
    s->pl.gfirst = ts_mem_alloc(sizeof(int) * un);
    s->pl.glast = ts_mem_alloc(sizeof(int) * un);
    s->pl.goff = ts_mem_alloc(sizeof(int64_t) * un);
    s->pl.bf = ts_mem_alloc(sizeof(by_first) * un);
    s->pl.bs = ts_mem_alloc(sizeof(by_size) * un);
    s->pl.tree = ts_mem_alloc(sizeof(int) * 2 * (size_t)leaves);
    s->pl.hits = ts_mem_alloc(sizeof(span) * un);
    s->pl.order = ts_mem_alloc(sizeof(int) * un);
    return s->rep && s->gpos && s->taken && s->rsize && s->rfirst && s->rlast && s->pl.gsize &&
           s->pl.gfirst && s->pl.glast && s->pl.goff && s->pl.bf && s->pl.bs && s->pl.tree && s->pl.hits &&
           s->pl.order;
}

/* Merge in-place chains into groups and lay the groups out in first-step
 * order: gpos[root] is a group's position, which indexes every per-group
 * array of the planner. */
static void make_groups(scratch *s, int n, const ts_plan_buf *bufs)
{
    planner *pl = &s->pl;
    for (int i = 0; i < n; i++) s->rep[i] = i;
    for (int b = 0; b < n; b++) accept(bufs, b, s->rep, s->taken);
    int m = 0;
    for (int i = 0; i < n; i++) s->rsize[i] = -1;
    for (int i = 0; i < n; i++) {
        int r = find(s->rep, i);
        int64_t size = aligned(bufs[i].size);
        if (s->rsize[r] < 0) {  /* the first member seen: a new group */
            pl->bf[m++].g = r;
            s->rsize[r] = size;
            s->rfirst[r] = bufs[i].first;
            s->rlast[r] = bufs[i].last;
            continue;
        }
        if (size > s->rsize[r]) s->rsize[r] = size;
        if (bufs[i].first < s->rfirst[r]) s->rfirst[r] = bufs[i].first;
        if (bufs[i].last > s->rlast[r]) s->rlast[r] = bufs[i].last;
    }
    pl->m = m;
    for (int p = 0; p < m; p++) pl->bf[p].first = s->rfirst[pl->bf[p].g];
    qsort(pl->bf, (size_t)m, sizeof *pl->bf, cmp_first);
    for (int p = 0; p < m; p++) {
        int r = pl->bf[p].g;
        s->gpos[r] = p;
        pl->gsize[p] = s->rsize[r];
        pl->gfirst[p] = s->rfirst[r];
        pl->glast[p] = s->rlast[r];
        pl->bs[p] = (by_size){pl->gsize[p], pl->gfirst[p], p};
    }
    qsort(pl->bs, (size_t)m, sizeof *pl->bs, cmp_size);
    for (int i = 0; i < 2 * pl->leaves; i++) pl->tree[i] = -1;
}

ts_status ts_plan_assign(int n, const ts_plan_buf *bufs, int64_t *offsets, int64_t *arena_bytes,
                         ts_err *err)
{
    *arena_bytes = 0;
    TS_TRY(validate(n, bufs, err));
    if (n == 0) return TS_OK;
    scratch s;
    memset(&s, 0, sizeof s);
    ts_status st = TS_OK;
    if (!scratch_alloc(&s, n)) {
        st = ts_err_set(err, TS_ERR_OOM, "memory plan: out of memory for %d buffers", n);
    } else {
        make_groups(&s, n, bufs);
        st = place_all(&s.pl, arena_bytes, err);
        if (st == TS_OK)
            for (int i = 0; i < n; i++) offsets[i] = s.pl.goff[s.gpos[find(s.rep, i)]];
    }
    scratch_free(&s);
    return st;
}

/* ---- the lower bound ------------------------------------------------------ */

typedef struct event { int step; int64_t delta; } event;

static int cmp_event(const void *x, const void *y)
{
    const event *a = x, *b = y;
    if (a->step != b->step) return a->step < b->step ? -1 : 1;
    return (a->delta > b->delta) - (a->delta < b->delta);  /* ends first */
}

int64_t ts_plan_lower_bound(int n, const ts_plan_buf *bufs)
{
    if (n <= 0 || validate(n, bufs, NULL) != TS_OK) return 0;
    event *ev = ts_mem_alloc(sizeof *ev * 2 * (size_t)n);
    if (!ev) return 0;
    for (int i = 0; i < n; i++) {
        ev[2 * i] = (event){bufs[i].first, aligned(bufs[i].size)};
        /* last + 1 cannot overflow in a useful program; saturate anyway */
        ev[2 * i + 1] = (event){bufs[i].last < INT32_MAX ? bufs[i].last + 1 : INT32_MAX,
                                -aligned(bufs[i].size)};
    }
    qsort(ev, 2 * (size_t)n, sizeof *ev, cmp_event);
    int64_t live = 0, peak = 0;
    for (int i = 0; i < 2 * n; i++) {
        if (!ts_i64_add(live, ev[i].delta, &live)) {
            peak = INT64_MAX;  /* more than any arena can hold */
            break;
        }
        if ((i + 1 == 2 * n || ev[i + 1].step != ev[i].step) && live > peak) peak = live;
    }
    ts_mem_free(ev);
    return peak;
}
