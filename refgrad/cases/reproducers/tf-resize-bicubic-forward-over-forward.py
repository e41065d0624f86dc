"""TensorFlow's ForwardAccumulator computes a JVP by transposing the op's gradient function, so a
JVP of a JVP (or a JVP of a gradient) needs the gradient of ResizeBicubicGrad, which TensorFlow
never registered. Prints what the nested JVP of tf.compat.v1.image.resize_bicubic does; PyTorch's
and the reference's second derivative of the (linear) upsampling is 0."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

x = tf.constant([[[[0.5], [1.5]], [[2.0], [-1.0]]]], tf.float32)  # NHWC, 2x2
t = tf.ones_like(x)
try:
    with tf.autodiff.ForwardAccumulator(x, t) as outer:
        with tf.autodiff.ForwardAccumulator(x, t) as inner:
            y = tf.compat.v1.image.resize_bicubic(x, (3, 3), align_corners=True)
        j = inner.jvp(y)
    said = f"shape {tuple(outer.jvp(j).shape)}"
except LookupError as exc:
    said = f"LookupError: {exc}"
print(f"jvp of jvp of resize_bicubic: {said}")
