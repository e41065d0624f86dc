"""The rest of linear algebra against the mathematics (issue 38), by tests/autograd/exact_linalg.py's
machinery (value, vjp, jvp and the four second-order checks against mpmath at 150 digits; the same
two figures, ulps and err/(κ·u), in the entry's dtype):

* **float64 rows not measured before**: linalg.cholesky(upper=True) in all seven checks (the
  linalg_cholesky_ex record's; exact_linalg's cholesky row is torch.cholesky's vjp and vjp_vjp),
  cholesky_solve and cholesky_inverse (of a given factor:
  the exact X = (L Lᴴ)⁻¹ B, or (Uᴴ U)⁻¹ B with upper=True, as a function of the whole matrix L:
  PyTorch's derivative convention, :func:`_gram`), lu_unpack (the packed factors moved into P, L, U; pivots fixed), and complex128
  lstsq, pinv (tall full-rank A: (AᴴA)⁻¹Aᴴ) and matrix_exp.
* **float32 and complex64** (``dtype="float32"``; u = 2^-24): eig, eigvals, lu, lu_factor,
  lu_solve, cholesky_solve, cholesky_inverse, lstsq, pinv. The inputs and seeds are float32
  numbers (exact inputs of the mathematics); the reference computes in float32 (getrf's loop
  and scipy's single-precision LAPACK in float32; NumPy's eig, lstsq and pinv in float64, rounded
  once). The ill-conditioned grids have κ = 1e5 (κ·u = 6e-3: a float32 answer keeps digits).
  float16 and bfloat16 have no LAPACK kernels (PyTorch's CPU raises, and so do the reference and
  the records: those cases are unsupported), so there is nothing lower to measure.

:func:`bound_ratios` reads each check's declared error bound (reference.errors.Tracker with the
entry's precision, the inputs exact: the records' bound) and divides by it the error of the
reference's answer and that of the exact answer rounded once to the dtype (an exactly-rounded
evaluation): a bound is honest where both ratios are at most 1.

``python -m tests.autograd.exact_linalg_rest [NAME ...] [--small] [--bounds]`` prints the rows (and
with --bounds the bound ratios); tests/autograd/test_linalg_accuracy_rest.py asserts the ceilings.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import warnings

import mpmath as m
import numpy as np

from reference import errors
from tests.autograd import exact_linalg as E
from tests.autograd import exact_linalg_more as M

_RNG = np.random.default_rng(20261202)


def _f32(x):
    return E._rounded(x, "float32")


def _lower_factor(a):
    return np.linalg.cholesky(a)


SPD_FACTOR = _lower_factor(E.SPD_3)
SPD_ILL_FACTOR = _lower_factor(E.SPD_ILL)  # κ(L Lᵀ) = 1e9
C_HPD_FACTOR = _lower_factor(M.C_HPD)
C_B = M.C_B
C_TALL = M.C_TALL
C_TALL_ILL = np.vstack([M.C_NEAR_SINGULAR, 1e-9 * M._crandn(1, 3, rng=_RNG)])
C_B42 = M._crandn(4, 2, rng=_RNG)
#: float32's ill-conditioned inputs: κ = 1e5 (κ·u = 6e-3)
NEAR_SINGULAR_32 = _f32(E._with_singular_values([1.0, 1e-2, 1e-5], _RNG))
SPD_ILL_32 = _f32(_lower_factor(E._with_eigenvalues([1.0, 1e-3, 1e-5], _RNG)))
TALL_ILL_32 = _f32(np.vstack([NEAR_SINGULAR_32, 1e-5 * _RNG.standard_normal((1, 3))]))
EIG_CLOSE_32 = np.array([[1.0, 1.0, 0.3], [0.0, 1.0 + 2.0**-10, -0.7], [0.2, 0.0, 3.0]])


# ---- the exact functions ------------------------------------------------------------------------


def _tri(a, upper):
    return E._tril(a.T).T if upper else E._tril(a)


def _gram(f, upper):
    """L Lᴴ of the lower factor (Uᴴ U of the upper one), as an mp matrix, of the whole input: the
    kernel (potrs) reads one triangle, but PyTorch's derivatives are those of the formula in the
    whole matrix (CholeskySolveBackward0's -(G Xᴴ + X Gᴴ)·L has an upper triangle too), a
    convention the reference keeps; at a triangular input the values agree."""
    F = E._mat(f)
    return F.H * F if upper else F * F.H


def _ex_cholesky_solve(upper):
    return lambda xs, ref: E._flat(E._arr(m.inverse(_gram(xs[1], upper)) * E._mat(xs[0])))


def _ex_cholesky_inverse(upper):
    return lambda xs, ref: E._flat(E._arr(m.inverse(_gram(xs[0], upper))))


def _ex_cholesky_upper(xs, ref):
    """U = Lᴴ of the Hermitian part's Cholesky factor (linalg.cholesky(upper=True))."""
    return E._flat(E._arr(m.cholesky(E._mat(E._sym(xs[0]))).H))


def _normal_pinv_h(a):
    A = E._mat(a)
    return m.inverse(A.H * A) * A.H


def _ex_c_lstsq(xs, ref):
    return E._flat(E._arr(_normal_pinv_h(xs[0]) * E._mat(xs[1])))


def _ex_c_pinv(xs, ref):
    return E._flat(E._arr(_normal_pinv_h(xs[0])))


def _ex_lu_unpack(perm):
    def f(xs, ref):
        lu = xs[0]
        n = lu.shape[0]
        L = np.array([[lu[i, j] if j < i else m.mpf(int(i == j)) for j in range(n)] for i in range(n)], dtype=object)
        return E._flat(perm.astype(object), L, _tri(lu, upper=True))

    return f


# ---- κ ------------------------------------------------------------------------------------------


def kappa_factor(*xs):
    """κ₂(L Lᴴ) = κ₂(L)² of the factor (the last input; cholesky_solve's B is the first)."""
    return float(np.linalg.cond(np.tril(xs[-1]))) ** 2


def kappa_factor_upper(*xs):
    return float(np.linalg.cond(np.triu(xs[-1]))) ** 2


# ---- entries ------------------------------------------------------------------------------------


def _g(*pairs, dtype="float64"):
    return [(label, tuple(E._rounded(np.asarray(x), dtype) for x in xs)) for label, *xs in pairs]


def _lu_unpack_call(piv):
    return lambda L, lu: L.cat([t.reshape(-1) for t in L.lu_unpack(lu, L.tensor(piv))])


def _float64_entries(add):
    chol = _g(("spd", E.B_32, SPD_FACTOR), ("spd κ=1e9", E.B_32, SPD_ILL_FACTOR))
    add("cholesky_solve", lambda L, b, f: L.cholesky_solve(b, f), _ex_cholesky_solve(False), kappa_factor, chol, chol[:1])
    c_chol = _g(("c hpd, upper", C_B, C_HPD_FACTOR.conj().T))
    add(
        "c_cholesky_solve_upper",
        lambda L, b, f: L.cholesky_solve(b, f, upper=True),
        _ex_cholesky_solve(True),
        kappa_factor_upper,
        c_chol,
        c_chol,
    )
    inv = [(label, (f,)) for label, (_, f) in chol]
    add("cholesky_inverse", lambda L, f: L.cholesky_inverse(f), _ex_cholesky_inverse(False), kappa_factor, inv, inv[:1])
    c_inv = _g(("c hpd", C_HPD_FACTOR))
    add("c_cholesky_inverse", lambda L, f: L.cholesky_inverse(f), _ex_cholesky_inverse(False), kappa_factor, c_inv, c_inv)
    # linalg.cholesky (the linalg_cholesky_ex record) in every check: exact_linalg's cholesky row is
    # torch.cholesky's record (vjp and vjp_vjp: no forward AD there); upper=True, real and complex
    spd = _g(("spd", E.SPD_3), ("spd κ=1e9", E.SPD_ILL), ("c hpd", M.C_HPD))
    add(
        "cholesky_upper",
        lambda L, a: L.linalg.cholesky((a + a.mT.conj()) / 2, upper=True),
        _ex_cholesky_upper,
        E.kappa_matrix,
        spd,
        spd[::2],
        symmetric=True,
    )
    lu, piv, perm = M._lu_factor_of(E.RAND_3)
    unpack = _g(("random", lu))
    add("lu_unpack", _lu_unpack_call(piv), _ex_lu_unpack(perm), E.kappa_one, unpack, unpack)
    tall = _g(("c tall", C_TALL, C_B42), ("c tall κ=1e9", C_TALL_ILL, C_B42))
    add("c_lstsq", lambda L, a, b: L.linalg.lstsq(a, b).solution, _ex_c_lstsq, E.kappa_least_squares, tall, tall[:1])
    pinv = [(label, (a,)) for label, (a, _) in tall]
    add("c_pinv", lambda L, a: L.linalg.pinv(a), _ex_c_pinv, E.kappa_least_squares, pinv, pinv[:1])
    exp = _g(("c random", M.C_RAND), ("c ‖A‖ = 20, non-normal", E.EXP_BIG * (1 + 1j) / 2))
    add("c_matrix_exp", lambda L, a: L.linalg.matrix_exp(a), E._ex_matrix_exp, E.kappa_exp, exp, exp[:1])


def _float32_entries(add):
    more = M.ENTRIES
    eig = _g(
        ("real, complex pair", E.RAND_3),
        ("real, λ 2^-10 apart", EIG_CLOSE_32),
        ("c random", M.C_RAND),
        dtype="float32",
    )
    for name in ("eig", "eigvals"):
        add(f"{name}_32", more[name].call, more[name].exact, M.kappa_eig, eig, [eig[0], eig[2]])
    lu_grid = _g(("random", E.RAND_3), ("near-singular κ=1e5", NEAR_SINGULAR_32), ("c random", M.C_RAND), dtype="float32")
    add("lu_32", more["lu"].call, more["lu"].exact, E.kappa_matrix, lu_grid, [lu_grid[0], lu_grid[2]])
    # lu_factor and lu_solve with the permutation of the float64 RAND_3 (exact_linalg_more's _LU_PERM):
    # the float32 RAND_3 pivots alike (asserted by the tests: the value would be O(1) off otherwise)
    a32 = _g(("random", E.RAND_3), dtype="float32")
    add("lu_factor_32", more["lu_factor"].call, more["lu_factor"].exact, E.kappa_matrix, a32, a32)
    lu, piv, _ = M._lu_factor_of(E.RAND_3)
    solve = _g(("random", lu, E.B_32), dtype="float32")
    add(
        "lu_solve_32",
        lambda L, lu_, b: L.linalg.lu_solve(lu_, L.tensor(piv), b),
        more["lu_solve"].exact,
        M.kappa_lu_solve,
        solve,
        solve,
    )
    chol = _g(("spd", E.B_32, SPD_FACTOR), ("spd κ=1e5", E.B_32, SPD_ILL_32), dtype="float32")
    add("cholesky_solve_32", lambda L, b, f: L.cholesky_solve(b, f), _ex_cholesky_solve(False), kappa_factor, chol, chol[:1])
    inv = [(label, (f,)) for label, (_, f) in chol] + _g(("c hpd", C_HPD_FACTOR), dtype="float32")
    add("cholesky_inverse_32", lambda L, f: L.cholesky_inverse(f), _ex_cholesky_inverse(False), kappa_factor, inv, inv[::2])
    tall = _g(("tall", E.TALL, E.B_42), ("tall κ=1e5", TALL_ILL_32, E.B_42), dtype="float32")
    add("lstsq_32", lambda L, a, b: L.linalg.lstsq(a, b).solution, E._ex_lstsq, E.kappa_least_squares, tall, tall[:1])
    c_tall = _g(("c tall", C_TALL, C_B42), dtype="float32")
    add("c_lstsq_32", lambda L, a, b: L.linalg.lstsq(a, b).solution, _ex_c_lstsq, E.kappa_least_squares, c_tall, c_tall)
    pinv = [(label, (a,)) for label, (a, _) in tall]
    add("pinv_32", lambda L, a: L.linalg.pinv(a), E._ex_pinv, E.kappa_least_squares, pinv, pinv[:1])


def entries():
    out = {}

    def add(name, call, exact, kappa, grid, small, **kw):
        dtype = "float32" if name.endswith("_32") else "float64"
        out[name] = E.Entry(name, call, exact, kappa, grid, small, dtype=dtype, **kw)

    _float64_entries(add)
    _float32_entries(add)
    return out


ENTRIES = entries()


# ---- the declared bounds ------------------------------------------------------------------------

#: entries whose primitive declares no error bound, and why (their records are not fuzzed)
NO_BOUND = {
    "c_matrix_exp": "linalg_matrix_exp: scaling and squaring has no a priori componentwise bound "
    "(Higham, Functions of Matrices, §10.3); its record is not fuzzed",
}


def _worse(a, b):
    return a if math.isnan(b) else b if math.isnan(a) else max(a, b)


def _answers_each(entry, xs, lib):
    """E.answers of ``lib`` check by check, leaving out the checks it raises in (torch's phase check
    of eig in reverse over forward: known entry torch-eig-reverse-over-forward-gauge-check)."""
    out = {}
    for check in entry.checks:
        try:
            got = E.answers(dataclasses.replace(entry, checks=("value", check)), xs, lib=lib)[0]
        except RuntimeError:
            continue
        out.update(got)
    return out


def bound_ratios(entry, small=False, others=()):
    """{check: (worst err/bound of the reference's answer, of the exactly-rounded answer, of each
    library in ``others`` (torch: LAPACK's own float32 kernels), label)}: each check's error
    against its declared bound (the reference under reference.errors.Tracker in the entry's
    precision, inputs and seeds exact). An entry whose bound is 0 counts as a ratio of 0 where its
    error is 0 too and inf otherwise."""
    narrow = {"float64": np.float64, "float32": np.float32}[entry.dtype]
    worst = {}

    def ratios(vals, ex, b):
        with m.workdps(E.DPS):
            err = np.array([float(abs(E._c(a) - x)) for a, x in zip(vals, ex)])
        with np.errstate(all="ignore"):
            return float(np.max(np.where(err == 0, 0.0, err / b), initial=0))

    for label, xs in entry.small if small else entry.grid:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with errors.Tracker(errors.Precision(entry.dtype)) as tr:
                got, seeds, bounds = E.answers(entry, xs, tracker=tr)
            theirs = [_answers_each(entry, xs, lib) for lib in others]
        exact = E.exact_answers(entry, xs, got["value"], seeds)
        for check, vals in got.items():
            ex = exact[check]
            cplx = any(isinstance(x, m.mpc) for x in ex) or np.iscomplexobj(vals)
            kind = {np.float64: np.complex128, np.float32: np.complex64}[narrow] if cplx else narrow
            fl = np.array([complex(x) if cplx else float(x) for x in ex]).astype(kind)  # rounded once
            now = [ratios(vals, ex, bounds[check]), ratios(fl, ex, bounds[check])]
            now += [ratios(t[check], ex, bounds[check]) if check in t else math.nan for t in theirs]
            prev = worst.get(check)
            if prev is None:
                worst[check] = (*now, label)
            else:
                worst[check] = (*map(_worse, prev[:-1], now), label if now[0] >= prev[0] else prev[-1])
    return worst


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--bounds" not in argv:
        return E.main(argv, ENTRIES)
    names = [a for a in argv if not a.startswith("--")] or list(ENTRIES)
    import torch

    print("| primitive | check: err/bound of the reference / exactly rounded / torch (the reference's worst input) |\n|---|---|")
    for name in names:
        if name in NO_BOUND:
            print(f"| {name} | no declared bound: {NO_BOUND[name]} |")
            continue
        w = bound_ratios(ENTRIES[name], "--small" in argv, others=(torch,))
        cells = ", ".join(f"{c} {' / '.join(E._fmt(r) for r in rs)} ({lab})" for c, (*rs, lab) in w.items())
        print(f"| {name} | {cells} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
