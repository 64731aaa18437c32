#!/usr/bin/env python3
"""aten_coverage.py — write docs/aten-coverage.md: every core ATen
operator (the overloads torch tags torch.Tag.core, grouped by packet) and
what tessera's torch.compile backend does with it:

- assembled: every core overload has a lowering (python/tessera/torch/lower/)
  that takes any arguments;
- partly: some overloads have one, or a lowering refuses some arguments
  (its check names which; those nodes run in eager PyTorch);
- decomposed: AOTAutograd's core decompositions rewrite it into other
  operators before tessera sees it;
- not yet: it runs in eager PyTorch (a fallback, never an error).

    .venv/bin/python scripts/aten_coverage.py [--check]

needs the installed package (`pip install .`) and torch. --check compares
with the page instead of writing it (tests/python/test_aten_coverage.py).
"""
import argparse
import inspect
import os
import sys

import torch

from tessera.torch.backend import decompositions
from tessera.torch.decompositions import OVERRIDES
from tessera.torch.lower import CHECKS, LOWERINGS
from tessera.torch.lower.table import COMPLEX_CHECKS, COMPLEX_LOWERINGS

# an operator's lowering for real tensors or, failing that, its complex one
TABLE = {**COMPLEX_LOWERINGS, **LOWERINGS}
TABLE_CHECKS = {**{op: c for op, c in COMPLEX_CHECKS.items() if op not in LOWERINGS}, **CHECKS}

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PAGE = os.path.join(ROOT, "docs", "aten-coverage.md")


def core_packets():
    """{packet name: [core overloads]}"""
    out = {}
    for name in dir(torch.ops.aten):
        try:
            pk = getattr(torch.ops.aten, name)
        except Exception:   # a packet that fails to load is not ours to list
            continue
        if not isinstance(pk, torch._ops.OpOverloadPacket):
            continue
        ovs = []
        for ov in pk.overloads():
            op = getattr(pk, ov)
            if torch.Tag.core in op.tags:
                ovs.append(op)
        if ovs:
            out[name] = ovs
    return out


def family(fn):
    return os.path.splitext(os.path.basename(inspect.getsourcefile(fn)))[0]


def row(name, ovs, decomposed):
    lowered = [op for op in ovs if op in TABLE]
    dec = [op for op in ovs if op in decomposed]
    checked = [op for op in lowered if op in TABLE_CHECKS]
    fams = sorted({family(TABLE[op]) for op in lowered})
    ov_names = lambda ops: ", ".join(op._overloadname for op in ops)  # noqa: E731
    if lowered and len(lowered) == len(ovs) and not checked:
        status, note = "assembled", ""
    elif lowered:
        parts = []
        if len(lowered) < len(ovs):
            parts.append("overloads %s" % ov_names(lowered))
        if checked:
            docs = sorted({" ".join((TABLE_CHECKS[op].__doc__ or TABLE_CHECKS[op].__name__).split())
                           for op in checked})
            parts.append("falls back for " + "; ".join(docs))
        status, note = "partly", "; ".join(parts)
    elif dec and len(dec) == len(ovs):
        status, note = "decomposed", ("by AOTAutograd with tessera's decompositions (decompositions.py)"
                                      if all(op in OVERRIDES for op in dec) else
                                      "by AOTAutograd's core decompositions")
    else:
        status, note = "not yet", "runs in eager PyTorch"
    return "| `%s` | %s | %s | %s | %s |" % (name, ov_names(ovs), status, ", ".join(fams), note)


def render():
    decomposed = set(decompositions())   # PyTorch's core decompositions and tessera's own
    packets = core_packets()
    rows = [row(n, ovs, decomposed) for n, ovs in sorted(packets.items())]
    counts = {}
    for r in rows:
        s = r.split(" | ")[2]
        counts[s] = counts.get(s, 0) + 1
    head = ["# Core ATen operators in the torch.compile backend", "",
            "Written by `scripts/aten_coverage.py` (torch %s); rerun it rather than edit this file. "
            "Every operator torch tags `core`, by packet, and what `torch.compile(model, "
            "backend=\"tessera\")` does with it ([torch.md](torch.md)). A node tessera does not take "
            "runs in eager PyTorch: a fallback, never an error. Every operator also falls back for "
            "symbolic sizes (dynamic shapes), dtypes tessera lacks and tensors off the CPU; complex tensors "
            "(as pairs of reals) go only through the views, copies, padding, conjugation and Fourier "
            "transforms of `lower/complex.py`." %
            torch.__version__.split("+")[0], "",
            "%d packets: %s." % (len(rows), ", ".join("%d %s" % (counts[k], k) for k in
                                                   ("assembled", "partly", "decomposed", "not yet") if k in counts)),
            "", "| operator | core overloads | status | lowering family | notes |", "|---|---|---|---|---|"]
    return "\n".join(head + rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = render()
    if args.check:
        with open(PAGE) as f:
            if f.read() != text:
                print("docs/aten-coverage.md is stale: run .venv/bin/python scripts/aten_coverage.py")
                return 1
        print("docs/aten-coverage.md is current")
        return 0
    with open(PAGE, "w") as f:
        f.write(text)
    print("wrote docs/aten-coverage.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
