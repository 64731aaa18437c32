/* cmd_run.c — `tessera run FILE [-i [NAME=]X]... [-o DIR] [--format npy|pb]
 * [--repeat N] [--threads N] [--target T] [--passes LIST]`: bind input files
 * to the model's inputs, run the model, print or write the outputs, time
 * runs (run_timing.c).
 *
 * IR text is loaded first and its inputs bound after. An ONNX model's
 * inputs are read from the protobuf first (onnx_inputs.c), the files are
 * bound and read, and only then is the model loaded, with every input's
 * value given as known: operators that need an input as a constant (a
 * shape, axes) then build. A sequence or optional input is read from a
 * SequenceProto or OptionalProto .pb file and its tensors become graph
 * inputs in order; a sequence or optional output is written as one such
 * .pb file, or as one .npy file per tensor (docs/cli.md). */
#include "cli.h"


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
    char *kind;              /* what the file holds: value_kind() of the declared type */
    value *value;            /* its value, once read (n 0 before) */
} slots;

static int slots_init(slots *s, int n, int n_graph)
{
    s->n = n;
    s->n_graph = n_graph;
    s->name = calloc((size_t)n + 1, sizeof *s->name);
    s->path = calloc((size_t)n + 1, sizeof *s->path);
    s->kind = malloc((size_t)n + 1);
    s->value = calloc((size_t)n + 1, sizeof *s->value);
    if (s->kind) memset(s->kind, 't', (size_t)n + 1);
    return s->name && s->path && s->kind && s->value ? 0 : fail("out of memory");
}

static void slots_free(slots *s)
{
    for (int i = 0; s->value && i < s->n; i++) value_free(&s->value[i]);
    free((void *)s->name);
    free((void *)s->path);
    free(s->kind);
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
    return find_slot(s, spec, len) >= 0 || ts_ir_name_valid(spec, len) ? eq : NULL;
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
        char tmp[32];
        if (!s->path[i]) continue;
        if (!s->kind[i])
            return fail("input '%s' is a map or a sparse tensor: tessera holds tensors, sequences and optionals",
                        slot_label(s, i, tmp, sizeof tmp));
        if (read_value_file(s->path[i], s->kind[i], &s->value[i], NULL, &err) != TS_OK) return fail_err(&err);
    }
    return 0;
}

/* ---- outputs --------------------------------------------------------------------- */

typedef struct run_state {
    ts_graph *g;
    ts_session *s;
    model_inputs m;          /* an ONNX model's declared inputs and outputs; empty for IR */
    slots sl;
    int n_in, n_out;
    ts_tensor **in, **out;   /* borrowed from sl.value / owned */
    const char **in_path;
    int n_forms;             /* an ONNX model's outputs and their forms; 0 and NULL for IR */
    char **forms;
} run_state;

/* Output k's form: each output of an IR graph is a tensor. */
static const char *out_form(const run_state *st, int k) { return st->forms ? st->forms[k] : "t"; }
static int out_count(const run_state *st) { return st->forms ? st->n_forms : st->n_out; }

/* Output k's name: the ONNX model's when there is one (the IR keeps only
 * names it can spell), else the graph's; NULL when it has none. */
static const char *output_name(const run_state *st, int k)
{
    if (k < st->m.n_out && st->m.out_name[k][0]) return st->m.out_name[k];
    return st->forms ? NULL : ts_graph_output_name(st->g, k);
}

/* "LABEL: f32[4, 16] = [0.1, -2, ...]": up to 8 values. */
static void print_tensor(const char *label, const ts_tensor *t)
{
    char shape[256], v[64];
    shape_text(shape, sizeof shape, ts_tensor_dtype(t), ts_tensor_rank(t), ts_tensor_shape(t));
    printf("%s: %s = [", label, shape);
    int64_t n = ts_tensor_numel(t);
    for (int64_t i = 0; i < n && i < 8; i++) {
        if (ts_dtype_is_fp(ts_tensor_dtype(t)))
            snprintf(v, sizeof v, "%.6g", ts_tensor_get_f64(t, i));
        else elem_text(v, sizeof v, t, i);
        printf("%s%s", i ? ", " : "", v);
    }
    printf("%s]", n > 8 ? ", ..." : "");
    if (n > 8) printf(" (%lld values)", (long long)n);
    printf("\n");
}

/* "output 0 (y): f32[2] = [...]", or for a sequence or optional its form
 * and then one line per tensor. */
static void print_output(const run_state *st, int k, ts_tensor *const *t)
{
    char label[300];
    const char *name = output_name(st, k), *form = out_form(st, k);
    int len = snprintf(label, sizeof label, "output %d", k);
    if (name && len > 0) snprintf(label + len, sizeof label - (size_t)len, " (%s)", name);
    if (strcmp(form, "t") == 0) {
        print_tensor(label, t[0]);
        return;
    }
    int n = ts_onnx_form_tensors(form);
    printf("%s: %s (%s of %d tensor%s)\n", label, form, form[0] == '[' ? "a sequence" : "an optional", n,
           n == 1 ? "" : "s");
    for (int j = 0; j < n; j++) {
        snprintf(label, sizeof label, "  tensor %d", j);
        print_tensor(label, t[j]);
    }
}

