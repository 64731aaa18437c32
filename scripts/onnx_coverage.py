#!/usr/bin/env python3
"""onnx_coverage.py — write docs/onnx-coverage.md: for every operator of
ONNX's default domain and of the domains tessera has families for
(ai.onnx.ml, ai.onnx.preview.training, ai.onnx.preview; onnx.defs, latest
schemas), whether tessera assembles it, for which opsets of its domain, and
how its node tests fare.

    .venv/bin/python3 scripts/onnx_coverage.py [--tessera build/tessera]
        [--log CHECK_LOG] [--out docs/onnx-coverage.md] [-j N]

The operator table comes from the binary (`tessera onnx-ops`, hidden: one
row "OpType since until" per table entry, "domain.OpType" outside the
default domain). Node-test results come from a
`tessera check` run over onnx's backend test data (node/): the lines of
CHECK_LOG, or a fresh run when no log is given. A test belongs to the
operators of its model's top-level nodes (read with the onnx package;
Constant only when alone; an _expanded test belongs to its base test's
operator). A failure whose reason names one of those operators
("node #0 (Reshape): ...") counts against it only; any other failure
counts against every operator of the test. Reasons are grouped by kind
(wrong values, element type X, operator at opset N not assembled, ...).

An operator is "assembled" when it is in the table and none of its node
tests fail, "partially" when some fail (with the reasons), "not assembled"
when the table lacks it.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

try:
    import onnx
    import onnx.defs
except ImportError:
    sys.exit("onnx_coverage.py needs the onnx package: run it with .venv/bin/python3 (scripts/test.sh makes it)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_attr_domains  # noqa: E402
import onnx_opset_audit  # noqa: E402

DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
MAX = 10**9
# The domains reported, in order: the default one ("") first.
DOMAINS = ["", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview"]


def domain_of(d):
    return "" if d in ("", "ai.onnx") else d


def table_rows(tessera):
    """{(domain, op_type): [(since, until)]} from `tessera onnx-ops`."""
    out = subprocess.run([tessera, "onnx-ops"], check=True, capture_output=True, text=True).stdout
    rows = collections.defaultdict(list)
    for line in out.splitlines():
        name, since, until = line.split()
        domain, _, op = name.rpartition(".")
        rows[(domain, op)].append((int(since), MAX if until == "max" else int(until)))
    return rows


def check_lines(tessera, log, jobs):
    """{test_name: (passed, reason)} from a check log or a fresh run."""
    if log:
        with open(log) as f:
            text = f.read()
    else:
        p = subprocess.run([tessera, "check", os.path.join(DATA, "node"), "--target", "interp", "-j", str(jobs),
                            "--timeout", "300"],
                           capture_output=True, text=True)
        text = p.stdout
    results = {}
    for line in text.splitlines():
        m = re.match(r"^(PASS|FAIL) (\S+?)(?::\s*(.*))?$", line)
        if m:
            results[m.group(2)] = (m.group(1) == "PASS", (m.group(3) or "").strip())
    return results


def test_ops():
    """{test_name: [(domain, op_type), ...]}: the operators each node test is
    about. Those of its model's top-level nodes (of the domains reported),
    without Constant when there are others (it only feeds them); for
    test_X_expanded, where the model is the function body of test_X's
    operator, test_X's."""
    ops = {}
    node_dir = os.path.join(DATA, "node")
    for name in sorted(os.listdir(node_dir)):
        path = os.path.join(node_dir, name, "model.onnx")
        if not os.path.exists(path):
            continue
        model = onnx.load(path, load_external_data=False)
        found = {(domain_of(n.domain), n.op_type) for n in model.graph.node if domain_of(n.domain) in DOMAINS}
        if len(found) > 1:
            found.discard(("", "Constant"))
        ops[name] = sorted(found)
    for name in ops:
        base = re.sub(r"_expanded(_ver\d+)?$", "", name)
        if base != name and base in ops:
            ops[name] = ops[base]
    return ops


def opsets_text(ranges):
    parts = []
    for since, until in sorted(ranges):
        parts.append("%d+" % since if until == MAX else ("%d" % since if since == until else "%d-%d" % (since, until)))
    return ", ".join(parts)


def uncovered(versions, ranges):
    """The schema versions (since_version of each ONNX revision) that no row
    of the table covers."""
    return [v for v in versions if not any(s <= v <= u for s, u in ranges)]


