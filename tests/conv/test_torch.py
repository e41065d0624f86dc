"""Agreement with PyTorch in float64: F.conv*/conv_transpose* (through F.pad for asymmetric,
negative and string padding, which torch's conv does not take directly),
aten.convolution_backward, aten._convolution_double_backward, and the same rejections."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference.conv import ConvConfigError, convolution, convolution_backward, convolution_double_backward
from tests.conv.checks import assert_close_to_bound
from tests.conv.strategies import ConvCase, conv_cases

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install refgrad[torch])")
F = torch.nn.functional
pytestmark = pytest.mark.torch
REL = 1e-12
# torch 2.13 mishandles zero input channels (see test_torch_zero_input_channels_discrepancy), so
# the agreement tests draw at least one channel per group; the reference's own tests cover zero.
torch_cases = lambda **kw: conv_cases(allow_zero_channels=False, **kw)


def _explicit_pads(case: ConvCase, size, eff):
    """(lo, hi) per dim, computed here independently of reference.conv for string padding."""
    if isinstance(case.padding, str):
        if case.padding == "valid":
            return [(0, 0)] * case.rank
        pads = []
        for n, e, s in zip(size, eff, case.stride):
            total = max((-(-n // s) - 1) * s + e - n, 0)
            small, large = total // 2, total - total // 2
            pads.append((large, small) if case.padding == "same_lower" else (small, large))
        return pads
    if isinstance(case.padding, int):
        return [(case.padding, case.padding)] * case.rank
    return [(p, p) if isinstance(p, int) else tuple(p) for p in case.padding]


def _torch_pad_arg(pads):
    """F.pad's argument: last dim first, (lo, hi) each; negative values crop."""
    return [v for lo, hi in reversed(pads) for v in (lo, hi)]


def torch_convolution(case: ConvCase, x, w, b):
    """The case as a PyTorch user writes it, with torch tensors in and out (differentiable)."""
    spatial = x.shape[2:]
    eff = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], case.dilation)]
    zero = [0] * case.rank
    if not case.transposed:
        pads = _explicit_pads(case, spatial, eff)
        return torch.ops.aten.convolution(
            F.pad(x, _torch_pad_arg(pads)),
            w,
            b,
            list(case.stride),
            zero,
            list(case.dilation),
            False,
            zero,
            case.groups,
        )
    full = torch.ops.aten.convolution(
        x, w, None, list(case.stride), zero, list(case.dilation), True, zero, case.groups
    )
    natural = [(n - 1) * s + e for n, s, e in zip(spatial, case.stride, eff)]
    if case.padding == "valid":
        target, pads = natural, [(0, 0)] * case.rank
    elif case.padding in ("same", "same_lower"):
        target = [n * s for n, s in zip(spatial, case.stride)]
        pads = _explicit_pads(case, target, eff)
    else:
        pads = _explicit_pads(case, None, eff)
        target = [L - lo - hi + op for L, (lo, hi), op in zip(natural, pads, case.output_padding)]
    # Each dim starts lo into the full output (negative: before it) and has the target length.
    # Extend first, then crop: torch refuses a crop longer than the tensor.
    start_end = [(-lo, t - (L - lo)) for (lo, _), t, L in zip(pads, target, natural)]
    out = F.pad(full, _torch_pad_arg([(max(a, 0), max(b, 0)) for a, b in start_end]))
    out = F.pad(out, _torch_pad_arg([(min(a, 0), min(b, 0)) for a, b in start_end]))
    return out if b is None else out + b.reshape(1, -1, *([1] * case.rank))


def _t(a):
    return None if a is None else torch.tensor(a, requires_grad=True)


