"""tessera.jit: trace a Python function on abstract arrays into a graph of
primitives, compile it once per input signature, run it.

    @tessera.jit(dynamic={"x": "batch, _"})
    def f(x, w):
        return tnp.tanh(x @ w)

    f(np.ones((2, 3), np.float32), w)    # traces, compiles
    f(np.ones((7, 3), np.float32), w)    # same graph and session: batch is symbolic

tessera.trace(fn, *args) gives the Traced object (graph, input and output
structure) without compiling: what a later transformation (autodiff) takes.
docs/jit.md is the tutorial."""
import functools
import inspect
import re
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _tessera
from . import _tree
from ._trace import Frame, Tracer, TracerError, current, ts_dtype

# ---- the signature of a call ------------------------------------------------------------------


def _is_array(x: Any) -> bool:
    """Whether a leaf is traced (an array) or static (anything else:
    Python numbers, strings, None, ...)."""
    return isinstance(x, (np.ndarray, np.generic, _tessera.Tensor)) or \
        (not isinstance(x, (bool, int, float, complex, str, bytes)) and
         (hasattr(x, "__array__") or hasattr(x, "__dlpack__")))


def _as_feedable(x: Any) -> Any:
    """An array leaf as numpy array or tessera.Tensor (dtype and shape known)."""
    if isinstance(x, (np.ndarray, _tessera.Tensor)):
        return x
    if isinstance(x, np.generic):
        return np.asarray(x)
    if hasattr(x, "__dlpack__"):
        return _tessera.from_dlpack(x)
    return np.asarray(x)


def _dtype_name(a: Any) -> str:
    return a.dtype if isinstance(a, _tessera.Tensor) else ts_dtype(a.dtype)


_NAME_RE = re.compile(r"[^A-Za-z0-9_]")


def _ident(text: str) -> str:
    s = _NAME_RE.sub("_", text)
    return s if s and (s[0].isalpha() or s[0] == "_") else "_" + s


def _parse_spec(spec: Any, arg: str) -> Any:
    """A dynamic-dims spec as a list of (None | symbol name) per leading axis.
    "batch, _" names axis 0 'batch'; [0, 2] names axes 0 and 2 '<arg>_0', '<arg>_2'."""
    if isinstance(spec, str):
        out = []
        for part in spec.split(","):
            p = part.strip()
            if p in ("", "_") or p.isdigit():
                out.append(None)
            elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p):
                out.append(p)
            else:
                raise ValueError("dynamic: %r is not a dim name (a C identifier) or '_'" % p)
        return out
    if isinstance(spec, (list, tuple)) and spec and all(isinstance(a, int) for a in spec):
        out = [None] * (max(spec) + 1)
        for a in spec:
            if a < 0:
                raise ValueError("dynamic: axes are counted from 0 (got %d)" % a)
            out[a] = "%s_%d" % (_ident(arg), a)
        return out
    raise TypeError("dynamic: a spec is a str such as 'batch, _' or a list of axes, per argument, or a "
                    "dict/list/tuple of those matching the argument's structure")


def _spec_table(dynamic: Optional[Dict]) -> Dict[Any, Any]:
    """{argument (name or position): spec or {leaf path: spec}}."""
    table: Dict[Any, Any] = {}
    for arg, spec in (dynamic or {}).items():
        name = str(arg)
        try:
            table[arg] = _parse_spec(spec, name)
        except TypeError:
            leaves, _, paths = _tree.flatten(spec, name)
            table[arg] = {p: _parse_spec(s, p) for p, s in zip(paths, leaves)}
    return table


# ---- what tracing makes ------------------------------------------------------------------------


class Traced:
    """A traced function: its graph, and how arguments and results map to
    the graph's inputs and outputs.

    graph: the tessera.Graph (inputs in order of the array leaves of the
    arguments, outputs in order of the result's leaves). in_tree: the
    structure of the traced arguments, ((parameter name, TreeDef), ...) in
    the signature's order; in_leaves: per leaf, None for an array (a graph
    input) or the static value.
    input_names / input_types: the graph inputs' names and IR types
    ("f32[batch, 3]"); out_tree: the result's structure."""

    def __init__(self, graph, in_tree, in_leaves, input_names, input_types, out_tree, n_outputs, fn_name):
        self.graph = graph
        self.in_tree = in_tree
        self.in_leaves = in_leaves
        self.input_names = input_names
        self.input_types = input_types
        self.out_tree = out_tree
        self.n_outputs = n_outputs
        self.fn_name = fn_name

    def unflatten_outputs(self, outputs: Sequence[Any]) -> Any:
        """The function's result structure holding the graph's outputs."""
        return _tree.unflatten(self.out_tree, list(outputs))

    def __repr__(self) -> str:
        return "Traced(%s: %d inputs, %d outputs)" % (self.fn_name, len(self.input_names), self.n_outputs)


