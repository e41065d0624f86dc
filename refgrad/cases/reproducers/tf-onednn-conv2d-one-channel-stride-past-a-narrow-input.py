"""TensorFlow (oneDNN, float32/bfloat16): tf.nn.conv2d over a 1-channel input with a 2-wide kernel and
a stride along the width that leaves one output column (the stride reaches past the input) gives
wrong values: float32 with a batch of 2 or more, bfloat16 with any batch. float64 (Eigen), a
3-channel input, a 1-wide kernel, a 7-wide input, or TF_ENABLE_ONEDNN_OPTS=0 give the exact sum.
tf.vectorized_map merges its batch into the convolution's, so a per-example conv of a batch of 1
shows it in float32 too. The exact result is the sum of products in float64 (NumPy)."""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)


def exact(x, w, stride):
    """VALID NHWC convolution in float64, window by window."""
    n, rows, cols, _ = x.shape
    kh, kw, _, out = w.shape
    oh, ow = (rows - kh) // stride[0] + 1, (cols - kw) // stride[1] + 1
    y = np.zeros((n, oh, ow, out))
    for i in range(oh):
        for j in range(ow):
            win = x[:, i * stride[0] : i * stride[0] + kh, j * stride[1] : j * stride[1] + kw, :]
            y[:, i, j, :] = np.einsum("nhwc,hwco->no", win, w)
    return y


def error(batch, cols, kw, stride, dtype, channels=1):
    x = rng.standard_normal((batch, 6, cols, channels))
    w = rng.standard_normal((3, kw, channels, 15))
    want = exact(x, w, stride)
    got = tf.nn.conv2d(tf.constant(x, dtype), tf.constant(w, dtype), [1, *stride, 1], "VALID")
    return np.abs(np.asarray(tf.cast(got, tf.float64)) - want).max() / np.abs(want).max()


print("TensorFlow", tf.__version__)
for label, args in (
    ("float32 batch 2, 6x3 input, 3x2 kernel, stride (1, 3)", (2, 3, 2, (1, 3), tf.float32)),
    ("float32 batch 2, 6x3 input, 3x2 kernel, stride (1, 2)", (2, 3, 2, (1, 2), tf.float32)),
    ("bfloat16 batch 1, 6x3 input, 3x2 kernel, stride (1, 3)", (1, 3, 2, (1, 3), tf.bfloat16)),
    ("float32 batch 1, 6x3 input, 3x2 kernel, stride (1, 3)", (1, 3, 2, (1, 3), tf.float32)),
    ("float64 batch 2, 6x3 input, 3x2 kernel, stride (1, 3)", (2, 3, 2, (1, 3), tf.float64)),
    ("float32 batch 2, 6x7 input, 3x2 kernel, stride (1, 3)", (2, 7, 2, (1, 3), tf.float32)),
    ("float32 batch 2, 6x3 input, 3x1 kernel, stride (1, 3)", (2, 3, 1, (1, 3), tf.float32)),
    ("float32 batch 2, 3 channels, stride (1, 3)", (2, 3, 2, (1, 3), tf.float32, 3)),
):
    worst = max(error(*args) for _ in range(5))  # the largest relative error of 5 draws
    print(f"{label}: {'WRONG' if worst > 1e-2 else 'right'} (relative error {worst:.3g})")

# tf.vectorized_map of a per-example conv (batch 1 each) over 2 examples: one float32 conv of batch 2
xs = rng.standard_normal((2, 1, 6, 3, 1)).astype(np.float32)
w = rng.standard_normal((3, 2, 1, 15)).astype(np.float32)
got = tf.vectorized_map(lambda x: tf.nn.conv2d(x, w, [1, 1, 3, 1], "VALID"), tf.constant(xs)).numpy()
want = np.stack([exact(x.astype(np.float64), w.astype(np.float64), (1, 3)) for x in xs])
rel = np.abs(got - want).max() / np.abs(want).max()
print(f"float32 vectorized_map of a batch-1 conv over 2: {'WRONG' if rel > 1e-2 else 'right'} (relative error {rel:.3g})")
