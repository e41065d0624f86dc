"""``T.autograd.forward_ad`` (dual_level, make_dual, unpack_dual, UnpackedDualTensor) against
PyTorch 2.13's ``torch.autograd.forward_ad``: tangents through ops, views and in-place ops (on the
dual, on its views, into tensors without a tangent), mixing with reverse mode, errors."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from tests.autograd._hooks_agree import agree

pytestmark = pytest.mark.torch


def _fw(T):
    return T.autograd.forward_ad


def _pt(T, data=(0.3, -1.2, 0.5), rg=False):
    return T.tensor(list(data), dtype=T.float64, requires_grad=rg)


def test_basic_and_unpacked_dual_tensor():
    def prog(T, log):
        fw = _fw(T)
        x, t = _pt(T), _pt(T, (1.0, 2.0, 3.0))
        with fw.dual_level() as level:
            d = fw.make_dual(x, t)
            y = d.exp() * d + d.sin() / (d * d + 1)
            u = fw.unpack_dual(y)
            info = (type(u).__name__, u._fields, len(u), u[0] is u.primal, u[1] is u.tangent, level)
            ident = (d is x, d._base is x, d._is_view(), fw.unpack_dual(d).tangent is t)
            return u.primal, u.tangent, info, ident

    agree(prog)


OPS = {
    "matmul": lambda T, d: (d.view(3, 1) @ d.view(1, 3)).sum(0),
    "softmax": lambda T, d: d.softmax(0) * d.log_softmax(0),
    "reductions": lambda T, d: T.stack([d.sum(), d.mean(), d.amax(), (d * d).sum().sqrt()]),
    "views": lambda T, d: d.view(3, 1).t().expand(2, 3).reshape(6)[1:5:2],
    "where_clamp": lambda T, d: T.where(d > 0, d.clamp(0.1, 0.4), d.abs()),
    "cat_stack": lambda T, d: T.cat([d, T.stack([d[0], d[2]]) * 2]),
    "pow": lambda T, d: (d * d + 1) ** d,
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_tangents_through_ops(name):
    def prog(T, log):
        fw = _fw(T)
        with fw.dual_level():
            d = fw.make_dual(_pt(T), _pt(T, (1.0, -2.0, 0.5)))
            return tuple(fw.unpack_dual(OPS[name](T, d)))

    agree(prog)


def test_in_place_on_a_view_of_the_dual_updates_the_tangent_in_place():
    def prog(T, log):
        fw = _fw(T)
        x, t = _pt(T), _pt(T, (1.0, 2.0, 3.0))
        with fw.dual_level():
            d = fw.make_dual(x, t)
            v = d[1:]
            v.mul_(2)
            d.add_(1)
            return fw.unpack_dual(d), fw.unpack_dual(v), x, t  # x and t are written in place

    agree(prog)


def test_in_place_with_a_dual_into_a_plain_tensor_and_its_view():
    def prog(T, log):
        fw = _fw(T)
        with fw.dual_level():
            base = _pt(T).clone()
            d = fw.make_dual(_pt(T, (1.0, 2.0, 3.0)), _pt(T, (1.0, 2.0, 3.0)))
            base[:2].mul_(d[:2])  # base had no tangent: it gets one (zero outside the view)
            other = _pt(T, (4.0, 5.0, 6.0))
            w = other[1:]
            w.copy_(d[:2] * 3)
            return fw.unpack_dual(base), fw.unpack_dual(other), fw.unpack_dual(w)

    agree(prog)


def test_non_contiguous_primal_copies_the_tangent_into_its_layout():
    def prog(T, log):
        fw = _fw(T)
        p = T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64).view(2, 2).t()
        t = T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64)
        with fw.dual_level():
            d = fw.make_dual(p, t)
            tan = fw.unpack_dual(d).tangent
            d[0].mul_(3)
            return tan.stride(), d.stride(), tan is t, fw.unpack_dual(d), t

    agree(prog)


def test_mixed_with_reverse_mode():
    def prog(T, log):
        fw = _fw(T)
        x = _pt(T, rg=True)
        with fw.dual_level():
            d = fw.make_dual(x, _pt(T, (1.0, 2.0, 3.0)))
            y = (d * d.exp()).sum()
            p, tan = fw.unpack_dual(y)
            (g,) = T.autograd.grad(tan, x, retain_graph=True)
            p.backward()
            return p, tan, g, x.grad, d.grad_fn, y.grad_fn

    agree(prog)


def test_outside_the_level_and_detach():
    def prog(T, log):
        fw = _fw(T)
        x = _pt(T)
        with fw.dual_level():
            d = fw.make_dual(x, _pt(T, (1.0, 2.0, 3.0)))
            inside = (fw.unpack_dual(x), fw.unpack_dual(d.detach()), fw.unpack_dual(d * 2).tangent)
        return inside, fw.unpack_dual(d)

    agree(prog)


@pytest.mark.parametrize(
    "case", ["no_level", "shape", "int_primal", "nested", "twice", "exit_wrong", "exit_none"]
)
def test_errors(case):
    def prog(T, log):
        fw = _fw(T)
        x, t = _pt(T), _pt(T, (1.0, 2.0, 3.0))
        if case == "no_level":
            fw.make_dual(x, t)
        elif case == "exit_none":
            fw.exit_dual_level()
        with fw.dual_level():
            if case == "shape":
                fw.make_dual(x, t[:2])
            elif case == "int_primal":
                fw.make_dual(T.tensor([1, 2]), T.tensor([1, 2]))
            elif case == "nested":
                with fw.dual_level():
                    pass
            elif case == "twice":
                fw.make_dual(fw.make_dual(x, t), t)
            elif case == "exit_wrong":
                fw.exit_dual_level(level=5)

    agree(prog)


def test_enter_exit_functions():
    def prog(T, log):
        fw = _fw(T)
        level = fw.enter_dual_level()
        d = fw.make_dual(_pt(T), _pt(T, (1.0, 2.0, 3.0)))
        tan = fw.unpack_dual(d.tanh()).tangent
        fw.exit_dual_level()
        return level, tan, fw.unpack_dual(d).tangent

    agree(prog)


def test_planted_bug_views_of_a_dual_write_into_the_primal_base_is_caught(monkeypatch):
    """If views of a dual took the primal's storage root as their forward-grad base (the dual's
    own tangent left stale), the in-place-on-a-view test catches it."""
    from reference.autograd import table

    real = table.ops.jvp_view  # (forward_ad.jvp_view, as the dispatcher calls it: through the core's table)

    def forgetful(*args, **kwargs):
        out = real(*args, **kwargs)
        for o in out if isinstance(out, tuple) else (out,):
            o.__dict__.pop("_fw_base", None)
        return out

    monkeypatch.setattr(table.ops, "jvp_view", forgetful)
    with pytest.raises(AssertionError):
        test_in_place_on_a_view_of_the_dual_updates_the_tangent_in_place()


def test_an_op_result_s_tangent_has_the_result_s_layout():
    # PyTorch's set_fw_grad copies a forward grad whose strides differ from its primal's into the
    # primal's layout, so every view of the primal is a view of the tangent. svd's Vh is row-major
    # in the reference and the tangent its rule formed was not: jvp through Vh.reshape(-1) raised
    # "view size is not compatible" (tests/autograd/exact_linalg.py met it)
    rng = np.random.default_rng(0)
    a, v = (T.tensor(rng.standard_normal((3, 3)), dtype=T.float64) for _ in range(2))
    fwAD = T.autograd.forward_ad
    with fwAD.dual_level():
        for out in T.linalg.svd(fwAD.make_dual(a, v), full_matrices=False):
            primal, tangent = fwAD.unpack_dual(out)
            assert tangent.stride() == primal.stride()
    _, tan = T.func.jvp(lambda x: T.linalg.svd(x, full_matrices=False).Vh.reshape(-1), (a,), (v,))
    _, by_rows = T.func.jvp(lambda x: T.linalg.svd(x, full_matrices=False).Vh, (a,), (v,))
    assert tan.tolist() == by_rows.reshape(-1).tolist()
