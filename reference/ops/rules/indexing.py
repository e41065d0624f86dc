"""The linear pair behind view gradients, CopySlices and pooling: gathers and scatters by
flat index.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry."""

from __future__ import annotations

import math

import numpy as np

from reference import errors
from reference.autograd.batching import flat_index
from reference.autograd.dispatch import apply
from reference.backend import add_at, namespace_of
from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.rule import (
    AUTO_LINEAR,
)
from reference.ops.rules.registry import rule

# ---- the linear pair behind view gradients, CopySlices and pooling -------------------------------


def _take_batch(b, params):
    x = b.expanded(0)
    index = flat_index(params["index"], b.size, b.inputs[0].numel())
    return apply(b.rule, (x,), {**params, "index": index}), 0


def _scatter_add_batch(b, params):
    shape = tuple(params["shape"])
    index = flat_index(params["index"], b.size, math.prod(shape))
    return apply(b.rule, (b.expanded(0),), {**params, "index": index, "shape": (b.size,) + shape}), 0


def _put_batch(b, params):
    index = flat_index(params["index"], b.size, b.inputs[0].numel())
    src = b.aligned(1, np.ndim(params["index"]))
    if b.bdims[1] is None:
        src = A.unsqueeze(src, 0)
    return apply(b.rule, (b.expanded(0), src), {**params, "index": index}), 0


def _leading_batch(b, params):
    """Kernels that map leading dims independently (pooling): the batch dim is one more."""
    out = apply(b.rule, (b.expanded(0),), params)
    return tuple((o, 0) for o in out) if isinstance(out, tuple) else (out, 0)


rule(
    "take",
    "TakeBackward0",
    ("self",),
    forward=K.take,
    grads=(lambda c, g: A.scatter_add(g, c.index, c.shapes[0]),),
    jvp=AUTO_LINEAR,
    batch=_take_batch,
    error=errors.GATHER,
)
rule(
    "scatter_add",
    "ScatterAddBackward0",
    ("self",),
    forward=K.scatter_add,
    grads=(lambda c, g: A.take(g, c.index),),
    jvp=AUTO_LINEAR,
    batch=_scatter_add_batch,
    error=errors.products(),
)
rule(
    "put",
    "IndexPutBackward0",
    ("self", "src"),
    forward=K.put,
    grads=(lambda c, g: A.put(g, c.index, 0.0), lambda c, g: A.take(g, c.index)),
    jvp=AUTO_LINEAR,
    batch=_put_batch,
    error=errors.GATHER,
)


# ---- advanced indexing: x[index tensors] and index_put -------------------------------------------
# ``indices``: one entry per dim of the (already basic-indexed) input, None or an int64 array of
# in-range, non-negative indices (bool masks already turned into their nonzero() coordinates), as
# PyTorch's ``index``/``index_put`` receive them. NumPy's advanced indexing places the broadcast
# index dims exactly as PyTorch does (in place when the indexed dims are adjacent, else first).


def _adjacent(indices):
    pos = [k for k, i in enumerate(indices) if i is not None]
    return pos == list(range(pos[0], pos[-1] + 1))


def _bcast_ndim(indices):
    return len(np.broadcast_shapes(*[tuple(i.shape) for i in indices if i is not None]))


def index_kernel(x, indices):
    return x[K.index_key(indices)]


def index_put_kernel(x, values, indices, accumulate):
    xp = namespace_of(x)
    out = x.copy()
    key = K.index_key(indices)
    if accumulate:
        region = K.region_shape(x.shape, indices)
        add_at(out, key, xp.broadcast_to(values, region))
    else:
        out[key] = values
    return out


def _index_batch(b, params):
    indices = params["indices"]
    x = b.expanded(0)
    out = apply(b.rule, (x,), {**params, "indices": (None,) + tuple(indices)})
    return out, (0 if _adjacent(indices) else _bcast_ndim(indices))


def _index_put_batch(b, params):
    indices = params["indices"]
    x = b.expanded(0)
    region = tuple(K.region_shape(b.inputs[0].shape, indices))
    v = b.front(1)
    if v is None:
        v = A.expand(A.unsqueeze(A.expand(b.values[1], region), 0), (b.size,) + region)
    else:
        v = A.expand(b.aligned(1, len(region)), (b.size,) + region)
    if not _adjacent(indices):
        k = _bcast_ndim(indices)
        v = A.permute(v, tuple(range(1, k + 1)) + (0,) + tuple(range(k + 1, v.ndim)))
    return apply(b.rule, (x, v), {**params, "indices": (None,) + tuple(indices)}), 0


rule(
    "index",
    "IndexBackward0",
    ("self",),
    forward=index_kernel,
    grads=(
        lambda c, g: A.index_put(
            A.zeros(c.shapes[0], dtype=g.dtype, device=g.device), c.indices, g, accumulate=True
        ),
    ),
    jvp=AUTO_LINEAR,
    batch=_index_batch,
    error=errors.GATHER,
)
rule(
    "index_put",
    "IndexPutBackward0",
    ("self", "values"),
    forward=index_put_kernel,
    grads=(
        lambda c, g: (
            g
            if c.accumulate
            else A.index_put(g, c.indices, A.zeros((), dtype=g.dtype, device=g.device), False)
        ),
        lambda c, g: A.index(g, c.indices),
    ),
    jvp=AUTO_LINEAR,
    batch=_index_put_batch,
    error=errors.products(),
)

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: every primitive of this family accepts complex tensors (PyTorch defines them on complex numbers)
COMPLEX_INPUTS = True
