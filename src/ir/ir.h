/* ir.h — the graph IR: primitive nodes in SSA form, typed values with
 * symbolic shapes, typed attributes, and regions for if/while.
 *
 * Ownership: a ts_graph owns an arena; every node, value, block, attribute
 * payload and string of the graph lives there and dies with ts_graph_free.
 * Constant tensors are reference-counted and released with the graph.
 *
 * Structure: a graph has one body block. A block has parameters (values
 * with no defining node), a list of nodes in topological order, and results
 * (the values it yields). The body's parameters are the graph inputs and its
 * results the graph outputs. A region is a block owned by a node (if: then,
 * else; while: cond, body). Regions are isolated from above: a region sees
 * only its own parameters, so everything it needs is passed as an operand.
 */
#ifndef TS_IR_H
#define TS_IR_H

#include "core/core.h"
#include "core/dtype.h"
#include "core/sym.h"
#include "core/tensor.h"

/* ---- the primitive table (expanded from ops.def) ---------------------- */

typedef enum ts_op {
#define TS_OP(id, name, min_in, max_in, n_out, types, flags, attrs, regions) TS_OP_##id,
#include "ops.def"
#undef TS_OP
    TS_OP_COUNT
} ts_op;

/* Operand dtype classes. */
typedef enum ts_typeclass {
    TS_TY_ALL,      /* every dtype, storage types too: ops that only move or convert */
    TS_TY_ANY,      /* every compute dtype (not the storage types) */
    TS_TY_NUM,      /* every compute dtype but bool */
    TS_TY_FLOAT,    /* f16 bf16 f32 f64 */
    TS_TY_INT,      /* integers, not bool */
    TS_TY_INTBOOL   /* integers and bool */
} ts_typeclass;

enum {
    TS_OPF_NONE = 0,
    TS_OPF_EW = 1 << 0,       /* elementwise: output[i] depends on inputs[i] */
    TS_OPF_COMM = 1 << 1,     /* binary and commutative */
    TS_OPF_CMP = 1 << 2,      /* yields bool */
    TS_OPF_REDUCE = 1 << 3,   /* removes the axes it reduces */
    TS_OPF_LAYOUT = 1 << 4,   /* moves elements without computing */
    TS_OPF_CONTROL = 1 << 5,  /* has regions */
    TS_OPF_SIDE = 1 << 6,     /* has effects: never removed, merged or folded */
    TS_OPF_FRESH = 1 << 7     /* results have data-dependent dims: fresh symbols */
};

typedef enum ts_attr_kind {
    TS_ATTR_INT, TS_ATTR_INTS, TS_ATTR_FLOAT, TS_ATTR_DTYPE,
    TS_ATTR_STR, TS_ATTR_DIMS, TS_ATTR_TENSOR, TS_ATTR_ENUM
} ts_attr_kind;

/* One declared attribute of an op, parsed from the schema string. */
typedef struct ts_attr_schema {
    const char *name;
    ts_attr_kind kind;
    int n_enum;
    const char *enum_names[8];
    bool has_default;
    /* default, in the same representation as ts_attr below */
    int64_t def_i;
    double def_f;
    const char *def_s;
    int def_n;
    int64_t def_ints[8];
} ts_attr_schema;

#define TS_MAX_ATTRS 8
#define TS_MAX_REGIONS 2

typedef struct ts_op_info {
    const char *name;
    int min_in, max_in, n_out;
    ts_typeclass types;
    unsigned flags;
    int n_attrs;
    ts_attr_schema attrs[TS_MAX_ATTRS];
    int n_regions;
    const char *region_names[TS_MAX_REGIONS];
    const char *schema_text;   /* the row's attribute string, as written */
} ts_op_info;

/* The row of op (schemas parsed once, thread-safely, on first use). */
const ts_op_info *ts_op_get(ts_op op);
/* Look an op up by its text name; false if none. */
bool ts_op_from_name(const char *name, size_t len, ts_op *out);
/* The schema index of attribute `name` of op, or -1. */
int ts_op_attr_index(ts_op op, const char *name);

/* ---- values, nodes, blocks, graphs ----------------------------------- */

typedef struct ts_node ts_node;
typedef struct ts_block ts_block;
typedef struct ts_value ts_value;

typedef struct ts_type {
    ts_dtype dtype;
    int rank;
    ts_dim *dims;             /* rank entries, in the graph arena */
} ts_type;

struct ts_value {
    uint32_t id;              /* unique within the graph */
    ts_type type;
    ts_node *def;             /* defining node; NULL for a block parameter */
    int index;                /* result index in def, or parameter index */
    ts_block *param_of;       /* the block whose parameter this is */
    const char *name;         /* text-form name without '%', or NULL */
    void *aux;                /* scratch for one pass at a time */
};

/* An attribute value; node->attrs[k] follows the op's schema order k. */
typedef struct ts_attr {
    ts_attr_kind kind;
    int64_t i;                /* INT, ENUM (index into enum_names), DTYPE */
    double f;                 /* FLOAT */
    const char *s;            /* STR */
    int n;                    /* INTS, DIMS: element count */
    int64_t *ints;            /* INTS */
    ts_dim *dims;             /* DIMS */
    ts_tensor *t;             /* TENSOR (the graph holds one reference) */
} ts_attr;

