"""tessera.jit: tracing, the cache (one trace and one compile per
signature; dynamic dims reuse both), pytrees and static arguments, the
control flow primitives against plain Python loops, and the error that
names the line where Python control flow met a traced value."""
import collections
import inspect

import numpy as np
import pytest

import tessera
import tessera.numpy as tnp

F32 = np.float32


def rand(*shape, seed=0, dtype=F32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def here():
    """The line number of the caller's line."""
    return inspect.currentframe().f_back.f_lineno


# ---- the cache ------------------------------------------------------------------------------------


def test_one_trace_per_signature(cache_dir):
    calls = []

    @tessera.jit(cache_dir=cache_dir)
    def f(x, w):
        calls.append(1)
        return tnp.tanh(x @ w) + 1.0

    x, w = rand(2, 3), rand(3, 4, seed=1)
    for _ in range(3):
        np.testing.assert_allclose(f(x, w), np.tanh(x @ w) + 1, rtol=1e-5)
    assert (len(calls), f.traces, f.compiles, f.cache_size) == (1, 1, 1, 1)
    f(rand(5, 3), w)                            # a new static size: a new signature
    f(x.astype(np.float64), w)                  # a new dtype: one more
    assert (len(calls), f.traces, f.compiles) == (3, 3, 3)
    assert isinstance(f(x, w), np.ndarray) and f(x, w).dtype == F32


@pytest.mark.parametrize("dynamic", [{"x": "batch, _"}, {"x": [0]}, {0: "batch"}])
def test_dynamic_dim_neither_retraces_nor_compiles(dynamic, cache_dir):
    @tessera.jit(dynamic=dynamic, cache_dir=cache_dir)
    def f(x, w):
        return (x @ w).sum(axis=1) * 2.0

    w = rand(3, 4, seed=1)
    sess = f.session(rand(2, 3), w)
    name = "x_0" if dynamic == {"x": [0]} else "batch"
    assert f.trace(rand(2, 3), w).input_types == ["f32[%s, 3]" % name, "f32[3, 4]"]
    info = dict(sess.compile_info)
    for rows in (1, 2, 7, 64):
        x = rand(rows, 3, seed=rows)
        np.testing.assert_allclose(f(x, w), (x @ w).sum(axis=1) * 2, rtol=1e-5)
        assert f.session(x, w) is sess
    assert (f.traces, f.compiles, f.cache_size) == (1, 1, 1)
    assert sess.compile_info == info            # the session compiled once, at the first call
    with pytest.raises(tessera.InvalidArgument):
        f(rand(2, 4), w)                        # the static dim still must match


def test_shared_dim_names():
    @tessera.jit(dynamic={"x": "n", "y": "n"}, target="interp")
    def f(x, y):
        return x * y + x[::-1]

    for n in (3, 5):
        x, y = rand(n), rand(n, seed=1)
        np.testing.assert_allclose(f(x, y), x * y + x[::-1], rtol=1e-6)
    assert f.traces == 1
    with pytest.raises(tessera.InvalidArgument):
        f(rand(3), rand(4))


def test_dynamic_spec_errors():
    with pytest.raises(ValueError, match="does not take"):
        tessera.jit(lambda x: x, dynamic={"y": "n"})
    with pytest.raises(ValueError, match="rank 1"):
        tessera.jit(lambda x: x, dynamic={"x": "n, m"})(rand(3))
    with pytest.raises(ValueError, match="dim name"):
        tessera.jit(lambda x: x, dynamic={"x": "2n"})(rand(3))


# ---- arguments and results --------------------------------------------------------------------------


def test_pytrees_in_and_out():
    Pair = collections.namedtuple("Pair", "a b")

    @tessera.jit(dynamic={"xs": ["n, _", "m"]}, target="interp")
    def f(params, xs, pair, scale=1.0):
        h = xs[0] @ params["w"] + params["b"]
        return {"h": h * scale, "rest": [xs[1] * 2, None], "pair": Pair(pair.b, pair.a + 1)}

    params = {"w": rand(3, 2), "b": rand(2, seed=1)}
    xs = (rand(4, 3, seed=2), rand(5, seed=3))
    pair = Pair(rand(2, seed=4), rand(1, seed=5))
    out = f(params, xs, pair, scale=3.0)
    assert set(out) == {"h", "rest", "pair"} and isinstance(out["pair"], Pair) and out["rest"][1] is None
    np.testing.assert_allclose(out["h"], (xs[0] @ params["w"] + params["b"]) * 3, rtol=1e-5)
    np.testing.assert_allclose(out["rest"][0], xs[1] * 2)
    np.testing.assert_array_equal(out["pair"].a, pair.b)
    np.testing.assert_allclose(out["pair"].b, pair.a + 1)
    t = f.trace(params, xs, pair, scale=3.0)
    assert t.input_names == ["params_b", "params_w", "xs_0", "xs_1", "pair_0", "pair_1"]
    assert t.n_outputs == 4 and len(t.graph.outputs) == 4
    assert t.input_types == ["f32[2]", "f32[3, 2]", "f32[n, 3]", "f32[m]", "f32[2]", "f32[1]"]
    out = f(params, (rand(7, 3), rand(2)), pair, scale=3.0)      # new n and m: the same graph
    assert out["h"].shape == (7, 2) and out["rest"][0].shape == (2,) and f.traces == 1
    assert t.unflatten_outputs(["h", "p0", "p1", "r"]) == {"h": "h", "pair": Pair("p0", "p1"), "rest": ["r", None]}


def test_static_arguments():
    traced = []

    @tessera.jit(static_argnums=1, target="interp")
    def f(x, mode, k=2):
        traced.append((mode, k))
        return x * k if mode == "scale" else x + k

    x = rand(3)
    np.testing.assert_allclose(f(x, "scale"), x * 2)
    np.testing.assert_allclose(f(x, "shift"), x + 2)
    np.testing.assert_allclose(f(x, "shift", k=5), x + 5)   # a Python number is static too
    f(x, "shift", k=5)
    assert traced == [("scale", 2), ("shift", 2), ("shift", 5)]

    @tessera.jit(static_argnames="shape", target="interp")
    def g(x, shape):
        return x.reshape(shape)

    assert g(rand(6), shape=(2, 3)).shape == (2, 3) and g(rand(6), shape=(3, 2)).shape == (3, 2)
    with pytest.raises(TypeError, match="hashable"):
        g(rand(6), shape=[2, 3])


def test_results_of_every_kind():
    f = tessera.jit(lambda x: (x, 2.5, np.arange(3), x.sum() > 0), target="interp")
    x = rand(3)
    a, b, c, d = f(x)
    np.testing.assert_array_equal(a, x)
    assert b == 2.5 and b.dtype == np.float64 and list(c) == [0, 1, 2] and d == (x.sum() > 0)
    assert d.dtype == np.bool_
    with pytest.raises(TypeError, match="returned a str"):
        tessera.jit(lambda x: "no")(x)


def test_tensors_and_numpy_scalars_are_arrays():
    f = tessera.jit(lambda x, y: x * y, target="interp")
    out = f(tessera.Tensor(rand(3)), np.float32(2))
    np.testing.assert_allclose(out, rand(3) * 2)
    assert f.trace(tessera.Tensor(rand(3)), np.float32(2)).input_types == ["f32[3]", "f32[]"]


def test_nested_jit_is_inlined_and_trace_api():
    inner = tessera.jit(lambda x: tnp.exp(x) * 2)
    outer = tessera.jit(lambda x: inner(x) + 1, target="interp")
    x = rand(4)
    np.testing.assert_allclose(outer(x), np.exp(x) * 2 + 1, rtol=1e-6)
    assert inner.traces == 0
    t = tessera.trace(lambda x, y: (x + y, x * y), rand(2), rand(2))
    assert isinstance(t, tessera.Traced) and isinstance(t.graph, tessera.Graph)
    text = str(t.graph)
    assert "add(%x, %y)" in text and "mul(%x, %y)" in text and t.input_names == ["x", "y"]
    assert tessera.eval_shape(lambda x: {"s": x.sum(0), "t": x.T}, rand(2, 3)) == {"s": "f32[3]", "t": "f32[3, 2]"}


def test_threads_and_targets(cache_dir):
    for target in ("cpu", "interp"):
        f = tessera.jit(lambda x: tnp.sqrt(x * x + 1.0), target=target, threads=2, cache_dir=cache_dir)
        x = rand(100)
        np.testing.assert_allclose(f(x), np.sqrt(x * x + 1), rtol=1e-5)
        assert f.session(x).target == target


# ---- control flow -------------------------------------------------------------------------------------


def test_cond_against_python():
    @tessera.jit(target="interp")
    def f(x, y):
        return tessera.cond(x.sum() > y.sum(), lambda a, b: (a * 2, b - a),
                            lambda a, b: (a - 1, b * 0.5 + y[0]), x, y)

    for seed in range(4):
        x, y = rand(3, seed=seed), rand(3, seed=seed + 10)
        want = (x * 2, y - x) if x.sum() > y.sum() else (x - 1, y * 0.5 + y[0])
        for g, w in zip(f(x, y), want):
            np.testing.assert_allclose(g, w, rtol=1e-6)
    text = str(f.trace(x, y).graph)
    assert " = if(" in text and "then(" in text and "else(" in text
    # a concrete predicate is Python's
    assert tessera.cond(True, lambda: 1, lambda: 2) == 1


def test_cond_python_numbers_adapt_and_mismatch_is_named():
    f = tessera.jit(lambda x: tessera.cond(x[0] > 0, lambda: x * 2, lambda: 0.0), target="interp")
    np.testing.assert_array_equal(f(np.array([1, 2], F32)), [2, 4])
    np.testing.assert_array_equal(f(np.array([-1, 2], F32)), [0, 0])
    assert f(np.array([-1, 2], F32)).dtype == F32
    with pytest.raises(TypeError, match=r"result 0 is f32\[2\] in true_fun and f64\[2\] in false_fun"):
        tessera.trace(lambda x: tessera.cond(x[0] > 0, lambda: x, lambda: x.astype(np.float64)), rand(2))
    with pytest.raises(TypeError, match="structures must match"):
        tessera.trace(lambda x: tessera.cond(x[0] > 0, lambda: (x, x), lambda: x), rand(2))


def test_while_loop_against_python():
    @tessera.jit(target="interp")
    def f(x, n):
        return tessera.while_loop(lambda s: (s[0] < n) & (s[1].sum() < 100.0),
                                  lambda s: (s[0] + 1, s[1] * 1.5 + x), (0, x))

    def py(x, n):
        i, v = 0, x
        while i < n and v.sum() < 100:
            i, v = i + 1, (v * 1.5 + x).astype(F32)
        return i, v

    for n in (0, 1, 3, 50):
        x = np.abs(rand(4, seed=n)) + 0.1
        (i, v), (pi, pv) = f(x, np.int64(n)), py(x, n)
        assert i == pi and i.dtype == np.int64
        np.testing.assert_allclose(v, pv, rtol=1e-5)
    assert f.traces == 1
    assert tessera.while_loop(lambda v: v < 10, lambda v: v * 2, 1) == 16    # eager: Python's loop


def test_while_loop_state_type_must_not_change():
    with pytest.raises(TypeError, match=r"body_fun's result 0 is f64\[\] but the state's is f32\[\]"):
        tessera.trace(lambda x: tessera.while_loop(lambda v: v < 3, lambda v: v + np.float64(1), x), np.float32(0))
    with pytest.raises(TypeError, match="scalar"):
        tessera.trace(lambda x: tessera.while_loop(lambda v: v < 3, lambda v: v, x), rand(2))


def test_closures_are_captured_at_every_depth():
    """Regions use outer traced values (x from two levels up) without
    passing them: they become operands of the nodes."""
    @tessera.jit(target="interp")
    def f(x, k):
        def body(s):
            i, acc = s
            step = tessera.cond(i % 2 == 0, lambda: acc + x * k, lambda: acc - x)
            return i + 1, step
        return tessera.while_loop(lambda s: s[0] < 5, body, (0, tnp.zeros_like(x)))[1]

    x, k = rand(3), np.float32(3)
    acc = np.zeros(3, F32)
    for i in range(5):
        acc = acc + x * k if i % 2 == 0 else acc - x
    np.testing.assert_allclose(f(x, k), acc, rtol=1e-5)
    assert str(f.trace(x, k).graph).count("while(") == 1


def test_fori_loop_and_scan_against_python():
    @tessera.jit(dynamic={"xs": "t"}, target="interp")
    def f(h, xs, w):
        def cell(h, x):
            h = tnp.tanh(x @ w + h)
            return h, h.sum()
        h_end, sums = tessera.scan(cell, h, xs)
        back, rev = tessera.scan(lambda c, x: (c + x, c), tnp.zeros_like(h), xs[:, 0, :], reverse=True)
        powers = tessera.fori_loop(0, 4, lambda i, v: v * 2.0 + i.astype(F32), h)
        return h_end, sums, back, rev, powers

    def py(h, xs, w):
        sums = []
        h0 = h
        for x in xs:
            h = np.tanh(x @ w + h)
            sums.append(h.sum())
        c, rev = np.zeros_like(h0), []
        for x in xs[::-1, 0, :]:
            rev.append(c)
            c = c + x
        p = h0
        for i in range(4):
            p = p * 2 + i
        return h, np.array(sums, F32), c, np.stack(rev[::-1]), p

    w = rand(3, 3, seed=1) * 0.5
    h = rand(1, 3, seed=2)
    for t in (1, 4, 9):
        xs = rand(t, 1, 3, seed=t)
        for g, want in zip(f(h, xs, w), py(h, xs, w)):
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)
    assert f.traces == 1


