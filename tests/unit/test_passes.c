/* test_passes.c — IR text in, IR text out, for every pass.
 *
 * tests/passes/<passlist>/<case>.in.ir is parsed, the pass list named by
 * its directory runs ("fold,dce" is a directory name too), and the printed
 * result must equal <case>.out.ir byte for byte. Every file must be
 * canonical (print(parse(file)) == file), the result must verify, and,
 * where the interpreter can run both, the graph before and after must give
 * the same bits on the same inputs (NaN, inf and -0.0 among them, so that a
 * rule that is wrong for floats shows). Each pass list needs 5 cases.
 *
 * TS_UPDATE_GOLDEN=1 rewrites the .out.ir files from what the passes
 * produce (review the diff!). Run from the repository root. */
#include "check.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>

#include "interp/interp.h"
#include "passes/passes.h"

#define ROOT "tests/passes"

/* ---- files --------------------------------------------------------------------- */

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    ts_buf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) ts_buf_putn(&b, chunk, n);
    fclose(f);
    ts_buf_putn(&b, "", 0);
    if (b.oom) {
        ts_buf_free(&b);
        return NULL;
    }
    *len = b.len;
    if (!b.data) return ts_mem_zalloc(1);
    return b.data;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* Sorted names in dir that end with suffix (all entries but dot files when
 * suffix is NULL). The caller frees each name and the array. */
static int list_dir(const char *dir, const char *suffix, char ***out)
{
    DIR *d = opendir(dir);
    int n = 0, cap = 0;
    char **names = NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name), sl = suffix ? strlen(suffix) : 0;
        if (e->d_name[0] == '.' || len <= sl || (suffix && strcmp(e->d_name + len - sl, suffix) != 0)) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            names = ts_mem_realloc(names, sizeof *names * (size_t)cap);
        }
        names[n++] = ts_mem_strdup(e->d_name);
    }
    if (d) closedir(d);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    *out = names;
    return n;
}

static void free_list(char **names, int n)
{
    for (int i = 0; i < n; i++) ts_mem_free(names[i]);
    ts_mem_free(names);
}

/* ---- text ------------------------------------------------------------------------ */

static ts_graph *parse(const char *text, size_t len, const char *path)
{
    ts_graph *g = NULL;
    ts_err err = {0};
    if (ts_graph_parse(text, len, path, &g, &err) != TS_OK) {
        CHECK_MSG(0, "%s does not parse: %s", path, err.msg);
        return NULL;
    }
    return g;
}

static char *print(const ts_graph *g)
{
    char *s = NULL;
    ts_err err = {0};
    if (ts_graph_to_text(g, &s, &err) != TS_OK) CHECK_MSG(0, "print failed: %s", err.msg);
    return s;
}

/* print(parse(text)) == text */
static void check_canonical(const char *text, size_t len, const char *path)
{
    ts_graph *g = parse(text, len, path);
    if (!g) return;
    char *again = print(g);
    if (again && strcmp(again, text) != 0)
        CHECK_MSG(0, "%s is not canonical; it prints as:\n%s", path, again);
    else
        CHECK(again != NULL);
    ts_free_string(again);
    ts_graph_free(g);
}

/* ---- running both graphs ------------------------------------------------------------ */

static uint64_t rng_state = 88172645463325252u;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Floats include the values float rules trip over. */
static void fill(ts_tensor *t)
{
    static const double specials[] = {-0.0, 0.0, NAN, INFINITY, -INFINITY, 1.0, -1.0};
    for (int64_t i = 0; i < t->numel; i++) {
        uint64_t r = rnd();
        double v = (double)(int64_t)(r % 9) - 4.0;
        if (ts_dtype_is_float(t->dtype))
            v = r % 4 == 0 ? specials[(r >> 8) % 7] : (double)(int64_t)(r % 2001 - 1000) / 64.0;
        else if (!ts_dtype_is_signed(t->dtype))
            v = (double)(r % 9);
        ts_elem_set_f64(t->dtype, t->data, i, v);
    }
}