struct ts_node {
    ts_op op;
    uint32_t id;
    int n_in;
    ts_value **in;
    int n_out;
    ts_value **out;
    ts_attr *attrs;           /* ts_op_get(op)->n_attrs entries */
    int n_regions;
    ts_block **regions;
    ts_node *prev, *next;
    ts_block *block;          /* the block the node is in */
    const char *origin;       /* where it came from (ONNX node name), or NULL */
};

struct ts_block {
    int n_params;
    ts_value **params;
    ts_node *first, *last;
    int n_results;
    ts_value **results;
    ts_node *parent;          /* the node owning this region; NULL for the body */
};

/* A graph input pinned to a value: the graph was specialised on it (a
 * frontend read a shape from it), so a run must pass exactly this value.
 * The runtime checks; the text form does not carry pins. */
typedef struct ts_pin {
    int input;
    ts_tensor *value;
} ts_pin;

struct ts_graph {
    ts_arena *arena;
    ts_symtab *syms;
    const char *name;         /* without '@' */
    ts_block *body;
    uint32_t next_value_id;
    uint32_t next_node_id;
    int n_pins;
    ts_pin *pins;             /* arena array; tensors released with the arena */
};

/* ---- construction ------------------------------------------------------ */

/* A new empty graph named `name` (its body has no params or results). */
ts_status ts_ir_graph_new(const char *name, ts_graph **out, ts_err *err);

/* A value of the given type, not yet placed anywhere; dims copied. */
ts_status ts_ir_value_new(ts_graph *g, const ts_type *type, ts_value **out, ts_err *err);
/* Add a parameter of type `type` to block b. */
ts_status ts_ir_block_add_param(ts_graph *g, ts_block *b, const ts_type *type,
                                ts_value **out, ts_err *err);
/* Set a block's results (copied). */
ts_status ts_ir_block_set_results(ts_graph *g, ts_block *b, int n, ts_value *const *vals,
                                  ts_err *err);
/* A new empty block (for a region). */
ts_status ts_ir_block_new(ts_graph *g, ts_block **out, ts_err *err);

/* Attributes of op filled with their declared defaults (kind set for all;
 * attributes without a default are marked missing by kind-specific zero
 * values and must be set before ts_ir_node_new). Allocated in g's arena. */
ts_attr *ts_ir_attrs_new(ts_graph *g, ts_op op);
/* Named setters; name must be one of op's attributes (else TS_ERR_INTERNAL).
 * List payloads are copied into g's arena; a tensor gains a reference. */
ts_status ts_attr_set_int(ts_graph *g, ts_op op, ts_attr *a, const char *name, int64_t v);
ts_status ts_attr_set_float(ts_graph *g, ts_op op, ts_attr *a, const char *name, double v);
ts_status ts_attr_set_dtype(ts_graph *g, ts_op op, ts_attr *a, const char *name, ts_dtype v);
ts_status ts_attr_set_str(ts_graph *g, ts_op op, ts_attr *a, const char *name, const char *v);
ts_status ts_attr_set_enum(ts_graph *g, ts_op op, ts_attr *a, const char *name, const char *v);
ts_status ts_attr_set_ints(ts_graph *g, ts_op op, ts_attr *a, const char *name, int n, const int64_t *v);
ts_status ts_attr_set_dims(ts_graph *g, ts_op op, ts_attr *a, const char *name, int n, const ts_dim *v);
ts_status ts_attr_set_tensor(ts_graph *g, ts_op op, ts_attr *a, const char *name, ts_tensor *t);

/* Create a node at the end of block b (before `before` if not NULL):
 * checks arity, operand dtypes and attributes, takes ownership of regions,
 * runs the op's shape rule and creates the typed results. `attrs` comes
 * from ts_ir_attrs_new (or NULL when the op has only defaults). On error
 * nothing is added to b (the arena may hold garbage until the graph dies),
 * and the message names the op and the reason. */
ts_status ts_ir_node_new(ts_graph *g, ts_block *b, ts_node *before, ts_op op,
                         int n_in, ts_value *const *in, ts_attr *attrs,
                         int n_regions, ts_block *const *regions,
                         ts_node **out, ts_err *err);

/* Used by shape rules: give n its results, typed (dims copied). */
ts_status ts_ir_node_set_outputs(ts_graph *g, ts_node *n, int count, const ts_type *types,
                                 ts_err *err);

/* ---- editing ----------------------------------------------------------- */

/* Take n out of its block (its results must have no users left). */
void ts_ir_node_unlink(ts_node *n);
/* Every use of `from` in the graph (operands and block results, regions
 * included) becomes `to`. Types must match (not checked here). */
void ts_ir_replace_uses(ts_graph *g, ts_value *from, ts_value *to);
/* Number of uses of every value, written to value->aux as (intptr_t);
 * callers that use aux for something else must not call this. */
