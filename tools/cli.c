/* cli.c — the helpers every command of `tessera` uses: errors, option
 * parsing, files by extension. See cli.h. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- errors ------------------------------------------------------------------ */

/* Library messages are one line already; newlines are flattened to be sure. */
int fail(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    fprintf(stderr, "tessera: %s\n", msg);
    return 1;
}

ts_status cli_err(ts_err *err, ts_status code, const char *fmt, ...)
{
    if (err && err->code == TS_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

int fail_err(const ts_err *err) { return fail("%s", err->msg[0] ? err->msg : "unknown error"); }

int no_file(void) { return fail("no model file given (see tessera --help)"); }

int usage(void)
{
    fputs(cli_usage_text, stdout);
    return 0;
}

/* ---- arguments ------------------------------------------------------------------- */

static const struct {
    const char *name, *alias;
    unsigned id;
    bool flag;               /* takes no value */
} options[] = {
    {"--input", "-i", OPT_INPUT, false}, {"--output", "-o", OPT_OUTPUT, false},
    {"--repeat", NULL, OPT_REPEAT, false}, {"--passes", NULL, OPT_PASSES, false},
    {"--dump-after", NULL, OPT_DUMP, false}, {"--tests", NULL, OPT_TESTS, false},
    {"--dot", NULL, OPT_DOT, true}, {"--format", NULL, OPT_FORMAT, false},
    {"--target", NULL, OPT_TARGET, false}, {"--verbose", "-v", OPT_VERBOSE, true},
    {"--xfail", NULL, OPT_XFAIL, false}, {"--jobs", "-j", OPT_JOBS, false},
    {"--timeout", NULL, OPT_TIMEOUT, false}, {"--rtol", NULL, OPT_RTOL, false},
    {"--atol", NULL, OPT_ATOL, false}, {"--threads", NULL, OPT_THREADS, false},
    {"--fusion", NULL, OPT_FUSION, true}, {"--loops", NULL, OPT_LOOPS, true},
    {"--emit", NULL, OPT_EMIT, false}, {"--profile", NULL, OPT_PROFILE, false},
    {"--grad", NULL, OPT_GRAD, true}, {"--jvp", NULL, OPT_JVP, true}, {"--wrt", NULL, OPT_WRT, false},
    {"--shard", NULL, OPT_SHARD, false}, {"--batch", NULL, OPT_BATCH, false},
};

/* arg is `name` or `name=...`: the length of the name part, else 0. */
static size_t opt_match(const char *arg, const char *name)
{
    size_t n = name ? strlen(name) : 0;
    return n && strncmp(arg, name, n) == 0 && (arg[n] == 0 || arg[n] == '=') ? n : 0;
}

static int parse_long(const char *opt, const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < lo || n > hi)
        return fail("%s needs a whole number from %ld to %ld, got '%s'", opt, lo, hi, v);
    *out = n;
    return 0;
}

static int parse_tol(const char *opt, const char *v, double *out, bool *given)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= 0) || x > 1e6)
        return fail("%s needs a number from 0 to 1e6, got '%s'", opt, v);
    *out = x;
    *given = true;
    return 0;
}

