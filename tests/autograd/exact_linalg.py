"""The linear-algebra primitives against the mathematics (issue 38).

matmul, mm, bmm, dot, mv, outer, det, slogdet, inv, solve, cholesky, solve_triangular, qr, eigh,
eigvalsh, svd, svdvals, lstsq, pinv, matrix_exp and the matrix norms map float64 matrices X to a
flat vector F(X) (the results concatenated). The exact F is evaluated by mpmath at :data:`DPS`
digits (``mp.matrix`` algorithms: det, inverse, cholesky, qr, eigsy, svd_r, expm; the products as
sums of exact products), and its derivatives by central differences at that precision with the
absolute step :data:`STEP` times the inputs' largest entry (truncation h²·F''' and cancellation
1e-150/h² both below 1e-60 relative on these grids, κ up to 1e10 included):

* ``value``: F(X);
* ``jvp``: DF[V] (a tangent V); ``vjp``: ⟨G, DF[E_k]⟩ for every input entry k (a cotangent G);
* ``jvp_jvp``: H[V, W]; ``vjp_vjp``: ⟨G, H[W, E_k]⟩ (the gradient of ⟨grad⟨G, F⟩, W⟩);
  ``jvp_vjp`` and ``vjp_jvp``: ⟨G, H[V, E_k]⟩ (forward over reverse, reverse over forward), the
  four second-order checks of conformance.case.CHECKS. d1 is the worse of vjp and jvp, d2 the
  worst of the four (cholesky: vjp and vjp_vjp alone, as its record: no forward AD in PyTorch).

G, V, W are fixed draws of N(0, 1) rounded to float64 (exact inputs of the mathematics).

The decompositions have a gauge: the reference's (LAPACK's) signs are kept, and the exact factors
(and those at X ± hV, the same signs by continuity) are aligned to them: Q's columns and R's rows by
the signs of R's diagonal, each eigenvector and each pair (u_i, v_i) by its inner product with the
reference's. The symmetric-input ops (cholesky, eigh, eigvalsh) are measured as functions of
(X + Xᵀ)/2 with symmetric tangents (exact in float64), solve_triangular of tril(A), as PyTorch reads
one triangle; lstsq and pinv of a tall full-rank A, as (AᵀA)⁻¹Aᵀ.

Two measures per check: the worst entry's error in ulps of the exact entry (mixed sense of
tests/autograd/exact_table.py), and the normwise relative error ‖got - exact‖/‖exact‖ divided by
κ·u (u = 2^-53): a backward-stable algorithm's error is about κ·u, so the ratio is the honest
measure where κ is large (the ulps of a small entry of an ill-conditioned result measure the
mathematics' conditioning, not the reference). κ per primitive (:func:`kappa_*`): ‖|A||B|‖/‖AB‖
for the products (the accumulation bound is then γ_n·κ: ratio <= n), κ₂(A) for det, slogdet, inv,
solve, cholesky, qr, solve_triangular (of tril(A)); for lstsq and pinv Wedin's κ + κ²‖r‖/(‖A‖‖x‖)
for the value and κ² for the derivatives (:func:`kappa_least_squares`); 1 for eigenvalues and singular
values (absolutely conditioned by ‖A‖: ‖A‖/‖λ‖, at least 1), ‖A‖₂/gap for the eigen- and
singular vectors and the norms' derivatives (gap: the smallest distance between two eigenvalues,
or singular values, or the smallest singular value for the nuclear norm), max(1, ‖A‖₂) for
matrix_exp. The derivatives are judged with the value's κ (the derivative of A⁻¹ is A⁻¹VA⁻¹,
condition about 2κ; the second about 3κ), except the eigen- and singular values' and the norms',
whose derivatives are as conditioned as the vectors (dλ_i = v_iᵀ dA v_i), and lstsq's and pinv's.

``python -m tests.autograd.exact_linalg [NAME ...] [--small]`` prints the table of
docs/accuracy.md ("Linear algebra (measured)"); tests/autograd/test_linalg_accuracy.py asserts the
ceilings on the smoke grid (``--small``) and, slow, on the full grid.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable

import mpmath as m
import numpy as np

import reference as T
from tests.autograd.exact_table import _fmt, ulps

DPS = 150
STEP = m.mpf(10) ** -40
U = 2.0**-53
#: the unit roundoff of each measured dtype
UNIT = {"float64": U, "float32": 2.0**-24}
FIRST = ("vjp", "jvp")
SECOND = ("vjp_vjp", "jvp_jvp", "vjp_jvp", "jvp_vjp")
CHECKS = ("value",) + FIRST + SECOND
ORDER_OF = {"value": "value", **{c: "d1" for c in FIRST}, **{c: "d2" for c in SECOND}}
#: a matrix is "well-conditioned" (its ulps reported apart) where κ <= this
WELL = 100.0


@dataclasses.dataclass
class Entry:
    """``call(L, *xs)``: the op in ``L`` (the reference or torch), its results flattened and
    concatenated; ``exact(xs, ref)``: the same in mpmath (xs: object arrays of mpf; ref: the
    reference's float64 value, for the gauge), a list of mpf; ``kappa(*xs)``: float64 inputs → κ;
    ``grid``: [(label, inputs)]; ``symmetric``: tangents and cotangents' inputs symmetric."""

    name: str
    call: Callable
    exact: Callable
    kappa: Callable
    grid: list
    small: list
    checks: tuple = CHECKS
    symmetric: bool = False
    #: the dtype the op runs in (float32: complex64 for complex inputs; its inputs and seeds are
    #: float32 numbers, exact inputs of the mathematics, and u is float32's)
    dtype: str = "float64"


# ---- mpmath helpers -------------------------------------------------------------------------------------


def _mp(x):
    x = np.asarray(x)
    if np.iscomplexobj(x):
        return np.vectorize(_c, otypes=[object])(x.astype(np.complex128))
    return np.vectorize(m.mpf, otypes=[object])(np.asarray(x, dtype=np.float64))


def _c(z):
    """An exact mpmath number of a float64 or complex128 one."""
    if isinstance(z, (complex, np.complexfloating)):
        return m.mpc(float(z.real), float(z.imag))
    return m.mpf(float(z))


def _is_complex(a):
    return any(isinstance(v, m.mpc) for v in np.ravel(a))


def _mat(a):
    return m.matrix(a.tolist())


def _arr(M):
    return np.array([[M[i, j] for j in range(M.cols)] for i in range(M.rows)], dtype=object)


def _flat(*parts):
    out = []
    for p in parts:
        out.extend(np.asarray(p, dtype=object).reshape(-1).tolist() if np.ndim(p) else [p])
    return out


def _sym(a):
    """The Hermitian part (a + aᴴ)/2 (symmetric for real a)."""
    return (a + np.conj(a).T) / 2


def _tril(a):
    out = a.copy()
    for i in range(a.shape[0]):
        for j in range(i + 1, a.shape[1]):
            out[i, j] = m.mpf(0)
    return out


def _sign(v):
    return -1 if v < 0 else 1


def _unit(c):
    """c/|c| (the sign of a real c): the gauge factor of a column, 1 at 0."""
    if isinstance(c, (m.mpc, complex, np.complexfloating)):
        c = _c(c) if not isinstance(c, m.mpc) else c
        return c / abs(c) if c != 0 else m.mpf(1)
    return _sign(c)


def _inner(x, y):
    """xᴴy of two columns (mpmath or float64 entries)."""
    return m.fsum(m.conj(_c(a) if not isinstance(a, (m.mpf, m.mpc)) else a) * b for a, b in zip(x, y))


def _eigh(a):
    h = _sym(a)
    E, Q = (m.eighe if _is_complex(h) else m.eigsy)(_mat(h))
    order = sorted(range(len(E)), key=lambda i: E[i])
    return [E[i] for i in order], _arr(Q)[:, order]


def _svd(a):
    Um, S, Vm = (m.svd_c if _is_complex(a) else m.svd_r)(_mat(a))
    order = sorted(range(len(S)), key=lambda i: -S[i])
    return _arr(Um)[:, order], [S[i] for i in order], _arr(Vm)[order, :]


def _align_columns(Q, ref_q):
    """Q's columns times the signs (phases) that make each inner product with the reference's
    real and positive (for a complex Q at X + hV: the gauge Im(qᴴ dq) = 0, PyTorch's)."""
    Q = Q.copy()
    for i in range(Q.shape[1]):
        Q[:, i] = Q[:, i] * m.conj(_unit(_inner(ref_q[:, i], Q[:, i])))
    return Q


# ---- the exact functions ----------------------------------------------------------------------------


def _ex_matmul(xs, ref):
    a, b = xs
    return _flat(np.matmul(a, b))


def _ex_dot(xs, ref):
    a, b = xs
    return [m.fsum(a * b)]


def _ex_outer(xs, ref):
    a, b = xs
    return _flat(np.multiply.outer(a, b))


def _ex_det(xs, ref):
    return [m.det(_mat(xs[0]))]


def _ex_slogdet(xs, ref):
    d = m.det(_mat(xs[0]))
    return [m.mpf(_sign(d)), m.log(abs(d))]


def _ex_inv(xs, ref):
    return _flat(_arr(m.inverse(_mat(xs[0]))))


def _ex_solve(xs, ref):
    a, b = xs
    return _flat(_arr(m.inverse(_mat(a)) * _mat(b)))


def _ex_solve_triangular(xs, ref):
    a, b = xs
    return _flat(_arr(m.inverse(_mat(_tril(a))) * _mat(b)))


def _ex_cholesky(xs, ref):
    return _flat(_arr(m.cholesky(_mat(_sym(xs[0])))))


def _ex_qr(xs, ref):
    a = xs[0]
    n = a.shape[1]
    Q, R = m.qr(_mat(a), mode="skinny")
    Q, R = _arr(Q), _arr(R)
    ref_r = ref[a.shape[0] * n :].reshape(n, n)
    for i in range(n):
        # Q_i u and conj(u) R_i with conj(u) R_ii of the reference's sign (phase: LAPACK's is real)
        u = _unit(m.conj(_c(ref_r[i, i])) * R[i, i])
        Q[:, i], R[i, :] = Q[:, i] * u, R[i, :] * m.conj(u)
    return _flat(Q, R)


def _ex_eigh(xs, ref):
    n = xs[0].shape[0]
    E, Q = _eigh(xs[0])
    return _flat(np.array(E, dtype=object), _align_columns(Q, ref[n:].reshape(n, n)))


def _ex_eigvalsh(xs, ref):
    return _eigh(xs[0])[0]


def _ex_svd(xs, ref):
    a = xs[0]
    r, c = a.shape
    k = min(r, c)
    Um, S, Vh = _svd(a)
    ref_u = ref[: r * k].reshape(r, k)
    for i in range(k):
        u = m.conj(_unit(_inner(ref_u[:, i], Um[:, i])))
        Um[:, i], Vh[i, :] = Um[:, i] * u, Vh[i, :] * m.conj(u)
    return _flat(Um, np.array(S, dtype=object), Vh)


def _ex_svdvals(xs, ref):
    return _svd(xs[0])[1]


def _normal_pinv(a):
    At = _mat(a).T
    return m.inverse(At * _mat(a)) * At


def _ex_lstsq(xs, ref):
    a, b = xs
    return _flat(_arr(_normal_pinv(a) * _mat(b)))


def _ex_pinv(xs, ref):
    return _flat(_arr(_normal_pinv(xs[0])))


def _ex_matrix_exp(xs, ref):
    return _flat(_arr(m.expm(_mat(xs[0]))))


def _ex_norm(ord):
    def f(xs, ref):
        a = xs[0]
        if ord == "fro":
            return [m.sqrt(m.fsum(v * v for v in a.reshape(-1)))]
        if ord == 1:
            return [max(m.fsum(abs(v) for v in a[:, j]) for j in range(a.shape[1]))]
        if ord == math.inf:
            return [max(m.fsum(abs(v) for v in a[i, :]) for i in range(a.shape[0]))]
        S = _svd(a)[1]
        return [{"nuc": m.fsum(S), 2: S[0], -2: S[-1]}[ord]]

    return f


# ---- κ --------------------------------------------------------------------------------------------------


def kappa_product(a, b):
    """‖|A||B|‖/‖AB‖ (the float64 product standing in for the exact one in the denominator)."""
    a, b = np.asarray(a), np.asarray(b)
    exact = np.abs(np.matmul(a, b)) if a.ndim + b.ndim > 2 else abs(float(np.dot(a, b)))
    denom = np.linalg.norm(np.ravel(exact))
    return float(np.linalg.norm(np.ravel(np.matmul(np.abs(a), np.abs(b)))) / denom) if denom else math.inf


def kappa_matrix(a, *rest):
    return float(np.linalg.cond(np.asarray(a)))


def kappa_least_squares(a, b=None):
    """The value's κ + κ²·‖r‖/(‖A‖‖x‖) (Wedin; x the solution, r = b - Ax; pinv: κ), and κ² for
    the derivatives: the pseudo-inverse's derivative holds (AᵀA)⁻¹ = A⁺A⁺ᵀ, whose relative
    condition is κ² (PyTorch's float64 pinv'' at κ = 1e9 is 21 times its own size off, the
    reference's 9: the mathematics, not a formula, is what loses the digits there)."""
    k = float(np.linalg.cond(a))
    value = k
    if b is not None:
        x = np.linalg.lstsq(a, b, rcond=None)[0]
        value = k + k * k * float(np.linalg.norm(b - a @ x) / (np.linalg.norm(a, 2) * np.linalg.norm(x)))
    return (value, k * k, k * k)


def kappa_triangular(a, *rest):
    return float(np.linalg.cond(np.tril(a)))


def kappa_one(a, *rest):
    return 1.0


def _gaps(values):
    v = sorted(values)
    return min(b - a for a, b in zip(v, v[1:])) if len(v) > 1 else math.inf


def kappa_eigvectors(a, *rest):
    s = _sym(np.asarray(a))
    lam = np.linalg.eigvalsh(s)
    return max(1.0, float(np.max(np.abs(lam)) / _gaps(lam)))


def kappa_singular_vectors(a, *rest):
    sv = np.linalg.svd(a, compute_uv=False)
    return max(1.0, float(sv[0] / _gaps(sv)))


def kappa_nuclear(a, *rest):
    sv = np.linalg.svd(a, compute_uv=False)
    return max(1.0, float(sv[0] / min(_gaps(sv), sv[-1])))


def _values_then(vectors):
    """κ 1 for the values (eigen- or singular values: absolutely conditioned), ``vectors``' κ for
    the derivatives (dλ_i = v_iᵀ dA v_i: as conditioned as the vectors)."""
    return lambda *xs: (1.0, vectors(*xs), vectors(*xs))


def kappa_exp(a, *rest):
    return max(1.0, float(np.linalg.norm(a, 2)))


# ---- grids ----------------------------------------------------------------------------------------------

_RNG = np.random.default_rng(20261130)


def _orth(n, rng=_RNG):
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return q


def _with_singular_values(sv, rng=_RNG):
    n = len(sv)
    return _orth(n, rng) @ np.diag(sv) @ _orth(n, rng).T


def _with_eigenvalues(lam, rng=_RNG):
    q = _orth(len(lam), rng)
    a = q @ np.diag(lam) @ q.T
    return _sym(a)  # exactly symmetric in float64


WELL_3 = _RNG.standard_normal((3, 3)) + 3 * np.eye(3)
RAND_3 = _RNG.standard_normal((3, 3))
NEAR_SINGULAR = _with_singular_values([1.0, 1e-4, 1e-9])
SCALED = 1e100 * _RNG.standard_normal((3, 3))  # det 1e300: in range, its derivatives too
TINY = 1e-100 * _RNG.standard_normal((3, 3))
SPD_3 = (lambda b: b @ b.T + 3 * np.eye(3))(_RNG.standard_normal((3, 3)))
SPD_ILL = _with_eigenvalues([1.0, 1e-5, 1e-9 + 1.0e-10])
NEAR_REPEATED = _with_eigenvalues([1.0, 1.0 + 1e-8, 3.0])
CLOSE_SV = _with_singular_values([2.0, 2.0 * (1 + 1e-7), 0.5])
TALL = _RNG.standard_normal((4, 3))
TALL_ILL = np.vstack([NEAR_SINGULAR, _RNG.standard_normal((1, 3)) * 1e-9])
B_32 = _RNG.standard_normal((3, 2))
B_42 = _RNG.standard_normal((4, 2))
LOWER = np.tril(_RNG.standard_normal((3, 3))) + np.diag([2.0, -3.0, 1.5])
LOWER_ILL = np.array([[1.0, 0.0, 0.0], [1e4, 1e-4, 0.0], [-3.0, 7.0, 1e-6]])
EXP_BIG = np.array([[-3.0, 20.0, 0.5], [0.0, -4.0, 1.0], [0.1, 0.0, -5.0]])


def _cancelling_rows():
    """A·B whose first two rows' sums of products cancel (1e16 + 1 - 1e16; 0.1 + 0.2 - 0.3, exact
    5.6e-17 where float64 gives 2.8e-17 or 0) and whose last does not."""
    a = np.array([[1e16, 1.0, -1e16], [0.1, 0.2, -0.3], [1.0, 1e-8, 1.0]])
    b = np.array([[1.0, 2.0], [1.0, 1.0], [1.0, 2.0]])
    return a, b


#: the square inputs of the general-matrix primitives
SQUARE = [
    ("random", RAND_3),
    ("well", WELL_3),
    ("near-singular κ=1e9", NEAR_SINGULAR),
    ("1e100", SCALED),
    ("1e-100", TINY),
]
SYMMETRIC = [
    ("spd", SPD_3),
    ("spd κ=1e9", SPD_ILL),
    ("gap 1e-8", NEAR_REPEATED),
    ("symmetric indefinite", _sym(RAND_3)),
]


def _g(*pairs):
    return [(label, tuple(np.asarray(x, dtype=np.float64) for x in xs)) for label, *xs in pairs]


def _products():
    ca, cb = _cancelling_rows()
    v3 = _RNG.standard_normal(3)
    return {
        "matmul": _g(("random", RAND_3, B_32), ("cancelling", ca, cb), ("1e±100", SCALED, TINY[:, :2])),
        "mm": _g(("random", RAND_3, B_32), ("cancelling", ca, cb)),
        "bmm": _g(
            ("random", np.stack([RAND_3, WELL_3]), np.stack([B_32, -B_32])),
            ("cancelling", np.stack([ca, ca]), np.stack([cb, cb])),
        ),
        "dot": _g(
            ("random", v3, _RNG.standard_normal(3)),
            ("cancelling", [1e16, 1.0, -1e16], [1.0, 1.0, 1.0]),
            ("0.1+0.2-0.3", [0.1, 0.2, -0.3], [1.0, 1.0, 1.0]),
        ),
        "mv": _g(("random", RAND_3, v3), ("cancelling", ca, [1.0, 1.0, 1.0])),
        "outer": _g(
            ("random", v3, _RNG.standard_normal(2)), ("1e±150", [1e150, -3.0, 1e-150], [1e-150, 2.0])
        ),
    }


def _pick(grid, *labels):
    return [g for g in grid if g[0] in labels]


def entries():
    out = {}
    prod = _products()
    square = _g(*((label, a) for label, a in SQUARE))
    sym = _g(*((label, a) for label, a in SYMMETRIC))
    spd = _pick(sym, "spd", "spd κ=1e9")

    def add(name, call, exact, kappa, grid, small, **kw):
        out[name] = Entry(name, call, exact, kappa, grid, small, **kw)

    for name, call, ex in [
        ("matmul", lambda L, a, b: L.matmul(a, b), _ex_matmul),
        ("mm", lambda L, a, b: L.mm(a, b), _ex_matmul),
        ("bmm", lambda L, a, b: L.bmm(a, b), _ex_matmul),
        ("dot", lambda L, a, b: L.dot(a, b), _ex_dot),
        ("mv", lambda L, a, b: L.mv(a, b), _ex_matmul),
        ("outer", lambda L, a, b: L.outer(a, b), _ex_outer),
    ]:
        add(name, call, ex, kappa_one if name == "outer" else kappa_product, prod[name], prod[name][:2])
    add(
        "det",
        lambda L, a: L.linalg.det(a),
        _ex_det,
        kappa_matrix,
        square,
        _pick(square, "random", "near-singular κ=1e9"),
    )
    add(
        "slogdet",
        lambda L, a: L.stack(list(L.linalg.slogdet(a))),
        _ex_slogdet,
        kappa_matrix,
        square,
        _pick(square, "random", "1e100"),
    )
    add(
        "inv",
        lambda L, a: L.linalg.inv(a),
        _ex_inv,
        kappa_matrix,
        square,
        _pick(square, "well", "near-singular κ=1e9"),
    )
    solve_grid = [(label, (a, B_32)) for label, (a,) in square]
    add(
        "solve",
        lambda L, a, b: L.linalg.solve(a, b),
        _ex_solve,
        kappa_matrix,
        solve_grid,
        _pick(solve_grid, "random", "near-singular κ=1e9"),
    )
    tri = _g(
        ("lower", LOWER, B_32),
        ("lower κ=1e10", LOWER_ILL, B_32),
        ("dense (upper ignored)", RAND_3 + 3 * np.eye(3), B_32),
    )
    add(
        "solve_triangular",
        lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False),
        _ex_solve_triangular,
        kappa_triangular,
        tri,
        tri[:2],
    )
    add(
        "cholesky",
        lambda L, a: L.linalg.cholesky((a + a.mT) / 2),
        _ex_cholesky,
        kappa_matrix,
        spd,
        spd,
        checks=("value", "vjp", "vjp_vjp"),
        symmetric=True,
    )
    qr_grid = square + _g(("tall", TALL))
    add(
        "qr",
        lambda L, a: L.cat([t.reshape(-1) for t in L.linalg.qr(a)]),
        _ex_qr,
        kappa_matrix,
        qr_grid,
        _pick(qr_grid, "random", "tall"),
    )
    add(
        "eigh",
        lambda L, a: L.cat([t.reshape(-1) for t in L.linalg.eigh((a + a.mT) / 2)]),
        _ex_eigh,
        kappa_eigvectors,
        sym,
        _pick(sym, "spd", "gap 1e-8"),
        symmetric=True,
    )
    add(
        "eigvalsh",
        lambda L, a: L.linalg.eigvalsh((a + a.mT) / 2),
        _ex_eigvalsh,
        _values_then(kappa_eigvectors),
        sym,
        _pick(sym, "spd", "gap 1e-8"),
        symmetric=True,
    )
    svd_grid = _g(
        ("random", RAND_3),
        ("well", WELL_3),
        ("close σ 1e-7", CLOSE_SV),
        ("near-singular κ=1e9", NEAR_SINGULAR),
        ("tall", TALL),
    )
    add(
        "svd",
        lambda L, a: L.cat([t.reshape(-1) for t in L.linalg.svd(a, full_matrices=False)]),
        _ex_svd,
        kappa_singular_vectors,
        svd_grid,
        _pick(svd_grid, "random", "close σ 1e-7"),
    )
    add(
        "svdvals",
        lambda L, a: L.linalg.svdvals(a),
        _ex_svdvals,
        _values_then(kappa_singular_vectors),
        svd_grid,
        _pick(svd_grid, "random", "near-singular κ=1e9"),
    )
    tall = _g(("tall", TALL, B_42), ("tall κ=1e9", TALL_ILL, B_42))
    add(
        "lstsq", lambda L, a, b: L.linalg.lstsq(a, b).solution, _ex_lstsq, kappa_least_squares, tall, tall[:1]
    )
    add(
        "pinv",
        lambda L, a: L.linalg.pinv(a),
        _ex_pinv,
        kappa_least_squares,
        [(label, (a,)) for label, (a, _) in tall],
        [(label, (a,)) for label, (a, _) in tall[:1]],
    )
    exp_grid = _g(("random", RAND_3), ("‖A‖ = 20, non-normal", EXP_BIG), ("tiny", 1e-8 * RAND_3))
    add("matrix_exp", lambda L, a: L.linalg.matrix_exp(a), _ex_matrix_exp, kappa_exp, exp_grid, exp_grid[:1])
    norm_grid = _g(("random", RAND_3), ("well", WELL_3), ("close σ 1e-7", CLOSE_SV), ("1e100", SCALED))
    for ord, kap in [
        ("fro", kappa_one),
        ("nuc", _values_then(kappa_nuclear)),
        (2, _values_then(kappa_singular_vectors)),
        (-2, _values_then(kappa_nuclear)),
        (1, kappa_one),
        (math.inf, kappa_one),
    ]:
        call = (lambda o: lambda L, a: L.linalg.matrix_norm(a, ord=o))(ord)
        add(f"matrix_norm_{ord}", call, _ex_norm(ord), kap, norm_grid, norm_grid[:1])
    return out


