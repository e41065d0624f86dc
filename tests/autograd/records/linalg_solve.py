"""Samples for the solves and factorizations of :mod:`reference.ops.rules.linalg_solve` (format of
:data:`tests.autograd.op_records.OP_RECORDS`). Inputs are standard normal; each program makes its
matrix well conditioned (``+ 3 I``), symmetric positive-definite (``a a^T + 3 I``) or triangular
where the op needs it, so that finite differences are valid."""

import warnings

import reference as T


def _eye(a):
    return T.eye(a.shape[-1], dtype=a.dtype)


def _wc(a):
    """Well conditioned: a + 3 I."""
    return a + 3.0 * _eye(a)


def _spd(a):
    """Symmetric positive-definite: a a^T + 3 I (its perturbations are symmetric too)."""
    return T.matmul(a, a.mT) + 3.0 * _eye(a)


def _chol(a):
    """A lower-triangular factor with a positive diagonal (only its triangle is read)."""
    return T.tril(a) + 3.0 * _eye(a)


def _old_cholesky(a, upper):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return T.cholesky(_spd(a), upper)


def _flat(ts):
    return T.cat([t.flatten() for t in ts])


RECORDS = {
    "linalg_solve": [
        ("left", lambda a, b: T.linalg.solve(_wc(a), b), [(3, 3), (3, 2)], "aa"),
        ("vector", lambda a, b: T.linalg.solve(_wc(a), b), [(3, 3), (3,)], "aa"),
        ("right_broadcast", lambda a, b: T.linalg.solve(_wc(a), b, left=False), [(2, 2, 2), (3, 2)], "aa"),
        ("batched_vector", lambda a, b: T.linalg.solve(_wc(a), b), [(2, 3, 3), (2, 3)], "aa"),
    ],
    "linalg_inv": [("batched", lambda a: T.linalg.inv(_wc(a)), [(2, 3, 3)], "a")],
    "linalg_solve_triangular": [
        ("upper_left", lambda a, b: T.linalg.solve_triangular(_wc(a), b, upper=True), [(3, 3), (3, 2)], "aa"),
        (
            "lower_right_unit",
            lambda a, b: T.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
            [(2, 3, 3), (4, 3)],
            "aa",
        ),
    ],
    "linalg_det": [
        ("square", lambda a: T.linalg.det(a), [(3, 3)], "a"),
        ("batched", lambda a: T.det(a) * a.sum(), [(2, 2, 2)], "a"),
    ],
    "linalg_slogdet": [
        ("logabsdet", lambda a: T.linalg.slogdet(_wc(a)).logabsdet, [(3, 3)], "a"),
        ("logdet", lambda a: T.logdet(_spd(a)), [(2, 3, 3)], "a"),
    ],
    "linalg_cholesky_ex": [
        ("lower", lambda a: T.linalg.cholesky(_spd(a)), [(3, 3)], "a"),
        ("upper_batched", lambda a: T.linalg.cholesky_ex(_spd(a), upper=True).L, [(2, 3, 3)], "a"),
    ],
    "cholesky": [("upper", lambda a: _old_cholesky(a, True), [(3, 3)], "a")],
    "linalg_lu_factor_ex": [
        ("square", lambda a: T.linalg.lu_factor(a).LU, [(3, 3)], "a"),
        ("wide", lambda a: T.linalg.lu_factor_ex(a).LU, [(2, 4)], "a"),
        ("tall_batched", lambda a: T.linalg.lu_factor(a).LU, [(2, 4, 2)], "a"),
    ],
    "linalg_lu": [
        ("square", lambda a: _flat(T.linalg.lu(a)[1:]), [(3, 3)], "a"),
        ("wide", lambda a: _flat(T.linalg.lu(a)[1:]), [(2, 4)], "a"),
        ("tall", lambda a: T.linalg.lu(a).L, [(4, 2)], "a"),
    ],
    "lu_unpack": [
        ("square", lambda a: _flat(T.lu_unpack(*T.linalg.lu_factor(a))[1:]), [(3, 3)], "a"),
        ("wide_batched", lambda a: _flat(T.lu_unpack(*T.linalg.lu_factor(a))[1:]), [(2, 2, 3)], "a"),
        ("tall", lambda a: T.lu_unpack(*T.linalg.lu_factor(a)).L, [(4, 2)], "a"),
    ],
    "linalg_lu_solve": [
        ("left", lambda a, b: T.linalg.lu_solve(*T.linalg.lu_factor(_wc(a)), b), [(3, 3), (3, 2)], "aa"),
        (
            "right_adjoint",
            lambda a, b: T.linalg.lu_solve(*T.linalg.lu_factor(_wc(a)), b, left=False, adjoint=True),
            [(2, 2), (2, 2, 2)],
            "aa",
        ),
    ],
    "cholesky_solve": [
        ("lower", lambda b, a: T.cholesky_solve(b, _chol(a)), [(3, 2), (3, 3)], "aa"),
        (
            "upper_broadcast",
            lambda b, a: T.cholesky_solve(b, _chol(a).mT, upper=True),
            [(2, 2, 1), (2, 2)],
            "aa",
        ),
    ],
    "cholesky_inverse": [
        ("lower", lambda a: T.cholesky_inverse(_chol(a)), [(3, 3)], "a"),
        ("upper_batched", lambda a: T.cholesky_inverse(_chol(a).mT, upper=True), [(2, 3, 3)], "a"),
    ],
    "linalg_matrix_exp": [("batched", lambda a: T.linalg.matrix_exp(a * 0.5), [(2, 3, 3)], "a")],
}


