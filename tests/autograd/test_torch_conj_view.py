"""PyTorch's lazy conjugate view against torch 2.13: ``conj()`` of a complex tensor shares storage,
``_base`` and version counter with its input and has the conjugate bit; ``imag`` of it has the
negative bit; writes go through in both directions; ``resolve_conj`` / ``resolve_neg`` copy;
gradients (first and second order, gradcheck), vmap and JVP through the views and through
in-place writes on them. Each program runs on ``torch`` and on ``reference`` and the results are
compared: values, dtypes, the bits, aliasing facts, grad_fn names, errors (type and message).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import reference

torch = pytest.importorskip("torch")

Z = [[1 + 2j, 3 - 4j, -0.5 + 0.25j], [0.5 + 0.5j, 2 + 0j, -1 - 1j]]  # no zero: |z| is smooth here
W = [[0.5 - 1j, 2 + 1j, 1 + 0j], [-1 + 3j, 0.25j, 1 - 2j]]


def _z(F, requires_grad=False):
    return F.tensor(Z, dtype=F.complex128, requires_grad=requires_grad)


def _w(F):
    return F.tensor(W, dtype=F.complex128)


def _names(fn, depth=4):
    """The grad_fn chain along first edges (torch's C++ nodes without their namespace)."""
    out = []
    while fn is not None and len(out) < depth:
        out.append(fn.name().split("::")[-1])
        fn = fn.next_functions[0][0] if fn.next_functions else None
    return out


def _plain(F, v):
    """A comparable Python value: a tensor becomes (values, dtype, is_conj, is_neg)."""
    if isinstance(v, (tuple, list)):
        return [_plain(F, x) for x in v]
    if isinstance(v, F.Tensor):
        r = v.detach().resolve_conj().resolve_neg()
        return ("tensor", np.asarray(r.numpy()), str(v.dtype).split(".")[-1], v.is_conj(), v.is_neg())
    return v


def _run(F, prog):
    try:
        return _plain(F, prog(F))
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        kind = "RuntimeError" if isinstance(e, RuntimeError) else type(e).__name__  # (AutogradError)
        return ("error", kind, str(e).split("\n")[0])


def _same(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, tuple) and a and a[0] == "tensor":
        return (
            isinstance(b, tuple)
            and b[0] == "tensor"
            and a[1].shape == b[1].shape
            and np.allclose(a[1], b[1], rtol=1e-12, atol=1e-12, equal_nan=True)
            and a[2:] == b[2:]
        )
    return a == b


# ---- the view itself: bits, aliasing, values ----------------------------------------------------


def _inplace_through_view(F):
    z = _z(F)
    c = z.conj()
    c.add_(1j)  # z becomes z - 1j
    c[0, 1] = 5 + 6j  # z[0, 1] becomes 5 - 6j
    return z, c, z._version, c._version


def _base_write_seen(F):
    z = _z(F)
    c = z.conj()
    c0 = c[1]
    z.mul_(2 + 1j)
    return c, c0, c._version


def _neg_view_writes(F):
    z = _z(F)
    im = z.conj().imag
    im.add_(1.0)  # imag of conj(z) is -imag(z): z's imaginary parts lose 1
    re = z.conj().real
    re.mul_(3.0)
    return z, im, re, im.is_neg(), im._base is z, re.is_neg()


def _v(F):
    return F.tensor([1 + 2j, 3 - 4j, 5j], dtype=F.complex128)


def _write(op):
    """``op(F, z, c)`` writes through the conjugate view ``c`` of ``z`` (or into ``z``); ``z`` after."""

    def prog(F):
        z = _v(F)
        c = z.conj()
        op(F, z, c)
        return z, c, z._version

    return prog


WRITES = {
    "copy_base_into_view": lambda F, z, c: c.copy_(z),  # same storage, different values
    "copy_view_into_base": lambda F, z, c: z.copy_(c),
    "add_base": lambda F, z, c: c.add_(z),
    "mul_self": lambda F, z, c: c.mul_(c),
    "index_put": lambda F, z, c: c.__setitem__(F.tensor([0, 2]), F.tensor([1j, 2j], dtype=F.complex128)),
    "masked_fill": lambda F, z, c: c.masked_fill_(F.tensor([True, False, True]), 1j),
    "zero": lambda F, z, c: c.zero_(),
    "conj_physical_": lambda F, z, c: c.conj_physical_(),
    "index_add": lambda F, z, c: c.index_add_(0, F.tensor([1]), F.tensor([1j], dtype=F.complex128)),
    "neg_of_imag": lambda F, z, c: c.imag.neg_(),
    "sub_real": lambda F, z, c: c.real.sub_(1.5),
}


PROGRAMS = {
    **{f"write_{name}": _write(op) for name, op in WRITES.items()},
    "t_": lambda F: (lambda c: (c.t_(), c.is_conj(), c._base is not None))(_z(F).conj()),
    "ihfft_is_conj": lambda F: (
        lambda x: (F.fft.ihfft(x), F.fft.ihfft2(x), F.fft.ihfftn(x, dim=1), F.fft.ihfftn(x))
    )(F.tensor([[0.5, -1.0, 2.0, 0.25], [1.0, 3.0, -0.5, 0.0]], dtype=F.float64)),
    "products": lambda F: (lambda z, c: (F.dot(c, z), F.vdot(c, z), c @ z, F.outer(c, z), c.sum()))(
        _v(F), _v(F).conj()
    ),
    "is_conj": lambda F: (_z(F).conj().is_conj(), F.is_conj(_z(F).conj()), _z(F).is_conj()),
    "base_and_view": lambda F: (lambda z: (z.conj()._base is z, z.conj()._is_view()))(_z(F)),
    "values": lambda F: _z(F).conj(),
    "values_zero_and_empty": lambda F: (
        F.tensor([0j, -0.0 + 0j, complex("nan+1j")], dtype=F.complex128).conj(),
        F.zeros(0, 2, dtype=F.complex64).conj(),
    ),
    "conj_conj": lambda F: (
        lambda z: (z.conj().conj(), z.conj().conj()._base is z, z.conj().conj()._is_view())
    )(_z(F)),
    "real_conj_is_self": lambda F: (lambda x: x.conj() is x)(F.ones(3, dtype=F.float64)),
    "conj_physical_not_view": lambda F: (lambda z: (z.conj_physical(), z.conj_physical()._base is None))(
        _z(F)
    ),
    "conj_physical_of_view": lambda F: _z(F).conj().conj_physical(),
    "resolve_conj": lambda F: (
        lambda c: (c.resolve_conj(), c.resolve_conj()._base is None, F.resolve_conj(c).is_conj())
    )(_z(F).conj()),
    "resolve_conj_plain_is_self": lambda F: (lambda z: z.resolve_conj() is z and z.resolve_neg() is z)(_z(F)),
    "resolve_conj_grad_fn": lambda F: _z(F, True).conj().resolve_conj().grad_fn.name(),
    "clone": lambda F: (lambda c: (c.clone(), c.clone()._base is None))(_z(F).conj()),
    "contiguous_is_self": lambda F: (lambda c: c.contiguous() is c)(_z(F).conj()),
    "transposed_strides": lambda F: (lambda c: (c, c.stride(), c.clone().stride(), c.exp().stride()))(
        _z(F).conj().t()
    ),
    "views_keep_bit": lambda F: (
        lambda c: (
            c[0],
            c.t(),
            c.unsqueeze(0),
            c.expand(2, 2, 3),
            c.reshape(3, 2),
            c.select(1, 2),
            c.narrow(1, 1, 2),
        )
    )(_z(F).conj()),
    "views_of_view_base": lambda F: (lambda z: (z.conj()[0]._base is z, z.conj().t()._base is z))(_z(F)),
    "unbind": lambda F: _z(F).conj().unbind(0),
    "detach_keeps_bit": lambda F: (lambda c: (c.detach(), c.detach()._is_view()))(_z(F).conj()),
    "ops_resolve": lambda F: (lambda c: (c + 1, c.exp(), c.abs(), c.sum(), c * c, c.to(F.complex64)))(
        _z(F).conj()
    ),
    "deepcopy": lambda F: (lambda d: (d, d.stride(), d._base is None))(copy.deepcopy(_z(F).conj().t())),
    "deepcopy_non_leaf": lambda F: copy.deepcopy(_z(F, True).conj()),
    "tolist": lambda F: _z(F).conj().tolist(),
    "item": lambda F: _z(F).conj()[0, 1].item(),
    "real_imag": lambda F: (lambda c: (c.real, c.imag, c.imag.is_neg(), c.real._base is not None))(
        _z(F).conj()
    ),
    "neg_view_resolve": lambda F: (lambda i: (i.resolve_neg(), i.resolve_neg()._base is None))(
        _z(F).conj().imag
    ),
    "inplace_through_view": _inplace_through_view,
    "base_write_seen": _base_write_seen,
    "neg_view_writes": _neg_view_writes,
    "copy_into_view": lambda F: (lambda z: (z.conj().copy_(_w(F)), z))(_z(F)),
    "zero_fill_view": lambda F: (lambda z: (z.conj().fill_(1 + 2j), z))(_z(F)),
    "view_as_real_of_conj": lambda F: F.view_as_real(_z(F).conj()),
    "view_as_real_of_slice": lambda F: F.view_as_real(_z(F).conj()[0]),
    "view_as_real_resolved": lambda F: F.view_as_real(_z(F).conj().resolve_conj()),
    "numpy_of_conj": lambda F: _z(F).conj().numpy(),
    "numpy_of_neg": lambda F: _z(F).conj().imag.numpy(),
    "numpy_requires_grad_first": lambda F: _z(F, True).conj().numpy(),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_agrees_with_torch(name):
    prog = PROGRAMS[name]
    expected, got = _run(torch, prog), _run(reference, prog)
    assert _same(got, expected), f"{name}: reference {got!r}, torch {expected!r}"


# ---- autograd: histories, version counter, gradients ------------------------------------------------


def _chains(F):
    a = _z(F, True)
    z = a * 1
    c = z.conj()
    c0 = c[0]
    before = (_names(c.grad_fn), _names(c0.grad_fn))
    c.mul_(1j)
    after = (_names(c.grad_fn), _names(z.grad_fn), _names(c0.grad_fn))
    z2 = a * 1
    w = z2[0].conj()
    w.mul_(2j)
    z3 = a * 1
    c3 = z3.conj()
    z3.mul_(2)
    z4 = a * 1
    im = z4.conj().imag
    re = z4.conj().real
    chains = (_names(im.grad_fn), _names(re.grad_fn))
    im.add_(1.0)
    return (
        before,
        after,
        _names(w.grad_fn),
        _names(c3.grad_fn),
        chains,
        _names(im.grad_fn),
        _names(z4.grad_fn),
    )


def _grad(F, prog, order=1):
    a = _z(F, True)
    out = prog(F, a)
    (g,) = F.autograd.grad(out, a, create_graph=order > 1)
    if order == 1:
        return g
    (gg,) = F.autograd.grad((g * _w(F)).abs().sum(), a)
    return g, gg


def _loss_inplace_conj(F, a):
    z = a * 1
    c = z.conj()
    c.mul_(_w(F))  # z = conj(conj(z) * w) = z * conj(w)
    c[1].add_(c[0] * 2)
    return (z * z).abs().sum() + (c.exp()).real.sum()


def _loss_inplace_neg(F, a):
    z = a * 1
    im = z.conj().imag
    im.mul_(3.0)  # a negative view written in place
    im.add_(a.real * a.imag)
    return (z * _w(F)).abs().sum() + im.sum()


def _loss_views(F, a):
    c = a.conj()
    return (
        (c.t().sum(0) * a[:, 0]).abs().sum()
        + c.imag.pow(2).sum()
        + c.real.sum()
        + c.resolve_conj().abs().sum()
    )


def _loss_base_write(F, a):
    z = a * 1
    c = z.conj()
    z.mul_(_w(F))  # seen by c, whose grad_fn is regenerated
    return (c * c).abs().sum()


def _accumulated(F):
    """AccumulateGrad steals a conjugate gradient that obeys the layout contract (detach keeps the
    bit; accumulation writes through it) and clones one that does not (the bit resolved)."""
    g = F.tensor([1 + 1j, 2 - 1j], dtype=F.complex128)
    y = F.tensor([1 + 2j, 3 - 4j], dtype=F.complex128, requires_grad=True)
    (y.conj() * 2).backward(g)
    first = (y.grad.is_conj(), y.grad._base is None)
    (y.conj() * 2).backward(g)
    x = _z(F, True)
    x.t().conj().backward(_w(F).t())
    a = F.tensor([1 + 2j, 3 - 4j], dtype=F.complex128, requires_grad=True)
    (ga,) = F.autograd.grad(a.conj(), a, g)
    return first, y.grad, x.grad, x.grad.stride(), ga, ga._base is g


def _loss_strided_base(F, a):
    """A base with its own strides (a.t() * 1 keeps the transposed layout): the view is remade on
    the gradient laid out as the base, through the conjugate and the view_as_real views."""
    z = a.t() * 1
    z.conj()[1].mul_(2j)
    z.imag[0].add_(a.real[:, 1])
    return (z * _w(F).t()).abs().sum()


AUTOGRAD = {
    "grad_strided_base": lambda F: _grad(F, _loss_strided_base),
    "gradgrad_strided_base": lambda F: _grad(F, _loss_strided_base, 2),
    "strided_base_chain": lambda F: (
        lambda z: (z.stride(), z.conj()[1].mul_(2j).grad_fn.name(), _names(z.grad_fn))
    )(_z(F, True).t() * 1),
    "accumulate_grad": _accumulated,
    "chains": _chains,
    "grad_views": lambda F: _grad(F, _loss_views),
    "grad_inplace_conj": lambda F: _grad(F, _loss_inplace_conj),
    "grad_inplace_neg": lambda F: _grad(F, _loss_inplace_neg),
    "grad_base_write": lambda F: _grad(F, _loss_base_write),
    "gradgrad_views": lambda F: _grad(F, _loss_views, 2),
    "gradgrad_inplace_conj": lambda F: _grad(F, _loss_inplace_conj, 2),
    "gradgrad_inplace_neg": lambda F: _grad(F, _loss_inplace_neg, 2),
    "gradgrad_base_write": lambda F: _grad(F, _loss_base_write, 2),
    "version_counter_shared": lambda F: (
        lambda z: (lambda c: (z.mul_(2), c._version, z._version)[1:])(z.conj())
    )(_z(F)),
    "saved_conj_view_stale": lambda F: (
        lambda a: (lambda z: (lambda y: (z.mul_(2), y.backward()))((z.conj() * z.conj()).abs().sum()))(a * 1)
    )(_z(F, True)),
    "saved_base_stale_after_view_write": lambda F: (
        lambda a: (lambda z: (lambda y: (z.conj().add_(1), y.backward()))((z * z).abs().sum()))(a * 1)
    )(_z(F, True)),
    "leaf_view_inplace": lambda F: _z(F, True).conj().mul_(2),
    "no_grad_view_inplace": lambda F: (lambda a: (lambda c: c.mul_(2))(_nograd_conj(F, a * 1)))(_z(F, True)),
}


def _nograd_conj(F, z):
    with F.no_grad():
        return z.conj()


@pytest.mark.parametrize("name", sorted(AUTOGRAD))
def test_autograd_agrees_with_torch(name):
    prog = AUTOGRAD[name]
    expected, got = _run(torch, prog), _run(reference, prog)
    assert _same(got, expected), f"{name}: reference {got!r}, torch {expected!r}"


@pytest.mark.parametrize(
    "loss", [_loss_views, _loss_inplace_conj, _loss_inplace_neg, _loss_base_write, _loss_strided_base]
)
def test_gradcheck(loss):
    """Finite differences on the reference alone (complex inputs: real and imaginary parts)."""
    a = _z(reference, True)
    assert reference.autograd.gradcheck(lambda x: loss(reference, x), (a,))
    assert reference.autograd.gradgradcheck(lambda x: loss(reference, x), (a,))


# ---- transforms ----------------------------------------------------------------------------------------


def _vmap_prog(F, z):
    w = z.clone()
    c = w.conj()
    c.mul_(2j)  # through the view, per sample
    return w * z.conj() + c.real


def _jvp_prog(F, z):
    w = z * 1
    c = w.conj()
    c.add_(c * c)
    return w.exp() + z.conj().imag


def _dual(F):
    """forward_ad: the tangent of a conjugate view is the conjugate view of the tangent; a write
    through it updates the dual's tangent conjugated (make_dual of a complex primal)."""
    fw = F.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(_v(F), F.tensor([1j, 1, 2 - 1j], dtype=F.complex128))
        c = d.conj()
        first = fw.unpack_dual(c)
        bits = (first.primal.is_conj(), first.tangent.is_conj(), first.tangent.resolve_conj())
        c.mul_(F.tensor([2j, 1, 3], dtype=F.complex128))
        pd = fw.unpack_dual(d)
        y = d * 1
        y.conj().mul_(d)
        return bits, pd.primal, pd.tangent, fw.unpack_dual(c).tangent, fw.unpack_dual(y).tangent


TRANSFORMS = {
    "forward_ad_dual": _dual,
    "vmap_conj": lambda F: F.func.vmap(lambda z: z.conj() * z + z.conj().real)(_z(F)),
    "vmap_inplace": lambda F: F.func.vmap(lambda z: _vmap_prog(F, z))(_z(F)),
    "vmap_vjp": lambda F: F.func.vmap(lambda z, g: F.func.vjp(lambda x: _vmap_prog(F, x), z)[1](g)[0])(
        _z(F), _w(F)
    ),
    "jvp_conj": lambda F: F.func.jvp(lambda z: z.conj().exp() * z, (_z(F),), (_w(F),)),
    "jvp_inplace": lambda F: F.func.jvp(lambda z: _jvp_prog(F, z), (_z(F),), (_w(F),)),
    "jvp_is_conj": lambda F: F.func.jvp(
        lambda z: (z.conj().is_conj() and z.conj()._base is not None) * z, (_z(F),), (_w(F),)
    ),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transforms_agree_with_torch(name):
    prog = TRANSFORMS[name]
    expected, got = _run(torch, prog), _run(reference, prog)
    assert _same(got, expected), f"{name}: reference {got!r}, torch {expected!r}"


def test_vmap_of_negative_view_matches_the_loop():
    """torch.func.vmap has no batching rule for _neg_view (``imag`` of a conjugate view raises
    "Batching rule not implemented for aten::_neg_view"); the reference's view rule batches it, and
    its result is the per-sample loop's."""
    with pytest.raises(RuntimeError, match="_neg_view"):
        torch.func.vmap(lambda z: z.conj().imag)(_z(torch))
    z = _z(reference)
    got = reference.func.vmap(lambda x: x.conj().imag * x.real)(z)
    loop = reference.stack([x.conj().imag * x.real for x in z.unbind(0)])
    assert np.array_equal(got.numpy(), loop.numpy())
    assert np.array_equal(got.numpy(), -(torch.tensor(Z).imag * torch.tensor(Z).real).numpy())
