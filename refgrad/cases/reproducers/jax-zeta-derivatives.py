"""JAX's jax.scipy.special.zeta at its pole q = 0, and its derivatives (the jvp of its 16-term Euler-Maclaurin series in
jax.numpy, ``_zeta_series_expansion``) depart where its value does not:

* at s < 1 its value is nan (XLA's zeta, like PyTorch's and TensorFlow's: the series diverges), but
  its derivatives are finite numbers (the series' continuation): d/dq zeta(0.5, 2.0) = -0.806...;
* at q = 0 (its pole) jax.scipy.special.zeta(1.5, 0.0) and zeta(3.0, -0.0) are nan where PyTorch's
  and TensorFlow's zeta (Cephes: q == floor(q) <= 0 is the pole) and the limit say inf, and the
  q-derivative there is nan where the limit (and PyTorch's -s·zeta(s + 1, 0)) is -inf;
* in float16 they are nan where the exact derivative underflows: the Bernoulli coefficients of the
  series overflow float16 when cast (RuntimeWarning: overflow encountered in cast), so d/dq
  zeta(20, 4) in float16 is nan, exactly -20·zeta(21, 4) = -4.6e-12, 0 in float16.

Prints each value."""

import warnings

import jax
import jax.numpy as jnp
from jax.scipy.special import zeta

jax.config.update("jax_enable_x64", True)
warnings.simplefilter("ignore", RuntimeWarning)

value = float(zeta(0.5, 2.0))
dq = float(jax.grad(zeta, argnums=1)(0.5, 2.0))
ds = float(jax.grad(zeta, argnums=0)(0.5, 2.0))
print(f"float64 zeta(0.5, 2.0) = {value!r}; d/dq = {dq!r}; d/ds = {ds!r}")
at_pole = zeta(jnp.array([1.5, 3.0]), jnp.array([0.0, -0.0]))
slope = jax.jvp(lambda q: zeta(1.5, q), (0.0,), (1.0,))[1]
print(
    f"float64 zeta([1.5, 3.0], [0.0, -0.0]) = {at_pole.tolist()}; jvp in q of zeta(1.5, 0.0) = {float(slope)!r}"
)
half = jax.grad(zeta, argnums=1)(jnp.float16(20.0), jnp.float16(4.0))
print(f"float16 d/dq zeta(20, 4) = {float(half)!r}")
