"""The reference's rel_entr and kl_div (reference/ops/rules/special_entropy.py, scipy's definitions)
against the mathematics: inside the domain the values and every derivative the checks use and one
above against mpmath's numerical differentiation of x ln(x/y) (- x + y) at 60 digits, on a grid with
x next to y (kl_div ~ (x - y)²/2y: a float64 formula loses every digit), ratios near the ends of
float64's range and subnormals; every result within an ulp. Then scipy's edge values and the
declared one-sided limits at x = 0, and the reverse and forward modes reading the one primitive."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special

import reference as T
from reference.ops.rules.special_entropy import (
    kl_div_derivative,
    kl_div_exact,
    rel_entr_derivative,
    rel_entr_exact,
)

mpmath = pytest.importorskip("mpmath", reason="exact values")

ORDERS = [(1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (2, 1), (3, 0), (1, 2)]
#: mixed partials with i >= 2 and j >= 1: x ln(x/y) = x ln x - x ln y, identically 0
ZERO_ORDERS = {(2, 1)}
#: the bulk, x next to y (kl_div's cancellation), and the ends of float64's range
BULK = [(2.0, 3.0), (1.0, 1.0 + 2.0**-52), (1e10, 1e10 * (1 + 2.0**-40)), (0.5, 0.5), (0.75, 0.25), (1e-5, 1e5)]
EXTREMES = [(1e-300, 1e300), (1e300, 1e-300), (5e-324, 1.0), (3.0, 5e-324)]
POINTS = BULK + EXTREMES


_STEP = mpmath.mpf(10) ** -35


def _ulps(got, exact):
    exact = mpmath.mpf(exact)
    if abs(exact) > mpmath.mpf(np.finfo(np.float64).max) * (1 + mpmath.mpf(2.0**-53)):
        return 0.0 if got == math.copysign(math.inf, exact) else math.inf  # past the largest float: ±inf
    scale = max(abs(exact), mpmath.mpf(2.0**-1022))  # a subnormal's ulp is 2^-1074 = 2^-1022 · 2^-52
    return float(abs(mpmath.mpf(got) - exact) / scale) / 2.0**-52


def _f(kl):
    def f(u, v):
        value = u * mpmath.log(u / v)
        return value - u + v if kl else value

    return f


@pytest.mark.parametrize("x, y", POINTS)
@pytest.mark.parametrize("kl", [False, True])
def test_values_within_an_ulp_of_mpmath(x, y, kl):
    with mpmath.workdps(60):
        exact = _f(kl)(mpmath.mpf(x), mpmath.mpf(y))
    assert _ulps((kl_div_exact if kl else rel_entr_exact)(x, y, 0, 0), exact) <= 0.5


@pytest.mark.parametrize("x, y", BULK)
@pytest.mark.parametrize("kl", [False, True])
def test_derivatives_within_an_ulp_of_mpmath(x, y, kl):
    """Against mpmath's central differences with a step of 1e-35 times the argument differentiated
    (truncation 1e-70 relative), the partial in x nested in the one in y, at 200 digits."""
    exact_fn, f = (kl_div_exact if kl else rel_entr_exact), _f(kl)
    with mpmath.workdps(200):
        mx, my = mpmath.mpf(x), mpmath.mpf(y)
        for d0, d1 in ORDERS:
            got = exact_fn(x, y, d0, d1)
            if (d0, d1) in ZERO_ORDERS:
                assert got == 0, (x, y, d0, d1)
                continue

            def in_y(v):
                return mpmath.diff(lambda u: f(u, v), mx, d0, h=mx * _STEP) if d0 else f(mx, v)

            exact = mpmath.diff(in_y, my, d1, h=my * _STEP) if d1 else in_y(my)
            if abs(exact) < mpmath.mpf(10) ** -60:  # an exact zero (kl_div's ∂_x = ln(x/y) at x = y)
                assert got == 0, (x, y, d0, d1, got)
            else:
                assert _ulps(got, exact) <= 1.0, (x, y, d0, d1, got, exact)


@pytest.mark.parametrize("x, y", EXTREMES)
def test_derivatives_at_the_ends_of_the_range(x, y):
    """Where a step relative to the argument leaves mpmath's differences no digits: the first and
    second partials against their closed forms at 200 digits, overflowing to ±inf past float64's range."""
    with mpmath.workdps(200):
        mx, my = mpmath.mpf(x), mpmath.mpf(y)
        log_ratio = mpmath.log(mx) - mpmath.log(my)
        closed = {(1, 0): log_ratio + 1, (0, 1): -mx / my, (2, 0): 1 / mx, (1, 1): -1 / my, (0, 2): mx / my**2}
        for (d0, d1), exact in closed.items():
            assert _ulps(rel_entr_exact(x, y, d0, d1), exact) <= 1.0, (x, y, d0, d1)
        assert _ulps(kl_div_exact(x, y, 1, 0), log_ratio) <= 1.0
        assert _ulps(kl_div_exact(x, y, 0, 1), 1 - mx / my) <= 1.0


