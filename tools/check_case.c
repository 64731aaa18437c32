/* check_case.c — run one ONNX backend test case and compare its outputs
 * the way ONNX's own runner does (onnx/backend/test/runner): same count,
 * dtype and shape; floats within atol + rtol * |expected| (NaN equals NaN,
 * infinities must match); integers and bool exactly. A sequence or
 * optional (SequenceProto, OptionalProto) must have the same form, and its
 * tensors compare one by one. */
#include "check.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TENSORS 1024    /* inputs or outputs of one data set */

/* ---- the data of a case ----------------------------------------------------------- */

/* One data set: its input values (by model input name) and the expected
 * outputs. */
typedef struct data_set {
    int n_in, n_out;
    const char *in_name[MAX_TENSORS];
    value in[MAX_TENSORS];
    value out[MAX_TENSORS];
} data_set;

static void data_set_clear(data_set *d)
{
    for (int i = 0; i < d->n_in; i++) value_free(&d->in[i]);
    for (int i = 0; i < d->n_out; i++) value_free(&d->out[i]);
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
    int n_forms;
    char **out_forms;        /* the outputs' forms, from the load */
    ts_session *s;
    double load_ms, run_ms;
    char why[CHECK_LINE_MAX];
} case_state;

static bool failf(case_state *st, const char *fmt, ...) CLI_PRINTF(2, 3);
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

/* How many STEM_K.pb files there are (K = 0, 1, ...). */
static int count_series(const char *dir, const char *stem)
{
    int n = 0;
    for (; n < MAX_TENSORS; n++) {
        char path[8500];
        snprintf(path, sizeof path, "%s/%s_%d.pb", dir, stem, n);
        if (!is_file(path)) break;
    }
    return n;
}

/* STEM_K.pb for K < n, each read as the kind kinds[K] says (a
 * TensorProto, SequenceProto or OptionalProto). */
static bool read_series(case_state *st, const char *dir, const char *stem, const char *const *kinds, int n,
                        value *v)
{
    for (int k = 0; k < n; k++) {
        char path[8500];
        ts_err err = {0};
        snprintf(path, sizeof path, "%s/%s_%d.pb", dir, stem, k);
        if (read_value_file(path, value_kind(kinds[k]), &v[k], NULL, &err) != TS_OK) return fail_ts(st, &err);
    }
    return true;
}

/* Input K of the test data is graph input K: of the inputs that are not
 * initializers when there are no more files than those, else of all the
 * declared inputs (a file then replaces an initializer). */
static bool name_inputs(case_state *st, data_set *d, const char **kinds)
{
    const model_inputs *m = &st->m;
    if (d->n_in > m->n)
        return failf(st, "the test data has %d inputs, the model declares %d", d->n_in, m->n);
    for (int k = 0; k < d->n_in; k++) {
        const model_input *in = &m->in[d->n_in <= m->n_graph ? m->graph[k] : k];
        d->in_name[k] = in->name;
        kinds[k] = in->kind;
    }
    return true;
}

/* A map or sparse tensor: tessera holds tensors, sequences and optionals
 * only, so say that rather than what reading the file would. */
static bool kinds_held(case_state *st)
{
    for (int i = 0; i < st->m.n; i++)
        if (!value_kind(st->m.in[i].kind))
            return failf(st, "input '%s' is a %s: tessera holds tensors, sequences and optionals", st->m.in[i].name,
                         st->m.in[i].kind);
    for (int k = 0; k < st->m.n_out; k++)
        if (!value_kind(st->m.out_kind[k]))
            return failf(st, "output '%s' is a %s: tessera holds tensors, sequences and optionals", st->m.out_name[k],
                         st->m.out_kind[k]);
    return true;
}

/* Tensors the model declares bfloat16 that older test data stores as
 * UINT16 bits become bf16 (bf16_from_u16_bits). */
static bool bf16_bits(case_state *st, data_set *d)
{
    const model_inputs *m = &st->m;
    ts_err err = {0};
    for (int k = 0; k < d->n_in; k++) {
        const model_input *in = &m->in[d->n_in <= m->n_graph ? m->graph[k] : k];
        if (!d->in[k].form && d->in[k].n == 1 && bf16_from_u16_bits(&d->in[k].t[0], in->elem_type, &err) != TS_OK)
            return fail_ts(st, &err);
    }
    for (int k = 0; k < d->n_out; k++)
        if (!d->out[k].form && d->out[k].n == 1 &&
            bf16_from_u16_bits(&d->out[k].t[0], m->out_elem_type[k], &err) != TS_OK)
            return fail_ts(st, &err);
    return true;
}

