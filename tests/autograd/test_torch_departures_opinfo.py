"""PyTorch 2.13 departures found by the OpInfo survey (docs/autograd.md, "How the OpInfo harness
compares, and the PyTorch departures it found"), each pinned against an independent computation
(mpmath, finite differences, the exact formula) with the reference on the right side. When a
torch release fixes one, its ``torch`` assertion fails: drop the pin and rerun the survey."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def test_torch_trigamma_is_not_float64_accurate():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    x = -0.6046891126565539  # an OpInfo sample of digamma / polygamma
    exact = float(mpmath.psi(1, mpmath.mpf(x)))
    t = float(torch.polygamma(1, torch.tensor(x, dtype=torch.float64)))
    r = float(T.polygamma(1, T.tensor(x, dtype=T.float64)))
    assert abs(r - exact) <= 4 * np.finfo(np.float64).eps * abs(exact)
    assert abs(t - exact) > 1e-11 * abs(exact)  # torch: 3.7e-11 relative here (~170 ulps)
    # the gradient of digamma is trigamma, on both sides
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    rx = T.tensor(x, dtype=T.float64, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.digamma(tx), tx)
    (rg,) = T.autograd.grad(T.digamma(rx), rx)
    assert float(tg) == t and abs(float(rg) - exact) <= 4 * np.finfo(np.float64).eps * abs(exact)


def _lower(seed=0, n=4):
    g = torch.Generator().manual_seed(seed)
    return torch.tril(torch.randn(n, n, dtype=torch.float64, generator=g)) + 3 * torch.eye(
        n, dtype=torch.float64
    )


@pytest.mark.parametrize("upper", [False, True])
def test_torch_cholesky_inverse_jvp_is_wrong(upper):
    L = _lower()
    F = L.mT.contiguous() if upper else L
    g = torch.Generator().manual_seed(1)
    t = torch.randn(4, 4, dtype=torch.float64, generator=g)
    t = t.triu() if upper else t.tril()  # a tangent in the triangle the forward reads

    def f(m):
        return torch.cholesky_inverse(m, upper=upper)

    h = 1e-6
    fd = ((f(F + h * t) - f(F - h * t)) / (2 * h)).numpy()
    jt = torch.func.jvp(f, (F,), (t,))[1].numpy()
    jr = T.func.jvp(
        lambda m: T.cholesky_inverse(m, upper=upper), (T.tensor(F.numpy()),), (T.tensor(t.numpy()),)
    )
    assert np.abs(jr[1].numpy() - fd).max() < 1e-7 * np.abs(fd).max()
    assert np.abs(jt - fd).max() > 1e-2 * np.abs(fd).max()


def test_torch_triangular_solve_jvp_uses_the_unread_triangle():
    g = torch.Generator().manual_seed(2)
    A = torch.randn(4, 4, dtype=torch.float64, generator=g) + 4 * torch.eye(4, dtype=torch.float64)
    b = torch.randn(4, 2, dtype=torch.float64, generator=g)
    dA = torch.randn(4, 4, dtype=torch.float64, generator=g)

    def f(m):
        return torch.triangular_solve(b, m)[0]  # upper=True: reads triu(m) only

    h = 1e-6
    fd = ((f(A + h * dA) - f(A - h * dA)) / (2 * h)).numpy()
    jt = torch.func.jvp(f, (A,), (dA,))[1].numpy()
    jt_proj = torch.func.jvp(f, (A,), (dA.triu(),))[1].numpy()
    jr = T.func.jvp(
        lambda m: T.triangular_solve(T.tensor(b.numpy()), m)[0],
        (T.tensor(A.numpy()),),
        (T.tensor(dA.numpy()),),
    )[1].numpy()
    scale = np.abs(fd).max()
    assert np.abs(jr - fd).max() < 1e-7 * scale and np.abs(jt_proj - fd).max() < 1e-7 * scale
    assert np.abs(jt - fd).max() > 1e-3 * scale


@pytest.mark.parametrize("x0", [0.3, 1e-6])
def test_torch_binary_cross_entropy_double_backward_adds_eps(x0):
    y0 = 0.8
    exact = (x0 * x0 - 2 * x0 * y0 + y0) / (x0 * (1 - x0)) ** 2

    def second(lib):
        x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
        loss = lib.nn.functional.binary_cross_entropy(x, lib.tensor(y0, dtype=lib.float64))
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (h,) = lib.autograd.grad(g, x)
        return float(h)

    assert abs(second(T) - exact) <= 8 * np.finfo(np.float64).eps * exact
    assert abs(second(torch) - exact) > 0.5 * (2e-12 / x0) * exact  # torch: ~2e-12 / x relative


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_torch_as_strided_scatter_input_gradient_is_wrong(dtype):
    """torch's VJP of as_strided_scatter for ``input`` passes the gradient of the scattered region
    (which the output does not read from ``input``) instead of its complement; the reference's is
    the complement, which finite differences confirm (docs/complex.md)."""
    rng = np.random.default_rng(1)
    x, s, g = rng.standard_normal((3, 3)), rng.standard_normal((2, 2)), rng.standard_normal((3, 3))
    if dtype == "complex128":
        x, s, g = x + 1j * rng.standard_normal((3, 3)), s + 1j, g - 0.5j * rng.standard_normal((3, 3))
    written = np.zeros((3, 3), dtype=bool)
    written.flat[[0, 1, 2, 3]] = True  # size (2, 2), stride (1, 2), offset 0: flat 0, 2, 1, 3

    def grad_of_input(F):
        a = F.tensor(x, requires_grad=True)
        out = F.as_strided_scatter(a, F.tensor(s), (2, 2), (1, 2), 0)
        return np.asarray(F.autograd.grad(out, a, F.tensor(g))[0].detach())

    exact = np.where(written, 0, g)  # the output reads input only outside the scattered region
    np.testing.assert_array_equal(grad_of_input(T), exact)
    assert np.abs(grad_of_input(torch)[~written]).max() == 0
    assert np.abs(grad_of_input(torch)[written] - g[written]).max() == 0
    from reference.autograd import gradcheck

    assert gradcheck(
        lambda a: T.as_strided_scatter(a, T.tensor(s), (2, 2), (1, 2), 0), [T.tensor(x, requires_grad=True)]
    )
