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

# JAX's float16 sqrt'' (forward over forward) at x = 5572: its jvp rule's chain forms
# -(t2 * 0.5 / sqrt(x)) * 0.5 * sqrt(x)^-2 = -4.47e-7 before multiplying by t1, a float16 subnormal
# (below 6.1e-5, spacing 2^-24 = 5.96e-8) whose rounding (6.7% of it) t1 = -4.47 scales up.
x, t1, t2 = jnp.float16(5572.0), jnp.float16(-4.47265625), jnp.float16(0.74267578125)
second = jax.jvp(lambda q: jax.jvp(jnp.sqrt, (q,), (t1,))[1], (x,), (t2,))[1]
exact = -float(t1) * float(t2) / (4 * float(x) ** 1.5)  # float64: exact to 1e-15 here
print(f"jax sqrt jvp_jvp float16 at 5572, tangents -4.4727, 0.74268: {float(second):.4g} exact {exact:.6g}")
