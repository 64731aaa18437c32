"""Matrix decompositions and solves on small matrices: LU with partial
pivoting (det, slogdet, lu_factor, lu, lu_unpack, lu_solve, inv, solve),
Cholesky (and its solve and inverse), triangular solves, Householder QR
(and LAPACK's packed form: geqrf, ormqr).

The matrix size is known when the graph is built, so each algorithm is
unrolled over its n steps, each a few whole-tensor primitives over the
batch (a masked update, a one-hot row pick for a pivot chosen at run
time); the batch may be any size. Sizes above MAX_STEPS fall back to
PyTorch, so graphs stay small. The algorithms are LAPACK's unblocked
ones (getf2, potf2, geqr2, org2r), so pivots, signs and the info codes
are LAPACK's; values agree with eager's blocked LAPACK to rounding.

Matrices are [*batch, rows, cols]; "nb" is the number of batch axes."""
import numpy as np
import torch

from .linalg import empty_ok
from .table import fake, lowers

aten = torch.ops.aten
MAX_STEPS = 32


# ---- checks ----------------------------------------------------------------------------------

def _small(*tensors):
    """a reason to refuse: a dtype other than f32/f64, or a matrix too big to unroll"""
    for t in tensors:
        if t.dtype not in (torch.float32, torch.float64):
            return "dtype %s" % t.dtype
        if min(t.shape[-2:]) > MAX_STEPS:
            return "a matrix over %d rows and columns (unrolled elimination)" % MAX_STEPS
    return None


def _check_matrix(node):
    return _small(fake(node.args[0]))


def _check_two(node):
    return _small(fake(node.args[0]), fake(node.args[1]))


# ---- whole-tensor helpers --------------------------------------------------------------------

def full_like(L, v, value):
    return L.full(value, v.dtype, tuple(v.shape))


def mask(L, cond, shape):
    """A [rows, cols] (or [rows]) numpy bool condition broadcast over the batch."""
    cond = np.asarray(cond)
    return L.g.op("broadcast", L.g.const(cond), shape=list(shape),
                  axes=list(range(len(shape) - cond.ndim, len(shape))))


def rows_where(L, shape, pred):
    r = np.arange(shape[-2])[:, None] + np.zeros(shape[-1], np.int64)[None, :]
    c = np.arange(shape[-1])[None, :] + np.zeros(shape[-2], np.int64)[:, None]
    return mask(L, pred(r, c), shape)


def as_col(L, v, shape):
    """v [*batch, rows] repeated along the columns of shape."""
    return L.broadcast_to(L.g.op("reshape", v, shape=list(v.shape) + [1]), tuple(shape))


def as_row(L, v, shape):
    """v [*batch, cols] repeated along the rows of shape."""
    vs = list(v.shape)
    return L.broadcast_to(L.g.op("reshape", v, shape=vs[:-1] + [1, vs[-1]]), tuple(shape))


def _vec(L, s, m):
    """s [*batch] repeated as [*batch, m]."""
    return L.broadcast_to(L.g.op("reshape", s, shape=list(s.shape) + [1]), tuple(list(s.shape) + [m]))


def as_mat(L, v, shape):
    """v [*batch] repeated over a matrix of shape."""
    return L.broadcast_to(L.g.op("reshape", v, shape=list(v.shape) + [1, 1]), tuple(shape))


def row(L, a, i):
    s = list(a.shape)
    return L.g.op("reshape", L.slice(a, [0] * (len(s) - 2) + [i, 0], s[:-2] + [i + 1, s[-1]]), shape=s[:-2] + [s[-1]])


def col(L, a, j):
    s = list(a.shape)
    return L.g.op("reshape", L.slice(a, [0] * (len(s) - 1) + [j], s[:-1] + [j + 1]), shape=s[:-1])


def entry(L, a, i, j):
    s = list(a.shape)
    return L.g.op("reshape", L.slice(a, [0] * (len(s) - 2) + [i, j], s[:-2] + [i + 1, j + 1]), shape=s[:-2])


def mT(L, a):
    r = len(a.shape)
    return L.g.op("transpose", a, perm=list(range(r - 2)) + [r - 1, r - 2])


def bdot(L, a, b, ca, cb, nb):
    """A dot batched over the nb leading (batch) axes."""
    return L.g.op("dot", a, b, lhs_batch=list(range(nb)), rhs_batch=list(range(nb)),
                  lhs_contract=[ca], rhs_contract=[cb])


