"""cli_listings.py — the CPU compiler's golden loop listings (`tessera ir
--loops` against tests/cli/models/*.loops), each model also run compiled
against the interpreter. Split from cli_cpu.py."""
import json
import os
import re

import numpy as np

from cli_common import (MODELS, ROOT, check, close, cpu_and_interp, env, expect_error, run_interp, run_model, save,
                        tessera, tmp)

def listing_matches(name, what):
    """`tessera ir MODELS/name.ir --what` against the golden file
    MODELS/name.what: (whether it matches, the listing, stderr)."""
    rc, so, se = tessera("ir", os.path.join(MODELS, name + ".ir"), "--" + what)
    with open(os.path.join(MODELS, name + "." + what)) as f:
        return rc == 0 and so == f.read(), so, se


def test_reduce_merged():
    """Adjacent reduced axes of a stored value are one loop over their
    product (D131): a global pool over 20x20 is one vector loop of 400,
    a max over axes 1 and 2 one loop of 30; axes 1 and 3 stay two loops.
    Golden loop listing; against the interpreter."""
    model = os.path.join(MODELS, "reduce_merged.ir")
    ok, so, se = listing_matches("reduce_merged", "loops")
    check("reduce merged: golden loops", ok and "for i2 in [0, 400) vector" in so, so + se)
    g = np.random.default_rng(31)
    q = g.standard_normal((2, 5, 6, 7)).astype(np.float32)
    q[1, 4, 5, 3] = np.nan
    arrays = {"x": g.standard_normal((2, 3, 20, 20)).astype(np.float32),
              "w": g.standard_normal((4, 3, 1, 1)).astype(np.float32), "q": q}
    got, ref = cpu_and_interp(model, arrays, "reduce_merged")
    if got and ref and check("reduce merged: three outputs", len(got) == len(ref) == 3):
        close("reduce merged: sum cpu vs interpreter", got[0], ref[0], rtol=1e-5, atol=1e-5)
        check("reduce merged: max bit for bit (a NaN)", got[1].tobytes() == ref[1].tobytes() and np.isnan(got[1]).any(),
              "%s vs %s" % (got[1], ref[1]))
        check("reduce merged: strided sum cpu vs interpreter (NaN where it is)",
              np.allclose(got[2], ref[2], rtol=1e-5, atol=1e-5, equal_nan=True) and np.isnan(ref[2]).sum() == 1,
              "%s vs %s" % (got[2], ref[2]))


def test_pool_planes():
    """Unpadded max/min pools of rows under 32 columns run as two passes
    over chunks of whole planes and a copy of the picked positions (D179):
    2 x 40 planes of 10x10 in two chunks of 40. With a column stride the
    picked positions fold pass 1's columns themselves, without a pass 2
    over every column (D198): the 2x2/2 and 3x3 with strides (1, 2) pools;
    the 3x3/1 keeps pass 2. A pool over rows of 40 (with a pad) keeps
    D121's per-row passes. Golden loop listing; against the interpreter
    bit for bit, with NaNs and signed zeros on the planes' last rows and
    columns (where the passes fold across rows and planes)."""
    model = os.path.join(MODELS, "pool_planes.ir")
    ok, so, se = listing_matches("pool_planes", "loops")
    check("pool planes: golden loops", ok and "for i0 in [0, 2) parallel\n    for i1 in [0, 3990) vector" in so
          and so.count("rowtmp[add(i2, 3984)]") == 1, so + se)
    g = np.random.default_rng(37)
    x = np.round(g.standard_normal((2, 40, 10, 10)) * 2).astype(np.float32) / 2
    x[0, 3, 9, 4], x[1, 39, 9, 9], x[0, 7, 2, 9] = np.nan, np.nan, -np.nan
    x[1, 0, 0, :2], x[0, 39, 9, 8:] = [-0.0, 0.0], [0.0, -0.0]
    y = g.standard_normal((1, 3, 9, 40)).astype(np.float32)
    y[0, 1, 8, 39] = np.nan
    got, ref = cpu_and_interp(model, {"x": x, "y": y}, "pool_planes")
    if got and ref and check("pool planes: four outputs", len(got) == len(ref) == 4):
        for i in range(4):
            check("pool planes: output %d bit for bit" % i, got[i].tobytes() == ref[i].tobytes()
                  and np.isnan(got[i]).any(), "%s vs %s" % (got[i], ref[i]))


