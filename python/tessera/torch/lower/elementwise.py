"""Elementwise ATen operators: arithmetic, comparisons, logic, the usual
functions and activations. Operands are cast to the result's dtype (or,
for comparisons, to the operands' promoted dtype) first: PyTorch's type
promotion, made explicit, since tessera's primitives take one dtype."""
import math

import torch

import functools

from .table import TS_DTYPE, fake, ts_dtype
from .table import lowers as _lowers

# every elementwise lowering takes symbolic sizes: it never computes with them
lowers = functools.partial(_lowers, dynamic=True)

aten = torch.ops.aten


def promoted(a, b):
    fa = fake(a) if isinstance(a, torch.fx.Node) else a
    fb = fake(b) if isinstance(b, torch.fx.Node) else b
    return ts_dtype(torch.result_type(fa, fb))


def both(L, node, dtype=None):
    a, b = node.args[0], node.args[1]
    dt = dtype or L.out_dtype(node)
    return L.value(a, dt), L.value(b, dt)


# ---- arithmetic ------------------------------------------------------------------------------

@lowers(torch.ops.prims.fma.default)
def fma(L, node):
    """a * b + c (Adam's foreach update is traced into it): two roundings,
    as tessera has no fused multiply-add primitive."""
    dt = L.out_dtype(node)
    a, b, c = (L.value(x, dt) for x in node.args[:3])
    return a * b + c


def _alpha_ok(node):
    """an alpha that is not a number"""
    alpha = node.kwargs.get("alpha", 1)
    return None if isinstance(alpha, (int, float)) else "alpha is not a number"


def _with_alpha(prim, reverse=False):
    """a PRIM alpha*b (rsub: b PRIM alpha*a)."""
    def lower(L, node):
        a, b = both(L, node)
        if reverse:
            a, b = b, a
        if a.dtype == "bool" and prim == "add":
            return L.g.op("or", a, b)   # bool + bool saturates: logical or (torch refuses bool sub)
        alpha = node.kwargs.get("alpha", 1)
        if alpha != 1:
            b = b * float(alpha)
        return L.g.op(prim, a, b)
    return lower


lowers(aten.add.Tensor, aten.add.Scalar, check=_alpha_ok)(_with_alpha("add"))
lowers(aten.sub.Tensor, aten.sub.Scalar, check=_alpha_ok)(_with_alpha("sub"))
lowers(aten.rsub.Scalar, aten.rsub.Tensor, check=_alpha_ok)(_with_alpha("sub", reverse=True))


@lowers(aten.mul.Tensor, aten.mul.Scalar)
def mul(L, node):
    # bool * bool is logical and (isfinite's decomposition multiplies two masks); mul takes numbers only
    return L.g.op("and" if L.out_dtype(node) == "bool" else "mul", *both(L, node))


def _div_mode_ok(node):
    """rounding modes other than trunc and floor"""
    mode = node.kwargs.get("rounding_mode", node.args[2] if len(node.args) > 2 else None)
    return None if mode in (None, "trunc", "floor") else "rounding_mode %r" % mode


@lowers(aten.div.Tensor, aten.div.Scalar, aten.div.Tensor_mode, aten.div.Scalar_mode, check=_div_mode_ok)
def div(L, node):
    mode = node.kwargs.get("rounding_mode", node.args[2] if len(node.args) > 2 else None)
    out = L.out_dtype(node)
    if mode is None:
        return L.g.op("div", *both(L, node))
    floaty = out in ("f16", "bf16", "f32", "f64")
    a, b = both(L, node)
    q = L.g.op("div", a, b)   # floats: exact quotient; integers: truncated
    if mode == "trunc":
        return L.g.op("cast", L.g.op("cast", q, dtype="i64"), dtype=out) if floaty else q
    if floaty:
        return L.g.op("floor", q)
    # integer floor division: truncation, minus one where the signs differ and it was inexact
    r = L.g.op("rem", a, b)
    fix = L.g.op("and", L.g.op("ne", r, L.full(0, out, ())),
                 L.g.op("ne", L.g.op("lt", r, L.full(0, out, ())), L.g.op("lt", b, L.full(0, out, ()))))
    return L.g.op("select", fix, q - 1, q)


