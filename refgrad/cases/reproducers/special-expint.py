"""The exponential integrals' departures on the stock frameworks (conformance records expi, exp1,
expn; reference/ops/rules/special_expint.py): each line prints the framework's value next to the
exact one (mpmath, the reference's kernel)."""

import subprocess
import sys

import jax
import jax.numpy as jnp
import mpmath
import tensorflow as tf
from jax.scipy import special as js

jax.config.update("jax_enable_x64", True)

# TensorFlow's Ei is nan for every negative argument, where Ei(x) = -E_1(-x) is real
print(f"tf expint(-1.0) float64: {tf.math.special.expint(tf.constant(-1.0, tf.float64)).numpy()} exact: {float(mpmath.ei(-1)):.12g}")
# JAX's float16 Ei: its float64 rational coefficients overflow in float16 (a RuntimeWarning)
print(f"jax expi(0.5) float16: {js.expi(jnp.float16(0.5))} exact: {float(mpmath.ei(0.5)):.6g}")
# JAX's Ei at its limits: nan at 0 (exact -inf) and at +-inf (inf, 0); Ei'' nan at +0 (-inf)
edges = jnp.array([0.0, jnp.inf, -jnp.inf])
second = jax.vmap(jax.grad(jax.grad(js.expi)))(jnp.array([0.0, 1.0]))
print(f"jax expi at [0, inf, -inf]: {js.expi(edges)} exact: [-inf, inf, 0]; Ei'' at [+0, 1]: {second} exact: [-inf, 0]")
# JAX's E_n (exp1 = expn(1, .)) cannot be differentiated twice: its custom jvp computes
# expn(n - 1, x) with n a tracer under the outer differentiation
try:
    print(jax.grad(jax.grad(js.exp1))(0.5))
except TypeError as e:
    print(f"jax grad(grad(exp1))(0.5) raises TypeError: {str(e)[:60]}")
# the derivative of E_0 is -E_{-1}, but JAX's expn is nan for n < 0
exact = -mpmath.expint(-1, 0.5)
print(f"jax grad(expn(0, .))(0.5): {jax.grad(lambda v: js.expn(0, v))(0.5)} exact: {float(exact):.12g}")
# JAX's bfloat16 E_3 of [2, 1.1755e-38] never returns (its vectorized loops do not end)
code = "import jax.numpy as jnp, jax.scipy.special as js; print(js.expn(3, jnp.array([2.0, 1.1755e-38], jnp.bfloat16)))"
try:
    subprocess.run([sys.executable, "-c", code], timeout=30, capture_output=True)
    print("jax expn(3, [2, 1.1755e-38]) bfloat16 returned")
except subprocess.TimeoutExpired:
    print("jax expn(3, [2, 1.1755e-38]) bfloat16: no answer within 30 s (exact: [0.0301, 0.5])")
# JAX's E_1 at +inf: E_1(x) = e^-x/x (1 + O(1/x)) -> 0 and E_1' = -e^-x/x -> -0, JAX nan for both
# (0 already at x = 1000), in every float dtype
at_inf = jnp.array([jnp.inf, 1000.0])
print(f"jax exp1 at [inf, 1000]: {js.exp1(at_inf)}, exp1' {jax.vmap(jax.grad(js.exp1))(at_inf)} exact: [0, 0], [-0, -0]")