ENTRIES = entries()

#: the primitives of the derivative table in this family not measured here, and why
NOT_MEASURED = {
    "complex inputs, eig, eigvals, lu, lu_factor, lu_solve, batched forms": "tests/autograd/exact_linalg_more.py",
    "cholesky_solve, cholesky_inverse, lu_unpack, complex lstsq/pinv/matrix_exp, float32": "tests/autograd/exact_linalg_rest.py",
    "householder_product": "no record; a product of reflections",
    "float16 and bfloat16": "no LAPACK kernels (unsupported in PyTorch's CPU, the reference and the records)",
}


# ---- the reference's answers and the exact ones ---------------------------------------------------------


def _draw(shape, rng, symmetric, cplx=False):
    x = rng.standard_normal(shape)
    if cplx:
        x = x + 1j * rng.standard_normal(shape)
    if symmetric and len(shape) == 2 and shape[0] == shape[1]:
        # exactly Hermitian: (x + xᴴ)/2 = x in float64
        x = np.tril(x, -1) + np.tril(x, -1).conj().T + np.diag(np.diag(x).real)
    return x


def _np(t):
    t = t.detach()
    try:
        a = t.numpy()
    except RuntimeError:  # torch's ZeroTensor
        a = t.numpy(force=True)
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64).reshape(-1)


