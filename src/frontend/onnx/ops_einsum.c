/* ops_einsum.c — ONNX Einsum, assembled from dot, reduce_sum, transpose
 * and (for repeated labels such as "ii") an iota mask.
 *
 * The equation is parsed into one label per axis. Each operand first takes
 * its diagonals and sums out the labels no one else uses; the operands are
 * then combined left to right with one dot each (shared labels still
 * needed later are batch axes, the others are contracted), and a final
 * transpose puts the labels in the output's order. */
#include "frontend/onnx/onnx.h"

#include <string.h>

static ts_value *bin(onnx_node *n, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(onnx_b(n), op, x, y); }

/* ---- the equation ------------------------------------------------------------ */

/* Labels are letters (their char code) or ellipsis dims (ELL + position
 * in the broadcast ellipsis shape, aligned right across operands). */
enum { ELL = 256, MAX_TERMS = 16 };

typedef struct eterm {
    int n;
    int lab[TS_MAX_RANK];
} eterm;

/* One operand while it is being combined: its value and a label per axis. */
typedef struct eop {
    ts_value *v;
    eterm t;
} eop;

static bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* Parse one term s[0..len) for an operand of rank `rank` (-1 for the
 * output, whose ellipsis has the full ell_rank). */
static ts_status parse_term(onnx_node *n, const char *s, size_t len, int rank, int ell_rank, eterm *t)
{
    int letters = 0, ell_at = -1;
    for (size_t i = 0; i < len; i++) letters += is_letter(s[i]);
    int e = rank < 0 ? ell_rank : rank - letters;
    t->n = 0;
    for (size_t i = 0; i < len; i++) {
        if (is_letter(s[i])) {
            if (t->n >= TS_MAX_RANK) break;
            t->lab[t->n++] = (unsigned char)s[i];
        } else if (s[i] == '.' && i + 2 < len && s[i + 1] == '.' && s[i + 2] == '.' && ell_at < 0) {
            ell_at = t->n;
            for (int j = 0; j < e && t->n < TS_MAX_RANK; j++) t->lab[t->n++] = ELL + (ell_rank - e) + j;
            i += 2;
        } else {
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "equation: unexpected '%c'", s[i]);
        }
    }
    if (ell_at < 0 && rank >= 0 && letters != rank)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "equation: term '%.*s' for an operand of rank %d", (int)len, s, rank);
    if (e < 0 || t->n > TS_MAX_RANK)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "equation: term '%.*s' does not fit rank %d", (int)len, s, rank);
    return TS_OK;
}

static bool has_label(const eterm *t, int lab)
{
    for (int i = 0; i < t->n; i++)
        if (t->lab[i] == lab) return true;
    return false;
}

/* numpy's implicit output: ellipsis dims, then the letters used exactly
 * once, in character order. */
static void implicit_output(const eop *ops, int n_ops, int ell_rank, eterm *out)
{
    int count[ELL] = {0};
    out->n = 0;
    for (int i = 0; i < ell_rank; i++) out->lab[out->n++] = ELL + i;
    for (int k = 0; k < n_ops; k++)
        for (int i = 0; i < ops[k].t.n; i++)
            if (ops[k].t.lab[i] < ELL) count[ops[k].t.lab[i]]++;
    for (int c = 0; c < ELL && out->n < TS_MAX_RANK; c++)
        if (count[c] == 1) out->lab[out->n++] = c;
}

/* The ellipsis rank of a term for an operand of rank `rank`: the dims
 * its "..." stands for (0 without one). */
static int ell_of(const char *s, size_t len, int rank)
{
    int letters = 0;
    bool ell = false;
    for (size_t i = 0; i < len; i++) {
        letters += is_letter(s[i]);
        ell |= s[i] == '.';
    }
    return ell ? rank - letters : 0;
}

/* Splits the equation (spaces ignored) into operand terms and the
 * output term; the implicit form ("ij,jk") gets numpy's output. */
