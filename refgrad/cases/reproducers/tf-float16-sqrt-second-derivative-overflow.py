"""TensorFlow's float16 forward over forward of sqrt at a small x: sqrt''(x) = -x^(-3/2) / 4 is
formed before the tangents scale it and overflows float16 (65504) for x below about 2^-12, where the
exact product sqrt''(x) t1 t2 is representable; the result is an infinity."""

import numpy as np
import tensorflow as tf

h = np.float16
x, t1, t2 = h(0.00011444091796875), h(2.236328125), h(-0.09979248046875)
exact = -0.25 * float(x) ** -1.5 * float(t1) * float(t2)
v = tf.constant(x)
with tf.autodiff.ForwardAccumulator(v, tf.constant(t2)) as outer:
    with tf.autodiff.ForwardAccumulator(v, tf.constant(t1)) as inner:
        y = tf.math.sqrt(v)
    d1 = inner.jvp(y)
print(f"tf sqrt jvp_jvp float16 at x = {float(x):.6g}: {float(outer.jvp(d1)):.6g} exact {exact:.6g}")
