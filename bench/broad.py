#!/usr/bin/env python3
"""tessera against ONNX Runtime on a broad set of PyTorch-exported models
(issue 32; the models: bench/broad_models.py), with bench/run.py's method,
whose functions it calls: the same ORT session options, a cold compile in
a fresh cache whose outputs are checked against ORT's, timed runs in
rounds alternating between the sides, medians of the rounds' medians.

    .venv/bin/python bench/broad.py                          # the default set, batch 1 and 8, threads 1 and all cores
    .venv/bin/python bench/broad.py --models resnet18,lstm_lm --batches 1 --threads 2 --quick
    .venv/bin/python bench/broad.py --write-doc              # and (re)write docs/perf.md's "Broad benchmark"
    .venv/bin/python bench/broad.py --models list

Per model, batch and thread count, one row: both medians and their ratio,
tessera's cold and warm compile_ms, its kernels and fallback nodes
(`tessera ir --fusion`), and the share of its step time spent in
fallback nodes (one `tessera run --profile` run: the Chrome trace marks
each step the interpreter runs with category "fallback"). A model that
cannot be exported, or that tessera or ORT cannot run, is a row with the
error's first line; outputs that disagree with ORT's are flagged. Either
makes the exit status 1, after every row has run.
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True   # keep bench/ free of __pycache__
sys.path.insert(0, HERE)
import broad_models  # noqa: E402
import doc_sections  # noqa: E402
import run as bench  # noqa: E402

TITLE = "Broad benchmark"   # docs/perf.md's section
SLOW = 1.3                  # a row slower than ORT by more than this is counted in the summary


class Failed(Exception):
    """A row that cannot go on: the stage's one-line reason."""


# ---- arguments -------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(description="tessera vs ONNX Runtime on PyTorch-exported models (bench/README.md)")
    p.add_argument("--models", help="comma-separated models (default: the default set); 'list' lists them all")
    p.add_argument("--batches", default="1,8", help="comma-separated batch sizes (default 1,8)")
    p.add_argument("--threads", help="comma-separated thread counts (default: 1 and every core)")
    p.add_argument("--runs", type=int, default=bench.MIN_RUNS,
                   help="timed runs per side (default %d)" % bench.MIN_RUNS)
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds alternating between the sides; each has ceil(runs/rounds) timed runs (default 3)")
    p.add_argument("--quick", action="store_true", help="5 timed runs: a smoke test, not a result")
    p.add_argument("--tessera", help="the tessera binary (default: build build-bench/ in Release)")
    p.add_argument("--timeout", type=int, default=900,
                   help="seconds one tessera command may take before its row fails (default 900)")
    p.add_argument("--write-doc", action="store_true", help="(re)write docs/perf.md's \"%s\" section" % TITLE)
    p.add_argument("--json", help="also write the raw results to this file")
    a = p.parse_args(argv)
    if a.models == "list":
        for name, m in broad_models.MODELS.items():
            print("%-20s %s%s" % (name, m["desc"], "" if m["default"] else "  (only when named)"))
        sys.exit(0)
    bench.check_counts(a)
    try:
        a.batches = sorted({int(b) for b in a.batches.split(",")})
    except ValueError:
        raise bench.BenchError("--batches takes comma-separated whole numbers, got '%s'" % a.batches)
    if any(b < 1 for b in a.batches):
        raise bench.BenchError("--batches: every batch must be >= 1")
    a.models = a.models.split(",") if a.models else list(broad_models.DEFAULT)
    unknown = [m for m in a.models if m not in broad_models.MODELS]
    if unknown:
        raise bench.BenchError("unknown model%s %s (--models list lists them)" % ("s" if len(unknown) > 1 else "",
                                                                                 ", ".join(unknown)))
    return a


# ---- kernels and fallbacks -----------------------------------------------------------------

