/* emit_int.h — what emit_c.c (loop IR to C), emit_lanes.c (lane
 * reductions) and emit_tmpl.c (template calls) share: the emitter's state
 * and its statement and expression writers (internal to src/codegen/cpu/). */
#ifndef TS_CODEGEN_CPU_EMIT_INT_H
#define TS_CODEGEN_CPU_EMIT_INT_H

#include "codegen/cpu/emit.h"

typedef struct em {
    ts_buf *out;
    const ts_lkernel *k;
    int level;            /* current block nesting */
    int *declared;        /* by expression id: the level it was declared at, or -1 */
    uint32_t *stack;      /* declared ids, innermost last */
    int nstack, capstack;
    uint32_t nids;
    ts_status status;
    bool device;          /* a device dialect: OpenCL C, CUDA C (below) */
    bool strided;         /* thread ith runs iterations ith, ith + nth, ... (below) */
} em;

/* A dialect of the emitter: the same statements and expressions, its own
 * function opening. device: OpenCL C (codegen/opencl/) or CUDA C
 * (codegen/cuda/): no lane reductions, vector tails or streamed passes
 * (the CPU's vector-unit shapes), no table of buffer pointers, NAN/INFINITY
 * for the specials; the names the C uses (int64_t, expf, tsrt_*) come from
 * the dialect's preamble (kernels/opencl/tsrt_cl.h, kernels/cuda/tsrt_cuda.h). */
typedef struct ts_em_dialect {
    bool device;
    /* a parallel loop's share: contiguous (a CPU thread's, or a CPU
     * OpenCL device's work-item: its own cache lines) or strided (a GPU
     * thread's: neighbouring threads touch neighbouring elements, so a
     * warp's accesses coalesce) */
    bool strided;
    /* the function's opening up to its first statement: signature, the
     * buffers b0.., dims D0.., ith and nth, the tables tab0.. */
    void (*open_fn)(em *e, const ts_lkernel *k);
} ts_em_dialect;

/* What a device dialect generates: the C emitter's nodes but sort, whose
 * CPU kernel is a runtime template (emit_ops.c); dots and convs as loops
 * (the device targets plan with ts_plan_new_loops). */
bool ts_em_device_compiles(const ts_node *n);
/* Kernel k in dialect d (ts_emit_c_kernel is the C dialect). */
ts_status ts_em_kernel(ts_buf *out, const ts_lkernel *k, const ts_em_dialect *d, ts_err *err);
/* A device program: the headers named in preamble (NULL-ended), then
 * kernels[0..n) in dialect d. */
ts_status ts_em_program(ts_buf *out, const char *const *preamble, int n, ts_lkernel *const *kernels,
                        const ts_em_dialect *d, ts_err *err);
/* Append runtime header `name` (embedded at build time). */
ts_status ts_em_paste(ts_buf *out, const char *name, ts_err *err);
/* Table t's values, comma-separated INT64_C(...) literals. */
void ts_em_tab_values(em *e, int t);

/* Literals and operators (emit_expr.c): constant x in b; op's C over
 * operand texts a, b, c (result dtype rdt, operand dtype adt); a cast;
 * max/min of a float and a non-NaN constant as one comparison (false:
 * not that shape). */
void ts_em_put_const(const em *e, ts_buf *b, const ts_lx *x);
void ts_em_put_op(ts_buf *o, ts_op op, ts_dtype rdt, ts_dtype adt, const char *a, const char *b, const char *c);
void ts_em_put_cast(ts_buf *o, ts_dtype from, ts_dtype to, const char *a);
bool ts_em_clamp_by_const(ts_buf *b, const ts_lx *x, const char *a, const char *bb);

/* The C text naming x in b: a literal, a parameter, or a local declared
 * (once per function) on first use. */
void ts_em_ref(em *e, ts_buf *b, ts_lx *x, bool inline_only);
/* Forget every declared local: a new C function starts. */
void ts_em_reset(em *e);
/* The kernel's buffer pointers b0.. and dims D0.. as locals. */
void ts_em_prologue(em *e, const ts_lkernel *k);
/* The statements s (and what follows them) at the current level. */
void ts_em_stmts(em *e, const ts_ls *s);
/* Lanes of a vector float reduction: one vector of f32 (AVX-512). */
#define TS_EM_LANES 16

/* Indentation for the current level; enter a block; leave it and close
 * its brace. */
void ts_em_indent(em *e);
void ts_em_open(em *e);
void ts_em_close(em *e);
/* A loop's body one level in, then its closing brace. */
void ts_em_body(em *e, const ts_ls *body);
/* One store statement. */
void ts_em_store(em *e, const ts_ls *s);
/* The C text of acc `op` v in b (an UPDATE's combine). */
void ts_em_combine(em *e, ts_buf *b, ts_op op, ts_dtype dt, const char *acc, const char *v);
/* The vector loop s (a float reduction after stores) in lanes; false when
 * it is not one, and nothing was written (emit_lanes.c). */
bool ts_em_lane_reduction(em *e, const ts_ls *s, const char *ext);
/* A contraction kernel (k->tmpl): its functions (emit_tmpl.c). */
void ts_em_template_kernel(em *e, const ts_lkernel *k);

#endif
