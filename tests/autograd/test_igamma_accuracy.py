"""The reference's incomplete gamma functions (reference/ops/rules/special_gamma.py) against the
mathematics, by methods independent of the kernels': the values against mpmath's gammainc at 50
digits, the x-derivatives against mpmath's numerical differentiation of gammainc in x (not the closed
form the kernel uses), the a-derivatives against quadrature (∂_a^k P = ∫_0^x ∂_a^k [t^(a-1) e^-t /
Γ(a)] dt, not mpmath.diff); every order the conformance checks use, within an ulp. Then the branches
mpmath's gammainc does not reach (Temme's expansion past a = 1e7, the series below x = 1e-20, a·E1(x)
below a = 1e-20), the limits, and the reverse and forward modes reading the same primitives."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T
from reference.ops.rules.special_gamma import _temme, derivative, igamma_exact

mpmath = pytest.importorskip("mpmath", reason="exact values")

POINTS = [(2.5, 1.5), (0.3, 2.0), (7.0, 9.5), (40.0, 36.0)]


def _ulps(got, exact):
    exact = mpmath.mpf(exact)
    scale = max(abs(exact), mpmath.mpf(2.0**-1022))
    return float(abs(mpmath.mpf(got) - exact) / scale) / 2.0**-52


def _p(a, x):
    return mpmath.gammainc(a, 0, x, regularized=True)


def _by_quadrature(a, x, k):
    """∂_a^k P(a, x), k = 1, 2: the integral of ∂_a^k of the density t^(a-1) e^-t / Γ(a), whose
    a-derivatives are ρ (ln t - ψ(a)) and ρ ((ln t - ψ(a))² - ψ'(a)); over u = t^a, which takes
    away the endpoint singularity t^(a-1) ln t of a < 1 (dt t^(a-1) = du / a)."""
    a, x = mpmath.mpf(a), mpmath.mpf(x)
    psi, psi1 = mpmath.digamma(a), mpmath.psi(1, a)

    def integrand(u):
        d = mpmath.log(u) / a - psi
        return mpmath.exp(-(u ** (1 / a))) * (d if k == 1 else d * d - psi1)

    top = x**a
    return mpmath.quad(integrand, [0, min(top, a**a), top]) * mpmath.rgamma(a) / a


@pytest.mark.parametrize("a, x", POINTS)
def test_values_and_x_derivatives_within_an_ulp_of_mpmath(a, x):
    with mpmath.workdps(50):
        for upper in (False, True):
            exact = 1 - _p(a, x) if upper else _p(a, x)
            assert _ulps(igamma_exact(a, x, 0, 0, upper), exact) <= 0.5, (a, x, upper)
        for dx in (1, 2):
            exact = mpmath.diff(lambda t: _p(a, t), x, dx)
            assert _ulps(igamma_exact(a, x, 0, dx, False), exact) <= 1.0, (a, x, dx)
            assert igamma_exact(a, x, 0, dx, True) == -igamma_exact(a, x, 0, dx, False)


@pytest.mark.parametrize("a, x", POINTS)
def test_a_derivatives_within_an_ulp_of_quadrature(a, x):
    with mpmath.workdps(40):
        for da in (1, 2):
            assert _ulps(igamma_exact(a, x, da, 0, False), _by_quadrature(a, x, da)) <= 1.0, (a, x, da)
        # the mixed one: ∂_a of the density, ρ (ln x - ψ(a)), by mpmath.diff of P in x and a
        rho = mpmath.exp((a - 1) * mpmath.log(x) - x - mpmath.loggamma(a))
        exact = rho * (mpmath.log(x) - mpmath.digamma(a))
        assert _ulps(igamma_exact(a, x, 1, 1, False), exact) <= 1.0, (a, x)


def test_temme_branch_matches_mpmath_where_both_reach():
    # mpmath's gammainc converges up to a ~ 1e6: Temme's two-term expansion (used past 1e7) within
    # an ulp there already, its error falling as a^-2.5
    with mpmath.workdps(50):
        for a, x in ((1e6, 1e6), (1e6, 999000.0), (1e6, 1001500.0)):
            for upper in (False, True):
                exact = mpmath.gammainc(a, x, mpmath.inf, regularized=True) if upper else _p(a, x)
                got = _temme(mpmath.mp, mpmath.mpf(a), mpmath.mpf(x), upper)
                assert _ulps(float(got), exact) <= 1.0, (a, x, upper)


def test_large_a_uses_temme_and_its_derivative_is_the_normal_limit():
    a = 1e300  # P(a, a) -> 1/2, ∂P/∂x = -∂P/∂a -> 1/sqrt(2 pi a) (the normal approximation)
    assert igamma_exact(a, a, 0, 0, False) == 0.5 == igamma_exact(a, a, 0, 0, True)
    density = 1 / math.sqrt(2 * math.pi * a)
    assert igamma_exact(a, a, 0, 1, False) == pytest.approx(density, rel=1e-15)
    assert igamma_exact(a, a, 1, 0, False) == pytest.approx(-density, rel=1e-15)


@pytest.mark.slow
def test_tiny_arguments_against_mpmath_directly():
    # the a·E1(x) and series branches against mpmath's own gammainc (seconds per point at a = 1e-300)
    with mpmath.workdps(60):
        for a, x in ((1e-300, 1.0), (1e-25, 3.0), (2.0, 1e-25), (1e-10, 1e-300)):
            exact_q = mpmath.gammainc(a, x, mpmath.inf, regularized=True)
            assert _ulps(igamma_exact(a, x, 0, 0, True), exact_q) <= 0.5, (a, x)
            assert _ulps(igamma_exact(a, x, 0, 0, False), _p(a, x)) <= 0.5, (a, x)
            exact = mpmath.diff(lambda s, x=x: mpmath.gammainc(s, 0, x, regularized=True), a, 1)
            assert _ulps(igamma_exact(a, x, 1, 0, False), exact) <= 1.0, (a, x)


def test_limits_and_special_values():
    nan, inf = math.nan, math.inf
    a = T.tensor([0.0, 2.0, inf, 3.0, -1.0, 2.0, 0.0, inf, nan], dtype=T.float64)
    x = T.tensor([1.0, 0.0, 4.0, inf, 1.0, -1.0, 0.0, inf, 1.0], dtype=T.float64)
    p = T.special.gammainc(a, x).numpy()
    q = T.special.gammaincc(a, x).numpy()
    assert list(p[:4]) == [1.0, 0.0, 0.0, 1.0] and list(q[:4]) == [0.0, 1.0, 1.0, 0.0]
    assert np.isnan(p[4:]).all() and np.isnan(q[4:]).all()
    # ∂P/∂x at x = 0: 0 for a > 1, 1 at a = 1 (PyTorch: nan), inf below; 0 at infinite arguments
    a0 = T.tensor([3.0, 1.0, 0.5, 2.0, inf], dtype=T.float64)
    x0 = T.tensor([0.0, 0.0, 0.0, inf, 2.0], dtype=T.float64)
    assert list(derivative(a0, x0, 0, 1).numpy()) == [0.0, 1.0, inf, 0.0, 0.0]
    assert list(derivative(a0, x0, 1, 0).numpy()) == [0.0, 0.0, 0.0, 0.0, 0.0]
    # at a = 0 (x > 0): ∂P/∂a = -E1(x), the limit of Q = a E1(x) + O(a²)
    with mpmath.workdps(30):
        assert igamma_exact(0.0, 2.0, 1, 0, False) == float(-mpmath.e1(2))


def test_reverse_and_forward_mode_give_the_derivative_primitives():
    import reference.autograd.forward_ad as fwAD

    a = T.tensor([0.7, 3.0, 12.5], dtype=T.float64, requires_grad=True)
    x = T.tensor([1.1, 2.0, 14.0], dtype=T.float64, requires_grad=True)
    ga, gx = T.autograd.grad(T.special.gammaincc(a, x).sum(), (a, x), create_graph=True)
    (h,) = T.autograd.grad(gx.sum(), x)
    ad, xd = a.detach(), x.detach()
    assert np.array_equal(ga.detach().numpy(), -derivative(ad, xd, 1, 0).numpy())
    assert np.array_equal(gx.detach().numpy(), -derivative(ad, xd, 0, 1).numpy())
    assert np.array_equal(h.numpy(), -derivative(ad, xd, 0, 2).numpy())
    with fwAD.dual_level():
        dual = fwAD.make_dual(xd, T.ones_like(xd))
        tangent = fwAD.unpack_dual(T.special.gammainc(ad, dual)).tangent
    assert np.array_equal(tangent.numpy(), derivative(ad, xd, 0, 1).numpy())


def test_integers_raise_like_pytorch_and_half_precision_rounds_once():
    with pytest.raises(NotImplementedError, match="igamma_cpu"):
        T.special.gammainc(T.tensor([2]), T.tensor([1]))
    half = T.special.gammainc(T.tensor([2.0], dtype=T.float16), T.tensor([1.0], dtype=T.float16))
    assert half.dtype == T.float16 and half.numpy()[0] == np.float16(1 - 2 / math.e)
