"""JAX's derivatives of jax.scipy.special.loggamma and factorial where the value is not a finite
number (conformance records loggamma, factorial; reference/ops/rules/special_gammafn.py).
loggamma = where(x > 0, lgamma(x), nan): at x <= 0 its derivative is the where's unselected branch,
0, where the function is nan (no derivative: the reference says nan). factorial = where(n < 0, 0,
exp(lgamma(n + 1))): at n = +inf its second derivative multiplies and adds infinities (nan) where
Γ''(n + 1) -> +inf. Prints JAX's value next to the reference's."""

import jax
import jax.numpy as jnp
from jax.scipy.special import factorial, loggamma

jax.config.update("jax_enable_x64", True)

for x in (-2.5, -0.5):
    print(f"jax loggamma'({x}): {float(jax.grad(loggamma)(x))!r} reference: nan (loggamma is nan there)")
inf = float("inf")
print(f"jax factorial''(inf): {float(jax.grad(jax.grad(factorial))(inf))!r} reference: inf")
print(f"jax factorial'(inf): {float(jax.grad(factorial)(inf))!r} reference: inf")
