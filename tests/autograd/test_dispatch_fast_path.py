"""``dispatch.apply``'s fast path (the common case: no transform, no type promotion, one output,
no aux) gives what the general path gives: the same values bit for bit, the same graph (node
names, saved tensors), the same gradients of every order, the same strides and the same errors.
Each program runs twice, with ``dispatch.fast_path`` on and off; a counter proves which path ran.
"""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from reference.autograd import dispatch


@pytest.fixture
def paths(monkeypatch):
    """``run(program)``: the program's outcome with the fast path on and off, and how many ops took it."""
    calls = [0]
    common = dispatch._apply_common

    def counted(*args):
        calls[0] += 1
        return common(*args)

    monkeypatch.setattr(dispatch, "_apply_common", counted)

    def run(program):
        outcomes = {}
        for enabled in (True, False):
            calls[0] = 0
            monkeypatch.setattr(dispatch.fast_path, "enabled", enabled)
            try:
                outcomes[enabled] = ("ok", program())
            except Exception as exc:  # the error is part of the outcome compared
                outcomes[enabled] = ("raised", (type(exc).__name__, str(exc)))
            outcomes[enabled] = (outcomes[enabled], calls[0])
        (fast, fast_calls), (plain, plain_calls) = outcomes[True], outcomes[False]
        assert plain_calls == 0 and fast_calls > 0, (fast_calls, plain_calls)
        return fast, plain

    return run


def _graph(t):
    """The node names of ``t``'s graph, depth first, and the names of what each node saved."""
    out, stack, seen = [], [t.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        name = (
            node.name()
            if callable(getattr(node, "name", None))
            else getattr(node, "name", type(node).__name__)
        )
        out.append((name, sorted(getattr(node, "saved", {}))))
        stack.extend(e[0] for e in node.next_edges if e is not None)
    return out


def _bits(t):
    return (t.detach().numpy().tobytes(), str(t.dtype), tuple(t.shape), t.stride())


@pytest.mark.parametrize("dtype", [T.float64, T.float32])
def test_a_chain_and_its_gradients_of_two_orders_agree(paths, dtype):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(16), rng.standard_normal(16)

    def program():
        x = T.tensor(a, dtype=dtype, requires_grad=True)
        w = T.tensor(b, dtype=dtype, requires_grad=True)
        h = x
        for i in range(4):
            h = (h * w).tanh() + 0.5
            h = h.sigmoid() - x if i % 2 else h.exp() / w
        loss = h.sum()
        (gx, gw) = T.autograd.grad(loss, (x, w), create_graph=True)
        (ggx,) = T.autograd.grad((gx * gw).sum(), (x,))
        return _bits(loss), _graph(loss), _bits(gx), _bits(gw), _bits(ggx), _graph(gx)

    fast, plain = paths(program)
    assert fast[0] == "ok" and fast == plain


def test_no_grad_and_strided_inputs_agree(paths):
    base = np.arange(12.0).reshape(3, 4)

    def program():
        x = T.tensor(base, requires_grad=True).t()  # a column-major view
        with T.no_grad():
            y = (x * 2).exp()
        z = x.unsqueeze(0) + x.unsqueeze(1)  # broadcasting over views
        return _bits(y), _bits(z), y.requires_grad, _graph(z)

    fast, plain = paths(program)
    assert fast[0] == "ok" and fast == plain


@pytest.mark.parametrize(
    "program",
    [
        lambda: T.erf(T.tensor([1 + 2j, 3j])),  # a complex input to a real-only primitive
        lambda: T.relu(T.tensor([1 + 2j], requires_grad=True)),
        lambda: T.ones(3, requires_grad=True) + T.ones(2),  # a broadcasting error after the node
    ],
    ids=["complex-refused", "complex-refused-requires-grad", "shape-mismatch"],
)
def test_errors_agree(paths, program):
    fast, plain = paths(program)
    assert fast[0] == "raised" and fast == plain


def test_a_saved_result_modified_in_place_fails_backward_the_same_way(paths):
    def program():
        x = T.tensor([0.5, 1.5], requires_grad=True)
        y = x.tanh()  # saves its result
        y.mul_(2)
        y.sum().backward()

    fast, plain = paths(program)
    assert fast[0] == "raised" and "modified by an inplace operation" in fast[1][1] and fast == plain
