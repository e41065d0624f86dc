"""``torch.nn.functional``'s attention and distances: ``scaled_dot_product_attention``,
``cosine_similarity``, ``pairwise_distance``, ``pdist``, ``cdist``, ``normalize``, ``one_hot``.

``scaled_dot_product_attention`` is a composite of differentiable ops (PyTorch's math reference:
``softmax(q k^T * scale + mask) v``, rows whose every key is masked give zeros as PyTorch's safe
softmax does). Randomness is explicit: ``dropout_p > 0`` needs ``dropout_mask=`` (a tensor of the
attention weights' shape, 1 = keep). ``cosine_similarity`` and ``normalize`` are composites over
the ``pnorm`` primitive; ``cdist`` is a primitive (:mod:`reference.ops.rules.distance`) on
PyTorch's direct path and a composite on its matrix-multiply path for p = 2; ``pdist`` is
``cdist(x, x)`` above the diagonal.
"""

from __future__ import annotations

import math

import numpy as np

from reference.autograd.tensor import Tensor
from reference.ops import api as A
from reference.ops.rules.distance import cdist_direct, pnorm

__all__ = ["cdist", "cosine_similarity", "pairwise_distance", "pdist"]

NN_FUNCTIONAL = [
    "cosine_similarity",
    "normalize",
    "one_hot",
    "pairwise_distance",
    "pdist",
    "scaled_dot_product_attention",
]


def _bcast(a, b):
    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    return A.expand(a, shape), A.expand(b, shape)


def _no_grad_clamp_min(n, eps):
    """PyTorch's ``with no_grad(): n.clamp_min_(eps)``: the value clamped, the gradient as if not."""
    from reference.autograd.grad_mode import no_grad

    with no_grad():  # (not detach(): under vmap the reference's detach loses the batched values)
        lift = A.clamp(n, min=eps) - n
    return n + lift


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    x1, x2 = _bcast(x1, x2)
    d = dim % max(x1.ndim, 1)
    n1 = _no_grad_clamp_min(pnorm(x1, 2, (d,), True), eps)
    n2 = _no_grad_clamp_min(pnorm(x2, 2, (d,), True), eps)
    return A.sum((x1 / n1) * (x2 / n2), d)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    d = x1 - x2 + eps
    if d.ndim == 0:
        return pnorm(d, p, (), keepdim)
    return pnorm(d, p, (d.ndim - 1,), keepdim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if out is not None:
        raise TypeError("normalize: out= is not supported by the reference")
    d = dim % max(input.ndim, 1)
    denom = A.expand(A.clamp(pnorm(input, p, (d,), True), min=eps), tuple(input.shape))
    return input / denom


def _euclidean_mm(x1, x2):
    """PyTorch's ``_euclidean_dist`` (the matrix-multiply path), as it composes it."""
    x1_norm = A.sum(A.pow(x1, 2), -1, keepdim=True)
    x2_norm = A.sum(A.pow(x2, 2), -1, keepdim=True)
    x1_ = A.cat([x1 * -2, x1_norm, A.ones_like(x1_norm)], -1)
    x2_ = A.cat([x2, A.ones_like(x2_norm), x2_norm], -1)
    res = A.matmul(x1_, A.transpose(x2_, -1, -2))
    return A.sqrt(A.clamp(res, min=0))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    if x1.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    modes = {
        "use_mm_for_euclid_dist_if_necessary": None,
        "use_mm_for_euclid_dist": True,
        "donot_use_mm_for_euclid_dist": False,
    }
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if x1.dtype.kind != "f" or x2.dtype.kind != "f":
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype}")
    batch = tuple(np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    x1 = A.expand(x1, batch + tuple(x1.shape[-2:]))
    x2 = A.expand(x2, batch + tuple(x2.shape[-2:]))
    P, R = x1.shape[-2], x2.shape[-2]
    mm = modes[compute_mode]
    if mm is None:
        mm = P > 25 or R > 25
    if p == 2 and mm and P > 0 and R > 0:
        return _euclidean_mm(x1, x2)
    return cdist_direct(x1, x2, p)


def pdist(input, p=2):
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if n <= 1:
        return A.sum(A.reshape(input, (n, -1))[:0], 1)  # empty, connected to the input
    iu, ju = np.triu_indices(n, 1)
    full = cdist_direct(input, input, p)
    return A.take(full, iu * n + ju)


def one_hot(tensor, num_classes=-1):
    if tensor.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    t = tensor._data
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    if t.size and int(t.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if t.size and int(t.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (t[..., None] == np.arange(num_classes)).astype(np.int64)
    return A.tensor(out)


def _repeat_heads(x, r):
    if r == 1:
        return x
    s = tuple(x.shape)
    y = A.expand(A.unsqueeze(x, -3), s[:-3] + (s[-3], r) + s[-2:])
    return A.reshape(y, s[:-3] + (s[-3] * r,) + s[-2:])


def scaled_dot_product_attention(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
    *,
    dropout_mask=None,
):
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(
            "scaled_dot_product_attention: expected query, key and value to have at least 2 dims"
        )
    if dropout_p > 0.0 and dropout_mask is None:
        raise ValueError(
            "scaled_dot_product_attention: dropout_p > 0 draws a random mask in PyTorch; the reference "
            "has no hidden randomness: pass dropout_mask= (the attention weights' shape, 1 = keep)"
        )
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead."
        )
    L, E = query.shape[-2], query.shape[-1]
    S = key.shape[-2]
    if enable_gqa and query.ndim >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
        key = _repeat_heads(key, hq // hk)
        value = _repeat_heads(value, hq // hv)
    s = 1.0 / math.sqrt(E) if scale is None else scale
    scores = A.matmul(query, A.transpose(key, -2, -1)) * s
    masked = np.zeros((L, S), dtype=bool)
    if is_causal:
        masked = ~np.tril(np.ones((L, S), dtype=bool))
    bias = None
    if attn_mask is not None:
        if attn_mask.dtype == np.bool_:
            masked = masked | ~attn_mask._data
        else:
            bias = attn_mask
    if bias is not None:
        scores = scores + bias
    full = np.broadcast_to(masked, np.broadcast_shapes(masked.shape, tuple(scores.shape)))
    if full.any():
        scores = A.masked_fill(scores, A.tensor(full), -math.inf)
    # PyTorch's safe softmax: a row whose every score is -inf attends to nothing (zeros)
    # (their scores are zeroed first, so that neither the softmax nor its backward sees nan)
    dead = np.all(np.isneginf(scores._data), axis=-1, keepdims=True)
    if dead.any():
        dead = A.tensor(np.broadcast_to(dead, tuple(scores.shape)))
        attn = A.masked_fill(A.softmax(A.masked_fill(scores, dead, 0.0), -1), dead, 0.0)
    else:
        attn = A.softmax(scores, -1)
    if dropout_p > 0.0:
        m = dropout_mask if isinstance(dropout_mask, Tensor) else A.tensor(np.asarray(dropout_mask))
        attn = attn * A.to(m, attn.dtype) * (1.0 / (1.0 - dropout_p) if dropout_p < 1 else 0.0)
    return A.matmul(attn, value)
