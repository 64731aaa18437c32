#!/usr/bin/env python3
"""tessera against ONNX Runtime, side by side in one run (bench/README.md).

    .venv/bin/python bench/run.py                       # every case, --target cpu, threads 1 and all cores
    .venv/bin/python bench/run.py --target interp       # the small cases on the reference interpreter
    .venv/bin/python bench/run.py --cases gemm_1024,bert_base --threads 2 --runs 50
    .venv/bin/python bench/run.py --write-doc           # and (re)write docs/perf.md

For each case and thread count: the models and inputs come from
bench/models.py (cached in bench/.cache/); ONNX Runtime runs in this
process (default session options, all graph optimizations, intra-op
threads T, inter-op 1); tessera runs through its CLI, twice, with a fresh
TESSERA_CACHE_DIR:

    cold:  tessera run model.onnx -i NAME=x.npy --repeat 1 --threads T --target TARGET -o DIR
    warm:  tessera run model.onnx -i NAME=x.npy --repeat N --threads T --target TARGET

The cold run's outputs are compared with ORT's; its compile_ms is the cold
compile time. The warm runs give the warm compile time, the latency line and
arena_peak_bytes. The N timed runs of each side are split into R rounds
(--rounds, default 3) that alternate between the sides (ORT first in odd
rounds, tessera first in even ones), each a fresh session with one warm-up
run; a side's latency is the median of its rounds' medians, its minimum
the least of all. On a machine whose speed drifts over seconds (a shared
VM), both sides then see the same conditions, which one block per side
did not give.
bench/peak.c, compiled here with -O2 -march=native, measures the fp32 FMA
peak and the copy bandwidth per thread count, to turn GEMM times into a
fraction of peak and memory-bound times into a fraction of bandwidth.
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True   # keep bench/ free of __pycache__
sys.path.insert(0, HERE)
import doc_sections  # noqa: E402
import models  # noqa: E402

MIN_RUNS = 20   # docs/PERFORMANCE.md: medians of >= 20 runs after warm-up
LATENCY = re.compile(r"^latency median_ms=([0-9.]+) min_ms=([0-9.]+) runs=(\d+)$")
FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
         "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "neon", "asimd", "sve")


class BenchError(Exception):
    """A clear, one-line reason to stop: printed as `bench: <message>`."""


# ---- arguments -------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(description="tessera vs ONNX Runtime (bench/README.md)")
    p.add_argument("--target", default="cpu", help="tessera target: cpu (default) or interp")
    p.add_argument("--threads", help="comma-separated thread counts (default: 1 and every core)")
    p.add_argument("--cases", help="comma-separated cases (default: every full-size case; "
                                   "with --target interp the small ones); 'list' lists them")
    p.add_argument("--runs", type=int, default=MIN_RUNS, help="timed runs per side (default %d)" % MIN_RUNS)
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds alternating between the sides; each has ceil(runs/rounds) timed runs (default 3)")
    p.add_argument("--quick", action="store_true", help="5 timed runs: a smoke test, not a result")
    p.add_argument("--tessera", help="the tessera binary (default: build build-bench/ in Release)")
    p.add_argument("--write-doc", action="store_true", help="(re)write docs/perf.md (not with --target interp)")
    p.add_argument("--json", help="also write the raw results to this file")
    a = p.parse_args(argv)
    if a.cases == "list":
        for name, c in models.CASES.items():
            print("%-22s %-7s %s%s" % (name, c["kind"], c["desc"], "  (small)" if c.get("small") else ""))
        sys.exit(0)
    check_counts(a)
    default = [c for c in models.CASES if models.CASES[c].get("small")] if a.target == "interp" \
        else models.DEFAULT_CASES
    a.cases = a.cases.split(",") if a.cases else default
    unknown = [c for c in a.cases if c not in models.CASES]
    if unknown:
        raise BenchError("unknown case%s %s (cases: %s)" % ("s" if len(unknown) > 1 else "", ", ".join(unknown),
                                                           ", ".join(models.CASES)))
    if a.write_doc and a.target == "interp":
        raise BenchError("--write-doc records the compiler's result; the reference interpreter's numbers "
                         "are not one (use --target cpu)")
    return a


def check_counts(a):
    """--quick, --runs, --rounds and --threads checked, and normalised in
    place (bench/broad.py takes the same options)."""
    a.runs = 5 if a.quick else a.runs
    if a.runs < 1:
        raise BenchError("--runs needs a whole number >= 1, got %d" % a.runs)
    if a.rounds < 1 or a.rounds > a.runs:
        raise BenchError("--rounds needs a whole number from 1 to --runs (%d), got %d" % (a.runs, a.rounds))
    try:
        a.threads = sorted({int(t) for t in a.threads.split(",")}) if a.threads else \
            sorted({1, os.cpu_count() or 1})
    except ValueError:
        raise BenchError("--threads takes comma-separated whole numbers, got '%s'" % a.threads)
    if any(t < 1 for t in a.threads):
        raise BenchError("--threads: every count must be >= 1")


# ---- the tools: tessera, peak ------------------------------------------------------------

def exit_status(rc):
    if rc >= 0:
        return "exit status %d" % rc
    try:
        return "killed by %s" % signal.Signals(-rc).name
    except ValueError:
        return "killed by signal %d" % -rc


def run_cmd(cmd, env=None, what=None, timeout=None):
    """stdout of cmd; BenchError with the error's first line when it fails
    (a crash names its signal), or when it runs past `timeout` seconds."""
    what = what or " ".join(cmd[:3])
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BenchError("%s: no result after %d s (stopped)" % (what, timeout))
    if p.returncode != 0:
        status = exit_status(p.returncode)
        lines = p.stderr.strip().splitlines()
        # tessera's error is one "tessera: ..." line, which a compiler's
        # output may follow and warnings precede; another tool's, its last
        errors = [x for x in lines if x.startswith("tessera: ") and not x.startswith("tessera: warning:")]
        msg = errors[0] if errors else lines[-1] if lines else status
        raise BenchError("%s failed: %s%s" % (what, msg, " (%s)" % status if p.returncode < 0 and msg != status
                                              else ""))
    return p.stdout


def build_tessera():
    """build-bench/tessera in Release (-O3 -DNDEBUG): a benchmark of an
    unoptimised or sanitised build would measure the wrong thing."""
    d = os.path.join(ROOT, "build-bench")
    for tool in ("cmake", "ninja"):
        if not shutil.which(tool):
            raise BenchError("%s is missing: install it (scripts/deps.sh) or give --tessera PATH" % tool)
    run_cmd(["cmake", "-S", ROOT, "-B", d, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DTS_WERROR=OFF",
             "-DTS_SANITIZE=OFF"], what="cmake configure")
    run_cmd(["cmake", "--build", d, "--target", "tessera_cli"], what="building tessera")
    return os.path.join(d, "tessera")


def measure_peaks(threads):
    """{T: (fma GFLOP/s, copy GB/s)} from bench/peak.c, built for this machine."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise BenchError("no C compiler (cc) to build bench/peak.c")
    exe = os.path.join(tempfile.mkdtemp(prefix="tessera_peak_"), "peak")
    run_cmd([cc, "-O2", "-march=native", "-pthread", os.path.join(HERE, "peak.c"), "-o", exe], what="cc peak.c")
    peaks = {}
    for t in threads:
        out = run_cmd([exe, str(t)], what="peak")
        g = float(re.search(r"^fma .*gflops=([0-9.]+)", out, re.M).group(1))
        b = float(re.search(r"^copy .*gbs=([0-9.]+)", out, re.M).group(1))
        peaks[t] = (g, b)
    shutil.rmtree(os.path.dirname(exe), ignore_errors=True)
    return peaks


