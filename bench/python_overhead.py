#!/usr/bin/env python3
"""What the Python layer costs a run, side by side with onnxruntime's, on
the smallest model: one Add of two f32[4] (bench/README.md).

    .venv/bin/python bench/python_overhead.py [--runs 20000] [--rounds 5] [--write-doc]

needs the package installed (`pip install .`; scripts/test.sh puts it in
.venv). In one process, on one session of each, interleaved in --rounds
rounds (each round times every way --runs times, in a different order):

    C API      ts_session_run called from C on tensors bound once, outputs
               released (Session._time_c_api: no Python in the loop)
    tessera    sess.run(None, {"a": a, "b": b}) -> [numpy array]
    tensors    sess.run_tensors([a, b]) -> [tessera.Tensor]
    ORT        onnxruntime.InferenceSession.run(None, {"a": a, "b": b})

Each figure is the median over rounds of a round's median per-run time;
the overhead is tessera's minus the C API's. --write-doc puts the table
in docs/perf.md's "Python overhead" section (bench/doc_sections.py).
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import doc_sections  # noqa: E402


def tiny_model(path):
    import onnx
    from onnx import TensorProto, helper
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [4])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "add", [a, b], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def per_run(fn, runs):
    """Seconds of each of `runs` calls of fn, timed one by one."""
    t = [0.0] * runs
    clock = time.perf_counter
    for i in range(runs):
        t0 = clock()
        fn()
        t[i] = clock() - t0
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--write-doc", action="store_true", help="(re)write docs/perf.md's Python overhead section")
    args = ap.parse_args()
    import onnxruntime as ort
    import tessera
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "add.onnx")
        tiny_model(path)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        theirs = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        ours = tessera.InferenceSession(path, threads=1, cache_dir=os.path.join(d, "cache"))
    a = np.arange(4, dtype=np.float32)
    b = np.ones(4, np.float32)
    feeds = {"a": a, "b": b}
    want = theirs.run(None, feeds)[0]
    got = ours.run(None, feeds)[0]
    if not np.array_equal(got, want):
        sys.exit(f"results differ: tessera {got}, onnxruntime {want}")
    ways = {
        "C API (ts_session_run)": lambda n: ours._time_c_api([a, b], n),
        "tessera Session.run": lambda n: per_run(lambda: ours.run(None, feeds), n),
        "tessera run_tensors": lambda n: per_run(lambda: ours.run_tensors([a, b]), n),
        "onnxruntime run": lambda n: per_run(lambda: theirs.run(None, feeds), n),
    }
    medians = {k: [] for k in ways}
    names = list(ways)
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for k in order:
            ways[k](min(args.runs, 1000))   # warm
            medians[k].append(statistics.median(ways[k](args.runs)))
    us = {k: 1e6 * statistics.median(v) for k, v in medians.items()}
    c = us["C API (ts_session_run)"]
    lines = ["One ONNX Add of two f32[4], 1 thread, target `%s`, tessera %s, onnxruntime %s; the median of %d "
             "rounds' medians of %d runs each, all ways interleaved in one process." %
             (ours.target, tessera.__version__, ort.__version__, args.rounds, args.runs), "",
             "| way | µs per run | over the C API |", "|---|---|---|"]
    for k in names:
        lines.append("| %s | %.2f | %s |" % (k, us[k], "" if k.startswith("C API") else "%+.2f" % (us[k] - c)))
    lines += ["", "tessera's Python overhead: **%.2f µs** per run (the issue's budget: 5 µs); onnxruntime's "
              "Python `run` takes %.2f µs, %.1fx tessera's. Reproduce: `.venv/bin/python bench/python_overhead.py "
              "--write-doc` (after `bash scripts/test.sh` or `pip install .` into `.venv`)." %
              (us["tessera Session.run"] - c, us["onnxruntime run"], us["onnxruntime run"] / us["tessera Session.run"])]
    print("\n".join(lines))
    if args.write_doc:
        path = os.path.join(os.path.dirname(HERE), "docs", "perf.md")
        doc_sections.write_section(path, "Python overhead", "\n".join(lines))
        print("wrote docs/perf.md (Python overhead)")


if __name__ == "__main__":
    main()
