"""Departures `refgrad run --ops <family> --draws seeded --seed 2 --known builtin` reached in the families
seedsL ran at seed 2 (linalg_solve, losses, distance, misc, sorting, masked, products, linalg_eig,
linalg_decomp, fft, nn, sampling): each line prints what the framework computes next to the exact value."""

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402 (after the configuration)
import jax.scipy.linalg as jsl  # noqa: E402
import numpy as np  # noqa: E402


# JAX's float16 triangular solve spreads the nan of an overflowing component into representable ones,
# in the second-order checks too: the forward over reverse of the cotangent of b is A^-T tc, which for
# A = [[1, 1000], [0, 0.001]] and tc = [1, 1] is [1, -998999] (the second overflows to -inf in float16)
def triangular_forward_over_reverse(dtype):
    a = jnp.array([[1.0, 1000.0], [0.0, 0.001]], dtype)
    b = c = jnp.ones((2, 1), dtype)

    def grad_b(a, b, c):
        return jax.vjp(lambda a, b: jsl.solve_triangular(a, b, lower=False), a, b)[1](c)[1]

    tangents = (jnp.zeros_like(a), jnp.zeros_like(b), jnp.ones_like(c))
    return np.asarray(jax.jvp(grad_b, (a, b, c), tangents)[1], np.float64).ravel().tolist()


print(
    f"jax solve_triangular float16 forward over reverse: {triangular_forward_over_reverse(jnp.float16)},"
    f" float32 {triangular_forward_over_reverse(jnp.float32)}, exact [1.0, -998999.0]"
)
