"""``nn.functional`` padding, resampling and rearrangement: ``pad``, ``interpolate``, pixel and
channel shuffles, ``unfold``/``fold``, over the window rules of :mod:`reference.ops.rules.pooling`
(each op its own rule, PyTorch's ``grad_fn`` name). Circular padding is a composite (``cat`` of
slices; PyTorch's is ``CopySlices``: same values and gradients); ``interpolate(mode="area")`` is
adaptive average pooling, as in PyTorch."""

from __future__ import annotations

import math

import numpy as np

from reference.autograd.tensor import int64
from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.functions import pointwise as P
from reference.ops.functions.indexing import take
from reference.ops.functions.nn_pooling import _adaptive_avg, adaptive_avg_pool1d
from reference.ops.functions.pointwise import floor, fmod, trunc
from reference.ops.rules.pooling import window_map
from reference.scalar_types import scalar_type_name

__all__ = ["constant_pad_nd", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d"]

NN_FUNCTIONAL = [
    "affine_grid",
    "channel_shuffle",
    "fold",
    "grid_sample",
    "interpolate",
    "pad",
    "pixel_shuffle",
    "pixel_unshuffle",
    "unfold",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]


# ---- pad ----------------------------------------------------------------------------------------


def _pad_axes(sizes, pads, mode):
    """Per trailing dim (first = outermost padded dim): (positions (O, 1), None)."""
    axes = []
    for n, (lo, hi) in zip(sizes, pads):
        j = np.arange(n + lo + hi) - lo
        if mode == "reflect":
            j = np.abs(j)
            j = np.where(j >= n, 2 * (n - 1) - j, j)
        elif mode == "replicate":
            j = np.clip(j, 0, n - 1)
        axes.append((j[:, None], None))
    return axes


def pad(input, pad, mode="constant", value=None):
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got padding "
            f"length {len(pad)} and input of dimension {input.ndim}"
        )
    n = len(pad) // 2
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant" and value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    pads = [(pad[2 * i], pad[2 * i + 1]) for i in range(n)][::-1]  # outermost padded dim first
    sizes = tuple(input.shape[input.ndim - n :])
    if mode == "constant":
        for sz, (lo, hi) in zip(sizes, pads):
            if sz + lo + hi < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
        outs = tuple(sz + lo + hi for sz, (lo, hi) in zip(sizes, pads))
        index, weight = K.combine_axes(_pad_axes(sizes, pads, "constant"), sizes)
        return window_map("constant_pad_nd", input, index, weight, sizes, outs, value=value or 0.0)
    if not (n in (1, 2, 3) and input.ndim in (n + 1, n + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    if mode == "circular":
        return _pad_circular(input, pads)
    dims = f"{n + 1}D or {n + 2}D"
    if any(e == 0 for e in input.shape[1:]) or (input.ndim == n + 1 and input.shape[0] == 0):
        raise RuntimeError(
            f"Expected {dims} (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
            f"input, but got: {list(input.shape)}"
        )
    if mode == "reflect":
        for i, (sz, (lo, hi)) in enumerate(zip(sizes, pads)):
            if lo >= sz or hi >= sz:
                arg = 4 + 2 * (n - 1 - i)
                raise RuntimeError(
                    f"Argument #{arg}: Padding size should be less than the corresponding input dimension, "
                    f"but got: padding ({lo}, {hi}) at dimension {input.ndim - n + i} of input {list(input.shape)}"
                )
    outs = tuple(sz + lo + hi for sz, (lo, hi) in zip(sizes, pads))
    if any(o < 1 for o in outs):
        raise RuntimeError(f"input ({sizes}) is too small. Calculated output {outs}")
    index, weight = K.combine_axes(_pad_axes(sizes, pads, mode), sizes)
    name = {"reflect": "reflection_pad", "replicate": "replication_pad"}[mode]
    return window_map(f"{name}{n}d", input, index, weight, sizes, outs)


_pad = pad


def constant_pad_nd(input, pad, value=0):
    """``torch.constant_pad_nd``: ``pad(mode="constant")`` (rule ``constant_pad_nd``), aten's
    message for an odd pad length."""
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    return _pad(input, pad, mode="constant", value=value)


def _pad_circular(input, pads):
    """Composite: wrap each padded dim with ``cat`` of slices (negative pads crop first)."""
    n = len(pads)
    x = input
    for i, (lo, hi) in enumerate(pads):
        d = input.ndim - n + i
        size = x.shape[d]
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if lo < 0:
            x, size, lo = A.narrow(x, d, -lo, size + lo), size + lo, 0
        if hi < 0:
            x, size, hi = A.narrow(x, d, 0, size + hi), size + hi, 0
        parts = []
        if lo:
            parts.append(A.narrow(x, d, size - lo, lo))
        parts.append(x)
        if hi:
            parts.append(A.narrow(x, d, 0, hi))
        x = A.cat(parts, d) if len(parts) > 1 else x
    return x


# ---- interpolate --------------------------------------------------------------------------------

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


def _scale_value(scale, n_in, n_out):
    """PyTorch's compute_scales_value: 1/scale_factor when given, else in/out."""
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _area_scale(n_in, n_out, align_corners, scale):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return _scale_value(scale, n_in, n_out)


def _axis_table(mode, n_in, n_out, align_corners, scale):
    o = np.arange(n_out)
    if mode in ("nearest", "nearest-exact"):
        if n_out == n_in and mode == "nearest":
            src = o
        elif n_out == 2 * n_in and mode == "nearest":
            src = o >> 1
        else:  # float32 arithmetic, as PyTorch's nearest kernels
            s = np.float32(_scale_value(scale, n_in, n_out))
            shift = np.float32(0.5) if mode == "nearest-exact" else np.float32(0.0)
            src = np.floor((o.astype(np.float32) + shift) * s).astype(np.int64)
            src = np.minimum(src, n_in - 1)
        return src[:, None], None
    s = _area_scale(n_in, n_out, align_corners, scale)
    if mode == "bicubic":
        real = s * o if align_corners else s * (o + 0.5) - 0.5
        i0 = np.floor(real).astype(np.int64)
        t = real - i0
        a = -0.75

        def c1(x):
            return ((a + 2) * x - (a + 3)) * x * x + 1

        def c2(x):
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

        w = np.stack([c2(t + 1), c1(t), c1(1 - t), c2(2 - t)], axis=1)
        pos = np.clip(i0[:, None] + np.arange(-1, 3)[None, :], 0, n_in - 1)
        return pos, w
    real = s * o if align_corners else np.maximum(s * (o + 0.5) - 0.5, 0.0)
    i0 = real.astype(np.int64)
    lam = real - i0
    i1 = i0 + (i0 < n_in - 1)
    return np.stack([i0, i1], axis=1), np.stack([1.0 - lam, lam], axis=1)


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """Rules ``upsample_*`` (PyTorch's kernels' index and weight arithmetic: float32 source indices
    for the nearest modes, ``A = -0.75`` cubic convolution with clamped access for bicubic);
    ``mode="area"`` is adaptive average pooling. ``antialias=True`` is not implemented (rejected)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    if antialias:
        raise NotImplementedError("reference: interpolate(antialias=True) is not implemented")
    n = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != n:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {list(input.shape[2:])} and output size of {size}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
                )
            out = [int(e) for e in size]
        else:
            out = [int(size)] * n
        scales = [None] * n
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != n:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. Please "
                    "provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            scales = [float(e) for e in scale_factor]
        else:
            scales = [float(scale_factor)] * n
        out = [math.floor(float(input.shape[i + 2]) * scales[i]) for i in range(n)]
        if recompute_scale_factor:
            scales = [None] * n
    else:
        raise ValueError("either size or scale_factor should be defined")
    if mode == "area":
        if n == 1:
            return adaptive_avg_pool1d(input, out)
        if n in (2, 3):
            return _adaptive_avg(input, n, out)
    want = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
    if mode in want and n + 2 in (3, 4, 5) and want[mode] != n:
        raise NotImplementedError(f"Got {n + 2}D input, but {mode} mode needs {want[mode] + 2}D input")
    if mode not in _MODES or n not in (1, 2, 3):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the modes: "
            f"nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})"
        )
    sizes = tuple(input.shape[2:])
    if any(o <= 0 for o in out) or any(s <= 0 for s in sizes):
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input ({', '.join(map(str, sizes))}) "
            f"output ({', '.join(map(str, out))})"
        )
    axes = [_axis_table(mode, sz, o, align_corners, sc) for sz, o, sc in zip(sizes, out, scales)]
    index, weight = K.combine_axes(axes, sizes)
    name = {
        "nearest": f"upsample_nearest{n}d",
        "nearest-exact": f"upsample_nearest_exact{n}d",
        "linear": "upsample_linear1d",
        "bilinear": "upsample_bilinear2d",
        "bicubic": "upsample_bicubic2d",
        "trilinear": "upsample_trilinear3d",
    }[mode]
    return window_map(name, input, index, weight, sizes, tuple(out))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- pixel and channel shuffles -----------------------------------------------------------------


def _perm_map(name, input, in_trailing, out_trailing, src):
    """A permutation of the trailing dims: ``src[o]`` is the flat input position of output ``o``."""
    index = np.asarray(src, dtype=np.int64).reshape(-1, 1)
    return window_map(name, input, index, np.ones(index.shape), in_trailing, out_trailing)


def pixel_shuffle(input, upscale_factor):
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got input with {input.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, "
            f"but input.size(-3)={c} is not divisible by {r * r}"
        )
    oc = c // (r * r)
    src = np.arange(c * h * w).reshape(oc, r, r, h, w).transpose(0, 3, 1, 4, 2)
    return _perm_map("pixel_shuffle", input, (c, h, w), (oc, h * r, w * r), src)


def pixel_unshuffle(input, downscale_factor):
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with {input.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if h % r:
        raise RuntimeError(
            f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h} is not "
            f"divisible by {r}"
        )
    if w % r:
        raise RuntimeError(
            f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w} is not "
            f"divisible by {r}"
        )
    src = np.arange(c * h * w).reshape(c, h // r, r, w // r, r).transpose(0, 2, 4, 1, 3)
    return _perm_map("pixel_unshuffle", input, (c, h, w), (c * r * r, h // r, w // r), src)


def channel_shuffle(input, groups):
    g = int(groups)
    if input.ndim <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}"
        )
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{g}")
    c = input.shape[1]
    if c % g:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {g} groups."
        )
    trailing = tuple(input.shape[1:])
    rest = math.prod(trailing[1:])
    src = np.arange(c * rest).reshape(g, c // g, rest).transpose(1, 0, 2)
    return _perm_map("channel_shuffle", input, trailing, trailing, src)


# ---- unfold / fold ------------------------------------------------------------------------------


def _pair(v):
    return (int(v), int(v)) if isinstance(v, (int, np.integer)) else tuple(int(e) for e in v)


def _im2col_table(c, size, k, d, p, s):
    """For each (channel, kernel offset) row and block column: the flat (C, H, W) position read."""
    blocks = [(size[i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1 for i in range(2)]
    rows = [np.arange(blocks[i])[None, :] * s[i] - p[i] + np.arange(k[i])[:, None] * d[i] for i in range(2)]
    hh = rows[0][:, None, :, None]  # (kh, 1, bh, 1)
    ww = rows[1][None, :, None, :]  # (1, kw, 1, bw)
    valid = (hh >= 0) & (hh < size[0]) & (ww >= 0) & (ww < size[1])
    plane = np.where(valid, hh * size[1] + ww, -1)  # (kh, kw, bh, bw)
    chan = np.arange(c).reshape(c, 1, 1, 1, 1) * (size[0] * size[1])
    index = np.where(plane[None] >= 0, plane[None] + chan, -1)
    return index.reshape(-1, 1), blocks


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Rule ``im2col``: (N, C, H, W) -> (N, C * kh * kw, L)."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    c, h, w = input.shape[-3:]
    blocks = [(e + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1 for i, e in enumerate((h, w))]
    if blocks[0] < 1 or blocks[1] < 1:
        raise RuntimeError(
            f"Given input with spatial size ({h}, {w}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), "
            f"padding=({p[0]}, {p[1]}), calculated shape of the array of sliding blocks as ({blocks[0]}, {blocks[1]}), "
            "but its components must be at least one."
        )
    index, blocks = _im2col_table(c, (h, w), k, d, p, s)
    out = (c * k[0] * k[1], blocks[0] * blocks[1])
    return window_map("im2col", input, index, np.ones(index.shape), (c, h, w), out)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Rule ``col2im``: the transpose of :func:`unfold` (overlapping blocks add up)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got {input.ndim}D)"
        )
    size, k, d, p, s = _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    ck, L = input.shape[-2:]
    kk = k[0] * k[1]
    if ck % kk:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
            f"input.size(1)={ck} and kernel_size=({k[0]}, {k[1]})."
        )
    blocks = [(size[i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1 for i in range(2)]
    if blocks[0] * blocks[1] != L:
        raise RuntimeError(
            f"Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), "
            f"padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), expected size of input's dimension 2 to match the "
            f"calculated number of sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={L}."
        )
    c = ck // kk
    fwd, _ = _im2col_table(c, size, k, d, p, s)
    index, weight = K.transpose_table(fwd, np.ones(fwd.shape), c * size[0] * size[1])
    return window_map("col2im", input, index, weight, (ck, L), (c,) + size)


# ---- affine_grid --------------------------------------------------------------------------------


def _base_coords(n, align_corners):
    """PyTorch's linspace_from_neg_one: -1..1, shrunk by (n - 1) / n without align_corners."""
    if n <= 1:
        return np.zeros(max(n, 0))
    c = np.linspace(-1.0, 1.0, n)
    return c if align_corners else c * (n - 1) / n


def affine_grid(theta, size, align_corners=None):
    """Composite, as PyTorch's affine_grid_generator: a constant base grid (x, y[, z], 1) times
    ``theta`` transposed (PyTorch's node: ``AffineGridGeneratorBackward0``; same values and gradients)."""
    if align_corners is None:
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(e) for e in size]
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {tuple(size)}. Got torch.Size({list(theta.shape)})."
            )
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {tuple(size)}. Got torch.Size({list(theta.shape)})."
            )
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. "
            f"Got size {tuple(size)}."
        )
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {tuple(size)}")
    n = size[0]
    coords = [_base_coords(s, align_corners) for s in spatial]  # (D,) H, W
    mesh = np.meshgrid(*coords, indexing="ij")
    base = np.stack([*mesh[::-1], np.ones(tuple(spatial))], axis=-1)  # x (width) first
    k = base.shape[-1]
    base = A.tensor(base.reshape(1, -1, k).astype(theta._data.dtype))
    grid = A.matmul(A.expand(base, (n,) + tuple(base.shape[1:])), A.transpose(theta, 1, 2))
    return A.reshape(grid, (n, *spatial, k - 1))