def best_peaks(a, b):
    """Per thread count, the better FMA peak and copy bandwidth of two measurements."""
    return {t: (max(a[t][0], b[t][0]), max(a[t][1], b[t][1])) for t in a}


def tessera_run(exe, model, inputs, threads, target, repeat, env, out_dir=None, timeout=None):
    """One `tessera run`: {compile_ms, cache, arena, median_ms, min_ms, runs}."""
    cmd = [exe, "run", model]
    for name, path in inputs.items():
        cmd += ["-i", "%s=%s" % (name, path)]
    cmd += ["--repeat", str(repeat), "--threads", str(threads), "--target", target]
    if out_dir:
        cmd += ["-o", out_dir]
    lines = run_cmd(cmd, env=env, what="tessera run", timeout=timeout).splitlines()
    m = LATENCY.match(lines[-1]) if lines else None
    if not m or int(m.group(3)) != repeat:
        raise BenchError("tessera run: the last line is not 'latency median_ms=X min_ms=Y runs=%d': %r"
                         % (repeat, lines[-1:]))
    r = dict(median_ms=float(m.group(1)), min_ms=float(m.group(2)), runs=repeat, compile_ms=None, cache=None,
             arena=None)
    for line in lines:
        c = re.match(r"^compile_ms=([0-9.]+) cache=(\w+)$", line)
        if c:
            r["compile_ms"], r["cache"] = float(c.group(1)), c.group(2)
        a = re.match(r"^arena_peak_bytes=(\d+)$", line)
        if a:
            r["arena"] = int(a.group(1))
    return r


