"""Departures the seeded campaign (`refgrad run --draws seeded`) reached in the elementwise,
pointwise and activation families: each line prints a framework's value next to the exact value
(mpmath, or the limit the derivative takes where that is a non-number question)."""

import jax
import mpmath
import numpy as np
import tensorflow as tf
import torch

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402 (after jax_enable_x64)

mpmath.mp.prec = 200


def ulps(got, exact, dtype=np.float64):
    return abs(float(got) - float(exact)) / float(np.spacing(dtype(abs(float(exact)))))


# TensorFlow's ForwardAccumulator transposes the VJP: 0 * inf = nan at a non-finite input, where
# the JVP of a product is finite (d(x*y) = tx*y + x*ty; at y = inf with ty finite the second-order
# term tx2*ty1 + tx1*ty2 is finite)
x = tf.constant([0.0141196484], tf.float64)
y = tf.constant([np.inf], tf.float64)
with tf.autodiff.ForwardAccumulator(
    [x, y], [tf.constant([-1.0], tf.float64), tf.constant([0.644], tf.float64)]
) as outer:
    with tf.autodiff.ForwardAccumulator(
        [x, y], [tf.constant([1.284], tf.float64), tf.constant([2.0], tf.float64)]
    ) as inner:
        z = x * y
    t = inner.jvp(z)
print("tf mul jvp_jvp at y = inf:", outer.jvp(t).numpy()[0], "exact:", -1.0 * 2.0 + 1.284 * 0.644)
x = tf.constant([np.nan], tf.float32)
with tf.autodiff.ForwardAccumulator(x, tf.constant([2.097], tf.float32)) as acc:
    z = tf.experimental.numpy.deg2rad(x)
print("tf deg2rad jvp at nan:", acc.jvp(z).numpy()[0], "PyTorch's (t * pi / 180):", 2.097 * np.pi / 180)

# JAX: a zero tangent against an unbounded intermediate, and float16 intermediates that overflow
x = jnp.float16(0.06476)
t1, t2 = jnp.float16(-0.005943), jnp.float16(6.038e-05)
_, vjp = jax.vjp(
    lambda a, b: jax.jvp(lambda p, q: x + 2.0 * p / q, (a, b), (jnp.float16(1.0), jnp.float16(0.833)))[1],
    t1,
    t2,
)
print("jax addcdiv float16 vjp_jvp with a zero cotangent:", vjp(jnp.float16(-0.0))[0], "exact: 0.0")

# the float64 second derivative of atanh: JAX 174 ulps off at x = 0.00297
x = 0.002974790911285665
d2 = jax.grad(jax.grad(jnp.arctanh))(x)
exact = 2 * mpmath.mpf(x) / (1 - mpmath.mpf(x) ** 2) ** 2
print(
    "jax atanh'' float64 at 0.00297 ulps:",
    round(ulps(d2, exact), 1),
    "(value",
    float(d2),
    "exact",
    float(exact),
    ")",
)

# JAX's float32 sinh: 4 ulps at -0.4267 (jnp.sinh of a vector)
x = np.float32(-0.42670345306396484)
got = jnp.sinh(jnp.full((64,), x, jnp.float32))[0]
print("jax sinh float32 at -0.4267 ulps:", round(ulps(got, mpmath.sinh(float(x)), np.float32), 1))

# PyTorch's log10 derivative at a subnormal float64 x: x * ln 10 underflows (rounded to a subnormal)
x = 2.865594830430797e-309
xt = torch.tensor([x], dtype=torch.float64, requires_grad=True)
(g,) = torch.autograd.grad(torch.log10(xt), xt, torch.tensor([0.06226530478113979], dtype=torch.float64))
exact = mpmath.mpf(0.06226530478113979) / (mpmath.mpf(x) * mpmath.log(10))
print("torch log10' float64 at 2.9e-309 ulps:", round(ulps(g.item(), exact), 1))

# TensorFlow's float16 tan double backward (square(reciprocal(cos x)) rounded in float16)
x = tf.constant([0.2034912109375], tf.float16)
with tf.GradientTape() as outer:
    go = tf.constant([-0.82177734375], tf.float16)
    outer.watch(go)
    with tf.GradientTape() as inner:
        inner.watch(x)
        y = tf.math.tan(x)
    g = inner.gradient(y, x, output_gradients=go)
gg = outer.gradient(g, go, output_gradients=tf.constant([-1.818359375], tf.float16))
exact = mpmath.mpf(-1.818359375) / mpmath.cos(0.2034912109375) ** 2
print("tf tan vjp_vjp float16 ulps:", round(ulps(gg.numpy()[0], exact, np.float16), 2))

