"""Special functions (torch.special and their aten operators): the error
function family, gamma and its derivatives, the Hurwitz zeta function,
Bessel functions. Each is a fixed, branch-free composition of primitives:
every branch of the reference algorithm is evaluated and the right one
selected per element, and a data-dependent loop becomes a fixed number of
steps in which an element that is done stops changing.

The algorithms and coefficients are those of PyTorch's CPU kernels
(aten/src/ATen/native/Math.h), most of them derived from the Cephes Math
Library (Copyright (c) 2018, Steven Moshier; 3-clause BSD licence, as
quoted there), so results agree with eager PyTorch to float32 tolerance.
They run in f64 (cast in, cast out). Where PyTorch's float kernel departs
from the exact value by more than that tolerance, the step responsible is
done in the result's dtype as PyTorch does it: trigamma near its poles,
exp overflowing in i0/i1, x - phase in the large-x Bessel forms."""
import functools
import math

import torch

from .elementwise import is_nan, is_sign_negative
from .table import fake, first
from .table import lowers as _lowers

lowers = functools.partial(_lowers, dynamic=True)   # elementwise: never computes with sizes

aten = torch.ops.aten
F64 = "f64"


# ---- helpers over Values ----------------------------------------------------------------------

def const(L, value, like):
    return L.full(value, like.dtype, ())


def where(L, cond, a, b):
    """select, with numbers for either branch taken as scalars of the other's dtype."""
    like = a if not isinstance(a, (int, float)) else b
    a = const(L, a, like) if isinstance(a, (int, float)) else a
    b = const(L, b, like) if isinstance(b, (int, float)) else b
    return L.g.op("select", cond, a, b)


def lt(L, a, b):
    return L.g.op("lt", a, const(L, b, a) if isinstance(b, (int, float)) else b)


def eq(L, a, b):
    return L.g.op("eq", a, const(L, b, a) if isinstance(b, (int, float)) else b)


def polevl(L, x, coeffs):
    """Cephes polevl: coeffs[0] x^n + ... + coeffs[n] (highest degree first), by Horner."""
    acc = const(L, coeffs[0], x)
    for c in coeffs[1:]:
        acc = acc * x + c
    return acc


def p1evl(L, x, coeffs):
    """Cephes p1evl: polevl with an implicit leading coefficient 1."""
    return polevl(L, x, [1.0] + list(coeffs))


def chbevl(L, x, coeffs):
    """Cephes chbevl: the Chebyshev series sum' coeffs[i] T_i(x/2), zero-order term last (Clenshaw)."""
    b0, b1, b2 = const(L, coeffs[0], x), const(L, 0.0, x), const(L, 0.0, x)
    for c in coeffs[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return (b0 - b2) * 0.5


def trunc(L, x):
    return where(L, lt(L, x, 0), L.g.op("ceil", x), L.g.op("floor", x))


def unary_f64(fn):
    """A lowering computing fn(L, x) in f64 on the argument, cast back to the result's dtype."""
    def lower(L, node):
        return L.cast(fn(L, L.value(node.args[0], F64)), L.out_dtype(node))
    return lower


# ---- the error function family --------------------------------------------------------------

_CF_TERMS = 30   # continued fraction of erfc for x >= 2: relative error below 1e-11 with 30 terms


def erfcx_large(L, x):
    """erfcx(x) = exp(x^2) erfc(x) for x >= 2 by its continued fraction 1/sqrt(pi) / (x + (1/2)/(x + 1/(x +
    (3/2)/(x + ...)))), evaluated from the tail; finite for every x (1/(sqrt(pi) x) as x grows)."""
    t = x
    for k in range(_CF_TERMS, 0, -1):
        t = x + (k / 2) / t
    return (1 / math.sqrt(math.pi)) / t


def erfc_and_erfcx(L, x):
    """(erfc(x), erfcx(x)) in f64: 1 - erf(x) below 2, where it loses nothing in f64, the continued
    fraction above."""
    small = lt(L, x, 2.0)
    big = erfcx_large(L, L.g.op("max", x, const(L, 2.0, x)))
    xx = x * x
    erfc_small = 1.0 - L.g.op("erf", x)
    erfc = where(L, small, erfc_small, big * L.g.op("exp", -xx))
    # where x*x overflows the exponential, erfc is 2 and erfcx is infinite, as PyTorch's
    erfcx = where(L, small, erfc_small * L.g.op("exp", xx), big)
    return erfc, erfcx


lowers(aten.erfc.default)(unary_f64(lambda L, x: erfc_and_erfcx(L, x)[0]))
lowers(aten.special_erfcx.default)(unary_f64(lambda L, x: where(L, is_nan(L, x), x, erfc_and_erfcx(L, x)[1])))


_NDTRI_P0 = [-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0]
_NDTRI_Q0 = [1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0]
_NDTRI_P1 = [4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4]
_NDTRI_Q1 = [1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4]
_NDTRI_P2 = [3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9]
_NDTRI_Q2 = [6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9]


def ndtri(L, y0):
    """Cephes ndtri: the x with Phi(x) = y0."""
    exp_m2 = 0.13533528323661269189   # exp(-2)
    upper = lt(L, const(L, 1.0 - exp_m2, y0), y0)
    y = where(L, upper, 1.0 - y0, y0)
    # central: y in (exp(-2), 1 - exp(-2))
    yc = y - 0.5
    y2 = yc * yc
    central = (yc + yc * (y2 * polevl(L, y2, _NDTRI_P0) / p1evl(L, y2, _NDTRI_Q0))) * math.sqrt(2 * math.pi)
    # tails, in z = sqrt(-2 log y); y clamped positive so the unused lanes stay finite
    x = L.g.op("sqrt", L.g.op("log", L.g.op("max", y, const(L, 1e-300, y))) * -2.0)
    z = 1.0 / x
    near = z * polevl(L, z, _NDTRI_P1) / p1evl(L, z, _NDTRI_Q1)
    far = z * polevl(L, z, _NDTRI_P2) / p1evl(L, z, _NDTRI_Q2)
    tail = x - L.g.op("log", x) / x - where(L, lt(L, x, 8.0), near, far)
    tail = where(L, upper, tail, -tail)
    out = where(L, lt(L, const(L, exp_m2, y), y), central, tail)
    out = where(L, eq(L, y0, 0.0), -math.inf, where(L, eq(L, y0, 1.0), math.inf, out))
    outside = L.g.op("or", lt(L, y0, 0.0), lt(L, const(L, 1.0, y0), y0))
    return where(L, outside, math.nan, out)


lowers(aten.special_ndtri.default)(unary_f64(ndtri))


def erfinv(L, y):
    """PyTorch's erfinv: a rational first guess, then two Newton steps on erf."""
    ay = L.g.op("abs", y)
    z = y * y
    central = y * polevl(L, z, [-0.140543331, 0.914624893, -1.645349621, 0.886226899]) / \
        polevl(L, z, [0.012229801, -0.329097515, 1.442710462, -2.118377725, 1.0])
    zt = L.g.op("sqrt", -L.g.op("log", (1.0 - L.g.op("min", ay, const(L, 1.0, ay))) * 0.5))
    num = polevl(L, zt, [1.641345311, 3.429567803, -1.624906493, -1.970840454])
    tail = where(L, L.g.op("lt", y, const(L, 0.0, y)), -num, num) / polevl(L, zt, [1.637067800, 3.543889200, 1.0])
    x = where(L, L.g.op("le", ay, const(L, 0.7, ay)), central, tail)
    for _ in range(2):
        x = x - (L.g.op("erf", x) - y) / (L.g.op("exp", -(x * x)) * (2 / math.sqrt(math.pi)))
    x = where(L, eq(L, ay, 1.0), where(L, lt(L, y, 0.0), const(L, -math.inf, y), math.inf), x)
    return where(L, lt(L, const(L, 1.0, ay), ay), math.nan, x)


lowers(aten.erfinv.default)(unary_f64(erfinv))


# ---- gamma and its derivatives --------------------------------------------------------------

# Lanczos (g = 7, n = 9): lgamma to about 1e-15 for x >= 1/2; C's lgamma is what PyTorch calls
_LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7]


