"""tf.math.betainc(a, b, x) at a = 0 or b = 0 is nan (TensorFlow 2.21.0) where the regularized
incomplete beta function has its limits I_x(0, b) = 1 and I_x(a, 0) = 0 for 0 < x < 1 (1/B(a, b) ~ a
as a -> 0: the mass moves to t = 0; SciPy's and JAX's betainc give 1.0 and 0.0). Its derivative in
x, 0 there (the function is constant in x), is right in reverse mode and forward mode; forward over
forward in x says nan."""

import scipy.special
import tensorflow as tf

for a, b, x in ((0.0, 2.0, 0.9338), (2.0, 0.0, 0.0662)):
    for dtype in (tf.float32, tf.float64):
        xs, one = tf.constant(x, dtype), tf.constant(1.0, dtype)
        with tf.autodiff.ForwardAccumulator(xs, one) as outer:
            with tf.autodiff.ForwardAccumulator(xs, one) as inner:
                y = tf.math.betainc(tf.constant(a, dtype), tf.constant(b, dtype), xs)
            dy = inner.jvp(y)
        d2y = outer.jvp(dy)
        print(
            f"betainc({a}, {b}, {x}) {dtype.name}: tf {float(y)}, scipy {scipy.special.betainc(a, b, x)}; "
            f"forward mode d/dx tf {float(dy)}, d2/dx2 tf {float(d2y)}, exact 0.0"
        )
