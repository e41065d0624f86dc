"""``torch.masked`` reductions and normalizations against PyTorch: values, first- and second-order
gradients (masked-out inputs get zero gradient), the identities fully masked-out slices take
(0, 1, -inf, inf, nan), broadcast masks, ``mask=None``, dims (None/int/tuple/negative),
``keepdim``, ``dtype``, ``unbiased``/``correction``, nan in masked-out places, integer inputs,
empty dims, and errors (type and message)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.autograd._complex_agree import complex_agree
from tests.autograd._torch_agree import agree, same_error

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

R = np.random.default_rng(11)
X = R.standard_normal((3, 4))
X3 = R.standard_normal((2, 3, 4))
POS = np.abs(X) + 0.5
# row 1 fully masked out; the others partly
M = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])
M_COL = np.array([True, False, True, False])  # broadcast over rows (ndim 1 < 2)
M3 = np.array([[[True, False, True, True]], [[False, False, False, False]]])  # (2, 1, 4)
NAN_OUT = np.where(M, X, np.nan)  # nan only where masked out


def m(T, a=M):
    return T.tensor(a)


REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "norm", "var", "std", "logsumexp"]
NORMALIZATIONS = ["softmax", "log_softmax", "softmin", "cumsum", "cumprod"]

CASES = []
for op in REDUCTIONS:
    CASES += [
        (f"{op}_dim1_allmasked_row", lambda T, a, op=op: getattr(T.masked, op)(a, dim=1, mask=m(T)), [X]),
        (f"{op}_all", lambda T, a, op=op: getattr(T.masked, op)(a, mask=m(T)), [X]),
        (f"{op}_nomask_tuple", lambda T, a, op=op: getattr(T.masked, op)(a, dim=(0, -1)), [X3]),
        (
            f"{op}_bcast_keepdim",
            lambda T, a, op=op: getattr(T.masked, op)(a, dim=(-1, 0), keepdim=True, mask=m(T, M3)),
            [X3],
        ),
        (f"{op}_col_mask_dim0", lambda T, a, op=op: getattr(T.masked, op)(a, dim=0, mask=m(T, M_COL)), [X]),
        (
            f"{op}_nan_masked_out",
            lambda T, a, op=op: getattr(T.masked, op)(a + T.tensor(NAN_OUT) * 0, dim=1, mask=m(T)),
            [X],
        ),
    ]
for op in NORMALIZATIONS:
    CASES += [
        (f"{op}_dim1_allmasked_row", lambda T, a, op=op: getattr(T.masked, op)(a, 1, mask=m(T)), [X]),
        (f"{op}_dim0_bcast", lambda T, a, op=op: getattr(T.masked, op)(a, 0, mask=m(T, M_COL)), [X]),
        (f"{op}_nomask_neg", lambda T, a, op=op: getattr(T.masked, op)(a, -2), [X3]),
        (f"{op}_bcast3", lambda T, a, op=op: getattr(T.masked, op)(a, -1, mask=m(T, M3)), [X3]),
    ]
CASES += [
    ("median_dim1", lambda T, a: T.masked.median(a, 1, mask=m(T)), [X]),
    ("median_default_dim_keepdim", lambda T, a: T.masked.median(a, keepdim=True, mask=m(T, M_COL)), [X]),
    ("median_nomask", lambda T, a: T.masked.median(a, 0), [X]),
    ("prod_zeros", lambda T, a: T.masked.prod(a * T.tensor([[0.0, 1, 1, 1]] * 3), dim=1, mask=m(T)), [X]),
    ("cumprod_zeros", lambda T, a: T.masked.cumprod(a * T.tensor([[1.0, 1, 0, 1]] * 3), 1, mask=m(T)), [X]),
    ("var_unbiased_false", lambda T, a: T.masked.var(a, 1, False, mask=m(T)), [X]),
    ("var_correction2", lambda T, a: T.masked.var(a, (0, 1), correction=2, mask=m(T)), [X]),
    ("var_correction0_keepdim", lambda T, a: T.masked.var(a, 1, correction=0, keepdim=True, mask=m(T)), [X]),
    ("std_one_element", lambda T, a: T.masked.std(a, 1, mask=m(T, np.eye(3, 4, dtype=bool))), [X]),
    ("std_correction_gt_count", lambda T, a: T.masked.std(a, 1, correction=3, mask=m(T)), [X]),
    ("norm_ord1", lambda T, a: T.masked.norm(a, 1, 1, mask=m(T)), [X]),
    ("norm_ord3_tuple", lambda T, a: T.masked.norm(a, 3.0, (0, 2), mask=m(T, M3)), [X3]),
    ("norm_inf", lambda T, a: T.masked.norm(a, float("inf"), 1, mask=m(T)), [X]),
    ("norm_neginf", lambda T, a: T.masked.norm(a, float("-inf"), 1, mask=m(T)), [X]),
    ("norm_half", lambda T, a: T.masked.norm(a, 0.5, 0, mask=m(T)), [POS]),
    ("normalize_2", lambda T, a: T.masked.normalize(a, 2.0, 1, mask=m(T)), [X]),
    ("normalize_1_eps", lambda T, a: T.masked.normalize(a, 1.0, 0, eps=0.5, mask=m(T, M_COL)), [X]),
    ("normalize_nomask", lambda T, a: T.masked.normalize(a, 3.0, -1), [X3]),
    ("mean_dtype32", lambda T, a: T.masked.mean(a, 1, dtype=T.float32, mask=m(T)), [X]),
    ("sum_dtype32", lambda T, a: T.masked.sum(a, 1, dtype=T.float32, mask=m(T)), [X]),
    ("logsumexp_dtype32", lambda T, a: T.masked.logsumexp(a, 1, dtype=T.float32, mask=m(T)), [X]),
    (
        "logaddexp_masks",
        lambda T, a, b: T.masked.logaddexp(a, b, input_mask=m(T), other_mask=m(T, M_COL)),
        [X, X * 2],
    ),
    ("logaddexp_nomask", lambda T, a, b: T.masked.logaddexp(a, b), [X, X[0]]),
    ("logaddexp_one_mask", lambda T, a, b: T.masked.logaddexp(a, b, other_mask=m(T)), [X, X]),
    ("sum_scalar", lambda T, a: T.masked.sum(a[0, 0], mask=T.tensor(False)), [X]),
    ("cumsum_scalar", lambda T, a: T.masked.cumsum(a[0, 0], 0, mask=T.tensor(True)), [X]),
    ("mean_empty_dim", lambda T, a: T.masked.mean(a[:, :0], 1, mask=m(T)[:, :0]), [X]),
    ("sum_empty_dim", lambda T, a: T.masked.sum(a[:0], 0), [X]),
    ("mask_int_dtype", lambda T, a: T.masked.sum(a, 1, mask=T.tensor(M.astype(np.int64))), [X]),
]


@pytest.mark.parametrize("name, prog, arrays", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_torch(name, prog, arrays):
    agree(prog, arrays, label=name)


@pytest.mark.parametrize("op", REDUCTIONS + ["median"])
def test_masked_out_inputs_get_zero_gradient(op):
    """Masked-out inputs of a partly masked slice get a zero gradient; in a fully masked-out slice
    the mean-based ops (mean, var, std) give nan there as PyTorch does (0/0 counts)."""
    import reference

    grads = []
    for F in (reference, torch):
        x = F.tensor(X, requires_grad=True)
        out = getattr(F.masked, op)(x, 1, mask=m(F))
        (g,) = F.autograd.grad(F.nan_to_num(out, 0.0, 0.0, 0.0).sum(), x)
        grads.append(g.numpy())
    ours, theirs = grads
    partly = M.any(1)
    assert np.all(ours[partly][~M[partly]] == 0), op
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12, equal_nan=True)


INT_CASES = [
    (
        "sum_int32",
        lambda T: T.masked.sum(T.tensor([[1, 2, 3]], dtype=T.int32), 1, mask=T.tensor([True, False, True])),
    ),
    ("sum_bool", lambda T: T.masked.sum(T.tensor([True, True, False]), mask=T.tensor([True, False, True]))),
    (
        "prod_uint8",
        lambda T: T.masked.prod(T.tensor([2, 3, 4], dtype=T.uint8), mask=T.tensor([True, False, True])),
    ),
    (
        "amax_int_allmasked",
        lambda T: T.masked.amax(
            T.tensor([[1, 2], [3, 4]]), 1, mask=T.tensor([[True, False], [False, False]])
        ),
    ),
    (
        "amin_int16_allmasked",
        lambda T: T.masked.amin(
            T.tensor([[1, 2], [3, 4]], dtype=T.int16), 1, mask=T.tensor([[True, False], [False, False]])
        ),
    ),
    (
        "amax_uint8_allmasked",
        lambda T: T.masked.amax(T.tensor([5, 7], dtype=T.uint8), mask=T.tensor([False, False])),
    ),
    (
        "cumsum_int32_keeps_dtype",
        lambda T: T.masked.cumsum(T.tensor([1, 2, 3], dtype=T.int32), 0, mask=T.tensor([True, False, True])),
    ),
    ("cumprod_int", lambda T: T.masked.cumprod(T.tensor([2, 3, 4]), 0, mask=T.tensor([True, False, True]))),
    (
        "median_int",
        lambda T: T.masked.median(T.tensor([[1, 5, 3], [4, 2, 6]]), 1, mask=T.tensor([True, False, True])),
    ),
    (
        "var_int",
        lambda T: T.masked.var(T.tensor([[1, 5, 3], [4, 2, 6]]), 1, mask=T.tensor([True, False, True])),
    ),
    ("std_int_dtype64", lambda T: T.masked.std(T.tensor([[1, 5, 3], [4, 2, 6]]), 1, dtype=T.float64)),
    (
        "mean_int_dtype",
        lambda T: T.masked.mean(
            T.tensor([[1, 5, 3]]), 1, dtype=T.float64, mask=T.tensor([True, False, True])
        ),
    ),
    (
        "logsumexp_int",
        lambda T: T.masked.logsumexp(T.tensor([[1, 2, 3]]), 1, mask=T.tensor([True, False, True])),
    ),
    (
        "argmax_float",
        lambda T: T.masked.argmax(
            T.tensor([[3.0, 5.0, 1.0], [2.0, 0.0, 7.0]]), 1, mask=T.tensor([True, False, True])
        ),
    ),
    (
        "argmin_int_keepdim",
        lambda T: T.masked.argmin(
            T.tensor([[3, 5, 1], [2, 0, 7]]),
            0,
            keepdim=True,
            mask=T.tensor([[True, True, False], [True, False, True]]),
        ),
    ),
    (
        "argmax_all_dtype",
        lambda T: T.masked.argmax(
            T.tensor([[3.0, 5.0], [9.0, 7.0]]), dtype=T.int64, mask=T.tensor([True, False])
        ),
    ),
    (
        "nan_kept_when_masked_in",
        lambda T: T.masked.sum(T.tensor([1.0, float("nan"), 2.0]), mask=T.tensor([True, True, False])),
    ),
    (
        "inf_masked_out",
        lambda T: T.masked.amin(T.tensor([[1.0, -float("inf")]]), 1, mask=T.tensor([True, False])),
    ),
    (
        "softmax_dtype32",
        lambda T: T.masked.softmax(
            T.tensor([[1.0, 2.0, 3.0]], dtype=T.float64),
            1,
            dtype=T.float32,
            mask=T.tensor([False, True, True]),
        ),
    ),
    (
        "softmax_float32",
        lambda T: T.masked.softmax(T.tensor([[1.0, 2.0, 3.0]]), 1, mask=T.tensor([False, True, True])),
    ),
]


@pytest.mark.parametrize("name, prog", INT_CASES, ids=[c[0] for c in INT_CASES])
def test_values_and_dtypes_agree(name, prog):
    import reference

    a, b = prog(reference).numpy(), prog(torch).numpy()
    assert a.dtype == b.dtype, f"{name}: dtype {a.dtype} but PyTorch {b.dtype}"
    if a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


ERRORS = [
    ("sum_bad_dim", lambda T: T.masked.sum(T.zeros(2, 3), 2)),
    ("amax_bad_neg_dim", lambda T: T.masked.amax(T.zeros(2, 3), (0, -3))),
    ("sum_dup_dim", lambda T: T.masked.sum(T.zeros(2, 3), (1, 1))),
    ("mean_dup_dim_neg", lambda T: T.masked.mean(T.zeros(2, 3), (1, 0, 1))),
    ("softmax_bad_dim", lambda T: T.masked.softmax(T.zeros(2, 3), 2)),
    ("cumsum_scalar_bad_dim", lambda T: T.masked.cumsum(T.zeros(()), 1)),
    ("mask_higher_ndim", lambda T: T.masked.sum(T.zeros(3), mask=T.ones(2, 3, dtype=T.bool))),
    ("mask_not_broadcastable", lambda T: T.masked.sum(T.zeros(2, 3), mask=T.ones(2, dtype=T.bool))),
    ("mean_int", lambda T: T.masked.mean(T.ones(3, dtype=T.int64))),
    ("mean_int_dtype", lambda T: T.masked.mean(T.ones(3), dtype=T.int32)),
    (
        "median_int_allmasked",
        lambda T: T.masked.median(
            T.ones(2, 2, dtype=T.int64), 1, mask=T.tensor([[True, False], [False, False]])
        ),
    ),
    ("var_both", lambda T: T.masked.var(T.zeros(2, 3), 1, True, correction=1)),
    (
        "norm_neginf_int",
        lambda T: T.masked.norm(T.ones(3, dtype=T.int64), float("-inf"), mask=T.ones(3, dtype=T.bool)),
    ),
    ("amax_bool", lambda T: T.masked.amax(T.ones(3, dtype=T.bool), mask=T.ones(3, dtype=T.bool))),
    ("amax_empty_dim", lambda T: T.masked.amax(T.zeros(2, 0), 1)),
    ("softmax_int", lambda T: T.masked.softmax(T.tensor([[1, 2, 3]]), 1)),
    (
        "log_softmax_int_dim0",
        lambda T: T.masked.log_softmax(T.tensor([[1, 2, 3]]), 0, mask=T.tensor([True, False, True])),
    ),
    ("softmin_bool", lambda T: T.masked.softmin(T.tensor([True, False]), 0)),
    ("mask_not_a_tensor", lambda T: T.masked.sum(T.zeros(2), mask=[True, False])),
]


@pytest.mark.parametrize("name, prog", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_agree(name, prog):
    same_error(lambda T: prog(T))


# ---- torch._segment_reduce ------------------------------------------------------------------------------

SEG_X = np.array([3.0, 1.0, 3.0, -2.0, 5.0, 5.0, 0.0])  # a tie in the last segment, a zero
SEG_L = [3, 1, 0, 3]
SEG_X2 = R.standard_normal((3, 5, 2))
SEG_L2 = [[2, 0, 3], [5, 0, 0], [1, 1, 3]]
SEG_CASES = [
    (f"{red}_{'init' if init is not None else 'noinit'}_{mode}", red, init, mode)
    for red in ("sum", "mean", "max", "min", "prod", "amax", "amin")
    for init in (None, 2.0)
    for mode in ("lengths", "offsets")
]


def _seg_index(T, lengths, mode):
    ls = np.asarray(lengths)
    if mode == "lengths":
        return {"lengths": T.tensor(ls)}
    zeros = np.zeros(ls.shape[:-1] + (1,), dtype=ls.dtype)
    return {"offsets": T.tensor(np.concatenate([zeros, ls], -1).cumsum(-1))}


@pytest.mark.parametrize("name, red, init, mode", SEG_CASES, ids=[c[0] for c in SEG_CASES])
def test_segment_reduce_agrees_with_torch(name, red, init, mode):
    """Values and gradients (PyTorch has no double backward here): ties (max/min divide only a
    positive gradient among them), zeros in prod, empty segments, initial, axis 1 with per-row
    lengths."""
    agree(
        lambda T, a: T._segment_reduce(a, red, initial=init, **_seg_index(T, SEG_L, mode)), [SEG_X], order=1
    )
    agree(
        lambda T, a: T._segment_reduce(a, red, axis=1, initial=init, **_seg_index(T, SEG_L2, mode)),
        [SEG_X2],
        order=1,
    )


def test_segment_reduce_unsafe_nan_and_float32():
    import reference

    cases = [
        lambda T: T._segment_reduce(
            T.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), "sum", lengths=T.tensor([1, 1]), unsafe=True
        ),
        lambda T: T._segment_reduce(T.tensor([1.0, float("nan"), 2.0, 0.5]), "max", lengths=T.tensor([2, 2])),
        lambda T: T._segment_reduce(
            T.tensor([1.0, float("nan"), 2.0, 0.5]), "min", lengths=T.tensor([2, 2]), initial=float("nan")
        ),
        lambda T: T._segment_reduce(T.tensor([1.0, 2.0]), "mean", lengths=T.tensor([0, 2, 0]), initial=1),
        lambda T: T._segment_reduce(
            T.tensor([1.0, 2.0]), "sum", lengths=T.tensor([2, 0], dtype=T.int32), offsets=T.tensor([0, 1, 2])
        ),
    ]
    for prog in cases:
        a, b = prog(reference).numpy(), prog(torch).numpy()
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True)


def test_segment_reduce_nan_gradient_as_torch():
    x = np.array([1.0, np.nan, 2.0, 0.0, np.nan, 3.0])
    for red in ("max", "min", "prod", "mean"):
        agree(
            lambda T, a, red=red: T._segment_reduce(a, red, lengths=T.tensor([3, 3])), [x], order=1, label=red
        )


def test_segment_reduce_double_backward_departs_from_torch():
    """PyTorch declares no derivative for _segment_reduce_backward; the reference's VJP is written
    in differentiable ops, so a second derivative exists (gradgradcheck in test_gradcheck)."""
    import reference

    with pytest.raises(
        RuntimeError, match="derivative for aten::_segment_reduce_backward is not implemented"
    ):
        x = torch.tensor(SEG_X, requires_grad=True)
        (g,) = torch.autograd.grad(
            (torch._segment_reduce(x, "prod", lengths=torch.tensor(SEG_L)) ** 2).sum(), x, create_graph=True
        )
        torch.autograd.grad(g.sum(), x)
    x = reference.tensor(SEG_X, requires_grad=True)
    y = reference._segment_reduce(x, "prod", lengths=reference.tensor(SEG_L))
    (g,) = reference.autograd.grad((y**2).sum(), x, create_graph=True)
    assert g.grad_fn is not None
    assert y.grad_fn.name() == "SegmentReduceBackward0"


SEG_ERRORS = [
    ("bad_reduce", lambda T: T._segment_reduce(T.zeros(5), "foo", lengths=T.tensor([2, 3]))),
    ("no_index", lambda T: T._segment_reduce(T.zeros(5), "sum")),
    ("indices", lambda T: T._segment_reduce(T.zeros(5), "sum", lengths=T.tensor([5]), indices=T.tensor([5]))),
    ("axis_range", lambda T: T._segment_reduce(T.zeros(5, 3), "sum", lengths=T.tensor([5]), axis=2)),
    (
        "axis_not_last_of_lengths",
        lambda T: T._segment_reduce(T.zeros(5, 3), "sum", lengths=T.tensor([2, 3]), axis=1),
    ),
    (
        "axis_not_last_of_offsets",
        lambda T: T._segment_reduce(T.zeros(5, 3), "sum", offsets=T.tensor([0, 5]), axis=1),
    ),
    ("lengths_sum", lambda T: T._segment_reduce(T.zeros(5), "sum", lengths=T.tensor([2, 2]))),
    ("negative_length", lambda T: T._segment_reduce(T.zeros(5), "sum", lengths=T.tensor([6, -1]))),
    ("float_lengths", lambda T: T._segment_reduce(T.zeros(5), "sum", lengths=T.tensor([2.0, 3.0]))),
    ("float_offsets", lambda T: T._segment_reduce(T.zeros(5), "sum", offsets=T.tensor([0.0, 5.0]))),
    ("int_data", lambda T: T._segment_reduce(T.zeros(5, dtype=T.int64), "sum", lengths=T.tensor([2, 3]))),
    ("empty_lengths", lambda T: T._segment_reduce(T.zeros(5), "sum", lengths=T.zeros(0, dtype=T.int64))),
]


@pytest.mark.parametrize("name, prog", SEG_ERRORS, ids=[c[0] for c in SEG_ERRORS])
def test_segment_reduce_errors_agree(name, prog):
    same_error(lambda T: prog(T))


# ---- complex128 input (issue 13): values, dtypes, first- and second-order gradients with complex
# cotangents, JVPs against torch.func.jvp, and the reference's gradcheck/gradgradcheck ----------------

_CRNG = np.random.default_rng(13)


def _cz(*shape):
    return _CRNG.standard_normal(shape) + 1j * _CRNG.standard_normal(shape)


_MASK = np.array([[True, False, True, True], [False, False, False, True], [True, True, True, True]])


def test_complex_masked_logsumexp_agrees_with_torch():
    def prog(F, z):
        return F.masked.logsumexp(z, 1, mask=F.tensor(_MASK))

    complex_agree(prog, [_cz(3, 4)], label="masked.logsumexp")
    complex_agree(lambda F, z: F.masked.logsumexp(z), [_cz(3, 4)], label="masked.logsumexp all")
