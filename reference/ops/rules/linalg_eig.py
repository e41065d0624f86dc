"""The general (non-symmetric) eigendecomposition: ``linalg_eig``, with complex results for real or
complex input, and ``linalg_eig_solve``, the complex linear solve its gradient formulas use.

``torch.linalg.eig(A)`` returns ``L`` and ``V`` with ``A V = V diag(L)``: LAPACK geev's
eigenvalues (in its order) and eigenvectors normalised to unit Euclidean norm (a complex
eigenvector with its largest component real; the phase of each column is otherwise arbitrary,
and differs between LAPACK builds: MKL's and OpenBLAS's real eigenvectors can differ by a sign).
``linalg.eigvals`` is its first output (:mod:`reference.ops.functions.linalg_eig`).

The formulas are PyTorch's ``linalg_eig_backward`` / ``linalg_eig_jvp`` (is_hermitian=false),
written in PyTorch's complex convention (the gradient of a real loss is the conjugate Wirtinger
derivative, docs/complex.md), so the rule declares ``complex_grads="explicit"``. With
``E_ij = L_j - L_i`` (1 on the diagonal):

* VJP, eigenvalues only: ``gA = V^-H diag(gL) V^H`` (finite at repeated eigenvalues);
* VJP, eigenvectors used: ``G = V^H gV``; PyTorch first checks that the loss is invariant under
  ``V -> V diag(e^{i phi})`` (the imaginary part of ``diag(G)`` must be ~0: PyTorch's allclose has
  ``atol = rtol = 1e-2``, the reference's check is relative to ``sum_j |V_jk| |gV_jk|``,
  ``linalg_decomp.phase_dependent``; RuntimeError otherwise, even for a real input); then projects,
  ``G <- G - V^H V diag(Re diag G)``, puts ``gL`` on the diagonal, divides elementwise by
  ``conj(E)`` and returns ``V^-H G V^H`` (a repeated eigenvalue gives inf/nan, as in PyTorch);
  a real input gets the real part (``handle_r_to_c``);
* JVP: ``dP = V^-1 dA V``, ``dL = diag(dP)``, ``dX = V (dP / E, diagonal 0)``,
  ``dV = dX - V diag(Re diag(V^H dX))``.

``V^-H M`` and ``V^-1 M`` are ``linalg_eig_solve`` (LAPACK gesv, like PyTorch's linalg_solve), a
holomorphic primitive of this family (the solve family's primitives take real tensors only), so
the formulas differentiate again.

Error declarations. geev (balancing, Householder reduction to Hessenberg form, shifted QR
iteration, then the eigenvectors from the Schur form) is backward stable: the computed eigenvalues
are exact for ``A + dA`` with ``||dA||_2 <= p(n)·u·||A||_2`` (LAPACK Users' Guide 3rd ed. §4.8,
"p(n) a modestly growing function of n"); as for eigh we take ``p = n²`` (the n - 2 Householder
reflections of the Hessenberg reduction, Higham Thm 19.4, and the backward-stable QR sweeps).
An input error ``e`` adds ``||e||_F`` (>= ``||e||_2``): ``delta = ||e||_F + n²·u·||A||_2``.

* Eigenvalue ``i`` (first-order perturbation, Wilkinson; Bauer-Fike for the whole spectrum):
  with ``x_i``, ``y_i`` the unit right and left eigenvectors, ``dL_i = y_i^H dA x_i / (y_i^H
  x_i)``, so ``|dL_i| <= delta·kappa_i`` with the eigenvalue's condition number
  ``kappa_i = 1/|y_i^H x_i|``. The rows of ``W = V^-1`` are left eigenvectors with ``W_i x_i =
  1``, hence ``kappa_i = ||W_i||_2``.
* Eigenvector ``i``: ``dx_i = sum_{j != i} y_j^H dA x_i / ((L_i - L_j) y_j^H x_j) x_j`` (unit
  ``x_j``), so ``||dx_i||_2 <= eta_i = delta·sum_{j != i} kappa_j/|L_i - L_j|``; renormalising
  ``(x + dx)/||x + dx||`` changes each element by at most ``|dx_j| + |x_j|·|x^H dx| <= 2·eta_i``.
  A complex eigenvector is then rotated to make its largest component ``x_k`` real: the rotation
  angle moves by at most ``asin(2 eta_i/|x_k|) <= pi·eta_i/|x_k|``, adding ``|x_j|·pi·eta_i/|x_k|``
  to element ``j`` (infinite when another component is within ``4·eta_i`` of ``|x_k|``: the
  largest component may change). A real eigenvector (real input, real eigenvalue) keeps geev's
  sign, which perturbation theory does not determine: the bound is up to that sign, and the
  records compare sign- and phase-invariant programs.
* Both bounds are first order; they are infinite where they do not isolate the eigenvalue
  (``delta·(kappa_i + kappa_j) >= |L_i - L_j|`` for some ``j``: the eigenvalues may merge or swap)
  and where ``V`` is numerically singular (a defective matrix).

``linalg_eig_solve`` (gesv, LU with partial pivoting): Higham Thm 9.4 gives ``(A + dA) x = b``
with ``|dA| <= gamma_{3n}|L||U|`` for the computed factors; in complex arithmetic every flop has
a relative error at most ``sqrt(2)·gamma_4 <= 6u`` to first order (Higham Lemma 3.5), so
``gamma_{3n}`` becomes ``gamma_{18n}``. To first order ``|dx| <= |A^-1|·((gamma|L||U| + e_A)|x|
+ e_b)``.
"""

