"""prod's gradient is PyTorch's grad * (result / input) where the input has no zero (and is
finite): its double backward over a dimension of size one is then 0 in exact arithmetic but a
rounding residue in PyTorch's (torch gave -2.2e-16 at x = -1.6123524170426775 in the seed-2
campaign), and the bound now carries that residue instead of claiming an exact 0. With a zero the
products of the other elements are used, as PyTorch's prod_safe_zeros_backward."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from reference.errors import Precision, bound_of

torch = pytest.importorskip("torch", reason="the bound is checked against PyTorch's own double backward")

# the campaign's case: prod_dim, dim=1, keepdim=False, input (8, 1, 1), float64, seed 35617
X = np.array([0.5266927817067122, -1.6123524170426775, 1.5232632068094127, 0.9893692479894771,
              -0.06261212456068718, -0.6279712027744624, 0.37295754903381684, 1.4197883887885292]).reshape(8, 1, 1)  # fmt: skip
G = np.array([-1.2236122814708694, 0.2829349249827488, -1.9765344511696743, -0.5383080970780618,
              -0.6084390265765885, -2.795809387996941, -0.7803518541562713, 0.9763120615534043]).reshape(8, 1)  # fmt: skip
GG = np.array([0.4346994221418492, 1.13942429843638, -0.7648588515603711, -0.35171856455712125,
               0.5120300571477755, -1.0242528204873576, 0.5724646157270249, -0.13745897334524296]).reshape(8, 1, 1)  # fmt: skip


def _second_order(lib, x, g, gg):
    x = x.detach().requires_grad_()
    (gx,) = lib.autograd.grad(lib.prod(x, 1), x, g, create_graph=True)
    return lib.autograd.grad(gx, x, gg)[0]


def test_torch_double_backward_residue_is_within_the_bound():
    (value,), (bound,), _ = bound_of(lambda x, g, gg: _second_order(T, x, g, gg), [X, G, GG], Precision())
    observed = _second_order(torch, *(torch.tensor(a) for a in (X, G, GG))).numpy()
    assert np.any(observed != 0)  # PyTorch's formula leaves a residue
    assert np.all(np.abs(observed - value) <= bound)
    # the exact value, 0 (the product of no other elements is constant), which JAX's products of
    # the others give, lies inside too
    assert np.all(np.abs(0.0 - value) <= bound)


def test_a_residue_far_above_the_roundings_is_caught():
    (value,), (bound,), _ = bound_of(lambda x, g, gg: _second_order(T, x, g, gg), [X, G, GG], Precision())
    planted = value + 1e-12 * np.abs(G[..., None] * GG / X)  # ~4500 ulps of the terms
    assert np.all(np.abs(planted - value) > bound)
