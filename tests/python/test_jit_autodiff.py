"""tessera.grad, value_and_grad, jvp, vjp and tessera.lax on Python
functions (docs/autodiff.md, docs/jit.md): against torch.autograd, composed
with jit and with themselves, and training the digits MLP and CNN of
examples/train_digits.py to >= 95% test accuracy with one trace and one
compile (the last, smaller batch of each epoch reuses the compiled step)."""
import importlib.util
import os

import numpy as np
import pytest
import torch

import tessera
import tessera.numpy as tnp

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
rng = np.random.default_rng(0)
W = rng.standard_normal((4, 3)).astype(np.float32)
X = rng.standard_normal((5, 4)).astype(np.float32)


def f(w, x):
    return tnp.sum(tnp.tanh(x @ w) ** 2)


def f_torch(w, x):
    return (torch.tanh(x @ w) ** 2).sum()


def torch_grad(fn, *args, argnums=0):
    ts = [torch.tensor(a, requires_grad=True) for a in args]
    return torch.autograd.grad(fn(*ts), ts[argnums])[0].numpy()


def test_grad_matches_torch():
    np.testing.assert_allclose(tessera.grad(f)(W, X), torch_grad(f_torch, W, X), rtol=1e-5, atol=1e-6)
    gw, gx = tessera.grad(f, argnums=(0, 1))(W, X)
    np.testing.assert_allclose(gx, torch_grad(f_torch, W, X, argnums=1), rtol=1e-5, atol=1e-6)


def test_grad_of_grad():
    gg = tessera.grad(lambda w, x: tnp.sum(tessera.grad(f)(w, x) ** 2))(W, X)

    def twice(w, x):
        (g,) = torch.autograd.grad(f_torch(w, x), w, create_graph=True)
        return (g ** 2).sum()
    np.testing.assert_allclose(gg, torch_grad(twice, W, X), rtol=1e-4, atol=1e-5)


def test_value_and_grad_under_jit_traces_once():
    jf = tessera.jit(tessera.value_and_grad(f), dynamic={"x": "batch"})
    for n in (5, 9, 2):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        v, g = jf(W, x)
        np.testing.assert_allclose(v, f_torch(torch.tensor(W), torch.tensor(x)).item(), rtol=1e-5)
        np.testing.assert_allclose(g, torch_grad(f_torch, W, x), rtol=1e-5, atol=1e-6)
    assert (jf.traces, jf.compiles) == (1, 1)


