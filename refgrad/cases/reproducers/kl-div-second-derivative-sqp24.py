"""What `refgrad run --ops kl_div --draws seeded --seed 1 --known builtin` (sqp24) reached once the
reference's derivative primitives took their multipliers (reference/ops/rules/_times.py): JAX's
float32 and bfloat16 second y-derivative of kl_div beside the exact one (mpmath)."""

import jax
import jax.numpy as jnp
import mpmath
from jax.scipy.special import kl_div

# kl_div(x, y) = x log(x/y) - x + y: autodiff of JAX's -x/y + 1 gives ∂_y² = x/y², and y² of
# |y| < 2^-63 = 1.08e-19 is below float32's smallest normal 2^-126, which XLA:CPU flushes to 0:
# x/y² is inf there where the exact value is finite (75 at x = 3e-38, y = 2e-20).
second = jax.grad(jax.grad(kl_div, argnums=1), argnums=1)
for dtype in ("float32", "bfloat16"):
    x, y = jnp.array(3e-38, dtype), jnp.array(2e-20, dtype)
    exact = float(mpmath.mpf(float(x)) / mpmath.mpf(float(y)) ** 2)
    print(f"jax kl_div d2/dy2 {dtype} at ({float(x):.4g}, {float(y):.4g}): {second(x, y).tolist()} exact {exact:.4g}")