/* Inputs for g: lone symbols become 3; NULL when a dim is an expression. */
static bool make_inputs(const ts_graph *g, ts_tensor **in)
{
    for (int i = 0; i < g->body->n_params; i++) {
        const ts_type *t = &g->body->params[i]->type;
        int64_t shape[TS_MAX_RANK];
        for (int k = 0; k < t->rank; k++) {
            if (!ts_dim_is_const(t->dims[k]) && !ts_dim_sym_name(t->dims[k])) return false;
            shape[k] = ts_dim_is_const(t->dims[k]) ? t->dims[k].c : 3;
        }
        if (ts_tensor_new(t->dtype, t->rank, shape, &in[i], NULL) != TS_OK) return false;
        fill(in[i]);
    }
    return true;
}

static bool same_bits(const ts_tensor *a, const ts_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->numel != b->numel) return false;
    if (memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->rank) != 0) return false;
    size_t es = ts_dtype_size(a->dtype);
    for (int64_t i = 0; i < a->numel; i++) {
        const char *pa = (const char *)a->data + (size_t)i * es, *pb = (const char *)b->data + (size_t)i * es;
        if (memcmp(pa, pb, es) == 0) continue;
        /* NaN payloads are not part of the meaning (docs/passes.md) */
        if (ts_dtype_is_float(a->dtype) && isnan(ts_elem_get_f64(a->dtype, a->data, i)) &&
            isnan(ts_elem_get_f64(b->dtype, b->data, i)))
            continue;
        return false;
    }
    return true;
}

#define MAXV 32

static int ran_both, ran_skipped;

/* Same inputs, same outputs, bit for bit. Skipped when the original does
 * not run (a kernel not written yet, inputs we cannot invent). */
static void check_same_meaning(const ts_graph *before, const ts_graph *after, const char *path)
{
    int ni = before->body->n_params, no = before->body->n_results;
    if (ni > MAXV || no > MAXV) return;
    ts_tensor *in[MAXV] = {0}, *o1[MAXV] = {0}, *o2[MAXV] = {0};
    ts_err e1 = {0}, e2 = {0};
    if (make_inputs(before, in) && ts_interp_run_graph(before, ni, in, no, o1, &e1) == TS_OK) {
        ran_both++;
        ts_status s = ts_interp_run_graph(after, ni, in, no, o2, &e2);
        CHECK_MSG(s == TS_OK, "%s: the original runs but the result does not: %s", path, e2.msg);
        for (int k = 0; s == TS_OK && k < no; k++)
            CHECK_MSG(same_bits(o1[k], o2[k]), "%s: output %d differs after the passes", path, k);
    }
    else {
        ran_skipped++;
        if (getenv("TS_VERBOSE")) printf("%s: not run (%s)\n", path, e1.msg[0] ? e1.msg : "inputs with dim expressions");
    }
    for (int i = 0; i < MAXV; i++) {
        ts_tensor_release(in[i]);
        ts_tensor_release(o1[i]);
        ts_tensor_release(o2[i]);
    }
}

/* Another run of the default pipeline must change nothing. */
static void check_fixed_point(ts_graph *g, const char *got, const char *path)
{
    if (!got || ts_graph_run_passes(g, "default", NULL) != TS_OK) return;
    char *again = print(g);
    CHECK_MSG(again && strcmp(again, got) == 0, "%s: default is not at a fixed point:\n%s", path, again);
    ts_free_string(again);
}

/* ---- one case ---------------------------------------------------------------------------- */

