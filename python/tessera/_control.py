"""Structured control flow that stays in the graph: tessera.cond,
while_loop, fori_loop and scan (jax.lax's semantics), built as the IR's
`if` and `while` nodes.

A region sees only its parameters (D6). A region function may still use
traced values of the enclosing function (a closure): each region function
is traced twice, first into a scratch graph to find the outer values it
uses (Frame discover mode), then into the real region, where those values
arrive as extra operands of the node (for `while`, extra state that the
body passes through unchanged). So region functions must be free of side
effects that matter.

Outside a trace these are plain Python: cond calls one branch, while_loop
and scan loop in Python."""
from typing import Any, Callable, List

import numpy as np

from . import _tessera
from . import _tree
from ._np_core import _dim_value, _lift, _op
from ._trace import Dim, Frame, Tracer, attr_dims, current, dim, enter_trace_error, ts_dtype


def _leaf_info(frame: Frame, leaf: Any):
    """(dtype, shape, weak) of a region result seen in its scratch trace;
    weak: a Python number, which takes the type the other side needs."""
    if isinstance(leaf, Tracer):
        v = frame.value(leaf)
        return v.dtype, tuple(v.shape), False
    if isinstance(leaf, (bool, int, float)):
        return ts_dtype(np.asarray(leaf).dtype), (), True
    a = np.asarray(leaf)
    if a.dtype == object:
        raise TypeError("a region returned a %s; results are arrays (or pytrees of them)" % type(leaf).__name__)
    return ts_dtype(a.dtype), a.shape, False


def _discover(parent: Frame, fn: Callable, types: List[str], aliases=()):
    """Trace fn (params -> (leaves, aux)) on fresh values of types into a
    scratch graph: the outer Tracers it captures, its results' infos, aux.
    aliases: outer Tracers that param k stands for, used directly (cond's
    operands: not captured twice)."""
    scratch = _tessera.Graph("region")
    frame = Frame(scratch, parent, discover=True)
    with frame:
        params = [frame.wrap(scratch.input(None, t)) for t in types]
        for t, p in zip(aliases, params):
            frame.captures[id(t)] = (t, p._v)
        leaves, aux = fn(params)
        infos = [_leaf_info(frame, x) for x in leaves]
    return frame.captured, infos, aux


def _fit(frame: Frame, leaf: Any, target) -> Any:
    """A region result as a Value of the target (dtype, shape)."""
    dt, shape = target
    v = _lift(frame, leaf, dt)
    if tuple(v.shape) != tuple(shape) and v.ndim == 0:
        v = _op(frame, "broadcast", v, shape=list(shape), axes=[])
    return v


def _region(parent: Frame, fn: Callable, n: int, caps: List[Tracer], targets, passthrough: bool, aliases=()):
    """The callable Graph.op runs to build one region: params n explicit
    values, then one per capture; yields the results fit to targets (and,
    for a loop body, the captures unchanged)."""
    def build(*vals):
        frame = Frame(parent.graph, parent)
        for c, v in list(zip(caps, vals[n:])) + list(zip(aliases, vals)):
            frame.captures[id(c)] = (c, v)
        with frame:
            leaves, _ = fn([frame.wrap(v) for v in vals[:n]])
            if len(leaves) != len(targets):
                raise TypeError("a region function returned %d values on its second trace and %d on its first: "
                                "region functions are traced twice and must do the same both times"
                                % (len(leaves), len(targets)))
            out = [_fit(frame, x, t) for x, t in zip(leaves, targets)]
        return tuple(out) + (tuple(vals[n:]) if passthrough else ())
    return build


def _union(*lists: List[Tracer]) -> List[Tracer]:
    seen, out = set(), []
    for lst in lists:
        for t in lst:
            if id(t) not in seen:
                seen.add(id(t))
                out.append(t)
    return out


def _as_list(res: Any) -> list:
    return [] if res is None else list(res) if isinstance(res, tuple) else [res]


def _type_text(info) -> str:
    return "%s[%s]" % (info[0], ", ".join(str(d) for d in info[1]))


# ---- cond ----------------------------------------------------------------------------------------


