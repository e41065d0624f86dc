"""jnp.sinc's derivatives differentiate sin(pi x) / (pi x) near 0 (the Maclaurin series only at x == 0 exactly) and cancel: far off for small |x|; tf.experimental.numpy.log10's derivative at a negative argument is nan where PyTorch's formula 1/(x ln 10) is finite; TensorFlow's float32 second derivative of erfinv is a few ulps off."""

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402 (after jax_enable_x64)
import mpmath  # noqa: E402 (after jax_enable_x64)
import tensorflow as tf  # noqa: E402 (after jax_enable_x64)

mpmath.mp.prec = 200
x = 1e-8
d2 = lambda v: jax.jvp(lambda u: jax.jvp(jnp.sinc, (u,), (1.0,))[1], (v,), (1.0,))[1]
print(
    "jax sinc'' float64 at 1e-8:",
    float(d2(jnp.float64(x))),
    "exact",
    float(mpmath.diff(lambda t: mpmath.sinc(mpmath.pi * t), x, 2)),
)
d1 = jax.jvp(jnp.sinc, (jnp.bfloat16(0.001),), (jnp.bfloat16(1.0),))[1]
print(
    "jax sinc' bfloat16 at 0.001:",
    float(d1),
    "exact",
    float(mpmath.diff(lambda t: mpmath.sinc(mpmath.pi * t), 0.0010004043579101562)),
)
v = tf.constant(np.float32(-1.7177734375))
with tf.autodiff.ForwardAccumulator(v, tf.constant(np.float32(1.0))) as acc:
    y = tf.experimental.numpy.log10(v)
print(
    "tf log10 jvp at -1.72:",
    acc.jvp(y).numpy(),
    "(PyTorch 1/(x ln 10):",
    1 / (-1.7177734375 * np.log(10)),
    ")",
)
x = np.float32(0.5)
v = tf.constant(x)
with tf.autodiff.ForwardAccumulator(v, tf.constant(np.float32(1.0))) as o:
    with tf.autodiff.ForwardAccumulator(v, tf.constant(np.float32(1.0))) as i:
        y = tf.math.erfinv(v)
    t = i.jvp(y)
e = mpmath.diff(mpmath.erfinv, float(x), 2)
print(
    "tf erfinv'' float32 at 0.5 ulps:",
    abs(float(o.jvp(t).numpy()) - float(e)) / float(np.spacing(np.float32(float(e)))),
)
