#!/usr/bin/env python3
"""CLI tests of the `tessera` binary: results against numpy, error messages
and exit statuses, and the shape of every command's output.

    python3 tests/cli/test_cli.py path/to/tessera

ctest runs it (tests/suites.cmake). Prints "N passed, N failed" and exits
non-zero on any failure. Needs numpy: scripts/test.sh puts it in .venv.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("test_cli.py needs numpy; run it with the project's .venv "
          "(bash scripts/test.sh creates it) or pip install numpy", file=sys.stderr)
    print("0 passed, 1 failed")
    sys.exit(1)
try:  # the ONNX checks make their models with onnx's helper API
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    onnx = None

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MODELS = os.path.join(ROOT, "tests", "cli", "models")
sys.dont_write_bytecode = True  # keep scripts/ and tests/cli/ free of __pycache__
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import gen_default_model as attention  # noqa: E402

import cli_common  # noqa: E402
import pycheck  # noqa: E402
from cli_common import check, close, expect_error, run_model, save, tessera, tmp  # noqa: E402,F401
from cli_cpu import (test_concat_in_place, test_concat_strided, test_conv_over_one_position, test_cpu_target,  # noqa: E402
                     test_exp_shift, test_gather_compiled, test_indexing_compiled, test_shared_packing, test_shared_shapes,
                     test_shared_offsets, test_short_sums, test_strided_lanes, test_unroll_budget,
                     test_light_compile, test_parameter_only_values_run_first, test_reshape_and_short_rows,
                     test_row_kernel, test_row_maxmin_lanes, test_runtime_unit, test_streamed_rows,
                     test_tile_epilogue)
from cli_listings import (test_reduce_merged, test_pool_planes, test_roll_parts, test_scan_strided,  # noqa: E402
                          test_epilogue_split, test_sections, test_tail_lanes, test_control_compiled,
                          test_loops_merged, test_loops_tail, test_loops_shuffle, test_split_div,
                          test_concat_table)
from cli_cuda import test_cuda_target  # noqa: E402
from cli_opencl import test_opencl_target  # noqa: E402


# ---- models against numpy ----------------------------------------------------------

def test_attention_bundled():
    model = os.path.join(ROOT, "models", "attention.ir")
    x = os.path.join(ROOT, "models", "attention_input.npy")
    outs = run_model(model, [x], "attention")
    if outs is not None and check("attention: one output", len(outs) == 1):
        close("attention vs attention_expected.npy", outs[0], np.load(os.path.join(ROOT, "models", "attention_expected.npy")))
        close("attention vs numpy forward", outs[0],
              attention.forward(np.load(x), ir_constants(model)))
    out = tmp("out_passes")
    rc, so, se = tessera("run", model, "-i", x, "--passes", "default", "-o", out)
    if check("attention --passes default: exit 0", rc == 0, se):
        close("attention --passes default", np.load(os.path.join(out, "output_0.npy")),
              np.load(os.path.join(ROOT, "models", "attention_expected.npy")))
    rc, so, se = tessera("run", model, "-i", x)
    check("attention summary", rc == 0 and re.match(r"output 0 \(y\): f32\[4, 16\] = \[[-0-9.e, ]+, \.\.\.\] \(64 values\)\n$", so),
          so + se)


def ir_constants(path):
    """The f32 constants of an IR file by name: the bundled model's weights
    as the file has them, whatever numpy's generator would make today."""
    found = {}
    with open(path) as f:
        for m in re.finditer(r"^  %(\w+): f32\[([\d, ]*)\] = const\(\) \{value=\[(.*)\]\}$", f.read(), re.M):
            shape = tuple(int(d) for d in m.group(2).split(",") if d.strip())
            found[m.group(1)] = np.array([float(v) for v in m.group(3).split(",")], np.float32).reshape(shape)
    return found


def test_attention_any_length():
    w = ir_constants(os.path.join(ROOT, "models", "attention.ir"))
    check("attention weights read", all(k in w for k in attention.make_weights()), str(sorted(w)))
    for seq in (1, 9):
        x = attention.make_input(seq, seed=seq)
        outs = run_model(os.path.join(ROOT, "models", "attention.ir"), ["x=" + save("att%d.npy" % seq, x)],
                         "attention seq=%d" % seq)
        if outs is not None:
            close("attention seq=%d" % seq, outs[0], attention.forward(x, w))


def test_broadcasting():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 1)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    outs = run_model(os.path.join(MODELS, "bcast.ir"), [save("a.npy", a), save("b.npy", b)], "bcast")
    if outs is not None and check("bcast: two outputs", len(outs) == 2):
        close("bcast max", outs[0], np.maximum(a + b, a * b))
        close("bcast lt", outs[1], np.broadcast_to(a < b, (3, 4)))


def test_reductions():
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((2, 3, 4)) * 0.5 + 1).astype(np.float32)
    n = np.array([3, -7, 11, 0, 2], dtype=np.int32)
    outs = run_model(os.path.join(MODELS, "reduce.ir"), ["n=" + save("n.npy", n), save("x.npy", x)], "reduce")
    if outs is not None and check("reduce: six outputs", len(outs) == 6):
        close("reduce_sum", outs[0], x.sum(axis=1))
        close("reduce_max", outs[1], x.max(axis=(0, 2)))
        close("reduce_min", outs[2], x.min(axis=2))
        close("argmax", outs[3], x.argmax(axis=2).astype(np.int64))
        close("reduce_prod", outs[4], np.array(np.prod(x.astype(np.float64)), dtype=np.float32), rtol=1e-3)
        close("reduce_sum i32", outs[5], np.array(n.sum(), dtype=np.int32))


def test_symbolic_batch():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    wpath = save("w.npy", w)
    for batch in (2, 5):
        x = rng.standard_normal((batch, 4)).astype(np.float32)
        # w by name, x by position: positional inputs skip named ones
        outs = run_model(os.path.join(MODELS, "batch_mlp.ir"), ["w=" + wpath, save("x%d.npy" % batch, x)],
                         "mlp batch=%d" % batch)
        if outs is not None:
            close("mlp batch=%d" % batch, outs[0], np.tanh(x @ w + np.array([0.5, -1, 2], np.float32)))


