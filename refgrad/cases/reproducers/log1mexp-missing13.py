"""What `refgrad run --ops log1mexp --draws seeded --seed 1 --known builtin` (missing13) reached that
no earlier entry described; each line prints JAX's derivatives beside the exact ones (mpmath)."""

import jax
import jax.numpy as jnp
import mpmath

jax.config.update("jax_enable_x64", True)

# jax.nn.log1mexp's custom JVP is g / expm1(x); its derivative, -g e^x / expm1(x)^2, squares
# expm1(x) and overflows where e^(2x) passes the dtype's largest number, long before the exact
# second derivative -e^-x / (1 - e^-x)^2 underflows: -0 there, and nan (inf / inf) once expm1(x)
# itself overflows. In float16 the first derivative 1 / expm1(x) is 0 once expm1(x) overflows
# (x > 11.09), where the exact e^-x is still a float16 subnormal.
first = jax.vmap(jax.grad(jax.nn.log1mexp))
second = jax.vmap(jax.grad(jax.grad(jax.nn.log1mexp)))


def exact(x, order):
    e = mpmath.exp(-mpmath.mpf(x))
    return float(e / (1 - e) if order == 1 else -e / (1 - e) ** 2)


for dtype, points in [("float64", [355.0, 537.75, 710.0]), ("float32", [44.5, 89.0]), ("float16", [5.6015625, 14.5625])]:
    x = jnp.array(points, dtype)
    d1, d2 = first(x).tolist(), second(x).tolist()
    print(f"jax log1mexp {dtype} at {points}: d/dx {d1} exact {[exact(p, 1) for p in points]}; "
          f"d2/dx2 {d2} exact {[exact(p, 2) for p in points]}")

# Above the split log 2 jax.nn.log1mexp is log1p(-e^-x), and XLA's float64 log1p is up to ~120 ulps
# off for arguments in about (-0.45, -0.35) (x in (0.80, 1.05)); float32 stays within 2 ulps
x = 0.8870268224016787
value = jax.nn.log1mexp(jnp.float64(x)).tolist()
t = float(jnp.exp(-x))
print(f"jax log1mexp({x}) float64: {value!r} exact {float(mpmath.log1p(-mpmath.exp(-mpmath.mpf(x)))):.16g}; "
      f"jnp.log1p({-t!r}) {jnp.log1p(-t).tolist()!r} exact {float(mpmath.log1p(-mpmath.mpf(t))):.16g}")
