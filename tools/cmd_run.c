/* cmd_run.c — `tessera run FILE [-i [NAME=]X]... [-o DIR] [--format npy|pb]
 * [--repeat N] [--threads N] [--target T] [--passes LIST]`: bind input files
 * to the model's inputs, run the model, print or write the outputs, time
 * runs (run_timing.c).
 *
 * IR text is loaded first and its inputs bound after. An ONNX model's
 * inputs are read from the protobuf first (onnx_inputs.c), the files are
 * bound and read, and only then is the model loaded, with every input's
 * value given as known: operators that need an input as a constant (a
 * shape, axes) then build. */
#include "cli.h"

#include "ir/ir.h"
#include "passes/passes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- binding files to inputs ------------------------------------------------------
 * A slot is a name -i NAME= may bind. The first n_graph slots are the graph's
 * inputs, which positional -i values fill in order; the rest are names that
 * only NAME= binds (an ONNX initializer that is also an input, whose value
 * a file may replace). */
typedef struct slots {
    int n, n_graph;
    const char **name;       /* NULL for an unnamed IR parameter */
    const char **path;       /* the bound file, or NULL */
    ts_tensor **value;       /* its tensor, once read */
} slots;

static int slots_init(slots *s, int n, int n_graph)
{
    s->n = n;
    s->n_graph = n_graph;
    s->name = calloc((size_t)n + 1, sizeof *s->name);
    s->path = calloc((size_t)n + 1, sizeof *s->path);
    s->value = calloc((size_t)n + 1, sizeof *s->value);
    return s->name && s->path && s->value ? 0 : fail("out of memory");
}

static void slots_free(slots *s)
{
    for (int i = 0; s->value && i < s->n; i++) ts_tensor_release(s->value[i]);
    free((void *)s->name);
    free((void *)s->path);
    free(s->value);
}

static const char *slot_label(const slots *s, int i, char *buf, size_t n)
{
    if (s->name[i]) return s->name[i];
    snprintf(buf, n, "#%d", i);
    return buf;
}

/* "x, w, b": the graph inputs' names (those marked in `only`, when given). */
static void slot_names(const slots *s, char *out, size_t n, const bool *only)
{
    char tmp[32];
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; i < s->n_graph && len + 1 < n; i++) {
        if (only && !only[i]) continue;
        int w = snprintf(out + len, n - len, "%s%s", len ? ", " : "", slot_label(s, i, tmp, sizeof tmp));
        if (w > 0) len += (size_t)w;
    }
    if (!out[0]) snprintf(out, n, "none");
}

static int find_slot(const slots *s, const char *name, size_t len)
{
    for (int i = 0; i < s->n; i++)
        if (s->name[i] && strlen(s->name[i]) == len && memcmp(s->name[i], name, len) == 0) return i;
    return -1;
}

/* The '=' of a NAME=PATH spec, or NULL for a path. The text before the
 * first '=' is a name when it names a slot (ONNX names may hold '/', ':',
 * '.') or could be a value name (then an unknown one is an error); a path
 * that must contain '=' can be written ./a=b.npy. */
static const char *named_eq(const slots *s, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec) return NULL;
    size_t len = (size_t)(eq - spec);
    return find_slot(s, spec, len) >= 0 || ts_ir_name_ok(spec, len, true) ? eq : NULL;
}

static int bind_named(slots *s, const cli *c)
{
    char names[1024];
    for (int k = 0; k < c->n_specs; k++) {
        const char *spec = c->specs[k], *eq = named_eq(s, spec);
        if (!eq) continue;
        int i = find_slot(s, spec, (size_t)(eq - spec));
        if (i < 0) {
            slot_names(s, names, sizeof names, NULL);
            return fail("unknown input '%.*s' (the model's inputs: %s)", (int)(eq - spec), spec, names);
        }
        if (s->path[i]) return fail("input '%.*s' is given twice", (int)(eq - spec), spec);
        s->path[i] = eq + 1;
    }
    return 0;
}

/* Named specs first, then the positional ones in order, skipping graph
 * inputs bound by name; every graph input must end up bound. */
