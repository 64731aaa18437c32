/* tessera.c — the command-line driver.
 *
 *   tessera run FILE [-i [NAME=]X.npy]... [-o DIR] [--repeat N] [--passes LIST]
 *   tessera ir FILE [--passes LIST] [--dump-after NAME] [--dot]
 *   tessera prims [--tests DIR]
 *   tessera version
 *
 * docs/cli.md is the manual. Every user error ends the process with status 1
 * and one line "tessera: <message>" on stderr; nothing here aborts. `run`
 * and `ir` go through the public API; `prims` and `--dot` read the IR's own
 * tables, which is why this file also includes internal headers. */
#include "tessera.h"

#include "interp/interp.h"
#include "ir/ir.h"
#include "passes/passes.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifndef TS_SOURCE_DIR
#define TS_SOURCE_DIR "."
#endif

#define MAX_SPECS 256

static const char usage_text[] =
    "usage: tessera <command> [options]\n"
    "\n"
    "commands:\n"
    "  run FILE [-i [NAME=]X.npy]... [-o DIR] [--repeat N] [--passes LIST]\n"
    "      Run a model on .npy inputs with the reference interpreter. Inputs bind\n"
    "      by name (NAME=) or by position. Outputs go to DIR/output_K.npy with -o,\n"
    "      else a summary is printed. --repeat N times N runs after a warm-up.\n"
    "  ir FILE [--passes LIST] [--dump-after NAME] [--dot]\n"
    "      Print the model's IR after the passes: canonical text, or Graphviz.\n"
    "      --passes help lists the passes.\n"
    "  prims [--tests DIR]\n"
    "      List the primitives: arity, attributes, flags, interpreter kernel and\n"
    "      the number of test cases under DIR.\n"
    "  version\n"
    "      Print the version.\n"
    "\n"
    "FILE is IR text (docs/ir.md). Exit status: 0 on success, 1 on any error.\n";

/* ---- errors ---------------------------------------------------------------- */

/* Print "tessera: <message>" as one line on stderr and return 1. Library
 * messages are one line already; newlines are flattened to be sure. */
static int fail(const char *fmt, ...) TS_PRINTF(1, 2);
static int fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    fprintf(stderr, "tessera: %s\n", msg);
    return 1;
}

static int fail_err(const ts_err *err) { return fail("%s", err->msg[0] ? err->msg : "unknown error"); }

/* ---- arguments ------------------------------------------------------------- */

typedef struct cli {
    const char *file;
    const char *specs[MAX_SPECS];   /* -i values, in order */
    int n_specs;
    const char *out_dir;
    const char *passes;
    const char *dump_after;
    const char *tests_dir;
    long repeat;
    bool dot;
    bool help;
} cli;

/* The options, each a bit, so a command names the ones it takes. */
enum {
    OPT_INPUT = 1 << 0, OPT_OUTPUT = 1 << 1, OPT_REPEAT = 1 << 2, OPT_PASSES = 1 << 3,
    OPT_DUMP = 1 << 4, OPT_TESTS = 1 << 5, OPT_DOT = 1 << 6
};

static const struct {
    const char *name, *alias;
    unsigned id;
} options[] = {
    {"--input", "-i", OPT_INPUT}, {"--output", "-o", OPT_OUTPUT}, {"--repeat", NULL, OPT_REPEAT},
    {"--passes", NULL, OPT_PASSES}, {"--dump-after", NULL, OPT_DUMP}, {"--tests", NULL, OPT_TESTS},
    {"--dot", NULL, OPT_DOT},
};

/* arg is `name` or `name=...`: the length of the name part, else 0. */
static size_t opt_match(const char *arg, const char *name)
{
    size_t n = name ? strlen(name) : 0;
    return n && strncmp(arg, name, n) == 0 && (arg[n] == 0 || arg[n] == '=') ? n : 0;
}

static int parse_repeat(const char *v, long *out)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < 1 || n > 1000000)
        return fail("--repeat needs a whole number from 1 to 1000000, got '%s'", v);
    *out = n;
    return 0;
}