def _join(k: int, a, b):
    """The type both branches' result k take (a weak Python number yields)."""
    if a[2] and not b[2]:
        return b[0], b[1]
    if b[2] and not a[2]:
        return a[0], a[1]
    if a[:2] == b[:2]:
        return a[0], a[1]
    if a[2] and b[2]:
        return ts_dtype(np.result_type(np.dtype(a[0] if a[0] != "bool" else bool), b[0])), ()
    raise TypeError("cond: result %d is %s in true_fun and %s in false_fun: both branches must return the same "
                    "types (use astype)" % (k, _type_text(a), _type_text(b)))


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """true_fun(*operands) if pred else false_fun(*operands), as an `if`
    node when pred is traced (a scalar; non-bool is compared with 0). Both
    branches must return the same structure and types (Python numbers
    adapt). With a concrete pred, Python picks the branch."""
    if not isinstance(pred, Tracer):
        return true_fun(*operands) if pred else false_fun(*operands)
    parent = current() or enter_trace_error()
    if pred.ndim != 0:
        raise TypeError("cond: the predicate must be a scalar, not of shape %s" % (pred.shape,))
    leaves, tree, _ = _tree.flatten(operands)
    dyn = [i for i, x in enumerate(leaves) if isinstance(x, Tracer)]
    types = [leaves[i]._v.type for i in dyn]

    def branch(fn):
        def run(params):
            ls = list(leaves)
            for i, p in zip(dyn, params):
                ls[i] = p
            out_leaves, out_tree, _ = _tree.flatten(fn(*_tree.unflatten(tree, ls)))
            return out_leaves, out_tree
        return run
    runs = [branch(true_fun), branch(false_fun)]
    outer = [leaves[i] for i in dyn]
    (ct, it, tt), (cf, jf, tf) = [_discover(parent, r, types, outer) for r in runs]
    if tt != tf:
        raise TypeError("cond: true_fun returns %s and false_fun %s: the structures must match"
                        % (_tree.describe(tt), _tree.describe(tf)))
    targets = [_join(k, a, b) for k, (a, b) in enumerate(zip(it, jf))]
    caps = _union(ct, cf)
    ops = [parent.value(leaves[i]) for i in dyn] + [parent.value(c) for c in caps]
    res = parent.graph.op("if", _lift(parent, pred, "bool"), *ops,
                          regions=[_region(parent, r, len(dyn), caps, targets, False, outer) for r in runs])
    return _tree.unflatten(tt, [parent.wrap(v) for v in _as_list(res)])


# ---- loops ---------------------------------------------------------------------------------------


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """val = init_val; while cond_fun(val): val = body_fun(val); return val
    -- as a `while` node inside a trace. body_fun must return the structure
    and types of init_val (Python numbers in init_val become int64/float64
    /bool arrays, numpy's defaults; Python numbers body_fun returns take
    the state's type)."""
    parent = current()
    if parent is None:
        val = init_val
        while cond_fun(val):
            val = body_fun(val)
        return val
    leaves, tree, _ = _tree.flatten(init_val)
    state = [x if isinstance(x, Tracer) else parent.wrap(_lift(parent, x)) for x in leaves]
    types = [s._v.type for s in state]
    n = len(state)

    def run_cond(params):
        return [cond_fun(_tree.unflatten(tree, params))], None

    def run_body(params):
        out_leaves, out_tree, _ = _tree.flatten(body_fun(_tree.unflatten(tree, params)))
        return out_leaves, out_tree
    cc, ci, _ = _discover(parent, run_cond, types)
    if ci[0][1] != ():
        raise TypeError("while_loop: cond_fun must return a scalar, not %s" % _type_text(ci[0]))
    cb, bi, bt = _discover(parent, run_body, types)
    if bt != tree:
        raise TypeError("while_loop: body_fun returns %s but the state is %s: the structures must match"
                        % (_tree.describe(bt), _tree.describe(tree)))
    targets = [(s._v.dtype, tuple(s._v.shape)) for s in state]
    for k, (info, want) in enumerate(zip(bi, targets)):
        if not info[2] and info[:2] != want:
            raise TypeError("while_loop: body_fun's result %d is %s but the state's is %s: the state's types "
                            "must not change (use astype)" % (k, _type_text(info), _type_text(want)))
    caps = _union(cc, cb)
    ops = [parent.value(s) for s in state] + [parent.value(c) for c in caps]
    res = parent.graph.op("while", *ops, regions=(
        _region(parent, run_cond, n, caps, [("bool", ())], False),
        _region(parent, run_body, n, caps, targets, True)))
    return _tree.unflatten(tree, [parent.wrap(v) for v in _as_list(res)[:n]])


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any) -> Any:
    """for i in range(lower, upper): val = body_fun(i, val) -- a `while`
    node inside a trace (i is an int64 scalar; upper may be traced)."""
    if current() is None:
        val = init_val
        for i in range(int(lower), int(upper)):
            val = body_fun(i, val)
        return val
    f = current()
    i0 = lower if isinstance(lower, Tracer) else f.wrap(_lift(f, lower, "i64"))
    _, val = while_loop(lambda s: s[0] < upper, lambda s: (s[0] + 1, body_fun(s[0], s[1])), (i0, init_val))
    return val


