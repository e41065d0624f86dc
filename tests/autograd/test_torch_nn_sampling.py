"""Agreement with PyTorch for ``nn.functional`` padding, interpolation, shuffles and
unfold/fold: values, first and second derivatives, errors (type and message)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.autograd.nn_agreement import agree, errors_agree


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


PADS = [
    ("constant_value", lambda F, x: F.pad(x, (1, 2), value=0.5), (2, 3)),
    ("constant_crop", lambda F, x: F.pad(x, (-1, 2, 1, -2)), (2, 4, 5)),
    ("constant_all_dims", lambda F, x: F.pad(x, (1, 1, 0, 1, 2, 0)), (2, 2, 3)),
    ("reflect1d", lambda F, x: F.pad(x, (3, 2), mode="reflect"), (2, 4)),
    ("reflect1d_batched", lambda F, x: F.pad(x, (1, 3), mode="reflect"), (1, 2, 4)),
    ("reflect2d", lambda F, x: F.pad(x, (2, 1, 1, 2), mode="reflect"), (1, 2, 3, 4)),
    ("reflect2d_negative", lambda F, x: F.pad(x, (-1, 2, 1, 0), mode="reflect"), (2, 3, 4)),
    ("reflect3d", lambda F, x: F.pad(x, (1, 1, 2, 0, 1, 1), mode="reflect"), (1, 1, 2, 3, 3)),
    ("replicate1d", lambda F, x: F.pad(x, (3, 1), mode="replicate"), (2, 3)),
    ("replicate2d", lambda F, x: F.pad(x, (2, 1, 3, 0), mode="replicate"), (1, 2, 2, 3)),
    ("replicate3d", lambda F, x: F.pad(x, (1, 2, 0, 1, 2, 1), mode="replicate"), (2, 2, 2, 2)),
    ("circular1d", lambda F, x: F.pad(x, (2, 3), mode="circular"), (1, 2, 4)),
    ("circular2d", lambda F, x: F.pad(x, (1, 2, 2, 0), mode="circular"), (2, 3, 4)),
    ("circular3d", lambda F, x: F.pad(x, (1, 1, 1, 1, 1, 1), mode="circular"), (1, 1, 2, 2, 3)),
    ("empty_batch", lambda F, x: F.pad(x, (1, 1), mode="reflect"), (0, 2, 4)),
]

INTERP = [
    ("nearest1d_size", lambda F, x: F.interpolate(x, 7), (1, 2, 3)),
    ("nearest1d_down", lambda F, x: F.interpolate(x, scale_factor=0.6), (2, 1, 7)),
    ("nearest2d_scale", lambda F, x: F.interpolate(x, scale_factor=(1.5, 2.3)), (1, 2, 3, 4)),
    (
        "nearest2d_recompute",
        lambda F, x: F.interpolate(x, scale_factor=1.7, recompute_scale_factor=True),
        (1, 1, 3, 5),
    ),
    ("nearest3d", lambda F, x: F.interpolate(x, (3, 4, 2)), (1, 1, 2, 3, 5)),
    ("nearest_exact1d", lambda F, x: F.interpolate(x, 5, mode="nearest-exact"), (1, 2, 3)),
    (
        "nearest_exact2d_scale",
        lambda F, x: F.interpolate(x, scale_factor=1.3, mode="nearest-exact"),
        (1, 1, 4, 5),
    ),
    ("nearest_exact3d", lambda F, x: F.interpolate(x, (3, 2, 5), mode="nearest-exact"), (1, 1, 2, 3, 4)),
    ("linear", lambda F, x: F.interpolate(x, 7, mode="linear"), (1, 2, 3)),
    ("linear_align", lambda F, x: F.interpolate(x, 7, mode="linear", align_corners=True), (1, 2, 3)),
    ("linear_down_scale", lambda F, x: F.interpolate(x, scale_factor=0.45, mode="linear"), (2, 1, 9)),
    (
        "linear_single_out_align",
        lambda F, x: F.interpolate(x, 1, mode="linear", align_corners=True),
        (1, 1, 4),
    ),
    ("bilinear", lambda F, x: F.interpolate(x, (5, 3), mode="bilinear"), (1, 2, 3, 4)),
    (
        "bilinear_align_scale",
        lambda F, x: F.interpolate(x, scale_factor=2.5, mode="bilinear", align_corners=True),
        (1, 1, 2, 3),
    ),
    ("bilinear_scale", lambda F, x: F.interpolate(x, scale_factor=(1.5, 0.7), mode="bilinear"), (1, 1, 4, 5)),
    ("bicubic", lambda F, x: F.interpolate(x, (5, 6), mode="bicubic"), (1, 2, 3, 4)),
    (
        "bicubic_align",
        lambda F, x: F.interpolate(x, (7, 3), mode="bicubic", align_corners=True),
        (1, 1, 4, 4),
    ),
    ("bicubic_scale", lambda F, x: F.interpolate(x, scale_factor=1.6, mode="bicubic"), (1, 1, 3, 3)),
    ("trilinear", lambda F, x: F.interpolate(x, (3, 4, 3), mode="trilinear"), (1, 1, 2, 3, 2)),
    (
        "trilinear_align",
        lambda F, x: F.interpolate(x, scale_factor=1.5, mode="trilinear", align_corners=True),
        (1, 1, 2, 2, 3),
    ),
    ("area1d", lambda F, x: F.interpolate(x, 3, mode="area"), (1, 2, 7)),
    ("area2d", lambda F, x: F.interpolate(x, scale_factor=0.5, mode="area"), (1, 2, 5, 4)),
    ("area3d", lambda F, x: F.interpolate(x, (2, 2, 3), mode="area"), (1, 1, 3, 5, 4)),
    ("upsample_nearest", lambda F, x: F.upsample_nearest(x, scale_factor=2), (1, 1, 2, 3)),
    ("upsample_bilinear", lambda F, x: F.upsample_bilinear(x, (3, 5)), (1, 1, 2, 3)),
    ("empty_batch", lambda F, x: F.interpolate(x, 5, mode="linear"), (0, 2, 3)),
]

REARRANGE = [
    ("pixel_shuffle", lambda F, x: F.pixel_shuffle(x, 2), (2, 8, 2, 3)),
    ("pixel_shuffle_3d", lambda F, x: F.pixel_shuffle(x, 3), (9, 1, 2)),
    ("pixel_unshuffle", lambda F, x: F.pixel_unshuffle(x, 2), (1, 2, 4, 6)),
    ("channel_shuffle", lambda F, x: F.channel_shuffle(x, 3), (2, 6, 2)),
    ("channel_shuffle_4d", lambda F, x: F.channel_shuffle(x, 2), (1, 4, 2, 3)),
    ("unfold", lambda F, x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (2, 2, 4, 5)),
    ("unfold_unbatched", lambda F, x: F.unfold(x, 2), (3, 3, 4)),
    ("fold", lambda F, x: F.fold(x, (4, 5), 2, stride=(2, 1)), (2, 8, 8)),
    ("fold_pad_dilation", lambda F, x: F.fold(x, (4, 4), 2, dilation=2, padding=1), (1, 4, 16)),
    ("fold_unbatched", lambda F, x: F.fold(x, (3, 3), 2), (4, 4)),
]


CASES = PADS + INTERP + REARRANGE


@pytest.mark.parametrize("label, fn, shape", CASES, ids=[c[0] for c in CASES])
def test_agrees(label, fn, shape):
    agree(lambda F, lib, x: fn(F, x) * 1.5, [_x(*shape)])


ERRORS = [
    ("reflect_too_big", lambda F, x: F.pad(x, (0, 0, 5, 0), mode="reflect"), (1, 2, 5, 4)),
    ("reflect_too_big_1d", lambda F, x: F.pad(x, (4, 1), mode="reflect"), (1, 2, 4)),
    ("pad_odd", lambda F, x: F.pad(x, (1,)), (1, 2, 5, 4)),
    ("pad_too_long", lambda F, x: F.pad(x, (1, 1, 1, 1, 1, 1, 1, 1)), (1, 2, 5)),
    ("replicate_wrong_size", lambda F, x: F.pad(x, (1, 1), mode="replicate"), (1, 2, 5, 4)),
    ("circular_wraps_twice", lambda F, x: F.pad(x, (6, 0), mode="circular"), (1, 2, 5)),
    ("pad_mode", lambda F, x: F.pad(x, (1, 1), mode="foo"), (1, 2, 5)),
    ("reflect_with_value", lambda F, x: F.pad(x, (1, 1), mode="reflect", value=1.0), (1, 2, 5)),
    ("replicate_empty_dim", lambda F, x: F.pad(x, (1, 1), mode="replicate"), (1, 2, 0)),
    ("interp_both", lambda F, x: F.interpolate(x, size=3, scale_factor=2), (1, 2, 5, 4)),
    ("interp_none", lambda F, x: F.interpolate(x), (1, 2, 5, 4)),
    ("interp_align_nearest", lambda F, x: F.interpolate(x, size=3, align_corners=True), (1, 2, 5, 4)),
    ("interp_bilinear_3d_input", lambda F, x: F.interpolate(x, size=3, mode="bilinear"), (1, 2, 5)),
    ("interp_mode", lambda F, x: F.interpolate(x, size=3, mode="foo"), (1, 2, 5)),
    ("interp_size_len", lambda F, x: F.interpolate(x, size=(3, 3, 3)), (1, 2, 5, 4)),
    ("interp_2d_input", lambda F, x: F.interpolate(x, size=3), (2, 5)),
    ("pixel_shuffle_channels", lambda F, x: F.pixel_shuffle(x, 2), (1, 2, 5, 4)),
    ("pixel_unshuffle_height", lambda F, x: F.pixel_unshuffle(x, 2), (1, 2, 5, 4)),
    ("pixel_shuffle_dims", lambda F, x: F.pixel_shuffle(x, 2), (5,)),
    ("channel_shuffle_groups", lambda F, x: F.channel_shuffle(x, 3), (1, 2, 5, 4)),
    ("channel_shuffle_2d", lambda F, x: F.channel_shuffle(x, 2), (1, 4)),
    ("channel_shuffle_1d", lambda F, x: F.channel_shuffle(x, 2), (4,)),
    ("unfold_too_big", lambda F, x: F.unfold(x, 6), (1, 2, 5, 4)),
    ("fold_channels", lambda F, x: F.fold(x, (3, 3), 2), (1, 5, 4)),
    ("fold_blocks", lambda F, x: F.fold(x, (3, 3), 2), (1, 4, 5)),
]


@pytest.mark.parametrize("label, fn, shape", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(label, fn, shape):
    errors_agree(lambda F, lib, x: fn(F, x), _x(*shape))


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize(
    "size", [(2, 3, 4, 5), (1, 1, 1, 3), (2, 1, 3, 2, 4)], ids=["2d", "2d_single_row", "3d"]
)
def test_affine_grid(size, align_corners):
    theta = _x(size[0], len(size) - 2, len(size) - 1)
    agree(lambda F, lib, t: F.affine_grid(t, size, align_corners=align_corners) ** 2, [theta])


AFFINE_ERRORS = [
    ("size_3d", lambda F, t: F.affine_grid(t, (1, 2, 3), align_corners=False), (1, 2, 3)),
    ("theta_shape", lambda F, t: F.affine_grid(t, (1, 2, 3, 3), align_corners=False), (1, 3, 4)),
    ("theta_shape_3d", lambda F, t: F.affine_grid(t, (1, 2, 3, 3, 3), align_corners=False), (1, 2, 3)),
]


@pytest.mark.parametrize("label, fn, shape", AFFINE_ERRORS, ids=[c[0] for c in AFFINE_ERRORS])
def test_affine_grid_errors(label, fn, shape):
    errors_agree(lambda F, lib, t: fn(F, t), _x(*shape))


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample(mode, padding_mode, align_corners):
    x = _x(2, 2, 3, 4)
    grid = _x(2, 3, 5, 2, seed=1) * 1.7  # past the edges too (past twice the span for reflection)
    grid[0, 0, :, 0] = [-6.3, -3.1, 2.6, 4.9, 7.2]
    agree(
        lambda F, lib, x, g: F.grid_sample(
            x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners
        ),
        [x, grid],
    )


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_3d(mode, padding_mode, align_corners):
    """5-d input: trilinear (``bilinear``) and nearest, PyTorch's scalar grid_sampler_3d."""
    x = _x(2, 2, 3, 4, 2)
    grid = _x(2, 2, 3, 2, 3, seed=1) * 1.6
    agree(
        lambda F, lib, x, g: F.grid_sample(
            x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners
        ),
        [x, grid],
    )


