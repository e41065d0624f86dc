"""Departures the whole-domain batches of wholedom4 found (dawsn's second derivative through a
flushed subnormal, JAX's half-precision beta at a + b rounded onto a pole): each line prints the
framework's value next to the exact one (mpmath)."""

import jax
import jax.numpy as jnp
import mpmath
import tensorflow as tf
from jax.scipy import special as js

jax.config.update("jax_enable_x64", True)

# dawsn'' = -2D - 2x·D' with D' = 1 - 2xD: the forward over forward at x = 1.5373, tangents t1 = -1,
# t2 = 5.698e-308 forms t2·D'(x) = -1.5e-308, a subnormal the CPU flushes to 0, and loses the 2x·t2·D'
# term that cancels -2D·t2 to 2e-309
x, t1, t2 = 1.5373080782719597, -1.0, 5.698164008130655e-308
D = mpmath.sqrt(mpmath.pi) / 2 * mpmath.exp(-mpmath.mpf(x) ** 2) * mpmath.erfi(x)
exact = (-2 * D - 2 * x * (1 - 2 * x * D)) * t1 * t2
jx = jax.jvp(lambda v: jax.jvp(js.dawsn, (v,), (t1,))[1], (x,), (t2,))[1]
v = tf.constant(x, tf.float64)
with tf.autodiff.ForwardAccumulator(v, tf.constant(t2, tf.float64)) as outer:
    with tf.autodiff.ForwardAccumulator(v, tf.constant(t1, tf.float64)) as inner:
        y = tf.math.special.dawsn(v)
    first = inner.jvp(y)
tx = outer.jvp(first)
print(f"dawsn jvp_jvp float64 at 1.5373, t1 -1, t2 5.698e-308: jax {float(jx):.4g} tf {float(tx):.4g} exact: {float(exact):.4g}")

# JAX's bfloat16 beta(-85.5, -6.65625): a + b = -92.15625 rounds to -92, a pole of Γ(a + b)
a, b = jnp.bfloat16(-85.5), jnp.bfloat16(-6.65625)
print(f"jax beta(-85.5, -6.65625) bfloat16: {js.beta(a, b)} (a + b = {a + b}) exact: {float(mpmath.beta(-85.5, -6.65625)):.6g}")
