"""im2col + GEMM: the default path, and the one fuzzing spends its time in.

forward      cols[n, g, (c,k), p]  = x_pad[n, g·Cg + c, p·s + k·d]     (one copy of the windows)
             y[n, g, o, p]         = w[g, o, (c,k)] @ cols[n, g]         (a batched GEMM per chunk)
grad_weight  gw[g, o, (c,k)]       = Σ_n gy[n, g, o, p] @ cols[n]ᵀ       (the same columns, per sample)
grad_input   gcols[n, g]           = w[g]ᵀ @ gy[n, g], then col2im: every kernel tap adds its slab
             back into the padded input at the positions it read (a strided add per tap), then unpad.

All the arithmetic is in the GEMMs, so this runs at BLAS speed. The forward and the input gradient
take the samples in chunks whose columns fit in cache (``CHUNK_BYTES``). With stride 1 the default
input gradient is not this col2im but ``dgrad_transposed_conv`` (see ``algorithms.default_kernel``),
whose GEMM has the forward's better-shaped operands; forcing ``algorithm="im2col"`` runs this one.
"""

from __future__ import annotations

import math

from reference.backend import namespace_of
from reference.conv._arrays import kernel_offsets, pad_or_crop, tap_slices, unpad, windows

NAME = "im2col"
SUMMARY = "im2col + one GEMM per group (the default)"


def why_not(corr, role):
    return None  # applies to every valid configuration


# Columns of this many bytes (per GEMM) stay in the CPU's L2/L3 while the GEMM reads them; the
# forward and the input gradient work on chunks of samples of about this size. Measured on the
# benchmarks' cases (benchmarks/conv.py): one GEMM over the whole batch is 10-30% slower than per-chunk
# GEMMs, because the (C·K, N·P) column matrix (tens of MB) is written once and read back from RAM.
CHUNK_BYTES = 1 << 21


def samples_per_chunk(corr, bytes_per_sample: int) -> int:
    """How many samples go into one GEMM so that its columns take about ``CHUNK_BYTES``."""
    return max(1, min(corr.batch, CHUNK_BYTES // max(bytes_per_sample, 1)))


def _sample_cols(view, corr):
    """(n, groups, Cg·K, P) columns of a chunk of samples from the window view (n, C, *Y, *k).

    The transpose puts (channel, tap) rows before positions; the reshape is the one copy.
    """
    rank = corr.rank
    order = (0, 1, *range(2 + rank, 2 + 2 * rank), *range(2, 2 + rank))  # (n, C, *k, *Y)
    cols = view.transpose(order)
    g = corr.groups
    return cols.reshape(
        view.shape[0], g, corr.in_channels // g * math.prod(corr.kernel), math.prod(corr.out_size)
    )


def forward(x, w, corr):
    # y[n, g] = w[g] @ cols[n, g] for every sample: the output of a chunk's batched GEMM is already
    # in (N, O, *Y) order, so it is written in place into the result (no final transpose copy).
    xp = namespace_of(x, w)
    g = corr.groups
    dtype = xp.result_type(x, w)
    out = xp.empty((corr.batch, g, corr.out_channels // g, math.prod(corr.out_size)), dtype=dtype)
    if out.size == 0:
        return out.reshape(corr.output_shape)
    view = windows(pad_or_crop(x, corr.pads), corr)  # (N, C, *Y, *k), no copy
    wg = w.reshape(g, corr.out_channels // g, -1)
    step = samples_per_chunk(corr, x.itemsize * wg.shape[2] * g * out.shape[3])
    for n in range(0, corr.batch, step):
        xp.matmul(wg, _sample_cols(view[n : n + step], corr), out=out[n : n + step])
    return out.reshape(corr.output_shape)


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
    # gcols[n, g] = w[g]ᵀ @ gy[n, g]  (rows: channel, tap; columns: output positions), then col2im:
    # each kernel tap adds its slab back into the padded input at the positions it read (one
    # strided add per tap), then the padding is cut off. Chunks of samples as in the forward, so
    # the columns are added back while they are still in cache; the result is built in
    # (N, C, *X_pad) order and needs no transpose.
    xp = namespace_of(gy, w)
    g, n_total = corr.groups, corr.batch
    wt = w.reshape(g, corr.out_channels // g, -1).transpose(0, 2, 1)  # (g, Cg·K, Og), a view
    gy_g = gy.reshape(n_total, g, corr.out_channels // g, math.prod(corr.out_size))
    g_pad = xp.zeros((n_total, corr.in_channels, *corr.padded_size), dtype=xp.result_type(gy, w))
    step = samples_per_chunk(corr, gy.itemsize * corr.in_channels * math.prod(corr.kernel) * gy_g.shape[3])
    everything = (slice(None), slice(None))
    for n in range(0, n_total, step):
        gcols = xp.matmul(wt, gy_g[n : n + step])  # (n, g, Cg·K, P)
        gcols = gcols.reshape(-1, corr.in_channels, *corr.kernel, *corr.out_size)
        chunk = g_pad[n : n + step]
        for offset in kernel_offsets(corr.kernel):
            chunk[(*everything, *tap_slices(offset, corr))] += gcols[(*everything, *offset)]
    return xp.ascontiguousarray(unpad(g_pad, corr.pads, corr.in_size))


ROLES = {"forward": forward, "grad_input": grad_input, "grad_weight": grad_weight}
