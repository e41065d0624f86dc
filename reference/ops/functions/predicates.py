"""Comparison, logical and predicate functions PyTorch exports at top level (and as Tensor methods)
that the core (:mod:`reference.ops.api`: ``eq``/``lt``/..., ``logical_and``/``or``/``not``) lacks:
``isnan``, ``isinf``, ``isfinite``, ``isposinf``, ``isneginf``, ``isreal``, ``signbit``,
``logical_xor``, the comparison aliases ``greater``/``greater_equal``/``less``/``less_equal``/
``not_equal``, ``isclose``/``allclose``/``equal``, and the aliases ``negative``/``absolute``.

None of them is differentiable (bool results), so none is a table rule: each reads values and,
under vmap, runs on the physical values (``A._batched_plain``), as the core's logical ops do. The
dtype rules, formulas and error messages are PyTorch 2.13's (verified in
tests/autograd/test_torch_api_gaps.py).
"""

from __future__ import annotations

import numpy as np

from reference.autograd import layout as _layout
from reference.autograd.tensor import Tensor, default_dtype, result_tensor
from reference.backend import is_floating, namespace_of
from reference.ops import api as A
from reference.scalar_types import scalar_type_name


def _tensor_arg(fn, name, position, value):
    if not isinstance(value, Tensor):
        raise TypeError(
            f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}"
        )


def _predicate(name, kernel, complex_error=None):
    """A bool-valued elementwise function of one tensor: ``kernel(array) -> bool array``."""

    def op(input):
        _tensor_arg(name, "input", 1, input)
        if complex_error is not None and input.dtype.kind == "c":
            raise complex_error[0](complex_error[1])
        out = A._batched_plain(op, (input,))
        if out is not None:
            return out
        with np.errstate(all="ignore"):
            return result_tensor(_layout.ITERATOR, (input,), kernel(input._data))

    op.__name__ = name
    return op


def _floating_or_complex(a):
    return a.dtype.kind == "c" or is_floating(a.dtype)


def _none(a):
    return namespace_of(a).zeros(a.shape, dtype=bool)


def _isinf(a):
    if a.dtype.kind == "c":
        return namespace_of(a).isinf(a)  # either part infinite
    return (a == np.inf) | (a == -np.inf) if is_floating(a.dtype) else _none(a)


# integer and bool tensors hold no nan / inf: PyTorch returns all False (isfinite: all True)
isnan = _predicate("isnan", lambda a: a != a if _floating_or_complex(a) else _none(a))
isinf = _predicate("isinf", _isinf)
isfinite = _predicate("isfinite", lambda a: a - a == 0 if _floating_or_complex(a) else ~_none(a))
isposinf = _predicate(
    "isposinf",
    lambda a: (a == np.inf) if is_floating(a.dtype) else _none(a),
    (RuntimeError, "isposinf does not support complex inputs."),
)
isneginf = _predicate(
    "isneginf",
    lambda a: (a == -np.inf) if is_floating(a.dtype) else _none(a),
    (RuntimeError, "isneginf does not support complex inputs."),
)
isreal = _predicate("isreal", lambda a: a.imag == 0 if a.dtype.kind == "c" else ~_none(a))


def _signbit(a):
    if is_floating(a.dtype):  # the sign bit itself: -0.0 and a negative nan are negative
        wide = a.astype(np.float32) if a.dtype.itemsize < 4 else a
        return namespace_of(a).signbit(wide)
    if a.dtype.kind == "b":
        return _none(a)
    return a < 0


signbit = _predicate(
    "signbit", _signbit, (NotImplementedError, "signbit is not implemented for complex tensors.")
)


def logical_xor(input, other):
    """``torch.logical_xor``: the truth values of two tensors (numbers refused, as PyTorch's
    binding does), broadcast with PyTorch's shape check."""
    _tensor_arg("logical_xor", "input", 1, input)
    _tensor_arg("logical_xor", "other", 2, other)
    A.check_broadcast(input, other)
    out = A._batched_plain(logical_xor, (input, other))
    if out is not None:
        return out
    res = namespace_of(input._data).logical_xor(*A.one_device([input._data, other._data]))
    return result_tensor(_layout.ITERATOR, (input, other), res)


greater, greater_equal, less, less_equal, not_equal = A.gt, A.ge, A.lt, A.le, A.ne
negative, absolute = A.neg, A.abs


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """PyTorch's isclose (ATen TensorCompare.cpp): the same dtype required; ``self == other``, or
    with ``equal_nan`` both nan, or (floating) ``|self - other|`` finite and at most
    ``atol + |rtol * other|`` computed in the tensors' dtype (integers and bools in the default
    float dtype)."""
    _tensor_arg("isclose", "input", 1, input)
    _tensor_arg("isclose", "other", 2, other)
    if input.dtype != other.dtype:
        raise RuntimeError(f"{scalar_type_name(input.dtype)} did not match {scalar_type_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {_number(rtol)}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {_number(atol)}")
    A.check_broadcast(input, other)
    out = A._batched_plain(lambda a, b: isclose(a, b, rtol, atol, equal_nan), (input, other))
    if out is not None:
        return out
    a, b = input._data, other._data
    with np.errstate(all="ignore"):
        close = a == b
        if equal_nan and _floating_or_complex(a):
            close = close | ((a != a) & (b != b))
        if rtol == 0 and atol == 0:
            return result_tensor(_layout.ITERATOR, (input, other), close)
        if not _floating_or_complex(a):
            a, b = a.astype(default_dtype.value), b.astype(default_dtype.value)
        dt = a.dtype.type
        allowed = dt(atol) + np.abs(dt(rtol) * b) if a.dtype.kind != "c" else atol + np.abs(rtol * b)
        actual = np.abs(a - b)
        close = close | (np.isfinite(actual) & (actual <= allowed))
    return result_tensor(_layout.ITERATOR, (input, other), close)


def _number(x):
    return int(x) if float(x).is_integer() else x


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``isclose(...).all()`` as a Python bool."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input, other):
    """``torch.equal``: True when the shapes are the same and every element is equal (the values
    compared after promotion; nan is not equal to itself)."""
    _tensor_arg("equal", "input", 1, input)
    _tensor_arg("equal", "other", 2, other)
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(A.eq(input, other).all().item())


__all__ = [
    "isnan",
    "isinf",
    "isfinite",
    "isposinf",
    "isneginf",
    "isreal",
    "signbit",
    "logical_xor",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "isclose",
    "allclose",
    "equal",
    "negative",
    "absolute",
]
METHODS = {n: globals()[n] for n in __all__}
