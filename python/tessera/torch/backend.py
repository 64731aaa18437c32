"""torch.compile(model, backend="tessera"): Dynamo captures the model's
graphs; AOTAutograd turns each into a forward and a backward graph of
core ATen operators (torch._decomp.core_aten_decompositions); each is
partitioned (torch.fx's CapabilityBasedPartitioner) into regions of
operators tessera assembles from its primitives, compiled and run by
tessera, and the rest, which runs in eager PyTorch. Tensors cross between
them by DLPack, without copies."""
import operator
import os
import sys

import torch
from torch._decomp import core_aten_decompositions
from torch._functorch.aot_autograd import aot_module_simplified, make_boxed_func
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupport

import tessera

from .lower import CHECKS, DYNAMIC, SIZE_ARGS, TS_DTYPE, fake
from .lower.table import COMPLEX_CHECKS, COMPLEX_DTYPE, NotExpressible, dim_text, is_complex_node, is_symbolic, lowering
from .decompositions import OVERRIDES
from .region import Region, build

_DECOMPOSITIONS = None


def decompositions():
    global _DECOMPOSITIONS
    if _DECOMPOSITIONS is None:
        _DECOMPOSITIONS = {**core_aten_decompositions(), **OVERRIDES}
    return _DECOMPOSITIONS


class Report:
    """What the backend did with the graphs it was given: per graph the
    number of regions tessera compiled, the nodes it ran, and each
    operator left to eager PyTorch with the reason."""

    def __init__(self):
        self.graphs = []

    def add(self, kind, regions, compiled, fallbacks):
        self.graphs.append({"kind": kind, "regions": regions, "compiled_nodes": compiled, "fallbacks": fallbacks})

    @property
    def fallbacks(self):
        return [f for g in self.graphs for f in g["fallbacks"]]

    @property
    def regions(self):
        return sum(g["regions"] for g in self.graphs)

    def __str__(self):
        lines = []
        for i, g in enumerate(self.graphs):
            lines.append("graph %d (%s): %d tessera region%s, %d operators compiled, %d left to PyTorch" %
                         (i, g["kind"], g["regions"], "" if g["regions"] == 1 else "s", g["compiled_nodes"],
                          len(g["fallbacks"])))
            for op, why in g["fallbacks"]:
                lines.append("  fallback %s: %s" % (op, why))
        return "\n".join(lines) if lines else "no graphs compiled"

    __repr__ = __str__


REPORT = Report()


def makes_tensor(node):
    v = fake(node)
    return isinstance(v, torch.Tensor) or (isinstance(v, (tuple, list)) and
                                           any(isinstance(x, torch.Tensor) for x in v))


def why_not(node):
    """None if tessera takes this node, else the reason it does not."""
    if node.op != "call_function":
        return "not an operator call"
    if node.target is operator.getitem:
        src = node.args[0]
        return None if isinstance(src, torch.fx.Node) and why_not(src) is None else "a result of a fallback"
    cplx = is_complex_node(node)
    if lowering(node) is None:
        return "no lowering for %s%s" % (node.target, " on complex tensors" if cplx else "")
    vals = [fake(node)] if not isinstance(fake(node), (tuple, list)) else list(fake(node))
    for a in node.all_input_nodes:
        v = fake(a)
        if isinstance(v, torch.SymInt) and node.target in SIZE_ARGS:
            vals.append(None)   # a size argument: the lowering reads the result's shape
            try:
                dim_text(v)
            except NotExpressible as e:
                return "a size tessera cannot spell (%s)" % e
        else:
            vals.append(v)
    for v in vals:
        if v is None:
            continue
        if not isinstance(v, torch.Tensor):
            return "a non-tensor value (%s)" % type(v).__name__
        if v.dtype not in TS_DTYPE and v.dtype not in COMPLEX_DTYPE:
            return "dtype %s" % v.dtype
        if v.device.type != "cpu":
            return "a tensor on %s" % v.device
        if is_symbolic(v):
            if cplx or node.target not in DYNAMIC:
                return "a symbolic size (this lowering takes static sizes only)"
            try:
                [dim_text(d) for d in v.shape]
            except NotExpressible as e:
                return "a size tessera cannot spell (%s)" % e
    check = (COMPLEX_CHECKS if cplx else CHECKS).get(node.target)
    return check(node) if check else None


# operators whose result depends on how their input lies in memory
STORAGE_READERS = {torch.ops.aten.as_strided.default, torch.ops.aten.as_strided_copy.default,
                   torch.ops.aten.as_strided_scatter.default}


