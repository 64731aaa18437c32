"""One region of an FX graph that tessera runs: its nodes assembled from
primitives into a tessera.Graph, compiled once into a Session, and an
nn.Module that runs it on torch tensors (in and out by DLPack, no
copies where memory allows)."""
import operator

import torch
from torch.utils.dlpack import from_dlpack, to_dlpack

import tessera

from .lower import LOWERINGS, Lowerer, fake, type_text


def build(gm, name):
    """A tessera.Graph from a fused submodule's graph: its tensor
    placeholders are the graph's inputs, in order (the positions are
    returned); its size placeholders (SymInts) are not inputs: tessera
    binds the symbols from the tensors' shapes."""
    L = Lowerer(name)
    tensors = []
    for i, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder"):
        if isinstance(fake(n), torch.Tensor):
            shape = fake(n).shape
            token = len(shape) == 1 and isinstance(shape[0], int) and shape[0] == 0
            tensors.append((i, fake(n).dtype if token else None))
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            if isinstance(fake(n), torch.Tensor):
                L.env[n] = L.g.input(None, type_text(fake(n)))
        elif n.op == "call_function" and n.target is operator.getitem:
            L.env[n] = L.env[n.args[0]][n.args[1]]
        elif n.op == "call_function":
            L.env[n] = LOWERINGS[n.target](L, n)
        elif n.op == "output":
            outs = n.args[0]
            single = not isinstance(outs, (tuple, list))
            vals = [L.env[o] for o in ([outs] if single else outs)]
            L.g.output(*vals)
            return L.g, single, tensors, L.seed_input is not None
    raise tessera.InternalError("a region without an output")


class Region(torch.nn.Module):
    """Runs a compiled region: tensors in, tensors out, as the submodule
    it replaces did."""

    def __init__(self, graph, single, tensors, target, threads, cache_dir, exact=False, seeded=False):
        super().__init__()
        self.seeded = seeded
        self.session = tessera.Session(graph, target=target, threads=threads, cache_dir=cache_dir, exact=exact)
        self.single = single
        self.tensors = tensors

    def forward(self, *args):
        # AOTAutograd passes an effect token (an empty tensor in the
        # graph) as None at run time
        ins = [torch.empty(0, dtype=empty) if args[i] is None and empty is not None else args[i]
               for i, empty in self.tensors]
        # capsules both ways: torch's Python-level __dlpack__ methods cost
        # more than a small region's run
        ins = [to_dlpack(a.detach() if a.requires_grad else a) for a in ins]
        if self.seeded:   # random draws: a new seed from torch's generator, so manual_seed replays a run
            ins.append(to_dlpack(torch.randint(-(1 << 63), (1 << 63) - 1, (), dtype=torch.int64)))
        outs = [from_dlpack(t.__dlpack__()) for t in self.session.run_tensors(ins)]
        return outs[0] if self.single else tuple(outs)
