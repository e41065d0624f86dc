"""Spence's function in scipy's convention (``spence``: jax.scipy.special.spence,
tf.math.special.spence; PyTorch has none): spence(x) = ∫_1^x ln t/(1 - t) dt = Li₂(1 - x), real for
x >= 0 (Li₂ is real on (-inf, 1]; 1 - x > 1 is its branch cut).

Part of the one derivative table (:mod:`reference.ops.rules`): ``spence`` and ``spence_derivative``
(param ``order``), every order an exact kernel (reference/ops/rules/_mp_unary.py):

* the value: mpmath's polylog(2, 1 - x) at 40 digits;
* the derivatives: spence' = ln x/(1 - x) =: g, and g^(m) by Leibniz' rule over the closed forms
  d^j ln x = (-1)^(j-1) (j-1)!/x^j and d^i (1 - x)^-1 = i!/(1 - x)^(i+1), in mpmath at 40 + 20·order
  digits: near x = 1 the terms are of size |1 - x|^-(m+1) (up to 2^(53(m+1)) at the float64
  neighbours of 1) and cancel to about g^(m)(1) = (-1)^(m+1) m!/(m + 1) (the series
  g = -Σ_n (1 - x)^n/(n + 1)), the value used at x = 1 itself: the working digits cover the
  16·(m + 1) digits that cancel.

Special values (the limits; C99's nan outside the domain): nan at nan and x < 0; spence(0) = π²/6,
spence(+inf) = -inf; spence'(0) = -inf and spence^(k)(0) = (-1)^k inf (the ln x term's pole); every
derivative 0 at +inf.
"""

from __future__ import annotations

import math

from reference.ops.rules._framework_orders import framework_orders, times_multiplier
from reference.ops.rules._mp_unary import unary_rules
from reference.ops.rules._times import rounded, unrounded
from reference.ops.rules.registry import RULES


def _log_over_one_minus(mp, x, m):
    """d^m/dx^m [ln x/(1 - x)] at mpf ``x`` (x > 0)."""
    if x == 1:
        return mp.mpf(-1) ** (m + 1) * math.factorial(m) / (m + 1)
    total = mp.mpf(0)
    for j in range(m + 1):
        dlog = mp.log(x) if j == 0 else mp.mpf(-1) ** (j - 1) * math.factorial(j - 1) / x**j
        i = m - j
        total += math.comb(m, j) * dlog * math.factorial(i) / (1 - x) ** (i + 1)
    return total


def spence_exact(x, order):
    """spence^(order)(x), correctly rounded to float64."""
    if math.isnan(x) or x < 0:
        return math.nan
    if math.isinf(x):
        return -math.inf if order == 0 else 0.0
    if x == 0:
        if order == 0:
            return math.pi**2 / 6
        return -math.inf if order == 1 else (-1.0) ** order * math.inf
    from mpmath import mp

    with mp.workdps(40 + 20 * order):
        v = mp.mpf(x)
        if order == 0:
            return rounded(mp.polylog(2, 1 - v))
        return unrounded(_log_over_one_minus(mp, v, order - 1))


spence_derivative = unary_rules("spence", "SpenceBackward0", spence_exact)


# ---- error declarations (reference/errors): how the frameworks' kernels round ------------------
# spence itself: JAX's and TensorFlow's Cephes rational fit, measured against the exact kernel above
# (scripts/measure_special_integrals.py: 400 points x = 10^U(-4, 2.5), float32 and float64, seed 0):
# 5.13 (TensorFlow float64 at 0.512) in the mixed sense (reference.errors.exact_elementwise); declared 6.
# Its derivatives: TensorFlow's registered gradient ln x/(1 - x) (-1 at x = 1), differentiated again
# by autodiff (measured: 5.3e4 c-units at x = 1.00001 in float64, where 1/(x(1 - x)) and
# ln x/(1 - x)² cancel); JAX has no derivative rule and differentiates its rational fit instead
# (known entry jax-spence-derivatives-of-its-algorithm).
from reference import errors as _E  # noqa: E402
from reference.ops import api as _A  # noqa: E402


def _slope_formula(x, order):
    """spence^(order) as TensorFlow computes it: ln x/(1 - x), then autodiff of that quotient."""
    log, one_minus = _A.log(x), 1 - x
    if order == 1:
        return log / one_minus
    if order == 2:
        return 1 / (x * one_minus) + log / (one_minus * one_minus)
    # order 3: d/dx of the above
    return -(1 - 2 * x) / (x * one_minus * (x * one_minus)) + 1 / (x * one_minus * one_minus) + 2 * log / (
        one_minus * one_minus * one_minus
    )


_SOURCE = "measured against mpmath (scripts/measure_special_integrals.py): {}"
RULES["spence"].error = _E.exact_elementwise(6.0, _SOURCE.format("5.13 worst (TensorFlow float64), declared 6"))
RULES["spence_derivative"].error = _E.composite(
    times_multiplier(_slope_formula, ("order",)),
    "TensorFlow's registered gradient ln x/(1 - x), differentiated again by autodiff",
    framework_orders(_slope_formula, ("order",)),
)
