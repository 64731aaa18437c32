/* cli.h — what the files of the `tessera` command share: the one-line error
 * convention, option parsing, loading a model by extension, reading and
 * writing tensors by extension, and the model-input list of an ONNX file.
 *
 * One file per command (cmd_run.c, cmd_ir.c, cmd_prims.c, cmd_check.c,
 * cmd_onnx.c, cmd_cache.c); tessera.c holds main and the usage text; cli.c the shared
 * helpers below; onnx_inputs.c reads an ONNX model's input list. */
#ifndef TS_CLI_H
#define TS_CLI_H

#include "tessera.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define MAX_SPECS 256
#define MAX_FILES 4096

extern const char cli_usage_text[];

/* printf-style arguments, checked by the compiler */
#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

/* ---- errors ---------------------------------------------------------------
 * fail prints "tessera: <message>" as one line on stderr and returns 1, so a
 * command writes `return fail(...)`. */
int fail(const char *fmt, ...) CLI_PRINTF(1, 2);
/* Record code and a message in *err (when it holds none yet, as the
 * library does) and return code. */
ts_status cli_err(ts_err *err, ts_status code, const char *fmt, ...) CLI_PRINTF(3, 4);
#define CLI_TRY(expr) do { ts_status cli_s_ = (expr); if (cli_s_ != TS_OK) return cli_s_; } while (0)
int fail_err(const ts_err *err);
int no_file(void);
int usage(void);

/* ---- arguments ------------------------------------------------------------ */

/* Output file formats of `run -o`. */
typedef enum { FORMAT_NPY, FORMAT_PB } out_format;

typedef struct cli {
    const char *files[MAX_FILES];   /* positional arguments, in order */
    int n_files;
    const char *specs[MAX_SPECS];   /* -i values, in order */
    int n_specs;
    const char *out_dir;
    const char *passes;
    const char *dump_after;
    const char *tests_dir;
    const char *target;
    const char *xfail;
    out_format format;
    bool format_given;
    long repeat;
    long threads;                   /* --threads; 0 when not given (every core) */
    long jobs;
    long timeout_s;
    long shard_k, shard_n;          /* check --shard K/N: every Nth case from the Kth; 0: all */
    long batch;                     /* check --batch N: cases per child process; 0: 1 */
    double rtol, atol;
    bool rtol_given, atol_given;
    bool dot;
    bool fusion, loops;              /* ir --fusion, --loops */
    bool grad, jvp;                  /* ir --grad, --jvp */
    const char *wrt;                 /* ir --wrt NAMES */
    const char *emit;               /* ir --emit LANG (c) */
    const char *profile;            /* run --profile FILE */
    bool verbose;
    bool help;
} cli;

/* The options, each a bit, so a command names the ones it takes. */
enum {
    OPT_INPUT = 1 << 0, OPT_OUTPUT = 1 << 1, OPT_REPEAT = 1 << 2, OPT_PASSES = 1 << 3,
    OPT_DUMP = 1 << 4, OPT_TESTS = 1 << 5, OPT_DOT = 1 << 6, OPT_FORMAT = 1 << 7,
    OPT_TARGET = 1 << 8, OPT_VERBOSE = 1 << 9, OPT_XFAIL = 1 << 10, OPT_JOBS = 1 << 11,
    OPT_TIMEOUT = 1 << 12, OPT_RTOL = 1 << 13, OPT_ATOL = 1 << 14, OPT_THREADS = 1 << 15,
    OPT_FUSION = 1 << 16, OPT_LOOPS = 1 << 17, OPT_EMIT = 1 << 18, OPT_PROFILE = 1 << 19,
    OPT_GRAD = 1 << 20, OPT_JVP = 1 << 21, OPT_WRT = 1 << 22, OPT_SHARD = 1 << 23, OPT_BATCH = 1 << 24
};

/* Options (those in `allowed`) and up to max_files positional arguments
 * into c. Returns 0, or 1 after printing the error. -h/--help sets c->help. */
int parse_args(cli *c, int argc, char **argv, unsigned allowed, int max_files);

/* ---- files ----------------------------------------------------------------- */

bool has_ext(const char *path, const char *ext);
bool is_dir(const char *path);
bool is_file(const char *path);
/* mkdir -p; 1 after printing the error. */
int make_dirs(const char *path);

/* A tensor file by extension: .pb is an ONNX TensorProto, anything else
 * .npy. *name (may be NULL) receives the TensorProto's name, or NULL. */
ts_status read_tensor_file(const char *path, ts_tensor **out, char **name, ts_err *err);