def _tensor(lib, x, dtype="float64"):
    wide = dtype == "float64"
    return lib.tensor(x, dtype=(lib.complex128 if wide else lib.complex64) if np.iscomplexobj(x) else getattr(lib, dtype))


def _rounded(x, dtype):
    """x rounded to ``dtype`` (its real or complex kind), kept as a float64/complex128 array."""
    x = np.asarray(x)
    if dtype == "float64":
        return x
    narrow = np.complex64 if np.iscomplexobj(x) else np.float32
    return x.astype(narrow).astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def _real_inner(a, b):
    """Re Σ conj(b)·a of two tensors (Σ a·b for real ones): the real scalar whose gradient is the
    vjp_vjp check's (PyTorch's gradient convention: ∂/∂Re + i ∂/∂Im of a real function)."""
    return (a * b.conj()).real.sum() if a.is_complex() or b.is_complex() else (a * b).sum()


def answers(entry, xs, lib=T, seed=0, tracker=None):
    """{check: float64 vector} of the reference (or torch) in ``entry.dtype`` and the seeds (G, V, W)
    used (``xs`` must be numbers of that dtype: :func:`_rounded`). With a ``tracker``
    (reference.errors.Tracker, the reference only) also {check: the declared bound of each entry},
    the inputs and seeds exact: ``(out, seeds, bounds)``."""
    rng = np.random.default_rng(seed)
    dt = entry.dtype
    f = lambda *a: entry.call(lib, *a).reshape(-1)  # noqa: E731

    def tensor(x):
        t = _tensor(lib, x, dt)
        if tracker is not None:
            tracker.set_error(t, np.zeros(t.shape))
        return t

    prim = tuple(tensor(x) for x in xs)
    y0 = f(*prim)
    G = rng.standard_normal(y0.shape[0])
    if y0.is_complex():
        G = G + 1j * rng.standard_normal(y0.shape[0])
    G = _rounded(G, dt)
    V = [_rounded(_draw(x.shape, rng, entry.symmetric, np.iscomplexobj(x)), dt) for x in xs]
    W = [_rounded(_draw(x.shape, rng, entry.symmetric, np.iscomplexobj(x)), dt) for x in xs]
    g, v, w = tensor(G), tuple(tensor(t) for t in V), tuple(tensor(t) for t in W)
    out = {"value": _np(y0)}
    bounds = {}

    def bound(check, ts):
        if tracker is not None:
            bounds[check] = np.concatenate(
                [np.ravel(tracker.error_of(t)) if t is not None else np.zeros(x.size) for t, x in zip(ts, xs)]
                if isinstance(ts, tuple)
                else [np.ravel(tracker.error_of(ts))]
            )

    bound("value", y0)

    def cat(ts):
        return np.concatenate([_np(t) if t is not None else np.zeros(x.size) for t, x in zip(ts, xs)])

    def vjp_of(fn, *a):
        return lib.func.vjp(fn, *a)[1]

    def take(check, ts):
        out[check] = cat(ts) if isinstance(ts, tuple) else _np(ts)
        bound(check, ts)

    checks = entry.checks
    if "vjp" in checks:
        take("vjp", tuple(vjp_of(f, *prim)(g)))
    if "jvp" in checks:
        take("jvp", lib.func.jvp(f, prim, v)[1])
    if "jvp_jvp" in checks:
        take("jvp_jvp", lib.func.jvp(lambda *a: lib.func.jvp(f, a, v)[1], prim, w)[1])
    if "vjp_vjp" in checks:
        req = tuple(p.clone().requires_grad_(True) for p in prim)
        grads = lib.autograd.grad(f(*req), req, g, create_graph=True)
        s = sum(_real_inner(gr, wi) for gr, wi in zip(grads, w))
        if s.requires_grad:
            take("vjp_vjp", tuple(lib.autograd.grad(s, req, allow_unused=True)))
        else:  # a linear op (lu_unpack): the gradient is constant, its own derivative 0
            take("vjp_vjp", tuple(None for _ in req))
    if "jvp_vjp" in checks:
        take("jvp_vjp", tuple(lib.func.jvp(lambda *a: vjp_of(f, *a)(g), prim, v)[1]))
    if "vjp_jvp" in checks:
        take("vjp_jvp", tuple(vjp_of(lambda *a: lib.func.jvp(f, a, v)[1], *prim)(g)))
    if tracker is not None:
        return out, (G, V, W), bounds
    return out, (G, V, W)


