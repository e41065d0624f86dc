"""torch.nn.functional's attention and distances: values, gradients, gradients of gradients and
errors agree with PyTorch (float64)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference as T
from tests.autograd.torch_agreement import assert_agree, assert_same_error

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

rng = np.random.default_rng(11)


def _r(*shape):
    return rng.standard_normal(shape)


def F(lib):
    return lib.nn.functional


Q, K, V = _r(2, 3, 4, 5), _r(2, 3, 6, 5), _r(2, 3, 6, 5)
BOOL_MASK = rng.random((4, 6)) > 0.3
BOOL_MASK[2] = False  # a row attending to nothing
ADD_MASK = _r(2, 1, 4, 6)
DEAD_ADD = ADD_MASK.copy()
DEAD_ADD[1, 0, 3] = -math.inf
DROP = (rng.random((2, 3, 4, 6)) > 0.4).astype(np.float64)

CASES = []


def case(id, fn, arrays, mask, **opts):
    if id.startswith("sdpa") and "additive_mask_grad" not in id:
        opts.setdefault("second", False)  # PyTorch's CPU flash kernel: no double backward
    CASES.append(pytest.param(fn, arrays, mask, opts, id=id))


case("sdpa_plain", lambda L, q, k, v: F(L).scaled_dot_product_attention(q, k, v), [Q, K, V], [1, 1, 1])
case(
    "sdpa_bool_mask_dead_row",
    lambda L, q, k, v, m: F(L).scaled_dot_product_attention(q, k, v, attn_mask=m),
    [Q, K, V, BOOL_MASK],
    [1, 1, 1, 0],
)
case(
    "sdpa_additive_mask_grad",
    lambda L, q, k, v, m: F(L).scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3),
    [Q, K, V, ADD_MASK],
    [1, 1, 1, 1],
)
case(
    "sdpa_additive_dead_row",
    lambda L, q, k, v, m: F(L).scaled_dot_product_attention(q, k, v, attn_mask=m),
    [Q, K, V, DEAD_ADD],
    [1, 1, 1, 0],
)
case(
    "sdpa_causal",
    lambda L, q, k, v: F(L).scaled_dot_product_attention(q, k, v, is_causal=True),
    [Q, K, V],
    [1, 1, 1],
)
case(
    "sdpa_causal_and_mask",
    lambda L, q, k, v, m: F(L).scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True),
    [Q, K, V, BOOL_MASK],
    [1, 1, 1, 0],
)
case(
    "sdpa_gqa",
    lambda L, q, k, v: F(L).scaled_dot_product_attention(q, k, v, enable_gqa=True),
    [_r(2, 4, 3, 5), _r(2, 2, 6, 5), _r(2, 1, 6, 5)],
    [1, 1, 1],
)
case(
    "sdpa_3d",
    lambda L, q, k, v: F(L).scaled_dot_product_attention(q, k, v),
    [_r(3, 4, 5), _r(3, 6, 5), _r(3, 6, 2)],
    [1, 1, 1],
)
case(
    "cosine_similarity",
    lambda L, a, b: F(L).cosine_similarity(a, b, dim=-1),
    [_r(3, 4), _r(2, 1, 4)],
    [1, 1],
)
case(
    "cosine_similarity_zero_and_tiny",
    lambda L, a, b: F(L).cosine_similarity(a, b),
    [np.array([[0.0, 0.0, 0.0], [1e-10, 0.0, 0.0], [1.0, 2.0, 3.0]]), np.ones((3, 3))],
    [1, 1],
    second=False,  # KNOWN DIFFERENCE: at a zero norm PyTorch's second order is finite, the reference's nan
)
for p in (2.0, 1.0, 3.0, 0.5, 1.5, math.inf, 0.0):
    case(
        f"pairwise_distance_p{p}",
        lambda L, a, b, p=p: F(L).pairwise_distance(a, b, p=p),
        [_r(3, 4), _r(3, 4)],
        [1, 1],
    )
    case(f"normalize_p{p}", lambda L, a, p=p: F(L).normalize(a, p=p, dim=0), [_r(3, 4)], [1])
    case(f"pdist_p{p}", lambda L, a, p=p: F(L).pdist(a, p=p), [_r(4, 3)], [1], second=False)
    case(
        f"cdist_p{p}",
        lambda L, a, b, p=p: L.cdist(a, b, p=p),
        [_r(2, 3, 4), _r(1, 5, 4)],
        [1, 1],
        second=False,
    )
    zero = np.array([[0.0, 1.0], [2.0, -1.0], [0.0, 1.0]])
    case(
        f"cdist_zero_distance_p{p}",
        lambda L, a, b, p=p: L.cdist(a, b, p=p),
        [zero, zero[:2]],
        [1, 1],
        second=False,
    )
    case(f"pdist_zero_distance_p{p}", lambda L, a, p=p: F(L).pdist(a, p=p), [zero], [1], second=False)
case(
    "pairwise_distance_broadcast_keepdim",
    lambda L, a, b: F(L).pairwise_distance(a, b, keepdim=True),
    [_r(3, 4), _r(4)],
    [1, 1],
)
case(
    "pairwise_distance_at_minus_eps",
    lambda L, a, b: F(L).pairwise_distance(a, b),
    [np.zeros((1, 2)), np.full((1, 2), 1e-6)],
    [1, 1],
    second=False,
)  # KNOWN DIFFERENCE: 2nd order at a zero norm: PyTorch nan, reference 0
case(
    "normalize_zero_row",
    lambda L, a: F(L).normalize(a),
    [np.array([[0.0, 0.0], [3.0, 4.0]])],
    [1],
    second=False,
)  # KNOWN DIFFERENCE: as above
case(
    "normalize_inf_ties",
    lambda L, a: F(L).normalize(a, p=math.inf, dim=1),
    [np.array([[1.0, -1.0, 0.5], [3.0, 4.0, -4.0]])],
    [1],
)
case("cdist_mm_path", lambda L, a, b: L.cdist(a, b), [_r(30, 3), _r(4, 3)], [1, 1])
case(
    "cdist_mm_forced",
    lambda L, a, b: L.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
    [_r(3, 3), _r(4, 3)],
    [1, 1],
)
case(
    "cdist_direct_forced",
    lambda L, a, b: L.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist"),
    [_r(30, 3), _r(4, 3)],
    [1, 1],
    second=False,
)


@pytest.mark.parametrize("fn, arrays, mask, opts", CASES)
def test_agrees_with_torch(fn, arrays, mask, opts):
    assert_agree(fn, arrays, mask, **opts)


def test_sdpa_dropout_through_an_explicit_mask():
    """torch's math path with the same dropout mask: attn * mask / (1 - p)."""
    import reference as T

    q, k, v = (torch.tensor(a) for a in (Q, K, V))
    attn = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(5), -1)
    expected = (attn * torch.tensor(DROP) / 0.6) @ v
    rq, rk, rv = (T.tensor(a) for a in (Q, K, V))
    got = T.nn.functional.scaled_dot_product_attention(rq, rk, rv, dropout_p=0.4, dropout_mask=T.tensor(DROP))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)


