/* test_onnx_load.c — the ONNX loader on the small models of tests/onnx/
 * (written by scripts/gen_onnx_test_models.py): every initializer encoding,
 * external data and its path checks, inputs with symbolic dims, known
 * values, If/Loop/Scan, model-local functions, the error of every broken
 * model, the signature (ts_onnx_signature), TensorProto files, ts_onnx_info,
 * truncated and mutated files (loaded and skimmed for a signature), and
 * a failing-allocation loop (each allocation of a load fails in turn: the
 * load answers TS_ERR_OOM or TS_OK and leaks nothing). Run from the
 * repository root (ctest does). */
#include "check.h"
#include "core/core.h"
#include "core/tensor.h"
#include "ir/ir.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIR "tests/onnx/"

/* ---- helpers ----------------------------------------------------------------------- */

static ts_status load(const char *name, ts_graph **g, ts_err *err)
{
    char path[256];
    snprintf(path, sizeof path, DIR "%s", name);
    *g = NULL;
    ts_err_clear(err);
    return ts_onnx_load(path, 0, NULL, NULL, g, err);
}

/* Expect the load of `name` to fail with code and a message holding frag. */
static void expect_fail(const char *name, ts_status code, const char *frag)
{
    ts_graph *g;
    ts_err err = {0};
    ts_status s = load(name, &g, &err);
    CHECK_MSG(s == code, "%s: got %s (%s), expected %s", name, ts_status_name(s), err.msg, ts_status_name(code));
    CHECK_MSG(strstr(err.msg, frag) != NULL, "%s: message '%s' lacks '%s'", name, err.msg, frag);
    CHECK_MSG(strchr(err.msg, '\n') == NULL, "%s: message is not one line", name);
    ts_graph_free(g);
}

static ts_tensor *f32(int rank, const int64_t *shape, const float *v)
{
    ts_tensor *t = NULL;
    if (ts_tensor_new(TS_DTYPE_F32, rank, shape, &t, NULL) != TS_OK) return NULL;
    memcpy(t->data, v, t->nbytes);
    return t;
}

static ts_tensor *scalar(ts_dtype dt, double v)
{
    ts_tensor *t = NULL;
    if (ts_tensor_new(dt, 0, NULL, &t, NULL) != TS_OK) return NULL;
    ts_elem_set_f64(dt, t->data, 0, v);
    return t;
}

/* Run g on the interpreter; outputs receive new references. */
static ts_status run(ts_graph *g, int n_in, ts_tensor *const *in, int n_out, ts_tensor **out, ts_err *err)
{
    ts_session *s = NULL;
    for (int k = 0; k < n_out; k++) out[k] = NULL;
    ts_status st = ts_session_new(g, "interp", &s, err);
    if (st == TS_OK) st = ts_session_run(s, n_in, in, n_out, out, err);
    ts_session_free(s);
    return st;
}

static bool close_f32(const ts_tensor *t, int n, const float *want)
{
    if (!t || t->dtype != TS_DTYPE_F32 || t->numel != n) return false;
    for (int i = 0; i < n; i++)
        if (((const float *)t->data)[i] != want[i]) return false;
    return true;
}

static void release_all(int n, ts_tensor **t)
{
    for (int i = 0; i < n; i++) ts_tensor_release(t[i]);
}

/* ---- plain graphs and initializers -------------------------------------------------------- */

static void test_add(const char *name)
{
    ts_graph *g;
    ts_err err = {0};
    CHECK_MSG(load(name, &g, &err) == TS_OK, "%s: %s", name, err.msg);
    if (!g) return;
    CHECK(ts_graph_num_inputs(g) == 1 && ts_graph_num_outputs(g) == 1);
    CHECK_STR(ts_graph_input_name(g, 0), "x");
    CHECK_STR(ts_graph_output_name(g, 0), "y");
    int64_t shape[2] = {2, 3};
    float xv[6] = {10, 20, 30, 40, 50, 60}, want[6] = {11, 22, 33, 44, 55, 66};
    ts_tensor *x = f32(2, shape, xv), *y;
    CHECK_MSG(run(g, 1, &x, 1, &y, &err) == TS_OK, "%s: %s", name, err.msg);
    CHECK_MSG(close_f32(y, 6, want), "%s: wrong sum", name);
    ts_tensor_release(x);
    ts_tensor_release(y);
    ts_graph_free(g);
}

