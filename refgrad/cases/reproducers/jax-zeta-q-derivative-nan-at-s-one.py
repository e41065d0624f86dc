"""JAX's derivative of the Hurwitz zeta function in q at s = 1 is nan (jax.scipy.special.zeta,
JAX 0.10.2), where ∂ζ(s, q)/∂q = -s·ζ(s + 1, q) is finite: -ζ(2, q) at s = 1 (ζ itself has its pole
there; PyTorch's and TensorFlow's gradients in q give -ζ(2, q)); exact from mpmath."""

import jax
import jax.numpy as jnp
import mpmath
from jax.scipy.special import zeta

q = 0.34730905294418335
for dtype in (jnp.float32,):
    got = float(jax.grad(zeta, 1)(dtype(1.0), dtype(q)))
    print(f"jax d/dq zeta(s = 1, q = {q:.4f}) float32: {got}, exact {-float(mpmath.zeta(2, q)):.6f}")
