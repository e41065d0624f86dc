"""Departures `refgrad run --ops <family> --draws seeded --seed 2 --known builtin` reached that the
known file did not yet describe (seedsK): each line prints a framework's value next to the exact one."""

import numpy as np
import tensorflow as tf
import tensorflow.experimental.numpy as tnp

# refgrad's TensorFlow spelling of var (two-pass, as a TF user writes it) in float16: the forward-mode
# tangent of (x - mean)^2, 2 (x - mean) t, overflows past 65504 for deviations of ~1e4 (values 'wide'),
# and the sum of +inf and -inf is nan, in the JVP and in the forward over forward
x = np.array([1.0976e4, -1.33514404e-04, 1.121e3, 1.36375e2, 4.504e3])
t1 = np.array([-1.17431641e-01, 6.14746094e-01, 1.43906250e01, -3.13671875e00, 1.0])
t2 = np.array([-1.57128906e00, 1.0, 2.32177734e-01, 1.0, -4.0])


def var(v):
    centred = v - tf.reduce_mean(v, axis=[0], keepdims=True)
    return tf.reduce_sum(centred * centred, axis=[0]) / 4


X, T1, T2 = (tf.constant(a, tf.float16) for a in (x, t1, t2))
with tf.autodiff.ForwardAccumulator(X, T2) as outer:
    with tf.autodiff.ForwardAccumulator(X, T1) as inner:
        y = var(X)
    first = inner.jvp(y)
second = outer.jvp(first)
xc, c1, c2 = x - x.mean(), t1 - t1.mean(), t2 - t2.mean()
print(
    "tf var float16 jvp:",
    float(first),
    "exact:",
    2 * np.sum(xc * c1) / 4,
    "jvp_jvp:",
    float(second),
    "exact:",
    2 * np.sum(c1 * c2) / 4,
)

# tf.experimental.numpy.var with ddof != 0 in float16 or bfloat16 raises: its divisor
# cast(n - ddof, dtype) is cast back to a result dtype it leaves None for the half types
for dtype in (tf.float16, tf.bfloat16):
    try:
        got = float(tnp.var(tf.constant([1.0, 2.0, 4.0], dtype), axis=-1, ddof=1))
    except TypeError as exc:
        got = f"raises TypeError: {exc}"
    print(f"tf tnp.var {dtype.name} ddof=1:", got, "exact:", np.var([1.0, 2.0, 4.0], ddof=1))