def eye(L, dtype, shape):
    return L.cast(rows_where(L, shape, lambda r, c: r == c), dtype)


def first_failure(L, fails, batch):
    """LAPACK's info: 1 + the first step that failed (fails[k] a bool
    [*batch]), 0 if none did; i32."""
    info = L.full(0, "i32", tuple(batch))
    for k in reversed(range(len(fails))):
        info = L.g.op("select", fails[k], L.full(k + 1, "i32", tuple(batch)), info)
    return info


# ---- row swaps (pivots) ----------------------------------------------------------------------

def one_hot_row(L, p, shape):
    """A mask over matrices of shape: row p (p an i64 [*batch])."""
    rows = L.g.op("iota", dtype="i64", shape=list(shape), axis=len(shape) - 2)
    return L.g.op("eq", rows, as_mat(L, p, shape))


def swap_rows(L, a, i, p):
    """a with rows i (static) and p (per matrix, at run time) exchanged."""
    shape = list(a.shape)
    hot = one_hot_row(L, p, shape)
    row_p = L.g.op("reduce_sum", L.g.op("select", hot, a, full_like(L, a, 0)), axes=[len(shape) - 2])
    a = L.g.op("select", hot, as_row(L, row(L, a, i), shape), a)
    return L.g.op("select", rows_where(L, shape, lambda r, c: r == i), as_row(L, row_p, shape), a)


def apply_swaps(L, b, swaps, reverse=False):
    """LAPACK's laswp: the swaps (row i with swaps[i]) applied in order to
    b's rows (P^T b), or in reverse order (P b)."""
    order = reversed(range(len(swaps))) if reverse else range(len(swaps))
    for i in order:
        b = swap_rows(L, b, i, swaps[i])
    return b


# ---- LU --------------------------------------------------------------------------------------

def lu_factor(L, a):
    """getf2: (LU packed in one matrix, the pivot rows as 0-based i64
    [*batch] per step, info i32). The pivot is the first largest
    magnitude in the column; a zero pivot leaves its column as it is and
    sets info, as LAPACK."""
    shape = list(a.shape)
    nb, m, n = len(shape) - 2, shape[-2], shape[-1]
    batch = shape[:-2]
    swaps, fails = [], []
    for k in range(min(m, n)):
        c = col(L, a, k)
        below = mask(L, np.arange(m) >= k, batch + [m])
        p = L.g.op("argmax", L.g.op("select", below, L.g.op("abs", c), full_like(L, c, -1)), axis=nb)
        a = swap_rows(L, a, k, p)
        piv = entry(L, a, k, k)
        zero = L.g.op("eq", piv, full_like(L, piv, 0))
        c = col(L, a, k)
        mult = L.g.op("select", _vec(L, zero, m), c, c / _vec(L, piv, m))
        upd = as_col(L, mult, shape) * as_row(L, row(L, a, k), shape)
        a = a - L.g.op("select", rows_where(L, shape, lambda r, cc: (r > k) & (cc > k)), upd, full_like(L, a, 0))
        a = L.g.op("select", rows_where(L, shape, lambda r, cc: (r > k) & (cc == k)), as_col(L, mult, shape), a)
        swaps.append(p)
        fails.append(zero)
    return a, swaps, first_failure(L, fails, batch)


def pivots_of(L, swaps, batch):
    """The swaps as PyTorch's pivots: 1-based, i32 [*batch, k]."""
    if not swaps:
        return L.full(0, "i32", tuple(batch) + (0,))
    cols = [L.g.op("reshape", p, shape=list(batch) + [1]) for p in swaps]
    piv = L.g.op("concat", *cols, axis=len(batch)) if len(cols) > 1 else cols[0]
    return L.cast(piv + 1.0, "i32")


def swaps_of(L, piv_n, k):
    """PyTorch's pivots (1-based, any integer dtype) as 0-based i64 swaps."""
    piv = L.cast(L.value(piv_n), "i64")
    batch = list(piv.shape[:-1])
    return [L.g.op("reshape", L.slice(piv, [0] * len(batch) + [i], batch + [i + 1]), shape=batch) - 1.0
            for i in range(k)]


