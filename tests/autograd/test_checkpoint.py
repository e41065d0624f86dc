"""``T.utils.checkpoint`` against PyTorch 2.13: checkpoint (reentrant and non-reentrant) and
checkpoint_sequential give the values and gradients of the un-checkpointed program, recompute as
often as PyTorch does, raise PyTorch's errors and warnings; planted bugs are caught."""

from __future__ import annotations

import numpy as np
import pytest

import reference
from tests.autograd._hooks_agree import agree, norm, outcome, same

pytestmark = pytest.mark.torch

MODES = [True, False]


def _x(T, data=(0.3, -1.2, 0.5), rg=True):
    return T.tensor(list(data), dtype=T.float64, requires_grad=rg)


def _ckpt(T, fn, *args, use_reentrant, **kw):
    return T.utils.checkpoint.checkpoint(fn, *args, use_reentrant=use_reentrant, **kw)


def _counted(log, fn):
    def wrapped(*args, **kwargs):
        log.append("call")
        return fn(*args, **kwargs)

    return wrapped


# Checkpointed blocks: fn(T, *tensors) -> tensor or tuple; each also run without checkpoint.
def _mlp(T, x, w):
    h = (x[:, None] * w).tanh()
    return (h.sigmoid() * h).sum(1)


def _inplace_inside(T, x, w):
    h = x * w[0]
    h.mul_(x.exp())  # in-place on an intermediate inside the block
    v = h[1:]
    v.add_(w[1, 1:])  # in-place on a view of an intermediate (CopySlices)
    return h.sin()


def _views(T, x, w):
    return (w.t()[:, :2] * x[:2]).reshape(-1).softmax(0)


def _two_outputs(T, x, w):
    return x.exp() * w[0], (x * w[1]).relu()


def _with_leaf_closure(T, x, w):
    return (x * w[2]).log_softmax(0) * 3


BLOCKS = {f.__name__: f for f in (_mlp, _inplace_inside, _views, _two_outputs, _with_leaf_closure)}


def _block_program(block, mode):
    """mode: None (no checkpoint), True (reentrant), False (non-reentrant)."""

    def prog(T, log):
        x = _x(T)
        w = T.tensor(
            [[0.5, -1.0, 2.0], [1.5, 0.25, -0.3], [0.7, 0.1, 0.9]], dtype=T.float64, requires_grad=True
        )
        f = _counted(log, lambda x, w: block(T, x, w))
        out = f(x, w) if mode is None else _ckpt(T, f, x, w, use_reentrant=mode)
        outs = out if isinstance(out, tuple) else (out,)
        loss = sum((o * (i + 1.5)).sum() for i, o in enumerate(outs))
        loss.backward()
        return [o.detach() for o in outs], x.grad, w.grad

    return prog


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_checkpoint_equals_no_checkpoint(block, mode):
    """Values and gradients equal the un-checkpointed program's (on the reference and on torch),
    and torch's checkpoint agrees with the reference's, call count (forward + one recompute) included."""
    plain = outcome(reference, _block_program(BLOCKS[block], None))
    ck = agree(_block_program(BLOCKS[block], mode))
    got = outcome(reference, _block_program(BLOCKS[block], mode))
    same(plain["ok"], got["ok"])
    assert plain["log"] == ["call"] and got["log"] == ck["log"] == ["call", "call"]


def _double_backward(mode):
    def prog(T, log):
        x = _x(T)
        f = _counted(log, lambda a: (a.exp() * a).sin())
        y = _ckpt(T, f, x, use_reentrant=mode)
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        return g, T.autograd.grad((g * g).sum(), x)

    return prog


def test_double_backward_non_reentrant():
    """The second-order pass goes back through the block's original nodes: a third call."""
    out = agree(_double_backward(False))
    assert out["log"] == ["call", "call", "call"]


def test_double_backward_reentrant_refused():
    agree(_double_backward(True))  # autograd.grad: reentrant checkpoint refuses


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["grad", "inputs"])
def test_grad_and_backward_inputs(mode, how):
    def prog(T, log):
        x = _x(T)
        y = _ckpt(T, lambda a: a.exp() * a, x, use_reentrant=mode)
        if how == "grad":
            return T.autograd.grad(y.sum(), x)
        y.sum().backward(inputs=[x])
        return x.grad

    agree(prog)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("retain", [True, False])
