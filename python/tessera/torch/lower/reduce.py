"""Reductions: sum, mean, prod, amax/amin, max/min (with indices),
argmax/argmin, var, any, cumsum. An empty or missing dim list reduces
every axis, as PyTorch does; keepdim is a reshape to the result's shape."""
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


def _reduce(prim):
    def lower(L, node):
        x = node.args[0]
        dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
        v = L.value(x, L.out_dtype(node))
        axes = axes_of(x, dims)
        r = L.g.op(prim, v, axes=axes) if axes else v
        return finish(L, node, r)
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
        v = L.value(x)
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
        v = L.value(x)
        vals = L.g.op(red, v, axes=[d]) if rank else v
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


@lowers(aten.var.correction, check=_correction_ok, dynamic=True)
def var(L, node):
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
    if isinstance(n, int):
        denom = n - correction
        return finish(L, node, s * (1.0 / denom if denom > 0 else float("nan")))
    return finish(L, node, s / (n - float(correction)))


@lowers(aten.any.default, aten.any.dim, aten.any.dims, dynamic=True)
def any_(L, node):
    x = node.args[0]
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    v = L.value(x)
    nz = L.g.op("ne", v, L.full(0, v.dtype, ()))
    axes = axes_of(x, dims)
    r = L.g.op("reduce_max", L.cast(nz, "u8"), axes=axes) if axes else L.cast(nz, "u8")
    return finish(L, node, L.cast(r, "bool"))


@lowers(aten.cumsum.default, dynamic=True)
def cumsum(L, node):
    x, dim = node.args[0], node.args[1]
    v = L.value(x, L.out_dtype(node))
    rank = len(fake(x).shape)
    if rank == 0:
        return v
    return L.g.op("cumulative", v, kind="sum", axis=dim % rank)
