"""Bad arguments are tessera.Error (or TypeError for a wrong Python
type), with the C message: never a crash."""
import numpy as np
import pytest

import tessera


@pytest.fixture
def sess(scale_graph, cache_dir):
    return tessera.Session(scale_graph, cache_dir=cache_dir)


GOOD = np.ones((2, 4), np.float32)


@pytest.mark.parametrize("feed, match", [
    ({}, "missing input 'x'"),
    ({"x": GOOD, "extra": GOOD}, "no input named 'extra'"),
    ({"x": np.ones((2, 4), np.float64)}, r"input 'x': expected f32\[batch, 4\], got f64\[2, 4\]"),
    ({"x": np.ones((2, 4, 1), np.float32)}, "got f32\\[2, 4, 1\\]"),
    ({"x": np.ones((2, 5), np.float32)}, "got f32\\[2, 5\\]"),
    ({"x": "text"}, "has no tessera dtype"),
    ({"x": object()}, "has no tessera dtype|is not an array"),
    ({"x": np.ones(3, np.complex64)}, "complex64 has no tessera dtype"),
    ({"x": None}, "has no tessera dtype|is not an array"),
])
def test_bad_feeds(sess, feed, match):
    with pytest.raises(tessera.InvalidArgument, match=match) as e:
        sess.run(None, feed)
    assert e.value.status in ("TS_ERR_INVALID_ARG", "TS_ERR_SHAPE")


def test_bad_calls(sess, scale_graph):
    with pytest.raises(tessera.InvalidArgument):
        sess.run(None, [GOOD])
    with pytest.raises(TypeError):
        sess.run(None)
    with pytest.raises(TypeError):
        sess.run(3, {"x": GOOD})
    with pytest.raises(tessera.InvalidArgument, match="2 inputs given"):
        sess.run_tensors([GOOD, GOOD])
    with pytest.raises(TypeError):
        sess.run_tensors(5)
    with pytest.raises(tessera.InvalidArgument, match="threads"):
        tessera.Session(scale_graph, threads=0)
    with pytest.raises(tessera.Unsupported, match="unknown target 'gpu9'"):
        tessera.Session(scale_graph, target="gpu9")
    with pytest.raises(TypeError):
        tessera.Session("not a graph")
    s = tessera.Session.__new__(tessera.Session)
    with pytest.raises(tessera.InvalidArgument, match="not initialised"):
        s.run(None, {})
    with pytest.raises(tessera.InvalidArgument, match="once"):
        sess.__init__(scale_graph)


def test_bad_building():
    g = tessera.Graph("b")
    x = g.input("x", "f32[2, 3]")
    with pytest.raises(tessera.InvalidArgument, match="unknown primitive 'frob'"):
        g.op("frob", x)
    with pytest.raises(tessera.InvalidModel, match="transpose needs attribute 'perm'"):
        g.op("transpose", x)
    with pytest.raises(tessera.InvalidArgument):
        g.op("add", x, g.input("v", "f32[4]"))
    with pytest.raises(tessera.InvalidArgument, match="already used"):
        g.input("x", "f32[1]")
    with pytest.raises(tessera.InvalidModel, match="unknown dtype"):
        g.input("q", "q8[1]")
    with pytest.raises(tessera.InvalidArgument, match="not a dtype"):
        g.input("q", "nonsense", (1,))
    with pytest.raises(TypeError):
        g.input("q", "f32", (1.5,))
    other = tessera.Graph("o").input("o", "f32[2, 3]")
    with pytest.raises(tessera.InvalidArgument, match="another graph"):
        g.op("add", x, other)
    with pytest.raises(TypeError):
        g.op("add", x, "x")
    with pytest.raises(TypeError):
        g.op(3)
    with pytest.raises(tessera.InvalidArgument, match="2 values but 1 names"):
        g.output(x, x, names=["a"])
    # after every error the graph goes on building
    y = g.op("exp", x)
    g.output(y, names=["y"])
    assert "exp" in str(g)
    with pytest.raises(TypeError):
        x + "s"
    with pytest.raises(tessera.InvalidArgument):
        tessera.Tensor(np.ones(2, np.complex128))
