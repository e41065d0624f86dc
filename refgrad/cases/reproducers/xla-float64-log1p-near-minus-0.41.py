"""XLA:CPU's float64 log1p(a) is up to 128 ulps off for a in (-(sqrt(2) - 1), -0.33): the error grows
from about 1 ulp at -0.33 to 128 ulps just above -0.41421356 and falls back to 1.5 ulps below it;
positive arguments and float32 stay within about 2 ulps. JAX (jit or eager) and TensorFlow under
jit_compile=True run it; eager TensorFlow and PyTorch are within 1 ulp. binary_cross_entropy spelled
as its formula (log1p(-x)) carries the error into its value and its derivative in the target,
log(1 - x) - log(x), at x in (0.33, 0.4142). atanh, 0.5 (log1p(x) - log1p(-x)) in XLA, is the
jax-atanh-float64-127-ulp departure of the same kernel."""
import jax
import mpmath
import numpy as np
import tensorflow as tf

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

mpmath.mp.prec = 120


def ulps(got, exact):
    return float((mpmath.mpf(got) - exact) / np.spacing(abs(float(exact))))


def bce(np_, log1p, log, x, t):  # the record's spelling (conformance/ops/losses.py), x and t in (0, 1)
    return -(t * np_.maximum(log(x), -100.0) + (1 - t) * np_.maximum(log1p(-x), -100.0))


a = -0.41
exact = mpmath.log1p(a)
xla_log1p = tf.function(tf.math.log1p, jit_compile=True)
for name, got in [
    ("jax", float(jnp.log1p(jnp.float64(a)))),
    ("tensorflow:xla", float(xla_log1p(tf.constant(a, tf.float64)))),
    ("tensorflow eager", float(tf.math.log1p(tf.constant(a, tf.float64)))),
]:
    print(f"{name} log1p({a}) = {got!r}, exact {float(exact)!r} ({ulps(got, exact):.0f} ulps)")

x, t = 0.4142, 0.1
exact_dt = mpmath.log1p(-x) - mpmath.log(x)  # d/dt of -(t log x + (1 - t) log(1 - x))
dt_jax = float(jax.grad(lambda tt: bce(jnp, jnp.log1p, jnp.log, jnp.float64(x), tt))(jnp.float64(t)))
print(f"jax d/dt binary_cross_entropy at x = {x}, t = {t}: {dt_jax!r}, exact {float(exact_dt)!r} "
      f"({ulps(dt_jax, exact_dt):.0f} ulps)")


@tf.function(jit_compile=True)
def dt_tf(xx, tt):  # x an argument: XLA folds a constant's log1p at compile time, exactly
    with tf.GradientTape() as tape:
        tape.watch(tt)
        y = bce(tf, tf.math.log1p, tf.math.log, xx, tt)
    return tape.gradient(y, tt)


got = float(dt_tf(tf.constant(x, tf.float64), tf.constant(t, tf.float64)))
print(f"tensorflow:xla d/dt binary_cross_entropy at x = {x}, t = {t}: {got!r}, exact {float(exact_dt)!r} "
      f"({ulps(got, exact_dt):.0f} ulps)")

# the law: the worst error over a grid of each band
for lo, hi in [(-0.9, -0.4143), (-0.41421356, -0.33), (-0.33, 0.0), (0.0, 0.9)]:
    grid = np.linspace(lo, hi, 801)
    got = np.asarray(jnp.log1p(jnp.asarray(grid)))
    worst = max(abs(ulps(float(g), mpmath.log1p(float(v)))) for v, g in zip(grid, got))
    print(f"jax float64 log1p on [{lo}, {hi}]: worst {worst:.1f} ulps")
