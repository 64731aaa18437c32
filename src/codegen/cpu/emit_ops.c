/* emit_ops.c — what the C emitter generates code for: the CPU backend's
 * answer to fusion's question (ts_fuse_compiles_fn). Anything else runs on
 * the interpreter's kernel as a fallback node. */
#include "codegen/cpu/emit.h"

#include "lower/view.h"

static bool reduce_op(ts_op op)
{
    return op == TS_OP_REDUCE_SUM || op == TS_OP_REDUCE_PROD || op == TS_OP_REDUCE_MAX || op == TS_OP_REDUCE_MIN ||
           op == TS_OP_REDUCE_WINDOW;
}

bool ts_emit_c_compiles(const ts_node *n)
{
    for (int i = 0; i < n->n_in; i++)
        if (!ts_emit_ctype(n->in[i]->type.dtype)) return false;
    for (int i = 0; i < n->n_out; i++)
        if (!ts_emit_ctype(n->out[i]->type.dtype)) return false;
    if (n->op == TS_OP_CONV) return ts_contract_template(n);
    if (n->op == TS_OP_BITCAST) return false;
    return (ts_op_get(n->op)->flags & TS_OPF_EW) || ts_view_op(n) || n->op == TS_OP_IOTA || n->op == TS_OP_CONST ||
           reduce_op(n->op) || n->op == TS_OP_DOT;
}
