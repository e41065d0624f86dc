"""The Fresnel integrals S(x) = ∫_0^x sin(πt²/2) dt, C(x) = ∫_0^x cos(πt²/2) dt (``fresnel_sin``,
``fresnel_cos``: jax.scipy.special.fresnel's (S, C), tf.math.special.fresnel_sin/fresnel_cos) and
the sine and cosine integrals Si(x) = ∫_0^x sin t/t dt, Ci(x) = γ + ln x + ∫_0^x (cos t - 1)/t dt
(``sici_si``, ``sici_ci``: jax.scipy.special.sici's (Si, Ci)); PyTorch has none of them.

Part of the one derivative table (:mod:`reference.ops.rules`): each function and its
``<name>_derivative`` (param ``order``), every order an exact kernel (reference/ops/rules/_mp_unary.py):

* S, C: mpmath's fresnels/fresnelc at 40 digits plus those of x² (the phase πx²/2 is reduced in
  mpmath's arithmetic); |x| >= 1e20 gives ±1/2 (S, C = ±1/2 - O(1/(πx)), below a quarter of an
  ulp of 1/2 there). The derivatives: d^m e^{iπx²/2} = e^{iπx²/2} P_m(x), P_0 = 1, P_{k+1} = P_k' + iπx P_k (S^(m+1) its imaginary part, C^(m+1) its real part), with the
  phase reduced exactly: x² mod 4 in rational arithmetic (every float64 is a dyadic rational), so
  sin(πx²/2) is right at x = 1e300 where a float phase has no digit left.
* Si, Ci: mpmath's si/ci at 40 digits plus those of |x|. Si^(m+1) = d^m (sin x/x): for |x| < 1 the
  series Σ_n (-1)^n x^(2n)/(2n+1)! differentiated term by term (Leibniz' rule's terms ~ x^-(m+1)
  cancel to a finite value there); elsewhere Leibniz' rule over sin^(j) x = sin(x + jπ/2) and
  d^i x^-1 = (-1)^i i!/x^(i+1). Ci^(m+1) = d^m (cos x/x) by Leibniz' rule everywhere (its x^-(m+1)
  term dominates near 0: nothing cancels).

Conventions. Ci of a negative x is scipy's and JAX's real Ci: Re Ci(x) = Ci(|x|) (Ci(x) = Ci(-x)
+ iπ for x < 0), whose derivative is cos x/x on the whole line; Ci(-inf) is nan (scipy's and JAX's:
the value is iπ there). Special values (the limits): S(±inf) = C(±inf) = ±1/2, their derivatives nan
at ±inf (sin(πx²/2) has no limit); Si(±inf) = ±π/2, Ci(+inf) = 0 and every derivative of both 0 at
±inf (nan for Ci at -inf); Ci(±0) = -inf, Ci^(m+1)(±0) the sign of (-1)^m m!/x^(m+1); nan at nan.
"""

from __future__ import annotations

import math
from fractions import Fraction

from reference.ops.rules._framework_orders import framework_orders, times_multiplier
from reference.ops.rules._mp_unary import unary_rules
from reference.ops.rules._times import rounded, unrounded

#: |x| from which S and C round to ±1/2 (their distance 1/(π|x|) is below 2^-60 of 1/2)
_HALF_FROM = 1e20


def _digits(x):
    """The decimal digits of |x| above 1 (0 below)."""
    return int(math.log10(abs(x))) + 1 if abs(x) > 1 else 0


def _fresnel_derivative(mp, x, m, which):
    """d^m sin(πx²/2) (``which`` "sin") or cos(πx²/2) at float ``x``, through e^{iπx²/2} P_m(x)."""
    v = mp.mpf(x)
    poly = [mp.mpc(1)]  # coefficients of P_k, lowest power first
    for _ in range(m):
        deriv = [k * c for k, c in enumerate(poly)][1:] + [mp.mpc(0)] * 2
        shifted = [mp.mpc(0)] + [1j * mp.pi * c for c in poly] + [mp.mpc(0)]
        poly = [a + b for a, b in zip(deriv, shifted)]
    p = mp.fsum(c * v**k for k, c in enumerate(poly))
    t = Fraction(x) ** 2 % 4 / 2  # exact: e^{iπx²/2} = e^{iπt}, and cospi/sinpi are 0 at halves
    t = mp.mpf(t.numerator) / t.denominator
    value = mp.mpc(mp.cospi(t), mp.sinpi(t)) * p
    return value.imag if which == "sin" else value.real