from __future__ import annotations

import math

import numpy as np

import reference
from reference import errors
from reference.autograd.dispatch import apply
from reference.backend import namespace_of
from reference.ops import api as A
from reference.ops.functions import complex as F
from reference.ops.rules.linalg_decomp import _linalg_error, phase_dependent
from reference.ops.rules.registry import RULES, rule

# ---- helpers (differentiable Tensor ops) ---------------------------------------------------------


def _F():
    return F


def _mT(x):
    return A.transpose(x, -2, -1)


def _mH(x):
    return _F().conj_physical(_mT(x))


def _diag(x):
    return A.diagonal(x, 0, -2, -1)


def _diag_embed(x):
    return reference.diag_embed(x)


def _solve(a, b):
    """``a^-1 b`` (``a`` square, the same batch as ``b``) with this family's complex solve."""
    return apply(RULES["linalg_eig_solve"], (a, b), {})


def _gap_matrix(L, conj):
    """``E_ij = L_j - L_i`` with 1 on the diagonal (aten's E; conjugated for the VJP)."""
    if conj:
        L = _F().conj_physical(L)
    n = L.shape[-1]
    E = A.unsqueeze(L, -2) - A.unsqueeze(L, -1)
    return E + A.eye(n, dtype=E.dtype, device=E.device)


def _is_batched(t):
    return getattr(t, "_batched", None) is not None


# ---- the error declarations --------------------------------------------------------------------------


def _fro(e, shape):
    if e is None:
        return np.zeros(shape[:-2])
    e = np.broadcast_to(np.abs(np.asarray(e)).astype(np.float64), shape)
    return np.sqrt((e * e).sum((-2, -1)))


def _norm2(a):
    a = np.asarray(a)
    if a.size == 0:
        return np.zeros(a.shape[:-2])
    return np.linalg.svd(a.astype(np.complex128), compute_uv=False)[..., 0]


