"""The solves and factorizations of torch.linalg against PyTorch: values, dtypes, grad_fn names,
first- and second-order gradients and errors (type and message), on the same program text
(``M``: torch or reference). Inputs are standard normal; each program makes its matrix well
conditioned (``+ 3 I``), symmetric positive-definite or triangular where the op needs it. Edge
cases: singular matrices (det's gradient, logdet), batches, broadcasting, empty batches, 0 x 0
matrices, vector right-hand sides, non-square and wrong-dtype input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import reference as T
from tests.autograd.test_torch_shape import compare, same_error


def _eye(M, a):
    return M.eye(a.shape[-1], dtype=a.dtype)


def _wc(M, a):
    return a + 3.0 * _eye(M, a)


def _spd(M, a):
    return M.matmul(a, a.mT) + 3.0 * _eye(M, a)


def _chol(M, a):
    return M.tril(a) + 3.0 * _eye(M, a)


CASES = {
    "inv": (lambda M, a: M.linalg.inv(_wc(M, a)), [(3, 3)]),
    "inv_batched": (lambda M, a: M.linalg.inv(_wc(M, a)), [(2, 3, 3)]),
    "inv_empty_batch": (lambda M, a: M.linalg.inv(a), [(0, 3, 3)]),
    "inv_0x0": (lambda M, a: M.linalg.inv(a), [(2, 0, 0)]),
    "inv_ex": (lambda M, a: M.linalg.inv_ex(_wc(M, a)), [(2, 3, 3)]),
    "inverse_method": (lambda M, a: _wc(M, a).inverse(), [(3, 3)]),
    "solve": (lambda M, a, b: M.linalg.solve(_wc(M, a), b), [(3, 3), (3, 2)]),
    "solve_vector": (lambda M, a, b: M.linalg.solve(_wc(M, a), b), [(3, 3), (3,)]),
    "solve_batched_vector": (lambda M, a, b: M.linalg.solve(_wc(M, a), b), [(2, 3, 3), (2, 3)]),
    "solve_broadcast": (lambda M, a, b: M.linalg.solve(_wc(M, a), b), [(2, 1, 3, 3), (4, 3, 2)]),
    "solve_vector_broadcast": (lambda M, a, b: M.linalg.solve(_wc(M, a), b), [(2, 3, 3), (3,)]),
    "solve_right": (lambda M, a, b: M.linalg.solve(_wc(M, a), b, left=False), [(2, 3, 3), (4, 3)]),
    "solve_ex": (lambda M, a, b: M.linalg.solve_ex(_wc(M, a), b), [(3, 3), (3, 1)]),
    "solve_empty": (lambda M, a, b: M.linalg.solve(a, b), [(0, 2, 2), (2, 3)]),
    "solve_0x0": (lambda M, a, b: M.linalg.solve(a, b), [(0, 0), (0, 2)]),
    "solve_triangular_upper": (
        lambda M, a, b: M.linalg.solve_triangular(_wc(M, a), b, upper=True),
        [(3, 3), (3, 2)],
    ),
    "solve_triangular_lower_right_unit": (
        lambda M, a, b: M.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
        [(2, 3, 3), (4, 3)],
    ),
    "solve_triangular_broadcast": (
        lambda M, a, b: M.linalg.solve_triangular(_wc(M, a), b, upper=False),
        [(3, 3), (2, 3, 1)],
    ),
    "det": (lambda M, a: M.linalg.det(a), [(3, 3)]),
    "det_batched_method": (lambda M, a: a.det(), [(2, 4, 4)]),
    "det_torch": (lambda M, a: M.det(a), [(2, 2)]),
    "det_0x0": (lambda M, a: M.linalg.det(a), [(2, 0, 0)]),
    "slogdet": (lambda M, a: M.linalg.slogdet(_wc(M, a)), [(2, 3, 3)]),
    "slogdet_negative": (lambda M, a: M.slogdet(-_wc(M, a)), [(3, 3)]),
    "logdet": (lambda M, a: M.logdet(_spd(M, a)), [(2, 3, 3)]),
    "logdet_negative_det_is_nan": (lambda M, a: (-_spd(M, a)).logdet(), [(3, 3)]),
    "cholesky": (lambda M, a: M.linalg.cholesky(_spd(M, a)), [(2, 3, 3)]),
    "cholesky_upper": (lambda M, a: M.linalg.cholesky(_spd(M, a), upper=True), [(3, 3)]),
    "cholesky_ex": (lambda M, a: M.linalg.cholesky_ex(_spd(M, a)), [(3, 3)]),
    "cholesky_lower_triangle_only": (lambda M, a: M.linalg.cholesky(M.tril(_spd(M, a))), [(3, 3)]),
    "cholesky_deprecated": (lambda M, a: M.cholesky(_spd(M, a)), [(3, 3)]),
    "cholesky_deprecated_upper_method": (lambda M, a: _spd(M, a).cholesky(upper=True), [(3, 3)]),
    "lu_factor": (lambda M, a: M.linalg.lu_factor(a), [(3, 3)]),
    "lu_factor_ex_batched": (lambda M, a: M.linalg.lu_factor_ex(a), [(2, 4, 4)]),
    "lu_factor_wide": (lambda M, a: M.linalg.lu_factor(a), [(2, 4)]),
    "lu_factor_tall": (lambda M, a: M.linalg.lu_factor(a), [(4, 2)]),
    "lu": (lambda M, a: M.linalg.lu(a), [(3, 3)]),
    "lu_wide_batched": (lambda M, a: M.linalg.lu(a), [(2, 2, 4)]),
    "lu_tall": (lambda M, a: M.linalg.lu(a), [(4, 3)]),
    "lu_solve": (lambda M, a, b: M.linalg.lu_solve(*M.linalg.lu_factor(_wc(M, a)), b), [(3, 3), (3, 2)]),
    "lu_solve_adjoint": (
        lambda M, a, b: M.linalg.lu_solve(*M.linalg.lu_factor(_wc(M, a)), b, adjoint=True),
        [(2, 3, 3), (2, 3, 2)],
    ),
    "lu_solve_right": (
        lambda M, a, b: M.linalg.lu_solve(*M.linalg.lu_factor(_wc(M, a)), b, left=False),
        [(3, 3), (2, 3)],
    ),
    "lu_solve_right_adjoint_broadcast": (
        lambda M, a, b: M.linalg.lu_solve(*M.linalg.lu_factor(_wc(M, a)), b, left=False, adjoint=True),
        [(3, 3), (2, 2, 3)],
    ),
    "cholesky_solve": (lambda M, b, a: M.cholesky_solve(b, _chol(M, a)), [(3, 2), (3, 3)]),
    "cholesky_solve_upper_broadcast": (
        lambda M, b, a: b.cholesky_solve(_chol(M, a).mT, upper=True),
        [(2, 3, 2), (3, 3)],
    ),
    "cholesky_inverse": (lambda M, a: M.cholesky_inverse(_chol(M, a)), [(3, 3)]),
    "cholesky_inverse_upper": (lambda M, a: _chol(M, a).mT.cholesky_inverse(upper=True), [(2, 3, 3)]),
    "matrix_power_neg": (lambda M, a: M.linalg.matrix_power(_wc(M, a), -3), [(3, 3)]),
    "matrix_power_5": (lambda M, a: M.linalg.matrix_power(a, 5), [(2, 3, 3)]),
    "matrix_power_2_method": (lambda M, a: a.matrix_power(2), [(3, 3)]),
    "matrix_power_1": (lambda M, a: M.matrix_power(a, 1), [(3, 3)]),
    "matrix_exp": (lambda M, a: M.linalg.matrix_exp(a), [(2, 3, 3)]),
    "matrix_exp_method": (lambda M, a: (a * 3).matrix_exp(), [(4, 4)]),
    "matrix_exp_0x0": (lambda M, a: M.matrix_exp(a), [(0, 0)]),
    "tensorsolve": (lambda M, a, b: M.linalg.tensorsolve(_wc(M, a).reshape(2, 3, 6), b), [(6, 6), (2, 3)]),
    "diagonal": (lambda M, a: M.linalg.diagonal(a, offset=-1), [(2, 3, 4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    fn, shapes = CASES[name]
    compare(fn, shapes)


def test_composites_against_torch():
    """matrix_power(0) and householder_product: values and gradients (node names differ where
    PyTorch has a primitive: LinalgHouseholderProductBackward0)."""
    compare(lambda M, a: M.linalg.matrix_power(a, 0), [(2, 3, 3)], nodes=False)
    compare(lambda M, a, t: M.linalg.householder_product(a, t), [(4, 3), (2,)], nodes=False)
    compare(lambda M, a, t: M.linalg.householder_product(a, t), [(2, 3, 3), (2, 3)], nodes=False)
    compare(lambda M, a, t: a.orgqr(t), [(3, 2), (2,)], nodes=False)
    # PyTorch's inverse is column-major, so its final reshape is a _reshape_alias, not a view
    compare(lambda M, a: M.linalg.tensorinv(_wc(M, a).reshape(2, 2, 4), ind=2), [(4, 4)], nodes=False)


# ---- singular matrices --------------------------------------------------------------------------------------

SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # rank 2; LU has a zero pivot


def _det_grads(M, a, create_graph):
    x = M.tensor(a, dtype=M.float64, requires_grad=True)
    (g,) = M.autograd.grad(M.linalg.det(x), x, create_graph=create_graph)
    return np.asarray(g.detach().numpy())


def _torch_sees_the_zero_pivot():
    """The comparisons at SINGULAR assume PyTorch's LU finds its exactly zero pivot, as the
    reference's (LAPACK dgetrf through SciPy) does. PyTorch's own LAPACK does not on every CPU: on
    an AVX-512 x86 machine with torch 2.13.0+cpu, torch.linalg.det(SINGULAR) is -6.66e-16, its
    gradient the cofactor matrix and its JVP -8 (machine-dependent rounding, not semantics)."""
    det = float(torch.linalg.det(torch.tensor(SINGULAR)))
    if det != 0.0:
        pytest.skip(
            f"PyTorch's LU on this CPU does not find the exact zero pivot of SINGULAR (det = {det!r}), "
            "so its answers at an exactly singular matrix are those of a nearby nonsingular one"
        )


def test_det_gradient_at_a_singular_matrix():
    """The reference at an exactly singular matrix: 0 without create_graph (PyTorch's g det A^{-T}
    with the zero pivot), the cofactor matrix (the true derivative) with it."""
    cof = _det_grads(T, SINGULAR, True)
    np.testing.assert_allclose(cof, [[4, 4, -4], [-2, -2, 2], [0, 0, 0]], atol=1e-12)
    np.testing.assert_array_equal(_det_grads(T, SINGULAR, False), np.zeros((3, 3)))


def test_det_gradient_at_a_singular_matrix_follows_pytorch():
    """PyTorch: 0 at an exactly singular matrix without create_graph (g det A^{-T} with perturbed
    pivots); with create_graph, the cofactor matrix (the true derivative; PyTorch takes it from
    the SVD, the reference from the minors' determinants)."""
    _torch_sees_the_zero_pivot()
    for create_graph in (False, True):
        want = _det_grads(torch, SINGULAR, create_graph)
        got = _det_grads(T, SINGULAR, create_graph)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_det_second_order_at_a_singular_matrix():
    compare(lambda M, a: M.linalg.det(a * 0 + M.tensor(SINGULAR) + a * 0), [(3, 3)])


def test_det_jvp_at_a_singular_matrix_is_zero_like_pytorch():
    t = np.arange(9.0).reshape(3, 3)
    _, got = T.func.jvp(T.linalg.det, (T.tensor(SINGULAR),), (T.tensor(t),))
    assert float(got._data) == 0.0
    _torch_sees_the_zero_pivot()
    _, want = torch.func.jvp(torch.linalg.det, (torch.tensor(SINGULAR),), (torch.tensor(t),))
    assert float(want) == 0.0


def test_singular_slogdet_and_logdet():
    _torch_sees_the_zero_pivot()
    compare(lambda M, a: M.linalg.slogdet(a * 0 + M.tensor(SINGULAR)), [(3, 3)], order=0)
    compare(lambda M, a: M.logdet(a * 0 + M.tensor(SINGULAR)), [(3, 3)], order=0)


def test_unchecked_singular_inverse_and_solve_follow_pytorch():
    """check_errors=False: info reports the zero pivot, the values are the substitutions' inf/nan."""
    compare(lambda M, a: M.linalg.inv_ex(a * 0), [(2, 2)], order=0)
    compare(lambda M, a, b: M.linalg.solve_ex(a * 0 + M.tensor(SINGULAR), b), [(3, 3), (3, 1)], order=0)


def test_info_is_batched_under_vmap():
    a = np.random.default_rng(0).standard_normal((4, 3, 3))
    for M in (torch, T):
        info = M.func.vmap(lambda x, M=M: M.linalg.inv_ex(x).info)(M.tensor(a))
        assert tuple(info.shape) == (4,) and not np.any(np.asarray(info.numpy()))


def test_lu_factor_ex_of_a_singular_matrix_reports_info():
    compare(lambda M, a: M.linalg.lu_factor_ex(a * 0 + M.tensor(SINGULAR)), [(3, 3)], order=0)
    compare(lambda M, a: M.linalg.cholesky_ex(a * 0 - M.eye(3, dtype=M.float64)), [(3, 3)], order=0)


# ---- errors ---------------------------------------------------------------------------------------------------

Z = lambda M, *s: M.zeros(*s, dtype=M.float64)  # noqa: E731
ERRORS = {
    "inv_rect": lambda M: M.linalg.inv(Z(M, 2, 3)),
    "inv_1d": lambda M: M.linalg.inv(Z(M, 3)),
    "inv_singular": lambda M: M.linalg.inv(Z(M, 3, 3)),
    "inv_batch_singular": lambda M: M.linalg.inv(M.stack([M.eye(3, dtype=M.float64), Z(M, 3, 3)])),
    "inv_int": lambda M: M.linalg.inv(M.ones(3, 3, dtype=M.int64)),
    "inv_ex_check": lambda M: M.linalg.inv_ex(Z(M, 3, 3), check_errors=True),
    "inverse_singular": lambda M: M.inverse(Z(M, 2, 2)),
    "solve_rect": lambda M: M.linalg.solve(Z(M, 2, 3), Z(M, 3, 2)),
    "solve_singular": lambda M: M.linalg.solve(Z(M, 3, 3), Z(M, 3, 2)),
    "solve_batch_singular": lambda M: M.linalg.solve(Z(M, 2, 2, 2), Z(M, 2, 2, 1)),
    "solve_shapes": lambda M: M.linalg.solve(M.eye(3, dtype=M.float64), Z(M, 4, 2)),
    "solve_right_shapes": lambda M: M.linalg.solve(M.eye(3, dtype=M.float64), Z(M, 3, 2), left=False),
    "solve_right_vector": lambda M: M.linalg.solve(M.eye(2, dtype=M.float64), Z(M, 2), left=False),
    "solve_vector_shapes": lambda M: M.linalg.solve(M.eye(3, dtype=M.float64), Z(M, 4)),
    "solve_dtype": lambda M: M.linalg.solve(M.eye(3, dtype=M.float64), M.zeros(3, 2, dtype=M.float32)),
    "solve_int": lambda M: M.linalg.solve(M.ones(3, 3, dtype=M.int64), Z(M, 3, 2)),
    "solve_broadcast": lambda M: M.linalg.solve(Z(M, 2, 3, 3) + M.eye(3), Z(M, 3, 3, 2)),
    "solve_triangular_rect": lambda M: M.linalg.solve_triangular(Z(M, 2, 3), Z(M, 3, 2), upper=True),
    "solve_triangular_shapes": lambda M: M.linalg.solve_triangular(Z(M, 3, 3), Z(M, 4, 2), upper=True),
    "solve_triangular_1d": lambda M: M.linalg.solve_triangular(Z(M, 3, 3), Z(M, 3), upper=True),
    "solve_triangular_no_upper": lambda M: M.linalg.solve_triangular(Z(M, 3, 3), Z(M, 3, 2)),
    "det_rect": lambda M: M.linalg.det(Z(M, 2, 3)),
    "det_torch_rect": lambda M: M.det(Z(M, 2, 3)),
    "det_1d": lambda M: M.linalg.det(Z(M, 3)),
    "det_int": lambda M: M.linalg.det(M.ones(3, 3, dtype=M.int64)),
    "slogdet_rect": lambda M: M.linalg.slogdet(Z(M, 2, 3)),
    "logdet_rect": lambda M: M.logdet(Z(M, 2, 3)),
    "cholesky_rect": lambda M: M.linalg.cholesky(Z(M, 2, 3)),
    "cholesky_not_pd": lambda M: M.linalg.cholesky(-M.eye(3, dtype=M.float64)),
    "cholesky_not_pd_order2": lambda M: M.linalg.cholesky(
        M.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=M.float64)
    ),
    "cholesky_batch_not_pd": lambda M: M.linalg.cholesky(
        M.stack([M.eye(2, dtype=M.float64), M.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=M.float64)])
    ),
    "cholesky_ex_check": lambda M: M.linalg.cholesky_ex(-M.eye(2, dtype=M.float64), check_errors=True),
    "cholesky_deprecated_not_pd": lambda M: M.cholesky(-M.eye(2, dtype=M.float64)),
    "lu_factor_1d": lambda M: M.linalg.lu_factor(Z(M, 3)),
    "lu_factor_singular": lambda M: M.linalg.lu_factor(Z(M, 3, 3)),
    "lu_factor_batch_singular": lambda M: M.linalg.lu_factor(Z(M, 2, 2, 2)),
    "lu_factor_no_pivot": lambda M: M.linalg.lu_factor(M.eye(3, dtype=M.float64), pivot=False),
    "lu_no_pivot": lambda M: M.linalg.lu(M.eye(3, dtype=M.float64), pivot=False),
    "lu_factor_ex_check": lambda M: M.linalg.lu_factor_ex(Z(M, 3, 3), check_errors=True),
    "lu_factor_int": lambda M: M.linalg.lu_factor(M.ones(3, 3, dtype=M.int64)),
    "lu_solve_shapes": lambda M: M.linalg.lu_solve(
        *M.linalg.lu_factor(M.eye(3, dtype=M.float64)), Z(M, 4, 2)
    ),
    "lu_solve_pivots_dtype": lambda M: M.linalg.lu_solve(
        M.eye(2, dtype=M.float64), M.ones(2, dtype=M.int64), Z(M, 2, 1)
    ),
    "matrix_power_rect": lambda M: M.linalg.matrix_power(Z(M, 2, 3), 2),
    "matrix_power_1d": lambda M: M.linalg.matrix_power(Z(M, 3), 2),
    "matrix_power_singular": lambda M: M.linalg.matrix_power(Z(M, 3, 3), -1),
    "matrix_power_int_negative": lambda M: M.linalg.matrix_power(M.ones(3, 3, dtype=M.int64), -1),
    "matrix_exp_rect": lambda M: M.linalg.matrix_exp(Z(M, 2, 3)),
    "matrix_exp_int": lambda M: M.linalg.matrix_exp(M.ones(3, 3, dtype=M.int64)),
    "tensorinv_shape": lambda M: M.linalg.tensorinv(Z(M, 2, 3), ind=1),
    "tensorinv_ind": lambda M: M.linalg.tensorinv(Z(M, 3, 3), ind=0),
    "tensorinv_singular": lambda M: M.linalg.tensorinv(Z(M, 2, 2), ind=1),
    "tensorsolve_shape": lambda M: M.linalg.tensorsolve(Z(M, 2, 3), Z(M, 2)),
    "householder_wide": lambda M: M.linalg.householder_product(Z(M, 2, 3), Z(M, 2)),
    "householder_tau": lambda M: M.linalg.householder_product(Z(M, 3, 2), Z(M, 3)),
    "cholesky_solve_shapes": lambda M: M.cholesky_solve(Z(M, 4, 2), M.eye(3, dtype=M.float64)),
    "cholesky_inverse_rect": lambda M: M.cholesky_inverse(Z(M, 2, 3)),
    "diagonal_1d": lambda M: M.linalg.diagonal(Z(M, 3)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    same_error(ERRORS[name])


def test_linalg_error_is_a_runtime_error():
    assert issubclass(T.linalg.LinAlgError, RuntimeError)
    with pytest.raises(T.linalg.LinAlgError):
        T.linalg.inv(T.zeros(2, 2, dtype=T.float64))


def test_deprecated_cholesky_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        T.cholesky(T.eye(2, dtype=T.float64))
    assert any("deprecated" in str(w.message) for w in caught)
