"""Solves and factorizations of ``torch.linalg`` (real and complex dtypes): linalg_solve (aten's
linalg_solve_ex), linalg_inv (linalg_inv_ex), linalg_solve_triangular, linalg_det, linalg_slogdet,
linalg_cholesky (linalg_cholesky_ex) and the deprecated cholesky, linalg_lu_factor_ex, linalg_lu,
linalg_lu_solve, cholesky_solve, cholesky_inverse, linalg_matrix_exp.

Matrices are the last two dims, every leading dim is a batch dim (broadcast between operands where
PyTorch broadcasts). The primitives take matrix right-hand sides; PyTorch's vector-rhs rules are in
:mod:`reference.ops.functions.linalg_solve`. The VJPs are PyTorch's (``FunctionsManual.cpp``:
``linalg_solve_triangular_backward``, ``linalg_det_backward``, ``slogdet_backward``,
``cholesky_backward``, ``linalg_lu_backward``, ``cholesky_solve_backward``,
``cholesky_inverse_backward``, the block-matrix rule of ``linalg_matrix_exp``) written with table
ops, so they differentiate again. Factorizations needed by a VJP are recomputed from the input
with the table's own rule (as PyTorch does in grad mode) so that double backward sees their
dependence on it.

Error declarations (:func:`reference.errors.bound`) come from Higham, *Accuracy and Stability of
Numerical Algorithms* (2nd ed.), carried to the outputs to first order; each is derived next to its
bound function. ``gamma(k) = k u / (1 - k u)``.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry.
"""

from __future__ import annotations

import numpy as np

from reference import errors
from reference.autograd.dispatch import apply
from reference.autograd.grad_mode import is_grad_enabled
from reference.autograd.tensor import _make
from reference.backend import namespace_of, scipy_linalg_of
from reference.ops import api as A
from reference.ops.functions import complex as F
from reference.ops.functions.shape import diag_embed, tril, triu
from reference.ops.rules.registry import RULES, rule

# ---- kernels (array level) --------------------------------------------------------------------------


def _scipy_linalg(x):
    """scipy.linalg for NumPy arrays, cupyx.scipy.linalg for CuPy ones (solve_triangular, expm):
    reference.backend.scipy_linalg_of."""
    return scipy_linalg_of(namespace_of(x))


def _nb(batch):
    return int(np.prod(batch, dtype=np.int64))


def lu_kernel(a):
    """LAPACK getrf's partial-pivoting LU of ``(..., m, n)``, unblocked: the packed factors, the
    1-based int32 row interchanges and info (the first zero pivot, 1-based; 0 if none). The pivot
    is the first entry of largest magnitude (idamax); a zero pivot column is left unscaled. Complex
    input: the magnitude is izamax's |re| + |im| (LAPACK's cabs1, as MKL's zgetrf, checked against
    torch), not the modulus."""
    xp = namespace_of(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    lu = xp.array(a, copy=True).reshape((_nb(batch), m, n))
    nb = lu.shape[0]
    rows = xp.arange(nb)
    piv = xp.zeros((nb, k), dtype=np.int32)
    info = xp.zeros((nb,), dtype=np.int32)
    for j in range(k):
        col = lu[:, j:, j]
        mag = xp.abs(col.real) + xp.abs(col.imag) if col.dtype.kind == "c" else xp.abs(col)
        p = xp.argmax(mag, axis=1) + j if nb else xp.zeros((0,), dtype=np.int64)
        piv[:, j] = p + 1
        top, other = lu[rows, j, :].copy(), lu[rows, p, :].copy()
        lu[rows, p, :] = top
        lu[rows, j, :] = other
        pv = lu[:, j, j]
        zero = pv == 0
        info = xp.where((info == 0) & zero, j + 1, info).astype(np.int32)
        scale = xp.where(zero, 1, pv)
        lu[:, j + 1 :, j] = lu[:, j + 1 :, j] / scale[:, None]
        lu[:, j + 1 :, j + 1 :] -= lu[:, j + 1 :, j : j + 1] * lu[:, j : j + 1, j + 1 :]
    return lu.reshape(a.shape), piv.reshape(batch + (k,)), info.reshape(batch)


def pivots_to_perm(piv, m):
    """The row permutation ``perm`` with ``(P^T A)[i] = A[perm[i]]`` from LAPACK's interchanges."""
    xp = namespace_of(piv)
    batch, k = piv.shape[:-1], piv.shape[-1]
    flat = piv.reshape((_nb(batch), k)).astype(np.int64) - 1
    perm = xp.broadcast_to(xp.arange(m), (flat.shape[0], m)).copy()
    rows = xp.arange(flat.shape[0])
    for j in range(k):
        p = flat[:, j]
        a, b = perm[rows, j].copy(), perm[rows, p].copy()
        perm[rows, j], perm[rows, p] = b, a
    return perm.reshape(batch + (m,))


def perm_matrix(piv, m, dtype):
    """P with A = P L U (PyTorch's lu_unpack): P[perm[i], i] = 1."""
    xp = namespace_of(piv)
    perm = pivots_to_perm(piv, m)
    eye = xp.eye(m, dtype=dtype)
    return xp.swapaxes(eye[perm], -1, -2)


def _unpack_arrays(lu, piv):
    xp = namespace_of(lu)
    m, n = lu.shape[-2:]
    k = min(m, n)
    L = xp.tril(lu[..., :, :k], -1) + xp.eye(m, k, dtype=lu.dtype)
    U = xp.triu(lu[..., :k, :])
    return perm_matrix(piv, m, lu.dtype), L, U


def _det_kernel(a):
    xp = namespace_of(a)
    n = a.shape[-1]
    if n == 0:
        return xp.ones(a.shape[:-2], dtype=a.dtype)
    lu, piv, _ = lu_kernel(a)
    swaps = (piv != xp.arange(1, n + 1, dtype=np.int32)).sum(-1)
    sign = xp.where(swaps % 2 == 1, -1, 1).astype(a.dtype)
    return sign * xp.prod(xp.diagonal(lu, 0, -2, -1), axis=-1)


def _real_dtype(dt):
    return np.empty((), dtype=dt).real.dtype


def _sgn(d):
    """sgn of an array: sign(x) for real, z / |z| (0 at 0) for complex (PyTorch's sgn)."""
    xp = namespace_of(d)
    if d.dtype.kind != "c":
        return xp.sign(d)
    r = xp.abs(d)
    with np.errstate(invalid="ignore", divide="ignore"):
        return xp.where(r == 0, 0, d / xp.where(r == 0, 1, r)).astype(d.dtype)


def _slogdet_kernel(a):
    """PyTorch's linalg_slogdet from getrf: sign = (+-1) prod sgn(u_ii) (a unit complex number for
    complex input, 0 at a singular matrix), logabsdet = sum log|u_ii| (real: float64 for
    complex128)."""
    xp = namespace_of(a)
    n = a.shape[-1]
    rdt = _real_dtype(a.dtype)
    if n == 0:
        one = xp.ones(a.shape[:-2], dtype=a.dtype)
        return one, xp.zeros(a.shape[:-2], dtype=rdt)
    lu, piv, _ = lu_kernel(a)
    d = xp.diagonal(lu, 0, -2, -1)
    swaps = (piv != xp.arange(1, n + 1, dtype=np.int32)).sum(-1)
    sign = xp.where(swaps % 2 == 1, -1, 1).astype(a.dtype) * xp.prod(_sgn(d), axis=-1)
    with np.errstate(divide="ignore"):
        logabs = xp.sum(xp.log(xp.abs(d)), axis=-1)
    return sign.astype(a.dtype), logabs.astype(rdt)


def _substitute(t, b, lower, unit=False, trans=0):
    """Forward/back substitution of one system, as trsv does it, without stopping at a zero pivot
    (inf/nan follow): scipy.linalg.solve_triangular refuses singular triangles. ``trans``: 0, 1 (T^T)
    or 2 (T^H)."""
    xp = namespace_of(t, b)
    if trans:
        t, lower = (t.T.conj() if trans == 2 else t.T), not lower
    n = t.shape[0]
    x = xp.array(b, dtype=np.result_type(t.dtype, b.dtype), copy=True)
    with np.errstate(all="ignore"):
        for i in range(n) if lower else reversed(range(n)):
            s = slice(0, i) if lower else slice(i + 1, n)
            x[i] = x[i] - t[i, s] @ x[s]
            if not unit:
                x[i] = x[i] / t[i, i]
    return x


def _trsm(sl, t, b, lower, unit=False, trans=0):
    try:
        return sl.solve_triangular(t, b, lower=lower, unit_diagonal=unit, trans=trans, check_finite=False)
    except np.linalg.LinAlgError:  # a zero on the diagonal
        return _substitute(t, b, lower, unit, trans)


def _solve_lu(lu, piv, b, trans=0):
    """getrs: X with op(A) X = B from A's packed LU, op(A) = A (``trans`` 0), A^T (1) or A^H (2, the
    same as 1 for real A); zero pivots give inf/nan as LAPACK's triangular solves do."""
    xp = namespace_of(lu)
    sl = _scipy_linalg(lu)
    n = lu.shape[-1]
    shape = np.broadcast_shapes(lu.shape[:-2], piv.shape[:-1], b.shape[:-2])
    lu_b = xp.broadcast_to(lu, shape + lu.shape[-2:]).reshape((_nb(shape), n, n))
    pv_b = xp.broadcast_to(piv, shape + piv.shape[-1:]).reshape((_nb(shape), n))
    b_b = xp.broadcast_to(b, shape + b.shape[-2:]).reshape((_nb(shape),) + b.shape[-2:])
    out = xp.empty(b_b.shape, dtype=np.result_type(lu.dtype, b.dtype))
    perm = pivots_to_perm(pv_b, n)
    with np.errstate(all="ignore"):
        for i in range(b_b.shape[0]):
            if n == 0 or b_b.shape[-1] == 0:
                break
            if not trans:
                y = _trsm(sl, lu_b[i], b_b[i][perm[i]], True, True)
                out[i] = _trsm(sl, lu_b[i], y, False)
            else:
                y = _trsm(sl, lu_b[i], b_b[i], False, trans=trans)
                y = _trsm(sl, lu_b[i], y, True, True, trans=trans)
                x = xp.empty_like(y)
                x[perm[i]] = y
                out[i] = x
    return out.reshape(shape + b.shape[-2:])


def _solve_kernel(a, b, left, vector=False):
    """gesv (getrf + getrs, PyTorch's and NumPy's solver); X A = B as A^T X^T = B^T. ``vector``: B is
    a (batch of) vector(s), solved as one-column matrices (PyTorch's vector case)."""
    xp = namespace_of(a, b)
    if vector:
        return _solve_kernel(a, b[..., None], left)[..., 0]
    if not left:
        return xp.swapaxes(_solve_kernel(xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2), True), -1, -2)
    lu, piv, _ = lu_kernel(a)
    return _solve_lu(lu, piv, b).astype(a.dtype)


