#!/usr/bin/env python3
"""gen_opset_tests.py — ONNX test cases at the older opset versions of
each operator, for tests/onnx_opsets/ (the ctest suites onnx_opsets and
onnx_opsets_cpu; docs/onnx.md, "Every opset").

ONNX's node tests (onnx 1.22.0's, in the .venv) exercise each operator at
its newest version. For every version an operator's schema history lists
from opset 7 on, this script takes the node tests of that operator (one
operator per model, Constant nodes aside; no _expanded variants), moves
them to the version's opset, keeps those that the checker accepts there
(full_check: types and attributes as that version defines them), and
computes their expected outputs with onnxruntime (onnx's reference
implementation where onnxruntime does not run them; where both run and
disagree the report says so). It keeps the cases that cover an attribute value
(scripts/onnx_attr_domains.py) no kept case covers yet, then tries each
enumerated value still uncovered by setting it on a kept case. Inputs
that a version takes as attributes instead (axes, pads, split, ...) are
moved there from the test data (TO_ATTRS), and attributes a version does
not know are dropped: the oracles say what the result then means.

    .venv/bin/python scripts/gen_opset_tests.py [--out tests/onnx_opsets] [--ops A,B] [--report FILE]

Needs numpy, onnx==1.22.0 and onnxruntime (pip install into .venv). The
output is deterministic for fixed versions of those; the cases are
committed, so the tests need neither onnxruntime nor this script.
"""
import argparse
import copy
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
import onnx.checker
import onnx.reference
import onnx.shape_inference
from onnx import helper, numpy_helper

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_attr_domains as dom  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PER_VERSION_MAX = 12        # cases kept per operator version
RTOL, ATOL = 1e-3, 1e-5


def node_data():
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")


# ---- source cases ------------------------------------------------------------------------

class Case:
    """A node test: its model, first data set and the operator it tests."""

    def __init__(self, name, model, inputs, outputs, handmade=False):
        self.name, self.model, self.inputs, self.outputs = name, model, inputs, outputs
        self.handmade = handmade      # not in onnx's data: written at its own opset too
        self.op = next((n.op_type for n in model.graph.node if n.op_type != "Constant"), "Constant")


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def tensor_io(model):
    vs = list(model.graph.input) + list(model.graph.output)
    return all(v.type.WhichOneof("value") == "tensor_type" for v in vs)


def load_case(d):
    model = onnx.load(os.path.join(d, "model.onnx"))
    ops = {n.op_type for n in model.graph.node if n.op_type != "Constant"}
    if len(ops) != 1 or not tensor_io(model) or any(i.domain not in ("", "ai.onnx") for i in model.opset_import):
        return None
    sd = os.path.join(d, "test_data_set_0")
    ins = [read_pb(os.path.join(sd, "input_%d.pb" % k)) for k in range(len(model.graph.input))
           if os.path.exists(os.path.join(sd, "input_%d.pb" % k))]
    outs = [read_pb(os.path.join(sd, "output_%d.pb" % k)) for k in range(len(model.graph.output))
            if os.path.exists(os.path.join(sd, "output_%d.pb" % k))]
    if len(ins) != len(model.graph.input) or len(outs) != len(model.graph.output):
        return None
    return Case(os.path.basename(d), model, ins, outs)


def source_cases(ops):
    by_op = {}
    data = node_data()
    cases = [load_case(os.path.join(data, name)) for name in sorted(os.listdir(data)) if "_expanded" not in name]
    for c in cases + handmade():
        if c and (not ops or c.op in ops) and c.op not in dom.RANDOM_OPS:
            by_op.setdefault(c.op, []).append(c)
    # small inputs first: of the cases that cover the same values, the
    # smallest is kept (the cases are committed)
    for cs in by_op.values():
        cs.sort(key=lambda c: (sum(len(t.SerializeToString()) for t in c.inputs), c.name))
    return by_op


