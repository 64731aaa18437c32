"""Indexing ATen operators: advanced indexing (index, index_put),
torch.gather (take-along-axis), put, sort and topk. They all come
down to tessera's gather and scatter over flat positions: the indexed
dims are moved together and merged into one, and each index tensor
contributes its index times that dim's stride within the block.

An index out of range must raise as in PyTorch, not reach a neighbouring
element: its position is made -1, which gather and scatter refuse at run
time."""
import torch

from .scatter import along_positions, numel
from .table import fake, lowers

aten = torch.ops.aten

MASKS = (torch.bool, torch.uint8)   # PyTorch reads a uint8 index as a mask too


def _indexed(indices):
    return [i for i, t in enumerate(indices) if t is not None]


def _is_mask(t):
    return t is not None and fake(t).dtype in MASKS


def _index_ok(node):
    """boolean masks (a data-dependent size), no index at all"""
    idx = node.args[1]
    if not _indexed(idx):
        return "no index tensor"
    if any(_is_mask(t) for t in idx):
        return "a boolean mask (a data-dependent size)"
    return None


def broadcast_shape(shapes):
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        ds = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0} - {1}
        out.append(ds.pop() if ds else 1)
    return tuple(out)


def in_range(L, i, n):
    """i (i64) with negatives wrapped once, and whether it is outside [0, n)."""
    zero = L.full(0, "i64", ())
    i = L.g.op("select", L.g.op("lt", i, zero), i + float(n), i)
    return i, L.g.op("or", L.g.op("lt", i, zero), L.g.op("le", L.full(n, "i64", ()), i))


def flat_block(L, shape, first, idx_nodes):
    """x's dims [first, first+k) merged, and the flat position in that
    block of each indexed element (negative indices wrapped, -1 for one
    out of range): (the merged shape, positions, the broadcast index
    shape)."""
    k = len(idx_nodes)
    dims = shape[first:first + k]
    bshape = broadcast_shape([L.shape(t) for t in idx_nodes])
    pos, bad, stride = None, None, 1
    for d in reversed(range(k)):
        i, out = in_range(L, L.broadcast_to(L.cast(L.value(idx_nodes[d]), "i64"), bshape), dims[d])
        term = i * float(stride) if stride != 1 else i
        pos = term if pos is None else pos + term
        bad = out if bad is None else L.g.op("or", bad, out)
        stride *= dims[d]
    pos = L.g.op("select", bad, L.full(-1, "i64", bshape), pos)
    merged = list(shape[:first]) + [stride] + list(shape[first + k:])
    return merged, pos, bshape


def indexed_first(L, node):
    """x, its shape and the index nodes, with the indexed dims moved to
    the front when they are not adjacent (PyTorch then puts the index's
    dims first in the result too), and the permutation (None if kept)."""
    x_n, indices = node.args[0], node.args[1]
    x, shape = L.value(x_n), L.shape(x_n)
    pos = _indexed(indices)
    idx_nodes = [indices[i] for i in pos]
    if pos == list(range(pos[0], pos[-1] + 1)):
        return x, shape, pos[0], idx_nodes, None
    perm = pos + [a for a in range(len(shape)) if a not in pos]
    x = L.g.op("transpose", x, perm=perm)
    return x, tuple(shape[a] for a in perm), 0, idx_nodes, perm


@lowers(aten.index.Tensor, check=_index_ok)
def index(L, node):
    x, shape, first, idx_nodes, _ = indexed_first(L, node)
    merged, pos, _ = flat_block(L, shape, first, idx_nodes)
    x = L.g.op("reshape", x, shape=merged)
    return L.g.op("gather", x, pos, axis=first)


def _accumulate(node):
    return node.args[3] if len(node.args) > 3 else node.kwargs.get("accumulate", False)


def _index_put_ok(node):
    """a mask beside other indices, a mask whose count the values fix at
    zero, accumulating into bool"""
    idx = node.args[1]
    if not _indexed(idx):
        return "no index tensor"
    if _accumulate(node) and fake(node).dtype == torch.bool:
        return "accumulate into bool"
    masks = [t for t in idx if _is_mask(t)]
    if masks and len(_indexed(idx)) > 1:
        return "a boolean mask beside other indices"
    if masks and tuple(fake(masks[0]).shape) != _masked_dims(node):
        return "a mask whose shape is not the dims it covers"
    if masks and _mask_rows(node) == 0:
        return "values with no rows for the mask"
    return None


def _masked_dims(node):
    idx = node.args[1]
    p = _indexed(idx)[0]
    return tuple(fake(node.args[0]).shape[p:p + len(fake(idx[p]).shape)])


def _mask_rows(node):
    """The size of the values along the mask's (broadcast) result axis:
    None when they broadcast along it."""
    x_n, idx, v_n = node.args[:3]
    p = _indexed(idx)[0]
    k = len(fake(idx[p]).shape)
    rank = len(fake(x_n).shape) - k + 1
    vshape = fake(v_n).shape
    a = p - (rank - len(vshape))
    return None if a < 0 or int(vshape[a]) == 1 else int(vshape[a])


@lowers(aten.index_put.default, check=_index_put_ok)
def index_put(L, node):
    if _is_mask(node.args[1][_indexed(node.args[1])[0]]):
        return mask_put(L, node)
    x, shape, first, idx_nodes, perm = indexed_first(L, node)
    r = put_block(L, node, x, shape, first, idx_nodes)
    if perm is None:
        return r
    back = [perm.index(a) for a in range(len(perm))]
    return L.g.op("transpose", r, perm=back)


