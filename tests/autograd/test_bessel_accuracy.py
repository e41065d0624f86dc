"""The reference's Bessel functions (reference/ops/rules/special.py) against the mathematics:
every derivative order a primitive, checked against mpmath's numerical differentiation of the
function at 30 digits (independent of the closed forms the kernels use), the values correctly
rounded next to the zeros where scipy's Cephes kernels lose their relative accuracy, the limits at
0 and infinity, and the reverse and forward modes reading the same primitive."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T
from reference.ops.rules.special import BESSEL, derivative_of

mpmath = pytest.importorskip("mpmath", reason="exact values")

_MP = {"j": mpmath.besselj, "y": mpmath.bessely, "k": mpmath.besselk,
       "ke": lambda n, t: mpmath.exp(t) * mpmath.besselk(n, t)}  # fmt: skip
POINTS = [0.3, 7.1]


def _ulps(got, exact):
    exact = mpmath.mpf(exact)
    scale = max(abs(exact), mpmath.mpf(2.0**-1022))
    return float(abs(mpmath.mpf(got) - exact) / scale) / 2.0**-52


@pytest.mark.parametrize("name", sorted(BESSEL))
@pytest.mark.parametrize("order", [1, 2])
def test_each_derivative_order_within_an_ulp_of_mpmath_diff(name, order):
    kind, n = BESSEL[name]
    x = T.tensor(POINTS, dtype=T.float64)
    got = derivative_of(name, order, x).numpy()
    with mpmath.workdps(30):
        for v, g in zip(POINTS, got):
            exact = mpmath.diff(lambda t: _MP[kind](n, t), mpmath.mpf(v), order)
            assert _ulps(float(g), exact) <= 1.0, (name, order, v, float(g), exact)


@pytest.mark.parametrize("name", sorted(BESSEL))
def test_values_correctly_rounded_next_to_the_zeros(name):
    kind, n = BESSEL[name]
    zeros = {"j": mpmath.besseljzero, "y": mpmath.besselyzero}.get(kind)
    with mpmath.workdps(40):
        centres = [float(zeros(n, k)) for k in (1, 2)] if zeros else [0.5, 20.0]
        xs = np.array([np.nextafter(c, d) for c in centres for d in (-np.inf, np.inf)] + centres)
        got = getattr(T.special, name)(T.tensor(xs, dtype=T.float64)).numpy()
        for v, g in zip(xs, got):
            assert _ulps(float(g), _MP[kind](n, mpmath.mpf(float(v)))) <= 0.5, (name, v)


def test_scipy_alone_would_not_be_accurate_next_to_a_zero():
    # the reason the kernels are mpmath's: Cephes j0 is an absolute-error algorithm
    scipy_special = pytest.importorskip("scipy.special")
    with mpmath.workdps(40):
        x = float(mpmath.besseljzero(0, 3))
        assert _ulps(float(scipy_special.j0(x)), mpmath.besselj(0, x)) > 100


def test_limits_and_special_values():
    S = T.special
    pts = T.tensor([0.0, math.inf, -math.inf, math.nan, -1.0], dtype=T.float64)
    j0, j1 = S.bessel_j0(pts).numpy(), S.bessel_j1(pts).numpy()
    assert j0[0] == 1.0 and j1[0] == 0.0 and j0[1] == j0[2] == j1[1] == j1[2] == 0.0
    assert math.isnan(j0[3]) and j1[4] == -S.bessel_j1(T.tensor([1.0], dtype=T.float64)).numpy()[0]
    for name in ("bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
                 "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"):  # fmt: skip
        v = getattr(S, name)(pts).numpy()
        at_zero = -math.inf if name.startswith("bessel_y") else math.inf
        assert v[0] == at_zero and v[1] == 0.0 and math.isnan(v[2]) and math.isnan(v[3]) and math.isnan(v[4])
    # derivatives at 0 from the right: Y^(k) ~ (-1)^(k+1) inf, K^(k) ~ (-1)^k inf
    zero = T.tensor([0.0], dtype=T.float64)
    for k in (1, 2, 3):
        assert derivative_of("bessel_y0", k, zero).numpy()[0] == (-1) ** (k + 1) * math.inf
        assert derivative_of("modified_bessel_k1", k, zero).numpy()[0] == (-1) ** k * math.inf
        assert derivative_of("scaled_modified_bessel_k0", k, zero).numpy()[0] == (-1) ** k * math.inf


@pytest.mark.parametrize("name", sorted(BESSEL))
def test_reverse_and_forward_mode_give_the_derivative_primitive(name):
    import reference.autograd.forward_ad as fwAD

    x = T.tensor([0.7, 3.0, 12.5], dtype=T.float64, requires_grad=True)
    fn = getattr(T.special, name)
    (g,) = T.autograd.grad(fn(x).sum(), x, create_graph=True)
    (h,) = T.autograd.grad(g.sum(), x)
    d1 = derivative_of(name, 1, x.detach()).numpy()
    d2 = derivative_of(name, 2, x.detach()).numpy()
    assert np.array_equal(g.detach().numpy(), d1) and np.array_equal(h.numpy(), d2)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x.detach(), T.ones_like(x.detach()))
        tangent = fwAD.unpack_dual(fn(dual)).tangent
    assert np.array_equal(tangent.numpy(), d1)


def test_half_precision_raises_like_pytorch_and_integers_promote():
    with pytest.raises(NotImplementedError, match="bessel_j0_cpu"):
        T.special.bessel_j0(T.tensor([1.0], dtype=T.float16))
    assert T.special.modified_bessel_k0(T.tensor([1, 2])).dtype == T.float32


# ---- e^x K0, e^x K1: the tails (Leibniz's sum below x = 30, the asymptotic series above) -----------
#: small x, both sides of the switch at 30, and the tail where K itself underflows float64 (x > 705)
_SCALED_GRID = [1e-300, 1e-8, 0.01, 0.9, 4.0, 17.0, 29.5, 30.0, 30.5, 44.0, 100.0, 700.0, 1e4, 1e12,
                1e150, 1e300]  # fmt: skip


def _scaled_exact(n, k, v):
    """The k-th derivative of e^x K_n(x) in closed form, independent of the kernel's two methods:
    e^x sum_j C(k, j) K_n^(j), K_n^(j) = (-1/2)^j sum_i C(j, i) K_|n-j+2i| (DLMF 10.29.5), each
    K of mpmath at enough digits for the cancellation ((2x)^-k relative) and e^x's size."""
    with mpmath.workdps(40 + 3 * k + int(k * math.log10(max(v, 1.0)))):
        x = mpmath.mpf(v)
        total = sum(
            math.comb(k, j) * (-0.5) ** j * sum(math.comb(j, i) * mpmath.besselk(abs(n - j + 2 * i), x)
                                                for i in range(j + 1))
            for j in range(k + 1)
        )  # fmt: skip
        return mpmath.exp(x) * total


