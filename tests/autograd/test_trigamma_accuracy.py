"""Why polygamma(1, x), digamma's gradient and lgamma's second derivative depart from PyTorch by
~1e-10 (recorded in tests/opinfo/expected.json): ATen's CPU ``calc_trigamma`` shifts x by the
recurrence psi1(x) = psi1(x + 1) + 1/x^2 only six times and then sums the asymptotic series
1/x + 1/(2x^2) + B2/x^3 + B4/x^5 + B6/x^7, dropping the B8/x^9 term and beyond: at x ~ 6.5 the
truncation error is |B8|/x^9 ~ 1e-9. The reference (SciPy's polygamma, Cephes' Hurwitz zeta) is
accurate to a few ulps, as checked here against mpmath at 40 digits; matching PyTorch would mean
copying its truncation error into the oracle."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T

mpmath = pytest.importorskip("mpmath")


def _exact(n, x):
    with mpmath.workdps(40):
        return float(mpmath.polygamma(n, mpmath.mpf(float(x))))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_polygamma_is_accurate_to_a_few_ulps(n):
    xs = np.concatenate([np.random.default_rng(n).uniform(-9.5, 9.5, 80), [0.33, 6.5, 7.25, 30.0]])
    xs = xs[np.abs(xs - np.round(xs)) > 1e-3]  # away from the poles
    got = T.polygamma(n, T.tensor(xs)).numpy()
    want = np.array([_exact(n, x) for x in xs])
    rel = np.abs(got - want) / np.abs(want)
    assert rel.max() < 64 * np.finfo(np.float64).eps, (xs[np.argmax(rel)], rel.max())


def test_the_departure_is_pytorchs_truncation_error():
    torch = pytest.importorskip("torch")
    x = 6.75  # after ATen's six recurrence steps its series starts at 12.75
    want = _exact(1, x)
    ref = float(T.polygamma(1, T.tensor(x, dtype=T.float64)))
    aten = float(torch.polygamma(1, torch.tensor(x, dtype=torch.float64)))
    assert abs(ref - want) <= 4 * np.finfo(np.float64).eps * want
    # ATen's error: the dropped terms of its series at x + 6 (B8/x^9 leads; it is a few ulps larger)
    y = x + 6
    dropped = (1 / 30) / y**9
    assert abs(aten - want) > 100 * abs(ref - want)
    assert abs(aten - want) <= 2 * dropped
