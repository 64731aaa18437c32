#!/usr/bin/env python3
"""Generate tessera's bundled default model: one transformer block in IR text.

    python3 scripts/gen_default_model.py [OUTDIR]     (default: models/)

writes
    attention.ir            the block, in canonical IR text (docs/ir.md)
    attention_input.npy     an input x of shape (4, 16)  (seq = 4)
    attention_expected.npy  numpy's result for that input

The block: single-head self-attention (q, k, v projections, scores =
q k^T / sqrt(d), softmax from reduce_max/exp/reduce_sum), an output
projection, a residual add, layer norm, and an MLP with erf GELU and a second
residual. Every framework-level operator is assembled from primitives, as
the ONNX frontend will do. The sequence length is the symbol `seq`, so the
same file runs at any length.

The weights come from a fixed seed. tests/cli/test_cli.py imports
make_weights() and forward() to check tessera at other sequence lengths.
"""
import math
import os
import sys

import numpy as np

D = 16          # model width
HIDDEN = 32     # MLP width
SEQ = 4         # sequence length of the bundled input
EPS = 1e-5      # layer-norm epsilon
SEED = 20241129


def make_weights():
    """The block's parameters, float32, deterministic."""
    rng = np.random.default_rng(SEED)

    def mat(rows, cols):
        return (rng.standard_normal((rows, cols)) / math.sqrt(rows)).astype(np.float32)

    def vec(n, scale):
        return (rng.standard_normal(n) * scale).astype(np.float32)

    return {
        "wq": mat(D, D), "wk": mat(D, D), "wv": mat(D, D), "wo": mat(D, D),
        "gamma": (1 + vec(D, 0.1)).astype(np.float32), "beta": vec(D, 0.1),
        "w1": mat(D, HIDDEN), "b1": vec(HIDDEN, 0.1),
        "w2": mat(HIDDEN, D), "b2": vec(D, 0.1),
    }


def make_input(seq, seed=7):
    return np.random.default_rng(seed).standard_normal((seq, D)).astype(np.float32)


def erf(a):
    return np.vectorize(math.erf, otypes=[np.float64])(a)


def forward(x, w):
    """numpy's computation of the block (float64, for a reference)."""
    x = x.astype(np.float64)
    w = {k: v.astype(np.float64) for k, v in w.items()}
    q, k, v = x @ w["wq"], x @ w["wk"], x @ w["wv"]
    s = q @ k.T / math.sqrt(D)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p = p / p.sum(axis=1, keepdims=True)
    r = x + (p @ v) @ w["wo"]
    mean = r.sum(axis=1, keepdims=True) / D
    c = r - mean
    var = (c * c).sum(axis=1, keepdims=True) / D
    h = c / np.sqrt(var + EPS) * w["gamma"] + w["beta"]
    u = h @ w["w1"] + w["b1"]
    g = 0.5 * u * (1 + erf(u / math.sqrt(2)))
    return (h + g @ w["w2"] + w["b2"]).astype(np.float32)


# ---- IR text in canonical form --------------------------------------------------

def fmt_f32(v):
    """The printer's spelling: the fewest %g digits that read back to the
    same float32 (src/ir/print.c format_float)."""
    v = np.float32(v)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "-inf" if v < 0 else "inf"
    for digits in range(1, 10):
        text = "%.*g" % (digits, float(v))
        if np.float32(float(text)) == v:
            return text
    return "%.17g" % float(v)


def tensor_text(a):
    flat = a.reshape(-1)
    if flat.size > 1 and np.all(flat.view(np.uint32) == flat.view(np.uint32)[0]):
        return "splat(%s)" % fmt_f32(flat[0])
    return "[" + ", ".join(fmt_f32(e) for e in flat) + "]"


def ty(shape):
    return "f32[" + ", ".join(str(d) for d in shape) + "]"


class Writer:
    """Appends node lines; each value is (name, shape)."""

    def __init__(self):
        self.lines = []

    def node(self, name, shape, op, args=(), attrs=""):
        operands = ", ".join("%" + a[0] for a in args)
        tail = " {%s}" % attrs if attrs else ""
        self.lines.append("  %%%s: %s = %s(%s)%s" % (name, ty(shape), op, operands, tail))
        return (name, shape)

    def const(self, name, a):
        return self.node(name, a.shape, "const", (), "value=" + tensor_text(a))

    def bcast(self, name, v, shape, axes):
        dims = "[" + ", ".join(str(d) for d in shape) + "]"
        ax = "[" + ", ".join(str(a) for a in axes) + "]"
        return self.node(name, shape, "broadcast", (v,), "shape=%s, axes=%s" % (dims, ax))

    def matmul(self, name, a, b, contract_b=0):
        shape = (a[1][0], b[1][1 - contract_b])
        return self.node(name, shape, "dot", (a, b), "lhs_contract=[1], rhs_contract=[%d]" % contract_b)

    def scalar(self, name, value, shape, axes=()):
        """A f32 scalar constant broadcast to shape."""
        c = self.const(name, np.array(value, dtype=np.float32))
        return self.bcast(name + "_b", c, shape, axes)


