"""TensorFlow's second derivative of Spence's function at x = 1 (conformance record spence): spence(x) =
int_1^x log t/(1 - t) dt has spence'(x) = log x/(1 - x) -> -1 and spence''(x) -> 1/2 at x = 1
(log(1 + h)/(-h) = -1 + h/2 - ...). Prints TensorFlow's values next to the limits."""

import mpmath
import tensorflow as tf

x = tf.Variable([1.0, 1.0 + 2.0**-20], dtype=tf.float64)
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        y = tf.math.special.spence(x)
    g = inner.gradient(y, x)
gg = outer.gradient(g, x)
exact = float(mpmath.diff(lambda t: mpmath.log(t) / (1 - t), 1 + mpmath.mpf(2) ** -20))
print(f"tf spence' at [1, 1 + 2^-20]: {g.numpy()} limits: [-1, -1]; spence'' {gg.numpy()} exact: [0.5, {exact:.6f}]")
