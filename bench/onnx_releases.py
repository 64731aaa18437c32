"""Run tessera over the ONNX node tests that older onnx releases ship.

The onnx wheel carries backend test data (onnx/backend/test/data/node/<case>/
model.onnx + test_data_set_0/{input,output}_K.pb). tessera's CI runs onnx
1.22.0's; older releases ship older cases at older opsets (and older expected
values), which have exposed silent wrong answers. For each release this script

  1. downloads the onnx wheel with pip, without installing it (`pip download
     --no-deps --only-binary=:all:` for a CPython/manylinux x86_64 tag that the
     release has a wheel for; the test data is the same in every wheel of a
     release) into bench/.cache/onnx-releases/wheels/,
  2. extracts only onnx/backend/test/data/node/ into
     bench/.cache/onnx-releases/VER/node/ (skipped when already there),
  3. runs `tessera check VER/node --target interp -j JOBS --timeout 120`
     (and, with --cpu, `--target cpu` too, TESSERA_CACHE_DIR set to
     bench/.cache/onnx-releases/jit-cache),
  4. parses the `PASS name` / `FAIL name: reason` lines and the closing
     `N passed, N failed` line and classifies each failure:
       (a) strings    the case uses string tensors (tessera has no string dtype)
       (b) random     the model draws from a random generator (Bernoulli,
                      RandomNormal/Uniform[Like], Multinomial)
       (c) dropout    training-mode Dropout (random masks)
       (d) in-1.22    the same case name exists in onnx 1.22.0's node data and
                      is listed in tests/onnx_conformance/expected_failures.txt
       (e) other      everything else: each one is listed with its reason
     (first matching class wins), and prints a table per release and target.

Not a test and not run in CI: it needs network access to PyPI and takes a
while (the interpreter runs about 1,200-1,400 cases per release).

Reproduce (from the repository root; needs the project's .venv and a built
tessera, e.g. cmake -S . -B build-sweep -G Ninja -DCMAKE_BUILD_TYPE=Release
-DTS_ONNX_TESTS=OFF && cmake --build build-sweep --target tessera_cli):

  .venv/bin/python bench/onnx_releases.py --tessera build-sweep/tessera \\
      --out bench/.cache/onnx-releases/report.md

Options:
  --releases 1.12.0,1.13.1   the releases (comma- or space-separated; default
                             1.10.2 1.11.0 1.12.0 1.13.1 1.14.1 1.15.0 1.16.2)
  --tessera PATH             the tessera binary (default build/tessera)
  --cpu                      also run --target cpu
  --jobs N                   tessera check -j N (default 2)
  --timeout S                tessera check --timeout S (default 120)
  --out FILE                 also write the report as markdown
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(HERE, ".cache", "onnx-releases")
WHEELS = os.path.join(CACHE, "wheels")
XFAIL = os.path.join(ROOT, "tests", "onnx_conformance", "expected_failures.txt")
DEFAULT_RELEASES = ["1.10.2", "1.11.0", "1.12.0", "1.13.1", "1.14.1", "1.15.0", "1.16.2"]
NODE_PREFIX = "onnx/backend/test/data/node/"

# (python version, platforms) tried in order until pip finds a wheel; old
# releases have no cp310 wheel, new ones no manylinux2010 wheel.
WHEEL_TAGS = [
    ("3.10", ["manylinux2014_x86_64", "manylinux_2_17_x86_64"]),
    ("3.9", ["manylinux2014_x86_64", "manylinux_2_17_x86_64",
             "manylinux2010_x86_64", "manylinux_2_12_x86_64"]),
    ("3.8", ["manylinux2014_x86_64", "manylinux_2_17_x86_64",
             "manylinux2010_x86_64", "manylinux_2_12_x86_64"]),
]

RANDOM_OPS = {"Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform",
              "RandomUniformLike", "Multinomial"}
CLASSES = ["strings", "random", "dropout", "in-1.22", "other"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- data

def find_wheel(ver):
    hits = sorted(glob.glob(os.path.join(WHEELS, "onnx-%s-*.whl" % ver)))
    return hits[0] if hits else None


def fetch_wheel(ver):
    whl = find_wheel(ver)
    if whl:
        return whl
    os.makedirs(WHEELS, exist_ok=True)
    errors = []
    for py, plats in WHEEL_TAGS:
        cmd = [sys.executable, "-m", "pip", "download", "onnx==" + ver, "--no-deps",
               "--only-binary=:all:", "--python-version", py, "--implementation", "cp",
               "-d", WHEELS, "--quiet", "--disable-pip-version-check"]
        for p in plats:
            cmd += ["--platform", p]
        r = subprocess.run(cmd, capture_output=True, text=True)
        whl = find_wheel(ver)
        if r.returncode == 0 and whl:
            return whl
        errors.append("python %s: %s" % (py, (r.stderr.strip().splitlines() or ["?"])[-1]))
    raise SystemExit("bench: no onnx %s wheel found on PyPI:\n  %s" % (ver, "\n  ".join(errors)))


def node_dir(ver):
    """bench/.cache/onnx-releases/VER/node, extracted from the wheel when missing."""
    dst = os.path.join(CACHE, ver, "node")
    stamp = os.path.join(CACHE, ver, ".complete")
    if os.path.isfile(stamp) and os.path.isdir(dst):
        return dst
    whl = fetch_wheel(ver)
    log("extracting %s from %s" % (NODE_PREFIX, os.path.basename(whl)))
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            if not name.startswith(NODE_PREFIX) or name.endswith("/"):
                continue
            out = os.path.join(dst, name[len(NODE_PREFIX):])
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with z.open(name) as src, open(out, "wb") as f:
                f.write(src.read())
    with open(stamp, "w") as f:
        f.write(os.path.basename(whl) + "\n")
    return dst


def ref_node_dir():
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")


def read_xfail():
    names = set()
    with open(XFAIL) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                names.add(line[0])
    return names


# ---------------------------------------------------------------- running

LINE_RE = re.compile(r"^(PASS|FAIL) (\S+?)(?:: (.*))?$")
CLOSE_RE = re.compile(r"^(\d+) passed, (\d+) failed$")


def run_check(tess, path, target, jobs, timeout):
    env = dict(os.environ)
    if target == "cpu":
        env["TESSERA_CACHE_DIR"] = os.path.join(CACHE, "jit-cache")
        os.makedirs(env["TESSERA_CACHE_DIR"], exist_ok=True)
    cmd = [tess, "check", path, "--target", target, "-j", str(jobs), "--timeout", str(timeout)]
    log("running " + " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    results, closing = {}, None
    for line in r.stdout.splitlines():
        m = LINE_RE.match(line)
        if m:
            results[m.group(2)] = (m.group(1), m.group(3) or "")
            continue
        m = CLOSE_RE.match(line.strip())
        if m:
            closing = (int(m.group(1)), int(m.group(2)))
    if closing is None:
        raise SystemExit("bench: tessera check gave no closing line (status %d): %s"
                         % (r.returncode, (r.stderr or r.stdout).strip()[-500:]))
    npass = sum(1 for s, _ in results.values() if s == "PASS")
    if (npass, len(results) - npass) != closing:
        log("warning: parsed %d/%d, closing line says %d/%d"
            % (npass, len(results) - npass, closing[0], closing[1]))
    return results, closing


# ---------------------------------------------------------------- classes

def model_facts(case_dir):
    """(operator types including subgraphs', whether a value is a string tensor)."""
    import onnx
    try:
        m = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    except Exception:
        return set(), False
    ops, strings = set(), False

    def is_str(tp):
        w = tp.WhichOneof("value")
        if w == "tensor_type":
            return tp.tensor_type.elem_type == onnx.TensorProto.STRING
        if w == "sequence_type":
            return is_str(tp.sequence_type.elem_type)
        if w == "optional_type":
            return is_str(tp.optional_type.elem_type)
        if w == "map_type":
            return (tp.map_type.key_type == onnx.TensorProto.STRING
                    or is_str(tp.map_type.value_type))
        return False

    def walk(g):
        nonlocal strings
        for v in list(g.input) + list(g.output) + list(g.value_info):
            strings = strings or is_str(v.type)
        for t in g.initializer:
            strings = strings or t.data_type == onnx.TensorProto.STRING
        for n in g.node:
            ops.add(n.op_type)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
                if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == onnx.TensorProto.STRING:
                    strings = True
    walk(m.graph)
    for fn in m.functions:
        for n in fn.node:
            ops.add(n.op_type)
    return ops, strings


def classify(name, reason, case_dir, ref_names, xfail):
    ops, strings = model_facts(case_dir)
    if strings or "element type STRING" in reason:
        return "strings"
    if ops & RANDOM_OPS:
        return "random"
    if "Dropout" in ops and "training mode" in reason:
        return "dropout"
    if name in ref_names and name in xfail:
        return "in-1.22"
    return "other"


def opsets(case_dir):
    import onnx
    try:
        m = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    except Exception:
        return "?"
    return ",".join("%s%d" % ((o.domain + ":") if o.domain not in ("", "ai.onnx") else "", o.version)
                    for o in m.opset_import)


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--releases", nargs="+", default=None)
    ap.add_argument("--tessera", default=os.path.join(ROOT, "build", "tessera"))
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--out")
    a = ap.parse_args()
    releases = DEFAULT_RELEASES if not a.releases else [
        v for arg in a.releases for v in arg.replace(",", " ").split()]
    tess = os.path.abspath(a.tessera)
    if not os.access(tess, os.X_OK):
        raise SystemExit("bench: no tessera binary at %s (build it or pass --tessera)" % tess)
    targets = ["interp"] + (["cpu"] if a.cpu else [])

    xfail = read_xfail()
    ref = ref_node_dir()
    ref_names = set(os.listdir(ref)) if os.path.isdir(ref) else set()

    rows, others = [], []
    for ver in releases:
        d = node_dir(ver)
        for target in targets:
            results, (npass, nfail) = run_check(tess, d, target, a.jobs, a.timeout)
            by = {c: 0 for c in CLASSES}
            for name, (st, reason) in sorted(results.items()):
                if st != "FAIL":
                    continue
                c = classify(name, reason, os.path.join(d, name), ref_names, xfail)
                by[c] += 1
                if c == "other":
                    others.append((ver, target, name, opsets(os.path.join(d, name)),
                                   name in ref_names, reason))
            rows.append((ver, target, npass, nfail, by))

    head = ["release", "target", "passed", "failed"] + CLASSES
    lines = ["# tessera over older onnx releases' node tests", "",
             "tessera: `%s`" % tess, "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for ver, target, npass, nfail, by in rows:
        lines.append("| " + " | ".join([ver, target, str(npass), str(nfail)]
                                       + [str(by[c]) for c in CLASSES]) + " |")
    lines += ["", "Classes: strings = string tensors; random = random draws; "
              "dropout = training-mode Dropout; in-1.22 = same case fails in onnx 1.22.0's "
              "data (listed in tests/onnx_conformance/expected_failures.txt); other = the rest.",
              "", "## class (e) failures (%d)" % len(others), ""]
    if others:
        lines += ["| release | target | case | opsets | in 1.22 data | reason |",
                  "|---|---|---|---|---|---|"]
        for ver, target, name, ops, in_ref, reason in others:
            lines.append("| %s | %s | %s | %s | %s | %s |" % (
                ver, target, name, ops, "yes" if in_ref else "no", reason.replace("|", "\\|")))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
