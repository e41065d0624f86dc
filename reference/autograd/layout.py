"""Memory layout of new results: PyTorch's rules for the strides of a tensor an op allocates.

The reference's values do not depend on strides, but programs can observe them: ``stride()``,
``is_contiguous()``, whether ``view`` succeeds, whether ``reshape`` returns a view (so whether an
in-place write through it reaches the tensor). So results get PyTorch's strides:

* **TensorIterator** (elementwise, pointwise, activation, comparison, ``where``, ``clamp`` ...):
  :func:`iterator_strides`, the rule of ``TensorIteratorBase::build``. Fast setup first: when all
  operands have the output's shape and are all contiguous, all channels-last, or all
  non-overlapping-and-dense with equal strides, the output takes that layout (the last input's
  strides in the third case). Otherwise each operand's strides are taken after broadcasting
  (``compute_strides``: a broadcast dimension, and every dimension a lower-rank operand lacks,
  has stride 0), the dimensions are insertion-sorted from the fastest-moving one
  (``reorder_dimensions``: for a pair of dimensions the first operand with an opinion decides, an
  operand with a 0 stride in either has none, equal strides put the smaller size first), and the
  output is dense in that order (``allocate_or_resize_outputs``). A 1-d result is always
  contiguous. Operands are in PyTorch's order (``where``'s condition first), Python numbers wrapped
  as 0-d tensors where PyTorch wraps them (binary ops; not the scalar parameters of unary ops).
* **preserve_format** (``clone``, ``to``, ``*_like``, ``.grad``): :func:`preserve_strides`, the rule
  of ``empty_like``: a non-overlapping and dense input's strides are kept, others get dense
  strides in the input's order (``infer_dense_strides``, TensorIterator's sort on one tensor).
* **contiguous** (row-major): everything else (reductions, ``masked_fill``, ``softmax``...).

A root tensor whose layout is not row-major owns a flat storage and views it with its strides
(``reference.autograd.tensor.strided_result``); everything else (views, in-place writes, CopySlices) already works on
any geometry.
"""

from __future__ import annotations

import sys

from reference.autograd.grad_mode import grad_state
from reference.autograd.table import ops
from reference.backend import namespace_of

ITERATOR = "iterator"
ITERATOR_SCALAR = "iterator_scalar"  # TensorIterator, the op's Python number a 0-d operand
PRESERVE = "preserve"
CONTIGUOUS = "contiguous"


def contiguous_strides(shape):
    """Row-major strides (c10's: a dimension of size 0 counts as 1)."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def _geometry(t):
    return t._data.shape, t.stride()


def is_non_overlapping_and_dense(shape, strides):
    """c10's compute_non_overlapping_and_dense."""
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    order = sorted((s, n) for n, s in zip(shape, strides) if n >= 2)
    expected = 1
    for s, n in order:
        if s != expected:
            return False
        expected *= n
    return True


def is_contiguous(shape, strides):
    """Row-major contiguous (dimensions of size 1 do not count); any empty tensor is."""
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def is_channels_last(shape, strides):
    """c10's is_channels_last_contiguous for 4-d tensors (channels_last_3d for 5-d)."""
    if len(shape) == 4:
        order = (1, 3, 2, 0)
    elif len(shape) == 5:
        order = (1, 4, 3, 2, 0)
    else:
        return False
    if any(n == 0 for n in shape):
        return False
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def channels_last_strides(shape):
    """c10's get_channels_last_strides_2d/3d: the channel dim fastest, then width, height(, depth), batch."""
    order = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}.get(len(shape))
    if order is None:
        raise RuntimeError(f"required rank {4 if len(shape) < 5 else 5} tensor to use channels_last format")
    strides, acc = [0] * len(shape), 1
    for d in order:
        strides[d] = acc
        acc *= shape[d]
    return tuple(strides)


def _sort_dims(shape, op_strides):
    """TensorIterator's reorder_dimensions: the permutation, fastest-moving dimension first."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(d0, d1):
        for st in op_strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:  # equal strides: the smaller size goes first
                return 1
        return 0

    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def iterator_strides(operands, shape):
    """The strides TensorIterator gives an output of ``shape`` computed from ``operands``.

    ``operands``: ``(shape, strides)`` of each input in PyTorch's operand order (a wrapped number
    is ``((), ())``).
    """
    shape = tuple(shape)
    if all(s == shape for s, _ in operands):  # compute_fast_setup_type
        if all(is_contiguous(s, st) for s, st in operands):
            return contiguous_strides(shape)
        if len(shape) == 4 and all(is_channels_last(s, st) for s, st in operands):
            return channels_last_strides(shape)
        if all(is_non_overlapping_and_dense(s, st) for s, st in operands) and all(
            st == operands[-1][1] for _, st in operands
        ):
            return tuple(operands[-1][1])
    ndim = len(shape)
    if ndim <= 1:
        return contiguous_strides(shape)
    op_strides = []  # compute_strides: broadcast (and missing) dimensions have stride 0
    for s, st in operands:
        offset = ndim - len(s)
        full = [0] * offset
        for i, (n, k) in enumerate(zip(s, st)):
            full.append(0 if n == 1 and shape[offset + i] != 1 else k)
        op_strides.append(full)
    perm = _sort_dims(shape, op_strides)
    if perm == list(range(ndim - 1, -1, -1)):
        return contiguous_strides(shape)
    strides, acc = [0] * ndim, 1  # compatible_stride, in the sorted order
    for d in perm:
        strides[d] = acc
        acc *= shape[d]
    return tuple(strides)


def infer_dense_strides(shape, strides):
    """ATen's infer_dense_strides: dense strides in the order of ``strides``."""
    perm = _sort_dims(shape, [strides])
    out, acc = [0] * len(shape), 1
    for d in perm:
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


