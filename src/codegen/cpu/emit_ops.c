/* emit_ops.c — what the C emitter generates code for: the CPU backend's
 * answer to fusion's question (ts_fuse_compiles_fn). Anything else runs on
 * the interpreter's kernel as a fallback node. */
#include "codegen/cpu/emit.h"
#include "codegen/cpu/emit_int.h"

#include "lower/view.h"

static bool reduce_op(ts_op op)
{
    return op == TS_OP_REDUCE_SUM || op == TS_OP_REDUCE_PROD || op == TS_OP_REDUCE_MAX || op == TS_OP_REDUCE_MIN ||
           op == TS_OP_REDUCE_WINDOW || op == TS_OP_CUMULATIVE;
}

/* argmax/argmin of an empty axis is a run-time error, which the kernel
 * cannot raise: an axis that may be empty stays with the interpreter. */
static bool arg_extreme_compiles(const ts_node *n)
{
    const ts_dim d = n->in[0]->type.dims[ts_node_int(n, "axis")];
    return ts_dim_is_const(d) && d.c > 0;
}

/* A gather reads x through its indices (lower.c). Stored indices are
 * checked at run time before the kernel starts; constant ones here, and
 * any out of range leaves the node to the interpreter, which reports
 * the error when it runs (D113). */
static bool gather_compiles(const ts_node *n)
{
    const ts_value *idx = n->in[1];
    if (!idx->def || idx->def->op != TS_OP_CONST) return true;
    const ts_dim bound = n->in[0]->type.dims[ts_node_int(n, "axis")];
    if (!ts_dim_is_const(bound)) return false;
    const ts_tensor *t = idx->def->attrs[0].t;
    for (int64_t j = 0; j < t->numel; j++) {
        if (t->dtype == TS_DTYPE_U64 ? ts_elem_get_u64(t->dtype, t->data, j) >= (uint64_t)bound.c
                                     : (uint64_t)ts_elem_get_i64(t->dtype, t->data, j) >= (uint64_t)bound.c)
            return false;
    }
    return true;
}

/* The window of a dynamic slice (its result's shape) or update (upd's
 * shape) must fit in x, else the primitive fails at run time, which a
 * kernel cannot do: compiled only where that is known here. */
static bool window_fits(const ts_node *n, const ts_value *w)
{
    const ts_value *x = n->in[0];
    for (int i = 0; i < x->type.rank; i++) {
        const ts_dim a = w->type.dims[i], b = x->type.dims[i];
        if (!ts_dim_eq(a, b) && !(ts_dim_is_const(a) && ts_dim_is_const(b) && a.c >= 0 && a.c <= b.c)) return false;
    }
    return true;
}

/* A scatter's indices are checked against numel(x) before the kernel,
 * a constant bound (static shapes); integer indices. */
static bool scatter_compiles(const ts_node *n)
{
    const ts_value *x = n->in[0];
    for (int i = 0; i < x->type.rank; i++)
        if (!ts_dim_is_const(x->type.dims[i])) return false;
    return ts_dtype_is_int(n->in[1]->type.dtype);
}

bool ts_emit_c_compiles(const ts_node *n)
{
    for (int i = 0; i < n->n_in; i++)
        if (!ts_emit_ctype(n->in[i]->type.dtype)) return false;
    for (int i = 0; i < n->n_out; i++)
        if (!ts_emit_ctype(n->out[i]->type.dtype)) return false;
    if (n->op == TS_OP_CONV) return ts_contract_template(n);
    if (n->op == TS_OP_BITCAST) return false;
    if (n->op == TS_OP_GATHER) return gather_compiles(n);
    if (n->op == TS_OP_ARGMAX || n->op == TS_OP_ARGMIN) return arg_extreme_compiles(n);
    if (n->op == TS_OP_SCATTER) return scatter_compiles(n);
    if (n->op == TS_OP_DYNAMIC_SLICE) return window_fits(n, n->out[0]);
    if (n->op == TS_OP_DYNAMIC_UPDATE_SLICE) return window_fits(n, n->in[1]);
    if (n->op == TS_OP_IF || n->op == TS_OP_WHILE) return true;
    if (n->op == TS_OP_SORT) return n->in[0]->type.dtype != TS_DTYPE_BOOL;   /* tsrt_sort.h's element types */   /* regions compiled as programs (D115) */
    return (ts_op_get(n->op)->flags & TS_OPF_EW) || ts_view_op(n) || n->op == TS_OP_IOTA || n->op == TS_OP_CONST ||
           reduce_op(n->op) || n->op == TS_OP_DOT;
}

bool ts_em_device_compiles(const ts_node *n)
{
    if (n->op == TS_OP_SORT) return false;
    if (n->op != TS_OP_CONV) return ts_emit_c_compiles(n);
    for (int i = 0; i < n->n_in; i++)   /* conv as loops (lower_contract.c): any rank, any C type */
        if (!ts_emit_ctype(n->in[i]->type.dtype)) return false;
    return ts_emit_ctype(n->out[0]->type.dtype) != NULL;
}
