"""The Tensor-level operations: PyTorch's names and signatures over the derivative table.

Each function normalises its arguments the way PyTorch does (dims, Python scalars as wrapped
numbers, type promotion, view bounds) and hands one rule of :mod:`reference.ops.rules` to
the dispatcher. ``Tensor`` methods and operators are these same functions (bound at the end).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from reference import conv as conv_arrays
from reference import errors as _errors
from reference.autograd import batching as _batching
from reference.autograd import layout as _layout
from reference.autograd import levels as _levels
from reference.autograd import table as _table
from reference.autograd.dispatch import _NO_PARAMS, apply, apply_inplace, apply_view, one_device
from reference.autograd.grad_mode import grad_state
from reference.autograd.graph import storage_indices
from reference.autograd.tensor import (
    CPU,
    Tensor,
    _infer_dtype,
    _make,
    bool_,
    default_device,
    default_dtype,
    device_of_array,
    int64,
    namespace_of_device,
    result_tensor,
    storage_of,
)
from reference.autograd.tensor import device as Device
from reference.backend import is_floating, is_inexact, namespace_of, to_device
from reference.ops import kernels as K
from reference.ops import public as _public
from reference.ops.promotion import (  # noqa: F401 (re-exported: A.result_type, A._wrap, ...)
    _category,
    _combine,
    _operand,
    _promote,
    _scalar_dtype,
    _Shaped,
    _wrap,
    check_broadcast,
    check_broadcast_operands,
    check_sub,
    result_type,
    to_complex,
    to_real,
)
from reference.ops.public import binary as _binary
from reference.ops.public import binary_inplace as _inplace_binary
from reference.scalar_types import convert_type_name, cpp_type_name, scalar_type_name

_builtin_sum = builtins.sum  # this module defines its own sum (the reduction)


def _is_device_array(data):
    return hasattr(data, "shape") and not isinstance(data, (np.ndarray, np.generic)) and hasattr(data, "get")


def _xp(t):
    """The array namespace of a tensor's data (NumPy, CuPy or the strict test namespace)."""
    return namespace_of(t._data)


# ---- dtypes and Python scalars: reference.ops.promotion (re-exported); binary ops: reference.ops.public


def _floating(x):
    """Ops like exp on an integer tensor compute in the default float dtype, as in PyTorch
    (complex tensors compute in their own dtype)."""
    dt = x._data.dtype
    return None if is_floating(dt) or dt.kind == "c" else default_dtype.value


def _unary(rule, x, params=None):
    return apply(rule, (x,), _NO_PARAMS if params is None else params, _floating(x))


def _dim(d, ndim):
    n = max(ndim, 1)
    if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
        raise TypeError(f"dim must be an int, got {d!r}")
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return int(d) % n


def _dims(dim, ndim):
    if dim is None:
        return None
    if ndim == 0:  # a 0-d tensor accepts dim 0 / -1: the reduction is over its one element
        _dim(dim if isinstance(dim, (int, np.integer)) else (dim[0] if len(dim) else 0), 0)
        return None
    if isinstance(dim, (int, np.integer)):
        dim = (dim,)
    dims = tuple(_dim(d, ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims} appears multiple times in the list of dims")
    return dims if dims else None


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer_size(shape, numel):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        rest = math.prod(s for s in shape if s != -1)
        if rest == 0 or numel % rest:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // rest
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _rule(name):
    return _table.RULES[name]  # (the core's table, filled by reference.ops.rules when it loads)


class _Rules:
    """Rules by attribute, resolved once the table module has been imported."""

    def __getattr__(self, name):
        value = _rule(name)
        setattr(self, name, value)
        return value


R = _Rules()

# ---- elementwise -----------------------------------------------------------------------------------
# add, sub, mul, maximum, minimum, their in-place twins and operators (x + y, y * x, x -= y) are
# generated from the MULTI_EXPORTS of reference.ops.rules.elementwise (reference.ops.public), like
# the single-input ones below. div and pow stay here: div's rounding_mode, its integer-to-float
# promotion and its fast path, pow's number-base and number-exponent rules are their own.


def div(input, other, *, rounding_mode=None):
    if rounding_mode is not None:
        return _div_mode(input, other, rounding_mode)
    if type(input) is Tensor:  # the common cases, where nothing promotes (this runs on every op)
        dt = input._data.dtype
        if (type(other) is Tensor and other._data.dtype == dt and is_inexact(dt)) or (
            type(other) in (float, int) and is_floating(dt)
        ):
            return _binary(R.div, input, other)
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        dt = result_type(input, other)
        if not is_inexact(dt):
            dt = default_dtype.value
        return apply(R.div, (_operand(input, dt), _operand(other, dt)), {}, cast=dt)
    dt = result_type(input, other)
    if not is_inexact(dt):
        dt = default_dtype.value
    return apply(R.div, (input, other), {}, cast=None if input.dtype == other.dtype == dt else dt)


def _check_rounding_mode(rounding_mode):
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
        )


def _div_mode(input, other, rounding_mode):
    """div(rounding_mode='trunc'|'floor'): DivBackward2; the result keeps the promoted dtype
    (integer division for integers); the gradient is zero."""
    _check_rounding_mode(rounding_mode)
    dt = result_type(input, other)
    if dt == bool_:
        raise NotImplementedError(f"\"div_{rounding_mode}_cpu\" not implemented for 'Bool'")
    if dt.kind in "iu":
        if (isinstance(other, Tensor) and builtins.bool((other._data == 0).any())) or (
            not isinstance(other, Tensor) and other == 0
        ):
            raise RuntimeError("ZeroDivisionError")
    params = {"rounding_mode": rounding_mode}
    a, b = (
        _operand(input, dt),
        _operand(other, dt),
    )  # a number divisor is wrapped (DivBackward2, as in PyTorch)
    check = (lambda: check_broadcast(a, b)) if a.shape != b.shape else None
    return apply(R.div_mode, (a, b), params, cast=None if a.dtype == b.dtype == dt else dt, check=check)


def neg(input):
    """Hand-written (its in-place twin neg_ is generated): PyTorch refuses a bool tensor first."""
    if input._data.dtype == bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
            "mask, use the `~` or `logical_not()` operator instead."
        )
    return apply(R.neg, (input,))


def pow(input, exponent):
    if all((x.dtype if isinstance(x, Tensor) else _scalar_dtype(x)) == bool_ for x in (input, exponent)) and (
        isinstance(exponent, Tensor) or not isinstance(input, Tensor)
    ):
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    if not isinstance(input, Tensor):  # number ** tensor
        dt = result_type(input, exponent)
        return apply(
            R.pow_scalar_base, (exponent,), {"self": input}, cast=None if dt == exponent.dtype else dt
        )
    if isinstance(exponent, Tensor):
        return _binary(R.pow_tensor, input, exponent)
    dt = result_type(input, exponent)
    return apply(R.pow, (input,), {"exponent": exponent}, cast=None if dt == input.dtype else dt)


# exp, log, sqrt, tanh, sigmoid, relu, abs, sign and their in-place twins are generated from the
# EXPORTS of reference.ops.rules.elementwise (reference.ops.public); ``A.tanh`` reads them through
# this module's __getattr__ (at the end). neg and abs_ stay here: they check more than their rule does.


def threshold_backward(grad_output, input, threshold):
    return apply(R.threshold_backward, (grad_output, input), {"threshold": threshold})


