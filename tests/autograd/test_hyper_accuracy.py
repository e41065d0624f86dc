"""The reference's hypergeometric functions (reference/ops/rules/special_hyper.py) against the
mathematics, by methods independent of the kernel's contiguous relation and its mpmath.diff steps:

* central differences of mpmath's hyp1f1/hyp2f1 at 120 digits with a step of 1e-30 (times the
  argument's scale), every order the checks use, x's derivatives by differences too (not by the
  contiguous relation), on a grid with large |x|, negative x, parameters next to an integer and
  negative non-integer lower parameters, and 2F1 next to its branch point x = 1; every result within
  an ulp (the kernel's claim: the correctly rounded derivative but where its 2^-(prec+20) error
  relative to |f| meets a derivative 2^60 below |f|, not on this grid);
* the first-order parameter derivatives against the termwise series Σ term_k·(ψ(p + k) - ψ(p))
  summed at 80 digits (JAX's formula, in exact arithmetic);
* the special values: terminating series, poles of a lower parameter (signed at ±0, nan at the
  negative integers), x = ±inf, 2F1 at and past x = 1;
* the reverse and forward modes reading the one primitive."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T
from reference.ops.rules.special_hyper import hyp1f1_derivative, hyp1f1_exact, hyp2f1_derivative, hyp2f1_exact

mpmath = pytest.importorskip("mpmath", reason="exact values")

ORDERS_1 = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (2, 0, 0), (1, 1, 0), (0, 2, 0), (1, 0, 1), (0, 1, 1), (0, 0, 2)]
POINTS_1 = [(0.7, 1.3, 2.5), (0.5, 1.5, -30.0), (-2.5, 0.75, 150.0), (1.5, -2.5, -3.0), (3.0, 2.0 + 1e-9, 0.25),
            (-3.0 + 1e-7, 1.5, 4.0), (2.0, 5.0, -120.0), (0.25, 1e-3, 1.0), (1e-8, 3.0, -2.0)]  # fmt: skip
ORDERS_2 = [(0, 0, 0, 0), (1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1), (1, 0, 1, 0), (0, 0, 2, 0),
            (1, 0, 0, 1), (0, 0, 0, 2), (2, 0, 0, 0)]  # fmt: skip
POINTS_2 = [(0.7, 1.3, 2.1, 0.4), (0.5, 1.5, 2.5, -3.0), (1.25, -0.5, 3.5, 0.999), (0.5, 0.75, -1.5, 0.3),
            (2.0, 3.0, 4.0 + 1e-8, -0.75), (0.3, 0.4, 0.5, 1.0 - 2.0**-40), (1.5, 2.5, 7.5, 1.0),
            (-2.5, 1.5, 0.25, -50.0)]  # fmt: skip

_STEP = mpmath.mpf(10) ** -30


def _ulps(got, exact):
    exact = mpmath.mpf(exact)
    scale = max(abs(exact), mpmath.mpf(2.0**-1022))
    return float(abs(mpmath.mpf(got) - exact) / scale) / 2.0**-52


def _numerical(f, point, orders):
    """∂^orders f at ``point`` by nested central differences, each step 1e-30 times the scale."""

    def nested(i, args):
        if i == len(point):
            return f(*args)
        if orders[i] == 0:
            return nested(i + 1, args + [point[i]])
        h = min(max(abs(point[i]), 1), abs(point[i] - round(point[i])) or 1) * _STEP
        return mpmath.diff(lambda t: nested(i + 1, args + [t]), point[i], orders[i], h=h)

    return nested(0, [])


@pytest.mark.parametrize("point", POINTS_1)
def test_hyp1f1_within_an_ulp_of_mpmath(point):
    with mpmath.workdps(120):
        mp_point = [mpmath.mpf(v) for v in point]
        for orders in ORDERS_1:
            exact = _numerical(mpmath.hyp1f1, mp_point, orders)
            got = hyp1f1_exact(*point, orders)
            assert _ulps(got, exact) <= 1.0, (point, orders, got, exact)


@pytest.mark.parametrize("point", POINTS_2)
def test_hyp2f1_within_an_ulp_of_mpmath(point):
    with mpmath.workdps(120):
        mp_point = [mpmath.mpf(v) for v in point]
        for orders in ORDERS_2:
            if point[-1] == 1.0 and orders[-1]:
                continue  # x-derivatives at the branch point: below (they diverge here)
            exact = _numerical(mpmath.hyp2f1, mp_point, orders)
            got = hyp2f1_exact(*point, orders)
            assert _ulps(got, exact) <= 1.0, (point, orders, got, exact)


def test_first_order_parameter_derivatives_against_the_digamma_series():
    """∂_p F = Σ_k term_k·(ψ(p + k) - ψ(p)) (sign - for a lower parameter), summed at 80 digits."""
    with mpmath.workdps(80):

        def series(upper, lower, x, which, lower_param):
            x = mpmath.mpf(x)

            def term(k):
                t = mpmath.fprod(mpmath.rf(a, k) for a in upper) / mpmath.fprod(mpmath.rf(b, k) for b in lower)
                p = (lower if lower_param else upper)[which]
                d = mpmath.digamma(p + k) - mpmath.digamma(p)
                return t * x**k / mpmath.factorial(k) * (-d if lower_param else d)

            return mpmath.fsum(term(k) for k in range(1, 400))  # |x| <= 10: the terms fall below 1e-200

        for a, b, x in [(0.7, 1.3, 2.5), (1.5, -2.5, -3.0), (-3.5, 0.5, 10.0)]:
            assert _ulps(hyp1f1_exact(a, b, x, (1, 0, 0)), series([a], [b], x, 0, False)) <= 1.0
            assert _ulps(hyp1f1_exact(a, b, x, (0, 1, 0)), series([a], [b], x, 0, True)) <= 1.0
        for a, b, c, x in [(0.7, 1.3, 2.1, 0.4), (0.5, 0.75, -1.5, 0.3), (2.5, -1.5, 3.25, -0.5)]:
            assert _ulps(hyp2f1_exact(a, b, c, x, (1, 0, 0, 0)), series([a, b], [c], x, 0, False)) <= 1.0
            assert _ulps(hyp2f1_exact(a, b, c, x, (0, 1, 0, 0)), series([a, b], [c], x, 1, False)) <= 1.0
            assert _ulps(hyp2f1_exact(a, b, c, x, (0, 0, 1, 0)), series([a, b], [c], x, 0, True)) <= 1.0


def test_special_values():
    nan, inf = math.nan, math.inf
    z1, z2 = (0, 0, 0), (0, 0, 0, 0)
    # terminating series: polynomials, also at a lower pole beyond their degree; JAX's 1F1(0; 0; x) = 1
    assert hyp1f1_exact(-1.0, -2.0, 3.0, z1) == 2.5
    assert hyp1f1_exact(0.0, 0.0, 7.0, z1) == 1.0
    assert hyp1f1_exact(-2.0, 1.5, 2.0, (0, 0, 3)) == 0.0
    assert hyp2f1_exact(-1.0, 3.0, -2.0, 0.5, z2) == 1.75
    assert hyp2f1_exact(-2.0, 1.0, 3.0, 5.0, z2) == pytest.approx(float(mpmath.hyp2f1(-2, 1, 3, 5)), rel=1e-15)
    # poles of the lower parameter: ±inf at ±0 with the residue's sign, nan at negative integers
    assert hyp1f1_exact(0.5, 0.0, 2.0, z1) == inf and hyp1f1_exact(0.5, -0.0, 2.0, z1) == -inf
    assert hyp1f1_exact(0.5, 0.0, -2.0, z1) == -inf
    assert math.isnan(hyp1f1_exact(0.5, -1.0, 2.0, z1)) and math.isnan(hyp1f1_exact(0.5, 0.0, 2.0, (0, 0, 1)))
    assert hyp2f1_exact(0.5, 1.5, 0.0, 0.5, z2) == inf and math.isnan(hyp2f1_exact(0.5, 1.5, -2.0, 0.5, z2))
    # differentiated in the parameter that terminates it, the series no longer ends before the pole:
    # ∂_a 2F1(a, b; 0; x) at a = 0 (1 at a = 0, infinite at every a beside it) has none
    assert math.isnan(hyp2f1_exact(0.0, 2.0, 0.0, 0.8671875, (1, 0, 0, 0)))
    assert math.isnan(hyp2f1_exact(-1.0, 2.0, -2.0, 0.5, (1, 0, 0, 0)))
    assert hyp2f1_exact(-1.0, 2.0, -2.0, 0.5, z2) == 1.5 and math.isnan(hyp1f1_exact(0.0, 0.0, 0.5, (1, 0, 0)))
    # x = ±inf: Γ(b)/Γ(a) e^x x^(a-b); Γ(b)/Γ(b - a) (-x)^-a
    assert hyp1f1_exact(0.5, 1.5, inf, z1) == inf and hyp1f1_exact(-0.5, 1.5, inf, z1) == -inf
    assert hyp1f1_exact(0.5, 1.5, -inf, z1) == 0.0 and hyp1f1_exact(-0.5, 1.5, -inf, z1) == inf
    assert hyp1f1_exact(-3.0, 1.5, -inf, z1) == inf and math.isnan(hyp1f1_exact(0.5, 1.5, -inf, (0, 0, 1)))
    assert hyp1f1_exact(0.5, 1.5, inf, (1, 0, 0)) == inf and hyp1f1_exact(0.5, 1.5, inf, (0, 1, 0)) == -inf
    assert hyp2f1_exact(0.5, 1.5, 2.5, -inf, z2) == 0.0 and math.isnan(hyp2f1_exact(0.5, 1.5, 2.5, inf, z2))
    # 2F1 at the branch point: Gauss's sum, ±inf where c - a - b <= 0; complex past it: nan
    assert hyp2f1_exact(0.5, 1.5, 2.5, 1.0, z2) == pytest.approx(float(mpmath.hyp2f1(0.5, 1.5, 2.5, 1)), rel=1e-15)
    assert hyp2f1_exact(0.5, 1.5, 2.0, 1.0, z2) == inf and hyp2f1_exact(0.5, 1.5, 2.5, 1.0, (0, 0, 0, 1)) == inf
    assert hyp2f1_exact(0.5, 1.5, 1.5, 1.0, z2) == inf and math.isnan(hyp2f1_exact(0.5, 1.5, 2.5, 1.5, z2))
    assert all(math.isnan(hyp1f1_exact(*v, z1)) for v in [(nan, 1.0, 1.0), (inf, 1.0, 1.0), (1.0, -inf, inf)])
    # an infinite lower parameter: the terms after the first vanish
    assert hyp1f1_exact(0.5, -inf, 3.0, z1) == 1.0 and hyp1f1_exact(0.5, inf, 3.0, (1, 0, 0)) == 0.0
    assert hyp2f1_exact(0.5, 1.5, inf, -3.0, z2) == 1.0 and math.isnan(hyp2f1_exact(0.5, 1.5, inf, 3.0, z2))


def test_reverse_and_forward_mode_give_the_derivative_primitive():
    import reference.autograd.forward_ad as fwAD

    a = T.tensor([0.7, -1.5, 2.0], dtype=T.float64, requires_grad=True)
    b = T.tensor([1.3, 2.5, -0.5], dtype=T.float64, requires_grad=True)
    x = T.tensor([2.5, -4.0, 0.25], dtype=T.float64, requires_grad=True)
    ga, gb, gx = T.autograd.grad(T.special.hyp1f1(a, b, x).sum(), (a, b, x), create_graph=True)
    (h,) = T.autograd.grad(gb.sum(), x)
    ad, bd, xd = a.detach(), b.detach(), x.detach()
    for got, orders in ((ga, (1, 0, 0)), (gb, (0, 1, 0)), (gx, (0, 0, 1)), (h, (0, 1, 1))):
        assert np.array_equal(got.detach().numpy(), hyp1f1_derivative(ad, bd, xd, orders).numpy())
    c = T.tensor([3.5, 2.25, 1.5], dtype=T.float64)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(T.special.hyp2f1(ad, bd, fwAD.make_dual(c, T.ones_like(c)), xd * 0.2)).tangent
    assert np.array_equal(tangent.numpy(), hyp2f1_derivative(ad, bd, c, xd * 0.2, (0, 0, 1, 0)).numpy())


def test_tiny_parameters_move_only_the_tail():
    """f = 1 + T with T ~ Πa·x/Πb far below the 1: the parameter derivatives are T's, to first order
    in the tiny parameters -a·x/b² (∂_b), (e^x - 1)/b (∂_a, a -> 0 with b tiny: (a)_k/(b)_k ->
    (k-1)!/(b (k-1)!)), -(a/c²)((1 - x)^-b - 1) (∂_c 2F1, a and c tiny: (a)_k/(c)_k -> 1); the relative corrections are O(1e-307)."""
    with mpmath.workdps(60):
        a, b, x = 4.411510738061652e-308, 3.273351412919446e-308, 4.789085688646148e-308
        assert _ulps(hyp1f1_exact(a, b, x, (0, 1, 0)), -mpmath.mpf(a) * x / mpmath.mpf(b) ** 2) <= 1.0
        a, b, x = 4.1744267899323335e-308, 1.1251381589372827e-307, 0.5478656845236132
        assert _ulps(hyp1f1_exact(a, b, x, (1, 0, 0)), mpmath.expm1(x) / b) <= 1.0
        a, b, c, x = 3e-200, 0.5, 2e-150, 0.25
        assert _ulps(hyp2f1_exact(a, b, c, x, (0, 0, 1, 0)), -mpmath.mpf(a) / mpmath.mpf(c) ** 2 * mpmath.powm1(1 - mpmath.mpf(x), -b)) <= 1.0
