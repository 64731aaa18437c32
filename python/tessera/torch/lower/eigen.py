"""Symmetric eigenvalues and singular values by Jacobi rotations, and what
is built on them: eigvalsh, svdvals (so matrix_rank, cond, the nuclear
norm), pinv, matrix_sqrth, polar.

Jacobi's method in its parallel (round-robin) order: each round rotates
n/2 disjoint pairs of rows/columns at once, one whole-batch update of a
few primitives, and the rounds run in a `while` loop until the
off-diagonal part is negligible (D111). The symmetric form rotates both
sides of the matrix (A <- J^T A J); the one-sided form (Hestenes)
rotates the columns of A until they are orthogonal (A <- A J), so the
singular values are the column norms and are accurate relative to each
value, not to the largest. Everything runs in f64 and is cast to the
result's dtype.

Eigenvectors and singular vectors are unique only up to sign, and
eager's signs are LAPACK's choice, so the operators that return them
(eigh, svd) fall back; the ones whose results are unique (values,
pseudo-inverse, square root, polar factors) compile. Matrices are
[*batch, rows, cols]."""
import operator

import numpy as np
import torch

from .decomp import as_row, bdot, mT
from .linalg import empty_ok
from .table import fake, lowers, ts_dtype

aten = torch.ops.aten
# the loop runs on the interpreter until control flow compiles (issue
# 32): about 0.1 s for a batch of 8 16x16 matrices, so larger ones fall back
MAX_N = 16
MAX_SWEEPS = 30   # f64 Jacobi converges quadratically: random matrices take 4 to 8
# off-diagonal entries below TOL of their diagonal are done: the values
# then carry about TOL^2 relative error from them, far below f32's, and
# rounding keeps some f64 entries from reaching 1e-15
TOL = 1e-12