def test_roll_parts():
    """Alike nests of a kernel reading a concat's parts become one loop
    over tables of offsets and buffer numbers (D132): the five 4-channel
    parts of a 6-way concat are one rolled nest after the first part's,
    while a concat whose first part is computed in the kernel (an add)
    keeps its three nests (two alike ones are not a run). Golden loop
    listing; the C reads the parts through bufs[]; against the
    interpreter."""
    model = os.path.join(MODELS, "roll_parts.ir")
    ok, so, se = listing_matches("roll_parts", "loops")
    check("roll parts: golden loops", ok and "tab1 = [3, 4, 5, 6, 7]" in so, so + se)
    rc, so, se = tessera("ir", model, "--emit", "c")
    check("roll parts: parts read through the table", rc == 0 and "((const float *)bufs[" in so
          and "static const int64_t tab1[5]" in so, so[-3000:] + se)
    g = np.random.default_rng(37)
    shapes = {"a": (2, 8, 5, 5), "b": (2, 4, 5, 5), "c": (2, 4, 5, 5), "d": (2, 4, 5, 5), "e": (2, 4, 5, 5),
              "f": (2, 4, 5, 5), "s": (28,), "t": (2, 6, 5, 5), "u": (2, 6, 5, 5), "v": (2, 6, 5, 5)}
    arrays = {k: g.standard_normal(v).astype(np.float32) for k, v in shapes.items()}
    got, ref = cpu_and_interp(model, arrays, "roll_parts")
    if got and ref and check("roll parts: two outputs", len(got) == len(ref) == 2):
        check("roll parts: the rolled kernel bit for bit", got[0].tobytes() == ref[0].tobytes(),
              "max diff %g" % np.abs(got[0] - ref[0]).max())
        close("roll parts: exp over the other concat", got[1], ref[1], rtol=1e-5, atol=1e-6)


def test_scan_strided():
    """A cumulative sum along an axis with elements after it stores its
    elementwise input (a sigmoid) first: a vector loop kernel computes it
    and the scan only loads (D134); a scan along the last axis keeps its
    input (a tanh) inline. Golden fusion listing; against the
    interpreter."""
    model = os.path.join(MODELS, "scan_strided.ir")
    ok, so, se = listing_matches("scan_strided", "fusion")
    check("scan strided: golden fusion", ok and "%c <- cumulative\n" in so, so + se)
    g = np.random.default_rng(41)
    arrays = {"x": g.standard_normal((2, 48, 20)).astype(np.float32),
              "r": g.standard_normal((3, 30)).astype(np.float32)}
    got, ref = cpu_and_interp(model, arrays, "scan_strided")
    if got and ref and check("scan strided: two outputs", len(got) == len(ref) == 2):
        close("scan strided: sigmoid scan cpu vs interpreter", got[0], ref[0], rtol=1e-5, atol=1e-5)
        close("scan strided: tanh scan cpu vs interpreter", got[1], ref[1], rtol=1e-5, atol=1e-5)


def test_epilogue_split():
    """An epilogue that begins with a bias and goes on (a SiLU, a max of
    x and tanh x) is split (D138): the bias is the runtime's tile
    epilogue, what follows a callback of the element alone, which runs on
    a dense block as one row (a 3x3 map's rows of 9 kept the SiLU
    scalar). A depthwise conv on 3x3 maps and a GEMM with a column bias.
    Golden loop listing; against the interpreter."""
    model = os.path.join(MODELS, "epilogue_split.ir")
    ok, so, se = listing_matches("epilogue_split", "loops")
    check("epilogue split: golden loops", ok and so.count("then on each block, dense as one row") == 2, so + se)
    g = np.random.default_rng(43)
    arrays = {"x": 3 * g.standard_normal((2, 24, 3, 3)).astype(np.float32),
              "w": g.standard_normal((24, 1, 5, 5)).astype(np.float32),
              "b": g.standard_normal(24).astype(np.float32),
              "a": g.standard_normal((5, 7)).astype(np.float32),
              "m": g.standard_normal((7, 20)).astype(np.float32),
              "c": g.standard_normal(20).astype(np.float32)}
    arrays["x"][1, 3, 1, 1] = np.float32(-200.0)   # exp(200) is inf: the SiLU is -0
    got, ref = cpu_and_interp(model, arrays, "epilogue_split")
    if got and ref and check("epilogue split: two outputs", len(got) == len(ref) == 2):
        close("epilogue split: conv SiLU cpu vs interpreter", got[0], ref[0], rtol=1e-5, atol=1e-5)
        close("epilogue split: GEMM cpu vs interpreter", got[1], ref[1], rtol=1e-5, atol=1e-5)


