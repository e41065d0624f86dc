"""Convolution and batch-norm batch rules: forward (both paths: reference.conv's array-level fold
for plain values, the differentiable Tensor fold under outer transforms), convolution_backward in
all seven combinations of batched grad_output / input / weight, the double backward, batch norm,
against slice-loop-stack and against torch.func."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import reference as T
from reference.func import fallback_counts, grad, jvp, reset_fallback_counts, vjp, vmap

F = T.nn.functional
B = 3

CONFIGS = [
    ("conv2d_stride_groups", dict(stride=2, padding=1, groups=2), (2, 4, 5, 5), (6, 2, 3, 3), False),
    ("conv1d_dilation", dict(dilation=2), (2, 3, 7), (4, 3, 2), False),
    (
        "conv_transpose2d",
        dict(stride=2, padding=1, output_padding=1, groups=2),
        (1, 4, 3, 3),
        (4, 3, 2, 2),
        True,
    ),
]


def _t(a):
    return T.tensor(a, dtype=T.float64)


def _np(x):
    return x.detach().numpy()


def _conv(x, w, b, kw, transposed):
    nd = x.ndim - 2
    if transposed:
        return getattr(F, f"conv_transpose{nd}d")(x, w, b, **kw)
    return getattr(F, f"conv{nd}d")(x, w, b, **kw)


def _sample(shape, batched, rng):
    return _t(rng.standard_normal(((B,) if batched else ()) + shape))


def _loop(fn, args, flags):
    return np.stack([_np(fn(*[a[k] if f else a for a, f in zip(args, flags)])) for k in range(B)])


@pytest.mark.parametrize("label, kw, xs, ws, transposed", CONFIGS, ids=[c[0] for c in CONFIGS])
@pytest.mark.parametrize("flags", [f for f in itertools.product((False, True), repeat=3) if any(f)])
def test_convolution_batch_rule_both_paths(label, kw, xs, ws, transposed, flags):
    rng = np.random.default_rng(0)
    out_channels = ws[1] * kw.get("groups", 1) if transposed else ws[0]
    args = [_sample(xs, flags[0], rng), _sample(ws, flags[1], rng), _sample((out_channels,), flags[2], rng)]
    dims = tuple(0 if f else None for f in flags)
    fn = lambda x, w, b: _conv(x, w, b, kw, transposed)  # noqa: E731
    expected = _loop(fn, args, flags)
    np.testing.assert_allclose(
        _np(vmap(fn, dims, allow_fallback=False)(*args)), expected, rtol=1e-12, atol=1e-12
    )
    # under an outer jvp the physical values carry tangents: the differentiable fold runs
    tangents = tuple(T.zeros_like(a) for a in args)
    out, _ = jvp(lambda *a: vmap(fn, dims, allow_fallback=False)(*a), tuple(args), tangents)
    np.testing.assert_allclose(_np(out), expected, rtol=1e-12, atol=1e-12)


def _conv_vjp(kw, transposed):
    """(grad_input, grad_weight, grad_bias) of the convolution at (x, w, b) for grad_output g."""

    def f(g, x, w, b):
        leaves = [a.clone().requires_grad_() for a in (x, w, b)]
        return T.autograd.grad(_conv(*leaves, kw, transposed), leaves, g, create_graph=True)

    return f


@pytest.mark.parametrize("label, kw, xs, ws, transposed", CONFIGS, ids=[c[0] for c in CONFIGS])
@pytest.mark.parametrize("flags", [f for f in itertools.product((False, True), repeat=3) if any(f)])
def test_convolution_backward_seven_combinations(label, kw, xs, ws, transposed, flags):
    """flags: which of (grad_output, input, weight) are batched -- the seven combinations."""
    rng = np.random.default_rng(1)
    out_channels = ws[1] * kw.get("groups", 1) if transposed else ws[0]
    x1, w1 = _t(rng.standard_normal(xs)), _t(rng.standard_normal(ws))
    b = _t(rng.standard_normal(out_channels))
    gshape = tuple(_conv(x1, w1, b, kw, transposed).shape)
    g, x, w = _sample(gshape, flags[0], rng), _sample(xs, flags[1], rng), _sample(ws, flags[2], rng)
    f = _conv_vjp(kw, transposed)
    dims = tuple(0 if fl else None for fl in flags) + (None,)
    reset_fallback_counts()
    got = vmap(f, dims, allow_fallback=False)(g, x, w, b)
    assert fallback_counts() == {}
    for j, name in enumerate(("grad_input", "grad_weight", "grad_bias")):
        expected = _loop(lambda *a, j=j: f(*a)[j], (g, x, w, b), flags + (False,))
        np.testing.assert_allclose(_np(got[j]), expected, rtol=1e-11, atol=1e-12, err_msg=name)


def test_convolution_double_backward_under_vmap():
    """vmap of a second derivative through a convolution: the double backward's convolutions
    and convolution_backwards run batched."""
    rng = np.random.default_rng(2)
    x, w = _t(rng.standard_normal((B, 1, 2, 5, 5))), _t(rng.standard_normal((3, 2, 2, 2)))
    v = _t(rng.standard_normal((B, 3, 5, 5)))

    def f(x, w, v):
        w = w.clone().requires_grad_()
        x = x.clone().requires_grad_()
        (gw,) = T.autograd.grad((F.conv2d(x, w, padding=1) ** 2).sum(), (w,), create_graph=True)
        return T.autograd.grad((gw * gw).sum(), (x,), create_graph=True)[0] + 0 * v.sum()

    got = vmap(f, (0, None, 0), allow_fallback=False)(x, w, v)
    np.testing.assert_allclose(_np(got), _loop(f, (x, w, v), (True, False, True)), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_batch_rule(training):
    rng = np.random.default_rng(3)
    x = _t(rng.standard_normal((B, 4, 3, 2, 2)))
    w, bias = _t(rng.standard_normal((B, 3))), _t(rng.standard_normal(3))
    rm, rv = (None, None) if training else (_t(rng.standard_normal(3)), _t(rng.random(3) + 0.5))

    def f(x, w, bias):
        return F.batch_norm(x, rm, rv, w, bias, training=training).tanh()

    got = vmap(f, (0, 0, None), allow_fallback=False)(x, w, bias)
    np.testing.assert_allclose(_np(got), _loop(f, (x, w, bias), (True, True, False)), rtol=1e-12, atol=1e-12)
    gx = vmap(grad(lambda x, w: f(x, w, bias).sum(), argnums=(0, 1)), allow_fallback=False)(x, w)
    for k in range(B):
        ref = grad(lambda x, w: f(x, w, bias).sum(), argnums=(0, 1))(x[k], w[k])
        np.testing.assert_allclose(_np(gx[0][k]), _np(ref[0]), rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(_np(gx[1][k]), _np(ref[1]), rtol=1e-11, atol=1e-12)


# ---- against torch.func ------------------------------------------------------------------------------


def _params(rng):
    return {
        "conv_w": rng.standard_normal((4, 2, 3, 3)) * 0.4,
        "conv_b": rng.standard_normal(4) * 0.1,
        "bn_w": rng.standard_normal(4),
        "bn_b": rng.standard_normal(4) * 0.1,
        "lin_w": rng.standard_normal((3, 16)) * 0.3,
        "lin_b": rng.standard_normal(3) * 0.1,
        "rm": rng.standard_normal(4) * 0.1,
        "rv": rng.random(4) + 0.5,
    }


def _loss(M, p, x, y):
    """conv -> batch_norm(eval) -> relu -> avg_pool -> linear -> cross-entropy of one sample."""
    Fm = M.nn.functional
    h = Fm.conv2d(x.unsqueeze(0), p["conv_w"], p["conv_b"], padding=1)
    h = Fm.batch_norm(h, p["rm"], p["rv"], p["bn_w"], p["bn_b"], training=False).relu()
    h = Fm.avg_pool2d(h, 2).reshape(1, -1) @ p["lin_w"].t() + p["lin_b"]
    return -(Fm.log_softmax(h, 1) * y).sum()


@pytest.mark.torch
def test_per_sample_gradients_against_torch_func():
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("torch.func")
    rng = np.random.default_rng(4)
    p = _params(rng)
    x, y = rng.standard_normal((5, 2, 4, 4)), np.eye(3)[rng.integers(0, 3, 5)]
    diff = ("conv_w", "conv_b", "bn_w", "bn_b", "lin_w", "lin_b")
    rp = {k: _t(v) for k, v in p.items()}
    tp = {k: torch.tensor(v) for k, v in p.items()}

    def ref_loss(q, x, y):
        return _loss(T, {**rp, **q}, x, y)

    def torch_loss(q, x, y):
        return _loss(torch, {**tp, **q}, x, y)

    reset_fallback_counts()
    got = vmap(grad(ref_loss), (None, 0, 0), allow_fallback=False)({k: rp[k] for k in diff}, _t(x), _t(y))
    want = tf.vmap(tf.grad(torch_loss), (None, 0, 0))(
        {k: tp[k] for k in diff}, torch.tensor(x), torch.tensor(y)
    )
    for k in diff:
        np.testing.assert_allclose(_np(got[k]), want[k].numpy(), rtol=1e-10, atol=1e-12, err_msg=k)
    assert fallback_counts() == {}


@pytest.mark.torch
@pytest.mark.parametrize("flags", [f for f in itertools.product((False, True), repeat=3) if any(f)])
def test_convolution_backward_cases_against_torch_func(flags):
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("torch.func")
    rng = np.random.default_rng(5)
    kw = dict(stride=2, padding=1, groups=2)
    xs, ws = (2, 4, 5, 5), (6, 2, 3, 3)
    g, x, w = (rng.standard_normal(((B,) if f else ()) + s) for f, s in zip(flags, ((2, 6, 3, 3), xs, ws)))
    b = rng.standard_normal(6)
    dims = tuple(0 if f else None for f in flags) + (None,)

    def ref(g, x, w, b):
        return vjp(lambda x, w, b: F.conv2d(x, w, b, **kw), x, w, b)[1](g)

    def tor(g, x, w, b):
        return tf.vjp(lambda x, w, b: torch.nn.functional.conv2d(x, w, b, **kw), x, w, b)[1](g)

    got = vmap(ref, dims, allow_fallback=False)(_t(g), _t(x), _t(w), _t(b))
    want = tf.vmap(tor, dims)(*(torch.tensor(a) for a in (g, x, w, b)))
    for name, a, c in zip(("grad_input", "grad_weight", "grad_bias"), got, want):
        np.testing.assert_allclose(_np(a), c.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)
