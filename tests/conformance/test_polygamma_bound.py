"""polygamma(n, +inf) is the limit 0 (the reference's ±0, reference/ops/rules/pointwise.py), and the
bound there must judge it: where the input carries an error (an intermediate, a cotangent), that
error is inf or nan at +inf, and the propagated term |polygamma(n + 1, x)|·e was 0·inf = nan, so
the element was unjudged and a framework answering nan or 1 there passed."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from conformance.tolerance import judge_bounds
from reference.errors import Precision, bound_of

X = np.array([np.inf, 2.0, 7.5])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_polygamma_at_plus_infinity_is_judged(n, dtype):
    # exp(x) carries an error (inf at x = +inf) into polygamma's input
    (value,), (bound,), _ = bound_of(lambda t: T.polygamma(n, T.exp(t)), [X], Precision(dtype=dtype))
    assert value[0] == 0 and np.isfinite(bound).all()
    for zero in (0.0, -0.0):
        observed = np.array([zero, *value[1:]])
        assert judge_bounds({"out": observed}, {"out": (value, bound)}, dtype)["verdict"] == "pass"
    for wrong in (np.nan, 1.0, 1e-30, np.inf):
        planted = np.array([wrong, *value[1:]])
        verdict = judge_bounds({"out": planted}, {"out": (value, bound)}, dtype)
        assert verdict["verdict"] == "fail", (wrong, verdict)
