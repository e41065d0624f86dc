"""TensorFlow's second derivative of Spence's function at x = 0 (conformance record spence): spence'(x) =
log x/(1 - x) (math_grad.py _SpenceGrad) differentiated again is 1/(x(1 - x)) + log x/(1 - x)^2, at
x = 0 the sum inf + (-inf) = nan, where spence''(x) ~ 1/x -> +inf (the 1/x term dominates log x)."""

import tensorflow as tf

for dtype in (tf.float32, tf.float64):
    x = tf.Variable([0.0, 2.0**-20], dtype=dtype)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.math.special.spence(x)
        g = inner.gradient(y, x)
    gg = outer.gradient(g, x)
    print(f"tf {dtype.name} spence' at [0, 2^-20]: {g.numpy()}; spence'' {gg.numpy()} (limit at 0: +inf; at 2^-20 about {2.0**20:.6g})")
