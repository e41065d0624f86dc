"""Shape functions: PyTorch's names, signatures, defaults and errors.

Primitives (own backward nodes, in :mod:`reference.ops.rules.shape_ops`): flip, roll, rot90,
repeat, tril, triu, diag_embed, diagonal copy (``diag`` of a matrix), block_diag, narrow_copy,
select/slice/diagonal_scatter, and ``Tensor.unfold`` (a view).

Composites, as in PyTorch (their ``grad_fn`` is that of the ops they are made of): fliplr/flipud
(flip), tile (repeat), repeat_interleave (int repeats: unsqueeze/expand/clone/view; tensor repeats:
a gather by index, where PyTorch uses index_select), movedim/moveaxis (permute),
swapaxes/swapdims (transpose), unflatten/ravel/view_as (view), reshape_as, diagflat (diag_embed),
broadcast_tensors/meshgrid (expand), the *stack functions (cat), atleast_*d (view/unsqueeze),
tensor_split/hsplit/vsplit/dsplit (slices), split_with_sizes.
"""

from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from reference.autograd.dispatch import apply, apply_inplace, apply_view
from reference.autograd.tensor import Tensor
from reference.ops import api as A
from reference.ops.rules import RULES

__all__ = [
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "rot90",
    "tile",
    "repeat_interleave",
    "tril",
    "triu",
    "movedim",
    "moveaxis",
    "swapaxes",
    "swapdims",
    "unflatten",
    "diag",
    "diag_embed",
    "diagflat",
    "diagonal_copy",
    "block_diag",
    "broadcast_tensors",
    "broadcast_to",
    "broadcast_shapes",
    "meshgrid",
    "hstack",
    "vstack",
    "dstack",
    "column_stack",
    "row_stack",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "tensor_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "split_with_sizes",
    "ravel",
    "narrow_copy",
    "select_scatter",
    "slice_scatter",
    "diagonal_scatter",
    "concat",
    "concatenate",
]


def _int_tuple(v, name):
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return (int(v),)
    if isinstance(v, Tensor):
        return tuple(int(x) for x in v.tolist())
    try:
        return tuple(int(x) for x in v)
    except TypeError:
        raise TypeError(f"{name} must be an int or a tuple of ints, got {type(v).__name__}") from None


def _wrap_dims(dims, ndim):
    out = tuple(A._dim(d, ndim) for d in dims)
    seen = set()
    for d in out:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return out


# ---- flip, roll, rot90 --------------------------------------------------------------------------------


def flip(input, *dims_args, dims=None):
    dims = dims if dims is not None else dims_args
    dims = dims[0] if len(dims) == 1 and not isinstance(dims[0], (int, np.integer)) else dims
    dims = _wrap_dims(_int_tuple(dims, "dims"), input.ndim) if input.ndim else ()
    return apply(RULES["flip"], (input,), {"dims": dims})


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input, shifts, dims=None):
    shifts = _int_tuple(shifts, "shifts")
    dims = () if dims is None else _int_tuple(dims, "dims")
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
    elif len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    dims = tuple(A._dim(d, input.ndim) for d in dims)
    return apply(RULES["roll"], (input,), {"shifts": shifts, "dims": dims})


def rot90(input, k=1, dims=(0, 1)):
    dims = _int_tuple(dims, "dims")
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = A._dim(dims[0], input.ndim), A._dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return apply(RULES["rot90"], (input,), {"k": int(k) % 4, "dims": (d0, d1)})


# ---- repeat, tile, repeat_interleave --------------------------------------------------------------------


def repeat(input, *sizes):
    reps = A._shape_arg(sizes)
    if len(reps) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    shape = (1,) * (len(reps) - input.ndim) + tuple(input.shape)
    target = [s * q for s, q in zip(shape, reps)]
    for n in target:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {target}")
    return apply(RULES["repeat"], (input,), {"repeats": reps})