def test_layout():
    x = np.arange(12, dtype=np.float32).reshape(4, 3) - 5
    outs = run_model(os.path.join(MODELS, "layout.ir"), [save("lx.npy", x)], "layout")
    if outs is not None and check("layout: two outputs", len(outs) == 2):
        close("transpose", outs[0], x.T)
        both = np.concatenate([x, x])[::-1, ::-1]
        close("concat/reverse/sum", outs[1], (both * both).sum(axis=1))


# ---- errors: status 1 and one line ------------------------------------------------

def test_errors():
    mlp = os.path.join(MODELS, "batch_mlp.ir")
    x = save("ex.npy", np.zeros((2, 4), np.float32))
    w = save("ew.npy", np.zeros((4, 3), np.float32))
    expect_error("missing file", ["run", tmp("nope.ir")], r"nope\.ir")
    bad = tmp("bad.ir")
    with open(bad, "w") as f:
        f.write("graph @g(%x: f32[2]) {\n  %y: f32[2] = neg(%x)\n  %z: f32[2] = frobnicate(%y)\n  return %z\n}\n")
    expect_error("parse error", ["run", bad, "-i", x], r"bad\.ir:3:\d+:")
    expect_error("parse error (ir)", ["ir", bad], r"bad\.ir:3:\d+:")
    expect_error("wrong dtype", ["run", mlp, "-i", save("f64.npy", np.zeros((2, 4))), "-i", w],
                 r"input 'x'.*expected f32\[batch, 4\], got f64\[2, 4\]")
    expect_error("wrong shape", ["run", mlp, "-i", x, "-i", save("w5.npy", np.zeros((5, 3), np.float32))],
                 r"input 'w'.*expected f32\[4, 3\], got f32\[5, 3\]")
    expect_error("wrong rank", ["run", mlp, "-i", save("r1.npy", np.zeros(4, np.float32)), "-i", w],
                 r"input 'x'.*got f32\[4\]")
    two = tmp("two.ir")
    with open(two, "w") as f:
        f.write("graph @two(%a: f32[n], %b: f32[n]) {\n  %c: f32[n] = add(%a, %b)\n  return %c\n}\n")
    expect_error("symbol bound twice", ["run", two, "-i", save("n3.npy", np.zeros(3, np.float32)), "-i",
                                        save("n4.npy", np.zeros(4, np.float32))],
                 r"input 'b'.*expected f32\[n\], got f32\[4\]: .*n")
    expect_error("missing input", ["run", mlp, "-i", x], r"missing input w")
    expect_error("missing inputs", ["run", mlp], r"missing inputs x, w")
    expect_error("unknown input name", ["run", mlp, "-i", "nope=" + x, "-i", w], r"unknown input 'nope'.*x, w")
    expect_error("input twice", ["run", mlp, "-i", "x=" + x, "-i", "x=" + x, "-i", w], r"'x' is given twice")
    expect_error("too many inputs", ["run", mlp, "-i", x, "-i", w, "-i", w], r"too many inputs")
    with open(x, "rb") as f:
        data = f.read()
    trunc = tmp("trunc.npy")
    with open(trunc, "wb") as f:
        f.write(data[:-5])
    expect_error("truncated npy", ["run", mlp, "-i", trunc, "-i", w], r"trunc\.npy.*truncated")
    junk = tmp("junk.npy")
    with open(junk, "wb") as f:
        f.write(b"definitely not numpy")
    expect_error("corrupt npy", ["run", mlp, "-i", junk, "-i", w], r"junk\.npy.*magic")
    expect_error("missing npy", ["run", mlp, "-i", tmp("absent.npy"), "-i", w], r"absent\.npy")
    expect_error("missing onnx file", ["run", tmp("m.onnx")], r"m\.onnx")
    expect_error("bad option", ["run", mlp, "--frobnicate"], r"unknown option '--frobnicate'")
    expect_error("bad repeat", ["run", mlp, "-i", x, "-i", w, "--repeat", "0"], r"--repeat")
    expect_error("no value", ["run", mlp, "-i"], r"needs a value")
    expect_error("no file", ["run"], r"no model file")
    expect_error("unknown command", ["frob"], r"unknown command 'frob'")
    expect_error("unknown pass", ["ir", mlp, "--passes", "nosuchpass"], r"nosuchpass")
    expect_error("prims tests dir", ["prims", "--tests", tmp("no_such_dir")], r"no_such_dir")
    out_file = tmp("a_file")
    open(out_file, "w").close()
    expect_error("output dir is a file", ["run", mlp, "-i", x, "-i", w, "-o", out_file], r"a_file")


# ---- the other commands -------------------------------------------------------------