static bool has_values(const ts_tensor *t, ts_dtype dt, int n, const double *v)
{
    if (!t || t->dtype != dt || t->numel != n) return false;
    for (int i = 0; i < n; i++)
        if (ts_elem_get_f64(dt, t->data, i) != v[i]) return false;
    return true;
}

static void test_typed_inits(void)
{
    static const struct {
        ts_dtype dt;
        double v[3];
    } want[] = {
        {TS_DTYPE_F16, {1.5, -2, 65504}}, {TS_DTYPE_F16, {1.5, -2, 65504}}, {TS_DTYPE_BF16, {1.5, -2, 10}},
        {TS_DTYPE_BF16, {1.5, -2, 10}}, {TS_DTYPE_I8, {-128, 0, 127}}, {TS_DTYPE_U8, {0, 1, 255}},
        {TS_DTYPE_I16, {-32768, 5, 32767}}, {TS_DTYPE_U16, {0, 7, 65535}},
        {TS_DTYPE_I32, {-2147483648.0, 9, 2147483647.0}}, {TS_DTYPE_I64, {-9223372036854775808.0, 11, 9223372036854775807.0}},
        {TS_DTYPE_U32, {0, 13, 4294967295.0}}, {TS_DTYPE_U64, {0, 15, 18446744073709551615.0}},
        {TS_DTYPE_F64, {0.25, -1e300, 3}}, {TS_DTYPE_BOOL, {1, 0, 1}}, {TS_DTYPE_BOOL, {1, 0, 1}},
    };
    enum { N = sizeof want / sizeof want[0] };
    ts_graph *g;
    ts_err err = {0};
    CHECK_MSG(load("typed_inits.onnx", &g, &err) == TS_OK, "%s", err.msg);
    if (!g) return;
    ts_tensor *out[N + 2];
    CHECK(ts_graph_num_outputs(g) == N + 2);
    CHECK_MSG(run(g, 0, NULL, N + 2, out, &err) == TS_OK, "%s", err.msg);
    for (int i = 0; i < N; i++) CHECK_MSG(has_values(out[i], want[i].dt, 3, want[i].v), "initializer %d", i);
    /* the exact extremes of the 64-bit types */
    CHECK(out[9] && ((int64_t *)out[9]->data)[0] == INT64_MIN && ((int64_t *)out[9]->data)[2] == INT64_MAX);
    CHECK(out[11] && ((uint64_t *)out[11]->data)[2] == UINT64_MAX);
    double iota[6] = {0, 1, 2, 3, 4, 5}, half[1] = {2.5};
    CHECK(has_values(out[N], TS_DTYPE_I64, 6, iota) && out[N]->rank == 2);
    CHECK(has_values(out[N + 1], TS_DTYPE_F64, 1, half) && out[N + 1]->rank == 0);
    release_all(N + 2, out);
    ts_graph_free(g);
}

static void test_constants(void)
{
    ts_graph *g;
    ts_err err = {0};
    CHECK_MSG(load("constants.onnx", &g, &err) == TS_OK, "%s", err.msg);
    if (!g) return;
    ts_tensor *out[5];
    CHECK_MSG(run(g, 0, NULL, 5, out, &err) == TS_OK, "%s", err.msg);
    double a[3] = {3, 1, 4}, b[1] = {2.5}, c[6] = {1, 2, 3, 4, 5, 6}, d[1] = {-7}, e[2] = {0.5, 1.5};
    CHECK(has_values(out[0], TS_DTYPE_I64, 3, a));
    CHECK(has_values(out[1], TS_DTYPE_F32, 1, b) && out[1]->rank == 0);
    CHECK(has_values(out[2], TS_DTYPE_F32, 6, c) && out[2]->rank == 2);
    CHECK(has_values(out[3], TS_DTYPE_I64, 1, d) && out[3]->rank == 0);
    CHECK(has_values(out[4], TS_DTYPE_F32, 2, e));
    release_all(5, out);
    ts_graph_free(g);
}

/* ---- external data -------------------------------------------------------------------------- */

