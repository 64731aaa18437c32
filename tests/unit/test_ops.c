/* test_ops.c — the golden-data primitive suite. Every directory
 * tests/ops/<op>/<case>/ (written by scripts/gen_op_tests.py) holds
 * model.ir, input_K.npy, expected_K.npy and optionally tol.txt. Each case
 * must be canonical IR text (print(parse(text)) == text), use the op it is
 * filed under, and compute its expected outputs on the interpreter.
 *
 * Run from the repository root (ctest does). An argument restricts the run
 * to the cases whose path contains it: `test_ops add/` or `test_ops f16`.
 * One line per failing case names the reason and the first mismatch; the
 * last line counts cases: "N passed, N failed". */
#include "check.h"
#include "core/dtype.h"
#include "ir/ir.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>

#define OPS_DIR "tests/ops"
#define MAX_IO 16

/* Tolerances of a float output: |got - want| <= atol + rtol * |want|. */
typedef struct tol {
    double rtol, atol;
} tol;

/* The defaults, by dtype: a case that needs others says so in tol.txt.
 * Integers and bool are always exact. */
static tol default_tol(ts_dtype dt)
{
    switch (dt) {
    case TS_DTYPE_F64: return (tol){1e-12, 1e-14};
    case TS_DTYPE_F32: return (tol){1e-5, 1e-6};
    case TS_DTYPE_F16: case TS_DTYPE_BF16: return (tol){1e-3, 1e-3};  /* about one ulp */
    default: return (tol){0, 0};
    }
}

/* ---- directories and files --------------------------------------------- */

typedef struct names {
    char **v;
    int n;
} names;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(names *ns)
{
    for (int i = 0; i < ns->n; i++) free(ns->v[i]);
    free(ns->v);
    ns->v = NULL;
    ns->n = 0;
}

static void names_add(names *ns, const char *s)
{
    ns->v = realloc(ns->v, sizeof *ns->v * (size_t)(ns->n + 1));
    if (!ns->v) abort();
    ns->v[ns->n] = malloc(strlen(s) + 1);
    if (!ns->v[ns->n]) abort();
    strcpy(ns->v[ns->n++], s);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The subdirectories of dir, sorted, so the report reads the same on every
 * file system. False if dir cannot be read. */
static bool list_dirs(const char *dir, names *out)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    int cap = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || !is_dir(path)) continue;
        if (out->n == cap) {
            cap = cap ? 2 * cap : 64;
            out->v = realloc(out->v, sizeof *out->v * (size_t)cap);
            if (!out->v) abort();
        }
        out->v[out->n] = malloc(strlen(e->d_name) + 1);
        if (!out->v[out->n]) abort();
        strcpy(out->v[out->n++], e->d_name);
    }
    closedir(d);
    qsort(out->v, (size_t)out->n, sizeof *out->v, by_name);
    return true;
}

