"""The reference's sparse_plus (reference/ops/functions/activations.py, jax.nn.sparse_plus's three
pieces) against exact arithmetic: the value and the first two derivatives on a grid across the
knots ±1 (exact rationals: 0, (x + 1)²/4, x; (x + 1)/2; 1/2 inside, 0 outside and, by the declared
choice, at the knots), rounded once; the limits 0 and 1 of the derivative at ∓inf (not 0·inf = nan)
and nan at nan."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

import reference as T

GRID = [-3.5, -1.0, -1.0 + 2.0**-52, -0.75, -2.0**-60, 0.0, 1e-20, 0.3, 1.0 - 2.0**-53, 1.0, 7.25]


def _exact(x):
    q = Fraction(x)
    if q <= -1:
        return 0.0, 0.0, 0.0
    if q >= 1:
        return x, 1.0, 0.0
    return float((q + 1) ** 2 / 4), float((q + 1) / 2), 0.5


def _derivatives(values):
    x = T.tensor(values, dtype=T.float64, requires_grad=True)
    y = T.nn.functional.sparse_plus(x)
    (d1,) = T.autograd.grad(y.sum(), x, create_graph=True)
    (d2,) = T.autograd.grad(d1.sum(), x)
    return y.tolist(), d1.tolist(), d2.tolist()


def test_value_and_derivatives_against_exact_rationals():
    values, d1, d2 = _derivatives(GRID)
    for i, x in enumerate(GRID):
        value, first, second = _exact(x)
        # the composite rounds x + 1 and its square: at most 1.5 ulps of the value (x + 1 exact
        # for x in [-1, -0.5], Sterbenz; above -0.5 one rounding, relative 2^-53, doubled by the square)
        assert value == pytest.approx(values[i], rel=3 * 2.0**-53, abs=0), x
        assert first == pytest.approx(d1[i], rel=2.0**-52, abs=0), x
        assert d2[i] == second, x


def test_limits_at_infinity_and_nan():
    values, d1, d2 = _derivatives([-math.inf, math.inf, math.nan])
    assert values[:2] == [0.0, math.inf] and math.isnan(values[2])
    assert d1[:2] == [0.0, 1.0] and math.isnan(d1[2])
    assert d2[:2] == [0.0, 0.0]


def test_sparse_sigmoid_is_sparse_plus_derivative():
    """sparse_sigmoid = sparse_plus' exactly off the knots (the composite: x + 1 rounded once, then
    halved); at the knots ±1 the declared convention's 1/2 (clamp's), JAX's clip 1/4."""
    grid = [g for g in GRID if abs(g) != 1.0]
    x = T.tensor(GRID, dtype=T.float64, requires_grad=True)
    y = T.nn.functional.sparse_sigmoid(x)
    (d1,) = T.autograd.grad(y.sum(), x)
    for i, v in enumerate(GRID):
        q = Fraction(v)
        exact = 0.0 if q <= -1 else 1.0 if q >= 1 else float((q + 1) / 2)
        assert y.tolist()[i] == pytest.approx(exact, rel=2.0**-53, abs=0), v
        if v in grid:
            assert d1.tolist()[i] == (0.5 if -1 < v < 1 else 0.0), v
        else:
            assert d1.tolist()[i] == 0.5, v  # the declared knot convention
    limits = T.tensor([-math.inf, math.inf], dtype=T.float64, requires_grad=True)
    assert T.autograd.grad(T.nn.functional.sparse_sigmoid(limits).sum(), limits)[0].tolist() == [0.0, 0.0]
