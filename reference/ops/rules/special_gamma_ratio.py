"""Ratios of gamma functions: the beta function B(a, b) = Γ(a)Γ(b)/Γ(a + b) (``beta``:
jax.scipy.special.beta) and the Pochhammer symbol (z)_m = Γ(z + m)/Γ(z) (``poch``:
jax.scipy.special.poch). PyTorch and TensorFlow have neither.

Part of the one derivative table (:mod:`reference.ops.rules`). Both arguments of each are
differentiated, every order one exact primitive ``<name>_derivative`` (params ``d0``, ``d1``: the
orders in the first and second argument, d0 + d1 >= 1; its VJP is the next order).

Each function is f = V = ±e^L with L a sum of ±ln|Γ| (beta: L = lnΓ(a) + lnΓ(b) - lnΓ(a + b); poch:
L = lnΓ(z + m) - lnΓ(z)), so every derivative is V times a polynomial in the partials of L (Faà di
Bruno's formula, :func:`_exp_polynomial`), and the partials of L are polygamma differences:

* beta: ∂_a^i ∂_b^j L = [j = 0] ψ^(i-1)(a) + [i = 0] ψ^(j-1)(b) - ψ^(i+j-1)(a + b);
* poch: ∂_z^i ∂_m^j L = ψ^(i+j-1)(z + m) - [j = 0] ψ^(i-1)(z).

ψ(a) - ψ(a + b) ~ -b/a cancels by the digits of a/b (ψ(z + m) - ψ(z) by those of z/m), and the
polynomial's terms alternate in sign: mpmath works at 40 digits plus those of the larger argument,
plus those of the ratio, plus 10 per order, and the result is rounded once.

Where the polynomial's factors are infinite (a pole of Γ inside while V is finite: B(a, b) at a +
b a pole of Γ is 0 and its derivatives Γ(a)Γ(b)·(1/Γ)^(n)(a + b), finite; (z)_m at z a pole is 0,
its z-derivatives Γ(z + m)·(1/Γ)^(n)(z)) the derivatives are those of the entire function 1/Γ
times Γ's, by mpmath's differentiation at the working precision (an analytic function at an
ordinary point: exact to it).

Special values (the limits where they exist, nan where the limit depends on the direction; the
signed zeros of C99's tgamma(±0) = ±inf): nan at nan. beta: at a pole of Γ(a) or Γ(b) (a
nonpositive integer) where a + b is not one B has a pole whose sign flips across it: ±inf at a
signed zero (B(±0, b) = ±inf), nan at a negative integer (C99's tgamma there), nan where a + b is
a pole too; B = 0 where a + b alone is a pole; B(inf, b) = 0 with every derivative for b > 0, B(inf, b)
= ±inf (the sign of Γ(b)) for b < 0, nan for b = ±inf, nan for a = -inf (poles accumulate).
poch: (z)_0 = 1 for every z but nan (JAX's and scipy's where), the derivatives at m = 0 those of
the function; nan at a pole of Γ(z + m) where z is not one (its sign flips across, and z + m is
never -0 there: JAX and scipy say inf); 0 where z alone is a pole; nan where both are (the limit
depends on the direction, as JAX's; scipy gives the rising factorial of an integer m); at z = inf
the limits of z^m: inf for m > 0, 0 for m < 0, the derivatives nan (they diverge or vanish with m);
nan at m = ±inf and at z = -inf. The derivatives at every pole of Γ(z + m) are nan.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from reference.autograd.dispatch import apply
from reference.backend import namespace_of, to_numpy
from reference.ops import api as A
from reference.ops.functions import pointwise as P
from reference.ops.rule import AUTO_ELEMENT_WISE, BATCH_ELEMENTWISE
from reference.ops.rules._framework_orders import framework_orders, times_multiplier
from reference.ops.rules._sign_cache import sign_aware_cache
from reference.ops.rules._times import rounded, times, unrounded
from reference.ops.rules.registry import RULES, rule
from reference.ops.rules.special_beta import _host_kernel

#: mpmath's working digits before those of the arguments, their ratio and the order are added
_DPS = 40


@functools.lru_cache(maxsize=64)
def _exp_polynomial(d0, d1):
    """∂_0^d0 ∂_1^d1 e^L = e^L · Σ c · Π_k L_(p_k, q_k): {monomial: c}, a monomial the sorted tuple
    of the orders (p, q) of L's partials it multiplies (Faà di Bruno's formula, by the product rule:
    ∂(e^L Π) = e^L (∂L · Π + ∂Π))."""
    poly = {(): 1}
    for step in [(1, 0)] * d0 + [(0, 1)] * d1:
        new = {}

        def add(mono, c, new=new):
            key = tuple(sorted(mono))
            new[key] = new.get(key, 0) + c

        for mono, c in poly.items():
            add(mono + (step,), c)
            for k, (p, q) in enumerate(mono):
                add(mono[:k] + ((p + step[0], q + step[1]),) + mono[k + 1 :], c)
        poly = new
    return poly


def _evaluate(poly, partial):
    """Σ c · Π partial(p, q) over the polynomial's monomials (``partial`` numbers or Tensors)."""
    total = None
    for mono, c in poly.items():
        term = c
        for p, q in mono:
            term = term * partial(p, q)
        total = term if total is None else total + term
    return total