# ---- hand-made sources ------------------------------------------------------------------------
# What no node test exercises, built here as one more source case each
# (moved to every version like the node tests; expected outputs from the
# oracles, never written by hand).

def tensor(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def one_node(name, opset, node, inputs, outputs, arrays, initializers=()):
    """A Case of one node: inputs [(name, elem type, shape)], outputs
    [name] (typed by shape inference) or [(name, elem type, shape)],
    arrays the inputs' test values (the outputs are the oracles')."""
    outs = [helper.make_tensor_value_info(*o) if isinstance(o, tuple) else onnx.ValueInfoProto(name=o)
            for o in outputs]
    g = helper.make_graph([node], name, [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs], outs,
                          list(initializers))
    m = onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]))
    return Case(name, m, [tensor(n, a) for (n, _, _), a in zip(inputs, arrays)], [], handmade=True)


def recurrent(op, name, direction="forward", **attrs):
    """An RNN, GRU or LSTM over X [2, 2, 3] with hidden size 3."""
    rng = np.random.default_rng(len(name))
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    dirs = 2 if direction == "bidirectional" else 1
    F = onnx.TensorProto.FLOAT
    x = rng.standard_normal((2, 2, 3)).astype(np.float32)
    w = (rng.standard_normal((dirs, gates * 3, 3)) * 0.5).astype(np.float32)
    r = (rng.standard_normal((dirs, gates * 3, 3)) * 0.5).astype(np.float32)
    b = (rng.standard_normal((dirs, 2 * gates * 3)) * 0.5).astype(np.float32)
    node = helper.make_node(op, ["X", "W", "R", "B"], ["Y", "Y_h"], hidden_size=3, direction=direction, **attrs)
    return one_node(name, 14, node, [("X", F, x.shape), ("W", F, w.shape), ("R", F, r.shape), ("B", F, b.shape)],
                    ["Y", "Y_h"], [x, w, r, b])


def loop_case():
    """Loop (opset 11): x + 1 three times, each step also scanned out. The
    body's ops (Add, Identity) read the same at every opset."""
    F, B, I = onnx.TensorProto.FLOAT, onnx.TensorProto.BOOL, onnx.TensorProto.INT64
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["x_in", "one"], ["x_out"]),
         helper.make_node("Identity", ["x_out"], ["scan"])], "body",
        [helper.make_tensor_value_info("i", I, []), helper.make_tensor_value_info("cond_in", B, []),
         helper.make_tensor_value_info("x_in", F, [2])],
        [helper.make_tensor_value_info("cond_out", B, []), helper.make_tensor_value_info("x_out", F, [2]),
         helper.make_tensor_value_info("scan", F, [2])],
        [tensor("one", np.ones(2, np.float32))])
    node = helper.make_node("Loop", ["M", "cond", "x"], ["x_final", "scans"], body=body)
    return one_node("test_loop_add_scan", 11, node, [("M", I, []), ("cond", B, []), ("x", F, [2])],
                    [("x_final", F, [2]), ("scans", F, [3, 2])],
                    [np.array(3, np.int64), np.array(True), np.array([1, -2], np.float32)])


def constant_cases():
    """Constant (opset 13) with each kind of value attribute."""
    values = {"value_float": 2.5, "value_floats": [1.0, -2.0], "value_int": 3, "value_ints": [1, 2, 3],
              "value": tensor("v", np.arange(6, dtype=np.float32).reshape(2, 3))}
    return [one_node("test_constant_" + k, 13, helper.make_node("Constant", [], ["y"], **{k: v}), [], ["y"], [])
            for k, v in values.items()]


