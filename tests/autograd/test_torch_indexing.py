"""Indexing, gathers and scatters against PyTorch: values, first and second-order gradients and
errors (type and message) on edge cases: duplicate indices, broadcasting index tensors, index
tensors mixed with slices/None/Ellipsis, bool masks, negative indices, out-of-range indices."""

from __future__ import annotations

import numpy as np
import pytest

import reference
from tests.autograd._torch_agree import agree, same_error

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

R = np.random.default_rng(11)
X = R.standard_normal((3, 4))
X3 = R.standard_normal((3, 4, 5))
S = R.standard_normal((3, 4))


def _i(T, v):
    return T.tensor(v, dtype=T.int64)


def _setitem(index_fn, value_fn):
    def prog(T, a, v):
        b = a * 1.0
        b[index_fn(T)] = value_fn(T, v)
        return b

    return prog


def _iadd(T, a, s):
    b = a * 1.0
    b[T.tensor([0, 2, 0])] += s
    return b


def _setlist(T, a, s):
    b = a * 1.0
    b[[0, 1], :, [1, 2]] = s[0, :2, 0][:, None]
    return b


def _setmask(T, a, s):
    b = a * 1.0
    b[a > 0] = s[a > 0] * 2
    return b


CASES = [
    ("int_rows_dup", lambda T, a: a[_i(T, [0, 2, 0, -1])], [X]),
    ("list_index", lambda T, a: a[[1, 0]], [X]),
    ("two_broadcast", lambda T, a: a[_i(T, [[0], [2]]), _i(T, [1, 3, 3])], [X]),
    ("slice_then_tensor", lambda T, a: a[1:, _i(T, [3, 0])], [X]),
    ("none_ellipsis", lambda T, a: a[None, _i(T, [0]), ..., _i(T, [0, 1])], [X3]),
    ("non_adjacent", lambda T, a: a[_i(T, [0, 2]), :, _i(T, [4, 1])], [X3]),
    ("int_and_tensor", lambda T, a: a[_i(T, [0, 2]), 1, _i(T, [0, 1])], [X3]),
    ("bool_mask", lambda T, a: a[a > 0.2], [X]),
    ("bool_mask_row", lambda T, a: a[T.tensor([True, False, True])], [X]),
    ("bool_mask_trailing", lambda T, a: a[..., T.tensor([True, False, True, False, True])], [X3]),
    ("bool_scalar", lambda T, a: a[T.tensor(True)], [X]),
    ("int32_index", lambda T, a: a[T.tensor([0, 1], dtype=T.int32)], [X]),
    ("zero_d_index_selects", lambda T, a: a[T.tensor(1), :, T.tensor([0, 4])], [X3]),
    ("list_of_bools", lambda T, a: a[[True, False, True]], [X]),
    ("two_d_index", lambda T, a: a[_i(T, [[0, 1], [2, 2]])], [X]),
    ("mask_and_index", lambda T, a: a[T.tensor([True, False, True]), _i(T, [0, 3])], [X]),
    ("step_slice_and_index", lambda T, a: a[::2, _i(T, [1])], [X]),
    ("empty_index", lambda T, a: a[T.tensor([], dtype=T.int64)], [X]),
    ("empty_mask", lambda T, a: a[a > 100], [X]),
    ("set_iadd_dup", _iadd, [X, S]),
    ("set_lists", _setlist, [X3, X3]),
    ("set_mask_tensor", _setmask, [X, S]),
    ("set_dup_accumulate", lambda T, a, v: a.index_put((_i(T, [0, 0, 2]),), v, accumulate=True), [X, S[0]]),
    ("set_pairs", lambda T, a, v: T.index_put(a, (_i(T, [0, 2]), _i(T, [1, 3])), v[0, :2]), [X, S]),
    ("set_tensor", _setitem(lambda T: (_i(T, [0, 2]), slice(1, None)), lambda T, v: v[:2, :3]), [X, S]),
    ("set_mask_value", _setitem(lambda T: T.tensor([True, False, True]), lambda T, v: v[0, 0]), [X, S]),
    ("set_broadcast_row", _setitem(lambda T: _i(T, [1, 2]), lambda T, v: v[0]), [X, S]),
    ("gather", lambda T, a: a.gather(1, _i(T, [[0, 0], [3, 1], [2, 2]])), [X]),
    ("gather_neg_dim", lambda T, a: T.gather(a, -2, _i(T, [[0, 2, 1, 1]])), [X]),
    ("take_along_dim", lambda T, a: T.take_along_dim(a, _i(T, [[1], [0], [3]]), 1), [X]),
    ("take_along_dim_bcast", lambda T, a: T.take_along_dim(a, _i(T, [[1, 0]]), 1), [X]),
    ("take_along_dim_none", lambda T, a: T.take_along_dim(a, _i(T, [11, 0, 5])), [X]),
    ("take_along_dim_wraps", lambda T, a: T.take_along_dim(a, _i(T, [[-1], [7], [-9]]), 1), [X]),
    ("gather_int32_index", lambda T, a: a.gather(1, T.tensor([[0, 3], [1, 1], [2, 0]], dtype=T.int32)), [X]),
    ("gather_empty_uint8_index", lambda T, a: a[0].gather(0, T.zeros((2, 0), dtype=T.uint8)), [X]),
    ("gather_0d_self_1d_index", lambda T, a: a[0, 0].gather(0, _i(T, [0, 0])), [X]),
    ("scatter_empty_index", lambda T, a: a[0].scatter(0, T.zeros((2, 0), dtype=T.uint8), 1.5), [X]),
    ("index_select_0d", lambda T, a: a[0, 0].index_select(0, _i(T, [0])), [X]),
    ("scatter_src", lambda T, a, s: a.scatter(1, _i(T, [[0, 3], [1, 2], [2, 0]]), s[:, :2]), [X, S]),
    ("scatter_value", lambda T, a: a.scatter(0, _i(T, [[2, 0, 1, 1]]), -0.5), [X]),
    ("scatter_add_dup", lambda T, a, s: a.scatter_add(1, _i(T, [[0, 0], [1, 1], [3, 3]]), s[:, :2]), [X, S]),
    ("index_select_dup", lambda T, a: a.index_select(1, _i(T, [3, 0, 3])), [X]),
    ("index_add_alpha", lambda T, a, s: a.index_add(0, _i(T, [2, 0, 2]), s, alpha=2.5), [X, S]),
    ("index_copy", lambda T, a, s: a.index_copy(1, _i(T, [3, 0]), s[:, :2]), [X, S]),
    ("index_fill", lambda T, a: a.index_fill(1, _i(T, [1, 1, 3]), 2.0), [X]),
    ("index_fill_tensor", lambda T, a, s: a.index_fill(0, _i(T, [0, 2, 0]), s[0, 0] * 3), [X, S]),
    ("masked_select_bcast", lambda T, a: a.masked_select(T.tensor([True, False, False, True])), [X]),
    ("masked_scatter", lambda T, a, s: a.masked_scatter(a > 0, s), [X, S]),
    ("take", lambda T, a: a.take(_i(T, [[0, 11], [-1, 5]])), [X]),
    ("put_accumulate", lambda T, a, s: a.put(_i(T, [0, 5, 0]), s[0, :3], accumulate=True), [X, S]),
    ("put", lambda T, a, s: T.put(a, _i(T, [1, -1]), s[1, :2]), [X, S]),
]
for _reduce in ("sum", "prod", "mean", "amax", "amin"):
    for _inc in (True, False):
        CASES.append(
            (
                f"scatter_reduce_{_reduce}_{'self' if _inc else 'noself'}",
                (
                    lambda r, inc: (
                        lambda T, a, s: a.scatter_reduce(
                            1, _i(T, [[0, 0, 1], [2, 2, 2], [3, 1, 3]]), s[:, :3], r, include_self=inc
                        )
                    )
                )(_reduce, _inc),
                [X, S],
            )
        )


