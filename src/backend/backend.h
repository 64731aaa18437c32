/* backend.h — what a target implements, and the registry of targets
 * (registry.c). A session (src/api/session.c) is written once over this
 * interface; a new target is its own folder under src/backend/ plus one
 * line in registry.c (docs/backends.md, D91).
 *
 * A module is a backend's compiled form of one graph (opaque here). The
 * graph outlives it. run may be called from several threads at once on
 * one module; the backend serialises what it must. */
#ifndef TS_BACKEND_H
#define TS_BACKEND_H

#include "tessera.h"

#include "ir/ir.h"

typedef struct ts_module ts_module;

/* What building a module cost: compile wall time in ms, whether a cache
 * served it (1), was missed (0) or nothing was compiled (-1), and how many
 * generated kernels and interpreter-run nodes the module has. */
typedef struct ts_module_stats {
    double compile_ms;
    int cache_hit;
    int kernels, fallbacks;
} ts_module_stats;

typedef struct ts_backend {
    const char *name;      /* the target's name: "cpu", "interp" */

    /* ---- required ---- */
    /* Compile g for this target under o (may be NULL: defaults). */
    ts_status (*compile)(const ts_graph *g, const ts_session_opts *o, ts_module **out, ts_err *err);
    /* One run: in[i] binds graph input i, out[k] receives a new reference
     * to output k; *peak_bytes (may be NULL) the most intermediate bytes
     * alive at once (0 when not measured). */
    ts_status (*run)(ts_module *m, int n_in, ts_tensor *const *in, int n_out, ts_tensor **out,
                     int64_t *peak_bytes, ts_err *err);
    void (*free)(ts_module *m);

    /* ---- optional: NULL means the default in brackets ---- */
    /* Whether its code generator handles node n (op and dtypes): the
     * question the target-neutral driver's fusion asks (lower/plan.h);
     * the nodes it declines run on the interpreter's kernels. [generates
     * no code] */
    bool (*compiles)(const ts_node *n);
    /* [compile_ms 0, cache_hit -1, no kernels, no fallbacks] */
    void (*stats)(const ts_module *m, ts_module_stats *out);
    /* Record per-kernel times of later runs (enable 1) or stop (0), and
     * write them as a Chrome trace. [TS_ERR_UNSUPPORTED naming the target] */
    ts_status (*profile)(ts_module *m, int enable, ts_err *err);
    ts_status (*write_profile)(ts_module *m, const char *path, ts_err *err);
    /* What it makes of g, as text, without running it: what "c" (or the
     * target's language: its generated source) or "loops" (the fusion and
     * loop IR listing). [TS_ERR_UNSUPPORTED: generates no code] */
    ts_status (*describe)(const ts_graph *g, const char *what, char **text, ts_err *err);
    /* Whether this target's toolchain works here at all, as opposed to
     * rejecting one graph: the default target falls back to the
     * interpreter only when this fails with TS_ERR_TOOLCHAIN. [TS_OK] */
    ts_status (*probe)(const ts_session_opts *o, ts_err *err);
} ts_backend;

/* The target named name, or NULL. */
const ts_backend *ts_backend_find(const char *name);
/* The registered targets, in registry order; the first is the default. */
int ts_backend_count(void);
const ts_backend *ts_backend_at(int i);
/* The target the default falls back to when the default's toolchain does
 * not work (the reference interpreter). */
const ts_backend *ts_backend_fallback(void);

#endif
