"""Departures reached by `--domains whole --draws seeded` over the domain-declaring records
(wholedom3): each part prints the framework's answer next to the exact one."""

import time

import jax
import jax.numpy as jnp
from jax.scipy import special as js

jax.config.update("jax_enable_x64", True)


def seconds(f, x):
    f(x).block_until_ready()  # compiled for this shape, and warm
    start = time.perf_counter()
    f(x).block_until_ready()
    return time.perf_counter() - start


# JAX's Ei on an array: jnp.piecewise (lax.switch under jnp.vectorize's vmap) evaluates every branch
# on every element, so a negative x close to 0 also runs Ei's x > 0 branches and exp1's continued
# fraction (Cephes expn, meant for x > 1) at -x, whose while_loop takes about 1/|x| steps to meet its
# stopping test; alone (a scalar, or a size-1 array, which jnp.vectorize squeezes) only the series runs.
scalar = seconds(js.expi, jnp.float64(-1e-4))
small = seconds(js.expi, jnp.array([-1e-3, -1e-3]))
smaller = seconds(js.expi, jnp.array([-1e-4, -1e-4]))
print(f"jax expi float64 at [-1e-3, -1e-3]: {small:.2g} s, at [-1e-4, -1e-4]: {smaller:.2g} s, at -1e-4 alone: {scalar:.1g} s")
print(f"ten times closer to 0, over 5 times slower: {smaller > 5 * small}; the pair over 100 times the scalar: {smaller > 100 * scalar}")
print(f"Ei(-1e-4) = {float(js.expi(jnp.float64(-1e-4))):.10g}, exact -8.633224705 (mpmath); at -2^-52 (4.5e11 times closer) some 1e12 s")
