"""Padding arithmetic as a framework user writes it when a framework lacks a padding form.

Written independently of ``reference.conv`` (an adapter that borrowed the reference's geometry
could not disagree with it). ``explicit_pads`` resolves ``same``/``same_lower``/``valid``/ints to
(lo, hi) pairs for a plain convolution (TensorFlow's SAME: output ceil(in/stride), the odd pad
at the end; SAME_LOWER: at the start). ``transposed_layout`` gives, for a transposed
convolution, the output size and how to crop (or zero-extend) the padding-free
``conv_transpose`` result to it.
"""

from __future__ import annotations


def _same(size, k, s, d, lower):
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    small, large = total // 2, total - total // 2
    return (large, small) if lower else (small, large)


def explicit_pads(params, in_size, kernel) -> list[tuple[int, int]]:
    p = params.padding
    if isinstance(p, str):
        if p == "valid":
            return [(0, 0)] * params.rank
        return [
            _same(x, k, s, d, p == "same_lower")
            for x, k, s, d in zip(in_size, kernel, params.stride, params.dilation)
        ]
    return [(e, e) if isinstance(e, int) else tuple(e) for e in p]


def is_symmetric(pads) -> bool:
    return all(lo == hi and lo >= 0 for lo, hi in pads)


def transposed_layout(params, in_size, kernel) -> tuple[list[int], list[tuple[int, int]]]:
    """(output size, per-dim (crop_lo, crop_hi) of the padding-free conv_transpose result).

    A negative crop is a zero extension (positions no input reaches).
    """
    full = [
        (x - 1) * s + (k - 1) * d + 1 for x, k, s, d in zip(in_size, kernel, params.stride, params.dilation)
    ]
    p = params.padding
    if isinstance(p, str):
        if p == "valid":
            out, los = full, [0] * params.rank
        else:
            out = [x * s for x, s in zip(in_size, params.stride)]
            los = [
                _same(y, k, s, d, p == "same_lower")[0]
                for y, k, s, d in zip(out, kernel, params.stride, params.dilation)
            ]
    else:
        pads = [(e, e) if isinstance(e, int) else tuple(e) for e in p]
        out = [f - lo - hi + op for f, (lo, hi), op in zip(full, pads, params.output_padding)]
        los = [lo for lo, _ in pads]
    return out, [(lo, f - lo - y) for f, lo, y in zip(full, los, out)]