static void test_external(const char *name)
{
    ts_graph *g;
    ts_err err = {0};
    CHECK_MSG(load(name, &g, &err) == TS_OK, "%s: %s", name, err.msg);
    if (!g) return;
    ts_tensor *w;
    float want[6] = {0.5, 1.5, 2.5, 3.5, 4.5, 5.5};
    CHECK_MSG(run(g, 0, NULL, 1, &w, &err) == TS_OK, "%s", err.msg);
    CHECK(close_f32(w, 6, want));
    ts_tensor_release(w);
    ts_graph_free(g);
}

/* ---- symbolic dims, known values ------------------------------------------------------------- */

static void test_dim_param(void)
{
    ts_graph *g;
    ts_err err = {0};
    CHECK_MSG(load("dim_param.onnx", &g, &err) == TS_OK, "%s", err.msg);
    if (!g) return;
    const ts_value *x = g->body->params[0];
    CHECK(x->type.rank == 2 && !ts_dim_is_const(x->type.dims[0]));
    CHECK_STR(ts_dim_sym_name(x->type.dims[0]), "batch_size");
    int64_t shape[2] = {4, 3};
    float xv[12] = {0}, want[12];
    for (int i = 0; i < 12; i++) want[i] = (float)(i % 3 + 1);
    ts_tensor *xt = f32(2, shape, xv), *y;
    CHECK_MSG(run(g, 1, &xt, 1, &y, &err) == TS_OK, "%s", err.msg);
    CHECK(close_f32(y, 12, want));
    ts_tensor_release(xt);
    ts_tensor_release(y);
    ts_graph_free(g);
}

/* A known value for an initializer replaces it. */
static void test_known_initializer(void)
{
    int64_t shape[2] = {2, 3};
    float wv[6] = {-1, -1, -1, -1, -1, -1}, xv[6] = {1, 2, 3, 4, 5, 6}, want[6] = {0, 1, 2, 3, 4, 5};
    ts_tensor *w = f32(2, shape, wv), *x = f32(2, shape, xv), *y = NULL;
    const char *names[1] = {"W"};
    ts_graph *g = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_onnx_load(DIR "add_raw.onnx", 1, names, &w, &g, &err) == TS_OK, "%s", err.msg);
    if (g) CHECK_MSG(run(g, 1, &x, 1, &y, &err) == TS_OK, "%s", err.msg);
    CHECK(close_f32(y, 6, want));
    ts_graph_free(g);
    const char *bad[1] = {"nope"};
    g = NULL;
    CHECK(ts_onnx_load(DIR "add_raw.onnx", 1, bad, &w, &g, &err) == TS_ERR_INVALID_ARG && !g);
    release_all(1, &w);
    ts_tensor_release(x);
    ts_tensor_release(y);
}

/* A known graph input that an operator needs as a constant (the Loop's
 * trip count, for its scan output) lets the model load and pins it. */
static void test_known_input(void)
{
    ts_graph *g = NULL;
    ts_err err = {0};
    expect_fail("loop_scan_m.onnx", TS_ERR_UNSUPPORTED, "constant trip count");
    ts_tensor *m3 = scalar(TS_DTYPE_I64, 3), *m4 = scalar(TS_DTYPE_I64, 4);
    const char *names[1] = {"M"};
    CHECK_MSG(ts_onnx_load(DIR "loop_scan_m.onnx", 1, names, &m3, &g, &err) == TS_OK, "%s", err.msg);
    if (!g) goto done;
    CHECK(ts_graph_num_inputs(g) == 2 && g->n_pins == 1);
    int64_t two = 2;
    float xv[2] = {1, 2}, want_y[2] = {4, 5}, want_ys[6] = {2, 3, 3, 4, 4, 5};
    ts_tensor *x = f32(1, &two, xv), *out[2];
    ts_tensor *in[2] = {m3, x};
    CHECK_MSG(run(g, 2, in, 2, out, &err) == TS_OK, "%s", err.msg);
    CHECK(close_f32(out[0], 2, want_y) && close_f32(out[1], 6, want_ys));
    release_all(2, out);
    in[0] = m4;
    CHECK(run(g, 2, in, 2, out, &err) != TS_OK);
    release_all(2, out);
    ts_tensor_release(x);
done:
    ts_graph_free(g);
    ts_tensor_release(m3);
    ts_tensor_release(m4);
}