def _inv_kernel(a):
    """PyTorch's linalg_inv_ex: linalg_solve_ex(A, I)."""
    xp = namespace_of(a)
    n = a.shape[-1]
    return _solve_kernel(a, xp.broadcast_to(xp.eye(n, dtype=a.dtype), a.shape), True)


def _triangular_kernel(a, b, upper, left, unitriangular):
    """trsm: X with T X = B (or X T = B); only T's triangle is read (its diagonal not at all when
    ``unitriangular``)."""
    xp = namespace_of(a, b)
    sl = _scipy_linalg(a)
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    n = a.shape[-1]
    a_b = xp.broadcast_to(a, shape + a.shape[-2:]).reshape((_nb(shape), n, n))
    b_b = xp.broadcast_to(b, shape + b.shape[-2:]).reshape((_nb(shape),) + b.shape[-2:])
    out = xp.empty(b_b.shape, dtype=a.dtype)
    with np.errstate(all="ignore"):
        for i in range(b_b.shape[0]):
            if n == 0 or b_b.shape[-1] == 0 or b_b.shape[-2] == 0:
                break
            if left:
                out[i] = _trsm(sl, a_b[i], b_b[i], not upper, unitriangular)
            else:  # X T = B  <=>  T^T X^T = B^T
                out[i] = _trsm(sl, a_b[i], b_b[i].T, not upper, unitriangular, trans=1).T
    return out.reshape(shape + b.shape[-2:])


def cholesky_kernel(a, upper):
    """potrf, unblocked (LAPACK dpotf2, column by column): the lower factor of the matrix whose lower
    triangle is ``a``'s (``upper``: whose upper triangle is, returned as U = L^T), and info (the
    order of the first leading minor that is not positive-definite; 0 if none). Where it fails at
    column j, the factor's first j - 1 columns are computed, (j, j) holds the non-positive pivot and
    the rest is the input's triangle, as dpotf2 leaves it.

    Complex input (zpotf2): A = L L^H of the Hermitian matrix whose lower (``upper``: upper)
    triangle is ``a``; the diagonal's imaginary part is not read, the pivots are real
    (d = Re a_jj - sum_k |l_jk|^2), column entries l_ij = (a_ij - sum_k l_ik conj(l_jk)) / l_jj, and
    ``upper`` gives U = L^H."""
    xp = namespace_of(a)
    n = a.shape[-1]
    cplx = a.dtype.kind == "c"
    src = xp.swapaxes(a, -1, -2) if upper else a
    if upper and cplx:
        src = src.conj()
    src = src.reshape((_nb(a.shape[:-2]), n, n))
    L = xp.tril(src).copy()
    info = xp.zeros((src.shape[0],), dtype=np.int32)
    with np.errstate(invalid="ignore", divide="ignore"):
        for j in range(n):
            live = info == 0
            row = L[:, j, :j]
            if cplx:
                d = src[:, j, j].real - xp.sum(row.real**2 + row.imag**2, axis=-1)
            else:
                d = src[:, j, j] - xp.sum(row**2, axis=-1)
            bad = live & ~(d > 0)
            info = xp.where(bad, j + 1, info).astype(np.int32)
            L[:, j, j] = xp.where(live, xp.where(bad, d, xp.sqrt(xp.abs(d))), L[:, j, j])
            ok = (live & ~bad)[:, None]
            rowc = row.conj() if cplx else row
            col = (src[:, j + 1 :, j] - xp.einsum("bik,bk->bi", L[:, j + 1 :, :j], rowc)) / L[:, j, j][
                :, None
            ]
            L[:, j + 1 :, j] = xp.where(ok, col, L[:, j + 1 :, j])
    L = L.reshape(a.shape)
    if upper:
        U = xp.swapaxes(L, -1, -2)
        return (U.conj() if cplx else U.copy()), info.reshape(a.shape[:-2])
    return L, info.reshape(a.shape[:-2])


def _matrix_exp_kernel(a):
    # scipy.linalg.expm (Pade with scaling and squaring; batched since SciPy 1.9);
    # cupyx.scipy.linalg.expm on CuPy arrays.
    if a.shape[-1] == 0:
        return a.copy()
    return _scipy_linalg(a).expm(a).astype(a.dtype)


# ---- Tensor-level helpers the formulas share ------------------------------------------------------------


def _mT(x):
    return A.transpose(x, -1, -2)


def _F():
    return F


def _is_c(x):
    return x.dtype.kind == "c"


def _conj(x):
    return _F().conj_physical(x) if _is_c(x) else x


def _mH(x):
    """The conjugate transpose (the transpose of a real tensor): the formulas of the rules with
    ``complex_grads="explicit"`` are PyTorch's complex ones, which reduce to the real ones."""
    return _conj(_mT(x))


def _tril(x, k=0):
    return tril(x, k)


def _triu(x, k=0):
    return triu(x, k)


def _diag(x):
    return A.diagonal(x, 0, -2, -1)


def _diag_embed(x):
    return diag_embed(x)


def _eye_like(x):
    n = x.shape[-1]
    return _make(namespace_of(x._data).eye(n, dtype=x.dtype))


def solve(a, b, left=True, vector=False):
    return apply(RULES["linalg_solve"], (a, b), {"left": left, "vector": vector})


def solve_triangular(a, b, upper, left=True, unitriangular=False):
    return apply(
        RULES["linalg_solve_triangular"],
        (a, b),
        {"upper": upper, "left": left, "unitriangular": unitriangular},
    )


def _batch_front(b, params):
    """One-operand ops on the last two dims: the batch dim first, the op unchanged."""
    out = apply(b.rule, (b.front(0),), params, cast=b.cast)
    return tuple((o, 0) for o in out) if isinstance(out, tuple) else (out, 0)