static int set_opt(cli *c, unsigned id, const char *v)
{
    switch (id) {
    case OPT_INPUT:
        if (c->n_specs == MAX_SPECS) return fail("over %d inputs", MAX_SPECS);
        c->specs[c->n_specs++] = v;
        return 0;
    case OPT_OUTPUT: c->out_dir = v; return 0;
    case OPT_REPEAT: return parse_repeat(v, &c->repeat);
    case OPT_PASSES: c->passes = v; return 0;
    case OPT_DUMP: c->dump_after = v; return 0;
    default: c->tests_dir = v; return 0;
    }
}

/* argv[*i] is an option; one of `allowed` (OPT_* bits) sets c. Values come
 * as "--opt=V" or "--opt V". */
static int parse_opt(cli *c, int argc, char **argv, int *i, unsigned allowed)
{
    const char *arg = argv[*i];
    for (size_t k = 0; k < sizeof options / sizeof options[0]; k++) {
        size_t n = opt_match(arg, options[k].name);
        if (!n) n = opt_match(arg, options[k].alias);
        if (!n || !(allowed & options[k].id)) continue;
        if (options[k].id == OPT_DOT) {
            if (arg[n]) return fail("--dot takes no value");
            c->dot = true;
            return 0;
        }
        if (arg[n] == '=') return set_opt(c, options[k].id, arg + n + 1);
        if (*i + 1 >= argc) return fail("option '%s' needs a value (see tessera --help)", arg);
        return set_opt(c, options[k].id, argv[++*i]);
    }
    return fail("unknown option '%s' (see tessera --help)", arg);
}

/* Options and, for commands that take one (takes_file), one FILE. */
static int parse_args(cli *c, int argc, char **argv, unsigned allowed, bool takes_file)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            c->help = true;
            return 0;
        }
        if (arg[0] == '-' && arg[1]) {
            if (parse_opt(c, argc, argv, &i, allowed)) return 1;
        } else if (!c->file && takes_file) {
            c->file = arg;
        } else {
            return fail("unexpected argument '%s' (see tessera --help)", arg);
        }
    }
    return 0;
}

static int no_file(void) { return fail("no model file given (see tessera --help)"); }

/* ---- loading ----------------------------------------------------------------- */

static bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n >= e && strcmp(path + n - e, ext) == 0;
}

/* The one place a frontend is chosen: by extension, IR text otherwise. The
 * ONNX frontend joins here. */
static int load_model(const char *path, ts_graph **g)
{
    ts_err err = {0};
    if (has_ext(path, ".onnx"))
        return fail("%s: ONNX models are not supported yet; give the model as IR text (.ir)", path);
    if (ts_graph_load_file(path, g, &err) != TS_OK) return fail_err(&err);
    return 0;
}

static int list_passes(void)
{
    int n;
    const ts_pass *p = ts_pass_table(&n);
    printf("passes, in pipeline order (\"default\" runs them all to a fixed point):\n");
    for (int i = 0; i < n; i++) printf("  %s\n", p[i].name);
    return 0;
}

static int run_passes(ts_graph *g, const cli *c)
{
    ts_err err = {0};
    ts_status s = TS_OK;
    if (c->dump_after)
        s = ts_graph_run_passes_dump(g, c->passes ? c->passes : "default", c->dump_after, stdout, &err);
    else if (c->passes)
        s = ts_graph_run_passes(g, c->passes, &err);
    return s == TS_OK ? 0 : fail_err(&err);
}

/* ---- binding inputs ------------------------------------------------------------ */

static const char *input_label(const ts_graph *g, int i, char *buf, size_t n)
{
    const char *name = ts_graph_input_name(g, i);
    if (name) return name;
    snprintf(buf, n, "#%d", i);
    return buf;
}

/* "x, w, b": the graph's input names, for messages. */
static void input_names(const ts_graph *g, char *out, size_t n, const bool *only_missing)
{
    char tmp[32];
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; i < ts_graph_num_inputs(g) && len + 1 < n; i++) {
        if (only_missing && !only_missing[i]) continue;
        int w = snprintf(out + len, n - len, "%s%s", len ? ", " : "", input_label(g, i, tmp, sizeof tmp));
        if (w > 0) len += (size_t)w;
    }
    if (!out[0]) snprintf(out, n, "none");
}

