"""Golden cases of layout, indexing, contraction, data-dependent, control,
collectives and leaves."""
from .common import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403

# ==== layout ===============================================================

def dims(v):
    return ints(v)


def gen_reshape():
    def r(case):
        return rng_for("reshape", case)
    for case, x, shape in (("f32_2x3_3x2", rand(r("a"), (2, 3), "f32"), (3, 2)),
                           ("i64_flat_3d", rand(r("b"), (6,), "i64"), (1, 2, 3)),
                           ("bool_4d_2d", rand(r("c"), (2, 1, 2, 3), "bool"), (4, 3)),
                           ("f16_scalar_1", arr(2.5, "f16"), (1, 1)),
                           ("u8_to_scalar", arr([7], "u8"), ()),
                           ("f64_empty", np.zeros((0, 3), np.float64), (3, 0, 5))):
        single("reshape", case, [x], [x.reshape(shape)], attrs=[("shape", dims(shape))])


def gen_broadcast():
    def r(case):
        return rng_for("broadcast", case)
    for case, x, shape, axes in (("f32_row", rand(r("a"), (3,), "f32"), (2, 3), [1]),
                                 ("i32_col_ones", rand(r("b"), (2, 1), "i32"), (2, 4), [0, 1]),
                                 ("f64_scalar", arr(1.5, "f64"), (2, 2), []),
                                 ("bool_one", arr([True], "bool"), (3,), [0]),
                                 ("f16_middle", rand(r("c"), (3, 1), "f16"), (2, 3, 4), [1, 2]),
                                 ("u16_empty", rand(r("d"), (1,), "u16"), (0, 3), [1])):
        # operand dim i goes to output dim axes[i]: insert the missing axes as 1s
        src = [1] * len(shape)
        for i, a in enumerate(axes):
            src[a] = x.shape[i]
        y = np.broadcast_to(x.reshape(src), shape).copy()
        single("broadcast", case, [x], [y], attrs=[("shape", dims(shape)), ("axes", ints(axes))])


def gen_transpose():
    def r(case):
        return rng_for("transpose", case)
    for case, x, perm in (("f32_2d", rand(r("a"), (2, 3), "f32"), [1, 0]),
                          ("i8_3d", rand(r("b"), (2, 3, 4), "i8"), [2, 0, 1]),
                          ("bool_3d", rand(r("c"), (2, 1, 3), "bool"), [1, 2, 0]),
                          ("f64_identity", rand(r("d"), (3, 2), "f64"), [0, 1]),
                          ("u32_4d", rand(r("e"), (1, 2, 3, 2), "u32"), [3, 1, 0, 2]),
                          ("f16_empty", np.zeros((0, 2), np.float16), [1, 0])):
        single("transpose", case, [x], [np.transpose(x, perm).copy()], attrs=[("perm", ints(perm))])


def gen_slice():
    def r(case):
        return rng_for("slice", case)
    for case, x, start, limit, stride in (
            ("f32_2d", rand(r("a"), (4, 5), "f32"), [1, 0], [3, 5], [1, 1]),
            ("i32_strided", rand(r("b"), (10,), "i32"), [1], [10], [3]),
            ("f64_empty", rand(r("c"), (3, 4), "f64"), [1, 2], [1, 4], [1, 1]),
            ("u8_3d", rand(r("d"), (3, 4, 5), "u8"), [0, 1, 1], [3, 4, 5], [2, 2, 3]),
            ("bool_full", rand(r("e"), (2, 3), "bool"), [0, 0], [2, 3], [1, 1]),
            ("f16_big_stride", rand(r("f"), (5,), "f16"), [2], [5], [7])):
        sl = tuple(slice(a, b, s) for a, b, s in zip(start, limit, stride))
        single("slice", case, [x], [x[sl].copy()],
               attrs=[("start", dims(start)), ("limit", dims(limit)), ("stride", ints(stride))])


def pad_expected(x, value, lo, hi, interior):
    y = x
    for ax in range(x.ndim):
        n, step = y.shape[ax], interior[ax] + 1
        size = (n - 1) * step + 1 if n else 0
        shape = list(y.shape)
        shape[ax] = size
        spread = np.full(shape, value, dtype=x.dtype)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(0, size, step)
        spread[tuple(idx)] = y
        # negative lo/hi crop; positive ones add the padding value
        shape[ax] = size + max(lo[ax], 0) + max(hi[ax], 0)
        grown = np.full(shape, value, dtype=x.dtype)
        idx[ax] = slice(max(lo[ax], 0), max(lo[ax], 0) + size)
        grown[tuple(idx)] = spread
        idx[ax] = slice(max(-lo[ax], 0), shape[ax] - max(-hi[ax], 0))
        y = grown[tuple(idx)]
    return y.copy()


def gen_pad():
    def r(case):
        return rng_for("pad", case)
    for case, x, v, lo, hi, interior in (
            ("f32_lo_hi", rand(r("a"), (2, 3), "f32"), 0.0, [1, 0], [0, 2], [0, 0]),
            ("i32_interior", rand(r("b"), (3,), "i32", -9, 9), -1, [0], [0], [2]),
            ("f64_crop", rand(r("c"), (4, 5), "f64"), 9.5, [-1, 2], [1, -2], [0, 1]),
            ("bool_mixed", rand(r("d"), (2, 2), "bool"), True, [1, -1], [1, 1], [1, 0]),
            ("u8_3d", rand(r("e"), (2, 1, 2), "u8"), 255, [0, 1, 0], [1, 1, 0], [0, 0, 1]),
            ("f16_nan_value", rand(r("f"), (2,), "f16"), NAN, [2], [1], [1]),
            ("i64_empty", np.zeros((0, 2), np.int64), 4, [1, 0], [1, 0], [3, 0])):
        pv = arr(v, tsname(x))
        single("pad", case, [x, pv], [pad_expected(x, pv, lo, hi, interior)],
               attrs=[("lo", ints(lo)), ("hi", ints(hi)), ("interior", ints(interior))])