def test_pytrees_aux_and_closures():
    p = {"w": W, "b": np.ones(3, np.float32)}

    def loss(p, x):
        y = x @ p["w"] + p["b"]
        return tnp.mean(y * y), y

    @tessera.jit
    def step(p, x):
        scale = tnp.sum(x)   # an outer traced value the inner function closes over: held fixed
        g, y = tessera.grad(lambda p: loss(p, x)[0] * scale, has_aux=False)(p), loss(p, x)[1]
        return g, y
    g, _ = step(p, X)
    w, b, x = (torch.tensor(a, requires_grad=True) for a in (W, p["b"], X))
    lt = ((x @ w + b) ** 2).mean() * x.sum().detach()
    gw, gb = torch.autograd.grad(lt, (w, b))
    np.testing.assert_allclose(g["w"], gw.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(g["b"], gb.numpy(), rtol=1e-5, atol=1e-5)
    (gw2, y2) = tessera.grad(loss, has_aux=True)(p, X)
    np.testing.assert_allclose(y2, X @ W + 1, rtol=1e-5, atol=1e-5)


def test_through_control_flow():
    x = rng.standard_normal(4).astype(np.float32)
    w = rng.standard_normal(4).astype(np.float32)

    def f(x, w):
        h = tessera.fori_loop(0, 5, lambda i, h: tnp.tanh(h * w + x), x)
        return tnp.sum(tessera.cond(tnp.sum(h) > 0, lambda h: h * h, lambda h: tnp.sin(h), h))
    gx, gw = tessera.grad(f, argnums=(0, 1))(x, w)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    h = xt
    for _ in range(5):
        h = torch.tanh(h * wt + xt)
    out = (h * h).sum() if h.sum() > 0 else torch.sin(h).sum()
    tx, tw = torch.autograd.grad(out, (xt, wt))
    np.testing.assert_allclose(gx, tx.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw, tw.numpy(), rtol=1e-5, atol=1e-6)

    def s(x, w):
        c, ys = tessera.scan(lambda c, xi: (tnp.tanh(c * w + xi), c * 2), x, tnp.stack([x, w, x * w]))
        return tnp.sum(ys) + tnp.sum(c)
    xt = torch.tensor(x, requires_grad=True)
    c, total = xt, 0
    for xi in (xt, torch.tensor(w), xt * torch.tensor(w)):
        total, c = total + (c * 2).sum(), torch.tanh(c * torch.tensor(w) + xi)
    (want,) = torch.autograd.grad(total + c.sum(), xt)
    np.testing.assert_allclose(tessera.grad(s)(x, w), want.numpy(), rtol=1e-5, atol=1e-6)


def test_jvp_and_vjp():
    out, t = tessera.jvp(lambda x: tnp.sin(x) * x, (X,), (np.ones_like(X),))
    np.testing.assert_allclose(t, np.cos(X) * X + np.sin(X), rtol=1e-5, atol=1e-6)
    y, f_vjp = tessera.vjp(lambda x, w: tnp.exp(x @ w), X, W)
    ct = rng.standard_normal(y.shape).astype(np.float32)
    cx, cw = f_vjp(ct)
    np.testing.assert_allclose(cx, (ct * np.exp(X @ W)) @ W.T, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(cw, X.T @ (ct * np.exp(X @ W)), rtol=1e-4, atol=1e-5)


def test_lax_conv_and_pool_gradients():
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    k = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)

    def net(x, k):
        h = tessera.lax.conv(x, k, strides=(1, 1), padding=(1, 1))
        return tnp.sum(tessera.lax.reduce_window(h, "max", (1, 1, 2, 2), (1, 1, 2, 2)) ** 2)
    gx, gk = tessera.grad(net, argnums=(0, 1))(x, k)

    def net_t(x, k):
        h = torch.nn.functional.conv2d(x, k, padding=1)
        return (torch.nn.functional.max_pool2d(h, 2) ** 2).sum()
    xt, kt = torch.tensor(x, requires_grad=True), torch.tensor(k, requires_grad=True)
    tx, tk = torch.autograd.grad(net_t(xt, kt), (xt, kt))
    np.testing.assert_allclose(gx, tx.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gk, tk.numpy(), rtol=1e-4, atol=1e-4)


def test_running_products_through_zeros_match_torch():
    # cumprod's rule (D175) is exact where the product passes a zero; torch's
    # cumprod backward is too
    w = W.copy()
    w[1, 0] = 0.0
    w[2, 2] = 0.0
    fn = lambda a: tnp.sum(tnp.sin(tnp.cumprod(a, axis=0)) * tnp.cumsum(a, axis=1))
    ft = lambda a: (torch.sin(torch.cumprod(a, dim=0)) * torch.cumsum(a, dim=1)).sum()
    np.testing.assert_allclose(tessera.grad(fn)(w), torch_grad(ft, w), rtol=1e-5, atol=1e-6)


def test_errors():
    with pytest.raises(TypeError, match="floating-point scalar"):
        tessera.grad(lambda x: x * 2)(X)
    with pytest.raises(TypeError, match="not an array"):
        tessera.grad(lambda x, n: tnp.sum(x) * n, argnums=1)(X, 3)
    with pytest.raises(ValueError, match="argnums 2"):
        tessera.grad(f, argnums=2)(W, X)


def load_example():
    spec = importlib.util.spec_from_file_location("train_digits", os.path.join(ROOT, "examples", "train_digits.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_digits_trains_to_95_percent(kind):
    ex = load_example()
    losses = []
    _, acc, step, _ = ex.train(kind, epochs=10, log=losses.append)
    assert acc >= 0.95, "%s: test accuracy %.3f" % (kind, acc)
    assert (step.traces, step.compiles) == (1, 1), "the smaller last batch must not retrace or recompile"
    first, last = (float(s.split()[-1]) for s in (losses[0], losses[-1]))
    assert last < first / 3
