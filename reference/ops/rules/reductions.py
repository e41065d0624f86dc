"""Reductions: sum, mean, amax/amin over dims or whole tensors.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry."""

from __future__ import annotations

from reference import errors
from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.rule import (
    AUTO_LINEAR,
    BATCH_REDUCE,
)
from reference.ops.rules._helpers import _count, _unreduce
from reference.ops.rules.registry import rule

# ---- reductions ----------------------------------------------------------------------------------

# aten's overloads: the full reduction (sum(x)) and the reduction over dims (sum(x, dim)).
for _suffix, _number in (("", "0"), ("_dim", "1")):
    rule(
        "sum" + _suffix,
        "SumBackward" + _number,
        ("self",),
        forward=K.sum_,
        error=errors.products(),
        grads=(lambda c, g: _unreduce(g, c.shapes[0], c.dim, c.keepdim),),
        jvp=AUTO_LINEAR,
        batch=BATCH_REDUCE,
    )
    rule(
        "mean" + _suffix,
        "MeanBackward" + _number,
        ("self",),
        forward=K.mean,
        error=errors.products(lambda arrays, p: _count(arrays[0].shape, p["dim"]) + 1),  # + the division
        grads=(lambda c, g: _unreduce(g, c.shapes[0], c.dim, c.keepdim) / _count(c.shapes[0], c.dim),),
        jvp=AUTO_LINEAR,
        batch=BATCH_REDUCE,
    )


def _extreme_jvp(c, ts):
    """amax/amin: the mean of the tangent over the elements that attain the extreme."""
    mask = A.to(_unreduce(c.result, c.shapes[0], c.dim, c.keepdim) == c.self, ts[0].dtype)
    return A.sum(ts[0] * mask, c.dim, keepdim=c.keepdim) / A.sum(mask, c.dim, keepdim=c.keepdim)


for _name, _kernel, _node in (("amax", K.amax, "AmaxBackward0"), ("amin", K.amin, "AminBackward0")):
    rule(
        _name,
        _node,
        ("self",),
        forward=_kernel,
        error=errors.GATHER,  # selects an element: at most the largest error among the candidates
        grads=(
            lambda c, g: A.scale_grad_by_count(
                _unreduce(g, c.shapes[0], c.dim, c.keepdim),
                _unreduce(c.result, c.shapes[0], c.dim, c.keepdim) == c.self,
                c.dim,
            ),
        ),
        saves={"self": (0,), "result": (0,)},
        jvp=_extreme_jvp,
        batch=BATCH_REDUCE,
    )
