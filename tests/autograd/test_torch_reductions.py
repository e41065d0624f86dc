"""Reductions, scans and sorting against PyTorch: values, first and second-order gradients and
errors, on edge cases (ties, zeros in prod/cumprod, NaN, empty dims, keepdim, negative dims,
integer inputs)."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from tests.autograd._complex_agree import complex_agree
from tests.autograd._torch_agree import agree, same_error

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

R = np.random.default_rng(7)
X = R.standard_normal((3, 4))
X3 = R.standard_normal((2, 3, 4))
TIES = np.array([[1.0, 3.0, 3.0, 0.0, 3.0], [2.0, 2.0, 1.0, 1.0, 2.0], [5.0, 5.0, 5.0, 5.0, 5.0]])
ZEROS = np.array([[0.0, 2.0, 3.0, 1.5], [0.0, 0.0, 2.0, -1.0], [1.0, -2.0, 0.5, 3.0]])

CASES = [
    ("sum_dtype", lambda T, a: T.sum(a, dtype=T.float32).double() * a, [np.arange(12.0).reshape(3, 4) / 4]),
    ("sum_neg_dims", lambda T, a: a.sum((-1, 0), keepdim=True) * a, [X3]),
    ("mean_dtype", lambda T, a: a.mean(1, dtype=T.float64), [X]),
    ("nansum", lambda T, a: T.nansum(a.masked_fill(a > 1, float("nan")), 1), [X]),
    ("nanmean", lambda T, a: T.nanmean(a.masked_fill(a > 1, float("nan")), 0, keepdim=True), [X]),
    ("prod_all", lambda T, a: a.prod(), [X]),
    ("prod_one_zero", lambda T, a: (a * T.tensor([1.0, 0.0, 1.0, 1.0], dtype=T.float64)).prod(), [X[0]]),
    ("prod_two_zeros", lambda T, a: a.prod(), [np.array([0.0, 0.0, 2.0])]),
    ("prod_dim_zeros", lambda T, a: a.prod(1), [ZEROS]),
    ("prod_dim_keepdim_neg", lambda T, a: a.prod(-2, keepdim=True), [ZEROS]),
    ("prod_empty", lambda T, a: a[:, :0].prod(1) + a.sum(1), [X]),
    ("var_all", lambda T, a: a.var(), [X]),
    ("var_correction", lambda T, a: T.var(a, (0, 2), correction=0, keepdim=True), [X3]),
    ("var_unbiased_false", lambda T, a: a.var(1, unbiased=False), [X]),
    ("std_dim", lambda T, a: a.std(-1, correction=2), [X]),
    ("std_zero", lambda T, a: (a * 0.0).std(1) + a.sum(), [X]),
    ("var_mean", lambda T, a: T.var_mean(a, 1), [X]),
    ("std_mean", lambda T, a: T.std_mean(a, (0, 1), keepdim=True), [X3]),
    ("logsumexp", lambda T, a: a.logsumexp(1), [X]),
    ("logsumexp_dims", lambda T, a: T.logsumexp(a, (0, -1), keepdim=True), [X3]),
    ("logsumexp_inf", lambda T, a: T.logsumexp(a.masked_fill(a > 0.5, float("-inf")), 1), [X]),
    ("max_all_ties", lambda T, a: a.max(), [TIES]),
    ("min_all_ties", lambda T, a: a.min(), [TIES]),
    ("max_dim_ties", lambda T, a: a.max(1), [TIES]),
    ("min_dim_ties_keepdim", lambda T, a: a.min(-1, keepdim=True), [TIES]),
    ("max_binary", lambda T, a: T.max(a, a * 0.5), [X]),
    ("amax_ties", lambda T, a: a.amax(1), [TIES]),
    ("argmax", lambda T, a: (T.argmax(a, 1), a.argmax(), a.argmin(0, keepdim=True)), [TIES]),
    ("aminmax_ties", lambda T, a: T.aminmax(a), [TIES]),
    ("aminmax_dim", lambda T, a: T.aminmax(a, dim=1, keepdim=True), [TIES]),
    ("median_all", lambda T, a: a.median(), [X]),
    ("median_all_ties", lambda T, a: a.median(), [TIES]),
    ("median_dim", lambda T, a: a.median(1), [X]),
    ("median_even", lambda T, a: a.median(0), [X]),
    ("nanmedian", lambda T, a: (T.nanmedian(a.masked_fill(a > 0.8, float("nan")), 1), T.nanmedian(a)), [X]),
    ("kthvalue", lambda T, a: a.kthvalue(2, 1), [X]),
    ("kthvalue_keepdim", lambda T, a: T.kthvalue(a, 3, 0, keepdim=True), [X]),
    ("mode_ties", lambda T, a: a.mode(1), [TIES]),
    ("mode_smallest", lambda T, a: a.mode(0), [np.array([1.0, 2.0, 2.0, 3.0, 3.0, 1.0])]),
    ("sort", lambda T, a: a.sort(1), [X]),
    (
        "sort_ties_stable",
        lambda T, a: (a.sort(1), a.sort(1, descending=True), a.sort(stable=True, dim=0)),
        [TIES],
    ),
    ("argsort_msort", lambda T, a: (T.argsort(a, 1, descending=True), T.msort(a)), [TIES]),
    ("topk", lambda T, a: (a.topk(2, 1), a.topk(3, 0, largest=False)), [X]),
    ("cumsum", lambda T, a: a.cumsum(1), [X]),
    ("cumsum_neg", lambda T, a: T.cumsum(a, -2), [X3]),
    ("cumprod", lambda T, a: a.cumprod(1), [X]),
    ("cumprod_zeros", lambda T, a: a.cumprod(1), [ZEROS]),
    ("cumprod_zeros_dim0", lambda T, a: a.cumprod(0), [ZEROS]),
    ("cummax_ties", lambda T, a: a.cummax(1), [TIES]),
    ("cummin_ties", lambda T, a: T.cummin(a, 1), [TIES]),
    ("logcumsumexp", lambda T, a: a.logcumsumexp(1), [X]),
    ("vector_norm_2", lambda T, a: T.linalg.vector_norm(a), [X]),
    ("norm_fro_dim", lambda T, a: a.norm(dim=1, keepdim=True), [X]),
    ("norm_1", lambda T, a: T.norm(a, 1), [X]),
    ("norm_3", lambda T, a: T.linalg.vector_norm(a, 3, dim=(0, 1)), [X3]),
    ("norm_frac", lambda T, a: T.linalg.vector_norm(a, 0.5, dim=0), [X]),
    ("norm_neg", lambda T, a: T.linalg.vector_norm(a, -1.5, dim=1), [X]),
    ("norm_inf", lambda T, a: T.linalg.vector_norm(a, float("inf"), dim=1), [TIES]),
    ("norm_neginf", lambda T, a: T.linalg.vector_norm(a, float("-inf")), [TIES]),
    ("norm_0", lambda T, a: T.linalg.vector_norm(a, 0, dim=1), [ZEROS]),
]
AT_ZERO = [(o, d) for o in (2, 1, 3, 0.5, 1.5, -1, float("inf"), float("-inf"), 0) for d in (None, 1)]


@pytest.mark.parametrize("name, prog, arrays", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_torch(name, prog, arrays):
    agree(prog, arrays, label=name)


@pytest.mark.parametrize("ord, dim", AT_ZERO, ids=[f"ord{o}-dim{d}" for o, d in AT_ZERO])
def test_vector_norm_gradient_at_zero(ord, dim):
    x = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, -2.0]])
    agree(lambda T, a: T.linalg.vector_norm(a, ord, dim=dim), [x], order=1, label=f"ord={ord}")


INT_CASES = [
    ("sum_int", lambda T: T.tensor([1, 2, 3], dtype=T.int32).sum()),
    ("sum_bool", lambda T: T.tensor([True, False, True]).sum(0)),
    ("prod_int", lambda T: T.tensor([2, 3, 4]).prod()),
    ("cumsum_int", lambda T: T.tensor([2, 3, 4]).cumsum(0)),
    ("logsumexp_int", lambda T: T.tensor([1, 2]).logsumexp(0)),
    ("all_any", lambda T: (T.tensor([[1.0, 0.0], [2.0, 3.0]]).all(1), T.tensor([0.0, 0.0]).any())),
    ("count_nonzero", lambda T: (T.count_nonzero(T.tensor([[1.0, 0.0], [2.0, 3.0]]), 0),)),
    ("nan_max", lambda T: T.tensor([3.0, float("nan"), 1.0]).max(0)),
    ("nan_sort", lambda T: T.tensor([3.0, float("nan"), 1.0, float("nan")]).sort(descending=True)),
    ("nan_cummax", lambda T: T.tensor([3.0, 1.0, float("nan"), 2.0, float("nan")]).cummax(0)),
    ("empty_cummax", lambda T: T.zeros(0).cummax(0)),
    ("empty_prod_sum", lambda T: (T.zeros(0, 3).prod(0), T.zeros(0, 3).sum(0))),
]


@pytest.mark.parametrize("name, prog", INT_CASES, ids=[c[0] for c in INT_CASES])
def test_values_and_dtypes_agree(name, prog):
    import reference

    got, want = prog(reference), prog(torch)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for a, b in zip(got, want):
        a, b = a.numpy(), b.numpy()
        assert a.dtype == b.dtype, f"{name}: dtype {a.dtype} but PyTorch {b.dtype}"
        np.testing.assert_array_equal(a, b)


ERRORS = [
    ("max_empty", lambda T: T.zeros(0).max()),
    ("max_dim_empty", lambda T: T.zeros(0, 3).max(0)),
    ("argmax_empty", lambda T: T.zeros(0).argmax()),
    ("mode_empty", lambda T: T.zeros(0).mode()),
    ("kthvalue_range", lambda T: T.zeros(3, 4).kthvalue(5, 1)),
    ("topk_range", lambda T: T.zeros(3, 4).topk(5, 1)),
    ("std_int", lambda T: T.ones(3, dtype=T.int64).std()),
    ("norm_int", lambda T: T.ones(3, dtype=T.int64).norm()),
    ("norm_inf_empty", lambda T: T.linalg.vector_norm(T.zeros(0), float("inf"))),
    ("norm_neg_empty", lambda T: T.linalg.vector_norm(T.zeros(0), -1)),
    ("sum_bad_dim", lambda T: T.zeros(2, 3).sum(2)),
    ("cumsum_bad_dim", lambda T: T.zeros(2, 3).cumsum(-3)),
    ("var_both", lambda T: T.zeros(2, 3).var(1, unbiased=True, correction=1)),
]


@pytest.mark.parametrize("name, prog", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_agree(name, prog):
    same_error(lambda T: prog(T), match_message=name not in ("var_both",))


@pytest.mark.parametrize(
    "call",
    [
        lambda T, x: T.sort(x, -1, descending=True, stable=True),
        lambda T, x: T.sort(x, -1, True, stable=True),
    ],
)
def test_sort_with_stable_takes_every_other_argument_by_keyword_as_torch(call):
    """torch.sort has two overloads; with stable= a positional dim matches neither (TypeError)."""
    import reference as T

    with pytest.raises(TypeError) as theirs:
        call(torch, torch.tensor([3.0, 1.0]))
    with pytest.raises(TypeError) as ours:
        call(T, T.tensor([3.0, 1.0]))
    assert str(ours.value).splitlines()[0] == str(theirs.value).splitlines()[0]


@pytest.mark.parametrize(
    "shape, call",
    [
        ((0,), lambda x: x.amin(-1)),
        ((3, 0), lambda x: x.amax(1)),
        ((3, 0), lambda x: x.amax((0, 1))),
        ((0,), lambda x: x.amin()),
        ((3, 0), lambda x: x.amin(0)),
    ],
)
def test_amax_amin_over_empty_inputs_as_torch(shape, call):
    """No dim on an empty input is a RuntimeError; a reduced dim of size 0 an IndexError naming it as
    given; reducing only non-empty dims of an empty input is an empty result."""
    import reference as T

    try:
        expected = call(torch.zeros(shape))
    except (RuntimeError, IndexError) as exc:
        with pytest.raises(type(exc)) as ours:
            call(T.zeros(shape))
        assert str(ours.value) == str(exc)
    else:
        assert tuple(call(T.zeros(shape)).shape) == tuple(expected.shape)


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_extreme_jvp_differentiated_in_the_tangent_at_nan_as_torch(reduce):
    """Reverse over forward of amax/amin where a slice holds a NaN: no element equals the NaN result,
    so the count is 0 and the JVP nan; PyTorch's amaxamin_jvp selects the tangent (where(mask, t,
    0)), so its derivative in the tangent is 0 there, not 0 * (g / 0) = nan (seed-2 seeded
    reductions, amax vjp_jvp 'nonfinite')."""
    x = np.array([[1.0, np.nan, 2.0], [3.0, 0.5, 3.0]])
    t = np.array([[0.5, -1.0, 2.0], [1.0, 2.0, -3.0]])
    g = np.array([1.5, -2.0])

    def run(L):
        f = lambda xx, tt: L.func.jvp(lambda a: getattr(L, reduce)(a, 1), (xx,), (tt,))[1]  # noqa: E731
        value, back = L.func.vjp(f, *(L.tensor(a, dtype=L.float64) for a in (x, t)))
        return [np.asarray(v) for v in (value, *back(L.tensor(g, dtype=L.float64)))]

    for ours, theirs in zip(run(T), run(torch)):
        np.testing.assert_array_equal(ours, theirs)


# ---- complex128 input (issue 13): values, dtypes, first- and second-order gradients with complex
# cotangents, JVPs against torch.func.jvp, and the reference's gradcheck/gradgradcheck ----------------

_CRNG = np.random.default_rng(13)


def _cz(*shape):
    return _CRNG.standard_normal(shape) + 1j * _CRNG.standard_normal(shape)


COMPLEX = {
    "logsumexp": (lambda F, z: F.logsumexp(z, 1), [_cz(3, 4)]),
    "logsumexp_keepdim_dims": (lambda F, z: F.logsumexp(z, (0, 2), keepdim=True), [_cz(2, 3, 2)]),
    "logsumexp_0d": (lambda F, z: F.logsumexp(z, 0), [_cz()]),
    "logsumexp_large": (lambda F, z: F.logsumexp(z * 400.0, -1), [_cz(2, 3)]),
    "logcumsumexp": (lambda F, z: F.logcumsumexp(z, 1), [_cz(3, 4)]),
    "logcumsumexp_dim0": (lambda F, z: z.logcumsumexp(0) * z, [_cz(4, 2)]),
    "cumprod_inplace": (lambda F, z: (z * 1.0).cumprod_(1), [_cz(3, 4)]),
    "cumsum_inplace": (lambda F, z: (z * 1.0).cumsum_(0), [_cz(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_agrees_with_torch(name):
    prog, arrays = COMPLEX[name]
    complex_agree(prog, arrays, label=name)


def test_complex_logcumsumexp_special_values_agree():
    inf, nan = np.inf, np.nan
    vals = np.array(
        [
            complex(-inf, 0),
            complex(-inf, 1),
            complex(inf, 0),
            complex(inf, 2),
            complex(nan, 0),
            1 + 2j,
            -3 + 0.5j,
        ]
    )
    for v in (vals, vals[::-1].copy(), np.array([complex(-inf, 1), complex(-inf, 2), 1 + 0j])):
        want = torch.logcumsumexp(torch.tensor(v), 0).numpy()
        got = T.logcumsumexp(T.tensor(v), 0).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0, equal_nan=True)


def test_complex_logsumexp_dtype():
    z = _cz(2, 3)
    for dt in ("complex64", "complex128"):
        assert str(T.logsumexp(T.tensor(z, dtype=getattr(T, dt)), 1).dtype) == dt
        assert str(torch.logsumexp(torch.tensor(z, dtype=getattr(torch, dt)), 1).dtype) == "torch." + dt


EMPTY_SCANS = [
    (name, shape, dim)
    for name in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp")
    for shape, dim in (((0,), 0), ((2, 0), 1), ((2, 0, 3), -2), ((0, 3), 1))
]


def _scan(F, name, dim):
    def f(a):
        out = getattr(F, name)(a, dim)
        return out.values if name in ("cummax", "cummin") else out

    return f


@pytest.mark.parametrize("name, shape, dim", EMPTY_SCANS, ids=[f"{n}-{s}-{d}" for n, s, d in EMPTY_SCANS])
def test_scans_over_an_empty_input_agree_with_torch(name, shape, dim):
    """Every scan of an empty input (scanned dim empty or not) is an empty result whose gradient and
    gradient of gradient are empty, as PyTorch's."""
    agree(lambda F, a: _scan(F, name, dim)(a), [np.zeros(shape)], label=f"{name}{shape} dim {dim}")


@pytest.mark.parametrize("name, shape, dim", EMPTY_SCANS, ids=[f"{n}-{s}-{d}" for n, s, d in EMPTY_SCANS])
def test_scan_jvp_over_an_empty_input_is_empty(name, shape, dim):
    """The forward-mode derivative of a scan of an empty input is an empty tangent of the result's
    shape, as PyTorch's for every scan but logcumsumexp over an empty scanned dim, whose JVP formula's
    max over that dim raises IndexError (torch-logcumsumexp-jvp-empty-dim): the reference raised the
    same (an amax over the empty dim), so the harness's expected values crashed for JAX and TensorFlow,
    which return the empty tangent."""
    x = np.zeros(shape)
    got = T.func.jvp(_scan(T, name, dim), (T.tensor(x),), (T.tensor(x + 1.0),))[1]
    assert tuple(got.shape) == shape
    args = ((torch.tensor(x),), (torch.tensor(x + 1.0),))
    if name == "logcumsumexp" and shape[dim] == 0:
        with pytest.raises(IndexError, match="non-zero size"):
            torch.func.jvp(_scan(torch, name, dim), *args)
    else:
        assert tuple(torch.func.jvp(_scan(torch, name, dim), *args)[1].shape) == shape
