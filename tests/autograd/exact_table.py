"""One measurement of the whole pointwise table against the mathematics (issue 38).

Each unary and binary pointwise primitive of the derivative table is mapped to its mathematical
function and that function's first and second derivatives in closed form (mpmath, 60 digits: the
float64 inputs are exact there, and no closed form below cancels by more than 20 digits on its
grid; sinc's derivatives near 0 are summed from their Taylor series). At a grid per primitive
covering the bulk, the tails out to the overflow point, the neighbourhoods of zeros, poles and
branch points, tiny and subnormal arguments, the reference's float64 answers are compared with the
exact values:

* ``value``: the forward kernel;
* ``d1``: the first derivative by reverse mode (``autograd.grad``) and by forward mode (``jvp`` with
  a unit tangent); the worse of the two is reported;
* ``d2``: the second derivative by reverse over reverse (grad of grad) and forward over forward
  (jvp of jvp); the worse of the two. For a binary f(a, b) the derivatives are the partials
  f_a, f_b, f_aa, f_ab, f_bb, each measured.

The error is in ulps of the exact value, in the mixed sense of docs/accuracy.md: results below
2^-1000 are judged in units of 2^-1052 (the subnormal range absolutely). An exact value past the
float64 range must come back as the infinity of its sign. :data:`SPECIALS` lists IEEE special
values (C99 Annex F for the values, the mathematical limit for the derivatives at poles and
infinities) with the expected answer.

``python -m tests.autograd.exact_table [NAME ...]`` (from the repository root) prints the table (docs/accuracy.md carries it);
tests/autograd/test_pointwise_accuracy.py asserts the ceilings.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import mpmath
import numpy as np

import reference as T

DPS = 60
TINY = 2.0**-1000  # below: judged in units of 2^-1052 (docs/accuracy.md)
MAX = np.finfo(np.float64).max
m = mpmath


@dataclasses.dataclass
class Entry:
    """A pointwise primitive: the reference call, the exact function and its derivatives.

    ``exact(*mpf) -> (value, d1, d2)``: for a unary f, d1 = f' and d2 = f''; for a binary f,
    d1 = (f_a, f_b) and d2 = (f_aa, f_ab, f_bb). ``grid``: an array (unary) or a pair of arrays of
    equal length (binary). ``orders``: which of value/d1/d2 are measured (a derivative the
    reference keeps from PyTorch's formula on purpose is measured and reported, but its ceiling
    is given in the test with the reason). ``wrt``: the arguments differentiated (default all; the
    exact d1 and d2 then list only theirs, in that order: betainc's x alone). ``mixed_forward``:
    also measure the mixed second partials by forward over forward (a tangent in each argument)."""

    name: str
    ref: Callable
    exact: Callable
    grid: object
    arity: int = 1
    wrt: tuple | None = None
    mixed_forward: bool = False

    @property
    def differentiated(self):
        return tuple(range(self.arity)) if self.wrt is None else self.wrt


# ---- grids ----------------------------------------------------------------------------------------------

_TINY_POS = np.concatenate([[5e-324, 1e-310, 2.2250738585072014e-308], np.geomspace(1e-300, 1e-3, 25)])


def _sym(a):
    a = np.asarray(a, dtype=np.float64)
    return np.concatenate([-a, a])


def grid(*parts, lo=-np.inf, hi=np.inf, open_=True):
    """The union of ``parts`` restricted to (lo, hi) (``open_``) or [lo, hi]."""
    x = np.unique(np.concatenate([np.atleast_1d(np.asarray(p, dtype=np.float64)) for p in parts]))
    keep = (x > lo) & (x < hi) if open_ else (x >= lo) & (x <= hi)
    return x[keep & np.isfinite(x)]


def near(points, width=1e-6, n=9):
    """Points within ``width`` (relative to max(|p|, 1)) of each of ``points``, and the points."""
    out = [np.asarray(points, dtype=np.float64)]
    for p in points:
        out.append(p + max(abs(p), 1.0) * np.linspace(-width, width, n))
        out.append(np.array([np.nextafter(p, -np.inf), np.nextafter(p, np.inf)]))
    return np.concatenate(out)


BULK = np.linspace(-10.0, 10.0, 81)
TAILS = _sym(np.geomspace(10.0, 1e300, 40))
SMALL = _sym(_TINY_POS)
WHOLE = grid(BULK, TAILS, SMALL, [0.0])
POS = grid(np.linspace(0.0, 10.0, 41), np.geomspace(10.0, 1e300, 40), _TINY_POS, lo=0.0)
UNIT = grid(
    np.linspace(-1.0, 1.0, 81),
    _sym(1 - np.geomspace(1e-16, 1e-2, 20)),
    SMALL,
    [0.0],
    lo=-1.0,
    hi=1.0,
)
HALF_OPEN = grid(
    np.linspace(0, 1, 41),
    np.geomspace(1e-300, 1e-2, 20),
    1 - np.geomspace(1e-16, 1e-2, 20),
    _TINY_POS,
    lo=0.0,
    hi=1.0,
)


# ---- the exact functions --------------------------------------------------------------------------------


def _sig(x):
    return 1 / (1 + m.exp(-x))


def _sinc_series(x, k0):
    """Σ_k (-1)^k (πx)^(2k) / (2k+1)! differentiated ``k0`` times (k0 = 0, 1, 2): no cancellation
    near 0, where the closed forms of sinc' and sinc'' cancel to all digits."""
    total, k = m.mpf(0), 0
    while True:
        c = (-1) ** k * m.pi ** (2 * k) / m.factorial(2 * k + 1)
        p = 2 * k
        coef = 1 if k0 == 0 else (p if k0 == 1 else p * (p - 1))
        if coef:
            term = c * coef * x ** (p - k0)
            total += term
            if k > 3 and abs(term) < abs(total) * m.mpf(10) ** (-DPS):
                return total
        k += 1


def _sinc(x):
    if x == 0:
        return m.mpf(1), m.mpf(0), -(m.pi**2) / 3
    if abs(x) < 0.5:
        return _sinc_series(x, 0), _sinc_series(x, 1), _sinc_series(x, 2)
    px = m.pi * x
    s, c = m.sinpi(x), m.cospi(x)  # exact zeros at the integers
    v = s / px
    d1 = (px * c - s) / (m.pi * x * x)
    d2 = -(m.pi**2) * v - 2 * d1 / x
    return v, d1, d2


def _lgamma(x):
    return m.log(abs(m.gamma(x))), m.psi(0, x), m.psi(1, x)


def _ndtri(p):
    # 2p - 1 loses -log10(p) digits: carry them
    extra = int(max(0, -math.log10(max(float(p), 1e-320)))) + 10
    with m.extradps(extra):
        y = m.sqrt(2) * m.erfinv(2 * p - 1)
        d1 = m.sqrt(2 * m.pi) * m.exp(y * y / 2)
        return +y, +d1, +(y * d1 * d1)


def _log_ndtr(x):
    """log Φ and its derivatives r = φ/Φ, -r(x + r). Below 0 through erfcx(t), t = -x/√2 (exact
    identities: Φ = erfcx(t) e^{-t²}/2, r = √(2/π)/erfcx(t), x + r = -erfcx'(t)/(√2 erfcx(t))):
    mpmath's ncdf is wrong far out (at -1e150) and x + r cancels to all digits there."""
    if x < 0:
        t = -x / m.sqrt(2)
        f, f1, _ = _erfcx(t)
        r = m.sqrt(2 / m.pi) / f
        return m.log(f / 2) - t * t, r, r * f1 / (m.sqrt(2) * f)
    phi = m.npdf(x)
    q = m.ncdf(-x)
    d1 = phi / (1 - q)
    return m.log1p(-q), d1, -d1 * (x + d1)


def _erfinv(x):
    y = m.erfinv(x)
    d1 = m.sqrt(m.pi) / 2 * m.exp(y * y)
    return y, d1, 2 * y * d1 * d1


def _erfcx(x):
    """erfcx and its derivatives; past 1e4 the asymptotic series (2x·erfcx - 2/√π loses
    2·log10(x) digits), its terms differentiated."""
    if x > 1e4:
        terms = [(-1) ** n * m.fac2(2 * n - 1) / m.mpf(2) ** n for n in range(8)]
        v = sum(c * x ** -(2 * n + 1) for n, c in enumerate(terms))
        d1 = sum(-c * (2 * n + 1) * x ** -(2 * n + 2) for n, c in enumerate(terms))
        d2 = sum(c * (2 * n + 1) * (2 * n + 2) * x ** -(2 * n + 3) for n, c in enumerate(terms))
        return v / m.sqrt(m.pi), d1 / m.sqrt(m.pi), d2 / m.sqrt(m.pi)
    v = m.exp(x * x) * m.erfc(x)
    return v, 2 * x * v - 2 / m.sqrt(m.pi), (4 * x * x + 2) * v - 4 * x / m.sqrt(m.pi)


def _i1_d2(x):
    """I1'' = I1 - I0/x + 2 I1/x², whose terms cancel like 1/x near 0: its series there."""
    if abs(x) < 1e-5:
        return sum(
            (2 * k + 1)
            * (2 * k)
            * x ** (2 * k - 1)
            / (m.mpf(2) ** (2 * k + 1) * m.factorial(k) * m.factorial(k + 1))
            for k in range(1, 6)
        )
    i0, i1 = m.besseli(0, x), m.besseli(1, x)
    return i1 - i0 / x + 2 * i1 / (x * x)


def _bessel(n, scaled):
    """I0, I1 and their scaled forms e^{-|x|} I_n, with the derivatives in closed form (from
    I0' = I1, I1' = I0 - I1/x; s = sgn x for the scaled ones, whose kink at 0 mpmath.diff would
    straddle)."""

    def f(x):
        i0, i1 = m.besseli(0, x), m.besseli(1, x)
        i1_d1 = i0 - i1 / x if x != 0 else m.mpf(1) / 2
        values = (i0, i1, i1_d1) if n == 0 else (i1, i1_d1, _i1_d2(x))
        if not scaled:
            return values
        s, e = (1 if x > 0 else -1), m.exp(-abs(x))
        v, d1, d2 = values
        return e * v, e * (d1 - s * v), e * (d2 - 2 * s * d1 + v)

    return f


def _pow_scalar(p):
    def f(x):
        return x**p, p * x ** (p - 1), p * (p - 1) * x ** (p - 2)

    return f


def _pow_base(b):
    """b^x for a number base b (pow_scalar_base): the derivatives carry ln b."""

    def f(x):
        lb = m.log(m.mpf(b))
        v = m.mpf(b) ** x
        return v, lb * v, lb * lb * v

    return f


#: polygamma's orders past the pointwise table's 1 and 2 (and exact_special2's 3, 4): its
#: derivatives reach n + 2 = 20
POLYGAMMA_HIGH = (5, 12, 18)


def _psi_settled(n):
    """ψ⁽ⁿ⁾, ψ⁽ⁿ⁺¹⁾, ψ⁽ⁿ⁺²⁾ with 60 more digits: mpmath reflects at its working precision, and at
    a negative half-integer the reflection cancels about k·log10(π|x|) digits (55 for k = 20 at
    -170.5)."""

    def f(x):
        with m.workdps(m.mp.dps + 60):
            return tuple(+m.psi(k, x) for k in (n, n + 1, n + 2))

    return f


def _factorial(x):
    """Γ(x + 1) and its derivatives (x >= 0: below, scipy's float factorial is 0 by definition)."""
    y = x + 1
    g, p = m.gamma(y), m.digamma(y)
    return g, g * p, g * (p * p + m.polygamma(1, y))


#: celu's α: e^(x/α) carries x/α's rounding times |x/α| (a small α: a large exponent)
CELU_ALPHAS = (0.3, 2.0)


def _celu(a):
    def f(x):
        if x > 0:
            return x, m.mpf(1), m.mpf(0)
        z = x / m.mpf(a)
        return m.mpf(a) * m.expm1(z), m.exp(z), m.exp(z) / m.mpf(a)

    return f


#: xlogy with a number: xlogy(2.5, y) (xlogy_scalar_self) and xlogy(x, 3.5) (xlogy_scalar_other)
XLOGY_NUMBER = m.mpf(2.5)
LOG_XLOGY_NUMBER = m.log(m.mpf(3.5))


#: the number bases of pow(b, x): b < 1, near 1 (ln b small), > 1, large
POW_BASES = (0.3, 1.0000001, 2.5, 10.0, 1e100)

with m.workdps(2 * DPS):  # module constants: at the table's precision, not mpmath's default 15 digits
    LN2, LN10 = m.log(2), m.log(10)

UNARY_EXACT = {
    "exp": lambda x: (m.exp(x),) * 3,
    "log": lambda x: (m.log(x), 1 / x, -1 / x**2),
    "log1p": lambda x: (m.log1p(x), 1 / (1 + x), -1 / (1 + x) ** 2),
    "expm1": lambda x: (m.expm1(x), m.exp(x), m.exp(x)),
    "log2": lambda x: (m.log(x) / LN2, 1 / (x * LN2), -1 / (x**2 * LN2)),
    "log10": lambda x: (m.log(x) / LN10, 1 / (x * LN10), -1 / (x**2 * LN10)),
    "exp2": lambda x: (2**x, LN2 * 2**x, LN2**2 * 2**x),
    "sqrt": lambda x: (m.sqrt(x), 1 / (2 * m.sqrt(x)), -1 / (4 * x * m.sqrt(x))),
    "rsqrt": lambda x: (1 / m.sqrt(x), -1 / (2 * x * m.sqrt(x)), 3 / (4 * x * x * m.sqrt(x))),
    "reciprocal": lambda x: (1 / x, -1 / x**2, 2 / x**3),
    "sin": lambda x: (m.sin(x), m.cos(x), -m.sin(x)),
    "cos": lambda x: (m.cos(x), -m.sin(x), -m.cos(x)),
    "tan": lambda x: (m.tan(x), m.sec(x) ** 2, 2 * m.tan(x) * m.sec(x) ** 2),
    "asin": lambda x: (m.asin(x), 1 / m.sqrt(1 - x * x), x / (1 - x * x) ** 1.5),
    "acos": lambda x: (m.acos(x), -1 / m.sqrt(1 - x * x), -x / (1 - x * x) ** 1.5),
    "atan": lambda x: (m.atan(x), 1 / (1 + x * x), -2 * x / (1 + x * x) ** 2),
    "sinh": lambda x: (m.sinh(x), m.cosh(x), m.sinh(x)),
    "cosh": lambda x: (m.cosh(x), m.sinh(x), m.cosh(x)),
    "tanh": lambda x: (m.tanh(x), m.sech(x) ** 2, -2 * m.tanh(x) * m.sech(x) ** 2),
    "asinh": lambda x: (m.asinh(x), 1 / m.sqrt(x * x + 1), -x / (x * x + 1) ** 1.5),
    "acosh": lambda x: (m.acosh(x), 1 / m.sqrt(x * x - 1), -x / (x * x - 1) ** 1.5),
    "atanh": lambda x: (m.atanh(x), 1 / (1 - x * x), 2 * x / (1 - x * x) ** 2),
    # s s̄ (s̄ - s) with s̄ - s = -tanh(x/2): the difference cancels to all digits at tiny x
    "sigmoid": lambda x: (_sig(x), _sig(x) * _sig(-x), -_sig(x) * _sig(-x) * m.tanh(x / 2)),
    "logit": lambda x: (m.log(x / (1 - x)), 1 / (x * (1 - x)), (2 * x - 1) / (x * (1 - x)) ** 2),
    "erf": lambda x: (m.erf(x), 2 / m.sqrt(m.pi) * m.exp(-x * x), -4 * x / m.sqrt(m.pi) * m.exp(-x * x)),
    "erfc": lambda x: (m.erfc(x), -2 / m.sqrt(m.pi) * m.exp(-x * x), 4 * x / m.sqrt(m.pi) * m.exp(-x * x)),
    "erfinv": _erfinv,
    "erfcx": _erfcx,
    "lgamma": _lgamma,
    "digamma": lambda x: (m.psi(0, x), m.psi(1, x), m.psi(2, x)),
    "polygamma1": lambda x: (m.psi(1, x), m.psi(2, x), m.psi(3, x)),
    "polygamma2": lambda x: (m.psi(2, x), m.psi(3, x), m.psi(4, x)),
    **{f"polygamma{n}": _psi_settled(n) for n in POLYGAMMA_HIGH},
    "factorial": _factorial,
    **{f"celu_{a}": _celu(a) for a in CELU_ALPHAS},
    "xlogy_number_self": lambda y: (XLOGY_NUMBER * m.log(y), XLOGY_NUMBER / y, -XLOGY_NUMBER / y**2),
    "xlogy_number_other": lambda x: (x * LOG_XLOGY_NUMBER, LOG_XLOGY_NUMBER, m.mpf(0)),
    "mvlgamma2": lambda x: (
        m.log(m.gamma(x)) + m.log(m.gamma(x - m.mpf(1) / 2)) + m.log(m.pi) / 2,
        m.psi(0, x) + m.psi(0, x - m.mpf(1) / 2),
        m.psi(1, x) + m.psi(1, x - m.mpf(1) / 2),
    ),
    "sinc": _sinc,
    "ndtri": _ndtri,
    "ndtr": lambda x: (m.ncdf(x), m.npdf(x), -x * m.npdf(x)),
    "log_ndtr": _log_ndtr,
    "i0": _bessel(0, False),
    "i1": _bessel(1, False),
    "i0e": _bessel(0, True),
    "i1e": _bessel(1, True),
    "entr": lambda x: (-x * m.log(x), -(1 + m.log(x)), -1 / x),
    "deg2rad": lambda x: (x * m.pi / 180, m.pi / 180, m.mpf(0)),
    "rad2deg": lambda x: (x * 180 / m.pi, 180 / m.pi, m.mpf(0)),
    "pow_2": _pow_scalar(2),
    "pow_3": _pow_scalar(3),
    "pow_half": _pow_scalar(m.mpf(1) / 2),
    "pow_-1": _pow_scalar(-1),
    "pow_2.5": _pow_scalar(m.mpf(5) / 2),
    **{f"pow_base_{b}": _pow_base(b) for b in POW_BASES},
}

S = T.special
UNARY_REF = {
    "polygamma1": lambda t: T.polygamma(1, t),
    "polygamma2": lambda t: T.polygamma(2, t),
    **{f"polygamma{n}": (lambda k: lambda t: T.polygamma(k, t))(n) for n in POLYGAMMA_HIGH},
    "factorial": S.factorial,
    **{f"celu_{a}": (lambda aa: lambda t: T.nn.functional.celu(t, alpha=aa))(a) for a in CELU_ALPHAS},
    "xlogy_number_self": lambda t: T.xlogy(2.5, t),
    "xlogy_number_other": lambda t: T.xlogy(t, 3.5),
    "mvlgamma2": lambda t: T.mvlgamma(t, 2),
    **{n: getattr(S, n) for n in ("erfcx", "ndtr", "ndtri", "log_ndtr", "i0e", "i1", "i1e", "entr")},
    "pow_2": lambda t: T.pow(t, 2),
    "pow_3": lambda t: T.pow(t, 3),
    "pow_half": lambda t: T.pow(t, 0.5),
    "pow_-1": lambda t: T.pow(t, -1),
    "pow_2.5": lambda t: T.pow(t, 2.5),
    **{f"pow_base_{b}": (lambda bb: lambda t: T.pow(bb, t))(b) for b in POW_BASES},
}

_PI_MULTIPLES = np.array([k * math.pi / 2 for k in (-7, -4, -3, -2, -1, 1, 2, 3, 4, 7, 1e6)])
_LOG_MAX = math.log(MAX)  # 709.78
_TRIG = grid(BULK, near(_PI_MULTIPLES, 1e-9, 5), _sym(np.geomspace(10, 1e5, 10)), SMALL, [0.0])
_HYPER = grid(BULK, _sym(np.geomspace(10, 710, 15)), SMALL, [0.0])
#: where log|Γ| crosses 0 between -2 and -5: scipy's reflection keeps only absolute accuracy there
_LGAMMA_NEGATIVE_ZEROS = [-2.4570247382208006, -2.7476826467274127, -3.14358088834998, -3.955294284858598]
_GAMMA = grid(
    np.linspace(-9.75, 10, 80),
    near([1.0, 2.0, 1.4616321449683622, -2.5, -0.5040830082644554], 1e-6, 5),
    near(_LGAMMA_NEGATIVE_ZEROS, 1e-9, 5),
    -np.linspace(0.5, 170.5, 35),  # the reflection's cancellation (polygamma(2, -8.5): 355 ulps)
    np.geomspace(10, 1e300, 25),
    _TINY_POS,
    -_TINY_POS[3:],
)
_GAMMA = _GAMMA[~((_GAMMA <= 0) & (_GAMMA == np.round(_GAMMA)))]  # no poles (0, -1, -2, ...)

UNARY_GRIDS = {
    "exp": grid(BULK, _sym(np.geomspace(10, 745, 20)), [_LOG_MAX, -745.0], SMALL, [0.0]),
    "expm1": grid(BULK, np.geomspace(10, _LOG_MAX, 10), -np.geomspace(10, 36, 6), SMALL, [0.0]),
    "exp2": grid(BULK, _sym(np.geomspace(10, 1023.9, 20)), SMALL, [0.0]),
    "log": POS,
    "log2": POS,
    "log10": POS,
    "sqrt": POS,
    "rsqrt": POS,
    "log1p": grid(POS, -1 + np.geomspace(1e-16, 1, 20), -_TINY_POS, lo=-1.0),
    "reciprocal": grid(WHOLE[WHOLE != 0]),
    "sin": _TRIG,
    "cos": _TRIG,
    "tan": _TRIG[np.abs(np.cos(_TRIG)) > 1e-14],
    "asin": UNIT,
    "acos": UNIT,
    "atanh": UNIT,
    "atan": WHOLE,
    "asinh": WHOLE,
    "acosh": grid(1 + np.geomspace(1e-15, 1, 20), POS, lo=1.0),
    "sinh": _HYPER,
    "cosh": _HYPER,
    "tanh": grid(BULK, _sym(np.geomspace(10, 400, 10)), SMALL, [0.0]),
    "sigmoid": grid(BULK, _sym(np.geomspace(10, 745, 20)), SMALL, [0.0]),
    "logit": HALF_OPEN,
    "erf": grid(BULK, _sym(np.geomspace(10, 27, 8)), SMALL, [0.0]),
    "erfc": grid(BULK, np.geomspace(10, 27, 8), -np.geomspace(10, 1e3, 8), SMALL, [0.0]),
    "erfinv": UNIT,
    "erfcx": grid(BULK, np.geomspace(10, 1e300, 30), -np.geomspace(10, 26.5, 8), SMALL, [0.0]),
    "lgamma": _GAMMA,
    "digamma": _GAMMA,
    "polygamma1": _GAMMA,
    "polygamma2": _GAMMA,
    **{f"polygamma{n}": _GAMMA for n in POLYGAMMA_HIGH},
    # celu's kink at 0 (PyTorch's convention there: elu's) left out; out to e^(x/α)'s underflow
    **{f"celu_{a}": WHOLE[(WHOLE != 0) & (WHOLE > -1e4)] for a in CELU_ALPHAS},
    "xlogy_number_self": POS[POS > 0],
    "xlogy_number_other": WHOLE,
    # x >= 0 (scipy's factorial is 0 below), out to the overflow at 170.62, the minimum of Γ(x + 1)
    "factorial": grid(
        np.linspace(0.0, 10.0, 45),
        [1e-300, 1e-20, 1e-8, 1e-3, 0.1, 1.1, 2.3, 30.3, 100.5, 169.9, 170.5, 170.62],
        near([0.46163214496836225]),
        lo=0.0,
        open_=False,
    ),
    "mvlgamma2": grid(np.linspace(0.6, 10, 48), np.geomspace(10, 1e200, 12), [0.5 + 1e-9, 0.5 + 1e-3]),
    "sinc": grid(BULK, near([1.0, 2.0, -1.0], 1e-9, 5), _sym(np.geomspace(10, 1e6, 10)), SMALL, [0.0]),
    "ndtri": HALF_OPEN,
    "ndtr": grid(BULK, _sym(np.geomspace(10, 38, 8)), SMALL, [0.0]),
    "log_ndtr": grid(BULK, np.geomspace(10, 40, 6), -np.geomspace(10, 1e150, 15), SMALL, [0.0]),
    "i0": grid(BULK, _sym(np.geomspace(10, 700, 10)), SMALL, [0.0]),
    "i1": grid(BULK, _sym(np.geomspace(10, 700, 10)), SMALL, [0.0]),
    # not 0: e^{-|x|} has its kink there (PyTorch's sgn(0) = 0 gives a one-sided choice)
    "i0e": grid(BULK[BULK != 0], _sym(np.geomspace(10, 1e4, 10)), SMALL),
    "i1e": grid(BULK[BULK != 0], _sym(np.geomspace(10, 1e4, 10)), SMALL),
    "entr": POS,
    "deg2rad": WHOLE,
    "rad2deg": grid(WHOLE[np.abs(WHOLE) < 1e300]),
    "pow_2": grid(BULK, _sym(np.geomspace(10, 1e150, 15)), SMALL, [0.0]),
    "pow_3": grid(BULK, _sym(np.geomspace(10, 1e100, 15)), SMALL, [0.0]),
    "pow_half": POS,
    "pow_-1": grid(WHOLE[WHOLE != 0]),
    "pow_2.5": POS,
    # b^x in range out to |x| = 745/|ln b| (7.4e9 for b = 1 + 1e-7), past it 0 or inf
    **{f"pow_base_{b}": grid(WHOLE, _sym(np.geomspace(10, 1e10, 40))) for b in POW_BASES},
}


# ---- binary ---------------------------------------------------------------------------------------------


def _pairs(a, b, origin=True):
    """All pairs of the values of a and b, as two flat arrays (without (0, 0) unless ``origin``:
    atan2's and hypot's derivatives have no limit there; PyTorch's 0 is a convention)."""
    aa, bb = np.meshgrid(np.asarray(a, np.float64), np.asarray(b, np.float64), indexing="ij")
    aa, bb = aa.ravel(), bb.ravel()
    keep = origin | (aa != 0) | (bb != 0)
    return aa[keep], bb[keep]


_AXIS = np.array(
    [
        -1e300,
        -1e10,
        -7.5,
        -2.0,
        -1.0,
        -0.3,
        -1e-7,
        -1e-300,
        0.0,
        1e-300,
        1e-7,
        0.3,
        1.0,
        2.0,
        7.5,
        1e10,
        1e300,
    ]
)
_POS_AXIS = _AXIS[_AXIS > 0]


def _xlogy(x, y):
    return x * m.log(y), (m.log(y), x / y), (m.mpf(0), 1 / y, -x / y**2)


def _xlog1py(x, y):
    return x * m.log1p(y), (m.log1p(y), x / (1 + y)), (m.mpf(0), 1 / (1 + y), -x / (1 + y) ** 2)


def _atan2(y, x):
    r2 = x * x + y * y
    return m.atan2(y, x), (x / r2, -y / r2), (-2 * x * y / r2**2, (y * y - x * x) / r2**2, 2 * x * y / r2**2)


def _hypot(a, b):
    r = m.sqrt(a * a + b * b)
    return r, (a / r, b / r), (b * b / r**3, -a * b / r**3, a * a / r**3)


def _pow(x, y):
    v = x**y
    lg = m.log(x)
    return (
        v,
        (y * x ** (y - 1), v * lg),
        (y * (y - 1) * x ** (y - 2), x ** (y - 1) * (1 + y * lg), v * lg * lg),
    )


def _div(a, b):
    return a / b, (1 / b, -a / b**2), (m.mpf(0), -1 / b**2, 2 * a / b**3)


def _logaddexp(base):
    def f(a, b):
        # at the working precision (at import, mpmath's 15 digits: 80 ulps off at a - b = 770)
        k = m.mpf(1) if base == "e" else m.log(base)
        hi, lo = max(a, b), min(a, b)
        v = hi + m.log1p(m.exp(k * (lo - hi))) / k  # log of 1 + tiny: log1p, not log
        p = 1 / (1 + m.exp(k * (b - a)))
        q = 1 / (1 + m.exp(k * (a - b)))
        c = k * p * q
        return v, (p, q), (c, -c, c)

    return f


def _copysign(a, b):
    s = 1 if (b > 0 or (b == 0 and not math.copysign(1.0, float(b)) < 0)) else -1
    sa = 1 if a > 0 else -1
    return s * abs(a), (m.mpf(sa * s) if a != 0 else m.mpf(0), m.mpf(0)), (m.mpf(0),) * 3


def _lerp_number(w):
    """lerp(a, b, w) with a number weight w (the lerp primitive; lerp_tensor is the ternary row)."""

    def f(a, b):
        ww = m.mpf(w)
        return a + ww * (b - a), (1 - ww, ww), (m.mpf(0),) * 3

    return f


def _bce(x, t):
    """binary_cross_entropy(x, t) where its clamps do not bite (log x > -100, x(1 - x) > 1e-12)."""
    q = 1 - x
    return (
        -(t * m.log(x) + (1 - t) * m.log(q)),
        ((x - t) / (x * q), m.log(q) - m.log(x)),
        (t / x**2 + (1 - t) / q**2, -1 / (x * q), m.mpf(0)),
    )


#: lerp's number weights: below and above 1/2 (PyTorch's kernel switches form there), 1 - 2^-53
LERP_WEIGHTS = (0.3, 0.75, 1 - 2**-53)

BINARY_EXACT = {
    "xlogy": _xlogy,
    "xlog1py": _xlog1py,
    "atan2": _atan2,
    "hypot": _hypot,
    "pow_tensor": _pow,
    "div": _div,
    "logaddexp": _logaddexp("e"),
    "logaddexp2": _logaddexp(2),
    "copysign": _copysign,
    **{f"lerp_number_{w}": _lerp_number(w) for w in LERP_WEIGHTS},
    "binary_cross_entropy": _bce,
}
BINARY_REF = {
    "xlogy": T.xlogy,
    "xlog1py": S.xlog1py,
    "atan2": T.atan2,
    "hypot": T.hypot,
    "pow_tensor": T.pow,
    "div": T.div,
    "logaddexp": T.logaddexp,
    "logaddexp2": T.logaddexp2,
    "copysign": T.copysign,
    **{f"lerp_number_{w}": (lambda ww: lambda a, b: T.lerp(a, b, ww))(w) for w in LERP_WEIGHTS},
    "binary_cross_entropy": lambda x, t: T.nn.functional.binary_cross_entropy(x, t, reduction="none"),
}


# with pairs whose result is 0 or near it (e^a + e^b = 1: (-ln 2, -ln 2), (-0.5, log(1 - e^-0.5));
# 2^a + 2^b = 1: (-1, -1), (-0.5, log2(1 - 2^-0.5))), where max + log1p(...) cancels
def _with_near_diagonal(pairs):
    """``pairs`` and pairs (x, ±x(1 + d)) with |d| down to 1e-15: a² - b² cancels there."""
    x = np.array([1e-300, 1e-7, 1.0, 7.5, 1e10, 1e300])
    d = np.array([1e-15, 1e-9, 1e-3])
    a = np.repeat(x, len(d) * 2)
    b = np.repeat(x, len(d) * 2) * np.tile(np.concatenate([1 + d, -(1 - d)]), len(x))
    return np.concatenate([pairs[0], a]), np.concatenate([pairs[1], b])


def _with_mixed_zeros(pairs):
    """``pairs`` and pairs near the zero of pow's mixed partial x^(y - 1)(1 + y log x), where
    1 + y·log x cancels: x = e^(-1/y) and its float64 neighbours 1e-9 apart, relatively."""
    y = np.array([-3.0, -0.5, 0.01, 0.5, 2.0, 3.5])
    x0 = np.exp(-1 / y)
    x = np.concatenate([x0 * (1 + d) for d in (-1e-9, 0.0, 1e-9, 2**-52)])
    return np.concatenate([pairs[0], x]), np.concatenate([pairs[1], np.tile(y, 4)])


_LAE = np.array(
    [-740.0, -30.0, -5.0, -1.7715533031636120, -1.0, -0.9327521295671886, -0.6931471805599453, -0.5]
    + [-1e-8, 0.0, 1e-8, 0.3, 1.0, 5.0, 30.0, 740.0, 1e300]
)
BINARY_GRIDS = {
    "xlogy": _pairs(_AXIS, _POS_AXIS),
    "xlog1py": _pairs(_AXIS, np.concatenate([_POS_AXIS, [-1 + 1e-16, -0.5, -1e-7, -1e-300, 0.0]])),
    "atan2": _with_near_diagonal(_pairs(_AXIS, _AXIS, origin=False)),
    "hypot": _with_near_diagonal(_pairs(_AXIS, _AXIS, origin=False)),
    "pow_tensor": _with_mixed_zeros(
        _pairs(
            np.array([1e-300, 1e-7, 0.3, 1.0 - 2**-52, 1.0, 1.0 + 2**-52, 2.0, 7.5, 1e10]),
            np.array([-3.0, -0.5, -1e-7, 0.0, 1e-7, 0.5, 1.0, 2.0, 3.5, 2.0 + 2**-51, 700.0]),
        )
    ),
    "div": _pairs(_AXIS, _AXIS[_AXIS != 0]),
    "logaddexp": _pairs(_LAE, _LAE),
    "logaddexp2": _pairs(_LAE, _LAE),
    # a = 0 is copysign's kink (PyTorch's 0 there is a convention); b = -0.0 is a sign mpmath has
    # not: SPECIALS covers it
    "copysign": _pairs(_AXIS[(np.abs(_AXIS) < 1e300) & (_AXIS != 0)], np.array([-2.0, 0.0, 3.0])),
    # a + w(b - a) with b - a cancelling, and where it does not overflow
    **{
        f"lerp_number_{w}": _pairs(_AXIS[np.abs(_AXIS) < 1e300], _AXIS[np.abs(_AXIS) < 1e300])
        for w in LERP_WEIGHTS
    },
    # x where the clamps do not bite, near 1/2 (log(1 - x) - log x cancels), near 0 and 1; targets
    # in [0, 1] (probabilities: outside it the loss's two terms have opposite signs and its value
    # cancels near its zero, not measured), near x (x - t)
    "binary_cross_entropy": _pairs(
        np.concatenate(
            [
                [1e-11, 1e-7, 0.1, 0.3, 0.7, 0.9, 1 - 1e-7, 1 - 1e-11],
                0.5 + _sym([0.0, 1e-15, 1e-10, 1e-5, 1e-2]),
            ]
        ),
        np.array([0.0, 1e-300, 1e-7, 0.3, 0.5, 0.5 + 1e-10, 0.9, 1 - 2**-53, 1.0]),
    ),
}


# ---- ternary: lerp, addcmul, addcdiv (value a Python number: 0.3, not exact in binary) -----------------

_V = 0.3


def _lerp(a, b, w):
    return a + w * (b - a), (1 - w, w, b - a), (m.mpf(0), m.mpf(0), m.mpf(-1), m.mpf(0), m.mpf(1), m.mpf(0))


def _addcmul(a, t1, t2):
    v = m.mpf(_V)
    return a + v * t1 * t2, (m.mpf(1), v * t2, v * t1), (m.mpf(0),) * 4 + (v, m.mpf(0))


def _addcdiv(a, t1, t2):
    v = m.mpf(_V)
    return (
        a + v * t1 / t2,
        (m.mpf(1), v / t2, -v * t1 / t2**2),
        (m.mpf(0),) * 4 + (-v / t2**2, 2 * v * t1 / t2**3),
    )


def _triples(*axes):
    """All triples of the values of the axes, as three flat arrays."""
    grids = np.meshgrid(*(np.asarray(ax, np.float64) for ax in axes), indexing="ij")
    return tuple(g.ravel() for g in grids)


def _join(*parts):
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))


