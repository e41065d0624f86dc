"""torch.nn.functional's losses: the reference agrees with PyTorch on values, gradients, gradients
of gradients (float64) and errors."""

from __future__ import annotations

import numpy as np
import pytest

from tests.autograd.torch_agreement import assert_agree, assert_same_error

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

rng = np.random.default_rng(7)


def _r(*shape):
    return rng.standard_normal(shape)


def _u(*shape, lo=0.05, hi=0.95):
    return rng.uniform(lo, hi, shape)


def F(lib):
    return lib.nn.functional


X23, X45 = _r(2, 3), _r(4, 5)
T4 = np.array([1, 0, 4, 2])
T4_IGN = np.array([1, -100, 4, 2])
W5 = rng.uniform(0.5, 2.0, 5)
X4K = _r(2, 3, 4, 2)  # (N, C, d1, d2)
T4K = rng.integers(0, 3, (2, 4, 2))
T4K[0, 1, 1] = 1
TK_IGN = T4K.copy()
TK_IGN[1, 0, 0] = 2
PROBS = np.abs(_r(4, 5))
PROBS /= PROBS.sum(1, keepdims=True)

REDUCTIONS = ("none", "mean", "sum")

CASES = []


def case(id, fn, arrays, mask, **opts):
    CASES.append(pytest.param(fn, arrays, mask, opts, id=id))