def exact_answers(entry, xs, ref_value, seeds):
    """{check: list of mpf}: the same checks of the mathematics (see the module docstring)."""
    G, V, W = seeds
    checks = entry.checks
    X = [_mp(x) for x in xs]
    Gm = [_c(t) for t in G]
    Vm, Wm = [_mp(t) for t in V], [_mp(t) for t in W]
    # the step relative to the smallest non-zero input entry (an entry of 1e-150 beside one of 1e150:
    # a step relative to the largest swamps it), and as many more digits as the entries span decades,
    # twice (the second differences divide by h²)
    sizes = [abs(complex(t)) for x in xs for t in np.ravel(x) if t != 0] or [1.0]
    span = math.log10(max(sizes) / min(sizes))
    with m.workdps(DPS + int(2 * span)):
        h = STEP * m.mpf(min(sizes))

        def F(*delta):
            args = [
                x + sum((c * d[i] for c, d in delta), start=np.zeros(x.shape, dtype=object) * 0)
                for i, x in enumerate(X)
            ]
            return entry.exact(args, ref_value)

        def phi(*delta):
            # Re⟨G, F⟩ = Re Σ conj(G)·F: the cotangent's real-valued loss
            return m.fsum(m.re(m.conj(a) * b) for a, b in zip(Gm, F(*delta)))

        def units():
            """Per input entry k its unit directions: E_k, and iE_k for a complex input (the
            gradient entry is ∂/∂Re + i ∂/∂Im: :func:`_grad`)."""
            for i, x in enumerate(xs):
                for k in range(x.size):
                    dirs = []
                    for unit in (m.mpf(1), m.mpc(0, 1))[: 2 if np.iscomplexobj(x) else 1]:
                        e = [np.zeros(t.shape, dtype=object) * 0 for t in xs]
                        flat = e[i].reshape(-1)
                        flat[k] = unit
                        e[i] = flat.reshape(xs[i].shape)
                        dirs.append(e)
                    yield dirs

        def _grad(partial):
            return [
                partial(d[0]) if len(d) == 1 else partial(d[0]) + m.mpc(0, 1) * partial(d[1]) for d in units()
            ]

        def d1(fn, D):
            return [(a - b) / (2 * h) for a, b in zip(_list(fn((h, D))), _list(fn((-h, D))))]

        def d2(fn, D, E):
            pp, pm = _list(fn((h, D), (h, E))), _list(fn((h, D), (-h, E)))
            mp_, mm = _list(fn((-h, D), (h, E))), _list(fn((-h, D), (-h, E)))
            return [(a - b - c + d) / (4 * h * h) for a, b, c, d in zip(pp, pm, mp_, mm)]

        out = {"value": F()}
        if "jvp" in checks:
            out["jvp"] = d1(F, Vm)
        if "vjp" in checks:
            out["vjp"] = _grad(lambda e: d1(phi, e)[0])
        if "jvp_jvp" in checks:
            out["jvp_jvp"] = d2(F, Vm, Wm)
        if "vjp_vjp" in checks:
            out["vjp_vjp"] = _grad(lambda e: d2(phi, Wm, e)[0])
        if "jvp_vjp" in checks or "vjp_jvp" in checks:
            hv = _grad(lambda e: d2(phi, Vm, e)[0])
            for c in ("jvp_vjp", "vjp_jvp"):
                if c in checks:
                    out[c] = hv
    return out