@pytest.mark.parametrize("name, prog, arrays", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_torch(name, prog, arrays):
    agree(prog, arrays, label=name)


def test_scatter_reduce_with_zeros_and_ties():
    a = np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 1.0]])
    s = np.array([[0.0, 2.0, 0.0], [1.0, 1.0, 3.0]])
    for r in ("prod", "amax", "amin"):
        for inc in (True, False):
            agree(
                lambda T, a, s, r=r, inc=inc: a.scatter_reduce(
                    1, _i(T, [[0, 0, 1], [2, 2, 2]]), s, r, include_self=inc
                ),
                [a, s],
                order=1,
                label=f"{r} include_self={inc}",
            )


def test_nonzero_and_argwhere():
    import reference

    x = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    got = reference.tensor(x).nonzero().numpy()
    want = torch.tensor(x).nonzero().numpy()
    np.testing.assert_array_equal(got, want)
    for a, b in zip(
        reference.nonzero(reference.tensor(x), as_tuple=True), torch.nonzero(torch.tensor(x), as_tuple=True)
    ):
        assert a.dtype == reference.int64
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(
        reference.argwhere(reference.tensor(x)).numpy(), torch.argwhere(torch.tensor(x)).numpy()
    )


def test_inplace_variants_agree():
    def prog(T, a, s):
        b = a * 1.0
        b.index_add_(1, _i(T, [0, 0]), s[:, :2])
        b.scatter_(0, _i(T, [[1, 0, 2, 1]]), s[:1] * 2)
        b.index_fill_(0, _i(T, [2]), 0.25)
        b.masked_scatter_(b > 1, s)
        b.index_put_((_i(T, [0, 1]),), s[2], accumulate=True)
        return b

    agree(prog, [X, S])


