"""Direct loops: the definition, written out. A tiny-shape oracle, not a fast path.

For every output position p and kernel tap k it finds the input position
i = p·stride + k·dilation − pad_lo, skips it when it falls in the padding (or was cropped), and
accumulates the channel contraction of that one tap. No padded copy, no im2col, no GEMM
reshapes: each line is the formula, so every other path is checked against it.
"""

from __future__ import annotations

import itertools
import math

from reference.backend import namespace_of
from reference.conv._arrays import kernel_offsets

NAME = "direct"
SUMMARY = "direct loops over output positions and kernel taps (tiny-shape oracle)"
MAX_LOOP_ITERATIONS = 50_000


def why_not(corr, role):
    iterations = math.prod(corr.out_size) * math.prod(corr.kernel) * corr.groups
    if iterations > MAX_LOOP_ITERATIONS:
        return (
            f"the loop would run {iterations} iterations (output positions × kernel taps × groups); "
            f"the direct oracle is limited to {MAX_LOOP_ITERATIONS}"
        )
    return None


def _taps(corr):
    """Yield (output position p, kernel tap k, input position i) for every in-range i."""
    for p in itertools.product(*(range(n) for n in corr.out_size)):
        for k in kernel_offsets(corr.kernel):
            i = tuple(
                pi * s + ki * d - lo
                for pi, ki, s, d, (lo, _) in zip(p, k, corr.stride, corr.dilation, corr.pads)
            )
            if all(0 <= ii < n for ii, n in zip(i, corr.in_size)):
                yield p, k, i


def _group_slices(corr):
    cg, og = corr.in_channels // corr.groups, corr.out_channels // corr.groups
    for g in range(corr.groups):
        yield slice(g * cg, (g + 1) * cg), slice(g * og, (g + 1) * og)


def forward(x, w, corr):
    xp = namespace_of(x, w)
    y = xp.zeros(corr.output_shape, dtype=xp.result_type(x, w))
    for p, k, i in _taps(corr):
        for cs, os in _group_slices(corr):
            # y[n, o, p] += Σ_c x[n, c, i] · w[o, c, k]
            y[(slice(None), os, *p)] += x[(slice(None), cs, *i)] @ w[(os, slice(None), *k)].T
    return y


def grad_input(gy, w, corr):
    xp = namespace_of(gy, w)
    gx = xp.zeros(corr.input_shape, dtype=xp.result_type(gy, w))
    for p, k, i in _taps(corr):
        for cs, os in _group_slices(corr):
            # gx[n, c, i] += Σ_o gy[n, o, p] · w[o, c, k]
            gx[(slice(None), cs, *i)] += gy[(slice(None), os, *p)] @ w[(os, slice(None), *k)]
    return gx


def grad_weight(x, gy, corr):
    xp = namespace_of(x, gy)
    gw = xp.zeros(corr.weight_shape, dtype=xp.result_type(x, gy))
    for p, k, i in _taps(corr):
        for cs, os in _group_slices(corr):
            # gw[o, c, k] += Σ_n gy[n, o, p] · x[n, c, i]
            gw[(os, slice(None), *k)] += gy[(slice(None), os, *p)].T @ x[(slice(None), cs, *i)]
    return gw


ROLES = {"forward": forward, "grad_input": grad_input, "grad_weight": grad_weight}