# ---- grid_sample --------------------------------------------------------------------------------
# A composite of table ops only (no value read outside them), so that vmap, forward mode and
# higher-order gradients go through the ops' own rules. Floors, roundings and the piece of a
# piecewise-linear coordinate map are taken from detached values, as PyTorch's kernels take them:
# constants for the derivative. 2-d inputs follow PyTorch's vectorized CPU kernel
# (aten/src/ATen/native/cpu/GridSamplerKernel.cpp), 3-d inputs its scalar kernel
# (GridSampler.cpp, grid_sampler_3d_cpu_impl); the two differ in the unnormalisation's rounding and
# in the reflection's gradient multiplier at the reflection points.


def _unnormalize(coord, size, align_corners, vectorized):
    """The sampling coordinate from a grid coordinate in [-1, 1] (differentiable in the grid)."""
    if align_corners:
        return (coord + 1.0) * ((size - 1) / 2.0) if vectorized else ((coord + 1.0) / 2.0) * (size - 1)
    return (coord + 1.0) * (size / 2.0) - 0.5 if vectorized else ((coord + 1.0) * size - 1.0) / 2.0


def _clip(c, size):
    """PyTorch's clip_coordinates(_set_grad): into [0, size - 1], the ends counting as outside (zero
    gradient there), nan to 0 (the kernels clamp with the bound as first operand)."""
    lim = float(size - 1)
    inside = A.logical_and(A.gt(c, 0.0), A.lt(c, lim))
    return A.where(inside, c, A.where(A.ge(c, lim), A.full_like(c, lim), A.zeros_like(c)))


