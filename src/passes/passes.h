/* passes.h — graph-to-graph rewrites: the pass list, the passes, and the
 * rewriting pieces the builder shares with them (folding, simplification,
 * node identity for hash-consing). docs/passes.md has every rule.
 *
 * A pass rewrites g in place and sets *changed when it altered anything;
 * it never sets *changed back to false. Passes may use value->aux freely
 * (one pass at a time) and leave garbage there. */
#ifndef TS_PASSES_H
#define TS_PASSES_H

#include <stdio.h>

#include "ir/ir.h"

typedef ts_status (*ts_pass_fn)(ts_graph *g, bool *changed, ts_err *err);

typedef struct ts_pass {
    const char *name;
    ts_pass_fn run;
} ts_pass;

ts_status ts_pass_dce(ts_graph *g, bool *changed, ts_err *err);
ts_status ts_pass_cse(ts_graph *g, bool *changed, ts_err *err);
ts_status ts_pass_fold(ts_graph *g, bool *changed, ts_err *err);
ts_status ts_pass_simplify(ts_graph *g, bool *changed, ts_err *err);

/* The pass table, in the order `--passes=help` lists it; *count entries. */
const ts_pass *ts_pass_table(int *count);

/* ts_graph_run_passes, and a seam for --dump-after: after every run of the
 * pass named dump_after (or of every pass, when it is "all") the graph is
 * written to out as IR text under a "# after NAME" line. dump_after NULL
 * dumps nothing. An unknown pass name, in either list, is
 * TS_ERR_INVALID_ARG naming the available ones; nothing runs then. */
ts_status ts_pass_run_dump(ts_graph *g, const char *passes, const char *dump_after, FILE *out, ts_err *err);

/* The default pipeline repeats simplify,fold,cse,dce until nothing changes,
 * at most this many rounds. */
#define TS_PASS_MAX_ROUNDS 10

/* ---- constant folding (shared with the builder) --------------------------- */

/* Folding never makes a constant over TS_FOLD_MAX_ELEMS elements, and makes
 * one larger than its operands together only up to TS_FOLD_FREE_ELEMS
 * (so broadcast(scalar), iota or rng_uniform do not inflate the graph). */
#define TS_FOLD_MAX_ELEMS (INT64_C(1) << 20)
#define TS_FOLD_FREE_ELEMS INT64_C(1024)

/* Fold n when every operand is the result of a `const`, it has no effects
 * or regions, its result types are fully constant and the size rule above
 * allows it: evaluate it with the interpreter and create one `const` per
 * result right before n, each taking the name of the result it replaces.
 * repl (n->n_out entries) receives the new values; *folded tells whether
 * that happened. n itself is left in place (the caller forwards its uses
 * and unlinks it). An evaluation that fails (say, an index out of range)
 * is not an error: the node is left for run time to report. Only running
 * out of memory is. */
ts_status ts_pass_fold_node(ts_graph *g, ts_node *n, ts_value **repl, bool *folded, ts_err *err);

/* ---- algebraic simplification (shared with the builder) ------------------- */

/* If a rule of docs/passes.md applies to n, *repl is a value of exactly
 * n->out[0]'s type that can replace it: an existing value, or the result of
 * a node created right before n (which then takes the replaced result's
 * name). Otherwise *repl is NULL. n is left in place. */
ts_status ts_pass_simplify_node(ts_graph *g, ts_node *n, ts_value **repl, ts_err *err);

/* ---- node identity (shared by CSE and the builder's hash-consing) -------- */

/* Whether n may be merged with an identical node: not SIDE, no regions, no
 * fresh (data-dependent) symbols, at least one result. */
bool ts_pass_mergeable(const ts_node *n);
/* Hash and identity of ts_ir_node_hash/ts_ir_node_same, except that the two
 * operands of a commutative op count in either order. Only the op, operands
 * and attributes are read, so a key node may be a stack struct. */
uint64_t ts_pass_node_key(const ts_node *n);
bool ts_pass_node_equiv(const ts_node *a, const ts_node *b);

/* A hash set of nodes keyed by ts_pass_node_key. Zero-initialise; free with
 * ts_pass_nodeset_free. */
typedef struct ts_pass_nodeset {
    ts_node **slots;
    uint64_t *keys;
    size_t cap, count;
} ts_pass_nodeset;

/* The node in s equivalent to n (whose key is k), or NULL. */
ts_node *ts_pass_nodeset_find(const ts_pass_nodeset *s, const ts_node *n, uint64_t k);
/* Add n (key k). TS_ERR_OOM on failure. */
ts_status ts_pass_nodeset_add(ts_pass_nodeset *s, ts_node *n, uint64_t k, ts_err *err);
void ts_pass_nodeset_free(ts_pass_nodeset *s);

/* ---- forwarding (rewrite.c) ------------------------------------------------
 * Passes that replace values record the replacement in value->aux and
 * rewrite operands as their sweep reaches them, so a sweep stays linear
 * (ts_ir_replace_uses walks the whole graph each time). Regions are
 * isolated, so a value's uses are all in its own block. */

/* Clear aux of every value of b and its regions. */
void ts_pass_forget(ts_block *b);
/* v, or what it was forwarded to. */
ts_value *ts_pass_resolve(ts_value *v);
void ts_pass_resolve_operands(ts_node *n);
void ts_pass_resolve_results(ts_block *b);
/* Forward n's results to repl[k] and take n out of its block. */
void ts_pass_replace(ts_node *n, ts_value *const *repl);
/* A node made to stand in for `old` takes its name (names are unique, so
 * old loses it). Does nothing when nv already has a name. */
void ts_pass_take_name(ts_value *nv, ts_value *old);

/* Whether n, or anything in its regions, has effects (TS_OPF_SIDE). */
bool ts_pass_has_effects(const ts_node *n);

#endif