ERRORS = [
    ("getitem_oob", lambda T: T.zeros(3, 4)[_i(T, [0, 5])]),
    ("getitem_oob_neg", lambda T: T.zeros(3, 4)[_i(T, [-4])]),
    ("getitem_oob_second", lambda T: T.zeros(3, 4, 5)[_i(T, [0]), :, _i(T, [5])]),
    ("getitem_mask_shape", lambda T: T.zeros(3, 4)[T.tensor([True, False])]),
    ("getitem_float_index", lambda T: T.zeros(3, 4)[T.tensor([0.0, 1.0])]),
    ("getitem_neg_step", lambda T: T.zeros(3, 4)[::-1]),
    ("getitem_neg_step_mixed", lambda T: T.zeros(3, 4)[_i(T, [0]), ::-2]),
    ("getitem_too_many", lambda T: T.zeros(3, 4)[_i(T, [0]), _i(T, [0]), _i(T, [0])]),
    ("getitem_no_broadcast", lambda T: T.zeros(3, 4)[_i(T, [0, 1]), _i(T, [0, 1, 2])]),
    ("setitem_oob", lambda T: T.zeros(3, 4).__setitem__(_i(T, [5]), 1.0)),
    ("gather_oob", lambda T: T.zeros(3, 4).gather(1, _i(T, [[4]]))),
    ("gather_neg", lambda T: T.zeros(3, 4).gather(1, _i(T, [[-1]]))),
    ("gather_ndim", lambda T: T.zeros(3, 4).gather(1, _i(T, [1]))),
    ("gather_size", lambda T: T.zeros(3, 4).gather(1, T.zeros(4, 1, dtype=T.int64))),
    ("gather_float_index", lambda T: T.zeros(3, 4).gather(1, T.tensor([[0.0]]))),
    ("scatter_add_float_index", lambda T: T.zeros(3, 4).scatter_add(1, T.tensor([[0.0]]), T.zeros(3, 4))),
    (
        "scatter_reduce_float_index",
        lambda T: T.zeros(3, 4).scatter_reduce(1, T.tensor([[0.0]]), T.zeros(3, 4), "sum"),
    ),
    ("take_along_dim_int32", lambda T: T.zeros(3, 4).take_along_dim(T.tensor([[1]], dtype=T.int32), 1)),
    ("scatter_oob", lambda T: T.zeros(3, 4).scatter(1, _i(T, [[4]]), 1.0)),
    ("scatter_add_oob", lambda T: T.zeros(3, 4).scatter_add(1, _i(T, [[4]]), T.zeros(3, 4))),
    ("scatter_reduce_bad", lambda T: T.zeros(3, 4).scatter_reduce(1, _i(T, [[0]]), T.zeros(3, 4), "foo")),
    ("index_select_oob", lambda T: T.zeros(3, 4).index_select(1, _i(T, [4]))),
    ("index_select_2d", lambda T: T.zeros(3, 4).index_select(1, _i(T, [[0]]))),
    ("index_select_float", lambda T: T.zeros(3, 4).index_select(1, T.tensor([0.0]))),
    ("index_add_oob", lambda T: T.zeros(3, 4).index_add(1, _i(T, [4]), T.zeros(3, 1))),
    ("index_copy_oob", lambda T: T.zeros(3, 4).index_copy(1, _i(T, [4]), T.zeros(3, 1))),
    ("index_fill_oob", lambda T: T.zeros(3, 4).index_fill(1, _i(T, [4]), 1.0)),
    ("take_oob", lambda T: T.zeros(3, 4).take(_i(T, [12]))),
    ("masked_select_not_bool", lambda T: T.zeros(4).masked_select(_i(T, [1, 0, 1, 0]))),
    ("index_put_oob", lambda T: T.zeros(3).index_put((_i(T, [3]),), T.tensor(1.0))),
    ("scatter_src_larger_backward", lambda T: _src_larger(T)),
]