def preserve_strides(t):
    """``empty_like(t)``'s strides (memory_format=torch.preserve_format)."""
    shape, strides = _geometry(t)
    if is_non_overlapping_and_dense(shape, strides):
        return strides
    return infer_dense_strides(shape, strides)


def format_strides(t, memory_format):
    """The strides of a new tensor like ``t`` in ``memory_format`` (None: preserve_format)."""
    name = getattr(memory_format, "name", memory_format)
    if name in (None, "preserve_format"):
        return preserve_strides(t)
    if name == "contiguous_format":
        return contiguous_strides(t.shape)
    if name in ("channels_last", "channels_last_3d"):
        if t.dim() != (4 if name == "channels_last" else 5):
            raise RuntimeError(
                f"required rank {4 if name == 'channels_last' else 5} tensor to use {name} format"
            )
        return channels_last_strides(t.shape)
    raise ValueError(f"unknown memory format {memory_format!r}")


def grad_strides(new, variable, stolen):
    """The strides of a leaf's first ``.grad`` (AccumulateGrad's gradient layout contract): the
    leaf's own when it is non-overlapping and dense, else row-major; a gradient that already obeys
    the contract is kept as it is when AccumulateGrad steals it (``stolen``: no grad mode)."""
    shape, strides = _geometry(variable)
    if not is_non_overlapping_and_dense(shape, strides):
        return contiguous_strides(shape)
    if stolen:
        new_strides = new.stride()
        if all(
            (s == v) if n != 1 else s != 0 for n, s, v in zip(shape, new_strides, strides)
        ) and is_non_overlapping_and_dense(shape, new_strides):
            return new_strides
    return strides


def result_strides(layout, inputs, shape):
    """The strides of a result of ``shape`` computed from ``inputs`` (Tensors, None or numbers)
    by an op of ``layout``; None when they are row-major and unambiguous (no dimension of size 1),
    the case of nearly every op."""
    if layout == CONTIGUOUS:
        return None
    tensors = [t for t in inputs if t is not None and hasattr(t, "_data")]
    if 1 not in shape and all(t._data.flags.c_contiguous for t in tensors):
        return None  # row-major inputs and no dimension whose stride is ambiguous: row-major
    if layout == PRESERVE:
        strides = preserve_strides(tensors[0])
    else:
        operands = [_geometry(t) if hasattr(t, "_data") else ((), ()) for t in inputs if t is not None]
        if layout == ITERATOR_SCALAR:
            operands.append(((), ()))
        strides = iterator_strides(operands, shape)
    return strides


def strided_array(arr, strides):
    """``(data, storage)``: ``arr``'s values laid out with ``strides`` (in elements) over a new flat
    storage (``arr`` itself when it already has them)."""
    item = arr.dtype.itemsize
    byte_strides = tuple(s * item for s in strides)
    n = arr.size
    xp = namespace_of(arr)  # NumPy, CuPy or the strict test namespace: the data's own
    if (
        arr.strides == byte_strides and getattr(arr.flags, "writeable", True) and arr.base is None
    ):  # (CuPy: no flag)
        storage = xp.lib.stride_tricks.as_strided(arr, shape=(n,), strides=(item,))
        return arr, storage
    storage = xp.empty(n, dtype=arr.dtype)
    data = xp.lib.stride_tricks.as_strided(storage, shape=arr.shape, strides=byte_strides)
    data[...] = arr
    _carry_error(arr, data)
    return data, storage


def _carry_error(src, dst, write=False, storage=None):
    """Under an error tracker (reference.errors, which finds an array's error bound by its memory),
    a result moved into new storage for its layout keeps the bound its kernel registered; so does
    the region ``dst`` of ``storage`` an in-place op's result is written into (``write``)."""
    tracker = ops.error_tracker()
    if tracker is not None and getattr(src, "size", 0):
        tracker.carry(src, dst, write, storage)


def _c_strides(arr):
    return tuple(s * arr.dtype.itemsize for s in contiguous_strides(arr.shape))


def relayout_(t, strides):
    """Give a fresh result ``t`` (nothing else holds its storage) the layout ``strides``."""
    if t.stride() == tuple(strides) or t.numel() == 0:
        return t
    old = t._data
    t._data, t._storage = strided_array(old.copy(), strides)
    _carry_error(old, t._data)
    return t


def accumulated_strides(old):
    """The strides of ``old + new``, the sum of two gradients for one input in a backward pass, when
    PyTorch's InputBuffer::accumulate sums in place into ``old``: without grad mode, when ``old`` is
    dense and nothing else holds it (PyTorch: use_count 1, its own storage); None when it adds out
    of place (TensorIterator's rule, which ``old + new`` follows)."""
    # references to an ``old`` nothing else holds: the buffer's slot, this call's argument,
    # getrefcount's argument, and the output list of the node being run when it made ``old`` too
    # (PyTorch moves outputs into the buffer); a gradient the node returned twice has more
    if grad_state.enabled or old._base is not None or sys.getrefcount(old) > 4:
        return None
    shape, strides = _geometry(old)
    return strides if is_non_overlapping_and_dense(shape, strides) else None
