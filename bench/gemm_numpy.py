#!/usr/bin/env python3
"""gemm_numpy.py - the peers of bench/gemm_micro.c, in the same run.

    cmake --build build --target gemm_micro
    .venv/bin/python bench/gemm_numpy.py --ours build/gemm_micro [reps]

Runs our benchmark (if --ours is given), then numpy's float32 matmul
(OpenBLAS) on the same GEMM shapes and ONNX Runtime's Conv (MLAS) on the
same convolutions, each on 1 and 2 threads (OPENBLAS_NUM_THREADS and ORT's
intra_op_num_threads; a child process per thread count, since OpenBLAS
reads its thread count once). Statistics as in gemm_micro.c: median of
`reps` runs after two warm-ups; "wall" is elapsed time, "cpu" the process CPU
time divided by the thread count (for 2 threads it includes the peers'
spin-waiting, so their cpu figure is a lower bound). Ends with the ratios
ours / peer for both measures.
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
    import onnx
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


def child(nth, reps):
    import numpy as np
    rng = np.random.default_rng(0)
    for m, n, k in GEMMS:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        c = np.empty((m, n), dtype=np.float32)
        report(f"numpy sgemm {m}x{n}x{k}", nth, 2.0 * m * n * k, timed(lambda: np.matmul(a, b, out=c), reps, nth))
    try:
        for name, shape in CONVS.items():
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


def main():
    args = sys.argv[1:]
    if args[:1] == ["--child"]:
        child(int(args[1]), int(args[2]))
        return
    ours_bin = None
    if args[:1] == ["--ours"]:
        ours_bin, args = args[1], args[2:]
    reps = int(args[0]) if args else 21
    ours_text = ""
    if ours_bin:
        ours_text = subprocess.run([ours_bin, str(reps)], check=True, capture_output=True, text=True).stdout
        print(ours_text, end="", flush=True)
    peer_text = ""
    for nth in (1, 2):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(nth), OMP_NUM_THREADS=str(nth))
        r = subprocess.run([sys.executable, __file__, "--child", str(nth), str(reps)], env=env, check=True,
                           capture_output=True, text=True)
        print(r.stdout, end="", flush=True)
        peer_text += r.stdout
    if not ours_bin:
        return
    ours, peers = parse(ours_text), parse(peer_text)
    print("\nratio ours / peer (>1: ours faster)")
    for (name, nth), (w, c) in peers.items():
        key = (name.split(" ", 1)[1], nth)
        if key in ours:
            ow, oc = ours[key]
            print(f"  {key[0]:<34} {nth} thr  wall {ow / w:5.2f}  cpu {oc / c:5.2f}   ({name.split()[0]})")


if __name__ == "__main__":
    main()
