"""Reductions: sum, mean, prod, amax/amin, max/min (with indices),
argmax/argmin, var, var_mean, any; scans: cumsum, cumprod, cummax/cummin,
logcumsumexp; order statistics from a stable sort: median, nanmedian,
kthvalue, mode. An empty or missing dim list reduces every axis, as
PyTorch does; keepdim is a reshape to the result's shape."""
import torch

from .table import dim_text, fake, lowers

aten = torch.ops.aten


def axes_of(x_node, dims):
    rank = len(fake(x_node).shape)
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    # a 0-d tensor's dim 0 (or -1) is the tensor itself: nothing to reduce
    return sorted({d % rank for d in dims}) if rank else []


def finish(L, node, v):
    """v reshaped to the node's (keepdim) shape where they differ."""
    want = L.shape(node)
    return v if tuple(v.shape) == want else L.g.op("reshape", v, shape=list(want))


def numeric(L, v):
    """v, bool as u8: reductions, arg-extremes and scans take numbers only."""
    return L.cast(v, "u8") if v.dtype == "bool" else v


def _reduce(prim):
    def lower(L, node):
        x = node.args[0]
        dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
        v = numeric(L, L.value(x, L.out_dtype(node)))
        axes = axes_of(x, dims)
        r = L.g.op(prim, v, axes=axes) if axes else v
        return finish(L, node, L.cast(r, L.out_dtype(node)))
    return lower


lowers(aten.sum.dim_IntList, aten.sum.default, dynamic=True)(_reduce("reduce_sum"))
lowers(aten.prod.dim_int, aten.prod.default, dynamic=True)(_reduce("reduce_prod"))
lowers(aten.amax.default, dynamic=True)(_reduce("reduce_max"))
lowers(aten.amin.default, dynamic=True)(_reduce("reduce_min"))
lowers(aten.max.default, dynamic=True)(_reduce("reduce_max"))
lowers(aten.min.default, dynamic=True)(_reduce("reduce_min"))


def scale_by_count(L, s, n):
    """s / n, n a Python number or a Value (a count known at run time)."""
    if isinstance(n, int):
        return s * (1.0 / n if n else float("nan"))
    return s / L.cast(n, s.dtype)


@lowers(aten.mean.dim, aten.mean.default, dynamic=True)
def mean(L, node):
    x = node.args[0]
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    axes = axes_of(x, dims)
    out = L.out_dtype(node)
    s = L.g.op("reduce_sum", L.value(x, out), axes=axes) if axes else L.value(x, out)
    return finish(L, node, scale_by_count(L, s, L.count(L.shape(x), axes, out)))


def _arg(prim):
    def lower(L, node):
        x = node.args[0]
        dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
        v = numeric(L, L.value(x))
        if not L.shape(x):
            return L.full(0, "i64", L.shape(node))   # a 0-d tensor is its own extreme, at index 0
        if dim is None:
            v = L.g.op("reshape", v, shape=[dim_text(fake(x).numel())])
            dim = 0
        r = L.g.op(prim, v, axis=dim % max(len(v.shape), 1))
        return finish(L, node, r)
    return lower


lowers(aten.argmax.default, dynamic=True)(_arg("argmax"))
lowers(aten.argmin.default, dynamic=True)(_arg("argmin"))


def _max_dim(red, arg):
    def lower(L, node):
        x, dim = node.args[0], node.args[1]
        keep = node.args[2] if len(node.args) > 2 else False
        rank = len(fake(x).shape)
        d = dim % max(rank, 1)
        v = numeric(L, L.value(x))
        vals = L.cast(L.g.op(red, v, axes=[d]), L.out_dtype(node)) if rank else L.value(x)
        idx = L.g.op(arg, v, axis=d) if rank else L.full(0, "i64", ())
        if keep:
            shape = list(L.shape(x))
            if rank:
                shape[d] = 1
            vals = L.g.op("reshape", vals, shape=shape)
            idx = L.g.op("reshape", idx, shape=shape)
        return vals, idx
    return lower


lowers(aten.max.dim, dynamic=True)(_max_dim("reduce_max", "argmax"))
lowers(aten.min.dim, dynamic=True)(_max_dim("reduce_min", "argmin"))


def _correction_ok(node):
    """a correction that is not a number"""
    c = node.kwargs.get("correction", 1)
    return None if c is None or isinstance(c, (int, float)) else "correction %r" % (c,)


def variance_and_mean(L, node):
    """var (with the node's correction) and mean over the node's dims,
    each in the node's (keepdim) shape."""
    x = node.args[0]
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    correction = node.kwargs.get("correction", 1)
    correction = 1 if correction is None else correction
    axes = axes_of(x, dims)
    shape = L.shape(x)
    out = L.out_dtype(node)
    n = L.count(shape, axes, out)
    v = L.value(x, out)
    m = scale_by_count(L, L.g.op("reduce_sum", v, axes=axes), n)
    kept = [1 if i in axes else d for i, d in enumerate(shape)]
    mb = L.broadcast_to(L.g.op("reshape", m, shape=kept), shape)
    d = v - mb
    s = L.g.op("reduce_sum", d * d, axes=axes)
    # PyTorch divides by max(0, n - correction): no degrees of freedom give inf (or nan for 0/0)
    if isinstance(n, int):
        denom = max(0, n - correction)
        var = s * (1.0 / denom) if denom > 0 else s / L.full(0, out, ())
    else:
        var = s / L.g.op("max", n - float(correction), L.full(0, out, ()))
    return finish(L, node, var), finish(L, node, m)


