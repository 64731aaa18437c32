#!/usr/bin/env python3
"""Per-kernel times of one bench model: tessera's kernels against ORT's nodes.

    .venv/bin/python bench/kernels_vs_ort.py resnet50 --threads 1
    .venv/bin/python bench/kernels_vs_ort.py mobilenetv2 --threads 2 --runs 40 --convs
    .venv/bin/python bench/kernels_vs_ort.py squeezenet1_1_b8 --convs   # a broad model at a batch

Runs the case's model (bench/models.py, cached in bench/.cache/) through
`tessera run --profile` and through ONNX Runtime with its profiler on, both
for --runs timed runs after one warm-up, and prints each side's total of
per-kernel medians by kernel category (tessera) and operator (ORT). With
--convs it pairs tessera's conv kernels with ORT's Conv nodes in model
order and prints both medians and their ratio, largest gap first: the
fused conv kernels of both runtimes come one per ONNX Conv, but the order
of two independent convs (a ResNet block's shortcut and its last conv)
may differ, so read a pair of swapped rows as one.
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import broad_models  # noqa: E402
import models  # noqa: E402


def tessera_kernels(binary, model, inputs, threads, runs):
    """[(kernel, category, median ms)] in first-run order."""
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "trace.json")
        cmd = [binary, "run", model, "--target", "cpu", "--threads", str(threads), "--repeat", str(runs),
               "--profile", trace]
        for name, path in inputs.items():
            cmd += ["-i", "%s=%s" % (name, path)]
        subprocess.run(cmd, check=True, capture_output=True)
        with open(trace) as f:
            events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    times, cats = collections.OrderedDict(), {}
    for e in events:
        times.setdefault(e["name"], []).append(e["dur"])
        cats[e["name"]] = e.get("cat", "")
    # the first run is the warm-up
    return [(n, cats[n], statistics.median(v[1:] or v) / 1000.0) for n, v in times.items()]


def ort_nodes(model, inputs, threads, runs):
    """[(node, op type, median ms)] in first-run order."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.enable_profiling = True
    with tempfile.TemporaryDirectory() as d:
        so.profile_file_prefix = os.path.join(d, "ort")
        sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        feed = {name: np.load(path) for name, path in inputs.items()}
        for _ in range(runs + 1):
            sess.run(None, feed)
        with open(sess.end_profiling()) as f:
            events = json.load(f)
    times, ops = collections.OrderedDict(), {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            n = e["name"][:-len("_kernel_time")]
            times.setdefault(n, []).append(e["dur"])
            ops[n] = e.get("args", {}).get("op_name", "")
    return [(n, ops[n], statistics.median(v[1:] or v) / 1000.0) for n, v in times.items()]


def by_group(rows):
    sums = collections.defaultdict(float)
    for _, group, ms in rows:
        sums[group] += ms
    return ", ".join("%s %.2f" % (g, ms) for g, ms in sorted(sums.items(), key=lambda x: -x[1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case", help="a bench model case (bench/run.py --cases list)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=20, help="timed runs per side (default 20)")
    ap.add_argument("--tessera", default=os.path.join(HERE, "..", "build", "tessera"))
    ap.add_argument("--convs", action="store_true", help="pair the conv kernels with ORT's Conv nodes")
    a = ap.parse_args()
    found = models.ensure(a.case) if a.case in models.CASES else broad_models.ensure_case(a.case)
    if found:
        model, inputs = found
    else:
        sys.exit("kernels_vs_ort: unknown case '%s' (bench/run.py --cases list, or a broad model "
                 "and batch: squeezenet1_1_b8)" % a.case)
    tk = tessera_kernels(a.tessera, model, inputs, a.threads, a.runs)
    ok = ort_nodes(model, inputs, a.threads, a.runs)
    print("%s, %d thread(s), %d runs" % (a.case, a.threads, a.runs))
    print("tessera: %.2f ms in %d kernels: %s" % (sum(r[2] for r in tk), len(tk), by_group(tk)))
    print("ORT:     %.2f ms in %d nodes: %s" % (sum(r[2] for r in ok), len(ok), by_group(ok)))
    if a.convs:
        tc = [r for r in tk if r[1] == "conv"]
        oc = [r for r in ok if "Conv" in r[1]]
        if len(tc) != len(oc):
            print("(%d conv kernels against %d Conv nodes: pairs are approximate)" % (len(tc), len(oc)))
        pairs = sorted(zip(tc, oc), key=lambda p: p[1][2] - p[0][2])
        print("%-8s %9s  %-36s %9s %6s" % ("kernel", "ms", "ORT node", "ms", "ratio"))
        for t, o in pairs:
            print("%-8s %9.3f  %-36s %9.3f %6.2f" % (t[0], t[2], o[0][:36], o[2], t[2] / o[2] if o[2] else 0))


if __name__ == "__main__":
    main()