/* A value computed from known inputs is a constant too: M = K + 1. */
static void test_known_computed(void)
{
    ts_graph *g = NULL;
    ts_err err = {0};
    expect_fail("loop_scan_k.onnx", TS_ERR_UNSUPPORTED, "constant trip count");
    ts_tensor *k2 = scalar(TS_DTYPE_I64, 2);
    const char *names[1] = {"K"};
    CHECK_MSG(ts_onnx_load(DIR "loop_scan_k.onnx", 1, names, &k2, &g, &err) == TS_OK, "%s", err.msg);
    if (g) {
        CHECK(g->n_pins == 1 && g->pins[0].input == 0);
        int64_t two = 2;
        float xv[2] = {1, 2}, want_ys[6] = {2, 3, 3, 4, 4, 5};
        ts_tensor *x = f32(1, &two, xv), *out[2], *in[2] = {k2, x};
        CHECK_MSG(run(g, 2, in, 2, out, &err) == TS_OK, "%s", err.msg);
        CHECK(out[1] && out[1]->rank == 2 && out[1]->shape[0] == 3 && close_f32(out[1], 6, want_ys));
        release_all(2, out);
        ts_tensor_release(x);
    }
    ts_graph_free(g);
    ts_tensor_release(k2);
}

/* ---- control flow and functions ------------------------------------------------------------------ */

static void test_if(void)
{
    ts_graph *g;
    ts_err err = {0};
    CHECK_MSG(load("if.onnx", &g, &err) == TS_OK, "%s", err.msg);
    if (!g) return;
    int64_t three = 3;
    float xv[3] = {1, 2, 3}, then_w[3] = {2, 3, 4}, else_w[3] = {2, 4, 6};
    ts_tensor *x = f32(1, &three, xv), *c = scalar(TS_DTYPE_BOOL, 1), *y;
    ts_tensor *in[2] = {c, x};
    CHECK_MSG(run(g, 2, in, 1, &y, &err) == TS_OK, "%s", err.msg);
    CHECK(close_f32(y, 3, then_w));
    ts_tensor_release(y);
    *(uint8_t *)c->data = 0;
    CHECK_MSG(run(g, 2, in, 1, &y, &err) == TS_OK, "%s", err.msg);
    CHECK(close_f32(y, 3, else_w));
    ts_tensor_release(y);
    ts_graph_free(g);
    /* a constant condition builds only the branch taken, inline */
    CHECK_MSG(load("if_const.onnx", &g, &err) == TS_OK, "%s", err.msg);
    if (g) {
        bool has_if = false;
        for (ts_node *n = g->body->first; n; n = n->next) has_if = has_if || n->op == TS_OP_IF;
        CHECK(!has_if);
        CHECK_MSG(run(g, 1, &x, 1, &y, &err) == TS_OK, "%s", err.msg);
        CHECK(close_f32(y, 3, else_w));
        ts_tensor_release(y);
    }
    ts_graph_free(g);
    ts_tensor_release(x);
    ts_tensor_release(c);
}

static void test_loop(void)
{
    ts_graph *g;
    ts_err err = {0};
    CHECK_MSG(load("loop.onnx", &g, &err) == TS_OK, "%s", err.msg);
    if (!g) return;
    int64_t two = 2;
    float xv[2] = {1, 2}, w3[2] = {4, 5};
    ts_tensor *x = f32(1, &two, xv), *m = scalar(TS_DTYPE_I64, 3), *y;
    ts_tensor *in[2] = {m, x};
    CHECK_MSG(run(g, 2, in, 1, &y, &err) == TS_OK, "%s", err.msg);
    CHECK(close_f32(y, 2, w3));
    ts_tensor_release(y);
    *(int64_t *)m->data = 0;
    CHECK_MSG(run(g, 2, in, 1, &y, &err) == TS_OK, "%s", err.msg);
    CHECK(close_f32(y, 2, xv));
    ts_tensor_release(y);
    ts_graph_free(g);

    CHECK_MSG(load("loop_scan.onnx", &g, &err) == TS_OK, "%s", err.msg);
    if (g) {
        ts_tensor *out[2];
        float ys[6] = {2, 3, 3, 4, 4, 5};
        CHECK_MSG(run(g, 1, &x, 2, out, &err) == TS_OK, "%s", err.msg);
        CHECK(close_f32(out[0], 2, w3) && close_f32(out[1], 6, ys));
        release_all(2, out);
    }
    ts_graph_free(g);
    ts_tensor_release(x);
    ts_tensor_release(m);
}