def _fresnel_exact(which):
    def exact(x, order):
        if math.isnan(x):
            return math.nan
        if order == 0 and (math.isinf(x) or abs(x) >= _HALF_FROM):
            return math.copysign(0.5, x)
        if math.isinf(x):
            return math.nan
        from mpmath import mp

        with mp.workdps(40 + 2 * _digits(x) + 10 * order):
            if order == 0:
                return rounded((mp.fresnels if which == "sin" else mp.fresnelc)(mp.mpf(x)))
            return unrounded(_fresnel_derivative(mp, x, order - 1, which))

    exact.__name__ = f"fresnel_{which}_exact"
    exact.__doc__ = f"The order-th derivative of the Fresnel {which} integral, correctly rounded to float64."
    return exact


fresnel_sin_exact = _fresnel_exact("sin")
fresnel_cos_exact = _fresnel_exact("cos")
fresnel_sin_derivative = unary_rules("fresnel_sin", "FresnelSinBackward0", fresnel_sin_exact)
fresnel_cos_derivative = unary_rules("fresnel_cos", "FresnelCosBackward0", fresnel_cos_exact)


def _leibniz_over_x(mp, v, m, trig):
    """d^m (trig(x)/x) at mpf ``v`` (v != 0), trig^(j)(x) = trig(x + jπ/2)."""
    return mp.fsum(
        math.comb(m, j) * trig(v + j * mp.pi / 2) * (-1) ** (m - j) * math.factorial(m - j) / v ** (m - j + 1)
        for j in range(m + 1)
    )


def _sinc_series(mp, v, m):
    """d^m (sin x/x) at |v| < 1 from Σ_n (-1)^n x^(2n)/(2n+1)!, term by term."""
    total = mp.mpf(0)
    n = (m + 1) // 2  # the first term whose power 2n survives m derivatives
    while True:
        term = (-1) ** n * mp.ff(2 * n, m) * v ** (2 * n - m) / mp.factorial(2 * n + 1)
        total += term
        if abs(term) <= abs(total) * mp.eps or term == 0 and n > (m + 1) // 2:
            return total
        n += 1


def sici_si_exact(x, order):
    """Si^(order)(x), correctly rounded to float64."""
    if math.isnan(x):
        return math.nan
    if math.isinf(x):
        return math.copysign(math.pi / 2, x) if order == 0 else 0.0
    from mpmath import mp

    with mp.workdps(40 + _digits(x) + 10 * order):
        v = mp.mpf(x)
        if order == 0:
            return rounded(mp.si(v))
        if abs(x) < 1:
            return rounded(_sinc_series(mp, v, order - 1))
        return rounded(_leibniz_over_x(mp, v, order - 1, mp.sin))


def sici_ci_exact(x, order):
    """Ci^(order)(x) (Re Ci for x < 0: Ci(|x|)), correctly rounded to float64."""
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return 0.0
    m = order - 1
    if x == 0:  # the pole: ln|x| for the value, (-1)^m m!/x^(m+1) for the derivatives
        return -math.inf if order == 0 else (-1.0) ** m * math.copysign(1.0, x) ** (m + 1) * math.inf
    from mpmath import mp

    with mp.workdps(40 + _digits(x) + 10 * order):
        v = mp.mpf(x)
        if order == 0:
            return rounded(mp.ci(abs(v)))
        return unrounded(_leibniz_over_x(mp, v, m, mp.cos))


sici_si_derivative = unary_rules("sici_si", "SiciSiBackward0", sici_si_exact)
sici_ci_derivative = unary_rules("sici_ci", "SiciCiBackward0", sici_ci_exact)


