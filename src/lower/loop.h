/* loop.h — the loop IR: what one compiled kernel does, before it is C.
 *
 * A kernel is a list of statements over buffers. Statements are loops
 * (a variable counting over [0, extent)), stores of a scalar expression
 * at an index, and accumulators (declared with an identity, updated with
 * an associative op, read after their loop). Expressions are scalar trees
 * over loop variables, run-time dims (D[k], resolved per launch, so sizes
 * can change without recompiling), constants and loads. Expressions are
 * hash-consed: building the same expression twice gives the same node,
 * which is how the emitter finds common subexpressions and hoists
 * loop-invariant ones.
 *
 * Schedules are transformations of this tree (lower/sched.c): which loop
 * is split across threads, which is the vector loop. Everything lives in
 * one arena owned by the kernel set (ts_lprog).
 */
#ifndef TS_LOWER_LOOP_H
#define TS_LOWER_LOOP_H

#include "ir/ir.h"

typedef enum ts_lxk {
    TS_LX_CONST,   /* c: the value (ints exact up to 2^53; bits for others in ci) */
    TS_LX_VAR,     /* loop variable `var` (i64) */
    TS_LX_DIM,     /* run-time dim D[var] (i64) */
    TS_LX_LOAD,    /* buf[a0]: a0 is the element index (i64) */
    TS_LX_OP,      /* primitive `op` (elementwise) on a0..a2, result dtype dt */
    TS_LX_CAST,    /* a0 converted to dt by the cast primitive's rules */
    TS_LX_GUARD,   /* a0 ? a1 : a2, evaluating only the branch taken (bounds) */
    TS_LX_ACC,     /* the current value of accumulator `var` */
    TS_LX_IDIV,    /* a0 / a1, i64, both >= 0 (index arithmetic) */
    TS_LX_IMOD,    /* a0 % a1, i64, both >= 0 */
    TS_LX_PARAM,   /* a template epilogue's block parameter `var` (P0..P5), i64 */
    TS_LX_TAB,     /* the kernel's table `var` at a0: tabs[var].v[a0] (i64) */
    TS_LX_LOADI    /* bufs[a1][a0]: a load from the buffer numbered a1 (a TAB), a0 the index */
} ts_lxk;

typedef struct ts_lx ts_lx;
struct ts_lx {
    ts_lxk k;
    ts_dtype dt;
    ts_op op;
    int var;              /* VAR, DIM, LOAD (buffer), ACC; OP: TS_LXH_* facts about the operands */
    double c;             /* CONST */
    int64_t ci;           /* CONST of an integer dtype: the exact value */
    ts_lx *a[3];
    uint32_t id;          /* creation order: a topological order */
    int depth;            /* deepest loop variable it uses + 1; 0 if none */
    bool index;           /* i64 index arithmetic (never overflows): plain C operators */
    ts_lx *next_hash;
};

/* Facts about an OP's operands the lowering proved (ts_lx.var); the
 * emitter may pick a cheaper exact form. */
enum {
    TS_LXH_ARG_NONPOS = 1   /* a0 <= 0 or NaN (exp(x - max x) in softmax): no overflow */
};

typedef enum ts_lsk {
    TS_LS_FOR,      /* for var in [0, extent): body */
    TS_LS_STORE,    /* buf[index] = value */
    TS_LS_ACC,      /* declare accumulator var of dtype dt = init */
    TS_LS_UPDATE,   /* acc var = op(acc, value) */
    TS_LS_PREFETCH, /* a hint: buf[index] will be read soon (may lie past the buffer: never read) */
    TS_LS_STREAM    /* buf[index .. index + extent) = the row scratch, past the caches (D50) */
} ts_lsk;

/* Schedule marks on a loop. */
enum {
    TS_LOOP_PARALLEL = 1,   /* its range is split across (ith, nth) */
    TS_LOOP_VECTOR = 2      /* the innermost, contiguous loop: keep it simple for the vectorizer */
};

