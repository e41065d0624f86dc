"""Hypothesis strategies for convolution configurations, valid by construction.

Sizes are derived from the drawn output size (non-transposed) or input size (transposed), so
every drawn configuration is one the reference must accept; ``assume`` only rejects the rare
draw whose negative padding would crop more than the input has.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

PADDING_FORMS = ("int", "per_dim", "pairs", "negative", "valid", "same", "same_lower")


class ConvCase(NamedTuple):
    input_shape: tuple
    weight_shape: tuple
    bias: bool
    stride: tuple
    padding: object
    dilation: tuple
    transposed: bool
    output_padding: tuple
    groups: int

    @property
    def params(self) -> tuple:
        """(stride, padding, dilation, transposed, output_padding, groups), aten's order."""
        return (self.stride, self.padding, self.dilation, self.transposed, self.output_padding, self.groups)

    @property
    def rank(self) -> int:
        return len(self.input_shape) - 2

    def arrays(self, seed: int = 0, dtype=np.float64):
        """Random input, weight and (optional) bias in ``dtype``."""
        rng = np.random.default_rng(seed)
        x = rng.standard_normal(self.input_shape).astype(dtype)
        w = rng.standard_normal(self.weight_shape).astype(dtype)
        out_channels = self.weight_shape[1] * self.groups if self.transposed else self.weight_shape[0]
        b = rng.standard_normal(out_channels).astype(dtype) if self.bias else None
        return x, w, b

    def __str__(self) -> str:
        kind = "conv_transpose" if self.transposed else "conv"
        return (
            f"{kind}{self.rank}d input={self.input_shape} weight={self.weight_shape} stride={self.stride} "
            f"padding={self.padding!r} dilation={self.dilation} output_padding={self.output_padding} "
            f"groups={self.groups} bias={self.bias}"
        )


def _tuple(draw, strategy, rank):
    return tuple(draw(strategy) for _ in range(rank))


@st.composite
def conv_cases(
    draw,
    ranks=(1, 2, 3),
    transposed=(False, True),
    padding_forms=PADDING_FORMS,
    max_batch: int = 2,
    max_group_channels: int = 3,
    max_groups: int = 3,
    allow_empty: bool = True,
    allow_zero_channels: bool = True,
) -> ConvCase:
    rank = draw(st.sampled_from(ranks))
    is_transposed = draw(st.sampled_from(transposed))
    small = 3 if rank < 3 else 2  # keeps rank-3 cases cheap for the direct-loop oracle
    kernel = _tuple(draw, st.integers(1, 3), rank)
    stride = _tuple(draw, st.integers(1, 3), rank)
    dilation = _tuple(draw, st.integers(1, 2 if rank == 3 else 3), rank)
    eff = tuple((k - 1) * d + 1 for k, d in zip(kernel, dilation))
    groups = draw(st.integers(1, max_groups))
    low = 0 if allow_empty else 1
    batch = draw(st.integers(low, max_batch))
    cg = draw(st.integers(low if allow_zero_channels else 1, max_group_channels))
    og = draw(st.integers(1, max_group_channels))
    form = draw(st.sampled_from(padding_forms))
    output_padding = (0,) * rank

    if not is_transposed:
        if form in ("valid", "same", "same_lower"):
            if form == "valid":
                in_size = tuple(e + draw(st.integers(0, small)) for e in eff)
            else:
                in_size = _tuple(draw, st.integers(1, 3 * small), rank)
            padding = form
        else:
            pads = _draw_pads(draw, form, rank)
            out = _tuple(draw, st.integers(1, small), rank)
            rem = tuple(draw(st.integers(0, s - 1)) for s in stride)
            in_size = tuple(
                (y - 1) * s + e + r - lo - hi for y, s, e, r, (lo, hi) in zip(out, stride, eff, rem, pads)
            )
            assume(all(n >= 1 + max(-lo, 0) + max(-hi, 0) for n, (lo, hi) in zip(in_size, pads)))
            padding = _spell(form, pads)
        input_shape = (batch, groups * cg, *in_size)
        weight_shape = (groups * og, cg, *kernel)
    else:
        in_size = _tuple(draw, st.integers(1, small), rank)
        if form in ("valid", "same", "same_lower"):
            padding = form
        else:
            output_padding = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
            pads = _draw_pads(draw, form, rank)
            out = tuple(
                (x - 1) * s - lo - hi + e + op
                for x, s, (lo, hi), e, op in zip(in_size, stride, pads, eff, output_padding)
            )
            assume(all(y >= 1 + max(-lo, 0) + max(-hi, 0) for y, (lo, hi) in zip(out, pads)))
            padding = _spell(form, pads)
        input_shape = (batch, groups * cg, *in_size)
        weight_shape = (groups * cg, og, *kernel)
    bias = draw(st.booleans())
    return ConvCase(
        input_shape, weight_shape, bias, stride, padding, dilation, is_transposed, output_padding, groups
    )


def _draw_pads(draw, form, rank):
    if form == "int":
        p = draw(st.integers(0, 2))
        return ((p, p),) * rank
    if form == "per_dim":
        return tuple((p, p) for p in _tuple(draw, st.integers(0, 2), rank))
    if form == "pairs":
        return tuple((draw(st.integers(0, 3)), draw(st.integers(0, 3))) for _ in range(rank))
    return tuple((draw(st.integers(-2, 2)), draw(st.integers(-2, 2))) for _ in range(rank))  # negative


def _spell(form, pads):
    """The padding argument as a user would write it for this form."""
    if form == "int":
        return pads[0][0]
    if form == "per_dim":
        return tuple(lo for lo, _ in pads)
    return tuple(pads)


def numel(shape) -> int:
    return math.prod(shape)