/* The whole file, NUL-terminated, or NULL. */
static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    for (size_t got; s && (got = fread(s + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) s = realloc(s, cap *= 2);
    }
    fclose(f);
    if (!s) abort();
    s[n] = 0;
    *len = n;
    return s;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- one case ------------------------------------------------------------ */

/* What a case owns while it runs; released by case_free whatever happened. */
typedef struct ocase {
    const char *dir;          /* tests/ops/<op>/<case> */
    char *text;
    ts_graph *g;
    ts_session *s;
    int n_in, n_out;
    ts_tensor *in[MAX_IO], *want[MAX_IO], *got[MAX_IO];
    char why[1024];           /* the reason it failed */
} ocase;

static void case_free(ocase *c)
{
    for (int i = 0; i < MAX_IO; i++) {
        ts_tensor_release(c->in[i]);
        ts_tensor_release(c->want[i]);
        ts_tensor_release(c->got[i]);
    }
    ts_session_free(c->s);
    ts_graph_free(c->g);
    free(c->text);
}

static bool fail(ocase *c, const char *fmt, ...) TS_PRINTF(2, 3);
static bool fail(ocase *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    return false;
}

/* The first line where a and b differ, for the canonicality message. */
static bool first_diff(ocase *c, const char *printed)
{
    const char *a = c->text, *b = printed;
    int line = 1;
    while (*a && *a == *b) {
        if (*a == '\n') line++;
        a++, b++;
    }
    while (a > c->text && a[-1] != '\n') a--, b--;
    int na = (int)strcspn(a, "\n"), nb = (int)strcspn(b, "\n");
    return fail(c, "model.ir is not canonical at line %d:\n    file:    %.*s\n    printed: %.*s", line, na, a,
                nb, b);
}

static bool parse_case(ocase *c)
{
    char path[1024];
    size_t len = 0;
    snprintf(path, sizeof path, "%s/model.ir", c->dir);
    c->text = read_text(path, &len);
    if (!c->text) return fail(c, "cannot read %s", path);
    ts_err err = {0};
    if (ts_graph_parse(c->text, len, path, &c->g, &err) != TS_OK) return fail(c, "parse: %s", err.msg);
    char *printed = NULL;
    if (ts_graph_to_text(c->g, &printed, &err) != TS_OK) return fail(c, "print: %s", err.msg);
    bool same = strcmp(printed, c->text) == 0;
    if (!same) first_diff(c, printed);
    ts_free_string(printed);
    return same;
}

static void find_op(ts_node *n, void *ud)
{
    ts_op *want = ud;
    if (n->op == *want) *want = TS_OP_COUNT;  /* found: mark it */
}

/* The case must exercise the op it is filed under (tests/ops/<op>/...). */
static bool uses_op(ocase *c, const char *op_name)
{
    ts_op op;
    if (!ts_op_from_name(op_name, strlen(op_name), &op)) return fail(c, "'%s' is not a primitive", op_name);
    ts_ir_walk(c->g->body, find_op, &op);
    if (op != TS_OP_COUNT) return fail(c, "the graph does not use %s", op_name);
    return true;
}

/* input_K.npy for every graph input and expected_K.npy for every output,
 * and no stray files beyond them. */
static bool load_tensors(ocase *c)
{
    c->n_in = ts_graph_num_inputs(c->g);
    c->n_out = ts_graph_num_outputs(c->g);
    if (c->n_in > MAX_IO || c->n_out > MAX_IO) return fail(c, "over %d inputs or outputs", MAX_IO);
    const char *kinds[2] = {"input", "expected"};
    int counts[2] = {c->n_in, c->n_out};
    ts_tensor **into[2] = {c->in, c->want};
    for (int k = 0; k < 2; k++) {
        char path[1024];
        for (int i = 0; i < counts[k]; i++) {
            ts_err err = {0};
            snprintf(path, sizeof path, "%s/%s_%d.npy", c->dir, kinds[k], i);
            if (ts_npy_read(path, &into[k][i], &err) != TS_OK) return fail(c, "%s", err.msg);
        }
        snprintf(path, sizeof path, "%s/%s_%d.npy", c->dir, kinds[k], counts[k]);
        if (exists(path)) return fail(c, "%s exists but the graph has %d %ss", path, counts[k], kinds[k]);
    }
    return true;
}

/* tol.txt, if present, replaces the defaults for every float output. */
static bool read_tol(ocase *c, bool *has, tol *t)
{
    char path[1024];
    size_t len;
    snprintf(path, sizeof path, "%s/tol.txt", c->dir);
    char *text = read_text(path, &len);
    *has = text != NULL;
    if (!text) return true;
    bool ok = sscanf(text, "rtol %lf atol %lf", &t->rtol, &t->atol) == 2;
    free(text);
    return ok ? true : fail(c, "tol.txt must read \"rtol X atol Y\"");
}

/* ---- comparison ------------------------------------------------------------ */

/* "[i, j, ...]": the multi-index of flat element `flat` of t. */
static void index_text(ts_buf *b, const ts_tensor *t, int64_t flat)
{
    int rank = ts_tensor_rank(t);
    const int64_t *shape = ts_tensor_shape(t);
    int64_t idx[TS_MAX_RANK];
    for (int i = rank - 1; i >= 0; i--) {
        idx[i] = shape[i] ? flat % shape[i] : 0;
        flat = shape[i] ? flat / shape[i] : 0;
    }
    ts_buf_puts(b, "[");
    for (int i = 0; i < rank; i++) ts_buf_printf(b, "%s%lld", i ? ", " : "", (long long)idx[i]);
    ts_buf_puts(b, "]");
}

/* NaN matches NaN, an infinity only itself, a zero only the zero of its
 * sign (the contracts fix it: sign(-0) = -0, max(-0, 0) = 0, ...), and
 * anything else within tolerance. */
static bool close_enough(double got, double want, tol t)
{
    if (isnan(want)) return isnan(got);
    if (want == 0 && got == 0) return signbit(want) == signbit(got);
    if (isinf(want) || isinf(got) || isnan(got)) return got == want;
    return fabs(got - want) <= t.atol + t.rtol * fabs(want);
}

static void elem_text(char *out, size_t cap, ts_dtype dt, const void *data, int64_t i)
{
    if (ts_dtype_is_float(dt)) snprintf(out, cap, "%.17g", ts_elem_get_f64(dt, data, i));
    else if (dt == TS_DTYPE_BOOL || ts_dtype_is_signed(dt))
        snprintf(out, cap, "%lld", (long long)ts_elem_get_i64(dt, data, i));
    else
        snprintf(out, cap, "%llu", (unsigned long long)ts_elem_get_u64(dt, data, i));
}

static bool same_elem(ts_dtype dt, const void *got, const void *want, int64_t i, tol t)
{
    if (ts_dtype_is_float(dt)) return close_enough(ts_elem_get_f64(dt, got, i), ts_elem_get_f64(dt, want, i), t);
    if (dt == TS_DTYPE_BOOL) return (((const uint8_t *)got)[i] != 0) == (((const uint8_t *)want)[i] != 0);
    size_t sz = ts_dtype_size(dt);
    return memcmp((const char *)got + (size_t)i * sz, (const char *)want + (size_t)i * sz, sz) == 0;
}

static bool same_shape(const ts_tensor *a, const ts_tensor *b)
{
    if (ts_tensor_rank(a) != ts_tensor_rank(b)) return false;
    for (int i = 0; i < ts_tensor_rank(a); i++)
        if (ts_tensor_shape(a)[i] != ts_tensor_shape(b)[i]) return false;
    return true;
}

static bool compare(ocase *c, int k, bool has_tol, tol file_tol)
{
    const ts_tensor *got = c->got[k], *want = c->want[k];
    ts_dtype dt = ts_tensor_dtype(want);
    if (ts_tensor_dtype(got) != dt)
        return fail(c, "output %d: dtype %s, expected %s", k, ts_dtype_name(ts_tensor_dtype(got)), ts_dtype_name(dt));
    if (!same_shape(got, want)) return fail(c, "output %d: shape differs from expected_%d.npy", k, k);
    tol t = has_tol ? file_tol : default_tol(dt);
    for (int64_t i = 0; i < ts_tensor_numel(want); i++) {
        if (same_elem(dt, ts_tensor_data(got), ts_tensor_data(want), i, t)) continue;
        char g[64], w[64];
        ts_buf at = {0};
        index_text(&at, want, i);
        elem_text(g, sizeof g, dt, ts_tensor_data(got), i);
        elem_text(w, sizeof w, dt, ts_tensor_data(want), i);
        fail(c, "output %d: first mismatch at %s: got %s, expected %s (rtol %g atol %g)", k, at.data ? at.data : "?",
             g, w, t.rtol, t.atol);
        ts_buf_free(&at);
        return false;
    }
    return true;
}

/* ---- the suite -------------------------------------------------------------- */

/* "interp" (the golden values are the interpreter's contract) or "cpu"
 * (the compiled path must meet the same expectations). */
static const char *target = "interp";

static bool run_case(ocase *c, const char *op_name)
{
    if (!parse_case(c) || !uses_op(c, op_name) || !load_tensors(c)) return false;
    bool has_tol = false;
    tol t = {0, 0};
    if (!read_tol(c, &has_tol, &t)) return false;
    ts_err err = {0};
    if (ts_session_new(c->g, target, &c->s, &err) != TS_OK) return fail(c, "session: %s", err.msg);
    if (ts_session_run(c->s, c->n_in, c->in, c->n_out, c->got, &err) != TS_OK)
        return fail(c, "run: %s: %s", ts_status_name(err.code), err.msg);
    for (int k = 0; k < c->n_out; k++)
        if (!compare(c, k, has_tol, t)) return false;
    return true;
}

/* The cases the target is expected to fail (tests/ops/expected_failures_<target>.txt):
 * "op/case  # reason" lines. */
static names xfail;

static void read_xfail(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/expected_failures_%s.txt", OPS_DIR, target);
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        size_t n = strcspn(line, " #\n");
        if (!n || line[0] == '#') continue;
        line[n] = 0;
        names_add(&xfail, line);
    }
    fclose(f);
}

