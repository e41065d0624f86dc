"""The complex declarations of asin, acos, asinh, acosh, atan, atanh, expm1, log1p and rsqrt
(reference/errors/complex.py, issues 32/38) against mpmath on reference.errors.complex_grid's points
of the plane (moduli 1e-30 ... 1e30 in complex64, 1e-300 ... 1e300 in complex128, the axes and the
branch points approached from both sides, both signs of zero).

They kept the real declaration (1 ulp: 2u|y|), which the complex kernels exceed: JAX's complex64
expm1 is 7.7·2u|y| off at Im z = 1e12 (its real part expm1(x) cos y - 2 sin²(y/2) rounds terms up to
twice the modulus), the reference's own complex128 asin 1.76·2u|y| (NumPy's, glibc's casin).
"""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from conformance.tolerance import complex_parts, judge_bounds
from reference.errors import Precision, bound_of
from reference.errors.complex import COMPLEX_BOUNDS
from reference.errors.complex_grid import at_pole, exact, grid, on_cut, part_errors

OPS = ("asin", "acos", "asinh", "acosh", "atan", "atanh", "expm1", "log1p", "rsqrt")
#: JAX's names (jax.numpy has no rsqrt of a complex number; jax.lax.rsqrt)
JAX = {"asin": "arcsin", "acos": "arccos", "asinh": "arcsinh", "acosh": "arccosh", "atan": "arctan"}
JAX.update(atanh="arctanh", expm1="expm1", log1p="log1p")


def _points(name, dtype, step):
    """The grid's points off the cut's signed zeros and the poles, with normal (or zero) parts: the
    subnormal ones are the underflow term's region (and PyTorch's log1p is nan at a subnormal
    imaginary part with a tiny real one, torch-complex-log1p-nan-at-a-subnormal-imaginary-part)."""
    z = grid(dtype, step)
    part = np.finfo(np.float32 if dtype == np.complex64 else np.float64)
    normal = [(p == 0) | (np.abs(p) >= part.tiny) for p in (z.real, z.imag)]
    return z[~on_cut(name, z) & ~at_pole(name, z) & normal[0] & normal[1]]


@pytest.mark.parametrize("name", OPS)
def test_the_declaration_covers_the_reference_s_own_kernel(name):
    """The reference's complex128 kernel (NumPy's, or its own log1p) within c·2u|y| + a·u per part."""
    z = _points(name, np.complex128, 30)
    want = exact(name, z)
    got = getattr(T, name)(T.tensor(z)).numpy()
    bound = COMPLEX_BOUNDS[name]
    mod = np.abs(want)
    allowed = bound.ulps + np.divide(bound.absolute, 2 * mod, out=np.full(mod.shape, np.inf), where=mod > 0)
    for errors in part_errors(got, want, np.complex128):
        assert np.all(errors <= allowed), (name, z[np.argmax(errors - allowed)], errors.max())


def _judged(name, z, answer):
    """The campaign's judgement of ``answer`` for ``name`` at ``z`` in complex64: the reference's value
    and bound (the tracker's, bound_of), each part within it plus one ulp of the larger part."""
    values, bounds, _ = bound_of(lambda a: getattr(T, name)(a), [z.astype(np.complex128)], Precision("float32"))
    observed, expected = complex_parts({"y": answer}, {"y": (values[0], bounds[0])}, "float32")
    return judge_bounds(observed, expected, "float32"), values[0], bounds[0]


def _frameworks(name):
    import jax.numpy as jnp
    import torch

    yield "torch", lambda z: getattr(torch, name)(torch.from_numpy(z)).numpy()
    if name in JAX:
        yield "jax", lambda z: np.asarray(getattr(jnp, JAX[name])(jnp.asarray(z)))


@pytest.mark.parametrize("name", OPS)
def test_the_frameworks_complex64_answers_are_within_the_bound(name):
    """PyTorch's and JAX's complex64 answers pass the campaign's judgement on the grid (JAX's expm1
    did not with the real declaration: 7.7·2u|y| at -1.8e-4 - 1e12i)."""
    z = _points(name, np.complex64, 3)
    for label, fn in _frameworks(name):
        record, _, _ = _judged(name, z, fn(z))
        assert record["verdict"] == "pass", (label, record["worst"])


@pytest.mark.parametrize("name", OPS)
def test_a_planted_error_twice_the_declaration_is_caught(name):
    """An answer whose real part is off by twice the declared own error (2·2c·u|y| + 2a·u in
    complex64) is rejected: the declaration leaves the judgement able to fail."""
    z = _points(name, np.complex64, 3)
    z = z[(np.abs(z) > 1e-3) & (np.abs(z) < 1e3)]  # where the own error dominates the bound
    want = exact(name, z)
    bound = COMPLEX_BOUNDS[name]
    u = 2.0**-24
    planted = want + 2 * (2 * bound.ulps * u * np.abs(want) + bound.absolute * u)
    record, _, _ = _judged(name, z, planted.astype(np.complex64))
    assert record["verdict"] == "fail"
    assert record["failing_elements"] > len(z) // 2


def test_the_tracker_carries_the_complex_declaration():
    """The reference's bound on complex asin is the declared 8u|y| (it was the real declaration's 2u)."""
    z = np.array([0.5 + 0.25j])
    _, values, bounds = _judged("asin", z.astype(np.complex64), np.zeros(1, np.complex64))
    u = 2.0**-24 + 2.0**-53  # the framework's and the float64 reference's rounding
    assert bounds[0] == pytest.approx(2 * COMPLEX_BOUNDS["asin"].ulps * u * abs(values[0]), rel=1e-2)


def test_the_reference_s_complex_sigmoid_is_e_to_the_z_far_left():
    """sigmoid z = e^z/(1 + e^z) where Re z < 0: 1/(1 + e^-z) was nan at -2361.6 + 4e-38i (e^-z an
    infinity with an infinite imaginary part; sigmoid-3f6864182d72, the seeded complex run at seed 0,
    where JAX and TensorFlow answer 0); elsewhere on the left it agrees with mpmath to an ulp."""
    import mpmath

    z = np.array([-2361.642333984375 + 4.077381683460121e-38j, -800 - 3j, -30 + 2j, -0.5 + 0.25j, -1e-3 - 3.1j])
    got = T.sigmoid(T.tensor(z)).numpy()
    assert got[0] == 0 and got[1] == 0  # e^-800 underflows
    with mpmath.workprec(200):
        want = np.array([complex(1 / (1 + mpmath.exp(-mpmath.mpc(v.real, v.imag)))) for v in z])
    assert np.all(np.abs(got - want) <= 4 * 2.0**-53 * np.abs(want) + 1e-300)