def short(reason, words=10):
    """A reason as a kind of failure, so that failures group: no paths,
    node numbers, value names or counts."""
    reason = reason.replace(DATA + "/", "")
    if re.search(r"values differ; first at", reason):
        return "wrong values"
    if re.search(r": got \w+\[.*\], expected \w+\[", reason):
        return "wrong shape or dtype"
    m = re.search(r"element type (\w+) is not supported", reason)
    if m:
        return "element type %s" % m.group(1)
    m = re.search(r"is an? (sequence|optional|map|sparse tensor): tessera has tensors only", reason)
    if m:
        return "%s values (tessera has tensors only)" % m.group(1)
    m = re.search(r"operator (\w+) \(opset (\d+)\) is not supported", reason)
    if m:
        return "%s at opset %s not assembled" % (m.group(1), m.group(2))
    m = re.search(r"operator (\w+) of domain '([^']*)' (\(opset \d+\) )?is not supported", reason)
    if m:
        return "%s of domain %s not assembled" % (m.group(1), m.group(2))
    reason = re.sub(r"^node (#\d+|'[^']*') \((\w+)\): (\2: )?", r"\2: ", reason)
    w = reason.split()
    return " ".join(w[:words]) + (" ..." if len(w) > words else "")


def attribute(results, ops_of):
    """{op: {"pass": n, "fail": [(test, reason)]}}"""
    per_op = collections.defaultdict(lambda: {"pass": 0, "fail": []})
    for test, ops in ops_of.items():
        if test not in results:
            continue
        ok, reason = results[test]
        if ok:
            for op in ops:
                per_op[op]["pass"] += 1
            continue
        m = re.search(r"\((\w+)\): ", reason)
        blamed = [o for o in ops if m and o[1] == m.group(1)] or ops
        for op in blamed:
            per_op[op]["fail"].append((test, reason))
    return per_op


def status_text(op, rows, stats):
    if op not in rows:
        return "not assembled"
    fails = stats["fail"] if stats else []
    total = (stats["pass"] + len(fails)) if stats else 0
    if not fails:
        return "assembled" if total else "assembled (no node test)"
    reasons = collections.Counter(short(r) for _, r in fails)
    text = "; ".join("%s%s" % (r, " (x%d)" % n if n > 1 else "") for r, n in reasons.most_common(3))
    if len(reasons) > 3:
        text += "; ..."
    return "partially (%d of %d node tests fail: %s)" % (len(fails), total, text)


def md_escape(s):
    return s.replace("|", "\\|").replace("\n", " ")


def schemas_of(domain):
    """The latest schemas of domain, by name, and {name: [since_version]}."""
    schemas = sorted((x for x in onnx.defs.get_all_schemas() if x.domain == domain), key=lambda x: x.name)
    history = collections.defaultdict(list)
    for x in onnx.defs.get_all_schemas_with_history():
        if x.domain == domain:
            history[x.name].append(x.since_version)
    return schemas, history


def version_text(op, rows, audit):
    """The operator's versions from opset 7 (default domain): tested (a
    passing test case runs it: onnx's, tests/onnx_opsets' or the
    project's), refused (tests/onnx_opsets/refused.txt) or not."""
    keys, refused, versions = audit
    if op in onnx_attr_domains.RANDOM_OPS:
        return "random draws: no oracle judges them"
    tested, whole_refused, other = [], [], []
    for since, until, _ in versions.get(op, []):
        if not any(s <= since <= u for s, u in rows.get(("", op), [])):
            continue
        if onnx_opset_audit.version_covered(keys, op, since, until):
            tested.append(since)
        elif (op, since) in refused:
            whole_refused.append(since)
        else:
            other.append(since)
    parts = [", ".join(map(str, tested))] if tested else []
    if whole_refused:
        parts.append("refused: " + ", ".join(map(str, whole_refused)))
    if other:
        parts.append("untested: " + ", ".join(map(str, other)))
    return "; ".join(parts) or "-"


def read_refused_versions():
    """{(op, since)} of the whole versions refused.txt lists."""
    out = set()
    path = os.path.join(onnx_opset_audit.OPSETS, "refused.txt")
    with open(path) as f:
        for line in f:
            m = re.match(r"^(\w+)@(\d+)\s+\*", line)
            if m:
                out.add((m.group(1), int(m.group(2))))
    return out