def _is_pole(v):
    """A pole of Γ: a finite nonpositive integer (either signed zero)."""
    return math.isfinite(v) and v <= 0 and v == math.floor(v)


def _sum_is_pole(u, v):
    """Whether the exact sum of the floats u + v is a pole of Γ (the float sum may round onto one)."""
    if not (math.isfinite(u) and math.isfinite(v)):
        return False
    s = Fraction(u) + Fraction(v)
    return s <= 0 and s.denominator == 1


def _digits(u, v, order):
    """Working digits: 40, those of the larger argument, of the ratio (the cancellation of the
    polygamma difference), and 10 per order."""
    big = math.log10(max(abs(u), abs(v), 1.0))
    small = min((abs(t) for t in (u, v) if t != 0), default=1.0)
    ratio = max(0.0, big - math.log10(small)) if order else 0.0
    return _DPS + int(big) + int(ratio) + 10 * order


# ---- the beta function --------------------------------------------------------------------------


def _beta_special(a, b, d0, d1):
    """B's value or derivative where the Faà di Bruno evaluation is not asked, or None."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if math.isinf(a) or math.isinf(b):
        if math.isinf(a) and math.isinf(b):
            return math.nan
        big, other = (a, b) if math.isinf(a) else (b, a)
        if big < 0 or _is_pole(other):
            return math.nan
        if other > 0:
            return 0.0  # B ~ Γ(other) big^-other -> 0, with every derivative
        if d0 + d1:
            return math.nan
        from mpmath import mp

        return math.copysign(math.inf, float(mp.gamma(other)))
    pole_a, pole_b = _is_pole(a), _is_pole(b)
    if pole_a or pole_b:
        if d0 + d1 or (pole_a and pole_b) or _sum_is_pole(a, b):
            return math.nan
        zero = a if pole_a else b
        # B(±0, b) = Γ(±0) = ±inf (C99); at a negative integer the sign flips across: nan
        return math.copysign(math.inf, zero) if zero == 0 else math.nan
    return None


def _beta_partial(mp, a, b):
    s = a + b

    def partial(p, q):
        n = p + q - 1
        total = -mp.polygamma(n, s)
        if q == 0:
            total += mp.polygamma(n, a)
        if p == 0:
            total += mp.polygamma(n, b)
        return total

    return partial


@sign_aware_cache
def beta_exact(a, b, d0, d1):
    """∂_a^d0 ∂_b^d1 B(a, b) at the floats (a, b), correctly rounded to float64."""
    special = _beta_special(a, b, d0, d1)
    if special is not None:
        return special
    from mpmath import mp

    with mp.workdps(_digits(a, b, d0 + d1)):
        ma, mb = mp.mpf(a), mp.mpf(b)
        if _sum_is_pole(a, b):  # B = Γ(a)Γ(b)/Γ(a + b) = 0: differentiate Γ(a)Γ(b)·(1/Γ)(a + b), entire in a + b
            if d0 + d1 == 0:
                return 0.0
            return unrounded(mp.diff(lambda x, y: mp.gamma(x) * mp.gamma(y) * mp.rgamma(x + y), (ma, mb), (d0, d1)))
        value = mp.beta(ma, mb)
        if d0 + d1 == 0:
            return rounded(value)
        return unrounded(value * _evaluate(_exp_polynomial(d0, d1), _beta_partial(mp, ma, mb)))


# ---- the Pochhammer symbol ----------------------------------------------------------------------


def _poch_special(z, m, d0, d1):
    """(z)_m's value or derivative where the Faà di Bruno evaluation is not asked, or None."""
    if math.isnan(z) or math.isnan(m):
        return math.nan
    if m == 0 and d0 + d1 == 0:
        return 1.0  # Γ(z)/Γ(z) (JAX's and scipy's where m == 0, every z but nan)
    if math.isinf(z) or math.isinf(m):
        if d0 + d1 or math.isinf(m):
            return math.nan  # (z)_inf: Γ(inf)/Γ(z) or 1/Γ(z)·Γ(-inf), no limit in general
        if z < 0:
            return math.nan  # poles accumulate at -inf
        return math.inf if m > 0 else 0.0  # (z)_m ~ z^m
    pole_z, pole_s = _is_pole(z), _sum_is_pole(z, m)
    if pole_z and pole_s:
        return math.nan  # the limit depends on the direction (JAX's nan; scipy: the rising factorial)
    if pole_s:  # Γ(z + m) has a pole whose sign flips across (z + m = +0 here: m != 0, z != 0)
        return math.nan
    return None