def unit_lower(L, lu, cols):
    """The unit lower-triangular factor (first cols columns) of a packed LU."""
    s = list(lu.shape)
    part = L.slice(lu, [0] * len(s), s[:-1] + [cols])
    shape = list(part.shape)
    strict = L.g.op("select", rows_where(L, shape, lambda r, c: r > c), part, full_like(L, part, 0))
    return strict + eye(L, lu.dtype, shape)


def upper(L, lu, rows):
    s = list(lu.shape)
    part = L.slice(lu, [0] * len(s), s[:-2] + [rows, s[-1]])
    return L.g.op("select", rows_where(L, list(part.shape), lambda r, c: r <= c), part, full_like(L, part, 0))


def diagonal(L, a):
    k = min(a.shape[-2:])
    cols = [L.g.op("reshape", entry(L, a, i, i), shape=list(a.shape[:-2]) + [1]) for i in range(k)]
    return L.g.op("concat", *cols, axis=len(a.shape) - 2) if len(cols) > 1 else cols[0]


def swap_parity_sign(L, swaps, batch, dtype):
    """-1 for an odd number of actual row exchanges, else 1."""
    sign = L.full(1, dtype, tuple(batch))
    for i, p in enumerate(swaps):
        moved = L.g.op("ne", p, L.full(i, "i64", tuple(batch)))
        sign = L.g.op("select", moved, -sign, sign)
    return sign


@lowers(aten._linalg_det.default, check=_check_matrix)
@empty_ok
def det(L, node):
    """The product of U's diagonal, negated for an odd permutation."""
    a = L.value(node.args[0])
    batch = list(a.shape[:-2])
    lu, swaps, _info = lu_factor(L, a)
    sign = swap_parity_sign(L, swaps, batch, a.dtype)
    if a.shape[-1] == 0:
        return L.full(1, a.dtype, tuple(batch)), lu, pivots_of(L, swaps, batch)
    d = L.g.op("reduce_prod", diagonal(L, lu), axes=[len(batch)])
    return sign * d, lu, pivots_of(L, swaps, batch)


@lowers(aten._linalg_slogdet.default, check=_check_matrix)
@empty_ok
def slogdet(L, node):
    a = L.value(node.args[0])
    batch = list(a.shape[:-2])
    lu, swaps, _info = lu_factor(L, a)
    sign = swap_parity_sign(L, swaps, batch, a.dtype)
    if a.shape[-1] == 0:
        return sign, L.full(0, a.dtype, tuple(batch)), lu, pivots_of(L, swaps, batch)
    d = diagonal(L, lu)
    sign = sign * L.g.op("reduce_prod", L.g.op("sign", d), axes=[len(batch)])
    logabs = L.g.op("reduce_sum", L.g.op("log", L.g.op("abs", d)), axes=[len(batch)])
    return sign, logabs, lu, pivots_of(L, swaps, batch)


def _check_lu_factor(node):
    if not node.kwargs.get("pivot", True):
        return "LU without pivoting"
    return _check_matrix(node)


@lowers(aten.linalg_lu_factor_ex.default, check=_check_lu_factor)
@empty_ok
def lu_factor_ex(L, node):
    a = L.value(node.args[0])
    lu, swaps, info = lu_factor(L, a)
    return lu, pivots_of(L, swaps, list(a.shape[:-2])), info


def permutation(L, swaps, shape, dtype):
    """P with A = P L U, [*batch, m, m]: the identity's rows put through
    the swaps in reverse."""
    return apply_swaps(L, eye(L, dtype, shape), swaps, reverse=True)


@lowers(aten.linalg_lu.default, check=_check_lu_factor)
@empty_ok
def linalg_lu(L, node):
    a = L.value(node.args[0])
    s = list(a.shape)
    m, n = s[-2], s[-1]
    k = min(m, n)
    lu, swaps, _info = lu_factor(L, a)
    return permutation(L, swaps, s[:-2] + [m, m], a.dtype), unit_lower(L, lu, k), upper(L, lu, k)


def _check_unpack(node):
    if len(node.args) > 2 and not (node.args[2] and (len(node.args) < 4 or node.args[3])):
        return "a partial unpack"
    return _check_matrix(node)