def _signature_of(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


class _Call:
    """One call's arguments, split into leaves: arrays (traced) and statics."""

    def __init__(self, jf: "Jitted", args: tuple, kwargs: dict):
        sig = jf._sig
        if sig is not None:
            ba = sig.bind(*args, **kwargs)
            self.arguments = dict(ba.arguments)
            kinds = {p.name: p.kind for p in sig.parameters.values()}
        else:
            self.arguments = {i: a for i, a in enumerate(args)}
            self.arguments.update(kwargs)
            kinds = {}
        self.kinds = kinds
        statics, dyn = {}, {}
        for name, value in self.arguments.items():
            if name in jf._static:
                statics[name] = value
            else:
                dyn[name] = value
        # each argument flattened on its own, in the signature's order
        self.statics, self.names, trees, leaves, self.paths = statics, list(dyn), [], [], []
        for name in self.names:
            lv, t, p = _tree.flatten(dyn[name], str(name))
            leaves += lv
            self.paths += p
            trees.append(t)
        self.tree = tuple(zip(map(str, self.names), trees))
        self.leaves, self.arrays, self.sig = [], [], []
        for leaf, path in zip(leaves, self.paths):
            if _is_array(leaf):
                a = _as_feedable(leaf)
                self.arrays.append(a)
                self.leaves.append(None)
                self.sig.append((_dtype_name(a), jf._dims(path, tuple(a.shape))))
            else:
                self.leaves.append(leaf)
                self.sig.append(("static", type(leaf), leaf))
        try:
            self.key = (self.tree, tuple(self.sig), tuple(sorted((str(k), type(v), v) for k, v in statics.items())))
            hash(self.key)
        except TypeError:
            raise TypeError("tessera.jit: static arguments (non-arrays, and static_argnums/static_argnames) must "
                            "be hashable: they are part of the cache key") from None

    def rebuild(self, leaves: List[Any]):
        """(args, kwargs) for the function with these leaves."""
        arguments, k = dict(self.statics), 0
        for name, (_, t) in zip(self.names, self.tree):
            n = _tree.num_leaves(t)
            arguments[name] = _tree.unflatten(t, leaves[k:k + n])
            k += n
        args, kwargs = [], {}
        for name in self.arguments:
            v = arguments[name]
            kind = self.kinds.get(name)
            if kind == inspect.Parameter.VAR_POSITIONAL:
                args.extend(v)
            elif kind == inspect.Parameter.VAR_KEYWORD:
                kwargs.update(v)
            elif kind == inspect.Parameter.KEYWORD_ONLY or (kind is None and not isinstance(name, int)):
                kwargs[name] = v
            else:
                args.append(v)
        return args, kwargs


def _output_value(root: Frame, leaf: Any):
    if isinstance(leaf, Tracer):
        return root.value(leaf)
    if _is_array(leaf) or isinstance(leaf, (bool, int, float)):
        return root.const(np.asarray(_as_feedable(leaf)))
    raise TypeError("tessera.jit: the function returned a %s; results are arrays (or tuples, lists and dicts "
                    "of them)" % type(leaf).__name__)


def _trace_call(fn: Callable, call: _Call, name: str) -> Traced:
    g = _tessera.Graph(_ident(name) or "main")
    root = Frame(g)
    names, types, used = [], [], set()
    with root:
        leaves = list(call.leaves)
        for i, path in enumerate(call.paths):
            if call.sig[i][0] == "static":
                continue
            dt, dims = call.sig[i]
            nm = _ident(path)
            while nm in used:
                nm += "_"
            used.add(nm)
            v = g.input(nm, dt, list(dims))
            names.append(nm)
            types.append(v.type)
            leaves[i] = root.wrap(v)
        args, kwargs = call.rebuild(leaves)
        out = fn(*args, **kwargs)
        out_leaves, out_tree, _ = _tree.flatten(out)
        values = [_output_value(root, x) for x in out_leaves]
        g.output(*values)
    return Traced(g, call.tree, call.leaves, names, types, out_tree, len(values), name)


# ---- jit -----------------------------------------------------------------------------------------


class Jitted:
    """A function compiled by tessera.jit: call it as the function. It keeps
    one (Traced, Session) per signature; `traces` counts the traces made
    and `compiles` the sessions built."""

    def __init__(self, fn: Callable, static_argnums=(), static_argnames=(), dynamic=None, target=None,
                 threads=None, cache_dir=None, exact=False):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self._sig = _signature_of(fn)
        nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        self._static = set(names)
        params = list(self._sig.parameters.values()) if self._sig else []
        for i in nums:
            pos = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            if self._sig is None:
                self._static.add(i)
            elif i < len(pos):
                self._static.add(pos[i].name)
            else:
                raise ValueError("tessera.jit: static_argnums %d is not a named positional parameter of %s"
                                 % (i, getattr(fn, "__name__", fn)))
        if self._sig is not None and dynamic:
            pos = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            dynamic = {(pos[k] if isinstance(k, int) and k < len(pos) else k): v for k, v in dynamic.items()}
            unknown = [k for k in dynamic if k not in self._sig.parameters]
            if unknown:
                raise ValueError("tessera.jit: dynamic names %s, which %s does not take"
                                 % (", ".join(map(repr, unknown)), getattr(fn, "__name__", "the function")))
        self._spec = _spec_table(dynamic)
        self._session_args = dict(target=target, threads=threads, cache_dir=cache_dir, exact=exact)
        self._cache: Dict[Any, Any] = {}
        self._lock = threading.Lock()
        self.traces = 0
        self.compiles = 0

    def _dims(self, path: str, shape: tuple) -> tuple:
        """The input's dims: sizes, or the symbol names its spec gives."""
        arg = path.split(".", 1)[0]
        spec = self._spec.get(arg)
        if spec is None and arg.isdigit():
            spec = self._spec.get(int(arg))
        if isinstance(spec, dict):
            spec = spec.get(path)
        if not spec:
            return shape
        if len(spec) > len(shape):
            raise ValueError("tessera.jit: dynamic spec of %r names %d axes, but the array has rank %d"
                             % (path, len(spec), len(shape)))
        return tuple(s if s else d for s, d in zip(spec + [None] * len(shape), shape))

    def _entry(self, call: _Call):
        hit = self._cache.get(call.key)
        if hit is not None:
            return hit
        with self._lock:
            hit = self._cache.get(call.key)
            if hit is None:
                traced = _trace_call(self.fn, call, getattr(self.fn, "__name__", "main"))
                self.traces += 1
                sess = None
                if traced.n_outputs:
                    from . import Session
                    sess = Session(traced.graph, **self._session_args)
                    self.compiles += 1
                hit = self._cache[call.key] = (traced, sess)
        return hit

    def __call__(self, *args, **kwargs):
        if current() is not None:   # inside another trace: inline
            return self.fn(*args, **kwargs)
        call = _Call(self, args, kwargs)
        traced, sess = self._entry(call)
        outs = sess.run(None, dict(zip(traced.input_names, call.arrays))) if sess is not None else []
        return traced.unflatten_outputs(outs)

    def __get__(self, obj, objtype=None):
        """As a method: self (the instance) becomes a static argument."""
        return self if obj is None else functools.partial(self, obj)

    def trace(self, *args, **kwargs) -> Traced:
        """The Traced graph for these arguments' signature (cached)."""
        return self._entry(_Call(self, args, kwargs))[0]

    def session(self, *args, **kwargs):
        """The compiled tessera.Session for these arguments' signature."""
        return self._entry(_Call(self, args, kwargs))[1]

    @property
    def cache_size(self) -> int:
        """The number of signatures compiled so far."""
        return len(self._cache)


def jit(fn: Optional[Callable] = None, *, static_argnums: Union[int, Sequence[int]] = (),
        static_argnames: Union[str, Sequence[str]] = (), dynamic: Optional[Dict[Any, Any]] = None,
        target: Optional[str] = None, threads: Optional[int] = None, cache_dir: Optional[str] = None,
        exact: bool = False):
    """Compile fn with tessera: @tessera.jit or @tessera.jit(options).

    Arguments that are arrays (numpy arrays and scalars, tessera.Tensor,
    torch tensors), also inside tuples, lists and dicts, are traced: the
    function runs once per signature (dtype and shape of each) on Tracers,
    and the graph it builds is compiled into a tessera.Session (target
    "cpu" by default, "opencl", "cuda" or "interp"; threads, cache_dir, exact as Session's).
    Every other argument (Python numbers, strings, ...) and those named by
    static_argnums / static_argnames is static: passed as it is, and part of
    the cache key (so it must be hashable).

    dynamic: {argument name or position: spec}; a spec "batch, _" makes
    axis 0 a symbolic dim named batch (arguments sharing a name share the
    size), [0, 1] makes axes 0 and 1 symbolic (named <arg>_0, <arg>_1); for
    an argument that is a pytree, a spec applies to each array in it, or a
    dict/list of specs matches its structure. A new size on a dynamic axis
    reuses the compiled graph: no trace, no compile.

    Results are numpy arrays, in the structure the function returned."""
    opts = dict(static_argnums=static_argnums, static_argnames=static_argnames, dynamic=dynamic, target=target,
                threads=threads, cache_dir=cache_dir, exact=exact)
    if fn is None:
        return lambda f: Jitted(f, **opts)
    return Jitted(fn, **opts)


def trace(fn: Callable, *args, **kwargs) -> Traced:
    """Trace fn on these arguments (arrays are traced at their exact shapes,
    everything else is static) and return the Traced graph, uncompiled.
    For dynamic dims or static_argnums, use tessera.jit(fn, ...).trace(...)."""
    return Jitted(fn).trace(*args, **kwargs)


def eval_shape(fn: Callable, *args, **kwargs) -> Any:
    """The result types of fn on these arguments, as the IR spells them
    ("f32[3, 4]"), in the structure fn returns; nothing is compiled."""
    t = trace(fn, *args, **kwargs)
    return t.unflatten_outputs([v.type for v in t.graph.outputs])


__all__ = ["jit", "trace", "eval_shape", "Jitted", "Traced", "TracerError"]
