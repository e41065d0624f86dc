"""Agreement with PyTorch for ``nn.functional`` pooling: values, indices, first and second
derivatives, errors (type and message)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.autograd.nn_agreement import agree, errors_agree


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


AVG = [
    ("1d", lambda F, x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True), (2, 3, 8)),
    ("1d_nopad_count", lambda F, x: F.avg_pool1d(x, 2, 1, 1, count_include_pad=False), (3, 7)),
    ("2d_ceil_past_edge", lambda F, x: F.avg_pool2d(x, 2, 2, 1, ceil_mode=True), (1, 2, 4, 5)),
    (
        "2d_exclude_pad",
        lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        (2, 1, 5, 6),
    ),
    ("2d_rect", lambda F, x: F.avg_pool2d(x, (2, 3), (1, 2), (1, 0)), (2, 5, 4)),
    ("2d_divisor", lambda F, x: F.avg_pool2d(x, 2, divisor_override=3), (1, 2, 4, 4)),
    ("2d_negative_divisor", lambda F, x: F.avg_pool2d(x, 2, 1, divisor_override=-2), (1, 1, 3, 3)),
    ("3d", lambda F, x: F.avg_pool3d(x, 2, 2, 1, ceil_mode=True, count_include_pad=False), (1, 2, 3, 4, 5)),
    ("3d_divisor", lambda F, x: F.avg_pool3d(x, (1, 2, 2), divisor_override=5), (2, 2, 4, 4)),
    ("2d_empty_batch", lambda F, x: F.avg_pool2d(x, 2), (0, 2, 4, 4)),
]
MAX = [
    ("1d", lambda F, x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True, return_indices=True), (2, 3, 8)),
    ("1d_dilation", lambda F, x: F.max_pool1d(x, 2, 1, 0, 2), (3, 7)),
    ("2d_pad_ceil", lambda F, x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True), (1, 2, 5, 6)),
    ("2d_dilation", lambda F, x: F.max_pool2d(x, 2, 1, 1, dilation=2, return_indices=True), (2, 5, 5)),
    ("3d", lambda F, x: F.max_pool3d(x, 2, 2, 1, return_indices=True, ceil_mode=True), (1, 2, 3, 4, 5)),
    ("3d_unbatched", lambda F, x: F.max_pool3d(x, (1, 2, 2), dilation=(1, 1, 2)), (2, 3, 4, 5)),
    ("lp1d", lambda F, x: F.lp_pool1d(x.abs() + 0.5, 2, 3, 2), (2, 7)),
    ("lp2d", lambda F, x: F.lp_pool2d(x.abs() + 0.5, 3.0, 2, ceil_mode=True), (1, 2, 5, 5)),
    ("lp3d", lambda F, x: F.lp_pool3d(x.abs() + 0.5, 1.5, 2), (1, 1, 2, 4, 4)),
]
ADAPTIVE = [
    ("avg1d", lambda F, x: F.adaptive_avg_pool1d(x, 3), (2, 3, 7)),
    ("avg2d", lambda F, x: F.adaptive_avg_pool2d(x, (3, None)), (1, 2, 5, 4)),
    ("avg2d_up", lambda F, x: F.adaptive_avg_pool2d(x, 7), (2, 3, 5)),
    ("avg3d", lambda F, x: F.adaptive_avg_pool3d(x, (2, 3, 2)), (1, 1, 3, 5, 4)),
    ("max1d", lambda F, x: F.adaptive_max_pool1d(x, 3, return_indices=True), (2, 3, 7)),
    ("max2d", lambda F, x: F.adaptive_max_pool2d(x, (3, 2), return_indices=True), (1, 2, 5, 4)),
    ("max3d", lambda F, x: F.adaptive_max_pool3d(x, 2, return_indices=True), (1, 2, 3, 5, 4)),
]


@pytest.mark.parametrize("label, fn, shape", AVG + MAX + ADAPTIVE, ids=[c[0] for c in AVG + MAX + ADAPTIVE])
def test_pool(label, fn, shape):
    agree(lambda F, lib, x: fn(F, x), [_x(*shape)])


def test_max_pool_ties_nan_inf():
    x = np.array([[[[1.0, 1.0, 0.0], [1.0, np.nan, 2.0], [-np.inf, -np.inf, 3.0]]]])
    agree(lambda F, lib, x: F.max_pool2d(x, 2, 1, return_indices=True), [x], second_order=False)
    y = np.array([[[[-np.inf, -np.inf], [-np.inf, -np.inf]]]])
    agree(lambda F, lib, x: F.max_pool2d(x, 2, 1, padding=1, return_indices=True), [y], second_order=False)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_roundtrip(n):
    shape = (2, 2) + (4,) * n
    x = _x(*shape)

    def prog(F, lib, x):
        pool = getattr(F, f"max_pool{n}d")
        unpool = getattr(F, f"max_unpool{n}d")
        v, i = pool(x, 2, return_indices=True)
        return unpool(v * 2, i, 2), unpool(v, i, 2, output_size=(5,) * n)

    agree(prog, [x])


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_empty_batch(n):
    """An empty batch unpools to an empty output (the gradient is empty too); it crashed."""

    def prog(F, lib, x):
        v, i = getattr(F, f"max_pool{n}d")(x, 2, return_indices=True)
        return getattr(F, f"max_unpool{n}d")(v, i, 2)

    agree(prog, [_x(*((0, 2) + (4,) * n))])


def test_max_unpool_overlapping_windows():
    x = _x(1, 1, 5, 5)

    def prog(F, lib, x):
        v, i = F.max_pool2d(x, 3, 1, return_indices=True)
        return F.max_unpool2d(v, i, 3, 1)

    agree(prog, [x])


ERRORS = [
    ("avg2d_zero_divisor", lambda F, x: F.avg_pool2d(x, 2, divisor_override=0), (1, 2, 4, 4)),
    ("avg2d_pad", lambda F, x: F.avg_pool2d(x, 2, padding=2), (1, 2, 5, 4)),
    ("avg3d_pad", lambda F, x: F.avg_pool3d(x, 2, padding=2), (1, 2, 4, 4, 4)),
    ("avg1d_pad", lambda F, x: F.avg_pool1d(x, 2, padding=2), (1, 2, 5)),
    ("avg1d_dims", lambda F, x: F.avg_pool1d(x, 2), (1, 2, 5, 4)),
    ("avg2d_small", lambda F, x: F.avg_pool2d(x, 6), (1, 2, 5, 4)),
    ("avg2d_stride0", lambda F, x: F.avg_pool2d(x, 2, 0), (1, 2, 5, 4)),
    ("avg2d_kernel3", lambda F, x: F.avg_pool2d(x, (2, 2, 2)), (1, 2, 5, 4)),
    ("max2d_pad", lambda F, x: F.max_pool2d(x, 2, padding=2), (1, 2, 5, 4)),
    ("max1d_pad", lambda F, x: F.max_pool1d(x, 2, padding=2), (1, 2, 5)),
    ("max2d_small", lambda F, x: F.max_pool2d(x, 6), (1, 2, 5, 4)),
    ("max3d_small", lambda F, x: F.max_pool3d(x, 5), (1, 2, 4, 3, 5)),
    ("avg3d_smaller_than_kernel", lambda F, x: F.avg_pool3d(x, 3), (1, 1, 2, 2, 2)),
    ("avg3d_smaller_padded", lambda F, x: F.avg_pool3d(x, (3, 1, 1), padding=1), (1, 2, 2, 4)),
    ("lp3d_smaller_than_kernel", lambda F, x: F.lp_pool3d(x, 2, (1, 1, 5)), (1, 1, 2, 2, 4)),
    ("max1d_small", lambda F, x: F.max_pool1d(x, 6), (1, 2, 5)),
    ("max2d_dims", lambda F, x: F.max_pool2d(x, 2), (2, 5)),
    ("max1d_dims", lambda F, x: F.max_pool1d(x, 2), (1, 2, 5, 4)),
    ("max2d_dilation0", lambda F, x: F.max_pool2d(x, 2, dilation=0), (1, 2, 5, 4)),
    ("adaptive_avg2d_dims", lambda F, x: F.adaptive_avg_pool2d(x, 2), (5,)),
    ("adaptive_avg2d_negative", lambda F, x: F.adaptive_avg_pool2d(x, -1), (1, 2, 5, 4)),
    ("adaptive_avg1d_dims", lambda F, x: F.adaptive_avg_pool1d(x, 2), (1, 2, 5, 4)),
    ("unpool_output_size", lambda F, x: F.max_unpool2d(x, x.long() * 0, 2, output_size=(3, 3)), (1, 2, 5, 4)),
    ("unpool1d_no_channels", lambda F, x: F.max_unpool1d(x, x.long() * 0, 2), (2, 0, 2)),
    ("unpool2d_empty_spatial", lambda F, x: F.max_unpool2d(x, x.long() * 0, 2), (2, 3, 0, 2)),
    ("unpool3d_no_channels", lambda F, x: F.max_unpool3d(x, x.long() * 0, 2), (2, 0, 2, 2, 2)),
]


@pytest.mark.parametrize("label, fn, shape", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(label, fn, shape):
    errors_agree(lambda F, lib, x: fn(F, x), _x(*shape))


@pytest.mark.parametrize(
    "fn",
    [
        lambda F, a: F.max_pool3d(a, 2, 1, 1).sum(),
        lambda F, a: F.adaptive_max_pool2d(a[0], (3, 2)).sum(),
        lambda F, a: F.adaptive_max_pool3d(a, 2).sum(),
        lambda F, a: F.max_pool1d(a[0, 0], 2).sum(),
    ],
    ids=["max_pool3d", "adaptive_max_pool2d", "adaptive_max_pool3d", "max_pool1d"],
)
def test_vmap_of_grad_of_max_pools(fn):
    """The argmax inside the backward is per sample under vmap (no aux crosses the transform)."""
    import torch

    import reference as T
    from reference.func import grad, vmap

    x = _x(3, 1, 2, 4, 4)
    got = vmap(grad(lambda a: fn(T.nn.functional, a)))(T.tensor(x))
    want = torch.func.vmap(torch.func.grad(lambda a: fn(torch.nn.functional, a)))(torch.tensor(x))
    np.testing.assert_allclose(got._data, want.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "n, shape, kwargs",
    [
        (2, (2, 3, 7, 6), {"output_size": (4, 3)}),
        (2, (2, 5, 5), {"output_ratio": (0.6, 0.6)}),
        (3, (1, 2, 5, 6, 4), {"output_size": (3, 2, 2)}),
    ],
    ids=["2d", "2d_unbatched_ratio", "3d"],
)
def test_fractional_max_pool_explicit_samples(n, shape, kwargs):
    batch = shape[:2] if len(shape) == n + 2 else (1, shape[0])
    samples = np.random.default_rng(5).random(batch + (n,))

    def prog(F, lib, x):
        fn = getattr(F, f"fractional_max_pool{n}d")
        return fn(x, 2, return_indices=True, _random_samples=lib.tensor(samples), **kwargs)

    agree(prog, [_x(*shape)])


@pytest.mark.parametrize(
    "n, shape, out",
    [
        (2, (1, 1, 5, 5), (5, 5)),
        (2, (1, 1, 5, 5), (3, 5)),
        (3, (1, 1, 5, 5, 5), (4, 3, 3)),
        (3, (1, 1, 6, 5, 5), (3, 5, 5)),
        (3, (1, 1, 6, 5, 5), (3, 5, 3)),
    ],
    ids=["2d_height", "2d_width", "3d_time_edge", "3d_width", "3d_height"],
)
def test_fractional_max_pool_too_large(n, shape, out):
    """aten's rule: 2-d allows out + k - 1 == in, 3-d needs out + k - 1 < in (time, width, height)."""
    samples = np.random.default_rng(5).random(shape[:2] + (n,))
    errors_agree(
        lambda F, lib, x: getattr(F, f"fractional_max_pool{n}d")(
            x, 2, output_size=out, _random_samples=lib.tensor(samples)
        ),
        _x(*shape),
    )


@pytest.mark.parametrize("n, shape, out", [(2, (1, 2, 5, 5), (4, 4)), (3, (1, 1, 6, 6, 6), (4, 4, 4))])
def test_fractional_max_pool_largest_output(n, shape, out):
    """The largest output each accepts: 2-d out + k - 1 == in, 3-d out + k - 1 == in - 1."""
    samples = np.random.default_rng(6).random(shape[:2] + (n,))
    agree(
        lambda F, lib, x: getattr(F, f"fractional_max_pool{n}d")(
            x, 2, output_size=out, _random_samples=lib.tensor(samples)
        ),
        [_x(*shape)],
    )
