"""``Tensor`` methods and operators: the functions of :mod:`reference.ops.api`, bound as PyTorch names them."""

from __future__ import annotations

from reference.autograd.tensor import Tensor
from reference.ops import api as A
from reference.ops.functions import export
from reference.ops.functions.complex import conj
from reference.ops.public import inplace_operator, reflected

# (the ops generated from the rules' EXPORTS and MULTI_EXPORTS, tanh, add and the like, and their operators
# x + y, 2 * x, x -= y, come with export()["methods"]: reference.ops.public)
_SAME_NAME = (
    "div",
    "neg",
    "pow",
    "clamp",
    "masked_fill",
    "to",
    "clone",
    "contiguous",
    "sum",
    "mean",
    "amax",
    "amin",
    "matmul",
    "softmax",
    "log_softmax",
    "view",
    "reshape",
    "permute",
    "transpose",
    "t",
    "expand",
    "expand_as",
    "unsqueeze",
    "squeeze",
    "select",
    "narrow",
    "diagonal",
    "as_strided",
    "unbind",
    "split",
    "chunk",
    "flatten",
    "div_",
    "pow_",
    "clamp_",
    "copy_",
    "fill_",
    "zero_",
    "abs_",
    "lt",
    "le",
    "gt",
    "ge",
    "eq",
    "ne",
    "logical_and",
    "logical_or",
    "logical_not",
    "reciprocal",
)


def _rsub(self, other):
    """``other - self``: a number goes to aten's rsub; a tensor is an ordinary subtraction."""
    return A.sub(other, self) if isinstance(other, Tensor) else A.rsub(self, other)


def _iterate(self):
    """``for row in x``: PyTorch iterates over ``x.unbind(0)`` (multi-output views)."""
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(A.unbind(self, 0))


def _matrix_transpose(self, name):
    if self.ndim < 2:
        raise RuntimeError(
            f"tensor.{name} is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor."
        )
    out = A.transpose(self, -2, -1)
    return _conj(out) if name == "mH" else out


def _conj(x):
    """The conjugate of a complex tensor (the adjoints mH and H); a real tensor itself."""

    return conj(x)


def _adjoint(self):
    if self.ndim != 2:
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor."
            + (" For batches of matrices, consider using tensor.mH" if self.ndim > 2 else "")
        )
    return _conj(A.transpose(self, 0, 1))


def operators():
    """The hand-written operators and methods bound by name (the generated ones, ``__add__``,
    ``__iadd__``, ..., come with export()["methods"])."""
    return {
        "__rsub__": _rsub,
        "__truediv__": A.div,
        "__rtruediv__": A.rdiv,
        "__pow__": A.pow,
        "__rpow__": reflected(A.pow),
        "__matmul__": A.matmul,
        "__rmatmul__": reflected(A.matmul),
        "__neg__": A.neg,
        "__abs__": A.abs,
        "__lt__": A.lt,
        "__le__": A.le,
        "__gt__": A.gt,
        "__ge__": A.ge,
        "__eq__": A.eq,
        "__ne__": A.ne,
        "__and__": A.logical_and,
        "__or__": A.logical_or,
        "__invert__": A.logical_not,
        "__getitem__": A._getitem,
        "__setitem__": A.setitem,
        "__itruediv__": inplace_operator(A.div_),
        "where": lambda self, condition, other: A.where(condition, self, other),
    }


def bind():
    for name in _SAME_NAME:
        setattr(Tensor, name, getattr(A, name))

    for name, fn in export().get("methods", {}).items():  # the family modules' methods
        setattr(Tensor, name, fn)
    for name, fn in operators().items():
        setattr(Tensor, name, fn)
    Tensor.__iter__ = _iterate
    Tensor.__hash__ = object.__hash__
    Tensor.T = property(lambda self: A.permute(self, tuple(reversed(range(self.ndim)))))
    Tensor.mT = property(lambda self: _matrix_transpose(self, "mT"))
    Tensor.mH = property(lambda self: _matrix_transpose(self, "mH"))  # the adjoint: conj of mT
    Tensor.H = property(_adjoint)
