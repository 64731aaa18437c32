/* check_case.c — run one ONNX backend test case and compare its outputs
 * the way ONNX's own runner does (onnx/backend/test/runner): same count,
 * dtype and shape; floats within atol + rtol * |expected| (NaN equals NaN,
 * infinities must match); integers and bool exactly. */
#include "check.h"

#include "core/dtype.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TENSORS 1024    /* inputs or outputs of one data set */

/* ---- the data of a case ----------------------------------------------------------- */

/* One data set: its input tensors (by graph input name) and the expected
 * outputs. */
typedef struct data_set {
    int n_in, n_out;
    const char *in_name[MAX_TENSORS];
    ts_tensor *in[MAX_TENSORS];
    ts_tensor *out[MAX_TENSORS];
} data_set;

static void data_set_clear(data_set *d)
{
    for (int i = 0; i < d->n_in; i++) ts_tensor_release(d->in[i]);
    for (int i = 0; i < d->n_out; i++) ts_tensor_release(d->out[i]);
    d->n_in = d->n_out = 0;
}

typedef struct case_state {
    const check_case *c;
    const check_opts *o;
    model_inputs m;
    int n_sets;
    int sets[64];            /* the N of each test_data_set_N, ascending */
    double rtol, atol;
    ts_graph *g;
    ts_session *s;
    double load_ms, run_ms;
    char why[CHECK_LINE_MAX];
} case_state;

static bool failf(case_state *st, const char *fmt, ...) TS_PRINTF(2, 3);
static bool failf(case_state *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->why, sizeof st->why, fmt, ap);
    va_end(ap);
    return false;
}

static bool fail_ts(case_state *st, const ts_err *err) { return failf(st, "%s", err->msg[0] ? err->msg : "unknown error"); }

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* The N of every test_data_set_N folder, sorted. */
static bool find_sets(case_state *st)
{
    DIR *d = opendir(st->c->dir);
    if (!d) return failf(st, "cannot open %s", st->c->dir);
    static const char prefix[] = "test_data_set_";
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        const char *p = e->d_name;
        if (strncmp(p, prefix, sizeof prefix - 1) || !isdigit((unsigned char)p[sizeof prefix - 1])) continue;
        if (st->n_sets < (int)(sizeof st->sets / sizeof st->sets[0]))
            st->sets[st->n_sets++] = atoi(p + sizeof prefix - 1);
    }
    closedir(d);
    qsort(st->sets, (size_t)st->n_sets, sizeof st->sets[0], cmp_int);
    return st->n_sets > 0 || failf(st, "no test_data_set_N folder in %s", st->c->dir);
}

/* A number after "key": in a data.json; the text is tiny and flat. */
static void json_number(const char *text, const char *key, double *out)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = strstr(text, pat);
    if (!p) return;
    p += strlen(pat);
    while (*p == ' ' || *p == ':') p++;
    char *end;
    double v = strtod(p, &end);
    if (end != p && v >= 0) *out = v;
}

/* The tolerances ONNX's runner would use: data.json beside the model (for a
 * light model, the data.json of the `real` case that names it). */
static void read_tolerances(case_state *st)
{
    st->rtol = st->o->rtol;
    st->atol = st->o->atol;
    if (st->o->tol_forced) return;
    char path[4200], text[1024];
    if (st->c->light)
        snprintf(path, sizeof path, "%s/../real/test_%s/data.json", st->c->dir,
                 strncmp(st->c->name, "light_", 6) == 0 ? st->c->name + 6 : st->c->name);
    else snprintf(path, sizeof path, "%s/data.json", st->c->dir);
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    json_number(text, "rtol", &st->rtol);
    json_number(text, "atol", &st->atol);
}

/* input_K.pb (or output_K.pb) for K = 0, 1, ... while the file exists. */
static bool read_series(case_state *st, const char *dir, const char *stem, ts_tensor **t, int *n)
{
    for (*n = 0; *n < MAX_TENSORS; ++*n) {
        char path[4200];
        ts_err err = {0};
        snprintf(path, sizeof path, "%s/%s_%d.pb", dir, stem, *n);
        if (!is_file(path)) break;
        if (ts_onnx_read_tensor(path, &t[*n], NULL, &err) != TS_OK) return fail_ts(st, &err);
    }
    return true;
}

/* Input K of the test data is graph input K: of the inputs that are not
 * initializers when there are no more files than those, else of all the
 * declared inputs (a file then replaces an initializer). */
static bool name_inputs(case_state *st, data_set *d)
{
    const model_inputs *m = &st->m;
    if (d->n_in > m->n)
        return failf(st, "the test data has %d inputs, the model declares %d", d->n_in, m->n);
    for (int k = 0; k < d->n_in; k++) d->in_name[k] = m->in[d->n_in <= m->n_graph ? m->graph[k] : k].name;
    return true;
}

/* The test data of a sequence, optional or map value is a SequenceProto,
 * OptionalProto or MapProto: tessera has tensors only, so say that rather
 * than what reading it as a TensorProto would. */
