"""Complex tensors and the discrete Fourier transforms.

tessera has no complex dtype: a complex64 (complex128) value is an f32
(f64) value with one more trailing dim of 2, (real, imaginary), exactly as
torch.view_as_real lays it out, so a region takes and returns complex
tensors without copies (region.py views them). The lowerings here take the
nodes that have a complex tensor among their inputs or results: views,
copies, concatenation and padding (the pair dim rides along at the end),
conjugation, complex/polar construction, and the transforms the torch.fft
functions decompose into (_fft_r2c, _fft_c2c, _fft_c2r).

A transform is a dense DFT along each transformed dim: one dot of the
values (pairs flattened into the contracted axis) with a constant matrix
of twiddles, computed in f64 (D110): a direct DFT's rounding grows with n
where an FFT's grows with log n, and f64 keeps it below what eager's f32
FFT itself carries. Its matrix grows with n^2, so dims above MAX_DFT fall
back to PyTorch."""
import math

import numpy as np
import torch

from .layout import _static_ints, _to_copy_ok, clamp_range
from .table import COMPLEX_DTYPE, TS_DTYPE, fake, lowers_complex

aten = torch.ops.aten
MAX_DFT = 512


# ---- pairs --------------------------------------------------------------------------------------

def base_dtype(t):
    """tessera's dtype for a tensor's values (a complex tensor's parts)."""
    return COMPLEX_DTYPE.get(t.dtype) or TS_DTYPE[t.dtype]


def rank(a):
    return len(fake(a).shape)


def pairs(L, a, base):
    """An argument as (real, imaginary) pairs of dtype base: a real tensor
    or number gets a zero imaginary part."""
    if not isinstance(a, torch.fx.Node):
        z = complex(a)
        return L.g.const(np.array([z.real, z.imag], np.float64 if base == "f64" else np.float32))
    v = L.cast(L.env[a], base)
    if fake(a).dtype.is_complex:
        return v
    shape = list(v.shape)
    v = L.g.op("reshape", v, shape=shape + [1])
    return L.g.op("pad", v, L.g.scalar(0.0, base), lo=[0] * (len(shape) + 1), hi=[0] * len(shape) + [1],
                  interior=[0] * (len(shape) + 1))


def part(L, v, k):
    """The real (k = 0) or imaginary (k = 1) part of pairs v."""
    shape = list(v.shape)
    s = L.slice(v, [0] * (len(shape) - 1) + [k], shape[:-1] + [k + 1])
    return L.g.op("reshape", s, shape=shape[:-1])


def stack(L, re, im):
    """Pairs from equal-shaped real and imaginary parts."""
    shape = list(re.shape)
    return L.g.op("concat", *[L.g.op("reshape", p, shape=shape + [1]) for p in (re, im)], axis=len(shape))


def out_pairs(L, node):
    """The node's complex result: its dtype's parts and its pairs' shape."""
    return base_dtype(fake(node)), list(L.shape(node)) + [2]


def node_pairs(L, node, i=0):
    """Argument i of a node whose result is complex, in the result's dtype."""
    return pairs(L, node.args[i], out_pairs(L, node)[0])


# ---- views and copies ---------------------------------------------------------------------------

@lowers_complex(aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.squeeze.dims,
                aten.squeeze.dim, aten.squeeze.default, aten.unsqueeze.default, aten.view_copy.default,
                aten.expand.default)
def view(L, node):
    x = node_pairs(L, node)
    shape = out_pairs(L, node)[1]
    if node.target is aten.expand.default:
        return L.broadcast_to(x, shape)
    return x if list(x.shape) == shape else L.g.op("reshape", x, shape=shape)


@lowers_complex(aten.alias.default, aten.clone.default, aten.lift_fresh_copy.default, aten.detach.default,
                aten.resolve_conj.default, aten.resolve_neg.default, aten.view_as_real.default)
def identity(L, node):
    return L.env[node.args[0]]


@lowers_complex(aten.view_as_complex.default)
def view_as_complex(L, node):
    return L.value(node.args[0])


@lowers_complex(aten._to_copy.default, check=_to_copy_ok)
def to_copy(L, node):
    """Real to complex, complex to complex of another width, and complex
    to real (the real part, as PyTorch's cast)."""
    if fake(node).dtype.is_complex:
        return node_pairs(L, node)
    return L.cast(part(L, L.env[node.args[0]], 0), TS_DTYPE[fake(node).dtype])


@lowers_complex(aten._conj.default, aten._conj_physical.default, aten.conj_physical.default)
def conj(L, node):
    x = node_pairs(L, node)
    sign = L.g.const(np.array([1, -1], np.float64 if x.dtype == "f64" else np.float32))
    return L.g.op("mul", x, L.broadcast_to(sign, list(x.shape)))