@lowers(aten.var.correction, check=_correction_ok, dynamic=True)
def var(L, node):
    return variance_and_mean(L, node)[0]


@lowers(aten.var_mean.correction, check=_correction_ok, dynamic=True)
def var_mean(L, node):
    return variance_and_mean(L, node)


@lowers(aten.any.default, aten.any.dim, aten.any.dims, dynamic=True)
def any_(L, node):
    x = node.args[0]
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    v = L.value(x)
    nz = L.g.op("ne", v, L.full(0, v.dtype, ()))
    axes = axes_of(x, dims)
    r = L.g.op("reduce_max", L.cast(nz, "u8"), axes=axes) if axes else L.cast(nz, "u8")
    return finish(L, node, L.cast(r, "bool"))


def _scan(kind):
    def lower(L, node):
        x, dim = node.args[0], node.args[1]
        v = L.value(x, L.out_dtype(node))
        rank = len(fake(x).shape)
        return L.g.op("cumulative", v, kind=kind, axis=dim % rank) if rank else v
    return lower


lowers(aten.cumsum.default, dynamic=True)(_scan("sum"))
lowers(aten.cumprod.default, dynamic=True)(_scan("prod"))


def _running_extreme(kind):
    """cummax/cummin: the running extreme, and the index where it was last
    reached (a NaN, once seen, stays the extreme; later NaNs move the
    index), as PyTorch's CPU kernel scans it."""
    def lower(L, node):
        x, dim = node.args[0], node.args[1]
        v = L.value(x)
        rank = len(fake(x).shape)
        if rank == 0:
            return v, L.full(0, "i64", ())
        v = numeric(L, v)
        axis = dim % rank
        run = L.g.op("cumulative", v, kind=kind, axis=axis)
        hit = L.g.op("or", L.g.op("eq", v, run), L.g.op("ne", v, v))
        pos = L.g.op("iota", dtype="i64", shape=list(v.shape), axis=axis)
        idx = L.g.op("cumulative", L.g.op("select", hit, pos, L.full(-1, "i64", v.shape)), kind="max", axis=axis)
        return L.cast(run, L.out_dtype(node)), idx
    return lower


lowers(aten.cummax.default)(_running_extreme("max"))
lowers(aten.cummin.default)(_running_extreme("min"))


def log_add_exp(L, a, b):
    """log(exp(a) + exp(b)) without overflow; infinities of one sign pass
    through (inf - inf would be NaN), NaN propagates."""
    hi = L.g.op("max", a, b)
    d = L.g.op("abs", a - b)
    sum_ = hi + L.g.op("log", L.g.op("exp", -d) + 1.0)
    inf = L.full(float("inf"), hi.dtype, hi.shape)
    return L.g.op("select", L.g.op("eq", L.g.op("abs", hi), inf), hi, sum_)


def _float_ok(node):
    """an integer or bool input"""
    return None if fake(node.args[0]).dtype.is_floating_point else "a non-float input"


@lowers(aten.logcumsumexp.default, check=_float_ok)
def logcumsumexp(L, node):
    """A log-depth (Hillis-Steele) scan of log_add_exp: tessera's
    cumulative has no log-sum-exp kind, and exp, cumsum, log would
    underflow and overflow."""
    x, dim = node.args[0], node.args[1]
    out = L.out_dtype(node)
    v = L.value(x)
    shape = L.shape(x)
    if not shape or shape[dim % len(shape)] <= 1:
        return v
    axis = dim % len(shape)
    wide = "f32" if out in ("f16", "bf16") else out
    v = L.cast(v, wide)
    rank, n, step = len(shape), shape[axis], 1
    while step < n:
        lo, hi = [0] * rank, [0] * rank
        lo[axis], hi[axis] = step, -step
        before = L.g.op("pad", v, L.full(float("-inf"), wide, ()), lo=lo, hi=hi, interior=[0] * rank)
        v = log_add_exp(L, v, before)
        step *= 2
    return L.cast(v, out)


# ---- order statistics --------------------------------------------------------------------------

def lanes_sorted(L, x_node, dim):
    """The node's input sorted (stably, NaN last) along dim, moved last and
    flattened to [lanes, n]: (values, original indices, lane shape, n).
    A 0-d input is one lane of one element."""
    v = numeric(L, L.value(x_node))
    shape = list(L.shape(x_node))
    if not shape:
        v, shape, dim = L.g.op("reshape", v, shape=[1]), [1], 0
    axis = dim % len(shape)
    rest = [d for i, d in enumerate(shape) if i != axis]
    perm = [i for i in range(len(shape)) if i != axis] + [axis]
    if perm != list(range(len(shape))):
        v = L.g.op("transpose", v, perm=perm)
    lanes = 1
    for d in rest:
        lanes *= d
    v = L.g.op("reshape", v, shape=[lanes, shape[axis]])
    s, ix = L.g.op("sort", v, axis=1)
    return s, ix, rest, shape[axis]


