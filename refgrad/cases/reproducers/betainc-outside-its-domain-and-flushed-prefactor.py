"""The regularized incomplete beta function I_x(a, b) of JAX and TensorFlow where its value is nan
(a < 0 or b < 0: outside the domain a, b > 0 both define; a = b = inf) and where JAX flushes a
subnormal intermediate to zero.

* Outside the domain the value is nan, but the x-derivative is the density formula
  exp((b - 1) log1p(-x) + (a - 1) log x - lbeta(a, b)), finite: at a = -1.64, b = 0.282, x = 0.142
  both frameworks' first derivative is 74.1 and JAX's second -1314 where the function has none (the
  reference: nan, the derivative of nothing).
* XLA flushes subnormal intermediates: at a = 6.2e-308, b = 3.2e-308 (normal numbers), x = 0.052,
  the prefactor x^a (1-x)^b / B(a, b) = ab/(a+b) = 2.1e-308 is subnormal and becomes 0, so JAX's
  betainc under jit is 0 where I = b/(a + b) = 0.342 (mpmath)."""

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402 (after jax_enable_x64)
import tensorflow as tf  # noqa: E402
from jax.scipy.special import betainc  # noqa: E402

a, b, x = -1.6377537387609482, 0.28227585, 0.14206161
print("jax betainc at a < 0:", float(betainc(a, b, x)))
print("jax d/dx at a < 0:", float(jax.grad(betainc, argnums=2)(a, b, x)))
print("jax d2/dx2 at a < 0:", float(jax.grad(jax.grad(betainc, argnums=2), argnums=2)(a, b, x)))
at, bt, xt = (tf.constant(v, tf.float64) for v in (a, b, x))
with tf.GradientTape() as tape:
    tape.watch(xt)
    y = tf.math.betainc(at, bt, xt)
print("tf betainc at a < 0:", float(y), "d/dx:", float(tape.gradient(y, xt)))

a, b, x = 6.20476236e-308, 3.21882881e-308, 0.05240936
print("jax jit betainc at a, b near the smallest normal:", float(jax.jit(betainc)(a, b, x)))
print("jax eager:", float(betainc(jnp.float64(a), jnp.float64(b), jnp.float64(x))), "exact: 0.3415713...")
print("tf:", float(tf.math.betainc(*(tf.constant(v, tf.float64) for v in (a, b, x)))))