# PyTorch: a zero cotangent against an intermediate that overflows (rsqrt'' at the smallest
# subnormal: x^-2.5 is inf in float64, inf * 0 = nan where the exact value is 0)
x = torch.tensor([5e-324], dtype=torch.float64)
_, vjp = torch.func.vjp(
    lambda a: torch.func.jvp(torch.rsqrt, (a,), (torch.tensor([0.3844], dtype=torch.float64),))[1], x
)
print(
    "torch rsqrt vjp_jvp at 5e-324 with a zero cotangent:",
    vjp(torch.tensor([0.0], dtype=torch.float64))[0].item(),
    "exact: 0.0",
)

# PyTorch's erfinv second derivative at the smallest subnormal: erfinv(x) = sqrt(pi)/2 x rounds to
# a subnormal with one significant bit
x = torch.tensor([5e-324], dtype=torch.float64, requires_grad=True)
(g,) = torch.autograd.grad(torch.erfinv(x), x, create_graph=True)
(gg,) = torch.autograd.grad(g, x, torch.tensor([3.423691315718204e75], dtype=torch.float64))
print(
    "torch erfinv'' * 3.4e75 at 5e-324:",
    gg.item(),
    "exact:",
    float(mpmath.pi**1.5 / 4 * mpmath.mpf(5e-324) * mpmath.mpf(3.423691315718204e75)),
)

# TensorFlow: tf.experimental.numpy.var with ddof inside tf.vectorized_map (a real float64 input)
x = tf.constant(np.arange(12.0).reshape(3, 4) ** 1.5, tf.float64)
try:
    print(
        "tf vectorized_map tnp.var ddof=1:",
        tf.vectorized_map(lambda r: tf.experimental.numpy.var(r, axis=-1, ddof=1), x).numpy(),
    )
except TypeError as e:
    print("tf vectorized_map tnp.var ddof=1 raises TypeError:", str(e).strip().splitlines()[-1].strip()[:100])
print(
    "torch.vmap of torch.var(correction=1):",
    torch.vmap(lambda r: torch.var(r, -1, correction=1))(
        torch.tensor(np.arange(12.0).reshape(3, 4) ** 1.5)
    ).numpy(),
)

# PyTorch refuses the backward of an in-place leaky_relu with a negative slope
a = torch.tensor([1.0, -2.0, 0.5], requires_grad=True).clone()
try:
    torch.nn.functional.leaky_relu(a, -0.5, inplace=True).sum().backward()
    print("torch in-place leaky_relu, slope -0.5: backward ran")
except RuntimeError as e:
    print("torch in-place leaky_relu, slope -0.5: backward raises RuntimeError:", str(e)[:70])

# cumprod's reverse over forward at zeros: <c, jvp> = c0 t0 + c1 (t0 x1 + x0 t1) is a polynomial, its
# gradient in x0 is c1 t1 (-1.333 here); PyTorch's formula divides by the zero input, TensorFlow's
# div_no_nan gives 0
x = [0.0, 0.0]
t = [4.4584e-05, -1.3330078125]
c = [0.0, 1.0]
xt = torch.tensor(x, dtype=torch.float64)
_, vjp = torch.func.vjp(
    lambda a: torch.func.jvp(lambda b: torch.cumprod(b, 0), (a,), (torch.tensor(t, dtype=torch.float64),))[1],
    xt,
)
print(
    "torch cumprod vjp_jvp at zeros:",
    vjp(torch.tensor(c, dtype=torch.float64))[0][0].item(),
    "exact:",
    c[1] * t[1],
)
xv = tf.constant(x, tf.float64)
with tf.GradientTape() as tape:
    tape.watch(xv)
    with tf.autodiff.ForwardAccumulator(xv, tf.constant(t, tf.float64)) as acc:
        y = tf.math.cumprod(xv)
    jt = acc.jvp(y)
print(
    "tf cumprod vjp_jvp at zeros:",
    tape.gradient(jt, xv, output_gradients=tf.constant(c, tf.float64)).numpy()[0],
    "exact:",
    c[1] * t[1],
)

# copysign's second derivative is the exact 0 (its derivative is the constant sgn(x) sgn(s));
# PyTorch differentiates its gradient grad * result / self
x = torch.tensor([3.7, 0.0], dtype=torch.float64, requires_grad=True)
(g,) = torch.autograd.grad(torch.copysign(x, -1.0), x, torch.ones(2, dtype=torch.float64), create_graph=True)
(gg,) = torch.autograd.grad(g, x, torch.tensor([1.3, 1.0], dtype=torch.float64))
print("torch copysign'' at 3.7 and 0:", gg.tolist(), "exact: [0.0, 0.0]")
