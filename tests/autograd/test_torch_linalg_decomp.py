"""The decomposition family against PyTorch: forward values (gauge-invariant quantities: vectors
enter squared or as ``U @ Vh``), grad_fn names, first- and second-order gradients, forward-mode
and vmap, and errors (type and message), on the same program text run with ``torch`` and with
``reference`` (``M`` below is either module).

Tolerances: both sides call LAPACK (PyTorch's build and NumPy's), whose roundings differ; values
are compared to rtol 1e-8 / atol 1e-10 (the inputs are well conditioned: gaps and singular values
of order 0.1 and more), and nan/inf where PyTorch's derivative is undefined must match exactly.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import reference as T

RTOL, ATOL = 1e-8, 1e-10


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _flat(x)]
    return [out]


def _np(t):
    return t.detach().numpy(force=True) if hasattr(t, "detach") else np.asarray(t)


def _dt(t):
    return str(t.dtype).replace("torch.", "")


def _same(a, b, what):
    assert (a is None) == (b is None), f"{what}: torch {a!r} vs reference {b!r}"
    if a is None:
        return
    assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {tuple(a.shape)} vs {tuple(b.shape)}"
    assert _dt(a) == _dt(b), f"{what}: dtype {a.dtype} vs {b.dtype}"
    np.testing.assert_allclose(_np(b), _np(a), rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=what)


def _inputs(M, arrays):
    return [M.tensor(a, dtype=M.float64, requires_grad=True) for a in arrays]


def compare(fn, arrays, *, order=2, nodes=True, seed=0):
    """Values, grad_fn names, the VJP with a random cotangent, and the gradient of a random
    projection of it, on torch and on the reference."""
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xt, xr = _inputs(torch, arrays), _inputs(T, arrays)
        ot, orf = _flat(fn(torch, *xt)), _flat(fn(T, *xr))
    assert len(ot) == len(orf)
    for i, (a, b) in enumerate(zip(ot, orf)):
        _same(a, b, f"output {i}")
        if nodes:
            na = a.grad_fn.name() if a.grad_fn is not None else None
            nb = b.grad_fn.name() if b.grad_fn is not None else None
            assert na == nb, f"output {i}: grad_fn {na} vs {nb}"
    diff = [i for i, o in enumerate(ot) if o.requires_grad]
    assert diff == [i for i, o in enumerate(orf) if o.requires_grad]
    if order < 1 or not diff:
        return
    vs = [rng.standard_normal(tuple(ot[i].shape)) for i in diff]
    gt = torch.autograd.grad([ot[i] for i in diff], xt, [torch.tensor(v) for v in vs], create_graph=True)
    gr = T.autograd.grad([orf[i] for i in diff], xr, [T.tensor(v) for v in vs], create_graph=True)
    for i, (a, b) in enumerate(zip(gt, gr)):
        _same(a, b, f"gradient of input {i}")
    if order < 2:
        return
    ws = [rng.standard_normal(tuple(x.shape)) for x in xt]
    st = [(g * torch.tensor(w)).sum() for g, w in zip(gt, ws) if g.requires_grad]
    sr = [(g * T.tensor(w)).sum() for g, w in zip(gr, ws) if g.requires_grad]
    assert len(st) == len(sr)
    if not st:
        return
    ggt = torch.autograd.grad(sum(st), xt, allow_unused=True)
    ggr = T.autograd.grad(sum(sr[1:], sr[0]), xr, allow_unused=True)
    for i, (a, b) in enumerate(zip(ggt, ggr)):
        _same(a, b, f"second-order gradient of input {i}")


def same_error(fn, arrays=(), *, match_message=True, backward=False):
    """``fn`` raises the same exception type (and message) on torch and the reference
    (``backward``: in the backward pass of ``fn``'s output sum)."""
    errors = []
    for M in (torch, T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                xs = [M.tensor(a, requires_grad=backward) for a in arrays]
                out = fn(M, *xs)
                if backward:
                    M.autograd.grad(sum(o.sum() for o in _flat(out)), xs)
            except Exception as e:  # noqa: BLE001 - the point is to compare them
                errors.append(e)
            else:
                errors.append(None)
    et, er = errors
    assert et is not None, "torch did not raise"
    assert er is not None, f"reference did not raise (torch: {type(et).__name__}: {et})"
    # the reference's error may be a subclass (AutogradError is a RuntimeError)
    names = [c.__name__ for c in type(er).__mro__]
    assert type(et).__name__ in names, f"{type(et).__name__}: {et} vs {type(er).__name__}: {er}"
    if match_message:
        assert str(et).split("\n")[0] == str(er).split("\n")[0]


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _sym(a):
    return a + a.mT


def _eigh_inv(M, a, uplo="L"):
    L, V = M.linalg.eigh(_sym(a), UPLO=uplo)
    return L, V * V, V @ (L.unsqueeze(-1) * V.mT)


def _svd_inv(M, a, full=True):
    U, S, Vh = M.linalg.svd(a, full_matrices=full)
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return U * U, S, Vh * Vh, U @ Vh


def _qr_all(M, a, mode="reduced"):
    return tuple(M.linalg.qr(a, mode=mode))


# ---- values, nodes, gradients ----------------------------------------------------------------------------

CASES = {
    "eigh": (lambda M, a: _eigh_inv(M, a), [(4, 4)]),
    "eigh_upper_batched": (lambda M, a: _eigh_inv(M, a, "U"), [(2, 3, 3)]),
    "eigh_empty": (lambda M, a: _eigh_inv(M, a), [(0, 0)]),
    "eigh_batch_of_empty": (lambda M, a: _eigh_inv(M, a), [(2, 0, 0)]),
    "eigh_one": (lambda M, a: _eigh_inv(M, a), [(1, 1)]),
    "eigvalsh": (lambda M, a: M.linalg.eigvalsh(_sym(a)), [(4, 4)]),
    "eigvalsh_upper_unsymmetrised": (lambda M, a: M.linalg.eigvalsh(a, UPLO="U"), [(3, 3)]),
    "eigh_lower_unsymmetrised": (lambda M, a: M.linalg.eigh(a)[0], [(3, 3)]),
    "qr_tall": (lambda M, a: _qr_all(M, a), [(5, 3)]),
    "qr_square": (lambda M, a: _qr_all(M, a), [(3, 3)]),
    "qr_wide": (lambda M, a: _qr_all(M, a), [(3, 5)]),
    "qr_complete_square": (lambda M, a: _qr_all(M, a, "complete"), [(3, 3)]),
    "qr_complete_wide_batched": (lambda M, a: _qr_all(M, a, "complete"), [(2, 2, 4)]),
    "qr_R_only_grad": (lambda M, a: M.linalg.qr(a)[1], [(4, 3)]),
    "qr_Q_only_grad_wide": (lambda M, a: M.linalg.qr(a)[0], [(2, 3)]),
    "qr_empty": (lambda M, a: _qr_all(M, a), [(0, 3)]),
    "qr_empty_tall": (lambda M, a: _qr_all(M, a), [(3, 0)]),
    "qr_mode_r_values": (lambda M, a: M.linalg.qr(a.detach(), mode="r")[1], [(4, 3)]),
    "torch_qr": (lambda M, a: tuple(M.qr(a)), [(4, 3)]),
    "torch_qr_some_false": (lambda M, a: tuple(M.qr(a, some=False)), [(2, 3)]),
    "tensor_qr": (lambda M, a: tuple(a.qr()), [(3, 3)]),
    "svd_square": (lambda M, a: _svd_inv(M, a), [(3, 3)]),
    "svd_tall_full": (lambda M, a: _svd_inv(M, a), [(5, 3)]),
    "svd_wide_reduced": (lambda M, a: _svd_inv(M, a, False), [(2, 4)]),
    "svd_batched": (lambda M, a: _svd_inv(M, a, False), [(2, 4, 3)]),
    "svd_empty": (lambda M, a: _svd_inv(M, a), [(0, 3)]),
    "svd_U_only": (lambda M, a: M.linalg.svd(a, full_matrices=False)[0] ** 2, [(4, 2)]),
    "svd_Vh_only_wide": (lambda M, a: M.linalg.svd(a, full_matrices=False)[2] ** 2, [(2, 4)]),
    "svd_S_only": (lambda M, a: M.linalg.svd(a)[1], [(3, 4)]),
    "svdvals": (lambda M, a: M.linalg.svdvals(a), [(4, 3)]),
    "svdvals_batched": (lambda M, a: M.linalg.svdvals(a), [(2, 2, 3)]),
    "torch_svd": (lambda M, a: (M.svd(a)[0] ** 2, M.svd(a)[1], M.svd(a)[2] ** 2), [(4, 3)]),
    "torch_svd_some_false": (lambda M, a: M.svd(a, some=False)[1], [(3, 2)]),
    "torch_svd_no_uv": (lambda M, a: tuple(M.svd(a, compute_uv=False)), [(3, 2)]),
    "tensor_svd": (lambda M, a: a.svd()[1], [(3, 3)]),
    "pinv_tall": (lambda M, a: M.linalg.pinv(a), [(4, 3)]),
    "pinv_wide_batched": (lambda M, a: M.linalg.pinv(a), [(2, 2, 4)]),
    "pinv_hermitian": (lambda M, a: M.linalg.pinv(_sym(a), hermitian=True), [(3, 3)]),
    "pinv_rtol": (lambda M, a: M.linalg.pinv(a, rtol=0.3), [(3, 3)]),
    "pinv_atol": (lambda M, a: M.linalg.pinv(a, atol=0.5), [(4, 3)]),
    "pinv_legacy_rcond": (lambda M, a: M.linalg.pinv(a, 0.2), [(3, 3)]),
    "pinv_empty": (lambda M, a: M.linalg.pinv(a), [(0, 3)]),
    "pinverse": (lambda M, a: M.pinverse(a), [(3, 4)]),
    "tensor_pinverse": (lambda M, a: a.pinverse(rcond=0.1), [(3, 3)]),
    "lstsq_tall": (lambda M, a, b: tuple(M.linalg.lstsq(a, b))[:2], [(5, 3), (5, 2)]),
    "lstsq_gelsd": (lambda M, a, b: tuple(M.linalg.lstsq(a, b, driver="gelsd")), [(5, 3), (5, 2)]),
    "lstsq_gelss_wide": (lambda M, a, b: tuple(M.linalg.lstsq(a, b, driver="gelss")), [(2, 4), (2, 3)]),
    "lstsq_gels_vector": (lambda M, a, b: tuple(M.linalg.lstsq(a, b, driver="gels")), [(4, 2), (4,)]),
    "lstsq_broadcast": (
        lambda M, a, b: tuple(M.linalg.lstsq(a, b, driver="gelsd")),
        [(2, 1, 4, 3), (1, 3, 4, 2)],
    ),
    # rcond truncating the rank, on gelsd (an SVD: one answer): torch 2.13's default CPU driver, gelsy,
    # answers this case three ways on repeated identical calls (docs/conformance.md, "torch lstsq
    # gelsy"); the reference's gelsy is LAPACK's with every column free (test below)
    "lstsq_rcond": (lambda M, a, b: M.linalg.lstsq(a, b, rcond=0.5, driver="gelsd")[0], [(4, 3), (4, 1)]),
    "matrix_norm_fro": (lambda M, a: M.linalg.matrix_norm(a), [(3, 4)]),
    "matrix_norm_nuc": (lambda M, a: M.linalg.matrix_norm(a, "nuc"), [(2, 3, 4)]),
    "matrix_norm_2": (lambda M, a: M.linalg.matrix_norm(a, 2), [(3, 4)]),
    "matrix_norm_m2": (lambda M, a: M.linalg.matrix_norm(a, -2), [(4, 3)]),
    "matrix_norm_1": (lambda M, a: M.linalg.matrix_norm(a, 1), [(3, 4)]),
    "matrix_norm_m1": (lambda M, a: M.linalg.matrix_norm(a, -1), [(3, 4)]),
    "matrix_norm_inf": (lambda M, a: M.linalg.matrix_norm(a, math.inf), [(3, 4)]),
    "matrix_norm_minf": (lambda M, a: M.linalg.matrix_norm(a, -math.inf), [(3, 4)]),
    "matrix_norm_dims_keepdim": (lambda M, a: M.linalg.matrix_norm(a, 1, (0, 2), keepdim=True), [(3, 2, 4)]),
    "matrix_norm_2_dims_keepdim": (
        lambda M, a: M.linalg.matrix_norm(a, 2, (2, 0), keepdim=True),
        [(3, 2, 4)],
    ),
    "matrix_norm_nuc_dims": (lambda M, a: M.linalg.matrix_norm(a, "nuc", (-1, 0)), [(3, 2, 4)]),
    "matrix_norm_inf_dims": (lambda M, a: M.linalg.matrix_norm(a, math.inf, (2, 0)), [(3, 2, 4)]),
    "matrix_norm_empty_1": (lambda M, a: M.linalg.matrix_norm(a, 1), [(0, 3)]),
    "matrix_norm_empty_2": (lambda M, a: M.linalg.matrix_norm(a, 2), [(3, 0)]),
    "matrix_norm_empty_nuc": (lambda M, a: M.linalg.matrix_norm(a, "nuc"), [(0, 0)]),
    "torch_norm_nuc": (lambda M, a: M.norm(a, "nuc"), [(3, 4)]),
    "torch_norm_nuc_dims": (lambda M, a: M.norm(a, p="nuc", dim=(0, 2), keepdim=True), [(3, 2, 4)]),
    "norm_default": (lambda M, a: M.linalg.norm(a), [(2, 3, 4)]),
    "norm_ord_matrix": (lambda M, a: M.linalg.norm(a, "nuc"), [(3, 4)]),
    "norm_ord_2_matrix": (lambda M, a: M.linalg.norm(a, 2), [(3, 4)]),
    "norm_ord_vector": (lambda M, a: M.linalg.norm(a, 3), [(4,)]),
    "norm_dim_int": (lambda M, a: M.linalg.norm(a, 1, dim=1), [(3, 4)]),
    "norm_dim_pair": (lambda M, a: M.linalg.norm(a, -math.inf, dim=(1, 0), keepdim=True), [(3, 4)]),
    "cond_default": (lambda M, a: M.linalg.cond(a), [(3, 3)]),
    "cond_2_rect": (lambda M, a: M.linalg.cond(a, 2), [(4, 3)]),
    "cond_m2_batched": (lambda M, a: M.linalg.cond(a, -2), [(2, 3, 3)]),
    "cond_empty": (lambda M, a: M.linalg.cond(a), [(2, 0, 0)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_agrees_with_torch(name):
    fn, shapes = CASES[name]
    compare(fn, [_rand(*s, seed=i) for i, s in enumerate(shapes)])


_COND_INV = ("fro", "nuc", 1, -1, math.inf, -math.inf)


@pytest.mark.parametrize("p", _COND_INV, ids=str)
def test_cond_orders_through_the_inverse(p):
    if p != "nuc" and getattr(T.linalg, "inv_ex", None) is None:
        pytest.skip("linalg.cond(p) for p not in (2, -2, None) needs linalg.inv_ex (the linear-solve family)")
    compare(lambda M, a: M.linalg.cond(a, p), [_rand(3, 3)], order=0)
    compare(lambda M, a: M.linalg.cond(a, p), [np.ones((3, 3))], order=0, nodes=False)
    if p == "nuc":
        compare(lambda M, a: M.linalg.cond(a, p), [_rand(3, 3)])
    else:  # PyTorch writes inf into linalg_inv_ex's saved inverse in place: its backward fails
        same_error(lambda M, a: M.linalg.cond(a, p), [_rand(3, 3)], backward=True)


# ---- undefined derivatives: repeated eigenvalues / singular values, rank deficiency -------------------------


def _grads(M, fn, a):
    x = M.tensor(a, requires_grad=True)
    return _np(M.autograd.grad(fn(M, x), x)[0])


UNDEFINED = {
    # eigenvalues alone: V diag(gL) V^T, finite; eigenvectors: division by the zero gaps (nan)
    "eigh_repeated_values": (lambda M, x: M.linalg.eigh(x)[0].pow(2).sum(), np.eye(3)),
    "eigh_repeated_vectors": (
        lambda M, x: (M.linalg.eigh(x)[1] ** 2).sum() + M.linalg.eigh(x)[0].sum(),
        np.eye(3),
    ),
    "eigvalsh_repeated": (lambda M, x: M.linalg.eigvalsh(x).sum(), np.diag([1.0, 1.0, 2.0])),
    "svd_repeated_values": (lambda M, x: M.linalg.svdvals(x).sum(), np.eye(3)),
    "svd_repeated_vectors": (lambda M, x: (M.linalg.svd(x)[0] @ M.linalg.svd(x)[2]).sum(), 2 * np.eye(3)),
    "svd_rank_deficient_values": (lambda M, x: M.linalg.svdvals(x).sum(), np.ones((3, 2))),
    "svd_rank_deficient_U": (
        lambda M, x: (M.linalg.svd(x, full_matrices=False)[0] ** 2).sum(),
        np.ones((3, 2)),
    ),
    "nuclear_norm_rank_deficient": (lambda M, x: M.linalg.matrix_norm(x, "nuc"), np.ones((2, 2))),
    "pinv_rank_deficient": (lambda M, x: M.linalg.pinv(x).sum(), np.ones((3, 2))),
    "cond_singular": (lambda M, x: M.linalg.cond(x), np.ones((2, 2))),
}


@pytest.mark.parametrize("name", sorted(UNDEFINED))
def test_undefined_derivatives_follow_torch(name):
    fn, a = UNDEFINED[name]
    with np.errstate(all="ignore"):
        got = _grads(T, fn, a)
    want = _grads(torch, fn, a)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    assert np.array_equal(np.isposinf(got), np.isposinf(want)) and np.array_equal(
        np.isneginf(got), np.isneginf(want)
    )
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=RTOL, atol=ATOL)


def test_svd_gauge_check_does_not_apply_to_real_inputs():
    """PyTorch's svd_backward raises for a phase-dependent loss only for complex inputs; a real
    loss on U alone (sign-dependent) is differentiated without an error, by both."""
    compare(lambda M, a: M.linalg.svd(a)[0].sum(), [_rand(3, 3)], order=1)


# ---- forward mode and vmap --------------------------------------------------------------------------------

FUNC = {
    "eigh": (lambda M, a: _eigh_inv(M, a), [(3, 3)]),
    "qr_tall": (lambda M, a: _qr_all(M, a), [(4, 3)]),
    "qr_wide": (lambda M, a: _qr_all(M, a), [(2, 4)]),
    "svd_reduced": (lambda M, a: _svd_inv(M, a, False), [(4, 3)]),
    "svd_full_wide": (
        lambda M, a: tuple(o for o in M.linalg.svd(a)[1:2]) + (M.linalg.svd(a)[0] ** 2,),
        [(2, 4)],
    ),
    "pinv": (lambda M, a: M.linalg.pinv(a), [(3, 4)]),
    "pinv_hermitian": (lambda M, a: M.linalg.pinv(_sym(a), hermitian=True), [(3, 3)]),
    "lstsq": (lambda M, a, b: tuple(M.linalg.lstsq(a, b, driver="gelsd")[:2]), [(4, 2), (4, 3)]),
    "matrix_norm_nuc": (lambda M, a: M.linalg.matrix_norm(a, "nuc"), [(3, 4)]),
}


def _tangents(shapes, seed):
    return [_rand(*s, seed=seed + 10 + i) for i, s in enumerate(shapes)]


@pytest.mark.parametrize("name", sorted(FUNC))
def test_jvp_agrees_with_torch_func(name):
    fn, shapes = FUNC[name]
    xs = [_rand(*s, seed=i) for i, s in enumerate(shapes)]
    ts = _tangents(shapes, 0)
    _, tt = torch.func.jvp(
        lambda *a: fn(torch, *a), tuple(map(torch.tensor, xs)), tuple(map(torch.tensor, ts))
    )
    _, tr = T.func.jvp(lambda *a: fn(T, *a), tuple(map(T.tensor, xs)), tuple(map(T.tensor, ts)))
    for i, (a, b) in enumerate(zip(_flat(tt), _flat(tr))):
        _same(a, b, f"tangent {i}")


@pytest.mark.parametrize("name", sorted(FUNC))
def test_vmap_agrees_with_torch_func(name):
    fn, shapes = FUNC[name]
    xs = [_rand(3, *s, seed=i) for i, s in enumerate(shapes)]
    yt = torch.func.vmap(lambda *a: fn(torch, *a))(*map(torch.tensor, xs))
    yr = T.func.vmap(lambda *a: fn(T, *a), allow_fallback=False)(*map(T.tensor, xs))
    for i, (a, b) in enumerate(zip(_flat(yt), _flat(yr))):
        _same(a, b, f"output {i}")


def test_vmap_of_grad_agrees_with_torch_func():
    def loss(M):
        return lambda a: (M.linalg.svdvals(a) ** 3).sum() + (M.linalg.qr(a)[0] ** 3).sum()

    xs = _rand(3, 4, 3)
    gt = torch.func.vmap(torch.func.grad(loss(torch)))(torch.tensor(xs))
    gr = T.func.vmap(T.func.grad(loss(T)), allow_fallback=False)(T.tensor(xs))
    _same(gt, gr, "vmap(grad)")


# ---- errors -------------------------------------------------------------------------------------------------

ERRORS = {
    "eigh_1d": (lambda M, a: M.linalg.eigh(a), [(3,)]),
    "eigh_not_square": (lambda M, a: M.linalg.eigh(a), [(2, 3)]),
    "eigh_uplo": (lambda M, a: M.linalg.eigh(a, UPLO="X"), [(3, 3)]),
    "eigh_int": (lambda M, a: M.linalg.eigh(a.long()), [(3, 3)]),
    "eigvalsh_not_square": (lambda M, a: M.linalg.eigvalsh(a), [(2, 3)]),
    "qr_1d": (lambda M, a: M.linalg.qr(a), [(3,)]),
    "qr_int": (lambda M, a: M.linalg.qr(a.long()), [(3, 3)]),
    "qr_mode": (lambda M, a: M.linalg.qr(a, mode="x"), [(3, 3)]),
    "svd_1d": (lambda M, a: M.linalg.svd(a), [(3,)]),
    "svd_int": (lambda M, a: M.linalg.svd(a.long()), [(3, 3)]),
    "svd_driver": (lambda M, a: M.linalg.svd(a, driver="gesvd"), [(3, 3)]),
    "svdvals_int": (lambda M, a: M.linalg.svdvals(a.long()), [(3, 3)]),
    "torch_svd_1d": (lambda M, a: M.svd(a), [(3,)]),
    "pinv_1d": (lambda M, a: M.linalg.pinv(a), [(3,)]),
    "pinv_int": (lambda M, a: M.linalg.pinv(a.long()), [(3, 3)]),
    "pinv_hermitian_rect": (lambda M, a: M.linalg.pinv(a, hermitian=True), [(2, 3)]),
    "lstsq_1d": (lambda M, a, b: M.linalg.lstsq(a, b), [(3,), (3,)]),
    "lstsq_vector_rows": (lambda M, a, b: M.linalg.lstsq(a, b), [(3, 2), (2,)]),
    "lstsq_rows": (lambda M, a, b: M.linalg.lstsq(a, b), [(3, 2), (4, 1)]),
    "lstsq_dtype": (lambda M, a, b: M.linalg.lstsq(a, b.float()), [(3, 2), (3, 1)]),
    "lstsq_driver": (lambda M, a, b: M.linalg.lstsq(a, b, driver="foo"), [(3, 2), (3, 1)]),
    "lstsq_dims": (lambda M, a, b: M.linalg.lstsq(a, b), [(4, 2), (1, 4, 1)]),
    "matrix_rank_1d": (lambda M, a: M.linalg.matrix_rank(a), [(3,)]),
    "matrix_rank_hermitian_rect": (lambda M, a: M.linalg.matrix_rank(a, hermitian=True), [(2, 3)]),
    "matrix_norm_1d": (lambda M, a: M.linalg.matrix_norm(a), [(3,)]),
    "matrix_norm_ord": (lambda M, a: M.linalg.matrix_norm(a, 3), [(3, 3)]),
    "matrix_norm_ord_str": (lambda M, a: M.linalg.matrix_norm(a, "abc"), [(3, 3)]),
    "matrix_norm_int": (lambda M, a: M.linalg.matrix_norm(a.long()), [(3, 3)]),
    "matrix_norm_same_dims": (lambda M, a: M.linalg.matrix_norm(a, dim=(0, 0)), [(3, 3)]),
    "matrix_norm_one_dim": (lambda M, a: M.linalg.matrix_norm(a, dim=(0,)), [(3, 3)]),
    "matrix_norm_empty_m2": (lambda M, a: M.linalg.matrix_norm(a, -2), [(3, 0)]),
    "norm_3d_ord": (lambda M, a: M.linalg.norm(a, 2), [(3, 3, 3)]),
    "norm_str_one_dim": (lambda M, a: M.linalg.norm(a, "nuc", dim=1), [(3, 3)]),
    "norm_matrix_ord": (lambda M, a: M.linalg.norm(a, 3), [(3, 3)]),
    "cond_1d": (lambda M, a: M.linalg.cond(a), [(3,)]),
    "cond_bad_p": (lambda M, a: M.linalg.cond(a, 3), [(3, 3)]),
    "cond_bad_p_str": (lambda M, a: M.linalg.cond(a, "abc"), [(3, 3)]),
    "cond_rect_1": (lambda M, a: M.linalg.cond(a, 1), [(3, 2)]),
    "cond_rect_fro": (lambda M, a: M.linalg.cond(a, "fro"), [(3, 2)]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    fn, shapes = ERRORS[name]
    same_error(fn, [_rand(*s) for s in shapes])


def _nonfinite(upper=False):
    a = np.ones((3, 3))
    a[(0, 1) if upper else (1, 0)] = np.nan
    return a


LAPACK_ERRORS = {
    "svd": (lambda M, a: M.linalg.svd(a), True),
    "svdvals": (lambda M, a: M.linalg.svdvals(a), True),
    "pinv": (lambda M, a: M.linalg.pinv(a), True),
    "matrix_norm_2": (lambda M, a: M.linalg.matrix_norm(a, 2), True),
    "eigh_lower": (lambda M, a: M.linalg.eigh(a), False),  # the message carries LAPACK's info
    "eigvalsh_lower": (lambda M, a: M.linalg.eigvalsh(a), False),
    "pinv_hermitian": (lambda M, a: M.linalg.pinv(a, hermitian=True), False),
}


@pytest.mark.parametrize("name", sorted(LAPACK_ERRORS))
def test_lapack_failures_raise_linalg_error(name):
    fn, exact = LAPACK_ERRORS[name]
    same_error(fn, [_nonfinite()], match_message=exact)


def test_eigh_reads_one_triangle():
    """A non-finite value in the triangle eigh does not read is not an error (both)."""
    compare(lambda M, a: M.linalg.eigvalsh(a), [_nonfinite(upper=True)], order=0, nodes=False)


BACKWARD_ERRORS = {
    "qr_mode_r": (lambda M, a: M.linalg.qr(a, mode="r")[1], [(3, 3)]),
    "qr_complete_tall": (lambda M, a: M.linalg.qr(a, mode="complete"), [(4, 2)]),
}


@pytest.mark.parametrize("name", sorted(BACKWARD_ERRORS))
def test_backward_errors_match_torch(name):
    fn, shapes = BACKWARD_ERRORS[name]
    same_error(fn, [_rand(*s) for s in shapes], backward=True)


@pytest.mark.parametrize("mode", ["r", "complete"])
def test_qr_forward_mode_errors_match_torch(mode):
    x, t = _rand(4, 2), _rand(4, 2, seed=1)
    errors = []
    for M, J in ((torch, torch.func.jvp), (T, T.func.jvp)):
        with pytest.raises(RuntimeError) as info:
            J(lambda a, M=M: M.linalg.qr(a, mode=mode)[1], (M.tensor(x),), (M.tensor(t),))
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_matrix_rank_agrees_and_has_no_grad():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 0.5]])
    batch = np.stack([a, np.eye(3), np.zeros((3, 3))])
    for kwargs in ({}, {"atol": 0.5}, {"rtol": 0.4}, {"atol": 0.1, "rtol": 0.0}, {"hermitian": True}):
        for x in (a, batch, _rand(4, 2), _rand(2, 5)):
            if kwargs.get("hermitian"):
                x = x[..., :2, :2] + np.swapaxes(x[..., :2, :2], -1, -2)
            want = torch.linalg.matrix_rank(torch.tensor(x, requires_grad=True), **kwargs)
            got = T.linalg.matrix_rank(T.tensor(x, requires_grad=True), **kwargs)
            assert got.dtype == T.int64 and got.grad_fn is None and want.grad_fn is None
            np.testing.assert_array_equal(_np(got), _np(want), err_msg=str(kwargs))
    assert int(T.linalg.matrix_rank(T.tensor(a), 1.0)) == int(torch.linalg.matrix_rank(torch.tensor(a), 1.0))
    empty = T.linalg.matrix_rank(T.zeros(2, 0, 3, dtype=T.float64))
    assert tuple(empty.shape) == (2,) and not empty._data.any()


def test_float32_computes_in_float32():
    x = _rand(4, 3).astype(np.float32)
    for fn in (
        lambda M, a: M.linalg.svdvals(a),
        lambda M, a: M.linalg.eigvalsh(a[:3] + a[:3].mT),
        lambda M, a: M.linalg.qr(a)[1].abs(),
        lambda M, a: M.linalg.pinv(a),
        lambda M, a: M.linalg.matrix_norm(a, "nuc"),
    ):
        got, want = fn(T, T.tensor(x)), fn(torch, torch.tensor(x))
        assert _dt(got) == _dt(want) == "float32"
        np.testing.assert_allclose(_np(got), _np(want), rtol=1e-5, atol=1e-6)


def test_rank_deficient_gelsy_is_lapacks_with_every_column_free():
    """The reference's gelsy (torch's default CPU driver) on the ``lstsq_rcond`` case: LAPACK's
    dgelsy with JPVT all zero (every column free to pivot, the documented default), the rank-1
    solution. torch 2.13 answers this with one of three solutions; the other two are exactly dgelsy's
    with JPVT (0, 0, 1) and (0, 1, *) — columns fixed to the front — as if its pivot array were not
    cleared (docs/conformance.md)."""
    from scipy.linalg import lapack

    a, b = (_rand(*s, seed=i) for i, s in enumerate([(4, 3), (4, 1)]))
    got = T.linalg.lstsq(T.tensor(a), T.tensor(b), rcond=0.5)[0].numpy()
    solutions = {}
    for fixed in [(0, 0, 0), (0, 0, 1), (0, 1, 0)]:
        x, rank = lapack.dgelsy(a.copy(), b.copy(), np.array(fixed, dtype=np.int32), 0.5, lwork=256)[1::2]
        assert rank == 1
        solutions[fixed] = x[:3]
    np.testing.assert_allclose(got, solutions[(0, 0, 0)], rtol=1e-12, atol=1e-14)
    # the three are different answers, not roundings of one (what makes torch's choice a departure)
    assert np.abs(solutions[(0, 0, 1)] - solutions[(0, 0, 0)]).max() > 0.1
    assert np.abs(solutions[(0, 1, 0)] - solutions[(0, 0, 0)]).max() > 0.1
