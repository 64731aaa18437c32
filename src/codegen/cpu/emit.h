/* emit.h — loop IR to C (emit_c.c).
 *
 * A generated translation unit is C11: the runtime headers of
 * src/kernels/cpu/ (embedded at build time) or, for contraction
 * templates compiled in a unit of their own, their interface, then one
 * function per kernel:
 *
 *     void NAME(void *const *bufs, const int64_t *D, int ith, int nth);
 *
 * bufs[i] is the kernel's buffer i (ts_lkernel.bufs), D[k] the value of its
 * run-time dim k (ts_lkernel.dims), then a template kernel's parameters
 * (ts_emit_c_params), and (ith, nth) which share of the
 * parallel loop this call runs: every ith in [0, nth) must be called once
 * for the kernel to be complete. */
#ifndef TS_CODEGEN_CPU_EMIT_H
#define TS_CODEGEN_CPU_EMIT_H

#include "lower/loop.h"

/* Append the translation unit for kernels[0..n) to out. Contraction
 * kernels call the runtime templates (tsrt_sgemm, tsrt_conv): with
 * rt_extern false the unit pastes their definitions as static functions
 * (self-contained); with rt_extern true only their interface, and the
 * definitions come from one unit of ts_emit_c_runtime linked into the
 * same shared object, so that several kernel units do not each compile
 * them again (they are most of a unit's compile time). */
ts_status ts_emit_c(ts_buf *out, int n, ts_lkernel *const *kernels, bool rt_extern, ts_err *err);
/* Append the C of kernel k alone (its functions, as ts_emit_c writes
 * them in a unit). */
ts_status ts_emit_c_kernel(ts_buf *out, const ts_lkernel *k, ts_err *err);
/* The values a template kernel's C reads from D after its run-time dims
 * (D[k->n_dims + j] = vals[j]): its constant template arguments, in
 * order; returns how many (0 for a loop kernel); vals may be NULL to
 * count. The caller passes them with the dims at every call. */
int ts_emit_c_params(const ts_lkernel *k, int64_t *vals);
/* The TS_NEEDS_* bits of kernels[0..n): which templates they call. */
int ts_emit_needs(int n, ts_lkernel *const *kernels);
/* Append the unit defining the templates `needs` asks for, with hidden
 * visibility, for the kernel units emitted with rt_extern. */
ts_status ts_emit_c_runtime(ts_buf *out, int needs, ts_err *err);
/* The C type of dt ("float", "int64_t", bool as "uint8_t"); NULL for the
 * dtypes generated code does not handle (f16, bf16, storage types). */
const char *ts_emit_ctype(ts_dtype dt);

/* Whether the emitter generates code for node n (its op and dtypes):
 * what the CPU backend answers fusion (ts_fuse_compiles_fn). */
bool ts_emit_c_compiles(const ts_node *n);

/* The embedded runtime headers (generated: build/gen/rt_sources.c). */
extern const int ts_rt_count;
extern const char *const ts_rt_names[];
extern const char *const ts_rt_texts[];

#endif
