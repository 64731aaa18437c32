/* plan.h — the static memory plan: every intermediate buffer of a compiled
 * program gets an offset in one arena, so a run allocates nothing.
 *
 * Steps are the positions of kernel launches in program order. A buffer is
 * live from the step that first writes it to the step that last reads it,
 * both inclusive; two buffers live at a common step get disjoint bytes,
 * unless one takes the other over in place (below). Sizes are concrete
 * bytes: the caller resolves symbolic sizes for the run first, and plans
 * again when they change (planning is O(n log n) for realistic programs). */
#ifndef TS_PLAN_H
#define TS_PLAN_H

#include "core/core.h"

/* Offsets and the arena size are multiples of this. */
#define TS_PLAN_ALIGN 64

typedef struct ts_plan_buf {
    int64_t size;      /* bytes (>= 0) */
    int first, last;   /* steps where it is written first and read last (inclusive, 0 <= first <= last) */
    int reuse;         /* -1, or a buffer whose bytes this one may take over in place when that
                        * one's last == this one's first (an elementwise kernel reading that and
                        * writing this) */
} ts_plan_buf;

/* Assign offsets[i] (64-byte aligned) in one arena of *arena_bytes bytes
 * such that buffers with overlapping lifetimes do not overlap in memory.
 *
 * In place: a request b.reuse = a is honoured — b gets a's offset — when
 * a.last == b.first, b.size <= a.size, and no other buffer took a over
 * before (requests are considered in index order; chains a -> b -> c are
 * fine). A request that is not honoured is not an error: b is placed like
 * any other buffer. ts_plan_in_place(..., b) tells which.
 *
 * Placement is greedy by size (TFLite's arena planner; Pisarchyk & Lee,
 * "Efficient Memory Management for Deep Neural Net Inference", 2020):
 * largest first, each into the smallest gap among the buffers already
 * placed that are live at the same time, or above them all. Deterministic:
 * ties go by first step, then index. Zero-size buffers get offset 0.
 *
 * Errors: TS_ERR_INVALID_ARG for a malformed buffer (negative size, first >
 * last, a reuse index out of range), TS_ERR_OOM when memory or the 64-bit
 * offset arithmetic runs out. */
ts_status ts_plan_assign(int n, const ts_plan_buf *bufs, int64_t *offsets, int64_t *arena_bytes,
                         ts_err *err);

/* Whether ts_plan_assign honours bufs[b].reuse (same rule, same result). */
bool ts_plan_in_place(int n, const ts_plan_buf *bufs, int b);

/* The largest sum of (aligned) sizes of buffers live at one step: no plan
 * without in-place reuse can use a smaller arena. For reports and tests. */
int64_t ts_plan_lower_bound(int n, const ts_plan_buf *bufs);

#endif
