/* rules_table.c — how each primitive is differentiated: the one table,
 * indexed by op, as every per-op table.
 * test_autodiff.c walks it: every op with a rule has finite-difference
 * cases, and every op is classified. */
#include "autodiff/ad_int.h"

#define EW {TS_AD_RULE, ad_vjp_ew, ad_jvp_ew}
#define RED {TS_AD_RULE, ad_vjp_reduce, ad_jvp_reduce}
#define LAY {TS_AD_RULE, ad_vjp_layout, ad_jvp_linear}
#define IDX {TS_AD_RULE, ad_vjp_index, ad_jvp_index}
#define CON {TS_AD_RULE, ad_vjp_contract, ad_jvp_contract}
#define COL {TS_AD_RULE, ad_vjp_collective, ad_jvp_collective}
#define STOP {TS_AD_STOP, NULL, NULL}
#define LEAF {TS_AD_LEAF, NULL, NULL}

static const ad_rule rules[TS_OP_COUNT] = {
    [TS_OP_CONST] = LEAF, [TS_OP_IOTA] = LEAF, [TS_OP_RNG_UNIFORM] = LEAF,
    [TS_OP_NEG] = EW, [TS_OP_ABS] = EW, [TS_OP_EXP] = EW, [TS_OP_LOG] = EW, [TS_OP_SQRT] = EW,
    [TS_OP_SIN] = EW, [TS_OP_COS] = EW, [TS_OP_TAN] = EW, [TS_OP_TANH] = EW, [TS_OP_ERF] = EW,
    /* piecewise constant: zero almost everywhere */
    [TS_OP_SIGN] = STOP, [TS_OP_FLOOR] = STOP, [TS_OP_CEIL] = STOP, [TS_OP_ROUND] = STOP,
    [TS_OP_NOT] = STOP,
    [TS_OP_ADD] = EW, [TS_OP_SUB] = EW, [TS_OP_MUL] = EW, [TS_OP_DIV] = EW, [TS_OP_REM] = EW,
    [TS_OP_POW] = EW, [TS_OP_MAX] = EW, [TS_OP_MIN] = EW, [TS_OP_ATAN2] = EW,
    /* integer and bool results */
    [TS_OP_AND] = STOP, [TS_OP_OR] = STOP, [TS_OP_XOR] = STOP, [TS_OP_SHL] = STOP, [TS_OP_SHR] = STOP,
    [TS_OP_EQ] = STOP, [TS_OP_NE] = STOP, [TS_OP_LT] = STOP, [TS_OP_LE] = STOP,
    [TS_OP_SELECT] = EW, [TS_OP_CAST] = EW,
    [TS_OP_BITCAST] = STOP,   /* reinterprets bits: no derivative */
    [TS_OP_REDUCE_SUM] = RED, [TS_OP_REDUCE_PROD] = RED, [TS_OP_REDUCE_MAX] = RED, [TS_OP_REDUCE_MIN] = RED,
    [TS_OP_ARGMAX] = STOP, [TS_OP_ARGMIN] = STOP,
    [TS_OP_CUMULATIVE] = {TS_AD_RULE, ad_vjp_scan, ad_jvp_scan}, [TS_OP_REDUCE_WINDOW] = {TS_AD_RULE, ad_vjp_window, ad_jvp_window},
    [TS_OP_RESHAPE] = LAY, [TS_OP_BROADCAST] = LAY, [TS_OP_TRANSPOSE] = LAY, [TS_OP_SLICE] = LAY,
    [TS_OP_PAD] = LAY, [TS_OP_CONCAT] = LAY, [TS_OP_REVERSE] = LAY,
    [TS_OP_GATHER] = IDX, [TS_OP_SCATTER] = IDX, [TS_OP_DYNAMIC_SLICE] = IDX, [TS_OP_DYNAMIC_UPDATE_SLICE] = IDX,
    [TS_OP_DOT] = CON, [TS_OP_CONV] = CON,
    [TS_OP_SORT] = IDX,
    [TS_OP_NONZERO] = STOP,
    [TS_OP_IF] = {TS_AD_RULE, ad_vjp_control, ad_jvp_control},
    [TS_OP_WHILE] = {TS_AD_RULE, ad_vjp_control, ad_jvp_control},
    [TS_OP_CUSTOM] = {TS_AD_MISSING, NULL, NULL},
    [TS_OP_ALL_REDUCE] = COL, [TS_OP_ALL_GATHER] = COL, [TS_OP_REDUCE_SCATTER] = COL, [TS_OP_ALL_TO_ALL] = COL,
    [TS_OP_SEND] = {TS_AD_MISSING, NULL, NULL}, [TS_OP_RECV] = LEAF,
};

const ad_rule *ad_rule_of(ts_op op) { return &rules[op]; }

const ad_rule *ad_rule_for(ts_builder *b, const ts_node *n)
{
    const ad_rule *r = &rules[n->op];
    if (r->kind == TS_AD_RULE) return r;
    if (r->kind == TS_AD_MISSING) {
        ts_buf lb = {0};
        ts_ir_node_label(&lb, n);
        ts_builder_fail(b, TS_ERR_UNSUPPORTED, "autodiff: %s has no derivative rule yet (%s)", ts_op_get(n->op)->name,
                        lb.data ? lb.data : "?");
        ts_buf_free(&lb);
    }
    return NULL;
}

ts_ad_kind ts_ad_op_kind(ts_op op) { return (unsigned)op < TS_OP_COUNT ? rules[op].kind : TS_AD_MISSING; }
