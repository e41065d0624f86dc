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

from reference.autograd.batching import VmapError, move_to_front, physical
from reference.autograd.dispatch import apply
from reference.autograd.tensor import _make
from reference.backend import namespace_of
from reference.conv import batched_convolution, batched_convolution_backward
from reference.conv.batched_backward import _explicit, input_gradient_as_convolution
from reference.conv.geometry import plan
from reference.ops import api as A


def _plain(values):
    return all(
        v is None or (v._batched is None and v._tangents is None and not v.requires_grad) for v in values
    )


# ---- convolution -------------------------------------------------------------------------------------


def convolution_batch(b, params):
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
        return _make(out.astype(np.result_type(x_arr.dtype, w_arr.dtype), copy=False)), 0
    return _fold_convolution(b, conv), 0


def _fold_convolution(b, conv):
    """functorch's rule with Tensor ops: differentiable, so outer transforms see through it."""
    n = b.size
    x_b, w_b = (b.bdims[i] is not None for i in range(2))
    y = _batched_conv(
        b.front(0) if x_b else b.values[0], b.front(1) if w_b else b.values[1], x_b, w_b, n, conv
    )
    bias = b.values[2] if b.bdims[2] is None else b.front(2)
    if bias is not None:
        shape = (n if b.bdims[2] is not None else 1, 1, -1) + (1,) * (y.ndim - 3)
        y = y + A.reshape(bias, shape)
    return y


def convolution_backward_batch(b, params):
    """Plain physical values: reference.conv's seven-combination rule on arrays. Otherwise the
    same fold with differentiable Tensor ops (:func:`_fold_convolution_backward`); never a loop."""
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
        xp = namespace_of(arrays[0])
        outs = [xp.zeros(s, dtype=dt) if a is None else a for a, s in zip((gi, gw, gb), fill)]
        return tuple((_make(xp.ascontiguousarray(o)), 0) for o in outs)
    return tuple((t, 0) for t in _fold_convolution_backward(b, conv, mask))


def _fold_convolution_backward(b, conv, mask):
    """functorch's convolution_backward rule with Tensor ops (differentiable, so the transforms
    recording around it — vmap(grad(f)), grad(vmap(grad(f))) — see ordinary convolutions).

    grad_input is the convolution of grad_output with the weight that
    ``input_gradient_as_convolution`` names, batched by the forward fold. grad_weight folds B
    into the groups when input and grad_output are both batched, else into the batched one's
    channels inside each group, as ``reference.conv.batched_backward`` does on arrays."""
    n = b.size
    gO_b, x_b, w_b = (d is not None for d in b.bdims)
    front = lambda i, batched: b.front(i) if batched else b.values[i]
    x_shape, w_shape = tuple(b.inputs[1].shape), tuple(b.inputs[2].shape)
    p = plan(x_shape, w_shape, *A.conv_geometry(conv))
    dtype = b.inputs[1].dtype
    outs = [A.zeros((n,) + x_shape, dtype=dtype), A.zeros((n,) + w_shape, dtype=dtype), None]
    if mask[0]:
        (stride, pads, dilation, transposed, output_padding, groups), crop = input_gradient_as_convolution(p)
        dual = dict(
            stride=stride,
            padding=pads,
            dilation=dilation,
            transposed=transposed,
            output_padding=output_padding,
            groups=groups,
        )
        gi = _batched_conv(front(0, gO_b), front(2, w_b), gO_b, w_b, n, dual)
        for d, size in enumerate(crop or ()):
            gi = A.narrow(gi, 3 + d, 0, size)
        outs[0] = gi
    if mask[1]:
        outs[1] = _batched_grad_weight(front(0, gO_b), front(1, x_b), gO_b, x_b, n, p, conv, dtype)
    if mask[2]:
        g_out = front(0, gO_b)  # (B, N, O, *S) when batched, else (N, O, *S)
        gb = A.sum(g_out, dim=(1, *range(3, g_out.ndim)) if gO_b else (0, *range(2, g_out.ndim)))
        outs[2] = gb if gO_b else A.expand(A.unsqueeze(gb, 0), (n,) + tuple(gb.shape))
    else:
        outs[2] = A.zeros((n, p.output_shape[1]), dtype=dtype)
    return outs


