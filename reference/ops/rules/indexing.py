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


def _pool_scatter_batch(b, params):
    return apply(b.rule, (b.expanded(0),), {**params, "shape": (b.size,) + tuple(params["shape"])}), 0


def _pool_scatter_terms(arrays, p):
    """How many products land on each input position (+1: each is a product with a weight)."""
    ones = np.ones(arrays[0].shape)
    return K.pool_scatter(ones, p["index"], np.ones(p["weight"].shape), p["shape"]) + 1


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
rule(
    "pool_gather",
    "AvgPool2DBackwardBackward0",
    ("self",),
    forward=K.pool_gather,
    grads=(lambda c, g: A.pool_scatter(g, c.index, c.weight, c.shapes[0]),),
    jvp=AUTO_LINEAR,
    batch=_leading_batch,
    error=errors.products(lambda arrays, p: p["index"].shape[-1] + 1),
)
rule(
    "pool_scatter",
    "AvgPool2DBackward0",
    ("self",),
    forward=K.pool_scatter,
    grads=(lambda c, g: A.pool_gather(g, c.index, c.weight),),
    jvp=AUTO_LINEAR,
    batch=_pool_scatter_batch,
    error=errors.products(_pool_scatter_terms),
)
