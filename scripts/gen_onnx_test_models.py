#!/usr/bin/env python3
"""gen_onnx_test_models.py — the small ONNX models tests/unit/test_onnx_load.c
(and, for sequences and optionals, test_onnx_seq.c) loads, written with the
onnx helper API into tests/onnx/ (committed; each is a few hundred bytes).
Run from the repository root:

    .venv/bin/python scripts/gen_onnx_test_models.py [outdir]

Some models are broken on purpose (an external-data path that escapes the
folder, an unknown operator, a sequence input...): the loader must refuse
each with a clear error, so they are written without the ONNX checker.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "onnx")
OPSET = 17
F32 = TensorProto.FLOAT


def model(nodes, inputs, outputs, inits=(), name="g", opset=OPSET, functions=(), extra_opsets=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, functions=list(functions), producer_name="tessera-tests")
    m.ir_version = 8
    return m


def save(m, name):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(m.SerializeToString())


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


W23 = np.array([[1, 2, 3], [4, 5, 6]], np.float32)


def add_models():
    x, y = vi("x", F32, [2, 3]), vi("y", F32, [2, 3])
    add = helper.make_node("Add", ["x", "W"], ["y"], name="add0")
    save(model([add], [x], [y], [numpy_helper.from_array(W23, "W")], name="add_raw"), "add_raw.onnx")
    w = helper.make_tensor("W", F32, [2, 3], W23.flatten().tolist())  # float_data
    save(model([add], [x], [y], [w], name="add_float_data"), "add_float_data.onnx")
    # IR 3 style: the initializer is also listed as an input
    save(model([add], [x, vi("W", F32, [2, 3])], [y], [numpy_helper.from_array(W23, "W")]), "add_ir3.onnx")


def typed_inits():
    """Initializers of every dtype, in raw_data and in the typed fields, as
    graph outputs (no operator needed)."""
    half = np.array([1.5, -2.0, 65504.0], np.float16)
    bf_bits = [0x3FC0, 0xC000, 0x4120]  # 1.5, -2, 10
    inits = [
        numpy_helper.from_array(half, "f16_raw"),
        # the helper stores these in int32_data, as bit patterns
        helper.make_tensor("f16_i32", TensorProto.FLOAT16, [3], half.tolist()),
        helper.make_tensor("bf16_i32", TensorProto.BFLOAT16, [3], [1.5, -2.0, 10.0]),
        helper.make_tensor("bf16_raw", TensorProto.BFLOAT16, [3],
                           np.array(bf_bits, np.uint16).tobytes(), raw=True),
        helper.make_tensor("i8", TensorProto.INT8, [3], [-128, 0, 127]),
        helper.make_tensor("u8", TensorProto.UINT8, [3], [0, 1, 255]),
        helper.make_tensor("i16", TensorProto.INT16, [3], [-32768, 5, 32767]),
        helper.make_tensor("u16", TensorProto.UINT16, [3], [0, 7, 65535]),
        helper.make_tensor("i32", TensorProto.INT32, [3], [-(2 ** 31), 9, 2 ** 31 - 1]),
        helper.make_tensor("i64", TensorProto.INT64, [3], [-(2 ** 63), 11, 2 ** 63 - 1]),
        helper.make_tensor("u32", TensorProto.UINT32, [3], [0, 13, 2 ** 32 - 1]),
        helper.make_tensor("u64", TensorProto.UINT64, [3], [0, 15, 2 ** 64 - 1]),
        helper.make_tensor("f64", TensorProto.DOUBLE, [3], [0.25, -1e300, 3.0]),
        helper.make_tensor("b", TensorProto.BOOL, [3], [True, False, True]),
        numpy_helper.from_array(np.array([True, False, True]), "b_raw"),
        numpy_helper.from_array(np.arange(6, dtype=np.int64).reshape(2, 3), "i64_raw"),
        numpy_helper.from_array(np.array(2.5, np.float64), "f64_scalar_raw"),
    ]
    outs = [vi(t.name, t.data_type, list(t.dims)) for t in inits]
    save(model([], [], outs, inits, name="typed_inits"), "typed_inits.onnx")


def external():
    data = np.arange(6, dtype=np.float32).reshape(2, 3) + 0.5
    os.makedirs(os.path.join(OUT, "sub"), exist_ok=True)
    with open(os.path.join(OUT, "sub", "README"), "w") as f:
        f.write("external_dots.onnx reaches external.bin through sub/..\n")
    pad = b"HEADER--"  # the tensor sits at offset 8
    with open(os.path.join(OUT, "external.bin"), "wb") as f:
        f.write(pad + data.tobytes() + b"tail")

    def ext_model(location, offset=8, length=24):
        t = TensorProto()
        t.name, t.data_type = "W", F32
        t.dims.extend([2, 3])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        return model([], [], [vi("W", F32, [2, 3])], [t], name="external")

    save(ext_model("external.bin"), "external.onnx")
    save(ext_model("./sub/../external.bin"), "external_dots.onnx")  # sub/ exists
    save(ext_model("../external.bin"), "external_escape.onnx")
    save(ext_model("/etc/passwd"), "external_abs.onnx")
    save(ext_model("missing.bin"), "external_missing.onnx")
    save(ext_model("external.bin", offset=8, length=1000), "external_short.onnx")


def bad_models():
    x, y = vi("x", F32, [2]), vi("y", F32, [2])
    save(model([helper.make_node("FooBar", ["x"], ["y"], name="n3")], [x], [y]), "missing_op.onnx")
    save(model([helper.make_node("Gelu", ["x"], ["y"], name="g1", domain="com.microsoft")], [x], [y],
               extra_opsets=[("com.microsoft", 1)]), "domain_op.onnx")
    save(model([helper.make_node("Add", ["x", "nowhere"], ["y"], name="a1")], [x], [y]), "undefined_input.onnx")
    seq = helper.make_tensor_sequence_value_info("s", F32, [2])
    save(model([], [seq], [y]), "sequence_input.onnx")
    s = helper.make_tensor("s", TensorProto.STRING, [1], [b"hi"])
    save(model([], [], [vi("s", TensorProto.STRING, [1])], [s]), "string_init.onnx")
    w = numpy_helper.from_array(np.zeros((2, 4), np.float32), "W")
    save(model([], [], [vi("W", F32, [2, 3])], [w], name="mismatch"), "output_mismatch.onnx")
    bad = helper.make_tensor("W", F32, [2], [1.0, 2.0])
    bad.dims[:] = [2, 3]  # 2 values for 6
    save(model([], [], [vi("W", F32, [2, 3])], [bad]), "short_init.onnx")
    # a sparse initializer that is also an input: the signature marks it, the load refuses it
    sv = numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "S")
    si = numpy_helper.from_array(np.array([0, 4], np.int64), "S_idx")
    m = model([helper.make_node("Identity", ["S"], ["y"])], [vi("S", F32, [2, 3])], [vi("y", F32, [2, 3])])
    m.graph.sparse_initializer.append(helper.make_sparse_tensor(sv, si, [2, 3]))
    save(m, "sparse_init.onnx")


def constants():
    nodes = [
        helper.make_node("Constant", [], ["a"], value_ints=[3, 1, 4]),
        helper.make_node("Constant", [], ["b"], value_float=2.5),
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(W23)),
        helper.make_node("Constant", [], ["d"], value_int=-7),
        helper.make_node("Constant", [], ["e"], value_floats=[0.5, 1.5]),
    ]
    outs = [vi("a", TensorProto.INT64, [3]), vi("b", F32, []), vi("c", F32, [2, 3]),
            vi("d", TensorProto.INT64, []), vi("e", F32, [2])]
    save(model(nodes, [], outs, name="constants"), "constants.onnx")
    save(model([helper.make_node("Constant", [], ["s"], value_string="hi")], [],
               [vi("s", TensorProto.STRING, [])]), "constant_string.onnx")


def dim_param():
    x = vi("x", F32, ["batch size", 3])
    y = vi("y", F32, ["batch size", 3])
    w = numpy_helper.from_array(np.array([1, 2, 3], np.float32), "w")
    save(model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [y], [w], name="dim_param"), "dim_param.onnx")


def if_models():
    x = vi("x", F32, [3])
    then_g = helper.make_graph([helper.make_node("Add", ["x", "one"], ["t"])], "then", [], [vi("t", F32, [3])],
                               initializer=[numpy_helper.from_array(np.array(1, np.float32), "one")])
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["e"])], "else", [], [vi("e", F32, [3])])
    two = numpy_helper.from_array(np.array(2, np.float32), "two")
    node = helper.make_node("If", ["c"], ["y"], name="if0", then_branch=then_g, else_branch=else_g)
    save(model([node], [vi("c", TensorProto.BOOL, []), x], [vi("y", F32, [3])], [two], name="if"), "if.onnx")
    cst = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array([False])))
    save(model([cst, node], [x], [vi("y", F32, [3])], [two], name="if_const"), "if_const.onnx")


def loop_models():
    # y = x + 1, M times (M an input); also the count of iterations run
    body = helper.make_graph(
        [helper.make_node("Add", ["xi", "one"], ["xo"]),
         helper.make_node("Identity", ["ci"], ["co"])],
        "body", [vi("i", TensorProto.INT64, []), vi("ci", TensorProto.BOOL, []), vi("xi", F32, [2])],
        [vi("co", TensorProto.BOOL, []), vi("xo", F32, [2])])
    one = numpy_helper.from_array(np.array(1, np.float32), "one")
    node = helper.make_node("Loop", ["M", "", "x"], ["y"], name="loop0", body=body)
    save(model([node], [vi("M", TensorProto.INT64, []), vi("x", F32, [2])], [vi("y", F32, [2])], [one],
               name="loop"), "loop.onnx")
    # scan output: every iteration's x, M = 3 a constant
    body2 = helper.make_graph(
        [helper.make_node("Add", ["xi", "one"], ["xo"]),
         helper.make_node("Identity", ["ci"], ["co"]),
         helper.make_node("Identity", ["xo"], ["so"])],
        "body", [vi("i", TensorProto.INT64, []), vi("ci", TensorProto.BOOL, []), vi("xi", F32, [2])],
        [vi("co", TensorProto.BOOL, []), vi("xo", F32, [2]), vi("so", F32, [2])])
    m3 = numpy_helper.from_array(np.array(3, np.int64), "M")
    cnd = numpy_helper.from_array(np.array(True), "cond")
    node2 = helper.make_node("Loop", ["M", "cond", "x"], ["y", "ys"], name="loop1", body=body2)
    save(model([node2], [vi("x", F32, [2])], [vi("y", F32, [2]), vi("ys", F32, [3, 2])], [one, m3, cnd],
               name="loop_scan"), "loop_scan.onnx")
    # the same with M a graph input: it loads only when M's value is known
    save(model([node2], [vi("M", TensorProto.INT64, []), vi("x", F32, [2])],
               [vi("y", F32, [2]), vi("ys", F32, ["n", 2])], [one, cnd], name="loop_scan_m"), "loop_scan_m.onnx")
    # ... and with M computed from the input (M = K + 1): still constant when K is known
    inc = helper.make_node("Add", ["K", "one_i"], ["M"])
    save(model([inc, node2], [vi("K", TensorProto.INT64, []), vi("x", F32, [2])],
               [vi("y", F32, [2]), vi("ys", F32, ["n", 2])],
               [one, cnd, numpy_helper.from_array(np.array(1, np.int64), "one_i")], name="loop_scan_k"),
         "loop_scan_k.onnx")


def scan_model():
    # running sum over the rows of x [3, 2]; outputs the final sum and every partial sum
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "row"], ["s2"]), helper.make_node("Identity", ["s2"], ["out"])],
        "body", [vi("s", F32, [2]), vi("row", F32, [2])], [vi("s2", F32, [2]), vi("out", F32, [2])])
    node = helper.make_node("Scan", ["init", "x"], ["final", "partials"], name="scan0", body=body,
                            num_scan_inputs=1)
    save(model([node], [vi("init", F32, [2]), vi("x", F32, [3, 2])],
               [vi("final", F32, [2]), vi("partials", F32, [3, 2])], name="scan"), "scan.onnx")


def function_model():
    # local.AddScale(a, b) = (a + b) * alpha, alpha an attribute of the call
    alpha = onnx.AttributeProto()
    alpha.name, alpha.ref_attr_name, alpha.type = "value_float", "alpha", onnx.AttributeProto.FLOAT
    cnode = helper.make_node("Constant", [], ["k"])
    cnode.attribute.append(alpha)
    f = helper.make_function("local", "AddScale", ["a", "b"], ["out"],
                             [helper.make_node("Add", ["a", "b"], ["t"]), cnode,
                              helper.make_node("Mul", ["t", "k"], ["out"])],
                             [helper.make_opsetid("", OPSET)], attributes=["alpha"])
    call = helper.make_node("AddScale", ["x", "W"], ["y"], name="call0", domain="local", alpha=3.0)
    save(model([call], [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])], [numpy_helper.from_array(W23, "W")],
               functions=[f], extra_opsets=[("local", 1)], name="function"), "function.onnx")


# ---- sequences and optionals (tests/unit/test_onnx_seq.c) -----------------------------------

def seqvi(name, elem, shape):
    return helper.make_tensor_sequence_value_info(name, elem, shape)


def optvi(name, elem, shape):
    return helper.make_value_info(name, helper.make_optional_type_proto(helper.make_tensor_type_proto(elem, shape)))


def i64(name, v):
    return numpy_helper.from_array(np.array(v, np.int64), name)


def seq_ops():
    """Every sequence operator on two [2, 3] inputs, with sequence outputs."""
    n = helper.make_node
    nodes = [
        n("SequenceConstruct", ["X", "Y"], ["s1"]),
        n("SequenceInsert", ["s1", "X", "zero"], ["s2"]),      # [X, X, Y]
        n("SequenceErase", ["s2", "one"], ["s3"]),             # [X, Y]
        n("SequenceLength", ["s3"], ["len"]),
        n("SequenceAt", ["s3", "minus1"], ["last"]),           # Y
        n("ConcatFromSequence", ["s3"], ["cat"], axis=1),      # [2, 6]
        n("ConcatFromSequence", ["s3"], ["stack"], axis=0, new_axis=1),   # [2, 2, 3]
        n("SplitToSequence", ["cat", "sizes"], ["parts"], axis=1),       # [2, 2], [2, 4]
        n("SplitToSequence", ["X"], ["rows"], axis=0, keepdims=0),       # [3], [3]
        n("SequenceEmpty", [], ["empty"], dtype=TensorProto.INT64),
    ]
    outs = [vi("len", TensorProto.INT64, []), vi("last", F32, [2, 3]), vi("cat", F32, [2, 6]),
            vi("stack", F32, [2, 2, 3]), seqvi("parts", F32, [2, None]), seqvi("rows", F32, [3]),
            seqvi("empty", TensorProto.INT64, None)]
    inits = [i64("zero", 0), i64("one", 1), i64("minus1", -1), i64("sizes", [2, 4])]
    save(model(nodes, [vi("X", F32, [2, 3]), vi("Y", F32, [2, 3])], outs, inits, name="seq_ops"), "seq_ops.onnx")


def seq_map():
    """A sequence input mapped with a tensor input; Optional on a tensor."""
    body = helper.make_graph(
        [helper.make_node("Add", ["x", "bb"], ["t"]), helper.make_node("Mul", ["t", "two"], ["y"]),
         helper.make_node("Shape", ["x"], ["l"])],
        "body", [vi("x", F32, ["N"]), vi("bb", F32, ["N"])], [vi("y", F32, ["N"]), vi("l", TensorProto.INT64, [1])],
        initializer=[numpy_helper.from_array(np.array(2, np.float32), "two")])
    nodes = [helper.make_node("SequenceMap", ["xs", "b"], ["ys", "ls"], body=body),
             helper.make_node("Optional", ["b"], ["ob"]),
             helper.make_node("OptionalHasElement", ["ob"], ["has"]),
             helper.make_node("OptionalGetElement", ["ob"], ["got"])]
    save(model(nodes, [seqvi("xs", F32, ["N"]), vi("b", F32, ["N"])],
               [seqvi("ys", F32, ["N"]), seqvi("ls", TensorProto.INT64, [1]), vi("has", TensorProto.BOOL, []),
                vi("got", F32, ["N"])], name="seq_map"), "seq_map.onnx")


def opt_input():
    """An optional input: its presence decides an If at build time."""
    then_g = helper.make_graph([helper.make_node("OptionalGetElement", ["o"], ["v"]),
                                helper.make_node("Add", ["v", "onef"], ["t"])], "then", [], [vi("t", F32, [2])])
    else_g = helper.make_graph([helper.make_node("Identity", ["zeros"], ["e"])], "else", [], [vi("e", F32, [2])])
    nodes = [helper.make_node("OptionalHasElement", ["o"], ["has"]),
             helper.make_node("If", ["has"], ["y"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Identity", ["o"], ["o2"])]
    inits = [numpy_helper.from_array(np.array(1, np.float32), "onef"),
             numpy_helper.from_array(np.zeros(2, np.float32), "zeros")]
    save(model(nodes, [optvi("o", F32, [2])], [vi("has", TensorProto.BOOL, []), vi("y", F32, [2]),
                                             optvi("o2", F32, [2])], inits, opset=18, name="opt_input"),
         "opt_input.onnx")


def loop_seq():
    """A Loop growing a sequence (unrolled), with a scan output; and a
    tensor Loop whose body reads an outer sequence (unrolled too)."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=F32), helper.make_node("Mul", ["x", "fi"], ["xi"]),
         helper.make_node("SequenceInsert", ["si", "xi"], ["so"]), helper.make_node("Identity", ["ci"], ["co"]),
         helper.make_node("Identity", ["xi"], ["scan"])],
        "body", [vi("i", TensorProto.INT64, []), vi("ci", TensorProto.BOOL, []), seqvi("si", F32, [2])],
        [vi("co", TensorProto.BOOL, []), seqvi("so", F32, [2]), vi("scan", F32, [2])])
    body2 = helper.make_graph(
        [helper.make_node("SequenceAt", ["grown", "i"], ["e"]), helper.make_node("Add", ["acc", "e"], ["acc2"]),
         helper.make_node("Identity", ["ci"], ["co"])],
        "body2", [vi("i", TensorProto.INT64, []), vi("ci", TensorProto.BOOL, []), vi("acc", F32, [2])],
        [vi("co", TensorProto.BOOL, []), vi("acc2", F32, [2])])
    nodes = [helper.make_node("SequenceEmpty", [], ["s0"]),
             helper.make_node("Loop", ["M", "", "s0"], ["grown", "scans"], body=body),
             helper.make_node("ConcatFromSequence", ["grown"], ["flat"], axis=0),
             helper.make_node("SequenceLength", ["grown"], ["n"]),
             helper.make_node("Loop", ["n", "", "x"], ["total"], body=body2)]
    save(model(nodes, [vi("M", TensorProto.INT64, []), vi("x", F32, [2])],
               [vi("flat", F32, [None]), vi("scans", F32, [None, 2]), vi("total", F32, [2])], name="loop_seq"),
         "loop_seq.onnx")


