"""The reference's beta function and Pochhammer symbol (reference/ops/rules/special_gamma_ratio.py)
against the mathematics, by methods independent of the kernels' Faà di Bruno polynomials in
polygammas: the values against mpmath's own ``beta`` and ``rf`` at 60 digits, the derivatives
against mpmath's numerical differentiation of those, every order the checks use and one above
(d0 + d1 <= 3), on a grid with small and large arguments, one much the smaller (where ψ(a) - ψ(a +
b) cancels), negative non-integers, a + b at a pole of Γ (B = 0, finite derivatives) and z at one
((z)_m = 0); every result within an ulp. Then the special values, and the reverse and forward
modes reading the one derivative primitive."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T
from reference.ops.rules.special_gamma_ratio import beta_derivative, beta_exact, poch_derivative, poch_exact

mpmath = pytest.importorskip("mpmath", reason="exact values")

ORDERS = [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (2, 1), (0, 3)]
#: (a, b): the bulk, small, large, one much the smaller, negative non-integers, a + b a pole of Γ
BETA_POINTS = [(2.5, 1.5), (0.5, 0.5), (1e-3, 4.0), (30.0, 40.0), (1e4, 2.5), (3e5, 1e-2), (-1.5, 2.25),
               (-0.5, -0.25), (0.5, -0.5), (1.25, -3.25), (150.0, 160.0)]  # fmt: skip
#: (z, m): the bulk, m small against z, negative z and m, z + m near a pole, z at a pole
POCH_POINTS = [(2.5, 1.5), (0.5, -0.25), (1e4, 1e-3), (3e5, 2.5), (-2.5, 1.0), (-1.75, 0.5), (4.0, -3.5),
               (-3.0, 1.5), (0.0, 2.5), (20.0, 30.0), (1e-3, 1e-3)]  # fmt: skip


def _ulps(got, exact):
    exact = mpmath.mpf(exact)
    scale = max(abs(exact), mpmath.mpf(2.0**-1022))
    return float(abs(mpmath.mpf(got) - exact) / scale) / 2.0**-52


def _beta(a, b):
    return mpmath.gamma(a) * mpmath.gamma(b) * mpmath.rgamma(a + b)


def _poch(z, m):
    return mpmath.gamma(z + m) * mpmath.rgamma(z)


@pytest.mark.parametrize("a, b", BETA_POINTS)
def test_beta_within_an_ulp_of_mpmath(a, b):
    with mpmath.workdps(60):
        assert _ulps(beta_exact(a, b, 0, 0), mpmath.beta(a, b)) <= 0.5, (a, b)
        for d0, d1 in ORDERS[1:]:
            exact = mpmath.diff(_beta, (mpmath.mpf(a), mpmath.mpf(b)), (d0, d1))
            assert _ulps(beta_exact(a, b, d0, d1), exact) <= 1.0, (a, b, d0, d1)


@pytest.mark.parametrize("z, m", POCH_POINTS)
def test_poch_within_an_ulp_of_mpmath(z, m):
    with mpmath.workdps(60):
        assert _ulps(poch_exact(z, m, 0, 0), mpmath.rf(z, m)) <= 0.5, (z, m)
        for d0, d1 in ORDERS[1:]:
            exact = mpmath.diff(_poch, (mpmath.mpf(z), mpmath.mpf(m)), (d0, d1))
            assert _ulps(poch_exact(z, m, d0, d1), exact) <= 1.0, (z, m, d0, d1)


def test_beta_special_values():
    nan, inf = math.nan, math.inf
    a = T.tensor([0.0, -0.0, -1.0, -1.0, 0.5, inf, inf, inf, -inf, nan, 2.0], dtype=T.float64)
    b = T.tensor([2.0, 2.0, 2.0, -1.0, -0.5, 2.0, -0.5, inf, 2.0, 1.0, inf], dtype=T.float64)
    # C99's Γ(±0) = ±inf; a negative-integer pole (the sign flips): nan; a + b a pole alone: 0;
    # B(inf, b) = 0 for b > 0, the sign of Γ(b)·inf below; nan at both infinite, at -inf, at nan
    np.testing.assert_array_equal(T.special.beta(a, b).numpy(), [inf, -inf, nan, nan, 0.0, 0.0, -inf, nan, nan, nan, 0.0])
    got = beta_derivative(a, b, 1, 0).numpy()
    np.testing.assert_array_equal(got[[0, 2, 5, 10]], [nan, nan, 0.0, 0.0])
    assert got[4] == pytest.approx(-2 * math.pi, rel=1e-15)  # Γ(1/2)Γ(-1/2)·(1/Γ)'(0) = -2π


def test_poch_special_values():
    nan, inf = math.nan, math.inf
    z = T.tensor([nan, 2.0, -3.0, -3.0, 1.0, 0.0, inf, inf, 2.0], dtype=T.float64)
    m = T.tensor([0.0, 0.0, 0.0, 2.0, -1.0, 2.5, 1.0, -1.0, -inf], dtype=T.float64)
    # (z)_0 = 1 but at nan; both poles (the limit depends on the direction): nan; Γ(z + m) alone a
    # pole: nan (its sign flips); z alone a pole: 0; z^m at z = inf; nan at m = -inf
    np.testing.assert_array_equal(T.special.poch(z, m).numpy(), [nan, 1.0, 1.0, nan, nan, 0.0, inf, 0.0, nan])
    # at z = 0 (a pole of Γ(z), (z)_m = Γ(m)·z + O(z²)): ∂_z = Γ(m), ∂_m = 0
    dz = poch_derivative(z[5:6], m[5:6], 1, 0).numpy()[0]
    assert dz == pytest.approx(math.gamma(2.5), rel=1e-15)
    assert poch_derivative(z[5:6], m[5:6], 0, 1).numpy()[0] == 0.0


def test_reverse_and_forward_mode_give_the_derivative_primitive():
    import reference.autograd.forward_ad as fwAD

    for f, derivative in ((T.special.beta, beta_derivative), (T.special.poch, poch_derivative)):
        u = T.tensor([2.5, 1e4, -1.5], dtype=T.float64, requires_grad=True)
        v = T.tensor([1.5, 1e-3, 0.25], dtype=T.float64, requires_grad=True)
        gu, gv = T.autograd.grad(f(u, v).sum(), (u, v), create_graph=True)
        (h,) = T.autograd.grad(gu.sum(), v)
        ud, vd = u.detach(), v.detach()
        assert np.array_equal(gu.detach().numpy(), derivative(ud, vd, 1, 0).numpy())
        assert np.array_equal(gv.detach().numpy(), derivative(ud, vd, 0, 1).numpy())
        assert np.array_equal(h.numpy(), derivative(ud, vd, 1, 1).numpy())
        with fwAD.dual_level():
            tangent = fwAD.unpack_dual(f(ud, fwAD.make_dual(vd, T.ones_like(vd)))).tangent
        assert np.array_equal(tangent.numpy(), derivative(ud, vd, 0, 1).numpy())


def test_dtypes():
    assert T.special.beta(T.tensor([2]), T.tensor([1])).dtype == T.float32
    assert T.special.poch(T.tensor([2.5], dtype=T.float64), 1.5).dtype == T.float64
