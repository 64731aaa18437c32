"""torch.compile(model, backend="tessera"): models give eager PyTorch's
results, forward and backward; what tessera lowers runs compiled (no
fallbacks for these models), what it does not falls back to eager with
its reason reported; the backend is found by name once installed."""
import os
import subprocess
import sys

import pytest
import torch

import tessera.torch as tt


@pytest.fixture(autouse=True)
def fresh_dynamo():
    import torch._dynamo
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def backend(cache_dir):
    return lambda gm, ex: tt.backend(gm, ex, options={"cache_dir": cache_dir})


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.GELU(), torch.nn.LayerNorm(16),
                               torch.nn.Linear(16, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.c1 = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.b1 = torch.nn.BatchNorm2d(8)
        self.c2 = torch.nn.Conv2d(8, 16, 3, stride=2, groups=2)
        self.pool = torch.nn.AvgPool2d(2, ceil_mode=True)
        self.fc = torch.nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        x = torch.relu(self.b1(self.c1(x)))
        x = torch.nn.functional.max_pool2d(x, 2)
        x = torch.sigmoid(self.c2(x))
        x = self.pool(x).flatten(1)
        return torch.log_softmax(self.fc(x), dim=-1)


def assert_close(a, b, tol=1e-5):
    torch.testing.assert_close(a, b, rtol=tol, atol=tol)


def test_mlp_forward_and_backward_compiled(cache_dir):
    m = mlp()
    x = torch.randn(5, 6)
    start = len(tt.REPORT.graphs)
    c = torch.compile(m, backend=backend(cache_dir))
    y = c(x)
    assert_close(y, m(x))
    (y * y).sum().backward()
    got = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    (m(x) ** 2).sum().backward()
    for g, p in zip(got, m.parameters()):
        assert_close(g, p.grad)
    graphs = tt.REPORT.graphs[start:]
    assert [g["kind"] for g in graphs] == ["forward", "backward"]
    assert all(g["regions"] == 1 and not g["fallbacks"] for g in graphs), tt.REPORT


def test_cnn_inference_compiled(cache_dir):
    m = CNN().eval()
    x = torch.randn(3, 1, 14, 14)
    with torch.no_grad():   # an inference graph: nothing saved for a backward pass
        r = tt.explain(m, x, cache_dir=cache_dir)
        assert r.regions == 1 and not r.fallbacks, r
        assert_close(torch.compile(m, backend=backend(cache_dir))(x), m(x))


def test_dropout_training_compiled_and_seeded(cache_dir):
    """Random draws compile (rng_uniform fed a seed drawn per call from
    torch's generator): the training graph stays one region each way, two
    calls differ, torch.manual_seed replays a call, about p of the values
    drop, the kept ones are scaled by 1/(1-p), and the backward pass uses
    the forward's mask."""
    p = 0.25
    m = torch.nn.Sequential(torch.nn.Dropout(p), torch.nn.Tanh()).train()
    x = torch.randn(256, 64, requires_grad=True)
    start = len(tt.REPORT.graphs)
    c = torch.compile(m, backend=backend(cache_dir))
    torch.manual_seed(7)
    y1 = c(x)
    torch.manual_seed(7)
    y2 = c(x)
    y3 = c(x)
    assert torch.equal(y1, y2) and not torch.equal(y1, y3)
    kept = y3 != 0
    assert abs(1 - kept.float().mean().item() - p) < 0.02
    assert_close(y3[kept], torch.tanh(x[kept] / (1 - p)))
    y3.sum().backward()
    assert_close(x.grad, torch.where(kept, (1 - y3 * y3) / (1 - p), 0.0))
    graphs = tt.REPORT.graphs[start:]
    assert [g["kind"] for g in graphs] == ["forward", "backward"]
    assert all(g["regions"] == 1 and not g["fallbacks"] for g in graphs), tt.REPORT


def test_randperm_compiled(cache_dir):
    def f(x):
        return torch.randperm(x.shape[0]), torch.randint(3, 9, x.shape)

    x = torch.zeros(50)
    r = tt.explain(f, x, cache_dir=cache_dir)
    assert r.regions == 1 and not r.fallbacks, r
    c = torch.compile(f, backend=backend(cache_dir))
    perms = []
    for _ in range(3):
        p, k = c(x)
        assert p.dtype == torch.int64 and sorted(p.tolist()) == list(range(50))
        assert k.dtype == torch.int64 and 3 <= k.min() and k.max() < 9
        perms.append(p.tolist())
    assert perms[0] != perms[1] != perms[2]


def test_fallback_is_not_an_error(cache_dir):
    def f(x):
        y = torch.exp(x) * 2
        d = torch.special.airy_ai(y)   # no lowering: eager
        return torch.tanh(d) + 1

    x = torch.randn(4, 5)
    r = tt.explain(f, x, cache_dir=cache_dir)
    assert r.regions == 2, r
    assert any("airy_ai" in op and "no lowering" in why for op, why in r.fallbacks), r
    assert_close(torch.compile(f, backend=backend(cache_dir))(x), f(x))


def test_singular_matrix_raises_as_in_eager(cache_dir):
    """linalg.inv's error check (an effect, with_effects in the graph)
    compiles with the inverse: a singular matrix raises instead of giving
    what the failed elimination left."""
    def f(a):
        return torch.linalg.inv(a) * 2

    a = torch.randn(2, 3, 3) + 3 * torch.eye(3)
    r = tt.explain(f, a, cache_dir=cache_dir)
    assert r.regions == 1 and not r.fallbacks, r
    torch._dynamo.reset()
    g = torch.compile(f, backend=backend(cache_dir))
    assert_close(g(a), f(a), tol=1e-4)
    a[1] = torch.tensor([[1.0, 2, 3], [2, 4, 6], [0, 1, 1]])
    with pytest.raises(torch.linalg.LinAlgError):
        f(a)
    with pytest.raises(Exception, match="gather"):
        g(a)


def test_views_a_fallback_as_strided_reads_stay_eager(cache_dir):
    """as_strided reads its input's storage: a slice tessera computed would
    be a dense copy, not eager's view into x, so the slice stays eager too."""
    def f(x):
        return x[:, ::2].as_strided((2, 2), (1, 2)) * 1

    x = torch.randn(4, 6)
    r = tt.explain(f, x, cache_dir=cache_dir)
    assert any("slice" in op and "memory layout" in why for op, why in r.fallbacks), r
    torch._dynamo.reset()
    assert_close(torch.compile(f, backend=backend(cache_dir))(x), f(x))


def test_unsupported_arguments_fall_back(cache_dir):
    def f(x):
        return torch.div(x, 3, rounding_mode="floor") + torch.nn.functional.gelu(x, approximate="tanh")

    x = torch.randn(6) * 10
    assert_close(torch.compile(f, backend=backend(cache_dir))(x), f(x))
    # integer and bool tensors, type promotion
    def g(a, b):
        return (a + b * 2.5, a // 3, a % 3, (a > 1) & (b < 0), torch.where(a > 0, a, b.long()))

    a = torch.tensor([-7, -1, 0, 4, 9])
    b = torch.tensor([0.5, -1.5, 2.0, -3.0, 1.0])
    for got, want in zip(torch.compile(g, backend=backend(cache_dir))(a, b), g(a, b)):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want)


def test_training_steps_match_eager(cache_dir):
    torch.manual_seed(1)
    x, y = torch.randn(16, 6), torch.randint(0, 4, (16,))

    def train(compiled):
        m = mlp()
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        step_model = torch.compile(m, backend=backend(cache_dir)) if compiled else m
        losses = []
        for _ in range(5):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(step_model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    eager, ours = train(False), train(True)
    for a, b in zip(ours, eager):
        assert abs(a - b) <= 1e-4 * abs(b)


def test_log_and_registered_name(cache_dir):
    code = ("import torch\n"
            "m = torch.nn.Linear(3, 2)\n"
            "c = torch.compile(m, backend='tessera', options={'cache_dir': %r})\n"
            "x = torch.randn(2, 3)\n"
            "torch.testing.assert_close(c(x), m(x))\n" % cache_dir)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, TESSERA_LOG="1"))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "tessera: forward graph: 1 region(s)" in r.stderr