static bool tensors_only(case_state *st)
{
    for (int i = 0; i < st->m.n; i++)
        if (st->m.in[i].kind)
            return failf(st, "input '%s' is a%s %s: tessera has tensors only", st->m.in[i].name,
                         st->m.in[i].kind[0] == 'o' ? "n" : "", st->m.in[i].kind);
    for (int k = 0; k < st->m.n_out; k++)
        if (st->m.out_kind[k])
            return failf(st, "output '%s' is a%s %s: tessera has tensors only", st->m.out_name[k],
                         st->m.out_kind[k][0] == 'o' ? "n" : "", st->m.out_kind[k]);
    return true;
}

static bool read_set(case_state *st, int set, data_set *d)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/test_data_set_%d", st->c->dir, st->sets[set]);
    return read_series(st, dir, "input", d->in, &d->n_in) && read_series(st, dir, "output", d->out, &d->n_out) &&
           name_inputs(st, d);
}

/* The light layout: ONNX's runner feeds each input arange(n)/n as f32,
 * unknown dims as 1, and only float inputs are supported. */
static bool dummy_input(case_state *st, const model_input *in, ts_tensor **out)
{
    if (in->elem_type != 1) return failf(st, "input '%s' is not float: the light layout has no data for it", in->name);
    if (in->rank < 0) return failf(st, "input '%s' has no shape: the light layout cannot make its data", in->name);
    int64_t shape[64];
    if (in->rank > 64) return failf(st, "input '%s' has rank %d", in->name, in->rank);
    for (int d = 0; d < in->rank; d++) shape[d] = in->dims[d] < 0 ? 1 : in->dims[d];
    ts_err err = {0};
    if (ts_tensor_new(TS_DTYPE_F32, in->rank, shape, out, &err) != TS_OK) return fail_ts(st, &err);
    int64_t n = ts_tensor_numel(*out);
    float *p = ts_tensor_data(*out);
    for (int64_t i = 0; i < n; i++) p[i] = (float)((double)i / (double)n);
    return true;
}

static bool read_light(case_state *st, data_set *d)
{
    const model_inputs *m = &st->m;
    for (int k = 0; k < m->n_graph && k < MAX_TENSORS; k++) {
        d->in_name[k] = m->in[m->graph[k]].name;
        if (!dummy_input(st, &m->in[m->graph[k]], &d->in[d->n_in++])) return false;
    }
    char stem[4200];
    snprintf(stem, sizeof stem, "%s_output", st->c->name);  /* the model is DIR/NAME.onnx */
    return read_series(st, st->c->dir, stem, d->out, &d->n_out);
}

/* ---- loading ------------------------------------------------------------------------ */

/* The model's declared inputs; when the protobuf does not even parse, the
 * loader's own message says why. */
static bool read_inputs(case_state *st)
{
    ts_err err = {0};
    if (model_inputs_read(st->c->model, &st->m, &err) == TS_OK) return true;
    ts_err lerr = {0};
    ts_graph *g = NULL;
    if (ts_onnx_load(st->c->model, 0, NULL, NULL, &g, &lerr) != TS_OK) return fail_ts(st, &lerr);
    ts_graph_free(g);
    return fail_ts(st, &err);
}

static bool load(case_state *st, const data_set *d)
{
    ts_err err = {0};
    double t0 = now_ms();
    ts_status s = ts_onnx_load(st->c->model, d->n_in, d->in_name, (ts_tensor *const *)d->in, &st->g, &err);
    st->load_ms = now_ms() - t0;
    if (s != TS_OK) return fail_ts(st, &err);
    if (ts_session_new(st->g, st->o->target, &st->s, &err) != TS_OK) return fail_ts(st, &err);
    return true;
}

/* ---- comparing ------------------------------------------------------------------------ */

/* "[1, 2]": the multi-index of flat index i. */
static void index_text(char *out, size_t n, const ts_tensor *t, int64_t i)
{
    int r = ts_tensor_rank(t);
    const int64_t *sh = ts_tensor_shape(t);
    int64_t idx[64] = {0};
    for (int d = r - 1; d >= 0 && d < 64; d--) {
        idx[d] = sh[d] ? i % sh[d] : 0;
        i = sh[d] ? i / sh[d] : 0;
    }
    shape_text(out, n, TS_DTYPE_COUNT, r < 64 ? r : 64, idx);
    memmove(out, strchr(out, '['), strlen(strchr(out, '[')) + 1);
}

static bool close_enough(const case_state *st, ts_dtype dt, const void *g, const void *e, int64_t i)
{
    if (ts_dtype_is_fp(dt)) {
        double a = ts_elem_get_f64(dt, g, i), x = ts_elem_get_f64(dt, e, i);
        if (isnan(a) || isnan(x)) return isnan(a) && isnan(x);
        if (a == x) return true;
        return isfinite(a) && isfinite(x) && fabs(a - x) <= st->atol + st->rtol * fabs(x);
    }
    if (dt == TS_DTYPE_U64) return ts_elem_get_u64(dt, g, i) == ts_elem_get_u64(dt, e, i);
    return ts_elem_get_i64(dt, g, i) == ts_elem_get_i64(dt, e, i);
}

