"""Matrix decompositions in real and complex floating dtypes: linalg_eigh, linalg_qr, linalg_svd (PyTorch's
``_linalg_svd``), linalg_pinv and linalg_lstsq. Everything else of the family (eigvalsh, svdvals,
torch.svd, matrix_norm, norm, cond, matrix_rank, pinverse) is a composition of these in
:mod:`reference.ops.functions.linalg_decomp`, as in PyTorch.

The VJP formulas are PyTorch's (``linalg_eig_backward`` with ``is_hermitian``, ``linalg_qr_backward``,
``svd_backward``, ``pinv_backward``, ``linalg_lstsq_backward``), re-derived for real inputs and
written with differentiable Tensor ops, so they differentiate again. Complex input: the rules declare
``complex_grads="explicit"`` and their formulas are PyTorch's complex ones (conjugate transposes,
the phase checks of svd and eigh, the phase terms on the diagonals; docs/complex.md), which are
the real formulas when the input is real. The decompositions receive
``None`` for an output whose gradient never arrived (``undefined_grads``), as aten's formulas do:
it decides whether a formula divides by eigenvalue (singular value) gaps at all, hence where
repeated eigenvalues give nan/inf and where they do not:

* eigh: only the eigenvalues used: ``V diag(gL) V^T`` (finite at repeated eigenvalues); the
  eigenvectors used: the skew part of ``V^T gV`` divided by ``E_ij = L_j - L_i`` (0/0 = nan,
  x/0 = inf at repeated eigenvalues, as in PyTorch);
* svd: the same with ``E_ij = S_j^2 - S_i^2``; the terms ``(I - UU^T) gU S^-1`` divide by the
  singular values (inf/nan for a rank-deficient input whose U or V is used);
* qr: mode='r' has no Q and its gradient raises; so does mode='complete' with m > n (the extra
  columns of Q are arbitrary); wide inputs (m < n) differentiate through ``A = Q [X | Y]``.

Inverses of triangular and small matrices inside the formulas are written with this family's own
primitives (``linalg_pinv`` with ``rtol=0``, exact for an invertible matrix), not with the solve
family's.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry.

Error declarations (:func:`_perturbation`): these kernels are LAPACK's backward-stable
Householder-based algorithms (syevd, geqrf+orgqr, gesdd, gelsd), so each result is the exact
result for ``A + dA`` with ``||dA||_2 <= p·u·||A||_2``; p is LAPACK's "modestly growing function"
(LAPACK Users' Guide 3rd ed. §4.7-4.9). Every one of these algorithms starts with a sequence of
Householder reflections (QR: n of them on m-vectors; the bidiagonalisation of svd: min(m, n) on
each side; the tridiagonalisation of eigh: n - 2 on both sides); a reflection applied to a vector
of length k has backward error gamma~_k (Higham, Accuracy and Stability 2nd ed., Lemma 19.3), so
the sequence gives Higham's Thm 19.4, ``||da_j||_2 <= gamma~_{mn} ||a_j||_2``: we take
``p = m·n`` (n² for eigh) for all of them (the iterative phase, QR iteration or divide and
conquer on the tridiagonal/bidiagonal matrix, is backward stable with an O(n·u) error that this
covers). An input error ``e`` adds ``||e||_F`` (>= ``||e||_2``).
Perturbation theory turns ``delta = ||e||_F + p·u·||A||_2`` into output bounds:

* eigenvalues and singular values (Weyl): ``|d lambda_i| <= delta``;
* eigenvectors, singular vectors (Davis-Kahan / Wedin sin-theta): a unit vector moves by at
  most ``sqrt(2)·delta/gap_i`` (gap_i: the distance of lambda_i (s_i) to the other eigenvalues
  (singular values, and to 0 for the extra columns of a non-square svd)), so every element of
  that column by that much (inf at a repeated value: the vector is not determined);
* QR (Sun 1991; Higham Thm 19.? remark, first order): ``||dR||_F <= sqrt(2)·kappa·delta_F`` and
  ``||dQ||_F <= sqrt(2)·kappa·delta_F/||A||_2`` with ``kappa = ||A||_2·||R^-1||_2``;
  a complete Q's extra columns are arbitrary (inf);
* pinv (Wedin 1973): ``||d A^+||_2 <= 2·||A^+||_2^2·delta`` while the rank is kept, i.e. while
  ``delta`` is below the smallest kept singular value and every singular value is farther than
  ``delta`` from the cut-off (inf otherwise);
* lstsq: the solution is ``A^+ B``: the pinv bound times ``||B||`` plus ``||A^+||_2·||e_B||_F``
  (which dominates Wedin's least-squares bound, since ``||x|| <= ||A^+||·||B||`` and
  ``||r|| <= ||B||``); residuals: ``2·||r||·(||A||·||dx|| + delta·||x|| + ||e_B||) + own``.

Complex input: the same algorithms in complex arithmetic (zheevd, zgeqrf+zungqr, zgesdd, zgelsd)
are backward stable with the same norm-wise statements (LAPACK UG §4.7-4.9 cover both; Higham
Lemma 3.5: a complex flop errs by at most sqrt(2)·gamma_4 relative, absorbed with the unitary
reflections' error into the same "modestly growing" p), and Weyl, Davis-Kahan/Wedin, Sun and
Wedin's pinv bound hold verbatim for complex matrices with unitary invariance, ``|.|`` being the
modulus: every bound above carries over with ``|.|`` of complex values, with ``u`` replaced by
``2·sqrt(2)·u`` for complex input (Higham Lemma 3.5: a complex multiply or divide errs by at most
``sqrt(2)·gamma_{k+2}`` where the real one errs by ``gamma_k``, and ``sqrt(2)(k+2)/k <= 2·sqrt(2)``
for ``k >= 2``) (the tracker's errors of
complex arrays are bounds on the modulus of each element's error, docs/complex.md). A singular
(eigen)vector's phase is a gauge, not an error: the bounds on U, V hold up to that phase, and the
records compare phase-invariant programs.

Each bound is the first-order term (second-order terms are O(delta^2) and are covered by the
factor 2 in the product-rule terms only as long as delta is small against the gaps, which is
where the bound is finite).
"""

from __future__ import annotations

import math

import numpy as np

import reference
from reference import errors
from reference.autograd.dispatch import apply
from reference.backend import namespace_of, to_numpy
from reference.ops import api as A
from reference.ops.functions import complex as F
from reference.ops.rules.registry import rule