def _clamp_params(min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return {"min": min, "max": max}


def _clamp_tensors(input, min, max):
    """clamp with tensor bounds (ClampBackward0): the bounds are inputs (None: absent). A number
    beside a tensor bound matches neither of PyTorch's overloads: a TypeError, as there."""
    if any(v is not None and not isinstance(v, Tensor) for v in (min, max)):
        kinds = ", ".join(
            type(v).__name__ if not isinstance(v, Tensor) else "Tensor" for v in (input, min, max)
        )
        raise TypeError(
            f"clamp() received an invalid combination of arguments - got ({kinds}), but expected one of:\n"
            " * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
            " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n"
        )
    dt = result_type(input, min, max)
    bounds = [min, max]
    same = all(t is None or t.dtype == dt for t in (input, *bounds))

    def check():
        for b in bounds:
            if b is not None:
                check_broadcast(input, b)

    return (input, *bounds), (None if same else dt), check


def clamp(input, min=None, max=None):
    params = _clamp_params(min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        inputs, cast, check = _clamp_tensors(input, min, max)
        return apply(R.clamp_tensor, inputs, {}, cast=cast, check=check)
    dt = result_type(input, min, max)  # an integer tensor with a float bound computes in float
    return apply(R.clamp, (input,), params, cast=None if dt == input.dtype else dt)


def clamp_mask(input, min, max):
    """Where clamp passes gradient: min <= input <= max (bounds that are None do not apply); in
    ``input``'s layout, as PyTorch's clamp_backward mask."""
    ok = None
    if min is not None:
        ok = ge(input, min)
    if max is not None:
        ok = le(input, max) if ok is None else logical_and(ok, le(input, max))
    if ok is None:
        return result_tensor(_layout.ITERATOR, (input,), _xp(input).ones(input.shape, dtype=bool))
    return ok


def where(condition, input=None, other=None):
    if input is None and other is None:  # torch.where(condition) is nonzero(condition, as_tuple=True)
        # (Tensor.nonzero: reference.ops.functions.indexing, which defines it, is written with this
        # module's functions and sits above it; its functions are reached as the Tensor's methods)
        return condition.nonzero(as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() takes a condition alone, or a condition, input and other")
    if condition.dtype != bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype {condition.dtype}"
        )
    check_broadcast_operands(condition, input, other)
    dt = result_type(input, other)
    a, b = _operand(input, dt), _operand(other, dt)
    return apply(R.where, (condition, a, b), {}, cast=None if a.dtype == b.dtype == dt else dt)


def _check_masked_fill(input, mask, value):
    if mask.dtype != bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {cpp_type_name(mask.dtype)}"
        )
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.ndim} dimension(s)."
        )


def masked_fill(input, mask, value):
    _check_masked_fill(input, mask, value)
    check_broadcast(input, mask)
    if isinstance(value, Tensor):  # MaskedFillBackward1: the value gets a gradient
        v = value if value.dtype == input.dtype else to(value, input.dtype)
        return apply(R.masked_fill_tensor, (input, mask, v), {})
    return apply(R.masked_fill, (input, mask), {"value": value})


def masked_fill_(self, mask, value):
    _check_masked_fill(self, mask, value)
    if isinstance(value, Tensor):
        v = value if value.dtype == self.dtype else to(value, self.dtype)
        return apply_inplace(R.masked_fill_tensor, self, (mask, v), {})
    return apply_inplace(R.masked_fill, self, (mask,), {"value": value})


def rsub(input, other):
    """``number - tensor`` (PyTorch's rsub with a Scalar)."""
    if type(other) in (int, float) and input._data.dtype.kind in "fc" and not input._wrapped:
        # the common ``1 - x``: a number never promotes a floating tensor and is not a bool
        return apply(R.rsub, (input,), {"other": other})
    check_sub(other, input)
    dt = result_type(input, other)
    return apply(R.rsub, (input,), {"other": other}, cast=None if dt == input.dtype else dt)


def batch_norm_backward(g, input, weight, running_mean, running_var, training, eps, mask):
    """aten's native_batch_norm_backward as one recorded node; None where ``mask`` is False."""
    params = {"training": training, "eps": eps, "mask": tuple(bool(m) for m in mask)}
    outs = apply(R.batch_norm_backward, (g, input, weight, running_mean, running_var), params)
    return tuple(o if m else None for o, m in zip(outs, mask))


def reciprocal(input):
    return _unary(R.reciprocal, input)


def rdiv(input, other):
    """``number / tensor``: PyTorch computes ``tensor.reciprocal() * number`` (so the tensor is not saved)."""
    return reciprocal(input) * other  # (Tensor.__mul__: mul)


