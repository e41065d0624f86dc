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
from reference.backend import add_at, namespace_of
from reference.errors import REFERENCE_U
from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.rule import AUTO_LINEAR
from reference.ops.rules.indexing import _leading_batch
from reference.ops.rules.registry import RULES, rule


def _gather(x, index, weight, in_shape, out_shape, value=None, bweight=None, bindex=None, dweight=None):
    out = K.window_gather(x, index, weight, in_shape, out_shape)
    if value:  # constant padding: positions outside the input read ``value``
        xp = namespace_of(out)
        outside = xp.asarray((index < 0).all(axis=1).reshape(tuple(out_shape)))  # the host table, moved
        out = out + outside.astype(out.dtype) * xp.asarray(value, dtype=out.dtype)
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


# ---- interpolating upsampling (linear, bilinear, trilinear, bicubic) ------------------------------
# y[o] = sum_k w[o,k] x[i[o,k]]; the kernel computes each weight from the source coordinate
# src = s·(o + 1/2) - 1/2 (align_corners=False, s = in/out or 1/scale_factor, clamped at 0 for the
# linear modes) or src = s·o (align_corners=True, s = (in-1)/(out-1)), in its compute dtype. So a
# framework's weights are not the exact ones, and the error of y is, to first order,
#
#   |err y| <= sum_k |w| e_x                                (input errors, the map on |w|)
#            + (K·u_acc + u)·sum_k |w||x| + u|y| + (K+1)·eta   (the sum of K products, errors.products)
#            + delta_w · sum_k |x[i[o,k]]|                   (the weights' own error, |dw| <= delta_w)
#
# delta_w, per weight (weights of one axis are at most 1 in magnitude, so an error of one axis's
# weight is not amplified by the others' beyond 1):
# * the coordinate: s rounded (u·s), s·(o + 1/2) rounded (u·|s(o+1/2)|), minus 1/2 rounded
#   (u·|src|): |d src| <= 3u·(|src| + 1/2) <= 3u·(n_in + 1/2) on an axis of n_in inputs (the clamp
#   keeps |src| <= n_in). t = src - floor(src) is exact (Sterbenz), so every weight is a function of
#   the rounded src; the interpolant is continuous in src (piecewise linear, or C1 cubic with
#   clamped taps), so a floor that flips changes y by no more than the slope times |d src|. The
#   slope of a weight in t: linear 1; PyTorch's cubic convolution (A = -0.75), on |d| <= 1
#   w = 1.25|d|^3 - 2.25|d|^2 + 1 has |w'| <= 1.35 (at |d| = 0.6), on 1 < |d| < 2
#   w' = A(3d^2 - 10d + 8), |w'| <= 0.75; so slope <= 1 (linear), 1.35 (cubic) per axis.
# * the weight's evaluation from t: linear 1 - t, one rounding of a value <= 1: u. Cubic (Horner,
#   as PyTorch's cubic_convolution1/2; magnitudes over the argument's range): c1 on [0, 1], five
#   roundings of intermediates bounded by 1.25, 2.25, 2.25, 1, 1, each carried by factors t <= 1:
#   <= 7.75u, plus the rounding of 1 - t (u) times its slope 1.35; c2 on [1, 2]: a·x (<= 1.5,
#   carried by x^2 <= 4: 6u), - 5a (<= 3, x^2: 12u), ·x (<= 4.5, x: 9u), + 8a (<= 3, x: 6u), ·x (<= 3.1u),
#   - 4a (<= 0.1u): 36.2u, plus the rounding of t + 1 or 2 - t (2u) times its slope 0.75: 37.7u.
#   So gamma = 1 (linear), 38 (cubic) units of u per axis's weight.
# * d axes: w = prod of the axes' weights, each |w_a| <= 1, and d - 1 roundings of the product:
#   delta_w <= slope·sum_axes 3u(n_in + 1/2) + (d·gamma + d - 1)·u.
# The backward scatter-adds w[o,k]·g[o] into x's positions: the same terms, transposed (the weight
# error multiplies sum |g| over the outputs that read the position). The frameworks compute the
# coordinate in the input dtype or wider (PyTorch's CPU kernels in opmath, float32 for
# float16/bfloat16): u of the input dtype bounds either.