static bool listed(const char *path)
{
    for (int i = 0; i < xfail.n; i++) {
        size_t a = strlen(path), b = strlen(xfail.v[i]);
        if (a > b && path[a - b - 1] == '/' && strcmp(path + a - b, xfail.v[i]) == 0) return true;
    }
    return false;
}

static void run_op(const char *op_name, const char *filter, int *cases)
{
    char dir[256];
    if (snprintf(dir, sizeof dir, "%s/%s", OPS_DIR, op_name) >= (int)sizeof dir) return;
    names cs = {0};
    list_dirs(dir, &cs);
    for (int i = 0; i < cs.n; i++) {
        char path[512];  /* half of what the file paths below it get, so those always fit */
        if (snprintf(path, sizeof path, "%s/%s", dir, cs.v[i]) >= (int)sizeof path) continue;  /* not ours */
        if (filter && !strstr(path, filter)) continue;
        ocase c = {.dir = path};
        bool ok = run_case(&c, op_name);
        case_free(&c);
        (*cases)++;
        bool expected = listed(path);
        if (ok != expected) check_pass_++;
        else if (ok) {
            check_fail_++;
            fprintf(stderr, "UNEXPECTED PASS %s: it is on the %s expected-failures list\n", path, target);
        } else {
            check_fail_++;
            fprintf(stderr, "FAIL %s: %s\n", path, c.why);
        }
    }
    names_free(&cs);
}

/* test_ops [--target cpu|interp] [FILTER] */
int main(int argc, char **argv)
{
    int a = 1;
    if (argc > 2 && strcmp(argv[1], "--target") == 0) {
        target = argv[2];
        a = 3;
    }
    const char *filter = argc > a ? argv[a] : NULL;
    read_xfail();
    names ops = {0};
    if (!list_dirs(OPS_DIR, &ops)) {
        fprintf(stderr, "cannot read %s: run from the repository root\n", OPS_DIR);
        return 1;
    }
    int cases = 0;
    for (int i = 0; i < ops.n; i++) run_op(ops.v[i], filter, &cases);
    names_free(&ops);
    names_free(&xfail);
    if (cases == 0) {
        fprintf(stderr, "no case under %s%s%s\n", OPS_DIR, filter ? " matches " : "", filter ? filter : "");
        check_fail_++;
    }
    return check_report();
}
