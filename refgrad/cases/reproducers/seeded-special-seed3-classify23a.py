"""Departures of the special family at seed 3 (`refgrad run --ops special --draws seeded --seed 3`,
classify23a): each line prints the framework's value next to the exact one (mpmath)."""

import subprocess
import sys

import jax
import jax.numpy as jnp
import mpmath
import tensorflow as tf
from jax.scipy import special as js

jax.config.update("jax_enable_x64", True)
mpmath.mp.dps = 40


def jvp_jvp(f, x, t1, t2):
    """d/ds JVP(x + s t2)(t1), as the conformance check forms it (forward over forward)."""
    return jax.jvp(lambda v: jax.jvp(f, (v,), (t1,))[1], (x,), (t2,))[1]


# JAX's float16 sici for |x| >= 8: its rational fits in z = 1/x^2 have constant terms 9.7e-14 and
# 3.1e-15, which round to 0 in float16 (smallest subnormal 6e-8), and every higher power of z
# underflows too, so f = 0/(x*0) and g = 0/0 are nan
x = 16.484375
si, ci = js.sici(jnp.float16(x))
print(f"jax sici({x}) float16: ({float(si)}, {float(ci)}) exact: ({float(mpmath.si(x)):.6g}, {float(mpmath.ci(x)):.6g})")

# JAX's Si'' = cos x/x - sin x/x^2 (autodiff of its jvp sinc(x/pi)) cancels two terms of size 1/x
# to -x/3 (relative error ~6u/x^2) and in float16 overflows where x^2 underflows
for x in (9.7692013e-05, 5.4359436e-03):
    got = jax.grad(jax.grad(lambda v: js.sici(v)[0]))(jnp.float16(x))
    exact = mpmath.diff(mpmath.si, mpmath.mpf(float(jnp.float16(x))), 2)
    print(f"jax Si''({x:.4g}) float16: {float(got):.4g} exact: {float(exact):.4g}")

# JAX's Si'' forward over forward with a tangent near the smallest normal: XLA:CPU flushes one
# subnormal product and keeps the other term of the cancellation
x, t1, t2 = 0.256433176073172, -0.35257914978242627, 3.2686668531880876e-308
got = jvp_jvp(lambda v: js.sici(v)[0], jnp.float64(x), jnp.float64(t1), jnp.float64(t2))
exact = mpmath.diff(mpmath.si, mpmath.mpf(x), 2) * mpmath.mpf(t1) * mpmath.mpf(t2)
print(f"jax Si'' jvp_jvp float64 at {x:.4g}, t1 {t1:.4g}, t2 {t2:.4g}: {float(got):.4g} exact: {float(exact):.4g}")

# dawsn'' = -2D - 2x·D' forward over forward in float32 at x = 2, t1 = -1.3337e9, t2 = 4.566e-38:
# t2·D'(2) = -9.4e-39 is subnormal and flushed, so the result keeps -2D·t2·t1 = 3.67e-29 alone
x, t1, t2 = 2.0, -1333680896.0, 4.566273417926392e-38
D = mpmath.sqrt(mpmath.pi) / 2 * mpmath.exp(-mpmath.mpf(x) ** 2) * mpmath.erfi(x)
exact = (-2 * D - 2 * x * (1 - 2 * x * D)) * mpmath.mpf(t1) * mpmath.mpf(t2)
jx = jvp_jvp(js.dawsn, jnp.float32(x), jnp.float32(t1), jnp.float32(t2))
v = tf.constant(x, tf.float32)
with tf.autodiff.ForwardAccumulator(v, tf.constant(t2, tf.float32)) as outer:
    with tf.autodiff.ForwardAccumulator(v, tf.constant(t1, tf.float32)) as inner:
        y = tf.math.special.dawsn(v)
    first = inner.jvp(y)
tx = outer.jvp(first)
print(f"dawsn jvp_jvp float32 at 2, t1 -1.334e9, t2 4.566e-38: jax {float(jx):.4g} tf {float(tx):.4g} exact: {float(exact):.4g}")

# JAX's Γ'' = Γ·(ψ² + ψ') reads ψ' = polygamma(1, x), wrong at negative x (the Hurwitz zeta)
for dtype, x in ((jnp.float32, -9.353131294250488), (jnp.float64, -40.22998614868527)):
    got = jax.grad(jax.grad(js.gamma))(dtype(x))
    exact = mpmath.diff(mpmath.gamma, mpmath.mpf(float(dtype(x))), 2)
    print(f"jax gamma''({x:.6g}) {dtype.__name__}: {float(got):.4g} exact: {float(exact):.4g}")

# JAX's kl_div(x, y) = rel_entr(x, y) - x + y at y = +inf: rel_entr is -inf and -inf + inf is nan,
# where x ln(x/y) - x + y -> +inf (y dominates x ln y)
print(f"jax kl_div(0.2754, inf) bfloat16: {float(js.kl_div(jnp.bfloat16(0.275390625), jnp.bfloat16(jnp.inf)))} exact: inf")

# JAX's float32 E_5 of [1, 1.1755e-38] never returns: under jnp.piecewise's vmap every branch runs
# on every element, and the continued fraction meant for x > 1 does not meet its stopping test at
# the smallest normal number (each element alone returns: 0.0705, 0.25)
code = "import jax.numpy as jnp, jax.scipy.special as js; print(js.expn(5, jnp.array([1.0, 1.1754944e-38], jnp.float32)))"
try:
    subprocess.run([sys.executable, "-c", code], timeout=30, capture_output=True)
    print("jax expn(5, [1, 1.1755e-38]) float32 returned")
except subprocess.TimeoutExpired:
    print("jax expn(5, [1, 1.1755e-38]) float32: no answer within 30 s (exact: [0.0705, 0.25])")
code = (
    "import jax; jax.config.update('jax_enable_x64', True); import jax.numpy as jnp, jax.scipy.special as js; "
    "print(js.expn(5, jnp.array([1.0, 2.2250738585072014e-308], jnp.float64)))"
)
try:
    subprocess.run([sys.executable, "-c", code], timeout=30, capture_output=True)
    print("jax expn(5, [1, 2.2251e-308]) float64 returned")
except subprocess.TimeoutExpired:
    print("jax expn(5, [1, 2.2251e-308]) float64: no answer within 30 s (exact: [0.0705, 0.25])")