def fusion_counts(exe, model, timeout):
    """(kernels, fallback nodes, compiled if/while steps) of the main graph,
    from `tessera ir --fusion`: one line per step, `  kN KIND ...`. The
    kernels inside a compiled if/while's regions are not listed there."""
    text = bench.run_cmd([exe, "ir", model, "--fusion"], what="tessera ir --fusion", timeout=timeout)
    kinds = re.findall(r"(?m)^  k\d+ +(\w+)", text)
    if not kinds:
        raise Failed("tessera ir --fusion: no kernel lines in %r" % text[:80])
    fallbacks, controls = kinds.count("fallback"), kinds.count("control")
    return len(kinds) - fallbacks - controls, fallbacks, controls


def fallback_share(events, runs):
    """The fraction of step time spent in fallback steps, from a
    `--profile` trace of `runs` runs (src/backend/cpu/run.c: one complete
    event per step, its category the kernel's kind, "fallback" for a node
    the interpreter runs, "control" for a compiled if/while whose regions'
    steps are traced inside its interval). The denominator is the
    top-level steps' time, the numerator every fallback event's, nested
    ones included. The first run, the warm-up, is left out: its first
    touches of memory are not what a step costs."""
    ev = sorted((e for e in events if e.get("ph") == "X"), key=lambda e: (e["ts"], -e["dur"]))
    top, end = [], -math.inf
    for e in ev:   # a step that starts after the last top-level one ended is top-level
        if e["ts"] >= end - 0.01:   # ts and dur are written to 0.001 us
            top.append(e)
            end = e["ts"] + e["dur"]
    start = -math.inf
    if runs > 1 and len(top) % runs == 0:   # every run has the same top-level steps
        start = top[len(top) // runs]["ts"] - 0.01
    step_us = sum(e["dur"] for e in top if e["ts"] >= start)
    fallback_us = sum(e["dur"] for e in ev if e["ts"] >= start and e.get("cat") == "fallback")
    return fallback_us / step_us if step_us > 0 else 0.0


def profile_share(exe, model, inputs, threads, env, repeat, tmp, timeout):
    """One `tessera run --profile` (the warm cache in env) and its fallback share."""
    trace = os.path.join(tmp, "trace.json")
    cmd = [exe, "run", model, "--repeat", str(repeat), "--threads", str(threads), "--target", "cpu",
           "--profile", trace]
    for k, v in inputs.items():
        cmd += ["-i", "%s=%s" % (k, v)]
    bench.run_cmd(cmd, env=env, what="tessera run --profile", timeout=timeout)
    with open(trace) as f:
        doc = json.load(f)
    return fallback_share(doc["traceEvents"] if isinstance(doc, dict) else doc, repeat + 1)


# ---- one row -------------------------------------------------------------------------------

EXPORTS = {}   # (model, batch) -> (path, inputs) or the ExportError: each export is tried once per run


def export(name, batch):
    key = (name, batch)
    if key not in EXPORTS:
        try:
            EXPORTS[key] = broad_models.ensure(name, batch)
        except broad_models.ExportError as e:
            EXPORTS[key] = e
    if isinstance(EXPORTS[key], Exception):
        raise Failed(str(EXPORTS[key]))
    return EXPORTS[key]


def first_line(e):
    lines = str(e).strip().splitlines()
    return (lines[0] if lines else type(e).__name__)[:200]


def paired_ratio(ort_rounds, tessera_rounds):
    """The median over rounds of tessera's round median over ORT's in the
    same round: the two sides of a round run back to back, so a slow
    spell of the host that spans a round slows both and cancels, where
    the ratio of the two pooled medians keeps it when the spells fall
    unevenly on the sides."""
    return statistics.median(t / o for o, t in zip(ort_rounds, tessera_rounds))


def bench_row(name, batch, threads, args, exe):
    """One row: the measurements made before a failure, and `error`."""
    spec = broad_models.MODELS[name]
    r = dict(model=name, batch=batch, threads=threads, error=None, agree=None, rtol=spec["rtol"], atol=spec["atol"])
    tmp = tempfile.mkdtemp(prefix="tessera_broad_")
    stage = "export"
    try:
        model, inputs = export(name, batch)
        feed = {k: np.load(v) for k, v in inputs.items()}
        stage = "tessera"
        env = dict(os.environ, TESSERA_CACHE_DIR=bench.cold_cache(os.path.join(tmp, "cache")))
        out_dir = os.path.join(tmp, "out")
        cold = bench.tessera_run(exe, model, inputs, threads, "cpu", 1, env, out_dir, timeout=args.timeout)
        r.update(compile_cold_ms=cold["compile_ms"], cache_cold=cold["cache"])
        stage = "ORT"   # ORT raises its own exceptions; tessera's are BenchErrors
        ort, warm, ref = bench.alternating_rounds(exe, model, inputs, feed, threads, "cpu", args.runs, args.rounds,
                                                  env, timeout=args.timeout)
        r.update(ort_ms=ort["median_ms"], ort_min_ms=ort["min_ms"], ort_init_ms=ort["init_ms"],
                 tessera_ms=warm["median_ms"], tessera_min_ms=warm["min_ms"], ratio=warm["median_ms"] / ort["median_ms"],
                 paired=paired_ratio(ort["rounds_ms"], warm["rounds_ms"]),
                 compile_warm_ms=warm["compile_ms"], cache_warm=warm["cache"], arena=warm["arena"],
                 runs=-(-args.runs // args.rounds) * args.rounds, rounds=args.rounds)
        r["agree"], r["agreement"] = bench.agreement(out_dir, ref, spec["rtol"], spec["atol"])
        # the outputs' scale, next to the difference: a check of outputs
        # near zero would pass whatever the layers before computed
        r["ort_max_abs"] = max((float(np.abs(o).max()) for o in ref if o.size), default=0.0)
        stage = "profile"
        r["kernels"], r["fallbacks"], r["controls"] = fusion_counts(exe, model, args.timeout)
        r["fallback_share"] = profile_share(exe, model, inputs, threads, env, max(3, -(-args.runs // args.rounds)),
                                            tmp, args.timeout)
    except (Failed, bench.BenchError) as e:
        r["error"] = first_line(e)
    except Exception as e:   # ORT's, or a broken trace: the row says so and the run goes on
        r["error"] = "%s: %s: %s" % (stage, type(e).__name__, first_line(e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return r


# ---- reporting -----------------------------------------------------------------------------

COLUMNS = ("model", "batch", "thr", "ORT ms", "tessera ms", "ratio", "paired", "compile cold / warm ms", "kernels",
           "fallback nodes", "fallback time", "agreement (tol=atol+rtol)")


def ms(x):
    return "-" if x is None else "%.3f" % x if x < 10 else "%.2f" % x if x < 100 else "%.1f" % x


def compile_cell(r):
    def one(t, cache):
        return "?" if t is None else "%.0f%s" % (t, "" if cache in (None, "none") else " " + cache)
    if "compile_cold_ms" not in r:
        return "-"
    return "%s / %s" % (one(r["compile_cold_ms"], r["cache_cold"]),
                        one(r["compile_warm_ms"], r["cache_warm"]) if "compile_warm_ms" in r else "-")


def cells(r):
    """A row's cells; a failed row keeps what was measured before it failed."""
    g = r.get
    agree = "FAILED: " + r["error"] if r["error"] else \
        "%s max|ORT|=%.2g tol=%.0e+%.0e" % (r["agreement"], r["ort_max_abs"], r["atol"], r["rtol"])
    if r["error"] and r.get("agreement"):   # a profile failure after the comparison
        agree = "%s; %s" % (r["agreement"], agree)
    fallbacks = "-" if g("fallbacks") is None else \
        "%d%s" % (r["fallbacks"], " (+%d if/while)" % r["controls"] if r["controls"] else "")
    return (r["model"], str(r["batch"]), str(r["threads"]), ms(g("ort_ms")), ms(g("tessera_ms")),
            "-" if g("ratio") is None else "%.2f" % r["ratio"], "-" if g("paired") is None else "%.2f" % r["paired"],
            compile_cell(r),
            "-" if g("kernels") is None else str(r["kernels"]), fallbacks,
            "-" if g("fallback_share") is None else "%.0f%%" % (100 * r["fallback_share"]), agree)


def table(rows):
    cs = [COLUMNS] + [cells(r) for r in rows]
    w = [max(len(c[i]) for c in cs) for i in range(len(COLUMNS))]
    last = len(COLUMNS) - 1
    return ["  ".join(x.ljust(w[i]) if i in (0, last) else x.rjust(w[i]) for i, x in enumerate(c)).rstrip()
            for c in cs]


def markdown(rows):
    def line(cs):
        return "| " + " | ".join(c.replace("|", "\\|") for c in cs) + " |"
    return [line(COLUMNS), "|" + "---|" * len(COLUMNS)] + [line(cells(r)) for r in rows]


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def summary(rows, wall_s):
    """The closing lines: geomeans per thread count and per batch, the
    worst row, the models over SLOW, failures and disagreements."""
    ran = [r for r in rows if r.get("ratio") is not None]
    out = []
    threads, batches = sorted({r["threads"] for r in ran}), sorted({r["batch"] for r in ran})
    # per thread count, then over all of them; per batch, then over all (the
    # "all" entries only where there is more than one to pool)
    for key, what in (("ratio", "geomean tessera/ORT"), ("paired", "geomean paired ratio")):
        for t in threads + ([None] if len(threads) > 1 else []):
            parts = []
            for b in batches + ([None] if len(batches) > 1 else []):
                rs = [r[key] for r in ran if t in (None, r["threads"]) and b in (None, r["batch"]) and key in r]
                if rs:
                    parts.append("%s %.2f (%s)" % ("batch %d" % b if b else "all batches", geomean(rs),
                                                   plural(len(rs), "row")))
            out.append("%s, %s: %s" % (what, plural(t, "thread") if t else "all thread counts", ", ".join(parts)))
    if ran:
        w = max(ran, key=lambda r: r["ratio"])
        out.append("worst: %s, batch %d, %s: %.2f" % (w["model"], w["batch"], plural(w["threads"], "thread"),
                                                      w["ratio"]))
        slow = {}
        for r in ran:
            if r["ratio"] > SLOW:
                slow[r["model"]] = max(slow.get(r["model"], 0), r["ratio"])
        out.append("models over %.1fx: %d of %d%s (%d of %d rows)" % (
            SLOW, len(slow), len({r["model"] for r in ran}),
            ": " + ", ".join("%s %.2f" % kv for kv in sorted(slow.items(), key=lambda kv: -kv[1])) if slow else "",
            sum(r["ratio"] > SLOW for r in ran), len(ran)))
        cold = [r for r in ran if r.get("compile_cold_ms") is not None]
        if cold:
            c = max(cold, key=lambda r: r["compile_cold_ms"])
            out.append("cold compile: median %.0f ms, max %.0f ms (%s, batch %d)" % (
                statistics.median(r["compile_cold_ms"] for r in cold), c["compile_cold_ms"], c["model"], c["batch"]))
        shares = {}   # model -> its rows' fallback shares, in %
        for r in ran:
            if r.get("fallback_share") is not None:
                shares.setdefault(r["model"], []).append(100 * r["fallback_share"])
        fb = sorted(((m, min(v), max(v)) for m, v in shares.items() if max(v) >= 0.5), key=lambda x: -x[2])
        out.append("fallback time (share of step time, over the rows) >= 0.5%%: %s" % (
            ", ".join("%s %.0f%%" % (m, hi) if round(lo) == round(hi) else "%s %.0f-%.0f%%" % (m, lo, hi)
                      for m, lo, hi in fb) if fb else "none"))
    bad = sorted({r["model"] for r in rows if r["agree"] is False})
    failed = [r for r in rows if r["error"]]
    out.append("outputs disagreeing with ORT: %s" % (", ".join(bad) if bad else "none"))
    out.append("failed rows: %s" % ("; ".join("%s b%d t%d: %s" % (r["model"], r["batch"], r["threads"], r["error"])
                                             for r in failed) if failed else "none"))
    out.append("wall time %.0f s" % wall_s)
    return out


def machine_line(exe):
    """bench/run.py's machine description, less the peaks it has not
    measured here; its commit is the working tree's, so a binary given by
    --tessera is named."""
    import torch
    desc = [(k, v) for k, v in bench.machine({}) if k != "measured peaks"]
    if exe != os.path.join(ROOT, "build-bench", "tessera"):
        desc.append(("tessera binary", exe))
    return "; ".join("%s: %s" % kv for kv in desc) + "; PyTorch %s (the exporter)" % torch.__version__


def write_doc(rows, args, command, wall_s, exe):
    runs = -(-args.runs // args.rounds) * args.rounds
    body = ["Written by `bench/broad.py --write-doc`; rerun it rather than edit this section (bench/README.md "
            "explains the models and the columns).", "", "```", command, "```", "",
            machine_line(exe) + ".", "",
            "Target `cpu`; %d timed runs per side in %d rounds alternating between the sides, each after one "
            "warm-up%s; ratio = tessera / ORT (below 1: tessera is faster), of the medians of the rounds' medians; "
            "paired = the median over rounds of the two sides' ratio within the round (a slow spell of the host "
            "that spans a round cancels)." % (
                runs, args.rounds, "" if runs >= bench.MIN_RUNS else
                " (fewer than %d: a smoke test, not a result)" % bench.MIN_RUNS), ""]
    body += markdown(rows) + [""] + [s + "  " for s in summary(rows, wall_s)]
    path = os.path.join(ROOT, "docs", "perf.md")
    doc_sections.write_section(path, TITLE, "\n".join(body))
    print("wrote %s (section \"%s\")" % (os.path.relpath(path, ROOT), TITLE))


# ---- main ----------------------------------------------------------------------------------

def reproducible(argv):
    """argv without what does not change the results (--json FILE), for
    the command docs/perf.md says to rerun."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--json":
            skip = True
        elif not a.startswith("--json="):
            out.append(a)
    return out


def main(argv):
    t0 = time.monotonic()
    args = parse_args(argv)
    command = ("bench/broad.py " + " ".join(reproducible(argv))).strip()
    exe = os.path.abspath(args.tessera) if args.tessera else bench.build_tessera()
    if not os.access(exe, os.X_OK):
        raise bench.BenchError("no tessera binary at %s" % exe)
    bench.check_target(exe, "cpu")
    print("%s, batches %s, threads %s; %d timed runs per side in %d alternating rounds%s" % (
        plural(len(args.models), "model"), ",".join(map(str, args.batches)), ",".join(map(str, args.threads)),
        -(-args.runs // args.rounds) * args.rounds, args.rounds,
        "" if args.runs >= bench.MIN_RUNS else " (fewer than %d: a smoke test, not a result)" % bench.MIN_RUNS))
    head = table([])[0]
    print(head, flush=True)
    rows = []
    for name in args.models:
        for b in args.batches:
            for t in args.threads:
                rows.append(bench_row(name, b, t, args, exe))
                print(table(rows[-1:])[1], flush=True)   # as it comes; columns aligned in the final table
    wall_s = time.monotonic() - t0
    print()
    print("\n".join(table(rows)))
    print("\n".join(summary(rows, wall_s)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(command=command, machine=machine_line(exe), wall_s=wall_s, rows=rows), f, indent=1)
    if args.write_doc:
        write_doc(rows, args, command, wall_s, exe)
    bad = sorted({r["model"] for r in rows if r["error"] or r["agree"] is False})
    if bad:
        print("bench: failed or disagreeing with ORT: %s" % ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except bench.BenchError as e:
        print("bench: %s" % e, file=sys.stderr)
        sys.exit(1)
