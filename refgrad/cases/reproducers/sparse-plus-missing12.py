"""What `refgrad run --ops sparse_plus --draws seeded --seed 1 --known builtin` (missing12) reached
that no earlier entry described; the line prints JAX's numbers beside the limits."""

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

# jax.nn.sparse_plus is where(x <= -1, 0, where(x >= 1, x, (x + 1)**2 / 4)): at x = +-inf the
# unselected inner piece's derivative 2(x + 1)/4 is infinite and its zero cotangent times it is
# nan; sparse_plus' is 1 for x >= 1 and 0 for x <= -1, so the limits are 1 at +inf, 0 at -inf
# (sparse_plus-5a7ed9fd9b13, vjp_jvp float64 'nonfinite': the derivative of the jvp in x)
points = jnp.array([jnp.inf, -jnp.inf])
first = jax.vmap(jax.grad(jax.nn.sparse_plus))(points).tolist()
# the reverse over forward: the cotangent -1.987 of the jvp, pulled back to the tangent, is -1.987 f'(x)
def of_tangent(x):
    return jax.grad(lambda t: -1.987 * jax.jvp(jax.nn.sparse_plus, (x,), (t,))[1])(1.0)


pulled = jax.vmap(of_tangent)(points).tolist()
print(f"jax sparse_plus derivative at +-inf: {first} (limits [1.0, 0.0]); reverse over forward: {pulled} (limits [-1.987, -0.0])")
