"""Random numbers: rand/randn/randint/randperm and their _like forms, the in-place
samplers (uniform, normal, exponential, cauchy, log_normal, geometric,
bernoulli), dropout and rrelu, all from the rng_uniform primitive.

Each draw is rng_uniform fed the region's seed input (L.seed(), a fresh
i64 that Region draws from torch's generator on every call, so
torch.manual_seed reproduces a run and two calls differ) plus its own
seed attribute (two draws in one region are independent). The numbers
are tessera's Philox stream, not eager PyTorch's: the same distribution,
other values, as with Inductor. A caller's own torch.Generator is not
advanced by tessera, so such a node falls back."""
import functools
import math

import torch

from .creation import _cpu_only
from .table import lowers as _lowers

# sizes come from the result's shape, so symbolic ones (and SymInt arguments) are fine
lowers = functools.partial(_lowers, dynamic=True, size_args=True)

aten = torch.ops.aten


def _plain(node):
    """a torch.Generator of the caller's, or another device"""
    if node.kwargs.get("generator") is not None:
        return "an explicit torch.Generator (its state would not advance)"
    return _cpu_only(node)


def _work(dtype):
    """The float type draws are computed in: f64 for f64 and integers
    (53-bit uniforms), f32 for the narrower floats."""
    return "f64" if dtype in ("f64", "i64", "i32", "i16", "i8", "u8", "bool") else "f32"


def uniform01(L, shape, dtype):
    """Uniform in [0, 1) of dtype (a float type) and shape."""
    return L.g.op("rng_uniform", L.seed(), dtype=dtype, shape=list(shape), seed=L.next_seed())


def open01(L, shape, dtype):
    """Uniform in (0, 1]: 1 - u, so its logarithm is finite."""
    return L.full(1, dtype, ()) - uniform01(L, shape, dtype)


def standard_normal(L, shape, dtype):
    """Box-Muller: sqrt(-2 ln u1) cos(2 pi u2), u1 in (0, 1]."""
    r = L.g.op("sqrt", L.g.op("log", open01(L, shape, dtype)) * L.full(-2, dtype, ()))
    return r * L.g.op("cos", uniform01(L, shape, dtype) * L.full(2 * math.pi, dtype, ()))


def _finish(L, node, v):
    """v (computed in the working float type) cast to the node's dtype."""
    return L.cast(v, L.out_dtype(node))


def _scaled(L, v, scale, shift):
    """v * scale + shift, skipping identities; scale and shift are numbers
    or Values of v's dtype."""
    if not (isinstance(scale, (int, float)) and scale == 1):
        v = v * (L.full(scale, v.dtype, ()) if isinstance(scale, (int, float)) else scale)
    if not (isinstance(shift, (int, float)) and shift == 0):
        v = v + (L.full(shift, v.dtype, ()) if isinstance(shift, (int, float)) else shift)
    return v


def _arg(node, i, name, default):
    return node.args[i] if len(node.args) > i else node.kwargs.get(name, default)


@lowers(aten.rand.default, aten.rand_like.default, check=_plain)
def rand(L, node):
    w = _work(L.out_dtype(node))
    return _finish(L, node, uniform01(L, L.shape(node), w))


@lowers(aten.randn.default, aten.randn_like.default, check=_plain)
def randn(L, node):
    w = _work(L.out_dtype(node))
    return _finish(L, node, standard_normal(L, L.shape(node), w))


@lowers(aten.uniform.default, check=_plain)
def uniform(L, node):
    lo, hi = float(_arg(node, 1, "from", 0.0)), float(_arg(node, 2, "to", 1.0))
    w = _work(L.out_dtype(node))
    return _finish(L, node, _scaled(L, uniform01(L, L.shape(node), w), hi - lo, lo))


@lowers(aten.normal_functional.default, check=_plain)
def normal_functional(L, node):
    mean, std = float(_arg(node, 1, "mean", 0.0)), float(_arg(node, 2, "std", 1.0))
    w = _work(L.out_dtype(node))
    return _finish(L, node, _scaled(L, standard_normal(L, L.shape(node), w), std, mean))


@lowers(aten.normal.float_float, check=_plain)
def normal_float_float(L, node):
    mean, std = float(node.args[0]), float(node.args[1])
    w = _work(L.out_dtype(node))
    return _finish(L, node, _scaled(L, standard_normal(L, L.shape(node), w), std, mean))


@lowers(aten.normal.Tensor_Tensor, aten.normal.Tensor_float, aten.normal.float_Tensor, check=_plain)
def normal_tensors(L, node):
    """mean + std * z, either of them a tensor broadcast to the result."""
    out, shape = L.out_dtype(node), L.shape(node)
    w = _work(out)
    mean, std = _arg(node, 0, "mean", 0.0), _arg(node, 1, "std", 1.0)
    mean, std = (L.broadcast_to(L.value(a, w), shape) if isinstance(a, torch.fx.Node) else float(a)
                 for a in (mean, std))
    return _finish(L, node, _scaled(L, standard_normal(L, shape, w), std, mean))


@lowers(aten.exponential.default, check=_plain)
def exponential(L, node):
    """-ln(u) / lambda, u in (0, 1]."""
    lam = float(_arg(node, 1, "lambd", 1.0))
    w = _work(L.out_dtype(node))
    return _finish(L, node, L.g.op("log", open01(L, L.shape(node), w)) * L.full(-1.0 / lam, w, ()))