def _hpd(a):
    """Hermitian positive-definite: a a^H + 3 I."""
    return T.matmul(a, a.mH) + 3.0 * _eye(a)


def _slog(s):
    """Both outputs of slogdet in one complex result: sign (1 + logabsdet / 4)."""
    return s.sign * (1.0 + s.logabsdet * 0.25)


# complex128 samples ("c": complex standard normal): the holomorphic rules (solve, inv, det, LU,
# matrix_exp) through the engine's conjugation, the others (slogdet, Cholesky, lu_solve's
# conjugate-transposed solve, cholesky_solve/inverse) through PyTorch's complex formulas
EXTRA_SAMPLES = {
    "linalg_solve": [
        ("complex_left", lambda a, b: T.linalg.solve(_wc(a), b), [(3, 3), (3, 2)], "cc"),
        ("complex_right", lambda a, b: T.linalg.solve(_wc(a), b, left=False), [(2, 3, 3), (4, 3)], "cc"),
    ],
    "linalg_inv": [("complex", lambda a: T.linalg.inv(_wc(a)), [(2, 3, 3)], "c")],
    "linalg_solve_triangular": [
        (
            "complex_upper",
            lambda a, b: T.linalg.solve_triangular(_wc(a), b, upper=True),
            [(3, 3), (3, 2)],
            "cc",
        ),
        (
            "complex_lower_right_unit",
            lambda a, b: T.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
            [(3, 3), (2, 3)],
            "cc",
        ),
    ],
    "linalg_det": [("complex", lambda a: T.linalg.det(a), [(2, 3, 3)], "c")],
    "linalg_slogdet": [
        ("complex_both", lambda a: _slog(T.linalg.slogdet(_wc(a))), [(2, 3, 3)], "c"),
        ("complex_logdet", lambda a: T.logdet(_wc(a)), [(3, 3)], "c"),
    ],
    "linalg_cholesky_ex": [
        ("complex_lower", lambda a: T.linalg.cholesky(_hpd(a)), [(3, 3)], "c"),
        ("complex_upper", lambda a: T.linalg.cholesky_ex(_hpd(a), upper=True).L, [(2, 3, 3)], "c"),
    ],
    "cholesky": [("complex_upper", lambda a: _old_cholesky_h(a, True), [(3, 3)], "c")],
    "linalg_lu_factor_ex": [
        ("complex_square", lambda a: T.linalg.lu_factor(a).LU, [(3, 3)], "c"),
        ("complex_wide", lambda a: T.linalg.lu_factor_ex(a).LU, [(2, 4)], "c"),
    ],
    "linalg_lu": [("complex_square", lambda a: _flat(T.linalg.lu(a)[1:]), [(3, 3)], "c")],
    "lu_unpack": [("complex", lambda a: _flat(T.lu_unpack(*T.linalg.lu_factor(a))[1:]), [(2, 3, 3)], "c")],
    "linalg_lu_solve": [
        (
            "complex_adjoint",
            lambda a, b: T.linalg.lu_solve(*T.linalg.lu_factor(_wc(a)), b, adjoint=True),
            [(3, 3), (3, 2)],
            "cc",
        ),
        (
            "complex_right_adjoint",
            lambda a, b: T.linalg.lu_solve(*T.linalg.lu_factor(_wc(a)), b, left=False, adjoint=True),
            [(2, 2), (2, 2, 2)],
            "cc",
        ),
        (
            "complex_left",
            lambda a, b: T.linalg.lu_solve(*T.linalg.lu_factor(_wc(a)), b),
            [(3, 3), (3, 2)],
            "cc",
        ),
    ],
    "cholesky_solve": [
        ("complex_lower", lambda b, a: T.cholesky_solve(b, _chol(a)), [(3, 2), (3, 3)], "cc"),
        (
            "complex_upper",
            lambda b, a: T.cholesky_solve(b, _chol(a).mH, upper=True),
            [(2, 2, 1), (2, 2)],
            "cc",
        ),
    ],
    "cholesky_inverse": [
        ("complex_lower", lambda a: T.cholesky_inverse(_chol(a)), [(3, 3)], "c"),
        ("complex_upper", lambda a: T.cholesky_inverse(_chol(a).mH, upper=True), [(2, 3, 3)], "c"),
    ],
    "linalg_matrix_exp": [("complex", lambda a: T.linalg.matrix_exp(a * 0.5), [(2, 3, 3)], "c")],
}


def _old_cholesky_h(a, upper):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return T.cholesky(_hpd(a), upper)
