"""Write the bundled ONNX model of the main job: models/tinynet/.

A small real network built with the onnx helper API (no framework needed):
a CNN stem (Conv + BatchNormalization + Relu, twice, MaxPool) over a
1x3x32x32 image, flattened to a sequence of 64 tokens of 16 channels, one
transformer encoder layer (multi-head attention with Softmax, LayerNormalization,
an MLP with Gelu), mean pooling and a Gemm classifier to 10 classes. The
batch axis is symbolic ("batch").

Weights are numpy draws with a fixed seed, so re-running the script gives
identical files. The expected output is computed by onnxruntime, the peer
runtime, and stored beside the model with the input in the layout of the
ONNX backend tests, so `tessera check models/tinynet` compares with it:

    .venv/bin/python scripts/gen_default_onnx.py

writes models/tinynet/model.onnx and models/tinynet/test_data_set_0/
{input_0.pb, output_0.pb}.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "models", "tinynet")
rng = np.random.default_rng(20261129)
inits, nodes = [], []


def w(name, *shape, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    scale = scale if scale is not None else 1.0 / np.sqrt(fan_in)
    inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
    return name


def const(name, array):
    inits.append(numpy_helper.from_array(np.asarray(array), name))
    return name


def node(op, ins, outs, **attrs):
    nodes.append(helper.make_node(op, ins, outs, name=outs[0] + "_node", **attrs))
    return outs[0]


def conv_bn_relu(x, cin, cout, tag):
    y = node("Conv", [x, w(tag + ".w", cout, cin, 3, 3), w(tag + ".b", cout, scale=0.1)], [tag + ".conv"],
             pads=[1, 1, 1, 1])
    gamma = const(tag + ".gamma", (1 + 0.1 * rng.standard_normal(cout)).astype(np.float32))
    beta = const(tag + ".beta", (0.1 * rng.standard_normal(cout)).astype(np.float32))
    mean = const(tag + ".mean", (0.1 * rng.standard_normal(cout)).astype(np.float32))
    var = const(tag + ".var", (1 + 0.1 * rng.random(cout)).astype(np.float32))
    y = node("BatchNormalization", [y, gamma, beta, mean, var], [tag + ".bn"], epsilon=1e-5)
    return node("Relu", [y], [tag + ".relu"])


def linear(x, din, dout, tag):
    y = node("MatMul", [x, w(tag + ".w", din, dout)], [tag + ".mm"])
    return node("Add", [y, w(tag + ".b", dout, scale=0.1)], [tag + ".out"])


def layer_norm(x, d, tag):
    return node("LayerNormalization", [x, const(tag + ".g", np.ones(d, np.float32)),
                                       const(tag + ".b", np.zeros(d, np.float32))], [tag + ".out"], axis=-1)


def attention(x, d, heads, tag):
    hd = d // heads
    q, k, v = (linear(x, d, d, tag + "." + p) for p in "qkv")
    split = const(tag + ".split", np.array([0, 0, heads, hd], np.int64))  # [batch, seq, heads, hd]
    q, k, v = (node("Reshape", [t, split], [t + ".heads"]) for t in (q, k, v))
    q = node("Transpose", [q], [tag + ".qt"], perm=[0, 2, 1, 3])
    k = node("Transpose", [k], [tag + ".kt"], perm=[0, 2, 3, 1])
    v = node("Transpose", [v], [tag + ".vt"], perm=[0, 2, 1, 3])
    s = node("MatMul", [q, k], [tag + ".scores"])
    s = node("Mul", [s, const(tag + ".scale", np.array(1 / np.sqrt(hd), np.float32))], [tag + ".scaled"])
    p = node("Softmax", [s], [tag + ".probs"], axis=-1)
    o = node("MatMul", [p, v], [tag + ".ctx"])
    o = node("Transpose", [o], [tag + ".ctxt"], perm=[0, 2, 1, 3])
    o = node("Reshape", [o, const(tag + ".merge", np.array([0, 0, d], np.int64))], [tag + ".merged"])
    return linear(o, d, d, tag + ".o")


def build():
    x = "image"
    h = conv_bn_relu(x, 3, 8, "stem1")
    h = conv_bn_relu(h, 8, 16, "stem2")
    h = node("MaxPool", [h], ["pool"], kernel_shape=[4, 4], strides=[4, 4])          # [b, 16, 8, 8]
    h = node("Reshape", [h, const("tokens.shape", np.array([0, 16, 64], np.int64))], ["tokens.flat"])
    h = node("Transpose", [h], ["tokens"], perm=[0, 2, 1])                            # [b, 64, 16]
    a = attention(h, 16, 2, "attn")
    h = layer_norm(node("Add", [h, a], ["res1"]), 16, "ln1")
    m = node("Gelu", [linear(h, 16, 32, "mlp.up")], ["mlp.act"])
    h = layer_norm(node("Add", [h, linear(m, 32, 16, "mlp.down")], ["res2"]), 16, "ln2")
    h = node("ReduceMean", [h, const("pool.axes", np.array([1], np.int64))], ["pooled"], keepdims=0)
    node("Gemm", [h, w("head.w", 10, 16), w("head.b", 10, scale=0.1)], ["logits"], transB=1)
    graph = helper.make_graph(
        nodes, "tinynet",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], producer_name="tessera")
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


def main():
    model = build()
    data = os.path.join(OUT, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(OUT, "model.onnx"))
    image = np.random.default_rng(7).standard_normal((2, 3, 32, 32)).astype(np.float32)
    open(os.path.join(data, "input_0.pb"), "wb").write(
        numpy_helper.from_array(image, "image").SerializeToString())
    import onnxruntime as ort
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (logits,) = sess.run(None, {"image": image})
    open(os.path.join(data, "output_0.pb"), "wb").write(
        numpy_helper.from_array(logits, "logits").SerializeToString())
    print("wrote models/tinynet/model.onnx (%d bytes), its input and onnxruntime's output" %
          os.path.getsize(os.path.join(OUT, "model.onnx")))


if __name__ == "__main__":
    main()
