"""detach() under vmap keeps the batch and drops the history, at every level (as torch.func)."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T

torch = pytest.importorskip("torch", reason="compares with torch.func")


def _both(fn_of_T):
    a = np.random.default_rng(0).standard_normal((3, 4))
    ours = fn_of_T(T, T.tensor(a, requires_grad=True))
    theirs = fn_of_T(torch, torch.tensor(a, requires_grad=True))
    return np.asarray(ours.detach().numpy()), theirs.detach().numpy()


def test_detach_under_vmap_keeps_the_values():
    ours, theirs = _both(lambda M, x: M.func.vmap(lambda y: y.detach() * 2)(x))
    np.testing.assert_array_equal(ours, theirs)


def test_detach_under_vmap_stops_the_gradient_of_an_outer_grad():
    def f(M, x):
        return M.func.grad(lambda x: M.func.vmap(lambda y: (y.detach() * y.sin()).sum())(x).sum())(x)

    ours, theirs = _both(f)
    np.testing.assert_allclose(ours, theirs, rtol=1e-15, atol=0)
