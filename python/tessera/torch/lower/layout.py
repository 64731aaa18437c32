"""Layout ATen operators: views (view, permute, expand, squeeze,
unsqueeze, slice, select, diagonal, unfold, as_strided), concatenation,
splitting, padding, flipping, repeating, dtype conversion and copies, and
the scatters into views (slice, diagonal, as_strided). tessera values are
dense, so a view is a reshape, transpose, slice or gather that the
compiler keeps copy-free where it can; a scatter into a view is a select
between the input and the source padded into place."""
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


def _static_ints(node, skip=1):
    """starts, ends or indices computed at run time"""
    for a in node.args[skip:]:
        if isinstance(a, torch.fx.Node) or (isinstance(a, (list, tuple)) and
                                            any(isinstance(d, torch.fx.Node) for d in a)):
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


def arg(node, i, name, default):
    """Argument i (or keyword name) of node, default when absent."""
    return node.args[i] if len(node.args) > i else node.kwargs.get(name, default)


def last_perm(rank, dims):
    """The permutation that moves dims, in order, behind the others."""
    return [i for i in range(rank) if i not in dims] + list(dims)


def moved_last(L, x, dims):
    """x with dims moved, in order, behind the others: the value and the
    permutation used."""
    perm = last_perm(len(x.shape), dims)
    return (x if perm == sorted(perm) else L.g.op("transpose", x, perm=perm)), perm


def moved_back(L, v, perm):
    """Undoes moved_last."""
    if perm == list(range(len(perm))):
        return v
    return L.g.op("transpose", v, perm=[perm.index(i) for i in range(len(perm))])


def overlay(L, base, src, spread):
    """base with src's elements where spread(src) puts them: spread (a
    function of a value and its fill scalar) lays out src and a mask of
    the same shape alike."""
    placed = spread(src, L.full(0, src.dtype, ()))
    mask = spread(L.full(1, "bool", src.shape), L.full(0, "bool", ()))
    return L.g.op("select", mask, placed, base)


# ---- diagonals ---------------------------------------------------------------------------------

def diagonal_args(node):
    """offset, dim1, dim2 (normalised) of diagonal or diagonal_scatter,
    whose src comes before them."""
    rank = len(fake(node.args[0]).shape)
    at = 2 if node.target == aten.diagonal_scatter.default else 1
    offset = arg(node, at, "offset", 0)
    d1, d2 = arg(node, at + 1, "dim1", 0) % rank, arg(node, at + 2, "dim2", 1) % rank
    return offset, d1, d2


def diagonal_box(shape, offset, d1, d2):
    """The square block of dims (d1, d2) whose main diagonal is the
    offset diagonal: its first row, first column and side m."""
    n1, n2 = shape[d1], shape[d2]
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    m = max(0, min(n1 - r0, n2 - c0))
    return (r0, c0, m) if m else (0, 0, 0)


@lowers(aten.diagonal.default, aten.diagonal_copy.default)
def diagonal(L, node):
    offset, d1, d2 = diagonal_args(node)
    shape = L.shape(node.args[0])
    r0, c0, m = diagonal_box(shape, offset, d1, d2)
    t, perm = moved_last(L, L.value(node.args[0]), [d1, d2])
    rest = [shape[i] for i in perm[:-2]]
    block = L.slice(t, [0] * len(rest) + [r0, c0], rest + [r0 + m, c0 + m])
    # the diagonal of an m x m block is every (m+1)-th element of its rows laid end to end
    flat = L.g.op("reshape", block, shape=rest + [m * m])
    return L.slice(flat, [0] * (len(rest) + 1), rest + [m * m], [1] * len(rest) + [m + 1])


