"""TensorFlow's ``tf.math.xdivy(x, y)``: x/y, and 0 wherever x == 0 (y = 0 and a NaN y included;
tf.math.xdivy's documentation: "Returns 0 if x == 0, and x / y otherwise"). PyTorch and JAX have no
such function: its value at x = 0 is TensorFlow's definition, its derivatives the mathematics of
that function.

Part of the one derivative table (:mod:`reference.ops.rules`), both arguments differentiated, every
order one exact primitive (``xdivy_derivative``, params d0, d1). Off the line x = 0 the function is
x/y, so ∂_x = 1/y, ∂_y^j = x (-1)^j j!/y^(j+1), ∂_x ∂_y^j = (-1)^j j!/y^(j+1), ∂_x^i = 0 for i >= 2.
On the line x = 0 it is the constant 0 in y, so ∂_y^j = 0 there (whatever y, as the value); in x it
is still x/y for y != 0, so ∂_x = 1/y at x = 0 (TensorFlow's gradient xdivy(x != 0, y) says 0 there:
a known departure, refgrad/cases/known_departures.toml). At y = ±0 the closed forms continue in IEEE
arithmetic (∂_x(0, ±0) = 1/±0 = ±inf, the limit of (xdivy(h, ±0) - 0)/h as h -> 0), and ∂_x^i
(i >= 2) is 0 there as everywhere: the function is linear in x, and PyTorch's div, x/y's own
semantics, has the same structural zero at y = 0 (its double backward of x/y at x = -0.648, y = 0
gives d/dx <gg, grad> = gg_y g (-1/y²) = -inf, no NaN; TensorFlow's xdivy likewise). Each derivative is its closed form in mpmath, rounded once; the value is the one
IEEE division."""

from __future__ import annotations

import math

import numpy as np

from reference.ops import api as A
from reference.ops.rules._framework_orders import framework_orders, times_multiplier
from reference.ops.rules._sign_cache import sign_aware_cache
from reference.ops.rules._times import unrounded
from reference.ops.rules.registry import RULES
from reference.ops.rules.special_gamma_ratio import binary_rules

_DPS = 30


def _exact(x, y, d0, d1):
    if d0 + d1 == 0:
        if x == 0:
            return 0.0  # TensorFlow's definition (y = 0 and a NaN y included)
        with np.errstate(all="ignore"):
            return float(np.float64(x) / np.float64(y))
    if d0 == 0 and x == 0:
        return 0.0  # the constant 0 along x = 0
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if d0 >= 2:  # linear in x: 0 at y = ±0 too (x/y's structural zero, as PyTorch's div)
        return 0.0
    if y == 0:  # (-1)^d1 d1! (x or 1)/y^(d1+1): an infinity whose sign is that of ±0's reciprocal power
        sign = (-1) ** d1 * (math.copysign(1.0, y) ** (d1 + 1)) * (1.0 if d0 else math.copysign(1.0, x))
        return math.copysign(math.inf, sign)
    from mpmath import mp

    with mp.workdps(_DPS):
        term = (-1) ** d1 * math.factorial(d1) / mp.mpf(y) ** (d1 + 1)
        return unrounded(term if d0 else mp.mpf(x) * term)


xdivy_exact = sign_aware_cache(_exact)
xdivy_derivative = binary_rules("xdivy", xdivy_exact, ("x", "y"))


# ---- error declarations (reference/errors): how TensorFlow's kernels round --------------------
# TensorFlow's xdivy is x/y (one division) where x != 0; its gradient (math_grad._XDivyGrad) is
# xdivy(x != 0, y) in x and xdivy(-x, y²) in y, its higher orders autodiff of those: the
# declarations are the closed forms as table primitives (x = 0 masked as TensorFlow masks it).
from reference import errors as _E  # noqa: E402


def _formula(x, y, d0=0, d1=0):
    if d0 >= 2:
        return x * 0 + y * 0
    power = y
    for _ in range(d1):
        power = power * y
    term = math.factorial(d1) * (-1) ** d1 / power
    value = term if d0 else x * term
    return A.where(x == 0, x * 0, value)


RULES["xdivy"].error = _E.composite(_formula, "x / y, 0 where x == 0 (TensorFlow's Xdivy kernel)")
RULES["xdivy_derivative"].error = _E.composite(
    times_multiplier(_formula, ("d0", "d1")), "xdivy(x != 0, y), xdivy(-x, y²) and their autodiff (TensorFlow)", framework_orders(_formula, ("d0", "d1"))
)