@lowers(aten.lu_unpack.default, check=_check_unpack)
@empty_ok
def lu_unpack(L, node):
    lu = L.value(node.args[0])
    s = list(lu.shape)
    m, n = s[-2], s[-1]
    k = min(m, n)
    swaps = swaps_of(L, node.args[1], k)
    return permutation(L, swaps, s[:-2] + [m, m], lu.dtype), unit_lower(L, lu, k), upper(L, lu, k)


# ---- triangular solves -----------------------------------------------------------------------

def tri_solve(L, t, b, lower, unit):
    """X with T X = B, T [*batch, n, n] triangular (only its lower or upper
    triangle read), B [*batch, n, k]: substitution, one row of X a step."""
    n = t.shape[-1]
    nb = len(t.shape) - 2
    shape = list(b.shape)
    x = full_like(L, b, 0)
    for step, i in enumerate(range(n) if lower else reversed(range(n))):
        r = row(L, b, i)
        if step:   # (the first row has nothing to subtract)
            side = (np.arange(n) < i) if lower else (np.arange(n) > i)
            ti = L.g.op("select", mask(L, side, list(t.shape[:-1])), row(L, t, i), full_like(L, row(L, t, i), 0))
            r = r - bdot(L, ti, x, nb, nb, nb)
        if not unit:
            r = r / _vec(L, entry(L, t, i, i), shape[-1])
        x = L.g.op("select", rows_where(L, shape, lambda rr, c: rr == i), as_row(L, r, shape), x)
    return x


def batched(L, a, batch):
    """a broadcast to [*batch, rows, cols]."""
    return L.broadcast_to(a, tuple(list(batch) + list(a.shape[-2:])))


@lowers(aten.linalg_solve_triangular.default, check=_check_two)
@empty_ok
def solve_triangular(L, node):
    a_n, b_n = node.args[:2]
    up = node.kwargs["upper"] if "upper" in node.kwargs else node.args[2]
    left, unit = node.kwargs.get("left", True), node.kwargs.get("unitriangular", False)
    out = L.out_dtype(node)
    batch = list(L.shape(node)[:-2])
    a, b = batched(L, L.value(a_n, out), batch), batched(L, L.value(b_n, out), batch)
    if left:
        return tri_solve(L, a, b, not up, unit)
    # X A = B is A^T X^T = B^T
    return mT(L, tri_solve(L, mT(L, a), mT(L, b), up, unit))


@lowers(aten.triangular_solve.default, check=_check_two)
@empty_ok
def triangular_solve(L, node):
    b_n, a_n = node.args[:2]
    args = list(node.args) + [None] * 3
    up = True if args[2] is None else bool(args[2])
    trans, unit = bool(args[3]), bool(args[4])
    out = L.out_dtype(node)
    batch = list(L.shape(node)[:-2])
    a, b = batched(L, L.value(a_n, out), batch), batched(L, L.value(b_n, out), batch)
    x = tri_solve(L, mT(L, a), b, up, unit) if trans else tri_solve(L, a, b, not up, unit)
    return x, a


def lu_solve_left(L, lu, swaps, b, adjoint):
    """X with A X = B (or A^T X = B), A = P L U given packed."""
    if adjoint:
        y = tri_solve(L, mT(L, lu), b, True, False)        # U^T y = b
        y = tri_solve(L, mT(L, lu), y, False, True)         # L^T z = y
        return apply_swaps(L, y, swaps, reverse=True)
    y = apply_swaps(L, b, swaps)
    y = tri_solve(L, lu, y, True, True)
    return tri_solve(L, lu, y, False, False)


@lowers(aten.linalg_lu_solve.default, check=lambda node: _small(fake(node.args[0]), fake(node.args[2])))
@empty_ok
def linalg_lu_solve(L, node):
    lu_n, piv_n, b_n = node.args[:3]
    left, adjoint = node.kwargs.get("left", True), node.kwargs.get("adjoint", False)
    out = L.out_dtype(node)
    batch = list(L.shape(node)[:-2])
    lu = batched(L, L.value(lu_n, out), batch)
    n = lu.shape[-1]
    swaps = swaps_of(L, piv_n, n)
    swaps = [L.broadcast_to(s, tuple(batch)) for s in swaps]
    b = batched(L, L.value(b_n, out), batch)
    if left:
        return lu_solve_left(L, lu, swaps, b, adjoint)
    # X A = B is A^T X^T = B^T; X A^T = B is A X^T = B^T
    return mT(L, lu_solve_left(L, lu, swaps, mT(L, b), not adjoint))