def lgamma_right(L, x):
    """lgamma for x >= 1/2 (Lanczos)."""
    z = x - 1.0
    a = const(L, _LANCZOS[0], x)
    for i, p in enumerate(_LANCZOS[1:], 1):
        a = a + p / (z + float(i))
    t = z + 7.5
    return (z + 0.5) * L.g.op("log", t) - t + L.g.op("log", a) + 0.5 * math.log(2 * math.pi)


def sin_pi_frac(L, x):
    """|sin(pi x)| from the distance to the nearest integer (exact), so it is 0 at the integers and
    accurate near them."""
    return L.g.op("sin", L.g.op("abs", x - L.g.op("round", x)) * math.pi)


def lgamma(L, x):
    """log|Gamma(x)|; below 1/2 by the reflection log(pi / |sin(pi x)|) - lgamma(1 - x)."""
    left = lt(L, x, 0.5)
    right = lgamma_right(L, where(L, left, 1.0 - x, x))
    reflected = math.log(math.pi) - L.g.op("log", sin_pi_frac(L, x)) - right
    out = where(L, left, reflected, right)
    return where(L, eq(L, L.g.op("abs", x), math.inf), math.inf, out)


lowers(aten.lgamma.default)(unary_f64(lgamma))

# ---- regularized incomplete gamma -----------------------------------------------------------
# P(a, x) by its series for x < a + 1, Q(a, x) by Legendre's continued fraction (modified Lentz)
# elsewhere, the other as 1 - it, in f64: one `while` over the whole tensor until every element's
# sum has converged. The boundary values are PyTorch's (SciPy's).
_GAMMA_EPS = 1e-16
_GAMMA_TINY = 1e-300
_GAMMA_ROUNDS = 100000   # x near a large takes about sqrt(2 a ln(1e16)) rounds: a up to about 1e8