def softmax_rows(w, s, n):
    m = w.node("smax", (n,), "reduce_max", (s,), "axes=[1]")
    mb = w.bcast("smax_b", m, (n, n), (0,))
    e = w.node("e", (n, n), "exp", (w.node("shifted", (n, n), "sub", (s, mb)),))
    z = w.node("esum", (n,), "reduce_sum", (e,), "axes=[1]")
    return w.node("probs", (n, n), "div", (e, w.bcast("esum_b", z, (n, n), (0,))))


def layer_norm(w, r, n, p):
    sd = (n, D)
    count = w.scalar("width", float(D), (n,))
    mean = w.node("mean", (n,), "div", (w.node("rsum", (n,), "reduce_sum", (r,), "axes=[1]"), count))
    c = w.node("centered", sd, "sub", (r, w.bcast("mean_b", mean, sd, (0,))))
    sq = w.node("squares", sd, "mul", (c, c))
    var = w.node("var", (n,), "div", (w.node("sqsum", (n,), "reduce_sum", (sq,), "axes=[1]"), count))
    ve = w.node("var_eps", (n,), "add", (var, w.scalar("eps", EPS, (n,))))
    std = w.node("std", (n,), "sqrt", (ve,))
    norm = w.node("normed", sd, "div", (c, w.bcast("std_b", std, sd, (0,))))
    g = w.bcast("gamma_b", w.const("gamma", p["gamma"]), sd, (1,))
    b = w.bcast("beta_b", w.const("beta", p["beta"]), sd, (1,))
    return w.node("h", sd, "add", (w.node("scaled", sd, "mul", (norm, g)), b))


def mlp(w, h, n, p):
    hd = (n, HIDDEN)
    u0 = w.matmul("up", h, w.const("w1", p["w1"]))
    u = w.node("up_b", hd, "add", (u0, w.bcast("b1_b", w.const("b1", p["b1"]), hd, (1,))))
    root2 = w.node("root2", (), "sqrt", (w.const("two", np.array(2, dtype=np.float32)),))
    us = w.node("u_scaled", hd, "div", (u, w.bcast("root2_b", root2, hd, ())))
    e1 = w.node("erf1", hd, "add", (w.node("erf", hd, "erf", (us,)), w.scalar("one", 1.0, hd)))
    half = w.node("half_u", hd, "mul", (u, w.scalar("half", 0.5, hd)))
    gelu = w.node("gelu", hd, "mul", (half, e1))
    d0 = w.matmul("down", gelu, w.const("w2", p["w2"]))
    sd = (n, D)
    return w.node("down_b", sd, "add", (d0, w.bcast("b2_b", w.const("b2", p["b2"]), sd, (1,))))


def model_text(p):
    w = Writer()
    n, sd = "seq", ("seq", D)
    x = ("x", sd)
    q = w.matmul("q", x, w.const("wq", p["wq"]))
    k = w.matmul("k", x, w.const("wk", p["wk"]))
    v = w.matmul("v", x, w.const("wv", p["wv"]))
    s0 = w.matmul("qk", q, k, contract_b=1)
    s = w.node("scores", (n, n), "div", (s0, w.scalar("sqrt_d", math.sqrt(D), (n, n))))
    probs = softmax_rows(w, s, n)
    ctx = w.matmul("ctx", probs, v)
    attn = w.matmul("attn", ctx, w.const("wo", p["wo"]))
    r = w.node("resid", sd, "add", (x, attn))
    h = layer_norm(w, r, n, p)
    y = w.node("y", sd, "add", (h, mlp(w, h, n, p)))
    head = "graph @attention(%%x: %s) {" % ty(sd)
    return "\n".join([head] + w.lines + ["  return %" + y[0], "}"]) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "models")
    os.makedirs(out, exist_ok=True)
    p = make_weights()
    with open(os.path.join(out, "attention.ir"), "w") as f:
        f.write(model_text(p))
    x = make_input(SEQ)
    np.save(os.path.join(out, "attention_input.npy"), x)
    np.save(os.path.join(out, "attention_expected.npy"), forward(x, p))


if __name__ == "__main__":
    main()
