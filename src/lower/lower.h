/* lower.h — from fusion groups to loop IR kernels (lower.c), and the
 * heuristic schedule applied to them (sched.c). */
#ifndef TS_LOWER_LOWER_H
#define TS_LOWER_LOWER_H

#include "lower/fuse.h"
#include "lower/loop.h"

/* The kernel computing group g of f (not FALLBACK), named `name`. */
ts_status ts_lower_group(ts_lprog *p, const ts_fusion *f, const ts_group *g, const char *name, ts_lkernel **out,
                         ts_err *err);

/* Mark the loops: the outermost loop of each nest is split across threads,
 * the innermost (unit-stride) loop is the vector loop. The seam for
 * tuning: a schedule is only these marks (and, later, tile sizes). */
void ts_schedule(ts_lkernel *k);

#endif
