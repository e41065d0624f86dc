"""The reference's log-beta function (reference/ops/rules/special_beta.py) against the mathematics, by
methods independent of the kernel's loggamma and polygamma sums: the values against mpmath's beta
function itself (ln|B| of mpmath.beta at 60 digits), the derivatives against mpmath's numerical
differentiation of that, every order the checks use and one above; on a grid that includes small and
large parameters, one much smaller than the other (where ψ(a) - ψ(a + b) cancels), negative
non-integers (ln|B| as scipy and JAX define it), and the special values; every result within an
ulp. Then the reverse and forward modes reading the one derivative primitive."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T
from reference.ops.rules.special_beta import betaln_derivative, betaln_exact

mpmath = pytest.importorskip("mpmath", reason="exact values")

#: (a, b): the bulk, small, large, one much the smaller, negative non-integers
POINTS = [(2.5, 1.5), (0.5, 0.5), (1e-3, 4.0), (30.0, 40.0), (1e6, 1e-3), (1e4, 2.5), (-1.5, 2.25), (-0.5, -0.25)]


def _ulps(got, exact):
    exact = mpmath.mpf(exact)
    scale = max(abs(exact), mpmath.mpf(2.0**-1022))
    return float(abs(mpmath.mpf(got) - exact) / scale) / 2.0**-52


def _lnbeta(a, b):
    return mpmath.log(abs(mpmath.beta(a, b)))


@pytest.mark.parametrize("a, b", POINTS)
def test_values_and_derivatives_within_an_ulp_of_mpmath(a, b):
    with mpmath.workdps(60):
        assert _ulps(betaln_exact(a, b, 0, 0), _lnbeta(a, b)) <= 1.0, (a, b)
        for da, db in ((1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (2, 1)):
            exact = mpmath.diff(_lnbeta, (a, b), (da, db))
            assert _ulps(betaln_exact(a, b, da, db), exact) <= 1.0, (a, b, da, db)


def test_poles_limits_and_special_values():
    nan, inf = math.nan, math.inf
    a = T.tensor([0.0, -2.0, -1.0, inf, 2.0, inf, nan], dtype=T.float64)
    b = T.tensor([2.0, 0.5, -1.0, 2.0, inf, inf, 1.0], dtype=T.float64)
    # poles of Γ(a) (Γ(a + b) finite): inf; both a pole and a + b one: nan; B(inf, b) = 0: -inf
    np.testing.assert_array_equal(T.special.betaln(a, b).numpy(), [inf, inf, nan, -inf, -inf, nan, nan])
    # the derivatives vanish at a = inf (ψ(a) - ψ(a + b) -> 0), nan at the poles
    got = betaln_derivative(a[:4], b[:4], 1, 0).numpy()
    np.testing.assert_array_equal(got, [nan, nan, nan, 0.0])


#: (a, b): a pole of Γ in one argument only (at zero, below it, in a or in b)
POLE_POINTS = [(0.0, 2.0), (-2.0, 0.5), (0.0, 1e-3), (3.5, 0.0), (1.0, 0.0), (2.5, -3.0)]


@pytest.mark.parametrize("a, b", POLE_POINTS)
def test_derivatives_in_the_other_argument_at_a_pole(a, b):
    """At a pole of Γ(a) ln|B| = ln|Γ(a)| + (ln|Γ(b)| - ln|Γ(a + b)|) with the first term constant
    in b: every derivative with db >= 1 is that of the analytic second term (TensorFlow's lbeta
    gives ∂_b ln|B(0, 2)| = 0, betaln-986f3c677e18); the ones with db = 0 keep ψ^(da-1)(a)'s pole
    (nan). Against mpmath's numerical differentiation of the second term."""
    pole_in_a = a <= 0 and a == math.floor(a)
    other = b if pole_in_a else a

    def analytic(u, v):  # the term of ln|B| that is not constant in the other argument
        w = v if pole_in_a else u
        return mpmath.log(abs(mpmath.gamma(w))) - mpmath.log(abs(mpmath.gamma(u + v)))

    with mpmath.workdps(60):
        for own, across in ((0, 1), (0, 2), (1, 1), (2, 1), (0, 3)):
            da, db = (own, across) if pole_in_a else (across, own)
            exact = mpmath.diff(analytic, (mpmath.mpf(a), mpmath.mpf(b)), (da, db))
            got = betaln_exact(a, b, da, db)
            assert abs(got - float(exact)) <= 2.0**-52 * max(abs(float(exact)), 1e-300), (a, b, da, db, other)
        for n in (1, 2):
            assert math.isnan(betaln_exact(a, b, *((n, 0) if pole_in_a else (0, n))))


def test_reverse_and_forward_mode_give_the_derivative_primitive():
    import reference.autograd.forward_ad as fwAD

    a = T.tensor([2.5, 1e6, 0.5], dtype=T.float64, requires_grad=True)
    b = T.tensor([1.5, 1e-3, 3.0], dtype=T.float64, requires_grad=True)
    ga, gb = T.autograd.grad(T.special.betaln(a, b).sum(), (a, b), create_graph=True)
    (h,) = T.autograd.grad(ga.sum(), b)
    ad, bd = a.detach(), b.detach()
    assert np.array_equal(ga.detach().numpy(), betaln_derivative(ad, bd, 1, 0).numpy())
    assert np.array_equal(gb.detach().numpy(), betaln_derivative(ad, bd, 0, 1).numpy())
    assert np.array_equal(h.numpy(), betaln_derivative(ad, bd, 1, 1).numpy())
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(T.special.betaln(ad, fwAD.make_dual(bd, T.ones_like(bd)))).tangent
    assert np.array_equal(tangent.numpy(), betaln_derivative(ad, bd, 0, 1).numpy())
    # ψ(a) - ψ(a + b) at a = 1e6, b = 1e-3: -1e-9 to the last bit, where digamma's difference loses 6 digits
    with mpmath.workdps(60):
        assert _ulps(ga.detach().numpy()[1], mpmath.psi(0, 1e6) - mpmath.psi(0, mpmath.mpf(1e6) + mpmath.mpf(1e-3))) <= 0.5


def test_dtypes():
    assert T.special.betaln(T.tensor([2]), T.tensor([1])).dtype == T.float32
    assert T.special.betaln(T.tensor([2.5], dtype=T.float64), 1.5).dtype == T.float64