_T_AXIS = np.array([-1e300, -7.5, -1.0, -1e-7, -1e-300, 0.0, 1e-300, 0.3, 1.0, 2.0, 1e10, 1e300])
_WEIGHTS = np.array([-0.5, 0.0, 0.25, 1 / 3, 0.4999999999999999, 0.5, 0.75, 1.0 - 2**-53, 1.0, 1.5])
_CANCEL_B = np.array([-2.0, -3.0, -1.0000000000000002, 1 - 2**-52, 1e-10, -1e10])


def _lerp_cancelling():
    """(a, b, w) where a + w(b - a) is near 0 (w ≈ a / (a - b)) or a ≈ b: the sum cancels."""
    a = np.repeat([1.0, -7.5, 1e-300, 3e150], len(_CANCEL_B))
    b = np.tile(_CANCEL_B, 4) * np.abs(a)
    w = a / (a - b)
    return _join(
        (a, b, w),
        (a, b, np.nextafter(w, 2.0)),
        _triples([1.0, 2.0], [1.0 + 2**-52, 2.0 - 2**-51], [0.3, 0.7, 0.9999999]),
    )


def _fma_cancelling(divide):
    """(a, t1, t2) where a + v·t1·t2 (or a + v·t1/t2) is near 0: a the negated rounded product."""
    t1 = np.array([1.0 / 3, 0.1, 7.7, 1e-5, 123456.789, 1e150, 1e-150])
    t2 = np.array([3.0, 0.7, 1.1, 1e5, 1e-7, 2.0 ** -60, 1e-300 if divide else 1e-140])
    t1, t2 = (g.ravel() for g in np.meshgrid(t1, t2, indexing="ij"))
    with np.errstate(all="ignore"):
        a = -(_V * (t1 / t2 if divide else t1 * t2))
    keep = np.isfinite(a) & (a != 0)
    t1, t2, a = t1[keep], t2[keep], a[keep]
    return _join((a, t1, t2), (np.nextafter(a, np.inf), t1, t2))


