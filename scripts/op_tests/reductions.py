"""Golden cases of the reductions: reduce_*, argmax/argmin, cumulative,
reduce_window; and the exact Python arithmetic (pyvals, combine, store)
the other generators build their expected values with."""
from .common import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403

# ==== reductions ===========================================================

def identity(kind, dt):
    """The value an empty reduction (or window padding) of `kind` yields."""
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if dt in FLOATS:
        return -INF if kind == "max" else INF
    lo, hi = int_range(dt)
    return lo if kind == "max" else hi


def combine(kind, acc, v):
    """One step of a reduction over Python numbers; NaN wins for max/min."""
    if kind == "sum":
        return acc + v
    if kind == "prod":
        return acc * v
    if isinstance(acc, float) or isinstance(v, float):
        return fmax(acc, v) if kind == "max" else fmin(acc, v)
    return max(acc, v) if kind == "max" else min(acc, v)


def pyvals(x):
    """Elements as Python floats (exact: every float dtype fits a double) or ints."""
    dt = tsname(x)
    conv = float if dt in FLOATS else int
    return np.array([conv(v) for v in x.reshape(-1)], dtype=object).reshape(x.shape)


def store(vals, dt):
    """Python numbers into dt: floats rounded once, integers wrapped."""
    vals = np.asarray(vals, dtype=object)
    if dt in FLOATS:
        return to_dtype(vals.astype(np.float64), dt)
    flat = [wrap(int(v), dt) for v in vals.reshape(-1)]
    return np.array(flat, dtype=object).reshape(vals.shape).astype(NP[dt])


def reduce_expected(x, kind, axes):
    dt = tsname(x)
    v = pyvals(x)
    keep = [i for i in range(x.ndim) if i not in axes]
    v = np.transpose(v, keep + list(axes))
    out_shape = v.shape[:len(keep)]
    rows = v.reshape(int(np.prod(out_shape, dtype=np.int64)), -1)
    res = []
    for row in rows:
        acc = identity(kind, dt)
        acc = float(acc) if dt in FLOATS else acc
        for e in row:
            acc = combine(kind, acc, e)
        res.append(acc)
    return store(np.array(res, dtype=object).reshape(out_shape), dt)


def reduce_case(op, case, x, axes, tol=None):
    kind = op[len("reduce_"):]
    single(op, case, [x], [reduce_expected(x, kind, axes)], attrs=[("axes", ints(axes))], tol=tol)


def gen_reduce():
    def r(op, case):
        return rng_for(op, case)
    op = "reduce_sum"
    reduce_case(op, "f32_axis1", rand(r(op, "f32_axis1"), (3, 4), "f32"), [1])
    reduce_case(op, "f64_axes_2_0", rand(r(op, "f64_axes_2_0"), (2, 3, 4), "f64"), [2, 0])
    reduce_case(op, "i32_wrap", rand(r(op, "i32_wrap"), (4, 3), "i32"), [0])
    reduce_case(op, "f16_all", exact_half(r(op, "f16_all"), (2, 5), "f16"), [0, 1])
    reduce_case(op, "u8_wrap", rand(r(op, "u8_wrap"), (6,), "u8"), [0])
    reduce_case(op, "f32_no_axes", rand(r(op, "f32_no_axes"), (2, 2), "f32"), [])
    reduce_case(op, "f32_empty", np.zeros((3, 0), np.float32), [1])
    reduce_case(op, "i64_axis1", arr([[1, 2], [3, 4], [(1 << 62), (1 << 62)]], "i64"), [1])
    reduce_case(op, "f32_special", arr([[INF, 1.0], [INF, -INF], [NAN, 0.0]], "f32"), [1])
    # rows of 1000 through the CPU kernel's f32 blocks (D27): two 3e38 in
    # one lane's block overflow its f32 partial where the reference's f64
    # sum does not (the row is summed again in order, D48); an inf; an
    # inf and a -inf
    rows = rand(r(op, "f32_long_rows"), (4, 1000), "f32")
    rows[1, :] = 0.0
    rows[1, 0] = rows[1, 16] = 3e38
    rows[1, 500] = -3e38
    rows[2, 300] = INF
    rows[3, 200], rows[3, 201] = INF, -INF
    reduce_case(op, "f32_long_rows", rows, [1])
    op = "reduce_prod"
    reduce_case(op, "f32_axis1", rand(r(op, "f32_axis1"), (2, 3), "f32", 0.5, 1.5), [1])
    reduce_case(op, "i32_wrap", rand(r(op, "i32_wrap"), (3, 4), "i32", -1000, 1000), [1])
    reduce_case(op, "f64_empty", np.zeros((0, 2), np.float64), [0])
    reduce_case(op, "i8_wrap", arr([[3, -5, 7], [-128, -1, 1], [2, 2, 2]], "i8"), [1])
    reduce_case(op, "f16_exact", arr([[1, -2, 0.5], [4, 0.25, -1]], "f16"), [0])
    reduce_case(op, "f32_special", arr([[INF, 0.0], [NAN, 1.0], [-2.0, INF]], "f32"), [1])
    reduce_case(op, "u64_all", arr([[3, 5], [1 << 40, 1 << 30]], "u64"), [0, 1])
    for op in ("reduce_max", "reduce_min"):
        reduce_case(op, "f32_nan", arr([[1.0, NAN, 3.0], [-1.0, -INF, 0.5], [2.0, 2.0, INF]], "f32"), [1])
        reduce_case(op, "f64_empty", np.zeros((2, 0), np.float64), [1])
        reduce_case(op, "i8_empty", np.zeros((0,), np.int8), [0])
        reduce_case(op, "u16_axis0", rand(r(op, "u16_axis0"), (3, 4), "u16"), [0])
        reduce_case(op, "i64_all", arr([[-(1 << 63), 5], [(1 << 63) - 1, -1]], "i64"), [0, 1])
        reduce_case(op, "f16_axes", rand(r(op, "f16_axes"), (2, 3, 2), "f16"), [0, 2])
        reduce_case(op, "u32_empty", np.zeros((2, 0, 3), np.uint32), [1, 0])
        # rows of 1000: the CPU kernel's 64-lane loop, 16-lane loop and
        # scalar tail (D47); a NaN in the tail, one +0 among -0s, one -0
        # among +0s, a NaN in the 64-lane loop and one in the 16-lane loop
        # (the fast lanes skip NaNs and mix zeros' signs; D48 folds such
        # rows again with the exact rule)
        rows = rand(r(op, "f32_long_rows"), (6, 1000), "f32")
        rows[0, 997] = NAN
        rows[1, :] = -0.0
        rows[1, 700] = 0.0
        rows[2, :] = 0.0
        rows[2, 100] = -0.0
        rows[4, 300] = NAN
        rows[5, 970] = NAN
        reduce_case(op, "f32_long_rows", rows, [1])


