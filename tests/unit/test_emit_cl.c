/* test_emit_cl.c — the OpenCL C dialect of the emitter (codegen/opencl):
 * every kernel planned for the per-primitive suite (tests/ops/ * /model.ir),
 * the IR corpus (tests/ir/) and the autodiff cases, with the default passes
 * and fusion asking ts_emit_cl_compiles, is emitted into one program (kernel
 * names made unique per graph) and built by the first OpenCL platform
 * (PoCL in CI: scripts/deps.sh installs it); a build error prints the log.
 * Then what the dialect must not write (the CPU's vector shapes, libm
 * names without the preamble, static tables) is checked in the text, and
 * that it declines contractions. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_files.h"
#include "codegen/opencl/emit_cl.h"
#include "lower/plan.h"

typedef struct corpus {
    ts_buf src;      /* the preamble once, then every graph's kernels */
    int graphs, kernels, fallbacks, declined;
} corpus;

/* Plan path's graph for OpenCL and append its kernels, renamed g<i>_k<j>. */
static void add_graph(corpus *c, const char *path)
{
    size_t len = 0;
    char *text = slurp(path, &len);
    ts_graph *g = NULL;
    ts_plan *p = NULL;
    ts_err err = {0};
    if (!text || ts_graph_parse(text, len, path, &g, &err) != TS_OK || ts_graph_run_passes(g, "default", &err) != TS_OK ||
        ts_plan_new(g, ts_emit_cl_compiles, &p, &err) != TS_OK) {
        CHECK_MSG(0, "%s: %s", path, text ? err.msg : "cannot read");
    } else {
        ts_lkernel **ks = malloc(sizeof *ks * (size_t)(p->n_steps + 1));
        int n = 0;
        for (int i = 0; i < p->n_steps; i++)
            if (p->steps[i].kernel) {
                snprintf(p->steps[i].kernel->name, sizeof p->steps[i].kernel->name, "g%d_k%d", c->graphs, i);
                ks[n++] = p->steps[i].kernel;
            }
        ts_status s = TS_OK;
        size_t mark = c->src.len;
        for (int i = 0; i < n && s == TS_OK; i++) s = ts_emit_cl_kernel(&c->src, ks[i], &err);
        if (s == TS_ERR_UNSUPPORTED) {
            c->src.len = mark;   /* a kernel the dialect cannot write yet: named in the output */
            if (c->src.data) c->src.data[mark] = 0;
            c->declined++;
            printf("  declined: %s: %s\n", path, err.msg);
        } else if (s != TS_OK) {
            CHECK_MSG(0, "%s: %s", path, err.msg);
        } else {
            c->kernels += n;
            c->fallbacks += p->n_fallback;
        }
        free(ks);
        c->graphs++;
    }
    ts_plan_free(p);
    ts_graph_free(g);
    free(text);
}

static void add_dir(corpus *c, const char *dir, const char *suffix, bool nested)
{
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s", dir);
    if (!d) return;
    char **names = NULL;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        names = realloc(names, sizeof *names * (size_t)(n + 1));
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    for (int i = 0; i < n; i++)   /* sorted: the same program every run */
        for (int j = i + 1; j < n; j++)
            if (strcmp(names[j], names[i]) < 0) {
                char *t = names[i];
                names[i] = names[j], names[j] = t;
            }
    for (int i = 0; i < n; i++) {
        char path[1024];
        if (nested) {
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            DIR *sub = opendir(path);   /* folders only (the suite keeps lists beside them) */
            if (sub) closedir(sub), add_dir(c, path, suffix, false);
        } else if (strlen(names[i]) > strlen(suffix) && !strcmp(names[i] + strlen(names[i]) - strlen(suffix), suffix)) {
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            add_graph(c, path);
        } else if (!strcmp(suffix, "/model.ir")) {
            snprintf(path, sizeof path, "%s/%s/model.ir", dir, names[i]);
            FILE *f = fopen(path, "rb");
            if (f) fclose(f), add_graph(c, path);
        }
        free(names[i]);
    }
    free(names);
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
                      "  return %s, %d\n"
                      "}\n";
    ts_graph *g = NULL;
    ts_plan *p = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_graph_parse(src, strlen(src), "t", &g, &err) == TS_OK, "%s", err.msg);
    CHECK_MSG(g && ts_plan_new(g, ts_emit_cl_compiles, &p, &err) == TS_OK, "%s", err.msg);
    if (!p) return ts_graph_free(g);
    CHECK_MSG(p->n_fallback == 1, "dot declined: %d fallback steps", p->n_fallback);
    ts_lkernel *ks[8];
    int n = 0;
    for (int i = 0; i < p->n_steps && n < 8; i++)
        if (p->steps[i].kernel) ks[n++] = p->steps[i].kernel;
    ts_buf out = {0};
    CHECK_MSG(ts_emit_cl(&out, n, ks, &err) == TS_OK, "%s", err.msg);
    const char *t = out.data ? out.data : "";
    CHECK(strstr(t, "__kernel void ts_k") != NULL);
    CHECK(strstr(t, "get_global_id(0)") != NULL);
    CHECK(strstr(t, "__global const float *restrict b0 = b0_ + o0;") != NULL);
    CHECK(strstr(t, "#define expf exp") != NULL);
    CHECK(strstr(t, "tsrt_f64x8") == NULL);       /* no lane reductions */
    CHECK(strstr(t, "static const int64_t") == NULL);
    CHECK(strstr(t, "__builtin_") == NULL);
    ts_buf_free(&out);
    ts_plan_free(p);
    ts_graph_free(g);
}

int main(void)
{
    test_dialect();
    corpus c = {0};
    ts_err err = {0};
    CHECK_MSG(ts_emit_cl(&c.src, 0, NULL, &err) == TS_OK, "%s", err.msg);   /* the preamble */
    add_dir(&c, "tests/ops", "/model.ir", true);
    add_dir(&c, "tests/ir", ".ir", false);
    add_dir(&c, "tests/autodiff/cases", ".ir", false);
    printf("%d graphs: %d kernels in one OpenCL program, %d fallback steps, %d graphs declined\n", c.graphs, c.kernels,
           c.fallbacks, c.declined);
    CHECK(c.graphs > 500 && c.kernels > 500);
    CHECK_MSG(c.declined <= 2, "%d graphs declined by the OpenCL dialect", c.declined);
    build_on_opencl(&c);
    ts_buf_free(&c.src);
    return check_report();
}
