/* test_plan.c — the static memory plan: small cases by hand, in-place
 * rules, malformed input, then random programs checked by brute force (no
 * two buffers live at once share a byte, unless one took the other over in
 * place; aligned; inside the arena; never below the live-bytes lower
 * bound; deterministic), with the arena / lower-bound ratio printed, and
 * the time for thousands of buffers. */
#include "check.h"
#include "core/clock.h"
#include "core/core.h"
#include "runtime/plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers --------------------------------------------------------------- */

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int rnd(int n) { return (int)(next() % (uint64_t)n); }

static ts_plan_buf B(int64_t size, int first, int last, int reuse)
{
    return (ts_plan_buf){size, first, last, reuse};
}

/* Union-find of honoured in-place requests, as the test sees them. */
static int root(int *rep, int i)
{
    while (rep[i] != i) i = rep[i];
    return i;
}

/* Check a plan by brute force; false (with a message) on the first fault. */
static bool plan_ok(int n, const ts_plan_buf *b, const int64_t *off, int64_t arena)
{
    int *rep = malloc(sizeof *rep * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) rep[i] = i;
    for (int i = 0; i < n; i++)
        if (ts_plan_in_place(n, b, i)) rep[root(rep, i)] = root(rep, b[i].reuse);
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        if (off[i] % TS_PLAN_ALIGN || off[i] < 0 || off[i] + b[i].size > arena) {
            fprintf(stderr, "buffer %d: offset %lld size %lld arena %lld\n", i, (long long)off[i],
                    (long long)b[i].size, (long long)arena);
            ok = false;
        }
        for (int j = i + 1; j < n && ok; j++) {
            bool live = b[i].first <= b[j].last && b[j].first <= b[i].last;
            bool mem = off[i] < off[j] + b[j].size && off[j] < off[i] + b[i].size;
            if (live && mem && root(rep, i) != root(rep, j)) {
                fprintf(stderr, "buffers %d and %d overlap: [%d,%d] at %lld+%lld, [%d,%d] at %lld+%lld\n", i,
                        j, b[i].first, b[i].last, (long long)off[i], (long long)b[i].size, b[j].first,
                        b[j].last, (long long)off[j], (long long)b[j].size);
                ok = false;
            }
        }
    }
    free(rep);
    return ok;
}

/* Plan, check, and return arena (or -1 on failure). */
static int64_t plan_checked(int n, const ts_plan_buf *b, int64_t *off)
{
    int64_t arena = -1;
    ts_err err = {0};
    ts_status s = ts_plan_assign(n, b, off, &arena, &err);
    CHECK_MSG(s == TS_OK, "%s", err.msg);
    if (s != TS_OK) return -1;
    CHECK(plan_ok(n, b, off, arena));
    return arena;
}

/* The peer: first fit in program order (by first step), brute force —
 * what a planner without size ordering gets. Returns the arena. */
static int64_t first_fit_arena(int n, const ts_plan_buf *b)
{
    int *order = malloc(sizeof *order * (size_t)n);
    int64_t *off = malloc(sizeof *off * (size_t)n), arena = 0;
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 1; i < n; i++)  /* insertion sort by first step, stable */
        for (int j = i; j > 0 && b[order[j - 1]].first > b[order[j]].first; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int i = 0; i < n; i++) {
        int x = order[i];
        int64_t size = (b[x].size + 63) / 64 * 64, at = 0;
        for (bool moved = true; moved;) {  /* bump past every conflict until none is left */
            moved = false;
            for (int k = 0; k < i; k++) {
                int y = order[k];
                int64_t sy = (b[y].size + 63) / 64 * 64;
                if (b[x].first <= b[y].last && b[y].first <= b[x].last && at < off[y] + sy && off[y] < at + size) {
                    at = off[y] + sy;
                    moved = true;
                }
            }
        }
        off[x] = at;
        if (at + size > arena) arena = at + size;
    }
    free(order);
    free(off);
    return arena;
}

/* ---- by hand ----------------------------------------------------------------- */

