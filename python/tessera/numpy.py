"""tessera.numpy: numpy's functions, working on traced arrays.

    import tessera
    import tessera.numpy as tnp

    @tessera.jit
    def f(x, w):
        return tnp.tanh(x @ w).sum(axis=1) + 1.0

Inside a trace (tessera.jit, tessera.trace, the regions of tessera.cond,
while_loop and scan) each function builds graph nodes; its result is a
Tracer. Called on plain numpy arrays and Python numbers outside a trace, a
function is numpy's own: tnp.exp(np.ones(3)) is np.exp(np.ones(3)).
Creation functions (zeros, ones, full, arange, eye) return Tracers while a
trace is active and numpy arrays otherwise.

Result dtypes are numpy's, decided by calling numpy itself on one-element
stand-ins of the operands (so whatever rule the installed numpy follows; for
numpy 2 that is NEP 50: Python scalars are weak, float32 + 1.5 stays
float32, int32 + float32 is float64, int32 / int32 is float64).

Differences from numpy: an integer index that is a traced value clamps
into range (as jax.numpy does, via dynamic_slice); out-of-range static
indices raise IndexError as numpy's do; float -> int casts saturate and
NaN becomes 0; integer division by zero gives 0."""
import builtins as _b

import numpy as np

from ._np_core import (_any_t, _axes, _cast, _common, _dim_value, _frame, _is_t, _lift, _op, _oracle,  # noqa: F401
                       _unsupported, _w, astype)
from ._np_shape import (_shape_arg, asarray, array, atleast_1d, atleast_2d, broadcast_to, concatenate, expand_dims,  # noqa: F401
                        flip, getitem, hstack, moveaxis, pad, ravel, reshape, split, squeeze, stack, swapaxes,
                        take, transpose, vstack)
from ._trace import Dim, attr_dims, current, ts_dtype
from ._trace import prod as _size_of
# ---- elementwise ---------------------------------------------------------------------------------


def _unary(npf, build):
    """A one-operand ufunc: the result dtype is numpy's; x is cast to it
    first, then build(f, value, dtype) makes the node."""
    def fn(x, /):
        if not _is_t(x):
            return npf(x)
        f = _frame()
        dt = _oracle(npf, x)
        return _w(f, build(f, _lift(f, x, dt), dt))
    fn.__name__ = fn.__qualname__ = npf.__name__
    fn.__doc__ = "numpy.%s, traced." % npf.__name__
    return fn


def _prim(name, floats_only=True):
    def build(f, v, dt):
        if floats_only and not dt.startswith(("f", "bf")):
            return v   # floor, ceil, round of an integer: itself
        return _op(f, name, v)
    return build


def _log1p(f, v, dt):
    # log(u) * x / (u - 1) with u = 1 + x is accurate to a few ulp (Goldberg)
    u = v + 1.0
    r = _op(f, "div", _op(f, "mul", _op(f, "log", u), v), u - 1.0)
    return _op(f, "select", _op(f, "eq", u, 1.0), v, r)


def _expm1(f, v, dt):
    u = _op(f, "exp", v)
    r = _op(f, "div", _op(f, "mul", u - 1.0, v), _op(f, "log", u))
    r = _op(f, "select", _op(f, "eq", u - 1.0, -1.0), _lift(f, -1.0, dt), r)
    r = _op(f, "select", _op(f, "eq", u, _lift(f, np.inf, dt)), u, r)
    return _op(f, "select", _op(f, "eq", u, 1.0), v, r)


def _abs(f, v, dt):
    return v if dt == "bool" or dt.startswith("u") else _op(f, "abs", v)


