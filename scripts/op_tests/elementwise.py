"""Golden cases of the elementwise primitives: unary, binary, cast, bitcast."""
from .common import *  # noqa: F401,F403  (the shared vocabulary of every generator)

# ==== elementwise: unary ===================================================

SHAPES = [(3, 4), (7,), (2, 1, 3), ()]


def unary_float(op, fn, lo, hi, specials):
    """Random cases in each float dtype over [lo, hi], odd shapes, and the
    special values (fn on Python floats, rounded to the dtype)."""
    apply = ew_py
    for dt, shape in (("f32", (3, 4)), ("f64", (7,)), ("f16", (2, 1, 3)), ("f32", ())):
        case = "%s_%s" % (dt, "scalar" if shape == () else "random")
        x = rand_float(rng_for(op, case), shape, dt, lo, hi)
        single(op, case, [x], [apply(fn, dt, x)])
    for dt in ("f32", "f64", "f16"):
        x = arr(specials, dt)
        single(op, dt + "_special", [x], [apply(fn, dt, x)])


# The C library's functions through Python's math module (libm, so the data
# does not depend on which SIMD paths NumPy picks on the generating CPU),
# with the C answers where math raises instead.

def c_exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return INF


def c_log(x):
    return -INF if x == 0 else NAN if x < 0 else math.log(x)


def c_sqrt(x):
    return NAN if x < 0 else math.sqrt(x)


def c_trig(fn):
    return lambda x: NAN if math.isinf(x) else fn(x)


def odd_integer(y):
    return math.isfinite(y) and y == math.floor(y) and math.fmod(y, 2) != 0


def c_pow(x, y):
    try:
        return math.pow(x, y)
    except OverflowError:     # |result| too large: the sign follows x^odd
        return -INF if x < 0 and odd_integer(y) else INF
    except ValueError:        # 0^negative is a pole; negative^fraction is NaN
        if x == 0:
            return math.copysign(INF, x) if odd_integer(y) else INF
        return NAN


def gen_transcendental():
    base = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.5]
    unary_float("exp", c_exp, -10, 10, base + [88.8, -104.0, 12.0])
    unary_float("log", c_log, 0.01, 100, base + [2.0, 1e-30, 1e30])
    unary_float("sqrt", c_sqrt, 0, 100, base + [4.0, 2.0, 1e-30, 6e4])
    unary_float("sin", c_trig(math.sin), -10, 10, base + [3.140625, 100.0, 1e4])
    unary_float("cos", c_trig(math.cos), -10, 10, base + [1.5703125, 100.0, 1e4])
    unary_float("tan", c_trig(math.tan), -1.5, 1.5, base + [1.5, -1.5625, 10.0])
    unary_float("tanh", math.tanh, -5, 5, base + [20.0, -20.0, 1e-5])
    unary_float("erf", math.erf, -3, 3, base + [4.0, -6.0, 1e-5])


def gen_rounding():
    vals = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.25, 0.75, 2.0, -7.0, 1e6 + 0.5,
            0.0, -0.0, INF, -INF, NAN]
    for op, fn in (("floor", np.floor), ("ceil", np.ceil), ("round", np.round)):
        for dt in FLOATS:
            x = arr([v for v in vals if dt != "f16" or not abs(v) < INF or abs(v) < 1e4], dt)
            single(op, dt + "_halves", [x], [ew_np(fn, dt, x)])
        x = rand_float(rng_for(op, "f32_random"), (3, 5), "f32", -20, 20)
        single(op, "f32_random", [x], [ew_np(fn, "f32", x)])
        x = rand_float(rng_for(op, "f64_big"), (4,), "f64", -1e17, 1e17)
        single(op, "f64_big", [x], [ew_np(fn, "f64", x)])


def trunc_div(a, b):
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trunc_rem(a, b):
    return a if b == 0 else a - b * trunc_div(a, b)


def int_pow(a, b, dt):
    if b < 0:
        return 1 if a == 1 else ((-1 if b % 2 else 1) if a == -1 else 0)
    return pow(a, b, 1 << bits(dt))


def float_sign(x):
    """-1 or 1; a zero (either sign) and NaN pass through (np.sign turns -0 into 0)."""
    return np.where((x == 0) | np.isnan(x), x, np.sign(x))


def fmax(a, b):
    """NaN if either is NaN; -0 < +0 (np.maximum returns its first operand on a tie)."""
    if math.isnan(a) or math.isnan(b):
        return NAN
    if a == b:
        return a if math.copysign(1, a) > 0 else b
    return max(a, b)


