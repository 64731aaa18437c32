#!/usr/bin/env python3
"""doc_examples.py — the C examples of docs/api.md compile against the
public header and the library, run, and print what the page shows under
each (the ```text block that follows it).

    python3 tests/doc_examples.py LIBTESSERA_A [LINK_LIBS_AND_FLAGS...]

Standard library only; prints "N passed, N failed"."""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from pycheck import check, report  # noqa: E402


def main():
    # CMake names some libraries bare ("dl"): those are -l flags
    lib = sys.argv[1]
    libs = [a if a.startswith(("-", "/")) else "-l" + a for a in sys.argv[2:]]
    with open(os.path.join(ROOT, "docs", "api.md")) as f:
        pairs = re.findall(r"```c\n(.*?)```\n.*?```text\n(.*?)```", f.read(), re.S)
    check("docs/api.md has a C example", len(pairs) >= 1)
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory() as d:
        for i, (code, want) in enumerate(pairs):
            src, exe = os.path.join(d, f"ex{i}.c"), os.path.join(d, f"ex{i}")
            with open(src, "w") as f:
                f.write(code)
            # the flags a user of the installed header would use, warnings on
            cmd = [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", src, "-I", os.path.join(ROOT, "include"), lib]
            cmd += libs + ["-o", exe]
            built = subprocess.run(cmd, capture_output=True, text=True)
            if not check(f"example {i} compiles", built.returncode == 0, built.stderr[-2000:]):
                continue
            ran = subprocess.run([exe], capture_output=True, text=True, timeout=300,
                                 env=dict(os.environ, TESSERA_CACHE_DIR=os.path.join(d, "cache")))
            check(f"example {i} runs", ran.returncode == 0, ran.stderr[-2000:])
            check(f"example {i} prints what the page shows", ran.stdout == want,
                  f"\n--- got\n{ran.stdout}--- page\n{want}")
    return report()


if __name__ == "__main__":
    sys.exit(main())