def eager_layouts(gm):
    """{node: reason} for the nodes that must run in PyTorch because a
    storage-reading operator left to PyTorch reads what they produce:
    tessera hands out dense row-major tensors, so a view (or a strided
    result) it computed would not lie in memory as eager's does, and
    as_strided would read other elements. Views are followed back to the
    tensor they view."""
    keep = {}
    for n in gm.graph.nodes:
        if n.op != "call_function" or n.target not in STORAGE_READERS or why_not(n) is None:
            continue
        todo = [n.args[0]]
        while todo:
            a = todo.pop()
            if not isinstance(a, torch.fx.Node) or a.op != "call_function" or a in keep:
                continue
            v = fake(a)
            if getattr(a.target, "is_view", False) or (isinstance(v, torch.Tensor) and not v.is_contiguous()):
                keep[a] = "its memory layout is read by %s, left to PyTorch" % n.target
                todo += [x for x in a.all_input_nodes]
    return keep


class _Support(OperatorSupport):
    def __init__(self, keep=None):
        super().__init__()
        self.keep = keep or {}

    def is_node_supported(self, submodules, node):
        return node not in self.keep and why_not(node) is None


def _options(options):
    o = dict(options or {})
    known = {"target", "threads", "cache_dir", "exact"}
    bad = sorted(set(o) - known)
    if bad:
        raise TypeError("tessera backend: unknown option(s) %s (known: %s)" % (", ".join(bad), ", ".join(sorted(known))))
    return o


def compile_graph(gm, example_inputs, options, kind):
    """A forward or backward graph of core ATen: its supported regions
    replaced by tessera Regions; the result, boxed for AOTAutograd."""
    # operators on tensors that stay in PyTorch (size arithmetic on SymInts is not one)
    keep = eager_layouts(gm)
    fallbacks = [(str(n.target), keep.get(n) or why_not(n)) for n in gm.graph.nodes
                 if n.op == "call_function" and n.target is not operator.getitem and makes_tensor(n)
                 and (n in keep or why_not(n) is not None)]
    partitioner = CapabilityBasedPartitioner(gm, _Support(keep), allows_single_node_partition=True)
    partitions = partitioner.propose_partitions()
    fused = partitioner.fuse_partitions(partitions)
    regions = compiled = 0
    for node in list(fused.graph.nodes):
        if node.op != "call_module" or not node.target.startswith("fused_"):
            continue
        sub = getattr(fused, node.target)
        ops = [n for n in sub.graph.nodes if n.op == "call_function" and n.target is not operator.getitem]
        try:
            graph, single, tensors, seeded, complex_outs = build(sub, "%s_%s" % (kind, node.target))
            # training (a forward that saves for a backward, and the
            # backward) gets direct-summation accuracy: batch norm over few
            # values amplifies Winograd's lost digit into gradients 1e-2
            # off (D102); inference keeps the fast convolutions
            exact = options.get("exact")
            region = Region(graph, single, tensors, options.get("target"), options.get("threads"),
                            options.get("cache_dir"), kind != "inference" if exact is None else bool(exact),
                            seeded, complex_outs)
        except tessera.Error as e:
            # a region tessera refuses as a whole (a symbolic size it cannot
            # prove equal, say) runs in PyTorch: a fallback, never a crash
            fallbacks.append(("region of %d operators" % len(ops), "%s: %s" % (type(e).__name__, e)))
            continue
        setattr(fused, node.target, region)
        compiled += len(ops)
        regions += 1
    fused.recompile()
    REPORT.add(kind, regions, compiled, fallbacks)
    if os.environ.get("TESSERA_LOG"):
        print("tessera: %s graph: %d region(s), %d operators compiled, %d left to PyTorch%s" %
              (kind, regions, compiled, len(fallbacks), "".join("\n  fallback %s: %s" % f for f in fallbacks)),
              file=sys.stderr)
    return make_boxed_func(fused.forward)


def backend(gm, example_inputs, options=None, **kwargs):
    """The torch.compile backend: torch.compile(model, backend="tessera",
    options={"target": "cpu" | "interp", "threads": N, "cache_dir": path,
    "exact": bool}). exact (default: for training graphs only) gives up
    the algorithms less accurate than direct summation (Winograd)."""
    opts = _options(dict(options or {}, **kwargs))

    def forward(g, inputs):
        return compile_graph(g, inputs, opts, "forward")

    def backward(g, inputs):
        return compile_graph(g, inputs, opts, "backward")

    def inference(g, inputs):
        return compile_graph(g, inputs, opts, "inference")

    return aot_module_simplified(gm, example_inputs, fw_compiler=forward, bw_compiler=backward,
                                 inference_compiler=inference, decompositions=decompositions())


def explain(model, *inputs, **options):
    """Compile model with the tessera backend, run it once on inputs, and
    return the Report: regions, compiled operators, and every operator left
    to PyTorch with the reason (TESSERA_LOG=1 prints the same as it
    compiles)."""
    import torch._dynamo
    torch._dynamo.reset()
    start = len(REPORT.graphs)
    compiled = torch.compile(model, backend=lambda gm, ex: backend(gm, ex, options))
    compiled(*inputs)
    r = Report()
    r.graphs = REPORT.graphs[start:]
    return r
