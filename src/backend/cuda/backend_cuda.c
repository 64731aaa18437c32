/* backend_cuda.c — the CUDA target: the device, NVRTC, memory, copies and
 * launches (D177); the module and its runs are the accelerator targets'
 * shared runner (backend/device/device_run.c).
 *
 * The driver API (libcuda.so.1) and NVRTC are loaded with dlopen, so
 * tessera builds, tests and runs where there is no GPU or CUDA: there
 * `--target cuda` fails with one line saying which is missing. The device
 * is device 0 and its primary context, found once per process. A module's
 * program is compiled by NVRTC to PTX for the device's compute capability
 * and loaded with cuModuleLoadData (the driver JIT-compiles the PTX and
 * keeps its own cache of the result). Launches go to the legacy default
 * stream, so launches and copies run in order; a kernel runs as blocks of
 * 128 threads, about one thread per 16 output elements (at most 2^20),
 * each its share of the parallel loop. The types and entry points used are
 * declared here: the CUDA headers need not be installed to build. */
#include "backend/cuda/cuda.h"

#include "backend/device/device_run.h"
#include "codegen/cuda/emit_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the driver API and NVRTC, by dlopen --------------------------------------------- */

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;
enum { CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76 };

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

static struct {
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*MemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **);
    CUresult (*GetErrorName)(CUresult, const char **);
} cu;

static struct {
    nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                                 const char *const *);
    nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
    nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetPTX)(nvrtcProgram, char *);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *);
    const char *(*GetErrorString)(nvrtcResult);
} nvrtc;

/* Each symbol of names into the table fns, in order; false (and why in
 * why) when one is missing. */
static bool load_syms(void *lib, const char *lib_name, const char *const *names, void **fns, int n, char *why,
                      size_t cap)
{
    for (int i = 0; i < n; i++) {
        void *f = dlsym(lib, names[i]);
        if (!f) {
            snprintf(why, cap, "%s has no %s", lib_name, names[i]);
            return false;
        }
        memcpy(&fns[i], &f, sizeof f);
    }
    return true;
}

static struct {
    pthread_once_t once;
    char why[320];            /* empty, or why there is no NVRTC */
} rtc = {PTHREAD_ONCE_INIT, {0}};

static void rtc_init(void)
{
    static const char *const names[] = {"nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcGetProgramLogSize",
                                        "nvrtcGetProgramLog", "nvrtcGetPTXSize",     "nvrtcGetPTX",
                                        "nvrtcDestroyProgram", "nvrtcGetErrorString"};
    /* the toolkit's folders are not on the loader's path on a plain install */
    static const char *const libs[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                       "/usr/local/cuda/lib64/libnvrtc.so", "/usr/local/cuda/lib/libnvrtc.so"};
    const char *env = getenv("TS_NVRTC");
    void *lib = env && *env ? dlopen(env, RTLD_NOW | RTLD_LOCAL) : NULL;
    for (size_t i = 0; !lib && !(env && *env) && i < sizeof libs / sizeof *libs; i++)
        lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(rtc.why, sizeof rtc.why, "%s not found", env && *env ? env : "libnvrtc.so (or .so.13, .so.12)");
        return;
    }
    if (!load_syms(lib, "NVRTC", names, (void **)&nvrtc, (int)(sizeof names / sizeof *names), rtc.why, sizeof rtc.why))
        dlclose(lib);
}

static ts_status rtc_ready(ts_err *err)
{
    pthread_once(&rtc.once, rtc_init);
    if (!rtc.why[0]) return TS_OK;
    return ts_err_set(err, TS_ERR_TOOLCHAIN,
                      "cuda: no NVRTC (%s); install the CUDA toolkit's NVRTC, or set TS_NVRTC to its library", rtc.why);
}

/* src through NVRTC: to PTX (*ptx), or, ptx NULL, its front end only
 * (-fdevice-syntax-only: every error of the source, ~50x faster). */
