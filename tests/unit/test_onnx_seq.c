/* test_onnx_seq.c — ONNX sequences and optionals (D17) on the small models
 * of tests/onnx/ (scripts/gen_onnx_test_models.py; expected values checked
 * against onnxruntime when the models were written): forms, every sequence
 * operator, sequence and optional inputs given as forms, sequence outputs
 * and their forms, SequenceMap, an unrolled Loop, If over sequences with a
 * run-time condition, Scan-8, the error of every refused model and of
 * every badly given value, SequenceProto/OptionalProto files (round trips,
 * truncations, bit flips), and a failing-allocation loop. Run from the
 * repository root (ctest does). */
#include "check.h"
#include "core/core.h"
#include "core/tensor.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIR "tests/onnx/"

/* ---- helpers ------------------------------------------------------------------------- */

static ts_tensor *f32(int rank, const int64_t *shape, const float *v)
{
    ts_tensor *t = NULL;
    if (ts_tensor_new(TS_DTYPE_F32, rank, shape, &t, NULL) != TS_OK) return NULL;
    memcpy(t->data, v, t->nbytes);
    return t;
}

static ts_tensor *vec(int n, const float *v)
{
    int64_t shape[1] = {n};
    return f32(1, shape, v);
}

static ts_tensor *scalar(ts_dtype dt, double v)
{
    ts_tensor *t = NULL;
    if (ts_tensor_new(dt, 0, NULL, &t, NULL) != TS_OK) return NULL;
    ts_elem_set_f64(dt, t->data, 0, v);
    return t;
}

static bool values_are(const ts_tensor *t, int n, const double *want)
{
    if (!t || t->numel != n) return false;
    for (int i = 0; i < n; i++)
        if (ts_elem_get_f64(t->dtype, t->data, i) != want[i]) return false;
    return true;
}

/* A model loaded with known values given as forms; out_forms joined by
 * ';' into forms_text. */
typedef struct loaded {
    ts_graph *g;
    int n_forms;
    char **forms;
    char forms_text[256];
} loaded;

static ts_status load(const char *name, int n_known, const char *const *names, const char *const *forms,
                      int n_values, ts_tensor *const *values, loaded *l, ts_err *err)
{
    char path[256];
    snprintf(path, sizeof path, DIR "%s", name);
    memset(l, 0, sizeof *l);
    ts_err_clear(err);
    ts_status s = ts_onnx_load_forms(path, n_known, names, forms, n_values, values, &l->g, &l->n_forms, &l->forms, err);
    for (int k = 0; s == TS_OK && k < l->n_forms; k++) {
        size_t len = strlen(l->forms_text);
        snprintf(l->forms_text + len, sizeof l->forms_text - len, "%s%s", k ? ";" : "", l->forms[k]);
    }
    return s;
}

static void unload(loaded *l)
{
    ts_onnx_forms_free(l->forms, l->n_forms);
    ts_graph_free(l->g);
    memset(l, 0, sizeof *l);
}

static ts_status run(ts_graph *g, int n_in, ts_tensor *const *in, int n_out, ts_tensor **out, ts_err *err)
{
    ts_session *s = NULL;
    ts_status st = ts_session_new(g, "interp", &s, err);
    if (st == TS_OK) st = ts_session_run(s, n_in, in, n_out, out, err);
    ts_session_free(s);
    return st;
}

static void release_all(int n, ts_tensor **t)
{
    for (int i = 0; i < n; i++) ts_tensor_release(t[i]);
}

/* The load of `name` (with the given values) fails with code and a
 * one-line message holding frag. */
static void expect_fail(const char *name, int n_known, const char *const *names, const char *const *forms,
                        int n_values, ts_tensor *const *values, ts_status code, const char *frag)
{
    loaded l;
    ts_err err = {0};
    ts_status s = load(name, n_known, names, forms, n_values, values, &l, &err);
    CHECK_MSG(s == code, "%s: got %s (%s), expected %s", name, ts_status_name(s), err.msg, ts_status_name(code));
    CHECK_MSG(strstr(err.msg, frag) != NULL, "%s: message '%s' lacks '%s'", name, err.msg, frag);
    CHECK_MSG(strchr(err.msg, '\n') == NULL, "%s: message is not one line", name);
    unload(&l);
}