def _exact_sums(fn):
    """``fn`` at 2400 bits: a sum of float64 terms (and products of two) is then exact whatever
    their exponents (60 digits would lose -2 in -1e300 + (-2 + 1e300))."""

    def run(*args):
        with m.workprec(2400):
            return fn(*args)

    return run


TERNARY_EXACT = {"lerp": _exact_sums(_lerp), "addcmul": _exact_sums(_addcmul), "addcdiv": _exact_sums(_addcdiv)}
TERNARY_REF = {
    "lerp": T.lerp,
    "addcmul": lambda a, b, c: T.addcmul(a, b, c, value=_V),
    "addcdiv": lambda a, b, c: T.addcdiv(a, b, c, value=_V),
}
TERNARY_GRIDS = {
    "lerp": _join(_triples([-1e300, -7.5, -1e-7, 0.0, 1e-300, 1.0, 1e10], [-2.0, 1e-300, 0.3, 1e300], _WEIGHTS), _lerp_cancelling()),
    "addcmul": _join(_triples([-7.5, 0.0, 1e-300, 1.0, 1e10], _T_AXIS[np.abs(_T_AXIS) < 1e300], [-2.0, 1e-7, 0.3, 1e150]), _fma_cancelling(False)),
    # the divisor near 0 (down to 5e-324): the partials' t2², t2³ overflow where t1/t2² does not
    "addcdiv": _join(
        _triples([-7.5, 0.0, 1.0, 1e10], [-1.0, 1e-300, 0.3, 1e-160, 1e10], [-2.0, 5e-324, 1e-300, 1e-160, 1e-7, 0.3, 1e150]),
        _fma_cancelling(True),
    ),
}


