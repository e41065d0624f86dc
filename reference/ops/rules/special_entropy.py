"""scipy's relative entropy and Kullback-Leibler divergence of two numbers (jax.scipy.special's
``rel_entr(x, y)`` and ``kl_div(x, y)``; PyTorch's torch.nn.functional.kl_div is a loss of
log-probabilities, another function; TensorFlow has neither):

    rel_entr(x, y) = x ln(x/y)          for x > 0, y > 0;  0 at x = 0, y >= 0;  inf elsewhere
    kl_div(x, y)   = x ln(x/y) - x + y  for x > 0, y > 0;  y at x = 0, y >= 0;  inf elsewhere

Part of the one derivative table (:mod:`reference.ops.rules`), both arguments differentiated, every
order one exact primitive (``rel_entr_derivative``, ``kl_div_derivative``, params d0, d1):
∂_x = ln(x/y) + 1 (kl_div: ln(x/y)), ∂_y = -x/y (kl_div: 1 - x/y), ∂_x^i = (-1)^i (i-2)!/x^(i-1)
(i >= 2), ∂_x ∂_y^j = (-1)^j (j-1)!/y^j, ∂_y^j = -x (-1)^(j-1) (j-1)!/y^j (j >= 2), the mixed
partials with i >= 2 and j >= 1 zero. The value and ln(x/y) in mpmath at 80 digits (kl_div ~ (x -
y)²/(2y) cancels by twice the digits of (x - y)/y: 32 of them for neighbouring floats), rounded once.

Conventions at the edges of the domain (the mathematics is one-sided there): at x = 0 < y the
derivatives are the limits from inside, x -> 0+: ∂_x = -inf (ln x), ∂_y = 0 (kl_div 1), ∂_x^2 =
+inf; at x = y = 0 and outside the domain (where the value is the constant inf) they are nan; at an
infinite argument the value is the limit (rel_entr(inf, y) = inf, rel_entr(x, inf) = -inf for x >
0, 0 for x = 0; kl_div inf; nan where both are infinite) and the derivatives their limits where one
argument is infinite and the other positive (kl_div's ∂_y = 1 - x/y -> -inf as x -> inf, ∂_x = ln(x/y)
-> -inf as y -> inf), nan where both are infinite or x = 0 and y = inf. JAX computes
every derivative there as 0 (its where over safe inputs): a declared convention of the records
(conformance/ops/special_scipy.py)."""

from __future__ import annotations

import functools
import math

from reference.ops import api as A
from reference.ops.rules._framework_orders import framework_orders, times_multiplier
from reference.ops.rules._sign_cache import sign_aware_cache
from reference.ops.rules._times import rounded, unrounded
from reference.ops.rules.registry import RULES
from reference.ops.rules.special_gamma_ratio import binary_rules

_DPS = 80


def _derivative_term(mp, x, y, i, j, log_ratio):
    """∂_x^i ∂_y^j x ln(x/y) (i + j >= 1) from x, y and ln(x/y) (mpmath numbers or floats)."""
    if j == 0:
        if i == 1:
            return log_ratio + 1
        return (-1) ** i * math.factorial(i - 2) / x ** (i - 1)
    if i == 0:
        return -x * (-1) ** (j - 1) * math.factorial(j - 1) / y**j
    if i == 1:
        return (-1) ** j * math.factorial(j - 1) / y**j
    return 0


def _exact(kl, x, y, d0, d1):
    if math.isnan(x) or math.isnan(y):
        return math.nan
    inside = x > 0 and y > 0
    if not inside and not (x == 0 and y >= 0):
        return math.inf if d0 + d1 == 0 else math.nan
    if math.isinf(x) or math.isinf(y):
        if math.isinf(x) and math.isinf(y):
            return math.nan
        if d0 + d1 == 0:
            if kl or math.isinf(x):
                return math.inf
            return -math.inf if x > 0 else 0.0
        if not inside:  # x = 0, y = inf: a limit in each argument at once
            return math.nan
        # one argument infinite inside the domain: the derivatives are their closed forms' limits,
        # which mpmath's inf gives below (ln(inf/y) = inf, -x/y at y = inf 0, 1/x^k at x = inf 0)
    if not inside:  # x = 0 <= y: the value, and the one-sided limits x -> 0+ where y > 0
        if d0 + d1 == 0:
            return y if kl else 0.0
        if y == 0:
            return math.nan
        if d0 == 0:
            return 1.0 if kl and d1 == 1 else 0.0  # -x/y + [kl], -x·(...)/y^j at x = 0
        if d0 == 1 and d1 == 0:
            return -math.inf  # ln(x/y) -> -inf
        if d1 == 0:
            return math.copysign(math.inf, (-1) ** d0)  # (-1)^i (i-2)!/x^(i-1), x -> 0+
        return rounded(_derivative_term(None, 0.0, y, d0, d1, None))
    from mpmath import mp

    with mp.workdps(_DPS):
        mx, my = mp.mpf(x), mp.mpf(y)
        log_ratio = mp.log(mx / my)
        if d0 + d1 == 0:
            value = mx * log_ratio
            return rounded(value - mx + my if kl else value)
        term = _derivative_term(mp, mx, my, d0, d1, log_ratio)
        if kl and d0 + d1 == 1:
            term += -1 if d0 else 1
        return unrounded(term)


rel_entr_exact = sign_aware_cache(functools.partial(_exact, False))
kl_div_exact = sign_aware_cache(functools.partial(_exact, True))

rel_entr_derivative = binary_rules("rel_entr", rel_entr_exact, ("x", "y"))
kl_div_derivative = binary_rules("kl_div", kl_div_exact, ("x", "y"))


# ---- error declarations (reference/errors): how the frameworks' kernels round ------------------
# JAX: rel_entr = xlogx(x) - xlogy(x, y) (x ln x - x ln y: the difference cancels where x is near y,
# an absolute error of u·|x ln x| + u·|x ln y|), kl_div = rel_entr(x, y) - x + y; the derivatives
# autodiff of that: ln x + 1 - ln y, -x/y, 1/x, -1/y, x/y². The declarations are those
# decompositions into table primitives.
from reference import errors as _E  # noqa: E402


def _formula(kl):
    def formula(x, y, d0=0, d1=0):
        log_x, log_y = A.log(x), A.log(y)
        if d0 + d1 == 0:
            value = x * log_x - x * log_y
            return value - x + y if kl else value
        if d0 == 1 and d1 == 0:
            return log_x - log_y if kl else log_x + 1 - log_y
        if d0 == 0 and d1 == 1:
            return 1 - x / y if kl else -x / y
        term = _derivative_term(None, x, y, d0, d1, None)
        return x * 0 if isinstance(term, int) else term

    return formula


for _name, _kl, _what in (("rel_entr", False, "x·log(x) - x·log(y)"), ("kl_div", True, "x·log(x) - x·log(y) - x + y")):
    RULES[_name].error = _E.composite(_formula(_kl), f"{_what} (JAX's xlogx(x) - xlogy(x, y))")
    RULES[f"{_name}_derivative"].error = _E.composite(
        times_multiplier(_formula(_kl), ("d0", "d1")), f"autodiff of {_what} (JAX)", framework_orders(_formula(_kl), ("d0", "d1"))
    )
