"""reference.nn.functional.standardize (jax.nn.standardize) against mpmath: the value over one dim
and over several, with the mean far from 0 (where JAX's default E[x²] - E[x]² cancels: the
reference's two-pass form does not), and the derivative, checked by the identity that a standardized
row is unchanged by a shift of the row (the gradient of any output sums to 0 along the row)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import reference as T


def _exact(row, eps):
    with mpmath.workdps(50):
        v = [mpmath.mpf(a) for a in row]
        mean = sum(v) / len(v)
        var = sum((a - mean) ** 2 for a in v) / len(v)
        return [float((a - mean) / mpmath.sqrt(var + eps)) for a in v]


@pytest.mark.parametrize("offset", [0.0, 1e6])
@pytest.mark.parametrize("eps", [1e-5, 0.5])
def test_value_against_mpmath(offset, eps):
    x = np.random.default_rng(1).normal(size=(3, 4, 5)) + offset
    got = np.asarray(T.nn.functional.standardize(T.tensor(x), [0, 2], eps=eps).tolist())
    for j in range(4):
        exact = _exact(x[:, j, :].ravel(), eps)
        # two-pass: x - mean exact to a few ulps of the offset's size, relative to the row's spread
        tol = 16 * 2.0**-53 * (1 + offset)
        assert got[:, j, :].ravel() == pytest.approx(exact, abs=tol)
    last = T.nn.functional.standardize(T.tensor(x), -1)
    assert np.asarray(last.tolist()) == pytest.approx(
        np.array([[_exact(x[i, j], 1e-5) for j in range(4)] for i in range(3)]), abs=16 * 2.0**-53 * (1 + offset)
    )


def test_gradient_sums_to_zero_along_the_standardized_dims():
    x = T.tensor(np.random.default_rng(2).normal(size=(2, 6)), requires_grad=True)
    w = T.tensor(np.random.default_rng(3).normal(size=(2, 6)))
    (g,) = T.autograd.grad((T.nn.functional.standardize(x, 1) * w).sum(), x)
    assert np.abs(np.asarray(g.sum(1).tolist())).max() < 1e-14
