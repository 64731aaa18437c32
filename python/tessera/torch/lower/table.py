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
DYNAMIC = set()   # lowerings that take symbolic sizes (dims as text, no Python arithmetic on them)
SIZE_ARGS = set()  # lowerings whose size arguments may be SymInts (they read the result's shape instead)
# nodes with a complex tensor among their inputs or results take these
# instead (complex.py): a complex value is its real dtype with one more
# trailing dim of 2 (real, imaginary), as torch.view_as_real lays it out
COMPLEX_LOWERINGS = {}
COMPLEX_CHECKS = {}

TS_DTYPE = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8",
    torch.bool: "bool",
}
COMPLEX_DTYPE = {torch.complex64: "f32", torch.complex128: "f64"}


def lowers(*ops, check=None, dynamic=False, size_args=False):
    def register(fn):
        for op in ops:
            LOWERINGS[op] = fn
            if check:
                CHECKS[op] = check
            if dynamic:
                DYNAMIC.add(op)
            if size_args:
                SIZE_ARGS.add(op)
        return fn
    return register


def lowers_complex(*ops, check=None):
    """Registers the lowering of ops for complex nodes (static sizes)."""
    def register(fn):
        for op in ops:
            COMPLEX_LOWERINGS[op] = fn
            if check:
                COMPLEX_CHECKS[op] = check
        return fn
    return register


def is_complex_node(node):
    """Whether a complex tensor is among the node's inputs or results."""
    vals = list(fake(node)) if isinstance(fake(node), (tuple, list)) else [fake(node)]
    vals += [fake(a) for a in node.all_input_nodes]
    return any(isinstance(v, torch.Tensor) and v.dtype.is_complex for v in vals)


def lowering(node):
    """The lowering a call node takes (None if tessera has none)."""
    table = COMPLEX_LOWERINGS if is_complex_node(node) else LOWERINGS
    return table.get(node.target)


class NotExpressible(Exception):
    """A symbolic size tessera's dim grammar cannot spell."""


def sym_text(e):
    """A sympy size expression (torch's SymInt.node.expr) in tessera's dim
    grammar: + - * / (floor) % max min over integers and symbols."""
    import sympy
    from torch.utils._sympy.functions import FloorDiv, Mod, PythonMod
    if e.is_Integer:
        return str(int(e))
    if e.is_Symbol:
        return e.name
    if isinstance(e, sympy.Add):
        return "(" + "+".join(sym_text(a) for a in e.args) + ")"
    if isinstance(e, sympy.Mul):
        return "*".join("(" + sym_text(a) + ")" if isinstance(a, sympy.Add) else sym_text(a) for a in e.args)
    if isinstance(e, sympy.Pow) and e.exp.is_Integer and 0 < int(e.exp) <= 8:
        base = sym_text(e.base)
        base = "(%s)" % base if not (e.base.is_Symbol or e.base.is_Integer) else base
        return "*".join([base] * int(e.exp))
    if isinstance(e, FloorDiv):
        return "(%s)/(%s)" % (sym_text(e.args[0]), sym_text(e.args[1]))
    if isinstance(e, (Mod, PythonMod)):
        return "(%s)%%(%s)" % (sym_text(e.args[0]), sym_text(e.args[1]))
    if isinstance(e, (sympy.Max, sympy.Min)):
        name = "max" if isinstance(e, sympy.Max) else "min"
        out = sym_text(e.args[0])
        for a in e.args[1:]:
            out = "%s(%s, %s)" % (name, out, sym_text(a))
        return out
    raise NotExpressible(str(e))


def dim_text(d):
    """A size: an int, or a SymInt's expression as tessera text."""
    if isinstance(d, torch.SymInt):
        e = d.node.expr
        return int(e) if e.is_Integer else sym_text(e)
    return int(d)


def is_symbolic(v):
    return isinstance(v, torch.Tensor) and any(isinstance(d, torch.SymInt) and not d.node.expr.is_Integer
                                               for d in v.shape)


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
    """tessera's type for a (fake) tensor: "f32[2, 3]", "f32[s0, 4]"; a
    complex tensor is its pairs, "f32[2, 3, 2]"."""
    dims = [str(dim_text(d)) for d in t.shape]
    if t.dtype in COMPLEX_DTYPE:
        return "%s[%s]" % (COMPLEX_DTYPE[t.dtype], ", ".join(dims + ["2"]))
    return "%s[%s]" % (TS_DTYPE[t.dtype], ", ".join(dims))


class Lowerer:
    """Builds one region: env maps FX nodes to Values (tuples for nodes
    with several results)."""

    def __init__(self, name):
        self.g = tessera.Graph(name)
        self.env = {}
        self.seed_input = None   # the i64 scalar input random draws take (made on first use)
        self.draws = 0

    def seed(self):
        """The region's per-call seed: one more graph input, after the
        tensors, that Region fills from torch's generator on every call."""
        if self.seed_input is None:
            self.seed_input = self.g.input("seed", "i64[]")
        return self.seed_input

    def next_seed(self):
        """A seed attribute no other draw of this region has."""
        self.draws += 1
        return self.draws

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
        """The sizes of a node's (first) result: ints, and symbolic sizes
        as tessera dim text."""
        return tuple(dim_text(d) for d in first(fake(a)).shape)

    def sizes(self, lst):
        """A size-list argument (ints and SymInt nodes) as dims."""
        return [dim_text(fake(d)) if isinstance(d, torch.fx.Node) else int(d) for d in lst]

    def count(self, shape, axes, dtype):
        """The number of elements over axes of shape: a Python number when
        the sizes are known, else a scalar Value computed at run time."""
        dims = [shape[a] for a in axes]
        if all(isinstance(d, int) for d in dims):
            n = 1
            for d in dims:
                n *= d
            return n
        return self.g.op("reduce_sum", self.full(1, dtype, dims), axes=list(range(len(dims))))

    def full(self, value, dtype, shape):
        s = self.g.scalar(float(value), dtype)
        if not shape:
            return s
        return self.g.op("broadcast", s, shape=list(shape), axes=[])

    def slice(self, v, start, limit, stride=None):
        return self.g.op("slice", v, start=list(start), limit=list(limit), stride=list(stride or [1] * len(start)))

    def broadcast_to(self, v, shape):
        """numpy broadcast_to."""
        vs = tuple(v.shape)
        if vs == tuple(shape):
            return v
        lead = len(shape) - len(vs)
        keep = [i for i, d in enumerate(vs) if not (d == 1 and shape[lead + i] != 1)]
        if len(keep) != len(vs):
            v = self.g.op("reshape", v, shape=[vs[i] for i in keep])
        return self.g.op("broadcast", v, shape=list(shape), axes=[lead + i for i in keep])
