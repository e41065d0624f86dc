"""Convolution parameters: normalisation, validation and the one geometry every kernel uses.

Every convolution, plain or transposed, is described here by a :class:`Correlation`: the
*forward* relation

    y[n, o, p] = Σ_{c ∈ group(o)} Σ_k  x_pad[n, c, p·stride + k·dilation] · w[o, c, k]

between an input ``x`` of spatial size ``in_size`` (padded by ``pads`` = (lo, hi) per dim, a
negative pad crops) and an output ``y`` of spatial size ``out_size``. A kernel implements up to
three *roles* on it: ``forward`` (x, w → y), ``grad_input`` (gy, w → gx, the adjoint in x) and
``grad_weight`` (x, gy → gw, the adjoint in w).

A transposed convolution is the ``grad_input`` role of the correlation whose *input* is the
transposed convolution's output (this is PyTorch's definition: ``conv_transpose`` is the
gradient of ``conv`` with respect to its input). :func:`plan` does that bookkeeping once, so the
kernels never see the word "transposed".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from reference.conv.errors import ConvConfigError

PADDING_STRINGS = ("valid", "same", "same_lower")


class Correlation(NamedTuple):
    """The forward relation every kernel works on (see the module docstring)."""

    batch: int  # N
    in_channels: int  # C
    out_channels: int  # O
    in_size: tuple[int, ...]  # X, spatial
    kernel: tuple[int, ...]  # k, spatial
    out_size: tuple[int, ...]  # Y, spatial
    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    pads: tuple[tuple[int, int], ...]  # (lo, hi) per spatial dim; negative crops
    groups: int

    @property
    def rank(self) -> int:
        return len(self.kernel)

    @property
    def padded_size(self) -> tuple[int, ...]:
        return tuple(x + lo + hi for x, (lo, hi) in zip(self.in_size, self.pads))

    @property
    def dilated_kernel(self) -> tuple[int, ...]:
        return tuple((k - 1) * d + 1 for k, d in zip(self.kernel, self.dilation))

    @property
    def input_shape(self) -> tuple[int, ...]:
        return (self.batch, self.in_channels, *self.in_size)

    @property
    def weight_shape(self) -> tuple[int, ...]:
        return (self.out_channels, self.in_channels // self.groups, *self.kernel)

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.batch, self.out_channels, *self.out_size)

    def is_empty(self) -> bool:
        """True when some array involved has no elements (the result is all zeros)."""
        return 0 in (self.batch, self.in_channels, self.out_channels) or 0 in self.out_size


@dataclass(frozen=True)
class ConvPlan:
    """A validated public call: its correlation and how the public arrays map onto it."""

    corr: Correlation
    transposed: bool
    # For a transposed call whose output_padding is ≥ stride (legal when it is < dilation), the
    # correlation produces more positions than the transposed input has; the input is extended
    # with zeros by this many positions per dim (and the gradient cropped back).
    transposed_input_extension: tuple[int, ...]
    input_shape: tuple[int, ...]  # public input shape
    weight_shape: tuple[int, ...]
    output_shape: tuple[int, ...]  # public output shape


def _per_dim(name: str, value, rank: int, minimum: int) -> tuple[int, ...]:
    if isinstance(value, bool):
        raise ConvConfigError(name, value, "must be an int or a sequence of ints, not a bool")
    if isinstance(value, int):
        values = (value,) * rank
    else:
        try:
            values = tuple(value)
        except TypeError:
            raise ConvConfigError(name, value, "must be an int or a sequence of ints") from None
        if len(values) == 1 and rank > 1:
            values = values * rank
    if len(values) != rank:
        raise ConvConfigError(name, value, f"needs one entry per spatial dimension ({rank})")
    for v in values:
        if not _is_int(v):
            raise ConvConfigError(name, value, "entries must be ints")
        if v < minimum:
            raise ConvConfigError(name, value, f"entries must be >= {minimum}")
    return tuple(int(v) for v in values)


def _is_int(v) -> bool:
    """A Python int (not a bool) or a 0-d integer NumPy/CuPy scalar."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return hasattr(v, "dtype") and getattr(v.dtype, "kind", "") in "iu" and getattr(v, "ndim", 1) == 0


