"""tf.experimental.numpy.var with ddof != 0 raises in every dtype: its ddof branch ends with
cast(squared_deviations / (n - ddof), dtype), and dtype is None unless the caller passes one (a
tuple axis raises earlier, at `axis < 0`). ddof = 0 takes tf.math.reduce_variance and works;
np.var(x, ddof=1) and torch.var(x, correction=1) give the variances."""

import numpy as np
import tensorflow as tf
import tensorflow.experimental.numpy as tnp

x = np.array([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
print("np.var ddof=1 axis=-1:", np.var(x, axis=-1, ddof=1))
raised = []
for dtype in (tf.float64, tf.float32, tf.float16, tf.bfloat16, tf.complex64, tf.complex128):
    for axis in (-1, None, (0,)):
        a = tf.cast(tf.constant(x), dtype)
        ok = tnp.var(a, axis=axis, ddof=0)  # the ddof = 0 branch works
        try:
            tnp.var(a, axis=axis, ddof=1)
            print(f"tf tnp.var {dtype.name} axis={axis} ddof=1: returns (ddof=0 gives {ok.numpy()})")
        except TypeError as exc:
            raised.append(dtype.name)
            print(f"tf tnp.var {dtype.name} axis={axis} ddof=1: raises TypeError {str(exc)[:70]!r}")
print("tf tnp.var ddof=1 raises in", len(raised), "of 18 (dtype, axis) pairs:", sorted(set(raised)))
