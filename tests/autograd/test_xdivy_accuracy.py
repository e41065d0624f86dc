"""The reference's xdivy (reference/ops/rules/special_xdivy.py, tf.math.xdivy's definition: x/y, 0
where x == 0) against the mathematics: off x = 0 the value and every derivative the checks use
against mpmath's numerical differentiation of x/y at 200 digits, on a grid from the bulk to
float64's extremes (y^(j+1) overflowing and underflowing); every result within an ulp. Then the
definition's line x = 0 (the constant 0 in y: value and ∂_y^j zero whatever y, ∂_x = 1/y), the IEEE
continuation at y = ±0, and the reverse and forward modes reading the one primitive."""

from __future__ import annotations

import math

import pytest

import reference as T
from reference.ops.rules.special_xdivy import xdivy_exact

mpmath = pytest.importorskip("mpmath", reason="exact values")

ORDERS = [(1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (0, 3)]
POINTS = [(2.0, 3.0), (-0.75, 0.25), (1e-5, -1e5), (7.0, -1e-3), (1e300, 1e-3), (1e-300, 3e150), (3.0, 5e-324 * 3)]
_STEP = mpmath.mpf(10) ** -35


def _ulps(got, exact):
    exact = mpmath.mpf(exact)
    if abs(exact) > mpmath.mpf(1.7976931348623157e308) * (1 + mpmath.mpf(2.0**-53)):
        return 0.0 if got == math.copysign(math.inf, exact) else math.inf
    if abs(exact) < mpmath.mpf(2.0**-1075):
        return 0.0 if got == 0 else math.inf  # under half the least subnormal: rounds to 0
    scale = max(abs(exact), mpmath.mpf(2.0**-1022))
    return float(abs(mpmath.mpf(got) - exact) / scale) / 2.0**-52


@pytest.mark.parametrize("x, y", POINTS)
def test_value_and_derivatives_within_an_ulp_of_mpmath(x, y):
    with mpmath.workdps(200):
        mx, my = mpmath.mpf(x), mpmath.mpf(y)
        assert _ulps(xdivy_exact(x, y, 0, 0), mx / my) <= 0.5
        for d0, d1 in ORDERS:

            def in_y(v):
                return mpmath.diff(lambda u: u / v, mx, d0, h=abs(mx) * _STEP) if d0 else mx / v

            exact = mpmath.diff(in_y, my, d1, h=abs(my) * _STEP) if d1 else in_y(my)
            assert _ulps(xdivy_exact(x, y, d0, d1), exact) <= 1.0, (x, y, d0, d1)
        assert xdivy_exact(x, y, 2, 0) == 0 and xdivy_exact(x, y, 2, 1) == 0  # linear in x


@pytest.mark.parametrize("y", [2.0, -3.0, 0.0, -0.0, math.inf, math.nan])
def test_the_line_x_zero_is_the_constant_zero_in_y(y):
    for x in (0.0, -0.0):
        assert xdivy_exact(x, y, 0, 0) == 0 and not math.isnan(xdivy_exact(x, y, 0, 0))
        for j in (1, 2, 3):
            assert xdivy_exact(x, y, 0, j) == 0
    if y != 0 and not math.isnan(y):
        assert xdivy_exact(0.0, y, 1, 0) == 1 / y  # in x it is still x/y: TensorFlow's 0 is a departure
        assert xdivy_exact(0.0, y, 1, 1) == -1 / (y * y)


def test_at_a_zero_divisor_the_closed_forms_continue():
    """x/±0 = ±inf; ∂_x(x, ±0) = 1/±0 (the limit (xdivy(h, ±0) - 0)/h); ∂_y = -x/y², ∂_x² 0 (linear in x)."""
    assert xdivy_exact(-2.0, 0.0, 0, 0) == -math.inf and xdivy_exact(2.0, -0.0, 0, 0) == -math.inf
    assert xdivy_exact(0.0, 0.0, 1, 0) == math.inf and xdivy_exact(0.0, -0.0, 1, 0) == -math.inf
    assert xdivy_exact(-2.0, 0.0, 0, 1) == math.inf and xdivy_exact(2.0, -0.0, 0, 2) == -math.inf
    assert xdivy_exact(1.0, 0.0, 2, 0) == 0 and xdivy_exact(-1.0, -0.0, 2, 1) == 0  # linear in x, as div
    assert math.isnan(xdivy_exact(1.0, math.nan, 1, 0))
    assert math.isnan(xdivy_exact(math.inf, math.inf, 0, 0)) and xdivy_exact(math.inf, 2.0, 0, 0) == math.inf


def test_autograd_reads_the_primitive():
    x = T.tensor([0.0, 1.5, -2.0], dtype=T.float64, requires_grad=True)
    y = T.tensor([4.0, -0.5, 0.25], dtype=T.float64, requires_grad=True)
    gx, gy = T.autograd.grad(T.special.xdivy(x, y).sum(), (x, y), create_graph=True)
    assert gx.tolist() == [0.25, -2.0, 4.0] and gy.tolist() == [0.0, -6.0, 32.0]
    (gyy,) = T.autograd.grad(gy.sum(), (y,))
    assert gyy.tolist() == [0.0, -24.0, -256.0]  # 2x/y³
    _, tangent = T.func.jvp(lambda u: T.special.xdivy(u, y.detach()), (x.detach(),), (T.ones(3, dtype=T.float64),))
    assert tangent.tolist() == [0.25, -2.0, 4.0]
