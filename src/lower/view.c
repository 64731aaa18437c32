/* view.c — the analysis fusion and lowering share, below both (view.h):
 * values read in place through layout ops as strided views (D26), and the
 * roles of a contraction's operand axes. Fusion asks it which operands a
 * template dot can read in place; lowering asks it their geometry. */
#include "lower/view.h"

/* ---- layout ops as index arithmetic ---------------------------------------------- */

bool ts_view_op(const ts_node *n)
{
    switch (n->op) {
    case TS_OP_RESHAPE: case TS_OP_BROADCAST: case TS_OP_TRANSPOSE: case TS_OP_SLICE:
    case TS_OP_REVERSE: case TS_OP_CONCAT: case TS_OP_PAD:
        return true;
    default:
        return false;
    }
}

/* ---- strided views (D26) ------------------------------------------------------------- */

static bool static_dims(const ts_value *v)
{
    for (int i = 0; i < v->type.rank; i++)
        if (!ts_dim_is_const(v->type.dims[i]) || v->type.dims[i].c <= 0) return false;
    return true;
}

static void row_major(const ts_value *v, ts_sview *out)
{
    out->base = v;
    out->off = 0;
    int64_t s = 1;
    for (int i = v->type.rank - 1; i >= 0; i--) out->stride[i] = s, s *= v->type.dims[i].c;
}

/* A reshape of the strided view `in` (of value x) into v's dims: groups of
 * axes with equal products map onto each other; each input group must be
 * one strided run (axes of extent 1 have no stride to honour). */
static bool reshape_view(const ts_value *x, const ts_sview *in, const ts_value *v, ts_sview *out)
{
    int ri = x->type.rank, ro = v->type.rank, i = 0, j = 0;
    const ts_dim *di = x->type.dims, *dd = v->type.dims;
    for (int k = 0; k < ro; k++) out->stride[k] = 0;
    while (i < ri || j < ro) {
        while (i < ri && di[i].c == 1) i++;
        while (j < ro && dd[j].c == 1) j++;
        if (i == ri && j == ro) break;
        if (i == ri || j == ro) return false;
        int i0 = i, j0 = j;
        int64_t pi = di[i++].c, po = dd[j++].c;
        while (pi != po) {
            if (pi < po) {
                if (i == ri) return false;
                pi *= di[i++].c;
            } else {
                if (j == ro) return false;
                po *= dd[j++].c;
            }
        }
        int64_t last = -1, s = 0;   /* the group's innermost stride; contiguity of the rest */
        for (int k = i - 1; k >= i0; k--) {
            if (di[k].c == 1) continue;
            if (last >= 0 && in->stride[k] != s) return false;
            if (last < 0) last = in->stride[k], s = last;
            s *= di[k].c;
        }
        s = last;
        for (int k = j - 1; k >= j0; k--) out->stride[k] = s, s *= dd[k].c;
    }
    out->base = in->base;
    out->off = in->off;
    return true;
}

bool ts_view_strided(const bool *stored, const ts_value *v, ts_sview *out)
{
    if (!static_dims(v) || v->type.rank > TS_MAX_RANK) return false;
    if (stored[v->id]) {
        row_major(v, out);
        return true;
    }
    const ts_node *n = v->def;
    if (!n || (n->op != TS_OP_TRANSPOSE && n->op != TS_OP_RESHAPE && n->op != TS_OP_SLICE)) return false;
    ts_sview in;
    if (!ts_view_strided(stored, n->in[0], &in)) return false;
    int cnt = 0;
    switch (n->op) {
    case TS_OP_TRANSPOSE: {
        const int64_t *perm = ts_node_ints(n, "perm", &cnt);
        if (cnt != v->type.rank) return false;
        *out = in;
        for (int i = 0; i < cnt; i++) out->stride[i] = in.stride[perm[i]];
        return true;
    }
    case TS_OP_SLICE: {
        int cst = 0;
        const ts_dim *start = ts_node_dims(n, "start", &cnt);
        const int64_t *step = ts_node_ints(n, "stride", &cst);
        if (cnt != v->type.rank || (cst && cst != cnt)) return false;
        *out = in;
        for (int i = 0; i < cnt; i++) {
            if (!ts_dim_is_const(start[i])) return false;
            out->off += start[i].c * in.stride[i];
            out->stride[i] = in.stride[i] * (cst ? step[i] : 1);
        }
        return true;
    }
    default: return reshape_view(n->in[0], &in, v, out);
    }
}

