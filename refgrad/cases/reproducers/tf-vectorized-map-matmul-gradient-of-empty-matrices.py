"""tf.vectorized_map of a matmul gradient over empty matrices: the gradient of each [0, k] sample
has shape [0, k], so the batch of 2 has shape [2, 0, k]; TensorFlow returns [2, 0, k // 2]."""

import numpy as np
import tensorflow as tf

k = 4095
other = tf.constant(np.zeros((k, 0)))


def per_sample(args):
    x, g = args
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.matmul(x, other)
    return tape.gradient(y, x, output_gradients=g)


xs = tf.constant(np.zeros((2, 0, k)))
gs = tf.constant(np.zeros((2, 0, 0)))
print(
    "tf.vectorized_map matmul gradient, 2 samples of [0, 4095]:",
    per_sample((xs[0], gs[0])).shape,
    "per sample;",
    tf.vectorized_map(per_sample, (xs, gs)).shape,
    "batched, expected (2, 0, 4095)",
)
for k2 in (3, 8):
    other2 = tf.constant(np.zeros((k2, 0)))

    def f(args, o=other2):
        x, g = args
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.matmul(x, o)
        return tape.gradient(y, x, output_gradients=g)

    print(
        f"k = {k2}:",
        tf.vectorized_map(f, (tf.zeros((2, 0, k2), tf.float64), tf.zeros((2, 0, 0), tf.float64))).shape,
    )

# the matmul itself, not only its gradient (seedsK, seed-2 seeded matmul vmap): each sample of
# tf.matmul([0, 2], [2, 1]) has shape [0, 1], the batch of 2 [2, 0, 0]
xs = tf.zeros((2, 0, 2), tf.float64)
other3 = tf.ones((2, 1), tf.float64)
print(
    "tf.vectorized_map matmul, 2 samples of [0, 2] @ [2, 1]:",
    tf.matmul(xs[0], other3).shape,
    "per sample;",
    tf.vectorized_map(lambda a: tf.matmul(a, other3), xs).shape,
    "batched, expected (2, 0, 1)",
)