@lowers(aten.remainder.Tensor, aten.remainder.Scalar)
def remainder(L, node):
    a, b = both(L, node)
    out = L.out_dtype(node)
    r = L.g.op("rem", a, b)   # C fmod: sign of a; Python's % takes b's
    zero = L.full(0, out, ())
    fix = L.g.op("and", L.g.op("ne", r, zero), L.g.op("ne", L.g.op("lt", r, zero), L.g.op("lt", b, zero)))
    return L.g.op("select", fix, r + b, r)


@lowers(aten.fmod.Tensor, aten.fmod.Scalar)
def fmod(L, node):
    return L.g.op("rem", *both(L, node))


@lowers(aten.pow.Tensor_Tensor, aten.pow.Tensor_Scalar)
def pow_(L, node):
    out = L.out_dtype(node)
    e = node.args[1]
    if isinstance(e, (int, float)) and not isinstance(e, bool):
        x = L.value(node.args[0], out)
        if e == 2:
            return x * x
        if e == 1:
            return x
        if e == 0.5 and out in ("f16", "bf16", "f32", "f64"):
            return L.g.op("sqrt", x)
    return L.g.op("pow", *both(L, node))


@lowers(aten.pow.Scalar)
def pow_scalar(L, node):
    out = L.out_dtype(node)
    return L.g.op("pow", L.value(node.args[0], out), L.value(node.args[1], out))


@lowers(aten.maximum.default)
def maximum(L, node):
    return L.g.op("max", *both(L, node))


@lowers(aten.minimum.default)
def minimum(L, node):
    return L.g.op("min", *both(L, node))


@lowers(aten.atan2.default)
def atan2(L, node):
    return L.g.op("atan2", *both(L, node))


# ---- comparisons and logic ------------------------------------------------------------------

def _compare(prim, swap=False):
    def lower(L, node):
        a, b = node.args[0], node.args[1]
        dt = promoted(a, b)
        x, y = L.value(a, dt), L.value(b, dt)
        return L.g.op(prim, y, x) if swap else L.g.op(prim, x, y)
    return lower


for _name, _prim, _swap in [("eq", "eq", False), ("ne", "ne", False), ("lt", "lt", False), ("le", "le", False),
                            ("gt", "lt", True), ("ge", "le", True)]:
    _pk = getattr(aten, _name)
    lowers(_pk.Tensor, _pk.Scalar)(_compare(_prim, _swap))


def _logical(prim):
    def lower(L, node):
        x = L.g.op("ne", L.value(node.args[0]), L.full(0, L.env[node.args[0]].dtype, ()))
        yv = L.value(node.args[1])
        y = L.g.op("ne", yv, L.full(0, yv.dtype, ()))
        return L.cast(L.g.op(prim, x, y), L.out_dtype(node))
    return lower


for _name, _prim in [("logical_and", "and"), ("logical_or", "or"), ("logical_xor", "xor")]:
    lowers(getattr(aten, _name).default)(_logical(_prim))


@lowers(aten.logical_not.default)
def logical_not(L, node):
    x = L.value(node.args[0])
    return L.cast(L.g.op("eq", x, L.full(0, x.dtype, ())), L.out_dtype(node))


def dtype_of(node):
    return ts_dtype(fake(node).dtype)


def _int_or_bool(node):
    """floating-point tensors"""
    return None if dtype_of(node) in ("bool", "i8", "u8", "i16", "i32", "i64") else "not an integer or bool tensor"


for _name, _prim in [("bitwise_and", "and"), ("bitwise_or", "or"), ("bitwise_xor", "xor")]:
    _pk = getattr(aten, _name)
    lowers(_pk.Tensor, _pk.Scalar, check=_int_or_bool)(lambda L, node, _p=_prim: L.g.op(_p, *both(L, node)))


@lowers(aten.bitwise_not.default, check=_int_or_bool)
def bitwise_not(L, node):
    return L.g.op("not", L.value(node.args[0]))


@lowers(aten.where.self)
def where(L, node):
    out = L.out_dtype(node)
    c = L.value(node.args[0])
    if c.dtype != "bool":
        c = L.g.op("ne", c, L.full(0, c.dtype, ()))
    return L.g.op("select", c, L.value(node.args[1], out), L.value(node.args[2], out))


