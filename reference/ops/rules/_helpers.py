"""Helpers the family modules share: undoing a reduction, counting its elements, a view's gradient map."""

from __future__ import annotations

import numpy as np

from reference.autograd.graph import storage_indices
from reference.autograd.layout import contiguous_strides
from reference.ops import api as A


def _unreduce(g, shape, dim, keepdim):
    """Broadcast a reduction's gradient back over the reduced dims of ``shape`` (PyTorch's
    sum_backward: unsqueeze each reduced dim in increasing order, then expand; a full reduction's
    0-d gradient is expanded directly, so every stride is 0, as PyTorch's)."""
    if not keepdim and dim is not None and len(shape):
        for d in sorted(dim):
            g = A.unsqueeze(g, d)
    return A.expand(g, shape)


def _count(shape, dim):
    dims = range(len(shape)) if dim is None else dim
    return int(np.prod([shape[d] for d in dims])) if len(shape) else 1


def _view_index(c, geometry):
    """Where each element of a view sits in its (contiguous) input: the view's gradient map."""
    shape = c.shapes[0]
    size, stride, offset = geometry(shape, contiguous_strides(shape), 0, **c.params)

    return storage_indices(size, stride, offset)
