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


def _herm(a):
    return a + a.mH


def _eigh_complex(a, uplo="L"):
    """Phase-invariant in V: |V|^2 and V diag(L) V^H (complex); eigh reads one triangle, so the
    input is made Hermitian first."""
    L, V = T.linalg.eigh(_herm(a), UPLO=uplo)
    vlv = (V * L.unsqueeze(-2)) @ V.mH
    return T.cat([(V.abs() ** 2 * L.unsqueeze(-2)).reshape(-1), vlv.reshape(-1).real, vlv.reshape(-1).imag])


def _svd_complex(a, full=False):
    """Phase-invariant in (U, V): |U|^2, S, U diag(S) Vh and U Vh (complex: real and imaginary
    parts; a view_as_real at an odd offset of cat's gradient fails in PyTorch's backward too)."""
    U, S, Vh = T.linalg.svd(a, full_matrices=full)
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    usv, uv = (U * S.unsqueeze(-2)) @ Vh, U @ Vh
    outs = (U.abs() ** 2 * 2.0, S * S, usv.real, usv.imag, uv.real, uv.imag)
    return T.cat([o.reshape(-1) for o in outs])


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
        ("complex_vectors", lambda a: _eigh_complex(a), [(3, 3)], "c"),
        ("complex_upper_batched", lambda a: _eigh_complex(a, "U"), [(2, 3, 3)], "c"),
        ("complex_eigvalsh", lambda a: T.linalg.eigvalsh(_herm(a)) ** 2, [(4, 4)], "c"),
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
        ("complex_tall", lambda a: T.cat([x.reshape(-1) for x in T.linalg.qr(a)]), [(4, 3)], "c"),
        ("complex_wide", lambda a: T.cat([x.reshape(-1) for x in T.linalg.qr(a)]), [(2, 4)], "c"),
        (
            "complex_complete_wide_batched",
            lambda a: T.cat([x.reshape(-1) for x in T.linalg.qr(a, mode="complete")]),
            [(2, 2, 3)],
            "c",
        ),
        ("complex_R_only", lambda a: T.linalg.qr(a)[1].abs() ** 2, [(3, 3)], "c"),
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
        ("complex_tall", lambda a: _svd_complex(a), [(4, 3)], "c"),
        ("complex_wide_full", lambda a: _svd_complex(a, True), [(2, 4)], "c"),
        ("complex_square_batched", lambda a: _svd_complex(a), [(2, 3, 3)], "c"),
        ("complex_U_only", lambda a: T.linalg.svd(a, full_matrices=False)[0].abs(), [(4, 2)], "c"),
        ("complex_torch_svd_V_only", lambda a: T.svd(a)[2].abs() ** 2, [(2, 3)], "c"),
        (
            "complex_nuclear_spectral_cond",
            lambda a: T.linalg.matrix_norm(a, "nuc") * T.linalg.norm(a, 2) + T.linalg.cond(a),
            [(3, 3)],
            "c",
        ),
    ],
    "linalg_pinv": [
        ("tall", lambda a: T.linalg.pinv(a), [(4, 3)], "a"),
        ("wide_batched", lambda a: T.linalg.pinv(a), [(2, 2, 3)], "a"),
        ("hermitian", lambda a: T.linalg.pinv(_sym(a), hermitian=True), [(3, 3)], "a"),
        ("pinverse", lambda a: T.pinverse(a) * 2.0, [(3, 3)], "a"),
        ("complex_tall", lambda a: T.linalg.pinv(a), [(4, 3)], "c"),
        ("complex_wide_batched", lambda a: T.linalg.pinv(a), [(2, 2, 3)], "c"),
        ("complex_hermitian", lambda a: T.linalg.pinv(_herm(a), hermitian=True), [(3, 3)], "c"),
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
        (
            "complex_tall_gelsd_residuals",
            lambda a, b: T.cat([r.reshape(-1) * 1.0 for r in T.linalg.lstsq(a, b, driver="gelsd")[:2]]),
            [(4, 2), (4, 3)],
            "cc",
        ),
        ("complex_wide_vector", lambda a, b: T.linalg.lstsq(a, b).solution, [(2, 3), (2,)], "cc"),
    ],
}