static int bind_inputs(slots *s, const cli *c)
{
    int next = 0;
    char names[1024];
    if (bind_named(s, c)) return 1;
    for (int k = 0; k < c->n_specs; k++) {
        if (named_eq(s, c->specs[k])) continue;
        while (next < s->n_graph && s->path[next]) next++;
        if (next == s->n_graph) {
            slot_names(s, names, sizeof names, NULL);
            return fail("too many inputs: the model takes %d (%s)", s->n_graph, names);
        }
        s->path[next++] = c->specs[k];
    }
    bool *missing = calloc((size_t)s->n_graph + 1, sizeof *missing);
    if (!missing) return fail("out of memory");
    int n_missing = 0;
    for (int i = 0; i < s->n_graph; i++) n_missing += missing[i] = s->path[i] == NULL;
    if (n_missing) slot_names(s, names, sizeof names, missing);
    free(missing);
    if (!n_missing) return 0;
    return fail("missing input%s %s: give %s with -i NAME=FILE", n_missing > 1 ? "s" : "", names,
                n_missing > 1 ? "them" : "it");
}

static int read_bound(slots *s)
{
    for (int i = 0; i < s->n; i++) {
        ts_err err = {0};
        if (s->path[i] && read_tensor_file(s->path[i], &s->value[i], NULL, &err) != TS_OK) return fail_err(&err);
    }
    return 0;
}

/* ---- checking inputs against the declared types ---------------------------------- */

static int type_mismatch(const ts_value *p, const ts_tensor *t, const char *label, const char *path,
                         const char *why)
{
    char got[256];
    ts_buf want = {0};
    ts_type_print(&want, &p->type);
    shape_text(got, sizeof got, ts_tensor_dtype(t), ts_tensor_rank(t), ts_tensor_shape(t));
    int r = fail("input '%s' (%s): expected %s, got %s%s%s", label, path, want.data ? want.data : "?", got,
                 why ? ": " : "", why ? why : "");
    ts_buf_free(&want);
    return r;
}

/* The interpreter checks too; checking here names the input and its file. */
static int check_input(const ts_graph *g, int i, const ts_tensor *t, const char *label, const char *path,
                       ts_symbind *b)
{
    const ts_value *p = g->body->params[i];
    if (ts_tensor_dtype(t) != p->type.dtype || ts_tensor_rank(t) != p->type.rank)
        return type_mismatch(p, t, label, path, NULL);
    for (int d = 0; d < p->type.rank; d++) {
        ts_err err = {0};
        if (ts_dim_match(p->type.dims[d], ts_tensor_shape(t)[d], b, &err) != TS_OK)
            return type_mismatch(p, t, label, path, ts_dim_is_const(p->type.dims[d]) ? NULL : err.msg);
    }
    return 0;
}

/* ---- outputs --------------------------------------------------------------------- */

/* Output k's name: the ONNX model's when there is one (the IR keeps only
 * names it can spell), else the graph's; NULL when it has none. */
static const char *output_name(const ts_graph *g, const model_inputs *m, int k)
{
    if (k < m->n_out && m->out_name[k][0]) return m->out_name[k];
    return ts_graph_output_name(g, k);
}

/* "output 0 (y): f32[4, 16] = [0.1, -2, ...]": up to 8 values. */
static void print_summary(const ts_graph *g, const model_inputs *m, int k, const ts_tensor *t)
{
    char shape[256], v[64];
    const char *name = output_name(g, m, k);
    shape_text(shape, sizeof shape, ts_tensor_dtype(t), ts_tensor_rank(t), ts_tensor_shape(t));
    printf("output %d", k);
    if (name) printf(" (%s)", name);
    printf(": %s = [", shape);
    int64_t n = ts_tensor_numel(t);
    for (int64_t i = 0; i < n && i < 8; i++) {
        if (ts_dtype_is_fp(ts_tensor_dtype(t)))
            snprintf(v, sizeof v, "%.6g", ts_elem_get_f64(ts_tensor_dtype(t), ts_tensor_data(t), i));
        else elem_text(v, sizeof v, t, i);
        printf("%s%s", i ? ", " : "", v);
    }
    printf("%s]", n > 8 ? ", ..." : "");
    if (n > 8) printf(" (%lld values)", (long long)n);
    printf("\n");
}