for red in REDUCTIONS:
    case(
        f"cross_entropy_{red}",
        lambda L, x, t, r=red: F(L).cross_entropy(x, t, reduction=r),
        [X45, T4],
        [1, 0],
    )
    case(
        f"cross_entropy_weight_ignore_{red}",
        lambda L, x, t, w, r=red: F(L).cross_entropy(x, t, weight=w, reduction=r),
        [X45, T4_IGN, W5],
        [1, 0, 0],
    )
    case(
        f"cross_entropy_smoothing_{red}",
        lambda L, x, t, w, r=red: F(L).cross_entropy(x, t, weight=w, reduction=r, label_smoothing=0.2),
        [X45, T4_IGN, W5],
        [1, 0, 0],
    )
    case(
        f"cross_entropy_smoothing_noweight_{red}",
        lambda L, x, t, r=red: F(L).cross_entropy(x, t, reduction=r, label_smoothing=0.3, ignore_index=4),
        [X45, T4],
        [1, 0],
    )
    case(
        f"cross_entropy_probs_{red}",
        lambda L, x, t, w, r=red: F(L).cross_entropy(x, t, weight=w, reduction=r, label_smoothing=0.1),
        [X45, PROBS, W5],
        [1, 1, 0],
    )
    case(
        f"cross_entropy_kd_{red}",
        lambda L, x, t, r=red: F(L).cross_entropy(x, t, reduction=r, ignore_index=1),
        [X4K, TK_IGN],
        [1, 0],
    )
    case(
        f"nll_loss_{red}",
        lambda L, x, t, w, r=red: F(L).nll_loss(x, t, w, reduction=r, ignore_index=2),
        [X45, T4, W5],
        [1, 0, 0],
    )
    case(f"nll_loss_2d_{red}", lambda L, x, t, r=red: F(L).nll_loss(x, t, reduction=r), [X4K, T4K], [1, 0])
    case(
        f"bce_{red}",
        lambda L, x, t, w, r=red: F(L).binary_cross_entropy(x, t, weight=w, reduction=r),
        [_u(3, 4), _u(3, 4), _u(4)],
        [1, 1, 0],
    )
    case(
        f"bce_logits_{red}",
        lambda L, x, t, w, pw, r=red: F(L).binary_cross_entropy_with_logits(
            x, t, weight=w, pos_weight=pw, reduction=r
        ),
        [np.array([[0.0, 1.5, -2.0, 40.0], [-50.0, 0.3, 2.0, -0.1]]), _u(2, 4), _u(4), _u(4, lo=0.5, hi=3)],
        [1, 1, 0, 0],
    )
    case(f"mse_{red}", lambda L, x, t, r=red: F(L).mse_loss(x, t, reduction=r), [_r(3, 4), _r(3, 4)], [1, 1])
    case(
        f"mse_weight_{red}",
        lambda L, x, t, w, r=red: F(L).mse_loss(x, t, reduction=r, weight=w),
        [_r(3, 4), _r(3, 4), _u(3, 4)],
        [1, 1, 1],
    )
    case(
        f"l1_{red}",
        lambda L, x, t, r=red: F(L).l1_loss(x, t, reduction=r),
        [np.array([1.0, 2.0, -1.0]), np.array([1.0, 0.5, 0.0])],
        [1, 1],
    )
    case(
        f"l1_weight_{red}",
        lambda L, x, t, w, r=red: F(L).l1_loss(x, t, reduction=r, weight=w),
        [_r(3, 4), _r(3, 4), _u(3, 4)],
        [1, 1, 1],
    )
    case(
        f"smooth_l1_{red}",
        lambda L, x, t, r=red: F(L).smooth_l1_loss(x, t, reduction=r, beta=0.5),
        [np.array([0.0, 0.5, -0.5, 0.2, 3.0, -2.0]), np.zeros(6)],
        [1, 1],
    )
    case(
        f"smooth_l1_beta0_{red}",
        lambda L, x, t, r=red: F(L).smooth_l1_loss(x, t, reduction=r, beta=0.0),
        [np.array([0.0, 0.5, -1.5]), np.zeros(3)],
        [1, 1],
    )
    case(
        f"huber_{red}",
        lambda L, x, t, r=red: F(L).huber_loss(x, t, reduction=r, delta=0.5),
        [np.array([0.0, 0.5, -0.5, 0.2, 3.0, -2.0]), np.zeros(6)],
        [1, 1],
    )
    case(
        f"huber_weight_{red}",
        lambda L, x, t, w, r=red: F(L).huber_loss(x, t, reduction=r, weight=w),
        [_r(3, 4), _r(3, 4), _u(3, 4)],
        [1, 1, 1],
    )
    case(f"kl_div_{red}", lambda L, x, t, r=red: F(L).kl_div(x, t, reduction=r), [_r(3, 4), _u(3, 4)], [1, 1])
    case(
        f"kl_div_log_target_{red}",
        lambda L, x, t, r=red: F(L).kl_div(x, t, reduction=r, log_target=True),
        [_r(3, 4), _r(3, 4)],
        [1, 1],
    )
    case(
        f"poisson_{red}",
        lambda L, x, t, r=red: F(L).poisson_nll_loss(x, t, reduction=r),
        [_r(3, 4), 3 * _u(3, 4)],
        [1, 1],
    )
    case(
        f"poisson_full_nolog_{red}",
        lambda L, x, t, r=red: F(L).poisson_nll_loss(x, t, log_input=False, full=True, reduction=r, eps=1e-3),
        [_u(3, 4), 3 * _u(3, 4)],
        [1, 1],
    )
    case(
        f"gaussian_{red}",
        lambda L, x, t, v, r=red: F(L).gaussian_nll_loss(x, t, v, reduction=r),
        [_r(3, 4), _r(3, 4), _u(3, 4)],
        [1, 1, 1],
    )
    case(
        f"gaussian_full_homosced_clamped_{red}",
        lambda L, x, t, v, r=red: F(L).gaussian_nll_loss(x, t, v, full=True, eps=0.1, reduction=r),
        [_r(3, 4), _r(3, 4), np.array([0.01, 0.5, 2.0])],
        [1, 1, 1],
    )
    case(
        f"margin_ranking_{red}",
        lambda L, a, b, y, r=red: F(L).margin_ranking_loss(a, b, y, margin=0.5, reduction=r),
        [np.array([1.0, 0.0, 2.0, -1.0]), np.array([0.5, 0.5, 1.0, -1.0]), np.array([1.0, -1.0, -1.0, 1.0])],
        [1, 1, 0],
    )
    case(
        f"hinge_embedding_{red}",
        lambda L, x, y, r=red: F(L).hinge_embedding_loss(x, y, margin=0.7, reduction=r),
        [np.array([0.2, 1.0, 0.7, -0.3, 2.0]), np.array([1.0, -1.0, -1.0, -1.0, 1.0])],
        [1, 0],
    )
    case(
        f"soft_margin_{red}",
        lambda L, x, y, r=red: F(L).soft_margin_loss(x, y, reduction=r),
        [_r(3, 4), np.sign(_r(3, 4))],
        [1, 0],
    )
    case(
        f"multilabel_soft_margin_{red}",
        lambda L, x, y, w, r=red: F(L).multilabel_soft_margin_loss(x, y, weight=w, reduction=r),
        [
            np.array([[0.0, 1.0, -3.0], [40.0, -0.2, 0.5]]),
            np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]),
            _u(3),
        ],
        [1, 1, 0],
    )
    case(
        f"multilabel_margin_{red}",
        lambda L, x, y, r=red: F(L).multilabel_margin_loss(x, y, reduction=r),
        [np.array([[0.1, 0.2, 0.4, 0.8], [0.5, 0.5, -0.5, 1.0]]), np.array([[3, 0, -1, 1], [1, 2, 3, -1]])],
        [1, 0],
        second=False,  # PyTorch: "derivative for aten::multilabel_margin_loss_backward is not implemented"
    )
    case(
        f"multi_margin_{red}",
        lambda L, x, y, w, r=red: F(L).multi_margin_loss(x, y, p=2, margin=0.8, weight=w, reduction=r),
        [_r(3, 4), np.array([0, 3, 1]), _u(4)],
        [1, 0, 0],
        second=False,  # PyTorch: "derivative for aten::multi_margin_loss_backward is not implemented"
    )
    case(
        f"multi_margin_p1_{red}",
        lambda L, x, y, r=red: F(L).multi_margin_loss(x, y, reduction=r),
        [np.array([[0.1, 1.1, 0.5]]), np.array([1])],
        [1, 0],
        second=False,
    )
    case(
        f"triplet_{red}",
        lambda L, a, p, n, r=red: F(L).triplet_margin_loss(a, p, n, reduction=r),
        [_r(4, 3), _r(4, 3), _r(4, 3)],
        [1, 1, 1],
    )
    case(
        f"triplet_swap_p1_{red}",
        lambda L, a, p, n, r=red: F(L).triplet_margin_loss(a, p, n, p=1, swap=True, margin=2.0, reduction=r),
        [_r(4, 3), _r(4, 3), _r(4, 3)],
        [1, 1, 1],
    )
    case(
        f"triplet_distance_fn_{red}",
        lambda L, a, p, n, r=red: F(L).triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda x, y: 1.0 - F(L).cosine_similarity(x, y), swap=True, reduction=r
        ),
        [_r(4, 3), _r(4, 3), _r(4, 3)],
        [1, 1, 1],
    )
    case(
        f"cosine_embedding_{red}",
        lambda L, a, b, y, r=red: F(L).cosine_embedding_loss(a, b, y, margin=0.1, reduction=r),
        [_r(4, 3), _r(4, 3), np.array([1.0, -1.0, -1.0, 1.0])],
        [1, 1, 0],
    )

