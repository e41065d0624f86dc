"""The gradient of tf.linalg.slogdet's log|det| of an empty (0x0) complex matrix raises
InvalidArgumentError ('cannot compute Mul as input #1(zero-based) was expected to be a float tensor but
is a complex64 tensor'); log|det| of the empty matrix is 0 and its gradient the empty matrix (float64
0x0 works, as do torch and JAX). Without output_gradients (a cotangent of ones) it computes."""

import tensorflow as tf

for dtype in (tf.float32, tf.complex64):
    a = tf.zeros((0, 0), dtype=dtype)
    with tf.GradientTape() as tape:
        tape.watch(a)
        y = tf.linalg.slogdet(a)[1]
    try:
        print(dtype.name, "grad shape", tuple(tape.gradient(y, a, output_gradients=tf.constant(0.5)).shape))
    except tf.errors.InvalidArgumentError as exc:
        print(dtype.name, "grad raises", str(exc).splitlines()[0][:90])
