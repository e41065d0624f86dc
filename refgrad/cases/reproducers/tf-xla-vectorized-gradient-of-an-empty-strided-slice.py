"""XLA (tf.function(jit_compile=True)) of tf.vectorized_map over the gradient of an empty strided
slice (start == stop, step 2) returns a gradient of the wrong shape: x[:, 1:1:2] of a (17, 2) matrix
is (17, 0), its gradient must have x's shape (17, 2), batched (3, 17, 2); XLA gives (3, 17, 3).
Without XLA, and with step 1, the shape is right; float64 and complex128 alike."""

import numpy as np
import tensorflow as tf


def batched_gradient(x, g, step, jit):
    @tf.function(jit_compile=jit)
    def run(x, g):
        def one(args):
            xi, gi = args
            with tf.GradientTape() as tape:
                tape.watch(xi)
                y = xi[:, 1:1:step]
            return tape.gradient(y, xi, output_gradients=gi)

        return tf.vectorized_map(one, (x, g))

    return run(x, g)


for dtype in (tf.float64, tf.complex128):
    x = tf.constant(np.ones((3, 17, 2)), dtype)
    g = tf.zeros((3, 17, 0), dtype)
    for step in (2, 1):
        shapes = [tuple(batched_gradient(x, g, step, jit).shape) for jit in (False, True)]
        print(f"{dtype.name} step {step}: tf.function {shapes[0]}, jit_compile {shapes[1]}")