def to(input, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    """``x.to(dtype)``, ``x.to(other)`` (its dtype), ``x.to("cpu"[, dtype])``, ``x.to(device=, dtype=)``,
    ``copy=True`` (a new tensor even when nothing changes). Devices other than the CPU are refused."""
    args = list(args)
    if args and isinstance(args[0], Tensor):
        other = args.pop(0)
        dtype = other.dtype if dtype is None else dtype
    elif args and (isinstance(args[0], str) or hasattr(args[0], "type")) and not _is_dtype_like(args[0]):
        device = args.pop(0)
        if args and _is_dtype_like(args[0]):
            dtype = args.pop(0)
    elif args and _is_dtype_like(args[0]):
        dtype = args.pop(0)
    if args:  # positional non_blocking, copy
        args.pop(0)  # non_blocking (a no-op on the CPU)
        if args:
            copy = args.pop(0)
    dev = None if device is None else check_device(device)
    dtype = None if dtype is None else np.dtype(dtype)
    here = input.device
    if dev is not None and dev.type == here.type and dev.index in (None, here.index):
        dev = None  # "cuda" names the current device, on which a cuda:0 tensor already is
    if dev is not None:  # a copy to another device (ToCopyBackward0)
        return apply(R.to, (input,), {"dtype": dtype or input.dtype, "device": dev, "source": input.device})
    keep = getattr(memory_format, "name", memory_format) in (None, "preserve_format")
    if dtype is None or input.dtype == dtype:
        if copy or not (keep or input.is_contiguous(memory_format=memory_format)):
            return clone(input, memory_format=memory_format)
        return input
    out = apply(R.to, (input,), {"dtype": dtype})
    return out if keep else _layout.relayout_(out, _layout.format_strides(input, memory_format))


def _is_dtype_like(v):
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return True
    if isinstance(v, str):
        try:
            np.dtype(v)
        except TypeError:
            return False
        return v.split(":")[0] not in ("cpu", "cuda", "meta", "mps")
    return False


def clone(input, *, memory_format=None):
    """``memory_format``: None or preserve_format keep the input's layout (empty_like's rule),
    contiguous_format is row-major, channels_last(_3d) channels-last (reference.autograd.layout)."""
    out = apply(R.clone, (input,))
    if getattr(memory_format, "name", memory_format) in (None, "preserve_format"):
        return out
    return _layout.relayout_(out, _layout.format_strides(input, memory_format))


def contiguous(input, memory_format=None):
    """``input`` itself when it is contiguous in ``memory_format`` (default contiguous_format),
    else a clone in that format."""
    memory_format = "contiguous_format" if memory_format is None else memory_format
    if input.is_contiguous(memory_format=memory_format):
        return input
    if getattr(memory_format, "name", memory_format) == "preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return clone(input, memory_format=memory_format)


_ORDERED = {"less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge"}


def _compare(ufunc):
    ordered = _ORDERED.get(ufunc.__name__)

    def compare(input, other):
        if ordered is not None and (
            input._data.dtype.kind == "c"
            or (isinstance(other, Tensor) and other._data.dtype.kind == "c")
            or isinstance(other, complex)
        ):
            dt = result_type(input, other)
            raise NotImplementedError(f"\"{ordered}_cpu\" not implemented for '{scalar_type_name(dt)}'")
        check_broadcast_operands(input, other)
        if _levels.state.visible:  # under vmap: compare the physical values
            index = _batching.vmap_owner((input, other))
            if index is not None:
                return _batching.batch_plain(index, compare, (input, other))
        a = input._data
        if isinstance(other, Tensor):
            b = other._data
            if a.dtype != b.dtype:
                dt = result_type(input, other)
                a, b = a.astype(dt), b.astype(dt)
        else:
            b = namespace_of(a).asarray(other, dtype=result_type(input, other))
            a = a.astype(b.dtype, copy=False)
        a, b = one_device([a, b])
        out = result_tensor(
            _layout.ITERATOR, (input, other), getattr(namespace_of(a, b), ufunc.__name__)(a, b)
        )
        if _errors._ACTIVE:  # under an error tracker: values within their errors are undecided
            _errors._ACTIVE[-1].flag_comparison(out._data, a, b)
        return out

    compare.__name__ = ufunc.__name__
    return compare


lt, le, gt, ge, eq, ne = (
    _compare(f) for f in (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal)
)


def _batched_plain(fn, args):
    """Under vmap, ``fn`` (a function outside the table that reads values) on the physical values."""
    if _levels.state.visible:
        index = _batching.vmap_owner(args)
        if index is not None:
            return _batching.batch_plain(index, fn, args)
    return None


def logical_and(input, other):
    check_broadcast_operands(input, other)
    out = _batched_plain(logical_and, (input, other))
    if out is not None:
        return out
    res = _xp(input).logical_and(
        *one_device([input._data, other._data if isinstance(other, Tensor) else other])
    )
    return _flag_logical(result_tensor(_layout.ITERATOR, (input, other), res), input, other)


def logical_or(input, other):
    check_broadcast_operands(input, other)
    out = _batched_plain(logical_or, (input, other))
    if out is not None:
        return out
    res = _xp(input).logical_or(
        *one_device([input._data, other._data if isinstance(other, Tensor) else other])
    )
    return _flag_logical(result_tensor(_layout.ITERATOR, (input, other), res), input, other)


def logical_not(input):
    out = _batched_plain(logical_not, (input,))
    if out is not None:
        return out
    return _flag_logical(
        result_tensor(_layout.ITERATOR, (input,), _xp(input).logical_not(input._data)), input
    )


def _flag_logical(out, *operands):
    """Under an error tracker, ``out`` is undecided where a boolean operand is (reference.errors)."""
    if _errors._ACTIVE:
        _errors._ACTIVE[-1].flag_logical(out._data, *(x._data for x in operands if isinstance(x, Tensor)))
    return out


# ---- reductions ------------------------------------------------------------------------------------


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """``dtype``: the input is cast first (PyTorch accumulates in it); integer and bool inputs sum
    to int64."""
    if dtype is not None:
        input = to(input, dtype)
    elif input.dtype.kind in "biu" and input.dtype != int64:
        input = to(input, int64)
    dims = _dims(dim if dim != () and dim != [] else None, input.ndim)
    return apply(R.sum if dims is None else R.sum_dim, (input,), {"dim": dims, "keepdim": keepdim})


def mean(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        if not is_inexact(np.dtype(dtype)):
            raise RuntimeError(
                "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex "
                f"dtype. Got: {np.dtype(dtype)}"
            )
        input = to(input, dtype)
    if not is_inexact(input._data.dtype):
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
            f"dtype. Got: {input.dtype}"
        )
    dims = _dims(dim, input.ndim)
    return apply(R.mean if dims is None else R.mean_dim, (input,), {"dim": dims, "keepdim": keepdim})


def _extreme(rule, input, dim, keepdim):
    dims = _dims(dim if dim != () else None, input.ndim)
    if input.numel() == 0:  # a max over nothing has no value: torch's two errors
        if dims is None:
            raise RuntimeError(
                f"{rule.name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        given = [dim] if isinstance(dim, int) else list(dim)
        for d, nd in zip(given, dims):
            if input.shape[nd] == 0:
                raise IndexError(f"{rule.name}(): Expected reduction dim {d} to have non-zero size.")
    return apply(rule, (input,), {"dim": dims, "keepdim": keepdim})


def amax(input, dim=(), keepdim=False):
    return _extreme(R.amax, input, dim, keepdim)


def amin(input, dim=(), keepdim=False):
    return _extreme(R.amin, input, dim, keepdim)


def scale_grad_by_count(g, mask, dim):
    m = to(mask, g.dtype)
    return (g / sum(m, dim, keepdim=True)) * m


def sum_to(g, shape):
    """Sum ``g`` down to ``shape`` (undo broadcasting)."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1
    )
    if dims:
        g = sum(g, dims, keepdim=True)
    return reshape(g, shape) if g.shape != shape else g


# ---- linear algebra and normalisation ---------------------------------------------------------------


def _product(rule, a, b):
    if a.dtype != b.dtype:
        na, nb = (cpp_type_name(t.dtype) for t in (a, b))
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {na} != {nb}")
    return apply(rule, (a, b))


def _should_fold(a, b):
    """PyTorch's should_fold: fold the batch of the larger operand into an mm/mv when no copy is needed
    (or when the smaller operand requires grad)."""
    larger = a.ndim >= b.ndim
    t1 = a if larger else transpose(b, -1, -2)
    small = b if larger else a
    if not (t1.ndim >= 3 and small.ndim <= 2):
        return False
    if small.requires_grad:  # (PyTorch does not look at grad mode here)
        return True
    if a.ndim == 2:
        return False
    if t1.numel() == 0:
        return True
    shape, strides = t1.shape, t1.stride()
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(t1.ndim - 2))


def matmul(input, other):
    """PyTorch's matmul composite (dot / mv / mm / folded mm / expanded bmm, with its reshapes), so
    that the same tensors are saved -- copies where PyTorch copies -- and the same errors arise."""
    a, b = input, other
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D"
        )
    k1, k2 = a.shape[-1], (b.shape[-2] if b.ndim > 1 else b.shape[0])
    if k1 != k2:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, a.shape))} and "
            f"{'x'.join(map(str, b.shape))})"
        )
    if a.ndim == 1 and b.ndim == 1:
        return _product(R.dot, a, b)
    if a.ndim == 2 and b.ndim == 1:
        return _product(R.mv, a, b)
    if a.ndim == 1 and b.ndim == 2:
        return squeeze(_product(R.mm, unsqueeze(a, 0), b), 0)
    if a.ndim == 2 and b.ndim == 2:
        return _product(R.mm, a, b)
    if _should_fold(a, b):
        flip = b.ndim > a.ndim
        t1 = transpose(b, -1, -2) if flip else a
        t2 = (t(a) if a.ndim == 2 else a) if flip else b
        out_shape = t1.shape[:-1]
        folded = reshape(t1, (math.prod(out_shape), t1.shape[-1]))
        if t2.ndim == 2:
            out = _unsafe_view(_product(R.mm, folded, t2), out_shape + (t2.shape[1],))
            return contiguous(transpose(out, -1, -2)) if flip else out
        return _unsafe_view(_product(R.mv, folded, t2), out_shape)
    if a.ndim == 3 and b.ndim == 3 and a.shape[0] != b.shape[0]:  # a unit batch that requires grad folds
        if a.shape[0] == 1 and a.requires_grad:
            return matmul(squeeze(a, 0), b)
        if b.shape[0] == 1 and b.requires_grad:
            return matmul(a, squeeze(b, 0))
    n = a.shape[-2] if a.ndim > 1 else 1
    p = b.shape[-1] if b.ndim > 1 else 1
    batch_a, batch_b = (a.shape[:-2] if a.ndim > 1 else ()), (b.shape[:-2] if b.ndim > 1 else ())
    check_broadcast(_make(np.empty(batch_a, dtype=bool)), _make(np.empty(batch_b, dtype=bool)))
    batch = tuple(np.broadcast_shapes(batch_a, batch_b))
    count = math.prod(batch)
    a3 = reshape(expand(a, batch + (n, k1)), (count, n, k1))
    b_exp = expand(b, batch + ((k2,) if b.ndim == 1 else (k2, p)))
    b3 = unsqueeze(reshape(b_exp, (count, k2)), 2) if b.ndim == 1 else reshape(b_exp, (count, k2, p))
    out = _product(R.bmm, a3, b3)
    shape = batch + ((n,) if a.ndim > 1 else ()) + ((p,) if b.ndim > 1 else ())
    return _unsafe_view(squeeze(out, -1) if b.ndim == 1 else out, shape)


def _unsafe_view(input, shape):
    """aten's _unsafe_view: a reshape whose result is not a view (UnsafeViewBackward0)."""
    return apply(R.reshape_copy, (input,), {"shape": tuple(shape)})


def _softmax_dim(ndim, dim):
    if dim is None:
        dim = 0 if ndim in (0, 1, 3) else 1
    d = _dim(dim, ndim)
    return None if ndim == 0 else d  # a 0-d tensor is its own (one-element) softmax axis


def _softmax_family(rule, name, input, dim, dtype):
    """softmax / log_softmax: PyTorch's CPU kernels exist for floating dtypes only (an integer or bool
    input raises the kernel's NotImplementedError; an empty one runs no kernel and keeps its dtype)."""
    if dtype is not None:
        input = to(input, dtype)
    d = _softmax_dim(input.ndim, dim)
    if not is_floating(input._data.dtype) and input._data.dtype.kind != "c":
        if input.numel() == 0:
            return _make(input._data.copy())
        kernel = f"{name}_lastdim_kernel_impl" if d is None or d == input.ndim - 1 else f"{name}_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(input.dtype)}'")
    return _unary(rule, input, {"dim": d})


def softmax(input, dim=None, dtype=None):
    return _softmax_family(R.softmax, "softmax", input, dim, dtype)


def log_softmax(input, dim=None, dtype=None):
    return _softmax_family(R.log_softmax, "log_softmax", input, dim, dtype)


# ---- views -----------------------------------------------------------------------------------------


def view(input, *shape):
    return apply_view(R.view, input, {"size": _infer_size(_shape_arg(shape), input.numel())})


def reshape(input, *shape):
    size = _infer_size(_shape_arg(shape), input.numel())
    if K.compute_stride(input.shape, input.stride(), size) is not None:
        return apply_view(R.view, input, {"size": size})
    return _unsafe_view(clone(input), size)  # PyTorch's _reshape_copy path: not a view of input


def permute(input, *dims):
    """PyTorch's checks in its order: the number of dims (its message names sparse_coo for every
    layout), then per dim the range (IndexError) and repetition."""
    dims = tuple(_shape_arg(dims))
    if len(dims) != input.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to "
            f"len(dims) = {len(dims)}"
        )
    seen = set()
    wrapped = []
    for d in dims:
        d = _dim(d, input.ndim)
        if d in seen:
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        seen.add(d)
        wrapped.append(d)
    return apply_view(R.permute, input, {"dims": tuple(wrapped)})