def test_bad_options():
    with pytest.raises(Exception, match="unknown option"):
        torch.compile(torch.nn.Linear(2, 2), backend=lambda gm, ex: tt.backend(gm, ex, options={"colour": 1}))(
            torch.randn(1, 2))


def test_batchnorm_training_upsample_pool(cache_dir):
    import copy
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                            torch.nn.Upsample(scale_factor=2), torch.nn.AvgPool2d(2))
    ref = copy.deepcopy(m)
    x = torch.randn(2, 3, 8, 8)
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    start = len(tt.REPORT.graphs)
    y = torch.compile(m, backend=backend(cache_dir))(xa)
    (y ** 2).sum().backward()
    want = ref(xb)
    (want ** 2).sum().backward()
    assert_close(y, want)
    assert_close(xa.grad, xb.grad)
    for p, q in zip(m.parameters(), ref.parameters()):
        assert_close(p.grad, q.grad, 1e-4)
    # the running statistics, updated in place as eager does
    assert_close(m[1].running_mean, ref[1].running_mean)
    assert_close(m[1].running_var, ref[1].running_var)
    assert all(not g["fallbacks"] for g in tt.REPORT.graphs[start:]), tt.REPORT


def test_indexing_and_sorting(cache_dir):
    def f(a, v, w, i, j):
        b = a.clone()
        b[:, i] = v
        return (torch.gather(a, 1, j), a[i], a[:, i], b, a.index_put((i,), w, accumulate=True),
                torch.topk(a, 2).values, torch.sort(a, dim=0, descending=True).values)

    a, v, w = torch.randn(4, 5), torch.randn(4, 3), torch.randn(3, 5)
    i, j = torch.tensor([3, 0, -1]), torch.randint(0, 5, (4, 2))
    start = len(tt.REPORT.graphs)
    for got, want in zip(torch.compile(f, backend=backend(cache_dir))(a, v, w, i, j), f(a, v, w, i, j)):
        torch.testing.assert_close(got, want)
    assert all(not g["fallbacks"] for g in tt.REPORT.graphs[start:]), tt.REPORT


