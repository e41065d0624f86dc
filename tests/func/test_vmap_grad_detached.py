"""Results of ``grad``/``vjp``/``jacrev``/``hessian`` under ``vmap`` are plain tensors when nothing
outside the transforms requires grad, as torch.func's are (vmap levels do not differentiate), and
keep their graph when an outer transform or a user's leaf needs it."""

from __future__ import annotations

import numpy as np
import pytest

import reference
import reference.func as RF

torch = pytest.importorskip("torch")
TF = torch.func


def f(x, y):
    return (x * y).sin().sum()


CASES = {
    "vmap_grad_unbatched_x": lambda F, a, b: F.vmap(F.grad(f), in_dims=(None, 0))(a, b),
    "vmap_grad_batched_arg": lambda F, a, b: F.vmap(F.grad(f, argnums=1), in_dims=(None, 0))(a, b),
    "vmap_grad_of_unbatched_only": lambda F, a, b: F.vmap(
        F.grad(lambda x, y: (x * x).sum() + y.sum()), in_dims=(None, 0)
    )(a, b),
    "vmap_vjp": lambda F, a, b: F.vmap(lambda yy: F.vjp(lambda xx: (xx * yy).sin(), a)[1](yy)[0])(b),
    "grad_of_vmap_grad": lambda F, a, b: F.grad(lambda xx: F.vmap(F.grad(f), in_dims=(None, 0))(xx, b).sum())(
        a
    ),
    "vmap_jacrev": lambda F, a, b: F.vmap(F.jacrev(lambda xx, yy: (xx * yy).sin()), in_dims=(None, 0))(a, b),
    "vmap_hessian": lambda F, a, b: F.vmap(F.hessian(f), in_dims=(None, 0))(a, b),
    "vmap_vmap_grad": lambda F, a, b: F.vmap(F.vmap(F.grad(f), in_dims=(None, 0)), in_dims=(None, 0))(
        a, b.unsqueeze(0).expand(2, 4, 3)
    ),
    "jvp_of_vmap_grad": lambda F, a, b: F.jvp(
        lambda xx: F.vmap(F.grad(f), in_dims=(None, 0))(xx, b), (a,), (a,)
    )[1],
}


def _inputs(T, requires_grad=False):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(3), rng.standard_normal((4, 3))
    x = T.tensor(x, dtype=T.float64, requires_grad=requires_grad)
    return x, T.tensor(y, dtype=T.float64)


@pytest.mark.parametrize("name", list(CASES))
def test_result_is_plain_like_torch_func(name):
    want = CASES[name](TF, *_inputs(torch))
    got = CASES[name](RF, *_inputs(reference))
    assert (got.requires_grad, got.grad_fn is None) == (want.requires_grad, want.grad_fn is None)
    assert not got.requires_grad
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["vmap_grad_unbatched_x", "vmap_jacrev", "vmap_hessian"])
def test_result_keeps_its_graph_for_a_user_leaf(name):
    want = CASES[name](TF, *_inputs(torch, requires_grad=True))
    got = CASES[name](RF, *_inputs(reference, requires_grad=True))
    assert got.requires_grad == want.requires_grad is True
    x = _inputs(reference, requires_grad=True)[0]
    (g,) = reference.autograd.grad(CASES[name](RF, x, _inputs(reference)[1]).sum(), x)
    xt = _inputs(torch, requires_grad=True)[0]
    (gt,) = torch.autograd.grad(CASES[name](TF, xt, _inputs(torch)[1]).sum(), xt)
    np.testing.assert_allclose(g.numpy(), gt.numpy(), rtol=1e-10, atol=1e-12)
