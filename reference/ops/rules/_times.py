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
number (its exponent unbounded) as ``exact``; :func:`times` multiplies a plain float in float64 (one
rounding more, the speed of the host loop) and an ``Unrounded`` one's ``exact`` in mpmath (one
rounding). Every other reader of the kernel sees the correctly rounded float64 it always did. The
multiplier comes in two factors (the derivative primitive's ``outer`` and ``inner``: the error
declaration needs them apart, reference/ops/rules/_mp_unary.py ``framework_orders``); where their
float64 product leaves the normal range, the product is formed in mpmath too.

A leaf module: it imports nothing from the project.
"""

from __future__ import annotations

import math
import sys

#: the smallest positive normal float64; below it a float64 keeps fewer than 53 bits
_TINY = sys.float_info.min
#: digits of the product in mpmath: the kernels' values carry more, the product is rounded once
_DPS = 40


class Unrounded(float):
    """The float64 rounding (±inf, 0 or a subnormal) of an mpmath number ``exact`` outside float64's
    normal range, which it carries for :func:`times`."""

    exact: object


def unrounded(value):
    """An mpmath ``value`` as a kernel returns it: its float64 rounding, an :class:`Unrounded` one
    carrying ``value`` where it overflows or underflows float64 (a finite nonzero number)."""
    rounded = float(value)
    if value == 0 or value != value or abs(value) == math.inf or (math.isfinite(rounded) and abs(rounded) >= _TINY):
        return rounded
    out = Unrounded(rounded)
    out.exact = value
    return out


def times(value, *multipliers):
    """``value`` times every multiplier, as a float64 rounded once where it matters: ``value`` an
    exact kernel's result (a float, or an :class:`Unrounded` one whose product is formed from its
    mpmath value), the multipliers float64 (the derivative primitive's two: the product of the
    earlier passes' cotangents or tangents and the newest one). In float64 where the multipliers'
    product stays in the normal range and ``value`` is a plain float (one rounding more: the speed
    of the host loop), in mpmath otherwise (one rounding)."""
    exact = getattr(value, "exact", None)
    w = 1.0
    for m in multipliers:
        w *= m
    # the multipliers' float64 product left the normal range although none is 0, inf or nan
    out_of_range = not _TINY <= abs(w) < math.inf and all(m != 0 and math.isfinite(m) for m in multipliers)
    if exact is None and not out_of_range:
        return w * value
    if exact is None and (value == 0 or not math.isfinite(value)):
        # an exact 0, an infinity or nan times finite nonzero numbers is itself (signed): one factor
        # at a time, since the product w that left the range would make it 0·inf = nan
        for m in multipliers:
            value *= m
        return value
    from mpmath import mp

    with mp.workdps(_DPS):
        product = mp.mpf(value) if exact is None else exact
        for m in multipliers:
            product *= mp.mpf(m)
        return float(product)