def _batch_broadcast(b, params):
    """Two operands whose batch dims broadcast: batched ones get unit dims after B."""
    rank = max(len(t.shape) for t in b.inputs if t is not None)
    args = tuple(None if t is None else b.aligned(i, rank) for i, t in enumerate(b.inputs))
    return apply(b.rule, args, params, cast=b.cast), 0


# ---- rounding-error bounds (reference.errors.bound) --------------------------------------------------


def _gamma(k, u):
    return k * u / (1 - k * u)


def _gamma_c(k, u, cplx):
    """Higham's gamma(k) of a real derivation, carried to complex arithmetic when ``cplx``.

    Higham (2002) Lemma 3.5: in complex arithmetic (the standard model on the real and imaginary
    parts) an addition is still exact to (1 + d), |d| <= u, a multiplication to |d| <= sqrt(2)
    gamma(2), a division to |d| <= sqrt(2) gamma(4). In the real derivations below, gamma(k) bounds
    the k rounding factors of one term of an inner product or a substitution step (additions, at
    most one multiplication and one division per term). Replacing that multiplication's u by
    2 sqrt(2) u and the division's by 4 sqrt(2) u gives, to first order (the order to which every
    bound here is carried), (k - 2) u + 6 sqrt(2) u <= sqrt(2) (k + 4) u, i.e. sqrt(2) gamma(k + 4).
    Products of k factors (det's pivots) are handled where they occur (sqrt(2) gamma(2k))."""
    return np.sqrt(2.0) * _gamma(k + 4, u) if cplx else _gamma(k, u)


def _f64(x):
    """The array in double precision: float64, or complex128 for complex input."""
    return np.asarray(x, dtype=np.complex128 if np.iscomplexobj(x) else np.float64)


def _isc(x):
    return np.iscomplexobj(x)


def _err(e, like):
    return np.zeros(np.shape(like)) if e is None else _f64(e)


def _abs_inv(a):
    a = _f64(a)
    if a.shape[-1] == 0:  # the moduli (a real bound) of the empty inverse
        return np.abs(a)
    lu, piv, info = lu_kernel(a)
    inv = _solve_lu(lu, piv, np.broadcast_to(np.eye(a.shape[-1]), a.shape))
    return np.where(np.broadcast_to((info != 0)[..., None, None], a.shape), np.inf, np.abs(inv))


def _abs_lu(a):
    """P |L| |U| for the computed factors of A = P L U (float64): Higham's backward-error matrix."""
    lu, piv, _ = lu_kernel(_f64(a))
    P, L, U = _unpack_arrays(lu, piv)
    return np.abs(P) @ (np.abs(L) @ np.abs(U))  # |P| = P, real-typed for complex A too


def _lu_weight(a):
    """|L||U| of A's factors, or (transposed) of A^T's, whichever is larger elementwise: a solver may
    factor either for X A = B (PyTorch solves with A^T; LAPACK's getrs 'T' with A's factors)."""
    return np.maximum(_abs_lu(a), np.swapaxes(_abs_lu(np.swapaxes(_f64(a), -1, -2)), -1, -2))


def _solve_bound(arrays, errs, params, outs, u):
    """Higham Thm 9.4: the LU solve (getrf + getrs) gives (A + dA) x = b with |dA| <= gamma(3n)|L||U|.
    To first order x - x_true = -A^{-1} dA x, so |dx| <= |A^{-1}| (gamma(3n) W + e_A) |x| + |A^{-1}| e_B
    (W = |L||U|, e_A/e_B the inputs' errors). X A = B is the transposed system."""
    a, b = arrays
    x = _f64(outs[0])
    eb = _err(errs[1], b)
    if params.get("vector"):
        x, eb = x[..., None], eb[..., None]
    n = a.shape[-1]
    w = _gamma_c(3 * n, u, _isc(a)) * _lu_weight(a) + _err(errs[0], a)
    ainv = _abs_inv(a)
    with np.errstate(invalid="ignore"):
        out = ainv @ (w @ np.abs(x) + eb) if params["left"] else (np.abs(x) @ w + eb) @ ainv
    return [out[..., 0] if params.get("vector") else out]


def _inv_bound(arrays, errs, params, outs, u):
    """inv(A) = solve(A, I) in PyTorch: the solve's bound with an exact right-hand side,
    |A^{-1}| (gamma(3n) |L||U| + e_A) |X|."""
    a = arrays[0]
    n = a.shape[-1]
    w = _gamma_c(3 * n, u, _isc(a)) * _lu_weight(a) + _err(errs[0], a)
    with np.errstate(invalid="ignore"):
        return [_abs_inv(a) @ w @ np.abs(_f64(outs[0]))]


def _cofactor_array(a):
    """The cofactor matrix C (d det(A) / dA), by the determinants of the minors (float64)."""
    a = _f64(a)
    n = a.shape[-1]
    c = np.zeros(a.shape, dtype=a.dtype)
    if n == 1:
        return np.ones(a.shape, dtype=a.dtype)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, -2), j, -1)
            c[..., i, j] = (-1) ** (i + j) * _det_kernel(minor)
    return c


def _det_bound(arrays, errs, params, outs, u):
    """det = +-prod(diag U) of getrf's factors. Higham Thm 9.3: L U = P^T(A + dA), |dA| <= gamma(n)|L||U|;
    to first order det(A + dA) - det(A) = sum_ij C_ij dA_ij (C the cofactors: det is a polynomial,
    this holds at singular A too); the product of the n pivots rounds n - 1 times: gamma(n-1)|det|.
    Complex A: the LU's gamma(n) as in :func:`_gamma_c`; each of the n - 1 complex multiplications
    of the pivots has |d| <= sqrt(2) gamma(2) (Higham Lemma 3.5), sqrt(2) gamma(2(n-1)) together."""
    a = arrays[0]
    n = a.shape[-1]
    if n == 0:
        return [np.zeros(np.shape(outs[0]))]
    cplx = _isc(a)
    w = _gamma_c(n, u, cplx) * _abs_lu(a) + _err(errs[0], a)
    prop = np.sum(np.abs(_cofactor_array(a)) * w, axis=(-2, -1))
    prod = np.sqrt(2.0) * _gamma(2 * (n - 1), u) if cplx else _gamma(n - 1, u)
    return [prop + prod * np.abs(_f64(outs[0]))]


def _slogdet_bound(arrays, errs, params, outs, u):
    """logabsdet = sum_i log|u_ii|: d logabsdet = tr(A^{-1} dA), so |A^{-T}| : (gamma(n)|L||U| + e_A)
    (Higham Thm 9.3); the n logs (glibc: <= 2 ulp, 4u relative) and their sum (gamma(n-1)) add
    (4u + gamma(n-1)) sum_i |log|u_ii||. The sign is exact while the factorization is nonsingular.

    Complex A: the LU's gamma(n) as in :func:`_gamma_c`; |u_ii| is a hypot (<= 1 ulp: relative
    2u), an absolute 2u in each log, 2nu in all. The sign is prod_i u_ii / |u_ii|: to first order
    d sign = i sign Im tr(A^{-1} dA), |d sign| <= the same propagated term as logabsdet; each
    u_ii / |u_ii| (a complex over a real: two real divisions, |d| <= u, plus |u_ii|'s 2u) adds 3u,
    each of the n - 1 complex multiplications sqrt(2) gamma(2) (Higham Lemma 3.5)."""
    a = arrays[0]
    n = a.shape[-1]
    sign, logabs = outs
    if n == 0:
        return [np.zeros(np.shape(sign)), np.zeros(np.shape(logabs))]
    cplx = _isc(a)
    lu, _, _ = lu_kernel(_f64(a))
    with np.errstate(divide="ignore"):
        terms = np.sum(np.abs(np.log(np.abs(np.diagonal(lu, 0, -2, -1)))), axis=-1)
    w = _gamma_c(n, u, cplx) * _abs_lu(a) + _err(errs[0], a)
    with np.errstate(invalid="ignore"):
        prop = np.sum(np.swapaxes(_abs_inv(a), -1, -2) * w, axis=(-2, -1))
    log_err = prop + (4 * u + _gamma(max(n - 1, 0), u)) * terms
    if not cplx:
        return [np.zeros(np.shape(sign)), log_err]
    sign_err = prop + 3 * n * u + np.sqrt(2.0) * _gamma(2, u) * (n - 1)
    return [sign_err * np.ones(np.shape(sign)), log_err + 2 * n * u]


