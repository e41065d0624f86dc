"""Departures reached by `refgrad run --ops <the special and pointwise records that declare domains>
--domains whole --draws seeded --seed 1` (wholedom): each line prints the framework's value next to
mpmath's."""

import jax
import mpmath
import numpy as np
import tensorflow as tf
import torch

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402 (after jax_enable_x64)
import jax.scipy.special as jss  # noqa: E402

mpmath.mp.dps = 40

# JAX's float64 erfinv: about 30 ulps off near x = 0.643 (and 24 near 0.97), 2 to 4 elsewhere
x = 0.6429404214549687
got = float(jss.erfinv(np.float64(x)))
print(f"jax erfinv float64 at {x}: {got!r} exact {float(mpmath.erfinv(x))!r}"
      f" ({float((got - mpmath.erfinv(x)) / mpmath.erfinv(x)) / 2**-53:.1f} u)")
second = float(jax.grad(jax.grad(jss.erfinv))(np.float64(x)))
y = mpmath.erfinv(x)
exact2 = 2 * y * (mpmath.sqrt(mpmath.pi) / 2 * mpmath.exp(y**2)) ** 2
print(f"jax erfinv'' float64 at {x}: {second!r} exact {float(exact2)!r} ({(second - float(exact2)) / float(exact2) / 2**-53:.1f} u)")

# TensorFlow's float64 erfinv through ndtri((x + 1) / 2): 57 u at 0.0167, and its second derivative
x = 0.016741592843617543
got = float(tf.math.erfinv(tf.constant(x, tf.float64)))
print(f"tf erfinv float64 at {x}: {got!r} exact {float(mpmath.erfinv(x))!r}"
      f" ({float((got - mpmath.erfinv(x)) / mpmath.erfinv(x)) / 2**-53:.1f} u)")

# TensorFlow's forward over reverse of atan2 flushes an intermediate of the size of the cotangent
xv, yv = tf.constant(1.0, tf.float64), tf.constant(-1.0, tf.float64)
tx, ty, c = 2.705393050564941e77, 1.1535623509073905, 4.3365472203618094e-308
with tf.GradientTape() as tape:
    tape.watch(yv)
    with tf.autodiff.ForwardAccumulator((xv, yv), (tf.constant(tx, tf.float64), tf.constant(ty, tf.float64))) as acc:
        out = tf.math.atan2(xv, yv)
    jvp = acc.jvp(out)
got = float(tape.gradient(jvp, yv, output_gradients=tf.constant(c, tf.float64)))
# d/dy of (y tx - x ty) / (x^2 + y^2) at (1, -1): the tx terms cancel, -ty / 2
print(f"tf atan2 vjp_jvp float64 at (1, -1), cotangent {c:.4g}, tangents ({tx:.4g}, {ty:.4g}): {got!r}"
      f" exact {float(-mpmath.mpf(ty) / 2 * c)!r}")

# TensorFlow's float64 Y0 next to its first zero 3.95767841931...: 6.6 u absolute where the value is 1.2e-11
x = 3.957678419286062
got = float(tf.math.special.bessel_y0(tf.constant(x, tf.float64)))
print(f"tf bessel_y0 float64 at {x}: {got!r} exact {float(mpmath.bessely(0, x))!r}"
      f" ({(got - float(mpmath.bessely(0, x))) / 2**-53:.1f} u absolute)")

# TensorFlow's zeta(s, q) at its pole q = 0 is nan (float32; float64 alike), exactly +inf
print("tf zeta(3, [0, -0]) float32:", tf.math.zeta(tf.constant([3.0, 3.0]), tf.constant([0.0, -0.0])).numpy(),
      "exact", [float(mpmath.inf)] * 2)

# gammaincc's derivative in x at a < 0, where PyTorch's and JAX's value is nan: finite
a, xg = -0.11700439453125, 0.6220703125
at = torch.tensor(a, dtype=torch.float64)
xt = torch.tensor(xg, dtype=torch.float64, requires_grad=True)
val = torch.special.gammaincc(at, xt)
(g,) = torch.autograd.grad(val, xt)
jg = float(jax.grad(jss.gammaincc, 1)(np.float64(a), np.float64(xg)))
print(f"gammaincc({a}, {xg}): torch {val.item()!r}, d/dx torch {g.item()!r} jax {jg!r}, reference nan (the value is nan)")

# JAX's float64 ndtri'' by autodiff of its approximation: 200 ulps at p = 0.1338 (seed 0)
p = 0.1337561778553632
got = float(jax.grad(jax.grad(jss.ndtri))(np.float64(p)))
y = -mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * mpmath.mpf(p))
d1 = mpmath.sqrt(2 * mpmath.pi) * mpmath.exp(y**2 / 2)
print(f"jax ndtri'' float64 at {p}: {got!r} exact {float(y * d1**2)!r} ({(got - float(y * d1**2)) / float(y * d1**2) / 2**-53:.0f} u)")
