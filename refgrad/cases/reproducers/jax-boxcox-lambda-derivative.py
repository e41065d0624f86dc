"""JAX's λ-derivative of jax.scipy.special.boxcox (and boxcox1p): autodiff of expm1(λ·log x)/λ, i.e.
log(x)·e^(λ log x)/λ - expm1(λ log x)/λ², two terms of size 1/λ that cancel to (log x)²/2 + O(λ)
as λ -> 0; at λ = 0 exactly its where(λ == 0, log x, ...) gives 0. The exact derivative here is
mpmath's differentiation of (x^λ - 1)/λ at 50 digits."""

import jax
import mpmath

jax.config.update("jax_enable_x64", True)
from jax.scipy.special import boxcox  # noqa: E402 (after jax_enable_x64)

mpmath.mp.dps = 50
dlam = jax.grad(boxcox, argnums=1)
for lam in (1e-9, 0.0):
    exact = mpmath.diff(lambda v: mpmath.expm1(v * mpmath.log(2)) / v if v else mpmath.log(2), lam)
    print(f"d/dlmbda boxcox(2, {lam}): jax {float(dlam(2.0, lam))!r} exact {float(exact)!r}")