def _phi_abs(x):
    """|Phi(X)| <= Phi(|X|): the lower triangle with the diagonal halved (the Cholesky derivative)."""
    return np.tril(x) - 0.5 * np.einsum("...ii->...i", x)[..., None] * np.eye(x.shape[-1])


def _cholesky_bound(arrays, errs, params, outs, u):
    """Higham Thm 10.3: the computed factor satisfies L L^T = A + dA, |dA| <= gamma(n+1)|L||L^T|. To
    first order dL = L Phi(L^{-1} dA L^{-T}) (Phi: lower triangle, diagonal halved), so
    |dL| <= |L| Phi(|L^{-1}| (gamma(n+1)|L||L^T| + e_A) |L^{-T}|), e_A read from the triangle used
    (and mirrored). ``upper``: the same for U = L^T. Complex A (A = L L^H): the same with |L^H| = |L|^T
    and gamma(n+1) as in :func:`_gamma_c` (the square root is of a real pivot)."""
    a = arrays[0]
    upper = params["upper"]
    n = a.shape[-1]
    L = _f64(outs[0])
    if upper:
        L = np.swapaxes(L, -1, -2)
    e = _err(errs[0], a)
    if upper:
        e = np.swapaxes(e, -1, -2)
    e = np.tril(e) + np.swapaxes(np.tril(e, -1), -1, -2)
    absL = np.abs(L)
    with np.errstate(invalid="ignore"):
        linv = (
            np.abs(_triangular_kernel(L, np.broadcast_to(np.eye(n), L.shape), False, True, False)) if n else absL
        )
        dA = _gamma_c(n + 1, u, _isc(a)) * absL @ np.swapaxes(absL, -1, -2) + e
        dL = absL @ _phi_abs(linv @ dA @ np.swapaxes(linv, -1, -2))
    return [np.swapaxes(dL, -1, -2) if upper else dL, None]


def _triangular_bound(arrays, errs, params, outs, u):
    """Higham Thm 8.5: substitution gives (T + dT) x = b with |dT| <= gamma(n)|T|; to first order
    |dX| <= |T^{-1}| (gamma(n)|T| + e_T)|X| + |T^{-1}| e_B (right: the transposed system). T is the
    triangle read (unit diagonal: exact, not read)."""
    a, b = arrays
    upper, left, unit = params["upper"], params["left"], params["unitriangular"]
    n = a.shape[-1]
    tri = np.triu if upper else np.tril
    k = (1 if upper else -1) if unit else 0
    t = tri(_f64(a), k) + (np.eye(n) if unit else 0)
    et = tri(_err(errs[0], a), k)
    x = np.abs(_f64(outs[0]))
    with np.errstate(invalid="ignore"):
        tinv = (
            np.abs(_triangular_kernel(t, np.broadcast_to(np.eye(n), t.shape), upper, True, False))
            if n
            else np.abs(t)
        )
        w = _gamma_c(n, u, _isc(a) or _isc(b)) * np.abs(t) + et
        eb = _err(errs[1], b)
        if left:
            return [tinv @ (w @ x + eb)]
        return [(x @ w + eb) @ tinv]


def _lu_factor_errors(a, lu, piv, e_a, u):
    """Higham Thm 9.3: L U = P^T (A + dA), |dA| <= gamma(n)|L||U| (square A). With P^T A = L U, to
    first order L^{-1} P^T dA U^{-1} = L^{-1} dL + dU U^{-1} (strictly lower + upper), so
    |dL| <= |L| tril(M, -1), |dU| <= triu(M)|U|, M = |L^{-1}| (gamma(n)|L||U| + P^T e_A) |U^{-1}|."""
    m, n = a.shape[-2:]
    if m != n:
        raise NotImplementedError(
            "the rounding-error bound of a rectangular LU factorization is not derived in the reference"
        )
    P, L, U = _unpack_arrays(_f64(lu), piv)
    P = np.abs(P)  # the permutation, real-typed (the bounds are real for complex A too)
    eye = np.broadcast_to(np.eye(n), L.shape)
    with np.errstate(all="ignore"):
        linv = np.abs(_triangular_kernel(L, eye, False, True, True)) if n else np.abs(L)
        uinv = np.abs(_triangular_kernel(U, eye, True, True, False)) if n else np.abs(U)
        E = _gamma_c(n, u, _isc(a)) * np.abs(L) @ np.abs(U) + np.swapaxes(P, -1, -2) @ e_a
        M = linv @ E @ uinv
        return P, np.abs(L) @ np.tril(M, -1), np.triu(M) @ np.abs(U)


def _lu_factor_bound(arrays, errs, params, outs, u):
    a = arrays[0]
    lu, piv, _ = outs
    _, dL, dU = _lu_factor_errors(a, lu, piv, _err(errs[0], a), u)
    return [np.tril(dL, -1) + np.triu(dU), None, None]


def _lu_bound(arrays, errs, params, outs, u):
    a = arrays[0]
    P, L, U = outs
    if a.shape[-2] != a.shape[-1]:  # (L and U are not square: no packed form to build below)
        raise NotImplementedError(
            "the rounding-error bound of a rectangular LU factorization is not derived in the reference"
        )
    lu = np.tril(_f64(L), -1) + _f64(U)
    piv = lu_kernel(_f64(a))[1]
    _, dL, dU = _lu_factor_errors(a, lu, piv, _err(errs[0], a), u)
    return [np.zeros(np.shape(P)), np.tril(dL, -1), np.triu(dU)]


def _lu_solve_bound(arrays, errs, params, outs, u):
    """Solving with given factors (two substitutions, Higham Thm 8.5 each) gives
    (L + dL)(U + dU) x = P^T b, i.e. a backward error |dA| <= (2 gamma(n) + gamma(n)^2) |L||U|
    (Higham §9.2, the proof of Thm 9.4); errors in the packed factors perturb A = P L U by
    P (e_L |U| + |L| e_U). Then as for solve, with A^T for ``adjoint`` and the transposed system
    for ``left=False``."""
    lu, piv, b = arrays
    n = lu.shape[-1]
    P, L, U = _unpack_arrays(_f64(lu), piv)
    e = _err(errs[0], lu)
    g = _gamma_c(n, u, _isc(lu) or _isc(b))
    w = np.abs(P) @ ((2 * g + g * g) * np.abs(L) @ np.abs(U) + np.tril(e, -1) @ np.abs(U) + np.abs(L) @ np.triu(e))
    a = P @ L @ U
    if params["adjoint"]:  # A^H (A^T for real A): the moduli are those of A^T
        a, w = np.swapaxes(a, -1, -2), np.swapaxes(w, -1, -2)
    ainv = _abs_inv(a)
    x = np.abs(_f64(outs[0]))
    eb = _err(errs[2], b)
    with np.errstate(invalid="ignore"):
        if params["left"]:
            return [ainv @ (w @ x + eb)]
        return [(x @ w + eb) @ ainv]


def _cholesky_solve_bound(arrays, errs, params, outs, u):
    """potrs: two substitutions with the given factor, (2 gamma(n) + gamma(n)^2)|L||L^T| backward error
    (as for lu_solve); the factor's error perturbs A = L L^T by e_L|L^T| + |L|e_L^T. Then
    |dX| <= |A^{-1}| (W |X| + e_B)."""
    b, lf = arrays
    n = lf.shape[-1]
    L = _f64(lf)
    e = _err(errs[1], lf)
    if params["upper"]:
        L, e = np.swapaxes(L, -1, -2), np.swapaxes(e, -1, -2)
    L, e = np.tril(L), np.tril(e)
    g = _gamma_c(n, u, _isc(lf) or _isc(b))
    absL, absLt = np.abs(L), np.swapaxes(np.abs(L), -1, -2)
    w = (2 * g + g * g) * absL @ absLt + e @ absLt + absL @ np.swapaxes(e, -1, -2)
    ainv = _abs_inv(L @ np.swapaxes(L, -1, -2).conj())  # A = L L^H
    with np.errstate(invalid="ignore"):
        return [ainv @ (w @ np.abs(_f64(outs[0])) + _err(errs[0], b))]


# ---- linalg_solve (aten: linalg_solve_ex; matrix right-hand sides) --------------------------------------


def _col(c, t):
    """A vector-case tensor as a one-column matrix."""
    return A.unsqueeze(t, -1) if c.vector else t


