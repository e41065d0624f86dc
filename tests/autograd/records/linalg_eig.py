"""Samples for :mod:`reference.ops.rules.linalg_eig` (format of
:data:`tests.autograd.op_records.OP_RECORDS`).

Every loss is invariant under the eigenvectors' gauge ``V -> V diag(e^{i phi})`` (PyTorch's
backward refuses any other): eigenvectors enter as ``|V|^2`` or as ``V diag(f(L)) V^H``; losses
are also invariant under the order of the eigenvalues. Real inputs (``a``) have real and complex
conjugate eigenvalues; complex inputs (``c``) complex ones. The seeds of the tests draw matrices
whose eigenvalues are well separated (the derivative is singular at repeated eigenvalues).
"""

import reference as T
from reference.autograd.dispatch import apply
from reference.ops.rules import RULES


def _vlv(a):
    L, V = T.linalg.eig(a)
    return (V * L.unsqueeze(-2)) @ V.mH


def _abs2(a):
    L, V = T.linalg.eig(a)
    return V.abs() ** 2 * L.unsqueeze(-2)


def _eig_solve(a, b):
    return apply(RULES["linalg_eig_solve"], (a, b), {})


RECORDS = {
    "linalg_eig": [
        ("real_V_L_VH", _vlv, [(3, 3)], "a"),
        ("complex_V_L_VH", _vlv, [(3, 3)], "c"),
        ("real_abs_batched", _abs2, [(2, 3, 3)], "a"),
        ("complex_abs", _abs2, [(4, 4)], "c"),
        ("eigvals_real", lambda a: T.linalg.eigvals(a) ** 2, [(4, 4)], "a"),
        ("eigvals_complex_batched", lambda a: T.linalg.eigvals(a).exp(), [(2, 3, 3)], "c"),
    ],
    "linalg_eig_solve": [
        ("complex", _eig_solve, [(3, 3), (3, 2)], "cc"),
        ("real_batched", _eig_solve, [(2, 3, 3), (2, 3, 1)], "aa"),
    ],
}

# complex128 samples of the reductions with real results PyTorch defines on complex tensors (their
# records live in records.reductions); kind "c": both parts standard normal
EXTRA_SAMPLES = {
    "var": [("complex", lambda a: T.var(a, dim=1) * 1.5, [(3, 4)], "c")],
    "std": [("complex", lambda a: T.std(a, dim=0, correction=0), [(3, 4)], "c")],
    "var_mean": [
        ("complex", lambda a: T.cat([x.reshape(-1) * 1.0 for x in T.var_mean(a, dim=1)]), [(3, 4)], "c")
    ],
    "std_mean": [
        ("complex", lambda a: T.cat([x.reshape(-1) * 1.0 for x in T.std_mean(a, dim=0)]), [(3, 4)], "c")
    ],
    "linalg_vector_norm": [
        ("complex_2", lambda a: T.linalg.vector_norm(a, dim=1), [(3, 4)], "c"),
        ("complex_1", lambda a: T.linalg.vector_norm(a, 1), [(5,)], "c"),
        ("complex_3", lambda a: T.linalg.vector_norm(a, 3, dim=0), [(3, 4)], "c"),
        ("complex_inf", lambda a: T.linalg.vector_norm(a, float("inf"), dim=1), [(3, 4)], "c"),
    ],
}
