"""``torch.masked``: masked reductions and normalizations on strided tensors (``T.masked.sum``...).

PyTorch implements every one of them on strided input as a composition of public differentiable
ops (torch/masked/_ops.py): the mask is broadcast to the input's shape, the masked-out elements
are replaced by the reduction's identity with ``torch.where`` (``_combine_input_and_mask``), and
the ordinary op reduces the result; mean, var and std divide masked sums by masked counts. The
reference composes its own differentiable ops the same way, so VJP, JVP and batch rules come
from the derivative table and masked-out inputs get the zero gradient ``where`` gives them.

The identities are PyTorch's (``_reduction_identity``): 0 for sum/cumsum/norm, 1 for
prod/cumprod, -inf (integers: the dtype's minimum) for amax/logsumexp/logaddexp/softmax and
log_softmax, +inf (integers: the maximum) for amin/softmin, +inf for ``norm`` with
``ord=-inf``, nan for median. What a fully masked-out slice gives follows from them, as in
PyTorch: sum 0, prod 1, amax -inf, mean/var/std nan (0/0), softmax nan, median nan.
Sparse layouts and MaskedTensor inputs are not part of the reference.
"""

from __future__ import annotations

import numpy as np

from reference.autograd.dispatch import apply
from reference.autograd.tensor import bool_, float32, int64
from reference.backend import is_floating, is_inexact
from reference.ops import api as A
from reference.ops.functions import reductions
from reference.ops.functions.pointwise import logaddexp as _logaddexp
from reference.ops.functions.reductions import cumprod as _cumprod
from reference.ops.functions.reductions import cumsum as _cumsum
from reference.ops.functions.reductions import logsumexp as _logsumexp
from reference.ops.functions.reductions import nanmedian, vector_norm
from reference.ops.functions.reductions import prod as _prod
from reference.ops.rules.registry import RULES
from reference.scalar_types import scalar_type_name

_builtin_sum = sum


def _tname(dt):
    """PyTorch's spelling of a dtype in messages (``torch.int64``)."""
    return f"torch.{dt.name}"


def _is_signed_or_uint8(dt):
    return dt.kind == "i" or dt == np.dtype(np.uint8)  # dtype metadata, not data


def _reduction_identity(op_name, input, *args):
    """PyTorch's ``_reduction_identity``: the value masked-out elements take, as a 0-d tensor
    of the input's dtype (``None`` where the op has none)."""
    dt = input.dtype
    if op_name in ("sum", "cumsum"):
        return A.tensor(0, dtype=dt)
    if op_name in ("prod", "cumprod"):
        return A.tensor(1, dtype=dt)
    if op_name in ("amax", "logaddexp", "logsumexp"):
        if is_floating(dt):
            return A.tensor(-np.inf, dtype=dt)
        if op_name == "logsumexp" and dt.kind == "c":
            return A.tensor(complex(-np.inf, 0), dtype=dt)
        if _is_signed_or_uint8(dt):
            return A.tensor(int(np.iinfo(dt).min), dtype=dt)
    elif op_name == "amin":
        if is_floating(dt):
            return A.tensor(np.inf, dtype=dt)
        if _is_signed_or_uint8(dt):
            return A.tensor(int(np.iinfo(dt).max), dtype=dt)
    elif op_name == "norm":
        ord = args[0] if args else 2
        if ord == float("-inf"):
            if not is_floating(dt):
                raise AssertionError(f"input must be floating point, got {_tname(dt)}")
            return A.tensor(np.inf, dtype=dt)
        return A.tensor(0, dtype=dt)
    elif op_name == "median":
        return A.tensor(np.nan, dtype=dt if is_floating(dt) else float32)
    elif op_name in ("mean", "var", "std"):
        return None
    raise NotImplementedError(f"identity of {op_name} on {_tname(dt)} input")


def _canonical_dim(dim, ndim):
    """PyTorch's ``_canonical_dim``: ``dim`` as a sorted tuple of non-negative dims."""
    if dim == ():
        dim = None
    if dim is None:
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims: list[int] = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})"
            )
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input, mask):
    """PyTorch's ``_input_mask``: the mask broadcast to the input's shape, as bool."""
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError(
                "_input_mask expected broadcastable mask (got mask dimensionality higher than of the input)"
            )
        mask = A.to(A.broadcast_to(mask, tuple(input.shape)), bool_)
    return A.to(mask, bool_)


def _combine(op_name, input, mask, *args):
    """PyTorch's ``_combine_input_and_mask``: ``where(mask, input, identity)``."""
    if mask is None:
        return input
    return A.where(_input_mask(input, mask), input, _reduction_identity(op_name, input, *args))