/* ---- forms ---------------------------------------------------------------------------- */

static void test_forms(void)
{
    CHECK(ts_onnx_form_tensors(NULL) == 1);
    CHECK(ts_onnx_form_tensors("t") == 1);
    CHECK(ts_onnx_form_tensors("[]") == 0);
    CHECK(ts_onnx_form_tensors("[t,t,t]") == 3);
    CHECK(ts_onnx_form_tensors("?") == 0);
    CHECK(ts_onnx_form_tensors("?t") == 1);
    CHECK(ts_onnx_form_tensors("?[t,?t,?]") == 2);
    CHECK(ts_onnx_form_tensors("[[t],[],[t,t]]") == 3);
    static const char *const bad[] = {"", "x", "[", "[t", "[t,", "[t,]", "t,t", "tt", "[t] ", " t", "?x", "]", "[,]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(ts_onnx_form_tensors(bad[i]) == -1, "form '%s' parsed", bad[i]);
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 99);
    deep[199] = 0;
    CHECK(ts_onnx_form_tensors(deep) == -1);   /* 100 deep: refused, not a stack overflow */
}

/* ---- the operators ------------------------------------------------------------------------ */

static void test_seq_ops(void)
{
    loaded l;
    ts_err err = {0};
    CHECK_MSG(load("seq_ops.onnx", 0, NULL, NULL, 0, NULL, &l, &err) == TS_OK, "%s", err.msg);
    if (!l.g) return;
    CHECK_STR(l.forms_text, "t;t;t;t;[t,t];[t,t];[]");
    CHECK(ts_graph_num_outputs(l.g) == 8);
    float xv[6] = {0, 1, 2, 3, 4, 5}, yv[6] = {0, -1, -2, -3, -4, -5};
    int64_t shape[2] = {2, 3};
    ts_tensor *in[2] = {f32(2, shape, xv), f32(2, shape, yv)}, *out[8] = {0};
    CHECK_MSG(run(l.g, 2, in, 8, out, &err) == TS_OK, "%s", err.msg);
    static const double len[1] = {2}, cat[12] = {0, 1, 2, 0, -1, -2, 3, 4, 5, -3, -4, -5},
                        stack[12] = {0, 1, 2, 3, 4, 5, 0, -1, -2, -3, -4, -5}, p0[4] = {0, 1, 3, 4},
                        p1[8] = {2, 0, -1, -2, 5, -3, -4, -5}, r1[3] = {3, 4, 5};
    CHECK(out[0] && out[0]->dtype == TS_DTYPE_I64 && values_are(out[0], 1, len));
    CHECK(values_are(out[1], 6, stack + 6));
    CHECK(values_are(out[2], 12, cat));
    CHECK(out[3] && out[3]->rank == 3 && values_are(out[3], 12, stack));
    CHECK(out[4] && out[4]->shape[1] == 2 && values_are(out[4], 4, p0));
    CHECK(out[5] && out[5]->shape[1] == 4 && values_are(out[5], 8, p1));
    CHECK(out[6] && out[6]->rank == 1 && values_are(out[6], 3, stack));
    CHECK(values_are(out[7], 3, r1));
    release_all(8, out);
    release_all(2, in);
    unload(&l);
}

