"""CLI tests of the cpu target (run by test_cli.py): compiled against the
interpreter, the kernel cache, symbolic sizes without new C, --profile,
the `tessera ir` listings, a row kernel's, the tile epilogue's, the
softmax exp's and a fused gather's golden loop IR (tests/cli/models/*.loops),
the runtime unit, gather's index checks, concats written in place,
compiled if and while, merged loop kernels."""
import os
import re
import subprocess

import numpy as np

from cli_common import (MODELS, ROOT, check, close, cpu_and_interp, env, expect_error, run_interp, run_model, save,
                        tessera, tmp, write_ir)


def test_cpu_target():
    """--target cpu against the interpreter on the bundled model, the cache
    (miss, then hit), a new size along a symbolic axis without new C,
    --profile, and the listings of `tessera ir`."""
    model = os.path.join(ROOT, "models", "attention.ir")
    x = os.path.join(ROOT, "models", "attention_input.npy")
    cache = tmp("jit_cache")
    with env(TESSERA_CACHE_DIR=cache):
        out = tmp("out_cpu")
        rc, so, se = tessera("run", model, "-i", x, "--target", "cpu", "--repeat", "3", "-o", out)
        if check("cpu: exit 0", rc == 0, se):
            close("cpu vs interpreter's expected output", np.load(os.path.join(out, "output_0.npy")),
                  np.load(os.path.join(ROOT, "models", "attention_expected.npy")))
            check("cpu: cache miss first", "cache=miss" in so, so)
            check("cpu: latency last", re.search(r"latency median_ms=[0-9.]+ min_ms=[0-9.]+ runs=3\n$", so), so)
        entries = sorted(os.listdir(cache)) if os.path.isdir(cache) else []
        rc, so, se = tessera("run", model, "-i", x, "--target", "cpu", "--repeat", "1", "--threads", "1")
        check("cpu: cache hit second", rc == 0 and "cache=hit" in so, so + se)
        # a cut-short object (a partial copy, a crash before the data reached
        # the disk) fails its check and is rebuilt; loading it was SIGBUS (D89)
        objects = [e for e in entries if e.endswith(".so")]
        if check("cpu: one cached object", len(objects) == 1, str(entries)):
            os.truncate(os.path.join(cache, objects[0]), 1000)
            out = tmp("out_cpu_cut")
            rc, so, se = tessera("run", model, "-i", x, "--target", "cpu", "--repeat", "1", "-o", out)
            if check("cpu: cut-short cache entry rebuilt", rc == 0 and "cache=miss" in so, "status %d: %s" % (rc, so + se)):
                close("cpu after the rebuild vs interpreter's expected output", np.load(os.path.join(out, "output_0.npy")),
                      np.load(os.path.join(ROOT, "models", "attention_expected.npy")))
        # another length along the symbolic sequence axis: same code
        x7 = save("attention_7.npy", np.random.default_rng(3).standard_normal((7, 16)).astype(np.float32))
        rc, so, se = tessera("run", model, "-i", x7, "--target", "cpu", "-o", tmp("out_cpu7"))
        rc2, so2, se2 = tessera("run", model, "-i", x7, "--target", "interp", "-o", tmp("out_int7"))
        if check("cpu: seq 7 runs", rc == 0 and rc2 == 0, se + se2):
            close("cpu seq 7 vs interpreter", np.load(tmp("out_cpu7/output_0.npy")), np.load(tmp("out_int7/output_0.npy")))
        check("cpu: no new cache entry for a new size", sorted(os.listdir(cache)) == entries,
              "%s -> %s" % (entries, sorted(os.listdir(cache))))
        prof = tmp("profile.json")
        rc, so, se = tessera("run", model, "-i", x, "--target", "cpu", "--profile", prof)
        if check("cpu --profile: exit 0", rc == 0, se):
            import json
            with open(prof) as f:
                events = json.load(f)["traceEvents"]
            check("cpu --profile: kernel events", any(e.get("name", "").startswith("ts_k") and e.get("dur", -1) >= 0 for e in events))
        rc, so, se = tessera("run", model, "-i", x, "--target", "interp", "--profile", prof)
        check("interp --profile: clear error", rc == 1 and "the interp target records no profile (targets that do: cpu)" in se, se)
        # tessera cache: counts entries, clean keeps files that are not entries
        rc, so, se = tessera("cache")
        m = re.match(r"cache dir=(.+) entries=(\d+) bytes=(\d+) limit_bytes=(\d+)\n$", so)
        check("cache info", rc == 0 and m and m.group(1) == cache and int(m.group(2)) >= 1 and int(m.group(3)) > 0,
              so + se)
        with open(os.path.join(cache, "notes.txt"), "w") as f:
            f.write("not a cache entry\n")
        rc, so, se = tessera("cache", "clean")
        check("cache clean", rc == 0 and re.search(r"removed [1-9]\d* entries\n.* entries=0 bytes=0 ", so, re.S)
              and sorted(os.listdir(cache)) == ["notes.txt"], so + se + str(os.listdir(cache)))
        rc, so, se = tessera("run", model, "-i", x, "--target", "cpu", "--repeat", "1")
        check("cpu: cache miss after clean", rc == 0 and "cache=miss" in so, so + se)
        expect_error("cache clean --max-mb bad", ["cache", "clean", "--max-mb", "-1"], "whole number of megabytes")
        expect_error("cache unknown subcommand", ["cache", "purge"], "unknown subcommand 'purge'")
    rc, so, se = tessera("ir", model, "--fusion")
    check("ir --fusion", rc == 0 and re.match(r"fusion of @\w+: \d+ kernels, \d+ stored values\n", so)
          and (" row " in so or " reduce " in so) and "kernel ts_k" not in so, so + se)
    rc, so, se = tessera("ir", model, "--loops")
    check("ir --loops", rc == 0 and "kernel ts_k0" in so and " parallel" in so, so + se)
    rc, so, se = tessera("ir", model, "--emit", "c")
    check("ir --emit c", rc == 0 and "void ts_k0(void *const *bufs, const int64_t *D, int ith, int nth" in so
          and "tsrt_max" in so, so[:300] + se)
    rc, so, se = tessera("ir", model, "--emit", "llvm")
    check("ir --emit llvm: clear error", rc == 1 and "--emit takes c" in se, se)
    with env(TESSERA_CC="/nonexistent/cc", TESSERA_CACHE_DIR=tmp("jit_cache_2")):
        rc, so, se = tessera("run", model, "-i", x, "--target", "cpu")
        check("cpu: missing compiler is a clear error", rc == 1 and "not found" in se and "interp" in se, se)
    test_default_target(model, x)