def handmade():
    F = onnx.TensorProto.FLOAT
    rng = np.random.default_rng(7)
    cases = [recurrent(op, "test_%s_bidirectional" % op.lower(), "bidirectional") for op in ("RNN", "GRU", "LSTM")]
    cases += [recurrent("RNN", "test_rnn_activations", activations=["LeakyRelu"], activation_alpha=[0.1]),
              recurrent("GRU", "test_gru_activations", activations=["HardSigmoid", "LeakyRelu"],
                        activation_alpha=[0.2, 0.1], activation_beta=[0.5]),
              recurrent("LSTM", "test_lstm_activations", activations=["HardSigmoid", "Tanh", "Tanh"],
                        activation_alpha=[0.2], activation_beta=[0.5])]
    x = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
    cases.append(one_node("test_globallppool_p3", 22, helper.make_node("GlobalLpPool", ["x"], ["y"], p=3),
                          [("x", F, x.shape)], ["y"], [x]))
    x = rng.standard_normal((2, 3, 2, 2)).astype(np.float32)
    params = [rng.standard_normal((3, 2, 2)).astype(np.float32) for _ in range(3)]
    params.append((rng.random((3, 2, 2)) + 0.5).astype(np.float32))
    names = ["scale", "bias", "mean", "var"]
    cases.append(one_node("test_batchnorm_not_spatial", 7,
                          helper.make_node("BatchNormalization", ["x"] + names, ["y"], spatial=0),
                          [("x", F, x.shape)] + [(n, F, p.shape) for n, p in zip(names, params)], ["y"], [x] + params))
    x = np.array([0.3, 1.0, 2.5, 7.0, -3.0, 100.0], np.float32)
    like = onnx.TensorProto(name="like", data_type=onnx.TensorProto.FLOAT8E8M0, dims=[1], raw_data=bytes([127]))
    cases.append(one_node("test_castlike_to_e8m0", 24, helper.make_node("CastLike", ["x", "like"], ["y"]),
                          [("x", F, x.shape)], ["y"], [x], initializers=[like]))
    x = np.array([[1, 2, 2, 3, 5], [3, 5, 1, 1, 2]], np.int32)
    tfidf = helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TFIDF", min_gram_length=1, max_gram_length=2,
                             max_skip_count=0, ngram_counts=[0, 3], ngram_indexes=[0, 1, 2, 3],
                             pool_int64s=[1, 2, 3, 2, 3], weights=[0.5, 1.0, 2.0, 1.5])
    cases.append(one_node("test_tfidf_weights", 9, tfidf, [("x", onnx.TensorProto.INT32, x.shape)], ["y"], [x]))
    return cases + [loop_case()] + constant_cases()


# ---- moving a model to an opset -------------------------------------------------------------

def set_opset(model, v):
    m = copy.deepcopy(model)
    for imp in m.opset_import:
        if imp.domain in ("", "ai.onnx"):
            imp.version = v
    m.doc_string = ""
    m.graph.doc_string = ""
    return m


def checked(m):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            onnx.checker.check_model(m, full_check=True)
        return True
    except Exception:
        return False


# Inputs that older versions take as attributes: op -> [(input index,
# attribute, form)]. Moved only where the target version has the attribute
# and not the input.
REDUCE_OPS = ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
              "ReduceProd", "ReduceSum", "ReduceSumSquare")
TO_ATTRS = {
    "Slice": [(1, "starts", "ints"), (2, "ends", "ints"), (3, "axes", "ints")],
    "Pad": [(1, "pads", "ints"), (2, "value", "float")],
    "TopK": [(1, "k", "int")],
    "Squeeze": [(1, "axes", "ints")],
    "Unsqueeze": [(1, "axes", "ints")],
    "Split": [(1, "split", "ints")],
    "Clip": [(1, "min", "float"), (2, "max", "float")],
    "Upsample": [(1, "scales", "floats")],
    **{op: [(1, "axes", "ints")] for op in REDUCE_OPS},
}


# Versions whose inputs are a different list: (op, since) -> the newer
# input each of theirs was (Resize-10 took X and scales; roi and sizes
# came in 11).
INPUT_MAP = {("Resize", 10): [0, 2]}


