"""``nn.functional`` normalisation layers and embeddings.

Rules: ``embedding`` (the window rule of :mod:`reference.ops.rules.pooling`; ``padding_idx`` rows
and ``scale_grad_by_freq`` are the backward's weights, as ``embedding_dense_backward`` computes
them). Composites of differentiable ops (same values and gradients as PyTorch at every order; a
different ``grad_fn`` than PyTorch's fused kernels where noted):

* ``layer_norm`` (PyTorch: ``NativeLayerNormBackward0``), ``group_norm``
  (``NativeGroupNormBackward0``), ``rms_norm`` (PyTorch's own composite): mean/variance in Tensor ops;
* ``instance_norm``: PyTorch's own composite, ``batch_norm`` on the input viewed as (1, N*C, ...)
  with the affine parameters and running statistics repeated per instance;
* ``local_response_norm``: PyTorch's own composite (``pad`` + ``avg_pool``);
* ``embedding_bag``: ``embedding`` rows combined per bag (a bag matrix product for sum/mean, the
  per-bag argmax rows for max; PyTorch: ``EmbeddingBagBackward0``).
"""

from __future__ import annotations

import math

import numpy as np

from reference.autograd.dispatch import apply
from reference.autograd.grad_mode import no_grad
from reference.autograd.tensor import Tensor
from reference.backend import to_numpy
from reference.ops import api as A
from reference.ops.functions.losses import cross_entropy
from reference.ops.functions.nn_pooling import avg_pool2d, avg_pool3d
from reference.ops.functions.nn_sampling import pad
from reference.ops.functions.reductions import max as max_dim
from reference.ops.rules.pooling import window_map
from reference.scalar_types import tensor_type_name

__all__ = ["native_layer_norm", "native_group_norm", "native_batch_norm", "_native_batch_norm_legit"]

NN_FUNCTIONAL = [
    "batch_norm",
    "bilinear",
    "embedding",
    "embedding_bag",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "linear_cross_entropy",
    "local_response_norm",
    "rms_norm",
    "standardize",
]


def _shape_list(s):
    return "[" + ", ".join(map(str, s)) + "]"


