/* test_backends.c — the target registry kept whole (src/backend/): every
 * target has a unique name and the required slots, the public names
 * match the registry, the fallback target is registered, and one graph
 * gives the same answer on every target through the public session API
 * (the interpreter being the oracle). Compiled code is cached in
 * build-test-jit-cache/ (as test_cpu_session does), not the user's cache. */
#include "backend/backend.h"
#include "check.h"
#include "tessera.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char model[] =
    "graph @m(%x: f32[n, 8]) {\n"
    "  %e: f32[n, 8] = exp(%x)\n"
    "  %s: f32[n] = reduce_sum(%e) {axes=[1]}\n"
    "  return %s\n"
    "}\n";

static void test_registry(void)
{
    int n = ts_backend_count();
    CHECK(n >= 2);
    for (int i = 0; i < n; i++) {
        const ts_backend *b = ts_backend_at(i);
        CHECK(b && b->name && b->name[0]);
        if (!b) continue;
        CHECK_MSG(b->compile && b->run && b->free, "%s lacks a required slot", b->name);
        CHECK_MSG((b->profile == NULL) == (b->write_profile == NULL), "%s: profile slots come in pairs", b->name);
        CHECK(ts_backend_find(b->name) == b);
        CHECK_STR(ts_target_name(i), b->name);
        for (int j = 0; j < i; j++) CHECK_MSG(strcmp(ts_backend_at(j)->name, b->name), "two targets named %s", b->name);
    }
    CHECK(ts_backend_at(n) == NULL && ts_target_name(n) == NULL && ts_target_name(-1) == NULL);
    CHECK(ts_backend_find("nosuch") == NULL && ts_backend_find(NULL) == NULL);
    const ts_backend *fb = ts_backend_fallback();
    CHECK(fb && ts_backend_find(fb->name) == fb && !fb->probe);
}

/* The same sums on every target, within f32 rounding of the interpreter's. */
static void test_same_answer(void)
{
    ts_err err = {0};
    ts_graph *g = NULL;
    CHECK_MSG(ts_graph_parse(model, sizeof model - 1, "m", &g, &err) == TS_OK, "%s", err.msg);
    if (!g) return;
    int64_t shape[2] = {3, 8};
    ts_tensor *x = NULL;
    CHECK(ts_tensor_new(TS_DTYPE_F32, 2, shape, &x, &err) == TS_OK);
    float *xd = ts_tensor_data(x);
    for (int i = 0; i < 24; i++) xd[i] = (float)(i % 7) * 0.25f - 0.5f;
    ts_tensor *want = NULL;
    for (int i = ts_backend_count() - 1; i >= 0; i--) {   /* the interpreter (last) first: the oracle */
        const char *name = ts_target_name(i);
        ts_session *s = NULL;
        ts_tensor *got = NULL;
        const ts_backend *b = ts_backend_at(i);
        ts_err why = {0};
        if (b->probe && b->probe(NULL, &why) == TS_ERR_TOOLCHAIN) {
            /* a device this machine lacks (cuda without a GPU): the session
             * fails with the probe's one line, naming the target */
            CHECK_MSG(ts_session_new(g, name, &s, &err) == TS_ERR_TOOLCHAIN && !s, "%s", name);
            CHECK_MSG(strstr(err.msg, name) == err.msg && !strchr(err.msg, '\n') && !strcmp(err.msg, why.msg), "%s",
                      err.msg);
            printf("%s: no device here: %s\n", name, err.msg);
            continue;
        }
        CHECK_MSG(ts_session_new(g, name, &s, &err) == TS_OK, "%s: %s", name, err.msg);
        if (!s) continue;
        CHECK_STR(ts_session_target(s), name);
        CHECK_MSG(ts_session_run(s, 1, &x, 1, &got, &err) == TS_OK, "%s: %s", name, err.msg);
        if (got && !want) {
            want = got;
            got = NULL;
        } else if (got) {
            const float *a = ts_tensor_data(got), *b = ts_tensor_data(want);
            for (int k = 0; k < 3; k++) CHECK_MSG(fabsf(a[k] - b[k]) <= 1e-5f * fabsf(b[k]), "%s: sum %d", name, k);
        }
        ts_tensor_release(got);
        ts_session_free(s);
    }
    /* what a target makes of the graph: the cpu target's C and loop IR,
     * nothing from the interpreter */
    char *text = NULL;
    CHECK_MSG(ts_graph_describe(g, "cpu", "c", &text, &err) == TS_OK && text && strstr(text, "void ts_k"), "%s",
              err.msg);
    ts_free_string(text);
    CHECK(ts_graph_describe(g, "cpu", "loops", &text, &err) == TS_OK && text && strstr(text, "fusion of @m"));
    ts_free_string(text);
    CHECK(ts_graph_describe(g, "cpu", "ptx", &text, &err) == TS_ERR_UNSUPPORTED && !text);
    ts_err e2 = {0};
    CHECK(ts_graph_describe(g, "interp", "c", &text, &e2) == TS_ERR_UNSUPPORTED && strstr(e2.msg, "interp"));
    CHECK(ts_graph_describe(g, "gpu9", "c", &text, &err) == TS_ERR_UNSUPPORTED);
    /* the device targets' source needs no device */
    CHECK_MSG(ts_graph_describe(g, "cuda", "cuda", &text, &err) == TS_OK && text && strstr(text, "__global__ void ts_k"),
              "%s", err.msg);
    ts_free_string(text);
    CHECK_MSG(ts_graph_describe(g, "opencl", "loops", &text, &err) == TS_OK && text && strstr(text, "fusion of @m"),
              "%s", err.msg);
    ts_free_string(text);
    ts_tensor_release(want);
    ts_tensor_release(x);
    ts_graph_free(g);
}

int main(void)
{
    setenv("TESSERA_CACHE_DIR", "build-test-jit-cache", 0);
    test_registry();
    test_same_answer();
    return check_report();
}
