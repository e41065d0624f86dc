"""float16 / bfloat16 through the reference's linear algebra against torch 2.13 on CPU: where
PyTorch has no half-precision kernel (LAPACK) it raises ``NotImplementedError: "<kernel>" not
implemented for 'Half'`` or ``RuntimeError: <op>: Low precision dtypes not supported. Got Half``;
where it computes (``matrix_exp``, the Frobenius / 1 / inf matrix norms, ``multi_dot``...), the
reference computes too, in the same dtype. Each entry point is compared: error type and message,
or the result dtype."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import reference as T

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

S = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
_LC = np.linalg.cholesky(S)
B = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]])
TAU = np.array([1.2, 0.5])


def _ops(L, lib):
    A = L(S)
    Bm = L(B)
    LL = L(_LC)
    la = lib.linalg
    return {
        "linalg.cholesky": lambda: la.cholesky(A),
        "linalg.cholesky_ex": lambda: la.cholesky_ex(A),
        "linalg.cond": lambda: la.cond(A),
        "linalg.cond_fro": lambda: la.cond(A, "fro"),
        "linalg.det": lambda: la.det(A),
        "linalg.eig": lambda: la.eig(A),
        "linalg.eigvals": lambda: la.eigvals(A),
        "linalg.eigh": lambda: la.eigh(A),
        "linalg.eigvalsh": lambda: la.eigvalsh(A),
        "linalg.householder_product": lambda: la.householder_product(A, L(TAU)),
        "linalg.inv": lambda: la.inv(A),
        "linalg.inv_ex": lambda: la.inv_ex(A),
        "linalg.lstsq": lambda: la.lstsq(A, Bm),
        "linalg.lstsq_rcond": lambda: la.lstsq(A, Bm, rcond=0.1),
        "linalg.lu": lambda: la.lu(A),
        "linalg.lu_factor": lambda: la.lu_factor(A),
        "linalg.lu_factor_ex": lambda: la.lu_factor_ex(A),
        "linalg.lu_solve": lambda: la.lu_solve(A, lib.tensor([1, 2, 3], dtype=lib.int32), Bm),
        "linalg.matrix_exp": lambda: la.matrix_exp(A),
        "linalg.matrix_norm": lambda: la.matrix_norm(A),
        "linalg.matrix_norm2": lambda: la.matrix_norm(A, 2),
        "linalg.matrix_norm_nuc": lambda: la.matrix_norm(A, "nuc"),
        "linalg.matrix_norm1": lambda: la.matrix_norm(A, 1),
        "linalg.matrix_norm-1": lambda: la.matrix_norm(A, -1),
        "linalg.matrix_power": lambda: la.matrix_power(A, 2),
        "linalg.matrix_power-1": lambda: la.matrix_power(A, -1),
        "linalg.matrix_rank": lambda: la.matrix_rank(A),
        "linalg.matrix_rank_tol": lambda: la.matrix_rank(A, 0.5),
        "linalg.matrix_rank_herm_tol": lambda: la.matrix_rank(A, 0.5, True),
        "linalg.norm": lambda: la.norm(A),
        "linalg.norm2": lambda: la.norm(A, 2),
        "linalg.pinv": lambda: la.pinv(A),
        "linalg.pinv_h": lambda: la.pinv(A, hermitian=True),
        "linalg.qr": lambda: la.qr(A),
        "linalg.slogdet": lambda: la.slogdet(A),
        "linalg.solve": lambda: la.solve(A, Bm),
        "linalg.solve_ex": lambda: la.solve_ex(A, Bm),
        "linalg.solve_triangular": lambda: la.solve_triangular(LL, Bm, upper=False),
        "linalg.svd": lambda: la.svd(A),
        "linalg.svdvals": lambda: la.svdvals(A),
        "linalg.tensorinv": lambda: la.tensorinv(A, 1),
        "linalg.tensorsolve": lambda: la.tensorsolve(A, L(B[:, 0])),
        "linalg.vector_norm": lambda: la.vector_norm(A),
        "linalg.multi_dot": lambda: la.multi_dot([A, A]),
        "linalg.vecdot": lambda: la.vecdot(A, A),
        "cholesky": lambda: lib.cholesky(A),
        "cholesky_solve": lambda: lib.cholesky_solve(Bm, LL),
        "cholesky_inverse": lambda: lib.cholesky_inverse(LL),
        "triangular_solve": lambda: lib.triangular_solve(Bm, LL, upper=False),
        "lu_unpack": lambda: lib.lu_unpack(A, lib.tensor([1, 2, 3], dtype=lib.int32)),
        "matrix_exp": lambda: lib.matrix_exp(A),
        "det": lambda: lib.det(A),
        "logdet": lambda: lib.logdet(A),
        "slogdet": lambda: lib.slogdet(A),
        "inverse": lambda: lib.inverse(A),
        "pinverse": lambda: lib.pinverse(A),
        "svd": lambda: lib.svd(A),
        "qr": lambda: lib.qr(A),
        "matrix_power": lambda: lib.matrix_power(A, 3),
        "orgqr": lambda: lib.orgqr(A, L(TAU)),
        "lu": lambda: lib.lu(A),
        "lu_solve": lambda: lib.lu_solve(Bm, A, lib.tensor([1, 2, 3], dtype=lib.int32)),
        "norm_nuc": lambda: lib.norm(A, "nuc"),
        "norm2": lambda: lib.norm(A, 2),
    }


def _tl(dt):
    return lambda x: torch.tensor(x).to(dt)


def _rl(dt):
    return lambda x: T.tensor(x).to(dt)


def _run(f):
    try:
        out = f()
        return "ok " + (str(out.dtype) if hasattr(out, "dtype") else str([str(o.dtype) for o in out]))
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return f"{type(e).__name__}: {e}"


_NAMES = list(_ops(_tl(torch.float64), torch))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", _NAMES)
def test_low_precision_linalg_matches_torch(name, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = _run(_ops(_tl(getattr(torch, dtype)), torch)[name])
        r = _run(_ops(_rl(getattr(T, dtype)), T)[name])
    assert r == t.replace("torch.", "")
