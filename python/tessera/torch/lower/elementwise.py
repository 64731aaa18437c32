"""Elementwise ATen operators: arithmetic, comparisons, logic, the usual
functions and activations. Operands are cast to the result's dtype (or,
for comparisons, to the operands' promoted dtype) first: PyTorch's type
promotion, made explicit, since tessera's primitives take one dtype."""
import math

import torch

import functools

from .table import fake, ts_dtype
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
    return L.g.op("mul", *both(L, node))


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
