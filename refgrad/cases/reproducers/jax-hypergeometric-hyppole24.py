"""jax.scipy.special.hyp1f1 and hyp2f1 (JAX 0.10.2) against mpmath, in each dtype:

* T: 2F1 at x <= -1 sums at most 250 terms of its Taylor series in the input dtype: past -1 it
  diverges, in float16 and bfloat16 as in float64 (the float64 and float32 lines are special9's
  D); the threshold of each dtype is -u^(1/250), u its unit roundoff, where |x|^250 reaches u;
* P: 1F1 at a negative integer b = -n, a pole (no upper parameter terminates the series before
  it): the series' loop stops once |term_k| <= eps·|sum|, and where that happens before the term
  k = n + 1, whose factor 1/(b + n) is 1/0, JAX returns the partial sum, a finite number, where
  the function has no value (mpmath: a pole; just off it the value is huge, of either sign);
  otherwise the 1/0 reaches the sum and JAX gives an infinity or nan."""

import jax
import jax.numpy as jnp
import mpmath
from jax.scipy.special import hyp1f1, hyp2f1

jax.config.update("jax_enable_x64", True)
mpmath.mp.dps = 50

for name, p in (("float64", 53), ("float32", 24), ("float16", 11), ("bfloat16", 8)):
    print(f"T: threshold {name}: -2^(-{p}/250) = {-(2.0 ** (-p / 250)):.4f}")
for dtype in (jnp.float16, jnp.bfloat16):
    got = hyp2f1(*(jnp.asarray(v, dtype) for v in (0.5, 1.5, 2.5, -3.0)))
    print(f"T: hyp2f1(0.5, 1.5, 2.5, -3) {jnp.dtype(dtype).name}: jax {float(got)} exact",
          float(mpmath.hyp2f1(0.5, 1.5, 2.5, -3)))  # fmt: skip

# 1F1(a; -1; x): the term k = 2 has the factor 1/(b + 1); the term k = 1 is a·x/b
for a, x, dtype in ((4.76837158203125e-07, 0.037706412, jnp.float32), (1e-9, 0.5, jnp.float32),
                    (-0.76199156, -0.33637765, jnp.bfloat16), (4.76837158203125e-07, 0.037706412, jnp.float64)):  # fmt: skip
    b = -2.0 if dtype == jnp.bfloat16 else -1.0
    got = hyp1f1(*(jnp.asarray(v, dtype) for v in (a, b, x)))
    a_, x_ = (float(jnp.asarray(v, dtype)) for v in (a, x))
    near = [float(mpmath.hyp1f1(a_, b + s, x_)) for s in (-1e-12, 1e-12)]
    print(f"P: hyp1f1({a_:.6g}, {b}, {x_:.6g}) {jnp.dtype(dtype).name}: jax {float(got)} exact pole "
          f"(at b -/+ 1e-12: {near[0]:.3g}, {near[1]:.3g})")
