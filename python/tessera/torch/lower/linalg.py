"""Contractions: mm, bmm, addmm, addmv, addbmm, _trilinear (nn.Bilinear),
convolution (N-d, grouped, dilated, with bias, unbatched; the transposed
form as an input-dilated convolution, output_padding as more high
padding), distances (cdist, pdist, dist), and the matrix exponential.
Decompositions and solves are in decomp.py."""
import math

import numpy as np
import torch

from .table import fake, lowers, ts_dtype

aten = torch.ops.aten


def empty_ok(fn):
    """fn, except that a node whose every result is empty gets empty
    results directly: with nothing to compute, and because tessera's cpu
    target crashes on a batched dot over an empty batch."""
    def lower(L, node):
        outs = fake(node) if isinstance(fake(node), (tuple, list)) else [fake(node)]
        if all(isinstance(t.numel(), int) and t.numel() == 0 for t in outs):
            vals = [L.full(0, ts_dtype(t.dtype), tuple(t.shape)) for t in outs]
            return tuple(vals) if isinstance(fake(node), (tuple, list)) else vals[0]
        return fn(L, node)
    lower.__doc__ = fn.__doc__
    return lower


@lowers(aten.mm.default, dynamic=True)
def mm(L, node):
    out = L.out_dtype(node)
    return L.g.op("dot", L.value(node.args[0], out), L.value(node.args[1], out), lhs_contract=[1], rhs_contract=[0])


@lowers(aten.bmm.default, dynamic=True)
@empty_ok
def bmm(L, node):
    out = L.out_dtype(node)
    return L.g.op("dot", L.value(node.args[0], out), L.value(node.args[1], out), lhs_batch=[0], rhs_batch=[0],
                  lhs_contract=[2], rhs_contract=[1])


def _scales_ok(node):
    """alpha or beta that are not numbers"""
    for k in ("beta", "alpha"):
        if not isinstance(node.kwargs.get(k, 1), (int, float)):
            return "%s is not a number" % k
    return None


@lowers(aten.addmm.default, check=_scales_ok, dynamic=True)
def addmm(L, node):
    out = L.out_dtype(node)
    bias, a, b = (L.value(x, out) for x in node.args[:3])
    beta, alpha = node.kwargs.get("beta", 1), node.kwargs.get("alpha", 1)
    p = L.g.op("dot", a, b, lhs_contract=[1], rhs_contract=[0])
    if alpha != 1:
        p = p * float(alpha)
    if beta == 0:
        return p
    return p + (bias * float(beta) if beta != 1 else bias)


def _conv_ok(node):
    """mismatched ranks"""
    x, w = fake(node.args[0]), fake(node.args[1])
    if x.dim() not in (w.dim(), w.dim() - 1) or w.dim() < 3:
        return "input and weight ranks that do not match"
    return None