def test_sections():
    """Two chains of small kernels that share nothing run side by side,
    one thread each (D139): six steps of tanh(x W), five of tanh(-(y V)),
    then the kernel where they meet; after the third step of the first,
    an argmax and a gather through it, whose index check runs before its
    launch and so keeps it out of a section (the check read the indices
    before the argmax had run: the PyTorch tests' max pools failed). The
    trace puts the chains' kernels on threads 0 and 1, the gather and the
    last on 0; the outputs are the interpreter's (without the memory
    plan's section lifetimes the chains overwrite each other's values)."""
    model = os.path.join(MODELS, "sections.ir")
    g = np.random.default_rng(47)
    arrays = {"x": g.standard_normal((8, 64)).astype(np.float32), "y": g.standard_normal((8, 64)).astype(np.float32),
              "w": (0.1 * g.standard_normal((64, 64))).astype(np.float32),
              "v": (0.1 * g.standard_normal((64, 64))).astype(np.float32),
              "e": (0.1 * g.standard_normal((64, 64))).astype(np.float32)}
    inputs = ["%s=%s" % (k, save("sections_%s.npy" % k, v)) for k, v in arrays.items()]
    trace = tmp("sections_trace.json")
    with env(TESSERA_CACHE_DIR=tmp("jit_cache_sections")):
        got = run_model(model, inputs, "sections_cpu", ["--threads", "2", "--profile", trace])
    ref = run_interp(model, inputs, "sections_interp")
    if got and ref:
        close("sections: cpu on 2 threads vs interpreter", got[0], ref[0], rtol=1e-5, atol=1e-5)
    tids = {}
    if os.path.exists(trace):
        with open(trace) as f:
            for e in json.load(f)["traceEvents"]:
                if e.get("ph") == "X":
                    tids.setdefault(e["name"], set()).add(e.get("tid"))
    chains = set().union(*(tids.get("ts_k%d" % i, set()) for i in range(13) if i != 7)) if tids else set()
    check("sections: the chains on threads 0 and 1, the gather and the meeting on 0",
          chains == {0, 1} and tids.get("ts_k1") == {1} and tids.get("ts_k9") == {1} and tids.get("ts_k7") == {0}
          and tids.get("ts_k13") == {0}, str(tids))


def test_tail_lanes():
    """A vector loop of one store with a remainder computes its last 16
    values first, then the loop without the remainder, then stores them
    (D128): a SiLU epilogue over a 6x6 map's rows (36 = 2 x 16 + 4), a
    tanh over rows of 37 (a row term keeps them rows, D142), and a max pool's two passes over rows of 37 and
    18 (the exact max: NaN and -0 in the last lanes). All four loops take
    it (`--emit c`; the SiLU once: its part after the bias, D138; the
    whole epilogue is not emitted beside a tile epilogue, D144), and the
    outputs are the interpreter's (the pool's bit for bit)."""
    model = os.path.join(MODELS, "tail_lanes.ir")
    rc, so, se = tessera("ir", model, "--emit", "c")
    whole_epi = re.search(r"ts_k\d+_epi\(", so)
    check("tail lanes: four loops", rc == 0 and so.count("float tl") == 4 and "_rest(" in so and not whole_epi,
          so[-2000:] + se)
    g = np.random.default_rng(29)
    q = g.standard_normal((2, 3, 5, 37)).astype(np.float32)
    q[0, 0, 1, 35] = np.nan   # in the remainder lanes
    q[1, 2, :, 33:37] = -0.0
    q[1, 2, 0, 34] = 0.0
    arrays = {"x": g.standard_normal((2, 4, 6, 6)).astype(np.float32),
              "w": g.standard_normal((8, 4, 3, 3)).astype(np.float32),
              "b": g.standard_normal(8).astype(np.float32),
              "r": g.standard_normal((3, 37)).astype(np.float32), "q": q}
    got, ref = cpu_and_interp(model, arrays, "tail_lanes")
    if got and ref and check("tail lanes: three outputs", len(got) == len(ref) == 3):
        for k in range(2):
            close("tail lanes: output %d cpu vs interpreter" % k, got[k], ref[k], rtol=1e-5, atol=1e-5)
        check("tail lanes: the pool bit for bit", got[2].tobytes() == ref[2].tobytes() and np.isnan(got[2]).any(),
              "%s vs %s" % (got[2][0, 0], ref[2][0, 0]))


