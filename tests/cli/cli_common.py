"""What the CLI tests share (test_cli.py, cli_cpu.py): the binary under
test, a scratch directory, the pass/fail counts and helpers that run the
binary and compare results. test_cli.main sets TESSERA and TMP."""
import contextlib
import os
import re
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pycheck import check  # noqa: E402,F401

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MODELS = os.path.join(ROOT, "tests", "cli", "models")

TESSERA = None
TMP = None


def tessera(*args):
    """Run the binary; (status, stdout, stderr). A signal is a failure of
    its own: the CLI must never crash."""
    p = subprocess.run([TESSERA] + [str(a) for a in args], capture_output=True, text=True, timeout=120)
    check("no signal: tessera %s" % " ".join(map(str, args)), p.returncode >= 0,
          "killed by signal %d\n%s" % (-p.returncode, p.stderr))
    return p.returncode, p.stdout, p.stderr


def tmp(name):
    return os.path.join(TMP, name)


def write_ir(name, lines):
    """IR text lines written to the scratch file `name`; its path."""
    path = tmp(name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def save(name, array):
    path = tmp(name)
    np.save(path, array)
    return path


def run_model(model, inputs, name, extra=()):
    """tessera run MODEL with inputs (list of CLI -i values) and extra
    arguments; the outputs as arrays, or None after a recorded failure."""
    out = tmp("out_" + name)
    shutil.rmtree(out, ignore_errors=True)
    args = ["run", model]
    for spec in inputs:
        args += ["-i", spec]
    rc, so, se = tessera(*args + list(extra) + ["-o", out])
    if not check(name + ": exit 0", rc == 0, se):
        return None
    outs = []
    while os.path.exists(os.path.join(out, "output_%d.npy" % len(outs))):
        outs.append(np.load(os.path.join(out, "output_%d.npy" % len(outs))))
    return outs


def run_interp(model, inputs, name):
    """run_model on the reference interpreter: the oracle of a comparison."""
    return run_model(model, inputs, name, ["--target", "interp"])


@contextlib.contextmanager
def env(**values):
    """Environment variables set for the block (None unsets one); the old
    values come back after it."""
    old = {k: os.environ.get(k) for k in values}
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def cpu_and_interp(model, arrays, tag):
    """Saves arrays ({input name: array}) and runs the model compiled (with
    a JIT cache of its own) and on the interpreter: (cpu outputs,
    interpreter outputs), each None after a recorded failure."""
    inputs = ["%s=%s" % (k, save("%s_%s.npy" % (tag, k), v)) for k, v in arrays.items()]
    with env(TESSERA_CACHE_DIR=tmp("jit_cache_" + tag)):
        got = run_model(model, inputs, tag + "_cpu", ["--target", "cpu"])
    return got, run_interp(model, inputs, tag + "_interp")


def close(name, got, want, rtol=1e-4, atol=1e-5):
    ok = got.dtype == want.dtype and got.shape == want.shape
    check(name + ": dtype/shape", ok, "got %s%s, want %s%s" % (got.dtype, got.shape, want.dtype, want.shape))
    if ok:
        if want.dtype.kind == "f":
            ok = np.allclose(got, want, rtol=rtol, atol=atol)
        else:
            ok = np.array_equal(got, want)
        check(name + ": values", ok, "max diff %s" % (np.abs(got.astype(np.float64) - want).max() if want.size else 0))


def expect_error(name, args, pattern):
    rc, so, se = tessera(*args)
    lines = se.splitlines()
    check(name + ": exit 1", rc == 1, "status %d, stderr %r" % (rc, se))
    check(name + ": one stderr line", len(lines) == 1 and lines[0].startswith("tessera: "), repr(se))
    check(name + ": message", re.search(pattern, se) is not None, "%r does not match %r" % (se, pattern))