typedef struct ts_ls ts_ls;
struct ts_ls {
    ts_lsk k;
    int var;              /* FOR: loop variable; ACC/UPDATE: accumulator */
    int depth;            /* FOR: its nesting depth (1 = outermost) */
    int flags;            /* FOR: TS_LOOP_* */
    int collapse;         /* FOR, PARALLEL: how many perfectly nested loops (this one
                             included) share the one range split across threads */
    ts_lx *extent;        /* FOR; STREAM: the row's length */
    ts_ls *body;          /* FOR: first statement inside */
    int buf;              /* STORE, PREFETCH, STREAM */
    ts_lx *index, *value; /* STORE, PREFETCH, STREAM: index; UPDATE: value; ACC: value = the init */
    ts_op op;             /* UPDATE: add, mul, max, min */
    ts_dtype dt;          /* ACC */
    ts_ls *next;
};

/* A kernel's buffer: a materialized value of the graph. */
typedef struct ts_lbuf {
    const ts_value *v;    /* the graph value it holds */
    ts_dtype dt;
    bool written;         /* an output of this kernel */
    int64_t off;          /* elements the runtime adds to its base at each launch (D189) */
} ts_lbuf;

/* An index buffer a kernel reads through (gather): every element must
 * lie in [0, bound), which the runtime checks before the kernel starts,
 * so the kernel's loads stay in bounds and an error is the primitive's
 * own run-time error (D113). */
typedef struct ts_lcheck {
    int buf;
    ts_lx *bound;         /* over D, like any extent */
    const ts_node *node;  /* the gather: its error names it as the interpreter's does */
} ts_lcheck;

/* A table of i64 constants a kernel indexes (TS_LX_TAB): what differs
 * between the nests a rolled loop runs (lower/roll.c, D132). */
typedef struct ts_ltab {
    int n;
    const int64_t *v;
} ts_ltab;

typedef struct ts_lkernel {
    char name[32];
    int n_bufs;
    ts_lbuf *bufs;
    int n_dims;
    ts_dim *dims;         /* D[k]: evaluated by the runtime before each launch */
    int n_vars, n_accs;
    ts_ls *body;
    const char *what;     /* a short description for listings ("softmax row", "add+exp") */
    int needs;            /* TS_NEEDS_*: runtime headers beyond scalar.h */
    int64_t rowtmp;       /* ROW: floats of the per-thread row scratch TS_LBUF_ROWTMP (0: none) */
    struct ts_ltmpl *tmpl;   /* a contraction template call instead of body, or NULL */
    int n_checks;
    ts_lcheck *checks;    /* run before the kernel, in order */
    bool serial;          /* no loop split across threads: its loops depend on each other (scatter) */
    int n_tabs;
    ts_ltab *tabs;        /* TS_LX_TAB's tables */
} ts_lkernel;

enum { TS_NEEDS_GEMM = 1, TS_NEEDS_CONV = 2, TS_NEEDS_SORT = 4 };

/* A contraction kernel calls a runtime template (kernels/cpu/): its
 * arguments are expressions over D, its epilogue a loop body run on each
 * finished block of the output, with block parameters P0..P5 = m0, n0,
 * mb, nb, rs, cs and the block itself as buffer TS_LBUF_BLOCK. A sort
 * calls the runtime's lane sort (tsrt_sort.h) the same way: a = x, b =
 * the values, c = the positions; args outer, len, inner, descending. */
typedef enum ts_tmpl_kind { TS_TMPL_GEMM, TS_TMPL_CONV, TS_TMPL_SORT } ts_tmpl_kind;
enum { TS_LBUF_BLOCK = -1, TS_LBUF_TEROW = -2, TS_LBUF_TECOL = -3, TS_TMPL_MAX_ARGS = 24 };
/* A row kernel's scratch row (ts_lkernel.rowtmp floats, indexed from the
 * row's start): a large output's row is built there and streamed out. */
enum { TS_LBUF_ROWTMP = -4 };