def _reflect(c, size, align_corners, vectorized):
    """PyTorch's reflect_coordinates(_set_grad): reflected about the image's ends until inside."""

    if align_corners:
        low, twice_span, empty = 0.0, 2.0 * (size - 1), size <= 1
    else:
        low, twice_span, empty = -0.5, 2.0 * size, size <= 0
    if empty:
        return c * 0.0
    x = c - low
    neg = A.lt(x, 0.0)
    a = A.where(neg, -x, x)  # |x| with slope -1 below 0 and +1 from 0 on, as the kernels
    if vectorized:  # GridSamplerKernel.cpp: extra = |x| - trunc(|x| / 2span) 2span; one more flip past span
        extra = a - trunc(a.detach() / twice_span) * twice_span
        refl = twice_span - extra
        return A.where(A.gt(extra, refl), refl, extra) + low
    span = twice_span / 2.0  # GridSampler.h: fmod by span, the parity of floor(|x| / span) flips
    extra = a - (a.detach() - fmod(a.detach(), span))
    odd = A.ne(fmod(floor(a.detach() / span), 2.0), 0.0)
    return A.where(odd, span - extra, extra) + low


def _compute_coordinates(c, size, padding_mode, align_corners, vectorized):
    if padding_mode == "zeros":
        return c
    if padding_mode == "reflection":
        c = _reflect(c, size, align_corners, vectorized)
    return _clip(c, size)