bool ts_view_into(const ts_value *d, const ts_value *w, ts_sview *out)
{
    if (!static_dims(w)) return false;
    ts_sview cur;
    row_major(w, &cur);
    /* from w back to d: each op's operand axes in w's buffer */
    for (const ts_value *y = w; y != d;) {
        const ts_node *n = y->def;
        if (!n || (n->op != TS_OP_TRANSPOSE && n->op != TS_OP_RESHAPE) || !static_dims(n->in[0])) return false;
        const ts_value *x = n->in[0];
        ts_sview nx = cur;
        if (n->op == TS_OP_TRANSPOSE) {
            int cnt = 0;
            const int64_t *perm = ts_node_ints(n, "perm", &cnt);
            if (cnt != y->type.rank) return false;
            for (int i = 0; i < cnt; i++) nx.stride[perm[i]] = cur.stride[i];
        } else if (!reshape_view(y, &cur, x, &nx)) return false;
        cur = nx;
        y = x;
    }
    *out = cur;
    return true;
}

/* ---- contraction roles -------------------------------------------------------- */

/* Consecutive increasing axes merge into one strided index. */
static bool merges(const ts_role *r)
{
    for (int i = 0; i + 1 < r->n; i++)
        if (r->ax[i + 1] != r->ax[i] + 1) return false;
    return true;
}

void ts_dot_roles(const ts_node *n, ts_role *lb, ts_role *rb, ts_role *lc, ts_role *rc, ts_role *lf, ts_role *rf)
{
    int cnt;
    const char *names[4] = {"lhs_batch", "rhs_batch", "lhs_contract", "rhs_contract"};
    ts_role *rs[4] = {lb, rb, lc, rc};
    bool used[2][TS_MAX_RANK] = {{false}};
    for (int k = 0; k < 4; k++) {
        const int64_t *a = ts_node_ints(n, names[k], &cnt);
        rs[k]->n = cnt;
        for (int i = 0; i < cnt; i++) rs[k]->ax[i] = a[i], used[k % 2][a[i]] = true;
    }
    lf->n = rf->n = 0;
    for (int i = 0; i < n->in[0]->type.rank; i++)
        if (!used[0][i]) lf->ax[lf->n++] = i;
    for (int i = 0; i < n->in[1]->type.rank; i++)
        if (!used[1][i]) rf->ax[rf->n++] = i;
}

bool ts_contract_template(const ts_node *n)
{
    if (n->n_out != 1 || n->out[0]->type.dtype != TS_DTYPE_F32) return false;
    if (n->op == TS_OP_CONV) return n->in[0]->type.rank == 4 || n->in[0]->type.rank == 3;
    if (n->op != TS_OP_DOT) return false;
    ts_role lb, rb, lc, rc, lf, rf;
    ts_dot_roles(n, &lb, &rb, &lc, &rc, &lf, &rf);
    return merges(&lb) && merges(&rb) && merges(&lc) && merges(&rc) && merges(&lf) && merges(&rf);
}

/* A role of a strided view: its axes of extent > 1 must form one run
 * (stride[a] == stride[b] * dim[b] for consecutive a, b); *ext and
 * *stride are the merged index's (an empty role: 1 and 0). */
bool ts_view_role(const ts_value *v, const ts_sview *sv, const ts_role *r, int64_t *ext, int64_t *stride)
{
    int64_t e = 1, s = 0, inner = -1;
    for (int k = r->n - 1; k >= 0; k--) {
        const int64_t a = r->ax[k], d = v->type.dims[a].c;
        if (d == 1) continue;
        if (inner < 0) s = sv->stride[a], inner = a;
        else if (sv->stride[a] != sv->stride[inner] * e) return false;
        e *= d;
    }
    *ext = e;
    *stride = inner < 0 ? 0 : s;
    return true;
}

