"""Indexing ATen operators: advanced indexing (index, index_put) where the
index tensors are adjacent, torch.gather (take-along-axis), sort and topk.
They all come down to tessera's gather and scatter over flat positions:
the indexed dims are merged into one, and each index tensor contributes
its index times that dim's stride within the block."""
import torch

from .table import fake, lowers

aten = torch.ops.aten


def _adjacent(indices):
    """(first dim, index nodes) when the non-None indices are adjacent."""
    pos = [i for i, t in enumerate(indices) if t is not None]
    if not pos or pos != list(range(pos[0], pos[-1] + 1)):
        return None
    return pos[0], [indices[i] for i in pos]


def _index_ok(node):
    """index tensors that are not adjacent, boolean masks"""
    idx = node.args[1]
    if _adjacent(idx) is None:
        return "index tensors that are not adjacent"
    for t in idx:
        if t is not None and fake(t).dtype == torch.bool:
            return "a boolean mask (a data-dependent size)"
    return None


def broadcast_shape(shapes):
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        ds = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0} - {1}
        out.append(ds.pop() if ds else 1)
    return tuple(out)


def flat_block(L, shape, first, idx_nodes):
    """x's dims [first, first+k) merged, and the flat position in that
    block of each indexed element (negative indices wrapped): (the
    merged shape, positions, the broadcast index shape)."""
    k = len(idx_nodes)
    dims = shape[first:first + k]
    bshape = broadcast_shape([L.shape(t) for t in idx_nodes])
    pos, stride = None, 1
    for d in reversed(range(k)):
        i = L.broadcast_to(L.cast(L.value(idx_nodes[d]), "i64"), bshape)
        i = L.g.op("select", L.g.op("lt", i, L.full(0, "i64", ())), i + float(dims[d]), i)
        term = i * float(stride) if stride != 1 else i
        pos = term if pos is None else pos + term
        stride *= dims[d]
    merged = list(shape[:first]) + [stride] + list(shape[first + k:])
    return merged, pos, bshape


@lowers(aten.index.Tensor, check=_index_ok)
def index(L, node):
    x_n, indices = node.args[0], node.args[1]
    shape = L.shape(x_n)
    first, idx_nodes = _adjacent(indices)
    merged, pos, _ = flat_block(L, shape, first, idx_nodes)
    x = L.g.op("reshape", L.value(x_n), shape=merged)
    return L.g.op("gather", x, pos, axis=first)


@lowers(aten.index_put.default, check=_index_ok)
def index_put(L, node):
    """x with the indexed elements set (or added to: accumulate), one
    scatter over x's flat positions: the index block's position times its
    stride, plus each other axis's coordinate times its stride."""
    x_n, indices, v_n = node.args[:3]
    accumulate = node.args[3] if len(node.args) > 3 else node.kwargs.get("accumulate", False)
    out = L.out_dtype(node)
    shape = L.shape(x_n)
    first, idx_nodes = _adjacent(indices)
    merged, pos, bshape = flat_block(L, shape, first, idx_nodes)
    nb = len(bshape)
    full = list(merged[:first]) + list(bshape) + list(merged[first + 1:])
    strides, s_ = [0] * len(merged), 1
    for a in reversed(range(len(merged))):
        strides[a], s_ = s_, s_ * merged[a]
    p = L.broadcast_to(L.g.op("reshape", pos, shape=[1] * first + list(bshape) + [1] * (len(merged) - first - 1)),
                       full)
    if strides[first] != 1:
        p = p * float(strides[first])
    for a in range(len(full)):
        if first <= a < first + nb:
            continue
        m = a if a < first else a - nb + 1   # the axis of merged
        p = p + L.g.op("iota", dtype="i64", shape=full, axis=a) * float(strides[m])
    v = L.broadcast_to(L.value(v_n, out), full)
    return L.g.op("scatter", L.value(x_n, out), p, v, combine="add" if accumulate else "set")


@lowers(aten.gather.default)
def gather(L, node):
    """torch.gather (take along an axis): the flat position of every
    element, its index on `dim` and its own coordinates elsewhere."""
    x_n, dim, idx_n = node.args[:3]
    shape = L.shape(x_n)
    ishape = L.shape(idx_n)
    rank = len(shape)
    if rank == 0:
        return L.value(x_n)
    dim %= rank
    pos, stride = None, 1
    for a in reversed(range(rank)):
        if a == dim:
            i = L.cast(L.value(idx_n), "i64")
            i = L.g.op("select", L.g.op("lt", i, L.full(0, "i64", ())), i + float(shape[a]), i)
        else:
            i = L.g.op("iota", dtype="i64", shape=list(ishape), axis=a)
        t = i * float(stride) if stride != 1 else i
        pos = t if pos is None else pos + t
        stride *= shape[a]
    flat = L.g.op("reshape", L.value(x_n), shape=[stride])
    return L.g.op("gather", flat, pos, axis=0)


@lowers(aten.sort.default, aten.sort.stable)
def sort(L, node):
    x_n = node.args[0]
    a = list(node.args)
    if node.target == aten.sort.stable:
        dim = node.kwargs.get("dim", -1)
        desc = node.kwargs.get("descending", False)
    else:
        dim = a[1] if len(a) > 1 else node.kwargs.get("dim", -1)
        desc = a[2] if len(a) > 2 else node.kwargs.get("descending", False)
    x = L.value(x_n)
    rank = len(L.shape(x_n))
    if rank == 0:
        return x, L.full(0, "i64", ())
    v, i = L.g.op("sort", x, axis=dim % rank, descending=int(bool(desc)))
    return v, i


@lowers(aten.topk.default)
def topk(L, node):
    x_n, k = node.args[0], node.args[1]
    a = list(node.args) + [None] * 5
    dim = -1 if a[2] is None else a[2]
    largest = True if a[3] is None else a[3]
    shape = L.shape(x_n)
    rank = len(shape)
    d = dim % rank
    v, i = L.g.op("sort", L.value(x_n), axis=d, descending=int(bool(largest)))
    limit = list(shape)
    limit[d] = k
    return L.slice(v, [0] * rank, limit), L.slice(i, [0] * rank, limit)
