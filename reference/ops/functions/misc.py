"""Small PyTorch functions with their names, signatures, dtype rules and errors: ``fill`` (out of
place), ``zero_`` as a function, ``Tensor.sum_to_size``, ``Tensor.__rdiv__``/``__rmod__``,
``ldexp``/``ldexp_``, ``frexp`` and ``renorm``/``renorm_``.

Primitives (:mod:`reference.ops.rules.misc`): ``fill`` (FillBackward0/1), ``ldexp``
(LdexpBackward0), ``frexp`` (FrexpBackward0). ``zero_`` is the in-place ``zero`` rule.

Composites, as in PyTorch: ``sum_to_size`` (``at::sum_to``: a keepdim sum, SumBackward1),
``__rdiv__`` (``self.reciprocal() * other``, MulBackward0), ``__rmod__`` (``remainder(other,
self)``; PyTorch has no derivative for that overload and neither has the reference).

``renorm`` is a primitive in PyTorch (RenormBackward0, FunctionsManual ``renorm_backward``); here
it is the composite ``self * where(norm > maxnorm, maxnorm / (norm + 1e-7), 1)`` with ``norm`` the
``linalg.vector_norm`` over every dim but ``dim`` (ATen's forward, ``renorm_scale_factor``).
PyTorch's backward formula is exactly this composite's derivative (the gradient through ``norm``
included), so values, VJP, JVP and their derivatives are the same; the ``grad_fn`` is MulBackward0,
not RenormBackward0.
"""

from __future__ import annotations

from collections import namedtuple

import reference as T
from reference.autograd.dispatch import apply, apply_inplace
from reference.autograd.tensor import Tensor, default_dtype
from reference.backend import is_floating, is_inexact
from reference.ops import api as A
from reference.ops.rules.registry import RULES
from reference.scalar_types import scalar_type_name

__all__ = ["fill", "zero_", "ldexp", "frexp", "renorm"]

frexp_type = namedtuple("frexp", ("mantissa", "exponent"))


def fill(input, value):
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
            )
        return apply(RULES["fill_tensor_out"], (input, value), {})
    return apply(RULES["fill_out"], (input,), {"value": A.fill_scalar(input.dtype, value)})


def zero_(input):
    return A.zero_(input)


def sum_to_size(self, *size):
    size = A._shape_arg(size)
    ok = len(size) <= self.ndim and all(
        s == n or s == 1 for s, n in zip(reversed(size), reversed(self.shape))
    )
    if not ok:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(self.shape)}}}.")
    return A.sum_to(self, size)


def _rdiv(self, other):
    return A.rdiv(self, other)


def _rmod(self, other):
    return T.remainder(other, self)


def _ldexp_dtype(input, other):
    dt = A.result_type(input, other)
    return dt if is_inexact(dt) else default_dtype.value


def ldexp(input, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"ldexp(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    dt = _ldexp_dtype(input, other)
    A.check_broadcast(input, other)
    return apply(RULES["ldexp"], (input, other), {"int_exponent": other.dtype.kind in "iub"}, cast=dt)


def ldexp_(self, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"ldexp_(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    dt = _ldexp_dtype(self, other)
    if not is_inexact(self.dtype) or (dt.kind == "c" and self.dtype.kind != "c"):
        raise RuntimeError(f"ldexp can't be cast to the desired output type {scalar_type_name(self.dtype)}")
    cast = None if self.dtype == other.dtype == dt else dt
    return apply_inplace(
        RULES["ldexp"], self, (other,), {"int_exponent": other.dtype.kind in "iub"}, cast=cast
    )


def frexp(input):
    if not is_floating(input.dtype):
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = apply(RULES["frexp"], (input,), {})
    return frexp_type(m, e)


def _renorm_checks(input, p, maxnorm):
    if isinstance(p, complex):
        raise RuntimeError("renorm: p must be real-valued")
    if not float(p) > 0.0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if not float(maxnorm) >= 0.0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")


def renorm(input, p, dim, maxnorm):
    _renorm_checks(input, p, maxnorm)
    d = A._dim(dim, input.ndim)
    reduce = tuple(i for i in range(input.ndim) if i != d)
    norm = T.linalg.vector_norm(input, p, reduce, keepdim=True)
    factor = A.where(norm > maxnorm, maxnorm / (norm + 1e-7), A.ones_like(norm))
    return input * factor


def renorm_(self, p, dim, maxnorm):
    _renorm_checks(self, p, maxnorm)
    # computed from a clone, so that the write into self leaves what backward reads intact
    return A.copy_(self, renorm(A.clone(self), p, dim, maxnorm))


METHODS = {
    "sum_to_size": sum_to_size,
    "__rdiv__": _rdiv,
    "__rmod__": _rmod,
    "ldexp": ldexp,
    "ldexp_": ldexp_,
    "frexp": frexp,
    "renorm": renorm,
    "renorm_": renorm_,
}


# ``reference.ops.aten`` (``torch.ops.aten.<op>.default``): imported here so that the attribute
# exists on ``reference.ops`` once the function families are loaded
import reference.ops.aten  # noqa: E402, F401
