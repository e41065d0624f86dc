"""Layout conversions between the reference's channels-first arrays and the layouts other
frameworks' users write: NHWC/NDHWC activations, HWIO (TensorFlow, JAX) and OHWI filters,
TensorFlow's depthwise filters (*k, C, multiplier).

Every conversion is a transpose/reshape only; each ``*_from_*`` has a ``*_to_*`` inverse.
"""

from __future__ import annotations

from reference.backend import namespace_of


def to_channels_last(x):
    """(N, C, *spatial) → (N, *spatial, C)."""
    return namespace_of(x).moveaxis(x, 1, -1)


def to_channels_first(x):
    """(N, *spatial, C) → (N, C, *spatial)."""
    return namespace_of(x).moveaxis(x, -1, 1)


def weight_from_hwio(w):
    """(*k, I, O) → (O, I, *k).

    Also maps a TensorFlow ``conv_transpose`` filter (*k, out, in) to PyTorch's transposed
    layout (in, out, *k).
    """
    r = w.ndim - 2
    return w.transpose(r + 1, r, *range(r))


def weight_to_hwio(w):
    """(O, I, *k) → (*k, I, O)."""
    return w.transpose(*range(2, w.ndim), 1, 0)


def weight_from_ohwi(w):
    """(O, *k, I) → (O, I, *k)."""
    return namespace_of(w).moveaxis(w, -1, 1)


def weight_to_ohwi(w):
    """(O, I, *k) → (O, *k, I)."""
    return namespace_of(w).moveaxis(w, 1, -1)


def weight_from_depthwise(w):
    """TensorFlow depthwise (*k, C, M) → grouped (C·M, 1, *k), for ``groups=C``.

    Output channel c·M + m of the grouped convolution is TensorFlow's channel c, multiplier m.
    """
    xp = namespace_of(w)
    *kernel, c, m = w.shape
    return xp.moveaxis(w.reshape(*kernel, c * m), -1, 0)[:, None]


def weight_to_depthwise(w, channels: int):
    """Grouped (C·M, 1, *k) → TensorFlow depthwise (*k, C, M)."""
    xp = namespace_of(w)
    cm, _, *kernel = w.shape
    return xp.moveaxis(w[:, 0], 0, -1).reshape(*kernel, channels, cm // channels)
