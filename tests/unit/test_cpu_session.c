/* test_cpu_session.c — the cpu target through the public API: results
 * against the interpreter, several threads running one session at once,
 * a new size along a symbolic axis without recompiling, the compile
 * report, and clear errors (bad target, bad threads, wrong inputs). */
#include "backend/cpu/cpu.h"
#include "check.h"
#include "tessera.h"

#include <math.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char model[] =
    "graph @m(%x: f32[n, 32], %w: f32[32, 16], %b: f32[16]) {\n"
    "  %y: f32[n, 16] = dot(%x, %w) {lhs_contract=[1], rhs_contract=[0]}\n"
    "  %bb: f32[n, 16] = broadcast(%b) {shape=[n, 16], axes=[1]}\n"
    "  %z: f32[n, 16] = add(%y, %bb)\n"
    "  %t: f32[n, 16] = tanh(%z)\n"
    "  %m: f32[n] = reduce_max(%t) {axes=[1]}\n"
    "  %mb: f32[n, 16] = broadcast(%m) {shape=[n, 16], axes=[0]}\n"
    "  %d: f32[n, 16] = sub(%t, %mb)\n"
    "  %e: f32[n, 16] = exp(%d)\n"
    "  %s: f32[n] = reduce_sum(%e) {axes=[1]}\n"
    "  %sb: f32[n, 16] = broadcast(%s) {shape=[n, 16], axes=[0]}\n"
    "  %p: f32[n, 16] = div(%e, %sb)\n"
    "  return %p, %s\n"
    "}\n";

