"""JAX's derivative of E_1 (and of E_2's second step, E_0) at x = -0 has the wrong sign: its custom
jvp is E_n' = -E_{n-1} with E_0(x) = e^-x / x evaluated as written, so E_0(-0) = 1 / (-0) = -inf and
E_1'(-0) = +inf. E_n is real on x >= 0 only (nan for x < 0 in JAX, scipy and the reference), and
-0 is the point 0 of that domain, where E_0(0) = lim_{x->0+} e^-x / x = +inf and E_1'(0) = -inf;
the reverse-mode gradient with a cotangent g is g * E_1'(0), so a negative cotangent gives +inf."""

import jax
import jax.numpy as jnp
import mpmath
from jax.scipy import special as js

jax.config.update("jax_enable_x64", True)

zeros = jnp.array([0.0, -0.0])
# the one-sided limit from the domain, x -> 0+: E_1'(x) = -e^-x / x -> -inf
near = -mpmath.exp(-mpmath.mpf("1e-300")) / mpmath.mpf("1e-300")
print(f"jax grad(exp1) at [+0, -0]: {jax.vmap(jax.grad(js.exp1))(zeros)} exact: [-inf, -inf] (E_1'(1e-300) = {float(near):.4g})")
print(f"jax expn(0, [+0, -0]): {js.expn(0, zeros)} exact: [inf, inf]")
_, vjp = jax.vjp(js.exp1, jnp.array([-0.0], jnp.bfloat16))
print(f"jax vjp of exp1 bfloat16 at -0, cotangent -1.4609375: {vjp(jnp.array([-1.4609375], jnp.bfloat16))[0]} exact: [inf]")