def domain_lines(domain, rows, per_op, counts, audit):
    """The table lines of one domain; counts[status] += 1 per operator."""
    schemas, history = schemas_of(domain)
    lines = []
    for s in schemas:
        key = (domain, s.name)
        st = status_text(key, rows, per_op.get(key))
        counts[st.split(" ")[0]] += 1
        versions = sorted(set(history[s.name]))
        if key in rows:
            miss = uncovered(versions, rows[key])
            opsets = opsets_text(rows[key]) + (" (not %s)" % ", ".join(map(str, miss)) if miss else "")
        else:
            opsets = "-"
        stats = per_op.get(key)
        tests = "%d/%d" % (stats["pass"], stats["pass"] + len(stats["fail"])) if stats else "-"
        name = s.name + (" (deprecated)" if s.deprecated else "")
        tested = version_text(s.name, rows, audit) if not domain else "-"
        lines.append("| %s | %s | %s | %s | %s | %s |" % (name, ", ".join(map(str, versions)), opsets, tested, tests,
                                                          md_escape(st)))
    return schemas, lines


def write(out, rows, per_op, results, ops_of, audit):
    sections = []
    for domain in DOMAINS:
        counts = collections.Counter()
        schemas, lines = domain_lines(domain, rows, per_op, counts, audit)
        sections.append((domain, schemas, lines, counts))
    ran = [t for t in ops_of if t in results]
    passed = sum(1 for t in ran if results[t][0])
    known = {(d, x.name) for d, schemas, _, _ in sections for x in schemas}
    extra = sorted(set(rows) - known)
    with open(out, "w") as f:
        f.write("# ONNX operator coverage\n\n")
        f.write("Generated by `scripts/onnx_coverage.py` from the operator table of the `tessera` binary\n"
                "(`tessera onnx-ops`) and a `tessera check` run over the node tests of onnx %s's\n"
                "backend test data. Do not edit by hand: rerun the script.\n\n" % onnx.__version__)
        for domain, schemas, _, counts in sections:
            f.write("- %s: %d operators (latest schemas); assembled: %d; partially (some node tests fail): %d; "
                    "not assembled: %d\n" % ("default domain" if not domain else domain, len(schemas),
                                              counts["assembled"], counts["partially"], counts["not"]))
        f.write("- node tests: %d of %d pass\n\n" % (passed, len(ran)))
        f.write("Columns: **ONNX versions** — the opsets (of the operator's domain) in which its schema changed;\n"
                "**tessera opsets** — the model opsets tessera's table handles (`7+`: 7 and later), and the\n"
                "schema versions it does not; **versions tested** — of the versions in effect from opset 7\n"
                "that tessera assembles, those a passing test case runs at an opset of (onnx's node tests,\n"
                "`tests/onnx_opsets`, the project's models), those refused whole (`tests/onnx_opsets/refused.txt`),\n"
                "and any left untested (`tests/onnx_conformance/test_opset_history.py` fails on those, and on\n"
                "any attribute value neither tested nor refused); **node tests** — passing / all node tests about the operator\n"
                "(its model's top-level operators; a `_expanded` test counts for the operator it expands;\n"
                "a failure that names one of the test's operators counts against that one only);\n"
                "**status** — `assembled`, `partially (N of M node tests fail: first words of the reasons)`,\n"
                "or `not assembled`.\n")
        for domain, _, lines, _ in sections:
            f.write("\n## %s\n\n" % ("Default domain (`ai.onnx`)" if not domain else "Domain `%s`" % domain))
            f.write("| operator | ONNX versions | tessera opsets | versions tested | node tests | status |\n")
            f.write("|---|---|---|---|---|---|\n")
            f.write("\n".join(lines) + "\n")
        if extra:
            f.write("\nIn tessera's table but not in ONNX's schemas: %s\n"
                    % ", ".join((d + "." if d else "") + op for d, op in extra))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tessera", default=os.path.join(ROOT, "build", "tessera"))
    ap.add_argument("--log", help="output of `tessera check .../node` (default: run it)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "onnx-coverage.md"))
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    if not os.access(a.tessera, os.X_OK):
        sys.exit("onnx_coverage.py: no tessera binary at %s (build it, or pass --tessera)" % a.tessera)
    rows = table_rows(a.tessera)
    results = check_lines(a.tessera, a.log, a.j)
    ops_of = test_ops()
    keys, _ = onnx_opset_audit.covered_keys(onnx_opset_audit.corpus())
    audit = (keys, read_refused_versions(), onnx_attr_domains.schema_versions())
    write(a.out, rows, attribute(results, ops_of), results, ops_of, audit)
    print("wrote %s" % os.path.relpath(a.out, os.getcwd()))


if __name__ == "__main__":
    main()
