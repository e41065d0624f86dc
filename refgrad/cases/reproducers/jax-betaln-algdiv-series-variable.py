"""jax.scipy.special.betaln (and beta = exp(betaln)) is off by up to ~1e-7 in float64 where the
larger argument is >= 8 (JAX 0.10.2).

Its algdiv (jax._src.third_party.scipy.betaln, from scipy's cdflib algdiv.f) always orders a <= b
and then sets x = h / (1 + h), h = a / b, where cdflib's a <= b branch has x = 1 / (1 + h) (h / (1 + h)
belongs to its a > b branch): the sums s_n = (1 - x^n) / (1 - x) of the Stirling correction
del(b) - del(a + b) are wrong by O(1/b^3). Below, JAX's value, the same algorithm with cdflib's x,
and mpmath (40 digits)."""

import math

import jax
import mpmath

jax.config.update("jax_enable_x64", True)
from jax.scipy.special import beta, betaln  # noqa: E402 (after jax_enable_x64)

mpmath.mp.dps = 40


def betaln_cdflib(a, b):
    """JAX's large-b branch (lgamma(a) + algdiv(a, b)) with cdflib's x = 1 / (1 + h) for a <= b."""
    c0, c1, c2 = 0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03
    c3, c4, c5 = -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02
    h = a / b
    c, x, d = h / (1 + h), 1 / (1 + h), b + (a - 0.5)
    x2 = x * x
    s3 = 1 + (x + x2)
    s5 = 1 + (x + x2 * s3)
    s7 = 1 + (x + x2 * s5)
    s9 = 1 + (x + x2 * s7)
    s11 = 1 + (x + x2 * s9)
    t = (1 / b) ** 2
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w *= c / b
    u, v = d * math.log1p(a / b), a * (math.log(b) - 1)
    return math.lgamma(a) + ((w - v) - u if u <= v else (w - u) - v)


for a, b in ((9.0, 9.556), (9.556, 48.76)):
    exact = mpmath.log(mpmath.beta(a, b))
    print(f"betaln({a}, {b}): jax {float(betaln(a, b))!r} cdflib-x {betaln_cdflib(a, b)!r} exact {float(exact)!r}")
print(f"beta(48.76, 9.556): jax {float(beta(48.76, 9.556))!r} exact {float(mpmath.beta(48.76, 9.556))!r}")