/* bf16 has no NumPy type: it is written as f32, which holds it exactly. */
static ts_status npy_compatible(ts_tensor *t, ts_tensor **out, ts_err *err)
{
    if (ts_tensor_dtype(t) != TS_DTYPE_BF16) {
        ts_tensor_retain(t);
        *out = t;
        return TS_OK;
    }
    TS_TRY(ts_tensor_new(TS_DTYPE_F32, ts_tensor_rank(t), ts_tensor_shape(t), out, err));
    for (int64_t i = 0; i < ts_tensor_numel(t); i++)
        ts_elem_set_f64(TS_DTYPE_F32, ts_tensor_data(*out), i, ts_elem_get_f64(TS_DTYPE_BF16, ts_tensor_data(t), i));
    return TS_OK;
}

static ts_status write_one(const ts_graph *g, const model_inputs *m, const char *dir, int k, ts_tensor *t,
                           out_format f, ts_err *err)
{
    char path[4200], label[32];
    snprintf(path, sizeof path, "%s/output_%d.%s", dir, k, f == FORMAT_PB ? "pb" : "npy");
    if (f == FORMAT_PB) {
        const char *name = output_name(g, m, k);
        snprintf(label, sizeof label, "output_%d", k);
        return ts_onnx_write_tensor(path, t, name ? name : label, err);
    }
    ts_tensor *w = NULL;
    ts_status s = npy_compatible(t, &w, err);
    if (s == TS_OK) s = ts_npy_write(path, w, err);
    ts_tensor_release(w);
    return s;
}

static int write_outputs(const ts_graph *g, const model_inputs *m, const cli *c, int n, ts_tensor **out)
{
    if (make_dirs(c->out_dir)) return 1;
    for (int k = 0; k < n; k++) {
        ts_err err = {0};
        if (write_one(g, m, c->out_dir, k, out[k], c->format, &err) != TS_OK) return fail_err(&err);
    }
    return 0;
}

/* ---- run ------------------------------------------------------------------------- */

static void release_all(ts_tensor **t, int n)
{
    for (int i = 0; t && i < n; i++) {
        ts_tensor_release(t[i]);
        t[i] = NULL;
    }
}

typedef struct run_state {
    ts_graph *g;
    ts_session *s;
    model_inputs m;          /* an ONNX model's declared inputs and outputs; empty for IR */
    slots sl;
    int n_in, n_out;
    ts_tensor **in, **out;   /* borrowed from sl.value / owned */
    const char **in_path;
} run_state;

static void run_free(run_state *st)
{
    release_all(st->out, st->n_out);
    free(st->in);
    free(st->out);
    free((void *)st->in_path);
    slots_free(&st->sl);
    model_inputs_free(&st->m);
    ts_session_free(st->s);
    ts_graph_free(st->g);
}

static int run_passes(ts_graph *g, const cli *c)
{
    ts_err err = {0};
    return c->passes && COMPILE_TIMED(ts_graph_run_passes(g, c->passes, &err)) != TS_OK ? fail_err(&err) : 0;
}

/* An IR model: load, then bind its parameters. */
static int prepare_ir(run_state *st, const cli *c)
{
    ts_err err = {0};
    if (COMPILE_TIMED(ts_graph_load_file(c->files[0], &st->g, &err)) != TS_OK) return fail_err(&err);
    int n = ts_graph_num_inputs(st->g);
    if (slots_init(&st->sl, n, n)) return 1;
    for (int i = 0; i < n; i++) st->sl.name[i] = ts_graph_input_name(st->g, i);
    return bind_inputs(&st->sl, c) || read_bound(&st->sl);
}

/* The library's message for a model the CLI could not pre-read (truncated,
 * not protobuf): loading it says what is wrong in the library's words. */
static int onnx_load_error(const char *path, const ts_err *pre)
{
    ts_graph *g = NULL;
    ts_err err = {0};
    if (ts_onnx_load(path, 0, NULL, NULL, &g, &err) != TS_OK) return fail_err(&err);
    ts_graph_free(g);
    return fail_err(pre);
}

