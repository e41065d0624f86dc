"""The shape family against PyTorch: forward values and dtypes, grad_fn names, first- and
second-order gradients, and errors (type and message), on the same program text run with
``torch`` and with ``reference`` (``M`` below is either module)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import reference as T


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _inputs(M, arrays):
    return [M.tensor(a, dtype=M.float64, requires_grad=True) for a in arrays]


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _dt(t):
    return str(t.dtype).replace("torch.", "")


def _same(a, b, what):
    assert (a is None) == (b is None), f"{what}: torch {a!r} vs reference {b!r}"
    if a is None:
        return
    assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {tuple(a.shape)} vs {tuple(b.shape)}"
    assert _dt(a) == _dt(b), f"{what}: dtype {a.dtype} vs {b.dtype}"
    np.testing.assert_allclose(_np(b), _np(a), rtol=1e-10, atol=1e-12, err_msg=what)


def compare(fn, shapes, *, seed=0, nodes=True, order=2):
    """Run ``fn(M, *inputs)`` on torch and the reference and compare values, grad_fn names and
    gradients (the VJP with a random cotangent, then the gradient of a random projection of it)."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xt, xr = _inputs(torch, arrays), _inputs(T, arrays)
        ot, orf = _flat(fn(torch, *xt)), _flat(fn(T, *xr))
    assert len(ot) == len(orf)
    for i, (a, b) in enumerate(zip(ot, orf)):
        _same(a, b, f"output {i}")
        if nodes:
            na = a.grad_fn.name() if a.grad_fn is not None else None
            nb = b.grad_fn.name() if b.grad_fn is not None else None
            assert na == nb, f"output {i}: grad_fn {na} vs {nb}"
    if order < 1 or not xt:
        return
    diff = [i for i, o in enumerate(ot) if o.requires_grad]
    assert diff == [i for i, o in enumerate(orf) if o.requires_grad]
    if not diff:
        return
    vs = [rng.standard_normal(tuple(ot[i].shape)) for i in diff]
    gt = torch.autograd.grad(
        [ot[i] for i in diff], xt, [torch.tensor(v) for v in vs], create_graph=True, allow_unused=True
    )
    gr = T.autograd.grad(
        [orf[i] for i in diff], xr, [T.tensor(v) for v in vs], create_graph=True, allow_unused=True
    )
    for i, (a, b) in enumerate(zip(gt, gr)):
        _same(a, b, f"gradient of input {i}")
    if order < 2:
        return
    ws = [rng.standard_normal(tuple(x.shape)) for x in xt]
    st = [(g * torch.tensor(w)).sum() for g, w in zip(gt, ws) if g is not None and g.requires_grad]
    sr = [(g * T.tensor(w)).sum() for g, w in zip(gr, ws) if g is not None and g.requires_grad]
    assert len(st) == len(sr)
    if not st:
        return
    ggt = torch.autograd.grad(sum(st), xt, allow_unused=True)
    ggr = T.autograd.grad(sum(sr[1:], sr[0]), xr, allow_unused=True)
    for i, (a, b) in enumerate(zip(ggt, ggr)):
        _same(a, b, f"second-order gradient of input {i}")


