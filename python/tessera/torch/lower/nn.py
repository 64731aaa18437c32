"""Neural-network ATen operators: softmax and log-softmax, layer norm,
batch norm (inference), max and average pooling, adaptive average
pooling (when the output divides the input), embedding."""
import operator

import torch

from .table import fake, lowers

aten = torch.ops.aten


def keep_axis(L, v, shape, axis):
    """v reduced over axis, broadcast back to shape."""
    kept = list(shape)
    kept[axis] = 1
    return L.broadcast_to(L.g.op("reshape", v, shape=kept), shape)


def _softmax(log):
    def lower(L, node):
        x_n, dim = node.args[0], node.args[1]
        out = L.out_dtype(node)
        x = L.value(x_n, out)
        shape = L.shape(x_n)
        if not shape:
            return L.full(0.0 if log else 1.0, out, ())
        d = dim % len(shape)
        m = keep_axis(L, L.g.op("reduce_max", x, axes=[d]), shape, d)
        z = x - m
        e = L.g.op("exp", z)
        s = keep_axis(L, L.g.op("reduce_sum", e, axes=[d]), shape, d)
        return z - L.g.op("log", s) if log else e / s
    return lower


lowers(aten._softmax.default, dynamic=True)(_softmax(False))
lowers(aten._log_softmax.default, dynamic=True)(_softmax(True))


@lowers(aten.native_layer_norm.default, dynamic=True)
def layer_norm(L, node):
    x_n, norm_shape, w_n, b_n, eps = node.args[:5]
    out = L.out_dtype(node)
    x = L.value(x_n, out)
    shape = L.shape(x_n)
    k = len(norm_shape)
    axes = list(range(len(shape) - k, len(shape)))
    n = L.count(shape, axes, out)
    inv = (lambda v: v * (1.0 / n)) if isinstance(n, int) else (lambda v: v / n)
    stat_shape = list(shape[:len(shape) - k]) + [1] * k
    mean = L.g.op("reshape", inv(L.g.op("reduce_sum", x, axes=axes)), shape=stat_shape)
    d = x - L.broadcast_to(mean, shape)
    var = L.g.op("reshape", inv(L.g.op("reduce_sum", d * d, axes=axes)), shape=stat_shape)
    rstd = 1.0 / L.g.op("sqrt", var + float(eps))
    y = d * L.broadcast_to(rstd, shape)
    if w_n is not None:
        y = y * L.value(w_n, out)
    if b_n is not None:
        y = y + L.value(b_n, out)
    return y, mean, rstd


def bn_normalize(L, x_n, w_n, b_n, mean_n, var_n, eps, out):
    """x normalized by given per-channel statistics, scaled and shifted."""
    x = L.value(x_n, out)
    shape = L.shape(x_n)
    c = [1, shape[1]] + [1] * (len(shape) - 2)
    scale = 1.0 / L.g.op("sqrt", L.value(var_n, out) + float(eps))
    if w_n is not None:
        scale = scale * L.value(w_n, out)
    shift = -L.value(mean_n, out) * scale
    if b_n is not None:
        shift = shift + L.value(b_n, out)
    return x * L.g.op("reshape", scale, shape=c) + L.g.op("reshape", shift, shape=c)


@lowers(aten._native_batch_norm_legit_no_training.default, dynamic=True)
def batch_norm_inference(L, node):
    x_n, w_n, b_n, mean_n, var_n, _momentum, eps = node.args[:7]
    out = L.out_dtype(node)
    empty = L.full(0, out, (0,))
    return bn_normalize(L, x_n, w_n, b_n, mean_n, var_n, eps, out), empty, empty


