"""acosh's branch cut is the real axis below 1; the sign of a zero imaginary part names the side
(C99's cacosh, NumPy, PyTorch, TensorFlow): acosh(-3 - 0j) = 1.7627 - pi j. JAX gives +pi j, and its
derivative there has the wrong sign: acosh'(z) = 1/(sqrt(z - 1) sqrt(z + 1)) is continuous across
the cut below -1, -0.3536 on both sides (PyTorch's torch.func.jvp, central differences at -3 +- 1e-9 j)."""

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

z = jnp.asarray([complex(-3, -0.0)])
print("jnp.arccosh(-3 - 0j) =", complex(jnp.arccosh(z)[0]), "(C99 and NumPy: 1.7627 - 3.1416j)")
print("jax.jvp tangent =", complex(jax.jvp(jnp.arccosh, (z,), (jnp.ones_like(z),))[1][0]), "(exact: -0.3536)")