static ts_tensor *filled(int rank, const int64_t *shape, unsigned seed)
{
    ts_tensor *t = NULL;
    if (ts_tensor_new(TS_DTYPE_F32, rank, shape, &t, NULL) != TS_OK) return NULL;
    float *d = ts_tensor_data(t);
    for (int64_t i = 0; i < ts_tensor_numel(t); i++) {
        seed = seed * 1103515245u + 12345u;
        d[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
    }
    return t;
}

static bool close_all(const ts_tensor *a, const ts_tensor *b)
{
    if (ts_tensor_numel(a) != ts_tensor_numel(b)) return false;
    const float *x = ts_tensor_data(a), *y = ts_tensor_data(b);
    for (int64_t i = 0; i < ts_tensor_numel(a); i++)
        if (!(fabsf(x[i] - y[i]) <= 1e-5f + 1e-4f * fabsf(y[i]))) return false;
    return true;
}

typedef struct job {
    ts_session *s;
    ts_tensor *in[3], *want[2];
    int bad;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    for (int r = 0; r < 25; r++) {
        ts_tensor *out[2] = {NULL, NULL};
        ts_err err = {0};
        if (ts_session_run(j->s, 3, j->in, 2, out, &err) != TS_OK || !close_all(out[0], j->want[0]) ||
            !close_all(out[1], j->want[1]))
            j->bad++;
        ts_tensor_release(out[0]);
        ts_tensor_release(out[1]);
    }
    return NULL;
}

static void run_size(ts_session *cpu, ts_session *ref, int64_t n, job *j)
{
    int64_t sx[2] = {n, 32}, sw[2] = {32, 16}, sb[1] = {16};
    j->in[0] = filled(2, sx, (unsigned)n);
    j->in[1] = filled(2, sw, 7);
    j->in[2] = filled(1, sb, 9);
    ts_err err = {0};
    CHECK_MSG(ts_session_run(ref, 3, j->in, 2, j->want, &err) == TS_OK, "%s", err.msg);
    ts_tensor *got[2] = {NULL, NULL};
    CHECK_MSG(ts_session_run(cpu, 3, j->in, 2, got, &err) == TS_OK, "%s", err.msg);
    CHECK_MSG(got[0] && close_all(got[0], j->want[0]) && close_all(got[1], j->want[1]), "n=%lld differs",
              (long long)n);
    ts_tensor_release(got[0]);
    ts_tensor_release(got[1]);
    j->s = cpu;
}

static void job_free(job *j)
{
    for (int i = 0; i < 3; i++) ts_tensor_release(j->in[i]);
    for (int i = 0; i < 2; i++) ts_tensor_release(j->want[i]);
}

/* ---- constant weights packed once per session (D26) ---------------------------------------- */

/* x[n, 300] . w[300, 40] . v[24, 40]^T with w and v constants: the packed
 * copies are made by the first run and reused by every later run, at every
 * n (K = 300 crosses a K block; 40 and 24 columns end in a partial panel;
 * v is read transposed). */
static char *const_model(void)
{
    size_t cap = 1 << 20, len = 0;
    char *t = malloc(cap);
    unsigned seed = 3;
    len += (size_t)snprintf(t + len, cap - len, "graph @c(%%x: f32[n, 300]) {\n  %%w: f32[300, 40] = const() {value=[");
    for (int i = 0; i < 300 * 40 + 24 * 40; i++) {
        if (i == 300 * 40)
            len += (size_t)snprintf(t + len, cap - len, "]}\n  %%v: f32[24, 40] = const() {value=[");
        else if (i) len += (size_t)snprintf(t + len, cap - len, ", ");
        seed = seed * 1103515245u + 12345u;
        len += (size_t)snprintf(t + len, cap - len, "%g", (double)((int)((seed >> 8) % 2001) - 1000) / 10000.0);
    }
    snprintf(t + len, cap - len,
             "]}\n"
             "  %%y: f32[n, 40] = dot(%%x, %%w) {lhs_contract=[1], rhs_contract=[0]}\n"
             "  %%z: f32[n, 24] = dot(%%y, %%v) {lhs_contract=[1], rhs_contract=[1]}\n"
             "  return %%z\n}\n");
    return t;
}

typedef struct cjob {
    ts_session *s;
    ts_tensor *x, *want;
    int bad;
} cjob;

static void *cworker(void *arg)
{
    cjob *j = arg;
    for (int r = 0; r < 10; r++) {
        ts_tensor *out = NULL;
        if (ts_session_run(j->s, 1, &j->x, 1, &out, NULL) != TS_OK || !close_all(out, j->want)) j->bad++;
        ts_tensor_release(out);
    }
    return NULL;
}

static void test_const_weights(void)
{
    char *text = const_model();
    ts_graph *g = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_graph_parse(text, strlen(text), "const", &g, &err) == TS_OK, "%s", err.msg);
    free(text);
    if (!g) return;
    ts_session *ref = NULL, *seq = NULL, *par = NULL;
    ts_session_opts o = {.threads = 2};
    CHECK(ts_session_new(g, "interp", &ref, &err) == TS_OK);
    CHECK_MSG(ts_session_new_opts(g, "cpu", &o, &seq, &err) == TS_OK, "%s", err.msg);
    CHECK_MSG(ts_session_new_opts(g, "cpu", &o, &par, &err) == TS_OK, "%s", err.msg);
    if (!ref || !seq || !par) return;
    /* one session, sizes in turn: packed by the first run, n changes */
    cjob jobs[4];
    const int64_t ns[4] = {5, 130, 1, 64};
    for (int i = 0; i < 4; i++) {
        int64_t shape[2] = {ns[i], 300};
        jobs[i] = (cjob){par, filled(2, shape, (unsigned)(40 + i)), NULL, 0};
        CHECK(ts_session_run(ref, 1, &jobs[i].x, 1, &jobs[i].want, &err) == TS_OK);
        ts_tensor *got = NULL;
        CHECK_MSG(ts_session_run(seq, 1, &jobs[i].x, 1, &got, &err) == TS_OK, "%s", err.msg);
        CHECK_MSG(got && close_all(got, jobs[i].want), "n=%lld differs", (long long)ns[i]);
        ts_tensor_release(got);
    }
    /* a fresh session whose first runs race on the packing */
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, cworker, &jobs[i]);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) {
        CHECK_MSG(jobs[i].bad == 0, "thread %d: %d bad runs", i, jobs[i].bad);
        ts_tensor_release(jobs[i].x);
        ts_tensor_release(jobs[i].want);
    }
    ts_session_free(seq);
    ts_session_free(par);
    ts_session_free(ref);
    ts_graph_free(g);
}

/* ---- attention heads read in place (D26) --------------------------------------------------- */

/* q, k, v sliced from one [b, s, 3*h*d] value and split into heads by
 * reshape + transpose (k transposed for q.k^T, v with a slice step): both
 * dots read them in place, and the second writes its result merged back
 * (transpose + reshape) through C strides: the program is the two dot
 * kernels alone. */