typedef struct ts_ltmpl {
    ts_tmpl_kind kind;
    int a, b, c;                    /* buffers: lhs or x, rhs or weights, the output */
    int n_args;                     /* GEMM: m n k a_rs a_cs b_rs b_cs c_rs batch a_bs b_bs c_bs */
    ts_lx *arg[TS_TMPL_MAX_ARGS];   /* CONV: n c h w o kh kw oh ow groups sh sw ph pw dh dw lh lw [y_bs] */
    ts_ls *epi;                     /* NULL: no epilogue */
    /* GEMM: B is a constant, one for every product of the batch, so the
     * runtime packs it once per program (NAME_pack) and passes the packed
     * copy as the extra buffer bufs[n_bufs] (D26). */
    bool prepack_b;
    int64_t a_off, b_off;           /* GEMM: elements from the buffer's start (operands read as views) */
    /* CONV: the epilogue began with a per-output-channel affine chain over
     * constants (a batch norm); its scale is folded into a copy of the
     * constant weights, made once per program (NAME_pack, passed as
     * bufs[n_bufs]) as w[o][...] * s[o], s[o] = the chain's mul/div
     * operands at channel o in order (D30); the epilogue adds the shift. */
    bool prepack_w;
    /* CONV: constant weights of a shape that may take a prepared form
     * (3x3 stride 1: Winograd's transform, D38; one group: GEMM_T's W^T
     * panels, D41), which the runtime makes once per program when the
     * shape takes it (tsrt_conv_pre), in the same packed buffer as the
     * scaled copy (emit_tmpl.c's conv_pack_fns: a header, the prepared
     * weights, the scaled ones). */
    bool prepack_pre;
    int n_wscale;
    struct {
        ts_op op;                   /* TS_OP_MUL or TS_OP_DIV (by the operand) */
        int buf;                    /* the constant's buffer, or -1: a splat, whose value is `lit` */
        bool chan;                  /* one element per output channel; else a scalar */
        float lit;
    } wscale[8];
    int64_t w_rows, w_cols;         /* the weights as rows (output channels) x the rest */
    /* The epilogue as data (tsrt_tepi, D32), when all of it is
     *   ((block + row) + col) + residual, then max by lo, then min by hi
     * (any of them absent): the runtime applies it to each tile in
     * registers. The row and column terms are tabulated at each launch by
     * te_fill (stores into TS_LBUF_TEROW / TS_LBUF_TECOL, te_rows and
     * te_cols elements); the residual is buffer te_res read at
     * te_res_off + r * te_res_rs + q. epi stays in the IR (--loops prints
     * it) but is not emitted: every runtime path applies te, then
     * te->rest. */
    bool te;
    ts_ls *te_fill;
    ts_lx *te_rows, *te_cols;       /* NULL: no such table */
    int te_res;                     /* -1: none */
    ts_lx *te_res_off, *te_res_rs;
    int te_clamp;                   /* TSRT_TE_* bits (1 max, 2 min, 4 max by +0) */
    float te_lo, te_hi;
    /* The epilogue only began with the terms (D138): te_rest is what
     * follows them, the loops of epi with the terms' sum read back from
     * the block, a function of the element alone (the runtime's
     * tsrt_tepi.rest); epi stays whole. NULL: te is all of it. */
    ts_ls *te_rest;
} ts_ltmpl;

/* A builder of kernels; owns the arena and the hash-consing table. */
typedef struct ts_lprog ts_lprog;

ts_status ts_lprog_new(ts_lprog **out, ts_err *err);
void ts_lprog_free(ts_lprog *p);
ts_arena *ts_lprog_arena(ts_lprog *p);
/* How many expressions the program has made: every node's id is below. */
uint32_t ts_lprog_n_exprs(const ts_lprog *p);

