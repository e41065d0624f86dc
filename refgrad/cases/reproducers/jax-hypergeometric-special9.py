"""jax.scipy.special.hyp1f1 and hyp2f1 (JAX 0.10.2) against mpmath: the value and derivatives of
the series JAX sums, where they leave the mathematics (each line one known entry):

* A: the parameter derivative Σ term_k·(ψ(a + k) - ψ(a)) at a nonpositive integer a: ψ(a) is a
  pole, nan·0 = nan, where the derivative of the entire function is finite;
* B: 1F1 at x < 0: the Taylor series (terms up to e^|x|) cancels to the small result, and at
  x <= -100 JAX takes the expansion of x -> +inf (Γ(b)/Γ(a) e^x x^(a-b)), not -inf's;
* C: the second parameter derivatives: forward mode through the while_loop of the termwise
  digamma series, tens of ulps in float64;
* D: 2F1 at x <= -1 sums its Taylor series, which converges slowly near -1 (250 terms at most)
  and diverges past it (no transformation to 1/(1 - x));
* F: the parameter derivative's stopping test compares the plain term with the derivative's sum:
  at a tiny a (ψ(a + k) - ψ(a) ~ 1/a) it stops after the first term;
* G: XLA:CPU reads subnormal inputs as 0 (denormals-are-zero);
* E: at a NaN argument the derivative series' stopping test (a comparison with nan, false) ends
  the loop before its first term: the derivative is its initial 0;
* H: in bfloat16 and float16 the series and digamma differences are summed in the input dtype."""

import jax
import jax.numpy as jnp
import mpmath
from jax.scipy.special import hyp1f1, hyp2f1

jax.config.update("jax_enable_x64", True)
mpmath.mp.dps = 50


def exact(f, *args, which=None, order=1):
    if which is None:
        return float(f(*args))
    point = list(args)
    return float(mpmath.diff(lambda t: f(*(point[:which] + [t] + point[which + 1 :])), point[which], order))


print("A: d/da hyp1f1(-1, 0.5, 2): jax", float(jax.grad(hyp1f1, 0)(-1.0, 0.5, 2.0)), "exact",
      exact(mpmath.hyp1f1, -1, 0.5, 2.0, which=0))  # fmt: skip
print("A: d/da hyp2f1(-1, 0.5, 1.5, 0.25): jax", float(jax.grad(hyp2f1, 0)(-1.0, 0.5, 1.5, 0.25)), "exact",
      exact(mpmath.hyp2f1, -1, 0.5, 1.5, 0.25, which=0))  # fmt: skip
print("B: hyp1f1(0.5, 1.5, -150): jax", float(hyp1f1(0.5, 1.5, -150.0)), "exact", exact(mpmath.hyp1f1, 0.5, 1.5, -150))
print("B: hyp1f1(0.5, 1.5, -20) float32: jax", float(hyp1f1(*(jnp.float32(v) for v in (0.5, 1.5, -20.0)))), "exact",
      exact(mpmath.hyp1f1, 0.5, 1.5, -20))  # fmt: skip
p = [0.1867683985737898, 0.08106234778504615, 0.1941729795670103, -0.5136169705681936]
second = jax.jacfwd(lambda b: jax.grad(hyp2f1, 1)(p[0], b, p[2], p[3]))(p[1])
print("C: d2/db2 hyp2f1(0.18677, 0.08106, 0.19417, -0.51362): jax", repr(float(second)), "exact",
      repr(exact(mpmath.hyp2f1, *p, which=1, order=2)))  # fmt: skip
print("D: hyp2f1(0.5, 1.5, 2.5, -3): jax", float(hyp2f1(0.5, 1.5, 2.5, -3.0)), "exact", exact(mpmath.hyp2f1, 0.5, 1.5, 2.5, -3))
print("D: hyp2f1(0.5, 1.5, 2.5, -0.9999962) float32: jax",
      float(hyp2f1(*(jnp.float32(v) for v in (0.5, 1.5, 2.5, -0.9999962)))), "exact",
      exact(mpmath.hyp2f1, 0.5, 1.5, 2.5, float(jnp.float32(-0.9999962))))  # fmt: skip
a, b, x = 4.1744267899323335e-308, 1.1251381589372827e-307, 0.5478656845236132
print("F: d/da hyp1f1(4.17e-308, 1.13e-307, 0.548): jax", float(jax.grad(hyp1f1, 0)(a, b, x)), "exact",
      float(mpmath.expm1(x) / b))  # fmt: skip
a, b, x = 7.36108620874554e-309, 3.304915685136464e-308, 1.872724186564862e-308
print("G: d/dx hyp1f1(7.36e-309, 3.30e-308, 1.87e-308): jax", float(jax.grad(hyp1f1, 2)(a, b, x)), "exact",
      exact(lambda *v: mpmath.hyp1f1(*v), a, b, x, which=2))  # fmt: skip
h = [jnp.bfloat16(v) for v in (0.6328125, 0.7265625, 1.5078125, 0.80859375)]
print("H: d/db hyp2f1(0.6328, 0.7266, 1.508, 0.8086) bfloat16: jax", float(jax.grad(hyp2f1, 1)(*h)), "exact",
      exact(mpmath.hyp2f1, *(float(v) for v in h), which=1))  # fmt: skip
print("E: d/da hyp1f1(nan, 0.5, 1): jax", float(jax.grad(hyp1f1, 0)(float("nan"), 0.5, 1.0)), "exact nan;",
      "d/db hyp1f1(0.5, nan, 1): jax", float(jax.grad(hyp1f1, 1)(0.5, float("nan"), 1.0)))  # fmt: skip
