"""The solves and factorizations of torch.linalg on complex input against PyTorch (torch 2.13):
values, dtypes, grad_fn names, first- and second-order gradients of real losses (PyTorch's
convention: the conjugate Wirtinger derivative, docs/complex.md), forward mode
(``torch.func.jvp``) and ``vmap`` (``torch.func.vmap``), on the same program text (``M``: torch or
reference). Inputs are complex standard normal; each program makes its matrix well conditioned
(``+ 3 I``), Hermitian positive-definite (``a a^H + 3 I``) or triangular where the op needs it.
Edge cases: singular complex matrices (det, slogdet's unit-modulus sign, logdet), LU pivots
(LAPACK's |re| + |im| pivot choice), Cholesky reading one triangle and the real part of the
diagonal, conjugate-transposed solves (lu_solve's ``adjoint``), complex64, and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import reference as T
from tests.autograd.test_torch_shape import same_error

RTOL, ATOL = 1e-9, 1e-11


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().numpy()
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _dt(t):
    return str(t.dtype).replace("torch.", "")


def _isc(t):
    return "complex" in _dt(t)


def _isf(t):
    return "float" in _dt(t) or _isc(t)


def _same(a, b, what, rtol=RTOL, atol=ATOL):
    assert (a is None) == (b is None), f"{what}: torch {a!r} vs reference {b!r}"
    if a is None:
        return
    assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {tuple(a.shape)} vs {tuple(b.shape)}"
    assert _dt(a) == _dt(b), f"{what}: dtype {a.dtype} vs {b.dtype}"
    np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _crandn(rng, shape):
    """Complex normal with E|z|^2 = 1 (the real tests' scale)."""
    # (an array even for shape (): T.tensor(np.complex128(...)) gives complex64, torch.tensor complex128)
    return np.asarray((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) / np.sqrt(2))


def _real_loss(outs, vs):
    total = None
    for o, v in zip(outs, vs):
        term = (o * v).real.sum() if _isc(o) or _isc(v) else (o * v).sum()
        total = term if total is None else total + term
    return total


def compare(fn, shapes, *, seed=0, nodes=True, order=2, jvp=True, vmap=True, dtype="complex128", tol=1.0):
    """``fn(M, *inputs)`` on complex inputs with torch and the reference: values and grad_fn names;
    the gradient of a random real projection of the outputs and the gradient of a random real
    projection of that gradient; the JVP along random complex tangents; vmap over a batch of 2."""
    rng = np.random.default_rng(seed)
    rtol, atol = RTOL * tol, ATOL * tol
    arrays = [_crandn(rng, s) for s in shapes]
    tdt, rdt = getattr(torch, dtype), getattr(T, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xt = [torch.tensor(a, dtype=tdt, requires_grad=True) for a in arrays]
        xr = [T.tensor(a, dtype=rdt, requires_grad=True) for a in arrays]
        ot, orf = _flat(fn(torch, *xt)), _flat(fn(T, *xr))
    assert len(ot) == len(orf)
    for i, (a, b) in enumerate(zip(ot, orf)):
        _same(a, b, f"output {i}", rtol, atol)
        if nodes:
            na = a.grad_fn.name() if a.grad_fn is not None else None
            nb = b.grad_fn.name() if b.grad_fn is not None else None
            assert na == nb, f"output {i}: grad_fn {na} vs {nb}"
    diff = [i for i, o in enumerate(ot) if o.requires_grad]
    assert diff == [i for i, o in enumerate(orf) if o.requires_grad]
    if order >= 1 and diff:
        vs = [
            _crandn(rng, tuple(ot[i].shape)) if _isc(ot[i]) else rng.standard_normal(tuple(ot[i].shape))
            for i in diff
        ]
        gt = torch.autograd.grad(
            _real_loss([ot[i] for i in diff], [torch.tensor(v) for v in vs]),
            xt,
            create_graph=True,
            allow_unused=True,
        )
        gr = T.autograd.grad(
            _real_loss([orf[i] for i in diff], [T.tensor(v) for v in vs]),
            xr,
            create_graph=True,
            allow_unused=True,
        )
        for i, (a, b) in enumerate(zip(gt, gr)):
            _same(a, b, f"gradient of input {i}", rtol, atol)
        if order >= 2:
            ws = [_crandn(rng, tuple(x.shape)) for x in xt]
            keep = [i for i, g in enumerate(gt) if g is not None and g.requires_grad]
            assert keep == [i for i, g in enumerate(gr) if g is not None and g.requires_grad]
            if keep:
                lt = _real_loss([gt[i] for i in keep], [torch.tensor(ws[i]) for i in keep])
                lr = _real_loss([gr[i] for i in keep], [T.tensor(ws[i]) for i in keep])
                g2t = torch.autograd.grad(lt, xt, allow_unused=True)
                g2r = T.autograd.grad(lr, xr, allow_unused=True)
                for i, (a, b) in enumerate(zip(g2t, g2r)):
                    _same(a, b, f"second-order gradient of input {i}", rtol * 10, atol * 10)
    floats = [i for i, o in enumerate(ot) if _isf(o)]

    def only_floats(M):
        return lambda *x: tuple(_flat(fn(M, *x))[i] for i in floats)

    if jvp:
        ts = [_crandn(rng, s) for s in shapes]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, jt = torch.func.jvp(
                only_floats(torch),
                tuple(torch.tensor(a, dtype=tdt) for a in arrays),
                tuple(torch.tensor(t, dtype=tdt) for t in ts),
            )
            _, jr = T.func.jvp(
                only_floats(T),
                tuple(T.tensor(a, dtype=rdt) for a in arrays),
                tuple(T.tensor(t, dtype=rdt) for t in ts),
            )
        for i, (a, b) in enumerate(zip(jt, jr)):
            _same(a, b, f"jvp of output {i}", rtol, atol)
    if vmap:
        batch = [np.stack([a, a + 0.1 * _crandn(rng, a.shape)]) for a in arrays]
        # against torch's own function slice by slice (torch.func.vmap of linalg.solve with
        # left=False or broadcast batch dims departs from it: test_torch_vmap_of_solve_departs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = only_floats(torch)
            slices = [f(*[torch.tensor(a[j], dtype=tdt) for a in batch]) for j in range(2)]
            vt = [torch.stack([sl[i] for sl in slices]) for i in range(len(slices[0]))]
            vr = T.func.vmap(only_floats(T), allow_fallback=False)(*[T.tensor(a, dtype=rdt) for a in batch])
        for i, (a, b) in enumerate(zip(vt, vr)):
            _same(a, b, f"vmap of output {i}", rtol, atol)


def _eye(M, a):
    return M.eye(a.shape[-1], dtype=a.dtype)


def _wc(M, a):
    return a + 3.0 * _eye(M, a)


def _hpd(M, a):
    return M.matmul(a, a.mH) + 3.0 * _eye(M, a)


def _chol(M, a):
    """A lower Cholesky-like factor: the lower triangle with a real positive diagonal."""
    return M.tril(a, -1) + M.diag_embed(a.diagonal(0, -2, -1).abs() + 1.0).to(a.dtype)


CASES = {
    "inv": (lambda M, a: M.linalg.inv(_wc(M, a)), [(3, 3)]),
    "inv_batched": (lambda M, a: M.linalg.inv(_wc(M, a)), [(2, 3, 3)]),
    "inv_ex": (lambda M, a: M.linalg.inv_ex(_wc(M, a)), [(2, 3, 3)]),
    "inverse_method": (lambda M, a: _wc(M, a).inverse(), [(3, 3)]),
    "solve": (lambda M, a, b: M.linalg.solve(_wc(M, a), b), [(3, 3), (3, 2)]),
    "solve_vector": (lambda M, a, b: M.linalg.solve(_wc(M, a), b), [(3, 3), (3,)]),
    "solve_batched_vector": (lambda M, a, b: M.linalg.solve(_wc(M, a), b), [(2, 3, 3), (2, 3)]),
    "solve_broadcast": (lambda M, a, b: M.linalg.solve(_wc(M, a), b), [(2, 1, 3, 3), (4, 3, 2)]),
    "solve_right": (lambda M, a, b: M.linalg.solve(_wc(M, a), b, left=False), [(2, 3, 3), (4, 3)]),
    "solve_ex": (lambda M, a, b: M.linalg.solve_ex(_wc(M, a), b), [(3, 3), (3, 1)]),
    "solve_triangular_upper": (
        lambda M, a, b: M.linalg.solve_triangular(_wc(M, a), b, upper=True),
        [(3, 3), (3, 2)],
    ),
    "solve_triangular_lower_right_unit": (
        lambda M, a, b: M.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
        [(2, 3, 3), (4, 3)],
    ),
    "solve_triangular_broadcast": (
        lambda M, a, b: M.linalg.solve_triangular(_wc(M, a), b, upper=False),
        [(3, 3), (2, 3, 1)],
    ),
    "det": (lambda M, a: M.linalg.det(a), [(3, 3)]),
    "det_batched_method": (lambda M, a: a.det(), [(2, 4, 4)]),
    "slogdet": (lambda M, a: M.linalg.slogdet(_wc(M, a)), [(2, 3, 3)]),
    "slogdet_method": (lambda M, a: a.slogdet(), [(4, 4)]),
    "slogdet_logabsdet_only": (lambda M, a: M.linalg.slogdet(a)[1], [(3, 3)]),
    "slogdet_sign_only": (lambda M, a: M.linalg.slogdet(a)[0], [(3, 3)]),
    "logdet": (lambda M, a: M.logdet(_wc(M, a)), [(2, 3, 3)]),
    "logdet_hpd": (lambda M, a: M.logdet(_hpd(M, a)), [(3, 3)]),
    "cholesky": (lambda M, a: M.linalg.cholesky(_hpd(M, a)), [(2, 3, 3)]),
    "cholesky_upper": (lambda M, a: M.linalg.cholesky(_hpd(M, a), upper=True), [(3, 3)]),
    "cholesky_ex": (lambda M, a: M.linalg.cholesky_ex(_hpd(M, a)), [(3, 3)]),
    "cholesky_lower_triangle_only": (lambda M, a: M.linalg.cholesky(M.tril(_hpd(M, a))), [(3, 3)]),
    "cholesky_upper_triangle_only": (
        lambda M, a: M.linalg.cholesky(M.triu(_hpd(M, a)), upper=True),
        [(3, 3)],
    ),
    "cholesky_deprecated": (lambda M, a: M.cholesky(_hpd(M, a)), [(3, 3)]),
    "cholesky_deprecated_upper_method": (lambda M, a: _hpd(M, a).cholesky(upper=True), [(3, 3)]),
    "lu_factor": (lambda M, a: M.linalg.lu_factor(a), [(3, 3)]),
    "lu_factor_ex_batched": (lambda M, a: M.linalg.lu_factor_ex(a), [(2, 4, 4)]),
    "lu_factor_wide": (lambda M, a: M.linalg.lu_factor(a), [(2, 4)]),
    "lu_factor_tall": (lambda M, a: M.linalg.lu_factor(a), [(4, 2)]),
    "lu_deprecated": (lambda M, a: M.lu(a), [(3, 3)]),
    "lu": (lambda M, a: M.linalg.lu(a), [(3, 3)]),
    "lu_wide_batched": (lambda M, a: M.linalg.lu(a), [(2, 2, 4)]),
    "lu_tall": (lambda M, a: M.linalg.lu(a), [(4, 3)]),
    "lu_unpack": (lambda M, a: M.lu_unpack(*M.linalg.lu_factor(a)), [(2, 3, 3)]),
    "lu_solve": (lambda M, a, b: M.linalg.lu_solve(*M.linalg.lu_factor(_wc(M, a)), b), [(3, 3), (3, 2)]),
    "lu_solve_adjoint": (
        lambda M, a, b: M.linalg.lu_solve(*M.linalg.lu_factor(_wc(M, a)), b, adjoint=True),
        [(2, 3, 3), (2, 3, 2)],
    ),
    "lu_solve_right": (
        lambda M, a, b: M.linalg.lu_solve(*M.linalg.lu_factor(_wc(M, a)), b, left=False),
        [(3, 3), (2, 3)],
    ),
    "lu_solve_right_adjoint_broadcast": (
        lambda M, a, b: M.linalg.lu_solve(*M.linalg.lu_factor(_wc(M, a)), b, left=False, adjoint=True),
        [(3, 3), (2, 2, 3)],
    ),
    "lu_solve_deprecated": (lambda M, b, a: M.lu_solve(b, *M.linalg.lu_factor(_wc(M, a))), [(3, 2), (3, 3)]),
    "cholesky_solve": (lambda M, b, a: M.cholesky_solve(b, _chol(M, a)), [(3, 2), (3, 3)]),
    "cholesky_solve_upper_broadcast": (
        lambda M, b, a: b.cholesky_solve(_chol(M, a).mH, upper=True),
        [(2, 3, 2), (3, 3)],
    ),
    "cholesky_inverse": (lambda M, a: M.cholesky_inverse(_chol(M, a)), [(3, 3)]),
    "cholesky_inverse_upper": (lambda M, a: _chol(M, a).mH.cholesky_inverse(upper=True), [(2, 3, 3)]),
    "matrix_power_neg": (lambda M, a: M.linalg.matrix_power(_wc(M, a), -3), [(3, 3)]),
    "matrix_power_5": (lambda M, a: M.linalg.matrix_power(a, 5), [(2, 3, 3)]),
    "matrix_power_2_method": (lambda M, a: a.matrix_power(2), [(3, 3)]),
    "matrix_exp": (lambda M, a: M.linalg.matrix_exp(a), [(2, 3, 3)]),
    "matrix_exp_method": (lambda M, a: (a * 2).matrix_exp(), [(4, 4)]),
    "tensorsolve": (lambda M, a, b: M.linalg.tensorsolve(_wc(M, a).reshape(2, 3, 6), b), [(6, 6), (2, 3)]),
}
# PyTorch has a primitive where the reference composes (LinalgHouseholderProductBackward0,
# OrmqrBackward0, TriangularSolveBackward0) or reshapes differently (tensorinv): values and
# gradients agree, nodes do not.
COMPOSITES = {
    "triangular_solve_transpose": (
        lambda M, b, a: M.triangular_solve(b, _wc(M, a), upper=True, transpose=True),
        [(3, 2), (3, 3)],
    ),
    "triangular_solve_lower_unit": (
        lambda M, b, a: M.triangular_solve(b, a, upper=False, unitriangular=True),
        [(2, 3, 2), (2, 3, 3)],
    ),
    "matrix_power_0": (lambda M, a: M.linalg.matrix_power(a, 0), [(2, 3, 3)]),
    "householder_product": (lambda M, a, t: M.linalg.householder_product(a, t), [(4, 3), (2,)]),
    "householder_product_batched": (lambda M, a, t: M.linalg.householder_product(a, t), [(2, 3, 3), (2, 3)]),
    "orgqr": (lambda M, a, t: a.orgqr(t), [(3, 2), (2,)]),
    "ormqr": (lambda M, a, t, c: M.ormqr(a, t, c), [(4, 3), (3,), (4, 2)]),
    "ormqr_transpose_right": (
        lambda M, a, t, c: M.ormqr(a, t, c, left=False, transpose=True),
        [(3, 2), (2,), (2, 3)],
    ),
    "tensorinv": (lambda M, a: M.linalg.tensorinv(_wc(M, a).reshape(2, 2, 4), ind=2), [(4, 4)]),
}
# torch.func.jvp has no rule for these (OpInfo: supports_forward_ad=False), or vmap falls back
NO_JVP = {"cholesky_deprecated", "cholesky_deprecated_upper_method", "ormqr", "ormqr_transpose_right"}
# torch's cholesky_inverse_jvp is wrong (it uses X dF X F^H where the derivative of (F F^H)^{-1} is
# -X dF F^H X - its conjugate transpose): see test_cholesky_inverse_jvp_departs_from_pytorch
NO_JVP |= {"cholesky_inverse", "cholesky_inverse_upper"}
# torch's triangular_solve JVP departs from central differences (float64 too; the OpInfo survey
# records it): test_triangular_solve_jvp_departs_from_pytorch
NO_JVP |= {"triangular_solve_transpose", "triangular_solve_lower_unit"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    fn, shapes = CASES[name]
    compare(fn, shapes, jvp=name not in NO_JVP)


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_composites_against_torch(name):
    fn, shapes = COMPOSITES[name]
    compare(fn, shapes, nodes=False, jvp=name not in NO_JVP)


def test_householder_product_of_geqrf_is_q():
    """householder_product of geqrf's reflectors is QR's Q (H = I - tau v v^H: the conjugate)."""
    a = _crandn(np.random.default_rng(10), (4, 3))
    qt = torch.linalg.householder_product(*torch.geqrf(torch.tensor(a)))
    qr = T.linalg.householder_product(*[T.tensor(_np(x)) for x in torch.geqrf(torch.tensor(a))])
    _same(qt, qr, "Q")
    _same(torch.linalg.qr(torch.tensor(a))[0], qr, "Q of qr")


@pytest.mark.parametrize(
    "name", ["inv", "solve", "det", "slogdet", "cholesky_upper", "lu", "lu_solve_adjoint"]
)
def test_complex64(name):
    fn, shapes = CASES[name]
    compare(fn, shapes, dtype="complex64", order=1, jvp=False, vmap=False, tol=1e4)


# ---- pivots, triangles, singular matrices ---------------------------------------------------------------


def test_lu_pivots_use_lapack_cabs1():
    """zgetrf's pivot is the entry of largest |re| + |im| (izamax), not of largest modulus: in the
    column [3, 2 + 2i], |3| > |2 + 2i| but 3 < 4."""
    a = [[3 + 0j, 1], [2 + 2j, 5]]
    lt, pt = torch.linalg.lu_factor(torch.tensor(a, dtype=torch.complex128))
    lr, pr = T.linalg.lu_factor(T.tensor(a, dtype=T.complex128))
    assert pt.tolist() == [2, 2]
    _same(pt, pr, "pivots")
    _same(lt, lr, "LU")


def test_cholesky_reads_one_triangle_and_the_real_diagonal():
    """zpotrf reads the lower (upper=True: the upper) triangle and the real part of the diagonal."""
    a = _crandn(np.random.default_rng(4), (3, 3))
    h = a @ a.conj().T + 3 * np.eye(3)
    noisy = h + np.triu(np.full((3, 3), 5.0), 1) + 0.3j * np.eye(3)
    for upper, x in ((False, noisy), (True, noisy.conj().T)):
        lt = torch.linalg.cholesky(torch.tensor(x), upper=upper)
        lr = T.linalg.cholesky(T.tensor(x), upper=upper)
        _same(lt, lr, f"factor (upper={upper})")
        _same(
            torch.linalg.cholesky(torch.tensor(h), upper=upper),
            lr,
            f"factor of the Hermitian matrix (upper={upper})",
        )


def test_cholesky_ex_of_a_matrix_that_is_not_positive_definite():
    rng = np.random.default_rng(5)
    a = _crandn(rng, (3, 3))
    ot = torch.linalg.cholesky_ex(-_hpd(torch, torch.tensor(a)))
    orf = T.linalg.cholesky_ex(-_hpd(T, T.tensor(a)))
    _same(ot.L, orf.L, "L")
    _same(ot.info, orf.info, "info")


SINGULAR = np.array([[1 + 1j, 2.0, 3j], [2 + 2j, 4.0, 6j], [1.0, 0.0, 1.0 - 1j]])  # rank 2


@pytest.mark.parametrize("op", ["det", "slogdet", "logdet"])
def test_singular_complex_matrices(op):
    fn = {
        "det": lambda M, x: M.linalg.det(x),
        "slogdet": lambda M, x: M.linalg.slogdet(x),
        "logdet": M_logdet,
    }[op]
    # (logdet of a singular matrix: torch gives -inf+nanj, the reference -inf+0j: torch's complex add
    # of (-inf + 0j) and -inf multiplies by alpha = 1 + 0j, which makes the nan; a core-add difference)
    singular = [] if op == "logdet" else [SINGULAR, np.zeros((2, 2), dtype=complex)]
    for a in [np.array([[1j, 0], [0, 1]]), -np.eye(2, dtype=complex)] + singular:
        ot = _flat(fn(torch, torch.tensor(a)))
        orf = _flat(fn(T, T.tensor(a)))
        for x, y in zip(ot, orf):
            _same(x, y, f"{op} of {a.tolist()}")


def M_logdet(M, x):
    return M.logdet(x)


def test_det_gradient_at_a_singular_complex_matrix():
    """PyTorch's linalg_det_backward at a singular matrix: first order 0 where the LU has an exact
    zero pivot... the cofactor matrix in grad mode (second order)."""
    for create_graph in (False, True):
        out = []
        for M in (torch, T):
            x = M.tensor(SINGULAR, requires_grad=True)
            (g,) = M.autograd.grad(
                M.linalg.det(x), x, M.tensor(1 + 2j, dtype=M.complex128), create_graph=create_graph
            )
            out.append(g)
        _same(out[0], out[1], f"det gradient (create_graph={create_graph})")


def test_slogdet_sign_is_a_unit_complex_number():
    a = _crandn(np.random.default_rng(6), (2, 4, 4))
    s, _ = T.linalg.slogdet(T.tensor(a))
    np.testing.assert_allclose(np.abs(s.numpy()), 1.0, rtol=1e-14)


def test_gradcheck_on_complex_inputs():
    """The reference's own gradcheck/gradgradcheck (finite differences of the real and imaginary
    parts) on the non-holomorphic rules and the conjugate-transposed solves."""
    rng = np.random.default_rng(7)
    a = T.tensor(_crandn(rng, (3, 3)), requires_grad=True)
    b = T.tensor(_crandn(rng, (3, 2)), requires_grad=True)
    fns = [
        lambda x: T.linalg.slogdet(_wc(T, x)),
        lambda x: T.logdet(_wc(T, x)),
        lambda x: T.linalg.cholesky(_hpd(T, x), upper=True),
        lambda x: T.linalg.inv(_wc(T, x)),
        lambda x: T.linalg.det(x),
        lambda x: T.cholesky_inverse(_chol(T, x)),
        lambda x: T.linalg.matrix_exp(x),
        lambda x: T.linalg.lu_factor(x)[0],
        lambda x: T.linalg.householder_product(x, x[:, 0]),
    ]
    for f in fns:
        assert T.autograd.gradcheck(f, (a,))
        assert T.autograd.gradgradcheck(f, (a,))
    fns2 = [
        lambda x, y: T.linalg.solve(_wc(T, x), y),
        lambda x, y: T.linalg.lu_solve(*T.linalg.lu_factor(_wc(T, x)), y, adjoint=True),
        lambda x, y: T.cholesky_solve(y, _chol(T, x)),
        lambda x, y: T.linalg.solve_triangular(_wc(T, x), y, upper=True),
    ]
    for f in fns2:
        assert T.autograd.gradcheck(f, (a, b))
        assert T.autograd.gradgradcheck(f, (a, b))


def test_cholesky_inverse_jvp_departs_from_pytorch():
    """PyTorch's cholesky_inverse_jvp returns -X dF X F^H + its conjugate transpose; the derivative
    of X = (F F^H)^{-1} is -X (dF F^H + F dF^H) X. torch's JVP disagrees with central differences
    (|diff| ~ 0.05 here, in float64 too); the reference's agrees. Recorded as a PyTorch departure.
    (The tangent is lower triangular: the forward reads only that triangle, while the VJP, PyTorch's,
    is the derivative of F -> (F F^H)^{-1} over full matrices, and the JVP is its adjoint.)"""
    rng = np.random.default_rng(8)
    f = np.tril(_crandn(rng, (3, 3))) + 3 * np.eye(3)
    df = np.tril(_crandn(rng, (3, 3)))
    eps = 1e-6
    for M, jvp in ((torch, torch.func.jvp), (T, T.func.jvp)):
        F, dF = M.tensor(f), M.tensor(df)
        _, j = jvp(M.cholesky_inverse, (F,), (dF,))
        fd = (M.cholesky_inverse(F + eps * dF) - M.cholesky_inverse(F - eps * dF)) / (2 * eps)
        err = float(np.abs(_np(j) - _np(fd)).max())
        if M is torch:
            assert err > 1e-3, err
        else:
            assert err < 1e-7, err


@pytest.mark.parametrize("transpose", [False, True])
def test_triangular_solve_jvp_departs_from_pytorch(transpose):
    """torch.triangular_solve's JVP differs from central differences of its own forward (in
    float64 too); the reference's (linalg.solve_triangular's, tangent restricted to the triangle
    read) agrees."""
    rng = np.random.default_rng(11)
    a, b = np.triu(_crandn(rng, (3, 3))) + 3 * np.eye(3), _crandn(rng, (3, 2))
    da, db = _crandn(rng, (3, 3)), _crandn(rng, (3, 2))
    eps = 1e-6
    errs = {}
    for M, jvp in ((torch, torch.func.jvp), (T, T.func.jvp)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")

            def f(x, y, M=M):
                return M.triangular_solve(y, x, upper=True, transpose=transpose)[0]

            A_, B_, dA, dB = (M.tensor(v) for v in (a, b, da, db))
            _, j = jvp(f, (A_, B_), (dA, dB))
            fd = (f(A_ + eps * dA, B_ + eps * dB) - f(A_ - eps * dA, B_ - eps * dB)) / (2 * eps)
        errs[M.__name__] = float(np.abs(_np(j) - _np(fd)).max())
    assert errs["torch"] > 1e-3 and errs["reference"] < 1e-7, errs


def test_torch_vmap_of_solve_departs():
    """A PyTorch departure (torch 2.13, float64 too): torch.func.vmap of linalg.solve(A, B,
    left=False) with A batched over two dims differs from solving slice by slice; the reference's
    vmap equals the slice loop."""
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((2, 2, 3, 3)), rng.standard_normal((2, 4, 3))

    def f(M):
        return lambda x, y: M.linalg.solve(x + 3 * M.eye(3, dtype=x.dtype), y, left=False)

    loop = np.stack([_np(f(torch)(torch.tensor(a[i]), torch.tensor(b[i]))) for i in range(2)])
    vt = _np(torch.func.vmap(f(torch))(torch.tensor(a), torch.tensor(b)))
    vr = _np(T.func.vmap(f(T))(T.tensor(a), T.tensor(b)))
    assert np.abs(vt - loop).max() > 1e-3
    np.testing.assert_allclose(vr, loop, rtol=1e-12, atol=1e-13)


# ---- errors ---------------------------------------------------------------------------------------------------

Z = lambda M, *s: M.zeros(*s, dtype=M.complex128)  # noqa: E731
ERRORS = {
    "inv_rect": lambda M: M.linalg.inv(Z(M, 2, 3)),
    "inv_singular": lambda M: M.linalg.inv(Z(M, 3, 3)),
    "solve_singular": lambda M: M.linalg.solve(Z(M, 3, 3), Z(M, 3, 2)),
    "solve_dtype": lambda M: M.linalg.solve(M.eye(3, dtype=M.complex128), M.zeros(3, 2, dtype=M.float64)),
    "solve_dtype_c64": lambda M: M.linalg.solve(
        M.eye(3, dtype=M.complex128), M.zeros(3, 2, dtype=M.complex64)
    ),
    "det_rect": lambda M: M.linalg.det(Z(M, 2, 3)),
    "slogdet_rect": lambda M: M.linalg.slogdet(Z(M, 2, 3)),
    "cholesky_not_pd": lambda M: M.linalg.cholesky(-M.eye(3, dtype=M.complex128)),
    "cholesky_rect": lambda M: M.linalg.cholesky(Z(M, 2, 3)),
    "lu_factor_singular": lambda M: M.linalg.lu_factor(Z(M, 3, 3)),
    "lu_solve_shapes": lambda M: M.linalg.lu_solve(
        *M.linalg.lu_factor(M.eye(3, dtype=M.complex128)), Z(M, 4, 2)
    ),
    "matrix_power_singular": lambda M: M.linalg.matrix_power(Z(M, 3, 3), -1),
    "matrix_exp_rect": lambda M: M.linalg.matrix_exp(Z(M, 2, 3)),
    "tensorinv_singular": lambda M: M.linalg.tensorinv(Z(M, 2, 2), ind=1),
    "cholesky_inverse_rect": lambda M: M.cholesky_inverse(Z(M, 2, 3)),
    "householder_wide": lambda M: M.linalg.householder_product(Z(M, 2, 3), Z(M, 2)),
    "ormqr_dtype": lambda M: M.ormqr(Z(M, 3, 3), Z(M, 3), M.zeros(3, 3, dtype=M.float64)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    same_error(ERRORS[name])


@pytest.mark.parametrize("n", [0, 3])
def test_complex_error_bounds_are_real_arrays(n):
    """The rounding-error bounds of the complex solves are moduli: real arrays, also of a 0 x 0 matrix.
    (They were complex-typed with a zero imaginary part: the permutation of the LU factors and the
    empty inverse kept the input's complex dtype, and the error tracker dropped the imaginary part
    with numpy's ComplexWarning on every complex solve.)"""
    from reference.ops.rules import linalg_solve as S

    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)) + 3 * np.eye(n)
    b = rng.standard_normal((n, 2)) + 1j * rng.standard_normal((n, 2))
    lu, piv, _ = S.lu_kernel(a)
    hpd = a @ a.conj().T + 3 * np.eye(n)
    low = np.linalg.cholesky(hpd) if n else hpd
    u = 2.0**-53
    bounds = {
        "solve": S._solve_bound([a, b], [None, None], {"left": True}, [np.linalg.solve(a, b) if n else b], u),
        "inv": S._inv_bound([a], [None], {}, [np.linalg.inv(a) if n else a], u),
        "det": S._det_bound([a], [None], {}, [np.linalg.det(a) if n else np.ones(())], u),
        "slogdet": S._slogdet_bound([a], [None], {}, list(np.linalg.slogdet(a)) if n else [1 + 0j, 0.0], u),
        "triangular": S._triangular_bound(
            [a, b], [None, None], {"upper": True, "left": True, "unitriangular": False}, [b], u
        ),
        "cholesky": S._cholesky_bound([hpd], [None], {"upper": False}, [low, None], u),
        "lu_factor": S._lu_factor_bound([a], [None], {}, [lu, piv, None], u),
        "lu_solve": S._lu_solve_bound([lu, piv, b], [None] * 3, {"adjoint": True, "left": True}, [b], u),
        "cholesky_solve": S._cholesky_solve_bound([b, low], [None, None], {"upper": False}, [b], u),
    }
    for name, arrays in bounds.items():
        for bound in arrays:
            if bound is not None:
                assert np.isrealobj(bound) and np.all(np.asarray(bound) >= 0), (name, bound)