def put_block(L, node, x, shape, first, idx_nodes):
    """x with the indexed elements set (or added to: accumulate), one
    scatter over x's flat positions: the index block's position times its
    stride, plus each other axis's coordinate times its stride."""
    v_n = node.args[2]
    out = L.out_dtype(node)
    merged, pos, bshape = flat_block(L, shape, first, idx_nodes)
    nb = len(bshape)
    full = list(merged[:first]) + list(bshape) + list(merged[first + 1:])
    strides, s_ = [0] * len(merged), 1
    for a in reversed(range(len(merged))):
        strides[a], s_ = s_, s_ * merged[a]
    block = L.broadcast_to(L.g.op("reshape", pos, shape=[1] * first + list(bshape) +
                                  [1] * (len(merged) - first - 1)), full)
    p = block * float(strides[first]) if strides[first] != 1 else block
    for a in range(len(full)):
        if first <= a < first + nb:
            continue
        m = a if a < first else a - nb + 1   # the axis of merged
        p = p + L.g.op("iota", dtype="i64", shape=full, axis=a) * float(strides[m])
    p = L.g.op("select", L.g.op("lt", block, L.full(0, "i64", ())), block, p)
    v = L.broadcast_to(L.value(v_n, out), full)
    return L.g.op("scatter", L.cast(x, out), p, v, combine="add" if _accumulate(node) else "set")


def mask_put(L, node):
    """x[..., mask, ...] = v (or += v): a select over x's shape. The value
    for the k-th True element is v's row k on the mask's result axis,
    found by a running count of the mask; values that broadcast along
    that axis need no count."""
    x_n, idx, v_n = node.args[:3]
    out = L.out_dtype(node)
    shape = L.shape(x_n)
    p = _indexed(idx)[0]
    mshape = L.shape(idx[p])
    k = len(mshape)
    pre, post = list(shape[:p]), list(shape[p + k:])
    mask = L.cast(L.value(idx[p]), "bool")
    rows = _mask_rows(node)
    v = L.value(v_n, out)
    if rows is None:
        v = L.broadcast_to(v, pre + [1] + post)
        v = L.broadcast_to(L.g.op("reshape", v, shape=pre + [1] * k + post), list(shape))
    else:
        v = L.broadcast_to(v, pre + [rows] + post)
        n = 1
        for d in mshape:
            n *= d
        flat = L.g.op("reshape", L.cast(mask, "i64"), shape=[n])
        rank = L.g.op("cumulative", flat, kind="sum", axis=0, exclusive=1)
        total = L.g.op("reduce_sum", flat, axes=[0])
        # a count the values do not match raises in PyTorch: an index gather refuses
        wrong = L.g.op("ne", L.g.op("broadcast", total, shape=[n], axes=[]), L.full(rows, "i64", (n,)))
        rank = L.g.op("select", wrong, L.full(-1, "i64", (n,)), L.g.op("min", rank, L.full(rows - 1, "i64", (n,))))
        v = L.g.op("reshape", L.g.op("gather", v, rank, axis=p), shape=list(shape))
    mask = L.broadcast_to(L.g.op("reshape", mask, shape=[1] * p + list(mshape) + [1] * len(post)), list(shape))
    x = L.value(x_n, out)
    if _accumulate(node):
        return x + L.g.op("select", mask, v, L.full(0, out, shape))
    return L.g.op("select", mask, v, x)


@lowers(aten.gather.default)
def gather(L, node):
    """torch.gather (take along an axis): the flat position of every
    element, its index on `dim` and its own coordinates elsewhere. A 0-d
    x is a 1-element row."""
    x_n, dim, idx_n = node.args[:3]
    shape, ishape = L.shape(x_n) or (1,), L.shape(idx_n) or (1,)
    idx = L.g.op("reshape", L.value(idx_n), shape=list(ishape))
    flat = L.g.op("reshape", L.value(x_n), shape=[numel(shape)])
    r = L.g.op("gather", flat, along_positions(L, shape, dim % len(shape), idx), axis=0)
    return r if tuple(r.shape) == L.shape(node) else L.g.op("reshape", r, shape=list(L.shape(node)))


def _put_ok(node):
    """accumulating into bool"""
    return "accumulate into bool" if _accumulate(node) and fake(node).dtype == torch.bool else None


@lowers(aten.put.default, check=_put_ok)
def put(L, node):
    """Tensor.put: source into x's flat positions (negatives wrapped)."""
    x_n, idx_n, src_n = node.args[:3]
    out = L.out_dtype(node)
    flat = L.g.op("reshape", L.cast(L.value(idx_n), "i64"), shape=[fake(idx_n).numel()])
    i, bad = in_range(L, flat, numel(L.shape(x_n)))
    i = L.g.op("select", bad, L.full(-1, "i64", tuple(i.shape)), i)
    src = L.g.op("reshape", L.value(src_n, out), shape=[fake(src_n).numel()])
    return L.g.op("scatter", L.value(x_n, out), i, src, combine="add" if _accumulate(node) else "set")


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
    if rank == 0:   # a 0-d tensor is its own top element (PyTorch takes k 0 or 1 alike)
        return L.value(x_n), L.full(0, "i64", ())
    d = dim % rank
    v, i = L.g.op("sort", L.value(x_n), axis=d, descending=int(bool(largest)))
    limit = list(shape)
    limit[d] = k
    return L.slice(v, [0] * rank, limit), L.slice(i, [0] * rank, limit)
