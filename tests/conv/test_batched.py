"""batched_convolution: functorch's fold-into-groups rule against slice-loop-stack, and JAX's
batch_group_count against its definition and against JAX itself."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference.conv import batched_convolution, convolution
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