static ts_status parse_equation(onnx_node *n, const char *eq, eop *ops, int n_ops, eterm *out)
{
    char buf[512];
    size_t len = 0, at[MAX_TERMS], span[MAX_TERMS];
    for (const char *p = eq; *p; p++)
        if (*p != ' ' && len + 1 < sizeof buf) buf[len++] = *p;
    buf[len] = 0;
    char *arrow = strstr(buf, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - buf) : len, start = 0;
    int k = 0, ell_rank = 0;
    for (size_t i = 0; i <= lhs_len; i++) {
        if (i < lhs_len && buf[i] != ',') continue;
        if (k >= n_ops) return onnx_fail(n, TS_ERR_INVALID_MODEL, "equation '%s' has more terms than inputs", eq);
        at[k] = start;
        span[k] = i - start;
        int e = ell_of(buf + start, span[k], ops[k].v->type.rank);
        ell_rank = e > ell_rank ? e : ell_rank;
        k++;
        start = i + 1;
    }
    if (k != n_ops) return onnx_fail(n, TS_ERR_INVALID_MODEL, "equation '%s' has %d terms for %d inputs", eq, k, n_ops);
    for (int i = 0; i < n_ops; i++) TS_TRY(parse_term(n, buf + at[i], span[i], ops[i].v->type.rank, ell_rank, &ops[i].t));
    if (!arrow) {
        implicit_output(ops, n_ops, ell_rank, out);
        return TS_OK;
    }
    TS_TRY(parse_term(n, arrow + 2, strlen(arrow + 2), -1, ell_rank, out));
    for (int i = 0; i < out->n; i++) {
        bool found = false;
        for (int j = 0; j < n_ops; j++) found |= has_label(&ops[j].t, out->lab[i]);
        if (!found) return onnx_fail(n, TS_ERR_INVALID_MODEL, "equation '%s': an output label is in no input", eq);
    }
    return TS_OK;
}

/* ---- assembling ------------------------------------------------------------- */

/* Sum out axis `ax` of op (dropping its label). */
static void sum_axis(onnx_node *n, eop *op, int ax)
{
    int64_t a = ax;
    op->v = ts_b_reduce(onnx_b(n), TS_OP_REDUCE_SUM, op->v, 1, &a, false);
    for (int i = ax; i + 1 < op->t.n; i++) op->t.lab[i] = op->t.lab[i + 1];
    op->t.n--;
}

/* A label repeated within one operand (`ii`) takes the diagonal: mask
 * with iota(p) == iota(q), then sum out q. */
static void take_diagonals(onnx_node *n, eop *op)
{
    ts_builder *b = onnx_b(n);
    for (int p = 0; p < op->t.n && op->v; p++)
        for (int q = op->t.n - 1; q > p && op->v; q--) {
            if (op->t.lab[q] != op->t.lab[p]) continue;
            ts_value *io[2];
            for (int k = 0; k < 2; k++) io[k] = ts_b_iota(b, TS_DTYPE_I64, op->v->type.rank, op->v->type.dims, k ? q : p);
            ts_value *mask = ts_b_cast(b, bin(n, TS_OP_EQ, io[0], io[1]), op->v->type.dtype);
            op->v = bin(n, TS_OP_MUL, op->v, mask);
            sum_axis(n, op, q);
        }
}

/* Whether label lab is still needed by operands from..n_ops-1 or the output. */
static bool needed(const eop *ops, int from, int n_ops, const eterm *out, int lab)
{
    if (has_label(out, lab)) return true;
    for (int k = from; k < n_ops; k++)
        if (has_label(&ops[k].t, lab)) return true;
    return false;
}

/* Sum out the labels of op that nothing after it (nor `other`) uses. */
static void sum_unused(onnx_node *n, eop *op, const eop *ops, int from, int n_ops, const eterm *out, const eterm *other)
{
    for (int i = op->t.n - 1; i >= 0 && op->v; i--)
        if (!needed(ops, from, n_ops, out, op->t.lab[i]) && !(other && has_label(other, op->t.lab[i]))) sum_axis(n, op, i);
}

