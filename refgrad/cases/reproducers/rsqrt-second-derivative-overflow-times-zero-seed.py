"""rsqrt's second derivative 3/4 x^(-5/2) overflows at tiny x (float64: x < ~1e-123, so at every
subnormal and the smallest normals); times an exact zero tangent the exact result is 0, PyTorch and
JAX give nan (inf * 0)."""

import jax
import torch

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402 (after jax_enable_x64)

x0 = 1.1205041021889993e-308
x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
(g,) = torch.autograd.grad(torch.rsqrt(x), x, torch.tensor(0.0, dtype=torch.float64), create_graph=True)
(gg,) = torch.autograd.grad(g, x, torch.tensor(1.0, dtype=torch.float64))
print("torch rsqrt second derivative at", x0, "with a zero cotangent:", float(gg), "(exact 0)")
f = lambda v: jax.jvp(jax.lax.rsqrt, (v,), (jnp.float64(0.0),))[1]
print(
    "jax   rsqrt jvp of jvp at",
    x0,
    "with a zero tangent:",
    float(jax.jvp(f, (jnp.float64(x0),), (jnp.float64(1.0),))[1]),
    "(exact 0)",
)
