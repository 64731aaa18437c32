#!/usr/bin/env python3
"""tessera against ONNX Runtime on a broad set of PyTorch-exported models
(issue 32; bench/broad_models.py), side by side in one run, with
bench/run.py's discipline: the same ORT settings, alternating rounds,
medians, a cold compile in a fresh cache, outputs checked against ORT.

    .venv/bin/python bench/broad.py                          # every model, batch 1 and 8, threads 1 and all cores
    .venv/bin/python bench/broad.py --models resnet18,lstm_lm --batches 1 --threads 2
    .venv/bin/python bench/broad.py --write-doc              # and (re)write docs/perf.md's "Broad benchmark"

Per model, batch and thread count: both medians and their ratio, the cold
and warm compile (cold: this model's own code; the templates every
program links are built once per machine, D112), kernels and fallback
nodes, and the share of step time spent in fallback nodes (from one
`--profile` run: steps whose trace category is "fallback"). A model that
tessera cannot run is a row with its error; outputs that disagree with
ORT are flagged; either makes the exit status 1.
"""
import argparse
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import broad_models  # noqa: E402
import doc_sections  # noqa: E402
import run as bench  # noqa: E402

# deep f32 networks: rounding differences grow with depth and with the
# order of long sums (convnext's 7x7 depthwise, densenet's concats)
RTOL, ATOL = 1e-3, 1e-4
TITLE = "Broad benchmark"


def parse_args(argv):
    p = argparse.ArgumentParser(description="tessera vs ONNX Runtime on PyTorch-exported models (bench/README.md)")
    p.add_argument("--models", help="comma-separated models (default: all); 'list' lists them")
    p.add_argument("--batches", default="1,8", help="comma-separated batch sizes (default 1,8)")
    p.add_argument("--threads", help="comma-separated thread counts (default: 1 and every core)")
    p.add_argument("--runs", type=int, default=bench.MIN_RUNS, help="timed runs per side (default %d)" % bench.MIN_RUNS)
    p.add_argument("--rounds", type=int, default=2, help="rounds alternating between the sides (default 2)")
    p.add_argument("--quick", action="store_true", help="5 timed runs: a smoke test, not a result")
    p.add_argument("--tessera", help="the tessera binary (default: build build-bench/ in Release)")
    p.add_argument("--write-doc", action="store_true", help="(re)write the broad section of docs/perf.md")
    p.add_argument("--json", help="also write the raw results to this file")
    a = p.parse_args(argv)
    if a.models == "list":
        print("\n".join(broad_models.NAMES))
        sys.exit(0)
    a.models = a.models.split(",") if a.models else list(broad_models.NAMES)
    for m in a.models:
        if m not in broad_models.NAMES:
            raise bench.BenchError("unknown model %r (--models list)" % m)
    a.batches = [int(b) for b in a.batches.split(",")]
    a.threads = [int(t) for t in a.threads.split(",")] if a.threads else sorted({1, os.cpu_count() or 1})
    if a.quick:
        a.runs = 5
    a.target = "cpu"
    return a


def profile_shares(exe, model, inputs, threads, env, tmp):
    """(fallback share of step time, kernels, fallbacks) from one
    `tessera run --profile` (warm cache) and `tessera ir --fusion`."""
    trace = os.path.join(tmp, "trace.json")
    cmd = [exe, "run", model, "--repeat", "3", "--threads", str(threads), "--profile", trace]
    for k, v in inputs.items():
        cmd += ["-i", "%s=%s" % (k, v)]
    bench.run_cmd(cmd, env=env, what="tessera run --profile")
    with open(trace) as f:
        ev = json.load(f)
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    # a compiled if/while's step ("control") holds its regions' steps:
    # count the top-level steps only, the inner ones by category
    total = sum(e["dur"] for e in ev if e.get("ph") == "X" and e.get("cat") != "control")
    fb = sum(e["dur"] for e in ev if e.get("ph") == "X" and e.get("cat") == "fallback")
    fusion = bench.run_cmd([exe, "ir", model, "--fusion"], env=env, what="tessera ir --fusion")
    kernels = len(re.findall(r"(?m)^  k\d+ ", fusion))
    fallbacks = len(re.findall(r"(?m)^  k\d+ fallback", fusion))
    return (fb / total if total else 0.0), kernels, fallbacks


