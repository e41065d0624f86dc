"""TensorFlow's gradient of tf.math.xlogy(x, y) and tf.math.xlog1py(x, y) in x at x = 0 is 0, where
xlogy(x, y) = x log y for every x (0 at x = 0, y > 0, which x log y also is), so d/dx = log y there
(PyTorch's derivatives.yaml: xlogy(grad, other), masked only where x == 0 and y <= 0):
math_grad._XLogyGrad computes the x gradient as xlogy(x != 0, y) * grad, masking x = 0 (xlog1py
likewise). Forward mode (ForwardAccumulator transposes the gradient) says the same. Prints
TensorFlow's reverse- and forward-mode derivative at x = 0, y = 2 and the exact log 2 (log 3), per
dtype."""

import math
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf

tf.config.set_visible_devices([], "GPU")

for name, fn, exact in (("xlogy", tf.math.xlogy, math.log(2.0)), ("xlog1py", tf.math.xlog1py, math.log(3.0))):
    for dtype in (tf.float32, tf.float64):
        x = tf.Variable(tf.constant(0.0, dtype))
        y = tf.constant(2.0, dtype)
        with tf.GradientTape() as tape:
            z = fn(x, y)
        reverse = float(tape.gradient(z, x))
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, dtype)) as acc:
            z = fn(x, y)
        forward = float(acc.jvp(z))
        print(f"tensorflow {tf.__version__} {name}(0, 2) {dtype.name}: d/dx reverse {reverse} forward {forward} exact {exact:.4f}")