@lowers_complex(aten.permute.default)
def permute(L, node):
    x = node_pairs(L, node)
    r = rank(node.args[0])
    perm = [d % r for d in node.args[1]] + [r] if r else [0]
    return x if perm == list(range(r + 1)) else L.g.op("transpose", x, perm=perm)


@lowers_complex(aten.t.default, aten.transpose.int)
def transpose(L, node):
    x = node_pairs(L, node)
    r = rank(node.args[0])
    if r < 2:
        return x
    a, b = (node.args[1] % r, node.args[2] % r) if len(node.args) > 2 else (0, 1)
    perm = list(range(r + 1))
    perm[a], perm[b] = perm[b], perm[a]
    return L.g.op("transpose", x, perm=perm)


@lowers_complex(aten.slice.Tensor, check=_static_ints)
def slice_(L, node):
    x = node_pairs(L, node)
    r = rank(node.args[0])
    dim = (node.args[1] if len(node.args) > 1 else 0) % r
    shape = list(x.shape)
    s, e, st = clamp_range(node.args[2] if len(node.args) > 2 else None,
                           node.args[3] if len(node.args) > 3 else None,
                           node.args[4] if len(node.args) > 4 else 1, shape[dim])
    starts, limits, strides = [0] * (r + 1), list(shape), [1] * (r + 1)
    starts[dim], limits[dim], strides[dim] = s, e, st
    return L.slice(x, starts, limits, strides)


@lowers_complex(aten.select.int, check=_static_ints)
def select(L, node):
    x = node_pairs(L, node)
    r = rank(node.args[0])
    dim = node.args[1] % r
    shape = list(x.shape)
    i = node.args[2] % shape[dim]
    starts, limits = [0] * (r + 1), list(shape)
    starts[dim], limits[dim] = i, i + 1
    return L.g.op("reshape", L.slice(x, starts, limits), shape=out_pairs(L, node)[1])


@lowers_complex(aten.cat.default)
def cat(L, node):
    base, shape = out_pairs(L, node)
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    parts = [pairs(L, t, base) for t in node.args[0] if not (fake(t).dim() == 1 and fake(t).shape[0] == 0)]
    return parts[0] if len(parts) == 1 else L.g.op("concat", *parts, axis=dim % (len(shape) - 1))


def _zero_pad(node):
    """a padding value other than zero"""
    return None if len(node.args) < 3 or node.args[2] == 0 else "a nonzero padding value for a complex tensor"


