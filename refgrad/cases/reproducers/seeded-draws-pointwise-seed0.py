"""Departures `refgrad run --ops pointwise --draws seeded --seed 0` reached that the known file did
not yet describe (seedsC): each line prints a framework's value next to the exact one (mpmath, or
the series / limit named beside it)."""

import jax
import mpmath
import numpy as np
import tensorflow as tf
import torch

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402 (after jax_enable_x64)
import jax.scipy.special as jss  # noqa: E402

mpmath.mp.prec = 200
f16, f32 = jnp.float16, jnp.float32

# PyTorch computes bfloat16 i0 / i1 in float32, whose Cephes kernel overflows once exp(x) does
x = torch.tensor([90.0], dtype=torch.bfloat16, requires_grad=True)
(g,) = torch.autograd.grad(torch.i0(x).sum(), x)
print("torch i0' bfloat16 at 90:", g.item(), "exact i1(90):", float(mpmath.besseli(1, 90)))

# JAX's i0 derivative at a subnormal input that XLA flushes: +-1, where i1(x) ~ x / 2
d = jax.jit(jax.grad(jss.i0))(f32(-1.401298464324817e-45))
print("jax i0' float32 at -1.4e-45:", float(d), "exact: i1(x) = -7.0e-46")

# JAX's second derivative of i1 at tiny arguments: 1.0 where it is 3x/8
d2 = jax.jit(jax.grad(jax.grad(jss.i1)))(1.1107712329583361e-307)
print("jax i1'' float64 at 1.11e-307:", float(d2), "exact: 3x/8 = 4.2e-308")

# TensorFlow's i1 gradient i0(x) - i1(x) / x at a subnormal x: i1(x) = x / 2 is rounded to 0 or x
x = tf.constant([1.401298464324817e-45], tf.float32)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.math.special.bessel_i1(x)
print("tf i1' float32 at 1.4e-45:", tape.gradient(y, x).numpy()[0], "exact: 0.5")

# JAX's copysign derivative reads a negative subnormal self as positive
d = jax.jit(jax.grad(jnp.copysign))(-1e-310, 2.0)
print("jax copysign' float64 at self = -1e-310, other = 2:", float(d), "exact: -1.0")

# JAX's hypot forward over reverse with a cotangent near float32's smallest normal: an intermediate
# flushed to zero drops one of two cancelling terms and the result changes sign
x, y = f32(0.4711393117904663), f32(0.4623999297618866)
c, tx, ty = f32(-3.2677512276496284e-38), f32(-1.0626779794692993), f32(-940494976.0)


def grad_other(c_, x_, y_):
    return jax.vjp(jnp.hypot, x_, y_)[1](c_)[1]


out = jax.jit(lambda: jax.jvp(grad_other, (c, x, y), (f32(0.0), tx, ty))[1])()
X, Y, C, TX, TY = (mpmath.mpf(float(v)) for v in (x, y, c, tx, ty))
exact = C * X * (X * TY - Y * TX) / mpmath.sqrt(X * X + Y * Y) ** 3
print("jax hypot jvp_vjp float32, cotangent -3.27e-38:", float(out), "exact:", mpmath.nstr(exact, 8))

# JAX's float16 atan2 second order: (x^2 + y^2)^2 overflows float16 from |(x, y)| ~ 16 on
x, y = f16(77.3125), f16(40.9375)
t1, t2 = (f16(0.0), f16(2.0)), (f16(3.9921875), f16(-0.67919921875))
out = jax.jit(lambda: jax.jvp(lambda p, q: jax.jvp(jnp.arctan2, (p, q), t1)[1], (x, y), t2)[1])()
X, Y = mpmath.mpf(77.3125), mpmath.mpf(40.9375)
r4 = (X * X + Y * Y) ** 2
hxx, hxy = -2 * X * Y / r4, (X * X - Y * Y) / r4
exact = 3.9921875 * (hxx * 0 + hxy * 2) - 0.67919921875 * (hxy * 0 - hxx * 2)
print("jax atan2 jvp_jvp float16 at (77.3, 40.9):", float(out), "exact:", mpmath.nstr(exact, 8))

# TensorFlow's atan2 reverse over forward where x^2 + y^2 underflows: nan where the exact value
# overflows to an infinity (d2/dy2 = 2xy / r^4 = +1/(2x^2) at x = y)
x = tf.constant([1e-200], tf.float64)
y = tf.constant([1e-200], tf.float64)
with tf.GradientTape() as tape:
    tape.watch([x, y])
    with tf.autodiff.ForwardAccumulator(
        [x, y], [tf.constant([1.0], tf.float64), tf.constant([0.5], tf.float64)]
    ) as acc:
        z = tf.math.atan2(x, y)
    t = acc.jvp(z)
gx, gy = tape.gradient(t, [x, y])
print(
    "tf atan2 vjp_jvp at (1e-200, 1e-200):", [gx.numpy()[0], gy.numpy()[0]], "exact: [-inf, inf] (overflow)"
)

# TensorFlow's i1e gradient i0e(x) - i1e(x) / x - sgn(x) i1e(x): i1e(x) = x / 2 is subnormal below
# float32's 2.35e-38 and TensorFlow's kernels flush it to zero
x = tf.constant([1.6169790e-38], tf.float32)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.math.special.bessel_i1e(x)
print("tf i1e' float32 at 1.62e-38:", tape.gradient(y, x).numpy()[0], "exact: 0.5")

# JAX's i0 derivative through exp(|x|) * i0e(x): an absolute error ~u i0(x), so a relative one ~u / |x|
d = jax.jit(jax.grad(jss.i0))(-1.3009436900000000e-04)
exact = mpmath.besseli(1, mpmath.mpf(-1.30094369e-04))
print(
    "jax i0' float64 at -1.3e-4 ulps:",
    round(abs(float(d) - float(exact)) / float(np.spacing(abs(float(exact)))), 1),
)

# TensorFlow differentiates float16 atan2 in float16: its second order forms (x^2 + y^2)^2, which
# overflows float16 once |(x, y)| exceeds ~16
x = tf.constant([-155.625], tf.float16)
y = tf.constant([45.71875], tf.float16)
with tf.GradientTape() as tape:
    tape.watch([x, y])
    with tf.autodiff.ForwardAccumulator(
        [x, y], [tf.constant([-5.06640625], tf.float16), tf.constant([-0.29833984375], tf.float16)]
    ) as acc:
        z = tf.experimental.numpy.arctan2(x, y)
    t = acc.jvp(z)
gx = tape.gradient(t, x, output_gradients=tf.constant([-1.544921875], tf.float16))
print("tf atan2 vjp_jvp float16 at (-155.6, 45.7):", gx.numpy()[0], "exact: 0.00017564792")

# JAX's hypot is max * sqrt(1 + (min / max)^2), and at |x| == |y| max and min split their tangent
# evenly, so min / max has no tangent and the second derivative loses its only term
h = jax.jit(jax.hessian(jnp.hypot, argnums=(0, 1)))(2.0, 2.0)
print(
    "jax hypot hessian at (2, 2):",
    [[float(v) for v in row] for row in h],
    "exact: [[0.1768, -0.1768], [-0.1768, 0.1768]]",
)