def _int_promoted(input, dtype):
    """sum/prod's output dtype: the input's, integers narrower than int64 (and bool) widened."""
    if dtype is not None:
        return dtype
    if input.dtype == bool_ or input.dtype.kind in "iu" and input.dtype.itemsize < 8:
        return int64
    return input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A001 - PyTorch's name
    dtype = _int_promoted(input, dtype)
    dim_ = _canonical_dim(dim, input.ndim)
    return A.sum(_combine("sum", input, mask), dim_, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _int_promoted(input, dtype)
    dim_ = _canonical_dim(dim, input.ndim)
    result = A.to(_combine("prod", input, mask), dtype)
    for d in reversed(dim_):  # one dim at a time, as PyTorch does
        result = _prod(result, d, bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    return A.to(_cumsum(_combine("sum", input, mask), dim_, dtype=dtype), dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    return A.to(_cumprod(_combine("prod", input, mask), dim_, dtype=dtype), dtype)


def _extreme(name, input, dim, keepdim, dtype, mask):
    dtype = input.dtype if dtype is None else dtype
    mask_input = _combine(name, input, mask)
    dim_ = _canonical_dim(dim, mask_input.ndim)
    fn = A.amax if name == "amax" else A.amin
    return A.to(fn(mask_input, dim_, bool(keepdim)), dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _extreme("amax", input, dim, keepdim, dtype, mask)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _extreme("amin", input, dim, keepdim, dtype, mask)


def _arg_extreme(name, input, dim, keepdim, dtype, mask):
    dtype = input.dtype if dtype is None else dtype
    mask_input = _combine("amax" if name == "argmax" else "amin", input, mask)
    return A.to(getattr(reductions, name)(mask_input, dim, bool(keepdim)), dtype)  # (cast as PyTorch does)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _arg_extreme("argmax", input, dim, keepdim, dtype, mask)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _arg_extreme("argmin", input, dim, keepdim, dtype, mask)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not is_inexact(dtype):
        raise ValueError(
            f"mean(): Could not infer output dtype. {source} dtype must be either "
            f"a floating point or complex dtype. Got: {_tname(dtype)}"
        )
    if mask is None:
        count = sum(A.ones(tuple(input.shape), dtype=int64), dim, keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype)
    else:
        inmask = _input_mask(input, mask)
        count = A.sum(inmask, dim, keepdim=bool(keepdim))
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    is_float = is_floating(input.dtype)
    if not is_float:
        input = A.to(input, float32)
    output = nanmedian(_combine("median", input, mask), dim_, keepdim).values
    if is_float:
        return output
    if not bool(A.ne(output, output).any().item()):
        return A.to(output, dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)
    return A.to(_logsumexp(_combine("logsumexp", input, mask), dim_, keepdim=keepdim), dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    dtype = input.dtype if dtype is None else dtype
    x = _combine("logaddexp", input, input_mask)
    y = _combine("logaddexp", other, other_mask)
    return A.to(_logaddexp(x, y), dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    mask_input = _combine("norm", input, mask, ord)
    dim_ = _canonical_dim(dim, input.ndim)
    return vector_norm(mask_input, ord, dim_, bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, *, correction_opt, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = input.dtype
        if not is_inexact(dtype):
            dtype = float32
    compute_dtype = dtype if is_inexact(dtype) else float32
    if mask is None:
        count = sum(A.ones(tuple(input.shape), dtype=int64), dim, keepdim=True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype)
        inmask = None
    else:
        inmask = _input_mask(input, mask)
        count = A.sum(inmask, dim, keepdim=True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype, mask=inmask)
    sample_mean = sample_total / count
    x = input - sample_mean
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute_dtype, mask=inmask)
    if not keepdim:
        count = A.reshape(count, tuple(total.shape))
    if correction != 0:
        real_dtype = np.dtype(compute_dtype.char.lower()) if compute_dtype.kind == "c" else compute_dtype
        count = A.to(count, real_dtype)
        count = count - correction
        count = A.maximum(count, A.zeros((), dtype=count.dtype))
    output = A.to(total / count, dtype)
    if take_sqrt:
        output = A.sqrt(output)
    return output


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(
        input,
        dim,
        unbiased,
        correction_opt=correction,
        keepdim=keepdim,
        dtype=dtype,
        mask=mask,
        take_sqrt=False,
    )


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(
        input,
        dim,
        unbiased,
        correction_opt=correction,
        keepdim=keepdim,
        dtype=dtype,
        mask=mask,
        take_sqrt=True,
    )


def _softmax_dtype(name, input, dim, dtype):
    """PyTorch's softmax kernels take floating types only; an integer ``dtype`` (masked softmax's
    default is the input's) raises the kernel's NotImplementedError."""
    if not is_inexact(dtype):
        kernel = "lastdim_kernel_impl" if dim == input.ndim - 1 or input.ndim == 0 else "kernel_impl"
        raise NotImplementedError(f"\"{name}_{kernel}\" not implemented for '{scalar_type_name(dtype)}'")


def softmax(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    mask_input = _combine("amax", input, mask)
    _softmax_dtype("softmax", mask_input, dim_, dtype)
    return A.softmax(mask_input, dim_, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    mask_input = _combine("amax", input, mask)
    _softmax_dtype("log_softmax", mask_input, dim_, dtype)
    return A.log_softmax(mask_input, dim_, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    mask_input = _combine("amin", input, mask)
    if mask_input.dtype == bool_:  # (the reference's neg of a bool tensor raises numpy's TypeError)
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
            "use the `~` or `logical_not()` operator instead."
        )
    neg = -mask_input  # F.softmin: (-input).softmax(dim, dtype=dtype)
    _softmax_dtype("softmax", neg, dim_, dtype)
    return A.softmax(neg, dim_, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    mask_input = _combine("sum", input, mask)
    nrm_ = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = A.maximum(nrm_, A.full((), eps, dtype=nrm_.dtype))
    return mask_input / denom


NAMESPACES = {
    "masked": {
        "sum": sum,
        "prod": prod,
        "cumsum": cumsum,
        "cumprod": cumprod,
        "amax": amax,
        "amin": amin,
        "argmax": argmax,
        "argmin": argmin,
        "mean": mean,
        "median": median,
        "logsumexp": logsumexp,
        "logaddexp": logaddexp,
        "norm": norm,
        "var": var,
        "std": std,
        "softmax": softmax,
        "log_softmax": log_softmax,
        "softmin": softmin,
        "normalize": normalize,
    }
}


# ---- torch._segment_reduce ----------------------------------------------------------------------------------

_SEGMENT_REDUCE = {
    "sum": "sum",
    "prod": "prod",
    "mean": "mean",
    "max": "max",
    "amax": "max",
    "min": "min",
    "amin": "min",
}


def _segment_reduce(
    data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None
):
    """``torch._segment_reduce``: reductions over consecutive segments along ``axis`` given by
    ``lengths`` or ``offsets`` (``offsets`` wins when both are given, as in aten); the checks and
    their order are aten's (SegmentReduce.cpp)."""

    axis = A._dim(axis, data.ndim)
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if reduce not in _SEGMENT_REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    index = offsets if offsets is not None else lengths
    what = "offsets" if offsets is not None else "lengths"
    if data.ndim < index.ndim:
        raise RuntimeError(
            f"Expected data.dim() >= {what}_value.dim() to be true, but got false.  "
            "(Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"
        )
    if axis != index.ndim - 1:
        raise RuntimeError(
            f"segment_reduce(): Expected axis to be the last dimension of {what} but got {axis}."
        )
    if offsets is None and not unsafe:
        if lengths.numel() == 0:
            raise RuntimeError(
                "min(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        if lengths.min().item() < 0:
            raise RuntimeError("lengths contains negative value!")
        if not bool((A.sum(lengths, -1) == data.shape[axis]).all().item()):
            raise RuntimeError(
                "segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) "
                "when !unsafe."
            )
    if not is_floating(data.dtype):
        raise NotImplementedError(
            f"\"_segment_reduce_cpu\" not implemented for '{scalar_type_name(data.dtype)}'"
        )
    if index.dtype.kind not in "iu":
        raise NotImplementedError(
            f"\"_segment_reduce_{what}_cpu_kernel1\" not implemented for '{scalar_type_name(index.dtype)}'"
        )
    values = index.tolist()
    if offsets is None:  # lengths -> offsets along the last dim

        def to_offsets(row):
            if row and isinstance(row[0], list):
                return tuple(to_offsets(r) for r in row)
            out, acc = [0], 0
            for n in row:
                acc += int(n)
                out.append(acc)
            return tuple(out)
    else:

        def to_offsets(row):
            if row and isinstance(row[0], list):
                return tuple(to_offsets(r) for r in row)
            return tuple(int(v) for v in row)

    params = {
        "reduce": _SEGMENT_REDUCE[reduce],
        "offsets": to_offsets(values),
        "axis": axis,
        "initial": None if initial is None else float(initial),
    }
    return apply(RULES["segment_reduce"], (data,), params)


__all__ = ["_segment_reduce"]