@lowers(aten.cauchy.default, check=_plain)
def cauchy(L, node):
    """median + sigma tan(pi (u - 1/2))."""
    median, sigma = float(_arg(node, 1, "median", 0.0)), float(_arg(node, 2, "sigma", 1.0))
    w = _work(L.out_dtype(node))
    t = L.g.op("tan", _scaled(L, uniform01(L, L.shape(node), w), math.pi, -math.pi / 2))
    return _finish(L, node, _scaled(L, t, sigma, median))


@lowers(aten.log_normal.default, check=_plain)
def log_normal(L, node):
    mean, std = float(_arg(node, 1, "mean", 1.0)), float(_arg(node, 2, "std", 2.0))
    w = _work(L.out_dtype(node))
    return _finish(L, node, L.g.op("exp", _scaled(L, standard_normal(L, L.shape(node), w), std, mean)))


def _geometric_p(node):
    p = float(node.args[1])
    return None if 0 < p < 1 else "p = %r (only 0 < p < 1)" % p


@lowers(aten.geometric.default, check=lambda n: _plain(n) or _geometric_p(n))
def geometric(L, node):
    """Trials to the first success: max(1, ceil(ln u / ln(1 - p))), u in
    (0, 1] (the inverse of the CDF 1 - (1-p)^k)."""
    p = float(node.args[1])
    w = _work(L.out_dtype(node))
    k = L.g.op("ceil", L.g.op("log", open01(L, L.shape(node), w)) * L.full(1.0 / math.log1p(-p), w, ()))
    return _finish(L, node, L.g.op("max", k, L.full(1, w, ())))


def _randint_args(node):
    """(low, high) of randint.low/default and randint_like.default/low_dtype."""
    t = node.target
    if t == aten.randint.low:
        return node.args[0], node.args[1]
    if t == aten.randint.default:
        return 0, node.args[0]
    if t == aten.randint_like.low_dtype:
        return node.args[1], node.args[2]
    return 0, node.args[1]


def _randint_ok(node):
    low, high = _randint_args(node)
    if not all(isinstance(v, int) for v in (low, high)):
        return "bounds known only at run time"
    if not 0 < high - low <= 1 << 53:
        return "the range [%d, %d)" % (low, high)
    return _plain(node)


@lowers(aten.randint.low, aten.randint.default, aten.randint_like.default, aten.randint_like.low_dtype,
        check=_randint_ok)
def randint(L, node):
    """low + floor(u (high - low)), u a 53-bit uniform in [0, 1)."""
    low, high = _randint_args(node)
    k = L.g.op("floor", uniform01(L, L.shape(node), "f64") * L.full(float(high - low), "f64", ()))
    return _finish(L, node, _scaled(L, k, 1, float(low)))


@lowers(aten.bernoulli.default, aten.bernoulli.p, check=_plain)
def bernoulli(L, node):
    """u < p: 1 with probability p (a tensor of them, or a number)."""
    out, shape = L.out_dtype(node), L.shape(node)
    w = _work(out)
    p = _arg(node, 1, "p", None) if node.target == aten.bernoulli.p else node.args[0]
    p = L.value(p, w) if isinstance(p, torch.fx.Node) else L.full(float(p), w, ())
    return L.cast(L.g.op("lt", uniform01(L, shape, w), p), out)


def _dropout_ok(node):
    """an integer input"""
    x = node.args[0].meta.get("val")
    if x is not None and not x.dtype.is_floating_point:
        return "an integer input"
    return None


@lowers(aten.native_dropout.default, check=_dropout_ok)
def native_dropout(L, node):
    """(x * keep / (1 - p), keep), keep = u > p, as torch's decomposition;
    (x, ones) when not training."""
    x, p, train = L.value(node.args[0]), float(node.args[1]), node.args[2]
    shape = L.shape(node)
    if not train or p == 0:
        return x, L.full(1, "bool", shape)
    if p == 1:
        return L.full(0, x.dtype, shape), L.full(0, "bool", shape)
    keep = L.g.op("lt", L.full(p, _work(x.dtype), ()), uniform01(L, shape, _work(x.dtype)))
    scaled = x * L.full(1.0 / (1.0 - p), x.dtype, ())
    return L.g.op("select", keep, scaled, L.full(0, x.dtype, ())), keep


@lowers(aten.randperm.default, check=_plain)
def randperm(L, node):
    """The positions that sort n uniform draws: a uniformly random
    permutation (53-bit keys; equal keys, probability ~n^2/2^54, keep
    their order)."""
    n = L.shape(node)[0]
    _, ix = L.g.op("sort", uniform01(L, [n], "f64"), axis=0, descending=0)
    return L.cast(ix, L.out_dtype(node))


@lowers(aten.rrelu_with_noise_functional.default, check=_plain)
def rrelu_with_noise(L, node):
    """Training: a negative x times a slope drawn uniform in [lower,
    upper], the slopes (1 where x >= 0) returned as the new noise.
    Otherwise leaky relu by the mean slope, the noise unchanged."""
    x, noise = L.value(node.args[0]), L.value(node.args[1])
    lower, upper = float(_arg(node, 2, "lower", 0.125)), float(_arg(node, 3, "upper", 1.0 / 3))
    training = _arg(node, 4, "training", False)
    neg = L.g.op("le", x, L.full(0, x.dtype, ()))
    if not training:
        return L.g.op("select", neg, x * L.full((lower + upper) / 2, x.dtype, ()), x), noise
    w = _work(x.dtype)
    slope = L.cast(_scaled(L, uniform01(L, L.shape(node), w), upper - lower, lower), x.dtype)
    return L.g.op("select", neg, x * slope, x), L.g.op("select", neg, slope, L.full(1, x.dtype, ()))