# The JIT cache holding what every program links (the contraction
# templates, compiled once per machine: D112), made by check_target.
MACHINE_CACHE = None


def check_target(exe, target):
    """Fail at once, with tessera's own reason, when the target is missing,
    instead of after building every model. Its cache, which then holds the
    shared template object, is kept as MACHINE_CACHE."""
    global MACHINE_CACHE
    model, inputs = models.ensure("gemm_256")
    MACHINE_CACHE = tempfile.mkdtemp(prefix="tessera_machine_")
    try:
        tessera_run(exe, model, inputs, 1, target, 1, dict(os.environ, TESSERA_CACHE_DIR=MACHINE_CACHE))
    except BenchError as e:
        hint = " (the cpu target is not in this build yet; --target interp runs the small cases)" \
            if target == "cpu" and "unknown target" in str(e) else ""
        raise BenchError("tessera cannot run --target %s: %s%s" % (target, e, hint))


def cold_cache(path):
    """A cache folder for a cold compile: empty but for the objects every
    program links (KEY.o and its source), as on a machine where tessera has
    compiled anything before: cold means this model's own code, not the
    once-per-machine templates (D112)."""
    os.makedirs(path)
    for name in os.listdir(MACHINE_CACHE or path):
        if name.endswith(".o"):
            for f in (name, name[:-2] + ".0.c"):
                if os.path.exists(os.path.join(MACHINE_CACHE, f)):
                    shutil.copy(os.path.join(MACHINE_CACHE, f), os.path.join(path, f))
    return path


# ---- onnxruntime -------------------------------------------------------------------------

def ort_run(model, feed, threads, runs):
    """Default session options with all graph optimizations, T intra-op
    threads, one inter-op thread; one warm-up, then `runs` timed runs."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    t0 = time.perf_counter()
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    init_ms = (time.perf_counter() - t0) * 1e3
    outputs = sess.run(None, feed)
    ms = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, feed)
        ms.append((time.perf_counter() - t0) * 1e3)
    del sess   # its thread pool must not spin while tessera runs
    return dict(median_ms=statistics.median(ms), min_ms=min(ms), init_ms=init_ms, outputs=outputs)


def agreement(out_dir, ref, rtol, atol):
    """(ok, text): every tessera output against ORT's, |t - o| <= atol + rtol |o|."""
    worst, max_abs = 0.0, 0.0
    for k, o in enumerate(ref):
        path = os.path.join(out_dir, "output_%d.npy" % k)
        if not os.path.exists(path):
            return False, "output %d missing" % k
        t = np.load(path)
        if t.shape != o.shape or t.dtype != o.dtype:
            return False, "output %d: %s%s, ORT %s%s" % (k, t.dtype, list(t.shape), o.dtype, list(o.shape))
        d = np.abs(t.astype(np.float64) - o.astype(np.float64))
        if not np.all(np.isfinite(d)):
            return False, "output %d: non-finite difference" % k
        max_abs = max(max_abs, float(d.max()))
        worst = max(worst, float((d / (atol + rtol * np.abs(o.astype(np.float64)))).max()))
    return worst <= 1, "%s max|d|=%.1e" % ("ok" if worst <= 1 else "MISMATCH", max_abs)


