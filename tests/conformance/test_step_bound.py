"""Step functions of rounded values: div with a rounding mode, floor, trunc, round.

fmod's JVP is t_a - t_b·trunc(a / b) and remainder's VJP -g·floor(a / b). A framework evaluates the
quotient rounded (PyTorch's float16 div_trunc rounds -0.2556 / 0.01504 = -16.9986 to -17.0 and
truncates that), so where a / b lies within its rounding error of an integer the step can land on
the other side and the result moves by a whole t_b. The seed-2 campaign flagged torch's and JAX's
float16 fmod JVPs (ratio 22.6) and JAX's and TensorFlow's remainder gradients for it. The bound now
allows one unit per jump within the quotient's error, and nothing anywhere else.
"""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from reference.errors import Precision, bound_of

torch = pytest.importorskip("torch", reason="the bound is checked against PyTorch's own float16 JVP")

# the campaign's case (fmod jvp, float16, values "wide"): element 6 of seed 107
A16 = np.float16(-0.255615234375)
B16 = np.float16(0.0150375366210937)


def _fmod_jvp_bound(a, b, ta, tb, dtype="float16"):
    (value,), (bound,), _ = bound_of(
        lambda a, b, ta, tb: ta - tb * T.div(a, b, rounding_mode="trunc"),
        [np.asarray(v, dtype=np.float64) for v in (a, b, ta, tb)],
        Precision(dtype=dtype),
    )
    return value, bound


def _torch_fmod_jvp(a, b, ta, tb):
    args = [torch.tensor(np.asarray(v, dtype=np.float16)) for v in (a, b, ta, tb)]
    return torch.func.jvp(torch.fmod, tuple(args[:2]), tuple(args[2:]))[1].double().numpy()


def test_torch_float16_fmod_jvp_across_a_rounded_integer_quotient_is_within_the_bound():
    # 64 elements: PyTorch's vectorised float16 loop rounds the quotient to float16 (its scalar
    # tail, for a tensor of one element, does not)
    a, b, ta, tb = np.full(64, A16), np.full(64, B16), np.full(64, -1.118), np.full(64, 0.18335)
    observed = _torch_fmod_jvp(a, b, ta, tb)
    value, bound = _fmod_jvp_bound(a, b, ta, tb)
    # the quotient's truncation differs by one between the exact and the rounded quotient
    assert abs(observed[0] - value[0]) > 0.1
    assert np.all(np.abs(observed - value) <= bound)


def test_a_step_taken_wrongly_away_from_any_integer_is_caught():
    rng = np.random.default_rng(3)
    q = rng.uniform(-40, 40, 500).round() + rng.uniform(0.2, 0.8, 500)  # quotients far from integers
    b = rng.uniform(0.5, 2.0, 500).astype(np.float16).astype(np.float64)
    a = (q * b).astype(np.float16).astype(np.float64)
    ta, tb = np.zeros(500), np.ones(500)
    value, bound = _fmod_jvp_bound(a, b, ta, tb)
    assert np.all(bound < 0.5)  # no jump within the quotient's error: no unit allowed
    planted = value - 1.0  # a kernel whose trunc is off by one everywhere
    assert np.all(np.abs(planted - value) > bound)


def test_floor_of_a_computed_value_allows_a_unit_only_next_to_an_integer():
    # floor(x * 3): x * 3 rounds in float32, so next to an integer floor may go either way
    x = np.array([1 / 3, 0.5, 2.0 / 3.0 + 1e-3], dtype=np.float32).astype(np.float64)
    (value,), (bound,), _ = bound_of(lambda x: T.floor(x * 3.0), [x], Precision(dtype="float32"))
    assert bound[0] == 1.0  # 3 * fl(1/3) is within rounding of 1
    assert bound[1] == 0.0 and bound[2] == 0.0  # 1.5 and 2.003: no integer within reach


def test_jax_bfloat16_round_with_negative_decimals_by_a_rounded_scale_is_within_the_bound():
    """jnp.round(x, -1) multiplies by 0.1 rounded to bfloat16 (0.10009765625): -732 scales to
    -73.27, rounded to the tie -73.5, then to -74, so JAX says -740 where PyTorch's -732 / 10 = -73.2
    says -730 (the seed-0 seeded campaign's round_decimals case). The bound allows that unit, and
    only next to a half-integer: -52 (-5.2, far from any) keeps the plain rounding bound."""
    jnp = pytest.importorskip("jax.numpy", reason="JAX's own bfloat16 round")
    x = np.array([-732.0, -52.0])
    (value,), (bound,), _ = bound_of(lambda a: T.round(a, decimals=-1), [x], Precision(dtype="bfloat16"))
    jax_value = np.asarray(jnp.round(jnp.asarray(x, jnp.bfloat16), -1), dtype=np.float64)
    assert jax_value[0] == -740.0 and value[0] == -730.0
    assert abs(jax_value[0] - value[0]) <= bound[0]
    assert bound[1] < 10.0  # no unit where the scaled value is not near a tie
    assert abs(jax_value[1] - value[1]) <= bound[1]
