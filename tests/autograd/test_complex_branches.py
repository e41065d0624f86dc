"""Complex acosh' and log1p where the textbook formula picks the wrong branch or cancels."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T

mpmath = pytest.importorskip("mpmath", reason="exact values (mpmath comes with torch's sympy)")


@pytest.mark.parametrize("z", [-3 + 0.1j, -0.5 - 2j, 2 - 0.5j, 0.3 + 2j, -1.5 - 1e-3j])
def test_acosh_gradient_is_the_conjugate_derivative_on_every_half_plane(z):
    """PyTorch's convention: the VJP of a holomorphic f with cotangent 1 is conj(f'(z)). rsqrt(z^2 - 1)
    is -f'(z) where Re z < 0; 1 / (sqrt(z - 1) sqrt(z + 1)) is f'(z) everywhere off the cut."""
    mpmath.mp.dps = 30
    exact = complex(mpmath.diff(mpmath.acosh, mpmath.mpc(z)))
    x = T.tensor(np.array([z]), requires_grad=True)
    T.acosh(x).backward(T.tensor(np.array([1 + 0j])))
    assert abs(x.grad.numpy()[0] - np.conj(exact)) <= 1e-13 * abs(exact)


def test_real_acosh_gradient_near_the_branch_point_and_far_out():
    x = T.tensor(np.array([1 + 2.0**-40, 1e200]), requires_grad=True)
    T.acosh(x).sum().backward()
    g = x.grad.numpy()
    mpmath.mp.dps = 40
    exact = [1 / mpmath.sqrt(mpmath.mpf(v) ** 2 - 1) for v in (1 + 2.0**-40, 1e200)]
    assert abs(g[0] - float(exact[0])) <= 2 * 2.0**-52 * float(exact[0])  # x*x - 1 would cancel
    assert abs(g[1] - float(exact[1])) <= 2 * 2.0**-52 * float(exact[1])  # x*x would overflow: 0


@pytest.mark.parametrize("z", [1e-20 + 1e-20j, 3e-9 - 2e-9j, 0.3 - 0.2j, -0.4 + 0.1j, 3 + 4j])
def test_complex_log1p_keeps_the_real_part_of_a_tiny_argument(z):
    """NumPy's complex log1p is log(1 + z): its real part is 0 at 1e-20 + 1e-20j (PyTorch: 1e-20)."""
    mpmath.mp.dps = 40
    exact = complex(mpmath.log1p(mpmath.mpc(z)))
    got = T.log1p(T.tensor(np.array([z]))).numpy()[0]
    assert abs(got.real - exact.real) <= 4 * 2.0**-52 * abs(exact.real)
    assert abs(got.imag - exact.imag) <= 4 * 2.0**-52 * abs(exact.imag)


@pytest.mark.parametrize("z", [complex(-3, 0.0), complex(-3, -0.0), complex(-1.5, -0.0), complex(0.5, -0.0)])
def test_acosh_derivatives_on_the_cut_follow_the_zeros_side(z):
    """On acosh's cut (the real axis below 1) the sign of a zero imaginary part names the side, as in
    acosh's own value (NumPy, C99): the first derivative is the limit from that side (mpmath at
    z +- 1e-25 i), the forward-over-forward second derivative -z f'(z)^3 of it. Below -1 both square
    roots of 1 / (sqrt(z - 1) sqrt(z + 1)) have the cut; z + 1 rounded -0 to +0 there, which flipped
    the derivative's sign at x - 0j (it was +0.354 at -3 - 0j, the limit is -0.354)."""
    mpmath.mp.dps = 40
    side = 1e-25 if math.copysign(1.0, z.imag) > 0 else -1e-25
    d1 = complex(1 / (mpmath.sqrt(mpmath.mpc(z.real, side) - 1) * mpmath.sqrt(mpmath.mpc(z.real, side) + 1)))
    d2 = -z.real * d1**3
    x = T.tensor(np.array([z]), requires_grad=True)
    T.acosh(x).backward(T.tensor(np.array([1 + 0j])))
    assert abs(x.grad.numpy()[0] - np.conj(d1)) <= 1e-13 * abs(d1)
    t = T.tensor(np.array([1 + 0j]))
    first = T.func.jvp(T.acosh, (T.tensor(np.array([z])),), (t,))[1].numpy()[0]
    second = T.func.jvp(lambda a: T.func.jvp(T.acosh, (a,), (t,))[1], (T.tensor(np.array([z])),), (t,))[1]
    assert abs(first - d1) <= 1e-13 * abs(d1)
    assert abs(second.numpy()[0] - d2) <= 1e-13 * abs(d2)


@pytest.mark.parametrize(
    "z",
    [
        -2.556158693107864e-309j,
        1e-310 + 1e-310j,
        3e-320 - 2e-320j,
        -1.1e-308 - 5.8e-310j,
        1e308 + 1e308j,
        3 + 4j,
    ],
)
def test_complex_sgn_is_a_unit_at_subnormal_and_huge_moduli(z):
    """sgn z = z/|z| has modulus 1 for every finite nonzero z. NumPy's complex division by a subnormal
    |z| + 0i overflows (sgn(-2.556e-309i) was nan - inf i), and |z| rounded to the subnormal grid is
    off by up to 1e-4 relative at 3e-320 (complex cwhole draws, values 'tiny', sgn-4b64335372d0)."""
    mpmath.mp.dps = 40
    w = mpmath.mpc(z.real, z.imag)
    exact = complex(w / abs(w))
    got = T.sgn(T.tensor(np.array([z]))).numpy()[0]
    assert abs(got.real - exact.real) <= 2 * 2.0**-53 and abs(got.imag - exact.imag) <= 2 * 2.0**-53
