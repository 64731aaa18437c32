/* seq.h — ONNX sequences and optionals in the frontend (decision D17).
 *
 * tessera's IR has tensors only. An ONNX sequence or optional is a
 * frontend notion, a *composite*: its structure (a sequence's length, an
 * optional's presence) is known when the model is built, and its leaves are
 * ordinary tensor values of the graph. Operators on composites rebuild
 * lists at load time (ops_sequence.c); control flow that carries them is
 * unrolled (unroll.c) or inlined.
 *
 * A composite travels where values do (scopes, node inputs and outputs,
 * function arguments) as a placeholder ts_value that belongs to no block:
 * it has no def, no param_of and the dtype TS_DTYPE_COUNT. onnx_comp_of
 * tells it apart. It never reaches the builder: node.c refuses it for
 * every operator that does not take composites, subgraph captures take its
 * leaves, and graph inputs and outputs are its leaves, in order.
 *
 * At the boundary a composite is spelled as a *form* (tessera.h): "t" a
 * tensor, "[F,F]" a sequence, "?" an empty optional, "?F" a full one. */
#ifndef TS_ONNX_SEQ_H
#define TS_ONNX_SEQ_H

#include "frontend/onnx/load.h"

typedef enum onnx_comp_kind { ONNX_COMP_SEQ, ONNX_COMP_OPT } onnx_comp_kind;

typedef struct onnx_comp {
    ts_value v;               /* the placeholder; first, so &comp->v converts back */
    onnx_comp_kind kind;
    int count;                /* elements; an optional has 0 (empty) or 1 */
    ts_value **elems;         /* tensors or composites (graph arena) */
    ts_dtype dtype;           /* a sequence's element dtype if known, else TS_DTYPE_COUNT */
} onnx_comp;

/* Sequences longer than this are refused: every element is a value (and,
 * when unrolled, a copy of a loop body). */
#define ONNX_MAX_SEQ 4096
/* Nodes one load may build by inlining bodies again and again (unrolled
 * loops, SequenceMap), so that nested unrolling stays bounded. */
#define ONNX_MAX_INLINED (1 << 18)
/* Elements of all the lists one load builds (each edit copies its list:
 * a loop growing a list of n builds n*n/2). */
#define ONNX_MAX_LISTED (1 << 24)

/* ---- composites (seq.c) ------------------------------------------------------ */

/* The composite behind v, or NULL for a tensor value (or NULL). */
onnx_comp *onnx_comp_of(const ts_value *v);
/* A new composite of `count` elements (copied; an optional takes 0 or 1);
 * NULL and a failure recorded on the builder when out of memory or too
 * long. dtype: the elements' dtype when known (TS_DTYPE_COUNT otherwise;
 * taken from the first tensor element when there is one). */
ts_value *onnx_comp_new(onnx_ctx *c, onnx_comp_kind kind, int count, ts_value *const *elems, ts_dtype dtype);
/* The tensor leaves of v in order (v itself for a tensor): their count, and
 * when out is not NULL, the leaves written there. */
int onnx_comp_leaves(const ts_value *v, ts_value **out);
/* v's form ("t", "[t,t]", "?", ...), appended to b. */
void onnx_comp_form(const ts_value *v, ts_buf *b);
/* A copy of v's structure whose leaves are leaves[*pos], leaves[*pos+1],
 * ... (advancing *pos); for a tensor v, leaves[(*pos)++]. */
ts_value *onnx_comp_rebuild(onnx_ctx *c, const ts_value *v, ts_value *const *leaves, int *pos);
/* "a sequence", "an optional" or "a tensor", for messages. */
const char *onnx_comp_what(const ts_value *v);

/* ---- forms (seq.c) ------------------------------------------------------------- */

/* A parsed form: a tree of nodes in an arena. */
typedef struct onnx_form {
    char kind;                /* 't', '[' (sequence) or '?' (optional) */
    int count;                /* children: a sequence's elements, an optional's 0 or 1 */
    struct onnx_form **elems;
} onnx_form;

/* Parse form text into arena a; a message naming `what` when malformed or
 * nested more than ONNX_MAX_DEPTH deep. *n_tensors receives its leaf
 * count. */
ts_status onnx_form_parse(ts_arena *a, const char *text, const char *what, onnx_form **out, int *n_tensors,
                          ts_err *err);

/* ---- the loader's boundary (seq_io.c) ------------------------------------------ */

/* Graph input for an ONNX input of sequence or optional type (TypeProto
 * tp), shaped by the given value g: one graph input per leaf, each known
 * (c->known) as its tensor; *out is the composite. A failure naming the
 * input when the value does not fit the type. index: the graph input
 * index of the first leaf. */
ts_status onnx_comp_input(onnx_ctx *c, const char *name, const Onnx__TypeProto *tp, const onnx_given *g,
                          int index, ts_value **out);
/* A composite output must fit its declared type (kind, element dtype). */
ts_status onnx_comp_check_output(onnx_ctx *c, const char *name, const Onnx__TypeProto *tp, const ts_value *v);

/* ---- what node.c and the control family ask ------------------------------------ */

/* Whether op_type takes composite inputs (else node.c refuses them). */
bool onnx_takes_composites(const char *op_type);
/* Whether the subgraph of graph attribute attr uses a composite from
 * outside (subgraph.c). */
bool onnx_uses_composites(onnx_node *n, const char *attr);
/* Build graph attribute gp inline in the current block with its inputs
 * bound to formal[0..n_formal) (subgraph.c): an unrolled loop iteration, a
 * SequenceMap element. */
ts_status onnx_inline_body(onnx_node *n, const Onnx__GraphProto *gp, int n_formal, ts_value *const *formal,
                           ts_value ***results);
/* onnx_region whose results may be composites: the block returns their
 * leaves in order, and *shape[k] (arena array) is result k as built inside
 * (subgraph.c). */
ts_status onnx_region_flat(onnx_node *n, const char *attr, int n_formal, const ts_type *formal, int n_caps,
                           ts_value *const *caps, ts_block **out, ts_value ***shape);

/* A Loop that carries a composite or whose body uses one, unrolled: the
 * trip count and every condition must be known at build time
 * (unroll.c). */
ts_status onnx_loop_unrolled(onnx_node *n);

#endif