def test_eager_scan_is_python():
    c, ys = tessera.scan(lambda c, x: (c + x, c * x), 1.0, np.arange(4.0))
    assert c == 7.0 and list(ys) == [0.0, 1.0, 4.0, 12.0]


# ---- the control-flow error -----------------------------------------------------------------------


def _branchy(x):
    if x.sum() > 0:
        return x
    return -x


def _loopy(x):
    while x.max() < 3:
        x = x * 2
    return x


@pytest.mark.parametrize("fn, marker, words", [
    (_branchy, "if x.sum()", "truth value"),
    (_loopy, "while x.max()", "truth value"),
    (lambda x: bool(x[0]), "bool(x[0])", "truth value"),
    (lambda x: x * int(x[0]), "int(x[0])", "int()"),
    (lambda x: x * float(x.sum()), "float(x.sum())", "float()"),
    (lambda x: np.asarray(x), "np.asarray(x)", "np.asarray"),
], ids=["if", "while", "bool", "int", "float", "asarray"])
def test_control_flow_error_names_the_line(fn, marker, words):
    src, first = inspect.getsourcelines(fn)
    line = first + next(i for i, t in enumerate(src) if marker in t)
    with pytest.raises(tessera.TracerError) as e:
        tessera.jit(fn)(rand(3))
    msg = str(e.value)
    assert "%s:%d" % (__file__, line) in msg and words in msg
    assert "tessera.cond" in msg and "tessera.while_loop" in msg
    assert isinstance(e.value, tessera.Error) and isinstance(e.value, TypeError)


def test_iterating_a_dynamic_axis_is_an_error_and_a_static_one_is_not():
    f = tessera.jit(lambda x: sum(r * i for i, r in enumerate(x)), target="interp")
    x = rand(3, 2)
    np.testing.assert_allclose(f(x), x[1] + 2 * x[2], rtol=1e-6)
    line = here() + 2
    with pytest.raises(tessera.TracerError, match="iteration over an axis of dynamic size") as e:
        tessera.jit(lambda x: [r for r in x], dynamic={"x": "n"})(x)
    assert "%s:%d" % (__file__, line) in str(e.value)
    with pytest.raises(tessera.TracerError, match="dynamic size n"):
        tessera.jit(lambda x: tnp.zeros(int(x.shape[0])), dynamic={"x": "n"})(x)


def test_escaped_tracer_is_an_error():
    kept = []
    tessera.trace(lambda x: kept.append(x) or x, rand(2))
    with pytest.raises(tessera.TracerError, match="escaped"):
        tessera.trace(lambda y: y + kept[0], rand(2))
