"""The general eigendecomposition against JAX (``jax.lax.linalg.eig`` with
``enable_eigvec_derivs=True``; ``jnp.linalg.eig`` refuses eigenvector derivatives, and both run
on CPU only), with the complex convention mapping of docs/complex.md:

* values: both call LAPACK geev with the same normalisation (unit columns, largest component
  real), and on CPU the same LAPACK build as NumPy, so eigenvalues and eigenvectors are equal;
* JVPs: eigenvalue tangents are equal; eigenvector tangents differ by a phase rotation
  ``V diag(i theta)`` (the gauge: both keep unit norm, ``Re diag(V^H dV) = 0``, neither keeps
  LAPACK's phase convention, and they split the tangent differently), so any gauge-invariant
  function of ``V`` has equal JVPs;
* VJPs of gauge-invariant programs: ``reference_vjp(ct) == conj(jax_vjp(conj(ct)))`` (complex
  input), equal for a real input; gradients of a real loss: ``reference == conj(jax.grad)``, and
  second order likewise.
"""

from __future__ import annotations

import numpy as np
import pytest

import reference as T

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

pytestmark = pytest.mark.jax


@pytest.fixture(autouse=True, scope="module")
def _x64():
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


def _jeig(x):
    return jax.lax.linalg.eig(
        x, compute_left_eigenvectors=False, compute_right_eigenvectors=True, enable_eigvec_derivs=True
    )


def _draw(seed, shape, cplx):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if cplx else a


def _program(L, V, conj, real):
    """Gauge- and order-invariant: V diag(L^2) V^H and sum |V|^2 L."""
    return (
        (V * (L * L)[..., None, :]) @ conj(V).swapaxes(-1, -2)
        if not real
        else (V * conj(V)) * L[..., None, :]
    )


def _ref(x, real=False):
    L, V = T.linalg.eig(x)
    if real:
        return (V * V.conj()) * L.unsqueeze(-2)
    return (V * (L * L).unsqueeze(-2)) @ V.mH


def _jax(x, real=False):
    L, V = _jeig(x)
    if real:
        return (V * jnp.conj(V)) * L[..., None, :]
    return (V * (L * L)[..., None, :]) @ jnp.conj(jnp.swapaxes(V, -1, -2))


CASES = [(False, (4, 4)), (True, (2, 3, 3))]
IDS = [f"{'complex' if c else 'real'}-{len(s)}d" for c, s in CASES]


@pytest.mark.parametrize("cplx, shape", CASES, ids=IDS)
def test_values_and_jvps(cplx, shape):
    a, t = _draw(1, shape, cplx), _draw(2, shape, cplx)
    (jL, jV), (jdL, jdV) = jax.jvp(_jeig, (jnp.asarray(a),), (jnp.asarray(t),))
    (rL, rV), (rdL, rdV) = T.func.jvp(lambda x: tuple(T.linalg.eig(x)), (T.tensor(a),), (T.tensor(t),))
    np.testing.assert_allclose(rL.numpy(), np.asarray(jL), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rV.numpy(), np.asarray(jV), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rdL.numpy(), np.asarray(jdL), rtol=1e-10, atol=1e-10)
    # the eigenvector tangents differ by V diag(i theta): a phase rotation of each column
    C = np.linalg.solve(rV.numpy(), rdV.numpy() - np.asarray(jdV))
    off = C - np.einsum("...ii->...i", C)[..., None] * np.eye(shape[-1])
    np.testing.assert_allclose(off, 0, atol=1e-10)
    np.testing.assert_allclose(np.einsum("...ii->...i", C).real, 0, atol=1e-10)
    # so a gauge-invariant program has equal JVPs
    for real in (False, True):
        _, jt = jax.jvp(lambda x, real=real: _jax(x, real), (jnp.asarray(a),), (jnp.asarray(t),))
        _, rt = T.func.jvp(lambda x, real=real: _ref(x, real), (T.tensor(a),), (T.tensor(t),))
        np.testing.assert_allclose(rt.numpy(), np.asarray(jt), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("cplx, shape", CASES, ids=IDS)
def test_vjps_follow_the_convention_mapping(cplx, shape):
    a = _draw(3, shape, cplx)
    for real in (False, True):
        out, vjp = jax.vjp(lambda x, real=real: _jax(x, real), jnp.asarray(a))
        ct = _draw(4, out.shape, True)
        (jg,) = vjp(jnp.conj(jnp.asarray(ct)))
        x = T.tensor(a, requires_grad=True)
        (rg,) = T.autograd.grad(_ref(x, real), x, T.tensor(ct))
        expected = np.conj(np.asarray(jg)) if cplx else np.asarray(jg).real
        np.testing.assert_allclose(rg.numpy(), expected, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("cplx", [False, True])
def test_gradients_of_a_real_loss_first_and_second_order(cplx):
    a = _draw(5, (3, 3), cplx)
    w = _draw(6, (3, 3), True)

    def jloss(x):
        L, V = _jeig(x)
        return jnp.sum(jnp.abs(L) ** 2) + jnp.real(jnp.sum(w * (V * jnp.conj(V)) * L[None, :]))

    def rloss(x):
        L, V = T.linalg.eig(x)
        return (L.abs() ** 2).sum() + (T.tensor(w) * (V * V.conj()) * L.unsqueeze(-2)).sum().real

    jg = jax.jit(jax.grad(jloss))(jnp.asarray(a))
    x = T.tensor(a, requires_grad=True)
    (rg,) = T.autograd.grad(rloss(x), x, create_graph=True)
    np.testing.assert_allclose(rg.detach().numpy(), np.conj(np.asarray(jg)), rtol=1e-9, atol=1e-10)
    # second order: L2 = Re sum(conj(v) grad), with JAX's gradient mapped first
    v = _draw(7, (3, 3), cplx)
    jg2 = jax.jit(jax.grad(lambda x: jnp.real(jnp.sum(jnp.conj(v) * jnp.conj(jax.grad(jloss)(x))))))(
        jnp.asarray(a)
    )
    (rg2,) = T.autograd.grad((T.tensor(v).conj() * rg).sum().real if cplx else (T.tensor(v) * rg).sum(), x)
    np.testing.assert_allclose(rg2.numpy(), np.conj(np.asarray(jg2)), rtol=1e-8, atol=1e-9)