/* A sequence input given as a form: each element is one graph input. */
static void test_seq_map(void)
{
    float a[3] = {1, 2, 3}, b[3] = {4, 5, 6}, c[3] = {7, 8, 9}, one[3] = {1, 1, 1};
    ts_tensor *vals[4] = {vec(3, a), vec(3, b), vec(3, c), vec(3, one)};
    const char *names[2] = {"xs", "b"}, *forms[2] = {"[t,t,t]", NULL};
    loaded l;
    ts_err err = {0};
    CHECK_MSG(load("seq_map.onnx", 2, names, forms, 4, vals, &l, &err) == TS_OK, "%s", err.msg);
    if (!l.g) {
        release_all(4, vals);
        return;
    }
    CHECK_STR(l.forms_text, "[t,t,t];[t,t,t];t;t");
    CHECK(ts_graph_num_inputs(l.g) == 4);
    ts_tensor *out[8] = {0};
    CHECK_MSG(run(l.g, 4, vals, 8, out, &err) == TS_OK, "%s", err.msg);
    static const double y0[3] = {4, 6, 8}, y2[3] = {16, 18, 20}, shape[1] = {3}, t[1] = {1}, ones[3] = {1, 1, 1};
    CHECK(values_are(out[0], 3, y0));
    CHECK(values_are(out[2], 3, y2));
    CHECK(values_are(out[3], 1, shape) && values_are(out[5], 1, shape));
    CHECK(out[6] && out[6]->dtype == TS_DTYPE_BOOL && values_are(out[6], 1, t));
    CHECK(values_are(out[7], 3, ones));
    release_all(8, out);
    unload(&l);
    /* an empty sequence: the map yields empty sequences */
    forms[0] = "[]";
    CHECK_MSG(load("seq_map.onnx", 2, names, forms, 1, vals + 3, &l, &err) == TS_OK, "%s", err.msg);
    CHECK_STR(l.forms_text, "[];[];t;t");
    unload(&l);
    release_all(4, vals);
}

/* An optional input: present, absent, and its presence deciding an If. */
static void test_opt_input(void)
{
    float v[2] = {3, 4};
    ts_tensor *x = vec(2, v), *out[3] = {0};
    const char *names[1] = {"o"}, *full[1] = {"?t"}, *none[1] = {"?"};
    loaded l;
    ts_err err = {0};
    CHECK_MSG(load("opt_input.onnx", 1, names, full, 1, &x, &l, &err) == TS_OK, "%s", err.msg);
    if (l.g) {
        CHECK_STR(l.forms_text, "t;t;?t");
        CHECK_MSG(run(l.g, 1, &x, 3, out, &err) == TS_OK, "%s", err.msg);
        static const double has[1] = {1}, y[2] = {4, 5}, o[2] = {3, 4};
        CHECK(values_are(out[0], 1, has) && values_are(out[1], 2, y) && values_are(out[2], 2, o));
        release_all(3, out);
    }
    unload(&l);
    CHECK_MSG(load("opt_input.onnx", 1, names, none, 0, NULL, &l, &err) == TS_OK, "%s", err.msg);
    if (l.g) {
        CHECK_STR(l.forms_text, "t;t;?");
        CHECK(ts_graph_num_inputs(l.g) == 0 && ts_graph_num_outputs(l.g) == 2);
        CHECK_MSG(run(l.g, 0, NULL, 2, out, &err) == TS_OK, "%s", err.msg);
        static const double no[1] = {0}, zeros[2] = {0, 0};
        CHECK(values_are(out[0], 1, no) && values_are(out[1], 2, zeros));
        release_all(2, out);
    }
    unload(&l);
    ts_tensor_release(x);
}

/* A Loop growing a sequence, unrolled; another reading it at the
 * iteration's position. */
static void test_loop_seq(void)
{
    float xv[2] = {1, 2};
    ts_tensor *in[2] = {scalar(TS_DTYPE_I64, 3), vec(2, xv)}, *out[3] = {0};
    const char *names[1] = {"M"};
    loaded l;
    ts_err err = {0};
    CHECK_MSG(load("loop_seq.onnx", 1, names, NULL, 1, in, &l, &err) == TS_OK, "%s", err.msg);
    if (l.g) {
        CHECK_MSG(run(l.g, 2, in, 3, out, &err) == TS_OK, "%s", err.msg);
        static const double flat[6] = {0, 0, 1, 2, 2, 4}, total[2] = {4, 8};
        CHECK(values_are(out[0], 6, flat));
        CHECK(out[1] && out[1]->rank == 2 && values_are(out[1], 6, flat));
        CHECK(values_are(out[2], 2, total));
        ts_tensor *m4 = scalar(TS_DTYPE_I64, 4), *in2[2] = {m4, in[1]}, *o2[3] = {0};
        CHECK(run(l.g, 2, in2, 3, o2, &err) != TS_OK);   /* pinned to M = 3 */
        ts_tensor_release(m4);
        release_all(3, out);
    }
    unload(&l);
    expect_fail("loop_seq.onnx", 0, NULL, NULL, 0, NULL, TS_ERR_UNSUPPORTED, "the trip count M must be known");
    release_all(2, in);
}

