"""The decompositions on complex input against JAX (``jnp.linalg.svd``, ``eigh``, ``qr``, ``pinv``),
with the convention mapping of docs/complex.md: values and JVPs of phase-invariant programs are
equal; the gradient of a real loss is ``reference == conj(jax.grad)``, and second order likewise
(the mapping applied to the first-order gradient before differentiating it again).

Programs are invariant under the phases of singular and eigenvectors (JAX and the reference may
split a tangent differently along the gauge; PyTorch's phase check makes the reference refuse
other programs). QR's factors are unique (R's diagonal real, LAPACK's convention on both sides).
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


def _well(seed, shape):
    """Complex, with well-separated singular values (0.5 .. 3)."""
    rng = np.random.default_rng(seed)
    m, n = shape
    k = min(m, n)
    u, _ = np.linalg.qr(rng.standard_normal((m, m)) + 1j * rng.standard_normal((m, m)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))
    return (u[:, :k] * np.linspace(3.0, 0.5, k)) @ v[:k, :]


def _svd_prog(lib, a):
    if lib is T:
        U, S, Vh = T.linalg.svd(a, full_matrices=False)
        return [U.abs(), S, (U * S.unsqueeze(-2)) @ Vh, U @ Vh]
    U, S, Vh = jnp.linalg.svd(a, full_matrices=False)
    return [jnp.abs(U), S, (U * S[None, :]) @ Vh, U @ Vh]


def _eigh_prog(lib, a):
    if lib is T:
        L, V = T.linalg.eigh(a + a.mH)
        return [L, V.abs(), (V * L.unsqueeze(-2)) @ V.mH]
    L, V = jnp.linalg.eigh(a + a.conj().T)
    return [L, jnp.abs(V), (V * L[None, :]) @ V.conj().T]


def _qr_prog(lib, a):
    if lib is T:
        return list(T.linalg.qr(a))
    return list(jnp.linalg.qr(a))


def _pinv_prog(lib, a):
    if lib is T:
        return [T.linalg.pinv(a)]
    return [jnp.linalg.pinv(a)]


PROGRAMS = {"svd": _svd_prog, "eigh": _eigh_prog, "qr": _qr_prog, "pinv": _pinv_prog}
SHAPES = {"svd": [(4, 2), (2, 4)], "eigh": [(3, 3)], "qr": [(4, 2), (2, 4)], "pinv": [(3, 4)]}
CASES = [(name, shape) for name in PROGRAMS for shape in SHAPES[name]]


def _weights(seed, outs):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(np.shape(o)) + 1j * rng.standard_normal(np.shape(o)) for o in outs]


def _ref_loss(prog, ws):
    def loss(x):
        return sum((o * T.tensor(w)).real.sum() for o, w in zip(prog(T, x), ws))

    return loss


def _jax_loss(prog, ws):
    def loss(x):
        return sum(jnp.real(o * w).sum() for o, w in zip(prog(jnp, x), ws))

    return loss


@pytest.mark.parametrize("name,shape", CASES)
def test_values_and_jvps(name, shape):
    prog = PROGRAMS[name]
    a = _well(1, shape)
    rng = np.random.default_rng(2)
    t = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    pj, tj = jax.jvp(lambda x: prog(jnp, x), (jnp.asarray(a),), (jnp.asarray(t),))
    pr, tr = T.func.jvp(lambda x: prog(T, x), (T.tensor(a),), (T.tensor(t),))
    for x, y in zip(pj, pr, strict=True):
        np.testing.assert_allclose(y.numpy(), np.asarray(x), rtol=1e-9, atol=1e-11)
    for x, y in zip(tj, tr, strict=True):
        np.testing.assert_allclose(y.numpy(), np.asarray(x), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name,shape", CASES)
def test_gradients_first_and_second_order(name, shape):
    """reference grad == conj(jax.grad) for a real loss; second order through
    ``L2 = Re sum(conj(v) grad L)`` with JAX's gradient conjugated first."""
    prog = PROGRAMS[name]
    a = _well(3, shape)
    ws = _weights(4, prog(jnp, jnp.asarray(a)))
    jl, rl = _jax_loss(prog, ws), _ref_loss(prog, ws)
    gj = jax.grad(jl)(jnp.asarray(a))
    x = T.tensor(a, requires_grad=True)
    (gr,) = T.autograd.grad(rl(x), x, create_graph=True)
    np.testing.assert_allclose(gr.detach().numpy(), np.conj(np.asarray(gj)), rtol=1e-9, atol=1e-10)

    v = _weights(5, [a])[0]
    g2j = jax.grad(lambda y: jnp.real(jnp.conj(v) * jnp.conj(jax.grad(jl)(y))).sum())(jnp.asarray(a))
    (g2r,) = T.autograd.grad((T.tensor(np.conj(v)) * gr).real.sum(), x)
    np.testing.assert_allclose(g2r.numpy(), np.conj(np.asarray(g2j)), rtol=1e-8, atol=1e-9)