/* "output 0 (y)" */
static void output_label(const case_state *st, int k, char *out, size_t n)
{
    const char *name = k < st->m.n_out ? st->m.out_name[k] : ts_graph_output_name(st->g, k);
    if (name && name[0]) snprintf(out, n, "output %d (%s)", k, name);
    else snprintf(out, n, "output %d", k);
}

static bool compare(case_state *st, int k, const ts_tensor *got, const ts_tensor *want)
{
    char label[300], a[256], b[256];
    output_label(st, k, label, sizeof label);
    ts_dtype dt = ts_tensor_dtype(want);
    int r = ts_tensor_rank(want);
    bool same_shape = ts_tensor_dtype(got) == dt && ts_tensor_rank(got) == r &&
                      memcmp(ts_tensor_shape(got), ts_tensor_shape(want), sizeof(int64_t) * (size_t)r) == 0;
    if (!same_shape) {
        shape_text(a, sizeof a, ts_tensor_dtype(got), ts_tensor_rank(got), ts_tensor_shape(got));
        shape_text(b, sizeof b, dt, r, ts_tensor_shape(want));
        return failf(st, "%s: got %s, expected %s", label, a, b);
    }
    int64_t n = ts_tensor_numel(want), bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++)
        if (!close_enough(st, dt, ts_tensor_data(got), ts_tensor_data(want), i)) bad++, first = first < 0 ? i : first;
    if (!bad) return true;
    char idx[256];
    index_text(idx, sizeof idx, want, first);
    elem_text(a, sizeof a, got, first);
    elem_text(b, sizeof b, want, first);
    return failf(st, "%s: %lld of %lld values differ; first at %s: got %s, expected %s", label, (long long)bad,
                 (long long)n, idx, a, b);
}

/* ---- running ---------------------------------------------------------------------------- */

static bool run_set(case_state *st, data_set *d, int set)
{
    int n_in = ts_graph_num_inputs(st->g), n_out = ts_graph_num_outputs(st->g);
    if (n_out != d->n_out)
        return failf(st, "the model has %d outputs, test_data_set_%d has %d", n_out, st->sets[set], d->n_out);
    ts_tensor *in[MAX_TENSORS] = {0}, *out[MAX_TENSORS] = {0};
    if (n_in > MAX_TENSORS) return failf(st, "the model has over %d inputs", MAX_TENSORS);
    for (int i = 0; i < n_in; i++) {
        const char *name = ts_graph_input_name(st->g, i);
        if (!name && i < st->m.n_graph) name = st->m.in[st->m.graph[i]].name;
        for (int k = 0; name && k < d->n_in && !in[i]; k++)
            if (strcmp(d->in_name[k], name) == 0) in[i] = d->in[k];
        if (!in[i]) return failf(st, "no test data for input '%s'", name ? name : "?");
    }
    ts_err err = {0};
    double t0 = now_ms();
    ts_status s = ts_session_run(st->s, n_in, in, n_out, out, &err);
    st->run_ms += now_ms() - t0;
    bool ok = s == TS_OK || fail_ts(st, &err);
    for (int k = 0; ok && k < n_out; k++) ok = compare(st, k, out[k], d->out[k]);
    for (int k = 0; k < n_out; k++) ts_tensor_release(out[k]);
    return ok;
}

static bool run_all(case_state *st)
{
    static data_set d;   /* large: kept off the stack */
    if (!read_inputs(st) || !tensors_only(st)) return false;
    read_tolerances(st);
    if (st->c->light) st->n_sets = 1;
    else if (!find_sets(st)) return false;
    bool ok = st->c->light ? read_light(st, &d) : read_set(st, 0, &d);
    ok = ok && load(st, &d) && run_set(st, &d, 0);
    for (int set = 1; ok && set < st->n_sets; set++) {
        data_set_clear(&d);
        ok = read_set(st, set, &d) && run_set(st, &d, set);
    }
    data_set_clear(&d);
    return ok;
}

bool check_run_case(const check_case *c, const check_opts *o, char *line, size_t n)
{
    case_state *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(line, n, "FAIL %s: out of memory", c->name);
        return false;
    }
    st->c = c;
    st->o = o;
    bool ok = run_all(st);
    int len = ok ? snprintf(line, n, "PASS %s", c->name) : snprintf(line, n, "FAIL %s: %s", c->name, st->why);
    if (o->verbose && len > 0 && (size_t)len < n)
        snprintf(line + len, n - (size_t)len, "  [load %.1f ms, run %.1f ms, %d data set%s, rtol %g atol %g]",
                 st->load_ms, st->run_ms, st->n_sets, st->n_sets == 1 ? "" : "s", st->rtol, st->atol);
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    ts_session_free(st->s);
    ts_graph_free(st->g);
    model_inputs_free(&st->m);
    free(st);
    return ok;
}
