"""Tracing: what a function sees while tessera.jit traces it.

A Tracer stands for an array whose value is not known yet: it wraps a
tessera.Value of the Graph being built and the Frame that built it. A Frame
is one graph body being traced (the function's, or one region of a control
node); frames nest as the regions do, one stack per thread. Regions are
isolated from above (D6), so a Tracer of an outer frame used inside a
region is *captured*: the region gets a parameter for it and the control
node an operand (Frame.value). Which outer values a region uses is found by
tracing its function once into a scratch graph first (discover=True), where
each capture becomes a new input; the real trace then maps them to the
region's parameters.

The operators and numpy-style methods of Tracer are attached by
tessera.numpy, which defines the functions they call."""
import functools
import linecache
import os
import sys
import threading
from typing import Any, List, Optional

import numpy as np

from . import _tessera

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))

# tessera dtype names <-> numpy dtypes (bf16 has no numpy dtype)
_TS_TO_NP = {
    "bool": np.bool_, "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32,
    "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "f16": np.float16, "f32": np.float32, "f64": np.float64,
}
_NP_TO_TS = {np.dtype(v): k for k, v in _TS_TO_NP.items()}


class TracerError(_tessera.Error, TypeError):
    """A traced value was used where Python needs a concrete one: `if x > 0:`,
    bool(x), int(x), float(x), len() or iteration over an axis of dynamic
    size, np.asarray(x). Inside tessera.jit values are unknown until the
    compiled graph runs; the message names the line of user code that did
    it. A TypeError too, as JAX's ConcretizationTypeError is."""

    __module__ = "tessera"

    def __init__(self, msg: str):
        super().__init__(msg)
        self.status = "TS_ERR_INVALID_ARG"


def user_site() -> str:
    """'file:line: `source`' of the innermost caller outside the tessera
    package (the user's code), or '' when there is none."""
    f = sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PKG_DIR + os.sep):
        f = f.f_back
    if f is None:
        return ""
    line = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
    return "%s:%d%s" % (f.f_code.co_filename, f.f_lineno, ": `%s`" % line if line else "")


def concrete_error(what: str, t: Any) -> TracerError:
    where = user_site()
    return TracerError(
        "%s of a traced value %s%s: inside tessera.jit values are not known until the compiled graph runs, "
        "so Python control flow cannot depend on them. Use tessera.cond(pred, true_fn, false_fn, *operands) "
        "or tessera.numpy.where for a branch, tessera.while_loop or tessera.scan for a loop, or pass the "
        "argument as static (static_argnums)." % (what, _type_text(t), " at " + where if where else ""))


def _type_text(t: Any) -> str:
    try:
        return "(%s)" % t._v.type
    except Exception:
        return ""


# ---- dtypes ---------------------------------------------------------------------------------

def ts_dtype(dt: Any) -> str:
    """The tessera name of a numpy dtype-like ("f32"), or of a tessera name."""
    if isinstance(dt, str) and dt in _TS_TO_NP or dt == "bf16":
        return dt
    try:
        return _NP_TO_TS[np.dtype(dt)]
    except (KeyError, TypeError):
        raise TypeError("tessera has no dtype %r" % (dt,)) from None


def np_dtype(name: str) -> Any:
    """The numpy dtype of a tessera dtype name; the name itself for bf16."""
    t = _TS_TO_NP.get(name)
    return np.dtype(t) if t is not None else name


# ---- symbolic dims --------------------------------------------------------------------------

@functools.lru_cache(maxsize=4096)
def _canonical(expr: str):
    """expr as the C library prints it ("(n)*(2)" -> "2*n"), or an int."""
    d = _tessera.Graph("dims").input(None, "i8[%s]" % expr).shape[0]
    return d


class Dim:
    """A symbolic size (a dynamic dim): its text is a dim expression of the
    IR ("batch", "2*n", "n - 1"). Arithmetic with ints and Dims makes new
    Dims; a Dim's value is not known while tracing, so int() of it raises
    TracerError. Two Dims are equal when their canonical texts are."""
    __slots__ = ("expr",)
    __module__ = "tessera"

    def __init__(self, expr: str):
        self.expr = expr

    def __str__(self) -> str:
        return self.expr

    def __repr__(self) -> str:
        return "Dim(%r)" % self.expr

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Dim) and other.expr == self.expr

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(("Dim", self.expr))

    def _op(self, other: Any, op: str, rev: bool = False):
        if isinstance(other, bool) or not isinstance(other, (int, Dim, np.integer)):
            return NotImplemented
        a, b = (other, self) if rev else (self, other)
        return dim("(%s) %s (%s)" % (a, op, b))

    def __add__(self, o): return self._op(o, "+")
    def __radd__(self, o): return self._op(o, "+", True)
    def __sub__(self, o): return self._op(o, "-")
    def __rsub__(self, o): return self._op(o, "-", True)
    def __mul__(self, o): return self._op(o, "*")
    def __rmul__(self, o): return self._op(o, "*", True)
    def __floordiv__(self, o): return self._op(o, "/")
    def __rfloordiv__(self, o): return self._op(o, "/", True)
    def __mod__(self, o): return self._op(o, "%")
    def __rmod__(self, o): return self._op(o, "%", True)
    def __neg__(self): return dim("0 - (%s)" % self.expr)

    def _concrete(self, what: str):
        where = user_site()
        return TracerError("%s of the dynamic size %s%s: its value is known only when the compiled graph runs"
                           % (what, self.expr, " at " + where if where else ""))

    def __index__(self): raise self._concrete("int()")
    def __int__(self): raise self._concrete("int()")
    def __float__(self): raise self._concrete("float()")
    def __bool__(self): raise self._concrete("the truth value")
    def __lt__(self, o): raise self._concrete("a comparison")
    __le__ = __gt__ = __ge__ = __lt__