/* bf16 has no NumPy type: it is written as f32, which holds it exactly. */
static ts_status npy_compatible(ts_tensor *t, ts_tensor **out, ts_err *err)
{
    if (ts_tensor_dtype(t) != TS_DTYPE_BF16) {
        ts_tensor_retain(t);
        *out = t;
        return TS_OK;
    }
    CLI_TRY(ts_tensor_new(TS_DTYPE_F32, ts_tensor_rank(t), ts_tensor_shape(t), out, err));
    for (int64_t i = 0; i < ts_tensor_numel(t); i++)
        ts_tensor_set_f64(*out, i, ts_tensor_get_f64(t, i));
    return TS_OK;
}

static ts_status write_npy(const char *path, ts_tensor *t, ts_err *err)
{
    ts_tensor *w = NULL;
    ts_status s = npy_compatible(t, &w, err);
    if (s == TS_OK) s = ts_npy_write(path, w, err);
    ts_tensor_release(w);
    return s;
}

/* Output k (its tensors t): DIR/output_K.pb (a TensorProto, or a
 * SequenceProto / OptionalProto), DIR/output_K.npy, or for a sequence or
 * optional in npy DIR/output_K_J.npy for each of its tensors J. */
static ts_status write_one(const run_state *st, const char *dir, int k, ts_tensor *const *t, out_format f,
                           ts_err *err)
{
    char path[4200], label[32];
    const char *form = out_form(st, k);
    bool tensor = strcmp(form, "t") == 0;
    if (f == FORMAT_PB) {
        const char *name = output_name(st, k);
        snprintf(path, sizeof path, "%s/output_%d.pb", dir, k);
        snprintf(label, sizeof label, "output_%d", k);
        return ts_onnx_write_value(path, form, ts_onnx_form_tensors(form), t, name ? name : label, err);
    }
    if (tensor) {
        snprintf(path, sizeof path, "%s/output_%d.npy", dir, k);
        return write_npy(path, t[0], err);
    }
    for (int j = 0; j < ts_onnx_form_tensors(form); j++) {
        snprintf(path, sizeof path, "%s/output_%d_%d.npy", dir, k, j);
        CLI_TRY(write_npy(path, t[j], err));
    }
    return TS_OK;
}

/* Calls fn for each output k with its tensors (the graph outputs from its
 * first on). */
static int each_output(const run_state *st, int (*fn)(const run_state *, int, ts_tensor *const *, const cli *),
                       const cli *c)
{
    for (int k = 0, at = 0; k < out_count(st); k++) {
        int n = ts_onnx_form_tensors(out_form(st, k));
        if (n < 0 || at + n > st->n_out) return fail("output %d has a bad form", k);
        if (fn(st, k, st->out + at, c)) return 1;
        at += n;
    }
    return 0;
}

static int write_output(const run_state *st, int k, ts_tensor *const *t, const cli *c)
{
    ts_err err = {0};
    return write_one(st, c->out_dir, k, t, c->format, &err) != TS_OK ? fail_err(&err) : 0;
}

