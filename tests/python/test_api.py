"""Every public function and type of the tessera package, one behaviour
per test: module functions, Graph and Value (building, text, passes),
Session and InferenceSession (running, describing, profiling, closing)."""
import os

import numpy as np
import pytest

import tessera
from conftest import ROOT


def test_version_and_tables():
    # the installed package is under test, not the source tree's python/
    assert not os.path.dirname(tessera.__file__).startswith(os.path.join(ROOT, "python"))
    with open(os.path.join(ROOT, "include", "tessera.h")) as f:
        assert f'#define TESSERA_VERSION "{tessera.__version__}"' in f.read()
    assert tessera.targets() == ["cpu", "opencl", "cuda", "interp"]
    prims = {p[0]: p for p in tessera.prims()}
    assert prims["add"][1:4] == (2, 2, 1) and prims["transpose"][4] == "perm:ints"
    assert len(prims) > 60
    assert tessera.dtypes()[:3] == ["bool", "i8", "u8"] and "bf16" in tessera.dtypes()


def test_errors_are_classes():
    for name in ["InvalidArgument", "InvalidModel", "Unsupported", "OutOfMemory", "FileError", "ExecutionError",
                 "ToolchainError", "InternalError"]:
        assert issubclass(getattr(tessera, name), tessera.Error)
    assert issubclass(tessera.InvalidArgument, ValueError) and issubclass(tessera.FileError, OSError)


def test_build_print_parse(scale_graph):
    text = str(scale_graph)
    assert text.startswith("graph @scale(%x: f32[batch, 4]) {")
    assert "%y: f32[4, batch] = transpose(" in text and "return %y" in text
    again = tessera.Graph.parse(text)
    assert str(again) == text
    assert "digraph" in scale_graph.to_dot()


def test_graph_load_and_parse_errors(tmp_path):
    g = tessera.Graph.load(os.path.join(ROOT, "models", "attention.ir"))
    assert [v.type for v in g.inputs] == ["f32[seq, 16]"]
    with pytest.raises(tessera.InvalidModel, match=r"<string>:2:10: use of undefined value %nope"):
        tessera.Graph.parse("graph @g(%x: f32[2]) {\n  return %nope\n}\n")
    with pytest.raises(tessera.FileError):
        tessera.Graph.load(str(tmp_path / "missing.ir"))


def test_values():
    g = tessera.Graph()
    x = g.input("x", "f32", ("batch", 3))
    assert (x.type, x.dtype, x.shape, x.ndim) == ("f32[batch, 3]", "f32", ("batch", 3), 2)
    assert x.graph is g and "f32[batch, 3]" in repr(x)
    w = g.const(np.ones((3, 2), np.float32))
    y = x @ w
    assert y.shape == ("batch", 2)
    z = -(y + 1) * 2 - y / 4 + 1.5 ** y
    assert z.type == "f32[batch, 2]"
    s = g.op("reduce_sum", z, axes=[1])
    c = g.op("cast", s, dtype="f16")
    assert c.dtype == "f16" and g.scalar(3, "i64").type == "i64[]"
    g.output(c, z, names=["c", None])
    assert [v.type for v in g.outputs] == ["f16[batch]", "f32[batch, 2]"]
    # several results come as a tuple
    q = g.input("q", "f32[5]")
    vals, idx = g.op("sort", q, axis=0, descending=True)
    assert (vals.type, idx.type) == ("f32[5]", "i64[5]")


def test_run_passes():
    g = tessera.Graph()
    x = g.input("x", "f32[4]")
    dead = x * 3.0
    g.output(x + 0.0, names=["y"])
    before = str(g)
    g.run_passes("default")
    after = str(g)
    assert after != before and "mul" not in after
    with pytest.raises(tessera.InvalidArgument, match="before run_passes"):
        dead + 1.0
    dump = tessera.Graph.parse(before).run_passes("dce", dump_after="dce")
    assert dump.startswith("# after dce")
    with pytest.raises(tessera.Error, match="unknown pass"):
        g.run_passes("nonsense")


def test_describe(scale_graph):
    c = scale_graph.describe("c")
    assert "void" in c
    assert "kernel" in scale_graph.describe("loops").lower()
    with pytest.raises(tessera.Unsupported):
        scale_graph.describe("c", target="interp")


