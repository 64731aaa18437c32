/* test_emit_cuda.c — the CUDA C dialect of the emitter (codegen/cuda),
 * checked without a GPU: every kernel planned for the per-primitive suite
 * (tests/ops/ * /model.ir), the IR corpus (tests/ir/), the autodiff cases,
 * the real-model suite (tests/onnx_models/), the bundled models (models/)
 * and, given its folder as argv[1], ONNX's node suite (emit_corpus.h) is
 * emitted into one program and compiled to PTX by NVRTC through the cuda
 * target's own path (ts_cuda_compile_ptx; with the node suite, NVRTC's
 * front end only, ts_cuda_check_source), so a codegen error fails CI
 * though nothing runs here. NVRTC comes with the CUDA toolkit (the CI
 * machines have it); where it is missing the test fails saying so. Then
 * the dialect's text is checked on one small graph. */
#include "backend/cuda/cuda.h"
#include "codegen/cuda/emit_cuda.h"
#include "emit_corpus.h"

static ts_status emit_kernels(ts_buf *out, int n, ts_lkernel *const *ks, ts_err *err)
{
    for (int i = 0; i < n; i++) TS_TRY(ts_emit_cuda_kernel(out, ks[i], err));
    return TS_OK;
}

/* The PTX has one entry per emitted kernel (front end only: no PTX). */
static void compile_with_nvrtc(const corpus *c, bool front_end_only)
{
    char *ptx = NULL;
    ts_err err = {0};
    ts_status s = front_end_only ? ts_cuda_check_source(c->src.data, "compute_80", &err)
                                 : ts_cuda_compile_ptx(c->src.data, "compute_80", &ptx, &err);
    if (s != TS_OK) {
        FILE *f = fopen("build/test_emit_cuda.cu", "wb");
        if (f) fputs(c->src.data, f), fclose(f);
        CHECK_MSG(0, "%s (source in build/test_emit_cuda.cu)", err.msg);
        return;
    }
    if (front_end_only) return;
    int entries = 0;
    for (const char *p = ptx; (p = strstr(p, ".entry ")); p++) entries++;
    CHECK_MSG(entries == c->kernels, "the PTX has %d entries, %d kernels were emitted", entries, c->kernels);
    ts_mem_free(ptx);
}

/* A program that does not compile fails with NVRTC's log. */
static void test_bad_program(void)
{
    char *ptx = NULL;
    ts_err err = {0};
    ts_status s = ts_cuda_compile_ptx("extern \"C\" __global__ void k(float *x) { x[0] = undeclared; }", "compute_80",
                                      &ptx, &err);
    CHECK_MSG(s == TS_ERR_INTERNAL && strstr(err.msg, "does not compile") && strstr(err.msg, "undeclared"), "%s",
              err.msg);
    CHECK(ptx == NULL);
    err = (ts_err){0};
    CHECK_MSG(ts_cuda_check_source("extern \"C\" __global__ void k(float *x) { float *y = 3; x[0] = *y; }",
                                   "compute_80", &err) == TS_ERR_INTERNAL && strstr(err.msg, "cannot be used to initialize"),
              "%s", err.msg);
}

/* What the dialect writes and declines, on one small graph. */
static void test_dialect(void)
{
    const char *src = "graph @t(%a: f32[n, 64], %w: f32[64, 8], %i: i64[n]) {\n"
                      "  %e: f32[n, 64] = exp(%a)\n"
                      "  %s: f32[n] = reduce_sum(%e) {axes=[1]}\n"
                      "  %d: f32[n, 8] = dot(%a, %w) {lhs_contract=[1], rhs_contract=[0]}\n"
                      "  %o: f32[n], %oi: i64[n] = sort(%s) {axis=0}\n"
                      "  %q: i64[n] = div(%i, %i)\n"
                      "  return %o, %d, %q\n"
                      "}\n";
    ts_buf out = {0};
    int kernels = 0, fallbacks = 0;
    if (!emit_one(src, ts_emit_cuda_compiles, ts_emit_cuda, &out, &kernels, &fallbacks)) return ts_buf_free(&out);
    /* the dot is loops on the device; sort is declined (a CPU template) */
    CHECK_MSG(fallbacks == 1 && kernels >= 2, "%d kernels, %d fallback steps", kernels, fallbacks);
    const char *t = out.data ? out.data : "";
    CHECK(strstr(t, "extern \"C\" __global__ void ts_k") != NULL);
    CHECK(strstr(t, "blockIdx.x * blockDim.x + threadIdx.x") != NULL);
    CHECK(strstr(t, "for (int64_t f_ = ith; f_ < n_; f_ += nth)") != NULL);   /* strided shares: coalesced */
    CHECK(strstr(t, "hi_") == NULL);
    CHECK(strstr(t, "const float *__restrict__ b0 = b0_ + o0;") != NULL);
    CHECK(strstr(t, "typedef long long int64_t;") != NULL);
    CHECK(strstr(t, "tsrt_div_s") != NULL);        /* the integer helpers follow the preamble */
    CHECK(strstr(t, "tsrt_f64x8") == NULL);        /* no lane reductions */
    CHECK(strstr(t, "static const int64_t") == NULL);
    CHECK(strstr(t, "__builtin_") == NULL);
    CHECK(strstr(t, "__global ") == NULL);         /* nothing of OpenCL's */
    ts_buf_free(&out);
}

int main(int argc, char **argv)
{
    test_dialect();
    test_bad_program();
    corpus c = {.compiles = ts_emit_cuda_compiles, .emit = emit_kernels};
    ts_err err = {0};
    CHECK_MSG(ts_emit_cuda(&c.src, 0, NULL, &err) == TS_OK, "%s", err.msg);   /* the preamble */
    corpus_add_dir(&c, "tests/ops", "/model.ir", true);
    corpus_add_dir(&c, "tests/ir", ".ir", false);
    corpus_add_dir(&c, "tests/autodiff/cases", ".ir", false);
    corpus_add_dir(&c, "tests/onnx_models", "/model.onnx", false);
    corpus_add_dir(&c, "models", ".ir", false);
    corpus_add_dir(&c, "models", "/model.onnx", false);
    if (argc > 1) corpus_add_dir(&c, argv[1], "/model.onnx", false);
    printf("%d graphs: %d kernels in one CUDA program, %d fallback steps, %d graphs declined, %d models not planned\n",
           c.graphs, c.kernels, c.fallbacks, c.declined, c.unplanned);
    CHECK(c.graphs > 500 && c.kernels > 500);
    CHECK_MSG(c.declined <= 2, "%d graphs declined by the CUDA dialect", c.declined);
    /* the node suite's models with sequence or string inputs, or a Dropout
     * seed given at run time, do not assemble (on any target); not more */
    CHECK_MSG(c.unplanned <= (argc > 1 ? 66 : 1), "%d models not planned", c.unplanned);
    /* the node suite's ~5,000 kernels through NVRTC's front end (every
     * source error; 3 s rather than 3 minutes), the rest to PTX */
    compile_with_nvrtc(&c, argc > 1);
    ts_buf_free(&c.src);
    return check_report();
}