def _eig_bound(arrays, errs, params, outs, u):
    """First-order eigenvalue and eigenvector perturbation bounds (module docstring)."""
    a = arrays[0]
    L = np.asarray(outs[0]).astype(np.complex128)
    V = np.asarray(outs[1]).astype(np.complex128)
    n = a.shape[-1]
    if n == 0:
        return [np.zeros(L.shape), np.zeros(V.shape)]
    delta = _fro(errs[0], a.shape) + n * n * u * _norm2(a)
    with np.errstate(all="ignore"):
        try:
            W = np.linalg.inv(V)
            kappa = np.sqrt((np.abs(W) ** 2).sum(-1))  # row norms of V^-1
        except np.linalg.LinAlgError:  # some V exactly singular: per matrix
            kappa = np.empty(L.shape)
            for idx in np.ndindex(*L.shape[:-1]):
                try:
                    kappa[idx] = np.sqrt((np.abs(np.linalg.inv(V[idx])) ** 2).sum(-1))
                except np.linalg.LinAlgError:
                    kappa[idx] = np.inf
        kappa = np.where(np.isfinite(kappa), kappa, np.inf)
        d = delta[..., None]
        dist = np.abs(L[..., :, None] - L[..., None, :])
        off = ~np.eye(n, dtype=bool)
        merge = (off & (d[..., None] * (kappa[..., :, None] + kappa[..., None, :]) >= dist)).any(-1)
        eL = np.where(merge, np.inf, d * kappa)
        eta = d * np.where(off, kappa[..., None, :] / np.where(off, dist, 1.0), 0.0).sum(-1)
        eta = np.where(merge | ~np.isfinite(eta), np.inf, eta)  # (..., n): per column
        absV = np.abs(V)
        eV = 2 * eta[..., None, :] * np.ones_like(absV)
        complex_col = (np.abs(L.imag) > 0) | (a.dtype.kind == "c")
        top = absV.max(-2)  # (..., n)
        second = np.sort(absV, axis=-2)[..., -2, :] if n > 1 else np.zeros_like(top)
        ambiguous = (top - second) <= 4 * eta
        phase = math.pi * eta / top
        phase = np.where(ambiguous, np.inf, phase)
        eV = eV + np.where(complex_col[..., None, :], absV * phase[..., None, :], 0.0)
        eV = np.where(np.isnan(eV), np.inf, eV)
    return [eL, eV]


def _lu_abs(a):
    """|L||U| of gesv's factors (scipy.linalg.lu: LAPACK getrf), float64, per matrix."""
    import scipy.linalg  # LAPACK's getrf factors (NumPy exposes none)

    out = np.empty(a.shape, dtype=np.float64)
    for idx in np.ndindex(*a.shape[:-2]):
        _, lo, up = scipy.linalg.lu(a[idx])
        out[idx] = np.abs(lo) @ np.abs(up)
    return out


def _solve_bound(arrays, errs, params, outs, u):
    """Higham Thm 9.4 with the complex gamma (module docstring), to first order."""
    a = np.asarray(arrays[0]).astype(np.complex128)
    x = np.asarray(outs if not isinstance(outs, (list, tuple)) else outs[0]).astype(np.complex128)
    n = a.shape[-1]
    if a.size == 0 or x.size == 0:
        return [np.zeros(x.shape)]
    k = 18 * n if (a.dtype.kind == "c" or x.dtype.kind == "c") else 3 * n
    gamma = k * u / (1 - k * u)
    ea = 0.0 if errs[0] is None else np.abs(np.asarray(errs[0], dtype=np.float64))
    eb = 0.0 if errs[1] is None else np.abs(np.asarray(errs[1], dtype=np.float64))
    with np.errstate(all="ignore"):
        try:
            ainv = np.abs(np.linalg.inv(a))
        except np.linalg.LinAlgError:
            return [np.full(x.shape, np.inf)]
        back = (gamma * _lu_abs(a) + ea) @ np.abs(x) + eb
        e = ainv @ back
    return [np.where(np.isnan(e), np.inf, e)]


# ---- linalg_eig ----------------------------------------------------------------------------------------


def eig_kernel(a):
    """geev: eigenvalues and unit-norm eigenvectors, complex (complex64 for float32 input)."""
    xp = namespace_of(a)
    ct = A.to_complex(a.dtype)
    n = a.shape[-1]
    if a.size == 0:
        return xp.zeros(a.shape[:-1], dtype=ct), xp.zeros(a.shape, dtype=ct)
    if not bool(xp.isfinite(a).all()):
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    L, V = xp.linalg.eig(a)
    del n
    return L.astype(ct, copy=False), V.astype(ct, copy=False)


def _gauge_check(diag_VhgV, V, gV):
    """The check that the loss does not depend on the phase of the eigenvectors: Im diag(V^H gV) = 0
    relative to its scale (linalg_decomp.phase_dependent; PyTorch's is allclose(Im diag(V^H gV), 0,
    rtol=1e-2, atol=1e-2), absolute; nan fails both); skipped under vmap, as PyTorch skips it for
    tensor subclasses (its batched tensors)."""
    if _is_batched(diag_VhgV):
        return
    if phase_dependent(diag_VhgV._data, V._data, gV._data):  # a host-side check (device-to-host copy)
        raise RuntimeError(
            "linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication "
            "by e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined."
        )