def _explicit_padding(padding, rank: int) -> tuple[tuple[int, int], ...]:
    """int | per-dim ints | per-dim (lo, hi) pairs  →  ((lo, hi), ...). Negative values crop."""
    if isinstance(padding, bool):
        raise ConvConfigError("padding", padding, "must be an int, a sequence, or a padding string")
    if _is_int(padding):
        return ((int(padding), int(padding)),) * rank
    try:
        entries = list(padding)
    except TypeError:
        raise ConvConfigError("padding", padding, "must be an int, a sequence, or a padding string") from None
    if len(entries) == 1 and rank > 1:
        entries = entries * rank
    if len(entries) != rank:
        raise ConvConfigError(
            "padding", padding, f"needs one entry per spatial dimension ({rank}): an int or a (lo, hi) pair"
        )
    pads = []
    for e in entries:
        if _is_int(e):
            pads.append((int(e), int(e)))
            continue
        try:
            lo, hi = e
        except (TypeError, ValueError):
            raise ConvConfigError(
                "padding", padding, "each entry must be an int or a (lo, hi) pair"
            ) from None
        if not (_is_int(lo) and _is_int(hi)):
            raise ConvConfigError("padding", padding, "(lo, hi) entries must be ints")
        pads.append((int(lo), int(hi)))
    return tuple(pads)


