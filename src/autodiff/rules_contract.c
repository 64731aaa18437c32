/* rules_contract.c — derivatives of dot and conv. Both are bilinear: the
 * forward rule is the primitive on (tangent, other) plus (other, tangent);
 * the reverse rules are the transposes XLA and JAX use. dot: contract the
 * cotangent with the other operand over the result's axes that operand
 * gave, then permute into the operand's axis order. conv: the input's
 * cotangent is a conv of the cotangent (dilated by the strides) with the
 * kernel flipped and its channels swapped per group; the kernel's is a conv
 * of the input with the cotangent as its kernel, the group folded into the
 * input's feature axis so that feature groups do the pairing. */
#include "autodiff/ad_int.h"

#include <string.h>

static ts_value *dot(ts_builder *b, ts_value *x, ts_value *y, int nb, const int64_t *xb, const int64_t *yb, int nc,
                     const int64_t *xc, const int64_t *yc)
{
    return ts_b_dot(b, x, y, nb, xb, yb, nc, xc, yc);
}

static bool in_list(int64_t v, int n, const int64_t *l)
{
    for (int i = 0; i < n; i++)
        if (l[i] == v) return true;
    return false;
}

/* Axes of a rank-r operand in neither list, ascending. */
static int free_axes(int r, int n1, const int64_t *l1, int n2, const int64_t *l2, int64_t *out)
{
    int k = 0;
    for (int i = 0; i < r; i++)
        if (!in_list(i, n1, l1) && !in_list(i, n2, l2)) out[k++] = i;
    return k;
}

/* The cotangent of one dot operand ("me"; "other" is the other one):
 * dot(ct, other) or dot(other, ct), then permuted to me's axes. */
static ts_value *dot_back(ts_builder *b, const ts_node *n, ts_value *ct, int me)
{
    int nb = 0, nc = 0;
    const int64_t *lb = ts_node_ints(n, "lhs_batch", &nb), *rb = ts_node_ints(n, "rhs_batch", &nb);
    const int64_t *lc = ts_node_ints(n, "lhs_contract", &nc), *rc = ts_node_ints(n, "rhs_contract", &nc);
    const int64_t *mb = me ? rb : lb, *ob = me ? lb : rb, *mc = me ? rc : lc, *oc = me ? lc : rc;
    ts_value *mine = n->in[me], *other = n->in[1 - me];
    int64_t mfree[TS_MAX_RANK], ofree[TS_MAX_RANK], cb[TS_MAX_RANK], cf[TS_MAX_RANK];
    int nmf = free_axes(mine->type.rank, nb, mb, nc, mc, mfree);
    int nof = free_axes(other->type.rank, nb, ob, nc, oc, ofree);
    for (int i = 0; i < nb; i++) cb[i] = i;
    /* ct's axes that the other operand's free axes gave */
    int64_t ofirst = me ? nb : nb + nmf;
    for (int i = 0; i < nof; i++) cf[i] = ofirst + i;
    ts_value *r = me ? dot(b, other, ct, nb, ob, cb, nof, ofree, cf) : dot(b, ct, other, nb, cb, ob, nof, cf, ofree);
    /* r's axes: batch, then (me = lhs) ct's lhs-free axes and the other's
     * contracted axes in its order, or (me = rhs) the other's contracted
     * axes in its order and ct's rhs-free axes */
    int64_t oc_sorted[TS_MAX_RANK], pos[TS_MAX_RANK];
    free_axes(other->type.rank, nb, ob, nof, ofree, oc_sorted);
    for (int i = 0; i < nb; i++) pos[mb[i]] = i;
    int64_t free0 = me ? nb + nc : nb, con0 = me ? nb : nb + nmf;
    for (int i = 0; i < nmf; i++) pos[mfree[i]] = free0 + i;
    for (int k = 0; k < nc; k++)
        for (int s = 0; s < nc; s++)
            if (oc_sorted[s] == oc[k]) pos[mc[k]] = con0 + s;
    return ts_b_transpose(b, r, pos);
}

/* ---- conv ---------------------------------------------------------------------------- */

typedef struct conv_attrs {
    int k, c;
    const int64_t *st, *lo, *hi, *ld, *rd;
    int64_t groups;
} conv_attrs;