case(
    "kl_div_batchmean", lambda L, x, t: F(L).kl_div(x, t, reduction="batchmean"), [_r(3, 4), _u(3, 4)], [1, 1]
)
case(
    "kl_div_zero_target",
    lambda L, x, t: F(L).kl_div(x, t, reduction="sum"),
    [_r(3), np.array([0.0, 0.5, 1.0])],
    [1, 1],
)
case(
    "bce_at_zero_and_one",
    lambda L, x, t: F(L).binary_cross_entropy(x, t),
    [np.array([0.0, 1.0, 0.5, 1.0]), np.array([0.3, 0.2, 0.5, 1.0])],
    [1, 1],
)
case("cross_entropy_unbatched", lambda L, x, t: F(L).cross_entropy(x, t), [_r(5), np.array(3)], [1, 0])
case(
    "cross_entropy_all_ignored_mean",
    lambda L, x, t: F(L).cross_entropy(x, t),
    [_r(2, 3), np.array([-100, -100])],
    [1, 0],
)
case(
    "cross_entropy_empty_batch",
    lambda L, x, t: F(L).cross_entropy(x, t, reduction="sum"),
    [np.zeros((0, 3)), np.zeros(0, dtype=np.int64)],
    [1, 0],
)
case(
    "gaussian_var_short",
    lambda L, x, t, v: F(L).gaussian_nll_loss(x, t, v),
    [_r(3, 4), _r(3, 4), _u(3)],
    [1, 1, 1],
)
case(
    "multi_margin_unbatched",
    lambda L, x, y: F(L).multi_margin_loss(x, y),
    [_r(4), np.array(2)],
    [1, 0],
    second=False,
)
case(
    "multilabel_margin_duplicate_targets",  # a class listed twice counts twice (PyTorch's kernel)
    lambda L, x, y: F(L).multilabel_margin_loss(x, y, reduction="sum"),
    [_r(2, 4), np.array([[2, 2, 0, -1], [3, 3, 3, 3]])],
    [1, 0],
    second=False,
)
case(
    "multilabel_margin_0d",
    lambda L, x, y: F(L).multilabel_margin_loss(x, y),
    [np.array(0.3), np.array(0)],
    [1, 0],
    second=False,
)
case(
    "multilabel_margin_unbatched",
    lambda L, x, y: F(L).multilabel_margin_loss(x, y),
    [_r(4), np.array([2, 1, -1, 0])],
    [1, 0],
    second=False,
)
case("mse_broadcast", lambda L, x, t: F(L).mse_loss(x, t), [_r(3, 4), _r(4)], [1, 1])
case(
    "float32_cross_entropy",
    lambda L, x, t: F(L).cross_entropy(x.float(), t),
    [_r(3, 4), np.array([0, 3, 1])],
    [1, 0],
    rtol=1e-5,
    atol=1e-6,
)