negative = _unary(np.negative, lambda f, v, dt: _op(f, "neg", v))
positive = _unary(np.positive, lambda f, v, dt: v)
absolute = abs = _unary(np.absolute, _abs)
sign = _unary(np.sign, lambda f, v, dt: _op(f, "sign", v))
exp = _unary(np.exp, _prim("exp"))
log = _unary(np.log, _prim("log"))
sqrt = _unary(np.sqrt, _prim("sqrt"))
sin = _unary(np.sin, _prim("sin"))
cos = _unary(np.cos, _prim("cos"))
tan = _unary(np.tan, _prim("tan"))
tanh = _unary(np.tanh, _prim("tanh"))
floor = _unary(np.floor, _prim("floor"))
ceil = _unary(np.ceil, _prim("ceil"))
rint = _unary(np.rint, _prim("round"))
log1p = _unary(np.log1p, _log1p)
expm1 = _unary(np.expm1, _expm1)
exp2 = _unary(np.exp2, lambda f, v, dt: _op(f, "exp", v * float(np.log(2.0))))
log2 = _unary(np.log2, lambda f, v, dt: _op(f, "log", v) * float(1 / np.log(2.0)))
log10 = _unary(np.log10, lambda f, v, dt: _op(f, "log", v) * float(1 / np.log(10.0)))
sinh = _unary(np.sinh, lambda f, v, dt: (_op(f, "exp", v) - _op(f, "exp", -v)) * 0.5)
cosh = _unary(np.cosh, lambda f, v, dt: (_op(f, "exp", v) + _op(f, "exp", -v)) * 0.5)
square = _unary(np.square, lambda f, v, dt: _op(f, "mul", v, v))
reciprocal = _unary(np.reciprocal, lambda f, v, dt: _op(f, "div", _lift(f, 1, dt), v))
invert = bitwise_not = _unary(np.invert, lambda f, v, dt: _op(f, "not", v))


def round(a, decimals: int = 0):
    """numpy.round (ties to even), traced."""
    if not _is_t(a):
        return np.round(a, decimals)
    if decimals == 0:
        return rint(a)
    s = 10.0 ** decimals
    return rint(a * s) / s


around = round


def logical_not(x, /):
    """numpy.logical_not, traced."""
    if not _is_t(x):
        return np.logical_not(x)
    f = _frame()
    return _w(f, _op(f, "not", _lift(f, x, "bool")))


def isnan(x, /):
    """numpy.isnan, traced."""
    if not _is_t(x):
        return np.isnan(x)
    f = _frame()
    v = _lift(f, x)
    return _w(f, _op(f, "ne", v, v))


def isfinite(x, /):
    """numpy.isfinite, traced: x - x is 0 exactly when x is finite."""
    if not _is_t(x):
        return np.isfinite(x)
    f = _frame()
    v = _lift(f, x)
    if not v.dtype.startswith(("f", "bf")):
        return _w(f, _op(f, "eq", v, v))
    return _w(f, _op(f, "eq", v - v, 0.0))


def isinf(x, /):
    """numpy.isinf, traced."""
    if not _is_t(x):
        return np.isinf(x)
    return logical_and(logical_not(isfinite(x)), logical_not(isnan(x)))


def _binary(npf, build, compute="result"):
    """A two-operand ufunc. compute="result": the operands are cast to the
    result's dtype (arithmetic); "common": to their common dtype, and the
    node gives the result (comparisons); "bool": to bool (logical)."""
    def fn(a, b, /):
        if not (_is_t(a) or _is_t(b)):
            return npf(a, b)
        f = _frame()
        dt = _oracle(npf, a, b)
        cdt = {"result": dt, "common": None, "bool": "bool"}[compute] or _common(a, b)
        return _w(f, build(f, _lift(f, a, cdt), _lift(f, b, cdt), cdt))
    fn.__name__ = fn.__qualname__ = npf.__name__
    fn.__doc__ = "numpy.%s, traced." % npf.__name__
    return fn


def _node2(name, swap=False):
    return lambda f, a, b, dt: _op(f, name, b, a) if swap else _op(f, name, a, b)


def _is_int(dt: str) -> bool:
    return dt[0] in "iu"


def _floor_divide(f, a, b, dt):
    if not _is_int(dt):
        return _op(f, "floor", _op(f, "div", a, b))
    q, r = _op(f, "div", a, b), _op(f, "rem", a, b)
    zero = _lift(f, 0, dt)
    fix = _op(f, "and", _op(f, "ne", r, zero), _op(f, "ne", _op(f, "lt", r, zero), _op(f, "lt", b, zero)))
    return _op(f, "select", fix, q - _lift(f, 1, dt), q)


