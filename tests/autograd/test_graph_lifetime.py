"""A graph lives as long as something holds it, and no longer: freed by reference counting when
the last tensor of its history is dropped, as PyTorch frees its graphs.

An op that saves its own output (``tanh``, ``exp``, ``sigmoid``: their formulas read the result)
keeps it without a reference cycle (reference.autograd.graph.SavedOutput): the data and version
counter, rebuilt on unpack when nobody holds the output any more. These tests check that nothing
is left to the cycle collector, and that a rebuilt output behaves as the output did: same values,
same history (double backward through it), same version counter (the stale-tensor error).
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import reference as T
from reference.autograd import AutogradError


def leaf(values):
    return T.tensor(np.asarray(values, dtype=np.float64), dtype=T.float64, requires_grad=True)


@pytest.fixture
def no_cycle_collector():
    """Only reference counting frees objects while a test runs (what it frees is what a test sees)."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def chain(x, w):
    h = x
    for _ in range(3):
        h = (h * w).tanh()  # saves its inputs, then saves its output
        h = (h + 0.5).sigmoid().exp()  # two more ops that save their output
        h = h / w
    return h.sum()


def test_dropped_graph_is_freed_without_the_cycle_collector(no_cycle_collector):
    x, w = leaf([0.1, -0.4, 0.7]), leaf([1.5, 0.5, -2.0])
    y = chain(x, w)
    nodes = []
    stack = [y.grad_fn]
    while stack:  # every node of the graph, weakly
        node = stack.pop()
        nodes.append(weakref.ref(node))
        stack.extend(e[0] for e in node.next_edges if e is not None and hasattr(e[0], "rule"))
    assert len(nodes) == 3 * 6 + 1
    del y, node, stack
    alive = [r() for r in nodes if r() is not None]
    assert not alive, f"{len(alive)} nodes outlived their graph, e.g. {alive[0].name()}"


def test_graph_after_backward_is_freed_without_the_cycle_collector(no_cycle_collector):
    x, w = leaf([0.1, -0.4, 0.7]), leaf([1.5, 0.5, -2.0])
    y = chain(x, w)
    root = weakref.ref(y.grad_fn)
    y.backward()
    del y
    assert root() is None
    assert gc.collect() == 0  # nothing in a cycle either


def test_dropped_output_is_rebuilt_with_its_history_for_double_backward():
    # d/dx tanh = 1 - tanh^2, d2/dx2 = -2 tanh (1 - tanh^2): the first derivative's formula reads
    # the saved output, so the second needs that output's history (TanhBackward0 itself)
    a = np.array([0.3, -1.2, 2.0])
    x = leaf(a)
    (g,) = T.autograd.grad(x.tanh().sum(), x, create_graph=True)  # nobody holds tanh's output
    np.testing.assert_allclose(g.detach().numpy(), 1 - np.tanh(a) ** 2, rtol=1e-15)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), -2 * np.tanh(a) * (1 - np.tanh(a) ** 2), rtol=1e-14)


def test_output_is_unpacked_as_itself_while_held_and_rebuilt_once_dropped(monkeypatch):
    from reference.ops.rules import RULES

    seen = []
    (formula,) = RULES["exp"].grads
    monkeypatch.setattr(RULES["exp"], "grads", (lambda c, g: seen.append(c.result) or formula(c, g),))
    x = leaf([0.3, -1.2])
    y = x.exp()
    z = y.sum()
    z.backward(retain_graph=True)
    assert seen[-1] is y
    node, values = y.grad_fn, y.detach().numpy().copy()
    del y
    z.backward()  # exp's node runs again, its output rebuilt
    rebuilt = seen[-1]
    assert rebuilt.grad_fn is node and rebuilt._output_nr == 0 and rebuilt.requires_grad
    np.testing.assert_array_equal(rebuilt.detach().numpy(), values)


def _backward_after_a_write_through_a_view(lib):
    """exp's output dropped by the user, who keeps a view of it and writes through the view: the
    output exp saved is then at a newer version. Returns the error its backward raises."""
    x = lib.tensor([0.3, -1.2], dtype=lib.float64, requires_grad=True)
    y = x.exp()
    v = y.view(2)
    z = y.sum()
    del y
    with lib.no_grad():
        v.mul_(2)
    with pytest.raises(RuntimeError) as info:
        z.backward()
    return info.value


def test_dropped_output_shares_the_version_counter_of_its_views():
    error = _backward_after_a_write_through_a_view(T)
    assert isinstance(error, AutogradError)
    assert "which is output 0 of Exp, is at version 1; expected version 0" in str(error)


def test_dropped_output_stale_error_matches_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = (str(_backward_after_a_write_through_a_view(lib)).split(" Hint:")[0] for lib in (T, torch))
    assert ours == theirs


def test_output_saved_inside_a_jvp_keeps_its_tangent_for_forward_over_reverse():
    # Hessian of -log_softmax(b)[0], by jvp of grad (hessian = jacfwd of jacrev): log_softmax's
    # backward reads its saved output and that output's tangent, which the jvp level gives the
    # output after the op (and its saving) returned. Exact: softmax's Jacobian diag(p) - p p^T.
    import reference.nn.functional as F
    from reference.func import hessian

    a = np.array([0.3, -1.2, 2.0])
    h = hessian(lambda b: -F.log_softmax(b, 0)[0])(T.tensor(a, dtype=T.float64))
    p = np.exp(a) / np.exp(a).sum()
    np.testing.assert_allclose(h.numpy(), np.diag(p) - np.outer(p, p), rtol=1e-14, atol=1e-16)


def _double_backward_of_a_rebound_output(lib, drop):
    """A custom Function returns ``y = x.exp()`` made inside its forward under grad mode: ``y``
    becomes the Function's output (its grad_fn rebound without a version bump), while exp's node,
    reached through ``s``, still saved ``y`` as its own output. Returns d/dx of the gradient of s."""

    class Rebind(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with lib.enable_grad():
                y = x.exp()
                ctx.s = (y * 1).sum()
            return y

        @staticmethod
        def backward(ctx, g):
            return g

    x = lib.tensor([0.5, 1.0], dtype=lib.float64, requires_grad=True)
    y = Rebind.apply(x)
    node = y.grad_fn
    if drop:
        del y
    (gx,) = lib.autograd.grad(node.s, x, create_graph=True)
    (ggx,) = lib.autograd.grad(gx.sum(), x)
    return ggx.detach().numpy()


@pytest.mark.parametrize("drop", [False, True], ids=["held", "dropped"])
def test_saved_output_unpacks_with_the_saving_node_after_its_grad_fn_changed(drop):
    # PyTorch unpacks a saved output with the node that saved it as grad_fn, whatever became of
    # the tensor: after detach_() (no version bump) and after a custom Function took it as its own
    # output; held or dropped by the user alike
    x = leaf([0.5, 1.0])
    y = x.exp()
    z = y.sum()
    y.detach_()
    if drop:
        del y
    (gx,) = T.autograd.grad(z, x, create_graph=True)
    assert gx.requires_grad and gx.grad_fn is not None
    np.testing.assert_allclose(_double_backward_of_a_rebound_output(T, drop), np.exp([0.5, 1.0]), rtol=1e-15)


@pytest.mark.parametrize("drop", [False, True], ids=["held", "dropped"])
def test_rebound_output_double_backward_matches_torch(drop):
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(
        _double_backward_of_a_rebound_output(T, drop), _double_backward_of_a_rebound_output(torch, drop)
    )
