/* plan.h — the target-neutral compiler driver: a graph to kernels. Fusion
 * (fuse.c) cuts the body into groups, asking the backend which nodes it
 * generates code for; each generated group becomes one loop IR kernel
 * (lower.c) with its schedule (sched.c). A backend then emits its code from
 * the kernels (the CPU: codegen/cpu, C) and runs the steps in order, the
 * FALLBACK ones on the interpreter's kernels. */
#ifndef TS_LOWER_PLAN_H
#define TS_LOWER_PLAN_H

#include "lower/fuse.h"
#include "lower/loop.h"

/* One step of the plan, in execution order: a group and its kernel, or
 * kernel NULL for a FALLBACK or CONTROL group (the backend compiles a
 * CONTROL group's regions as plans of their own). Kernels are named
 * "ts_k<step>". */
typedef struct ts_plan_step {
    const ts_group *group;
    ts_lkernel *kernel;
} ts_plan_step;

typedef struct ts_plan {
    const ts_graph *g;
    ts_fusion *fusion;
    ts_lprog *lp;              /* owns the kernels */
    int n_steps;
    ts_plan_step *steps;
    int n_kernels, n_fallback;
} ts_plan;

/* Plan g for a backend whose code generator handles the nodes compiles
 * accepts. g must outlive the plan. */
ts_status ts_plan_new(const ts_graph *g, ts_fuse_compiles_fn compiles, ts_plan **out, ts_err *err);
/* The same for a code generator without the CPU's contraction templates
 * (the device dialects): every dot it accepts is lowered to loops. */
ts_status ts_plan_new_loops(const ts_graph *g, ts_fuse_compiles_fn compiles, ts_plan **out, ts_err *err);
void ts_plan_free(ts_plan *p);
/* The fusion and every kernel's loop IR as text (`tessera ir --loops`). */
ts_status ts_plan_text(const ts_plan *p, char **text, ts_err *err);

#endif
