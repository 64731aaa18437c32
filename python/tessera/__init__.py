"""tessera: an AI compiler in C, from Python.

    import tessera
    sess = tessera.InferenceSession("model.onnx")          # as onnxruntime's
    outputs = sess.run(None, {"x": x})                      # numpy arrays

    g = tessera.Graph("scale")                              # or build a graph
    x = g.input("x", "f32[batch, 4]")
    g.output(g.op("transpose", x * 2.0, perm=[1, 0]), names=["y"])
    y, = tessera.Session(g).run(None, {"x": x_array})

Sessions compile for this CPU by default ("cpu": generated C, cached on
disk) or run on the reference interpreter (target="interp"). Inputs are
read in place when their memory allows (numpy arrays, torch tensors by
DLPack); outputs come back without a copy. docs/api.md has the whole API.
"""
import os
import tempfile
from typing import NamedTuple, List, Optional, Union

from . import _tessera
from ._tessera import (  # noqa: F401
    __version__,
    Error, InvalidArgument, InvalidModel, Unsupported, OutOfMemory, FileError, ExecutionError,
    ToolchainError, InternalError,
    Graph, Value, Tensor,
    from_dlpack, load_onnx, onnx_info, prims, targets, dtypes,
)

__all__ = [
    "__version__", "Error", "InvalidArgument", "InvalidModel", "Unsupported", "OutOfMemory", "FileError",
    "ExecutionError", "ToolchainError", "InternalError", "Graph", "Value", "Tensor", "Session",
    "InferenceSession", "NodeArg", "from_dlpack", "load_onnx", "onnx_info", "prims", "targets", "dtypes",
]

# ONNX's names for tessera's dtypes, as onnxruntime's NodeArg.type spells them
_ONNX_TYPE = {
    "bool": "bool", "i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32",
    "u32": "uint32", "i64": "int64", "u64": "uint64", "f16": "float16", "bf16": "bfloat16",
    "f32": "float", "f64": "double",
}


class NodeArg(NamedTuple):
    """An input or output of a session, as onnxruntime's NodeArg: its name,
    its shape (ints, and symbolic dims by name) and its type
    ("tensor(float)")."""
    name: str
    shape: List[Union[int, str]]
    type: str


def _split_dims(text: str) -> List[str]:
    """The dims of "f32[batch, (n + 1)]", split at top-level commas."""
    inner = text[text.index("[") + 1:text.rindex("]")]
    dims, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            dims.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        dims.append(cur.strip())
    return dims


def _node_arg(name: str, type_text: str) -> NodeArg:
    dtype = type_text[:type_text.index("[")]
    shape = [int(d) if d.isdigit() else d for d in _split_dims(type_text)]
    return NodeArg(name, shape, "tensor(%s)" % _ONNX_TYPE.get(dtype, dtype))


class Session(_tessera.Session):
    __doc__ = _tessera.Session.__doc__

    def get_inputs(self) -> List[NodeArg]:
        """The inputs, in order: name, shape (symbolic dims by name), type."""
        return [_node_arg(n, t) for n, t in self._signature()[0]]

    def get_outputs(self) -> List[NodeArg]:
        """The outputs, in order: name, shape (symbolic dims by name), type."""
        return [_node_arg(n, t) for n, t in self._signature()[1]]


class InferenceSession(Session):
    """An ONNX model compiled by tessera, shaped like onnxruntime's
    InferenceSession, so that swapping the import is the whole change:

        sess = tessera.InferenceSession("model.onnx")
        [y] = sess.run(None, {"x": x})

    path_or_bytes: a model file, or its bytes. target: "cpu" (default) or
    "interp"; threads: per run (default: all cores). sess_options,
    providers and provider_options are accepted for onnxruntime's callers
    and ignored, except sess_options.intra_op_num_threads when threads is
    not given. known_inputs: {name: array} for inputs whose values the
    model needs to build (a Reshape's shape, a Loop's trip count): the
    session is specialised on them, and runs must pass the same values."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, *,
                 target: Optional[str] = None, threads: Optional[int] = None, cache_dir: Optional[str] = None,
                 known_inputs: Optional[dict] = None, **kwargs):
        if kwargs:
            raise TypeError("unexpected keyword argument(s): %s" % ", ".join(sorted(kwargs)))
        if threads is None and sess_options is not None:
            threads = getattr(sess_options, "intra_op_num_threads", 0) or None
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            graph = _load_onnx_bytes(bytes(path_or_bytes), known_inputs)
            self._model_path = None
        elif isinstance(path_or_bytes, (str, os.PathLike)):
            graph = load_onnx(path_or_bytes, known_inputs)
            self._model_path = os.fspath(path_or_bytes)
        else:
            raise TypeError("InferenceSession takes a model path or the model's bytes, not %s"
                            % type(path_or_bytes).__name__)
        super().__init__(graph, target=target, threads=threads, cache_dir=cache_dir)

    def get_providers(self) -> List[str]:
        """The target, where onnxruntime lists its execution providers."""
        return ["tessera:" + self.target]


def _load_onnx_bytes(data: bytes, known: Optional[dict]) -> Graph:
    # the loader reads files (external data is resolved beside the model):
    # a private folder holds the bytes while they load
    with tempfile.TemporaryDirectory(prefix="tessera-") as d:
        path = os.path.join(d, "model.onnx")
        with open(path, "wb") as f:
            f.write(data)
        return load_onnx(path, known)

# tessera.jit and tessera.numpy (docs/jit.md): tracing Python functions into graphs
from . import numpy  # noqa: E402,F401  (tessera.numpy, numpy's functions on traced arrays)
from ._control import cond, while_loop, fori_loop, scan  # noqa: E402
from ._trace import Dim, Tracer, TracerError  # noqa: E402
from .jit import jit, trace, eval_shape, Jitted, Traced  # noqa: E402
from .autodiff import grad, value_and_grad, jvp, vjp  # noqa: E402  (docs/autodiff.md)
from . import lax  # noqa: E402,F401  (tessera.lax: the primitives on traced arrays)

__all__ += ["numpy", "jit", "trace", "eval_shape", "Jitted", "Traced", "Tracer", "TracerError", "Dim", "cond",
            "while_loop", "fori_loop", "scan", "grad", "value_and_grad", "jvp", "vjp", "lax"]