def _remainder(f, a, b, dt):
    r = _op(f, "rem", a, b)
    zero = _lift(f, 0, dt)
    fix = _op(f, "and", _op(f, "ne", r, zero), _op(f, "ne", _op(f, "lt", r, zero), _op(f, "lt", b, zero)))
    r = _op(f, "select", fix, r + b, r)
    return _op(f, "select", _op(f, "eq", b, zero), zero, r) if _is_int(dt) else r


add = _binary(np.add, _node2("add"))
subtract = _binary(np.subtract, _node2("sub"))
multiply = _binary(np.multiply, _node2("mul"))
divide = true_divide = _binary(np.true_divide, _node2("div"))
floor_divide = _binary(np.floor_divide, _floor_divide)
remainder = mod = _binary(np.remainder, _remainder)
power = _binary(np.power, _node2("pow"))
maximum = _binary(np.maximum, _node2("max"))
minimum = _binary(np.minimum, _node2("min"))
arctan2 = _binary(np.arctan2, _node2("atan2"))
equal = _binary(np.equal, _node2("eq"), "common")
not_equal = _binary(np.not_equal, _node2("ne"), "common")
less = _binary(np.less, _node2("lt"), "common")
less_equal = _binary(np.less_equal, _node2("le"), "common")
greater = _binary(np.greater, _node2("lt", True), "common")
greater_equal = _binary(np.greater_equal, _node2("le", True), "common")
logical_and = _binary(np.logical_and, _node2("and"), "bool")
logical_or = _binary(np.logical_or, _node2("or"), "bool")
logical_xor = _binary(np.logical_xor, _node2("xor"), "bool")
bitwise_and = _binary(np.bitwise_and, _node2("and"))
bitwise_or = _binary(np.bitwise_or, _node2("or"))
bitwise_xor = _binary(np.bitwise_xor, _node2("xor"))
left_shift = _binary(np.left_shift, _node2("shl"))
right_shift = _binary(np.right_shift, _node2("shr"))


def where(condition, x, y, /):
    """numpy.where(condition, x, y), traced (the one-argument form, whose
    size depends on the values, is not supported in a trace)."""
    if not _any_t(condition, x, y):
        return np.where(condition, x, y)
    f = _frame()
    dt = _oracle(np.where, np.ones(1, bool), x, y)
    return _w(f, _op(f, "select", _lift(f, condition, "bool"), _lift(f, x, dt), _lift(f, y, dt)))


def clip(a, a_min=None, a_max=None):
    """numpy.clip, traced: minimum(maximum(a, a_min), a_max)."""
    if not _any_t(a, a_min, a_max):
        return np.clip(a, a_min, a_max)
    r = a if a_min is None else maximum(a, a_min)
    return r if a_max is None else minimum(r, a_max)


# ---- reductions ----------------------------------------------------------------------------------


def _keep(f, v, shape, axes, keepdims):
    if not keepdims:
        return v
    new = [1 if i in axes else d for i, d in enumerate(shape)]
    return _op(f, "reshape", v, shape=attr_dims(new))


def _reduction(npf, prim):
    def fn(a, axis=None, dtype=None, keepdims=False):
        if not _is_t(a):
            return npf(a, axis=axis, dtype=dtype, keepdims=keepdims) if dtype else \
                npf(a, axis=axis, keepdims=keepdims)
        f = _frame()
        kw = {"dtype": dtype} if dtype is not None else {}
        dt = _oracle(lambda d: npf(d, **kw), a)
        axes = _axes(axis, a.ndim)
        v = _lift(f, a, dt)
        if dt == "bool":   # max/min of bools: as u8
            v = _cast(f, _op(f, prim, _cast(f, v, "u8"), axes=axes), "bool")
        else:
            v = _op(f, prim, v, axes=axes)
        return _w(f, _keep(f, v, a.shape, axes, keepdims))
    fn.__name__ = fn.__qualname__ = npf.__name__
    fn.__doc__ = "numpy.%s(a, axis=None, dtype=None, keepdims=False), traced." % npf.__name__
    return fn


