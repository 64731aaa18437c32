"""Layout ATen operators: views (view, permute, expand, squeeze,
unsqueeze, slice, select), concatenation, splitting, padding, flipping,
repeating, dtype conversion and copies. tessera values are dense, so a
view is a reshape or a transpose that the compiler keeps copy-free where
it can."""
import sys

import torch

from .table import fake, lowers

aten = torch.ops.aten


def reshape_to(L, node, v):
    want = list(L.shape(node))
    return v if list(v.shape) == want else L.g.op("reshape", v, shape=want)


@lowers(aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.squeeze.dims,
        aten.squeeze.dim, aten.squeeze.default, aten.unsqueeze.default, aten.view_copy.default, dynamic=True,
        size_args=True)
def view(L, node):
    return reshape_to(L, node, L.value(node.args[0]))


@lowers(aten.alias.default, aten.clone.default, aten.lift_fresh_copy.default, aten.detach.default, dynamic=True)
def identity(L, node):
    return L.value(node.args[0])


def _to_copy_ok(node):
    """copies to another device"""
    dev = node.kwargs.get("device")
    if dev is not None and torch.device(dev).type != "cpu":
        return "a copy to device %s" % dev
    return None


@lowers(aten._to_copy.default, check=_to_copy_ok, dynamic=True)
def to_copy(L, node):
    return L.cast(L.value(node.args[0]), L.out_dtype(node))


@lowers(aten.permute.default, dynamic=True)
def permute(L, node):
    x = L.value(node.args[0])
    rank = len(x.shape)
    perm = [d % rank for d in node.args[1]] if rank else []
    return x if perm == list(range(rank)) else L.g.op("transpose", x, perm=perm)


@lowers(aten.t.default, aten.transpose.int, dynamic=True)
def transpose(L, node):
    x = L.value(node.args[0])
    rank = len(x.shape)
    if rank < 2:
        return x
    a, b = (node.args[1] % rank, node.args[2] % rank) if len(node.args) > 2 else (0, 1)
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return L.g.op("transpose", x, perm=perm)


@lowers(aten.expand.default, dynamic=True, size_args=True)
def expand(L, node):
    return L.broadcast_to(L.value(node.args[0]), L.shape(node))


@lowers(aten.repeat.default)
def repeat(L, node):
    x = L.value(node.args[0])
    reps = list(node.args[1])
    shape = [1] * (len(reps) - len(x.shape)) + list(x.shape)
    # x[..., d, ...] -> [..., r, d, ...] broadcast, then merged
    inter = []
    for r, d in zip(reps, shape):
        inter += [1, d]
    v = L.g.op("reshape", x, shape=inter)
    big = []
    for r, d in zip(reps, shape):
        big += [r, d]
    v = L.broadcast_to(v, big)
    return L.g.op("reshape", v, shape=[r * d for r, d in zip(reps, shape)])


def clamp_range(start, end, step, n):
    start = 0 if start is None else start
    end = n if end is None or end == sys.maxsize else end
    start = start + n if start < 0 else start
    end = end + n if end < 0 else end
    start = min(max(start, 0), n)
    end = min(max(end, start), n)
    return start, end, step


def _static_ints(node):
    """starts, ends or indices computed at run time"""
    for a in node.args[1:]:
        if isinstance(a, torch.fx.Node):
            return "a size or index computed at run time"
    return None


@lowers(aten.slice.Tensor, check=_static_ints)
def slice_(L, node):
    x = L.value(node.args[0])
    rank = len(x.shape)
    dim = (node.args[1] if len(node.args) > 1 else 0) % rank
    start = node.args[2] if len(node.args) > 2 else None
    end = node.args[3] if len(node.args) > 3 else None
    step = node.args[4] if len(node.args) > 4 else 1
    shape = L.shape(node.args[0])
    s, e, st = clamp_range(start, end, step, shape[dim])
    if (s, e, st) == (0, shape[dim], 1):
        return x
    starts = [0] * rank
    limits = list(shape)
    strides = [1] * rank
    starts[dim], limits[dim], strides[dim] = s, e, st
    return L.slice(x, starts, limits, strides)


@lowers(aten.select.int, check=_static_ints)
def select(L, node):
    x = L.value(node.args[0])
    rank = len(x.shape)
    dim = node.args[1] % rank
    shape = L.shape(node.args[0])
    i = node.args[2] % shape[dim]
    starts = [0] * rank
    limits = list(shape)
    starts[dim], limits[dim] = i, i + 1
    return reshape_to(L, node, L.slice(x, starts, limits))


@lowers(aten.cat.default, dynamic=True)
def cat(L, node):
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    out = L.out_dtype(node)
    rank = len(L.shape(node))
    # legacy: 1-d empty tensors are skipped
    parts = [L.value(t, out) for t in node.args[0] if not (fake(t).dim() == 1 and L.shape(t)[0] == 0)]
    if len(parts) == 1:
        return parts[0]
    return L.g.op("concat", *parts, axis=dim % rank)


@lowers(aten.split_with_sizes.default, aten.split.Tensor)
def split(L, node):
    x = L.value(node.args[0])
    shape = L.shape(node.args[0])
    rank = len(shape)
    dim = (node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)) % rank
    sizes = node.args[1]
    if isinstance(sizes, int):
        n = shape[dim]
        sizes = [min(sizes, n - i) for i in range(0, n, sizes)] or [0]
    outs, at = [], 0
    for sz in sizes:
        starts, limits = [0] * rank, list(shape)
        starts[dim], limits[dim] = at, at + sz
        outs.append(L.slice(x, starts, limits))
        at += sz
    return tuple(outs)


@lowers(aten.constant_pad_nd.default, dynamic=True)
def constant_pad(L, node):
    x = L.value(node.args[0])
    pads = list(node.args[1])
    value = node.args[2] if len(node.args) > 2 else 0
    rank = len(x.shape)
    lo, hi = [0] * rank, [0] * rank
    for i in range(len(pads) // 2):   # pairs from the last dim backwards
        lo[rank - 1 - i], hi[rank - 1 - i] = pads[2 * i], pads[2 * i + 1]
    return L.g.op("pad", x, L.full(value, x.dtype, ()), lo=lo, hi=hi, interior=[0] * rank)


@lowers(aten.flip.default, dynamic=True)
def flip(L, node):
    x = L.value(node.args[0])
    rank = len(x.shape)
    return L.g.op("reverse", x, axes=sorted({d % rank for d in node.args[1]}))