/* A value of an ONNX model: a tensor (form NULL, n 1) or a sequence or
 * optional (its form, tessera.h, and its tensors in order). Owned: free
 * with value_free. */
typedef struct value {
    char *form;
    int n;
    ts_tensor **t;
} value;

/* The first character of the form of a declared kind (model_input.kind):
 * 't' for a tensor (NULL), '[' a sequence, '?' an optional, 0 for what
 * tessera does not hold (maps, sparse tensors). */
char value_kind(const char *kind);
/* A value file of the given kind: a tensor by extension (as
 * read_tensor_file), a sequence or optional from a .pb file. */
ts_status read_value_file(const char *path, char kind, value *out, char **name, ts_err *err);
void value_free(value *v);

/* Older ONNX test data (before onnx 1.17) stores a bfloat16 tensor as a
 * UINT16 TensorProto of its bits, since numpy has no bfloat16. When the
 * model declares bfloat16 (declared_elem_type 16) and *t is u16, *t is
 * replaced by a bf16 tensor of the same bits (same shape); anything else
 * is left as it is. */
ts_status bf16_from_u16_bits(ts_tensor **t, int declared_elem_type, ts_err *err);

/* Load a model by extension: .onnx through the ONNX frontend (with the
 * known input values), anything else as IR text (n_known must be 0). */
ts_status load_model(const char *path, int n_known, const char *const *names, ts_tensor *const *values,
                     ts_graph **g, ts_err *err);

/* "f32[2, 3]" */
void shape_text(char *out, size_t n, ts_dtype dt, int rank, const int64_t *shape);
/* One element as text: %.9g for floats, true/false, integers. */
void elem_text(char *out, size_t n, const ts_tensor *t, int64_t i);

/* ---- the inputs an ONNX model declares --------------------------------------
 * Read (ts_onnx_signature) before the model is loaded, because ts_onnx_load
 * wants the values of some inputs by name (shape inputs) and the CLI binds
 * files by position. Graph input i of the loaded model is in[graph[i]],
 * and output k is out_name[k]: ts_graph_input_name is NULL for an ONNX
 * name that is not a valid IR name (gpu_0/data_0). */
typedef struct model_input {
    char *name;
    bool initializer;      /* also listed as an initializer (a default value) */
    const char *kind;      /* NULL for a tensor, else "sequence", "optional", "map", ... */
    int elem_type;         /* TensorProto.DataType; 0 when not a tensor */
    int rank;              /* -1 when the shape is not given */
    int64_t *dims;         /* rank entries; -1 for a symbolic or missing dim */
} model_input;

typedef struct model_inputs {
    int n;                 /* every graph.input, in order */
    model_input *in;
    int n_graph;           /* those that are not initializers: the graph's inputs */
    int *graph;            /* their indices into in[] */
    int n_out;             /* graph.output */
    char **out_name;       /* their names: the IR may not keep a name it cannot spell */
    const char **out_kind; /* as model_input.kind */
    int *out_elem_type;    /* as model_input.elem_type */
    ts_onnx_sig *sig;      /* the signature read (the kinds point into it) */
} model_inputs;

/* 0, or a ts_err message (not printed). */
ts_status model_inputs_read(const char *path, model_inputs *out, ts_err *err);
void model_inputs_free(model_inputs *m);

/* ---- run --repeat: compile time, peak memory, latency (run_timing.c) ---------
 * COMPILE_TIMED(expr) evaluates expr (a ts_status) with the compile clock
 * running (the comma operator sequences start before expr); the sum of the
 * timed phases is the compile_ms that timing_report prints. */
void timing_compile_start(void);
ts_status timing_compile_stop(ts_status s);
#define COMPILE_TIMED(expr) (timing_compile_start(), timing_compile_stop(expr))
/* Count the library's allocations from now on (call before it allocates). */
void timing_count_memory(void);
/* ts_session_new for c->target (default interp) and c->threads, timed, and
 * the memory baseline of arena_peak_bytes. */
/* --profile FILE: write the session's kernel trace (0, or 1 after an error). */
int timing_write_profile(ts_session *s, const cli *c);
ts_status open_session(const ts_graph *g, const cli *c, ts_session **s, ts_err *err);
/* c->repeat timed runs, then compile_ms, arena_peak_bytes and latency lines. */
int timing_report(ts_session *s, int n_in, ts_tensor **in, int n_out, ts_tensor **out, const cli *c);

/* ---- commands ---------------------------------------------------------------- */

int cmd_run(int argc, char **argv);
int cmd_ir(int argc, char **argv);
int cmd_prims(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_onnx_ops(int argc, char **argv);
int cmd_cache(int argc, char **argv);

#endif