sum = _reduction(np.sum, "reduce_sum")
prod = _reduction(np.prod, "reduce_prod")
max = amax = _reduction(np.max, "reduce_max")
min = amin = _reduction(np.min, "reduce_min")


def _bool_reduction(npf, prim):
    def fn(a, axis=None, keepdims=False):
        if not _is_t(a):
            return npf(a, axis=axis, keepdims=keepdims)
        f = _frame()
        axes = _axes(axis, a.ndim)
        v = _op(f, prim, _cast(f, _lift(f, a, "bool"), "u8"), axes=axes)
        return _w(f, _keep(f, _cast(f, v, "bool"), a.shape, axes, keepdims))
    fn.__name__ = fn.__qualname__ = npf.__name__
    fn.__doc__ = "numpy.%s(a, axis=None, keepdims=False), traced." % npf.__name__
    return fn


any = _bool_reduction(np.any, "reduce_max")
all = _bool_reduction(np.all, "reduce_min")


def mean(a, axis=None, dtype=None, keepdims=False):
    """numpy.mean, traced. The sum is taken in f32 for f16/bf16 (as numpy
    does for f16) and divided by the count, counted at run time when a
    reduced axis is dynamic."""
    if not _is_t(a):
        return np.mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    f = _frame()
    dt = _oracle(lambda d: np.mean(d, dtype=dtype), a)
    cdt = "f32" if dt in ("f16", "bf16") else dt
    axes = _axes(axis, a.ndim)
    s = _op(f, "reduce_sum", _lift(f, a, cdt), axes=axes)
    n = _size_of(a.shape[i] for i in axes)
    v = _cast(f, _op(f, "div", s, _dim_value(f, n, cdt)), dt)
    return _w(f, _keep(f, v, a.shape, axes, keepdims))


