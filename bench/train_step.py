"""A training step (forward, backward, Adam update) of the digits MLP and
CNN of examples/train_digits.py: tessera (tessera.jit + tessera.grad),
PyTorch eager (torch.optim.Adam) and, when it is installed, JAX (jax.jit of
the same step written with jax.numpy), same batch (64), same threads, in
one run. Each thread count runs in its own process (the thread settings
must precede the libraries' imports). Median of the per-round medians.

    .venv/bin/python bench/train_step.py [--threads 1,2] [--steps 100] [--rounds 5]
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BATCH = 64


def timed(step, steps, rounds):
    """Median over rounds of the median step time (ms), after a warm-up."""
    for _ in range(10):
        step()
    meds = []
    for _ in range(rounds):
        ts = []
        for _ in range(steps):
            t0 = time.perf_counter()
            step()
            ts.append((time.perf_counter() - t0) * 1e3)
        meds.append(statistics.median(ts))
    return statistics.median(meds)


def tessera_steps(ex, x, y):
    import numpy as np
    out = {}
    for kind, model, init in (("mlp", ex.mlp, ex.init_mlp), ("cnn", ex.cnn, ex.init_cnn)):
        p = init(np.random.default_rng(0))
        st = {"p": p, "m": ex.tree_map(np.zeros_like, p), "v": ex.tree_map(np.zeros_like, p), "t": 0}
        step = ex.make_step(model, threads=int(os.environ["TS_BENCH_THREADS"]))

        def run(st=st, step=step):
            st["t"] += 1
            st["p"], st["m"], st["v"], loss = step(st["p"], st["m"], st["v"], np.float32(st["t"]), x, y)
        out[kind] = run
    return out


def torch_steps(x, y):
    import torch
    xt, yt = torch.tensor(x), torch.tensor(y)
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    cnn = torch.nn.Sequential(torch.nn.Unflatten(1, (1, 8, 8)), torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.MaxPool2d(2), torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.Flatten(), torch.nn.Linear(32 * 4 * 4, 10))
    out = {}
    for kind, model in (("mlp", mlp), ("cnn", cnn)):
        opt = torch.optim.Adam(model.parameters(), lr=3e-3)

        def run(model=model, opt=opt):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xt), yt).backward()
            opt.step()
        out[kind] = run
    return out


def jax_steps(x, y):
    import jax
    import jax.numpy as jnp
    import numpy as np
    key = np.random.default_rng(0)

    def he(*shape):
        return jnp.asarray(key.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:])), jnp.float32)

    def mlp(p, x):
        return jnp.maximum(x @ p["w1"] + p["b1"], 0) @ p["w2"] + p["b2"]

    def cnn(p, x):
        dn = ("NCHW", "OIHW", "NCHW")
        h = jax.lax.conv_general_dilated(x.reshape(-1, 1, 8, 8), p["c1"], (1, 1), ((1, 1), (1, 1)),
                                         dimension_numbers=dn) + p["b1"][None, :, None, None]
        h = jax.lax.reduce_window(jnp.maximum(h, 0), -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        h = jax.lax.conv_general_dilated(h, p["c2"], (1, 1), ((1, 1), (1, 1)), dimension_numbers=dn) + \
            p["b2"][None, :, None, None]
        return jnp.maximum(h, 0).reshape(-1, 512) @ p["w"] + p["b"]

    params = {"mlp": {"w1": he(64, 128), "b1": jnp.zeros(128), "w2": he(128, 10), "b2": jnp.zeros(10)},
              "cnn": {"c1": he(16, 1, 3, 3), "b1": jnp.zeros(16), "c2": he(32, 16, 3, 3), "b2": jnp.zeros(32),
                      "w": he(512, 10), "b": jnp.zeros(10)}}
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    out = {}
    for kind, model in (("mlp", mlp), ("cnn", cnn)):
        def loss(p, model=model):
            logits = model(p, xj)
            return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), yj[:, None], axis=1))

        @jax.jit
        def step(p, m, v, t, loss=loss):
            g = jax.grad(loss)(p)
            m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, g)
            v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
            p = jax.tree_util.tree_map(lambda p, m, v: p - 3e-3 * (m / (1 - 0.9 ** t)) /
                                       (jnp.sqrt(v / (1 - 0.999 ** t)) + 1e-8), p, m, v)
            return p, m, v
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params[kind])
        st = {"s": (params[kind], zeros, zeros), "t": 0}

        def run(st=st, step=step):
            st["t"] += 1
            st["s"] = step(*st["s"], jnp.float32(st["t"]))
            jax.block_until_ready(st["s"])
        out[kind] = run
    return out


def worker(threads, steps, rounds):
    os.environ["TS_BENCH_THREADS"] = str(threads)
    os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=%s intra_op_parallelism_threads=%d" % (
        "false" if threads == 1 else "true", threads)
    import torch
    torch.set_num_threads(threads)
    spec = importlib.util.spec_from_file_location("train_digits", os.path.join(ROOT, "examples", "train_digits.py"))
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    x_tr, _, y_tr, _ = ex.digits()
    x, y = x_tr[:BATCH], y_tr[:BATCH]
    runners = {"tessera": tessera_steps(ex, x, y), "torch": torch_steps(x, y)}
    try:
        runners["jax"] = jax_steps(x, y)
    except ImportError:
        pass
    res = {}
    for kind in ("mlp", "cnn"):
        # interleaved rounds: each runtime's rounds spread over the same stretch of time
        per = {name: [] for name in runners}
        for _ in range(rounds):
            for name, r in runners.items():
                per[name].append(timed(r[kind], steps, 1))
        res[kind] = {name: statistics.median(v) for name, v in per.items()}
    print(json.dumps(res))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--worker", type=int)
    a = ap.parse_args()
    if a.worker:
        return worker(a.worker, a.steps, a.rounds)
    print("| model | threads | tessera ms | PyTorch eager ms | tessera / PyTorch | JAX ms | tessera / JAX |")
    print("|---|---|---|---|---|---|---|")
    for t in [int(s) for s in a.threads.split(",")]:
        out = subprocess.run([sys.executable, __file__, "--worker", str(t), "--steps", str(a.steps), "--rounds",
                              str(a.rounds)], capture_output=True, text=True, check=True).stdout
        res = json.loads(out.strip().splitlines()[-1])
        for kind in ("mlp", "cnn"):
            r = res[kind]
            jx = r.get("jax")
            print("| %s | %d | %.3f | %.3f | %.2f | %s | %s |" % (
                kind, t, r["tessera"], r["torch"], r["tessera"] / r["torch"], "%.3f" % jx if jx else "-",
                "%.2f" % (r["tessera"] / jx) if jx else "-"))


if __name__ == "__main__":
    main()