def test_second_backward_recomputes_again(mode, retain):
    def prog(T, log):
        x = _x(T)
        y = _ckpt(T, _counted(log, lambda a: a.exp() * a), x, use_reentrant=mode)
        y.sum().backward(retain_graph=retain)
        log.append("second")
        y.sum().backward()
        return x.grad

    agree(prog)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("leaf", [True, False])
def test_input_modified_in_place_after_checkpoint(mode, leaf):
    """The inputs are saved with their version: PyTorch's version error, naming the input's node."""

    def prog(T, log):
        x = _x(T)
        if leaf:
            with T.no_grad():
                z = x * 1
            z.requires_grad_()
        else:
            z = x * 1
        y = _ckpt(T, lambda a: a.exp() * a, z, use_reentrant=mode)
        with T.no_grad():
            z.mul_(2)
        y.sum().backward()

    agree(prog)


@pytest.mark.parametrize("mode", MODES)
def test_closure_tensor_modified_between_backwards_is_read_again(mode):
    """A tensor the block reads from its closure (not an argument) is not version-checked by a
    checkpoint: each recomputation reads its current value (PyTorch's behaviour, silently)."""

    def prog(T, log):
        x = _x(T)
        w = T.tensor([2.0, -1.0, 0.5], dtype=T.float64)
        y = _ckpt(T, lambda a: (a * w).exp(), x, use_reentrant=mode)
        y.sum().backward(retain_graph=True)
        g1 = x.grad.clone()
        w.mul_(3)
        y.sum().backward()
        return g1, x.grad

    agree(prog)


@pytest.mark.parametrize("mode", MODES)
def test_non_tensor_args_and_tensors_without_grad(mode):
    def prog(T, log):
        x, b = _x(T), _x(T, (1.0, 2.0, 3.0), rg=False)
        y = _ckpt(T, lambda a, c, k: (a.exp() * c) ** k, x, b, 2.0, use_reentrant=mode)
        y.sum().backward()
        return y, x.grad, b.grad, y.grad_fn

    agree(prog)


@pytest.mark.parametrize("mode", MODES)
def test_outputs_mixed_tuple_and_grad_fn(mode):
    def prog(T, log):
        x = _x(T)
        a, b, k = _ckpt(T, lambda t: (t.exp(), t * 3, 5), x, use_reentrant=mode)
        (a.sum() + b.sum() * k).backward()
        return a.grad_fn, b.grad_fn, k, x.grad

    agree(prog)


@pytest.mark.parametrize("mode", MODES)
def test_unused_output_gets_zero_gradient(mode):
    def prog(T, log):
        x = _x(T)
        a, b = _ckpt(T, lambda t: (t.exp(), t.sin()), x, use_reentrant=mode)
        a.sum().backward()
        return x.grad

    agree(prog)


@pytest.mark.parametrize("mode", MODES)
def test_no_input_requires_grad(mode):
    def prog(T, log):
        y = _ckpt(T, lambda a: a.exp(), _x(T, rg=False), use_reentrant=mode)
        return y.requires_grad, y.grad_fn

    agree(prog, capture_warnings=True)


def test_reentrant_output_not_requiring_grad_in_recompute():
    def prog(T, log):
        x = _x(T)
        y = _ckpt(T, lambda a: a.detach() * 2 if T.is_grad_enabled() else a * 2, x, use_reentrant=True)
        y.sum().backward()

    agree(prog)


def test_reentrant_input_saved_through_hooks_is_a_no_grad_view():
    # The input is a view made under no_grad of a non-leaf: it requires grad but has no grad_fn and
    # no AccumulateGrad. Saved through hooks, it unpacks as a tensor that requires grad (PyTorch's
    # SavedVariable::unpack), so the recomputation's output requires grad and backward runs; the
    # reference raised "none of output has requires_grad=True" (a seed-2 mixed-precision campaign).
    def prog(T, log):
        x = _x(T)
        h = x * 2
        with T.no_grad():
            v = h[...]
        with T.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda p: p):
            y = _ckpt(T, lambda a: (a * 2.0).exp(), v, use_reentrant=True)
        (y.sum() + (x * x).sum()).backward()
        return v.requires_grad, y.requires_grad, y.detach(), x.grad

    agree(prog, capture_warnings=True)


@pytest.mark.parametrize("mode", MODES)
def test_under_no_grad(mode):
    def prog(T, log):
        x = _x(T)
        with T.no_grad():
            y = _ckpt(T, _counted(log, lambda a: a.exp()), x, use_reentrant=mode)
        return y, y.requires_grad

    agree(prog)