def _interp_bound(slope, gamma, transpose):
    def bound(p, arrays, errs, params, outs):
        x = np.asarray(arrays[0], dtype=np.float64)
        e = errs[0]
        index, weight = params["index"], np.abs(np.asarray(params["weight"], dtype=np.float64))
        ones = np.where(index >= 0, 1.0, 0.0)
        u, u_acc = p.u + REFERENCE_U, p.u_acc + REFERENCE_U
        spatial = params["in_shape"]  # the coordinates' axes (the backward's output)
        d = len(spatial)
        delta_w = slope * sum(3 * u * (n + 0.5) for n in spatial) + (d * gamma + d - 1) * u
        table = {**params, "value": None, "bweight": None, "bindex": None, "dweight": None}
        if transpose:

            def apply_map(a, w):
                return K.window_scatter(a, index, w, params["in_shape"], params["out_shape"])

            k = _backward_terms(arrays, params)
        else:

            def apply_map(a, w):
                return _gather(a, **{**table, "weight": w})

            k = _forward_terms(arrays, params)
        ax = np.abs(x)
        out = np.asarray(outs[0], dtype=np.float64)
        magnitude = apply_map(ax, weight)
        err = (k * u_acc + u) * magnitude + u * np.abs(out) + (k + 1) * p.eta
        err = err + delta_w * apply_map(ax, ones)
        if e is not None:
            err = err + apply_map(np.asarray(e, dtype=np.float64), weight)
        return [err]

    return bound


def _interp(slope, gamma, what):
    src = f"{what}: weights from a source coordinate rounded in the compute dtype (pooling.py derivation)"
    return (
        errors.derived_bound(_interp_bound(slope, gamma, False), src),
        errors.derived_bound(_interp_bound(slope, gamma, True), src + ", transposed"),
    )


_LINEAR = _interp(1.0, 1.0, "linear interpolation")
_CUBIC = _interp(1.35, 38.0, "cubic convolution A=-0.75")

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
    # the weights come from a rounded source coordinate (derivation above _interp_bound)
    ("upsample_linear1d", "UpsampleLinear1DBackward0", _LINEAR),
    ("upsample_bilinear2d", "UpsampleBilinear2DBackward0", _LINEAR),
    ("upsample_bicubic2d", "UpsampleBicubic2DBackward0", _CUBIC),
    ("upsample_trilinear3d", "UpsampleTrilinear3DBackward0", _LINEAR),
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
    plane = namespace_of(flat).arange(math.prod(lead), dtype=np.int64).reshape(lead + (1,) * len(out_shape))
    return (values, flat), flat + plane * math.prod(in_shape)  # aux: indices into the whole input


def _max_jvp(c, ts):
    """The tangent at each window's argmax (the returned indices are per plane)."""
    flat = c.result[1]._data
    lead = flat.shape[: flat.ndim - len(c.out_shape)]
    plane = namespace_of(flat).arange(math.prod(lead), dtype=np.int64).reshape(lead + (1,) * len(c.out_shape))
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

    xp = namespace_of(src)
    flat = _argmax_flat(x, index, in_shape, out_shape)
    lead = tuple(src.shape[: src.ndim - len(in_shape)])
    P = math.prod(lead)  # an empty batch has P = 0 planes: reshape with explicit sizes
    planes = src.reshape(P, math.prod(in_shape))
    picked = xp.take_along_axis(planes, flat.reshape(P, math.prod(out_shape)), axis=1)
    return picked.reshape(lead + tuple(out_shape))


def _scatter_forward(g, x, index, in_shape, out_shape):
    """The transpose of :func:`_select_forward`: g added at each window's argmax of x."""

    xp = namespace_of(g)
    flat = _argmax_flat(x, index, in_shape, out_shape)
    lead = tuple(g.shape[: g.ndim - len(out_shape)])
    P = math.prod(lead)
    out = xp.zeros((P, math.prod(in_shape)), dtype=g.dtype)
    n_out = math.prod(out_shape)
    rows = xp.broadcast_to(xp.arange(P)[:, None], (P, n_out))
    add_at(out, (rows.ravel(), flat.reshape(P, n_out).ravel()), g.reshape(P, n_out).ravel())
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
    plane = namespace_of(flat).arange(math.prod(lead), dtype=np.int64).reshape(lead + (1,) * len(out_shape))
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


# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: the primitives of this family that accept complex tensors (each checked against torch in
#: tests/autograd/test_torch_complex.py); the others refuse them with PyTorch's error
COMPLEX_INPUTS = """
    channel_shuffle channel_shuffle_backward col2im col2im_backward constant_pad_nd
    constant_pad_nd_backward im2col im2col_backward pixel_shuffle pixel_shuffle_backward
    pixel_unshuffle pixel_unshuffle_backward reflection_pad1d reflection_pad1d_backward
    reflection_pad2d reflection_pad2d_backward reflection_pad3d reflection_pad3d_backward
    replication_pad1d replication_pad1d_backward replication_pad2d replication_pad2d_backward
    replication_pad3d replication_pad3d_backward
"""
