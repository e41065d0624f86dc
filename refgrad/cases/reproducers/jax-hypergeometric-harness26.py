"""jax.scipy.special.hyp2f1 (JAX 0.10.2) against mpmath, between float64's threshold of the Taylor
series' truncation, -2^(-53/250) = -0.8633, and each lower dtype's, -u^(1/250) (float32 -0.9356,
float16 -0.9699, bfloat16 -0.9780), where |x|^250 is still below the dtype's unit roundoff u, so
the series' truncation is not what departs, and at a negative integer upper parameter b:

* N: at a nonpositive integer a (a terminating series) the parameter derivative's digamma series
  Σ term_k (ψ(a + k) - ψ(a)) meets the pole ψ(a): nan, where the derivative is finite;
* B: the same at a negative integer b, 2F1's other upper parameter (1F1's b is a lower one, a pole);
* R: the second derivative in b, forward mode through the digamma series, carries the series'
  rounding: tens to hundreds of ulps in each dtype."""

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
from jax.scipy.special import hyp2f1

jax.config.update("jax_enable_x64", True)
mpmath.mp.dps = 40
DTYPES = (jnp.float64, jnp.float32, jnp.float16, jnp.bfloat16)


def ulps(got, exact, dtype):
    exponent = np.floor(np.log2(abs(exact)))
    return abs(got - exact) / 2.0 ** (exponent - (jnp.finfo(dtype).nmant))


def cast(dtype, *values):
    return [jnp.asarray(v, dtype) for v in values]


for dtype in DTYPES[1:]:
    b, c, x = cast(dtype, 0.5, 1.5, -0.9)
    got = jax.grad(lambda a, b=b, c=c, x=x: hyp2f1(a, b, c, x))(jnp.asarray(-1.0, dtype))
    exact = mpmath.diff(lambda a, b=float(b), c=float(c), x=float(x): mpmath.hyp2f1(a, b, c, x), -1)
    print(
        f"N: d/da hyp2f1(-1, 0.5, 1.5, -0.9) {jnp.dtype(dtype).name}: jax {float(got)} exact {float(exact):.5g}"
    )

a, c, x = cast(jnp.float64, 0.5, 1.5, 0.25)
got = jax.grad(lambda b: hyp2f1(a, b, c, x))(jnp.asarray(-1.0))
exact = mpmath.diff(lambda b: mpmath.hyp2f1(0.5, b, 1.5, 0.25), -1)
print(f"B: d/db hyp2f1(0.5, -1, 1.5, 0.25) float64: jax {float(got)} exact {float(exact):.5g}")

for dtype in DTYPES[1:]:
    a, c, x = cast(dtype, 0.18677, 0.19417, -0.9)
    b = jnp.asarray(0.08106, dtype)
    got = float(jax.jacfwd(jax.jacfwd(lambda b, a=a, c=c, x=x: hyp2f1(a, b, c, x)))(b))
    exact = mpmath.diff(lambda t, a=float(a), c=float(c), x=float(x): mpmath.hyp2f1(a, t, c, x), float(b), 2)
    exact = float(exact)
    print(f"R: d2/db2 hyp2f1(0.18677, 0.08106, 0.19417, -0.9) {jnp.dtype(dtype).name}: jax {got:.6g} "
          f"exact {exact:.6g}, {ulps(got, exact, dtype):.0f} ulps")  # fmt: skip