def _poch_partial(mp, z, m):
    s = z + m

    def partial(p, q):
        n = p + q - 1
        total = mp.polygamma(n, s)
        if q == 0:
            total -= mp.polygamma(n, z)
        return total

    return partial


@sign_aware_cache
def poch_exact(z, m, d0, d1):
    """∂_z^d0 ∂_m^d1 (z)_m at the floats (z, m), correctly rounded to float64."""
    special = _poch_special(z, m, d0, d1)
    if special is not None:
        return special
    if d1 == 0 and 0 <= m < d0 and m == math.floor(m):
        return 0.0  # (z)_m of an integer m >= 0 is a polynomial of degree m in z (its terms cancel exactly)
    from mpmath import mp

    with mp.workdps(_digits(z, m, d0 + d1)):
        mz, mm = mp.mpf(z), mp.mpf(m)
        if _is_pole(z):  # (z)_m = Γ(z + m)·(1/Γ)(z) = 0: differentiate the product, 1/Γ entire
            if d0 + d1 == 0:
                return 0.0
            return unrounded(mp.diff(lambda x, y: mp.gamma(x + y) * mp.rgamma(x), (mz, mm), (d0, d1)))
        value = mp.gamma(mz + mm) * mp.rgamma(mz)
        if d0 + d1 == 0:
            return rounded(value)
        return unrounded(value * _evaluate(_exp_polynomial(d0, d1), _poch_partial(mp, mz, mm)))


# ---- the rules ----------------------------------------------------------------------------------


def _times_kernel(exact, d0, d1):
    """The kernel of ``outer·inner·exact(u, v, d0, d1)`` over the broadcast (u, v, outer, inner),
    each element's product rounded once (:func:`reference.ops.rules._times.times`), in the
    namespace and dtype of ``v``."""

    def kernel(u, v, outer, inner):
        arrays = np.broadcast_arrays(*(np.asarray(to_numpy(t), dtype=np.float64) for t in (u, v, outer, inner)))
        out = np.empty(arrays[0].shape, dtype=np.float64)
        for idx in np.ndindex(out.shape):
            value = exact(float(arrays[0][idx]), float(arrays[1][idx]), d0, d1)
            out[idx] = times(value, float(arrays[2][idx]), float(arrays[3][idx]))
        with np.errstate(all="ignore"):
            return namespace_of(v).asarray(out.astype(v.dtype))

    return kernel


