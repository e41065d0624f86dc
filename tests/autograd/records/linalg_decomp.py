"""Samples for the decompositions of :mod:`reference.ops.rules.linalg_decomp` (format of
:data:`tests.autograd.op_records.OP_RECORDS`).

Losses are gauge-invariant where the decomposition has a gauge: eigen- and singular vectors enter
squared (their sign is arbitrary) or as products such as ``U @ Vh``; symmetric inputs are made
by ``a + a.mT`` (eigh reads one triangle, so finite differences of an unsymmetrised input would
differ from the symmetric gradient PyTorch defines); full_matrices' extra columns (any
orthonormal completion) are left out of the loss.
"""

import reference as T


def _sym(a):
    return a + a.mT


def _eigh_loss(a, uplo="L"):
    L, V = T.linalg.eigh(_sym(a), UPLO=uplo)
    return V * V * L.unsqueeze(-2) + L.unsqueeze(-1)


def _svd_loss(a, full):
    U, S, Vh = T.linalg.svd(a, full_matrices=full)
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return (U * U).sum(-1) * 2.0, S * S, Vh.mT @ (S.unsqueeze(-1) * Vh), U @ Vh


def _svd_sum(a, full=False):
    outs = _svd_loss(a, full)
    return T.cat([o.reshape(-1) for o in outs])


RECORDS = {
    "linalg_eigh": [
        ("vectors_squared", lambda a: _eigh_loss(a), [(3, 3)], "a"),
        ("upper_batched", lambda a: _eigh_loss(a, "U"), [(2, 3, 3)], "a"),
        ("eigvalsh", lambda a: T.linalg.eigvalsh(_sym(a)) ** 2, [(4, 4)], "a"),
        ("values_only_vectors_unused", lambda a: T.linalg.eigh(_sym(a))[0].exp(), [(3, 3)], "a"),
    ],
    "linalg_qr": [
        ("reduced_tall", lambda a: T.cat([x.reshape(-1) for x in T.linalg.qr(a)]), [(4, 3)], "a"),
        ("wide", lambda a: T.cat([x.reshape(-1) for x in T.linalg.qr(a)]), [(2, 4)], "a"),
        (
            "complete_wide_batched",
            lambda a: T.cat([x.reshape(-1) for x in T.linalg.qr(a, mode="complete")]),
            [(2, 2, 3)],
            "a",
        ),
        ("R_only_square", lambda a: T.linalg.qr(a)[1] ** 2, [(3, 3)], "a"),
        ("Q_only", lambda a: T.linalg.qr(a)[0] * 2.0, [(3, 2)], "a"),
    ],
    "linalg_svd": [
        ("tall", lambda a: _svd_sum(a), [(4, 3)], "a"),
        ("wide_full", lambda a: _svd_sum(a, True), [(2, 4)], "a"),
        ("tall_full_batched", lambda a: _svd_sum(a, True), [(2, 3, 2)], "a"),
        ("svdvals", lambda a: T.linalg.svdvals(a) ** 2, [(3, 4)], "a"),
        ("U_only", lambda a: T.linalg.svd(a, full_matrices=False)[0] ** 2, [(4, 2)], "a"),
        ("torch_svd_V_only", lambda a: T.svd(a)[2] ** 2, [(2, 3)], "a"),
        (
            "nuclear_and_spectral",
            lambda a: T.linalg.matrix_norm(a, "nuc") * T.linalg.norm(a, 2),
            [(3, 3)],
            "a",
        ),
        ("cond", lambda a: T.linalg.cond(a), [(3, 3)], "a"),
    ],
    "linalg_pinv": [
        ("tall", lambda a: T.linalg.pinv(a), [(4, 3)], "a"),
        ("wide_batched", lambda a: T.linalg.pinv(a), [(2, 2, 3)], "a"),
        ("hermitian", lambda a: T.linalg.pinv(_sym(a), hermitian=True), [(3, 3)], "a"),
        ("pinverse", lambda a: T.pinverse(a) * 2.0, [(3, 3)], "a"),
    ],
    "linalg_lstsq": [
        (
            "tall_gelsd_residuals",
            lambda a, b: T.cat([r.reshape(-1) for r in T.linalg.lstsq(a, b, driver="gelsd")[:2]]),
            [(4, 2), (4, 3)],
            "aa",
        ),
        ("wide_vector", lambda a, b: T.linalg.lstsq(a, b).solution, [(2, 3), (2,)], "aa"),
        (
            "broadcast_gels",
            lambda a, b: T.cat([r.reshape(-1) for r in T.linalg.lstsq(a, b, driver="gels")[:2]]),
            [(2, 1, 4, 3), (1, 3, 4, 2)],
            "aa",
        ),
    ],
}
