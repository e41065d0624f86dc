"""torch.special's Bessel functions (``bessel_j0``, ``bessel_j1``, ``bessel_y0``, ``bessel_y1``,
``modified_bessel_k0``, ``modified_bessel_k1``) over the exact rules of
:mod:`reference.ops.rules.special`.

PyTorch's CPU kernels have no float16/bfloat16 instance (the dispatch error, as PyTorch raises it)
and promote integer inputs to the default dtype. Unlike PyTorch, whose results of these functions do
not require grad, the reference differentiates them (docs/records.md, the Bessel records)."""

from __future__ import annotations

from reference.autograd.dispatch import apply
from reference.autograd.tensor import default_dtype
from reference.backend import is_inexact
from reference.ops.api import R
from reference.ops.functions._low_precision import no_kernel
from reference.ops.rules.special import BESSEL


def _bessel(name):
    rule = getattr(R, name)

    def op(input):
        no_kernel(input, f"{name}_cpu")
        return apply(rule, (input,), {}, cast=None if is_inexact(input.dtype) else default_dtype.value)

    op.__name__ = name
    op.__doc__ = f"torch.special.{name}, differentiable (exact derivatives of every order)."
    return op


NAMESPACES = {"special": {name: _bessel(name) for name in BESSEL}}
