"""Scatter-like ATen operators: scatter, scatter_add, scatter_reduce,
index_reduce, masked_scatter, nonzero_static; the segmented reductions
(segment_reduce, embedding_bag, embedding_renorm); searchsorted and
bucketize; histc and histogram. Each becomes one of tessera's scatters
over flat positions of the destination (the index on the scattered axis
times its stride, plus every other coordinate times its own), with a
combine of set, add, mul, max or min. Where the destination of an
element depends on data (a segment, a bag, a bin), a binary search over
the boundaries finds it, unrolled over their known count.

A reduction that leaves out the destination's own values (include_self
False) first puts the combine's identity where some update lands (found
by a scatter-add of ones, which the mean needs anyway as its count), so
the scatter folds the updates alone there and keeps the rest untouched.

An index out of range must raise as in PyTorch, not land on a
neighbouring row's element: such a position is made -1, which tessera's
scatter and gather refuse at run time."""
import torch

from .table import fake, lowers, ts_dtype

aten = torch.ops.aten

COMBINE = {"sum": "add", "add": "add", "mean": "add", "prod": "mul", "multiply": "mul",
           "amax": "max", "amin": "min"}
FLOATS = ("f16", "bf16", "f32", "f64")
INT_RANGE = {"i8": (-2 ** 7, 2 ** 7 - 1), "i16": (-2 ** 15, 2 ** 15 - 1), "i32": (-2 ** 31, 2 ** 31 - 1),
             "i64": (-2 ** 63, 2 ** 63 - 1), "u8": (0, 2 ** 8 - 1)}


def strides_of(shape):
    out, s = [0] * len(shape), 1
    for a in reversed(range(len(shape))):
        out[a], s = s, s * shape[a]
    return out


def checked(L, i, n):
    """i (i64) where 0 <= i < n, else -1: a position the indexing
    primitives refuse."""
    bad = L.g.op("or", L.g.op("lt", i, L.full(0, "i64", ())), L.g.op("le", L.full(n, "i64", ()), i))
    return L.g.op("select", bad, L.full(-1, "i64", tuple(i.shape)), i)


def along_positions(L, shape, dim, idx):
    """The flat positions in a tensor of `shape` of the elements an index
    of idx's shape addresses along dim (torch.scatter's addressing): idx
    itself on dim, each element's own coordinate on the other axes."""
    ushape = list(idx.shape)
    strides = strides_of(shape)
    i = checked(L, L.cast(idx, "i64"), shape[dim])
    pos = i * float(strides[dim]) if strides[dim] != 1 else i
    for a in range(len(shape)):
        if a != dim:
            pos = pos + L.g.op("iota", dtype="i64", shape=ushape, axis=a) * float(strides[a])
    return L.g.op("select", L.g.op("lt", i, L.full(0, "i64", ())), i, pos)


