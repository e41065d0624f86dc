"""JAX's parameter derivatives of hyp1f1 and hyp2f1 lose ~1/|p| ulps at a parameter p near 0
(JAX 0.10.2).

jax.scipy.special's _hyp1f1_a_derivative (and the b, and 2F1's a, b, c ones) sums
S' = Σ t_k (ψ(a + k) - ψ(a)) and stops where |t_k| / |S'| <= eps, comparing the plain term t_k with
the derivative's sum; the tail it leaves is about t_k·d_k·r/(1 - r) (d_k = ψ(a + k) - ψ(a), r the
terms' ratio), i.e. eps·|d_k|·r/(1 - r) relative to S'. r/(1 - r) is what the derivative's own
condition number in x already carries; |d_k| ~ 1/|p| as p -> 0 is not. Below: float32 d/da and d/db
of hyp1f1 at the campaign's point (a = 0.01314, b = 0.04417, x = 0.7198) and at a = b = 0.5, in
ulps of the exact derivative (mpmath's numerical differentiation at 30 digits)."""

import jax
import mpmath
import numpy as np
from jax.scipy.special import hyp1f1

mpmath.mp.dps = 30


def ulps(got, exact):
    return abs(float(got) - float(exact)) / float(np.spacing(np.float32(abs(float(exact)))))


for a, b, x in ((0.0131410928, 0.0441660993, 0.7197765112), (0.5, 0.5, 0.7197765112)):
    a, b, x = np.float32(a), np.float32(b), np.float32(x)
    exact_a = mpmath.diff(lambda t: mpmath.hyp1f1(t, float(b), float(x)), float(a))
    exact_b = mpmath.diff(lambda t: mpmath.hyp1f1(float(a), t, float(x)), float(b))
    got_a = jax.grad(hyp1f1, argnums=0)(a, b, x)
    got_b = jax.grad(hyp1f1, argnums=1)(a, b, x)
    print(f"float32 hyp1f1 at a = {a:.4g}, b = {b:.4g}: d/da {ulps(got_a, exact_a):.0f} ulps, "
          f"d/db {ulps(got_b, exact_b):.0f} ulps")
