"""Asymmetric (or negative) padding as an explicit pre-pad of the input, then a symmetric conv.

cuDNN accepts only symmetric padding, so TensorFlow's GPU kernels pad the input by the
difference between the two sides, run the symmetric convolution, and crop the input gradient
back to the original size. This path does the same: the part of each (lo, hi) pair that is not
shared by both sides (and any negative part, which crops) is applied to the input explicitly;
the remaining symmetric pad goes to the convolution; the input gradient is computed for the
pre-padded input and then cropped (unpadded) back.
"""

from __future__ import annotations

from reference.conv._arrays import pad_or_crop, unpad
from reference.conv.algorithms import im2col

NAME = "prepad_crop"
SUMMARY = "asymmetric/negative padding as explicit pre-pad of the input + symmetric conv, gradient cropped"


def why_not(corr, role):
    if all(lo == hi and lo >= 0 for lo, hi in corr.pads):
        return f"padding {corr.pads} is already symmetric and non-negative"
    return None


def _split(corr):
    """(explicit pads applied to x, symmetric pads left to the conv, correlation on the pre-padded x)."""
    symmetric = tuple(max(min(lo, hi), 0) for lo, hi in corr.pads)
    explicit = tuple((lo - m, hi - m) for (lo, hi), m in zip(corr.pads, symmetric))
    prepadded_size = tuple(x + lo + hi for x, (lo, hi) in zip(corr.in_size, explicit))
    inner = corr._replace(in_size=prepadded_size, pads=tuple((m, m) for m in symmetric))
    return explicit, inner


def forward(x, w, corr):
    explicit, inner = _split(corr)
    return im2col.forward(pad_or_crop(x, explicit), w, inner)


def grad_input(gy, w, corr):
    explicit, inner = _split(corr)
    return unpad(im2col.grad_input(gy, w, inner), explicit, corr.in_size)


def grad_weight(x, gy, corr):
    explicit, inner = _split(corr)
    return im2col.grad_weight(pad_or_crop(x, explicit), gy, inner)


ROLES = {"forward": forward, "grad_input": grad_input, "grad_weight": grad_weight}
