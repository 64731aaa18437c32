#!/usr/bin/env python3
"""tessera and ONNX Runtime on a model while another job takes part of one CPU.

    .venv/bin/python bench/contention.py resnet50 --threads 2
    .venv/bin/python bench/contention.py bert_base --threads 2 --busy-ms 3 --idle-ms 7

Runs the case's model (bench/models.py, cached in bench/.cache/) three
times on each side: quiet, with a competitor process pinned to the last
of the first --threads CPUs (busy for --busy-ms, then asleep for
--idle-ms, over and over), and quiet again; prints each side's median
latency and the tessera/ORT ratio per phase. On a shared machine the
other tenants are such a competitor: a runtime whose threads split each
kernel's work statically waits at every step for the thread that lost
its CPU, one that hands out chunks lets the other threads take them.
Not a timed test: a measurement, like bench/run.py (bench/README.md).
"""
import argparse
import multiprocessing
import os
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import broad_models  # noqa: E402
import models  # noqa: E402
from run import BenchError, tessera_run  # noqa: E402


def competitor(cpu, busy_s, idle_s, stop):
    """Busy on `cpu` for busy_s, asleep for idle_s, until stop is set."""
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        pass
    while not stop.is_set():
        end = time.perf_counter() + busy_s
        while time.perf_counter() < end:
            pass
        time.sleep(idle_s)


def ort_ms(sess, feed, runs):
    sess.run(None, feed)
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, feed)
        t.append(time.perf_counter() - t0)
    return 1000.0 * statistics.median(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case", help="a bench model case (bench/run.py --cases list) or a broad model and batch")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=20, help="timed runs per side and phase (default 20)")
    ap.add_argument("--busy-ms", type=float, default=3.0)
    ap.add_argument("--idle-ms", type=float, default=7.0)
    ap.add_argument("--tessera", default=os.path.join(HERE, "..", "build", "tessera"))
    a = ap.parse_args()
    if a.threads < 1 or a.runs < 1 or a.busy_ms < 0 or a.idle_ms < 0:
        sys.exit("contention: --threads and --runs must be positive, --busy-ms and --idle-ms not negative")
    found = models.ensure(a.case) if a.case in models.CASES else broad_models.ensure_case(a.case)
    if not found:
        sys.exit("contention: unknown case '%s' (bench/run.py --cases list, or a broad model and batch: "
                 "squeezenet1_1_b8)" % a.case)
    model, inputs = found
    feed = {name: np.load(path) for name, path in inputs.items()}
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    cpu = sorted(os.sched_getaffinity(0))[min(a.threads, len(os.sched_getaffinity(0))) - 1]
    print("%s, %d thread(s), %d runs per side; competitor on CPU %d: %.1f ms busy, %.1f ms idle"
          % (a.case, a.threads, a.runs, cpu, a.busy_ms, a.idle_ms))
    for phase in ("quiet", "competitor", "quiet again"):
        stop, proc = multiprocessing.Event(), None
        if phase == "competitor":
            proc = multiprocessing.Process(target=competitor, args=(cpu, a.busy_ms / 1000.0, a.idle_ms / 1000.0, stop))
            proc.start()
            time.sleep(0.5)
        try:
            t = tessera_run(a.tessera, model, inputs, a.threads, "cpu", a.runs, dict(os.environ))["median_ms"]
            o = ort_ms(sess, feed, a.runs)
        finally:
            if proc:
                stop.set()
                proc.join()
        print("  %-12s tessera %9.3f ms   ORT %9.3f ms   ratio %.2f" % (phase, t, o, t / o))


if __name__ == "__main__":
    try:
        main()
    except BenchError as e:
        sys.exit("contention: %s" % e)