def if_seq():
    """If with a condition known only at run time whose branches yield
    sequences of one form, one branch reading an outer sequence."""
    then_g = helper.make_graph([helper.make_node("Add", ["x", "onef"], ["a"]),
                                helper.make_node("SequenceAt", ["s", "one"], ["b"]),
                                helper.make_node("SequenceConstruct", ["a", "b"], ["t"])],
                               "then", [], [seqvi("t", F32, [2])])
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "twof"], ["a2"]),
                                helper.make_node("SequenceConstruct", ["a2", "x"], ["e"])],
                               "else", [], [seqvi("e", F32, [2])])
    nodes = [helper.make_node("Neg", ["x"], ["nx"]),
             helper.make_node("SequenceConstruct", ["x", "nx"], ["s"]),
             helper.make_node("If", ["c"], ["y"], name="if_seq", then_branch=then_g, else_branch=else_g)]
    inits = [numpy_helper.from_array(np.array(1, np.float32), "onef"),
             numpy_helper.from_array(np.array(2, np.float32), "twof"), i64("one", 1)]
    save(model(nodes, [vi("c", TensorProto.BOOL, []), vi("x", F32, [2])], [seqvi("y", F32, [2])], inits,
               name="if_seq"), "if_seq.onnx")


def scan8():
    """Scan opset 8: batch 2, a running sum over the reversed time axis."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "row"], ["s2"]), helper.make_node("Identity", ["s2"], ["out"])],
        "body", [vi("s", F32, [2]), vi("row", F32, [2])], [vi("s2", F32, [2]), vi("out", F32, [2])])
    node = helper.make_node("Scan", ["", "init", "x"], ["final", "partials"], name="scan8", body=body,
                            num_scan_inputs=1, directions=[1])
    ins = [vi("init", F32, [2, 2]), vi("x", F32, [2, 3, 2])]
    outs = [vi("final", F32, [2, 2]), vi("partials", F32, [2, 3, 2])]
    save(model([node], ins, outs, name="scan8", opset=8), "scan8.onnx")
    lens = helper.make_node("Scan", ["lens", "init", "x"], ["final", "partials"], name="scan8", body=body,
                            num_scan_inputs=1)
    save(model([lens], ins, outs, [numpy_helper.from_array(np.array([3, 2], np.int32), "lens")], name="scan8_lens",
               opset=8), "scan8_lens.onnx")


def seq_errors():
    """Models the loader must refuse with a clear message."""
    n, x = helper.make_node, vi("x", F32, [2])
    pair = n("SequenceConstruct", ["x", "x"], ["s"])
    save(model([pair, n("SequenceAt", ["s", "p"], ["y"], name="at")], [x, vi("p", TensorProto.INT64, [])],
               [vi("y", F32, [2])]), "seq_at_input.onnx")
    save(model([pair, n("Add", ["s", "x"], ["y"], name="add")], [x], [vi("y", F32, [2])]), "seq_to_add.onnx")
    then_g = helper.make_graph([n("SequenceConstruct", ["x"], ["t"])], "then", [], [seqvi("t", F32, [2])])
    else_g = helper.make_graph([n("SequenceConstruct", ["x", "x"], ["e"])], "else", [], [seqvi("e", F32, [2])])
    save(model([n("If", ["c"], ["y"], name="ifm", then_branch=then_g, else_branch=else_g)],
               [vi("c", TensorProto.BOOL, []), x], [seqvi("y", F32, [2])]), "if_seq_mismatch.onnx")
    tp = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F32, [2]))
    save(model([n("Optional", [], ["o"], type=tp), n("OptionalGetElement", ["o"], ["y"], name="get")], [],
               [seqvi("y", F32, [2])], opset=18), "opt_get_empty.onnx")
    body = helper.make_graph(
        [n("SequenceInsert", ["si", "x"], ["so"]), n("Identity", ["ci"], ["co"])],
        "body", [vi("i", TensorProto.INT64, []), vi("ci", TensorProto.BOOL, []), seqvi("si", F32, [2])],
        [vi("co", TensorProto.BOOL, []), seqvi("so", F32, [2])])
    save(model([n("SequenceEmpty", [], ["s0"]), n("Loop", ["M", "", "s0"], ["y"], name="grow", body=body)],
               [vi("M", TensorProto.INT64, []), x], [seqvi("y", F32, [2])]), "loop_seq_m.onnx")
    save(model([pair], [x], [vi("s", F32, [2])]), "seq_out_type.onnx")
    # nested loops that would unroll 4096 x 4096 times: refused, quickly
    inner = helper.make_graph(
        [n("SequenceInsert", ["si", "x"], ["so"]), n("Identity", ["ci"], ["co"])],
        "inner", [vi("j", TensorProto.INT64, []), vi("ci", TensorProto.BOOL, []), seqvi("si", F32, [2])],
        [vi("co", TensorProto.BOOL, []), seqvi("so", F32, [2])])
    outer = helper.make_graph(
        [n("SequenceEmpty", [], ["e"]), n("Loop", ["big", "", "e"], ["grown"], body=inner),
         n("SequenceAt", ["grown", "zero"], ["first"]), n("SequenceInsert", ["si", "first"], ["so"]),
         n("Identity", ["ci"], ["co"])],
        "outer", [vi("i", TensorProto.INT64, []), vi("ci", TensorProto.BOOL, []), seqvi("si", F32, [2])],
        [vi("co", TensorProto.BOOL, []), seqvi("so", F32, [2])])
    save(model([n("SequenceEmpty", [], ["s0"]), n("Loop", ["big", "", "s0"], ["y"], name="outer", body=outer)],
               [x], [seqvi("y", F32, [2])], [i64("big", 4096), i64("zero", 0)]), "loop_seq_nested.onnx")


def sequence_models():
    for gen in (seq_ops, seq_map, opt_input, loop_seq, if_seq, scan8, seq_errors):
        gen()


def main():
    os.makedirs(OUT, exist_ok=True)
    for gen in (add_models, typed_inits, external, bad_models, constants, dim_param, if_models, loop_models,
                scan_model, function_model, sequence_models):
        gen()


if __name__ == "__main__":
    main()
