"""tessera.numpy against numpy: one table of cases, each a function written
once over a module `m` (numpy, or tessera.numpy inside tessera.jit), run on
random inputs both ways; dtypes must be equal and values close. A coverage
test fails when a public function of tessera.numpy has no case."""
import numpy as np
import pytest

import tessera
import tessera.numpy as tnp

F32, F64, I32, I64 = np.float32, np.float64, np.int32, np.int64


def A(*shape, dtype=F32, kind="normal"):
    """An input spec: shape, dtype and value kind (normal, pos, unit, int,
    nat, idx, nz, special, bool: see make)."""
    return (shape, dtype, kind)


def make(spec, rng):
    shape, dtype, kind = spec
    if kind == "pos":
        x = rng.uniform(0.1, 3.0, shape)
    elif kind == "unit":
        x = rng.uniform(-0.9, 0.9, shape)
    elif kind == "int":
        x = rng.integers(-5, 6, shape)
    elif kind == "nat":
        x = rng.integers(1, 6, shape)
    elif kind == "idx":
        x = rng.integers(-3, 3, shape)
    elif kind == "nz":
        x = rng.choice([-5, -4, -3, -2, -1, 1, 2, 3, 4, 5], shape)
    elif kind == "special":
        x = rng.standard_normal(shape)
        x.flat[:3] = [np.nan, np.inf, -np.inf]
    elif kind == "bool":
        x = rng.integers(0, 2, shape).astype(bool)
    else:
        x = rng.standard_normal(shape) * 2
    return np.asarray(x).astype(dtype)


def C(covers, fn, *specs, tol=1e-5, atol=None):
    """A case: the tessera.numpy names it covers, fn(m, *arrays), input
    specs; float results must agree to rtol tol and atol (default tol)."""
    return pytest.param(covers, fn, specs, (tol, tol if atol is None else atol),
                        id="%s-%d" % (covers.split()[0], _count(covers)))


_SEEN = {}


def _count(name):
    _SEEN[name] = _SEEN.get(name, 0) + 1
    return _SEEN[name]