def arg_expected(x, axis, is_max, select_last):
    """Index along axis of the max (min); NaN beats every number; ties
    (-0 == +0, NaN == NaN) pick the first index, or the last with select_last."""
    v = np.moveaxis(pyvals(x), axis, -1)
    out_shape = v.shape[:-1]
    res = []
    for row in v.reshape(-1, v.shape[-1]):
        nans = [i for i, e in enumerate(row) if isinstance(e, float) and math.isnan(e)]
        if nans:     # NaN is the most extreme value for both, and NaNs tie
            res.append(nans[-1] if select_last else nans[0])
            continue
        best = max(row) if is_max else min(row)
        hits = [i for i, e in enumerate(row) if e == best]
        res.append(hits[-1] if select_last else hits[0])
    return np.array(res, dtype=np.int64).reshape(out_shape)


def arg_case(op, case, x, axis, select_last=0):
    attrs = [("axis", str(axis))] + ([("select_last", "1")] if select_last else [])
    single(op, case, [x], [arg_expected(x, axis, op == "argmax", select_last)], attrs=attrs)


def gen_arg():
    ties = arr([[1.0, 3.0, 3.0, -2.0, 3.0], [0.0, -0.5, -0.5, 2.0, -0.5], [4.0, 4.0, 4.0, 4.0, 4.0]], "f32")
    for op in ("argmax", "argmin"):
        arg_case(op, "f32_ties_first", ties, 1)
        arg_case(op, "f32_ties_last", ties, 1, select_last=1)
        arg_case(op, "f32_nan", arr([[1.0, NAN, 5.0, NAN], [-INF, 2.0, INF, 0.0]], "f32"), 1)
        arg_case(op, "f32_nan_last", arr([[1.0, NAN, 5.0, NAN], [-0.0, 0.0, -0.0, 1.0]], "f32"), 1, 1)
        arg_case(op, "i32_3d", rand(rng_for(op, "i32_3d"), (2, 3, 4), "i32", -5, 5), 1)
        arg_case(op, "u8_axis0", rand(rng_for(op, "u8_axis0"), (6,), "u8"), 0)
        arg_case(op, "f64_axis0", rand(rng_for(op, "f64_axis0"), (4, 3), "f64"), 0)
        arg_case(op, "f16_axis2", rand(rng_for(op, "f16_axis2"), (2, 2, 3), "f16"), 2)
        arg_case(op, "i64_edges", arr([[-(1 << 63), (1 << 63) - 1, 0], [7, 7, -(1 << 63)]], "i64"), 1, 1)
        # rows past a compiled kernel's vector lanes, ties and a NaN
        long = np.round(rand(rng_for(op, "f32_long"), (3, 300), "f32") * 4) / 4
        long[1, 200] = NAN
        arg_case(op, "f32_long", long, 1)
        arg_case(op, "f32_long_last_axis0", long.T.copy(), 0, 1)