def _uncol(c, t):
    return A.squeeze(t, -1) if c.vector else t


def _solve_vjp(c, g):
    left = c.left
    gb = solve(_mT(c.A), _col(c, g), left)
    ga = None
    if c.needs[0]:
        x = _col(c, c.result)
        ga = -A.matmul(gb, _mT(x)) if left else -A.matmul(_mT(x), gb)
    return ga, _uncol(c, gb) if c.needs[1] else None


def _solve_jvp_a(c, t):
    x = _col(c, c.result)
    return _uncol(c, -solve(c.A, A.matmul(t, x) if c.left else A.matmul(x, t), c.left))


def _solve_batch(b, params):
    """Matrix right-hand sides broadcast like ``_batch_broadcast``; a vector one is a one-column
    matrix at the physical level."""
    if not params.get("vector"):
        return _batch_broadcast(b, params)
    rank = max(len(b.inputs[0].shape), len(b.inputs[1].shape) + 1)
    a = b.aligned(0, rank)
    rhs = b.front(1)
    if rhs is None:
        rhs = A.unsqueeze(b.values[1], -1)
    else:
        shape = tuple(b.inputs[1].shape)
        rhs = A.reshape(rhs, (b.size,) + (1,) * (rank - 1 - len(shape)) + shape + (1,))
    out = apply(b.rule, (a, rhs), {**params, "vector": False}, cast=b.cast)
    return A.squeeze(out, -1), 0


rule(
    "linalg_solve",
    "LinalgSolveExBackward0",
    ("A", "B"),
    forward=_solve_kernel,
    vjp=_solve_vjp,
    saves={"A": (0, 1), "result": (0,)},
    jvp=(_solve_jvp_a, lambda c, t: solve(c.A, t, c.left, c.vector)),
    batch=_solve_batch,
    error=errors.bound(_solve_bound, "Higham (2002) Thm 9.4: LU solve, componentwise backward error"),
)

# ---- linalg_inv (aten: linalg_inv_ex) ---------------------------------------------------------------------

rule(
    "linalg_inv",
    "LinalgInvExBackward0",
    ("A",),
    forward=_inv_kernel,
    grads=(lambda c, g: -A.matmul(A.matmul(_mT(c.result), g), _mT(c.result)),),
    saves={"result": (0,)},
    jvp=(lambda c, t: -A.matmul(A.matmul(c.result, t), c.result),),
    batch=_batch_front,
    error=errors.bound(_inv_bound, "Higham (2002) Thm 9.4: inv(A) = solve(A, I), as PyTorch computes it"),
)

# ---- linalg_solve_triangular ----------------------------------------------------------------------------


def _tri_project(x, upper, unit):
    return _triu(x, 1 if unit else 0) if upper else _tril(x, -1 if unit else 0)


def _triangular_vjp(c, g):
    gb = solve_triangular(_mT(c.A), g, not c.upper, c.left, c.unitriangular)
    ga = None
    if c.needs[0]:
        x = c.result
        ga = -A.matmul(gb, _mT(x)) if c.left else -A.matmul(_mT(x), gb)
        ga = _tri_project(ga, c.upper, c.unitriangular)
    return ga, gb if c.needs[1] else None


def _triangular_jvp(c, ts):
    ta, tb = ts
    x = c.result
    rhs = tb if tb is not None else None
    if ta is not None:
        pa = _tri_project(ta, c.upper, c.unitriangular)
        d = A.matmul(pa, x) if c.left else A.matmul(x, pa)
        rhs = -d if rhs is None else rhs - d
    return solve_triangular(c.A, rhs, c.upper, c.left, c.unitriangular)


rule(
    "linalg_solve_triangular",
    "LinalgSolveTriangularBackward0",
    ("A", "B"),
    forward=_triangular_kernel,
    vjp=_triangular_vjp,
    saves={"A": (0, 1), "result": (0,)},
    jvp=(
        lambda c, t: _triangular_jvp(c, (t, None)),
        lambda c, t: solve_triangular(c.A, t, c.upper, c.left, c.unitriangular),
    ),
    batch=_batch_broadcast,
    error=errors.bound(
        _triangular_bound, "Higham (2002) Thm 8.5: substitution, componentwise backward error"
    ),
)

# ---- linalg_det ----------------------------------------------------------------------------------------


def det(a):
    return apply(RULES["linalg_det"], (a,), {})


def cofactor(a):
    """The cofactor matrix of ``a`` (d det / dA) from the determinants of its minors, in table ops:
    defined, and differentiable, at singular matrices too (PyTorch computes the same adjugate from
    an SVD, https://nhigham.com/2020/06/16/what-is-the-adjugate-of-a-matrix/)."""
    n = a.shape[-1]
    if n == 1:
        return A.ones_like(a)
    rows = []
    for i in range(n):
        ri = A.cat([A.narrow(a, -2, 0, i), A.narrow(a, -2, i + 1, n - i - 1)], -2)
        row = []
        for j in range(n):
            m = A.cat([A.narrow(ri, -1, 0, j), A.narrow(ri, -1, j + 1, n - j - 1)], -1)
            row.append(det(m) * float((-1) ** (i + j)))
        rows.append(A.stack(row, -1))
    return A.stack(rows, -2)


def _numbers_of(value, derivative):
    """``value``'s numbers with ``derivative``'s graph: value.detach() + (derivative -
    derivative.detach()) (the difference is exactly 0; what differentiates it sees only
    ``derivative``)."""
    return value.detach() + (derivative - derivative.detach())


def _det_grad(c, g):
    """PyTorch's linalg_det_backward for the numbers: without grad mode g det A^{-T} from the LU
    with exactly zero pivots replaced by eps, which is 0 at an exactly singular A (det = 0); in grad
    mode the cofactor matrix where |det| < 100 eps (PyTorch: from the SVD) and solve(A^T, g det I)
    elsewhere. In grad mode the graph (what double backward differentiates) is the cofactors' of
    the minors (:func:`cofactor`) everywhere: d det / dA = adj(A)^T, and the second derivative of
    det is the cofactors' derivative, well conditioned near a singular A (linear in A for n = 3),
    where the derivative of det A^{-T}, det (tr(A^{-1}V) A^{-T} - A^{-T} V^T A^{-T}), cancels terms
    of size |det| ||A^{-1}||^2 to a result of size ||adj'||: 3.6e-4 relative at singular values
    (1, 1e-4, 1e-9) through the solve, 1e-16 through the cofactors (test_linalg_accuracy.py)."""
    a, d = c.A, c.result
    if a.numel() == 0:
        return A.zeros_like(a)
    eps = float(np.finfo(np.dtype(a.dtype)).eps)
    gd = A.unsqueeze(A.unsqueeze(g * d, -1), -1)
    eye = _eye_like(a)
    if not is_grad_enabled():
        zero = A.unsqueeze(A.unsqueeze(d == 0, -1), -1)
        safe = A.where(zero, eye, a)
        return A.where(zero, 0.0, gd * _mT(solve(safe, A.expand(eye, safe.shape))))
    wide = A.unsqueeze(A.unsqueeze(A.abs(d) < 100 * eps, -1), -1)
    gc = A.unsqueeze(A.unsqueeze(g, -1), -1) * cofactor(a)
    return _numbers_of(A.where(wide, gc, solve(_mT(A.where(wide, eye, a)), gd * eye)), gc)


def _det_jvp(c, t):
    """PyTorch's linalg_det_jvp for the numbers, det tr(A^{-1} t) (0 at an exactly singular A,
    det = 0); the graph (what a second differentiation sees) is tr(adj(A) t) = sum(cofactor(A) * t)'s:
    the reverse-mode derivative of det tr(A^{-1} t) (vjp_jvp) cancels near a singular A as
    det A^{-T}'s does (see :func:`_det_grad`), the cofactors' is the second derivative itself."""
    a, d = c.A, c.result
    if a.numel() == 0:
        return A.zeros_like(d)
    zero = d == 0
    safe = A.where(A.unsqueeze(A.unsqueeze(zero, -1), -1), _eye_like(a), a)
    pytorch = A.where(zero, 0.0, d * A.sum(_diag(solve(safe, t)), -1))
    return _numbers_of(pytorch, A.where(zero, 0.0, A.sum(cofactor(a) * t, (-2, -1))))


