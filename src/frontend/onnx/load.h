/* load.h — the ONNX loader's own interface, shared by its files (load.c,
 * node.c, values.c, subgraph.c, tensor_pb.c, pb_io.c, names.c, info.c) and
 * ops_control.c. Operator families use onnx.h only.
 *
 * The loader keeps one onnx_ctx per load: the unpacked model (alive as long
 * as the graph: its free is deferred on the graph arena, so initializers
 * point into it), the current builder and scope, the known input values,
 * and the shape-value side table. Names resolve through a chain of scopes;
 * a scope opened for a region (or an inlined function) is a barrier, so a
 * lookup never returns a value the current block cannot see. */
#ifndef TS_ONNX_LOAD_H
#define TS_ONNX_LOAD_H

#include "frontend/onnx/onnx.h"

#include "onnx.pb-c.h"

/* Limits that keep a hostile file from recursing without bound. */
#define ONNX_MAX_DEPTH 48          /* message nesting (subgraphs, functions) */
#define ONNX_MAX_IR_VERSION 13

/* ---- maps (names.c) --------------------------------------------------------
 * Open-addressing hash maps from a key (a string, or a pointer) to a
 * pointer. Storage through ts_mem_*; keys are borrowed. */
typedef struct onnx_map {
    const void **keys;
    void **vals;
    size_t count, cap;
    bool str;                 /* keys are strings (else pointers) */
} onnx_map;

void *onnx_map_get(const onnx_map *m, const void *key);
/* Insert or replace; false on OOM. */
bool onnx_map_put(onnx_map *m, const void *key, void *val);
void onnx_map_free(onnx_map *m);

/* ---- scopes ----------------------------------------------------------------- */

typedef struct onnx_scope {
    onnx_map names;           /* name -> ts_value* (NULL for an omitted optional) */
    struct onnx_scope *parent;
    bool barrier;             /* lookups stop here (a region or a function body) */
} onnx_scope;

/* What a known graph input stands for. */
typedef struct onnx_known {
    int input;                /* index among the graph's inputs */
    ts_tensor *value;         /* the caller's tensor (borrowed for the load) */
} onnx_known;

/* A value the caller gave at load time for a model input (or an
 * initializer): its form (seq.h; NULL for a plain tensor) and its tensors
 * (borrowed for the load). */
typedef struct onnx_given {
    const char *name;
    const struct onnx_form *form;
    int n;
    ts_tensor *const *t;
} onnx_given;

/* A recorded shape value. */
typedef struct onnx_dims {
    int count;
    ts_dim *dims;
} onnx_dims;

struct onnx_ctx {
    ts_graph *g;
    ts_builder *b;                    /* where nodes go now */
    const Onnx__ModelProto *model;
    const char *dir;                  /* the model's folder, for external data */
    int opset;                        /* default domain, in effect now */
    const Onnx__FunctionProto *func;  /* the function being inlined, whose imports come first; or NULL */
    onnx_scope *scope;
    onnx_map known;                   /* ts_value* (body param) -> onnx_known* */
    onnx_map dims;                    /* ts_value* -> onnx_dims* */
    int depth;                        /* subgraph and function nesting */
    int n_node;                       /* nodes seen, to label unnamed ones */
    char **out_forms;                 /* the outputs' forms (seq.h), arena strings */
    const Onnx__NodeProto *origin_np; /* the node failures are labelled with, and its index */
    int origin_index;
    int64_t inlined;                  /* nodes built by unrolling and SequenceMap (seq.h) */
    int64_t listed;                   /* elements of every sequence built (seq.h) */
};

/* ---- scopes and names (names.c) ------------------------------------------- */

/* The value bound to name, searching out to the nearest barrier; *found
 * tells an omitted optional (bound to NULL) from an unknown name. */
ts_value *onnx_lookup(onnx_ctx *c, const char *name, bool *found);
/* Bind name in the innermost scope; false on OOM. */
bool onnx_bind(onnx_ctx *c, const char *name, ts_value *v);
/* Open a scope (barrier or not) / close the innermost one. */
bool onnx_scope_push(onnx_ctx *c, onnx_scope *s, bool barrier);
void onnx_scope_pop(onnx_ctx *c);

/* ---- node processing (node.c) ------------------------------------------------- */

