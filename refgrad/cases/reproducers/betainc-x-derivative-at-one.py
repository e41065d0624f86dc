"""The second x-derivative of the regularized incomplete beta function at x = 1 is nan in JAX
(jax.scipy.special.betainc) and TensorFlow (tf.math.betainc) (JAX 0.10.2, TensorFlow 2.21.0).

Both differentiate the density exp((b - 1) log1p(-x) + (a - 1) log x - lbeta(a, b)) by the chain
rule: at x = 1 the exponential is 0 and the exponent's derivative -(b - 1)/(1 - x) is -inf, so
0 * inf = nan. The exact d²I/dx² = d/dx [x^(a-1) (1-x)^(b-1) / B(a, b)] at x = 1 (its left limit, the
domain being [0, 1]) is -(b - 1)(1 - x)^(b - 2) / B: -inf for 1 < b < 2, 0 for b > 2."""

import jax
import tensorflow as tf

jax.config.update("jax_enable_x64", True)
from jax.scipy.special import betainc  # noqa: E402 (after jax_enable_x64)


def tf_second(a, b, x):
    xv = tf.Variable(x, dtype=tf.float64)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.math.betainc(tf.constant(a, tf.float64), tf.constant(b, tf.float64), xv)
        first = inner.gradient(y, xv)
    return float(outer.gradient(first, xv))


for b, exact in ((1.5, "-inf"), (2.5, "0.0")):
    jax_second = float(jax.grad(jax.grad(betainc, argnums=2), argnums=2)(2.0, b, 1.0))
    print(f"d2/dx2 betainc(2, {b}, x = 1): jax {jax_second}, tf {tf_second(2.0, b, 1.0)}, exact {exact}")
