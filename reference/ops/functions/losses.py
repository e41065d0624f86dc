"""``torch.nn.functional``'s losses.

Primitives of the derivative table (:mod:`reference.ops.rules.losses`): ``nll_loss`` (and so the
class-index ``cross_entropy``), ``binary_cross_entropy``, ``ctc_loss``. Every other loss is a
composite of differentiable ops written the way PyTorch's own decomposition writes it (ATen's
``Loss.cpp`` / ``torch/nn/functional.py``), with kinks placed where PyTorch's backward places
them: ``relu`` (gradient 0 at 0) where PyTorch's kernel tests ``z > 0``, ``clamp(min=0)``
(gradient 1 at 0) where PyTorch composes ``clamp_min``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from reference.autograd.dispatch import apply
from reference.autograd.grad_mode import is_grad_enabled, no_grad
from reference.autograd.tensor import Tensor
from reference.backend import is_floating, to_numpy
from reference.ops import api as A
from reference.ops.functions.attention import pairwise_distance
from reference.ops.rules.losses import _RULES, nll_loss_prim
from reference.scalar_types import scalar_type_name

__all__ = []

NN_FUNCTIONAL = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "cross_entropy",
    "ctc_loss",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "margin_ranking_loss",
    "mse_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "nll_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]

_REDUCTIONS = ("none", "mean", "sum")


def _legacy_reduction(size_average, reduce, reduction, emit_warning=True):
    """PyTorch's ``_Reduction.legacy_get_string``."""
    if size_average is None and reduce is None:
        return reduction
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    out = ("mean" if size_average else "sum") if reduce else "none"
    if emit_warning:
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{out}' instead.",
            stacklevel=3,
        )
    return out


def _nondiff(fn, arg, t):
    """PyTorch's check that an input its derivative formula does not cover needs no gradient."""
    if t is not None and isinstance(t, Tensor) and t.requires_grad and is_grad_enabled():
        raise RuntimeError(
            f"The function '{fn}' is not differentiable with respect to argument '{arg}'. "
            f"This input cannot have requires_grad True."
        )


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction):
    _check_reduction(reduction)
    if reduction == "mean":
        return A.mean(loss)
    if reduction == "sum":
        return A.sum(loss)
    return loss


def _warn_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({_size(target.shape)}) that is different to the input size "
            f"({_size(input.shape)}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=3,
        )


def _size(shape):
    return f"torch.Size({list(shape)})"


def _broadcast(a, b):
    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    return A.expand(a, shape), A.expand(b, shape)


def _as(x, like):
    """A Python number or a Tensor as a Tensor of ``like``'s floating dtype."""
    if isinstance(x, Tensor):
        return x
    return A.tensor(x, dtype=like.dtype)


# ---- composites shared by several losses -----------------------------------------------------------


def _logsigmoid(x):
    """log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|)), with both kinks written as ``where`` so the
    gradient is sigmoid(-x) everywhere, 0.5 at 0 (PyTorch's ``log_sigmoid_backward``)."""
    neg = x < 0
    lower = A.where(neg, x, A.zeros_like(x))
    minus_abs = A.where(neg, x, -x)
    return lower - A.log(1 + A.exp(minus_abs))


# ---- regression losses --------------------------------------------------------------------------------