def test_default_target(model, x):
    """Without --target, run and check compile (cache hit or miss, never
    none); with no working C compiler (missing, or one that fails every
    compile) they fall back to the interpreter with exactly one warning
    line on stderr and the right answer, status 0; check warns once, not
    once per case."""
    want = np.load(os.path.join(ROOT, "models", "attention_expected.npy"))
    with env(TESSERA_CACHE_DIR=tmp("jit_cache_default_target")):
        rc, so, se = tessera("run", model, "-i", x, "--repeat", "1")
        check("default target: compiled", rc == 0 and re.search(r"cache=(hit|miss)\n", so) is not None and not se,
              so + se)
    tinynet = os.path.join(ROOT, "models", "tinynet")
    for cc in ("/nonexistent/cc", "false"):
        with env(TESSERA_CC=cc, TESSERA_CACHE_DIR=tmp("jit_cache_nocc")):
            out = tmp("out_nocc")
            rc, so, se = tessera("run", model, "-i", x, "--repeat", "1", "-o", out)
            warn = se.splitlines()
            check("no compiler %s: run falls back, status 0" % cc, rc == 0 and "cache=none" in so, so + se)
            check("no compiler %s: one warning line" % cc, len(warn) == 1 and
                  warn[0].startswith("tessera: warning: the cpu target cannot compile here (") and
                  "reference interpreter" in warn[0], se)
            if rc == 0:
                close("no compiler %s: interpreter's answer" % cc, np.load(os.path.join(out, "output_0.npy")), want)
            rc, so, se = tessera("check", tinynet, tinynet)
            check("no compiler %s: check falls back, one warning" % cc, rc == 0 and so.count("PASS tinynet") == 2
                  and len(se.splitlines()) == 1 and "warning" in se, so + se)
            rc, so, se = tessera("check", tinynet, "--target", "cpu")
            check("no compiler %s: check --target cpu is an error" % cc, rc == 1 and se.startswith("tessera: --target cpu:")
                  and len(se.splitlines()) == 1, so + se)

def test_row_kernel():
    """A softmax row kernel: its loop IR against the golden listing
    (exp(x - max) kept in the output's row by the sum's pass, one division
    per row), and compiled against the interpreter over rows of 600 (two
    f32 blocks of 256 and a partial one, then the scalar tail)."""
    model = os.path.join(MODELS, "softmax_rows.ir")
    rc, so, se = tessera("ir", model, "--loops")
    with open(os.path.join(MODELS, "softmax_rows.loops")) as f:
        want = f.read()
    check("row kernel: golden loops", rc == 0 and so == want, so + se)
    x = np.random.default_rng(7).standard_normal((5, 600)).astype(np.float32) * 4
    x[1, 3] = 80.0   # one element dominates its row
    xs = save("rows.npy", x)
    cache = tmp("jit_cache_rows")
    with env(TESSERA_CACHE_DIR=cache):
        rc, so, se = tessera("run", model, "-i", xs, "--target", "cpu", "-o", tmp("out_rows_cpu"))
    ref = run_interp(model, [xs], "rows_interp")
    if check("row kernel: cpu exit 0", rc == 0, se) and ref:
        close("row kernel: cpu vs interpreter", np.load(tmp("out_rows_cpu/output_0.npy")), ref[0], rtol=1e-5,
              atol=1e-7)
    # f32 sums run in f32 blocks, over rows this long in four sets of 16
    # lanes (D82); one that overflows is redone in f64 as the reference
    # sums: 3e38 + 3e38 - 3e38 is 3e38, not inf. Elements 16 and 80 meet
    # in the same lane of the same set.
    model = os.path.join(MODELS, "sum_rows.ir")
    rc, so, se = tessera("ir", model, "--emit", "c")
    check("f32 sum blocks: four sets of lanes", rc == 0 and re.search(r"flane\d+_3\[l\]", so) is not None,
          so[-3000:] + se)
    rc, so, se = tessera("ir", os.path.join(MODELS, "softmax_rows.ir"), "--emit", "c")
    check("f32 sum blocks: one set where the summand is kept (exp)", rc == 0 and "flane" in so and
          re.search(r"flane\d+_\d\[l\]", so) is None, so[-3000:] + se)
    x = np.random.default_rng(8).standard_normal((3, 600)).astype(np.float32)
    x[1, 16], x[1, 80], x[1, 144] = 3e38, 3e38, -3e38
    x[2, 5] = np.inf
    xs = save("sum_rows.npy", x)
    with env(TESSERA_CACHE_DIR=cache):
        rc, so, se = tessera("run", model, "-i", xs, "--target", "cpu", "-o", tmp("out_sum_cpu"))
    if check("f32 sum blocks: cpu exit 0", rc == 0, se):
        got = np.load(tmp("out_sum_cpu/output_0.npy"))
        want = x.astype(np.float64).sum(axis=1).astype(np.float32)
        check("f32 sum blocks: overflowing block redone in f64", np.isfinite(got[1]) and got[2] == np.inf and
              np.allclose(got, want, rtol=1e-5, atol=1e-5), "got %s, want %s" % (got, want))


def test_streamed_rows():
    """Row kernels whose output is 16 MiB or more build each row in a
    scratch row and stream it out past the caches (D50): softmax (its
    staged exps in the scratch too) and a row centering (no staging),
    their loop IR (both against golden listings), and both compiled
    against the interpreter. A row of 1000 (not a multiple of 16) or a
    smaller output keeps plain stores."""
    model = os.path.join(MODELS, "softmax_stream.ir")
    rc, so, se = tessera("ir", model, "--loops")
    with open(os.path.join(MODELS, "softmax_stream.loops")) as f:
        want = f.read()
    check("streamed rows: golden loops", rc == 0 and so == want, so + se)
    # no costly second pass to prefetch in: the streamed last pass
    # prefetches the next row instead, one line per chunk (D78)
    rc, so, se = tessera("ir", os.path.join(MODELS, "center_stream.ir"), "--loops")
    with open(os.path.join(MODELS, "center_stream.loops")) as f:
        want = f.read()
    check("streamed rows: prefetch in the last pass (golden loops)", rc == 0 and so == want, so + se)
    rc, so, se = tessera("ir", os.path.join(MODELS, "center_stream.ir"), "--emit", "c")
    tail = so[so.find("tsrt_stream16(b2"):]
    check("streamed rows: the prefetch follows each chunk's stream", rc == 0 and
          "__builtin_prefetch(b0 + " in tail[:400], tail[:400] + se)
    rc, so, se = tessera("ir", os.path.join(MODELS, "softmax_rows.ir"), "--loops")
    check("streamed rows: not for a symbolic row count", rc == 0 and "rowtmp" not in so and "stream" not in so,
          so + se)
    cache = tmp("jit_cache_stream")
    rng = np.random.default_rng(11)
    for name in ("softmax_stream", "center_stream"):
        model = os.path.join(MODELS, name + ".ir")
        rc, so, se = tessera("ir", model, "--loops")
        check(name + ": streams its output", rc == 0 and "stream b" in so, so + se)
        # the last pass computes 16 values at a time straight into the
        # stream (D55): no row is copied out of the scratch afterwards
        rc, so, se = tessera("ir", model, "--emit", "c")
        check(name + ": last pass streamed by chunks", rc == 0 and "tsrt_stream16(b" in so and
              "tsrt_stream_row(b" not in so, so[-3000:] + se)
        x = rng.standard_normal((4096, 1024)).astype(np.float32) * 3
        x[5, 700], x[9] = np.nan, np.where(np.arange(1024) % 2, -0.0, 0.0)
        xs = save(name + ".npy", x)
        with env(TESSERA_CACHE_DIR=cache):
            rc, so, se = tessera("run", model, "-i", xs, "--target", "cpu", "--threads", "2",
                                 "-o", tmp("out_" + name))
        ref = run_interp(model, [xs], name + "_interp")
        if check(name + ": cpu exit 0", rc == 0, se) and ref:
            out = np.load(tmp("out_%s/output_0.npy" % name))
            check(name + ": NaN rows as the interpreter's", np.array_equal(np.isnan(out), np.isnan(ref[0])) and
                  np.isnan(out[5]).all(), str(out[5, :4]))
            close(name + ": cpu vs interpreter", np.nan_to_num(out), np.nan_to_num(ref[0]), rtol=1e-5, atol=1e-6)


