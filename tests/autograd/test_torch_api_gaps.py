"""Agreement with PyTorch on small API gaps found in review: ``Tensor.chalf`` (refused: the
reference has no complex32), top-level comparison / logical / predicate functions PyTorch exports
(``T.isnan``, ``T.logical_xor``, ...), PyTorch's error for non-broadcastable shapes in ``where`` and
the comparison ops, and ``permute``'s errors. Every case runs the same program text on ``torch``
and on ``reference``."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from reference.ops.functions._low_precision import DtypeNotSupported

torch = pytest.importorskip("torch")


def test_chalf_refused_with_the_dtype_and_the_reason():
    """torch's x.chalf() is complex32 (ComplexHalf); NumPy has no such dtype, so the reference
    refuses with a typed error (a TypeError) naming the dtype and the reason."""
    t = torch.tensor([1.0, -2.0], dtype=torch.float64).chalf()
    assert t.dtype == torch.complex32  # what torch gives
    x = T.tensor([1.0, -2.0], dtype=T.float64, requires_grad=True)
    with pytest.raises(DtypeNotSupported) as info:
        x.chalf()
    assert isinstance(info.value, TypeError)
    assert info.value.dtype == "complex32"
    assert "complex32" in str(info.value) and "NumPy" in str(info.value)
    with pytest.raises(DtypeNotSupported):
        x.chalf(memory_format=T.preserve_format)


# ---- helpers: the same program on torch and on reference -------------------------------------------------

NAN, INF = float("nan"), float("inf")
FLOATS = [0.0, -0.0, 1.5, -2.0, NAN, -NAN, INF, -INF, 1e-310, -1e-310]


def _tensor(M, values, dtype):
    return M.tensor(values, dtype=getattr(M, dtype))


def _np(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x.detach().numpy())


def _outcome(M, fn):
    try:
        return "ok", fn(M)
    except Exception as e:  # noqa: BLE001 - compared by type and message
        return type(e).__name__, str(e).split("\n")[0]


def _same(fn):
    """fn(M) on both; equal results (values, dtype, shape) or the same error type and message."""
    (kt, t), (kr, r) = _outcome(torch, fn), _outcome(T, fn)
    assert kt == kr, (t, r)
    if kt != "ok":
        assert t == r
        return
    if isinstance(t, bool):
        assert r is t
        return
    assert str(t.dtype).removeprefix("torch.") == str(r.dtype), (t.dtype, r.dtype)
    np.testing.assert_array_equal(_np(r), _np(t))


# ---- predicates and logical_xor -----------------------------------------------------------------------

PREDICATES = ["isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit"]


@pytest.mark.parametrize("name", PREDICATES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_predicates_on_floats(name, dtype):
    # torch.tensor(-nan, dtype=bfloat16) stores PyTorch's canonical +nan (0x7FC0) while
    # tensor(-nan).to(bfloat16) keeps the sign (0xFFFF); the reference keeps it in both: the
    # negative nan is left out in bfloat16 (a construction difference, not signbit's)
    values = [v for i, v in enumerate(FLOATS) if not (dtype == "bfloat16" and i == 5)]
    _same(lambda M: getattr(M, name)(_tensor(M, values, dtype)))
    _same(lambda M: getattr(_tensor(M, values, dtype), name)())  # the Tensor method


@pytest.mark.parametrize("name", PREDICATES)
@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8", "bool"])
def test_predicates_on_integers_and_bools(name, dtype):
    values = [0, 1, 1, 0] if dtype == "bool" else [0, 3, 7, 1] if dtype == "uint8" else [0, -3, 7, -1]
    _same(lambda M: getattr(M, name)(_tensor(M, values, dtype)))


@pytest.mark.parametrize("name", PREDICATES)
def test_predicates_on_complex(name):
    """isposinf / isneginf / signbit refuse complex (PyTorch's messages); the others read both parts."""
    values = [1 + 0j, complex(NAN, 0), complex(0, INF), complex(-INF, 1), 2j]
    _same(lambda M: getattr(M, name)(_tensor(M, values, "complex128")))


def test_predicates_shapes_layouts_and_errors():
    x = np.array([[1.0, NAN, -INF], [-0.0, 2.0, INF]])
    _same(lambda M: M.isnan(M.tensor(x).t()))  # a transposed input
    _same(lambda M: M.isinf(M.tensor(x)[:, ::2]))  # a strided view
    _same(lambda M: M.isfinite(M.zeros(0, 3)))  # empty
    _same(lambda M: M.signbit(M.tensor(-0.0)))  # 0-d
    _same(lambda M: M.isnan(1.0))  # a number is refused
    r = T.isnan(T.tensor([1.0, NAN], requires_grad=True))
    assert not r.requires_grad and r.grad_fn is None


@pytest.mark.parametrize(
    "a, b",
    [
        ([1.0, 0.0, -0.0, NAN], [0.0, 0.0, 3.0, NAN]),  # nan is true
        ([2, 0, 0, -1], [0.5, 0.0, 1.0, -0.0]),  # int with float
        ([True, False, True, False], [1, 1, 0, 0]),
    ],
)
def test_logical_xor(a, b):
    _same(lambda M: M.logical_xor(M.tensor(a), M.tensor(b)))
    _same(lambda M: M.tensor(a).logical_xor(M.tensor(b)))
    _same(lambda M: M.logical_xor(M.tensor(a).reshape(4, 1), M.tensor(b)))  # broadcasting
    _same(lambda M: M.logical_xor(M.tensor(a), 1))  # a number is refused (PyTorch's binding)


# ---- comparison aliases, isclose / allclose / equal, negative / absolute ----------------------------------


@pytest.mark.parametrize("name", ["greater", "greater_equal", "less", "less_equal", "not_equal"])
def test_comparison_aliases(name):
    a, b = [1.0, 2.0, NAN, -INF, 0.0], [1.0, 3.0, NAN, -INF, -0.0]
    _same(lambda M: getattr(M, name)(M.tensor(a), M.tensor(b)))
    _same(lambda M: getattr(M.tensor(a), name)(M.tensor(b)))
    _same(lambda M: getattr(M, name)(M.tensor(a), 1.5))  # a number
    _same(lambda M: getattr(M, name)(M.tensor([1, 2, 3]), M.tensor([1.5, 2.0, 2.5])))  # promotion
    _same(lambda M: getattr(M, name)(M.zeros(2, 3), M.zeros(4)))  # PyTorch's shape error


ISCLOSE = [
    dict(),
    dict(rtol=0.0, atol=0.0),
    dict(rtol=0.1, atol=0.0),
    dict(equal_nan=True),
    dict(rtol=-1.0),
    dict(atol=-1.0),
]


@pytest.mark.parametrize("kw", ISCLOSE, ids=[str(k) for k in ISCLOSE])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
def test_isclose_and_allclose(kw, dtype):
    if dtype == "bool":
        a, b = [True, False, True], [True, True, False]
    elif dtype == "int64":
        a, b = [1, 100000, -5], [1, 100001, 5]
    else:
        a = [1.0, 1.0, NAN, INF, -INF, 1e8, 0.0, 2.0]
        b = [1.0 + 1e-9, 1.05, NAN, INF, INF, 1e8 + 1.0, 1e-9, 2.3]
    _same(lambda M: M.isclose(_tensor(M, a, dtype), _tensor(M, b, dtype), **kw))
    _same(lambda M: _tensor(M, a, dtype).isclose(_tensor(M, b, dtype), **kw))
    _same(lambda M: M.allclose(_tensor(M, a, dtype), _tensor(M, b, dtype), **kw))
    _same(lambda M: M.allclose(_tensor(M, a, dtype), _tensor(M, a, dtype), **kw))


def test_isclose_errors_and_broadcasting():
    _same(lambda M: M.isclose(M.tensor([1.0, 2.0]), M.tensor([1, 2])))  # dtypes must match
    _same(lambda M: M.allclose(M.tensor([1.0]), M.tensor([1.0], dtype=M.float64)))
    _same(lambda M: M.isclose(M.tensor([1.0, 2.0]), M.tensor([1.0, 2.0, 3.0])))  # shape error
    _same(lambda M: M.isclose(M.tensor([[1.0], [2.0]]), M.tensor([1.0, 2.0, 2.00000001])))
    _same(
        lambda M: M.isclose(
            M.tensor([1 + 1j, complex(NAN, 0)]), M.tensor([1 + 1j, complex(NAN, 0)]), equal_nan=True
        )
    )


def test_equal():
    _same(lambda M: M.equal(M.tensor([1.0, 2.0]), M.tensor([1.0, 2.0])))
    _same(lambda M: M.equal(M.tensor([1.0, 2.0]), M.tensor([1, 2])))  # promoted values
    _same(lambda M: M.equal(M.tensor([1.0, 2.0]), M.tensor([1.0, 2.0, 3.0])))  # shapes differ
    _same(lambda M: M.equal(M.tensor([1.0, 2.0]), M.tensor([[1.0, 2.0]])))  # no broadcasting
    _same(lambda M: M.equal(M.tensor([NAN]), M.tensor([NAN])))
    _same(lambda M: M.tensor([1.0]).equal(M.tensor([1.0])))
    _same(lambda M: M.equal(M.tensor([1.0, 2.0]), 1.0))  # a number is refused


@pytest.mark.parametrize("name, node", [("negative", "NegBackward0"), ("absolute", "AbsBackward0")])
def test_negative_absolute_aliases_with_gradients(name, node):
    values = np.array([1.5, -2.0, 0.0, -0.0])
    out = {}
    for M in (torch, T):
        x = M.tensor(values, requires_grad=True)
        y = getattr(M, name)(x)
        z = getattr(x, name)()
        (g,) = M.autograd.grad((y * y * 0.5 + z).sum(), x)
        out[M] = (_np(y), _np(z), _np(g), y.grad_fn.name() if M is T else type(y.grad_fn).__name__)
    for r, t in zip(out[T], out[torch]):
        if isinstance(r, str):
            assert r == t == node
        else:
            np.testing.assert_array_equal(r, t)


# ---- PyTorch's broadcasting error in where / comparisons / logical ops -------------------------------------

SHAPE_ERRORS = {
    "eq": lambda M: M.eq(M.zeros(2, 3), M.zeros(4)),
    "lt_operator": lambda M: M.zeros(2, 3) < M.zeros(4),
    "ge_2d": lambda M: M.ge(M.zeros(2, 3), M.zeros(2, 4)),
    "ne_method": lambda M: M.zeros(3, 1, 2).ne(M.zeros(4, 3)),
    "logical_and": lambda M: M.logical_and(M.zeros(2, 3), M.zeros(4)),
    "logical_or": lambda M: M.logical_or(M.zeros(2, 3), M.zeros(4)),
    "where_input": lambda M: M.where(M.zeros(2, 3) > 0, M.zeros(4), M.zeros(2, 3)),
    "where_condition": lambda M: M.where(M.zeros(5) > 0, M.zeros(2, 3), M.zeros(2, 3)),
    "where_other": lambda M: M.where(M.zeros(2, 1) > 0, M.zeros(1, 3), M.zeros(4, 1, 2)),
    "where_method": lambda M: M.zeros(2, 3).where(M.zeros(3) > 0, M.zeros(2, 2)),
    "where_ok": lambda M: M.where(M.zeros(2, 1) > 0, M.zeros(1, 3), M.zeros(4, 1, 1)),
    "where_number": lambda M: M.where(M.zeros(2, 1) > 0, 1.0, M.zeros(4)),
}


@pytest.mark.parametrize("name", sorted(SHAPE_ERRORS))
def test_broadcast_errors_are_pytorchs(name):
    _same(SHAPE_ERRORS[name])


# ---- permute's errors ---------------------------------------------------------------------------------------

PERMUTE = {
    "too_few": lambda M: M.zeros(2, 3, 4).permute(0, 1),
    "too_many": lambda M: M.zeros(2, 3).permute(0, 1, 2),
    "repeated": lambda M: M.zeros(2, 3, 4).permute(0, 1, 1),
    "repeated_before_out_of_range": lambda M: M.zeros(2, 3, 4).permute(0, 0, 5),
    "out_of_range_before_repeated": lambda M: M.zeros(2, 3, 4).permute(0, 5, 0),
    "out_of_range": lambda M: M.zeros(2, 3).permute(0, 2),
    "negative_out_of_range": lambda M: M.zeros(2, 3).permute(-1, -3),
    "repeated_through_negative": lambda M: M.permute(M.zeros(2, 3), (1, -1)),
    "function_tuple": lambda M: M.permute(M.zeros(2, 3), (1, 1)),
    "scalar_with_a_dim": lambda M: M.zeros(()).permute(0),
    "scalar": lambda M: M.zeros(()).permute(()),
    "list": lambda M: M.arange(6.0).reshape(2, 3).permute([1, 0]),
    "negative": lambda M: M.arange(24.0).reshape(2, 3, 4).permute(-1, 0, 1),
}


@pytest.mark.parametrize("name", sorted(PERMUTE))
def test_permute_errors_are_pytorchs(name):
    _same(PERMUTE[name])


def test_predicates_under_vmap():
    x = [[1.0, NAN, 3.0], [INF, 2.0, -0.0]]
    _same(lambda M: M.func.vmap(M.isnan)(M.tensor(x)))
    _same(lambda M: M.func.vmap(M.signbit)(M.tensor(x)))
    _same(lambda M: M.func.vmap(lambda u: M.logical_xor(u, M.tensor([1.0, 0.0, 3.0])))(M.tensor(x)))
    _same(lambda M: M.func.vmap(lambda u: M.isclose(u, M.tensor([1.0, 2.0, 0.0])))(M.tensor(x)))


# ---- top-level functions the reference had only as Tensor methods ------------------------------------------

TOPLEVEL = {
    "abs_": lambda M, x: M.abs_(x),
    "neg_": lambda M, x: M.neg_(x),
    "exp_": lambda M, x: M.exp_(x),
    "log_": lambda M, x: M.log_(M.abs_(x)),
    "sqrt_": lambda M, x: M.sqrt_(M.abs_(x)),
    "tanh_": lambda M, x: M.tanh_(x),
    "sigmoid_": lambda M, x: M.sigmoid_(x),
    "relu_": lambda M, x: M.relu_(x),
    "clamp_": lambda M, x: M.clamp_(x, min=-0.5, max=1.0),
    "fill_": lambda M, x: M.fill_(x, 2.5),
    "ldexp_": lambda M, x: M.ldexp_(x, M.tensor([1.0, 2.0, -1.0])),
    "conj_physical_": lambda M, x: M.conj_physical_(x),
    "addmv_": lambda M, x: M.addmv_(x, M.eye(3, dtype=M.float64), M.tensor([1.0, 2.0, 3.0], dtype=M.float64)),
    "detach_": lambda M, x: M.detach_(x),
    "as_strided_": lambda M, x: M.as_strided_(x, (2,), (1,)),
    "index_put_": lambda M, x: M.index_put_(x, (M.tensor([0, 2]),), M.tensor([7.0, 8.0], dtype=M.float64)),
}


@pytest.mark.parametrize("name", sorted(TOPLEVEL))
def test_toplevel_inplace_functions(name):
    """torch.abs_(x) and friends: in place on x, returning x itself."""
    out = {}
    for M in (torch, T):
        x = M.tensor([0.5, -2.0, 1.5], dtype=M.float64)
        y = TOPLEVEL[name](M, x)
        assert y is x
        out[M] = _np(x)
    np.testing.assert_allclose(out[T], out[torch], rtol=1e-15)


def test_toplevel_detach_and_numel():
    for M in (torch, T):
        x = M.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        d = M.detach(x)
        assert not d.requires_grad and M.numel(x) == 3
        with pytest.raises(TypeError, match="must be Tensor"):
            M.abs_(1.0)
