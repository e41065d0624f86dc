"""jax.scipy.special.exp1 (expn(1, x)) in float16 is nan at some x in (1, 2.2] (JAX 0.10.2).

For x > 1 expn runs Cephes' continued fraction (_expn2) and rescales its numerators and
denominators by BIG = 1.44e17 once |p_k| > BIG; in float16 BIG rounds to inf, so the test never
fires, p_k and q_k overflow float16's 65504 before the fraction converges to float16's eps, and
p_k / q_k = inf / inf = nan. float32 converges; the exact E_1 is mpmath's."""

import jax.numpy as jnp
import mpmath
import numpy as np
from jax.scipy.special import exp1

x = np.float16(1.40625)
with np.errstate(over="ignore"):
    print("float16 BIG:", np.float16(1.44115188075855872e17))
print(f"jax exp1(float16 {x}): {exp1(jnp.float16(x))}, float32: {float(exp1(jnp.float32(x))):.6f}, "
      f"exact {float(mpmath.e1(float(x))):.6f}")
