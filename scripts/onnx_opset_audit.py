"""onnx_opset_audit.py — which operator versions and attribute values the
test cases CI runs cover: shared by tests/onnx_conformance/
test_opset_history.py (which fails on a gap) and scripts/onnx_coverage.py
(which shows per operator which versions are covered). See
onnx_attr_domains.py for what a value key is.
"""
import collections
import os

import onnx
import onnx.defs

import onnx_attr_domains as dom

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
OPSETS = os.path.join(ROOT, "tests", "onnx_opsets")
XFAIL = os.path.join(ROOT, "tests", "onnx_conformance", "expected_failures.txt")


def listed(path):
    """The first words of an expected-failures list."""
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {l.split()[0] for l in f if l.strip() and not l.startswith("#")}


def corpus():
    """(case dir, passes in CI) for every case the interpreter suites run:
    onnx's node, simple and pytorch-* folders, tests/onnx_opsets,
    tests/onnx_models, tests/onnx_domains and models/tinynet. A case
    passes unless the expected-failures list names it."""
    failing = listed(XFAIL)
    dirs = [os.path.join(DATA, f) for f in ("node", "simple", "pytorch-converted", "pytorch-operator")]
    dirs += [OPSETS, os.path.join(ROOT, "tests", "onnx_models"), os.path.join(ROOT, "tests", "onnx_domains")]
    out = [(os.path.join(ROOT, "models", "tinynet"), True)]
    for d in dirs:
        for name in sorted(os.listdir(d)):
            if os.path.exists(os.path.join(d, name, "model.onnx")):
                out.append((os.path.join(d, name), name not in failing))
    return out


def default_opset(model):
    return next((i.version for i in model.opset_import if i.domain in ("", "ai.onnx")), None)


def walk_nodes(graph):
    """Every node, subgraphs included."""
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.HasField("g"):
                yield from walk_nodes(a.g)
            for g in a.graphs:
                yield from walk_nodes(g)


def covered_keys(cases):
    """{(op, opset, attr, key)} over the passing cases ((op, opset, "",
    "version") for the node itself), and {(op, opset): [(case dir,
    passes)]}: cases of one top-level node (passing ones first), to build
    probes from."""
    keys, bases = set(), collections.defaultdict(list)
    for d, ok in sorted(cases, key=lambda c: not c[1]):
        model = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
        v = default_opset(model)
        if v is None:
            continue
        for n in walk_nodes(model.graph):
            if n.domain not in ("", "ai.onnx"):
                continue
            try:
                schema = onnx.defs.get_schema(n.op_type, v, "")
            except Exception:
                continue
            if ok:
                keys |= {(n.op_type, v, a, k) for a, k in dom.node_keys(n, schema)}
                keys.add((n.op_type, v, "", "version"))
            single = len(model.graph.node) == 1 and model.graph.node[0] is n
            if single and len(bases[(n.op_type, v)]) < 3:
                bases[(n.op_type, v)].append((d, ok))
    return keys, bases


def version_covered(keys, op, since, until):
    """Whether a passing case runs op at an opset of the version."""
    hi = min(until if until is not None else 99, 99)
    return any((op, v, "", "version") in keys for v in range(since, hi + 1))