def entries():
    """Every measured primitive, by name."""
    out = {}
    for name, exact in UNARY_EXACT.items():
        ref = UNARY_REF.get(name) or getattr(T, name)
        out[name] = Entry(name, ref, exact, UNARY_GRIDS[name])
    for name, exact in BINARY_EXACT.items():
        out[name] = Entry(name, BINARY_REF[name], exact, BINARY_GRIDS[name], arity=2)
    for name, exact in TERNARY_EXACT.items():
        out[name] = Entry(name, TERNARY_REF[name], exact, TERNARY_GRIDS[name], arity=3)
    return out


ENTRIES = entries()

#: primitives of the pointwise families not measured here, and why
NOT_MEASURED = {
    "add, sub, rsub, mul, neg, abs": "one correctly rounded IEEE operation; derivatives constant",
    "floor, ceil, trunc, round, round_decimals, sign, sgn, frac, heaviside, nextafter": "piecewise constant or the identity: derivatives exactly 0 or 1",
    "fmod, remainder, fmax, fmin, maximum, minimum, clamp*": "exact IEEE operations (fmod is exact); derivatives 0 or ±1 by a branch",
    "softplus, log_sigmoid, silu, mish, gelu, elu, hardsigmoid, hardswish, glu": "tests/autograd/test_activation_accuracy.py",
    "polygamma n = 8 to 11, 15 to 17, > 20": "the same kernel as the measured orders (polygamma1, 2, 5, 12, 18 and their derivatives to n = 20; n = 3, 4 in tests/autograd/exact_special2.py; tests/autograd/test_trigamma_accuracy.py)",
}


