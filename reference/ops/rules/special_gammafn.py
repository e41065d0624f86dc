"""The gamma function and its relatives in scipy's and JAX's real semantics (``gamma``, ``gammasgn``,
``loggamma``, ``factorial``: jax.scipy.special; PyTorch has lgamma (torch.special.gammaln) and
digamma but none of these; TensorFlow none).

Part of the one derivative table (:mod:`reference.ops.rules`), every order an exact kernel
(reference/ops/rules/_mp_unary.py, mpmath at 40 + 10·order digits, rounded once):

* ``gamma``: Γ(x); Γ^(k) by Γ' = Γψ and Leibniz' rule, Γ^(k+1) = Σ_j C(k, j) Γ^(j) ψ^(k-j), with
  ψ^(n) mpmath's polygamma (nothing cancels but near the zeros of the derivatives, which the digits
  cover). Special values C99's tgamma: Γ(±0) = ±inf, nan at the negative integers (the pole's sign
  depends on the side) and at -inf, Γ(+inf) = +inf. The derivatives at ±0: Γ^(k) ~ (-1)^k k!/x^(k+1),
  the sign of that at the zero's sign; +inf at +inf; nan at the negative integers.
* ``loggamma``: JAX's real loggamma (jax.scipy.special.loggamma: lgamma(x) where x > 0, nan
  elsewhere; scipy's real loggamma likewise): ln Γ(x) for x > 0, its derivatives ψ^(k-1)(x); nan at
  x <= 0 (both zeros: JAX's x > 0 is false there), +inf at +inf with derivatives ψ^(k-1)(inf) (+inf
  for k = 1, 0 beyond).
* ``factorial``: scipy's and JAX's float factorial n! = Γ(n + 1) for n >= 0 and 0 for n < 0 (n + 1
  formed exactly in mpmath); its derivatives Γ^(k)(n + 1) for n >= 0 (the right-hand ones at n = 0,
  where the function jumps from 0 to 1: the value's branch) and 0 for n < 0.
* ``gammasgn``: the sign of Γ: 1 for x > 0 and at +inf, ±1 at ±0, and for a negative non-integer
  -1 where floor(x) is odd, 1 where it is even; nan at the negative integers, -inf
  and nan (JAX's and scipy's). Piecewise constant: its derivative is 0 everywhere, the poles
  included (a convention, as torch.sign's 0 at its jump).
"""

from __future__ import annotations

import math

from reference.ops import api as A
from reference.ops.rule import AUTO_ELEMENT_WISE, BATCH_ELEMENTWISE
from reference.ops.rules._framework_orders import framework_orders, times_multiplier
from reference.ops.rules._mp_unary import host_kernel, unary_rules
from reference.ops.rules._times import rounded, unrounded
from reference.ops.rules.registry import rule


def _negative_integer(x):
    return x < 0 and x == math.floor(x)


def _gamma_derivatives(mp, v, order):
    """[Γ(v), Γ'(v), ..., Γ^(order)(v)] at mpf ``v`` (not a pole) by Γ^(k+1) = Σ_j C(k, j) Γ^(j) ψ^(k-j)."""
    d = [mp.gamma(v)]
    psi = [mp.psi(n, v) for n in range(order)]
    for k in range(order):
        d.append(mp.fsum(math.comb(k, j) * d[j] * psi[k - j] for j in range(k + 1)))
    return d


def _gamma_at(x, order, shift=0):
    """Γ^(order)(x + shift), x a float, shift an int added exactly (factorial's n + 1, n >= 0)."""
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return math.inf
    if shift == 0 and _negative_integer(x):
        return math.nan
    if shift == 0 and x == 0:  # the pole at ±0: (-1)^k k!/x^(k+1)
        return (-1.0) ** order * math.copysign(1.0, x) ** (order + 1) * math.inf
    from mpmath import mp

    with mp.workdps(40 + 10 * order):
        value = _gamma_derivatives(mp, mp.mpf(x) + shift, order)[order]
        return unrounded(value) if order else rounded(value)


def gamma_exact(x, order):
    """Γ^(order)(x), correctly rounded to float64."""
    return _gamma_at(x, order)


