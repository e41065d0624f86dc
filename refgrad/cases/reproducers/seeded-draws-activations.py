"""Departures `refgrad run --ops activations --draws seeded` (seeds 0, 1) reached that the known file did
not yet describe (seedsD): each line prints a framework's value next to the exact one (mpmath)."""

import jax
import keras
import mpmath
import tensorflow as tf
import torch

mpmath.mp.prec = 100

# TensorFlow's tf.nn.elu (keras.ops.elu's kernel) forms exp(x) - 1 in the input's dtype: for a small
# negative x it rounds to 0, and EluGradGrad, which reads that output, gives a second derivative 0
x = tf.Variable(tf.constant(-6.103515625e-05, tf.float16))
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        y = keras.ops.elu(x, 0.5)
    g = inner.gradient(y, x)
d2 = outer.gradient(g, x)
exact = 0.5 * mpmath.exp(mpmath.mpf(-6.103515625e-05))
print("tf keras.ops.elu'' float16 at -6.1e-05, alpha 0.5:", float(d2), "exact:", mpmath.nstr(exact, 8))

# tf.nn.selu's output exp(x) - 1 rounds to 0 at a tiny negative x; its second derivative (through
# SeluGrad, which reads the output) is then 0
x = tf.Variable(tf.constant(-5.623563759127795e-38, tf.float32))
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        y = tf.nn.selu(x)
    g = inner.gradient(y, x)
d2 = outer.gradient(g, x)
scale, alpha = (
    mpmath.mpf("1.0507009873554804934193349852946"),
    mpmath.mpf("1.6732632423543772848170429916717"),
)
exact = scale * alpha * mpmath.exp(mpmath.mpf(-5.623563759127795e-38))
print("tf selu'' float32 at -5.6e-38:", float(d2), "exact:", mpmath.nstr(exact, 8))

# PyTorch's forward over reverse of prelu at x = 0: its backward gives w * g there (x > 0 is the
# positive branch), the forward-mode derivative of that backward takes the positive branch (x >= 0)
x = torch.tensor([[0.0]], dtype=torch.float64)
w = torch.tensor([0.25], dtype=torch.float64)
g = torch.tensor([[1.0]], dtype=torch.float64)


def grad_x(x_, w_, g_):
    return torch.func.vjp(torch.nn.functional.prelu, x_, w_)[1](g_)[0]


_, t = torch.func.jvp(grad_x, (x, w, g), (torch.zeros_like(x), torch.tensor([2.0], dtype=torch.float64), g))
print(
    "torch prelu jvp of the vjp at x = 0, w = 0.25, tangents w 2, g 1:",
    t.item(),
    "exact (w g)' = 2 * 1 + 0.25 * 1 = 2.25",
)

# (seed 1) keras.ops.celu (TensorFlow backend: maximum(x, 0) + alpha * expm1(minimum(x, 0) / alpha))
# at x = 0: tf.maximum and tf.minimum each give x the whole gradient at the tie, so the gradient is 2
# where celu is continuously differentiable with derivative 1
x = tf.Variable(tf.constant(0.0, tf.float32))
with tf.GradientTape() as tape:
    y = keras.ops.celu(x, 2.0)
print("tf keras.ops.celu' float32 at 0, alpha 2:", float(tape.gradient(y, x)), "exact: 1 (both sides)")

# (seed 1) PyTorch's shrink backward at NaN in forward mode: torch.func.jvp of F.softshrink at a NaN
# element is 0 in the vectorised loop, the tangent in the scalar tail (the reference's formula)
x = torch.zeros(20, dtype=torch.float64)
x[0] = float("nan")
_, t = torch.func.jvp(
    lambda v: torch.nn.functional.softshrink(v, 1.0), (x,), (torch.ones(20, dtype=torch.float64),)
)
print("torch softshrink jvp at a nan in a vectorised block:", t[0].item(), "scalar formula: 1.0")

# (seed 1) JAX's second derivative of selu at 0 in forward mode: jax.nn.selu takes its expm1 branch
# at x = 0 (where(x > 0, ...)), so the second derivative is scale * alpha there; PyTorch's
# elu_double_backward multiplies by (x < 0): 0 (the reference)
d2 = jax.jvp(jax.grad(jax.nn.selu), (0.0,), (1.0,))[1]
print("jax selu'' forward over reverse at 0:", float(d2), "reference (PyTorch): 0.0")
# (the declared convention elu-second-derivative-at-zero now judges selu's and elu's value there;
# celu's, through jnp.minimum's halved tie, is a quarter of the negative branch's 1 / alpha: neither)
d2 = jax.jvp(jax.grad(lambda v: jax.nn.celu(v, 2.0)), (0.0,), (1.0,))[1]
print("jax celu'' forward over reverse at 0, alpha 2:", float(d2), "PyTorch 0.0, the negative branch 0.5")

# (seed 1) JAX's second derivative of the erf form of gelu at a huge negative argument: nan (x^2
# overflows and meets exp(-x^2 / 2) = 0), where gelu''(x) = phi(x) (2 - x^2) underflows to 0
d2 = jax.jvp(
    jax.grad(lambda v: jax.nn.gelu(v, approximate=False)),
    (jax.numpy.float32(-3e38),),
    (jax.numpy.float32(1.0),),
)[1]
print("jax gelu'' float32 at -3e38:", float(d2), "exact: 0.0 (underflows)")