def gen_concat():
    def r(case):
        return rng_for("concat", case)
    for case, xs, axis in (
            ("f32_axis0", [rand(r("a"), (2, 3), "f32"), rand(r("b"), (1, 3), "f32")], 0),
            ("i32_three_axis1", [rand(r("c"), (2, k), "i32") for k in (1, 3, 2)], 1),
            ("f64_single", [rand(r("d"), (3,), "f64")], 0),
            ("u8_with_empty", [rand(r("e"), (2, 2), "u8"), np.zeros((2, 0), np.uint8),
                               rand(r("f"), (2, 1), "u8")], 1),
            ("bool_3d", [rand(r("g"), (1, 2, 2), "bool"), rand(r("h"), (1, 2, 2), "bool")], 2),
            ("f16_four", [rand(r("i"), (1,), "f16") for _ in range(4)], 0)):
        single("concat", case, xs, [np.concatenate(xs, axis=axis)], attrs=[("axis", str(axis))])


def gen_reverse():
    def r(case):
        return rng_for("reverse", case)
    for case, x, axes in (("f32_axis0", rand(r("a"), (3, 2), "f32"), [0]),
                          ("i32_both", rand(r("b"), (2, 3), "i32"), [0, 1]),
                          ("f64_none", rand(r("c"), (4,), "f64"), []),
                          ("u8_3d_outer_inner", rand(r("d"), (2, 3, 4), "u8"), [2, 0]),
                          ("bool_1d", rand(r("e"), (5,), "bool"), [0]),
                          ("f16_empty", np.zeros((2, 0), np.float16), [1])):
        single("reverse", case, [x], [np.flip(x, axis=tuple(axes)).copy() if axes else x.copy()],
               attrs=[("axes", ints(axes))])


# ==== indexing =============================================================

def gen_gather():
    def r(case):
        return rng_for("gather", case)
    for case, x, idx, axis in (
            ("f32_rows", rand(r("a"), (4, 3), "f32"), arr([2, 0, 2], "i64"), 0),
            ("i32_cols_2d_idx", rand(r("b"), (2, 5), "i32"), arr([[4, 1], [0, 0]], "i32"), 1),
            ("f64_scalar_idx", rand(r("c"), (3, 4), "f64"), arr(1, "i64"), 0),
            ("bool_u8_idx", rand(r("d"), (2, 3, 2), "bool"), arr([1, 1, 0, 2], "u8"), 1),
            ("u16_empty_idx", rand(r("e"), (3, 2), "u16"), np.zeros((0,), np.int64), 0),
            ("f16_last_axis", rand(r("f"), (2, 2, 3), "f16"), arr([[2], [0]], "i16"), 2)):
        single("gather", case, [x, idx], [np.take(x, idx.astype(np.int64), axis=axis)],
               attrs=[("axis", str(axis))])


def scatter_expected(x, idx, upd, kind):
    """Sequential combines in row-major order of idx; a float result is
    rounded to the dtype after every single combine."""
    dt = tsname(x)
    y = pyvals(x).reshape(-1)
    for j, u in zip(idx.reshape(-1), pyvals(upd).reshape(-1)):
        j = int(j)
        y[j] = u if kind == "set" else combine({"add": "sum", "mul": "prod"}.get(kind, kind), y[j], u)
        if dt in FLOATS:
            y[j] = float(to_dtype(y[j], dt))
    if dt == "bool":
        return np.array(list(y), dtype=np.bool_).reshape(x.shape)
    return store(y.reshape(x.shape), dt)


def gen_scatter():
    def r(case):
        return rng_for("scatter", case)
    for case, x, idx, upd, kind in (
            ("set_f32", rand(r("a"), (2, 3), "f32"), arr([5, 0], "i64"), arr([10.0, 20.0], "f32"), "set"),
            ("set_dup_last_wins_i32", arr([0, 0, 0, 0], "i32"), arr([1, 3, 1], "i64"), arr([7, 8, 9], "i32"), "set"),
            ("add_dup_f64", rand(r("b"), (4,), "f64"), arr([[0, 2], [0, 0]], "i32"),
             rand(r("c"), (2, 2), "f64"), "add"),
            ("add_wrap_u8", arr([250, 1, 2], "u8"), arr([0, 0], "u8"), arr([3, 4], "u8"), "add"),
            ("mul_i64", arr([[2, 3], [4, 5]], "i64"), arr([3, 3, 0], "i64"), arr([-1, 7, 1 << 62], "i64"), "mul"),
            ("max_nan_f32", arr([1.0, 2.0, 3.0], "f32"), arr([0, 1, 1], "i64"), arr([NAN, 5.0, -1.0], "f32"), "max"),
            ("min_i8", arr([5, -5, 0], "i8"), arr([0, 2, 0], "i16"), arr([-128, 1, 3], "i8"), "min"),
            ("set_bool", arr([False, False, True], "bool"), arr([2, 0], "i64"), arr([False, True], "bool"), "set"),
            ("add_empty_f16", rand(r("d"), (2, 2), "f16"), np.zeros((0,), np.int64), np.zeros((0,), np.float16), "add"),
            ("add_rounds_each_f16", arr([2048.0, 0.0], "f16"), arr([0, 0, 1], "i64"),
             arr([1.0, 1.0, 1.0], "f16"), "add")):
        single("scatter", case, [x, idx, upd], [scatter_expected(x, idx, upd, kind)], attrs=[("combine", kind)])


