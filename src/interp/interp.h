/* interp.h — the reference interpreter: the meaning of every primitive in
 * the plainest C, and the oracle every compiled path is tested against.
 *
 * Kernels are one function per primitive, grouped by family in k_*.c. Each
 * family exports a sparse table indexed by op (designated initialisers);
 * the driver (interp.c) merges them. A kernel receives its operands as
 * dense row-major tensors and sets every out[k] to a new reference: a fresh
 * tensor from ts_interp_out/ts_interp_out_shape, or a retained existing one
 * (reshape may share its operand's data; tensors are never written after
 * they are produced). The driver then checks each result against the
 * node's declared type, binding the symbols of data-dependent sizes.
 */
#ifndef TS_INTERP_H
#define TS_INTERP_H

#include "ir/ir.h"

typedef struct ts_interp_run ts_interp_run;

typedef ts_status (*ts_interp_kernel)(ts_interp_run *r, const ts_node *n,
                                      ts_tensor *const *in, ts_tensor **out);

/* Family tables (k_*.c). */
extern const ts_interp_kernel ts_interp_elementwise[TS_OP_COUNT];
extern const ts_interp_kernel ts_interp_reduce[TS_OP_COUNT];
extern const ts_interp_kernel ts_interp_layout[TS_OP_COUNT];
extern const ts_interp_kernel ts_interp_index[TS_OP_COUNT];
extern const ts_interp_kernel ts_interp_contract[TS_OP_COUNT];
extern const ts_interp_kernel ts_interp_misc[TS_OP_COUNT];
extern const ts_interp_kernel ts_interp_control[TS_OP_COUNT];

/* The kernel of op, or NULL. */
ts_interp_kernel ts_interp_kernel_of(ts_op op);
/* True for primitives that are declared but whose single-process kernel
 * only reports TS_ERR_UNSUPPORTED (send, recv: D10 in docs/decisions.md). */
bool ts_interp_declared_only(ts_op op);

/* ---- for kernels ------------------------------------------------------- */

/* A new zeroed tensor for result k of n, shaped by its declared type under
 * the run's symbol bindings. */
ts_status ts_interp_out(ts_interp_run *r, const ts_node *n, int k, ts_tensor **out);
/* A new zeroed tensor of n's result-k dtype and an explicit shape (for
 * results whose size depends on data: nonzero). */
ts_status ts_interp_out_shape(ts_interp_run *r, const ts_node *n, int k, int rank,
                              const int64_t *shape, ts_tensor **out);
/* The value of a symbolic dim attribute under the run's bindings. */
ts_status ts_interp_dim(ts_interp_run *r, ts_dim d, int64_t *out);
/* Where kernels record errors (index out of range, ...). */
ts_err *ts_interp_err(ts_interp_run *r);
/* Whether every element of the integer tensor t lies in [0, bound): TS_OK,
 * or TS_ERR_RUNTIME "OP: index V (at position P) is out of range [0, N)"
 * for the first (row-major) that does not, exactly as gather and scatter
 * report it here. Compiled kernels that read through indices run it on
 * their index buffers before they start (D113). */
ts_status ts_interp_check_indices(const char *op, const ts_tensor *t, int64_t bound, ts_err *err);
/* Run block b on args; results[i] receive new references. */
ts_status ts_interp_block(ts_interp_run *r, const ts_block *b, int n_args,
                          ts_tensor *const *args, ts_tensor **results);

/* ---- stepping: a compiled program runs the nodes it does not generate
 * code for through these, sharing one run (the symbol bindings) with its
 * own kernels. ts_interp_run_new checks and binds the graph's inputs. */
ts_status ts_interp_run_new(const ts_graph *g, int n_in, ts_tensor *const *in, ts_err *err, ts_interp_run **out);
/* The same for a caller that has looked once whether g's body holds a
 * collective (ts_interp_has_collectives), which binds `world`: a walk over
 * every node per run cost a compiled MobileNetV2 ~1% of its time. */
ts_status ts_interp_run_new_known(const ts_graph *g, bool collectives, int n_in, ts_tensor *const *in, ts_err *err,
                                  ts_interp_run **out);
bool ts_interp_has_collectives(const ts_graph *g);
void ts_interp_run_free(ts_interp_run *r);
const ts_symbind *ts_interp_run_binds(const ts_interp_run *r);
/* Node n of g's body on operands in; out[k] receive new references; the
 * results' data-dependent dims are bound. Errors name the node. */
ts_status ts_interp_run_node(ts_interp_run *r, const ts_node *n, ts_tensor *const *in, ts_tensor **out);

/* ---- entry points -------------------------------------------------------- */

/* Run graph g: in[i] binds input i (dtype and shape are checked against the
 * declared type, binding symbols); out[k] receives a new reference to
 * output k. Thread-safe: g is only read. */
ts_status ts_interp_run_graph(const ts_graph *g, int n_in, ts_tensor *const *in,
                              int n_out, ts_tensor **out, ts_err *err);

/* Evaluate one node on concrete operands outside any graph run (constant
 * folding). The node's types must be fully constant. */
ts_status ts_interp_eval_node(ts_graph *g, const ts_node *n, ts_tensor *const *in,
                              ts_tensor **out, ts_err *err);

/* A custom op's interpreter kernel (ts_custom_op.kernel): out[] arrive
 * allocated from the declared types. */
typedef ts_status (*ts_interp_custom_fn)(const ts_node *n, ts_tensor *const *in,
                                         ts_tensor **out, ts_err *err);

#endif