/* Build every node of a graph's node list into c->b, in order. */
ts_status onnx_emit_nodes(onnx_ctx *c, size_t n, Onnx__NodeProto *const *nodes);
/* The attribute of a NodeProto named `name`, or NULL. */
const Onnx__AttributeProto *onnx_find_attr(const Onnx__NodeProto *np, const char *name);

/* An attribute's type, inferred from the fields set when `type` is absent
 * (old exporters). */
int onnx_attr_type(const Onnx__AttributeProto *a);
/* A GRAPH attribute of n, or NULL (and a failure on n) when absent or of
 * another type. */
const Onnx__GraphProto *onnx_attr_graph(onnx_node *n, const char *name);
/* Label the builder's failures with node np ("node 'name' (Op)", or
 * "node #index (Op)" for an unnamed one). */
void onnx_set_origin(onnx_ctx *c, const Onnx__NodeProto *np, int index);
/* The builder's failure as a status, copying the message into err. */
ts_status onnx_ctx_status(onnx_ctx *c, ts_err *err);

/* ---- values (values.c) ------------------------------------------------------- */

/* TypeProto -> ts_type for a graph input (dims in the graph arena); what
 * names the value in messages. */
ts_status onnx_type_from_proto(onnx_ctx *c, const Onnx__TypeProto *tp, const char *what,
                               ts_type *out, ts_err *err);
/* A scalar i64 constant built with builder b. */
ts_value *onnx_i64_scalar(ts_builder *b, int64_t v);

/* ---- subgraphs (subgraph.c) ----------------------------------------------------- */

/* Build graph attribute gp (of node n) into builder rb, whose block is a
 * region: gp's inputs are bound to formal[0..n_formal), every name gp uses
 * from outside to inner_caps[j] where outer_caps[j] is that name's value
 * outside. The subgraph's outputs go to *results (arena array of
 * gp->n_output values). */
ts_status onnx_emit_subgraph(onnx_node *n, const Onnx__GraphProto *gp, ts_builder *rb,
                             int n_formal, ts_value *const *formal, int n_caps,
                             ts_value *const *outer_caps, ts_value *const *inner_caps,
                             ts_value ***results);
/* Build graph attribute `attr` of n inline, in the current block (the
 * branch of an If whose condition is a constant). Outputs as above. */
ts_status onnx_inline_subgraph(onnx_node *n, const char *attr, ts_value ***results);
/* Process a graph's initializers into constants bound in the current
 * scope; a given value (n_given of them, may be 0) replaces one. */
ts_status onnx_emit_initializers(onnx_ctx *c, const Onnx__GraphProto *gp, int n_given, const onnx_given *given);

/* ---- TensorProto (tensor_pb.c) -------------------------------------------------- */

/* A tensor for tp. With borrow, raw_data stays where the proto keeps it
 * (the proto must outlive the tensor); otherwise the data is copied.
 * External data is read relative to dir (NULL: external data is an
 * error). `what` names the tensor in messages. */
ts_status onnx_tensor_from_proto(const Onnx__TensorProto *tp, bool borrow, const char *dir,
                                 const char *what, ts_tensor **out, ts_err *err);
/* ONNX data type number for a tessera dtype. */
int onnx_type_of_dtype(ts_dtype dt);
/* "FLOAT", "STRING", ... for messages; "type 42" for unknown numbers
 * (written into buf). */
const char *onnx_type_name(int onnx_type, char buf[16]);

/* ---- protobuf (pb_io.c) ---------------------------------------------------------- */

/* The allocator protobuf-c uses: through ts_mem_*. */
extern ProtobufCAllocator onnx_pb_allocator;
/* Read a whole file into ts_mem memory (on huge pages from 2 MiB: the
 * read's page faults were half its time, D196); ts_mem_free_aligned frees it. */
ts_status onnx_read_file(const char *path, uint8_t **data, size_t *len, ts_err *err);
/* The model's graph with only its inputs, outputs and initializers' names,
 * re-encoded as a ModelProto (pb_skim.c; ts_mem_free frees it);
 * TS_ERR_INVALID_MODEL where the wire data is malformed. */
ts_status onnx_skim_model(const char *path, uint8_t **data, size_t *len, ts_err *err);
/* Check that the wire data of a message of descriptor d nests no deeper
 * than ONNX_MAX_DEPTH and that every length fits; then unpack it. */
ts_status onnx_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                      const char *path, ProtobufCMessage **out, ts_err *err);
void onnx_pb_free(ProtobufCMessage *m);

#endif