def same_padding(in_size, kernel, stride, dilation, lower: bool = False) -> tuple[tuple[int, int], ...]:
    """TensorFlow's SAME padding: output size ceil(in/stride), the odd pad at the end.

    ``lower=True`` is ONNX's SAME_LOWER: the odd pad at the start. For stride 1 both give
    PyTorch's ``padding='same'`` split (total ``dilation·(k-1)``, the extra at the end).
    """
    pads = []
    for x, k, s, d in zip(in_size, kernel, stride, dilation):
        out = -(-x // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - x, 0)
        small, large = total // 2, total - total // 2
        pads.append((large, small) if lower else (small, large))
    return tuple(pads)


def _check_channels(transposed, groups, in_channels, weight_shape, input_shape):
    if groups < 1:
        raise ConvConfigError("groups", groups, "must be a positive int")
    if in_channels % groups:
        raise ConvConfigError("groups", groups, f"input channels ({in_channels}) must be divisible by groups")
    if transposed:
        if weight_shape[0] != in_channels:
            raise ConvConfigError(
                "weight.shape",
                tuple(weight_shape),
                f"a transposed convolution's weight is (in_channels, out_channels/groups, *kernel); "
                f"weight.shape[0] must equal the input's channels ({in_channels})",
            )
    else:
        if weight_shape[0] % groups:
            raise ConvConfigError(
                "weight.shape",
                tuple(weight_shape),
                f"out_channels ({weight_shape[0]}) must be divisible by groups ({groups})",
            )
        if weight_shape[1] * groups != in_channels:
            raise ConvConfigError(
                "weight.shape",
                tuple(weight_shape),
                f"weight.shape[1] * groups ({weight_shape[1]} * {groups}) must equal the input's channels "
                f"({in_channels}) for input shape {tuple(input_shape)}",
            )


def plan(
    input_shape,
    weight_shape,
    stride=1,
    padding=0,
    dilation=1,
    transposed=False,
    output_padding=0,
    groups=1,
) -> ConvPlan:
    """Validate a public convolution call and reduce it to its :class:`Correlation`.

    Raises :class:`ConvConfigError` naming the parameter, its value and the rule it breaks.
    """
    input_shape, weight_shape = tuple(input_shape), tuple(weight_shape)
    if len(input_shape) not in (3, 4, 5):
        raise ConvConfigError(
            "input.shape", input_shape, "must be (N, C, *spatial) with 1, 2 or 3 spatial dimensions"
        )
    if len(weight_shape) != len(input_shape):
        raise ConvConfigError(
            "weight.shape",
            weight_shape,
            f"must have the input's rank ({len(input_shape)}): (out, in/groups, *kernel)",
        )
    rank = len(input_shape) - 2
    if not _is_int(groups):
        raise ConvConfigError("groups", groups, "must be a positive int")
    groups = int(groups)
    transposed = bool(transposed)
    stride = _per_dim("stride", stride, rank, 1)
    dilation = _per_dim("dilation", dilation, rank, 1)
    output_padding = _per_dim("output_padding", output_padding, rank, 0)
    batch, in_channels, in_size = input_shape[0], input_shape[1], input_shape[2:]
    kernel = weight_shape[2:]
    _check_channels(transposed, groups, in_channels, weight_shape, input_shape)
    if 0 in in_size and batch > 0 and in_channels > 0:
        raise ConvConfigError(
            "input.shape",
            input_shape,
            "a zero spatial size is allowed only with a zero batch or zero channels (as in PyTorch)",
        )
    dilated_kernel = tuple((k - 1) * d + 1 for k, d in zip(kernel, dilation))
    if 0 in kernel:
        raise ConvConfigError("weight.shape", weight_shape, "kernel sizes must be positive")

    if not transposed:
        # output_padding is ignored here, as aten's convolution ignores it when transposed=False.
        pads = _resolve_padding(padding, rank, in_size, kernel, stride, dilation)
        _check_crop(padding, pads, in_size)  # also guarantees a padded size >= 0
        padded = tuple(x + lo + hi for x, (lo, hi) in zip(in_size, pads))
        for i, (xp, ek) in enumerate(zip(padded, dilated_kernel)):
            if ek > xp:
                raise ConvConfigError(
                    "weight.shape",
                    weight_shape,
                    f"the dilated kernel ({ek}) is larger than the padded input ({xp}) in spatial dim {i}",
                )
        out_size = tuple((xp - ek) // s + 1 for xp, ek, s in zip(padded, dilated_kernel, stride))
        corr = Correlation(
            batch,
            in_channels,
            weight_shape[0],
            tuple(in_size),
            tuple(kernel),
            out_size,
            stride,
            dilation,
            pads,
            groups,
        )
        return ConvPlan(corr, False, (0,) * rank, input_shape, weight_shape, corr.output_shape)

    # Transposed: the output is the correlation's input.
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= max(s, d):
            raise ConvConfigError(
                "output_padding",
                output_padding,
                f"must be smaller than either stride {stride} or dilation {dilation}",
            )
    if isinstance(padding, str):
        key = padding.lower()
        if key not in PADDING_STRINGS:
            raise ConvConfigError("padding", padding, f"padding strings are {PADDING_STRINGS}")
        if any(output_padding):
            raise ConvConfigError(
                "output_padding",
                output_padding,
                "must be 0 when a transposed convolution's padding is a string (the output size is implied)",
            )
        if key == "valid":
            pads = ((0, 0),) * rank
            out_size = tuple((x - 1) * s + ek for x, s, ek in zip(in_size, stride, dilated_kernel))
        else:  # TensorFlow's conv_transpose SAME: output = input * stride
            out_size = tuple(x * s for x, s in zip(in_size, stride))
            pads = same_padding(out_size, kernel, stride, dilation, lower=(key == "same_lower"))
    else:
        pads = _explicit_padding(padding, rank)
        out_size = tuple(
            (x - 1) * s - lo - hi + ek + op
            for x, s, (lo, hi), ek, op in zip(in_size, stride, pads, dilated_kernel, output_padding)
        )
    for i, y in enumerate(out_size):
        if y <= 0 and in_size[i] > 0:
            raise ConvConfigError(
                "padding",
                padding,
                f"the transposed convolution's output size in spatial dim {i} would be {y}; "
                "it must be positive",
            )
    _check_crop(padding, pads, out_size)
    # Positions the correlation produces from the transposed output; > in_size only when
    # output_padding >= stride (allowed when it is < dilation).
    corr_out = tuple(
        (y + lo + hi - ek) // s + 1 for y, (lo, hi), ek, s in zip(out_size, pads, dilated_kernel, stride)
    )
    extension = tuple(c - x for c, x in zip(corr_out, in_size))
    out_channels = weight_shape[1] * groups
    corr = Correlation(
        batch,
        out_channels,
        in_channels,
        tuple(out_size),
        tuple(kernel),
        corr_out,
        stride,
        dilation,
        pads,
        groups,
    )
    return ConvPlan(corr, True, extension, input_shape, weight_shape, (batch, out_channels, *out_size))


def _check_crop(padding, pads, size):
    """A negative pad crops; together the two sides may not crop more than the dimension has."""
    for i, ((lo, hi), n) in enumerate(zip(pads, size)):
        if max(-lo, 0) + max(-hi, 0) > n:
            raise ConvConfigError(
                "padding",
                padding,
                f"negative padding {(lo, hi)} crops more than the size {n} of spatial dim {i}",
            )


def _resolve_padding(padding, rank, in_size, kernel, stride, dilation):
    if isinstance(padding, str):
        key = padding.lower()
        if key == "valid":
            return ((0, 0),) * rank
        if key in ("same", "same_lower"):
            return same_padding(in_size, kernel, stride, dilation, lower=(key == "same_lower"))
        raise ConvConfigError("padding", padding, f"padding strings are {PADDING_STRINGS}")
    return _explicit_padding(padding, rank)


def conv_output_shape(
    input_shape, weight_shape, stride=1, padding=0, dilation=1, transposed=False, output_padding=0, groups=1
) -> tuple[int, ...]:
    """The output shape of :func:`reference.conv.convolution` for these shapes and parameters."""
    return plan(
        input_shape, weight_shape, stride, padding, dilation, transposed, output_padding, groups
    ).output_shape