static int show_output(const run_state *st, int k, ts_tensor *const *t, const cli *c)
{
    print_output(st, k, t);
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

static void run_free(run_state *st)
{
    release_all(st->out, st->n_out);
    free(st->in);
    free(st->out);
    free((void *)st->in_path);
    slots_free(&st->sl);
    ts_onnx_forms_free(st->forms, st->n_forms);
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

/* The index in m->in of the k-th initializer that is also an input (the
 * slots after the graph inputs, in order). */
static int initializer_index(const model_inputs *m, int k)
{
    for (int i = 0; i < m->n; i++)
        if (m->in[i].initializer && k-- == 0) return i;
    return 0;
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
    for (int i = 0; i < m->n_graph; i++) st->sl.kind[i] = value_kind(m->in[m->graph[i]].kind);
    if (bind_inputs(&st->sl, c) || read_bound(&st->sl)) return 1;
    for (int i = 0; i < st->sl.n; i++) {
        value *v = &st->sl.value[i];
        const model_input *in = &m->in[i < m->n_graph ? m->graph[i] : initializer_index(m, i - m->n_graph)];
        if (!v->form && v->n == 1 && has_ext(st->sl.path[i], ".pb") &&
            bf16_from_u16_bits(&v->t[0], in->elem_type, &err) != TS_OK)
            return fail_err(&err);
    }
    int n_values = 0;
    for (int i = 0; i < st->sl.n; i++) n_values += st->sl.value[i].n;
    const char **names = calloc((size_t)m->n + 1, sizeof *names), **forms = calloc((size_t)m->n + 1, sizeof *forms);
    ts_tensor **vals = calloc((size_t)n_values + 1, sizeof *vals);
    int n_known = 0, r = 0, at = 0;
    if (!names || !forms || !vals) r = fail("out of memory");
    for (int i = 0; !r && i < st->sl.n; i++) {
        const value *v = &st->sl.value[i];
        if (!v->t) continue;   /* not given */
        names[n_known] = st->sl.name[i];
        forms[n_known++] = v->form;
        for (int j = 0; j < v->n; j++) vals[at++] = v->t[j];
    }
    if (!r && COMPILE_TIMED(ts_onnx_load_forms(c->files[0], n_known, names, forms, at, vals, &st->g, &st->n_forms,
                                               &st->forms, &err)) != TS_OK)
        r = fail_err(&err);
    free((void *)names);
    free((void *)forms);
    free(vals);
    return r;
}

/* st->in: the tensors of the graph-input slots in order (a sequence or
 * optional gives all of its tensors, at its place), with labels for
 * messages ("x", or "x[1]" for tensor 1 of x). */
static int gather_inputs(run_state *st, char (*label)[300])
{
    int i = 0;
    for (int k = 0; k < st->sl.n_graph; k++) {
        const value *v = &st->sl.value[k];
        char tmp[32];
        const char *name = slot_label(&st->sl, k, tmp, sizeof tmp);
        if (!v->t) return fail("the loaded model has an input '%s' that no file binds", name);
        for (int j = 0; j < v->n; j++, i++) {
            if (i == st->n_in) return fail("input '%s' holds more tensors than the model takes", name);
            st->in[i] = v->t[j];
            st->in_path[i] = st->sl.path[k];
            if (v->form) snprintf(label[i], sizeof label[i], "%s[%d]", name, j);
            else snprintf(label[i], sizeof label[i], "%s", name);
        }
    }
    return i == st->n_in ? 0 : fail("the inputs hold %d tensors, the loaded model takes %d", i, st->n_in);
}

/* Bind the graph's inputs and check them against its types. */
static int bind_graph_inputs(run_state *st)
{
    st->n_in = ts_graph_num_inputs(st->g);
    st->n_out = ts_graph_num_outputs(st->g);
    st->in = calloc((size_t)st->n_in + 1, sizeof *st->in);
    st->out = calloc((size_t)st->n_out + 1, sizeof *st->out);
    st->in_path = calloc((size_t)st->n_in + 1, sizeof *st->in_path);
    char (*label)[300] = calloc((size_t)st->n_in + 1, sizeof *label);
    int r = !st->in || !st->out || !st->in_path || !label ? fail("out of memory") : gather_inputs(st, label);
    /* the session checks too; checking here names the input and its file */
    ts_err err = {0};
    int bad = -1;
    if (!r && ts_graph_check_inputs(st->g, st->n_in, st->in, &bad, &err) != TS_OK)
        r = bad >= 0 ? fail("input '%s' (%s): %s", label[bad], st->in_path[bad], err.msg) : fail_err(&err);
    free(label);
    return r;
}

static int run_once_and_report(run_state *st, const cli *c)
{
    ts_err err = {0};
    if (open_session(st->g, c, &st->s, &err) != TS_OK) return fail_err(&err);
    if (ts_session_run(st->s, st->n_in, st->in, st->n_out, st->out, &err) != TS_OK) return fail_err(&err);
    if (c->out_dir && make_dirs(c->out_dir)) return 1;
    if (each_output(st, c->out_dir ? write_output : show_output, c)) return 1;
    release_all(st->out, st->n_out);
    return c->repeat ? timing_report(st->s, st->n_in, st->in, st->n_out, st->out, c) : 0;
}

int cmd_run(int argc, char **argv)
{
    cli c = {0};
    unsigned opts = OPT_INPUT | OPT_OUTPUT | OPT_REPEAT | OPT_PASSES | OPT_FORMAT | OPT_TARGET | OPT_THREADS | OPT_PROFILE;
    if (parse_args(&c, argc, argv, opts, 1)) return 1;
    if (c.repeat) timing_count_memory();   /* before the library allocates anything */
    if (c.help) return usage();
    if (!c.n_files) return no_file();
    if (c.format_given && !c.out_dir) return fail("--format chooses the files of -o DIR; give -o DIR too");
    run_state st = {0};
    int r = has_ext(c.files[0], ".onnx") ? prepare_onnx(&st, &c) : prepare_ir(&st, &c);
    if (!r) r = run_passes(st.g, &c);
    if (!r) r = bind_graph_inputs(&st);
    if (!r) r = run_once_and_report(&st, &c);
    if (!r) r = timing_write_profile(st.s, &c);
    run_free(&st);
    return r;
}