void ts_ir_count_uses(ts_graph *g);

/* ---- attribute getters (checked: a wrong name or kind is a bug, caught by
 * TS_ALWAYS in debug builds and answered with 0/NULL in release) -------- */

int64_t ts_node_int(const ts_node *n, const char *name);      /* INT, ENUM, DTYPE */
double ts_node_float(const ts_node *n, const char *name);
const char *ts_node_str(const ts_node *n, const char *name);
const int64_t *ts_node_ints(const ts_node *n, const char *name, int *count);
const ts_dim *ts_node_dims(const ts_node *n, const char *name, int *count);
ts_tensor *ts_node_tensor(const ts_node *n, const char *name);
const char *ts_node_enum_name(const ts_node *n, const char *name);

/* ---- types ------------------------------------------------------------- */

bool ts_type_eq(const ts_type *a, const ts_type *b);
/* "f32[batch, 4]" appended to b */
void ts_type_print(ts_buf *b, const ts_type *t);

/* ---- pieces of the text form (the public builder's way in) ------------- */

/* A type as the text form writes it ("f32[batch, 4]"), the whole string;
 * dims in g's arena, symbols in g's table. Errors say where. */
ts_status ts_ir_parse_type(ts_graph *g, const char *text, ts_type *out, ts_err *err);
/* Attributes of op as a node's text writes them, braces optional
 * ("perm=[1, 0]"; NULL or "" for all defaults), into a fresh
 * ts_ir_attrs_new array. A tensor literal has no declared type here to
 * take its shape from: constants are built from tensors instead. */
ts_status ts_ir_parse_attrs(ts_graph *g, ts_op op, const char *text, ts_attr **out, ts_err *err);

/* ---- checking ---------------------------------------------------------- */

/* Structural checks of the whole graph: SSA (every operand defined before
 * use in its block or a parameter of it), region isolation, arity, attribute
 * kinds, types equal to what the shape rule infers, region signatures. */
ts_status ts_ir_verify(ts_graph *g, ts_err *err);

/* Shape rule of one node: recompute its result types into `types` (count
 * in *count, at most cap). Used by ts_ir_node_new and the verifier. */
ts_status ts_ir_infer(ts_graph *g, ts_node *n, ts_type *types, int cap, int *count, ts_err *err);
bool ts_ir_has_shape_rule(ts_op op);

/* Node identity for hash-consing and CSE: op, operands, attributes and
 * (by pointer) regions. */
uint64_t ts_ir_node_hash(const ts_node *n);
bool ts_ir_node_same(const ts_node *a, const ts_node *b);

/* "%5 (dot)" or "%y (add)" — for messages. Appended to b. */
void ts_ir_node_label(ts_buf *b, const ts_node *n);

/* Walk every node of block b and, recursively, of its regions, in order. */
typedef void (*ts_node_visit)(ts_node *n, void *ud);
void ts_ir_walk(ts_block *b, ts_node_visit fn, void *ud);


/* ---- custom ops ----------------------------------------------------------
 * The escape hatch: a named kernel with its own shape rule, registered
 * process-wide before graphs that use it are built. The IR keeps `kernel`
 * opaque; the interpreter reads it as a ts_interp_custom_fn. */
typedef ts_status (*ts_custom_shape_fn)(ts_graph *g, const ts_node *n, ts_type *outs,
                                        int cap, int *count, ts_err *err);
typedef struct ts_custom_op {
    const char *name;
    ts_custom_shape_fn shape;
    void *kernel;
} ts_custom_op;
ts_status ts_custom_register(const ts_custom_op *op, ts_err *err);
const ts_custom_op *ts_custom_find(const char *name);

/* Pin input `input` of g to `value` (a reference is taken). */
ts_status ts_ir_pin_input(ts_graph *g, int input, ts_tensor *value, ts_err *err);

/* ---- text form (print.c, parse.c; the syntax is docs/ir.md) ------------ */

/* Append the canonical text of g to b; TS_ERR_OOM if b ran out of memory.
 * Total: a graph the verifier rejects still prints (unspellable parts as
 * `?`), but only a verified graph is promised to parse back. */
ts_status ts_ir_print(const ts_graph *g, ts_buf *b);
/* Whether s[0..n) can be spelt as a name: [A-Za-z_][A-Za-z0-9_.]*, or,
 * for a value name (value = true), also a run of digits. */
bool ts_ir_name_ok(const char *s, size_t n, bool value);

/* ---- test coverage (coverage.c) ----------------------------------------- */

/* Walk the directory tree `dir` (recursing; names starting with '.' are
 * skipped), load every *.ir file and add 1 to counts[op] for every op the
 * graph uses, regions included, counting each op once per file. counts is
 * added to, not cleared. Returns the number of files read, or -1 with err
 * set (TS_ERR_IO for a directory that cannot be read, the parser's status
 * for a file that does not load); counts then holds a partial tally. */
int ts_ir_count_op_cases(const char *dir, int counts[TS_OP_COUNT], ts_err *err);

#endif