static void test_scan(void)
{
    ts_graph *g;
    ts_err err = {0};
    CHECK_MSG(load("scan.onnx", &g, &err) == TS_OK, "%s", err.msg);
    if (!g) return;
    int64_t two = 2, shape[2] = {3, 2};
    float iv[2] = {0, 0}, xv[6] = {1, 2, 3, 4, 5, 6}, fin[2] = {9, 12}, part[6] = {1, 2, 4, 6, 9, 12};
    ts_tensor *in[2] = {f32(1, &two, iv), f32(2, shape, xv)}, *out[2];
    CHECK_MSG(run(g, 2, in, 2, out, &err) == TS_OK, "%s", err.msg);
    CHECK(close_f32(out[0], 2, fin) && close_f32(out[1], 6, part));
    release_all(2, out);
    release_all(2, in);
    ts_graph_free(g);
}

static void test_function(void)
{
    ts_graph *g;
    ts_err err = {0};
    CHECK_MSG(load("function.onnx", &g, &err) == TS_OK, "%s", err.msg);
    if (!g) return;
    int64_t shape[2] = {2, 3};
    float xv[6] = {1, 1, 1, 1, 1, 1}, want[6] = {6, 9, 12, 15, 18, 21};
    ts_tensor *x = f32(2, shape, xv), *y;
    CHECK_MSG(run(g, 1, &x, 1, &y, &err) == TS_OK, "%s", err.msg);
    CHECK(close_f32(y, 6, want));
    ts_tensor_release(x);
    ts_tensor_release(y);
    ts_graph_free(g);
}

/* ---- errors ----------------------------------------------------------------------------------- */

static void test_errors(void)
{
    expect_fail("missing_op.onnx", TS_ERR_UNSUPPORTED, "node 'n3' (FooBar): operator FooBar (opset 17) is not supported");
    expect_fail("domain_op.onnx", TS_ERR_UNSUPPORTED, "'com.microsoft'");
    expect_fail("undefined_input.onnx", TS_ERR_INVALID_MODEL, "input 'nowhere' is not defined");
    expect_fail("sequence_input.onnx", TS_ERR_UNSUPPORTED, "input 's' is a sequence: tessera needs its value");
    expect_fail("string_init.onnx", TS_ERR_UNSUPPORTED, "STRING");
    expect_fail("constant_string.onnx", TS_ERR_UNSUPPORTED, "value_string");
    expect_fail("output_mismatch.onnx", TS_ERR_SHAPE,
                "output W: the model declares f32[2, 3] but the graph computes f32[2, 4]");
    expect_fail("short_init.onnx", TS_ERR_INVALID_MODEL, "initializer 'W'");
    expect_fail("external_escape.onnx", TS_ERR_INVALID_MODEL, "outside the model's folder");
    expect_fail("external_abs.onnx", TS_ERR_INVALID_MODEL, "outside the model's folder");
    expect_fail("external_missing.onnx", TS_ERR_IO, "missing.bin");
    expect_fail("external_short.onnx", TS_ERR_INVALID_MODEL, "external data needs");
    expect_fail("no_such_model.onnx", TS_ERR_IO, "no_such_model.onnx");
}

/* ---- broken files ------------------------------------------------------------------------------- */

static char tmp_dir[64];

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *b = malloc(1 << 16);
    *len = b ? fread(b, 1, 1 << 16, f) : 0;
    fclose(f);
    return b;
}

/* Write len bytes to a file in the temp folder and load it: any status
 * but a crash; a success must make a graph. */
