"""The convolution defects of issue 11: unbatched input, ``lhs_dilation``, ``batch_groups`` in the
backward and double backward and with ``transposed``, and PyTorch's error for a zero spatial size."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from reference.conv import ConvConfigError, convolution, convolution_backward, convolution_double_backward

rng = np.random.default_rng(3)


def _r(*shape):
    return rng.standard_normal(shape)


def _dot(a, b):
    return float(np.sum(a * b))


# ---- unbatched input --------------------------------------------------------------------------------

UNBATCHED = [
    ((3, 6, 5), (4, 3, 2, 2), dict(stride=(2, 1), padding=1)),
    ((4, 7), (6, 2, 3), dict(groups=2, dilation=2)),
    ((2, 4, 3, 3), (2, 3, 2, 2, 1), dict(transposed=True, stride=2, output_padding=1)),
]


@pytest.mark.parametrize("xs, ws, kw", UNBATCHED)
def test_unbatched_forward_backward_double_backward(xs, ws, kw):
    x, w = _r(*xs), _r(*ws)
    params = dict(stride=1, padding=0, dilation=1, transposed=False, output_padding=0, groups=1)
    params.update(kw)
    geo = tuple(
        params[k] for k in ("stride", "padding", "dilation", "transposed", "output_padding", "groups")
    )
    y = convolution(x, w, None, *geo)
    np.testing.assert_array_equal(y, convolution(x[None], w, None, *geo)[0])
    gy = _r(*y.shape)
    gi, gw, gb = convolution_backward(gy, x, w, None, *geo, (True, True, True))
    ref = convolution_backward(gy[None], x[None], w, None, *geo, (True, True, True))
    np.testing.assert_array_equal(gi, ref[0][0])
    np.testing.assert_array_equal(gw, ref[1])
    np.testing.assert_array_equal(gb, ref[2])
    ggI, ggW = _r(*x.shape), _r(*w.shape)
    out = convolution_double_backward(ggI, ggW, None, gy, w, x, *geo, (True, True, True))
    ref = convolution_double_backward(ggI[None], ggW, None, gy[None], w, x[None], *geo, (True, True, True))
    np.testing.assert_array_equal(out[0], ref[0][0])
    np.testing.assert_array_equal(out[1], ref[1][0])
    np.testing.assert_array_equal(out[2], ref[2])


@pytest.mark.torch
def test_unbatched_matches_torch_conv2d():
    torch = pytest.importorskip("torch")
    x, w = _r(3, 6, 5), _r(4, 3, 2, 2)
    theirs = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), stride=2, padding=1).numpy()
    np.testing.assert_allclose(convolution(x, w, None, 2, 1), theirs, rtol=1e-12, atol=1e-12)


# ---- lhs_dilation ----------------------------------------------------------------------------------


@pytest.mark.jax
@pytest.mark.parametrize(
    "lhs, stride, padding, dilation", [(2, 1, 0, 1), ((3, 2), (1, 2), ((2, 1), (0, 1)), 1), (2, 1, 1, (2, 1))]
)
def test_lhs_dilation_matches_jax(lhs, stride, padding, dilation):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from jax import lax

    x, w = _r(2, 3, 4, 5), _r(4, 3, 2, 3)
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
    pads = [(padding, padding)] * 2 if isinstance(padding, int) else list(padding)
    theirs = lax.conv_general_dilated(
        x,
        w,
        pair(stride),
        pads,
        lhs_dilation=pair(lhs),
        rhs_dilation=pair(dilation),
        precision=lax.Precision.HIGHEST,
    )
    ours = convolution(x, w, None, stride, padding, dilation, lhs_dilation=lhs)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-12, atol=1e-12)


def test_lhs_dilation_backward_is_the_adjoint():
    x, w = _r(2, 3, 4, 5), _r(4, 3, 2, 3)
    geo = ((2, 1), 1, 1, False, 0, 1)
    y = convolution(x, w, None, *geo, lhs_dilation=(2, 3))
    gy = _r(*y.shape)
    gi, gw, _ = convolution_backward(gy, x, w, None, *geo, (True, True, False), lhs_dilation=(2, 3))
    assert gi.shape == x.shape and gw.shape == w.shape
    np.testing.assert_allclose(_dot(y, gy), _dot(x, gi), rtol=1e-12)
    np.testing.assert_allclose(_dot(y, gy), _dot(w, gw), rtol=1e-12)


def test_lhs_dilation_is_an_extra_keyword_and_is_checked():
    x, w = _r(1, 2, 4), _r(3, 2, 2)
    np.testing.assert_array_equal(convolution(x, w, lhs_dilation=1), convolution(x, w))
    with pytest.raises(ConvConfigError, match="lhs_dilation"):
        convolution(x, w, lhs_dilation=0)
    with pytest.raises(ConvConfigError, match="lhs_dilation"):
        convolution(x, w, lhs_dilation=(1, 2))


# ---- batch_groups: backward, double backward, transposed ------------------------------------------------

BG = [(2, False), (3, False), (2, True), (3, True)]


def _bg_arrays(bg, transposed):
    x = _r(2 * bg, 3, 5, 4)
    w = _r(3, 2 * bg, 2, 2) if transposed else _r(2 * bg, 3, 2, 2)
    return x, w


@pytest.mark.parametrize("bg, transposed", BG)
def test_batch_groups_backward_is_the_adjoint(bg, transposed):
    x, w = _bg_arrays(bg, transposed)
    geo = (2 if transposed else 1, 1, 1, transposed, 1 if transposed else 0, 1)
    y = convolution(x, w, None, *geo, batch_groups=bg)
    gy = _r(*y.shape)
    gi, gw, gb = convolution_backward(gy, x, w, (y.shape[1],), *geo, (True, True, True), batch_groups=bg)
    assert gi.shape == x.shape and gw.shape == w.shape
    np.testing.assert_allclose(_dot(y, gy), _dot(x, gi), rtol=1e-11)
    np.testing.assert_allclose(_dot(y, gy), _dot(w, gw), rtol=1e-11)
    np.testing.assert_allclose(gb, gy.sum((0, 2, 3)), rtol=1e-12)


@pytest.mark.parametrize("bg, transposed", BG)
def test_batch_groups_double_backward_by_its_three_terms(bg, transposed):
    x, w = _bg_arrays(bg, transposed)
    geo = (1, 0, 1, transposed, 0, 1)
    y = convolution(x, w, None, *geo, batch_groups=bg)
    gy, ggI, ggW, ggb = _r(*y.shape), _r(*x.shape), _r(*w.shape), _r(y.shape[1])
    ggo, gi, gw = convolution_double_backward(
        ggI, ggW, ggb, gy, w, x, *geo, (True, True, True), batch_groups=bg
    )
    conv = lambda a, b: convolution(a, b, None, *geo, batch_groups=bg)  # noqa: E731
    np.testing.assert_allclose(ggo, conv(ggI, w) + conv(x, ggW) + ggb.reshape(1, -1, 1, 1), rtol=1e-11)
    back = lambda a, b, m: convolution_backward(gy, a, b, None, *geo, m, batch_groups=bg)  # noqa: E731
    np.testing.assert_allclose(gi, back(x, ggW, (True, False, False))[0], rtol=1e-11)
    np.testing.assert_allclose(gw, back(ggI, w, (False, True, False))[1], rtol=1e-11)


@pytest.mark.parametrize("bg", [2, 3])
def test_transposed_batch_groups_by_definition(bg):
    """Block b of the input batch feeds output channels of block b through weight[:, block b]."""
    x, w = _bg_arrays(bg, True)
    nb, ob = x.shape[0] // bg, w.shape[1] // bg
    ours = convolution(x, w, None, 2, 1, 1, True, 1, batch_groups=bg)
    blocks = [
        convolution(x[b * nb : (b + 1) * nb], w[:, b * ob : (b + 1) * ob], None, 2, 1, 1, True, 1)
        for b in range(bg)
    ]
    np.testing.assert_allclose(ours, np.concatenate(blocks, axis=1), rtol=1e-12, atol=1e-12)


def test_transposed_batch_groups_checks_the_output_channels():
    with pytest.raises(ConvConfigError, match="batch_groups"):
        convolution(_r(4, 3, 5), _r(3, 3, 2), None, 1, 0, 1, True, 0, batch_groups=2)


# ---- zero spatial size -------------------------------------------------------------------------------------


@pytest.mark.parametrize("transposed", [False, True])
def test_zero_spatial_size_is_rejected_as_in_pytorch(transposed):
    w = _r(2, 3, 2, 2) if transposed else _r(3, 2, 1, 1)
    with pytest.raises(ConvConfigError, match="zero spatial size"):
        convolution(np.zeros((1, 2, 0, 3)), w, None, 1, 1, 1, transposed, 0)
    # a zero batch stays valid
    assert convolution(np.zeros((0, 2, 3, 3)), w, None, 1, 0, 1, transposed, 0).shape[0] == 0


@pytest.mark.torch
@pytest.mark.parametrize(
    "fn, xs, ws",
    [
        ("conv_transpose2d", (1, 2, 0, 3), (2, 3, 2, 2)),
        ("conv_transpose1d", (1, 2, 0), (2, 3, 2)),
        ("conv_transpose3d", (1, 2, 2, 0, 2), (2, 3, 1, 1, 1)),
    ],
)
def test_zero_spatial_size_error_matches_torch(fn, xs, ws):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.nn.functional, fn)(
            torch.zeros(xs, dtype=torch.float64), torch.zeros(ws, dtype=torch.float64)
        )
    with pytest.raises(RuntimeError) as ours:
        getattr(T.nn.functional, fn)(T.tensor(np.zeros(xs)), T.tensor(np.zeros(ws)))
    assert str(ours.value) == str(theirs.value)