def constant_of(model, inputs, name):
    """The value of `name`: a graph input's test value, an initializer, or
    a Constant node's output; None otherwise."""
    for vi, t in zip(model.graph.input, inputs):
        if vi.name == name:
            return numpy_helper.to_array(t)
    for t in model.graph.initializer:
        if t.name == name:
            return numpy_helper.to_array(t)
    for n in model.graph.node:
        if n.op_type == "Constant" and n.output[0] == name:
            for a in n.attribute:
                if a.name == "value":
                    return numpy_helper.to_array(a.t)
    return None


def as_attr_value(v, form):
    v = np.asarray(v)
    if form == "ints":
        return [int(x) for x in v.reshape(-1)]
    if form == "floats":
        return [float(x) for x in v.reshape(-1)]
    if v.size != 1:
        return None
    return int(v.reshape(-1)[0]) if form == "int" else float(v.reshape(-1)[0])


def prune_inputs(model, inputs):
    """The model and inputs without the graph inputs no node reads any
    more; initializers likewise."""
    used = {i for n in model.graph.node for i in n.input}
    keep = [(vi, t) for vi, t in zip(model.graph.input, inputs) if vi.name in used]
    del model.graph.input[:]
    model.graph.input.extend(vi for vi, _ in keep)
    inits = [t for t in model.graph.initializer if t.name in used]
    del model.graph.initializer[:]
    model.graph.initializer.extend(inits)
    return model, [t for _, t in keep]


def adapted(model, inputs, op, v):
    """The model reshaped for the version of op at opset v: inputs that
    version takes as attributes moved there (their values from the test
    data), attributes it does not know dropped, omitted inputs it
    requires given empty tensors, trailing omitted ones removed. The
    oracles compute what the result means; this only makes it valid.
    (model, inputs) or None when an input to move is not a constant."""
    schema = onnx.defs.get_schema(op, v, "")
    m = set_opset(model, v)
    n = op_node(m, op)
    names = list(n.input)
    for k, attr, form in TO_ATTRS.get(op, []):
        if attr not in schema.attributes or k >= len(names) or len(schema.inputs) > k:
            continue
        if names[k]:
            value = constant_of(m, inputs, names[k])
            value = as_attr_value(value, form) if value is not None else None
            if value is None:
                return None
            if value != []:      # an empty list: the attribute's absence says the same
                n.attribute.append(helper.make_attribute(attr, value))
        names[k] = ""
    if (op, schema.since_version) in INPUT_MAP:
        names = [names[i] if i < len(names) else "" for i in INPUT_MAP[(op, schema.since_version)]]
    if op == "Slice" and len(names) > 4 and len(schema.inputs) <= 4:   # steps: only all ones go
        steps = constant_of(m, inputs, names[4]) if names[4] else np.ones(1)
        if steps is None or not np.all(np.asarray(steps) == 1):
            return None
        names[4] = ""
    keep = [a for a in n.attribute if a.name in schema.attributes]
    del n.attribute[:]
    n.attribute.extend(keep)
    for k, name in enumerate(names):
        if not name and k < len(schema.inputs) and schema.inputs[k].option != schema.inputs[k].option.Optional:
            names[k] = "empty_input_%d" % k
            m.graph.initializer.append(numpy_helper.from_array(np.zeros(0, np.float32), names[k]))
    while names and not names[-1]:
        names.pop()
    del n.input[:]
    n.input.extend(names)
    return prune_inputs(m, list(inputs))


def converted(case, v):
    """(model at opset v, its inputs) or None."""
    m = set_opset(case.model, v)
    if checked(m):
        return m, case.inputs
    got = adapted(case.model, case.inputs, case.op, v)
    if got and checked(got[0]):
        return got
    return None


# ---- the oracles ------------------------------------------------------------------------------

def feeds(model, inputs):
    return {vi.name: numpy_helper.to_array(t) for vi, t in zip(model.graph.input, inputs)}


def run_ort(model, inputs):
    import onnxruntime as ort
    try:
        so = ort.SessionOptions()
        so.log_severity_level = 4
        s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return s.run(None, feeds(model, inputs))
    except Exception:
        return None


