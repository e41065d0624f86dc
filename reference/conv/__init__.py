"""Array-level convolution: the reference for forward, backward and double backward.

Channels-first arrays (NumPy or CuPy). Public API:

* :func:`convolution`, :func:`convolution_backward`, :func:`convolution_double_backward`
  (aten's signatures and meaning);
* :func:`batched_convolution`, :func:`batched_convolution_backward`,
  :func:`batched_convolution_double_backward` (a vmap batch on any of the arrays: functorch's
  fold-into-groups rules, never a loop);
* :func:`algorithms` (every path by name) and :func:`applicable_algorithms`;
* :func:`conv_output_shape`, layout helpers, :class:`ConvConfigError`.
"""

from reference.conv import algorithms as _paths
from reference.conv.api import convolution, convolution_backward, convolution_double_backward
from reference.conv.batched import batched_convolution
from reference.conv.batched_backward import batched_convolution_backward, batched_convolution_double_backward
from reference.conv.errors import ConvConfigError
from reference.conv.geometry import Correlation, conv_output_shape, plan, same_padding
from reference.conv.layout import (
    to_channels_first,
    to_channels_last,
    weight_from_depthwise,
    weight_from_hwio,
    weight_from_ohwi,
    weight_to_depthwise,
    weight_to_hwio,
    weight_to_ohwi,
)


def algorithms() -> list[str]:
    """The names of every algorithm path, the default (``im2col``) first."""
    return _paths.names()


def applicable_algorithms(
    input_shape, weight_shape, stride=1, padding=0, dilation=1, transposed=False, output_padding=0, groups=1
) -> dict[str, list[str]]:
    """For each public role (``forward``, ``grad_input``, ``grad_weight``), the paths that apply."""
    p = plan(input_shape, weight_shape, stride, padding, dilation, transposed, output_padding, groups)
    # A transposed convolution's forward is its correlation's input gradient, and vice versa.
    corr_role = {"forward": "grad_input", "grad_input": "forward"} if p.transposed else {}
    return {role: _paths.applicable(p.corr, corr_role.get(role, role)) for role in _paths.ROLES}


__all__ = [
    "ConvConfigError",
    "Correlation",
    "algorithms",
    "applicable_algorithms",
    "batched_convolution",
    "batched_convolution_backward",
    "batched_convolution_double_backward",
    "conv_output_shape",
    "convolution",
    "convolution_backward",
    "convolution_double_backward",
    "plan",
    "same_padding",
    "to_channels_first",
    "to_channels_last",
    "weight_from_depthwise",
    "weight_from_hwio",
    "weight_from_ohwi",
    "weight_to_depthwise",
    "weight_to_hwio",
    "weight_to_ohwi",
]