rule(
    "linalg_det",
    "LinalgDetBackward0",
    ("A",),
    forward=_det_kernel,
    grads=(_det_grad,),
    saves={"A": (0,), "result": (0,)},
    jvp=(_det_jvp,),
    batch=_batch_front,
    error=errors.bound(_det_bound, "Higham (2002) Thm 9.3 (LU backward error) and the product of the pivots"),
)

# ---- linalg_slogdet --------------------------------------------------------------------------------------


def _slogdet_grad(c, g):
    """PyTorch's slogdet_backward: gA = s A^{-H} with s = g_logabsdet (real input: the sign has no
    derivative). Complex input: with w = tr(A^{-1} dA), d logabsdet = Re w and d sign = i sign Im w,
    so s = g_logabsdet + i Im(g_sign conj(sign)) (PyTorch's formula, checked against torch)."""
    gs, gl = g
    a = c.A
    cplx = _is_c(a)
    if gl is None and (not cplx or gs is None):
        return None
    if a.numel() == 0:
        return A.zeros_like(a)
    s = gl
    if cplx and gs is not None:
        im = _F().imag(gs * _conj(c.result)) * 1j
        s = im if s is None else s + im
    return solve(_mH(a), A.unsqueeze(A.unsqueeze(s, -1), -1) * _eye_like(a))


def _slogdet_jvp(c, ts):
    """PyTorch's slogdet_jvp: w = tr(A^{-1} t); d logabsdet = Re w, d sign = i sign Im w (0 for
    real input)."""
    (t,) = ts
    sign, logabs = c.result
    if c.A.numel() == 0:
        return A.zeros_like(sign), A.zeros_like(logabs)
    w = A.sum(_diag(solve(c.A, t)), -1)
    if not _is_c(w):
        return A.zeros_like(sign), w
    return sign * (_F().imag(w) * 1j), _F().real(w)


rule(
    "linalg_slogdet",
    "LinalgSlogdetBackward0",
    ("A",),
    forward=_slogdet_kernel,
    outputs=2,
    undefined_grads=True,
    grads=(_slogdet_grad,),
    saves={"A": (0,), "result": (0,)},
    jvp=_slogdet_jvp,
    complex_grads="explicit",  # PyTorch's complex formula (sign and logabsdet are not holomorphic)
    batch=_batch_front,
    error=errors.bound(_slogdet_bound, "Higham (2002) Thm 9.3; glibc log (<= 2 ulp)"),
)

# ---- cholesky ----------------------------------------------------------------------------------------------


def _cholesky_grad_from(L, gL, upper):
    """PyTorch's cholesky_backward: with A = L L^H, gA = L^{-H} herm(Phi(L^H gL)) L^{-1}, Phi the
    lower triangle with the diagonal halved, herm(X) = (X + X^H)/2 (A's perturbations are
    Hermitian); ``upper``: U = L^H. Real input: the transposes."""
    if upper:
        L, gL = _mH(L), _mH(gL)
    p = _tril(A.matmul(_mH(L), gL))
    p = (p + _mH(_tril(p, -1))) * 0.5
    ga = solve_triangular(_mH(L), p, upper=True, left=True)
    return solve_triangular(L, ga, upper=False, left=False)


def _cholesky_jvp_from(L, t, upper):
    """PyTorch's cholesky_jvp: dL = L Phi(L^{-1} dA L^{-H})."""
    if upper:
        L = _mH(L)
    d = solve_triangular(L, t, upper=False, left=True)
    d = solve_triangular(_mH(L), d, upper=True, left=False)
    d = _tril(d) - _diag_embed(_diag(d) * 0.5)
    d = A.matmul(L, d)
    return _mH(d) if upper else d


def _cholesky_ex_grad(c, g):
    gl = g[0]
    if gl is None:
        return None
    return _cholesky_grad_from(c.result, gl, c.upper)


def _cholesky_ex_forward(a, upper):
    return cholesky_kernel(a, upper)


rule(
    "linalg_cholesky_ex",
    "LinalgCholeskyExBackward0",
    ("A",),
    forward=_cholesky_ex_forward,
    outputs=2,
    undefined_grads=True,
    grads=(_cholesky_ex_grad,),
    saves={"result": (0,)},
    jvp=lambda c, ts: (_cholesky_jvp_from(c.result[0], ts[0], c.upper), None),
    batch=_batch_front,
    complex_grads="explicit",  # A = L L^H is not holomorphic: PyTorch's complex formula
    error=errors.bound(_cholesky_bound, "Higham (2002) Thm 10.3: Cholesky, componentwise backward error"),
)


def _cholesky_bound_one(arrays, errs, params, outs, u):
    return _cholesky_bound(arrays, errs, params, list(outs) + [None], u)[:1]


rule(
    "cholesky",
    "CholeskyBackward0",
    ("self",),
    forward=lambda a, upper: cholesky_kernel(a, upper)[0],
    grads=(lambda c, g: _cholesky_grad_from(c.result, g, c.upper),),
    saves={"result": (0,)},
    jvp=(lambda c, t: _cholesky_jvp_from(c.result, t, c.upper),),
    batch=_batch_front,
    complex_grads="explicit",  # A = L L^H is not holomorphic: PyTorch's complex formula
    error=errors.bound(_cholesky_bound_one, "Higham (2002) Thm 10.3: Cholesky, componentwise backward error"),
)

# ---- LU -------------------------------------------------------------------------------------------------


def lu_unpack(lu, piv):
    """P (a constant), L (unit lower, m x k), U (upper, k x n) of packed factors, through the table."""
    return apply(RULES["lu_unpack"], (lu, piv), {})


def _lu_unpack_grad(c, g):
    """The packed factors' gradient: L's strictly lower part and U's upper part, in place."""
    _, gL, gU = g
    m, n = c.shapes[0][-2:]
    k = min(m, n)
    out = None
    if gL is not None:
        gL = _tril(gL, -1)
        if n > k:
            gL = A.cat([gL, A.zeros_like(gL).narrow(-1, 0, 1).expand(*gL.shape[:-1], n - k)], -1)
        out = gL
    if gU is not None:
        gU = _triu(gU)
        if m > k:
            gU = A.cat([gU, A.zeros_like(gU).narrow(-2, 0, 1).expand(*gU.shape[:-2], m - k, n)], -2)
        out = gU if out is None else out + gU
    return out


def _lu_unpack_jvp(c, ts):
    t = ts[0]
    m, n = t.shape[-2:]
    k = min(m, n)
    P = c.result[0]
    return A.zeros_like(P), _tril(A.narrow(t, -1, 0, k), -1), _triu(A.narrow(t, -2, 0, k))


def _lu_unpack_bound(arrays, errs, params, outs, u):
    """No arithmetic: L and U are the packed entries (and exact ones and zeros), P is exact."""
    e = _err(errs[0], arrays[0])
    m, n = e.shape[-2:]
    k = min(m, n)
    return [np.zeros(np.shape(outs[0])), np.tril(e[..., :, :k], -1), np.triu(e[..., :k, :])]


def _lu_unpack_batch(b, params):
    rank = max(len(b.inputs[0].shape), len(b.inputs[1].shape) + 1)
    lu, piv = b.expanded(0), b.expanded(1)
    shape = np.broadcast_shapes(tuple(lu.shape[:-2]), tuple(piv.shape[:-1]))
    lu = A.expand(lu, shape + tuple(lu.shape[-2:]))
    piv = A.expand(piv, shape + tuple(piv.shape[-1:]))
    del rank
    out = apply(b.rule, (A.contiguous(lu), A.contiguous(piv)), params, cast=b.cast)
    return tuple((o, 0) for o in out)


rule(
    "lu_unpack",
    "LuUnpackBackward0",
    ("LU_data", "LU_pivots"),
    forward=lambda lu, piv: _unpack_arrays(lu, piv),
    outputs=3,
    undefined_grads=True,
    grads=(_lu_unpack_grad, None),
    jvp=_lu_unpack_jvp,
    batch=_lu_unpack_batch,
    error=errors.bound(_lu_unpack_bound, "values moved, no arithmetic"),
)


