"""tessera.numpy's shape functions and indexing (reshape, transpose,
concatenate, x[...], take, ...), on traced arrays; numpy's own otherwise."""
import builtins as _b

import numpy as np

from ._np_core import _any_t, _axes, _common, _dim_value, _frame, _is_t, _lift, _op, _unsupported, _w, astype
from ._trace import Dim, Tracer, TracerError, attr_dims, dim, ts_dtype
from ._trace import prod as _size_of


# ---- shapes --------------------------------------------------------------------------------------


def _shape_arg(shape):
    if isinstance(shape, (int, np.integer, Dim)):
        return [shape]
    return [d if isinstance(d, Dim) else int(d) for d in shape]


def reshape(a, shape, /, order="C"):
    """numpy.reshape, traced (order "C" only); one entry may be -1, and
    sizes may be Dims (tnp.reshape(x, (x.shape[0] * 2, -1)))."""
    if not _is_t(a):
        return np.reshape(a, shape, order=order)
    if order != "C":
        raise _unsupported("reshape: only order='C' is supported")
    f = _frame()
    new = _shape_arg(shape)
    if _b.sum(1 for d in new if isinstance(d, int) and d == -1) > 1:
        raise ValueError("reshape: only one dimension can be -1")
    if _b.any(isinstance(d, int) and d == -1 for d in new):
        known = _size_of(d for d in new if not (isinstance(d, int) and d == -1))
        total = a.size
        if isinstance(total, int) and isinstance(known, int):
            if known == 0 or total % known:
                raise ValueError("cannot reshape array of size %d into shape %s" % (total, tuple(new)))
            rest = total // known
        else:
            rest = dim("(%s) / (%s)" % (total, known))
        new = [rest if isinstance(d, int) and d == -1 else d for d in new]
    if list(a.shape) == new:
        return a
    return _w(f, _op(f, "reshape", f.value(a), shape=attr_dims(new)))


def ravel(a, order="C"):
    """numpy.ravel, traced."""
    return reshape(a, -1, order=order) if _is_t(a) else np.ravel(a, order=order)


def transpose(a, axes=None):
    """numpy.transpose, traced."""
    if not _is_t(a):
        return np.transpose(a, axes)
    perm = list(range(a.ndim))[::-1] if axes is None else [int(p) % _b.max(a.ndim, 1) for p in axes]
    if sorted(perm) != list(range(a.ndim)):
        raise ValueError("axes don't match array")
    if perm == list(range(a.ndim)):
        return a
    f = _frame()
    return _w(f, _op(f, "transpose", f.value(a), perm=perm))


def swapaxes(a, axis1, axis2):
    """numpy.swapaxes, traced."""
    if not _is_t(a):
        return np.swapaxes(a, axis1, axis2)
    perm = list(range(a.ndim))
    i, j = _axes(axis1, a.ndim)[0], _axes(axis2, a.ndim)[0]
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    """numpy.moveaxis, traced."""
    if not _is_t(a):
        return np.moveaxis(a, source, destination)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [s % a.ndim for s in src]
    dst = [d % a.ndim for d in dst]
    order = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def expand_dims(a, axis):
    """numpy.expand_dims, traced."""
    if not _is_t(a):
        return np.expand_dims(a, axis)
    axs = _axes(axis, a.ndim + (1 if isinstance(axis, int) else len(axis)))
    shape = list(a.shape)
    for ax in axs:
        shape.insert(ax, 1)
    return reshape(a, shape)


def squeeze(a, axis=None):
    """numpy.squeeze, traced (a dynamic dim is never squeezed)."""
    if not _is_t(a):
        return np.squeeze(a, axis)
    axs = [i for i, d in enumerate(a.shape) if isinstance(d, int) and d == 1] if axis is None else \
        _axes(axis, a.ndim)
    for i in axs:
        if not (isinstance(a.shape[i], int) and a.shape[i] == 1):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return reshape(a, [d for i, d in enumerate(a.shape) if i not in axs])


