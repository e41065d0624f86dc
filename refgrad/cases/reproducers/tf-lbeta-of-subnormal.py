"""tf.math.lbeta at a positive subnormal argument is one constant, 745.1332191019412 in float64 and
103.97208 in float32 (TensorFlow 2.21.0): its lgamma of every positive subnormal is -log(2^-1075),
-log(2^-150) (tf-lgamma-of-subnormal), eager or under tf.vectorized_map alike, where
ln B(a, b) = -ln a + O(1) at tiny a (mpmath)."""

import mpmath
import tensorflow as tf

a, b = 2.2568971802e-309, 1.32372685
pair = tf.constant([a, b], tf.float64)
eager = float(tf.math.lbeta(pair))
mapped = float(tf.vectorized_map(tf.math.lbeta, pair[None])[0])
print(f"tf lbeta({a}, {b}) float64: {eager!r}, under vectorized_map {mapped!r}; "
      f"exact {float(mpmath.log(mpmath.beta(a, b))):.10f}")
tiny32 = 1e-40  # a float32 subnormal
print(f"tf lbeta({tiny32}, {b}) float32: {float(tf.math.lbeta(tf.constant([tiny32, b], tf.float32))):.5f}; "
      f"exact {float(mpmath.log(mpmath.beta(float(tf.constant(tiny32, tf.float32)), b))):.5f}")