/* If with a condition known only at run time, over sequences. */
static void test_if_seq(void)
{
    float xv[2] = {1, 2};
    ts_tensor *x = vec(2, xv), *c[2] = {scalar(TS_DTYPE_BOOL, 1), scalar(TS_DTYPE_BOOL, 0)}, *out[2] = {0};
    loaded l;
    ts_err err = {0};
    CHECK_MSG(load("if_seq.onnx", 0, NULL, NULL, 0, NULL, &l, &err) == TS_OK, "%s", err.msg);
    if (l.g) {
        CHECK_STR(l.forms_text, "[t,t]");
        static const double want[2][4] = {{2, 3, -1, -2}, {2, 4, 1, 2}};
        for (int k = 0; k < 2; k++) {
            ts_tensor *in[2] = {c[k], x};
            CHECK_MSG(run(l.g, 2, in, 2, out, &err) == TS_OK, "%s", err.msg);
            CHECK(values_are(out[0], 2, want[k]) && values_are(out[1], 2, want[k] + 2));
            release_all(2, out);
        }
    }
    unload(&l);
    ts_tensor_release(x);
    release_all(2, c);
}

/* Scan-8: batch 2, reversed input direction. */
static void test_scan8(void)
{
    float init[4] = {0, 0, 0, 0}, xv[12];
    for (int i = 0; i < 12; i++) xv[i] = (float)i;
    int64_t s2[2] = {2, 2}, s3[3] = {2, 3, 2};
    ts_tensor *in[2] = {f32(2, s2, init), f32(3, s3, xv)}, *out[2] = {0};
    loaded l;
    ts_err err = {0};
    CHECK_MSG(load("scan8.onnx", 0, NULL, NULL, 0, NULL, &l, &err) == TS_OK, "%s", err.msg);
    if (l.g) {
        CHECK_MSG(run(l.g, 2, in, 2, out, &err) == TS_OK, "%s", err.msg);
        static const double fin[4] = {6, 9, 24, 27}, part[12] = {4, 5, 6, 8, 6, 9, 10, 11, 18, 20, 24, 27};
        CHECK(values_are(out[0], 4, fin));
        CHECK(values_are(out[1], 12, part));
        release_all(2, out);
    }
    unload(&l);
    release_all(2, in);
    expect_fail("scan8_lens.onnx", 0, NULL, NULL, 0, NULL, TS_ERR_UNSUPPORTED, "sequence_lens[1] differs");
}

/* ---- errors --------------------------------------------------------------------------------- */

