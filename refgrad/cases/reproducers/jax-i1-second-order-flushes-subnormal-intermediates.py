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

# bfloat16 (float32's range): the forward over reverse at x = 0.03125, cotangent 1.3047, tangent
# 1.98e-38 (near the smallest normal, 1.18e-38); exact from the float32 unit tangent
xb, cb, tb = jnp.bfloat16(0.03125), jnp.bfloat16(1.3046875), jnp.bfloat16(1.9836467170126102e-38)
grad_b = lambda v: jax.vjp(i1, v)[1](cb)[0]
unit = jax.jvp(lambda v: jax.vjp(i1, v)[1](jnp.float32(1.3046875))[0], (jnp.float32(0.03125),), (jnp.float32(1.0),))[1]
print(f"jax i1 bfloat16 forward over reverse: {float(jax.jvp(grad_b, (xb,), (tb,))[1]):.4g} exact: {float(unit) * 1.9836467170126102e-38:.4g}")