static const char heads_model[] =
    "graph @h(%x: f32[1, 8, 96]) {\n"
    "  %q0: f32[1, 8, 32] = slice(%x) {start=[0, 0, 0], limit=[1, 8, 32], stride=[1, 1, 1]}\n"
    "  %k0: f32[1, 8, 32] = slice(%x) {start=[0, 0, 32], limit=[1, 8, 64], stride=[1, 1, 1]}\n"
    "  %v0: f32[1, 4, 32] = slice(%x) {start=[0, 0, 64], limit=[1, 8, 96], stride=[1, 2, 1]}\n"
    "  %q1: f32[1, 8, 2, 16] = reshape(%q0) {shape=[1, 8, 2, 16]}\n"
    "  %k1: f32[1, 8, 2, 16] = reshape(%k0) {shape=[1, 8, 2, 16]}\n"
    "  %v1: f32[1, 4, 2, 16] = reshape(%v0) {shape=[1, 4, 2, 16]}\n"
    "  %q: f32[1, 2, 8, 16] = transpose(%q1) {perm=[0, 2, 1, 3]}\n"
    "  %kt: f32[1, 2, 16, 8] = transpose(%k1) {perm=[0, 2, 3, 1]}\n"
    "  %v: f32[1, 2, 4, 16] = transpose(%v1) {perm=[0, 2, 1, 3]}\n"
    "  %s: f32[1, 2, 8, 8] = dot(%q, %kt) {lhs_batch=[0, 1], rhs_batch=[0, 1], lhs_contract=[3], rhs_contract=[2]}\n"
    "  %p: f32[1, 2, 8, 4] = slice(%s) {start=[0, 0, 0, 0], limit=[1, 2, 8, 4], stride=[1, 1, 1, 1]}\n"
    "  %o: f32[1, 2, 8, 16] = dot(%p, %v) {lhs_batch=[0, 1], rhs_batch=[0, 1], lhs_contract=[3], rhs_contract=[2]}\n"
    "  %ot: f32[1, 8, 2, 16] = transpose(%o) {perm=[0, 2, 1, 3]}\n"
    "  %m: f32[1, 8, 32] = reshape(%ot) {shape=[1, 8, 32]}\n"
    "  return %m\n}\n";

static void test_heads_in_place(void)
{
    ts_graph *g = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_graph_parse(heads_model, strlen(heads_model), "heads", &g, &err) == TS_OK, "%s", err.msg);
    if (!g) return;
    ts_session *ref = NULL, *cpu = NULL;
    ts_session_opts o = {.threads = 2};
    CHECK(ts_session_new(g, "interp", &ref, &err) == TS_OK);
    CHECK_MSG(ts_session_new_opts(g, "cpu", &o, &cpu, &err) == TS_OK, "%s", err.msg);
    int kernels = -1;
    ts_session_compile_info(cpu, NULL, NULL, &kernels, NULL);
    /* the slice of s (a view with a partial row) is read in place too */
    CHECK_MSG(kernels == 2, "%d kernels: a head split was copied", kernels);
    int64_t shape[3] = {1, 8, 96};
    ts_tensor *x = filled(3, shape, 77), *want = NULL, *got = NULL;
    CHECK(ts_session_run(ref, 1, &x, 1, &want, &err) == TS_OK);
    CHECK_MSG(ts_session_run(cpu, 1, &x, 1, &got, &err) == TS_OK, "%s", err.msg);
    CHECK(got && want && close_all(got, want));
    ts_tensor_release(x);
    ts_tensor_release(want);
    ts_tensor_release(got);
    ts_session_free(cpu);
    ts_session_free(ref);
    ts_graph_free(g);
}

/* ---- a conv's batch norm folded into its weights (D30) ------------------------------------- */

/* conv, then (y - mean) / d * 0.5 * gamma + beta (operands on either side,
 * [1,C,1,1] constants, a [C] one broadcast along axis 1, a scalar) and a
 * ReLU: folded. A second conv on the same weights whose (y - mean) is also
 * a result: nothing folds there (its other use needs the unscaled value),
 * and the shared weights stay as they are for it. */