@given(torch_cases(), st.integers(0, 2**16))
def test_forward_and_gradients_match_torch_for_every_padding_form(case, seed):
    x, w, b = case.arrays(seed)
    y = convolution(x, w, b, *case.params)
    magnitude = convolution(np.abs(x), np.abs(w), None if b is None else np.abs(b), *case.params)
    tx, tw, tb = _t(x), _t(w), _t(b)
    ty = torch_convolution(case, tx, tw, tb)
    assert_close_to_bound("output", ty.detach().numpy(), y, magnitude, REL, case)

    gy = np.random.default_rng(seed + 1).standard_normal(y.shape)
    gx, gw, gb = convolution_backward(
        gy, x, w, None if b is None else b.shape, *case.params, (True, True, b is not None)
    )
    if ty.numel() and ty.requires_grad:
        ty.backward(torch.tensor(gy))
    abs_grads = convolution_backward(
        np.abs(gy), np.abs(x), np.abs(w), None, *case.params, (True, True, False)
    )
    for name, ours, theirs, mag in (
        ("grad_input", gx, tx, abs_grads[0]),
        ("grad_weight", gw, tw, abs_grads[1]),
    ):
        observed = theirs.grad.numpy() if theirs.grad is not None else np.zeros_like(ours)
        assert_close_to_bound(name, observed, ours, mag, REL, case)
    if b is not None:
        observed = tb.grad.numpy() if tb.grad is not None else np.zeros_like(gb)
        assert_close_to_bound(
            "grad_bias", observed, gb, np.abs(gy).sum(axis=(0, *range(2, gy.ndim))), REL, case
        )


@given(torch_cases(padding_forms=("int", "per_dim")), st.integers(0, 2**16))
def test_convolution_backward_matches_aten(case, seed):
    x, w, b = case.arrays(seed)
    y = convolution(x, w, b, *case.params)
    gy = np.random.default_rng(seed + 2).standard_normal(y.shape)
    padding = [p for p, _ in _explicit_pads(case, None, None)]
    bias_sizes = None if b is None else list(b.shape)
    mask = [True, True, b is not None]
    ours = convolution_backward(gy, x, w, bias_sizes, *case.params, mask)
    theirs = torch.ops.aten.convolution_backward(
        torch.tensor(gy),
        torch.tensor(x),
        torch.tensor(w),
        bias_sizes,
        list(case.stride),
        padding,
        list(case.dilation),
        case.transposed,
        list(case.output_padding),
        case.groups,
        mask,
    )
    mags = convolution_backward(np.abs(gy), np.abs(x), np.abs(w), bias_sizes, *case.params, mask)
    for name, o, t, m in zip(("grad_input", "grad_weight", "grad_bias"), ours, theirs, mags):
        if o is not None:
            assert_close_to_bound(name, t.numpy(), o, m, REL, case)


@given(torch_cases(padding_forms=("int", "per_dim")), st.integers(0, 2**16))
def test_double_backward_matches_aten(case, seed):
    x, w, b = case.arrays(seed)
    rng = np.random.default_rng(seed + 5)
    gO = rng.standard_normal(convolution(x, w, None, *case.params).shape)
    ggI, ggW = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    ggb = rng.standard_normal(gO.shape[1]) if case.bias else None
    padding = [p for p, _ in _explicit_pads(case, None, None)]
    mask = (True, True, True)
    ours = convolution_double_backward(ggI, ggW, ggb, gO, w, x, *case.params, mask)
    t = lambda a: None if a is None else torch.tensor(a)
    theirs = torch.ops.aten._convolution_double_backward(
        t(ggI),
        t(ggW),
        t(ggb),
        t(gO),
        t(w),
        t(x),
        list(case.stride),
        padding,
        list(case.dilation),
        case.transposed,
        list(case.output_padding),
        case.groups,
        list(mask),
    )
    a = lambda v: None if v is None else np.abs(v)
    mags = convolution_double_backward(a(ggI), a(ggW), a(ggb), a(gO), a(w), a(x), *case.params, mask)
    for name, o, th, m in zip(("g_grad_output", "g_input", "g_weight"), ours, theirs, mags):
        observed = th.numpy() if th is not None and th.numel() else np.zeros_like(o)
        assert_close_to_bound(name, observed, o, m, REL, case)


INVALID = {
    "groups does not divide input channels": ((1, 3, 5), (2, 1, 3), dict(groups=2)),
    "weight in-channels times groups != input channels": ((1, 4, 5), (2, 3, 3), dict(groups=2)),
    "out channels not divisible by groups": ((1, 4, 5), (3, 2, 3), dict(groups=2)),
    "kernel larger than padded input": ((1, 2, 4, 4), (3, 2, 3, 7), dict(padding=1)),
    "dilated kernel larger than input": ((1, 2, 5), (3, 2, 3), dict(dilation=3)),
    "output_padding not smaller than stride or dilation": (
        (1, 2, 4),
        (2, 3, 3),
        dict(transposed=True, stride=2, output_padding=2),
    ),
    "transposed weight in-channels mismatch": ((1, 2, 4), (3, 3, 3), dict(transposed=True)),
    "weight rank differs from input rank": ((1, 2, 5, 5), (3, 2, 3), dict()),
    "zero stride": ((1, 2, 5), (3, 2, 3), dict(stride=0)),
    "zero dilation": ((1, 2, 5), (3, 2, 3), dict(dilation=0)),
    "zero groups": ((1, 2, 5), (3, 2, 3), dict(groups=0)),
}