def lu_backward(gL, gU, P, L, U):
    """PyTorch's linalg_lu_backward (A = P L U, real), square, wide (m < n) and tall (m > n)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        ga = None
        if gL is not None:
            ga = _tril(A.matmul(_mT(L), gL), -1)
        if gU is not None:
            t = _triu(A.matmul(gU, _mT(U)))
            ga = t if ga is None else ga + t
        ga = solve_triangular(_mT(U), ga, upper=False, left=False)
        ga = solve_triangular(_mT(L), ga, upper=True, left=True, unitriangular=True)
        return A.matmul(P, ga)
    if m < n:
        U1, U2 = A.narrow(U, -1, 0, k), A.narrow(U, -1, k, n - k)
        ga = None
        if gL is not None:
            ga = A.matmul(_mT(L), gL)
        if gU is not None:
            t = A.matmul(_triu(gU), _mT(U))
            ga = -t if ga is None else ga - t
        ga = solve_triangular(_mT(U1), _tril(ga, -1), upper=False, left=False)
        if gU is not None:
            ga = A.cat([ga + _triu(A.narrow(gU, -1, 0, k)), A.narrow(gU, -1, k, n - k)], -1)
        ga = solve_triangular(_mT(L), ga, upper=True, left=True, unitriangular=True)
        if gU is None:
            ga = A.cat([ga, A.zeros_like(U2)], -1)
        return A.matmul(P, ga)
    L1, L2 = A.narrow(L, -2, 0, k), A.narrow(L, -2, k, m - k)
    ga = None
    if gU is not None:
        ga = A.matmul(gU, _mT(U))
    if gL is not None:
        t = A.matmul(_mT(L), _tril(gL, -1))
        ga = -t if ga is None else ga - t
    ga = solve_triangular(_mT(L1), _triu(ga), upper=True, left=True, unitriangular=True)
    if gL is not None:
        ga = A.cat([ga + _tril(A.narrow(gL, -2, 0, k), -1), A.narrow(gL, -2, k, m - k)], -2)
    ga = solve_triangular(_mT(U), ga, upper=False, left=False)
    if gL is None:
        ga = A.cat([ga, A.zeros_like(L2)], -2)
    return A.matmul(P, ga)


def lu_jvp(t, P, L, U):
    """PyTorch's linalg_lu_jvp (square): with M = L^{-1} P^T dA U^{-1}, dL = L tril(M, -1),
    dU = triu(M) U; wide and tall matrices extend it by the trailing block."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    pt = A.matmul(_mT(P), t)
    if m == n:
        M = solve_triangular(L, pt, upper=False, left=True, unitriangular=True)
        M = solve_triangular(U, M, upper=True, left=False)
        return A.matmul(L, _tril(M, -1)), A.matmul(_triu(M), U)
    if m < n:
        U1 = A.narrow(U, -1, 0, k)
        pt1, pt2 = A.narrow(pt, -1, 0, k), A.narrow(pt, -1, k, n - k)
        M = solve_triangular(L, pt1, upper=False, left=True, unitriangular=True)
        M = solve_triangular(U1, M, upper=True, left=False)
        dL = A.matmul(L, _tril(M, -1))
        dU1 = A.matmul(_triu(M), U1)
        dU2 = solve_triangular(
            L, pt2 - A.matmul(dL, A.narrow(U, -1, k, n - k)), upper=False, unitriangular=True
        )
        return dL, A.cat([dU1, dU2], -1)
    L1 = A.narrow(L, -2, 0, k)
    pt1, pt2 = A.narrow(pt, -2, 0, k), A.narrow(pt, -2, k, m - k)
    M = solve_triangular(L1, pt1, upper=False, left=True, unitriangular=True)
    M = solve_triangular(U, M, upper=True, left=False)
    dU = A.matmul(_triu(M), U)
    dL1 = A.matmul(L1, _tril(M, -1))
    dL2 = solve_triangular(U, pt2 - A.matmul(A.narrow(L, -2, k, m - k), dU), upper=True, left=False)
    return A.cat([dL1, dL2], -2), dU


def _lu_factor_forward(a, pivot):
    return lu_kernel(a)


def _refactor(c):
    """P, L, U of A again, through the table (so the VJP's factors depend on A, also under vmap)."""
    return apply(RULES["linalg_lu"], (c.A,), {"pivot": True})


def _lu_factor_grad(c, g):
    g = g[0]
    if g is None:
        return None
    P, L, U = _refactor(c)
    m, n = g.shape[-2:]
    k = min(m, n)
    gL = _tril(A.narrow(g, -1, 0, k), -1)
    gU = _triu(A.narrow(g, -2, 0, k))
    return lu_backward(gL, gU, P, L, U)


def _lu_factor_jvp(c, ts):
    t = ts[0]
    lu, piv = c.result[0], c.result[1]
    P, L, U = lu_unpack(lu, piv)
    dL, dU = lu_jvp(t, P, L, U)
    m, n = lu.shape[-2:]
    k = min(m, n)
    if n > k:  # pad dL (m x k) and dU (k x n) to the packed m x n
        dL = A.cat([dL, A.zeros_like(A.narrow(t, -1, k, n - k))], -1)
    if m > k:
        dU = A.cat([dU, A.zeros_like(A.narrow(t, -2, k, m - k))], -2)
    return _tril(dL, -1) + _triu(dU), None, None


rule(
    "linalg_lu_factor_ex",
    "LinalgLuFactorExBackward0",
    ("A",),
    forward=_lu_factor_forward,
    outputs=3,
    undefined_grads=True,
    grads=(_lu_factor_grad,),
    saves={"A": (0,)},
    jvp=_lu_factor_jvp,
    batch=_batch_front,
    error=errors.bound(_lu_factor_bound, "Higham (2002) Thm 9.3: LU, componentwise backward error"),
)


def _lu_forward(a, pivot):
    lu, piv, _ = lu_kernel(a)
    return _unpack_arrays(lu, piv)


def _lu_grad(c, g):
    _, gL, gU = g
    if gL is None and gU is None:
        return None
    P, L, U = _refactor(c)
    return lu_backward(gL, gU, P, L, U)


def _lu_jvp(c, ts):
    P, L, U = c.result
    dL, dU = lu_jvp(ts[0], P, L, U)
    return A.zeros_like(P), dL, dU


rule(
    "linalg_lu",
    "LinalgLuBackward0",
    ("A",),
    forward=_lu_forward,
    outputs=3,
    undefined_grads=True,
    grads=(_lu_grad,),
    saves={"A": (0,)},
    jvp=_lu_jvp,
    batch=_batch_front,
    error=errors.bound(_lu_bound, "Higham (2002) Thm 9.3: LU, componentwise backward error"),
)

# ---- linalg_lu_solve ---------------------------------------------------------------------------------------


def _lu_solve_forward(lu, piv, b, left, adjoint):
    """getrs with op(A) = A, or A^H when ``adjoint`` (PyTorch's linalg.lu_solve: the conjugate
    transpose for complex A)."""
    xp = namespace_of(lu, b)
    if left:
        return _solve_lu(lu, piv, b, 2 if adjoint else 0).astype(lu.dtype)
    if not adjoint:  # X A = B  <=>  A^T X^T = B^T
        return xp.swapaxes(_solve_lu(lu, piv, xp.swapaxes(b, -1, -2), 1), -1, -2).astype(lu.dtype)
    # X A^H = B  <=>  A X^H = B^H
    bh = xp.swapaxes(b, -1, -2).conj()
    return xp.swapaxes(_solve_lu(lu, piv, bh, 0), -1, -2).conj().astype(lu.dtype)


def lu_solve(lu, piv, b, left=True, adjoint=False):
    return apply(RULES["linalg_lu_solve"], (lu, piv, b), {"left": left, "adjoint": adjoint})


def _lu_solve_vjp(c, g):
    """op(A) X = B (or X op(A) = B), A = P L U, op(A) = A or A^H (``adjoint``): gB solves the
    adjoint system; g_op(A) is -gB X^H (-X^H gB); with gA = g_op(A) (or its conjugate transpose),
    the packed factors get tril(P^T gA U^H, -1) + triu(L^H P^T gA) (the chain rule through
    A = P L U). PyTorch's linalg_lu_solve_LU / _B formulas; real input: the transposes."""
    lu, piv, x = c.LU, c.pivots, c.result
    gb = lu_solve(lu, piv, g, c.left, not c.adjoint)
    glu = None
    if c.needs[0]:
        gop = -A.matmul(gb, _mH(x)) if c.left else -A.matmul(_mH(x), gb)
        ga = _mH(gop) if c.adjoint else gop
        P, L, U = lu_unpack(lu, piv)
        pga = A.matmul(_mT(P), ga)
        glu = _tril(A.matmul(pga, _mH(U)), -1) + _triu(A.matmul(_mH(L), pga))
    return glu, None, gb if c.needs[2] else None