@pytest.mark.parametrize("fn, arrays, mask, opts", CASES)
def test_loss_agrees_with_torch(fn, arrays, mask, opts):
    assert_agree(fn, arrays, mask, **opts)


ERRORS = [
    ("nll_target_out_of_range", lambda L, x, t: F(L).nll_loss(x, t), [_r(2, 3), np.array([0, 3])]),
    ("nll_batch_mismatch", lambda L, x, t: F(L).nll_loss(x, t), [_r(2, 3), np.array([0, 1, 2])]),
    ("nll_float_target", lambda L, x, t: F(L).nll_loss(x, t), [_r(2, 3), np.array([0.0, 1.0])]),
    ("nll_bad_reduction", lambda L, x, t: F(L).nll_loss(x, t, reduction="avg"), [_r(2, 3), np.array([0, 1])]),
    ("nll_weight_size", lambda L, x, t, w: F(L).nll_loss(x, t, w), [_r(2, 3), np.array([0, 1]), np.ones(2)]),
    (
        "ce_smoothing_range",
        lambda L, x, t: F(L).cross_entropy(x, t, label_smoothing=1.5),
        [_r(2, 3), np.array([0, 1])],
    ),
    (
        "bce_out_of_range",
        lambda L, x, t: F(L).binary_cross_entropy(x, t),
        [np.array([0.5, 1.5]), np.array([0.0, 1.0])],
    ),
    ("bce_size", lambda L, x, t: F(L).binary_cross_entropy(x, t), [np.array([0.5, 0.5]), np.array([0.0])]),
    (
        "bce_logits_size",
        lambda L, x, t: F(L).binary_cross_entropy_with_logits(x, t),
        [np.array([0.5, 0.5]), np.array([0.0])],
    ),
    ("multi_margin_p3", lambda L, x, t: F(L).multi_margin_loss(x, t, p=3), [_r(2, 3), np.array([0, 1])]),
    (
        "gaussian_negative_var",
        lambda L, x, t, v: F(L).gaussian_nll_loss(x, t, v),
        [_r(2), _r(2), np.array([1.0, -1.0])],
    ),
    (
        "gaussian_var_size",
        lambda L, x, t, v: F(L).gaussian_nll_loss(x, t, v),
        [_r(2, 3), _r(2, 3), np.ones(4)],
    ),
    ("kl_bad_reduction", lambda L, x, t: F(L).kl_div(x, t, reduction="avg"), [_r(2), _r(2)]),
    ("poisson_bad_reduction", lambda L, x, t: F(L).poisson_nll_loss(x, t, reduction="x"), [_r(2), _r(2)]),
    ("triplet_dims", lambda L, a, p, n: F(L).triplet_margin_loss(a, p, n), [_r(2, 3), _r(2, 3), _r(3)]),
    (
        "triplet_margin",
        lambda L, a, p, n: F(L).triplet_margin_with_distance_loss(a, p, n, margin=0.0),
        [_r(2, 3), _r(2, 3), _r(2, 3)],
    ),
    ("mse_weight_size", lambda L, x, t, w: F(L).mse_loss(x, t, weight=w), [_r(2, 3), _r(2, 3), np.ones(3)]),
    ("soft_margin_target_grad", lambda L, x, t: F(L).soft_margin_loss(x, t.requires_grad_()), [_r(3), _r(3)]),
    (
        "nll_weight_grad",
        lambda L, x, t, w: F(L).nll_loss(x, t, w.requires_grad_()),
        [_r(2, 3), np.array([0, 1]), np.ones(3)],
    ),
    (
        "ce_weight_grad",
        lambda L, x, t, w: F(L).cross_entropy(x, t, w.requires_grad_()),
        [_r(2, 3), np.array([0, 1]), np.ones(3)],
    ),
    (
        "bce_weight_grad",
        lambda L, x, t, w: F(L).binary_cross_entropy(x, t, w.requires_grad_()),
        [_u(3), _u(3), _u(3)],
    ),
    (
        "bce_logits_weight_grad",
        lambda L, x, t, w: F(L).binary_cross_entropy_with_logits(x, t, weight=w.requires_grad_()),
        [_r(3), _u(3), _u(3)],
    ),
    (
        "bce_logits_pos_weight_grad",
        lambda L, x, t, w: F(L).binary_cross_entropy_with_logits(x, t, pos_weight=w.requires_grad_()),
        [_r(3), _u(3), _u(3)],
    ),
    (
        "multi_margin_weight_grad",
        lambda L, x, t, w: F(L).multi_margin_loss(x, t, weight=w.requires_grad_()),
        [_r(2, 3), np.array([0, 1]), np.ones(3)],
    ),
    ("smooth_l1_negative_beta", lambda L, x, t: F(L).smooth_l1_loss(x, t, beta=-1.0), [_r(3), _r(3)]),
]


