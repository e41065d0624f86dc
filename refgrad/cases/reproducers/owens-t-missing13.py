"""What `refgrad run --ops owens_t --known builtin` (missing13) reached that no earlier entry
described: JAX's owens_t returns float64 for float32, float16 and bfloat16 arguments under
jax_enable_x64 (its 13-point quadrature's float64 NumPy nodes and weights promote the result), so
a VJP with a cotangent of the arguments' dtype raises."""

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

for dtype in (jnp.float32, jnp.float16, jnp.bfloat16):
    h, a = jnp.asarray(0.5, dtype), jnp.asarray(0.75, dtype)
    y, vjp = jax.vjp(jax.scipy.special.owens_t, h, a)
    try:
        vjp(jnp.asarray(1.0, dtype))
        outcome = "vjp ran"
    except ValueError as exc:
        outcome = f"vjp raised ValueError: {str(exc).splitlines()[0][:60]}"
    print(f"jax owens_t({jnp.dtype(dtype).name}) returns {y.dtype}; {outcome}")
