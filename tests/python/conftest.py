"""Shared fixtures of the Python package's tests (pytest tests/python).

The package under test is the installed one (`pip install .`), never the
source tree's python/ folder: these tests check what a user gets."""
import os

import numpy as np
import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def onnx_node_dir():
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")


def read_pb(path):
    """A TensorProto file as a numpy array (onnx.numpy_helper)."""
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    """A compiled-code cache of the test run's own."""
    return str(tmp_path_factory.mktemp("cache"))


@pytest.fixture
def scale_graph():
    """x: f32[batch, 4] -> y = transpose(2 x): f32[4, batch]."""
    import tessera
    g = tessera.Graph("scale")
    x = g.input("x", "f32[batch, 4]")
    g.output(g.op("transpose", x * 2.0, perm=[1, 0]), names=["y"])
    return g


@pytest.fixture
def rng():
    return np.random.default_rng(0)
