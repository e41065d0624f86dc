"""PyTorch's type promotion and broadcasting checks over Tensors and Python numbers (``result_type``,
wrapped numbers, TensorIterator's shape check): the arithmetic every public function of
:mod:`reference.ops` shares. It sits below :mod:`reference.ops.public` (which generates the
functions that use it) and :mod:`reference.ops.api` (which re-exports it), and imports only the
autograd core."""

from __future__ import annotations

import numbers

import numpy as np

from reference.autograd.tensor import (
    Tensor,
    _make,
    bool_,
    complex64,
    complex128,
    default_complex_dtype,
    default_dtype,
    float32,
    int64,
    is_floating_dtype,
)

# ---- dtypes and Python scalars (PyTorch's result_type) ---------------------------------------------


def _category(dt):
    """PyTorch's type categories: 0 bool, 1 integral, 2 floating (bfloat16 included), 3 complex."""
    return 3 if dt.kind == "c" else 2 if is_floating_dtype(dt) else 1 if dt.kind in "iu" else 0


def to_complex(dt):
    """PyTorch's toComplexType: float32 -> complex64, float64 -> complex128 (complex unchanged)."""
    if dt.kind == "c":
        return dt
    if dt == np.float64:
        return complex128
    if dt == np.float32:
        return complex64
    raise TypeError(
        f"{dt} has no complex counterpart in the reference (PyTorch's ComplexHalf has no NumPy dtype)"
    )


def to_real(dt):
    """PyTorch's toRealValueType: complex64 -> float32, complex128 -> float64 (others unchanged)."""
    return np.dtype(f"f{dt.itemsize // 2}") if dt.kind == "c" else dt


def _promote(a, b):
    """torch.promote_types: the higher category wins; within floats the wider, and float16 with
    bfloat16 is float32; within integers NumPy's rule (uint8 with int8: int16); complex with a
    float is the complex type of the wider value type (float64 with complex64: complex128)."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    ca, cb = _category(a), _category(b)
    if ca == 3 or cb == 3:
        if ca < 2 or cb < 2:  # complex with bool/int: the complex type
            return a if ca == 3 else b
        ra, rb = to_real(a), to_real(b)
        return to_complex(_promote(ra, rb))
    if ca != cb:
        return a if ca > cb else b
    if ca == 1:
        return np.promote_types(a, b)
    if a.itemsize == b.itemsize:  # float16 and bfloat16
        return float32
    return a if a.itemsize > b.itemsize else b


def _scalar_dtype(v):
    if isinstance(v, (bool, np.bool_)):
        return bool_
    if isinstance(v, numbers.Integral):
        return int64
    if isinstance(v, numbers.Real):
        return default_dtype.value
    if isinstance(v, numbers.Complex):
        return default_complex_dtype()
    raise TypeError(f"expected a Tensor or a Python number, got {type(v).__name__}")


def _combine(higher, lower):
    """PyTorch's combine_categories (ResultTypeState): a lower-priority operand of a higher
    category changes the result; a complex one keeps the value type of a floating ``higher``."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if _category(higher) == 3:
        return higher
    if _category(lower) == 3:
        return to_complex(higher) if _category(higher) == 2 else lower
    if _category(higher) == 2:
        return higher
    if higher == bool_ or _category(lower) == 2:
        return _promote(higher, lower)
    return higher


def result_type(*operands):
    dim = zero = wrapped = None
    for o in operands:
        if isinstance(o, Tensor):
            if o._wrapped:
                wrapped = _promote(wrapped, o.dtype)
            elif o._data.ndim == 0:
                zero = _promote(zero, o.dtype)
            else:
                dim = _promote(dim, o.dtype)
        elif o is not None:
            dt = _scalar_dtype(o)
            wrapped = _promote(wrapped, dt)
    return _combine(dim, _combine(zero, wrapped))


def _wrap(value, dtype):
    t = _make(np.asarray(value, dtype=dtype))
    t._wrapped = True
    return t


def _operand(x, dtype):
    return x if isinstance(x, Tensor) else _wrap(x, dtype)


def check_broadcast(a, b):
    sa, sb = a.shape, b.shape
    for k in range(1, min(len(sa), len(sb)) + 1):
        if sa[-k] != sb[-k] and sa[-k] != 1 and sb[-k] != 1:
            raise RuntimeError(
                f"The size of tensor a ({sa[-k]}) must match the size of tensor b ({sb[-k]}) at non-singleton "
                f"dimension {max(len(sa), len(sb)) - k}"
            )


def check_broadcast_operands(*operands):
    """PyTorch's TensorIterator shape check over its operands in order (numbers skipped): each
    tensor's shape against the broadcast of those before it ("tensor a" is that running shape)."""
    shape = None
    for x in operands:
        if not isinstance(x, Tensor):
            continue
        if shape is not None and tuple(x.shape) != shape:
            check_broadcast(_Shaped(shape), x)
            shape = tuple(np.broadcast_shapes(shape, tuple(x.shape)))
        elif shape is None:
            shape = tuple(x.shape)


class _Shaped:
    def __init__(self, shape):
        self.shape = shape


def check_sub(input, other):
    """PyTorch's refusal of a bool operand of subtraction (sub, sub_, rsub, ``-``)."""
    kinds = [(x.dtype if isinstance(x, Tensor) else _scalar_dtype(x)) == bool_ for x in (input, other)]
    if all(kinds):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead."
        )
    if any(kinds):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