def _batched_conv(x, w, x_b, w_b, n, conv):
    """conv(x[k], w[k]) for every sample k as one convolution: (n, N, O, ...). ``x``/``w`` carry
    the batch first when batched; B joins N (input only) or, with a batched weight, the groups:
    (B, O, C/g, ...) -> (B*O, C/g, ...), or transposed (B, C, O/g, ...) -> (B*C, O/g, ...), so that
    group b*g + j of the folded conv is group j of sample b."""
    if not (x_b or w_b):
        y = A.convolution(x, w, None, **conv)
        return A.expand(A.unsqueeze(y, 0), (n,) + tuple(y.shape))
    if not w_b:
        xs = tuple(x.shape)
        y = A.convolution(A.reshape(x, (n * xs[1],) + xs[2:]), w, None, **conv)
        return A.reshape(y, (n, xs[1]) + tuple(y.shape[1:]))
    if not x_b:
        x = A.expand(A.unsqueeze(x, 0), (n,) + tuple(x.shape))
    xs, ws = tuple(x.shape), tuple(w.shape)
    xf = A.reshape(A.transpose(x, 0, 1), (xs[1], n * xs[2]) + xs[3:])
    y = A.convolution(xf, A.reshape(w, (n * ws[1],) + ws[2:]), None, **{**conv, "groups": n * conv["groups"]})
    ys = tuple(y.shape)
    return A.transpose(A.reshape(y, (ys[0], n, ys[1] // n) + ys[2:]), 0, 1)


def _batched_grad_weight(gO, x, gO_b, x_b, n, p, conv, dtype):
    """The weight gradient for every sample: (n, *weight shape)."""
    w_shape = tuple(p.weight_shape)
    if not (gO_b or x_b):
        gw = A.convolution_backward(gO, x, A.zeros(w_shape, dtype=dtype), None, conv, (False, True, False))[1]
        return A.expand(A.unsqueeze(gw, 0), (n,) + w_shape)
    g, transposed = conv["groups"], conv["transposed"]
    x_dim, gO_dim = (0, 1) if transposed else (1, 0)  # weight dims holding each side's channels
    groups_in_dim = {0: g, 1: 1}
    if gO_b and x_b:
        x_f, gO_f, g_f, dim, gdim = _fold_batch_major(x), _fold_batch_major(gO), n * g, 0, 1
    elif x_b:
        x_f, gO_f, g_f, dim, gdim = _fold_within_groups(x, g), gO, g, x_dim, groups_in_dim[x_dim]
    else:
        x_f, gO_f, g_f, dim, gdim = x, _fold_within_groups(gO, g), g, gO_dim, groups_in_dim[gO_dim]

    padding, output_padding = _explicit(p)
    folded_conv = {**conv, "padding": padding, "output_padding": output_padding, "groups": g_f}
    folded_shape = tuple(s * n if i == dim else s for i, s in enumerate(w_shape))
    gw = A.convolution_backward(
        gO_f, x_f, A.zeros(folded_shape, dtype=dtype), None, folded_conv, (False, True, False)
    )[1]
    # Undo the fold of B into weight axis ``dim`` laid out as (gdim, B, rest): B moves to the front.
    rest = folded_shape[dim] // (gdim * n)
    split = A.reshape(gw, folded_shape[:dim] + (gdim, n, rest) + folded_shape[dim + 1 :])
    order = (dim + 1,) + tuple(i for i in range(split.ndim) if i != dim + 1)
    return A.reshape(A.permute(split, order), (n,) + w_shape)


def _fold_batch_major(a):
    """(B, N, Ch, *S) → (N, B·Ch, *S), channel order (b, c)."""
    s = tuple(a.shape)
    return A.reshape(A.transpose(a, 0, 1), (s[1], s[0] * s[2]) + s[3:])


def _fold_within_groups(a, groups):
    """(B, N, Ch, *S) → (N, Ch·B, *S), channel order (group, b, c within group)."""
    s = tuple(a.shape)
    grouped = A.reshape(a, (s[0], s[1], groups, s[2] // groups) + s[3:])
    moved = A.permute(grouped, (1, 2, 0, 3) + tuple(range(4, 4 + len(s) - 3)))
    return A.reshape(moved, (s[1], s[2] * s[0]) + s[3:])


# ---- as_strided -------------------------------------------------------------------------------------


def as_strided_batch(b, params):
    """Strides and offset are relative to the logical storage, i.e. the logical root's elements
    in order. Each sample's root is laid out contiguously (a copy only if its physical value is
    not), one after the other, and one as_strided with a leading stride of the root's size picks
    every sample's view out of it."""
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
