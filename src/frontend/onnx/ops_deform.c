/* ops_deform.c — ONNX DeformConv, assembled from gather, floor, select and
 * dot.
 *
 * Each kernel tap t of output position o samples x at
 * p = o*stride - pad + t*dilation + offset[n, og, t, :, o], by multilinear
 * interpolation between the 2^k integer corners around p (corners outside
 * x read 0). Sampling is a gather from x flattened to one axis; the
 * sampled values [N, C, T, O...] (T = kernel taps), times the mask, are
 * then contracted with the weights by one dot per group — the im2col form
 * of a convolution. */
#include "frontend/onnx/onnx.h"

static ts_value *scalar(onnx_node *n, ts_dtype dt, double v) { return ts_b_scalar(onnx_b(n), dt, v); }

static ts_value *bin(onnx_node *n, ts_op op, ts_value *x, ts_value *y) { return ts_b_binary(onnx_b(n), op, x, y); }

/* The sizes the assembly needs, all known (only N may be symbolic). */
typedef struct dgeom {
    int k;                        /* spatial axes */
    int64_t C, G, cog, T, S;      /* channels, offset groups, channels per offset group, taps, input spatial size */
    int64_t D[TS_MAX_RANK], K[TS_MAX_RANK], O[TS_MAX_RANK];
    int64_t strides[TS_MAX_RANK], dil[TS_MAX_RANK], pad[TS_MAX_RANK];
} dgeom;

static ts_status known(onnx_node *n, ts_dim d, const char *what, int64_t *out)
{
    if (!ts_dim_is_const(d)) return onnx_unsupported(n, "%s has a symbolic size: only the batch may be symbolic", what);
    *out = d.c;
    return TS_OK;
}

static ts_status ints_k(onnx_node *n, const char *name, int k, int64_t def, int64_t *out)
{
    const int64_t *v;
    int cnt = onnx_attr_ints(n, name, &v);
    TS_TRY(onnx_status(n));
    if (cnt >= 0 && cnt != k) return onnx_fail(n, TS_ERR_INVALID_MODEL, "%s has %d entries, expected %d", name, cnt, k);
    for (int i = 0; i < k; i++) out[i] = cnt < 0 ? def : v[i];
    return TS_OK;
}

static ts_status read_geom(onnx_node *n, const ts_value *x, const ts_value *w, const ts_value *off, dgeom *g)
{
    g->k = x->type.rank - 2;
    int k = g->k;
    if (k < 1 || w->type.rank != k + 2 || off->type.rank != k + 2)
        return onnx_fail(n, TS_ERR_INVALID_MODEL, "X, W and offset must have rank >= 3 and agree");
    int64_t pads[2 * TS_MAX_RANK];
    g->G = onnx_attr_int(n, "offset_group", 1);
    TS_TRY(ints_k(n, "strides", k, 1, g->strides));
    TS_TRY(ints_k(n, "dilations", k, 1, g->dil));
    TS_TRY(ints_k(n, "pads", 2 * k, 0, pads));
    TS_TRY(known(n, x->type.dims[1], "the channel axis", &g->C));
    g->T = g->S = 1;
    for (int i = 0; i < k; i++) {
        TS_TRY(known(n, x->type.dims[i + 2], "a spatial axis", &g->D[i]));
        TS_TRY(known(n, w->type.dims[i + 2], "the kernel", &g->K[i]));
        TS_TRY(known(n, off->type.dims[i + 2], "the offset", &g->O[i]));
        g->pad[i] = pads[i];
        g->T *= g->K[i];
        g->S *= g->D[i];
    }
    const int64_t *ks;   /* kernel_shape only restates the weights' kernel */
    int cnt = onnx_attr_ints(n, "kernel_shape", &ks);
    for (int i = 0; cnt >= 0 && i < k; i++)
        if (cnt != k || ks[i] != g->K[i])
            return onnx_fail(n, TS_ERR_INVALID_MODEL, "kernel_shape does not match the weights' kernel");
    if (g->G < 1 || g->C % g->G != 0) return onnx_fail(n, TS_ERR_INVALID_MODEL, "offset_group must divide the channels");
    g->cog = g->C / g->G;
    return TS_OK;
}

/* Dims [N, G, a, T, O1, ...] with a given third entry. */
static int sample_dims(const ts_value *x, const dgeom *g, int64_t third, ts_dim *dims)
{
    dims[0] = x->type.dims[0];
    dims[1] = ts_dim_const(g->G);
    dims[2] = ts_dim_const(third);
    dims[3] = ts_dim_const(g->T);
    for (int i = 0; i < g->k; i++) dims[i + 4] = ts_dim_const(g->O[i]);
    return g->k + 4;
}

