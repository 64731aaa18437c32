"""The ATen lowerings, one family per file; importing them fills the table."""
from . import complex, creation, decomp, eigen, elementwise, index, layout, linalg, nn, reduce, rng, rnn, scatter, special
from .table import CHECKS, DYNAMIC, LOWERINGS, SIZE_ARGS, TS_DTYPE, Lowerer, fake, type_text

__all__ = ["CHECKS", "DYNAMIC", "LOWERINGS", "SIZE_ARGS", "TS_DTYPE", "Lowerer", "fake", "type_text",
           "complex", "creation", "decomp", "eigen", "elementwise", "index", "layout", "linalg", "nn", "reduce", "rng", "rnn", "scatter", "special"]
