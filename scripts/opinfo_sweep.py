#!/usr/bin/env python3
"""opinfo_sweep.py — PyTorch's own operator tests through the tessera
backend, the way PyTorch tests Inductor: every OpInfo entry of
torch.testing._internal.common_methods_invocations.op_db, float32 on the
CPU, each sample compiled with torch.compile(backend=tessera) and compared
with eager PyTorch.

    .venv/bin/python scripts/opinfo_sweep.py                  # every entry
    .venv/bin/python scripts/opinfo_sweep.py --ops add,mul    # some
    .venv/bin/python scripts/opinfo_sweep.py --every 5        # every 5th entry
    .venv/bin/python scripts/opinfo_sweep.py --samples 3 --log sweep.tsv
    .venv/bin/python scripts/opinfo_sweep.py --backward       # gradients

Each entry is one of:
  compiled  every sample matches eager and ran in tessera regions, no
            operator left to PyTorch;
  fallback  every sample matches eager, some operators ran in PyTorch;
  failed    a sample differs from eager or raised where eager did not;
  skipped   no float32 sample eager can run, or an output that is not a
            tensor.
With --backward, the entries PyTorch marks as supporting autograd: each
sample's inputs require gradients, and the gradients of sum(outputs *
seeded random cotangents) are compared (the forward and the backward
graph AOTAutograd makes both go through the backend; "compiled" needs
both with nothing left to PyTorch).
The empty family's values are unspecified: only shapes and dtypes are
compared for them.
Random entries (eager answers differently when called twice; OpInfo's
fixed-seed wrapper is taken off so Dynamo can trace them) cannot match
eager's values: their compiled and eager outputs are drawn many times and
compared as distributions (two-sample Kolmogorov-Smirnov on the pooled
values of each output, at a false-alarm rate near 1e-6), and the compiled
draws must differ from call to call as eager's do.
Tolerances: torch.testing.assert_close's float32 defaults (rtol 1.3e-6,
atol 1e-5) widened to rtol 1e-4, atol 1e-5 (atol 1e-4 for gradients):
tessera reassociates sums and uses its own exp/log/erf. A forward result
that misses eager's still passes when it is within the tolerance of
eager's float64 result, widened by eager's own float32 error there: a
lowering that computes in f64 (matrix_exp) can be more exact than eager,
which is no wrong answer. Needs expecttest and hypothesis (importing the
OpInfo database does) and the installed package. Prints one line per entry
and the counts; --log writes them as TSV (name, result, detail).
tests/python/test_torch_opinfo.py runs a fixed part of it in CI against
tests/torch_opinfo/expected_failures.txt.
"""
import argparse
import os
import sys
import tempfile
import time
import warnings

RTOL, ATOL = 1e-4, 1e-5
# gradients sum over broadcast and reduced dims and cancel to zero where
# eager's do: near-zero elements get an absolute 1e-4 (a 1-element layer
# norm's gradient is exactly 0 in eager and 3.7e-5 reassociated: its
# terms are scaled by 1/sqrt(eps) = 316)
BACKWARD_ATOL = 1e-4
# entries whose values are unspecified (uninitialised memory): only the
# shape and dtype of what they return can be compared
UNSPECIFIED = ("empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided")


def entry_name(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def leaves(sample):
    """The sample's tensors and a function of them that calls the op."""
    import torch
    tensors = []

    def lift(v):
        if isinstance(v, torch.Tensor):
            tensors.append(v)
            return ("T", len(tensors) - 1)
        if isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v):
            return ("S", type(v), [lift(x) for x in v])
        return ("V", v)

    def put(spec, xs):
        if spec[0] == "T":
            return xs[spec[1]]
        if spec[0] == "S":
            return spec[1](put(s, xs) for s in spec[2])
        return spec[1]

    inp = lift(sample.input)
    args = [lift(a) for a in sample.args]
    kwargs = {k: lift(v) for k, v in sample.kwargs.items()}
    return tensors, lambda op: (lambda *xs: op(put(inp, xs), *[put(a, xs) for a in args],
                                              **{k: put(v, xs) for k, v in kwargs.items()}))