@lowers_complex(aten.constant_pad_nd.default, check=_zero_pad)
def constant_pad(L, node):
    x = node_pairs(L, node)
    pads = list(node.args[1])
    r = rank(node.args[0])
    lo, hi = [0] * (r + 1), [0] * (r + 1)
    for i in range(len(pads) // 2):   # pairs from the last dim backwards
        lo[r - 1 - i], hi[r - 1 - i] = pads[2 * i], pads[2 * i + 1]
    return L.g.op("pad", x, L.g.scalar(0.0, x.dtype), lo=lo, hi=hi, interior=[0] * (r + 1))


@lowers_complex(aten.flip.default)
def flip(L, node):
    r = rank(node.args[0])
    return L.g.op("reverse", node_pairs(L, node), axes=sorted({d % r for d in node.args[1]}))


# ---- construction -------------------------------------------------------------------------------

@lowers_complex(aten.complex.default)
def complex_(L, node):
    base, shape = out_pairs(L, node)
    re, im = (L.broadcast_to(L.value(a, base), shape[:-1]) for a in node.args[:2])
    return stack(L, re, im)


@lowers_complex(aten.polar.default)
def polar(L, node):
    base, shape = out_pairs(L, node)
    mag, ang = (L.broadcast_to(L.value(a, base), shape[:-1]) for a in node.args[:2])
    return stack(L, L.g.op("mul", mag, L.g.op("cos", ang)), L.g.op("mul", mag, L.g.op("sin", ang)))


# ---- discrete Fourier transforms ----------------------------------------------------------------

def _dft_ok(node):
    """a transformed dim longer than 512 (MAX_DFT: a dense DFT's matrix grows with its square), or empty"""
    shape = fake(node.args[0]).shape
    sizes = [shape[d] for d in node.args[1]]
    if node.target is aten._fft_c2r.default:
        sizes[-1] = node.args[3]
    if any(n < 1 or n > MAX_DFT for n in sizes):
        return "a transformed dim of %s (a dense DFT takes 1 to %d)" % (sizes, MAX_DFT)
    return None


def twiddles(n, rows, cols, sign):
    """cos and sign * sin of 2 pi j k / n over j < rows, k < cols, in f64."""
    jk = (np.arange(rows)[:, None] * np.arange(cols)[None, :]) % n   # exact angles before scaling
    theta = 2 * np.pi * jk / n
    return np.cos(theta), sign * np.sin(theta)


def scale(n, normalization):
    """The factor torch's fft_norm_mode (0 none, 1 by root n, 2 by n) puts on a dim of length n."""
    return (1.0, 1.0 / math.sqrt(n), 1.0 / n)[normalization]


def along(L, x, axis, r, has_pairs, matrix, out_len, out_pairs_):
    """x (rank r, plus the pair dim if has_pairs) with axis contracted
    against matrix: the axis (with its pairs) moved last and flattened,
    one f64 dot, the result's axis (of out_len, with pairs if
    out_pairs_) moved back."""
    rest = [d for d in range(r) if d != axis]
    perm = rest + [axis] + ([r] if has_pairs else [])
    if perm != list(range(len(perm))):
        x = L.g.op("transpose", x, perm=perm)
    lead = [x.shape[d] for d in range(r - 1)]
    x = L.g.op("reshape", L.cast(x, "f64"), shape=lead + [matrix.shape[0]])
    y = L.g.op("dot", x, L.g.const(matrix), lhs_contract=[r - 1], rhs_contract=[0])
    y = L.g.op("reshape", y, shape=lead + [out_len] + ([2] if out_pairs_ else []))
    back = [perm.index(d) for d in range(r)] + ([r] if out_pairs_ else [])
    return y if back == list(range(len(back))) else L.g.op("transpose", y, perm=back)


def c2c(L, x, axis, r, normalization, sign):
    """Complex to complex along axis: out = sum_j x_j e^(-sign 2 pi i j k / n)."""
    n = x.shape[axis]
    c, s = twiddles(n, n, n, sign)
    w = np.empty((2 * n, 2 * n))
    # (a + ib)(cos - i sign sin) = (a cos + b sign sin) + i(b cos - a sign sin)
    w[0::2, 0::2], w[1::2, 0::2], w[0::2, 1::2], w[1::2, 1::2] = c, s, -s, c
    return along(L, x, axis, r, True, w * scale(n, normalization), n, True)


@lowers_complex(aten._fft_c2c.default, check=_dft_ok)
def fft_c2c(L, node):
    base = out_pairs(L, node)[0]
    x = node_pairs(L, node)
    r = rank(node)
    _, dims, normalization, forward = node.args[:4]
    for d in dims:
        x = c2c(L, x, d % r, r, normalization, 1 if forward else -1)
    return L.cast(x, base)


@lowers_complex(aten._fft_r2c.default, check=_dft_ok)
def fft_r2c(L, node):
    """Real to complex along the last of dims (its first n // 2 + 1
    outputs when onesided), then complex to complex along the others."""
    base = out_pairs(L, node)[0]
    _, dims, normalization, onesided = node.args[:4]
    r = rank(node)
    last = dims[-1] % r
    n = L.shape(node.args[0])[last]
    m = n // 2 + 1 if onesided else n
    c, s = twiddles(n, n, m, 1)
    w = np.empty((n, 2 * m))
    w[:, 0::2], w[:, 1::2] = c, -s
    x = along(L, L.value(node.args[0]), last, r, False, w * scale(n, normalization), m, True)
    for d in dims[:-1]:
        x = c2c(L, x, d % r, r, normalization, 1)
    return L.cast(x, base)


@lowers_complex(aten._fft_c2r.default, check=_dft_ok)
def fft_c2r(L, node):
    """Complex to complex (inverse) along all dims but the last, then the
    Hermitian half-spectrum along the last to last_dim_size real values:
    bins 0 and n/2 count once, the others twice for their mirror images,
    and only the real part of bins 0 and n/2 matters, as in pocketfft."""
    _, dims, normalization, n = node.args[:4]
    r = rank(node)
    x = pairs(L, node.args[0], "f64")
    for d in dims[:-1]:
        x = c2c(L, x, d % r, r, normalization, -1)
    last = dims[-1] % r
    m_in = x.shape[last]
    m = min(m_in, n // 2 + 1)
    c, s = twiddles(n, m, n, 1)
    weight = np.full((m, 1), 2.0)
    weight[0] = 1.0
    if n % 2 == 0 and m == n // 2 + 1:
        weight[-1] = 1.0
    w = np.zeros((2 * m_in, n))
    # re(a + ib)(cos + i sin) = a cos - b sin
    w[0:2 * m:2], w[1:2 * m:2] = weight * c, -weight * s
    y = along(L, x, last, r, True, w * scale(n, normalization), n, False)
    return L.cast(y, TS_DTYPE[fake(node).dtype])