def _check_solve(node):
    if not node.kwargs.get("left", True):
        return "left=False"
    a, b, r = fake(node.args[0]), fake(node.args[1]), fake(node)[0]
    if tuple(a.shape[:-2]) != tuple(r.shape[:a.dim() - 2]):
        return "a broadcast batch"
    return _small(a, b)


@lowers(aten._linalg_solve_ex.default, check=_check_solve)
@empty_ok
def solve_ex(L, node):
    """LU of A, then the two triangular solves; B a vector or a matrix."""
    a_n, b_n = node.args[:2]
    out = L.out_dtype(node)
    a = L.value(a_n, out)
    res = list(L.shape(node))
    batch = list(a.shape[:-2])
    n = a.shape[-1]
    vector = len(res) == len(a.shape) - 1
    b = L.value(b_n, out)
    b = L.broadcast_to(b, tuple(batch + [n] if vector else batch + res[-2:]))
    if vector:
        b = L.g.op("reshape", b, shape=batch + [n, 1])
    lu, swaps, info = lu_factor(L, a)
    x = lu_solve_left(L, lu, swaps, b, False)
    if vector:
        x = L.g.op("reshape", x, shape=res)
    return x, lu, pivots_of(L, swaps, batch), info


@lowers(aten.linalg_inv_ex.default, check=_check_matrix)
@empty_ok
def inv_ex(L, node):
    a = L.value(node.args[0])
    lu, swaps, info = lu_factor(L, a)
    return lu_solve_left(L, lu, swaps, eye(L, a.dtype, list(a.shape)), False), info


# ---- Cholesky --------------------------------------------------------------------------------

def cholesky(L, a):
    """potf2 on the lower triangle: (L, info). A step whose pivot is not
    positive (or NaN) sets info; PyTorch's factor is then unspecified."""
    shape = list(a.shape)
    n = shape[-1]
    batch = shape[:-2]
    low = full_like(L, a, 0)
    fails = []
    for j in range(n):
        v, d = col(L, a, j), entry(L, a, j, j)
        if j:   # (the first column has nothing to subtract)
            v = v - bdot(L, low, row(L, low, j), len(shape) - 1, len(batch), len(batch))
            d = d - L.g.op("reduce_sum", row(L, low, j) * row(L, low, j), axes=[len(batch)])
        fails.append(L.g.op("not", L.g.op("lt", L.full(0, a.dtype, tuple(batch)), d)))
        root = L.g.op("sqrt", d)
        newcol = L.g.op("select", mask(L, np.arange(n) > j, batch + [n]), v / _vec(L, root, n),
                        L.g.op("select", mask(L, np.arange(n) == j, batch + [n]), _vec(L, root, n),
                               full_like(L, v, 0)))
        low = L.g.op("select", rows_where(L, shape, lambda r, c: c == j), as_col(L, newcol, shape), low)
    return low, first_failure(L, fails, batch)


@lowers(aten.linalg_cholesky_ex.default, check=_check_matrix)
@empty_ok
def cholesky_ex(L, node):
    a = L.value(node.args[0])
    if node.kwargs.get("upper", False):   # U^T U = A reads A's upper triangle
        low, info = cholesky(L, mT(L, a))
        return mT(L, low), info
    return cholesky(L, a)


def cholesky_solve_with(L, f, b, up):
    """X with A X = B, A = F F^T (F lower) or F^T F (F upper)."""
    if up:
        return tri_solve(L, f, tri_solve(L, mT(L, f), b, True, False), False, False)
    return tri_solve(L, mT(L, f), tri_solve(L, f, b, True, False), False, False)


@lowers(aten.cholesky_solve.default, check=_check_two)
@empty_ok
def cholesky_solve(L, node):
    b_n, f_n = node.args[:2]
    up = bool(node.args[2]) if len(node.args) > 2 else False
    out = L.out_dtype(node)
    batch = list(L.shape(node)[:-2])
    f, b = batched(L, L.value(f_n, out), batch), batched(L, L.value(b_n, out), batch)
    return cholesky_solve_with(L, f, b, up)


@lowers(aten.cholesky_inverse.default, check=_check_matrix)
@empty_ok
def cholesky_inverse(L, node):
    f = L.value(node.args[0])
    up = bool(node.args[1]) if len(node.args) > 1 else False
    return cholesky_solve_with(L, f, eye(L, f.dtype, list(f.shape)), up)