def test_control_compiled():
    """if and while compile: each region is a program of its own, run by
    the runtime's loop (D115). A while with an if inside: the listing
    says control, the profile shows the regions' kernels and no fallback,
    the outputs are the interpreter's; zero rounds hand the operands
    back; an index out of range inside the body fails with the
    interpreter's message."""
    t = os.path.join(ROOT, "tests", "ops", "while", "nested_if")
    rc, so, se = tessera("ir", os.path.join(t, "model.ir"), "--fusion")
    check("control: the while is compiled", rc == 0 and "k0 control  %r0, %r1, %r2 <- while" in so
          and "fallback" not in so, so + se)
    ins = ["i=%s" % os.path.join(t, "input_0.npy"), "n=%s" % os.path.join(t, "input_1.npy"),
           "x=%s" % os.path.join(t, "input_2.npy")]
    prof = tmp("control_profile.json")
    outs = run_model(os.path.join(t, "model.ir"), ins, "control", ["--target", "cpu", "--profile", prof])
    if outs is not None and check("control: three outputs", len(outs) == 3):
        for k in range(3):
            close("control: output %d" % k, outs[k], np.load(os.path.join(t, "expected_%d.npy" % k)))
        with open(prof) as f:
            ev = json.load(f)
        cats = {e.get("cat") for e in (ev["traceEvents"] if isinstance(ev, dict) else ev) if e.get("ph") == "X"}
        check("control: regions' kernels traced, no fallback", "control" in cats and "fallback" not in cats
              and {"lt", "neg"} <= cats, str(cats))
    model = os.path.join(MODELS, "while_gather.ir")
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    for tag, i0, n in (("rounds", 1, 3), ("zero", 2, 2)):
        arrays = {"i": np.array(i0, np.int64), "n": np.array(n, np.int64), "x": x}
        got, ref = cpu_and_interp(model, arrays, "while_" + tag)
        if got and ref:
            close("control: while %s cpu vs interpreter" % tag, got[0], ref[0], rtol=0, atol=0)
    inputs = []
    for k, v in {"i": np.array(2, np.int64), "n": np.array(5, np.int64), "x": x}.items():
        inputs += ["-i", "%s=%s" % (k, save("while_oob_%s.npy" % k, v))]
    for target in ("cpu", "interp"):
        with env(TESSERA_CACHE_DIR=tmp("jit_cache_while")):
            expect_error("control: gather out of range in a body (%s)" % target,
                         ["run", model] + inputs + ["--target", target],
                         r"%row \(gather\): gather: index 4 \(at position 0\) is out of range \[0, 4\)")


def test_loops_merged():
    """A loop kernel storing a value, then one reading it at its own
    coordinates, are one nest writing both (D116); not when the reader
    goes through a transpose, nor when another kernel comes between.
    Golden loops; against the interpreter."""
    model = os.path.join(MODELS, "loops_merged.ir")
    rc, so, se = tessera("ir", model, "--loops")
    with open(os.path.join(MODELS, "loops_merged.loops")) as f:
        want = f.read()
    check("loops merged: golden loops", rc == 0 and so == want and "k0 loop     %c, %h <-" in so, so + se)
    g = np.random.default_rng(23)
    arrays = {"x": g.standard_normal((3, 4)).astype(np.float32), "y": g.standard_normal((4, 3)).astype(np.float32)}
    got, ref = cpu_and_interp(model, arrays, "merged")
    if got and ref and check("loops merged: four outputs", len(got) == len(ref) == 4):
        for k in range(4):
            close("loops merged: output %d cpu vs interpreter" % k, got[k], ref[k], rtol=1e-6, atol=1e-7)


def test_loops_tail():
    """A loop kernel's trailing axes run as one loop when every value it
    reads sees them unchanged (D142): a BatchNorm + ReLU over 5x5 maps is
    one vector loop of 25 per channel, an elementwise sum one loop of 200;
    a bias along the last axis alone, or a transpose, keeps the rows.
    Golden loops; against the interpreter."""
    model = os.path.join(MODELS, "loops_tail.ir")
    ok, so, se = listing_matches("loops_tail", "loops")
    check("loops tail: golden loops", ok and "for i2 in [0, 25) vector" in so
          and "for i0 in [0, 200) parallel vector" in so, so + se)
    g = np.random.default_rng(41)
    shapes = {"x": (2, 4, 5, 5), "m": (4,), "s": (4,), "bw": (5,), "y": (2, 4, 5, 5), "t": (2, 5, 4, 5)}
    arrays = {k: g.standard_normal(v).astype(np.float32) for k, v in shapes.items()}
    got, ref = cpu_and_interp(model, arrays, "loops_tail")
    if got and ref and check("loops tail: four outputs", len(got) == len(ref) == 4):
        for k in range(4):
            close("loops tail: output %d cpu vs interpreter" % k, got[k], ref[k], rtol=1e-5, atol=1e-6)