static void run_case(const char *passes, const char *dir, const char *name)
{
    char in_path[1024], out_path[1024];
    size_t base = strlen(name) - strlen(".in.ir");
    snprintf(in_path, sizeof in_path, "%s/%s", dir, name);
    snprintf(out_path, sizeof out_path, "%s/%.*s.out.ir", dir, (int)base, name);
    size_t in_len = 0, out_len = 0;
    char *in = read_file(in_path, &in_len);
    CHECK_MSG(in != NULL, "cannot read %s", in_path);
    if (!in) return;
    check_canonical(in, in_len, in_path);
    ts_graph *g = parse(in, in_len, in_path), *orig = parse(in, in_len, in_path);
    ts_err err = {0};
    if (g && ts_graph_run_passes(g, passes, &err) != TS_OK) CHECK_MSG(0, "%s: passes failed: %s", in_path, err.msg);
    else if (g) {
        ts_err verr = {0};
        CHECK_MSG(ts_ir_verify(g, &verr) == TS_OK, "%s: result does not verify: %s", in_path, verr.msg);
        char *got = print(g);
        if (got && getenv("TS_UPDATE_GOLDEN")) write_file(out_path, got);
        char *want = read_file(out_path, &out_len);
        CHECK_MSG(want != NULL, "cannot read %s", out_path);
        if (got && want && strcmp(got, want) != 0)
            CHECK_MSG(0, "%s: after '%s'\n--- got:\n%s--- expected (%s):\n%s", in_path, passes, got, out_path, want);
        if (want) check_canonical(want, out_len, out_path);
        if (orig) check_same_meaning(orig, g, in_path);
        if (strcmp(passes, "default") == 0) check_fixed_point(g, got, in_path);
        ts_free_string(got);
        ts_mem_free(want);
    }
    ts_graph_free(g);
    ts_graph_free(orig);
    ts_mem_free(in);
}

static void run_dir(const char *passes)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", ROOT, passes);
    char **cases;
    int n = list_dir(dir, ".in.ir", &cases);
    CHECK_MSG(n >= 5, "%s has %d cases; every pass list needs at least 5", dir, n);
    for (int i = 0; i < n; i++) run_case(passes, dir, cases[i]);
    free_list(cases, n);
}

/* The IR corpus of the text-form tests has no golden output here; the
 * default pipeline must still keep each graph valid and its meaning. */
static void run_corpus(const char *dir)
{
    char **files;
    int n = list_dir(dir, ".ir", &files);
    for (int i = 0; i < n; i++) {
        char path[1024];
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        char *text = read_file(path, &len);
        ts_graph *g = text ? parse(text, len, path) : NULL, *orig = text ? parse(text, len, path) : NULL;
        ts_err err = {0}, verr = {0};
        if (g && orig) {
            CHECK_MSG(ts_graph_run_passes(g, "default", &err) == TS_OK, "%s: %s", path, err.msg);
            CHECK_MSG(ts_ir_verify(g, &verr) == TS_OK, "%s: %s", path, verr.msg);
            check_same_meaning(orig, g, path);
            char *got = print(g);
            check_fixed_point(g, got, path);
            ts_free_string(got);
        }
        ts_graph_free(g);
        ts_graph_free(orig);
        ts_mem_free(text);
    }
    free_list(files, n);
}

/* ---- the driver's API ------------------------------------------------------------------ */

static const char *const sample =
    "graph @sample(%x: f32[4], %p: bool[]) {\n"
    "  %one: f32[4] = const() {value=splat(1)}\n"
    "  %two: f32[4] = add(%one, %one)\n"
    "  %a: f32[4] = mul(%x, %one)\n"
    "  %b: f32[4] = mul(%a, %two)\n"
    "  %c: f32[4] = mul(%two, %x)\n"
    "  %d: f32[4] = neg(%b)\n"
    "  %r: f32[4] = if(%p, %c) then(%t: f32[4]) {\n"
    "    %u: f32[4] = neg(%t)\n"
    "    %v: f32[4] = neg(%u)\n"
    "    yield %v\n"
    "  } else(%e: f32[4]) {\n"
    "    yield %e\n"
    "  }\n"
    "  %s: f32[4] = add(%d, %r)\n"
    "  return %s\n"
    "}\n";

static ts_graph *sample_graph(void) { return parse(sample, strlen(sample), "sample"); }

static void test_unknown_pass(void)
{
    ts_graph *g = sample_graph();
    ts_err err = {0};
    CHECK(ts_graph_run_passes(g, "dce,frobnicate", &err) == TS_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "frobnicate") && strstr(err.msg, "simplify") && strstr(err.msg, "default"));
    char *text = print(g);   /* a bad list runs nothing */
    CHECK(text && strcmp(text, sample) == 0);
    ts_free_string(text);
    ts_err_clear(&err);
    CHECK(ts_graph_run_passes(g, "dce,,cse", &err) == TS_ERR_INVALID_ARG);
    ts_err_clear(&err);
    CHECK(ts_graph_run_passes(NULL, "dce", &err) == TS_ERR_INVALID_ARG);
    ts_err_clear(&err);
    CHECK(ts_graph_run_passes(g, NULL, &err) == TS_ERR_INVALID_ARG);
    CHECK(ts_graph_run_passes(g, " simplify , dce ", NULL) == TS_OK);
    CHECK(ts_graph_run_passes(g, "", NULL) == TS_OK);
    ts_graph_free(g);
}