/* Values a failed read leaves are zero (read_value_file clears its
 * output), so data_set_clear may free all n_in and n_out. */
static bool read_set(case_state *st, int set, data_set *d)
{
    char dir[4200];
    const char *kinds[MAX_TENSORS];
    snprintf(dir, sizeof dir, "%s/test_data_set_%d", st->c->dir, st->sets[set]);
    d->n_in = count_series(dir, "input");
    d->n_out = count_series(dir, "output");
    if (d->n_out > st->m.n_out)
        return failf(st, "the model has %d outputs, test_data_set_%d has %d", st->m.n_out, st->sets[set], d->n_out);
    return name_inputs(st, d, kinds) && read_series(st, dir, "input", kinds, d->n_in, d->in) &&
           read_series(st, dir, "output", st->m.out_kind, d->n_out, d->out) && bf16_bits(st, d);
}

/* The light layout: ONNX's runner feeds each input arange(n)/n as f32,
 * unknown dims as 1, and only float inputs are supported. */
static bool dummy_input(case_state *st, const model_input *in, value *out)
{
    if (in->elem_type != 1) return failf(st, "input '%s' is not float: the light layout has no data for it", in->name);
    if (in->rank < 0) return failf(st, "input '%s' has no shape: the light layout cannot make its data", in->name);
    int64_t shape[64];
    if (in->rank > 64) return failf(st, "input '%s' has rank %d", in->name, in->rank);
    for (int d = 0; d < in->rank; d++) shape[d] = in->dims[d] < 0 ? 1 : in->dims[d];
    ts_err err = {0};
    if (!(out->t = calloc(1, sizeof *out->t))) return failf(st, "out of memory");
    if (ts_tensor_new(TS_DTYPE_F32, in->rank, shape, &out->t[0], &err) != TS_OK) return fail_ts(st, &err);
    out->n = 1;
    int64_t n = ts_tensor_numel(out->t[0]);
    float *p = ts_tensor_data(out->t[0]);
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
    d->n_out = count_series(st->c->dir, stem);
    if (d->n_out > st->m.n_out)
        return failf(st, "the model has %d outputs, the test data %d", st->m.n_out, d->n_out);
    return read_series(st, st->c->dir, stem, st->m.out_kind, d->n_out, d->out);
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

/* Every input's value is given as known: its form and its tensors, in
 * one flat list. */
static bool load(case_state *st, const data_set *d)
{
    static const char *forms[MAX_TENSORS];
    static ts_tensor *flat[MAX_TENSORS];
    int n = 0;
    for (int k = 0; k < d->n_in; k++) {
        forms[k] = d->in[k].form;
        for (int j = 0; j < d->in[k].n; j++) {
            if (n == MAX_TENSORS) return failf(st, "the inputs hold over %d tensors", MAX_TENSORS);
            flat[n++] = d->in[k].t[j];
        }
    }
    ts_err err = {0};
    double t0 = now_ms();
    ts_status s = ts_onnx_load_forms(st->c->model, d->n_in, d->in_name, forms, n, flat, &st->g, &st->n_forms,
                                     &st->out_forms, &err);
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

static bool close_enough(const case_state *st, ts_dtype dt, const ts_tensor *g, const ts_tensor *e, int64_t i)
{
    if (ts_dtype_is_fp(dt)) {
        double a = ts_tensor_get_f64(g, i), x = ts_tensor_get_f64(e, i);
        if (isnan(a) || isnan(x)) return isnan(a) && isnan(x);
        if (a == x) return true;
        return isfinite(a) && isfinite(x) && fabs(a - x) <= st->atol + st->rtol * fabs(x);
    }
    if (dt == TS_DTYPE_U64) return ts_tensor_get_u64(g, i) == ts_tensor_get_u64(e, i);
    return ts_tensor_get_i64(g, i) == ts_tensor_get_i64(e, i);
}

/* "output 0 (y)" */
static void output_label(const case_state *st, int k, char *out, size_t n)
{
    const char *name = k < st->m.n_out ? st->m.out_name[k] : ts_graph_output_name(st->g, k);
    if (name && name[0]) snprintf(out, n, "output %d (%s)", k, name);
    else snprintf(out, n, "output %d", k);
}

/* Tensor j of output k (j < 0: the output is a tensor). */
static bool compare(case_state *st, int k, int j, const ts_tensor *got, const ts_tensor *want)
{
    char label[300], a[256], b[256];
    output_label(st, k, label, sizeof label);
    if (j >= 0) snprintf(label + strlen(label), sizeof label - strlen(label), ", tensor %d", j);
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
        if (!close_enough(st, dt, got, want, i)) bad++, first = first < 0 ? i : first;
    if (!bad) return true;
    char idx[256];
    index_text(idx, sizeof idx, want, first);
    elem_text(a, sizeof a, got, first);
    elem_text(b, sizeof b, want, first);
    return failf(st, "%s: %lld of %lld values differ; first at %s: got %s, expected %s", label, (long long)bad,
                 (long long)n, idx, a, b);
}

/* ---- running ---------------------------------------------------------------------------- */

/* The form of data set value v ("t" for a tensor). */
static const char *form_of(const value *v) { return v->form ? v->form : "t"; }

/* Output k: the same form, then each tensor. got: the graph outputs from
 * this output's first. */
static bool compare_output(case_state *st, int k, ts_tensor *const *got, const value *want)
{
    char label[300];
    output_label(st, k, label, sizeof label);
    if (strcmp(st->out_forms[k], form_of(want)) != 0)
        return failf(st, "%s: got a value of form %s, expected %s", label, st->out_forms[k], form_of(want));
    for (int j = 0; j < want->n; j++)
        if (!compare(st, k, want->form ? j : -1, got[j], want->t[j])) return false;
    return true;
}

/* The graph's inputs: the tensors of each model input that is not an
 * initializer, in order. A later data set must fit the forms the graph was
 * built for. */
static bool gather_inputs(case_state *st, const data_set *d, int set, ts_tensor **in, int n_in)
{
    int n = 0;
    for (int i = 0; i < st->m.n_graph; i++) {
        const char *name = st->m.in[st->m.graph[i]].name;
        const value *v = NULL;
        for (int k = 0; k < d->n_in && !v; k++)
            if (strcmp(d->in_name[k], name) == 0) v = &d->in[k];
        if (!v) return failf(st, "no test data for input '%s'", name);
        if (n + v->n > n_in)
            return failf(st, "test_data_set_%d: input '%s' holds more tensors (form %s) than the model was built for",
                         st->sets[set], name, form_of(v));
        for (int j = 0; j < v->n; j++) in[n++] = v->t[j];
    }
    if (n != n_in)
        return failf(st, "test_data_set_%d: the inputs hold %d tensors, the model was built for %d", st->sets[set], n,
                     n_in);
    return true;
}

static bool run_set(case_state *st, data_set *d, int set)
{
    int n_in = ts_graph_num_inputs(st->g), n_out = ts_graph_num_outputs(st->g);
    if (st->n_forms != d->n_out)
        return failf(st, "the model has %d outputs, test_data_set_%d has %d", st->n_forms, st->sets[set], d->n_out);
    ts_tensor *in[MAX_TENSORS] = {0}, *out[MAX_TENSORS] = {0};
    if (n_in > MAX_TENSORS || n_out > MAX_TENSORS) return failf(st, "the model has over %d inputs", MAX_TENSORS);
    if (!gather_inputs(st, d, set, in, n_in)) return false;
    ts_err err = {0};
    double t0 = now_ms();
    ts_status s = ts_session_run(st->s, n_in, in, n_out, out, &err);
    st->run_ms += now_ms() - t0;
    bool ok = s == TS_OK || fail_ts(st, &err);
    for (int k = 0, at = 0; ok && k < d->n_out; k++) {
        int n = ts_onnx_form_tensors(st->out_forms[k]);
        ok = n >= 0 && at + n <= n_out ? compare_output(st, k, out + at, &d->out[k]) : failf(st, "bad output form");
        at += n;
    }
    for (int k = 0; k < n_out; k++) ts_tensor_release(out[k]);
    return ok;
}

static bool run_all(case_state *st)
{
    static data_set d;   /* large: kept off the stack */
    if (!read_inputs(st) || !kinds_held(st)) return false;
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
    ts_onnx_forms_free(st->out_forms, st->n_forms);
    model_inputs_free(&st->m);
    free(st);
    return ok;
}
