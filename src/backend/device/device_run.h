/* device_run.h — what the accelerator targets share (D177): a module's
 * plan and program, the device arena placed by the static memory plan,
 * where each value lives (device, host or both), launches, and the nodes
 * the dialect does not generate run on the interpreter's kernels on host
 * copies. A target (backend/opencl, backend/cuda) supplies a ts_devapi:
 * its emitter, program build, memory, copies and launch; everything else
 * is written once here and tested on every target through the one that
 * runs in CI (OpenCL on PoCL).
 *
 * Device memory is an opaque handle (a cl_mem, a CUdeviceptr); a kernel
 * gets a handle and an element offset per buffer and its dims as int64
 * (the dialects' shared signature, emit_cl.h / emit_cuda.h). */
#ifndef TS_BACKEND_DEVICE_RUN_H
#define TS_BACKEND_DEVICE_RUN_H

#include "backend/backend.h"
#include "lower/loop.h"

typedef struct ts_devapi {
    const char *name;   /* the target: error messages start "NAME: " */
    /* which nodes the dialect generates (fusion's question) */
    bool (*compiles)(const ts_node *n);
    /* append the program for kernels[0..n) (preamble, then each) */
    ts_status (*emit)(ts_buf *out, int n, ts_lkernel *const *kernels, ts_err *err);
    /* build source; kernels[i] the handle of the function names[i] */
    ts_status (*build)(const char *src, int n, const char *const *names, void **prog, void **kernels, ts_err *err);
    void (*free_program)(void *prog, int n, void **kernels);
    /* a buffer of bytes (0 allowed) with host's bytes in it, or uninitialised
     * (host NULL) */
    ts_status (*alloc)(size_t bytes, const void *host, void **mem, ts_err *err);
    void (*release)(void *mem);
    /* bytes from mem at byte offset off into dst (waits for the launches
     * before it) */
    ts_status (*download)(void *dst, void *mem, size_t off, size_t bytes, ts_err *err);
    /* bytes from src at byte offset src_off to dst at dst_off, on the
     * device, in order with the launches */
    ts_status (*copy)(void *dst, size_t dst_off, void *src, size_t src_off, size_t bytes, ts_err *err);
    /* launch kernel over `work` elements of output: mems[i] and offs[i]
     * (elements) per buffer, dims[j] per dim */
    ts_status (*launch)(void *kernel, int n_bufs, void *const *mems, const int64_t *offs, int n_dims,
                        const int64_t *dims, int64_t work, ts_err *err);
    /* wait for everything queued */
    void (*finish)(void);
} ts_devapi;

/* The backend slots, over api (the target's compile and probe make sure
 * its device is there first). */
ts_status ts_dev_compile(const ts_devapi *api, const ts_graph *g, ts_module **out, ts_err *err);
ts_status ts_dev_run(ts_module *m, int n_in, ts_tensor *const *in, int n_out, ts_tensor **out, int64_t *peak,
                     ts_err *err);
void ts_dev_free(ts_module *m);
void ts_dev_stats(const ts_module *m, ts_module_stats *out);
/* describe: `lang` (the target's language; "c" too) is the program,
 * "loops" the plan's listing. */
ts_status ts_dev_describe(const ts_devapi *api, const char *lang, const ts_graph *g, const char *what, char **text,
                          ts_err *err);

#endif
