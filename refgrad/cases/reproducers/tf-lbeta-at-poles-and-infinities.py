"""TensorFlow's log-beta function tf.math.lbeta (of the stacked pair (a, b)) and its derivatives at
an infinite argument and at the poles of Γ (a nonpositive integer), where they compose lgamma,
digamma and polygamma as inf - inf: lbeta(inf, 2) is nan where ln B(a, 2) -> -inf (B ~ a^-2), and
its derivative ψ(a) - ψ(a + 2) is nan where the limit is 0 (what the reference says); at the poles
of Γ the campaign saw finite derivatives (-2.2e10 in float32) where the reference says nan."""

import numpy as np
import tensorflow as tf

a = tf.constant(np.inf, tf.float64)
b = tf.constant(2.0, tf.float64)
with tf.GradientTape() as outer:
    outer.watch(a)
    with tf.GradientTape() as inner:
        inner.watch(a)
        y = tf.math.lbeta(tf.stack([a, b]))
    g = inner.gradient(y, a)
print("tf lbeta(inf, 2):", float(y), "d/da:", float(g), "d2/da2:", float(outer.gradient(g, a)))
