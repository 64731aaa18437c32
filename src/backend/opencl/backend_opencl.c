/* backend_opencl.c — the OpenCL target: the device, program build,
 * buffers, copies and launches (D176); the module and its runs are the
 * accelerator targets' shared runner (backend/device/device_run.c, D177).
 *
 * The device is the first OpenCL platform's first device, found once per
 * process (PoCL in CI; the driver caches built programs). Launches go to
 * one in-order queue; a kernel runs as min(work / 256, 1024) work-items,
 * each its share of the parallel loop (contiguous on a CPU device,
 * strided on a GPU). A module's kernels get their
 * arguments set per launch: the shared runner serialises a module's runs. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "backend/device/device_run.h"
#include "codegen/opencl/emit_cl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the device ---------------------------------------------------------------------- */

static struct {
    pthread_once_t once;
    cl_int code;              /* CL_SUCCESS, or why there is no device */
    const char *step;         /* the call that failed */
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
    char name[128];
    bool gpu;                 /* a GPU or accelerator: strided loop shares */
} dev = {PTHREAD_ONCE_INIT, 0, NULL, NULL, NULL, NULL, {0}, false};

static void dev_init(void)
{
    cl_platform_id plat;
    cl_uint n = 0;
    dev.step = "clGetPlatformIDs";
    if ((dev.code = clGetPlatformIDs(1, &plat, &n)) != CL_SUCCESS) return;
    if (!n) {
        dev.code = CL_DEVICE_NOT_FOUND;
        return;
    }
    dev.step = "clGetDeviceIDs";
    if ((dev.code = clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev.dev, NULL)) != CL_SUCCESS) return;
    clGetDeviceInfo(dev.dev, CL_DEVICE_NAME, sizeof dev.name - 1, dev.name, NULL);
    cl_device_type type = 0;
    clGetDeviceInfo(dev.dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    dev.gpu = (type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)) != 0;
    dev.step = "clCreateContext";
    dev.ctx = clCreateContext(NULL, 1, &dev.dev, NULL, NULL, &dev.code);
    if (dev.code != CL_SUCCESS) return;
    dev.step = "clCreateCommandQueue";
    dev.q = clCreateCommandQueue(dev.ctx, dev.dev, 0, &dev.code);
}

static ts_status cl_fail(ts_err *err, const char *call, cl_int code)
{
    return ts_err_set(err, TS_ERR_RUNTIME, "opencl: %s failed (error %d)", call, (int)code);
}

static ts_status device(ts_err *err)
{
    pthread_once(&dev.once, dev_init);
    if (dev.code == CL_SUCCESS) return TS_OK;
    return ts_err_set(err, TS_ERR_TOOLCHAIN,
                      "opencl: no usable OpenCL device (%s: error %d); install an OpenCL driver, e.g. Debian's "
                      "pocl-opencl-icd",
                      dev.step, (int)dev.code);
}

/* ---- programs, memory, launches ------------------------------------------------------ */

/* A CPU device's work-items take contiguous shares of a parallel loop (a
 * CPU thread's cache lines: PoCL); a GPU's, strided ones (coalesced).
 * TS_OPENCL_STRIDED=1 asks for the GPU's shape on any device, so that CI
 * runs the code a GPU gets on PoCL. (Without a device, `describe` shows
 * the CPU shape.) */
static ts_status emit(ts_buf *out, int n, ts_lkernel *const *kernels, ts_err *err)
{
    const char *e = getenv("TS_OPENCL_STRIDED");
    bool strided = dev.gpu || (e && strcmp(e, "1") == 0);
    return strided ? ts_emit_cl_strided(out, n, kernels, err) : ts_emit_cl(out, n, kernels, err);
}

static void free_program(void *prog, int n, void **kernels)
{
    for (int i = 0; i < n; i++)
        if (kernels[i]) clReleaseKernel(kernels[i]);
    clReleaseProgram(prog);
}

