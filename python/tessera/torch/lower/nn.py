"""Neural-network ATen operators: softmax and log-softmax, layer, group
and batch norm (inference, training, the functional update), max and
average pooling (2-d and 3-d, with indices), adaptive average and max
pooling (any output size), embedding, grid sampling (bilinear,
nearest, bicubic) and antialiased bilinear resampling."""
import itertools
import math
import operator

import numpy as np
import torch

from .table import fake, lowers, ts_dtype

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


def _per_axis(v, k):
    """A pooling argument (one entry, or one per axis) as k entries."""
    v = list(v)
    return v * (k // len(v)) if len(v) == 1 else v


def _pool_args(node, k):
    args = list(node.args) + [None] * 6
    kernel = _per_axis(args[1], k)
    stride = _per_axis(args[2], k) if args[2] else kernel
    padding = _per_axis(args[3], k) if args[3] is not None else [0] * k
    return kernel, stride, padding


def _max_pool_geometry(node, shape, k):
    kernel, stride, padding = _pool_args(node, k)
    dil = _per_axis(node.args[4], k) if len(node.args) > 4 and node.args[4] else [1] * k
    ceil_mode = bool(node.args[5]) if len(node.args) > 5 else False
    geo = [pool_geometry(shape[-k + i], kernel[i], stride[i], padding[i], dil[i], ceil_mode) for i in range(k)]
    return kernel, stride, padding, dil, [g[0] for g in geo], [g[1] for g in geo]


def _plane_strides(shape, k):
    """The flat-index stride of each of the last k axes within their plane."""
    strides, s = [], 1
    for n in reversed(shape[-k:]):
        strides.insert(0, s)
        s *= n
    return strides


def crop_high(L, x, his):
    """x without the trailing elements no window reaches (a negative high
    padding, which reduce_window does not take), and the padding left."""
    k = len(his)
    if all(h >= 0 for h in his):
        return x, his
    shape = list(x.shape)
    limit = shape[:-k] + [n + min(h, 0) for n, h in zip(shape[-k:], his)]
    return L.slice(x, [0] * len(shape), limit), [max(h, 0) for h in his]


def wants_result(node, i):
    return any(u.target is operator.getitem and u.args[1] == i for u in node.users)


def _max_pool(k):
    def lower(L, node):
        """The window's maximum and, as PyTorch, the flat position in its
        pooled plane of the first maximum: the windows' taps side by side
        on a new last axis (strided slices of the input padded with -inf),
        then reduce_max and argmax over it. Only what has users is built."""
        x = L.value(node.args[0])
        shape = L.shape(node.args[0])
        lead = len(shape) - k
        kernel, stride, padding, dil, outs, his = _max_pool_geometry(node, shape, k)
        if not wants_result(node, 1):
            x, his = crop_high(L, x, his)
            y = L.g.op("reduce_window", x, kind="max", window=[1] * lead + kernel, strides=[1] * lead + stride,
                       dilations=[1] * lead + dil, pad_lo=[0] * lead + padding, pad_hi=[0] * lead + his)
            return y, None
        lowest = float("-inf") if x.dtype in ("f16", "bf16", "f32", "f64") else -(2 ** 31)
        xp = L.g.op("pad", x, L.full(lowest, x.dtype, ()), lo=[0] * lead + padding, hi=[0] * lead + his,
                    interior=[0] * len(shape))
        out_shape = list(shape[:lead]) + outs
        plane = _plane_strides(shape, k)
        taps, offsets = [], []
        for tap in itertools.product(*[range(n) for n in kernel]):
            start = [0] * lead + [t * d for t, d in zip(tap, dil)]
            limit = list(shape[:lead]) + [t * d + (o - 1) * s + 1 for t, d, o, s in zip(tap, dil, outs, stride)]
            taps.append(L.g.op("reshape", L.slice(xp, start, limit, [1] * lead + stride), shape=out_shape + [1]))
            offsets.append(sum(t * d * p for t, d, p in zip(tap, dil, plane)))
        stack = L.g.op("concat", *taps, axis=len(shape)) if len(taps) > 1 else taps[0]
        y = L.g.op("reduce_max", stack, axes=[len(shape)])
        j = L.g.op("argmax", stack, axis=len(shape))
        # the flat index: each window's corner, plus the offset of the tap that won
        idx = L.g.op("gather", L.g.const(np.array(offsets, np.int64)), j, axis=0)
        for a in range(k):
            o = L.g.op("iota", dtype="i64", shape=out_shape, axis=lead + a)
            idx = idx + (o * float(stride[a]) - float(padding[a])) * float(plane[a])
        return y, idx
    return lower


lowers(aten.max_pool2d_with_indices.default)(_max_pool(2))
lowers(aten.max_pool3d_with_indices.default)(_max_pool(3))


def _avg_pool(k):
    def lower(L, node):
        x = L.value(node.args[0])
        shape = L.shape(node.args[0])
        kernel, stride, padding = _pool_args(node, k)
        args = list(node.args) + [None] * 7
        ceil_mode = bool(args[4])
        count_pad = True if args[5] is None else bool(args[5])
        his = [pool_geometry(shape[-k + i], kernel[i], stride[i], padding[i], 1, ceil_mode)[1] for i in range(k)]
        lead = len(shape) - k
        x, his = crop_high(L, x, his)
        window = dict(window=[1] * lead + kernel, strides=[1] * lead + stride, dilations=[1] * (lead + k))
        s = L.g.op("reduce_window", x, kind="sum", pad_lo=[0] * lead + padding, pad_hi=[0] * lead + his, **window)
        if args[6] is not None:   # divisor_override
            return s * (1.0 / float(args[6]))
        if count_pad and all(h <= p for h, p in zip(his, padding)):
            return s * (1.0 / math.prod(kernel))   # every window inside the padded input
        # the divisor per position: positions inside the input (and its explicit
        # padding, with count_include_pad), a constant the builder folds
        if count_pad:
            spans = [n + p + min(h, p) for n, p, h in zip(x.shape[-k:], padding, his)]
            pl, ph = [0] * k, [max(h - p, 0) for h, p in zip(his, padding)]
        else:
            spans, pl, ph = list(x.shape[-k:]), padding, his
        ones = L.full(1, x.dtype, tuple([1] * lead + spans))
        pl, ph = [0] * lead + pl, [0] * lead + ph
        cnt = L.g.op("reduce_window", ones, kind="sum", pad_lo=pl, pad_hi=ph, **window)
        return s / cnt
    return lower


lowers(aten.avg_pool2d.default)(_avg_pool(2))
lowers(aten.avg_pool3d.default)(_avg_pool(3))


# ---- adaptive pooling ------------------------------------------------------------------------

def adaptive_windows(n, o):
    """PyTorch's adaptive pooling windows over n inputs: output i reads
    [floor(i*n/o), ceil((i+1)*n/o))."""
    return [(i * n // o, -(-(i + 1) * n // o)) for i in range(o)]


def const_as(L, array, dtype):
    """A numpy array as a constant of a tessera float dtype."""
    return L.cast(L.g.const(np.asarray(array, np.float64)), dtype)


def contract_axes(L, x, lead, mats):
    """x with each axis from lead on mapped by a matrix [out, in] (None:
    kept as it is). Contracting an axis puts its result last, so taking the
    axes in order leaves them in order."""
    rank = len(x.shape)
    for m in mats:
        if m is None:
            x = L.g.op("transpose", x, perm=[a for a in range(rank) if a != lead] + [lead])
        else:
            x = L.g.op("dot", x, const_as(L, m, x.dtype), lhs_contract=[lead], rhs_contract=[1])
    return x


def window_averages(sizes, outs):
    """Per axis the [out, in] matrix of adaptive window averages (None
    where the axis keeps its size)."""
    mats = []
    for n, o in zip(sizes, outs):
        m = None
        if n != o:
            m = np.zeros((o, n))
            for i, (s, e) in enumerate(adaptive_windows(n, o)):
                m[i, s:e] = 1.0 / (e - s)
        mats.append(m)
    return mats


def _adaptive_avg(k):
    def lower(L, node):
        """Windows of one size (the output divides the input): one
        reduce_window; else, per axis, a product with the [out, in] matrix
        of window averages (the average over a box is the product of the
        averages over its sides)."""
        x = L.value(node.args[0])
        shape = L.shape(node.args[0])
        out = list(node.args[1])
        lead = len(shape) - k
        if all(o and n % o == 0 for n, o in zip(shape[lead:], out)):
            kernel = [n // o for n, o in zip(shape[lead:], out)]
            s = L.g.op("reduce_window", x, kind="sum", window=[1] * lead + kernel, strides=[1] * lead + kernel,
                       dilations=[1] * len(shape), pad_lo=[0] * len(shape), pad_hi=[0] * len(shape))
            return s * (1.0 / math.prod(kernel))
        return contract_axes(L, x, lead, window_averages(shape[lead:], out))
    return lower


def _adaptive_avg_backward(k):
    def lower(L, node):
        """The forward's products transposed: each output gradient spread
        evenly over its window, overlapping windows adding up."""
        grad = L.value(node.args[0], L.out_dtype(node))
        shape = L.shape(node)
        lead = len(shape) - k
        mats = window_averages(shape[lead:], L.shape(node.args[0])[lead:])
        return contract_axes(L, grad, lead, [None if m is None else m.T for m in mats])
    return lower


def _adaptive_backward_ok(node):
    """an empty output or input plane"""
    shape, out = fake(node.args[1]).shape, fake(node.args[0]).shape
    if any(d == 0 for d in list(shape[-2:]) + list(out[-2:])):
        return "an empty pooling plane"
    return None


def _adaptive_ok(node):
    """an empty output or input plane"""
    shape, out = fake(node.args[0]).shape, list(node.args[1])
    if any(o <= 0 for o in out) or any(n == 0 for n in shape[-len(out):]):
        return "an empty pooling plane"
    return None


lowers(aten._adaptive_avg_pool2d.default, check=_adaptive_ok)(_adaptive_avg(2))
lowers(aten._adaptive_avg_pool3d.default, check=_adaptive_ok)(_adaptive_avg(3))
lowers(aten._adaptive_avg_pool2d_backward.default, check=_adaptive_backward_ok)(_adaptive_avg_backward(2))
lowers(aten._adaptive_avg_pool3d_backward.default, check=_adaptive_backward_ok)(_adaptive_avg_backward(3))


def _adaptive_max(k):
    def lower(L, node):
        """One axis at a time, innermost first: each window's taps gathered
        on a new axis (the last tap repeated in short windows), their
        maximum, and the flat position of the first maximum. Taking the
        innermost axis first keeps PyTorch's choice among equal maxima, the
        first in row-major order."""
        x = L.value(node.args[0])
        shape = L.shape(node.args[0])
        out = list(node.args[1])
        lead = len(shape) - k
        plane = _plane_strides(shape, k)
        vals, idx = x, None
        for a in reversed(range(k)):
            axis = lead + a
            wins = adaptive_windows(shape[axis], out[a])
            width = max(e - s for s, e in wins)
            taps = np.array([[min(s + t, e - 1) for t in range(width)] for s, e in wins], np.int64)
            tv = L.g.op("gather", vals, L.g.const(taps), axis=axis)
            vals = L.g.op("reduce_max", tv, axes=[axis + 1])
            if not wants_result(node, 1):
                continue
            tshape = list(tv.shape)
            pos = L.g.op("broadcast", L.g.const(taps * plane[a]), shape=tshape, axes=[axis, axis + 1])
            if idx is not None:
                pos = pos + L.g.op("gather", idx, L.g.const(taps), axis=axis)
            best = L.g.op("argmax", tv, axis=axis + 1)
            kept = tshape[:axis + 1] + [1] + tshape[axis + 2:]
            hit = L.g.op("eq", L.g.op("iota", dtype="i64", shape=tshape, axis=axis + 1),
                         L.broadcast_to(L.g.op("reshape", best, shape=kept), tshape))
            idx = L.g.op("reduce_sum", L.g.op("select", hit, pos, L.full(0, "i64", tshape)), axes=[axis + 1])
        return vals, idx
    return lower


lowers(aten.adaptive_max_pool2d.default, check=_adaptive_ok)(_adaptive_max(2))
lowers(aten.adaptive_max_pool3d.default, check=_adaptive_ok)(_adaptive_max(3))


def fractional_starts(L, sample, n_in, n_out, pool):
    """PyTorch's generate_intervals for one spatial axis: the window starts
    [N, C, n_out] (i64) from the planes' samples [N, C], in the samples'
    dtype as PyTorch computes them (int((i + u) alpha) - int(u alpha),
    the last window flush with the end)."""
    lead = list(sample.shape)
    last = L.full(n_in - pool, "i64", lead + [1])
    if n_out <= 1:
        return last
    width = np.float32 if sample.dtype == "f32" else np.float64
    alpha = float(width(n_in - pool) / width(n_out - 1))
    i = L.g.op("iota", dtype=sample.dtype, shape=lead + [n_out - 1], axis=len(lead))
    u = L.g.op("reshape", sample, shape=lead + [1])
    seq = L.cast((i + u) * alpha, "i64") - L.cast(u * alpha, "i64")
    return L.g.op("concat", seq, last, axis=len(lead))


def _fractional(k):
    def lower(L, node):
        """Windows at starts computed from each plane's random samples
        (their order: W, H for 2-d; T, H, W for 3-d, as PyTorch reads
        them): every window's taps gathered by flat index, then PyTorch's
        scan: the first maximum, or the last NaN."""
        x = L.value(node.args[0])
        shape = list(L.shape(node.args[0]))
        kernel, outs = list(node.args[1]), list(node.args[2])
        samples = L.value(node.args[3], x.dtype)
        unbatched = len(shape) == k + 1
        if unbatched:
            shape = [1] + shape
            x = L.g.op("reshape", x, shape=shape)
        n, c, spatial = shape[0], shape[1], shape[2:]
        samples = L.g.op("reshape", samples, shape=[n, c, k])
        plane = _plane_strides(shape, k)
        order = [1, 0] if k == 2 else [0, 1, 2]
        # flat plane index of every tap: [n, c, out_0, pool_0, out_1, pool_1, ...]
        big = [n, c] + [d for o, p in zip(outs, kernel) for d in (o, p)]
        pos = None
        for a in range(k):
            u = L.g.op("reshape", L.slice(samples, [0, 0, order[a]], [n, c, order[a] + 1]), shape=[n, c])
            st = fractional_starts(L, u, spatial[a], outs[a], kernel[a])
            taps = L.g.op("reshape", st, shape=[n, c, outs[a], 1]) + L.g.op(
                "iota", dtype="i64", shape=[n, c, outs[a], kernel[a]], axis=3)
            term = L.g.op("broadcast", taps * float(plane[a]), shape=big, axes=[0, 1, 2 + 2 * a, 3 + 2 * a])
            pos = term if pos is None else pos + term
        perm = [0, 1] + [2 + 2 * a for a in range(k)] + [3 + 2 * a for a in range(k)]
        taps_n = int(np.prod(kernel))
        pos = L.g.op("reshape", L.g.op("transpose", pos, perm=perm), shape=[n, c] + outs + [taps_n])
        size = int(np.prod(spatial))
        base = L.g.op("iota", dtype="i64", shape=[n, c], axis=0) * float(c) + L.g.op(
            "iota", dtype="i64", shape=[n, c], axis=1)
        flat = pos + L.g.op("reshape", base * float(size), shape=[n, c] + [1] * (k + 1))
        v = L.g.op("gather", L.g.op("reshape", x, shape=[n * c * size]), flat, axis=0)
        ax = k + 2
        kk = L.g.op("iota", dtype="i64", shape=list(v.shape), axis=ax)
        nan = L.g.op("ne", v, v)
        last_nan = L.g.op("reduce_max", L.g.op("select", nan, kk, kk * 0.0 - 1.0), axes=[ax])
        top = L.g.op("reduce_max", L.g.op("select", nan, v * 0.0 - math.inf, v), axes=[ax])
        kept = list(v.shape[:-1]) + [1]
        first = L.g.op("reduce_min", L.g.op("select", L.g.op("eq", v, L.g.op("reshape", top, shape=kept)), kk,
                                            kk * 0.0 + float(taps_n)), axes=[ax])
        pick = L.g.op("select", L.g.op("lt", last_nan, last_nan * 0.0), first, last_nan)
        hit = L.g.op("eq", kk, L.g.op("reshape", pick, shape=kept))
        y = L.g.op("reduce_sum", L.g.op("select", hit, v, v * 0.0), axes=[ax])
        idx = L.g.op("reduce_sum", L.g.op("select", hit, pos, pos * 0.0), axes=[ax])
        if unbatched:
            y, idx = (L.g.op("reshape", t, shape=list(t.shape[1:])) for t in (y, idx))
        return y, idx
    return lower


lowers(aten.fractional_max_pool2d.default)(_fractional(2))
lowers(aten.fractional_max_pool3d.default)(_fractional(3))


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
    return batch_norm_statistics(L, x_n, w_n, b_n, rm_n, rv_n, momentum, eps)


def batch_norm_statistics(L, x_n, w_n, b_n, rm_n, rv_n, momentum, eps):
    """Training batch norm: the result, the batch mean and 1/std, and the
    running statistics updated."""
    out = ts_dtype(fake(x_n).dtype)
    x = L.value(x_n, out)
    shape = L.shape(x_n)
    axes = [0] + list(range(2, len(shape)))
    n = 1
    for a in axes:
        n *= shape[a]
    c = [1, shape[1]] + [1] * (len(shape) - 2)
    inv_n = 1.0 / n if n else float("nan")
    mean = L.g.op("reduce_sum", x, axes=axes) * inv_n
    d = x - L.broadcast_to(L.g.op("reshape", mean, shape=c), shape)
    var = L.g.op("reduce_sum", d * d, axes=axes) * inv_n
    rstd = 1.0 / L.g.op("sqrt", var + float(eps))
    scale = rstd * L.value(w_n, out) if w_n is not None else rstd
    y = d * L.broadcast_to(L.g.op("reshape", scale, shape=c), shape)
    if b_n is not None:
        y = y + L.g.op("reshape", L.value(b_n, out), shape=c)
    if rm_n is None:
        return y, mean, rstd, None, None
    m = float(momentum)
    new_mean = L.value(rm_n) * (1.0 - m) + L.cast(mean, L.env[rm_n].dtype) * m
    unbiased = var * (n / (n - 1.0) if n > 1 else float("nan"))
    new_var = L.value(rv_n) * (1.0 - m) + L.cast(unbiased, L.env[rv_n].dtype) * m
    return y, mean, rstd, new_mean, new_var


@lowers(aten._batch_norm_with_update_functional.default)
def batch_norm_with_update(L, node):
    """Training batch norm as the newer export spells it: the same
    results, and an empty reserve buffer between the statistics and the
    updated running ones."""
    x_n, w_n, b_n, rm_n, rv_n, momentum, eps = node.args[:7]
    y, mean, rstd, new_mean, new_var = batch_norm_statistics(L, x_n, w_n, b_n, rm_n, rv_n, momentum, eps)
    return y, mean, rstd, L.full(0, "u8", (0,)), new_mean, new_var


@lowers(aten._native_batch_norm_legit.no_stats)
def batch_norm_no_stats(L, node):
    """Batch norm without running statistics (track_running_stats=False):
    always the batch's own."""
    x_n, w_n, b_n, training, momentum, eps = node.args[:6]
    return batch_norm_statistics(L, x_n, w_n, b_n, None, None, momentum, eps)[:3]


@lowers(aten.native_group_norm.default)
def group_norm(L, node):
    """Statistics over each group of channels (and all positions), then
    each channel's scale and shift; the mean and 1/std per (batch, group)
    are results too."""
    x_n, w_n, b_n, n, c, hw, groups, eps = node.args[:8]
    out = L.out_dtype(node)
    x = L.g.op("reshape", L.value(x_n, out), shape=[n, groups, (c // groups) * hw])
    per_group = [n, groups, (c // groups) * hw]
    inv_count = 1.0 / per_group[2] if per_group[2] else float("nan")
    mean = L.g.op("reduce_sum", x, axes=[2]) * inv_count
    d = x - L.broadcast_to(L.g.op("reshape", mean, shape=[n, groups, 1]), per_group)
    var = L.g.op("reduce_sum", d * d, axes=[2]) * inv_count
    rstd = 1.0 / L.g.op("sqrt", var + float(eps))
    y = L.g.op("reshape", d * L.broadcast_to(L.g.op("reshape", rstd, shape=[n, groups, 1]), per_group),
               shape=[n, c, hw])
    if w_n is not None:
        y = y * L.g.op("broadcast", L.value(w_n, out), shape=[n, c, hw], axes=[1])
    if b_n is not None:
        y = y + L.g.op("broadcast", L.value(b_n, out), shape=[n, c, hw], axes=[1])
    return L.g.op("reshape", y, shape=list(L.shape(x_n))), mean, rstd


# ---- grid sampling ---------------------------------------------------------------------------

def grid_coordinate(L, c, size, align, vector_form):
    """A grid coordinate in [-1, 1] as an input position along an axis of
    size inputs. PyTorch unnormalizes 2-d grids with its vectorized
    formula and 3-d ones with the scalar one; they round differently, so
    each is followed."""
    if align:
        return (c + 1.0) * ((size - 1) / 2.0) if vector_form else (c + 1.0) * 0.5 * float(size - 1)
    return (c + 1.0) * (size / 2.0) - 0.5 if vector_form else ((c + 1.0) * float(size) - 1.0) * 0.5


def pad_coordinate(L, c, size, padding_mode, align):
    """A position moved into the input by the padding mode: border clips,
    reflection reflects about the borders (align) or the outer pixel
    edges, then clips; zeros leaves it (reads outside give 0)."""
    if padding_mode == 2:
        low, span = (0.0, float(size - 1)) if align else (-0.5, float(size))
        if span == 0:
            return L.full(0, c.dtype, tuple(c.shape))
        a = L.g.op("abs", c - low)
        extra = L.g.op("rem", a, L.full(2 * span, c.dtype, tuple(c.shape)))
        c = L.g.op("min", extra, (2 * span) - extra) + low
    if padding_mode != 0:
        c = L.g.op("min", L.g.op("max", c, L.full(0, c.dtype, tuple(c.shape))),
                   L.full(size - 1, c.dtype, tuple(c.shape)))
    return c


def cubic_weights(L, t):
    """PyTorch's bicubic tap weights (A = -0.75) for taps -1, 0, 1, 2 at
    fraction t."""
    a = -0.75

    def near(x):   # |x| <= 1
        return ((x * (a + 2.0)) - (a + 3.0)) * x * x + 1.0

    def far(x):    # 1 < |x| < 2
        return ((x * a - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    u = 1.0 - t
    return [far(t + 1.0), near(t), near(u), far(u + 1.0)]


def _grid_sampler(k):
    def lower(L, node):
        """Each output reads the input at a grid point: bilinear, the 2^k
        corners around it by their weights, bicubic the 4^k taps, nearest
        the rounded one;
        corners outside the input read 0 (padding_mode 'zeros'). The
        corners are gathered from the input viewed as rows of channels."""
        x_n, grid_n, mode, padding_mode, align = node.args[:5]
        out = L.out_dtype(node)
        xs, gs = L.shape(x_n), L.shape(grid_n)
        n, ch, sizes, outs = xs[0], xs[1], list(xs[2:]), list(gs[1:-1])
        grid = L.value(grid_n, out)
        coords = []
        for a in range(k):   # grid component 0 is x (the last axis)
            c = L.g.op("reshape", L.slice(grid, [0] * (k + 1) + [k - 1 - a], [n] + outs + [k - a]),
                       shape=[n] + outs)
            coords.append(grid_coordinate(L, c, sizes[a], align, k == 2))
        rows = L.g.op("transpose", L.value(x_n, out), perm=[0] + list(range(2, k + 2)) + [1])
        rows = L.g.op("reshape", rows, shape=[n * math.prod(sizes), ch])
        pts = [n] + outs
        if mode == 2:   # bicubic: the 4^k taps around, each tap's position padded on its own
            lo = [L.g.op("floor", c) for c in coords]
            weights = [cubic_weights(L, c - f) for c, f in zip(coords, lo)]
            corners = []
            for taps in itertools.product(range(4), repeat=k):
                pos = [pad_coordinate(L, f + float(t - 1), size, padding_mode, align)
                       for f, t, size in zip(lo, taps, sizes)]
                w = None
                for ws, t in zip(weights, taps):
                    w = ws[t] if w is None else w * ws[t]
                corners.append((pos, w))
            return _gather_corners(L, rows, corners, sizes, pts, ch, k)
        coords = [pad_coordinate(L, c, size, padding_mode, align) for c, size in zip(coords, sizes)]
        if mode == 1:
            corners = [([L.g.op("round", c) for c in coords], None)]
        else:
            lo = [L.g.op("floor", c) for c in coords]
            corners = []
            for bits in itertools.product((0, 1), repeat=k):
                pos = [f + 1.0 if b else f for f, b in zip(lo, bits)]
                w = None
                for c, f, b in zip(coords, lo, bits):
                    wa = c - f if b else (f + 1.0) - c
                    w = wa if w is None else w * wa
                corners.append((pos, w))
        return _gather_corners(L, rows, corners, sizes, pts, ch, k)
    return lower


def _gather_corners(L, rows, corners, sizes, pts, ch, k):
    """The weighted sum of the input read at each (positions, weight)
    corner (weight None: 1), as [N, C, *out]."""
    total = None
    for pos, w in corners:
        v = _read_corner(L, rows, pos, sizes, pts, ch)
        if w is not None:
            v = v * L.broadcast_to(L.g.op("reshape", w, shape=pts + [1]), pts + [ch])
        total = v if total is None else total + v
    return L.g.op("transpose", total, perm=[0, k + 1] + list(range(1, k + 1)))


def _read_corner(L, rows, pos, sizes, pts, ch):
    """rows [N*positions, C] read at float positions (one per axis, each
    [N, *out]): 0 where a position is outside the input."""
    inside = None
    flat = L.g.op("iota", dtype="i64", shape=pts, axis=0) * float(math.prod(sizes))
    stride = math.prod(sizes)
    for p, size in zip(pos, sizes):
        stride //= size
        ok = L.g.op("and", L.g.op("le", L.full(0, p.dtype, tuple(pts)), p),
                    L.g.op("lt", p, L.full(size, p.dtype, tuple(pts))))
        inside = ok if inside is None else L.g.op("and", inside, ok)
        clamped = L.g.op("min", L.g.op("max", p, L.full(0, p.dtype, tuple(pts))), L.full(size - 1, p.dtype, tuple(pts)))
        flat = flat + L.cast(clamped, "i64") * float(stride)
    v = L.g.op("gather", rows, flat, axis=0)
    keep = L.broadcast_to(L.g.op("reshape", inside, shape=pts + [1]), pts + [ch])
    return L.g.op("select", keep, v, L.full(0, v.dtype, tuple(pts) + (ch,)))


lowers(aten.grid_sampler_2d.default)(_grid_sampler(2))
lowers(aten.grid_sampler_3d.default,
       check=lambda node: "bicubic 3-d sampling (PyTorch has none)" if node.args[2] == 2 else None)(_grid_sampler(3))


# ---- antialiased resampling ------------------------------------------------------------------

def aa_bilinear_weights(n, o, align, scale):
    """The [o, n] matrix of PyTorch's antialiased bilinear resampling along
    one axis (UpSampleKernel.cpp's _compute_indices_min_size_weights_aa for
    float): a triangle filter widened by the downscaling factor, each row
    normalized, computed in float32 with that code's promotions."""
    f32 = np.float32
    if align:
        s = f32(n - 1) / f32(o - 1) if o > 1 else f32(0)
    else:
        s = f32(1.0 / scale) if scale is not None and scale > 0 else f32(n) / f32(o)
    support = f32(1.0 * float(s)) if s >= 1.0 else f32(1.0)
    width = int(math.ceil(support)) * 2 + 1
    invscale = f32(1.0 / float(s)) if s >= 1.0 else f32(1.0)
    m = np.zeros((o, n), np.float32)
    for i in range(o):
        center = f32(float(s) * (i + 0.5))
        lo = max(int(float(f32(center - support)) + 0.5), 0)
        size = min(max(min(int(float(f32(center + support)) + 0.5), n) - lo, 0), width)
        w = np.array([f32((float(f32(f32(j + lo) - center)) + 0.5) * float(invscale)) for j in range(size)], f32)
        w = np.where(np.abs(w) < 1, f32(1) - np.abs(w), f32(0)).astype(f32)
        total = f32(0)
        for v in w:
            total = f32(total + v)
        if total != 0:
            w = (w / total).astype(f32)
        m[i, lo:lo + size] = w
    return m


@lowers(aten._upsample_bilinear2d_aa.default)
def upsample_bilinear2d_aa(L, node):
    """Separable: per axis whose size changes, a product with its weight
    matrix (an axis of unchanged size is left as it is, as PyTorch does)."""
    x_n, size, align = node.args[:3]
    scales = (list(node.args[3:5]) + [None, None])[:2]
    x = L.value(x_n, L.out_dtype(node))
    shape = L.shape(x_n)
    mats = [aa_bilinear_weights(n, o, align, sc) if n != o else None
            for n, o, sc in zip(shape[2:], size, scales)]
    return contract_axes(L, x, 2, mats)
