"""Departures `refgrad run --ops scans --draws seeded` reached that the known file did not yet describe
(seedsD): each line prints a framework's value next to the reference's (PyTorch's formula) and the
derivative where the two differ."""

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402 (after jax_enable_x64)

# JAX's forward over reverse of cumprod with a NaN element: grad_x0 = g0 + g1 x1 does not read x0, so
# its derivative is finite (t_g0 + t_g1 x1 + g1 t_x1); the reference (PyTorch's cumprod backward
# divides by x) says nan
x = jnp.array([jnp.nan, 1.3642578125])
g, tg, tx = jnp.array([2.08203125, 1.0]), jnp.array([1.0, 0.0]), jnp.array([-2.0, 1.7762184143066406e-04])


def grad_of(x_, g_):
    return jax.vjp(lambda v: jnp.cumprod(v), x_)[1](g_)[0]


t = jax.jit(lambda: jax.jvp(grad_of, (x, g), (tx, tg))[1])()
print("jax cumprod jvp of the vjp at x = [nan, 1.364]:", float(t[0]), "reference: nan; derivative:", 1.0 + 1.0 * 1.7762184143066406e-04)

# JAX's forward over forward of cumprod with an infinite element: nan (inf - inf in its running
# products) where the second derivative, sum over i != j of t1_i t2_j prod_{k != i, j} x_k, is the
# infinite element times a finite coefficient plus finite terms: at x = [2, -3, inf, 0.5],
# t1 = [1, 1, 1, 1], t2 = [1, 2, 1, 1] the last element's coefficient of x_2 is
# 0.5 (1 + 2) - 3 (1 + 1) + 2 (2 + 1) = 1.5 > 0, so the value is +inf (the reference's)
x = jnp.array([2.0, -3.0, jnp.inf, 0.5])
t1, t2 = jnp.array([1.0, 1.0, 1.0, 1.0]), jnp.array([1.0, 2.0, 1.0, 1.0])
d2 = jax.jit(lambda: jax.jvp(lambda v: jax.jvp(jnp.cumprod, (v,), (t1,))[1], (x,), (t2,))[1])()
print("jax cumprod forward over forward at x = [2, -3, inf, 0.5]:", float(d2[3]), "second derivative: inf")