static void test_errors(void)
{
    float v[2] = {1, 2}, w[3] = {1, 2, 3};
    ts_tensor *x = vec(2, v), *x3 = vec(3, w), *i = scalar(TS_DTYPE_I64, 1);
    const char *xs[2] = {"xs", "b"};
    const char *fb3[2] = {"[t]", NULL};
    ts_tensor *b3[2] = {x3, x};   /* seq(f32[N]) of [3] beside b: f32[N] of [2]: loads, and the run says N differs */
    loaded l;
    ts_err err = {0};
    CHECK_MSG(load("seq_map.onnx", 2, xs, fb3, 2, b3, &l, &err) == TS_OK, "%s", err.msg);
    ts_tensor *out[4] = {0};
    CHECK(l.g && run(l.g, 2, b3, 4, out, &err) != TS_OK && err.msg[0]);
    unload(&l);
    expect_fail("seq_at_input.onnx", 0, NULL, NULL, 0, NULL, TS_ERR_UNSUPPORTED,
                "node 'at' (SequenceAt): input 1 (position) must be known when the model is built");
    expect_fail("seq_to_add.onnx", 0, NULL, NULL, 0, NULL, TS_ERR_INVALID_MODEL,
                "node 'add' (Add): input 0 ('s') is a sequence; Add takes tensors");
    expect_fail("if_seq_mismatch.onnx", 0, NULL, NULL, 0, NULL, TS_ERR_UNSUPPORTED,
                "node 'ifm' (If): output 0: the branches yield [t] and [t,t]");
    expect_fail("opt_get_empty.onnx", 0, NULL, NULL, 0, NULL, TS_ERR_INVALID_MODEL,
                "node 'get' (OptionalGetElement): the optional is empty");
    expect_fail("loop_seq_m.onnx", 0, NULL, NULL, 0, NULL, TS_ERR_UNSUPPORTED,
                "node 'grow' (Loop): the trip count M must be known");
    expect_fail("seq_out_type.onnx", 0, NULL, NULL, 0, NULL, TS_ERR_SHAPE,
                "output s: the model declares a tensor but the graph computes a sequence");
    expect_fail("loop_seq_nested.onnx", 0, NULL, NULL, 0, NULL, TS_ERR_UNSUPPORTED, "more than tessera builds");
    /* badly given values */
    const char *f2[2] = {"[t,t]", NULL}, *fbad[2] = {"[t,", NULL}, *ft[2] = {"t", "t"}, *fopt[2] = {"?t", NULL};
    ts_tensor *two[3] = {x, x, x}, *mixed[3] = {x, i, x};
    expect_fail("seq_map.onnx", 1, xs + 1, NULL, 1, &x, TS_ERR_UNSUPPORTED,
                "input 'xs' is a sequence: tessera needs its value");
    expect_fail("seq_map.onnx", 2, xs, ft, 2, two, TS_ERR_INVALID_ARG, "input 'xs' is a sequence");
    expect_fail("seq_map.onnx", 2, xs, fbad, 3, two, TS_ERR_INVALID_ARG, "the form is malformed");
    expect_fail("seq_map.onnx", 2, xs, f2, 2, two, TS_ERR_INVALID_ARG, "the forms take more than the 2 tensors given");
    expect_fail("seq_map.onnx", 2, xs, f2, 4, (ts_tensor *[]){x, x, x, x}, TS_ERR_INVALID_ARG,
                "4 tensors were given, the forms take 3");
    expect_fail("seq_map.onnx", 2, xs, f2, 3, mixed, TS_ERR_INVALID_ARG, "a tensor is i64, the model declares f32");
    expect_fail("seq_map.onnx", 2, xs, fopt, 2, two, TS_ERR_INVALID_ARG,
                "the value is an optional, the model declares a sequence");
    const char *fx[1] = {"[t]"}, *nx[1] = {"x"};
    expect_fail("seq_ops.onnx", 1, nx, fx, 1, &x, TS_ERR_INVALID_ARG, "'x', which is no input of the model");
    const char *nX[1] = {"X"};
    expect_fail("seq_ops.onnx", 1, nX, fx, 1, &x, TS_ERR_INVALID_ARG,
                "the value is a sequence, the model declares a tensor");
    ts_tensor_release(x);
    ts_tensor_release(x3);
    ts_tensor_release(i);
}

/* ---- value files ---------------------------------------------------------------------------- */

static char tmp_dir[64];

static void round_trip(const char *form, int n, ts_tensor *const *t)
{
    char path[128];
    snprintf(path, sizeof path, "%s/v.pb", tmp_dir);
    ts_err err = {0};
    CHECK_MSG(ts_onnx_write_value(path, form, n, t, "val", &err) == TS_OK, "%s: %s", form, err.msg);
    char *got = NULL, *name = NULL;
    int m = -1;
    ts_tensor **r = NULL;
    CHECK_MSG(ts_onnx_read_value(path, form[0], &got, &m, &r, &name, &err) == TS_OK, "%s: %s", form, err.msg);
    CHECK_STR(got, form);
    CHECK_STR(name, "val");
    CHECK(m == n);
    for (int k = 0; k < n && k < m; k++) CHECK(ts_tensor_equal(r[k], t[k]));
    ts_onnx_value_free(got, m, r);
    ts_free_string(name);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *b = malloc(1 << 16);
    *len = b ? fread(b, 1, 1 << 16, f) : 0;
    fclose(f);
    return b;
}

/* Every prefix and some bit flips of a value file: an error or a value,
 * never a crash (the sanitizer build watches). */
