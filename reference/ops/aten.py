"""``reference.ops.aten``: the ATen overloads PyTorch programs (and PyTorch's own OpInfo wrappers)
call as ``torch.ops.aten.<op>.<overload>``, for the ops the reference implements as primitives:
``max_pool2d_with_indices_backward.default``."""

from __future__ import annotations

from types import SimpleNamespace

from reference.autograd.dispatch import apply
from reference.ops.rules.registry import RULES


def _max_pool2d_with_indices_backward(
    grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices
):
    if tuple(grad_output.shape) != tuple(indices.shape):
        raise RuntimeError(
            f"max_pool2d_with_indices_backward: grad_output shape {list(grad_output.shape)} and indices "
            f"shape {list(indices.shape)} differ"
        )
    return apply(RULES["max_pool2d_with_indices_backward"], (grad_output, self, indices), {})


max_pool2d_with_indices_backward = SimpleNamespace(default=_max_pool2d_with_indices_backward)
