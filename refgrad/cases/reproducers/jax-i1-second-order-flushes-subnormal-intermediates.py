"""JAX's forward over forward of jax.scipy.special.i1 with a tangent near float64's smallest normal:
XLA:CPU flushes the subnormal intermediates of the tangent's chain rule to zero, so the result is off
by about the smallest normal (2.2e-308) where the exact value, i1''(x) t1 t2, is a subnormal. Prints
JAX's value next to the exact one (i1''(x) t1, i1''(x) from the unit tangent, where nothing is
subnormal)."""

import jax
import jax.numpy as jnp
from jax.scipy.special import i1

jax.config.update("jax_enable_x64", True)

x = -0.015614600959441555


def second(t1):
    def tangent(v):
        return jax.jvp(i1, (v,), (jnp.float64(t1),))[1]

    return float(jax.jvp(tangent, (jnp.float64(x),), (jnp.float64(1.0),))[1])


d2 = second(1.0)  # i1''(x): no subnormal on the way
t1 = -3.895739552457109e-308
print(f"jax i1 forward over forward at x = {x}, t1 = {t1:.4g}: {second(t1):.6g} exact: {d2 * t1:.6g}")
