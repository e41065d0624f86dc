"""View primitives (outputs alias the input's storage; see dispatch.apply_view) and joining.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry."""

from __future__ import annotations

import numpy as np

from reference import errors
from reference.autograd.batching import view_rule
from reference.autograd.dispatch import apply
from reference.backend import namespace_of
from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.batch_rules import (
    as_strided_batch,
)
from reference.ops.rule import (
    AUTO_LINEAR,
    BATCH_DIM,
    SAME_VIEW,
)
from reference.ops.rules._helpers import _view_index
from reference.ops.rules.registry import rule

# ---- views (outputs alias the input's storage; see dispatch.apply_view) ---------------------------


def _index_grad(geometry):
    return lambda c, g: A.scatter_add(g, _view_index(c, geometry), c.shapes[0])


def _expand_params(p, shape, n):
    size = tuple(p["size"])
    return {"_reshape": (n,) + (1,) * (len(size) - len(shape)) + shape, "size": (n,) + size}


_PERMUTE_BATCH = view_rule(
    lambda p, shape, n: {"dims": (0,) + tuple(d + 1 for d in (p["dims"] or range(len(shape))))}
)


rule(
    "view",
    "ViewBackward0",
    ("self",),
    view=K.view_geometry,
    grads=(lambda c, g: A.reshape(g, c.shapes[0]),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {"size": (n,) + tuple(p["size"])}),
)
rule(
    "alias",
    "AliasBackward0",
    ("self",),
    view=K.alias_geometry,
    grads=(lambda c, g: g,),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: p),
)
rule(
    "permute",
    "PermuteBackward0",
    ("self",),
    view=K.permute_geometry,
    grads=(lambda c, g: A.permute(g, tuple(np.argsort(c.params["dims"]))),),
    jvp=SAME_VIEW,
    batch=_PERMUTE_BATCH,
)
for _name, _node in (("transpose", "TransposeBackward0"), ("t", "TBackward0")):
    rule(
        _name,
        _node,
        ("self",),
        view=K.permute_geometry,
        grads=(lambda c, g: A.permute(g, tuple(np.argsort(c.params["dims"]))),),
        jvp=SAME_VIEW,
        batch=_PERMUTE_BATCH,
    )
rule(
    "expand",
    "ExpandBackward0",
    ("self",),
    view=K.expand_geometry,
    grads=(lambda c, g: A.sum_to(g, c.shapes[0]),),
    jvp=SAME_VIEW,
    batch=view_rule(_expand_params),
)
rule(
    "unsqueeze",
    "UnsqueezeBackward0",
    ("self",),
    view=K.unsqueeze_geometry,
    grads=(lambda c, g: A.reshape(g, c.shapes[0]),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {"dim": p["dim"] + 1}),
)
for _suffix, _number in (
    ("", "0"),
    ("_dim", "1"),
    ("_dims", "2"),
):  # squeeze(), squeeze(d), squeeze((d, ...))
    rule(
        "squeeze" + _suffix,
        "SqueezeBackward" + _number,
        ("self",),
        view=K.squeeze_geometry,
        grads=(lambda c, g: A.reshape(g, c.shapes[0]),),
        jvp=SAME_VIEW,
        batch=view_rule(lambda p, shape, n: {"dims": tuple(d + 1 for d in p["dims"])}),
    )
rule(
    "select",
    "SelectBackward0",
    ("self",),
    view=K.select_geometry,
    grads=(_index_grad(K.select_geometry),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {**p, "dim": p["dim"] + 1}),
)
rule(
    "slice",
    "SliceBackward0",
    ("self",),
    view=K.slice_geometry,
    grads=(_index_grad(K.slice_geometry),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {**p, "dim": p["dim"] + 1}),
)
rule(
    "diagonal",
    "DiagonalBackward0",
    ("self",),
    view=K.diagonal_geometry,
    grads=(_index_grad(K.diagonal_geometry),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {**p, "dim1": p["dim1"] + 1, "dim2": p["dim2"] + 1}),
)
rule(
    "as_strided",
    "AsStridedBackward0",
    ("self",),
    view=K.as_strided_geometry,
    grads=(lambda c, g: A.as_strided_backward(g, c.params),),
    jvp=SAME_VIEW,
    batch=as_strided_batch,
)
rule(
    "unbind",
    "UnbindBackward0",
    ("self",),
    view=K.unbind_geometry,
    outputs=-1,
    vjp=lambda c, gs: (A.stack(gs, c.params["dim"]),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {**p, "dim": p["dim"] + 1}),
)
rule(
    "split",
    "SplitBackward0",
    ("self",),
    view=K.split_geometry,
    outputs=-1,
    vjp=lambda c, gs: (A.cat(gs, c.params["dim"]),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {**p, "dim": p["dim"] + 1}),
)
rule(
    "split_with_sizes",
    "SplitWithSizesBackward0",
    ("self",),
    view=K.split_geometry,
    outputs=-1,
    vjp=lambda c, gs: (A.cat(gs, c.params["dim"]),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {**p, "dim": p["dim"] + 1}),
)


def _reshape_copy_batch(b, params):
    return apply(b.rule, (b.front(0),), {"shape": (b.size,) + tuple(params["shape"])}), 0


rule(
    "reshape_copy",
    "UnsafeViewBackward0",
    ("self",),
    forward=lambda a, shape: a.copy().reshape(shape),
    grads=(lambda c, g: A.reshape(g, c.shapes[0]),),
    jvp=AUTO_LINEAR,
    batch=_reshape_copy_batch,
    error=errors.GATHER,
)

# ---- joining -------------------------------------------------------------------------------------


def _cat_grads(c, g):
    out, start = [], 0
    for shape, need in zip(c.shapes, c.needs):
        n = shape[c.dim]
        out.append(A.narrow(g, c.dim, start, n) if need else None)
        start += n
    return out


rule(
    "cat",
    "CatBackward0",
    ("tensors",),
    forward=lambda *xs, dim: namespace_of(*xs).concatenate(xs, axis=dim),
    vjp=_cat_grads,
    jvp=AUTO_LINEAR,
    batch=BATCH_DIM,
    error=errors.GATHER,
)
rule(
    "stack",
    "StackBackward0",
    ("tensors",),
    forward=lambda *xs, dim: namespace_of(*xs).stack(xs, axis=dim),
    vjp=lambda c, g: [A.select(g, c.dim, i) if need else None for i, need in enumerate(c.needs)],
    jvp=AUTO_LINEAR,
    batch=BATCH_DIM,
    error=errors.GATHER,
)

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: every primitive of this family accepts complex tensors (PyTorch defines them on complex numbers)
COMPLEX_INPUTS = True