def flat(out):
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        r = []
        for o in out:
            sub = flat(o)
            if sub is None:
                return None
            r += sub
        return r
    return None


def gradients(fn, tensors, out):
    """The gradients of sum(out * cotangent) with respect to the float
    tensors that require them (the cotangents seeded, so compiled and
    eager get the same ones), or None where there is nothing to
    differentiate."""
    import torch
    outs = [o for o in flat(out) if o.is_floating_point() and o.requires_grad]
    wrt = [t for t in tensors if t.requires_grad]
    if not outs or not wrt:
        return None
    g = torch.Generator().manual_seed(0)
    loss = sum((o * torch.randn(o.shape, generator=g, dtype=o.dtype)).sum() for o in outs)
    return [torch.zeros_like(t) if d is None else d
            for t, d in zip(wrt, torch.autograd.grad(loss, wrt, allow_unused=True))]


# two-sample KS critical value c(alpha) = sqrt(-ln(alpha / 2) / 2), alpha = 1e-6
KS_C = 2.69
# draws per side for a random entry: enough values for KS, bounded time
RANDOM_VALUES = 20000


def unseeded():
    """OpInfo's random entries call their op through wrapper_set_seed
    (freeze the generator, seed 42), which Dynamo cannot trace: replace it
    with a plain call while the sweep runs; returns the restore."""
    import torch.testing._internal.common_methods_invocations as cmi
    saved = cmi.wrapper_set_seed
    cmi.wrapper_set_seed = lambda op, *args, **kwargs: op(*args, **kwargs)
    return lambda: setattr(cmi, "wrapper_set_seed", saved)


def ks_distance(a, b):
    """The largest gap between the empirical CDFs of a and b (NaN sorts
    last, as +inf)."""
    import torch
    a, b = (torch.nan_to_num(t.double().flatten(), nan=float("inf")).sort().values for t in (a, b))
    x = torch.cat([a, b])
    fa = torch.searchsorted(a, x, right=True).double() / len(a)
    fb = torch.searchsorted(b, x, right=True).double() / len(b)
    return (fa - fb).abs().max().item() if len(x) else 0.0


def same_draw(a, b, tol=None):
    """Whether two calls' outputs are equal (NaN equal to NaN), or within
    tol (assert_close's keywords); tensors that cannot be compared so
    (sparse, float8, complex32) count as equal: the entry is then checked
    value by value as a deterministic one."""
    import torch
    try:
        if all(torch.equal(torch.nan_to_num(x.detach()), torch.nan_to_num(y.detach())) for x, y in zip(a, b)):
            return True
    except (NotImplementedError, RuntimeError, TypeError):
        return True
    if tol is None:
        return False
    try:
        for x, y in zip(a, b):
            torch.testing.assert_close(x.detach(), y.detach(), equal_nan=True, check_stride=False, **tol)
        return True
    except AssertionError:
        return False
    except (NotImplementedError, RuntimeError, TypeError):
        return True


def in_float64(fn, tensors):
    """fn's flat outputs with its float32 inputs in float64 ([] if eager
    cannot run it so)."""
    import torch
    try:
        out = flat(fn(*[t.double() if t.dtype == torch.float32 else
                        t.cdouble() if t.dtype == torch.complex64 else t for t in tensors]))
    except Exception:
        return []
    return out or []


def closer_than_eager(got, want, exact, tol):
    """Whether got is within the tolerance of eager's float64 result
    widened by eager's own float32 error there: tessera computing more
    exactly than eager is no wrong answer."""
    import torch
    if exact.shape != got.shape or not exact.is_floating_point() and not exact.is_complex():
        return False
    exact = exact.to(got.dtype.to_complex() if got.is_complex() else torch.float64)
    g, w = got.to(exact.dtype), want.to(exact.dtype)
    both_nan = torch.isnan(g) & torch.isnan(exact) if not g.is_complex() else torch.zeros_like(g, dtype=torch.bool)
    slack = (w - exact).abs().nan_to_num(0) + tol.get("atol", 0) + tol.get("rtol", 0) * exact.abs()
    return bool(((g - exact).abs() <= slack)[~both_nan].all())


