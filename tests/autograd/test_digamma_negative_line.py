"""The reference's digamma on the negative line, away from the poles (issue 32: found by
``refgrad run --domains whole``, where JAX and TensorFlow were nearer the exact value than the
reference)."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T


def _ulps(got, exact):
    return abs(got - exact) / np.spacing(abs(exact))


def test_digamma_where_the_reflection_cancels_is_the_exact_value():
    mpmath = pytest.importorskip("mpmath")
    # psi(1 - x) = 6.79 and pi cot(pi x) = 7.46 leave -0.667: scipy's psi was 58 ulps off here
    xs = np.array([-889.873105934815, -10.3, -7.3, -0.5, -1 + 1.8e-15, -123456.789])
    got = T.digamma(T.tensor(xs)).detach().numpy()
    with mpmath.workdps(40):
        exact = [float(mpmath.psi(0, mpmath.mpf(float(x)))) for x in xs]
    assert all(_ulps(g, e) <= 0.5 for g, e in zip(got, exact)), [_ulps(g, e) for g, e in zip(got, exact)]


def test_digamma_keeps_pytorchs_values_at_the_poles_and_infinities():
    got = T.digamma(T.tensor(np.array([0.0, -0.0, -2.0, np.inf, 1.0]))).detach().numpy()
    assert got[0] == -np.inf and got[1] == np.inf and np.isnan(got[2]) and got[3] == np.inf
    assert got[4] == pytest.approx(-0.5772156649015329, rel=1e-15)