# ---- the measurement ------------------------------------------------------------------------------------


def ulps(got, exact):
    """|got - exact| in ulps of the exact value (mixed sense: below 2^-1000 in units of 2^-1052);
    an exact value past the float64 range must be the infinity of its sign; nan must be nan."""
    if m.isnan(exact):
        return 0.0 if math.isnan(got) else math.inf
    if m.isinf(exact) or abs(exact) > MAX * (1 + m.mpf(2) ** -53):
        return 0.0 if math.isinf(got) and (got > 0) == (exact > 0) else math.inf
    if not math.isfinite(got):
        return math.inf
    scale = max(abs(exact), m.mpf(TINY)) * m.mpf(2) ** -52
    return float(abs(m.mpf(got) - exact) / scale)


def _np(t):
    return t.detach().numpy().astype(np.float64)


def _partial(fn, ts, i):
    """fn as a function of its ``i``-th argument alone (the others constant)."""
    consts = [t.detach() for t in ts]
    return lambda v: fn(*consts[:i], v, *consts[i + 1 :])


def reference_answers(entry):
    """{check: array}: value, d1 (reverse, forward), d2 (reverse over reverse, forward over
    forward); for a binary entry each partial under its index (d1_0, d1_1, d2_00, d2_01, d2_11).
    Forward mode differentiates f as a function of one argument, the others held constant (a zero
    tangent times an infinite partial would be nan by IEEE rules, not an error of the formula)."""
    xs = entry.grid if entry.arity > 1 else (entry.grid,)
    wrt = entry.differentiated
    ts = [T.tensor(x, dtype=T.float64, requires_grad=i in wrt) for i, x in enumerate(xs)]
    y = entry.ref(*ts)
    out = {"value": _np(y)}
    d1s = dict(zip(wrt, T.autograd.grad(y.sum(), [ts[i] for i in wrt], create_graph=True)))
    one = T.ones_like(ts[0])
    for k, i in enumerate(wrt):
        out[f"d1_{i} reverse"] = _np(d1s[i])
        f = _partial(entry.ref, ts, i)
        out[f"d1_{i} forward"] = _np(T.func.jvp(f, (ts[i].detach(),), (one,))[1])
        if not d1s[i].requires_grad:  # a linear op: its first derivative is a constant
            for j in wrt[k:]:
                out[f"d2_{i}{j} reverse"] = np.zeros(len(xs[0]))
            continue
        d2 = T.autograd.grad(d1s[i].sum(), [ts[j] for j in wrt[k:]], retain_graph=True, allow_unused=True)
        for j, g in zip(wrt[k:], d2):
            out[f"d2_{i}{j} reverse"] = np.zeros(len(xs[0])) if g is None else _np(g)
        # forward over forward: the pure second partial (the mixed one is measured in reverse mode)
        out[f"d2_{i}{i} forward"] = _np(
            T.func.jvp(lambda v, f=f: T.func.jvp(f, (v,), (one,))[1], (ts[i].detach(),), (one,))[1]
        )
    if entry.mixed_forward:
        for k, i in enumerate(wrt):
            for j in wrt[k + 1 :]:
                out[f"d2_{i}{j} forward"] = _np(_mixed_forward(entry.ref, ts, i, j, one))
    return out


