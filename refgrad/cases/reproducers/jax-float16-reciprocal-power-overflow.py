"""JAX differentiates reciprocal through integer_pow(x, -n), computed as 1 / x**n: in float16 x**n
overflows (65504) once |x| > 256 (n = 2, the first derivative) or |x| > 40.3 (n = 3, the second),
so the derivative is 0 where the exact value -1/x² or 2/x³ is a representable float16 (subnormal).
Exact value: the same expression in float64 from the float16-exact input. PyTorch is right."""

import jax
import jax.numpy as jnp
import torch

h = jnp.float16
for x in (300.0, 70.0):
    d1 = float(jax.grad(jnp.reciprocal)(h(x)))
    d2 = float(jax.grad(jax.grad(jnp.reciprocal))(h(x)))
    t = torch.tensor(x, dtype=torch.float16, requires_grad=True)
    (g,) = torch.autograd.grad(torch.reciprocal(t), t, create_graph=True)
    (gg,) = torch.autograd.grad(g, t)
    print(f"x = {x}: jax d1 {d1} d2 {d2}; exact {-1 / x**2:.6g} {2 / x**3:.6g}; torch {float(g.detach()):.6g} {float(gg):.6g}")
print("jax: 0 where the exact value is not:", float(jax.grad(jax.grad(jnp.reciprocal))(h(70.0))) == 0.0)