def tile(input, dims):
    reps = _int_tuple(dims, "dims")
    if len(reps) < input.ndim:
        reps = (1,) * (input.ndim - len(reps)) + reps
    return repeat(input, reps)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # torch.repeat_interleave(repeats): the indices repeated
        reps = input
        if reps.ndim > 1 or reps.dtype.kind not in "iu":
            raise RuntimeError("repeats has to be Long or Int tensor")
        counts = reps.numpy().reshape(-1)
        return A.tensor(np.repeat(np.arange(counts.size), counts), dtype=reps.dtype)
    x = input
    if dim is None:
        x = A.flatten(x)
        d = 0
    else:
        d = A._dim(dim, x.ndim)
    n = x.shape[d] if x.ndim else 1
    if isinstance(repeats, Tensor) and repeats.ndim == 0:
        repeats = int(repeats.item())
    if isinstance(repeats, (int, np.integer)):
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        if output_size is not None and output_size != n * repeats:
            raise RuntimeError("allocated size does not match required size")
        if x.ndim == 0:
            x = A.reshape(x, (1,))
        shape = tuple(x.shape)
        out = A.expand(A.unsqueeze(x, d + 1), shape[: d + 1] + (int(repeats),) + shape[d + 1 :])
        return A.view(A.clone(out), shape[:d] + (n * int(repeats),) + shape[d + 1 :])
    if not isinstance(repeats, Tensor):
        repeats = A.tensor(list(repeats))
    if repeats.dtype.kind not in "iu":
        raise RuntimeError("repeats has to be Long or Int tensor")
    if repeats.ndim != 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    counts = repeats.numpy()
    if counts.size != n:
        raise RuntimeError("repeats must have the same size as input along dim")
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    index = np.repeat(np.arange(n), counts)
    if output_size is not None and output_size != index.size:
        raise RuntimeError("allocated size does not match required size")
    if x.ndim == 0:
        x = A.reshape(x, (1,))
    flat = np.arange(x.numel(), dtype=np.int64).reshape(x.shape)
    return A.take(x, np.take(flat, index, axis=d))


# ---- tril, triu -------------------------------------------------------------------------------------------


def _tri(name, input, diagonal):
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return apply(RULES[name], (input,), {"diagonal": int(diagonal)})


def tril(input, diagonal=0):
    return _tri("tril", input, diagonal)


def triu(input, diagonal=0):
    return _tri("triu", input, diagonal)


# ---- permuting views ------------------------------------------------------------------------------------


def movedim(input, source, destination):
    src, dst = _int_tuple(source, "source"), _int_tuple(destination, "destination")
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain the same "
            f"number of dims as destination ({list(dst)} dims)"
        )
    n = input.ndim
    src = tuple(A._dim(d, n) for d in src)
    dst = tuple(A._dim(d, n) for d in dst)
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(_int_tuple(source, 'source'))})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(_int_tuple(destination, 'd'))})")
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [o if o is not None else next(rest) for o in order]
    return A.permute(input, tuple(order))


moveaxis = movedim


def swapaxes(input, axis0, axis1):
    return A.transpose(input, axis0, axis1)


swapdims = swapaxes


def unflatten(input, dim, sizes):
    sizes = _int_tuple(sizes, "sizes")
    d = A._dim(dim, input.ndim)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input.shape[d]
    if -1 in sizes:
        inferred = A._infer_size(sizes, n) if sizes.count(-1) == 1 else A._infer_size(sizes, n)
    else:
        if math.prod(sizes) != n:
            raise RuntimeError(
                f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} ({n}) in "
                "the input tensor"
            )
        inferred = sizes
    return A.view(input, tuple(input.shape[:d]) + tuple(inferred) + tuple(input.shape[d + 1 :]))


def ravel(input):
    return A.view(A.contiguous(input), (-1,))


def view_as(input, other):
    return A.view(input, tuple(other.shape))


def reshape_as(input, other):
    return A.reshape(input, tuple(other.shape))


def unfold(input, dimension, size, step):
    """``Tensor.unfold``: windows of ``size`` every ``step`` along ``dimension`` (a view)."""
    if input.ndim == 0:
        d, n = 0, 1
    else:
        d = A._dim(dimension, input.ndim)
        n = input.shape[d]
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return apply_view(RULES["unfold"], input, {"dim": d, "size": int(size), "step": int(step)})


# ---- diagonals ------------------------------------------------------------------------------------------


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    n = input.ndim + 1
    d1, d2 = A._dim(dim1, n), A._dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(RULES["diag_embed"], (input,), {"offset": int(offset), "dim1": d1, "dim2": d2})


def diag(input, diagonal=0):
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return apply(RULES["diagonal_copy"], (input,), {"offset": int(diagonal), "dim1": 0, "dim2": 1})
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    d1, d2 = A._dim(dim1, input.ndim), A._dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(RULES["diagonal_copy"], (input,), {"offset": int(offset), "dim1": d1, "dim2": d2})


