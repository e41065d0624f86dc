"""The JVP (tf.autodiff.ForwardAccumulator) of tf.linalg.qr(x, full_matrices=True) of a matrix with no
rows (0 x 4) raises InvalidArgumentError from a MatrixTriangularSolve inside the QR gradient that
ForwardAccumulator transposes; the gradient (GradientTape) returns the empty gradient, as torch's
and JAX's JVPs return empty tangents. float64 and complex64 alike."""

import tensorflow as tf

for dt in (tf.float64, tf.complex64):
    x = tf.zeros((0, 4), dt)
    try:
        with tf.autodiff.ForwardAccumulator(x, tf.zeros((0, 4), dt)) as acc:
            q, r = tf.linalg.qr(x, full_matrices=True)
        print(dt.name, "jvp", acc.jvp(r).shape)
    except tf.errors.InvalidArgumentError as e:
        print(dt.name, "jvp raises InvalidArgumentError at", "MatrixTriangularSolve" in str(e) and "MatrixTriangularSolve")
