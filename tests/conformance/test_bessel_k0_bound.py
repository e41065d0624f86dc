"""K0 and e^x K0 below x = 2 are chbevl(x² - 2) - log(x/2)·I0(x) in every framework (Cephes), and
x/2 of a subnormal x rounds by up to half the smallest subnormal: log turns that into the absolute
error s/x (s the smallest subnormal), which the measured 6 ulps of the result do not cover
(reference/ops/rules/special.py, ``_k0_error``). PyTorch's float64 K0 at 3.3e-320 is off by exactly
that, 1.497e-4 (5e9 ulps of 38.9); at 2.2e-312 by 19 ulps of 717.73 (the seeded special campaign at
seed 3, ratio 1.07 against the 6-ulp bound)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import torch

import reference as T
from conformance.tolerance import judge_bounds
from reference.errors import Precision, bound_of

#: subnormal inputs whose x/2 rounds (odd mantissas), a normal one and a large one
X = np.array([3.3e-320, 2.2027e-312 * (1 + 2**-20), 7.77e-310, 0.5, 40.0])
SCALED = {"modified_bessel_k0": False, "scaled_modified_bessel_k0": True}


def _exact(x, scaled):
    mpmath.mp.dps = 40
    v = mpmath.besselk(0, mpmath.mpf(float(x)))
    return float(v * mpmath.exp(mpmath.mpf(float(x))) if scaled else v)


@pytest.mark.parametrize("name", sorted(SCALED))
def test_pytorch_k0_of_a_subnormal_is_within_the_bound(name):
    fn = getattr(T.special, name)
    (value,), (bound,), _ = bound_of(fn, [X], Precision(dtype="float64"))
    exact = np.array([_exact(x, SCALED[name]) for x in X])
    assert np.all(np.abs(value - exact) <= 1e-15 * np.abs(exact))
    observed = getattr(torch.special, name)(torch.tensor(X, dtype=torch.float64)).numpy()
    # the rounding of x/2 is really there: PyTorch is off by s/x at 3.3e-320
    assert abs(observed[0] - exact[0]) > 1e6 * np.spacing(exact[0])
    assert judge_bounds({"out": observed}, {"out": (value, bound)}, "float64")["verdict"] == "pass"


@pytest.mark.parametrize("name", sorted(SCALED))
def test_the_halving_term_is_only_as_large_as_the_rounding_of_x_over_2(name):
    fn = getattr(T.special, name)
    (value,), (bound,), _ = bound_of(fn, [X], Precision(dtype="float64"))
    halving = 2.0**-1074 / X
    # 2.5 times the term and 40 spacings (the bound 2·c·(u + u_ref)·|y| is 12 to 24 spacings): wrong
    planted = value + 2.5 * halving + 40 * np.spacing(value)
    for i in range(len(X)):
        one = value.copy()
        one[i] = planted[i]
        assert judge_bounds({"out": one}, {"out": (value, bound)}, "float64")["verdict"] == "fail", X[i]


def test_no_halving_term_where_subnormals_are_flushed():
    # flushed, x/2 is 0 and the kernel says inf: a departure (TensorFlow), not a term of the bound
    (value,), (flushed,), _ = bound_of(T.special.modified_bessel_k0, [X[:1]], Precision(dtype="float64", flush=True))
    assert flushed[0] < 1e-10