/* Sampling coordinate along spatial axis d: [N, G, 1, T, O...]. */
static ts_value *coordinate(onnx_node *n, const ts_value *x, ts_value *off, const dgeom *g, int d)
{
    ts_builder *b = onnx_b(n);
    ts_dtype dt = x->type.dtype;
    int k = g->k;
    ts_dim ko[2 * TS_MAX_RANK], dims[TS_MAX_RANK + 4], start[TS_MAX_RANK + 4], limit[TS_MAX_RANK + 4];
    for (int i = 0; i < k; i++) {
        ko[i] = ts_dim_const(g->K[i]);
        ko[k + i] = ts_dim_const(g->O[i]);
    }
    /* o*stride - pad + t*dilation over [K..., O...] */
    ts_value *base = bin(n, TS_OP_ADD, bin(n, TS_OP_MUL, ts_b_iota(b, dt, 2 * k, ko, d), scalar(n, dt, (double)g->dil[d])),
                         bin(n, TS_OP_MUL, ts_b_iota(b, dt, 2 * k, ko, k + d), scalar(n, dt, (double)g->strides[d])));
    base = bin(n, TS_OP_SUB, base, scalar(n, dt, (double)g->pad[d]));
    int r = sample_dims(x, g, 1, dims);
    base = ts_b_reshape(b, base, r - 3, dims + 3);
    /* offset viewed as [N, G, T, k, O...]; this axis' slice */
    ts_dim ov[TS_MAX_RANK + 4];
    ov[0] = x->type.dims[0];
    ov[1] = ts_dim_const(g->G);
    ov[2] = ts_dim_const(g->T);
    ov[3] = ts_dim_const(k);
    for (int i = 0; i < k; i++) ov[i + 4] = ts_dim_const(g->O[i]);
    for (int i = 0; i < k + 4; i++) {
        start[i] = ts_dim_const(i == 3 ? d : 0);
        limit[i] = i == 3 ? ts_dim_const(d + 1) : ov[i];
    }
    ts_value *o = ts_b_slice(b, ts_b_reshape(b, off, k + 4, ov), start, limit, NULL);
    return bin(n, TS_OP_ADD, ts_b_reshape(b, o, r, dims), base);
}

/* ((n*C + og*cog + c) * S): the flat offset of each channel plane,
 * [N, G, cog, 1, 1...]. */
static ts_value *plane_base(onnx_node *n, const ts_value *x, const dgeom *g)
{
    ts_builder *b = onnx_b(n);
    ts_dim dims[TS_MAX_RANK + 4];
    int r = sample_dims(x, g, g->cog, dims);
    ts_dim pd[3] = {dims[0], dims[1], dims[2]};
    ts_value *v = bin(n, TS_OP_MUL, ts_b_iota(b, TS_DTYPE_I64, 3, pd, 0), scalar(n, TS_DTYPE_I64, (double)(g->C * g->S)));
    v = bin(n, TS_OP_ADD, v, bin(n, TS_OP_MUL, ts_b_iota(b, TS_DTYPE_I64, 3, pd, 1), scalar(n, TS_DTYPE_I64, (double)(g->cog * g->S))));
    v = bin(n, TS_OP_ADD, v, bin(n, TS_OP_MUL, ts_b_iota(b, TS_DTYPE_I64, 3, pd, 2), scalar(n, TS_DTYPE_I64, (double)g->S)));
    for (int i = 3; i < r; i++) dims[i] = ts_dim_const(1);
    return ts_b_reshape(b, v, r, dims);
}

/* The interpolated samples [N, G, cog, T, O...]: for each corner, the
 * gathered values times the corner's weight (0 outside x). */
static ts_value *sample(onnx_node *n, ts_value *x, ts_value *off, const dgeom *g)
{
    ts_builder *b = onnx_b(n);
    ts_dtype dt = x->type.dtype;
    ts_value *fl[TS_MAX_RANK], *fr[TS_MAX_RANK];
    for (int d = 0; d < g->k; d++) {
        ts_value *p = coordinate(n, x, off, g, d);
        ts_value *q = ts_b_unary(b, TS_OP_FLOOR, p);
        fr[d] = bin(n, TS_OP_SUB, p, q);
        fl[d] = ts_b_cast(b, q, TS_DTYPE_I64);
    }
    ts_dim flat = ts_dim_const(1);
    ts_err err = {0};
    for (int i = 0; i < x->type.rank; i++)
        if (ts_dim_mul(onnx_graph(n)->syms, flat, x->type.dims[i], &flat, &err) != TS_OK) {
            onnx_fail(n, err.code, "%s", err.msg);
            return NULL;
        }
    ts_value *xf = ts_b_reshape(b, x, 1, &flat), *base = plane_base(n, x, g), *acc = NULL;
    ts_value *one = scalar(n, dt, 1), *zero = scalar(n, dt, 0), *i0 = scalar(n, TS_DTYPE_I64, 0);
    for (int c = 0; c < 1 << g->k; c++) {
        ts_value *wgt = NULL, *ok = NULL, *pos = NULL;
        int64_t stride = g->S;
        for (int d = 0; d < g->k; d++) {
            int bit = (c >> (g->k - 1 - d)) & 1;
            stride /= g->D[d];
            ts_value *qi = bit ? bin(n, TS_OP_ADD, fl[d], scalar(n, TS_DTYPE_I64, 1)) : fl[d];
            ts_value *hi = scalar(n, TS_DTYPE_I64, (double)(g->D[d] - 1));
            ts_value *in = bin(n, TS_OP_AND, bin(n, TS_OP_LE, i0, qi), bin(n, TS_OP_LE, qi, hi));
            ts_value *cl = bin(n, TS_OP_MIN, bin(n, TS_OP_MAX, qi, i0), hi);
            ts_value *wd = bit ? fr[d] : bin(n, TS_OP_SUB, one, fr[d]);
            ts_value *sp = bin(n, TS_OP_MUL, cl, scalar(n, TS_DTYPE_I64, (double)stride));
            wgt = wgt ? bin(n, TS_OP_MUL, wgt, wd) : wd;
            ok = ok ? bin(n, TS_OP_AND, ok, in) : in;
            pos = pos ? bin(n, TS_OP_ADD, pos, sp) : sp;
        }
        ts_attr *a = ts_b_attrs(b, TS_OP_GATHER);
        if (!a || ts_attr_set_int(onnx_graph(n), TS_OP_GATHER, a, "axis", 0) != TS_OK) return NULL;
        ts_value *in[2] = {xf, bin(n, TS_OP_ADD, base, pos)};
        ts_value *v = in[1] ? ts_b_node(b, TS_OP_GATHER, 2, in, a) : NULL;
        ts_value *term = bin(n, TS_OP_MUL, v, ts_b_select(b, ok, wgt, zero));
        acc = acc ? bin(n, TS_OP_ADD, acc, term) : term;
    }
    return acc;
}

