"""The operators and ndarray methods of Tracer, over tessera.numpy's
functions, and numpy's dispatch protocols (np.exp(tracer) and
np.sum(tracer) call tessera.numpy's exp and sum)."""
from ._trace import Tracer


def install(tnp: dict) -> None:
    """Attach to Tracer its operators and methods; tnp is tessera.numpy's
    namespace."""
    def fn(name):
        return tnp[name]

    def binop(name):
        f = fn(name)
        return (lambda self, other: f(self, other)), (lambda self, other: f(other, self))

    for dunder, name in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "true_divide"),
                         ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "power"),
                         ("matmul", "matmul"), ("and", "bitwise_and"), ("or", "bitwise_or"),
                         ("xor", "bitwise_xor"), ("lshift", "left_shift"), ("rshift", "right_shift")]:
        fwd, rev = binop(name)
        setattr(Tracer, "__%s__" % dunder, fwd)
        setattr(Tracer, "__r%s__" % dunder, rev)
    for dunder, name in [("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"),
                         ("gt", "greater"), ("ge", "greater_equal")]:
        setattr(Tracer, "__%s__" % dunder, binop(name)[0])
    for dunder, name in [("neg", "negative"), ("pos", "positive"), ("abs", "absolute"), ("invert", "invert")]:
        setattr(Tracer, "__%s__" % dunder, (lambda f: lambda self: f(self))(fn(name)))
    Tracer.__hash__ = None   # as ndarray's: == builds a node
    Tracer.__getitem__ = lambda self, key: tnp["getitem"](self, key)
    Tracer.__setitem__ = _setitem
    Tracer.T = property(lambda self: tnp["transpose"](self), doc="The axes reversed.")
    Tracer.mT = property(lambda self: tnp["swapaxes"](self, -1, -2), doc="The last two axes swapped.")

    for name in ["sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any", "all", "cumsum",
                 "cumprod", "ravel", "squeeze", "swapaxes", "clip", "dot", "round", "take", "astype", "flatten"]:
        target = fn("ravel" if name == "flatten" else name)
        setattr(Tracer, name, (lambda f: lambda self, *a, **k: f(self, *a, **k))(target))
    Tracer.reshape = lambda self, *shape, order="C": tnp["reshape"](
        self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape, order=order)
    Tracer.transpose = lambda self, *axes: tnp["transpose"](
        self, (axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes) or None)
    Tracer.__array_ufunc__ = _array_ufunc(tnp)
    Tracer.__array_function__ = _array_function(tnp)


def _setitem(self, key, value):
    raise TypeError("traced arrays are immutable: build a new one (tessera.numpy.where, concatenate, pad)")


# numpy's ufunc names that tessera.numpy spells differently
_UFUNC_ALIASES = {"absolute": "absolute", "divide": "true_divide"}


def _array_ufunc(tnp):
    def array_ufunc(self, ufunc, method, *inputs, **kwargs):
        name = _UFUNC_ALIASES.get(ufunc.__name__, ufunc.__name__)
        f = tnp.get(name)
        if method != "__call__" or f is None or kwargs:
            return NotImplemented
        return f(*inputs)
    return array_ufunc


def _array_function(tnp):
    public = set(tnp.get("__all__", ()))

    def array_function(self, func, types, args, kwargs):
        f = tnp.get(func.__name__)
        if f is None or func.__name__ not in public:
            return NotImplemented
        return f(*args, **kwargs)
    return array_function
