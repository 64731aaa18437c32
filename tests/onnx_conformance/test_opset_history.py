#!/usr/bin/env python3
"""test_opset_history.py — every attribute value that some ONNX opset
allows (7 on) is either covered by a passing test or refused with a clear
error (docs/onnx.md, "Every opset").

    python3 tests/onnx_conformance/test_opset_history.py path/to/tessera

It walks the schema history of the default domain (onnx.defs; the versions
in effect at opset 7 or later) and, for every operator version tessera's
table assembles, every attribute and every value of its domain
(scripts/onnx_attr_domains.py: the enumerated strings, 0/1 for flags,
"set" for the rest), requires one of:

- covered: a test case that CI runs and that passes (not on an
  expected-failures list) has a node of the operator at an opset inside
  the version's range with the attribute at that value (an enumerated
  attribute left out counts as its default);
- refused: a line `Op@since attr=value  # reason` (or `Op@since *` for the
  whole version) in tests/onnx_opsets/refused.txt, and tessera really
  refuses it: a passing case of the operator moved to that version with
  the value set fails to load with a message naming the operator, the
  attribute and the value (for `*`: the operator and "not supported");
- unjudgeable: UNJUDGEABLE below, with the reason no test can compare it.

It also fails when a refused.txt line is covered after all (take it off)
or names no allowed value, when a string attribute of the schemas is in
neither the enumerations nor the free-text list of onnx_attr_domains.py,
and when an enumerated value is not in its attribute's schema text at the
opsets where it is listed. The cases come from onnx's node, simple and
pytorch-* folders (the .venv's onnx 1.22.0), tests/onnx_opsets
(scripts/gen_opset_tests.py), tests/onnx_models, tests/onnx_domains and
models/tinynet. Prints "N passed, N failed".
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from pycheck import check, report  # noqa: E402

try:
    import onnx
    import onnx.defs
    from onnx import helper
except ImportError:
    print("test_opset_history.py needs the onnx package (bash scripts/test.sh puts it in .venv)", file=sys.stderr)
    print("0 passed, 1 failed")
    sys.exit(1)
import onnx_attr_domains as dom  # noqa: E402
from onnx_opset_audit import OPSETS, corpus, covered_keys  # noqa: E402

REFUSED = os.path.join(OPSETS, "refused.txt")
MAX = 10**9

# Values no exact comparison can judge, with the reason (the generator
# leaves them out too). An entry with attr None covers the whole operator.
UNJUDGEABLE = {
    ("TopK", "sorted", 0): "the k results may come in any order; tessera returns them sorted, one of those orders",
    **{(op, None, None): "random draws (onnx_attr_domains.RANDOM_OPS)" for op in dom.RANDOM_OPS},
}

# ---- tessera's table ----------------------------------------------------------------------------

def table(tessera):
    """{op: [(since, until)]} of the default domain, from `tessera onnx-ops`."""
    out = subprocess.run([tessera, "onnx-ops"], check=True, capture_output=True, text=True).stdout
    rows = collections.defaultdict(list)
    for line in out.splitlines():
        name, since, until = line.split()
        if "." not in name:
            rows[name].append((int(since), MAX if until == "max" else int(until)))
    return rows


def assembled(rows, op, v):
    return any(lo <= v <= hi for lo, hi in rows.get(op, []))


# ---- refusals -------------------------------------------------------------------------------------

def read_refused():
    """{(op, since, attr, key)} -> reason; attr "*" (key None) for a whole
    version."""
    out = {}
    with open(REFUSED) as f:
        for line in f:
            body, _, why = line.partition("#")
            if not body.strip():
                continue
            m = re.match(r"^(\w+)@(\d+)\s+(\*|\w+=\S+)\s*$", body)
            if not check("refused.txt: %s" % body.strip(), m is not None and why.strip() != "",
                         "want `Op@since attr=value  # reason`"):
                continue
            attr, _, value = m.group(3).partition("=")
            key = int(value) if re.fullmatch(r"-?\d+", value or "x") else value
            out[(m.group(1), int(m.group(2)), attr, key if attr != "*" else None)] = why.strip()
    return out


def probe_value(attr_schema):
    """A value of the attribute's type to set where the key is "set"."""
    T = onnx.defs.OpSchema.AttrType
    vals = {T.INT: 1, T.FLOAT: 1.0, T.STRING: "x", T.INTS: [1], T.FLOATS: [1.0], T.STRINGS: ["x"],
            T.TENSOR: helper.make_tensor("t", onnx.TensorProto.FLOAT, [1], [1.0])}
    if attr_schema.type == T.SPARSE_TENSOR:
        return helper.make_sparse_tensor(helper.make_tensor("v", onnx.TensorProto.FLOAT, [1], [1.0]),
                                         helper.make_tensor("i", onnx.TensorProto.INT64, [1], [0]), [2])
    return vals.get(attr_schema.type)