def test_row_maxmin_lanes():
    """max and min over rows of 300 run four sets of 16 lanes (64 at a
    time), then 16, then the scalar tail, with a plain compare-and-select
    and a note of any NaN; a row that met a NaN is folded again in order,
    a zero result gets its sign from one more pass (D47, D48, D55, D86).
    A NaN in each part of the row (first and last set of the 64, the
    16-lane loop, the tail), rows of signed zeros (the deciding zero in
    the sets, the 16-lane loop or the tail, or none) and of infinities:
    the bits must be the interpreter's."""
    model = os.path.join(MODELS, "row_maxmin.ir")
    rc, so, se = tessera("ir", model, "--emit", "c")
    check("row max/min: four sets of lanes", rc == 0 and re.search(r"lane\d+_3\[l\]", so) is not None, so + se)
    x = np.random.default_rng(13).standard_normal((14, 300)).astype(np.float32)
    x[1, 66], x[2, 63], x[3, 270], x[4, 290] = np.nan, np.nan, np.nan, np.nan
    x[5] = np.where(np.arange(300) % 3 == 0, -0.0, 0.0).astype(np.float32)
    x[6] = -np.inf
    x[7, 100], x[7, 200] = np.inf, -np.inf
    x[0, 50], x[0, 51] = 9.0, -9.0   # the maximum and minimum in the last set of lanes
    # maxima of 0: one +0 in the tail (max +0), in the 16-lane loop among
    # -0s (max +0), none (max -0); minima of 0 mirrored; all +0, all -0
    x[8] = -np.abs(x[8])
    x[8, :150], x[8, 299] = -0.0, 0.0
    x[9] = -np.abs(x[9])
    x[9, 10], x[9, 260], x[9, 270] = -0.0, 0.0, -0.0
    x[10] = -np.abs(x[10])
    x[10, 3], x[10, 298] = -0.0, -0.0
    x[11] = np.abs(x[11])
    x[11, 5], x[11, 299] = 0.0, -0.0
    x[12], x[13] = 0.0, -0.0
    got, ref = cpu_and_interp(model, {"x": x}, "rmm")
    if got and ref and check("row max/min: 2 outputs", len(got) == len(ref) == 2):
        # the rows of zeros decide what they should (+0 is bits 0, -0 is 1 << 31)
        zeros = [int(v) for v in np.concatenate([ref[0][[8, 9, 10, 12, 13]], ref[1][[11, 12, 13]]]).view(np.uint32)]
        check("row max/min: the zero rows' reference signs",
              zeros == [0, 0, 1 << 31, 0, 1 << 31, 1 << 31, 0, 1 << 31], str(zeros))
        for name, a, b in zip(("max", "min"), got, ref):
            check("row max/min: %s bit for bit" % name, a.view(np.uint32).tolist() == b.view(np.uint32).tolist(),
                  "cpu %s, interpreter %s" % (a, b))


def test_tile_epilogue():
    """Contraction epilogues as data (D32): which of them the lowering
    describes as a tile epilogue (bias per row / per column, a residual,
    ReLU and clip bounds) and which keep the callback (a transposed
    residual, min by -0, a bias added after the residual), as a golden
    loop listing; then compiled against the interpreter on inputs with
    NaN, -0 and values on the clamp bounds, over 2 images and 7 rows (an
    edge tile) so both the in-register and the stored-tile paths run."""
    model = os.path.join(MODELS, "tile_epilogue.ir")
    rc, so, se = tessera("ir", model, "--loops")
    with open(os.path.join(MODELS, "tile_epilogue.loops")) as f:
        want = f.read()
    check("tile epilogue: golden loops", rc == 0 and so == want, so + se)
    # The templates are a unit of their own, the same for every program,
    # compiled once per machine (D112); the kernel unit pastes only their
    # interface.
    rc, so, se = tessera("ir", model, "--emit", "c")
    units = so.split("/* ==== translation unit ")
    check("templates: a shared unit and a kernel unit",
          rc == 0 and len(units) == 3 and units[1].startswith("1 of 2 (shared by every program)")
          and units[1].count("/* ---- tsrt_conv.h ---- */") == 1 and "/* ---- tsrt_conv.h ---- */" not in units[2]
          and "/* ---- tsrt_conv_args.h ---- */" in units[2] and "void ts_k" not in units[1], so[:400] + se)
    g = np.random.default_rng(11)
    shapes = {"x": (2, 4, 6, 5), "w": (6, 4, 3, 3), "r": (2, 6, 6, 5), "a": (7, 24), "v": (24, 20), "s": (7, 20),
              "u": (24, 20), "st": (20, 7)}
    arrays = {k: g.standard_normal(v).astype(np.float32) for k, v in shapes.items()}
    arrays["r"][0, 1, 2, 3] = np.nan
    arrays["r"][1, 0, 0, :] = -0.0
    arrays["s"][3, :4] = [np.nan, -0.0, 2.5, -1.5]
    got, want = cpu_and_interp(model, arrays, "te")
    if got and want and check("tile epilogue: 5 outputs", len(got) == len(want) == 5):
        for i, (x, y) in enumerate(zip(got, want)):
            same_nan = np.array_equal(np.isnan(x), np.isnan(y))
            check("tile epilogue: output %d cpu vs interpreter" % i,
                  same_nan and np.allclose(x, y, rtol=1e-5, atol=1e-5, equal_nan=True) and np.isnan(y).any() == (i != 2),
                  "max diff %s" % np.nanmax(np.abs(x.astype(np.float64) - y)))