def _weighted(loss, weight, input, reduction):
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return A.sum(loss)
    if reduction == "mean":
        return A.sum(loss) / A.sum(weight)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _warn_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x, t = _broadcast(input, target)
    d = x - t
    if weight is not None:
        return _weighted(A.pow(d, 2), weight, input, reduction)
    return _reduce(d * d, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _warn_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x, t = _broadcast(input, target)
    if weight is not None:
        return _weighted(A.abs(x - t), weight, input, reduction)
    return _reduce(A.abs(x - t), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _warn_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    x, t = _broadcast(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return _reduce(A.abs(x - t), reduction)
    d = x - t
    ad = A.abs(d)
    loss = A.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _warn_size(input, target)
    _check_reduction(reduction)
    x, t = _broadcast(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = x - t
    ad = A.abs(d)
    loss = A.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        loss = loss * weight
    return _reduce(loss, reduction)


def _xlogy_self(t):
    """xlogy(t, t): 0 where t == 0 (its gradient there is nan, as PyTorch's xlogy gives)."""
    return A.where(t == 0, A.zeros_like(t), t * A.log(t))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction, emit_warning=False)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
            stacklevel=2,
        )
    if reduction not in _REDUCTIONS + ("batchmean",):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = A.exp(target) * (target - input)
    else:
        loss = _xlogy_self(target) - target * input
    if reduction == "batchmean":
        out = A.sum(loss)
        return out / input.shape[0] if input.ndim != 0 else out
    return _reduce(loss, reduction)


def poisson_nll_loss(
    input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"
):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = A.exp(input) - target * input
    else:
        loss = input - target * A.log(input + eps)
    if full:
        t = target
        stirling = t * A.log(t) - t + 0.5 * A.log(2 * math.pi * t)
        loss = loss + A.masked_fill(stirling, t <= 1, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * A.ones_like(input)
    elif bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = A.unsqueeze(var, -1)
        elif input.ndim == var.ndim and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    # PyTorch clamps a clone of var in place under no_grad: the value is clamped, the gradient
    # flows to var as if it were not.

    with no_grad():
        lift = A.clamp(var, min=eps) - var
    var = var + lift
    loss = 0.5 * (A.log(var) + A.pow(input - target, 2) / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# ---- classification losses -------------------------------------------------------------------------


def _check_nll_shapes(input, target):
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]})."
        )