def probe(tessera, base, op, v, attr, value):
    """tessera check on a copy of case `base` at opset v, with attr=value on
    its op node (a Constant keeps no other attribute: one value each):
    (status, stdout)."""
    tmp = tempfile.mkdtemp(prefix="tessera_refusal_")
    try:
        case = os.path.join(tmp, "test_probe")
        shutil.copytree(base, case)
        model = onnx.load(os.path.join(case, "model.onnx"))
        for imp in model.opset_import:
            if imp.domain in ("", "ai.onnx"):
                imp.version = v
        if attr != "*":
            n = next(n for n in model.graph.node if n.op_type == op)
            keep = [a for a in n.attribute if a.name != attr and op != "Constant"]
            del n.attribute[:]
            n.attribute.extend(keep + [helper.make_attribute(attr, value)])
        onnx.save(model, os.path.join(case, "model.onnx"))
        p = subprocess.run([tessera, "check", case, "--target", "interp"], capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_refusal(tessera, bases, op, since, until, schema, attr, key):
    """A value is probed on a passing case of the operator (inside the
    version if there is one); a whole version on any case of it. The
    failure must name the operator, the attribute and the value (for
    "set", the attribute; for "*", say "not supported")."""
    hi = until if until is not None else MAX
    ordered = sorted(bases.items(), key=lambda kv: (not (since <= kv[0][1] <= hi), kv[0][1]))
    base = next((d for (o, v), bs in ordered if o == op for d, ok in bs if ok or attr == "*"), None)
    name = "%s@%d %s=%s refused" % (op, since, attr, key)
    if not check(name + ": a case to probe with", base is not None, "no single-node case of %s" % op):
        return
    value = probe_value(schema.attributes[attr]) if key == "set" else key
    rc, out = probe(tessera, base, op, since, attr, value)
    words = ["not supported"] if attr == "*" else [op, attr] + ([str(key)] if key != "set" else [])
    check(name, rc == 1 and out.startswith("FAIL ") and all(w in out for w in words),
          "tessera check did not fail naming %s: %r" % (", ".join(words), out[:300]))


# ---- the domains against the schemas ---------------------------------------------------------------

def check_domains(versions):
    S = onnx.defs.OpSchema.AttrType.STRING
    for op, vs in versions.items():
        for since, until, schema in vs:
            for name, a in schema.attributes.items():
                if a.type != S:
                    continue
                known = (op, name) in dom.STRING_ENUMS or (op, name) in dom.FREE_STRINGS
                if not check("%s@%d %s: listed in onnx_attr_domains.py" % (op, since, name), known,
                             "a string attribute in neither STRING_ENUMS nor FREE_STRINGS"):
                    continue
                text = a.description + schema.doc
                for value in dom.domain(op, name, a, since):
                    if value != "set":
                        check("%s@%d %s=%s: in the schema's text" % (op, since, name, value), value in text)


# ---- the walk --------------------------------------------------------------------------------------

def main():
    if len(sys.argv) != 2 or not os.access(sys.argv[1], os.X_OK):
        print("usage: test_opset_history.py PATH/TO/tessera", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1
    tessera = os.path.abspath(sys.argv[1])
    versions = dom.schema_versions()
    check_domains(versions)
    rows = table(tessera)
    keys, bases = covered_keys(corpus())
    refused = read_refused()
    seen = set()
    missing = []
    for op, vs in sorted(versions.items()):
        for since, until, schema in vs:
            hi = until if until is not None else MAX
            if not assembled(rows, op, since) or (op, None, None) in UNJUDGEABLE:
                continue       # the loader refuses the whole version, naming it; or no test can judge it
            whole = (op, since, "*", None)
            if whole in refused:
                seen.add(whole)
                check_refusal(tessera, bases, op, since, until, schema, "*", None)
                continue

            def cov(attr, key):
                return any((op, v, attr, key) in keys for v in range(since, min(hi, 99) + 1))
            if not check("%s@%d: a passing test at an opset of the version" % (op, since), cov("", "version")):
                missing.append("%s@%d: no passing test at any of opsets %d-%s" % (op, since, since, until or "latest"))
            for attr, a in sorted(schema.attributes.items()):
                for key in dom.domain(op, attr, a, since):
                    r = (op, since, attr, key)
                    if r in refused:
                        seen.add(r)
                        check("%s@%d %s=%s: refused, and not covered" % r, not cov(attr, key),
                              "a passing test covers it: take it off refused.txt")
                        check_refusal(tessera, bases, op, since, until, schema, attr, key)
                    elif (op, attr, key) in UNJUDGEABLE:
                        check("%s@%d %s=%s: unjudgeable" % r, True)
                    elif not check("%s@%d %s=%s" % r, cov(attr, key)):
                        missing.append("%s@%d %s=%s" % r)
    for r in sorted(set(refused) - seen, key=str):
        check("refused.txt: %s@%d %s=%s names a version and value the schemas allow" % r, False)
    if missing:
        print("%d attribute values neither covered nor refused (add a test, or refuse them in the "
              "decomposition and list them in tests/onnx_opsets/refused.txt):" % len(missing), file=sys.stderr)
        for m in missing:
            print("  " + m, file=sys.stderr)
    return report()


if __name__ == "__main__":
    sys.exit(main())
