"""The reference's Box-Cox transformations (reference/ops/rules/special_boxcox.py) against the
mathematics, by a method independent of the kernels' integrals I_j and Leibniz sums: mpmath's
numerical differentiation of expm1(λ ln t)/λ (ln t at λ = 0) at 60 digits, every order the checks
use and one above, on a grid with λ = 0 and λ next to it (where (x^λ - 1)/λ and its λ-derivatives
cancel in floats), x next to 1 and next to the edge, large |λ ln x|, and the structural zero of
∂_x² at λ = 1; every result within an ulp. Then the edge values (scipy's), the λ-derivative at λ = 0
((ln x)²/2: JAX's where gives 0), and the reverse and forward modes reading the one primitive."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special

import reference as T
from reference.ops.rules.special_boxcox import (
    boxcox1p_derivative,
    boxcox1p_exact,
    boxcox_derivative,
    boxcox_exact,
)

mpmath = pytest.importorskip("mpmath", reason="exact values")

ORDERS = [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (2, 1), (1, 2), (0, 3)]
POINTS = [(2.0, 0.5), (2.0, 0.0), (0.3, -1.5), (2.0, 1e-20), (1e-5, 3.0), (1e5, -2.0), (0.999, 1e-8),
          (7.0, 1.0), (1e200, 0.25), (1.0 + 2.0**-52, -3.0)]  # fmt: skip
POINTS_1P = [(1e-10, 2.5), (-0.5, 0.0), (1e-300, 0.5), (3.0, -1e-12), (-0.999, 2.0)]


def _ulps(got, exact):
    exact = mpmath.mpf(exact)
    scale = max(abs(exact), mpmath.mpf(2.0**-1022))
    return float(abs(mpmath.mpf(got) - exact) / scale) / 2.0**-52


def _f(shifted):
    def f(x, lam):
        log_t = mpmath.log1p(x) if shifted else mpmath.log(x)
        return mpmath.expm1(lam * log_t) / lam if lam != 0 else log_t

    return f


_STEP = mpmath.mpf(10) ** -35


@pytest.mark.parametrize("x, lam, shifted", [(x, v, False) for x, v in POINTS] + [(x, v, True) for x, v in POINTS_1P])
def test_within_an_ulp_of_mpmath(x, lam, shifted):
    """Central differences with a step of 1e-35 times the argument (λ: times max(|λ|, 1)), the
    partial in x nested in the one in λ, at 200 digits (truncation 1e-70 relative)."""
    exact_fn, f = (boxcox1p_exact if shifted else boxcox_exact), _f(shifted)
    with mpmath.workdps(200):
        mx, ml = mpmath.mpf(x), mpmath.mpf(lam)
        for d0, d1 in ORDERS:

            def in_lam(v):
                return mpmath.diff(lambda u: f(u, v), mx, d0, h=abs(mx) * _STEP) if d0 else f(mx, v)

            exact = mpmath.diff(in_lam, ml, d1, h=max(abs(ml), 1) * _STEP) if d1 else in_lam(ml)
            got = exact_fn(x, lam, d0, d1)
            if (x, lam, d0, d1) == (7.0, 1.0, 2, 0):  # ∂_x² = (λ - 1) x^(λ-2): exactly 0 at λ = 1
                assert got == 0 and abs(exact) < 1e-45, (got, exact)
            else:
                assert _ulps(got, exact) <= 1.0, (x, lam, d0, d1, got, exact)


def test_edge_values_and_the_derivative_at_lambda_zero():
    nan, inf = math.nan, math.inf
    x = np.array([0.0, 0.0, 0.0, -1.0, inf, inf, 3.0, 0.5, 1.0, nan])
    lam = np.array([2.0, 0.0, -1.0, 1.0, 2.0, -2.0, inf, -inf, inf, 1.0])
    got = T.special.boxcox(T.tensor(x, dtype=T.float64), T.tensor(lam, dtype=T.float64)).numpy()
    np.testing.assert_array_equal(got, [-0.5, -inf, -inf, nan, inf, 0.5, inf, -inf, 0.0, nan])
    np.testing.assert_array_equal(got[:6], scipy.special.boxcox(x[:6], lam[:6]))
    # ∂_λ at λ = 0: (ln x)²/2; ∂_λ² there: (ln x)³/3
    tx, tz = T.tensor([5.0], dtype=T.float64), T.tensor([0.0], dtype=T.float64)
    assert boxcox_derivative(tx, tz, 0, 1).item() == pytest.approx(math.log(5.0) ** 2 / 2, rel=1e-15)
    assert boxcox_derivative(tx, tz, 0, 2).item() == pytest.approx(math.log(5.0) ** 3 / 3, rel=1e-15)
    assert boxcox1p_derivative(tx - 1, tz, 0, 1).item() == pytest.approx(math.log(5.0) ** 2 / 2, rel=1e-15)


def test_reverse_and_forward_mode_give_the_derivative_primitive():
    import reference.autograd.forward_ad as fwAD

    for f, derivative in ((T.special.boxcox, boxcox_derivative), (T.special.boxcox1p, boxcox1p_derivative)):
        x = T.tensor([2.0, 0.5, 7.0], dtype=T.float64, requires_grad=True)
        lam = T.tensor([0.0, 1e-9, -1.5], dtype=T.float64, requires_grad=True)
        gx, gl = T.autograd.grad(f(x, lam).sum(), (x, lam), create_graph=True)
        (h,) = T.autograd.grad(gx.sum(), lam)
        xd, ld = x.detach(), lam.detach()
        assert np.array_equal(gx.detach().numpy(), derivative(xd, ld, 1, 0).numpy())
        assert np.array_equal(gl.detach().numpy(), derivative(xd, ld, 0, 1).numpy())
        assert np.array_equal(h.numpy(), derivative(xd, ld, 1, 1).numpy())
        with fwAD.dual_level():
            tangent = fwAD.unpack_dual(f(xd, fwAD.make_dual(ld, T.ones_like(ld)))).tangent
        assert np.array_equal(tangent.numpy(), derivative(xd, ld, 0, 1).numpy())
