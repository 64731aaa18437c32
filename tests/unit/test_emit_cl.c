/* test_emit_cl.c — the OpenCL C dialect of the emitter (codegen/opencl):
 * every kernel planned for the per-primitive suite (tests/ops/ * /model.ir),
 * the IR corpus (tests/ir/) and the autodiff cases (emit_corpus.h) is
 * emitted into one program and built by the first OpenCL platform
 * (PoCL in CI: scripts/deps.sh installs it); a build error prints the log.
 * Then what the dialect must not write (the CPU's vector shapes, libm
 * names without the preamble, static tables) is checked in the text, and
 * that it declines contractions. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include "codegen/opencl/emit_cl.h"
#include "emit_corpus.h"

static ts_status emit_kernels(ts_buf *out, int n, ts_lkernel *const *ks, ts_err *err)
{
    for (int i = 0; i < n; i++) TS_TRY(ts_emit_cl_kernel(out, ks[i], err));
    return TS_OK;
}

static void build_on_opencl(const corpus *c)
{
    cl_platform_id plat;
    cl_uint np = 0;
    cl_device_id dev;
    cl_int e = clGetPlatformIDs(1, &plat, &np);
    CHECK_MSG(e == CL_SUCCESS && np > 0, "no OpenCL platform (scripts/deps.sh installs PoCL): error %d", e);
    if (e != CL_SUCCESS || !np) return;
    e = clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    CHECK_MSG(e == CL_SUCCESS, "no OpenCL device: error %d", e);
    if (e != CL_SUCCESS) return;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    CHECK_MSG(e == CL_SUCCESS, "clCreateContext: %d", e);
    if (e != CL_SUCCESS) return;
    const char *src = c->src.data;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
    CHECK_MSG(e == CL_SUCCESS, "clCreateProgramWithSource: %d", e);
    if (e == CL_SUCCESS) {
        e = clBuildProgram(prog, 1, &dev, "-cl-std=CL1.2", NULL, NULL);
        if (e != CL_SUCCESS) {
            size_t n = 0;
            clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
            char *log = malloc(n + 1);
            clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL);
            log[n] = 0;
            FILE *f = fopen("build/test_emit_cl.cl", "wb");
            if (f) fputs(src, f), fclose(f);
            CHECK_MSG(0, "clBuildProgram: %d; the log (source in build/test_emit_cl.cl):\n%.6000s", e, log);
            free(log);
        } else {
            size_t n = 0;   /* warnings: the emitter writes clean OpenCL C */
            clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
            char *log = malloc(n + 1);
            clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL);
            log[n] = 0;
            CHECK_MSG(!strstr(log, "warning"), "the build warns:\n%.6000s", log);
            if (strstr(log, "warning")) {
                FILE *f = fopen("build/test_emit_cl.cl", "wb");
                if (f) fputs(c->src.data, f), fclose(f);
            }
            free(log);
            cl_uint nk = 0;
            clCreateKernelsInProgram(prog, 0, NULL, &nk);
            CHECK_MSG((int)nk == c->kernels, "the program has %u kernels, %d were emitted", nk, c->kernels);
        }
        clReleaseProgram(prog);
    }
    clReleaseContext(ctx);
}

/* What the dialect writes and declines, on one small graph. */
static void test_dialect(void)
{
    const char *src = "graph @t(%a: f32[n, 64], %w: f32[64, 8]) {\n"
                      "  %e: f32[n, 64] = exp(%a)\n"
                      "  %s: f32[n] = reduce_sum(%e) {axes=[1]}\n"
                      "  %d: f32[n, 8] = dot(%a, %w) {lhs_contract=[1], rhs_contract=[0]}\n"
                      "  %o: f32[n], %oi: i64[n] = sort(%s) {axis=0}\n"
                      "  return %o, %d\n"
                      "}\n";
    ts_buf out = {0};
    int kernels = 0, fallbacks = 0;
    if (!emit_one(src, ts_emit_cl_compiles, ts_emit_cl, &out, &kernels, &fallbacks)) return ts_buf_free(&out);
    /* the dot is loops on the device; sort is declined (a CPU template) */
    CHECK_MSG(fallbacks == 1 && kernels >= 2, "%d kernels, %d fallback steps", kernels, fallbacks);
    const char *t = out.data ? out.data : "";
    CHECK(strstr(t, "__kernel void ts_k") != NULL);
    CHECK(strstr(t, "get_global_id(0)") != NULL);
    CHECK(strstr(t, "__global const float *restrict b0 = b0_ + o0;") != NULL);
    CHECK(strstr(t, "#define expf exp") != NULL);
    CHECK(strstr(t, "tsrt_f64x8") == NULL);       /* no lane reductions */
    CHECK(strstr(t, "static const int64_t") == NULL);
    CHECK(strstr(t, "__builtin_") == NULL);
    ts_buf_free(&out);
}

int main(void)
{
    test_dialect();
    corpus c = {.compiles = ts_emit_cl_compiles, .emit = emit_kernels};
    ts_err err = {0};
    CHECK_MSG(ts_emit_cl(&c.src, 0, NULL, &err) == TS_OK, "%s", err.msg);   /* the preamble */
    corpus_add_dir(&c, "tests/ops", "/model.ir", true);
    corpus_add_dir(&c, "tests/ir", ".ir", false);
    corpus_add_dir(&c, "tests/autodiff/cases", ".ir", false);
    printf("%d graphs: %d kernels in one OpenCL program, %d fallback steps, %d graphs declined\n", c.graphs, c.kernels,
           c.fallbacks, c.declined);
    CHECK(c.graphs > 500 && c.kernels > 500);
    CHECK_MSG(c.declined <= 2, "%d graphs declined by the OpenCL dialect", c.declined);
    build_on_opencl(&c);
    ts_buf_free(&c.src);
    return check_report();
}