def clamp_start(start, shape, sizes):
    return [min(max(int(s), 0), n - k) for s, n, k in zip(start, shape, sizes)]


def gen_dynamic_slice():
    def r(case):
        return rng_for("dynamic_slice", case)
    for case, x, start, sizes in (
            ("f32_inside", rand(r("a"), (4, 5), "f32"), arr([1, 2], "i64"), [2, 3]),
            ("i32_clamped_high", rand(r("b"), (6,), "i32"), arr([5], "i64"), [3]),
            ("f64_negative_start", rand(r("c"), (3, 3), "f64"), arr([-2, 1], "i64"), [2, 2]),
            ("u8_i32_start", rand(r("d"), (2, 3, 4), "u8"), arr([1, 0, 9], "i32"), [1, 2, 2]),
            ("bool_whole", rand(r("e"), (2, 2), "bool"), arr([1, 1], "i64"), [2, 2]),
            ("f16_empty_size", rand(r("f"), (4,), "f16"), arr([2], "i64"), [0]),
            # a u64 start above INT64_MAX clamps to the top (compiled: a u64 min)
            ("f32_u64_huge_start", rand(r("g"), (3, 7), "f32"), arr([(1 << 63) + 5, 1], "u64"), [2, 4])):
        s = clamp_start(start, x.shape, sizes)
        y = x[tuple(slice(a, a + k) for a, k in zip(s, sizes))].copy()
        single("dynamic_slice", case, [x, start], [y], attrs=[("sizes", dims(sizes))])


def gen_dynamic_update_slice():
    def r(case):
        return rng_for("dynamic_update_slice", case)
    for case, x, upd, start in (
            ("f32_inside", rand(r("a"), (4, 5), "f32"), rand(r("b"), (2, 2), "f32"), arr([1, 3], "i64")),
            ("i32_clamped", rand(r("c"), (6,), "i32"), rand(r("d"), (4,), "i32"), arr([5], "i64")),
            ("f64_negative", rand(r("e"), (3, 3), "f64"), rand(r("f"), (1, 3), "f64"), arr([-1, -7], "i32")),
            ("bool_3d", rand(r("g"), (2, 2, 3), "bool"), rand(r("h"), (1, 2, 2), "bool"), arr([1, 0, 1], "u8")),
            ("u16_whole", rand(r("i"), (2, 2), "u16"), rand(r("j"), (2, 2), "u16"), arr([3, 3], "i64")),
            ("f16_empty_update", rand(r("k"), (3,), "f16"), np.zeros((0,), np.float16), arr([1], "i64")),
            ("f32_u64_huge_start", rand(r("l"), (4, 6), "f32"), rand(r("m"), (2, 3), "f32"),
             arr([1, (1 << 64) - 1], "u64"))):
        s = clamp_start(start, x.shape, upd.shape)
        y = x.copy()
        y[tuple(slice(a, a + k) for a, k in zip(s, upd.shape))] = upd
        single("dynamic_update_slice", case, [x, upd, start], [y])


# ==== contraction ==========================================================

def dot_expected(a, b, lb=(), rb=(), lc=(), rc=()):
    dt = tsname(a)
    lfree = [i for i in range(a.ndim) if i not in lb and i not in lc]
    rfree = [i for i in range(b.ndim) if i not in rb and i not in rc]
    av = np.transpose(pyvals(a), list(lb) + lfree + list(lc))
    bv = np.transpose(pyvals(b), list(rb) + list(rc) + rfree)
    bshape = [a.shape[i] for i in lb]
    mshape, nshape = [a.shape[i] for i in lfree], [b.shape[i] for i in rfree]
    nb, m, n = (int(np.prod(s, dtype=np.int64)) for s in (bshape, mshape, nshape))
    k = int(np.prod([a.shape[i] for i in lc], dtype=np.int64))
    av, bv = av.reshape(nb, m, k), bv.reshape(nb, k, n)
    zero = 0.0 if dt in FLOATS else 0
    out = np.empty((nb, m, n), dtype=object)
    for bi, mi, ni in np.ndindex(nb, m, n):
        out[bi, mi, ni] = sum((av[bi, mi, ki] * bv[bi, ki, ni] for ki in range(k)), zero)
    return store(out.reshape(bshape + mshape + nshape), dt)


def dot_case(case, a, b, lb=(), rb=(), lc=(), rc=()):
    attrs = [(name, ints(v)) for name, v in
             (("lhs_batch", lb), ("rhs_batch", rb), ("lhs_contract", lc), ("rhs_contract", rc)) if v]
    single("dot", case, [a, b], [dot_expected(a, b, lb, rb, lc, rc)], attrs=attrs)


def gen_dot():
    def r(case):
        return rng_for("dot", case)
    dot_case("f32_matmul", rand(r("a"), (3, 4), "f32"), rand(r("b"), (4, 2), "f32"), lc=[1], rc=[0])
    dot_case("f64_batched", rand(r("c"), (2, 3, 4), "f64"), rand(r("d"), (2, 4, 5), "f64"),
             [0], [0], [2], [1])
    dot_case("f32_vector", rand(r("e"), (5,), "f32"), rand(r("f"), (5,), "f32"), lc=[0], rc=[0])
    dot_case("i32_outer_wrap", arr([1 << 20, -3, 7], "i32"), arr([1 << 12, -(1 << 30)], "i32"))
    dot_case("f16_exact", exact_half(r("g"), (2, 3), "f16", -2, 2), exact_half(r("h"), (3, 2), "f16", -2, 2),
             lc=[1], rc=[0])
    dot_case("f32_two_contract", rand(r("i"), (2, 3, 4), "f32"), rand(r("j"), (4, 3), "f32"),
             lc=[1, 2], rc=[1, 0])
    dot_case("u8_wrap", rand(r("k"), (2, 4), "u8"), rand(r("l"), (4, 3), "u8"), lc=[1], rc=[0])
    dot_case("i64_inner_batch", rand(r("m"), (3, 2, 4), "i64", -9, 9), rand(r("n"), (4, 2, 5), "i64", -9, 9),
             [1], [1], [2], [0])
    dot_case("f32_empty_k", np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32), lc=[1], rc=[0])


