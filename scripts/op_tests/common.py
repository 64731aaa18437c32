"""What every generator shares: dtypes, the IR text form, writing cases, values."""
import math
import os
import shutil
import sys
import zlib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "ops")

NP = {
    "bool": np.bool_, "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16,
    "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
}
NAME = {np.dtype(v): k for k, v in NP.items()}
FLOATS = ("f16", "f32", "f64")
NAN, INF = float("nan"), float("inf")


def tsname(a):
    return NAME[np.asarray(a).dtype]


def bits(dt):
    return np.dtype(NP[dt]).itemsize * 8


def is_signed(dt):
    return dt[0] == "i"


def int_range(dt):
    b = bits(dt)
    return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if is_signed(dt) else (0, (1 << b) - 1)


def wrap(v, dt):
    """Python int v reduced modulo 2^bits into dt's range (two's complement)."""
    b = bits(dt)
    v &= (1 << b) - 1
    if is_signed(dt) and v >> (b - 1):
        v -= 1 << b
    return v


# ==== the text form ========================================================

def ty(dt, dims):
    return "%s[%s]" % (dt, ", ".join(str(d) for d in dims))


def aty(a):
    a = np.asarray(a)
    return ty(tsname(a), a.shape)


def ints(v):
    return "[%s]" % ", ".join(str(int(x)) for x in v)


def fmt_float(v, dt):
    """Fewest %g digits that read back to the same value of dt (the printer's rule)."""
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    conv = {"f64": float, "f32": np.float32, "f16": np.float16}[dt]
    for p in range(1, 18):
        s = "%.*g" % (p, v)
        with np.errstate(over="ignore"):
            back = conv(float(s))
        if back == conv(v) and math.copysign(1, float(s)) == math.copysign(1, v):
            return s
    return "%.17g" % v


def fmt_elem(x, dt):
    if dt in FLOATS:
        return fmt_float(x, dt)
    return str(int(x))


def tensor_text(a):
    """A const's value: flat row-major elements, or splat(x) when all bytes agree."""
    a = np.asarray(a)
    dt = tsname(a)
    flat = a.reshape(-1)
    if flat.size > 1 and all(flat[i].tobytes() == flat[0].tobytes() for i in range(flat.size)):
        return "splat(%s)" % fmt_elem(flat[0], dt)
    return "[%s]" % ", ".join(fmt_elem(x, dt) for x in flat)


class Node:
    """One node line: results (name, type) = op(operands) {attrs} regions."""

    def __init__(self, op, operands, results, attrs=(), regions=()):
        self.op, self.operands, self.results = op, operands, results
        self.attrs, self.regions = list(attrs), list(regions)

    def lines(self, indent):
        pad = "  " * indent
        res = ", ".join("%%%s: %s" % r for r in self.results)
        s = "%s%s = %s(%s)" % (pad, res, self.op, ", ".join("%" + o for o in self.operands))
        if self.attrs:
            s += " {%s}" % ", ".join("%s=%s" % kv for kv in self.attrs)
        out = []
        for name, params, body, yields in self.regions:
            s += " %s(%s) {" % (name, ", ".join("%%%s: %s" % p for p in params))
            out.append(s)
            for n in body:
                out.extend(n.lines(indent + 1))
            out.append("%s  yield %s" % (pad, ", ".join("%" + y for y in yields)))
            s = pad + "}"
        out.append(s)
        return out


def graph_text(params, nodes, results):
    head = "graph @t(%s) {" % ", ".join("%%%s: %s" % p for p in params)
    lines = [head]
    for n in nodes:
        lines.extend(n.lines(1))
    lines.append("  return %s" % ", ".join("%" + r for r in results))
    lines.append("}")
    return "\n".join(lines) + "\n"


# ==== writing cases ========================================================

CASES = {}   # op -> list of case names, for the summary and duplicate checks
EXACT = (0.0, 0.0)   # tol.txt for results that have one right answer to the bit


def seed_of(name):
    return zlib.crc32(name.encode())


def rng_for(op, case):
    return np.random.default_rng(seed_of(op + "/" + case))


def write_case(op, case, text, inputs, expected, tol=None):
    names = CASES.setdefault(op, [])
    assert case not in names, (op, case)
    names.append(case)
    d = os.path.join(OUT, op, case)
    os.makedirs(d)
    with open(os.path.join(d, "model.ir"), "w", newline="\n") as f:
        f.write(text)
    for k, a in enumerate(inputs):
        np.save(os.path.join(d, "input_%d.npy" % k), np.array(a, order="C"), allow_pickle=False)
    for k, a in enumerate(expected):
        np.save(os.path.join(d, "expected_%d.npy" % k), np.array(a, order="C"), allow_pickle=False)
    if tol:
        with open(os.path.join(d, "tol.txt"), "w", newline="\n") as f:
            f.write("rtol %g atol %g\n" % tol)


