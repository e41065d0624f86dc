"""The input gradient as a forward convolution of the zero-inserted output gradient.

    gx_pad[i] = Σ_{p,k : p·s + k·d = i} gy[p] · w[k]

Insert s−1 zeros between the elements of gy (call it gz, so gz[p·s] = gy[p]); then
gx_pad[i] = Σ_k gz[i − k·d] · w[k]. Substituting k' = K−1−k turns this into a *correlation*
with the spatially flipped kernel, dilation d and stride 1, over gz padded by the dilated kernel
extent minus one on each side. Output channels and input channels swap roles, per group. The
padding of the original convolution is folded into that correlation's padding (it can become
negative, which crops), and the positions at the end of the padded input that no output read
(the stride remainder r) get the extra zeros they need on the right.

This is how cuDNN-style backends compute dgrad, and it is the path where a forgotten kernel
flip or a wrong remainder shows up.
"""

from __future__ import annotations

from reference.backend import namespace_of
from reference.conv._arrays import zero_insert
from reference.conv.algorithms import im2col
from reference.conv.geometry import Correlation

NAME = "dgrad_transposed_conv"
SUMMARY = "input gradient as a stride-1 convolution of the zero-inserted gradient with the flipped kernel"


def why_not(corr, role):
    if role != "grad_input":
        return "it computes only the input gradient"
    return None


def _flipped_swapped(w, corr):
    """(O, Cg, *k) → (C, Og, *k) with every spatial axis reversed."""
    xp = namespace_of(w)
    g, og, cg = corr.groups, corr.out_channels // corr.groups, corr.in_channels // corr.groups
    swapped = w.reshape(g, og, cg, *corr.kernel).swapaxes(1, 2).reshape(corr.in_channels, og, *corr.kernel)
    return xp.ascontiguousarray(xp.flip(swapped, axis=tuple(range(2, 2 + corr.rank))))


def grad_input(gy, w, corr):
    gz = zero_insert(gy, corr.stride)
    pads = []
    for (lo, hi), ek, xpad, gzn in zip(corr.pads, corr.dilated_kernel, corr.padded_size, gz.shape[2:]):
        remainder = xpad - (gzn + ek - 1)  # padded positions after the last one any output read
        pads.append((ek - 1 - lo, ek - 1 + remainder - hi))
    dgrad = Correlation(
        batch=corr.batch,
        in_channels=corr.out_channels,
        out_channels=corr.in_channels,
        in_size=tuple(gz.shape[2:]),
        kernel=corr.kernel,
        out_size=tuple(corr.in_size),
        stride=(1,) * corr.rank,
        dilation=corr.dilation,
        pads=tuple(pads),
        groups=corr.groups,
    )
    return im2col.forward(gz, _flipped_swapped(w, corr), dgrad)


ROLES = {"grad_input": grad_input}
