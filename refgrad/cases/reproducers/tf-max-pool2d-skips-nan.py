"""TensorFlow's MaxPool skips a NaN in its window (it keeps the larger of the rest), where the
maximum of a set holding NaN is NaN under IEEE 754's maximum and PyTorch's max_pool2d (and JAX's
reduce_window max) propagate it. Prints TensorFlow's value next to PyTorch's choice."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

x = tf.constant([[[[float("nan")], [-0.5]]]], tf.float32)  # NHWC, one 1x2 window


def pool(a):
    return tf.nn.max_pool2d(a, [1, 2], [1, 2], "VALID")


print(
    f"max_pool2d of [nan, -0.5]: eager {float(pool(x)[0, 0, 0, 0])!r}, "
    f"tf.vectorized_map {float(tf.vectorized_map(pool, tf.stack([x]))[0, 0, 0, 0, 0])!r} (PyTorch: nan)"
)