def igamma_pair(L, a, x):
    """(P(a, x), Q(a, x)) for f64 a, x of one shape."""
    g = L.g
    zero, one = const(L, 0.0, a), const(L, 1.0, a)
    is_nan = lambda v: g.op("ne", v, v)  # noqa: E731
    is_inf = lambda v: eq(L, g.op("abs", v), math.inf)  # noqa: E731
    edge = g.op("or", g.op("or", g.op("le", x, zero), g.op("le", a, zero)),
                g.op("or", g.op("or", is_inf(a), is_inf(x)), g.op("or", is_nan(a), is_nan(x))))
    series = lt(L, x, a + 1.0)
    b0 = where(L, series, 1.0, x + 1.0 - a)

    def more(i, a, x, series, done, term, total, b, c, d, h):
        left = g.op("reduce_sum", L.cast(g.op("not", done), "i64"), axes=list(range(len(done.shape))))
        return g.op("and", lt(L, i, L.g.scalar(float(_GAMMA_ROUNDS), "i64")),
                    lt(L, L.g.scalar(0, "i64"), left))

    def step(i, a, x, series, done, term, total, b, c, d, h):
        fi = L.cast(i, F64)
        term2 = term * x / (a + fi)
        total2 = total + term2
        s_done = g.op("le", g.op("abs", term2), g.op("abs", total2) * _GAMMA_EPS)
        an = (fi - a) * fi * -1.0
        b2 = b + 2.0
        d2 = an * d + b2
        d2 = where(L, lt(L, g.op("abs", d2), _GAMMA_TINY), _GAMMA_TINY, d2)
        c2 = b2 + an / c
        c2 = where(L, lt(L, g.op("abs", c2), _GAMMA_TINY), _GAMMA_TINY, c2)
        d2 = 1.0 / d2
        delta = d2 * c2
        h2 = h * delta
        c_done = lt(L, g.op("abs", delta - 1.0), _GAMMA_EPS)
        keep = lambda new, old: g.op("select", done, old, new)  # noqa: E731
        now = g.op("or", done, g.op("select", series, s_done, c_done))
        return (i + L.g.scalar(1, "i64"), a, x, series, now, keep(term2, term), keep(total2, total),
                keep(b2, b), keep(c2, c), keep(d2, d), keep(h2, h))

    d0 = 1.0 / b0
    ones = L.full(1.0, F64, tuple(a.shape))
    out = g.op("while", L.g.scalar(1, "i64"), a, x, series, edge, ones, ones, b0, ones * (1.0 / _GAMMA_TINY), d0,
               d0, regions=(more, step))
    total, h = out[6], out[10]
    safe_a = where(L, edge, 1.0, a)
    safe_x = where(L, edge, 1.0, x)
    log_front = safe_a * g.op("log", safe_x) - safe_x
    p_series = g.op("exp", log_front - lgamma(L, safe_a + 1.0)) * total
    q_cf = g.op("exp", log_front - lgamma(L, safe_a)) * h
    p = where(L, series, p_series, 1.0 - q_cf)
    q = where(L, series, 1.0 - p_series, q_cf)
    # PyTorch's boundary values, the first that applies winning
    nan = const(L, math.nan, a)
    rules = [(g.op("or", g.op("or", lt(L, x, 0.0), lt(L, a, 0.0)), g.op("or", is_nan(a), is_nan(x))), nan, nan),
             (eq(L, a, 0.0), where(L, lt(L, zero, x), one, nan), where(L, lt(L, zero, x), zero, nan)),
             (eq(L, x, 0.0), zero, one),
             (is_inf(a), where(L, is_inf(x), nan, zero), where(L, is_inf(x), nan, one)),
             (is_inf(x), one, zero)]
    for cond, pv, qv in reversed(rules):
        p, q = g.op("select", cond, pv, p), g.op("select", cond, qv, q)
    return p, q


def _incomplete_gamma(upper):
    def lower(L, node):
        shape = L.shape(node)
        a, x = (L.broadcast_to(L.value(v, F64), shape) for v in node.args[:2])
        return L.cast(igamma_pair(L, a, x)[1 if upper else 0], L.out_dtype(node))
    return lower


lowers(aten.igamma.default)(_incomplete_gamma(False))
lowers(aten.igammac.default)(_incomplete_gamma(True))

_DIGAMMA_A = [8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2]


def digamma_right(L, x):
    """Cephes psi for x > 0: pushed up to x >= 10 by psi(x) = psi(x+1) - 1/x, then asymptotic."""
    result = const(L, 0.0, x)
    for _ in range(10):
        below = lt(L, x, 10.0)
        result = result - where(L, below, 1.0 / x, 0.0)
        x = where(L, below, x + 1.0, x)
    z = 1.0 / (x * x)
    y = where(L, lt(L, x, 1e17), z * polevl(L, z, _DIGAMMA_A), 0.0)
    return result + L.g.op("log", x) - 0.5 / x - y


def digamma(L, x):
    """PyTorch's calc_digamma: negative x by reflection, pi / tan(pi r) on the fractional part r."""
    neg = lt(L, x, 0.0)
    out = digamma_right(L, where(L, neg, 1.0 - x, x))
    frac = x - trunc(L, x)
    out = where(L, neg, out - math.pi / L.g.op("tan", frac * math.pi), out)
    out = where(L, L.g.op("and", neg, eq(L, x, trunc(L, x))), math.nan, out)
    # psi(+-0) = -+inf
    zero = eq(L, x, 0.0)
    return where(L, zero, where(L, is_sign_negative(L, x), const(L, math.inf, x), -math.inf), out)


lowers(aten.digamma.default)(unary_f64(digamma))


