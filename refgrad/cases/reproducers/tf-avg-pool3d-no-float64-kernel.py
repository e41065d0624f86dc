"""TensorFlow's CPU AvgPool3D has no float64 kernel (PyTorch's avg_pool3d computes in float64)."""
import tensorflow as tf

try:
    print("shape", tf.nn.avg_pool3d(tf.zeros((1, 2, 2, 2, 1), tf.float64), 1, 1, "VALID").shape)
except tf.errors.NotFoundError as exc:
    print("raises", type(exc).__name__, exc.message.splitlines()[0])