@pytest.mark.parametrize("fn, arrays", [pytest.param(f, a, id=i) for i, f, a in ERRORS])
def test_loss_errors_match_torch(fn, arrays):
    assert_same_error(fn, arrays)


# ---- ctc_loss (PyTorch: no double backward, "_ctc_loss_backward is not implemented") -----------------

_LP = np.log(rng.dirichlet(np.ones(5), (7, 3)))  # (T, N, C)
_TG = np.array([[1, 2, 2, 4], [3, 1, 0, 0], [4, 4, 4, 4]])
_IL, _TL = np.array([7, 5, 6]), np.array([3, 2, 1])
CTC = []
for red in REDUCTIONS:
    CTC.append(
        (
            f"padded_{red}",
            lambda L, x, t, i, l, r=red: F(L).ctc_loss(x, t, i, l, reduction=r),
            [_LP, _TG, _IL, _TL],
        )
    )
    CTC.append(
        (
            f"concatenated_blank2_{red}",
            lambda L, x, t, i, l, r=red: F(L).ctc_loss(x, t, i, l, blank=2, reduction=r),
            [_LP, np.array([1, 3, 3, 4, 0, 1]), _IL, _TL],
        )
    )
    CTC.append(
        (
            f"zero_infinity_{red}",
            lambda L, x, t, i, l, r=red: F(L).ctc_loss(x, t, i, l, reduction=r, zero_infinity=True),
            [
                _LP,
                np.array([[1, 1, 1, 1], [2, 3, 0, 0], [1, 2, 1, 2]]),
                np.array([7, 2, 3]),
                np.array([4, 2, 4]),
            ],
        )
    )
CTC.append(
    (
        "unbatched",
        lambda L, x, t, i, l: F(L).ctc_loss(x, t, i, l, reduction="none"),
        [_LP[:, 0], np.array([1, 2, 2]), np.array(6), np.array(3)],
    )
)
CTC.append(
    ("empty_target", lambda L, x, t, i, l: F(L).ctc_loss(x, t, i, l), [_LP, _TG, _IL, np.array([0, 2, 1])])
)
CTC.append(
    (
        "through_log_softmax",
        lambda L, x, t, i, l: F(L).ctc_loss(x.log_softmax(2), t, i, l),
        [_r(7, 3, 5), _TG, _IL, _TL],
    )
)


@pytest.mark.parametrize("fn, arrays", [pytest.param(f, a, id=i) for i, f, a in CTC])
def test_ctc_loss_agrees_with_torch(fn, arrays):
    assert_agree(fn, arrays, [1, 0, 0, 0], second=False, rtol=1e-10, atol=1e-12)


def test_ctc_loss_errors_match_torch():
    assert_same_error(lambda L, x, t, i, l: F(L).ctc_loss(x, t, i, l), [_LP, _TG, np.array([8, 5, 6]), _TL])
    assert_same_error(lambda L, x, t, i, l: F(L).ctc_loss(x, t, i, l), [_LP, _TG, _IL, np.array([5, 2, 1])])


# ---- the composites under vmap: like a loop over the batch (allow_fallback=False) ---------------------