def test_repeat():
    """--repeat N: the warm-up's outputs, then compile_ms, arena_peak_bytes,
    and exactly `latency median_ms=X min_ms=Y runs=N` as the last line."""
    model = os.path.join(ROOT, "models", "attention.ir")
    x = os.path.join(ROOT, "models", "attention_input.npy")
    latency = r"^latency median_ms=(\d+\.\d{3}) min_ms=(\d+\.\d{3}) runs=%d$"
    for n in (1, 3, 4):
        rc, so, se = tessera("run", model, "-i", x, "--repeat", n)
        lines = so.splitlines()
        check("repeat %d: exit 0" % n, rc == 0, se)
        check("repeat %d: four lines" % n, len(lines) == 4 and lines[0].startswith("output 0 (y): "), so)
        m = re.match(latency % n, lines[-1]) if lines else None
        check("repeat %d: latency line last" % n, m is not None, so)
        if m:
            check("repeat %d: min <= median" % n, float(m.group(2)) <= float(m.group(1)), lines[-1])
        # compiled by default: the cache line says hit or miss, never none
        check("repeat %d: compile line" % n, len(lines) == 4 and re.match(r"^compile_ms=\d+\.\d{3} cache=(hit|miss)$",
                                                                         lines[1]) is not None, so)
        m = re.match(r"^arena_peak_bytes=(\d+)$", lines[2]) if len(lines) == 4 else None
        check("repeat %d: arena line" % n, m is not None and int(m.group(1)) > 0, so)
    # -o: the outputs go to files and stdout holds only the three report lines;
    # --threads and --target interp are accepted (the interpreter is single-threaded).
    out = tmp("out_repeat")
    rc, so, se = tessera("run", model, "-i", x, "-o", out, "--repeat", "2", "--threads", "2", "--target", "interp")
    lines = so.splitlines()
    check("repeat -o: exit 0", rc == 0, se)
    check("repeat -o: three lines", len(lines) == 3 and re.match(latency % 2, lines[-1]) is not None, so)
    check("repeat -o: output written", os.path.exists(os.path.join(out, "output_0.npy")))
    check("repeat --target interp: cache=none", len(lines) == 3 and lines[0].endswith(" cache=none"), so)
    # without --repeat nothing is timed: the summary alone
    rc, so, se = tessera("run", model, "-i", x, "--threads", "1")
    check("no repeat: summary only", rc == 0 and len(so.splitlines()) == 1, so + se)
    for bad, pattern in ((["--repeat", "0"], r"--repeat needs a whole number from 1 to 1000000, got '0'"),
                         (["--repeat", "x"], r"--repeat needs a whole number .* got 'x'"),
                         (["--repeat", "-2"], r"--repeat needs a whole number .* got '-2'"),
                         (["--repeat=3.5"], r"--repeat needs a whole number .* got '3\.5'"),
                         (["--threads", "0"], r"--threads needs a whole number from 1 to 1024, got '0'"),
                         (["--threads", "many"], r"--threads needs a whole number .* got 'many'"),
                         (["--target", "nosuch"], r"unknown target 'nosuch' \(available: cpu, opencl, cuda, interp\)")):
        expect_error("run %s" % " ".join(bad), ["run", model, "-i", x, "--repeat", "2"] + bad, pattern)


def ops_def_names():
    with open(os.path.join(ROOT, "src", "ir", "ops.def")) as f:
        return re.findall(r'^TS_OP\(\s*\w+\s*,\s*"(\w+)"', f.read(), re.M)


def test_prims():
    rc, so, se = tessera("prims")
    check("prims: exit 0", rc == 0, se)
    rows = {}
    for line in so.splitlines()[1:]:
        cols = line.split()
        if len(cols) >= 6 and not line.startswith("total:"):
            rows[cols[0]] = cols
    names = ops_def_names()
    check("prims: ops.def parsed", len(names) > 50, str(len(names)))
    for name in names:
        if check("prims lists %s" % name, name in rows):
            want = "decl" if name in ("send", "recv") else "yes"
            check("prims: interp %s for %s" % (want, name), rows[name][4] == want, " ".join(rows[name]))
    check("prims: no extra rows", set(rows) == set(names), str(set(rows) ^ set(names)))
    total = [l for l in so.splitlines() if l.startswith("total:")]
    check("prims: total line", len(total) == 1 and ("%d primitives" % len(names)) in total[0], so[-300:])
    check("prims: attributes shown", re.search(r"^dot .*lhs_batch:ints", so, re.M) is not None)
    check("prims: regions shown", re.search(r"^if .*regions: then,else", so, re.M) is not None)


def test_ir():
    model = os.path.join(ROOT, "models", "attention.ir")
    for path in [model] + sorted(os.path.join(MODELS, f) for f in os.listdir(MODELS) if f.endswith(".ir")):
        with open(path) as f:
            text = f.read()
        rc, so, se = tessera("ir", path)
        check("ir round trip %s" % os.path.basename(path), rc == 0 and so == text, se or "printed text differs")
    rc, so, se = tessera("ir", model, "--dot")
    check("dot: exit 0", rc == 0, se)
    check("dot: digraph", so.startswith('digraph "attention" {') and so.rstrip().endswith("}"), so[:200])
    check("dot: edges labelled by value", '-> n' in so and 'label="%x"' in so)
    check("dot: nodes labelled by op and type", re.search(r'label="dot\\nf32\[seq, 16\]"', so) is not None)
    check("dot: braces balance", so.count("{") == so.count("}"))
    if shutil.which("dot"):
        p = subprocess.run(["dot", "-Tsvg"], input=so, capture_output=True, text=True)
        check("dot: graphviz accepts it", p.returncode == 0, p.stderr)
    rc, so, se = tessera("ir", model, "--passes", "default")
    check("ir --passes default", rc == 0 and so.startswith("graph @attention("), se)
    rc, so, se = tessera("ir", model, "--passes", "dce", "--dump-after", "dce")
    check("ir --dump-after", rc == 0 and "# after dce" in so and "# final" in so, se + so[:200])
    rc, so, se = tessera("ir", model, "--dump-after=all")
    check("ir --dump-after=all", rc == 0 and "# after simplify" in so and "# after dce" in so, se + so[:200])
    rc, so, se = tessera("ir", "--passes", "help")
    check("ir --passes help", rc == 0 and "dce" in so, se)


def test_regions_dot():
    path = tmp("cond.ir")
    with open(path, "w") as f:
        f.write("graph @cond(%p: bool[], %x: f32[2]) {\n"
                "  %r: f32[2] = if(%p, %x) then(%a: f32[2]) {\n"
                "    %n: f32[2] = neg(%a)\n"
                "    yield %n\n"
                "  } else(%b: f32[2]) {\n"
                "    yield %b\n"
                "  }\n"
                "  return %r\n"
                "}\n")
    rc, so, se = tessera("ir", path, "--dot")
    check("dot regions: exit 0", rc == 0, se)
    check("dot regions: clusters", so.count("subgraph cluster_") == 2 and 'label="if then"' in so, so)
    for flag in (True, False):
        outs = run_model(path, ["p=" + save("p.npy", np.array(flag)), save("cx.npy", np.array([1, -2], np.float32))],
                         "if %s" % flag)
        if outs is not None:
            close("if %s" % flag, outs[0], np.array([-1, 2] if flag else [1, -2], np.float32))


