"""The reference's Spence, Fresnel and sine/cosine integrals (reference/ops/rules/special_spence.py,
special_fresnel.py) against the mathematics by methods independent of their kernels (which use
mpmath's polylog, fresnels/fresnelc, si/ci and closed-form derivatives): the values by quadrature of
the defining integrals or by the error function and E_1 of an imaginary argument, the derivatives
by mpmath's numerical differentiation of the integrands, at 50 digits, on grids with both tails and
the special points (poles, zeros, the 0/0 of spence' at 1, phases with no float digit left); the
limits; and the reverse and forward modes reading the derivative primitives."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T
from reference.ops.rules.special_fresnel import (
    fresnel_cos_exact,
    fresnel_sin_derivative,
    fresnel_sin_exact,
    sici_ci_exact,
    sici_si_exact,
)
from reference.ops.rules.special_spence import spence_derivative, spence_exact

mpmath = pytest.importorskip("mpmath", reason="exact values")
mp = mpmath.mp


def _within_half_ulp(got, exact, what, zero=False):
    """``got`` is ``exact`` correctly rounded (within half an ulp, or its float64 rounding where that
    underflows); ``zero``: the exact value is 0 (mpmath.diff gives it to about 1e-50)."""
    exact = mpmath.mpf(exact)
    if zero:
        assert got == 0 and abs(exact) < 1e-40, (what, got, exact)
    elif got != float(exact):
        assert float(abs(mpmath.mpf(got) - exact) / abs(exact)) <= 2.0**-53, (what, got, exact)


# ---- Spence -------------------------------------------------------------------------------------
SPENCE_POINTS = [1e-300, 1e-5, 0.25, 1 - 2.0**-53, 1.0, 1 + 2.0**-52, 1.5, 3.0, 40.0, 1e10, 1e300]


def _spence_by_quadrature(x):
    # ∫_1^x ln t/(1 - t) dt with t = e^s: ∫_0^ln x s e^s/(1 - e^s) ds = ∫ s/expm1(-s) ds (-> -1 at 0)
    return mpmath.quad(lambda s: s / mpmath.expm1(-s) if s != 0 else -1, [0, mpmath.log(x)])


def _spence_slope(t):
    return mpmath.log(t) / (1 - t) if t != 1 else mpmath.mpf(-1)


@pytest.mark.parametrize("x", SPENCE_POINTS)
def test_spence_and_three_derivatives_correctly_rounded(x):
    with mpmath.workdps(50):
        _within_half_ulp(spence_exact(x, 0), _spence_by_quadrature(mpmath.mpf(x)), (x, 0))
        for order in (1, 2, 3):
            if x < 1e-5:  # mpmath.diff's stencil would leave the domain: the slope itself at order 1
                if order == 1:
                    _within_half_ulp(spence_exact(x, 1), _spence_slope(mpmath.mpf(x)), (x, 1))
                continue
            if x == 1.0:  # the 0/0 of ln x/(1 - x): its Taylor series -Σ (1 - x)^n/(n + 1)
                exact = (-1) ** order * math.factorial(order - 1) / order
            else:
                exact = mpmath.diff(_spence_slope, mpmath.mpf(x), order - 1)
            _within_half_ulp(spence_exact(x, order), exact, (x, order))


def test_spence_special_values():
    assert spence_exact(0.0, 0) == math.pi**2 / 6 and spence_exact(math.inf, 0) == -math.inf
    assert spence_exact(0.0, 1) == -math.inf and spence_exact(0.0, 2) == math.inf and spence_exact(0.0, 3) == -math.inf
    assert math.isnan(spence_exact(-1e-300, 0)) and math.isnan(spence_exact(math.nan, 1))
    assert spence_exact(math.inf, 2) == 0.0 and spence_exact(1.0, 0) == 0.0


# ---- Fresnel ------------------------------------------------------------------------------------
FRESNEL_POINTS = [-7.5, 1e-5, 0.3, 1.0, math.sqrt(2.0), 2.5, 1e4 + 0.1, 3e7 + 0.5, 1e15]


def _fresnel_by_erf(x):
    # C(x) + i S(x) = (1 + i)/2 erf(√π (1 - i) x/2)
    return (1 + 1j) / 2 * mpmath.erf(mpmath.sqrt(mpmath.pi) * (1 - 1j) * x / 2)


@pytest.mark.parametrize("x", FRESNEL_POINTS)
def test_fresnel_and_two_derivatives_correctly_rounded(x):
    with mpmath.workdps(50 + 2 * max(0, int(math.log10(abs(x))))):
        v = mpmath.mpf(x)
        value = _fresnel_by_erf(v)
        _within_half_ulp(fresnel_sin_exact(x, 0), value.imag, (x, "S"))
        _within_half_ulp(fresnel_cos_exact(x, 0), value.real, (x, "C"))
        for order in (1, 2, 3):
            s = mpmath.diff(lambda t: mpmath.sin(mpmath.pi * t * t / 2), v, order - 1)
            c = mpmath.diff(lambda t: mpmath.cos(mpmath.pi * t * t / 2), v, order - 1)
            s_zero = order == 1 and x in (math.sqrt(2.0), 1e15) and fresnel_sin_exact(x, 1) == 0
            _within_half_ulp(fresnel_sin_exact(x, order), s, (x, "S", order), zero=s_zero)
            c_zero = (order == 1 and x == 1.0) or (order == 2 and x in (1e15,))
            _within_half_ulp(fresnel_cos_exact(x, order), c, (x, "C", order), zero=c_zero)


def test_fresnel_phase_is_reduced_exactly():
    # every float64 from 2^53 on is an even integer: x²/2 is even, sin(πx²/2) = 0 and cos = 1 exactly,
    # and S'' = πx cos(πx²/2) = πx
    assert fresnel_sin_exact(1e300, 1) == 0.0 and fresnel_cos_exact(1e300, 1) == 1.0
    assert fresnel_sin_exact(1e300, 2) == float(mpmath.pi * mpmath.mpf(1e300))
    assert fresnel_sin_exact(1.0, 2) == 0.0  # π cos(π/2), exactly 0
    # near 0: S = πx³/6 (underflows at 1e-200), C = x, S'' = πx, C'' = -πx sin(πx²/2) (underflows)
    assert fresnel_sin_exact(1e-200, 0) == 0.0 and fresnel_cos_exact(1e-200, 0) == 1e-200
    assert fresnel_sin_exact(1e-200, 2) == math.pi * 1e-200 and fresnel_cos_exact(1e-200, 2) == 0.0
    assert fresnel_sin_exact(-math.inf, 0) == -0.5 and fresnel_cos_exact(1e25, 0) == 0.5
    assert math.isnan(fresnel_sin_exact(math.inf, 1)) and math.isnan(fresnel_cos_exact(math.nan, 0))


# ---- Si and Ci ----------------------------------------------------------------------------------
SICI_POINTS = [-40.0, -1.0, 1e-300, 1e-8, 0.6165054856207162, 0.99, 1.0, math.pi, 25.0, 1e10]


def _sici_by_e1(x):
    # E_1(i|x|) = -Ci(|x|) + i (Si(|x|) - π/2); Si is odd, scipy's real Ci even. Below 1 (where
    # π/2 + Im E_1 cancels): the power series Si = Σ (-1)^n x^(2n+1)/((2n+1)(2n+1)!),
    # Ci = γ + ln|x| + Σ_{n>=1} (-1)^n x^(2n)/(2n (2n)!)
    if abs(x) < 1:
        si = mpmath.fsum((-1) ** n * x ** (2 * n + 1) / ((2 * n + 1) * mpmath.factorial(2 * n + 1)) for n in range(40))
        tail = mpmath.fsum((-1) ** n * x ** (2 * n) / (2 * n * mpmath.factorial(2 * n)) for n in range(1, 40))
        return si, mpmath.euler + mpmath.log(abs(x)) + tail
    e = mpmath.e1(1j * abs(x))
    return math.copysign(1, x) * (mpmath.pi / 2 + e.imag), -e.real


@pytest.mark.parametrize("x", SICI_POINTS)
def test_si_ci_and_three_derivatives_correctly_rounded(x):
    with mpmath.workdps(50 + max(0, int(math.log10(abs(x))))):
        v = mpmath.mpf(x)
        si, ci = _sici_by_e1(v)
        _within_half_ulp(sici_si_exact(x, 0), si, (x, "Si"))
        _within_half_ulp(sici_ci_exact(x, 0), ci, (x, "Ci"))
        for order in (1, 2, 3):
            if abs(x) < 1e-100:  # mpmath.diff's steps are too coarse here: the leading terms of
                # sin x/x = 1 - x²/6 + ... and cos x/x = 1/x - x/2 + ... (the rest below 1e-200 of them)
                _within_half_ulp(sici_si_exact(x, order), [1, -v / 3, mpmath.mpf(-1) / 3][order - 1], (x, order))
                _within_half_ulp(sici_ci_exact(x, order), (-1) ** (order - 1) * math.factorial(order - 1) / v**order, x)
                continue
            _within_half_ulp(sici_si_exact(x, order), mpmath.diff(mpmath.sinc, v, order - 1), (x, "Si", order))
            exact = mpmath.diff(lambda t: mpmath.cos(t) / t, v, order - 1)
            _within_half_ulp(sici_ci_exact(x, order), exact, (x, "Ci", order))


def test_si_ci_limits_and_poles():
    assert sici_si_exact(0.0, 1) == 1.0 and sici_si_exact(0.0, 2) == 0.0 and sici_si_exact(0.0, 3) == -1 / 3
    assert sici_si_exact(-math.inf, 0) == -math.pi / 2 and sici_si_exact(math.inf, 2) == 0.0
    assert sici_ci_exact(math.inf, 0) == 0.0 and math.isnan(sici_ci_exact(-math.inf, 0))
    assert sici_ci_exact(0.0, 0) == -math.inf and sici_ci_exact(-0.0, 0) == -math.inf
    assert sici_ci_exact(0.0, 1) == math.inf and sici_ci_exact(-0.0, 1) == -math.inf  # cos x/x
    assert sici_ci_exact(0.0, 2) == -math.inf and sici_ci_exact(-0.0, 2) == -math.inf  # -1/x²


# ---- the autograd wiring ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fn, derivative, values",
    [
        (T.special.spence, spence_derivative, [0.3, 1.0, 7.0]),
        (lambda x: T.special.fresnel(x)[0], fresnel_sin_derivative, [-2.0, 0.4, 30.5]),
    ],
)
def test_reverse_and_forward_mode_give_the_derivative_primitive(fn, derivative, values):
    import reference.autograd.forward_ad as fwAD

    x = T.tensor(values, dtype=T.float64, requires_grad=True)
    (g,) = T.autograd.grad(fn(x).sum(), x, create_graph=True)
    (h,) = T.autograd.grad(g.sum(), x)
    xd = x.detach()
    assert np.array_equal(g.detach().numpy(), derivative(xd, 1).numpy())
    assert np.array_equal(h.numpy(), derivative(xd, 2).numpy())
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(fn(fwAD.make_dual(xd, T.ones_like(xd)))).tangent
    assert np.array_equal(tangent.numpy(), derivative(xd, 1).numpy())
    assert fn(T.tensor([1, 2])).dtype == T.float32


def test_pairs_and_their_dtypes():
    x = T.tensor([0.5, -3.0], dtype=T.float32)
    s, c = T.special.fresnel(x)
    si, ci = T.special.sici(x)
    assert s.dtype == c.dtype == si.dtype == ci.dtype == T.float32
    assert ci.numpy()[1] == np.float32(sici_ci_exact(3.0, 0))  # Re Ci(-3) = Ci(3)
