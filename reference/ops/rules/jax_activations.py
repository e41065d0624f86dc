"""jax.nn's activations that PyTorch and TensorFlow lack, as exact primitives: ``squareplus(x, b)``
= (x + √(x² + b))/2 (So's squareplus, jax.nn.squareplus, b = 4 by default; b >= 0).

Part of the one derivative table (:mod:`reference.ops.rules`), both arguments differentiated, every
order one exact primitive that takes its multiplier (``squareplus_derivative(x, b, outer, inner)``, params d0,
d1: outer·inner·∂_x^d0 ∂_b^d1, one rounding; reference/ops/rules/_times.py): at x = -5.6e-309, b = 8.2e-308
∂_b² = -1/(8s³) = -5.3e459 overflows, its product with the tangent 2.5e-308 is -1.3e152.

For x < 0 the sum x + √(x² + b) cancels (JAX's formula loses every digit past |x| ~ √(b/u):
squareplus(-1e8) = 0 in float64, exact 1e-8): the value is b/(2(√(x² + b) - x)) there, and x² is formed in mpmath (no overflow past 1.3e154).
The derivatives to order 3 are closed forms in mpmath at 60 digits, rounded once (s = √(x² + b)):
∂_x = (s + x)/(2s) (s + x = b/(s - x) for x < 0), ∂_b = 1/(4s), ∂_x² = b/(2s³), ∂_x∂_b = -x/(4s³),
∂_b² = -1/(8s³), ∂_x³ = -3bx/(2s⁵), ∂_x²∂_b = (2x² - b)/(4s⁵), ∂_x∂_b² = 3x/(8s⁵), ∂_b³ = 3/(16s⁵).
At ±inf the value and derivatives are their limits (squareplus(-inf) = 0, ∂_x(inf) = 1, every
other derivative 0); where x² + b < 0 (b < 0) or s = 0 (x = b = 0, relu's kink) there is no derivative
(nan), the value √ of a negative number nan too."""

from __future__ import annotations

import math

from reference.ops.rules._framework_orders import framework_orders, times_multiplier
from reference.ops.rules._sign_cache import sign_aware_cache
from reference.ops.rules._times import rounded, unrounded
from reference.ops.rules.registry import RULES
from reference.ops.rules.special_gamma_ratio import binary_rules

_DPS = 60


def _closed_form(mp, x, b, d0, d1):
    """∂_x^d0 ∂_b^d1 of (x + s)/2, s = √(x² + b), in mpmath, with s + x as b/(s - x) for x < 0."""
    s = mp.sqrt(x * x + b)
    s_plus_x = b / (s - x) if x < 0 else s + x
    s3, s5 = s**3, s**5
    forms = {
        (0, 0): lambda: s_plus_x / 2,
        (1, 0): lambda: s_plus_x / (2 * s),
        (0, 1): lambda: 1 / (4 * s),
        (2, 0): lambda: b / (2 * s3),
        (1, 1): lambda: -x / (4 * s3),
        (0, 2): lambda: -1 / (8 * s3),
        (3, 0): lambda: -3 * b * x / (2 * s5),
        (2, 1): lambda: (2 * x * x - b) / (4 * s5),
        (1, 2): lambda: 3 * x / (8 * s5),
        (0, 3): lambda: 3 / (16 * s5),
    }
    if (d0, d1) in forms:
        return forms[(d0, d1)]()
    # orders past 3 (no check reaches them): mpmath's numerical partials with steps relative to x, b
    return mp.diff(lambda u, v: _closed_form(mp, u, v, 0, 0), (x, b), (d0, d1), h=max(abs(x), abs(b), 1) * mp.mpf(10) ** -20)


def _squareplus(x, b, d0, d1):
    if math.isnan(x) or math.isnan(b) or (math.isinf(b) and b < 0):
        return math.nan
    if math.isinf(b):  # s = inf: the value inf, ∂_x -> 1/2, the rest -> 0
        return math.inf if d0 + d1 == 0 else (0.5 if (d0, d1) == (1, 0) else 0.0)
    if math.isinf(x):
        if d0 + d1 == 0:
            return math.inf if x > 0 else 0.0
        return 1.0 if (d0, d1) == (1, 0) and x > 0 else 0.0
    from mpmath import mp

    with mp.workdps(_DPS):
        mx, mb = mp.mpf(x), mp.mpf(b)
        radicand = mx * mx + mb
        if radicand < 0 or (radicand == 0 and d0 + d1 > 0):
            return math.nan
        value = _closed_form(mp, mx, mb, d0, d1)
        # a derivative unrounded: it may leave float64's range where its product with the
        # multiplier does not (reference/ops/rules/_times.py)
        return unrounded(value) if d0 + d1 else rounded(value)


squareplus_exact = sign_aware_cache(_squareplus)
squareplus_derivative = binary_rules("squareplus", squareplus_exact, ("x", "b"))


# ---- error declarations (reference/errors): how JAX's kernel rounds ----------------------------
# jax.nn.squareplus is (x + sqrt(x² + b))/2; its derivatives are autodiff of that: sqrt's JVP
# g·0.5/ans, so ∂_x = (1 + 2x·0.5/s)/2, ∂_b = 0.5/s/2, and the second orders differentiate those
# again (∂_x² = (1/s - x·x/s³)/2: JAX's form cancels where the exact b/(2s³) does not). The
# declarations are those formulas in table primitives; higher orders the closed forms.
from reference import errors as _E  # noqa: E402
from reference.ops import api as A  # noqa: E402


def _formula(x, b, d0=0, d1=0):
    s = A.sqrt(x * x + b)
    half_over_s = 0.5 / s
    if d0 + d1 == 0:
        return (x + s) / 2
    if (d0, d1) == (1, 0):
        return (1 + 2 * x * half_over_s) / 2
    if (d0, d1) == (0, 1):
        return half_over_s / 2
    s3 = s * s * s
    if (d0, d1) == (2, 0):
        return (1 / s - x * x / s3) / 2
    if (d0, d1) == (1, 1):
        return -x / s3 / 4
    if (d0, d1) == (0, 2):
        return -1 / s3 / 8
    s5 = s3 * s * s
    closed = {(3, 0): -3 * b * x / 2, (2, 1): (2 * x * x - b) / 4, (1, 2): 3 * x / 8, (0, 3): 3 / 16 + x * 0}
    return closed[(d0, d1)] / s5


RULES["squareplus"].error = _E.composite(_formula, "(x + sqrt(x·x + b))/2 (jax.nn.squareplus)")
RULES["squareplus_derivative"].error = _E.composite(
    times_multiplier(_formula, ("d0", "d1")), "autodiff of (x + sqrt(x·x + b))/2 (JAX)", framework_orders(_formula, ("d0", "d1"))
)