# ---- error declarations (reference/errors): how the frameworks' kernels round ------------------
# The values: JAX's and TensorFlow's Cephes S and C, JAX's Cephes Si and Ci, measured against the
# exact kernels above (scripts/measure_special_integrals.py: 400 points x = ±10^U(-4, 2.5), float32
# and float64, seed 0) in the mixed sense (reference.errors.exact_elementwise): S 1.1, C 0.97 (both
# frameworks, float64), Si 0.998 (JAX float64), Ci 2.23 (JAX float32 at 3.35). Their derivatives are
# the frameworks' formulas, differentiated again by autodiff: TensorFlow's sin((π/2)·x²) and
# cos((π/2)·x²) (whose rounded x² leaves no digit of the phase past |x| ~ 1e8), JAX's exactly reduced
# phase (sincospisquaredhalf: within the same bound); JAX's Si' = sinc(x/π) and Ci' = cos x/x, whose
# second derivatives cos x/x - sin x/x² cancel near 0 (measured: 6.8e7 c-units at x = -1.1e-4).
from reference import errors as _E  # noqa: E402
from reference.ops import api as _A  # noqa: E402
from reference.ops.functions import pointwise as _P  # noqa: E402
from reference.ops.rules.registry import RULES  # noqa: E402


def _fresnel_formula(which):
    """d^order (sin or cos)((π/2)·x²) as the frameworks compute it (orders 1 to 3, by autodiff)."""

    def formula(x, order):
        phase = x * x * (math.pi / 2)
        s, c = _P.sin(phase), _P.cos(phase)
        if which == "cos":  # cos = sin shifted: d cos = -sin·(πx), so swap with a sign
            s, c = c, -s
        if order == 1:
            return s
        if order == 2:
            return c * x * math.pi
        return c * math.pi - s * x * x * (math.pi * math.pi)

    return formula


def _over_x(trig, co_trig, sign, via_pi=False):
    """d^(order-1) (trig x/x) by the quotient rule, as autodiff of trig(x)/x gives it (``trig``,
    ``co_trig``: names of reference.ops.functions.pointwise functions); trig' = sign·co_trig (sin' =
    cos, cos' = -sin). ``via_pi``: x enters as (x/π)·π, rounded twice (JAX's Si' = sinc(x/π))."""

    def formula(x, order):
        if via_pi:
            x = x / math.pi * math.pi
        f, co = getattr(_P, trig)(x), getattr(_P, co_trig)(x) * sign
        if order == 1:
            d = f / x
        elif order == 2:
            d = co / x - f / (x * x)
        else:
            d = -f / x - 2 * co / (x * x) + 2 * f / (x * x * x)
        if via_pi:
            # jnp.sinc is where(x == 0, 1, sin(πx)/(πx)) with its Maclaurin series as the derivatives
            # at 0: the first three derivatives of Si there are the exact constants 1, 0, -1/3 (sin x/x is 0/0)
            d = _A.where(_A.eq(x, 0.0), (1.0, 0.0, -1.0 / 3.0)[order - 1], d)
        return d

    return formula


for _name, _c, _worst, _formula in (
    ("fresnel_sin", 2.0, "1.1 (both frameworks float64)", _fresnel_formula("sin")),
    ("fresnel_cos", 1.0, "0.97 (both frameworks float64)", _fresnel_formula("cos")),
    ("sici_si", 1.0, "0.998 (JAX float64)", _over_x("sin", "cos", 1, via_pi=True)),
    ("sici_ci", 3.0, "2.23 (JAX float32)", _over_x("cos", "sin", -1)),
):
    RULES[_name].error = _E.exact_elementwise(_c, f"measured against mpmath (scripts/measure_special_integrals.py): {_worst}")
    RULES[f"{_name}_derivative"].error = _E.composite(
        times_multiplier(_formula, ("order",)), "the frameworks' derivative formula, differentiated by autodiff", framework_orders(_formula, ("order",))
    )