static ts_status load_bytes(const unsigned char *b, size_t len, ts_err *err)
{
    char path[128];
    snprintf(path, sizeof path, "%s/m.onnx", tmp_dir);
    FILE *f = fopen(path, "wb");
    if (!f) return TS_ERR_IO;
    fwrite(b, 1, len, f);
    fclose(f);
    ts_graph *g = NULL;
    ts_err_clear(err);
    ts_status s = ts_onnx_load(path, 0, NULL, NULL, &g, err);
    CHECK(s == TS_OK ? g != NULL : g == NULL);
    ts_graph_free(g);
    /* the signature skims the same bytes (D197): any status but a crash,
     * and a file that loads has one */
    ts_onnx_sig *sig = NULL;
    ts_err serr = {0};
    ts_status ss = ts_onnx_signature(path, &sig, &serr);
    CHECK(ss == TS_OK ? sig != NULL : sig == NULL);
    CHECK_MSG(s != TS_OK || ss == TS_OK, "loads, but its signature fails: %s", serr.msg);
    ts_onnx_signature_free(sig);
    return s;
}

static uint64_t rng = 0x5eed0f0a11ULL;
static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void test_broken_files(void)
{
    static const char *const seeds[] = {"add_raw.onnx", "if.onnx", "loop_scan.onnx", "scan.onnx", "function.onnx",
                                        "typed_inits.onnx"};
    ts_err err;
    size_t len;
    unsigned char *b = slurp(DIR "add_raw.onnx", &len);
    CHECK(b && len > 20);
    if (!b) return;
    CHECK(load_bytes(b, len / 2, &err) == TS_ERR_INVALID_MODEL);
    unsigned char garbage[200];
    for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (unsigned char)rnd();
    CHECK(load_bytes(garbage, sizeof garbage, &err) == TS_ERR_INVALID_MODEL);
    CHECK(load_bytes((const unsigned char *)"", 0, &err) == TS_ERR_INVALID_MODEL);
    free(b);
    int ok = 0;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        char path[128];
        snprintf(path, sizeof path, DIR "%s", seeds[s]);
        if (!(b = slurp(path, &len))) continue;
        for (size_t cut = 0; cut < len; cut++) ok += load_bytes(b, cut, &err) == TS_OK;
        unsigned char *m = malloc(len);
        for (int i = 0; m && i < 300; i++) {
            memcpy(m, b, len);
            for (int k = 0; k < 1 + (int)(rnd() % 4); k++) m[rnd() % len] ^= (unsigned char)(1u << (rnd() % 8));
            ok += load_bytes(m, len, &err) == TS_OK;
        }
        free(m);
        free(b);
    }
    printf("broken files: %d of the mutants still loaded\n", ok);
}

/* ---- the signature (skimmed off the wire, D197) ------------------------------------------------- */

static ts_onnx_sig *sig_of(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, DIR "%s", name);
    ts_onnx_sig *s = NULL;
    ts_err err = {0};
    ts_status st = ts_onnx_signature(path, &s, &err);
    CHECK_MSG(st == TS_OK, "signature of %s: %s", name, err.msg);
    return s;
}

/* Input i of s is name, an initializer or not, kind (NULL: a tensor),
 * rank dims (rank -2: not checked). */
static void expect_input(const ts_onnx_sig *s, int i, const char *name, bool init, const char *kind, int rank,
                         const int64_t *dims)
{
    const char *n = NULL, *k = NULL;
    bool in = false;
    int et = 0, r = 0;
    const int64_t *d = NULL;
    CHECK(ts_onnx_sig_input(s, i, &n, &in, &k, &et, &r, &d, NULL) == TS_OK);
    CHECK_MSG(n && strcmp(n, name) == 0, "input %d: '%s', expected '%s'", i, n ? n : "(null)", name);
    CHECK_MSG(in == init, "input %s: initializer %d", name, in);
    CHECK_MSG(kind ? k && strcmp(k, kind) == 0 : k == NULL, "input %s: kind %s", name, k ? k : "tensor");
    if (rank == -2) return;
    CHECK_MSG(r == rank, "input %s: rank %d, expected %d", name, r, rank);
    for (int j = 0; j < rank && r == rank; j++)
        CHECK_MSG(d[j] == dims[j], "input %s: dim %d is %lld", name, j, (long long)d[j]);
    if (!kind) CHECK(et == 1);   /* FLOAT */
}