/* NAME=PATH when the text before '=' could be a value name; a path that
 * must contain '=' can be written ./a=b.npy. */
static const char *spec_name_end(const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !ts_ir_name_ok(spec, (size_t)(eq - spec), true)) return NULL;
    return eq;
}

static int find_input(const ts_graph *g, const char *name, size_t len)
{
    for (int i = 0; i < ts_graph_num_inputs(g); i++) {
        const char *nm = ts_graph_input_name(g, i);
        if (nm && strlen(nm) == len && memcmp(nm, name, len) == 0) return i;
    }
    return -1;
}

static int bind_named(const ts_graph *g, const cli *c, const char **paths)
{
    char names[512];
    for (int k = 0; k < c->n_specs; k++) {
        const char *spec = c->specs[k], *eq = spec_name_end(spec);
        if (!eq) continue;
        int i = find_input(g, spec, (size_t)(eq - spec));
        if (i < 0) {
            input_names(g, names, sizeof names, NULL);
            return fail("unknown input '%.*s' (the model's inputs: %s)", (int)(eq - spec), spec, names);
        }
        if (paths[i]) return fail("input '%.*s' is given twice", (int)(eq - spec), spec);
        paths[i] = eq + 1;
    }
    return 0;
}

/* paths[i] receives the file of graph input i: named ones first, then the
 * positional ones in order, skipping inputs bound by name. */
static int bind_inputs(const ts_graph *g, const cli *c, const char **paths)
{
    int n = ts_graph_num_inputs(g), next = 0;
    char names[512];
    if (bind_named(g, c, paths)) return 1;
    for (int k = 0; k < c->n_specs; k++) {
        if (spec_name_end(c->specs[k])) continue;
        while (next < n && paths[next]) next++;
        if (next == n) {
            input_names(g, names, sizeof names, NULL);
            return fail("too many inputs: the model takes %d (%s)", n, names);
        }
        paths[next++] = c->specs[k];
    }
    bool missing[MAX_SPECS] = {0};
    int n_missing = 0;
    for (int i = 0; i < n; i++) n_missing += missing[i] = paths[i] == NULL;
    if (!n_missing) return 0;
    input_names(g, names, sizeof names, missing);
    return fail("missing input%s %s: give %s with -i NAME=FILE.npy", n_missing > 1 ? "s" : "", names,
                n_missing > 1 ? "them" : "it");
}

/* ---- checking inputs against the declared types ---------------------------------- */

