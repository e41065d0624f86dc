"""The reference's regularized incomplete beta function (reference/ops/rules/special_beta.py) against
the mathematics, by methods independent of the kernel's continued fraction: the values against
mpmath's own betainc (a hypergeometric sum) at 60 digits and, where it cancels or does not converge,
against mpmath's quadrature of the density; the x-derivatives (orders 1 to 3, the ones the checks
use and the second derivative's VJP) against mpmath's numerical differentiation of its betainc; on
a grid that includes the tails (I below 1e-100 and above 1 - 1e-15), small and large parameters, the
edges x = 0 and x = 1, and the special values; every result within an ulp. Then the reverse and
forward modes reading the one derivative primitive."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T
from reference.ops.rules.special_beta import betainc_exact, derivative

mpmath = pytest.importorskip("mpmath", reason="exact values")

#: (a, b, x): the bulk, both sides of the mean, small and large parameters, far tails
POINTS = [
    (2.5, 1.5, 0.3),
    (0.5, 0.5, 0.01),
    (0.5, 0.5, 0.999),
    (30.0, 40.0, 0.45),
    (1.0, 3.0, 0.7),
    (0.05, 2.0, 0.5),
    (200.0, 3.0, 0.5),  # lower tail ~1e-58
    (3.0, 200.0, 0.2),  # upper tail: I = 1 - 1e-17
    (1e3, 2e3, 0.34),
]


def _ulps(got, exact):
    exact = mpmath.mpf(exact)
    scale = max(abs(exact), mpmath.mpf(2.0**-1022))
    return float(abs(mpmath.mpf(got) - exact) / scale) / 2.0**-52


def _betainc(a, b, x):
    """mpmath's own regularized incomplete beta function, the smaller tail asked directly."""
    return mpmath.betainc(a, b, 0, x, regularized=True)


@pytest.mark.parametrize("a, b, x", POINTS)
def test_values_within_an_ulp_of_mpmath(a, b, x):
    with mpmath.workdps(60):
        exact = _betainc(a, b, x)
        assert _ulps(betainc_exact(a, b, x, 0), exact) <= 1.0, (a, b, x)


@pytest.mark.parametrize("a, b, x", POINTS)
def test_x_derivatives_within_an_ulp_of_numerical_differentiation(a, b, x):
    with mpmath.workdps(60):
        for order in (1, 2, 3):
            exact = mpmath.diff(lambda t: _betainc(a, b, t), x, order)
            assert _ulps(betainc_exact(a, b, x, order), exact) <= 1.0, (a, b, x, order)


def test_where_mpmath_betainc_does_not_converge_against_quadrature():
    # mpmath's hypergeometric sum raises NoConvergence at a = b = 1e5; the density's integral, split
    # at the mode and the points a standard deviation away, is an independent figure there
    a = b = 1e5
    x = 0.4985
    with mpmath.workdps(40):
        with pytest.raises(mpmath.libmp.NoConvergence):
            mpmath.betainc(a, b, 0, x, regularized=True)
        log_beta = mpmath.loggamma(a) + mpmath.loggamma(b) - mpmath.loggamma(a + b)
        density = lambda t: mpmath.exp((a - 1) * mpmath.log(t) + (b - 1) * mpmath.log1p(-t) - log_beta)  # noqa: E731
        sd = 1 / mpmath.sqrt(8 * a)
        exact = mpmath.quad(density, [x - 20 * sd, x - 8 * sd, x - 4 * sd, x])
    assert _ulps(betainc_exact(a, b, x, 0), exact) <= 1.0


def test_a_tiny_parameter_above_the_mean_is_not_lost_to_the_complement():
    # I = 1 - I_(1-x)(b, a) cancels by 307 digits here: the kernel raises its precision
    a, b, x = 0.8546665422588208, 4.553252967238437e-308, 0.7275945593006624
    with mpmath.workdps(400):
        exact = _betainc(a, b, x)
    assert _ulps(betainc_exact(a, b, x, 0), exact) <= 1.0