def _scan_eager(f: Callable, init: Any, xs: Any, length, reverse: bool):
    x_leaves, x_tree, _ = _tree.flatten(xs)
    n = length if length is not None else len(x_leaves[0])
    carry, ys = init, []
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        carry, y = f(carry, _tree.unflatten(x_tree, [x[i] for x in x_leaves]))
        ys.append(_tree.flatten(y))
    if reverse:
        ys.reverse()
    if not ys:
        return carry, None
    cols = list(zip(*[y[0] for y in ys]))
    return carry, _tree.unflatten(ys[0][1], [np.stack([np.asarray(c) for c in col]) for col in cols])


def _n_value(n):
    """The trip count as something `<` takes in the current frame."""
    if isinstance(n, int):
        return n
    f = current()
    return f.wrap(_dim_value(f, n, "i64"))


def _update_row(buf: Tracer, y: Any, idx: Tracer) -> Tracer:
    """buf with row idx (axis 0) replaced by y."""
    f = current()
    v = f.value(buf)
    rest = list(v.shape[1:])
    u = _op(f, "reshape", _fit(f, y, (v.dtype, tuple(rest))), shape=[1] + rest)
    start = _op(f, "reshape", f.value(idx), shape=[1])
    if rest:
        start = _op(f, "concat", start, _lift(f, np.zeros(len(rest), np.int64)), axis=0)
    return f.wrap(_op(f, "dynamic_update_slice", v, u, start))


def scan(f: Callable, init: Any, xs: Any = None, length: Any = None, reverse: bool = False) -> Any:
    """jax.lax.scan: carry = init; for each x along axis 0 of xs:
    carry, y = f(carry, x); returns (carry, ys stacked along axis 0). A
    `while` node over dynamic_slice / dynamic_update_slice inside a trace
    (the length may be a dynamic dim); a Python loop outside."""
    parent = current()
    if parent is None:
        return _scan_eager(f, init, xs, length, reverse)
    x_leaves, x_tree, _ = _tree.flatten(xs)
    x_tr = [x if isinstance(x, Tracer) else parent.wrap(_lift(parent, x)) for x in x_leaves]
    if any(x.ndim == 0 for x in x_tr):
        raise TypeError("scan: every leaf of xs needs an axis 0 to scan over")
    n = length if length is not None else x_tr[0].shape[0] if x_tr else None
    if n is None:
        raise TypeError("scan: give xs or length")
    n = n if isinstance(n, (int, Dim)) else int(n)
    for x in x_tr:
        if x.shape[0] != n:
            raise ValueError("scan: xs leaves have %s and %s rows: they must agree" % (x.shape[0], n))
    c_leaves, c_tree, _ = _tree.flatten(init)
    carry = [c if isinstance(c, Tracer) else parent.wrap(_lift(parent, c)) for c in c_leaves]

    def probe(params):
        out = f(_tree.unflatten(c_tree, params[:len(carry)]), _tree.unflatten(x_tree, params[len(carry):]))
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError("scan: f must return a pair (carry, y)")
        cl, ct, _ = _tree.flatten(out[0])
        yl, yt, _ = _tree.flatten(out[1])
        return cl + yl, (ct, yt, len(cl))
    slices = ["%s[%s]" % (x._v.dtype, ", ".join(str(d) for d in x._v.shape[1:])) for x in x_tr]
    _, infos, (ct, yt, ncl) = _discover(parent, probe, [c._v.type for c in carry] + slices)
    if ct != c_tree:
        raise TypeError("scan: f returns a carry %s for a carry %s: the structures must match"
                        % (_tree.describe(ct), _tree.describe(c_tree)))
    ys0 = [parent.wrap(_op(parent, "broadcast", _lift(parent, 0, dt), shape=attr_dims([n] + [dim(d) for d in sh]),
                           axes=[])) for dt, sh, _ in infos[ncl:]]

    def body(state):
        i, c, ys = state
        idx = (_n_value(n) - 1 - i) if reverse else i
        c2, y = f(c, _tree.unflatten(x_tree, [x[idx] for x in x_tr]))
        y_leaves = _tree.flatten(y)[0]
        return i + 1, c2, [_update_row(b, yl, idx) for b, yl in zip(ys, y_leaves)]
    i0 = parent.wrap(_lift(parent, 0, "i64"))
    _, c_final, ys = while_loop(lambda s: s[0] < _n_value(n), body, (i0, _tree.unflatten(c_tree, carry), ys0))
    return c_final, _tree.unflatten(yt, ys)