static ts_status nvrtc_compile(const char *src, const char *arch, char **ptx, ts_err *err)
{
    TS_TRY(rtc_ready(err));
    nvrtcProgram p = NULL;
    nvrtcResult r = nvrtc.CreateProgram(&p, src, "tessera.cu", 0, NULL, NULL);
    if (r) return ts_err_set(err, TS_ERR_RUNTIME, "cuda: nvrtcCreateProgram: %s", nvrtc.GetErrorString(r));
    char opt_arch[64];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
    const char *opts[] = {opt_arch, "-default-device", "--std=c++17", "-w", "-fdevice-syntax-only"};
    r = nvrtc.CompileProgram(p, ptx ? 4 : 5, opts);
    ts_status s = TS_OK;
    if (r) {
        size_t n = 0;
        nvrtc.GetProgramLogSize(p, &n);
        char *log = ts_mem_alloc(n + 1);
        if (log) {
            log[0] = 0;
            nvrtc.GetProgramLog(p, log);
            log[n] = 0;
        }
        s = ts_err_set(err, TS_ERR_INTERNAL, "cuda: the generated program does not compile (%s): %.1500s",
                       nvrtc.GetErrorString(r), log ? log : "");
        ts_mem_free(log);
    } else if (ptx) {
        size_t n = 0;
        nvrtc.GetPTXSize(p, &n);
        if (!(*ptx = ts_mem_alloc(n + 1))) s = ts_err_set(err, TS_ERR_OOM, "out of memory");
        else nvrtc.GetPTX(p, *ptx), (*ptx)[n] = 0;
    }
    nvrtc.DestroyProgram(&p);
    return s;
}

ts_status ts_cuda_compile_ptx(const char *src, const char *arch, char **ptx, ts_err *err)
{
    *ptx = NULL;
    return nvrtc_compile(src, arch, ptx, err);
}

ts_status ts_cuda_check_source(const char *src, const char *arch, ts_err *err)
{
    return nvrtc_compile(src, arch, NULL, err);
}

/* ---- the device ---------------------------------------------------------------------- */

static struct {
    pthread_once_t once;
    char why[320];            /* empty, or why there is no device */
    CUdevice dev;
    CUcontext ctx;
    char arch[32];            /* compute_XY */
    char name[128];
} dev = {PTHREAD_ONCE_INIT, {0}, 0, NULL, {0}, {0}};

static const char *cu_name(CUresult r)
{
    const char *s = NULL;
    if (cu.GetErrorName) cu.GetErrorName(r, &s);
    return s ? s : "?";
}

static void dev_init(void)
{
    static const char *const names[] = {
        "cuInit",           "cuDeviceGet",       "cuDeviceGetName",     "cuDeviceGetAttribute",
        "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuCtxSynchronize", "cuModuleLoadData",
        "cuModuleGetFunction", "cuModuleUnload", "cuMemAlloc_v2",       "cuMemFree_v2",
        "cuMemcpyHtoD_v2",  "cuMemcpyDtoH_v2",   "cuMemcpyDtoD_v2",     "cuLaunchKernel",
        "cuGetErrorName"};
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(dev.why, sizeof dev.why, "%s", dlerror());
        return;
    }
    if (!load_syms(lib, "libcuda.so.1", names, (void **)&cu, (int)(sizeof names / sizeof *names), dev.why, sizeof dev.why)) return;
    const char *step = "cuInit";
    CUresult r = cu.Init(0);
    int major = 0, minor = 0;
    if (!r) step = "cuDeviceGet", r = cu.DeviceGet(&dev.dev, 0);
    if (!r) step = "cuDeviceGetAttribute", r = cu.DeviceGetAttribute(&major, CU_ATTR_CC_MAJOR, dev.dev);
    if (!r) r = cu.DeviceGetAttribute(&minor, CU_ATTR_CC_MINOR, dev.dev);
    if (!r) step = "cuDevicePrimaryCtxRetain", r = cu.PrimaryCtxRetain(&dev.ctx, dev.dev);
    if (r) {
        snprintf(dev.why, sizeof dev.why, "%s: %s", step, cu_name(r));
        return;
    }
    cu.DeviceGetName(dev.name, (int)sizeof dev.name - 1, dev.dev);
    snprintf(dev.arch, sizeof dev.arch, "compute_%d%d", major, minor);
}

static ts_status cu_fail(ts_err *err, const char *call, CUresult r)
{
    return ts_err_set(err, TS_ERR_RUNTIME, "cuda: %s failed (%s)", call, cu_name(r));
}

/* The device, current on this thread. */
static ts_status device(ts_err *err)
{
    pthread_once(&dev.once, dev_init);
    if (dev.why[0])
        return ts_err_set(err, TS_ERR_TOOLCHAIN, "cuda: no usable CUDA device (%s); the cuda target needs an NVIDIA "
                          "GPU and its driver", dev.why);
    CUresult r = cu.CtxSetCurrent(dev.ctx);
    return r ? cu_fail(err, "cuCtxSetCurrent", r) : TS_OK;
}

/* ---- programs, memory, launches ------------------------------------------------------ */

static void free_program(void *prog, int n, void **kernels)
{
    (void)n, (void)kernels;   /* functions belong to their module */
    cu.ModuleUnload(prog);
}