static void test_small(void)
{
    int64_t off[8], arena = -1;
    CHECK(ts_plan_assign(0, NULL, off, &arena, NULL) == TS_OK && arena == 0);

    ts_plan_buf one[] = {B(100, 0, 3, -1)};
    CHECK(plan_checked(1, one, off) == 128 && off[0] == 0);

    /* disjoint lifetimes share the bytes; overlapping ones stack */
    ts_plan_buf two[] = {B(64, 0, 1, -1), B(64, 2, 3, -1), B(64, 1, 2, -1)};
    CHECK(plan_checked(3, two, off) == 128);
    CHECK(off[0] == off[1] && off[2] != off[0]);

    /* best fit: A at 0, then B, C, D stack above it (C lives at step 0
     * only), leaving from step 1 a 256-byte hole under B and a 64-byte hole
     * between B and D; E takes the 64-byte one */
    ts_plan_buf fit[] = {B(256, 0, 0, -1), B(64, 0, 9, -1), B(64, 0, 0, -1), B(64, 0, 9, -1), B(64, 1, 9, -1)};
    CHECK(plan_checked(5, fit, off) == 448);
    CHECK(off[1] == 256 && off[2] == 320 && off[3] == 384 && off[4] == 320);

    /* zero-size buffers cost nothing */
    ts_plan_buf z[] = {B(0, 0, 5, -1), B(64, 0, 5, -1)};
    CHECK(plan_checked(2, z, off) == 64);
}

static void test_in_place(void)
{
    int64_t off[8];
    /* a chain a -> b -> c: one slot */
    ts_plan_buf chain[] = {B(256, 0, 1, -1), B(256, 1, 2, 0), B(200, 2, 3, 1), B(64, 0, 3, -1)};
    CHECK(plan_checked(4, chain, off) == 320);
    CHECK(off[0] == off[1] && off[1] == off[2]);
    CHECK(ts_plan_in_place(4, chain, 1) && ts_plan_in_place(4, chain, 2) && !ts_plan_in_place(4, chain, 3));

    /* not honoured: larger, lifetimes not touching, a second taker */
    ts_plan_buf no[] = {
        B(128, 0, 1, -1), B(256, 1, 2, 0),   /* b bigger than a */
        B(128, 0, 3, -1), B(128, 2, 4, 2),   /* a.last 3 != b.first 2 */
        B(128, 0, 5, -1), B(128, 5, 6, 4), B(128, 5, 7, 4),  /* two takers: the first wins */
    };
    plan_checked(7, no, off);
    CHECK(!ts_plan_in_place(7, no, 1) && !ts_plan_in_place(7, no, 3));
    CHECK(ts_plan_in_place(7, no, 5) && !ts_plan_in_place(7, no, 6));
    CHECK(off[5] == off[4] && off[6] != off[4]);

    /* a cycle of requests (all at one step) merges once and is still valid */
    ts_plan_buf cyc[] = {B(64, 3, 3, 1), B(64, 3, 3, 0)};
    CHECK(plan_checked(2, cyc, off) == 64);
}

static void test_errors(void)
{
    int64_t off[4], arena = 1;
    ts_err err = {0};
    ts_plan_buf neg[] = {B(-1, 0, 0, -1)};
    CHECK(ts_plan_assign(1, neg, off, &arena, &err) == TS_ERR_INVALID_ARG && strstr(err.msg, "size -1"));
    ts_err_clear(&err);
    ts_plan_buf rev[] = {B(1, 3, 2, -1)};
    CHECK(ts_plan_assign(1, rev, off, &arena, &err) == TS_ERR_INVALID_ARG && strstr(err.msg, "step 3 to 2"));
    ts_err_clear(&err);
    ts_plan_buf bad[] = {B(1, 0, 0, 7)};
    CHECK(ts_plan_assign(1, bad, off, &arena, &err) == TS_ERR_INVALID_ARG && strstr(err.msg, "reuses"));
    ts_err_clear(&err);
    CHECK(ts_plan_assign(-1, NULL, off, &arena, &err) == TS_ERR_INVALID_ARG);
    ts_err_clear(&err);
    ts_plan_buf huge[] = {B(INT64_MAX / 2, 0, 1, -1), B(INT64_MAX / 2, 0, 1, -1), B(INT64_MAX / 2, 1, 1, -1)};
    CHECK(ts_plan_assign(3, huge, off, &arena, &err) == TS_ERR_OOM && strstr(err.msg, "2^63"));
    CHECK(ts_plan_lower_bound(3, huge) == INT64_MAX);
    ts_err_clear(&err);
    ts_plan_buf big[] = {B(INT64_MAX, 0, 1, -1)};
    CHECK(ts_plan_assign(1, big, off, &arena, &err) == TS_ERR_OOM);
}