static char *bn_model(void)
{
    size_t cap = 1 << 16, len = 0;
    char *t = malloc(cap);
    unsigned seed = 9;
#define BN_NUMS(n, lo, span)                                                                              \
    for (int i_ = 0; i_ < (n); i_++) {                                                                    \
        seed = seed * 1103515245u + 12345u;                                                               \
        len += (size_t)snprintf(t + len, cap - len, "%s%g", i_ ? ", " : "",                               \
                                (lo) + (span) * (double)((seed >> 8) % 1000) / 1000.0);                   \
    }
    len += (size_t)snprintf(t + len, cap - len, "graph @bn(%%x: f32[n, 4, 6, 5]) {\n  %%w: f32[6, 4, 3, 3] = const() {value=[");
    BN_NUMS(6 * 4 * 9, -0.5, 1.0)
    const char *names[4] = {"mean", "gamma", "beta", "d"};
    for (int k = 0; k < 4; k++) {
        len += (size_t)snprintf(t + len, cap - len, "]}\n  %%%s: f32[%s] = const() {value=[", names[k],
                                k == 3 ? "6" : "1, 6, 1, 1");
        BN_NUMS(6, k == 3 ? 0.5 : -1.0, 2.0)
    }
    len += (size_t)snprintf(t + len, cap - len, "%s",
        "]}\n"
        "  %half: f32[] = const() {value=[0.5]}\n"
        "  %zero: f32[] = const() {value=[0]}\n"
        "  %c: f32[n, 6, 6, 5] = conv(%x, %w) {strides=[1, 1], pad_lo=[1, 1], pad_hi=[1, 1], lhs_dilation=[1, 1], rhs_dilation=[1, 1]}\n"
        "  %mb: f32[n, 6, 6, 5] = broadcast(%mean) {shape=[n, 6, 6, 5], axes=[0, 1, 2, 3]}\n"
        "  %db: f32[n, 6, 6, 5] = broadcast(%d) {shape=[n, 6, 6, 5], axes=[1]}\n"
        "  %hb: f32[n, 6, 6, 5] = broadcast(%half) {shape=[n, 6, 6, 5], axes=[]}\n"
        "  %gb: f32[n, 6, 6, 5] = broadcast(%gamma) {shape=[n, 6, 6, 5], axes=[0, 1, 2, 3]}\n"
        "  %bb: f32[n, 6, 6, 5] = broadcast(%beta) {shape=[n, 6, 6, 5], axes=[0, 1, 2, 3]}\n"
        "  %zb: f32[n, 6, 6, 5] = broadcast(%zero) {shape=[n, 6, 6, 5], axes=[]}\n"
        "  %s1: f32[n, 6, 6, 5] = sub(%c, %mb)\n"
        "  %s2: f32[n, 6, 6, 5] = div(%s1, %db)\n"
        "  %s3: f32[n, 6, 6, 5] = mul(%hb, %s2)\n"
        "  %s4: f32[n, 6, 6, 5] = mul(%s3, %gb)\n"
        "  %s5: f32[n, 6, 6, 5] = add(%bb, %s4)\n"
        "  %r: f32[n, 6, 6, 5] = max(%s5, %zb)\n"
        "  %c2: f32[n, 6, 6, 5] = conv(%x, %w) {strides=[1, 1], pad_lo=[2, 2], pad_hi=[2, 2], lhs_dilation=[1, 1], rhs_dilation=[2, 2]}\n"
        "  %t1: f32[n, 6, 6, 5] = sub(%c2, %mb)\n"
        "  %t2: f32[n, 6, 6, 5] = mul(%t1, %gb)\n"
        "  return %r, %t1, %t2\n}\n");
#undef BN_NUMS
    return t;
}

static void test_conv_affine(void)
{
    char *text = bn_model();
    ts_graph *g = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_graph_parse(text, strlen(text), "bn", &g, &err) == TS_OK, "%s", err.msg);
    free(text);
    if (!g) return;
    ts_session *ref = NULL, *cpu = NULL;
    ts_session_opts o = {.threads = 2};
    CHECK(ts_session_new(g, "interp", &ref, &err) == TS_OK);
    CHECK_MSG(ts_session_new_opts(g, "cpu", &o, &cpu, &err) == TS_OK, "%s", err.msg);
    for (int64_t n = 1; n <= 3 && ref && cpu; n += 2) {
        int64_t shape[4] = {n, 4, 6, 5};
        ts_tensor *x = filled(4, shape, (unsigned)(60 + n)), *want[3] = {NULL}, *got[3] = {NULL};
        CHECK(ts_session_run(ref, 1, &x, 3, want, &err) == TS_OK);
        for (int rep = 0; rep < 2; rep++) {   /* the scaled weights are made by the first run */
            CHECK_MSG(ts_session_run(cpu, 1, &x, 3, got, &err) == TS_OK, "%s", err.msg);
            for (int i = 0; i < 3; i++) {
                CHECK_MSG(got[i] && want[i] && close_all(got[i], want[i]), "n=%lld result %d differs", (long long)n, i);
                ts_tensor_release(got[i]);
                got[i] = NULL;
            }
        }
        for (int i = 0; i < 3; i++) ts_tensor_release(want[i]);
        ts_tensor_release(x);
    }
    ts_session_free(cpu);
    ts_session_free(ref);
    ts_graph_free(g);
}

/* ---- Winograd weights transformed once (D38), a residual conv's fold ------------------------ */

/* A C -> C KxK conv (K = 3 or 1, "same" padding) with constant weights
 * on an s x s image (s a symbol or a number), its batch norm, and a
 * residual added from the other side (add(residual, bn)) whose ancestry is
 * a long elementwise chain: the batch norm folds (the search for the
 * conv's operand stops at the stored residual) and the weights are
 * prepared once, in the form the first run's size takes (Winograd's
 * F(m) for 3x3; W^T panels for 1x1 on AVX-512). */
