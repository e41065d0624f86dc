"""XLA's SVD lowering rejects a matrix with a zero dimension: tf.linalg.svd under
tf.function(jit_compile=True) of a 0 x 0, 0 x 3 or 3 x 0 real matrix raises InvalidArgumentError
'Slice dim size 1 greater than dynamic slice dimension: 0', where eager TensorFlow (and torch) return
empty factors."""

import tensorflow as tf

for dtype in (tf.float64, tf.float32):
    for shape in ((0, 0), (0, 3), (3, 0)):
        for full in (False, True):
            a = tf.zeros(shape, dtype)
            s, u, v = tf.linalg.svd(a, full_matrices=full)  # eager: empty factors
            try:
                tf.function(lambda a: tf.linalg.svd(a, full_matrices=full), jit_compile=True)(a)
                outcome = "XLA returns the factors"
            except tf.errors.InvalidArgumentError as exc:
                outcome = "XLA raises InvalidArgumentError " + str(exc).splitlines()[0][:60]
            print(f"{dtype.name} {shape} full_matrices={full}: eager s {tuple(s.shape)}; {outcome}", flush=True)
