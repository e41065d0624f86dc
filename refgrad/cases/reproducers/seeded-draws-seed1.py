"""Departures `refgrad run --draws seeded --seed 1` reached in the families classified at seed 0
(seedsH): each line prints what the framework computes next to the exact value (mpmath, 50 digits)."""

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import tensorflow as tf
import tensorflow.experimental.numpy as tnp
import torch
from jax import lax

jax.config.update("jax_enable_x64", True)
mpmath.mp.dps = 50

# PyTorch's float16 reverse over forward of cosh at -inf: the seeds' product underflows float16
x = torch.tensor(-np.inf, dtype=torch.float16, requires_grad=True)
tangent = torch.tensor(-0.00013053417205810547, dtype=torch.float16)
(jvp,) = torch.autograd.grad(torch.cosh(x), x, grad_outputs=torch.ones_like(x), create_graph=True)
(got,) = torch.autograd.grad(jvp * tangent, x, grad_outputs=torch.tensor(-5.823373794555664e-05, dtype=torch.float16))
print("torch cosh vjp_jvp float16 at -inf, seeds -1.3e-4 and -5.8e-5:", got.item(), "exact: inf")

# JAX's float64 log_ndtr as log(ndtr(x)) below its upper cutoff
for v in (6.0, 7.44872639534961):
    got = float(jax.scipy.special.log_ndtr(jnp.float64(v)))
    exact = mpmath.log(mpmath.ncdf(mpmath.mpf(v)))
    print(f"jax log_ndtr float64 at {v}: {got!r} exact: {mpmath.nstr(exact, 17)} relative error {abs(got / float(exact) - 1):.1e}")

# PyTorch's bfloat16 erf of a subnormal
got = torch.erf(torch.tensor([-1.28569695e-39], dtype=torch.bfloat16)).item()
print("torch erf bfloat16 at -1.29e-39:", got, "exact:", mpmath.nstr(mpmath.erf(mpmath.mpf(-1.28569695e-39)), 6))

# TensorFlow's float32 xlogy reads log of a positive subnormal as log(2^-150)
got = tf.math.xlogy(tf.constant(-0.5, tf.float32), tf.constant(5.8e-40, tf.float32)).numpy()
print("tf xlogy(-0.5, 5.8e-40) float32:", got, "exact:", mpmath.nstr(-0.5 * mpmath.log(mpmath.mpf(float(np.float32(5.8e-40)))), 8))

# TensorFlow's tnp.hypot squares its arguments
got = tnp.hypot(tf.constant(-1.7976931348623157e308, tf.float64), tf.constant(0.588, tf.float64)).numpy()
print("tf tnp.hypot(-1.797e308, 0.588) float64:", got, "exact: 1.7976931348623157e+308")

# PyTorch's trigamma (digamma's derivative) at huge negative integers, poles where it is +inf
got = torch.polygamma(1, torch.tensor([-3.4028234663852886e38, -1e30], dtype=torch.float32)).tolist()
print("torch polygamma(1, [-3.4e38, -1e30]) float32:", got, "exact: [inf, inf]")

# JAX's float16 second derivative of rsqrt through subnormal intermediates
got = jax.jvp(jax.grad(lambda y: lax.rsqrt(y) * jnp.float16(-12.5234375)), (jnp.float16(98.25),), (jnp.float16(0.1734619140625),))[1]
exact = mpmath.mpf(0.75) * mpmath.mpf(98.25) ** -2.5 * mpmath.mpf(-12.5234375) * mpmath.mpf(0.1734619140625)
print("jax rsqrt'' float16 at 98.25 (seeds -12.52, 0.1735):", float(got), "exact:", mpmath.nstr(exact, 6))

# JAX's and TensorFlow's trigamma at -inf, where it has no limit
print("jax digamma' float32 at -inf:", float(jax.grad(jax.scipy.special.digamma)(jnp.float32(-np.inf))), "exact: nan (no limit)")
v = tf.Variable(tf.constant(-np.inf, tf.float32))
with tf.GradientTape() as tape:
    y = tf.math.digamma(v)
print("tf digamma' float32 at -inf:", tape.gradient(y, v).numpy(), "exact: nan (no limit)")

