#!/usr/bin/env python3
"""check_layers.py — the include graph follows docs/architecture.md: each
layer of src/ includes only the layers below it (the table's "may use"
column), fusion does not call back into the lowering that calls it
(fusion -> view <- lowering), and the command line (tools/) includes the
public header and its own headers only (CMake also builds it with
include/ as its one include path), and so does the Python extension
(python/ext/). TOOLS_PENDING would list an internal
header a tool is allowed for now; it is empty, and a listed one no longer
included fails the check, so it can only shrink.

    python3 tests/check_layers.py

Prints "N passed, N failed"; standard library only.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from pycheck import check, report  # noqa: E402
BELOW = {
    "core": set(),
    "ir": {"core"},
    "interp": {"ir", "core"},
    "passes": {"interp", "ir", "core"},
    "builder": {"passes", "interp", "ir", "core"},
    "autodiff": {"builder", "passes", "interp", "ir", "core"},
    "frontend": {"autodiff", "builder", "passes", "interp", "ir", "core"},
    "lower": {"ir", "core"},
    "codegen": {"lower", "ir", "core"},
    "runtime": {"core"},
    "io": {"core"},
    "kernels": set(),   # pasted into generated C: libc only
    "backend": {"codegen", "lower", "runtime", "interp", "ir", "core"},
    "api": {"backend", "codegen", "lower", "runtime", "interp", "ir", "core", "io", "passes", "builder", "frontend", "autodiff"},
}
# fusion and the view analysis sit below lowering: they never include it
LOWER_ONE_WAY = {"fuse.c", "fuse_row.c", "fuse.h", "view.c", "view.h"}
LOWERING = {"lower/lower.h", "lower/lower_int.h", "lower/plan.h"}
# (tools/ file, internal header) pairs still allowed: none
TOOLS_PENDING = set()

def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read(), re.M)


def layer_of(path):
    return os.path.relpath(path, os.path.join(ROOT, "src")).split(os.sep)[0]


def check_src():
    for d, _, files in os.walk(os.path.join(ROOT, "src")):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(d, name)
            me = layer_of(path)
            for inc in includes(path):
                top = inc.split("/")[0]
                if "/" not in inc or top not in BELOW:   # same folder, the public header, generated code
                    continue
                rel = os.path.relpath(path, ROOT)
                check("%s includes %s" % (rel, inc), top == me or top in BELOW[me],
                      "layer %s may use %s" % (me, ", ".join(sorted(BELOW[me])) or "nothing"))
                if me == "lower" and name in LOWER_ONE_WAY:
                    check("%s does not call back into lowering" % rel, inc not in LOWERING,
                          "fusion -> view <- lowering, one way")


def check_public_only(folder, pending):
    """folder's C includes the public header and its own headers only."""
    seen = set()
    where = os.path.join(ROOT, folder)
    for name in sorted(os.listdir(where)):
        if not name.endswith((".c", ".h")):
            continue
        for inc in includes(os.path.join(where, name)):
            local = os.path.exists(os.path.join(where, inc))
            if local or inc == "tessera.h":
                continue
            seen.add((name, inc))
            check("%s/%s includes %s" % (folder, name, inc), (name, inc) in pending,
                  "%s/ uses include/tessera.h only" % folder)
    for name, inc in sorted(pending - seen):
        check("pending: %s/%s still includes %s" % (folder, name, inc), False, "take it off the list")


def main():
    check_src()
    check_public_only("tools", TOOLS_PENDING)
    # the Python extension is a user of the library like the command
    check_public_only(os.path.join("python", "ext"), set())
    return report()


if __name__ == "__main__":
    sys.exit(main())