def test_use_reentrant_not_passed_warns_and_defaults_to_reentrant():
    def prog(T, log):
        x = _x(T)
        y = T.utils.checkpoint.checkpoint(lambda a: a.exp(), x)
        s = T.utils.checkpoint.checkpoint_sequential([lambda a: a.sin(), lambda a: a * 2], 2, x)
        return y.grad_fn, s.grad_fn

    agree(prog, capture_warnings=True)


@pytest.mark.parametrize("mode", MODES)
def test_unexpected_keyword_arguments(mode):
    def prog(T, log):
        _ckpt(T, lambda a: a.exp(), _x(T), use_reentrant=mode, foo=1)

    agree(prog)


def test_recomputation_saving_a_different_number_of_tensors():
    """Non-reentrant checkpoint checks the recomputation saved as many tensors as the forward."""

    def prog(T, log):
        x = _x(T)

        def f(a):
            log.append("call")
            return a.exp() if len(log) == 1 else a * 2 + 1  # saves one tensor, then none

        y = _ckpt(T, f, x, use_reentrant=False, early_stop=False)
        y.sum().backward()

    agree(prog)


@pytest.mark.parametrize("early_stop", [True, False])
def test_early_stop(early_stop):
    """With early_stop the recomputation stops once every saved tensor is recomputed: what the
    block does after its last save is not run again."""

    def prog(T, log):
        x = _x(T)

        def f(a):
            log.append("start")
            h = a.exp() * a
            log.append("saved all")
            return h + 1

        y = _ckpt(T, f, x, use_reentrant=False, early_stop=early_stop)
        y.sum().backward()
        return x.grad

    agree(prog)


def test_nested_checkpoints():
    def prog(T, log):
        x = _x(T)

        def inner(a):
            log.append("inner")
            return a.sin() * a

        def outer(a):
            log.append("outer")
            return _ckpt(T, inner, a.exp(), use_reentrant=False).tanh()

        y = _ckpt(T, outer, x, use_reentrant=False)
        y.sum().backward()
        return x.grad

    agree(prog)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential(mode, segments):
    def prog(T, log):
        x = _x(T)
        w = _x(T, (0.2, 0.4, -0.6))
        fns = [
            _counted(log, lambda a: a.exp()),
            _counted(log, lambda a: a * w),
            _counted(log, lambda a: a.sin()),
            _counted(log, lambda a: a.tanh()),
            _counted(log, lambda a: a + 1),
        ]
        y = T.utils.checkpoint.checkpoint_sequential(fns, segments, x, use_reentrant=mode)
        y.sum().backward()
        return y, x.grad, w.grad, y.grad_fn

    agree(prog)


def test_checkpoint_sequential_unexpected_keyword():
    def prog(T, log):
        T.utils.checkpoint.checkpoint_sequential([lambda a: a], 1, _x(T), use_reentrant=False, foo=2)

    agree(prog)


def test_user_hooks_see_the_inputs_checkpoint_saves():
    """Outer saved-tensor hooks pack what the checkpoint saves outside its own hooks."""

    def prog(T, log):
        x = _x(T)
        with T.autograd.graph.saved_tensors_hooks(
            lambda t: (log.append(("pack", tuple(t.shape), t is x)), t)[1],
            lambda t: (log.append("unpack"), t)[1],
        ):
            y = _ckpt(T, lambda a: a.exp() * a, x, use_reentrant=False)
            z = (y * y).sum()
        z.backward()
        return x.grad

    out = agree(prog)
    assert ("pack", (3,), True) in out["log"]


# ---- explicit randomness: dropout ------------------------------------------------------------------


def _dropout_program(mask):
    """PyTorch draws the mask (seeded; preserve_rng_state restores the RNG for the recomputation);
    the reference is handed the same mask explicitly."""

    def prog(T, log):
        x = _x(T, (0.3, -1.2, 0.5, 2.0, 0.1, -0.7))
        if T is not reference:
            T.manual_seed(0)

        def f(a):
            h = a.exp()
            if T is reference:
                return T.nn.functional.dropout(h, 0.5, mask=T.tensor(mask)) * a
            return T.nn.functional.dropout(h, 0.5) * a

        y = _ckpt(T, f, x, use_reentrant=False)
        y.sum().backward()
        return y, x.grad

    return prog


def _torch_dropout_mask():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    return (torch.nn.functional.dropout(torch.ones(6, dtype=torch.float64), 0.5) != 0).double().numpy()


def test_dropout_in_checkpoint_with_preserved_rng():
    mask = _torch_dropout_mask()
    assert 0 < mask.sum() < 6
    agree(_dropout_program(mask))


