"""TensorFlow's derivative of bessel_i1 at 0 is 1.0 where I1'(0) = 1/2 (PyTorch, JAX and the
power series I1(x) = x/2 + x^3/16 + ... all say 0.5); bessel_i1e's is 1.0 where |x|/2 is
subnormal (x = -3.6e-308 in float64): its i0 - i1/x loses i1(x) = x/2 to flush-to-zero."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

x = tf.constant([0.0, -3.6e-308, 1e-3], tf.float64)
for f in (tf.math.special.bessel_i1, tf.math.special.bessel_i1e):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    print(f.__name__, "gradient at", x.numpy().tolist(), "=", tape.gradient(y, x).numpy().tolist())
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.math.special.bessel_i1(x)
at_zero = float(tape.gradient(y, x).numpy()[0])
print("exact 0.5 at 0; wrong:", at_zero != 0.5)