def cumulative_expected(x, kind, axis, exclusive, reverse):
    dt = tsname(x)
    v = np.moveaxis(pyvals(x), axis, -1)
    out = np.empty(v.shape, dtype=object)
    flat_in, flat_out = v.reshape(-1, v.shape[-1]), out.reshape(-1, v.shape[-1])
    for row_in, row_out in zip(flat_in, flat_out):
        order = range(len(row_in) - 1, -1, -1) if reverse else range(len(row_in))
        acc = identity(kind, dt)
        acc = float(acc) if dt in FLOATS else acc
        for i in order:
            if exclusive:
                row_out[i] = acc
                acc = combine(kind, acc, row_in[i])
            else:
                acc = combine(kind, acc, row_in[i])
                row_out[i] = acc
    return store(np.moveaxis(out, -1, axis), dt)


def cumulative_case(case, x, kind, axis, exclusive=0, reverse=0):
    attrs = [("kind", kind), ("axis", str(axis))]
    attrs += [("exclusive", "1")] if exclusive else []
    attrs += [("reverse", "1")] if reverse else []
    single("cumulative", case, [x], [cumulative_expected(x, kind, axis, exclusive, reverse)], attrs=attrs)


def gen_cumulative():
    def r(case):
        return rng_for("cumulative", case)
    cumulative_case("sum_f32", rand(r("sum_f32"), (3, 4), "f32"), "sum", 1)
    cumulative_case("sum_i32_excl", rand(r("sum_i32_excl"), (4, 2), "i32"), "sum", 0, exclusive=1)
    cumulative_case("prod_f64_rev", rand(r("prod_f64_rev"), (2, 5), "f64", 0.5, 2), "prod", 1, reverse=1)
    cumulative_case("max_f32_nan", arr([[1.0, 5.0], [NAN, 2.0], [3.0, 7.0], [-INF, 6.0]], "f32"), "max", 0)
    cumulative_case("min_i64_excl_rev", rand(r("min_i64_excl_rev"), (2, 3, 4), "i64"), "min", 2, 1, 1)
    cumulative_case("sum_u8_wrap", rand(r("sum_u8_wrap"), (7,), "u8"), "sum", 0)
    cumulative_case("max_i8_excl", arr([[-5, 3, -128, 100]], "i8"), "max", 1, exclusive=1)
    cumulative_case("sum_f16_rev", exact_half(r("sum_f16_rev"), (6,), "f16"), "sum", 0, reverse=1)
    cumulative_case("prod_i32_wrap", arr([1000, 1000, 1000, -7, 3], "i32"), "prod", 0)
    cumulative_case("min_f32_excl", arr([3.0, 1.0, NAN, 0.5], "f32"), "min", 0, exclusive=1)
    # long lanes along a middle axis, both directions (compiled: a carried
    # accumulator per lane, strided)
    cumulative_case("sum_f32_mid_excl_rev", rand(r("sum_f32_mid"), (2, 40, 3), "f32"), "sum", 1, 1, 1)
    cumulative_case("max_f64_mid", rand(r("max_f64_mid"), (2, 40, 3), "f64"), "max", 1)