@lowers(aten.diagonal_scatter.default)
def diagonal_scatter(L, node):
    x = L.value(node.args[0])
    offset, d1, d2 = diagonal_args(node)
    shape = L.shape(node.args[0])
    r0, c0, m = diagonal_box(shape, offset, d1, d2)
    if m == 0:
        return x
    perm = last_perm(len(shape), [d1, d2])
    rest = len(shape) - 2
    n1, n2 = shape[d1], shape[d2]

    def spread(v, fill):
        # m values m apart fill an m x m block's diagonal; the block then sits at (r0, c0)
        v = L.g.op("pad", v, fill, lo=[0] * (rest + 1), hi=[0] * (rest + 1), interior=[0] * rest + [m])
        v = L.g.op("reshape", v, shape=list(v.shape[:-1]) + [m, m])
        v = L.g.op("pad", v, fill, lo=[0] * rest + [r0, c0], hi=[0] * rest + [n1 - r0 - m, n2 - c0 - m],
                   interior=[0] * (rest + 2))
        return moved_back(L, v, perm)
    return overlay(L, x, L.value(node.args[1], x.dtype), spread)


# ---- copies and scatters into slices -----------------------------------------------------------

@lowers(aten.copy.default, dynamic=True)
def copy(L, node):
    """The values of src, broadcast to dst's shape and cast to its dtype."""
    return L.broadcast_to(L.value(node.args[1], L.out_dtype(node)), L.shape(node))


def _scatter_static_ints(node):
    return _static_ints(node, skip=2)


@lowers(aten.slice_scatter.default, check=_scatter_static_ints)
def slice_scatter(L, node):
    x = L.value(node.args[0])
    shape = L.shape(node.args[0])
    rank = len(shape)
    dim = arg(node, 2, "dim", 0) % rank
    s, e, step = clamp_range(arg(node, 3, "start", None), arg(node, 4, "end", None), arg(node, 5, "step", 1),
                             shape[dim])
    src = L.value(node.args[1], x.dtype)
    k = L.shape(node.args[1])[dim]
    if k == 0:
        return x

    def spread(v, fill):
        lo, hi, interior = [0] * rank, [0] * rank, [0] * rank
        lo[dim], hi[dim], interior[dim] = s, shape[dim] - (s + (k - 1) * step + 1), step - 1
        return L.g.op("pad", v, fill, lo=lo, hi=hi, interior=interior)
    return overlay(L, x, src, spread)


@lowers(aten.narrow_copy.default, check=_static_ints)
def narrow_copy(L, node):
    x = L.value(node.args[0])
    shape = L.shape(node.args[0])
    dim = node.args[1] % len(shape)
    start = node.args[2] % shape[dim] if shape[dim] else 0
    starts, limits = [0] * len(shape), list(shape)
    starts[dim], limits[dim] = start, start + node.args[3]
    return L.slice(x, starts, limits)


@lowers(aten.permute_copy.default, dynamic=True)
def permute_copy(L, node):
    return permute(L, node)


@lowers(aten.unbind_copy.int, aten.unbind.int)
def unbind(L, node):
    x = L.value(node.args[0])
    shape = L.shape(node.args[0])
    dim = arg(node, 1, "dim", 0) % len(shape)
    rest = [d for i, d in enumerate(shape) if i != dim]
    outs = []
    for i in range(shape[dim]):
        starts, limits = [0] * len(shape), list(shape)
        starts[dim], limits[dim] = i, i + 1
        outs.append(L.g.op("reshape", L.slice(x, starts, limits), shape=rest))
    return tuple(outs)


# ---- strided views ---------------------------------------------------------------------------

def flat_positions(L, sizes, strides, offset):
    """The i64 storage positions offset + sum(i_d * stride_d) of a strided
    view of sizes."""
    pos = L.full(offset, "i64", sizes)
    for d, st in enumerate(strides):
        if st and sizes[d] > 1:
            pos = pos + L.g.op("iota", dtype="i64", shape=list(sizes), axis=d) * L.g.scalar(float(st), "i64")
    return pos


def strided_reach(sizes, strides, offset):
    """The last storage position a strided view reads (offset - 1 when it
    is empty)."""
    if any(s == 0 for s in sizes):
        return offset - 1
    return offset + sum((s - 1) * st for s, st in zip(sizes, strides))