def test_misc():
    rc, so, se = tessera("version")
    check("version", rc == 0 and re.match(r"^tessera \d+\.\d+\.\d+\n$", so), so + se)
    for args in (["--help"], [], ["run", "--help"]):
        rc, so, se = tessera(*args)
        check("usage %s" % args, rc == 0 and so.startswith("usage: tessera") and "run FILE" in so, so + se)
    x = os.path.join(ROOT, "models", "attention_input.npy")
    nested = tmp("deep/er/out")
    rc, so, se = tessera("run", os.path.join(ROOT, "models", "attention.ir"), "-i", x, "--output=" + nested)
    check("-o creates directories", rc == 0 and os.path.exists(os.path.join(nested, "output_0.npy")), se)
    check("-o prints nothing", so == "", so)
    half = tmp("half.ir")
    with open(half, "w") as f:
        f.write("graph @half(%x: f32[3]) {\n  %y: bf16[3] = cast(%x) {dtype=bf16}\n  return %y\n}\n")
    xs = np.array([1.5, -2, 3.140625], np.float32)  # exact in bf16
    hx = save("hx.npy", xs)
    outs = run_model(half, ["x=" + hx], "bf16 output")
    if outs is not None:
        close("bf16 output written as f32", outs[0], xs)
    rc, so, se = tessera("run", half, "--input=x=" + hx)
    check("bf16 summary", rc == 0 and so == "output 0 (y): bf16[3] = [1.5, -2, 3.14062]\n", so + se)


# ---- ONNX models ----------------------------------------------------------------------
# Small models made here with onnx's helper API: `run` with .pb and .npy
# inputs (a shape input is given as a known value at load time; an input
# that is also an initializer can be replaced by name), `--format pb`,
# `check` on generated cases, `info`, and the errors.

def onnx_save(model, name):
    path = tmp(name)
    onnx.save(model, path)
    return path


def make_reshape_model(opset=17):
    """y = Reshape(x + b, s), z = Relu(x): x f32[2, 3], s i64[2] (a shape
    input, needed as a constant), b f32[3] an initializer that is also an
    input (a default a file may replace)."""
    nodes = [helper.make_node("Add", ["x", "b"], ["t"], name="add"),
             helper.make_node("Reshape", ["t", "s"], ["y"], name="reshape"),
             helper.make_node("Relu", ["x"], ["z"], name="relu")]
    b = numpy_helper.from_array(np.array([1, 2, 3], np.float32), "b")
    graph = helper.make_graph(
        nodes, "reshape_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("s", TensorProto.INT64, [2]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])],
        initializer=[b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def save_pb(name, array, tensor_name=""):
    path = tmp(name)
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, tensor_name).SerializeToString())
    return path


def read_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def test_onnx_run():
    model = onnx_save(make_reshape_model(), "reshape.onnx")
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    b = np.array([1, 2, 3], np.float32)
    s = np.array([3, 2], np.int64)
    # positional: x from a .pb, s from a .npy
    outs = run_model(model, [save_pb("x.pb", x, "x"), save("s.npy", s)], "onnx run .pb/.npy")
    if outs is not None and check("onnx run: two outputs", len(outs) == 2, str(len(outs))):
        close("onnx run y", outs[0], (x + b).reshape(3, 2))
        close("onnx run z", outs[1], np.maximum(x, 0))
    # by name, in any order; another shape; the initializer b replaced
    b2 = np.array([10, 20, 30], np.float32)
    outs = run_model(model, ["s=" + save("s61.npy", np.array([6, 1], np.int64)), "b=" + save("b2.npy", b2),
                             "x=" + save("x.npy", x)], "onnx run by name")
    if outs is not None and len(outs) == 2:
        close("onnx run y (s=[6, 1], b replaced)", outs[0], (x + b2).reshape(6, 1))
    # --format pb: TensorProtos named after the outputs
    out = tmp("out_onnx_pb")
    rc, so, se = tessera("run", model, "-i", save("x2.npy", x), "-i", save("s2.npy", s), "-o", out, "--format", "pb")
    if check("onnx run --format pb: exit 0", rc == 0, se):
        names = sorted(os.listdir(out))
        check("--format pb files", names == ["output_0.pb", "output_1.pb"], str(names))
        name, y = read_pb(os.path.join(out, "output_0.pb"))
        check("--format pb: named y", name == "y", repr(name))
        close("--format pb y", y, (x + b).reshape(3, 2))
        name, z = read_pb(os.path.join(out, "output_1.pb"))
        check("--format pb: named z", name == "z", repr(name))
        close("--format pb z", z, np.maximum(x, 0))
    # the printed summary names the outputs
    rc, so, se = tessera("run", model, "-i", save("x3.npy", x), "-i", save("s3.npy", s))
    check("onnx run summary", rc == 0 and so.startswith("output 0 (y): f32[3, 2] = [-1, 1,")
          and "output 1 (z): f32[2, 3]" in so, so + se)


def make_case(root, name, x, expected, opset=17):
    """An ONNX backend test case: model.onnx (y = Abs(x)) and
    test_data_set_0/{input_0,output_0}.pb."""
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    graph = helper.make_graph([helper.make_node("Abs", ["x"], ["y"])], name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(x.shape))])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), os.path.join(d, "model.onnx"))
    for kind, array in (("input_0", x), ("output_0", expected)):
        with open(os.path.join(d, "test_data_set_0", kind + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, "").SerializeToString())  # names may be empty
    return d