def factorial_exact(x, order):
    """d^order/dx^order of scipy's float factorial (Γ(x + 1) for x >= 0, 0 below)."""
    if math.isnan(x):
        return math.nan
    if x < 0:
        return 0.0
    return _gamma_at(x, order, shift=1)


def loggamma_exact(x, order):
    """ln Γ(x) (order 0) or ψ^(order-1)(x) for x > 0; nan at x <= 0 (JAX's real loggamma)."""
    if math.isnan(x) or x <= 0:
        return math.nan
    if x == math.inf:
        return math.inf if order <= 1 else 0.0
    from mpmath import mp

    with mp.workdps(40 + 10 * order):
        v = mp.mpf(x)
        return rounded(mp.loggamma(v)) if order == 0 else unrounded(mp.psi(order - 1, v))


def gammasgn_exact(x, order):
    """The sign of Γ(x) (JAX's and scipy's special values)."""
    if math.isnan(x) or x == -math.inf or _negative_integer(x):
        return math.nan
    if x > 0:
        return 1.0
    if x == 0:
        return math.copysign(1.0, x)
    return -1.0 if math.floor(x) % 2 else 1.0


gamma_derivative = unary_rules("gamma", "GammaBackward0", gamma_exact)
factorial_derivative = unary_rules("factorial", "FactorialBackward0", factorial_exact)
loggamma_derivative = unary_rules("loggamma", "LoggammaBackward0", loggamma_exact)

rule(
    "gammasgn",
    "GammasgnBackward0",
    ("self",),
    forward=host_kernel(gammasgn_exact, 0),
    grads=(lambda c, g: A.zeros_like(g),),
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)


# ---- error declarations (reference/errors): how JAX computes them -------------------------------
# JAX: gamma = gammasgn(x)·exp(lgamma(x)), factorial = exp(lgamma(n + 1)) (0 for n < 0), loggamma =
# lgamma (nan for x <= 0), and their derivatives autodiff of those (digamma, polygamma): each one's
# error is its formula's, composed from lgamma's, exp's and polygamma's own (the exponential carries
# lgamma's absolute error into a relative one of Γ: |ln Γ(x)|·u, 1e2 u at x = 60).
from reference import errors as _E  # noqa: E402
from reference.autograd.dispatch import apply  # noqa: E402
from reference.ops.functions import pointwise as _P  # noqa: E402
from reference.ops.rules.registry import RULES  # noqa: E402


def _bell(x, order):
    """Γ^(order)/Γ as autodiff of exp(lgamma(x)) builds it: 1, ψ, ψ² + ψ', ψ³ + 3ψψ' + ψ''."""
    if order == 0:
        return 1
    psi = _P.digamma(x)
    if order == 1:
        return psi
    psi1 = _P.polygamma(1, x)
    if order == 2:
        return psi * psi + psi1
    return psi * psi * psi + 3 * psi * psi1 + _P.polygamma(2, x)


def _jax_gamma(x, order=0):
    sign = apply(RULES["gammasgn"], (x,), {})
    return sign * A.exp(_P.lgamma(x)) * _bell(x, order)


def _jax_factorial(x, order=0):
    return A.exp(_P.lgamma(x + 1)) * _bell(x + 1, order)


def _jax_loggamma(x, order=0):
    return _P.lgamma(x) if order == 0 else _P.digamma(x) if order == 1 else _P.polygamma(order - 1, x)


_SOURCE = "JAX's {} and its autodiff, composed from lgamma's, exp's and polygamma's errors"
for _name, _formula, _text in (
    ("gamma", _jax_gamma, "gammasgn(x)·exp(lgamma(x))"),
    ("factorial", _jax_factorial, "exp(lgamma(n + 1))"),
    ("loggamma", _jax_loggamma, "lgamma"),
):
    RULES[_name].error = _E.composite(_formula, _SOURCE.format(_text))
    RULES[f"{_name}_derivative"].error = _E.composite(times_multiplier(_formula, ("order",)), _SOURCE.format(_text), framework_orders(_formula, ("order",)))