@pytest.mark.parametrize(
    "xs, gs",
    [
        ((0, 2, 3, 3), (0, 2, 2, 2)),
        ((1, 0, 3, 3), (1, 2, 2, 2)),
        ((1, 2, 3, 3), (1, 0, 2, 2)),
        ((1, 1, 1, 1), (1, 2, 3, 2)),
    ],
    ids=["empty_batch", "no_channels", "empty_grid", "single_pixel"],
)
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_edges(xs, gs, mode):
    if mode == "bicubic" and 0 in gs:
        pytest.skip("torch 2.13's bicubic grid_sampler_2d_backward fails on an empty grid (a reshape error)")
    agree(
        lambda F, lib, x, g: F.grid_sample(x, g, mode=mode, padding_mode="reflection", align_corners=True),
        [_x(*xs), _x(*gs, seed=1) * 1.5],
    )


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_grid_sampler_2d_3d(mode):
    """The aten spellings with PyTorch's enum values."""
    x, grid = _x(1, 2, 3, 4), _x(1, 2, 3, 2, seed=1) * 1.2
    agree(lambda F, lib, x, g: lib.grid_sampler_2d(x, g, mode, 2, False), [x, grid])
    agree(lambda F, lib, x, g: lib.grid_sampler(x, g, mode, 1, True), [x, grid])
    if mode != 2:
        x, grid = _x(1, 2, 3, 2, 2), _x(1, 2, 2, 2, 3, seed=1) * 1.2
        agree(lambda F, lib, x, g: lib.grid_sampler_3d(x, g, mode, 0, True), [x, grid])


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("in_dims", [(0, 0), (None, 0), (0, None)], ids=["both", "grid", "input"])
def test_grid_sample_vmap(mode, in_dims):
    """vmap (without the slice-loop fallback) and vmap of the VJP agree with torch.func."""
    import torch

    import reference as T

    x, grid = _x(3, 2, 2, 3, 4), _x(3, 2, 3, 5, 2, seed=1) * 1.4
    if in_dims[0] is None:
        x = x[0]
    if in_dims[1] is None:
        grid = grid[0]

    def f(lib):
        def fn(x, g):
            return lib.nn.functional.grid_sample(x, g, mode=mode, padding_mode="border", align_corners=False)

        return fn

    want = torch.func.vmap(f(torch), in_dims=in_dims)(torch.tensor(x), torch.tensor(grid))
    got = T.func.vmap(f(T), in_dims=in_dims, allow_fallback=False)(T.tensor(x), T.tensor(grid))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)

    def loss(lib):
        return lambda x, g: (f(lib)(x, g) ** 2).sum()

    want = torch.func.vmap(torch.func.grad(loss(torch), argnums=(0, 1)), in_dims=in_dims)(
        torch.tensor(x), torch.tensor(grid)
    )
    got = T.func.vmap(T.func.grad(loss(T), argnums=(0, 1)), in_dims=in_dims, allow_fallback=False)(
        T.tensor(x), T.tensor(grid)
    )
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