/* An ONNX model: its declared inputs, then the files, then the load. */
static int prepare_onnx(run_state *st, const cli *c)
{
    model_inputs *m = &st->m;
    ts_err err = {0};
    if (model_inputs_read(c->files[0], m, &err) != TS_OK) return onnx_load_error(c->files[0], &err);
    if (slots_init(&st->sl, m->n, m->n_graph)) return 1;
    int k = 0;
    for (int i = 0; i < m->n_graph; i++) st->sl.name[k++] = m->in[m->graph[i]].name;
    for (int i = 0; i < m->n; i++)
        if (m->in[i].initializer) st->sl.name[k++] = m->in[i].name;
    if (bind_inputs(&st->sl, c) || read_bound(&st->sl)) return 1;
    const char **names = calloc((size_t)m->n + 1, sizeof *names);
    ts_tensor **vals = calloc((size_t)m->n + 1, sizeof *vals);
    int n_known = 0, r = 0;
    if (!names || !vals) r = fail("out of memory");
    for (int i = 0; !r && i < st->sl.n; i++)
        if (st->sl.value[i]) names[n_known] = st->sl.name[i], vals[n_known++] = st->sl.value[i];
    if (!r && COMPILE_TIMED(ts_onnx_load(c->files[0], n_known, names, vals, &st->g, &err)) != TS_OK)
        r = fail_err(&err);
    free((void *)names);
    free(vals);
    return r;
}

/* st->in[i] for graph input i, by name (by position for unnamed ones). */
static int gather_inputs(run_state *st)
{
    st->n_in = ts_graph_num_inputs(st->g);
    st->n_out = ts_graph_num_outputs(st->g);
    st->in = calloc((size_t)st->n_in + 1, sizeof *st->in);
    st->out = calloc((size_t)st->n_out + 1, sizeof *st->out);
    st->in_path = calloc((size_t)st->n_in + 1, sizeof *st->in_path);
    if (!st->in || !st->out || !st->in_path) return fail("out of memory");
    for (int i = 0; i < st->n_in; i++) {
        const char *name = ts_graph_input_name(st->g, i);
        int k = name ? find_slot(&st->sl, name, strlen(name)) : i;
        if (k < 0 || k >= st->sl.n || !st->sl.value[k])
            return fail("the loaded model has an input '%s' that no file binds", name ? name : "?");
        st->in[i] = st->sl.value[k];
        st->in_path[i] = st->sl.path[k];
    }
    ts_symbind b = {0};
    int r = 0;
    for (int i = 0; i < st->n_in && !r; i++) {
        char tmp[32];
        const char *name = ts_graph_input_name(st->g, i);
        r = check_input(st->g, i, st->in[i], name ? name : slot_label(&st->sl, i, tmp, sizeof tmp),
                        st->in_path[i], &b);
    }
    ts_symbind_free(&b);
    return r;
}

static int run_once_and_report(run_state *st, const cli *c)
{
    ts_err err = {0};
    if (open_session(st->g, c, &st->s, &err) != TS_OK) return fail_err(&err);
    if (ts_session_run(st->s, st->n_in, st->in, st->n_out, st->out, &err) != TS_OK) return fail_err(&err);
    if (c->out_dir) {
        if (write_outputs(st->g, &st->m, c, st->n_out, st->out)) return 1;
    } else {
        for (int k = 0; k < st->n_out; k++) print_summary(st->g, &st->m, k, st->out[k]);
    }
    release_all(st->out, st->n_out);
    return c->repeat ? timing_report(st->s, st->n_in, st->in, st->n_out, st->out, c) : 0;
}

int cmd_run(int argc, char **argv)
{
    cli c = {0};
    unsigned opts = OPT_INPUT | OPT_OUTPUT | OPT_REPEAT | OPT_PASSES | OPT_FORMAT | OPT_TARGET | OPT_THREADS;
    if (parse_args(&c, argc, argv, opts, 1)) return 1;
    if (c.repeat) timing_count_memory();   /* before the library allocates anything */
    if (c.help) return usage();
    if (!c.n_files) return no_file();
    if (c.format_given && !c.out_dir) return fail("--format chooses the files of -o DIR; give -o DIR too");
    run_state st = {0};
    int r = has_ext(c.files[0], ".onnx") ? prepare_onnx(&st, &c) : prepare_ir(&st, &c);
    if (!r) r = run_passes(st.g, &c);
    if (!r) r = gather_inputs(&st);
    if (!r) r = run_once_and_report(&st, &c);
    run_free(&st);
    return r;
}