def transpose(input, dim0, dim1):
    if input.ndim == 0:
        return apply_view(R.transpose, input, {"dims": ()})
    d0, d1 = _dim(dim0, input.ndim), _dim(dim1, input.ndim)
    dims = list(range(input.ndim))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return apply_view(R.transpose, input, {"dims": tuple(dims)})


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return apply_view(R.t, input, {"dims": tuple(reversed(range(input.ndim)))})


def alias(input):
    return apply_view(R.alias, input, {})


def expand(input, *sizes):
    sizes = _shape_arg(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError(
            f"expand(torch.DoubleTensor{{{list(input.shape)}}}, size={list(sizes)}): the number of sizes "
            f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the tensor "
            f"({input.ndim})"
        )
    lead = len(sizes) - input.ndim
    out = list(sizes)
    for i, n in enumerate(input.shape):
        want = sizes[lead + i]
        if want == -1:
            out[lead + i] = n
        elif n != want and n != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({n}) at non-singleton "
                f"dimension {lead + i}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(input.shape)}"
            )
    return apply_view(R.expand, input, {"size": tuple(out)})


def expand_as(input, other):
    return expand(input, other.shape)


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def unsqueeze(input, dim):
    n = input.ndim + 1
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return apply_view(R.unsqueeze, input, {"dim": dim % n})


def squeeze(input, dim=None):
    if dim is None:
        rule, dims = R.squeeze, tuple(i for i, n in enumerate(input.shape) if n == 1)
    else:
        rule = R.squeeze_dim if isinstance(dim, (int, np.integer)) else R.squeeze_dims
        dims = tuple(d for d in (_dims(dim, input.ndim) or ()) if input.ndim and input.shape[d] == 1)
    return apply_view(rule, input, {"dims": dims})


def select(input, dim, index):
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}"
        )
    return apply_view(R.select, input, {"dim": d, "index": int(index) % n})


def _slice(input, dim, start, stop, step):
    n = input.shape[dim]
    step = 1 if step is None else int(step)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start = 0 if start is None else int(start)
    stop = n if stop is None else int(stop)
    start = min(max(start + n if start < 0 else start, 0), n)
    stop = min(max(stop + n if stop < 0 else stop, 0), n)
    stop = max(stop, start)
    return apply_view(R.slice, input, {"dim": dim, "start": start, "end": stop, "step": step})


def narrow(input, dim, start, length):
    if isinstance(start, Tensor):  # a 0-d integer tensor, as PyTorch accepts
        if start.ndim != 0 or start.dtype.kind not in "iu":
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = int(start.item())
    d = _dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    start = start % n if start < 0 else start
    if length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return apply_view(R.slice, input, {"dim": d, "start": start, "end": start + length, "step": 1})


def diagonal(input, offset=0, dim1=0, dim2=1):
    d1, d2 = _dim(dim1, input.ndim), _dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply_view(R.diagonal, input, {"offset_diag": offset, "dim1": d1, "dim2": d2})


def as_strided(input, size, stride, storage_offset=None):
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    offset = input._offset if storage_offset is None else storage_offset
    params = {
        "size": size,
        "stride_": stride,
        "storage_offset": offset,
        "in_size": input.shape,
        "in_stride": input.stride(),
        "in_offset": input._offset,
        "storage_size": storage_of(input).size,
    }
    return apply_view(R.as_strided, input, params)


def as_strided_backward(g, p):
    """Gradient of as_strided: scatter into storage, read back through the input's geometry."""
    out_idx = storage_indices(p["size"], p["stride_"], p["storage_offset"])
    in_idx = storage_indices(p["in_size"], p["in_stride"], p["in_offset"])
    storage_grad = scatter_add(g, out_idx, (p["storage_size"],))
    grad = take(storage_grad, in_idx)
    counts = np.bincount(in_idx.ravel(), minlength=p["storage_size"])[in_idx]  # host-side index counts
    if (counts > 1).any():  # the input itself overlaps in memory: share the gradient out
        grad = grad / _make(_xp(g).asarray(counts.astype(g.dtype)))
    return grad


def unbind(input, dim=0):
    return apply_view(R.unbind, input, {"dim": _dim(dim, input.ndim)})