def same_error(fn, shapes=(), *, match_message=True):
    """``fn`` raises the same exception type (and message) on torch and the reference."""
    arrays = [np.random.default_rng(0).standard_normal(s) for s in shapes]
    errors = []
    for M in (torch, T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                fn(M, *[M.tensor(a, dtype=M.float64) for a in arrays])
            except Exception as e:  # noqa: BLE001 - the point is to compare them
                errors.append(e)
            else:
                errors.append(None)
    et, er = errors
    assert et is not None, "torch did not raise"
    assert er is not None, f"reference did not raise (torch: {type(et).__name__}: {et})"
    assert type(et).__name__ == type(er).__name__, f"{type(et).__name__}: {et} vs {type(er).__name__}: {er}"
    if match_message:
        assert str(et).split("\n")[0] == str(er).split("\n")[0]


# ---- values, nodes and gradients --------------------------------------------------------------------------

CASES = {
    "flip": (lambda M, a: M.flip(a, (0, -1)), [(2, 3, 4)]),
    "flip_method_varargs": (lambda M, a: a.flip(0, 1), [(2, 3)]),
    "flip_dims_keyword": (lambda M, a: M.flip(a, dims=(0, 1)), [(2, 3)]),
    "tril_inplace": (lambda M, a: (a * 1).tril_(1), [(3, 4)]),
    "triu_inplace": (lambda M, a: (a * 1).triu_(-1), [(2, 3, 3)]),
    "flip_empty": (lambda M, a: M.flip(a, (1,)), [(2, 0)]),
    "flip_0d": (lambda M, a: M.flip(a, ()), [()]),
    "fliplr": (lambda M, a: M.fliplr(a), [(2, 3, 2)]),
    "flipud": (lambda M, a: a.flipud(), [(3,)]),
    "roll_dims": (lambda M, a: M.roll(a, (1, -5), (0, 2)), [(2, 3, 4)]),
    "roll_flat": (lambda M, a: a.roll(-2), [(2, 3)]),
    "roll_int_dim": (lambda M, a: M.roll(a, 7, -1), [(2, 3)]),
    "rot90": (lambda M, a: M.rot90(a), [(2, 3)]),
    "rot90_k2": (lambda M, a: a.rot90(2, (1, 2)), [(2, 3, 4)]),
    "rot90_k_neg": (lambda M, a: M.rot90(a, -3, (-1, 0)), [(2, 3)]),
    "rot90_k0": (lambda M, a: M.rot90(a, 4), [(2, 3)]),
    "repeat": (lambda M, a: a.repeat(2, 3), [(2, 3)]),
    "repeat_more_dims": (lambda M, a: a.repeat((2, 1, 2)), [(3,)]),
    "repeat_zero": (lambda M, a: a.repeat(0, 2), [(2, 3)]),
    "repeat_0d": (lambda M, a: a.repeat(3), [()]),
    "tile_short": (lambda M, a: M.tile(a, (2,)), [(2, 3)]),
    "tile_long": (lambda M, a: a.tile((2, 1, 1)), [(2, 3)]),
    "repeat_interleave_int": (lambda M, a: a.repeat_interleave(2, 1), [(2, 3)]),
    "repeat_interleave_flat": (lambda M, a: M.repeat_interleave(a, 3), [(2, 2)]),
    "repeat_interleave_neg_dim": (lambda M, a: M.repeat_interleave(a, 2, dim=-2), [(2, 3)]),
    "tril": (lambda M, a: M.tril(a), [(3, 4)]),
    "tril_diag": (lambda M, a: a.tril(diagonal=-1), [(2, 3, 3)]),
    "triu": (lambda M, a: M.triu(a, 2), [(4, 3)]),
    "triu_empty": (lambda M, a: M.triu(a), [(0, 3)]),
    "movedim": (lambda M, a: M.movedim(a, 0, -1), [(2, 3, 4)]),
    "movedim_tuple": (lambda M, a: a.movedim((0, 1), (2, 0)), [(2, 3, 4)]),
    "moveaxis": (lambda M, a: M.moveaxis(a, -1, 0), [(2, 3, 4)]),
    "swapaxes": (lambda M, a: M.swapaxes(a, 0, -1), [(2, 3, 4)]),
    "swapdims": (lambda M, a: a.swapdims(1, 2), [(2, 3, 4)]),
    "unflatten": (lambda M, a: a.unflatten(1, (2, -1)), [(2, 6)]),
    "unflatten_neg": (lambda M, a: M.unflatten(a, -1, (3, 2)), [(2, 6)]),
    "unfold": (lambda M, a: a.unfold(1, 3, 2), [(2, 7)]),
    "unfold_dim0": (lambda M, a: a.unfold(0, 2, 1), [(3, 2)]),
    "unfold_0d": (lambda M, a: a.unfold(0, 1, 1), [()]),
    "diag_vector": (lambda M, a: M.diag(a), [(3,)]),
    "diag_vector_offset": (lambda M, a: M.diag(a, -2), [(3,)]),
    "diag_matrix": (lambda M, a: M.diag(a), [(3, 4)]),
    "diag_matrix_offset": (lambda M, a: a.diag(2), [(3, 4)]),
    "diag_matrix_offset_past": (lambda M, a: a.diag(-5), [(3, 4)]),
    "diagonal_copy": (lambda M, a: M.diagonal_copy(a, 1, 1, 0), [(3, 4)]),
    "narrow_tensor_start": (lambda M, a: a.narrow(1, M.tensor(-2), 2), [(2, 4)]),
    "diag_embed": (lambda M, a: M.diag_embed(a), [(2, 3)]),
    "diag_embed_dims": (lambda M, a: M.diag_embed(a, 1, 0, -1), [(2, 3)]),
    "diag_embed_neg_offset": (lambda M, a: a.diag_embed(-2, 2, 0), [(2, 3)]),
    "diagflat": (lambda M, a: M.diagflat(a), [(2, 2)]),
    "diagflat_offset": (lambda M, a: a.diagflat(-1), [(3,)]),
    "block_diag": (lambda M, a, b, c: M.block_diag(a, b, c), [(2, 3), (3,), ()]),
    "block_diag_one": (lambda M, a: M.block_diag(a), [(2, 2)]),
    "block_diag_empty": (lambda M, a, b: M.block_diag(a, b), [(0, 2), (2, 0)]),
    "broadcast_tensors": (lambda M, a, b, c: M.broadcast_tensors(a, b, c), [(2, 1), (3,), ()]),
    "broadcast_to": (lambda M, a: M.broadcast_to(a, (2, 3, 3)), [(3, 1)]),
    "broadcast_to_method": (lambda M, a: a.broadcast_to((2, -1)), [(3,)]),
    "meshgrid_ij": (lambda M, a, b: M.meshgrid(a, b, indexing="ij"), [(3,), (2,)]),
    "meshgrid_xy": (lambda M, a, b, c: M.meshgrid([a, b, c], indexing="xy"), [(3,), (2,), (4,)]),
    "meshgrid_0d": (lambda M, a, b: M.meshgrid(a, b, indexing="ij"), [(), (2,)]),
    "hstack": (lambda M, a, b: M.hstack([a, b]), [(2, 3), (2, 1)]),
    "hstack_1d": (lambda M, a, b: M.hstack((a, b)), [(2,), ()]),
    "vstack": (lambda M, a, b: M.vstack([a, b]), [(3,), (2, 3)]),
    "row_stack": (lambda M, a, b: M.row_stack([a, b]), [(3,), (3,)]),
    "dstack": (lambda M, a, b: M.dstack([a, b]), [(2, 3), (2, 3, 2)]),
    "dstack_1d": (lambda M, a, b: M.dstack([a, b]), [(3,), (3,)]),
    "column_stack": (lambda M, a, b, c: M.column_stack([a, b, c]), [(3,), (3, 2), (3,)]),
    "atleast_1d": (lambda M, a, b: M.atleast_1d(a, b), [(), (2,)]),
    "atleast_1d_one": (lambda M, a: M.atleast_1d(a), [()]),
    "atleast_2d": (lambda M, a, b, c: M.atleast_2d([a, b, c]), [(), (2,), (2, 2, 2)]),
    "atleast_3d": (lambda M, a, b, c, d: M.atleast_3d(a, b, c, d), [(), (2,), (2, 3), (1, 2, 3, 4)]),
    "tensor_split_sections": (lambda M, a: M.tensor_split(a, 3, 1), [(2, 7)]),
    "tensor_split_indices": (lambda M, a: a.tensor_split([1, 4, 2, 9], dim=-1), [(2, 7)]),
    "tensor_split_more": (lambda M, a: M.tensor_split(a, 5), [(3, 2)]),
    "hsplit": (lambda M, a: M.hsplit(a, 2), [(2, 4)]),
    "hsplit_1d": (lambda M, a: a.hsplit([1]), [(3,)]),
    "vsplit": (lambda M, a: M.vsplit(a, [1, 2]), [(3, 2)]),
    "dsplit": (lambda M, a: a.dsplit(2), [(1, 2, 4)]),
    "split_with_sizes": (lambda M, a: a.split_with_sizes([1, 3], 1), [(2, 4)]),
    "squeeze_tuple": (lambda M, a: a.squeeze((0, 2, -1)), [(1, 3, 1, 1)]),
    "squeeze_tuple_keep": (lambda M, a: M.squeeze(a, (1,)), [(1, 3)]),
    "ravel": (lambda M, a: a.ravel(), [(2, 3)]),
    "ravel_transposed": (lambda M, a: M.ravel(a.t()), [(2, 3)]),
    "view_as": (lambda M, a, b: a.view_as(b), [(2, 3), (3, 2)]),
    "reshape_as": (lambda M, a, b: a.t().reshape_as(b), [(2, 3), (6,)]),
    "narrow_copy": (lambda M, a: M.narrow_copy(a, -1, 1, 2), [(2, 4)]),
    "narrow_copy_method": (lambda M, a: a.narrow_copy(0, 1, 1), [(2, 4)]),
    "select_scatter": (lambda M, a, b: M.select_scatter(a, b, 0, -1), [(3, 4), (4,)]),
    "slice_scatter": (lambda M, a, b: M.slice_scatter(a, b, 1, 1, None, 2), [(3, 5), (3, 2)]),
    "slice_scatter_default": (lambda M, a, b: M.slice_scatter(a, b), [(3, 5), (3, 5)]),
    "slice_scatter_neg": (lambda M, a, b: a.slice_scatter(b, dim=0, start=-2, end=10), [(3, 5), (2, 5)]),
    "diagonal_scatter": (lambda M, a, b: M.diagonal_scatter(a, b), [(3, 4), (3,)]),
    "diagonal_scatter_offset": (lambda M, a, b: a.diagonal_scatter(b, 1, 2, 0), [(3, 2, 4), (2, 2)]),
    "T": (lambda M, a: a.T, [(2, 3)]),
    "mT": (lambda M, a: a.mT, [(4, 2, 3)]),
    "mH": (lambda M, a: a.mH, [(2, 3)]),
    "H": (lambda M, a: a.H, [(2, 3)]),
    "contiguous_format": (lambda M, a: a.t().contiguous(memory_format=M.contiguous_format), [(2, 3)]),
    "concat": (lambda M, a, b: M.concat([a, b], -1), [(2, 3), (2, 1)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    fn, shapes = CASES[name]
    compare(fn, shapes)


def test_repeat_interleave_tensor_repeats():
    """Tensor repeats: PyTorch gathers with index_select (IndexSelectBackward0); the reference
    gathers by flat index (TakeBackward0): same values and gradients, another node name."""
    compare(lambda M, a: M.repeat_interleave(a, M.tensor([1, 0, 3]), dim=1), [(2, 3)], nodes=False)
    compare(lambda M, a: a.repeat_interleave(M.tensor(2)), [(2, 2)], nodes=False)
    for M in (torch, T):
        out = M.repeat_interleave(M.tensor([2, 0, 1]))
        assert out.tolist() == [0, 0, 2] and str(out.dtype).endswith("int64")


def test_integer_and_bool_inputs_keep_their_dtype():
    for fn in (
        lambda M, x: M.flip(x, (0,)),
        lambda M, x: M.roll(x, 1),
        lambda M, x: x.repeat(2, 1),
        lambda M, x: M.tril(x),
        lambda M, x: M.diag(x),
        lambda M, x: M.rot90(x),
        lambda M, x: M.block_diag(x, x),
    ):
        for dt in ("int64", "int32", "bool"):
            a = np.arange(6).reshape(2, 3) % 2 if dt == "bool" else np.arange(6).reshape(2, 3)
            rt = fn(torch, torch.tensor(a.astype(dt)))
            rr = fn(T, T.tensor(a.astype(dt)))
            assert str(rt.dtype).replace("torch.", "") == str(rr.dtype)
            np.testing.assert_array_equal(rr.numpy(), rt.numpy())


def test_block_diag_promotes():
    for M in (torch, T):
        out = M.block_diag(M.ones(1, 1, dtype=M.float32), M.tensor([2, 3]))
        assert str(out.dtype).replace("torch.", "") == "float32"
    np.testing.assert_array_equal(
        T.block_diag(T.ones(1, 1), T.tensor([2, 3])).numpy(),
        torch.block_diag(torch.ones(1, 1), torch.tensor([2, 3])).numpy(),
    )


def test_views_are_views_and_copies_are_copies():
    for fn, is_view in (
        (lambda M, a: a.unfold(0, 2, 1), True),
        (lambda M, a: a.movedim(0, 1), True),
        (lambda M, a: a.unflatten(0, (1, 2)), True),
        (lambda M, a: M.tensor_split(a, 2)[0], True),
        (lambda M, a: M.flip(a, (0,)), False),
        (lambda M, a: M.narrow_copy(a, 0, 0, 1), False),
        (lambda M, a: M.diag(a), False),
    ):
        for M in (torch, T):
            base = M.zeros(2, 3)
            assert fn(M, base)._is_view() == is_view


ERRORS = {
    "flip_dup": (lambda M, a: M.flip(a, (0, -2)), [(2, 3)]),
    "flip_range": (lambda M, a: M.flip(a, (2,)), [(2, 3)]),
    "fliplr_1d": (lambda M, a: M.fliplr(a), [(3,)]),
    "flipud_0d": (lambda M, a: M.flipud(a), [()]),
    "roll_mismatch": (lambda M, a: M.roll(a, (1, 2), (0,)), [(2, 3)]),
    "roll_flat_many": (lambda M, a: M.roll(a, (1, 2)), [(2, 3)]),
    "rot90_dims": (lambda M, a: M.rot90(a, 1, (0, 1, 2)), [(2, 3, 2)]),
    "rot90_same": (lambda M, a: M.rot90(a, 1, (0, 0)), [(2, 3)]),
    "rot90_1d": (lambda M, a: M.rot90(a), [(3,)]),
    "repeat_short": (lambda M, a: a.repeat(2), [(2, 3)]),
    "repeat_negative": (lambda M, a: a.repeat(-1, 2), [(2, 3)]),
    "tril_1d": (lambda M, a: M.tril(a), [(3,)]),
    "triu_0d": (lambda M, a: M.triu(a), [()]),
    "movedim_len": (lambda M, a: M.movedim(a, (0, 1), (0,)), [(2, 3)]),
    "movedim_repeat": (lambda M, a: M.movedim(a, (0, 0), (0, 1)), [(2, 3)]),
    "unflatten_bad": (lambda M, a: a.unflatten(1, (4, 2)), [(2, 6)]),
    "unflatten_empty": (lambda M, a: a.unflatten(1, ()), [(2, 6)]),
    "unfold_size": (lambda M, a: a.unfold(1, 5, 1), [(2, 4)]),
    "unfold_step": (lambda M, a: a.unfold(1, 2, 0), [(2, 4)]),
    "diag_3d": (lambda M, a: M.diag(a), [(2, 2, 2)]),
    "diag_embed_same_dims": (lambda M, a: M.diag_embed(a, 0, 1, -2), [(2, 3)]),
    "block_diag_3d": (lambda M, a: M.block_diag(a), [(2, 2, 2)]),
    "broadcast_to_bad": (lambda M, a: M.broadcast_to(a, (2, 4)), [(3,)]),
    "meshgrid_2d": (lambda M, a: M.meshgrid(a, indexing="ij"), [(2, 2)], False),  # (message prints a)
    "meshgrid_indexing": (lambda M, a: M.meshgrid(a, indexing="ji"), [(2,)]),
    "hstack_empty": (lambda M: M.hstack([]), []),
    "tensor_split_0d": (lambda M, a: M.tensor_split(a, 2), [()]),
    "tensor_split_zero": (lambda M, a: M.tensor_split(a, 0), [(3,)]),
    "hsplit_indivisible": (lambda M, a: M.hsplit(a, 3), [(2, 4)]),
    "vsplit_1d": (lambda M, a: M.vsplit(a, 1), [(4,)]),
    "dsplit_2d": (lambda M, a: M.dsplit(a, 1), [(2, 4)]),
    "split_with_sizes_sum": (lambda M, a: a.split_with_sizes([1, 1], 1), [(2, 4)]),
    "narrow_copy_past": (lambda M, a: M.narrow_copy(a, 1, 2, 3), [(2, 4)]),
    "select_scatter_shape": (lambda M, a, b: M.select_scatter(a, b, 0, 0), [(3, 4), (3,)]),
    "slice_scatter_shape": (lambda M, a, b: M.slice_scatter(a, b, 1, 0, 2), [(3, 4), (3, 3)]),
    "diagonal_scatter_shape": (lambda M, a, b: M.diagonal_scatter(a, b), [(3, 4), (4,)]),
    "mT_1d": (lambda M, a: a.mT, [(3,)]),
    "mH_1d": (lambda M, a: a.mH, [(3,)]),
    "H_3d": (lambda M, a: a.H, [(2, 2, 2)]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name):
    fn, shapes, *exact = ERRORS[name]
    same_error(fn, shapes, match_message=exact[0] if exact else True)


def test_narrow_copy_negative_start_departs_from_torch():
    """torch 2.13's NarrowCopyBackward0 slices the gradient with the raw negative start
    (``[start, start + length)`` = ``[-1, 0)``: empty), so its gradient is zero; the reference
    gives the true gradient (narrow's). Forward values agree."""
    at = torch.arange(8.0, dtype=torch.float64).reshape(2, 4).requires_grad_()
    (gt,) = torch.autograd.grad(at.narrow_copy(0, -1, 1).sum(), at)
    ar = T.arange(8.0, dtype=T.float64).reshape(2, 4).requires_grad_()
    (gr,) = T.autograd.grad(ar.narrow_copy(0, -1, 1).sum(), ar)
    assert gt.abs().sum().item() == 0.0
    np.testing.assert_array_equal(gr.numpy(), [[0, 0, 0, 0], [1, 1, 1, 1]])
