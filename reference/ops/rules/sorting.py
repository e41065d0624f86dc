"""Sorting: sort (stable, descending), topk; argsort and msort are compositions in
:mod:`reference.ops.functions.reductions`.

Outputs are ordered (indices, values) so that the saved ``result`` is the indices, as PyTorch
saves them; the VJP scatters the gradient to them (``value_selecting_reduction_backward``) and
the JVP gathers the tangent there.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry."""

from __future__ import annotations

import numpy as np

from reference.backend import namespace_of
from reference.ops.rules.reductions import SELECTION_ERROR, _batch_multi, select_backward, select_jvp
from reference.ops.rules.registry import rule


def sort_perm(x, dim, descending):
    """A stable sort's permutation along ``dim``: NaN last ascending, first descending; equal
    elements keep their order either way (PyTorch's CPU sort is stable)."""
    xp = namespace_of(x)
    if not descending:
        return xp.argsort(x, axis=dim, kind="stable")
    n = x.shape[dim]
    rev = xp.flip(x, axis=dim)
    perm = xp.argsort(rev, axis=dim, kind="stable")
    return xp.flip(n - 1 - perm, axis=dim)


def sort_kernel(x, dim, descending):
    xp = namespace_of(x)
    if x.ndim == 0:
        return xp.zeros((), dtype=np.int64), x.copy()
    perm = sort_perm(x, dim, descending)
    return perm.astype(np.int64), xp.take_along_axis(x, perm, axis=dim)


def topk_kernel(x, k, dim, largest, sorted):
    xp = namespace_of(x)
    if x.ndim == 0:
        return xp.zeros((), dtype=np.int64), x.copy()
    perm = xp.take(sort_perm(x, dim, largest), xp.arange(k), axis=dim)
    return perm.astype(np.int64), xp.take_along_axis(x, perm, axis=dim)


for _name, _node in (("sort", "SortBackward0"), ("sort_stable", "SortBackward1")):
    rule(
        _name,
        _node,
        ("self",),
        forward=sort_kernel,
        outputs=2,
        error=SELECTION_ERROR,
        grads=(lambda c, g: select_backward(g[1], c.dim, c.result, c.shapes[0], True),),
        saves={"result": (0,)},
        jvp=lambda c, ts: (None, select_jvp(ts[0], c.dim, c.result[0], True)),
        batch=_batch_multi,
    )
rule(
    "topk",
    "TopkBackward0",
    ("self",),
    forward=topk_kernel,
    outputs=2,
    grads=(lambda c, g: select_backward(g[1], c.dim, c.result, c.shapes[0], True),),
    saves={"result": (0,)},
    jvp=lambda c, ts: (None, select_jvp(ts[0], c.dim, c.result[0], True)),
    batch=_batch_multi,
    error=SELECTION_ERROR,
)