def _split_sizes(n, split_size):
    if split_size <= 0 and n > 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    sizes = [split_size] * (n // split_size) if split_size else []
    if split_size and n % split_size:
        sizes.append(n % split_size)
    return sizes or [0]


def split(input, split_size_or_sections, dim=0):
    d = _dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(split_size_or_sections, int):
        return apply_view(R.split, input, {"sizes": tuple(_split_sizes(n, split_size_or_sections)), "dim": d})
    sizes = tuple(int(s) for s in split_size_or_sections)
    if _builtin_sum(sizes) != n:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at dimension {d}), "
            f"but got split_sizes={list(sizes)}"
        )
    return apply_view(R.split_with_sizes, input, {"sizes": sizes, "dim": d})


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[_dim(dim, input.ndim)]
    return split(input, max(1, -(-n // chunks)) if n else 1, dim)


def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, (1,))
    s, e = _dim(start_dim, input.ndim), _dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input.shape[:s] + (math.prod(input.shape[s : e + 1]),) + input.shape[e + 1 :]
    return reshape(input, shape)


def _full_slice(item, n):
    """PyTorch skips a slice that keeps a whole dim (start 0, stop >= length, step 1) when it may."""
    return (item.start in (None, 0)) and (item.stop is None or item.stop >= n) and item.step in (None, 1)


def _is_advanced(item):
    return isinstance(item, (Tensor, list, np.ndarray)) and not isinstance(item, bool)


def _as_index_tensor(item):
    if isinstance(item, Tensor):
        return item
    arr = np.asarray(item)
    if is_floating(arr.dtype):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return _make(arr.astype(np.int64) if arr.dtype.kind in "iu" else arr)


def getitem(input, index, skip_full_slices=None):
    """``x[index]``: ints, slices, None and Ellipsis are a chain of select/slice/unsqueeze views;
    integer and boolean tensors (and lists) then index the view in one ``index`` op
    (IndexBackward0), as PyTorch's ``applySlicing`` + ``index`` do.

    As in PyTorch, whole-dim slices are skipped inside a tuple index (``x[:, 0]`` is one select)
    but not for a lone slice (``x[:]`` is a SliceBackward0 view); an index that applies no view
    returns an alias.
    """
    items = index if isinstance(index, tuple) else (index,)
    if any(_is_advanced(i) for i in items):
        view, tensors = _split_advanced(input, items)
        if all(e is None for e in tensors):  # only 0-d integer tensors: selects, as in PyTorch
            return view
        if _batched_indices(tensors):
            return _index_by_select(view, tensors)
        return apply(R.index, (view,), {"indices": _index_arrays(view, tensors)})
    if skip_full_slices is None:
        skip_full_slices = isinstance(index, tuple)
    for item in items:
        if (
            item is not None
            and item is not Ellipsis
            and not isinstance(item, (int, np.integer, slice))
            or isinstance(item, bool)
        ):
            raise TypeError(
                f"index {item!r}: the reference indexes with ints, slices, None, Ellipsis and tensors only"
            )
    if _builtin_sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = _builtin_sum(1 for i in items if i is not None and i is not Ellipsis)
    if consumed > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim}")
    out, dim = input, 0
    for item in items:
        if item is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif item is Ellipsis:
            dim += input.ndim - consumed
        elif isinstance(item, slice):
            if not (skip_full_slices and _full_slice(item, out.shape[dim])):
                out = _slice(out, dim, item.start, item.stop, item.step)
            elif item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero")
            dim += 1
        else:
            out = select(out, dim, int(item))
    return out


def _split_advanced(input, items):
    """Apply the basic part of an index (views) and return ``(view, tensors)``: one entry per dim
    of the view, None or an index Tensor (bool masks as their coordinates)."""
    items = [_as_index_tensor(i) if _is_advanced(i) else i for i in items]
    if _builtin_sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    for i in items:
        if isinstance(i, Tensor) and is_floating(i.dtype):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if not (i is None or i is Ellipsis or isinstance(i, (Tensor, int, np.integer, slice))) or isinstance(
            i, bool
        ):
            raise TypeError(
                f"index {i!r}: the reference indexes with ints, slices, None, Ellipsis and tensors only"
            )
    width = lambda i: (  # noqa: E731 - dims an item consumes
        0 if i is None or i is Ellipsis else (i.ndim if isinstance(i, Tensor) and i.dtype == bool_ else 1)
    )
    consumed = _builtin_sum(width(i) for i in items)
    if consumed > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim}")
    out, dim = input, 0
    slots = []  # (dim in out, Tensor) for the advanced entries
    for item in items:
        if item is None:
            out = unsqueeze(out, dim)
            for k, (d, t) in enumerate(slots):
                if d >= dim:
                    slots[k] = (d + 1, t)
            dim += 1
        elif item is Ellipsis:
            dim += input.ndim - consumed
        elif isinstance(item, slice):
            if not _full_slice(item, out.shape[dim]):
                out = _slice(out, dim, item.start, item.stop, item.step)
            elif item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero")
            dim += 1
        elif isinstance(item, Tensor) and item.dtype == bool_ and item.ndim == 0:
            out = unsqueeze(out, dim)
            slots.append((dim, _make(np.arange(1 if bool(item._data) else 0, dtype=np.int64))))
            dim += 1
        elif isinstance(item, Tensor) and item.dtype in (bool_, np.dtype(np.uint8)):
            mask = item if item.dtype == bool_ else to(item, bool_)
            for k in range(mask.ndim):
                if mask.shape[k] != out.shape[dim + k]:
                    raise IndexError(
                        f"The shape of the mask {list(mask.shape)} at index {k} does not match the shape of the "
                        f"indexed tensor {list(out.shape)} at index {dim + k}"
                    )
            _levels.unbatched_error(mask, "indexing with a boolean mask")
            coords = mask._data.nonzero()
            for k in range(mask.ndim):
                slots.append((dim + k, _make(coords[k].astype(np.int64))))
            dim += mask.ndim
        elif isinstance(item, Tensor) and item.ndim == 0 and not item._batched:
            out = select(out, dim, int(item._data))  # PyTorch reads a 0-d integer tensor as an int
        elif isinstance(item, Tensor):
            slots.append((dim, item if item.dtype == int64 else to(item, int64)))
            dim += 1
        else:
            out = select(out, dim, int(item))
    tensors = [None] * out.ndim
    for k, (d, t) in enumerate(slots):
        tensors[d] = (k, t)
    return out, tensors


def _batched_indices(tensors):
    """Some index tensor is batched by an active vmap (its values differ per sample)."""
    found = [e[1] for e in tensors if e is not None]
    return bool(_levels.state.visible) and _batching.vmap_owner(found) is not None


def _check_broadcast_indices(tensors):
    shapes = [e[1].shape for e in tensors if e is not None]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(str(list(s)) for s in shapes)
        ) from None


def _physical_values(t):
    while t._batched:
        t = next(iter(t._batched.values()))[0]
    return t._data


def _flat_positions(view, tensors):
    """Under vmap with batched index tensors: the indexed dims (in order), the broadcast index
    shape, and one flat index into those dims (Tensor ops, so batched like any other value)."""
    bshape = _check_broadcast_indices(tensors)
    pos = [d for d, e in enumerate(tensors) if e is not None]
    flat, stride = None, 1
    for d in reversed(pos):
        k, t = tensors[d]
        n = view.shape[d]
        data = _physical_values(t)
        bad = (data < -n) | (data >= n)
        if data.size and bad.any():
            i = int(data[bad].reshape(-1)[0])
            raise IndexError(f"index {i} is out of bounds for dimension {k} with size {n}")
        t = where(lt(t, 0), t + n, t)  # (the operators: add and mul, reference.ops.public)
        term = t * stride if stride != 1 else t
        flat = term if flat is None else flat + term
        stride *= n
    if flat.shape != bshape:
        flat = expand(flat, bshape)
    rest = [d for d in range(view.ndim) if d not in pos]
    flat_view = reshape(permute(view, pos + rest), (stride,) + tuple(view.shape[d] for d in rest))
    adjacent = pos == list(range(pos[0], pos[-1] + 1))
    return pos, rest, bshape, flat, flat_view, adjacent