static conv_attrs conv_read(const ts_node *n)
{
    conv_attrs a;
    a.st = ts_node_ints(n, "strides", &a.k);
    a.lo = ts_node_ints(n, "pad_lo", &a.c);
    a.hi = ts_node_ints(n, "pad_hi", &a.c);
    a.ld = ts_node_ints(n, "lhs_dilation", &a.c);
    a.rd = ts_node_ints(n, "rhs_dilation", &a.c);
    a.groups = ts_node_int(n, "groups");
    return a;
}

static ts_value *conv(ts_builder *b, ts_value *x, ts_value *w, int k, const int64_t *st, const int64_t *lo,
                      const int64_t *hi, const int64_t *ld, const int64_t *rd, int64_t groups)
{
    ts_graph *g = ts_builder_graph(b);
    ts_attr *a = ts_b_attrs(b, TS_OP_CONV);
    if (!a) return NULL;
    ts_status s = ts_attr_set_ints(g, TS_OP_CONV, a, "strides", k, st);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_CONV, a, "pad_lo", k, lo);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_CONV, a, "pad_hi", k, hi);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_CONV, a, "lhs_dilation", k, ld);
    if (s == TS_OK) s = ts_attr_set_ints(g, TS_OP_CONV, a, "rhs_dilation", k, rd);
    if (s == TS_OK) s = ts_attr_set_int(g, TS_OP_CONV, a, "groups", groups);
    if (s != TS_OK) return ts_builder_fail(b, s, "conv: bad attributes"), NULL;
    ts_value *in[2] = {x, w};
    return ts_b_node(b, TS_OP_CONV, 2, in, a);
}

/* (n - 1) d + 1 for a constant n, else -1 */
static int64_t dilated(ts_dim n, int64_t d) { return ts_dim_is_const(n) ? (n.c - 1) * d + 1 : -1; }

static bool spatial_known(ts_builder *b, const ts_node *n, int k)
{
    for (int i = 0; i < k; i++)
        if (!ts_dim_is_const(n->in[0]->type.dims[2 + i]) || !ts_dim_is_const(n->in[1]->type.dims[2 + i]) ||
            !ts_dim_is_const(n->out[0]->type.dims[2 + i])) {
            ts_builder_fail(b, TS_ERR_UNSUPPORTED, "autodiff: conv: the gradient needs static spatial sizes");
            return false;
        }
    return true;
}

/* dx = conv(ct, flip(w with O and C swapped per group)) with the roles of
 * strides and input dilation exchanged. */
static ts_value *conv_back_x(ts_builder *b, const ts_node *n, ts_value *ct)
{
    conv_attrs a = conv_read(n);
    if (!spatial_known(b, n, a.k)) return NULL;
    ts_value *w = n->in[1];
    const ts_dim *wd = w->type.dims, *xd = n->in[0]->type.dims, *yd = n->out[0]->type.dims;
    int r = w->type.rank;
    int64_t pb[TS_MAX_RANK], pa[TS_MAX_RANK], perm[TS_MAX_RANK], flip[TS_MAX_RANK];
    for (int i = 0; i < a.k; i++) {
        int64_t xdil = dilated(xd[2 + i], a.ld[i]), wdil = dilated(wd[2 + i], a.rd[i]);
        int64_t ydil = dilated(yd[2 + i], a.st[i]);
        pb[i] = wdil - a.lo[i] - 1;
        pa[i] = xdil + wdil - 1 - ydil - pb[i];
        flip[i] = 2 + i;
    }
    /* [O, C/G, k] -> [G, O/G, C/G, k] -> [G, C/G, O/G, k] -> [C, O/G, k] */
    ts_err e = {0};
    ts_dim gd = ts_dim_const(a.groups), og, cc, d4[TS_MAX_RANK + 1];
    ts_symtab *syms = ts_builder_graph(b)->syms;
    if (ts_dim_div(syms, wd[0], gd, &og, &e) != TS_OK || ts_dim_mul(syms, wd[1], gd, &cc, &e) != TS_OK)
        return ts_builder_fail(b, e.code, "%s", e.msg), NULL;
    d4[0] = gd, d4[1] = og, d4[2] = wd[1];
    memcpy(d4 + 3, wd + 2, sizeof *wd * (size_t)a.k);
    perm[0] = 0, perm[1] = 2, perm[2] = 1;
    for (int i = 0; i < a.k; i++) perm[3 + i] = 3 + i;
    ts_value *w4 = ts_b_transpose(b, ts_b_reshape(b, w, r + 1, d4), perm);
    ts_dim d3[TS_MAX_RANK];
    d3[0] = cc, d3[1] = og;
    memcpy(d3 + 2, wd + 2, sizeof *wd * (size_t)a.k);
    ts_value *wt = ts_b_reshape(b, w4, r, d3);
    ts_attr *ra = ts_b_attrs(b, TS_OP_REVERSE);
    if (!ra) return NULL;
    ts_status s = ts_attr_set_ints(ts_builder_graph(b), TS_OP_REVERSE, ra, "axes", a.k, flip);
    if (s != TS_OK) return ts_builder_fail(b, s, "reverse: bad attributes"), NULL;
    ts_value *wf = ts_b_node(b, TS_OP_REVERSE, 1, &wt, ra);
    return conv(b, ct, wf, a.k, a.ld, pb, pa, a.st, a.rd, a.groups);
}