def diagflat(input, offset=0):
    return diag_embed(A.reshape(A.contiguous(input), (-1,)), offset, 0, 1)


def block_diag(*tensors):
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.ndim} dimensions"
            )
    if not tensors:
        return A.zeros(1, 0)
    dt = A.result_type(*tensors)
    mats = []
    for t in tensors:
        if t.ndim == 0:
            t = A.reshape(t, (1, 1))
        elif t.ndim == 1:
            t = A.unsqueeze(t, 0)
        mats.append(t)
    same = all(t.dtype == dt for t in mats)
    return apply(RULES["block_diag"], tuple(mats), {"lead": 0}, cast=None if same else dt)


# ---- broadcasting ---------------------------------------------------------------------------------------


def broadcast_shapes(*shapes):
    shapes = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for k in range(1, len(s) + 1):
            a, b = out[-k], s[-k]
            if a == b or b == 1:
                continue
            if a == 1:
                out[-k] = b
                continue
            raise RuntimeError(
                f"Shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between {a} and {b} "
                f"at dimension {ndim - k}"
            )
    return tuple(out)


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = tuple(tensors[0].shape) if tensors else ()
    for t in tensors[1:]:
        A.check_broadcast(A.tensor(np.empty(shape, dtype=bool)), t)
        shape = tuple(np.broadcast_shapes(shape, tuple(t.shape)))
    return tuple(A.expand(t, shape) for t in tensors)


def broadcast_to(input, size):
    return A.expand(input, tuple(size))


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    for t in tensors[1:]:
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    out = []
    for i, t in enumerate(ts):
        view_shape = [1] * len(ts)
        view_shape[i] = -1
        out.append(A.expand(A.view(t, tuple(view_shape)), shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


# ---- stacking -------------------------------------------------------------------------------------------


def _tensors(args):
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return tuple(args[0]), True
    return tuple(args), False


def atleast_1d(*tensors):
    ts, listed = _tensors(tensors)
    out = tuple(A.reshape(t, (1,)) if t.ndim == 0 else t for t in ts)
    return out if listed or len(out) != 1 else out[0]


def atleast_2d(*tensors):
    ts, listed = _tensors(tensors)
    out = tuple(A.reshape(t, (1, 1)) if t.ndim == 0 else A.unsqueeze(t, 0) if t.ndim == 1 else t for t in ts)
    return out if listed or len(out) != 1 else out[0]


def _3d(t):
    if t.ndim == 0:
        return A.reshape(t, (1, 1, 1))
    if t.ndim == 1:
        return A.unsqueeze(A.unsqueeze(t, 0), -1)
    if t.ndim == 2:
        return A.unsqueeze(t, -1)
    return t


def atleast_3d(*tensors):
    ts, listed = _tensors(tensors)
    out = tuple(_3d(t) for t in ts)
    return out if listed or len(out) != 1 else out[0]


def _check_list(tensors, name):
    if len(tensors) == 0:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def hstack(tensors):
    tensors = tuple(tensors)
    _check_list(tensors, "hstack")
    ts = atleast_1d(tensors)
    return A.cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    tensors = tuple(tensors)
    _check_list(tensors, "vstack")
    return A.cat(atleast_2d(tensors), 0)


row_stack = vstack


def dstack(tensors):
    tensors = tuple(tensors)
    _check_list(tensors, "dstack")
    return A.cat(atleast_3d(tensors), 2)


def column_stack(tensors):
    tensors = tuple(tensors)
    _check_list(tensors, "column_stack")
    ts = tuple(A.reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in tensors)
    return A.cat(ts, 1)


def concat(tensors, dim=0):
    return A.cat(tensors, dim)


concatenate = concat

# ---- splitting ------------------------------------------------------------------------------------------


def tensor_split(input, indices_or_sections, dim=0):
    if input.ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    d = A._dim(dim, input.ndim)
    n = input.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.dtype.kind not in "iu":
            raise RuntimeError(
                f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got {ios.dtype}"
            )
        if ios.ndim > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional "
                f"tensor, but got a tensor with {ios.ndim} dims"
            )
        ios = int(ios.item()) if ios.ndim == 0 else [int(v) for v in ios.tolist()]
    if isinstance(ios, (int, np.integer)):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        q, r = divmod(n, int(ios))
        bounds, start = [], 0
        for i in range(int(ios)):
            size = q + (1 if i < r else 0)
            bounds.append((start, start + size))
            start += size
    else:
        idx = [int(i) for i in ios]
        edges = [0] + idx + [n]
        bounds = list(zip(edges[:-1], edges[1:]))
    return tuple(A._slice(input, d, s, e, 1) for s, e in bounds)


def _split_along(name, input, ios, dim, need):
    if input.ndim < need:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with {input.ndim} "
            "dimensions!"
        )
    if isinstance(ios, (int, np.integer)):
        n = input.shape[dim]
        if ios == 0 or n % ios:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension {n} is "
                f"not divisible by the split_size {ios}!"
            )
    return tensor_split(input, ios, dim)