def _nll(input, target, weight, ignore_index, reduction):
    _check_reduction(reduction)
    if target.dtype not in (np.int64, np.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {scalar_type_name(target.dtype)}"
        )
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif input.ndim == 2:
        if target.ndim != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    else:
        want = (input.shape[0],) + tuple(input.shape[2:])
        if tuple(target.shape) != want:
            raise RuntimeError(
                f"size mismatch (got input: {list(input.shape)}, target: {list(target.shape)})"
            )
    n_classes = input.shape[0 if input.ndim == 1 else 1]
    if weight is not None and tuple(weight.shape) != (n_classes,):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)}"
        )
    t = target._data
    bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
    if bool(bad.any()):
        raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    _nondiff("nll_loss_forward", "weight", weight)
    w = None if weight is None else A.to(weight, input.dtype)
    return nll_loss_prim(input, target, w, reduction, ignore_index)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_nll_shapes(input, target)
    return _nll(input, target, weight, ignore_index, reduction)


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.ndim == 1 else 1
    n_classes = input.shape[class_dim]
    logp = A.log_softmax(input, class_dim)
    wshape = [1] * input.ndim
    wshape[class_dim] = n_classes
    if tuple(target.shape) == tuple(input.shape) and is_floating(target.dtype):
        # class probabilities
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        prod = logp * target
        if weight is not None:
            prod = prod * A.reshape(weight, tuple(wshape))
        loss = -A.sum(prod, class_dim)
        if reduction == "mean":
            return A.sum(loss) / (input.numel() // n_classes if n_classes else 0)
        return A.sum(loss) if reduction == "sum" else loss
    _check_nll_shapes(input, target)
    nll = _nll(logp, target, weight, ignore_index, reduction)
    if label_smoothing <= 0:
        return nll
    ignore = target == ignore_index
    if weight is not None:
        smooth = -A.sum(logp * A.reshape(A.to(weight, input.dtype), tuple(wshape)), class_dim)
    else:
        smooth = -A.sum(logp, class_dim)
    smooth = A.masked_fill(smooth, ignore, 0.0)
    if reduction == "mean":
        keep = ~ignore._data
        if weight is not None:
            denom = float(weight._data[target._data[keep]].sum())
        else:
            denom = float(keep.sum())
        ret = A.sum(smooth) / denom if denom != 0 else A.sum(smooth) / A.tensor(0.0, dtype=input.dtype)
    elif reduction == "sum":
        ret = A.sum(smooth)
    else:
        ret = smooth
    return (1 - label_smoothing) * nll + ret * (label_smoothing / n_classes)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({_size(target.shape)}) that is different to the input size "
            f"({_size(input.shape)}) is deprecated. Please ensure they have the same size."
        )
    x = input._data
    if bool(((x < 0) | (x > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    _nondiff("binary_cross_entropy", "weight", weight)
    if weight is not None:
        shape = tuple(np.broadcast_shapes(tuple(weight.shape), tuple(input.shape)))
        weight = A.expand(weight, shape)

    loss = apply(_RULES["binary_cross_entropy"], (input, target, weight))
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({_size(target.shape)}) must be the same as input size ({_size(input.shape)})"
        )
    _nondiff("binary_cross_entropy_with_logits", "weight", weight)
    _nondiff("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    # PyTorch: (1 - t) x - (1 + (pw - 1) t) log_sigmoid(x), times weight
    ls = _logsigmoid(input)
    if pos_weight is not None:
        loss = (1 - target) * input - (1 + (pos_weight - 1) * target) * ls
    else:
        loss = (1 - target) * input - ls
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_size(input1.shape)}, input2: {_size(input2.shape)}, target: {_size(target.shape)} "
        )
    _check_reduction(reduction)
    loss = A.clamp(-target * (input1 - input2) + margin, min=0)
    return _reduce(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    zeros = A.zeros_like(input)
    margin_clamp = A.clamp(margin - input, min=0)
    output_margin = A.where(target != 1, margin_clamp, zeros)
    output_self = A.where(target != -1, input, zeros)
    return _reduce(output_margin + output_self, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.requires_grad:
        raise RuntimeError(
            "The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. "
            "This input cannot have requires_grad True."
        )
    return _reduce(A.log(1 + A.exp(-target * input)), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * _logsigmoid(input) + (1 - target) * _logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    C = input.shape[class_dim]
    loss = A.sum(loss, class_dim) / C
    if reduction == "none":
        return loss
    if reduction == "mean":
        return A.mean(loss)
    if reduction == "sum":
        return A.sum(loss)
    raise ValueError(reduction + " is not valid")


def _margin_shapes(input, target, name):
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0) or (input.ndim < 2 and input.numel() == 0):
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {list(input.shape)}"
        )


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _margin_shapes(input, target, "multilabel_margin_loss")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    x = input if input.ndim == 2 else A.reshape(input, (1, -1))  # a 0-d input is one sample of one class
    t = target._data.reshape(x.shape)
    n, C = x.shape
    is_target = np.zeros((n, C), dtype=bool)
    count = np.zeros((n, C), dtype=np.int64)  # PyTorch's kernel loops over target positions:
    for i in range(n):  # a class listed twice (before the first -1) counts twice
        for j in range(C):
            k = int(t[i, j])
            if k < 0:
                break
            if k >= C:
                raise RuntimeError(f"index {k} is out of bounds for dimension 0 with size {C}")
            is_target[i, k] = True
            count[i, k] += 1
    # pairs (j a target, i not a target): max(0, 1 - (x_j - x_i)); PyTorch's kernel tests z > 0
    pair = A.tensor(count[:, :, None] * ~is_target[:, None, :], dtype=x.dtype)
    z = 1 - (A.unsqueeze(x, 2) - A.unsqueeze(x, 1))
    loss = A.sum(A.relu(z) * pair, (1, 2)) / C
    if input.ndim < 2:
        loss = A.reshape(loss, ())
    return _reduce(loss, reduction)


def multi_margin_loss(
    input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"
):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _check_reduction(reduction)
    _margin_shapes(input, target, "multi_margin_loss")
    _nondiff("multi_margin_loss", "weight", weight)
    x = input if input.ndim == 2 else A.reshape(input, (1, -1))
    n, C = x.shape
    t = target._data.reshape(-1)
    if t.shape[0] != n:
        raise RuntimeError(f"inconsistent target size, expected {n} but got {list(target.shape)}")
    if bool(np.any((t < 0) | (t >= C))):
        raise RuntimeError("target out of range")
    onehot = np.zeros((n, C), dtype=bool)
    onehot[np.arange(n), t] = True
    flat = np.arange(n) * C + t
    x_y = A.reshape(A.take(x, flat), (n, 1))
    z = margin - x_y + x
    h = A.relu(z)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * A.reshape(A.take(A.to(weight, x.dtype), t), (n, 1))
    h = A.masked_fill(h, A.tensor(onehot), 0.0)
    loss = A.sum(h, 1) / C
    if input.ndim < 2:
        loss = A.reshape(loss, ())
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input1.ndim != input2.ndim:
        raise RuntimeError(
            f"cosine_embedding_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_size(input1.shape)}, input2: {_size(input2.shape)}, target: {_size(target.shape)} "
        )
    if input1.ndim not in (1, 2):
        raise RuntimeError(
            f"1D target tensor expects 2D input tensors, but found inputs with sizes {list(input1.shape)} "
            f"and {list(input2.shape)}."
        )
    eps = 1e-12
    dim = input1.ndim - 1
    prod_sum = A.sum(input1 * input2, dim)
    mag1 = A.sum(input1 * input1, dim) + eps
    mag2 = A.sum(input2 * input2, dim) + eps
    cos = prod_sum / A.sqrt(mag1 * mag2)
    zeros = A.zeros_like(cos)
    pos = 1 - cos
    neg = A.clamp(cos - margin, min=0)
    out = A.where(target == 1, pos, zeros) + A.where(target == -1, neg, zeros)
    return _reduce(out, reduction)


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=1.0,
    p=2,
    eps=1e-6,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    a, pz, n = anchor.ndim, positive.ndim, negative.ndim
    if not (a == pz == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a}D, positive {pz}D, and negative {n}D inputs"
        )
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = A.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(A.clamp(margin + d_pos - d_neg, min=0), reduction)


def triplet_margin_with_distance_loss(
    anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction="mean"
):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pz, n = anchor.ndim, positive.ndim, negative.ndim
    if not (a == pz == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a}D, positive {pz}D, and negative {n}D inputs"
        )
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = A.minimum(d_neg, dist(positive, negative))
    loss = A.clamp(d_pos - d_neg + margin, min=0.0)
    return _reduce(loss, reduction)


