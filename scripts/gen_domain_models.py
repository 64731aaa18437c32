#!/usr/bin/env python3
"""gen_domain_models.py — test models for the operators of the non-default
ONNX domains (ai.onnx.ml, ai.onnx.preview, ai.onnx.preview.training) and
Swish, beyond what onnx's node tests cover:

  tests/onnx_domains/<case>/   backend-test cases (model.onnx and
      test_data_set_0/) that `tessera check` runs (ctest onnx_domains). The
      expected outputs come from onnxruntime where it runs the operator
      (Binarizer, ArrayFeatureExtractor, LabelEncoder, TreeEnsemble, Swish);
      onnxruntime has no Adagrad/Adam/Momentum or FlexAttention, so those
      cases use onnx's reference implementation (onnx.reference), the one
      that wrote the node tests. Each case's oracle is in ORACLE below.
  tests/onnx/domains/<name>.onnx   broken models (no checker) that
      tests/unit/test_onnx_domains.c loads: each must fail with a one-line
      message naming the node.

Inputs are numpy draws with fixed seeds, so re-running gives identical
files:

    .venv/bin/python scripts/gen_domain_models.py
"""
import json
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto as TP, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "tests", "onnx_domains")
BROKEN = os.path.join(HERE, "..", "tests", "onnx", "domains")
F, D, I64, I32, H = TP.FLOAT, TP.DOUBLE, TP.INT64, TP.INT32, TP.FLOAT16
ML, TRAIN, PREVIEW = "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview"
ORACLE = {}


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, opsets, inits=(), name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          producer_name="tessera-tests")
    m.ir_version = 10
    return m


def run_ort(m, feeds):
    import onnxruntime as ort
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def run_reference(m, feeds):
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(m).run(None, feeds)


