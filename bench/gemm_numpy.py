#!/usr/bin/env python3
"""gemm_numpy.py - the peers of bench/gemm_micro.c, interleaved with it.

    cmake --build build --target gemm_micro
    .venv/bin/python bench/gemm_numpy.py --ours build/gemm_micro [--rounds R] [reps]
    .venv/bin/python bench/gemm_numpy.py [reps]          # the peers alone

Peers: numpy's float32 matmul (OpenBLAS) on gemm_micro's GEMM shapes, ONNX
Runtime's Conv (MLAS) on its convolutions, each on 1 and 2 threads
(OPENBLAS_NUM_THREADS / intra_op_num_threads; one child process per thread
count, since OpenBLAS reads its thread count once). Statistics as in
gemm_micro.c: median of `reps` runs after two warm-ups; "wall" is elapsed
time, "cpu" the process CPU time divided by the thread count (for 2 threads
it includes the peers' spin-waiting, so their cpu figure is a lower bound).

With --ours, each case runs as ours then the peers, case after case, for R
rounds (default 3): on a machine shared with other jobs the load drifts
within seconds, so only figures taken back to back are compared. Printed
per case and thread count: the median over rounds of each side's GFLOP/s
and of the per-round ratio ours / peer (> 1: ours faster), with the range
of that ratio over the rounds.
"""
import os
import re
import subprocess
import sys
import time

GEMMS = [(1024, 1024, 1024), (4096, 4096, 256), (256, 256, 256), (128, 768, 3072)]
# name as gemm_micro prints it: (C, H, O, K, groups, stride, pad)
CONVS = {
    "conv 3x3 64->64 56x56 pad 1": (64, 56, 64, 3, 1, 1, 1),
    "conv 1x1 256->64 56x56": (256, 56, 64, 1, 1, 1, 0),
    "conv dw 3x3 32ch 112x112 pad 1": (32, 112, 32, 3, 32, 1, 1),
}
LINE = re.compile(r"^(.*?)\s+(\d) thr\s+wall\s+([\d.]+) GFLOP/s.*?cpu\s+([\d.]+) GFLOP/s")


def timed(fn, reps, nth):
    fn()
    fn()
    walls, cpus = [], []
    for _ in range(reps):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        cpus.append((time.process_time() - c0) / nth)
        walls.append(time.perf_counter() - w0)
    walls.sort()
    cpus.sort()
    return walls[reps // 2], cpus[reps // 2], walls[0], walls[-1]


def report(name, nth, flops, t):
    med, cpu, lo, hi = t
    print(f"{name:<34} {nth} thr  wall {flops / med * 1e-9:6.1f} GFLOP/s  cpu {flops / cpu * 1e-9:6.1f} GFLOP/s"
          f"  (ms: median {med * 1e3:.3f} min {lo * 1e3:.3f} max {hi * 1e3:.3f})", flush=True)


def conv_session(c, h, o, k, g, s, p, nth):
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    oh = (h + 2 * p - k) // s + 1
    w = np.random.default_rng(1).standard_normal((o, c // g, k, k)).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], group=g, strides=[s, s], pads=[p, p, p, p],
                            kernel_shape=[k, k])
    graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, o, oh, oh])],
                              [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = nth
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(2).standard_normal((1, c, h, h)).astype(np.float32)
    return (lambda: sess.run(None, {"x": x})), 2.0 * o * oh * oh * (c // g) * k * k


def child(nth, reps, filt=None):
    import numpy as np
    rng = np.random.default_rng(0)
    for m, n, k in GEMMS:
        if filt and filt not in f"sgemm {m}x{n}x{k}":
            continue
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        c = np.empty((m, n), dtype=np.float32)
        report(f"numpy sgemm {m}x{n}x{k}", nth, 2.0 * m * n * k, timed(lambda: np.matmul(a, b, out=c), reps, nth))
    try:
        for name, shape in CONVS.items():
            if filt and filt not in name:
                continue
            fn, flops = conv_session(*shape, nth)
            report("ort " + name, nth, flops, timed(fn, reps, nth))
    except ImportError as e:
        print(f"(no ONNX Runtime conv peer: {e})")


def parse(text):
    out = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            out[(m.group(1).strip(), int(m.group(2)))] = (float(m.group(3)), float(m.group(4)))
    return out


def run_peers(reps, filt=None):
    text = ""
    for nth in (1, 2):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(nth), OMP_NUM_THREADS=str(nth))
        cmd = [sys.executable, __file__, "--child", str(nth), str(reps)] + ([filt] if filt else [])
        text += subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return text


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])


def main():
    args = sys.argv[1:]
    if args[:1] == ["--child"]:
        child(int(args[1]), int(args[2]), args[3] if len(args) > 3 else None)
        return
    ours_bin, rounds = None, 3
    while args[:1] in (["--ours"], ["--rounds"]):
        if args[0] == "--ours":
            ours_bin = args[1]
        else:
            rounds = int(args[1])
        args = args[2:]
    reps = int(args[0]) if args else 21
    if not ours_bin:
        print(run_peers(reps), end="")
        return
    cases = [f"sgemm {m}x{n}x{k}" for m, n, k in GEMMS] + list(CONVS)
    rows = {}  # (case, nth) -> lists of (ours wall, ours cpu, peer wall, peer cpu)
    peak = []
    for r in range(rounds):
        for case in cases:
            ours_text = subprocess.run([ours_bin, str(reps), case], check=True, capture_output=True,
                                       text=True).stdout
            if r == 0 and case == cases[0]:
                print(ours_text.splitlines()[0])
            peer = parse(run_peers(reps, case))
            ours = parse(ours_text)
            peak.append(ours.get(("peak (FMA loop)", 1), (0, 0))[1])
            for (name, nth), (w, c) in peer.items():
                key = (name.split(" ", 1)[1], nth)
                if key in ours:
                    rows.setdefault(key, []).append(ours[key] + (w, c, name.split()[0]))
    print(f"FMA peak of one thread (cpu time), median over {len(peak)} runs: {median(peak):.1f} GFLOP/s "
          f"(range {min(peak):.1f}-{max(peak):.1f})")
    print(f"{rounds} rounds, each: ours then the peer, per case; medians over rounds (GFLOP/s)")
    print(f"{'case':<34} thr  {'ours wall':>9} {'cpu':>6}   {'peer wall':>9} {'cpu':>6}   "
          f"ratio wall (range)     cpu (range)       ours cpu % of peak")
    for (case, nth), v in sorted(rows.items(), key=lambda kv: (kv[0][1], cases.index(kv[0][0]))):
        rw = [x[0] / x[2] for x in v]
        rc = [x[1] / x[3] for x in v]
        print(f"{case:<34} {nth}    {median([x[0] for x in v]):9.1f} {median([x[1] for x in v]):6.1f}   "
              f"{median([x[2] for x in v]):9.1f} {median([x[3] for x in v]):6.1f}   "
              f"{median(rw):5.2f} ({min(rw):.2f}-{max(rw):.2f})    {median(rc):5.2f} ({min(rc):.2f}-{max(rc):.2f})"
              f"  {100 * median([x[1] for x in v]) / (median(peak) * nth):5.1f}%  vs {v[0][4]}")


if __name__ == "__main__":
    main()
