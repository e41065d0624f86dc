"""Gradients that aten leaves undefined stay undefined: a conv double backward whose input
gradient does not depend on the input must not give the input a (zero) .grad."""

from __future__ import annotations

import numpy as np
import pytest

import reference

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install refgrad[torch])")
pytestmark = pytest.mark.torch


def _prog(T, v0, v1, wrt_weight_too):
    v2 = T.nn.functional.conv1d(v0.reshape(1, 1, 3), v1.reshape(1, 1, 3))
    loss = (v2 * 1).sum()
    inputs = [v0, v1] if wrt_weight_too else [v0]
    grads = T.autograd.grad(loss, inputs, create_graph=True)
    sum(((g * g).sum() for g in grads), start=grads[0].sum() * 0).backward()
    return v0.grad, v1.grad


@pytest.mark.parametrize("wrt_weight_too", [False, True])
def test_conv_double_backward_definedness_matches_torch(wrt_weight_too):
    a, b = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.75])
    ours = _prog(
        reference,
        reference.tensor(a, requires_grad=True),
        reference.tensor(b, requires_grad=True),
        wrt_weight_too,
    )
    theirs = _prog(
        torch, torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True), wrt_weight_too
    )
    for name, o, t in zip(("v0.grad", "v1.grad"), ours, theirs):
        assert (o is None) == (t is None), f"{name}: reference {o} vs torch {t}"
        if o is not None:
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)