def _list(v):
    return v if isinstance(v, list) else [v]


def _ulps(got, exact):
    """exact_table.ulps; a complex entry's error |got - exact| in ulps of |exact| (mixed sense)."""
    if not isinstance(exact, m.mpc) and not np.iscomplexobj(got):
        return ulps(float(got), exact)
    if not np.isfinite(got):
        return math.inf
    scale = max(abs(exact), m.mpf(2.0**-1022)) * m.mpf(2) ** -52
    return float(abs(_c(got) - exact) / scale)


def measure(entry, small=False, lib=T):
    """{order: {"ulps": (worst, check, label), "ulps_well": ..., "ratio": ...}}: the worst entry in
    ulps over the whole grid and over its well-conditioned matrices (κ <= WELL), and the worst
    normwise relative error over κ·u."""
    worst = {}

    def note(order, key, err, check, label):
        slot = worst.setdefault(order, {})
        if key not in slot or err > slot[key][0] or math.isnan(err):
            slot[key] = (err, check, label)

    u = UNIT[entry.dtype]
    for label, xs in entry.small if small else entry.grid:
        got, seeds = answers(entry, xs, lib)
        ex = exact_answers(entry, xs, got["value"], seeds)
        kappas = entry.kappa(*xs)
        kappas = kappas if isinstance(kappas, tuple) else (kappas,) * 3
        # well-conditioned: the value's κ and the matrix's own (a small eigenvalue of an ill-conditioned
        # matrix is only absolutely accurate: κ 1 for the eigenvalues, u·‖A‖/λ_min relative)
        well = kappas[0] <= WELL and (np.ndim(xs[0]) != 2 or np.linalg.cond(xs[0]) <= WELL)
        for check, vals in got.items():
            order = ORDER_OF[check]
            kappa = kappas[("value", "d1", "d2").index(order)]
            e = ex[check]
            with m.workdps(DPS):
                # in ulps of the entry's dtype (float64's ulps scaled by U/u)
                errs = [_ulps(a, b) * (U / u) for a, b in zip(vals, e)]
                worst_ulps = max(errs) if errs else 0.0
                num = (
                    m.sqrt(m.fsum(abs(_c(a) - b) ** 2 for a, b in zip(vals, e)))
                    if all(map(np.isfinite, vals))
                    else m.inf
                )
                den = m.sqrt(m.fsum(abs(b) ** 2 for b in e))
            ratio = float(num / den) / (kappa * u) if den else (0.0 if num == 0 else math.inf)
            note(order, "ulps", worst_ulps, check, label)
            note(order, "ratio", ratio, check, label)
            if well:
                note(order, "ulps_well", worst_ulps, check, label)
    return worst


def row(name, small=False, entries=None):
    w = measure((ENTRIES if entries is None else entries)[name], small)
    cells = []
    for order in ("value", "d1", "d2"):
        if order not in w:
            cells.append("—")
            continue
        slot = w[order]
        well = _fmt(slot["ulps_well"][0]) if "ulps_well" in slot else "—"
        r = slot["ratio"]
        cells.append(f"{well} / {_fmt(slot['ulps'][0])} / {_fmt(r[0])} ({r[1]}, {r[2]})")
    return f"| {name} | " + " | ".join(cells) + " |"


HEADER = "| primitive | value: ulps (κ <= 100) / ulps (all) / worst err/(κu) | d1 | d2 |\n|---|---|---|---|"


def main(argv=None, entries=None):
    """Print the table of ``entries`` (default :data:`ENTRIES`; tests.autograd.exact_linalg_more
    passes its own)."""
    import warnings

    warnings.simplefilter("ignore")
    argv = sys.argv[1:] if argv is None else argv
    entries = ENTRIES if entries is None else entries
    names = [a for a in argv if not a.startswith("--")] or list(entries)
    print(HEADER)
    for name in names:
        print(row(name, "--small" in argv, entries), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