def bench_one(name, batch, threads, args, exe):
    model, inputs = broad_models.ensure(name, batch)
    feed = {k: np.load(v) for k, v in inputs.items()}
    per_round = -(-args.runs // args.rounds)
    tmp = tempfile.mkdtemp(prefix="tessera_broad_")
    r = dict(model=name, batch=batch, threads=threads)
    try:
        env = dict(os.environ, TESSERA_CACHE_DIR=bench.cold_cache(os.path.join(tmp, "cache")))
        out_dir = os.path.join(tmp, "out")
        cold = bench.tessera_run(exe, model, inputs, threads, "cpu", 1, env, out_dir)
        orts, warms = [], []
        for k in range(args.rounds):
            for side in (("ort", "tessera") if k % 2 == 0 else ("tessera", "ort")):
                if side == "ort":
                    orts.append(bench.ort_run(model, feed, threads, per_round))
                else:
                    warms.append(bench.tessera_run(exe, model, inputs, threads, "cpu", per_round, env))
        ok, agree = bench.agreement(out_dir, orts[0]["outputs"], RTOL, ATOL)
        for o in orts:
            o.pop("outputs")
        ort, warm = bench.rounds_summary(orts), bench.rounds_summary(warms)
        share, kernels, fallbacks = profile_shares(exe, model, inputs, threads, env, tmp)
        r.update(tessera_ms=warm["median_ms"], ort_ms=ort["median_ms"], ratio=warm["median_ms"] / ort["median_ms"],
                 cold_ms=cold["compile_ms"], warm_ms=warm["compile_ms"], kernels=kernels, fallbacks=fallbacks,
                 fallback_share=share, agree=ok, agreement=agree, error=None)
    except bench.BenchError as e:
        r.update(error=str(e).splitlines()[0][:160], agree=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return r


COLUMNS = ("model", "batch", "thr", "tessera ms", "ORT ms", "ratio", "cold / warm compile ms", "kernels",
           "fallback nodes (time)", "agreement")


def cells(r):
    if r.get("error"):
        return (r["model"], str(r["batch"]), str(r["threads"]), "-", "-", "-", "-", "-", "-", "FAILED: " + r["error"])
    return (r["model"], str(r["batch"]), str(r["threads"]), "%.3f" % r["tessera_ms"], "%.3f" % r["ort_ms"],
            "%.2f" % r["ratio"], "%.0f / %.0f" % (r["cold_ms"] or 0, r["warm_ms"] or 0), str(r["kernels"]),
            "%d (%.0f%%)" % (r["fallbacks"], 100 * r["fallback_share"]), r["agreement"])


def summary(rows):
    """Lines: geomean per thread count and batch, the worst, how many > 1.3x."""
    out = []
    ok = [r for r in rows if not r.get("error")]
    for t in sorted({r["threads"] for r in ok}):
        for b in sorted({r["batch"] for r in ok}):
            rs = [r["ratio"] for r in ok if r["threads"] == t and r["batch"] == b]
            if rs:
                out.append("geomean tessera/ORT, %d thread%s, batch %d: %.2f over %d models" %
                           (t, "s" if t > 1 else "", b, math.exp(sum(map(math.log, rs)) / len(rs)), len(rs)))
    if ok:
        w = max(ok, key=lambda r: r["ratio"])
        out.append("worst: %s batch %d, %d thread%s: %.2f; models over 1.3x: %d of %d rows; failed: %d" %
                   (w["model"], w["batch"], w["threads"], "s" if w["threads"] > 1 else "", w["ratio"],
                    sum(r["ratio"] > 1.3 for r in ok), len(ok), len(rows) - len(ok)))
        cold = [r["cold_ms"] for r in ok if r["cold_ms"] is not None]
        if cold:
            out.append("cold compile: median %.0f ms, max %.0f ms (%s); fallback time: max %.0f%%" %
                       (sorted(cold)[len(cold) // 2], max(cold), max(ok, key=lambda r: r["cold_ms"] or 0)["model"],
                        100 * max(r["fallback_share"] for r in ok)))
    return out


def table(rows):
    cs = [COLUMNS] + [cells(r) for r in rows]
    w = [max(len(c[i]) for c in cs) for i in range(len(COLUMNS))]
    return ["  ".join(x.ljust(w[i]) if i < 1 else x.rjust(w[i]) for i, x in enumerate(c)).rstrip() for c in cs]


def write_doc(rows, command):
    lines = ["Written by `bench/broad.py --write-doc` (bench/README.md); rerun it rather than edit this section.", "",
             "```", command, "```", "",
             "Machine: %s, %d cores; onnxruntime %s; PyTorch %s exports (opset 17, static shapes)." % (
                 bench.lscpu().get("Model name", platform.processor()), os.cpu_count() or 1,
                 __import__("onnxruntime").__version__, __import__("torch").__version__), "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in cells(r)) + " |" for r in rows]
    lines += [""] + [s + "  " for s in summary(rows)]
    doc_sections.write_section(os.path.join(ROOT, "docs", "perf.md"), TITLE, "\n".join(lines))
    print("wrote docs/perf.md (%s)" % TITLE)


def main(argv):
    args = parse_args(argv)
    command = "bench/broad.py " + " ".join(argv) if argv else "bench/broad.py"
    exe = os.path.abspath(args.tessera) if args.tessera else bench.build_tessera()
    bench.check_target(exe, "cpu")
    print("models %d, batches %s, threads %s, %d timed runs per side in %d rounds%s" % (
        len(args.models), args.batches, args.threads, -(-args.runs // args.rounds) * args.rounds, args.rounds,
        "" if args.runs >= bench.MIN_RUNS else " (a smoke test, not a result)"), flush=True)
    rows = []
    for name in args.models:
        for b in args.batches:
            for t in args.threads:
                try:
                    r = bench_one(name, b, t, args, exe)
                except Exception as e:   # an export that fails is a row, not the end of the run
                    r = dict(model=name, batch=b, threads=t, error="%s: %s" % (type(e).__name__, str(e)[:140]),
                             agree=False)
                rows.append(r)
                print(table([r])[1], flush=True)
    print()
    print("\n".join(table(rows)))
    print("\n".join(summary(rows)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.write_doc:
        write_doc(rows, command)
    return 0 if all(r.get("agree") for r in rows) else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except bench.BenchError as e:
        print("bench: %s" % e, file=sys.stderr)
        sys.exit(1)
    except subprocess.CalledProcessError as e:
        print("bench: %s" % e, file=sys.stderr)
        sys.exit(1)
