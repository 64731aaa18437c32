/* registry.c — the targets, by name. The first is the default target of
 * a session (ts_session_new with a NULL target); a new target adds one
 * line here and its own folder (docs/backends.md). */
#include "backend/backend.h"

#include <string.h>

extern const ts_backend ts_backend_cpu;      /* backend/cpu/backend_cpu.c */
extern const ts_backend ts_backend_interp;   /* backend/interp/backend_interp.c */
extern const ts_backend ts_backend_opencl;   /* backend/opencl/backend_opencl.c */
extern const ts_backend ts_backend_cuda;     /* backend/cuda/backend_cuda.c */

static const ts_backend *const targets[] = {
    &ts_backend_cpu,
    &ts_backend_opencl,
    &ts_backend_cuda,
    &ts_backend_interp,
};

enum { N_TARGETS = sizeof targets / sizeof targets[0] };

int ts_backend_count(void) { return N_TARGETS; }

const ts_backend *ts_backend_at(int i) { return i >= 0 && i < N_TARGETS ? targets[i] : NULL; }

const ts_backend *ts_backend_find(const char *name)
{
    for (int i = 0; name && i < N_TARGETS; i++)
        if (strcmp(targets[i]->name, name) == 0) return targets[i];
    return NULL;
}

const ts_backend *ts_backend_fallback(void) { return &ts_backend_interp; }