static void test_signature(void)
{
    static const int64_t d23[] = {2, 3}, dsym[] = {-1, 3};
    ts_onnx_sig *s = sig_of("add_ir3.onnx");   /* W is an input with a default */
    if (s) {
        CHECK(ts_onnx_sig_inputs(s) == 2 && ts_onnx_sig_outputs(s) == 1);
        expect_input(s, 0, "x", false, NULL, 2, d23);
        expect_input(s, 1, "W", true, NULL, 2, d23);
        const char *y = NULL;
        CHECK(ts_onnx_sig_output(s, 0, &y, NULL, NULL, NULL, NULL, NULL) == TS_OK && y && strcmp(y, "y") == 0);
    }
    ts_onnx_signature_free(s);
    if ((s = sig_of("dim_param.onnx"))) expect_input(s, 0, "x", false, NULL, 2, dsym);
    ts_onnx_signature_free(s);
    if ((s = sig_of("opt_input.onnx"))) expect_input(s, 0, "o", false, "optional", -2, NULL);
    ts_onnx_signature_free(s);
    if ((s = sig_of("seq_map.onnx"))) expect_input(s, 0, "xs", false, "sequence", -2, NULL);
    ts_onnx_signature_free(s);
    if ((s = sig_of("sparse_init.onnx"))) expect_input(s, 0, "S", true, NULL, 2, d23);
    ts_onnx_signature_free(s);
    expect_fail("sparse_init.onnx", TS_ERR_UNSUPPORTED, "sparse initializers");
    if ((s = sig_of("typed_inits.onnx"))) CHECK(ts_onnx_sig_inputs(s) == 0 && ts_onnx_sig_outputs(s) == 17);
    ts_onnx_signature_free(s);
    /* a file that does not parse: the loader's error, word for word */
    ts_err a = {0}, b = {0};
    ts_graph *g = NULL;
    CHECK(ts_onnx_signature(DIR "external.bin", &s, &a) == TS_ERR_INVALID_MODEL && s == NULL);
    CHECK(ts_onnx_load(DIR "external.bin", 0, NULL, NULL, &g, &b) == TS_ERR_INVALID_MODEL);
    CHECK_MSG(strcmp(a.msg, b.msg) == 0, "signature '%s', load '%s'", a.msg, b.msg);
    ts_err_clear(&a);
    CHECK(ts_onnx_signature(DIR "no_such.onnx", &s, &a) == TS_ERR_IO && strstr(a.msg, "no_such.onnx"));
}

/* ---- TensorProto files and info ----------------------------------------------------------------- */

static void test_tensor_files(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/t.pb", tmp_dir);
    int64_t shape[2] = {2, 2};
    float v[4] = {1, -2, 3.5f, 1e-3f};
    ts_tensor *t = f32(2, shape, v), *r = NULL;
    ts_err err = {0};
    char *name = NULL;
    CHECK_MSG(ts_onnx_write_tensor(path, t, "weights", &err) == TS_OK, "%s", err.msg);
    CHECK_MSG(ts_onnx_read_tensor(path, &r, &name, &err) == TS_OK, "%s", err.msg);
    CHECK(r && ts_tensor_equal(t, r));
    CHECK_STR(name, "weights");
    ts_free_string(name);
    ts_tensor_release(r);
    ts_tensor_release(t);
    ts_tensor *i = scalar(TS_DTYPE_I64, -5);
    r = NULL;
    CHECK(ts_onnx_write_tensor(path, i, NULL, &err) == TS_OK && ts_onnx_read_tensor(path, &r, NULL, &err) == TS_OK);
    CHECK(r && ts_tensor_equal(i, r));
    ts_tensor_release(r);
    ts_tensor_release(i);
    /* a file from the ONNX test data, when the venv has it */
    const char *onnx_pb = ".venv/lib/python3.11/site-packages/onnx/backend/test/data/node/test_add/test_data_set_0/input_0.pb";
    if (access(onnx_pb, R_OK) == 0) {
        CHECK_MSG(ts_onnx_read_tensor(onnx_pb, &r, NULL, &err) == TS_OK, "%s", err.msg);
        CHECK(r && r->dtype == TS_DTYPE_F32 && r->rank == 3 && r->numel == 60);
        ts_tensor_release(r);
    }
    CHECK(ts_onnx_read_tensor(DIR "add_raw.onnx", &r, NULL, &err) != TS_OK);
}