def pool_geometry(n, k, s, p, d, ceil_mode):
    """PyTorch's output size and the high padding that gives it."""
    span = d * (k - 1) + 1
    if ceil_mode:
        o = -(-(n + 2 * p - span) // s) + 1
        if (o - 1) * s >= n + p:
            o -= 1
    else:
        o = (n + 2 * p - span) // s + 1
    hi = (o - 1) * s + span - n - p
    return o, hi


def _pool_args(node, k_dims):
    args = list(node.args) + [None] * 6
    kernel = list(args[1])
    stride = list(args[2]) if args[2] else kernel
    padding = list(args[3]) if args[3] is not None else [0]
    return kernel * (k_dims // len(kernel)), stride * (k_dims // len(stride)), padding * (k_dims // len(padding))


def _max_pool_geometry(node, shape):
    kernel, stride, padding = _pool_args(node, 2)
    dil = list(node.args[4]) if len(node.args) > 4 and node.args[4] else [1, 1]
    dil = dil * (2 // len(dil))
    ceil_mode = bool(node.args[5]) if len(node.args) > 5 else False
    geo = [pool_geometry(shape[-2 + i], kernel[i], stride[i], padding[i], dil[i], ceil_mode) for i in range(2)]
    return kernel, stride, padding, dil, [g[0] for g in geo], [g[1] for g in geo]


@lowers(aten.max_pool2d_with_indices.default)
def max_pool2d(L, node):
    """The window's maximum and, as PyTorch, the flat position in its
    (H, W) plane of the first maximum: the windows' k*k taps side by side
    on a new last axis (strided slices of the input padded with -inf),
    then reduce_max and argmax over it. Only what has users is built."""
    x = L.value(node.args[0])
    shape = L.shape(node.args[0])
    lead = len(shape) - 2
    kernel, stride, padding, dil, outs, his = _max_pool_geometry(node, shape)
    want_idx = any(u.target is operator.getitem and u.args[1] == 1 for u in node.users)
    if not want_idx:
        y = L.g.op("reduce_window", x, kind="max", window=[1] * lead + kernel, strides=[1] * lead + stride,
                   dilations=[1] * lead + dil, pad_lo=[0] * lead + padding, pad_hi=[0] * lead + his)
        return y, None
    lowest = float("-inf") if x.dtype in ("f16", "bf16", "f32", "f64") else -(2 ** 31)
    xp = L.g.op("pad", x, L.full(lowest, x.dtype, ()), lo=[0] * lead + padding, hi=[0] * lead + his,
                interior=[0] * len(shape))
    taps = []
    out_shape = list(shape[:lead]) + outs
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            start = [0] * lead + [i * dil[0], j * dil[1]]
            limit = list(shape[:lead]) + [i * dil[0] + (outs[0] - 1) * stride[0] + 1,
                                          j * dil[1] + (outs[1] - 1) * stride[1] + 1]
            t = L.slice(xp, start, limit, [1] * lead + stride)
            taps.append(L.g.op("reshape", t, shape=out_shape + [1]))
    stack = L.g.op("concat", *taps, axis=len(shape)) if len(taps) > 1 else taps[0]
    y = L.g.op("reduce_max", stack, axes=[len(shape)])
    j = L.g.op("argmax", stack, axis=len(shape))
    kw = L.full(kernel[1], "i64", ())
    oh = L.g.op("iota", dtype="i64", shape=out_shape, axis=lead)
    ow = L.g.op("iota", dtype="i64", shape=out_shape, axis=lead + 1)
    h = oh * float(stride[0]) + L.g.op("div", j, kw) * float(dil[0]) - float(padding[0])
    w = ow * float(stride[1]) + L.g.op("rem", j, kw) * float(dil[1]) - float(padding[1])
    return y, h * float(shape[-1]) + w


@lowers(aten.max_pool2d_with_indices_backward.default)
def max_pool2d_backward(L, node):
    """The gradient added into the input positions the forward pass
    picked: one scatter-add over the flattened input."""
    g_n, x_n = node.args[0], node.args[1]
    idx_n = node.args[7]
    out = L.out_dtype(node)
    shape = L.shape(x_n)
    gshape = L.shape(g_n)
    lead = len(shape) - 2
    plane = L.full(0, "i64", gshape)
    stride = 1
    for a in reversed(range(lead)):   # the (n, c) plane's offset, in elements
        plane = plane + L.g.op("iota", dtype="i64", shape=list(gshape), axis=a) * float(stride * shape[-2] * shape[-1])
        stride *= shape[a]
    flat = plane + L.cast(L.value(idx_n), "i64")
    return L.g.op("scatter", L.full(0, out, shape), flat, L.value(g_n, out), combine="add")


@lowers(aten.avg_pool2d.default)
def avg_pool2d(L, node):
    x = L.value(node.args[0])
    shape = L.shape(node.args[0])
    kernel, stride, padding = _pool_args(node, 2)
    args = list(node.args) + [None] * 7
    ceil_mode = bool(args[4])
    count_pad = True if args[5] is None else bool(args[5])
    his = [pool_geometry(shape[2 + i], kernel[i], stride[i], padding[i], 1, ceil_mode)[1] for i in range(2)]
    lead = len(shape) - 2
    window = dict(window=[1] * lead + kernel, strides=[1] * lead + stride, dilations=[1] * (lead + 2),
                  pad_lo=[0] * lead + padding, pad_hi=[0] * lead + his)
    s = L.g.op("reduce_window", x, kind="sum", **window)
    if args[6] is not None:   # divisor_override
        return s * (1.0 / float(args[6]))
    if count_pad and his == padding:
        return s * (1.0 / (kernel[0] * kernel[1]))
    # the divisor per position: positions inside the input (and its explicit
    # padding, with count_include_pad), a constant the builder folds
    ones_shape = [1] * lead + [shape[-2] + (2 * padding[0] if count_pad else 0),
                               shape[-1] + (2 * padding[1] if count_pad else 0)]
    ones = L.full(1, x.dtype, tuple(ones_shape))
    pl = [0] * lead + ([0, 0] if count_pad else padding)
    ph = [0] * lead + ([h - p for h, p in zip(his, padding)] if count_pad else his)
    cnt = L.g.op("reduce_window", ones, kind="sum", window=window["window"], strides=window["strides"],
                 dilations=window["dilations"], pad_lo=pl, pad_hi=ph)
    return s / cnt


def _adaptive_ok(node):
    """output sizes that do not divide the input"""
    shape = fake(node.args[0]).shape
    out = list(node.args[1])
    if any(o == 0 or shape[-2 + i] % o for i, o in enumerate(out)):
        return "an output size that does not divide the input"
    return None


@lowers(aten._adaptive_avg_pool2d.default, check=_adaptive_ok)
def adaptive_avg_pool2d(L, node):
    x = L.value(node.args[0])
    shape = L.shape(node.args[0])
    out = list(node.args[1])
    if out == [1, 1]:
        s = L.g.op("reduce_sum", x, axes=[len(shape) - 2, len(shape) - 1]) * (1.0 / (shape[-1] * shape[-2]))
        return L.g.op("reshape", s, shape=list(L.shape(node)))
    kernel = [shape[-2] // out[0], shape[-1] // out[1]]
    lead = len(shape) - 2
    s = L.g.op("reduce_window", x, kind="sum", window=[1] * lead + kernel, strides=[1] * lead + kernel,
               dilations=[1] * len(shape), pad_lo=[0] * len(shape), pad_hi=[0] * len(shape))
    return s * (1.0 / (kernel[0] * kernel[1]))


@lowers(aten.embedding.default, dynamic=True)
def embedding(L, node):
    w, idx = L.value(node.args[0]), L.value(node.args[1])
    return L.g.op("gather", w, L.cast(idx, "i64"), axis=0)


@lowers(aten.index_select.default, dynamic=True)
def index_select(L, node):
    x, dim, idx = node.args[0], node.args[1], node.args[2]
    v = L.value(x)
    if not L.shape(x):   # a 0-d tensor indexes as a 1-element vector
        v = L.g.op("reshape", v, shape=[1])
    r = L.g.op("gather", v, L.cast(L.value(idx), "i64"), axis=dim % len(v.shape))
    want = list(L.shape(node))
    return r if list(r.shape) == want else L.g.op("reshape", r, shape=want)



def _avg_backward_ok(node):
    """divisor_override, count_include_pad=False, ceil_mode padding"""
    x = fake(node.args[1])
    args = list(node.args) + [None] * 8
    kernel, stride, padding = list(args[2]), list(args[3]) or list(args[2]), list(args[4])
    kernel, stride, padding = (v * (2 // len(v)) for v in (kernel, stride, padding))
    if args[7] is not None:
        return "divisor_override"
    if x.dim() != 4:
        return "not a batched 2-d pooling"
    his = [pool_geometry(x.shape[2 + i], kernel[i], stride[i], padding[i], 1, bool(args[5]))[1] for i in range(2)]
    if not args[6] or his != padding:
        return "a divisor that varies with the position"
    return None


@lowers(aten.avg_pool2d_backward.default, check=_avg_backward_ok)
def avg_pool2d_backward(L, node):
    """Each output gradient spread evenly over its window: a transposed
    depthwise convolution of the gradient with a constant kernel."""
    g_n, x_n = node.args[0], node.args[1]
    args = list(node.args) + [None] * 8
    kernel, stride, padding = list(args[2]), list(args[3]) or list(args[2]), list(args[4])
    kernel, stride, padding = (v * (2 // len(v)) for v in (kernel, stride, padding))
    out = L.out_dtype(node)
    xs, gs = L.shape(x_n), L.shape(g_n)
    c = xs[1]
    w = L.full(1.0 / (kernel[0] * kernel[1]), out, (c, 1, kernel[0], kernel[1]))
    lo = [kernel[i] - 1 - padding[i] for i in range(2)]
    covered = [stride[i] * (gs[2 + i] - 1) + kernel[i] - 2 * padding[i] for i in range(2)]
    hi = [lo[i] + xs[2 + i] - covered[i] for i in range(2)]
    return L.g.op("conv", L.value(g_n, out), w, strides=[1, 1], pad_lo=lo, pad_hi=hi, lhs_dilation=stride,
                  rhs_dilation=[1, 1], groups=c)


@lowers(aten._native_batch_norm_legit_functional.default)
def batch_norm_training(L, node):
    """Batch statistics over every axis but the channels'; the running
    statistics updated as PyTorch does (the unbiased variance)."""
    x_n, w_n, b_n, rm_n, rv_n, training, momentum, eps = node.args[:8]
    out = L.out_dtype(node)
    if not training:
        # the running statistics normalize; they stay as they are
        empty = L.full(0, out, (0,))
        return bn_normalize(L, x_n, w_n, b_n, rm_n, rv_n, eps, out), empty, empty, L.value(rm_n), L.value(rv_n)
    x = L.value(x_n, out)
    shape = L.shape(x_n)
    axes = [0] + list(range(2, len(shape)))
    n = 1
    for a in axes:
        n *= shape[a]
    c = [1, shape[1]] + [1] * (len(shape) - 2)
    mean = L.g.op("reduce_sum", x, axes=axes) * (1.0 / n)
    d = x - L.broadcast_to(L.g.op("reshape", mean, shape=c), shape)
    var = L.g.op("reduce_sum", d * d, axes=axes) * (1.0 / n)
    rstd = 1.0 / L.g.op("sqrt", var + float(eps))
    scale = rstd * L.value(w_n, out) if w_n is not None else rstd
    y = d * L.broadcast_to(L.g.op("reshape", scale, shape=c), shape)
    if b_n is not None:
        y = y + L.g.op("reshape", L.value(b_n, out), shape=c)
    m = float(momentum)
    new_mean = L.value(rm_n) * (1.0 - m) + L.cast(mean, L.env[rm_n].dtype) * m
    unbiased = var * (n / (n - 1.0) if n > 1 else float("nan"))
    new_var = L.value(rv_n) * (1.0 - m) + L.cast(unbiased, L.env[rv_n].dtype) * m
    return y, mean, rstd, new_mean, new_var
