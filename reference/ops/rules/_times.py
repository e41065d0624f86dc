"""``w·f⁽ⁿ⁾(x)`` rounded once: the product of an exact kernel's derivative with its multiplier (the
cotangent of a VJP, the tangent of a JVP, their product at second order).

A derivative can leave float64's range where its product with the multiplier does not (issue 38):
squareplus's ∂_b² = -1/(8s³) at x = -5.6e-309, b = 8.2e-308 (s = 2.9e-154) is -5.3e459, and with
the tangent 2.5e-308 the term of the directional second derivative is -1.3e152; rounding the
derivative first says -inf. Beta's ∂_a² ~ 2/a³ at a = 1e-110, xdivy's ∂_y² = 2x/y³ at y = 1e-110
and kl_div's ∂_y² = x/y² at y = 1e-160 overflow alike, and a derivative that underflows (squareplus's
∂_x² = b/(2s³) at b = 1e-200, x = 1e110: 5e-531) is 0 where w = 1e300 gives 5e-231.

An exact kernel therefore returns a derivative through :func:`unrounded`: its float64 rounding,
which where the value overflows or underflows is an :class:`Unrounded` float carrying the mpmath
number (its exponent unbounded) as ``exact``; :func:`times` multiplies a plain float in float64 where
the product stays in the normal range (one rounding more, the speed of the host loop), and otherwise
(an ``Unrounded`` one, or a product that leaves the normal range) forms the product exactly, in
rationals, and rounds it once. Every other reader of the kernel sees the correctly rounded float64
it always did. The multiplier comes in two factors (the derivative primitive's ``outer`` and
``inner``: the error declaration needs them apart, reference/ops/rules/_framework_orders.py); where
their float64 product leaves the normal range, the product is formed exactly too.

Below the normal range the rounding must be one: a float64 product (or mpmath's conversion to float,
which rounds to 53 bits and then to the subnormal grid) rounds twice, and the second can land on a
tie the exact product is not on: 2^-523 · (1 + 2^-30)·2^-523 · (1 + 2^-30) is (2^29 + 1 + 2^-31)·2^-1075,
above the midpoint between two subnormals; the multipliers' product rounded first makes it the
midpoint itself, and ties to even round it down, one subnormal ulp off. At the top of the range
alike: a product just below (2 - 2^-53)·2^1023, where rounding goes to the largest float, becomes
inf when the multipliers' product was rounded up.

A leaf module: it imports nothing from the project.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

#: the smallest positive normal float64; below it a float64 keeps fewer than 53 bits
_TINY = sys.float_info.min


class Unrounded(float):
    """The float64 rounding (±inf, 0 or a subnormal) of an mpmath number ``exact`` outside float64's
    normal range, which it carries for :func:`times`."""

    exact: object


def rounded(value):
    """An mpmath number (or a float) as the float64 nearest it, rounded once: ``float()`` of an
    mpmath number rounds to 53 bits and then, below the normal range, again to the subnormal grid
    (2^-1074·(3/2 - 2^-60) becomes the tie 3/2·2^-1074 and then 2^-1073, where its nearest float is
    2^-1074); there the exact rational is rounded (:func:`_nearest`)."""
    r = float(value)
    if r != r or value == 0 or abs(r) >= _TINY:  # nan, zero, normal or overflowed: one rounding
        return r
    far = _far_outside(value)
    return far if far is not None else _nearest(_rational(value))


def unrounded(value):
    """An mpmath ``value`` as a kernel returns it: its float64 rounding, an :class:`Unrounded` one
    carrying ``value`` where it overflows or underflows float64 (a finite nonzero number), rounded
    once (:func:`_nearest`: mpmath's own conversion rounds a subnormal twice)."""
    nearest = float(value)
    if value == 0 or value != value or abs(value) == math.inf or (math.isfinite(nearest) and abs(nearest) >= _TINY):
        return nearest
    far = _far_outside(value)
    out = Unrounded(far if far is not None else _nearest(_rational(value)))
    out.exact = value
    return out


def _far_outside(number, scale=0):
    """±0.0 or ±inf where the mpmath ``number`` times 2^``scale`` lies below 2^-1076 (it rounds to
    a signed 0) or at or past 2^1100 (to inf), else None: its rounding without an exact rational
    (ζ(1e300, 2) is 2^-1e300)."""
    if isinstance(number, float):
        return None
    sign, man, exp, bc = number._mpf_
    if not man:
        return None
    top = exp + bc + scale  # |number|·2^scale < 2^top <= 2·|number|·2^scale
    if top <= -1076:
        return -0.0 if sign else 0.0
    if top > 1100:
        return -math.inf if sign else math.inf
    return None


def times(value, *multipliers):
    """``value`` times every multiplier, as a float64 rounded once where it matters: ``value`` an
    exact kernel's result (a float, or an :class:`Unrounded` one whose product is formed from its
    mpmath value), the multipliers float64 (the derivative primitive's two: the product of the
    earlier passes' cotangents or tangents and the newest one). In float64 where the multipliers'
    product and the result stay in the normal range and ``value`` is a plain float (one rounding
    more: the speed of the host loop), exactly and rounded once otherwise."""
    exact = getattr(value, "exact", None)
    w = 1.0
    for m in multipliers:
        w *= m
    if exact is None:
        product = w * value
        if _TINY <= abs(w) < math.inf and _TINY <= abs(product) < math.inf:
            return product
    finite_nonzero = all(m != 0 and math.isfinite(m) for m in multipliers)
    if exact is None:
        if not finite_nonzero:
            return product  # a multiplier 0, inf or nan: IEEE's product
        if value == 0 or not math.isfinite(value):
            # an exact 0, an infinity or nan times finite nonzero numbers is itself (signed): one factor
            # at a time, since the product w that left the range would make it 0·inf = nan
            for m in multipliers:
                value *= m
            return value
        exact = value
    elif not finite_nonzero:
        # a finite nonzero number times multipliers among which a 0, an inf or a nan: w's sign
        # and kind (0 where a multiplier is 0 and none infinite, as mpmath's product said)
        return 0.0 if w == 0 else math.copysign(1.0, value) * w
    # (the multipliers are finite and nonzero here: their binary exponents bound the product's)
    far = _far_outside(exact, sum(math.frexp(m)[1] for m in multipliers))
    if far is not None:
        negative = sum(m < 0 for m in multipliers) % 2
        return -far if negative else far
    product = _rational(exact)
    for m in multipliers:
        product *= Fraction(m)
    return _nearest(product)


def _rational(number):
    """A finite float or mpmath number as the exact rational it is (:func:`_far_outside` first: an
    exponent of 1e300 would make a rational of 1e300 bits)."""
    if isinstance(number, float):
        return Fraction(number)
    sign, man, exp, _ = number._mpf_  # an mpmath mpf: (-1)^sign·man·2^exp (man_exp drops the sign)
    return (-1) ** sign * Fraction(man) * Fraction(2) ** exp


def _nearest(q):
    """The float64 nearest the rational ``q`` (ties to even; ±inf beyond the largest float's
    rounding range): Python's integer division rounds correctly, subnormals included."""
    try:
        return q.numerator / q.denominator
    except OverflowError:
        return math.inf if q > 0 else -math.inf