def test_sdpa_dropout_without_mask_says_randomness_is_explicit():
    import reference as T

    q = T.tensor(Q)
    with pytest.raises(ValueError, match="no hidden randomness"):
        T.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.1)


def test_one_hot():
    import reference as T

    for t, n in (([0, 2, 1], -1), ([[1], [3]], 5), ([], 3)):
        exp = torch.nn.functional.one_hot(torch.tensor(t, dtype=torch.long), n)
        got = T.nn.functional.one_hot(T.tensor(np.array(t, dtype=np.int64)), n)
        assert got.dtype == np.int64 and not got.requires_grad
        np.testing.assert_array_equal(got.numpy(), exp.numpy())


ERRORS = [
    ("one_hot_float", lambda L, t: F(L).one_hot(t, 3), [np.array([0.0, 1.0])]),
    ("one_hot_too_big", lambda L, t: F(L).one_hot(t, 3), [np.array([0, 5])]),
    ("one_hot_negative", lambda L, t: F(L).one_hot(t, 3), [np.array([-1, 1])]),
    ("one_hot_empty_infer", lambda L, t: F(L).one_hot(t), [np.zeros(0, dtype=np.int64)]),
    ("cdist_1d", lambda L, a, b: L.cdist(a, b), [_r(3), _r(2, 3)]),
    ("cdist_columns", lambda L, a, b: L.cdist(a, b), [_r(2, 3), _r(2, 4)]),
    ("cdist_negative_p", lambda L, a, b: L.cdist(a, b, p=-1.0), [_r(2, 3), _r(2, 3)]),
    ("pdist_3d", lambda L, a: F(L).pdist(a), [_r(2, 3, 4)]),
    ("pdist_negative_p", lambda L, a: F(L).pdist(a, p=-1.0), [_r(2, 3)]),
]


@pytest.mark.parametrize("fn, arrays", [pytest.param(f, a, id=i) for i, f, a in ERRORS])
def test_errors_match_torch(fn, arrays):
    assert_same_error(fn, arrays)


# ---- multi_head_attention_forward -------------------------------------------------------------------

E, H = 6, 2
_MHA = dict(
    q=_r(4, 2, E),
    k=_r(5, 2, E),
    v=_r(5, 2, E),
    w_in=_r(3 * E, E) * 0.5,
    b_in=_r(3 * E),
    w_out=_r(E, E) * 0.5,
    b_out=_r(E),
)
_KPM = np.array([[False, False, True, False, False], [False, False, False, False, True]])
_AM = rng.random((4, 5)) > 0.8
_AM[:, 0] = False
_BK, _BV = _r(1, 1, E), _r(1, 1, E)