# TensorFlow's erfinv in float32 away from 0, and its gradient
x = np.float32(0.9729809165000916)
v = tf.Variable(tf.constant(x))
with tf.GradientTape() as tape:
    y = tf.math.erfinv(v)
exact = mpmath.erfinv(mpmath.mpf(float(x)))
print("tf erfinv float32 at 0.97298:", y.numpy(), "exact:", mpmath.nstr(exact, 9))
print("tf erfinv' float32 at 0.97298:", tape.gradient(y, v).numpy(), "exact:", mpmath.nstr(mpmath.sqrt(mpmath.pi) / 2 * mpmath.exp(exact**2), 9))

# TensorFlow's log2 and log10 derivatives at 0 and below
x = tf.constant(np.float16(-1.1630859375))
with tf.autodiff.ForwardAccumulator(x, tf.constant(np.float16(-0.6484375))) as acc:
    y = tnp.log2(x)
print("tf log2 jvp float16 at -1.163:", acc.jvp(y).numpy(), "exact: 0.8043 (1 / (x ln 2) times the tangent)")
for name, f in (("log2", tnp.log2), ("log10", tnp.log10)):
    x = tf.constant(0.0, tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, tf.constant(-0.98, tf.float64)) as acc:
            y = f(x)
        jvp = acc.jvp(y)
    got = tape.gradient(jvp, x, output_gradients=tf.constant(-0.71, tf.float64)).numpy()
    print(f"tf {name} vjp_jvp float64 at 0 (seeds -0.98, -0.71):", got, "exact limit: -inf")

# PyTorch's float16 rsqrt reverse over forward with a zero tangent: x^-2.5 overflows float16
x = torch.tensor(8.96453857421875e-05, dtype=torch.float16, requires_grad=True)
(g,) = torch.autograd.grad(torch.rsqrt(x), x, grad_outputs=torch.tensor(-0.0, dtype=torch.float16), create_graph=True)
(got,) = torch.autograd.grad(g, x, grad_outputs=torch.tensor(2.0, dtype=torch.float16))
print("torch rsqrt vjp_jvp float16 at 8.96e-5 with a zero tangent:", got.item(), "exact: 0.0")

# PyTorch's vectorised bfloat16 remainder where the quotient overflows
got = torch.remainder(torch.full((40,), -3.3895313892515355e38, dtype=torch.bfloat16), 0.75)[0].item()
print("torch remainder(-3.39e38, 0.75) bfloat16, vectorised:", got, "exact: -0.0 (fmod)")

# JAX's xlogy(0, y) second derivative in float16: 1 / y^2 overflows
f = lambda y: jax.scipy.special.xlogy(jnp.float16(0.0), y)  # noqa: E731
d1 = lambda y: jax.jvp(f, (y,), (jnp.float16(-0.638671875),))[1]  # noqa: E731
print("jax xlogy(0, y) jvp_jvp float16 at 9.88e-4:", float(jax.jvp(d1, (jnp.float16(0.000988006591796875),), (jnp.float16(-1.0),))[1]), "exact: -0.0")

# TensorFlow's double backward of reduce_prod at a zero (its gradient is built on cumprod's, which divides)
v = tf.Variable([0.0, 1.0])
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        y = tf.math.reduce_prod(v, axis=0)
    g = inner.gradient(y, v, output_gradients=tf.constant(-0.6178862452507019))
got = outer.gradient(g, v, output_gradients=tf.constant([-0.11992080509662628, -0.16564436256885529])).numpy()
print("tf reduce_prod vjp_vjp float32 at [0, 1]:", got, "exact: [0.1023, 0.0741]")

# JAX's float32 atanh second derivative with a cotangent near the smallest normal number
x, t, c = np.float32(0.68543476), np.float32(3.65903712e08), np.float32(1.20730999e-38)
got = jax.vjp(lambda x: jax.jvp(jnp.arctanh, (x,), (t,))[1], x)[1](c)[0]
X = mpmath.mpf(float(x))
exact = mpmath.mpf(float(c)) * mpmath.mpf(float(t)) * 2 * X / (1 - X**2) ** 2
print("jax atanh vjp_jvp float32 at 0.6854 (tangent 3.66e8, cotangent 1.2e-38):", float(got), "exact:", mpmath.nstr(exact, 6))