static ts_status build(const char *src, int n, const char *const *names, void **prog, void **kernels, ts_err *err)
{
    cl_int e;
    cl_program p = clCreateProgramWithSource(dev.ctx, 1, &src, NULL, &e);
    if (e != CL_SUCCESS) return cl_fail(err, "clCreateProgramWithSource", e);
    const char *flags = getenv("TS_CLFLAGS") ? getenv("TS_CLFLAGS") : "-cl-std=CL1.2";
    if ((e = clBuildProgram(p, 1, &dev.dev, flags, NULL, NULL)) != CL_SUCCESS) {
        char log[2048] = {0};
        clGetProgramBuildInfo(p, dev.dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        clReleaseProgram(p);
        return ts_err_set(err, TS_ERR_INTERNAL, "opencl: the generated program does not build (error %d): %.1500s",
                          (int)e, log);
    }
    *prog = p;
    for (int i = 0; i < n; i++) {
        kernels[i] = clCreateKernel(p, names[i], &e);
        if (e != CL_SUCCESS) return cl_fail(err, "clCreateKernel", e);   /* the module frees what there is */
    }
    return TS_OK;
}

static ts_status alloc(size_t bytes, const void *host, void **mem, ts_err *err)
{
    cl_int e;
    /* a zero-byte buffer is invalid in OpenCL: empty values get one byte */
    *mem = clCreateBuffer(dev.ctx, CL_MEM_READ_WRITE | (host && bytes ? CL_MEM_COPY_HOST_PTR : 0), bytes ? bytes : 1,
                          bytes ? (void *)host : NULL, &e);
    return e == CL_SUCCESS ? TS_OK : cl_fail(err, "clCreateBuffer", e);
}

static void release(void *mem)
{
    clReleaseMemObject(mem);
}

static ts_status download(void *dst, void *mem, size_t off, size_t bytes, ts_err *err)
{
    cl_int e = clEnqueueReadBuffer(dev.q, mem, CL_TRUE, off, bytes, dst, 0, NULL, NULL);
    return e == CL_SUCCESS ? TS_OK : cl_fail(err, "clEnqueueReadBuffer", e);
}

static ts_status copy(void *dst, size_t dst_off, void *src, size_t src_off, size_t bytes, ts_err *err)
{
    cl_int e = clEnqueueCopyBuffer(dev.q, src, dst, src_off, dst_off, bytes, 0, NULL, NULL);
    return e == CL_SUCCESS ? TS_OK : cl_fail(err, "clEnqueueCopyBuffer", e);
}

static ts_status launch(void *kernel, int n_bufs, void *const *mems, const int64_t *offs, int n_dims,
                        const int64_t *dims, int64_t work, ts_err *err)
{
    cl_kernel k = kernel;
    cl_int e = CL_SUCCESS;
    for (int j = 0; e == CL_SUCCESS && j < n_bufs; j++) {
        cl_long off = offs[j];
        e = clSetKernelArg(k, (cl_uint)(2 * j), sizeof(cl_mem), &mems[j]);
        if (e == CL_SUCCESS) e = clSetKernelArg(k, (cl_uint)(2 * j + 1), sizeof off, &off);
    }
    for (int j = 0; e == CL_SUCCESS && j < n_dims; j++) {
        cl_long d = dims[j];
        e = clSetKernelArg(k, (cl_uint)(2 * n_bufs + j), sizeof d, &d);
    }
    if (e != CL_SUCCESS) return cl_fail(err, "clSetKernelArg", e);
    size_t g = (size_t)(work / 256 < 1 ? 1 : work / 256 > 1024 ? 1024 : work / 256);
    e = clEnqueueNDRangeKernel(dev.q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
    return e == CL_SUCCESS ? TS_OK : cl_fail(err, "clEnqueueNDRangeKernel", e);
}

static void finish(void)
{
    clFinish(dev.q);
}

static const ts_devapi api = {
    .name = "opencl",
    .compiles = ts_emit_cl_compiles,
    .emit = emit,
    .build = build,
    .free_program = free_program,
    .alloc = alloc,
    .release = release,
    .download = download,
    .copy = copy,
    .launch = launch,
    .finish = finish,
};

/* ---- the target ---------------------------------------------------------------------- */

static ts_status compile(const ts_graph *g, const ts_session_opts *o, ts_module **out, ts_err *err)
{
    (void)o;
    TS_TRY(device(err));
    return ts_dev_compile(&api, g, out, err);
}

static ts_status describe(const ts_graph *g, const char *what, char **text, ts_err *err)
{
    return ts_dev_describe(&api, "opencl", g, what, text, err);
}

static ts_status probe(const ts_session_opts *o, ts_err *err)
{
    (void)o;
    return device(err);
}

const ts_backend ts_backend_opencl = {
    .name = "opencl",
    .compile = compile,
    .run = ts_dev_run,
    .free = ts_dev_free,
    .compiles = ts_emit_cl_compiles,
    .stats = ts_dev_stats,
    .describe = describe,
    .probe = probe,
};