def fmin(a, b):
    if math.isnan(a) or math.isnan(b):
        return NAN
    if a == b:
        return a if math.copysign(1, a) < 0 else b
    return min(a, b)


def gen_neg_abs_sign():
    specials = [0.0, -0.0, 1.5, -2.25, INF, -INF, NAN, 1e-30]
    for op, ffn, ifn in (("neg", np.negative, lambda a: -a), ("abs", np.abs, abs),
                         ("sign", float_sign, lambda a: (a > 0) - (a < 0))):
        for dt in FLOATS:
            x = arr(specials if dt != "f16" else specials[:7], dt)
            single(op, dt + "_special", [x], [ew_np(ffn, dt, x)])
        x = rand_float(rng_for(op, "f32_random"), (2, 3, 2), "f32")
        single(op, "f32_random", [x], [ew_np(ffn, "f32", x)])
        for dt in ("i32", "i8", "u8", "i64", "u64"):
            lo, hi = int_range(dt)
            x = arr([lo, lo + 1, -1 if lo else 1, 0, 1, 7, hi], dt)
            single(op, dt + "_edges", [x], [ew_int(ifn, dt, x)])


def gen_not():
    single("not", "bool", [arr([True, False, True], "bool")], [arr([False, True, False], "bool")])
    x = rand(rng_for("not", "bool_2d"), (3, 4), "bool")
    single("not", "bool_2d", [x], [np.logical_not(x)])
    for dt in ("i32", "u8", "i64", "i8", "u16"):
        lo, hi = int_range(dt)
        x = np.concatenate([arr([lo, hi, 0, 1], dt), rand(rng_for("not", dt), (4,), dt)])
        single("not", dt, [x], [ew_int(lambda a: ~a, dt, x)])


# ==== elementwise: binary ==================================================

FLOAT_EDGES = [0.0, -0.0, 1.0, -1.5, 3.0, INF, -INF, NAN]


def cross(va, vb, dt):
    """Every pair (va[i], vb[j]) as two arrays of shape [len(va), len(vb)]."""
    a = np.array([[x for _ in vb] for x in va], dtype=object)
    b = np.array([[y for y in vb] for _ in va], dtype=object)
    if dt == "bool" or dt in FLOATS:
        return a.astype(np.float64).astype(NP[dt]), b.astype(np.float64).astype(NP[dt])
    return a.astype(NP[dt]), b.astype(NP[dt])


def int_edges(dt):
    lo, hi = int_range(dt)
    small = [-7, -1] if is_signed(dt) else []
    return sorted(set([lo, lo + 1, hi - 1, hi, 0, 1, 3] + small))


def binary(op, a, b, expected, case, tol=None):
    single(op, case, [a, b], [expected], tol=tol)


def float_binary(op, fn, lo=-3.0, hi=3.0, blo=None, bhi=None, edges=FLOAT_EDGES, py=False):
    """fn is a NumPy float64 function, or with py=True a Python one on floats."""
    apply = ew_py if py else ew_np
    blo = lo if blo is None else blo
    bhi = hi if bhi is None else bhi
    for dt, shape in (("f32", (3, 4)), ("f64", (5,)), ("f16", (2, 3)), ("f32", ())):
        case = "%s_%s" % (dt, "scalar" if shape == () else "random")
        r = rng_for(op, case)
        a, b = rand_float(r, shape, dt, lo, hi), rand_float(r, shape, dt, blo, bhi)
        binary(op, a, b, apply(fn, dt, a, b), case)
    for dt in ("f32", "f64"):
        a, b = cross(edges, edges, dt)
        binary(op, a, b, apply(fn, dt, a, b), dt + "_special")


def int_binary(op, fn, dtypes=("i32", "u8", "i64", "i8", "u64"), bvals=None):
    for dt in dtypes:
        vb = bvals(dt) if bvals else int_edges(dt)
        a, b = cross(int_edges(dt), vb, dt)
        binary(op, a, b, ew_int(fn, dt, a, b), dt + "_edges")
    r = rng_for(op, "i16_random")
    a, b = rand(r, (4, 5), "i16"), rand(r, (4, 5), "i16")
    binary(op, a, b, ew_int(fn, "i16", a, b), "i16_random")


def pow_exponents(dt):
    lo, hi = int_range(dt)
    neg = [-3, -2, -1] if is_signed(dt) else []
    return neg + [0, 1, 2, 5, bits(dt) - 1, bits(dt), hi]


