"""Gathers, scatters and index ops with PyTorch's names, signatures, checks and error messages:
gather, scatter (src, value, reduce=), scatter_add, scatter_reduce, index_select, index_add,
index_copy, index_fill, masked_select, masked_scatter, take, take_along_dim, index_put, nonzero,
argwhere; their in-place ``*_`` variants as Tensor methods.

In-place variants compute the op out of place and write the result with ``copy_`` (so the
result's ``grad_fn`` is ``CopyBackwards`` where PyTorch names the op's own node); values,
gradients and version counters are PyTorch's.
"""

from __future__ import annotations

import numpy as np

from reference.autograd.dispatch import apply, apply_inplace
from reference.autograd.levels import unbatched_error
from reference.autograd.tensor import Tensor, _make, bool_, int64
from reference.backend import namespace_of
from reference.ops import api as A
from reference.ops.rules.registry import RULES
from reference.scalar_types import scalar_type_name

__all__ = [
    "gather",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "index_select",
    "index_add",
    "index_copy",
    "index_fill",
    "masked_select",
    "masked_scatter",
    "take",
    "take_along_dim",
    "put",
    "index_put",
    "nonzero",
    "argwhere",
]

_INDEX_KINDS = "iu"


def _check_index_dtype(index, name):
    """gather/scatter take int64 or int32 indices (int32 is widened); like PyTorch's
    ``scatter_gather_dtype_check``, an empty index of any dtype selects nothing and is accepted."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.dtype not in (int64, np.dtype(np.int32)) and index._data.size != 0:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    return index if index.dtype == int64 else A.to(index, int64)


def _bounds(index, size, dim, exc=RuntimeError, prefix=""):
    """PyTorch's ``index {i} is out of bounds for dimension {d} with size {n}``."""
    data = index._data
    if data.size == 0:
        return
    bad = (data < 0) | (data >= size)
    if bad.any():
        i = int(data[bad].reshape(-1)[0])
        raise exc(f"{prefix}index {i} is out of bounds for dimension {dim} with size {size}")


def _physical_index(index):
    """Index values for bounds checks: under vmap the logical index is a placeholder; its physical
    value (every sample) is checked instead."""
    if index._batched:
        for value, _ in index._batched.values():
            return _physical_index(value) if isinstance(value, Tensor) else value
    return index


def _check_gather_shapes(name, self, dim, index, src=None):
    if index.numel() == 0:  # PyTorch returns before its shape checks on an empty index
        return
    nd = max(self.ndim, 1)
    if index.ndim != self.ndim and not (index.ndim <= 1 and self.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if src is not None and src.ndim != self.ndim and not (src.ndim <= 1 and self.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if self.ndim == 0 or index.numel() == 0:
        return
    for d in range(nd):
        if d != dim and index.shape[d] > self.shape[d]:
            what = "self" if src is None else "self"
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to be no larger than "
                f"{what} {list(self.shape)} apart from dimension {dim}"
            )
        if src is not None and src.ndim and index.shape[d] > src.shape[d]:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to be no larger than "
                f"src {list(src.shape)}"
            )


def _index_bounds(index, self, dim):
    idx = _physical_index(index)
    n = self.shape[dim] if self.ndim else 1
    _bounds(_make(idx._data if isinstance(idx, Tensor) else idx), n, dim)


def gather(input, dim, index, *, sparse_grad=False):
    d = A._dim(dim, input.ndim)
    index = _check_index_dtype(index, "gather")
    _check_gather_shapes("gather", input, d, index)
    _index_bounds(index, input, d)
    return apply(RULES["gather"], (input, index), {"dim": d})


def _src_operand(input, src):
    if isinstance(src, Tensor):
        if src.dtype != input.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        return src
    return None


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    d = A._dim(dim, input.ndim)
    if src is None and value is None:
        raise TypeError("scatter() missing 1 required positional argument: 'src' or 'value'")
    if src is not None and not isinstance(src, Tensor):
        value, src = src, None
    index = _check_index_dtype(index, "scatter")
    _check_gather_shapes("scatter", input, d, index, src)
    _index_bounds(index, input, d)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
        if input.requires_grad or (src is not None and src.requires_grad):
            raise RuntimeError(
                "the derivative for 'scatter' with reduce= is not implemented; use scatter_reduce instead"
            )
        if src is None:
            src = A.full(tuple(index.shape), value, dtype=input.dtype)
        return apply(
            RULES["scatter_reduce"],
            (input, index, src),
            {"dim": d, "reduce": "sum" if reduce == "add" else "prod", "include_self": True},
        )
    if src is not None:
        _src_operand(input, src)
        return apply(RULES["scatter"], (input, index, src), {"dim": d})
    if isinstance(value, Tensor):
        value = value.item()
    return apply(RULES["scatter_value"], (input, index), {"dim": d, "value": value})


