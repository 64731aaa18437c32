"""Tensors made from nothing: full, scalar_tensor, arange, empty and its
variants (zeros: their contents are unspecified), full_like."""
import torch

import functools

from .table import lowers as _lowers

# sizes come from the result's shape, so symbolic ones (and SymInt arguments) are fine
lowers = functools.partial(_lowers, dynamic=True, size_args=True)

aten = torch.ops.aten


def _cpu_only(node):
    """tensors on another device"""
    dev = node.kwargs.get("device")
    if dev is not None and torch.device(dev).type != "cpu":
        return "a tensor on device %s" % dev
    return None


@lowers(aten.full.default, check=_cpu_only)
def full(L, node):
    return L.full(node.args[1], L.out_dtype(node), L.shape(node))


@lowers(aten.full_like.default, check=_cpu_only)
def full_like(L, node):
    return L.full(node.args[1], L.out_dtype(node), L.shape(node))


@lowers(aten.scalar_tensor.default, check=_cpu_only)
def scalar_tensor(L, node):
    return L.full(node.args[0], L.out_dtype(node), ())


# tessera hands every result back dense and row-major: an empty tensor's
# requested strides (permuted, even overlapping) are not kept, only its
# shape and dtype, as for every other lowering whose result PyTorch lays out
# otherwise
@lowers(aten.empty.memory_format, aten.empty_strided.default, aten.zeros.default, aten.empty_permuted.default,
        aten.new_empty_strided.default, aten.new_empty.default, check=_cpu_only)
def empty(L, node):
    return L.full(0, L.out_dtype(node), L.shape(node))


@lowers(aten.arange.start_step, aten.arange.default, aten.arange.start, check=_cpu_only)
def arange(L, node):
    a = list(node.args)
    if len(a) == 1:
        start, step = 0, 1
    else:
        start, step = a[0], (a[2] if len(a) > 2 else 1)
    out = L.out_dtype(node)
    n = L.shape(node)[0]
    i = L.g.op("iota", dtype=out, shape=[n], axis=0)
    if step != 1:
        i = i * L.g.scalar(float(step), out)
    if start != 0:
        i = i + L.g.scalar(float(start), out)
    return i
