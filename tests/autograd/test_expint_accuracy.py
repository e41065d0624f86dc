"""The reference's exponential integrals (reference/ops/rules/special_expint.py) against the
mathematics, by methods independent of the kernels' closed forms: Ei and E_n and their first and
second derivatives against mpmath's numerical differentiation of mpmath's ei / expint at 40 digits,
on a grid with both tails (the underflow and overflow of e^±x), both sides of Ei's pole at 0, its
zero 0.3725 and the zero of Ei'' at 1; the limits and special values; E_n's derivatives through
E_0 and the E_p of negative p; and the reverse and forward modes reading the same primitives."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T
from reference.ops.rules.special_expint import expi_derivative, expi_exact, expn, expn_exact

mpmath = pytest.importorskip("mpmath", reason="exact values")

#: both tails, both sides of the pole, the zero of Ei, the zero of Ei'' (1) and next to it
EXPI_POINTS = [-700.0, -40.5, -3.25, -1e-8, 1e-10, 0.37250741078136663, 0.5, 1.0, 1.0 + 2**-40, 7.5, 95.0, 700.0]
EXPN_POINTS = [1e-12, 0.03, 0.8214, 1.0, 4.5, 60.0, 700.0]


def _ulps(got, exact, size=1.0):
    """|got - exact| in ulps of exact; at a zero (where mpmath.diff leaves noise of 1e-40 of the
    function's size) 0 if got is."""
    exact = mpmath.mpf(exact)
    if abs(exact) < 1e-40 * abs(size):
        return 0.0 if got == 0 else math.inf
    scale = max(abs(exact), mpmath.mpf(2.0**-1022))
    return float(abs(mpmath.mpf(got) - exact) / scale) / 2.0**-52


@pytest.mark.parametrize("x", EXPI_POINTS)
def test_ei_and_two_derivatives_within_an_ulp_of_mpmath_diff(x):
    with mpmath.workdps(40):
        for order in (0, 1, 2):
            exact = mpmath.diff(mpmath.ei, mpmath.mpf(x), order)
            assert _ulps(expi_exact(x, order), exact, mpmath.ei(x)) <= 0.5, (x, order)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("x", EXPN_POINTS)
def test_en_and_two_derivatives_within_an_ulp_of_mpmath_diff(n, x):
    t = T.tensor([x], dtype=T.float64, requires_grad=True)
    (g,) = T.autograd.grad(T.special.expn(n, t).sum(), t, create_graph=True)
    (h,) = T.autograd.grad(g.sum(), t)
    got = [T.special.expn(n, t).detach().numpy()[0], g.detach().numpy()[0], h.numpy()[0]]
    with mpmath.workdps(40):
        for order, value in enumerate(got):
            exact = mpmath.diff(lambda v: mpmath.expint(n, v), mpmath.mpf(x), order)
            assert _ulps(float(value), exact, mpmath.expint(n, x)) <= 0.5, (n, x, order)


def test_ei_second_derivative_next_to_its_zero_where_the_formula_cancels():
    # Ei''(x) = e^x (x - 1)/x²: in float64 the formula keeps no digit of it at 1 + 2^-40 beyond
    # the rounding of x - 1; the kernel's is correctly rounded
    x = 1.0 + 2**-40
    with mpmath.workdps(60):
        exact = mpmath.exp(x) * (mpmath.mpf(x) - 1) / mpmath.mpf(x) ** 2
    assert _ulps(expi_exact(x, 2), exact) <= 0.5
    assert expi_exact(1.0, 2) == 0.0


def test_limits_and_special_values():
    inf, nan = math.inf, math.nan
    assert expi_exact(0.0, 0) == -inf and expi_exact(-0.0, 0) == -inf
    assert expi_exact(0.0, 1) == inf and expi_exact(-0.0, 1) == -inf  # e^x/x at ±0
    assert expi_exact(0.0, 2) == -inf and expi_exact(-0.0, 2) == -inf  # -1/x²
    assert expi_exact(inf, 0) == inf and expi_exact(inf, 2) == inf
    assert expi_exact(-inf, 0) == 0.0 and expi_exact(-inf, 1) == 0.0
    assert math.isnan(expi_exact(nan, 1))
    assert expi_exact(-720.0, 0) < 0 and expi_exact(-760.0, 0) == 0.0  # -E_1(x): subnormal, then 0
    assert expn_exact(0.0, 0, 1) == inf and expn_exact(0.0, 0, 3) == 0.5 and expn_exact(0.0, 0, 0) == inf
    assert expn_exact(inf, 0, 2) == 0.0 and math.isnan(expn_exact(-1.0, 0, 2))
    with mpmath.workdps(30):
        # E_{-1}(x) = e^-x (1/x + 1/x²): the second derivative of E_1
        assert expn_exact(2.0, 0, -1) == float(mpmath.exp(-2) * (mpmath.mpf(1) / 2 + mpmath.mpf(1) / 4))


def test_reverse_and_forward_mode_give_the_derivative_primitives():
    import reference.autograd.forward_ad as fwAD

    x = T.tensor([-2.5, 0.3, 1.0, 12.5], dtype=T.float64, requires_grad=True)
    (g,) = T.autograd.grad(T.special.expi(x).sum(), x, create_graph=True)
    (h,) = T.autograd.grad(g.sum(), x)
    xd = x.detach()
    assert np.array_equal(g.detach().numpy(), expi_derivative(xd, 1).numpy())
    assert np.array_equal(h.numpy(), expi_derivative(xd, 2).numpy())
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(T.special.exp1(fwAD.make_dual(xd.abs(), T.ones_like(xd)))).tangent
    assert np.array_equal(tangent.numpy(), (-expn(xd.abs(), 0)).numpy())


def test_dtypes_and_arguments():
    assert T.special.expi(T.tensor([1, 2])).dtype == T.float32  # integers: the default dtype
    half = T.special.expi(T.tensor([0.5], dtype=T.float16))
    assert half.dtype == T.float16 and half.numpy()[0] == np.float16(expi_exact(0.5, 0))
    with pytest.raises(TypeError, match="n must be an int"):
        T.special.expn(1.5, T.tensor([1.0]))


@pytest.mark.parametrize("order", [[-0.0, 0.0], [0.0, -0.0]])
def test_the_sign_of_zero_survives_the_per_element_cache(order):
    """Ei'(±0) = ±inf and Dawson's D(±0) = ±0 whichever zero the kernel meets first: 0.0 == -0.0
    and they hash alike, so a cache keyed by the value alone answered the first zero's value at the
    second (the whole-domain run at seed 0: Ei'(+0) = -inf in the reference, expi-2b2dcf9332dc,
    where JAX and TensorFlow said +inf, the limit from above)."""
    x = T.tensor(order, dtype=T.float64)
    assert np.array_equal(expi_derivative(x, 1).numpy(), np.copysign(math.inf, order))
    assert np.array_equal(np.signbit(T.special.dawsn(x).numpy()), np.signbit(order))
