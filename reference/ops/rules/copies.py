"""The functional copies of the view ops (``expand_copy``, ``permute_copy``, ``unbind_copy``...)
and ``unsafe_split``/``unsafe_chunk``.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry.

PyTorch gives each ``<view>_copy`` op its own autograd node (``ExpandBackward0_copy``...), generated
from the view's entry in derivatives.yaml: the same derivative as the view, on an output that is a
new tensor rather than an alias. Here every such op is one primitive over one kernel: the output
geometry ``geoms`` (sizes, strides and offset of each output, in elements of the input's row-major
layout, computed by the view function itself on a contiguous stand-in so that its argument checks
and errors are the view's) read out of the input into new arrays. Its VJP is the view's (the
``as_strided`` backward of that geometry: a scatter-add into the input's layout, so an expanded
or overlapping geometry sums), its JVP is the op itself on the tangent (linear), its batch rule
the same copy of the physical value with a leading batch dim (stride: one sample's numel).

``unsafe_split``/``unsafe_chunk`` (node ``UnsafeSplitBackward0``) are split without view tracking:
PyTorch returns tensors that share the input's storage but are not marked as views; the
reference's outputs are copies (the values, gradients, JVP and batching are the same; writing
into an output does not write into the input, as it would in PyTorch, where such writes are
unchecked).
"""

from __future__ import annotations

import math

from reference import errors
from reference.autograd.dispatch import apply
from reference.autograd.graph import storage_indices
from reference.autograd.layout import contiguous_strides
from reference.backend import namespace_of
from reference.ops import api as A
from reference.ops.rule import AUTO_LINEAR
from reference.ops.rules.registry import rule


def _forward(multi):
    def forward(a, geoms):
        xp = namespace_of(a)
        flat = xp.reshape(a, (-1,))
        outs = tuple(
            xp.take(flat, xp.asarray(storage_indices(size, stride, offset)))
            if math.prod(size)
            else xp.zeros(tuple(size), dtype=a.dtype)
            for size, stride, offset in geoms
        )
        return outs if multi else outs[0]

    return forward


def _backward(g, geom, shape):
    size, stride, offset = geom
    return A.as_strided_backward(
        g,
        {
            "size": size,
            "stride_": stride,
            "storage_offset": offset,
            "in_size": tuple(shape),
            "in_stride": contiguous_strides(shape),
            "in_offset": 0,
            "storage_size": math.prod(shape),
        },
    )


def _vjp(c, gs):
    shape = c.shapes[0]
    total = None
    for g, geom in zip(gs, c.params["geoms"]):
        if g is None:
            continue
        part = _backward(g, geom, shape)
        total = part if total is None else total + part
    return (total if total is not None else A.zeros(shape, dtype=c.dtypes[0]),)


def _batch(b, params):
    """The same copy of the physical value, batch dim first: each sample's logical values follow
    one another (stride: a sample's numel) in the contiguous physical value."""
    x = A.contiguous(b.front(0))
    n = math.prod(b.inputs[0].shape)
    geoms = tuple(
        ((b.size,) + tuple(size), (n,) + tuple(stride), offset) for size, stride, offset in params["geoms"]
    )
    out = apply(b.rule, (x,), {"geoms": geoms})
    return tuple((o, 0) for o in out) if isinstance(out, tuple) else (out, 0)


def _copy_rule(name, node, multi):
    fields = {"vjp": _vjp} if multi else {"grads": (lambda c, g: _vjp(c, (g,))[0],)}
    rule(
        name,
        node,
        ("self",),
        forward=_forward(multi),
        outputs=-1 if multi else 1,
        jvp=AUTO_LINEAR,
        batch=_batch,
        error=errors.GATHER,
        complex_inputs=True,  # a copy of a geometry: linear, defined on complex tensors like the views
        **fields,
    )


for _name, _node in (
    ("expand_copy", "ExpandBackward0_copy"),
    ("alias_copy", "AliasBackward0_copy"),
    ("as_strided_copy", "AsStridedBackward0_copy"),
    ("view_copy", "ViewBackward0_copy"),
    ("permute_copy", "PermuteBackward0_copy"),
    ("unfold_copy", "UnfoldBackward0_copy"),
    ("squeeze_copy", "SqueezeBackward0_copy"),
    ("squeeze_copy_dim", "SqueezeBackward1_copy"),
    ("squeeze_copy_dims", "SqueezeBackward2_copy"),
    ("unsqueeze_copy", "UnsqueezeBackward0_copy"),
    ("transpose_copy", "TransposeBackward0_copy"),
    ("t_copy", "TBackward0_copy"),
):
    _copy_rule(_name, _node, False)
for _name, _node in (
    ("split_with_sizes_copy", "SplitWithSizesBackward0_copy"),
    ("unbind_copy", "UnbindBackward0_copy"),
    ("unsafe_split", "UnsafeSplitBackward0"),
    ("unsafe_split_with_sizes", "UnsafeSplitWithSizesBackward0"),
):
    _copy_rule(_name, _node, True)
