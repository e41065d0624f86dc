"""Departures from torch that the OpInfo survey found in ops that predate it, each pinned against
torch 2.13: ``__rsub__`` with a tensor, ``cat`` skipping a legacy empty 1-d tensor, the strides of
an empty tensor (and in-place ops on it), softmax of a 0-d tensor under vmap."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T

torch = pytest.importorskip("torch", reason="compares with torch")


def test_rsub_with_a_tensor_is_a_subtraction_with_both_gradients():
    got = []
    for M in (T, torch):
        a = M.tensor([1.0, 2.0], dtype=M.float64, requires_grad=True)
        b = M.tensor([3.0, 5.0], dtype=M.float64, requires_grad=True)
        out = a.__rsub__(b)
        ga, gb = M.autograd.grad(out.sum(), (a, b))
        got.append([np.asarray(t.detach().numpy()) for t in (out, ga, gb)])
    for ours, theirs in zip(*got):
        np.testing.assert_array_equal(ours, theirs)


def test_cat_skips_a_legacy_empty_1d_tensor():
    ours = T.cat([T.tensor([], dtype=T.float64), T.ones(5, 5, dtype=T.float64)], dim=1)
    theirs = torch.cat([torch.tensor([], dtype=torch.float64), torch.ones(5, 5, dtype=torch.float64)], dim=1)
    assert tuple(ours.shape) == tuple(theirs.shape)


@pytest.mark.parametrize("shape", [(1, 0, 3), (0,), (2, 0), (0, 4, 0)])
def test_empty_tensors_have_torch_strides_and_take_in_place_ops(shape):
    assert T.zeros(*shape).stride() == torch.zeros(*shape).stride()
    x = T.zeros(*shape, dtype=T.float64).clone()
    x.exp_()
    assert tuple(x.shape) == shape


def test_softmax_of_a_0d_tensor_under_vmap():
    x = np.array([0.5, -1.0, 2.0])
    for name in ("softmax", "log_softmax"):
        ours = T.func.vmap(lambda v, n=name: getattr(T, n)(v, 0))(T.tensor(x))
        theirs = torch.func.vmap(lambda v, n=name: getattr(torch, n)(v, 0))(torch.tensor(x))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_where_with_a_condition_alone_is_nonzero_as_tuple():
    c = np.array([[True, False, True], [False, True, False]])
    ours = T.where(T.tensor(c))
    theirs = torch.where(torch.tensor(c))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("size", [0, 1])
def test_tensor_unfold_of_a_0d_tensor_under_vmap(size):
    """vmap of ``x.unfold(0, size, 1)`` over 0-d samples: each sample's window (or an empty one),
    with the batch rule (no fallback), and its VJP, as torch.func. For size 0 torch.func's batch
    rule gives (3, 2, 0) where the per-sample results stack to (3, 0): the reference keeps vmap's
    definition (torch's per-sample results, stacked)."""
    x = np.random.default_rng(0).standard_normal(3)
    if size:
        want = torch.func.vmap(lambda a: a.unfold(0, size, 1))(torch.tensor(x))
    else:
        want = torch.stack([torch.tensor(v).unfold(0, size, 1) for v in x])
    got = T.func.vmap(lambda a: a.unfold(0, size, 1), allow_fallback=False)(T.tensor(x))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if size:
        want = torch.func.vmap(torch.func.grad(lambda a: (a.unfold(0, size, 1) ** 2).sum()))(torch.tensor(x))
    else:  # torch.func raises here (its (2, 0) windows do not match the (0,) gradient)
        want = torch.stack(
            [torch.func.grad(lambda a: (a.unfold(0, 0, 1) ** 2).sum())(torch.tensor(v)) for v in x]
        )
    got = T.func.vmap(T.func.grad(lambda a: (a.unfold(0, size, 1) ** 2).sum()), allow_fallback=False)(
        T.tensor(x)
    )
    np.testing.assert_allclose(got.detach().numpy(), want.numpy(), rtol=1e-15)


@pytest.mark.parametrize(
    "fn",
    [
        lambda M, x, y: M.reciprocal(x),
        lambda M, x, y: M.reciprocal_(x * 1.0),
        lambda M, x, y: (x * 1.0).reciprocal_(),
        lambda M, x, y: M.rsub(x, y),
        lambda M, x, y: M.rsub(x, y, alpha=2.5),
        lambda M, x, y: M.rsub(x, 3.0, alpha=2),
    ],
    ids=["reciprocal", "reciprocal_", "method_reciprocal_", "rsub", "rsub_alpha", "rsub_number"],
)
def test_reciprocal_and_rsub_as_torch(fn):
    """torch.reciprocal(_) and torch.rsub (other - alpha * input): values and gradients."""
    a, b = np.array([0.5, -2.0, 4.0]), np.array([1.0, 3.0, -1.0])
    got = []
    for M in (T, torch):
        x, y = (M.tensor(v, dtype=M.float64, requires_grad=True) for v in (a, b))
        out = fn(M, x, y)
        grads = M.autograd.grad(out.sum(), (x, y), allow_unused=True)
        got.append([out] + [g for g in grads])
    for r, t in zip(*got):
        assert (r is None) == (t is None)
        if r is not None:
            np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-15)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        T.tensor([1, 2]).reciprocal_()