def test_scipy_edge_values_and_one_sided_limits():
    nan, inf = math.nan, math.inf
    x = np.array([0.0, 0.0, 0.0, -1.0, 1.0, 1.0, inf, 1.0, 0.0, nan])
    y = np.array([2.0, 0.0, inf, 1.0, 0.0, -1.0, 1.0, inf, -1.0, 1.0])
    tx, ty = T.tensor(x, dtype=T.float64), T.tensor(y, dtype=T.float64)
    # scipy's values where it defines them by its cases; at an infinite argument the limits
    # (scipy's kl_div(1, inf) is nan from inf - inf: the limit is inf)
    np.testing.assert_array_equal(T.special.rel_entr(tx, ty).numpy(), [0, 0, 0, inf, inf, inf, inf, -inf, inf, nan])
    np.testing.assert_array_equal(T.special.rel_entr(tx, ty).numpy(), scipy.special.rel_entr(x, y))
    np.testing.assert_array_equal(T.special.kl_div(tx, ty).numpy(), [2, 0, inf, inf, inf, inf, inf, inf, inf, nan])
    # at x = 0 < y the limits x -> 0+: ∂_x = ln(x/y) + 1 -> -inf, ∂_y = -x/y -> 0 (kl_div: 1), ∂_x² -> inf
    assert rel_entr_derivative(tx[:1], ty[:1], 1, 0).item() == -inf
    assert rel_entr_derivative(tx[:1], ty[:1], 0, 1).item() == 0.0
    assert kl_div_derivative(tx[:1], ty[:1], 0, 1).item() == 1.0
    assert rel_entr_derivative(tx[:1], ty[:1], 2, 0).item() == inf
    assert rel_entr_derivative(tx[:1], ty[:1], 1, 1).item() == -0.5
    # outside the domain and at x = y = 0: nan
    assert np.isnan(rel_entr_derivative(tx[1:6], ty[1:6], 1, 0).numpy()).all()


@pytest.mark.parametrize("kl", [False, True])
def test_derivatives_at_one_infinite_argument_are_the_limits(kl):
    """With one argument infinite and the other positive, each partial is its closed form's limit
    (∂_x = ln(x/y) (+ 1), ∂_y = -x/y (kl_div: 1 - x/y), ∂_x² = 1/x, ∂_x ∂_y = -1/y, ∂_y² = x/y²),
    and a float at the end of the range gives the same sign or 0: JAX's jvp of kl_div at x = inf,
    y = 0.68 is -inf (-y·t_x + (1 - x/y)·t_y, no inf - inf), not nan."""
    exact = kl_div_exact if kl else rel_entr_exact
    inf, big = math.inf, 1e300
    limits = {  # (x, y): {(d0, d1): limit}
        (inf, 2.0): {(1, 0): inf, (0, 1): -inf, (2, 0): 0.0, (1, 1): -0.5, (0, 2): inf},
        (2.0, inf): {(1, 0): -inf, (0, 1): 1.0 if kl else 0.0, (2, 0): 0.5, (1, 1): 0.0, (0, 2): 0.0},
    }
    for (x, y), partials in limits.items():
        for (d0, d1), limit in partials.items():
            assert exact(x, y, d0, d1) == limit, (x, y, d0, d1)
            near = exact(min(x, big), min(y, big), d0, d1)  # the same partial at 1e300
            assert limit == 0 or abs(near) <= 1 or math.copysign(1, near) == math.copysign(1, limit)
    assert math.isnan(exact(inf, inf, 1, 0)) and math.isnan(exact(0.0, inf, 1, 0))


def test_reverse_and_forward_mode_give_the_derivative_primitive():
    import reference.autograd.forward_ad as fwAD

    for f, derivative in ((T.special.rel_entr, rel_entr_derivative), (T.special.kl_div, kl_div_derivative)):
        x = T.tensor([2.0, 1e-3, 7.0], dtype=T.float64, requires_grad=True)
        y = T.tensor([3.0, 1e3, 7.0], dtype=T.float64, requires_grad=True)
        gx, gy = T.autograd.grad(f(x, y).sum(), (x, y), create_graph=True)
        (h,) = T.autograd.grad(gx.sum(), y)
        xd, yd = x.detach(), y.detach()
        assert np.array_equal(gx.detach().numpy(), derivative(xd, yd, 1, 0).numpy())
        assert np.array_equal(gy.detach().numpy(), derivative(xd, yd, 0, 1).numpy())
        assert np.array_equal(h.numpy(), derivative(xd, yd, 1, 1).numpy())
        with fwAD.dual_level():
            tangent = fwAD.unpack_dual(f(fwAD.make_dual(xd, T.ones_like(xd)), yd)).tangent
        assert np.array_equal(tangent.numpy(), derivative(xd, yd, 1, 0).numpy())
