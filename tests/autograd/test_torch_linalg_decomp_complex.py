"""The decomposition family on complex input against PyTorch: svd/svdvals/torch.svd, eigh/eigvalsh,
qr, pinv, lstsq and the norms built on them, with complex128 (and complex64) matrices.

Singular and eigenvectors of a complex matrix are defined up to a phase per column (LAPACK builds
pick different ones), so values are compared on phase-invariant quantities (``|U|``, ``U diag(S)
Vh``, ``U Vh``, ``V diag(L) V^H``); QR is unique given LAPACK's real diagonal of R, so Q and R are
compared as they are. Gradients (first and second order) are those of real losses of such
quantities: PyTorch's convention, the conjugate Wirtinger derivative (docs/complex.md). A loss
that depends on the phases makes PyTorch's backward raise (svd_backward's and
linalg_eigh_backward's gauge checks); the reference raises the same error.

Tolerances as in test_torch_linalg_decomp: rtol 1e-8 / atol 1e-10 on well-conditioned inputs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import reference as T

RTOL, ATOL = 1e-8, 1e-10


def _np(t):
    return t.detach().numpy(force=True) if hasattr(t, "detach") else np.asarray(t)


def _dt(t):
    return str(t.dtype).replace("torch.", "")


def _same(a, b, what, rtol=RTOL, atol=ATOL):
    assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {tuple(a.shape)} vs {tuple(b.shape)}"
    assert _dt(a) == _dt(b), f"{what}: dtype {a.dtype} vs {b.dtype}"
    np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _isc(t):
    return "complex" in _dt(t)


def _crandn(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _loss(M, out, vs):
    """A real loss of a (tuple of) outputs: Re sum(out * v)."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    total = None
    for o, v in zip(outs, vs):
        term = (o * M.tensor(v)).real.sum() if _isc(o) else (o * M.tensor(v)).sum()
        total = term if total is None else total + term
    return total


def compare(fn, arrays, *, order=2, seed=0, dtype="complex128", rtol=RTOL, atol=ATOL):
    """Values, the gradient of a random real projection, and the gradient of a random real
    projection of that gradient, on torch and on the reference."""
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xt = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in arrays]
        xr = [T.tensor(a, dtype=getattr(T, dtype), requires_grad=True) for a in arrays]
        ot, orf = fn(torch, *xt), fn(T, *xr)
    ots = ot if isinstance(ot, (tuple, list)) else (ot,)
    ors = orf if isinstance(orf, (tuple, list)) else (orf,)
    assert len(ots) == len(ors)
    for i, (a, b) in enumerate(zip(ots, ors)):
        _same(a, b, f"output {i}", rtol, atol)
    if order < 1:
        return
    vs = [_crandn(rng, tuple(o.shape)) if _isc(o) else rng.standard_normal(tuple(o.shape)) for o in ots]
    gt = torch.autograd.grad(_loss(torch, ot, vs), xt, create_graph=True)
    gr = T.autograd.grad(_loss(T, orf, vs), xr, create_graph=True)
    for i, (a, b) in enumerate(zip(gt, gr)):
        _same(a, b, f"gradient of input {i}", rtol, atol)
    if order < 2:
        return
    ws = [_crandn(rng, tuple(x.shape)) for x in xt]
    g2t = torch.autograd.grad(_loss(torch, gt, ws), xt)
    g2r = T.autograd.grad(_loss(T, gr, ws), xr)
    for i, (a, b) in enumerate(zip(g2t, g2r)):
        _same(a, b, f"second-order gradient of input {i}", rtol * 10, atol * 10)


def _well(rng, shape):
    """A complex matrix with well-separated singular values (0.5 .. 3) and random unitary factors."""
    *batch, m, n = shape
    k = min(m, n)
    out = np.empty(shape, dtype=np.complex128)
    for idx in np.ndindex(*batch):
        u, _ = np.linalg.qr(_crandn(rng, (m, m)))
        v, _ = np.linalg.qr(_crandn(rng, (n, n)))
        s = np.linspace(3.0, 0.5, k) + rng.uniform(0, 0.1, k)
        out[idx] = (u[:, :k] * s) @ v[:k, :]
    return out


SHAPES = [(3, 3), (4, 2), (2, 4), (2, 3, 3)]


def _svd_invariants(M, a, full=False):
    U, S, Vh = M.linalg.svd(a, full_matrices=full)
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return U.abs(), S, (U * S.unsqueeze(-2)) @ Vh, U @ Vh, Vh.abs()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full", [False, True])
def test_svd_phase_invariant_losses(shape, full):
    a = _well(np.random.default_rng(1), shape)
    compare(lambda M, x: _svd_invariants(M, x, full), [a])


