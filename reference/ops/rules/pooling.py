"""Windowed ops over the trailing (spatial) dims: pooling, and the linear window maps that padding,
resampling, im2col/col2im, pixel shuffles and max-unpooling share.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry.

A *window map* is linear: for each output position it reads a few input positions with weights
(an index/weight table built from shapes by the calling function, passed as parameters; see
:func:`reference.ops.kernels.window_gather`). :func:`window_rule` declares such an op and its
backward as a pair, each the other's VJP (the transpose of a linear map is linear, so every
order is exact), both ``AUTO_LINEAR`` in forward mode, both mapping leading dims independently
under vmap. Max pooling keeps the argmax as ``aux``; its VJP scatters into it and its JVP takes
the tangent there.
"""

from __future__ import annotations

import math

import numpy as np

from reference.autograd.dispatch import apply
from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.rule import AUTO_LINEAR
from reference.ops.rules.indexing import _leading_batch
from reference.ops.rules.registry import RULES, rule


def _gather(x, index, weight, in_shape, out_shape, value=None, bweight=None, bindex=None, dweight=None):
    out = K.window_gather(x, index, weight, in_shape, out_shape)
    if value:  # constant padding: positions outside the input read ``value``
        outside = (index < 0).all(axis=1).reshape(tuple(out_shape))
        out = out + outside.astype(out.dtype) * np.asarray(value, dtype=out.dtype)
        out = out.astype(x.dtype, copy=False)
    return out


def _scatter(g, index, weight, in_shape, out_shape, value=None, bweight=None, bindex=None, dweight=None):
    if bindex is not None:  # a backward that is not the forward's transpose (max_unpool's gather)
        return K.window_gather(g, bindex, np.ones(bindex.shape), out_shape, in_shape)
    return K.window_scatter(g, index, weight if bweight is None else bweight, in_shape, out_shape)


def _backward_params(params):
    return {**params, "value": None}


def _forward_params(params):
    """The gradient of the backward: the forward map with the backward's weights, no fill."""
    p = {**params, "value": None}
    if params.get("bweight") is not None:
        p["weight"] = params["bweight"]
    if params.get("dweight") is not None:  # embedding: the double backward does not rescale by frequency
        p["weight"] = params["dweight"]
    if params.get("bindex") is not None:  # the transpose of the backward's gather, as a gather
        n_out = math.prod(params["out_shape"])
        p["index"], p["weight"] = K.transpose_table(params["bindex"], np.ones(params["bindex"].shape), n_out)
        p["bindex"] = None
    return p


def window_rule(name, node, backward_node):
    """Declare the window map ``name`` and its backward ``name + "_backward"`` (each the other's VJP)."""
    back = name + "_backward"
    rule(
        name,
        node,
        ("self",),
        forward=_gather,
        grads=(lambda c, g: apply(RULES[back], (g,), _backward_params(c.params)),),
        jvp=(lambda c, t: apply(RULES[name], (t,), {**c.params, "value": None}),),
        batch=_leading_batch,
    )
    rule(
        back,
        backward_node,
        ("grad_output",),
        forward=_scatter,
        grads=(lambda c, g: apply(RULES[name], (g,), _forward_params(c.params)),),
        jvp=AUTO_LINEAR,
        batch=_leading_batch,
    )


def window_map(name, input, index, weight, in_shape, out_shape, **extra):
    """Apply window map ``name`` to ``input`` with a table from :func:`K.combine_axes` & co."""
    params = {
        "index": index,
        "weight": weight,
        "in_shape": tuple(in_shape),
        "out_shape": tuple(out_shape),
        "value": extra.get("value"),
        "bweight": extra.get("bweight"),
        "bindex": extra.get("bindex"),
        "dweight": extra.get("dweight"),
    }
    return apply(RULES[name], (input,), params)


for _name, _node in (
    ("avg_pool2d", "AvgPool2DBackward0"),
    ("avg_pool3d", "AvgPool3DBackward0"),
    ("adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0"),
    ("adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0"),
    ("constant_pad_nd", "ConstantPadNdBackward0"),
    ("reflection_pad1d", "ReflectionPad1DBackward0"),
    ("reflection_pad2d", "ReflectionPad2DBackward0"),
    ("reflection_pad3d", "ReflectionPad3DBackward0"),
    ("replication_pad1d", "ReplicationPad1DBackward0"),
    ("replication_pad2d", "ReplicationPad2DBackward0"),
    ("replication_pad3d", "ReplicationPad3DBackward0"),
    ("upsample_nearest1d", "UpsampleNearest1DBackward0"),
    ("upsample_nearest2d", "UpsampleNearest2DBackward0"),
    ("upsample_nearest3d", "UpsampleNearest3DBackward0"),
    ("upsample_nearest_exact1d", "UpsampleNearestExact1DBackward0"),
    ("upsample_nearest_exact2d", "UpsampleNearestExact2DBackward0"),
    ("upsample_nearest_exact3d", "UpsampleNearestExact3DBackward0"),
    ("upsample_linear1d", "UpsampleLinear1DBackward0"),
    ("upsample_bilinear2d", "UpsampleBilinear2DBackward0"),
    ("upsample_bicubic2d", "UpsampleBicubic2DBackward0"),
    ("upsample_trilinear3d", "UpsampleTrilinear3DBackward0"),
    ("im2col", "Im2ColBackward0"),
    ("col2im", "Col2ImBackward0"),
    ("pixel_shuffle", "PixelShuffleBackward0"),
    ("pixel_unshuffle", "PixelUnshuffleBackward0"),
    ("channel_shuffle", "ChannelShuffleBackward0"),
    ("max_unpool2d", "MaxUnpool2DBackward0"),
    ("max_unpool3d", "MaxUnpool3DBackward0"),
    ("embedding", "EmbeddingBackward0"),
):
    window_rule(_name, _node, _node.replace("Backward0", "BackwardBackward0"))