def _norm_shape(input, normalized_shape, sep):
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    n = len(ns)
    if n == 0 or input.ndim < n or tuple(input.shape[input.ndim - n :]) != ns:
        raise RuntimeError(
            f"Given normalized_shape={_shape_list(ns)}, expected input with shape [*{sep}"
            f"{', '.join(map(str, ns))}], but got input of size{_shape_list(input.shape)}"
        )
    return ns, tuple(range(input.ndim - n, input.ndim))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    ns, dims = _norm_shape(input, normalized_shape, ", ")
    mean = A.mean(input, dims, keepdim=True)
    xc = input - mean
    var = A.mean(xc * xc, dims, keepdim=True)
    out = xc * A.pow(var + eps, -0.5)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def standardize(input, dim=-1, eps=1e-5):
    """jax.nn.standardize(x, axis, epsilon=eps) (PyTorch has none): (x - mean) / sqrt(var + eps) with
    the mean and the biased (1/n) variance over ``dim`` (an int or a list of ints; JAX's ``axis``).
    JAX's two algorithms are the same mathematics ("fast": E[x²] - E[x]², clipped at 0; "stable":
    E[(x - E[x])²]); this computes the two-pass form, as layer_norm does."""
    dims = dim if isinstance(dim, (list, tuple)) else [dim]
    mean = A.mean(input, dims, keepdim=True)
    xc = input - mean
    var = A.mean(xc * xc, dims, keepdim=True)
    return xc * A.pow(var + eps, -0.5)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """PyTorch's composite: ``x * rsqrt(mean(x**2) + eps) * weight``; ``eps=None`` is the input
    dtype's machine epsilon."""
    ns, dims = _norm_shape(input, normalized_shape, "")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    out = input * A.pow(A.mean(input * input, dims, keepdim=True) + eps, -0.5)
    return out * weight if weight is not None else out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{_shape_list(input.shape)} and num_groups={num_groups}"
        )
    x = A.reshape(input, (n, num_groups, (c // num_groups) * math.prod(input.shape[2:])))
    mean = A.mean(x, (2,), keepdim=True)
    xc = x - mean
    var = A.mean(xc * xc, (2,), keepdim=True)
    out = A.reshape(xc * A.pow(var + eps, -0.5), tuple(input.shape))
    bshape = (1, c) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * A.reshape(weight, bshape)
    if bias is not None:
        out = out + A.reshape(bias, bshape)
    return out


def _repeat(t, n):
    return None if t is None else A.reshape(A.expand(A.unsqueeze(t, 0), (n,) + tuple(t.shape)), (-1,))


def batch_norm(
    input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5
):
    if training:  # PyTorch's _verify_batch_size
        size = list(input.shape)
        if not size:
            raise IndexError("tuple index out of range")
        if size[0] * math.prod(size[2:]) == 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size torch.Size({size})"
            )
    if input.numel() == 0:  # aten's batch_norm: a clone (the graph goes on) times weight[0] plus bias[0]
        out = A.clone(input)
        if weight is not None:
            out = out * A.select(weight, 0, 0)
        if bias is not None:
            out = out + A.select(bias, 0, 0)
        return out
    if not training:
        for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
            if stat is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    if input.ndim < 2:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], "
            "but got 1)"
        )
    params = {"training": bool(training), "momentum": momentum if momentum is not None else 0.0, "eps": eps}
    return apply(A.R.batch_norm, (input, weight, bias, running_mean, running_var), params)


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    if use_input_stats:
        spatial = math.prod(input.shape[2:])
        if spatial <= 1:
            raise ValueError(
                f"Expected more than 1 spatial element when training, got input size torch.Size({list(input.shape)})"
            )
    n, c = input.shape[0], input.shape[1]
    x = A.reshape(input, (1, n * c) + tuple(input.shape[2:]))
    rm = None if running_mean is None else A.tensor(A._xp(running_mean).tile(running_mean._data, n))
    rv = None if running_var is None else A.tensor(A._xp(running_var).tile(running_var._data, n))
    out = batch_norm(x, rm, rv, _repeat(weight, n), _repeat(bias, n), use_input_stats, momentum, eps)
    with no_grad():
        if running_mean is not None:
            running_mean._data[...] = rm._data.reshape(n, c).mean(axis=0)
        if running_var is not None:
            running_var._data[...] = rv._data.reshape(n, c).mean(axis=0)
    return A.reshape(out, tuple(input.shape))


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    dim = input.ndim
    if dim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)"
        )
    if input.numel() == 0:
        return input
    div = input * input
    if dim == 3:
        div = A.unsqueeze(div, 1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = A.squeeze(avg_pool2d(div, (size, 1), stride=1), 1)
    else:
        sizes = tuple(input.shape)
        div = A.reshape(div, (sizes[0], 1, sizes[1], sizes[2], -1))
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = A.squeeze(avg_pool3d(div, (size, 1, 1), stride=1), 1)
        div = A.reshape(div, sizes)
    div = A.pow(div * alpha + k, beta)
    return input / div


# ---- embeddings ---------------------------------------------------------------------------------


def _indices(input, op):
    arr = to_numpy(input._data if isinstance(input, Tensor) else input)  # host-side index tables
    if arr.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but "
            f"got {tensor_type_name(arr.dtype)} instead (while checking arguments for {op})"
        )
    return arr.astype(np.int64)


def _renorm(weight, idx, max_norm, norm_type):
    """PyTorch's embedding_renorm_: rows read by ``idx`` with norm above ``max_norm`` are scaled down
    in place (no gradient recorded)."""
    with no_grad():
        w = weight._data
        rows = np.unique(idx)
        norms = np.sum(np.abs(w[rows]) ** norm_type, axis=1) ** (1.0 / norm_type)
        big = norms > max_norm
        w[rows[big]] *= (max_norm / (norms[big] + 1e-7))[:, None]
        weight._vc[0] += 1  # an in-place write: saved uses of weight now fail, as in PyTorch


def embedding(
    input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False
):
    """Rule ``embedding``: rows of ``weight``; no gradient reaches row ``padding_idx``;
    ``scale_grad_by_freq`` divides each index's gradient by its count in ``input``; ``max_norm``
    renormalises the rows read, in place, as PyTorch does. ``sparse=True`` is rejected (the
    reference has no sparse gradients)."""
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    else:
        padding_idx = -1
    if sparse:
        raise NotImplementedError(
            "reference: embedding(sparse=True) is not implemented (no sparse gradients)"
        )
    idx = _indices(input, "embedding")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm(weight, idx, max_norm, norm_type)
    d = weight.shape[1]
    index = (idx.reshape(-1, 1) * d + np.arange(d)[None, :]).reshape(-1, 1)
    bw = np.where(idx.reshape(-1, 1) == padding_idx, 0.0, 1.0) * np.ones((1, d))
    dw = bw.reshape(-1, 1)  # embedding_dense_double_backward: the padding mask, no frequency scaling
    if scale_grad_by_freq:
        counts = np.bincount(idx.ravel(), minlength=num)
        bw = bw / counts[idx.reshape(-1, 1)]
    return window_map(
        "embedding",
        weight,
        index,
        np.ones(index.shape),
        (num, d),
        tuple(idx.shape) + (d,),
        bweight=bw.reshape(-1, 1),
        dweight=dw,
    )