@lowers(aten.isnan.default)
def isnan(L, node):
    x = L.value(node.args[0])
    return L.g.op("ne", x, x)


@lowers(aten.isinf.default)
def isinf(L, node):
    x = L.value(node.args[0])
    if x.dtype not in ("f16", "bf16", "f32", "f64"):
        return L.full(0, "bool", L.shape(node.args[0]))
    return L.g.op("eq", L.g.op("abs", x), L.full(math.inf, x.dtype, ()))


# ---- functions ------------------------------------------------------------------------------

def _unary(prim):
    return lambda L, node: L.g.op(prim, L.value(node.args[0], L.out_dtype(node)))


for _name, _prim in [("abs", "abs"), ("neg", "neg"), ("exp", "exp"), ("log", "log"), ("sqrt", "sqrt"),
                     ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("tanh", "tanh"), ("erf", "erf"),
                     ("floor", "floor"), ("ceil", "ceil"), ("sign", "sign")]:
    lowers(getattr(aten, _name).default)(_unary(_prim))


def _float_out(node):
    """integer tensors"""
    return None if dtype_of(node) in ("f16", "bf16", "f32", "f64") else "integer result"


@lowers(aten.round.default, check=_float_out)
def round_(L, node):
    return L.g.op("round", L.value(node.args[0], L.out_dtype(node)))


@lowers(aten.trunc.default, check=_float_out)
def trunc(L, node):
    x = L.value(node.args[0], L.out_dtype(node))
    return L.g.op("select", L.g.op("lt", x, L.full(0, x.dtype, ())), L.g.op("ceil", x), L.g.op("floor", x))


@lowers(aten.rsqrt.default)
def rsqrt(L, node):
    x = L.value(node.args[0], L.out_dtype(node))
    return 1.0 / L.g.op("sqrt", x)


@lowers(aten.reciprocal.default)
def reciprocal(L, node):
    return 1.0 / L.value(node.args[0], L.out_dtype(node))


@lowers(aten.sigmoid.default)
def sigmoid(L, node):
    x = L.value(node.args[0], L.out_dtype(node))
    return 1.0 / (1.0 + L.g.op("exp", -x))


@lowers(aten.expm1.default)
def expm1(L, node):
    return L.g.op("exp", L.value(node.args[0], L.out_dtype(node))) - 1.0


@lowers(aten.log1p.default)
def log1p(L, node):
    return L.g.op("log", L.value(node.args[0], L.out_dtype(node)) + 1.0)


@lowers(aten.log2.default)
def log2(L, node):
    return L.g.op("log", L.value(node.args[0], L.out_dtype(node))) * (1.0 / math.log(2.0))


@lowers(aten.log10.default)
def log10(L, node):
    return L.g.op("log", L.value(node.args[0], L.out_dtype(node))) * (1.0 / math.log(10.0))


@lowers(aten.sinh.default)
def sinh(L, node):
    x = L.value(node.args[0], L.out_dtype(node))
    return (L.g.op("exp", x) - L.g.op("exp", -x)) * 0.5


@lowers(aten.cosh.default)
def cosh(L, node):
    x = L.value(node.args[0], L.out_dtype(node))
    return (L.g.op("exp", x) + L.g.op("exp", -x)) * 0.5


@lowers(aten.atan.default)
def atan(L, node):
    x = L.value(node.args[0], L.out_dtype(node))
    return L.g.op("atan2", x, L.full(1, x.dtype, ()))


@lowers(aten.relu.default)
def relu(L, node):
    x = L.value(node.args[0])
    return L.g.op("max", x, L.full(0, x.dtype, ()))


def _gelu_ok(node):
    """approximations other than none and tanh"""
    approx = node.kwargs.get("approximate", "none")
    return None if approx in ("none", "tanh") else "approximate=%r" % approx


@lowers(aten.gelu.default, check=_gelu_ok)
def gelu(L, node):
    x = L.value(node.args[0], L.out_dtype(node))
    if node.kwargs.get("approximate", "none") == "tanh":
        inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
        return x * 0.5 * (L.g.op("tanh", inner) + 1.0)
    return x * 0.5 * (L.g.op("erf", x * (1.0 / math.sqrt(2.0))) + 1.0)