def non_overlapping(sizes, strides):
    """True when no two elements of the strided view share a position
    (checked the usual sufficient way: each stride, in increasing order,
    steps past everything the smaller ones reach)."""
    reach = 1
    for st, s in sorted((st, s) for s, st in zip(sizes, strides) if s > 1):
        if st < reach:
            return False
        reach = st * (s - 1) + reach
    return True


def storage_perm(x):
    """The order of x's dims in memory, outermost first, when x's elements
    fill a stretch of its storage once each (dense, non-overlapping, any
    dim order); else None."""
    perm = sorted(range(x.dim()), key=lambda d: -x.stride(d))
    step = 1
    for d in reversed(perm):
        if x.shape[d] != 1:
            if x.stride(d) != step:
                return None
            step *= x.shape[d]
    return perm


def in_storage_order(L, x_node):
    """The node's value flattened in the order of its storage, and the
    permutation that got it there."""
    x = fake(x_node)
    perm = storage_perm(x)
    v, _ = moved_last(L, L.value(x_node), perm)
    return L.g.op("reshape", v, shape=[x.numel()]), perm


def strided_args(node):
    """(input, sizes, strides, storage offset) of an as_strided* node; the
    scatter's src comes between the input and the sizes."""
    at = 2 if node.target == aten.as_strided_scatter.default else 1
    return node.args[0], list(node.args[at]), list(node.args[at + 1]), arg(node, at + 2, "storage_offset", None)


def _as_strided_ok(node):
    """a view that reaches past the input's own elements"""
    if _scatter_static_ints(node):
        return _scatter_static_ints(node)
    x_node, sizes, strides, offset = strided_args(node)
    x = fake(x_node)
    if storage_perm(x) is None:
        return "an input whose elements overlap or leave gaps in its storage"
    scatter = node.target == aten.as_strided_scatter.default
    base = 0 if scatter else x.storage_offset()   # as_strided_scatter views a fresh clone (offset 0)
    offset = base if offset is None else offset
    if offset < base or strided_reach(sizes, strides, offset) >= base + x.numel():
        return "a view reaching outside the input's elements"
    if scatter and not non_overlapping(sizes, strides):
        return "a view whose elements may overlap"
    return None


@lowers(aten.as_strided.default, aten.as_strided_copy.default, check=_as_strided_ok)
def as_strided(L, node):
    x_node, sizes, strides, offset = strided_args(node)
    offset = 0 if offset is None else offset - fake(x_node).storage_offset()
    flat, _ = in_storage_order(L, x_node)
    return L.g.op("gather", flat, flat_positions(L, sizes, strides, offset), axis=0)


@lowers(aten.as_strided_scatter.default, check=_as_strided_ok)
def as_strided_scatter(L, node):
    x_node, sizes, strides, offset = strided_args(node)
    flat, perm = in_storage_order(L, x_node)
    src = L.value(node.args[1], flat.dtype)
    flat = L.g.op("scatter", flat, flat_positions(L, sizes, strides, offset or 0), src, combine="set")
    # the result is a clone of the input, laid out as the input is
    stored = L.g.op("reshape", flat, shape=[L.shape(x_node)[d] for d in perm])
    return moved_back(L, stored, perm)


def _unfold_ok(node):
    return _static_ints(node)


@lowers(aten.unfold.default, aten.unfold_copy.default, check=_unfold_ok)
def unfold(L, node):
    x = L.value(node.args[0])
    shape = L.shape(node.args[0])
    size, step = node.args[2], node.args[3]
    if not shape:
        return reshape_to(L, node, x) if size == 1 else L.full(0, x.dtype, L.shape(node))
    dim = node.args[1] % len(shape)
    count = (shape[dim] - size) // step + 1
    # window i, element j reads position i*step + j along dim; the window axis goes last
    idx = L.g.op("iota", dtype="i64", shape=[count, size], axis=0) * L.g.scalar(float(step), "i64") + \
        L.g.op("iota", dtype="i64", shape=[count, size], axis=1)
    g = L.g.op("gather", x, idx, axis=dim)
    perm = [i for i in range(len(shape) + 1) if i != dim + 1] + [dim + 1]
    return L.g.op("transpose", g, perm=perm)
