/* autodiff.h — automatic differentiation of primitive graphs, in place:
 * reverse mode (vector-Jacobian products) and forward mode (Jacobian-vector
 * products). Both append ordinary primitives to the graph's body, so the
 * result prints as IR text, runs through the passes, compiles on every
 * target and can be differentiated again (any order). docs/autodiff.md
 * has the contract and the rule list.
 *
 * Only floating-point values carry derivatives. Integer and bool values,
 * and the primitives whose derivative is zero almost everywhere (floor,
 * sign, comparisons, argmax, ...), stop them (TS_AD_STOP). */
#ifndef TS_AUTODIFF_H
#define TS_AUTODIFF_H

#include "builder/builder.h"

typedef enum ts_ad_kind {
    TS_AD_MISSING,   /* differentiable, but no rule yet: differentiating through it is an error naming it */
    TS_AD_RULE,      /* VJP and JVP rules (some attribute choices may still be refused, with a message) */
    TS_AD_STOP,      /* derivative zero almost everywhere, or no float results: nothing flows through */
    TS_AD_LEAF       /* no differentiable operands (const, iota, rng_uniform) */
} ts_ad_kind;

/* How op is differentiated (the table in rules_table.c). */
ts_ad_kind ts_ad_op_kind(ts_op op);

/* Within the block b builds into: the cotangents of the values xs[0..n_x)
 * given cotangents seeds[k] of the values ys[k] (NULL: zero), from a
 * reverse sweep over the block's nodes as they are now. grads[j] receives
 * zeros where no y depends on xs[j], NULL for a value that is not a float.
 * Failures go to the builder. (ONNX's Gradient operator, and ts_graph_grad.) */
void ts_ad_vjp_values(ts_builder *b, int n_y, ts_value *const *ys, ts_value *const *seeds, int n_x,
                      ts_value *const *xs, ts_value **grads);

/* The forward-mode counterpart: the tangents ty[k] of ys[k] given
 * tangents tx[j] of xs[j] (NULL: zero), from a forward sweep over the
 * block's nodes as they are now; zeros where none, NULL for non-floats. */
void ts_ad_jvp_values(ts_builder *b, int n_x, ts_value *const *xs, ts_value *const *tx, int n_y,
                      ts_value *const *ys, ts_value **ty);

/* y recomputed from to[i] in place of from[i]: the nodes of b's block on
 * a path from some from[i] to y, rebuilt on the new values (y itself when
 * it depends on none). Control-flow nodes on the way are refused. */
ts_value *ts_ad_substitute(ts_builder *b, ts_value *y, int n, ts_value *const *from, ts_value *const *to);

/* The transformations themselves are public: ts_graph_grad (grad.c) and
 * ts_graph_jvp (jvp.c), in tessera.h. */

#endif