static void broken_values(const char *form, char kind)
{
    char path[128], cut[128];
    snprintf(path, sizeof path, "%s/v.pb", tmp_dir);
    snprintf(cut, sizeof cut, "%s/cut.pb", tmp_dir);
    size_t len;
    unsigned char *b = slurp(path, &len);
    if (!b) return;
    uint64_t rng = 0x5eedULL;
    for (size_t k = 0; k < len + 200; k++) {
        size_t n = k < len ? k : len;
        unsigned char save = 0;
        size_t at = 0;
        if (k >= len) {
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            at = (size_t)(rng >> 33) % len;
            save = b[at];
            b[at] ^= (unsigned char)(1u << ((rng >> 20) & 7));
        }
        FILE *f = fopen(cut, "wb");
        if (f) {
            fwrite(b, 1, n, f);
            fclose(f);
        }
        if (k >= len) b[at] = save;
        char *got = NULL;
        int m = 0;
        ts_tensor **r = NULL;
        ts_err err = {0};
        if (ts_onnx_read_value(cut, kind, &got, &m, &r, NULL, &err) == TS_OK)
            CHECK_MSG(ts_onnx_form_tensors(got) == m, "%s: a cut file read as %s with %d tensors", form, got, m);
        else CHECK_MSG(err.msg[0] && !strchr(err.msg, '\n'), "%s: no one-line message", form);
        ts_onnx_value_free(got, m, r);
    }
    free(b);
    remove(cut);
}

static void test_value_files(void)
{
    float a[2] = {1, 2}, b[3] = {3, 4, 5};
    ts_tensor *t[3] = {vec(2, a), vec(3, b), scalar(TS_DTYPE_I64, 7)};
    round_trip("t", 1, t);
    round_trip("[t,t]", 2, t);
    round_trip("[]", 0, t);
    round_trip("?", 0, t);
    round_trip("?t", 1, t + 2);
    round_trip("?[t,t]", 2, t);
    round_trip("[[t],[],[t]]", 2, t);
    round_trip("[?t,?]", 1, t);
    broken_values("[[t],[],[t]]", '[');
    round_trip("?[t,t]", 2, t);
    broken_values("?[t,t]", '?');
    ts_err err = {0};
    char path[128];
    snprintf(path, sizeof path, "%s/v.pb", tmp_dir);
    CHECK(ts_onnx_write_value(path, "[t,t]", 1, t, NULL, &err) == TS_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "the form takes 2 tensors, 1 were given") != NULL);
    ts_err_clear(&err);
    CHECK(ts_onnx_write_value(path, "[t,[t]]", 2, t, NULL, &err) == TS_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "must be of one kind") != NULL);
    char *got;
    int m;
    ts_tensor **r;
    CHECK(ts_onnx_read_value(path, 'x', &got, &m, &r, NULL, &err) == TS_ERR_INVALID_ARG);
    CHECK(ts_onnx_read_value(DIR "no_such.pb", '[', &got, &m, &r, NULL, &err) == TS_ERR_IO);
    /* the ONNX test data's own files */
    static const char *const data = ".venv/lib/python3.11/site-packages/onnx/backend/test/data/node/";
    char p[512];
    snprintf(p, sizeof p, "%stest_sequence_insert_at_back/test_data_set_0/input_0.pb", data);
    if (access(p, R_OK) == 0) {
        CHECK_MSG(ts_onnx_read_value(p, '[', &got, &m, &r, NULL, &err) == TS_OK, "%s", err.msg);
        CHECK_STR(got, "[t,t,t]");
        ts_onnx_value_free(got, m, r);
    }
    release_all(3, t);
    remove(path);
}

/* ---- broken models ------------------------------------------------------------------------------- */

/* Every prefix and 300 bit-flipped copies of a sequence model, loaded with
 * the given values: any status, never a crash, and a graph loaded has as
 * many outputs as its forms say. */
