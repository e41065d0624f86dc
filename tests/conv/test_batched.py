"""batched_convolution: functorch's fold-into-groups rule against slice-loop-stack, and JAX's
batch_group_count against its definition and against JAX itself."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference.conv import (
    batched_convolution,
    batched_convolution_backward,
    batched_convolution_double_backward,
    convolution,
)
from tests.conv.checks import assert_close_to_bound
from tests.conv.strategies import conv_cases


@given(
    conv_cases(),
    st.sampled_from(["both", "input", "weight"]),
    st.sampled_from([None, "shared", "batched"]),
    st.integers(0, 3),
)
def test_fold_batch_into_groups_matches_loop(case, which, bias_kind, batch):
    rng = np.random.default_rng(batch)
    x = rng.standard_normal(((batch,) if which != "weight" else ()) + case.input_shape)
    w = rng.standard_normal(((batch,) if which != "input" else ()) + case.weight_shape)
    out_channels = case.weight_shape[1] * case.groups if case.transposed else case.weight_shape[0]
    b = {
        None: None,
        "shared": rng.standard_normal(out_channels),
        "batched": rng.standard_normal((batch, out_channels)),
    }[bias_kind]
    kw = dict(input_batched=which != "weight", weight_batched=which != "input")
    looped = batched_convolution(x, w, b, *case.params, algorithm="loop", **kw)
    folded = batched_convolution(x, w, b, *case.params, **kw)
    absb = None if b is None else np.abs(b)
    mag = batched_convolution(np.abs(x), np.abs(w), absb, *case.params, algorithm="loop", **kw)
    assert_close_to_bound(
        "output", folded, looped, mag, 1e-12, f"{which} batched, bias {bias_kind}, B={batch}: {case}"
    )


def _batch_groups_by_definition(x, w, bg):
    """out[n, o] = conv(x[block(o)·Nb + n], w[o]) with block(o) = o // (O/bg): written as a loop."""
    nb, ob = x.shape[0] // bg, w.shape[0] // bg
    out = []
    for n in range(nb):
        rows = [convolution(x[(o // ob) * nb + n][None], w[o][None])[0, 0] for o in range(w.shape[0])]
        out.append(np.stack(rows))
    return np.stack(out)


@pytest.mark.parametrize("bg", [1, 2, 3])
def test_batch_groups_matches_definition(bg):
    rng = np.random.default_rng(bg)
    x, w = rng.standard_normal((2 * bg, 3, 6, 5)), rng.standard_normal((2 * bg, 3, 2, 3))
    np.testing.assert_allclose(
        convolution(x, w, batch_groups=bg), _batch_groups_by_definition(x, w, bg), rtol=1e-12, atol=1e-12
    )


@pytest.mark.jax
@pytest.mark.parametrize("bg,stride,padding", [(2, 1, 0), (3, 2, 1), (4, (1, 2), ((1, 0), (2, 1)))])
def test_batch_groups_matches_jax(bg, stride, padding):
    jax = pytest.importorskip("jax", reason="JAX is not installed (pip install refgrad[jax])")
    jax.config.update("jax_enable_x64", True)
    from jax import lax

    rng = np.random.default_rng(bg)
    x, w = rng.standard_normal((2 * bg, 3, 7, 6)), rng.standard_normal((2 * bg, 3, 3, 2))
    stride2 = (stride, stride) if isinstance(stride, int) else stride
    pads = [(padding, padding)] * 2 if isinstance(padding, int) else list(padding)
    theirs = lax.conv_general_dilated(
        x, w, stride2, pads, batch_group_count=bg, precision=lax.Precision.HIGHEST
    )
    np.testing.assert_allclose(
        convolution(x, w, None, stride, padding, batch_groups=bg), theirs, rtol=1e-12, atol=1e-12
    )


BACKWARD_COMBINATIONS = [c for c in __import__("itertools").product((False, True), repeat=3) if any(c)]


def _batch(rng, shape, flag, batch):
    return rng.standard_normal(((batch,) if flag else ()) + tuple(shape))


@given(conv_cases(), st.sampled_from(BACKWARD_COMBINATIONS), st.integers(1, 3), st.booleans())
def test_backward_batch_rules_match_loop(case, flags, batch, with_bias):
    """All seven combinations of which of (grad_output, input, weight) carry the batch dim."""
    rng = np.random.default_rng(batch)
    x0, w0, _ = case.arrays(0)
    y_shape = convolution(x0, w0, None, *case.params).shape
    gO, x, w = (
        _batch(rng, s, f, batch) for s, f in zip((y_shape, case.input_shape, case.weight_shape), flags)
    )
    bias_sizes = [y_shape[1]] if with_bias else None
    mask = (True, True, with_bias)
    looped = batched_convolution_backward(
        gO, x, w, bias_sizes, *case.params, mask, batched=flags, algorithm="loop"
    )
    folded = batched_convolution_backward(gO, x, w, bias_sizes, *case.params, mask, batched=flags)
    mags = batched_convolution_backward(
        np.abs(gO), np.abs(x), np.abs(w), bias_sizes, *case.params, mask, batched=flags, algorithm="loop"
    )
    for name, f, l, m in zip(("grad_input", "grad_weight", "grad_bias"), folded, looped, mags):
        if l is not None:
            assert f.shape == l.shape, f"{name}: {f.shape} vs {l.shape} [batched={flags} {case}]"
            assert_close_to_bound(name, f, l, m, 1e-12, f"batched={flags} B={batch} {case}")


@given(
    conv_cases(ranks=(1, 2)),
    st.tuples(*[st.booleans()] * 6).filter(any),
    st.tuples(*[st.booleans()] * 3),
    st.integers(1, 3),
)
def test_double_backward_batch_rules_match_loop(case, flags, present, batch):
    """Any subset of (ggI, ggW, ggb, gO, weight, input) batched; any of the cotangents missing."""
    rng = np.random.default_rng(batch + 10)
    x0, w0, _ = case.arrays(0)
    y_shape = convolution(x0, w0, None, *case.params).shape
    shapes = (
        case.input_shape,
        case.weight_shape,
        (y_shape[1],),
        y_shape,
        case.weight_shape,
        case.input_shape,
    )
    arrays = [_batch(rng, s, f, batch) for s, f in zip(shapes, flags)]
    for i, keep in enumerate(present):
        if not keep:
            arrays[i] = None
    if not any(f and a is not None for f, a in zip(flags, arrays)):
        return  # nothing batched once the missing cotangents are dropped
    mask = (True, True, True)
    looped = batched_convolution_double_backward(*arrays, *case.params, mask, batched=flags, algorithm="loop")
    folded = batched_convolution_double_backward(*arrays, *case.params, mask, batched=flags)
    absd = [None if a is None else np.abs(a) for a in arrays]
    mags = batched_convolution_double_backward(*absd, *case.params, mask, batched=flags, algorithm="loop")
    for name, f, l, m in zip(("g_grad_output", "g_input", "g_weight"), folded, looped, mags):
        assert (f is None) == (l is None), (
            f"{name}: defined {f is not None} vs loop {l is not None} [{present}]"
        )
        if l is None:
            continue
        assert f.shape == l.shape, (
            f"{name}: {f.shape} vs {l.shape} [batched={flags} present={present} {case}]"
        )
        assert_close_to_bound(name, f, l, m, 1e-12, f"batched={flags} present={present} B={batch} {case}")