# ---- Householder QR --------------------------------------------------------------------------

def reflector(L, a, i):
    """Column i of a packed QR as its Householder vector [*batch, m]: 0
    above row i, 1 at it, the stored entries below."""
    m = a.shape[-2]
    batch = list(a.shape[:-2])
    c = col(L, a, i)
    v = L.g.op("select", mask(L, np.arange(m) > i, batch + [m]), c, full_like(L, c, 0))
    return v + L.cast(mask(L, np.arange(m) == i, batch + [m]), a.dtype)


def reflect(L, q, v, tau):
    """(I - tau v v^T) q."""
    nb = len(q.shape) - 2
    w = bdot(L, v, q, nb, nb, nb)
    shape = list(q.shape)
    return q - as_col(L, v * _vec(L, tau, shape[-2]), shape) * as_row(L, w, shape)


def householder_product(L, a, taus, cols):
    """org2r: the first cols columns of H_1 ... H_k, from the last reflector
    to the first."""
    shape = list(a.shape[:-1]) + [cols]
    q = eye(L, a.dtype, shape)
    for i in reversed(range(len(taus))):
        q = reflect(L, q, reflector(L, a, i), taus[i])
    return q


def _check_householder(node):
    a, tau = fake(node.args[0]), fake(node.args[1])
    if tuple(tau.shape[:-1]) != tuple(a.shape[:-2]):
        return "a broadcast batch"
    return _small(a)


@lowers(aten.linalg_householder_product.default, check=_check_householder)
@empty_ok
def linalg_householder_product(L, node):
    a = L.value(node.args[0])
    tau = L.value(node.args[1], a.dtype)
    batch = list(a.shape[:-2])
    taus = [L.g.op("reshape", L.slice(tau, [0] * len(batch) + [i], batch + [i + 1]), shape=batch)
            for i in range(tau.shape[-1])]
    return householder_product(L, a, taus, a.shape[-1])


def geqr2(L, a):
    """LAPACK's unblocked QR: (R and the reflectors packed in one matrix,
    the taus). Each reflector (dlarfg) maps the column onto beta e_1 with
    beta of the opposite sign to the diagonal entry (its sign bit, as
    Fortran's SIGN reads it); a column already zero below the diagonal
    gets tau 0."""
    shape = list(a.shape)
    nb, m, n = len(shape) - 2, shape[-2], shape[-1]
    batch = shape[:-2]
    bits = "i32" if a.dtype == "f32" else "i64"
    taus = []
    for i in range(min(m, n)):
        c = col(L, a, i)
        alpha = entry(L, a, i, i)
        below = L.g.op("select", mask(L, np.arange(m) > i, batch + [m]), c, full_like(L, c, 0))
        xnorm2 = L.g.op("reduce_sum", below * below, axes=[nb])
        flat = L.g.op("eq", xnorm2, full_like(L, xnorm2, 0))
        norm = L.g.op("sqrt", alpha * alpha + xnorm2)
        negative = L.g.op("lt", L.g.op("bitcast", alpha, dtype=bits), L.full(0, bits, tuple(batch)))
        beta = L.g.op("select", flat, alpha, L.g.op("select", negative, norm, -norm))
        tau = L.g.op("select", flat, full_like(L, alpha, 0), (beta - alpha) / beta)
        scale = L.g.op("select", flat, full_like(L, alpha, 1), alpha - beta)
        v = below / _vec(L, scale, m) + L.cast(mask(L, np.arange(m) == i, batch + [m]), a.dtype)
        rest = reflect(L, a, v, tau)   # H applied to every column; only those right of i are kept
        a = L.g.op("select", rows_where(L, shape, lambda r, cc: cc > i), rest, a)
        stored = L.g.op("select", mask(L, np.arange(m) == i, batch + [m]), _vec(L, beta, m),
                        L.g.op("select", mask(L, np.arange(m) > i, batch + [m]), v, c))
        a = L.g.op("select", rows_where(L, shape, lambda r, cc: cc == i), as_col(L, stored, shape), a)
        taus.append(tau)
    return a, taus


def _check_qr(node):
    mode = node.args[1] if len(node.args) > 1 else node.kwargs.get("mode", "reduced")
    if mode not in ("reduced", "complete", "r"):
        return "mode %r" % (mode,)
    return _check_matrix(node)