def run_ref(model, inputs):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return onnx.reference.ReferenceEvaluator(model).run(None, feeds(model, inputs))
    except Exception:
        return None


def agree(a, b):
    """Same shapes, dtypes and values (floats within rtol, and an atol that
    grows with the largest value: round-off near zero, as in an FFT)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.dtype.kind in "fc":
            finite = y[np.isfinite(y)] if y.size else y
            atol = max(ATOL, 1e-6 * float(np.max(np.abs(finite)))) if finite.size else ATOL
            if not np.allclose(x, y, rtol=RTOL, atol=atol, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def ref_blind(op, v, keys):
    """Whether onnx's reference implementation cannot judge op at opset v
    with these attribute keys (read in onnx/reference/ops): its recurrent
    operators ignore activations, clip and direction and swap the axes of
    a version without layout; Softmax, LogSoftmax and Hardmax compute the
    13+ meaning at every opset; RoiAlign takes half_pixel before the
    attribute existed (16); BatchNormalization-9 trains whenever momentum
    is set, and its default sets it; Conv and the pools pad under auto_pad
    VALID. onnxruntime alone decides these."""
    recurrent_blind = any(k[0] in ("activations", "activation_alpha", "activation_beta", "clip") or
                          k in (("direction", "reverse"), ("direction", "bidirectional")) for k in keys)
    return ((op in ("RNN", "GRU", "LSTM") and (v < 14 or recurrent_blind)) or
            (op in ("Softmax", "LogSoftmax", "Hardmax") and v < 13) or (op == "RoiAlign" and v < 16) or
            (op == "BatchNormalization" and 9 <= v < 14) or ("auto_pad", "VALID") in keys)


def global_lp_as_lp(model):
    """GlobalLpPool as LpPool over the whole spatial extent, at opset 18
    (neither oracle runs GlobalLpPool-22; the two mean the same)."""
    m = copy.deepcopy(model)
    n = op_node(m, "GlobalLpPool")
    dims = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim][2:]
    n.op_type = "LpPool"
    n.attribute.append(helper.make_attribute("kernel_shape", dims))
    return set_opset(m, 18)


# op -> a model of what the op's model computes, through operators the
# oracles run (used only when neither runs the model itself)
EQUIVALENT = {"GlobalLpPool": global_lp_as_lp}


def inferred_dims(model):
    """The output dims strict shape inference gives (None for unknown),
    or None when it fails."""
    try:
        m = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except Exception:
        return None
    out = []
    for vi in m.graph.output:
        t = vi.type.tensor_type
        out.append([d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
                   if t.HasField("shape") else None)
    return out


def shapes_fit(model, outputs):
    """Whether the outputs' shapes are those ONNX's own shape inference
    gives, where it gives them: a runtime may return something for a
    configuration the spec gives no size (a pooling window larger than
    its unpadded input under auto_pad VALID)."""
    dims = inferred_dims(model)
    if dims is None:
        return True
    for want, y in zip(dims, outputs):
        y = np.asarray(y)
        if want is not None and (len(want) != y.ndim or any(w is not None and w != s for w, s in zip(want, y.shape))):
            return False
    return True


def expected(model, inputs, report, name, need_ort=False, blind=False):
    """The outputs onnxruntime computes; where it does not run the model,
    onnx's reference's (unless need_ort: a mutated number, which the
    reference may ignore, or blind: ref_blind). Where both run and
    disagree the case is dropped (the report says so), unless blind."""
    got = run_ort(model, inputs)
    op = next((n.op_type for n in model.graph.node if n.op_type != "Constant"), None)
    if got is None and op in EQUIVALENT:
        got = run_ort(EQUIVALENT[op](model), inputs)
        if got is not None:
            report.append("%s: onnxruntime's outputs for the equivalent model" % name)
            return got
    if got is None and (need_ort or blind):
        return None
    ref = None if blind else run_ref(model, inputs)
    if got is not None and ref is not None and not agree(got, ref):
        report.append("%s: onnxruntime and the reference disagree; dropped" % name)
        return None
    if got is None and ref is not None:
        report.append("%s: onnxruntime does not run it; the reference's outputs" % name)
    out = got if got is not None else ref
    if out is None or any(np.asarray(o).dtype == object for o in out):
        return None
    if not shapes_fit(model, out):
        report.append("%s: the outputs' shapes are not those shape inference gives; dropped" % name)
        return None
    return out


# ---- choosing cases -------------------------------------------------------------------------

def op_node(model, op):
    return next(n for n in model.graph.node if n.op_type == op)


def allowed(op, schema, v, keys):
    """Whether every enumerated value among keys is one that opset v
    allows (the checker does not look at string values)."""
    for name, k in keys:
        a = schema.attributes.get(name)
        if a is not None and dom.enumerated(op, name, a) and k not in dom.domain(op, name, a, v):
            return False
    return True


def required(op, schema, v):
    return {(name, k) for name, a in schema.attributes.items() for k in dom.domain(op, name, a, v)}


# Attributes a value excludes: pads is not allowed beside an auto_pad
# other than NOTSET (runtimes ignore it; a mutated case must not carry it).
# ceil_mode beside an auto_pad is read one way by onnxruntime (it still
# rounds up) and another by the spec's formulas: left out too.
EXCLUDES = {("auto_pad", v): ("pads", "ceil_mode") for v in ("SAME_UPPER", "SAME_LOWER", "VALID")}
# Values whose result is not one answer, so no oracle's output can judge
# another implementation's: TopK with sorted=0 returns its k elements in
# any order (tests/onnx_conformance/test_opset_history.py lists them too).
UNJUDGEABLE = {("TopK", "sorted", 0)}


def set_attr(model, op, name, value):
    m = copy.deepcopy(model)
    n = op_node(m, op)
    drop = {name} | set(EXCLUDES.get((name, value), ()) if isinstance(value, (str, int)) else ())
    keep = [a for a in n.attribute if a.name not in drop]
    del n.attribute[:]
    n.attribute.extend(keep)
    n.attribute.append(helper.make_attribute(name, value))
    return retyped_outputs(m)


def retyped_outputs(m):
    """m with its graph outputs' types inferred again: an attribute may
    change them (output_datatype, keepdims). Dims become symbols (the
    oracles' shapes are declared later, declare_outputs); a rank shape
    inference cannot tell stays the one declared."""
    old = copy.deepcopy(list(m.graph.output))
    for vi in m.graph.output:
        vi.type.tensor_type.elem_type = 0
        vi.type.tensor_type.ClearField("shape")
    try:
        inferred = onnx.shape_inference.infer_shapes(m)
    except Exception:
        inferred = m
    for vi, was, got in zip(m.graph.output, old, inferred.graph.output):
        t, g = vi.type.tensor_type, got.type.tensor_type
        t.elem_type = g.elem_type or was.type.tensor_type.elem_type
        rank = len(g.shape.dim) if g.HasField("shape") else len(was.type.tensor_type.shape.dim)
        t.shape.SetInParent()
        for i in range(rank):
            t.shape.dim.add().dim_param = "d%d" % i
    return m


def own_opset(model):
    return next(i.version for i in model.opset_import if i.domain in ("", "ai.onnx"))


def convert_all(op, since, until, schema, cases, report):
    """The cases of op moved into the version's range [since, until]
    that cover a key no earlier one does: [(name, model, inputs,
    outputs)], the bases for mutations, and the keys covered. A node test
    already inside the range counts as it is (it runs in onnx_node) and is
    not written again."""
    kept, bases, covered = [], [], set()
    hi = until if until is not None else 10**9
    for c in cases:
        if since <= own_opset(c.model) <= hi and not c.handmade:
            covered |= dom.node_keys(op_node(c.model, op), schema) | {("", "version")}
            bases.append((c.name, c.model, c.inputs, None))
    spare = []   # converted but not kept: bases for mutations all the same
    for c in cases:
        if since <= own_opset(c.model) <= hi and not c.handmade:
            continue
        conv = converted(c, since)
        if not conv:
            continue
        m, ins = conv
        keys = dom.node_keys(op_node(m, op), schema) | {("", "version")}
        if not allowed(op, schema, since, keys):
            continue
        name = c.name if own_opset(c.model) == since else "%s_v%d" % (c.name, since)
        if keys <= covered or len(kept) >= PER_VERSION_MAX:
            spare.append((name, m, ins, None))
            continue
        outs = expected(m, ins, report, name, blind=ref_blind(op, since, keys))
        if outs is None:
            continue
        kept.append((name, m, ins, outs))
        covered |= keys
    return kept, kept + bases + spare, covered


# Values to try first where the generic guesses would be wrong yet
# accepted by the oracles (they ignore some attributes).
SET_VALUES = {
    ("Attention", "softmax_precision"): [1],
    ("BlackmanWindow", "output_datatype"): [11], ("HammingWindow", "output_datatype"): [11],
    ("HannWindow", "output_datatype"): [11], ("MelWeightMatrix", "output_datatype"): [11],
    ("GroupNormalization", "stash_type"): [1], ("LayerNormalization", "stash_type"): [1],
    ("RMSNormalization", "stash_type"): [1], ("Range", "stash_type"): [1],
}


def set_candidates(a, model, op):
    """Values to try for attribute schema a set explicitly: numbers
    around its default; lists of the lengths such lists usually have
    (spatial axes, twice that, every axis, one)."""
    if (op, a.name) in SET_VALUES:
        return SET_VALUES[(op, a.name)]
    T = onnx.defs.OpSchema.AttrType
    d = dom._default(a)
    x = next((vi for vi in model.graph.input), None)
    rank = len(x.type.tensor_type.shape.dim) if x is not None and x.type.HasField("tensor_type") else 4
    lengths = [max(rank - 2, 1), 2 * max(rank - 2, 1), rank, 1]
    if a.type == T.INT:
        return [v for v in ([d + 1, d] if isinstance(d, int) else []) + [2, 1, 0, -1]]
    if a.type == T.FLOAT:
        return [v for v in ([d * 0.5, d] if isinstance(d, float) else []) + [0.5, 2.0]]
    if a.type == T.INTS and a.name == "axes":   # distinct axes, the last L
        return [list(range(rank - L, rank)) for L in (1, 2, rank) if 0 < L <= rank]
    if a.type == T.INTS:
        return [[k] * L for L in lengths for k in (2, 1, 0)]
    if a.type == T.FLOATS:
        return [[k] * L for L in lengths for k in (0.5, 1.0)]
    return []


def window_exceeds(model, op):
    """Whether the node's kernel is larger than its input's spatial size:
    under auto_pad VALID the spec then gives no output size (runtimes
    still return one, from integer division)."""
    n = op_node(model, op)
    ks = next((list(a.ints) for a in n.attribute if a.name == "kernel_shape"), None)
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim][2:]
    return ks is not None and any(k > d > 0 for k, d in zip(ks, dims))


def mutate(op, schema, attr, key, bases, report):
    """One case with attr at value key (or, for "set", at a value the
    checker and the oracles accept), set on the first base that takes it."""
    a = schema.attributes[attr]
    for base_name, base, ins, _ in bases:
        if key == "VALID" and window_exceeds(base, op):
            continue
        values = set_candidates(a, base, op) if key == "set" else [key if isinstance(key, str) else int(key)]
        for value in values:
            m = set_attr(base, op, attr, value)
            if not checked(m):
                continue
            tag = "set" if key == "set" else str(value).lower()
            name = "%s_%s_%s" % (base_name, attr, tag)
            blind = ref_blind(op, own_opset(m), dom.node_keys(op_node(m, op), schema))
            outs = expected(m, ins, report, name, need_ort=key == "set", blind=blind)
            if outs is not None:
                return name, m, ins, outs
    return None


def gen_version(op, since, until, schema, cases, report):
    """The cases to write for op's version [since, until]: the converted
    ones, then one per attribute value still uncovered, set on a base
    case that the checker and the oracles accept it on."""
    kept, bases, covered = convert_all(op, since, until, schema, cases, report)
    for attr, key in sorted(required(op, schema, since) - covered, key=str):
        if (op, attr, key) in UNJUDGEABLE:
            continue
        got = mutate(op, schema, attr, key, bases, report)
        if got:
            kept.append(got)
            covered.add((attr, key))
    return kept


def declare_outputs(model, outputs):
    """The graph outputs declared with the shapes the oracle computed: a
    version or an attribute value may change them (keepdims, auto_pad), and
    what the source model declared would then be wrong."""
    m = copy.deepcopy(model)
    for vi, y in zip(m.graph.output, outputs):
        tt = vi.type.tensor_type
        tt.ClearField("shape")
        for d in np.asarray(y).shape:
            tt.shape.dim.add().dim_value = d
    return m


def output_proto(vi, y):
    """y as the TensorProto of output vi: element types numpy lacks
    (float8, 4-bit) come back from the runtimes as raw bits in an
    integer array and are written with the declared type."""
    declared = vi.type.tensor_type.elem_type
    t = numpy_helper.from_array(y, vi.name)
    if declared and t.data_type != declared and y.dtype.kind in "ui" and y.dtype.itemsize == 1:
        t = onnx.TensorProto(name=vi.name, data_type=declared, dims=y.shape, raw_data=y.tobytes())
    return t


def write_case(out_dir, name, model, inputs, outputs):
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(declare_outputs(model, outputs), os.path.join(d, "model.onnx"))
    for k, t in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
            f.write(t.SerializeToString())
    for k, (vi, y) in enumerate(zip(model.graph.output, outputs)):
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % k), "wb") as f:
            f.write(output_proto(vi, np.asarray(y)).SerializeToString())
    scale = max((float(np.max(np.abs(y))) for y in map(np.asarray, outputs)
                 if y.dtype.kind == "f" and y.size and np.isfinite(y).all()), default=0.0)
    if scale > 1:   # round-off near zero grows with the values around it (FFTs, big sums)
        with open(os.path.join(d, "data.json"), "w") as f:
            f.write('{"atol": %.3g}\n' % (1e-6 * scale))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "onnx_opsets"))
    ap.add_argument("--ops", default="", help="comma-separated operators (default: all)")
    ap.add_argument("--report", help="write what was dropped and why")
    a = ap.parse_args()
    if onnx.__version__ != "1.22.0":
        print("gen_opset_tests.py: onnx %s is not the pinned 1.22.0" % onnx.__version__, file=sys.stderr)
    ops = set(filter(None, a.ops.split(",")))
    if not ops and os.path.isdir(a.out):   # a full run replaces every case (other files stay)
        for name in os.listdir(a.out):
            if os.path.exists(os.path.join(a.out, name, "model.onnx")):
                shutil.rmtree(os.path.join(a.out, name))
    os.makedirs(a.out, exist_ok=True)
    sources = source_cases(ops)
    versions = dom.schema_versions()
    report, total = [], 0
    for op in sorted(sources):
        for since, until, schema in versions.get(op, []):
            for name, m, ins, outs in gen_version(op, since, until, schema, sources[op], report):
                d = os.path.join(a.out, name)
                if os.path.isdir(d):
                    shutil.rmtree(d)
                write_case(a.out, name, m, ins, outs)
                total += 1
    if a.report:
        with open(a.report, "w") as f:
            f.write("\n".join(report) + "\n")
    print("gen_opset_tests.py: %d cases in %s (%d notes)" % (total, a.out, len(report)))


if __name__ == "__main__":
    main()