@pytest.mark.parametrize("why", list(INVALID))
def test_reference_rejects_what_torch_rejects(why):
    input_shape, weight_shape, kw = INVALID[why]
    x, w = np.zeros(input_shape), np.zeros(weight_shape)
    rank = len(input_shape) - 2
    args = dict(stride=1, padding=0, dilation=1, transposed=False, output_padding=0, groups=1) | kw
    with pytest.raises(ConvConfigError):
        convolution(x, w, None, **args)
    expand = lambda v: [v] * rank if isinstance(v, int) else list(v)
    with pytest.raises(RuntimeError):
        torch.ops.aten.convolution(
            torch.tensor(x),
            torch.tensor(w),
            None,
            expand(args["stride"]),
            expand(args["padding"]),
            expand(args["dilation"]),
            args["transposed"],
            expand(args["output_padding"]),
            args["groups"],
        )


def test_bias_of_wrong_size_is_rejected_by_both():
    x, w, b = np.zeros((1, 2, 5)), np.zeros((3, 2, 3)), np.zeros(4)
    with pytest.raises(ConvConfigError, match=r"bias.shape=\(4,\)"):
        convolution(x, w, b)
    with pytest.raises(RuntimeError):
        F.conv1d(torch.tensor(x), torch.tensor(w), torch.tensor(b))


def test_output_padding_is_ignored_without_transposed_as_in_aten():
    x, w = (
        np.random.default_rng(0).standard_normal((1, 2, 6)),
        np.random.default_rng(1).standard_normal((3, 2, 3)),
    )
    ours = convolution(x, w, None, 2, 0, 1, False, 1, 1)
    theirs = torch.ops.aten.convolution(torch.tensor(x), torch.tensor(w), None, [2], [0], [1], False, [1], 1)
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-12, atol=1e-12)


def test_torch_zero_input_channels_discrepancy():
    """A convolution over zero input channels is an empty sum: zeros of shape (N, O, *out).

    torch 2.13 returns an array of the *input's* shape instead (and rejects the transposed
    case). This pins the known discrepancy so a torch fix shows up here; the conformance
    harness reports it as a real departure.
    """
    x, w = np.zeros((1, 0, 3)), np.zeros((2, 0, 1))
    ours = convolution(x, w)
    assert ours.shape == (1, 2, 3) and not ours.any()
    theirs = torch.ops.aten.convolution(torch.tensor(x), torch.tensor(w), None, [1], [0], [1], False, [0], 1)
    assert tuple(theirs.shape) == (1, 0, 3), "torch now handles zero input channels: update this note"


@pytest.mark.parametrize("given", [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (0, 0, 0), (1, 1, 1)])
def test_double_backward_definedness_matches_aten(given):
    """Which outputs aten leaves undefined when cotangents are missing (mask all True)."""
    rng = np.random.default_rng(0)
    x, w, gO = rng.standard_normal((1, 2, 5)), rng.standard_normal((3, 2, 3)), rng.standard_normal((1, 3, 3))
    gg = [rng.standard_normal(s) if g else None for g, s in zip(given, (x.shape, w.shape, (3,)))]
    ours = convolution_double_backward(*gg, gO, w, x, 1, 0, 1, False, 0, 1, (True, True, True))
    t = lambda a: None if a is None else torch.tensor(a)
    theirs = torch.ops.aten._convolution_double_backward(
        *map(t, gg), t(gO), t(w), t(x), [1], [0], [1], False, [0], 1, [True, True, True]
    )
    assert [o is None for o in ours] == [r is None for r in theirs]
    for o, r in zip(ours, theirs):
        if o is not None:
            np.testing.assert_allclose(o, r.numpy(), rtol=1e-12, atol=1e-12)
