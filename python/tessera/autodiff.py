"""tessera.grad, value_and_grad, vjp and jvp: derivatives of Python
functions (docs/jit.md, docs/autodiff.md).

Each traces the function into a graph of its own (array arguments become
its inputs, outer traced values it closes over more inputs, held fixed),
differentiates that graph in C (Graph.grad / Graph.jvp: one rule per
primitive) and builds the result into the caller's trace (Graph.inline).
Called outside a trace, the whole call is compiled once per signature, as
tessera.jit does. So they compose with jit and with each other:
grad(grad(f)) differentiates the gradient graph that the inner grad
inlined."""
import functools
import weakref
from typing import Any, Callable, List, Sequence, Union

import numpy as np

from . import _tessera
from . import _tree
from ._trace import Frame, Tracer, current
from .jit import Jitted, _as_feedable, _dtype_name, _is_array, _output_value


def _leaf_type(leaf: Any):
    """The IR type of an array leaf ("f32[batch, 4]"), None for a static one."""
    if isinstance(leaf, Tracer):
        return leaf.value.type
    if _is_array(leaf):
        a = _as_feedable(leaf)
        return "%s[%s]" % (_dtype_name(a), ", ".join(str(d) for d in a.shape))
    return None


class _Inner:
    """fn traced on args into a graph of its own."""

    def __init__(self, fn: Callable, args: tuple, name: str):
        self.leaves, self.tree, _ = _tree.flatten(tuple(args))
        self.counts = [len(_tree.flatten(a)[0]) for a in args]
        self.graph = _tessera.Graph(name)
        frame = Frame(self.graph, parent=current(), discover=True)
        self.arrays: List[int] = []          # leaf positions that are inputs, in input order
        with frame:
            new = list(self.leaves)
            for i, leaf in enumerate(self.leaves):
                t = _leaf_type(leaf)
                if t is not None:
                    new[i] = frame.wrap(self.graph.input("a%d" % i, t))
                    self.arrays.append(i)
            out = fn(*_tree.unflatten(self.tree, new))
            out_leaves, self.out_tree, _ = _tree.flatten(out)
            self.graph.output(*[_output_value(frame, x) for x in out_leaves])
        self.captured = frame.captured       # outer Tracers it closed over: inputs after the arrays
        self.n_out = len(out_leaves)

    def input_of(self, leaf: int) -> int:
        return self.arrays.index(leaf)

    def leaves_of(self, argnum: int) -> range:
        start = sum(self.counts[:argnum])
        return range(start, start + self.counts[argnum])

    def inline(self, extra: Sequence[Any]) -> List[Tracer]:
        """Build the (differentiated) graph into the caller's trace on the
        arguments, the captured values and extra Values; its outputs."""
        frame = current()
        vals = []
        for i in self.arrays:
            leaf = self.leaves[i]
            vals.append(frame.value(leaf) if isinstance(leaf, Tracer) else frame.const(np.asarray(_as_feedable(leaf))))
        vals += [frame.value(t) for t in self.captured] + list(extra)
        return [frame.wrap(v) for v in frame.graph.inline(self.graph, *vals)]


def _fill(value: float, v: Any) -> Any:
    """A Value of the caller's trace: v's type (a Value of the inner graph)
    filled with value."""
    g = current().graph
    s = g.scalar(value, v.dtype)
    return s if not v.ndim else g.op("broadcast", s, shape=list(v.shape), axes=[])


_STAGED: "weakref.WeakKeyDictionary[Callable, dict]" = weakref.WeakKeyDictionary()


def _staged_for(fn: Callable, kind: str, make: Callable[[], Callable]) -> Callable:
    """One staged function per (fn, kind), so repeated calls reuse its
    compiled signatures."""
    try:
        per = _STAGED.setdefault(fn, {})
    except TypeError:     # not weakly referable: no reuse
        return make()
    if kind not in per:
        per[kind] = make()
    return per[kind]


def _staged(inside: Callable, like: Callable = None) -> Callable:
    """inside works only while tracing; outside a trace it is compiled once
    per signature (tessera.jit) and run. like: the user's function, whose
    name and signature the result shows (so tessera.jit's dynamic= names
    its parameters)."""
    jitted: List[Any] = []

    @functools.wraps(like or inside)
    def call(*args):
        if current() is not None:
            return inside(*args)
        if not jitted:
            jitted.append(Jitted(inside))
        return jitted[0](*args)
    return call


def _argnums(argnums: Union[int, Sequence[int]], n: int) -> tuple:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not 0 <= a < n:
            raise ValueError("argnums %d: the function was called with %d arguments" % (a, n))
    return nums


def _all_arrays(what: str, primals: Sequence[Any]) -> None:
    for leaf in _tree.flatten(tuple(primals))[0]:
        if _leaf_type(leaf) is None:
            raise TypeError("tessera.%s: the primals hold a %s; they must be arrays" % (what, type(leaf).__name__))