def identity(dtype, reduce):
    """The value that leaves `reduce` unchanged."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype in FLOATS:
        return float("-inf") if reduce == "amax" else float("inf")
    lo, hi = INT_RANGE[dtype]
    return lo if reduce == "amax" else hi


def floor_div(L, a, b):
    """Integer a / b rounded toward -inf, b > 0 (tessera's div truncates)."""
    q = L.g.op("div", a, b)
    behind = L.g.op("lt", a - q * b, L.full(0, a.dtype, ()))
    return L.g.op("select", behind, q - L.full(1, a.dtype, tuple(q.shape)), q)


def reduce_into(L, x, pos, upd, reduce, include_self):
    """x with the updates folded in at the flat positions by `reduce`
    (sum, prod, mean, amax, amin), PyTorch's scatter_reduce meaning."""
    shape = tuple(x.shape)
    combine = COMBINE[reduce]
    if reduce != "mean" and include_self:
        return L.g.op("scatter", x, pos, upd, combine=combine)
    count = L.g.op("scatter", L.full(0, "i64", shape), pos, L.full(1, "i64", tuple(pos.shape)), combine="add")
    base = x
    if not include_self:
        hit = L.g.op("lt", L.full(0, "i64", ()), count)
        base = L.g.op("select", hit, L.full(identity(x.dtype, reduce), x.dtype, shape), x)
    r = L.g.op("scatter", base, pos, upd, combine=combine)
    if reduce != "mean":
        return r
    if include_self:
        count = count + L.full(1, "i64", ())
    count = L.cast(L.g.op("max", count, L.full(1, "i64", shape)), x.dtype)
    return r / count if x.dtype in FLOATS else floor_div(L, r, count)


def _dtype_ok(node, reduce):
    dt = fake(node).dtype
    if dt.is_complex:
        return "a complex dtype"
    if dt == torch.bool and reduce is not None:
        return "a reduction over bool"
    return None


def _reduce_arg(node):
    if node.target in (aten.scatter_reduce.two, aten.index_reduce.default):
        return node.args[4]
    if node.target in (aten.scatter.reduce, aten.scatter.value_reduce):
        return node.kwargs.get("reduce", node.args[4] if len(node.args) > 4 else None)
    if node.target == aten.scatter_add.default:
        return "sum"
    return None


def _scatter_ok(node):
    """a reduce the overload does not take, bool reductions, complex dtypes"""
    reduce = _reduce_arg(node)
    takes = {aten.scatter_reduce.two: ("sum", "prod", "mean", "amax", "amin"),
             aten.scatter_add.default: ("sum",)}.get(node.target, ("add", "multiply"))
    if reduce is not None and reduce not in takes:
        return "reduce=%r" % (reduce,)
    return _dtype_ok(node, reduce)


def _include_self(node):
    return node.kwargs.get("include_self", node.args[5] if len(node.args) > 5 else True)


@lowers(aten.scatter.src, aten.scatter.value, aten.scatter.reduce, aten.scatter.value_reduce,
        aten.scatter_add.default, aten.scatter_reduce.two, check=_scatter_ok)
def scatter(L, node):
    """torch.scatter and its reductions: src (cut to the index's shape,
    or a number) folded into x at index on dim, x's own coordinates
    elsewhere."""
    x_n, dim, idx_n, src = node.args[:4]
    out = L.out_dtype(node)
    x = L.value(x_n, out)
    shape, ushape = L.shape(x_n), L.shape(idx_n)
    idx = L.value(idx_n)
    if not shape:   # a 0-d x: a 1-element row
        x = L.g.op("reshape", x, shape=[1])
        shape = (1,)
        if not ushape:
            ushape = (1,)
            idx = L.g.op("reshape", idx, shape=[1])
    dim %= len(shape)
    if isinstance(src, torch.fx.Node):
        upd = L.value(src, out)
        if len(L.shape(src)) != len(ushape):
            upd = L.g.op("reshape", upd, shape=[1] * len(ushape))
        if tuple(upd.shape) != tuple(ushape):
            upd = L.slice(upd, [0] * len(ushape), ushape)
    else:
        upd = L.full(src, out, ushape)
    pos = along_positions(L, shape, dim, idx)
    reduce = _reduce_arg(node)
    if reduce is None:
        r = L.g.op("scatter", x, pos, upd, combine="set")
    else:
        reduce = {"add": "sum", "multiply": "prod"}.get(reduce, reduce)
        r = reduce_into(L, x, pos, upd, reduce, node.target != aten.scatter_reduce.two or _include_self(node))
    return r if tuple(r.shape) == L.shape(node) else L.g.op("reshape", r, shape=list(L.shape(node)))


def _index_reduce_ok(node):
    """a reduce it does not know, bool reductions, complex dtypes"""
    if node.args[4] not in ("prod", "mean", "amax", "amin"):
        return "reduce=%r" % (node.args[4],)
    return _dtype_ok(node, node.args[4])


@lowers(aten.index_reduce.default, check=_index_reduce_ok)
def index_reduce(L, node):
    """Tensor.index_reduce: source's slice k along dim folded into x's
    slice index[k]; a scatter_reduce whose index repeats index[k] over
    the slice."""
    x_n, dim, idx_n, src_n, reduce = node.args[:5]
    out = L.out_dtype(node)
    x, src = L.value(x_n, out), L.value(src_n, out)
    shape, sshape = L.shape(x_n), L.shape(src_n)
    if not shape:
        x, src = L.g.op("reshape", x, shape=[1]), L.g.op("reshape", src, shape=[1])
        shape, sshape = (1,), (1,)
    dim %= len(shape)
    idx = L.g.op("reshape", L.value(idx_n), shape=[sshape[dim]])
    idx = L.g.op("broadcast", idx, shape=list(sshape), axes=[dim])
    r = reduce_into(L, x, along_positions(L, shape, dim, idx), src, reduce, _include_self(node))
    return r if tuple(r.shape) == L.shape(node) else L.g.op("reshape", r, shape=list(L.shape(node)))


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _masked_scatter_ok(node):
    """an empty source, complex dtypes"""
    if fake(node.args[2]).numel() == 0:
        return "an empty source"
    return _dtype_ok(node, None)


@lowers(aten.masked_scatter.default, check=_masked_scatter_ok)
def masked_scatter(L, node):
    """x with its k-th masked element (row-major) replaced by source's
    k-th element: the k is a running count of the mask."""
    x_n, mask_n, src_n = node.args[:3]
    out = L.out_dtype(node)
    shape = list(L.shape(node))
    n, s = numel(shape), fake(src_n).numel()
    mask = L.broadcast_to(L.cast(L.value(mask_n), "bool"), shape)
    flat = L.g.op("reshape", L.cast(mask, "i64"), shape=[n])
    rank = L.g.op("min", L.g.op("cumulative", flat, kind="sum", axis=0, exclusive=1), L.full(s - 1, "i64", (n,)))
    # more masked elements than source ones raises in PyTorch: a gather refuses -1
    total = L.g.op("broadcast", L.g.op("reduce_sum", flat, axes=[0]), shape=[n], axes=[])
    rank = L.g.op("select", L.g.op("lt", L.full(s, "i64", (n,)), total), L.full(-1, "i64", (n,)), rank)
    src = L.g.op("reshape", L.value(src_n, out), shape=[s])
    picked = L.g.op("reshape", L.g.op("gather", src, rank, axis=0), shape=shape)
    return L.g.op("select", mask, picked, L.broadcast_to(L.value(x_n, out), shape))


def _search_args(node):
    """(sorted sequence, values, right, sorter) of searchsorted or bucketize."""
    kw = node.kwargs
    if node.target == aten.bucketize.Tensor:
        a = list(node.args) + [None] * 4
        right = kw.get("right", a[3] if a[3] is not None else False)
        return node.args[1], node.args[0], bool(right), None
    a = list(node.args) + [None] * 6
    right = kw.get("right", a[3] if a[3] is not None else False)
    side = kw.get("side", a[4])
    return node.args[0], node.args[1], bool(right) or side == "right", kw.get("sorter", a[5])


def _search_ok(node):
    """leading dims of the sequence and values that differ, complex dtypes"""
    seq, vals, _, _ = _search_args(node)
    if not isinstance(vals, torch.fx.Node):
        return None if len(fake(seq).shape) == 1 and not fake(seq).dtype.is_complex else "a scalar value"
    bs, vs = fake(seq).shape, fake(vals).shape
    if fake(seq).dtype.is_complex or fake(vals).dtype.is_complex:
        return "a complex dtype"
    if len(bs) > 1 and (len(vs) != len(bs) or tuple(vs[:-1]) != tuple(bs[:-1])):
        return "values whose leading dims are not the sequence's"
    return None


def binary_search(L, seq, vals, n, right, sorter=None):
    """For each value of vals [rows, m], the insertion point in its row
    of seq (rows * n elements, flat), optionally read through sorter:
    PyTorch's binary search itself, unrolled (the row length is known, so
    at most its bit length rounds), every value at once. The same probes
    give the same answer even on a row that is not sorted or holds NaN,
    where counting the smaller elements would not."""
    rows, m = vals.shape
    row0 = L.g.op("iota", dtype="i64", shape=[rows, m], axis=0) * float(n)
    start, end = L.full(0, "i64", (rows, m)), L.full(n, "i64", (rows, m))
    for _ in range(n.bit_length()):
        active = L.g.op("lt", start, end)
        mid = start + L.g.op("div", end - start, L.full(2, "i64", (rows, m)))
        at = L.g.op("min", mid, L.full(n - 1, "i64", (rows, m)))
        if sorter is not None:
            at = checked(L, L.g.op("gather", sorter, row0 + at, axis=0), n)
            at = L.g.op("select", L.g.op("lt", at, L.full(0, "i64", ())), at, row0 + at)
        else:
            at = row0 + at
        probe = L.g.op("gather", seq, at, axis=0)
        # PyTorch steps right while !(probe >= v) (left) or !(probe > v) (right)
        stop = L.g.op("lt", vals, probe) if right else L.g.op("le", vals, probe)
        go = L.g.op("and", active, L.g.op("not", stop))
        start = L.g.op("select", go, mid + L.full(1, "i64", ()), start)
        end = L.g.op("select", L.g.op("and", active, stop), mid, end)
    return start


@lowers(aten.searchsorted.Tensor, aten.searchsorted.Scalar, aten.bucketize.Tensor, check=_search_ok)
def searchsorted(L, node):
    """torch.searchsorted (rows of a sequence, and values per row, or one
    number) and torch.bucketize (one sequence, values of any shape)."""
    seq_n, vals_n, right, sorter_n = _search_args(node)
    if isinstance(vals_n, torch.fx.Node):
        dt = ts_dtype(torch.promote_types(fake(seq_n).dtype, fake(vals_n).dtype))
        vshape = L.shape(vals_n)
    else:
        dt = ts_dtype(torch.result_type(fake(seq_n), vals_n))
        vshape = ()
    bshape = L.shape(seq_n)
    n = bshape[-1] if bshape else 1
    rows = numel(bshape) // n if n else numel(bshape[:-1])
    m = numel(vshape) // rows if rows else 0
    seq = L.g.op("reshape", L.value(seq_n, dt), shape=[rows * n])
    vals = L.g.op("reshape", L.value(vals_n, dt), shape=[rows, m])
    sorter = L.g.op("reshape", L.cast(L.value(sorter_n), "i64"), shape=[rows * n]) if sorter_n is not None else None
    start = binary_search(L, seq, vals, n, right, sorter)
    return L.g.op("reshape", L.cast(start, L.out_dtype(node)), shape=list(L.shape(node)))


def fail_unless(L, ok, v):
    """v, made to fail at run time unless ok (a bool scalar) holds, where
    PyTorch raises: a gather at -1 that adds nothing otherwise."""
    at = L.g.op("reshape", L.g.op("select", ok, L.full(0, "i64", ()), L.full(-1, "i64", ())), shape=[1])
    zero = L.g.op("reshape", L.g.op("gather", L.full(0, v.dtype, (1,)), at, axis=0), shape=[])
    return v + zero


def finite(L, v):
    return L.g.op("eq", v - v, L.full(0, v.dtype, ()))


def data_range(L, x, widen):
    """The least and greatest element of x (1-D, not empty), pushed
    `widen` apart (in f64, as PyTorch does) when they are equal; PyTorch
    raises when either is not finite."""
    lo, hi = L.g.op("reduce_min", x, axes=[0]), L.g.op("reduce_max", x, axes=[0])
    same = L.g.op("eq", lo, hi)
    lo = L.g.op("select", same, L.cast(L.cast(lo, "f64") - float(widen), x.dtype), lo)
    hi = L.g.op("select", same, L.cast(L.cast(hi, "f64") + float(widen), x.dtype), hi)
    return fail_unless(L, L.g.op("and", finite(L, lo), finite(L, hi)), lo), hi


def count_bins(L, pos, keep, nbins, weight, dtype):
    """A histogram of nbins from each element's bin, kept ones only,
    adding its weight (or 1): a scatter-add, the others into a spare
    bin past the end."""
    n = pos.shape[0]
    pos = L.g.op("select", keep, pos, L.full(nbins, "i64", (n,)))
    w = weight if weight is not None else L.full(1, dtype, (n,))
    hist = L.g.op("scatter", L.full(0, dtype, (nbins + 1,)), pos, w, combine="add")
    return L.slice(hist, [0], [nbins])


def linear_bin(L, x, lo, hi, nbins):
    """PyTorch's first guess at x's bin between the outer edges: the
    truncated (x - lo) * nbins / (hi - lo), in x's dtype."""
    return L.cast((x - lo) * float(nbins) / (hi - lo), "i64")


def inside(L, x, lo, hi):
    """lo <= x <= hi (NaN is outside)."""
    return L.g.op("and", L.g.op("le", lo, x), L.g.op("le", x, hi))


def _histc_args(node):
    a = list(node.args) + [None] * 4
    bins = node.kwargs.get("bins", a[1] if a[1] is not None else 100)
    lo = node.kwargs.get("min", a[2] if a[2] is not None else 0)
    hi = node.kwargs.get("max", a[3] if a[3] is not None else 0)
    return int(bins), float(lo), float(hi)


def _histc_ok(node):
    """a dtype that is not a float, a min above max, bounds that are not finite"""
    if not fake(node.args[0]).dtype.is_floating_point:
        return "dtype %s" % fake(node.args[0]).dtype
    bins, lo, hi = _histc_args(node)
    if bins <= 0 or lo > hi or not (abs(lo) < float("inf") and abs(hi) < float("inf")):
        return "bins %d, min %r, max %r" % (bins, lo, hi)
    return None


@lowers(aten.histc.default, check=_histc_ok)
def histc(L, node):
    """torch.histc: equal bins between min and max (the data's own range
    when they are equal), each element's bin by linear interpolation
    alone, as PyTorch's histc kernel does."""
    x_n = node.args[0]
    bins, lo, hi = _histc_args(node)
    dt = L.out_dtype(node)
    n = fake(x_n).numel()
    x = L.g.op("reshape", L.value(x_n), shape=[n])
    if lo == hi and n:
        lo, hi = data_range(L, x, 1)
    else:
        lo, hi = (lo - 1, hi + 1) if lo == hi else (lo, hi)
        lo, hi = L.full(lo, dt, ()), L.full(hi, dt, ())
    pos = L.g.op("min", linear_bin(L, x, lo, hi, bins), L.full(bins - 1, "i64", (n,)))
    return count_bins(L, pos, inside(L, x, lo, hi), bins, None, dt)


def _histogram_args(node):
    """(bins, range, weight, density) of either histogram overload."""
    a = list(node.args) + [None] * 5
    kw = node.kwargs
    bins = kw.get("bins", a[1] if a[1] is not None else 100)
    if node.target == aten.histogram.bins_tensor:
        return bins, None, kw.get("weight", a[2]), bool(kw.get("density", a[3] or False))
    return int(bins), kw.get("range", a[2]), kw.get("weight", a[3]), bool(kw.get("density", a[4] or False))


def _histogram_ok(node):
    """dtypes other than f32 (equal bins: PyTorch's edges are f32 fused
    multiply-adds), fewer than two edges, a range that is not finite"""
    bins, rng, _, _ = _histogram_args(node)
    dt = fake(node.args[0]).dtype
    if node.target == aten.histogram.bins_tensor:
        if not dt.is_floating_point:
            return "dtype %s" % dt
        return "fewer than two bin edges" if fake(bins).numel() < 2 else None
    if dt != torch.float32:
        return "dtype %s with a bin count" % dt
    if bins <= 0:
        return "bins %d" % bins
    if rng is not None and not (len(rng) == 2 and all(abs(float(r)) < float("inf") for r in rng)
                                and float(rng[0]) <= float(rng[1])):
        return "range %r" % (rng,)
    return None


def linspace_f32(L, lo, hi, n):
    """torch.linspace(lo, hi, n) in f32, bit for bit: PyTorch's CPU kernel
    computes lo + step * i (first half) and hi - step * (n - 1 - i) as
    fused multiply-adds, which f64 arithmetic rounded once reproduces."""
    step = L.cast((hi - lo) / float(max(n - 1, 1)), "f64")
    i = L.g.op("iota", dtype="f64", shape=[n], axis=0)
    up = L.cast(lo, "f64") + step * i
    down = L.cast(hi, "f64") - step * (L.full(n - 1, "f64", (n,)) - i)
    first = L.g.op("lt", L.g.op("iota", dtype="i64", shape=[n], axis=0), L.full(n // 2, "i64", (n,)))
    return L.cast(L.g.op("select", first, up, down), "f32")


@lowers(aten.histogram.bin_ct, aten.histogram.bins_tensor, check=_histogram_ok)
def histogram(L, node):
    """torch.histogram: (hist, bin_edges). Equal bins (a count) place each
    element by linear interpolation corrected against the neighbouring
    edges; given edges, by binary search, as PyTorch's kernels do."""
    x_n = node.args[0]
    bins, rng, w_n, density = _histogram_args(node)
    dt = L.out_dtype(node)
    n = fake(x_n).numel()
    x = L.g.op("reshape", L.value(x_n), shape=[n])
    if node.target == aten.histogram.bins_tensor:
        edges = L.value(bins, dt)
        ne = edges.shape[0]
        pos = binary_search(L, edges, L.g.op("reshape", x, shape=[1, n]), ne, True)
        pos = L.g.op("reshape", pos, shape=[n]) - L.full(1, "i64", ())
    else:
        ne = bins + 1
        if rng is None and n:
            lo, hi = data_range(L, x, 0.5)
        else:
            lo, hi = (0.0, 1.0) if rng is None else (float(rng[0]), float(rng[1]))
            lo, hi = (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)
            lo, hi = L.full(lo, dt, ()), L.full(hi, dt, ())
        edges = linspace_f32(L, lo, hi, ne)
        pos = local_search(L, x, edges, linear_bin(L, x, lo, hi, bins))
    first, last = L.slice(edges, [0], [1]), L.slice(edges, [ne - 1], [ne])
    first, last = L.g.op("reshape", first, shape=[]), L.g.op("reshape", last, shape=[])
    pos = L.g.op("min", pos, L.full(ne - 2, "i64", (n,)))   # the last bin holds its right edge
    weight = L.g.op("reshape", L.value(w_n, dt), shape=[n]) if w_n is not None else None
    hist = count_bins(L, pos, inside(L, x, first, last), ne - 1, weight, dt)
    if density:
        hist = hist / L.g.op("reduce_sum", hist, axes=[0])
        hist = hist / (L.slice(edges, [1], [ne]) - L.slice(edges, [0], [ne - 1]))
    return hist, edges


def local_search(L, x, edges, guess):
    """PyTorch's correction of the interpolated bin: the upper bound of x
    among the edges guess-1 .. guess+1, less one."""
    n, ne = x.shape[0], edges.shape[0]
    lo = L.g.op("max", guess - L.full(1, "i64", ()), L.full(0, "i64", (n,)))
    hi = L.g.op("min", guess + L.full(2, "i64", ()), L.full(ne, "i64", (n,)))
    pos = lo - L.full(1, "i64", ())
    for k in range(3):
        at = lo + L.full(k, "i64", ()) if k else lo
        ok = L.g.op("lt", at, hi)
        e = L.g.op("gather", edges, L.g.op("min", at, L.full(ne - 1, "i64", (n,))), axis=0)
        below = L.g.op("and", ok, L.g.op("le", e, x))
        pos = pos + L.cast(below, "i64")
    return pos


def _segment_args(node):
    kw = node.kwargs
    lengths = kw.get("lengths") is not None
    return kw.get("lengths") if lengths else kw.get("offsets"), lengths


def _segment_ok(node):
    """indices instead of lengths or offsets, an axis that is not the
    last of the lengths, empty data, a dtype that is not a float"""
    seg, _ = _segment_args(node)
    if seg is None or node.kwargs.get("indices") is not None:
        return "no lengths or offsets"
    rank = len(fake(node.args[0]).shape)
    axis = node.kwargs.get("axis", 0)
    if not rank or axis % rank != len(fake(seg).shape) - 1:
        return "an axis that is not the lengths' last"
    if fake(node.args[0]).numel() == 0:
        return "empty data (PyTorch raises)"
    if not fake(node.args[0]).dtype.is_floating_point:
        return "dtype %s" % fake(node.args[0]).dtype
    if node.args[1] not in ("sum", "prod", "mean", "max", "min"):
        return "reduce=%r" % (node.args[1],)
    return None


def segment_bounds(L, node, outer):
    """(starts, ends, lengths) of the segments, each [outer, segments]."""
    seg_n, is_lengths = _segment_args(node)
    seg = L.cast(L.value(seg_n), "i64")
    k = L.shape(seg_n)[-1]
    seg = L.g.op("reshape", seg, shape=[outer, k])
    if is_lengths:
        ends = L.g.op("cumulative", seg, kind="sum", axis=1)
        return ends - seg, ends, seg
    starts, ends = L.slice(seg, [0, 0], [outer, k - 1]), L.slice(seg, [0, 1], [outer, k])
    return starts, ends, ends - starts


@lowers(aten.segment_reduce.default, check=_segment_ok)
def segment_reduce(L, node):
    """torch._segment_reduce: data viewed as [outer, rows, inner] around
    the axis; each row's segment is the number of segment ends at or
    before it (a binary search), and one scatter folds the rows into
    their segments, starting from `initial` (or the identity). A mean
    divides by the length; an empty segment's mean is `initial`, or NaN
    without one."""
    data_n, reduce = node.args[:2]
    initial = node.kwargs.get("initial")
    dt = L.out_dtype(node)
    shape = L.shape(data_n)
    axis = node.kwargs.get("axis", 0) % len(shape)
    outer, n, inner = numel(shape[:axis]), shape[axis], numel(shape[axis + 1:])
    starts, ends, lengths = segment_bounds(L, node, outer)
    s = lengths.shape[1]
    if not node.kwargs.get("unsafe", False):   # PyTorch's checks, which raise
        ok = L.g.op("le", L.full(0, "i64", ()), L.g.op("reduce_min", lengths, axes=[0, 1]))
        if _segment_args(node)[1]:
            total = L.g.op("reduce_sum", lengths, axes=[1])
            ok = L.g.op("and", ok, L.g.op("eq", L.g.op("reduce_min", total, axes=[0]), L.full(n, "i64", ())))
            ok = L.g.op("and", ok, L.g.op("eq", L.g.op("reduce_max", total, axes=[0]), L.full(n, "i64", ())))
        lengths = fail_unless(L, ok, lengths)
    rows = L.g.op("iota", dtype="i64", shape=[outer, n], axis=1)
    seg = binary_search(L, L.g.op("reshape", ends, shape=[outer * s]), rows, s, True)
    if s:   # rows before the first segment or past the last go to a spare one
        at = L.g.op("iota", dtype="i64", shape=[outer, n], axis=0) * float(s) + \
            L.g.op("min", seg, L.full(s - 1, "i64", (outer, n)))
        first = L.g.op("gather", L.g.op("reshape", starts, shape=[outer * s]), at, axis=0)
        kept = L.g.op("and", L.g.op("lt", seg, L.full(s, "i64", (outer, n))), L.g.op("le", first, rows))
        seg = L.g.op("select", kept, seg, L.full(s, "i64", (outer, n)))
    seg = seg + L.g.op("iota", dtype="i64", shape=[outer, n], axis=0) * float(s + 1)
    pos = L.g.op("reshape", seg, shape=[outer, n, 1]) * float(inner) + \
        L.g.op("iota", dtype="i64", shape=[outer, n, inner], axis=2)
    name = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    start = identity(dt, name) if initial is None else initial
    size = outer * n * inner
    acc = L.g.op("scatter", L.full(start, dt, (outer * (s + 1) * inner,)), L.g.op("reshape", pos, shape=[size]),
                 L.g.op("reshape", L.value(data_n, dt), shape=[size]), combine=COMBINE[name])
    acc = L.slice(L.g.op("reshape", acc, shape=[outer, s + 1, inner]), [0, 0, 0], [outer, s, inner])
    if reduce == "mean":
        count = L.broadcast_to(L.g.op("reshape", lengths, shape=[outer, s, 1]), [outer, s, inner])
        empty = L.g.op("eq", count, L.full(0, "i64", ()))
        mean = acc / L.cast(count, dt)
        acc = L.g.op("select", empty, L.full(float("nan") if initial is None else initial, dt, (outer, s, inner)), mean)
    return L.g.op("reshape", acc, shape=list(L.shape(node)))


def _nonzero_static_ok(node):
    return "a complex dtype" if fake(node.args[0]).dtype.is_complex else None


@lowers(aten.nonzero_static.default, check=_nonzero_static_ok)
def nonzero_static(L, node):
    """torch.nonzero_static: the coordinates of the first `size` non-zero
    elements (row-major), rows past them holding fill_value. Each
    non-zero element's rank among them (a running count) is its row; a
    scatter puts its coordinates there, the rest into a spare row."""
    x_n = node.args[0]
    size = node.kwargs.get("size", node.args[1] if len(node.args) > 1 else None)
    fill = node.kwargs.get("fill_value", node.args[2] if len(node.args) > 2 else -1)
    shape = list(L.shape(x_n))
    r, n = len(shape), numel(shape)
    if not r or not size:
        return L.full(fill, "i64", tuple(L.shape(node)))
    x = L.g.op("reshape", L.value(x_n), shape=[n])
    nonzero = L.g.op("ne", x, L.full(0, x.dtype, ())) if x.dtype != "bool" else x
    rank = L.g.op("cumulative", L.cast(nonzero, "i64"), kind="sum", axis=0, exclusive=1)
    kept = L.g.op("and", nonzero, L.g.op("lt", rank, L.full(size, "i64", (n,))))
    row = L.g.op("select", kept, rank, L.full(size, "i64", (n,)))
    pos = L.g.op("reshape", row, shape=[n, 1]) * float(r) + L.g.op("iota", dtype="i64", shape=[n, r], axis=1)
    coords = L.g.op("concat", *[L.g.op("reshape", L.g.op("iota", dtype="i64", shape=shape, axis=a), shape=[n, 1])
                                for a in range(r)], axis=1)
    out = L.g.op("scatter", L.full(fill, "i64", ((size + 1) * r,)), L.g.op("reshape", pos, shape=[n * r]),
                 L.g.op("reshape", coords, shape=[n * r]), combine="set")
    return L.g.op("reshape", L.slice(out, [0], [size * r]), shape=[size, r])


def _bag_args(node):
    """(weight, indices, offsets, mode, per_sample_weights,
    include_last_offset, padding_idx) of either embedding-bag overload."""
    names = ["weight", "indices", "offsets", "scale_grad_by_freq", "mode", "sparse", "per_sample_weights",
             "include_last_offset", "padding_idx"]
    defaults = [None, None, None, False, 0, False, None, False, -1]
    a = dict(zip(names, defaults))
    a.update(zip(names, node.args))
    a.update(node.kwargs)
    return (a["weight"], a["indices"], a["offsets"], a["mode"], a["per_sample_weights"], bool(a["include_last_offset"]),
            -1 if a["padding_idx"] is None else a["padding_idx"])


def _bag_ok(node):
    """a use of the bag bookkeeping results (offset2bag, bag sizes, max
    indices: their contents depend on PyTorch's code path), weights per
    sample outside sum mode, a weight that is not a float"""
    import operator
    for u in node.users:
        if u.target is not operator.getitem or u.args[1] != 0:
            return "a use of the bookkeeping results"
    weight, indices, offsets, mode, psw, _, _ = _bag_args(node)
    if mode not in (0, 1, 2) or (psw is not None and mode != 0):
        return "mode %r with per_sample_weights %s" % (mode, psw is not None)
    if len(fake(indices).shape) != 1 or len(fake(offsets).shape) != 1:
        return "indices or offsets that are not 1-d"
    if not fake(weight).dtype.is_floating_point:
        return "dtype %s" % fake(weight).dtype
    return None


@lowers(aten._embedding_bag_forward_only.default, aten._embedding_bag.default, check=_bag_ok)
def embedding_bag(L, node):
    """F.embedding_bag's output (sum, mean or max of each bag's rows): an
    index's bag is the number of offsets at or before it, less one (a
    binary search); padding_idx rows count in no bag. The other three
    results are never used (the check sees to it)."""
    weight_n, idx_n, off_n, mode, psw_n, last, padding = _bag_args(node)
    dt = L.out_dtype(node)
    v, d = L.shape(weight_n)
    n, k = L.shape(idx_n)[0], L.shape(off_n)[0]
    b = k - 1 if last else k
    if n == 0:
        return L.full(0, dt, (b, d)), None, None, None
    idx = checked(L, L.cast(L.value(idx_n), "i64"), v)
    offsets = L.cast(L.value(off_n), "i64")
    # PyTorch raises for offsets[0] != 0 and, for its promise that the
    # extra offset is the index count, we raise where it would not
    ok = L.g.op("eq", L.g.op("reshape", L.slice(offsets, [0], [1]), shape=[]), L.full(0, "i64", ()))
    if last:
        ok = L.g.op("and", ok, L.g.op("eq", L.g.op("reshape", L.slice(offsets, [k - 1], [k]), shape=[]),
                                      L.full(n, "i64", ())))
    offsets = fail_unless(L, ok, L.slice(offsets, [0], [b]))
    at = L.g.op("reshape", L.g.op("iota", dtype="i64", shape=[1, n], axis=1), shape=[1, n])
    bag = L.g.op("reshape", binary_search(L, offsets, at, b, True), shape=[n]) - L.full(1, "i64", ())
    if padding >= 0:
        bag = L.g.op("select", L.g.op("eq", idx, L.full(padding, "i64", ())), L.full(b, "i64", (n,)), bag)
    rows = L.g.op("gather", L.value(weight_n, dt), idx, axis=0)
    if psw_n is not None:
        rows = rows * L.broadcast_to(L.g.op("reshape", L.value(psw_n, dt), shape=[n, 1]), [n, d])
    pos = L.g.op("reshape", bag, shape=[n, 1]) * float(d) + L.g.op("iota", dtype="i64", shape=[n, d], axis=1)
    pos = L.g.op("reshape", pos, shape=[n * d])
    count = L.g.op("scatter", L.full(0, "i64", (b + 1,)), bag, L.full(1, "i64", (n,)), combine="add")
    count = L.broadcast_to(L.g.op("reshape", L.slice(count, [0], [b]), shape=[b, 1]), [b, d])
    empty = L.g.op("eq", count, L.full(0, "i64", ()))
    zeros = L.full(0, dt, (b, d))
    if mode == 2:
        return bag_max(L, rows, bag, pos, b, empty), None, None, None
    acc = L.g.op("scatter", L.full(0, dt, ((b + 1) * d,)), pos, L.g.op("reshape", rows, shape=[n * d]), combine="add")
    acc = L.g.op("reshape", L.slice(acc, [0], [b * d]), shape=[b, d])
    if mode == 1:
        acc = L.g.op("select", empty, zeros, acc / L.cast(count, dt))
    return acc, None, None, None


def bag_max(L, rows, bag, pos, b, empty):
    """Each bag's largest row, as PyTorch finds it: its first row, then
    any strictly greater one. So a NaN counts only as the first row."""
    n, d = rows.shape
    dt = rows.dtype
    is_nan = L.g.op("ne", rows, rows)
    plain = L.g.op("select", is_nan, L.full(float("-inf"), dt, (n, d)), rows)
    acc = L.g.op("scatter", L.full(float("-inf"), dt, ((b + 1) * d,)), pos, L.g.op("reshape", plain, shape=[n * d]),
                 combine="max")
    acc = L.g.op("reshape", L.slice(acc, [0], [b * d]), shape=[b, d])
    first = L.g.op("scatter", L.full(n, "i64", (b + 1,)), bag, L.g.op("iota", dtype="i64", shape=[n], axis=0),
                   combine="min")
    first = L.g.op("min", L.slice(first, [0], [b]), L.full(n - 1, "i64", (b,)))
    first_nan = L.g.op("gather", is_nan, first, axis=0)
    acc = L.g.op("select", first_nan, L.full(float("nan"), dt, (b, d)), acc)
    return L.g.op("select", empty, L.full(0, dt, (b, d)), acc)


def _renorm_ok(node):
    """a weight that is not a float, a norm other than 1, 2 or inf"""
    if not fake(node.args[0]).dtype.is_floating_point or len(fake(node.args[0]).shape) != 2:
        return "a weight that is not a 2-d float"
    if float(node.args[3]) not in (1.0, 2.0, float("inf")):
        return "norm_type %r" % (node.args[3],)
    return None


@lowers(aten.embedding_renorm.default, check=_renorm_ok)
def embedding_renorm(L, node):
    """The rows of weight that indices name, scaled down to max_norm where
    their norm exceeds it, by max_norm / (norm + 1e-7) (in f64, as
    PyTorch's double arithmetic); the other rows unchanged."""
    w_n, idx_n, max_norm, p = node.args[:4]
    dt = L.out_dtype(node)
    v, d = L.shape(w_n)
    n = fake(idx_n).numel()
    w = L.value(w_n, dt)
    idx = checked(L, L.g.op("reshape", L.cast(L.value(idx_n), "i64"), shape=[n]), v)
    named = L.g.op("scatter", L.full(0, "bool", (v,)), idx, L.full(1, "bool", (n,)), combine="set")
    size = L.g.op("abs", w)
    if float(p) == 2.0:
        norm = L.g.op("sqrt", L.g.op("reduce_sum", w * w, axes=[1]))
    elif float(p) == 1.0:
        norm = L.g.op("reduce_sum", size, axes=[1])
    else:
        norm = L.g.op("reduce_max", size, axes=[1])
    norm = L.cast(norm, "f64")
    scale = L.cast(L.full(float(max_norm), "f64", (v,)) / (norm + L.full(1e-7, "f64", ())), dt)
    shrink = L.g.op("and", named, L.g.op("lt", L.full(float(max_norm), "f64", (v,)), norm))
    scale = L.g.op("select", shrink, scale, L.full(1, dt, (v,)))
    return w * L.broadcast_to(L.g.op("reshape", scale, shape=[v, 1]), [v, d])
