"""The plumbing of tessera.numpy: finding the frame being traced, asking
numpy for result dtypes, and turning operands into graph Values."""
import builtins as _b

import numpy as np

from . import _tessera
from ._trace import Tracer, current, enter_trace_error, np_dtype, ts_dtype


def _is_t(x) -> bool:
    return isinstance(x, Tracer)


def _any_t(*xs) -> bool:
    for x in xs:
        if isinstance(x, Tracer):
            return True
        if isinstance(x, (list, tuple)) and _any_t(*x):
            return True
    return False


def _frame():
    f = current()
    if f is None:
        enter_trace_error()
    return f


def _unsupported(msg: str) -> Exception:
    e = _tessera.Unsupported(msg)
    e.status = "TS_ERR_UNSUPPORTED"
    return e


def _dummy(x):
    """A one-element stand-in of x for asking numpy what dtype it makes.
    Python scalars stay themselves (weak, NEP 50); bf16 stands in as f16."""
    if isinstance(x, Tracer):
        dt = x.dtype
        return np.ones(1, np.float16 if isinstance(dt, str) else dt)
    if isinstance(x, (bool, int, float, complex)):
        return x
    return np.ones(1, np.asarray(x).dtype)


def _oracle(npf, *xs, **kw) -> str:
    """The tessera dtype numpy's npf gives for operands like xs."""
    with np.errstate(all="ignore"):
        r = npf(*[_dummy(x) for x in xs], **kw)
    dt = ts_dtype(r if isinstance(r, np.dtype) else np.asarray(r).dtype)
    if dt == "f16" and _b.any(_is_t(x) and x._v.dtype == "bf16" for x in xs) and \
            not _b.any(_is_t(x) and x._v.dtype == "f16" for x in xs):
        dt = "bf16"
    return dt


def _common(*xs) -> str:
    """numpy's result_type of xs (Python scalars weak)."""
    return _oracle(np.result_type, *xs)


def _op(f, name, *vals, **attrs):
    return f.graph.op(name, *vals, **attrs)


def _cast(f, v, dt: str):
    return v if v.dtype == dt else _op(f, "cast", v, dtype=dt)


def _lift(f, x, dt: str = None):
    """x (a Tracer, array or number) as a Value of frame f, cast to dt."""
    if isinstance(x, Tracer):
        v = f.value(x)
        return _cast(f, v, dt) if dt else v
    if dt == "bf16":
        return _cast(f, f.const(np.asarray(x, np.float32)), "bf16")
    a = np.asarray(x, np_dtype(dt) if dt else None)
    if a.dtype == object:
        raise TypeError("cannot trace a %s as an array" % type(x).__name__)
    return f.const(a)


def _w(f, v) -> Tracer:
    return f.wrap(v)


def _axes(axis, ndim: int):
    """axis (None, an int or a tuple) as a sorted list of non-negative axes."""
    if axis is None:
        return list(range(ndim))
    axs = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    out = []
    for a in axs:
        a = int(a)
        if not -ndim <= a < _b.max(ndim, 1):
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError("repeated axis")
    return sorted(out)


def _dim_value(f, d, dt: str):
    """A size as a scalar Value of dtype dt; a Dim is counted at run time."""
    if isinstance(d, int):
        return _lift(f, d, dt)
    ones = _op(f, "broadcast", _lift(f, 1, "i64"), shape=[str(d)], axes=[])
    return _cast(f, _op(f, "reduce_sum", ones, axes=[0]), dt)


def astype(x, dtype):
    """x converted to dtype (float -> int truncates and saturates; NaN -> 0)."""
    if not _is_t(x):
        return np.asarray(x).astype(dtype)
    f = _frame()
    return _w(f, _cast(f, f.value(x), ts_dtype(dtype)))
