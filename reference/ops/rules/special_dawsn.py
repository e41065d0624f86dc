"""Dawson's integral D(x) = e^-x² ∫_0^x e^t² dt (``dawsn``: jax.scipy.special.dawsn,
tf.math.special.dawsn; PyTorch has none).

Part of the one derivative table (:mod:`reference.ops.rules`). Both frameworks differentiate it
with D' = 1 - 2x D (TensorFlow's registered gradient, JAX's custom jvp), which for large |x|
subtracts two numbers near 1 (D ~ 1/(2x)): D' ~ -1/(2x²) keeps about 2·log2|x| fewer bits than the
operands, and D'' = (4x² - 2) D - 2x twice that. The reference answers with the mathematics:
``dawsn`` and ``dawsn_derivative`` (param ``order``), every order exact:

* |x| < 64: D = (√π/2) e^-x² erfi(x) in mpmath at 60 digits + 4 per order, and the derivatives
  by the recurrence D^(k+1) = -2x D^(k) - 2k D^(k-1) (k >= 1; D' = 1 - 2xD), which loses at most
  log10(2x²) ≈ 4 digits an order there;
* |x| >= 64: the asymptotic series D(x) = Σ_k (2k-1)!!/2^(k+1) x^-(2k+1), differentiated term by
  term (an asymptotic power series of an analytic function may be), summed until a term is below
  10^-45 of the sum (its terms fall by (2k+1)/(2x²) <= 1/64 each over the terms used).

Special values: D(±inf) = ±0 and every derivative 0 (the limit); nan at nan.
"""

from __future__ import annotations

import math

from reference.ops.rules._framework_orders import framework_orders, times_multiplier
from reference.ops.rules._mp_unary import unary_rules
from reference.ops.rules._times import rounded

#: where the asymptotic series takes over from erfi
_ASYMPTOTIC = 64.0


def _asymptotic(mp, x, order):
    """The order-th derivative of Σ_k (2k-1)!!/2^(k+1) x^-(2k+1), term by term."""
    total = mp.mpf(0)
    coeff = mp.mpf(1) / 2  # (2k-1)!!/2^(k+1) at k = 0
    for k in range(200):
        p = 2 * k + 1  # d^m x^-p = (-1)^m p (p + 1) ... (p + m - 1) x^-(p + m)
        term = coeff * (-1) ** order * mp.rf(p, order) * x ** (-(p + order))
        total += term
        if abs(term) < abs(total) * mp.mpf(10) ** -45:
            break
        coeff = coeff * (2 * k + 1) / 2
    return total


def dawsn_exact(x, order):
    """D^(order)(x), correctly rounded to float64."""
    if math.isnan(x):
        return math.nan
    if math.isinf(x):
        return math.copysign(0.0, x) if order == 0 else 0.0
    if x == 0 and order == 0:
        return x  # D is odd: D(±0) = ±0 (mpmath's zero has no sign)
    from mpmath import mp

    with mp.workdps(60 + 4 * order):
        v = mp.mpf(x)
        if abs(x) >= _ASYMPTOTIC:
            return rounded(_asymptotic(mp, v, order))
        d = [mp.sqrt(mp.pi) / 2 * mp.exp(-v * v) * mp.erfi(v)]
        if order >= 1:
            d.append(1 - 2 * v * d[0])
        for k in range(1, order):
            d.append(-2 * v * d[k] - 2 * k * d[k - 1])
        return rounded(d[order])


dawsn_derivative = unary_rules("dawsn", "DawsnBackward0", dawsn_exact)


# ---- error declarations (reference/errors): how the frameworks' kernels round ------------------
# D itself: JAX's and TensorFlow's Cody-Paciorek-Thacher rational fits (Cephes' dawsn), measured
# against the exact kernel above (scripts/measure_special_integrals.py: 400 points x = ±10^U(-4, 2.5),
# float32 and float64, seed 0): 1.3 (TensorFlow float64 at -3.75) in the mixed sense
# (reference.errors.exact_elementwise); declared 2. Its derivatives: both frameworks compute
# D' = 1 - 2x D (TensorFlow's registered gradient, JAX's custom jvp) and differentiate that
# formula again, so their error is that formula's, composed from D's (measured: 5.4e4 c-units of
# the exact derivative at x = -233 in float64, the cancellation of 1 against 2xD).
from reference import errors as _E  # noqa: E402
from reference.autograd.dispatch import apply  # noqa: E402
from reference.ops.rules.registry import RULES  # noqa: E402


def _recurrence(x, order):
    """D^(order) as the frameworks compute it: D' = 1 - 2x D, then D^(k+1) = -2x D^(k) - 2k D^(k-1)
    (what autodiff of 1 - 2x D gives), from the primitive D."""
    d = [apply(RULES["dawsn"], (x,), {})]
    d.append(1 - x * d[0] * 2)
    for k in range(1, order):
        d.append(x * d[k] * -2 - d[k - 1] * (2 * k))
    return d[order]


RULES["dawsn"].error = _E.exact_elementwise(
    2.0, "measured against mpmath (scripts/measure_special_integrals.py): 1.3 worst (TensorFlow float64)"
)
RULES["dawsn_derivative"].error = _E.composite(
    times_multiplier(_recurrence, ("order",)),
    "the frameworks' D' = 1 - 2x D (TensorFlow's registered gradient, JAX's jvp), differentiated again",
    framework_orders(_recurrence, ("order",)),
)
