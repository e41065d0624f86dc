"""TensorFlow's second derivative of Spence's function at the 'special' draws' points left of its domain
[0, inf): at x = -0 the autograd of spence'(x) = log x/(1 - x) (math_grad.py _SpenceGrad) is
1/(x(1 - x)) + log x/(1 - x)^2 = -inf + (-inf) = -inf (the sign of the zero), where at +0 it is nan
(tf-spence-second-derivative-nan-at-zero) and spence''(x) -> +inf from the right."""

import tensorflow as tf

for dtype in (tf.float32, tf.float64):
    x = tf.Variable([-0.0, 0.0, -1.401298464324817e-45], dtype=dtype)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.math.special.spence(x)
        g = inner.gradient(y, x)
    gg = outer.gradient(g, x)
    print(f"tf {dtype.name} at [-0, +0, -1.4e-45]: spence' {g.numpy()} spence'' {gg.numpy()}")
