"""The derivative in a of the regularized incomplete gamma functions at a = 0 is nan in JAX
(jax.scipy.special.gammainc, gammaincc) and TensorFlow (tf.math.igamma, igammac) (JAX 0.10.2,
TensorFlow 2.21.0), where it is finite: Q(a, x) = Γ(a, x)/Γ(a) ~ a·E1(x) as a -> 0 (1/Γ(a) ~ a), so
P(0, x) = 1, Q(0, x) = 0 (both frameworks give these values) and ∂P/∂a = -E1(x), ∂Q/∂a = +E1(x)
there: -0.79966 at x = 0.3473 (float32), exact E1 from mpmath."""

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import tensorflow as tf
from jax.scipy.special import gammainc, gammaincc

x = np.float32(0.34730905294418335)
e1 = float(mpmath.e1(float(x)))
for name, jax_fn, tf_fn, exact in (
    ("gammainc", gammainc, tf.math.igamma, -e1),
    ("gammaincc", gammaincc, tf.math.igammac, e1),
):
    a = tf.Variable(np.float32(0.0))
    with tf.GradientTape() as tape:
        y = tf_fn(a, tf.constant(x))
    print(
        f"d/da {name}(a = 0, x = {float(x):.4f}) float32: jax {float(jax.grad(jax_fn)(jnp.float32(0.0), x))}, "
        f"tf {float(tape.gradient(y, a))}, exact {exact:.5f}"
    )
