"""JAX's derivatives of jax.scipy.special.betaln: autodiff of the algorithm it takes from TensorFlow
Probability (jax._src.third_party.scipy.betaln: a log-gamma difference with a truncated Stirling
correction for the larger argument, other branches for small ones), not of ln|B(a, b)|. The exact
derivatives are ψ^(n)(a) - ψ^(n)(a + b) (scipy's digamma and polygamma here, which TensorFlow's
tf.math.lbeta gives through lgamma's derivative)."""

import jax
import scipy.special as sp

jax.config.update("jax_enable_x64", True)
from jax.scipy.special import betaln  # noqa: E402 (after jax_enable_x64)

d2 = jax.grad(jax.grad(betaln, argnums=0), argnums=0)
print("d2/da2 betaln(2, 2): jax", float(d2(2.0, 2.0)), "exact", sp.polygamma(1, 2.0) - sp.polygamma(1, 4.0))
print("d/da betaln(8, 1): jax", float(jax.grad(betaln)(8.0, 1.0)), "exact", sp.digamma(8.0) - sp.digamma(9.0))
print("d/da betaln(0.65, -1.155): jax", float(jax.grad(betaln)(0.65, -1.155)), "exact", sp.digamma(0.65) - sp.digamma(0.65 - 1.155))
print("d2/da2 betaln(1e-30, 1e-30): jax", float(d2(1e-30, 1e-30)), "exact", sp.polygamma(1, 1e-30) - sp.polygamma(1, 2e-30))