def scatter_add(input, dim, index, src):
    d = A._dim(dim, input.ndim)
    index = _check_index_dtype(index, "scatter")
    _check_gather_shapes("scatter_add", input, d, index, src)
    _index_bounds(index, input, d)
    if src.dtype != input.dtype:
        raise RuntimeError("scatter_add(): Expected self.dtype to be equal to src.dtype")
    return apply(RULES["scatter_add_dim"], (input, index, src), {"dim": d})


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    return _scatter_reduce(input, dim, index, src, reduce, include_self, False)


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """PyTorch's in-place scatter_reduce kernel (ScatterReduceBackward0 saves self as it was)."""
    return _scatter_reduce(self, dim, index, src, reduce, include_self, True)


def _scatter_reduce(input, dim, index, src, reduce, include_self, inplace):
    d = A._dim(dim, input.ndim)
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    index = _check_index_dtype(index, "scatter")
    _check_gather_shapes("scatter_reduce", input, d, index, src)
    _index_bounds(index, input, d)
    if src.dtype != input.dtype:
        raise RuntimeError("scatter_reduce(): Expected self.dtype to be equal to src.dtype")
    params = {"dim": d, "reduce": reduce, "include_self": bool(include_self)}
    if inplace:
        return apply_inplace(RULES["scatter_reduce"], input, (index, src), params)
    return apply(RULES["scatter_reduce"], (input, index, src), params)


def _vector_index(index, name):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    if index.dtype.kind not in _INDEX_KINDS or index.dtype == np.dtype(bool):
        raise RuntimeError(f"{name}(): Expected dtype int32 or int64 for index")
    return index if index.dtype == int64 else A.to(index, int64)


def index_select(input, dim, index):
    d = A._dim(dim, input.ndim)
    index = _vector_index(index, "index_select")
    idx = _physical_index(index)
    data = idx._data if isinstance(idx, Tensor) else idx
    n = input.shape[d] if input.ndim else 1
    if data.size and ((data < 0) | (data >= n)).any():
        bad = int(data[(data < 0) | (data >= n)].reshape(-1)[0])
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={n}")
    return apply(RULES["index_select"], (input, index), {"dim": d})


def _check_source(name, input, d, index, source):
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"{name}(): self ({input.dtype}) and source ({source.dtype}) must have the same scalar type"
        )
    want = list(input.shape)
    if want:
        want[d] = index.numel()
    if source.ndim and list(source.shape) != want:
        raise RuntimeError(
            f"{name}(): Expected source to have shape {want}, but got {list(source.shape)}"
            if name != "index_add"
            else f"source tensor shape must match self tensor shape, excluding the specified dimension. "
            f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}"
        )


def index_add(input, dim, index, source, *, alpha=1):
    d = A._dim(dim, input.ndim)
    index = _vector_index(index, "index_add")
    _check_source("index_add", input, d, index, source)
    _index_bounds(index, input, d)
    params = {"dim": d}
    if alpha != 1:
        params["alpha"] = alpha
    return apply(RULES["index_add"], (input, index, source), params)


def index_copy(input, dim, index, source):
    d = A._dim(dim, input.ndim)
    index = _vector_index(index, "index_copy_")
    _check_source("index_copy_", input, d, index, source)
    idx = _physical_index(index)
    _bounds(
        _make(idx._data if isinstance(idx, Tensor) else idx),
        input.shape[d] if input.ndim else 1,
        d,
        IndexError,
        "index_copy_(): ",
    )
    return apply(RULES["index_copy"], (input, index, source), {"dim": d})


def index_fill(input, dim, index, value):
    d = A._dim(dim, input.ndim)
    index = _vector_index(index, "index_fill_")
    idx = _physical_index(index)
    _bounds(
        _make(idx._data if isinstance(idx, Tensor) else idx),
        input.shape[d] if input.ndim else 1,
        d,
        IndexError,
    )
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} "
                "dimension(s)."
            )
        return apply(RULES["index_fill_tensor"], (input, index, A.to(value, input.dtype)), {"dim": d})
    return apply(RULES["index_fill"], (input, index), {"dim": d, "value": value})


def masked_select(input, mask):
    if mask.dtype != bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    A.check_broadcast(input, mask)
    return apply(RULES["masked_select"], (input, mask), {})


def masked_scatter(input, mask, source):
    if mask.dtype != bool_:
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}"
        )
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"masked_scatter: expected self and source to have same dtypes but got{scalar_type_name(input.dtype)} and "
            f"{scalar_type_name(source.dtype)}"
        )
    A.check_broadcast(input, mask)
    count = int(_physical_index(mask)._data.sum()) if not mask._batched else 0
    if count > source.numel():
        raise RuntimeError(
            "masked_scatter: expected source to have at least as many elements as ones in mask"
        )
    return apply(RULES["masked_scatter"], (input, mask, source), {})


def take(input, index):
    if index.dtype != int64:
        raise RuntimeError(
            f"take(): Expected a long tensor for index, but got {scalar_type_name(index.dtype)}"
        )
    index = _flat_index(input, index)
    return apply(RULES["take_index"], (input, index), {})