def conv_expected(x, w, strides, lo, hi, ld, rd, groups):
    dt = tsname(x)
    zero = 0.0 if dt in FLOATS else 0
    xv, wv = pyvals(x), pyvals(w)
    nb, c, sp = x.shape[0], x.shape[1], x.shape[2:]
    o, cg, ks = w.shape[0], w.shape[1], w.shape[2:]
    # the input with (ld-1) zeros between elements, padded; negative pads crop
    plo, phi = [max(a, 0) for a in lo], [max(b, 0) for b in hi]
    grown = [(n - 1) * d + 1 + a + b for n, d, a, b in zip(sp, ld, plo, phi)]
    xp = np.full([nb, c] + grown, zero, dtype=object)
    xp[(slice(None), slice(None)) + tuple(slice(a, a + (n - 1) * d + 1, d) for n, d, a in zip(sp, ld, plo))] = xv
    xp = xp[(slice(None), slice(None)) + tuple(slice(max(-a, 0), g - max(-b, 0)) for a, b, g in zip(lo, hi, grown))]
    grown = list(xp.shape[2:])
    out_sp = [(g - (d * (k - 1) + 1)) // s + 1 for g, k, d, s in zip(grown, ks, rd, strides)]
    out = np.empty([nb, o] + out_sp, dtype=object)
    per_group = o // groups
    for idx in np.ndindex(*out.shape):
        n, oc, pos = idx[0], idx[1], idx[2:]
        g = oc // per_group
        acc = zero
        for ci in range(cg):
            for k in np.ndindex(*ks):
                at = tuple(p * s + kk * d for p, s, kk, d in zip(pos, strides, k, rd))
                acc = acc + xp[(n, g * cg + ci) + at] * wv[(oc, ci) + k]
        out[idx] = acc
    return store(out, dt)


def conv_case(case, x, w, strides, lo=None, hi=None, ld=None, rd=None, groups=1, tol=None):
    n = x.ndim - 2
    lo, hi, ld, rd = lo or [0] * n, hi or [0] * n, ld or [1] * n, rd or [1] * n
    attrs = [("strides", ints(strides)), ("pad_lo", ints(lo)), ("pad_hi", ints(hi)),
             ("lhs_dilation", ints(ld)), ("rhs_dilation", ints(rd))]
    attrs += [("groups", str(groups))] if groups != 1 else []
    single("conv", case, [x, w], [conv_expected(x, w, strides, lo, hi, ld, rd, groups)], attrs=attrs, tol=tol)


def gen_conv():
    def r(case):
        return rng_for("conv", case)
    conv_case("f32_1d", rand(r("a"), (1, 2, 5), "f32"), rand(r("b"), (3, 2, 3), "f32"), [1])
    conv_case("f32_2d_stride_pad", rand(r("c"), (2, 3, 5, 5), "f32"), rand(r("d"), (4, 3, 3, 3), "f32"),
              [2, 2], [1, 1], [1, 1])
    conv_case("f64_groups", rand(r("e"), (1, 4, 6), "f64"), rand(r("f"), (4, 2, 3), "f64"), [1], groups=2)
    conv_case("f32_depthwise", rand(r("g"), (2, 3, 5), "f32"), rand(r("h"), (3, 1, 2), "f32"), [1], groups=3)
    conv_case("f32_rhs_dilation", rand(r("i"), (1, 1, 7), "f32"), rand(r("j"), (1, 1, 3), "f32"), [1], rd=[2])
    conv_case("f32_lhs_dilation", rand(r("k"), (1, 1, 4), "f32"), rand(r("l"), (2, 1, 3), "f32"), [1],
              [2], [2], ld=[2])
    conv_case("i32_2d_wrap", rand(r("m"), (1, 2, 3, 3), "i32", -(1 << 20), 1 << 20),
              rand(r("n"), (2, 2, 2, 2), "i32", -(1 << 14), 1 << 14), [1, 1])
    conv_case("f16_exact", exact_half(r("o"), (1, 1, 4), "f16", -2, 2), exact_half(r("p"), (1, 1, 2), "f16", -2, 2),
              [1])
    conv_case("f32_negative_pad", rand(r("t"), (1, 2, 6), "f32"), rand(r("u"), (1, 2, 2), "f32"), [1],
              [-1], [-2])
    conv_case("f64_lhs_dil_crop_stride", rand(r("v"), (1, 1, 5), "f64"), rand(r("w"), (1, 1, 3), "f64"), [2],
              [-1], [1], ld=[3], rd=[2])
    conv_case("f32_3d", rand(r("q"), (1, 1, 3, 3, 3), "f32"), rand(r("s"), (1, 1, 2, 2, 2), "f32"),
              [1, 2, 1], [0, 1, 0], [1, 0, 0])
    # groups of 8 in and 8 out, and of 4 at stride 2: the CPU's GROUPED path (D181). Sums
    # of 72 and 36 products in any order: float rounding of up to K * eps * sum |terms|
    conv_case("f32_groups_of_8", rand(r("x"), (2, 16, 5, 4), "f32"), rand(r("y"), (16, 8, 3, 3), "f32"),
              [1, 1], [1, 1], [1, 1], groups=2, tol=(1e-5, 1e-4))
    conv_case("f32_groups_stride2", rand(r("z"), (1, 12, 7, 6), "f32"), rand(r("A"), (12, 4, 3, 3), "f32"),
              [2, 2], [1, 0], [1, 1], groups=3, tol=(1e-5, 1e-4))


# ==== data-dependent =======================================================

def sort_expected(x, axis, desc):
    """Stable sort along axis; NaN is larger than everything, NaNs tie."""
    v = np.moveaxis(pyvals(x), axis, -1)
    vals, idxs = np.empty(v.shape, dtype=object), np.empty(v.shape, dtype=object)
    n = v.shape[-1]
    for i in np.ndindex(*v.shape[:-1]):
        row = v[i]

        def key(j):
            e = row[j]
            nan = isinstance(e, float) and math.isnan(e)
            return (1, 0) if nan else (0, e)
        order = sorted(range(n), key=key, reverse=bool(desc))   # reverse keeps ties in order
        vals[i] = [row[j] for j in order]
        idxs[i] = order
    vals = np.moveaxis(vals, -1, axis)
    idxs = np.moveaxis(idxs, -1, axis)
    return store(vals, tsname(x)), idxs.astype(np.int64)


def sort_case(case, x, axis, desc=0):
    attrs = [("axis", str(axis))] + ([("descending", "1")] if desc else [])
    single("sort", case, [x], list(sort_expected(x, axis, desc)), attrs=attrs)


def gen_sort():
    def r(case):
        return rng_for("sort", case)
    nan_row = arr([3.0, NAN, -1.0, 3.0, INF, NAN, -INF, 0.5, 3.0], "f32")
    sort_case("f32_nan_dups", nan_row, 0)
    sort_case("f32_nan_dups_desc", nan_row, 0, 1)
    sort_case("f64_axis0", rand(r("a"), (4, 3), "f64"), 0)
    sort_case("i32_stable", rand(r("b"), (2, 8), "i32", -2, 2), 1)
    sort_case("u8_desc_stable", rand(r("c"), (10,), "u8", 0, 3), 0, 1)
    sort_case("f16_3d", rand(r("d"), (2, 3, 2), "f16"), 1)
    sort_case("i64_edges", arr([(1 << 63) - 1, -(1 << 63), 0, -1, (1 << 53) + 1, 1 << 53], "i64"), 0)
    sort_case("f32_empty", np.zeros((2, 0), np.float32), 1)
    sort_case("f64_signed_zeros_equal", arr([0.0, -0.0, -1.0, 0.0, -0.0], "f64"), 0)
    sort_case("f64_signed_zeros_desc", arr([0.0, -0.0, -1.0, 0.0, -0.0], "f64"), 0, 1)
    # lanes longer than a compiled sort's insertion runs (16), so merges
    # decide the order too, along a strided axis; few distinct values for
    # ties, NaNs among them
    many = rand(r("e"), (70, 3), "i32", -4, 4).astype(np.float32)
    many[[5, 33, 64], [0, 1, 2]] = NAN
    sort_case("f32_long_strided", many, 0)
    sort_case("f32_long_strided_desc", many, 0, 1)
    sort_case("i64_long_stable", rand(r("f"), (2, 45), "i64", -3, 3), 1, 1)
    # lanes of at most 96 keys of <= 32 bits sort by rank in the compiled
    # kernel (D133): signed zeros, NaNs and infinities among many ties,
    # both directions; the narrow integer kinds' key mappings at their
    # extremes; one lane past the rank sort's limit (97) takes the merges
    zs = rand(r("g"), (3, 64), "i32", -2, 2).astype(np.float32)
    zs[zs == 0] = -0.0
    zs[:, ::5] = 0.0
    zs[[0, 1, 2, 2], [3, 40, 7, 63]] = NAN
    zs[[0, 1], [10, 11]] = [INF, -INF]
    sort_case("f32_rank_zeros_nan", zs, 1)
    sort_case("f32_rank_zeros_nan_desc", zs, 1, 1)
    sort_case("i8_rank_extremes", arr([127, -128, 0, -1, 1, -128, 127, 5] * 5, "i8"), 0)
    sort_case("i16_rank_desc", rand(r("h"), (2, 50), "i16", -300, 300), 1, 1)
    sort_case("u32_rank_high", arr([0xFFFFFFFF, 0, 0x80000000, 0x7FFFFFFF, 1, 0x80000001] * 6, "u32"), 0, 1)
    sort_case("f32_merge_97", rand(r("i"), (97, 2), "i32", -5, 5).astype(np.float32), 0)


def gen_nonzero():
    cases = (("f32_zero_nan", arr([[0.0, -0.0, NAN], [1.5, 0.0, -INF]], "f32")),
             ("i32_1d", arr([0, 3, 0, -1, 0], "i32")),
             ("bool_3d", rand(rng_for("nonzero", "bool_3d"), (2, 2, 3), "bool")),
             ("f64_scalar", arr(2.0, "f64")),
             ("f64_scalar_zero", arr(0.0, "f64")),
             ("u8_all_zero", np.zeros((2, 2), np.uint8)),
             ("f16_1d", arr([0.0, 6e-8, 0.0, -2.0], "f16")))
    for case, x in cases:
        if x.ndim == 0:
            y = np.zeros((0, 1 if x != 0 else 0), np.int64)
        else:
            y = np.stack(np.nonzero(x)).astype(np.int64).reshape(x.ndim, -1)
        single("nonzero", case, [x], [y], out_types=["i64[%d, nnz0]" % x.ndim])


# ==== control ==============================================================

def gen_if():
    t3 = ty("f32", (3,))
    for case, pred in (("then_taken", True), ("else_taken", False)):
        r = rng_for("if", case)
        a, b = rand(r, (3,), "f32"), rand(r, (3,), "f32")
        then = ("then", [("ta", t3), ("tb", t3)], [Node("add", ["ta", "tb"], [("ts", t3)])], ["ts"])
        els = ("else", [("ea", t3), ("eb", t3)], [Node("sub", ["ea", "eb"], [("es", t3)])], ["es"])
        node = Node("if", ["p", "a", "b"], [("r", t3)], regions=[then, els])
        text = graph_text([("p", "bool[]"), ("a", t3), ("b", t3)], [node], ["r"])
        want = ew_np(np.add if pred else np.subtract, "f32", a, b)
        write_case("if", case, text, [arr(pred, "bool"), a, b], [want])
    # two results that swap in one branch; the other passes them through
    ti, tf = ty("i32", (2,)), ty("f64", ())
    for case, pred in (("swap_multi_true", True), ("swap_multi_false", False)):
        x, y = arr([4, -5], "i32"), arr(2.5, "f64")
        then = ("then", [("tx", ti), ("ty", tf)], [Node("neg", ["tx"], [("tn", ti)])], ["tn", "ty"])
        els = ("else", [("ex", ti), ("ey", tf)], [], ["ex", "ey"])
        node = Node("if", ["p", "x", "y"], [("r0", ti), ("r1", tf)], regions=[then, els])
        text = graph_text([("p", "bool[]"), ("x", ti), ("y", tf)], [node], ["r0", "r1"])
        want = [-x if pred else x, y]
        write_case("if", case, text, [arr(pred, "bool"), x, y], want)
    # no operands but the condition: each branch makes its own constant
    t2 = ty("u8", (2,))
    then = ("then", [], [Node("const", [], [("tc", t2)], [("value", "[1, 2]")])], ["tc"])
    els = ("else", [], [Node("const", [], [("ec", t2)], [("value", "[3, 4]")])], ["ec"])
    node = Node("if", ["p"], [("r", t2)], regions=[then, els])
    write_case("if", "no_operands", graph_text([("p", "bool[]")], [node], ["r"]),
               [arr(False, "bool")], [arr([3, 4], "u8")])


def while_counted(case, start, n, acc):
    """state (i, n, acc): while i < n: i += 1, acc = acc + acc."""
    ti, ta = "i32[]", aty(acc)
    cond = ("cond", [("ci", ti), ("cn", ti), ("cacc", ta)], [Node("lt", ["ci", "cn"], [("go", "bool[]")])], ["go"])
    body = ("body", [("bi", ti), ("bn", ti), ("bacc", ta)],
            [Node("const", [], [("one", ti)], [("value", "[1]")]),
             Node("add", ["bi", "one"], [("bi2", ti)]),
             Node("add", ["bacc", "bacc"], [("bacc2", ta)])], ["bi2", "bn", "bacc2"])
    node = Node("while", ["i", "n", "acc"], [("r0", ti), ("r1", ti), ("r2", ta)], regions=[cond, body])
    text = graph_text([("i", ti), ("n", ti), ("acc", ta)], [node], ["r0", "r1", "r2"])
    rounds = max(n - start, 0)
    want = [arr(start + rounds, "i32"), arr(n, "i32"), (acc.astype(np.float64) * 2.0 ** rounds).astype(acc.dtype)]
    write_case("while", case, text, [arr(start, "i32"), arr(n, "i32"), acc], want)


def while_factorial(case, n):
    """state (k, n, f): while k <= n: f *= k, k += 1 (i64 wraps past 20!)."""
    t = "i64[]"
    cond = ("cond", [("ck", t), ("cn", t), ("cf", t)], [Node("le", ["ck", "cn"], [("go", "bool[]")])], ["go"])
    body = ("body", [("bk", t), ("bn", t), ("bf", t)],
            [Node("mul", ["bf", "bk"], [("bf2", t)]),
             Node("const", [], [("one", t)], [("value", "[1]")]),
             Node("add", ["bk", "one"], [("bk2", t)])], ["bk2", "bn", "bf2"])
    node = Node("while", ["k", "n", "f"], [("r0", t), ("r1", t), ("r2", t)], regions=[cond, body])
    text = graph_text([("k", t), ("n", t), ("f", t)], [node], ["r0", "r1", "r2"])
    want = [arr(n + 1, "i64"), arr(n, "i64"), arr(wrap(math.factorial(n), "i64"), "i64")]
    write_case("while", case, text, [arr(1, "i64"), arr(n, "i64"), arr(1, "i64")], want)


def gen_while():
    while_counted("counted_5", 0, 5, arr([1.0, -0.5, 3.0], "f32"))
    while_counted("zero_rounds", 3, 2, arr([[1.5, 2.0]], "f32"))
    while_counted("counted_f32_scalar", -2, 8, arr(0.75, "f32"))
    while_factorial("factorial_20", 20)
    while_factorial("factorial_25_wraps", 25)
    while_nested_if("nested_if", 5, arr([1.0, -3.0], "f32"))


def while_nested_if(case, rounds, x):
    """state (i, n, x): while i < n: x = i even ? -x : x + x; i += 1 — an if
    inside a loop body, so regions nest two deep."""
    ti, tx = "i32[]", aty(x)
    then = ("then", [("tx", tx)], [Node("neg", ["tx"], [("tn", tx)])], ["tn"])
    els = ("else", [("ex", tx)], [Node("add", ["ex", "ex"], [("ed", tx)])], ["ed"])
    cond = ("cond", [("ci", ti), ("cn", ti), ("cx", tx)], [Node("lt", ["ci", "cn"], [("go", "bool[]")])], ["go"])
    body = ("body", [("bi", ti), ("bn", ti), ("bx", tx)],
            [Node("const", [], [("two", ti)], [("value", "[2]")]),
             Node("const", [], [("zero", ti)], [("value", "[0]")]),
             Node("rem", ["bi", "two"], [("parity", ti)]),
             Node("eq", ["parity", "zero"], [("even", "bool[]")]),
             Node("if", ["even", "bx"], [("bx2", tx)], regions=[then, els]),
             Node("const", [], [("one", ti)], [("value", "[1]")]),
             Node("add", ["bi", "one"], [("bi2", ti)])], ["bi2", "bn", "bx2"])
    node = Node("while", ["i", "n", "x"], [("r0", ti), ("r1", ti), ("r2", tx)], regions=[cond, body])
    text = graph_text([("i", ti), ("n", ti), ("x", tx)], [node], ["r0", "r1", "r2"])
    y = x.astype(np.float64)
    for i in range(rounds):
        y = -y if i % 2 == 0 else y + y
    want = [arr(rounds, "i32"), arr(rounds, "i32"), y.astype(x.dtype)]
    write_case("while", case, text, [arr(0, "i32"), arr(rounds, "i32"), x], want)


def gen_symbolic():
    """Inputs with symbolic dims: the run binds the symbols from the input
    tensors and evaluates symbolic attributes and result types."""
    def r(case):
        return rng_for("symbolic", case)
    a, b = rand(r("add"), (4, 3), "f32"), rand(r("add2"), (4, 3), "f32")
    single("add", "f32_symbolic", [a, b], [ew_np(np.add, "f32", a, b)],
           in_types=["f32[n, 3]"] * 2, out_types=["f32[n, 3]"])
    x = rand(r("sum"), (5, 4), "f64")
    single("reduce_sum", "f64_symbolic", [x], [reduce_expected(x, "sum", [1])], attrs=[("axes", "[1]")],
           in_types=["f64[batch, 4]"], out_types=["f64[batch]"])
    x = rand(r("reshape"), (2, 3), "i32")
    single("reshape", "i32_symbolic", [x], [x.reshape(6)], attrs=[("shape", "[3*n]")],
           in_types=["i32[n, 3]"], out_types=["i32[3*n]"])
    x = rand(r("slice"), (6,), "f32")
    single("slice", "f32_symbolic_limit", [x], [x[1:6:2].copy()],
           attrs=[("start", "[1]"), ("limit", "[n]"), ("stride", "[2]")], in_types=["f32[n]"],
           out_types=["f32[n/2]"])
    a, b = rand(r("concat"), (2,), "u8"), rand(r("concat2"), (3,), "u8")
    single("concat", "u8_symbolic", [a, b], [np.concatenate([a, b])], attrs=[("axis", "0")],
           in_types=["u8[n]", "u8[m]"], out_types=["u8[m+n]"])
    a, b = rand(r("dot"), (2, 3), "f32"), rand(r("dot2"), (3, 4), "f32")
    single("dot", "f32_symbolic", [a, b], [dot_expected(a, b, lc=[1], rc=[0])],
           attrs=[("lhs_contract", "[1]"), ("rhs_contract", "[0]")],
           in_types=["f32[m, k]", "f32[k, n]"], out_types=["f32[m, n]"])
    x = rand(r("transpose"), (3, 2), "i64")
    single("transpose", "i64_symbolic", [x], [x.T.copy()], attrs=[("perm", "[1, 0]")],
           in_types=["i64[n, 2]"], out_types=["i64[2, n]"])
    x, s = rand(r("dslice"), (5, 4), "f32"), arr([3, 1], "i64")
    single("dynamic_slice", "f32_symbolic_sizes", [x, s], [x[3:5, 1:3].copy()], attrs=[("sizes", "[n-3, 2]")],
           in_types=["f32[n, 4]", "i64[2]"], out_types=["f32[n-3, 2]"])


# ==== collectives (world = 1: identities) ==================================

def world_dim(n, how):
    return {"mul": ("world" if n == 1 else "%d*world" % n), "div": "%d/world" % n,
            "divmul": "world*(%d/world)" % n}[how]


def gen_collectives():
    def r(case):
        return rng_for("collectives", case)
    for case, x, kind in (("sum_f32", rand(r("a"), (2, 3), "f32"), "sum"),
                          ("max_i32", rand(r("b"), (4,), "i32"), "max"),
                          ("prod_f64", rand(r("c"), (2, 2), "f64"), "prod"),
                          ("min_u8_scalar", arr(7, "u8"), "min"),
                          ("sum_f16_nan", arr([NAN, 1.0, -INF], "f16"), "sum")):
        single("all_reduce", case, [x], [x.copy()], attrs=[("kind", kind)])
    for case, x, axis in (("f32_1d", rand(r("d"), (4,), "f32"), 0),
                          ("i32_axis1", rand(r("e"), (2, 3), "i32"), 1),
                          ("bool_unit_axis", rand(r("f"), (1, 2), "bool"), 0)):
        dims_ = [str(d) for d in x.shape]
        dims_[axis] = world_dim(x.shape[axis], "mul")
        single("all_gather", case, [x], [x.copy()], attrs=[("axis", str(axis))],
               out_types=["%s[%s]" % (tsname(x), ", ".join(dims_))])
    for case, x, kind, axis in (("sum_f32", rand(r("g"), (4,), "f32"), "sum", 0),
                                ("max_i64_axis1", rand(r("h"), (2, 6), "i64"), "max", 1),
                                ("min_f64", rand(r("i"), (3, 2), "f64"), "min", 0)):
        dims_ = [str(d) for d in x.shape]
        dims_[axis] = world_dim(x.shape[axis], "div")
        single("reduce_scatter", case, [x], [x.copy()], attrs=[("kind", kind), ("axis", str(axis))],
               out_types=["%s[%s]" % (tsname(x), ", ".join(dims_))])
    for case, x, split, cat in (("f32_split0_cat1", rand(r("j"), (4, 3), "f32"), 0, 1),
                                ("i32_split1_cat0", rand(r("k"), (2, 4), "i32"), 1, 0),
                                ("u8_same_axis", rand(r("l"), (6,), "u8"), 0, 0)):
        dims_ = [str(d) for d in x.shape]
        if split == cat:
            dims_[split] = world_dim(x.shape[split], "divmul")
        else:
            dims_[split] = world_dim(x.shape[split], "div")
            dims_[cat] = world_dim(x.shape[cat], "mul")
        single("all_to_all", case, [x], [x.copy()], attrs=[("split_axis", str(split)), ("concat_axis", str(cat))],
               out_types=["%s[%s]" % (tsname(x), ", ".join(dims_))])


# ==== leaves ===============================================================

def const_case(case, value):
    node = Node("const", [], [("r", aty(value))], [("value", tensor_text(value))])
    write_case("const", case, graph_text([], [node], ["r"]), [], [value])


def gen_const():
    const_case("f32_2x3", arr([[0.5, -1.0, 2.0], [0.1, 1e20, -3.25]], "f32"))
    const_case("i32_scalar", arr(-7, "i32"))
    const_case("bool_1d", arr([True, False, False, True], "bool"))
    const_case("f16_special", arr([NAN, INF, -0.0, 65504.0, 6e-8, 0.1, -INF], "f16"))
    const_case("f64_splat", arr([0.25, 0.25, 0.25], "f64"))
    const_case("f64_digits", arr([0.1, 1 / 3, 5e-324, 1.7976931348623157e308, -2.5e-10], "f64"))
    const_case("f32_digits", arr([3.4028235e38, 1e-45, 1 / 3, 16777216.0, 0.2], "f32"))
    const_case("i64_edges", arr([(1 << 63) - 1, -(1 << 63), 0], "i64"))
    const_case("u64_max", arr([(1 << 64) - 1, 1], "u64"))
    const_case("u8_empty", np.zeros((0,), np.uint8))
    const_case("i8_splat_2d", np.full((2, 2), -128, np.int8))


def gen_iota():
    for case, dt, shape, axis in (("f32_axis1", "f32", (2, 3), 1), ("i32_axis0", "i32", (3, 4), 0),
                                  ("i64_1d", "i64", (5,), 0), ("f16_3d", "f16", (2, 3, 2), 2),
                                  ("u8_axis0", "u8", (4, 2), 0), ("f64_empty", "f64", (0, 3), 1),
                                  ("u8_wraps", "u8", (300,), 0), ("f16_rounds", "f16", (2060,), 0)):
        idx = np.arange(shape[axis]).reshape([-1 if i == axis else 1 for i in range(len(shape))])
        y = store(np.broadcast_to(idx, shape).astype(object), dt)
        node = Node("iota", [], [("r", ty(dt, shape))],
                    [("dtype", dt), ("shape", dims(shape)), ("axis", str(axis))])
        write_case("iota", case, graph_text([], [node], ["r"]), [], [y])

def gen_documented():
    """The worked examples of docs/primitives-*.md, checked to the bit."""
    a, b = arr([2048.0, 2050.0, 65504.0, 0.0, -0.0], "f16"), arr([1.0, 1.0, 16.0, -0.0, -0.0], "f16")
    single("add", "f16_doc_ties_overflow", [a, b], [ew_np(np.add, "f16", a, b)], tol=EXACT)
    reduce_case("reduce_sum", "f16_doc_f64_accumulator", arr([2048.0, 1.0, 1.0], "f16"), [0], tol=EXACT)
    reduce_case("reduce_sum", "f32_doc_no_overflow", arr([3e38, 3e38, -3e38], "f32"), [0], tol=EXACT)
    reduce_case("reduce_sum", "f32_doc_neg_zeros", arr([[-0.0, -0.0], [-0.0, 1.0]], "f32"), [1], tol=EXACT)
    x = arr([2048.0, 1.0, 1.0, 1.0], "f16")
    single("cumulative", "sum_f16_doc", [x], [cumulative_expected(x, "sum", 0, 0, 0)],
           attrs=[("kind", "sum"), ("axis", "0")], tol=EXACT)
    a, b = arr([2048.0, 1.0, 1.0], "f16"), arr([1.0, 1.0, 1.0], "f16")
    single("dot", "f16_doc_f64_accumulator", [a, b], [dot_expected(a, b, lc=[0], rc=[0])],
           attrs=[("lhs_contract", "[0]"), ("rhs_contract", "[0]")], tol=EXACT)
    a, b = arr([16777216.0, 1.0, -16777216.0], "f32"), arr([1.0, 1.0, 1.0], "f32")
    single("dot", "f32_doc_f64_accumulator", [a, b], [dot_expected(a, b, lc=[0], rc=[0])],
           attrs=[("lhs_contract", "[0]"), ("rhs_contract", "[0]")], tol=EXACT)
    x = arr([65504.0, 1.0, 0.1, NAN, -0.0, 6e-8], "f16")
    bf16_roundtrip("cast", "f16_bf16_f32", [x], None, f32_to_bf16_to_f32(x.astype(np.float32)), EXACT)