def _index_by_select(view, tensors):
    """``view[tensors]`` as index_select on the indexed dims flattened into one (the path taken
    under vmap when an index tensor is batched: the index values differ per sample)."""
    pos, rest, bshape, flat, flat_view, adjacent = _flat_positions(view, tensors)
    out = flat_view.index_select(0, reshape(flat, (-1,)))  # (a method: see where)
    out = reshape(out, bshape + tuple(view.shape[d] for d in rest))
    if adjacent and pos[0] > 0:  # the broadcast dims go where the indexed dims were
        k, first = len(bshape), pos[0]
        order = list(range(k, k + first)) + list(range(k)) + list(range(k + first, out.ndim))
        out = permute(out, order)
    return out


def _put_by_copy(view, tensors, value):
    """``view[tensors] = value`` out of place, for batched index tensors (see _index_by_select)."""
    pos, rest, bshape, flat, flat_view, adjacent = _flat_positions(view, tensors)
    k = len(bshape)
    rest_shape = tuple(view.shape[d] for d in rest)
    if adjacent and pos[0] > 0:
        first = pos[0]
        region = rest_shape[:first] + bshape + rest_shape[first:]
        value = expand(value, region) if value.shape != region else value
        value = permute(
            value, list(range(first, first + k)) + list(range(first)) + list(range(first + k, len(region)))
        )
    else:
        value = expand(value, bshape + rest_shape) if value.shape != bshape + rest_shape else value
    src = reshape(value, (-1,) + rest_shape)
    new = flat_view.index_copy(0, reshape(flat, (-1,)), src)  # (a method: see where)
    new = reshape(new, tuple(view.shape[d] for d in pos) + rest_shape)
    order = pos + rest
    return permute(new, [order.index(d) for d in range(view.ndim)])


def _index_arrays(view, tensors):
    """The index tensors as the ``indices`` of the index/index_put rules: in range, non-negative
    int64 arrays; broadcast-compatible (PyTorch's errors otherwise)."""

    shapes = [t.shape for e in tensors if e is not None for t in (e[1],)]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(str(list(s)) for s in shapes)
        ) from None
    out = []
    for d, e in enumerate(tensors):
        if e is None:
            out.append(None)
            continue
        k, t = e
        _levels.unbatched_error(t, "indexing with an index tensor batched by vmap")
        data = t._data
        n = view.shape[d]
        bad = (data < -n) | (data >= n)
        if data.size and bad.any():
            i = int(data[bad].reshape(-1)[0])
            raise IndexError(f"index {i} is out of bounds for dimension {k} with size {n}")
        out.append(namespace_of(data).where(data < 0, data + n, data).astype(np.int64))
    return tuple(out)


def index(input, indices):
    """aten's ``index``: ``indices`` from :func:`_split_advanced` (or one array per dim, None for
    a dim not indexed, as the rules carry them)."""
    if any(isinstance(e, tuple) for e in indices):
        indices = _index_arrays(input, indices)
    return apply(R.index, (input,), {"indices": tuple(indices)})


def index_put(input, indices, values, accumulate=False):
    """aten's ``index_put`` with ``indices`` as the rules carry them (see :func:`index`)."""
    if any(isinstance(e, tuple) for e in indices):
        indices = _index_arrays(input, indices)
    values = values if isinstance(values, Tensor) else _make(_xp(input).asarray(values, dtype=input.dtype))
    return apply(R.index_put, (input, values), {"indices": tuple(indices), "accumulate": bool(accumulate)})


def _advanced_put(input, indices, values, accumulate, inplace):
    """``index_put(_)(input, indices, values, accumulate)`` with PyTorch's ``indices``: a tuple of
    index tensors (None entries allowed), one per leading dim."""
    items = [(slice(None) if i is None else (_as_index_tensor(i))) for i in indices]
    if not isinstance(values, Tensor):
        values = _make(_xp(input).asarray(values, dtype=input.dtype))
    if values.dtype != input.dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got {_type_name(input.dtype)} for the "
            f"destination and {_type_name(values.dtype)} for the source."
        )
    view, tensors = _split_advanced(input, items)
    arrays = _index_arrays(view, tensors) if any(e is not None for e in tensors) else None
    if arrays is None:  # no index tensor: the whole tensor is written
        arrays = (np.arange(view.shape[0], dtype=np.int64),) + (None,) * (view.ndim - 1) if view.ndim else ()
    if not inplace:
        return index_put(view, arrays, values, accumulate)
    out = index_put(view, arrays, values, accumulate)
    return copy_(input, out)


def _type_name(dtype):
    return scalar_type_name(dtype)


def _getitem(input, index):
    out = getitem(input, index)
    return alias(input) if out is input else out


def setitem(input, index, value):
    """``x[index] = value``: copy_ (or fill_) into the view ``x[index]``, or into ``x`` itself
    when the index selects all of it (``x[...]``, ``x[:]``), exactly as PyTorch does. With index
    tensors: ``index_put`` on the basic-indexed view, written back with ``copy_``."""
    items = index if isinstance(index, tuple) else (index,)
    if any(_is_advanced(i) for i in items):
        view, tensors = _split_advanced(input, items)
        if isinstance(value, Tensor):
            value = to(value, view.dtype)
        else:
            value = _make(_xp(view).asarray(value, dtype=view.dtype))
        if all(e is None for e in tensors):  # only 0-d integer tensors: selects, as in PyTorch
            copy_(view, value) if value.ndim else fill_(view, value)
            return
        if _batched_indices(tensors):
            copy_(view, _put_by_copy(view, tensors, value))
            return
        arrays = _index_arrays(view, tensors)
        region = K.region_shape(view.shape, arrays)
        if value.ndim > len(region) or any(
            a != b and b != 1 for a, b in zip(reversed(region), reversed(value.shape))
        ):
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to indexing "
                f"result of shape {list(region)}"
            )
        copy_(view, index_put(view, arrays, value, False))
        return
    target = getitem(input, index, skip_full_slices=True)
    # PyTorch's copy_to: a number becomes a 0-d tensor first; a source of the target's sizes is
    # copy_'d (CopyBackwards: so a number into a 0-d target), a 0-d CPU source (a number, too) is
    # fill_'d (FillBackward3), anything else copy_'d with broadcasting
    number = not isinstance(value, Tensor)
    if number:
        value = _make(_xp(target).asarray(value, dtype=target.dtype))
    if (
        tuple(target.shape) != tuple(value.shape)
        and value.ndim == 0
        and (number or value.device.type == "cpu")
    ):
        fill_(target, value)
    else:
        copy_(target, value)


# ---- joining ---------------------------------------------------------------------------------------


def _check_cat(tensors, dim, name):
    if len(tensors) == 0:
        raise RuntimeError(f"torch.{name}(): expected a non-empty list of Tensors")
    first = tensors[0]
    for i, t in enumerate(tensors[1:], 1):
        if t.ndim != first.ndim or any(
            a != b for k, (a, b) in enumerate(zip(t.shape, first.shape)) if name == "stack" or k != dim
        ):
            what = (
                "stack expects each tensor to be equal size"
                if name == "stack"
                else "Sizes of tensors must match except in dimension"
            )
            raise RuntimeError(
                f"{what}, but got {list(first.shape)} at entry 0 and {list(t.shape)} at entry {i}"
            )


def _legacy_empty(t):
    """A 1-d tensor of size 0, which cat skips beside tensors of other ranks (as PyTorch does)."""
    return t.ndim == 1 and t.shape[0] == 0


def cat(tensors, dim=0):
    tensors = tuple(tensors)
    if any(not _legacy_empty(t) for t in tensors) and any(_legacy_empty(t) for t in tensors):
        kept = tuple(t for t in tensors if not _legacy_empty(t))
        if kept and any(t.ndim != 1 for t in kept):
            tensors = kept
    d = _dim(dim, tensors[0].ndim if tensors else 1)
    _check_cat(tensors, d, "cat")
    dt = result_type(*tensors)
    return apply(R.cat, tensors, {"dim": d}, cast=None if all(t.dtype == dt for t in tensors) else dt)


