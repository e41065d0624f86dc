"""The convention mapping between PyTorch's complex gradients (the reference) and JAX's, checked
on the same functions (docs/complex.md states it):

* values and JVPs are the same (both push tangents forward: ``f'(z) t`` for holomorphic f);
* VJPs: ``reference_vjp(ct) == conj(jax_vjp(conj(ct)))`` for every function, holomorphic or not
  (JAX's VJP is the transpose of the real-linear JVP under the bilinear pairing ``sum(ct * y)``,
  PyTorch's its adjoint under the real inner product ``Re sum(conj(ct) * y)``);
* so for a real-valued loss, ``reference grad == conj(jax.grad)``, and for a holomorphic f,
  ``jax.grad(f, holomorphic=True) == conj(reference VJP of the cotangent 1)``;
* second order follows by applying the mapping twice.
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


_RNG = np.random.default_rng(11)
Z = _RNG.standard_normal(4) + 1j * _RNG.standard_normal(4)
Q = np.abs(_RNG.standard_normal(4)) + 0.5 + 1j * _RNG.standard_normal(4)
R = _RNG.standard_normal(4)
M = _RNG.standard_normal((3, 4)) + 1j * _RNG.standard_normal((3, 4))

# name: (reference fn, JAX fn, inputs) -- the same mathematical function in both frameworks
FUNCTIONS = {
    "exp": (lambda z: z.exp(), jnp.exp, [Z]),
    "log": (lambda z: z.log(), jnp.log, [Q]),
    "sqrt": (lambda z: z.sqrt(), jnp.sqrt, [Q]),
    "sin": (lambda z: z.sin(), jnp.sin, [Z]),
    "tanh": (lambda z: (z * 0.5).tanh(), lambda z: jnp.tanh(z * 0.5), [Z]),
    "square": (lambda z: z * z, lambda z: z * z, [Z]),
    "reciprocal": (lambda z: 1.0 / z, lambda z: 1.0 / z, [Q]),
    "pow": (lambda z: z**2.5, lambda z: z**2.5, [Q]),
    "mul": (lambda a, b: a * b, lambda a, b: a * b, [Z, Q]),
    "div": (lambda a, b: a / b, lambda a, b: a / b, [Z, Q]),
    "real_times_complex": (lambda x, z: x * z, lambda x, z: x * z, [R, Z]),
    "matmul": (lambda m, z: m @ z, lambda m, z: m @ z, [M, Z]),
    "sum": (lambda z: (z * z).sum(), lambda z: jnp.sum(z * z), [Z]),
    "prod": (lambda z: z.prod(), jnp.prod, [Z]),
    "abs": (lambda z: z.abs(), jnp.abs, [Z]),
    "angle": (lambda z: z.angle(), jnp.angle, [Z]),
    "conj": (lambda z: z.conj() * z.exp(), lambda z: jnp.conj(z) * jnp.exp(z), [Z]),
    "real_imag": (lambda z: z.real * z.imag, lambda z: jnp.real(z) * jnp.imag(z), [Z]),
    "view_as_real": (lambda z: T.view_as_real(z), lambda z: jnp.stack([z.real, z.imag], -1), [Z]),
    # jnp.sign(z) is z / |z| but JAX differentiates it as a constant (a departure, see
    # test_jax_sign_of_complex_has_a_zero_derivative): the same function spelled z / |z| in JAX
    "sgn": (lambda z: z.sgn(), lambda z: z / jnp.abs(z), [Z]),
    "complex": (lambda a, b: T.complex(a, b), lambda a, b: a + 1j * b, [R, R[::-1].copy()]),
    "polar": (
        lambda r, t: T.polar(r.abs() + 0.1, t),
        lambda r, t: (jnp.abs(r) + 0.1) * jnp.exp(1j * t),
        [R, R[::-1].copy()],
    ),
}


def _ref(a):
    return T.tensor(a, dtype=T.complex128 if np.iscomplexobj(a) else T.float64)


def _np(t):
    return t.detach().numpy()


def _random_like(rng, shape, complex_):
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if complex_ else a


def _close(a, b, what):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12, err_msg=what)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_and_jvp_are_the_same(name):
    ref_fn, jax_fn, inputs = FUNCTIONS[name]
    rng = np.random.default_rng(0)
    tangents = [_random_like(rng, x.shape, np.iscomplexobj(x)) for x in inputs]
    out, tan = T.func.jvp(ref_fn, tuple(_ref(x) for x in inputs), tuple(_ref(t) for t in tangents))
    jout, jtan = jax.jvp(
        jax_fn, tuple(jnp.asarray(x) for x in inputs), tuple(jnp.asarray(t) for t in tangents)
    )
    _close(_np(out), jout, f"{name} value")
    _close(_np(tan), jtan, f"{name} jvp")


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vjp_is_the_conjugate_of_jax_vjp_of_the_conjugate(name):
    ref_fn, jax_fn, inputs = FUNCTIONS[name]
    xs = [_ref(x).requires_grad_() for x in inputs]
    out = ref_fn(*xs)
    ct = _random_like(np.random.default_rng(1), tuple(out.shape), out.is_complex())
    got = T.autograd.grad(out, xs, _ref(ct))
    _, jax_vjp = jax.vjp(jax_fn, *[jnp.asarray(x) for x in inputs])
    want = jax_vjp(jnp.conj(jnp.asarray(ct)).astype(jnp.asarray(ct).dtype))
    for k, (g, w) in enumerate(zip(got, want)):
        _close(_np(g), np.conj(np.asarray(w)), f"{name} vjp of input {k}")


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_grad_of_a_real_loss_is_the_conjugate_of_jax_grad_to_second_order(name):
    """L(z) = Re sum(conj(w) f(z)): reference grad == conj(jax.grad(L)); and for the second-order
    loss L2 = Re sum(conj(v) grad L) (grad L in PyTorch's convention, i.e. conj of JAX's),
    reference grad of L2 == conj(jax.grad(L2))."""
    ref_fn, jax_fn, inputs = FUNCTIONS[name]
    rng = np.random.default_rng(2)
    xs = [_ref(x).requires_grad_() for x in inputs]
    out = ref_fn(*xs)
    w = _random_like(rng, tuple(out.shape), out.is_complex())
    vs = [_random_like(rng, x.shape, np.iscomplexobj(x)) for x in inputs]

    loss = (out * _ref(np.conj(w))).real.sum() if out.is_complex() else (out * _ref(w)).sum()
    grads = T.autograd.grad(loss, xs, create_graph=True)
    loss2 = sum(
        ((g * _ref(np.conj(v))).real.sum() if g.is_complex() else (g * _ref(v)).sum())
        for g, v in zip(grads, vs)
    )
    if loss2.requires_grad:
        grads2 = T.autograd.grad(loss2, xs, allow_unused=True, materialize_grads=True)
    else:  # a linear f: the gradient does not depend on z (PyTorch's graph ends here too)
        grads2 = [T.zeros_like(x) for x in xs]

    def jax_loss(*a):
        return jnp.sum(jnp.real(jnp.conj(jnp.asarray(w)) * jax_fn(*a)))

    argnums = tuple(range(len(inputs)))

    def jax_loss2(*a):
        gs = jax.grad(jax_loss, argnums=argnums)(*a)  # JAX's convention: conj of PyTorch's
        return sum(jnp.sum(jnp.real(jnp.conj(jnp.asarray(v)) * jnp.conj(g))) for g, v in zip(gs, vs))

    jargs = [jnp.asarray(x) for x in inputs]
    want = jax.grad(jax_loss, argnums=argnums)(*jargs)
    want2 = jax.grad(jax_loss2, argnums=argnums)(*jargs)
    for k in range(len(inputs)):
        _close(_np(grads[k]), np.conj(np.asarray(want[k])), f"{name} grad of input {k}")
        _close(_np(grads2[k]), np.conj(np.asarray(want2[k])), f"{name} second-order grad of input {k}")


def test_holomorphic_grad_is_the_conjugate_of_the_vjp_of_one():
    for name in ("exp", "log", "sin", "square", "reciprocal", "pow"):
        ref_fn, jax_fn, (z,) = FUNCTIONS[name]
        x = _ref(z).requires_grad_()
        (g,) = T.autograd.grad(ref_fn(x).sum(), x, T.tensor(1 + 0j, dtype=T.complex128))
        want = jax.grad(lambda a, f=jax_fn: jnp.sum(f(a)), holomorphic=True)(jnp.asarray(z))
        _close(_np(g), np.conj(np.asarray(want)), f"{name}: jax.grad(holomorphic=True)")


def test_the_mapping_fails_without_the_conjugates():
    """A harness that compared JAX's gradient with the reference's directly would report a
    departure for every non-real gradient: the mapping is not a no-op."""
    x = _ref(Z).requires_grad_()
    (g,) = T.autograd.grad((x * x.conj()).real.sum(), x)
    want = jax.grad(lambda a: jnp.sum(jnp.abs(a) ** 2))(jnp.asarray(Z))
    assert not np.allclose(_np(g), np.asarray(want))
    _close(_np(g), np.conj(np.asarray(want)), "|z|^2")


def test_jax_sign_of_complex_has_a_zero_derivative():
    """A JAX departure (docs/complex.md): jnp.sign(z) = z / |z| for complex z, but its JVP is zero,
    whereas d(z/|z|) = (t - sgn^2 conj(t)) / (2|z|) (PyTorch's sgn_backward, the reference's rule).
    Reproducer: jax.jvp(jnp.sign, (z,), (t,))[1] == 0 for z = 1+2j, t = 1."""
    z, t = jnp.asarray([1 + 2j]), jnp.asarray([1 + 0j])
    assert np.all(np.asarray(jax.jvp(jnp.sign, (z,), (t,))[1]) == 0)
    _, tan = T.func.jvp(lambda a: a.sgn(), (_ref(np.asarray(z)),), (_ref(np.asarray(t)),))
    want = jax.jvp(lambda a: a / jnp.abs(a), (z,), (t,))[1]
    _close(_np(tan), want, "sgn jvp")
    assert np.abs(_np(tan)).max() > 0.1
