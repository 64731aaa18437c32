/* fuse.h — the fusion pass: which values of a graph's body are stored in
 * memory ("materialized") and which are recomputed inside the kernels
 * that use them, and the kernels (groups) that result, in execution order.
 *
 * A group is one of:
 *   LOOP      computes one materialized value with a loop nest; elementwise
 *             and layout producers that are not materialized are inlined
 *             into it as expressions (layout ops become index arithmetic);
 *   REDUCE    a reduction whose input expression is inlined the same way;
 *   ROW       reductions over the trailing axes of one iteration space and
 *             the elementwise values that use them, in one kernel with an
 *             outer loop over rows (softmax, layer norm: one pass per row
 *             while the row is in cache);
 *   DOT/CONV  a contraction, with the elementwise chain that consumes only
 *             its result fused in as an epilogue;
 *   FALLBACK  a node the compiler does not generate code for, run by the
 *             reference interpreter's kernel (sort, scatter,
 *             half-precision types, ...);
 *   CONTROL   an if or while the backend compiles: each region is a
 *             program of its own (its body fused like any body), which
 *             the backend's runtime runs as the node says (D115);
 *   CALL      a node the backend runs as a call of its runtime library
 *             over stored operands (sort, D117).
 */
#ifndef TS_LOWER_FUSE_H
#define TS_LOWER_FUSE_H

#include "ir/ir.h"
#include "lower/view.h"

typedef enum ts_gkind { TS_G_LOOP, TS_G_REDUCE, TS_G_ROW, TS_G_DOT, TS_G_CONV, TS_G_FALLBACK, TS_G_CONTROL, TS_G_CALL } ts_gkind;

typedef struct ts_group {
    ts_gkind kind;
    const ts_node *root;       /* LOOP/REDUCE/DOT/CONV/FALLBACK: the node computed */
    int n_out;                 /* values it writes (materialized) */
    const ts_value **out;
    int n_nodes;               /* nodes it covers, in graph order (for listings) */
    const ts_node **nodes;
    const ts_value *epilogue;  /* DOT/CONV: the value written after the epilogue, or NULL */
    const ts_value *row_space; /* ROW: a value of the iteration space S = O + I */
    int row_inner;             /* ROW: how many trailing axes of S are I (reduced) */
} ts_group;

/* A backend's answer to "do you generate code for node n?" (its op and
 * dtypes); a node it does not is a FALLBACK group. */
typedef bool (*ts_fuse_compiles_fn)(const ts_node *n);

typedef struct ts_fusion {
    ts_arena *arena;
    const ts_graph *g;
    ts_fuse_compiles_fn compiles;
    bool templates;            /* the target calls the runtime's contraction templates (the CPU) */
    bool *mat;                 /* by value id: materialized */
    int *uses;                 /* by value id: operand uses in the body (+1 per result use) */
    const ts_value **epi;      /* by node id, for template contractions: the value their epilogue ends at */
    const ts_value **cout;     /* by node id, template dots: a stored layout of the result written in place (D26), or NULL */
    /* Concats without a copy (fuse_concat.c, D114): by value id, the
     * stored concat an input is written straight into, at into_off
     * elements from its start (NULL: none); `placed` lists those concats,
     * which no kernel computes. */
    const ts_value **into;
    int64_t *into_off;
    int n_placed;
    const ts_value **placed;
    int n_groups;
    ts_group *groups;
} ts_fusion;

/* Partition g's body; compiles(n) says per node whether the backend
 * generates code for it (else FALLBACK); templates, whether its code
 * calls the runtime's contraction templates (the CPU's GEMM and conv
 * kernels: a template contraction takes an epilogue, reads layout chains
 * in place) or takes every dot as plain loops (the device dialects). */
ts_status ts_fuse(const ts_graph *g, ts_fuse_compiles_fn compiles, bool templates, ts_fusion **out, ts_err *err);
/* Whether contraction n is a template call in f: f->templates and
 * ts_contract_template(n). */
bool ts_fuse_template(const ts_fusion *f, const ts_node *n);
void ts_fusion_free(ts_fusion *f);
/* The partition in words (`tessera ir --fusion`). */
void ts_fusion_print(ts_buf *b, const ts_fusion *f);
/* Row fusion (fuse_row.c), run by ts_fuse: merges runs of groups that
 * reduce the trailing axes of one iteration space into ROW groups. */
ts_status ts_fuse_rows(ts_fusion *f, ts_err *err);
/* Concat placement (fuse_concat.c), run by ts_fuse after row fusion: a
 * stored concat of static shape whose inputs are each written by a
 * kernel and read by nothing else loses its copy kernel; the inputs'
 * kernels write into it (f->into), at its strides where the parts are
 * not contiguous (D125). */
ts_status ts_fuse_concats(ts_fusion *f, ts_err *err);
/* Whether x, an input of concat n, can be written by its kernel at the
 * concat's strides (decided from the nodes, before the groups exist). */
bool ts_concat_part_strided(const ts_fusion *f, const ts_node *n, const ts_value *x);
/* Loop merging (fuse_multi.c), run after concat placement: a LOOP group
 * storing w followed at once by a LOOP group of w's shape that reads w
 * only at its own coordinates become one LOOP group writing both (out =
 * w, then the other value; D116). */
ts_status ts_fuse_multi(ts_fusion *f, ts_err *err);

#endif
