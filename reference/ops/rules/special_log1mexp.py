"""log1mexp(x) = log(1 - e^-x) (``log1mexp``: jax.nn.log1mexp; PyTorch and TensorFlow have none).

Part of the one derivative table (:mod:`reference.ops.rules`). JAX computes the value with
Mächler's cancellation-free split at log 2 (log(-expm1(-x)) below it, log1p(-e^-x) above) and
differentiates with the custom JVP g / expm1(x), whose own derivative -g e^x / expm1(x)² squares
expm1 (and overflows long before the exact second derivative underflows). The reference answers
with the mathematics: ``log1mexp`` and ``log1mexp_derivative`` (param ``order``), every order
exact (reference/ops/rules/_mp_unary.py), from

    f'(x) = 1/(e^x - 1) = Σ_{k>=1} e^-kx,   so   f^(n)(x) = (-1)^(n-1) Li_{1-n}(e^-x)  (n >= 1),

with the polylogarithm of a nonpositive order a rational function of z = e^-x (Eulerian numbers
A(m, k)): Li_0(z) = z/(1 - z), Li_-m(z) = z Σ_{k<m} A(m, k) z^k / (1 - z)^(m+1). Every term is
positive for x > 0, and 1 - z = -expm1(-x) is computed without cancellation, so mpmath at 40
digits gives each order correctly rounded. The derivatives are that rational function of e^-x
everywhere it is finite (x < 0 too, as 1/expm1(x) is, where the value is nan: PyTorch's
derivative formulas, like log's 1/x, are not masked outside the domain).

Special values: f(0) = -inf and f^(n)(±0) the one-sided limit (-1)^(n-1) (n-1)!/x^n of the pole
(+0: ±inf alternating from +inf; -0: -inf, the limit from below, as 1/expm1(-0) = -inf);
f(inf) = -0 (1 - e^-x below 1) and f^(n)(inf) = (-1)^(n-1)·0; f(x < 0) = nan, f'(-inf) = -1
and the higher orders 0 there; nan at nan.
"""

from __future__ import annotations

import math
from functools import cache

from reference.ops.rules._framework_orders import framework_orders, times_multiplier
from reference.ops.rules._mp_unary import unary_rules
from reference.ops.rules._times import rounded, unrounded


@cache
def _eulerian(m):
    """The Eulerian numbers A(m, 0..m-1) (A(m, k) = (k + 1) A(m-1, k) + (m - k) A(m-1, k-1))."""
    row = [1]
    for n in range(1, m + 1):
        prev = row + [0]
        row = [(k + 1) * prev[k] + (n - k) * (prev[k - 1] if k else 0) for k in range(n)]
    return tuple(row)


def _polylog_nonpositive(mp, m, z, one_minus_z):
    """Li_-m(z) for m >= 0, given 1 - z separately (accurate where z is near 1)."""
    if m == 0:
        return z / one_minus_z
    return z * sum(a * z**k for k, a in enumerate(_eulerian(m))) / one_minus_z ** (m + 1)


def log1mexp_exact(x, order):
    """log1mexp^(order)(x), correctly rounded to float64."""
    if math.isnan(x):
        return math.nan
    if order == 0 and x < 0:
        return math.nan
    if x == math.inf:
        return -0.0 if order == 0 else (-1.0) ** (order - 1) * 0.0
    if x == -math.inf:
        return -1.0 if order == 1 else 0.0
    if x == 0:
        if order == 0:
            return -math.inf
        side = math.copysign(1.0, x)  # the limit from the zero's side
        return (-1.0) ** (order - 1) * side**order * math.inf
    from mpmath import mp

    with mp.workdps(40 + 5 * order):
        v = mp.mpf(x)
        z, one_minus_z = mp.exp(-v), -mp.expm1(-v)
        if order == 0:
            return rounded(mp.log(one_minus_z) if x < 1 else mp.log1p(-z))
        return unrounded((-1) ** (order - 1) * _polylog_nonpositive(mp, order - 1, z, one_minus_z))


log1mexp_derivative = unary_rules("log1mexp", "Log1MexpBackward0", log1mexp_exact)


# ---- error declarations (reference/errors): how the frameworks' kernels round ------------------
# log1mexp itself: JAX's split at log 2, log(-expm1(-x)) or log1p(-exp(-x)), one rounding of
# expm1 or exp (relative, up to 1 ulp) carried through log (condition 1/|log(1 - e^-x)| <= 1/log 2
# below the split) or log1p(-t) (condition t/((1 - t)|log1p(-t)|) <= 1/log 2 above it, t <= 1/2),
# plus log's own rounding: at most 1 + 2/log 2 = 3.9 ulps; declared 4. Its derivatives: JAX's
# custom JVP g / expm1(x), differentiated again by autodiff: the roundings of that formula (composed
# from expm1's, exp's and the quotients'), in a scaled form that does not overflow (_jvp_formula).
from reference import errors as _E  # noqa: E402
from reference.ops import api as _A  # noqa: E402
from reference.ops.functions import pointwise as _P  # noqa: E402
from reference.ops.rules.registry import RULES  # noqa: E402


def _jvp_formula(x, order):
    """log1mexp^(order) as JAX computes it: 1 / expm1(x), then autodiff of that quotient, with the
    second and third orders' numerator and denominator scaled by e^-(order)x (t = e^-x, s =
    -expm1(-x) = 1 - t): as many roundings of the same operations, without the overflow of e^x and
    expm1(x)^order that JAX's own unscaled form meets on x > 0 long before the exact value
    underflows (that overflow is JAX's departure, jax-log1mexp-second-derivative-squares-expm1-*,
    not a rounding the bound may absorb). (Below 0, outside the domain, it is the scaled form that
    overflows.)"""
    if order == 1:
        return 1 / _P.expm1(x)
    t, s = _A.exp(-x), -_P.expm1(-x)
    if order == 2:
        return -t / (s * s)  # -e^x / expm1(x)²
    return t * (1 + t) / (s * s * s)  # order 3: d/dx of the above, e^x (e^x + 1) / expm1(x)³


RULES["log1mexp"].error = _E.exact_elementwise(
    4.0, "JAX's split at log 2: expm1's or exp's rounding through log or log1p (condition <= 1/log 2), plus log's"
)
RULES["log1mexp_derivative"].error = _E.composite(
    times_multiplier(_jvp_formula, ("order",)), "JAX's custom JVP g / expm1(x), differentiated again by autodiff", framework_orders(_jvp_formula, ("order",))
)
