"""Indexing ops written over the reference's indexing primitives: ``index_reduce`` (prod, mean,
amax, amin; and ``Tensor.index_reduce_``), ``as_strided_scatter``, ``_unsafe_masked_index`` and
``_unsafe_masked_index_put_accumulate``.

PyTorch has its own nodes for these (IndexReduceBackward0, AsStridedScatterBackward0,
UnsafeMaskedIndexBackward0, UnsafeMaskedIndexPutAccumulateBackward0); here each is a composite of
primitives whose derivatives are PyTorch's formulas for the same values, so the values, VJPs, JVPs
and batch rules agree and only the ``grad_fn`` names differ:

* ``index_reduce(self, dim, index, source, reduce, include_self)`` is ``scatter_reduce`` with
  ``index`` broadcast along ``dim`` over ``source``'s shape (FunctionsManual's
  ``index_reduce_backward`` is ``scatter_reduce_backward``'s formula on that index: ties of
  amax/amin share the gradient equally, prod divides out the non-zero product);
* ``as_strided_scatter`` is ATen's own decomposition: a clone of ``self`` whose ``as_strided``
  view is overwritten by ``src``;
* ``_unsafe_masked_index`` is ATen's CPU implementation: the indices clamped to
  ``[-size, size - 1]``, ``self[indices]``, ``masked_fill(~mask, fill)``;
  ``_unsafe_masked_index_put_accumulate`` likewise ``index_put(clamped indices,
  values.masked_fill(~mask, 0), accumulate=True)``.
"""

from __future__ import annotations

import warnings

import reference as T
from reference.ops import api as A
from reference.scalar_types import scalar_type_name

__all__ = [
    "index_reduce",
    "as_strided_scatter",
    "_unsafe_masked_index",
    "_unsafe_masked_index_put_accumulate",
]

_REDUCES = ("prod", "mean", "amax", "amin")


def _index_reduce_checks(self, dim, index, source, reduce, what):
    if reduce not in _REDUCES:
        raise RuntimeError(
            f"{what}(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}."
        )
    d = A._dim(dim, max(self.ndim, 1))
    if index.ndim > 1:
        raise IndexError(
            f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
            f"{scalar_type_name(index.dtype)} and size: {list(index.shape)}"
        )
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError(
            f"index_reduce_(): Expected dtype int32/int64 for index but got: {scalar_type_name(index.dtype)}"
        )
    if self.dtype != source.dtype:
        raise RuntimeError(
            f"index_reduce_(): self ({scalar_type_name(self.dtype)}) and source ({scalar_type_name(source.dtype)}) "
            "must have the same scalar type"
        )
    n_src = source.shape[d] if source.ndim else 1
    if index.numel() != n_src:
        raise RuntimeError(
            f"index_reduce_(): Number of indices ({index.numel()}) should be equal to source.size(dim): "
            f"({n_src}), for dim: {d}"
        )
    limit = self.shape[d] if self.ndim else 1
    vals = A._physical_values(index)
    if vals.size and (bool((vals < 0).any()) or bool((vals >= limit).any())):
        raise IndexError("index out of range in self")
    return d


def _scatter_index(index, source, d):
    """``index`` along dim ``d`` broadcast over ``source``'s shape (scatter_reduce's index)."""
    if source.ndim == 0:
        return A.reshape(index, ())
    shape = [1] * source.ndim
    shape[d] = index.numel()
    return A.expand(
        A.reshape(A.to(index, A.int64) if index.dtype != A.int64 else index, shape), tuple(source.shape)
    )


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    d = _index_reduce_checks(input, dim, index, source, reduce, "index_reduce")
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=2)
    return T.scatter_reduce(
        input, d, _scatter_index(index, source, d), source, reduce, include_self=include_self
    )


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    d = _index_reduce_checks(self, dim, index, source, reduce, "index_reduce_")
    return self.scatter_reduce_(
        d, _scatter_index(index, source, d), source, reduce, include_self=include_self
    )


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    size, stride = tuple(size), tuple(stride)
    out = A.clone(input)
    view = A.as_strided(out, size, stride, storage_offset)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
            f"slice size = {list(view.shape)}"
        )
    A.copy_(view, src)
    return out


def _clamped(self, indices):
    out = []
    for index, size in zip(indices, self.shape):
        if index is None:
            out.append(slice(None))
            continue
        if index.dtype.name not in ("int64", "int32"):
            raise RuntimeError(
                f"_unsafe_masked_index found unexpected index type {scalar_type_name(index.dtype)}"
            )
        out.append(T.clamp(index, -size, size - 1))
    return tuple(out)


def _unsafe_masked_index(input, mask, indices, fill):
    idx = _clamped(input, indices)
    if input.numel() == 0:
        sizes = [1 if (i is not None and n == 0) else n for i, n in zip(indices, input.shape)]
        sizes += list(input.shape[len(sizes) :])
        base = A.full(sizes, fill, dtype=input.dtype)
        return base[idx]
    return T.masked_fill(input[idx], A.logical_not(mask), fill)


def _unsafe_masked_index_put_accumulate(input, mask, indices, values):
    if input.numel() == 0:
        return A.clone(input)
    idx = _clamped(input, indices)
    masked = T.masked_fill(values, A.logical_not(mask), 0)
    return T.index_put(input, idx, masked, accumulate=True)


METHODS = {"index_reduce": index_reduce, "index_reduce_": index_reduce_}