static char *wg_model(const char *s, int C, int K)
{
    size_t cap = (size_t)C * C * K * K * 16 + (1 << 16), len = 0;
    char *t = malloc(cap);
    unsigned seed = 17;
    const int p = K / 2;
#define WG_PUT(...) len += (size_t)snprintf(t + len, cap - len, __VA_ARGS__)
    WG_PUT("graph @wg(%%x: f32[1, %d, %s, %s]) {\n  %%w: f32[%d, %d, %d, %d] = const() {value=[", C, s, s, C, C, K, K);
    for (int i = 0; i < C * C * K * K; i++) {
        seed = seed * 1103515245u + 12345u;
        WG_PUT("%s%g", i ? ", " : "", (-0.25 + 0.5 * (double)((seed >> 8) % 1000) / 1000.0) * 12.0 / (K * sqrt(C)));
    }
    WG_PUT("]}\n  %%mean: f32[%d] = const() {value=[", C);
    for (int i = 0; i < C; i++) WG_PUT("%s%g", i ? ", " : "", 0.1 * (i % 5) - 0.2);
    WG_PUT("]}\n  %%scale: f32[%d] = const() {value=[", C);
    for (int i = 0; i < C; i++) WG_PUT("%s%g", i ? ", " : "", 0.5 + 0.1 * (i % 7));
    WG_PUT("]}\n  %%zero: f32[] = const() {value=[0]}\n");
    WG_PUT("  %%mb: f32[1, %d, %s, %s] = broadcast(%%mean) {shape=[1, %d, %s, %s], axes=[1]}\n", C, s, s, C, s, s);
    WG_PUT("  %%sb: f32[1, %d, %s, %s] = broadcast(%%scale) {shape=[1, %d, %s, %s], axes=[1]}\n", C, s, s, C, s, s);
    WG_PUT("  %%zb: f32[1, %d, %s, %s] = broadcast(%%zero) {shape=[1, %d, %s, %s], axes=[]}\n", C, s, s, C, s, s);
    WG_PUT("  %%h0: f32[1, %d, %s, %s] = tanh(%%x)\n", C, s, s);
    for (int i = 1; i < 160; i++)   /* an ancestry longer than the fold's search budget */
        WG_PUT("  %%h%d: f32[1, %d, %s, %s] = %s(%%h%d, %%h%d)\n", i, C, s, s, i % 2 ? "add" : "mul", i - 1,
               i > 1 ? i - 2 : 0);
    WG_PUT("  %%h: f32[1, %d, %s, %s] = tanh(%%h159)\n", C, s, s);
    WG_PUT("  %%c: f32[1, %d, %s, %s] = conv(%%h, %%w) {strides=[1, 1], pad_lo=[%d, %d], pad_hi=[%d, %d], "
           "lhs_dilation=[1, 1], rhs_dilation=[1, 1]}\n", C, s, s, p, p, p, p);
    WG_PUT("  %%b1: f32[1, %d, %s, %s] = sub(%%c, %%mb)\n  %%b2: f32[1, %d, %s, %s] = mul(%%b1, %%sb)\n", C, s, s, C, s,
           s);
    WG_PUT("  %%r: f32[1, %d, %s, %s] = add(%%h, %%b2)\n  %%y: f32[1, %d, %s, %s] = max(%%r, %%zb)\n", C, s, s, C, s,
           s);
    WG_PUT("  return %%y\n}\n");
#undef WG_PUT
    return t;
}

/* Model wg_model(dim, C, K) through the cpu target at the given sizes,
 * each against the interpreter, in one session; the generated C must
 * contain every string of want. */
