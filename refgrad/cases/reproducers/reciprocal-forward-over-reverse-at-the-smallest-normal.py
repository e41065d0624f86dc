"""reciprocal's forward-over-reverse derivative at x = 2^-1022 (the smallest float64 normal), with
cotangent g, tangent v of x and tangent d of the cotangent: the derivative of -g/x² is
-d/x² + 2·g·v/x³ = -d·y² + 2·g·v·y³ (y = 1/x = 2^1022). At (g, v, d) = (0, 0, -0.0157) it is
-d·y² = +inf (past the float64 range); at (-1.456e-308, -7.213e-308, -1) both terms are +inf.
PyTorch and JAX form -g·(y·y) and differentiate it: y·y overflows, and the zero g and v meet it
(0·inf) as nan at the first point; TensorFlow's ReciprocalGrad gives nan at the second
(its own y·y times tiny factors). The reference (issue 38) forms -(g·y)·y where y·y overflows at
a finite y: +inf at both."""

import jax
import jax.numpy as jnp
import tensorflow as tf
import torch

jax.config.update("jax_enable_x64", True)
x = 2.2250738585072014e-308
POINTS = [(0.0, 0.0, -0.015693786828850878), (-1.45611528467506e-308, -7.21286120852333e-308, -1.0)]


def torch_fwd_rev(g, v, d):
    t = [torch.tensor(a, dtype=torch.float64) for a in (x, g, v, d)]
    fn = lambda xx, gg: torch.func.vjp(torch.reciprocal, xx)[1](gg)[0]  # noqa: E731
    return float(torch.func.jvp(fn, (t[0], t[1]), (t[2], t[3]))[1])


def jax_fwd_rev(g, v, d):
    return float(jax.jvp(lambda xx, gg: jax.vjp(jnp.reciprocal, xx)[1](gg)[0], (x, g), (v, d))[1])


def tf_fwd_rev(g, v, d):
    tx, tg = tf.constant(x, tf.float64), tf.constant(g, tf.float64)
    with tf.autodiff.ForwardAccumulator([tx, tg], [tf.constant(v, tf.float64), tf.constant(d, tf.float64)]) as acc:
        with tf.GradientTape() as tape:
            tape.watch(tx)
            y = tf.math.reciprocal(tx)
        gx = tape.gradient(y, tx, output_gradients=tg)
    return float(acc.jvp(gx))


for name, version, fn in (
    ("torch", torch.__version__, torch_fwd_rev),
    ("jax", jax.__version__, jax_fwd_rev),
    ("tensorflow", tf.__version__, tf_fwd_rev),
):
    got = [fn(*p) for p in POINTS]
    print(f"{name} {version}: jvp of the vjp at x = 2^-1022 = {got[0]}, {got[1]} (exact inf, inf)")