def put(input, index, source, accumulate=False):
    if index.dtype != int64:
        raise RuntimeError(
            f"put_(): Expected a long tensor for index, but got {scalar_type_name(index.dtype)}"
        )
    if source.dtype != input.dtype:
        raise RuntimeError(
            f"put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{scalar_type_name(input.dtype)} and source.dtype = {scalar_type_name(source.dtype)}"
        )
    if index.numel() != source.numel():
        raise RuntimeError(
            f"put_(): Expected source and index to have the same number of elements, but got source.numel() = "
            f"{source.numel()}, index.numel() = {index.numel()}"
        )
    index = _flat_index(input, index)
    return apply(RULES["put_index"], (input, index, source), {"accumulate": bool(accumulate)})


def _flat_index(input, index):
    idx = _physical_index(index)
    data = idx._data if isinstance(idx, Tensor) else idx
    n = input.numel()
    bad = (data < -n) | (data >= n)
    if data.size and bad.any():
        i = int(data[bad].reshape(-1)[0])
        raise IndexError(f"out of range: tried to access index {i} on a tensor of {n} elements.")
    if data.size and (data < 0).any():
        if index._batched:
            raise RuntimeError("negative flat indices under vmap are not supported by the reference")
        index = _make(namespace_of(data).where(data < 0, data + n, data))
    return index


def take_along_dim(input, indices, dim=None):
    if indices.dtype != int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {scalar_type_name(indices.dtype)}"
        )
    if not indices._batched:  # PyTorch's CPU take_along_dim wraps every index modulo the size
        n = input.numel() if dim is None else (input.shape[A._dim(dim, input.ndim)] if input.ndim else 1)
        if n and indices.numel() and ((indices._data < 0) | (indices._data >= n)).any():
            indices = _make(namespace_of(indices._data).mod(indices._data, n))
    if dim is None:
        return gather(A.reshape(input, (-1,)), 0, A.reshape(indices, (-1,)))
    d = A._dim(dim, input.ndim)
    if input.ndim != indices.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, but got "
            f"{input.ndim} dimensions for input, and {indices.ndim} dimensions for indices"
        )
    shape_in = list(input.shape)
    shape_idx = list(indices.shape)
    shape_in[d] = 1
    shape_idx[d] = 1
    A.check_broadcast(_make(np.empty(shape_in, dtype=bool)), _make(np.empty(shape_idx, dtype=bool)))
    bshape = list(np.broadcast_shapes(tuple(shape_in), tuple(shape_idx)))
    idx_shape = list(bshape)
    idx_shape[d] = indices.shape[d]
    in_shape = list(bshape)
    in_shape[d] = input.shape[d]
    x = input if list(input.shape) == in_shape else A.expand(input, tuple(in_shape))
    i = indices if list(indices.shape) == idx_shape else A.expand(indices, tuple(idx_shape))
    return gather(x, d, i)


def index_put(input, indices, values, accumulate=False):
    return A._advanced_put(input, tuple(indices), values, accumulate, inplace=False)


def nonzero(input, *, as_tuple=False):
    unbatched_error(input, "nonzero()")
    xp = namespace_of(input._data)
    data = input._data if input.ndim else input._data.reshape(1)
    idx = xp.stack(xp.nonzero(data), axis=1).astype(np.int64)
    if input.ndim == 0:
        idx = idx[:, :0]
        if as_tuple:
            return (_make(xp.zeros(idx.shape[0], dtype=np.int64)),)
        return _make(xp.ascontiguousarray(idx))
    if as_tuple:
        return tuple(_make(xp.ascontiguousarray(idx[:, k])) for k in range(input.ndim))
    return _make(xp.ascontiguousarray(idx))


def argwhere(input):
    return nonzero(input)


# ---- in-place variants -------------------------------------------------------------------------------


def _inplace(fn, name):
    def op_(self, *args, **kwargs):
        out = fn(self, *args, **kwargs)
        if out.dtype != self.dtype:
            out = A.to(out, self.dtype)
        return A.copy_(self, out)

    op_.__name__ = name
    return op_


def _index_put_(self, indices, values, accumulate=False):
    return A._advanced_put(self, tuple(indices), values, accumulate, inplace=True)


METHODS = {
    "gather": gather,
    "scatter": scatter,
    "scatter_add": scatter_add,
    "scatter_reduce": scatter_reduce,
    "index_select": index_select,
    "index_add": index_add,
    "index_copy": index_copy,
    "index_fill": index_fill,
    "masked_select": masked_select,
    "masked_scatter": masked_scatter,
    "take": take,
    "take_along_dim": take_along_dim,
    "put": put,
    "put_": _inplace(put, "put_"),
    "index_put": index_put,
    "nonzero": nonzero,
    "argwhere": argwhere,
    "scatter_": _inplace(scatter, "scatter_"),
    "scatter_add_": _inplace(scatter_add, "scatter_add_"),
    "scatter_reduce_": scatter_reduce_,
    "index_add_": _inplace(index_add, "index_add_"),
    "index_copy_": _inplace(index_copy, "index_copy_"),
    "index_fill_": _inplace(index_fill, "index_fill_"),
    "masked_scatter_": _inplace(masked_scatter, "masked_scatter_"),
    "index_put_": _index_put_,
}