static void wg_runs(const char *dim, int C, int K, const int64_t *sizes, int n_sizes, const char *const *want,
                    int n_want)
{
    char *text = wg_model(dim, C, K);
    ts_graph *g = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_graph_parse(text, strlen(text), "wg", &g, &err) == TS_OK, "%s", err.msg);
    free(text);
    if (!g) return;
    char *c = NULL;
    CHECK_MSG(ts_cpu_source(g, &c, &err) == TS_OK, "%s", err.msg);
    for (int i = 0; i < n_want; i++) CHECK_MSG(c && strstr(c, want[i]), "s = %s: generated C lacks %s", dim, want[i]);
    ts_mem_free(c);
    ts_session *ref = NULL, *cpu = NULL;
    ts_session_opts o = {.threads = 2};
    CHECK(ts_session_new(g, "interp", &ref, &err) == TS_OK);
    CHECK_MSG(ts_session_new_opts(g, "cpu", &o, &cpu, &err) == TS_OK, "%s", err.msg);
    for (int k = 0; k < n_sizes && ref && cpu; k++) {
        int64_t shape[4] = {1, C, sizes[k], sizes[k]};
        ts_tensor *x = filled(4, shape, (unsigned)(80 + k)), *want_t = NULL, *got = NULL;
        CHECK(ts_session_run(ref, 1, &x, 1, &want_t, &err) == TS_OK);
        CHECK_MSG(ts_session_run(cpu, 1, &x, 1, &got, &err) == TS_OK, "%s", err.msg);
        CHECK_MSG(got && want_t && close_all(got, want_t), "s = %s: size %lld differs", dim, (long long)sizes[k]);
        ts_tensor_release(got);
        ts_tensor_release(want_t);
        ts_tensor_release(x);
    }
    ts_session_free(cpu);
    ts_session_free(ref);
    ts_graph_free(g);
}

static void test_conv_wg_once(void)
{
    /* the fold (scaled weights), the transform and the residual in the
     * tile epilogue; sizes 7 (F(2x2), only with the transform made once),
     * 28 (F(4x4): the F(2x2) copy is not used), 14 (F(2x2): used again),
     * 5 (no Winograd), 7 along the symbol */
    static const char *const sym[] = {"s *= (double)", "tsrt_conv_pre_pack(&a, m, o0, o1", "a.wu_m = (int)h[0]",
                                      "te.res = "};
    static const int64_t sizes[] = {7, 28, 14, 5, 7};
    wg_runs("s", 16, 3, sizes, 5, sym, 4);
    /* fixed shapes: the scale goes into the transformed weights, no
     * scaled copy (F(2x2) at 7, F(4x4) at 28), or the scaled copy alone
     * (no Winograd at 5) */
    static const char *const fixed[] = {"tsrt_conv_pre_scale(&a, m, o", "const int64_t sf = m > 0 ? 0 : INT64_C(2304)"};
    static const int64_t s7[] = {7}, s28[] = {28}, s5[] = {5};
    wg_runs("7", 16, 3, s7, 1, fixed, 2);
    wg_runs("28", 16, 3, s28, 1, fixed, 2);
    wg_runs("5", 16, 3, s5, 1, fixed, 2);
    /* every prepared form the timing may pick (D126), forced: the folded
     * scale, the transform and the residual right in each, fixed (the
     * plain path keeps the scaled copy) and along the symbol */
    static const char *const forms[] = {"plain", "gemm_t", "wg2", "wg4"};
    for (int i = 0; i < 4; i++) {
        setenv("TESSERA_CONV_TUNE", forms[i], 1);
        wg_runs("7", 16, 3, s7, 1, fixed, 0);
        wg_runs("28", 16, 3, s28, 1, fixed, 0);
        wg_runs("s", 16, 3, sizes, 5, sym, 0);
    }
    unsetenv("TESSERA_CONV_TUNE");
}

/* The same with a 128 -> 128 1x1 conv: the W^T panels of GEMM_T (D41)
 * prepared once on AVX-512 machines (7x7 and 14x14 take them: 128 input
 * channels, fuller tiles), the scaled copy elsewhere; along a symbol, and
 * fixed. */
static void test_conv_pt_once(void)
{
    static const char *const sym[] = {"const int m = tsrt_conv_pre(&a);", "tsrt_conv_pre_pack(&a, m, o0, o1",
                                      "a.wu_m = (int)h[0]", "te.res = "};
    static const int64_t sizes[] = {7, 14, 5, 7};
    wg_runs("s", 128, 1, sizes, 4, sym, 4);
    static const char *const fixed[] = {"tsrt_conv_pre_scale(&a, m, o", "const int64_t sf = m > 0 ? 0 : INT64_C(16384)"};
    static const int64_t s7[] = {7};
    wg_runs("7", 128, 1, s7, 1, fixed, 2);
}

/* ---- clamps by a constant as compare-and-select -------------------------------------------- */

/* max/min with a constant operand (either side) compile to the plain
 * comparison (+ 0.0 after max with +0): the same bits as the interpreter's
 * rule on NaN, -0, +0, infinities, the constant itself and denormals. */
