"""``nn.functional`` pooling, padding, resampling and rearrangement: PyTorch's names, signatures,
defaults and errors over the window rules of :mod:`reference.ops.rules.pooling`.

Each function builds the op's index/weight table from shapes (:func:`reference.ops.kernels.combine_axes`)
and applies the op's own rule (``avg_pool2d``, ``upsample_bilinear2d``, ``reflection_pad1d``, ...,
with PyTorch's ``grad_fn`` names). Composites of those rules, as in PyTorch (same values, same
gradients, a different ``grad_fn`` where noted): the 1-d pools and ``max_unpool1d`` (through the
2-d rule on an unsqueezed input, as PyTorch's ``SqueezeBackward1`` shows), ``lp_pool*`` (PyTorch's
own Python composite), ``interpolate(mode="area")`` (adaptive average pooling), circular padding
(PyTorch: ``CopySlices``; here ``cat`` of slices).
"""

from __future__ import annotations

import math

import numpy as np

from reference.autograd.tensor import Tensor
from reference.backend import to_numpy
from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.rules.pooling import max_window, window_map

NN_FUNCTIONAL = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]

_WORDS = {1: "one", 2: "two", 3: "three"}


def _ints(v, n, what, op, omit_ok=False):
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return (int(v),) * n
    v = tuple(int(e) for e in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        if omit_ok:
            raise RuntimeError(
                f"{op}: {what} must either be omitted, a single int, or a tuple of {_WORDS[n]} ints"
            )
        raise RuntimeError(f"{op}: {what} must either be a single int, or a tuple of {_WORDS[n]} ints")
    return v


def _shape_check(sizes, k, s, p, d, outs, op_in, check_input_size=False):
    if any(e <= 0 for e in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got {_hw('k', k)}")
    if any(e == 0 for e in s):
        raise RuntimeError("stride should not be zero")
    if any(e <= 0 for e in d):
        raise RuntimeError(f"dilation should be greater than zero, but got {_hw('dilation', d)}")
    for pi, ki, di in zip(p, k, d):
        if pi > (di * (ki - 1) + 1) // 2 or pi < 0:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pi}, kernel_size={ki} "
                f"and dilation={di}"
            )
    if check_input_size and any(sz < ki for sz, ki in zip(sizes, k)):  # pool3d_shape_check, avg_pool3d
        raise RuntimeError(f"input image ({_hw('', sizes)}) smaller than kernel size ({_hw('k', k)})")
    if any(o < 1 for o in outs):
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, op_in))}). Calculated output size: "
            f"({'x'.join(map(str, (op_in[0],) + tuple(outs)))}). Output size is too small"
        )


def _hw(name, v):
    labels = ("T", "H", "W")[-len(v) :]
    return " ".join(f"{name}{lab}: {e}" for lab, e in zip(labels, v))


def _pool_input(input, n, op):
    if input.ndim not in (n + 1, n + 2) or any(e == 0 for e in input.shape[-n - 1 :]):
        if n == 2:
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")


def _pool_params(input, n, op, kernel_size, stride, padding, dilation, ceil_mode, check_input_size=False):
    k = _ints(kernel_size, n, "kernel_size", op)
    s = (
        k
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else _ints(stride, n, "stride", op, True)
    )
    p = _ints(padding, n, "padding", op)
    d = _ints(dilation, n, "dilation", op)
    _pool_input(input, n, op)
    sizes = tuple(input.shape[-n:])
    outs = [
        K.pool_output_size(sz, ki, max(si, 1), pi, max(di, 1), ceil_mode)
        for sz, ki, si, pi, di in zip(sizes, k, s, p, d)
    ]
    _shape_check(sizes, k, s, p, d, outs, tuple(input.shape[-n - 1 :]), check_input_size)
    return k, s, p, d, sizes, outs


# ---- average pooling ----------------------------------------------------------------------------


