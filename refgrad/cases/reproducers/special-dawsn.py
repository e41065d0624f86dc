"""Dawson's integral's derivative at the largest finite numbers and at infinity (conformance record
dawsn; reference/ops/rules/special_dawsn.py): JAX and TensorFlow compute D'(x) = 1 - 2x D(x), whose
2x overflows past half the largest number, where D'(x) = -1/(2x²) + ... underflows to -0, and which
is inf·0 = nan at ±inf, where D' tends to 0. Prints each framework's value next to the exact one
(mpmath's asymptotic series, the reference's kernel)."""

import jax
import jax.numpy as jnp
import numpy as np
import tensorflow as tf
from jax.scipy.special import dawsn

x32 = float(np.finfo(np.float32).max)
exact = -1 / (2 * x32 * x32)  # the leading term: -4.3e-78, below every dtype's smallest subnormal
print(f"jax dawsn' at {x32:.4g} float32: {jax.grad(dawsn)(jnp.float32(x32))} exact: {exact:.3g}")
big = jnp.array(float.fromhex("0x1.fep127"), jnp.bfloat16)  # bfloat16's largest
print(f"jax dawsn' at {float(big):.4g} bfloat16: {jax.grad(dawsn)(big)} exact: {-1 / (2 * float(big) ** 2):.3g}")
t = tf.constant(x32, tf.float32)
with tf.GradientTape() as tape:
    tape.watch(t)
    y = tf.math.special.dawsn(t)
print(f"tf dawsn' at {x32:.4g} float32: {tape.gradient(y, t).numpy()} exact: {exact:.3g}")
# D'(±inf) = lim 1 - 2x D(x) = 0 (D(x) = 1/(2x) + 1/(4x³) + ...): both formulas give inf·0 = nan there
ends = jnp.array([jnp.inf, -jnp.inf])
print(f"jax dawsn' at [inf, -inf] float32: {jax.vmap(jax.grad(dawsn))(ends)} exact: [0, 0]")
t = tf.constant([np.inf, -np.inf], tf.float64)
with tf.GradientTape() as tape:
    tape.watch(t)
    y = tf.math.special.dawsn(t)
print(f"tf dawsn' at [inf, -inf] float64: {tape.gradient(y, t).numpy()} exact: [0, 0]")
