"""The lowering table: one function per ATen operator overload, assembling
it from tessera's primitives on a tessera.Graph (the public builder), in
family files beside this one (elementwise, reduce, layout, linalg, nn,
index, creation) like the ONNX frontend's.

A lowering is `fn(L, node) -> Value | tuple[Value, ...]`, registered with
@lowers(op, ...), optionally with `check(node) -> str | None`: a reason it
cannot take this node (an argument it does not handle), so the node falls
back to eager PyTorch instead of being answered wrongly."""
import torch

import tessera

LOWERINGS = {}
CHECKS = {}

TS_DTYPE = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8",
    torch.bool: "bool",
}


def lowers(*ops, check=None):
    def register(fn):
        for op in ops:
            LOWERINGS[op] = fn
            if check:
                CHECKS[op] = check
        return fn
    return register


def fake(n):
    """The FakeTensor (or SymInt, number) a node produced, from its meta."""
    return n.meta.get("val") if isinstance(n, torch.fx.Node) else n


def first(v):
    """A node's value, or its first result that is not None."""
    if isinstance(v, (tuple, list)):
        return next(x for x in v if x is not None)
    return v


def ts_dtype(dt):
    return TS_DTYPE.get(dt)


def type_text(t):
    """tessera's type for a (fake) tensor: "f32[2, 3]"."""
    return "%s[%s]" % (TS_DTYPE[t.dtype], ", ".join(str(int(d)) for d in t.shape))


class Lowerer:
    """Builds one region: env maps FX nodes to Values (tuples for nodes
    with several results)."""

    def __init__(self, name):
        self.g = tessera.Graph(name)
        self.env = {}

    def value(self, a, dtype=None):
        """An argument as a Value of dtype (cast if needed); numbers become
        scalars of dtype."""
        if isinstance(a, torch.fx.Node):
            v = self.env[a]
            if dtype and v.dtype != dtype:
                v = self.g.op("cast", v, dtype=dtype)
            return v
        if isinstance(a, bool):
            a = int(a)
        return self.g.scalar(float(a), dtype or "f32")

    def cast(self, v, dtype):
        return v if v.dtype == dtype else self.g.op("cast", v, dtype=dtype)

    def out_dtype(self, node):
        """The result's dtype (the first result's, for several)."""
        return ts_dtype(first(fake(node)).dtype)

    def shape(self, a):
        return tuple(int(d) for d in first(fake(a)).shape)

    def full(self, value, dtype, shape):
        s = self.g.scalar(float(value), dtype)
        if not shape:
            return s
        return self.g.op("broadcast", s, shape=list(shape), axes=[])

    def slice(self, v, start, limit, stride=None):
        return self.g.op("slice", v, start=list(start), limit=list(limit), stride=list(stride or [1] * len(start)))

    def broadcast_to(self, v, shape):
        """numpy broadcast_to."""
        vs = tuple(int(d) for d in v.shape)
        if vs == tuple(shape):
            return v
        lead = len(shape) - len(vs)
        keep = [i for i, d in enumerate(vs) if not (d == 1 and shape[lead + i] != 1)]
        if len(keep) != len(vs):
            v = self.g.op("reshape", v, shape=[vs[i] for i in keep])
        return self.g.op("broadcast", v, shape=list(shape), axes=[lead + i for i in keep])
