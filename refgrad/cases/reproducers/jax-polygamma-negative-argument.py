"""JAX's derivative of digamma (polygamma(1, x), also lgamma's second derivative) at negative
non-integer x: jax.scipy.special.polygamma goes through the Hurwitz zeta, which is not the
polygamma function for q < 0. The exact value is mpmath.psi(1, x) (PyTorch and TensorFlow's float64
agree with it to 1e-11)."""
import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special as jss  # noqa: E402

x = jnp.float64(-10.3)
got = float(jax.grad(jss.digamma)(x))
exact = 14.986887065722637  # mpmath.psi(1, -10.3)
print("jax.grad(digamma)(-10.3) =", got, "exact", exact)
print("polygamma(1, -10.3) =", float(jss.polygamma(1, x)))
print("wrong:", abs(got - exact) > 1e-6 * exact)
