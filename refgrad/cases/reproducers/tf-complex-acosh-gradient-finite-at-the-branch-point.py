"""acosh'(z) = 1/(sqrt(z - 1) sqrt(z + 1)) is infinite at the branch points z = +-1 (PyTorch's and
JAX's derivatives, and the reference's: nan+nanj, the complex infinity of 1/0 in their complex
arithmetic). TensorFlow's gradient at z = -1 is finite, about 8.2e15j (a rounding of z^2 - 1 or of
z + 1); at +1 it is inf+nanj."""

import tensorflow as tf

x = tf.constant([complex(-1.0, 0.0), complex(1.0, 0.0)], tf.complex128)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.math.acosh(x)
print("tf gradient of acosh at -1, +1:", tape.gradient(y, x, output_gradients=tf.ones_like(y)).numpy())
