"""The matmul family against PyTorch: values, dtypes, grad_fn names, first- and second-order
gradients and errors, on the same program text (``M``: torch or reference)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import reference as T
from tests.autograd.test_torch_shape import compare, same_error

CASES = {
    "mm": (lambda M, a, b: M.mm(a, b), [(2, 3), (3, 4)]),
    "mm_method_empty": (lambda M, a, b: a.mm(b), [(2, 0), (0, 4)]),
    "bmm": (lambda M, a, b: M.bmm(a, b), [(2, 2, 3), (2, 3, 4)]),
    "mv": (lambda M, a, b: M.mv(a, b), [(2, 3), (3,)]),
    "dot": (lambda M, a, b: M.dot(a, b), [(3,), (3,)]),
    "vdot": (lambda M, a, b: a.vdot(b), [(3,), (3,)]),
    "inner": (lambda M, a, b: M.inner(a, b), [(2, 3), (4, 3)]),
    "inner_vectors": (lambda M, a, b: M.inner(a, b), [(3,), (3,)]),
    "inner_scalar": (lambda M, a, b: M.inner(a, b), [(), (2, 3)]),
    "outer": (lambda M, a, b: M.outer(a, b), [(3,), (2,)]),
    "ger": (lambda M, a, b: a.ger(b), [(3,), (2,)]),
    "addmm": (lambda M, s, a, b: M.addmm(s, a, b), [(2, 4), (2, 3), (3, 4)]),
    "addmm_beta_alpha": (lambda M, s, a, b: s.addmm(a, b, beta=0.5, alpha=2), [(4,), (2, 3), (3, 4)]),
    "addmm_beta0": (lambda M, s, a, b: M.addmm(s, a, b, beta=0), [(1, 4), (2, 3), (3, 4)]),
    "addmv": (lambda M, s, a, v: M.addmv(s, a, v, alpha=-1), [(2,), (2, 3), (3,)]),
    "addmv_broadcast": (lambda M, s, a, v: M.addmv(s, a, v, beta=2), [(1,), (2, 3), (3,)]),
    "addr": (lambda M, s, a, b: M.addr(s, a, b), [(3, 2), (3,), (2,)]),
    "addr_broadcast": (lambda M, s, a, b: s.addr(a, b, beta=3, alpha=0.5), [(2,), (3,), (2,)]),
    "baddbmm": (lambda M, s, a, b: M.baddbmm(s, a, b), [(2, 2, 4), (2, 2, 3), (2, 3, 4)]),
    "baddbmm_broadcast": (
        lambda M, s, a, b: s.baddbmm(a, b, beta=-1, alpha=2),
        [(2, 4), (2, 2, 3), (2, 3, 4)],
    ),
    "addbmm": (lambda M, s, a, b: M.addbmm(s, a, b), [(2, 4), (3, 2, 3), (3, 3, 4)]),
    "addbmm_alpha": (lambda M, s, a, b: s.addbmm(a, b, alpha=0.25), [(4,), (3, 2, 3), (3, 3, 4)]),
    "tensordot_int": (lambda M, a, b: M.tensordot(a, b, 2), [(2, 3, 4), (3, 4, 2)]),
    "tensordot_lists": (lambda M, a, b: M.tensordot(a, b, ([0, 2], [2, 1])), [(2, 3, 4), (3, 4, 2)]),
    "tensordot_broadcast_dims": (lambda M, a, b: M.tensordot(a, b, ([0, 1], [2, 0])), [(1, 2, 3), (2, 1, 4)]),
    "tensordot_zero": (lambda M, a, b: M.tensordot(a, b, 0), [(2,), (3,)]),
    "kron": (lambda M, a, b: M.kron(a, b), [(2, 3), (2, 2)]),
    "kron_ranks": (lambda M, a, b: a.kron(b), [(2,), (2, 1, 3)]),
    "multi_dot": (lambda M, a, b, c: M.linalg.multi_dot([a, b, c]), [(2, 3), (3, 4), (4, 2)]),
    "multi_dot_vectors": (lambda M, a, b, c: M.linalg.multi_dot([a, b, c]), [(3,), (3, 4), (4,)]),
    "multi_dot_two": (lambda M, a, b: M.linalg.multi_dot((a, b)), [(2, 3), (3,)]),
    "chain_matmul": (lambda M, a, b, c: M.chain_matmul(a, b, c), [(5, 3), (3, 4), (4, 2)]),
    "cross_dim": (lambda M, a, b: M.cross(a, b, dim=0), [(3, 2), (3, 2)]),
    "cross_default": (lambda M, a, b: M.cross(a, b), [(2, 3, 3), (2, 3, 3)]),
    "linalg_cross": (lambda M, a, b: M.linalg.cross(a, b), [(2, 3), (1, 3)]),
    "linalg_cross_dim": (lambda M, a, b: M.linalg.cross(a, b, dim=-2), [(3, 2), (3, 2)]),
    "cross_method": (lambda M, a, b: a.cross(b, 1), [(2, 3), (2, 3)]),
    "trace": (lambda M, a: M.trace(a), [(3, 4)]),
    "trace_method": (lambda M, a: a.trace(), [(3, 2)]),
    "vecdot": (lambda M, a, b: M.linalg.vecdot(a, b), [(2, 3), (3,)]),
    "vecdot_dim": (lambda M, a, b: M.linalg.vecdot(a, b, dim=0), [(2, 3), (2, 3)]),
    "linalg_matmul": (lambda M, a, b: M.linalg.matmul(a, b), [(2, 3), (3,)]),
    "matmul_broadcast_batch": (lambda M, a, b: M.matmul(a, b), [(2, 1, 2, 3), (4, 3, 2)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    fn, shapes = CASES[name]
    compare(fn, shapes)


# einsum: PyTorch contracts with permute/bmm/view, the reference with diagonal/permute/mul/sum,
# so node names differ; values and gradients (first and second order) must agree.
EINSUM = {
    "matmul": ("ij,jk->ik", [(2, 3), (3, 4)]),
    "implicit": ("ij,jk", [(2, 3), (3, 4)]),
    "implicit_sorted": ("ba,ca", [(2, 3), (4, 3)]),
    "trace": ("ii", [(3, 3)]),
    "diagonal": ("ii->i", [(3, 3)]),
    "diag_3": ("iii->i", [(2, 2, 2)]),
    "sum_all": ("ij->", [(2, 3)]),
    "transpose": ("ij->ji", [(2, 3)]),
    "outer": ("i,j->ij", [(2,), (3,)]),
    "batch": ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    "ellipsis": ("...ij,...jk->...ik", [(2, 2, 3), (3, 4)]),
    "ellipsis_broadcast": ("...ij,...jk", [(2, 1, 2, 3), (4, 3, 2)]),
    "ellipsis_middle": ("i...j,j->i...", [(2, 3, 4, 3), (3,)]),
    "ellipsis_out_last": ("...i->i...", [(2, 3, 4)]),
    "three": ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    "repeated_across": ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]),
    "repeated_mixed": ("iij,jk->ik", [(2, 2, 3), (3, 4)]),
    "spaces": (" i j , j -> i ", [(2, 3), (3,)]),
    "broadcast_unit": ("ij,ij->ij", [(2, 1), (2, 3)]),
    "empty_dim": ("ij,jk->ik", [(2, 0), (0, 3)]),
    "scalar_operand": (",i->i", [(), (3,)]),
    "keep_unsummed": ("ij,k->ijk", [(2, 3), (2,)]),
    "bilinear": ("bn,anm,bm->ba", [(2, 3), (4, 3, 2), (2, 2)]),
}


@pytest.mark.parametrize("name", sorted(EINSUM))
def test_einsum_against_torch(name):
    eq, shapes = EINSUM[name]
    compare(lambda M, *xs: M.einsum(eq, *xs), shapes, nodes=False)


def test_einsum_list_and_sublist_formats():
    compare(lambda M, a, b: M.einsum("ij,jk", [a, b]), [(2, 3), (3, 4)], nodes=False)
    compare(lambda M, a, b: M.einsum(a, [0, 1], b, [1, 2], [0, 2]), [(2, 3), (3, 4)], nodes=False)
    compare(lambda M, a, b: M.einsum(a, [Ellipsis, 0], b, [Ellipsis, 0]), [(2, 3), (2, 3)], nodes=False)


def test_beta_zero_ignores_nan_in_input():
    """beta=0: input is ignored, so nan and inf in it do not propagate (PyTorch's BLAS semantics)."""
    for name, shapes in (
        ("addmm", [(2, 4), (2, 3), (3, 4)]),
        ("addmv", [(2,), (2, 3), (3,)]),
        ("addr", [(3, 2), (3,), (2,)]),
        ("baddbmm", [(2, 2, 4), (2, 2, 3), (2, 3, 4)]),
        ("addbmm", [(2, 4), (3, 2, 3), (3, 3, 4)]),
    ):
        rng = np.random.default_rng(0)
        arrays = [rng.standard_normal(s) for s in shapes]
        arrays[0][...] = np.nan
        outs = []
        for M in (torch, T):
            xs = [M.tensor(a, dtype=M.float64, requires_grad=True) for a in arrays]
            out = getattr(M, name)(*xs, beta=0)
            gs = M.autograd.grad(out.sum(), xs)
            outs.append((out.detach().numpy(), [g.numpy() for g in gs]))
        (ot, gt), (orf, gr) = outs
        assert not np.isnan(orf).any(), name
        np.testing.assert_allclose(orf, ot, rtol=1e-12)
        for a, b in zip(gt, gr):
            np.testing.assert_allclose(b, a, rtol=1e-12)


def test_integer_products_as_torch():
    a = np.arange(6).reshape(2, 3)
    b = np.arange(12).reshape(3, 4)
    for fn in (
        lambda M, x, y: M.mm(x, y),
        lambda M, x, y: M.addmm(M.ones(2, 4, dtype=M.int64), x, y, beta=2, alpha=3),
        lambda M, x, y: M.trace(x),
        lambda M, x, y: M.kron(x, y),
        lambda M, x, y: M.tensordot(x, y, 1),
        lambda M, x, y: M.einsum("ij,jk->ik", x, y),
        lambda M, x, y: M.linalg.cross(x[:, :3], x[:, :3] + 1),
        lambda M, x, y: M.outer(x[0], y[0]),
    ):
        rt, rr = fn(torch, torch.tensor(a), torch.tensor(b)), fn(T, T.tensor(a), T.tensor(b))
        assert str(rr.dtype) == str(rt.dtype).replace("torch.", "")
        np.testing.assert_array_equal(rr.numpy(), rt.numpy())


def test_kron_promotes():
    """kron multiplies elementwise, so it promotes mixed dtypes; cross, einsum and mm refuse them."""
    for fn in (
        lambda M: M.kron(M.ones(2), M.ones(2, dtype=M.float64)),
        lambda M: M.kron(M.ones(2, dtype=M.int64), M.ones(2)),
    ):
        rt, rr = fn(torch), fn(T)
        assert str(rr.dtype) == str(rt.dtype).replace("torch.", "")


ERRORS = {
    "mm_shapes": (lambda M, a, b: M.mm(a, b), [(2, 3), (2, 3)]),
    "mm_1d": (lambda M, a, b: M.mm(a, b), [(3,), (3, 2)]),
    "mm_dtype": (lambda M, a, b: M.mm(a, b.float()), [(2, 3), (3, 2)]),
    "bmm_2d": (lambda M, a, b: M.bmm(a, b), [(2, 3), (3, 2)]),
    "bmm_shapes": (lambda M, a, b: M.bmm(a, b), [(2, 2, 3), (2, 2, 3)]),
    "mv_dims": (lambda M, a, b: M.mv(a, b), [(2, 3), (2, 3)]),
    "mv_size": (lambda M, a, b: M.mv(a, b), [(2, 3), (4,)]),
    "mv_dtype": (lambda M, a, b: M.mv(a, b.float()), [(2, 3), (3,)]),
    "dot_2d": (lambda M, a, b: M.dot(a, b), [(2, 3), (2, 3)]),
    "dot_size": (lambda M, a, b: M.dot(a, b), [(3,), (4,)]),
    "dot_dtype": (lambda M, a, b: M.dot(a, b.float()), [(3,), (3,)]),
    "vdot_dtype": (lambda M, a, b: M.vdot(a, b.float()), [(3,), (3,)]),
    "inner_size": (lambda M, a, b: M.inner(a, b), [(2, 3), (2, 4)]),
    "outer_2d": (lambda M, a, b: M.outer(a, b), [(2, 3), (3,)]),
    "addmm_shapes": (lambda M, s, a, b: M.addmm(s, a, b), [(2, 2), (2, 3), (2, 3)]),
    "addmm_self_dtype": (lambda M, s, a, b: M.addmm(s.float(), a, b), [(2, 2), (2, 3), (3, 2)]),
    "addmm_self_shape": (lambda M, s, a, b: M.addmm(s, a, b), [(5,), (2, 3), (3, 2)]),
    "addmv_size": (lambda M, s, a, b: M.addmv(s, a, b), [(3,), (2, 3), (3,)]),
    "addr_self_shape": (lambda M, s, a, b: M.addr(s, a, b), [(2, 3), (3,), (3,)]),
    "baddbmm_shapes": (lambda M, s, a, b: M.baddbmm(s, a, b), [(2, 2, 2), (2, 2, 3), (2, 2, 3)]),
    "addbmm_2d": (lambda M, s, a, b: M.addbmm(s, a, b), [(2, 2), (2, 3), (3, 2)]),
    "einsum_dtype": (lambda M, a, b: M.einsum("ij,jk", a, b.float()), [(2, 3), (3, 2)]),
    "einsum_out_repeat": (lambda M, a, b: M.einsum("ij,jk->ii", a, b), [(2, 3), (3, 2)]),
    "einsum_out_missing": (lambda M, a, b: M.einsum("ij,jk->l", a, b), [(2, 3), (3, 2)]),
    "einsum_few": (lambda M, a: M.einsum("ij,jk", a), [(2, 3)]),
    "einsum_many": (lambda M, a, b: M.einsum("ij", a, b), [(2, 3), (3, 2)]),
    "einsum_ndim": (lambda M, a: M.einsum("ijk", a), [(2, 3)]),
    "einsum_size": (lambda M, a, b: M.einsum("ij,jk", a, b), [(2, 3), (2, 3)]),
    "tensordot_size": (lambda M, a, b: M.tensordot(a, b, 1), [(2, 3), (2, 3)]),
    "multi_dot_one": (lambda M, a: M.linalg.multi_dot([a]), [(2, 3)]),
    "multi_dot_3d": (lambda M, a, b: M.linalg.multi_dot([a, b]), [(1, 2, 3), (3, 2)]),
    "linalg_cross_ndim": (lambda M, a, b: M.linalg.cross(a, b), [(3,), (2, 3)]),
    "linalg_cross_len": (lambda M, a, b: M.linalg.cross(a, b), [(2, 4), (2, 4)]),
    "cross_no_3": (lambda M, a, b: M.cross(a, b), [(2, 2), (2, 2)]),
    "trace_1d": (lambda M, a: M.trace(a), [(3,)]),
    "cross_dtype": (lambda M, a, b: M.linalg.cross(a, b.float()), [(3,), (3,)]),
    "cross_int_float": (lambda M, a, b: M.cross(a.long(), b.float(), dim=0), [(3,), (3,)]),
    "mm_dtype_half": (lambda M, a, b: M.mm(a.half(), b.float()), [(2, 2), (2, 2)]),
    "mm_dtype_long": (lambda M, a, b: M.mm(a.long(), b.float()), [(2, 2), (2, 2)]),
    "vecdot_dtype": (lambda M, a, b: M.linalg.vecdot(a, b.float()), [(3,), (3,)]),
    "matmul_0d": (lambda M, a, b: M.matmul(a, b), [(), (3,)]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name):
    fn, shapes = ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(fn, shapes)