def test_fourier_transforms_compiled(cache_dir):
    def f(x, z):
        return (torch.fft.rfft(x), torch.fft.fft2(x, norm="ortho"), torch.fft.irfft(torch.fft.rfft(x), n=7),
                torch.fft.ifftn(z, dim=(0, 1)), torch.fft.hfft(z[1], n=6), torch.stft(x, 4, return_complex=True))

    torch.manual_seed(0)
    x, z = torch.randn(3, 7), torch.randn(4, 5, dtype=torch.complex64)
    start = len(tt.REPORT.graphs)
    for got, want in zip(torch.compile(f, backend=backend(cache_dir))(x, z), f(x, z)):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert all(not g["fallbacks"] for g in tt.REPORT.graphs[start:]), tt.REPORT


def test_complex_values_cross_region_boundaries(cache_dir):
    # a complex input, a complex product tessera leaves to PyTorch between
    # two tessera regions, and complex results: pairs in, views out
    def f(z, a):
        w = torch.fft.fft(torch.complex(a, a.flip(1)).conj() + 0, dim=1)
        return (w * z).permute(1, 0)[1:], torch.view_as_real(z).sum(-1), z.conj().flip(0)

    torch.manual_seed(0)
    z = torch.randn(3, 4, dtype=torch.complex64)[:, ::2]   # strided
    a = torch.randn(3, 2)
    start = len(tt.REPORT.graphs)
    for got, want in zip(torch.compile(f, backend=backend(cache_dir))(z, a), f(z, a)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    fallbacks = [op for g in tt.REPORT.graphs[start:] for op, _ in g["fallbacks"]]
    assert "aten.mul.Tensor" in fallbacks, tt.REPORT
    assert sum(g["regions"] for g in tt.REPORT.graphs[start:]) >= 2, tt.REPORT


def test_long_transforms_fall_back(cache_dir):
    x = torch.randn(2, 600)
    start = len(tt.REPORT.graphs)
    torch.testing.assert_close(torch.compile(torch.fft.rfft, backend=backend(cache_dir))(x), torch.fft.rfft(x))
    why = [w for g in tt.REPORT.graphs[start:] for _, w in g["fallbacks"]]
    assert any("dense DFT" in w for w in why), tt.REPORT


def test_symmetric_eigenvalues_singular_values_compiled(cache_dir):
    def f(a, w):
        s = a + a.mT
        return (torch.linalg.eigvalsh(s), torch.linalg.svdvals(w), torch.linalg.pinv(w),
                torch.linalg.matrix_sqrth(a @ a.mT + torch.eye(5)), *torch.linalg.polar(a),
                torch.linalg.matrix_rank(a[:, :, :2] @ a[:, :2, :]))

    torch.manual_seed(0)
    a, w = torch.randn(3, 5, 5), torch.randn(2, 4, 6)
    start = len(tt.REPORT.graphs)
    for got, want in zip(torch.compile(f, backend=backend(cache_dir))(a, w), f(a, w)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    assert all(not g["fallbacks"] for g in tt.REPORT.graphs[start:]), tt.REPORT


def test_eigenvectors_fall_back(cache_dir):
    # their signs are LAPACK's choice: tessera's would differ, not be wrong
    a = torch.randn(4, 4)
    start = len(tt.REPORT.graphs)
    got = torch.compile(torch.linalg.eigh, backend=backend(cache_dir))(a + a.mT)
    torch.testing.assert_close(got, torch.linalg.eigh(a + a.mT))
    why = [w for g in tt.REPORT.graphs[start:] for _, w in g["fallbacks"]]
    assert any("eigenvectors used" in w for w in why), tt.REPORT


def test_fractional_max_pool_given_samples(cache_dir):
    # with the random samples given, windows and results are PyTorch's exactly
    F = torch.nn.functional

    def f(x, x3, u, u3):
        return (F.fractional_max_pool2d(x, (2, 3), output_size=(4, 3), _random_samples=u, return_indices=True),
                F.fractional_max_pool2d(x[0], 2, output_size=(5, 4), _random_samples=u[:1], return_indices=True),
                F.fractional_max_pool3d(x3, (2, 1, 2), output_size=(3, 4, 2), _random_samples=u3,
                                        return_indices=True))

    torch.manual_seed(0)
    x, x3 = torch.randn(2, 3, 9, 8), torch.randn(2, 2, 5, 6, 4)
    x[0, 1, 2, :] = float("nan")
    u, u3 = torch.rand(2, 3, 2), torch.rand(2, 2, 3)
    start = len(tt.REPORT.graphs)
    got, want = torch.compile(f, backend=backend(cache_dir))(x, x3, u, u3), f(x, x3, u, u3)
    for g, w in zip(got, want):
        torch.testing.assert_close(g[0], w[0], rtol=0, atol=0, equal_nan=True)
        torch.testing.assert_close(g[1], w[1], rtol=0, atol=0)
    assert all(not g["fallbacks"] for g in tt.REPORT.graphs[start:]), tt.REPORT


def test_incomplete_gamma_and_its_boundaries(cache_dir):
    inf, nan = float("inf"), float("nan")
    torch.manual_seed(0)
    a = torch.cat([torch.rand(40) * 20, torch.tensor([0., 0., 1., inf, inf, 2., -1., nan, 1e3, 1e4, 3., .5])])
    x = torch.cat([torch.rand(40) * 30, torch.tensor([1., 0., 0., 3., inf, inf, 1., 1., 1001., 9990., 1e-30, 40.])])

    def f(a, x):
        return torch.igamma(a, x), torch.igammac(a, x)

    start = len(tt.REPORT.graphs)
    for got, want in zip(torch.compile(f, backend=backend(cache_dir))(a, x), f(a, x)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5, equal_nan=True)
    assert all(not g["fallbacks"] for g in tt.REPORT.graphs[start:]), tt.REPORT


def test_matrix_exp_scales_and_squares(cache_dir):
    # norms from 0 to about 20: no squaring to several, per matrix; compared
    # with eager in float64 (f32 eager is itself 1e-4 off at the largest)
    torch.manual_seed(0)
    a = torch.randn(4, 5, 5) * torch.tensor([0.0, 0.01, 1.0, 4.0]).view(4, 1, 1)
    got = torch.compile(torch.linalg.matrix_exp, backend=backend(cache_dir))(a)
    torch.testing.assert_close(got.double(), torch.linalg.matrix_exp(a.double()), rtol=1e-5, atol=1e-6)


def test_adaptive_pool_backward_and_vec_upsampling(cache_dir):
    F = torch.nn.functional
    torch.manual_seed(0)
    x = torch.randn(2, 3, 7, 9, requires_grad=True)

    def f(x):
        y = F.adaptive_avg_pool2d(x, (3, 4))   # overlapping windows
        return (torch.ops.aten.upsample_bilinear2d.vec(y, None, True, [2.0, 1.5]),
                torch.ops.aten.upsample_nearest2d.vec(y, [5, 9], None))

    start = len(tt.REPORT.graphs)
    got, want = torch.compile(f, backend=backend(cache_dir))(x), f(x)
    cot = [torch.randn_like(w) for w in want]
    for g, w in zip(torch.autograd.grad(got, x, cot) + got, torch.autograd.grad(want, x, cot) + want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-6)
    graphs = tt.REPORT.graphs[start:]
    assert [g["kind"] for g in graphs] == ["forward", "backward"] and all(not g["fallbacks"] for g in graphs), \
        tt.REPORT


def test_dynamic_batch_compiles_once(tmp_path):
    """A batch dimension marked dynamic becomes a tessera symbol: new batch
    sizes run on the code compiled for the first, forward and backward."""
    cache = str(tmp_path / "cache")
    m = mlp()
    x0 = torch.randn(3, 6)
    torch._dynamo.mark_dynamic(x0, 0)
    start = len(tt.REPORT.graphs)
    c = torch.compile(m, backend=backend(cache))
    entries = None
    for b in (3, 5, 8):
        x = x0 if b == 3 else torch.randn(b, 6)
        y = c(x)
        (y * y).sum().backward()
        got = [p.grad.clone() for p in m.parameters()]
        m.zero_grad()
        want = m(x)
        (want * want).sum().backward()
        assert_close(y, want)
        for g, p in zip(got, m.parameters()):
            assert_close(g, p.grad)
        m.zero_grad()
        n = len(os.listdir(cache))
        assert entries is None or n == entries, "batch %d compiled new C" % b
        entries = n
    graphs = tt.REPORT.graphs[start:]
    assert [g["kind"] for g in graphs] == ["forward", "backward"], tt.REPORT   # compiled once
    assert all(g["regions"] == 1 and not g["fallbacks"] for g in graphs), tt.REPORT


def test_a_region_tessera_refuses_runs_in_pytorch(cache_dir, monkeypatch):
    """If building a region fails (here: a lowering made to refuse), the
    region runs in eager PyTorch and the report says why: never a crash."""
    import tessera
    from tessera.torch.lower import LOWERINGS

    def refuse(L, node):
        raise tessera.Unsupported("refused for the test")

    monkeypatch.setitem(LOWERINGS, torch.ops.aten.relu.default, refuse)
    m = mlp()
    x = torch.randn(4, 6)

    def f(x):
        return torch.relu(m(x)) * 2

    r = tt.explain(f, x, cache_dir=cache_dir)
    assert any("Unsupported: refused for the test" in why for _, why in r.fallbacks), r
    with torch.no_grad():
        assert_close(torch.compile(f, backend=backend(cache_dir))(x), f(x))