static const char clamp_model[] =
    "graph @cl(%x: f32[13], %y: f64[13]) {\n"
    "  %z: f32[] = const() {value=[0]}\n  %nz: f32[] = const() {value=[-0]}\n  %six: f32[] = const() {value=[6]}\n"
    "  %dz: f64[] = const() {value=[0]}\n"
    "  %zb: f32[13] = broadcast(%z) {shape=[13], axes=[]}\n  %nzb: f32[13] = broadcast(%nz) {shape=[13], axes=[]}\n"
    "  %sb: f32[13] = broadcast(%six) {shape=[13], axes=[]}\n  %dzb: f64[13] = broadcast(%dz) {shape=[13], axes=[]}\n"
    "  %r1: f32[13] = max(%x, %zb)\n  %r2: f32[13] = max(%zb, %x)\n  %r3: f32[13] = min(%x, %sb)\n"
    "  %r4: f32[13] = min(%sb, %x)\n  %r5: f32[13] = min(%x, %zb)\n  %r6: f32[13] = max(%x, %nzb)\n"
    "  %r7: f32[13] = min(%x, %nzb)\n  %r8: f64[13] = max(%y, %dzb)\n"
    "  return %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8\n}\n";

static void test_clamp_consts(void)
{
    ts_graph *g = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_graph_parse(clamp_model, strlen(clamp_model), "clamp", &g, &err) == TS_OK, "%s", err.msg);
    if (!g) return;
    ts_session *ref = NULL, *cpu = NULL;
    CHECK(ts_session_new(g, "interp", &ref, &err) == TS_OK);
    CHECK_MSG(ts_session_new(g, "cpu", &cpu, &err) == TS_OK, "%s", err.msg);
    const float xs[13] = {NAN, -0.0f, 0.0f, -1.0f, 2.0f, 7.0f, INFINITY, -INFINITY, 6.0f, -6.0f, 1e-40f, -1e-40f, -NAN};
    int64_t shape[1] = {13};
    ts_tensor *in[2] = {NULL, NULL}, *want[8] = {NULL}, *got[8] = {NULL};
    CHECK(ts_tensor_new(TS_DTYPE_F32, 1, shape, &in[0], NULL) == TS_OK);
    CHECK(ts_tensor_new(TS_DTYPE_F64, 1, shape, &in[1], NULL) == TS_OK);
    if (!ref || !cpu || !in[0] || !in[1]) return;
    for (int i = 0; i < 13; i++) ((float *)ts_tensor_data(in[0]))[i] = xs[i], ((double *)ts_tensor_data(in[1]))[i] = xs[i];
    CHECK(ts_session_run(ref, 2, in, 8, want, &err) == TS_OK);
    CHECK_MSG(ts_session_run(cpu, 2, in, 8, got, &err) == TS_OK, "%s", err.msg);
    for (int r = 0; r < 8; r++) {
        const size_t es = r == 7 ? 8 : 4;
        for (int i = 0; got[r] && want[r] && i < 13; i++)
            CHECK_MSG(!memcmp((char *)ts_tensor_data(got[r]) + es * (size_t)i, (char *)ts_tensor_data(want[r]) + es * (size_t)i, es),
                      "result %d element %d (x = %g): compiled and interpreted bits differ", r + 1, i, (double)xs[i]);
        ts_tensor_release(got[r]);
        ts_tensor_release(want[r]);
    }
    ts_tensor_release(in[0]);
    ts_tensor_release(in[1]);
    ts_session_free(cpu);
    ts_session_free(ref);
    ts_graph_free(g);
}

/* Chained batched products at batch 0: the GEMM template read a batch of
 * 0 as "not batched" and multiplied one pair of empty operands (a crash:
 * torch's linalg.matrix_power on a (0, 2, 2) input). */
static const char empty_batch_model[] =
    "graph @eb(%a: f32[b, 2, 2], %c: f32[b, 2, 2]) {\n"
    "  %p: f32[b, 2, 2] = dot(%a, %c) {lhs_batch=[0], rhs_batch=[0], lhs_contract=[2], rhs_contract=[1]}\n"
    "  %q: f32[b, 2, 2] = dot(%p, %c) {lhs_batch=[0], rhs_batch=[0], lhs_contract=[2], rhs_contract=[1]}\n"
    "  return %q\n}\n";

