#!/usr/bin/env python3
"""gen_op_tests.py — the golden data of the primitive test suite.

Writes tests/ops/<op>/<case>/ for every primitive the interpreter computes
deterministically: model.ir (one node in canonical IR text, graph inputs =
operands, graph outputs = results), input_K.npy, expected_K.npy and, when a
case needs other tolerances than tests/unit/test_ops.c's defaults, tol.txt
("rtol X atol Y").

Expected values are computed here with NumPy and plain Python, independently
of tessera's C code: integer arithmetic through Python ints with explicit
wrapping, floats in float64 rounded once to the result dtype, the C library
functions through Python's math module. The contract of each primitive is
its row comment in src/ir/ops.def and docs/primitives.md
(its sections); the worked examples of those docs are cases too
(gen_documented). Every zero is compared with its sign.

The generators live in scripts/op_tests/ (common, elementwise, reductions, structure).

Deterministic: every case draws from its own generator seeded by its name,
so re-running reproduces the committed files byte for byte and adding a
case changes no other. Run:  .venv/bin/python scripts/gen_op_tests.py
(-v lists the cases per op; --check only compares with the committed data).
"""
import os
import shutil
import sys

from op_tests import common
from op_tests.common import CASES
from op_tests.elementwise import *  # noqa: F401,F403  (the gen_* functions)
from op_tests.reductions import *  # noqa: F401,F403
from op_tests.structure import *  # noqa: F401,F403

# ==== main =================================================================

GENERATORS = [
    gen_const, gen_iota,
    gen_neg_abs_sign, gen_not, gen_transcendental, gen_rounding,
    gen_arith, gen_logic, gen_shifts, gen_compare, gen_select, gen_cast, gen_bitcast, gen_bf16,
    gen_documented,
    gen_reduce, gen_arg, gen_cumulative, gen_reduce_window,
    gen_reshape, gen_broadcast, gen_transpose, gen_slice, gen_pad, gen_concat, gen_reverse,
    gen_gather, gen_scatter, gen_dynamic_slice, gen_dynamic_update_slice,
    gen_dot, gen_conv, gen_sort, gen_nonzero, gen_if, gen_while, gen_collectives, gen_symbolic,
]


# Kept by hand beside the generated cases (each target's expected
# failures with their reasons): regenerating keeps them, --check skips them.
KEPT_PREFIX = "expected_failures"


def tree(root):
    """Relative path -> bytes of every generated file under root."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            if d == root and f.startswith(KEPT_PREFIX):
                continue
            with open(os.path.join(d, f), "rb") as fh:
                out[os.path.relpath(os.path.join(d, f), root)] = fh.read()
    return out


def check(committed):
    """--check: regenerate elsewhere and list what differs from the committed data."""
    got, want = tree(common.OUT), tree(committed)
    diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
    for k in diff[:20]:
        print("differs: tests/ops/%s" % k)
    print("tests/ops is %s" % ("stale: %d files differ" % len(diff) if diff else "up to date"))
    return 1 if diff else 0


def main():
    """Regenerate tests/ops (or with --check, compare against it); -v lists cases per op."""
    committed = common.OUT
    if "--check" in sys.argv:
        import tempfile
        common.OUT = os.path.join(tempfile.mkdtemp(prefix="gen_op_tests."), "ops")
    OUT = common.OUT
    kept = {}
    if os.path.isdir(OUT):
        for f in os.listdir(OUT):
            if f.startswith(KEPT_PREFIX):
                with open(os.path.join(OUT, f), "rb") as fh:
                    kept[f] = fh.read()
        shutil.rmtree(OUT)     # every other file under tests/ops is generated here
    os.makedirs(OUT)
    for f, data in kept.items():
        with open(os.path.join(OUT, f), "wb") as fh:
            fh.write(data)
    for gen in GENERATORS:
        gen()
    total = sum(len(v) for v in CASES.values())
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    if "-v" in sys.argv:
        for op in sorted(CASES):
            print("%-22s %d" % (op, len(CASES[op])))
    print("%d cases for %d primitives, %d bytes" % (total, len(CASES), size))
    if OUT != committed:
        status = check(committed)
        shutil.rmtree(os.path.dirname(OUT))
        return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