/* ---- expressions (NULL in, NULL out: failures surface at ts_lprog_status) */
ts_lx *ts_lx_const(ts_lprog *p, ts_dtype dt, double v);
ts_lx *ts_lx_int(ts_lprog *p, int64_t v);                 /* an i64 constant */
ts_lx *ts_lx_iconst(ts_lprog *p, ts_dtype dt, int64_t v); /* an integer constant of dt (u64: the bits) */
ts_lx *ts_lx_var(ts_lprog *p, int var, int depth);        /* loop variable at nesting depth */
ts_lx *ts_lx_load(ts_lprog *p, ts_dtype dt, int buf, ts_lx *index);
ts_lx *ts_lx_op(ts_lprog *p, ts_op op, ts_dtype dt, ts_lx *a, ts_lx *b, ts_lx *c);
/* ts_lx_op with TS_LXH_* facts (0: none); rebuilding an OP keeps x->var. */
ts_lx *ts_lx_op_hint(ts_lprog *p, ts_op op, ts_dtype dt, ts_lx *a, ts_lx *b, ts_lx *c, int hints);
ts_lx *ts_lx_cast(ts_lprog *p, ts_lx *a, ts_dtype dt);
ts_lx *ts_lx_guard(ts_lprog *p, ts_lx *cond, ts_lx *a, ts_lx *b);
ts_lx *ts_lx_acc(ts_lprog *p, ts_dtype dt, int acc, int depth);
ts_lx *ts_lx_param(ts_lprog *p, int k);                   /* block parameter P<k> */
/* i64 index arithmetic, folded when operands are constants */
ts_lx *ts_lx_add(ts_lprog *p, ts_lx *a, ts_lx *b);
ts_lx *ts_lx_mul(ts_lprog *p, ts_lx *a, ts_lx *b);
ts_lx *ts_lx_sub(ts_lprog *p, ts_lx *a, ts_lx *b);
ts_lx *ts_lx_idiv(ts_lprog *p, ts_lx *a, ts_lx *b);
ts_lx *ts_lx_imod(ts_lprog *p, ts_lx *a, ts_lx *b);
ts_lx *ts_lx_lt(ts_lprog *p, ts_lx *a, ts_lx *b);         /* bool a < b */
ts_lx *ts_lx_and(ts_lprog *p, ts_lx *a, ts_lx *b);        /* bool a && b */
bool ts_lx_is_int(const ts_lx *x, int64_t v);
/* tabs[tab].v[index] (i64), and a load of dtype dt from buffer number
 * `buf` (an i64 expression: a TAB) at index. */
ts_lx *ts_lx_tab(ts_lprog *p, int tab, ts_lx *index);
ts_lx *ts_lx_loadi(ts_lprog *p, ts_dtype dt, ts_lx *buf, ts_lx *index);
/* x with operands a[0..3) (and, for VAR and ACC, nesting depth `depth`),
 * hash-consed like any node; nothing folded. */
ts_lx *ts_lx_rebuild(ts_lprog *p, const ts_lx *x, ts_lx *const *a, int depth);

/* ---- statements and kernels */
ts_ls *ts_ls_new(ts_lprog *p, ts_lsk k);
ts_lkernel *ts_lkernel_new(ts_lprog *p, const char *what);
/* D[k] for dim d in kernel k (constants become constants). */
ts_lx *ts_lkernel_dim(ts_lprog *p, ts_lkernel *k, ts_dim d);
/* The buffer index of value v in kernel k (added on first use). */
int ts_lkernel_buf(ts_lprog *p, ts_lkernel *k, const ts_value *v, bool written);
/* Check buffer buf's elements against [0, bound) before k runs (once per
 * buffer and bound). */
void ts_lkernel_check(ts_lprog *p, ts_lkernel *k, int buf, ts_lx *bound, const ts_node *node);
/* The index of a table of k holding v[0..n) (an equal one is shared), or
 * -1 when out of memory. */
int ts_lkernel_tab(ts_lprog *p, ts_lkernel *k, const int64_t *v, int n);

ts_status ts_lprog_status(const ts_lprog *p, ts_err *err);
/* Takes a constant term common to every access of a buffer out of the
 * kernel's indices into ts_lbuf.off (offsets.c, D189): for a backend
 * that binds each buffer at base + off. */
ts_status ts_lkernel_hoist_offsets(ts_lprog *p, ts_lkernel *k, ts_err *err);
void ts_lprog_fail(ts_lprog *p, ts_status s, const char *fmt, ...) TS_PRINTF(3, 4);

/* The text form of a kernel's loops (for `tessera ir --loops` and tests). */
void ts_lkernel_print(ts_buf *b, const ts_lkernel *k);

#endif
