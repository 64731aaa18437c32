"""Contractions: mm, bmm, addmm, and convolution (N-d, grouped, dilated,
with bias; the transposed form as an input-dilated convolution)."""
import torch

from .table import fake, lowers

aten = torch.ops.aten


@lowers(aten.mm.default, dynamic=True)
def mm(L, node):
    out = L.out_dtype(node)
    return L.g.op("dot", L.value(node.args[0], out), L.value(node.args[1], out), lhs_contract=[1], rhs_contract=[0])


@lowers(aten.bmm.default, dynamic=True)
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
    """unbatched inputs, a transposed convolution's output_padding"""
    x, w = fake(node.args[0]), fake(node.args[1])
    if x.dim() < 3 or x.dim() != w.dim():
        return "unbatched or mismatched ranks"
    if node.args[6]:
        out_pad = list(node.args[7])
        if any(out_pad):
            return "output_padding"
    return None


@lowers(aten.convolution.default, check=_conv_ok, dynamic=True)
def convolution(L, node):
    x_n, w_n, b_n, stride, padding, dilation, transposed, output_padding, groups = node.args[:9]
    out = L.out_dtype(node)
    x, w = L.value(x_n, out), L.value(w_n, out)
    k = len(L.shape(x_n)) - 2
    stride, padding, dilation = (list(v) * (k if len(v) == 1 else 1) for v in (stride, padding, dilation))
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
        y = L.g.op("conv", x, wk, strides=[1] * k, pad_lo=pads, pad_hi=pads, lhs_dilation=stride,
                   rhs_dilation=dilation, groups=groups)
    if b_n is not None:
        b = L.value(b_n, out)
        y = y + L.g.op("reshape", b, shape=[1, L.shape(b_n)[0]] + [1] * k)
    return y


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