X, Y, V, P = A(3, 4), A(3, 4), A(4), A(3, 4, kind="pos")
CASES = [
    # elementwise: one operand
    C("negative", lambda m, x: m.negative(x), X),
    C("positive", lambda m, x: m.positive(x), X),
    C("absolute abs", lambda m, x: m.absolute(x) + m.abs(x), X),
    C("sign", lambda m, x: m.sign(x), X),
    C("exp", lambda m, x: m.exp(x), X),
    C("log", lambda m, x: m.log(x), P),
    C("sqrt", lambda m, x: m.sqrt(x), P),
    C("sin cos tan", lambda m, x: m.sin(x) + m.cos(x) * m.tan(x), A(3, 4, kind="unit")),
    C("tanh", lambda m, x: m.tanh(x), X),
    C("floor ceil", lambda m, x: m.floor(x) * 10 + m.ceil(x), X),
    C("rint round around", lambda m, x: m.rint(x) + m.round(x) + m.around(x, 1), X),
    C("log1p expm1", lambda m, x: m.log1p(x) + m.expm1(x), A(3, 4, kind="unit")),
    C("log1p", lambda m, x: m.log1p(x * 1e-6), A(5, kind="unit"), atol=0),
    C("expm1", lambda m, x: m.expm1(x * 1e-6), A(5, kind="unit"), atol=0),
    C("exp2 log2 log10", lambda m, x: m.exp2(x) + m.log2(x) + m.log10(x), P),
    C("sinh cosh", lambda m, x: m.sinh(x) - m.cosh(x), A(3, 4, kind="unit")),
    C("square reciprocal", lambda m, x: m.square(x) + m.reciprocal(x), P),
    C("invert bitwise_not", lambda m, x: m.invert(x) + m.bitwise_not(x), A(5, dtype=I32, kind="int")),
    C("logical_not", lambda m, x: m.logical_not(x > 0), X),
    C("isnan isfinite isinf", lambda m, x: m.stack([m.isnan(x), m.isfinite(x), m.isinf(x)]),
      A(6, kind="special")),
    C("exp", lambda m, x: m.exp(x), A(5, dtype=I32, kind="int")),        # int32 -> float64
    C("sqrt", lambda m, x: m.sqrt(x), A(5, dtype=np.int8, kind="nat")),  # int8 -> float16
    # elementwise: two operands, broadcasting, promotion
    C("add", lambda m, a, b: m.add(a, b), X, V),
    C("subtract", lambda m, a, b: m.subtract(a, b), A(3, 1), A(1, 4)),
    C("multiply", lambda m, a, b: m.multiply(a, b), X, Y),
    C("divide true_divide", lambda m, a, b: m.divide(a, b) + m.true_divide(b, a), X, P),
    C("true_divide", lambda m, a, b: a / b, A(4, dtype=I32, kind="int"), A(4, dtype=I32, kind="nat")),
    C("floor_divide", lambda m, a, b: m.floor_divide(a, b), X, P),
    C("floor_divide", lambda m, a, b: a // b, A(6, dtype=I32, kind="int"), A(6, dtype=I32, kind="nz")),
    C("remainder mod", lambda m, a, b: m.remainder(a, b) + m.mod(b, a), X, P),
    C("remainder", lambda m, a, b: a % b, A(6, dtype=I64, kind="int"), A(6, dtype=I64, kind="nz")),
    C("power", lambda m, a, b: m.power(a, b), P, X),
    C("power", lambda m, a: a ** 2 + 2 ** a, A(4, kind="unit")),
    C("maximum minimum", lambda m, a, b: m.maximum(a, b) - m.minimum(a, 0.5), X, Y),
    C("arctan2", lambda m, a, b: m.arctan2(a, b), X, Y),
    C("equal not_equal", lambda m, a, b: m.stack([m.equal(a, b), m.not_equal(a, 0)]),
      A(6, dtype=I32, kind="int"), A(6, dtype=I32, kind="int")),
    C("less less_equal greater greater_equal",
      lambda m, a, b: m.stack([m.less(a, b), m.less_equal(a, b), m.greater(a, b), m.greater_equal(a, 0)]),
      A(3, 4, dtype=I32, kind="int"), A(4, dtype=F32, kind="int")),
    C("logical_and logical_or logical_xor",
      lambda m, a, b: m.stack([m.logical_and(a > 0, b), m.logical_or(a, b), m.logical_xor(a > 1, b)]),
      A(5, dtype=I32, kind="int"), A(5, dtype=bool, kind="bool")),
    C("bitwise_and bitwise_or bitwise_xor",
      lambda m, a, b: m.bitwise_and(a, b) + m.bitwise_or(a, 3) * m.bitwise_xor(a, b), A(5, dtype=I32, kind="int"),
      A(5, dtype=I32, kind="nat")),
    C("left_shift right_shift", lambda m, a, b: m.left_shift(a, b) + m.right_shift(a, b),
      A(5, dtype=I32, kind="int"), A(5, dtype=I32, kind="nat")),
    C("where", lambda m, c, a, b: m.where(c > 0, a, b), X, X, V),
    C("where", lambda m, c, a: m.where(c, a, 0.0), A(4, dtype=bool, kind="bool"), V),
    C("clip", lambda m, x: m.clip(x, -1.0, 1.5) + m.clip(x, None, 0.0), X),
    C("astype", lambda m, x: x.astype(I32) + m.astype(x, I64), X),
    # promotion rules (NEP 50: Python scalars are weak)
    C("add", lambda m, a: a + 1.5, A(4, dtype=F32)),
    C("add", lambda m, a: a + 1.5, A(4, dtype=I32, kind="int")),
    C("add", lambda m, a, b: a + b, A(4, dtype=I32, kind="int"), A(4, dtype=F32)),
    C("multiply", lambda m, a, b: a * b, A(4, dtype=np.float16), A(4, dtype=F32)),
    C("add", lambda m, a: a + np.float64(2), A(4, dtype=F32)),
    # reductions
    C("sum", lambda m, x: m.sum(x) + m.sum(x, axis=0).sum() + x.sum(axis=1, keepdims=True), X),
    C("sum", lambda m, x: m.sum(x, axis=(0, 2)), A(2, 3, 4, dtype=I32, kind="int")),
    C("sum", lambda m, x: m.sum(x, axis=-1), A(3, 4, dtype=bool, kind="bool")),
    C("prod", lambda m, x: m.prod(x, axis=1) + x.prod(), A(3, 4, kind="unit")),
    C("max amax min amin", lambda m, x: m.max(x, axis=0) + m.amax(x) - m.min(x, axis=0, keepdims=True) * m.amin(x),
      X),
    C("max", lambda m, x: x.max(axis=1), A(3, 4, dtype=bool, kind="bool")),
    C("any all", lambda m, x: m.stack([m.any(x > 1, axis=1), m.all(x > -3, axis=1)]), X),
    C("mean", lambda m, x: m.mean(x) + x.mean(axis=1, keepdims=True), X),
    C("mean", lambda m, x: m.mean(x, axis=0), A(3, 4, dtype=I32, kind="int")),
    C("var std", lambda m, x: m.var(x, axis=0) + m.std(x, ddof=1) + x.var(), X),
    C("argmax argmin", lambda m, x: m.argmax(x, axis=1) * 10 + m.argmin(x) + x.argmax(), X),
    C("argmax", lambda m, x: m.argmax(x, axis=0, keepdims=True), X),
    C("cumsum cumprod", lambda m, x: m.cumsum(x, axis=1) + m.cumprod(x, axis=0) + m.cumsum(x).reshape(3, 4), X),
    # shapes
    C("reshape", lambda m, x: m.reshape(x, (2, -1)) + x.reshape(2, 6) + x.reshape((4, 3)).reshape(-1, 6), X),
    C("ravel", lambda m, x: m.ravel(x) * 2, X),
    C("transpose", lambda m, x: m.transpose(x, (2, 0, 1)) + x.transpose(2, 0, 1), A(2, 3, 4)),
    C("transpose", lambda m, x: m.transpose(x) + x.T, A(3, 3)),
    C("swapaxes", lambda m, x: m.swapaxes(x, 0, 2), A(2, 3, 4)),
    C("moveaxis", lambda m, x: m.moveaxis(x, 0, -1) + m.moveaxis(x, [0, 1], [1, 2]).sum(), A(2, 3, 4)),
    C("expand_dims", lambda m, x: m.expand_dims(x, 1) + m.expand_dims(x, (0, 3)), X),
    C("squeeze", lambda m, x: m.squeeze(x) + m.squeeze(x, axis=0).sum(), A(1, 3, 1)),
    C("broadcast_to", lambda m, x: m.broadcast_to(x, (2, 3, 4)), A(3, 1)),
    C("atleast_1d atleast_2d", lambda m, x: m.atleast_2d(m.atleast_1d(x.sum())) + m.atleast_2d(x), V),
    C("concatenate", lambda m, a, b: m.concatenate([a, b, a], axis=1) + 1, X, A(3, 2)),
    C("concatenate", lambda m, a, b: m.concatenate([a, b], axis=None), X, A(2, dtype=F64)),
    C("stack", lambda m, a, b: m.stack([a, b], axis=1), X, Y),
    C("vstack hstack", lambda m, a, b: m.vstack([a, b]).sum() + m.hstack([a, b]), V, V),
    C("split", lambda m, x: m.split(x, 2, axis=1)[1] + m.split(x, [1, 3], axis=1)[2], X),
    C("flip", lambda m, x: m.flip(x, 1) + m.flip(x), X),
    C("pad", lambda m, x: m.pad(x, ((1, 0), (2, 1)), constant_values=0.5), X),
    C("shape ndim size", lambda m, x: x * (m.ndim(x) + m.size(x) + m.shape(x)[1]), X),
    # indexing
    C("getitem", lambda m, x: x[1], X),
    C("getitem", lambda m, x: x[1:, ::-2, None], A(4, 5, 2)),
    C("getitem", lambda m, x: x[..., -1] + x[-2, ..., 0].sum(), A(4, 5, 2)),
    C("getitem", lambda m, x: x[::3, -4:-1:2], A(7, 6)),
    C("getitem", lambda m, x: x[5:1:-2, :100], A(7, 6)),
    C("getitem", lambda m, x: x[np.array([2, 0, -1])], X),
    C("getitem", lambda m, x: x[:, [0, 3, 3]], X),
    C("getitem", lambda m, x: x[1, :, [0, 2]], A(2, 3, 4)),
    C("getitem", lambda m, x: x[:, np.array([True, False, True, True])], X),
    C("getitem", lambda m, x, i: x[i], X, A(dtype=I64, kind="idx")),
    C("getitem", lambda m, x, i: x[:, i], X, A(4, 2, dtype=I64, kind="idx")),
    C("take", lambda m, x, i: m.take(x, i, axis=1) + m.take(x, np.array([1, 2]))[0], X, A(2, dtype=I64, kind="idx")),
    # linear algebra
    C("matmul", lambda m, a, b: m.matmul(a, b) + (a @ b), A(3, 4), A(4, 5)),
    C("matmul", lambda m, a, b: a @ b, A(2, 3, 4), A(4)),
    C("matmul", lambda m, a, b: a @ b, A(2, 3, 4), A(2, 4, 5, dtype=F64)),
    C("dot", lambda m, a, b: m.dot(a, b) + m.dot(a, 2.0).sum(), A(2, 3, 4), A(4, 5)),
    C("dot", lambda m, a, b: m.dot(a, b), V, V),
    C("tensordot", lambda m, a, b: m.tensordot(a, b, axes=([1, 2], [0, 1])) + m.tensordot(a, b, 2), A(2, 3, 4),
      A(3, 4)),
    C("inner outer", lambda m, a, b: m.inner(a, b) + m.outer(a, b), V, V),
    # creation
    C("zeros ones empty", lambda m, x: x + m.zeros(4, F32) + m.ones((3, 4)) + m.empty(4).shape[0], X),
    C("full full_like zeros_like ones_like",
      lambda m, x: m.full((3, 4), 2.5, F32) * m.full_like(x, 2) + m.zeros_like(x) - m.ones_like(x, dtype=I32), X),
    C("arange", lambda m, x: x + m.arange(4) + m.arange(1, 9, 2, dtype=F32) + m.arange(0.5, 2.1, 0.5), X),
    C("linspace", lambda m, x: x + m.linspace(0, 1, 4), X),
    C("eye identity", lambda m, x: m.eye(3, 4, k=1, dtype=F32) * x + m.identity(3)[:, :1], X),
    C("asarray array", lambda m, x: m.asarray([x[0], x[1]]) + m.array(x, dtype=F64)[:2], X),
]


def _check(got, want, tol):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    rtol, atol = tol if isinstance(tol, tuple) else (tol, tol)
    if want.dtype == np.float16:
        rtol, atol = max(rtol, 2e-3), max(atol, 2e-3)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target", ["interp", "cpu"])
@pytest.mark.parametrize("covers, fn, specs, tol", CASES)
def test_against_numpy(covers, fn, specs, tol, target, rng, cache_dir):
    arrays = [make(s, rng) for s in specs]
    want = fn(np, *arrays)
    jf = tessera.jit(lambda *a: fn(tnp, *a), target=target, cache_dir=cache_dir)
    _check(jf(*arrays), want, tol)


def test_every_function_has_a_case():
    covered = set()
    for p in CASES:
        covered.update(p.values[0].split())
    assert len(CASES) > 100
    assert set(tnp.__all__) - covered == set()
    assert covered - set(tnp.__all__) == set()


def test_eager_is_numpy():
    """Outside a trace the functions are numpy's own."""
    x = np.arange(6.0).reshape(2, 3)
    for got, want in [(tnp.exp(x), np.exp(x)), (tnp.sum(x, axis=1), np.sum(x, axis=1)),
                      (tnp.zeros(3), np.zeros(3)), (tnp.arange(4), np.arange(4)), (tnp.reshape(x, -1), x.ravel()),
                      (tnp.where(x > 2, x, 0), np.where(x > 2, x, 0)), (tnp.concatenate([x, x]), np.vstack([x, x]))]:
        assert type(got) is type(want) and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_numpy_functions_dispatch_on_tracers():
    """np.exp(tracer) and np.sum(tracer) build nodes too (__array_ufunc__,
    __array_function__); a numpy array on the left of an operator defers."""
    def f(x):
        return np.exp(x) + np.sum(x, axis=0) + np.ones(4, F32) * x

    x = np.random.default_rng(1).standard_normal((3, 4)).astype(F32)
    text = str(tessera.trace(f, x).graph)
    assert "exp(" in text and "reduce_sum(" in text
    _check(tessera.jit(f, target="interp")(x), f(x), 1e-5)


def test_traced_attributes():
    seen = {}

    def f(x):
        seen.update(shape=x.shape, dtype=x.dtype, ndim=x.ndim, size=x.size, t=repr(x), T=x.T.shape, len=len(x))
        return x

    tessera.jit(f, dynamic={"x": "_, n"}, target="interp")(np.ones((2, 5), np.float16))
    n = tessera.Dim("n")
    assert seen == {"shape": (2, n), "dtype": np.dtype(np.float16), "ndim": 2, "size": 2 * n,
                    "t": "Tracer(f16[2, n])", "T": (n, 2), "len": 2}
    assert str(seen["size"]) == "2*n" and 2 * n == n * 2 and n + 1 != n


def test_dynamic_shapes_in_functions():
    """Reshape, slicing, mean and creation over a symbolic size."""
    def f(x):
        n = x.shape[0]
        y = x.reshape(-1)[1:] + 0                 # f32[3*n - 1]
        z = tnp.zeros((n, 2), F32) + x[:, :2]
        return y, z, x.mean(axis=0), x[-2:], x[::-1], tnp.arange(n) * 2

    jf = tessera.jit(f, dynamic={"x": "n"}, target="interp")
    for rows in (3, 6):
        x = np.random.default_rng(rows).standard_normal((rows, 3)).astype(F32)
        for g, w in zip(jf(x), f(x)):
            _check(g, w, 1e-5)
    assert jf.traces == 1


def test_unsupported_indexing():
    x = np.ones((3, 4), F32)
    with pytest.raises(tessera.Unsupported, match="more than one integer array"):
        tessera.trace(lambda a: a[[0, 1], [1, 2]], x)
    with pytest.raises(tessera.TracerError, match="boolean mask"):
        tessera.trace(lambda a: a[a > 0], x)
    with pytest.raises(IndexError):
        tessera.trace(lambda a: a[3], x)
    with pytest.raises(TypeError, match="immutable"):
        def setter(a):
            a[0] = 1
        tessera.trace(setter, x)


def test_weak_scalar_overflow_is_numpys_error():
    x = np.ones(3, np.int8)
    with pytest.raises(OverflowError):
        x + 300
    with pytest.raises(OverflowError):
        tessera.trace(lambda a: a + 300, x)