def trigamma(L, x):
    """PyTorch's trigamma, in the argument's own dtype like its float kernel (whose sin(pi x) at the
    poles is not 0, so neither is ours): reflection below 1/2, six recurrence steps, asymptotic."""
    left = lt(L, x, 0.5)
    s = L.g.op("sin", x * math.pi)
    result = where(L, left, -(math.pi * math.pi) / (s * s), 0.0)
    x = where(L, left, 1.0 - x, x)
    for _ in range(6):
        result = result + 1.0 / (x * x)
        x = x + 1.0
    ixx = 1.0 / (x * x)
    result = result + (1.0 + 1.0 / (x * 2.0) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
    return where(L, left, -result, result)


# Euler-Maclaurin denominators of Cephes zeta (2k! / B_2k)
_ZETA_A = [12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18]
_MACHEP = 1.11022302462515654042E-16


def zeta_positive(L, x, q):
    """Cephes zeta(x, q) for q > 0, as PyTorch runs it (in double): nine terms of the sum, then the
    Euler-Maclaurin tail; an element whose next term no longer changes the sum keeps the sum it had
    (PyTorch's early returns)."""
    s = L.g.op("pow", q, -x)
    a = q
    b = const(L, 0.0, q)
    done = L.g.op("ne", q, q)   # all false
    for _ in range(9):
        a = a + 1.0
        b = L.g.op("pow", a, -x)
        s = where(L, done, s, s + b)
        done = L.g.op("or", done, L.g.op("and", lt(L, -_MACHEP * s, b), lt(L, b, s * _MACHEP)))
    w = a
    s = where(L, done, s, s + b * w / (x - 1.0) - b * 0.5)
    a, k = const(L, 1.0, q), 0.0
    for coeff in _ZETA_A:
        a = a * (x + k)
        b = b / w
        t = a * b / coeff
        s = where(L, done, s, s + t)
        done = L.g.op("or", done, lt(L, L.g.op("abs", t / s), _MACHEP))
        k += 1.0
        a = a * (x + k)
        b = b / w
        k += 1.0
    return s


def stacked(L, fn, x, qs):
    """[fn(x, q) for q in qs] from one evaluation of fn over the qs stacked on a new leading axis (x has
    the qs' shape, or is a scalar): one copy of a long formula in the graph instead of several."""
    shape = list(qs[0].shape)
    lift = lambda v: L.g.op("reshape", v, shape=[1] + shape)   # noqa: E731
    q = L.g.op("concat", *[lift(v) for v in qs], axis=0)
    if x.shape:
        x = L.g.op("concat", *[lift(x)] * len(qs), axis=0)
    y = fn(L, x, q)
    return [L.g.op("reshape", L.slice(y, [i] + [0] * len(shape), [i + 1] + shape), shape=shape)
            for i in range(len(qs))]


def zeta(L, x, q):
    """Hurwitz zeta, PyTorch's special cases included; x is q's shape or a scalar. Negative non-integer q
    (integer x only) sums (q + k)^-x over every k as PyTorch does; here the sum is split at zero into
    three sums of positive arguments: with f = ceil(q) - q, zeta(x, q) = zeta(x, 1 - f) + (-1)^x
    (zeta(x, f) - zeta(x, 1 - q))."""
    neg = lt(L, q, 0.0)
    one = const(L, 1.0, q)
    f = L.g.op("ceil", q) - q
    pos, below, beyond = stacked(L, zeta_positive, x, [where(L, neg, 1.0 - f, q), where(L, neg, f, one),
                                                       where(L, neg, 1.0 - q, one)])
    odd = eq(L, L.g.op("rem", x, const(L, 2.0, x)), 1.0)
    out = where(L, neg, pos + where(L, odd, beyond - below, below - beyond), pos)
    out = where(L, L.g.op("and", L.g.op("le", q, const(L, 0.0, q)), L.g.op("ne", x, L.g.op("floor", x))),
                math.nan, out)
    out = where(L, L.g.op("and", L.g.op("le", q, const(L, 0.0, q)), eq(L, q, L.g.op("floor", q))), math.inf, out)
    out = where(L, lt(L, x, 1.0), math.nan, out)
    return where(L, eq(L, x, 1.0), math.inf, out)


@lowers(aten.special_zeta.default)
def special_zeta(L, node):
    shape = L.shape(node)
    x, q = (L.broadcast_to(L.value(a, F64), shape) for a in node.args[:2])
    return L.cast(zeta(L, x, q), L.out_dtype(node))


def _polygamma_ok(node):
    """n that is not a number"""
    return None if isinstance(node.args[0], int) and node.args[0] >= 0 else "n = %r" % (node.args[0],)


@lowers(aten.polygamma.default, check=_polygamma_ok)
def polygamma(L, node):
    n, out = node.args[0], L.out_dtype(node)
    if n == 0:
        return L.cast(digamma(L, L.value(node.args[1], F64)), out)
    if n == 1:
        work = out if out in ("f32", F64) else "f32"
        return L.cast(trigamma(L, L.value(node.args[1], work)), out)
    x = L.value(node.args[1], F64)
    # psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x)
    scale = (1.0 if n % 2 else -1.0) * math.exp(math.lgamma(n + 1.0))
    return L.cast(zeta(L, const(L, float(n + 1), x), x) * scale, out)


# ---- Bessel functions -------------------------------------------------------------------------
# Cephes's Chebyshev tables (i0, i1, k0, k1) and rational tables (j0, j1, y0, y1), as PyTorch has them.

_I0_A = [-4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
         1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
         -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
         9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-09,
         -1.30002500998624804212e-08, 6.04699502254191894932e-08, -2.67079385394061173391e-07,
         1.11738753912010371815e-06, -4.41673835845875056359e-06, 1.64484480707288970893e-05,
         -5.75419501008210370398e-05, 1.88502885095841655729e-04, -5.76375574538582365885e-04,
         1.63947561694133579842e-03, -4.32430999505057594430e-03, 1.05464603945949983183e-02,
         -2.37374148058994688156e-02, 4.93052842396707084878e-02, -9.49010970480476444210e-02,
         1.71620901522208775349e-01, -3.04682672343198398683e-01, 6.76795274409476084995e-01]
_I0_B = [-7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
         3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
         1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
         -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
         7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
         -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
         3.39623202570838634515e-09, 2.26666899049817806459e-08, 2.04891858946906374183e-07,
         2.89137052083475648297e-06, 6.88975834691682398426e-05, 3.36911647825569408990e-03,
         8.04490411014108831608e-01]
_I1_A = [2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
         -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
         3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
         -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-09,
         9.38153738649577178388e-09, -4.44505912879632808065e-08, 2.00329475355213526229e-07,
         -8.56872026469545474066e-07, 3.47025130813767847674e-06, -1.32731636560394358279e-05,
         4.78156510755005422638e-05, -1.61760815825896745588e-04, 5.12285956168575772895e-04,
         -1.51357245063125314899e-03, 4.15642294431288815669e-03, -1.05640848946261981558e-02,
         2.47264490306265168283e-02, -5.29459812080949914269e-02, 1.02643658689847095384e-01,
         -1.76416518357834055153e-01, 2.52587186443633654823e-01]
_I1_B = [7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
         -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
         -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
         4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
         -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
         3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
         -3.83538038596423702205e-09, -2.63146884688951950684e-08, -2.51223623787020892529e-07,
         -3.88256480887769039346e-06, -1.10588938762623716291e-04, -9.76109749136146840777e-03,
         7.78576235018280120474e-01]
_K0_A = [1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
         1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
         1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
         -5.35327393233902768720e-01]
_K0_B = [5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
         -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
         6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
         -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
         1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
         -1.69753450938905987466e-09, 8.57403401741422608519e-09, -4.66048989768794782956e-08,
         2.76681363944501510342e-07, -1.83175552271911948767e-06, 1.39498137188764993662e-05,
         -1.28495495816278026384e-04, 1.56988388573005337491e-03, -3.14481013119645005427e-02,
         2.44030308206595545468e00]
_K1_A = [-7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
         -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
         -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
         -3.53155960776544875667e-01, 1.52530022733894777053e00]
_K1_B = [-5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
         1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
         -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
         3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
         -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
         2.01504975519703286596e-09, -1.03457624656780970260e-08, 5.74108412545004946722e-08,
         -3.50196060308781257119e-07, 2.40648494783721712015e-06, -1.93619797416608296024e-05,
         1.95215518471351631108e-04, -2.85781685962277938680e-03, 1.03923736576817238437e-01,
         2.72062619048444266945e00]
_J0_PP = [7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e00,
          5.44725003058768775090e00, 8.74716500199817011941e00, 5.30324038235394892183e00,
          9.99999999999999997821e-01]
_J0_PQ = [9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e00,
          5.47097740330417105182e00, 8.76190883237069594232e00, 5.30605288235394617618e00,
          1.00000000000000000218e00]
_J0_QP = [-1.13663838898469149931e-02, -1.28252718670509318512e00, -1.95539544257735972385e01,
          -9.32060152123768231369e01, -1.77681167980488050595e02, -1.47077505154951170175e02,
          -5.14105326766599330220e01, -6.05014350600728481186e00]
_J0_QQ = [6.43178256118178023184e01, 8.56430025976980587198e02, 3.88240183605401609683e03,
          7.24046774195652478189e03, 5.93072701187316984827e03, 2.06209331660327847417e03,
          2.42005740240291393179e02]
_J0_RP = [-4.79443220978201773821e09, 1.95617491946556577543e12, -2.49248344360967716204e14,
          9.70862251047306323952e15]
_J0_RQ = [4.99563147152651017219e02, 1.73785401676374683123e05, 4.84409658339962045305e07,
          1.11855537045356834862e10, 2.11277520115489217587e12, 3.10518229857422583814e14,
          3.18121955943204943306e16, 1.71086294081043136091e18]
_J1_PP = [7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e00,
          5.11207951146807644818e00, 8.42404590141772420927e00, 5.21451598682361504063e00,
          1.00000000000000000254e00]
_J1_PQ = [5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e00,
          5.07386386128601488557e00, 8.39985554327604159757e00, 5.20982848682361821619e00,
          9.99999999999999997461e-01]
_J1_QP = [5.10862594750176621635e-02, 4.98213872951233449420e00, 7.58238284132545283818e01,
          3.66779609360150777800e02, 7.10856304998926107277e02, 5.97489612400613639965e02,
          2.11688757100572135698e02, 2.52070205858023719784e01]
_J1_QQ = [7.42373277035675149943e01, 1.05644886038262816351e03, 4.98641058337653607651e03,
          9.56231892404756170795e03, 7.99704160447350683650e03, 2.82619278517639096600e03,
          3.36093607810698293419e02]
_J1_RP = [-8.99971225705559398224e08, 4.52228297998194034323e11, -7.27494245221818276015e13,
          3.68295732863852883286e15]
_J1_RQ = [6.20836478118054335476e02, 2.56987256757748830383e05, 8.35146791431949253037e07,
          2.21511595479792499675e10, 4.74914122079991414898e12, 7.84369607876235854894e14,
          8.95222336184627338078e16, 5.32278620332680085395e18]
_Y0_YP = [1.55924367855235737965e04, -1.46639295903971606143e07, 5.43526477051876500413e09,
          -9.82136065717911466409e11, 8.75906394395366999549e13, -3.46628303384729719441e15,
          4.42733268572569800351e16, -1.84950800436986690637e16]
_Y0_YQ = [1.04128353664259848412e03, 6.26107330137134956842e05, 2.68919633393814121987e08,
          8.64002487103935000337e10, 2.02979612750105546709e13, 3.17157752842975028269e15,
          2.50596256172653059228e17]
_Y1_YP = [1.26320474790178026440e09, -6.47355876379160291031e11, 1.14509511541823727583e14,
          -8.12770255501325109621e15, 2.02439475713594898196e17, -7.78877196265950026825e17]
_Y1_YQ = [5.94301592346128195359e02, 2.35564092943068577943e05, 7.34811944459721705660e07,
          1.87601316108706159478e10, 3.88231277496238566008e12, 6.20557727146953693363e14,
          6.87141087355300489866e16, 3.97270608116560655612e18]


def exp_in(L, x, dtype):
    """exp(x) computed in dtype, back in f64: it overflows to inf where PyTorch's kernel in that dtype
    does, which the f64 result would not."""
    return L.cast(L.g.op("exp", L.cast(x, dtype)), F64)


def chebyshev_halves(L, ax, a, b):
    """The two-piece Chebyshev form of i0e and i1e: table a on [0, 8] at ax/2 - 2, table b beyond at
    32/ax - 2 (divided by sqrt(ax) there, as the expansion is of sqrt(x) exp(-x) I(x))."""
    return where(L, L.g.op("le", ax, const(L, 8.0, ax)), chbevl(L, ax * 0.5 - 2.0, a),
                 chbevl(L, 32.0 / ax - 2.0, b) / L.g.op("sqrt", ax))


def with_sign_of(L, x, v):
    return where(L, lt(L, x, 0.0), -v, v)


def i0e(L, x, dt):
    return chebyshev_halves(L, L.g.op("abs", x), _I0_A, _I0_B)


def i0(L, x, dt):
    ax = L.g.op("abs", x)
    e = exp_in(L, ax, dt)
    return where(L, L.g.op("le", ax, const(L, 8.0, ax)), e * chbevl(L, ax * 0.5 - 2.0, _I0_A),
                 e * chbevl(L, 32.0 / ax - 2.0, _I0_B) / L.g.op("sqrt", ax))


def i1e(L, x, dt):
    ax = L.g.op("abs", x)
    small = chbevl(L, ax * 0.5 - 2.0, _I1_A) * ax
    large = chbevl(L, 32.0 / ax - 2.0, _I1_B) / L.g.op("sqrt", ax)
    return with_sign_of(L, x, where(L, L.g.op("le", ax, const(L, 8.0, ax)), small, large))


def i1(L, x, dt):
    ax = L.g.op("abs", x)
    e = exp_in(L, ax, dt)
    small = e * ax * chbevl(L, ax * 0.5 - 2.0, _I1_A)
    large = e * chbevl(L, 32.0 / ax - 2.0, _I1_B) / L.g.op("sqrt", ax)
    return with_sign_of(L, x, where(L, L.g.op("le", ax, const(L, 8.0, ax)), small, large))


def k_family(L, x, small, large):
    """k0/k1 and their scaled forms: small(x) up to 2, large(x) beyond; inf at 0, NaN below."""
    out = where(L, L.g.op("le", x, const(L, 2.0, x)), small, large)
    return where(L, eq(L, x, 0.0), math.inf, where(L, lt(L, x, 0.0), math.nan, out))


def k0(L, x, dt, scaled=False):
    small = chbevl(L, x * x - 2.0, _K0_A) - L.g.op("log", x * 0.5) * i0(L, x, dt)
    large = chbevl(L, 8.0 / x - 2.0, _K0_B) / L.g.op("sqrt", x)
    if scaled:
        return k_family(L, x, small * L.g.op("exp", x), large)
    return k_family(L, x, small, L.g.op("exp", -x) * large)


def k1(L, x, dt, scaled=False):
    small = L.g.op("log", x * 0.5) * i1(L, x, dt) + chbevl(L, x * x - 2.0, _K1_A) / x
    large = chbevl(L, 8.0 / x - 2.0, _K1_B) / L.g.op("sqrt", x)
    if scaled:
        return k_family(L, x, small * L.g.op("exp", x), large)
    return k_family(L, x, small, L.g.op("exp", -x) * large)


def bessel_large(L, x, order, cos_first, dt):
    """The x > 5 form of j0/j1/y0/y1: sqrt(2/(pi x)) (P cos(x - phase) -+ (5/x) Q sin(x - phase)) with
    P, Q rational in 25/x^2 (sin and cos exchanged, + for the y functions). x - phase is rounded to dt
    as in PyTorch's kernel: for large x that rounding decides the result's leading digits."""
    pp, pq, qp, qq = (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ) if order == 0 else (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ)
    z = 25.0 / (x * x)
    p = polevl(L, z, pp) / polevl(L, z, pq)
    q = polevl(L, z, qp) / polevl(L, z, qq) * (5.0 / x)
    shifted = L.cast(L.cast(x, dt) - (math.pi / 4 if order == 0 else 3 * math.pi / 4), F64)
    c, s = L.g.op("cos", shifted), L.g.op("sin", shifted)
    body = p * c - q * s if cos_first else p * s + q * c
    return body * math.sqrt(2 / math.pi) / L.g.op("sqrt", x)


def j0(L, x, dt):
    x = L.g.op("abs", x)
    xx = x * x
    small = (xx - 5.78318596294678452118) * (xx - 30.4712623436620863991) * polevl(L, xx, _J0_RP) / \
        polevl(L, xx, _J0_RQ)
    small = where(L, lt(L, x, 1e-5), 1.0 - xx / 4.0, small)
    return where(L, L.g.op("le", x, const(L, 5.0, x)), small, bessel_large(L, x, 0, True, dt))


def j1(L, x, dt):
    ax = L.g.op("abs", x)
    xx = ax * ax
    small = polevl(L, xx, _J1_RP) / polevl(L, xx, _J1_RQ) * ax * (xx - 14.6819706421238932572) * \
        (xx - 49.2184563216946036703)
    return with_sign_of(L, x, where(L, L.g.op("le", ax, const(L, 5.0, ax)), small, bessel_large(L, ax, 1, True, dt)))


def y_family(L, x, small, order, dt):
    out = where(L, L.g.op("le", x, const(L, 5.0, x)), small, bessel_large(L, x, order, False, dt))
    return where(L, eq(L, x, 0.0), -math.inf, where(L, lt(L, x, 0.0), math.nan, out))


def y0(L, x, dt):
    xx = x * x
    small = polevl(L, xx, _Y0_YP) / polevl(L, xx, _Y0_YQ) + L.g.op("log", x) * j0(L, x, dt) * (2 / math.pi)
    return y_family(L, x, small, 0, dt)


def y1(L, x, dt):
    xx = x * x
    small = x * (polevl(L, xx, _Y1_YP) / polevl(L, xx, _Y1_YQ)) + \
        (j1(L, x, dt) * L.g.op("log", x) - 1.0 / x) * (2 / math.pi)
    return y_family(L, x, small, 1, dt)


def spherical_j0(L, x, dt=None):
    xx = x * x
    series = 1.0 + xx * polevl(L, xx, [1 / 6227020800, -1 / 39916800, 1 / 362880, -1 / 5040, 1 / 120, -1 / 6])
    out = where(L, lt(L, L.g.op("abs", x), 0.5), series, L.g.op("sin", x) / x)
    return where(L, eq(L, L.g.op("abs", x), math.inf), 0.0, out)


def unary_f64_rounded(fn):
    """unary_f64, fn also told the result's dtype (for exp_in)."""
    def lower(L, node):
        out = L.out_dtype(node)
        return L.cast(fn(L, L.value(node.args[0], F64), out if out in ("f32", F64) else "f32"), out)
    return lower


for _ops, _fn in [((aten.i0.default, aten.special_modified_bessel_i0.default), i0),
                  ((aten.special_i0e.default,), i0e),
                  ((aten.special_i1.default, aten.special_modified_bessel_i1.default), i1),
                  ((aten.special_i1e.default,), i1e),
                  ((aten.special_modified_bessel_k0.default,), k0),
                  ((aten.special_modified_bessel_k1.default,), k1),
                  ((aten.special_scaled_modified_bessel_k0.default,), functools.partial(k0, scaled=True)),
                  ((aten.special_scaled_modified_bessel_k1.default,), functools.partial(k1, scaled=True)),
                  ((aten.special_bessel_j0.default,), j0), ((aten.special_bessel_j1.default,), j1),
                  ((aten.special_bessel_y0.default,), y0), ((aten.special_bessel_y1.default,), y1),
                  ((aten.special_spherical_bessel_j0.default,), spherical_j0)]:
    lowers(*_ops)(unary_f64_rounded(_fn))


# ---- orthogonal polynomials of a tensor degree ------------------------------------------------
# PyTorch's kernels: 0 for n < 0, closed forms for some (x, n), else the three-term recurrence up to
# n. The recurrence is a while loop (n is data) over the whole tensor, one round per degree, each
# element keeping its value from the round that reaches its own n.

def degree(L, n):
    """n as PyTorch's kernels read it: truncated to int64. x86 turns NaN, inf and out-of-range n into
    INT64_MIN, a negative degree; tessera's cast would saturate them, so they become -1 first."""
    if n.dtype in ("f16", "bf16", "f32", F64):
        n = where(L, lt(L, L.g.op("abs", n), 2.0 ** 63), n, -1.0)
    return L.cast(n, "i64")


def overflow_as(L, v, dt):
    """v, but ±inf where it overflows dt (f32: from 2^128 - 2^103 on, which rounds up): a term PyTorch's
    float kernel computes as inf goes on as inf and then NaN in the following rounds, where the f64 one
    would stay finite. Only the terms are checked: PyTorch's compiled kernel does not overflow
    its intermediates consistently (where its products exceed the range, some lanes give inf, some
    not), so near FLT_MAX inf and NaN can still differ from eager's."""
    if dt == F64:
        return v
    return where(L, lt(L, L.g.op("abs", v), 2.0 ** 128 - 2.0 ** 103), v, v * math.inf)


def largest_finite_degree(L, n, term):
    """The largest n among the elements whose current term is not NaN (NaN stays NaN: PyTorch's loop
    stops there); INT64_MIN for an empty tensor."""
    n = where(L, is_nan(L, term), 0, n)
    return L.g.op("reduce_max", n, axes=list(range(len(n.shape)))) if n.shape else n


def recurrence(L, y, n, poly, dt):
    """P_n(y) with P_0 = 1, P_1 = poly.first(y), P_k+1 = poly.step(k, y, P_k, P_k-1), for n >= 0."""
    g = L.g
    q = overflow_as(L, poly.first(L, y), dt)
    ones = L.full(1.0, F64, y.shape)
    start = where(L, eq(L, n, 0), ones, q)

    def more(k, bound, y, n, p, q, out):
        return g.op("lt", k, bound)

    def next_degree(k, bound, y, n, p, q, out):
        r = overflow_as(L, poly.step(L.cast(k, F64), y, q, p), dt)
        k = k + g.scalar(1, "i64")
        out = where(L, g.op("le", k, n), r, out)   # the latest term up to each element's own n
        return k, largest_finite_degree(L, n, r), y, n, q, r, out

    state = g.op("while", g.scalar(1, "i64"), largest_finite_degree(L, n, q), y, n, ones, q, start,
                 regions=(more, next_degree))
    return state[-1]


def chebyshev_step(k, y, q, p):
    return (y + y) * q - p


def cos_half_turns(L, n):
    """(-1)^n for an integer n."""
    return where(L, eq(L, L.g.op("rem", n, const(L, 2, n)), 0), L.full(1.0, F64, ()), -1.0)


def at_ends(L, y, n, at_one, at_minus_one):
    """(mask, value) for |y| == 1: at_one(n) at 1, (-1)^n at_minus_one(n) at -1."""
    nf = L.cast(n, F64)
    value = where(L, eq(L, y, 1.0), at_one(L, nf), cos_half_turns(L, n) * at_minus_one(L, nf))
    return eq(L, L.g.op("abs", y), 1.0), value


def in_dt(L, v, dt):
    return L.cast(L.cast(v, dt), F64)


def chebyshev_closed(above, at_one, at_minus_one, trig):
    """The closed forms of a Chebyshev polynomial: at_ends, and for |y| < 1 and n > above
    trig(L, nf, theta, dt) with theta = acos(y) (atan2: tessera has no acos). theta and its multiples
    are rounded to dt as PyTorch's float kernel computes them: for large n that decides the digits."""
    def closed(L, y, n, dt):
        ends, value = at_ends(L, y, n, at_one, at_minus_one)
        inside = L.g.op("and", lt(L, L.g.op("abs", y), 1.0), lt(L, const(L, above, n), n))
        theta = in_dt(L, L.g.op("atan2", L.g.op("sqrt", (1.0 - y) * (1.0 + y)), y), dt)
        value = L.g.op("select", inside, trig(L, L.cast(n, F64), theta, dt), value)
        return L.g.op("or", ends, inside), value
    return closed


def multiple(L, m, theta, dt):
    """m * theta, rounded to dt."""
    return in_dt(L, in_dt(L, m, dt) * theta, dt)


def chebyshev(kind, above):
    """T, U, V, W: the same recurrence from different first terms, each with its own closed forms."""
    one = lambda L, nf: const(L, 1.0, nf)   # noqa: E731
    odd = lambda L, nf: nf + nf + 1.0       # noqa: E731
    first_term, at_one, at_minus_one, trig = {
        "t": (lambda L, y: y, one, one,
              lambda L, nf, th, dt: L.g.op("cos", multiple(L, nf, th, dt))),
        "u": (lambda L, y: y + y, lambda L, nf: nf + 1.0, lambda L, nf: nf + 1.0,
              lambda L, nf, th, dt: L.g.op("sin", multiple(L, nf + 1.0, th, dt)) / L.g.op("sin", th)),
        "v": (lambda L, y: y + y - 1.0, one, odd,
              lambda L, nf, th, dt: L.g.op("cos", multiple(L, nf + 0.5, th, dt)) / L.g.op("cos", th * 0.5)),
        "w": (lambda L, y: y + y + 1.0, odd, one,
              lambda L, nf, th, dt: L.g.op("sin", multiple(L, nf + 0.5, th, dt)) / L.g.op("sin", th * 0.5)),
    }[kind]
    return first_term, chebyshev_step, chebyshev_closed(above, at_one, at_minus_one, trig)


def hermite_closed(L, y, n, dt):
    """NaN beyond PyTorch's degree limit for the dtype."""
    too_high = lt(L, const(L, 128 if dt == "f32" else 512, n), n)
    return too_high, const(L, math.nan, y)


def legendre_closed(L, y, n, dt):
    return at_ends(L, y, n, lambda L, nf: const(L, 1.0, nf), lambda L, nf: const(L, 1.0, nf))


def laguerre_closed(L, y, n, dt):
    return eq(L, y, 0.0), const(L, 1.0, y)


class Polynomial:
    def __init__(self, first, step, closed, shifted=False):
        self.first, self.step, self.closed, self.shifted = first, step, closed, shifted


_POLYNOMIALS = {
    "chebyshev_polynomial_t": Polynomial(*chebyshev("t", 6)),
    "chebyshev_polynomial_u": Polynomial(*chebyshev("u", 8)),
    "chebyshev_polynomial_v": Polynomial(*chebyshev("v", 8)),
    "chebyshev_polynomial_w": Polynomial(*chebyshev("w", 8)),
    # on y = 2x - 1; PyTorch's thresholds for the trigonometric form differ from the plain ones
    "shifted_chebyshev_polynomial_t": Polynomial(*chebyshev("t", 6), shifted=True),
    "shifted_chebyshev_polynomial_u": Polynomial(*chebyshev("u", 6), shifted=True),
    "shifted_chebyshev_polynomial_v": Polynomial(*chebyshev("v", 6), shifted=True),
    "shifted_chebyshev_polynomial_w": Polynomial(*chebyshev("w", 4), shifted=True),
    "hermite_polynomial_h": Polynomial(lambda L, y: y + y,
                                       lambda k, y, q, p: (y + y) * q - (k + k) * p, hermite_closed),
    "hermite_polynomial_he": Polynomial(lambda L, y: y, lambda k, y, q, p: y * q - k * p, hermite_closed),
    "laguerre_polynomial_l": Polynomial(lambda L, y: 1.0 - y,
                                        lambda k, y, q, p: ((k + k + 1.0 - y) * q - k * p) / (k + 1.0),
                                        laguerre_closed),
    "legendre_polynomial_p": Polynomial(lambda L, y: y,
                                        lambda k, y, q, p: ((k + k + 1.0) * y * q - k * p) / (k + 1.0),
                                        legendre_closed),
}


def _polynomial_ok(node):
    """results other than f32 and f64 (integer results follow integer arithmetic in PyTorch)"""
    dt = first(fake(node)).dtype
    return None if dt in (torch.float32, torch.float64) else "%s result" % dt


def polynomial_lowering(poly):
    def lower(L, node):
        dt, shape = L.out_dtype(node), L.shape(node)
        x, n = node.args[0], node.args[1]
        x = L.broadcast_to(L.value(x, F64), shape)
        n = L.broadcast_to(degree(L, L.value(n) if isinstance(n, torch.fx.Node) else L.value(n, F64)), shape)
        # 2x - 1 rounded as PyTorch's float kernel rounds it: tiny x give exactly -1 (the closed form there)
        y = in_dt(L, x + x - 1.0, dt) if poly.shifted else x
        closed, value = poly.closed(L, y, n, dt)
        out = L.g.op("select", closed, value, recurrence(L, y, where(L, closed, 0, n), poly, dt))
        return L.cast(where(L, lt(L, n, 0), 0.0, out), dt)
    return lower


for _name, _poly in _POLYNOMIALS.items():
    _op = getattr(aten, "special_" + _name)
    lowers(_op.default, _op.x_scalar, _op.n_scalar, check=_polynomial_ok)(polynomial_lowering(_poly))
