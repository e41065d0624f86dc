"""What `refgrad run --ops expi --draws seeded --seed 1 --known builtin` (sqp24) reached once the
reference's derivative primitives took their multipliers (reference/ops/rules/_times.py): JAX's
float32 and bfloat16 second derivative of Ei beside the exact one (mpmath)."""

import jax
import jax.numpy as jnp
import mpmath
from jax.scipy.special import expi

# JAX's Ei' is e^x/x (its custom jvp); autodiff of that quotient gives Ei'' = e^x/x - e^x/x², and
# x² of |x| < 2^-63 = 1.08e-19 is below float32's smallest normal 2^-126, which XLA:CPU flushes to
# 0: Ei'' is -inf there where the exact e^x (x - 1)/x² is finite down to |x| = 5.4e-20 (float32
# max 3.4e38), and its product with a tangent finite further down.
second = jax.grad(jax.grad(expi))
for dtype in ("float32", "bfloat16"):
    for x in (1e-19, 2e-19):
        v = jnp.array(x, dtype)
        xv = mpmath.mpf(float(v))
        exact = float(mpmath.exp(xv) * (xv - 1) / xv**2)
        print(f"jax expi'' {dtype} at {float(v):.4g}: {second(v).tolist()} exact {exact:.4g}")