def write_case(name, m, feeds, oracle, tol=None, oracle_model=None, outs=None):
    """The case folder; outputs from `oracle` ("onnxruntime" or
    "onnx.reference") run on oracle_model (default m: the same model), or
    given (outs, oracle "the spec": worked out by hand from the schema's
    text where both implementations depart from it)."""
    onnx.checker.check_model(m, full_check=True)
    if outs is None:
        outs = (run_ort if oracle == "onnxruntime" else run_reference)(oracle_model or m, feeds)
    ORACLE[name] = oracle
    out = os.path.join(CASES, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "test_data_set_0"))
    onnx.save(m, os.path.join(out, "model.onnx"))
    if tol:
        with open(os.path.join(out, "data.json"), "w") as f:
            json.dump(tol, f)
    data = os.path.join(out, "test_data_set_0")
    for k, i in enumerate(m.graph.input):
        with open(os.path.join(data, "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(feeds[i.name]), i.name).SerializeToString())
    for k, (o, v) in enumerate(zip(m.graph.output, outs)):
        with open(os.path.join(data, "output_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(v), o.name).SerializeToString())


def save_broken(m, name):
    with open(os.path.join(BROKEN, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def ml_node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, domain=ML, name=op.lower() + "0", **attrs)


# ---- ai.onnx.ml: Binarizer, ArrayFeatureExtractor, LabelEncoder ------------------------------------

def ml_simple():
    r = np.random.default_rng(1)
    x = r.normal(size=(3, 4)).astype(np.float32)
    write_case("ml_binarizer_f32", model([ml_node("Binarizer", ["x"], ["y"], threshold=0.25)],
                                         [vi("x", F, [3, 4])], [vi("y", F, [3, 4])], [("", 21), (ML, 1)]),
               {"x": x}, "onnxruntime")
    # onnxruntime binarizes floats only
    write_case("ml_binarizer_i64", model([ml_node("Binarizer", ["x"], ["y"], threshold=1.5)],
                                         [vi("x", I64, [5])], [vi("y", I64, [5])], [("", 21), (ML, 1)]),
               {"x": np.array([-3, 1, 2, 7, 0], np.int64)}, "onnx.reference")
    x = r.normal(size=(5,)).astype(np.float32)
    write_case("ml_array_feature_extractor_1d",
               model([ml_node("ArrayFeatureExtractor", ["x", "i"], ["y"])], [vi("x", F, [5]), vi("i", I64, [3])],
                     [vi("y", F, [1, 3])], [("", 21), (ML, 1)]),
               {"x": x, "i": np.array([4, 0, 4], np.int64)}, "onnxruntime")
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    write_case("ml_array_feature_extractor_3d",
               model([ml_node("ArrayFeatureExtractor", ["x", "i"], ["y"])], [vi("x", I64, [2, 3, 4]),
                                                                              vi("i", I64, [1, 2])],
                     [vi("y", I64, [2, 3, 2])], [("", 21), (ML, 1)]),
               {"x": x, "i": np.array([[3, 1]], np.int64)}, "onnxruntime")
    enc = ml_node("LabelEncoder", ["x"], ["y"], keys_int64s=[3, 1, 7, -2], values_int64s=[30, 10, 70, -20],
                  default_int64=-7)
    write_case("ml_label_encoder_int", model([enc], [vi("x", I64, [2, 4])], [vi("y", I64, [2, 4])],
                                             [("", 21), (ML, 2)]),
               {"x": np.array([[3, 1, 7, 0], [-2, 5, 3, 7]], np.int64)}, "onnxruntime")
    enc = ml_node("LabelEncoder", ["x"], ["y"], keys_floats=[0.5, -1.0, 2.25], values_int64s=[1, 2, 3])
    write_case("ml_label_encoder_float_int", model([enc], [vi("x", F, [6])], [vi("y", I64, [6])],
                                                   [("", 21), (ML, 2)]),
               {"x": np.array([0.5, 2.25, 3.0, -1.0, 0.0, 0.5], np.float32)}, "onnxruntime")
    # Opset 4 tensors. The schema says a NaN key matches NaN inputs and the last of equal
    # keys wins; the reference matches no NaN, onnxruntime (no f64 -> i32 at opset 4) keeps
    # the first key: the expected values are the schema's.
    enc = ml_node("LabelEncoder", ["x"], ["y"],
                  keys_tensor=helper.make_tensor("k", D, [4], [1.5, np.nan, -3.0, 1.5]),
                  values_tensor=helper.make_tensor("v", I32, [4], [10, 20, 30, 40]),
                  default_tensor=helper.make_tensor("d", I32, [1], [-1]))
    write_case("ml_label_encoder_tensor_nan", model([enc], [vi("x", D, [5])], [vi("y", I32, [5])],
                                                    [("", 21), (ML, 4)]),
               {"x": np.array([1.5, np.nan, -3.0, 0.0, 2.0])}, "the spec",
               outs=[np.array([40, 20, 30, -1, -1], np.int32)])


def ml_in_function():
    """A model-local function whose body uses Binarizer: the function imports
    ai.onnx.ml, the model does not (the function's import applies)."""
    body = [helper.make_node("Binarizer", ["a"], ["b"], domain=ML, threshold=0.0),
            helper.make_node("Mul", ["a", "b"], ["c"])]
    fn = helper.make_function("local", "PositivePart", ["a"], ["c"], body,
                              [helper.make_opsetid("", 21), helper.make_opsetid(ML, 1)])
    g = helper.make_graph([helper.make_node("PositivePart", ["x"], ["y"], domain="local", name="pos0")], "g",
                          [vi("x", F, [2, 3])], [vi("y", F, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("local", 1)],
                          functions=[fn], producer_name="tessera-tests")
    m.ir_version = 10
    x = np.random.default_rng(6).normal(size=(2, 3)).astype(np.float32)
    write_case("ml_in_function", m, {"x": x}, "onnxruntime")


# ---- ai.onnx.ml: TreeEnsemble ----------------------------------------------------------------

def tree(x_type, n_features, nodes, leaves, roots, n_targets, **attrs):
    """A TreeEnsemble node from nodes = [(feature, mode, split, true, true_is_leaf, false,
    false_is_leaf)] and leaves = [(target, weight)]."""
    wt = D if x_type == D else F
    kw = dict(
        nodes_featureids=[n[0] for n in nodes],
        nodes_modes=helper.make_tensor("modes", TP.UINT8, [len(nodes)], [n[1] for n in nodes]),
        nodes_splits=helper.make_tensor("splits", wt, [len(nodes)], [n[2] for n in nodes]),
        nodes_truenodeids=[n[3] for n in nodes], nodes_trueleafs=[n[4] for n in nodes],
        nodes_falsenodeids=[n[5] for n in nodes], nodes_falseleafs=[n[6] for n in nodes],
        leaf_targetids=[t for t, _ in leaves],
        leaf_weights=helper.make_tensor("weights", wt, [len(leaves)], [w for _, w in leaves]),
        tree_roots=roots, n_targets=n_targets)
    kw.update(attrs)
    return ml_node("TreeEnsemble", ["x"], ["y"], **kw)


# Two trees over 3 features, every comparison mode but membership, and three one-leaf
# trees, one per target, so that every target gets a leaf from every sample: a target
# no reached leaf feeds is where the reference (the dtype's extreme for MIN/MAX) and
# onnxruntime (0) part; ml_tree_min_unfed_target checks the reference's answer.
# tree 0: n0 x0 <= 0.5 ? n1 : n2;  n1 x1 < -0.2 ? L0 : L1;  n2 x2 >= 1 ? L2 : n3;  n3 x0 > 1.5 ? L3 : L4
# tree 1: n4 x1 == 0 ? L5 : n5;  n5 x2 != 0.25 ? L6 : L7
# trees 2-4: n6 -> L8, n7 -> L9, n8 -> L10
FOREST_NODES = [(0, 0, 0.5, 1, 0, 2, 0), (1, 1, -0.2, 0, 1, 1, 1), (2, 2, 1.0, 2, 1, 3, 0), (0, 3, 1.5, 3, 1, 4, 1),
                (1, 4, 0.0, 5, 1, 5, 0), (2, 5, 0.25, 6, 1, 7, 1),
                (0, 0, 0.0, 8, 1, 8, 1), (0, 0, 0.0, 9, 1, 9, 1), (0, 0, 0.0, 10, 1, 10, 1)]
FOREST_LEAVES = [(0, 1.0), (1, -2.0), (2, 0.5), (0, 3.0), (1, 1.5), (2, -1.0), (0, 0.25), (1, 4.0),
                 (0, 0.75), (1, -0.5), (2, 2.0)]
ALL_ROOTS = [0, 4, 6, 7, 8]


def forest_input(rng, n, dt):
    x = rng.normal(size=(n, 3)).astype(dt)
    x[0, 1], x[1, 2], x[2, 0] = 0.0, 0.25, np.nan   # equality hits and a missing value
    return x


def ml_tree():
    r = np.random.default_rng(2)
    ops = [("", 21), (ML, 5)]
    x = forest_input(r, 8, np.float32)
    cases = [("sum_missing", F, dict(aggregate_function=1, nodes_missing_value_tracks_true=[1, 0, 0, 0, 1, 0, 0, 0, 0])),
             ("average_softmax", F, dict(aggregate_function=0, post_transform=1)),
             ("min_logistic", F, dict(aggregate_function=2, post_transform=2)),
             ("max_softmax_zero", D, dict(aggregate_function=3, post_transform=3))]
    for tag, xt, attrs in cases:
        xx = x.astype(np.float64) if xt == D else x
        n = tree(xt, 3, FOREST_NODES, FOREST_LEAVES, ALL_ROOTS, 3, **attrs)
        m = model([n], [vi("x", xt, [8, 3])], [vi("y", xt, [8, 3])], ops)
        # onnxruntime's TreeEnsemble reads post_transform 1 as LOGISTIC and 2 as SOFTMAX,
        # the schema the other way round (1 SOFTMAX, 2 LOGISTIC): its oracle model swaps them
        swap = {1: 2, 2: 1}.get(attrs.get("post_transform", 0))
        oracle = None
        if swap:
            oracle = model([tree(xt, 3, FOREST_NODES, FOREST_LEAVES, ALL_ROOTS, 3, **dict(attrs, post_transform=swap))],
                           [vi("x", xt, [8, 3])], [vi("y", xt, [8, 3])], ops)
        write_case("ml_tree_" + tag, m, {"x": xx}, "onnxruntime", oracle_model=oracle)
    # MIN over 4 targets, one of which no leaf feeds, where onnxruntime answers 0: the
    # reference's f32 max, which tessera follows
    n = tree(F, 3, FOREST_NODES, FOREST_LEAVES, [0, 4], 4, aggregate_function=2)
    write_case("ml_tree_min_unfed_target", model([n], [vi("x", F, [8, 3])], [vi("y", F, [8, 4])], ops),
               {"x": x}, "onnx.reference")
    # set membership (two sets), a tree that is a single leaf, f64
    nodes = [(0, 6, 0.0, 1, 0, 0, 1), (1, 6, 0.0, 1, 1, 2, 1), (0, 0, 0.0, 3, 1, 3, 1)]
    leaves = [(0, 1.0), (0, 2.0), (1, 3.0), (1, -5.0)]
    members = helper.make_tensor("members", D, [6], [1.0, 2.0, np.nan, 3.0, 4.0, np.nan])
    n = tree(D, 2, nodes, leaves, [0, 2], 2, membership_values=members)
    xm = np.array([[1, 3], [2, 4], [1, 5], [7, 4], [7, 7], [2, 3]], np.float64)
    write_case("ml_tree_member_leaf_root", model([n], [vi("x", D, ["N", 2])], [vi("y", D, ["N", 2])], ops),
               {"x": xm}, "onnxruntime")


# ---- default domain: Swish ----------------------------------------------------------------------

def swish():
    x = np.random.default_rng(3).normal(size=(2, 3, 4)).astype(np.float32) * 4
    write_case("swish_alpha", model([helper.make_node("Swish", ["x"], ["y"], alpha=0.5)], [vi("x", F, [2, 3, 4])],
                                    [vi("y", F, [2, 3, 4])], [("", 24)]), {"x": x}, "onnxruntime")


# ---- ai.onnx.preview.training ----------------------------------------------------------------------

def train_node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, domain=TRAIN, name=op.lower() + "0", **attrs)


def training():
    r = np.random.default_rng(4)
    ops = [(TRAIN, 1)]
    scal = [vi("R", D, []), vi("T", I64, [])]

    def tensors(names, shapes, dt):
        return [vi(nm, dt, s) for nm, s in zip(names, shapes)]

    # Adam at T = 0 (no bias correction), f64, two tensors, post-update decay
    shapes = [[3], [2, 2]]
    ins = ["X1", "X2", "G1", "G2", "V1", "V2", "H1", "H2"]
    outs = ["X1n", "X2n", "V1n", "V2n", "H1n", "H2n"]
    n = train_node("Adam", ["R", "T"] + ins, outs, alpha=0.8, beta=0.9, epsilon=1e-4, norm_coefficient=0.01,
                   norm_coefficient_post=0.05)
    feeds = {"R": np.array(0.1), "T": np.array(0, np.int64)}
    for nm, s in zip(ins, shapes * 4):
        feeds[nm] = r.random(s) if nm[0] == "H" else r.normal(size=s)
    m = model([n], scal + tensors(ins, shapes * 4, D), tensors(outs, shapes * 3, D), ops)
    # the reference rounds the results of a several-tensor Adam to f32 whatever the
    # inputs: its oracle is one Adam node per tensor, which the schema says is the same
    per = [train_node("Adam", ["R", "T"] + ins[i::2], outs[i::2], alpha=0.8, beta=0.9, epsilon=1e-4,
                      norm_coefficient=0.01, norm_coefficient_post=0.05) for i in range(2)]
    per[1].name = "adam1"
    oracle = model(per, scal + tensors(ins, shapes * 4, D), tensors(outs, shapes * 3, D), ops)
    write_case("train_adam_t0_f64", m, feeds, "onnx.reference", oracle_model=oracle)
    # Adagrad with decay, three f32 tensors; R is f64 while the tensors are f32
    shapes = [[2], [3], [1, 2]]
    ins = ["X1", "X2", "X3", "G1", "G2", "G3", "H1", "H2", "H3"]
    outs = ["X1n", "X2n", "X3n", "H1n", "H2n", "H3n"]
    n = train_node("Adagrad", ["R", "T"] + ins, outs, decay_factor=0.5, epsilon=1e-3, norm_coefficient=0.1)
    feeds = {"R": np.array(0.3), "T": np.array(3, np.int64)}
    for nm, s in zip(ins, shapes * 3):
        feeds[nm] = (r.random(s) if nm[0] == "H" else r.normal(size=s)).astype(np.float32)
    m = model([n], scal + tensors(ins, shapes * 3, F), tensors(outs, shapes * 2, F), ops)
    write_case("train_adagrad_decay", m, feeds, "onnx.reference")
    # Nesterov momentum at T = 0 (beta counts as 1), two f64 tensors
    shapes = [[4], [2, 3]]
    ins = ["X1", "X2", "G1", "G2", "V1", "V2"]
    outs = ["X1n", "X2n", "V1n", "V2n"]
    n = train_node("Momentum", ["R", "T"] + ins, outs, alpha=0.7, beta=0.3, mode="nesterov", norm_coefficient=0.02)
    feeds = {"R": np.array(0.05), "T": np.array(0, np.int64)}
    for nm, s in zip(ins, shapes * 3):
        feeds[nm] = r.normal(size=s)
    m = model([n], scal + tensors(ins, shapes * 3, D), tensors(outs, shapes * 2, D), ops)
    write_case("train_momentum_nesterov_t0", m, feeds, "onnx.reference")


# ---- ai.onnx.preview: FlexAttention ------------------------------------------------------------------

def flex_node(**attrs):
    return helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain=PREVIEW, name="flex0", **attrs)


def flexattention():
    r = np.random.default_rng(5)
    ops = [("", 26), (PREVIEW, 1)]
    # GQA (4 query heads over 2 kv heads), softmax in f64 for f32 inputs, a prob_mod
    q, k, v = (r.normal(size=s).astype(np.float32) for s in [(2, 4, 3, 8), (2, 2, 5, 8), (2, 2, 5, 6)])
    pm = helper.make_graph([helper.make_node("Sqrt", ["p"], ["p_out"])], "prob_sqrt",
                           [vi("p", D, ["B", "H", "L", "S"])], [vi("p_out", D, ["B", "H", "L", "S"])])
    n = flex_node(softmax_precision=TP.DOUBLE, prob_mod=pm, scale=0.3)
    m = model([n], [vi("Q", F, [2, 4, 3, 8]), vi("K", F, [2, 2, 5, 8]), vi("V", F, [2, 2, 5, 6])],
              [vi("Y", F, [2, 4, 3, 6])], ops)
    write_case("flex_gqa_f64_softmax_prob_mod", m, {"Q": q, "K": k, "V": v}, "onnx.reference")
    # A symbolic batch, and a score_mod that reads a graph input from the outer scope (a
    # capture). The reference evaluator cannot resolve outer names inside FlexAttention's
    # graphs, so its oracle is the same model with the bias baked into the graph.
    q, k, v = (r.normal(size=s).astype(np.float32) for s in [(3, 2, 4, 8), (3, 2, 6, 8), (3, 2, 6, 8)])
    bias = r.normal(size=(4, 6)).astype(np.float32)

    def bias_model(inner_bias):
        inits = [numpy_helper.from_array(bias, "bias")] if inner_bias else []
        sm = helper.make_graph([helper.make_node("Add", ["s", "bias"], ["s_out"])], "score_bias",
                               [vi("s", F, ["B", "H", "L", "S"])], [vi("s_out", F, ["B", "H", "L", "S"])],
                               initializer=inits)
        ins = [vi("Q", F, ["N", 2, 4, 8]), vi("K", F, ["N", 2, 6, 8]), vi("V", F, ["N", 2, 6, 8])]
        return model([flex_node(score_mod=sm)], ins + ([] if inner_bias else [vi("bias", F, [4, 6])]),
                     [vi("Y", F, ["N", 2, 4, 8])], ops)

    write_case("flex_capture_symbolic_batch", bias_model(False), {"Q": q, "K": k, "V": v, "bias": bias},
               "onnx.reference", oracle_model=bias_model(True))


# ---- broken models ------------------------------------------------------------------------------------

def broken():
    os.makedirs(BROKEN, exist_ok=True)
    f2 = [vi("x", F, [2])]
    scal = [vi("R", F, []), vi("T", I64, [])]
    tr = [(TRAIN, 1)]
    xg = [vi("X", F, [2]), vi("G", F, [2]), vi("V", F, [2]), vi("H", F, [2])]
    outs2 = [vi("Xn", F, [2]), vi("Vn", F, [2])]
    save_broken(model([train_node("Adam", ["R", "T", "X", "G", "V"], ["Xn", "Vn"])], scal + xg[:3], outs2, tr),
                "adam_arity")
    save_broken(model([train_node("Adam", ["R", "T", "X", "G", "V", "H"], ["Xn", "Vn"])], scal + xg, outs2, tr),
                "adam_outputs")
    save_broken(model([train_node("Adam", ["R", "T", "X", "G", "V", "H"], ["Xn", "Vn", "Hn"])],
                      scal + xg[:1] + [vi("G", D, [2])] + xg[2:], outs2 + [vi("Hn", F, [2])], tr), "adam_dtype")
    mom = dict(alpha=0.9, beta=0.1, norm_coefficient=0.0)
    save_broken(model([train_node("Momentum", ["R", "T", "X", "G", "V"], ["Xn", "Vn"], **mom)], scal + xg[:3],
                      outs2, tr), "momentum_no_mode")
    save_broken(model([train_node("Momentum", ["R", "T", "X", "G", "V"], ["Xn", "Vn"], mode="heavy", **mom)],
                      scal + xg[:3], outs2, tr), "momentum_bad_mode")
    save_broken(model([train_node("Adagrad", ["R", "T", "X", "G", "H"], ["Xn", "Hn"])],
                      [vi("R", F, [2]), vi("T", I64, [])] + xg[:2] + xg[3:], outs2, tr), "adagrad_r_vector")
    save_broken(model([train_node("Adagrad", ["R", "T", "X", "G", "H"], ["Xn", "Hn"])],
                      [vi("R", F, []), vi("T", F, [])] + xg[:2] + xg[3:], outs2, tr), "adagrad_t_float")
    save_broken(model([train_node("Gradient", ["x"], ["dx"], xs=["x"], y="q")], f2, [vi("dx", F, [2])], tr),
                "gradient_unknown_y")
    save_broken(model([train_node("Gradient", ["x", "x"], ["dx"], xs=["x"], y="x")], f2, [vi("dx", F, [2])], tr),
                "gradient_arity")
    ml = [("", 21), (ML, 5)]
    save_broken(model([ml_node("Binarizer", ["x"], ["y"])], [vi("x", TP.BOOL, [2])], [vi("y", TP.BOOL, [2])], ml),
                "binarizer_bool")
    save_broken(model([ml_node("ArrayFeatureExtractor", ["x", "i"], ["y"])], f2 + [vi("i", F, [1])],
                      [vi("y", F, [1, 1])], ml), "afe_float_index")
    li = [vi("x", I64, [2])], [vi("y", I64, [2])]
    save_broken(model([ml_node("LabelEncoder", ["x"], ["y"], keys_strings=["a"], values_int64s=[1])], *li, ml),
                "label_encoder_strings")
    save_broken(model([ml_node("LabelEncoder", ["x"], ["y"], keys_int64s=[1, 2, 3], values_int64s=[1, 2])], *li, ml),
                "label_encoder_lengths")
    save_broken(model([ml_node("LabelEncoder", ["x"], ["y"], keys_int64s=[1], keys_floats=[1.0],
                               values_int64s=[1])], *li, ml), "label_encoder_two_keys")
    save_broken(model([ml_node("LabelEncoder", ["x"], ["y"], keys_floats=[1.0], values_int64s=[1])], *li, ml),
                "label_encoder_key_dtype")
    one = [(0, 0, 0.5, 0, 1, 1, 1)]
    leaves = [(0, 1.0), (0, 2.0)]
    xt, yt = [vi("x", F, [3, 2])], [vi("y", F, [3, 1])]
    n = tree(F, 2, one, leaves, [0], 1)
    del n.attribute[[a.name for a in n.attribute].index("tree_roots")]
    save_broken(model([n], xt, yt, ml), "tree_no_roots")
    save_broken(model([tree(F, 2, [(0, 0, 0.5, 1, 0, 0, 1), (1, 0, 0.5, 0, 0, 1, 1)], leaves, [0], 1)], xt, yt, ml),
                "tree_cycle")
    save_broken(model([tree(F, 2, one, [(5, 1.0), (0, 2.0)], [0], 2)], xt, [vi("y", F, [3, 2])], ml),
                "tree_bad_target")
    save_broken(model([tree(F, 2, one, leaves, [0], 1)], [vi("x", F, [3, 2, 1])], yt, ml), "tree_rank3")
    save_broken(model([tree(F, 2, one, leaves, [0], 1, post_transform=4)], xt, yt, ml), "tree_probit")
    save_broken(model([tree(F, 2, [(9, 0, 0.5, 0, 1, 1, 1)], leaves, [0], 1)], xt, yt, ml), "tree_feature")
    save_broken(model([tree(F, 2, [(0, 6, 0.5, 0, 1, 1, 1)], leaves, [0], 1,
                            membership_values=helper.make_tensor("mv", F, [2], [1.0, 2.0]))], xt, yt, ml),
                "tree_members")
    save_broken(model([tree(F, 2, one, leaves, [0], 1)], xt, yt, [("", 21), (ML, 3)]), "tree_old_opset")
    save_broken(model([tree(F, 2, one, leaves, [0], 1)], xt, yt, [("", 21)]), "tree_not_imported")
    pv = [("", 26), (PREVIEW, 1)]
    q4 = [vi("Q", F, [1, 2, 3, 4]), vi("K", F, [1, 2, 3, 4]), vi("V", F, [1, 2, 3, 4])]
    y4 = [vi("Y", F, [1, 2, 3, 4])]
    save_broken(model([flex_node()], [vi("Q", F, [2, 3, 4])] + q4[1:], y4, pv), "flex_rank3")
    save_broken(model([flex_node()], [vi("Q", F, [1, 3, 3, 4])] + q4[1:], y4, pv), "flex_heads")
    red = helper.make_graph([helper.make_node("ReduceSum", ["s"], ["s_out"], keepdims=0)], "reduce",
                            [vi("s", F, None)], [vi("s_out", F, None)])
    save_broken(model([flex_node(score_mod=red)], q4, y4, pv), "flex_score_mod_shape")
    two = helper.make_graph([helper.make_node("Add", ["s", "t"], ["s_out"])], "two",
                            [vi("s", F, None), vi("t", F, None)], [vi("s_out", F, None)])
    save_broken(model([flex_node(prob_mod=two)], q4, y4, pv), "flex_prob_mod_inputs")
    save_broken(model([helper.make_node("Swish", ["x"], ["y"], name="swish0")], [vi("x", I32, [2])],
                      [vi("y", I32, [2])], [("", 24)]), "swish_int")


def main():
    shutil.rmtree(CASES, ignore_errors=True)
    shutil.rmtree(BROKEN, ignore_errors=True)
    os.makedirs(CASES)
    for make in (ml_simple, ml_in_function, ml_tree, swish, training, flexattention):
        make()
    broken()
    for name in sorted(ORACLE):
        print("wrote tests/onnx_domains/%s (expected values: %s)" % (name, ORACLE[name]))
    print("wrote %d broken models in tests/onnx/domains" % len(os.listdir(BROKEN)))


if __name__ == "__main__":
    main()
