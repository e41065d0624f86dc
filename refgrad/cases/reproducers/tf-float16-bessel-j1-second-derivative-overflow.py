"""TensorFlow's float16 second derivative of bessel_j1 near 0: its gradient j1'(x) = j0(x) - j1(x)/x,
differentiated again, divides by x^2, which underflows float16 (its smallest subnormal is 6e-8) for
|x| below about 2.4e-4, so the result is an infinity or nan where the exact j1''(x) = -3x/8 + O(x^3)
is tiny and finite (float32 cancels it to 0, within its bound)."""

import tensorflow as tf

for dtype in (tf.float16,):
    x = tf.Variable(tf.constant(-1.3709068298339844e-05, dtype))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.math.special.bessel_j1(x)
        g = inner.gradient(y, x)
    print(f"tf bessel_j1 second derivative {dtype.name} at x = -1.3709e-05: {float(outer.gradient(g, x)):.4g}",
          f"exact {3 / 8 * 1.3709068298339844e-05:.4g}")