def test_onnx_bf16_as_u16():
    """Older ONNX test data stores bfloat16 tensors as UINT16 TensorProtos
    of their bits: y = Cast(x, bfloat16), z = b + b with b bfloat16. Given
    and expected as u16 bits, check passes and run reads b as bf16; a wrong
    expected bit pattern still fails."""
    d = tmp("bf16_cases/test_bf16_bits")
    os.makedirs(os.path.join(d, "test_data_set_0"))
    nodes = [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16),
             helper.make_node("Add", ["b", "b"], ["z"])]
    graph = helper.make_graph(nodes, "bf16", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
                                              helper.make_tensor_value_info("b", TensorProto.BFLOAT16, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [3]),
                               helper.make_tensor_value_info("z", TensorProto.BFLOAT16, [2])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(d, "model.onnx"))
    x = np.array([1.0, -2.5, 3.140625], np.float32)   # exact in bfloat16

    def bits(a):
        return (np.asarray(a, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    for kind, array in (("input_0", x), ("input_1", bits([1.5, -0.25])), ("output_0", bits(x)),
                        ("output_1", bits([3.0, -0.5]))):
        with open(os.path.join(d, "test_data_set_0", kind + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, "").SerializeToString())
    rc, so, se = tessera("check", d, "--target", "interp")
    check("bf16 stored as u16 bits: check passes", rc == 0 and so.startswith("PASS test_bf16_bits"), so + se)
    out = tmp("out_bf16_bits")
    rc, so, se = tessera("run", os.path.join(d, "model.onnx"), "-i", os.path.join(d, "test_data_set_0", "input_0.pb"),
                         "-i", os.path.join(d, "test_data_set_0", "input_1.pb"), "-o", out, "--format", "pb")
    if check("bf16 stored as u16 bits: run reads them", rc == 0, se):
        z = TensorProto()
        with open(os.path.join(out, "output_1.pb"), "rb") as f:
            z.ParseFromString(f.read())
        check("bf16 run: z's type and bits", z.data_type == TensorProto.BFLOAT16 and
              list(numpy_helper.to_array(z).astype(np.float32)) == [3.0, -0.5], str(z))
    with open(os.path.join(d, "test_data_set_0", "output_1.pb"), "wb") as f:
        f.write(numpy_helper.from_array(bits([3.0, 0.5]), "").SerializeToString())
    rc, so, se = tessera("check", d, "--target", "interp")
    check("bf16 stored as u16 bits: a wrong bit pattern fails", rc == 1 and "FAIL test_bf16_bits: output 1 (z)" in so
          and "expected 0.5" in so, so + se)


def test_onnx_check():
    root = tmp("cases")
    x = np.array([[-1.5, 2], [0, -3]], np.float32)
    good = make_case(root, "test_abs_good", x, np.abs(x))
    bad_y = np.abs(x)
    bad_y[1, 1] = 7
    make_case(root, "test_abs_bad", x, bad_y)
    make_case(root, "test_abs_shape", x, np.abs(x).reshape(4))
    rc, so, se = tessera("check", good)
    check("check pass: exit 0", rc == 0, so + se)
    check("check pass: lines", so == "PASS test_abs_good\n1 passed, 0 failed\n", so)
    rc, so, se = tessera("check", good + "/", good + "//")
    check("check DIR/: the case's name", rc == 0 and so == "PASS test_abs_good\n" * 2 + "2 passed, 0 failed\n", so + se)
    rc, so, se = tessera("check", root, "-j", "2")
    lines = so.splitlines()
    check("check folder: exit 1", rc == 1, so + se)
    check("check folder: sorted cases, closing line",
          [l.split(":")[0] for l in lines] == ["FAIL test_abs_bad", "PASS test_abs_good", "FAIL test_abs_shape",
                                                "1 passed, 2 failed"], so)
    check("check: mismatch names the output, index and values",
          re.search(r"^FAIL test_abs_bad: output 0 \(y\): 1 of 4 values differ; first at \[1, 1\]: got 3, expected 7$",
                    so, re.M) is not None, so)
    check("check: shape mismatch", re.search(r"^FAIL test_abs_shape: output 0 \(y\): got f32\[2, 2\], expected f32\[4\]$",
                                             so, re.M) is not None, so)
    # --xfail: listed failures are expected; a listed pass is not
    xf = tmp("xfail.txt")
    with open(xf, "w") as f:
        f.write("# comment\ntest_abs_bad  # wrong expected value\ntest_abs_shape # shape\ntest_not_run\n")
    rc, so, se = tessera("check", root, "--xfail", xf)
    check("check --xfail: exit 0", rc == 0, so + se)
    check("check --xfail: closing line", so.endswith("\n1 passed, 2 failed\n"), so)
    with open(xf, "w") as f:
        f.write("test_abs_good\ntest_abs_bad\n")
    rc, so, se = tessera("check", root, "--xfail=" + xf)
    check("check --xfail violations: exit 1", rc == 1, so + se)
    check("check: UNEXPECTED PASS", "\nUNEXPECTED PASS test_abs_good\n" in so, so)
    check("check: UNEXPECTED FAIL", re.search(r"^UNEXPECTED FAIL test_abs_shape: output 0", so, re.M) is not None, so)
    # tolerance: 1e-3 relative by default, --rtol widens it
    near = make_case(tmp("near"), "test_near", x, np.abs(x) * np.float32(1.002))
    rc, so, se = tessera("check", near)
    check("check rtol 1e-3: fails", rc == 1 and so.startswith("FAIL test_near: "), so + se)
    rc, so, se = tessera("check", near, "--rtol", "0.01")
    check("check --rtol 0.01: passes", rc == 0 and so.startswith("PASS test_near"), so + se)
    rc, so, se = tessera("check", good, "--verbose")
    check("check --verbose", rc == 0 and re.match(r"PASS test_abs_good  \[load [\d.]+ ms, run [\d.]+ ms", so), so + se)
    expect_error("check: missing path", ["check", tmp("no_such_case")], r"no_such_case")
    expect_error("check: no cases", ["check", MODELS], r"no test case")
    expect_error("check: bad target", ["check", good, "--target", "nosuch"], r"nosuch")
    # --timeout: a case over its CPU time is one FAIL line; the others run
    slow = os.path.join(tmp("slow"), "test_slow")
    os.makedirs(os.path.join(slow, "test_data_set_0"))
    body = helper.make_graph(   # a loop of 10^12 steps: no interpreter finishes it in a second
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array(1, np.float32))),
         helper.make_node("Add", ["v", "one"], ["v_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [])])
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["m"], value=numpy_helper.from_array(np.array(10**12, np.int64))),
         helper.make_node("Constant", [], ["t"], value=numpy_helper.from_array(np.array(True))),
         helper.make_node("Loop", ["m", "t", "a"], ["y"], body=body)], "slow",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(slow, "model.onnx"))
    for kind, array in (("input_0", np.array(0, np.float32)), ("output_0", np.array(0, np.float32))):
        with open(os.path.join(slow, "test_data_set_0", kind + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())
    rc, so, se = tessera("check", slow, good, "--timeout", "1")
    check("check --timeout", rc == 1 and so == "FAIL test_slow: timed out (over 1 s of CPU time)\nPASS test_abs_good\n"
          "1 passed, 1 failed\n", so + se)
    # --batch: cases share a child; the one that ends it fails alone and those after it run in a new child
    later = make_case(tmp("later"), "test_zz_later", x, np.abs(x))
    rc, so, se = tessera("check", good, slow, later, "--timeout", "1", "--batch", "3")
    check("check --batch: the case that ends its child fails alone", rc == 1 and so ==
          "PASS test_abs_good\nFAIL test_slow: timed out (over 1 s of CPU time)\nPASS test_zz_later\n2 passed, 1 failed\n",
          so + se)
    expect_error("check: --batch 0", ["check", good, "--batch", "0"], r"--batch")
    # a model that does not load is a FAIL line with the loader's message
    broken = make_case(tmp("broken"), "test_broken", x, np.abs(x))
    with open(os.path.join(broken, "model.onnx"), "r+b") as f:
        f.truncate(20)
    rc, so, se = tessera("check", broken)
    check("check: unloadable model is a FAIL line", rc == 1 and so.startswith("FAIL test_broken: ")
          and so.endswith("0 passed, 1 failed\n"), so + se)


def test_onnx_light_and_names():
    """The light layout (NAME.onnx beside NAME_output_0.pb, inputs made as
    ONNX's runner makes them: f32 arange(n)/n, unknown dims 1), and ONNX
    names that IR text cannot spell (gpu_0/data_0)."""
    d = tmp("light")
    os.makedirs(d)
    two = numpy_helper.from_array(np.array(2, np.float32), "two")
    graph = helper.make_graph([helper.make_node("Mul", ["gpu_0/data_0", "two"], ["out/prob"])], "tiny",
                              [helper.make_tensor_value_info("gpu_0/data_0", TensorProto.FLOAT, [1, 3, "N"])],
                              [helper.make_tensor_value_info("out/prob", TensorProto.FLOAT, None)],
                              initializer=[two])
    model = os.path.join(d, "light_tiny.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), model)
    x = (np.arange(3).reshape(1, 3, 1) / 3).astype(np.float32)
    with open(os.path.join(d, "light_tiny_output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x * 2, "out/prob").SerializeToString())
    rc, so, se = tessera("check", d)
    check("check light layout", rc == 0 and so == "PASS light_tiny\n1 passed, 0 failed\n", so + se)
    rc, so, se = tessera("check", model)
    check("check light model file", rc == 0 and so.startswith("PASS light_tiny\n"), so + se)
    out = tmp("out_light")
    x5 = np.ones((1, 3, 5), np.float32)
    rc, so, se = tessera("run", model, "-i", "gpu_0/data_0=" + save("lx.npy", x5), "-o", out, "--format=pb")
    if check("run: a name with '/' binds", rc == 0, se):
        name, y = read_pb(os.path.join(out, "output_0.pb"))
        check("--format pb keeps the ONNX output name", name == "out/prob", repr(name))
        close("light model run", y, x5 * 2)
    rc, so, se = tessera("run", model, "-i", save("lx2.npy", x5))
    check("summary names the ONNX output", rc == 0 and so.startswith("output 0 (out/prob): f32[1, 3, 5] = [2, 2,"),
          so + se)
    expect_error("onnx wrong rank names the input", ["run", model, "-i", save("lx3.npy", np.ones(3, np.float32))],
                 r"input 'gpu_0/data_0'")


def test_onnx_ops():
    rc, so, se = tessera("onnx-ops")
    rows = [l.split() for l in so.splitlines()]
    check("onnx-ops: exit 0", rc == 0, se)
    check("onnx-ops: rows 'Op since until'", len(rows) > 50 and all(
        len(r) == 3 and r[1].isdigit() and (r[2] == "max" or r[2].isdigit()) for r in rows), so[:300])
    check("onnx-ops: has Add", any(r[0] == "Add" for r in rows), so[:300])
    check("onnx-ops: other domains as domain.OpType",
          ["ai.onnx.ml.TreeEnsemble", "5", "max"] in rows and ["ai.onnx.preview.FlexAttention", "1", "max"] in rows,
          so[-300:])
    rc, so, se = tessera("--help")
    check("onnx-ops is hidden", "onnx-ops" not in so, so)


def test_onnx_info():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"),
             helper.make_node("Frobnicate", ["a"], ["y"], name="mystery")]
    graph = helper.make_graph(nodes, "frob", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = onnx_save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "frob.onnx")
    rc, so, se = tessera("info", model)
    check("info: exit 0", rc == 0, se)
    check("info: mentions the ops", "Relu" in so and "Frobnicate" in so, so)
    check("info: marks the made-up op MISSING", re.search(r"Frobnicate.*MISSING|MISSING.*Frobnicate", so) is not None, so)
    check("info: Relu not MISSING", re.search(r"Relu.*MISSING", so) is None, so)
    expect_error("info: missing file", ["info", tmp("nope.onnx")], r"nope\.onnx")
    # the unknown op, run: one line naming the node
    expect_error("onnx unknown op", ["run", model, "-i", save("fx.npy", np.zeros(2, np.float32))],
                 r"mystery.*Frobnicate|Frobnicate.*mystery")


def test_onnx_errors():
    model = onnx_save(make_reshape_model(), "m.onnx")
    x = save("ex23.npy", np.zeros((2, 3), np.float32))
    s = save("es.npy", np.array([3, 2], np.int64))
    expect_error("onnx wrong shape", ["run", model, "-i", save("ex32.npy", np.zeros((3, 2), np.float32)), "-i", s],
                 r"^tessera: input 'x': expected f32\[2, 3\], got f32\[3, 2\]$")
    expect_error("onnx wrong dtype", ["run", model, "-i", save("ex64.npy", np.zeros((2, 3))), "-i", s],
                 r"^tessera: input 'x': expected f32\[2, 3\], got f64\[2, 3\]$")
    # a symbolic dim is shown by its name
    expect_error("onnx wrong shape, symbolic batch",
                 ["run", os.path.join(ROOT, "models", "tinynet", "model.onnx"), "-i",
                  save("ex64x64.npy", np.zeros((1, 3, 64, 64), np.float32))],
                 r"^tessera: input 'image': expected f32\[batch, 3, 32, 32\], got f32\[1, 3, 64, 64\]$")
    expect_error("onnx missing input", ["run", model, "-i", x], r"missing input s")
    expect_error("onnx unknown input", ["run", model, "-i", "q=" + x, "-i", s], r"unknown input 'q'")
    expect_error("onnx too many inputs", ["run", model, "-i", x, "-i", s, "-i", s], r"too many inputs")
    expect_error("onnx bad shape value", ["run", model, "-i", x, "-i", save("es5.npy", np.array([5, 2], np.int64))],
                 r"[Rr]eshape|5")
    expect_error("--format without -o", ["run", model, "-i", x, "-i", s, "--format", "pb"], r"--format")
    expect_error("bad --format", ["run", model, "-i", x, "-i", s, "-o", tmp("o"), "--format", "csv"], r"npy or pb")
    with open(model, "rb") as f:
        data = f.read()
    trunc = tmp("trunc.onnx")
    with open(trunc, "wb") as f:
        f.write(data[:len(data) // 2])
    expect_error("truncated onnx", ["run", trunc, "-i", x, "-i", s], r"trunc\.onnx")
    # an initializer in an external data file that is not there
    ext = make_reshape_model()
    big = numpy_helper.from_array(np.ones(64, np.float32), "w")
    ext.graph.initializer.append(big)
    ext.graph.node.append(helper.make_node("Identity", ["w"], ["wout"], name="ident"))
    ext.graph.output.append(helper.make_tensor_value_info("wout", TensorProto.FLOAT, [64]))
    d = tmp("ext")
    os.makedirs(d)
    onnx.save(ext, os.path.join(d, "ext.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="ext.data", size_threshold=0)
    rc, so, se = tessera("run", os.path.join(d, "ext.onnx"), "-i", x, "-i", s)
    check("external data present: exit 0", rc == 0, se)
    os.remove(os.path.join(d, "ext.data"))
    expect_error("missing external data", ["run", os.path.join(d, "ext.onnx"), "-i", x, "-i", s], r"ext\.data")
    # a pooling node over no spatial axes (rank-2 input, an empty kernel_shape): found by the fuzzer, it
    # copied from a NULL attribute list (UBSan); it must run or fail cleanly, never crash
    pnode = helper.make_node("MaxPool", ["x"], ["y"], name="pool")
    pnode.attribute.append(helper.make_attribute("kernel_shape", [], attr_type=onnx.AttributeProto.INTS))
    pool = helper.make_graph([pnode], "pool2d",
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    pm = onnx_save(helper.make_model(pool, opset_imports=[helper.make_opsetid("", 17)]), "pool2d.onnx")
    rc, so, se = tessera("run", pm, "-i", x)
    check("pool over no spatial axes: no crash", rc in (0, 1) and "runtime error" not in se and
          (rc == 0 or se.startswith("tessera:")), "rc=%d %s" % (rc, se))
    # Attention whose Q and K head sizes differ, with a mask: found by the fuzzer, the mask's bias read the
    # dims of the failed Q.K product (a NULL value); it must be the product's clear error
    anode = helper.make_node("Attention", ["Q", "K", "V", "attn_mask"], ["Y"], name="attn")
    att = helper.make_graph([anode], "attn_bad_heads", [
        helper.make_tensor_value_info("Q", TensorProto.FLOAT, [1, 2, 4, 14]),
        helper.make_tensor_value_info("K", TensorProto.FLOAT, [1, 2, 6, 8]),
        helper.make_tensor_value_info("V", TensorProto.FLOAT, [1, 2, 6, 8]),
        helper.make_tensor_value_info("attn_mask", TensorProto.FLOAT16, [4, 6])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    expect_error("attention with mismatched head sizes", ["ir", onnx_save(helper.make_model(
        att, opset_imports=[helper.make_opsetid("", 23)]), "attn_bad_heads.onnx")], r"dot: lhs dim")
    # and without kernel_shape at all: a clear error
    del pnode.attribute[:]
    expect_error("pool without kernel_shape", ["run", onnx_save(helper.make_model(pool, opset_imports=[
        helper.make_opsetid("", 17)]), "pool2d_nok.onnx"), "-i", x], r"kernel_shape is required|rank >= 3")


# Sequences and optionals (D17): SequenceProto/OptionalProto files in and
# out of `run`, one .npy per tensor, `check` comparing them, and the errors.

def make_seq_model():
    """ys = SequenceMap(xs, y = x * 2), n = SequenceLength(xs), o = Optional(n):
    xs a sequence of f32 vectors (lengths may differ)."""
    body = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["y"])], "body",
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None])],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])],
                             [numpy_helper.from_array(np.array(2, np.float32), "two")])
    nodes = [helper.make_node("SequenceMap", ["xs"], ["ys"], body=body),
             helper.make_node("SequenceLength", ["xs"], ["n"]),
             helper.make_node("Optional", ["n"], ["o"])]
    seq_t = helper.make_tensor_sequence_value_info
    opt_t = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.INT64, []))
    graph = helper.make_graph(nodes, "seq_model", [seq_t("xs", TensorProto.FLOAT, [None])],
                              [seq_t("ys", TensorProto.FLOAT, [None]),
                               helper.make_tensor_value_info("n", TensorProto.INT64, []),
                               helper.make_value_info("o", opt_t)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def save_seq(name, arrays, seq_name="xs"):
    path = tmp(name)
    with open(path, "wb") as f:
        f.write(numpy_helper.from_list(arrays, seq_name).SerializeToString())
    return path


def test_onnx_sequences():
    model = onnx_save(make_seq_model(), "seq.onnx")
    xs = [np.array([1, 2, 3], np.float32), np.array([4, 5], np.float32)]
    xs_pb = save_seq("xs.pb", xs)
    # npy: one file per tensor of a sequence or optional
    out = tmp("out_seq_npy")
    rc, so, se = tessera("run", model, "-i", xs_pb, "-o", out)
    if check("seq run npy: exit 0", rc == 0, se):
        names = sorted(os.listdir(out))
        check("seq run npy files", names == ["output_0_0.npy", "output_0_1.npy", "output_1.npy", "output_2_0.npy"],
              str(names))
        if len(names) == 4:
            close("seq npy ys[0]", np.load(os.path.join(out, "output_0_0.npy")), xs[0] * 2)
            close("seq npy ys[1]", np.load(os.path.join(out, "output_0_1.npy")), xs[1] * 2)
            close("seq npy n", np.load(os.path.join(out, "output_1.npy")), np.array(2, np.int64))
    # pb: a SequenceProto and an OptionalProto, as ONNX's test data has them
    out = tmp("out_seq_pb")
    rc, so, se = tessera("run", model, "-i", xs_pb, "-o", out, "--format", "pb")
    if check("seq run pb: exit 0", rc == 0, se):
        sp = onnx.SequenceProto()
        with open(os.path.join(out, "output_0.pb"), "rb") as f:
            sp.ParseFromString(f.read())
        ys = numpy_helper.to_list(sp)
        check("seq pb: named ys, 2 elements", sp.name == "ys" and len(ys) == 2, "%r %d" % (sp.name, len(ys)))
        if len(ys) == 2:
            close("seq pb ys[1]", ys[1], xs[1] * 2)
        op = onnx.OptionalProto()
        with open(os.path.join(out, "output_2.pb"), "rb") as f:
            op.ParseFromString(f.read())
        check("seq pb: optional", op.name == "o" and op.HasField("tensor_value")
              and int(numpy_helper.to_array(op.tensor_value)) == 2, str(op))
    # the summary: the form, then each tensor
    rc, so, se = tessera("run", model, "-i", xs_pb)
    check("seq run summary", rc == 0 and so.startswith("output 0 (ys): [t,t] (a sequence of 2 tensors)\n"
                                                       "  tensor 0: f32[3] = [2, 4, 6]")
          and "output 2 (o): ?t (an optional of 1 tensor)" in so, so + se)
    # check: a case with sequence data, and one whose expected sequence is longer
    for name, want in (("seq_ok", [x * 2 for x in xs]), ("seq_long", [x * 2 for x in xs] + [xs[0]])):
        d = os.path.join(tmp("seq_cases"), "test_" + name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        onnx.save(make_seq_model(), os.path.join(d, "model.onnx"))
        data = os.path.join(d, "test_data_set_0")
        shutil.copy(xs_pb, os.path.join(data, "input_0.pb"))
        with open(os.path.join(data, "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_list(want, "ys").SerializeToString())
        with open(os.path.join(data, "output_1.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.array(2, np.int64), "n").SerializeToString())
        with open(os.path.join(data, "output_2.pb"), "wb") as f:
            f.write(numpy_helper.from_optional(np.array(2, np.int64), "o").SerializeToString())
    rc, so, se = tessera("check", tmp("seq_cases"))
    check("seq check: one pass, one fail", rc == 1 and "PASS test_seq_ok" in so and
          "FAIL test_seq_long: output 0 (ys): got a value of form [t,t], expected [t,t,t]" in so, so + se)
    # errors: one line, status 1
    expect_error("seq from npy", ["run", model, "-i", save("xs.npy", xs[0])], r"a sequence is read from a \.pb file")
    garbage = tmp("garbage.pb")
    with open(garbage, "wb") as f:
        f.write(b"\x1a\xff\xff\xff\x0f")
    expect_error("seq garbage pb", ["run", model, "-i", garbage], r"garbage\.pb")
    expect_error("seq wrong dtype", ["run", model, "-i", save_seq("xi.pb", [np.array([1], np.int64)])],
                 r"input 'xs'.*i64")


ONNX_TESTS = (test_onnx_run, test_onnx_check, test_onnx_bf16_as_u16, test_onnx_light_and_names, test_onnx_ops, test_onnx_info,
              test_onnx_errors, test_onnx_sequences) if onnx is not None else ()



# ---- the compiled target ---------------------------------------------------------

def main():
    if len(sys.argv) != 2 or not os.access(sys.argv[1], os.X_OK):
        print("usage: test_cli.py PATH/TO/tessera", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1
    cli_common.TESSERA = os.path.abspath(sys.argv[1])
    if onnx is None:
        print("test_cli.py: onnx is not installed: skipping the ONNX checks", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="tessera_cli_") as d:
        cli_common.TMP = d
        # runs compile by default: keep their code out of the user's cache
        os.environ["TESSERA_CACHE_DIR"] = os.path.join(d, "jit_cache_default")
        for test in (test_attention_bundled, test_attention_any_length, test_broadcasting, test_reductions,
                     test_symbolic_batch, test_layout, test_errors, test_repeat, test_prims, test_ir,
                     test_regions_dot, test_misc, test_cpu_target, test_row_kernel, test_row_maxmin_lanes,
                     test_streamed_rows, test_tile_epilogue, test_exp_shift, test_reshape_and_short_rows,
                     test_parameter_only_values_run_first,
                     test_runtime_unit, test_gather_compiled, test_concat_in_place, test_concat_strided, test_tail_lanes,
                     test_epilogue_split, test_sections, test_reduce_merged, test_pool_planes, test_roll_parts, test_scan_strided,
                     test_control_compiled, test_loops_merged, test_loops_tail, test_loops_shuffle, test_split_div, test_concat_table, test_shared_packing, test_shared_shapes, test_shared_offsets, test_short_sums, test_strided_lanes, test_unroll_budget, test_indexing_compiled,
                     test_conv_over_one_position, test_light_compile, test_opencl_target, test_cuda_target) + ONNX_TESTS:
            try:
                test()
            except Exception as e:  # a crash in one test is one failure, not the end
                check(test.__name__, False, "%s: %s" % (type(e).__name__, e))
    return pycheck.report()


if __name__ == "__main__":
    sys.exit(main())
