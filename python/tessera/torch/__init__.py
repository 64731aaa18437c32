"""tessera.torch — the torch.compile backend:

    model = torch.compile(model, backend="tessera")     # registered at pip install
    tessera.torch.explain(model, x)                      # what ran where, and why

Every core ATen operator tessera lowers runs compiled by tessera (its
primitives, fused, generated C); anything else falls back to eager
PyTorch, never an error. docs/torch.md has the details."""
from .backend import REPORT, Report, backend, explain  # noqa: F401

__all__ = ["backend", "explain", "Report", "REPORT"]
