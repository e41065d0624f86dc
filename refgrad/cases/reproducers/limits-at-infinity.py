"""Limits at infinite arguments that the frameworks answer with nan (the reference's values are the
limits; issue #38's nan bounds at values 'nonfinite' and 'special'): the Hurwitz zeta at s = inf or
q = inf, and JAX's second derivatives of Owen's T at h = inf and of squareplus at x = inf. Each line
prints the framework's values next to the limits."""

import jax
import jax.numpy as jnp
import numpy as np
import tensorflow as tf
import torch
from jax.scipy import special as js

jax.config.update("jax_enable_x64", True)

# zeta(s, q) = sum (q + n)^-s: q^-s -> 0 for q > 1 as s -> inf (1 at q = 1), every term -> 0 as
# q -> inf at s > 1, and d/dq = -s zeta(s + 1, q) -> 0 too (s q^-(s+1) -> 0)
s, q = [np.inf, np.inf, 3.0, np.inf], [np.inf, 2.0, np.inf, 1.0]
t = torch.special.zeta(torch.tensor(s, dtype=torch.float64), torch.tensor(q, dtype=torch.float64))
print(f"torch zeta(s, q) at (s, q) = (inf, inf), (inf, 2), (3, inf), (inf, 1): {t.numpy()} limits: [0 0 0 1]")
print(f"jax zeta at the same: {np.asarray(js.zeta(jnp.array(s), jnp.array(q)))} limits: [0 0 0 1]")
dq = jax.vmap(jax.grad(js.zeta, argnums=1))(jnp.array(s[:2]), jnp.array(q[:2]))
print(f"jax d zeta/dq at (inf, inf), (inf, 2): {np.asarray(dq)} limits: [0 0]")
qv = tf.Variable(q[:2], dtype=tf.float64)
with tf.GradientTape() as tape:
    y = tf.math.zeta(tf.constant(s[:2], tf.float64), qv)
print(f"tf d zeta/dq at (inf, inf), (inf, 2): {tape.gradient(y, qv).numpy()} limits: [0 0]")

# Owen's T: T(h, a) = atan(a)/(2 pi) at h = 0 and -> 0 as h -> inf with every derivative (each carries
# the factor exp(-h^2 (1 + a^2)/2)); JAX's Hessian at h = inf is nan
h = jax.hessian(js.owens_t, argnums=(0, 1))(jnp.inf, 0.5)
print(f"jax owens_t Hessian at (h, a) = (inf, 0.5): {np.asarray(h).ravel()} limits: [0 0 0 0]")

# squareplus(x, b) = (x + sqrt(x^2 + b))/2: its second derivatives b/(2 r^3), -x/(4 r^3), -1/(8 r^3)
# (r = sqrt(x^2 + b)) -> 0 as x -> inf; JAX's Hessian at x = inf is nan
h = jax.hessian(jax.nn.squareplus, argnums=(0, 1))(jnp.inf, 4.0)
print(f"jax squareplus Hessian at (x, b) = (inf, 4): {np.asarray(h).ravel()} limits: [0 0 0 0]")
