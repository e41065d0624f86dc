"""Layout helpers: exact round trips, and agreement with JAX and TensorFlow run in their own
layouts (NHWC activations, HWIO filters, depthwise filters, conv_transpose filters)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference.conv import (
    convolution,
    same_padding,
    to_channels_first,
    to_channels_last,
    weight_from_depthwise,
    weight_from_hwio,
    weight_from_ohwi,
    weight_to_depthwise,
    weight_to_hwio,
    weight_to_ohwi,
)
from tests.conv.checks import assert_close_to_bound
from tests.conv.strategies import conv_cases

rng = np.random.default_rng(0)


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_round_trips_are_exact(rank):
    a = rng.standard_normal((2, 3, *range(4, 4 + rank)))
    np.testing.assert_array_equal(to_channels_first(to_channels_last(a)), a)
    assert to_channels_last(a).shape == (2, *range(4, 4 + rank), 3)
    np.testing.assert_array_equal(weight_from_hwio(weight_to_hwio(a)), a)
    assert weight_to_hwio(a).shape == (*range(4, 4 + rank), 3, 2)
    np.testing.assert_array_equal(weight_from_ohwi(weight_to_ohwi(a)), a)
    depthwise = rng.standard_normal((*range(2, 2 + rank), 3, 2))  # (*k, C, M)
    np.testing.assert_array_equal(weight_to_depthwise(weight_from_depthwise(depthwise), 3), depthwise)
    assert weight_from_depthwise(depthwise).shape == (6, 1, *range(2, 2 + rank))


@pytest.mark.jax
@given(conv_cases(transposed=(False,), allow_zero_channels=False, allow_empty=False), st.integers(0, 999))
def test_nhwc_hwio_matches_jax_conv_general_dilated(case, seed):
    jax = pytest.importorskip("jax", reason="JAX is not installed (pip install refgrad[jax])")
    jax.config.update("jax_enable_x64", True)
    from jax import lax

    x, w, _ = case.arrays(seed)
    spec = {1: ("NWC", "WIO", "NWC"), 2: ("NHWC", "HWIO", "NHWC"), 3: ("NDHWC", "DHWIO", "NDHWC")}[case.rank]
    padding = case.padding.upper() if isinstance(case.padding, str) else _pairs(case.padding, case.rank)
    theirs = lax.conv_general_dilated(
        to_channels_last(x),
        weight_to_hwio(w),
        case.stride,
        padding,
        rhs_dilation=case.dilation,
        dimension_numbers=spec,
        feature_group_count=case.groups,
        precision=lax.Precision.HIGHEST,
    )
    ours = convolution(x, w, None, *case.params)
    mag = convolution(np.abs(x), np.abs(w), None, *case.params)
    assert_close_to_bound("output", to_channels_first(np.asarray(theirs)), ours, mag, 1e-12, case)


@pytest.mark.jax
@given(st.integers(1, 12), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3), st.booleans())
def test_same_padding_matches_jax_padtype_to_pads(n, k, s, d, lower):
    from jax import lax

    eff = (k - 1) * d + 1
    ours = same_padding((n,), (k,), (s,), (d,), lower=lower)
    assert list(ours) == [
        tuple(p) for p in lax.padtype_to_pads((n,), (eff,), (s,), "SAME_LOWER" if lower else "SAME")
    ]


def _pairs(padding, rank):
    if isinstance(padding, int):
        return [(padding, padding)] * rank
    return [(p, p) if isinstance(p, int) else tuple(p) for p in padding]


@pytest.fixture(scope="module")
def tf():
    tf = pytest.importorskip(
        "tensorflow", reason="TensorFlow is not installed (pip install refgrad[tensorflow])"
    )
    tf.config.experimental.enable_op_determinism()
    return tf


@pytest.mark.tensorflow
@pytest.mark.parametrize(
    "stride,padding,multiplier", [(1, "SAME", 1), (2, "SAME", 2), (1, "VALID", 3), (2, "VALID", 1)]
)
def test_depthwise_layout_matches_tensorflow(tf, stride, padding, multiplier):
    x = rng.standard_normal((2, 7, 6, 3))  # NHWC
    f = rng.standard_normal((3, 2, 3, multiplier))  # (kh, kw, C, M)
    theirs = tf.nn.depthwise_conv2d(x, f, [1, stride, stride, 1], padding).numpy()
    ours = convolution(
        to_channels_first(x), weight_from_depthwise(f), None, stride, padding.lower(), groups=3
    )
    np.testing.assert_allclose(to_channels_last(ours), theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.tensorflow
@pytest.mark.parametrize("stride,padding", [(2, "SAME"), (3, "SAME"), (2, "VALID"), (1, "SAME")])
def test_conv_transpose_layout_and_same_rule_match_tensorflow(tf, stride, padding):
    x = rng.standard_normal((2, 4, 5, 3))  # NHWC, 3 input channels
    f = rng.standard_normal((3, 2, 4, 3))  # (kh, kw, out=4, in=3)
    ours = convolution(to_channels_first(x), weight_from_hwio(f), None, stride, padding.lower(), 1, True)
    out_shape = (2, *ours.shape[2:], 4)
    theirs = tf.nn.conv2d_transpose(x, f, out_shape, [1, stride, stride, 1], padding).numpy()
    np.testing.assert_allclose(to_channels_last(ours), theirs, rtol=1e-12, atol=1e-12)