def gen_arith():
    float_binary("add", np.add)
    int_binary("add", lambda a, b: a + b)
    float_binary("sub", np.subtract)
    int_binary("sub", lambda a, b: a - b)
    float_binary("mul", np.multiply)
    int_binary("mul", lambda a, b: a * b)
    float_binary("div", np.divide)
    int_binary("div", trunc_div)
    float_binary("rem", np.fmod, -10, 10)
    int_binary("rem", trunc_rem)
    float_binary("pow", c_pow, 0.1, 3, -3, 3, FLOAT_EDGES + [0.5, -8.0, 1.0 / 3], py=True)
    for dt in ("i32", "u8", "i64", "i8", "u64"):
        a, b = cross(int_edges(dt) + ([-3, -2, 2] if is_signed(dt) else [2]), pow_exponents(dt), dt)
        binary("pow", a, b, ew_int(lambda x, y, d=dt: int_pow(x, y, d), dt, a, b), dt + "_edges")
    float_binary("max", fmax, py=True)
    int_binary("max", max)
    float_binary("min", fmin, py=True)
    int_binary("min", min)
    float_binary("atan2", math.atan2, py=True)


def gen_logic():
    for op, fn in (("and", lambda a, b: a & b), ("or", lambda a, b: a | b), ("xor", lambda a, b: a ^ b)):
        a, b = cross([False, True], [False, True], "bool")
        binary(op, a, b, fn(a, b), "bool_table")
        r = rng_for(op, "bool_random")
        a, b = rand(r, (3, 5), "bool"), rand(r, (3, 5), "bool")
        binary(op, a, b, fn(a, b), "bool_random")
        for dt in ("i32", "u8", "i64", "u16"):
            r = rng_for(op, dt)
            a, b = rand(r, (6,), dt), rand(r, (6,), dt)
            binary(op, a, b, ew_int(fn, dt, a, b), dt + "_random")


def shl(a, b, dt):
    return wrap(a << b, dt) if 0 <= b < bits(dt) else 0


def shr(a, b, dt):
    if 0 <= b < bits(dt):
        return a >> b
    return -1 if a < 0 else 0


def shift_counts(dt):
    n = bits(dt)
    c = [0, 1, 3, n - 1, n, n + 1]
    c += [-1, -n] if is_signed(dt) else []
    c += [int_range(dt)[1]]
    return c


def gen_shifts():
    for op, fn in (("shl", shl), ("shr", shr)):
        for dt in ("i32", "u8", "i64", "u64", "i8", "u16"):
            a, b = cross(int_edges(dt) + ([-5] if is_signed(dt) else [0x55]), shift_counts(dt), dt)
            binary(op, a, b, ew_int(lambda x, y, d=dt: fn(x, y, d), dt, a, b), dt + "_edges")


def gen_compare():
    ops = (("eq", lambda a, b: a == b), ("ne", lambda a, b: a != b),
           ("lt", lambda a, b: a < b), ("le", lambda a, b: a <= b))
    for op, fn in ops:
        for dt in ("f32", "f64"):
            a, b = cross(FLOAT_EDGES, FLOAT_EDGES, dt)
            binary(op, a, b, fn(a.astype(np.float64), b.astype(np.float64)), dt + "_special")
        r = rng_for(op, "f16_random")
        a, b = exact_half(r, (3, 4), "f16", -2, 2), exact_half(r, (3, 4), "f16", -2, 2)
        binary(op, a, b, fn(a.astype(np.float64), b.astype(np.float64)), "f16_random")
        r = rng_for(op, "i32_random")
        a, b = rand(r, (4, 4), "i32", -3, 3), rand(r, (4, 4), "i32", -3, 3)
        binary(op, a, b, np.array(fn(a.astype(object), b.astype(object)), dtype=np.bool_), "i32_random")
        big = {"u64": [0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 2, (1 << 64) - 1],
               "i64": [-(1 << 63), -(1 << 53) - 1, -1, 0, 1 << 53, (1 << 53) + 1, (1 << 63) - 1]}
        for dt, vals in big.items():
            a, b = cross(vals, vals, dt)
            binary(op, a, b, np.array(fn(a.astype(object), b.astype(object)), dtype=np.bool_),
                   dt + "_wide")
        a, b = cross([False, True], [False, True], "bool")
        binary(op, a, b, fn(a.astype(int), b.astype(int)), "bool_table")
        a, b = cross(int_edges("u8"), int_edges("u8"), "u8")
        binary(op, a, b, fn(a.astype(int), b.astype(int)), "u8_edges")


