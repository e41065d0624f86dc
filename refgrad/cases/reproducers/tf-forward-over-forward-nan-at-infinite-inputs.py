"""TensorFlow's second-order forward mode (a ForwardAccumulator over a ForwardAccumulator) of a
linear or bilinear op gives nan at an infinite input, where the second-order tangent does not
depend on the input's value at all. tf.autodiff.ForwardAccumulator computes a JVP by transposing
the op's VJP with a zero dummy cotangent, and the VJP of a product reads the other factor:
0 * inf = nan. Prints TensorFlow's value next to the exact one."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

inf = float("inf")


def jvp_jvp(f, xs, t1, t2):
    with tf.autodiff.ForwardAccumulator(xs, t2) as outer:
        with tf.autodiff.ForwardAccumulator(xs, t1) as inner:
            y = f(*xs)
        j = inner.jvp(y)
    return outer.jvp(j)


x = tf.constant([inf, 1.5], tf.float64)
one = tf.ones_like(x)
# index_select's spelling (a gather of x * 1.0): linear, so its second-order tangent is 0
got = jvp_jvp(lambda a: tf.gather(a * 1.0, [0, 0, 1]), [x], [one], [0.5 * one])
print(f"gather(x * 1.0) jvp_jvp at x = [inf, 1.5]: {got.numpy().tolist()} (exact [0.0, 0.0, 0.0])")
# dot (bilinear): the second-order tangent is t1x t2y + t2x t1y whatever x and y are
a, b = tf.constant([inf], tf.float64), tf.constant([-inf], tf.float64)
got = jvp_jvp(
    lambda p, q: tf.tensordot(p, q, 1),
    [a, b],
    [tf.constant([0.0], tf.float64), tf.constant([-1.0], tf.float64)],
    [tf.constant([1.046875], tf.float64), tf.constant([4.0], tf.float64)],
)
print(f"tensordot jvp_jvp at (inf, -inf): {got.numpy().tolist()} (exact -1.046875)")