def broadcast_to(a, shape):
    """numpy.broadcast_to, traced."""
    if not _is_t(a):
        return np.broadcast_to(a, shape)
    f = _frame()
    shape = _shape_arg(shape)
    if list(a.shape) == shape:
        return a
    if len(shape) < a.ndim:
        raise ValueError("broadcast_to: cannot broadcast %s to %s" % (a.shape, tuple(shape)))
    axes = list(range(len(shape) - a.ndim, len(shape)))
    return _w(f, _op(f, "broadcast", f.value(a), shape=attr_dims(shape), axes=axes))


def atleast_1d(a):
    return reshape(a, (1,)) if _is_t(a) and a.ndim == 0 else (a if _is_t(a) else np.atleast_1d(a))


def atleast_2d(a):
    if not _is_t(a):
        return np.atleast_2d(a)
    return a if a.ndim >= 2 else reshape(a, (1,) + a.shape if a.ndim else (1, 1))


def concatenate(arrays, axis=0, dtype=None):
    """numpy.concatenate, traced (axis=None flattens first)."""
    arrays = list(arrays)
    if not _any_t(*arrays):
        return np.concatenate(arrays, axis=axis, dtype=dtype)
    f = _frame()
    if axis is None:
        arrays, axis = [ravel(a) if _is_t(a) else np.ravel(a) for a in arrays], 0
    dt = ts_dtype(dtype) if dtype is not None else _common(*arrays)
    vals = [_lift(f, a, dt) for a in arrays]
    ax = _axes(axis, vals[0].ndim)[0]
    return _w(f, vals[0] if len(vals) == 1 else _op(f, "concat", *vals, axis=ax))


def stack(arrays, axis=0):
    """numpy.stack, traced."""
    arrays = list(arrays)
    if not _any_t(*arrays):
        return np.stack(arrays, axis=axis)
    nd = np.ndim(arrays[0]) if not _is_t(arrays[0]) else arrays[0].ndim
    ax = _axes(axis, nd + 1)[0]
    return concatenate([expand_dims(asarray(a), ax) for a in arrays], axis=ax)


def vstack(tup):
    tup = list(tup)
    return concatenate([atleast_2d(asarray(a)) for a in tup], 0) if _any_t(*tup) else np.vstack(tup)


def hstack(tup):
    tup = list(tup)
    if not _any_t(*tup):
        return np.hstack(tup)
    arrs = [atleast_1d(asarray(a)) for a in tup]
    return concatenate(arrs, 0 if arrs[0].ndim == 1 else 1)