def compare_random(compiled, eager, fresh, want_flat, k):
    """None, or why compiled's outputs are not distributed as eager's."""
    import torch
    numel = max(1, sum(w.numel() for w in want_flat))
    n = max(30, min(300, RANDOM_VALUES // numel))
    got = [flat(compiled(*fresh())) for _ in range(n)]
    want = [want_flat] + [flat(eager(*fresh())) for _ in range(n - 1)]
    for j, w in enumerate(want_flat):
        g = got[0][j]
        if g.shape != w.shape or g.dtype != w.dtype:
            return "sample %d: %s%s, eager %s%s" % (k, g.dtype, tuple(g.shape), w.dtype, tuple(w.shape))
    got_fixed, want_fixed = (all(same_draw(x[0], d) for d in x[1:]) for x in (got, want))
    if got_fixed and not want_fixed:
        return "sample %d: every compiled call drew the same numbers, eager's differ" % k
    if got_fixed and want_fixed and same_draw(got[0], want[0], dict(rtol=RTOL, atol=ATOL)):
        return None   # a sample of a random entry that draws nothing (dropout off): equal values
    for j in range(len(want_flat)):
        a = torch.stack([d[j].detach() for d in got])
        b = torch.stack([d[j].detach() for d in want])
        if a.numel() == 0:   # an empty sample of a random entry: its shape was compared
            continue
        dist, limit = ks_distance(a, b), KS_C * (2.0 / a.numel()) ** 0.5
        if dist > limit:
            return "sample %d output %d: distributed unlike eager (KS distance %.3f > %.3f)" % (k, j, dist, limit)
    return None


def run_entry(op, samples, cache_dir, backward=False):
    restore = unseeded()
    try:
        return _run_entry(op, samples, cache_dir, backward)
    finally:
        restore()


def _run_entry(op, samples, cache_dir, backward=False):
    """(result, detail) for one OpInfo entry; with backward, its
    gradients (compiled forward and backward graphs) against eager's."""
    import torch
    import torch._dynamo
    import tessera.torch as tt
    backend = lambda gm, ex: tt.backend(gm, ex, options={"cache_dir": cache_dir})  # noqa: E731
    ran = 0
    fell_back = []
    random = False
    if backward and not op.supports_autograd:
        return "skipped", "no autograd"
    try:
        sample_iter = op.sample_inputs("cpu", torch.float32, requires_grad=backward)
    except Exception as e:   # the entry does not support float32 on the CPU
        return "skipped", "no float32 samples (%s)" % type(e).__name__
    for k, sample in enumerate(sample_iter):
        if k >= samples:
            break
        tensors, make = leaves(sample)
        fn = make(op.op)

        def fresh():
            return [t.detach().clone().requires_grad_(t.requires_grad) for t in tensors]
        try:
            xs = fresh()
            want = fn(*xs)
            if backward:
                want = gradients(fn, xs, want)
                if want is None:
                    continue
        except Exception:
            continue   # eager refuses this sample: nothing to compare
        want_flat = flat(want)
        if want_flat is None:
            return "skipped", "an output that is not a tensor"
        # random: eager's own second call differs beyond the tolerance
        # (pca_lowrank's randomized result agrees to rounding: compared as
        # deterministic)
        # an entry found random once stays random: a small sample's draws
        # can agree by chance (fractional max pooling of a 4x5 plane)
        random = random or (not backward and op.name not in UNSPECIFIED and
                            not same_draw(want_flat, flat(fn(*fresh())) or [], dict(rtol=RTOL, atol=ATOL)))
        torch._dynamo.reset()
        start = len(tt.REPORT.graphs)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                xs = fresh()
                compiled = torch.compile(fn, backend=backend, dynamic=False)
                got = compiled(*xs)
                if backward:
                    got = gradients(fn, xs, got)
                why = random and compare_random(compiled, fn, fresh, want_flat, k)
        except Exception as e:
            return "failed", "sample %d raised %s: %s" % (k, type(e).__name__, str(e).splitlines()[0][:200]
                                                          if str(e) else "")
        if why:
            return "failed", why
        got_flat = flat(got)
        if got_flat is None or len(got_flat) != len(want_flat):
            return "failed", "sample %d: outputs differ in structure" % k
        exact = None   # eager in float64, computed when a result misses eager's float32 one
        for j, (g, w) in enumerate(zip(got_flat, want_flat)):
            if op.name in UNSPECIFIED or random:
                if g.shape != w.shape or g.dtype != w.dtype:
                    return "failed", "sample %d: %s%s, eager %s%s" % (k, g.dtype, tuple(g.shape), w.dtype,
                                                                    tuple(w.shape))
                continue
            # the float formats tessera computes in (complex as pairs of them) get the tolerances; others compare exactly
            tol = dict(rtol=RTOL, atol=BACKWARD_ATOL if backward else ATOL) if w.dtype in (torch.float32, torch.float64, torch.complex64, torch.complex128) else dict(rtol=0, atol=0) \
                if not w.is_floating_point() or w.element_size() == 1 else {}
            try:
                torch.testing.assert_close(g, w, equal_nan=True, check_stride=False, **tol)
            except AssertionError as e:
                if exact is None and not backward:
                    exact = in_float64(fn, fresh())
                if not (len(exact or []) > j and closer_than_eager(g, w, exact[j], tol)):
                    return "failed", "sample %d: %s" % (k, " ".join(str(e).split())[:200])
        ran += 1
        for g in tt.REPORT.graphs[start:]:
            fell_back += [op_ for op_, _ in g["fallbacks"]]
        if not tt.REPORT.graphs[start:] or (backward and all(g["kind"] != "backward"
                                                               for g in tt.REPORT.graphs[start:])):
            fell_back.append("(no %sgraph reached the backend)" % ("backward " if backward else ""))
    if not ran:
        return "skipped", "no float32 sample eager can run"
    if fell_back:
        return "fallback", ", ".join(sorted(set(fell_back)))[:200]
    return "compiled", "%d samples" % ran


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ops", help="comma-separated entry names (name or name.variant)")
    ap.add_argument("--every", type=int, default=1, help="every Nth entry of op_db")
    ap.add_argument("--samples", type=int, default=3, help="samples per entry (default 3)")
    ap.add_argument("--log", help="write name, result, detail as TSV")
    ap.add_argument("--backward", action="store_true",
                    help="compare gradients (forward and backward compiled) instead of outputs")
    args = ap.parse_args(argv)
    os.environ.setdefault("TORCH_LOGS", "-dynamo")
    from torch.testing._internal.common_methods_invocations import op_db
    want = set(args.ops.split(",")) if args.ops else None
    entries = [op for op in op_db if want is None or entry_name(op) in want or op.name in want]
    entries = entries[::args.every]
    counts = {}
    rows = []
    t0 = time.time()
    with tempfile.TemporaryDirectory() as cache:
        for op in entries:
            try:
                result, detail = run_entry(op, args.samples, cache, args.backward)
            except Exception as e:   # counted against tessera: the sweep itself must go on
                result, detail = "failed", "the sweep raised %s: %s" % (type(e).__name__, str(e)[:160])
            counts[result] = counts.get(result, 0) + 1
            rows.append((entry_name(op), result, detail))
            print("%-40s %-9s %s" % (entry_name(op), result, detail), flush=True)
    if args.log:
        with open(args.log, "w") as f:
            for r in rows:
                f.write("\t".join(r) + "\n")
    total = len(entries)
    print("%d entries in %.0f s: %s" % (total, time.time() - t0, ", ".join(
        "%d %s (%.0f%%)" % (counts[k], k, 100.0 * counts[k] / total) for k in ("compiled", "fallback", "failed",
                                                                                "skipped") if k in counts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
