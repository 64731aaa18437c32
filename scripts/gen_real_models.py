"""Write the suite of small "real" ONNX models: tests/onnx_models/<name>/.

Each folder is an ONNX backend-test case (model.onnx plus test_data_set_N/
{input_K.pb, output_K.pb}) whose expected outputs come from onnxruntime, so
`tessera check tests/onnx_models` compares tessera with the peer runtime.
Models are built with the onnx helper API (no framework needed), in the style
of scripts/gen_default_onnx.py:

  mobilenet_block  MobileNetV2 inverted residuals (1x1 expand + BN + Relu6 as
                   Clip(0, 6), 3x3 depthwise conv, 1x1 project, a residual Add
                   on the stride-1 block, a stride-2 block), GlobalAveragePool,
                   Flatten, Gemm; input [batch, 3, 32, 32], symbolic batch.
  encoder_dynseq   a transformer encoder layer over [batch, seq, 16] whose
                   head-split shape is computed in the graph the way exporters
                   do it (Shape -> Gather -> Unsqueeze -> Concat -> Reshape);
                   two data sets, seq = 5 and seq = 9.
  lstm             bidirectional LSTM (hidden 8) over [6, 2, 4], MatMul head.
  gru              bidirectional GRU (hidden 8, linear_before_reset=1), MatMul head.
  loop_if          a Loop with trip count M (an i64 scalar input) whose body
                   branches with If on the iteration's parity, accumulating a
                   tensor (final value and per-iteration scan output).
  seq_pool         a sequence input of feature maps [4, W] of different widths:
                   SequenceMap (mean over W, scale, Relu), ConcatFromSequence
                   with a new axis, a MatMul head, a Loop over the sequence
                   collecting per-frame maxima into a sequence, and
                   SplitToSequence; sequence outputs (SequenceProto data).

Weights and inputs are numpy draws with fixed seeds, so re-running the script
gives identical files:

    .venv/bin/python scripts/gen_real_models.py
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "tests", "onnx_models")
F = TensorProto.FLOAT
I64 = TensorProto.INT64


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.inits, self.nodes = [], []

    def w(self, name, *shape, scale=None):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        scale = scale if scale is not None else 1.0 / np.sqrt(fan_in)
        self.inits.append(numpy_helper.from_array(
            (self.rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op, ins, outs, **attrs):
        self.nodes.append(helper.make_node(op, ins, outs, name=outs[0] + "_node", **attrs))
        return outs[0]

    def model(self, name, inputs, outputs, opset=20):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="tessera")
        model.ir_version = 9
        onnx.checker.check_model(model, full_check=True)
        return model


# ---- mobilenet_block ---------------------------------------------------------------

def bn(b, x, c, tag):
    r = b.rng
    gamma = b.const(tag + ".gamma", (1 + 0.1 * r.standard_normal(c)).astype(np.float32))
    beta = b.const(tag + ".beta", (0.1 * r.standard_normal(c)).astype(np.float32))
    mean = b.const(tag + ".mean", (0.1 * r.standard_normal(c)).astype(np.float32))
    var = b.const(tag + ".var", (1 + 0.1 * r.random(c)).astype(np.float32))
    return b.node("BatchNormalization", [x, gamma, beta, mean, var], [tag + ".bn"], epsilon=1e-5)


def relu6(b, x, tag):
    return b.node("Clip", [x, "zero", "six"], [tag + ".relu6"])


def conv_bn(b, x, cin, cout, k, tag, stride=1, group=1, act=True):
    y = b.node("Conv", [x, b.w(tag + ".w", cout, cin // group, k, k)], [tag + ".conv"],
               kernel_shape=[k, k], pads=[k // 2] * 4, strides=[stride, stride], group=group)
    y = bn(b, y, cout, tag)
    return relu6(b, y, tag) if act else y


def inverted_residual(b, x, cin, cout, stride, expand, tag):
    c = cin * expand
    h = conv_bn(b, x, cin, c, 1, tag + ".expand")
    h = conv_bn(b, h, c, c, 3, tag + ".dw", stride=stride, group=c)
    h = conv_bn(b, h, c, cout, 1, tag + ".project", act=False)
    if stride == 1 and cin == cout:
        h = b.node("Add", [x, h], [tag + ".residual"])
    return h


def mobilenet_block():
    b = Builder(101)
    b.const("zero", np.array(0, np.float32))
    b.const("six", np.array(6, np.float32))
    h = conv_bn(b, "image", 3, 8, 3, "stem", stride=2)            # [b, 8, 16, 16]
    h = inverted_residual(b, h, 8, 8, 1, 4, "block1")              # residual
    h = inverted_residual(b, h, 8, 16, 2, 4, "block2")             # [b, 16, 8, 8]
    h = inverted_residual(b, h, 16, 16, 1, 4, "block3")            # residual
    h = b.node("GlobalAveragePool", [h], ["gap"])
    h = b.node("Flatten", [h], ["flat"], axis=1)
    b.node("Gemm", [h, b.w("head.w", 10, 16), b.w("head.b", 10, scale=0.1)], ["logits"], transB=1)
    model = b.model("mobilenet_block",
                    [helper.make_tensor_value_info("image", F, ["batch", 3, 32, 32])],
                    [helper.make_tensor_value_info("logits", F, ["batch", 10])])
    image = np.random.default_rng(7).standard_normal((2, 3, 32, 32)).astype(np.float32)
    return model, [{"image": image}]


# ---- encoder_dynseq ----------------------------------------------------------------

def encoder_dynseq():
    b = Builder(202)
    d, heads, hd, ff = 16, 2, 8, 32

    def linear(x, din, dout, tag):
        y = b.node("MatMul", [x, b.w(tag + ".w", din, dout)], [tag + ".mm"])
        return b.node("Add", [y, b.w(tag + ".b", dout, scale=0.1)], [tag + ".out"])

    def layer_norm(x, tag):
        r = b.rng
        g = b.const(tag + ".g", (1 + 0.1 * r.standard_normal(d)).astype(np.float32))
        be = b.const(tag + ".b", (0.1 * r.standard_normal(d)).astype(np.float32))
        return b.node("LayerNormalization", [x, g, be], [tag + ".out"], axis=-1, epsilon=1e-5)

    x = "x"
    # exporter-style dynamic shape: [batch, seq, heads, hd] from Shape(x)
    shp = b.node("Shape", [x], ["x.shape"])
    bdim = b.node("Gather", [shp, b.const("idx0", np.array(0, np.int64))], ["x.batch"], axis=0)
    sdim = b.node("Gather", [shp, b.const("idx1", np.array(1, np.int64))], ["x.seq"], axis=0)
    axes0 = b.const("axes0", np.array([0], np.int64))
    bdim = b.node("Unsqueeze", [bdim, axes0], ["x.batch1"])
    sdim = b.node("Unsqueeze", [sdim, axes0], ["x.seq1"])
    split = b.node("Concat", [bdim, sdim, b.const("heads_hd", np.array([heads, hd], np.int64))],
                   ["split.shape"], axis=0)
    merge = b.node("Concat", [bdim, sdim, b.const("dmodel", np.array([d], np.int64))],
                   ["merge.shape"], axis=0)

    q, k, v = (linear(x, d, d, "attn." + p) for p in "qkv")
    q, k, v = (b.node("Reshape", [t, split], [t + ".heads"]) for t in (q, k, v))
    q = b.node("Transpose", [q], ["attn.qt"], perm=[0, 2, 1, 3])
    k = b.node("Transpose", [k], ["attn.kt"], perm=[0, 2, 3, 1])
    v = b.node("Transpose", [v], ["attn.vt"], perm=[0, 2, 1, 3])
    s = b.node("MatMul", [q, k], ["attn.scores"])
    s = b.node("Div", [s, b.const("attn.sqrt_hd", np.array(np.sqrt(hd), np.float32))], ["attn.scaled"])
    p = b.node("Softmax", [s], ["attn.probs"], axis=-1)
    o = b.node("MatMul", [p, v], ["attn.ctx"])
    o = b.node("Transpose", [o], ["attn.ctxt"], perm=[0, 2, 1, 3])
    o = b.node("Reshape", [o, merge], ["attn.merged"])
    a = linear(o, d, d, "attn.o")
    h = layer_norm(b.node("Add", [x, a], ["res1"]), "ln1")
    m = b.node("Relu", [linear(h, d, ff, "mlp.up")], ["mlp.act"])
    b.node("LayerNormalization", [b.node("Add", [h, linear(m, ff, d, "mlp.down")], ["res2"]),
                                  b.const("ln2.g", np.ones(d, np.float32)),
                                  b.const("ln2.b", np.zeros(d, np.float32))], ["y"], axis=-1)
    model = b.model("encoder_dynseq",
                    [helper.make_tensor_value_info("x", F, ["batch", "seq", d])],
                    [helper.make_tensor_value_info("y", F, ["batch", "seq", d])])
    r = np.random.default_rng(8)
    sets = [{"x": r.standard_normal((2, 5, d)).astype(np.float32)},
            {"x": r.standard_normal((2, 9, d)).astype(np.float32)}]
    return model, sets


# ---- lstm / gru --------------------------------------------------------------------

def recurrent(op, seed, gates, **attrs):
    b = Builder(seed)
    seq, batch, din, hid, out = 6, 2, 4, 8, 5
    W = b.w("W", 2, gates * hid, din)
    R = b.w("R", 2, gates * hid, hid)
    B = b.w("B", 2, 2 * gates * hid, scale=0.1)
    b.node(op, ["x", W, R, B], ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else []),
           hidden_size=hid, direction="bidirectional", **attrs)
    y = b.node("Transpose", ["Y"], ["Y.t"], perm=[0, 2, 1, 3])                    # [seq, batch, 2, hid]
    y = b.node("Reshape", [y, b.const("feat.shape", np.array([0, 0, 2 * hid], np.int64))], ["feat"])
    b.node("MatMul", [y, b.w("head.w", 2 * hid, out)], ["logits"])
    outs = [helper.make_tensor_value_info("logits", F, [seq, batch, out]),
            helper.make_tensor_value_info("Y_h", F, [2, batch, hid])]
    model = b.model(op.lower(), [helper.make_tensor_value_info("x", F, [seq, batch, din])], outs)
    x = np.random.default_rng(seed + 1).standard_normal((seq, batch, din)).astype(np.float32)
    return model, [{"x": x}]


def lstm():
    return recurrent("LSTM", 303, 4)


def gru():
    return recurrent("GRU", 404, 3, linear_before_reset=1)


# ---- loop_if -----------------------------------------------------------------------

def loop_if():
    b = Builder(505)
    n = 4
    b.w("step", n)
    # If branches: even iteration -> acc * 0.5 + x, odd -> acc - step * iter
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["acc_in", "half"], ["t.half"]),
         helper.make_node("Add", ["t.half", "x"], ["t.out"])],
        "then_branch", [], [helper.make_tensor_value_info("t.out", F, [n])],
        [numpy_helper.from_array(np.array(0.5, np.float32), "half")])
    else_g = helper.make_graph(
        [helper.make_node("Cast", ["iter"], ["e.iterf"], to=F),
         helper.make_node("Mul", ["step", "e.iterf"], ["e.scaled"]),
         helper.make_node("Sub", ["acc_in", "e.scaled"], ["e.out"])],
        "else_branch", [], [helper.make_tensor_value_info("e.out", F, [n])])
    body = helper.make_graph(
        [helper.make_node("Mod", ["iter", "two"], ["parity"]),
         helper.make_node("Equal", ["parity", "zero_i"], ["is_even"]),
         helper.make_node("If", ["is_even"], ["acc_out"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan_out"])],
        "loop_body",
        [helper.make_tensor_value_info("iter", I64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", F, [n])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", F, [n]),
         helper.make_tensor_value_info("scan_out", F, [n])],
        [numpy_helper.from_array(np.array(2, np.int64), "two"),
         numpy_helper.from_array(np.array(0, np.int64), "zero_i")])
    b.const("acc0", np.zeros(n, np.float32))
    b.node("Loop", ["M", "", "acc0"], ["acc", "history"], body=body)
    model = b.model("loop_if",
                    [helper.make_tensor_value_info("M", I64, []),
                     helper.make_tensor_value_info("x", F, [n])],
                    [helper.make_tensor_value_info("acc", F, [n]),
                     helper.make_tensor_value_info("history", F, ["M", n])])
    x = np.random.default_rng(506).standard_normal(n).astype(np.float32)
    return model, [{"M": np.array(5, np.int64), "x": x}]


# ---- seq_pool ----------------------------------------------------------------------

def seq_pool():
    b = Builder(707)
    c = 4
    body = helper.make_graph(
        [helper.make_node("ReduceMean", ["x", "ax"], ["m"], keepdims=0),
         helper.make_node("Mul", ["m", "s"], ["ms"]),
         helper.make_node("Relu", ["ms"], ["y"])],
        "pool_body", [helper.make_tensor_value_info("x", F, [c, None]), helper.make_tensor_value_info("s", F, [c])],
        [helper.make_tensor_value_info("y", F, [c])], [numpy_helper.from_array(np.array([1], np.int64), "ax")])
    loop_body = helper.make_graph(
        [helper.make_node("SequenceAt", ["frames", "i"], ["f"]),
         helper.make_node("ReduceMax", ["f", "ax1"], ["mx"], keepdims=0),
         helper.make_node("SequenceInsert", ["acc_in", "mx"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "max_body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("acc_in", F, [c])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("acc_out", F, [c])],
        [numpy_helper.from_array(np.array([1], np.int64), "ax1")])
    b.w("W", c, 3)
    b.const("split", np.array([1, 3], np.int64))
    b.node("SequenceMap", ["frames", "scale"], ["pooled_seq"], body=body)
    b.node("ConcatFromSequence", ["pooled_seq"], ["pooled"], axis=0, new_axis=1)
    b.node("MatMul", ["pooled", "W"], ["logits"])
    b.node("SequenceLength", ["frames"], ["n"])
    b.node("SequenceEmpty", [], ["empty"], dtype=F)
    b.node("Loop", ["n", "", "empty"], ["maxes_seq"], body=loop_body)
    b.node("ConcatFromSequence", ["maxes_seq"], ["maxes"], axis=0)
    b.node("SplitToSequence", ["pooled", "split"], ["parts"], axis=1)
    seq = helper.make_tensor_sequence_value_info
    model = b.model("seq_pool", [seq("frames", F, [c, None]), helper.make_tensor_value_info("scale", F, [c])],
                    [helper.make_tensor_value_info("logits", F, [None, 3]),
                     helper.make_tensor_value_info("maxes", F, [None]),
                     seq("parts", F, [None, None]), seq("pooled_seq", F, [c])])
    r = np.random.default_rng(708)
    frames = [r.standard_normal((c, w)).astype(np.float32) for w in (5, 3, 7)]
    return model, [{"frames": frames, "scale": r.random(c).astype(np.float32) + 0.5}]


# ---- writing -----------------------------------------------------------------------

def value_proto(value, name):
    """A TensorProto, or for a list (a sequence) a SequenceProto."""
    if isinstance(value, list):
        return numpy_helper.from_list(value, name)
    return numpy_helper.from_array(value, name)

def write_case(name, model, sets):
    import onnxruntime as ort
    out = os.path.join(ROOT, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    onnx.save(model, os.path.join(out, "model.onnx"))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    in_names = [i.name for i in model.graph.input]
    out_names = [o.name for o in model.graph.output]
    for s, feeds in enumerate(sets):
        data = os.path.join(out, "test_data_set_%d" % s)
        os.makedirs(data)
        for k, nm in enumerate(in_names):
            with open(os.path.join(data, "input_%d.pb" % k), "wb") as f:
                f.write(value_proto(feeds[nm], nm).SerializeToString())
        for k, (nm, val) in enumerate(zip(out_names, sess.run(out_names, feeds))):
            with open(os.path.join(data, "output_%d.pb" % k), "wb") as f:
                f.write(value_proto(val, nm).SerializeToString())
    print("wrote tests/onnx_models/%s (%d bytes model, %d data set(s))" %
          (name, os.path.getsize(os.path.join(out, "model.onnx")), len(sets)))


def main():
    for name, make in [("mobilenet_block", mobilenet_block), ("encoder_dynseq", encoder_dynseq),
                       ("lstm", lstm), ("gru", gru), ("loop_if", loop_if), ("seq_pool", seq_pool)]:
        model, sets = make()
        write_case(name, model, sets)


if __name__ == "__main__":
    main()