def _vmap_cases():
    import reference as T

    Fr = T.nn.functional
    g = np.random.default_rng(5)

    def t(*s):
        return T.tensor(g.standard_normal(s))

    def u(*s):
        return T.tensor(g.uniform(0.1, 0.9, s))

    B = 3
    w3 = T.tensor([1.0, 2.0, 3.0])
    eye = T.tensor(np.eye(4).repeat(3, 0) * 0.5 + 0.1)
    tg, il, tl = T.tensor([[1, 2, 2], [3, 1, 0]]), T.tensor([5, 4]), T.tensor([3, 2])
    return {
        "mse": (lambda x, y: Fr.mse_loss(x, y), [t(B, 2, 3), t(B, 2, 3)]),
        "bce_logits": (lambda x, y: Fr.binary_cross_entropy_with_logits(x, y), [t(B, 4), u(B, 4)]),
        "bce": (lambda x, y: Fr.binary_cross_entropy(x, y), [u(B, 4), u(B, 4)]),
        "kl_div": (lambda x, y: Fr.kl_div(x, y, reduction="batchmean"), [t(B, 2, 3), u(B, 2, 3)]),
        "sdpa_causal": (
            lambda q, k, v: Fr.scaled_dot_product_attention(q, k, v, is_causal=True),
            [t(B, 2, 4, 3)] * 3,
        ),
        "triplet_swap": (
            lambda a, p, n: Fr.triplet_margin_loss(a, p, n, swap=True),
            [t(B, 4, 3), t(B, 4, 3), t(B, 4, 3)],
        ),
        "multi_margin": (lambda x: Fr.multi_margin_loss(x, T.tensor([0, 2])), [t(B, 2, 3)]),
        "multilabel_margin": (
            lambda x: Fr.multilabel_margin_loss(x, T.tensor([[0, 2, -1], [1, -1, 0]])),
            [t(B, 2, 3)],
        ),
        "cosine_embedding": (
            lambda a, b: Fr.cosine_embedding_loss(a, b, T.tensor([1.0, -1.0])),
            [t(B, 2, 3), t(B, 2, 3)],
        ),
        "smooth_l1": (lambda x, y: Fr.smooth_l1_loss(x, y, beta=0.5), [t(B, 5), t(B, 5)]),
        "gaussian_nll": (lambda x, y, v: Fr.gaussian_nll_loss(x, y, v), [t(B, 5), t(B, 5), u(B, 5)]),
        "poisson_nll": (lambda x, y: Fr.poisson_nll_loss(x, y, full=True), [t(B, 5), u(B, 5) * 3]),
        "cross_entropy_probs": (
            lambda x, y: Fr.cross_entropy(x, y, label_smoothing=0.1),
            [t(B, 2, 3), u(B, 2, 3)],
        ),
        "cross_entropy_weight": (
            lambda x: Fr.cross_entropy(x, T.tensor([0, 2]), weight=w3, label_smoothing=0.2),
            [t(B, 2, 3)],
        ),
        "multilabel_soft_margin": (
            lambda x, y: Fr.multilabel_soft_margin_loss(x, y),
            [t(B, 2, 3), u(B, 2, 3)],
        ),
        "normalize": (lambda x: Fr.normalize(x, p=3, dim=-1), [t(B, 2, 3)]),
        "cdist": (lambda a, b: T.cdist(a, b, p=1.5), [t(B, 3, 2), t(B, 4, 2)]),
        "pdist": (lambda a: Fr.pdist(a), [t(B, 4, 2)]),
        "ctc": (lambda x: Fr.ctc_loss(x.log_softmax(-1), tg, il, tl), [t(B, 5, 2, 4)]),
        "mha": (
            lambda q: Fr.multi_head_attention_forward(
                q, q, q, 4, 2, eye, None, None, None, False, 0.0, T.tensor(np.eye(4)), None, training=False
            )[0],
            [t(B, 3, 1, 4)],
        ),
    }


@pytest.mark.parametrize("name", sorted(_vmap_cases()))
def test_composite_vmap_matches_a_loop(name):
    from reference.func import vmap

    fn, xs = _vmap_cases()[name]
    out = vmap(fn, allow_fallback=False)(*xs).numpy()
    loop = np.stack([fn(*[x[i] for x in xs]).numpy() for i in range(xs[0].shape[0])])
    np.testing.assert_allclose(out, loop, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(_vmap_cases()))
def test_composite_forward_mode_equals_reverse_mode(name):
    """jacfwd (the JVP rules of the primitives the composite runs) equals jacrev (their VJPs)."""
    from reference.func import jacfwd, jacrev

    fn, xs = _vmap_cases()[name]
    xs = [x[0] for x in xs]
    nums = tuple(range(len(xs)))
    fwd, rev = jacfwd(fn, argnums=nums)(*xs), jacrev(fn, argnums=nums)(*xs)
    for a, b in zip(fwd, rev):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
