"""torch.linalg.matrix_rank against torch 2.13: values (atol / rtol / hermitian, the deprecated
``tol`` overload, tensor tolerances broadcasting over the batch, empty inputs), the int64 result
without gradient, ``out=``, and errors (type and message), including the overload-resolution
TypeErrors of PyTorch's argument parser."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

_rng = np.random.default_rng(7)


def _lowrank(*batch, m=4, n=5, r=2):
    return _rng.standard_normal((*batch, m, r)) @ _rng.standard_normal((*batch, r, n))


_A = _lowrank(2)
_H = _A @ np.swapaxes(_A, -1, -2)
_SQ = np.eye(3)


def _t(x, dtype="float64"):
    return ("t", np.asarray(x), dtype)


CASES = {
    "default": ((_t(_A),), {}),
    "hermitian": ((_t(_H),), {"hermitian": True}),
    "hermitian_reads_one_triangle": ((_t(_A[0, :3, :3]),), {"hermitian": True}),
    "tol_positional": ((_t(_A), 0.5), {}),
    "tol_keyword": ((_t(_A),), {"tol": 0.5}),
    "tol_int": ((_t(_A), 1), {}),
    "tol_tensor_batch": ((_t(_A), _t([0.1, 100.0])), {}),
    "tol_hermitian_positional": ((_t(_H), 1.0, True), {}),
    "atol": ((_t(_A),), {"atol": 1.0}),
    "rtol": ((_t(_A),), {"rtol": 0.5}),
    "rtol_negative": ((_t(_A),), {"rtol": -1.0}),
    "atol_rtol": ((_t(_A),), {"atol": 1.0, "rtol": 0.5}),
    "atol_zero": ((_t(_A),), {"atol": 0.0}),
    "atol_tensor_broadcast": ((_t(_A),), {"atol": _t([[0.1], [100.0]])}),
    "atol_tensor_wider_than_batch": ((_t(_SQ),), {"atol": _t([1.0, 2.0, 0.5])}),
    "atol_int_tensor": ((_t(_A),), {"atol": _t(1, "int64")}),
    "atol_float32_tensor": ((_t(_A),), {"atol": _t(1.0, "float32")}),
    "rtol_tensor_atol_float": ((_t(_SQ),), {"rtol": _t(0.5), "atol": 2.0}),
    "rtol_tensor_broadcast": ((_t(_A),), {"rtol": _t([0.0, 0.9])}),
    "float32": ((_t(_A, "float32"),), {}),
    "empty_rows": ((_t(np.zeros((3, 0, 4))),), {}),
    "empty_matrix": ((_t(np.zeros((2, 0))),), {}),
    "zero_batch": ((_t(np.zeros((0, 3, 3))),), {}),
    "wide_eye": ((_t(np.eye(3)[:2]),), {}),
    # errors
    "one_dim": ((_t(np.ones(3)),), {}),
    "one_dim_int": ((_t(np.ones(3, dtype=np.int64), "int64"),), {}),
    "int_default_rtol": ((_t(_SQ, "int64"),), {}),
    "int_atol": ((_t(_SQ, "int64"),), {"atol": 0.1}),
    "int_rtol": ((_t(_SQ, "int64"),), {"rtol": 0.1}),
    "int_tol": ((_t(_SQ, "int64"), 0.5), {}),
    "int_tol_hermitian": ((_t(_SQ, "int64"), 0.5, True), {}),
    "half_default": ((_t(_SQ, "float16"),), {}),
    "half_tol": ((_t(_SQ, "float16"), 0.5), {}),
    "half_tol_hermitian": ((_t(_SQ, "float16"), 0.5, True), {}),
    "bfloat16_rtol": ((_t(_SQ, "bfloat16"),), {"rtol": 0.5}),
    "complex_atol": ((_t(_SQ),), {"atol": _t([1j], "complex64")}),
    "complex_rtol": ((_t(_SQ),), {"rtol": _t(1j, "complex64")}),
    "complex_tol": ((_t(_SQ), _t([1j], "complex64"), True), {}),
    "atol_shape_mismatch": ((_t(np.ones((4, 2, 3))),), {"atol": _t(np.ones(3))}),
    "nan": ((_t(np.full((2, 2), np.nan)),), {}),
    "tol_and_atol": ((_t(_A), 0.5), {"atol": 1.0}),
    "tol_kw_and_atol": ((_t(_A),), {"tol": 0.5, "atol": 1.0}),
    "tol_and_rtol_none": ((_t(_A),), {"tol": 0.5, "hermitian": False, "rtol": None}),
    "tol_none": ((_t(_A), None), {}),
    "tol_kw_none": ((_t(_A),), {"tol": None}),
    "hermitian_int": ((_t(_A),), {"hermitian": 1}),
    "input_named_A": ((), {"A": _t(_A)}),
}


def _to_torch(x):
    if isinstance(x, tuple) and x and x[0] == "t":
        return torch.tensor(x[1]).to(getattr(torch, x[2]))
    return x


def _to_ref(x):
    if isinstance(x, tuple) and x and x[0] == "t":
        return T.tensor(x[1]).to(getattr(T, x[2]))
    return x


def _call(lib, conv, args, kwargs):
    try:
        return lib.linalg.matrix_rank(
            *[conv(a) for a in args], **{k: conv(v) for k, v in kwargs.items()}
        ), None
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return None, e


@pytest.mark.parametrize("name", list(CASES))
def test_matrix_rank_matches_torch(name):
    args, kwargs = CASES[name]
    t, te = _call(torch, _to_torch, args, kwargs)
    r, re_ = _call(T, _to_ref, args, kwargs)
    if te is not None:
        assert re_ is not None, f"torch raises {type(te).__name__}: {te}; reference returns {r}"
        assert type(re_).__name__ == type(te).__name__ and str(re_) == str(te)
        return
    assert re_ is None, f"reference raises {type(re_).__name__}: {re_}"
    assert str(r.dtype) == "int64" and not r.requires_grad and r.grad_fn is None
    np.testing.assert_array_equal(r.numpy(), t.numpy())


def test_matrix_rank_of_a_grad_requiring_input_has_no_gradient():
    a = T.tensor(_A, requires_grad=True)
    r = T.linalg.matrix_rank(a)
    assert r.grad_fn is None and not r.requires_grad
    np.testing.assert_array_equal(r.numpy(), [2, 2])


def test_matrix_rank_out_is_rejected_not_ignored():
    with pytest.raises(TypeError, match="out= is not supported by the reference"):
        T.linalg.matrix_rank(T.tensor(_A), out=T.empty(0, dtype=T.int64))