def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type=2,
    scale_grad_by_freq=False,
    mode="mean",
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    """Composite (see the module docstring): ``embedding`` of all indices, then per bag a weighted
    sum (``sum``: per-sample weights; ``mean``: 1/count), or the maximum row (the first maximum per
    column gets the gradient). Entries equal to ``padding_idx`` are left out of their bag (and of its
    count); an empty bag gives zeros."""
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    idx = _indices(input, "embedding_bag")
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length "
                f"sequences. However, found offsets of type {type(offsets)}"
            )
        b, length = idx.shape
        starts = np.arange(b) * length
        flat = idx.reshape(-1)
        psw = None if per_sample_weights is None else A.reshape(per_sample_weights, (-1,))
    elif idx.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        off = to_numpy(offsets._data if isinstance(offsets, Tensor) else offsets).astype(np.int64)  # host
        if off.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = off[:-1] if include_last_offset else off
        flat = idx
        psw = per_sample_weights
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim}")
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(idx.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights (torch.Size({list(per_sample_weights.shape)})) is not None, then it "
            f"must have the same shape as the input (torch.Size({list(idx.shape)}))"
        )
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub."
        )
    if max_norm is not None:
        _renorm(weight, flat, max_norm, norm_type)
    num, d = weight.shape
    if padding_idx is not None and padding_idx < 0:
        padding_idx = num + padding_idx
    ends = np.append(starts[1:], len(flat)) if not include_last_offset else off[1:]
    rows = embedding(A.tensor(flat, device=weight.device), weight, scale_grad_by_freq=scale_grad_by_freq)
    keep = flat != (padding_idx if padding_idx is not None else -1)
    nb = len(starts)
    if mode in ("sum", "mean"):
        bags = np.zeros((nb, len(flat)))
        for i, (s, e) in enumerate(zip(starts, ends)):
            bags[i, s:e] = keep[s:e]
            if mode == "mean" and bags[i].sum():
                bags[i] /= bags[i].sum()
        m = A.tensor(bags.astype(weight._data.dtype), device=weight.device)
        if psw is not None:
            m = m * A.unsqueeze(psw, 0)
        return A.matmul(m, rows)
    # max: the bag's rows gathered into (bags, longest bag, D), missing slots -inf, then max over the
    # bag with its index (the first maximum gets the gradient, as PyTorch's strict ">" scan); table ops
    # only (no value read), so vmap over the weight needs no fallback. An empty bag gives zeros.

    members = [np.arange(s, e)[keep[s:e]] for s, e in zip(starts, ends)]
    width = max([len(m) for m in members] + [1])
    slot = np.zeros((nb, width), dtype=np.int64)
    valid = np.zeros((nb, width), dtype=bool)
    for i, m in enumerate(members):
        slot[i, : len(m)], valid[i, : len(m)] = m, True
    index = slot[:, :, None] * d + np.arange(d)  # (bags, width, D) into the flat (L, D) rows
    vals = (
        A.take(rows, index)
        if len(flat)
        else A.zeros((nb, width, d), dtype=weight.dtype, device=weight.device)
    )
    neg = A.tensor(np.array(-np.inf, dtype=weight._data.dtype))
    vals = A.where(
        A.tensor(np.broadcast_to(valid[:, :, None], index.shape).copy(), device=weight.device), vals, neg
    )
    out = max_dim(vals, 1)[0]
    nonempty = valid.any(axis=1)
    if nonempty.all():
        return out
    return A.where(
        A.tensor(nonempty[:, None].copy(), device=weight.device),
        out,
        A.tensor(np.array(0.0, dtype=weight._data.dtype)),
    )