static char *read_stream(FILE *f)
{
    ts_buf b = {0};
    char chunk[512];
    size_t n;
    rewind(f);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) ts_buf_putn(&b, chunk, n);
    ts_buf_putn(&b, "", 0);
    return b.data;
}

static void test_dump_after(void)
{
    ts_graph *g = sample_graph();
    FILE *f = tmpfile();
    ts_err err = {0};
    if (!g || !f) {
        CHECK(0);
        return;
    }
    CHECK(ts_pass_run_dump(g, "simplify,dce", "dce", f, &err) == TS_OK);
    char *dump = read_stream(f), *text = print(g);
    CHECK(dump && text && strncmp(dump, "# after dce\n", 12) == 0 && strcmp(dump + 12, text) == 0);
    ts_mem_free(dump);
    ts_free_string(text);
    fclose(f);
    f = tmpfile();
    CHECK(ts_pass_run_dump(g, "default", "all", f, &err) == TS_OK);
    dump = read_stream(f);
    CHECK(dump && strstr(dump, "# after simplify (default round 1)\n") && strstr(dump, "# after dce (default round 1)\n"));
    ts_mem_free(dump);
    fclose(f);
    CHECK(ts_pass_run_dump(g, "dce", "nope", stdout, &err) == TS_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "nope") != NULL);
    ts_graph_free(g);
}

/* The default pipeline reaches a fixed point: running it again changes
 * nothing. */
static void test_fixed_point(void)
{
    ts_graph *g = sample_graph();
    CHECK(ts_graph_run_passes(g, "default", NULL) == TS_OK);
    char *once = print(g);
    CHECK(ts_graph_run_passes(g, "default", NULL) == TS_OK);
    char *twice = print(g);
    CHECK(once && twice && strcmp(once, twice) == 0);
    ts_free_string(once);
    ts_free_string(twice);
    ts_graph_free(g);
}

/* ---- running out of memory --------------------------------------------------------------- */

static long alloc_count, alloc_fail_at;

static void *failing_alloc(void *ud, void *ptr, size_t n)
{
    (void)ud;
    if (n == 0) {
        free(ptr);
        return NULL;
    }
    if (alloc_fail_at && ++alloc_count == alloc_fail_at) return NULL;
    return realloc(ptr, n);
}

/* Fail each allocation of the default pipeline in turn: the answer is OK
 * or TS_ERR_OOM, never a crash or a leak, and the graph stays valid. */
static void test_oom(void)
{
    for (long k = 1; k < 100000; k++) {
        ts_set_allocator(failing_alloc, NULL);
        alloc_fail_at = 0;
        ts_graph *g = sample_graph();
        alloc_count = 0;
        alloc_fail_at = k;
        ts_err err = {0};
        ts_status s = ts_graph_run_passes(g, "default", &err);
        bool hit = alloc_count >= k;
        alloc_fail_at = 0;
        CHECK_MSG(s == TS_OK || s == TS_ERR_OOM, "allocation %ld: %s", k, err.msg);
        ts_err verr = {0};
        CHECK_MSG(ts_ir_verify(g, &verr) == TS_OK, "allocation %ld: %s", k, verr.msg);
        ts_graph_free(g);
        ts_set_allocator(NULL, NULL);
        if (!hit) break;
    }
}

int main(void)
{
    test_unknown_pass();
    test_dump_after();
    test_fixed_point();
    test_oom();
    char **dirs;
    int n = list_dir(ROOT, NULL, &dirs);
    CHECK_MSG(n > 0, "no pass tests under %s (run from the repository root)", ROOT);
    for (int i = 0; i < n; i++) run_dir(dirs[i]);
    free_list(dirs, n);
    run_corpus("tests/ir");
    printf("%d cases also compared by running the interpreter, %d could not run\n", ran_both, ran_skipped);
    return check_report();
}
