"""The weight gradient as one grouped convolution (TVM's ``conv2d_backward_weight`` legalisation).

    gw[o, c, k] = Σ_{n,p} x_pad[n, c, p·s + k·d] · gy[n, o, p]

Read with k as the output position and p as the kernel tap, this is a correlation of x with gy
as the *filter*: its stride is the original dilation d and its dilation the original stride s.
Every (sample n, input channel c) pair is its own group with one input channel, whose filters
are the gy[n, o] of the output channels o that c feeds. One forward convolution with
N·C groups computes all of them; summing over n and regrouping gives gw. The correlation can
produce more than k positions when the stride does not divide the input evenly: the extra ones
are cropped (TVM slices them off the same way).
"""

from __future__ import annotations

from reference.backend import namespace_of
from reference.conv.algorithms import im2col
from reference.conv.geometry import Correlation

NAME = "wgrad_grouped_conv"
SUMMARY = "weight gradient as one convolution with N·C groups, gy as the filter (TVM's legalisation)"


def why_not(corr, role):
    if role != "grad_weight":
        return "it computes only the weight gradient"
    return None


def grad_weight(x, gy, corr):
    xp = namespace_of(x, gy)
    n, c, o, g = corr.batch, corr.in_channels, corr.out_channels, corr.groups
    cg, og = c // g, o // g
    # Filters: for group (n, c) the og filters gy[n, o] with o in c's group → (N·C·Og, 1, *Y).
    gy_by_group = gy.reshape(n, g, 1, og, *corr.out_size)
    filters = xp.broadcast_to(gy_by_group, (n, g, cg, og, *corr.out_size)).reshape(
        n * c * og, 1, *corr.out_size
    )
    # Output size of the swapped correlation: ≥ the kernel size, cropped back to it below.
    swapped_out = tuple(
        (xpad - ((y - 1) * s + 1)) // d + 1
        for xpad, y, s, d in zip(corr.padded_size, corr.out_size, corr.stride, corr.dilation)
    )
    swapped = Correlation(
        batch=1,
        in_channels=n * c,
        out_channels=n * c * og,
        in_size=corr.in_size,
        kernel=corr.out_size,
        out_size=swapped_out,
        stride=corr.dilation,
        dilation=corr.stride,
        pads=corr.pads,
        groups=n * c,
    )
    r = im2col.forward(x.reshape(1, n * c, *corr.in_size), xp.ascontiguousarray(filters), swapped)
    r = r.reshape(n, g, cg, og, *swapped_out)[(Ellipsis, *(slice(0, k) for k in corr.kernel))].sum(axis=0)
    # (g, Cg, Og, *k) → (g, Og, Cg, *k) = (O, Cg, *k)
    return xp.ascontiguousarray(r.swapaxes(1, 2)).reshape(corr.weight_shape)


ROLES = {"grad_weight": grad_weight}
