"""Train a small MLP and a small CNN on scikit-learn's digits (8x8 images,
10 classes) with tessera alone: the model and the loss in tessera.numpy,
gradients from tessera.value_and_grad, an Adam update written out, and
the whole step compiled once by tessera.jit (the batch is a dynamic dim,
so the last, smaller batch of an epoch reuses the same compiled step).

    .venv/bin/python examples/train_digits.py [mlp|cnn] [--epochs N]

Prints the loss per epoch and the test accuracy."""
import argparse
import time

import numpy as np
import sklearn.datasets
import sklearn.model_selection

import tessera
import tessera.numpy as tnp


def digits(seed=0):
    """(x_train, x_test, y_train, y_test): pixels scaled to [0, 1], f32,
    labels as i64; a fixed, stratified 80/20 split."""
    d = sklearn.datasets.load_digits()
    x = (d.data / 16.0).astype(np.float32)
    return sklearn.model_selection.train_test_split(x, d.target.astype(np.int64), test_size=0.2, random_state=seed,
                                                    stratify=d.target)


def init_mlp(rng):
    def dense(n_in, n_out):
        return {"w": (rng.standard_normal((n_in, n_out)) * np.sqrt(2.0 / n_in)).astype(np.float32),
                "b": np.zeros(n_out, np.float32)}
    return {"l1": dense(64, 128), "l2": dense(128, 10)}


def mlp(p, x):
    h = tnp.maximum(x @ p["l1"]["w"] + p["l1"]["b"], 0.0)
    return h @ p["l2"]["w"] + p["l2"]["b"]


def init_cnn(rng):
    def he(*shape):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))).astype(np.float32)
    return {"c1": he(16, 1, 3, 3), "b1": np.zeros(16, np.float32), "c2": he(32, 16, 3, 3),
            "b2": np.zeros(32, np.float32), "w": he(10, 32 * 4 * 4).T.copy(), "b": np.zeros(10, np.float32)}


def cnn(p, x):
    x = tnp.reshape(x, (-1, 1, 8, 8))
    h = tessera.lax.conv(x, p["c1"], padding=(1, 1)) + tnp.reshape(p["b1"], (1, 16, 1, 1))
    h = tessera.lax.reduce_window(tnp.maximum(h, 0.0), "max", (1, 1, 2, 2), (1, 1, 2, 2))
    h = tessera.lax.conv(h, p["c2"], padding=(1, 1)) + tnp.reshape(p["b2"], (1, 32, 1, 1))
    h = tnp.reshape(tnp.maximum(h, 0.0), (-1, 32 * 4 * 4))
    return h @ p["w"] + p["b"]


def loss_fn(model, p, x, y):
    """Mean softmax cross entropy of the logits against labels y."""
    logits = model(p, x)
    m = tnp.max(logits, axis=1, keepdims=True)
    lse = tnp.log(tnp.sum(tnp.exp(logits - m), axis=1, keepdims=True)) + m
    onehot = (y[:, None] == tnp.arange(10)[None, :]).astype(np.float32)
    return -tnp.mean(tnp.sum(onehot * (logits - lse), axis=1))


def tree_map(f, *trees):
    if isinstance(trees[0], dict):
        return {k: tree_map(f, *(t[k] for t in trees)) for k in trees[0]}
    return f(*trees)


def make_step(model, lr=3e-3, b1=0.9, b2=0.999, eps=1e-8, threads=None):
    """One Adam step, compiled once: (params, m, v, t, x, y) -> (params, m,
    v, loss). t is the step count as an f32 array (a value, not a constant,
    so it does not recompile)."""
    @tessera.jit(dynamic={"x": "batch", "y": "batch"}, threads=threads)
    def step(p, m, v, t, x, y):
        loss, g = tessera.value_and_grad(lambda p: loss_fn(model, p, x, y))(p)
        m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t
        p = tree_map(lambda p, m, v: p - lr * (m / c1) / (tnp.sqrt(v / c2) + eps), p, m, v)
        return p, m, v, loss
    return step


def accuracy(model, p, x, y):
    predict = tessera.jit(lambda p, x: tnp.argmax(model(p, x), axis=1), dynamic={"x": "batch"})
    return float(np.mean(predict(p, x) == y))


def train(kind="mlp", epochs=20, batch=64, seed=0, log=print):
    """Train; returns (params, test accuracy, the step's Jitted, seconds)."""
    rng = np.random.default_rng(seed)
    x_tr, x_te, y_tr, y_te = digits(seed)
    model, p = (mlp, init_mlp(rng)) if kind == "mlp" else (cnn, init_cnn(rng))
    m = tree_map(np.zeros_like, p)
    v = tree_map(np.zeros_like, p)
    step, t, start = make_step(model), 0, time.perf_counter()
    for epoch in range(epochs):
        order, total = rng.permutation(len(x_tr)), 0.0
        for i in range(0, len(x_tr), batch):
            idx = order[i:i + batch]
            t += 1
            p, m, v, loss = step(p, m, v, np.float32(t), x_tr[idx], y_tr[idx])
            total += float(loss) * len(idx)
        log("epoch %d: loss %.4f" % (epoch + 1, total / len(x_tr)))
    seconds = time.perf_counter() - start
    return p, accuracy(model, p, x_te, y_te), step, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", default="mlp", choices=["mlp", "cnn"])
    ap.add_argument("--epochs", type=int, default=20)
    a = ap.parse_args()
    _, acc, step, seconds = train(a.model, a.epochs)
    print("%s: test accuracy %.3f after %d epochs in %.1f s (%d trace, %d compile)"
          % (a.model, acc, a.epochs, seconds, step.traces, step.compiles))


if __name__ == "__main__":
    main()
