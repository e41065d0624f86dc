"""jax.scipy.special.bessel_jn (a backward recurrence from order v + n_iter, n_iter = 50 by default)
is nan at x = 0 and at tiny |x| (J0(0) = 1, J1(0) = 0), diverges for |x| beyond about n_iter (J0(1e5)
= -26 where |J0| <= 1; its documentation asks for n_iter larger than |x|), is nan in float32,
float16 and bfloat16 wherever the recurrence overflows, and loses hundreds of ulps in float64 in the
bulk; its derivatives (autodiff of the recurrence) inherit all of it. Prints the values at 0, 1e-300
and 1e5."""

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special as s  # noqa: E402

x = jnp.array([0.0, 1e-300, 1e5], jnp.float64)
j0, j1 = s.bessel_jn(x, v=1)
print(f"bessel_jn J0 at [0, 1e-300, 1e5]: {[float(v) for v in j0]} (exact: 1, 1, -0.0017192)")
print(f"bessel_jn J1 at [0, 1e-300, 1e5]: {[float(v) for v in j1]} (exact: 0, 5e-301, 0.0018468)")
