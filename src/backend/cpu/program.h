/* program.h — the inside of a compiled CPU program, shared by program.c
 * (compiling) and run.c (running). */
#ifndef TS_BACKEND_CPU_PROGRAM_H
#define TS_BACKEND_CPU_PROGRAM_H

#include "backend/cpu/cpu.h"
#include "lower/plan.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct ts_jit_module ts_jit_module;
/* A kernel's D: its run-time dims, then its parameters (ts_emit_c_params) */
enum { TS_CPU_MAX_D = 64 };
typedef void (*ts_kernel_fn)(void *const *bufs, const int64_t *D, int ith, int nth, void *ws);
typedef size_t (*ts_kernel_ws_fn)(const int64_t *D);
typedef size_t (*ts_kernel_pbsize_fn)(void *const *bufs, const int64_t *D, int nth);
typedef void (*ts_kernel_pack_fn)(void *const *bufs, const int64_t *D, float *dst, int ith, int nth);

/* A constant GEMM operand packed once for the program's lifetime (D26):
 * filled by the first run that reaches the step (under `lock`), read by
 * every later one; `data` is published with release order, so a run that
 * sees it non-NULL sees the packed floats. */
typedef struct ts_cpu_packed {
    _Atomic(float *) data;   /* from ts_mem_alloc_aligned */
    pthread_mutex_t lock;
} ts_cpu_packed;

/* One step: a generated kernel (kernel, fn) or a fallback node (neither). */
typedef struct ts_cpu_step {
    const ts_group *group;
    ts_lkernel *kernel;
    ts_kernel_fn fn;
    /* the name its code is compiled under: the kernel's own, or that of
     * an earlier kernel with the same C (then dup: not emitted, D119) */
    const char *sym;
    bool dup;
    size_t code_bytes;       /* the size of its C, to balance the units */
    int64_t elem_cost;       /* a loop or row kernel's cost per element, in simple ops' units (>= 1, D160) */
    int n_params;            /* a template kernel's parameters, in D after its dims (ts_emit_c_params, D186) */
    ts_kernel_ws_fn ws_fn;   /* templates: workspace bytes per thread */
    ts_kernel_pbsize_fn pbsize_fn;   /* a GEMM with a constant B: its packed size and packer ... */
    ts_kernel_pack_fn pack_fn;
    ts_cpu_packed *packed;           /* ... and the packed copy, or all three NULL */
    bool packed_shared;              /* packed is an earlier step's (the same B, packed alike) */
    /* a CONTROL step (if, while): each region compiled as a program of
     * its own, over a graph that views the region as its body (D115) */
    int n_regions;
    struct ts_cpu_program **regions;
    ts_graph *region_graphs;
} ts_cpu_step;

/* A run of small kernel steps [first, last] whose dependences make
 * n_chains independent chains (sections.c, D139): chain_of[step - first],
 * chain_work[chain] the chain's estimated work. */
typedef struct ts_cpu_section {
    int first, last;
    int n_chains;
    int *chain_of;
    double *chain_work;
} ts_cpu_section;

struct ts_cpu_program {
    const ts_graph *g;
    ts_plan *plan;          /* fusion and kernels (lower/plan.h); steps[i] is plan->steps[i] with its code */
    const ts_fusion *fusion;   /* plan->fusion */
    int n_steps;
    ts_cpu_step *steps;
    int *last_use;          /* by value id: the last step reading it; n_steps for graph results; -1 unused */
    int n_sections;
    ts_cpu_section *sections;
    int *section_of;        /* by step: its section, or -1 */
    int n_consts;           /* the stored constants no step computes, bound by every run as they are */
    const ts_value **consts;
    bool collectives;       /* the body holds a collective (binds `world`) */
    ts_jit_module *mod;
    int n_kernels, n_fallback;
    bool cache_hit;
    double compile_ms;
};

/* The program's sections (sections.c): steps reordered first, then the
 * last-use table made, then the sections found. */
void ts_cpu_hoist_steps(ts_cpu_program *p);
ts_status ts_cpu_find_sections(ts_cpu_program *p, ts_err *err);
void ts_cpu_sections_free(ts_cpu_program *p);

#endif
