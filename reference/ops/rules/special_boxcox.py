"""The Box-Cox transformation (jax.scipy.special's ``boxcox(x, λ)`` and ``boxcox1p(x, λ)``, scipy's
definitions; PyTorch and TensorFlow have neither):

    boxcox(x, λ) = (x^λ - 1)/λ,  ln x at λ = 0;   boxcox1p(x, λ) = boxcox(1 + x, λ)

Part of the one derivative table (:mod:`reference.ops.rules`), both arguments differentiated, every
order one exact primitive (``boxcox_derivative``, ``boxcox1p_derivative``, params d0 (in x), d1 (in
λ)). With t the base (x, or 1 + x) and L = ln t (ln(1 + x) by log1p: no rounding of 1 + x), c = λL:

* the value L·I_0(c) and ∂_λ^j f = L^(j+1) I_j(c), I_j(c) = ∫_0^1 s^j e^(cs) ds (f = L ∫_0^1
  e^(λLs) ds), by its series Σ c^n/(n! (n + j + 1)) for |c| < 1 and the recursion I_j = (e^c - j
  I_(j-1))/c from I_0 = expm1(c)/c above: no cancellation near λ = 0, where (x^λ - 1)/λ in floats
  loses every digit and its λ-derivative (λ L x^λ - x^λ + 1)/λ² twice as many;
* ∂_x^k f = q_k(λ) t^(λ-k) (k >= 1, q_k(λ) = (λ-1)(λ-2)...(λ-k+1)), and ∂_λ^j of that by Leibniz:
  Σ_r C(j, r) q_k^(r)(λ) L^(j-r) t^(λ-k);

in mpmath at 40 digits plus 10 per order, rounded once.

Special values: nan at nan and where t < 0; at t = 0 the limits of the value (-1/λ for λ > 0, -inf
for λ <= 0) and nan derivatives (JAX's 0·inf there); at t = inf the value's limits (inf for λ >= 0,
-1/λ below) and nan derivatives; at λ = ±inf the value's limits (t > 1: inf at λ = inf, 0 at -inf;
t < 1: 0 at inf, -inf at -inf; 0 at t = 1) and nan derivatives.
"""

from __future__ import annotations

import functools
import math

from reference.ops import api as A
from reference.ops.functions import pointwise as P
from reference.ops.rules._sign_cache import sign_aware_cache
from reference.ops.rules._times import rounded, unrounded
from reference.ops.rules.registry import RULES
from reference.ops.rules.special_gamma_ratio import binary_rules

_DPS = 40


def _integral(mp, c, j):
    """I_j(c) = ∫_0^1 s^j e^(cs) ds."""
    if abs(c) < 1:
        return mp.nsum(lambda n: c**n / (mp.factorial(n) * (n + j + 1)), [0, mp.inf])
    value = mp.expm1(c) / c
    for i in range(1, j + 1):
        value = (mp.exp(c) - i * value) / c
    return value


def _falling_poly(k):
    """The coefficients of q_k(λ) = (λ-1)(λ-2)...(λ-k+1), lowest first (integers)."""
    coeffs = [1]
    for i in range(1, k):
        shifted = [0] + coeffs  # λ·q
        coeffs = [s - i * c for s, c in zip(shifted, coeffs + [0])]
    return coeffs


def _poly_derivative_at(coeffs, r, lam):
    return sum(c * math.perm(n, r) * lam ** (n - r) for n, c in enumerate(coeffs) if n >= r)


def _special(t_is, lam, d0, d1):
    """The value or a derivative where mpmath's evaluation is not asked, or None. ``t_is``: "nan",
    "neg", "zero", "inf", "one", "small" (0 < t < 1), "big" (t > 1)."""
    if t_is == "nan" or math.isnan(lam) or t_is == "neg":
        return math.nan
    order = d0 + d1
    if t_is == "zero":
        return (-1 / lam if lam > 0 else -math.inf) if not order else math.nan
    if t_is == "inf":
        return (math.inf if lam >= 0 else -1 / lam) if not order else math.nan
    if math.isinf(lam):
        if order:
            return math.nan
        if t_is == "one":
            return 0.0
        grows = (t_is == "big") == (lam > 0)  # t^λ -> inf
        return (math.inf if lam > 0 else -math.inf) if grows else 0.0
    return None


def _exact(shifted, x, lam, d0, d1):
    if math.isnan(x):
        return math.nan
    t = x + 1 if shifted else x  # only compared: the classification of the base
    edge = -1.0 if shifted else 0.0
    t_is = ("neg" if x < edge else "zero" if x == edge else "inf" if math.isinf(x)
            else "one" if x == 0 and shifted or x == 1 and not shifted else "small" if t < 1 else "big")  # fmt: skip
    special = _special(t_is, lam, d0, d1)
    if special is not None:
        return special
    from mpmath import mp

    with mp.workdps(_DPS + 10 * (d0 + d1)):
        mx, ml = mp.mpf(x), mp.mpf(lam)
        log_t = mp.log1p(mx) if shifted else mp.log(mx)
        if d0 == 0:
            if d1 == 0 and lam != 0:
                return rounded(mp.expm1(ml * log_t) / ml)
            value = log_t ** (d1 + 1) * _integral(mp, ml * log_t, d1)
            return unrounded(value) if d1 else rounded(value)
        coeffs = _falling_poly(d0)
        total = mp.fsum(
            math.comb(d1, r) * _poly_derivative_at(coeffs, r, ml) * log_t ** (d1 - r) for r in range(d1 + 1)
        )
        return unrounded(total * mp.exp((ml - d0) * log_t))


boxcox_exact = sign_aware_cache(functools.partial(_exact, False))
boxcox1p_exact = sign_aware_cache(functools.partial(_exact, True))

boxcox_derivative = binary_rules("boxcox", boxcox_exact, ("x", "lmbda"))
boxcox1p_derivative = binary_rules("boxcox1p", boxcox1p_exact, ("x", "lmbda"))


# ---- error declarations (reference/errors): how the frameworks' kernels round ------------------
# JAX: expm1(λ·log(x))/λ (log1p for boxcox1p), log(x) at λ = 0: a few correctly rounded steps, the
# rounding of λ·L a relative error of the exponent (|c|·u, c = λL, carried into expm1's result as
# |e^c c/expm1(c)|·u). The value's declaration is that decomposition. Its derivatives as autodiff
# takes them cancel near λ = 0 (∂_λ: L e^c/λ - expm1(c)/λ²): the exact kernels above are the
# mathematics; the declaration is the one of a mixed-stable kernel, 2 ulps (a departure past it is the
# framework's formula, classified as a known departure, not absorbed by the bound).
from reference import errors as _E  # noqa: E402


def _formula(shifted):
    def formula(x, lmbda):
        log_t = P.log1p(x) if shifted else A.log(x)
        safe = A.where(lmbda == 0, A.ones_like(lmbda), lmbda)
        return A.where(lmbda == 0, log_t, P.expm1(safe * log_t) / safe)

    return formula


for _name, _shifted in (("boxcox", False), ("boxcox1p", True)):
    RULES[_name].error = _E.composite(_formula(_shifted), f"expm1(λ·{'log1p' if _shifted else 'log'}(x))/λ (JAX)")
    RULES[f"{_name}_derivative"].error = _E.exact_elementwise(
        2.0, "a mixed-stable kernel of the exact derivative (2 ulps); JAX's autodiff of expm1(λL)/λ cancels near λ = 0"
    )
