"""TensorFlow (oneDNN, bfloat16): the weight gradient of a stride-2 convolution over a 1-channel,
1-wide input is nan now and then: it reads memory outside the input and multiplies it by zero.

Each call converts the input afresh (as every step of a user's loop does); between calls,
tensors filled with nan are made and dropped, so that the memory next to a fresh input may hold
nan. The gradient of tf.nn.conv2d with respect to its filter (Conv2DBackpropFilter) then holds
nan in whole kernel rows in some calls; values that are not nan are right. The same calls in
float32, with stride 1, or with TF_ENABLE_ONEDNN_OPTS=0 are identical every time.
"""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x_values = rng.standard_normal((2, 7, 1, 1)).round(2)  # NHWC: 7 rows, 1 column, 1 channel
w_values = rng.standard_normal((3, 1, 1, 4)).round(2)  # 3x1 kernel, 1 -> 4 channels
dy_values = {s: rng.standard_normal((2, (7 - 3) // s + 1, 1, 4)).round(2) for s in (1, 2)}


def weight_gradient(dtype, stride):
    x = tf.cast(tf.constant(x_values), dtype)  # a fresh tensor, made by an op (as a layer's input is)
    w = tf.constant(w_values, dtype)
    with tf.GradientTape() as tape:
        tape.watch(w)
        y = tf.nn.conv2d(x, w, [1, stride, stride, 1], "VALID")
    return np.asarray(tape.gradient(y, w, output_gradients=tf.constant(dy_values[stride], dtype)), np.float64)


def transposed_weight_gradient(dtype, stride):
    """tf.nn.conv_transpose (4 -> 1 channels, 3x1 kernel): its filter gradient is Conv2DBackpropFilter
    over the fresh 1-channel, 1-wide cotangent (7 rows)."""
    rows = (7 - 3) // stride + 1
    x = tf.constant(dy_values[stride], dtype)  # 2 x rows x 1 x 4
    w = tf.constant(w_values, dtype)
    with tf.GradientTape() as tape:
        tape.watch(w)
        y = tf.nn.conv_transpose(x, w, [2, (rows - 1) * stride + 3, 1, 1], [1, stride, stride, 1], "VALID")
    cotangent = tf.cast(tf.constant(x_values[:, : y.shape[1]]), dtype)  # a fresh tensor, made by an op
    return np.asarray(tape.gradient(y, w, output_gradients=cotangent), np.float64)


def nan_filled_allocations(dtype):
    junk = [tf.fill([int(n)], tf.constant(float("nan"), d)) for n in rng.integers(1, 300, 30) for d in (dtype, tf.float32)]
    del junk


def calls_with_nan(dtype, stride, repeat, weight_gradient=weight_gradient):
    exact = weight_gradient(tf.float64, stride)
    nan_calls = wrong_calls = 0
    for _ in range(repeat):
        nan_filled_allocations(dtype)
        g = weight_gradient(dtype, stride)
        nan_calls += bool(np.isnan(g).any())
        finite = ~np.isnan(g)
        wrong_calls += bool((np.abs(g - exact)[finite] > 0.05 * (1 + np.abs(exact[finite]))).any())
    return nan_calls, wrong_calls


from tensorflow.python.util import _pywrap_util_port  # TensorFlow's own answer: oneDNN on in this process

print(f"TensorFlow {tf.__version__}, oneDNN on: {bool(_pywrap_util_port.IsMklEnabled())}")
# about 1 call in 6 shows it here, so 300 calls miss it with probability about 1e-24
for dtype, stride, repeat in ((tf.bfloat16, 2, 300), (tf.bfloat16, 1, 100), (tf.float32, 2, 100)):
    nan_calls, wrong_calls = calls_with_nan(dtype, stride, repeat)
    verdict = "nan" if nan_calls else "never nan"
    print(f"{dtype.name} stride {stride}: {verdict} ({nan_calls} of {repeat} calls), non-nan elements wrong in {wrong_calls}")
nan_calls, wrong_calls = calls_with_nan(tf.bfloat16, 2, 300, transposed_weight_gradient)
print(f"conv_transpose bfloat16 stride 2: {'nan' if nan_calls else 'never nan'} ({nan_calls} of 300 calls), non-nan elements wrong in {wrong_calls}")