def round_robin(n):
    """[rounds, n]: the partner of each index in each round (itself when it
    sits out), every pair meeting once per sweep (the circle method)."""
    m = n + n % 2
    players = list(range(m))
    rounds = []
    for _ in range(max(m - 1, 1)):
        partner = list(range(n))
        for k in range(m // 2):
            a, b = players[k], players[m - 1 - k]
            if a < n and b < n:
                partner[a], partner[b] = b, a
        rounds.append(partner)
        players = [players[0], players[-1]] + players[1:-1]
    return np.array(rounds, np.int64)


def eye_mask(L, n):
    return L.g.op("eq", L.g.op("iota", dtype="i64", shape=[n, n], axis=0),
                  L.g.op("iota", dtype="i64", shape=[n, n], axis=1))


def gram(L, a, one_sided):
    nb = len(a.shape) - 2
    return bdot(L, a, a, nb, nb, nb) if one_sided else a


def unconverged(L, g):
    """Whether some off-diagonal g_pq is not negligible next to g_pp and
    g_qq or the norm (|g_pq| > TOL sqrt(|g_pp g_qq|), roughly): a bool
    scalar. NaN ends the loop."""
    n = g.shape[-1]
    nb = len(g.shape) - 2
    d = L.g.op("abs", diagonal(L, g))
    scale = L.g.op("reshape", d, shape=list(d.shape[:-1]) + [n, 1]) * as_row(L, d, list(g.shape))
    # and an absolute floor, TOL of the norm: a zero eigenvalue's row
    # cannot get below rounding relative to itself
    norm2 = L.g.op("reshape", L.g.op("reduce_sum", g * g, axes=[nb, nb + 1]), shape=list(g.shape[:-2]) + [1, 1])
    excess = L.g.op("select", eye_mask(L, n), g * 0.0, g * g - (scale + norm2) * TOL * TOL)
    worst = L.g.op("reduce_max", excess, axes=list(range(len(g.shape))))
    return L.g.op("lt", L.g.scalar(0.0, "f64"), worst)


def rotations(L, g, partner):
    """The round's rotation J [*batch, n, n] zeroing g_pq for every pair
    (p < q) of partner (an i64 [n]): J_pp = J_qq = c, J_pq = s,
    J_qp = -s with t = s / c the smaller root of t^2 + 2 theta t - 1 = 0,
    theta = (g_qq - g_pp) / 2 g_pq (Rutishauser's stable form)."""
    n = g.shape[-1]
    shape = list(g.shape)
    last = len(shape) - 1
    idx = L.g.op("iota", dtype="i64", shape=[n], axis=0)
    pair = L.g.op("cast", L.g.op("eq", L.g.op("iota", dtype="i64", shape=[n, n], axis=1),
                                 L.g.op("reshape", partner, shape=[n, 1])), dtype="f64")
    diag = L.g.op("cast", eye_mask(L, n), dtype="f64")
    d = diagonal(L, g)
    off = L.g.op("reduce_sum", g * pair, axes=[last])                       # g[i, partner(i)]
    other = L.g.op("reduce_sum", as_row(L, d, shape) * pair, axes=[last])   # d[partner(i)]
    first = L.g.op("lt", idx, partner)
    diff = L.g.op("select", first, other - d, d - other)                     # g_qq - g_pp
    turn = L.g.op("and", L.g.op("ne", idx, partner), L.g.op("ne", off, off * 0.0))
    theta = diff / (L.g.op("select", turn, off, off * 0.0 + 1.0) * 2.0)
    sign = L.g.op("select", L.g.op("lt", theta, theta * 0.0), theta * 0.0 - 1.0, theta * 0.0 + 1.0)
    t = sign / (L.g.op("abs", theta) + L.g.op("sqrt", theta * theta + 1.0))
    t = L.g.op("select", turn, t, t * 0.0)
    c = 1.0 / L.g.op("sqrt", t * t + 1.0)
    s = L.g.op("select", first, t * c, -(t * c))
    col = lambda v: L.g.op("reshape", v, shape=list(v.shape) + [1])  # noqa: E731
    return col(c) * diag + col(s) * pair


def jacobi(L, a, one_sided, vectors=True):
    """(A rotated, the product V of the rotations or None): for a
    symmetric A, A <- J^T A J ends diagonal (the eigenvalues) with
    A = V diag V^T; one sided, A V ends with orthogonal columns."""
    shape = list(a.shape)
    nb, n = len(shape) - 2, shape[-1]
    table = round_robin(n)
    state = [L.g.scalar(0, "i64"), a]
    if vectors:
        state.append(L.g.op("broadcast", L.g.op("cast", eye_mask(L, n), dtype="f64"), shape=shape[:-2] + [n, n],
                            axes=[nb, nb + 1]))

    def more(k, a, *v):
        return L.g.op("and", L.g.op("lt", k, L.g.scalar(MAX_SWEEPS * len(table), "i64")),
                      unconverged(L, gram(L, a, one_sided)))

    def rotate(k, a, *v):
        r = L.g.op("rem", k, L.g.scalar(len(table), "i64"))
        partner = L.g.op("reshape", L.g.op("gather", L.g.const(table), L.g.op("reshape", r, shape=[1]), axis=0),
                         shape=[n])
        j = rotations(L, gram(L, a, one_sided), partner)
        if one_sided:
            a = bdot(L, a, j, nb + 1, nb, nb)
        else:
            a = bdot(L, bdot(L, j, a, nb, nb, nb), j, nb + 1, nb, nb)
        return (k + L.g.scalar(1, "i64"), a) + tuple(bdot(L, x, j, nb + 1, nb, nb) for x in v)

    out = L.g.op("while", *state, regions=(more, rotate))
    return out[1], (out[2] if vectors else None)


def diagonal(L, a):
    n = a.shape[-1]
    return L.g.op("reduce_sum", L.g.op("select", eye_mask(L, n), a, a * 0.0), axes=[len(a.shape) - 1])


def symmetric(L, a, upper=False):
    """The symmetric matrix one triangle of a describes (LAPACK reads only that one)."""
    n = a.shape[-1]
    rows = L.g.op("iota", dtype="i64", shape=[n, n], axis=0)
    cols = L.g.op("iota", dtype="i64", shape=[n, n], axis=1)
    keep = L.g.op("le", rows, cols) if upper else L.g.op("le", cols, rows)
    return L.g.op("select", keep, a, mT(L, a))


def one_sided(L, a):
    """(B = A V with orthogonal columns, V) for A [*batch, m, n], m >= n:
    A = (B / sigma) diag(sigma) V^T, sigma the column norms of B."""
    return jacobi(L, a, True)


def column_norms(L, b):
    return L.g.op("sqrt", L.g.op("reduce_sum", b * b, axes=[len(b.shape) - 2]))


def tall(L, node, i=0):
    """Argument i in f64, transposed if it has more columns than rows
    (the singular values of A^T are A's); and whether it was."""
    a = L.cast(L.value(node.args[i]), "f64")
    wide = a.shape[-1] > a.shape[-2]
    return (mT(L, a) if wide else a), wide


# ---- checks ---------------------------------------------------------------------------------

def _matrix_ok(node):
    """a dtype other than f32/f64, or a matrix over 16 rows or columns (MAX_N)"""
    t = fake(node.args[0])
    if t.dtype not in (torch.float32, torch.float64):
        return "dtype %s" % t.dtype
    if max(t.shape[-2:]) > MAX_N:
        return "a matrix over %d rows or columns" % MAX_N
    return None


def _values_only(flag, values, what):
    def check(node):
        args = dict(zip([a.name for a in node.target._schema.arguments], node.args), **node.kwargs)
        used = {u.args[1] for u in node.users if u.target is operator.getitem} | \
            ({-1} if any(u.target is not operator.getitem for u in node.users) else set())
        if args.get(flag, True) and used - {values}:
            return "%s used (unique only up to sign: eager's are LAPACK's choice)" % what
        return _matrix_ok(node)
    check.__doc__ = "%s used (unique only up to sign: eager's are LAPACK's choice); %s" % (what, _matrix_ok.__doc__)
    return check


# ---- lowerings ------------------------------------------------------------------------------

@lowers(aten._linalg_eigh.default, check=_values_only("compute_v", 0, "eigenvectors"))
@empty_ok
def linalg_eigh(L, node):
    uplo = node.args[1] if len(node.args) > 1 else node.kwargs.get("UPLO", "L")
    a = symmetric(L, L.cast(L.value(node.args[0]), "f64"), upper=uplo.upper() == "U")
    w, _ = L.g.op("sort", diagonal(L, jacobi(L, a, False, vectors=False)[0]), axis=len(a.shape) - 2)
    vals, vecs = fake(node)
    return L.cast(w, ts_dtype(vals.dtype)), L.full(0, ts_dtype(vecs.dtype), tuple(vecs.shape))


@lowers(aten._linalg_svd.default, check=_values_only("compute_uv", 1, "singular vectors"))
@empty_ok
def linalg_svd(L, node):
    a, _ = tall(L, node)
    s, _ = L.g.op("sort", column_norms(L, jacobi(L, a, True, vectors=False)[0]), axis=len(a.shape) - 2,
                  descending=1)
    u, vals, vh = fake(node)
    return (L.full(0, ts_dtype(u.dtype), tuple(u.shape)), L.cast(s, ts_dtype(vals.dtype)),
            L.full(0, ts_dtype(vh.dtype), tuple(vh.shape)))


@lowers(aten.linalg_pinv.atol_rtol_tensor, check=_matrix_ok)
@empty_ok
def linalg_pinv(L, node):
    """As eager: singular values (|eigenvalues| when hermitian) above
    max(atol, rtol * the largest) are inverted, the others dropped; rtol
    defaults to eps * max(rows, cols) unless atol > 0 is given."""
    x = fake(node.args[0])
    out = ts_dtype(x.dtype)
    m, n = x.shape[-2:]
    atol, rtol = node.kwargs.get("atol"), node.kwargs.get("rtol")
    hermitian = node.kwargs.get("hermitian", False)
    nb = len(x.shape) - 2
    eps = torch.finfo(x.dtype).eps * max(m, n)
    batch = list(x.shape[:-2])
    tol_a = L.broadcast_to(L.value(atol, "f64"), batch) if atol is not None else L.full(0.0, "f64", batch)
    if rtol is not None:
        tol_r = L.broadcast_to(L.value(rtol, "f64"), batch)
    elif atol is not None:
        tol_r = L.g.op("select", L.g.op("lt", tol_a * 0.0, tol_a), tol_a * 0.0, tol_a * 0.0 + eps)
    else:
        tol_r = L.full(eps, "f64", batch)

    def keep(mags):
        """1 / mags where mags exceed the tolerance, else 0 (mags [*batch, k])."""
        big = L.g.op("reduce_max", mags, axes=[nb])
        tol = L.g.op("max", tol_a, tol_r * big)
        tol = L.g.op("reshape", tol, shape=batch + [1])
        return L.g.op("lt", tol, mags)

    if hermitian:
        a = symmetric(L, L.cast(L.value(node.args[0]), "f64"))
        d, v = jacobi(L, a, False)
        w = diagonal(L, d)
        inv = L.g.op("select", keep(L.g.op("abs", w)), 1.0 / w, w * 0.0)
        p = bdot(L, v * as_row(L, inv, list(v.shape)), v, nb + 1, nb + 1, nb)   # V diag(inv) V^T
        return L.cast(p, out)
    a, wide = tall(L, node)
    b, v = one_sided(L, a)
    s = column_norms(L, b)
    inv2 = L.g.op("select", keep(s), 1.0 / (s * s), s * 0.0)
    # A = B diag(1/s) ... : pinv(A) = V diag(1/s) W^T = V diag(1/s^2) B^T
    p = bdot(L, v * as_row(L, inv2, list(v.shape)), b, nb + 1, nb + 1, nb)
    return L.cast(mT(L, p) if wide else p, out)


@lowers(aten.linalg_matrix_sqrth.default, check=_matrix_ok)
@empty_ok
def matrix_sqrth(L, node):
    """V diag(sqrt(w)) V^T from the lower triangle (NaN for a negative eigenvalue, as eager)."""
    a = symmetric(L, L.cast(L.value(node.args[0]), "f64"))
    nb = len(a.shape) - 2
    d, v = jacobi(L, a, False)
    r = L.g.op("sqrt", diagonal(L, d))
    return L.cast(bdot(L, v * as_row(L, r, list(v.shape)), v, nb + 1, nb + 1, nb), L.out_dtype(node))


def _polar_ok(node):
    """more columns than rows (eager refuses them), a dtype other than f32/f64, a matrix over 16 rows or columns"""
    t = fake(node.args[0])
    if t.shape[-1] > t.shape[-2]:
        return "more columns than rows"
    return _matrix_ok(node)


@lowers(aten.linalg_polar.default, check=_polar_ok)
@empty_ok
def linalg_polar(L, node):
    """A = U H: with A V = B (orthogonal columns, norms s), U = B diag(1/s) V^T
    and H = V diag(s) V^T (unique where A has full column rank)."""
    a = L.cast(L.value(node.args[0]), "f64")
    nb = len(a.shape) - 2
    b, v = one_sided(L, a)
    s = column_norms(L, b)
    u = bdot(L, b / as_row(L, s, list(b.shape)), v, nb + 1, nb + 1, nb)
    h = bdot(L, v * as_row(L, s, list(v.shape)), v, nb + 1, nb + 1, nb)
    out = L.out_dtype(node)
    return L.cast(u, out), L.cast(h, out)