def pick(L, sorted_, k, lanes, n):
    """sorted_[lane, k[lane]] for every lane, k an i64 [lanes] value."""
    flat = L.g.op("reshape", sorted_, shape=[lanes * n])
    pos = L.g.op("iota", dtype="i64", shape=[lanes], axis=0) * float(n) + k
    return L.g.op("gather", flat, pos, axis=0)


def kth_of_lanes(L, node, s, ix, k):
    """(value, index) at sorted position k of every lane, in the node's shape."""
    lanes = s.shape[0]
    n = s.shape[1]
    value = L.cast(pick(L, s, k, lanes, n), L.out_dtype(node))
    return finish(L, node, value), finish(L, node, pick(L, ix, k, lanes, n))


def count_numbers(L, s):
    """Per lane, how many elements are not NaN (as i64)."""
    return L.g.op("reduce_sum", L.cast(L.g.op("eq", s, s), "i64"), axes=[1])


def _nonempty(node):
    """an empty input (PyTorch raises or returns NaN)"""
    return "an empty input" if fake(node.args[0]).numel() == 0 else None


def median_position(L, s, n, skip_nan):
    """The sorted position PyTorch's CPU median takes: the lower median of
    the numbers (nanmedian), or, where a lane holds a NaN, its first NaN
    (median); a stable sort makes that the index PyTorch returns too."""
    lanes = s.shape[0]
    if not s.dtype.startswith(("f", "bf")):
        return L.full((n - 1) // 2, "i64", [lanes])
    numbers = count_numbers(L, s)
    if skip_nan:
        return L.g.op("max", numbers - 1, L.full(0, "i64", [lanes])) / 2.0
    return L.g.op("select", L.g.op("lt", numbers, L.full(n, "i64", [lanes])), numbers,
                  L.full((n - 1) // 2, "i64", [lanes]))


def _median(skip_nan):
    def lower(L, node):
        whole = node.target in (aten.median.default, aten.nanmedian.default)
        x = node.args[0]
        if whole:
            flat = L.g.op("reshape", numeric(L, L.value(x)), shape=[fake(x).numel(), 1])
            s, ix = L.g.op("sort", flat, axis=0)
            s, ix = L.g.op("transpose", s, perm=[1, 0]), L.g.op("transpose", ix, perm=[1, 0])
            n = fake(x).numel()
        else:
            s, ix, _, n = lanes_sorted(L, x, node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", -1))
        value, index = kth_of_lanes(L, node, s, ix, median_position(L, s, n, skip_nan))
        return value if whole else (value, index)
    return lower


lowers(aten.median.default, aten.median.dim, check=_nonempty)(_median(skip_nan=False))
lowers(aten.nanmedian.default, aten.nanmedian.dim, check=_nonempty)(_median(skip_nan=True))


@lowers(aten.kthvalue.default, check=_nonempty)
def kthvalue(L, node):
    """The k-th smallest (NaN largest). Among equal values PyTorch's
    quickselect returns any one's index; this returns the k-th in stable
    order."""
    x, k = node.args[0], node.args[1]
    dim = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", -1)
    s, ix, _, n = lanes_sorted(L, x, dim)
    return kth_of_lanes(L, node, s, ix, L.full(k - 1, "i64", [s.shape[0]]))


def _mode_ok(node):
    """lanes over 16 elements (PyTorch's sort is no longer stable there, so
    the index it returns among equal values is its own)"""
    x = fake(node.args[0])
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", -1)
    n = x.shape[dim] if x.dim() else 1
    return _nonempty(node) or ("a lane of %d elements (over 16)" % n if n > 16 else None)


@lowers(aten.mode.default, check=_mode_ok)
def mode(L, node):
    """The most frequent value (the smallest, on a tie in counts) and the
    last index holding it: PyTorch's CPU kernel scans the runs of a sorted
    copy and keeps the last element of the first longest run, which is
    the last occurrence where its sort is stable (up to 16 elements)."""
    x = node.args[0]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", -1)
    s, ix, _, n = lanes_sorted(L, x, dim)
    lanes = s.shape[0]
    pos = L.g.op("iota", dtype="i64", shape=[lanes, n], axis=1)
    differs = L.g.op("ne", L.slice(s, [0, 1], [lanes, n]), L.slice(s, [0, 0], [lanes, n - 1]))
    yes = L.full(1, "bool", [lanes, 1])
    starts = L.g.op("concat", yes, differs, axis=1)   # a run begins here
    ends = L.g.op("concat", differs, yes, axis=1)     # a run ends here
    run_start = L.g.op("cumulative", L.g.op("select", starts, pos, L.full(0, "i64", [lanes, n])), kind="max", axis=1)
    length = L.g.op("select", ends, pos - run_start + 1.0, L.full(0, "i64", [lanes, n]))
    return kth_of_lanes(L, node, s, ix, L.g.op("argmax", length, axis=1))