def _avg_pool(input, n, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    op = f"avg_pool{n}d"
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, p, _, sizes, outs = _pool_params(input, n, op, kernel_size, stride, padding, 1, ceil_mode, n == 3)
    axes = []
    for sz, ki, si, pi in zip(sizes, k, s, p):
        _, pos, start = K.pool_axis(sz, ki, si, pi, 1, ceil_mode)
        end = np.minimum(start + ki, sz + pi)
        size_pad = end - start
        inside = np.minimum(end, sz) - np.maximum(start, 0)
        count = size_pad if count_include_pad else inside
        w = np.ones(pos.shape) if divisor_override else 1.0 / np.broadcast_to(count[:, None], pos.shape)
        axes.append((pos, w))
    index, weight = K.combine_axes(axes, sizes)
    if divisor_override:
        weight = weight / float(divisor_override)
    return window_map(op, input, index, weight, sizes, outs)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Composite, as PyTorch's: ``avg_pool2d`` on the input with a unit height."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 'self' "
            "(while checking arguments for avg_pool1d)"
        )
    k = _ints(kernel_size, 1, "kernel_size", "avg_pool1d")
    s = (
        k
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else _ints(stride, 1, "stride", "avg_pool1d")
    )
    p = _ints(padding, 1, "padding", "avg_pool1d")
    out = _avg_pool(
        A.unsqueeze(input, -2), 2, (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode, count_include_pad, None
    )
    return A.squeeze(out, -2)


def avg_pool2d(
    input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
):
    """Rule ``avg_pool2d``. ``divisor_override`` divides every window sum, negative values included
    (PyTorch 2.13 divides by a negative override; zero is rejected)."""
    return _avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(
    input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
):
    return _avg_pool(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


# ---- max pooling --------------------------------------------------------------------------------


def _max_pool(input, n, kernel_size, stride, padding, dilation, ceil_mode):
    op = f"max_pool{n}d"
    k, s, p, d, sizes, outs = _pool_params(input, n, op, kernel_size, stride, padding, dilation, ceil_mode)
    axes = [
        K.pool_axis(sz, ki, si, pi, di, ceil_mode)[1:2] + (None,)
        for sz, ki, si, pi, di in zip(sizes, k, s, p, d)
    ]
    index, _ = K.combine_axes(axes, sizes)
    return max_window(op, input, index, sizes, outs)


def max_pool1d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """Composite, as PyTorch's: the 2-d rule on the input with a unit height."""
    if input.ndim not in (2, 3) or any(e == 0 for e in input.shape[-2:]):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got:{list(input.shape)}"
        )
    k = _ints(kernel_size, 1, "kernel_size", "max_pool1d")
    s = (
        k
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else _ints(stride, 1, "stride", "max_pool1d")
    )
    p, d = _ints(padding, 1, "padding", "max_pool1d"), _ints(dilation, 1, "dilation", "max_pool1d")
    if s[0] <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s[0]}")
    if k[0] <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k[0]}")
    if d[0] <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d[0]}")
    if p[0] < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p[0]}")
    if p[0] > k[0] // 2:
        raise RuntimeError(
            f"max_pool1d() padding should be at most half of kernel size, but got padding={p[0]} and "
            f"kernel_size={k[0]}"
        )
    o = K.pool_output_size(input.shape[-1], k[0], s[0], p[0], d[0], ceil_mode)
    if o < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {o}")
    v, i = _max_pool(A.unsqueeze(input, -2), 2, (1, k[0]), (1, s[0]), (0, p[0]), (1, d[0]), ceil_mode)
    return A.squeeze(v, -2), A.squeeze(i, -2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    v, i = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (v, i) if return_indices else v


def max_pool2d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    return _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    v, i = _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode)
    return (v, i) if return_indices else v


def max_pool3d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    return _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    v, i = _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode)
    return (v, i) if return_indices else v


