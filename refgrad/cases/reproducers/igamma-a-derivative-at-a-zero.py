"""The regularized incomplete gamma functions at a = 0, where JAX (jax.scipy.special.gammainc,
gammaincc) and TensorFlow (tf.math.igamma, igammac) say nan (JAX 0.10.2, TensorFlow 2.21.0) and the
functions are finite: Q(a, x) = Γ(a, x)/Γ(a) ~ a·E1(x) as a -> 0 (1/Γ(a) ~ a), so P(0, x) = 1,
Q(0, x) = 0 (PyTorch's torch.special.gammainc and scipy.special.gammainc say so too) and
∂P/∂a = -E1(x), ∂Q/∂a = +E1(x): -0.79966 at x = 0.3473 (float32), exact E1 from mpmath.

The derivative in a is nan in both frameworks; the value P(0, x) is nan in both, Q(0, x) in
TensorFlow only (JAX gives 0); TensorFlow's forward-mode derivative in x alone (a's tangent 0) is
nan too, where ∂P/∂x = x^(-1) e^(-x) / Γ(0) = 0."""

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
    value = 1.0 if name == "gammainc" else 0.0  # the limits a -> 0+ (1/Γ(a) ~ a)
    print(
        f"{name}(a = 0, x = {float(x):.4f}) float32: jax {float(jax_fn(jnp.float32(0.0), x))}, "
        f"tf {float(tf_fn(np.float32(0.0), x))}, exact {value}"
    )
    xs = tf.constant(x)
    with tf.autodiff.ForwardAccumulator(xs, tf.constant(np.float32(1.0))) as acc:
        y = tf_fn(tf.constant(np.float32(0.0)), xs)
    print(f"tf forward-mode d/dx {name}(a = 0, x = {float(x):.4f}) float32: {float(acc.jvp(y))}, exact 0.0")