def _mixed_forward(fn, ts, i, j, one):
    """∂i∂j fn by forward over forward: a unit tangent in argument i inside one in argument j."""
    consts = [t.detach() for t in ts]

    def at(u, v):
        args = list(consts)
        args[i], args[j] = u, v
        return fn(*args)

    inner = lambda v: T.func.jvp(lambda u: at(u, v), (consts[i],), (one,))[1]  # noqa: E731
    return T.func.jvp(inner, (consts[j],), (one,))[1]


def exact_answers(entry):
    """{check: list of mpf} in the layout of :func:`reference_answers`."""
    xs = entry.grid if entry.arity > 1 else (entry.grid,)
    cols = {}
    with m.workdps(DPS):
        for point in zip(*xs):
            v, d1, d2 = entry.exact(*(m.mpf(float(p)) for p in point))
            if entry.arity == 1 or len(entry.differentiated) == 1:
                d1, d2 = (d1,), (d2,)
            wrt = entry.differentiated
            row = {"value": v}
            for i, d in zip(wrt, d1):
                row[f"d1_{i}"] = d
            pairs = [(i, j) for k, i in enumerate(wrt) for j in wrt[k:]]
            for (i, j), d in zip(pairs, d2):
                row[f"d2_{i}{j}"] = d
            for k, v in row.items():
                cols.setdefault(k, []).append(+v)
    return cols