@lowers(aten.leaky_relu.default)
def leaky_relu(L, node):
    x = L.value(node.args[0])
    slope = node.args[1] if len(node.args) > 1 else 0.01
    return L.g.op("select", L.g.op("lt", L.full(0, x.dtype, ()), x), x, x * float(slope))


@lowers(aten.hardtanh.default)
def hardtanh(L, node):
    x = L.value(node.args[0])
    lo = node.args[1] if len(node.args) > 1 else -1.0
    hi = node.args[2] if len(node.args) > 2 else 1.0
    return L.g.op("min", L.g.op("max", x, L.full(lo, x.dtype, ())), L.full(hi, x.dtype, ()))


@lowers(aten.elu.default)
def elu(L, node):
    x = L.value(node.args[0])
    alpha, scale, in_scale = (list(node.args[1:]) + [1.0, 1.0, 1.0])[:3]
    neg = (L.g.op("exp", x * float(in_scale)) - 1.0) * float(alpha)
    return L.g.op("select", L.g.op("lt", L.full(0, x.dtype, ()), x), x, neg) * float(scale)


def _clamp_ok(node):
    """bounds that are neither numbers nor tensors"""
    for a in list(node.args[1:3]) + [node.kwargs.get("min"), node.kwargs.get("max")]:
        if a is not None and not isinstance(a, (int, float, torch.fx.Node)):
            return "bound %r" % (a,)
    return None


@lowers(aten.clamp.default, aten.clamp.Tensor, check=_clamp_ok)
def clamp(L, node):
    out = L.out_dtype(node)
    x = L.value(node.args[0], out)
    lo = node.args[1] if len(node.args) > 1 else node.kwargs.get("min")
    hi = node.args[2] if len(node.args) > 2 else node.kwargs.get("max")
    if lo is not None:
        x = L.g.op("max", x, L.value(lo, out))
    if hi is not None:
        x = L.g.op("min", x, L.value(hi, out))
    return x


# ---- inverse trigonometric and hyperbolic functions ------------------------------------------

def _float_unary(fn):
    """A lowering applying fn(L, x) to the argument cast to the result's dtype."""
    return lambda L, node: fn(L, L.value(node.args[0], L.out_dtype(node)))


def _sqrt_one_minus_sq(L, x):
    """sqrt(1 - x*x), factored so it stays accurate near |x| = 1."""
    return L.g.op("sqrt", (1.0 - x) * (1.0 + x))


lowers(aten.asin.default)(_float_unary(lambda L, x: L.g.op("atan2", x, _sqrt_one_minus_sq(L, x))))
lowers(aten.acos.default)(_float_unary(lambda L, x: L.g.op("atan2", _sqrt_one_minus_sq(L, x), x)))


def _log_of_sum_with_root(L, ax, root):
    """log(ax + root) where root ~ ax for large ax: log(2 ax) once ax*ax would overflow."""
    big = L.g.op("lt", L.full(2.0 ** 28, ax.dtype, ()), ax)
    safe = L.g.op("select", big, L.full(1, ax.dtype, ()), ax)
    return L.g.op("select", big, L.g.op("log", ax) + math.log(2.0), L.g.op("log", safe + root(safe)))


def _small_series(L, x, coeffs, value):
    """value, or for |x| < 1/64 the odd series x * (c0 + c1 x^2 + ...): the log forms lose relative accuracy
    near zero, where log(1 + t) rounds t."""
    x2 = x * x
    series = L.full(coeffs[-1], x.dtype, ())
    for c in reversed(coeffs[:-1]):
        series = series * x2 + c
    small = L.g.op("lt", L.g.op("abs", x), L.full(1 / 64, x.dtype, ()))
    return L.g.op("select", small, x * series, value)


@lowers(aten.asinh.default)
def asinh(L, node):
    x = L.value(node.args[0], L.out_dtype(node))
    ax = L.g.op("abs", x)
    mag = _log_of_sum_with_root(L, ax, lambda a: L.g.op("sqrt", a * a + 1.0))
    # odd: the sign of x (and of -0) carried over
    big = L.g.op("select", is_sign_negative(L, x), -mag, mag)
    return _small_series(L, x, [1.0, -1 / 6, 3 / 40, -5 / 112], big)


