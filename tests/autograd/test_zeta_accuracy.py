"""The reference's Hurwitz zeta function (reference/ops/rules/special_zeta.py) against the mathematics,
by methods independent of the kernel's Euler-Maclaurin sum: the values and s-derivatives against
mpmath's own zeta(s, a, derivative) at 120 digits (which, unlike at 40, is right where ζ is small),
the q-derivatives against mpmath's numerical differentiation of it in q (not the identity
∂_q ζ(s, q) = -s ζ(s + 1, q) the kernel uses) and the mixed one against mpmath.diff in both; every
order the conformance checks use, within an ulp. Then the places mpmath's zeta at 40 digits gets
wrong, the limits and special values, and the reverse and forward modes reading the same primitive."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T
from reference.ops.rules.special_zeta import derivative, zeta_exact

mpmath = pytest.importorskip("mpmath", reason="exact values")

#: (s, q): the bulk, s near its pole, q below 1 (the s-derivative's cancellation), q large, s large
POINTS = [(3.0, 1.5), (1.5, 0.3), (1.001, 2.5), (7.25, 0.05), (2.5, 1e6), (31.4794, 442.4), (60.3, 3.7)]


def _ulps(got, exact):
    exact = mpmath.mpf(exact)
    scale = max(abs(exact), mpmath.mpf(2.0**-1022))
    return float(abs(mpmath.mpf(got) - exact) / scale) / 2.0**-52


@pytest.mark.parametrize("s, q", POINTS)
def test_values_and_s_derivatives_within_an_ulp_of_mpmath(s, q):
    with mpmath.workdps(120):
        for ds in (0, 1, 2):
            exact = mpmath.zeta(s, q, ds)
            assert _ulps(zeta_exact(s, q, ds, 0), exact) <= 1.0, (s, q, ds)


@pytest.mark.parametrize("s, q", POINTS)
def test_q_and_mixed_derivatives_within_an_ulp_of_numerical_differentiation(s, q):
    with mpmath.workdps(120):
        for dq in (1, 2):
            exact = mpmath.diff(lambda t: mpmath.zeta(s, t), q, dq)
            assert _ulps(zeta_exact(s, q, 0, dq), exact) <= 1.0, (s, q, dq)
        exact = mpmath.diff(lambda a, t: mpmath.zeta(a, t), (s, q), (1, 1))
        assert _ulps(zeta_exact(s, q, 1, 1), exact) <= 1.0, (s, q)


def test_where_mpmath_at_forty_digits_is_wrong():
    # mpmath's Euler-Maclaurin loop stops at an absolute tolerance: at 40 digits ζ(31.4794, 442.4) is
    # wrong by 1e-9 relative; the reference's sum is right to the last bit
    with mpmath.workdps(40):
        wrong = mpmath.zeta(31.4794, 442.4)
    with mpmath.workdps(120):
        exact = mpmath.zeta(31.4794, 442.4)
    assert _ulps(float(wrong), exact) > 1e5
    assert _ulps(zeta_exact(31.4794, 442.4, 0, 0), exact) <= 0.5


def test_large_s_sums_the_first_terms():
    # s·ln(1 + 1/q) large: (q + k)^-s falls so fast that the first terms are the sum
    assert zeta_exact(1e300, 2.0, 0, 0) == 0.0 and zeta_exact(1e300, 0.5, 0, 0) == math.inf
    with mpmath.workdps(60):
        exact = mpmath.zeta(200.0, 1.0, 1)  # -ln2·2^-200 - ln3·3^-200 - ...: term 0 is 0
        assert _ulps(zeta_exact(200.0, 1.0, 1, 0), exact) <= 0.5
        assert _ulps(zeta_exact(1e4, 5.0, 0, 0), mpmath.zeta(1e4, 5.0)) <= 0.5


def test_the_direct_sum_runs_until_its_terms_fall_below_the_tail():
    # the direct sum stops at K with (q + K)^-s < e^-110 (q + 1)^-s: K >= (q + 1) e^(110/s) - q,
    # 21 terms at (166, 17.15), where stopping after 2 lost 1e-8 of ζ (the seeded whole-domain run at
    # seed 1: JAX's ∂_s ζ was right, the reference not)
    s, q = 165.9794445965335, 17.15459065251976
    with mpmath.workdps(120):
        for ds in (0, 1, 2):
            assert _ulps(zeta_exact(s, q, ds, 0), mpmath.zeta(s, q, ds)) <= 0.5, ds
        assert _ulps(zeta_exact(40.0, 3.0, 0, 0), mpmath.zeta(40.0, 3.0)) <= 0.5


def test_limits_and_special_values():
    nan, inf = math.nan, math.inf
    s = T.tensor([1.0, 0.5, 2.0, 2.0, 2.0, 2.0, inf, inf, inf, nan, 2.0], dtype=T.float64)
    q = T.tensor([2.0, 1.0, 0.0, -1.0, -1.5, inf, 2.0, 1.0, 0.5, 1.0, -0.0], dtype=T.float64)
    got = T.special.zeta(s, q).numpy()
    # PyTorch's values: inf at s = 1 and at the poles q = 0, -1; nan for s < 1; the real sum at
    # q = -1.5; the limits at q = inf (0; PyTorch nan) and s = inf (0, 1, inf by q)
    with mpmath.workdps(30):
        at_minus = float(mpmath.zeta(2, -1.5))
    expected = [inf, nan, inf, inf, at_minus, 0.0, 0.0, 1.0, inf, nan, inf]
    np.testing.assert_array_equal(got, expected)
    # at s = 1 the q-derivative is finite (-ζ(2, q), PyTorch's -x·ζ(x + 1, q)), the s-derivative -inf
    one, two = T.tensor([1.0], dtype=T.float64), T.tensor([2.0], dtype=T.float64)
    with mpmath.workdps(30):
        assert derivative(one, two, 0, 1).numpy()[0] == float(-mpmath.zeta(2, 2))
    assert derivative(one, two, 1, 0).numpy()[0] == -inf
    # s-derivatives at q < 0 are complex (ln of a negative base): nan; q-derivatives real
    assert np.isnan(derivative(two, T.tensor([-1.5], dtype=T.float64), 1, 0).numpy()[0])
    assert np.isfinite(derivative(two, T.tensor([-1.5], dtype=T.float64), 0, 1).numpy()[0])


def test_reverse_and_forward_mode_give_the_derivative_primitive():
    import reference.autograd.forward_ad as fwAD

    s = T.tensor([1.5, 3.0, 12.5], dtype=T.float64, requires_grad=True)
    q = T.tensor([0.3, 2.0, 14.0], dtype=T.float64, requires_grad=True)
    gs, gq = T.autograd.grad(T.special.zeta(s, q).sum(), (s, q), create_graph=True)
    (h,) = T.autograd.grad(gq.sum(), s)
    sd, qd = s.detach(), q.detach()
    assert np.array_equal(gs.detach().numpy(), derivative(sd, qd, 1, 0).numpy())
    assert np.array_equal(gq.detach().numpy(), derivative(sd, qd, 0, 1).numpy())
    assert np.array_equal(h.numpy(), derivative(sd, qd, 1, 1).numpy())
    with fwAD.dual_level():
        dual = fwAD.make_dual(sd, T.ones_like(sd))
        tangent = fwAD.unpack_dual(T.special.zeta(dual, qd)).tangent
    assert np.array_equal(tangent.numpy(), derivative(sd, qd, 1, 0).numpy())


def test_dtypes_like_pytorch():
    # integers promote to the default dtype; float16 and bfloat16 have no kernel ("zeta_cpu")
    assert T.special.zeta(T.tensor([3]), T.tensor([2])).dtype == T.float32
    with pytest.raises(NotImplementedError, match="zeta_cpu"):
        T.special.zeta(T.tensor([3.0], dtype=T.float16), T.tensor([2.0], dtype=T.float16))
    single = T.special.zeta(T.tensor([3.0], dtype=T.float32), 2.0)
    with mpmath.workdps(30):
        assert single.numpy()[0] == np.float32(float(mpmath.zeta(3, 2)))
