"""Complex numbers with PyTorch's names, views and errors: ``view_as_real``/``view_as_complex``
(views of the same storage), ``x.real``/``x.imag`` (views: a select of ``view_as_real``, as in
PyTorch, whose grad_fn is SelectBackward0), ``conj``/``conj_physical``/``resolve_conj``,
``complex``, ``polar``, ``angle`` (``sgn`` is in the pointwise family). The rules are in
:mod:`reference.ops.rules.complex`; the convention for gradients is in docs/complex.md.

``conj()`` of a complex tensor is PyTorch's lazy conjugate view: the same storage, geometry,
``_base`` and version counter, with the conjugate bit set (``is_conj()``); ``imag`` of such a view
has the negative bit (``is_neg()``). A view with a bit is a
:class:`reference.autograd.tensor.LazyTensor`, whose values are resolved on each read and whose
in-place writes store the inverse into the shared storage; ``resolve_conj()`` /
``resolve_neg()`` materialise a copy (CloneBackward0), ``conj_physical()`` is never a view.
docs/complex.md describes the design.
"""

from __future__ import annotations

from reference.autograd import table
from reference.autograd.dispatch import apply, apply_inplace, apply_view
from reference.autograd.tensor import Tensor, complex64, complex128
from reference.backend import is_floating, is_inexact
from reference.ops import api as A
from reference.ops.api import R
from reference.ops.functions._low_precision import COMPLEX32_REASON, DtypeNotSupported
from reference.scalar_types import scalar_type_name


def is_complex(input):
    return input.dtype.kind == "c"


def view_as_real(input):
    if input.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if input._conj:
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so "
            "you can view it as real, use self.resolve_conj(); however, be warned that the resulting tensor "
            "will NOT alias the original."
        )
    return _view_as_real_physical(input)


def _view_as_real_physical(input):
    return apply_view(R.view_as_real, input, {"dtype": A.to_real(input.dtype)})


def view_as_complex(input):
    dt = input.dtype
    if not is_floating(dt) or dt.itemsize < 4:
        if dt.name != "float16":
            raise RuntimeError(
                "view_as_complex is only supported for half, float and double tensors, but got a tensor of "
                f"scalar type: {scalar_type_name(dt)}"
            )
        raise RuntimeError("view_as_complex: the reference has no complex32 (ComplexHalf) dtype")
    check_view_as_complex(input)
    return apply_view(R.view_as_complex, input, {"dtype": A.to_complex(dt)})