def var(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """numpy.var, traced: mean(|a - mean(a)|^2) * n / (n - ddof)."""
    if not _is_t(a):
        return np.var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    m = mean(a, axis=axis, dtype=dtype, keepdims=True)
    d = subtract(a, m)
    v = mean(multiply(d, d), axis=axis, dtype=dtype, keepdims=keepdims)
    if ddof:
        n = _size_of(a.shape[i] for i in _axes(axis, a.ndim))
        f = _frame()
        nv = _dim_value(f, n, v._v.dtype)
        v = _w(f, _op(f, "div", _op(f, "mul", v._v, nv), nv - float(ddof)))
    return v


def std(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """numpy.std, traced."""
    if not _is_t(a):
        return np.std(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    return sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def _argfn(npf, prim):
    def fn(a, axis=None, keepdims=False):
        if not _is_t(a):
            return npf(a, axis=axis, keepdims=keepdims)
        f = _frame()
        x = a if axis is not None else reshape(a, -1)
        ax = _axes(axis if axis is not None else 0, x.ndim)[0]
        v = _lift(f, x)
        if v.dtype == "bool":
            v = _cast(f, v, "u8")
        r = _op(f, prim, v, axis=ax)
        if keepdims:
            r = _keep(f, r, a.shape, _axes(axis, a.ndim), True)
        return _w(f, r)
    fn.__name__ = fn.__qualname__ = npf.__name__
    fn.__doc__ = "numpy.%s(a, axis=None, keepdims=False), traced (i64 indices)." % npf.__name__
    return fn


argmax = _argfn(np.argmax, "argmax")
argmin = _argfn(np.argmin, "argmin")


def _cumfn(npf, kind):
    def fn(a, axis=None, dtype=None):
        if not _is_t(a):
            return npf(a, axis=axis, dtype=dtype)
        f = _frame()
        dt = _oracle(lambda d: npf(d, dtype=dtype), a)
        x = a if axis is not None else reshape(a, -1)
        ax = _axes(axis if axis is not None else 0, x.ndim)[0]
        return _w(f, _op(f, "cumulative", _lift(f, x, dt), kind=kind, axis=ax))
    fn.__name__ = fn.__qualname__ = npf.__name__
    fn.__doc__ = "numpy.%s(a, axis=None, dtype=None), traced." % npf.__name__
    return fn


cumsum = _cumfn(np.cumsum, "sum")
cumprod = _cumfn(np.cumprod, "prod")

# ---- linear algebra --------------------------------------------------------------------------------


def matmul(a, b, /):
    """numpy.matmul, traced."""
    if not (_is_t(a) or _is_t(b)):
        return np.matmul(a, b)
    f = _frame()
    dt = _oracle(np.matmul, a, b)
    return _w(f, f.graph.matmul(_lift(f, a, dt), _lift(f, b, dt)))


def _nd(x) -> int:
    return x.ndim if _is_t(x) else np.ndim(x)


def dot(a, b, /):
    """numpy.dot, traced: the last axis of a with the second-to-last of b."""
    if not (_is_t(a) or _is_t(b)):
        return np.dot(a, b)
    if _nd(a) == 0 or _nd(b) == 0:   # a Python number is a strong array here, as np.dot makes it
        return multiply(*[x if _is_t(x) else np.asarray(x) for x in (a, b)])
    return tensordot(a, b, ([_nd(a) - 1], [_b.max(_nd(b) - 2, 0)]))


def tensordot(a, b, axes=2):
    """numpy.tensordot, traced (one dot node)."""
    if not (_is_t(a) or _is_t(b)):
        return np.tensordot(a, b, axes)
    f = _frame()
    dt = _oracle(np.multiply, a, b)
    va, vb = _lift(f, a, dt), _lift(f, b, dt)
    if isinstance(axes, (int, np.integer)):
        la = list(range(va.ndim - int(axes), va.ndim))
        lb = list(range(int(axes)))
    else:
        la = [axes[0]] if isinstance(axes[0], int) else list(axes[0])
        lb = [axes[1]] if isinstance(axes[1], int) else list(axes[1])
    la = [x % va.ndim for x in la]
    lb = [x % vb.ndim for x in lb]
    return _w(f, _op(f, "dot", va, vb, lhs_contract=la, rhs_contract=lb))


def inner(a, b, /):
    """numpy.inner, traced."""
    if not (_is_t(a) or _is_t(b)):
        return np.inner(a, b)
    if _nd(a) == 0 or _nd(b) == 0:
        return multiply(a, b)
    return tensordot(a, b, ([-1], [-1]))


def outer(a, b):
    """numpy.outer, traced."""
    if not (_is_t(a) or _is_t(b)):
        return np.outer(a, b)
    return multiply(reshape(asarray(a), (-1, 1)), reshape(asarray(b), (1, -1)))

# ---- creation --------------------------------------------------------------------------------------


def _full(shape, fill, dtype):
    f = _frame()
    shape = _shape_arg(shape)
    dt = ts_dtype(dtype)
    return _w(f, _op(f, "broadcast", _lift(f, fill, dt), shape=attr_dims(shape), axes=[]))


def _tracing(*shape_like) -> bool:
    return current() is not None or _b.any(isinstance(d, Dim) for d in _flat(shape_like))


def _flat(xs):
    for x in xs:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def full(shape, fill_value, dtype=None):
    """numpy.full; a Tracer while a trace is active."""
    if _is_t(fill_value):
        return broadcast_to(fill_value if dtype is None else astype(fill_value, dtype), shape)
    if not _tracing(shape):
        return np.full(shape, fill_value, dtype)
    return _full(shape, fill_value, dtype if dtype is not None else np.asarray(fill_value).dtype)


def zeros(shape, dtype=float):
    """numpy.zeros; a Tracer while a trace is active (shape may hold Dims)."""
    return _full(shape, 0, dtype) if _tracing(shape) else np.zeros(shape, dtype)


def ones(shape, dtype=float):
    """numpy.ones; a Tracer while a trace is active (shape may hold Dims)."""
    return _full(shape, 1, dtype) if _tracing(shape) else np.ones(shape, dtype)


empty = zeros


def full_like(a, fill_value, dtype=None, shape=None):
    """numpy.full_like; a Tracer for a traced a."""
    if not _is_t(a):
        return np.full_like(a, fill_value, dtype=dtype, shape=shape)
    return full(a.shape if shape is None else shape, fill_value, a.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None, shape=None):
    """numpy.zeros_like; a Tracer for a traced a."""
    return full_like(a, 0, dtype, shape) if _is_t(a) else np.zeros_like(a, dtype=dtype, shape=shape)


def ones_like(a, dtype=None, shape=None):
    """numpy.ones_like; a Tracer for a traced a."""
    return full_like(a, 1, dtype, shape) if _is_t(a) else np.ones_like(a, dtype=dtype, shape=shape)


def arange(start, stop=None, step=1, dtype=None):
    """numpy.arange with static bounds (an iota node in a trace); arange(n)
    of a Dim n counts to a dynamic size."""
    if stop is None:
        start, stop = 0, start
    if not _tracing(start, stop, step):
        return np.arange(start, stop, step, dtype=dtype)
    f = _frame()
    if isinstance(stop, Dim) or isinstance(start, Dim):
        if step != 1:
            raise _unsupported("arange over a dynamic size takes step 1")
        n, dt = stop - start, ts_dtype(dtype or np.int64)
    else:
        ref = np.arange(start, stop, step, dtype=dtype)
        n, dt = ref.size, ts_dtype(ref.dtype)
    idt = dt if dt != "bool" else "i64"
    v = _op(f, "iota", dtype=idt, shape=attr_dims([n]), axis=0)
    if step != 1:
        v = _op(f, "mul", v, _lift(f, step, idt))
    if not (isinstance(start, int) and start == 0):
        v = _op(f, "add", v, _lift(f, start, idt) if not isinstance(start, Dim) else _dim_value(f, start, idt))
    return _w(f, v)


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    """numpy.linspace with static bounds."""
    if not _tracing():
        return np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    r = add(multiply(arange(num, dtype=np.float64), step), float(start))
    if endpoint and num > 1:
        r = where(equal(arange(num), num - 1), float(stop), r)
    return astype(r, dtype or np.float64)


def eye(N, M=None, k=0, dtype=float):
    """numpy.eye (iota == iota + k in a trace)."""
    if not _tracing(N, M):
        return np.eye(N, M, k, dtype=dtype)
    f = _frame()
    shape = attr_dims([N, N if M is None else M])
    r = _op(f, "iota", dtype="i64", shape=shape, axis=0)
    c = _op(f, "iota", dtype="i64", shape=shape, axis=1)
    return _w(f, _cast(f, _op(f, "eq", _op(f, "add", r, _lift(f, k, "i64")), c), ts_dtype(dtype)))


def identity(n, dtype=float):
    return eye(n, dtype=dtype)


def shape(a):
    """numpy.shape; Dims for dynamic sizes."""
    return a.shape if _is_t(a) else np.shape(a)


def ndim(a):
    return a.ndim if _is_t(a) else np.ndim(a)


def size(a):
    return a.size if _is_t(a) else np.size(a)


__all__ = [
    # elementwise
    "negative", "positive", "absolute", "abs", "sign", "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "floor",
    "ceil", "rint", "round", "around", "log1p", "expm1", "exp2", "log2", "log10", "sinh", "cosh", "square",
    "reciprocal", "invert", "bitwise_not", "logical_not", "isnan", "isfinite", "isinf", "add", "subtract",
    "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "power", "maximum", "minimum",
    "arctan2", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
    "where", "clip", "astype",
    # reductions
    "sum", "prod", "max", "amax", "min", "amin", "any", "all", "mean", "var", "std", "argmax", "argmin",
    "cumsum", "cumprod",
    # shapes and indexing
    "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to",
    "atleast_1d", "atleast_2d", "concatenate", "stack", "vstack", "hstack", "split", "flip", "pad", "take",
    "getitem", "shape", "ndim", "size",
    # linear algebra
    "matmul", "dot", "tensordot", "inner", "outer",
    # creation
    "asarray", "array", "full", "zeros", "ones", "empty", "full_like", "zeros_like", "ones_like", "arange",
    "linspace", "eye", "identity",
]

from ._numpy_methods import install as _install  # noqa: E402  (needs the functions above)

_install(globals())