@lowers(aten.acosh.default)
def acosh(L, node):
    x = L.value(node.args[0], L.out_dtype(node))
    y = _log_of_sum_with_root(L, x, lambda a: L.g.op("sqrt", (a - 1.0) * (a + 1.0)))
    return L.g.op("select", L.g.op("lt", x, L.full(1, x.dtype, ())), L.full(math.nan, x.dtype, ()), y)


@lowers(aten.atanh.default)
def atanh(L, node):
    x = L.value(node.args[0], L.out_dtype(node))
    return _small_series(L, x, [1.0, 1 / 3, 1 / 5, 1 / 7], L.g.op("log", (1.0 + x) / (1.0 - x)) * 0.5)


# ---- bit-level float functions ------------------------------------------------------------------

_FLOATS = ("f16", "bf16", "f32", "f64")
# the signed integer as wide as each float, for bit-level work; mantissa bits and exponent bias
_BITS = {"f16": ("i16", 10, 15), "bf16": ("i16", 7, 127), "f32": ("i32", 23, 127), "f64": ("i64", 52, 1023)}


def is_sign_negative(L, x):
    """The sign bit of each element (true for -0 and negative NaNs too)."""
    if x.dtype not in _FLOATS:
        return L.g.op("lt", x, L.full(0, x.dtype, ()))
    bits = L.g.op("bitcast", x, dtype=_BITS[x.dtype][0])
    return L.g.op("lt", bits, L.full(0, bits.dtype, ()))


def is_nan(L, x):
    return L.g.op("ne", x, x)


@lowers(aten.signbit.default)
def signbit(L, node):
    return is_sign_negative(L, L.value(node.args[0]))


@lowers(aten.copysign.Tensor, aten.copysign.Scalar)
def copysign(L, node):
    a, b = both(L, node)
    mag = L.g.op("abs", a)
    return L.g.op("select", is_sign_negative(L, b), -mag, mag)


def _nan_ignoring(prim):
    """fmax/fmin: the other operand where one is NaN."""
    def lower(L, node):
        a, b = both(L, node)
        m = L.g.op(prim, a, b)
        if a.dtype not in _FLOATS:
            return m
        return L.g.op("select", is_nan(L, a), b, L.g.op("select", is_nan(L, b), a, m))
    return lower


lowers(aten.fmax.default)(_nan_ignoring("max"))
lowers(aten.fmin.default)(_nan_ignoring("min"))


@lowers(aten.hypot.default)
def hypot(L, node):
    a, b = (L.g.op("abs", v) for v in both(L, node))
    big, small = L.g.op("max", a, b), L.g.op("min", a, b)
    # scaled by the larger magnitude so the squares cannot overflow or underflow
    safe = L.g.op("select", L.g.op("eq", big, L.full(0, big.dtype, ())), L.full(1, big.dtype, ()), big)
    r = small / safe
    out = big * L.g.op("sqrt", r * r + 1.0)
    # C's hypot: an infinite operand wins over a NaN one
    inf = L.full(math.inf, big.dtype, ())
    return L.g.op("select", L.g.op("or", L.g.op("eq", a, inf), L.g.op("eq", b, inf)), inf, out)


@lowers(aten.exp2.default)
def exp2(L, node):
    x = L.value(node.args[0], L.out_dtype(node))
    return L.g.op("pow", L.full(2, x.dtype, ()), x)   # pow is exact for integer exponents


@lowers(aten.ldexp.Tensor)
def ldexp(L, node):
    # PyTorch's own definition: a * 2**b, each rounded in the result dtype
    a, b = both(L, node)
    return a * L.g.op("pow", L.full(2, b.dtype, ()), b)


def _frexp_ok(node):
    """f16/bf16 (subnormal scaling written for f32 and f64)"""
    return None if dtype_of(node.args[0]) in ("f32", "f64") else "frexp of %s" % dtype_of(node.args[0])