/* The samples (times the mask) contracted with the weights: per group,
 * dot over (input channel, tap). */
static ts_value *contract(onnx_node *n, ts_value *s, ts_value *w, const ts_value *x, const dgeom *g, int64_t groups)
{
    ts_builder *b = onnx_b(n);
    int64_t oc = w->type.dims[0].c, of = 1;
    for (int i = 0; i < g->k; i++) of *= g->O[i];
    ts_dim sv[4] = {x->type.dims[0], ts_dim_const(groups), ts_dim_const(g->C / groups * g->T), ts_dim_const(of)};
    ts_dim wv[3] = {ts_dim_const(groups), ts_dim_const(oc / groups), sv[2]};
    int64_t lb = 1, rb = 0, lc = 2, rc = 2, perm[4] = {1, 0, 3, 2};
    ts_value *y = ts_b_dot(b, ts_b_reshape(b, s, 4, sv), ts_b_reshape(b, w, 3, wv), 1, &lb, &rb, 1, &lc, &rc);
    y = ts_b_transpose(b, y, perm);      /* [g, N, Of, oC/g] -> [N, g, oC/g, Of] */
    ts_dim out[TS_MAX_RANK];
    out[0] = x->type.dims[0];
    out[1] = ts_dim_const(oc);
    for (int i = 0; i < g->k; i++) out[i + 2] = ts_dim_const(g->O[i]);
    return ts_b_reshape(b, y, g->k + 2, out);
}

static ts_status onnx_deform_conv(onnx_node *n)
{
    ts_value *x = onnx_input(n, 0), *w = onnx_input(n, 1), *off = onnx_input(n, 2);
    int64_t groups = onnx_attr_int(n, "group", 1);
    TS_TRY(onnx_status(n));
    if (!ts_dtype_is_float(x->type.dtype)) return onnx_unsupported(n, "%s input: only float types are defined", ts_dtype_name(x->type.dtype));
    dgeom g;
    TS_TRY(read_geom(n, x, w, off, &g));
    int64_t oc = 0;
    TS_TRY(known(n, w->type.dims[0], "the output channels", &oc));
    if (groups < 1 || g.C % groups || oc % groups) return onnx_fail(n, TS_ERR_INVALID_MODEL, "group must divide the channels");
    ts_value *s = sample(n, x, off, &g);
    if (onnx_has_input(n, 4)) {
        ts_dim dims[TS_MAX_RANK + 4];
        int r = sample_dims(x, &g, 1, dims);
        s = bin(n, TS_OP_MUL, s, ts_b_reshape(onnx_b(n), onnx_input(n, 4), r, dims));
    }
    ts_value *y = contract(n, s, w, x, &g, groups);
    if (onnx_has_input(n, 3)) {
        ts_dim bd[TS_MAX_RANK];
        bd[0] = ts_dim_const(1);
        bd[1] = ts_dim_const(oc);
        for (int i = 0; i < g.k; i++) bd[i + 2] = ts_dim_const(1);
        y = bin(n, TS_OP_ADD, y, ts_b_reshape(onnx_b(n), onnx_input(n, 3), g.k + 2, bd));
    }
    if (n->n_out > 0 && n->out_used[0]) n->out[0] = y;
    return onnx_status(n);
}

const onnx_op_entry onnx_ops_deform[] = {
    {"DeformConv", 19, INT_MAX, onnx_deform_conv},
    {NULL, 0, 0, NULL},
};