/* ---- random programs ------------------------------------------------------- */

/* Uniform random lifetimes and log-uniform sizes; with `reuse`, some
 * buffers start where another ends and ask for its bytes. */
static void random_bufs(int n, int steps, bool reuse, ts_plan_buf *b)
{
    for (int i = 0; i < n; i++) {
        int f = rnd(steps), len = rnd(1 + steps / 4);
        b[i] = B((int64_t)1 << rnd(16), f, f + len < steps ? f + len : steps - 1, -1);
        b[i].size += rnd(100);
        if (reuse && i > 0 && rnd(3) == 0) {
            int a = rnd(i);
            b[i].first = b[a].last;
            if (b[i].last < b[i].first) b[i].last = b[i].first;
            b[i].size = b[a].size - rnd(2) * rnd(64);
            if (b[i].size < 0) b[i].size = 0;
            b[i].reuse = a;
        }
    }
}

/* A network-like program: step t writes buffer t, which step t+1 reads;
 * some buffers are also read k steps later (skip connections); sizes come
 * from a few stage widths; elementwise steps ask to work in place. */
static void network_bufs(int n, ts_plan_buf *b)
{
    int64_t widths[] = {1 << 20, 1 << 19, 1 << 18, 1 << 16, 3 << 14};
    for (int t = 0; t < n; t++) b[t] = B(widths[(t * 5) / n] * (1 + rnd(4)), t, t + 1 < n ? t + 1 : t, -1);
    for (int t = 0; t < n; t++) {
        if (rnd(5) == 0) {
            int until = t + 2 + rnd(8);
            if (until < n && until > b[t].last) b[t].last = until;
        }
    }
    for (int t = 1; t < n; t++)
        if (rnd(2) == 0 && b[t - 1].last == t) {
            b[t].size = b[t - 1].size;
            b[t].reuse = t - 1;
        }
}

