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
# A = [[1, 1000], [0, 0.001]] and tc = [1, 1] is [1, -999000] (the second overflows to -inf in float16)
def triangular_forward_over_reverse(dtype):
    a = jnp.array([[1.0, 1000.0], [0.0, 0.001]], dtype)
    b = c = jnp.ones((2, 1), dtype)

    def grad_b(a, b, c):
        return jax.vjp(lambda a, b: jsl.solve_triangular(a, b, lower=False), a, b)[1](c)[1]

    tangents = (jnp.zeros_like(a), jnp.zeros_like(b), jnp.ones_like(c))
    return np.asarray(jax.jvp(grad_b, (a, b, c), tangents)[1], np.float64).ravel().tolist()


print(
    f"jax solve_triangular float16 forward over reverse: {triangular_forward_over_reverse(jnp.float16)},"
    f" float32 {triangular_forward_over_reverse(jnp.float32)}, exact [1.0, -999000.0] (past float16's 65504)"
)

import torch  # noqa: E402 (after the JAX lines, which need only jax)

# PyTorch's reverse over forward of the SVD: the gradient with respect to the tangent of <c, JVP(x)(t)>
# is the first-order VJP J^T c, and for the record's U * U * S of a 1 x 2 matrix (U = -1, its tangent
# exactly 0) it is c * x / |x|; torch's first-order VJP gives it, its vjp of the jvp does not
a = torch.tensor([[1.0431238412857056, -34.816509246826172]], dtype=torch.float32)
t = torch.tensor([[1.0, 0.6990072131156921]], dtype=torch.float32)
c = torch.tensor(-0.8474748730659485, dtype=torch.float32)


def u_u_s(q):
    u, s, _ = torch.linalg.svd(q, full_matrices=False)
    return (u * u * s.unsqueeze(-2)).reshape(())


def jvp_of(q, tq):
    return torch.func.jvp(u_u_s, (q,), (tq,))[1]


reverse_over_forward = torch.func.vjp(jvp_of, a, t)[1](c)[1]
first_order = torch.func.vjp(u_u_s, a)[1](c)[0]
exact = -0.8474748730659485 * a.double() / torch.linalg.vector_norm(a.double())
print(f"torch svd float32 reverse over forward, tangent part: {reverse_over_forward[0, 1].item():.7f},"
      f" first-order vjp {first_order[0, 1].item():.7f}, exact {exact[0, 1].item():.7f}")