def test_edges_limits_and_special_values():
    nan, inf = math.nan, math.inf
    # (a, b, x) -> I: the edges, the mass at 0 (a = 0, b = inf) and at 1 (b = 0, a = inf), nan
    # outside the domain and where the distribution is undefined
    table = [
        ((2.0, 3.0, 0.0), 0.0), ((2.0, 3.0, 1.0), 1.0), ((0.0, 3.0, 0.5), 1.0), ((2.0, inf, 0.5), 1.0),
        ((2.0, 0.0, 0.5), 0.0), ((inf, 3.0, 0.5), 0.0), ((0.0, 0.0, 0.5), nan), ((inf, inf, 0.5), nan),
        ((-1.0, 3.0, 0.5), nan), ((2.0, -1.0, 0.5), nan), ((2.0, 3.0, 1.5), nan), ((2.0, 3.0, nan), nan),
    ]  # fmt: skip
    a, b, x = (T.tensor([p[i] for p, _ in table], dtype=T.float64) for i in range(3))
    np.testing.assert_array_equal(T.special.betainc(a, b, x).numpy(), [v for _, v in table])
    # the density's limits at the edges: 0, finite (a = 1: 1/B(1, b) = b), or inf (a < 1)
    one = T.tensor([0.0, 0.0, 0.0, 1.0], dtype=T.float64)
    got = derivative(T.tensor([2.0, 1.0, 0.5, 2.0]), T.tensor([3.0, 3.0, 3.0, 0.5]), one.float(), 1).numpy()
    np.testing.assert_array_equal(got, [0.0, 3.0, inf, inf])
    # the second derivative at x = 0 of a = 2: d/dx x (1-x)^2 / B(2, 3) = 12 at 0
    assert betainc_exact(2.0, 3.0, 0.0, 2) == 12.0
    # b = 1: I = x^a, its derivatives a x^(a-1), a (a - 1) x^(a-2), exactly
    assert betainc_exact(2.5, 1.0, 0.25, 0) == 0.25**2.5
    assert betainc_exact(3.0, 1.0, 0.5, 2) == 3.0


def test_reverse_and_forward_mode_give_the_derivative_primitive():
    import reference.autograd.forward_ad as fwAD

    a = T.tensor([2.5, 0.5, 30.0], dtype=T.float64)
    b = T.tensor([1.5, 0.5, 40.0], dtype=T.float64)
    x = T.tensor([0.3, 0.01, 0.45], dtype=T.float64, requires_grad=True)
    (g,) = T.autograd.grad(T.special.betainc(a, b, x).sum(), x, create_graph=True)
    (h,) = T.autograd.grad(g.sum(), x)
    xd = x.detach()
    assert np.array_equal(g.detach().numpy(), derivative(a, b, xd, 1).numpy())
    assert np.array_equal(h.numpy(), derivative(a, b, xd, 2).numpy())
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(T.special.betainc(a, b, fwAD.make_dual(xd, T.ones_like(xd)))).tangent
    assert np.array_equal(tangent.numpy(), derivative(a, b, xd, 1).numpy())
    # a and b are not differentiated (JAX raises, TensorFlow's gradient is None): a result of a
    # alone does not require grad
    a.requires_grad_(True)
    assert not T.special.betainc(a, b, xd).requires_grad


def test_dtypes_and_broadcasting():
    # integers compute in the default dtype; a Python number is a wrapped number; float32 rounds once
    assert T.special.betainc(T.tensor([2]), T.tensor([1]), T.tensor([0])).dtype == T.float32
    single = T.special.betainc(T.tensor([2.5], dtype=T.float32), 1.5, T.tensor([[0.3], [0.6]]))
    assert single.shape == (2, 1)
    with mpmath.workdps(30):
        assert single.numpy()[0, 0] == np.float32(float(_betainc(2.5, 1.5, float(np.float32(0.3)))))
    with pytest.raises(RuntimeError, match="must match the size"):
        T.special.betainc(T.ones(2), T.ones(3), T.ones(2))