static void test_random(void)
{
    enum { MAXN = 300 };
    static ts_plan_buf b[MAXN];
    static int64_t off[MAXN], off2[MAXN];
    double worst = 1, sum = 0, naive = 0, ff = 0;
    int count = 0;
    for (int it = 0; it < 300; it++) {
        int n = 1 + rnd(MAXN), steps = 1 + rnd(120);
        bool reuse = it % 2;
        random_bufs(n, steps, reuse, b);
        int64_t arena = plan_checked(n, b, off);
        if (arena < 0) return;
        /* deterministic */
        int64_t arena2 = -1;
        ts_plan_assign(n, b, off2, &arena2, NULL);
        CHECK(arena2 == arena && memcmp(off, off2, sizeof(int64_t) * (size_t)n) == 0);
        if (!reuse) {
            int64_t lb = ts_plan_lower_bound(n, b);
            CHECK_MSG(arena >= lb, "arena %lld < lower bound %lld", (long long)arena, (long long)lb);
            double r = lb ? (double)arena / (double)lb : 1, total = 0;
            for (int i = 0; i < n; i++) total += (double)((b[i].size + 63) / 64 * 64);
            if (r > worst) worst = r;
            sum += r;
            naive += lb ? total / (double)lb : 1;
            ff += lb ? (double)first_fit_arena(n, b) / (double)lb : 1;
            count++;
        }
    }
    printf("plan: random lifetimes, 150 programs of 1-300 buffers: arena / lower bound mean %.3f, worst %.3f; "
           "peers: first fit in program order %.3f, no reuse at all %.2f\n", sum / count, worst, ff / count,
           naive / count);

    double nsum = 0, nworst = 1, psum = 0, pworst = 1, fsum = 0;
    for (int it = 0; it < 50; it++) {
        int n = 20 + rnd(MAXN - 20);
        network_bufs(n, b);
        int64_t arena = plan_checked(n, b, off);
        if (arena < 0) return;
        for (int i = 0; i < n; i++) b[i].reuse = -1;
        int64_t lb = ts_plan_lower_bound(n, b), plain = plan_checked(n, b, off);
        CHECK(plain >= lb);
        double r = (double)arena / (double)lb, rp = (double)plain / (double)lb;
        fsum += (double)first_fit_arena(n, b) / (double)lb;
        nsum += r;
        psum += rp;
        if (r > nworst) nworst = r;
        if (rp > pworst) pworst = rp;
    }
    printf("plan: network-like chains with skips, 50 programs of 20-300 buffers: arena / lower bound "
           "mean %.3f, worst %.3f (peer: first fit in program order %.3f); with in-place steps honoured %.3f, "
           "worst %.3f\n", psum / 50, pworst, fsum / 50, nsum / 50, nworst);
}

/* Thousands of buffers: time it (the lead plans per distinct size binding). */
static void test_speed(void)
{
    enum { N = 20000 };
    ts_plan_buf *b = malloc(sizeof *b * N);
    int64_t *off = malloc(sizeof *off * N);
    for (int n = 2000; n <= N; n *= 10) {
        network_bufs(n, b);
        int64_t arena = 0;
        double t0 = ts_now_ms();
        ts_status s = ts_plan_assign(n, b, off, &arena, NULL);
        double ms = ts_now_ms() - t0;
        CHECK(s == TS_OK);
        printf("plan: %d network-like buffers in %.2f ms (arena / lower bound %.3f)\n", n, ms,
               (double)arena / (double)ts_plan_lower_bound(n, b));
        CHECK_MSG(ms < 2000, "%.0f ms", ms);
    }
    /* a wide program: 5000 buffers with long random lifetimes */
    random_bufs(5000, 400, false, b);
    int64_t arena = 0;
    double t0 = ts_now_ms();
    CHECK(ts_plan_assign(5000, b, off, &arena, NULL) == TS_OK);
    printf("plan: 5000 random buffers over 400 steps in %.2f ms (arena / lower bound %.3f)\n",
           ts_now_ms() - t0, (double)arena / (double)ts_plan_lower_bound(5000, b));
    free(b);
    free(off);
}

/* ---- allocation failures ------------------------------------------------------ */

static long alloc_count, alloc_fail_at;

static void *failing_alloc(void *ud, void *ptr, size_t n)
{
    (void)ud;
    if (n == 0) {
        free(ptr);
        return NULL;
    }
    if (++alloc_count == alloc_fail_at) return NULL;
    return realloc(ptr, n);
}

static void test_oom(void)
{
    ts_plan_buf b[40];
    int64_t off[40], arena;
    random_bufs(40, 10, true, b);
    for (long k = 1; k < 100; k++) {
        ts_set_allocator(failing_alloc, NULL);
        alloc_count = 0;
        alloc_fail_at = k;
        ts_err err = {0};
        ts_status s = ts_plan_assign(40, b, off, &arena, &err);
        bool hit = alloc_count >= k;
        ts_set_allocator(NULL, NULL);
        CHECK_MSG(hit ? s == TS_ERR_OOM : s == TS_OK, "allocation %ld: %s", k, err.msg);
        if (!hit) break;
    }
}

int main(void)
{
    test_small();
    test_in_place();
    test_errors();
    test_random();
    test_speed();
    test_oom();
    return check_report();
}