static void shape_text(char *out, size_t n, ts_dtype dt, int rank, const int64_t *shape)
{
    size_t len = (size_t)snprintf(out, n, "%s[", ts_dtype_name(dt) ? ts_dtype_name(dt) : "?");
    for (int i = 0; i < rank && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (len < n) snprintf(out + len, n - len, "]");
}

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
static int check_input(const ts_graph *g, int i, const ts_tensor *t, const char *path, ts_symbind *b)
{
    const ts_value *p = g->body->params[i];
    char tmp[32];
    const char *label = input_label(g, i, tmp, sizeof tmp);
    if (ts_tensor_dtype(t) != p->type.dtype || ts_tensor_rank(t) != p->type.rank)
        return type_mismatch(p, t, label, path, NULL);
    for (int d = 0; d < p->type.rank; d++) {
        ts_err err = {0};
        if (ts_dim_match(p->type.dims[d], ts_tensor_shape(t)[d], b, &err) != TS_OK)
            return type_mismatch(p, t, label, path, ts_dim_is_const(p->type.dims[d]) ? NULL : err.msg);
    }
    return 0;
}

static int load_inputs(const ts_graph *g, const char **paths, ts_tensor **in)
{
    ts_symbind b = {0};
    int r = 0;
    for (int i = 0; i < ts_graph_num_inputs(g) && !r; i++) {
        ts_err err = {0};
        if (ts_npy_read(paths[i], &in[i], &err) != TS_OK) r = fail_err(&err);
        else r = check_input(g, i, in[i], paths[i], &b);
    }
    ts_symbind_free(&b);
    return r;
}

/* ---- outputs --------------------------------------------------------------------- */

static void print_elem(const ts_tensor *t, int64_t i)
{
    ts_dtype dt = ts_tensor_dtype(t);
    const void *d = ts_tensor_data(t);
    if (dt == TS_DTYPE_BOOL) printf("%s", ((const uint8_t *)d)[i] ? "true" : "false");
    else if (ts_dtype_is_float(dt)) printf("%.6g", ts_elem_get_f64(dt, d, i));
    else if (dt == TS_DTYPE_U64) printf("%llu", (unsigned long long)ts_elem_get_u64(dt, d, i));
    else printf("%lld", (long long)ts_elem_get_i64(dt, d, i));
}

/* "output 0 (y): f32[4, 16] = [0.1, -2, ...]": up to 8 values. */
static void print_summary(const ts_graph *g, int k, const ts_tensor *t)
{
    char shape[256];
    const char *name = ts_graph_output_name(g, k);
    shape_text(shape, sizeof shape, ts_tensor_dtype(t), ts_tensor_rank(t), ts_tensor_shape(t));
    printf("output %d", k);
    if (name) printf(" (%s)", name);
    printf(": %s = [", shape);
    int64_t n = ts_tensor_numel(t);
    for (int64_t i = 0; i < n && i < 8; i++) {
        if (i) printf(", ");
        print_elem(t, i);
    }
    printf("%s]", n > 8 ? ", ..." : "");
    if (n > 8) printf(" (%lld values)", (long long)n);
    printf("\n");
}

/* mkdir -p: every missing directory of path. */
static int make_dirs(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return fail("output path is too long");
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p) continue;
        char c = *p;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return fail("cannot create directory '%s': %s", buf, strerror(errno));
        *p = c;
        if (!c) break;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return fail("'%s' is not a directory", path);
    return 0;
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

static int write_outputs(const char *dir, int n, ts_tensor **out)
{
    if (make_dirs(dir)) return 1;
    for (int k = 0; k < n; k++) {
        char path[4200];
        ts_err err = {0};
        ts_tensor *w = NULL;
        snprintf(path, sizeof path, "%s/output_%d.npy", dir, k);
        ts_status s = npy_compatible(out[k], &w, &err);
        if (s == TS_OK) s = ts_npy_write(path, w, &err);
        ts_tensor_release(w);
        if (s != TS_OK) return fail_err(&err);
    }
    return 0;
}

/* ---- timing ---------------------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void release_all(ts_tensor **t, int n)
{
    for (int i = 0; i < n; i++) {
        ts_tensor_release(t[i]);
        t[i] = NULL;
    }
}

/* --repeat: N timed runs (the warm-up already happened); the median. */
static int time_runs(ts_session *s, int n_in, ts_tensor **in, int n_out, ts_tensor **out, long repeat)
{
    double *ms = malloc(sizeof *ms * (size_t)repeat);
    if (!ms) return fail("out of memory");
    int r = 0;
    for (long i = 0; i < repeat && !r; i++) {
        ts_err err = {0};
        double t0 = now_ms();
        ts_status st = ts_session_run(s, n_in, in, n_out, out, &err);
        ms[i] = now_ms() - t0;
        if (st != TS_OK) r = fail_err(&err);
        release_all(out, n_out);
    }
    if (!r) {
        qsort(ms, (size_t)repeat, sizeof *ms, cmp_double);
        double med = repeat % 2 ? ms[repeat / 2] : (ms[repeat / 2 - 1] + ms[repeat / 2]) / 2;
        printf("latency median_ms=%.3f min_ms=%.3f runs=%ld\n", med, ms[0], repeat);
    }
    free(ms);
    return r;
}

/* ---- run ------------------------------------------------------------------------- */

typedef struct run_state {
    ts_graph *g;
    ts_session *s;
    int n_in, n_out;
    ts_tensor **in, **out;
    const char **paths;
} run_state;

static void run_free(run_state *st)
{
    release_all(st->in, st->in ? st->n_in : 0);
    release_all(st->out, st->out ? st->n_out : 0);
    free(st->in);
    free(st->out);
    free((void *)st->paths);
    ts_session_free(st->s);
    ts_graph_free(st->g);
}

static int run_once_and_report(run_state *st, const cli *c)
{
    ts_err err = {0};
    if (ts_session_new(st->g, "interp", &st->s, &err) != TS_OK) return fail_err(&err);
    if (ts_session_run(st->s, st->n_in, st->in, st->n_out, st->out, &err) != TS_OK) return fail_err(&err);
    if (c->out_dir) {
        if (write_outputs(c->out_dir, st->n_out, st->out)) return 1;
    } else {
        for (int k = 0; k < st->n_out; k++) print_summary(st->g, k, st->out[k]);
    }
    release_all(st->out, st->n_out);
    return c->repeat ? time_runs(st->s, st->n_in, st->in, st->n_out, st->out, c->repeat) : 0;
}

static int cmd_run(int argc, char **argv)
{
    cli c = {0};
    if (parse_args(&c, argc, argv, OPT_INPUT | OPT_OUTPUT | OPT_REPEAT | OPT_PASSES, true)) return 1;
    if (c.help) return fputs(usage_text, stdout), 0;
    if (!c.file) return no_file();
    run_state st = {0};
    int r = load_model(c.file, &st.g);
    if (!r) r = run_passes(st.g, &c);
    if (!r) {
        st.n_in = ts_graph_num_inputs(st.g);
        st.n_out = ts_graph_num_outputs(st.g);
        st.in = calloc((size_t)st.n_in + 1, sizeof *st.in);
        st.out = calloc((size_t)st.n_out + 1, sizeof *st.out);
        st.paths = calloc((size_t)st.n_in + 1, sizeof *st.paths);
        if (!st.in || !st.out || !st.paths) r = fail("out of memory");
        else if (st.n_in > MAX_SPECS) r = fail("the model has over %d inputs", MAX_SPECS);
    }
    if (!r) r = bind_inputs(st.g, &c, st.paths);
    if (!r) r = load_inputs(st.g, st.paths, st.in);
    if (!r) r = run_once_and_report(&st, &c);
    run_free(&st);
    return r;
}

/* ---- ir and --dot ------------------------------------------------------------------ */

static void dot_value(FILE *f, const ts_value *v)
{
    if (v->name) fprintf(f, "%%%s", v->name);
    else fprintf(f, "%%%u", v->id);
}

static void dot_endpoint(FILE *f, const ts_value *v)
{
    if (v->def) fprintf(f, "n%u", v->def->id);
    else fprintf(f, "v%u", v->id);
}

static void dot_type(FILE *f, const ts_type *t)
{
    ts_buf b = {0};
    ts_type_print(&b, t);
    fputs(b.data ? b.data : "?", f);
    ts_buf_free(&b);
}

static void dot_indent(FILE *f, int depth)
{
    for (int i = 0; i < depth; i++) fputs("  ", f);
}

/* The return/yield node of a block: "ret" for the body, y<owner>_<region>
 * for a region. */
static void dot_result_id(FILE *f, const ts_block *b)
{
    if (!b->parent) {
        fputs("ret", f);
        return;
    }
    int r = 0;
    while (r + 1 < b->parent->n_regions && b->parent->regions[r] != b) r++;
    fprintf(f, "y%u_%d", b->parent->id, r);
}

static void dot_decls(FILE *f, const ts_block *b, int depth);

static void dot_node(FILE *f, const ts_node *n, int depth)
{
    const ts_op_info *info = ts_op_get(n->op);
    dot_indent(f, depth);
    fprintf(f, "n%u [label=\"%s", n->id, info->name);
    for (int k = 0; k < n->n_out; k++) {
        fputs("\\n", f);
        dot_type(f, &n->out[k]->type);
    }
    fputs(n->op == TS_OP_CONST ? "\", style=filled, fillcolor=\"#eeeeee\"];\n" : "\"];\n", f);
    for (int r = 0; r < n->n_regions; r++) {
        dot_indent(f, depth);
        fprintf(f, "subgraph cluster_n%u_%d {\n", n->id, r);
        dot_indent(f, depth + 1);
        fprintf(f, "label=\"%s %s\"; style=dashed;\n", info->name, r < info->n_regions ? info->region_names[r] : "?");
        dot_decls(f, n->regions[r], depth + 1);
        dot_indent(f, depth);
        fputs("}\n", f);
    }
}

/* Declarations only: an edge that names a node inside a cluster statement
 * would pull that node into the cluster, so edges come after, at the top. */
static void dot_decls(FILE *f, const ts_block *b, int depth)
{
    for (int i = 0; i < b->n_params; i++) {
        dot_indent(f, depth);
        fprintf(f, "v%u [shape=ellipse, label=\"", b->params[i]->id);
        dot_value(f, b->params[i]);
        fputs("\\n", f);
        dot_type(f, &b->params[i]->type);
        fputs("\"];\n", f);
    }
    for (const ts_node *n = b->first; n; n = n->next) dot_node(f, n, depth);
    dot_indent(f, depth);
    dot_result_id(f, b);
    fprintf(f, " [shape=ellipse, label=\"%s\"];\n", b->parent ? "yield" : "return");
}

static void dot_edge(FILE *f, const ts_value *v, void (*to)(FILE *, const void *), const void *dest)
{
    fputs("  ", f);
    dot_endpoint(f, v);
    fputs(" -> ", f);
    to(f, dest);
    fputs(" [label=\"", f);
    dot_value(f, v);
    fputs("\"];\n", f);
}

static void to_node(FILE *f, const void *n) { fprintf(f, "n%u", ((const ts_node *)n)->id); }
static void to_result(FILE *f, const void *b) { dot_result_id(f, b); }

static void dot_edges(FILE *f, const ts_block *b)
{
    for (const ts_node *n = b->first; n; n = n->next) {
        for (int i = 0; i < n->n_in; i++) dot_edge(f, n->in[i], to_node, n);
        for (int r = 0; r < n->n_regions; r++) {
            dot_edges(f, n->regions[r]);
            fputs("  ", f);
            dot_result_id(f, n->regions[r]);
            fprintf(f, " -> n%u [style=dashed];\n", n->id);
        }
    }
    for (int i = 0; i < b->n_results; i++) dot_edge(f, b->results[i], to_result, b);
}

static void print_dot(FILE *f, const ts_graph *g)
{
    fputs("digraph \"", f);
    for (const char *p = g->name ? g->name : "graph"; *p; p++)
        if (*p != '"' && *p != '\\') fputc(*p, f);
    fputs("\" {\n  node [shape=box, fontname=\"monospace\"];\n  edge [fontname=\"monospace\", fontsize=10];\n", f);
    dot_decls(f, g->body, 1);
    dot_edges(f, g->body);
    fputs("}\n", f);
}

static int print_text(const ts_graph *g)
{
    char *text = NULL;
    ts_err err = {0};
    if (ts_graph_to_text(g, &text, &err) != TS_OK) return fail_err(&err);
    fputs(text, stdout);
    ts_free_string(text);
    return 0;
}

static int cmd_ir(int argc, char **argv)
{
    cli c = {0};
    if (parse_args(&c, argc, argv, OPT_PASSES | OPT_DUMP | OPT_DOT, true)) return 1;
    if (c.help) return fputs(usage_text, stdout), 0;
    if (c.passes && strcmp(c.passes, "help") == 0) return list_passes();
    if (!c.file) return no_file();
    ts_graph *g = NULL;
    int r = load_model(c.file, &g);
    if (!r) r = run_passes(g, &c);
    if (!r && c.dump_after && !c.dot) printf("# final\n");
    if (!r) r = c.dot ? (print_dot(stdout, g), 0) : print_text(g);
    ts_graph_free(g);
    return r;
}

/* ---- prims ------------------------------------------------------------------------- */

static void flags_text(unsigned fl, char *out, size_t n)
{
    static const char *const names[] = {"ew", "comm", "cmp", "reduce", "layout", "control", "side", "fresh"};
    size_t len = 0;
    out[0] = 0;
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (fl & (1u << i)) len += (size_t)snprintf(out + len, n - len, "%s%s", len ? "," : "", names[i]);
    if (!len) snprintf(out, n, "-");
}

static void arity_text(const ts_op_info *info, char *out, size_t n)
{
    if (info->max_in < 0) snprintf(out, n, "%d+", info->min_in);
    else if (info->max_in == info->min_in) snprintf(out, n, "%d", info->min_in);
    else snprintf(out, n, "%d-%d", info->min_in, info->max_in);
}

/* Attributes as the table declares them, then the regions. */
static void print_schema(const ts_op_info *info)
{
    printf("%s", info->schema_text[0] ? info->schema_text : "-");
    for (int r = 0; r < info->n_regions; r++)
        printf("%s%s", r ? "," : "  regions: ", info->region_names[r]);
}

/* counts is NULL when the test tree is not there. */
static void print_prims(const int *counts)
{
    int with_kernel = 0, with_tests = 0, cases = 0;
    printf("%-22s %-5s %-4s %-18s %-6s %5s  %s\n", "primitive", "in", "out", "flags", "interp", "tests", "attributes");
    for (int op = 0; op < TS_OP_COUNT; op++) {
        const ts_op_info *info = ts_op_get((ts_op)op);
        char arity[16], out[8], flags[80], tests[16];
        arity_text(info, arity, sizeof arity);
        snprintf(out, sizeof out, info->n_out < 0 ? "var" : "%d", info->n_out);
        flags_text(info->flags, flags, sizeof flags);
        snprintf(tests, sizeof tests, counts ? "%d" : "?", counts ? counts[op] : 0);
        bool k = ts_interp_kernel_of((ts_op)op) != NULL;
        bool declared = ts_interp_declared_only((ts_op)op);
        with_kernel += k && !declared;
        with_tests += counts && counts[op] > 0;
        cases += counts ? counts[op] : 0;
        printf("%-22s %-5s %-4s %-18s %-6s %5s  ", info->name, arity, out, flags,
               declared ? "decl" : k ? "yes" : "no", tests);
        print_schema(info);
        printf("\n");
    }
    printf("total: %d primitives, %d in the interpreter (decl: declared only, needs a multi-process runtime), ",
           TS_OP_COUNT, with_kernel);
    if (counts) printf("%d with test cases (%d case files)\n", with_tests, cases);
    else printf("test cases not counted (no test tree)\n");
}

static int cmd_prims(int argc, char **argv)
{
    cli c = {0};
    if (parse_args(&c, argc, argv, OPT_TESTS, false)) return 1;
    if (c.help) return fputs(usage_text, stdout), 0;
    const char *dir = c.tests_dir ? c.tests_dir : TS_SOURCE_DIR "/tests";
    int counts[TS_OP_COUNT] = {0};
    ts_err err = {0};
    struct stat st;
    bool present = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
    /* An installed binary may have no source tree beside it: that is only
     * an error when the user named the directory. */
    if (!present && c.tests_dir) return fail("test directory '%s' does not exist", dir);
    if (present && ts_ir_count_op_cases(dir, counts, &err) < 0) return fail_err(&err);
    print_prims(present ? counts : NULL);
    return 0;
}

/* ---- main ---------------------------------------------------------------------------- */

static int cmd_version(int argc, char **argv)
{
    if (argc > 0 && strcmp(argv[0], "--help") && strcmp(argv[0], "-h"))
        return fail("unexpected argument '%s' (see tessera --help)", argv[0]);
    printf("tessera %s\n", TESSERA_VERSION);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {
        {"run", cmd_run}, {"ir", cmd_ir}, {"prims", cmd_prims}, {"version", cmd_version},
        {"--version", cmd_version},
    };
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 2, argv + 2);
    return fail("unknown command '%s' (commands: run, ir, prims, version; see tessera --help)", argv[1]);
}