/* Broadcast op's size-1 axes to the label sizes (ellipsis broadcasting). */
static void widen(onnx_node *n, eop *op, const eop *ops, int n_ops)
{
    if (!op->v) return;
    ts_dim dims[TS_MAX_RANK];
    for (int i = 0; i < op->t.n; i++) {
        dims[i] = op->v->type.dims[i];
        for (int k = 0; k < n_ops && ts_dim_eq(dims[i], ts_dim_const(1)); k++)
            for (int j = 0; j < ops[k].t.n; j++)
                if (ops[k].t.lab[j] == op->t.lab[i] && ops[k].v) dims[i] = ops[k].v->type.dims[j];
    }
    op->v = ts_b_broadcast_to(onnx_b(n), op->v, op->t.n, dims);
}

/* acc := dot(acc, b): shared labels still needed later are batch axes,
 * the other shared ones are contracted. */
static void contract(onnx_node *n, eop *acc, const eop *b, const eop *ops, int next, int n_ops, const eterm *out)
{
    int64_t lb[TS_MAX_RANK], rb[TS_MAX_RANK], lc[TS_MAX_RANK], rc[TS_MAX_RANK];
    int nb = 0, nc = 0;
    eterm res = {0};
    for (int i = 0; i < acc->t.n; i++)
        for (int j = 0; j < b->t.n; j++) {
            if (acc->t.lab[i] != b->t.lab[j]) continue;
            if (needed(ops, next, n_ops, out, acc->t.lab[i])) {
                res.lab[res.n++] = acc->t.lab[i];
                lb[nb] = i;
                rb[nb++] = j;
            } else {
                lc[nc] = i;
                rc[nc++] = j;
            }
        }
    for (int i = 0; i < acc->t.n; i++)
        if (!has_label(&b->t, acc->t.lab[i])) res.lab[res.n++] = acc->t.lab[i];
    for (int j = 0; j < b->t.n; j++)
        if (!has_label(&acc->t, b->t.lab[j])) res.lab[res.n++] = b->t.lab[j];
    acc->v = ts_b_dot(onnx_b(n), acc->v, b->v, nb, lb, rb, nc, lc, rc);
    acc->t = res;
}

/* Diagonals and private sums per operand, then left-to-right dots, then
 * a transpose into the output's order. */
static ts_status onnx_einsum(onnx_node *n)
{
    const char *eq = onnx_attr_string(n, "equation", NULL);
    TS_TRY(onnx_status(n));
    if (!eq) return onnx_fail(n, TS_ERR_INVALID_MODEL, "the equation attribute is required");
    if (n->n_in < 1 || n->n_in > MAX_TERMS) return onnx_unsupported(n, "%d inputs (1..%d)", n->n_in, MAX_TERMS);
    eop ops[MAX_TERMS];
    eterm out;
    for (int i = 0; i < n->n_in; i++) ops[i].v = onnx_input(n, i);
    TS_TRY(onnx_status(n));
    TS_TRY(parse_equation(n, eq, ops, n->n_in, &out));
    for (int i = 0; i < n->n_in; i++) {
        take_diagonals(n, &ops[i]);
        widen(n, &ops[i], ops, n->n_in);
    }
    eop acc = ops[0];
    for (int i = 1; i < n->n_in; i++) {
        sum_unused(n, &acc, ops, i, n->n_in, &out, NULL);
        eop b = ops[i];
        sum_unused(n, &b, ops, i + 1, n->n_in, &out, &acc.t);
        contract(n, &acc, &b, ops, i + 1, n->n_in, &out);
    }
    sum_unused(n, &acc, ops, n->n_in, n->n_in, &out, NULL);
    TS_TRY(onnx_status(n));
    int64_t perm[TS_MAX_RANK];
    for (int i = 0; i < out.n; i++)
        for (int j = 0; j < acc.t.n; j++)
            if (acc.t.lab[j] == out.lab[i]) perm[i] = j;
    if (out.n != acc.t.n) return onnx_fail(n, TS_ERR_INVALID_MODEL, "equation '%s': output labels repeat", eq);
    return onnx_set_out(n, 0, ts_b_transpose(onnx_b(n), acc.v, perm));
}

const onnx_op_entry onnx_ops_einsum[] = {
    {"Einsum", 12, INT_MAX, onnx_einsum},
    {NULL, 0, 0, NULL},
};
