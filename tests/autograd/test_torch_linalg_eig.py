"""linalg.eig / linalg.eigvals against PyTorch: values (eigenvalues in LAPACK's order, which MKL
and OpenBLAS share on these inputs; eigenvectors up to each column's phase, which the two LAPACK
builds do not share), grad_fn names, first- and second-order gradients of gauge-invariant
programs in float64 and complex128, forward mode, vmap, the gauge-invariance error, repeated
eigenvalues, dtypes and errors (type and message).

Tolerances: both sides call LAPACK geev (PyTorch's MKL, NumPy's OpenBLAS) on well-conditioned
inputs (eigenvalue gaps of order 0.1 and more): rtol 1e-8 / atol 1e-10.
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


def _close(a, b, what):
    assert tuple(a.shape) == tuple(b.shape), what
    assert str(a.dtype).replace("torch.", "") == str(b.dtype), (what, a.dtype, b.dtype)
    np.testing.assert_allclose(_np(b), _np(a), rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=what)


def _matrix(seed, shape, complex_=False):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if complex_:
        a = a + 1j * rng.standard_normal(shape)
    return a


def _vlv(M, a):
    L, V = M.linalg.eig(a)
    return (V * L.unsqueeze(-2)) @ V.mH


def _abs2(M, a):
    L, V = M.linalg.eig(a)
    return (V * V.conj()).real * L.unsqueeze(-2)


def _eigvals(M, a):
    return M.linalg.eigvals(a) ** 2


PROGRAMS = {"V_L_VH": _vlv, "abs2": _abs2, "eigvals": _eigvals}
CASES = [(name, shape, cplx) for name in PROGRAMS for shape in [(3, 3), (2, 4, 4)] for cplx in (False, True)]


@pytest.mark.parametrize(
    "name, shape, cplx", CASES, ids=[f"{n}-{len(s)}d-{'c' if c else 'r'}" for n, s, c in CASES]
)
def test_values_and_gradients_agree_with_torch(name, shape, cplx):
    fn = PROGRAMS[name]
    a = _matrix(1, shape, cplx)
    dt_t, dt_r = (torch.complex128, T.complex128) if cplx else (torch.float64, T.float64)
    xt = torch.tensor(a, dtype=dt_t, requires_grad=True)
    xr = T.tensor(a, dtype=dt_r, requires_grad=True)
    ot, orf = fn(torch, xt), fn(T, xr)
    _close(ot, orf, "value")
    assert ot.grad_fn.name() == orf.grad_fn.name()
    rng = np.random.default_rng(2)
    v = rng.standard_normal(tuple(ot.shape)) + (
        1j * rng.standard_normal(tuple(ot.shape)) if ot.is_complex() else 0
    )
    gt = torch.autograd.grad(ot, xt, torch.tensor(v), create_graph=True)[0]
    gr = T.autograd.grad(orf, xr, T.tensor(v), create_graph=True)[0]
    _close(gt, gr, "gradient")
    w = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if cplx else 0)
    st = (gt * torch.tensor(w).conj()).real.sum() if cplx else (gt * torch.tensor(w)).sum()
    sr = (gr * T.tensor(w).conj()).real.sum() if cplx else (gr * T.tensor(w)).sum()
    _close(torch.autograd.grad(st, xt)[0], T.autograd.grad(sr, xr)[0], "second order")


@pytest.mark.parametrize("cplx", [False, True])
def test_values_and_phases(cplx):
    a = _matrix(3, (2, 5, 5), cplx)
    tL, tV = torch.linalg.eig(torch.tensor(a))
    rL, rV = T.linalg.eig(T.tensor(a))
    _close(tL, rL, "eigenvalues")
    # each column agrees up to a unit phase (a sign for a real eigenvector of a real input)
    ratio = _np(rV) / _np(tV)
    phase = ratio[..., :1, :]
    np.testing.assert_allclose(np.abs(phase), 1.0, rtol=1e-8)
    np.testing.assert_allclose(_np(rV), _np(tV) * phase, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(np.linalg.norm(_np(rV), axis=-2), 1.0, rtol=1e-12)
    assert type(T.linalg.eig(T.tensor(a))).__name__ == "linalg_eig"
    assert T.linalg.eig(T.tensor(a)).eigenvectors.dtype == T.complex128


def test_forward_mode_agrees_with_torch():
    import torch.func

    a = _matrix(4, (4, 4))
    t = _matrix(5, (4, 4))

    def f(M, x):
        L, V = M.linalg.eig(x)
        return (V * V.conj()).real * L.unsqueeze(-2), L

    pt, tt = torch.func.jvp(lambda x: f(torch, x), (torch.tensor(a),), (torch.tensor(t),))
    pr, tr = T.func.jvp(lambda x: f(T, x), (T.tensor(a),), (T.tensor(t),))
    for x, y in zip(tt, tr):
        _close(x, y, "tangent")


def test_vmap_of_grad_agrees_with_torch():
    import torch.func

    a = _matrix(6, (3, 3, 3))

    def loss(M, x):
        return M.linalg.eigvals(x).abs().sum() + _abs2(M, x).sum().real

    gt = torch.func.vmap(torch.func.grad(lambda x: loss(torch, x)))(torch.tensor(a))
    gr = T.func.vmap(T.func.grad(lambda x: loss(T, x)))(T.tensor(a))
    _close(gt, gr, "vmap(grad)")


@pytest.mark.parametrize("cplx", [False, True])
def test_gauge_dependent_loss_raises_torch_error(cplx):
    a = _matrix(7, (3, 3), cplx)
    for M in (torch, T):
        x = M.tensor(a, requires_grad=True)
        L, V = M.linalg.eig(x)
        with pytest.raises(RuntimeError) as exc:
            M.autograd.grad(V.sum().abs(), x)
        assert str(exc.value).startswith(
            "linalg_eig_backward: The eigenvectors in the complex case are specified"
        )
        if M is torch:
            msg = str(exc.value)
        else:
            assert str(exc.value) == msg


def test_repeated_eigenvalues_as_torch():
    out = []
    for M in (torch, T):
        x = M.eye(3, dtype=M.float64, requires_grad=True)
        L, V = M.linalg.eig(x)
        gL = M.autograd.grad(L.real.sum(), x, retain_graph=True)[0]
        gV = M.autograd.grad((V * V.conj()).real.sum(), x)[0]
        out.append((gL, gV))
    _close(out[0][0], out[1][0], "eigenvalues only: finite")
    assert np.isnan(_np(out[0][1])).all() and np.isnan(_np(out[1][1])).all()


@pytest.mark.parametrize(
    "make",
    [
        lambda M: M.linalg.eig(M.ones(3)),
        lambda M: M.linalg.eig(M.ones(2, 3)),
        lambda M: M.linalg.eigvals(M.ones(2, 3)),
        lambda M: M.linalg.eigvals(M.ones(2, 3, requires_grad=True)),
        lambda M: M.linalg.eigvals(M.ones(3, requires_grad=True)),
        lambda M: M.linalg.eig(M.ones(2, 2, dtype=M.int64)),
        lambda M: M.linalg.eigvals(M.ones(2, 2, dtype=M.bool)),
        lambda M: M.linalg.eig(M.ones(2, 2, dtype=M.float16)),
        lambda M: M.linalg.eig(M.tensor([[1.0, float("nan")], [0.0, 1.0]])),
        lambda M: M.linalg.eigvals(M.tensor([[1.0, float("inf")], [0.0, 1.0]], requires_grad=True)),
    ],
)
def test_errors_as_torch(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as et:
            make(torch)
    with pytest.raises(Exception) as er:
        make(T)
    assert type(er.value).__name__ == type(et.value).__name__
    assert str(er.value) == str(et.value)


def test_dtypes_and_empty():
    for dt_t, dt_r in (
        (torch.float32, T.float32),
        (torch.complex64, T.complex64),
        (torch.float64, T.float64),
    ):
        a = _matrix(8, (3, 3)).astype(np.float32)
        tL = torch.linalg.eigvals(torch.tensor(a, dtype=dt_t))
        rL = T.linalg.eigvals(T.tensor(a, dtype=dt_r))
        assert str(tL.dtype).replace("torch.", "") == str(rL.dtype)
        np.testing.assert_allclose(_np(rL), _np(tL), rtol=1e-5)
    for shape in ((0, 0), (2, 0, 0)):
        tL, tV = torch.linalg.eig(torch.zeros(shape))
        rL, rV = T.linalg.eig(T.zeros(shape))
        assert tuple(tL.shape) == tuple(rL.shape) and tuple(tV.shape) == tuple(rV.shape)
        assert str(rL.dtype) == "complex64"


# ---- Vandermonde matrices ------------------------------------------------------------------------

VANDER = [
    ("linalg_default", lambda M, x: M.linalg.vander(x)),
    ("linalg_N", lambda M, x: M.linalg.vander(x, N=5)),
    ("vander_default", lambda M, x: M.vander(x)),
    ("vander_increasing", lambda M, x: M.vander(x, N=4, increasing=True)),
    ("vander_N1", lambda M, x: M.vander(x, N=1) * 1.0),
]


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("name", [v[0] for v in VANDER])
def test_vander_values_gradients_and_nodes(name, cplx):
    fn = dict(VANDER)[name]
    a = _matrix(9, (3,), cplx)
    xt, xr = torch.tensor(a, requires_grad=True), T.tensor(a, requires_grad=True)
    ot, orf = fn(torch, xt), fn(T, xr)
    _close(ot, orf, "value")
    nt = ot.grad_fn.name() if ot.grad_fn is not None else None
    nr = orf.grad_fn.name() if orf.grad_fn is not None else None
    assert nt == nr
    if not ot.requires_grad:
        assert not orf.requires_grad
        return
    v = _matrix(10, tuple(ot.shape), cplx)
    try:
        gt = torch.autograd.grad(ot, xt, torch.tensor(v))[0]
    except RuntimeError as e:
        # torch.vander's backward fails in torch 2.13: aten copies cumprod's result into the view
        # cumprod read (and saved), so its saved input is at a newer version; the composition
        # reproduces the error, message included
        with pytest.raises(RuntimeError) as er:
            T.autograd.grad(orf, xr, T.tensor(v))
        assert str(er.value) == str(e)
        assert name.startswith("vander")
        return
    _close(gt, T.autograd.grad(orf, xr, T.tensor(v))[0], "grad")


def test_vander_batched_and_integer_dtypes():
    a = _matrix(11, (2, 3))
    _close(torch.linalg.vander(torch.tensor(a), N=4), T.linalg.vander(T.tensor(a), N=4), "batched")
    for dt in ("int8", "int32", "int64", "uint8"):
        xt = torch.tensor([1, 2, 3], dtype=getattr(torch, dt))
        xr = T.tensor([1, 2, 3], dtype=getattr(T, dt))
        _close(torch.linalg.vander(xt), T.linalg.vander(xr), f"linalg.vander {dt}")
        _close(torch.vander(xt), T.vander(xr), f"vander {dt}")
    _close(torch.vander(torch.tensor([True, False])), T.vander(T.tensor([True, False])), "vander bool")


@pytest.mark.parametrize(
    "make",
    [
        lambda M: M.linalg.vander(M.tensor([True, False])),
        lambda M: M.linalg.vander(M.tensor([1.0, 2.0], dtype=M.float16)),
        lambda M: M.linalg.vander(M.tensor(2.0)),
        lambda M: M.linalg.vander(M.tensor([2.0, 3.0]), N=1),
        lambda M: M.linalg.vander(M.ones(0)),
        lambda M: M.vander(M.ones(2, 2)),
        lambda M: M.vander(M.ones(2), N=-1),
    ],
)
def test_vander_errors_as_torch(make):
    with pytest.raises(Exception) as et:
        make(torch)
    with pytest.raises(Exception) as er:
        make(T)
    assert type(er.value).__name__ == type(et.value).__name__
    assert str(er.value) == str(et.value)


# ---- reductions with real results of complex input (the complex paths of var/std/vector_norm) ----

COMPLEX_REDUCTIONS = {
    "var": lambda M, x: M.var(x, dim=1),
    "std": lambda M, x: M.std(x),
    "var_correction": lambda M, x: M.var(x, dim=0, correction=0, keepdim=True),
    "var_mean": lambda M, x: M.var_mean(x, dim=1)[0] + M.var_mean(x, dim=1)[1].abs(),
    "std_mean": lambda M, x: M.std_mean(x, dim=0)[0] * M.std_mean(x, dim=0)[1].real,
    "vector_norm_2": lambda M, x: M.linalg.vector_norm(x, dim=1),
    "vector_norm_1": lambda M, x: M.linalg.vector_norm(x, 1),
    "vector_norm_3": lambda M, x: M.linalg.vector_norm(x, 3, dim=0),
    "vector_norm_half": lambda M, x: M.linalg.vector_norm(x, 0.5, dim=0),
    "vector_norm_1.5": lambda M, x: M.linalg.vector_norm(x, 1.5),
    "vector_norm_inf": lambda M, x: M.linalg.vector_norm(x, float("inf"), dim=1),
    "vector_norm_0": lambda M, x: M.linalg.vector_norm(x, 0) + M.linalg.vector_norm(x),
    "linalg_norm": lambda M, x: M.linalg.norm(x),
    "torch_norm_p3": lambda M, x: M.norm(x, p=3, dim=1),
}


@pytest.mark.parametrize("name", list(COMPLEX_REDUCTIONS))
def test_complex_reductions_agree_with_torch(name):
    import torch.func

    f = COMPLEX_REDUCTIONS[name]
    rng = np.random.default_rng(12)
    a = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    xt, xr = torch.tensor(a, requires_grad=True), T.tensor(a, requires_grad=True)
    ot, orf = f(torch, xt), f(T, xr)
    _close(ot, orf, "value")
    assert ot.grad_fn.name() == orf.grad_fn.name()
    v = rng.standard_normal(tuple(ot.shape))
    gt = torch.autograd.grad(ot, xt, torch.tensor(v), create_graph=True)[0]
    gr = T.autograd.grad(orf, xr, T.tensor(v), create_graph=True)[0]
    _close(gt, gr, "gradient")
    w = rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)
    g2t = torch.autograd.grad((gt * torch.tensor(w).conj()).real.sum(), xt)[0]
    g2r = T.autograd.grad((gr * T.tensor(w).conj()).real.sum(), xr)[0]
    _close(g2t, g2r, "second order")
    t = rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)
    jt = torch.func.jvp(lambda x: f(torch, x), (torch.tensor(a),), (torch.tensor(t),))[1]
    jr = T.func.jvp(lambda x: f(T, x), (T.tensor(a),), (T.tensor(t),))[1]
    _close(jt, jr, "jvp")
    c64 = torch.tensor(a, dtype=torch.complex64)
    assert str(f(torch, c64).dtype).replace("torch.", "") == str(f(T, T.tensor(a, dtype=T.complex64)).dtype)