def _src_larger(T):
    a = T.zeros(2, 3, dtype=T.float64, requires_grad=True)
    s = T.ones(2, 3, dtype=T.float64, requires_grad=True)
    T.scatter_add(a, 0, _i(T, [[1, 0, 1]]), s).sum().backward()


@pytest.mark.parametrize("name, prog", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_agree(name, prog):
    same_error(lambda T: prog(T))


VMAP_INDEX = [
    ("rows", lambda x, i, j: x[i]),
    ("non_adjacent", lambda x, i, j: x[i, :, j]),
    ("slice_first", lambda x, i, j: x[:, i[:1], j]),
    ("none_ellipsis", lambda x, i, j: x[None, ..., j]),
    ("gather", lambda x, i, j: x.gather(0, i.clamp(0, 3)[:, None, None].expand(2, 5, 6))),
    ("index_select", lambda x, i, j: x.index_select(1, j)),
]


@pytest.mark.parametrize("name, fn", VMAP_INDEX, ids=[c[0] for c in VMAP_INDEX])
def test_vmap_with_batched_index_tensors_agrees_with_torch_func(name, fn):
    """Index tensors batched by vmap (their values differ per sample), against torch.func.vmap."""
    import reference
    from reference.func import vmap

    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 5, 6))
    i = rng.integers(-4, 4, size=(3, 2))
    j = rng.integers(0, 5, size=(3, 2))
    got = vmap(fn, allow_fallback=False)(*(reference.tensor(a) for a in (x, i, j)))
    want = torch.func.vmap(fn)(*(torch.tensor(a) for a in (x, i, j)))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "dst_shape, index, value",
    [
        ((3,), Ellipsis, 0.5),  # a number into a whole tensor: fill_ (FillBackward3)
        ((3,), Ellipsis, "0d"),  # a 0-d tensor: fill_ too
        ((3,), slice(None), "same"),  # a source of the target's sizes: copy_
        ((), Ellipsis, 0.5),  # a number into a 0-d target: copy_ (CopyBackwards)
        ((), Ellipsis, "0d"),
        ((2, 3), Ellipsis, "row"),  # broadcast: copy_
        ((3,), 1, 0.5),  # into a view: CopySlices around the copy_/fill_
    ],
)
def test_setitem_node_follows_torch_copy_to(dst_shape, index, value):
    """``x[index] = value`` records PyTorch's node: copy_to copies a source of the target's sizes,
    fills from a 0-d CPU source (a number becomes one), copies otherwise."""
    names = []
    for T in (reference, torch):
        x = T.zeros(dst_shape, dtype=T.float64, requires_grad=True) * 1
        if value == "0d":
            src = T.tensor(0.5, dtype=T.float64)
        elif value == "same":
            src = T.ones(dst_shape, dtype=T.float64)
        elif value == "row":
            src = T.ones(1, dst_shape[-1], dtype=T.float64)
        else:
            src = value
        x[index] = src
        fn = x.grad_fn
        inner = [f for f, _ in fn.next_functions if f is not None] if "CopySlices" in fn.name() else []
        names.append([fn.name().split("::")[-1]] + [f.name().split("::")[-1] for f in inner])
    assert names[0] == names[1]