def test_exp_shift():
    """exp of x minus a maximum of x over some axes is told its argument is
    <= 0 or NaN and uses the cheaper tsrt_expf_np (D37): the golden
    listing shows which shapes of that pattern are proved (keepdims
    reshape; kept axes broadcast back in place) and which are not (another
    tensor's maximum, the reversed difference, a minimum, a maximum
    broadcast along the wrong axis); then compiled against the interpreter
    on rows with NaN, -inf, +inf and spreads that make subnormal and zero
    results."""
    model = os.path.join(MODELS, "exp_shift.ir")
    rc, so, se = tessera("ir", model, "--loops")
    with open(os.path.join(MODELS, "exp_shift.loops")) as f:
        want = f.read()
    check("exp shift: golden loops", rc == 0 and so == want, so + se)
    g = np.random.default_rng(12)
    x = (g.standard_normal((4, 6)) * 30).astype(np.float32)
    x[0] = [0.0, -87.0, -88.5, -95.25, -103.5, -110.0]   # normal, subnormal and zero results
    x[1, 2], x[2, 0], x[3, 4] = np.nan, -np.inf, np.inf
    z = (g.standard_normal((2, 3, 5)) * 40).astype(np.float32)
    z[1, 2, 3] = -np.inf
    arrays = {"x": x, "y": g.standard_normal((4, 6)).astype(np.float32),
              "z": z, "w": g.standard_normal((6, 6)).astype(np.float32)}
    got, ref = cpu_and_interp(model, arrays, "es")
    if got and ref and check("exp shift: 6 outputs", len(got) == len(ref) == 6):
        for i, (a, b) in enumerate(zip(got, ref)):
            check("exp shift: output %d cpu vs interpreter" % i,
                  np.array_equal(np.isnan(a), np.isnan(b)) and
                  np.allclose(a, b, rtol=2.4e-7, atol=3e-45, equal_nan=True), "max diff %s" % np.nanmax(np.abs(a - b)))
        check("exp shift: subnormal and zero results", got[0][0, 3] > 0 and got[0][0, 3] < 1.2e-38
              and got[0][0, 5] == 0 and got[0][0, 0] == 1, str(got[0][0]))


def test_reshape_and_short_rows():
    """A reshape maps coordinates axis group by axis group: adding or
    dropping unit axes costs no index arithmetic (the loop stays a plain
    vector loop, no div or mod), only a group that really merges and
    splits axes delinearizes (here 6 x 8 -> 4 x 12 beside a symbolic
    axis). Rows of 24 (under 64) reduce in vector lanes too, not one
    scalar chain (D103). All against the interpreter."""
    model = os.path.join(MODELS, "reshape_rows.ir")
    rc, so, se = tessera("ir", model, "--loops")
    k0 = so[so.find("kernel ts_k0"):so.find("kernel ts_k1")]
    k2 = so[so.find("kernel ts_k2"):]
    check("reshape: unit axes cost no div or mod", rc == 0 and "tanh(b0[add(i2, mul(i0, 512))])" in k0
          and " % " not in k0 and " / " not in k0, so + se)
    check("reshape: only the merged group delinearizes", rc == 0 and "% 8)" in k2 and "mul(i0, 48)" in k2
          and "D0" in k2 and "% 48" not in k2, so + se)
    rc, so, se = tessera("ir", model, "--emit", "c")
    k1 = so[so.find("void ts_k1("):so.find("void ts_k2(")]
    check("short rows: max and sum in lanes", rc == 0 and "lane" in k1 and "flane" in k1, k1[:3000] + se)
    g = np.random.default_rng(14)
    s = (g.standard_normal((4, 32, 24)) * 5).astype(np.float32)
    s[1, 2, 7], s[2, 3] = np.nan, -np.inf
    arrays = {"x": g.standard_normal((32, 512)).astype(np.float32), "s": s,
              "b": g.standard_normal((3, 6, 8)).astype(np.float32)}
    got, ref = cpu_and_interp(model, arrays, "rr")
    if got and ref and check("reshape rows: 3 outputs", len(got) == len(ref) == 3):
        for i, (a, b) in enumerate(zip(got, ref)):
            check("reshape rows: output %d cpu vs interpreter" % i,
                  a.shape == b.shape and np.array_equal(np.isnan(a), np.isnan(b)) and
                  np.allclose(a, b, rtol=1e-6, atol=1e-6, equal_nan=True), "max diff %s" % np.nanmax(np.abs(a - b)))


def test_parameter_only_values_run_first():
    """Batch norm as a torch graph computes it: the per-channel scale
    (from parameters only) after the convolution it scales. Small values
    computed from parameters and constants alone run first, so the
    convolution takes scale, shift and ReLU as its epilogue: two kernels,
    not a third pass over the convolution's result. Against the
    interpreter."""
    model = os.path.join(MODELS, "bn_after_conv.ir")
    rc, so, se = tessera("ir", model, "--fusion")
    check("early: the scale's kernel first, the conv takes the epilogue",
          rc == 0 and "2 kernels" in so and "k0 loop     %scale" in so and "k1 conv     %y <- conv" in so, so + se)
    g = np.random.default_rng(15)
    arrays = {"x": g.standard_normal((2, 4, 6, 5)).astype(np.float32),
              "w": g.standard_normal((6, 4, 3, 3)).astype(np.float32),
              "var": g.uniform(0.5, 2, 6).astype(np.float32), "gamma": g.standard_normal(6).astype(np.float32),
              "mean": g.standard_normal(6).astype(np.float32), "beta": g.standard_normal(6).astype(np.float32)}
    got, ref = cpu_and_interp(model, arrays, "bn")
    if got and ref and check("early: one output", len(got) == len(ref) == 1):
        check("early: cpu vs interpreter", got[0].shape == ref[0].shape and
              np.allclose(got[0], ref[0], rtol=1e-5, atol=1e-5), "max diff %s" % np.abs(got[0] - ref[0]).max())


def test_runtime_unit():
    """With several kernel units the contraction templates are compiled
    once, in a unit of their own that comes first, and the kernel units
    paste only their interface (D36): a chain of 30 products, each its own
    kernel (each scales by its own constant, so no two have the same C,
    D119), against the interpreter."""
    n = 30
    lines = ["graph @chain(%x: f32[5, 8], %w: f32[8, 8]) {", "  %h0: f32[5, 8] = tanh(%x)"]
    for i in range(1, n + 1):
        lines.append("  %%d%d: f32[5, 8] = dot(%%h%d, %%w) {lhs_contract=[1], rhs_contract=[0]}" % (i, i - 1))
        lines.append("  %%c%d: f32[5, 8] = const() {value=splat(%g)}" % (i, 1 + i / 64))
        lines.append("  %%h%d: f32[5, 8] = mul(%%d%d, %%c%d)" % (i, i, i))
    lines += ["  return %%h%d" % n, "}"]
    model = write_ir("chain.ir", lines)
    rc, so, se = tessera("ir", model, "--emit", "c")
    units = so.split("/* ==== translation unit ")[1:]
    check("templates: a runtime unit, then kernel units",
          rc == 0 and len(units) == 3 and "runtime templates" in units[0] and "void ts_k" not in units[0]
          and all("void ts_k" in u and "/* ---- tsrt_gemm_api.h ---- */" in u and "/* ---- tsrt_gemm.h ---- */" not in u
                  for u in units[1:]) and so.count("/* ---- tsrt_gemm.h ---- */") == 1, so[:400] + se)
    # the units printed one after another are also one valid C file
    src = tmp("chain_all.c")
    with open(src, "w") as f:
        f.write(so)
    cc = subprocess.run(["cc", "-std=c11", "-fsyntax-only", src], capture_output=True, text=True)
    check("runtime unit: the printed units compile as one file", cc.returncode == 0, cc.stderr[:600])
    g = np.random.default_rng(13)
    arrays = {"x": g.standard_normal((5, 8)).astype(np.float32),
              "w": (g.standard_normal((8, 8)) / 3).astype(np.float32)}
    got, ref = cpu_and_interp(model, arrays, "chain")
    if got and ref:
        close("runtime unit: cpu vs interpreter", got[0], ref[0], rtol=1e-4, atol=1e-6)



