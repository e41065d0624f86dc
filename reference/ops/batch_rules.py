"""Batch rules of the table's neural-network primitives (convolution, its backward, batch norm).

Convolution: when the physical values are plain arrays (not batched again further out, no
tangents, not requiring grad -- the case of ``vmap(grad(net))``), the rules call
:mod:`reference.conv`'s array-level batched kernels: ``batched_convolution`` (functorch's
fold-the-batch-into-groups rule) and ``batched_convolution_backward`` (all seven combinations of
batched grad_output / input / weight, never a loop). Otherwise (``grad(vmap(f))``, nested
transforms) the batch is folded with differentiable Tensor ops around the primitive itself, so
the outer transforms see ordinary convolutions: the input's batch into N, or, with a batched
weight, into the channels and groups.

Batch norm (and its backward): the batch joins the channels, (B, N, C, ...) -> (N, B*C, ...),
so per-sample statistics are per-channel statistics of the folded tensor.
"""

from __future__ import annotations

import numpy as np

from reference.autograd.batching import VmapError
from reference.autograd.dispatch import apply
from reference.autograd.tensor import _make
from reference.ops import api as A


def _plain(values):
    return all(
        v is None or (v._batched is None and v._tangents is None and not v.requires_grad) for v in values
    )


# ---- convolution -------------------------------------------------------------------------------------


def convolution_batch(b, params):
    from reference.conv import batched_convolution

    conv = params["conv"]
    x, w, bias = (b.front(i) for i in range(3))
    xb, wb = x is not None, w is not None
    if not (xb or wb):  # only the bias batched: one convolution, a batch of biases
        y = A.convolution(b.values[0], b.values[1], None, **conv)
        return y + A.reshape(bias, (b.size, 1, -1) + (1,) * (y.ndim - 2)), 0
    if _plain(b.values):
        x_arr = (x if xb else b.values[0])._data
        w_arr = (w if wb else b.values[1])._data
        if bias is not None:
            bias_arr = bias._data
        else:
            bias_arr = None if b.values[2] is None else b.values[2]._data
        out = batched_convolution(
            x_arr,
            w_arr,
            bias_arr,
            *A.conv_geometry(conv),
            input_batched=xb,
            weight_batched=wb,
        )
        return _make(out.astype(np.result_type(x_arr, w_arr), copy=False)), 0
    return _fold_convolution(b, conv), 0