# ---- aten's native normalisations (torch.native_*): the output with the saved statistics -----------


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``torch.native_layer_norm``: (out, mean, rstd), the statistics shaped ``input.shape[:axis]``
    followed by ones; PyTorch does not differentiate them (output_differentiability: out only)."""
    ns, dims = _norm_shape(input, normalized_shape, ", ")
    mean = A.mean(input, dims, keepdim=True)
    xc = input - mean
    rstd = A.pow(A.mean(xc * xc, dims, keepdim=True) + eps, -0.5)
    out = xc * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean.detach(), rstd.detach()


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``torch.native_group_norm``: (out, mean, rstd) with the statistics (N, group); PyTorch
    differentiates all three (its infinitely differentiable backward), so do these Tensor ops."""
    n, c = int(N), int(C)
    if c % group:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{_shape_list(input.shape)} and num_groups={group}"
        )
    x = A.reshape(input, (n, group, (c // group) * int(HxW)))
    mean = A.mean(x, (2,))
    xc = x - A.unsqueeze(mean, 2)
    rstd = A.pow(A.mean(xc * xc, (2,)) + eps, -0.5)
    out = A.reshape(xc * A.unsqueeze(rstd, 2), tuple(input.shape))
    bshape = (1, c) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * A.reshape(weight, bshape)
    if bias is not None:
        out = out + A.reshape(bias, bshape)
    return out, mean, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``torch.native_batch_norm``: (out, save_mean, save_invstd), the rule ``batch_norm`` for the
    output (running statistics updated in training); the batch statistics in training, empty
    tensors in evaluation, not differentiated (as PyTorch)."""
    out = batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = A.tensor(np.zeros(0, dtype=input._data.dtype), device=input.device)
        return out, empty, A.tensor(np.zeros(0, dtype=input._data.dtype), device=input.device)
    dims = (0,) + tuple(range(2, input.ndim))
    x = input.detach()
    mean = A.mean(x, dims)
    xc = x - A.reshape(mean, (1, -1) + (1,) * (input.ndim - 2))
    invstd = A.pow(A.mean(xc * xc, dims) + eps, -0.5)
    return out, mean, invstd


def _native_batch_norm_legit(input, weight, bias, *args):
    """aten's two overloads: (running_mean, running_var, training, momentum, eps) or, without
    running statistics, (training, momentum, eps)."""
    if len(args) == 3:
        training, momentum, eps = args
        return native_batch_norm(input, weight, bias, None, None, training, momentum, eps)
    return native_batch_norm(input, weight, bias, *args)


def bilinear(input1, input2, weight, bias=None):
    """Composite, as aten's bilinear (``_trilinear``): ``out[..., o] = x1[..., i] W[o, i, j]
    x2[..., j] + b[o]``, with aten's checks (no broadcasting of the batch dims)."""
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} and "
                f"{input2.shape[i]}"
            )
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected {weight.shape[1]}"
        )
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected {weight.shape[2]}"
        )
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected {weight.shape[0]}"
        )
    left = A.matmul(A.unsqueeze(A.unsqueeze(input1, -2), -2), weight)  # (..., O, 1, J)
    out = A.sum(A.squeeze(left, -2) * A.unsqueeze(input2, -2), -1)  # (..., O)
    return out if bias is None else out + bias


def linear_cross_entropy(
    input,
    linear_weight,
    target,
    *,
    linear_bias=None,
    weight=None,
    reduction="mean",
    ignore_index=None,
    label_smoothing=0.0,
    options=None,
):
    """Composite, PyTorch's documented reference implementation: ``cross_entropy(linear(input,
    linear_weight) + linear_bias, target, ...)``; a K-dimensional weight (C, d_1, ..., d_K, in)
    gives logits (..., C, d_1, ..., d_K). ``options`` (PyTorch's chunking strategy: how the batch
    is split, not what is computed) is accepted and does not change the values; ``ignore_index=None``
    ignores no class."""

    w = linear_weight
    flat = A.reshape(w, (-1, w.shape[-1])) if w.ndim != 2 else w
    logits = A.matmul(input, A.t(flat))
    if w.ndim != 2:
        logits = A.reshape(logits, tuple(input.shape[:-1]) + tuple(w.shape[:-1]))
    if linear_bias is not None:
        logits = logits + linear_bias
    return cross_entropy(
        logits,
        target,
        weight=weight,
        ignore_index=-100 if ignore_index is None else ignore_index,
        reduction=reduction,
        label_smoothing=label_smoothing,
    )
