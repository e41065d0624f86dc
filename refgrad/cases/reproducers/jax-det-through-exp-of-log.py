"""jnp.linalg.det of a 1x1 matrix, or of an n x n one with n >= 4, is sign * exp(logabsdet) (JAX's
_det; only 2x2 and 3x3 have their own formulas): the rounding of log|det| (absolute, about
u * |ln|det||) becomes a relative error of exp, so the determinant is off by about |ln|det|| ulps
where an LU product (PyTorch, the reference's bound) is off by about n ulps. Prints JAX's value
next to the exact one (the matrices are diagonal: det is the product of the diagonal, exact here)."""

import jax

jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

one = jnp.array([[-4000.0]], jnp.bfloat16)
print(f"bfloat16: det([[-4000]]) = {float(jnp.linalg.det(one))!r} (exact -4000.0)")
one = jnp.array([[-4000.0]], jnp.float32)
four = jnp.diag(jnp.array([4000.0, 1.0, 1.0, -1.0], jnp.float32))
print(
    f"float32: det([[-4000]]) = {float(jnp.linalg.det(one))!r}, "
    f"det(diag(4000, 1, 1, -1)) = {float(jnp.linalg.det(four))!r} (exact -4000.0)"
)