/* dw = conv(x arranged [C/G, G N, s], ct arranged [O, N, o]) with feature
 * groups G, strides and kernel dilation exchanged; [C/G, O, k] -> [O, C/G, k]. */
static ts_value *conv_back_w(ts_builder *b, const ts_node *n, ts_value *ct)
{
    conv_attrs a = conv_read(n);
    if (!spatial_known(b, n, a.k)) return NULL;
    ts_value *x = n->in[0];
    const ts_dim *xd = x->type.dims, *wd = n->in[1]->type.dims, *yd = n->out[0]->type.dims;
    int r = x->type.rank;
    int64_t ph[TS_MAX_RANK], perm[TS_MAX_RANK + 1];
    for (int i = 0; i < a.k; i++)
        ph[i] = (dilated(yd[2 + i], a.st[i]) - dilated(xd[2 + i], a.ld[i])) +
                (dilated(wd[2 + i], a.rd[i]) - a.lo[i] - 1);
    ts_err e = {0};
    ts_symtab *syms = ts_builder_graph(b)->syms;
    ts_dim gd = ts_dim_const(a.groups), cg, gn, d4[TS_MAX_RANK + 1], d3[TS_MAX_RANK];
    if (ts_dim_div(syms, xd[1], gd, &cg, &e) != TS_OK || ts_dim_mul(syms, xd[0], gd, &gn, &e) != TS_OK)
        return ts_builder_fail(b, e.code, "%s", e.msg), NULL;
    /* x [N, C, s] -> [N, G, C/G, s] -> [C/G, G, N, s] -> [C/G, G N, s] */
    d4[0] = xd[0], d4[1] = gd, d4[2] = cg;
    memcpy(d4 + 3, xd + 2, sizeof *xd * (size_t)a.k);
    perm[0] = 2, perm[1] = 1, perm[2] = 0;
    for (int i = 0; i < a.k; i++) perm[3 + i] = 3 + i;
    ts_value *x4 = ts_b_transpose(b, ts_b_reshape(b, x, r + 1, d4), perm);
    d3[0] = cg, d3[1] = gn;
    memcpy(d3 + 2, xd + 2, sizeof *xd * (size_t)a.k);
    int64_t swap[TS_MAX_RANK];
    swap[0] = 1, swap[1] = 0;
    for (int i = 0; i < a.k; i++) swap[2 + i] = 2 + i;
    ts_value *y = conv(b, ts_b_reshape(b, x4, r, d3), ts_b_transpose(b, ct, swap), a.k, a.rd, a.lo, ph, a.ld, a.st,
                       a.groups);
    return ts_b_transpose(b, y, swap);
}

void ad_vjp_contract(ts_builder *b, ts_node *n, ts_value *const *ct, const bool *want, ts_value **dx)
{
    if (!ct[0]) return;
    for (int i = 0; i < 2; i++) {
        if (!want[i]) continue;
        if (n->op == TS_OP_DOT) dx[i] = dot_back(b, n, ct[0], i);
        else dx[i] = i == 0 ? conv_back_x(b, n, ct[0]) : conv_back_w(b, n, ct[0]);
    }
}

void ad_jvp_contract(ts_builder *b, ts_node *n, ts_value *const *t, ts_value **dy)
{
    for (int i = 0; i < 2; i++)
        if (t[i]) {
            ts_value *in[2] = {n->in[0], n->in[1]};
            in[i] = t[i];
            dy[0] = ad_add(b, dy[0], ad_rebuild(b, n, 2, in));
        }
}
