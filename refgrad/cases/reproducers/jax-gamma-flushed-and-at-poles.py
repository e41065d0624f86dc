"""JAX's derivatives of jax.scipy.special.gamma = gammasgn(x)·exp(lgamma(x)) where Γ is subnormal and
at the pole 0 (conformance record gamma; reference/ops/rules/special_gammafn.py). XLA on the CPU
flushes subnormal results to zero, so where Γ(x) is subnormal and Γ'(x) = Γ(x)ψ(x) a normal number,
JAX gives -0.0; at x = 0, Γ'' = Γ(ψ² + ψ') is inf·(nan) where the limit is +inf. Prints JAX's value
next to the exact one (mpmath)."""

import jax
import jax.numpy as jnp
import mpmath
from jax.scipy.special import gamma

x = -34.17  # float32: Γ = -1.1e-38, below float32's smallest normal; Γ'(x) = Γψ = -1.0e-37, normal
x = float(jnp.float32(x))
exact = mpmath.diff(mpmath.gamma, x)
print(f"jax gamma'({x}) float32: {float(jax.grad(gamma)(jnp.float32(x)))!r} exact: {float(exact):.4g}")
print(f"jax gamma''(0.0) float32: {float(jax.grad(jax.grad(gamma))(jnp.float32(0.0)))!r} exact: inf")
