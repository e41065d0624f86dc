"""In-place view ops against PyTorch: squeeze_/unsqueeze_/transpose_/t_/swapdims_/swapaxes_/
as_strided_ change the tensor's geometry in place and record the view as its history (values,
gradients, grad_fn names, versions, and the check_inplace errors on leaves and no_grad views)."""

from __future__ import annotations

import numpy as np
import pytest

import reference
from tests.autograd._torch_agree import agree, same_error

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

X = np.random.default_rng(3).standard_normal((2, 1, 3))


def _c(a):
    return a * 1.0


def _through_view(T, a):
    base = _c(a)
    v = base[:, :, 1:]
    v.transpose_(0, 2)  # a view stays a view of its base, with the new geometry
    base.mul_(2.0)  # a write to the base: the view's history is regenerated from it
    return v * v, base


CASES = [
    ("squeeze_", lambda T, a: _c(a).squeeze_() * 2),
    ("squeeze_dim", lambda T, a: _c(a).squeeze_(1).exp()),
    ("squeeze_dims", lambda T, a: _c(a).squeeze_((0, 1))),
    ("squeeze_dim_noop", lambda T, a: _c(a).squeeze_(-1)),
    ("unsqueeze_", lambda T, a: _c(a).unsqueeze_(-1) * T.arange(2.0, dtype=T.float64)),
    ("transpose_", lambda T, a: _c(a).transpose_(0, -1).cumsum(0)),
    ("swapdims_", lambda T, a: _c(a).swapdims_(2, 0) ** 2),
    ("swapaxes_", lambda T, a: _c(a).swapaxes_(1, 2).sin()),
    ("t_", lambda T, a: _c(a)[:, 0].t_() ** 3),
    ("as_strided_", lambda T, a: _c(a).as_strided_((3, 2), (1, 3)) * 2),
    ("twice", lambda T, a: _c(a).squeeze_(1).t_().unsqueeze_(0)),
    ("view_of_base", _through_view),
]


@pytest.mark.parametrize("name, prog", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_torch(name, prog):
    agree(prog, [X], label=name)


def _name(F, fn):
    return type(fn).__name__ if F is torch else fn.name()


@pytest.mark.parametrize("name, prog", CASES[:10], ids=[c[0] for c in CASES[:10]])
def test_grad_fn_and_version_are_torchs(name, prog):
    got = []
    for F in (reference, torch):
        a = F.tensor(X, dtype=F.float64, requires_grad=True)
        c = a * 1.0
        method = "squeeze_" if name.startswith("squeeze") else name
        if name == "t_":
            c = c[:, 0]
        args = {
            "squeeze_": (),
            "squeeze_dim": (1,),
            "squeeze_dims": ((0, 1),),
            "squeeze_dim_noop": (-1,),
            "unsqueeze_": (-1,),
            "transpose_": (0, -1),
            "swapdims_": (2, 0),
            "swapaxes_": (1, 2),
            "t_": (),
            "as_strided_": ((3, 2), (1, 3)),
        }[name]
        out = getattr(c, method)(*args)
        assert out is c
        got.append((tuple(c.shape), tuple(c.stride()), _name(F, c.grad_fn), c._version))
    assert got[0] == got[1]


ERRORS = [
    ("leaf", lambda T: T.ones(2, 1, requires_grad=True).squeeze_()),
    ("view_of_leaf", lambda T: T.ones(2, 1, requires_grad=True)[0].unsqueeze_(0)),
    ("t_3d", lambda T: (T.ones(2, 1, 2, requires_grad=True) * 1).t_()),
    ("transpose_dim", lambda T: (T.ones(2, 1, requires_grad=True) * 1).transpose_(0, 2)),
    ("unsqueeze_dim", lambda T: T.ones(2).unsqueeze_(3)),
]


@pytest.mark.parametrize("name, prog", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_agree(name, prog):
    same_error(prog)


def test_no_grad_view_modified_with_grad_enabled():
    for F in (reference, torch):
        a = F.ones(2, 1, dtype=F.float64, requires_grad=True)
        with F.no_grad():
            v = a.view(2, 1)
        with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
            v.unsqueeze_(0)


def test_without_grad_only_the_geometry_changes():
    for F in (reference, torch):
        a = F.arange(6.0).reshape(2, 3)
        b = a.t_()
        assert b is a and tuple(a.shape) == (3, 2) and tuple(a.stride()) == (1, 3)
        assert a.grad_fn is None and a._version == 1
        np.testing.assert_array_equal(np.asarray(a.tolist()), np.arange(6.0).reshape(2, 3).T)


def test_under_vmap_and_jvp_agrees_with_torch_func():
    x = np.random.default_rng(0).standard_normal((4, 2, 1, 3))
    got = []
    for F, kw in ((reference, {"allow_fallback": False}), (torch, {})):

        def f(a):
            c = a * 1.0
            c.squeeze_(1).t_()
            return c * 2

        batched = F.func.vmap(f, **kw)(F.tensor(x))
        primal, tangent = F.func.jvp(f, (F.tensor(x[0]),), (F.tensor(x[1]),))
        got.append([np.asarray(t.tolist()) for t in (batched, primal, tangent)])
    for r, t in zip(*got):
        np.testing.assert_allclose(r, t, rtol=1e-15, atol=0)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "complex128", "complex64"])
def test_stale_saved_tensor_error_names_the_type_as_torch(dtype):
    """The version-counter error names the tensor's type as PyTorch's toString does: legacy
    ``torch.XTensor`` names where the dtype has one, ``CPU<ScalarType>Type`` otherwise."""

    def run(T):
        x = T.ones(2, dtype=getattr(T, dtype), requires_grad=True)
        z = x * 1
        w = z * z
        z.add_(1)
        loss = w.sum().abs() if "complex" in dtype else w.sum()
        loss.backward()

    same_error(run)
