"""The engine, grad modes, storage and views, on their own (no other framework needed), plus the
view geometry and metadata compared with PyTorch where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from reference.autograd import AutogradError


def leaf(values):
    return T.tensor(np.asarray(values, dtype=np.float64), dtype=T.float64, requires_grad=True)


def test_shared_subgraph_accumulates_instead_of_overwriting():
    x = leaf([1.0, 2.0])
    y = x * x
    z = y + y * 3 + y.exp()  # y feeds three consumers; its gradient is their sum
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (2 + 6 + 2 * np.exp([1.0, 4.0])) * np.array([1.0, 2.0]))


def test_leaf_grad_accumulates_across_backward_calls_and_keeps_identity():
    x = leaf([1.0, -1.0])
    (x * 3).sum().backward()
    g = x.grad
    (x * 2).sum().backward()
    assert x.grad is g
    np.testing.assert_array_equal(g.numpy(), [5.0, 5.0])


def test_diamond_runs_each_node_once_after_all_inputs():
    calls = []
    x = leaf([0.5])
    a = x.tanh()
    a.register_hook(lambda g: calls.append(float(g.numpy()[0])))
    b, c = a * 2, a * 3
    (b + c).sum().backward()
    assert calls == [5.0]  # the hook sees the fully accumulated gradient, once


def test_second_backward_raises_and_retain_graph_allows_it():
    x = leaf([1.0])
    y = x.exp().sum()
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0]))


def test_no_grad_results_do_not_require_grad_and_enable_grad_nests():
    x = leaf([1.0])
    with T.no_grad():
        y = x * 2
        with T.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn.name() == "MulBackward0"
    with T.set_grad_enabled(False):
        assert not (x + 1).requires_grad
    assert T.is_grad_enabled()


def test_grad_does_not_touch_dot_grad_and_create_graph_differentiates():
    x = leaf([0.3, -0.7])
    (g,) = T.autograd.grad((x**3).sum(), x, create_graph=True)
    assert x.grad is None and g.requires_grad
    (h,) = T.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * np.array([0.3, -0.7]))


def test_views_alias_storage_and_share_the_version_counter():
    a = T.tensor(np.arange(6.0), dtype=T.float64)
    v = a.view(2, 3).t()[1:]
    assert v._base is a and v._is_view() and v.stride() == (1, 3) and v.storage_offset() == 1
    v.mul_(10)
    np.testing.assert_array_equal(a.numpy(), [0, 10, 20, 3, 40, 50])
    assert a._version == v._version == 1
    d = a.detach()
    d.add_(1)
    assert a._version == 2 and d._base is None


def test_inplace_on_view_rewrites_base_history():
    x = leaf([1.0, 2.0, 3.0])
    a = x * 1.0
    v = a[1:]
    v.mul_(x[:2])
    assert a.grad_fn.name() == "torch::autograd::CopySlices" and v.grad_fn.name() == "AsStridedBackward0"
    a.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0, 2.0])  # d(x0 + x1 x0 + x2 x1)/dx


def test_errors_are_runtime_errors_with_pytorchs_messages():
    x = leaf([1.0, 2.0])
    with pytest.raises(AutogradError, match="a leaf Variable that requires grad"):
        x.add_(1)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*output 0 of Exp"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        (x * 2).backward()


def test_planted_overwrite_in_accumulate_grad_is_caught(monkeypatch):
    """If AccumulateGrad overwrote instead of adding, the second backward would lose the first."""
    from reference.autograd import graph

    def overwrite(self, grads):
        self.variable.grad = grads[0].detach()._copy()
        return []

    monkeypatch.setattr(graph.AccumulateGrad, "apply", overwrite)
    x = leaf([1.0])
    (x * 3).sum().backward()
    (x * 2).sum().backward()
    assert x.grad.numpy()[0] != 5.0


VIEW_CASES = [
    ("select", lambda t: t.select(1, 2)),
    ("slice_step", lambda t: t[:, 1::2]),
    ("narrow", lambda t: t.narrow(2, 1, 2)),
    ("transpose", lambda t: t.transpose(0, 2)),
    ("permute", lambda t: t.permute(1, 2, 0)),
    ("unsqueeze", lambda t: t.unsqueeze(1)),
    ("squeeze", lambda t: t[:, :1].squeeze(1)),
    ("view", lambda t: t.view(6, 4)),
    ("expand", lambda t: t[:, :1].expand(2, 5, 4)),
    ("diagonal", lambda t: t.diagonal(1, 1, 2)),
    ("as_strided", lambda t: t.as_strided((2, 2), (3, 1), 4)),
    ("unbind", lambda t: t.unbind(2)[1]),
    ("split", lambda t: t.split(2, 1)[1]),
    ("chunk", lambda t: t.chunk(2, 2)[1]),
    ("getitem", lambda t: t[1, None, ..., 2:]),
    ("flatten", lambda t: t.flatten(1)),
    ("t_view", lambda t: t[0].t()),
    ("reshape_copy", lambda t: t.transpose(0, 1).reshape(-1)),
    ("contiguous", lambda t: t.transpose(0, 1).contiguous()),
]


@pytest.mark.torch
@pytest.mark.parametrize("name, fn", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_view_metadata_matches_torch(name, fn):
    torch = pytest.importorskip("torch")
    data = np.arange(24.0).reshape(2, 3, 4)
    results = []
    for M in (T, torch):
        base = M.tensor(data, dtype=M.float64)
        v = fn(base)
        results.append(
            (
                tuple(v.shape),
                v.stride(),
                v.storage_offset(),
                v._is_view(),
                v._base is base,
                v.is_contiguous(),
                np.array(v.numpy(), copy=True).tolist(),
            )
        )
    assert results[0] == results[1]


def test_accumulated_gradients_are_the_add_ops_sum_and_its_rounding_is_tracked():
    # x feeds two products: its gradient is a + b, summed by the engine (PyTorch's
    # InputBuffer::accumulate). The sum is the add rule's: bit for bit the Tensor op's value, and
    # an error tracker (which wraps the rules' kernels) bounds its rounding, half an ulp of float32
    # here; a sum made outside the rules would read as exact (bound 0).
    from reference.errors import Precision, bound_of

    a = np.array([0.1, 1 / 3, 2.0**-30])
    b = np.array([0.7, 1 / 7, 1.0])
    x0 = np.array([1.0, -2.0, 0.5])
    x = leaf(x0)
    (x * T.tensor(a) + x * T.tensor(b)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), (T.tensor(a) + T.tensor(b)).numpy())

    def grad_of_x(x, a, b):
        (g,) = T.autograd.grad((x * a.detach() + x * b.detach()).sum(), x)
        return g

    (value,), (bound,), _ = bound_of(grad_of_x, [x0, a, b], Precision(dtype="float32"))
    u = 2.0**-24
    assert np.all(bound >= u * np.abs(value) * 0.99), (bound, value)


def _gradient_summed_after_validation(lib):
    """Two gradients for u, shape (1, 3): the first, from a transposed float32 copy, arrives as
    (1, 3) with strides (1, 1); the second, (2, 3) from a custom Function, is summed to (1, 3) by
    the engine's validation before it is added in place into the first (PyTorch keeps the buffer's
    strides). Returns the gradient's strides and values."""

    class Wide(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return lib.ones(2, 3, dtype=lib.float64)

    x = lib.zeros(1, 3, dtype=lib.float64, requires_grad=True)
    u = x * 1
    b = Wide.apply(u)
    z = u.to(lib.float32).t()
    (gu,) = lib.autograd.grad([z, b], [u], [lib.ones(3, 1), lib.ones(1, 3, dtype=lib.float64)])
    return tuple(gu.stride()), gu.detach().numpy().tolist()


def test_gradient_summed_after_validation_keeps_the_buffers_strides():
    assert _gradient_summed_after_validation(T) == ((1, 1), [[3.0, 3.0, 3.0]])


def test_gradient_summed_after_validation_matches_torch():
    torch = pytest.importorskip("torch")
    assert _gradient_summed_after_validation(T) == _gradient_summed_after_validation(torch)