@pytest.mark.parametrize("shape", SHAPES)
def test_svd_pieces_alone(shape):
    """Each output alone: the undefined gradients of the others decide the formula's terms."""
    a = _well(np.random.default_rng(2), shape)
    compare(lambda M, x: M.linalg.svdvals(x), [a])
    compare(lambda M, x: M.linalg.svd(x, full_matrices=False)[0].abs(), [a])
    compare(lambda M, x: M.linalg.svd(x, full_matrices=False)[2].abs(), [a])
    compare(lambda M, x: M.svd(x)[2].abs(), [a])
    compare(lambda M, x: (M.linalg.matrix_norm(x, "nuc"), M.linalg.matrix_norm(x, -2), M.linalg.cond(x)), [a])
    if len(shape) == 2:
        compare(lambda M, x: M.linalg.norm(x, 2), [a])


def test_svd_values_and_dtypes():
    a = _well(np.random.default_rng(3), (3, 4))
    for M in (torch, T):
        U, S, Vh = M.linalg.svd(M.tensor(a))
        assert _dt(U) == "complex128" and _dt(S) == "float64" and _dt(Vh) == "complex128"
        U, S, V = M.svd(M.tensor(a, requires_grad=True))
        names = [o.grad_fn.name() for o in (U, S, V)]
        assert names == ["LinalgSvdBackward0", "LinalgSvdBackward0", "ConjBackward0"], names
        U, S, V = M.svd(M.tensor(a), compute_uv=False)
        assert _dt(U) == "complex128" and _dt(S) == "float64" and tuple(V.shape) == (4, 4)
    compare(
        lambda M, x: M.linalg.svd(x)[1], [a.astype(np.complex64)], dtype="complex64", rtol=1e-4, atol=1e-5
    )
    # torch.svd's V is Vh^H: V diag(S) U^H reconstructs A^H
    compare(lambda M, x: (lambda U, S, V: (V * S.unsqueeze(-2)) @ U.mH)(*M.svd(x)), [a], order=1)


def _phase_error(fn, a):
    xt = torch.tensor(a, requires_grad=True)
    xr = T.tensor(a, requires_grad=True)
    with pytest.raises(RuntimeError) as et:
        torch.autograd.grad(fn(torch, xt), xt)
    with pytest.raises(RuntimeError) as er:
        T.autograd.grad(fn(T, xr), xr)
    assert str(er.value) == str(et.value)
    return str(et.value)


def test_svd_phase_dependent_loss_raises():
    a = _well(np.random.default_rng(4), (3, 3))
    msg = _phase_error(lambda M, x: M.linalg.svd(x)[0].real.sum(), a)
    assert msg.startswith("svd_backward: The singular vectors in the complex case")
    _phase_error(lambda M, x: M.linalg.svd(x)[2].imag.sum(), a)
    _phase_error(
        lambda M, x: M.linalg.svd(x, full_matrices=False)[0][..., 0].angle().sum(),
        _well(np.random.default_rng(5), (4, 2)),
    )
    # U and Vh rotated together (U Vh) is invariant: no error, and it agrees (above)


def _herm(x):
    return x + x.mH


@pytest.mark.parametrize("shape", [(3, 3), (4, 4), (2, 3, 3)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_phase_invariant_losses(shape, uplo):
    a = _crandn(np.random.default_rng(6), shape)

    def fn(M, x):
        L, V = M.linalg.eigh(_herm(x), UPLO=uplo)
        return L, V.abs(), (V * L.unsqueeze(-2)) @ V.mH

    compare(fn, [a])
    compare(lambda M, x: M.linalg.eigvalsh(_herm(x), UPLO=uplo), [a])


def test_eigh_reads_one_triangle_and_real_diagonal():
    """The other triangle and the imaginary part of the diagonal are not read (heevd)."""
    a = _crandn(np.random.default_rng(7), (3, 3))
    compare(lambda M, x: M.linalg.eigvalsh(x), [a])
    compare(lambda M, x: M.linalg.eigvalsh(x, UPLO="U"), [a])
    for M in (torch, T):
        L, V = M.linalg.eigh(M.tensor(a))
        assert _dt(L) == "float64" and _dt(V) == "complex128"


def test_eigh_phase_dependent_loss_raises():
    a = _crandn(np.random.default_rng(8), (3, 3))
    msg = _phase_error(lambda M, x: M.linalg.eigh(_herm(x))[1].real.sum(), a)
    assert msg.startswith("linalg_eigh_backward: The eigenvectors in the complex case")


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 4, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(shape, mode):
    a = _crandn(np.random.default_rng(9), shape)
    m, n = shape[-2:]
    if mode == "r":
        compare(lambda M, x: M.linalg.qr(x, mode="r")[1], [a], order=0)
        return
    if mode == "complete" and m > n:
        compare(lambda M, x: tuple(M.linalg.qr(x, mode="complete")), [a], order=0)
        return
    compare(lambda M, x: tuple(M.linalg.qr(x, mode=mode)), [a])
    compare(lambda M, x: M.linalg.qr(x, mode=mode)[1], [a])
    compare(lambda M, x: M.linalg.qr(x, mode=mode)[0], [a])


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_at_a_negative_zero_pivot_takes_pytorchs_sign(dtype, mode):
    """A pivot whose real part is -0.0: PyTorch's LAPACK reflects it as +0.0 (R[0, 0] = -|column|),
    NumPy's as a negative number (R[0, 0] = +|column|), and Q's first column flips with it. The
    reference follows PyTorch (it had NumPy's sign: the seeded complex campaign's
    linalg_qr-5b077c510849 vmap, whose first pivot is -0 + 0.9508i, failed on PyTorch, TensorFlow)."""
    a = np.array([[complex(-0.0, 0.9508), 0.4291 - 1.5736j], [-0.617, -0.2786 - 1.0922j]], dtype=np.complex128)
    if dtype is np.float64:
        a = np.array([[-0.0, 1.0], [2.0, 3.0]])
    got = T.linalg.qr(T.tensor(a), mode=mode)
    want = torch.linalg.qr(torch.tensor(a), mode=mode)
    assert float(np.real(_np(got[1])[0, 0])) < 0  # -|first column|, PyTorch's sign
    for g, w, what in zip(got, want, ("Q", "R")):
        _same(w, g, what)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 4)])