def _fold_convolution(b, conv):
    """functorch's rule with Tensor ops: differentiable, so outer transforms see through it."""
    n = b.size
    x, w = b.front(0), b.front(1)
    bias = b.values[2] if b.bdims[2] is None else b.front(2)
    if w is None:  # only the input batched: B joins N
        xs = tuple(x.shape)
        y = A.convolution(A.reshape(x, (n * xs[1],) + xs[2:]), b.values[1], None, **conv)
        y = A.reshape(y, (n, xs[1]) + tuple(y.shape[1:]))
    else:
        x = b.expanded(0)
        xs, ws = tuple(x.shape), tuple(w.shape)
        g = conv["groups"]
        xf = A.reshape(A.transpose(x, 0, 1), (xs[1], n * xs[2]) + xs[3:])
        # (B, O, C/g, ...) -> (B*O, C/g, ...); transposed (B, C, O/g, ...) -> (B*C, O/g, ...): either
        # way group b*g + j of the folded conv is group j of sample b
        wf = A.reshape(w, (n * ws[1],) + ws[2:])
        y = A.convolution(xf, wf, None, **{**conv, "groups": n * g})
        ys = tuple(y.shape)
        y = A.transpose(A.reshape(y, (ys[0], n, ys[1] // n) + ys[2:]), 0, 1)
    if bias is not None:
        shape = (n if b.bdims[2] is not None else 1, 1, -1) + (1,) * (y.ndim - 3)
        y = y + A.reshape(bias, shape)
    return y


def convolution_backward_batch(b, params):
    """Plain physical values: reference.conv's seven-combination rule. Otherwise each requested
    gradient comes from the (differentiable) primitive per sample, stacked."""
    from reference.conv import batched_convolution_backward

    conv, mask = params["conv"], params["output_mask"]
    flags = tuple(d is not None for d in b.bdims)
    if _plain(b.values):
        arrays = [(b.front(i) if flags[i] else b.values[i])._data for i in range(3)]
        gi, gw, gb = batched_convolution_backward(
            *arrays, params["bias_sizes"], *A.conv_geometry(conv), list(mask), batched=flags
        )
        shapes = [(b.size,) + tuple(t.shape) for t in b.inputs[1:3]]
        channels = b.inputs[0].shape[1]
        fill = (shapes[0], shapes[1], (b.size, channels))
        dt = arrays[0].dtype
        outs = [np.zeros(s, dtype=dt) if a is None else a for a, s in zip((gi, gw, gb), fill)]
        return tuple((_make(np.ascontiguousarray(o)), 0) for o in outs)
    per_sample = []
    for k in range(b.size):
        args = tuple(v if d is None else A.select(v, d, k) for v, d in zip(b.values, b.bdims))
        per_sample.append(apply(b.rule, args, params))
    return tuple((A.stack([s[j] for s in per_sample], 0), 0) for j in range(3))


# ---- as_strided -------------------------------------------------------------------------------------


def as_strided_batch(b, params):
    """Strides and offset are relative to the logical storage, i.e. the logical root's elements
    in order. Each sample's root is laid out contiguously (a copy only if its physical value is
    not), one after the other, and one as_strided with a leading stride of the root's size picks
    every sample's view out of it."""
    from reference.autograd.batching import move_to_front, physical

    x = b.inputs[0]
    root = x._base if x._base is not None else x
    p = physical(root, b.level)
    if p is None:
        raise VmapError("vmap: as_strided of a batched view whose base is not batched")
    v = A.contiguous(move_to_front(*p))
    size, stride = (b.size,) + tuple(params["size"]), (root.numel(),) + tuple(params["stride_"])
    return A.as_strided(v, size, stride, v.storage_offset() + params["storage_offset"]), 0


# ---- batch norm -----------------------------------------------------------------------------------


def _fold_channels(x, n):
    """(B, N, C, ...) -> (N, B*C, ...)."""
    s = tuple(x.shape)
    return A.reshape(A.transpose(x, 0, 1), (s[1], n * s[2]) + s[3:])


def _unfold_channels(y, n):
    """(N, B*C, ...) -> (B, N, C, ...)."""
    s = tuple(y.shape)
    return A.transpose(A.reshape(y, (s[0], n, s[1] // n) + s[2:]), 0, 1)


def _per_channel(b, i):
    """A (C,) argument as (B*C,): batched ones flattened, unbatched ones repeated."""
    if b.values[i] is None:
        return None
    return A.reshape(A.contiguous(b.expanded(i)), (-1,))


def batch_norm_batch(b, params):
    if params["training"] and (b.values[3] is not None or b.values[4] is not None):
        raise VmapError(
            "vmap: batch_norm in training mode with running_mean/running_var would update one set of "
            "running statistics from every sample; pass running_mean=None, running_var=None (or eval mode)"
        )
    n = b.size
    args = (_fold_channels(b.expanded(0), n),) + tuple(_per_channel(b, i) for i in range(1, 5))
    return _unfold_channels(apply(b.rule, args, params), n), 0


def batch_norm_backward_batch(b, params):
    n = b.size
    g, x = _fold_channels(b.expanded(0), n), _fold_channels(b.expanded(1), n)
    rest = tuple(_per_channel(b, i) for i in range(2, 5))
    gx, gw, gb = apply(b.rule, (g, x) + rest, params)
    channels = b.inputs[1].shape[1]
    return (
        (_unfold_channels(gx, n), 0),
        (A.reshape(gw, (n, channels)), 0),
        (A.reshape(gb, (n, channels)), 0),
    )