def binary_rules(name, exact, inputs):
    """Declare ``name`` and ``<name>_derivative`` over ``exact(u, v, d0, d1)`` (a float, or an
    mpmath number where the derivative leaves float64's range); returns ``derivative(u, v, d0, d1,
    multiplier=None)`` at Tensors.

    The derivative primitive takes its multiplier in two factors: ``<name>_derivative(u, v, outer,
    inner; d0, d1)`` is outer·inner·∂_u^d0 ∂_v^d1 f(u, v), one rounding
    (:mod:`reference.ops.rules._times`), so a VJP's or JVP's term is never a derivative that
    overflowed before its cotangent or tangent scaled it; ``inner`` is the newest pass's cotangent
    or tangent, ``outer`` the product of the earlier passes' (the error declaration needs them
    apart: :mod:`reference.ops.rules._framework_orders`, its params ``("d0", "d1")``). Its
    derivative in u is the primitive at (d0 + 1, d1) with the factors (outer·inner, g) (in v alike),
    in outer the primitive at (d0, d1) with (inner, g), in inner with (outer, g)."""
    derivative_name = f"{name}_derivative"
    first, second = inputs

    def derivative(u, v, d0, d1, multiplier=None):
        w = A.ones_like(v) if multiplier is None else multiplier
        return apply(RULES[derivative_name], (u, v, A.ones_like(w), w), {"d0": d0, "d1": d1})

    def at(c, outer, inner, d0, d1):
        return apply(RULES[derivative_name], (getattr(c, first), getattr(c, second), outer, inner), {"d0": d0, "d1": d1})

    rule(
        derivative_name,
        "".join(p.capitalize() for p in derivative_name.split("_")) + "Backward0",
        (first, second, "outer", "inner"),  # d0, d1: the orders in the two arguments, d0 + d1 >= 1
        forward=lambda u, v, outer, inner, d0, d1: _times_kernel(exact, d0, d1)(u, v, outer, inner),
        grads=(
            lambda c, g: at(c, c.outer * c.inner, g, c.d0 + 1, c.d1),
            lambda c, g: at(c, c.outer * c.inner, g, c.d0, c.d1 + 1),
            lambda c, g: at(c, c.inner, g, c.d0, c.d1),
            lambda c, g: at(c, c.outer, g, c.d0, c.d1),
        ),
        saves={first: (0, 1, 2, 3), second: (0, 1, 2, 3), "outer": (0, 1, 3), "inner": (0, 1, 2)},
        jvp=AUTO_ELEMENT_WISE,
        batch=BATCH_ELEMENTWISE,
    )
    rule(
        name,
        "".join(p.capitalize() for p in name.split("_")) + "Backward0",  # (no PyTorch node: jax.scipy.special's function)
        inputs,
        forward=_host_kernel(exact, 0, 0),
        grads=(
            lambda c, g: derivative(getattr(c, first), getattr(c, second), 1, 0, multiplier=g),
            lambda c, g: derivative(getattr(c, first), getattr(c, second), 0, 1, multiplier=g),
        ),
        saves={first: (0, 1), second: (0, 1)},
        jvp=AUTO_ELEMENT_WISE,
        batch=BATCH_ELEMENTWISE,
    )
    return derivative


beta_derivative = binary_rules("beta", beta_exact, ("a", "b"))
poch_derivative = binary_rules("poch", poch_exact, ("z", "m"))


# ---- error declarations (reference/errors): how the frameworks' kernels round ------------------
# JAX's beta is gammasgn(a)·gammasgn(b)·gammasgn(a + b)·exp(betaln(a, b)), its poch gamma(z + m)/
# gamma(z) (gamma = gammasgn·exp(lgamma)); their derivatives are autodiff of those formulas:
# V·(polygamma differences). The declarations are those decompositions into table primitives: the
# error of exp of an lgamma sum (|V|·u·(|lnΓ(a)| + |lnΓ(b)| + |lnΓ(a + b)|): the exponent's rounding
# is a relative error of V), and of V times Faà di Bruno's polynomial in polygammas.
from reference import errors as _E  # noqa: E402


def _psi(n, x):
    return P.digamma(x) if n == 0 else P.polygamma(n, x)


def _beta_formula(a, b, d0=0, d1=0):
    value = A.exp(P.lgamma(a) + P.lgamma(b) - P.lgamma(a + b))
    if d0 + d1 == 0:
        return value

    def partial(p, q):
        total = -_psi(p + q - 1, a + b)
        if q == 0:
            total = total + _psi(p - 1, a)
        if p == 0:
            total = total + _psi(q - 1, b)
        return total

    return value * _evaluate(_exp_polynomial(d0, d1), partial)


def _poch_formula(z, m, d0=0, d1=0):
    value = A.exp(P.lgamma(z + m) - P.lgamma(z))
    if d0 + d1 == 0:
        return value

    def partial(p, q):
        total = _psi(p + q - 1, z + m)
        return total - _psi(p - 1, z) if q == 0 else total

    return value * _evaluate(_exp_polynomial(d0, d1), partial)


RULES["beta"].error = _E.composite(_beta_formula, "exp(lgamma(a) + lgamma(b) - lgamma(a + b)) (JAX's beta)")
RULES["beta_derivative"].error = _E.composite(
    times_multiplier(_beta_formula, ("d0", "d1")), "B·(Faà di Bruno polynomial in polygamma(n, a) - polygamma(n, a + b)): autodiff of JAX's beta",
    framework_orders(_beta_formula, ("d0", "d1")),
)
RULES["poch"].error = _E.composite(_poch_formula, "exp(lgamma(z + m) - lgamma(z)) (JAX's gamma(z + m)/gamma(z))")
RULES["poch_derivative"].error = _E.composite(
    times_multiplier(_poch_formula, ("d0", "d1")), "(z)_m·(Faà di Bruno polynomial in polygamma(n, z + m) - polygamma(n, z)): autodiff of JAX's poch",
    framework_orders(_poch_formula, ("d0", "d1")),
)