def test_pinv(shape):
    a = _well(np.random.default_rng(10), shape)
    compare(lambda M, x: M.linalg.pinv(x), [a])
    compare(lambda M, x: M.pinverse(x), [a])


def test_pinv_hermitian():
    rng = np.random.default_rng(11)
    u, _ = np.linalg.qr(_crandn(rng, (3, 3)))
    h = (u * np.array([2.0, -1.0, 0.7])) @ u.conj().T  # Hermitian, well-separated eigenvalues

    def fn(M, x):
        return M.linalg.pinv((x + x.mH) * 0.5, hermitian=True)

    compare(fn, [h])


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [((4, 2), (4, 3)), ((2, 3), (2,)), ((2, 1, 4, 3), (1, 3, 4, 2))])
def test_lstsq(driver, shapes):
    rng = np.random.default_rng(12)
    a, b = _well(rng, shapes[0]), _crandn(rng, shapes[1])
    compare(lambda M, x, y: tuple(M.linalg.lstsq(x, y, driver=driver)[:2]), [a, b])
    for M in (torch, T):
        out = M.linalg.lstsq(M.tensor(a), M.tensor(b), driver=driver)
        assert [_dt(o) for o in out] == ["complex128", "float64", "int64", "float64"]


def test_matrix_rank_and_norms():
    a = _well(np.random.default_rng(13), (2, 3, 4))
    compare(lambda M, x: M.linalg.matrix_rank(x), [a], order=0)
    compare(lambda M, x: M.linalg.matrix_rank(_herm(x[..., :3]), hermitian=True), [a], order=0)
    for ord_ in ("fro", "nuc", 2, -2, 1, -1, float("inf"), -float("inf")):
        compare(lambda M, x, o=ord_: M.linalg.matrix_norm(x, o), [a])
    compare(lambda M, x: M.linalg.cond(x[..., :3]), [a])
    compare(lambda M, x: M.linalg.cond(x[..., :3], "nuc"), [a])


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [o for y in x for o in _leaves(y)]
    return [x]


def test_forward_mode_and_vmap():
    """JVPs (torch.func.jvp) and vmap of the complex decompositions, on phase-invariant outputs."""
    rng = np.random.default_rng(14)
    a, t = _well(rng, (3, 3)), _crandn(rng, (3, 3))
    w = _well(rng, (2, 3, 3))

    fns = [
        lambda M, x: M.linalg.svdvals(x),
        lambda M, x: (lambda U, S, Vh: (U.abs(), U @ Vh, Vh.abs()))(*M.linalg.svd(x)),
        lambda M, x: (lambda L, V: (L, V.abs(), (V * L.unsqueeze(-2)) @ V.mH))(*M.linalg.eigh(_herm(x))),
        lambda M, x: tuple(M.linalg.qr(x)),
        lambda M, x: M.linalg.pinv(x),
    ]
    for fn in fns:
        pt, tt = torch.func.jvp(lambda x, fn=fn: fn(torch, x), (torch.tensor(a),), (torch.tensor(t),))
        pr, tr = T.func.jvp(lambda x, fn=fn: fn(T, x), (T.tensor(a),), (T.tensor(t),))
        for x, y in zip(_leaves((pt, tt)), _leaves((pr, tr)), strict=True):
            _same(x, y, "jvp")
        vt = torch.func.vmap(lambda x, fn=fn: fn(torch, x))(torch.tensor(w))
        vr = T.func.vmap(lambda x, fn=fn: fn(T, x))(T.tensor(w))
        for x, y in zip(_leaves(vt), _leaves(vr), strict=True):
            _same(x, y, "vmap")


def test_dtype_errors_unchanged():
    """Integer input still raises PyTorch's errors."""
    for M in (torch, T):
        x = M.ones(3, 3, dtype=M.int64)
        with pytest.raises(
            RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"
        ):
            M.linalg.svd(x)
        with pytest.raises(NotImplementedError, match="linalg_eigh_cpu"):
            M.linalg.eigh(x)