static void test_empty_batch(void)
{
    ts_graph *g = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_graph_parse(empty_batch_model, strlen(empty_batch_model), "eb", &g, &err) == TS_OK, "%s", err.msg);
    ts_session *ref = NULL, *cpu = NULL;
    if (g) CHECK(ts_session_new(g, "interp", &ref, &err) == TS_OK);
    if (g) CHECK_MSG(ts_session_new(g, "cpu", &cpu, &err) == TS_OK, "%s", err.msg);
    for (int64_t b = 0; ref && cpu && b <= 2; b += 2) {
        const int64_t shape[3] = {b, 2, 2};
        ts_tensor *in[2] = {filled(3, shape, 7), filled(3, shape, 9)}, *want = NULL, *got = NULL;
        CHECK(in[0] && in[1] && ts_session_run(ref, 2, in, 1, &want, &err) == TS_OK);
        CHECK_MSG(ts_session_run(cpu, 2, in, 1, &got, &err) == TS_OK, "%s", err.msg);
        CHECK_MSG(got && want && ts_tensor_numel(got) == 4 * b && close_all(got, want), "batch %lld", (long long)b);
        ts_tensor_release(got);
        ts_tensor_release(want);
        ts_tensor_release(in[0]);
        ts_tensor_release(in[1]);
    }
    ts_session_free(cpu);
    ts_session_free(ref);
    ts_graph_free(g);
}

int main(void)
{
    setenv("TESSERA_CACHE_DIR", "build-test-jit-cache", 0);
    ts_graph *g = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_graph_parse(model, strlen(model), "model", &g, &err) == TS_OK, "%s", err.msg);
    ts_session *cpu = NULL, *ref = NULL;
    ts_session_opts o = {.threads = 2};
    CHECK_MSG(ts_session_new_opts(g, "cpu", &o, &cpu, &err) == TS_OK, "%s", err.msg);
    CHECK(ts_session_new(g, "interp", &ref, &err) == TS_OK);
    if (!cpu || !ref) return check_report();
    double ms = -1;
    int hit = -2, kernels = -1, fallbacks = -1;
    ts_session_compile_info(cpu, &ms, &hit, &kernels, &fallbacks);
    CHECK_MSG(ms >= 0 && (hit == 0 || hit == 1) && kernels >= 2 && fallbacks == 0, "ms %g hit %d kernels %d fb %d", ms,
              hit, kernels, fallbacks);
    ts_session_compile_info(ref, NULL, &hit, NULL, NULL);
    CHECK(hit == -1);

    /* three sizes along n, one compiled program; then four threads at once */
    job jobs[4];
    memset(jobs, 0, sizeof jobs);
    int64_t sizes[4] = {1, 5, 64, 3};
    for (int i = 0; i < 4; i++) run_size(cpu, ref, sizes[i], &jobs[i]);
    /* back to sizes run before: the session's kept memory plan is for the
     * last size only, and must be made again each time (run.c make_plan) */
    for (int i = 0; i < 4; i++) {
        job again = {0};
        run_size(cpu, ref, sizes[(i + 2) % 4], &again);
        job_free(&again);
    }
    CHECK(ts_session_peak_bytes(cpu) > 0);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, worker, &jobs[i]);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) CHECK_MSG(jobs[i].bad == 0, "thread %d: %d bad runs", i, jobs[i].bad);

    /* errors: wrong input shape, count; bad target and options */
    int64_t bad_shape[2] = {4, 31};
    ts_tensor *bad = filled(2, bad_shape, 1);
    ts_tensor *in[3] = {bad, jobs[0].in[1], jobs[0].in[2]}, *out[2] = {NULL, NULL};
    ts_err e1 = {0}, e2 = {0}, e3 = {0}, e4 = {0}, e5 = {0};   /* an error record keeps its first message */
    CHECK_MSG(ts_session_run(cpu, 3, in, 2, out, &e1) != TS_OK && strstr(e1.msg, "input 0"), "%s", e1.msg);
    CHECK(ts_session_run(cpu, 2, in, 2, out, &e2) == TS_ERR_INVALID_ARG);
    ts_tensor_release(bad);
    ts_session *s2 = NULL;
    CHECK_MSG(ts_session_new(g, "gpu9", &s2, &e3) == TS_ERR_UNSUPPORTED && strstr(e3.msg, "cpu, opencl, cuda, interp"), "%s", e3.msg);
    ts_session_opts neg = {.threads = -1};
    CHECK(ts_session_new_opts(g, "cpu", &neg, &s2, &e4) == TS_ERR_INVALID_ARG);
    ts_session_opts nocc = {.cc = "/nonexistent/cc", .cache_dir = "build-test-jit-cache-nocc"};
    CHECK_MSG(ts_session_new_opts(g, "cpu", &nocc, &s2, &e5) == TS_ERR_TOOLCHAIN && strstr(e5.msg, "not found"), "%s",
              e5.msg);
    for (int i = 0; i < 4; i++) job_free(&jobs[i]);
    ts_session_free(cpu);
    ts_session_free(ref);
    ts_graph_free(g);
    test_const_weights();
    test_heads_in_place();
    test_conv_affine();
    test_clamp_consts();
    test_empty_batch();
    test_conv_wg_once();
    test_conv_pt_once();
    return check_report();
}
