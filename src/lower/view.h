/* view.h — what fusion and lowering both ask about values and
 * contractions, below both (view.c): fusion -> view <- lowering, one way.
 *
 * A strided view (D26): element c of v is base[off + sum_i c[i] *
 * stride[i]], base a stored value, reached through transpose, reshape
 * and slice with constant dims. A contraction's operand axes fall into
 * roles (batch, contracted, free); a runtime template (tsrt_sgemm,
 * tsrt_conv) takes each role as one strided index. */
#ifndef TS_LOWER_VIEW_H
#define TS_LOWER_VIEW_H

#include "ir/ir.h"

typedef struct ts_sview {
    const ts_value *base;
    int64_t off;
    int64_t stride[TS_MAX_RANK];
} ts_sview;

/* Axes of one role of a dot operand (or result), in order. */
typedef struct ts_role {
    int n;
    int64_t ax[TS_MAX_RANK];
} ts_role;

/* Whether layout op n is plain index arithmetic over its operand, so a
 * kernel can read through it: reshape, broadcast, transpose, slice,
 * reverse, concat, and pad without interior padding (a stride test per
 * element would be needed otherwise). */
bool ts_view_op(const ts_node *n);

/* Whether v is stored (stored[v->id]), or a chain of transpose, reshape
 * and slice over a stored value with constant dims, as a strided view
 * (false: neither). */
bool ts_view_strided(const bool *stored, const ts_value *v, ts_sview *out);
/* The strides of d's axes in the row-major buffer of w, where w is a
 * chain of transpose and reshape over d: how a dot writes its result
 * straight into the layout its user stores. */
bool ts_view_into(const ts_value *d, const ts_value *w, ts_sview *out);

/* The roles of dot n's operand axes: batch, contracted and free, of the
 * lhs and the rhs. */
void ts_dot_roles(const ts_node *n, ts_role *lb, ts_role *rb, ts_role *lc, ts_role *rc, ts_role *lf, ts_role *rf);
/* The result's axes: batch, then lhs free (rows), then rhs free (columns). */
void ts_dot_result_roles(const ts_node *n, ts_role *b, ts_role *r, ts_role *cl);
/* Role r of v seen through sv: its axes of extent > 1 must form one run;
 * *ext and *stride are the merged index's (an empty role: 1 and 0). */
bool ts_view_role(const ts_value *v, const ts_sview *sv, const ts_role *r, int64_t *ext, int64_t *stride);

/* Whether a and b have equal dims (dtypes aside). */
bool ts_view_same_shape(const ts_value *a, const ts_value *b);
/* Whether a and b hold their elements in the same row-major order: the
 * same dims but for dims of 1 (a reshape between them moves nothing). */
bool ts_view_same_layout(const ts_value *a, const ts_value *b);
/* Whether v's inlined expression (values not stored[] are inlined; v
 * itself is computed) reads w only at v's own coordinates: through
 * elementwise nodes of v's shape, any other path never reaching w. *hit:
 * whether it reads w at all. seen: one byte per node id, zeroed by the
 * caller. Fusion merges loop kernels on it (D116), lowering splits a
 * nest by a concat's parts (D114). */
bool ts_view_reads_aligned(const bool *stored, const ts_value *v, const ts_value *w, unsigned char *seen, bool *hit);

/* Whether contraction n (dot, conv) runs as a runtime template (f32, and
 * for dot, axes that merge into one strided index per role). */
bool ts_contract_template(const ts_node *n);
/* Whether operand i of template dot n, seen through sv, has each of its
 * roles as one strided index. */
bool ts_dot_operand_strided(const ts_node *n, int i, const ts_sview *sv);
/* Whether template dot n's result, with its axes at strides sv, is one
 * GEMM output: batch, rows and columns each one strided index, the
 * columns of unit stride. */
bool ts_dot_result_strided(const ts_node *n, const ts_sview *sv);

#endif
