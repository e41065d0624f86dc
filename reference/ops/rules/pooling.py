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

from reference import errors
from reference.autograd.batching import ARGMAX_AUX
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


def window_rule(name, node, backward_node, error=None, backward_error=None):
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
        error=error,
    )
    rule(
        back,
        backward_node,
        ("grad_output",),
        forward=_scatter,
        grads=(lambda c, g: apply(RULES[name], (g,), _forward_params(c.params)),),
        jvp=AUTO_LINEAR,
        batch=_leading_batch,
        error=backward_error,
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


# ---- rounding-error declarations (reference.errors) ----------------------------------------------
# A window map's output is sum_j w_j x[index_j] over its table row; its backward scatter-adds
# w_j g into the input positions. With non-negative weights both are sums of products
# (errors.products): M is the map on |x| (the weights enter as they are, all >= 0), and K, per
# element, is the number of terms that reach it plus one rounding for the weight (the division of
# average pooling, PyTorch's sum-then-divide: (k-1)·u·sum|x|/d + u·|y|, inside (k+1)·u·M + u·|y|).
# A map whose weights are all 1 and whose table rows hold one entry moves values: errors.GATHER.


def _forward_terms(arrays, params):
    """Per output: the valid entries of its table row (positions that read the input), plus one."""
    index = params["index"]
    return (index >= 0).sum(axis=1).reshape(params["out_shape"]) + 1


def _backward_terms(arrays, params):
    """Per input position: how many table entries scatter into it, plus one."""
    index = params["index"]
    n = math.prod(params["in_shape"])
    counts = np.bincount(index[index >= 0].ravel(), minlength=n)[:n]
    return counts.reshape(params["in_shape"]) + 1


def _pad_window(e_in, params, outs):
    """constant_pad_nd on the errors: the fill value is exact (no error where the output is it)."""
    return [np.abs(np.asarray(_gather(e_in[0], **{**params, "value": None}), dtype=np.float64))]


_SUM = errors.products(_forward_terms, "window sum with non-negative weights (and the division by its count)")
_SCATTER = errors.products(_backward_terms, "scatter-add of w·g into the input, any order")
_PAD = errors.ErrorSpec(
    "gather", 0.0, "values are moved; the fill value is exact", extra={"window": _pad_window}
)
_GATHER_SCATTER = (errors.GATHER, _SCATTER)  # moves values; its transpose adds the ones that meet

for _name, _node, _errs in (
    ("avg_pool2d", "AvgPool2DBackward0", (_SUM, _SCATTER)),
    ("avg_pool3d", "AvgPool3DBackward0", (_SUM, _SCATTER)),
    ("adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", (_SUM, _SCATTER)),
    ("adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0", (_SUM, _SCATTER)),
    ("constant_pad_nd", "ConstantPadNdBackward0", (_PAD, errors.GATHER)),
    ("reflection_pad1d", "ReflectionPad1DBackward0", _GATHER_SCATTER),
    ("reflection_pad2d", "ReflectionPad2DBackward0", _GATHER_SCATTER),
    ("reflection_pad3d", "ReflectionPad3DBackward0", _GATHER_SCATTER),
    ("replication_pad1d", "ReplicationPad1DBackward0", _GATHER_SCATTER),
    ("replication_pad2d", "ReplicationPad2DBackward0", _GATHER_SCATTER),
    ("replication_pad3d", "ReplicationPad3DBackward0", _GATHER_SCATTER),
    ("upsample_nearest1d", "UpsampleNearest1DBackward0", _GATHER_SCATTER),
    ("upsample_nearest2d", "UpsampleNearest2DBackward0", _GATHER_SCATTER),
    ("upsample_nearest3d", "UpsampleNearest3DBackward0", _GATHER_SCATTER),
    ("upsample_nearest_exact1d", "UpsampleNearestExact1DBackward0", _GATHER_SCATTER),
    ("upsample_nearest_exact2d", "UpsampleNearestExact2DBackward0", _GATHER_SCATTER),
    ("upsample_nearest_exact3d", "UpsampleNearestExact3DBackward0", _GATHER_SCATTER),
    # Not declared: the interpolation weights are computed by the kernel in the compute dtype from
    # the source coordinate (scale·(i + 0.5) - 0.5), so a weight is off by about u·|coordinate|, an
    # error not bounded by a multiple of M = sum w·|x| (a small weight's neighbour enters with it);
    # bicubic's weights are negative as well. Their error model needs that analysis first.
    ("upsample_linear1d", "UpsampleLinear1DBackward0", (None, None)),
    ("upsample_bilinear2d", "UpsampleBilinear2DBackward0", (None, None)),
    ("upsample_bicubic2d", "UpsampleBicubic2DBackward0", (None, None)),
    ("upsample_trilinear3d", "UpsampleTrilinear3DBackward0", (None, None)),
    ("im2col", "Im2ColBackward0", _GATHER_SCATTER),
    ("col2im", "Col2ImBackward0", (_SUM, errors.GATHER)),
    ("pixel_shuffle", "PixelShuffleBackward0", (errors.GATHER, errors.GATHER)),
    ("pixel_unshuffle", "PixelUnshuffleBackward0", (errors.GATHER, errors.GATHER)),
    ("channel_shuffle", "ChannelShuffleBackward0", (errors.GATHER, errors.GATHER)),
    # forward: each output position receives one input value or 0; backward: a gather (bindex)
    ("max_unpool2d", "MaxUnpool2DBackward0", (errors.GATHER, errors.GATHER)),
    ("max_unpool3d", "MaxUnpool3DBackward0", (errors.GATHER, errors.GATHER)),
    ("embedding", "EmbeddingBackward0", _GATHER_SCATTER),
):
    window_rule(_name, _node, _node.replace("Backward0", "BackwardBackward0"), *_errs)


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
    error=errors.GATHER,
)
ARGMAX_AUX["max_pool2d"] = 2  # its aux: argmax over the 2 spatial dims, batched by vmap


