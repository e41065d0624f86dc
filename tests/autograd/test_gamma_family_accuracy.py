"""The reference's gamma, loggamma, factorial and gammasgn (reference/ops/rules/special_gammafn.py)
against the mathematics by methods independent of their kernels (mpmath's gamma and polygamma,
Leibniz' rule over Γ' = Γψ): the values by Euler's integral (x > 0) and the reflection formula
(x < 0), the derivatives by mpmath's numerical differentiation of Γ and ln Γ at 50 digits, on a
grid with both tails, both sides of the poles and the minimum of Γ; C99's and JAX's special values;
and the autograd wiring."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T
from reference.ops.rules.special_gammafn import (
    factorial_exact,
    gamma_derivative,
    gamma_exact,
    gammasgn_exact,
    loggamma_exact,
)

mpmath = pytest.importorskip("mpmath", reason="exact values")

POINTS = [1e-8, 0.3, 1.4616321449683622, 2.0, 7.5, 60.25, -0.5, -1.0 + 2.0**-40, -2.0 - 1e-6, -7.3]


def _gamma_independent(x):
    if x > 0:
        return mpmath.quad(lambda t: t ** (x - 1) * mpmath.exp(-t), [0, 1, mpmath.inf])
    return mpmath.pi / (mpmath.sin(mpmath.pi * x) * _gamma_independent(1 - x))


def _correctly_rounded(got, exact, what):
    exact = mpmath.mpf(exact)
    assert got == float(exact) or float(abs(mpmath.mpf(got) - exact) / abs(exact)) <= 2.0**-53, (what, got, exact)


@pytest.mark.parametrize("x", POINTS)
def test_gamma_and_three_derivatives(x):
    with mpmath.workdps(50):
        v = mpmath.mpf(x)
        if abs(x) > 1e-6:  # Euler's integral: t^(x - 1) at x ~ 1e-8 defeats the quadrature
            _correctly_rounded(gamma_exact(x, 0), _gamma_independent(v), (x, 0))
        for order in (1, 2, 3):
            _correctly_rounded(gamma_exact(x, order), mpmath.diff(mpmath.gamma, v, order), (x, order))
        if x >= 1:  # factorial(x - 1) = Γ(x) (x - 1 exact here)
            for order in (0, 1, 2):
                exact = mpmath.diff(mpmath.gamma, v, order)
                _correctly_rounded(factorial_exact(x - 1, order), exact, (x, "factorial", order))
        if x > 0:
            for order in (0, 1, 2, 3):
                exact = mpmath.diff(lambda t: mpmath.log(mpmath.gamma(t)), v, order)
                _correctly_rounded(loggamma_exact(x, order), exact, (x, "loggamma", order))


def test_special_values():
    inf, nan = math.inf, math.nan
    assert gamma_exact(0.0, 0) == inf and gamma_exact(-0.0, 0) == -inf  # C99 tgamma(±0) = ±inf
    assert math.isnan(gamma_exact(-3.0, 0)) and math.isnan(gamma_exact(-inf, 0)) and gamma_exact(inf, 0) == inf
    assert gamma_exact(0.0, 1) == -inf and gamma_exact(-0.0, 1) == -inf  # Γ' ~ -1/x²
    assert gamma_exact(0.0, 2) == inf and gamma_exact(-0.0, 2) == -inf  # Γ'' ~ 2/x³
    assert gamma_exact(171.7, 0) == inf and gamma_exact(-200.5, 0) == 0.0  # overflow, underflow
    assert [gammasgn_exact(v, 0) for v in (0.0, -0.0, -0.5, -1.5, 2.5, inf)] == [1, -1, -1, 1, 1, 1]
    assert all(math.isnan(gammasgn_exact(v, 0)) for v in (-1.0, -inf, nan))
    assert factorial_exact(-0.5, 0) == 0.0 and factorial_exact(-0.5, 1) == 0.0 and factorial_exact(0.0, 0) == 1.0
    assert factorial_exact(0.0, 1) == float(-mpmath.euler) and factorial_exact(5.0, 0) == 120.0
    assert all(math.isnan(loggamma_exact(v, k)) for v in (0.0, -0.0, -2.5) for k in (0, 1))
    assert loggamma_exact(inf, 0) == inf and loggamma_exact(inf, 1) == inf and loggamma_exact(inf, 2) == 0.0


def test_autograd_wiring():
    x = T.tensor([-2.5, 0.7, 4.0], dtype=T.float64, requires_grad=True)
    (g,) = T.autograd.grad(T.special.gamma(x).sum(), x, create_graph=True)
    (h,) = T.autograd.grad(g.sum(), x)
    assert np.array_equal(h.numpy(), gamma_derivative(x.detach(), 2).numpy())
    (s,) = T.autograd.grad(T.special.gammasgn(x).sum(), x)
    assert np.array_equal(s.numpy(), np.zeros(3)) and T.special.gammasgn(x).detach().numpy().tolist() == [-1, 1, 1]
    (f,) = T.autograd.grad(T.special.factorial(x).sum(), x)
    assert f.numpy()[0] == 0.0 and f.numpy()[2] == float(mpmath.diff(mpmath.gamma, 5.0))
    assert T.special.loggamma(T.tensor([1, 2])).dtype == T.float32
