"""Agreement with PyTorch for the normalisation functions of ``nn.functional``: values, first and
second derivatives, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import reference as T
from tests.autograd.nn_agreement import agree, errors_agree

TF = torch.nn.functional
RF = T.nn.functional


def test_batch_norm_training_double_backward_through_dependent_grad_out():
    """The defect of issue 11: grad_out depends on the input (y**3), the second backward of the
    training-mode batch norm raised 'Trying to backward through the graph a second time'."""
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((4, 3, 2)), rng.standard_normal(3), rng.standard_normal(3)

    def prog(F, lib, x, w, b):
        y = F.batch_norm(x, None, None, w, b, training=True)
        gx, gw = lib.autograd.grad((y**3).sum(), (x, w), create_graph=True)
        return (gx * gx).sum() + (gw**2).sum()

    # second order (the program takes the first gradient); torch's third derivative here is not
    # exact (finite differences agree with the reference's), so the test stops at the second
    agree(prog, [x, w, b], second_order=False)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 5), (2, 3, 2, 2), (2, 2, 2, 1, 3)])
def test_batch_norm(training, shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    w, b = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    rm0, rv0 = rng.standard_normal(shape[1]), rng.random(shape[1]) + 0.5

    def prog(F, lib, x, w, b):
        rm, rv = lib.tensor(rm0), lib.tensor(rv0)
        y = F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.3)
        return y * y, rm, rv

    agree(prog, [x, w, b], second_order=True)


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


NORMS = [
    ("layer_norm", lambda F, lib, x, w, b: F.layer_norm(x, (3, 4), w, b), (2, 3, 4), (3, 4)),
    ("layer_norm_no_affine", lambda F, lib, x, w, b: F.layer_norm(x, (4,), eps=1e-3), (2, 3, 4), (3, 4)),
    ("group_norm", lambda F, lib, x, w, b: F.group_norm(x, 2, w, b), (2, 4, 3), (4,)),
    ("group_norm_empty_batch", lambda F, lib, x, w, b: F.group_norm(x, 2, w, b), (0, 4, 3), (4,)),
    ("layer_norm_empty_batch", lambda F, lib, x, w, b: F.layer_norm(x, (3,), w[0], b[0]), (0, 4, 3), (4, 3)),
    ("group_norm_4d", lambda F, lib, x, w, b: F.group_norm(x, 1, w, b, eps=0.1), (2, 4, 2, 2), (4,)),
    ("rms_norm_eps_none", lambda F, lib, x, w, b: F.rms_norm(x, (4,), w[0]), (2, 3, 4), (3, 4)),
    ("rms_norm_eps", lambda F, lib, x, w, b: F.rms_norm(x, (3, 4), w, eps=0.5), (2, 3, 4), (3, 4)),
    ("instance_norm", lambda F, lib, x, w, b: F.instance_norm(x, weight=w, bias=b), (2, 4, 3), (4,)),
    (
        "local_response_norm_3d",
        lambda F, lib, x, w, b: F.local_response_norm(x, 3, alpha=0.1),
        (2, 5, 3),
        (1,),
    ),
    (
        "local_response_norm_4d",
        lambda F, lib, x, w, b: F.local_response_norm(x, 2, 0.2, 0.5, 2.0),
        (2, 4, 2, 3),
        (1,),
    ),
]


@pytest.mark.parametrize("label, fn, shape, wshape", NORMS, ids=[c[0] for c in NORMS])
def test_norms(label, fn, shape, wshape):
    agree(fn, [_x(*shape), _x(*wshape, seed=1), _x(*wshape, seed=2)])


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_running_stats(use_input_stats):
    rm0, rv0 = _x(3, seed=3), np.abs(_x(3, seed=4)) + 0.5

    def prog(F, lib, x, w):
        rm, rv = lib.tensor(rm0), lib.tensor(rv0)
        y = F.instance_norm(x, rm, rv, w, None, use_input_stats=use_input_stats, momentum=0.25)
        return y, rm, rv

    agree(prog, [_x(2, 3, 5), _x(3, seed=1)])


def test_batch_norm_1d_input_rejected():
    errors_agree(lambda F, lib, x: F.batch_norm(x, None, None, training=True), _x(3))


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize(
    "shape", [(0, 3), (0, 3, 4), (2, 3, 0), (0,)], ids=["batch", "batch_3d", "spatial", "1d"]
)
def test_batch_norm_empty(training, shape):
    """aten's batch_norm on an empty input: a clone of it times weight[0] plus bias[0] (the graph
    goes on; weight and bias get zero gradients), the running statistics untouched and not
    required in evaluation mode; an empty weight fails on weight[0]."""
    c = shape[1] if len(shape) > 1 else 0

    def prog(F, lib, x, w, b):
        rm, rv = lib.zeros(c, dtype=x.dtype), lib.ones(c, dtype=x.dtype)
        stats = (rm, rv) if len(shape) > 1 else (None, None)
        y = F.batch_norm(x, *stats, w if c else None, b if c else None, training=training)
        return y, rm, rv

    agree(prog, [_x(*shape), _x(c, seed=1) + 2.0, _x(c, seed=2)])


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_empty_errors(training):
    for shape, c in (((0,), 0), ((2, 0), 0)):
        errors_agree(
            lambda F, lib, x, w: F.batch_norm(x, None, None, w, None, training=training), _x(*shape), _x(c)
        )
    errors_agree(lambda F, lib, x: F.batch_norm(x, None, None, training=training), _x())
    errors_agree(lambda F, lib, x, m: F.batch_norm(x, m, None, training=False), _x(2, 3), _x(3))
    errors_agree(lambda F, lib, x, m: F.batch_norm(x, None, m, training=False), _x(2, 3), _x(3))


ERRORS = [
    ("layer_norm_shape", lambda F, lib, x: F.layer_norm(x, (5,)), (1, 2, 5, 4)),
    ("rms_norm_shape", lambda F, lib, x: F.rms_norm(x, (5,)), (1, 2, 5, 4)),
    ("group_norm_groups", lambda F, lib, x: F.group_norm(x, 3), (1, 2, 5, 4)),
    ("batch_norm_one_value", lambda F, lib, x: F.batch_norm(x, None, None, training=True), (1, 3)),
    ("instance_norm_one_value", lambda F, lib, x: F.instance_norm(x), (2, 3, 1)),
    ("local_response_norm_dims", lambda F, lib, x: F.local_response_norm(x, 2), (2, 5)),
]


@pytest.mark.parametrize("label, fn, shape", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(label, fn, shape):
    errors_agree(fn, _x(*shape))


IDX = np.array([[0, 2, 1], [3, 3, 0]])


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"padding_idx": 3}, {"padding_idx": -1, "scale_grad_by_freq": True}, {"scale_grad_by_freq": True}],
    ids=["plain", "padding_idx", "negative_padding_scale_freq", "scale_freq"],
)
def test_embedding(kwargs):
    agree(lambda F, lib, w: F.embedding(lib.tensor(IDX), w * 1.5, **kwargs) ** 2, [_x(4, 3)])


def test_embedding_max_norm_renormalises_in_place():
    def prog(F, lib, w):
        w2 = (w * 1.0).detach()
        out = F.embedding(lib.tensor(IDX), w2, max_norm=1.0)
        return out, w2

    agree(prog, [_x(4, 3) * 2])


EMB_ERRORS = [
    ("float_indices", lambda F, lib, w: F.embedding(lib.tensor([0.5]), w)),
    ("out_of_range", lambda F, lib, w: F.embedding(lib.tensor([5]), w)),
    ("padding_out_of_range", lambda F, lib, w: F.embedding(lib.tensor([1]), w, padding_idx=4)),
    ("weight_1d", lambda F, lib, w: F.embedding(lib.tensor([1]), w[0])),
    ("bag_psw_shape", lambda F, lib, w: F.embedding_bag(lib.tensor([[1]]), w, per_sample_weights=w[0, :1])),
    ("bag_psw_mean", lambda F, lib, w: F.embedding_bag(lib.tensor([[1]]), w, per_sample_weights=w[:1, :1])),
]


@pytest.mark.parametrize("label, fn", EMB_ERRORS, ids=[c[0] for c in EMB_ERRORS])
def test_embedding_errors(label, fn):
    errors_agree(fn, _x(4, 3))


BAGS = [
    ("sum_offsets", dict(mode="sum"), np.array([0, 2, 1, 3, 3]), np.array([0, 2, 2])),
    (
        "mean_offsets_last",
        dict(mode="mean", include_last_offset=True),
        np.array([0, 2, 1, 3, 3]),
        np.array([0, 1, 4, 5]),
    ),
    ("max_offsets", dict(mode="max"), np.array([0, 2, 1, 3, 3]), np.array([0, 2, 2])),
    ("mean_2d_padding", dict(mode="mean", padding_idx=3), IDX, None),
    ("sum_2d_padding", dict(mode="sum", padding_idx=0), IDX, None),
    ("max_2d", dict(mode="max"), IDX, None),
    (
        "max_padding_empty_bag",
        dict(mode="max", padding_idx=2),
        np.array([0, 2, 1, 3, 2]),
        np.array([0, 2, 4]),
    ),
    ("max_ties", dict(mode="max"), np.array([1, 1, 0, 0]), np.array([0, 2])),
]


@pytest.mark.parametrize("label, kwargs, idx, offsets", BAGS, ids=[c[0] for c in BAGS])
def test_embedding_bag(label, kwargs, idx, offsets):
    def prog(F, lib, w):
        off = None if offsets is None else lib.tensor(offsets)
        return F.embedding_bag(lib.tensor(idx), w * 1.0, off, **kwargs)

    agree(prog, [_x(4, 3)])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_vmap(mode):
    """vmap over the weight (and vmap of its VJP) without the slice-loop fallback, as torch.func."""
    idx, off = np.array([0, 2, 1, 3, 3, 1]), np.array([0, 2, 2, 5])
    w = np.random.default_rng(3).standard_normal((3, 4, 2))

    def f(lib):
        return lambda w: lib.nn.functional.embedding_bag(lib.tensor(idx), w, lib.tensor(off), mode=mode)

    want = torch.func.vmap(f(torch))(torch.tensor(w))
    got = T.func.vmap(f(T), allow_fallback=False)(T.tensor(w))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
    want = torch.func.vmap(torch.func.grad(lambda w: (f(torch)(w) ** 2).sum()))(torch.tensor(w))
    got = T.func.vmap(T.func.grad(lambda w: (f(T)(w) ** 2).sum()), allow_fallback=False)(T.tensor(w))
    np.testing.assert_allclose(got.detach().numpy(), want.numpy(), rtol=1e-12, atol=1e-14)


def test_embedding_bag_per_sample_weights():
    def prog(F, lib, w, psw):
        return F.embedding_bag(
            lib.tensor(np.array([0, 2, 1, 3])),
            w,
            lib.tensor(np.array([0, 3])),
            mode="sum",
            per_sample_weights=psw,
        )

    # first order only: torch has no derivative for _embedding_bag_per_sample_weights_backward
    agree(prog, [_x(4, 3), _x(4, seed=1)], second_order=False)


# ---- aten's native normalisations and bilinear ------------------------------------------------------


@pytest.mark.parametrize("affine", [True, False])
def test_native_layer_norm(affine):
    def prog(F, lib, x, w, b):
        out, mean, rstd = lib.native_layer_norm(x, (3, 4), w if affine else None, b if affine else None, 1e-5)
        assert not mean.requires_grad and not rstd.requires_grad
        return out, mean, rstd

    agree(prog, [_x(2, 3, 4), _x(3, 4, seed=1), _x(3, 4, seed=2)])


def test_native_group_norm():
    def prog(F, lib, x, w, b):
        return lib.native_group_norm(x, w, b, 2, 6, 4, 3, 1e-5)  # mean and rstd are differentiable

    agree(prog, [_x(2, 6, 2, 2), _x(6, seed=1), _x(6, seed=2)])


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("name", ["native_batch_norm", "_native_batch_norm_legit"])
def test_native_batch_norm(name, training):
    def prog(F, lib, x, w, b):
        rm, rv = lib.zeros(3, dtype=x.dtype), lib.ones(3, dtype=x.dtype)
        out, mean, invstd = getattr(lib, name)(x, w, b, rm, rv, training, 0.3, 1e-5)
        return out, mean, invstd, rm, rv

    agree(prog, [_x(4, 3, 2), _x(3, seed=1), _x(3, seed=2)])


def test_native_batch_norm_legit_without_running_stats():
    agree(
        lambda F, lib, x, w: lib._native_batch_norm_legit(x, w, None, True, 0.1, 1e-5),
        [_x(4, 3, 2), _x(3, seed=1)],
    )


@pytest.mark.parametrize(
    "s1, s2",
    [((3,), (4,)), ((2, 3), (2, 4)), ((2, 1, 3), (2, 1, 4)), ((0, 3), (0, 4))],
    ids=["1d", "2d", "3d", "empty"],
)
def test_bilinear(s1, s2):
    agree(
        lambda F, lib, a, b, w, c: F.bilinear(a, b, w, c) ** 2,
        [_x(*s1), _x(*s2, seed=1), _x(5, 3, 4, seed=2), _x(5, seed=3)],
    )


BILINEAR_ERRORS = [
    ("dims", (2, 3), (4,), (5, 3, 4), None),
    ("batch", (2, 3), (3, 4), (5, 3, 4), None),
    ("input1", (2, 2), (2, 4), (5, 3, 4), None),
    ("input2", (2, 3), (2, 5), (5, 3, 4), None),
    ("bias", (2, 3), (2, 4), (5, 3, 4), (4,)),
]


@pytest.mark.parametrize("label, s1, s2, sw, sb", BILINEAR_ERRORS, ids=[c[0] for c in BILINEAR_ERRORS])
def test_bilinear_errors(label, s1, s2, sw, sb):
    arrays = [_x(*s1), _x(*s2), _x(*sw)] + ([_x(*sb)] if sb else [])
    errors_agree(lambda F, lib, *a: F.bilinear(*a), *arrays)


@pytest.mark.parametrize(
    "xs, ws, target, kwargs",
    [
        ((5, 3), (4, 3), np.array([0, 3, 1, 1, 2]), {}),
        ((3,), (4, 3), np.array(2), {"reduction": "sum"}),
        ((4, 3), (2, 3, 3), np.array([[0, 1, 1], [1, 0, 0], [1, 1, 0], [0, 0, 1]]), {"reduction": "none"}),
        ((5, 3), (4, 3), np.array([0, 3, 1, 1, 2]), {"ignore_index": 1, "label_smoothing": 0.2}),
        ((5, 3), (4, 3), "probs", {"label_smoothing": 0.1}),
    ],
    ids=["plain", "unbatched_sum", "k_dim_none", "ignore_smoothing", "probabilities"],
)
def test_linear_cross_entropy(xs, ws, target, kwargs):
    """PyTorch's documented reference: cross_entropy(linear(input, linear_weight) + bias, target)."""
    probs = np.random.default_rng(4).dirichlet(np.ones(4), size=5)

    def prog(F, lib, x, w, b, cw):
        t = lib.tensor(probs) if isinstance(target, str) else lib.tensor(target)
        return F.linear_cross_entropy(x, w, t, linear_bias=b, weight=cw, **kwargs)

    arrays = [_x(*xs), _x(*ws, seed=1), _x(*ws[:-1], seed=2), np.abs(_x(ws[0], seed=3)) + 0.5]
    agree(prog, arrays, grad=[True, True, True, False])  # torch does not differentiate the class weight


@pytest.mark.parametrize("p", [2, 1, 3.5, float("inf"), 0])
def test_dist(p):
    """torch.dist: the p-norm of the broadcast difference; a zero difference has zero gradient."""
    x, y = _x(3, 4), _x(4, seed=1)
    y[:2] = x[0, :2]
    # torch's second derivatives for p = 1 and inf are ZeroTensors its helpers cannot read; p = 0
    # has no gradient in torch (None), so only its value is compared
    grad = None if p != 0 else [False, False]
    agree(lambda F, lib, x, y: lib.dist(x, y, p), [x, y], second_order=p in (2, 3.5), grad=grad)
    if p != 0:
        agree(
            lambda F, lib, x: lib.dist(x, lib.zeros(3, dtype=x.dtype), p), [np.zeros(3)], second_order=False
        )
