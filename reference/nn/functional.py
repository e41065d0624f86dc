"""``reference.nn.functional``: PyTorch's ``torch.nn.functional`` names for the reference's ops.

Deliberate difference: :func:`dropout` takes its mask explicitly (``mask=``); the reference has
no hidden randomness. ``F.dropout(x, p, mask=m)`` equals PyTorch's dropout when PyTorch draws
the same mask, i.e. ``x * m / (1 - p)``.
"""

from __future__ import annotations

import numpy as np

from reference.autograd.dispatch import apply, apply_inplace
from reference.autograd.tensor import Tensor
from reference.ops import api as A
from reference.ops.api import R, relu_  # noqa: F401 (re-exported; F.tanh, F.sigmoid: rules.elementwise's EXPORTS)
from reference.ops.functions import export

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "dropout",
    "linear",
    "log_softmax",
    "relu",
    "softmax",
]


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return A.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return A.log_softmax(input, dim, dtype=dtype)


def relu(input, inplace=False):
    return A.relu_(input) if inplace else A.relu(input)


def linear(input, weight, bias=None):
    out = A.matmul(input, A.t(weight))
    return out if bias is None else out + bias


def dropout(input, p=0.5, training=True, inplace=False, *, mask=None):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if mask is None:
        raise ValueError(
            "dropout: mask=None, but the reference has no hidden randomness; pass mask= (a tensor of the "
            "input's shape, 1 = keep) drawn the way the framework under test drew it"
        )
    if tuple(mask.shape) != tuple(input.shape):
        raise ValueError(
            f"dropout: mask.shape={tuple(mask.shape)} must equal input.shape={tuple(input.shape)}"
        )
    m = A.to(mask, input.dtype) if isinstance(mask, Tensor) else A.tensor(np.asarray(mask), dtype=input.dtype)
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    if inplace:
        return apply_inplace(R.dropout, input, (m,), {"scale": scale})
    return apply(R.dropout, (input, m), {"scale": scale})


def _tuple(v, n, name):
    if isinstance(v, int):
        return (v,) * n
    if isinstance(v, str):
        return v
    v = tuple(v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"{name}={v!r} must be an int or {n} ints")
    return v


def _conv(input, weight, bias, n, stride, padding, dilation, groups, transposed, output_padding):
    unbatched = input.ndim == n + 1
    if unbatched:
        input = A.unsqueeze(input, 0)
    if input.ndim != n + 2:
        raise RuntimeError(
            f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to conv{n}d, but got input of size: "
            f"{list(input.shape)}"
        )
    stride = _tuple(stride, n, "stride")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
        if padding == "same" and any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
    out = A.convolution(
        input,
        weight,
        bias,
        stride=stride,
        padding=_tuple(padding, n, "padding"),
        dilation=_tuple(dilation, n, "dilation"),
        transposed=transposed,
        output_padding=_tuple(output_padding, n, "output_padding"),
        groups=groups,
    )
    return A.squeeze(out, 0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, 1, stride, padding, dilation, groups, False, 0)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, 2, stride, padding, dilation, groups, False, 0)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, 3, stride, padding, dilation, groups, False, 0)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv(input, weight, bias, 1, stride, padding, dilation, groups, True, output_padding)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv(input, weight, bias, 2, stride, padding, dilation, groups, True, output_padding)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv(input, weight, bias, 3, stride, padding, dilation, groups, True, output_padding)


def _install_family_functions():
    """The ``NN_FUNCTIONAL`` names of the family modules (:mod:`reference.ops.functions`)."""

    for name, fn in export().get("nn.functional", {}).items():
        if name in globals() and globals()[name] is not fn:
            raise ValueError(f"nn.functional.{name} is defined here and exported by a family module")
        globals()[name] = fn
        if name not in __all__:
            __all__.append(name)


_install_family_functions()