def check_view_as_complex(input):
    """PyTorch's geometry checks (also run by the batch rule on the physical tensor under vmap)."""
    if input.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    stride = input.stride()
    if stride[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    # a dim of size 1 is never stepped along: PyTorch leaves its stride unchecked (and halves it,
    # rounding down: view_as_complex_geometry), as under vmap with a batch of 1 moved to the front
    if any(s % 2 for s, n in zip(stride[:-1], input.shape[:-1]) if n != 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")


def real(input):
    """``torch.real``: the input itself for a real tensor, else a view (select of view_as_real; of a
    conjugate view, PyTorch's select of view_as_real(_conj(input)), the storage's real parts)."""
    if input.dtype.kind != "c":
        return input
    if input._conj:
        return A.select(_view_as_real_physical(conj(input)), -1, 0)
    return A.select(view_as_real(input), -1, 0)


def imag(input):
    """``torch.imag``: a view (select of view_as_real); of a conjugate view, PyTorch's
    select(_neg_view(view_as_real(_conj(input))), -1, 1): the negative bit set."""
    if input.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if input._conj:
        return A.select(_neg_view(_view_as_real_physical(conj(input))), -1, 1)
    return A.select(view_as_real(input), -1, 1)


def conj(input):
    """For a real tensor, the tensor itself (as PyTorch); for a complex one the conjugate view
    (ConjBackward0): the same storage with the conjugate bit flipped, so ``conj().conj()`` is a
    view without it."""
    if input.dtype.kind != "c":
        return input
    return apply_view(R.conj, input)


def _neg_view(input):
    """PyTorch's ``torch._neg_view``: the same storage with the negative bit flipped (NegViewBackward0)."""
    return apply_view(R._neg_view, input)


def conj_physical(input):
    if input.dtype.kind != "c":
        return input if is_inexact(input.dtype) else A.clone(input)
    return apply(R.conj_physical, (input,))


def conj_physical_(self):
    if self.dtype.kind != "c":
        return self
    return apply_inplace(R.conj_physical, self, (), {})


def resolve_conj(input):
    """The input itself without the conjugate bit, else a copy with the values resolved (a clone, as
    PyTorch's: CloneBackward0, the input's layout)."""
    return A.clone(input) if input._conj else input


def resolve_neg(input):
    return A.clone(input) if input._neg else input


def is_conj(input):
    return input._conj


def is_neg(input):
    return input._neg


def _check_parts(a, b):
    for x in (a, b):
        if not is_floating(x.dtype) or x.dtype.itemsize < 4:
            raise RuntimeError(
                f"Expected both inputs to be Half, Float or Double tensors but got {scalar_type_name(a.dtype)} and "
                f"{scalar_type_name(b.dtype)}"
            )
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {scalar_type_name(a.dtype)} but got scalar type {scalar_type_name(b.dtype)} for second "
            "argument"
        )


def complex(real, imag):  # noqa: A001 - PyTorch's name
    _check_parts(real, imag)
    check = (lambda: A.check_broadcast(real, imag)) if real.shape != imag.shape else None
    return apply(R.complex, (real, imag), {}, check=check)


def polar(abs, angle):  # noqa: A002 - PyTorch's names
    _check_parts(abs, angle)
    check = (lambda: A.check_broadcast(abs, angle)) if abs.shape != angle.shape else None
    return apply(R.polar, (abs, angle), {}, check=check)


def angle(input):
    """The argument of a complex number; for real inputs 0 or pi (nan stays nan), in the default
    float dtype for integers, as PyTorch's angle."""
    cast = None if is_inexact(input.dtype) else A.default_dtype.value
    return apply(R.angle, (input,), {}, cast=cast)


def cfloat(self, memory_format=None):
    return A.to(self, complex64, memory_format=memory_format)


def cdouble(self, memory_format=None):
    return A.to(self, complex128, memory_format=memory_format)


def chalf(self, memory_format=None):
    """``Tensor.chalf``: PyTorch's complex32 (ComplexHalf) has no storage in the reference."""

    raise DtypeNotSupported("chalf", "complex32", COMPLEX32_REASON)


def _real_property(self):
    return real(self)


def _imag_property(self):
    return imag(self)


def _set_real(self, value):
    real(self).copy_(value) if isinstance(value, Tensor) else real(self).fill_(value)


def _set_imag(self, value):
    imag(self).copy_(value) if isinstance(value, Tensor) else imag(self).fill_(value)


Tensor.real = property(_real_property, _set_real)  # PyTorch's x.real / x.imag are views
Tensor.imag = property(_imag_property, _set_imag)

__all__ = [
    "is_complex",
    "view_as_real",
    "view_as_complex",
    "real",
    "imag",
    "conj",
    "conj_physical",
    "resolve_conj",
    "resolve_neg",
    "is_conj",
    "is_neg",
    "complex",
    "polar",
    "angle",
]
METHODS = {
    "conj": conj,
    "conj_physical": conj_physical,
    "conj_physical_": conj_physical_,
    "resolve_conj": resolve_conj,
    "resolve_neg": resolve_neg,
    "is_conj": is_conj,
    "is_neg": is_neg,
    "angle": angle,
    "cfloat": cfloat,
    "cdouble": cdouble,
    "chalf": chalf,
}


table.register(conj_physical=conj_physical)  # (a conjugate view's gradient, reference.autograd.graph)