def dim(expr: Any):
    """An int or a Dim from a dim expression, canonicalised."""
    if isinstance(expr, (int, np.integer)):
        return int(expr)
    d = _canonical(str(expr))
    return d if isinstance(d, int) else Dim(d)


def dim_max(a: Any, b: Any):
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    return dim("max(%s, %s)" % (a, b))


def dim_min(a: Any, b: Any):
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return dim("min(%s, %s)" % (a, b))


def prod(dims) -> Any:
    r = 1
    for d in dims:
        r = r * d
    return r


def attr_dims(shape) -> List[Any]:
    """A shape as a dims attribute: ints, and Dims as their text."""
    return [d if isinstance(d, int) else str(d) for d in shape]


# ---- frames ---------------------------------------------------------------------------------

class _State(threading.local):
    def __init__(self):
        self.stack: List["Frame"] = []


_state = _State()


def current() -> Optional["Frame"]:
    """The innermost frame being traced on this thread, or None."""
    return _state.stack[-1] if _state.stack else None


class Frame:
    """One graph body being traced. graph: the tessera.Graph whose current
    builder builds it. parent: the frame this region's node is built in.
    discover: a scratch trace, where a captured outer value becomes a new
    input of the scratch graph (recorded in captured)."""

    def __init__(self, graph: Any, parent: Optional["Frame"] = None, discover: bool = False):
        self.graph = graph
        self.parent = parent
        self.discover = discover
        self.captures = {}          # id(outer Tracer) -> (Tracer, Value of this frame)
        self.captured: List["Tracer"] = []

    def __enter__(self) -> "Frame":
        _state.stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        popped = _state.stack.pop()
        assert popped is self

    def _encloses(self, f: "Frame") -> bool:
        p = self.parent
        while p is not None and p is not f:
            p = p.parent
        return p is f

    def value(self, t: "Tracer") -> Any:
        """The tessera.Value standing for t in this frame: t's own, or the
        parameter that captures it."""
        if t._frame is self:
            return t._v
        hit = self.captures.get(id(t))
        if hit is not None:
            return hit[1]
        if not self._encloses(t._frame):
            raise TracerError("a traced value (%s) is used outside the trace that made it: a value of a "
                              "tessera.jit trace or of a cond/while_loop/scan region escaped (stored in a "
                              "global or a closure?)%s" % (t._v.type, ", at " + user_site() if user_site() else ""))
        if not self.discover:
            raise TracerError("a region function used an outer traced value (%s) that its first trace did not: "
                              "region functions are traced twice and must do the same both times" % t._v.type)
        v = self.graph.input(None, t._v.type)
        self.captures[id(t)] = (t, v)
        self.captured.append(t)
        return v

    def wrap(self, v: Any) -> "Tracer":
        return Tracer(v, self)

    def const(self, a: np.ndarray) -> Any:
        return self.graph.const(np.asarray(a))   # (ascontiguousarray would make a 0-d array 1-d)


def enter_trace_error() -> None:
    """Raised when a traced op runs with no trace on this thread."""
    raise TracerError("a traced value is used after its trace ended (it escaped tessera.jit)%s"
                      % (", at " + user_site() if user_site() else ""))


# ---- the traced array -----------------------------------------------------------------------

class Tracer:
    """An array of a function being traced by tessera.jit: its dtype and
    shape are known (sizes of dynamic dims are Dims), its values are not.
    numpy's operators and the common ndarray methods work on it and build
    graph nodes; tessera.numpy has the functions. Anything that needs the
    values in Python (bool(), int(), np.asarray) raises TracerError."""
    __slots__ = ("_v", "_frame")
    __array_priority__ = 1000
    __module__ = "tessera"

    def __init__(self, v: Any, frame: Frame):
        self._v = v
        self._frame = frame

    @property
    def value(self) -> Any:
        """The tessera.Value it wraps (of the graph being traced)."""
        return self._v

    @property
    def dtype(self) -> Any:
        """The numpy dtype ('bf16' as text: numpy has none)."""
        return np_dtype(self._v.dtype)

    @property
    def shape(self) -> tuple:
        """Ints, and Dims for dynamic sizes."""
        return tuple(d if isinstance(d, int) else dim(d) for d in self._v.shape)

    @property
    def ndim(self) -> int:
        return self._v.ndim

    @property
    def size(self) -> Any:
        return prod(self.shape)

    def __repr__(self) -> str:
        return "Tracer(%s)" % self._v.type

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d traced array")
        n = self.shape[0]
        if not isinstance(n, int):
            raise concrete_error("len()", self)
        return n

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d traced array")
        n = self.shape[0]
        if not isinstance(n, int):
            raise concrete_error("iteration over an axis of dynamic size", self)
        return (self[i] for i in range(n))

    def __bool__(self):
        raise concrete_error("the truth value (bool(), `if`, `while`, `and`/`or`)", self)

    def __int__(self):
        raise concrete_error("int()", self)

    def __float__(self):
        raise concrete_error("float()", self)

    def __complex__(self):
        raise concrete_error("complex()", self)

    def __index__(self):
        raise concrete_error("use as a Python index (__index__)", self)

    def __array__(self, dtype=None, copy=None):
        raise concrete_error("conversion to a numpy array (np.asarray)", self)

    def tolist(self):
        raise concrete_error("tolist()", self)

    def item(self, *args):
        raise concrete_error("item()", self)