# Ops whose float results the contracts fix to the bit (docs/primitives-*.md):
# all but the C-library functions and the float sums and products, which a
# backend may compute in another order. Their cases get tol.txt "rtol 0 atol 0".
EXACT_OPS = {
    "const", "iota", "neg", "abs", "sign", "sqrt", "floor", "ceil", "round", "add", "sub", "mul", "div",
    "rem", "max", "min", "select", "cast", "bitcast", "reduce_max", "reduce_min", "reshape", "broadcast",
    "transpose", "slice", "pad", "concat", "reverse", "gather", "scatter", "dynamic_slice",
    "dynamic_update_slice", "sort", "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
}


def single(op, case, inputs, expected, attrs=(), out_types=None, tol=None, in_types=None):
    """A one-node graph: inputs %a, %b, ... -> results %r (or %r0, %r1, ...).
    in_types/out_types replace the types read off the arrays (symbolic dims)."""
    if tol is None and op in EXACT_OPS and any(tsname(e) in FLOATS for e in expected):
        tol = EXACT
    pnames = [chr(ord("a") + i) for i in range(len(inputs))]
    params = list(zip(pnames, in_types or [aty(x) for x in inputs]))
    rnames = ["r"] if len(expected) == 1 else ["r%d" % i for i in range(len(expected))]
    types = out_types or [aty(e) for e in expected]
    node = Node(op, pnames, list(zip(rnames, types)), attrs)
    write_case(op, case, graph_text(params, [node], rnames), inputs, expected, tol)


# ==== values ===============================================================

def arr(v, dt):
    with np.errstate(over="ignore"):    # an f16 special value may overflow to inf on purpose
        return np.array(v, dtype=NP[dt])


def rand_float(rng, shape, dt, lo=-3.0, hi=3.0):
    return rng.uniform(lo, hi, size=shape).astype(NP[dt])


def rand_int(rng, shape, dt, lo=None, hi=None):
    rlo, rhi = int_range(dt)
    lo = rlo if lo is None else lo
    hi = rhi if hi is None else hi
    return np.array([int(x) for x in rng.integers(lo, hi, size=shape, endpoint=True).reshape(-1)],
                    dtype=object).reshape(shape).astype(NP[dt])


def rand(rng, shape, dt, lo=None, hi=None):
    if dt == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt in FLOATS:
        return rand_float(rng, shape, dt, -3.0 if lo is None else lo, 3.0 if hi is None else hi)
    return rand_int(rng, shape, dt, lo, hi)


def exact_half(rng, shape, dt, lo=-8, hi=8):
    """Multiples of 1/4 in [lo, hi]: sums and small products are exact in f16,
    so any accumulation order gives the same answer."""
    return (rng.integers(lo * 4, hi * 4, size=shape, endpoint=True) / 4.0).astype(NP[dt])


def to_dtype(x64, dt):
    """float64 results rounded once to dt."""
    with np.errstate(all="ignore"):
        return np.asarray(x64, dtype=np.float64).astype(NP[dt])


def ew_int(fn, dt, *arrs, out_dt=None):
    """Elementwise over Python ints, wrapped into out_dt (default dt)."""
    out_dt = out_dt or dt
    flat = [np.asarray(a).reshape(-1) for a in arrs]
    vals = [wrap(int(fn(*(int(f[i]) for f in flat))), out_dt) for i in range(flat[0].size)]
    return np.array(vals, dtype=object).reshape(np.asarray(arrs[0]).shape).astype(NP[out_dt])


def ew_np(fn, dt, *arrs):
    """A NumPy ufunc in the precision the contract computes dt in: f64 in
    f64; f32, f16 and bf16 in f32 (IEEE single), rounded once to dt. For the
    exactly specified ops this is the right answer to the bit."""
    work = np.float64 if dt == "f64" else np.float32
    with np.errstate(all="ignore"):
        r = fn(*(np.asarray(a, dtype=work) for a in arrs))
        return np.asarray(r).astype(NP[dt])


def ew_py(fn, dt, *arrs):
    """A Python float function applied element by element (math.erf, ...)."""
    flat = [np.asarray(a, dtype=np.float64).reshape(-1) for a in arrs]
    r = np.array([fn(*(float(f[i]) for f in flat)) for i in range(flat[0].size)], dtype=np.float64)
    return to_dtype(r.reshape(np.asarray(arrs[0]).shape), dt)
