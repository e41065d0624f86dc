"""Samples of the loss primitives (:mod:`reference.ops.rules.losses`)."""

import reference as T

F = T.nn.functional

_T = T.tensor([2, 0, -100, 1])
_TK = T.tensor([[[0, 2], [1, 1]], [[2, -100], [0, 1]]])  # (N, d1, d2) for a (2, 3, 2, 2) input
_W = T.tensor([0.5, 2.0, 1.5], dtype=T.float64)


def _leaf(x):
    """x itself where it requires grad (gradcheck), a fresh leaf otherwise (vmap's samples)."""
    return x if x.requires_grad else x.clone().requires_grad_()


def _nll_grad(x, v, **kw):
    """nll_loss_backward through a gradient taken with create_graph, paired with a second input."""
    x = _leaf(x)
    (g,) = T.autograd.grad(F.nll_loss(x, _T, **kw), x, create_graph=True)
    return g * v


def _nll_grad_of_grad_output(x, v):
    """nll_loss_backward as a function of its grad_output (reduction='none')."""
    x = _leaf(x)
    out = F.nll_loss(x * 1.0, _T, reduction="none", weight=_W)
    (g,) = T.autograd.grad(out, x, v, create_graph=True)
    return g * x


RECORDS = {
    "nll_loss": [
        ("mean_weight_ignore", lambda x: F.nll_loss(x, _T, weight=_W), [(4, 3)], "a"),
        ("none", lambda x: F.nll_loss(x, _T, reduction="none"), [(4, 3)], "a"),
        ("sum_kd", lambda x: F.nll_loss(x, _TK, reduction="sum", weight=_W), [(2, 3, 2, 2)], "a"),
        ("unbatched", lambda x: F.nll_loss(x, T.tensor(1)), [(3,)], "a"),
        ("cross_entropy", lambda x: F.cross_entropy(x, _T, label_smoothing=0.1), [(4, 3)], "a"),
    ],
    "nll_loss_backward": [
        ("mean", lambda x, v: _nll_grad(x, v, weight=_W), [(4, 3), (4, 3)], "aa"),
        ("grad_output", _nll_grad_of_grad_output, [(4, 3), (4,)], "aa"),
    ],
    "binary_cross_entropy": [
        (
            "weight",
            lambda x, t: F.binary_cross_entropy(T.sigmoid(x), T.sigmoid(t), weight=_W),
            [(2, 3), (2, 3)],
            "aa",
        ),
        (
            "none",
            lambda x, t: F.binary_cross_entropy(T.sigmoid(x), T.sigmoid(t), reduction="none"),
            [(4,), (4,)],
            "aa",
        ),
    ],
}
