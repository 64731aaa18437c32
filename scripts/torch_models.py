#!/usr/bin/env python3
"""torch_models.py — the models of bench/torch_zoo.py through
torch.compile(backend="tessera"), checked against eager PyTorch (issue 31,
item 7): inference output, then one training step (loss and every
parameter's gradient), with the graphs Dynamo made, the regions tessera
compiled and the operators left to PyTorch.

    .venv/bin/python scripts/torch_models.py                 # every model
    .venv/bin/python scripts/torch_models.py --models gpt2_tiny,lstm_lm --no-train

tests/python/test_torch_models.py runs check() on the small models in CI;
this script runs all of them (the large torchvision ones take minutes to
compile on two cores) and prints the table docs/torch.md shows."""
import argparse
import copy
import os
import sys
import tempfile
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import torch_zoo  # noqa: E402

# Gradients are compared with float64 eager's, per parameter relative to
# its norm: within GRAD_TOL, or within GRAD_MARGIN times eager float32's
# own error where the model is ill-conditioned (batch norm in training
# over a few values per channel, e.g. resnet18 at 96x96 in its last
# stage, amplifies float32 rounding: eager float32 is then 6e-3 off
# float64 itself at batch 8)
GRAD_TOL = 1e-4
GRAD_MARGIN = 10
OUT_TOL = 1e-4


def flat(o):
    import torch
    if isinstance(o, torch.Tensor):
        return [o]
    return [t for x in o for t in flat(x)]


def rel_err(got, want):
    return max(((g - w).abs().max() / w.abs().max().clamp_min(1e-6)).item() for g, w in zip(flat(got), flat(want)))


def pseudo_loss(out):
    """sum(first output * a seeded random cotangent): every parameter gets
    a gradient of its own scale (a mean of squares would have none through
    a final layer norm, whose output's squares sum to a constant)."""
    import torch
    o = flat(out)[0]
    g = torch.Generator().manual_seed(0)
    return (o * torch.randn(o.shape, generator=g)).sum() / o.numel() ** 0.5


def deterministic_train(model):
    """Training mode without the random parts (dropout, stochastic depth),
    so compiled and eager can be compared value for value."""
    import torch
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout) or type(m).__name__ == "StochasticDepth":
            m.eval()
    return model


def check(name, cache_dir, train=True, batch=2):
    """A dict of what was measured; raises AssertionError where compiled
    and eager disagree."""
    import torch
    import torch._dynamo
    import tessera.torch as tt
    torch._dynamo.config.allow_rnn = True

    def backend(gm, ex):
        return tt.backend(gm, ex, options={"cache_dir": cache_dir})
    model, xs = torch_zoo.build(name, batch=batch)
    r = {"model": name}
    torch._dynamo.reset()
    t0 = time.time()
    with torch.no_grad():
        report = tt.explain(model, *xs, cache_dir=cache_dir)
        r["compile_s"] = time.time() - t0
        r["graphs"], r["regions"] = len(report.graphs), report.regions
        r["fallbacks"] = sorted({op for op, _ in report.fallbacks})
        torch._dynamo.reset()
        got = torch.compile(model, backend=backend)(*xs)
        want = model(*xs)
    r["out_err"] = rel_err(got, want)
    assert r["out_err"] <= OUT_TOL, "%s: inference output differs from eager by %.2e" % (name, r["out_err"])
    if not train:
        return r
    ref = deterministic_train(copy.deepcopy(model))
    exact = deterministic_train(copy.deepcopy(model).double())
    deterministic_train(model)
    torch._dynamo.reset()
    n0 = len(tt.REPORT.graphs)
    loss = pseudo_loss(torch.compile(model, backend=backend)(*xs))
    loss.backward()
    r["train_fallbacks"] = sorted({op for g in tt.REPORT.graphs[n0:] for op, _ in g["fallbacks"]})
    want = pseudo_loss(ref(*xs))
    want.backward()
    out64 = exact(*[x.double() if x.is_floating_point() else x for x in xs])
    pseudo_loss(out64).backward()
    # the loss sums terms of either sign: relative to the sum of their
    # magnitudes (its conditioning), not to a total that may cancel to ~0
    o64 = flat(out64)[0].detach()
    g = torch.Generator().manual_seed(0)
    scale = (o64.abs() * torch.randn(o64.shape, generator=g, dtype=o64.dtype).abs()).sum().item() / o64.numel() ** 0.5
    r["loss_err"] = abs(loss.item() - want.item()) / max(scale, 1e-12)
    assert r["loss_err"] <= OUT_TOL, "%s: training loss differs from eager by %.2e" % (name, r["loss_err"])
    worst = worst_eager = 0.0
    # a gradient that is zero in exact arithmetic (a squeeze-excitation
    # bias after a saturated sigmoid, say) is rounding noise in both:
    # measured against a floor of 1e-6 of the largest gradient's norm
    floor = 1e-6 * max(e.grad.norm().item() for e in exact.parameters() if e.grad is not None)
    for (pname, p), q, e in zip(model.named_parameters(), ref.parameters(), exact.parameters()):
        if q.grad is None:
            # a parameter only an unused output reads: AOTAutograd gives
            # it zeros where eager leaves None
            assert p.grad is None or not p.grad.any(), "%s: %s has a gradient eager does not" % (name, pname)
            continue
        scale = e.grad.norm().clamp_min(floor)
        err = ((p.grad.double() - e.grad).norm() / scale).item()
        err_eager = ((q.grad.double() - e.grad).norm() / scale).item()
        assert err <= max(GRAD_TOL, GRAD_MARGIN * err_eager), \
            "%s: %s's gradient is %.2e off float64's (eager's float32: %.2e)" % (name, pname, err, err_eager)
        worst, worst_eager = max(worst, err), max(worst_eager, err_eager)
    r["grad_err_eager"] = worst_eager
    r["grad_err"] = worst
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(torch_zoo.NAMES))
    ap.add_argument("--no-train", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    os.environ.setdefault("TORCH_LOGS", "-dynamo")
    print("| model | Dynamo graphs | tessera regions | fallbacks (inference) | output vs eager | "
          "training: fallbacks | loss vs eager | worst gradient vs float64 (eager float32's) | explain + compile s |")
    print("|---|---|---|---|---|---|---|---|---|")
    failed = 0
    with tempfile.TemporaryDirectory() as cache:
        for name in args.models.split(","):
            try:
                r = check(name, cache, train=not args.no_train)
            except AssertionError as e:
                failed += 1
                print("| %s | FAILED: %s |" % (name, e), flush=True)
                continue
            print("| %s | %d | %d | %s | %.1e | %s | %s | %s | %.1f |" % (
                name, r["graphs"], r["regions"], ", ".join(r["fallbacks"]) or "none", r["out_err"],
                ", ".join(r.get("train_fallbacks", [])) or ("none" if "loss_err" in r else "-"),
                "%.1e" % r["loss_err"] if "loss_err" in r else "-",
                "%.1e (%.1e)" % (r["grad_err"], r["grad_err_eager"]) if "grad_err" in r else "-",
                r["compile_s"]), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