# ---- max pooling: the argmax is the aux; gradients scatter into it --------------------------------


def _max_window(x, index, in_shape, out_shape):
    values, flat = K.window_argmax(x, index, in_shape, out_shape)
    lead = tuple(x.shape[: x.ndim - len(in_shape)])
    plane = np.arange(math.prod(lead), dtype=np.int64).reshape(lead + (1,) * len(out_shape))
    return (values, flat), flat + plane * math.prod(in_shape)  # aux: indices into the whole input


def _max_jvp(c, ts):
    """The tangent at each window's argmax (the returned indices are per plane)."""
    flat = c.result[1]._data
    lead = flat.shape[: flat.ndim - len(c.out_shape)]
    plane = np.arange(math.prod(lead), dtype=np.int64).reshape(lead + (1,) * len(c.out_shape))
    return A.take(ts[0], flat + plane * math.prod(c.in_shape)), None


rule(
    "max_pool2d",
    "MaxPool2DWithIndicesBackward0",
    ("self",),
    forward=_max_window,
    has_aux=True,
    outputs=2,
    grads=(lambda c, g: A.scatter_add(g[0], c.aux, c.shapes[0]),),
    saves={"self": (0,)},
    jvp=_max_jvp,
    batch=_leading_batch,
)


# The other max pools find the argmax again from the saved input inside their backward, a rule of
# its own with the input as a (non-differentiable) tensor argument: under vmap its batch rule sees
# the physical values, so no argmax has to cross the transform as aux (the core's vmap hands
# ``max_pool2d`` alone a batched aux).


def _argmax_flat(x, index, in_shape, out_shape):
    _, flat = K.window_argmax(x, index, in_shape, out_shape)
    return flat


def _select_forward(src, x, index, in_shape, out_shape):
    """src[..., argmax over each window of x]: the tangent (or gradient) at the argmax."""
    from reference.backend import namespace_of

    xp = namespace_of(src)
    flat = _argmax_flat(x, index, in_shape, out_shape)
    lead = tuple(src.shape[: src.ndim - len(in_shape)])
    planes = src.reshape(math.prod(lead), -1)
    picked = xp.take_along_axis(planes, flat.reshape(planes.shape[0], -1), axis=1)
    return picked.reshape(lead + tuple(out_shape))


def _scatter_forward(g, x, index, in_shape, out_shape):
    """The transpose of :func:`_select_forward`: g added at each window's argmax of x."""
    from reference.backend import namespace_of

    xp = namespace_of(g)
    flat = _argmax_flat(x, index, in_shape, out_shape)
    lead = tuple(g.shape[: g.ndim - len(out_shape)])
    P = math.prod(lead)
    out = xp.zeros((P, math.prod(in_shape)), dtype=g.dtype)
    rows = xp.broadcast_to(xp.arange(P)[:, None], (P, flat.size // max(P, 1)))
    xp.add.at(out, (rows.ravel(), flat.reshape(P, -1).ravel()), g.reshape(P, -1).ravel())
    return out.reshape(lead + tuple(in_shape))


def _two_leading_batch(b, params):
    return apply(b.rule, (b.expanded(0), b.expanded(1)), params), 0


def _max_params(c):
    return {"index": c.index, "in_shape": c.in_shape, "out_shape": c.out_shape}


rule(
    "max_pool_select",
    "MaxPoolWithIndicesBackwardBackward0",
    ("source", "self"),
    forward=_select_forward,
    grads=(lambda c, g: apply(RULES["max_pool_scatter"], (g, c.self), _max_params(c)), None),
    saves={"self": (0,)},
    jvp=(lambda c, t: apply(RULES["max_pool_select"], (t, c.self), _max_params(c)), None),
    batch=_two_leading_batch,
)
rule(
    "max_pool_scatter",
    "MaxPoolWithIndicesBackward0",
    ("grad_output", "self"),
    forward=_scatter_forward,
    grads=(lambda c, g: apply(RULES["max_pool_select"], (g, c.self), _max_params(c)), None),
    saves={"self": (0,)},
    jvp=(lambda c, t: apply(RULES["max_pool_scatter"], (t, c.self), _max_params(c)), None),
    batch=_two_leading_batch,
)


def _max_forward(x, index, in_shape, out_shape, plane_size=None):
    values, flat = K.window_argmax(x, index, in_shape, out_shape)
    return values, (flat if plane_size is None else flat % plane_size)  # per-plane tables: plane indices


for _name, _node in (
    ("max_pool3d", "MaxPool3DWithIndicesBackward0"),
    ("adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0"),
    ("adaptive_max_pool3d", "AdaptiveMaxPool3DBackward0"),
    ("fractional_max_pool2d", "FractionalMaxPool2DBackward0"),
    ("fractional_max_pool3d", "FractionalMaxPool3DBackward0"),
):
    rule(
        _name,
        _node,
        ("self",),
        forward=_max_forward,
        outputs=2,
        grads=(lambda c, g: apply(RULES["max_pool_scatter"], (g[0], c.self), _max_params(c)),),
        saves={"self": (0,)},
        jvp=lambda c, ts: (apply(RULES["max_pool_select"], (ts[0], c.self), _max_params(c)), None),
        batch=_leading_batch,
    )


def max_window(name, input, index, in_shape, out_shape, plane_size=None):
    params = {"index": index, "in_shape": tuple(in_shape), "out_shape": tuple(out_shape)}
    if plane_size is not None:
        params["plane_size"] = plane_size
    return apply(RULES[name], (input,), params)