@pytest.mark.parametrize("n", [0, 1])
@pytest.mark.parametrize("order", [0, 1, 2])
def test_scaled_k_correctly_rounded_from_tiny_to_huge_x(n, order):
    name = f"scaled_modified_bessel_k{n}"
    xs = [v for v in _SCALED_GRID if v <= 1e4 or order == 0]  # mpmath's besselk at 1e12 and up: order 0 only
    x = T.tensor(xs, dtype=T.float64)
    got = (getattr(T.special, name)(x) if order == 0 else derivative_of(name, order, x)).numpy()
    for v, g in zip(xs, got):
        exact = _scaled_exact(n, order, v)
        if abs(exact) > np.finfo(np.float64).max:  # K1e'(1e-300) = -1e600: rounds to -inf
            assert g == float(exact), (name, order, v)
            continue
        assert _ulps(float(g), exact) <= 0.5, (name, order, v, float(g))


def test_scaled_k_where_the_unscaled_k_underflows():
    # e^x K0(x) ~ sqrt(pi/(2x)): K0(700) = 7.7e-306 and K0(750) underflows, the scaled one is 0.0458
    x = T.tensor([700.0, 750.0, 1e300], dtype=T.float64)
    k0e = T.special.scaled_modified_bessel_k0(x).numpy()
    assert T.special.modified_bessel_k0(x).numpy()[1] == 0.0
    assert abs(k0e[1] - math.sqrt(math.pi / 1500)) < 1e-3 * k0e[1]
    assert k0e[2] == float(mpmath.sqrt(mpmath.pi / 2e300) * (1 - mpmath.mpf(1) / 8e300))


def test_scaled_k_derivatives_agree_across_the_switch_to_the_asymptotic_series():
    # the two methods on both sides of x = 30, each against the closed form at 40+ digits: a wrong
    # coefficient, or the series stopped at a fixed 10 terms (2e-13 relative at x = 30), would be off
    # by far more than half an ulp
    from reference.ops.rules.special import _scaled_k

    for v in (30.0, 29.999999999999996, 31.0):
        for n in (0, 1):
            for k in (1, 2):
                with mpmath.workdps(30):
                    got = float(_scaled_k(n, k, mpmath.mpf(v)))
                assert _ulps(got, _scaled_exact(n, k, v)) <= 0.5, (n, k, v)
