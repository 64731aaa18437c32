/* fuzz_onnx_load.c — libFuzzer target for the ONNX frontend: any bytes,
 * written as model.onnx in a private folder, must load or fail with a
 * status; never crash, leak, hang or trip a sanitizer.
 *
 *   cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DTS_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz_onnx_load
 *   build-fuzz/tests/fuzz_onnx_load -max_total_time=60 CORPUS_DIR
 *
 * scripts/test.sh runs it for a minute, seeded with node test models. The
 * same bytes also go through ts_onnx_info, ts_onnx_signature and, as a
 * TensorProto, through ts_onnx_read_tensor, and as a SequenceProto and an
 * OptionalProto through ts_onnx_read_value. The model sits alone in its
 * folder: external data resolves inside that folder only, so a fuzzed
 * location finds nothing but the model itself.
 *
 * Allocation goes through a hook that refuses any single request over
 * 256 MiB, as the library's allocation hook allows (ts_set_allocator): a
 * model that declares a huge constant gets TS_ERR_OOM, a status, instead of
 * tripping libFuzzer's malloc limit. */
#include "tessera.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ALLOC_LIMIT ((size_t)256 << 20)

static void *limited_alloc(void *ud, void *ptr, size_t n)
{
    (void)ud;
    if (n == 0) {
        free(ptr);
        return NULL;
    }
    return n > ALLOC_LIMIT ? NULL : realloc(ptr, n);
}

static char dir[64], model[96];

static void cleanup(void)
{
    unlink(model);
    rmdir(dir);
}

/* The private folder, made once per process. */
static int setup(void)
{
    if (dir[0]) return 0;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/ts_fuzz_XXXXXX", tmp && strlen(tmp) < 32 ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        dir[0] = 0;
        return -1;
    }
    snprintf(model, sizeof model, "%s/model.onnx", dir);
    atexit(cleanup);
    ts_set_allocator(limited_alloc, NULL);
    return 0;
}

static int write_file(const uint8_t *data, size_t size)
{
    FILE *f = fopen(model, "wb");
    if (!f) return -1;
    size_t n = size ? fwrite(data, 1, size, f) : 0;
    return fclose(f) == 0 && n == size ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (setup() != 0 || write_file(data, size) != 0) return 0;
    ts_graph *g = NULL;
    ts_err err = {0};
    if (ts_onnx_load(model, 0, NULL, NULL, &g, &err) == TS_OK) {
        /* a loaded graph must print: the printer walks every node */
        char *text = NULL;
        ts_err e2 = {0};
        if (ts_graph_to_text(g, &text, &e2) == TS_OK) ts_free_string(text);
        ts_graph_free(g);
    }
    char *info = NULL;
    ts_err e3 = {0};
    if (ts_onnx_info(model, &info, &e3) == TS_OK) ts_free_string(info);
    ts_onnx_sig *sig = NULL;   /* skimmed off the wire (pb_skim.c) */
    ts_err e6 = {0};
    if (ts_onnx_signature(model, &sig, &e6) == TS_OK) ts_onnx_signature_free(sig);
    ts_tensor *t = NULL;
    char *name = NULL;
    ts_err e4 = {0};
    if (ts_onnx_read_tensor(model, &t, &name, &e4) == TS_OK) {
        ts_tensor_release(t);
        ts_free_string(name);
    }
    for (const char *kind = "[?"; *kind; kind++) {
        char *form = NULL;
        int n = 0;
        ts_tensor **ts = NULL;
        ts_err e5 = {0};
        if (ts_onnx_read_value(model, *kind, &form, &n, &ts, NULL, &e5) == TS_OK) ts_onnx_value_free(form, n, ts);
    }
    return 0;
}