@lowers(aten.frexp.Tensor, check=_frexp_ok)
def frexp(L, node):
    x = L.value(node.args[0])
    itype, mbits, bias = _BITS[x.dtype]
    # subnormals scaled up by 2^64 first (exactly), so every finite nonzero x has an exponent field
    tiny = L.g.op("lt", L.g.op("abs", x), L.full(2.0 ** (1 - bias), x.dtype, ()))
    scaled = L.g.op("select", tiny, x * 2.0 ** 64, x)
    bits = L.g.op("bitcast", scaled, dtype=itype)
    field = L.g.op("and", L.g.op("shr", bits, L.full(mbits, itype, ())), L.full(2 * bias + 1, itype, ()))
    exp = field - float(bias - 1) - L.g.op("select", tiny, L.full(64, itype, ()), L.full(0, itype, ()))
    # keep sign and mantissa, set the exponent field to bias-1: a magnitude in [0.5, 1)
    keep = L.g.op("not", L.g.op("shl", L.full(2 * bias + 1, itype, ()), L.full(mbits, itype, ())))
    mant = L.g.op("bitcast", L.g.op("or", L.g.op("and", bits, keep), L.full((bias - 1) << mbits, itype, ())),
                  dtype=x.dtype)
    # zero, inf and NaN: themselves, exponent 0
    special = L.g.op("or", L.g.op("eq", x, L.full(0, x.dtype, ())),
                     L.g.op("not", L.g.op("lt", L.g.op("abs", x), L.full(math.inf, x.dtype, ()))))
    zero = L.full(0, "i32", ())
    return L.g.op("select", special, x, mant), L.g.op("select", special, zero, L.cast(exp, "i32"))


def _floats_only(node):
    """integer results"""
    return None if dtype_of(node) in _FLOATS else "integer result"


@lowers(aten.nextafter.default, check=_floats_only)
def nextafter(L, node):
    a, b = both(L, node)
    itype = _BITS[a.dtype][0]
    bits = L.g.op("bitcast", a, dtype=itype)
    # away from zero (bits + 1 on the magnitude) when moving up from a positive a or down from a negative one
    away = L.g.op("eq", L.g.op("lt", a, b), L.g.op("lt", L.full(0, a.dtype, ()), a))
    step = L.g.op("bitcast", L.g.op("select", away, bits + 1.0, bits - 1.0), dtype=a.dtype)
    # from ±0: the smallest subnormal with b's sign
    least = L.g.op("bitcast", L.full(1, itype, ()), dtype=a.dtype)
    step = L.g.op("select", L.g.op("eq", a, L.full(0, a.dtype, ())),
                  L.g.op("select", L.g.op("lt", b, a), -least, least), step)
    out = L.g.op("select", L.g.op("eq", a, b), b, step)
    return L.g.op("select", L.g.op("or", is_nan(L, a), is_nan(L, b)), a + b, out)


def _round_decimals_ok(node):
    """integer results"""
    return _float_out(node) or (None if isinstance(node.kwargs.get("decimals", 0), int) else "decimals")


@lowers(aten.round.decimals, check=_round_decimals_ok)
def round_decimals(L, node):
    x = L.value(node.args[0], L.out_dtype(node))
    d = node.kwargs.get("decimals", 0)
    if d == 0:
        return L.g.op("round", x)
    # PyTorch's: the power of ten rounded to the dtype, then scale, round half to even, unscale
    ten = L.full(10.0 ** abs(d), x.dtype, ())
    if d > 0:
        return L.g.op("round", x * ten) / ten
    return L.g.op("round", x / ten) * ten


def _real_angle_ok(node):
    """complex input"""
    return None if dtype_of(node.args[0]) in TS_DTYPE.values() else "angle of %s" % fake(node.args[0]).dtype


@lowers(aten.angle.default, check=_real_angle_ok)
def angle(L, node):
    out = L.out_dtype(node)
    x = L.value(node.args[0], out)
    # real numbers: pi for negatives, 0 otherwise, NaN kept
    pi = L.g.op("select", L.g.op("lt", x, L.full(0, out, ())), L.full(math.pi, out, ()), L.full(0, out, ()))
    return L.g.op("select", is_nan(L, x), x, pi)