@pytest.mark.parametrize("target", ["cpu", "opencl", "interp"])
def test_control_regions(target, cache_dir):
    """op("while"/"if", ..., regions=(fn, ...)): each fn builds one region
    on Values of its parameters; a trip count known only at run time."""
    g = tessera.Graph("power")
    x, n = g.input("x", "f32[5]"), g.input("n", "i64[]")
    one = g.op("broadcast", g.scalar(1, "f32"), shape=[5], axes=[])
    k, _, _, p = g.op("while", g.scalar(0, "i64"), n, x, one,
                      regions=(lambda k, n, x, acc: g.op("lt", k, n),
                               lambda k, n, x, acc: (k + 1, n, x, acc * x)))
    y = g.op("if", g.op("lt", n, g.scalar(3, "i64")), p, regions=(lambda a: a * 2.0, lambda a: -a))
    g.output(y, k)
    assert "while(" in str(g) and "if(" in str(g)
    s = tessera.Session(g, target=target, threads=1, cache_dir=cache_dir)
    if target != "interp":   # the regions' kernels are generated (counted with the module's)
        assert s.compile_info["kernels"] >= 4 and s.compile_info["fallbacks"] == 0, s.compile_info
    xv = np.arange(1, 6, dtype=np.float32)
    for nv in (0, 2, 5):
        got, trips = s.run(None, {"x": xv, "n": np.array(nv)})
        np.testing.assert_array_equal(got, xv ** nv * (2 if nv < 3 else -1))
        assert trips == nv


def test_region_errors():
    g = tessera.Graph("e")
    a = g.input("a", "f32[3]")
    with pytest.raises(tessera.InvalidArgument, match="regions see only their parameters"):
        g.op("while", a, regions=(lambda s: g.op("lt", s, a), lambda s: s))
    with pytest.raises(ZeroDivisionError):
        g.op("while", a, regions=(lambda s: 1 / 0, lambda s: s))
    with pytest.raises(tessera.InvalidArgument, match="building a region"):
        g.op("while", a, regions=(lambda s: tessera.Session(g), lambda s: s))
    with pytest.raises(tessera.InvalidArgument, match="unknown primitive"):
        g.op("if", g.scalar(1, "bool"), a, regions=(lambda s: g.op("bogus", s), lambda s: s))
    with pytest.raises(TypeError, match="callable"):
        g.op("while", a, regions=(1, 2))
    with pytest.raises(tessera.InvalidArgument):   # the body yields the wrong number of values
        g.op("while", a, regions=(lambda s: g.op("lt", g.op("reduce_sum", s, axes=[0]), g.scalar(1, "f32")),
                                   lambda s: (s, s)))
    assert g.op("exp", a).type == "f32[3]"   # the graph is still usable


def test_cuda_session(scale_graph, cache_dir):
    """The cuda target runs where there is an NVIDIA GPU; elsewhere (CI) a
    Session on it is a ToolchainError saying what is missing."""
    if os.path.exists("/dev/nvidiactl"):
        s = tessera.Session(scale_graph, target="cuda")
        x = np.arange(8, dtype=np.float32).reshape(2, 4)
        np.testing.assert_allclose(s.run(None, {"x": x})[0],
                                   tessera.Session(scale_graph, target="interp").run(None, {"x": x})[0], rtol=1e-6)
    else:
        with pytest.raises(tessera.ToolchainError, match=r"^cuda: no usable CUDA device \(.+\); the cuda target needs"):
            tessera.Session(scale_graph, target="cuda")
    assert 'extern "C" __global__' in scale_graph.describe("cuda", "cuda")


@pytest.mark.parametrize("target", ["cpu", "opencl", "interp"])
def test_session_run(scale_graph, target, cache_dir):
    s = tessera.Session(scale_graph, target=target, threads=1, cache_dir=cache_dir)
    assert s.target == target and s.graph is scale_graph
    for batch in (1, 5):
        x = np.arange(4 * batch, dtype=np.float32).reshape(batch, 4)
        y, = s.run(None, {"x": x})
        np.testing.assert_array_equal(y, 2 * x.T)
        y2, = s.run(["y"], {"x": x})
        np.testing.assert_array_equal(y2, y)
    t, = s.run_tensors([x])
    assert isinstance(t, tessera.Tensor) and t.shape == (4, 5) and t.dtype == "f32"
    info = s.compile_info
    assert set(info) == {"compile_ms", "cache_hit", "kernels", "fallbacks"}
    # the cpu target caches its compiled code; opencl leaves it to the driver
    assert (info["cache_hit"] is None) == (target != "cpu")
    assert (info["kernels"] > 0) == (target != "interp")
    assert s.peak_bytes >= 0
    assert [a.name for a in s.get_inputs()] == ["x"] and s.get_outputs()[0].shape == [4, "batch"]


def test_session_profile(scale_graph, tmp_path, cache_dir):
    s = tessera.Session(scale_graph, cache_dir=cache_dir)
    s.profile(True)
    s.run(None, {"x": np.ones((2, 4), np.float32)})
    s.write_profile(str(tmp_path / "trace.json"))
    assert b"traceEvents" in (tmp_path / "trace.json").read_bytes()
    with pytest.raises(tessera.Unsupported):
        tessera.Session(scale_graph, target="interp").profile(True)


