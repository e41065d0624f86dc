"""float16 second derivatives of sqrt and sinc through an overflowing intermediate: sqrt'' =
-x^(-3/2) / 4 and sinc'' (terms cos(pi x)/x^2, sin(pi x)/(pi x^3)) overflow float16 (65504) at
small x before the cotangent and tangents scale them; the result is an infinity or nan where the
exact, representable value is finite."""

import jax
import jax.numpy as jnp
import numpy as np
import tensorflow as tf

h = np.float16
# sqrt: jax.jvp of jax.grad-with-cotangent at x = 2^-11, cotangent -0.8369, tangent -3
x, c, t = h(0.00048828125), h(-0.8369140625), h(-3.0)
vjp = lambda v: jax.vjp(jnp.sqrt, v)[1](c)[0]
print(
    "jax sqrt jvp_vjp float16:",
    jax.jvp(vjp, (x,), (t,))[1],
    "exact",
    float(c) * float(t) * -0.25 * float(x) ** -1.5,
)
v = tf.Variable(x)
with tf.autodiff.ForwardAccumulator(v, tf.constant(t)) as acc:
    with tf.GradientTape() as tape:
        y = tf.math.sqrt(v)
    g = tape.gradient(y, v, output_gradients=tf.constant(c))
print("tf  sqrt jvp_vjp float16:", acc.jvp(g).numpy())
# sinc: forward over forward at x = -2^-7, tangents -0.7549 and -1
x, t1, t2 = h(-0.0078125), h(-0.7548828125), h(-1.0)
inner = lambda v: jax.jvp(jnp.sinc, (v,), (t1,))[1]
exact = float(t1) * float(t2) * -(np.pi**2) / 3 * (1 - (np.pi * float(x)) ** 2 / 10)
print("jax sinc jvp_jvp float16:", jax.jvp(inner, (x,), (t2,))[1], "exact ~", exact)
