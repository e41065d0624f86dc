"""jax.grad(jnp.linalg.det) of a 0x0 matrix raises; the determinant of the empty matrix is 1 and
its gradient is the empty matrix (torch.func.grad(torch.linalg.det) returns it)."""
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
print("det", float(jnp.linalg.det(jnp.zeros((0, 0)))))
try:
    print("grad shape", jax.grad(jnp.linalg.det)(jnp.zeros((0, 0))).shape)
except IndexError as exc:
    print("grad raises", type(exc).__name__, exc)
