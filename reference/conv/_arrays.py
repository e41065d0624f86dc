"""Small array helpers the convolution kernels share. Namespace-agnostic (NumPy or CuPy)."""

from __future__ import annotations

import itertools

from reference.backend import namespace_of


def pad_or_crop(x, pads, value=0):
    """``x`` (N, C, *spatial) padded with zeros by (lo, hi) per spatial dim; negative pads crop."""
    if all(lo == 0 and hi == 0 for lo, hi in pads):
        return x
    xp = namespace_of(x)
    crop = tuple(slice(max(-lo, 0), x.shape[2 + i] - max(-hi, 0)) for i, (lo, hi) in enumerate(pads))
    x = x[(slice(None), slice(None), *crop)]
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in pads]
    if not any(lo or hi for lo, hi in grow):
        return x
    out = xp.zeros(x.shape[:2] + tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[2:], grow)), dtype=x.dtype)
    out[(slice(None), slice(None), *(slice(lo, lo + n) for n, (lo, _) in zip(x.shape[2:], grow)))] = x
    return out


def unpad(grad_padded, pads, in_size):
    """The adjoint of :func:`pad_or_crop`: crop the grown border, put zeros where ``x`` was cropped."""
    if all(lo == 0 and hi == 0 for lo, hi in pads):
        return grad_padded
    xp = namespace_of(grad_padded)
    inner = grad_padded[
        (
            slice(None),
            slice(None),
            *(slice(max(lo, 0), g - max(hi, 0)) for g, (lo, hi) in zip(grad_padded.shape[2:], pads)),
        )
    ]
    if not any(lo < 0 or hi < 0 for lo, hi in pads):
        return inner
    out = xp.zeros(grad_padded.shape[:2] + tuple(in_size), dtype=grad_padded.dtype)
    out[
        (
            slice(None),
            slice(None),
            *(slice(max(-lo, 0), max(-lo, 0) + n) for n, (lo, _) in zip(inner.shape[2:], pads)),
        )
    ] = inner
    return out


def windows(x_padded, corr):
    """A strided *view* (N, C, *out_size, *kernel) of the padded input:

    ``view[n, c, p, k] = x_padded[n, c, p·stride + k·dilation]`` — the receptive field of every
    output position, without copying.
    """
    xp = namespace_of(x_padded)
    spatial_strides = x_padded.strides[2:]
    shape = x_padded.shape[:2] + tuple(corr.out_size) + tuple(corr.kernel)
    strides = (
        x_padded.strides[:2]
        + tuple(st * s for st, s in zip(spatial_strides, corr.stride))
        + tuple(st * d for st, d in zip(spatial_strides, corr.dilation))
    )
    return xp.lib.stride_tricks.as_strided(x_padded, shape=shape, strides=strides)


def kernel_offsets(kernel):
    """Every kernel position as a tuple, in C order."""
    return itertools.product(*(range(k) for k in kernel))


def tap_slices(offset, corr):
    """Slices of the padded input touched by kernel position ``offset`` for every output position."""
    return tuple(
        slice(k * d, k * d + s * (y - 1) + 1, s)
        for k, d, s, y in zip(offset, corr.dilation, corr.stride, corr.out_size)
    )


def zero_insert(y, stride):
    """Insert ``stride - 1`` zeros between neighbouring spatial elements of ``y`` (N, C, *spatial)."""
    if all(s == 1 for s in stride):
        return y
    xp = namespace_of(y)
    out = xp.zeros(y.shape[:2] + tuple((n - 1) * s + 1 for n, s in zip(y.shape[2:], stride)), dtype=y.dtype)
    out[(slice(None), slice(None), *(slice(None, None, s) for s in stride))] = y
    return out