GRID_ERRORS = [
    ("last_dim", lambda F, lib, x: F.grid_sample(x, x[:, :1, :3, :3], align_corners=False)),
    ("mode", lambda F, lib, x: F.grid_sample(x, x[:, :1, :3, :2], mode="foo", align_corners=False)),
    (
        "padding_mode",
        lambda F, lib, x: F.grid_sample(x, x[:, :1, :3, :2], padding_mode="foo", align_corners=False),
    ),
    ("dims", lambda F, lib, x: F.grid_sample(x, x[:, 0, :3, :2], align_corners=False)),
    ("dims_3d_input", lambda F, lib, x: F.grid_sample(x[0], x[0, :, :, :1], align_corners=False)),
    ("batch", lambda F, lib, x: F.grid_sample(x, x[:, :1, :3, :2].expand(2, 1, 3, 2), align_corners=False)),
    ("empty_spatial", lambda F, lib, x: F.grid_sample(x[:, :, :0], x[:, :1, :3, :2], align_corners=False)),
    (
        "bicubic_5d",
        lambda F, lib, x: F.grid_sample(
            x.unsqueeze(2), x[:, :1, :3, :3].unsqueeze(1), mode="bicubic", align_corners=False
        ),
    ),
    ("dtype", lambda F, lib, x: F.grid_sample(x.float(), x[:, :1, :3, :2], align_corners=False)),
    (
        "grid_sampler_2d_5d",
        lambda F, lib, x: lib.grid_sampler_2d(x.unsqueeze(2), x[:, :1, :3, :3].unsqueeze(1), 0, 0, False),
    ),
    ("grid_sampler_3d_4d", lambda F, lib, x: lib.grid_sampler_3d(x, x[:, :1, :3, :2], 0, 0, False)),
]


@pytest.mark.parametrize("label, fn", GRID_ERRORS, ids=[c[0] for c in GRID_ERRORS])
def test_grid_sample_errors(label, fn):
    errors_agree(fn, _x(1, 2, 5, 4))


@pytest.mark.parametrize(
    "shape, pad, value", [((1, 3, 3), (2, 2), 0.0), ((2, 3), (1, -1, 2, 0), 1.5), ((2, 3), (0, 1), -2.0)]
)
def test_constant_pad_nd(shape, pad, value):
    agree(lambda F, lib, x: lib.constant_pad_nd(x, pad, value) ** 2, [_x(*shape)])


def test_constant_pad_nd_errors():
    errors_agree(lambda F, lib, x: lib.constant_pad_nd(x, (1, 2, 3)), _x(2, 3))
    errors_agree(lambda F, lib, x: lib.constant_pad_nd(x, (-3, -1)), _x(2, 3))