def test_gather_compiled():
    """gather compiles into its consumer's kernel as a load through the
    index (D113): golden loops with the runtime's index check for stored
    indices (none for constant ones, checked when compiled); against the
    interpreter on in-range i64 and u8 indices; out-of-range and negative
    indices fail with the interpreter's message, naming the gather."""
    model = os.path.join(MODELS, "gather_fused.ir")
    rc, so, se = tessera("ir", model, "--loops")
    with open(os.path.join(MODELS, "gather_fused.loops")) as f:
        want = f.read()
    check("gather: golden loops", rc == 0 and so == want and "fallback" not in so, so + se)
    g = np.random.default_rng(17)
    arrays = {"x": g.standard_normal((5, 4)).astype(np.float32),
              "i": np.array([[0, 4], [2, 2], [1, 3]], np.int64), "u": np.array([3, 0], np.uint8)}
    got, ref = cpu_and_interp(model, arrays, "gather")
    if got and ref and check("gather: two outputs", len(got) == len(ref) == 2):
        for k in range(2):
            close("gather: output %d cpu vs interpreter" % k, got[k], ref[k], rtol=1e-6, atol=0)
    for tag, name, bad, msg in (("hi", "i", np.array([[0, 4], [5, 2], [1, 3]], np.int64), r"index 5 \(at position 2\)"),
                                ("neg", "i", np.array([[0, -1], [2, 2], [1, 3]], np.int64), r"index -1 \(at position 1\)"),
                                ("u8", "u", np.array([3, 4], np.uint8), r"index 4 \(at position 1\) is out of range \[0, 4\)")):
        args = dict(arrays)
        args[name] = bad
        inputs = []
        for k, v in args.items():
            inputs += ["-i", "%s=%s" % (k, save("gather_%s_%s.npy" % (tag, k), v))]
        var = "y" if name == "i" else "v"
        for target in ("cpu", "interp"):
            with env(TESSERA_CACHE_DIR=tmp("jit_cache_gather")):
                expect_error("gather %s %s" % (tag, target), ["run", model] + inputs + ["--target", target],
                             r"^tessera: %%%s \(gather\): gather: %s" % (var, msg))


def test_concat_in_place():
    """A stored concat whose parts are each written by a kernel and read by
    nothing else has no copy kernel: the parts' kernels (a row kernel's two
    outputs, a GEMM) write into it (D114); at batch 2 the parts interleave
    and the row kernel stores at the concat's strides (D125). Not when a
    part is read elsewhere; there, the kernel reading the concat loops
    over each part. Golden fusion and loop listings; against the
    interpreter."""
    model = os.path.join(MODELS, "concat_in_place.ir")
    rc, so, se = tessera("ir", model, "--fusion")
    with open(os.path.join(MODELS, "concat_in_place.fusion")) as f:
        want = f.read()
    check("concat in place: golden fusion", rc == 0 and so == want, so + se)
    # a kernel reading a concat at its own coordinates runs one nest per
    # part, without choosing a part per element (batch 2 here: not placed)
    rc, so, se = tessera("ir", model, "--loops")
    with open(os.path.join(MODELS, "concat_in_place.loops")) as f:
        want = f.read()
    check("concat in place: golden loops", rc == 0 and so == want and " ? " not in so, so + se)
    g = np.random.default_rng(19)
    arrays = {"x": g.standard_normal((1, 3, 4)).astype(np.float32), "y": g.standard_normal((2, 3, 4)).astype(np.float32),
              "w": g.standard_normal((12, 5)).astype(np.float32)}
    got, ref = cpu_and_interp(model, arrays, "concat_place")
    if got and ref and check("concat in place: three outputs", len(got) == len(ref) == 3):
        for k in range(3):
            close("concat in place: output %d cpu vs interpreter" % k, got[k], ref[k], rtol=1e-5, atol=1e-6)


def test_concat_strided():
    """A channel concat at batch 2 of two convs (one with a ReLU epilogue)
    and a reduction has no copy kernel: the convs write images at the
    concat's image stride (y_bs) and the reduction stores at its strides
    (D125); the max pool after it reads it in place. Golden fusion and
    loop listings; against the interpreter."""
    model = os.path.join(MODELS, "concat_strided.ir")
    for what in ("fusion", "loops"):
        rc, so, se = tessera("ir", model, "--" + what)
        with open(os.path.join(MODELS, "concat_strided." + what)) as f:
            want = f.read()
        check("concat strided: golden " + what, rc == 0 and so == want and "in place %c" in so, so + se)
    g = np.random.default_rng(23)
    arrays = {"x": g.standard_normal((2, 3, 6, 6)).astype(np.float32),
              "w1": g.standard_normal((4, 3, 3, 3)).astype(np.float32),
              "w2": g.standard_normal((5, 3, 1, 1)).astype(np.float32),
              "y": g.standard_normal((2, 3, 6, 6, 2)).astype(np.float32)}
    got, ref = cpu_and_interp(model, arrays, "concat_strided")
    if got and ref and check("concat strided: one output", len(got) == len(ref) == 1):
        close("concat strided: cpu vs interpreter", got[0], ref[0], rtol=1e-5, atol=1e-5)


