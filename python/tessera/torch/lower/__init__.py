"""The ATen lowerings, one family per file; importing them fills the table."""
from . import creation, elementwise, layout, linalg, nn, reduce
from .table import CHECKS, LOWERINGS, TS_DTYPE, Lowerer, fake, type_text

__all__ = ["CHECKS", "LOWERINGS", "TS_DTYPE", "Lowerer", "fake", "type_text",
           "creation", "elementwise", "layout", "linalg", "nn", "reduce"]