def measure(entry):
    """{order: (worst ulps, check, point)} for order in value, d1, d2."""
    got = reference_answers(entry)
    exact = exact_answers(entry)
    xs = entry.grid if entry.arity > 1 else (entry.grid,)
    worst = {}
    for check, vals in got.items():
        key = check.split(" ")[0]
        order = key.split("_")[0]
        for k, (g, e) in enumerate(zip(vals, exact[key])):
            err = ulps(float(g), e)
            point = tuple(float(x[k]) for x in xs)
            if order not in worst or err > worst[order][0] or (math.isnan(worst[order][0])):
                worst[order] = (err, check, point if entry.arity > 1 else point[0])
    return worst


# ---- IEEE special values and the limits at poles ----------------------------------------------------------

INF, NAN = math.inf, math.nan
#: (name, point, order, expected): values per C99 Annex F, derivatives as the mathematical limit
#: (one-sided at a pole, from the side the point lies on: ±0 by its sign)
SPECIALS = [
    ("exp", -INF, 0, 0.0),
    ("exp", INF, 1, INF),
    ("exp", -INF, 1, 0.0),
    ("log", 0.0, 0, -INF),
    ("log", 0.0, 1, INF),
    ("log", 0.0, 2, -INF),
    ("log", INF, 1, 0.0),
    ("sqrt", 0.0, 1, INF),
    ("sqrt", 0.0, 2, -INF),
    ("sqrt", INF, 1, 0.0),
    ("rsqrt", 0.0, 0, INF),
    ("rsqrt", 0.0, 1, -INF),
    ("rsqrt", 0.0, 2, INF),
    ("reciprocal", 0.0, 1, -INF),
    ("reciprocal", 0.0, 2, INF),
    ("reciprocal", -0.0, 2, -INF),
    ("reciprocal", INF, 1, -0.0),
    ("tanh", INF, 0, 1.0),
    ("tanh", INF, 1, 0.0),
    ("tanh", -INF, 2, 0.0),
    ("sigmoid", INF, 1, 0.0),
    ("sigmoid", -INF, 1, 0.0),
    ("atan", INF, 0, math.pi / 2),
    ("atan", INF, 1, 0.0),
    ("erf", INF, 0, 1.0),
    ("erf", -INF, 1, 0.0),
    ("erfc", INF, 0, 0.0),
    ("erfc", INF, 1, -0.0),
    ("erfc", -INF, 2, NAN),  # PyTorch's -2x·e^{-x²} forms -inf · 0: its value at ±inf is kept
    ("ndtr", -INF, 0, 0.0),
    ("ndtr", INF, 0, 1.0),
    ("ndtr", INF, 1, 0.0),
    ("ndtr", -INF, 2, NAN),  # PyTorch's erf'' at ±inf forms ∓inf · 0: its value there is kept
    ("logit", 0.0, 0, -INF),
    ("logit", 1.0, 0, INF),
    ("logit", 0.0, 1, INF),
    ("logit", 0.0, 2, -INF),
    ("logit", 1.0, 2, INF),
    ("sinc", 0.0, 0, 1.0),
    ("sinc", 0.0, 1, 0.0),
    ("sinc", 0.0, 2, -(math.pi**2) / 3),
    ("asin", 1.0, 1, INF),
    ("atanh", 1.0, 0, INF),
    ("atanh", 1.0, 1, INF),
    ("acosh", 1.0, 1, INF),
    ("pow_half", 0.0, 1, INF),
    ("pow_half", 0.0, 2, -INF),
    ("pow_-1", 0.0, 2, INF),
    ("entr", 0.0, 0, 0.0),
    ("entr", 0.0, 1, INF),
    ("entr", 0.0, 2, -INF),
    ("copysign", (INF, -2.0), 1, -1.0),  # PyTorch's result / self is nan here; JAX's -1
    ("copysign", (-INF, 3.0), 1, -1.0),
    ("copysign", (5.0, -0.0), 0, -5.0),
    ("copysign", (5.0, -0.0), 1, -1.0),
    ("lgamma", 5e-324, 0, 744.4400719213812),
    ("lgamma", 1.0, 0, 0.0),
    ("lgamma", 2.0, 0, 0.0),
    ("erfinv", 1.0, 1, INF),
    ("erfinv", -1.0, 2, -INF),
    # pow(-inf, y) = +inf and pow(-0, y) = +0 for y > 0 not an odd integer (C99 F.10.4.4), where
    # NumPy's and PyTorch's x ** 0.5 is sqrt(x): nan and -0
    ("pow_half", -INF, 0, INF),
    ("pow_half", -0.0, 0, 0.0),
    ("pow_half", -INF, 1, 0.0),
]


