"""TensorFlow's float16 second derivative of tf.experimental.numpy.sinc near 0 overflows float16:
forward over forward at x = 2^-10 (tangents 1.447 and -0.4155) is nan where the exact value,
t1 t2 sinc''(x) ~ t1 t2 (-pi^2 / 3), is 1.98."""

import numpy as np
import tensorflow as tf

tnp = tf.experimental.numpy
h = np.float16
x, t1, t2 = tf.constant(h(0.0009765625)), tf.constant(h(1.447265625)), tf.constant(h(-0.41552734375))
with tf.autodiff.ForwardAccumulator(x, t2) as outer:
    with tf.autodiff.ForwardAccumulator(x, t1) as inner:
        y = tnp.sinc(x)
    t = inner.jvp(y)
print(
    "tf sinc jvp_jvp float16 at 2^-10:",
    outer.jvp(t).numpy(),
    "exact ~",
    float(t1) * float(t2) * -(np.pi**2) / 3,
)
