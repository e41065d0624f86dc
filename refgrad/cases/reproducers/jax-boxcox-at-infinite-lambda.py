"""jax.scipy.special.boxcox (and boxcox1p) at an infinite λ is nan where x^λ grows (JAX 0.10.2).

JAX computes expm1(λ·log x)/λ: at λ = -inf and 0 < x < 1, expm1(+inf)/(-inf) = inf/inf = nan in
every float dtype, while (x^λ - 1)/λ -> -inf as λ -> -inf (x^λ grows exponentially in |λ|, λ only
linearly); at λ = +inf and x > 1 the limit is +inf. Where x^λ -> 0 JAX's (-1)/(±inf) = 0 is the limit."""

import jax.numpy as jnp
import mpmath
from jax.scipy.special import boxcox

for dtype in (jnp.float16, jnp.float32):
    got = boxcox(jnp.asarray([0.8852539062, 1.5], dtype), jnp.asarray(-jnp.inf, dtype))
    print(f"jax boxcox([0.885, 1.5], -inf) {jnp.dtype(dtype).name}: {got.tolist()}")
mpmath.mp.dps = 30
print("exact (x^lmbda - 1)/lmbda at x = 0.885, lmbda = -1e4:",
      mpmath.nstr((mpmath.mpf(0.8852539062) ** -10000 - 1) / -10000, 5), "-> -inf")
