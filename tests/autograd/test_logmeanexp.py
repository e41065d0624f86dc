"""reference.nn.functional.logmeanexp (jax.nn.logmeanexp: logsumexp(x, dim) - log n) against
mpmath: the value over one dim and over several, at magnitudes where e^x overflows float64, and its
gradient, the softmax over the reduced elements (the mean's 1/n cancels in the log)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import reference as T


def _exact(rows):
    with mpmath.workdps(40):
        return [float(mpmath.log(sum(mpmath.exp(mpmath.mpf(v)) for v in row) / len(row))) for row in rows]


@pytest.mark.parametrize("scale", [1.0, 1e-8, 800.0])
def test_value_over_one_and_several_dims(scale):
    x = np.random.default_rng(0).normal(size=(3, 4, 5)) * scale
    got = T.nn.functional.logmeanexp(T.tensor(x), [0, 2]).tolist()
    exact = _exact([x[:, j, :].ravel() for j in range(4)])
    # logsumexp's few ulps and log n's rounding, carried through the subtraction (|result| >= 1e-8 here)
    assert got == pytest.approx(exact, rel=8 * 2.0**-53, abs=4 * 2.0**-53 * np.log(15))
    kept = T.nn.functional.logmeanexp(T.tensor(x), -1, keepdim=True)
    assert tuple(kept.shape) == (3, 4, 1)


def test_gradient_is_the_softmax_of_the_reduced_elements():
    x = T.tensor([[0.5, -1.0, 3.0], [700.0, 701.0, 699.0]], dtype=T.float64, requires_grad=True)
    (g,) = T.autograd.grad(T.nn.functional.logmeanexp(x, 1).sum(), x)
    with mpmath.workdps(40):
        for row, grad in zip(x.tolist(), g.tolist()):
            total = sum(mpmath.exp(mpmath.mpf(v)) for v in row)
            assert grad == pytest.approx([float(mpmath.exp(mpmath.mpf(v)) / total) for v in row], rel=4 * 2.0**-53)