def _lu_solve_jvp_lu(c, t):
    lu, piv, x = c.LU, c.pivots, c.result
    P, L, U = lu_unpack(lu, piv)
    da = A.matmul(P, A.matmul(_tril(t, -1), U) + A.matmul(L, _triu(t)))
    if c.adjoint:
        da = _mH(da)
    rhs = A.matmul(da, x) if c.left else A.matmul(x, da)
    return -lu_solve(lu, piv, rhs, c.left, c.adjoint)


def _lu_solve_batch(b, params):
    """LU, pivots and B broadcast over their batch dims: batched ones get unit dims after B."""
    rank = max(len(b.inputs[0].shape), len(b.inputs[2].shape))
    lu, piv, rhs = b.aligned(0, rank), b.aligned(1, rank - 1), b.aligned(2, rank)
    return apply(b.rule, (lu, piv, rhs), params, cast=b.cast), 0


rule(
    "linalg_lu_solve",
    "LinalgLuSolveBackward0",
    ("LU", "pivots", "B"),
    forward=_lu_solve_forward,
    vjp=_lu_solve_vjp,
    saves={"LU": (0, 2), "pivots": (0, 2), "result": (0,)},
    jvp=(_lu_solve_jvp_lu, None, lambda c, t: lu_solve(c.LU, c.pivots, t, c.left, c.adjoint)),
    batch=_lu_solve_batch,
    complex_grads="explicit",  # adjoint=True reads conj(A): PyTorch's complex formulas
    error=errors.bound(_lu_solve_bound, "Higham (2002) Thm 8.5 twice: solves with given LU factors"),
)

# ---- cholesky_solve / cholesky_inverse ----------------------------------------------------------------------


def _cholesky_solve_kernel(b, lf, upper):
    """potrs: X with L L^H X = B (``upper``: U^H U X = B); L^H = L^T for real L."""
    xp = namespace_of(b, lf)
    L = xp.swapaxes(lf, -1, -2).conj() if upper else lf
    y = _triangular_kernel(L, b, False, True, False)
    return _triangular_kernel(xp.swapaxes(L, -1, -2).conj(), y, True, True, False)


def cholesky_solve(b, lf, upper=False):
    return apply(RULES["cholesky_solve"], (b, lf), {"upper": upper})


def _cholesky_solve_vjp(c, g):
    gb = cholesky_solve(g, c.input2, c.upper)
    gl = None
    if c.needs[1]:
        common = A.matmul(gb, _mH(c.result))
        common = common + _mH(common)
        gl = -A.matmul(c.input2, common) if c.upper else -A.matmul(common, c.input2)
    return gb, gl


def _dA_of_factor(lf, t, upper):
    """dA of A = L L^H (U^H U) along the factor's tangent t: dK + dK^H."""
    dk = A.matmul(_mH(t), lf) if upper else A.matmul(t, _mH(lf))
    return dk + _mH(dk)


rule(
    "cholesky_solve",
    "CholeskySolveBackward0",
    ("self", "input2"),
    forward=_cholesky_solve_kernel,
    vjp=_cholesky_solve_vjp,
    saves={"input2": (0, 1), "result": (1,)},
    jvp=(
        lambda c, t: cholesky_solve(t, c.input2, c.upper),
        lambda c, t: (
            -cholesky_solve(A.matmul(_dA_of_factor(c.input2, t, c.upper), c.result), c.input2, c.upper)
        ),
    ),
    batch=_batch_broadcast,
    complex_grads="explicit",  # A = L L^H is not holomorphic in L: PyTorch's complex formulas
    error=errors.bound(
        _cholesky_solve_bound, "Higham (2002) Thm 8.5 twice: solves with a given Cholesky factor"
    ),
)


def _cholesky_inverse_kernel(lf, upper):
    xp = namespace_of(lf)
    n = lf.shape[-1]
    return _cholesky_solve_kernel(xp.broadcast_to(xp.eye(n, dtype=lf.dtype), lf.shape), lf, upper)


def _cholesky_inverse_grad(c, g):
    x = c.result
    common = A.matmul(x, A.matmul(g + _mH(g), x))
    return -A.matmul(c.self, common) if c.upper else -A.matmul(common, c.self)


def _cholesky_inverse_bound(arrays, errs, params, outs, u):
    """PyTorch's cholesky_inverse runs LAPACK potri (the triangular inverse, then its product with its
    transpose); the reference's kernel solves with I. The bound used is that of the solve with an
    exact identity right-hand side (potrs: Higham Thm 8.5 twice), which covers the reference's
    algorithm; potri's own error analysis (Higham §14.2: a triangular inverse followed by a product)
    has the same first-order form |A^{-1}| |L||L^T| |X| with a constant of the same order, 2 gamma(n)
    for the two triangular stages."""
    lf = arrays[0]
    n = lf.shape[-1]
    b = np.broadcast_to(np.eye(n), lf.shape)
    (potrs,) = _cholesky_solve_bound((b, lf), (None, errs[0]), params, outs, u)
    # JAX and TensorFlow have no cholesky_inverse: their spelling inverts A = L L^H itself (LU, getri),
    # whose bound (_inv_bound) grows with |A^{-1}| |L_lu| |U_lu| |X| rather than with the Cholesky
    # factor's |L| |L^H| (a TF float32 vmap_vjp at 1.8 times the potrs bound, campaign seed 2). The
    # bound is the larger of the two algorithms'; A's error is the factor's carried to first order,
    # |L| |e_L|^H + |e_L| |L|^H (upper: the same with U^H U).
    f = _f64(lf)
    fh = np.conj(np.swapaxes(f, -1, -2))
    a = fh @ f if params.get("upper") else f @ fh
    e = _err(errs[0], lf)
    eh = np.swapaxes(e, -1, -2)
    ea = (eh @ np.abs(f) + np.abs(fh) @ e) if params.get("upper") else (np.abs(f) @ eh + e @ np.abs(fh))
    (lu,) = _inv_bound((a,), (ea,), params, outs, u)
    return [np.maximum(potrs, lu)]


rule(
    "cholesky_inverse",
    "CholeskyInverseBackward0",
    ("self",),
    forward=_cholesky_inverse_kernel,
    grads=(_cholesky_inverse_grad,),
    saves={"self": (0,), "result": (0,)},
    jvp=(lambda c, t: -A.matmul(A.matmul(c.result, _dA_of_factor(c.self, t, c.upper)), c.result),),
    batch=_batch_front,
    complex_grads="explicit",  # A = L L^H is not holomorphic in L: PyTorch's complex formulas
    error=errors.bound(_cholesky_inverse_bound, "Higham (2002) Thm 8.5 twice (potrs with I)"),
)

# ---- linalg_matrix_exp --------------------------------------------------------------------------------------


def matrix_exp(a):
    return apply(RULES["linalg_matrix_exp"], (a,), {})


def _block_exp(a, e):
    """exp([[a, e], [0, a]])'s upper-right block: the Frechet derivative of exp at a along e
    (Mathias 1996, PyTorch's differential_analytic_matrix_function)."""
    n = a.shape[-1]
    top = A.cat([a, e], -1)
    bottom = A.cat([A.zeros_like(a), a], -1)
    big = matrix_exp(A.cat([top, bottom], -2))
    return A.narrow(A.narrow(big, -2, 0, n), -1, n, n)


rule(
    "linalg_matrix_exp",
    "LinalgMatrixExpBackward0",
    ("self",),
    forward=_matrix_exp_kernel,
    grads=(lambda c, g: _block_exp(_mT(c.self), g),),
    saves={"self": (0,)},
    jvp=(lambda c, t: _block_exp(c.self, t),),
    batch=_batch_front,
    error=None,  # not derived: see the note below
)
# The rounding error of matrix_exp is not declared: Pade with scaling and squaring has a backward
# error bound for the approximant (Higham 2005, SIAM J. Matrix Anal. Appl. 26(4)) but the rounding
# errors of the squaring phase have no a priori componentwise bound (Higham, Functions of Matrices,
# §10.3), so no bound can be derived honestly; its op record is not fuzzed for that reason.

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: every primitive of this family accepts complex tensors (PyTorch defines them on complex numbers)
COMPLEX_INPUTS = True