static void test_info(void)
{
    char *text = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_onnx_info(DIR "missing_op.onnx", &text, &err) == TS_OK, "%s", err.msg);
    CHECK(text && strstr(text, "FooBar") && strstr(text, "MISSING") && strstr(text, "ir_version   8"));
    ts_free_string(text);
    text = NULL;
    CHECK_MSG(ts_onnx_info(DIR "function.onnx", &text, &err) == TS_OK, "%s", err.msg);
    CHECK(text && strstr(text, "local.AddScale") && strstr(text, "function") && strstr(text, "x "));
    CHECK(text && strstr(text, "initializers 1 (6 parameters"));
    ts_free_string(text);
    CHECK(ts_onnx_info(DIR "no_such.onnx", &text, &err) == TS_ERR_IO);
}

/* ---- allocation failures -------------------------------------------------------------------------- */

static long fail_at, n_allocs, live;

static void *failing_alloc(void *ud, void *p, size_t n)
{
    (void)ud;
    if (n == 0) {
        if (p) live--;
        free(p);
        return NULL;
    }
    if (++n_allocs == fail_at) return NULL;
    void *q = realloc(p, n);
    if (q && !p) live++;
    return q;
}

/* Fail the k-th allocation of a load for every k until a load needs no
 * more than k: each answer is TS_ERR_OOM or the model's own answer (TS_OK,
 * or the error of a broken model), and every block is freed. */
static void test_oom(const char *name, ts_status own)
{
    char path[128];
    snprintf(path, sizeof path, DIR "%s", name);
    int bad = 0, leaks = 0;
    long k;
    for (k = 1; k < 100000; k++) {
        fail_at = k;
        n_allocs = 0;
        live = 0;
        ts_set_allocator(failing_alloc, NULL);
        ts_graph *g = NULL;
        ts_err err = {0};
        ts_status s = ts_onnx_load(path, 0, NULL, NULL, &g, &err);
        if (s != own && s != TS_ERR_OOM) {
            if (bad++ < 3) fprintf(stderr, "%s: allocation %ld failed: %s: %s\n", name, k, ts_status_name(s), err.msg);
        }
        ts_graph_free(g);
        bool done = n_allocs < k;
        ts_set_allocator(NULL, NULL);
        if (live) leaks++;
        if (done) break;
    }
    CHECK_MSG(bad == 0, "%s: %d loads failed with something other than TS_ERR_OOM", name, bad);
    CHECK_MSG(leaks == 0, "%s: %d loads leaked", name, leaks);
    CHECK_MSG(k > 5 && k < 100000, "%s: %ld allocations", name, k);
}

int main(void)
{
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/ts_onnx_XXXXXX");
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_add("add_raw.onnx");
    test_add("add_float_data.onnx");
    test_add("add_ir3.onnx");
    test_typed_inits();
    test_constants();
    test_external("external.onnx");
    test_external("external_dots.onnx");
    test_dim_param();
    test_known_initializer();
    test_known_input();
    test_known_computed();
    test_if();
    test_loop();
    test_scan();
    test_function();
    test_errors();
    test_tensor_files();
    test_info();
    test_broken_files();
    test_signature();
    static const char *const oom_models[] = {"add_raw.onnx", "typed_inits.onnx", "external.onnx", "if.onnx",
                                             "loop_scan.onnx", "scan.onnx", "function.onnx", "dim_param.onnx"};
    for (size_t i = 0; i < sizeof oom_models / sizeof oom_models[0]; i++) test_oom(oom_models[i], TS_OK);
    test_oom("missing_op.onnx", TS_ERR_UNSUPPORTED);
    test_oom("external_escape.onnx", TS_ERR_INVALID_MODEL);
    char path[128];
    snprintf(path, sizeof path, "%s/m.onnx", tmp_dir);
    remove(path);
    snprintf(path, sizeof path, "%s/t.pb", tmp_dir);
    remove(path);
    rmdir(tmp_dir);
    return check_report();
}