# ---- Tensor helpers for the formulas (differentiable, so formulas differentiate again) ----------


def _T():
    return reference


def _mT(x):
    return A.transpose(x, -2, -1)


def _mH(x):
    """The conjugate transpose (the transpose of a real tensor)."""
    t = A.transpose(x, -2, -1)
    return _F().conj_physical(t) if x.dtype.kind == "c" else t


def _F():
    return F


def _is_c(x):
    return x.dtype.kind == "c"


def _diag(x):
    return A.diagonal(x, 0, -2, -1)


def _diag_embed(x):
    return _T().diag_embed(x)


def _eye_like(x, n):
    return A.eye(n, dtype=x.dtype, device=x.device)


def _inv(x):
    """The inverse of QR's triangular R, with this family's own primitive: pinv with no cut-off is
    the inverse of an invertible matrix, and its gradient formula is the inverse's there. The
    private ``triangular`` flag computes it by back substitution (componentwise backward stable,
    Higham Thm 8.5), as PyTorch's solve_triangular does, instead of through an SVD (an error of
    cond(R)·u)."""
    return apply(RULES_PINV[0], (x,), {"atol": 0.0, "rtol": 0.0, "hermitian": False, "triangular": True})


RULES_PINV: list = []

# ---- error declarations (see the module docstring) -----------------------------------------------


def _perturbation(bound, source):
    """``errors.bound``: ``bound(arrays, errs, params, outs, u)`` gives one error array per output
    (None for an integer output); the tracker adds the output's own rounding ``u·|y|`` and the
    underflow term."""
    return errors.bound(bound, source)


def _fro(e, shape):
    """||e||_F per matrix (errors broadcast to ``shape``; None: 0)."""
    if e is None:
        return np.zeros(shape[:-2])
    e = np.broadcast_to(np.asarray(e, dtype=np.float64), shape)
    return np.sqrt((e * e).sum((-2, -1)))


def _as64(a):
    """float64 (complex128 for complex values) for the bound computations."""
    a = np.asarray(a)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _complex_u(u, a):
    """The unit roundoff of the bounds: ``2·sqrt(2)·u`` for complex input (module docstring)."""
    return u * 2 * math.sqrt(2) if np.asarray(a).dtype.kind == "c" else u


def _norm2(a):
    a = _as64(a)
    if a.size == 0:
        return np.zeros(a.shape[:-2])
    return np.linalg.svd(a, compute_uv=False)[..., 0]


def _gaps(vals, extra_zero=False):
    """Distance of each value to the others (and to 0 when ``extra_zero``), along the last dim."""
    v = np.asarray(vals, dtype=np.float64)
    n = v.shape[-1]
    d = np.abs(v[..., :, None] - v[..., None, :])
    d = d + np.where(np.eye(n, dtype=bool), np.inf, 0.0)
    g = d.min(-1) if n > 1 else np.full(v.shape, np.inf)
    if extra_zero:
        g = np.minimum(g, np.abs(v))
    return g


