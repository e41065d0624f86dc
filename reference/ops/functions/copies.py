"""The functional copies of the view ops (``torch.expand_copy``, ``torch.permute_copy``, ...,
``torch.unbind_copy``, ``torch.split_with_sizes_copy``) and ``unsafe_split``/``unsafe_chunk``/
``unsafe_split_with_sizes``: primitives of :mod:`reference.ops.rules.copies` (PyTorch's nodes
``ExpandBackward0_copy``..., ``UnsafeSplitBackward0``).

Each function runs the view function itself on a contiguous stand-in of the input's shape (so its
argument checks, errors and parameter defaults are the view's) and hands the geometry of the
result to the copy primitive.
"""

from __future__ import annotations

import math

from reference.autograd.dispatch import apply
from reference.autograd.tensor import Tensor, storage_of
from reference.ops import api as A
from reference.ops.rules.registry import RULES

__all__ = [
    "expand_copy",
    "alias_copy",
    "as_strided_copy",
    "view_copy",
    "permute_copy",
    "unfold_copy",
    "squeeze_copy",
    "unsqueeze_copy",
    "transpose_copy",
    "t_copy",
    "split_with_sizes_copy",
    "unbind_copy",
    "unsafe_split",
    "unsafe_chunk",
    "unsafe_split_with_sizes",
]

METHODS = ["unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes"]


def _geometry(v):
    return (tuple(v.shape), tuple(v.stride()), v._offset)


def _copy(name, input, view):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    stand_in = A.empty(tuple(input.shape), dtype=input.dtype)
    out = view(stand_in)
    multi = isinstance(out, (tuple, list))
    geoms = tuple(_geometry(v) for v in out) if multi else (_geometry(out),)
    res = apply(RULES[name], (input,), {"geoms": geoms})
    return list(res) if name in ("split_with_sizes_copy", "unbind_copy") else res


def expand_copy(input, size, *, implicit=False):
    return _copy("expand_copy", input, lambda x: A.expand(x, tuple(size)))


def alias_copy(input):
    return _copy("alias_copy", input, A.alias)


def _contiguous_at_zero(t):
    strides, s = [], 1
    for n in reversed(t.shape):
        strides.append(s)
        s *= n
    own = all(n == 1 or st == w for n, st, w in zip(t.shape, t.stride(), reversed(strides)))

    return own and t._offset == 0 and storage_of(t).size == math.prod(t.shape)


def as_strided_copy(input, size, stride, storage_offset=None):
    if not _contiguous_at_zero(input):
        # the geometry reads the input's storage, which is not its row-major values here: the
        # copy of the as_strided view (values and gradient as PyTorch's, grad_fn CloneBackward0)
        return A.clone(A.as_strided(input, size, stride, storage_offset))
    return _copy("as_strided_copy", input, lambda x: A.as_strided(x, size, stride, storage_offset))


def view_copy(input, size):
    if not isinstance(size, (tuple, list)) and not isinstance(size, int):  # view_copy(x, dtype)
        raise NotImplementedError("view_copy(input, dtype) is not supported by the reference")
    return _copy("view_copy", input, lambda x: A.view(x, size))


def permute_copy(input, dims):
    return _copy("permute_copy", input, lambda x: A.permute(x, dims))


def unfold_copy(input, dimension, size, step):
    return _copy("unfold_copy", input, lambda x: x.unfold(dimension, size, step))


def squeeze_copy(input, dim=None):
    if dim is None:
        name = "squeeze_copy"
    elif isinstance(dim, int):
        name = "squeeze_copy_dim"
    else:
        name = "squeeze_copy_dims"
    return _copy(name, input, lambda x: A.squeeze(x, dim))


def unsqueeze_copy(input, dim):
    return _copy("unsqueeze_copy", input, lambda x: A.unsqueeze(x, dim))


def transpose_copy(input, dim0, dim1):
    return _copy("transpose_copy", input, lambda x: A.transpose(x, dim0, dim1))


def t_copy(input):
    return _copy("t_copy", input, A.t)


def split_with_sizes_copy(input, split_sizes, dim=0):
    return _copy("split_with_sizes_copy", input, lambda x: A.split(x, [int(s) for s in split_sizes], dim))


def unbind_copy(input, dim=0):
    return _copy("unbind_copy", input, lambda x: A.unbind(x, dim))


def unsafe_split(input, split_size, dim=0):
    if not isinstance(split_size, int) or isinstance(split_size, bool):
        raise TypeError(
            f"unsafe_split(): argument 'split_size' (position 2) must be int, not {type(split_size).__name__}"
        )
    return tuple(_copy("unsafe_split", input, lambda x: A.split(x, split_size, dim)))


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return tuple(
        _copy("unsafe_split_with_sizes", input, lambda x: A.split(x, [int(s) for s in split_sizes], dim))
    )


def unsafe_chunk(input, chunks, dim=0):
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = A._dim(dim, input.ndim)
    n = input.shape[d]
    split_size = (n + chunks - 1) // chunks
    if split_size == 0 and n == 0:  # PyTorch: chunks equal (empty) pieces
        return unsafe_split_with_sizes(input, [0] * chunks, d)
    return unsafe_split(input, split_size, d)