def _mha(L, q, k, v, w_in, b_in, w_out, b_out, *, kpm=None, am=None, bias_kv=None, **kw):
    bk = bv = None
    if bias_kv is not None:
        bk, bv = bias_kv
    out, weights = F(L).multi_head_attention_forward(
        q,
        k,
        v,
        E,
        H,
        w_in,
        b_in,
        bk,
        bv,
        kw.pop("add_zero_attn", False),
        0.0,
        w_out,
        b_out,
        training=False,
        key_padding_mask=kpm,
        attn_mask=am,
        **kw,
    )
    return out if weights is None else out.sum() + (weights * weights).sum()


_ARGS = [_MHA[n] for n in ("q", "k", "v", "w_in", "b_in", "w_out", "b_out")]
MHA = [
    ("plain", lambda L, *a: _mha(L, *a)),
    ("no_weights", lambda L, *a: _mha(L, *a, need_weights=False)),
    ("per_head_weights", lambda L, *a: _mha(L, *a, average_attn_weights=False)),
    ("key_padding_mask", lambda L, *a: _mha(L, *a, kpm=L.tensor(_KPM))),
    ("bool_attn_mask", lambda L, *a: _mha(L, *a, am=L.tensor(_AM))),
    (
        "both_masks_no_weights",
        lambda L, *a: _mha(L, *a, am=L.tensor(_AM), kpm=L.tensor(_KPM), need_weights=False),
    ),
    ("add_zero_attn", lambda L, *a: _mha(L, *a, add_zero_attn=True, kpm=L.tensor(_KPM))),
    ("bias_kv", lambda L, *a: _mha(L, *a, bias_kv=(L.tensor(_BK), L.tensor(_BV)), am=L.tensor(_AM))),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in MHA])
def test_multi_head_attention_forward_agrees_with_torch(fn):
    assert_agree(fn, _ARGS, [1] * 7, second=False)


def test_multi_head_attention_forward_unbatched_second_order():
    args = [_MHA["q"][:, 0], _MHA["k"][:, 0], _MHA["v"][:, 0]] + _ARGS[3:]
    assert_agree(lambda L, *a: _mha(L, *a), args, [1] * 7)


# ---- complex128 input (issue 13): values, dtypes, first- and second-order gradients with complex
# cotangents, JVPs against torch.func.jvp, and the reference's gradcheck/gradgradcheck ----------------

_CRNG = np.random.default_rng(13)


def _cz(*shape):
    return _CRNG.standard_normal(shape) + 1j * _CRNG.standard_normal(shape)


from tests.autograd._complex_agree import complex_agree  # noqa: E402

_F_PAIRWISE = {
    f"pairwise_distance_p{p}": (
        lambda F, a, b, p=p: F.nn.functional.pairwise_distance(a, b, p=p),
        [_cz(3, 4), _cz(3, 4)],
    )
    for p in (2.0, 1.0, 3.0, 1.5, 0.5, math.inf)
}
COMPLEX = {
    **_F_PAIRWISE,
    "pairwise_distance_broadcast_keepdim": (
        lambda F, a, b: F.nn.functional.pairwise_distance(a, b, keepdim=True),
        [_cz(3, 4), _cz(4)],
    ),
    "normalize": (lambda F, z: F.nn.functional.normalize(z), [_cz(3, 4)]),
    "normalize_p1_dim0": (lambda F, z: F.nn.functional.normalize(z, p=1.0, dim=0), [_cz(3, 4)]),
    "normalize_p3": (lambda F, z: F.nn.functional.normalize(z, p=3.0, dim=-1), [_cz(2, 3)]),
    "triplet_margin_loss": (
        lambda F, a, p, n: F.nn.functional.triplet_margin_loss(a, p, n, margin=2.0),
        [_cz(4, 3), _cz(4, 3), _cz(4, 3)],
    ),
    "triplet_margin_with_distance_loss": (
        lambda F, a, p, n: F.nn.functional.triplet_margin_with_distance_loss(a, p, n, margin=2.0, swap=True),
        [_cz(4, 3), _cz(4, 3), _cz(4, 3)],
    ),
}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_agrees_with_torch(name):
    prog, arrays = COMPLEX[name]
    complex_agree(prog, arrays, label=name)


def test_complex_pairwise_distance_is_real():
    a, b = _cz(2, 3), _cz(2, 3)
    for dt in ("complex64", "complex128"):
        got = T.nn.functional.pairwise_distance(
            T.tensor(a, dtype=getattr(T, dt)), T.tensor(b, dtype=getattr(T, dt))
        )
        want = torch.nn.functional.pairwise_distance(
            torch.tensor(a, dtype=getattr(torch, dt)), torch.tensor(b, dtype=getattr(torch, dt))
        )
        assert "torch." + str(got.dtype) == str(want.dtype)