@lowers(aten.linalg_qr.default, check=_check_qr)
@empty_ok
def linalg_qr(L, node):
    mode = node.args[1] if len(node.args) > 1 else node.kwargs.get("mode", "reduced")
    a = L.value(node.args[0])
    q_shape, r_shape = (list(t.shape) for t in fake(node))
    packed, taus = geqr2(L, a)
    s = list(packed.shape)
    r_rows = r_shape[-2]
    r = L.slice(packed, [0] * len(s), s[:-2] + [r_rows, s[-1]])
    r = L.g.op("select", rows_where(L, list(r.shape), lambda rr, c: rr <= c), r, full_like(L, r, 0))
    if mode == "r":
        return L.full(0, a.dtype, tuple(q_shape)), r
    return householder_product(L, packed, taus, q_shape[-1]), r


@lowers(aten.geqrf.default, check=_check_matrix)
@empty_ok
def geqrf(L, node):
    """LAPACK's packed QR: R and the reflectors in one matrix, and the taus."""
    a = L.value(node.args[0])
    packed, taus = geqr2(L, a)
    batch = list(a.shape[:-2])
    cols = [L.g.op("reshape", t, shape=batch + [1]) for t in taus]
    return packed, (cols[0] if len(cols) == 1 else L.g.op("concat", *cols, axis=len(batch)))


def _check_ormqr(node):
    a, tau, c = (fake(x) for x in node.args[:3])
    if not (tuple(a.shape[:-2]) == tuple(tau.shape[:-1]) == tuple(c.shape[:-2])):
        return "a broadcast batch"
    return _small(a, c)


@lowers(aten.ormqr.default, check=_check_ormqr)
@empty_ok
def ormqr(L, node):
    """Q C, Q^T C, C Q or C Q^T with Q = H_1 ... H_k from geqrf's
    reflectors: the reflectors applied to C (C^T from the right, as H is
    symmetric) one by one, in the order the product needs."""
    a = L.value(node.args[0])
    tau = L.value(node.args[1], a.dtype)
    c = L.value(node.args[2], a.dtype)
    left = node.args[3] if len(node.args) > 3 else node.kwargs.get("left", True)
    transpose = node.args[4] if len(node.args) > 4 else node.kwargs.get("transpose", False)
    batch = list(a.shape[:-2])
    k = tau.shape[-1]
    order = range(k) if left == bool(transpose) else reversed(range(k))
    c = c if left else mT(L, c)
    for i in order:
        t = L.g.op("reshape", L.slice(tau, [0] * len(batch) + [i], batch + [i + 1]), shape=batch)
        c = reflect(L, c, reflector(L, a, i), t)
    return c if left else mT(L, c)


# ---- the error check PyTorch runs after a factorization ------------------------------------

def _check_errors_only(node):
    if node.args[1] is not aten._linalg_check_errors.default:
        return "an effect other than the linalg error check (%s)" % node.args[1]
    return None


@lowers(torch.ops.higher_order.with_effects, check=_check_errors_only)
def linalg_check_errors(L, node):
    """with_effects(token, _linalg_check_errors, info, api, is_matrix):
    PyTorch raises when a factorization reported failure (info != 0: a
    singular matrix, one not positive definite). tessera's gather refuses
    position -1 at run time, so the region raises too (an ExecutionError
    naming the gather, not PyTorch's LinAlgError) instead of returning
    what the failed factorization left. The token is passed on with the
    gather's empty slice added, so the check stays in the graph."""
    token, info = L.value(node.args[0]), L.value(node.args[2])
    count = int(np.prod(info.shape)) if info.shape else 1
    failed = L.g.op("ne", L.g.op("reshape", info, shape=[count]), L.full(0, info.dtype, (count,)))
    failures = L.g.op("reduce_sum", L.g.op("cast", failed, dtype="i64"), axes=[0])
    pos = L.g.op("select", L.g.op("eq", failures, L.full(0, "i64", ())), L.full(0, "i64", ()), L.full(-1, "i64", ()))
    probe = L.g.op("gather", L.full(0, token.dtype, (1,)), L.g.op("reshape", pos, shape=[1]), axis=0)
    return (token + L.g.op("slice", probe, start=[0], limit=[0], stride=[1]),)