# ---- one case ----------------------------------------------------------------------------

def rounds_summary(rs):
    """One side's rounds as one result: the median of the rounds' medians,
    the least minimum, each round's median in order (rounds_ms), the other
    fields of the first round."""
    r = dict(rs[0])
    r["rounds_ms"] = [x["median_ms"] for x in rs]
    r["median_ms"] = statistics.median(r["rounds_ms"])
    r["min_ms"] = min(x["min_ms"] for x in rs)
    return r


def alternating_rounds(exe, model, inputs, feed, threads, target, runs, rounds, env, timeout=None):
    """Both sides in `rounds` rounds of ceil(runs/rounds) timed runs, ORT
    first in odd rounds and tessera first in even ones (tessera with the
    cache in env, warm after the cold run): (ORT's summary, tessera's,
    ORT's outputs from its first round)."""
    per_round = -(-runs // rounds)
    orts, warms = [], []
    for k in range(rounds):
        for side in (("ort", "tessera") if k % 2 == 0 else ("tessera", "ort")):
            if side == "ort":
                orts.append(ort_run(model, feed, threads, per_round))
            else:
                warms.append(tessera_run(exe, model, inputs, threads, target, per_round, env, timeout=timeout))
    outputs = orts[0]["outputs"]
    for o in orts:
        o.pop("outputs")
    return rounds_summary(orts), rounds_summary(warms), outputs


def bench_case(name, threads, args, exe):
    case = models.CASES[name]
    model, inputs = models.ensure(name)
    feed = {k: np.load(v) for k, v in inputs.items()}
    per_round = -(-args.runs // args.rounds)
    tmp = tempfile.mkdtemp(prefix="tessera_bench_")
    try:
        env = dict(os.environ, TESSERA_CACHE_DIR=cold_cache(os.path.join(tmp, "cache")))
        out_dir = os.path.join(tmp, "out")
        cold = tessera_run(exe, model, inputs, threads, args.target, 1, env, out_dir)
        ort, warm, ref = alternating_rounds(exe, model, inputs, feed, threads, args.target, args.runs, args.rounds,
                                            env)
        ok, agree = agreement(out_dir, ref, case["rtol"], case["atol"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    r = dict(case=name, kind=case["kind"], threads=threads, tessera_ms=warm["median_ms"], tessera_min_ms=warm["min_ms"],
             ort_ms=ort["median_ms"], ort_min_ms=ort["min_ms"], ort_init_ms=ort["init_ms"],
             ratio=warm["median_ms"] / ort["median_ms"], arena=warm["arena"], compile_cold_ms=cold["compile_ms"],
             cache_cold=cold["cache"], compile_warm_ms=warm["compile_ms"], cache_warm=warm["cache"],
             agree=ok, agreement=agree, rtol=case["rtol"], atol=case["atol"], runs=per_round * args.rounds,
             rounds=args.rounds)
    return r


def add_efficiency(r, peaks):
    """GEMM: flops / time / FMA peak; memory-bound: (bytes in + out) / time /
    copy bandwidth (both counting read + write); for tessera and ORT."""
    case = models.CASES[r["case"]]
    gflops, gbs = peaks[r["threads"]]
    if case["kind"] == "gemm":
        r["eff"] = [case["flops"] / (ms * 1e-3) / (gflops * 1e9) for ms in (r["tessera_ms"], r["ort_ms"])]
    elif case["kind"] == "memory":
        r["eff"] = [case["bytes"] / (ms * 1e-3) / (gbs * 1e9) for ms in (r["tessera_ms"], r["ort_ms"])]


# ---- reporting ---------------------------------------------------------------------------

COLUMNS = ("case", "thr", "tessera ms", "ORT ms", "ratio", "of peak/bw t / ORT", "arena MB",
           "compile cold / warm ms", "ORT init ms", "agreement (tol)")


def row_cells(r):
    eff = "%.0f%% / %.0f%% %s" % (100 * r["eff"][0], 100 * r["eff"][1], "FMA" if r["kind"] == "gemm" else "copy") \
        if "eff" in r else "-"
    arena = "%.1f" % (r["arena"] / 2 ** 20) if r["arena"] is not None else "?"

    def comp(ms, cache):
        if ms is None:
            return "?"
        return ("%.1f" % ms if ms < 100 else "%.0f" % ms) + ("" if cache in (None, "none") else " " + cache)
    compile_ms = "%s / %s" % (comp(r["compile_cold_ms"], r["cache_cold"]), comp(r["compile_warm_ms"], r["cache_warm"]))
    return (r["case"], str(r["threads"]), "%.3f" % r["tessera_ms"], "%.3f" % r["ort_ms"], "%.2f" % r["ratio"], eff,
            arena, compile_ms,
            "%.0f" % r["ort_init_ms"], "%s (tol %.0e+%.0e|x|)" % (r["agreement"], r["atol"], r["rtol"]))


def geomeans(rows):
    """{threads: geomean of tessera/ORT over the model cases}."""
    out = {}
    for t in sorted({r["threads"] for r in rows}):
        ratios = [r["ratio"] for r in rows if r["threads"] == t and r["kind"] == "model"]
        if ratios:
            out[t] = (math.exp(sum(map(math.log, ratios)) / len(ratios)), len(ratios))
    return out


def print_table(rows):
    cells = [COLUMNS] + [row_cells(r) for r in rows]
    w = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    for c in cells:
        print("  ".join(x.ljust(w[i]) if i == 0 else x.rjust(w[i]) for i, x in enumerate(c)).rstrip())


def markdown_table(rows):
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row_cells(r)) + " |" for r in rows]
    return "\n".join(lines)


def lscpu():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return {}
    return {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in out.splitlines() if ":" in line)}


def machine(peaks):
    """The machine description the results are read against."""
    cpu = lscpu()
    flags = [f for f in FLAGS if f in set(cpu.get("Flags", "").split())]
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            mem = "%.1f GiB" % (int(re.search(r"MemTotal:\s+(\d+)", f.read()).group(1)) / 2 ** 20)
    except (OSError, AttributeError):
        pass
    try:
        cc = subprocess.run(["cc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        cc = "?"
    import onnxruntime
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                            text=True).stdout.strip() or "?"
    return [
        ("CPU", "%s, %s CPUs (%s per core)%s" % (cpu.get("Model name", platform.processor() or "?"),
                                                 cpu.get("CPU(s)", "?"), cpu.get("Thread(s) per core", "?") + " thread",
                                                 ", %s guest" % cpu["Hypervisor vendor"] if "Hypervisor vendor" in cpu
                                                 else "")),
        ("flags", " ".join(flags) or "?"),
        ("caches", ", ".join("%s %s" % (k, cpu[k + " cache"]) for k in ("L1d", "L2", "L3") if k + " cache" in cpu)),
        ("memory", mem),
        ("measured peaks", "; ".join("%d thread%s: fp32 FMA %.1f GFLOP/s, copy %.1f GB/s (read + write)" %
                                     (t, "s" if t > 1 else "", g, b) for t, (g, b) in sorted(peaks.items()))),
        ("compiler", cc),
        ("software", "ONNX Runtime %s (CPU provider), numpy %s, Python %s, Linux %s" % (
            onnxruntime.__version__, np.__version__, platform.python_version(), platform.release())),
        ("tessera", "commit %s" % commit),
        ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
    ]


def write_doc(rows, desc, args, command):
    g = geomeans(rows)
    text = ["# tessera — performance against ONNX Runtime", "",
            "Written by `bench/run.py --write-doc`; rerun it rather than edit this file",
            "(bench/README.md explains the method and every column).", "",
            "```", command, "```", "",
            "Target `%s`; %d timed runs per side in %d rounds alternating between the sides, each after "
            "one warm-up; a side's time is the median of its rounds' medians." %
            (args.target, -(-args.runs // args.rounds) * args.rounds, args.rounds), "", "## Machine", ""]
    text += ["- %s: %s" % (k, v) for k, v in desc]
    text += ["", "## Results", "", markdown_table(rows), ""]
    text += ["Geometric mean of tessera/ORT over the models, %d thread%s: %.2f (%d model%s)  " %
             (t, "s" if t > 1 else "", m, n, "s" if n > 1 else "") for t, (m, n) in g.items()]
    text += ["", "Cases: " + "; ".join("`%s` %s" % (c, models.CASES[c]["desc"]) for c in args.cases) + ".", ""]
    path = os.path.join(ROOT, "docs", "perf.md")
    others = doc_sections.kept(path, {"Machine", "Results"})   # sections other benchmarks write
    with open(path, "w") as f:
        f.write("\n".join(text) + ("\n" + others if others else ""))
    print("wrote %s" % os.path.relpath(path, ROOT))


# ---- main ----------------------------------------------------------------------------------

def main(argv):
    args = parse_args(argv)
    command = "bench/run.py " + " ".join(argv) if argv else "bench/run.py"
    exe = os.path.abspath(args.tessera) if args.tessera else build_tessera()
    if not os.access(exe, os.X_OK):
        raise BenchError("no tessera binary at %s" % exe)
    check_target(exe, args.target)
    peaks = measure_peaks(args.threads)
    for k, v in machine(peaks):
        print("%-15s %s" % (k + ":", v))
    print("target %s, threads %s, %d timed runs per side in %d alternating rounds, each after one warm-up%s\n" % (
        args.target, ",".join(map(str, args.threads)), -(-args.runs // args.rounds) * args.rounds, args.rounds,
        "" if args.runs >= MIN_RUNS else " (fewer than %d: a smoke test, not a result)" % MIN_RUNS))
    rows = []
    for name in args.cases:
        # A peak is a maximum and the machine may be shared: it is measured
        # again before each case whose time is read as a fraction of it, and
        # at the end; the best figure of all is the one divided by (one slow
        # minute at both ends once put layer norm at 118% of "bandwidth").
        if models.CASES[name]["kind"] != "model":
            peaks = best_peaks(peaks, measure_peaks(args.threads))
        for t in args.threads:
            rows.append(bench_case(name, t, args, exe))
            r = rows[-1]
            print("  %-22s threads %d: tessera %.3f ms, ORT %.3f ms, ratio %.2f, %s" % (
                name, t, r["tessera_ms"], r["ort_ms"], r["ratio"], r["agreement"]), flush=True)
    peaks = best_peaks(peaks, measure_peaks(args.threads))
    desc = machine(peaks)
    for r in rows:
        add_efficiency(r, peaks)
    print("\n%-15s %s (the best of the start, before each micro case and the end)" %
          ("peaks:", dict(desc)["measured peaks"]))
    print_table(rows)
    for t, (m, n) in geomeans(rows).items():
        print("geomean tessera/ORT over %d model%s, %d thread%s: %.2f" % (n, "s" if n > 1 else "", t,
                                                                        "s" if t > 1 else "", m))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(machine=dict(desc), command=command, rows=rows), f, indent=1)
    if args.write_doc:
        write_doc(rows, desc, args, command)
    bad = [r["case"] for r in rows if not r["agree"]]
    if bad:
        print("bench: outputs disagree with ORT: %s" % ", ".join(sorted(set(bad))), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as e:
        print("bench: %s" % e, file=sys.stderr)
        sys.exit(1)