static int parse_format(cli *c, const char *v)
{
    if (strcmp(v, "npy") == 0) c->format = FORMAT_NPY;
    else if (strcmp(v, "pb") == 0) c->format = FORMAT_PB;
    else return fail("--format is npy or pb, got '%s'", v);
    c->format_given = true;
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
    case OPT_REPEAT: return parse_long("--repeat", v, 1, 1000000, &c->repeat);
    case OPT_PASSES: c->passes = v; return 0;
    case OPT_DUMP: c->dump_after = v; return 0;
    case OPT_TESTS: c->tests_dir = v; return 0;
    case OPT_FORMAT: return parse_format(c, v);
    case OPT_TARGET: c->target = v; return 0;
    case OPT_XFAIL: c->xfail = v; return 0;
    case OPT_JOBS: return parse_long("--jobs", v, 1, 256, &c->jobs);
    case OPT_TIMEOUT: return parse_long("--timeout", v, 1, 86400, &c->timeout_s);
    case OPT_RTOL: return parse_tol("--rtol", v, &c->rtol, &c->rtol_given);
    case OPT_THREADS: return parse_long("--threads", v, 1, 1024, &c->threads);
    case OPT_BATCH: return parse_long("--batch", v, 1, 1024, &c->batch);
    case OPT_EMIT:
        if (strcmp(v, "c") != 0 && strcmp(v, "opencl") != 0 && strcmp(v, "cuda") != 0)
            return fail("--emit takes c (the cpu target's C), opencl (the opencl target's OpenCL C) or cuda (the cuda "
                        "target's CUDA C), got '%s'", v);
        c->emit = v;
        return 0;
    case OPT_PROFILE: c->profile = v; return 0;
    case OPT_WRT: c->wrt = v; return 0;
    case OPT_SHARD: {
        char *end = NULL;
        long k = strtol(v, &end, 10), n = end && *end == '/' ? strtol(end + 1, &end, 10) : 0;
        if (!end || *end || n < 1 || n > 100000 || k < 1 || k > n)
            return fail("--shard takes K/N with 1 <= K <= N (every Nth case from the Kth), got '%s'", v);
        c->shard_k = k, c->shard_n = n;
        return 0;
    }
    default: return parse_tol("--atol", v, &c->atol, &c->atol_given);
    }
}

/* argv[*i] is an option; one of `allowed` (OPT_* bits) sets c. Values come
 * as "--opt=V" or "--opt V". */
static int parse_opt(cli *c, int argc, char **argv, int *i, unsigned allowed)
{
    const char *arg = argv[*i];
    if ((allowed & OPT_JOBS) && strncmp(arg, "-j", 2) == 0 && arg[2] >= '0' && arg[2] <= '9')
        return set_opt(c, OPT_JOBS, arg + 2);   /* make's -j8 */
    for (size_t k = 0; k < sizeof options / sizeof options[0]; k++) {
        size_t n = opt_match(arg, options[k].name);
        if (!n) n = opt_match(arg, options[k].alias);
        if (!n || !(allowed & options[k].id)) continue;
        if (options[k].flag) {
            if (arg[n]) return fail("%s takes no value", options[k].name);
            if (options[k].id == OPT_DOT) c->dot = true;
            else if (options[k].id == OPT_FUSION) c->fusion = true;
            else if (options[k].id == OPT_LOOPS) c->loops = true;
            else if (options[k].id == OPT_GRAD) c->grad = true;
            else if (options[k].id == OPT_JVP) c->jvp = true;
            else c->verbose = true;
            return 0;
        }
        if (arg[n] == '=') return set_opt(c, options[k].id, arg + n + 1);
        if (*i + 1 >= argc) return fail("option '%s' needs a value (see tessera --help)", arg);
        return set_opt(c, options[k].id, argv[++*i]);
    }
    return fail("unknown option '%s' (see tessera --help)", arg);
}

int parse_args(cli *c, int argc, char **argv, unsigned allowed, int max_files)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            c->help = true;
            return 0;
        }
        if (arg[0] == '-' && arg[1]) {
            if (parse_opt(c, argc, argv, &i, allowed)) return 1;
        } else if (c->n_files < max_files && c->n_files < MAX_FILES) {
            c->files[c->n_files++] = arg;
        } else {
            return fail("unexpected argument '%s' (see tessera --help)", arg);
        }
    }
    return 0;
}

/* ---- files ------------------------------------------------------------------------ */

bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n >= e && strcmp(path + n - e, ext) == 0;
}

bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int make_dirs(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return fail("output path is too long");
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p) continue;
        char c = *p;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return fail("cannot create directory '%s': %s", buf, strerror(errno));
        *p = c;
        if (!c) break;
    }
    if (!is_dir(path)) return fail("'%s' is not a directory", path);
    return 0;
}

ts_status read_tensor_file(const char *path, ts_tensor **out, char **name, ts_err *err)
{
    if (name) *name = NULL;
    if (has_ext(path, ".pb")) return ts_onnx_read_tensor(path, out, name, err);
    return ts_npy_read(path, out, err);
}

char value_kind(const char *kind)
{
    if (!kind) return 't';
    if (strcmp(kind, "sequence") == 0) return '[';
    if (strcmp(kind, "optional") == 0) return '?';
    return 0;
}