bool ts_dot_operand_strided(const ts_node *n, int i, const ts_sview *sv)
{
    ts_role rl[2][3];   /* batch, contracted, free of each operand */
    ts_dot_roles(n, &rl[0][0], &rl[1][0], &rl[0][1], &rl[1][1], &rl[0][2], &rl[1][2]);
    int64_t e, s;
    for (int k = 0; k < 3; k++)
        if (!ts_view_role(n->in[i], sv, &rl[i][k], &e, &s)) return false;
    return true;
}

/* The result's axes: batch, then lhs free (rows), then rhs free (columns). */
void ts_dot_result_roles(const ts_node *n, ts_role *b, ts_role *r, ts_role *cl)
{
    ts_role lb, rb, lc, rc, lf, rf;
    ts_dot_roles(n, &lb, &rb, &lc, &rc, &lf, &rf);
    int a = 0;
    b->n = lb.n, r->n = lf.n, cl->n = rf.n;
    for (int i = 0; i < lb.n; i++) b->ax[i] = a++;
    for (int i = 0; i < lf.n; i++) r->ax[i] = a++;
    for (int i = 0; i < rf.n; i++) cl->ax[i] = a++;
}

bool ts_dot_result_strided(const ts_node *n, const ts_sview *sv)
{
    ts_role b, r, cl;
    ts_dot_result_roles(n, &b, &r, &cl);
    int64_t e, s, ec, sc;
    return ts_view_role(n->out[0], sv, &b, &e, &s) && ts_view_role(n->out[0], sv, &r, &e, &s) &&
           ts_view_role(n->out[0], sv, &cl, &ec, &sc) && (sc == 1 || ec == 1);
}


static bool unit_dim(ts_dim d) { return ts_dim_is_const(d) && d.c == 1; }

bool ts_view_same_layout(const ts_value *a, const ts_value *b)
{
    int i = 0, j = 0;
    for (;;) {
        while (i < a->type.rank && unit_dim(a->type.dims[i])) i++;
        while (j < b->type.rank && unit_dim(b->type.dims[j])) j++;
        if (i == a->type.rank || j == b->type.rank) return i == a->type.rank && j == b->type.rank;
        if (!ts_dim_eq(a->type.dims[i++], b->type.dims[j++])) return false;
    }
}

bool ts_view_same_shape(const ts_value *a, const ts_value *b)
{
    if (a->type.rank != b->type.rank) return false;
    for (int i = 0; i < a->type.rank; i++)
        if (!ts_dim_eq(a->type.dims[i], b->type.dims[i])) return false;
    return true;
}

/* seen: 1 when a node was walked aligned, 2 when not (the stricter walk,
 * which covers both). */
static bool aligned_walk(const bool *stored, const ts_value *v, const ts_value *top, const ts_value *w, bool aligned,
                         unsigned char *seen, bool *hit)
{
    if (v == w) {
        *hit = true;
        return aligned;
    }
    const ts_node *n = v->def;
    if (!n || (v != top && stored[v->id])) return true;
    if ((seen[n->id] & 2) || (aligned && seen[n->id])) return true;
    seen[n->id] |= aligned ? 1 : 2;
    const bool ew = (ts_op_get(n->op)->flags & TS_OPF_EW) && n->op != TS_OP_BITCAST && ts_view_same_shape(v, top);
    for (int i = 0; i < n->n_in; i++)
        if (!aligned_walk(stored, n->in[i], top, w, aligned && ew, seen, hit)) return false;
    return true;
}

bool ts_view_reads_aligned(const bool *stored, const ts_value *v, const ts_value *w, unsigned char *seen, bool *hit)
{
    *hit = false;
    return aligned_walk(stored, v, v, w, true, seen, hit);
}