# ---- ctc_loss ----------------------------------------------------------------------------------------


def _lse(xs, dead_np):
    """log(sum(exp(.))) over a list of same-shaped tensors; where ``dead_np`` (every term is -inf:
    an unreachable CTC state, known from the labels and lengths alone, so also under vmap) the
    result is -inf with a zero gradient, so no nan reaches the reachable states."""
    X = A.stack(xs, 0)
    if dead_np.any():
        dead = A.tensor(dead_np)
        X = A.where(A.unsqueeze(dead, 0), A.zeros_like(X), X)
    with no_grad():
        m = A.amax(X, 0)
    out = m + A.log(A.sum(A.exp(X - m), 0))
    if dead_np.any():
        out = A.where(dead, A.full_like(out, -math.inf), out)
    return out


def _lengths(v, name, n):
    a = np.asarray(to_numpy(v._data) if isinstance(v, Tensor) else v, dtype=np.int64).reshape(-1)
    if a.shape[0] != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return a


def ctc_loss(
    log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False
):
    """The alpha recursion in log space, written with differentiable ops, plus PyTorch's
    ``ctc_loss_backward`` convention: its gradient w.r.t. ``log_probs`` is
    ``exp(log_probs) - exp(log(alpha beta) + nll - log_probs)`` on valid time steps (it assumes a
    log_softmax before it), reproduced by a term of value 0 whose gradient is ``exp(log_probs)``.
    ``zero_infinity``: infinite losses and their gradients become zero."""
    _check_reduction(reduction)
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = A.unsqueeze(log_probs, 1)
        targets = A.unsqueeze(targets, 0) if targets.ndim == 1 else targets
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got {list(log_probs.shape)}")
    Tn, N, C = log_probs.shape
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    il = _lengths(input_lengths, "input_lengths", N)
    tl = _lengths(target_lengths, "target_lengths", N)
    tg = targets._data.astype(np.int64)
    concatenated = tg.ndim == 1 and not unbatched
    if concatenated:
        offsets = np.concatenate([[0], np.cumsum(tl)[:-1]])
        seqs = [tg[o : o + k] for o, k in zip(offsets, tl)]
    else:
        seqs = []
        for b in range(N):
            if tl[b] > tg.shape[1]:
                raise RuntimeError(
                    f"Expected tensor to have size at least {tl[b]} at dimension 1, but got size {tg.shape[1]} "
                    f"for argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)"
                )
            seqs.append(tg[b, : tl[b]])
    for b in range(N):
        if il[b] > Tn:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {Tn}, but got value {il[b]} "
                f"(while checking arguments for ctc_loss_allocate_outputs)"
            )
    S = 2 * int(tl.max(initial=0)) + 1
    lab = np.full((N, S), blank, dtype=np.int64)  # the extended labels l'
    allowed = np.zeros((N, S), dtype=bool)  # s - 2 -> s transitions
    for b, seq in enumerate(seqs):
        lab[b, 1 : 2 * len(seq) : 2] = seq
        for s in range(3, 2 * len(seq), 2):
            allowed[b, s] = lab[b, s] != lab[b, s - 2]
    neg = -math.inf
    dt = log_probs.dtype
    flat_nc = (np.arange(N)[:, None] * C + lab).reshape(-1)
    emit = [A.reshape(A.take(log_probs, t * N * C + flat_nc), (N, S)) for t in range(Tn)]
    first = np.full((N, S), False)
    first[:, 0] = True
    first[:, 1] = tl > 0
    pad = A.full((N, 1), neg, dtype=dt)
    allowed_t = A.tensor(allowed)
    alpha = A.where(A.tensor(first[:, :S]), emit[0], A.full((N, S), neg, dtype=dt)) if Tn else None
    alphas, reach = [alpha], [first]
    for t in range(1, Tn):
        prev, r = alphas[-1], reach[-1]
        r_new = r.copy()
        r_new[:, 1:] |= r[:, :-1]
        r_new[:, 2:] |= r[:, :-2] & allowed[:, 2:]
        reach.append(r_new)
        shift1 = A.cat([pad, prev[:, : S - 1]], 1)
        shift2 = A.cat([pad, pad, prev[:, : S - 2]], 1) if S > 2 else A.full((N, S), neg, dtype=dt)
        shift2 = A.where(allowed_t, shift2, A.full((N, S), neg, dtype=dt))
        alphas.append(_lse([prev, shift1, shift2], ~r_new) + emit[t])
    nlls = []
    inf = np.zeros(N, dtype=bool)  # infeasible: no path (the target does not fit the input length)
    for b in range(N):
        if il[b] == 0:
            inf[b] = tl[b] > 0
            nlls.append(A.full((), math.inf if inf[b] else 0.0, dtype=dt))
            continue
        end, r = alphas[il[b] - 1][b], reach[il[b] - 1][b]
        ends = [2 * tl[b]] + ([2 * tl[b] - 1] if tl[b] > 0 else [])
        inf[b] = not r[ends].any()
        nlls.append(-_lse([end[s] for s in ends], np.asarray(inf[b])))
    nll = A.stack(nlls, 0)
    # PyTorch's gradient convention: + exp(log_probs) on valid steps, a term of value 0
    valid = (np.arange(Tn)[:, None] < il[None, :]) & ~(inf & zero_infinity)[None, :]
    with no_grad():
        const = A.exp(log_probs)
    ghost = A.sum((A.exp(log_probs) - const) * A.tensor(valid[:, :, None].astype(dt)), (0, 2))
    loss = nll + ghost
    if zero_infinity and inf.any():
        loss = A.where(A.tensor(inf), A.zeros_like(loss), loss)
    if reduction == "mean":
        return A.mean(loss / A.tensor(np.maximum(tl, 1).astype(dt)))
    if reduction == "sum":
        return A.sum(loss)
    return loss[0] if unbatched else loss