void value_free(value *v)
{
    for (int i = 0; v->t && i < v->n; i++) ts_tensor_release(v->t[i]);
    free(v->t);
    free(v->form);
    memset(v, 0, sizeof *v);
}

/* The library's arrays (ts_mem) are copied into the CLI's (malloc): every
 * value of the CLI frees the same way. */
static ts_status adopt_value(value *v, char *form, int n, ts_tensor **t, ts_err *err)
{
    v->form = strcmp(form, "t") == 0 ? NULL : strdup(form);
    v->t = calloc((size_t)n + 1, sizeof *v->t);
    bool ok = v->t && (v->form || strcmp(form, "t") == 0);
    if (ok) {
        if (n) memcpy(v->t, t, sizeof *t * (size_t)n);
        v->n = n;
    }
    ts_onnx_value_free(form, ok ? 0 : n, t);   /* the references are v's now */
    if (ok) return TS_OK;
    value_free(v);
    return cli_err(err, TS_ERR_OOM, "out of memory");
}

ts_status read_value_file(const char *path, char kind, value *out, char **name, ts_err *err)
{
    memset(out, 0, sizeof *out);
    if (name) *name = NULL;
    if (kind == 't') {
        out->t = calloc(1, sizeof *out->t);
        if (!out->t) return cli_err(err, TS_ERR_OOM, "out of memory");
        ts_status s = read_tensor_file(path, &out->t[0], name, err);
        if (s != TS_OK) return value_free(out), s;
        out->n = 1;
        return TS_OK;
    }
    if (!has_ext(path, ".pb"))
        return cli_err(err, TS_ERR_INVALID_ARG, "%s: a %s is read from a .pb file (an ONNX %s)", path,
                          kind == '[' ? "sequence" : "optional", kind == '[' ? "SequenceProto" : "OptionalProto");
    char *form;
    int n;
    ts_tensor **t;
    CLI_TRY(ts_onnx_read_value(path, kind, &form, &n, &t, name, err));
    return adopt_value(out, form, n, t, err);
}

/* ONNX's TensorProto.DataType of bfloat16. */
enum { ONNX_BFLOAT16 = 16 };

ts_status bf16_from_u16_bits(ts_tensor **t, int declared_elem_type, ts_err *err)
{
    if (declared_elem_type != ONNX_BFLOAT16 || !*t || ts_tensor_dtype(*t) != TS_DTYPE_U16) return TS_OK;
    ts_tensor *b = NULL;
    CLI_TRY(ts_tensor_new(TS_DTYPE_BF16, ts_tensor_rank(*t), ts_tensor_shape(*t), &b, err));
    memcpy(ts_tensor_data(b), ts_tensor_data(*t), ts_tensor_nbytes(*t));
    ts_tensor_release(*t);
    *t = b;
    return TS_OK;
}

ts_status load_model(const char *path, int n_known, const char *const *names, ts_tensor *const *values,
                     ts_graph **g, ts_err *err)
{
    if (has_ext(path, ".onnx")) return ts_onnx_load(path, n_known, names, values, g, err);
    return ts_graph_load_file(path, g, err);
}

void shape_text(char *out, size_t n, ts_dtype dt, int rank, const int64_t *shape)
{
    size_t len = (size_t)snprintf(out, n, "%s[", ts_dtype_name(dt) ? ts_dtype_name(dt) : "?");
    for (int i = 0; i < rank && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (len < n) snprintf(out + len, n - len, "]");
}

void elem_text(char *out, size_t n, const ts_tensor *t, int64_t i)
{
    ts_dtype dt = ts_tensor_dtype(t);
    const void *d = ts_tensor_data(t);
    if (dt == TS_DTYPE_BOOL) snprintf(out, n, "%s", ((const uint8_t *)d)[i] ? "true" : "false");
    else if (ts_dtype_is_fp(dt) && isnan(ts_tensor_get_f64(t, i))) snprintf(out, n, "nan");  /* not "-nan" */
    else if (ts_dtype_is_fp(dt)) snprintf(out, n, "%.9g", ts_tensor_get_f64(t, i));
    else if (dt == TS_DTYPE_U64) snprintf(out, n, "%llu", (unsigned long long)ts_tensor_get_u64(t, i));
    else snprintf(out, n, "%lld", (long long)ts_tensor_get_i64(t, i));
}
