"""lerp's bound covers both formulas users compute: PyTorch's two-branch kernel and the
a + w (b - a) that JAX and TensorFlow users write (and the records spell) for every w.

For w >= 0.5 the two round differently; the seed-2 campaign's JAX and TensorFlow lerp forward
results were 1.14-1.15x over a bound derived for PyTorch's branch alone."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from reference.errors import Precision, bound_of

RNG = np.random.default_rng(7)
A = RNG.standard_normal(4000).astype(np.float32).astype(np.float64)
B = (RNG.standard_normal(4000) * 1e-2).astype(np.float32).astype(np.float64)


def _bound(weight):
    (value,), (bound,), _ = bound_of(lambda a, b: T.lerp(a, b, weight), [A, B], Precision(dtype="float32"))
    return value, bound


@pytest.mark.parametrize("weight", [0.25, 0.75, 1.5])
def test_both_formulas_in_float32_are_within_the_bound(weight):
    value, bound = _bound(weight)
    a, b, w = np.float32(A), np.float32(B), np.float32(weight)
    spelled = (a + w * (b - a)).astype(np.float64)  # jax / tf users' formula, float32 throughout
    torch_branch = (b - (b - a) * (np.float32(1) - w) if weight >= 0.5 else spelled).astype(np.float64)
    for observed in (spelled, torch_branch):
        assert np.all(np.abs(observed - value) <= bound), np.max(np.abs(observed - value) / bound)


def test_a_result_off_by_a_few_ulps_of_the_inputs_is_still_caught():
    value, bound = _bound(0.75)
    planted = np.float32(value) * np.float32(1 + 2e-6)  # ~17 ulps of the result
    assert np.any(np.abs(planted.astype(np.float64) - value) > bound)


G = RNG.standard_normal(4000).astype(np.float32).astype(np.float64)


def _vjp_bound(weight):
    """The bound of lerp's VJP in self (its own primitive, lerp_backward_self)."""

    def vjp_self(a, b, g):
        a = a.detach().requires_grad_()
        return T.autograd.grad(T.lerp(a, b, weight), a, g)[0]

    (value,), (bound,), _ = bound_of(vjp_self, [A, B, G], Precision(dtype="float32"))
    return value, bound


# weights representable in float32, as the records draw them: a Python weight that is not (0.999)
# becomes float32 in JAX (a weakly typed constant takes the array's dtype), a different w
@pytest.mark.parametrize("weight", [0.25, 0.75, 1 - 2.0**-10, 1.5])
def test_the_self_gradient_jax_and_tensorflow_compute_is_within_the_bound(weight):
    """Autodiff of a + w(b - a) gives self the cotangent g - w·g: two roundings, cancelling as w -> 1
    (the seed-2 campaign's JAX/TF lerp gradients were up to 1.7x over PyTorch's formula's bound)."""
    value, bound = _vjp_bound(weight)
    g, w = np.float32(G), np.float32(weight)
    for observed in (g - w * g, g * (np.float32(1) - w)):  # JAX/TF autodiff, PyTorch's formula
        observed = observed.astype(np.float64)
        assert np.all(np.abs(observed - value) <= bound), np.max(np.abs(observed - value) / bound)


def test_a_self_gradient_off_by_a_few_ulps_is_still_caught():
    value, bound = _vjp_bound(0.75)
    planted = np.float32(value) * np.float32(1 + 2e-6)
    assert np.any(np.abs(planted.astype(np.float64) - value) > bound)
