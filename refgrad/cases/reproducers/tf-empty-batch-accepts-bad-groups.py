"""TensorFlow's convolution over an empty batch skips the group check that a batch of one fails.

4 input channels and filters of 2 input channels make 2 groups; 3 output channels are not divisible by
2. TensorFlow's own (Eigen) CPU kernels check this only when there is something to compute: with an
empty batch they return an empty output of 3 channels, with a batch of one they raise 'output depth
must be evenly divisible by number of groups'. PyTorch and the reference reject it for every batch.
The oneDNN kernels, which TensorFlow runs for float32, bfloat16 and float16 on processors with
AVX-512/AMX-class features, check it for every batch: this script turns oneDNN off, as it is on
machines without those features, so both dtypes show TensorFlow's own kernels. float64 never runs
through oneDNN.
"""

import os

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"  # before TensorFlow is imported

import tensorflow as tf  # noqa: E402


def run(name, fn):
    try:
        print(name, "returns shape", tuple(fn().shape))
    except Exception as e:  # the framework's own rejection
        print(name, "raises", type(e).__name__ + ":", str(e).splitlines()[0][-80:])


for dtype in (tf.float32, tf.float64):
    for n in (0, 1):
        x = tf.zeros([n, 5, 5, 4], dtype)
        w = tf.zeros([3, 3, 2, 3], dtype)
        run(f"conv2d {dtype.name} batch {n}", lambda: tf.nn.conv2d(x, w, 1, "SAME"))
