"""JAX's jax.scipy.special.poch is where(m == 0, 1, gamma(z + m)/gamma(z)): the two gammas overflow
(float16 past z = 9, float32 past 35, float64 past 171) where their ratio is finite, inf/inf = nan;
the exact (z)_m here is mpmath's rising factorial."""

import jax.numpy as jnp
import mpmath
from jax.scipy.special import poch

print("poch(20, 1) float16: jax", float(poch(jnp.float16(20), jnp.float16(1))), "exact", float(mpmath.rf(20, 1)))
print("poch(200, 0.5) float32: jax", float(poch(jnp.float32(200), jnp.float32(0.5))), "exact", float(mpmath.rf(200, 0.5)))
