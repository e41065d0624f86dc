"""Keras's celu (keras.ops.celu, tf.keras.activations.celu) has forward-mode derivative 2 at x = 0
where celu is continuously differentiable with derivative 1 (both one-sided derivatives, 1 and
exp(0/alpha), are 1): a tf.autodiff.ForwardAccumulator over it gives 2 at +0 and -0; over the
record's primary spelling, tf.where(x > 0, x, alpha * expm1(minimum(x, 0) / alpha)), 1."""

import tensorflow as tf

x = tf.constant([0.0, -0.0, 0.5, -0.5], tf.float64)
alpha = 1.0
with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
    y = tf.where(x > 0, x, alpha * tf.math.expm1(tf.math.minimum(x, 0) / alpha))
    k = tf.keras.activations.celu(x, alpha=alpha)
print("tf celu jvp at [0, -0, 0.5, -0.5]:", acc.jvp(y).numpy().tolist(), "keras:", acc.jvp(k).numpy().tolist(),
      "exact: [1, 1, 1, 0.6065]")