def hsplit(input, indices_or_sections):
    if input.ndim < 1:
        raise RuntimeError(
            "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 dimensions!"
        )
    return _split_along("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


def vsplit(input, indices_or_sections):
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


def split_with_sizes(input, split_sizes, dim=0):
    return A.split(input, [int(s) for s in split_sizes], dim)


# ---- copies and scatters --------------------------------------------------------------------------------


def narrow_copy(input, dim, start, length):
    d = A._dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    start = start % n if start < 0 else start
    if length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return apply(RULES["narrow_copy"], (input,), {"dim": d, "start": int(start), "length": int(length)})


def _check_src(src, view):
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, slice size "
            f"= {list(view.shape)}"
        )


def _scatter(name, input, src, view, params):
    _check_src(src, view)
    if src.dtype != input.dtype:
        raise RuntimeError(
            f"{name}(): expected src and self to have the same dtype, but got {src.dtype} and {input.dtype}"
        )
    return apply(RULES[name], (input, src), params)


def select_scatter(input, src, dim, index):
    view = A.select(input.detach(), dim, index)
    d = A._dim(dim, input.ndim)
    return _scatter("select_scatter", input, src, view, {"dim": d, "index": int(index) % input.shape[d]})


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    d = A._dim(dim, input.ndim)
    view = A._slice(input.detach(), d, start, end, step)
    n = input.shape[d]
    s = 0 if start is None else int(start)
    e = n if end is None else int(end)
    s = builtins.min(builtins.max(s + n if s < 0 else s, 0), n)
    e = builtins.max(builtins.min(builtins.max(e + n if e < 0 else e, 0), n), s)
    return _scatter("slice_scatter", input, src, view, {"dim": d, "start": s, "end": e, "step": int(step)})


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    view = A.diagonal(input.detach(), offset, dim1, dim2)
    d1, d2 = A._dim(dim1, input.ndim), A._dim(dim2, input.ndim)
    return _scatter("diagonal_scatter", input, src, view, {"offset": int(offset), "dim1": d1, "dim2": d2})


METHODS = {
    "flip": flip,
    "fliplr": fliplr,
    "flipud": flipud,
    "roll": roll,
    "rot90": rot90,
    "repeat": repeat,
    "tile": tile,
    "repeat_interleave": repeat_interleave,
    "tril": tril,
    "triu": triu,
    "movedim": movedim,
    "moveaxis": moveaxis,
    "swapaxes": swapaxes,
    "swapdims": swapdims,
    "unflatten": unflatten,
    "ravel": ravel,
    "view_as": view_as,
    "reshape_as": reshape_as,
    "unfold": unfold,
    "diag": diag,
    "diag_embed": diag_embed,
    "diagflat": diagflat,
    "broadcast_to": broadcast_to,
    "tensor_split": tensor_split,
    "hsplit": hsplit,
    "vsplit": vsplit,
    "dsplit": dsplit,
    "split_with_sizes": split_with_sizes,
    "narrow_copy": narrow_copy,
    "select_scatter": select_scatter,
    "slice_scatter": slice_scatter,
    "diagonal_scatter": diagonal_scatter,
}


def _tri_(name):
    def op_(self, diagonal=0):
        if self.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return apply_inplace(RULES[name], self, (), {"diagonal": int(diagonal)})

    op_.__name__ = name + "_"
    return op_


tril_, triu_ = _tri_("tril"), _tri_("triu")
METHODS.update({"tril_": tril_, "triu_": triu_})
