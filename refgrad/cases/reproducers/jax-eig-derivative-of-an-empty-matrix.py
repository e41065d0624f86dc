"""JAX's eigendecomposition derivatives raise on a 0 x 0 matrix, where the derivative is empty.

jax.lax.linalg.eig(x, enable_eigvec_derivs=True) of a 0 x 0 matrix returns empty eigenvalues and
eigenvectors, but its JVP (and so jax.grad, jax.vjp and every higher order through it) raises
ValueError from an argmin/argmax over the empty eigenvector dimension (the normalisation of the
eigenvector tangents). PyTorch's torch.linalg.eig backward returns the empty gradient, as the
mathematics does: a function of no entries has a derivative with no entries.
"""

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)


def f(x):
    w, v = jax.lax.linalg.eig(x, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    return jnp.real((v * jnp.conj(v) * w[..., None, :]).sum())


for dtype in (jnp.float64, jnp.complex128):
    x = jnp.zeros((0, 0), dtype)
    print(jnp.dtype(dtype).name, "forward:", f(x))
    try:
        g = jax.grad(f)(x)
        print(jnp.dtype(dtype).name, "grad: shape", g.shape)
    except Exception as e:
        print(jnp.dtype(dtype).name, "grad raises", type(e).__name__ + ":", str(e).splitlines()[0][:120])
