"""The reference's Dawson integral (reference/ops/rules/special_dawsn.py) against the mathematics,
by a method independent of the kernel's erfi, recurrence and asymptotic series: D and its first
and second derivatives against mpmath's numerical differentiation of its quadrature
e^-x² ∫_0^x e^t² dt at 50 digits, on a grid with both tails (where D' = 1 - 2xD cancels), both
sides of the switch to the asymptotic series at 64, the zero at 0 and the zeros of D' and D''; the
limits; and the reverse and forward modes reading the same primitive."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T
from reference.ops.rules.special_dawsn import dawsn_derivative, dawsn_exact

mpmath = pytest.importorskip("mpmath", reason="exact values")

POINTS = [-300.0, -63.99, 1e-9, 0.5, 0.9241388730045917, 1.5019752682686116, 5.0, 64.0, 233.3, 1e4]


def _dawson(t):
    return mpmath.exp(-t * t) * mpmath.quad(lambda s: mpmath.exp(s * s), [0, t])


def _ulps(got, exact):
    exact = mpmath.mpf(exact)
    return float(abs(mpmath.mpf(got) - exact) / abs(exact)) / 2.0**-52


@pytest.mark.parametrize("x", POINTS)
def test_value_and_two_derivatives_within_half_an_ulp_of_mpmath(x):
    with mpmath.workdps(50):
        for order in (0, 1, 2):
            exact = mpmath.diff(_dawson, mpmath.mpf(x), order)
            assert _ulps(dawsn_exact(x, order), exact) <= 0.5, (x, order)


def test_the_frameworks_formula_loses_what_the_kernel_keeps():
    # D'(233.3) = 1 - 2xD in float64 keeps about 16 - log10(2x²) ≈ 11 digits
    x = 233.3
    formula = 1 - 2 * x * dawsn_exact(x, 0)
    with mpmath.workdps(50):
        exact = mpmath.diff(_dawson, mpmath.mpf(x), 1)
    assert _ulps(formula, exact) > 1e3 and _ulps(dawsn_exact(x, 1), exact) <= 0.5


def test_limits_and_special_values():
    assert dawsn_exact(math.inf, 0) == 0.0 and math.copysign(1, dawsn_exact(-math.inf, 0)) == -1
    assert dawsn_exact(math.inf, 2) == 0.0 and math.isnan(dawsn_exact(math.nan, 1))
    assert dawsn_exact(0.0, 0) == 0.0 and dawsn_exact(0.0, 1) == 1.0 and dawsn_exact(0.0, 2) == 0.0
    assert dawsn_exact(1e300, 0) == 5e-301 and dawsn_exact(-1e300, 1) == -0.0


def test_reverse_and_forward_mode_give_the_derivative_primitive():
    import reference.autograd.forward_ad as fwAD

    x = T.tensor([-3.0, 0.7, 80.0], dtype=T.float64, requires_grad=True)
    (g,) = T.autograd.grad(T.special.dawsn(x).sum(), x, create_graph=True)
    (h,) = T.autograd.grad(g.sum(), x)
    xd = x.detach()
    assert np.array_equal(g.detach().numpy(), dawsn_derivative(xd, 1).numpy())
    assert np.array_equal(h.numpy(), dawsn_derivative(xd, 2).numpy())
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(T.special.dawsn(fwAD.make_dual(xd, T.ones_like(xd)))).tangent
    assert np.array_equal(tangent.numpy(), dawsn_derivative(xd, 1).numpy())
    assert T.special.dawsn(T.tensor([1, 2])).dtype == T.float32
