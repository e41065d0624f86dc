"""JAX's derivatives of jax.scipy.special.beta = gammasgn(a)·gammasgn(b)·gammasgn(a + b)·exp(betaln(a,
b)): autodiff of betaln's algorithm (TensorFlow Probability's, jax._src.third_party.scipy.betaln),
nan at negative non-integers and off in its branches, not B(a, b)·(ψ(a) - ψ(a + b)). The exact
derivatives here are mpmath's differentiation of its beta function at 30 digits."""

import jax
import mpmath

jax.config.update("jax_enable_x64", True)
from jax.scipy.special import beta  # noqa: E402 (after jax_enable_x64)

a, b = -0.1864013671875, -0.03125
print("d/da beta(-0.1864, -0.03125): jax", float(jax.grad(beta)(a, b)), "exact", float(mpmath.diff(mpmath.beta, (a, b), (1, 0))))
d2 = jax.grad(jax.grad(beta, argnums=0), argnums=0)
print("d2/da2 beta(2, 2): jax", float(d2(2.0, 2.0)), "exact", float(mpmath.diff(mpmath.beta, (2, 2), (2, 0))))
