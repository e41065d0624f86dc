"""reference.func's transforms: structures (pytrees, argnums, has_aux), hessian against finite
differences of grad, compositions (grad of grad, jvp of grad, grad of jvp, jacfwd of jacfwd),
forward mode through in-place writes, typed errors, and agreement with torch.func."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from reference.func import TransformError, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp

F = T.nn.functional


def _t(a):
    return T.tensor(np.asarray(a, dtype=np.float64), dtype=T.float64)


def _randn(seed, *shape):
    return _t(np.random.default_rng(seed).standard_normal(shape))


def _np(x):
    return x.detach().numpy()


def _net(params, x):
    """conv -> batch_norm(eval) -> relu -> max_pool -> linear -> log_softmax -> nll-like scalar."""
    h = F.conv2d(x, params["conv_w"], params["conv_b"], padding=1)
    h = F.batch_norm(h, params["rm"], params["rv"], params["bn_w"], params["bn_b"], training=False)
    h = F.max_pool2d(h.tanh(), 2)
    h = h.reshape(h.shape[0], -1) @ params["lin_w"].t() + params["lin_b"]
    return -F.log_softmax(h, 1)[:, 0].sum()


def _params(seed=0):
    rng = np.random.default_rng(seed)
    shapes = {
        "conv_w": (3, 2, 3, 3),
        "conv_b": (3,),
        "bn_w": (3,),
        "bn_b": (3,),
        "lin_w": (4, 12),
        "lin_b": (4,),
    }
    p = {k: _t(rng.standard_normal(s) * 0.5) for k, s in shapes.items()}
    p["rm"], p["rv"] = _t(rng.standard_normal(3) * 0.1), _t(rng.random(3) + 0.5)
    return p


def _fd_jacobian(fn, x, eps=1e-6):
    """Central differences of fn (array-valued) w.r.t. x, shape fn(x).shape + x.shape."""
    base = x.detach().numpy()
    cols = []
    for e in range(base.size):
        d = np.zeros(base.size)
        d[e] = eps
        d = d.reshape(base.shape)
        cols.append((_np(fn(_t(base + d))) - _np(fn(_t(base - d)))) / (2 * eps))
    out_shape = cols[0].shape
    return np.stack(cols, -1).reshape(out_shape + base.shape)


# ---- values and structures -------------------------------------------------------------------------


def test_grad_matches_autograd_and_structures():
    x, w = _randn(0, 3), _randn(1, 3)
    f = lambda x, w: (x.tanh() * w).sum()  # noqa: E731
    gx = grad(f)(x, w)
    gw, gx2 = grad(f, argnums=(1, 0))(x, w)
    np.testing.assert_allclose(_np(gx), (1 - np.tanh(_np(x)) ** 2) * _np(w), rtol=1e-12)
    np.testing.assert_allclose(_np(gx2), _np(gx), rtol=0)
    np.testing.assert_allclose(_np(gw), np.tanh(_np(x)), rtol=1e-12)
    g, (value, aux) = grad_and_value(lambda x: ((x * x).sum(), x.exp()), has_aux=True)(x)
    np.testing.assert_allclose(_np(g), 2 * _np(x), rtol=1e-12)
    assert float(value) == pytest.approx(float((_np(x) ** 2).sum()))
    np.testing.assert_allclose(_np(aux), np.exp(_np(x)))
    assert grad(f, argnums=-1)(x, w).shape == (3,)


def test_pytree_inputs_and_outputs():
    params = {"a": _randn(0, 2, 3), "b": [_randn(1, 3), _randn(2, 3)]}
    x = _randn(3, 3)

    def f(p, x):
        return {"y": p["a"] @ (x * p["b"][0]), "z": (p["b"][1] * x).sum()}

    g = grad(lambda p, x: f(p, x)["y"].sum() + f(p, x)["z"])(params, x)
    assert set(g) == {"a", "b"} and isinstance(g["b"], list) and len(g["b"]) == 2
    np.testing.assert_allclose(_np(g["b"][1]), _np(x))
    jr = jacrev(f)(params, x)
    jf = jacfwd(f)(params, x)
    assert jr["y"]["a"].shape == (2, 2, 3) and jr["z"]["b"][0].shape == (3,)
    for key in ("y", "z"):
        for a, b in (
            (jr[key]["a"], jf[key]["a"]),
            (jr[key]["b"][0], jf[key]["b"][0]),
            (jr[key]["b"][1], jf[key]["b"][1]),
        ):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12, atol=1e-14)
    out, tan = jvp(
        f,
        (params, x),
        (
            {"a": T.ones_like(params["a"]), "b": [T.zeros(3, dtype=T.float64)] * 2},
            T.zeros(3, dtype=T.float64),
        ),
    )
    np.testing.assert_allclose(_np(tan["y"]), np.ones((2, 3)) @ (_np(x) * _np(params["b"][0])), rtol=1e-12)
    assert float(tan["z"]) == 0.0
    out, vjp_fn = vjp(f, params, x)
    (gp, gx) = vjp_fn({"y": T.ones(2, dtype=T.float64), "z": _t(0.0)})
    np.testing.assert_allclose(_np(gx), (_np(params["a"]).sum(0)) * _np(params["b"][0]), rtol=1e-12)


def test_results_are_detached_unless_something_outside_needs_their_graph():
    x = _randn(0, 3)
    f = lambda x: (x.tanh() * x).sum()  # noqa: E731
    assert not grad(f)(x).requires_grad
    assert not hessian(f)(x).requires_grad
    assert not jvp(grad(f), (x,), (T.ones_like(x),))[1].requires_grad
    w = _randn(1, 3).requires_grad_()
    g = grad(lambda x: (x * x * w).sum())(x)  # closes over w, which requires grad
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(_np(w.grad), 2 * _np(x), rtol=1e-14)


def test_namedtuple_pytrees():
    import collections

    Pair = collections.namedtuple("Pair", "a b")
    p = Pair(_randn(0, 3), _randn(1, 3))
    g = grad(lambda p: (p.a * p.b).sum())(p)
    assert isinstance(g, Pair)
    np.testing.assert_allclose(_np(g.a), _np(p.b))
    np.testing.assert_allclose(_np(g.b), _np(p.a))


def test_hessian_against_finite_differences_of_grad():
    x = _randn(4, 4)
    f = lambda x: (x.tanh() * x.sigmoid()).sum() + (x[:2] @ x[2:]) ** 2  # noqa: E731
    h = _np(hessian(f)(x))
    fd = _fd_jacobian(grad(f), x)
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h, h.T, rtol=1e-12, atol=1e-14)


def test_hessian_of_a_conv_net_against_finite_differences():
    p = _params(1)
    x = _randn(2, 2, 2, 4, 4)
    f = lambda b: _net({**p, "lin_b": b}, x)  # noqa: E731
    h = _np(hessian(f)(p["lin_b"]))
    np.testing.assert_allclose(h, _fd_jacobian(grad(f), p["lin_b"]), rtol=1e-6, atol=1e-8)


def test_compositions_agree():
    """grad(grad), jacfwd(jacfwd), jacrev(jacrev), jacrev(jacfwd) and jvp of grad give one Hessian."""
    x = _randn(5, 3)
    f = lambda x: (x.exp() * x.tanh()).sum()  # noqa: E731
    ref = _np(hessian(f)(x))
    for name, h in (
        ("jacfwd(jacfwd)", jacfwd(jacfwd(f))(x)),
        ("jacrev(jacrev)", jacrev(jacrev(f))(x)),
        ("jacrev(jacfwd)", jacrev(jacfwd(f))(x)),
    ):
        np.testing.assert_allclose(_np(h), ref, rtol=1e-12, atol=1e-14, err_msg=name)
    t = _randn(6, 3)
    _, hvp = jvp(grad(f), (x,), (t,))
    np.testing.assert_allclose(_np(hvp), ref @ _np(t), rtol=1e-12)
    gg = grad(lambda x: grad(f)(x).sum())(x)
    np.testing.assert_allclose(_np(gg), ref.sum(0), rtol=1e-12)
    # grad of a jvp: d/dx <grad f(x), t> = H t
    gj = grad(lambda x: jvp(f, (x,), (t,))[1])(x)
    np.testing.assert_allclose(_np(gj), ref @ _np(t), rtol=1e-12)


def test_nested_jvp_mixed_partials():
    """jvp inside jvp: the inner tangent's outer tangent is the mixed second derivative (no
    perturbation confusion between the levels)."""
    x, y = _t(0.7), _t(-1.3)

    def inner(x):
        return jvp(lambda y: (x * y).exp(), (y,), (T.ones_like(y),))[1]  # d/dy exp(xy) = x exp(xy)

    _, d = jvp(inner, (x,), (T.ones_like(x),))  # d/dx x exp(xy) = exp(xy) (1 + xy)
    xy = 0.7 * -1.3
    assert float(d) == pytest.approx(np.exp(xy) * (1 + xy), rel=1e-12)


def test_jvp_through_inplace_writes_on_views():
    x = _randn(7, 2, 3)
    t = _randn(8, 2, 3)

    def f(x):
        y = x * 2.0
        y[1].mul_(x[0])  # in place on a view: the base's tangent is updated through it
        y[0, 1] = 3.0  # a constant written into a view: zero tangent there
        y.relu_()
        return y * x

    _, tan = jvp(f, (x,), (t,))
    _, vjp_fn = vjp(f, x)
    ct = _randn(9, 2, 3)
    np.testing.assert_allclose(
        float((_np(vjp_fn(ct)[0]) * _np(t)).sum()), float((_np(ct) * _np(tan)).sum()), rtol=1e-12
    )
    eps = 1e-6
    fd = (_np(f(_t(_np(x) + eps * _np(t)))) - _np(f(_t(_np(x) - eps * _np(t))))) / (2 * eps)
    np.testing.assert_allclose(_np(tan), fd, rtol=1e-6, atol=1e-8)
    jr = _np(jacrev(f)(x)).reshape(6, 6)
    np.testing.assert_allclose(_np(tan).reshape(6), jr @ _np(t).reshape(6), rtol=1e-12, atol=1e-14)


def test_typed_errors():
    x = _randn(0, 3)
    with pytest.raises(TransformError, match="one-element"):
        grad(lambda x: x * 2)(x)
    with pytest.raises(TransformError, match="argnums=3"):
        grad(lambda x: x.sum(), argnums=3)(x)
    with pytest.raises(TransformError, match="tangents: leaf 0 has shape"):
        jvp(lambda x: x, (x,), (_randn(1, 2),))
    with pytest.raises(TransformError, match="primals must be a tuple"):
        jvp(lambda x: x, x, (x,))
    with pytest.raises(TransformError, match="leaf 1 is a str"):
        vjp(lambda x, s: x, x, "s")


# ---- against torch.func -----------------------------------------------------------------------------


@pytest.mark.torch
def test_conv_net_against_torch_func():
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("torch.func")
    p = _params(2)
    x = _randn(3, 2, 2, 4, 4)
    tp = {k: torch.tensor(_np(v)) for k, v in p.items()}
    tx = torch.tensor(_np(x))
    tnet = lambda q, x: _net_torch(torch, q, x)  # noqa: E731
    diff = ("conv_w", "conv_b", "bn_w", "bn_b", "lin_w", "lin_b")

    g = grad(lambda q: _net({**p, **q}, x))({k: p[k] for k in diff})
    tg = tf.grad(lambda q: tnet({**tp, **q}, tx))({k: tp[k] for k in diff})
    for k in diff:
        np.testing.assert_allclose(_np(g[k]), tg[k].numpy(), rtol=1e-10, atol=1e-12, err_msg=k)

    tangents = {k: _randn(10 + i, *p[k].shape) for i, k in enumerate(diff)}
    _, tan = jvp(lambda q: _net({**p, **q}, x), ({k: p[k] for k in diff},), (tangents,))
    _, ttan = tf.jvp(
        lambda q: tnet({**tp, **q}, tx),
        ({k: tp[k] for k in diff},),
        ({k: torch.tensor(_np(v)) for k, v in tangents.items()},),
    )
    assert float(tan) == pytest.approx(float(ttan), rel=1e-10)

    h = hessian(lambda b: _net({**p, "lin_b": b}, x))(p["lin_b"])
    th = tf.hessian(lambda b: tnet({**tp, "lin_b": b}, tx))(tp["lin_b"])
    np.testing.assert_allclose(_np(h), th.numpy(), rtol=1e-10, atol=1e-12)

    jf = jacfwd(lambda xx: _net(p, xx))(x)
    tjf = tf.jacfwd(lambda xx: tnet(tp, xx))(tx)
    np.testing.assert_allclose(_np(jf), tjf.numpy(), rtol=1e-10, atol=1e-12)


def _net_torch(torch, params, x):
    Ft = torch.nn.functional
    h = Ft.conv2d(x, params["conv_w"], params["conv_b"], padding=1)
    h = Ft.batch_norm(h, params["rm"], params["rv"], params["bn_w"], params["bn_b"], training=False)
    h = Ft.max_pool2d(h.tanh(), 2)
    h = h.reshape(h.shape[0], -1) @ params["lin_w"].t() + params["lin_b"]
    return -Ft.log_softmax(h, 1)[:, 0].sum()


def test_jvp_of_a_function_returning_one_tensor_twice():
    """Each output gets its tangent even when two outputs are the same tensor: add's VJP returns its
    cotangent as both inputs' gradients, so jvp(vjp(add)) lost the second one's tangent (0) before
    the tangents were all read before any was cleared (the jvp_vjp check of the add record)."""
    x, tx = T.tensor(np.array([0.5])), T.tensor(np.array([2.0]))
    out = T.func.jvp(lambda a: (a, a), (x,), (tx,))[1]
    assert [float(t.detach()._data[0]) for t in out] == [2.0, 2.0]
    c, tc = T.tensor(np.array([1.5])), T.tensor(np.array([7.0]))
    y, ty = T.tensor(np.array([0.25])), T.tensor(np.array([3.0]))
    grads = T.func.jvp(lambda c_, a, b: T.func.vjp(T.add, a, b)[1](c_), (c, x, y), (tc, tx, ty))[1]
    assert [float(t.detach()._data[0]) for t in grads] == [7.0, 7.0]
