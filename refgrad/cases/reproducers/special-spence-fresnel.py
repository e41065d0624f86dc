"""JAX's derivatives of Spence's function, the Fresnel integrals and the sine/cosine integrals
(conformance records spence, fresnel_sin, fresnel_cos, sici_si, sici_ci;
reference/ops/rules/special_spence.py, special_fresnel.py). JAX has no derivative rule for
jax.scipy.special.spence and differentiates its Cephes algorithm (a piecewise rational fit); its
fresnel's jvp reads cos(πx²/2) from sincospisquaredhalf, whose cos(πr) is -sin(π(r - 1/2)), so the
second derivative of C reads the rounding of r - 1/2 near 0, and whose phase reduction rounds in
half precision; its sici's jvp (sinc(x/π), cos x/x) differentiated again overflows or divides 0 by 0
at 0 and tiny x. Prints JAX's value next to the exact one (mpmath)."""

import jax
import jax.numpy as jnp
import mpmath
from jax.scipy.special import fresnel, sici, spence

jax.config.update("jax_enable_x64", True)

for x in (2.0, 1.0, 0.5):
    exact = mpmath.log(x) / (1 - x) if x != 1 else -1
    print(f"jax spence'({x}): {float(jax.grad(spence)(x))!r} exact: {float(exact)!r}")
x = 1e-4
exact = -mpmath.pi * x * mpmath.sin(mpmath.pi * mpmath.mpf(x) ** 2 / 2)
got = jax.grad(jax.grad(lambda t: fresnel(t)[1]))(x)
print(f"jax fresnel C''({x}): {float(got)!r} exact: {float(exact)!r}")

# half precision: the phase reduction s·(x - s/2) (s = x mod 2) rounds in bfloat16/float16 itself
x = 100.5  # exact in bfloat16; S'(x) = sin(π·5050.125) = sin(π/8)
got = jax.grad(lambda t: fresnel(t)[0])(jnp.bfloat16(x))
print(f"jax fresnel S'({x}) bfloat16: {float(got)!r} exact: {float(mpmath.sinpi(mpmath.mpf(x) ** 2 / 2))!r}")
# Si'' = d sinc: JAX's sinc(x/π) differentiated is cos x/x - sin x/x², which overflows at tiny x
x = 1e-30
got = jax.grad(jax.grad(lambda t: sici(t)[0]))(jnp.float32(x))
print(f"jax sici Si''({x}) float32: {float(got)!r} exact: {-x / 3!r}")
# Ci'' = -sin x/x - cos x/x² at 0: -0/0 - 1/0 is nan where the limit is -inf
got = jax.grad(jax.grad(lambda t: sici(t)[1]))(jnp.float32(0.0))
print(f"jax sici Ci''(0.0) float32: {float(got)!r} exact: -inf")
