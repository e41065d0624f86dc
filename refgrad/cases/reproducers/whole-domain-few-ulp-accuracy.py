"""A few ulps past the error bound on draws over the whole domain (float32 unless said): exact
values from mpmath."""

import jax
import mpmath
import numpy as np
import tensorflow as tf

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402 (after jax_enable_x64)
import jax.scipy.special as jsp  # noqa: E402 (after jax_enable_x64)

mpmath.mp.prec = 200
f = np.float32


def ulps(got, exact, dtype=np.float32):
    return abs(float(got) - float(exact)) / float(np.spacing(dtype(abs(float(exact)))))


x = f(-0.6684494614601135)
print(
    "tf asin float32 ulps (a vector of 64: Eigen's vectorised path):",
    round(ulps(tf.math.asin(tf.fill([64], x)).numpy()[0], mpmath.asin(float(x))), 2),
)
x = f(0.04366125911474228)
print("jax erf float32 ulps:", round(ulps(jsp.erf(x), mpmath.erf(float(x))), 2))
x = f(0.15728263556957245)
d2 = lambda v: jax.grad(jax.grad(jsp.ndtri))(v)
exact = mpmath.diff(lambda t: mpmath.sqrt(2) * mpmath.erfinv(2 * t - 1), float(x), 2)
print("jax ndtri second derivative float32 ulps:", round(ulps(d2(x), exact), 1))
x = np.float64(-77.86353453705698)
print(
    "jax sinh second derivative float64 ulps:",
    round(ulps(jax.grad(jax.grad(jnp.sinh))(x), mpmath.sinh(x), np.float64), 1),
)
x = f(-0.056904252618551254)
d2 = jax.grad(jax.grad(jnp.arctanh))(x)
print(
    "jax atanh second derivative float32 ulps:",
    round(ulps(d2, 2 * x / (1 - mpmath.mpf(float(x)) ** 2) ** 2), 1),
)
