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

from reference.autograd.grad_mode import no_grad
from reference.autograd.tensor import Tensor
from reference.backend import is_floating, to_numpy
from reference.ops import api as A
from reference.ops.functions.reductions import vector_norm
from reference.ops.rules.distance import cdist_direct, pnorm

__all__ = ["cdist", "cosine_similarity", "dist", "pairwise_distance", "pdist"]

NN_FUNCTIONAL = [
    "cosine_similarity",
    "multi_head_attention_forward",
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
    with no_grad():  # (not detach(): under vmap the reference's detach loses the batched values)
        lift = A.clamp(n, min=eps) - n
    return n + lift


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    x1, x2 = _bcast(x1, x2)
    d = dim % max(x1.ndim, 1)
    dims = (d,) if x1.ndim else ()  # a 0-d tensor: dim 0 is its one element
    n1 = _no_grad_clamp_min(pnorm(x1, 2, dims, True), eps)
    n2 = _no_grad_clamp_min(pnorm(x2, 2, dims, True), eps)
    return A.sum((x1 / n1) * (x2 / n2), dims)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    d = x1 - x2 + eps
    if d.ndim == 0:
        return pnorm(d, p, (), keepdim)
    return pnorm(d, p, (d.ndim - 1,), keepdim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if out is not None:
        raise TypeError("normalize: out= is not supported by the reference")
    d = dim % max(input.ndim, 1)
    dims = (d,) if input.ndim else ()  # a 0-d tensor: dim 0 is its one element
    denom = A.expand(A.clamp(pnorm(input, p, dims, True), min=eps), tuple(input.shape))
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
    if x1.dtype.kind != "f" or x2.dtype.kind != "f":  # float16/32/64: no bfloat16 cdist in PyTorch
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
            masked = masked | ~to_numpy(attn_mask._data)  # (the masks are host-side bookkeeping)
        else:
            bias = attn_mask
    if bias is not None:
        scores = scores + bias
    full = np.broadcast_to(masked, np.broadcast_shapes(masked.shape, tuple(scores.shape)))
    if full.any():
        scores = A.masked_fill(scores, A.tensor(full, device=scores.device), -math.inf)
    # PyTorch's safe softmax: a row whose every score is -inf attends to nothing (zeros)
    # (their scores are zeroed first, so that neither the softmax nor its backward sees nan)
    # (known from the masks, not from the scores, so that it holds under vmap too)
    blocked = full
    if bias is not None:
        blocked = blocked | np.isneginf(np.broadcast_to(to_numpy(bias._data), full.shape))
    dead = np.all(blocked, axis=-1, keepdims=True)
    if dead.any():
        dead = A.tensor(np.broadcast_to(dead, tuple(scores.shape)), device=scores.device)
        attn = A.masked_fill(A.softmax(A.masked_fill(scores, dead, 0.0), -1), dead, 0.0)
    else:
        attn = A.softmax(scores, -1)
    if dropout_p > 0.0:
        m = dropout_mask if isinstance(dropout_mask, Tensor) else A.tensor(np.asarray(dropout_mask))
        attn = attn * A.to(m, attn.dtype) * (1.0 / (1.0 - dropout_p) if dropout_p < 1 else 0.0)
    return A.matmul(attn, value)


def _linear(x, w, b):
    out = A.matmul(x, A.t(w))
    return out if b is None else out + b


def _float_mask(mask, dtype):
    """PyTorch's ``_canonical_mask``: a bool mask becomes 0 / -inf in the query's dtype."""
    if mask is None:
        return None
    if mask.dtype == np.bool_:
        return A.tensor(np.where(to_numpy(mask._data), -np.inf, 0.0).astype(dtype), device=mask.device)
    if not is_floating(mask.dtype):
        raise AssertionError("only bool and floating types of masks are supported")
    return mask


def _pad_last(mask):
    return A.cat([mask, A.zeros(*(tuple(mask.shape[:-1]) + (1,)), dtype=mask.dtype, device=mask.device)], -1)


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
    *,
    dropout_mask=None,
):
    """PyTorch's ``multi_head_attention_forward`` (its Python composite, step by step). Dropout in
    training needs ``dropout_mask=`` of shape (N * num_heads, L, S): no hidden randomness."""
    is_batched = query.ndim == 3
    if not is_batched:
        query, key, value = (A.unsqueeze(t, 1) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = A.unsqueeze(key_padding_mask, 0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    dt = query.dtype
    key_padding_mask = _float_mask(key_padding_mask, dt)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
            "`generate_square_subsequent_mask` to create this mask."
        )
    attn_mask = _float_mask(attn_mask, dt)
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_q, w_k, w_v = A.chunk(in_proj_weight, 3)
    else:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = A.chunk(in_proj_bias, 3)
    q, k, v = _linear(query, w_q, b_q), _linear(key, w_k, b_k), _linear(value, w_v, b_v)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is torch.Size({list(attn_mask.shape)}), but should be "
                    f"{(tgt_len, src_len)}."
                )
            attn_mask = A.unsqueeze(attn_mask, 0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is torch.Size({list(attn_mask.shape)}), but should be "
                    f"{(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        k = A.cat([k, A.expand(bias_k, (1, bsz, embed_dim))])
        v = A.cat([v, A.expand(bias_v, (1, bsz, embed_dim))])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    q = A.transpose(A.reshape(q, (tgt_len, bsz * num_heads, head_dim)), 0, 1)
    k = (
        static_k
        if static_k is not None
        else A.transpose(A.reshape(k, (k.shape[0], bsz * num_heads, head_dim)), 0, 1)
    )
    v = (
        static_v
        if static_v is not None
        else A.transpose(A.reshape(v, (v.shape[0], bsz * num_heads, head_dim)), 0, 1)
    )
    if add_zero_attn:
        zeros = A.zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)
        k, v = A.cat([k, zeros], 1), A.cat([v, zeros], 1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        kpm = A.reshape(
            A.expand(A.reshape(key_padding_mask, (bsz, 1, 1, src_len)), (bsz, num_heads, 1, src_len)),
            (bsz * num_heads, 1, src_len),
        )
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if dropout_p > 0.0 and dropout_mask is None:
        raise ValueError(
            "multi_head_attention_forward: dropout_p > 0 in training draws a random mask in PyTorch; the "
            "reference has no hidden randomness: pass dropout_mask= (shape (N * num_heads, L, S), 1 = keep)"
        )
    scores = A.matmul(q * math.sqrt(1.0 / float(head_dim)), A.transpose(k, -2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = A.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = weights * A.to(dropout_mask, dt) * (1.0 / (1.0 - dropout_p) if dropout_p < 1 else 0.0)
    out = A.matmul(weights, v)
    out = A.reshape(A.transpose(out, 0, 1), (tgt_len * bsz, embed_dim))
    out = A.reshape(_linear(out, out_proj_weight, out_proj_bias), (tgt_len, bsz, -1))
    if not need_weights:
        return (A.squeeze(out, 1) if not is_batched else out), None
    weights = A.reshape(weights, (bsz, num_heads, tgt_len, src_len))
    if average_attn_weights:
        weights = A.mean(weights, 1)
    if not is_batched:
        return A.squeeze(out, 1), A.squeeze(weights, 0)
    return out, weights


def dist(input, other, p=2):
    """``torch.dist``: the p-norm of the broadcast difference, ``linalg.vector_norm(input - other,
    p)`` (PyTorch's DistBackward0 is norm_backward of the difference: the same values and
    gradients, zero at a zero difference)."""

    return vector_norm(input - other, p)