def stack(tensors, dim=0):
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    d = dim % (tensors[0].ndim + 1)
    _check_cat(tensors, d, "stack")
    dt = result_type(*tensors)
    return apply(R.stack, tensors, {"dim": d}, cast=None if all(t.dtype == dt for t in tensors) else dt)


# ---- the linear index pair (used by the gradients of views, CopySlices and pooling) ----------------


def take(input, index):
    return apply(R.take, (input,), {"index": index})


def scatter_add(g, index, shape):
    return apply(R.scatter_add, (g,), {"index": index, "shape": tuple(shape)})


def put(input, index, src):
    return apply(R.put, (input, _operand(src, input.dtype)), {"index": index})


def check_device(device):
    """``device=``: a device (a string such as ``"cuda:0"``, a torch-like device object, an int
    for a CUDA index) or None for the default device (``T.set_default_device``); the device."""
    if device is None:
        return default_device.value
    if isinstance(device, Device):
        dev = device
    elif isinstance(device, int) and not isinstance(device, bool):
        dev = Device("cuda", device)
    elif isinstance(device, str) or hasattr(device, "type"):
        dev = (
            Device(device) if isinstance(device, str) else Device(device.type, getattr(device, "index", None))
        )
    else:
        raise TypeError(f"device must be a string, a device or an int, got {type(device).__name__}")
    if dev.type == "cpu":
        if dev.index not in (None, 0, -1):
            raise RuntimeError(f"device {dev}: there is one CPU device")
        return CPU
    return dev


def _on_device(arr, device):
    """``arr`` (a fresh host array) on ``device`` (None: the default device)."""
    dev = check_device(device)
    if dev is CPU:
        return arr
    return to_device(arr, dev.type, dev.index)


def _leaf(arr, requires_grad, device=None):
    t = _make(_on_device(arr, device))
    return t.requires_grad_() if requires_grad else t


def _np_dtype(dtype):
    return None if dtype is None else np.dtype(dtype)


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf holding a copy of ``data``; the dtype is inferred as PyTorch does (floats: the
    default dtype, ints: int64, bools: bool; NumPy arrays keep theirs)."""
    if isinstance(data, Tensor):
        device = data.device if device is None else device  # a tensor's data stays on its device
        data = data._data
    elif device is None and _is_device_array(data):  # (likewise a device array)
        device = device_of_array(data)
    elif isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in data):
        data = [d._data if isinstance(d, Tensor) else d for d in data]
    dev = check_device(device)
    dtype = _np_dtype(dtype)
    out = Tensor(data, dtype=dtype if dtype is not None else _infer_dtype(data))
    if out.device != dev:
        out = _make(_on_device(out._data, dev))
    return out.requires_grad_() if requires_grad else out


def as_tensor(data, dtype=None, device=None):
    check_device(device)
    if isinstance(data, Tensor) and (dtype is None or data.dtype == dtype):
        return data
    return tensor(data, dtype)


def from_numpy(array):
    """Shares memory with ``array`` when it is C-contiguous (a copy otherwise)."""
    return _make(np.ascontiguousarray(array))


def _size_arg(name, size):
    shape = _shape_arg(size)
    for n in shape:
        if n < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(shape)}")
    return shape


def _new(fn, shape, dtype, requires_grad, device=None, name="zeros"):
    dev = check_device(device)
    xp = np if dev is CPU else namespace_of_device(dev)  # made on the device, as torch.zeros does
    arr = getattr(xp, fn.__name__)(_size_arg(name, shape), dtype=_np_dtype(dtype) or default_dtype.value)
    return _leaf(arr, requires_grad, dev)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _new(np.zeros, size, dtype, requires_grad, device, "zeros")


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _new(np.ones, size, dtype, requires_grad, device, "ones")


def empty(
    *size,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
    memory_format=None,
):
    """Like ``torch.empty``, but filled with zeros (NumPy's uninitialised memory would make runs differ)."""
    return _new(np.zeros, size, dtype, requires_grad, device, "empty")


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    dtype = _np_dtype(dtype) or _scalar_dtype(fill_value)
    return _leaf(np.full(_size_arg("full", (size,)), fill_value, dtype=dtype), requires_grad, device)


def _like(fn, input, *args):
    """Under vmap, ``*_like`` of a batched tensor is batched (one per sample), as in torch.func."""
    if input._batched is not None and _levels.state.visible:
        return _batched_plain(lambda x: fn(x, *args), (input,))
    return None


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    out = _like(lambda x, d: zeros_like(x, dtype=d), input, dtype)
    if out is not None:
        return out
    out = _new(np.zeros, input.shape, dtype or input.dtype, requires_grad, device or input.device)
    return _layout.relayout_(out, _layout.format_strides(input, memory_format))


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    out = _like(lambda x, d: ones_like(x, dtype=d), input, dtype)
    if out is not None:
        return out
    out = _new(np.ones, input.shape, dtype or input.dtype, requires_grad, device or input.device)
    return _layout.relayout_(out, _layout.format_strides(input, memory_format))


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Like ``torch.empty_like``, but filled with zeros."""
    return zeros_like(
        input, dtype=dtype, device=device, requires_grad=requires_grad, memory_format=memory_format
    )


def full_like(
    input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
):
    out = _like(lambda x, v, d: full_like(x, v, dtype=d), input, fill_value, dtype)
    if out is not None:
        return out
    out = full(
        input.shape,
        fill_value,
        dtype=dtype or input.dtype,
        device=device or input.device,
        requires_grad=requires_grad,
    )
    return _layout.relayout_(out, _layout.format_strides(input, memory_format))


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = values
    if dtype is None:
        dtype = default_dtype.value if any(isinstance(v, float) for v in values) else int64
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0 and end != start:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = max(0, math.ceil((end - start) / step))
    dtype = np.dtype(dtype)
    arr = (start + np.arange(n, dtype=np.float64 if is_floating(dtype) else np.int64) * step).astype(dtype)
    return _leaf(arr, requires_grad, device)


def _linspace_values(start, end, steps, dtype):
    """PyTorch's linspace: the first half counts up from ``start``, the second down from ``end``."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    ct = dtype if is_floating(dtype) else np.dtype(np.float64)
    if steps == 0:
        return np.zeros(0, dtype=ct)
    if steps == 1:
        return np.full(1, start, dtype=ct)
    step = (ct.type(end) - ct.type(start)) / ct.type(steps - 1)
    i = np.arange(steps)
    half = steps // 2
    lo = ct.type(start) + step * i.astype(ct)
    hi = ct.type(end) - step * (steps - 1 - i).astype(ct)
    return np.where(i < half, lo, hi).astype(ct)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    dtype = _np_dtype(dtype) or default_dtype.value
    return _leaf(_linspace_values(start, end, steps, dtype).astype(dtype), requires_grad, device)


def logspace(
    start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
):
    check_device(device)
    dtype = _np_dtype(dtype) or default_dtype.value
    exps = _linspace_values(start, end, steps, np.dtype(np.float64))
    return _leaf(np.power(float(base), exps).astype(dtype), requires_grad, device)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    check_device(device)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return _leaf(np.eye(n, m, dtype=_np_dtype(dtype) or default_dtype.value), requires_grad, device)


# ---- in-place variants -----------------------------------------------------------------------------


def div_(self, other, *, rounding_mode=None):
    if rounding_mode is not None:
        _check_rounding_mode(rounding_mode)
        _public.inplace_result_check(self, result_type(self, other))
        return _inplace_binary(R.div_mode, self, other, {"rounding_mode": rounding_mode})
    if not is_inexact(self.dtype):
        raise RuntimeError("result type Float can't be cast to the desired output type Long")
    return _inplace_binary(R.div, self, other)


def pow_(self, exponent):
    if isinstance(exponent, Tensor):
        return _inplace_binary(R.pow_tensor, self, exponent)
    return apply_inplace(R.pow, self, (), {"exponent": exponent})


def clamp_(self, min=None, max=None):
    params = _clamp_params(min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        inputs, cast, _ = _clamp_tensors(self, min, max)
        return apply_inplace(R.clamp_tensor, self, inputs[1:], {}, cast=cast)
    return apply_inplace(R.clamp, self, (), params)


def copy_(self, src):
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    if src.device != self.device:  # copy_ is PyTorch's one cross-device op: the source moves first
        src = to(src, self.device)
    return apply_inplace(R.copy, self, (src,), {})


def fill_(self, value):
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
            )
        return apply_inplace(R.fill_tensor, self, (value,), {})
    return apply_inplace(R.fill, self, (), {"value": fill_scalar(self.dtype, value)})


def fill_scalar(dtype, value):
    """A Python number as c10::Scalar::to<T>() converts it to a tensor of `dtype` (fill, fill_)."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, complex) and dtype.kind not in "cb":
        if value.imag != 0:  # a non-zero imaginary part does not convert to a real type
            raise RuntimeError(
                f"value cannot be converted to type {convert_type_name(dtype)} without overflow"
            )
        value = value.real
    if dtype.kind in "iu" and isinstance(value, float):
        value = int(value)  # c10::Scalar to an integral dtype truncates
    return value


def zero_(self):
    return apply_inplace(R.zero, self, (), {})


def abs_(self):
    """Hand-written: PyTorch's abs_ refuses a complex tensor before its rule runs (a real result
    cannot be written into a complex tensor)."""
    if self.is_complex():
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return apply_inplace(R.abs, self, (), {})


# ---- convolution (array work in reference.conv) ----------------------------------------------------


def conv_forward(x, w, b, conv):
    return conv_arrays.convolution(x, w, b, **conv)


def conv_geometry(conv):
    """aten's positional convolution parameters from the ``conv`` dict the rules carry."""
    return tuple(conv[k] for k in ("stride", "padding", "dilation", "transposed", "output_padding", "groups"))