static ts_status build(const char *src, int n, const char *const *names, void **prog, void **kernels, ts_err *err)
{
    char *ptx = NULL;
    TS_TRY(ts_cuda_compile_ptx(src, dev.arch, &ptx, err));
    CUmodule mod = NULL;
    CUresult r = cu.ModuleLoadData(&mod, ptx);
    ts_mem_free(ptx);
    if (r) return cu_fail(err, "cuModuleLoadData", r);
    *prog = mod;
    for (int i = 0; i < n; i++) {
        CUfunction f = NULL;
        if ((r = cu.ModuleGetFunction(&f, mod, names[i]))) return cu_fail(err, "cuModuleGetFunction", r);
        kernels[i] = f;
    }
    return TS_OK;
}

static ts_status alloc(size_t bytes, const void *host, void **mem, ts_err *err)
{
    CUdeviceptr p = 0;
    CUresult r = cu.MemAlloc(&p, bytes ? bytes : 1);   /* a value of no elements still gets an address */
    if (r) return cu_fail(err, "cuMemAlloc", r);
    if (host && bytes && (r = cu.MemcpyHtoD(p, host, bytes))) {
        cu.MemFree(p);
        return cu_fail(err, "cuMemcpyHtoD", r);
    }
    *mem = (void *)(uintptr_t)p;
    return TS_OK;
}

static void release(void *mem)
{
    cu.MemFree((CUdeviceptr)(uintptr_t)mem);
}

static ts_status download(void *dst, void *mem, size_t off, size_t bytes, ts_err *err)
{
    CUresult r = cu.MemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)mem + off, bytes);
    return r ? cu_fail(err, "cuMemcpyDtoH", r) : TS_OK;
}

static ts_status copy(void *dst, size_t dst_off, void *src, size_t src_off, size_t bytes, ts_err *err)
{
    CUresult r = cu.MemcpyDtoD((CUdeviceptr)(uintptr_t)dst + dst_off, (CUdeviceptr)(uintptr_t)src + src_off, bytes);
    return r ? cu_fail(err, "cuMemcpyDtoD", r) : TS_OK;
}

static ts_status launch(void *kernel, int n_bufs, void *const *mems, const int64_t *offs, int n_dims,
                        const int64_t *dims, int64_t work, ts_err *err)
{
    CUdeviceptr ptr[256];
    long long off[256], dim[256];
    void *params[768];
    int np = 0;
    for (int j = 0; j < n_bufs; j++) {
        ptr[j] = (CUdeviceptr)(uintptr_t)mems[j], off[j] = offs[j];
        params[np++] = &ptr[j];
        params[np++] = &off[j];
    }
    for (int j = 0; j < n_dims; j++) {
        dim[j] = dims[j];
        params[np++] = &dim[j];
    }
    int64_t threads = work / 16 < 1 ? 1 : work / 16 > (1 << 20) ? (1 << 20) : work / 16;
    unsigned block = threads < 128 ? (unsigned)threads : 128, grid = (unsigned)((threads + block - 1) / block);
    CUresult r = cu.LaunchKernel(kernel, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL);
    return r ? cu_fail(err, "cuLaunchKernel", r) : TS_OK;
}

static void finish(void)
{
    cu.CtxSynchronize();
}

static const ts_devapi api = {
    .name = "cuda",
    .compiles = ts_emit_cuda_compiles,
    .emit = ts_emit_cuda,
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

static ts_status probe(const ts_session_opts *o, ts_err *err)
{
    (void)o;
    TS_TRY(device(err));
    return rtc_ready(err);
}

static ts_status compile(const ts_graph *g, const ts_session_opts *o, ts_module **out, ts_err *err)
{
    TS_TRY(probe(o, err));
    return ts_dev_compile(&api, g, out, err);
}

static ts_status run(ts_module *m, int n_in, ts_tensor *const *in, int n_out, ts_tensor **out, int64_t *peak,
                     ts_err *err)
{
    TS_TRY(device(err));   /* the context, current on this thread */
    return ts_dev_run(m, n_in, in, n_out, out, peak, err);
}

static void module_free(ts_module *m)
{
    if (m) cu.CtxSetCurrent(dev.ctx);   /* (a module exists: so does the device) */
    ts_dev_free(m);
}

static ts_status describe(const ts_graph *g, const char *what, char **text, ts_err *err)
{
    return ts_dev_describe(&api, "cuda", g, what, text, err);
}

const ts_backend ts_backend_cuda = {
    .name = "cuda",
    .compile = compile,
    .run = run,
    .free = module_free,
    .compiles = ts_emit_cuda_compiles,
    .stats = ts_dev_stats,
    .describe = describe,
    .probe = probe,
};