def value_and_grad(fn: Callable, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False) -> Callable:
    """A function returning (fn(*args), gradient of fn with respect to the
    arguments argnums). fn returns a floating-point scalar, or (scalar, aux)
    with has_aux. The gradient has the structure of args[argnums] (a tuple
    of them when argnums is a tuple)."""
    name = getattr(fn, "__name__", "f")

    def inside(*args):
        nums = _argnums(argnums, len(args))
        inner = _Inner(fn, args, "grad_" + "".join(c if c.isalnum() else "_" for c in name))
        outs = inner.graph.outputs
        if has_aux and (inner.out_tree[0] != "tuple" or len(inner.out_tree[2]) != 2):
            raise TypeError("tessera.grad: with has_aux, %s must return (value, aux)" % name)
        loss = outs[0] if outs else None
        if loss is None or loss.ndim != 0 or loss.dtype not in ("f16", "bf16", "f32", "f64"):
            raise TypeError("tessera.grad: %s must return a floating-point scalar%s, not %s; tessera.vjp "
                            "differentiates other results" % (name, " (and aux)" if has_aux else "",
                                                              loss.type if loss is not None else "nothing"))
        wrt = []
        for a in nums:
            for leaf in inner.leaves_of(a):
                if leaf not in inner.arrays:
                    raise TypeError("tessera.grad: argument %d holds a %s, not an array"
                                    % (a, type(inner.leaves[leaf]).__name__))
                wrt.append(inner.input_of(leaf))
        inner.graph.grad(wrt=wrt)
        cts = [_fill(1.0 if k == 0 else 0.0, v) for k, v in enumerate(outs)
               if v.dtype in ("f16", "bf16", "f32", "f64")]
        res = inner.inline(cts)
        value = _tree.unflatten(inner.out_tree, res[:inner.n_out])
        grads, k = [], inner.n_out
        for a in nums:
            n = inner.counts[a]
            grads.append(_tree.unflatten(_tree.flatten(args[a])[1], res[k:k + n]))
            k += n
        return value, (grads[0] if isinstance(argnums, int) else tuple(grads))

    return _staged(inside, like=fn)


def grad(fn: Callable, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False) -> Callable:
    """The gradient of fn (a floating-point scalar) with respect to the
    arguments argnums: tessera.grad(loss)(params, x, y). With has_aux, fn
    returns (value, aux) and the result is (gradient, aux)."""
    vg = value_and_grad(fn, argnums, has_aux)

    @functools.wraps(fn)
    def g(*args):
        (value, grads) = vg(*args)
        return (grads, value[1]) if has_aux else grads
    return g


def jvp(fn: Callable, primals: Sequence[Any], tangents: Sequence[Any]):
    """(fn(*primals), the derivative of fn at primals along tangents):
    forward mode. tangents match primals' array leaves in structure and
    types; every array leaf is differentiated."""
    _all_arrays("jvp", primals)

    def inside(primals, tangents):
        inner = _Inner(fn, tuple(primals), "jvp")
        t_leaves = _tree.flatten(tuple(tangents))[0]
        if len(t_leaves) != len(inner.leaves):
            raise ValueError("tessera.jvp: %d tangent leaves for %d primal leaves" % (len(t_leaves), len(inner.leaves)))
        frame = current()
        tv = []
        for i in inner.arrays:
            t = t_leaves[i]
            tv.append(frame.value(t) if isinstance(t, Tracer) else frame.const(np.asarray(_as_feedable(t))))
        inner.graph.jvp(wrt=list(range(len(inner.arrays))))
        res = inner.inline(tv)
        out = _tree.unflatten(inner.out_tree, res[:inner.n_out])
        return out, _tree.unflatten(inner.out_tree, res[inner.n_out:])
    return _staged_for(fn, "jvp", lambda: _staged(inside))(tuple(primals), tuple(tangents))


def vjp(fn: Callable, *primals):
    """(fn(*primals), f_vjp): f_vjp(cotangent) gives the cotangents of the
    primals (a tuple, their structure), for a cotangent shaped as fn's
    result. f_vjp traces fn again (the forward values are recomputed)."""
    _all_arrays("vjp", primals)
    out = _staged_for(fn, "fwd", lambda: _staged(lambda *a: fn(*a)))(*primals)

    def f_vjp(ct):
        def inside(ct, *primals):
            inner = _Inner(fn, primals, "vjp")
            inner.graph.grad(wrt=list(range(len(inner.arrays))))
            frame = current()
            cts = [frame.value(c) if isinstance(c, Tracer) else frame.const(np.asarray(_as_feedable(c)))
                   for c in _tree.flatten(ct)[0]]
            res = inner.inline(cts)[inner.n_out:]
            grads, k = [], 0
            for p in primals:
                n = len(_tree.flatten(p)[0])
                grads.append(_tree.unflatten(_tree.flatten(p)[1], res[k:k + n]))
                k += n
            return tuple(grads)
        return _staged_for(fn, "vjp", lambda: _staged(inside))(ct, *primals)
    return out, f_vjp


__all__ = ["grad", "value_and_grad", "jvp", "vjp"]
