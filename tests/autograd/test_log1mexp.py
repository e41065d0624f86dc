"""log1mexp's exact kernel (reference/ops/rules/special_log1mexp.py) at its special points and in
the orders the accuracy table (tests/autograd/exact_special.py) does not reach: the limits at the
pole 0 from either side, at ±inf, nan below the domain; and the Eulerian-number form of the third
and fourth derivatives against mpmath's derivative of 1/(e^x - 1) (Li_{-2}, Li_{-3})."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import reference as T
from reference.ops.rules.special_log1mexp import log1mexp_exact


def _orders(values):
    """The value and first two derivatives, by the public function's reverse mode (the rule's VJPs
    call the derivative primitive at each order)."""
    x = T.tensor(values, dtype=T.float64, requires_grad=True)
    y = T.nn.functional.log1mexp(x)
    grads = [y]
    for _ in range(2):
        (g,) = T.autograd.grad(grads[-1].sum(), x, create_graph=True)
        grads.append(g)
    return [g.tolist() for g in grads]


def test_limits_at_the_pole_and_at_infinity():
    y, d1, d2 = _orders([0.0, -0.0, math.inf])
    assert y == [-math.inf, -math.inf, 0.0] and math.copysign(1, y[2]) == -1  # 1 - e^-x below 1
    # f' = 1/(e^x - 1) ~ 1/x, f'' ~ -1/x²: from above +inf, -inf; from below (-0) -inf, -inf
    assert d1 == [math.inf, -math.inf, 0.0]
    assert d2[:2] == [-math.inf, -math.inf] and d2[2] == 0.0


def test_below_the_domain_the_value_is_nan_and_the_derivatives_the_formula():
    y, d1, d2 = _orders([-1.0, -math.inf, math.nan])
    assert all(math.isnan(v) for v in y)
    assert d1[0] == pytest.approx(1 / math.expm1(-1.0), rel=2**-52) and d1[1] == -1.0
    assert d2[0] == pytest.approx(-math.exp(-1.0) / math.expm1(-1.0) ** 2, rel=2**-52) and d2[1] == 0.0
    assert math.isnan(d1[2]) and math.isnan(d2[2])


@pytest.mark.parametrize("x", [1e-300, 1e-8, 0.3, math.log(2.0), 5.0, 300.0, 740.0])
@pytest.mark.parametrize("order", [3, 4])
def test_higher_orders_against_mpmath(x, order):
    with mpmath.workdps(60):
        # f^(n) = d^(n-1)/dx^(n-1) 1/(e^x - 1); mpmath.diff with a relative step (x down to 1e-300)
        exact = mpmath.diff(lambda t: 1 / mpmath.expm1(t), mpmath.mpf(x), order - 1, h=mpmath.mpf(x) * 1e-20)
    got = log1mexp_exact(x, order)
    if math.isinf(float(exact)):
        assert got == float(exact)
    else:
        assert got == pytest.approx(float(exact), rel=2**-52, abs=5e-324)


def test_float32_rounds_the_float64_kernel_once():
    x = [0.25, 0.6931471805599453, 3.0]
    y32 = T.nn.functional.log1mexp(T.tensor(x, dtype=T.float32)).tolist()
    assert y32 == [float(np.float32(log1mexp_exact(float(np.float32(v)), 0))) for v in x]
