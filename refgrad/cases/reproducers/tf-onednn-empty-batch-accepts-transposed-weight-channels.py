"""With oneDNN on, TensorFlow's float32 transposed convolution over an empty batch accepts a filter
whose input-channel count (2) is not the input's (1); float64 and a batch of 1 raise. The known
entry's region is reached only by some seeds' convolution draws (seed 4 of the README command, not
seed 1), so this script is what keeps the entry from going stale at the others."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port

print(f"oneDNN on: {_pywrap_util_port.IsMklEnabled()}")
for dtype, batch in ((tf.float32, 0), (tf.float64, 0), (tf.float32, 1)):
    x = tf.zeros([batch, 4, 1], dtype)  # N, W, C = 1 channel
    w = tf.zeros([1, 3, 2], dtype)  # W, out 3, in 2: the input has 1 channel, not 2
    try:
        y = tf.nn.conv1d_transpose(x, w, [batch, 4, 3], 1, "VALID")
        print(f"{dtype.name} batch {batch}: accepted, shape {tuple(y.shape)}")
    except (tf.errors.OpError, ValueError) as e:  # float32 batch 1: oneDNN's AbortedError
        print(f"{dtype.name} batch {batch}: raised {type(e).__name__}")