def _lp(input, norm_type, n, kernel_size, stride, ceil_mode):
    k = _ints(kernel_size, n, "kernel_size", f"lp_pool{n}d")
    pool = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}[n]
    out = pool(A.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    return A.pow(A.sign(out) * A.relu(A.abs(out)) * float(math.prod(k)), 1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Composite, PyTorch's own: ``(sign(o) * relu(|o|) * k) ** (1/p)`` of ``o = avg_pool(x ** p)``."""
    return _lp(input, norm_type, 1, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Composite, PyTorch's own (see :func:`lp_pool1d`)."""
    return _lp(input, norm_type, 2, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Composite, PyTorch's own (see :func:`lp_pool1d`)."""
    return _lp(input, norm_type, 3, kernel_size, stride, ceil_mode)


# ---- adaptive pooling ---------------------------------------------------------------------------


def _adaptive_sizes(input, n, output_size, op):
    if isinstance(output_size, (int, np.integer)):
        out = (int(output_size),) * n
    else:
        out = tuple(output_size)
        if len(out) == 1:
            out = out * n
        if len(out) != n:
            raise RuntimeError(f"{op}: output_size must be {n}")
        out = tuple(input.shape[-n + i] if o is None else int(o) for i, o in enumerate(out))
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{op}(): Expected {n + 1}D or {n + 2}D tensor, but got {list(input.shape)}")
    if any(o < 0 for o in out):
        raise RuntimeError(
            f"{op}: elements of output_size must be greater than or equal to 0 but received "
            "{" + ", ".join(map(str, out)) + "}"
        )
    return tuple(input.shape[-n:]), out


def _adaptive_avg(input, n, output_size):
    op = f"adaptive_avg_pool{n}d"
    sizes, outs = _adaptive_sizes(input, n, output_size, op)
    axes = []
    for sz, o in zip(sizes, outs):
        pos, count = K.adaptive_axis(sz, o)
        axes.append((pos, np.broadcast_to(1.0 / np.maximum(count, 1)[:, None], pos.shape)))
    index, weight = K.combine_axes(axes, sizes)
    return window_map(op, input, index, weight, sizes, outs)


def _adaptive_max(input, n, output_size):
    op = f"adaptive_max_pool{n}d"
    sizes, outs = _adaptive_sizes(input, n, output_size, op)
    if any(e == 0 for e in input.shape[-n:]):
        raise RuntimeError(
            f"{op}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes {list(input.shape)} with dimension {input.ndim - n} being empty"
        )
    index, _ = K.combine_axes([(K.adaptive_axis(sz, o)[0], None) for sz, o in zip(sizes, outs)], sizes)
    return max_window(op, input, index, sizes, outs)


def adaptive_avg_pool1d(input, output_size):
    """Composite, as PyTorch's: ``adaptive_avg_pool2d`` with a unit height."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 'self' "
            "(while checking arguments for adaptive_avg_pool1d)"
        )
    o = _ints(output_size, 1, "output_size", "adaptive_avg_pool1d")
    return A.squeeze(_adaptive_avg(A.unsqueeze(input, -2), 2, (1, o[0])), -2)


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg(input, 2, output_size)


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg(input, 3, output_size)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """Composite, as PyTorch's: ``adaptive_max_pool2d`` with a unit height."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 'self' "
            "(while checking arguments for adaptive_max_pool1d)"
        )
    o = _ints(output_size, 1, "output_size", "adaptive_max_pool1d")
    v, i = _adaptive_max(A.unsqueeze(input, -2), 2, (1, o[0]))
    return A.squeeze(v, -2), A.squeeze(i, -2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    v, i = adaptive_max_pool1d_with_indices(input, output_size)
    return (v, i) if return_indices else v


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max(input, 2, output_size)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    v, i = _adaptive_max(input, 2, output_size)
    return (v, i) if return_indices else v


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max(input, 3, output_size)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    v, i = _adaptive_max(input, 3, output_size)
    return (v, i) if return_indices else v


# ---- max unpooling ------------------------------------------------------------------------------


def _unpool(input, indices, n, kernel_size, stride, padding, output_size):
    k = _ints(kernel_size, n, "kernel_size", f"max_unpool{n}d")
    s = k if stride is None else _ints(stride, n, "stride", f"max_unpool{n}d")
    p = _ints(padding, n, "padding", f"max_unpool{n}d")
    default = [(input.shape[input.ndim - n + d] - 1) * s[d] + k[d] - 2 * p[d] for d in range(n)]
    if output_size is None:
        out = default
    else:
        out = list(output_size)
        if len(out) == n + 2 or len(out) == input.ndim:
            out = out[-n:]
        if len(out) != n:
            raise ValueError(
                f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a length of '{len(out)}'"
            )
        for d in range(n):
            lo, hi = default[d] - s[d], default[d] + s[d]
            if not lo < out[d] < hi:
                raise ValueError(
                    f'invalid output_size "{tuple(output_size)}" (dim {d} must be between {lo} and {hi})'
                )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) but got "
            f"indices tensor with shape: {list(indices.shape)}"
        )
    _check_unpool_nonempty(tuple(input.shape), n)
    idx = to_numpy(indices._data if isinstance(indices, Tensor) else indices).astype(np.int64)  # host tables
    n_out = math.prod(out)
    bad = (idx < 0) | (idx >= n_out)
    if bad.any():
        raise RuntimeError(
            f"Found an invalid max index: {int(idx[bad].ravel()[0])} (output volumes are of size "
            f"{'x'.join(map(str, out))})"
        )
    lead = idx.shape[: idx.ndim - n]
    planes = math.prod(lead)
    flat = (
        idx.reshape(planes, math.prod(idx.shape[idx.ndim - n :])) + np.arange(planes)[:, None] * n_out
    )  # into the output
    fwd_index = flat.reshape(-1, 1)
    index, weight = K.transpose_table(fwd_index, np.ones(fwd_index.shape), planes * n_out, keep_last=True)
    return window_map(
        f"max_unpool{n}d",
        input,
        index,
        weight,
        tuple(input.shape),
        tuple(lead) + tuple(out),
        bindex=fwd_index,
    )


def _check_unpool_nonempty(shape, n):
    """aten's max_unpooling{2,3}d_forward_out_cpu: every dim but the first non-empty (an empty
    batch gives an empty output)."""
    for i in range(1, len(shape)):
        if shape[i] <= 0:
            raise RuntimeError(
                f"max_unpooling{n}d_forward_out_cpu(): Expected input to have non-zero size for non-batch dimensions, "
                f"but got {list(shape)} with dimension {i} being empty."
            )


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Composite, as PyTorch's: ``max_unpool2d`` with a unit height (PyTorch's unit dim is last,
    as its messages show)."""
    if tuple(indices.shape) == tuple(input.shape):
        _check_unpool_nonempty(tuple(input.shape) + (1,), 2)
    k = _ints(kernel_size, 1, "kernel_size", "max_unpool1d")
    s = k if stride is None else _ints(stride, 1, "stride", "max_unpool1d")
    p = _ints(padding, 1, "padding", "max_unpool1d")
    if output_size is not None:
        output_size = list(output_size)[-1:]
        output_size = [1] + output_size
    out = _unpool(
        A.unsqueeze(input, -2), A.unsqueeze(indices, -2), 2, (1, k[0]), (1, s[0]), (0, p[0]), output_size
    )
    return A.squeeze(out, -2)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Rule ``max_unpool2d``: each output position takes the input at the index that names it
    (the last one, where indices repeat, as PyTorch's sequential CPU kernel writes)."""
    return _unpool(input, indices, 2, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _unpool(input, indices, 3, kernel_size, stride, padding, output_size)


# ---- fractional max pooling (explicit samples) ---------------------------------------------------


def _intervals(sample, n_in, n_out, pool):
    """PyTorch's generate_intervals: pseudo-random window starts from one sample in [0, 1)."""
    seq = np.zeros(n_out, dtype=np.int64)
    if n_out > 1:
        alpha = (n_in - pool) / (n_out - 1)
        i = np.arange(n_out - 1)
        seq[:-1] = ((i + sample) * alpha).astype(np.int64) - int(sample * alpha)
    seq[-1] = n_in - pool
    return seq


def _fractional(input, n, kernel_size, output_size, output_ratio, _random_samples):
    op = f"fractional_max_pool{n}d"
    k = _ints(kernel_size, n, "kernel_size", op)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        ratio = (output_ratio,) * n if isinstance(output_ratio, (int, float)) else tuple(output_ratio)
        output_size = [int(input.shape[input.ndim - n + d] * ratio[d]) for d in range(n)]
    out = _ints(output_size, n, "output_size", op)
    if _random_samples is None:
        raise ValueError(
            f"{op}: _random_samples=None, but the reference has no hidden randomness; pass _random_samples= "
            f"(a tensor of shape (N, C, {n}) in [0, 1)) drawn the way the framework under test drew it"
        )
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{op}(): Expected {n + 1}D or {n + 2}D tensor, but got: {list(input.shape)}")
    batched = input.ndim == n + 2
    x = input if batched else A.unsqueeze(input, 0)
    sizes = tuple(x.shape[2:])
    # aten's checks: 2-d allows out + k - 1 == in (height, then width); 3-d requires it strictly
    # smaller (time, width, then height), so a window may never reach the last element there
    names = {2: ("height", "width"), 3: ("time", "height", "width")}[n]
    order = (0, 1) if n == 2 else (0, 2, 1)
    for d in order:
        if out[d] + k[d] - 1 > sizes[d] - (n == 3):
            raise RuntimeError(
                f"{op}{'_out' if n == 3 else ''}(): pool {names[d]} {k[d]} too large relative to input "
                f"{names[d]} {sizes[d]}"
            )
    samples = to_numpy(_random_samples._data if isinstance(_random_samples, Tensor) else _random_samples)
    nb, c = x.shape[0], x.shape[1]
    samples = samples.reshape(nb, c, n)
    plane = math.prod(sizes)
    rows = []
    for p in range(nb * c):
        s = samples.reshape(-1, n)[p]
        # PyTorch: 2-d samples are (width, height); 3-d samples (time, height, width)
        axes = [
            (
                _intervals(s[n - 1 - d] if n == 2 else s[d], sizes[d], out[d], k[d])[:, None]
                + np.arange(k[d])[None, :],
                None,
            )
            for d in range(n)
        ]
        index, _ = K.combine_axes(axes, sizes)
        rows.append(index + p * plane)
    index = np.concatenate(rows, axis=0)
    v, i = max_window(op, x, index, tuple(x.shape), (nb, c) + tuple(out), plane_size=plane)
    return (v, i) if batched else (A.squeeze(v, 0), A.squeeze(i, 0))


def fractional_max_pool2d_with_indices(
    input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None
):
    """Rule ``fractional_max_pool2d``; the samples are explicit (``_random_samples``, as PyTorch
    accepts them): without them the reference raises instead of drawing."""
    return _fractional(input, 2, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(
    input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None
):
    v, i = _fractional(input, 2, kernel_size, output_size, output_ratio, _random_samples)
    return (v, i) if return_indices else v


def fractional_max_pool3d_with_indices(
    input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None
):
    return _fractional(input, 3, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(
    input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None
):
    v, i = _fractional(input, 3, kernel_size, output_size, output_ratio, _random_samples)
    return (v, i) if return_indices else v