def reduce_window_expected(x, kind, window, strides, dil, lo, hi):
    dt = tsname(x)
    v = pyvals(x)
    ident = identity(kind, dt)
    ident = float(ident) if dt in FLOATS else ident
    padded = np.full([n + a + b for n, a, b in zip(x.shape, lo, hi)], ident, dtype=object)
    padded[tuple(slice(a, a + n) for a, n in zip(lo, x.shape))] = v
    out_shape = [(p - (d * (w - 1) + 1)) // s + 1 for p, w, s, d in zip(padded.shape, window, strides, dil)]
    out = np.empty(out_shape, dtype=object)
    for o in np.ndindex(*out_shape):
        acc = ident
        for k in np.ndindex(*window):
            acc = combine(kind, acc, padded[tuple(oi * s + ki * d for oi, s, ki, d in zip(o, strides, k, dil))])
        out[o] = acc
    return store(out, dt)


def reduce_window_case(case, x, kind, window, strides, dil=None, lo=None, hi=None):
    n = x.ndim
    dil, lo, hi = dil or [1] * n, lo or [0] * n, hi or [0] * n
    attrs = [("kind", kind), ("window", ints(window)), ("strides", ints(strides)),
             ("dilations", ints(dil)), ("pad_lo", ints(lo)), ("pad_hi", ints(hi))]
    single("reduce_window", case, [x], [reduce_window_expected(x, kind, window, strides, dil, lo, hi)],
           attrs=attrs)


def gen_reduce_window():
    def r(case):
        return rng_for("reduce_window", case)
    reduce_window_case("max_pool_f32", rand(r("max_pool_f32"), (1, 1, 4, 4), "f32"), "max",
                       [1, 1, 2, 2], [1, 1, 2, 2])
    reduce_window_case("sum_1d_pad_f32", rand(r("sum_1d_pad_f32"), (5,), "f32"), "sum", [3], [1], None, [1], [1])
    reduce_window_case("sum_dilated_f64", rand(r("sum_dilated_f64"), (4, 5), "f64"), "sum",
                       [2, 3], [2, 1], [1, 2], [0, 1], [1, 0])
    reduce_window_case("min_pad_i32", rand(r("min_pad_i32"), (3, 4), "i32", -50, 50), "min",
                       [2, 2], [1, 1], None, [1, 1], [1, 1])
    reduce_window_case("max_strided_f16", rand(r("max_strided_f16"), (8,), "f16"), "max", [2], [3], [2])
    reduce_window_case("sum_whole_i64", rand(r("sum_whole_i64"), (2, 3), "i64"), "sum", [2, 3], [1, 1])
    reduce_window_case("max_nan_pad_f32", arr([[1.0, NAN, 2.0], [-INF, 0.0, 3.0]], "f32"), "max",
                       [2, 2], [1, 2], None, [0, 1], [1, 0])
    reduce_window_case("sum_wrap_u8", arr([200, 100, 50, 255], "u8"), "sum", [2], [1])
    # padded pools whose compiled loops split into border / interior / border
    # (lower.c window_nest): borders on both sides, an empty interior,
    # dilation with strides and uneven pads
    reduce_window_case("max_pool_borders_f32", rand(r("max_pool_borders_f32"), (1, 2, 9, 11), "f32"), "max",
                       [1, 1, 3, 3], [1, 1, 2, 2], None, [0, 0, 1, 1], [0, 0, 1, 1])
    reduce_window_case("sum_no_interior_f32", rand(r("sum_no_interior_f32"), (1, 1, 2, 2), "f32"), "sum",
                       [1, 1, 3, 3], [1, 1, 1, 1], None, [0, 0, 1, 1], [0, 0, 1, 1])
    reduce_window_case("min_dilated_pads_f32", rand(r("min_dilated_pads_f32"), (2, 10, 7), "f32"), "min",
                       [1, 3, 2], [1, 2, 3], [1, 2, 1], [0, 2, 1], [0, 1, 1])
    # max/min pools of planes, which compile as a vertical pass into a row
    # scratch and a horizontal pass out of it (lower_window.c, D121): ceil
    # mode's extra right and bottom pad, NaNs and signed zeros; a dilated,
    # strided width with uneven pads
    ceil = np.round(rand(r("max_ceil_nan_f32"), (1, 2, 8, 9), "f32") * 2) / 2
    ceil[0, 0, 3, 4], ceil[0, 1, 7, 8] = NAN, NAN
    ceil[0, 1, 0, :3] = [-0.0, 0.0, -0.0]
    reduce_window_case("max_ceil_nan_f32", ceil, "max", [1, 1, 3, 3], [1, 1, 2, 2], None, [0, 0, 0, 0],
                       [0, 0, 1, 1])
    reduce_window_case("min_wide_dilated_f32", rand(r("min_wide_dilated_f32"), (2, 3, 7, 12), "f32"), "min",
                       [1, 1, 2, 3], [1, 1, 1, 2], [1, 1, 1, 2], [0, 0, 1, 2], [0, 0, 1, 0])
    # unpadded max/min pools of short rows, which compile as two passes over
    # chunks of whole planes (lower_window.c window_flat, D179): NaNs and
    # signed zeros on the planes' last rows and columns, where a pass's
    # positions fold elements of the next row or plane; a dilated height;
    # a prime plane count (one chunk of all three); two chunks of 40
    planes = np.round(rand(r("max_planes_nan_f32"), (2, 3, 9, 11), "f32") * 2) / 2
    planes[0, 0, 8, 3], planes[0, 1, 4, 10], planes[1, 2, 8, 10] = NAN, -NAN, NAN
    planes[0, 2, 0, :2], planes[1, 0, 8, 8:] = [-0.0, 0.0], [0.0, -0.0, -0.0]
    reduce_window_case("max_planes_nan_f32", planes, "max", [1, 1, 3, 3], [1, 1, 2, 2], [1, 1, 2, 1], None,
                       [0, 0, 0, 1])
    reduce_window_case("min_planes_f32", rand(r("min_planes_f32"), (3, 5, 13), "f32"), "min",
                       [1, 2, 3], [1, 1, 3], [1, 1, 2])
    reduce_window_case("max_planes_chunks_f32", rand(r("max_planes_chunks_f32"), (2, 40, 10, 10), "f32"), "max",
                       [1, 1, 2, 2], [1, 1, 2, 2])