# The other max pools find the argmax again from the saved input inside their backward, a rule of
# its own with the input as a (non-differentiable) tensor argument: under vmap its batch rule sees
# the physical values, so no argmax has to cross the transform as aux (the core's vmap batches
# the aux of the rules in ``batching.ARGMAX_AUX``, max_pool2d's).


def _argmax_flat(x, index, in_shape, out_shape):
    _, flat = K.window_argmax(x, index, in_shape, out_shape)
    return flat


def _select_forward(src, x, index, in_shape, out_shape):
    """src[..., argmax over each window of x]: the tangent (or gradient) at the argmax."""
    from reference.backend import namespace_of

    xp = namespace_of(src)
    flat = _argmax_flat(x, index, in_shape, out_shape)
    lead = tuple(src.shape[: src.ndim - len(in_shape)])
    P = math.prod(lead)  # an empty batch has P = 0 planes: reshape with explicit sizes
    planes = src.reshape(P, math.prod(in_shape))
    picked = xp.take_along_axis(planes, flat.reshape(P, math.prod(out_shape)), axis=1)
    return picked.reshape(lead + tuple(out_shape))


def _scatter_forward(g, x, index, in_shape, out_shape):
    """The transpose of :func:`_select_forward`: g added at each window's argmax of x."""
    from reference.backend import namespace_of

    xp = namespace_of(g)
    flat = _argmax_flat(x, index, in_shape, out_shape)
    lead = tuple(g.shape[: g.ndim - len(out_shape)])
    P = math.prod(lead)
    out = xp.zeros((P, math.prod(in_shape)), dtype=g.dtype)
    n_out = math.prod(out_shape)
    rows = xp.broadcast_to(xp.arange(P)[:, None], (P, n_out))
    xp.add.at(out, (rows.ravel(), flat.reshape(P, n_out).ravel()), g.reshape(P, n_out).ravel())
    return out.reshape(lead + tuple(in_shape))


def _two_leading_batch(b, params):
    return apply(b.rule, (b.expanded(0), b.expanded(1)), params), 0


def _select_window(e_in, params, outs):
    """max_pool_select on the errors: the largest error of ``source`` its window could select."""
    values, _ = K.window_argmax(e_in[0], params["index"], params["in_shape"], params["out_shape"])
    return [np.abs(np.asarray(values, dtype=np.float64))]


_SELECT = errors.ErrorSpec(
    "gather", 0.0, "selects source values at the argmax", extra={"window": _select_window}
)


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
    error=_SELECT,
)


def _scatter_steps(g, x, index, in_shape, out_shape):
    """max_pool_scatter as a scatter-add of g at the argmax of x (itself, not of |x|), so its error is
    that of scatter_add (errors.products: K per input position = the windows whose argmax it is)."""
    flat = _argmax_flat(x._data, index, in_shape, out_shape)
    lead = tuple(x.shape[: x.ndim - len(in_shape)])
    plane = np.arange(math.prod(lead), dtype=np.int64).reshape(lead + (1,) * len(out_shape))
    return A.scatter_add(g, flat + plane * math.prod(in_shape), tuple(x.shape))


rule(
    "max_pool_scatter",
    "MaxPoolWithIndicesBackward0",
    ("grad_output", "self"),
    forward=_scatter_forward,
    grads=(lambda c, g: apply(RULES["max_pool_select"], (g, c.self), _max_params(c)), None),
    saves={"self": (0,)},
    jvp=(lambda c, t: apply(RULES["max_pool_scatter"], (t, c.self), _max_params(c)), None),
    batch=_two_leading_batch,
    error=errors.composite(_scatter_steps, "scatter-add of the gradient at each window's argmax"),
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
        error=errors.GATHER,
    )


def max_window(name, input, index, in_shape, out_shape, plane_size=None):
    params = {"index": index, "in_shape": tuple(in_shape), "out_shape": tuple(out_shape)}
    if plane_size is not None:
        params["plane_size"] = plane_size
    return apply(RULES[name], (input,), params)
