/* lower.h — from fusion groups to loop IR kernels (lower.c), and the
 * heuristic schedule applied to them (sched.c). */
#ifndef TS_LOWER_LOWER_H
#define TS_LOWER_LOWER_H

#include "lower/fuse.h"
#include "lower/loop.h"

/* The kernel computing group g of f (not FALLBACK), named `name`. */
ts_status ts_lower_group(ts_lprog *p, const ts_fusion *f, const ts_group *g, const char *name, ts_lkernel **out,
                         ts_err *err);

/* Whether contraction n (dot, conv) runs as a runtime template (f32, and
 * for dot, axes that merge into one strided index per role). */
bool ts_contract_template(const ts_node *n);
/* Whether operand i of template dot n, seen through the strided view sv,
 * has each of its roles (batch, contracted, free axes) as one strided
 * index (D26). */
bool ts_dot_operand_strided(const ts_node *n, int i, const ts_sview *sv);
/* Whether template dot n's result, with its axes at strides sv, is one
 * GEMM output: the batch, row and column axes each one strided index, the
 * columns of unit stride. */
bool ts_dot_result_strided(const ts_node *n, const ts_sview *sv);

/* Mark the loops: the outermost loop of each nest is split across threads,
 * the innermost (unit-stride) loop is the vector loop. The seam for
 * tuning: a schedule is only these marks (and, later, tile sizes). */
void ts_schedule(ts_lkernel *k);

#endif