@lowers(aten.convolution.default, check=_conv_ok, dynamic=True)
def convolution(L, node):
    x_n, w_n, b_n, stride, padding, dilation, transposed, output_padding, groups = node.args[:9]
    out = L.out_dtype(node)
    x, w = L.value(x_n, out), L.value(w_n, out)
    k = len(L.shape(w_n)) - 2
    unbatched = len(L.shape(x_n)) == k + 1
    if unbatched:
        x = L.g.op("reshape", x, shape=[1] + list(L.shape(x_n)))
    stride, padding, dilation, output_padding = (list(v) * (k if len(v) == 1 else 1)
                                                 for v in (stride, padding, dilation, output_padding))
    if not transposed:
        y = L.g.op("conv", x, w, strides=stride, pad_lo=padding, pad_hi=padding, lhs_dilation=[1] * k,
                   rhs_dilation=dilation, groups=groups)
    else:
        # a transposed convolution is a convolution of the input dilated by
        # the stride, with the kernel flipped and its in/out channels swapped
        ws = L.shape(w_n)              # [C_in, C_out/groups, k...]
        cin, cog = ws[0], ws[1]
        wk = L.g.op("reshape", w, shape=[groups, cin // groups, cog] + list(ws[2:]))
        wk = L.g.op("transpose", wk, perm=[0, 2, 1] + list(range(3, 3 + k)))
        wk = L.g.op("reshape", wk, shape=[groups * cog, cin // groups] + list(ws[2:]))
        wk = L.g.op("reverse", wk, axes=list(range(2, 2 + k)))
        pads = [dilation[i] * (ws[2 + i] - 1) - padding[i] for i in range(k)]
        # output_padding: more outputs at the high end, read as the rest are
        hi = [p + op for p, op in zip(pads, output_padding)]
        y = L.g.op("conv", x, wk, strides=[1] * k, pad_lo=pads, pad_hi=hi, lhs_dilation=stride,
                   rhs_dilation=dilation, groups=groups)
    if b_n is not None:
        b = L.value(b_n, out)
        y = y + L.g.op("reshape", b, shape=[1, L.shape(b_n)[0]] + [1] * k)
    return L.g.op("reshape", y, shape=list(L.shape(node))) if unbatched else y


def _conv_backward_ok(node):
    """transposed, grouped or non-2-d convolutions"""
    if node.args[7]:
        return "a transposed convolution's gradient"
    if node.args[9] != 1:
        return "groups > 1"
    if fake(node.args[1]).dim() != 4:
        return "not a 2-d convolution"
    return None


@lowers(aten.convolution_backward.default, check=_conv_backward_ok)
def convolution_backward(L, node):
    """The three gradients of a 2-d convolution, each a convolution: the
    input's, of the stride-dilated output gradient with the flipped kernel;
    the weight's, of the input (batch as channels) with the output
    gradient as the kernel; the bias's, a sum."""
    g_n, x_n, w_n, _bias_sizes, stride, padding, dilation, _t, _op, _groups, mask = node.args[:11]
    out = L.out_dtype(node)
    g, x, w = L.value(g_n, out), L.value(x_n, out), L.value(w_n, out)
    xs, ws, gs = L.shape(x_n), L.shape(w_n), L.shape(g_n)
    k = 2
    stride, padding, dilation = (list(v) * (k if len(v) == 1 else 1) for v in (stride, padding, dilation))
    gx = gw = gb = None
    if mask[0]:
        wt = L.g.op("reverse", L.g.op("transpose", w, perm=[1, 0, 2, 3]), axes=[2, 3])
        lo = [dilation[i] * (ws[2 + i] - 1) - padding[i] for i in range(k)]
        covered = [stride[i] * (gs[2 + i] - 1) + dilation[i] * (ws[2 + i] - 1) - 2 * padding[i] + 1 for i in range(k)]
        hi = [lo[i] + xs[2 + i] - covered[i] for i in range(k)]
        gx = L.g.op("conv", g, wt, strides=[1] * k, pad_lo=lo, pad_hi=hi, lhs_dilation=stride,
                    rhs_dilation=dilation, groups=1)
    if mask[1]:
        xt = L.g.op("transpose", x, perm=[1, 0, 2, 3])
        gt = L.g.op("transpose", g, perm=[1, 0, 2, 3])
        r = L.g.op("conv", xt, gt, strides=dilation, pad_lo=padding, pad_hi=padding, lhs_dilation=[1] * k,
                   rhs_dilation=stride, groups=1)
        rs = list(r.shape)
        if rs[2:] != list(ws[2:]):
            r = L.slice(r, [0, 0, 0, 0], rs[:2] + list(ws[2:]))
        gw = L.g.op("transpose", r, perm=[1, 0, 2, 3])
    if mask[2]:
        gb = L.g.op("reduce_sum", g, axes=[0, 2, 3])
    return gx, gw, gb


def scaled_sum(L, node, product, bias_n):
    """beta * bias + alpha * product, bias broadcast to the product; with
    beta 0 the bias is not read (its NaNs do not propagate), as PyTorch."""
    beta, alpha = node.kwargs.get("beta", 1), node.kwargs.get("alpha", 1)
    if alpha != 1:
        product = product * float(alpha)
    if beta == 0:
        return product
    bias = L.broadcast_to(L.value(bias_n, product.dtype), tuple(product.shape))
    return product + (bias * float(beta) if beta != 1 else bias)


@lowers(aten.addmv.default, check=_scales_ok)
def addmv(L, node):
    out = L.out_dtype(node)
    m, v = L.value(node.args[1], out), L.value(node.args[2], out)
    return scaled_sum(L, node, L.g.op("dot", m, v, lhs_contract=[1], rhs_contract=[0]), node.args[0])


@lowers(aten.addbmm.default, check=_scales_ok)
@empty_ok
def addbmm(L, node):
    """The batch of products summed: one dot contracting the batch too."""
    out = L.out_dtype(node)
    a, b = L.value(node.args[1], out), L.value(node.args[2], out)
    return scaled_sum(L, node, L.g.op("dot", a, b, lhs_contract=[0, 2], rhs_contract=[0, 1]), node.args[0])


@lowers(aten._trilinear.default)
def trilinear(L, node):
    """i1, i2 and i3, each with size-1 axes inserted at its expand list,
    multiplied (broadcast) and summed over sumdim (nn.Bilinear's form)."""
    out = L.out_dtype(node)
    ins, expands, sumdim = node.args[:3], node.args[3:6], list(node.args[6])
    rank = len(L.shape(ins[0])) + len(expands[0])
    views = []
    for x_n, expand in zip(ins, expands):
        dims = iter(L.shape(x_n))
        views.append((L.value(x_n, out), [1 if a in expand else next(dims) for a in range(rank)]))
    full = [max(v[1][a] for v in views) if all(v[1][a] != 0 for v in views) else 0 for a in range(rank)]
    prod = None
    for v, shape in views:
        t = L.broadcast_to(L.g.op("reshape", v, shape=shape), full)
        prod = t if prod is None else prod * t
    return L.g.op("reduce_sum", prod, axes=sorted(sumdim)) if sumdim else prod


# ---- distances -------------------------------------------------------------------------------

def norm_over(L, d, axes, p):
    """The p-norm of d over axes, as PyTorch's distance kernels take it:
    p = 0 counts the non-zeros, inf and -inf are the largest and smallest
    magnitude."""
    a = L.g.op("abs", d)
    if p == 0:
        return L.g.op("reduce_sum", L.cast(L.g.op("ne", d, L.full(0, d.dtype, ())), d.dtype), axes=axes)
    if p == 1:
        return L.g.op("reduce_sum", a, axes=axes)
    if p == 2:
        return L.g.op("sqrt", L.g.op("reduce_sum", d * d, axes=axes))
    if p == math.inf:
        return L.g.op("reduce_max", a, axes=axes)
    if p == -math.inf:
        return L.g.op("reduce_min", a, axes=axes)
    s = L.g.op("reduce_sum", L.g.op("pow", a, L.full(p, d.dtype, tuple(a.shape))), axes=axes)
    return L.g.op("pow", s, L.full(1.0 / p, d.dtype, tuple(s.shape)))


def _dist_ok(node):
    """p not a number, an empty input"""
    p = node.args[2] if len(node.args) > 2 else 2
    if not isinstance(p, (int, float)):
        return "p is not a number"
    if any(d == 0 for d in torch.broadcast_shapes(fake(node.args[0]).shape, fake(node.args[1]).shape)):
        return "an empty input"
    return None


@lowers(aten.dist.default, check=_dist_ok)
def dist(L, node):
    a_n, b_n = node.args[0], node.args[1]
    p = node.args[2] if len(node.args) > 2 else 2
    out = L.out_dtype(node)
    shape = tuple(torch.broadcast_shapes(fake(a_n).shape, fake(b_n).shape))
    d = L.broadcast_to(L.value(a_n, out), shape) - L.broadcast_to(L.value(b_n, out), shape)
    if not shape:
        d = L.g.op("reshape", d, shape=[1])
    return norm_over(L, d, list(range(len(d.shape))), float(p))


def _cdist_ok(node):
    """vectors of no elements"""
    if fake(node.args[0]).shape[-1] == 0:
        return "vectors of no elements"
    return None


@lowers(aten._cdist_forward.default, check=_cdist_ok)
@empty_ok
def cdist(L, node):
    """Distances between the rows of x1 [..., P, M] and of x2 [..., R, M].
    p = 2 takes PyTorch's route: its matrix-product form where eager uses it
    (compute_mode 1, or the default with more than 25 rows), else the
    differences themselves."""
    x1_n, x2_n, p, mode = node.args[:4]
    out = L.out_dtype(node)
    s1, s2, res = L.shape(x1_n), L.shape(x2_n), list(L.shape(node))
    batch, m = res[:-2], s1[-1]
    x1 = L.broadcast_to(L.value(x1_n, out), tuple(batch + [s1[-2], m]))
    x2 = L.broadcast_to(L.value(x2_n, out), tuple(batch + [s2[-2], m]))
    nb = len(batch)
    if p == 2 and (mode == 1 or (mode in (None, 0) and (s1[-2] > 25 or s2[-2] > 25))):
        return euclidean_by_product(L, x1, x2, nb)
    full = batch + [s1[-2], s2[-2], m]
    d = L.broadcast_to(L.g.op("reshape", x1, shape=batch + [s1[-2], 1, m]), full) - \
        L.broadcast_to(L.g.op("reshape", x2, shape=batch + [1, s2[-2], m]), full)
    return norm_over(L, d, [nb + 2], float(p))


def euclidean_by_product(L, x1, x2, nb):
    """ATen's _euclidean_dist: |a|^2 - 2 a.b + |b|^2 as one product of
    padded rows, clamped at 0, square-rooted."""
    def padded(x, first):
        norm = L.g.op("reduce_sum", x * x, axes=[nb + 1])
        norm = L.g.op("reshape", norm, shape=list(norm.shape) + [1])
        ones = L.full(1, x.dtype, tuple(norm.shape))
        return L.g.op("concat", x * -2.0, norm, ones, axis=nb + 1) if first else \
            L.g.op("concat", x, ones, norm, axis=nb + 1)
    batch = list(range(nb))
    sq = L.g.op("dot", padded(x1, True), padded(x2, False), lhs_batch=batch, rhs_batch=batch,
                lhs_contract=[nb + 1], rhs_contract=[nb + 1])
    return L.g.op("sqrt", L.g.op("max", sq, L.full(0, sq.dtype, tuple(sq.shape))))


@lowers(aten._pdist_forward.default, check=_cdist_ok)
def pdist(L, node):
    """Distances between rows i < j of x [N, M], in row-major order of the
    pairs: both rows gathered by constant indices."""
    x_n = node.args[0]
    p = node.args[1] if len(node.args) > 1 else 2.0
    n = L.shape(x_n)[0]
    x = L.value(x_n, L.out_dtype(node))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if not pairs:
        return L.full(0, x.dtype, (0,))
    rows = [L.g.op("gather", x, L.g.const(np.array(side, np.int64)), axis=0) for side in zip(*pairs)]
    return norm_over(L, rows[0] - rows[1], [1], float(p))


# ---- matrix exponential ---------------------------------------------------------------------
TAYLOR_TERMS = 18   # at norm <= 1/2 the remainder is below 0.5^19 / 19! ~ 1.6e-23
SQUARINGS_MAX = 1100   # 2^1100 of any f64 norm overflows: an infinite norm stops there


def _matrix_exp_ok(node):
    """a dtype other than f32/f64, or a matrix over 64 rows"""
    t = fake(node.args[0])
    if t.dtype not in (torch.float32, torch.float64):
        return "dtype %s" % t.dtype
    return "a matrix over 64 rows" if t.shape[-1] > 64 else None


@lowers(aten.linalg_matrix_exp.default, check=_matrix_exp_ok)
@empty_ok
def matrix_exp(L, node):
    """Scaling and squaring in f64: each matrix scaled by 2^-s to a 1-norm
    of at most 1/2, its Taylor series to degree 18 by Horner, then squared
    s times in a while loop (s differs per matrix: a square is kept only
    where the matrix still needs it)."""
    g = L.g
    a = L.cast(L.value(node.args[0]), "f64")
    shape = list(a.shape)
    nb = len(shape) - 2
    batch = list(range(nb))

    def mat(x, y):
        return g.op("dot", x, y, lhs_batch=batch, rhs_batch=batch, lhs_contract=[nb + 1], rhs_contract=[nb])

    norm = g.op("reduce_max", g.op("reduce_sum", g.op("abs", a), axes=[nb]), axes=[nb])   # [*batch]
    s = g.op("ceil", g.op("log", norm * 2.0) * (1.0 / math.log(2.0)))
    s = g.op("min", g.op("max", s, L.full(0.0, "f64", tuple(s.shape))), L.full(SQUARINGS_MAX, "f64", tuple(s.shape)))
    s = g.op("select", g.op("ne", s, s), L.full(0.0, "f64", tuple(s.shape)), s)   # a NaN norm
    scaled = a * g.op("reshape", g.op("pow", L.full(2.0, "f64", tuple(s.shape)), -s), shape=list(s.shape) + [1, 1])
    eye = g.op("cast", g.op("eq", g.op("iota", dtype="i64", shape=shape, axis=nb),
                            g.op("iota", dtype="i64", shape=shape, axis=nb + 1)), dtype="f64")
    x = eye
    for k in range(TAYLOR_TERMS, 0, -1):   # I + A/1 (I + A/2 (I + ... (I + A/18)))
        x = eye + mat(scaled * (1.0 / k), x)
    times = L.cast(s, "i64")

    def more(i, x, times):
        return g.op("lt", i, g.op("reduce_max", times, axes=list(range(nb))) if nb else times)

    def square(i, x, times):
        need = g.op("reshape", g.op("lt", i, times), shape=list(times.shape) + [1, 1])
        return i + g.scalar(1, "i64"), g.op("select", L.broadcast_to(need, shape), mat(x, x), x), times

    x = g.op("while", g.scalar(0, "i64"), x, times, regions=(more, square))[1]
    return L.cast(x, L.out_dtype(node))