def _gather(input, coords, sizes):
    """``input[n, c, i_0, ..., i_k]`` at integer-valued coordinates (Tensors (N, *out), last spatial
    dim first as in the grid), 0 where out of range: shape (N, C, *out)."""

    n, ch = input.shape[:2]
    spatial = math.prod(sizes)
    valid, flat = None, None
    for c, size, stride in zip(
        coords, sizes[::-1], [math.prod(sizes[len(sizes) - i :]) for i in range(len(sizes))]
    ):
        ok = A.logical_and(A.gt(c, -1.0), A.lt(c, float(size)))
        valid = ok if valid is None else A.logical_and(valid, ok)
        i = A.to(A.where(ok, c, 0.0), dtype=int64) * stride
        flat = i if flat is None else flat + i
    k = len(coords[0].shape) - 1
    base = (np.arange(n) * (ch * spatial)).reshape((n, 1) + (1,) * k) + (np.arange(ch) * spatial).reshape(
        (1, ch) + (1,) * k
    )
    vals = take(input, A.unsqueeze(flat, 1) + A.tensor(base))
    return A.where(A.unsqueeze(valid, 1), vals, A.tensor(np.zeros((), dtype=input._data.dtype)))


def _cubic_coefficients(t):
    """PyTorch's cubic convolution coefficients (A = -0.75) for the taps -1, 0, 1, 2 at offset t."""
    a = -0.75
    x = t + 1.0
    c0 = ((x * a - 5 * a) * x + 8 * a) * x - 4 * a
    c1 = (t * (a + 2) - (a + 3)) * t * t + 1.0
    x = 1.0 - t
    c2 = (x * (a + 2) - (a + 3)) * x * x + 1.0
    x = 2.0 - t
    c3 = ((x * a - 5 * a) * x + 8 * a) * x - 4 * a
    return (c0, c1, c2, c3)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Composite (PyTorch's node: ``GridSampler2DBackward0`` / ``GridSampler3DBackward0``; same
    values and gradients, the double backward included): the input values are ``take``-n at the
    integer taps, the interpolation weights are Tensor functions of the grid. ``bilinear`` (trilinear
    on 5-d inputs), ``nearest`` (round half to even; the grid's gradient is zero) and, on 4-d
    inputs, ``bicubic`` (cubic convolution with A = -0.75 on the unpadded coordinate, each tap's
    integer coordinate padded and clipped on its own, as PyTorch's kernel)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', "
            f"but got: '{padding_mode}'"
        )
    if align_corners is None:
        align_corners = False
    return _grid_sampler(input, grid, mode, padding_mode, bool(align_corners), 4 if input.ndim == 4 else 5)


_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def _enum(value, names, what, op):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < len(names):
        # PyTorch reads an out-of-range enum value as whatever its kernel's switch falls into
        raise RuntimeError(
            f"reference: {op}(): {what} must be one of 0, 1, 2 ({', '.join(names)}), got {value!r}"
        )
    return names[int(value)]


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler``: :func:`grid_sample` with PyTorch's enum values (interpolation 0
    bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection)."""
    mode = _enum(interpolation_mode, _INTERPOLATION, "interpolation_mode", "grid_sampler")
    pad = _enum(padding_mode, _PADDING, "padding_mode", "grid_sampler")
    return _grid_sampler(input, grid, mode, pad, bool(align_corners), 4 if input.ndim == 4 else 5)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    mode = _enum(interpolation_mode, _INTERPOLATION, "interpolation_mode", "grid_sampler_2d")
    pad = _enum(padding_mode, _PADDING, "padding_mode", "grid_sampler_2d")
    return _grid_sampler(input, grid, mode, pad, bool(align_corners), 4)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    mode = _enum(interpolation_mode, _INTERPOLATION, "interpolation_mode", "grid_sampler_3d")
    pad = _enum(padding_mode, _PADDING, "padding_mode", "grid_sampler_3d")
    return _grid_sampler(input, grid, mode, pad, bool(align_corners), 5)


def _grid_sampler(input, grid, mode, padding_mode, align_corners, want):
    """PyTorch's grid_sampler_2d / grid_sampler_3d (``want``: 4 or 5 dims): the checks of
    GridSamplerUtils.h in its order, then the interpolation."""
    round = P.round  # (pointwise's round of a tensor, a local name: the module keeps the builtin)
    if input.ndim == 0 or grid.ndim == 0:
        raise RuntimeError(
            f"grid_sampler(): expected {want}D input and grid with same number of dimensions, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
            f"{list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got grid with sizes "
            f"{list(grid.shape)}"
        )
    for i in range(2, input.ndim):
        if input.shape[i] <= 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes "
                f"{list(input.shape)} with dimension {i} being empty"
            )
    if input.ndim != want or grid.ndim != want:
        raise RuntimeError(
            f"grid_sampler(): expected {want}D input and grid with same number of dimensions, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if want == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype != grid.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(input.dtype)} but found {scalar_type_name(grid.dtype)}"
        )
    vectorized = want == 4
    sizes = tuple(input.shape[2:])  # (D,) H, W; the grid's last dim holds x (W) first
    k = len(sizes)
    grids = [A.select(grid, -1, i) for i in range(k)]
    if mode == "bicubic":
        x = [_unnormalize(g, s, align_corners, True) for g, s in zip(grids, sizes[::-1])]
        f = [floor(e.detach()) for e in x]
        coef = [_cubic_coefficients(e - fe) for e, fe in zip(x, f)]
        taps = [
            [_compute_coordinates(fe + (j - 1.0), s, padding_mode, align_corners, True) for j in range(4)]
            for fe, s in zip(f, sizes[::-1])
        ]
        out = None
        for j in range(4):  # rows (y), then the columns (x) within each row, as the kernel sums them
            row = None
            for i in range(4):
                term = _gather(input, (taps[0][i], taps[1][j]), sizes) * A.unsqueeze(coef[0][i], 1)
                row = term if row is None else row + term
            term = row * A.unsqueeze(coef[1][j], 1)
            out = term if out is None else out + term
        return out
    c = [
        _compute_coordinates(
            _unnormalize(g, s, align_corners, vectorized), s, padding_mode, align_corners, vectorized
        )
        for g, s in zip(grids, sizes[::-1])
    ]
    if mode == "nearest":  # the grid gets a zero gradient (defined, as PyTorch's), never nan
        out = _gather(input, [round(e.detach()) for e in c], sizes)
        never = A.tensor(np.zeros((1,) * (k + 2), dtype=bool))
        link = c[0]
        for e in c[1:]:
            link = link + e
        return out + A.where(never, A.unsqueeze(link, 1), A.tensor(np.zeros((), dtype=input._data.dtype)))
    f = [floor(e.detach()) for e in c]
    t = [e - fe for e, fe in zip(c, f)]  # in [0, 1): the fractional parts, differentiable in the grid
    out = None
    for bits in np.ndindex(*(2,) * k):
        corner = bits[::-1]  # x fastest, as the kernels sum the corners
        w = None
        for d, bit in enumerate(corner):
            wd = t[d] if bit else 1.0 - t[d]
            w = wd if w is None else w * wd
        vals = _gather(input, [fe + float(bit) for fe, bit in zip(f, corner)], sizes)
        term = vals * A.unsqueeze(w, 1)
        out = term if out is None else out + term
    return out