def split(a, indices_or_sections, axis=0):
    """numpy.split, traced: a number of equal sections or static split points."""
    if not _is_t(a):
        return np.split(a, indices_or_sections, axis=axis)
    ax = _axes(axis, a.ndim)[0]
    n = a.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if isinstance(n, int):
            if n % k:
                raise ValueError("array split does not result in an equal division")
            pts = [n // k * i for i in range(1, k)]
        else:
            pts = [dim("(%s) / %d * %d" % (n, k, i)) for i in range(1, k)]
    else:
        pts = [int(p) for p in indices_or_sections]
    bounds = [0] + pts + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        idx = [slice(None)] * a.ndim
        idx[ax] = slice(lo, hi) if isinstance(lo, int) and isinstance(hi, int) else _DimSlice(lo, hi)
        out.append(getitem(a, tuple(idx)))
    return out


class _DimSlice:
    """A slice whose bounds are Dims, taken as they are (no clamping)."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi


def flip(m, axis=None):
    """numpy.flip, traced."""
    if not _is_t(m):
        return np.flip(m, axis)
    f = _frame()
    return _w(f, _op(f, "reverse", f.value(m), axes=_axes(axis, m.ndim)))


def pad(array, pad_width, mode="constant", constant_values=0):
    """numpy.pad, traced (mode "constant" only)."""
    if not _is_t(array):
        return np.pad(array, pad_width, mode=mode, constant_values=constant_values)
    if mode != "constant":
        raise _unsupported("pad: only mode='constant' is supported")
    f = _frame()
    pw = np.broadcast_to(np.asarray(pad_width, np.int64), (array.ndim, 2))
    v = f.value(array)
    return _w(f, _op(f, "pad", v, _lift(f, constant_values, v.dtype), lo=[int(p) for p in pw[:, 0]],
                     hi=[int(p) for p in pw[:, 1]], interior=[0] * array.ndim))


def asarray(a, dtype=None):
    """a as an array: a Tracer stays one (cast to dtype if given), a list
    holding Tracers is stacked, anything else is numpy.asarray."""
    if _is_t(a):
        return a if dtype is None else astype(a, dtype)
    if isinstance(a, (list, tuple)) and _any_t(*a):
        r = stack([asarray(x) for x in a])
        return r if dtype is None else astype(r, dtype)
    return np.asarray(a, dtype)


array = asarray


# ---- indexing ------------------------------------------------------------------------------------


def _norm_index(f, idx, n):
    """An integer index Value with negative entries wrapped by n."""
    zero = _lift(f, 0, idx.dtype)
    return _op(f, "select", _op(f, "lt", idx, zero), idx + _dim_value(f, n, idx.dtype), idx)


def _slice_bounds(s, n):
    """(reverse, start, limit, stride) of slice s over an axis of size n; a
    negative step reverses the axis first and slices that. A static n
    clamps bounds as numpy does; a dynamic one (a Dim) is taken to be large
    enough (x[1:] of f32[n] is f32[n - 1]): the slice checks it at run time."""
    step = 1 if s.step is None else int(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if isinstance(n, int):
        start, stop, step = s.indices(n)
        count = len(range(start, stop, step))
        if step > 0:
            return False, start, start + (count - 1) * step + 1 if count else start, step
        first = start                  # elements first, first + step, ...: reversed, they start at n - 1 - first
        return True, n - 1 - first, n - 1 - first + (count - 1) * -step + 1 if count else n - 1 - first, -step

    def norm(i):
        return n + int(i) if int(i) < 0 else int(i)
    if step > 0:
        return False, 0 if s.start is None else norm(s.start), n if s.stop is None else norm(s.stop), step
    first = n - 1 if s.start is None else norm(s.start)
    last = -1 if s.stop is None else norm(s.stop)
    return True, n - 1 - first, n - 1 - last, -step


def _index_kind(k):
    if isinstance(k, (slice, _DimSlice)):
        return "slice"
    if isinstance(k, (bool, np.bool_)):
        raise _unsupported("indexing with a Python bool is not supported in a trace")
    if isinstance(k, (int, np.integer)):
        return "int"
    if isinstance(k, Tracer):
        if k._v.dtype == "bool":
            raise TracerError("boolean mask indexing inside a trace: the result's size depends on the values; "
                              "use tessera.numpy.where instead")
        return "dyn" if k.ndim == 0 else "arr"
    a = np.asarray(k)
    if a.dtype == bool:
        if a.ndim != 1:
            raise _unsupported("only 1-d boolean masks are supported as indices")
        return "arr"
    if a.dtype.kind not in "iu":
        raise IndexError("only integers, slices, None, Ellipsis and integer arrays are valid indices")
    return "int" if a.ndim == 0 else "arr"


def getitem(x, key):
    """x[key] for a traced x: ints, slices, None, Ellipsis (slice, reverse
    and reshape nodes), traced integer scalars (dynamic_slice: clamped into
    range), and one integer array (gather)."""
    f = _frame()
    key = list(key) if isinstance(key, tuple) else [key]
    key = [np.asarray(k) if isinstance(k, list) else k for k in key]
    if _b.sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = _b.sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > x.ndim:
        raise IndexError("too many indices for array: array is %d-dimensional, but %d were indexed"
                         % (x.ndim, used))
    ell = [i for i, k in enumerate(key) if k is Ellipsis]
    if ell:
        key[ell[0]:ell[0] + 1] = [slice(None)] * (x.ndim - used)
    else:
        key += [slice(None)] * (x.ndim - used)
    kinds = [None if k is None else _index_kind(k) for k in key]
    if kinds.count("arr") > 1:
        raise _unsupported("indexing with more than one integer array is not supported in a trace")
    v, shape = f.value(x), list(x.shape)
    start, limit, stride, rev, ax = [], [], [], [], 0
    for k, kind in zip(key, kinds):
        if kind is None:
            continue
        n = shape[ax]
        if kind == "slice" and isinstance(k, _DimSlice):
            b = (False, k.lo, k.hi, 1)
        elif kind == "slice":
            b = _slice_bounds(k, n)
        elif kind == "int":
            i = int(k)
            if isinstance(n, int) and not -n <= i < n:
                raise IndexError("index %d is out of bounds for axis %d with size %d" % (i, ax, n))
            i = n + i if i < 0 else i
            b = (False, i, i + 1, 1)
        else:
            b = (False, 0, n, 1)
        if b[0]:
            rev.append(ax)
        start.append(b[1])
        limit.append(b[2])
        stride.append(b[3])
        ax += 1
    if rev:
        v = _op(f, "reverse", v, axes=rev)
    if _b.any(isinstance(s, Dim) or s != 0 for s in start) or limit != shape or _b.any(s != 1 for s in stride):
        v = _op(f, "slice", v, start=attr_dims(start), limit=attr_dims(limit), stride=stride)
    consumed = [kind for kind in kinds if kind is not None]
    dyn = [i for i, kind in enumerate(consumed) if kind == "dyn"]
    if dyn:
        dk = [k for k, kind in zip(key, kinds) if kind is not None]
        starts = [_op(f, "reshape", _norm_index(f, _lift(f, dk[i], "i64"), shape[i]), shape=[1])
                  if i in dyn else _lift(f, np.zeros(1, np.int64)) for i in range(len(consumed))]
        sizes = [1 if i in dyn else d for i, d in enumerate(v.shape)]
        v = _op(f, "dynamic_slice", v, _op(f, "concat", *starts, axis=0) if len(starts) > 1 else starts[0],
                 sizes=sizes)
    # drop the int axes, insert the None ones, then gather the array axis
    cur, new, ax, arr_at = list(v.shape), [], 0, None
    for k, kind in zip(key, kinds):
        if kind is None:
            new.append(1)
            continue
        if kind == "arr":
            arr_at = len(new)
        if kind not in ("int", "dyn"):
            new.append(cur[ax])
        ax += 1
    if new != cur:
        v = _op(f, "reshape", v, shape=[d if isinstance(d, int) else str(d) for d in new])
    if arr_at is None:
        return _w(f, v)
    k = key[kinds.index("arr")]
    n = x.shape[[i for i, kind in enumerate(kinds) if kind is not None].index(kinds.index("arr"))]
    if isinstance(k, Tracer):
        idx = _norm_index(f, f.value(k), n)
    else:
        a = np.asarray(k)
        a = np.nonzero(a)[0] if a.dtype == bool else a.astype(np.int64)
        if isinstance(n, int):
            if a.size and (a.min() < -n or a.max() >= n):
                raise IndexError("index out of bounds for axis with size %d" % n)
            idx = _lift(f, np.where(a < 0, a + n, a))
        else:
            idx = _norm_index(f, _lift(f, a), n) if a.size and a.min() < 0 else _lift(f, a)
    v = _op(f, "gather", v, idx, axis=arr_at)
    # numpy moves the indexed dims to the front when ints and the array are not adjacent
    adv = [i for i, kind in enumerate(kinds) if kind in ("int", "dyn", "arr")]
    if len(adv) > 1 and adv != list(range(adv[0], adv[-1] + 1)) and arr_at != 0:
        nd = len(v.shape)
        ni = len(idx.shape)
        perm = list(range(arr_at, arr_at + ni)) + [i for i in range(nd) if not arr_at <= i < arr_at + ni]
        v = _op(f, "transpose", v, perm=perm)
    return _w(f, v)


def take(a, indices, axis=None):
    """numpy.take, traced (mode 'raise': out-of-range traced indices are a
    run-time error of the gather)."""
    if not _any_t(a, indices):
        return np.take(a, indices, axis=axis)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    ax = _axes(axis, a.ndim)[0]
    key = [slice(None)] * ax + [indices if _is_t(indices) else np.asarray(indices)]
    if not _is_t(indices) and np.ndim(indices) == 0:
        key[-1] = int(indices)
    return getitem(a, tuple(key))

