"""The ATen lowerings, one family per file; importing them fills the table."""
from . import creation, elementwise, index, layout, linalg, nn, reduce
from .table import CHECKS, DYNAMIC, LOWERINGS, SIZE_ARGS, TS_DTYPE, Lowerer, fake, type_text

__all__ = ["CHECKS", "DYNAMIC", "LOWERINGS", "SIZE_ARGS", "TS_DTYPE", "Lowerer", "fake", "type_text",
           "creation", "elementwise", "index", "layout", "linalg", "nn", "reduce"]
