"""TensorFlow's sinc (tnp.sinc, its only spelling) has a nan reverse-mode gradient at x = ±0, where
sinc'(0) = 0: its where(x == 0, 1, sin(pi x) / (pi x)) also differentiates the masked quotient,
0/0. Forward mode at 0 gives 0, and at 0.5 both modes are right (-4/pi = -1.2732...; TensorFlow
2.21.0). Until the judge stopped accepting every answer where its error bound was nan, this
passed unseen; the element-wise bound at 0 is exact."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402
import tensorflow.experimental.numpy as tnp  # noqa: E402

for dtype in (tf.float32, tf.float64):
    x = tf.Variable(tf.constant([0.0, -0.0, 0.5], dtype))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tnp.sinc(x))
    grad = tape.gradient(y, x).numpy()
    with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
        y = tnp.sinc(x)
    print(f"{dtype.name} gradient at [0, -0, 0.5]: {grad.tolist()}; forward mode: {acc.jvp(y).numpy().tolist()}")