def test_loops_shuffle():
    """Trailing axes run as one loop through views that pass them on
    unchanged (D182): a channel shuffle (concat, reshape, transpose of the
    channel axes, reshape) and the split's slices over 3x3 maps are loops
    of 9 per channel; a slice that cuts the rows keeps them. Golden loops;
    against the interpreter."""
    model = os.path.join(MODELS, "loops_shuffle.ir")
    ok, so, se = listing_matches("loops_shuffle", "loops")
    check("loops shuffle: golden loops", ok and so.count("for i2 in [0, 9) vector") == 3
          and "for i3 in [0, 3) vector" in so, so + se)
    g = np.random.default_rng(47)
    arrays = {k: g.standard_normal((2, 4, 3, 3)).astype(np.float32) for k in ("x", "y")}
    got, ref = cpu_and_interp(model, arrays, "loops_shuffle")
    if got and ref and check("loops shuffle: three outputs", len(got) == len(ref) == 3):
        for k in range(3):
            close("loops shuffle: output %d cpu vs interpreter" % k, got[k], ref[k], rtol=1e-6, atol=1e-7)


def test_concat_table():
    """A concat of many parts of one extent (a recurrence's steps, each
    stored for the next step's product) reads part q = i through tables
    of buffer numbers, not a chain of guards; the two directions' halves
    of a row (i / 8) are two stores, each over a remainder loop of 8
    (D185). A bidirectional recurrence's output, 4 steps: golden loops;
    against the interpreter."""
    model = os.path.join(MODELS, "concat_table.ir")
    ok, so, se = listing_matches("concat_table", "loops")
    tail = so.split("(transpose)")[-1]
    check("concat table: golden loops", ok and "tab1 = [3, 2, 1, 0]" in so and "lt(" not in tail
          and tail.count("bufs[tab") == 2 and "for i3 in [0, 8) vector" in tail, so + se)
    g = np.random.default_rng(53)
    arrays = {"a": g.standard_normal((4, 2, 8)).astype(np.float32),
              "w": (0.3 * g.standard_normal((8, 8))).astype(np.float32),
              "h0": g.standard_normal((2, 8)).astype(np.float32)}
    got, ref = cpu_and_interp(model, arrays, "concat_table")
    if got and ref and check("concat table: two outputs", len(got) == len(ref) == 2):
        for k in range(2):
            close("concat table: output %d cpu vs interpreter" % k, got[k], ref[k], rtol=1e-5, atol=1e-6)


def test_split_div():
    """A vector loop whose variable the indexing divides by a constant k
    runs over the quotient with its body once per remainder (D143): a
    pixel shuffle (i / 2, i % 2 along a row of 16) is a loop of 8 with
    two stores reading planes 24 floats apart; an interleave of two
    tensors along the last axis (a concat of 1-wide slices reshaped) two
    stores, each from one input, the part choice folded away. Golden
    loops; against the interpreter."""
    model = os.path.join(MODELS, "split_div.ir")
    ok, so, se = listing_matches("split_div", "loops")
    check("split div: golden loops", ok and "for i3 in [0, 8) vector" in so and " / " not in so.split("ts_k1")[1]
          and "for i4 in [0, 9) vector" in so, so + se)
    g = np.random.default_rng(43)
    arrays = {"x": g.standard_normal((2, 4, 3, 8)).astype(np.float32),
              "p": g.standard_normal((2, 3, 5, 9)).astype(np.float32),
              "q": g.standard_normal((2, 3, 5, 9)).astype(np.float32)}
    got, ref = cpu_and_interp(model, arrays, "split_div")
    if got and ref and check("split div: two outputs", len(got) == len(ref) == 2):
        for k in range(2):
            close("split div: output %d cpu vs interpreter" % k, got[k], ref[k], rtol=1e-5, atol=1e-6)