# ---- planted bugs: the agreement tests above must catch them ------------------------------------------


def test_planted_bug_recompute_with_unchecked_inputs_is_caught(monkeypatch):
    """A checkpoint that recomputes from its arguments as they are now (no version check on the
    saved inputs) silently uses a modified input; the in-place-input test catches it."""
    from reference.utils import checkpoint as ck

    monkeypatch.setattr(ck._Frame, "inputs", lambda self: list(self.args))
    with pytest.raises(AssertionError):
        test_input_modified_in_place_after_checkpoint(False, False)


def test_planted_bug_recomputation_reused_across_backward_passes_is_caught(monkeypatch):
    """A checkpoint that keeps the first backward's recomputed tensors (stale values) for the
    next backward pass is caught by the closure-tensor test."""
    from reference.utils import checkpoint as ck

    real_unpack = ck._Frame.unpack

    def stale_unpack(self, holder):
        first = next(iter(self.recomputed), None)
        if first is not None and holder.values.get(first) is not None:
            value = holder.values[first]
            return value
        value = real_unpack(self, holder)
        holder.values[next(iter(self.recomputed))] = value  # keep it for later passes
        return value

    monkeypatch.setattr(ck._Frame, "unpack", stale_unpack)
    with pytest.raises(AssertionError):
        test_closure_tensor_modified_between_backwards_is_read_again(False)


def test_planted_bug_recompute_without_grad_mode_is_caught(monkeypatch):
    """A reentrant checkpoint that forgets to enable grad mode for its recomputation has nothing
    to differentiate; the checkpoint-equals-no-checkpoint test catches it."""
    from reference.utils import checkpoint as ck

    monkeypatch.setattr(ck, "enable_grad", reference.no_grad)
    with pytest.raises(AssertionError, match="reference"):
        test_checkpoint_equals_no_checkpoint("_mlp", True)


def test_reference_checkpoint_values_are_exact():
    """Checkpointing changes nothing in float64: the reference's gradients are bit-identical."""
    plain = outcome(reference, _block_program(_mlp, None))["ok"]
    for mode in MODES:
        got = outcome(reference, _block_program(_mlp, mode))["ok"]
        for a, b in zip(plain[1:], got[1:]):
            assert np.array_equal(a, b)
    assert norm(None) is None


def _edge_programs(mode):
    def identity(T, log):
        x = _x(T)
        z = x * 1
        y = _ckpt(T, lambda a: a, z, use_reentrant=mode)
        (y * y).sum().backward()
        return y.grad_fn, x.grad, y is z

    def view_out(T, log):  # PyTorch's reentrant output is a view of the input; the reference's an alias
        x = _x(T)
        y = _ckpt(T, lambda a: a[1:], x * 1, use_reentrant=mode)
        (y * y).sum().backward()
        return y.grad_fn, x.grad

    def inplace_on_input(T, log):
        x = _x(T)

        def f(a):
            log.append("call")
            a.mul_(2)
            return a.exp()

        y = _ckpt(T, f, x * 1, use_reentrant=mode)
        y.sum().backward()
        return x.grad

    def user_hooks_inside(T, log):
        x = _x(T)

        def f(a):
            with T.autograd.graph.saved_tensors_hooks(
                lambda t: (log.append(("pack", tuple(t.shape))), t)[1], lambda t: (log.append("unpack"), t)[1]
            ):
                return (a.exp() * a).sin()

        y = _ckpt(T, f, x, use_reentrant=mode)
        y.sum().backward()
        return x.grad

    def list_output(T, log):
        x = _x(T)
        y = _ckpt(T, lambda a: [a.exp(), a.sin()], x, use_reentrant=mode)
        (y[0] + y[1]).sum().backward()
        return type(y).__name__, x.grad

    def explicit_grads(T, log):
        x = _x(T)
        y = _ckpt(T, lambda a: a.exp(), x, use_reentrant=mode)
        g = T.ones(3, dtype=T.float64)
        y.backward(g, retain_graph=True)
        y.backward(g * 2)
        return x.grad

    return [identity, view_out, inplace_on_input, user_hooks_inside, list_output, explicit_grads]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("k", range(6))
def test_edge_cases(mode, k):
    """Identity and view outputs, the block writing its input in place (the reentrant recomputation
    then writes a leaf: PyTorch's error), user hooks inside the block (innermost: they see the
    block's saves), a list output (not a tensor output for the reentrant Function), explicit
    gradients over two retained backwards."""
    agree(_edge_programs(mode)[k])