def test_session_close_and_freeze(scale_graph, cache_dir):
    with tessera.Session(scale_graph, cache_dir=cache_dir) as s:
        with pytest.raises(tessera.InvalidArgument, match="in use by 1 session"):
            scale_graph.input("z", "f32[1]")
        with pytest.raises(tessera.InvalidArgument, match="in use"):
            scale_graph.run_passes()
    with pytest.raises(tessera.InvalidArgument, match="closed"):
        s.run(None, {"x": np.ones((1, 4), np.float32)})
    s.close()   # twice is fine
    scale_graph.input("z", "f32[1]")   # editable again


def test_inference_session(cache_dir):
    path = os.path.join(ROOT, "models", "tinynet", "model.onnx")
    s = tessera.InferenceSession(path, providers=["CPUExecutionProvider"], cache_dir=cache_dir)
    ins, outs = s.get_inputs(), s.get_outputs()
    assert ins[0].type == "tensor(float)" and isinstance(ins[0].shape[0], str)
    assert len(outs) == 1 and s.get_providers() == ["tessera:cpu"]
    with open(path, "rb") as f:
        b = tessera.InferenceSession(f.read(), target="interp")
    assert [a.name for a in b.get_inputs()] == [a.name for a in ins]
    with pytest.raises(TypeError):
        tessera.InferenceSession(42)
    with pytest.raises(TypeError):
        tessera.InferenceSession(path, colour="red")


def test_onnx_functions(tmp_path):
    path = os.path.join(ROOT, "models", "tinynet", "model.onnx")
    assert "Conv" in tessera.onnx_info(path)
    g = tessera.load_onnx(path)
    assert len(g.inputs) == 1 and "conv" in str(g)
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07not a model")
    with pytest.raises(tessera.InvalidModel):
        tessera.load_onnx(str(bad))
    with pytest.raises(tessera.InvalidModel):
        tessera.InferenceSession(b"\x0a\x03abc")
    with pytest.raises(tessera.FileError):
        tessera.load_onnx(str(tmp_path / "none.onnx"))


def test_help_and_stubs():
    assert "onnxruntime" in tessera.InferenceSession.__doc__
    assert "run(output_names, input_feed" in tessera.Session.run.__doc__
    stub = os.path.join(os.path.dirname(tessera.__file__), "__init__.pyi")
    assert os.path.exists(stub) and os.path.exists(os.path.join(os.path.dirname(tessera.__file__), "py.typed"))
    with open(stub) as f:
        text = f.read()
    for name in tessera.__all__:
        assert name in text, name


def test_graph_with_many_outputs():
    # a training forward returns every activation its backward keeps:
    # hundreds of outputs, more than any fixed operand array
    g = tessera.Graph("many")
    x = g.input("x", "f32[3]")
    outs = [x * float(i) for i in range(300)]
    g.output(*outs)
    with tessera.Session(g, target="interp") as s:
        got = s.run_tensors([np.array([1, 2, 3], np.float32)])
    assert len(got) == 300
    np.testing.assert_array_equal(np.asarray(got[299]), np.array([299, 598, 897], np.float32))


def test_exact_session_gives_direct_summation_accuracy(tmp_path):
    # a 3x3 stride-1 conv at 32x32 takes Winograd F(4x4) by default (about
    # a decimal digit lost: 6e-6 of the largest output here); exact=True
    # keeps to direct summation, as the interpreter computes it
    rng = np.random.default_rng(0)
    g = tessera.Graph("conv")
    x = g.input("x", "f32[1, 64, 32, 32]")
    w = g.const(rng.standard_normal((64, 64, 3, 3)).astype(np.float32))
    g.output(g.op("conv", x, w, strides=[1, 1], pad_lo=[1, 1], pad_hi=[1, 1], lhs_dilation=[1, 1],
                  rhs_dilation=[1, 1]))
    xv = rng.standard_normal((1, 64, 32, 32)).astype(np.float32)
    got = {}
    for name, kw in (("interp", dict(target="interp")), ("fast", {}), ("exact", dict(exact=True))):
        with tessera.Session(g, cache_dir=str(tmp_path), **kw) as s:
            got[name] = np.asarray(s.run_tensors([xv])[0]).astype(np.float64)
    scale = np.abs(got["interp"]).max()
    assert np.abs(got["exact"] - got["interp"]).max() <= 1e-6 * scale
    assert np.abs(got["fast"] - got["interp"]).max() <= 1e-4 * scale
    with pytest.raises(TypeError):
        tessera.Session(g, None, None, None, True)   # keyword only
