"""JAX's derivatives of hyp1f1 in b and of hyp2f1 in c lose ~p·ψ(p) ulps at a large lower
parameter p (JAX 0.10.2).

jax.scipy.special's _hyp1f1_b_derivative sums S' = Σ t_k (ψ(b) - ψ(b + k)) (2F1's c derivative
likewise) with each d_k = digamma(b) - digamma(b + k) the difference of two rounded digammas: its
absolute error is about |ψ(b)|·eps, while d_k itself is about k/b for k << b, so each term is off by
|ψ(b)|·b/k·eps relative; where the terms peak at a small k (a lower parameter large beside x) the sum
is off by that many ulps, in float64 as in float32. Below: d/db hyp1f1 at the campaign's point
(hyp1f1-1849db82eab3, seed 2: a = 6.914, b = 112.3, x = 44.86) and d/dc hyp2f1(1.5, 2, 100, 0.5), in
ulps of the exact derivative (mpmath's numerical differentiation at 30 digits)."""

import jax
import mpmath
import numpy as np
from jax.scipy.special import hyp1f1, hyp2f1

jax.config.update("jax_enable_x64", True)
mpmath.mp.dps = 30


def ulps(got, exact, dtype):
    return abs(float(got) - float(exact)) / float(np.spacing(dtype(abs(float(exact)))))


for dtype in (np.float32, np.float64):
    a, b, x = (dtype(v) for v in (6.913722038269043, 112.26864624023438, 44.859134674072266))
    exact_b = mpmath.diff(lambda t: mpmath.hyp1f1(float(a), t, float(x)), float(b))
    got_b = jax.grad(hyp1f1, argnums=1)(a, b, x)
    p = [dtype(v) for v in (1.5, 2.0, 100.0, 0.5)]
    exact_c = mpmath.diff(lambda t: mpmath.hyp2f1(float(p[0]), float(p[1]), t, float(p[3])), float(p[2]))
    got_c = jax.grad(hyp2f1, argnums=2)(*p)
    print(f"{dtype.__name__} d/db hyp1f1(6.914, 112.3, 44.86) {ulps(got_b, exact_b, dtype):.0f} ulps, "
          f"d/dc hyp2f1(1.5, 2, 100, 0.5) {ulps(got_c, exact_c, dtype):.0f} ulps")
