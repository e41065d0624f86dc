"""jax.scipy.special.hyp1f1 at x >= 100 (JAX 0.10.2) against mpmath: for |x| >= 100 JAX evaluates
the leading expansion of x -> +inf, Γ(b)/Γ(a)·e^x·x^(a-b)·Σ_k (b - a)_k (1 - a)_k / (k! x^k), a
divergent series summed until its term is below eps relative (at most 250 terms), whatever a and b:

* L: float64, a parameter not small beside x: the terms (b - a + k)(1 - a + k)/((k + 1) x) grow
  before they shrink (the smallest term far above eps), and the recessive part
  Γ(b)/Γ(b - a)·(-x)^(-a)·Σ..., of relative size Γ(a)/Γ(b - a)·x^(b - 2a)·e^(-x), is left out;
* S: float32 (float16, bfloat16 likewise): e^x overflows at x >= 100 (float32's limit is
  e^88.72), so the result is ±inf (nan where x^(a-b) underflows) wherever 1F1 is finite;
* T: the parameter derivatives sum the Taylor series Σ term_k·(ψ(a + k) - ψ(a)) (for b,
  ψ(b) - ψ(b + k)) at every x, no x >= 100 branch, and stop after 250 terms: from about x = 150
  the terms x^k/k! are not yet below eps there (x^250/250!/e^x is 3e-14 at 150, 1e-4 at 200);
* the control: small parameters at x = 100, within a few ulps."""

import jax
import jax.numpy as jnp
import mpmath
from jax.scipy.special import hyp1f1

jax.config.update("jax_enable_x64", True)
mpmath.mp.dps = 50


def line(tag, a, b, x, dtype=jnp.float64):
    got = float(hyp1f1(*(jnp.asarray(v, dtype) for v in (a, b, x))))
    a, b, x = (float(jnp.asarray(v, dtype)) for v in (a, b, x))  # the arguments as the dtype holds them
    exact = float(mpmath.hyp1f1(a, b, x))
    ulps = abs(got - exact) / (abs(exact) * float(jnp.finfo(dtype).eps)) if exact else float("inf")
    print(f"{tag}: hyp1f1({a:.7g}, {b:.7g}, {x:.7g}) {jnp.dtype(dtype).name}: jax {got:.6g} exact {exact:.6g} ({ulps:.3g} ulps)")


print("jax", jax.__version__)
# the seeded run at seed 1, hyp1f1-28584e5079ea (vmap float64, values 'large')
line("L", 28.56175248129361, 157.48333015127362, 117.20819161144931)
line("L", 36.76327855755904, 85.50013161645974, 124.5569741086521)  # hyp1f1-1ca730e1dcca
line("L", 1.0, 50.0, 100.0)  # the series terminates at once: only the recessive part is missing
line("L", -12.5, 2.0, 100.0)  # a negative a: the terms grow first
line("S", 0.5, 5.5, 100.0, jnp.float32)
line("S", -2.5, 0.5, 100.0, jnp.float32)
for a, b, x in ((0.5, 1.5, 200.0), (2.0, 3.0, 250.0)):
    got = float(jax.grad(hyp1f1, 0)(a, b, x))
    exact = float(mpmath.diff(lambda t: mpmath.hyp1f1(t, b, x), a))
    print(f"T: d/da hyp1f1({a:g}, {b:g}, {x:g}) float64: jax {got:.6g} exact {exact:.6g} (relative {abs(got - exact) / abs(exact):.2g})")
line("control", 0.5, 1.5, 100.0)