def special_answer(name, x, order, mode):
    """The reference's ``order``-th derivative of ``name`` at x by ``mode`` (reverse/forward); for a
    binary op x is a pair and the derivative is in its first argument."""
    ref = ENTRIES[name].ref
    if isinstance(x, tuple):
        x, other = x
        ref = (lambda f, b: lambda t: f(t, T.tensor([b], dtype=T.float64)))(ref, other)
    t = T.tensor([x], dtype=T.float64, requires_grad=True)
    if order == 0:
        return float(_np(ref(t))[0])
    if mode == "reverse":
        (d1,) = T.autograd.grad(ref(t).sum(), t, create_graph=True)
        if order == 1:
            return float(_np(d1)[0])
        return float(_np(T.autograd.grad(d1.sum(), t)[0])[0])
    one = T.ones_like(t)

    def first(v):
        return T.func.jvp(ref, (v,), (one,))[1]

    fn = first if order == 1 else (lambda v: T.func.jvp(first, (v,), (one,))[1])
    return float(_np(fn(t.detach()))[0])


def special_mismatches():
    """[(name, x, order, mode, got, expected)] for the SPECIALS the reference misses (same float,
    same sign of zero, or both nan)."""
    bad = []
    for name, x, order, expected in SPECIALS:
        for mode in ("reverse", "forward") if order else ("value",):
            got = special_answer(name, x, order, mode)
            same = (math.isnan(got) and math.isnan(expected)) or (
                got == expected and math.copysign(1, got) == math.copysign(1, expected)
            )
            if not same:
                bad.append((name, x, order, mode, got, expected))
    return bad


def _fmt(err):
    return "inf" if math.isinf(err) else ("nan" if math.isnan(err) else f"{err:.3g}")


def table(names=None, echo=False, measured=None):
    """Markdown rows: primitive, value, d1, d2 worst ulps, each with its check and point
    (``measured``: {name: Entry}, default this module's)."""
    measured = ENTRIES if measured is None else measured
    rows = ["| primitive | value | d1 | d2 |", "|---|---|---|---|"]
    for name in names or measured:
        w = measure(measured[name])
        cells = []
        for order in ("value", "d1", "d2"):
            err, check, point = w[order]
            at = check.replace("value", "").strip()
            cells.append(f"{_fmt(err)} ({at + ' ' if at else ''}at {point!r})")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
        if echo:
            print(rows[-1], flush=True)
    return "\n".join(rows)


if __name__ == "__main__":
    import sys
    import warnings

    warnings.simplefilter("ignore")
    table(sys.argv[1:] or None, echo=True)
    for bad in special_mismatches():
        print("special:", bad)
