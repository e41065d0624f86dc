"""torch.special's Hurwitz zeta function ``zeta(input, other)`` (ζ(s, q), s = input, q = other) over
the exact rules of :mod:`reference.ops.rules.special_zeta`.

PyTorch's TensorIterator promotes the two operands to a floating dtype (integers to the default
dtype) and broadcasts them; either may be a Python number. Its CPU kernel (``zeta_cpu``) has no
float16 or bfloat16 instance (the dispatch error, as PyTorch raises it). Unlike PyTorch, which raises
"the derivative for 'zeta' is not implemented" for the derivative in s, the reference differentiates
both arguments (docs/records.md, the zeta records)."""

from __future__ import annotations

from reference.ops import api as A
from reference.ops.api import R
from reference.ops.functions._low_precision import _LOW
from reference.ops.public import float_dtype, promoted
from reference.scalar_types import scalar_type_name


def zeta(input, other):
    """torch.special.zeta(input, other): s = input, q = other; exact derivatives of every order in
    both."""
    dt = float_dtype(A.result_type(input, other))
    if str(dt) in _LOW:
        raise NotImplementedError(f"\"zeta_cpu\" not implemented for '{scalar_type_name(dt)}'")
    return promoted(R.zeta, input, other, floating=True)


NAMESPACES = {"special": {"zeta": zeta}}