def gen_select():
    for dt, shape in (("f32", (3, 4)), ("i64", (5,)), ("bool", (2, 3)), ("u8", (2, 2, 2)),
                      ("f16", (4,)), ("f64", ())):
        r = rng_for("select", dt)
        p = rand(r, shape, "bool")
        a, b = rand(r, shape, dt), rand(r, shape, dt)
        if dt == "f32":
            a.reshape(-1)[0], b.reshape(-1)[1] = NAN, -INF
        single("select", dt, [p, a, b], [np.where(p, a, b)])


# ==== cast and bitcast =====================================================

def round_int_bits(m, p):
    """Integer m rounded to p significant bits, to nearest even."""
    n = abs(m).bit_length()
    if n <= p:
        return m
    shift = n - p
    q, r = divmod(abs(m), 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return (q << shift) * (1 if m >= 0 else -1)


MANT = {"f16": 11, "f32": 24, "f64": 53}


def cast_scalar(v, src, to):
    """One value converted as the cast primitive does (python value in, python value out)."""
    if to == "bool":
        return bool(v != 0)
    if src in FLOATS and to in FLOATS:
        return v                                   # rounded once by the final astype
    if src in FLOATS:                              # truncate, saturate, NaN -> 0
        if math.isnan(v):
            return 0
        lo, hi = int_range(to)
        if math.isinf(v):
            return hi if v > 0 else lo
        return min(max(math.trunc(v), lo), hi)
    m = int(v)
    if to in FLOATS:
        return float(round_int_bits(m, MANT[to]))  # exact in a double: the astype only stores
    return wrap(m, to)


def cast_expected(x, to):
    src = tsname(x)
    vals = [cast_scalar(float(v) if src in FLOATS else int(v), src, to) for v in x.reshape(-1)]
    if to in FLOATS:
        return to_dtype(np.array(vals, dtype=np.float64).reshape(x.shape), to)
    return np.array(vals, dtype=object).reshape(x.shape).astype(NP[to])


def cast_case(case, x, to):
    single("cast", case, [x], [cast_expected(x, to)], attrs=[("dtype", to)], tol=EXACT)


def f32_to_bf16_to_f32(x):
    """Round f32 values to bf16 (nearest even; NaN stays NaN) and widen back."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    out = r.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(NAN), out).astype(np.float32)


def gen_cast():
    two31, two63, two64 = float(1 << 31), float(1 << 63), float(1 << 64)
    cast_case("f32_to_i32", arr([1.5, -1.5, 2.9, -2.9, 0.0, -0.0, NAN, INF, -INF, 3e9, -3e9,
                                 2147483520.0, two31, -two31], "f32"), "i32")
    cast_case("f64_to_u8", arr([-1.0, -0.5, 0.99, 255.4, 255.9, 256.0, 1e300, NAN, -INF, 128.7], "f64"), "u8")
    cast_case("f32_to_i64", arr([two63, -two63, 1e19, -1e19, NAN, 123.9, -0.9], "f32"), "i64")
    cast_case("f64_to_u64", arr([two64, two63, 1.5e19, -1.0, NAN, 0.5, INF], "f64"), "u64")
    cast_case("f16_to_i8", arr([127.5, 128.0, -128.9, -129.0, 1000.0, NAN, -INF, 3.75], "f16"), "i8")
    cast_case("f32_to_f16", arr([65504.0, 65520.0, 65519.0, 1e-8, 6e-8, NAN, -INF, 0.1, 1 / 3, -0.0], "f32"), "f16")
    # 1 + 2^-11 + 2^-40 rounds up to f16 when rounded once, but to 1 through f32
    cast_case("f64_to_f16_once", arr([1 + 2.0 ** -11 + 2.0 ** -40, -(1 + 2.0 ** -11 + 2.0 ** -40),
                                      1 + 2.0 ** -11, 2049.0, 1e-9, 1e5], "f64"), "f16")
    cast_case("f64_to_f32", arr([0.1, 1e39, -1e-46, 1 + 2.0 ** -24 + 2.0 ** -60, NAN, -0.0], "f64"), "f32")
    cast_case("f16_to_f64", arr([0.1, 65504.0, 6e-8, NAN, -INF, -0.0], "f16"), "f64")
    # 2^60 + 2^36 + 1 rounds up to f32 when rounded once, but down through f64
    cast_case("i64_to_f32", arr([(1 << 60) + (1 << 36) + 1, -((1 << 60) + (1 << 36) + 1),
                                 (1 << 24) + 1, (1 << 63) - 1, -(1 << 63), 0, -7], "i64"), "f32")
    cast_case("u64_to_f32", arr([(1 << 64) - 1, (1 << 63) + (1 << 39) + 1, 16777217, 0], "u64"), "f32")
    cast_case("u64_to_f64", arr([(1 << 64) - 1, (1 << 53) + 1, (1 << 53) + 3, 12345], "u64"), "f64")
    cast_case("u16_to_f16", arr([65535, 65519, 65520, 2049, 2051, 0], "u16"), "f16")
    cast_case("i32_to_u8", arr([-1, 256, 300, -129, 127, 0, 255], "i32"), "u8")
    cast_case("u8_to_i8", arr([200, 255, 127, 128, 0], "u8"), "i8")
    cast_case("i8_to_u64", arr([-1, -128, 5, 0], "i8"), "u64")
    cast_case("i64_to_i16", arr([70000, -70000, 32768, -32769, 5], "i64"), "i16")
    cast_case("i32_to_bool", arr([0, 1, -1, 256, 7], "i32"), "bool")
    cast_case("f32_to_bool", arr([0.0, -0.0, NAN, 1e-45, -INF, 2.0], "f32"), "bool")
    cast_case("bool_to_f32", arr([True, False, True], "bool"), "f32")
    cast_case("bool_to_i64", arr([[True, False], [False, True]], "bool"), "i64")
    # bf16 has no NumPy type: round trip through it inside the graph
    x = arr([1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 3.4028235e38, NAN, 1e-40, -2.5, 0.1, 65504.0], "f32")
    bf16_roundtrip("cast", "f32_bf16_f32", [x], None, f32_to_bf16_to_f32(x), EXACT)


def bf16_roundtrip(op, case, inputs, attrs, expected, tol):
    """inputs (f32) -> cast to bf16 -> op (unless op is cast) -> cast to f32."""
    pnames = [chr(ord("a") + i) for i in range(len(inputs))]
    params = [(n, aty(x)) for n, x in zip(pnames, inputs)]
    shape = inputs[0].shape
    nodes = [Node("cast", [n], [(n + "h", ty("bf16", shape))], [("dtype", "bf16")]) for n in pnames]
    src = pnames[0] + "h"
    if op != "cast":
        nodes.append(Node(op, [n + "h" for n in pnames], [("y", ty("bf16", shape))], attrs or []))
        src = "y"
    nodes.append(Node("cast", [src], [("r", aty(expected))], [("dtype", "f32")]))
    write_case(op, case, graph_text(params, nodes, ["r"]), inputs, [expected], tol)


def gen_bf16():
    r = rng_for("add", "bf16")
    a = f32_to_bf16_to_f32(rand_float(r, (2, 3), "f32"))
    b = f32_to_bf16_to_f32(rand_float(r, (2, 3), "f32"))
    bf16_roundtrip("add", "bf16", [a, b], None, f32_to_bf16_to_f32(a.astype(np.float64) + b), EXACT)
    bf16_roundtrip("mul", "bf16", [a, b], None, f32_to_bf16_to_f32(a.astype(np.float64) * b), EXACT)
    x = f32_to_bf16_to_f32(rand_float(rng_for("exp", "bf16"), (5,), "f32"))
    bf16_roundtrip("exp", "bf16", [x], None, f32_to_bf16_to_f32(ew_py(c_exp, "f64", x)), (8e-3, 1e-6))



def bitcast_case(case, x, to):
    single("bitcast", case, [x], [x.view(NP[to])], attrs=[("dtype", to)], tol=EXACT)


def gen_bitcast():
    bitcast_case("f32_to_i32", arr([1.0, -0.0, INF, -INF, NAN, 1e-45, -2.5], "f32"), "i32")
    bitcast_case("i32_to_f32", arr([0x3F800000, -0x80000000, 0x7F800000, 1, 0x40490FDB], "i32"), "f32")
    bitcast_case("u32_to_f32", arr([0xFF800000, 0x00800000, 0x7F7FFFFF], "u32"), "f32")
    bitcast_case("f16_to_u16", arr([[1.0, -2.0], [65504.0, 6e-8]], "f16"), "u16")
    bitcast_case("i16_to_f16", arr([0x3C00, -0x0400, 0x7BFF, 1], "i16"), "f16")
    bitcast_case("f64_to_i64", arr([1.0, -0.0, 5e-324, -INF], "f64"), "i64")
    bitcast_case("u64_to_f64", arr([0x3FF0000000000000, 0x8000000000000001, 0x7FEFFFFFFFFFFFFF], "u64"), "f64")
    bitcast_case("u8_to_i8", arr([0, 127, 128, 255], "u8"), "i8")
    bitcast_case("i32_to_u32", arr([[-1, 0], [-2147483648, 5]], "i32"), "u32")