def test_light_compile():
    """A program whose kernels are all tiny (no buffer over 1024
    elements) compiles at -O1 (D145): the pixel shuffle of split_div.ir
    does, the rows of 600 of softmax_rows.ir keep -O3, and a user's
    TESSERA_CFLAGS is passed as given. The compiler is a script that logs
    its command lines; the light program still gives the interpreter's
    outputs."""
    log, wrapper = tmp("light_cc.log"), tmp("light_cc.sh")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\necho "$@" >> "%s"\nexec cc "$@"\n' % log)
    os.chmod(wrapper, 0o755)
    g = np.random.default_rng(47)
    split = {"x": g.standard_normal((2, 4, 3, 8)).astype(np.float32),
             "p": g.standard_normal((2, 3, 5, 9)).astype(np.float32),
             "q": g.standard_normal((2, 3, 5, 9)).astype(np.float32)}
    rows = {"x": g.standard_normal((5, 600)).astype(np.float32)}

    def last_opt(model, arrays, tag, **more):
        """The last -O of the command that compiled the program's unit."""
        if os.path.exists(log):
            os.remove(log)
        inputs = ["%s=%s" % (k, save("%s_%s.npy" % (tag, k), v)) for k, v in arrays.items()]
        with env(TESSERA_CC=wrapper, TESSERA_CACHE_DIR=tmp("jit_cache_" + tag), **more):
            got = run_model(os.path.join(MODELS, model), inputs, tag + "_cpu", ["--target", "cpu"])
        lines = open(log).read().splitlines() if os.path.exists(log) else []
        unit = [ln for ln in lines if ".0.c" in ln]
        opts = [a for a in unit[-1].split() if a.startswith("-O")] if unit else []
        return got, opts[-1] if opts else None

    got, opt = last_opt("split_div.ir", split, "light_tiny")
    check("light compile: tiny kernels at -O1", opt == "-O1", str(opt))
    ref = run_interp(os.path.join(MODELS, "split_div.ir"),
                     ["%s=%s" % (k, tmp("light_tiny_%s.npy" % k)) for k in split], "light_tiny_interp")
    if got and ref and check("light compile: two outputs", len(got) == len(ref) == 2):
        for k in range(2):
            close("light compile: output %d cpu vs interpreter" % k, got[k], ref[k], rtol=1e-5, atol=1e-6)
    _, opt = last_opt("softmax_rows.ir", rows, "light_rows")
    check("light compile: rows of 600 at -O3", opt == "-O3", str(opt))
    _, opt = last_opt("split_div.ir", split, "light_user",
                      TESSERA_CFLAGS="-O2 -march=native -std=c11 -fno-math-errno -fno-trapping-math")
    check("light compile: a user's flags as given", opt == "-O2", str(opt))


def test_shared_packing():
    """GEMMs that multiply by the same constant share one packed copy of
    it (D118): eight steps of x <- tanh(x @ w), w 512x512 (1 MiB), as an
    unrolled recurrence is, keep one packed copy, not eight. The peak
    memory of the runs says so. The eight kernels have the same C but for
    their names: it is emitted once (D119). The outputs are the
    interpreter's."""
    g = np.random.default_rng(29)
    w = (g.standard_normal((512, 512)) / 24).astype(np.float32)
    lines = ["graph @shared(%x0: f32[1, 512]) {",
             "  %w: f32[512, 512] = const() {value=[" + ", ".join("%r" % float(v) for v in w.ravel()) + "]}"]
    for i in range(8):
        lines += ["  %%d%d: f32[1, 512] = dot(%%x%d, %%w) {lhs_contract=[1], rhs_contract=[0]}" % (i, i),
                  "  %%x%d: f32[1, 512] = tanh(%%d%d)" % (i + 1, i)]
    lines += ["  return %x8", "}"]
    model = write_ir("shared_packing.ir", lines)
    rc, so, se = tessera("ir", model, "--fusion")
    check("shared code: eight kernels", rc == 0 and so.startswith("fusion of @shared: 8 kernels"), so + se)
    rc, so, se = tessera("ir", model, "--emit", "c")
    defs = re.findall(r"^void (ts_k\d+)\(", so, re.M)
    check("shared code: emitted once", rc == 0 and len(defs) == 1, "%s\n%s" % (defs, se))
    x = save("shared_packing_x.npy", g.standard_normal((1, 512)).astype(np.float32))
    with env(TESSERA_CACHE_DIR=tmp("jit_cache_shared_packing")):
        rc, so, se = tessera("run", model, "-i", x, "--target", "cpu", "--repeat", "2")
    m = re.search(r"^arena_peak_bytes=(\d+)$", so, re.M)
    if check("shared packing: run exit 0 with a peak", rc == 0 and m is not None, so[-2000:] + se):
        peak = int(m.group(1))
        # the constant itself and one packed copy (~1 MiB each); eight copies would be 8 MiB more
        check("shared packing: one packed copy (peak %d bytes)" % peak, peak < 4 << 20, so[-500:])
    got, ref = cpu_and_interp(model, {"x0": np.load(x)}, "shared_packing")
    if got and ref:
        close("shared packing: cpu vs interpreter", got[0], ref[0], rtol=1e-4, atol=1e-5)


def emitted_kernels(model):
    """`tessera ir MODEL --emit c`: (rc, the C of the model's own units,
    the kernel functions defined there, stderr)."""
    rc, so, se = tessera("ir", model, "--emit", "c")
    kernels = "".join(u for u in so.split("/* ==== translation unit ") if "(shared by every program)" not in u)
    return rc, kernels, re.findall(r"^void (ts_k\d+)\(", kernels, re.M), se


def test_shared_shapes():
    """Template kernels that differ only in their constant shapes share
    their C (D186): the shapes are read from D after the run-time dims,
    so two 1x1 convs with 8 and 12 input channels (constant weights,
    prepared once per program), a batch n known only at run time, and two
    products of different sizes compile to one conv and one product
    kernel. Each keeps its own shape: the outputs are the interpreter's,
    at batch 2 and 3 on one and two threads."""
    g = np.random.default_rng(31)

    def const(name, shape):
        v = (g.standard_normal(shape) / 3).astype(np.float32)
        return "  %%%s: f32[%s] = const() {value=[%s]}" % (name, ", ".join(map(str, shape)),
                                                         ", ".join("%r" % float(x) for x in v.ravel()))
    conv = "{strides=[1, 1], pad_lo=[0, 0], pad_hi=[0, 0], lhs_dilation=[1, 1], rhs_dilation=[1, 1]}"
    lines = ["graph @shapes(%x: f32[n, 8, 5, 5], %y: f32[n, 12, 5, 5], %a: f32[3, 8], %c: f32[5, 12]) {",
             const("w1", (16, 8, 1, 1)), const("w2", (16, 12, 1, 1)), const("b", (8, 4)), const("d", (12, 4)),
             "  %zero: f32[] = const() {value=[0]}",
             "  %z: f32[n, 16, 5, 5] = broadcast(%zero) {shape=[n, 16, 5, 5], axes=[]}",
             "  %c1: f32[n, 16, 5, 5] = conv(%x, %w1) " + conv,
             "  %r1: f32[n, 16, 5, 5] = max(%c1, %z)",
             "  %c2: f32[n, 16, 5, 5] = conv(%y, %w2) " + conv,
             "  %r2: f32[n, 16, 5, 5] = max(%c2, %z)",
             "  %p1: f32[3, 4] = dot(%a, %b) {lhs_contract=[1], rhs_contract=[0]}",
             "  %p2: f32[5, 4] = dot(%c, %d) {lhs_contract=[1], rhs_contract=[0]}",
             "  return %r1, %r2, %p1, %p2", "}"]
    model = write_ir("shared_shapes.ir", lines)
    rc, so, se = tessera("ir", model, "--fusion")
    check("shared shapes: four kernels", rc == 0 and so.startswith("fusion of @shapes: 4 kernels"), so + se)
    rc, kernels, defs, se = emitted_kernels(model)
    check("shared shapes: one conv and one product emitted", rc == 0 and len(defs) == 2 and
          kernels.count("tsrt_conv(&a, ") == 1 and kernels.count("tsrt_sgemm(&g, ") == 1, "%s\n%s" % (defs, se))
    check("shared shapes: the constant shapes read from D", "a.c = D[" in kernels and "g.k = D[" in kernels,
          kernels[-3000:])
    for n in (2, 3):
        arrays = {"x": g.standard_normal((n, 8, 5, 5)).astype(np.float32),
                  "y": g.standard_normal((n, 12, 5, 5)).astype(np.float32),
                  "a": g.standard_normal((3, 8)).astype(np.float32), "c": g.standard_normal((5, 12)).astype(np.float32)}
        tag = "shared_shapes_%d" % n
        inputs = ["%s=%s" % (k, save("%s_%s.npy" % (tag, k), v)) for k, v in arrays.items()]
        ref = run_interp(model, inputs, tag + "_interp")
        for threads in ("1", "2"):
            with env(TESSERA_CACHE_DIR=tmp("jit_cache_shared_shapes")):
                got = run_model(model, inputs, "%s_cpu%s" % (tag, threads), ["--target", "cpu", "--threads", threads])
            for i in range(4):
                if got and ref:
                    close("shared shapes: batch %d, %s threads, output %d" % (n, threads, i), got[i], ref[i])


