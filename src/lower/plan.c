/* plan.c — the compiler driver shared by code-generating backends
 * (plan.h): fusion, then one scheduled loop IR kernel per generated group. */
#include "lower/plan.h"

#include "lower/lower.h"

#include <stdio.h>

void ts_plan_free(ts_plan *p)
{
    if (!p) return;
    ts_lprog_free(p->lp);
    ts_fusion_free(p->fusion);
    ts_mem_free(p->steps);
    ts_mem_free(p);
}

static ts_status plan_new(const ts_graph *g, ts_fuse_compiles_fn compiles, bool templates, ts_plan **out,
                          ts_err *err)
{
    ts_plan *p = ts_mem_zalloc(sizeof *p);
    if (!p) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    p->g = g;
    ts_status s = ts_fuse(g, compiles, templates, &p->fusion, err);
    if (s == TS_OK) s = ts_lprog_new(&p->lp, err);
    if (s == TS_OK && !(p->steps = ts_mem_zalloc(sizeof *p->steps * (size_t)(p->fusion->n_groups + 1))))
        s = ts_err_set(err, TS_ERR_OOM, "out of memory");
    for (int i = 0; s == TS_OK && i < p->fusion->n_groups; i++) {
        ts_plan_step *st = &p->steps[p->n_steps++];
        st->group = &p->fusion->groups[i];
        if (st->group->kind == TS_G_FALLBACK) {
            p->n_fallback++;
            continue;
        }
        if (st->group->kind == TS_G_CONTROL) continue;   /* the backend compiles its regions */
        char name[32];
        snprintf(name, sizeof name, "ts_k%d", i);
        s = ts_lower_group(p->lp, p->fusion, st->group, name, &st->kernel, err);
        p->n_kernels++;
    }
    if (s != TS_OK) {
        ts_plan_free(p);
        return s;
    }
    *out = p;
    return TS_OK;
}

ts_status ts_plan_text(const ts_plan *p, char **text, ts_err *err)
{
    ts_buf b = {0};
    ts_fusion_print(&b, p->fusion);
    for (int i = 0; i < p->n_steps; i++)
        if (p->steps[i].kernel) ts_lkernel_print(&b, p->steps[i].kernel);
    if (!b.data) return ts_err_set(err, TS_ERR_OOM, "out of memory");
    *text = b.data;
    return TS_OK;
}

ts_status ts_plan_new(const ts_graph *g, ts_fuse_compiles_fn compiles, ts_plan **out, ts_err *err)
{
    return plan_new(g, compiles, true, out, err);
}

ts_status ts_plan_new_loops(const ts_graph *g, ts_fuse_compiles_fn compiles, ts_plan **out, ts_err *err)
{
    return plan_new(g, compiles, false, out, err);
}