static void broken_models(const char *name, int n_known, const char *const *names, const char *const *forms,
                          int n_values, ts_tensor *const *values)
{
    char src[128], path[128];
    snprintf(src, sizeof src, DIR "%s", name);
    snprintf(path, sizeof path, "%s/m.onnx", tmp_dir);
    size_t len;
    unsigned char *b = slurp(src, &len), *m = b ? malloc(len) : NULL;
    uint64_t rng = 0x5eed0f0a11ULL;
    for (size_t k = 0; m && k < len + 300; k++) {
        memcpy(m, b, len);
        size_t n = k < len ? k : len;
        for (int i = 0; k >= len && i < 1 + (int)(rng % 4); i++) {
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            m[(rng >> 33) % len] ^= (unsigned char)(1u << ((rng >> 20) & 7));
        }
        FILE *f = fopen(path, "wb");
        if (!f) break;
        fwrite(m, 1, n, f);
        fclose(f);
        ts_graph *g = NULL;
        int n_forms = 0;
        char **fs = NULL;
        ts_err err = {0};
        ts_status s = ts_onnx_load_forms(path, n_known, names, forms, n_values, values, &g, &n_forms, &fs, &err);
        /* (a mutated name may put any byte in the message) */
        CHECK_MSG(s == TS_OK ? g && fs : !g && !fs && err.msg[0], "%s: %s", name, ts_status_name(s));
        int outs = 0;
        for (int i = 0; i < n_forms; i++) outs += ts_onnx_form_tensors(fs[i]);
        CHECK(!g || outs == ts_graph_num_outputs(g));
        ts_onnx_forms_free(fs, n_forms);
        ts_graph_free(g);
    }
    free(m);
    free(b);
    remove(path);
}

/* ---- allocation failures ---------------------------------------------------------------------- */

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

/* Fail the k-th allocation of a load for every k: each answer is TS_OK or
 * TS_ERR_OOM, and every block is freed. The given tensors are made before
 * the hook is set and outlive the loop. */
static void test_oom(const char *name, int n_known, const char *const *names, const char *const *forms,
                     int n_values, ts_tensor *const *values)
{
    char path[128];
    snprintf(path, sizeof path, DIR "%s", name);
    int bad = 0, leaks = 0;
    long k;
    for (k = 1; k < 200000; k++) {
        fail_at = k;
        n_allocs = 0;
        live = 0;
        ts_set_allocator(failing_alloc, NULL);
        ts_graph *g = NULL;
        ts_err err = {0};
        int n_forms = 0;
        char **f = NULL;
        ts_status s = ts_onnx_load_forms(path, n_known, names, forms, n_values, values, &g, &n_forms, &f, &err);
        if (s != TS_OK && s != TS_ERR_OOM && bad++ < 3)
            fprintf(stderr, "%s: allocation %ld failed: %s: %s\n", name, k, ts_status_name(s), err.msg);
        ts_onnx_forms_free(f, n_forms);
        ts_graph_free(g);
        bool done = n_allocs < k;
        ts_set_allocator(NULL, NULL);
        if (live) leaks++;
        if (done) break;
    }
    CHECK_MSG(bad == 0, "%s: %d loads failed with something other than TS_ERR_OOM", name, bad);
    CHECK_MSG(leaks == 0, "%s: %d loads leaked", name, leaks);
    CHECK_MSG(k > 5 && k < 200000, "%s: %ld allocations", name, k);
}

int main(void)
{
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/ts_seq_XXXXXX");
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_forms();
    test_seq_ops();
    test_seq_map();
    test_opt_input();
    test_loop_seq();
    test_if_seq();
    test_scan8();
    test_errors();
    test_value_files();
    float a[3] = {1, 2, 3};
    ts_tensor *v[3] = {vec(3, a), vec(3, a), vec(3, a)};
    const char *names[2] = {"xs", "b"}, *forms[2] = {"[t,t]", NULL};
    broken_models("seq_map.onnx", 2, names, forms, 3, v);
    broken_models("loop_seq.onnx", 0, NULL, NULL, 0, NULL);
    broken_models("if_seq.onnx", 0, NULL, NULL, 0, NULL);
    broken_models("opt_input.onnx", 1, (const char *[]){"o"}, (const char *[]){"?t"}, 1, v);
    test_oom("seq_map.onnx", 2, names, forms, 3, v);
    test_oom("seq_ops.onnx", 0, NULL, NULL, 0, NULL);
    test_oom("if_seq.onnx", 0, NULL, NULL, 0, NULL);
    release_all(3, v);
    rmdir(tmp_dir);
    return check_report();
}
