"""im2col + GEMM: the default path, and the one fuzzing spends its time in.

forward      cols[g, (c,k), (n,p)] = x_pad[n, g·Cg + c, p·s + k·d]     (one copy of the windows)
             y[g, o, (n,p)]        = w[g, o, (c,k)] @ cols               (one GEMM per group)
grad_weight  gw[g, o, (c,k)]       = Σ_n gy[n, g, o, p] @ cols[n]ᵀ       (the same columns, per sample)
grad_input   gcols                 = wᵀ @ gy, then col2im: every kernel tap adds its slab back
             into the padded input at the positions it read (a strided add per tap), then unpad.

All the arithmetic is in the GEMMs, so this runs at BLAS speed.
"""

from __future__ import annotations

import math

from reference.backend import namespace_of
from reference.conv._arrays import kernel_offsets, pad_or_crop, tap_slices, unpad, windows

NAME = "im2col"
SUMMARY = "im2col + one GEMM per group (the default)"


def why_not(corr, role):
    return None  # applies to every valid configuration


def _cols(x, corr):
    """(groups, Cg·K, N·P) matrix of receptive fields."""
    g, rank = corr.groups, corr.rank
    view = windows(pad_or_crop(x, corr.pads), corr)  # (N, C, *Y, *k)
    # → (C, *k, N, *Y): channels and taps are the contraction, batch and positions the columns.
    order = (1, *range(2 + rank, 2 + 2 * rank), 0, *range(2, 2 + rank))
    cols = view.transpose(order)
    return cols.reshape(
        g, corr.in_channels // g * math.prod(corr.kernel), corr.batch * math.prod(corr.out_size)
    )


def _grouped(a, corr, channels):
    """(N, channels, *S) → (groups, channels/groups, N·prod(S))."""
    g = corr.groups
    moved = a.transpose(1, 0, *range(2, a.ndim))
    return moved.reshape(g, channels // g, -1)


def forward(x, w, corr):
    xp = namespace_of(x, w)
    g = corr.groups
    out = xp.matmul(w.reshape(g, corr.out_channels // g, -1), _cols(x, corr))  # (g, Og, N·P)
    out = out.reshape(corr.out_channels, corr.batch, *corr.out_size)
    return xp.ascontiguousarray(out.transpose(1, 0, *range(2, 2 + corr.rank)))


def grad_weight(x, gy, corr):
    # Σ over samples of one GEMM each: gw[g] += gy[n, g] @ cols[n, g]ᵀ. Per sample, the columns
    # stay in cache and the GEMM's contraction (output positions) is short; one GEMM over all
    # samples at once contracts over N·P with a tiny output and runs markedly slower in BLAS.
    xp = namespace_of(x, gy)
    g, rank = corr.groups, corr.rank
    view = windows(pad_or_crop(x, corr.pads), corr)  # (N, C, *Y, *k)
    taps = (0, *range(1 + rank, 1 + 2 * rank), *range(1, 1 + rank))  # one sample: (C, *k, *Y)
    gw = xp.zeros(
        (g, corr.out_channels // g, corr.in_channels // g * math.prod(corr.kernel)),
        dtype=xp.result_type(x, gy),
    )
    for n in range(corr.batch):
        cols = view[n].transpose(taps).reshape(g, gw.shape[2], -1)  # (g, Cg·K, P)
        gw += xp.matmul(gy[n].reshape(g, gw.shape[1], -1), cols.transpose(0, 2, 1))
    return gw.reshape(corr.weight_shape)


def grad_input(gy, w, corr):
    xp = namespace_of(gy, w)
    g, rank = corr.groups, corr.rank
    wg = w.reshape(g, corr.out_channels // g, -1)
    gcols = xp.matmul(wg.transpose(0, 2, 1), _grouped(gy, corr, corr.out_channels))  # (g, Cg·K, N·P)
    gcols = gcols.reshape(corr.in_channels, *corr.kernel, corr.batch, *corr.out_size)
    # col2im, accumulated in (C, N, *X_pad) so that each tap's slab needs no transpose.
    g_pad = xp.zeros((corr.in_channels, corr.batch, *corr.padded_size), dtype=gcols.dtype)
    for offset in kernel_offsets(corr.kernel):
        g_pad[(slice(None), slice(None), *tap_slices(offset, corr))] += gcols[(slice(None), *offset)]
    g_pad = g_pad.transpose(1, 0, *range(2, 2 + rank))
    return xp.ascontiguousarray(unpad(g_pad, corr.pads, corr.in_size))


ROLES = {"forward": forward, "grad_input": grad_input, "grad_weight": grad_weight}