def conv_backward_arrays(g, x, w, bias_sizes, conv, output_mask):
    gi, gw, gb = conv_arrays.convolution_backward(
        g,
        x,
        w,
        bias_sizes,
        *conv_geometry(conv),
        list(output_mask),
    )
    channels = w.shape[1] * conv["groups"] if conv["transposed"] else w.shape[0]
    return (
        gi if gi is not None else namespace_of(x).zeros_like(x),
        gw if gw is not None else namespace_of(w).zeros_like(w),
        gb if gb is not None else namespace_of(g).zeros((channels,), dtype=g.dtype),
    )


def convolution(input, weight, bias=None, *, stride, padding, dilation, transposed, output_padding, groups):
    conv = {
        "stride": stride,
        "padding": padding,
        "dilation": dilation,
        "transposed": transposed,
        "output_padding": output_padding,
        "groups": groups,
    }
    _check_zero_spatial(input, weight, conv)
    dt = result_type(input, weight, bias)
    same = input.dtype == weight.dtype == dt and (bias is None or bias.dtype == dt)
    return apply(R.convolution, (input, weight, bias), {"conv": conv}, cast=None if same else dt)


def _check_zero_spatial(input, weight, conv):
    """PyTorch rejects a zero spatial size unless the batch or the channels are zero (once the
    channel checks pass), plain or transposed; its message shows a 1-d input as aten's 2-d view."""
    shape = tuple(input.shape)
    if len(shape) < 3 or 0 not in shape[2:] or 0 in shape[:2]:
        return
    try:
        conv_arrays.plan(shape, tuple(weight.shape), *conv_geometry(conv))
    except conv_arrays.ConvConfigError as e:
        if e.parameter != "input.shape":
            raise
        shown = list(shape[:2]) + [1] + list(shape[2:]) if len(shape) == 3 else list(shape)
        raise RuntimeError(
            f"Only zero batch or zero channel inputs are supported, but got input shape: {shown}"
        ) from None


def convolution_backward(g, input, weight, bias_shape, conv, needs):
    mask = (bool(needs[0]), bool(needs[1]), bias_shape is not None and bool(needs[2]))
    bias_sizes = list(bias_shape) if bias_shape is not None else None
    outs = apply(
        R.convolution_backward,
        (g, input, weight),
        {"bias_sizes": bias_sizes, "conv": conv, "output_mask": mask},
    )
    return tuple(o if m else None for o, m in zip(outs, mask))


def convolution_double_backward(gg, grad_output, input, weight, conv, needs):
    """VJP of convolution_backward. Not recording: reference.conv's array-level double backward.
    Recording (create_graph, third order): the same three terms as differentiable convolutions.
    A ``None`` cotangent (an output of convolution_backward nobody used) contributes nothing, and
    an output built only from absent cotangents is ``None``, as aten leaves it undefined.

    Under an error tracker (reference.errors) the composition runs too: its convolutions are table
    primitives whose sums of products the tracker bounds (any summation order), whereas the
    array-level path's results would be arrays it never saw, hence exact (bound 0): the first GPU
    run found cuBLAS's order 4.4e-16 away from NumPy's there (issue 35)."""
    ggI, ggW, ggb = gg
    raw = not grad_state.enabled and not _levels.state.visible and _errors.active() is None
    if raw:  # (under a transform, or a tracker: the composition below)
        data = lambda t: None if t is None else t._data
        out = conv_arrays.convolution_double_backward(
            data(ggI),
            data(ggW),
            data(ggb),
            grad_output._data,
            weight._data,
            input._data,
            *conv_geometry(conv),
            [bool(n) for n in needs],
        )
        return tuple(_make(o) if o is not None and n else None for o, n in zip(out, needs))
    g_out = g_in = g_w = None
    if needs[0]:
        terms = []
        if ggI is not None:
            terms.append(convolution(ggI, weight, None, **conv))
        if ggW is not None:
            terms.append(convolution(input, ggW, None, **conv))
        if ggb is not None:
            terms.append(reshape(ggb, (1, -1) + (1,) * (input.ndim - 2)))
        for term in terms:
            g_out = term if g_out is None else g_out + term
    if needs[1] and ggW is not None:
        g_in = convolution_backward(grad_output, input, ggW, None, conv, (True, False, False))[0]
    if needs[2] and ggI is not None:
        g_w = convolution_backward(grad_output, ggI, weight, None, conv, (False, True, False))[1]
    return g_out, g_in, g_w


# What the autograd core calls (reference.autograd.table: the core imports nothing from this layer).
_errors.register_tensor(tensor)  # (reference.errors.bound_of makes its inputs with it)
_table.register(
    alias=alias,
    as_strided=as_strided,
    check_broadcast=check_broadcast,
    clone=clone,
    copy_=copy_,
    expand=expand,
    ones_like=ones_like,
    permute=permute,
    put=put,
    reshape=reshape,
    scatter_add=scatter_add,
    select=select,
    squeeze=squeeze,
    stack=stack,
    sum=sum,
    sum_to=sum_to,
    take=take,
    to=to,
    unsqueeze=unsqueeze,
    view=view,
    zero_=zero_,
    zeros=zeros,
    zeros_like=zeros_like,
)


def __getattr__(name):
    """The functions generated from ``reference.ops.rules.elementwise.EXPORTS`` (``tanh``, ``exp``,
    ``relu_``, ...: :mod:`reference.ops.public`), read as this module's own."""
    return _public.family_function("elementwise", name)


def __dir__():
    return sorted(set(globals()) | set(_public.FUNCTIONS.get("elementwise", ())))
