"""One region of an FX graph that tessera runs: its nodes assembled from
primitives into a tessera.Graph, compiled once into a Session, and an
nn.Module that runs it on torch tensors (in and out by DLPack, no
copies where memory allows)."""
import operator

import torch
from torch.utils.dlpack import from_dlpack, to_dlpack

import tessera

from .lower import Lowerer, fake, type_text
from .lower.table import lowering


def build(gm, name):
    """A tessera.Graph from a fused submodule's graph: its tensor
    placeholders are the graph's inputs, in order (the positions are
    returned); its size placeholders (SymInts) are not inputs: tessera
    binds the symbols from the tensors' shapes. Also returned: whether
    the graph draws random numbers (it takes a seed input) and the
    positions of the complex results."""
    L = Lowerer(name)
    tensors = []   # (position, dtype of an effect token or None, complex)
    for i, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder"):
        if isinstance(fake(n), torch.Tensor):
            shape = fake(n).shape
            token = len(shape) == 1 and isinstance(shape[0], int) and shape[0] == 0
            tensors.append((i, fake(n).dtype if token else None, fake(n).dtype.is_complex))
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            if isinstance(fake(n), torch.Tensor):
                L.env[n] = L.g.input(None, type_text(fake(n)))
        elif n.op == "call_function" and n.target is operator.getitem:
            L.env[n] = L.env[n.args[0]][n.args[1]]
        elif n.op == "call_function":
            L.env[n] = lowering(n)(L, n)
        elif n.op == "output":
            outs = n.args[0]
            single = not isinstance(outs, (tuple, list))
            outs = [outs] if single else list(outs)
            L.g.output(*[L.env[o] for o in outs])
            complex_outs = {k for k, o in enumerate(outs) if fake(o).dtype.is_complex}
            return L.g, single, tensors, L.seed_input is not None, complex_outs
    raise tessera.InternalError("a region without an output")


class Region(torch.nn.Module):
    """Runs a compiled region: tensors in, tensors out, as the submodule
    it replaces did."""

    def __init__(self, graph, single, tensors, target, threads, cache_dir, exact=False, seeded=False,
                 complex_outs=()):
        super().__init__()
        self.seeded = seeded
        self.complex_outs = complex_outs
        self.session = tessera.Session(graph, target=target, threads=threads, cache_dir=cache_dir, exact=exact)
        self.single = single
        self.tensors = tensors

    def forward(self, *args):
        # AOTAutograd passes an effect token (an empty tensor in the
        # graph) as None at run time
        ins = [torch.empty(0, dtype=empty) if args[i] is None and empty is not None else
               torch.view_as_real(args[i].resolve_conj()) if cplx else args[i]
               for i, empty, cplx in self.tensors]
        # capsules both ways: torch's Python-level __dlpack__ methods cost
        # more than a small region's run
        ins = [to_dlpack(a.detach() if a.requires_grad else a) for a in ins]
        if self.seeded:   # random draws: a new seed from torch's generator, so manual_seed replays a run
            ins.append(to_dlpack(torch.randint(-(1 << 63), (1 << 63) - 1, (), dtype=torch.int64)))
        outs = [from_dlpack(t.__dlpack__()) for t in self.session.run_tensors(ins)]
        for k in self.complex_outs:   # tessera's (real, imaginary) pairs, viewed as complex
            outs[k] = torch.view_as_complex(outs[k])
        return outs[0] if self.single else tuple(outs)