def eig_vjp(c, g):
    """PyTorch's linalg_eig_backward (is_hermitian=false), in its own complex convention."""
    gL, gV = g
    L, V = c.result, c.result1
    if gL is None and gV is None:
        return (None,)
    F = _F()
    Vh = _mH(V)
    if gV is None:
        gA = _solve(Vh, A.unsqueeze(gL, -1) * Vh)
    else:
        VhgV = A.matmul(Vh, gV)
        d = _diag(VhgV)
        _gauge_check(d, V, gV)
        VhgV = VhgV - A.matmul(Vh, V * A.unsqueeze(F.real(d), -2))
        if gL is not None:
            VhgV = VhgV - _diag_embed(_diag(VhgV)) + _diag_embed(gL)
        gA = _solve(Vh, A.matmul(VhgV / _gap_matrix(L, conj=True), Vh))
    if c.dtypes[0].kind != "c":  # handle_r_to_c: a real input gets the real part
        gA = F.real(gA)
    return (gA,)


def eig_jvp(c, ts):
    """PyTorch's linalg_eig_jvp (is_hermitian=false)."""
    (dA,) = ts
    L, V = c.result
    F = _F()
    if dA.dtype.kind != "c":
        dA = A.to(dA, V.dtype)
    dP = _solve(V, A.matmul(dA, V))
    dL = _diag(dP)
    n = L.shape[-1]
    eye = A.eye(n, dtype=L.dtype, device=L.device)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = dP / (A.unsqueeze(L, -2) - A.unsqueeze(L, -1) + eye)
    dX = A.matmul(V, ratio * (1 - eye))
    dV = dX - V * A.unsqueeze(F.real(_diag(A.matmul(_mH(V), dX))), -2)
    return dL, dV


def _front_batch(b, params):
    out = apply(b.rule, (b.expanded(0),), params, cast=b.cast)
    return tuple((o, 0) for o in out)


rule(
    "linalg_eig",
    "LinalgEigBackward0",
    ("self",),
    forward=eig_kernel,
    outputs=2,
    undefined_grads=True,
    vjp=eig_vjp,
    saves={"result": (0,), "result1": (0,)},
    complex_grads="explicit",
    jvp=eig_jvp,
    batch=_front_batch,
    error=errors.bound(
        _eig_bound,
        "geev's backward error (LAPACK UG §4.8) and first-order eigenvalue/eigenvector perturbation "
        "(condition numbers 1/|y^H x|)",
    ),
)

# ---- linalg_eig_solve -----------------------------------------------------------------------------------------


def solve_kernel(a, b):
    xp = namespace_of(a, b)
    dt = np.result_type(a.dtype, b.dtype)
    if a.size == 0 or b.size == 0:
        return xp.zeros(b.shape, dtype=dt)
    try:
        return xp.linalg.solve(a, b).astype(dt, copy=False)
    except np.linalg.LinAlgError:
        raise _linalg_error("linalg.solve: The solver failed because the input matrix is singular.") from None


def _solve_vjp(c, g):
    """The plain (holomorphic) derivative: gB = A^-T g, gA = -gB X^T; PyTorch's A^-H g and
    -gB X^H follow by conjugation (Rule.complex_grads = "conjugate")."""
    gb = _solve(_mT(c.self), g)
    ga = -A.matmul(gb, _mT(c.result)) if c.needs[0] else None
    return ga, (gb if c.needs[1] else None)


def _solve_jvp(c, ts):
    da, db = ts
    rhs = db
    if da is not None:
        t = A.matmul(da, c.result)
        rhs = -t if rhs is None else rhs - t
    return _solve(c.self, rhs)


def _solve_batch(b, params):
    return apply(b.rule, (b.expanded(0), b.expanded(1)), params, cast=b.cast), 0


rule(
    "linalg_eig_solve",
    "LinalgSolveExBackward0",
    ("self", "other"),
    forward=solve_kernel,
    vjp=_solve_vjp,
    saves={"self": (0, 1), "result": (0, 1)},
    jvp=_solve_jvp,
    batch=_solve_batch,
    error=errors.bound(_solve_bound, "Higham Thm 9.4 (gesv), complex flops by Higham Lemma 3.5"),
)

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: every primitive of this family accepts complex tensors (PyTorch defines them on complex numbers)
COMPLEX_INPUTS = True
