"""TensorFlow's gradient of tf.math.xdivy(x, y) in x at x = 0 is 0, where xdivy(x, y) = x / y for
y != 0 (0 only at x = 0 itself), so d/dx = 1/y there: math_grad._XDivyGrad computes the x gradient
as xdivy(x != 0, y) * grad, masking x = 0. Forward mode (ForwardAccumulator transposes the gradient)
says the same. Prints TensorFlow's reverse- and forward-mode derivative at x = 0, y = 2 and the exact
1/y, per dtype."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf

tf.config.set_visible_devices([], "GPU")

for dtype in (tf.float32, tf.float64):
    x = tf.Variable(tf.constant(0.0, dtype))
    y = tf.constant(2.0, dtype)
    with tf.GradientTape() as tape:
        z = tf.math.xdivy(x, y)
    reverse = float(tape.gradient(z, x))
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, dtype)) as acc:
        z = tf.math.xdivy(x, y)
    forward = float(acc.jvp(z))
    print(f"tensorflow {tf.__version__} xdivy(0, 2) {dtype.name}: d/dx reverse {reverse} forward {forward} exact 0.5")
