"""The solve family's error declarations (reference/ops/rules/linalg_solve.py, Higham's bounds
carried to complex arithmetic with Lemma 3.5) hold for complex input: each rule's complex64
result, under the error tracker with float32's unit roundoff, is within its declared bound of the
complex128 result of the same program (inputs exact in complex64)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import reference as T
from reference import errors as E


def _cr(rng, *s):
    return (rng.standard_normal(s) + 1j * rng.standard_normal(s)) / np.sqrt(2)


def _hpd(rng, n):
    x = _cr(rng, n, n)
    return x @ x.conj().T + np.eye(n)


def _factor(rng, n, upper=False):
    f = np.tril(_cr(rng, n, n), -1) + np.diag(np.abs(_cr(rng, n)) + 1)
    return f.conj().T if upper else f


CASES = {
    "inv": (lambda a: T.linalg.inv(a), lambda r: [_cr(r, 4, 4) + 3 * np.eye(4)]),
    "solve": (lambda a, b: T.linalg.solve(a, b), lambda r: [_cr(r, 4, 4) + 3 * np.eye(4), _cr(r, 4, 2)]),
    "solve_right": (
        lambda a, b: T.linalg.solve(a, b, left=False),
        lambda r: [_cr(r, 4, 4) + 3 * np.eye(4), _cr(r, 2, 4)],
    ),
    "solve_triangular": (
        lambda a, b: T.linalg.solve_triangular(a, b, upper=True),
        lambda r: [np.triu(_cr(r, 4, 4)) + 2 * np.eye(4), _cr(r, 4, 2)],
    ),
    "det": (lambda a: T.linalg.det(a), lambda r: [_cr(r, 5, 5)]),
    "slogdet": (lambda a: tuple(T.linalg.slogdet(a)), lambda r: [_cr(r, 5, 5)]),
    "cholesky": (lambda a: T.linalg.cholesky(a), lambda r: [_hpd(r, 4)]),
    "cholesky_upper": (lambda a: T.linalg.cholesky(a, upper=True), lambda r: [_hpd(r, 4)]),
    "lu_factor": (lambda a: T.linalg.lu_factor(a)[0], lambda r: [_cr(r, 4, 4)]),
    "lu": (lambda a: tuple(T.linalg.lu(a)[1:]), lambda r: [_cr(r, 4, 4)]),
    "lu_solve_adjoint": (
        lambda a, b: T.linalg.lu_solve(*T.linalg.lu_factor(a), b, adjoint=True),
        lambda r: [_cr(r, 4, 4) + 2 * np.eye(4), _cr(r, 4, 2)],
    ),
    "cholesky_solve": (lambda b, f: T.cholesky_solve(b, f), lambda r: [_cr(r, 4, 2), _factor(r, 4)]),
    "cholesky_inverse_upper": (lambda f: T.cholesky_inverse(f, upper=True), lambda r: [_factor(r, 4, True)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex64_errors_within_declared_bounds(name):
    fn, gen = CASES[name]
    rng = np.random.default_rng(0)
    for _ in range(5):
        arrays = [a.astype(np.complex64) for a in gen(rng)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with E.Tracker(E.Precision("float32")) as tr:
                ts = [T.tensor(a) for a in arrays]
                for t in ts:
                    tr.set_error(t, np.zeros(t.shape))
                out = fn(*ts)
                outs = list(out) if isinstance(out, tuple) else [out]
                bounds = [np.asarray(tr.error_of(o)) for o in outs]
            exact = fn(*[T.tensor(a.astype(np.complex128)) for a in arrays])
            exact = list(exact) if isinstance(exact, tuple) else [exact]
        for i, (o, b, e) in enumerate(zip(outs, bounds, exact)):
            assert str(o.dtype) in ("complex64", "float32")
            err = np.abs(o.numpy().astype(np.complex128) - e.numpy())
            assert np.all(np.isfinite(b)), f"{name} output {i}: bound not finite"
            assert np.all(err <= b), f"{name} output {i}: error {err.max():.3g} > bound {b[err > b]}"