def test_shared_offsets():
    """Kernels that differ only in the constant offsets at which they read
    a buffer share their C (D189): six recurrent steps h = tanh(h.w op
    x[t]), each a product whose epilogue reads its row of x (three
    through a callback, op mul; three through the tile epilogue's
    residual, op add), compile to one kernel per kind, the offsets bound
    by the runtime. The outputs are the interpreter's on 1 and 2 threads."""
    g = np.random.default_rng(37)
    w = (g.standard_normal((8, 8)) / 3).astype(np.float32)
    lines = ["graph @steps(%x: f32[7, 8]) {",
             "  %w: f32[8, 8] = const() {value=[" + ", ".join("%r" % float(v) for v in w.ravel()) + "]}",
             "  %s0: f32[1, 8] = slice(%x) {start=[0, 0], limit=[1, 8], stride=[1, 1]}",
             "  %h0: f32[1, 8] = tanh(%s0)"]
    for t in range(1, 7):
        lines += ["  %%d%d: f32[1, 8] = dot(%%h%d, %%w) {lhs_contract=[1], rhs_contract=[0]}" % (t, t - 1),
                  "  %%s%d: f32[1, 8] = slice(%%x) {start=[%d, 0], limit=[%d, 8], stride=[1, 1]}" % (t, t, t + 1),
                  "  %%a%d: f32[1, 8] = %s(%%d%d, %%s%d)" % (t, "mul" if t < 4 else "add", t, t),
                  "  %%h%d: f32[1, 8] = tanh(%%a%d)" % (t, t)]
    lines += ["  return %h6", "}"]
    model = write_ir("shared_offsets.ir", lines)
    rc, so, se = tessera("ir", model, "--fusion")
    check("shared offsets: seven kernels", rc == 0 and so.startswith("fusion of @steps: 7 kernels"), so + se)
    rc, kernels, defs, se = emitted_kernels(model)
    check("shared offsets: the steps' kernels emitted once per kind", rc == 0 and len(defs) == 3, "%s\n%s" % (defs, se))
    check("shared offsets: the residual read at offset 0", "te.res = b3 + INT64_C(0);" in kernels, kernels[-3000:])
    x = g.standard_normal((7, 8)).astype(np.float32)
    inputs = ["x=%s" % save("shared_offsets_x.npy", x)]
    ref = run_interp(model, inputs, "shared_offsets_interp")
    for threads in ("1", "2"):
        with env(TESSERA_CACHE_DIR=tmp("jit_cache_shared_offsets")):
            got = run_model(model, inputs, "shared_offsets_cpu%s" % threads, ["--target", "cpu", "--threads", threads])
        if got and ref:
            close("shared offsets: %s threads" % threads, got[0], ref[0])
        else:
            check("shared offsets: %s threads ran" % threads, False, "")


def test_indexing_compiled():
    """scatter, dynamic_slice and dynamic_update_slice compile (D123): no
    fallback in their listings (their values: tests/ops on --target cpu);
    a scatter index out of range fails on the compiled target with the
    interpreter's message, naming the node."""
    for op, case in (("scatter", "add_dup_f64"), ("dynamic_slice", "f32_u64_huge_start"),
                     ("dynamic_update_slice", "f32_u64_huge_start")):
        rc, so, se = tessera("ir", os.path.join(ROOT, "tests", "ops", op, case, "model.ir"), "--fusion")
        check("indexing: %s compiled" % op, rc == 0 and ("k0 loop     %%r <- %s" % op) in so and "fallback" not in so,
              so + se)
    model = os.path.join(ROOT, "tests", "ops", "scatter", "add_dup_f64", "model.ir")
    inputs = []
    for k, v in {"a": np.arange(4.0), "b": np.array([[0, 4], [1, 1]], np.int32), "c": np.ones((2, 2))}.items():
        inputs += ["-i", "%s=%s" % (k, save("scatter_oob_%s.npy" % k, v))]
    for target in ("cpu", "interp"):
        with env(TESSERA_CACHE_DIR=tmp("jit_cache_scatter")):
            expect_error("indexing: scatter out of range (%s)" % target, ["run", model] + inputs + ["--target", target],
                         r"^tessera: %r \(scatter\): scatter: index 4 \(at position 1\) is out of range \[0, 4\)")


def test_conv_over_one_position():
    """A 1x1 conv over a 1x1 map (a squeeze-excitation FC) becomes a dot
    over the batch (simplify), whose bias and activation stay in its
    epilogue across the reshape back to 4-D (D124): one kernel, no conv;
    against the interpreter (which runs the conv as written)."""
    model = os.path.join(MODELS, "se_conv_as_dot.ir")
    rc, so, se = tessera("ir", model, "--passes", "default", "--fusion")
    check("conv over one position: one dot kernel with its epilogue",
          rc == 0 and so.startswith("fusion of @se: 1 kernels") and "k0 dot" in so and "add tanh" in so
          and "conv" not in so, so + se)
    g = np.random.default_rng(31)
    arrays = {"x": g.standard_normal((4, 16, 1, 1)).astype(np.float32),
              "w": g.standard_normal((8, 16, 1, 1)).astype(np.float32), "b": g.standard_normal(8).astype(np.float32)}
    got, ref = cpu_and_interp(model, arrays, "se_dot")
    if got and ref:
        close("conv over one position: cpu vs interpreter", got[0], ref[0], rtol=1e-5, atol=1e-6)


