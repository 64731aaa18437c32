"""tessera.lax: the primitives themselves on traced arrays, for what numpy
has no function for (convolution, pooling), as jax.lax offers.

    h = tessera.lax.conv(x, w, strides=(1, 1), padding=(1, 1))     # NCHW, OIHW
    p = tessera.lax.reduce_window(h, "max", (1, 1, 2, 2), (1, 1, 2, 2))
    y = tessera.lax.primitive("erf", h)                              # any primitive

Inside a trace they build nodes (docs/primitives.md has their meaning);
outside one, each call compiles and runs a one-node graph (convenient, not
fast: use them under tessera.jit). They are differentiable like every
primitive (docs/autodiff.md)."""
from typing import Any, Sequence

import numpy as np

from ._np_core import _lift
from ._trace import current
from .autodiff import _staged


def primitive(name: str, *operands: Any, **attrs: Any) -> Any:
    """The primitive `name` on operands (traced arrays, arrays or numbers),
    attributes spelt as the IR text spells them (lists for lists); its first
    result."""
    if current() is None:
        return _staged(lambda *ops: primitive(name, *ops, **attrs))(*[np.asarray(o) for o in operands])
    f = current()
    return f.wrap(f.graph.op(name, *[_lift(f, o) for o in operands], **attrs))


def conv(x: Any, w: Any, strides: Sequence[int] = None, padding: Sequence[int] = None,
         dilation: Sequence[int] = None, groups: int = 1) -> Any:
    """N-d cross-correlation, x [N, C, ...] and w [O, C/groups, ...] (as
    torch.nn.functional.conv2d without bias); padding the same on both sides."""
    k = len(np.shape(w)) - 2 if not hasattr(w, "ndim") else w.ndim - 2
    ones, zeros = [1] * k, [0] * k
    pad = list(padding) if padding is not None else zeros
    return primitive("conv", x, w, strides=list(strides) if strides else ones, pad_lo=pad, pad_hi=pad,
                     lhs_dilation=ones, rhs_dilation=list(dilation) if dilation else ones, groups=groups)


def reduce_window(x: Any, kind: str, window: Sequence[int], strides: Sequence[int] = None,
                  padding: Sequence[int] = None) -> Any:
    """Pooling: kind "sum", "max" or "min" over windows (one entry per dim
    of x), padding the same on both sides."""
    r = len(window)
    pad = list(padding) if padding is not None else [0] * r
    return primitive("reduce_window", x, kind=kind, window=list(window), strides=list(strides or [1] * r),
                     dilations=[1] * r, pad_lo=pad, pad_hi=pad)


__all__ = ["primitive", "conv", "reduce_window"]