def _eigh_bound(arrays, errs, params, outs, u):
    a = arrays[0]
    u = _complex_u(u, a)
    L, V = outs
    n = a.shape[-1]
    delta = _fro(errs[0], a.shape) + max(n * n, 1) * u * np.abs(np.asarray(L, dtype=np.float64)).max(
        -1, initial=0.0
    )
    eL = np.broadcast_to(delta[..., None], L.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        col = math.sqrt(2) * delta[..., None] / _gaps(L)
    eV = np.broadcast_to(col[..., None, :], V.shape)
    return [eL, np.where(np.isnan(eV), np.inf, eV)]


def _svd_bound(arrays, errs, params, outs, u):
    a = arrays[0]
    u = _complex_u(u, a)
    U, S, Vh = outs
    m, n = a.shape[-2:]
    s = np.asarray(S, dtype=np.float64)
    delta = _fro(errs[0], a.shape) + max(m * n, 1) * u * s.max(-1, initial=0.0)
    eS = np.broadcast_to(delta[..., None], S.shape)
    res = [None, eS, None]
    if U.ndim >= 2 and U.size:
        k = s.shape[-1]
        with np.errstate(divide="ignore", invalid="ignore"):
            col = math.sqrt(2) * delta[..., None] / _gaps(s, extra_zero=m != n)
            # complex input: the pair (u_i, v_i) is unique up to one common phase, and the relative
            # phase is set by A v_i = s_i u_i alone: with u_i's phase fixed, a perturbation E moves
            # v_i along i v_i by Im(u_i^H E v_i) / s_i (first order), up to delta / s_i, however wide
            # the gap (the complex polar factor U Vh has condition 1/s_min, the real one
            # 2/(s_{k-1} + s_k): Kenney and Laub 1991). Measured (tests/autograd/exact_linalg_more.py,
            # c_svd): zgesdd's v_3 of s = (1, 1e-4, 1e-9) is 2e-8 off, sqrt(2) delta/gap 1.4e-11.
            # Real input: the relative sign is discrete, no term.
            colv = col + delta[..., None] / s if np.asarray(a).dtype.kind == "c" else col
        col, colv = (np.where(np.isnan(c), np.inf, c) for c in (col, colv))
        cu = np.concatenate([col, np.full(col.shape[:-1] + (U.shape[-1] - k,), np.inf)], -1)
        cv = np.concatenate([colv, np.full(col.shape[:-1] + (Vh.shape[-2] - k,), np.inf)], -1)
        res[0] = np.broadcast_to(cu[..., None, :], U.shape)
        res[2] = np.broadcast_to(cv[..., :, None], Vh.shape)
    else:
        res[0] = np.zeros(U.shape)
        res[2] = np.zeros(Vh.shape)
    return res


def _qr_bound(arrays, errs, params, outs, u):
    a = arrays[0]
    u = _complex_u(u, a)
    Q, R = outs
    m, n = a.shape[-2:]
    k = min(m, n)
    norm = _norm2(a)
    delta = _fro(errs[0], a.shape) + max(m * n, 1) * u * norm
    r = _as64(R)[..., :k, :k]
    with np.errstate(divide="ignore", invalid="ignore"):
        smin = np.linalg.svd(r, compute_uv=False)[..., -1] if k else np.ones(r.shape[:-2])
        kappa = norm / smin
        dR = math.sqrt(2) * kappa * delta
        dQ = math.sqrt(2) * kappa * delta / norm
    dR = np.where(np.isnan(dR), np.inf, dR)
    dQ = np.where(np.isnan(dQ), np.inf, dQ)
    eR = np.broadcast_to(dR[..., None, None], R.shape)
    if Q.ndim < 2:
        return [np.zeros(Q.shape), eR]
    eQ = np.array(np.broadcast_to(dQ[..., None, None], Q.shape), dtype=np.float64)
    if Q.shape[-1] > k:  # mode='complete', m > n: the extra columns are any orthonormal basis
        eQ[..., k:] = np.inf
    return [eQ, eR]


def _pinv_error(u, a, e, params):
    """(delta, ||A^+||_2, finite) of pinv's kernel on ``a`` with input error ``e``."""
    u = _complex_u(u, a)
    m, n = a.shape[-2:]
    s = np.linalg.svd(_as64(a), compute_uv=False) if a.size else np.zeros(a.shape[:-2] + (0,))
    smax = s.max(-1, initial=0.0)
    delta = _fro(e, a.shape) + max(m * n, 1) * u * smax
    atol, rtol = _tols(params, m, n, smax)
    cut = np.maximum(atol, rtol * smax)
    kept = s > cut[..., None]
    smin = np.where(kept, s, np.inf).min(-1, initial=np.inf)
    near = (np.abs(s - cut[..., None]) <= delta[..., None]).any(-1)
    ok = (delta < smin) & ~near
    with np.errstate(divide="ignore"):
        pnorm = np.where(np.isfinite(smin), 1.0 / smin, 0.0)
    return delta, pnorm, ok


def _pinv_bound(arrays, errs, params, outs, u):
    a = arrays[0]
    (out,) = outs if isinstance(outs, (list, tuple)) else (outs,)
    delta, pnorm, ok = _pinv_error(u, a, errs[0], params)
    e = np.where(ok, 2 * pnorm**2 * delta, np.inf)
    return [np.broadcast_to(e[..., None, None], out.shape) + 2 * u * np.abs(out)]


def _lstsq_bound(arrays, errs, params, outs, u):
    a, b = arrays
    X, res = outs[0], outs[1]
    vector = b.ndim == a.ndim - 1
    bm = b[..., None] if vector else b
    eb = None if errs[1] is None else (errs[1][..., None] if vector else errs[1])
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    a64 = np.broadcast_to(_as64(a), batch + a.shape[-2:])
    ea = None if errs[0] is None else np.broadcast_to(errs[0], a64.shape)
    delta, pnorm, ok = _pinv_error(u, a64, ea, {"rcond": params["rcond"]})
    bnorm = _norm2(np.broadcast_to(bm, batch + bm.shape[-2:])) if bm.size else np.zeros(batch)
    eB = _fro(eb, batch + bm.shape[-2:])
    eX = np.where(ok, 2 * pnorm**2 * delta * bnorm + pnorm * eB, np.inf)
    shape = X.shape
    eXb = np.broadcast_to(eX[..., None] if vector else eX[..., None, None], shape)
    out = [eXb + 2 * u * np.abs(X)]
    if res.size:
        xn = np.sqrt((np.abs(_as64(X)) ** 2).sum(-2 if not vector else -1))
        rn = np.sqrt(np.abs(np.asarray(res, dtype=np.float64)))
        anorm = _norm2(a64)
        dx = eX[..., None] if not vector else eX
        de = (anorm[..., None] if not vector else anorm) * dx * math.sqrt(shape[-2] if not vector else 1)
        d_r = de + (delta[..., None] if not vector else delta) * xn + (eB[..., None] if not vector else eB)
        out.append(2 * rn * d_r + 2 * u * np.abs(res) * max(a.shape[-2], 1))
    else:
        out.append(np.zeros(res.shape))
    out.append(None)  # rank: an integer
    sv = outs[3]
    if sv.size:  # singular values of A (its own batch): Weyl
        m, n = a.shape[-2:]
        d = _fro(errs[0], a.shape) + max(m * n, 1) * u * np.asarray(sv, dtype=np.float64).max(-1, initial=0.0)
        out.append(np.broadcast_to(d[..., None], sv.shape))
    else:
        out.append(np.zeros(sv.shape))
    return out


# ---- eigh ----------------------------------------------------------------------------------------------


class _LinAlgError(RuntimeError):
    """PyTorch's ``torch.linalg.LinAlgError`` (``torch._C._LinAlgError``, a RuntimeError): LAPACK
    reported that the algorithm failed. The linear-solve family exports ``T.linalg.LinAlgError``;
    :func:`_linalg_error` raises that class when it is there (one class for ``except``), this one
    otherwise."""


def _linalg_error(message):
    cls = getattr(reference.linalg, "LinAlgError", None) or _LinAlgError
    return cls(message)


def _eigh_failed(a, UPLO):
    """LAPACK's syevd does not converge on a non-finite value in the triangle it reads; PyTorch
    raises, with LAPACK's info (which the reference, running another LAPACK, cannot reproduce)."""
    xp = namespace_of(a)
    n = a.shape[-1]
    mask = xp.tril(xp.ones((n, n), dtype=bool)) if UPLO == "L" else xp.triu(xp.ones((n, n), dtype=bool))
    if not bool(xp.isfinite(xp.where(mask, a, 0)).all()):
        raise _linalg_error(
            "linalg.eigh: The algorithm failed to converge because the input matrix is ill-conditioned or "
            "has too many repeated eigenvalues (error code: LAPACK's info)."
        )


def _svd_failed(a):
    if not bool(namespace_of(a).isfinite(a).all()):
        raise _linalg_error(
            "linalg.svd: The algorithm failed to converge because the input matrix contained non-finite values."
        )


def _real_dtype(dt):
    """The value type of a complex dtype (complex128 -> float64); a real dtype itself."""
    dt = np.dtype(dt)
    return np.empty((0,), dtype=dt).real.dtype if dt.kind == "c" else dt


def eigh_kernel(a, UPLO):
    """heevd/syevd: real eigenvalues (float64 for complex128 input), the triangle UPLO read (the
    imaginary part of a complex diagonal ignored, as LAPACK's heevd does)."""
    xp = namespace_of(a)
    rt = _real_dtype(a.dtype)
    if a.shape[-1] == 0:
        return xp.zeros(a.shape[:-1], dtype=rt), xp.zeros(a.shape, dtype=a.dtype)
    _eigh_failed(a, UPLO)
    L, V = xp.linalg.eigh(a, UPLO=UPLO)
    return L.astype(rt, copy=False), V.astype(a.dtype, copy=False)


def _skew_over_gaps(M, L):
    """(skew(-Hermitian) part of M)_ij / (L_j - L_i); aten's E has ones on the diagonal, so the
    diagonal is 0 for a real M and ``i Im M_ii`` for a complex one."""
    n = L.shape[-1]
    eye = _eye_like(L, n)
    E = A.unsqueeze(L, -2) - A.unsqueeze(L, -1) + eye
    return ((M - _mH(M)) * 0.5) / E


def _is_batched(t):
    return getattr(t, "_batched", None) is not None


def _phase_check(ok, message):
    """A gauge check (svd: PyTorch's allclose with rtol = atol = 1e-2; eigh: :func:`phase_dependent`;
    nan fails them), on the values of a tensor; skipped under vmap, as PyTorch skips them for tensor
    subclasses (its batched tensors)."""
    if not bool(np.all(ok)):
        raise RuntimeError(message)


def phase_dependent(d, V, gV) -> bool:
    """Whether a loss depends on the eigenvectors' phases ``V -> V diag(e^{i phi})``, from ``d =
    diag(V^H gV)`` (host-side, on the values; nan says yes, as PyTorch's check fails on nan).

    Derivation: along ``phi_k`` the loss changes by ``Re <gV_:k, i V_:k> = Im d_k``, so a
    phase-invariant loss has ``Im d_k = 0`` exactly. What is computed carries the rounding of
    ``d_k = sum_j conj(V_jk) gV_jk`` (at most ``gamma_n s_k``) and the error ``gV`` brought from its own
    evaluation, both relative to the scale ``s_k = sum_j |V_jk| |gV_jk|`` (which bounds ``|d_k|``),
    while a loss that does depend on ``phi_k`` has ``Im d_k`` a fraction of ``s_k`` that does not
    shrink with the scale. So ``|Im d_k|`` is judged relative to ``s_k``: at most ``sqrt(u) s_k``
    (``u`` the unit roundoff of the values' dtype: 1.5e-8 in double), which leaves eight orders of
    magnitude for the conditioning of ``gV`` above ``n u`` and flags any loss whose phase derivative is
    more than that fraction of its sensitivity. PyTorch compares ``Im d`` with an absolute 1e-2:
    it raises on rounding noise of a large ``gV`` (a second-order seed of 1e9: ``V^H gV`` of 1e17) and
    lets a phase-dependent loss of small scale through (docs/complex.md)."""
    d = to_numpy(d)
    scale = np.sum(np.abs(to_numpy(V)) * np.abs(to_numpy(gV)), axis=-2)
    eps = np.finfo(np.real(d).dtype).eps
    return not bool(np.all(np.abs(np.imag(d)) <= math.sqrt(eps) * scale))


_EIGH_PHASE = (
    "linalg_eigh_backward: The eigenvectors in the complex case are specified up to multiplication "
    "by e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined."
)


def eigh_vjp(c, g):
    """PyTorch's linalg_eig_backward with is_hermitian: ``V (skew(V^H gV) / E + diag(gL)) V^H``;
    for a complex input the loss must not depend on the phases of the eigenvectors
    (``Im diag(V^H gV)`` ~ 0 relative to its scale, :func:`phase_dependent`; else PyTorch's error), and gL replaces the diagonal (the skew part
    keeps its ``i Im`` diagonal when gL is undefined, as in aten)."""
    gL, gV = g
    L, V = c.result, c.result1
    if gV is None:
        return (A.matmul(V * A.unsqueeze(gL, -2), _mH(V)),)
    M = A.matmul(_mH(V), gV)
    if _is_c(M) and not _is_batched(M):  # a host-side check of the values
        _phase_check(not phase_dependent(_diag(M)._data, V._data, gV._data), _EIGH_PHASE)
    inner = _skew_over_gaps(M, L)
    if gL is not None:
        if _is_c(inner):
            inner = inner - _diag_embed(_diag(inner))
        inner = inner + _diag_embed(gL)
    return (A.matmul(V, A.matmul(inner, _mH(V))),)


def eigh_jvp(c, ts):
    """PyTorch's linalg_eig_jvp with is_hermitian: ``dP = V^H dA V``, ``dL = Re diag(dP)``,
    ``dV = V (dP / E)`` with a zero diagonal."""
    (dA,) = ts
    L, V = c.result
    P = A.matmul(_mH(V), A.matmul(dA, V))
    n = L.shape[-1]
    eye = _eye_like(L, n)
    E = A.unsqueeze(L, -2) - A.unsqueeze(L, -1) + eye
    dV = A.matmul(V, (P / E) * (1 - eye))
    dL = _diag(P)
    return (_F().real(dL) if _is_c(dL) else dL), dV


def _front_batch(b, params):
    out = apply(b.rule, (b.expanded(0),), params, cast=b.cast)
    return tuple((o, 0) for o in out) if isinstance(out, tuple) else (out, 0)


rule(
    "linalg_eigh",
    "LinalgEighBackward0",
    ("self",),
    forward=eigh_kernel,
    outputs=2,
    undefined_grads=True,
    vjp=eigh_vjp,
    saves={"result": (0,), "result1": (0,)},
    complex_grads="explicit",  # PyTorch's complex formulas (conjugate transposes, gauge terms)
    jvp=eigh_jvp,
    batch=_front_batch,
    error=_perturbation(_eigh_bound, "Weyl and Davis-Kahan on syevd's backward error (LAPACK UG §4.7)"),
)

# ---- qr --------------------------------------------------------------------------------------------------


def qr_kernel(a, mode):
    xp = namespace_of(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    if a.size == 0:
        qcols = m if mode == "complete" else k
        eye = xp.broadcast_to(xp.eye(m, qcols, dtype=a.dtype), batch + (m, qcols)).copy()
        q = xp.zeros((0,), dtype=a.dtype) if mode == "r" else eye
        return q, xp.zeros(batch + ((m if mode == "complete" else k), n), dtype=a.dtype)
    # A Householder step reflects its pivot alpha to beta = -sign(Re alpha)·|x|; at Re alpha = -0.0
    # PyTorch's LAPACK (MKL) and TensorFlow take the sign +, NumPy's (OpenBLAS) -, and Q's column and
    # R's row change sign with it (QR is unique only up to those phases). + 0.0 turns -0.0 into +0.0
    # (exact otherwise), so a zero of the input's pivots takes PyTorch's sign
    a = a + 0.0
    if mode == "r":
        return xp.zeros((0,), dtype=a.dtype), xp.linalg.qr(a, mode="r").astype(a.dtype, copy=False)
    q, r = xp.linalg.qr(a, mode=mode)
    return q.astype(a.dtype, copy=False), r.astype(a.dtype, copy=False)


_QR_NO_Q = (
    "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
    "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
)
_QR_COMPLETE = "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."


def _qr_check(mode, m, n):
    if mode == "r":
        raise RuntimeError(_QR_NO_Q)
    if mode == "complete" and m > n:
        raise RuntimeError(_QR_COMPLETE)


def _copyltu(M):
    """The symmetric matrix whose lower triangle is M's (tril(M) + tril(M, -1)^T)."""
    T = _T()
    return T.tril(M) + _mT(T.tril(M, -1))


def _qr_square_vjp(gQ, gR, Q, R):
    """m >= n: gA = (gQ + Q copyltu(R gR^T - gQ^T Q)) R^-T. Complex (PyTorch's linalg_qr_backward):
    with X = gR R^H - Q^H gQ, gA = (gQ + Q syminvadj(triu(X))) R^-H, syminvadj(Y) = Y + Y^H with
    the real part of the diagonal halved (the imaginary part of X's diagonal drops out: R's
    diagonal is real)."""
    if _is_c(Q) or _is_c(R):
        T = _T()
        X = A.matmul(gR, _mH(R)) - A.matmul(_mH(Q), gQ)
        up = T.triu(X, 1)
        sym = up + _mH(up) + _diag_embed(_F().real(_diag(X)))
        return A.matmul(gQ + A.matmul(Q, sym), _mH(_inv(R)))
    M = A.matmul(R, _mT(gR)) - A.matmul(_mT(gQ), Q)
    return A.matmul(gQ + A.matmul(Q, _copyltu(M)), _mT(_inv(R)))


def qr_vjp(c, g):
    gQ, gR = g
    m, n = c.shapes[0][-2:]
    _qr_check(c.mode, m, n)
    Q, R = c.result, c.result1
    if gQ is None:
        gQ = A.zeros_like(Q)
    if gR is None:
        gR = A.zeros_like(R)
    if m >= n:
        return (_qr_square_vjp(gQ, gR, Q, R),)
    # m < n: A = Q [U | V] with U square. With X = Q^T gQ - gR R^T (k x k, R whole), the
    # gradient is [Q tril(X - X^T) U^-T | 0] + Q gR (the lower part of X - X^T determines the
    # skew Q^T dQ; PyTorch's trilImInvAdjSkew for real inputs).
    # Complex: X = Q^H gQ - gR R^H and PyTorch's trilImInvAdjSkew, tril(X - X^H) with the
    # imaginary diagonal halved, then R_1^-H.
    T = _T()
    X = A.matmul(_mH(Q), gQ) - A.matmul(gR, _mH(R))
    Y = X - _mH(X)
    low = T.tril(Y, -1) + _diag_embed(_diag(Y)) * 0.5 if _is_c(Y) else T.tril(Y)
    left = A.matmul(A.matmul(Q, low), _mH(_inv(A.narrow(R, -1, 0, m))))
    zeros = A.zeros(tuple(left.shape[:-1]) + (n - m,), dtype=left.dtype, device=left.device)
    return (A.cat([left, zeros], -1) + A.matmul(Q, gR),)


def _qr_square_jvp(dA, Q, R):
    """m >= n: B = Q^T dA R^-1, Omega = tril(B,-1) - tril(B,-1)^T, dR = (B - Omega) R,
    dQ = dA R^-1 - Q (B - Omega)."""
    T = _T()
    Rinv = _inv(R)
    dARinv = A.matmul(dA, Rinv)
    B = A.matmul(_mH(Q), dARinv)
    low = T.tril(B, -1)
    if _is_c(B):  # syminv(sym(B)): triu(B + B^H) with the diagonal halved (Re B_ii)
        Bm = T.triu(B, 1) + _mH(low) + _diag_embed(_F().real(_diag(B)))
    else:
        Bm = B - (low - _mT(low))
    return dARinv - A.matmul(Q, Bm), A.matmul(Bm, R)


def qr_jvp(c, ts):
    (dA,) = ts
    Q, R = c.result
    m, n = c.self.shape[-2:]
    _qr_check(c.mode, m, n)
    if m >= n:
        return _qr_square_jvp(dA, Q, R)
    dQ, dU = _qr_square_jvp(A.narrow(dA, -1, 0, m), Q, A.narrow(R, -1, 0, m))
    dV = A.matmul(_mH(Q), A.narrow(dA, -1, m, n - m) - A.matmul(dQ, A.narrow(R, -1, m, n - m)))
    return dQ, A.cat([dU, dV], -1)


def _qr_batch(b, params):
    out = apply(b.rule, (b.expanded(0),), params, cast=b.cast)
    q, r = out
    return ((q, None) if params["mode"] == "r" else (q, 0)), (r, 0)


rule(
    "linalg_qr",
    "LinalgQrBackward0",
    ("self",),
    forward=qr_kernel,
    outputs=2,
    undefined_grads=True,
    vjp=qr_vjp,
    saves={"result": (0,), "result1": (0,)},
    complex_grads="explicit",  # PyTorch's complex formulas (conjugate transposes, gauge terms)
    jvp=qr_jvp,
    batch=_qr_batch,
    error=_perturbation(
        _qr_bound, "Householder QR backward error (Higham Thm 19.4) and Sun's QR perturbation"
    ),
)

# ---- svd ---------------------------------------------------------------------------------------------------


def svd_kernel(a, full_matrices):
    xp = namespace_of(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    if a.size == 0:
        ucols, vrows = (m, n) if full_matrices else (k, k)
        u = xp.broadcast_to(xp.eye(m, ucols, dtype=a.dtype), batch + (m, ucols)).copy()
        vh = xp.broadcast_to(xp.eye(vrows, n, dtype=a.dtype), batch + (vrows, n)).copy()
        return u, xp.zeros(batch + (k,), dtype=_real_dtype(a.dtype)), vh
    _svd_failed(a)
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    s = s.astype(_real_dtype(a.dtype), copy=False)  # real singular values for complex input
    return u.astype(a.dtype, copy=False), s, vh.astype(a.dtype, copy=False)


_SVD_PHASE = (
    "svd_backward: The singular vectors in the complex case are specified up to multiplication by e^{i phi}. "
    "The specified loss function depends on this phase term, making it ill-defined."
)


def svd_vjp(c, g):
    gU, gS, gVh = g
    U, S, Vh = c.result, c.result1, c.result2
    m, n = c.shapes[0][-2:]
    k = S.shape[-1]
    if c.full_matrices:
        U, Vh = A.narrow(U, -1, 0, k), A.narrow(Vh, -2, 0, k)
        gU = None if gU is None else A.narrow(gU, -1, 0, k)
        gVh = None if gVh is None else A.narrow(gVh, -2, 0, k)
    if gU is None and gVh is None:
        return (A.matmul(U * A.unsqueeze(gS, -2), Vh),)
    # Complex input (PyTorch's svd_backward): the transposes are conjugate transposes; the loss
    # must not depend on the phases (U, V) -> (U L, V L), L = diag(e^{i theta}), i.e.
    # Im diag(skew(U^H gU)) = -Im diag(skew(V^H gV)) (allclose, rtol = atol = 1e-2, else PyTorch's
    # error); with both gU and gVh, diag(skew(U^H gU)) / (2S) joins the diagonal.
    V = _mH(Vh)
    eye = _eye_like(S, k)
    S2 = S * S
    E = A.unsqueeze(S2, -2) - A.unsqueeze(S2, -1) + eye
    inner = None
    J = K = None
    if gU is not None:
        J = A.matmul(_mH(U), gU)
        J = J - _mH(J)
        inner = (J * A.unsqueeze(S, -2)) / E
    if gVh is not None:
        K = A.matmul(Vh, _mH(gVh))
        K = K - _mH(K)
        term = (A.unsqueeze(S, -1) * K) / E
        inner = term if inner is None else inner + term
    complex_ = _is_c(U)
    if complex_ and not _is_batched(inner):
        zero = np.zeros(tuple(S.shape))
        imu = zero if J is None else to_numpy(_diag(J)._data).imag  # host-side checks of the values
        imv = zero if K is None else to_numpy(_diag(K)._data).imag
        _phase_check(np.abs(imu + imv) <= 1e-2 + 1e-2 * np.abs(imv), _SVD_PHASE)
    if gS is not None:
        inner = inner + _diag_embed(gS)
    if complex_ and J is not None and K is not None:
        inner = inner + _diag_embed(_diag(J) / (S * 2.0))
    gA = A.matmul(U, A.matmul(inner, Vh))
    if gU is not None and m > k:
        gUS = gU / A.unsqueeze(S, -2)
        gA = gA + A.matmul(gUS - A.matmul(U, A.matmul(_mH(U), gUS)), Vh)
    if gVh is not None and n > k:
        gVS = _mH(gVh) / A.unsqueeze(S, -2)
        gA = gA + A.matmul(U, _mH(gVS - A.matmul(V, A.matmul(Vh, gVS))))
    return (gA,)


def svd_jvp(c, ts):
    (dA,) = ts
    U, S, Vh = c.result
    m, n = c.self.shape[-2:]
    k = S.shape[-1]
    if c.full_matrices:  # as PyTorch: the extra columns of U (rows of Vh) get a zero tangent
        U, Vh = A.narrow(U, -1, 0, k), A.narrow(Vh, -2, 0, k)
    # Complex input (PyTorch's linalg_svd_jvp): conjugate transposes, dS = Re diag(P), and the
    # phase-fixing terms U diag(i Im P_ii / (2 S)) (dU) and -V diag(i Im P_ii / (2 S)) (dV).
    V = _mH(Vh)
    P = A.matmul(_mH(U), A.matmul(dA, V))
    dS = _diag(P)
    eye = _eye_like(S, k)
    S2 = S * S
    F = (1 - eye) / (A.unsqueeze(S2, -2) - A.unsqueeze(S2, -1) + eye)
    Sr, Sc = A.unsqueeze(S, -2), A.unsqueeze(S, -1)
    dU = A.matmul(U, F * (P * Sr + Sc * _mH(P)))
    dV = A.matmul(V, F * (Sc * P + _mH(P) * Sr))
    if _is_c(P):
        dS = _F().real(dS)
        imS = _diag_embed((_diag(P) - dS) / (S * 2.0))
        dU = dU + A.matmul(U, imS)
        dV = dV - A.matmul(V, imS)
    if m > k:
        dAVS = A.matmul(dA, V) / Sr
        dU = dU + dAVS - A.matmul(U, A.matmul(_mH(U), dAVS))
    if n > k:
        dATUS = A.matmul(_mH(dA), U) / Sr
        dV = dV + dATUS - A.matmul(V, A.matmul(Vh, dATUS))
    dVh = _mH(dV)
    if c.full_matrices:
        batch = tuple(dA.shape[:-2])
        if m > k:
            dU = A.cat([dU, A.zeros(batch + (m, m - k), dtype=dU.dtype, device=dU.device)], -1)
        if n > k:
            dVh = A.cat([dVh, A.zeros(batch + (n - k, n), dtype=dVh.dtype, device=dVh.device)], -2)
    return dU, dS, dVh


rule(
    "linalg_svd",
    "LinalgSvdBackward0",
    ("self",),
    forward=svd_kernel,
    outputs=3,
    undefined_grads=True,
    vjp=svd_vjp,
    saves={"result": (0,), "result1": (0,), "result2": (0,)},
    complex_grads="explicit",  # PyTorch's complex formulas (conjugate transposes, gauge terms)
    jvp=svd_jvp,
    batch=_front_batch,
    error=_perturbation(_svd_bound, "Weyl and Wedin on gesdd's backward error (LAPACK UG §4.9)"),
)

# ---- pinv --------------------------------------------------------------------------------------------------


def _tols(params, m, n, smax):
    """PyTorch's atol/rtol defaults: rtol = eps·max(m, n) when neither is given, 0 when only a
    positive atol is; the cut-off is max(atol, rtol·smax)."""
    if "rcond" in params:  # lstsq: rcond relative to the largest singular value
        rc = params["rcond"]
        return np.zeros_like(smax), np.asarray(rc, dtype=np.float64)
    return np.asarray(params["atol"], dtype=np.float64), np.asarray(params["rtol"], dtype=np.float64)


def pinv_kernel(a, atol, rtol, hermitian, triangular=False):
    xp = namespace_of(a)
    m, n = a.shape[-2:]
    if a.size == 0:
        return xp.zeros(a.shape[:-2] + (n, m), dtype=a.dtype)
    if triangular:  # QR's upper-triangular R (see _inv): back substitution, row by row
        x = xp.zeros(a.shape, dtype=a.dtype)
        eye = xp.eye(n, dtype=a.dtype)
        with np.errstate(all="ignore"):  # a zero diagonal gives inf/nan, as a triangular solve does
            for i in range(n - 1, -1, -1):
                rest = (a[..., i : i + 1, i + 1 :] @ x[..., i + 1 :, :])[..., 0, :]
                x[..., i, :] = (eye[i] - rest) / a[..., i, i : i + 1]
        return x
    atol = xp.asarray(atol, dtype=a.dtype)
    rtol = xp.asarray(rtol, dtype=a.dtype)
    if hermitian:
        _eigh_failed(a, "L")
        L, V = xp.linalg.eigh(a)
        absL = xp.abs(L)
        cut = xp.maximum(atol[..., None], rtol[..., None] * absL.max(-1, keepdims=True))
        with np.errstate(divide="ignore"):
            inv = xp.where(absL > cut, 1 / L, 0).astype(a.dtype)
        return ((V * inv[..., None, :]) @ xp.swapaxes(V, -1, -2).conj()).astype(a.dtype, copy=False)
    _svd_failed(a)
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    cut = xp.maximum(atol[..., None], rtol[..., None] * s[..., :1])
    with np.errstate(divide="ignore"):
        inv = xp.where(s > cut, 1 / s, 0).astype(a.dtype)
    return ((xp.swapaxes(vh, -1, -2).conj() * inv[..., None, :]) @ xp.swapaxes(u, -1, -2).conj()).astype(
        a.dtype, copy=False
    )


def _pinv_vjp_formula(G, X, Ain):
    """gA = -X^T G X^T + (I - A X) G^T X X^T + X^T X G^T (I - X A) (X = A^+; Golub-Pereyra), with
    conjugate transposes for complex input (PyTorch's pinv_backward)."""
    Xt, Gt = _mH(X), _mH(G)
    return (
        -A.matmul(Xt, A.matmul(G, Xt))
        + A.matmul(Gt - A.matmul(Ain, A.matmul(X, Gt)), A.matmul(X, Xt))
        + A.matmul(A.matmul(Xt, X), Gt - A.matmul(A.matmul(Gt, X), Ain))
    )


def _pinv_vjp(c, g):
    if c.params.get("triangular"):  # an inverse: the two projector terms vanish identically
        Xt = _mH(c.result)
        return -A.matmul(Xt, A.matmul(g, Xt))
    return _pinv_vjp_formula(g, c.result, c.self)


def pinv_jvp(c, ts):
    (dA,) = ts
    X, Ain = c.result, c.self
    if c.params.get("triangular"):
        return -A.matmul(X, A.matmul(dA, X))
    dAt = _mH(dA)
    return (
        -A.matmul(X, A.matmul(dA, X))
        + A.matmul(A.matmul(X, _mH(X)), dAt - A.matmul(dAt, A.matmul(Ain, X)))
        + A.matmul(dAt - A.matmul(X, A.matmul(Ain, dAt)), A.matmul(_mH(X), X))
    )


def _pinv_batch(b, params):
    p = dict(params)
    for key in ("atol", "rtol"):
        v = np.asarray(p[key])
        if v.ndim:  # tolerances per matrix: they carry the batch as leading dims
            p[key] = np.broadcast_to(v, (b.size,) + v.shape)
    return apply(b.rule, (b.expanded(0),), p, cast=b.cast), 0


rule(
    "linalg_pinv",
    "LinalgPinvBackward0",
    ("self",),
    forward=pinv_kernel,
    grads=(lambda c, g: _pinv_vjp(c, g),),
    saves={"self": (0,), "result": (0,)},
    complex_grads="explicit",  # PyTorch's complex formulas (conjugate transposes, gauge terms)
    jvp=pinv_jvp,
    batch=_pinv_batch,
    error=_perturbation(_pinv_bound, "Wedin's pseudo-inverse perturbation bound on gesdd's backward error"),
)
RULES_PINV.append(__import__("reference.ops.rules.registry", fromlist=["RULES"]).RULES["linalg_pinv"])

# ---- lstsq ---------------------------------------------------------------------------------------------------


def lstsq_kernel(a, b, rcond, driver):
    """Solution, residuals, rank, singular values of min ||A X - B||_F, as LAPACK's drivers give
    them: the minimum-norm solution with singular values <= rcond·s_max treated as 0 (gelsy,
    gelsd, gelss), or the QR solution (gels, full rank); rank for all but gels, singular values
    for gelsd/gelss, residuals when m > n, the driver is not gelsy and every matrix has full
    rank (as PyTorch)."""
    xp = namespace_of(a, b)
    vector = b.ndim == a.ndim - 1
    bm = b[..., None] if vector else b
    m, n = a.shape[-2:]
    batch = tuple(np.broadcast_shapes(a.shape[:-2], bm.shape[:-2]))
    bm = xp.broadcast_to(bm, batch + (m, bm.shape[-1]))
    k = min(m, n)
    rt = _real_dtype(a.dtype)  # residuals and singular values are real for complex input
    a0 = a
    a = xp.broadcast_to(a, batch + (m, n))
    if a.size == 0 or bm.shape[-1] == 0:
        x = xp.zeros(batch + (n, bm.shape[-1]), dtype=a.dtype)
        s = xp.zeros(a0.shape[:-2] + (k,), dtype=rt)
        rank = xp.zeros(a0.shape[:-2], dtype=np.int64)
    else:
        # rank and singular values belong to A's own batch (PyTorch does not broadcast them)
        s = xp.linalg.svd(a0, compute_uv=False)
        rank = (s > rcond * s[..., :1]).sum(-1).astype(np.int64)
        u, sb, vh = xp.linalg.svd(a, full_matrices=False)
        keep = sb > rcond * sb[..., :1]
        with np.errstate(divide="ignore"):
            inv = xp.where(keep, 1 / sb, 0).astype(a.dtype)
        x = xp.swapaxes(vh, -1, -2).conj() @ (inv[..., None] * (xp.swapaxes(u, -1, -2).conj() @ bm))
        if driver == "gelsy" and xp is np:
            x, rank = _gelsy(a, bm, a0, rcond)
    full = driver == "gels" or (bool((rank == n).all()) if rank.size else True)
    if m > n and full and driver != "gelsy":  # PyTorch gives none for gelsy
        r = a @ x - bm
        res = (r.real * r.real + r.imag * r.imag if r.dtype.kind == "c" else r * r).sum(-2).astype(rt)
    else:
        res = xp.zeros((0,), dtype=rt)
    if driver == "gels":
        rank = xp.zeros((0,), dtype=np.int64)
    if driver not in ("gelsd", "gelss"):
        s = xp.zeros((0,), dtype=rt)
    x = x[..., 0] if vector else x
    return x.astype(a.dtype, copy=False), res, rank, s.astype(rt, copy=False)


def _gelsy(a, bm, a0, rcond):
    """LAPACK's gelsy itself (scipy's binding; NumPy arrays only): its rank comes from a QR with
    column pivoting, not from singular values, so on a rank-deficient input at the cut-off its
    solution differs from the SVD's, as PyTorch's does."""
    import scipy.linalg  # LAPACK's least-squares drivers (NumPy has only gelsd)

    x = np.empty(a.shape[:-2] + (a.shape[-1], bm.shape[-1]), dtype=a.dtype)
    for idx in np.ndindex(*a.shape[:-2]):
        x[idx] = scipy.linalg.lstsq(a[idx], bm[idx], cond=rcond, lapack_driver="gelsy")[0]
    rank = np.empty(a0.shape[:-2], dtype=np.int64)
    ones = np.ones((a0.shape[-2], 1), dtype=a0.dtype)
    for idx in np.ndindex(*a0.shape[:-2]):
        rank[idx] = scipy.linalg.lstsq(a0[idx], ones, cond=rcond, lapack_driver="gelsy")[2]
    return x, rank


def lstsq_vjp(c, g):
    """PyTorch's linalg_lstsq_backward: the solution's gradient is that of pinv(A) @ B; the
    residuals' (m > n, full rank) is that of ||A X - B||^2 at the optimum (X's variation is
    orthogonal to the residual): gA = 2 (r * gL) X^T, gB = -2 r * gL. Complex input: conjugate
    transposes (X^H, B^H, pinv(A)^H), PyTorch's formulas."""
    gX, gL = g[0], g[1]
    a, b = c.self, c.other
    vector = len(c.shapes[1]) == len(c.shapes[0]) - 1
    gXm = A.unsqueeze(gX, -1) if vector else gX
    X = _inv_pinv(a)
    ga = gb = None
    if c.needs[0]:
        bm = A.unsqueeze(b, -1) if vector else b
        ga = _pinv_vjp_formula(A.matmul(gXm, _mH(bm)), X, a)
    if c.needs[1]:
        gb = A.matmul(_mH(X), gXm)
    if gL is not None and gL.numel():
        sol = A.unsqueeze(c.result, -1) if vector else c.result
        bm = A.unsqueeze(b, -1) if vector else b
        r = A.matmul(a, sol) - bm
        rg = r * A.unsqueeze(gL, -2) * 2.0  # residuals keep a trailing 1 in the vector case
        if c.needs[0]:
            ga = ga + A.matmul(rg, _mH(sol))
        if c.needs[1]:
            gb = gb - rg
    out = [None, None]
    for i, gi in ((0, ga), (1, gb)):
        if gi is None:
            continue
        if i == 1 and vector:
            gi = A.squeeze(gi, -1)
        shape = tuple(c.shapes[i])
        out[i] = A.sum_to(gi, shape) if tuple(gi.shape) != shape else gi
    return out


def _inv_pinv(a):
    """PyTorch's gradient of lstsq is that of pinv(A) @ B with pinv's default tolerances."""
    m, n = a.shape[-2:]
    return apply(
        RULES_PINV[0],
        (a,),
        {"atol": 0.0, "rtol": float(np.finfo(a._data.dtype).eps) * max(m, n), "hermitian": False},
    )


def lstsq_jvp(c, ts):
    dA, dB = ts
    a, b = c.self, c.other
    vector = b.ndim == a.ndim - 1
    bm = A.unsqueeze(b, -1) if vector else b
    X = _inv_pinv(a)
    out = None
    if dA is not None:
        dX = A.matmul(pinv_jvp(_Ctx(X, a), (dA,)), bm)
        out = dX
    if dB is not None:
        dBm = A.unsqueeze(dB, -1) if vector else dB
        term = A.matmul(X, dBm)
        out = term if out is None else out + term
    dres = None
    if c.result[1].numel():  # d||r_j||^2 = 2 r_j^T (dA x_j - dB_j): A^T r = 0 at the optimum
        sol = A.unsqueeze(c.result[0], -1) if vector else c.result[0]
        r = A.matmul(a, sol) - bm
        dr = None
        if dA is not None:
            dr = A.matmul(dA, sol)
        if dB is not None:
            dBm = A.unsqueeze(dB, -1) if vector else dB
            dr = -dBm if dr is None else dr - dBm
        if _is_c(r) or _is_c(dr):  # 2 Re(r conj(dr)) (PyTorch's linalg_lstsq_residuals_jvp)
            dres = A.sum(_F().real(r * _F().conj_physical(dr)), -2) * 2.0
        else:
            dres = A.sum(r * dr, -2) * 2.0  # residuals keep a trailing 1 in the vector case
    if out is not None and vector:
        out = A.squeeze(out, -1)
    return out, dres, None, None


class _Ctx:
    def __init__(self, result, self_):
        self.result, self.self, self.params = result, self_, {}


def _lstsq_batch(b, params):
    out = apply(b.rule, (b.expanded(0), b.expanded(1)), params, cast=b.cast)
    res = []
    for o in out:
        if o.ndim == 1 and o.shape[0] == 0:  # an output LAPACK's driver does not give: empty
            o = A.zeros((b.size, 0), dtype=o.dtype, device=o.device)
        res.append((o, 0))
    return tuple(res)


rule(
    "linalg_lstsq",
    "LinalgLstsqBackward0",
    ("self", "other"),
    forward=lstsq_kernel,
    outputs=4,
    vjp=lstsq_vjp,
    saves={"self": (0, 1), "other": (0, 1), "result": (0, 1)},
    complex_grads="explicit",  # PyTorch's complex formulas (conjugate transposes)
    jvp=lstsq_jvp,
    batch=_lstsq_batch,
    error=_perturbation(_lstsq_bound, "the pinv bound (Wedin) for X = A^+ B; residuals by the product rule"),
)

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: the primitives of this family that accept complex tensors (each checked against torch in
#: tests/autograd/test_torch_complex.py); the others refuse them with PyTorch's error
COMPLEX_INPUTS = """
    linalg_eigh linalg_lstsq linalg_pinv linalg_qr linalg_svd
"""
