"""JAX at an infinite argument outside atanh's domain and at ndtri's pole: a zero where the derivative has no value (atanh(-inf) is nan) or is unbounded (ndtri''(0) = -inf)."""

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402 (after jax_enable_x64)
import jax.scipy.special as jsp  # noqa: E402 (after jax_enable_x64)

inner = lambda v: jax.jvp(jnp.arctanh, (v,), (jnp.float64(-1.0),))[1]
print(
    "jax atanh jvp_jvp at -inf:",
    float(jax.jvp(inner, (jnp.float64(-np.inf),), (jnp.float64(0.2041015625),))[1]),
    "(atanh(-inf) is nan: no derivative)",
)
print(
    "jax ndtri second derivative at 0:",
    float(jax.grad(jax.grad(jsp.ndtri))(jnp.float64(0.0))),
    "(unbounded: -inf from the right)",
)