def test_short_sums():
    """A sum or product of two f32 terms is accumulated in f32, not f64
    (D192): the two-term result is exact in f64, so rounding it once is
    the f32 operation. The emitted kernel of the two-term reductions has
    no double arithmetic, the three-term one keeps it; outputs bit for
    bit the interpreter's (which sums in f64) on pairs that cancel, differ
    by 2^40 in magnitude, overflow, underflow, are -0, NaN or infinite."""
    model = write_ir("short_sums.ir", [
        "graph @short_sums(%x: f32[16, 2], %y: f32[16, 2], %z: f32[16, 3]) {",
        "  %s: f32[16] = reduce_sum(%x) {axes=[1]}",
        "  %p: f32[16] = reduce_prod(%y) {axes=[1]}",
        "  %t: f32[16] = reduce_sum(%z) {axes=[1]}",
        "  return %s, %p, %t",
        "}"])
    rc, so, se = tessera("ir", model, "--emit", "c")
    kernels = so.split("\nvoid ts_k")[1:]
    check("short sums: f32 accumulators for two terms, f64 for three",
          rc == 0 and any("0x1p+0f" in k and "double" not in k for k in kernels)
          and any("(double)" in k for k in kernels), so[-1500:] + se)
    big = 3.0e38
    pairs = [(1.0, 2.0 ** -40), (1.0, -1.0), (-0.0, -0.0), (-0.0, 0.0), (np.inf, -np.inf), (big, big),
             (1e-30, 1e-30), (1.5, -1.5 + 2.0 ** -22), (np.nan, 1.0), (-np.inf, 5.0), (1e20, 1e20),
             (0.1, 0.2), (16777216.0, 1.0), (-3.0, 2.0 ** -30), (7.0, -0.0), (1e-45, 1e-45)]
    x = np.array(pairs, dtype=np.float32)
    g = np.random.default_rng(37)
    z = g.standard_normal((16, 3)).astype(np.float32)
    got, ref = cpu_and_interp(model, {"x": x, "y": x[::-1].copy(), "z": z}, "short_sums")
    if got and ref and check("short sums: 3 outputs", len(got) == len(ref) == 3):
        for name, a, b in zip(("sum", "prod", "three-term sum"), got, ref):
            check("short sums: %s bit for bit" % name, a.view(np.uint32).tolist() == b.view(np.uint32).tolist(),
                  "cpu %s, interpreter %s" % (a, b))


def test_strided_lanes():
    """A sum or max over a strided axis (the middle one of [4, 600, 3])
    keeps one set of 16 lanes; a contiguous row of 600 four (D193): four
    sets of strided loads cost gcc seconds and ran no faster. Outputs: the
    interpreter's, with a strided sum that overflows in f32 lanes (redone
    in order: 3e38 + 3e38 - 3e38 is 3e38), and a NaN and a -0 in the max."""
    model = write_ir("strided_lanes.ir", [
        "graph @strided(%x: f32[4, 600, 3], %y: f32[3, 600]) {",
        "  %s: f32[4, 3] = reduce_sum(%x) {axes=[1]}",
        "  %m: f32[4, 3] = reduce_max(%x) {axes=[1]}",
        "  %t: f32[3] = reduce_sum(%y) {axes=[1]}",
        "  return %s, %m, %t",
        "}"])
    rc, so, se = tessera("ir", model, "--emit", "c")
    kernels = so.split("\nvoid ts_k")[1:]
    sets = [re.search(r"lane\d+_3\[l\]", k) is not None for k in kernels]
    check("strided lanes: one set for the strided sum and max, four for the row",
          rc == 0 and sets == [False, False, True], "four sets per kernel: %s\n%s" % (sets, se))
    g = np.random.default_rng(41)
    x = g.standard_normal((4, 600, 3)).astype(np.float32)
    x[1, 16, 0], x[1, 80, 0], x[1, 144, 0] = 3e38, 3e38, -3e38
    x[2, 7, 1] = np.nan
    x[3, :, 2] = -np.abs(x[3, :, 2])
    x[3, 100, 2] = -0.0
    y = g.standard_normal((3, 600)).astype(np.float32)
    got, ref = cpu_and_interp(model, {"x": x, "y": y}, "strided_lanes")
    if got and ref and check("strided lanes: 3 outputs", len(got) == len(ref) == 3):
        nan = np.isnan(ref[0])
        check("strided lanes: the NaN's sum is NaN", np.isnan(got[0]).tolist() == nan.tolist() and nan[2, 1],
              str(got[0]))
        close("strided lanes: sum", np.where(nan, 0, got[0]), np.where(nan, 0, ref[0]), rtol=1e-5, atol=1e-5)
        check("strided lanes: the overflowing sum is 3e38", abs(got[0][1, 0] / 3e38 - 1) < 1e-4, str(got[0][1, 0]))
        check("strided lanes: max bit for bit", got[1].view(np.uint32).tolist() == ref[1].view(np.uint32).tolist(),
              "cpu %s, interpreter %s" % (got[1], ref[1]))
        close("strided lanes: row sum", got[2], ref[2], rtol=1e-5, atol=1e-5)


def test_unroll_budget():
    """A reduction over at most 16 constant positions is one expression
    (D120) only while the value at a position is cheap (D195): a 3 x 3 sum
    of a stored value unrolls; the same sum over a fused concat of 17
    unlike parts (a chain of selects at every position) keeps its loop.
    Outputs: the interpreter's."""
    sizes = [8] + [4] * 16
    args = ", ".join("%%a%d: f32[2, %d, 3, 3]" % (i, s) for i, s in enumerate(sizes))
    parts = ", ".join("%%a%d" % i for i in range(len(sizes)))
    tot = sum(sizes)
    model = write_ir("unroll_budget.ir", [
        "graph @unroll_budget(%s, %%y: f32[2, 5, 3, 3]) {" % args,
        "  %%c: f32[2, %d, 3, 3] = concat(%s) {axis=1}" % (tot, parts),
        "  %%s: f32[2, %d] = reduce_sum(%%c) {axes=[2, 3]}" % tot,
        "  %t: f32[2, 5] = reduce_sum(%y) {axes=[2, 3]}",
        "  return %s, %t",
        "}"])
    rc, so, se = tessera("ir", model, "--loops")
    kernels = so.split("\nkernel ")[1:]
    loops = ["acc0" in k for k in kernels]
    check("unroll budget: the select chain's sum loops, the plain one unrolls",
          rc == 0 and len(kernels) == 2 and loops == [True, False], so + se)
    g = np.random.default_rng(43)
    arrays = {"a%d" % i: g.standard_normal((2, s, 3, 3)).astype(np.float32) for i, s in enumerate(sizes)}
    arrays["y"] = g.standard_normal((2, 5, 3, 3)).astype(np.float32)
    got, ref = cpu_and_interp(model, arrays, "unroll_budget")
    if got and ref and check("unroll budget: 2 outputs", len(got) == len(ref) == 2):
        close("unroll budget: the concat's sum", got[0], ref[0], rtol=1e-6, atol=1e-6)
        close("unroll budget: the plain sum", got[1], ref[1], rtol=1e-6, atol=1e-6)
